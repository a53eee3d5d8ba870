"""SQLite: conversations and turns (implements :class:`memfold.memory.storage.base.ArchiveStorage`)."""

from __future__ import annotations

from .db import SqliteDB


class SqliteArchive:
    """conversations and turns, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c
