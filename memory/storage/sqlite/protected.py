"""SQLite: the protected channel (implements :class:`memfold.memory.storage.base.ProtectedStorage`)."""

from __future__ import annotations

from .db import SqliteDB


class SqliteProtected:
    """the protected channel, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c

    # added by wt-runs (replay report reads)
    def count_all(self) -> int:
        """How many protected records exist (every namespace, every state)."""
        return self.c.value("SELECT COUNT(*) FROM protected", default=0)

    def all_texts(self) -> list[str]:
        """The text of every protected record (every namespace, every state)."""
        return [r[0] for r in self.c.all("SELECT text FROM protected")]
