"""SQLite: FTS5 indexes and BM25 ranking (implements :class:`memfold.memory.storage.base.FullTextStorage`)."""

from __future__ import annotations

from .db import SqliteDB


class SqliteFullText:
    """FTS5 indexes and BM25 ranking, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c
