"""Opening a PostgreSQL database: the pool, migrations and the clock check.

Invariant kept here: every database memfold touches is at the newest schema it knows and was
written by one kind of clock, exactly as for a SQLite file (:mod:`..sqlite.connection`). Several
processes on several machines may open it at once: migrations serialise on an advisory lock.
"""

from __future__ import annotations

import os
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ...errors import ClockError, StorageError
from . import pgvector
from .db import PostgresDB
from .migrations import MIGRATIONS, apply_migrations

#: connections each opened storage may hold (``MEMFOLD_PG_POOL_SIZE`` or ``?pool_size=`` override it)
DEFAULT_POOL_SIZE = 4


def split_url(url: str) -> tuple[str, int]:
    """``(libpq URL, pool size)``: memfold's own ``pool_size`` and ``pgvector`` query parameters
    are taken out (see :func:`pgvector_setting`)."""
    if url.startswith("postgresql+psycopg://"):
        url = "postgresql://" + url[len("postgresql+psycopg://"):]
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    size = os.environ.get("MEMFOLD_PG_POOL_SIZE", DEFAULT_POOL_SIZE)
    kept = []
    for key, value in query:
        if key == "pool_size":
            size = value
        elif key == "pgvector":
            pass  # read by pgvector_setting()
        else:
            kept.append((key, value))
    try:
        size = int(size)
        if size < 1:
            raise ValueError
    except ValueError:
        raise StorageError(f"bad pool size {size!r} in {url!r}: give a whole number of connections, 1 or more") from None
    return urlunsplit(parts._replace(query=urlencode(kept))), size


def pgvector_setting(url: str) -> bool:
    """Whether to use pgvector: the URL's ``pgvector=on|off`` parameter, else ``MEMFOLD_PGVECTOR``,
    else on (:mod:`.pgvector`). :raises StorageError: for a value other than on/off."""
    for key, value in parse_qsl(urlsplit(url).query, keep_blank_values=True):
        if key == "pgvector":
            return pgvector.parse_setting(value, redact(url))
    return pgvector.default_setting()


def redact(url: str) -> str:
    """The URL without its password (for messages)."""
    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(":" + parts.password + "@", ":***@")
        return urlunsplit(parts._replace(netloc=netloc))
    return url


def connect(url: str) -> PostgresDB:
    """A pool of autocommit connections to ``url`` (one connection checked before returning).

    :raises StorageError: when the server cannot be reached or refuses the login.
    """
    try:
        import psycopg
        from psycopg_pool import ConnectionPool
    except ImportError as exc:  # pragma: no cover - the extra is missing
        raise StorageError("PostgreSQL needs the postgres extra: pip install 'memfold[postgres]'") from exc
    libpq, size = split_url(url)
    use_pgvector = pgvector_setting(url)
    try:
        psycopg.conninfo.conninfo_to_dict(libpq)
    except psycopg.ProgrammingError as exc:
        raise StorageError(f"bad PostgreSQL connection string {redact(url)!r}: {exc}") from exc
    try:  # one direct attempt first: an unreachable server fails now, not after the pool's retries
        psycopg.connect(libpq, autocommit=True).close()
    except psycopg.Error as exc:
        raise StorageError(f"cannot connect to PostgreSQL at {redact(url)}: {str(exc).strip()}") from exc
    pool = ConnectionPool(libpq, min_size=1, max_size=size, kwargs={"autocommit": True}, open=False,
                          num_workers=1, timeout=60, name="memfold")
    try:
        pool.open(wait=True, timeout=30)
    except Exception as exc:
        pool.close()
        raise StorageError(f"cannot connect to PostgreSQL at {redact(url)}: {exc}") from exc
    c = PostgresDB(pool, libpq)
    c.pgvector = use_pgvector  # read by migration 21 and the vectors family (.pgvector.enabled)
    return c


def open_database(url: str, clock_kind: str | None = None, *, create: bool = True) -> PostgresDB:
    """Connect, refuse a database of another application, migrate, check the clock.

    :raises SchemaTooNew: if the database was written by a newer memfold.
    :raises ClockError: if it was written with another kind of clock.
    :raises StorageError: if it cannot be reached, holds other tables, or is empty while
        ``create`` is False.
    """
    c = connect(url)
    try:
        migrate(c, clock_kind, create=create, where=redact(url))
    except BaseException:
        c.pool.close()
        raise
    return c


def is_current(c: PostgresDB, clock_kind: str | None) -> bool:
    """True when an open database needs nothing: every migration applied (none newer) and the
    clock kind already recorded as ``clock_kind``. Read without any lock, so a process opening
    the database never waits for the writers at work (three statements)."""
    if c.value("SELECT to_regclass('schema_version')") is None:
        return False
    if {r[0] for r in c.all("SELECT version FROM schema_version")} != {m[0] for m in MIGRATIONS}:
        return False
    return clock_kind is None or c.value("SELECT value FROM meta WHERE key = 'clock_kind'") == clock_kind


def migrate(c: PostgresDB, clock_kind: str | None, *, create: bool = True, where: str = "the database") -> None:
    """Bring an open database to the newest schema and check (or record) its clock kind (under
    the database-wide lock, unless :func:`is_current` finds nothing to do)."""
    if MIGRATIONS and is_current(c, clock_kind):
        return
    with c.transaction():
        if c.value("SELECT to_regclass('schema_version')") is None or not MIGRATIONS:
            tables = [r[0] for r in c.all("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")]
            if tables:
                raise StorageError(
                    f"{where} is not a memfold database: it holds other tables ({', '.join(sorted(tables)[:5])}); "
                    "give memfold a database (or schema) of its own"
                )
            if not create:
                raise StorageError(f"{where} is not a memfold database (it is empty): create it with 'memfold init {where}'")
        apply_migrations(c)
        if clock_kind is not None:
            stored = c.value("SELECT value FROM meta WHERE key = 'clock_kind'")
            if stored is None:
                c.run("INSERT INTO meta(key, value) VALUES ('clock_kind', %s) ON CONFLICT (key) DO NOTHING",
                      [clock_kind])
            elif stored != clock_kind:
                raise ClockError(
                    f"this database was written with a {stored} clock; open it with a "
                    f"{stored} clock, not a {clock_kind} one"
                )
