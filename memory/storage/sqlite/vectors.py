"""SQLite: stored embeddings (implements :class:`memfold.memory.storage.base.VectorStorage`).

Table ``embeddings`` (migration 5) holds one row per (kind, item): ``model_id``, ``dim`` and the
vector as little-endian float32 bytes (:func:`vector_to_blob`). The file's model is recorded in
``meta`` (``embedding_model`` / ``embedding_dim``). Erasing a turn, card or record drops its
vector in the same statement (triggers), so no vector outlives its words.

Nearest-neighbour search (:meth:`SqliteVectors.nearest`) is an exact in-process scan
(:mod:`..vectorscan`) over the kind's vectors, loaded once and reloaded when they change, limited
to the ids the scope's SQL selects. With ``vector_index="ann"`` a large scope's candidates come
from an HNSW graph that follows the same in-memory vectors (:mod:`..ann`), scored exactly after.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Iterator, Sequence

import numpy as np

from ...errors import EmbeddingError, InvalidInput
from .. import vectorscan
from ..rows import SearchScope
from .db import SqliteDB
from .fulltext import _ALIAS, _filter  # the search scope's SQL (lineage, namespace, time, labels, liveness)

if TYPE_CHECKING:
    from ..ann import HnswIndex


def vector_to_blob(vector: np.ndarray) -> bytes:
    """A 1-D vector as little-endian float32 bytes (4 × dim bytes)."""
    return np.asarray(vector, dtype="<f4").tobytes()


def blob_to_vector(blob: bytes, dim: int) -> np.ndarray:
    """Little-endian float32 bytes back to a ``(dim,) float32`` vector.

    :raises EmbeddingError: if the blob length is not ``4 * dim``.
    """
    if len(blob) != 4 * dim:
        raise EmbeddingError(f"a stored vector has {len(blob)} bytes, expected {4 * dim} for dimension {dim}")
    return np.frombuffer(blob, dtype="<f4").astype(np.float32)


#: live items of each kind that may carry a vector: ``(id, text)`` ordered by id
_LIVE = {
    "turn": "SELECT id, content FROM turns WHERE erased = 0 AND content != '' ORDER BY id",
    "record": "SELECT id, content FROM records WHERE status != 'erased' ORDER BY id",
    "card": "SELECT rowid, text FROM cards WHERE erased = 0 ORDER BY rowid",
}
#: live items of each kind that have no vector yet, oldest first
_MISSING = {
    "turn": "SELECT t.id, t.content FROM turns t LEFT JOIN embeddings e ON e.kind = 'turn' AND e.item_id = t.id "
            "WHERE e.item_id IS NULL AND t.erased = 0 AND t.content != '' ORDER BY t.id",
    "record": "SELECT r.id, r.content FROM records r LEFT JOIN embeddings e ON e.kind = 'record' AND e.item_id = r.id "
              "WHERE e.item_id IS NULL AND r.status != 'erased' ORDER BY r.id",
    "card": "SELECT c.rowid, c.text FROM cards c LEFT JOIN embeddings e ON e.kind = 'card' AND e.item_id = c.rowid "
            "WHERE e.item_id IS NULL AND c.erased = 0 ORDER BY c.rowid",
}


#: which of some ids are :data:`_LIVE`'s items (``{}`` = the ids' placeholders)
_LIVE_AMONG = {
    "turn": "SELECT id FROM turns WHERE id IN ({}) AND erased = 0 AND content != ''",
    "record": "SELECT id FROM records WHERE id IN ({}) AND status != 'erased'",
    "card": "SELECT rowid FROM cards WHERE rowid IN ({}) AND erased = 0",
}

#: vectors written after a row, with the group a search scope picks by (``?`` = the row). The
#: unary ``+`` keeps SQLite off the (kind, item_id) key, which would walk every vector of the kind:
#: the rows after ``?`` are a rowid range (27 ms -> 0.05 ms at 100K vectors when nothing is new)
_GROUP = {
    "turn": "SELECT e.rowid, e.item_id, t.conversation_id, e.dim, e.vector FROM embeddings e "
            "LEFT JOIN turns t ON t.id = e.item_id WHERE +e.kind = 'turn' AND e.rowid > ? ORDER BY e.rowid",
    "card": "SELECT e.rowid, e.item_id, c.conversation_id, e.dim, e.vector FROM embeddings e "
            "LEFT JOIN cards c ON c.id = e.item_id WHERE +e.kind = 'card' AND e.rowid > ? ORDER BY e.rowid",
    "record": "SELECT e.rowid, e.item_id, r.namespace, e.dim, e.vector FROM embeddings e "
              "LEFT JOIN records r ON r.id = e.item_id WHERE +e.kind = 'record' AND e.rowid > ? ORDER BY e.rowid",
}


#: vectors written after a row with what a lineage scope picks by: group and seq (``?`` = the row)
_GROUP_SEQ = {
    "turn": "SELECT e.rowid, e.item_id, t.conversation_id, t.seq, e.dim, e.vector FROM embeddings e "
            "LEFT JOIN turns t ON t.id = e.item_id WHERE +e.kind = 'turn' AND e.rowid > ? ORDER BY e.rowid",
    "card": "SELECT e.rowid, e.item_id, c.conversation_id, c.last_seq, e.dim, e.vector FROM embeddings e "
            "LEFT JOIN cards c ON c.id = e.item_id WHERE +e.kind = 'card' AND e.rowid > ? ORDER BY e.rowid",
    "record": "SELECT e.rowid, e.item_id, r.namespace, 0, e.dim, e.vector FROM embeddings e "
              "LEFT JOIN records r ON r.id = e.item_id WHERE +e.kind = 'record' AND e.rowid > ? ORDER BY e.rowid",
}


def _query(queries: dict[str, str], kind: str) -> str:
    """The query of ``kind``. :raises InvalidInput: for a kind other than turn, record, card."""
    try:
        return queries[kind]
    except KeyError:
        raise InvalidInput(f"unknown item kind {kind!r}: use one of turn, record, card") from None


class SqliteVectors:
    """Stored embeddings, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB, vector_index: str = "exact") -> None:
        self.c = c
        self._indexes: dict[str, vectorscan.IncrementalMatrix] = {}  # per kind, kept current incrementally
        self._lock = threading.Lock()
        #: ``"exact"`` or ``"ann"`` (:func:`..ann.check_vector_index`); with ``"ann"`` each kind's
        #: HNSW graph, built by the first search of a large scope
        self.vector_index = vector_index
        self._ann: dict[str, "HnswIndex"] = {}

    # -- the file's model ------------------------------------------------------------------
    def model(self) -> tuple[str, int] | None:
        """``(model_id, dim)`` recorded for this file's vectors, or ``None`` when none is."""
        rows = dict(self.c.all("SELECT key, value FROM meta WHERE key IN ('embedding_model', 'embedding_dim')"))
        if "embedding_model" not in rows:
            return None
        return rows["embedding_model"], int(rows["embedding_dim"])

    def set_model(self, model_id: str, dim: int) -> None:
        """Record ``(model_id, dim)`` as this file's model (call inside a transaction)."""
        self.c.run("INSERT OR REPLACE INTO meta(key, value) VALUES ('embedding_model', ?)", [model_id])
        self.c.run("INSERT OR REPLACE INTO meta(key, value) VALUES ('embedding_dim', ?)", [str(dim)])

    # -- writing ---------------------------------------------------------------------------
    def put(self, kind: str, item_ids: Sequence[int], vectors: np.ndarray, *, model_id: str) -> None:
        """Store (or replace) one vector per item: ``vectors`` is ``(len(item_ids), dim) float32``."""
        dim = int(vectors.shape[1])
        self.c.run_many(
            "INSERT OR REPLACE INTO embeddings(kind, item_id, model_id, dim, vector) VALUES (?, ?, ?, ?, ?)",
            [(kind, int(i), model_id, dim, vector_to_blob(v)) for i, v in zip(item_ids, vectors)],
        )

    def clear(self) -> int:
        """Delete every vector and the recorded model (call inside a transaction); returns how many."""
        n = self.c.value("SELECT COUNT(*) FROM embeddings", default=0)
        self.c.run("DELETE FROM embeddings")
        self.c.run("DELETE FROM meta WHERE key IN ('embedding_model', 'embedding_dim')")
        with self._lock:
            self._indexes.clear()  # row numbers start again: the next search reloads
            self._ann.clear()
        return n

    # -- reading ---------------------------------------------------------------------------
    def get(self, kind: str, item_id: int) -> np.ndarray | None:
        """The stored ``(dim,) float32`` vector of one item, or ``None``."""
        row = self.c.one("SELECT dim, vector FROM embeddings WHERE kind = ? AND item_id = ?", [kind, int(item_id)])
        return None if row is None else blob_to_vector(row[1], row[0])

    def count(self, kind: str | None = None) -> int:
        """How many vectors are stored (of one kind, or all)."""
        if kind is None:
            return self.c.value("SELECT COUNT(*) FROM embeddings", default=0)
        return self.c.value("SELECT COUNT(*) FROM embeddings WHERE kind = ?", [kind], default=0)

    def version(self, kind: str) -> tuple:
        """A value that changes whenever the vectors of ``kind`` change (for caching :meth:`matrix`)."""
        return tuple(self.c.one(
            "SELECT COUNT(*), COALESCE(MAX(rowid), 0), COALESCE(SUM(rowid), 0) FROM embeddings WHERE kind = ?",
            [kind]))

    def matrix(self, kind: str) -> tuple[np.ndarray, np.ndarray]:
        """All vectors of ``kind``: ``(ids (n,) int64 ascending, vectors (n, dim) float32)``;
        ``(0, 0)`` vectors when there are none."""
        rows = self.c.all("SELECT item_id, dim, vector FROM embeddings WHERE kind = ? ORDER BY item_id", [kind])
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        if rows:
            dim = rows[0][1]
            vectors = np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4").reshape(len(rows), dim).astype(np.float32)
        else:
            vectors = np.zeros((0, 0), dtype=np.float32)
        return ids, vectors

    # -- nearest neighbours: the incremental in-memory index (issue 18, point 2) ------------
    def _index(self, kind: str) -> vectorscan.IncrementalMatrix:
        """The kind's in-memory vectors, brought up to date by reading only the vectors written or
        replaced since the last call (:meth:`_still_there`: two primary-key probes when nothing
        changed, whatever the number of vectors). Storage that lost rows behind the index's back
        (a :meth:`clear`, or the newest vector deleted, so SQLite may hand its row number to the
        next one) is reloaded whole. Call with :attr:`_lock` held, inside a snapshot."""
        mem = self._indexes.get(kind)
        newest = self.c.one("SELECT rowid, kind, item_id, vector FROM embeddings ORDER BY rowid DESC LIMIT 1")
        if mem is None or not self._still_there(mem):
            mem = self._indexes[kind] = vectorscan.IncrementalMatrix()
        if newest is not None and newest[0] > mem.scanned:
            for rows in self._since_in_blocks(kind, mem.scanned):
                if mem.n == 0:  # the first load: room for every vector (and some appends) at once
                    count = self.c.value("SELECT COUNT(*) FROM embeddings WHERE +kind = ? AND rowid > ?",
                                         [kind, mem.scanned], 0)
                    mem.reserve(vectorscan.grown_capacity(count), len(rows[0][4]))
                mem.add(rows)
            mem.scanned, mem.last_row = int(newest[0]), (newest[1], int(newest[2]), bytes(newest[3]))
        return mem

    def _current(self, kind: str, private: bool
                 ) -> tuple[vectorscan.IncrementalMatrix, vectorscan.IncrementalMatrix | None]:
        """``(kept, extra)``: the vectors a read sees. Outside a caller's transaction, the kept
        in-memory index brought up to date (:meth:`_index`) and no extra. Inside one
        (``private``), the rows it may see past the kept index may be its own uncommitted writes
        (SQLite hands a rolled-back row number, and a rolled-back turn's id, to the next write):
        the kept index is read as it stands, never changed, and the rows written since go to an
        ``extra`` index of their own, for this read only (``None`` when there are none; its rows
        replace the kept rows of the same items). When the kept index no longer matches storage
        (its newest row replaced or deleted, by this transaction or before it) the whole kind is
        loaded into a private index (returned as ``kept``, not kept). Call with :attr:`_lock`
        held, inside a snapshot."""
        if not private:
            return self._index(kind), None
        mem = self._indexes.get(kind)
        if mem is None or not self._still_there(mem):
            mem = vectorscan.IncrementalMatrix()
            for rows in self._since_in_blocks(kind, 0):
                mem.add(rows)
            return mem, None
        newest = self.c.value("SELECT COALESCE(MAX(rowid), 0) FROM embeddings", default=0)
        if newest <= mem.scanned:
            return mem, None
        extra = vectorscan.IncrementalMatrix()
        for rows in self._since_in_blocks(kind, mem.scanned):
            extra.add(rows)
        return mem, (extra if extra.n else None)

    def _still_there(self, mem: vectorscan.IncrementalMatrix) -> bool:
        """Whether the newest vector row ``mem`` read (of any kind) still holds what it held then.
        SQLite numbers a new row one past the largest existing one, so rows below that one can
        only be reused after it is deleted: while it stands, every vector written since has a
        larger row and ``rowid > scanned`` finds all of them (a primary-key range)."""
        if mem.last_row is None:
            return True
        row = self.c.one("SELECT kind, item_id, vector FROM embeddings WHERE rowid = ?", [mem.scanned])
        return row is not None and (row[0], int(row[1]), bytes(row[2])) == mem.last_row

    def _since_in_blocks(self, kind: str, after_row: int, block: int = 4096) -> Iterator[list[tuple]]:
        """The vectors of ``kind`` written after ``after_row`` with their group and seq, ``block``
        rows at a time, each block's vectors one ``(k, dim)`` array (its rows are views): a first
        load of 100K vectors holds one block of blobs at a time instead of every blob and a
        separate array per vector (about 350 MB at 100K MiniLM vectors, issue 18's RSS goal)."""
        sql = _query(_GROUP_SEQ, kind) + " LIMIT ?"
        while True:
            rows = self.c.all(sql, [after_row, block])
            if not rows:
                return
            dim = rows[0][4]
            if all(r[4] == dim for r in rows):
                vectors = np.frombuffer(b"".join(r[5] for r in rows), dtype="<f4").reshape(len(rows), dim)
                yield [(r[0], r[1], r[2], r[3], v) for r, v in zip(rows, vectors)]
            else:  # dimensions differ (never within one model): one array per vector
                yield [(r[0], r[1], r[2], r[3], blob_to_vector(r[5], r[4])) for r in rows]
            if len(rows) < block:
                return
            after_row = rows[-1][0]

    def in_memory(self, kind: str) -> int:
        """How many vectors of ``kind`` the in-memory index holds now (for tests and operators; not
        part of the storage Protocol)."""
        _query(_LIVE, kind)
        with self._lock:
            mem = self._indexes.get(kind)
            return 0 if mem is None else int(mem.live[:mem.n].sum())

    def _live(self, kind: str, scope: SearchScope, item_ids: Sequence[int]) -> set[int]:
        """Which of ``item_ids`` are live items of ``kind`` inside ``scope``: one primary-key probe
        each (the ids drive the join), never a walk over the scope."""
        frm, where, params = _filter(kind, scope)
        a = _ALIAS[kind]
        ids = list(dict.fromkeys(int(i) for i in item_ids))
        out: set[int] = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            marks = ", ".join("(?)" for _ in chunk)
            out.update(r[0] for r in self.c.all(
                f"WITH wanted(id) AS (VALUES {marks}) SELECT {a}.rowid FROM wanted CROSS JOIN {frm} "
                f"WHERE {a}.rowid = wanted.id AND {where}", [*chunk, *params]))
        return out

    def nearest(self, kind: str, query_vector: np.ndarray, scope: SearchScope, *, limit: int,
                private: bool | None = None) -> list[tuple[int, float]]:
        """The ``limit`` live items of ``kind`` inside ``scope`` most similar to ``query_vector``:
        ``[(item_id, cosine)]``, best first, ties by smaller id: an exact scan of the incremental
        in-memory index (:meth:`_index`). A lineage scope (or none) is selected in memory by each
        vector's conversation and seq, and the best few are checked live by primary key (an erased
        turn or stale card found so is dropped from the index, and the next best taken); any other
        scope's ids are read in SQL first. With ``private`` (default: inside a transaction or
        snapshot of this thread) nothing kept changes: the rows past the kept index are ranked
        from a copy of their own and merged (:meth:`_current`), and items found dead are passed
        over, not dropped (the erasure may roll back)."""
        _query(_LIVE, kind)
        limit = int(limit)
        if limit <= 0:
            return []
        if private is None:
            private = self.c.in_transaction_here()
        simple = (scope.namespace is None and scope.type is None and scope.key is None and scope.since is None
                  and scope.until is None and scope.reader_labels is None and kind != "record")
        with self.c.snapshot(), self._lock:  # storage first, then the index (the order every caller keeps)
            mem, extra = self._current(kind, private)
            if mem.n == 0 and extra is None:
                return []
            if not simple:
                frm, where, params = _filter(kind, scope)
                allowed = np.asarray([r[0] for r in self.c.all(f"SELECT {_ALIAS[kind]}.rowid FROM {frm} WHERE {where}",
                                                               params)], dtype=np.int64)
                return self._top_of(kind, mem, extra, query_vector, lambda m: m.where(allowed), limit)
            fetch = limit + 8
            while True:
                found = self._top_of(kind, mem, extra, query_vector, lambda m: m.rows(scope.lineage), fetch)
                live = self._live(kind, scope, [i for i, _ in found])
                if not private:
                    mem.drop(i for i, _ in found if i not in live)
                out = [(i, s) for i, s in found if i in live]
                if len(out) >= limit or len(found) < fetch:
                    return out[:limit]
                fetch *= 2

    def _top_of(self, kind: str, mem: vectorscan.IncrementalMatrix, extra: vectorscan.IncrementalMatrix | None,
                query_vector: np.ndarray, rows_of, limit: int) -> list[tuple[int, float]]:
        """:meth:`_top` of the rows ``rows_of(index)`` picks in ``mem`` and in ``extra`` (the rows a
        transaction sees past the kept index, :meth:`_current`; ``None``: none): ``mem``'s rows of
        items ``extra`` holds are left out (``extra`` has their newer vectors), and the two best
        lists are merged (each is exact, so the merge is the best ``limit`` of both)."""
        rows = rows_of(mem) if mem.n else np.zeros(0, dtype=np.int64)
        if extra is None:
            return self._top(kind, mem, query_vector, rows, limit)
        shadowed = mem.positions(extra.row_of) if mem.n else rows
        found = self._top(kind, mem, query_vector, np.setdiff1d(rows, shadowed, assume_unique=True), limit)
        found += extra.top(query_vector, rows_of(extra), limit)
        return sorted(found, key=lambda hit: (-hit[1], hit[0]))[:limit]

    def _top(self, kind: str, mem: vectorscan.IncrementalMatrix, query_vector: np.ndarray, rows: np.ndarray,
             limit: int) -> list[tuple[int, float]]:
        """The best ``limit`` of ``rows``: from the kind's HNSW graph when ``vector_index="ann"``
        and the scope is large (:meth:`..ann.HnswIndex.worth`), else the exact scan (always for a
        private index read inside a transaction, :meth:`_current`: the graph follows the kept one)."""
        if self.vector_index == "ann" and mem is self._indexes.get(kind):
            from ..ann import HnswIndex

            graph = self._ann.get(kind)
            if graph is None:
                graph = self._ann[kind] = HnswIndex()
            if graph.worth(len(rows), mem.n):
                found = graph.top(mem, query_vector, rows, limit)
                if found is not None:
                    return found
        return mem.top(query_vector, rows, limit)

    def similarity(self, kind: str, query_vector: np.ndarray, item_ids: Sequence[int], *,
                   private: bool | None = None) -> dict[int, float]:
        """``{item_id: cosine}`` to ``query_vector`` of those of ``item_ids`` that have a vector
        (one primary-key probe each in ``embeddings``; the cosines come from the in-memory index).
        ``private`` as for :meth:`nearest`: nothing kept changes."""
        _query(_LIVE, kind)
        ids = list(dict.fromkeys(int(i) for i in item_ids))
        if not ids:
            return {}
        if private is None:
            private = self.c.in_transaction_here()
        with self.c.snapshot(), self._lock:
            stored: set[int] = set()
            for start in range(0, len(ids), 500):
                chunk = ids[start:start + 500]
                stored.update(r[0] for r in self.c.all(
                    f"SELECT item_id FROM embeddings WHERE kind = ? AND item_id IN ({', '.join('?' for _ in chunk)})",
                    [kind, *chunk]))
            mem, extra = self._current(kind, private)
            held = [i for i in ids if i in stored]
            if not private and len(held) < len(ids):
                row_of = mem.row_of
                mem.drop([i for i in ids if i not in stored and i in row_of])
            query = vectorscan.unit(query_vector)
            out: dict[int, float] = {}
            if extra is not None:
                rows = extra.positions(held)
                out.update(zip(extra.ids[rows].tolist(), extra.cosines(rows, query).tolist()))
                held = [i for i in held if i not in out]
            rows = mem.positions(held)
            out.update(zip(mem.ids[rows].tolist(), mem.cosines(rows, query).tolist()))
            return out

    def unembedded(self, kind: str, *, limit: int | None = None, after_id: int = 0) -> list[tuple[int, str]]:
        """``[(item_id, text)]`` of live items of ``kind`` without a vector, oldest first (turns not
        erased and not empty, records and cards not erased). Reads the items' own tables.

        :param after_id: only items with a larger id (an index that scanned up to an id asks only
            for what came since: a primary-key range, not a scan of the file)."""
        sql = _query(_MISSING, kind)
        if after_id:
            alias = {"turn": "t.id", "record": "r.id", "card": "c.rowid"}[kind]
            sql = sql.replace(" ORDER BY", f" AND {alias} > {int(after_id)} ORDER BY")
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [(r[0], r[1]) for r in self.c.all(sql)]

    def embeddable_among(self, kind: str, item_ids: Sequence[int]) -> set[int]:
        """Which of ``item_ids`` are live items of ``kind`` that may carry a vector (turns not
        erased and not empty, records and cards not erased: :meth:`unembedded`'s items), one
        primary-key probe each, in reads of at most 500 ids."""
        sql = _query(_LIVE_AMONG, kind)
        ids = [int(i) for i in item_ids]
        out: set[int] = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            out.update(r[0] for r in self.c.all(sql.format(", ".join("?" for _ in chunk)), chunk))
        return out

    def newest_item(self, kind: str) -> int:
        """The largest id of ``kind``'s items (turns, cards, records), erased or not; 0 when none
        (where an incremental :meth:`unembedded` scan can resume)."""
        table = {"turn": "turns", "record": "records", "card": "cards"}
        if kind not in table:
            raise InvalidInput(f"unknown item kind {kind!r}: use one of turn, record, card")
        return self.c.value(f"SELECT COALESCE(MAX(rowid), 0) FROM {table[kind]}", default=0)

    def mark(self, kind: str) -> int:
        """The newest vector row of ``kind`` (``MAX(rowid)``, one index probe); 0 when none. A vector
        written or replaced later has a larger row (what :meth:`since` reads)."""
        _query(_GROUP, kind)
        return self.c.value("SELECT COALESCE(MAX(rowid), 0) FROM embeddings WHERE kind = ?", [kind], default=0)

    def since(self, kind: str, after_row: int) -> list[tuple[int, int, str | None, np.ndarray]]:
        """``[(row, item_id, group, vector)]`` of the vectors of ``kind`` written or replaced after
        vector row ``after_row`` (0: all), by row; ``group`` is what a search scope picks by: a
        turn's or card's conversation, a record's namespace. An in-memory index stays current
        with this instead of reloading every vector."""
        rows = self.c.all(_query(_GROUP, kind), [after_row])
        return [(r[0], r[1], r[2], blob_to_vector(r[4], r[3])) for r in rows]

    def embeddable(self, kind: str) -> list[tuple[int, str]]:
        """``[(item_id, text)]`` of every live item of ``kind`` that may carry a vector, by id
        (what a re-embedding covers). Reads the items' own tables."""
        return [(r[0], r[1]) for r in self.c.all(_query(_LIVE, kind))]
