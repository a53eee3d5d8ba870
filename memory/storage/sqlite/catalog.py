"""SQLite: the per-conversation catalog (implements :class:`memfold.memory.storage.base.CatalogStorage`)."""

from __future__ import annotations

from .db import SqliteDB


class SqliteCatalog:
    """the per-conversation catalog, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c
