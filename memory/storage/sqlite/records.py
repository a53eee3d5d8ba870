"""SQLite: typed memory records and store policies (implements :class:`memfold.memory.storage.base.RecordStorage`)."""

from __future__ import annotations

from .db import SqliteDB


class SqliteRecords:
    """typed memory records and store policies, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c
