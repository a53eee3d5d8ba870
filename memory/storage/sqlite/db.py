"""The one SQLite connection a :class:`SqliteStorage` shares between its table families.

Thread model (issue 12, point 4): one connection per :class:`SqliteStorage`, guarded by one
re-entrant lock. A write transaction holds the lock from ``BEGIN IMMEDIATE`` to ``COMMIT``, a read
snapshot from ``BEGIN`` to ``COMMIT``, and a single statement outside either holds it while it
runs and its rows are fetched. The lock belongs to the connection
(:func:`~.connection.connection_lock`), so every wrapper of the same ``sqlite_utils.Database`` and
every :func:`~.connection.write_transaction` on it take the same one. So threads sharing one
``MemFold`` never see each other's uncommitted writes and never interleave statements inside one
another's transaction; other connections (another ``MemFold`` on the file, other processes) are
kept apart by SQLite's own file locks (WAL, busy timeout, retried ``BEGIN``). ``THREADS.md`` and
``tests/test_threads.py`` state and check what this gives a user.

Every statement goes through :meth:`SqliteDB.all` / :meth:`one` / :meth:`value` / :meth:`run`,
which turn driver errors into memfold's: a broken uniqueness rule becomes
:class:`~memfold.memory.errors.StorageConflict`, any other ``sqlite3.DatabaseError`` (a CHECK or
trigger refusing the write included) a :class:`~memfold.memory.errors.StorageError` naming the
statement's first words.
"""

from __future__ import annotations

import contextlib
import sqlite3
from typing import Any, Iterable, Iterator, Sequence

import sqlite_utils

from ...errors import StorageConflict, StorageError
from .connection import _is_busy, brief_busy_timeout, connection_lock, read_only_message, write_transaction


#: SQLite's extended result codes for a broken uniqueness rule (the one :class:`StorageConflict`)
_UNIQUENESS = {"SQLITE_CONSTRAINT_UNIQUE", "SQLITE_CONSTRAINT_PRIMARYKEY", "SQLITE_CONSTRAINT_ROWID"}


def _translate(exc: sqlite3.DatabaseError, sql: str, conn: sqlite3.Connection | None = None) -> StorageError:
    """memfold's error for a driver error raised by ``sql``: a broken uniqueness rule is a
    :class:`StorageConflict`; a refused write (a CHECK, NOT NULL, foreign key or trigger rule of
    the schema) and every other failure a :class:`StorageError`."""
    head = " ".join(sql.split()[:4])
    if isinstance(exc, sqlite3.IntegrityError):
        if getattr(exc, "sqlite_errorname", None) in _UNIQUENESS or "UNIQUE constraint" in str(exc):
            return StorageConflict(f"the write broke a uniqueness rule ({exc}) in: {head} ...")
        return StorageError(f"the write broke a rule of the schema ({exc}) in: {head} ...")
    if "readonly" in str(exc).lower() or "read-only" in str(exc).lower():
        return StorageError(read_only_message(exc, conn))
    return StorageError(f"the database failed ({exc}) in: {head} ...")


class SqliteDB:
    """A ``sqlite_utils.Database`` plus the lock that serialises threads on it."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        self.db = db
        self.conn: sqlite3.Connection = db.conn
        self.lock = connection_lock(db)  #: shared by every wrapper of this connection
        self.statements = 0  #: statements run since open (tests and benchmarks read it)

    # -- what this connection changed (issue 18, point 4) ------------------------------------
    @property
    def protected_changes(self) -> int:
        """How many writing statements naming the ``protected`` table this connection ran, plus
        its rollbacks (any rolled back write may have been one): with ``PRAGMA data_version``
        (other connections' commits) it versions the protected channel. Kept on the connection
        (like its lock), so every wrapper of it counts into the same number."""
        return self._changes()[0]

    @property
    def turn_changes(self) -> int:
        """How many ``UPDATE turns`` statements (erasure, relabelling: a turn is otherwise never
        changed) this connection ran, plus its rollbacks; versions the turns kept in memory."""
        return self._changes()[1]

    @property
    def rollbacks(self) -> int:
        """How many write transactions (or savepoints) this connection rolled back: SQLite's
        ``total_changes`` keeps counting rolled back rows, so a version made of it alone could
        name a state that was never committed (the compiled-context cache, round 15)."""
        return self._changes()[2]

    def _changes(self) -> list[int]:
        counts = getattr(self.db, "_memfold_changes", None)
        if counts is None:
            counts = self.db._memfold_changes = [0, 0, 0]  # type: ignore[attr-defined]
        return counts

    def _count_changes(self, sql: str | None) -> None:
        """Count ``sql`` (``None``: a rollback, which counts for every table) before it runs: a
        failed write only costs a re-read."""
        counts = self._changes()
        if sql is None:
            counts[2] += 1
        if sql is None or "protected" in sql:
            counts[0] += 1
        if sql is None or "UPDATE turns" in sql:
            counts[1] += 1
            self.kept_turns.clear()  # an erased turn's text leaves memory with the statement

    @property
    def kept_turns(self) -> dict:
        """The turns :meth:`SqliteArchive.turns` keeps by id (on the connection, like the counts)."""
        kept = getattr(self.db, "_memfold_kept_turns", None)
        if kept is None:
            kept = self.db._memfold_kept_turns = {}  # type: ignore[attr-defined]
        return kept

    # -- statements --------------------------------------------------------------------
    def all(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[tuple]:
        """Every row of one statement, fetched under the lock."""
        with self.lock:
            self.statements += 1
            try:
                return self.conn.execute(sql, params).fetchall()
            except sqlite3.DatabaseError as exc:
                raise _translate(exc, sql, self.conn) from exc

    def one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> tuple | None:
        """The first row of one statement, or ``None``."""
        with self.lock:
            self.statements += 1
            try:
                return self.conn.execute(sql, params).fetchone()
            except sqlite3.DatabaseError as exc:
                raise _translate(exc, sql, self.conn) from exc

    def value(self, sql: str, params: Sequence[Any] | dict[str, Any] = (), default: Any = None) -> Any:
        """The first column of the first row, or ``default``."""
        row = self.one(sql, params)
        return default if row is None or row[0] is None else row[0]

    def run(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Cursor:
        """Run one writing statement; the cursor's ``lastrowid`` and ``rowcount`` stay readable."""
        with self.lock:
            self.statements += 1
            self._count_changes(sql)
            try:
                return self.conn.execute(sql, params)
            except sqlite3.DatabaseError as exc:
                raise _translate(exc, sql, self.conn) from exc

    def run_if_free(self, sql: str, params: Sequence[Any] = (), *, wait_ms: int) -> bool:
        """Run one writing statement a reader can go without (the access count of a read):
        outside a transaction it waits at most ``wait_ms`` for another connection's write lock,
        then gives up and returns False instead of failing, so a read never waits the whole busy
        timeout for bookkeeping it does not need (issue 20, point 3). Inside a transaction (which
        holds the write lock, or joins the caller's) it is :meth:`run`. True when it ran."""
        with self.lock:
            if self.conn.in_transaction:
                self.run(sql, params)
                return True
            try:
                with brief_busy_timeout(self.conn, wait_ms):
                    self.run(sql, params)
                return True
            except StorageError as exc:
                if not _is_busy(exc.__cause__):
                    raise
                return False

    def run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> int:
        """Run one statement for each parameter row; returns the rows changed."""
        with self.lock:
            self.statements += 1
            self._count_changes(sql)
            try:
                return self.conn.executemany(sql, rows).rowcount
            except sqlite3.DatabaseError as exc:
                raise _translate(exc, sql, self.conn) from exc

    # -- transactions --------------------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self, *, wait_ms: int | None = None) -> Iterator[None]:
        """One atomic write (``BEGIN IMMEDIATE`` ... ``COMMIT``; a savepoint when nested).
        ``wait_ms``: see :func:`~.connection.write_transaction`."""
        with self.lock:
            try:
                with write_transaction(self.db, wait_ms=wait_ms):
                    yield
            except BaseException as exc:
                self._count_changes(None)  # rolled back: what was read inside may be gone
                if isinstance(exc, sqlite3.DatabaseError):
                    raise _translate(exc, "COMMIT", self.conn) from exc
                raise

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction: every statement inside sees the same committed state.

        Inside a write transaction it simply joins it. A deferred ``BEGIN`` takes no write lock.
        """
        with self.lock:
            if self.in_transaction:  # a closed database is memfold's error here too (round 13)
                yield
                return
            try:
                self.conn.execute("BEGIN")
            except sqlite3.DatabaseError as exc:
                raise _translate(exc, "BEGIN", self.conn) from exc
            try:
                yield
            finally:
                if self.conn.in_transaction:
                    try:
                        self.conn.execute("COMMIT")
                    except sqlite3.DatabaseError:
                        self.conn.execute("ROLLBACK")

    @property
    def in_transaction(self) -> bool:
        try:
            return self.conn.in_transaction
        except sqlite3.ProgrammingError as exc:  # a closed database: memfold's error, as for a statement
            raise _translate(exc, "(transaction state)", self.conn) from exc

    def in_transaction_here(self) -> bool:
        """True when the calling thread opened the transaction (or snapshot) now open: it holds
        the connection's lock and the connection is inside a transaction."""
        return self.lock._is_owned() and self.conn.in_transaction  # type: ignore[attr-defined]
