"""SQLite: scrubbing erased content from every table and index (implements :class:`memfold.memory.storage.base.ErasureStorage`)."""

from __future__ import annotations

from .db import SqliteDB


class SqliteErasure:
    """scrubbing erased content from every table and index, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c
