"""Leases: several worker processes on one database run a scheduled job once per fire time.

One row per ``(name, fire_time)`` in the ``leases`` table. A worker that wants to run the job for
a fire time takes the lease in one write transaction; the row's primary key and ``BEGIN
IMMEDIATE`` (on PostgreSQL the lease name's lock and a row lock) make exactly one worker win. The holder renews the lease while it works and releases
it with an outcome. If the holder dies, its lease expires (``expires_at``) and another worker may
take it over for the same fire time; a finished lease is never taken again, and a fire time older
than one already claimed is obsolete (coalescing, as APScheduler's ``coalesce=True``).
Every acquisition, takeover and release is logged in the event log (subject ``lease:<name>``).
The rows live in the storage's runs family (:class:`~memfold.memory.storage.base.RunStorage`);
the decisions (who may take a lease when) are made here.

Times are POSIX seconds from an injected clock (the system clock in production), never read here.
"""

from __future__ import annotations

from ..memory.events import log_event
from ..memory.storage.base import Storage, write_scope
from ..memory.storage.rows import LeaseRow

__all__ = ["LeaseRow", "acquire", "list_leases", "release", "renew"]


def acquire(storage: Storage, name: str, fire_time: float, holder: str, *, ttl_seconds: float,
            now: float) -> bool:
    """Try to take the lease of ``name`` for ``fire_time``.

    :returns: True if ``holder`` now holds it (new, re-entered or taken over from an expired
        holder); False if it is finished, held by another live holder, or a newer fire time
        has been claimed.
    """
    runs = storage.runs
    with storage.transaction(write_scope(leases=[name])):
        if runs.newer_lease_exists(name, fire_time):
            return False
        row = runs.get_lease(name, fire_time)
        details = {"fire_time": fire_time, "holder": holder, "expires_at": now + ttl_seconds}
        if row is None:
            runs.insert_lease(name, fire_time, holder, acquired_at=now, expires_at=now + ttl_seconds)
            log_event(storage, at=now, kind="lease_acquired", subject=f"lease:{name}", cause=holder, details=details)
            return True
        if row.finished_at is not None:
            return False
        if row.holder != holder and row.expires_at > now:
            return False
        runs.take_lease(name, fire_time, holder, acquired_at=now, expires_at=now + ttl_seconds)
        if row.holder != holder:
            log_event(storage, at=now, kind="lease_taken_over", subject=f"lease:{name}", cause=holder,
                      details=dict(details, previous_holder=row.holder))
        return True


def renew(storage: Storage, name: str, fire_time: float, holder: str, *, ttl_seconds: float,
          now: float) -> bool:
    """Extend ``holder``'s unfinished lease; False if it lost the lease (expired and taken over)."""
    with storage.transaction(write_scope(leases=[name])):
        return storage.runs.renew_lease(name, fire_time, holder, expires_at=now + ttl_seconds)


def release(storage: Storage, name: str, fire_time: float, holder: str, *, now: float, outcome: str) -> bool:
    """Finish ``holder``'s lease with ``outcome`` (``ok``, ``failed``, ``stopped``); False if not held."""
    with storage.transaction(write_scope(leases=[name])):
        released = storage.runs.finish_lease(name, fire_time, holder, finished_at=now, outcome=outcome)
        if released:
            log_event(storage, at=now, kind="lease_released", subject=f"lease:{name}", cause=holder,
                      details={"fire_time": fire_time, "holder": holder, "outcome": outcome})
        return released


def list_leases(storage: Storage, name: str | None = None, limit: int | None = None) -> list[LeaseRow]:
    """Leases by fire time (oldest first); ``limit`` keeps the newest N."""
    return storage.runs.list_leases(name, limit)
