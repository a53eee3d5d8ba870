"""SQLite: the append-only event log (implements :class:`memfold.memory.storage.base.EventStorage`)."""

from __future__ import annotations

from .db import SqliteDB


class SqliteEvents:
    """the append-only event log, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c
