"""SQLite: conversations and turns (implements :class:`memfold.memory.storage.base.ArchiveStorage`)."""

from __future__ import annotations

from .db import SqliteDB


class SqliteArchive:
    """conversations and turns, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c

    # added by wt-runs (replay report reads)
    def count_turns(self) -> int:
        """How many turns the archive holds (every conversation, erased ones included)."""
        return self.c.value("SELECT COUNT(*) FROM turns", default=0)

    def count_turns_labelled(self, label: str) -> int:
        """How many turns carry ``label``."""
        return self.c.value("SELECT COUNT(*) FROM turns t, json_each(t.labels) WHERE json_each.value = ?",
                            [label], default=0)

    def total_turn_tokens(self) -> int:
        """The tokens of every archived turn, summed."""
        return self.c.value("SELECT COALESCE(SUM(tokens), 0) FROM turns", default=0)

    def count_summarizer_failures(self) -> int:
        """How many summarizer failures are recorded (every conversation)."""
        return self.c.value("SELECT COUNT(*) FROM summarizer_failures", default=0)

    def turn_seqs(self, conversation_id: str) -> dict[int, int]:
        """``{turn id: seq}`` of the turns appended to this conversation itself (not its lineage)."""
        return {tid: seq for tid, seq in self.c.all("SELECT id, seq FROM turns WHERE conversation_id = ?",
                                                    [conversation_id])}
