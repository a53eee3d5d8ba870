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


# --- runs and leases ---------------------------------------------------------------------------


# --- erasure -----------------------------------------------------------------------------------


# --- meta --------------------------------------------------------------------------------------
