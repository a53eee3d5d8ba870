"""The append-only event log: every state change, with the clock time and the cause.

Kinds used across memfold: ``write``, ``refresh``, ``retire``, ``revert``, ``evict``, ``consume``,
``erase``, ``pin``, ``unpin``, ``status`` and later ones added by other parts (``fold``,
``rollup``, ``summarizer_failed``, ...). An event never contains erased content. The storage
refuses updates, so the log cannot be rewritten.
"""

from __future__ import annotations

from typing import Any

from .storage.base import Storage
from .storage.rows import Event
from .validation import check_count, check_id, check_name


def log_event(
    storage: Storage,
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
    return storage.events.append(at=at, kind=kind, subject=subject, namespace=namespace, record_id=record_id,
                                 cause=cause, details=details)


def list_events(
    storage: Storage,
    *,
    namespace: str | None = None,
    record_id: int | None = None,
    kind: str | None = None,
    limit: int | None = None,
) -> list[Event]:
    """Events in the order they happened, optionally filtered; ``limit`` keeps the newest N."""
    if record_id is not None:
        check_id(record_id, "record id")
    if namespace is not None:
        check_name(namespace, "namespace")  # '\udcff' (an undecodable CLI byte) broke the SQL
    if kind is not None:
        check_name(kind, "event kind")
    check_count(limit, "events limit", minimum=1, allow_none=True)
    return storage.events.list(namespace=namespace, record_id=record_id, kind=kind, limit=limit)


__all__ = ["Event", "list_events", "log_event"]
