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
@dataclass(frozen=True)
class Turn:
    """One archived message. ``seq`` is its 1-based position in its conversation's lineage;
    ``created_at`` is a time value (clock units); ``tokens`` is counted by the injected counter."""

    id: int
    conversation_id: str
    family_id: str
    seq: int
    role: str
    content: str
    name: str | None = None
    tool_call_id: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: float = 0.0
    tokens: int = 0
    sha256: str = ""
    labels: tuple[str, ...] = ()
    erased: bool = False

    def message(self) -> dict[str, Any]:
        """The turn in the OpenAI chat-messages shape (role, content, name, tool_calls, tool_call_id)."""
        msg: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.name is not None:
            msg["name"] = self.name
        if self.tool_calls is not None:
            msg["tool_calls"] = self.tool_calls
        if self.tool_call_id is not None:
            msg["tool_call_id"] = self.tool_call_id
        return msg

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        d = dict(self.__dict__)
        d["labels"] = list(self.labels)
        return d


@dataclass(frozen=True)
class ConversationRow:
    """One stored conversation: its namespace, family and fork point (``parent_id`` and the last
    parent seq it inherits, ``fork_after_seq``; both ``None`` for a family's root)."""

    id: str
    namespace: str
    family_id: str
    parent_id: str | None
    fork_after_seq: int | None
    created_at: float
    labels: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (``labels`` as a list)."""
        d = dict(self.__dict__)
        d["labels"] = list(self.labels)
        return d


@dataclass(frozen=True)
class SummarizerFailure:
    """One recorded summarizer failure: the seq range it could not fold stayed in the window."""

    id: int
    conversation_id: str
    at: float
    summarizer: str
    depth: int
    first_seq: int
    last_seq: int
    source_tokens: int
    error: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dict(self.__dict__)



# --- cards and catalog -------------------------------------------------------------------------


# --- records -----------------------------------------------------------------------------------


# --- protected channel -------------------------------------------------------------------------


# --- search (full-text and vectors) ------------------------------------------------------------


# --- runs and leases ---------------------------------------------------------------------------


# --- erasure -----------------------------------------------------------------------------------


# --- meta --------------------------------------------------------------------------------------
