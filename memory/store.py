"""The typed memory stores over one SQLite table: write, get, list and change status.

Invariant kept here: a record's bytes are never deleted (a trigger refuses DELETE), every status
change is logged in the event log inside the same transaction, and bad input is rejected before
anything is written (DESIGN.md §4.7, §5). The policies that decide *which* status changes happen
(scoring, supersession, eviction) live in their own modules and call this store.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

import sqlite_utils

from .clock import Clock
from .errors import InvalidInput, RecordNotFound
from .events import Event, list_events, log_event
from .records import RECORD_COLUMNS, RECORD_TYPES, STATUSES, MemoryRecord
from .storage import write_transaction
from .validation import check_importance, check_labels, check_name, check_text


def check_record_type(value: object) -> str:
    """:raises InvalidInput: unless ``value`` is one of :data:`RECORD_TYPES`."""
    if value not in RECORD_TYPES:
        raise InvalidInput(f"unknown record type {value!r}: use one of {', '.join(RECORD_TYPES)}")
    return value  # type: ignore[return-value]


def check_status(value: object) -> str:
    """:raises InvalidInput: unless ``value`` is one of :data:`STATUSES`."""
    if value not in STATUSES:
        raise InvalidInput(f"unknown status {value!r}: use one of {', '.join(STATUSES)}")
    return value  # type: ignore[return-value]


class MemoryStore:
    """All typed stores of one database, namespaced per tenant/user.

    :param db: an open, migrated ``sqlite_utils.Database`` (STYLE.md rule 5).
    :param clock: the injected clock; every time column comes from it.
    """

    def __init__(self, db: sqlite_utils.Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    # -- writing -------------------------------------------------------------------------
    def validate(
        self,
        namespace: object,
        type: object,
        content: object,
        *,
        key: object = None,
        importance: object = 0.5,
        labels: object = None,
        provenance: object = None,
        event_time: object = None,
        metadata: object = None,
    ) -> dict[str, Any]:
        """Check a would-be record and return its normalised fields; writes nothing.

        :raises InvalidInput: for an unknown type, empty/non-string content, NUL bytes, lone
            surrogates, importance outside [0, 1] or NaN, or an empty namespace or key.
        """
        fields = {
            "namespace": check_name(namespace, "namespace"),
            "type": check_record_type(type),
            "content": check_text(content, "content"),
            "key": None if key is None else check_name(key, "key"),
            "importance": check_importance(importance),
            "labels": check_labels(labels),
            "provenance": [check_name(str(p), "provenance id") for p in (provenance or [])],
            "event_time": None if event_time is None else self.clock.coerce(event_time),
        }
        if metadata is not None and not isinstance(metadata, dict):
            raise InvalidInput(f"metadata must be a dict, got {type(metadata).__name__}")
        try:
            fields["metadata"] = json.dumps(metadata or {}, sort_keys=True, ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"metadata is not JSON-serialisable: {exc}") from None
        return fields

    def insert(self, fields: dict[str, Any], *, pinned: bool = False, cause: str = "write") -> MemoryRecord:
        """Insert validated ``fields`` as a new active record and log a ``write`` event.

        Call inside :func:`write_transaction`; the write path with policies is :meth:`write`.
        """
        now = self.clock.now()
        cur = self.db.execute(
            "INSERT INTO records(namespace, type, key, content, importance, created_at, written_at, event_time, "
            "status, pinned, provenance, labels, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?)",
            [
                fields["namespace"],
                fields["type"],
                fields["key"],
                fields["content"],
                fields["importance"],
                now,
                now,
                fields["event_time"],
                int(bool(pinned)),
                json.dumps(fields["provenance"]),
                json.dumps(fields["labels"]),
                fields["metadata"],
            ],
        )
        record_id = cur.lastrowid
        log_event(
            self.db,
            at=now,
            kind="write",
            subject=f"record:{record_id}",
            namespace=fields["namespace"],
            record_id=record_id,
            cause=cause,
            details={"type": fields["type"], "key": fields["key"]},
        )
        return self.get(record_id)

    def write(
        self,
        namespace: str,
        type: str,
        content: str,
        *,
        key: str | None = None,
        importance: float = 0.5,
        labels: Iterable[str] | None = None,
        provenance: Iterable[str] | None = None,
        event_time: object = None,
        metadata: dict[str, Any] | None = None,
        pinned: bool = False,
        cause: str = "write",
    ) -> MemoryRecord:
        """Validate and write one record in one transaction.

        :param namespace: tenant/user scope, e.g. ``"acme/dana"``.
        :param type: ``working``, ``semantic``, ``episodic`` or ``procedural``.
        :param key: the slot for supersession, e.g. ``"user.contact_preference"`` (None: no slot).
        :param importance: in [0, 1].
        :param event_time: when the stated thing happened (clock units), if known.
        :returns: the stored :class:`MemoryRecord`.
        :raises InvalidInput: see :meth:`validate`; nothing is written.
        """
        fields = self.validate(
            namespace, type, content, key=key, importance=importance, labels=labels,
            provenance=provenance, event_time=event_time, metadata=metadata,
        )
        with write_transaction(self.db):
            return self.insert(fields, pinned=pinned, cause=cause)

    # -- reading -------------------------------------------------------------------------
    def get(self, record_id: int) -> MemoryRecord:
        """The record with ``record_id``. :raises RecordNotFound: if there is none."""
        if isinstance(record_id, bool) or not isinstance(record_id, int):
            raise InvalidInput(f"record id must be an integer, got {record_id!r}")
        row = self.db.execute(f"SELECT {RECORD_COLUMNS} FROM records WHERE id = ?", [record_id]).fetchone()
        if row is None:
            raise RecordNotFound(f"no memory record with id {record_id}")
        return MemoryRecord.from_row(row)

    def list(
        self,
        namespace: str | None = None,
        type: str | None = None,
        *,
        key: str | None = None,
        include_inactive: bool = False,
        status: str | None = None,
    ) -> list[MemoryRecord]:
        """Records in write order (id). Active only unless ``include_inactive`` or ``status`` is given.

        :raises InvalidInput: for an unknown type or status.
        """
        where, params = [], []
        if namespace is not None:
            where.append("namespace = ?")
            params.append(namespace)
        if type is not None:
            where.append("type = ?")
            params.append(check_record_type(type))
        if key is not None:
            where.append("key = ?")
            params.append(key)
        if status is not None:
            where.append("status = ?")
            params.append(check_status(status))
        elif not include_inactive:
            where.append("status = 'active'")
        sql = f"SELECT {RECORD_COLUMNS} FROM records"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY id"
        return [MemoryRecord.from_row(r) for r in self.db.execute(sql, params).fetchall()]

    def namespaces(self) -> list[str]:
        """Every namespace that has records, sorted."""
        return [r[0] for r in self.db.execute("SELECT DISTINCT namespace FROM records ORDER BY namespace")]

    # -- status changes ------------------------------------------------------------------
    def set_status(self, record_id: int, status: str, *, cause: str, kind: str | None = None) -> MemoryRecord:
        """Change a record's status and log it (kind defaults to the status's verb).

        :raises RecordNotFound: if there is no such record.
        :raises InvalidInput: for an unknown status.
        """
        check_status(status)
        with write_transaction(self.db):
            record = self.get(record_id)
            self.db.execute("UPDATE records SET status = ? WHERE id = ?", [status, record_id])
            log_event(
                self.db,
                at=self.clock.now(),
                kind=kind or {"retired": "retire", "evicted": "evict", "consumed": "consume", "erased": "erase", "active": "status"}[status],
                subject=f"record:{record_id}",
                namespace=record.namespace,
                record_id=record_id,
                cause=cause,
                details={"from": record.status, "to": status},
            )
            return self.get(record_id)

    def events(self, namespace: str | None = None, *, record_id: int | None = None, kind: str | None = None,
               limit: int | None = None) -> list[Event]:
        """The audit log (oldest first), optionally filtered."""
        return list_events(self.db, namespace=namespace, record_id=record_id, kind=kind, limit=limit)


class TypedStore:
    """One typed store (``working``, ``semantic``, ``episodic`` or ``procedural``) of a namespace.

    A thin view over :class:`MemoryStore` with the type (and optionally the namespace) fixed.
    """

    def __init__(self, store: MemoryStore, type: str, namespace: str | None = None) -> None:
        self.store = store
        self.type = check_record_type(type)
        self.namespace = namespace

    def write(self, content: str, *, namespace: str | None = None, **kwargs: Any) -> MemoryRecord:
        """Write a record of this type; see :meth:`MemoryStore.write`."""
        ns = namespace or self.namespace
        if ns is None:
            raise InvalidInput("namespace is required: pass namespace=... or bind the store to one")
        return self.store.write(ns, self.type, content, **kwargs)

    def list(self, *, namespace: str | None = None, **kwargs: Any) -> list[MemoryRecord]:
        """Records of this type; see :meth:`MemoryStore.list`."""
        return self.store.list(namespace or self.namespace, self.type, **kwargs)

    def get(self, record_id: int) -> MemoryRecord:
        """A record of this type by id. :raises RecordNotFound: if missing or of another type."""
        record = self.store.get(record_id)
        if record.type != self.type:
            raise RecordNotFound(f"record {record_id} is {record.type}, not {self.type}")
        return record
