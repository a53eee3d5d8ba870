"""SQLite: stored embeddings (implements :class:`memfold.memory.storage.base.VectorStorage`)."""

from __future__ import annotations

from .db import SqliteDB


class SqliteVectors:
    """stored embeddings, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c
