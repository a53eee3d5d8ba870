"""SQLite: consolidation runs, leases and the scheduler job store (implements :class:`memfold.memory.storage.base.RunStorage`)."""

from __future__ import annotations

from .db import SqliteDB


class SqliteRuns:
    """consolidation runs, leases and the scheduler job store, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c
