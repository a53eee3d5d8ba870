"""Leases: several worker processes on one database run a scheduled job once per fire time.

One row per ``(name, fire_time)`` in the ``leases`` table. A worker that wants to run the job for
a fire time takes the lease in one write transaction; the row's primary key and ``BEGIN
IMMEDIATE`` make exactly one worker win. The holder renews the lease while it works and releases
it with an outcome. If the holder dies, its lease expires (``expires_at``) and another worker may
take it over for the same fire time; a finished lease is never taken again, and a fire time older
than one already claimed is obsolete (coalescing, as APScheduler's ``coalesce=True``).
Every acquisition, takeover and release is logged in the event log (subject ``lease:<name>``).

Times are POSIX seconds from an injected clock (the system clock in production), never read here.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlite_utils

from ..memory.events import log_event
from ..memory.storage import write_transaction


@dataclass(frozen=True)
class LeaseRow:
    """One lease as stored; times in POSIX seconds."""

    name: str
    fire_time: float
    holder: str
    acquired_at: float
    expires_at: float
    finished_at: float | None
    outcome: str | None


def acquire(db: sqlite_utils.Database, name: str, fire_time: float, holder: str, *, ttl_seconds: float,
            now: float) -> bool:
    """Try to take the lease of ``name`` for ``fire_time``.

    :returns: True if ``holder`` now holds it (new, re-entered or taken over from an expired
        holder); False if it is finished, held by another live holder, or a newer fire time
        has been claimed.
    """
    with write_transaction(db):
        newer = db.execute("SELECT 1 FROM leases WHERE name = ? AND fire_time > ? LIMIT 1", [name, fire_time]).fetchone()
        if newer:
            return False
        row = db.execute("SELECT holder, expires_at, finished_at FROM leases WHERE name = ? AND fire_time = ?",
                         [name, fire_time]).fetchone()
        details = {"fire_time": fire_time, "holder": holder, "expires_at": now + ttl_seconds}
        if row is None:
            db.execute("INSERT INTO leases(name, fire_time, holder, acquired_at, expires_at) VALUES (?, ?, ?, ?, ?)",
                       [name, fire_time, holder, now, now + ttl_seconds])
            log_event(db, at=now, kind="lease_acquired", subject=f"lease:{name}", cause=holder, details=details)
            return True
        old_holder, expires_at, finished_at = row
        if finished_at is not None:
            return False
        if old_holder != holder and expires_at > now:
            return False
        db.execute("UPDATE leases SET holder = ?, acquired_at = ?, expires_at = ? WHERE name = ? AND fire_time = ?",
                   [holder, now, now + ttl_seconds, name, fire_time])
        if old_holder != holder:
            log_event(db, at=now, kind="lease_taken_over", subject=f"lease:{name}", cause=holder,
                      details=dict(details, previous_holder=old_holder))
        return True


def renew(db: sqlite_utils.Database, name: str, fire_time: float, holder: str, *, ttl_seconds: float,
          now: float) -> bool:
    """Extend ``holder``'s unfinished lease; False if it lost the lease (expired and taken over)."""
    with write_transaction(db):
        cur = db.execute(
            "UPDATE leases SET expires_at = ? WHERE name = ? AND fire_time = ? AND holder = ? AND finished_at IS NULL",
            [now + ttl_seconds, name, fire_time, holder],
        )
        return cur.rowcount == 1


def release(db: sqlite_utils.Database, name: str, fire_time: float, holder: str, *, now: float, outcome: str) -> bool:
    """Finish ``holder``'s lease with ``outcome`` (``ok``, ``failed``, ``stopped``); False if not held."""
    with write_transaction(db):
        cur = db.execute(
            "UPDATE leases SET finished_at = ?, outcome = ? WHERE name = ? AND fire_time = ? AND holder = ? "
            "AND finished_at IS NULL",
            [now, outcome, name, fire_time, holder],
        )
        if cur.rowcount == 1:
            log_event(db, at=now, kind="lease_released", subject=f"lease:{name}", cause=holder,
                      details={"fire_time": fire_time, "holder": holder, "outcome": outcome})
        return cur.rowcount == 1


def list_leases(db: sqlite_utils.Database, name: str | None = None, limit: int | None = None) -> list[LeaseRow]:
    """Leases by fire time (oldest first); ``limit`` keeps the newest N."""
    sql = "SELECT name, fire_time, holder, acquired_at, expires_at, finished_at, outcome FROM leases"
    params = []
    if name is not None:
        sql += " WHERE name = ?"
        params.append(name)
    sql += " ORDER BY fire_time DESC"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [LeaseRow(*r) for r in reversed(db.execute(sql, params).fetchall())]
