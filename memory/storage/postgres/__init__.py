"""The scale-out backend: PostgreSQL through psycopg 3 and a ``psycopg_pool`` connection pool.

It owns every SQL statement and migration memfold runs on PostgreSQL, one module per table
family (``archive.py``, ``cards.py``, ...) mirroring :mod:`..sqlite`, each a class over the
shared :class:`~.db.PostgresDB` (pool, per-thread transactions, driver-error translation), wired
together by :class:`PostgresStorage`. It passes the same contract suite as the SQLite backend
(``tests/test_storage_contract.py``).
"""

from __future__ import annotations

import contextlib
from typing import Sequence

from .archive import PostgresArchive
from .cards import PostgresCards
from .catalog import PostgresCatalog
from .db import PostgresDB
from .erasure import PostgresErasure
from .events import PostgresEvents
from .folds import PostgresFolds
from .fulltext import PostgresFullText
from .meta import PostgresMeta
from .protected import PostgresProtected
from .records import PostgresRecords
from .runs import PostgresRuns
from .vectors import PostgresVectors


class PostgresStorage:
    """Every table family on one migrated PostgreSQL database (see :mod:`.db` for threads and processes)."""

    kind = "postgres"

    def __init__(self, c: PostgresDB) -> None:
        self.c = c
        self.url = c.url  #: the libpq connection string (for tools that open a second handle)
        self.archive = PostgresArchive(c)
        self.cards = PostgresCards(c)
        self.catalog = PostgresCatalog(c)
        self.records = PostgresRecords(c)
        self.protected = PostgresProtected(c)
        self.fulltext = PostgresFullText(c)
        self.vectors = PostgresVectors(c)
        self.runs = PostgresRuns(c)
        self.events = PostgresEvents(c)
        self.erasure = PostgresErasure(c)
        self.meta = PostgresMeta(c)
        self.folds = PostgresFolds(c)

    def transaction(self, scope: Sequence[str] | None = None) -> contextlib.AbstractContextManager[None]:
        """One atomic write; nested calls join the outer one (a savepoint). ``scope``: what it
        writes (:func:`~memfold.memory.storage.base.write_scope`), so writers of different
        conversations run side by side (see :mod:`.db`); ``None``: the whole database."""
        return self.c.transaction(scope)

    def optional_transaction(self) -> contextlib.AbstractContextManager[None]:
        """A :meth:`transaction` a reader can go without (a search's vector cache): here a plain
        one, as before (PostgreSQL readers never wait on another program's writes, and memfold's
        writers hold their locks briefly)."""
        return self.c.transaction(None)

    def snapshot(self) -> contextlib.AbstractContextManager[None]:
        """One consistent read of committed state (``REPEATABLE READ``), taking no lock."""
        return self.c.snapshot()

    def settled(self) -> contextlib.AbstractContextManager[None]:
        """A read after every write in flight has ended (:meth:`.db.PostgresDB.quiesced`): scoped
        writers commit ids out of order, and a cursor over ids must not skip one."""
        return self.c.quiesced()

    def writers_held(self) -> contextlib.AbstractContextManager[None]:
        """Nothing to hold: each thread has its own connection, and ``only_own_commits`` cannot
        tell this handle's commits from others' anyway."""
        return contextlib.nullcontext()

    @property
    def in_transaction(self) -> bool:
        """True while the calling thread is inside a :meth:`transaction` or :meth:`snapshot`."""
        return self.c.in_transaction_here()

    @property
    def statements(self) -> int:
        """SQL statements run through this storage since it was opened."""
        return self.c.statements

    def close(self) -> None:
        self.c.pool.close()


__all__ = ["PostgresStorage", "PostgresDB"]
