"""SQLite: conversations and turns (implements :class:`memfold.memory.storage.base.ArchiveStorage`)."""

from __future__ import annotations

import json

from .db import SqliteDB


class SqliteArchive:
    """conversations and turns, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c

    # added by wt-cards
    def turn_labels(self, turn_id: int) -> list[str] | None:
        """The labels of a turn, or ``None`` when there is none (for relabelling)."""
        row = self.c.one("SELECT labels FROM turns WHERE id = ?", [turn_id])
        return None if row is None else json.loads(row[0])

    def set_turn_labels(self, turn_id: int, labels: list[str]) -> None:
        """Replace the labels of a turn (the caller validates them and logs the change)."""
        self.c.run("UPDATE turns SET labels = ? WHERE id = ?", [json.dumps(labels), turn_id])
