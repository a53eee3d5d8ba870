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
def card_header(card_id: int) -> str:
    """``[c<id>]``: the tag before a card's text in a compiled context."""
    return f"[c{card_id}]"


@dataclass(frozen=True)
class Card:
    """One summary card. ``tokens`` counts ``text``; ``source_tokens`` counts what it covers
    (turn tokens for depth 1, child card text tokens deeper). ``covers`` lists child refs in order
    (``"t12"`` turns or ``"c3"`` cards). ``first_seq``/``last_seq`` give the span in the
    conversation's lineage; ``start_at``/``end_at`` the time range (clock units)."""

    id: int
    family_id: str
    conversation_id: str
    depth: int
    text: str
    tokens: int
    source_tokens: int
    first_turn_id: int
    last_turn_id: int
    first_seq: int
    last_seq: int
    start_at: float
    end_at: float
    labels: tuple[str, ...]
    summarizer: str
    created_at: float
    stale: bool = False
    covers: tuple[str, ...] = ()

    @property
    def ref(self) -> str:
        """``"c<id>"``."""
        return f"c{self.id}"

    def header(self) -> str:
        """The short tag shown before the card's text in a compiled context: ``[c12]`` (its span
        and time range are one ``describe`` away; the tag stays one word for small budgets)."""
        return card_header(self.id)

    def render(self) -> str:
        """The card as the compiled context shows it: header, then text."""
        return f"{self.header()} {self.text}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (``ref`` included)."""
        d = dict(self.__dict__)
        d["labels"] = list(self.labels)
        d["covers"] = list(self.covers)
        d["ref"] = self.ref
        return d


@dataclass(frozen=True)
class CatalogItem:
    """One context item: ``kind`` is ``"turn"`` or ``"card"``; ``item_id`` the turn or card id;
    ``first_seq``..``last_seq`` its span; ``depth`` 0 for a turn; ``tokens`` the turn's tokens or
    the rendered card's tokens; ``role`` and ``has_tool_calls`` (turns) keep tool groups whole."""

    kind: str
    item_id: int
    first_seq: int
    last_seq: int
    depth: int
    tokens: int
    role: str | None = None
    has_tool_calls: bool = False

    @property
    def ref(self) -> str:
        """``"t<id>"`` or ``"c<id>"``."""
        return ("t" if self.kind == "turn" else "c") + str(self.item_id)

    def to_dict(self) -> dict:
        """A JSON-ready dict (with ``ref``)."""
        return {**self.__dict__, "ref": self.ref}



# --- records -----------------------------------------------------------------------------------


# --- protected channel -------------------------------------------------------------------------


# --- search (full-text and vectors) ------------------------------------------------------------


# --- runs and leases ---------------------------------------------------------------------------


# --- erasure -----------------------------------------------------------------------------------


# --- meta --------------------------------------------------------------------------------------
