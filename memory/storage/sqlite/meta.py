"""SQLite: file-wide settings (implements :class:`memfold.memory.storage.base.MetaStorage`)."""

from __future__ import annotations

from .db import SqliteDB


class SqliteMeta:
    """file-wide settings, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c
