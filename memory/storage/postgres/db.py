"""The connection pool a :class:`PostgresStorage` shares between its table families.

Thread and process model: a ``psycopg_pool.ConnectionPool`` of autocommit connections. A
statement outside a transaction borrows a connection for that statement only. A
:meth:`PostgresDB.transaction` (or :meth:`~PostgresDB.snapshot`) pins one connection to the
calling thread from ``BEGIN`` to ``COMMIT``; nested calls on the same thread join it (psycopg
turns them into savepoints). So threads sharing one ``MemFold`` never see each other's
uncommitted writes, and many processes on many machines share one database.

Write transactions keep the embedded backend's guarantee that a read-then-write (the next seq
of an append, the active record of a slot, a lease row) is never raced: each one takes the
transaction-scoped advisory lock :data:`WRITE_LOCK` first, the way SQLite's ``BEGIN IMMEDIATE``
takes the write lock. Reads (and :meth:`snapshot`) take no lock and never wait on a writer.

Every statement goes through :meth:`all` / :meth:`one` / :meth:`value` / :meth:`run`, which
turn driver errors into memfold's: a broken uniqueness rule is a
:class:`~memfold.memory.errors.StorageConflict`, any other ``psycopg.Error`` (a trigger or
CHECK refusing the write included) a :class:`~memfold.memory.errors.StorageError` naming the
statement's first words. Placeholders are psycopg's ``%s``.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterable, Iterator, Sequence

import psycopg
from psycopg import errors as pg_errors

from ...errors import OPENED_READ_ONLY, StorageConflict, StorageError

#: the advisory lock key every write transaction takes (``pg_advisory_xact_lock``): "memfold" in ASCII
WRITE_LOCK = 0x6D656D666F6C64


def translate(exc: BaseException, sql: str) -> StorageError:
    """memfold's error for a driver error raised by ``sql``."""
    head = " ".join(sql.split()[:4])
    if isinstance(exc, pg_errors.UniqueViolation):
        return StorageConflict(f"the write broke a uniqueness rule ({exc}) in: {head} ...")
    if isinstance(exc, (psycopg.IntegrityError, pg_errors.RaiseException)):
        return StorageError(f"the write broke a rule of the schema ({str(exc).strip()}) in: {head} ...")
    return StorageError(f"the database failed ({str(exc).strip()}) in: {head} ...")


class Result:
    """What a writing statement reports: rows changed, and the rows it returned (``RETURNING``)."""

    __slots__ = ("rowcount", "rows")

    def __init__(self, rowcount: int, rows: list[tuple]) -> None:
        self.rowcount = rowcount
        self.rows = rows


class PostgresDB:
    """A connection pool plus the per-thread transaction connection."""

    def __init__(self, pool: Any, url: str) -> None:
        self.pool = pool
        self.url = url
        self._local = threading.local()
        self.statements = 0  #: statements run since open (tests and benchmarks read it)
        self.read_only = False  #: set by ``meta.set_read_only()``: every write is refused
        self.writes = 0  #: writing statements run since open (part of ``meta.state_version()``)

    # -- connections ----------------------------------------------------------------------
    def _held(self) -> "psycopg.Connection | None":
        return getattr(self._local, "conn", None)

    @contextlib.contextmanager
    def _connection(self) -> Iterator[psycopg.Connection]:
        conn = self._held()
        if conn is not None:
            yield conn
            return
        try:
            with self.pool.connection() as conn:
                yield conn
        except psycopg.OperationalError as exc:
            raise StorageError(f"cannot reach PostgreSQL ({str(exc).strip()})") from exc

    def _execute(self, sql: str, params: Sequence[Any] | None, fetch: str) -> Any:
        self.statements += 1
        with self._connection() as conn:
            try:
                cur = conn.execute(sql, params if params else None)
                if fetch == "all":
                    return cur.fetchall() if cur.description else []
                if fetch == "one":
                    return cur.fetchone() if cur.description else None
                return Result(cur.rowcount, cur.fetchall() if cur.description else [])
            except psycopg.Error as exc:
                raise translate(exc, sql) from exc

    # -- statements --------------------------------------------------------------------
    def all(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        """Every row of one statement."""
        return self._execute(sql, params, "all")

    def one(self, sql: str, params: Sequence[Any] = ()) -> tuple | None:
        """The first row of one statement, or ``None``."""
        return self._execute(sql, params, "one")

    def value(self, sql: str, params: Sequence[Any] = (), default: Any = None) -> Any:
        """The first column of the first row, or ``default``."""
        row = self.one(sql, params)
        return default if row is None or row[0] is None else row[0]

    def run(self, sql: str, params: Sequence[Any] = ()) -> Result:
        """Run one writing statement; ``rowcount`` and any ``RETURNING`` rows stay readable."""
        self._refuse_if_read_only(sql)
        self.writes += 1
        return self._execute(sql, params, "run")

    def _refuse_if_read_only(self, sql: str) -> None:
        if self.read_only and not sql.lstrip().upper().startswith(("SELECT", "VACUUM")):
            raise StorageError(f"{OPENED_READ_ONLY} (refused {' '.join(sql.split()[:3])} ...)")

    def run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> int:
        """Run one statement for each parameter row (in one transaction); returns the rows given."""
        self._refuse_if_read_only(sql)
        self.writes += 1
        rows = [tuple(r) for r in rows]
        if not rows:
            return 0
        self.statements += 1
        with self.transaction(), self._connection() as conn:
            try:
                with conn.cursor() as cur:
                    cur.executemany(sql, rows)
            except psycopg.Error as exc:
                raise translate(exc, sql) from exc
        return len(rows)

    # -- transactions --------------------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """One atomic write; nested calls on this thread join it as a savepoint."""
        yield from self._transaction(write=True)

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction (``REPEATABLE READ``): every statement inside sees the same
        committed state. Inside a transaction it simply joins it. It takes no lock."""
        if self._held() is not None:
            yield
            return
        yield from self._transaction(write=False)

    def _transaction(self, *, write: bool) -> Iterator[None]:
        conn = self._held()
        if conn is not None:  # nested: a savepoint of the thread's transaction
            depth = self._local.depth = self._local.depth + 1
            try:
                if write and not self._local.write and not self.read_only:  # a write inside a snapshot: the lock now
                    conn.execute(f"SELECT pg_advisory_xact_lock({WRITE_LOCK})")
                    self._local.write = True
                conn.execute(f"SAVEPOINT memfold_{depth}")
            except psycopg.Error as exc:
                self._local.depth -= 1
                raise translate(exc, "SAVEPOINT") from exc
            try:
                yield
            except BaseException:
                try:
                    conn.execute(f"ROLLBACK TO SAVEPOINT memfold_{depth}; RELEASE SAVEPOINT memfold_{depth}")
                except psycopg.Error:
                    pass  # the outer transaction is failing anyway; its rollback undoes everything
                raise
            else:
                try:
                    conn.execute(f"RELEASE SAVEPOINT memfold_{depth}")
                except psycopg.Error as exc:
                    raise translate(exc, "RELEASE SAVEPOINT") from exc
            finally:
                self._local.depth -= 1
            return
        try:
            pooled = self.pool.connection()
            conn = pooled.__enter__()
        except psycopg.OperationalError as exc:
            raise StorageError(f"cannot reach PostgreSQL ({str(exc).strip()})") from exc
        self._local.conn, self._local.write, self._local.depth = conn, write, 0
        failure: BaseException | None = None
        try:
            self.statements += 1
            # one round trip: BEGIN and, for a write, the write lock (SQLite's BEGIN IMMEDIATE)
            if write and self.read_only:
                conn.execute("BEGIN READ ONLY")  # a read-only handle: the server refuses any write too
            else:
                conn.execute(f"BEGIN; SELECT pg_advisory_xact_lock({WRITE_LOCK})" if write
                             else "BEGIN ISOLATION LEVEL REPEATABLE READ")
            try:
                yield
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except psycopg.Error as exc:
            failure = translate(exc, "COMMIT")
            try:
                if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                    conn.execute("ROLLBACK")
            except psycopg.Error:
                pass
            raise failure from exc
        except BaseException as exc:
            failure = exc
            raise
        finally:
            self._local.conn = None
            pooled.__exit__(type(failure) if failure else None, failure, failure.__traceback__ if failure else None)

    @property
    def in_transaction(self) -> bool:
        """True while the calling thread is inside a transaction or snapshot."""
        return self._held() is not None

    def in_transaction_here(self) -> bool:
        return self._held() is not None

    @property
    def in_write(self) -> bool:
        """True inside a write transaction (row locks may be taken)."""
        return self._held() is not None and getattr(self._local, "write", False)


def where_equal(**columns: object) -> tuple[str, list[object]]:
    """A ``WHERE`` clause matching every column given a value that is not ``None`` (``%s`` marks)."""
    clauses = [f"{name} = %s" for name, value in columns.items() if value is not None]
    params = [value for value in columns.values() if value is not None]
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def marks(n: int) -> str:
    """``%s, %s, ...`` for ``n`` parameters."""
    return ", ".join(["%s"] * n)
