"""The dataclasses the storage Protocols return (and engines pass back in).

They live here, at the bottom layer, so every backend can build them without importing the
engines above; each concept module re-exports its own (``window/archive.py`` re-exports
:class:`Turn`, ``memory/events.py`` :class:`Event`, ...), so users keep importing them from there.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
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
@dataclass(frozen=True)
class SearchScope:
    """What a search may see, applied by storage *before* ranking (DESIGN.md §4.9).

    :ivar lineage: ``[(conversation_id, last_seq_included_or_None), ...]``: only turns (and cards,
        by their ``last_seq``) these conversations see; ``None`` for no conversation filter.
    :ivar namespace: only this namespace (records; turns and cards via their conversation).
    :ivar type: / :ivar key: only records of this type / slot.
    :ivar since: / :ivar until: inclusive time range (turn ``created_at``, record ``written_at``,
        card ``end_at``).
    :ivar reader_labels: the labels the reader holds (sorted), or ``None`` to skip the label check.
    """

    lineage: tuple[tuple[str, int | None], ...] | None = None
    namespace: str | None = None
    type: str | None = None
    key: str | None = None
    since: float | None = None
    until: float | None = None
    reader_labels: tuple[str, ...] | None = None


@dataclass(frozen=True)
class SearchItem:
    """A searchable item as storage returns it (the ranking adds its scores on top).

    :ivar kind: ``"turn"``, ``"card"`` or ``"record"``.
    :ivar time: turn ``created_at``, record ``written_at``, card ``end_at`` (clock units).
    """

    kind: str
    id: Any
    text: str
    conversation_id: str | None = None
    namespace: str | None = None
    type: str | None = None
    key: str | None = None
    time: float | None = None
    labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class TextMatch:
    """One full-text match of a turn or card: its BM25 ``score`` (lower is better, as FTS5 ranks;
    ``None`` when not ranked), a ``snippet`` with matches in ``[...]`` (``None`` when the item does
    not match), its seq span, card depth (0 for a turn), the turn's role and the item's labels."""

    kind: str
    id: int
    score: float | None
    snippet: str | None
    first_seq: int
    last_seq: int
    depth: int
    role: str | None
    labels: tuple[str, ...] = ()



# --- runs and leases ---------------------------------------------------------------------------


# --- erasure -----------------------------------------------------------------------------------


# --- meta --------------------------------------------------------------------------------------
