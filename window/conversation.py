"""A conversation: a channel, ticket or thread whose turns are archived verbatim.

This module is the per-conversation handle that the facade hands out. Appending stores the turn
in the lossless archive in one transaction (DESIGN.md §4.1, §4.2).
"""

from __future__ import annotations

import io
import os
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from ..memory.errors import InvalidInput
from .archive import Archive, Turn
from .transcripts import read_jsonl, write_jsonl

if TYPE_CHECKING:  # pragma: no cover
    from .. import MemFold


class Conversation:
    """One conversation of a :class:`~memfold.MemFold`.

    :param memfold: the facade that owns the database and the injected components.
    :param conversation_id: the conversation's id.
    """

    def __init__(self, memfold: "MemFold", conversation_id: str) -> None:
        self.memfold = memfold
        self.archive: Archive = memfold.archive
        self.id = conversation_id
        row = self.archive.conversation_row(conversation_id)
        self.namespace: str = row["namespace"]
        self.family_id: str = row["family_id"]
        self.parent_id: str | None = row["parent_id"]

    def __repr__(self) -> str:
        return f"Conversation({self.id!r}, namespace={self.namespace!r})"

    def append(self, turn: Mapping[str, Any]) -> int:
        """Archive one turn verbatim and return its id.

        :param turn: an OpenAI-shaped message, e.g. ``{"role": "user", "content": "hi"}``; may also
            carry ``created_at`` (ticks or an aware datetime), ``metadata`` and ``labels``.
        :raises InvalidInput: for a malformed turn (nothing is written).
        """
        return self.archive.append_many(self.id, [turn])[0]

    def append_many(self, turns: Iterable[Mapping[str, Any]]) -> list[int]:
        """Archive several turns in one transaction (all or nothing); returns their ids."""
        return self.archive.append_many(self.id, list(turns))

    def history(self, *, after_seq: int = 0, limit: int | None = None) -> list[Turn]:
        """Every turn in append order, including a fork's inherited turns."""
        return self.archive.history(self.id, after_seq=after_seq, limit=limit)

    def fork(self, new_id: str) -> "Conversation":
        """A new conversation that shares this one's turns so far (by pointer, not copy)."""
        self.archive.create_conversation(new_id, self.namespace, parent_id=self.id)
        return Conversation(self.memfold, new_id)

    def import_jsonl(self, path: str | os.PathLike, *, progress: Callable[[int, int], None] | None = None) -> list[int]:
        """Append every message of a JSONL transcript, all or nothing.

        :param progress: called as ``progress(done, total)`` while writing.

        :raises InvalidInput: ``"<path> line N: ..."`` for the first bad line; nothing is written.
        """
        messages = read_jsonl(path)
        normalized = []
        for msg in messages:
            line = msg.pop("__line__")
            normalized.append((line, msg))
        # validate each line with its number, then write once
        from .archive import normalize_turn

        for line, msg in normalized:
            normalize_turn(msg, self.archive.clock, where=f"{path} line {line}: ")
        total = len(normalized)
        report = (lambda done: progress(done, total)) if progress else None
        return self.archive.append_many(self.id, [m for _, m in normalized], progress=report)

    def export_jsonl(self, out: Any = None, *, with_times: bool = False) -> str | int:
        """Write the history as JSONL chat messages to ``out`` (a text stream), or return it as a
        string when ``out`` is None."""
        if out is None:
            buf = io.StringIO()
            write_jsonl(self.history(), buf, with_times=with_times)
            return buf.getvalue()
        return write_jsonl(self.history(), out, with_times=with_times)
