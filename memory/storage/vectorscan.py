"""In-process nearest-neighbour search over stored vectors (no SQL; both backends use it).

:meth:`~memfold.memory.storage.base.VectorStorage.nearest` and
:meth:`~memfold.memory.storage.base.VectorStorage.similarity` on SQLite, and on PostgreSQL when
pgvector is absent or switched off, load the vectors of a kind once (:class:`MatrixCache`, reloaded
when the storage's ``version(kind)`` changes) and rank them here with numpy: an exact scan, cosine
similarity ``v·q / (|v| |q|)`` (0 for a zero vector), best first, ties by smaller id. On SQLite a
scope of most of a matrix of :data:`PROJECTION_MIN_ROWS` vectors or more is scanned in two exact
stages (:class:`Projection`: a bound from a third of the bytes, then the few rows it leaves).

Invariant kept here: only ids in ``allowed`` (the caller's scope, read in SQL by the backend) are
ever ranked, so an item the reader may not see is never returned.
"""

from __future__ import annotations

import math
import threading
from typing import Callable, Iterable, Sequence

import numpy as np


def unit(vector: np.ndarray) -> np.ndarray:
    """``vector`` as a ``(dim,) float32`` of unit length (a zero vector stays zero)."""
    q = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(q))
    return q / norm if norm > 0 else q


def cosines(vectors: np.ndarray, inverse_norms: np.ndarray, rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Cosine of ``query`` (a unit vector) to ``vectors[rows]``, given each vector's inverse norm."""
    if len(rows) == 0:
        return np.zeros(0, dtype=np.float64)
    if vectors.shape[1] != len(query):
        from ..errors import EmbeddingError

        raise EmbeddingError(f"the query vector has dimension {len(query)}, the stored vectors "
                             f"{vectors.shape[1]}: embed the query with the database's model")
    return (vectors[rows] @ query).astype(np.float64) * inverse_norms[rows]


#: a scope holding at least this share of a matrix's rows is scored by one pass over the whole
#: matrix (a matrix-vector product reads the rows in place) instead of copying its rows out first
#: (``vectors[rows]`` copies ``4 × dim`` bytes a row: 150 MB for 100K MiniLM vectors, ~50 ms)
WHOLE_PASS_SHARE = 0.25


def scope_cosines(vectors: np.ndarray, inverse_norms: np.ndarray, n: int, rows: np.ndarray,
                  query: np.ndarray) -> np.ndarray:
    """:func:`cosines` of ``query`` to ``vectors[rows]`` among the first ``n`` rows, computed so the
    cost follows the scope: a small scope gathers its rows, a scope of most of the matrix
    (:data:`WHOLE_PASS_SHARE`) multiplies the first ``n`` rows in place and picks its rows after."""
    if len(rows) == 0 or len(rows) < WHOLE_PASS_SHARE * n:
        return cosines(vectors, inverse_norms, rows, query)
    if vectors.shape[1] != len(query):
        return cosines(vectors, inverse_norms, rows, query)  # raises the dimension error
    every = vectors[:n] @ query
    return every[rows].astype(np.float64) * inverse_norms[rows]


#: how far below the ``limit``-th float32 cosine :meth:`IncrementalMatrix.top` still rescores in
#: float64 (float32 rounds a cosine by about 6e-8; the float64 value decides the order)
TOP_MARGIN = 1e-5
#: a matrix of at least this many rows ranks a large scope in two stages (:class:`Projection`):
#: a scan of each vector's first :data:`PROJECTED_DIMS` coordinates in a basis of the stored
#: vectors' principal directions, then the exact product of the few rows that can still be among
#: the best; below it the one full product is cheap enough
PROJECTION_MIN_ROWS = 20_000
#: coordinates kept per vector by :class:`Projection` (a third of all-MiniLM-L6-v2's 384: the
#: first stage reads 516 bytes a vector instead of 1,536)
PROJECTED_DIMS = 128
#: rows sampled (evenly spaced) to choose the basis: the bound holds for any orthonormal basis, the
#: sample only decides how tight it is
BASIS_SAMPLE = 8_000
#: what the float32 arithmetic of a bound may lose, in cosine units (its rounding is about 1e-5
#: at most): a row whose bound is this close below the cut is still rescored exactly
BOUND_MARGIN = 1e-4
#: squared residual norms are raised by this share of the squared norm, so a basis that is
#: orthonormal only to float32 rounding (about 1e-7) never makes a residual too small
RESIDUAL_SLACK = 1e-4
#: the exact second stage runs while its rows are at most this share of the scope; past it the
#: bound prunes too little and the one full product is cheaper
RESCORE_SHARE = 0.2
#: :func:`seed_rows` samples every this many values (1: no sample, the exact largest)
SEED_STEP = 8
#: rows :func:`float64_products` converts at a time: its temporaries stay about 2 MB
RESCORE_BLOCK = 512


def float64_products(vectors: np.ndarray, at: np.ndarray, query: np.ndarray) -> np.ndarray:
    """``vectors[at] · query`` in float64, ``RESCORE_BLOCK`` rows at a time: each row by
    einsum's own loop, the same arithmetic wherever the row sits and however many rows go
    together, so the values are those of one product over every row. One product over 9,000 rows
    copied 42 MB out first (float32 rows, then float64), into fresh pages whenever the allocator
    had given the last ones back: 5-93 ms of CPU on a loaded machine, against 4.2-4.5 ms every
    time for the blocks (round 14)."""
    q64 = query.astype(np.float64)
    out = np.empty(len(at), dtype=np.float64)
    for start in range(0, len(at), RESCORE_BLOCK):
        block = at[start:start + RESCORE_BLOCK]
        np.einsum("ij,j->i", vectors[block].astype(np.float64), q64, out=out[start:start + len(block)])
    return out


def seed_rows(values: np.ndarray, seed: int, limit: int) -> np.ndarray:
    """Positions of about ``seed`` of the largest ``values`` (at least ``limit`` of them, ``limit <=
    seed <= len(values)``): the rows :meth:`Projection.candidates` takes its floor from. Any rows
    give a valid floor (the ``limit``-th best exact cosine of real rows is at most the scope's);
    the best ones give a tight one. A large array is cut at the value a strided sample puts about
    ``seed`` rows above (a partition of a :data:`SEED_STEP`-th of the values and one comparison,
    instead of a partition of them all); too few or too many rows above it fall back to the
    exact ``seed`` largest."""
    size = len(values)
    if SEED_STEP > 1 and size >= 64 * SEED_STEP * max(1, seed // SEED_STEP):
        sample = values[::SEED_STEP]
        k = max(1, seed // SEED_STEP)
        edge = np.partition(sample, len(sample) - k)[len(sample) - k]
        best = np.flatnonzero(values >= edge)
        if limit <= len(best) <= 8 * seed:
            return best
    return np.argpartition(values, size - seed)[size - seed:]


def grown_capacity(need: int) -> int:
    """Rows to allocate for ``need`` rows: a quarter more (at least 1,024), so a load leaves room
    for the appends after it. Before, a first load sized exactly to the file made the next search
    after an append copy every vector into a matrix twice as large (150 MB copied and 300 MB
    allocated at 100K MiniLM vectors, ~1 s on a loaded machine). ``np.zeros`` leaves untouched
    rows unallocated by the OS, so the headroom costs no resident memory until written."""
    return need + max(1024, need // 4)


def lineage_mask(names: dict, groups: np.ndarray, seqs: np.ndarray,
                 lineage: Sequence[tuple[str, int | None]]) -> np.ndarray:
    """Which items (by their group code and seq) a conversation's lineage sees: each
    ``(conversation_id, upto)`` picks that conversation's items up to seq ``upto`` (``None``: all)."""
    mask = np.zeros(len(groups), dtype=bool)
    for conversation_id, upto in lineage:
        code = names.get(conversation_id)
        if code is None:
            continue
        m = groups == code
        if upto is not None:
            m &= seqs <= upto
        mask |= m
    return mask


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
        return cosines(self.vectors, self.inverse_norms, rows, query)

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

    def get(self, kind: str, stamp: tuple, load: Callable[[], tuple[np.ndarray, np.ndarray]], *,
            keep: bool = True) -> Matrix:
        """The kind's matrix at ``stamp``: the cached one when its stamp is ``stamp``, else
        ``load()``, kept for the next call unless ``keep`` is false (a read inside a caller's
        transaction, which may see rows that roll back: used for that read only)."""
        with self._lock:
            hit = self._cached.get(kind)
            if hit is not None and hit[0] == stamp:
                return hit[1]
        matrix = Matrix(*load())
        if keep:
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


def projected_dims(dim: int) -> int:
    """Coordinates :class:`Projection` keeps of ``dim``-dimensional vectors: :data:`PROJECTED_DIMS`,
    and at most a third of ``dim``."""
    return max(1, min(PROJECTED_DIMS, dim // 3))


class Projection:
    """An exact two-stage scan of an :class:`IncrementalMatrix` (issue 18, point 2): each vector
    ``v`` is kept as its first ``d`` coordinates ``p = Uᵀv`` in a fixed orthonormal basis ``U``
    (the stored vectors' top principal directions, :data:`PROJECTED_DIMS` of them) and the norm
    ``r`` of what the basis leaves out. For a query ``q`` (coordinates ``p_q``, residual norm
    ``r_q``), Cauchy-Schwarz on the left-out part gives ``q·v <= p_q·p + r_q × r``: an upper bound
    of every cosine from a third of the bytes. :meth:`candidates` returns every row whose bound
    can still reach the ``limit``-th best exact cosine (found from the rows with the best bounds),
    so ranking only those rows exactly gives the same list as ranking every row: the result never
    depends on the basis, only the cost does.

    Memory: ``4 × (d + 1)`` bytes a vector (516 at d 128: 52 MB for 100K vectors) beside the
    matrix's 1,536. Kept current by the owner: :meth:`update` for every row added or replaced,
    :meth:`clear` for a row dropped; :meth:`reserve` grows it with the matrix.
    """

    __slots__ = ("basis", "coords", "residuals")

    def __init__(self, vectors: np.ndarray, n: int, capacity: int, dims: int | None = None) -> None:
        dims = projected_dims(vectors.shape[1]) if dims is None else int(dims)
        step = max(1, n // BASIS_SAMPLE)
        sample = vectors[:n:step]
        # uncentred second moments: the directions that carry most of the dot products (float32
        # products are precise enough to choose a basis; the bound holds for any orthonormal one)
        _, eigenvectors = np.linalg.eigh((sample.T @ sample).astype(np.float64))
        self.basis = np.ascontiguousarray(eigenvectors[:, ::-1][:, :dims]).astype(np.float32)
        self.coords = np.zeros((capacity, self.basis.shape[1]), dtype=np.float32)
        self.residuals = np.zeros(capacity, dtype=np.float32)
        self.update(vectors, np.arange(n, dtype=np.int64))

    def reserve(self, capacity: int) -> None:
        """Room for ``capacity`` rows (never shrinks)."""
        if capacity <= len(self.residuals):
            return
        coords = np.zeros((capacity, self.coords.shape[1]), dtype=np.float32)
        coords[:len(self.coords)] = self.coords
        residuals = np.zeros(capacity, dtype=np.float32)
        residuals[:len(self.residuals)] = self.residuals
        self.coords, self.residuals = coords, residuals

    def update(self, vectors: np.ndarray, positions: np.ndarray, block: int = 2048) -> None:
        """Project the vectors at ``positions`` (their rows of ``vectors``), ``block`` at a time."""
        for start in range(0, len(positions), block):
            at = positions[start:start + block]
            rows = vectors[at]
            coords = rows @ self.basis
            self.coords[at] = coords
            self.residuals[at] = self._residual(rows.astype(np.float64), coords.astype(np.float64))

    @staticmethod
    def _residual(rows: np.ndarray, coords: np.ndarray) -> np.ndarray:
        """``|v - U Uᵀ v|`` of each row from its squared norm less its coordinates' (float64),
        raised by :data:`RESIDUAL_SLACK` of the squared norm so rounding never makes it smaller."""
        whole = np.einsum("ij,ij->i", rows, rows)
        kept = np.einsum("ij,ij->i", coords, coords)
        return np.sqrt(np.maximum(whole - kept, 0.0) + RESIDUAL_SLACK * whole).astype(np.float32)

    def clear(self, at: int) -> None:
        """A dropped row: bound 0 (its vector is zero too)."""
        self.coords[at] = 0.0
        self.residuals[at] = 0.0

    def bounds(self, query: np.ndarray, n: int, inverse_norms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(projected, bound)``: the cosine of the unit ``query`` to each of the first ``n`` rows
        counting only the basis' coordinates, and an upper bound of the whole cosine, both
        ``(n,) float32`` (0 for a zero row)."""
        coords = self.basis.T @ query
        q64 = query.astype(np.float64)
        whole = float(q64 @ q64)
        kept = coords.astype(np.float64)
        left = math.sqrt(max(whole - float(kept @ kept), 0.0) + RESIDUAL_SLACK * whole)
        projected = self.coords[:n] @ coords
        projected *= inverse_norms[:n]
        bound = self.residuals[:n] * np.float32(left)
        bound *= inverse_norms[:n]
        bound += projected
        return projected, bound

    def candidates(self, matrix: "IncrementalMatrix", query: np.ndarray, rows: np.ndarray | None,
                   limit: int) -> np.ndarray | None:
        """Positions (sorted) that hold every row of ``rows`` (``None``: all the first ``n``) whose
        exact float32 cosine is within :data:`TOP_MARGIN` of the ``limit``-th best; ``None`` when
        they would be more than :data:`RESCORE_SHARE` of the scope (the full product is then
        cheaper). ``limit`` must be less than the scope's size.

        The floor: the ``2 × limit`` rows of the best projected cosines are real rows, so the
        ``limit``-th best of their exact cosines is at most the scope's ``limit``-th best; a row
        whose bound is below that floor (less :data:`TOP_MARGIN` and :data:`BOUND_MARGIN`)
        cannot be among the best, nor within the margin of them."""
        projected, bound = self.bounds(query, matrix.n, matrix.inverse_norms)
        if rows is not None:
            projected, bound = projected[rows], bound[rows]
        size = len(bound)
        best = seed_rows(projected, min(size, 2 * limit), limit)
        at = best if rows is None else rows[best]
        exact = (matrix.vectors[at] @ query) * matrix.inverse_norms[at]
        floor = exact[np.argpartition(exact, len(exact) - limit)[len(exact) - limit]]
        keep = np.flatnonzero(bound >= floor - np.float32(TOP_MARGIN + BOUND_MARGIN))
        if len(keep) > RESCORE_SHARE * size:
            return None
        return keep if rows is None else rows[keep]


class IncrementalMatrix:
    """The vectors of one kind kept current in memory by adding what was written since (issue 18,
    point 2): never reloaded whole after an append. Rows ``0..n-1`` hold ``ids`` (int64),
    ``groups`` (int32 codes of :attr:`names`: a turn's or card's conversation, a record's
    namespace), ``seqs`` (a turn's seq, a card's ``last_seq``, 0 for a record), ``vectors``
    (float32, grown by doubling) and their inverse norms; ``mark`` is the newest storage row read.
    A vector replaced in storage replaces its row here; an item found dead (erased, a stale card)
    is dropped by :meth:`drop`. Not thread-safe: the owner holds a lock.

    Memory: ``4 × dim + 24`` bytes per vector (1,560 for all-MiniLM-L6-v2's 384) plus the id map
    (about 100 bytes a vector in Python), so 100K vectors take about 165 MB.
    """

    def __init__(self) -> None:
        self.n = 0
        self.mark = 0
        self.ids = np.zeros(0, dtype=np.int64)
        self.groups = np.zeros(0, dtype=np.int32)
        self.seqs = np.zeros(0, dtype=np.int64)
        self.vectors = np.zeros((0, 0), dtype=np.float32)
        self.inverse_norms = np.zeros(0, dtype=np.float32)
        self.live = np.zeros(0, dtype=bool)
        self.names: dict[object, int] = {}
        self.row_of: dict[int, int] = {}
        self._order: np.ndarray | None = None  # positions by ascending id, for :meth:`where`
        self.scanned = 0  # the storage's newest vector row (any kind) when this was last brought up to date
        self.last_row: tuple | None = None  # what that row held then (the owner checks it still does)
        #: positions added, replaced or dropped since an ANN index (:mod:`.ann`) last followed this
        #: matrix; ``None`` until one does
        self.changed: list[int] | None = None
        #: the two-stage scan's coordinates (:class:`Projection`), built by the first search of a
        #: large scope once the matrix holds :data:`PROJECTION_MIN_ROWS` rows; ``None`` before
        self.projection: Projection | None = None

    def add(self, rows: Sequence[tuple[int, int, object, int, np.ndarray]]) -> None:
        """Add ``[(storage row, item_id, group, seq, vector)]`` (by row)."""
        if not rows:
            return
        dim = len(rows[0][4])
        if self.vectors.shape[1] != dim:  # the first rows (or another model after a reload)
            self.__init__()
            self.vectors = np.zeros((0, dim), dtype=np.float32)
        self._order = None
        need = self.n + len(rows)
        if need > len(self.ids):
            self.reserve(grown_capacity(need), dim)
        written = [] if self.projection is not None else None
        for row, item_id, group, seq, vector in rows:
            at = self.row_of.get(item_id)
            if at is None:
                at = self.row_of[item_id] = self.n
                self.n += 1
            norm = float(np.linalg.norm(vector))
            self.ids[at] = item_id
            self.groups[at] = self.names.setdefault(group, len(self.names))
            self.seqs[at] = seq or 0
            self.vectors[at] = vector
            self.inverse_norms[at] = 1.0 / norm if norm > 0 else 0.0
            self.live[at] = True
            self.mark = max(self.mark, int(row))
            if self.changed is not None:
                self.changed.append(at)
            if written is not None:
                written.append(at)
        if written:
            self.projection.update(self.vectors, np.asarray(written, dtype=np.int64))

    def reserve(self, capacity: int, dim: int) -> None:
        """Make room for ``capacity`` rows of ``dim`` floats (never shrinks): a first load sized
        up front makes no growth copies of its matrix (a growth holds the old and the new one)."""
        if self.vectors.shape[1] != dim:
            if self.n:
                return  # another model's rows: the next add starts over
            self.vectors = np.zeros((0, dim), dtype=np.float32)
        if capacity <= len(self.ids):
            return
        for name in ("ids", "groups", "seqs", "inverse_norms", "live"):
            arr = getattr(self, name)
            grown = np.zeros(capacity, dtype=arr.dtype)
            grown[:self.n] = arr[:self.n]
            setattr(self, name, grown)
        grown = np.zeros((capacity, dim), dtype=np.float32)
        grown[:self.n] = self.vectors[:self.n]
        self.vectors = grown
        if self.projection is not None:
            self.projection.reserve(capacity)

    def drop(self, item_ids: Iterable[int]) -> None:
        """Leave these items out from now on (found erased or stale; their vectors are gone from storage)."""
        for item_id in item_ids:
            at = self.row_of.get(int(item_id))
            if at is not None:
                self.live[at] = False
                self.vectors[at] = 0.0
                if self.projection is not None:
                    self.projection.clear(at)
                if self.changed is not None:
                    self.changed.append(at)

    def rows(self, lineage: Sequence[tuple[str, int | None]] | None) -> np.ndarray:
        """Positions of the live rows a lineage sees (each member's own, up to its fork point;
        ``None``: every live row)."""
        live = self.live[:self.n]
        if lineage is None:
            return np.flatnonzero(live)
        return np.flatnonzero(lineage_mask(self.names, self.groups[:self.n], self.seqs[:self.n], lineage) & live)

    def positions(self, item_ids: Iterable[int]) -> np.ndarray:
        """Positions of those of ``item_ids`` that have a live vector here."""
        out = [self.row_of.get(int(i), -1) for i in dict.fromkeys(item_ids)]
        rows = np.asarray([r for r in out if r >= 0], dtype=np.int64)
        return rows[self.live[rows]] if len(rows) else rows

    def where(self, allowed: np.ndarray) -> np.ndarray:
        """Positions of the live rows whose ids are in ``allowed`` (an int64 array, any order)."""
        if self.n == 0 or len(allowed) == 0:
            return np.zeros(0, dtype=np.int64)
        if self._order is None:
            self._order = np.argsort(self.ids[:self.n], kind="stable")
        ordered = self.ids[self._order]
        at = np.clip(np.searchsorted(ordered, allowed), 0, self.n - 1)
        rows = np.unique(self._order[at[ordered[at] == allowed]])
        return rows[self.live[rows]]

    def cosines(self, rows: np.ndarray, query: np.ndarray) -> np.ndarray:
        """Cosine of the unit ``query`` to the vectors at ``rows`` (sorted positions)."""
        return scope_cosines(self.vectors, self.inverse_norms, self.n, rows, query)

    def top(self, query_vector: np.ndarray, rows: np.ndarray, limit: int) -> list[tuple[int, float]]:
        """``[(item_id, cosine)]``: the ``limit`` rows of ``rows`` most similar to ``query_vector``,
        best first, ties by smaller id."""
        if len(rows) == 0 or limit <= 0:
            return []
        query = unit(query_vector)
        if len(rows) > limit and len(rows) >= WHOLE_PASS_SHARE * self.n and self.vectors.shape[1] == len(query):
            return self._top_in_place(query, rows, limit)
        sims = self.cosines(rows, query)
        ids = self.ids[rows]
        if len(rows) > limit:
            keep = np.argpartition(-sims, limit - 1)[:limit]
            keep = np.flatnonzero(sims >= sims[keep].min())  # every tie of the last kept one
            ids, sims = ids[keep], sims[keep]
        order = np.lexsort((ids, -sims))[:limit]
        return [(int(ids[i]), float(sims[i])) for i in order]

    def _top_in_place(self, query: np.ndarray, rows: np.ndarray, limit: int) -> list[tuple[int, float]]:
        """:meth:`top` of a scope holding most of the matrix, with the same result: the float32
        cosines of the rows that can be among the best (every row: one product over the first
        ``n`` rows, no gather when the scope is every row, as in one 100K-turn conversation; or,
        in a matrix of :data:`PROJECTION_MIN_ROWS` rows or more, only the rows the two-stage
        bound of :class:`Projection` leaves, in float64) pick the best
        ``limit`` with a margin of :data:`TOP_MARGIN` (far above float32's rounding of a cosine,
        about 6e-8), then the exact float64 cosines of those few, sorted as :meth:`top` sorts
        (best first, ties by smaller id)."""
        every = len(rows) == self.n  # sorted distinct positions: then rows is 0..n-1
        found = None
        if self.n >= PROJECTION_MIN_ROWS:
            if self.projection is None:
                self.projection = Projection(self.vectors, self.n, len(self.ids))
            found = self.projection.candidates(self, query, None if every else rows, limit)
        if found is not None:
            # float64 products, row by row the same arithmetic wherever a row sits (einsum's own
            # loop: BLAS rounds the last few rows of a product its own way), so equal vectors tie
            # exactly and go by id; they differ from the full product's float32 ones by its rounding
            sims = float64_products(self.vectors, found, query) * self.inverse_norms[found]
            cut = sims[np.argpartition(sims, len(sims) - limit)[len(sims) - limit:]].min()
            keep = np.flatnonzero(sims >= cut - TOP_MARGIN)
            at, sims = found[keep], sims[keep]
        else:
            products = self.vectors[:self.n] @ query  # the same product scope_cosines takes
            scores = products * self.inverse_norms[:self.n]
            sub = scores if every else scores[rows]
            cut = sub[np.argpartition(sub, len(sub) - limit)[len(sub) - limit:]].min()
            keep = np.flatnonzero(sub >= cut - TOP_MARGIN)
            at = keep if every else rows[keep]
            sims = products[at].astype(np.float64) * self.inverse_norms[at]
        ids = self.ids[at]
        order = np.lexsort((ids, -sims))[:limit]
        return [(int(ids[i]), float(sims[i])) for i in order]
