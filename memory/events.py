"""The append-only event log: every state change, with the clock time and the cause.

Kinds used across memfold: ``write``, ``refresh``, ``retire``, ``revert``, ``evict``, ``consume``,
``erase``, ``pin``, ``unpin``, ``status`` and later ones added by other parts (``fold``,
``rollup``, ``summarizer_failed``, ...). An event never contains erased content. The table refuses
updates (a trigger), so the log cannot be rewritten.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from .storage import where_equal
from .validation import check_id


@dataclass(frozen=True)
class Event:
    """One row of the audit log. ``at`` is a time value in the clock's unit."""

    id: int
    at: float
    kind: str
    namespace: str | None
    subject: str
    record_id: int | None
    cause: str
    details: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dict(self.__dict__)


def log_event(
    db: sqlite_utils.Database,
    *,
    at: float,
    kind: str,
    subject: str,
    namespace: str | None = None,
    record_id: int | None = None,
    cause: str = "",
    details: dict[str, Any] | None = None,
) -> int:
    """Append one event and return its id. Call inside the write transaction of the change it logs."""
    cur = db.execute(
        "INSERT INTO events(at, kind, namespace, subject, record_id, cause, details) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [at, kind, namespace, subject, record_id, cause, json.dumps(details or {}, sort_keys=True)],
    )
    return cur.lastrowid


def list_events(
    db: sqlite_utils.Database,
    *,
    namespace: str | None = None,
    record_id: int | None = None,
    kind: str | None = None,
    limit: int | None = None,
) -> list[Event]:
    """Events in the order they happened, optionally filtered; ``limit`` keeps the newest N."""
    if record_id is not None:
        check_id(record_id, "record id")
    where, params = where_equal(namespace=namespace, record_id=record_id, kind=kind)
    sql = "SELECT id, at, kind, namespace, subject, record_id, cause, details FROM events" + where
    sql += " ORDER BY id DESC"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    rows = db.execute(sql, params).fetchall()
    return [Event(r[0], r[1], r[2], r[3], r[4], r[5], r[6], json.loads(r[7])) for r in reversed(rows)]
