"""SQLite: typed memory records and store policies (implements :class:`memfold.memory.storage.base.RecordStorage`)."""

from __future__ import annotations

import json

from .db import SqliteDB


class SqliteRecords:
    """typed memory records and store policies, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c

    # added by wt-cards
    def record_labels(self, record_id: int) -> list[str] | None:
        """The labels of a memory record, or ``None`` when there is none (for relabelling)."""
        row = self.c.one("SELECT labels FROM records WHERE id = ?", [record_id])
        return None if row is None else json.loads(row[0])

    def set_record_labels(self, record_id: int, labels: list[str]) -> None:
        """Replace the labels of a memory record (the caller validates them and logs the change)."""
        self.c.run("UPDATE records SET labels = ? WHERE id = ?", [json.dumps(labels), record_id])
