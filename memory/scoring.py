"""Read-time scores: importance x recency x access, vectorised with numpy (DESIGN.md §1 "score").

::

    score = importance * 0.5 ** (age / half_life) * (1 + access_weight * access_count)
    age   = max(0, now - written_at)

Invariant kept here: a score is a *pure* function of the record arrays, the time ``now`` and the
store policy (``half_life``, ``access_weight``); nothing here reads a clock or a database
(STYLE.md rule 6, after apscheduler's ``get_next_fire_time(previous, now)``). The same functions
rank :meth:`~memfold.memory.store.MemoryStore.read` and choose eviction victims, so "what the
agent sees first" and "what is forgotten first" can never disagree.

Age counts from ``written_at``, the record's last write (a restatement refreshes it); a read
raises ``access_count`` but never resets age. Ties are broken by record id: the newer record
(larger id) ranks first and is therefore evicted last.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .records import MemoryRecord

ArrayLike = Any  # a numpy array, a sequence of numbers, or a scalar (broadcast)


def recency(age: ArrayLike, half_life: ArrayLike) -> np.ndarray:
    """Exponential decay ``0.5 ** (max(age, 0) / half_life)``.

    :param age: ages in clock units (ticks or seconds), shape ``(n,)`` or scalar; negative ages
        (a record written after the scoring time) count as 0, so nothing scores fresher than fresh.
    :param half_life: in the same unit, > 0, scalar or shape ``(n,)``.
    :returns: float64 array of shape ``(n,)`` with values in (0, 1].
    """
    age = np.maximum(np.asarray(age, dtype=np.float64), 0.0)
    return np.exp2(-age / np.asarray(half_life, dtype=np.float64))


def score(
    importance: ArrayLike,
    written_at: ArrayLike,
    access_count: ArrayLike,
    now: float,
    *,
    half_life: ArrayLike,
    access_weight: ArrayLike,
) -> np.ndarray:
    """Scores of ``n`` records at time ``now``.

    :param importance: shape ``(n,)``, values in [0, 1].
    :param written_at: shape ``(n,)``, time of each record's last write (clock units).
    :param access_count: shape ``(n,)``, reads so far (non-negative integers).
    :param now: the scoring time (clock units).
    :param half_life: per store policy, scalar or ``(n,)`` (clock units, > 0).
    :param access_weight: per store policy, scalar or ``(n,)`` (>= 0, unitless).
    :returns: float64 array of shape ``(n,)``.
    """
    importance = np.asarray(importance, dtype=np.float64)
    written_at = np.asarray(written_at, dtype=np.float64)
    access = 1.0 + np.asarray(access_weight, dtype=np.float64) * np.asarray(access_count, dtype=np.float64)
    return importance * recency(now - written_at, half_life) * access


def rank(scores: ArrayLike, ids: ArrayLike, k: int | None = None) -> np.ndarray:
    """Positions of the top ``k`` entries, best first: score descending, then id descending.

    Deterministic on ties (the newer record, with the larger id, first). Uses a partial sort, so
    ranking the top 10 of 100,000 costs O(n), not O(n log n).

    :param scores: shape ``(n,)``.
    :param ids: shape ``(n,)`` integer record ids (unique).
    :param k: how many to return; ``None`` ranks all ``n``.
    :returns: int64 array of positions into ``scores``, length ``min(k, n)``.
    """
    scores = np.asarray(scores, dtype=np.float64)
    ids = np.asarray(ids, dtype=np.int64)
    n = scores.shape[0]
    if k is None or k >= n:
        return np.lexsort((-ids, -scores))[: n if k is None else k].astype(np.int64)
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    part = np.argpartition(-scores, k - 1)[:k]
    threshold = scores[part].min()
    candidates = np.flatnonzero(scores >= threshold)  # every entry that could be in the top k
    order = np.lexsort((-ids[candidates], -scores[candidates]))
    return candidates[order][:k].astype(np.int64)


def eviction_order(scores: ArrayLike, ids: ArrayLike, evictable: ArrayLike) -> np.ndarray:
    """Positions of evictable entries, first to evict first: the exact reverse of :func:`rank`.

    :param scores: shape ``(n,)``.
    :param ids: shape ``(n,)`` record ids.
    :param evictable: shape ``(n,)`` bool; False for pinned records and the one just written.
    :returns: int64 positions, lowest score first, ties: smaller (older) id first.
    """
    scores = np.asarray(scores, dtype=np.float64)
    ids = np.asarray(ids, dtype=np.int64)
    mask = np.asarray(evictable, dtype=bool)
    positions = np.flatnonzero(mask)
    order = np.lexsort((ids[positions], scores[positions]))
    return positions[order].astype(np.int64)


def score_records(records: Sequence[MemoryRecord], now: float, *, half_life: float, access_weight: float) -> np.ndarray:
    """:func:`score` over :class:`MemoryRecord` objects of one store; shape ``(len(records),)``."""
    return score(
        [r.importance for r in records],
        [r.written_at for r in records],
        [r.access_count for r in records],
        now,
        half_life=half_life,
        access_weight=access_weight,
    )


@dataclass(frozen=True)
class ScoredRecord:
    """One result of :meth:`~memfold.memory.store.MemoryStore.read`.

    ``record`` is the record as it was when read (before the read raised its ``access_count``),
    so ``score`` can be recomputed from it; ``at`` is the scoring time (clock units).
    """

    record: MemoryRecord
    score: float
    at: float

    def to_dict(self) -> dict[str, Any]:
        """The record's fields plus ``score`` and ``scored_at``."""
        d = self.record.to_dict()
        d["score"] = self.score
        d["scored_at"] = self.at
        return d
