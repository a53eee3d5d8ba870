"""PostgreSQL: stored embeddings (implements :class:`memfold.memory.storage.base.VectorStorage`).

Table ``embeddings`` (migration 5) holds one row per (kind, item): ``model_id``, ``dim`` and the
vector as little-endian float32 bytes (``bytea``, the same bytes as on SQLite). The file's model
is recorded in ``meta`` (``embedding_model`` / ``embedding_dim``). Erasing a turn, card or record
drops its vector row, and with it its pgvector value and HNSW index entry, in the same transaction
(:mod:`.erasure`), so no vector outlives its words (``VACUUM FULL embeddings`` then rebuilds the
table and its indexes without them).

Nearest-neighbour search (:meth:`PostgresVectors.nearest`), when pgvector is present
(:mod:`.pgvector`, migration 21) and not switched off: the scope's SQL filters the items inside
the query, before ranking, so no id outside the scope ever comes back.

* A scope wider than one conversation (the whole database, a namespace, a record slot) asks the
  kind's HNSW index for ``4 × limit`` neighbours (at least 40, at most 1,000: ``hnsw.ef_search``
  is set to match), keeps the visible ones, and when fewer than ``limit`` are visible falls back
  to the exact scan below, so the result still has ``limit`` items whenever the scope has them.
* A conversation's lineage (a few thousand turns at most), or a database whose model has no
  index, is scanned exactly in SQL (``ORDER BY`` the similarity, which no index serves).

Without pgvector (no extension, or ``pgvector=off``) it is the exact in-process scan of
:mod:`..vectorscan` over the stored bytes, the same code as on SQLite.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...errors import InvalidInput
from .. import vectorscan
from ..rows import SearchScope
from ..sqlite.vectors import blob_to_vector, vector_to_blob  # the stored byte format is the same
from . import pgvector
from .db import PostgresDB
from .fulltext import _ALIAS, _filter  # the search scope's SQL (lineage, namespace, time, labels, liveness)

#: how many neighbours the HNSW index is asked for, per neighbour wanted (then filtered by scope)
OVERFETCH = 4
#: cosine similarity of ``e.embedding`` to the query (one ``%s``); 0 for a zero vector, as in-process
_SIM = "COALESCE(NULLIF(1 - (e.embedding <=> %s::vector), 'NaN'::float8), 0)"
#: pgvector's largest ``hnsw.ef_search`` (an HNSW scan yields at most that many rows)
MAX_EF_SEARCH = 1000


#: live items of each kind that may carry a vector: ``(id, text)`` ordered by id
_LIVE = {
    "turn": "SELECT id, content FROM turns WHERE erased = 0 AND content != '' ORDER BY id",
    "record": "SELECT id, content FROM records WHERE status != 'erased' ORDER BY id",
    "card": "SELECT id, text FROM cards WHERE erased = 0 ORDER BY id",
}
#: live items of each kind that have no vector yet, oldest first
_MISSING = {
    "turn": "SELECT t.id, t.content FROM turns t LEFT JOIN embeddings e ON e.kind = 'turn' AND e.item_id = t.id "
            "WHERE e.item_id IS NULL AND t.erased = 0 AND t.content != '' ORDER BY t.id",
    "record": "SELECT r.id, r.content FROM records r LEFT JOIN embeddings e ON e.kind = 'record' AND e.item_id = r.id "
              "WHERE e.item_id IS NULL AND r.status != 'erased' ORDER BY r.id",
    "card": "SELECT c.id, c.text FROM cards c LEFT JOIN embeddings e ON e.kind = 'card' AND e.item_id = c.id "
            "WHERE e.item_id IS NULL AND c.erased = 0 ORDER BY c.id",
}


#: which of some ids (``%s``: an array) are :data:`_LIVE`'s items
_LIVE_AMONG = {
    "turn": "SELECT id FROM turns WHERE id = ANY(%s) AND erased = 0 AND content != ''",
    "record": "SELECT id FROM records WHERE id = ANY(%s) AND status != 'erased'",
    "card": "SELECT id FROM cards WHERE id = ANY(%s) AND erased = 0",
}

#: vectors written after a row, with the group a search scope picks by (``%s`` = the row)
_GROUP = {
    "turn": "SELECT e.rid, e.item_id, t.conversation_id, e.dim, e.vector FROM embeddings e "
            "LEFT JOIN turns t ON t.id = e.item_id WHERE e.kind = 'turn' AND e.rid > %s ORDER BY e.rid",
    "card": "SELECT e.rid, e.item_id, c.conversation_id, e.dim, e.vector FROM embeddings e "
            "LEFT JOIN cards c ON c.id = e.item_id WHERE e.kind = 'card' AND e.rid > %s ORDER BY e.rid",
    "record": "SELECT e.rid, e.item_id, r.namespace, e.dim, e.vector FROM embeddings e "
              "LEFT JOIN records r ON r.id = e.item_id WHERE e.kind = 'record' AND e.rid > %s ORDER BY e.rid",
}


def _query(queries: dict[str, str], kind: str) -> str:
    """The query of ``kind``. :raises InvalidInput: for a kind other than turn, record, card."""
    try:
        return queries[kind]
    except KeyError:
        raise InvalidInput(f"unknown item kind {kind!r}: use one of turn, record, card") from None


class PostgresVectors:
    """Stored embeddings, on one :class:`~memfold.memory.storage.postgres.db.PostgresDB`."""

    def __init__(self, c: PostgresDB) -> None:
        self.c = c
        self._matrices = vectorscan.MatrixCache()
        self._column: bool | None = None

    def _has_column(self) -> bool:
        """Whether ``embeddings`` has the pgvector column (fixed once migrated: read once)."""
        if self._column is None:
            self._column = pgvector.has_column(self.c)
        return self._column

    def uses_pgvector(self) -> bool:
        """True when nearest-neighbour search runs in SQL on pgvector (the extension was present at
        migration and the ``pgvector`` setting is on); False for the in-process scan."""
        return pgvector.enabled(self.c) and self._has_column()

    # -- the file's model ------------------------------------------------------------------
    def model(self) -> tuple[str, int] | None:
        """``(model_id, dim)`` recorded for this file's vectors, or ``None`` when none is."""
        rows = dict(self.c.all("SELECT key, value FROM meta WHERE key IN ('embedding_model', 'embedding_dim')"))
        if "embedding_model" not in rows:
            return None
        return rows["embedding_model"], int(rows["embedding_dim"])

    def set_model(self, model_id: str, dim: int) -> None:
        """Record ``(model_id, dim)`` as this file's model (call inside a transaction)."""
        for key, value in (("embedding_model", model_id), ("embedding_dim", str(dim))):
            self.c.run("INSERT INTO meta(key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                       [key, value])
        if self._has_column():
            pgvector.index_for_model(self.c, int(dim))

    # -- writing ---------------------------------------------------------------------------
    def put(self, kind: str, item_ids: Sequence[int], vectors: np.ndarray, *, model_id: str) -> None:
        """Store (or replace) one vector per item: ``vectors`` is ``(len(item_ids), dim) float32``."""
        dim = int(vectors.shape[1])
        if self._has_column():  # kept filled whatever the setting, so the index stays whole
            self.c.run_many(
                "INSERT INTO embeddings(kind, item_id, model_id, dim, vector, embedding) "
                "VALUES (%s, %s, %s, %s, %s, %s::vector) "
                "ON CONFLICT (kind, item_id) DO UPDATE SET model_id = excluded.model_id, dim = excluded.dim, "
                "vector = excluded.vector, embedding = excluded.embedding, "
                "rid = nextval(pg_get_serial_sequence('embeddings', 'rid'))",
                [(kind, int(i), model_id, dim, vector_to_blob(v), pgvector.literal(v)) for i, v in zip(item_ids, vectors)],
            )
            return
        self.c.run_many(
            "INSERT INTO embeddings(kind, item_id, model_id, dim, vector) VALUES (%s, %s, %s, %s, %s) "
            "ON CONFLICT (kind, item_id) DO UPDATE SET model_id = excluded.model_id, dim = excluded.dim, "
            "vector = excluded.vector, rid = nextval(pg_get_serial_sequence('embeddings', 'rid'))",
            [(kind, int(i), model_id, dim, vector_to_blob(v)) for i, v in zip(item_ids, vectors)],
        )

    def clear(self) -> int:
        """Delete every vector and the recorded model (call inside a transaction); returns how many."""
        n = self.c.value("SELECT COUNT(*) FROM embeddings", default=0)
        self.c.run("DELETE FROM embeddings")
        self.c.run("DELETE FROM meta WHERE key IN ('embedding_model', 'embedding_dim')")
        if self._has_column():
            pgvector.drop_index(self.c)  # the next model claim types the column and indexes it again
        return n

    # -- reading ---------------------------------------------------------------------------
    def get(self, kind: str, item_id: int) -> np.ndarray | None:
        """The stored ``(dim,) float32`` vector of one item, or ``None``."""
        row = self.c.one("SELECT dim, vector FROM embeddings WHERE kind = %s AND item_id = %s", [kind, int(item_id)])
        return None if row is None else blob_to_vector(row[1], row[0])

    def count(self, kind: str | None = None) -> int:
        """How many vectors are stored (of one kind, or all)."""
        if kind is None:
            return self.c.value("SELECT COUNT(*) FROM embeddings", default=0)
        return self.c.value("SELECT COUNT(*) FROM embeddings WHERE kind = %s", [kind], default=0)

    def version(self, kind: str) -> tuple:
        """A value that changes whenever the vectors of ``kind`` change (for caching :meth:`matrix`)."""
        return tuple(self.c.one(
            "SELECT COUNT(*), COALESCE(MAX(rid), 0), COALESCE(SUM(rid), 0)::bigint FROM embeddings WHERE kind = %s",
            [kind]))

    def matrix(self, kind: str) -> tuple[np.ndarray, np.ndarray]:
        """All vectors of ``kind``: ``(ids (n,) int64 ascending, vectors (n, dim) float32)``;
        ``(0, 0)`` vectors when there are none."""
        rows = self.c.all("SELECT item_id, dim, vector FROM embeddings WHERE kind = %s ORDER BY item_id", [kind])
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        if rows:
            dim = rows[0][1]
            vectors = np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4").reshape(len(rows), dim).astype(np.float32)
        else:
            vectors = np.zeros((0, 0), dtype=np.float32)
        return ids, vectors

    # -- nearest neighbours ----------------------------------------------------------------
    def _matrix(self, kind: str, private: bool | None) -> vectorscan.Matrix:
        """The kind's vectors in memory (reloaded when :meth:`version` changes); one loaded inside
        a caller's transaction (``private``; ``None``: when this thread is in one) is used for that
        read only, never kept (its rows may roll back).

        The stamp and the matrix are read in one snapshot (``REPEATABLE READ``): read in two
        statements, a write committed between them cached a matrix under the stamp of the state
        before it, and once the stamp came back to that value (a vector added, then erased) the
        cached matrix still held the erased vector."""
        if private is None:
            private = self.c.in_transaction_here()
        with self.c.snapshot():
            return self._matrices.get(kind, self.version(kind), lambda: self.matrix(kind), keep=not private)

    def _plan(self, kind: str, query_vector: np.ndarray, scope: SearchScope, limit: int
              ) -> list[tuple[str, list, int | None]]:
        """The statements :meth:`nearest` runs on pgvector, in order until one yields ``limit``
        rows: ``[(sql, params, ef_search or None)]``."""
        _query(_LIVE, kind)  # the kind is checked, so it may be written into the SQL (partial index)
        frm, where, params = _filter(kind, scope)
        q = pgvector.literal(query_vector)
        exact = (f"SELECT e.item_id, {_SIM} AS sim FROM {frm} "
                 f"JOIN embeddings e ON e.kind = '{kind}' AND e.item_id = {_ALIAS[kind]}.id WHERE {where} "
                 f"ORDER BY sim DESC, e.item_id LIMIT %s", [q, *params, limit], None)
        if scope.lineage is not None or not pgvector.indexed(self.c):
            return [exact]
        fetch = min(MAX_EF_SEARCH, max(40, OVERFETCH * limit))
        approximate = (f"SELECT n.item_id, n.sim FROM (SELECT e.item_id, {_SIM} AS sim "
                       f"FROM embeddings e WHERE e.kind = '{kind}' ORDER BY e.embedding <=> %s::vector LIMIT %s) n "
                       f"WHERE n.item_id IN (SELECT {_ALIAS[kind]}.id FROM {frm} WHERE {where}) "
                       f"ORDER BY n.sim DESC, n.item_id LIMIT %s", [q, q, fetch, *params, limit], fetch)
        return [approximate, exact]

    def nearest(self, kind: str, query_vector: np.ndarray, scope: SearchScope, *, limit: int,
                private: bool | None = None) -> list[tuple[int, float]]:
        """The ``limit`` live items of ``kind`` inside ``scope`` most similar to ``query_vector``:
        ``[(item_id, cosine)]``, best first (see the module docstring for how: HNSW, exact SQL, or
        in-process). Fewer only when fewer visible items have a vector. ``private``: see
        :meth:`_matrix` (pgvector keeps nothing in memory)."""
        limit = int(limit)
        if limit <= 0:
            _query(_LIVE, kind)
            return []
        if not self.uses_pgvector():
            matrix = self._matrix(kind, private)
            if len(matrix.ids) == 0:
                return []
            frm, where, params = _filter(kind, scope)
            allowed = [r[0] for r in self.c.all(f"SELECT {_ALIAS[kind]}.id FROM {frm} WHERE {where}", params)]
            return vectorscan.nearest(matrix, query_vector, allowed, limit)
        rows: list[tuple] = []
        with self.c.snapshot():  # one read, and hnsw.ef_search set for this transaction only
            for sql, params, ef_search in self._plan(kind, vectorscan.unit(query_vector), scope, limit):
                if ef_search is not None:
                    self.c.value("SELECT set_config('hnsw.ef_search', %s, true)", [str(ef_search)])
                rows = self.c.all(sql, params)
                if len(rows) >= limit:
                    break
        return [(int(i), float(s)) for i, s in rows]

    def explain_nearest(self, kind: str, query_vector: np.ndarray, scope: SearchScope, *, limit: int) -> str:
        """PostgreSQL's plan (``EXPLAIN``) of the first statement :meth:`nearest` runs for these
        arguments, or ``""`` when the search runs in-process. For tests and operators checking that
        the HNSW index is used (PostgreSQL only; not part of the storage Protocol)."""
        if not self.uses_pgvector():
            return ""
        sql, params, ef_search = self._plan(kind, vectorscan.unit(query_vector), scope, int(limit))[0]
        with self.c.snapshot():
            if ef_search is not None:
                self.c.value("SELECT set_config('hnsw.ef_search', %s, true)", [str(ef_search)])
            return "\n".join(r[0] for r in self.c.all("EXPLAIN " + sql, params))

    def analyze(self) -> None:
        """Refresh PostgreSQL's statistics of ``embeddings`` (``ANALYZE``), as autovacuum does after
        enough writes: until then a freshly filled table looks empty to the planner, which sorts
        every row instead of walking the HNSW index (correct, only slower). For benchmarks, tests
        and operators after a bulk load (PostgreSQL only; not part of the storage Protocol)."""
        self.c.run("ANALYZE embeddings")

    def similarity(self, kind: str, query_vector: np.ndarray, item_ids: Sequence[int], *,
                   private: bool | None = None) -> dict[int, float]:
        """``{item_id: cosine}`` to ``query_vector`` of those of ``item_ids`` that have a vector
        (``private``: see :meth:`_matrix`)."""
        _query(_LIVE, kind)
        ids = list(dict.fromkeys(int(i) for i in item_ids))
        if not ids:
            return {}
        if not self.uses_pgvector():
            return vectorscan.similarity(self._matrix(kind, private), query_vector, ids)
        rows = self.c.all(f"SELECT e.item_id, {_SIM} FROM embeddings e WHERE e.kind = %s AND e.item_id = ANY(%s)",
                          [pgvector.literal(vectorscan.unit(query_vector)), kind, ids])
        return {int(i): float(s) for i, s in rows}

    def unembedded(self, kind: str, *, limit: int | None = None, after_id: int = 0) -> list[tuple[int, str]]:
        """``[(item_id, text)]`` of live items of ``kind`` without a vector, oldest first (turns not
        erased and not empty, records and cards not erased). Reads the items' own tables.

        :param after_id: only items with a larger id (an index that scanned up to an id asks only
            for what came since: a primary-key range, not a scan of the table)."""
        sql = _query(_MISSING, kind)
        if after_id:
            alias = {"turn": "t", "record": "r", "card": "c"}[kind]
            sql = sql.replace(" ORDER BY", f" AND {alias}.id > {int(after_id)} ORDER BY")
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [(r[0], r[1]) for r in self.c.all(sql)]

    def embeddable_among(self, kind: str, item_ids: Sequence[int]) -> set[int]:
        """Which of ``item_ids`` are live items of ``kind`` that may carry a vector (turns not
        erased and not empty, records and cards not erased: :meth:`unembedded`'s items), in one read."""
        if not item_ids:
            return set()
        return {r[0] for r in self.c.all(_query(_LIVE_AMONG, kind), [[int(i) for i in item_ids]])}

    def newest_item(self, kind: str) -> int:
        """The largest id of ``kind``'s items (turns, cards, records), erased or not; 0 when none
        (where an incremental :meth:`unembedded` scan can resume)."""
        table = {"turn": "turns", "record": "records", "card": "cards"}
        if kind not in table:
            raise InvalidInput(f"unknown item kind {kind!r}: use one of turn, record, card")
        return int(self.c.value(f"SELECT COALESCE(MAX(id), 0) FROM {table[kind]}", default=0))

    def mark(self, kind: str) -> int:
        """The newest vector row of ``kind`` (``MAX(rid)``; :meth:`put` gives a replaced vector a
        new ``rid``); 0 when none. A vector written or replaced later has a larger row (what
        :meth:`since` reads); rows arrive in commit order under the one write lock."""
        _query(_GROUP, kind)
        return int(self.c.value("SELECT COALESCE(MAX(rid), 0) FROM embeddings WHERE kind = %s", [kind], default=0))

    def since(self, kind: str, after_row: int) -> list[tuple[int, int, str | None, np.ndarray]]:
        """``[(row, item_id, group, vector)]`` of the vectors of ``kind`` written or replaced after
        vector row ``after_row`` (0: all), by row; ``group`` is what a search scope picks by: a
        turn's or card's conversation, a record's namespace. An in-memory index stays current
        with this instead of reloading every vector."""
        rows = self.c.all(_query(_GROUP, kind), [int(after_row)])
        return [(int(r[0]), int(r[1]), r[2], blob_to_vector(bytes(r[4]), r[3])) for r in rows]

    def embeddable(self, kind: str) -> list[tuple[int, str]]:
        """``[(item_id, text)]`` of every live item of ``kind`` that may carry a vector, by id
        (what a re-embedding covers). Reads the items' own tables."""
        return [(r[0], r[1]) for r in self.c.all(_query(_LIVE, kind))]
