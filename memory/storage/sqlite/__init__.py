"""The embedded backend: one SQLite file (or memory) through sqlite-utils.

It owns every SQL statement and migration memfold runs on SQLite: one module per table family
(``archive.py``, ``cards.py``, ...), each a class over the shared :class:`~.db.SqliteDB`
(connection, lock, driver-error translation), wired together by :class:`SqliteStorage`.
"""

from __future__ import annotations

import contextlib
from typing import Sequence
from typing import Iterator

import sqlite_utils

from . import connection
from .archive import SqliteArchive
from .cards import SqliteCards
from .catalog import SqliteCatalog
from .db import SqliteDB
from .erasure import SqliteErasure
from .events import SqliteEvents
from .folds import SqliteFolds
from .fulltext import SqliteFullText
from .meta import SqliteMeta
from .protected import SqliteProtected
from .records import SqliteRecords
from .runs import SqliteRuns
from .vectors import SqliteVectors


class SqliteStorage:
    """Every table family on one migrated ``sqlite_utils.Database`` (see :mod:`.db` for threads)."""

    kind = "sqlite"

    def __init__(self, db: sqlite_utils.Database, vector_index: str = "exact") -> None:
        self.c = SqliteDB(db)
        self.db = db  #: the ``sqlite_utils.Database``, for tests and tools that inspect the file
        self.archive = SqliteArchive(self.c)
        self.cards = SqliteCards(self.c)
        self.catalog = SqliteCatalog(self.c)
        self.records = SqliteRecords(self.c)
        self.protected = SqliteProtected(self.c)
        self.fulltext = SqliteFullText(self.c)
        self.vectors = SqliteVectors(self.c, vector_index)  # "ann": an HNSW graph for large scopes
        self.runs = SqliteRuns(self.c)
        self.events = SqliteEvents(self.c)
        self.erasure = SqliteErasure(self.c)
        self.meta = SqliteMeta(self.c)
        self.folds = SqliteFolds(self.c)

    def transaction(self, scope: Sequence[str] | None = None) -> contextlib.AbstractContextManager[None]:
        """One atomic write; nested calls join the outer one (a savepoint). ``scope``: what it
        writes (:func:`~memfold.memory.storage.base.write_scope`), ignored: SQLite has one
        writer at a time (``BEGIN IMMEDIATE``) whatever is written."""
        return self.c.transaction()

    def optional_transaction(self) -> contextlib.AbstractContextManager[None]:
        """A :meth:`transaction` a reader can go without: it waits at most
        :data:`~.connection.TOUCH_WAIT_MS` for another connection's write lock, then raises
        :class:`~memfold.memory.errors.WriteLockBusy` (nothing written)."""
        return self.c.transaction(wait_ms=connection.TOUCH_WAIT_MS)

    def snapshot(self) -> contextlib.AbstractContextManager[None]:
        """One consistent read of committed state, taking no write lock."""
        return self.c.snapshot()

    def settled(self) -> contextlib.AbstractContextManager[None]:
        """A :meth:`snapshot`: one writer at a time, so ids commit in the order they are handed out."""
        return self.c.snapshot()

    def writers_held(self) -> contextlib.AbstractContextManager[None]:
        """The connection's lock, held for the block: no other thread of this process runs a
        statement on this storage meanwhile (re-entrant: this thread's own writes go on)."""
        return self.c.lock

    @property
    def in_transaction(self) -> bool:
        """True while the calling thread is inside a :meth:`transaction` or :meth:`snapshot` of
        this storage (another thread's transaction on the shared connection does not count)."""
        return self.c.in_transaction_here()

    @property
    def statements(self) -> int:
        """SQL statements run through this storage since it was opened."""
        return self.c.statements

    def close(self) -> None:
        self.db.close()


__all__ = ["SqliteStorage", "SqliteDB"]
