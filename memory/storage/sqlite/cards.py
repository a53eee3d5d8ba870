"""SQLite: summary cards and their cover lists (implements :class:`memfold.memory.storage.base.CardStorage`)."""

from __future__ import annotations

from .db import SqliteDB


class SqliteCards:
    """summary cards and their cover lists, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c
