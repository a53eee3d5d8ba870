"""Clocks: the only place memfold reads time (DESIGN.md §1 "clock"; STYLE.md rule 6).

Every time memfold stores is a *time value*, a float that compares correctly:

* :class:`LogicalClock` counts integer **ticks**; its time value is the tick.
* :class:`SystemClock` reads timezone-aware UTC; its time value is POSIX **seconds**.

A database remembers which kind of clock wrote it (see :mod:`memfold.memory.storage`), so
values from the two kinds are never mixed. Half-lives and other durations are in the clock's
unit: ticks for a logical clock, seconds for the system clock.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from datetime import datetime, timezone
from numbers import Real

from .errors import ClockError


def _shown(n: int) -> str:
    """An integer for an error message: its digits, or its size when it has too many to print
    (Python refuses ``str()`` of an int past 4,300 digits)."""
    return str(n) if n.bit_length() <= 256 else f"an integer of {n.bit_length()} bits"


def _finite_time(value: object, rule: str) -> float:
    """``value`` as a finite float time value. :raises ClockError: naming ``rule`` for a bool, a
    non-number, NaN or an infinity."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ClockError(f"{rule}, got {value!r}")
    try:
        v = float(value)
    except OverflowError:  # an int past the float range (10**400): as out of range as an infinity
        raise ClockError(f"a time must be finite, got {_shown(int(value))}, past any float") from None
    if math.isnan(v) or math.isinf(v):
        raise ClockError(f"a time must be finite, got {value!r}")
    return v


#: the largest logical tick memfold stores (floats hold every integer up to 2**53 exactly)
MAX_TICK = 2**53
#: the range of system-clock times that render as dates (years 1 to 9999), in POSIX seconds
MIN_SECONDS = datetime(1, 1, 2, tzinfo=timezone.utc).timestamp()
MAX_SECONDS = datetime(9999, 12, 30, tzinfo=timezone.utc).timestamp()


def parse_iso_time(text: str) -> datetime:
    """An aware datetime from ISO-8601 text with a UTC offset (``2026-01-31T12:00:00+00:00``, or
    ``Z``), the form ``memfold replay`` and ``--due`` read too.

    :raises ClockError: for text that is not ISO-8601, or that has no UTC offset (naive times are
        refused: they would be read in whatever zone the machine is in).
    """
    stripped = text.strip()
    try:
        when = datetime.fromisoformat(stripped[:-1] + "+00:00" if stripped[-1:] in "zZ" and stripped else stripped)
    except ValueError:
        raise ClockError(f"{text!r} is not an ISO-8601 time such as 2026-01-31T12:00:00+00:00") from None
    if when.tzinfo is None or when.utcoffset() is None:
        raise ClockError(f"{text!r} has no UTC offset: add one, e.g. {when.isoformat()}+00:00 (naive times are refused)")
    return when


class Clock(ABC):
    """An injected source of time. ``now()`` returns a time value (float) in the clock's unit."""

    #: ``"logical"`` or ``"system"``; stored in the database so kinds are never mixed.
    kind: str = ""
    #: the unit of durations on this clock: ``"ticks"`` or ``"seconds"``.
    unit: str = ""

    @abstractmethod
    def now(self) -> float:
        """The current time value."""

    @abstractmethod
    def coerce(self, value: object) -> float:
        """Turn a caller's time (int ticks, aware datetime, float) into a time value.

        :raises ClockError: for a naive datetime, a bool, NaN or a value of the wrong kind.
        """

    @abstractmethod
    def format(self, value: float | None) -> str:
        """Render a stored time value for people (``t=6`` or an ISO-8601 UTC string)."""


class LogicalClock(Clock):
    """Integer ticks that only move forward: deterministic time for tests and demos.

    :param start: the first tick (default 0).
    :raises ClockError: if ``start`` is not a non-negative integer.
    """

    kind = "logical"
    unit = "ticks"

    def __init__(self, start: int = 0) -> None:
        self._tick = self._check_tick(start, "start")

    @staticmethod
    def _check_tick(value: object, what: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ClockError(f"{what} must be an integer tick for a LogicalClock, got {value!r}")
        if value < 0:
            raise ClockError(f"{what} must be >= 0 ticks, got {_shown(value)}")
        if value > MAX_TICK:  # a tick no stored time can hold (the file would no longer open)
            raise ClockError(f"{what} must be at most 2**53 ticks, got {_shown(value)}")
        return value

    @property
    def tick(self) -> int:
        """The current tick (int)."""
        return self._tick

    def now(self) -> float:
        return float(self._tick)

    def advance(self, n: int = 1) -> int:
        """Move forward ``n`` ticks and return the new tick.

        :raises ClockError: if ``n`` is negative or not an integer (the clock never moves backwards).
        """
        if isinstance(n, bool) or not isinstance(n, int):
            raise ClockError(f"advance() takes an integer number of ticks, got {n!r}")
        if n < 0:
            raise ClockError(f"a LogicalClock never moves backwards: advance({_shown(n)}) refused")
        if self._tick + n > MAX_TICK:  # checked before moving: the clock stays where it was
            raise ClockError(f"advance({_shown(n)}) would take the clock past 2**53 ticks (now at tick {self._tick})")
        self._tick += n
        return self._tick

    def set(self, tick: int) -> int:
        """Jump forward to ``tick``. :raises ClockError: if ``tick`` is earlier than now."""
        tick = self._check_tick(tick, "tick")
        if tick < self._tick:
            raise ClockError(f"a LogicalClock never moves backwards: set({tick}) is before tick {self._tick}")
        self._tick = tick
        return self._tick

    def coerce(self, value: object) -> float:
        if isinstance(value, datetime):
            raise ClockError("this database uses a LogicalClock: pass times as integer ticks, not datetimes")
        if isinstance(value, str):
            raise ClockError(f"a time on a LogicalClock must be a number of ticks, not text ({value!r}): "
                             "this database uses integer ticks")
        v = _finite_time(value, "a time on a LogicalClock must be a number of ticks")
        if not 0 <= v <= MAX_TICK:
            raise ClockError(f"a time on a LogicalClock is a tick from 0 to 2**53, got {value!r}")
        return v

    def format(self, value: float | None) -> str:
        if value is None:
            return "-"
        return f"t={int(value)}" if float(value).is_integer() else f"t={value:g}"


class SystemClock(Clock):
    """Real time, timezone-aware UTC. Time values are POSIX seconds (float)."""

    kind = "system"
    unit = "seconds"

    def now(self) -> float:
        return datetime.now(timezone.utc).timestamp()

    def now_datetime(self) -> datetime:
        """The current time as an aware UTC datetime."""
        return datetime.now(timezone.utc)

    def coerce(self, value: object) -> float:
        if isinstance(value, str):  # ISO-8601 text, as transcripts carry it (issue 20, point 4)
            value = parse_iso_time(value)
        if isinstance(value, datetime):
            if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
                raise ClockError(
                    f"naive datetime {value.isoformat()} refused: pass a timezone-aware datetime "
                    "(for example datetime(..., tzinfo=timezone.utc))"
                )
            return value.timestamp()
        v = _finite_time(value, "a time on the SystemClock must be an aware datetime, ISO-8601 text with a "
                                "UTC offset or POSIX seconds")
        if not MIN_SECONDS <= v <= MAX_SECONDS:
            raise ClockError(f"time {value!r} is out of range: POSIX seconds must fall in the years 1 to 9999 "
                             f"({MIN_SECONDS:.0f} to {MAX_SECONDS:.0f})")
        return v

    def format(self, value: float | None) -> str:
        if value is None:
            return "-"
        return datetime.fromtimestamp(value, timezone.utc).isoformat(timespec="seconds")


class ReplayClock(SystemClock):
    """A system-kind clock that stands still until it is set: replays historical turns at their
    own times (issue 9, ``memfold replay``).

    Time values are POSIX seconds like :class:`SystemClock` (``kind = "system"``), so a database
    written by a replay opens later with the real system clock and keeps its times. ``now()`` is
    the last time given to :meth:`set`; the replay runner sets it to each turn's ``created_at``
    before appending, so archive times, record write times, scoring ages and consolidation
    horizons all follow the history being replayed rather than the wall clock.

    :param start: the first time (aware datetime or POSIX seconds).
    :raises ClockError: for a naive datetime or a non-finite number.
    """

    def __init__(self, start: object) -> None:
        self._now = self.coerce(start)

    def now(self) -> float:
        return self._now

    def now_datetime(self) -> datetime:
        return datetime.fromtimestamp(self._now, timezone.utc)

    def set(self, value: object) -> float:
        """Move to ``value`` (aware datetime or POSIX seconds) and return it as a time value.

        :raises ClockError: if ``value`` is earlier than now (time never moves backwards, so
            records written during a replay keep their order) or is not a valid time.
        """
        v = self.coerce(value)
        if v < self._now:
            raise ClockError(
                f"a ReplayClock never moves backwards: {self.format(v)} is before {self.format(self._now)}; "
                "replay turns in time order"
            )
        self._now = v
        return v


def clock_for_kind(kind: str) -> Clock:
    """A fresh clock of the given kind (``"logical"`` or ``"system"``).

    :raises ClockError: for an unknown kind.
    """
    if kind == "logical":
        return LogicalClock()
    if kind == "system":
        return SystemClock()
    raise ClockError(f"unknown clock kind {kind!r}: use 'logical' or 'system'")
