"""PostgreSQL: the append-only event log (implements :class:`memfold.memory.storage.base.EventStorage`).

The ``events`` table refuses updates (a trigger made by migration 1), so the log cannot be
rewritten; erasure scrubs an event's details only through :class:`.erasure.SqliteErasure`.
"""

from __future__ import annotations

import json
from typing import Any

from ..rows import Event
from .db import where_equal
from .db import PostgresDB


class PostgresEvents:
    """The append-only event log, on one :class:`~memfold.memory.storage.postgres.db.PostgresDB`."""

    def __init__(self, c: PostgresDB) -> None:
        self.c = c

    def append(self, *, at: float, kind: str, subject: str, namespace: str | None = None,
               record_id: int | None = None, cause: str = "", details: dict[str, Any] | None = None) -> int:
        """Append one event; returns its id."""
        cur = self.c.run(
            "INSERT INTO events(at, kind, namespace, subject, record_id, cause, details) VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
            [at, kind, namespace, subject, record_id, cause, json.dumps(details or {}, sort_keys=True)],
        )
        return cur.rows[0][0]

    def list(self, *, namespace: str | None = None, record_id: int | None = None, kind: str | None = None,
             limit: int | None = None) -> list[Event]:
        """Events in the order they happened, optionally filtered; ``limit`` keeps the newest N."""
        where, params = where_equal(namespace=namespace, record_id=record_id, kind=kind)
        sql = "SELECT id, at, kind, namespace, subject, record_id, cause, details FROM events" + where
        sql += " ORDER BY id DESC"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        rows = self.c.all(sql, params)
        return [Event(r[0], r[1], r[2], r[3], r[4], r[5], r[6], json.loads(r[7])) for r in reversed(rows)]
