"""SQLite: stored embeddings (implements :class:`memfold.memory.storage.base.VectorStorage`).

Table ``embeddings`` (migration 5) holds one row per (kind, item): ``model_id``, ``dim`` and the
vector as little-endian float32 bytes (:func:`vector_to_blob`). The file's model is recorded in
``meta`` (``embedding_model`` / ``embedding_dim``). Erasing a turn, card or record drops its
vector in the same statement (triggers), so no vector outlives its words.

Nearest-neighbour search (:meth:`SqliteVectors.nearest`) is an exact in-process scan
(:mod:`..vectorscan`) over the kind's vectors, loaded once and reloaded when they change, limited
to the ids the scope's SQL selects.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...errors import EmbeddingError, InvalidInput
from .. import vectorscan
from ..rows import SearchScope
from .db import SqliteDB
from .fulltext import _ALIAS, _filter  # the search scope's SQL (lineage, namespace, time, labels, liveness)


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


def _query(queries: dict[str, str], kind: str) -> str:
    """The query of ``kind``. :raises InvalidInput: for a kind other than turn, record, card."""
    try:
        return queries[kind]
    except KeyError:
        raise InvalidInput(f"unknown item kind {kind!r}: use one of turn, record, card") from None


class SqliteVectors:
    """Stored embeddings, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c
        self._matrices = vectorscan.MatrixCache()

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

    def _matrix(self, kind: str) -> vectorscan.Matrix:
        _query(_LIVE, kind)
        return self._matrices.get(kind, self.version(kind), lambda: self.matrix(kind))

    def nearest(self, kind: str, query_vector: np.ndarray, scope: SearchScope, *, limit: int) -> list[tuple[int, float]]:
        """The ``limit`` live items of ``kind`` inside ``scope`` most similar to ``query_vector``:
        ``[(item_id, cosine)]``, best first, ties by smaller id (an exact in-process scan)."""
        matrix = self._matrix(kind)
        if len(matrix.ids) == 0:
            return []
        frm, where, params = _filter(kind, scope)
        allowed = [r[0] for r in self.c.all(f"SELECT {_ALIAS[kind]}.rowid FROM {frm} WHERE {where}", params)]
        return vectorscan.nearest(matrix, query_vector, allowed, int(limit))

    def similarity(self, kind: str, query_vector: np.ndarray, item_ids: Sequence[int]) -> dict[int, float]:
        """``{item_id: cosine}`` to ``query_vector`` of those of ``item_ids`` that have a vector."""
        return vectorscan.similarity(self._matrix(kind), query_vector, item_ids)

    def unembedded(self, kind: str, *, limit: int | None = None) -> list[tuple[int, str]]:
        """``[(item_id, text)]`` of live items of ``kind`` without a vector, oldest first (turns not
        erased and not empty, records and cards not erased). Reads the items' own tables."""
        sql = _query(_MISSING, kind)
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [(r[0], r[1]) for r in self.c.all(sql)]

    def embeddable(self, kind: str) -> list[tuple[int, str]]:
        """``[(item_id, text)]`` of every live item of ``kind`` that may carry a vector, by id
        (what a re-embedding covers). Reads the items' own tables."""
        return [(r[0], r[1]) for r in self.c.all(_query(_LIVE, kind))]
