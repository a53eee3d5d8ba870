"""The connection pool a :class:`PostgresStorage` shares between its table families.

Thread and process model: a ``psycopg_pool.ConnectionPool`` of autocommit connections. A
statement outside a transaction borrows a connection for that statement only. A
:meth:`PostgresDB.transaction` (or :meth:`~PostgresDB.snapshot`) pins one connection to the
calling thread from ``BEGIN`` to ``COMMIT``; nested calls on the same thread join it (psycopg
turns them into savepoints). So threads sharing one ``MemFold`` never see each other's
uncommitted writes, and many processes on many machines share one database.

Write transactions keep the embedded backend's guarantee that a read-then-write (the next seq
of an append, the active record of a slot, a lease row) is never raced, without SQLite's single
writer: a transaction names what it writes (``transaction(scope=...)``, names made by
:func:`memfold.memory.storage.base.write_scope`) and takes, at ``BEGIN`` in the same round trip,
the shared mode of the database-wide advisory lock :data:`WRITE_LOCK` and one exclusive
transaction-scoped advisory lock per name (:func:`lock_key`), in ascending key order, so two
transactions never wait on each other in a cycle. Writers of different conversations (records,
protected records, leases of different names) then run side by side; writers of the same one
queue. A transaction without a scope (migrations, erasure, forks, relabelling, everything rare
or database-wide) takes :data:`WRITE_LOCK` exclusively: it waits for every scoped writer in
flight and holds off new ones, the way SQLite's ``BEGIN IMMEDIATE`` takes the write lock. A
nested transaction joins the outer one's locks (a savepoint) and adds those of its own scope; the
outer scope must name what its nested calls write. Reads (and :meth:`snapshot`) take no lock and
never wait on a writer.

What the scoped locks give up is that ids are handed out in commit order: two conversations'
appends may commit ids 8 and 7 in that order. The one reader that moves a cursor over ids
(consolidation's per-namespace turn cursor) first waits for every writer in flight
(:meth:`PostgresDB.quiesced`), so the turns it reads are a committed prefix.

Every statement goes through :meth:`all` / :meth:`one` / :meth:`value` / :meth:`run`, which
turn driver errors into memfold's: a broken uniqueness rule is a
:class:`~memfold.memory.errors.StorageConflict`, any other ``psycopg.Error`` (a trigger or
CHECK refusing the write included) a :class:`~memfold.memory.errors.StorageError` naming the
statement's first words. Placeholders are psycopg's ``%s``.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from typing import Any, Iterable, Iterator, Sequence

import psycopg
from psycopg import errors as pg_errors

from ...errors import OPENED_READ_ONLY, StorageConflict, StorageError

#: the database-wide advisory lock key (``pg_advisory_xact_lock``): "memfold" in ASCII. Scoped write
#: transactions hold it shared, unscoped ones exclusively.
WRITE_LOCK = 0x6D656D666F6C64


def lock_key(name: str) -> int:
    """The advisory lock key (a signed 64-bit integer) of one scope name such as
    ``"conversation:c1"``: the first 8 bytes of its BLAKE2b digest. Two names sharing a key only
    make their writers queue."""
    key = int.from_bytes(hashlib.blake2b(name.encode("utf-8"), digest_size=8).digest(), "big", signed=True)
    return key if key != WRITE_LOCK else key - 1


def lock_statements(scope: Sequence[str] | None, *, shared_held: bool = False) -> list[str]:
    """The statements taking the locks of ``scope`` (``None``: :data:`WRITE_LOCK` exclusively)."""
    if scope is None:
        return [f"SELECT pg_advisory_xact_lock({WRITE_LOCK})"]
    keys = sorted({lock_key(name) for name in scope})
    head = [] if shared_held else [f"SELECT pg_advisory_xact_lock_shared({WRITE_LOCK})"]
    return head + [f"SELECT pg_advisory_xact_lock({k})" for k in keys]


def lock_sql(scope: Sequence[str] | None, *, shared_held: bool = False) -> str:
    """:func:`lock_statements` as one string (one round trip)."""
    return "; ".join(lock_statements(scope, shared_held=shared_held))


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

    def _pending(self) -> list[str]:
        """The ``BEGIN`` (and locks) of this thread's transaction not sent yet; taken, so it is sent once."""
        begin = getattr(self._local, "begin", None) or []
        self._local.begin = None
        return begin

    def _execute(self, sql: str, params: Sequence[Any] | None, fetch: str) -> Any:
        self.statements += 1
        with self._connection() as conn:
            try:
                begin = self._pending() if self._held() is not None else []
                if not begin:
                    cur = conn.execute(sql, params if params else None)
                else:  # a transaction's BEGIN and locks travel with its first statement: one round trip
                    with conn.pipeline():
                        for statement in begin:
                            conn.execute(statement)
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
                begin = self._pending()
                if begin:
                    conn.execute("; ".join(begin))
                with conn.cursor() as cur:
                    cur.executemany(sql, rows)
            except psycopg.Error as exc:
                raise translate(exc, sql) from exc
        return len(rows)

    # -- transactions --------------------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self, scope: Sequence[str] | None = None) -> Iterator[None]:
        """One atomic write; nested calls on this thread join it as a savepoint.

        :param scope: lock names of what it writes (see the module docstring); ``None``: the
            database-wide lock, exclusively (nested: the outer transaction's locks).
        """
        yield from self._transaction(write=True, scope=scope)

    @contextlib.contextmanager
    def quiesced(self) -> Iterator[None]:
        """A read after every write transaction in flight has ended: takes and holds
        :data:`WRITE_LOCK` exclusively for the block (briefly holding off new writers), so what
        the block reads is every write that was handed an id before it. Inside a transaction it
        simply joins it (an unscoped one already holds the lock; a scoped one cannot wait for
        itself)."""
        if self._held() is not None:
            yield
            return
        yield from self._transaction(write=True, scope=None)

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction (``REPEATABLE READ``): every statement inside sees the same
        committed state. Inside a transaction it simply joins it. It takes no lock."""
        if self._held() is not None:
            yield
            return
        yield from self._transaction(write=False)

    def _more_locks(self, scope: Sequence[str] | None) -> list[str]:
        """Inside this thread's transaction: the statements taking what ``scope`` adds to the
        locks held (the caller sends them)."""
        if self.read_only:
            return []
        if not self._local.write:  # a write inside a snapshot: its locks now
            self._local.write = True
            self._local.locks = None if scope is None else set(scope)
            return lock_statements(scope)
        held = self._local.locks
        if held is None or scope is None:  # the database-wide lock covers everything, or join the outer scope
            return []
        new = [name for name in scope if name not in held]
        held.update(new)
        return lock_statements(new, shared_held=True) if new else []

    def _transaction(self, *, write: bool, scope: Sequence[str] | None = None) -> Iterator[None]:
        conn = self._held()
        if conn is not None:  # nested: a savepoint of the thread's transaction
            depth = self._local.depth = self._local.depth + 1
            try:
                # one round trip: a BEGIN not sent yet, the locks this level adds, the savepoint
                statements = self._pending() + (self._more_locks(scope) if write else [])
                conn.execute("; ".join(statements + [f"SAVEPOINT memfold_{depth}"]))
                # locks a deeper level adds are taken inside this savepoint: rolling it back frees them
                held = None if self._local.locks is None else set(self._local.locks)
            except psycopg.Error as exc:
                self._local.depth -= 1
                raise translate(exc, "SAVEPOINT") from exc
            try:
                yield
            except BaseException:
                try:
                    conn.execute(f"ROLLBACK TO SAVEPOINT memfold_{depth}; RELEASE SAVEPOINT memfold_{depth}")
                    self._local.locks = held
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
        self._local.locks = None if scope is None else set(scope)  # None: WRITE_LOCK exclusively
        failure: BaseException | None = None
        try:
            self.statements += 1
            # BEGIN and, for a write, its locks (see the module docstring) are sent with the first
            # statement of the transaction, in the same round trip; a transaction that ran no
            # statement sends nothing at all
            if write and self.read_only:
                self._local.begin = ["BEGIN READ ONLY"]  # a read-only handle: the server refuses any write too
            else:
                self._local.begin = (["BEGIN", *lock_statements(scope)] if write
                                     else ["BEGIN ISOLATION LEVEL REPEATABLE READ"])
            try:
                yield
            except BaseException:
                if self._local.begin is None:
                    conn.execute("ROLLBACK")
                raise
            if self._local.begin is None:
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
            self._local.conn = self._local.begin = None
            pooled.__exit__(type(failure) if failure else None, failure, failure.__traceback__ if failure else None)

    @property
    def in_transaction(self) -> bool:
        """True while the calling thread is inside a transaction or snapshot."""
        return self._held() is not None

    def in_transaction_here(self) -> bool:
        return self._held() is not None

    @property
    def in_write(self) -> bool:
        """True inside a write transaction of a handle that may write (row locks may be taken)."""
        return self._held() is not None and getattr(self._local, "write", False) and not self.read_only


def where_equal(**columns: object) -> tuple[str, list[object]]:
    """A ``WHERE`` clause matching every column given a value that is not ``None`` (``%s`` marks)."""
    clauses = [f"{name} = %s" for name, value in columns.items() if value is not None]
    params = [value for value in columns.values() if value is not None]
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def marks(n: int) -> str:
    """``%s, %s, ...`` for ``n`` parameters."""
    return ", ".join(["%s"] * n)
