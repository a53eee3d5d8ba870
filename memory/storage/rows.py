"""The dataclasses the storage Protocols return (and engines pass back in).

They live here, at the bottom layer, so every backend can build them without importing the
engines above; each concept module re-exports its own (``window/archive.py`` re-exports
:class:`Turn`, ``memory/events.py`` :class:`Event`, ...), so users keep importing them from there.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


# --- events ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Event:
    """One row of the audit log. ``at`` is a time value in the clock's unit."""

    id: int
    at: float
    kind: str
    namespace: str | None
    subject: str
    record_id: int | None
    cause: str
    details: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dict(self.__dict__)


# --- archive (turns, conversations) ------------------------------------------------------------


# --- cards and catalog -------------------------------------------------------------------------


# --- records -----------------------------------------------------------------------------------


# --- protected channel -------------------------------------------------------------------------


# --- search (full-text and vectors) ------------------------------------------------------------


# --- runs and leases ---------------------------------------------------------------------------
@dataclass
class ConsolidationRun:
    """What one consolidation pass did (or, for a dry run, would do).

    Times are clock time values. ``id`` is None for a dry run (nothing is recorded).
    ``status``: ``running`` (in progress, or the process died), ``ok``, ``failed`` (an extractor
    or write error stopped it; ``errors`` says why), ``stopped`` (asked to stop between batches).
    ``proposals`` lists what was (or would be) written, in order; ``written`` the record ids the
    write path returned; ``consumed`` the sources marked consumed. A run read back from storage
    has the three lists empty (they are not stored).
    """

    id: int | None
    namespace: str
    extractor: str
    trigger: str = "manual"
    status: str = "running"
    started_at: float = 0.0
    finished_at: float | None = None
    batches: int = 0
    episodes_consumed: int = 0
    turns_consumed: int = 0
    facts_written: int = 0
    rules_written: int = 0
    errors: list[str] = field(default_factory=list)
    dry_run: bool = False
    proposals: list[Any] = field(default_factory=list)
    written: list[int] = field(default_factory=list)
    consumed: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        d = dict(self.__dict__)
        d["proposals"] = [p.to_dict() if hasattr(p, "to_dict") else p for p in self.proposals]
        return d


@dataclass(frozen=True)
class PendingEpisode:
    """An active episodic record waiting for consolidation (``metadata`` parsed)."""

    id: int
    content: str
    metadata: dict[str, Any]
    event_time: float | None
    created_at: float


@dataclass(frozen=True)
class PendingTurn:
    """An archived turn past a namespace's consolidation cursor (``labels``/``metadata`` parsed)."""

    id: int
    role: str
    content: str
    created_at: float
    labels: list[str]
    metadata: dict[str, Any]


@dataclass(frozen=True)
class LeaseRow:
    """One lease as stored; times in POSIX seconds."""

    name: str
    fire_time: float
    holder: str
    acquired_at: float
    expires_at: float
    finished_at: float | None
    outcome: str | None



# --- erasure -----------------------------------------------------------------------------------


# --- meta --------------------------------------------------------------------------------------
