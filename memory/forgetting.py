"""Forgetting by policy: store policies, supersession, refresh and eviction decisions.

Invariant kept here (DESIGN.md §4.7): forgetting never deletes bytes and never guesses.

* **Supersession** happens only inside one slot, ``(namespace, type, key)``: a record with another
  key, or with no key, never retires anything however similar its text. Writing a new value into
  a slot retires the slot's active record and links the two both ways.
* **Refresh**: restating the slot's current value (same slot, :attr:`MemoryStore.same_meaning`
  true) bumps the existing record's ``written_at`` instead of adding a second active record.
* **Event time** orders statements when both carry one; ingestion order breaks ties. A statement
  older than the slot's current value is stored directly as ``retired``, linked into the slot's
  history at its place in event-time order.
* **Eviction**: when a write takes a ``(namespace, type)`` store over its capacity, the lowest
  scoring active record that is neither pinned nor the one just written is evicted, scored exactly
  as :meth:`~memfold.memory.store.MemoryStore.read` scores it (:mod:`memfold.memory.scoring`).

This module decides; :mod:`memfold.memory.store` applies the decisions through the records family
of storage (:class:`~memfold.memory.storage.base.RecordStorage`) inside the write's transaction, so
a failing write changes nothing.
"""

from __future__ import annotations

import enum
import math
import re
import unicodedata
from dataclasses import asdict, dataclass, field, replace
from numbers import Real
from typing import Any, Callable

import numpy as np

from .errors import InvalidInput
from .validation import MAX_ID
from .records import MemoryRecord
from .scoring import eviction_order

#: default access weight for every store (DESIGN.md §1a)
DEFAULT_ACCESS_WEIGHT = 0.1
#: default half-life on a logical clock, in ticks, for every type (DESIGN.md §1a: the seed trace)
DEFAULT_HALF_LIFE_TICKS = 4.0
_DAY = 86_400.0
#: default half-life on the system clock, in seconds, per type: working memory fades within days,
#: episodes within months, facts and rules last much longer.
DEFAULT_HALF_LIFE_SECONDS = {
    "working": 1 * _DAY,
    "episodic": 30 * _DAY,
    "semantic": 180 * _DAY,
    "procedural": 365 * _DAY,
}

#: a function deciding whether two texts of the same slot state the same value
SameMeaning = Callable[[str, str], bool]


def default_half_life(type: str, unit: str) -> float:
    """The default half-life of a store of ``type`` on a clock measuring durations in ``unit``.

    :param unit: ``"ticks"`` (logical clock) or ``"seconds"`` (system clock).
    :returns: :data:`DEFAULT_HALF_LIFE_TICKS` for ticks, :data:`DEFAULT_HALF_LIFE_SECONDS` per
        type for seconds.
    """
    if unit == "seconds":
        return DEFAULT_HALF_LIFE_SECONDS[type]
    return DEFAULT_HALF_LIFE_TICKS


def _check_positive_number(value: object, what: str, *, allow_zero: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InvalidInput(f"{what} must be a number, got {value!r}")
    try:
        v = float(value)
    except OverflowError:  # an int past the float range: as unusable as an infinity
        raise InvalidInput(f"{what} must be finite, got an integer of {int(value).bit_length()} bits") from None
    if math.isnan(v) or math.isinf(v):
        raise InvalidInput(f"{what} must be finite, got {value!r}")
    if v < 0 or (v == 0 and not allow_zero):
        raise InvalidInput(f"{what} must be {'>= 0' if allow_zero else '> 0'}, got {value!r}")
    return v


@dataclass(frozen=True)
class StorePolicy:
    """How one ``(namespace, type)`` store forgets.

    :param capacity: most active records the store keeps (``None``: unbounded); an int >= 1.
    :param half_life: score half-life in clock units (ticks or seconds); ``None`` uses
        :func:`default_half_life` for the store's type and the database's clock.
    :param access_weight: weight of each read in the score's access factor, >= 0.
    :raises InvalidInput: for a capacity below 1, a non-positive half-life, a negative access
        weight, NaN or a non-number.
    """

    capacity: int | None = None
    half_life: float | None = None
    access_weight: float = DEFAULT_ACCESS_WEIGHT

    def __post_init__(self) -> None:
        if self.capacity is not None:
            if isinstance(self.capacity, bool) or not isinstance(self.capacity, int):
                raise InvalidInput(f"capacity must be a whole number of records or None, got {self.capacity!r}")
            if self.capacity < 1:
                raise InvalidInput(f"capacity must be at least 1 record (or None for unbounded), got {self.capacity}")
            if self.capacity > MAX_ID:
                raise InvalidInput(f"capacity {self.capacity} is more than SQLite can count ({MAX_ID}); use None for unbounded")
        if self.half_life is not None:
            object.__setattr__(self, "half_life", _check_positive_number(self.half_life, "half_life", allow_zero=False))
        object.__setattr__(
            self, "access_weight", _check_positive_number(self.access_weight, "access_weight", allow_zero=True)
        )

    def effective_half_life(self, type: str, unit: str) -> float:
        """The half-life in force: the policy's own, or the default for ``type`` on a ``unit`` clock."""
        return self.half_life if self.half_life is not None else default_half_life(type, unit)

    def updated(self, **changes: Any) -> "StorePolicy":
        """A copy with ``changes`` applied (validated again)."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


_SPACE = re.compile(r"\s+")
_TRAILING_PUNCTUATION = ".!?;:,…。"


def normalise_text(text: str) -> str:
    """Text as compared for a restatement: NFKC, casefolded, whitespace collapsed, trailing
    punctuation stripped. ``"Dana prefers  EMAIL contact."`` -> ``"dana prefers email contact"``."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _SPACE.sub(" ", text).strip()
    return text.rstrip(_TRAILING_PUNCTUATION + " ").strip()


def same_normalised_text(existing: str, new: str) -> bool:
    """The default :attr:`MemoryStore.same_meaning`: equal after :func:`normalise_text`.

    Only ever asked about two texts of the *same* slot (namespace, type, key).
    """
    return normalise_text(existing) == normalise_text(new)


class WriteAction(str, enum.Enum):
    """What a write did to its slot (see :func:`decide_write`)."""

    #: a new active record; nothing in its slot was active (or it has no key)
    INSERT = "insert"
    #: the slot's active record restated: its written_at was refreshed, no new row
    REFRESH = "refresh"
    #: a new active record that retired the slot's previous one
    SUPERSEDE = "supersede"
    #: an older statement (by event time) stored directly as retired, superseded by the current one
    STORE_RETIRED = "store_retired"


def is_older_statement(new_event_time: float | None, current_event_time: float | None) -> bool:
    """True when a new statement is older than the slot's current one.

    Event time orders statements only when both carry one; otherwise, and on equal event times,
    ingestion order decides and the newer write wins (issue 3, point 3).
    """
    return new_event_time is not None and current_event_time is not None and new_event_time < current_event_time


def decide_write(
    current: MemoryRecord | None, content: str, event_time: float | None, same_meaning: SameMeaning
) -> WriteAction:
    """Decide what a write into a slot does.

    :param current: the slot's active record, or ``None`` (no key, or nothing active in the slot).
    :param content: the new statement's text.
    :param event_time: the new statement's event time, if any (clock units).
    :param same_meaning: the restatement test, called only as ``same_meaning(current.content, content)``
        for a record of the same slot.
    :returns: the :class:`WriteAction`. A restatement refreshes even when its event time is older:
        the value is unchanged either way.
    """
    if current is None:
        return WriteAction.INSERT
    if same_meaning(current.content, content):
        return WriteAction.REFRESH
    if is_older_statement(event_time, current.event_time):
        return WriteAction.STORE_RETIRED
    return WriteAction.SUPERSEDE


def choose_evictions(
    ids: np.ndarray, scores: np.ndarray, pinned: np.ndarray, *, protect: int | None, excess: int
) -> list[int] | None:
    """Which active records of a store to evict so that ``excess`` fewer remain.

    :param ids: shape ``(n,)`` ids of the store's active records.
    :param scores: shape ``(n,)`` their scores now (:func:`memfold.memory.scoring.score`).
    :param pinned: shape ``(n,)`` bool.
    :param protect: the id just written (or reverted), never evicted by its own write.
    :param excess: how many must go (``active - capacity``).
    :returns: ids to evict, lowest score first (ties: older id first); ``[]`` when
        ``excess <= 0``; ``None`` when fewer than ``excess`` records may be evicted.
    """
    if excess <= 0:
        return []
    ids = np.asarray(ids, dtype=np.int64)
    evictable = ~np.asarray(pinned, dtype=bool)
    if protect is not None:
        evictable &= ids != protect
    order = eviction_order(scores, ids, evictable)
    if order.shape[0] < excess:
        return None
    return [int(i) for i in ids[order[:excess]]]


@dataclass(frozen=True)
class WriteOutcome:
    """What :meth:`~memfold.memory.store.MemoryStore.write_outcome` did.

    :param record: the record the write produced or refreshed, as stored afterwards.
    :param action: a :class:`WriteAction`.
    :param retired: ids retired by this write (the slot's previous value).
    :param evicted: ids evicted to keep the store within capacity.
    """

    record: MemoryRecord
    action: WriteAction
    retired: tuple[int, ...] = field(default_factory=tuple)
    evicted: tuple[int, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"record": self.record.to_dict(), "action": self.action.value, "retired": list(self.retired),
                "evicted": list(self.evicted)}


@dataclass(frozen=True)
class PolicyChange:
    """What :meth:`~memfold.memory.store.MemoryStore.set_policy` did: the policy now in force and
    the ids evicted to fit a lowered capacity."""

    namespace: str
    type: str
    policy: StorePolicy
    evicted: tuple[int, ...] = field(default_factory=tuple)
    #: the half-life in force (the policy's, or the default for the type and clock), clock units
    effective_half_life: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"namespace": self.namespace, "type": self.type, **self.policy.to_dict(),
                "effective_half_life": self.effective_half_life, "evicted": list(self.evicted)}


@dataclass(frozen=True)
class RevertOutcome:
    """What :meth:`memfold.MemFold.revert` did: the reinstated record and what that did to others.

    :param record: the reverted record, active again (its slot's current value), as stored afterwards.
    :param retired: ids retired because the reverted record holds their slot again.
    :param evicted: ids evicted because the store was over capacity after the revert.
    """

    record: MemoryRecord
    retired: tuple[int, ...] = field(default_factory=tuple)
    evicted: tuple[int, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the record's own fields plus ``retired`` and ``evicted`` id lists
        (the shape ``memfold revert --json`` prints)."""
        return {**self.record.to_dict(), "retired": list(self.retired), "evicted": list(self.evicted)}
