"""SQLite: the protected channel (implements :class:`memfold.memory.storage.base.ProtectedStorage`)."""

from __future__ import annotations

import json

from .db import SqliteDB


class SqliteProtected:
    """the protected channel, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c

    # added by wt-cards
    def protected_labels(self, protected_id: int) -> list[str] | None:
        """The labels of a protected record, or ``None`` when there is none (for relabelling)."""
        row = self.c.one("SELECT labels FROM protected WHERE id = ?", [protected_id])
        return None if row is None else json.loads(row[0])

    def set_protected_labels(self, protected_id: int, labels: list[str]) -> None:
        """Replace the labels of a protected record (the caller validates them and logs the change)."""
        self.c.run("UPDATE protected SET labels = ? WHERE id = ?", [json.dumps(labels), protected_id])
