"""An approximate nearest-neighbour index beside the exact in-memory vectors (issue 18, point 2).

``vector_index="ann"`` (``MemFold(vector_index=...)``, ``open_storage(..., vector_index=...)`` or
``MEMFOLD_VECTOR_INDEX``) keeps, next to a kind's :class:`~.vectorscan.IncrementalMatrix`, an HNSW
graph (hnswlib, the ``ann`` extra: ``pip install 'memfold[ann]'``, imported only when the setting
is used) that proposes candidates for large scopes; ``"exact"`` (the default) scans every row of
the scope. The graph only *proposes*: every candidate is scored again exactly from the matrix's
float32 vectors and checked against the scope, so a returned cosine is the same as the exact
scan's and only the candidate set is approximate.

Invariants kept here:

* **Nothing outside the scope, nothing dead.** The graph is asked for more neighbours than wanted
  (``limit / share`` of the scope, :data:`OVERSAMPLE`) and its answers are kept only if their
  matrix rows are in the scope's rows, which the caller picked live (a lineage from the matrix's
  groups, any other scope from SQL); the caller's primary-key probe still drops erased items.
* **Current as written.** The graph follows the matrix: every position the matrix adds, replaces
  or drops (:attr:`IncrementalMatrix.changed`) is applied at the next search (an insert, an
  update in place, or an item's vector overwritten with zeros and marked deleted, so the graph
  holds an erased vector no longer than the matrix does: until a search finds it dead). A matrix reloaded whole (its storage lost rows
  behind it) is reconciled by each item's vector fingerprint, so only what changed is re-inserted.
* **Deterministic.** Items are inserted one thread at a time in the matrix's order with a fixed
  seed (:data:`SEED`), so a fresh process over the same file builds the same graph and gives the
  same answers every time. A long-running process whose items were replaced or erased holds a
  graph with deleted nodes a fresh process does not have; its candidates can then differ, its
  scores never do.
* **Small scopes stay exact.** Below :data:`MIN_ROWS` rows, or below :data:`MIN_SHARE` of the
  graph's live items, the exact scan is cheaper than the graph plus filtering
  (``bench/bench_ann.py`` measures both) and is used.
* **The newest items are always seen.** The newest :data:`RECENT` rows of the matrix are scored
  exactly beside the graph's candidates, so a turn written just before a search is found even
  where the graph's walk would miss it.

The graph lives in process memory only and is built by the first search that needs it (single
thread; ``bench/bench_ann.py`` prints the build time). It is never written beside the database, so
erasure has no extra file to reach.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from ..errors import InvalidInput, MissingExtra
from .vectorscan import IncrementalMatrix, cosines, grown_capacity, unit

#: the settings ``vector_index`` accepts
VECTOR_INDEXES = ("exact", "ann")
#: HNSW links per node (hnswlib's ``M``; the bottom layer has twice as many)
M = 16
#: candidate list while inserting (hnswlib's ``ef_construction``)
EF_CONSTRUCTION = 64
#: the smallest candidate list while searching (hnswlib's ``ef``); a search asking for more
#: neighbours uses that many
EF_SEARCH = 64
#: the seed of hnswlib's level generator
SEED = 100
#: neighbours asked of the graph per wanted one, per share of the scope
OVERSAMPLE = 2.0
#: the fewest scope rows for which the graph is used: below, the exact scan is as cheap
#: (``bench_ann`` at 100K vectors: 5,000 rows 2.2 ms exact vs 1.8 ms graph, 10,000 rows 8.5 vs 1.3)
MIN_ROWS = 10_000
#: the smallest share of the graph's live items a scope must hold for the graph to be used: a
#: narrower scope makes the graph walk ``limit / share`` neighbours (``bench_ann`` at 1M vectors:
#: a 1% scope of 10,000 rows 9.5 ms exact vs 13.5 ms graph, a 5% scope 69 ms vs 6.7 ms)
MIN_SHARE = 0.05
#: the newest rows of the matrix, scored exactly beside the graph's candidates
RECENT = 1024
#: items inserted per ``add_items`` call while building (bounds the temporary copy)
BLOCK = 16_384


def check_vector_index(setting: Any, *, sqlite: bool = True) -> str:
    """The ``vector_index`` setting checked: ``None`` reads ``MEMFOLD_VECTOR_INDEX`` (default
    ``"exact"``).

    :param sqlite: whether the database is SQLite; PostgreSQL ignores the setting (pgvector's HNSW
        index), so hnswlib is not needed there.
    :raises InvalidInput: for anything but ``"exact"`` or ``"ann"``.
    :raises MissingExtra: for ``"ann"`` on SQLite when hnswlib is not installed (before anything
        is opened).
    """
    if setting is None:
        setting = os.environ.get("MEMFOLD_VECTOR_INDEX", "").strip().lower() or "exact"
    if not isinstance(setting, str) or setting not in VECTOR_INDEXES:
        raise InvalidInput(f"unknown vector_index {setting!r}: use 'exact' (scan every vector of the scope) "
                           f"or 'ann' (an HNSW graph for large scopes, pip install 'memfold[ann]')")
    if setting == "ann" and sqlite:
        hnswlib()
    return setting


def hnswlib() -> Any:
    """The ``hnswlib`` module.

    :raises MissingExtra: when it is not installed, naming the extra."""
    try:
        import hnswlib as module
    except ImportError as exc:
        raise MissingExtra(f"vector_index='ann' needs the hnswlib package, which is not installed ({exc}): "
                           f"pip install 'memfold[ann]', or use vector_index='exact'") from None
    return module


def fingerprints(vectors: np.ndarray) -> np.ndarray:
    """One float64 per row of ``vectors (k, dim)``: equal vectors give equal values, different
    ones almost surely different (a dot product with a fixed pseudo-random vector)."""
    dim = vectors.shape[1]
    weights = np.random.default_rng(dim).standard_normal(dim)
    return vectors.astype(np.float64) @ weights


class HnswIndex:
    """An HNSW graph over the live items of one kind, labelled by item id, following one
    :class:`IncrementalMatrix` (see the module docstring). Not thread-safe: the owner holds its lock.

    Memory: hnswlib keeps its own float32 copy of each vector (``4 × dim`` bytes) plus about
    ``(2 × M + 1) × 4`` bytes of bottom-layer links, a label and the upper layers (measured per
    vector by ``bench/bench_ann.py``), and this class a fingerprint per item (a Python dict entry).
    """

    def __init__(self) -> None:
        self._graph: Any = None
        self._dim = 0
        self._matrix: IncrementalMatrix | None = None  # the matrix the graph follows now
        self._prints: dict[int, float] = {}  # item id -> fingerprint of its vector in the graph
        self.built = False  #: whether the graph has been brought up to date at least once

    @property
    def live(self) -> int:
        """How many items the graph can return."""
        return len(self._prints)

    def worth(self, scope_rows: int, matrix_live: int) -> bool:
        """Whether a scope of ``scope_rows`` rows (of ``matrix_live`` live ones) goes to the graph:
        at least :data:`MIN_ROWS` rows and :data:`MIN_SHARE` of the live items."""
        return scope_rows >= MIN_ROWS and scope_rows >= MIN_SHARE * max(matrix_live, 1)

    # -- following the matrix ----------------------------------------------------------------
    def sync(self, mem: IncrementalMatrix) -> None:
        """Apply what ``mem`` added, replaced or dropped since the last call (everything, the
        first time or after a reload: then by fingerprint, so unchanged items stay as they are)."""
        if mem.n == 0:
            return
        dim = mem.vectors.shape[1]
        if self._graph is None or dim != self._dim:
            self._start(dim, len(mem.ids))
        if mem is not self._matrix or mem.changed is None:
            positions = np.arange(mem.n)
            keep = set(int(i) for i in mem.ids[:mem.n][mem.live[:mem.n]])
            for item_id in [i for i in self._prints if i not in keep]:
                self._forget(item_id)
            self._matrix = mem
        else:
            positions = np.unique(np.asarray(mem.changed, dtype=np.int64))
        mem.changed = []
        self._apply(mem, positions)
        self.built = True

    def _start(self, dim: int, capacity: int) -> None:
        graph = hnswlib().Index(space="cosine", dim=dim)
        graph.init_index(max_elements=max(capacity, 1024), M=M, ef_construction=EF_CONSTRUCTION, random_seed=SEED)
        graph.set_num_threads(1)
        self._graph, self._dim, self._matrix, self._prints = graph, dim, None, {}

    def _apply(self, mem: IncrementalMatrix, positions: np.ndarray) -> None:
        """Insert or update the live items at ``positions`` whose vectors the graph lacks, forget the dead."""
        if len(positions) == 0:
            return
        live = mem.live[positions]
        for item_id in mem.ids[positions[~live]]:
            self._forget(int(item_id))
        positions = positions[live]
        for start in range(0, len(positions), BLOCK):
            block = positions[start:start + BLOCK]
            ids = mem.ids[block]
            prints = fingerprints(mem.vectors[block])
            fresh = np.asarray([self._prints.get(int(i)) != p for i, p in zip(ids, prints)], dtype=bool)
            if not fresh.any():
                continue
            block, ids, prints = block[fresh], ids[fresh], prints[fresh]
            need = self._graph.get_current_count() + len(block)
            if need > self._graph.get_max_elements():
                self._graph.resize_index(grown_capacity(need))
            self._graph.add_items(np.ascontiguousarray(mem.vectors[block]), ids.astype(np.uint64), num_threads=1)
            self._prints.update(zip(ids.tolist(), prints.tolist()))

    def _forget(self, item_id: int) -> None:
        """Overwrite the item's vector in the graph with zeros and mark it deleted."""
        if self._prints.pop(item_id, None) is None:
            return
        self._graph.add_items(np.zeros((1, self._dim), dtype=np.float32), np.asarray([item_id], dtype=np.uint64),
                              num_threads=1)
        self._graph.mark_deleted(item_id)

    # -- searching ---------------------------------------------------------------------------
    def top(self, mem: IncrementalMatrix, query_vector: np.ndarray, rows: np.ndarray,
            limit: int) -> list[tuple[int, float]] | None:
        """``[(item_id, cosine)]``: the ``limit`` best of the scope's ``rows`` (positions in ``mem``)
        the graph finds, scored exactly, best first, ties by smaller id; ``None`` when the graph
        cannot answer (too few items), so the caller scans exactly."""
        self.sync(mem)
        if limit <= 0 or len(rows) == 0:
            return []
        if self.live == 0:
            return None
        share = min(1.0, len(rows) / self.live)
        if len(rows) >= self.live:  # every live row (a search without a conversation): no mask to build
            scope = mem.live
        else:
            scope = np.zeros(mem.n, dtype=bool)
            scope[rows] = True
        q = unit(query_vector)
        if len(q) != self._dim:
            return None  # the exact scan raises the dimension error
        k = min(self.live, int(math.ceil(limit * OVERSAMPLE / share)) + 8)
        while True:
            self._graph.set_ef(max(EF_SEARCH, k))
            try:
                labels, _ = self._graph.knn_query(q.reshape(1, -1), k=k, num_threads=1)
            except RuntimeError:  # fewer reachable items than asked (deleted nodes): scan exactly
                return None
            at = np.asarray([mem.row_of.get(int(i), -1) for i in labels[0]], dtype=np.int64)
            at = at[at >= 0]
            at = at[scope[at]]
            if len(at) >= limit or k >= self.live:
                break
            k = min(self.live, k * 4)
        # the newest rows are scored exactly too: an item just written is found even where the
        # graph's walk misses it (bench_ann: 1 appended vector in 100 at 1M), for 0.1 ms
        tail = np.arange(max(0, mem.n - RECENT), mem.n)
        at = np.union1d(at, tail[scope[tail]])
        if len(at) == 0:
            return []
        sims = cosines(mem.vectors, mem.inverse_norms, at, q)
        ids = mem.ids[at]
        order = np.lexsort((ids, -sims))[:limit]
        return [(int(ids[i]), float(sims[i])) for i in order]
