"""Opening the SQLite file: pragmas, migrations, and write transactions that survive concurrency.

Invariant kept here: every database memfold touches is at the newest schema it knows, in WAL
mode with foreign keys on, and was written by one kind of clock. Several processes on one machine
share the file safely: writes take the write lock up front (``BEGIN IMMEDIATE``) and wait on a
busy timeout, and a busy error that still escapes is retried, so "database is locked" never
reaches the caller (DESIGN.md §3). SQL for each concept lives in the module that owns the
concept's tables (records in :mod:`memfold.memory.store`, turns in
:mod:`memfold.window.archive`, ...), never in the CLI or in a policy.
"""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import threading
import time
from pathlib import Path
from typing import Iterator

import sqlite_utils

from ...errors import OPENED_READ_ONLY, ClockError, StorageError, WriteLockBusy
from .migrations import MIGRATIONS, apply_migrations, check_not_too_new

#: milliseconds SQLite waits on a lock before returning SQLITE_BUSY
BUSY_TIMEOUT_MS = 30_000
#: how long :func:`write_transaction` keeps retrying a busy database, in seconds
BUSY_RETRY_SECONDS = 120.0

#: milliseconds a write a reader can go without waits on another connection's write lock before
#: it is skipped: the access count of a read (:meth:`.db.SqliteDB.run_if_free`) and a search's
#: vector cache (``optional_transaction``): a reader is not held up for what it does not need
TOUCH_WAIT_MS = 2_000

#: guards the creation of a connection's lock (:func:`connection_lock`)
_LOCKS_GUARD = threading.Lock()


def read_only_message(exc: BaseException, conn: sqlite3.Connection | None = None) -> str:
    """The one-line message for a write refused because the file is read-only (issue 20, point 3),
    or because this connection was opened read-only on purpose (``PRAGMA query_only``, set by
    :meth:`~memfold.memory.storage.base.MetaStore.set_read_only`): then the fix is to open it for
    writing, not to change the file's permissions."""
    try:
        query_only = conn is not None and bool(conn.execute("PRAGMA query_only").fetchone()[0])
    except sqlite3.Error:
        query_only = False
    if query_only:
        return OPENED_READ_ONLY
    return (f"the database is read-only ({exc}): nothing was written; make the file, its -wal/-shm files "
            "and its folder writable, or work on a writable copy")


def precheck_file(path: str | os.PathLike, *, create: bool) -> None:
    """Look at an existing file before memfold's connection settings touch it (issue 20, point 3).

    Opening sets WAL mode, which writes to the file and leaves ``-wal``/``-shm`` files beside it.
    So a file that must be refused is refused here, from a read-only look: another
    application's database (tables but no ``schema_version``), a file that is not SQLite, or,
    with ``create=False``, a missing or empty file. Nothing is created or changed.

    :raises StorageError: naming the file and what to do.
    """
    target = Path(path)
    if not target.exists():
        if not create:
            raise StorageError(f"{target} does not exist: create it with 'memfold init {target}'")
        return
    if target.is_dir():
        raise StorageError(f"{target} is a folder, not a database file")
    if target.stat().st_size == 0:
        if not create:
            raise StorageError(f"{target} is not a memfold database (it is empty): create it with 'memfold init {target}'")
        return
    try:
        conn = sqlite3.connect(f"{target.resolve().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.DatabaseError as exc:
        raise StorageError(f"cannot open {target} as a memfold database: {exc}") from exc
    try:
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    except sqlite3.DatabaseError as exc:
        raise StorageError(f"cannot open {target} as a memfold database: {exc}") from exc
    finally:
        conn.close()
    tables = [t for t in tables if not t.startswith("sqlite_")]
    if "schema_version" not in tables:
        if tables:
            raise StorageError(
                f"{target} is not a memfold database: it holds other tables ({', '.join(sorted(tables)[:5])}); "
                "give memfold a file of its own (nothing in it was changed)"
            )
        if not create:
            raise StorageError(f"{target} is not a memfold database (it is empty): create it with 'memfold init {target}'")


def connect(path: str | os.PathLike | None) -> sqlite_utils.Database:
    """Open (or create) a database file with memfold's connection settings, without migrating.

    :param path: a file path, or ``None`` / ``":memory:"`` for an in-memory database.
    :raises StorageError: when the file cannot be opened as SQLite.
    """
    target = ":memory:" if path in (None, ":memory:") else str(Path(path))
    try:
        conn = sqlite3.connect(target, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        if target != ":memory:":
            mode = _switch_to_wal(conn)
            if str(mode).lower() != "wal":
                raise StorageError(f"could not switch {target} to WAL mode (got {mode!r})")
        conn.execute("PRAGMA synchronous = NORMAL")
    except sqlite3.DatabaseError as exc:
        folder = Path(target).parent
        if target != ":memory:" and not folder.is_dir():  # said only "unable to open database file" (round 14)
            raise StorageError(f"cannot open {target} as a memfold database: folder {folder} does not exist "
                               f"(create it first)") from exc
        raise StorageError(f"cannot open {target} as a memfold database: {exc}") from exc
    return sqlite_utils.Database(conn)


def _switch_to_wal(conn: sqlite3.Connection) -> str:
    """``PRAGMA journal_mode = WAL``, retried while the file is busy.

    SQLite does not always wait on the busy timeout here: when another connection holds the write
    lock of a file still in rollback mode (a fresh file that several processes open at once, or an
    older file), the switch returns "database is locked" at once, because waiting could deadlock.
    So the switch is retried with jitter for up to :data:`BUSY_RETRY_SECONDS`, as a write's
    ``BEGIN IMMEDIATE`` is.
    """
    deadline = time.monotonic() + BUSY_RETRY_SECONDS
    while True:
        try:
            return conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc) or time.monotonic() > deadline:
                raise
            time.sleep(random.uniform(0.005, 0.05))


def open_database(
    path: str | os.PathLike | sqlite_utils.Database | None,
    clock_kind: str | None = None,
    *,
    create: bool = True,
) -> sqlite_utils.Database:
    """Open a database and bring it to the newest schema.

    :param path: a file path, ``None``/``":memory:"``, or an already open ``sqlite_utils.Database``
        (STYLE.md rule 5: stores receive a Database; this is the one place a path becomes one).
    :param clock_kind: ``"logical"`` or ``"system"``; recorded on first open and checked after.
    :returns: the migrated ``sqlite_utils.Database``.
    :raises SchemaTooNew: if the file was written by a newer memfold.
    :raises ClockError: if the file was written with another kind of clock.
    :param create: when False, a file that is not yet a memfold database (empty) is refused
        instead of initialised (the CLI's read commands use this).
    :raises StorageError: if the file is not a usable SQLite database, holds another
        application's tables (memfold never adds its tables beside them), or is empty while
        ``create`` is False.
    """
    if not isinstance(path, sqlite_utils.Database) and path not in (None, ":memory:"):
        precheck_file(path, create=create)  # refuse before WAL mode writes to the file
    db = path if isinstance(path, sqlite_utils.Database) else connect(path)
    where = "the database" if isinstance(path, sqlite_utils.Database) or path in (None, ":memory:") else str(path)
    try:
        if _is_current(db, where, clock_kind, create=create):
            return db  # nothing to write: no write lock taken, so a reader never waits on a writer
        with write_transaction(db):
            _check_tables(db, where, create=create)
            apply_migrations(db)
            if clock_kind is not None:
                row = db.execute("SELECT value FROM meta WHERE key = 'clock_kind'").fetchone()
                if row is None:
                    db.execute("INSERT INTO meta(key, value) VALUES ('clock_kind', ?)", [clock_kind])
                else:
                    _check_clock(row[0], clock_kind)
    except sqlite3.DatabaseError as exc:
        raise StorageError(f"cannot use the database: {exc}") from exc
    return db


def _check_tables(db: sqlite_utils.Database, where: str, *, create: bool) -> list[str]:
    """The file's tables, after refusing another application's file, or an empty one when
    ``create`` is False."""
    tables = [t for t in db.table_names() if not t.startswith("sqlite_")]
    if "schema_version" not in tables:
        if tables:
            raise StorageError(
                f"{where} is not a memfold database: it holds other tables ({', '.join(sorted(tables)[:5])}); "
                "give memfold a file of its own"
            )
        if not create:
            raise StorageError(f"{where} is not a memfold database (it is empty): create it with 'memfold init {where}'")
    return tables


def _check_clock(stored: str, clock_kind: str) -> None:
    if stored != clock_kind:
        raise ClockError(
            f"this database was written with a {stored} clock; open it with a "
            f"{stored} clock, not a {clock_kind} one"
        )


def _is_current(db: sqlite_utils.Database, where: str, clock_kind: str | None, *, create: bool) -> bool:
    """Whether ``db`` needs nothing written on open: every known migration applied and the clock
    kind recorded (and equal to ``clock_kind``), read without the write lock (issue 20, point 3).

    A WAL reader is never blocked by another process's write transaction (``BEGIN IMMEDIATE`` or,
    in WAL mode, ``BEGIN EXCLUSIVE``), so opening a current file to read answers at once. Only a
    fresh or older file, or one whose clock kind is not recorded yet, takes the write lock (and
    :func:`open_database` checks again inside it). All is read in one read transaction, so the
    answer is one snapshot of the file.
    """
    conn = db.conn
    with connection_lock(db):  # an opened storage may be shared by threads: its statements wait their turn
        if conn.in_transaction:
            return False  # the caller's transaction: let the write path run inside it as before
        conn.execute("BEGIN DEFERRED")
        try:
            tables = _check_tables(db, where, create=create)
            if "schema_version" not in tables:
                return False
            done = {row[0] for row in conn.execute("SELECT version FROM schema_version")}
            check_not_too_new(max(done, default=0))
            if any(version not in done for version, _, _ in MIGRATIONS):
                return False
            if clock_kind is None:
                return True
            row = conn.execute("SELECT value FROM meta WHERE key = 'clock_kind'").fetchone()
            if row is None:
                return False
            _check_clock(row[0], clock_kind)
            return True
        finally:
            conn.execute("COMMIT")


def stored_clock_kind(db: sqlite_utils.Database) -> str | None:
    """The clock kind recorded in the database, or ``None`` for a fresh file."""
    row = db.execute("SELECT value FROM meta WHERE key = 'clock_kind'").fetchone()
    return row[0] if row else None


def connection_lock(db: sqlite_utils.Database) -> threading.RLock:
    """The one re-entrant lock of ``db``'s connection, made on first use (the thread model of
    :mod:`.db`). Every :class:`~.db.SqliteDB` over ``db`` and every :func:`write_transaction` on it
    share this lock, so no statement of another thread runs inside a transaction it did not open,
    whichever wrapper issued it."""
    lock = getattr(db, "_memfold_lock", None)
    if lock is None:
        with _LOCKS_GUARD:
            lock = getattr(db, "_memfold_lock", None)
            if lock is None:
                lock = threading.RLock()
                db._memfold_lock = lock  # type: ignore[attr-defined]
    return lock


def _is_busy(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and (
        "locked" in str(exc).lower() or "busy" in str(exc).lower()
    )


@contextlib.contextmanager
def brief_busy_timeout(conn: sqlite3.Connection, wait_ms: int) -> Iterator[None]:
    """SQLite's busy timeout lowered to ``wait_ms`` for the block (then restored): for the writes
    a reader can go without, which give up instead of waiting :data:`BUSY_TIMEOUT_MS`."""
    before = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    conn.execute(f"PRAGMA busy_timeout = {max(0, int(wait_ms))}")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(before)}")


@contextlib.contextmanager
def write_transaction(db: sqlite_utils.Database, *, wait_ms: int | None = None) -> Iterator[sqlite_utils.Database]:
    """One atomic write: ``BEGIN IMMEDIATE`` ... ``COMMIT``, or a savepoint when nested.

    Taking the write lock at the start means a reader never has to upgrade its lock (the case a
    busy timeout cannot resolve). If beginning still finds the database busy after the timeout,
    the begin is retried with jitter for up to :data:`BUSY_RETRY_SECONDS`. An exception inside the
    block rolls everything back, so bad input writes nothing (STYLE.md rule 9).

    Threads sharing the connection are serialised: the connection's lock
    (:func:`connection_lock`) is held for the whole transaction.

    :param wait_ms: a write a reader can go without (a search's vector cache): wait at most this
        long for another connection's write lock, then raise :class:`WriteLockBusy` (no retry).
    :raises StorageError: if the database stays locked past the retry window.
    """
    with connection_lock(db):  # held from BEGIN to COMMIT: threads never share a transaction
        yield from _write_transaction(db, wait_ms)


def _write_transaction(db: sqlite_utils.Database, wait_ms: int | None = None) -> Iterator[sqlite_utils.Database]:
    """The body of :func:`write_transaction`, run with the connection's lock held."""
    conn = db.conn
    if conn.in_transaction:
        with db.atomic():  # a savepoint inside the outer transaction
            yield db
        return
    start = time.monotonic()
    deadline = start + BUSY_RETRY_SECONDS
    while True:
        try:
            if wait_ms is None:
                conn.execute("BEGIN IMMEDIATE")
            else:
                with brief_busy_timeout(conn, wait_ms):
                    conn.execute("BEGIN IMMEDIATE")
            break
        except sqlite3.OperationalError as exc:
            if "readonly" in str(exc).lower():
                raise StorageError(read_only_message(exc, conn)) from exc
            if not _is_busy(exc):
                raise StorageError(f"cannot start a write: {exc}") from exc
            if wait_ms is not None:
                raise WriteLockBusy(f"another connection held the write lock for {wait_ms} ms: {exc}") from exc
            if time.monotonic() > deadline:
                raise StorageError(f"the database stayed locked for {time.monotonic() - start:.0f} s (another "
                                   f"connection holds its write lock): nothing was written ({exc})") from exc
            time.sleep(random.uniform(0.005, 0.05))
    try:
        yield db
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    else:
        while True:
            try:
                conn.execute("COMMIT")
                break
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc) or time.monotonic() > deadline:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise StorageError(f"commit failed: {exc}") from exc
                time.sleep(random.uniform(0.005, 0.05))


def where_equal(**columns: object) -> tuple[str, list[object]]:
    """A ``WHERE`` clause matching every column given a value that is not ``None``.

    ``where_equal(namespace="a", kind=None)`` is ``(" WHERE namespace = ?", ["a"])``; with no
    value at all it is ``("", [])``. Column names come from the caller's code, never from input.
    """
    clauses = [f"{name} = ?" for name, value in columns.items() if value is not None]
    params = [value for value in columns.values() if value is not None]
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params
