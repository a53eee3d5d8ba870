"""PostgreSQL: file-wide settings (implements :class:`memfold.memory.storage.base.MetaStorage`).

The ``meta`` table holds one text value per key: ``clock_kind`` (written once, when the file is
first opened with a clock; checked by :func:`.connection.open_database`), ``logical_tick`` (the
tick a logical clock was advanced to), ``token_counter`` (the first counter used on the file),
and keys other parts own (the embedding model and dimension). The schema version lives in the
``schema_version`` table the migrations keep.
"""

from __future__ import annotations

from typing import Iterable

from .db import PostgresDB, marks

#: the columns holding a time value, per table, that a logical clock resumes past
TIME_COLUMNS = (("turns", "created_at"), ("records", "written_at"), ("events", "at"))


class PostgresMeta:
    """File-wide settings, on one :class:`~memfold.memory.storage.postgres.db.PostgresDB`."""

    def __init__(self, c: PostgresDB) -> None:
        self.c = c

    # -- key/values --------------------------------------------------------------------------
    def get(self, key: str) -> str | None:
        """The value stored under ``key``, or None."""
        row = self.c.one("SELECT value FROM meta WHERE key = %s", [key])
        return row[0] if row else None

    def get_many(self, keys: Iterable[str]) -> dict[str, str]:
        """The stored values of those ``keys`` that have one."""
        keys = list(keys)
        if not keys:
            return {}
        qs = marks(len(keys))
        return dict(self.c.all(f"SELECT key, value FROM meta WHERE key IN ({qs})", keys))

    def set(self, key: str, value: str) -> None:
        """Store ``value`` under ``key``, replacing any value there."""
        self.c.run("INSERT INTO meta(key, value) VALUES (%s, %s) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                   [key, value])

    def add(self, key: str, value: str) -> bool:
        """Store ``value`` under ``key`` unless a value is there already; True when it was stored."""
        cur = self.c.run("INSERT INTO meta(key, value) VALUES (%s, %s) ON CONFLICT(key) DO NOTHING", [key, value])
        return cur.rowcount == 1

    def delete(self, keys: Iterable[str]) -> int:
        """Remove those ``keys``; returns how many were there."""
        keys = list(keys)
        if not keys:
            return 0
        qs = marks(len(keys))
        return self.c.run(f"DELETE FROM meta WHERE key IN ({qs})", keys).rowcount

    def state_version(self) -> tuple[int, int]:
        """A value that changes whenever anything is committed to the database, by this handle or
        another process (a cache key, issue 15): a checksum of the server's current snapshot
        (``xmin:xmax:in-progress ids``, which moves whenever a writing transaction starts or
        commits) and this handle's count of writing statements. One statement.

        The snapshot is the whole server's: a write in another database, or autovacuum's ANALYZE,
        moves it too. That costs the compiled-context cache a miss, never a stale hit."""
        import zlib

        snapshot = self.c.value("SELECT pg_current_snapshot()::text", default="")
        return (zlib.crc32(snapshot.encode()), self.c.writes)

    def only_own_commits(self, before: tuple[int, int], after: tuple[int, int]) -> bool:
        """The server's snapshot moves with this handle's commits as with anyone's, so only an
        unchanged version is known to hold no other commit."""
        return before == after

    # -- the settings memfold itself keeps ---------------------------------------------------
    def clock_kind(self) -> str | None:
        """The kind of clock that wrote the file (``"logical"``/``"system"``), None for a fresh file."""
        return self.get("clock_kind")

    def logical_tick(self) -> float | None:
        """The tick a logical clock was last advanced to (``MemFold.advance_clock``), or None."""
        value = self.get("logical_tick")
        return None if value is None else float(value)

    def set_logical_tick(self, tick: int) -> None:
        """Remember the tick a logical clock was advanced to."""
        self.set("logical_tick", str(tick))

    def token_counter(self) -> str | None:
        """The id of the token counter recorded for the file, or None."""
        return self.get("token_counter")

    def record_token_counter(self, counter_id: str) -> None:
        """Record the file's token counter unless one is recorded already (the first one stays)."""
        self.add("token_counter", counter_id)

    def newest_stored_time(self) -> float | None:
        """The newest time value stored in turns, memory records and events, or None when all
        three are empty (spans the archive, records and events families)."""
        newest = None
        for table, column in TIME_COLUMNS:
            value = self.c.value(f"SELECT MAX({column}) FROM {table}")
            if value is not None:
                newest = value if newest is None else max(newest, value)
        return newest

    def schema_version(self) -> int:
        """The file's schema version (0 for a file without the ``schema_version`` table)."""
        if self.c.value("SELECT to_regclass('schema_version')") is None:
            return 0
        return self.c.value("SELECT MAX(version) FROM schema_version", default=0)

    def set_read_only(self) -> None:
        """From now on this handle refuses every write with :class:`~memfold.StorageError`, reads
        go on (issue 19: the viewer never changes the database). Transactions begin ``READ ONLY``
        and writing statements are refused before they reach the server."""
        self.c.read_only = True

    def read_only(self) -> bool:
        """True after :meth:`set_read_only` (kept in memory: asking runs no statement)."""
        return self.c.read_only
