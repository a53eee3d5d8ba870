"""In-process nearest-neighbour search over stored vectors (no SQL; both backends use it).

:meth:`~memfold.memory.storage.base.VectorStorage.nearest` and
:meth:`~memfold.memory.storage.base.VectorStorage.similarity` on SQLite, and on PostgreSQL when
pgvector is absent or switched off, load the vectors of a kind once (:class:`MatrixCache`, reloaded
when the storage's ``version(kind)`` changes) and rank them here with numpy: an exact scan, cosine
similarity ``v·q / (|v| |q|)`` (0 for a zero vector), best first, ties by smaller id.

Invariant kept here: only ids in ``allowed`` (the caller's scope, read in SQL by the backend) are
ever ranked, so an item the reader may not see is never returned.
"""

from __future__ import annotations

import threading
from typing import Callable, Sequence

import numpy as np


def unit(vector: np.ndarray) -> np.ndarray:
    """``vector`` as a ``(dim,) float32`` of unit length (a zero vector stays zero)."""
    q = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(q))
    return q / norm if norm > 0 else q


class Matrix:
    """The vectors of one kind: ``ids (n,) int64`` ascending, ``vectors (n, dim) float32`` and their
    inverse norms ``(n,) float32`` (0 for a zero row)."""

    __slots__ = ("ids", "vectors", "inverse_norms")

    def __init__(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        self.ids = ids
        self.vectors = vectors
        norms = np.linalg.norm(vectors, axis=1) if len(ids) else np.zeros(0, dtype=np.float32)
        with np.errstate(divide="ignore"):
            self.inverse_norms = np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 0.0).astype(np.float32)

    def cosines(self, rows: np.ndarray, query: np.ndarray) -> np.ndarray:
        """Cosine of ``query`` (a unit vector) to the vectors at positions ``rows``."""
        if len(rows) == 0:
            return np.zeros(0, dtype=np.float64)
        if self.vectors.shape[1] != len(query):
            from ..errors import EmbeddingError

            raise EmbeddingError(f"the query vector has dimension {len(query)}, the stored vectors "
                                 f"{self.vectors.shape[1]}: embed the query with the database's model")
        return (self.vectors[rows] @ query).astype(np.float64) * self.inverse_norms[rows]

    def positions(self, item_ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """Positions (in :attr:`ids`) of those of ``item_ids`` that have a vector, in ``ids`` order."""
        wanted = np.unique(np.asarray(list(item_ids) if not isinstance(item_ids, np.ndarray) else item_ids,
                                      dtype=np.int64))
        if len(self.ids) == 0 or len(wanted) == 0:
            return np.zeros(0, dtype=np.int64)
        at = np.clip(np.searchsorted(self.ids, wanted), 0, len(self.ids) - 1)
        return at[self.ids[at] == wanted]


class MatrixCache:
    """One :class:`Matrix` per kind, reloaded when the stamp (the storage's ``version(kind)``) changes.
    Thread-safe; a storage handle keeps one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cached: dict[str, tuple[tuple, Matrix]] = {}

    def get(self, kind: str, stamp: tuple, load: Callable[[], tuple[np.ndarray, np.ndarray]]) -> Matrix:
        with self._lock:
            hit = self._cached.get(kind)
            if hit is not None and hit[0] == stamp:
                return hit[1]
        matrix = Matrix(*load())
        with self._lock:
            self._cached[kind] = (stamp, matrix)
        return matrix

    def clear(self) -> None:
        with self._lock:
            self._cached.clear()


def nearest(matrix: Matrix, query_vector: np.ndarray, allowed: Sequence[int] | np.ndarray,
            limit: int) -> list[tuple[int, float]]:
    """The ``limit`` items of ``allowed`` whose vectors are most similar to ``query_vector``:
    ``[(item_id, cosine)]``, best first, ties by smaller id (an exact scan)."""
    rows = matrix.positions(allowed)
    if len(rows) == 0 or limit <= 0:
        return []
    sims = matrix.cosines(rows, unit(query_vector))
    ids = matrix.ids[rows]
    if len(rows) > limit:  # the best `limit` (argpartition), then sorted exactly
        keep = np.argpartition(-sims, limit - 1)[:limit]
        cut = sims[keep].min()
        keep = np.flatnonzero(sims >= cut)  # every tie of the last kept one, so the id tie-break is exact
        ids, sims = ids[keep], sims[keep]
    order = np.lexsort((ids, -sims))[:limit]
    return [(int(ids[i]), float(sims[i])) for i in order]


def similarity(matrix: Matrix, query_vector: np.ndarray, item_ids: Sequence[int]) -> dict[int, float]:
    """``{item_id: cosine}`` of those of ``item_ids`` that have a vector."""
    rows = matrix.positions(item_ids)
    sims = matrix.cosines(rows, unit(query_vector))
    return {int(i): float(s) for i, s in zip(matrix.ids[rows], sims)}
