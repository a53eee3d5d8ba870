"""SQLite: file-wide settings (implements :class:`memfold.memory.storage.base.MetaStorage`).

The ``meta`` table holds one text value per key: ``clock_kind`` (written once, when the file is
first opened with a clock; checked by :func:`.connection.open_database`), ``logical_tick`` (the
tick a logical clock was advanced to), ``token_counter`` (the first counter used on the file),
and keys other parts own (the embedding model and dimension). The schema version lives in the
``schema_version`` table the migrations keep.
"""

from __future__ import annotations

from typing import Iterable

from .db import SqliteDB

#: the columns holding a time value, per table, that a logical clock resumes past
TIME_COLUMNS = (("turns", "created_at"), ("records", "written_at"), ("events", "at"))


class SqliteMeta:
    """File-wide settings, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c

    # -- key/values --------------------------------------------------------------------------
    def get(self, key: str) -> str | None:
        """The value stored under ``key``, or None."""
        row = self.c.one("SELECT value FROM meta WHERE key = ?", [key])
        return row[0] if row else None

    def get_many(self, keys: Iterable[str]) -> dict[str, str]:
        """The stored values of those ``keys`` that have one."""
        keys = list(keys)
        if not keys:
            return {}
        marks = ", ".join("?" for _ in keys)
        return dict(self.c.all(f"SELECT key, value FROM meta WHERE key IN ({marks})", keys))

    def set(self, key: str, value: str) -> None:
        """Store ``value`` under ``key``, replacing any value there."""
        self.c.run("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                   [key, value])

    def add(self, key: str, value: str) -> bool:
        """Store ``value`` under ``key`` unless a value is there already; True when it was stored."""
        cur = self.c.run("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO NOTHING", [key, value])
        return cur.rowcount == 1

    def delete(self, keys: Iterable[str]) -> int:
        """Remove those ``keys``; returns how many were there."""
        keys = list(keys)
        if not keys:
            return 0
        marks = ", ".join("?" for _ in keys)
        return self.c.run(f"DELETE FROM meta WHERE key IN ({marks})", keys).rowcount

    def state_version(self) -> tuple[int, int]:
        """A value that changes whenever anything is committed to the file, by this connection
        (its count of changed rows) or another one (``PRAGMA data_version``); a cache key
        (issue 15, point 6: the compiled-context cache). One statement. A rollback moves it too
        (:attr:`SqliteDB.rollbacks`; ``total_changes`` counts rolled back rows as well, so a
        compile made inside a transaction that was then rolled back was served afterwards, round
        15): both counts only grow, so their sum names each state once."""
        with self.c.lock:
            return (self.c.one("PRAGMA data_version")[0], self.c.conn.total_changes + self.c.rollbacks)

    def only_own_commits(self, before: tuple[int, int], after: tuple[int, int]) -> bool:
        """``PRAGMA data_version`` moves only with other connections' commits; inside
        ``writers_held`` no other thread wrote on this one, so an unchanged first part means every
        change counted in the second is the caller's."""
        return before[0] == after[0]

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
        if self.c.one("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'") is None:
            return 0
        return self.c.value("SELECT MAX(version) FROM schema_version", default=0)

    def set_read_only(self) -> None:
        """From now on this connection refuses every write (``PRAGMA query_only``): a write raises
        :class:`~memfold.StorageError`, reads go on (issue 19: the viewer never changes the file)."""
        self.c.run("PRAGMA query_only = ON")
        self._read_only = True

    def read_only(self) -> bool:
        """True after :meth:`set_read_only` (kept in memory: asking runs no statement)."""
        return getattr(self, "_read_only", False)
