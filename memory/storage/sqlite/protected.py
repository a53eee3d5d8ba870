"""SQLite: the protected channel (implements :class:`memfold.memory.storage.base.ProtectedStorage`)."""

from __future__ import annotations

from .db import SqliteDB


class SqliteProtected:
    """the protected channel, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c
