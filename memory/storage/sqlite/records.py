"""SQLite: typed memory records and store policies (implements :class:`memfold.memory.storage.base.RecordStorage`).

The ``records`` table refuses DELETE (a trigger made by migration 1), so forgetting only ever
changes a row's ``status`` and links; the policy deciding those changes lives in
:mod:`memfold.memory.store` and :mod:`memfold.memory.forgetting`. ``store_policies`` holds one
row per ``(namespace, type)`` store that was given a policy.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Iterable, Sequence

from ..rows import MemoryRecord, ScoreRow, StoredPolicy
from . import connection
from .connection import where_equal
from .db import SqliteDB

logger = logging.getLogger("memfold.storage")

#: the columns :func:`_record` reads, in its order
RECORD_COLUMNS = (
    "id, namespace, type, key, content, importance, created_at, written_at, event_time, last_access_at, "
    "access_count, status, supersedes, superseded_by, pinned, provenance, labels, metadata"
)


def _record(row: Sequence[Any]) -> MemoryRecord:
    """A :class:`MemoryRecord` from a row selected with :data:`RECORD_COLUMNS`."""
    return MemoryRecord(
        id=row[0],
        namespace=row[1],
        type=row[2],
        key=row[3],
        content=row[4],
        importance=row[5],
        created_at=row[6],
        written_at=row[7],
        event_time=row[8],
        last_access_at=row[9],
        access_count=row[10],
        status=row[11],
        supersedes=row[12],
        superseded_by=row[13],
        pinned=bool(row[14]),
        provenance=tuple(json.loads(row[15])),
        labels=tuple(json.loads(row[16])),
        metadata=json.loads(row[17]),
    )


class SqliteRecords:
    """Typed memory records and store policies, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c

    # -- writing -------------------------------------------------------------------------
    def insert(self, *, namespace: str, type: str, key: str | None, content: str, importance: float,
               created_at: float, written_at: float, event_time: float | None, pinned: bool,
               provenance: Sequence[str], labels: Sequence[str], metadata: str) -> int:
        """Insert one active record; ``metadata`` is JSON text. Returns the new id."""
        cur = self.c.run(
            "INSERT INTO records(namespace, type, key, content, importance, created_at, written_at, event_time, "
            "status, pinned, provenance, labels, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?)",
            [namespace, type, key, content, importance, created_at, written_at, event_time, int(bool(pinned)),
             json.dumps(list(provenance)), json.dumps(list(labels)), metadata],
        )
        return cur.lastrowid

    def refresh(self, record_id: int, *, written_at: float, importance: float, event_time: float | None,
                provenance: Sequence[str], labels: Sequence[str], metadata: str, pinned: bool) -> None:
        """Rewrite a restated record's write time, importance, event time, sources, labels,
        metadata (JSON text) and pin; its content and status stay."""
        self.c.run(
            "UPDATE records SET written_at = ?, importance = ?, event_time = ?, provenance = ?, labels = ?, "
            "metadata = ?, pinned = ? WHERE id = ?",
            [written_at, importance, event_time, json.dumps(list(provenance)), json.dumps(list(labels)), metadata,
             int(bool(pinned)), record_id],
        )

    # -- status and pin ------------------------------------------------------------------
    def set_status(self, record_id: int, status: str) -> None:
        """Set one record's status (bytes and links stay)."""
        self.c.run("UPDATE records SET status = ? WHERE id = ?", [status, record_id])

    def retire(self, record_id: int, *, superseded_by: int | None = None) -> None:
        """Set a record to ``retired``; with ``superseded_by``, also link it to its successor."""
        if superseded_by is None:
            self.c.run("UPDATE records SET status = 'retired' WHERE id = ?", [record_id])
        else:
            self.c.run("UPDATE records SET status = 'retired', superseded_by = ? WHERE id = ?",
                       [superseded_by, record_id])

    def set_pinned(self, record_id: int, pinned: bool) -> None:
        """Pin or unpin one record."""
        self.c.run("UPDATE records SET pinned = ? WHERE id = ?", [int(pinned), record_id])

    def touch(self, record_ids: Sequence[int], at: float) -> None:
        """Count one read of each record: ``access_count + 1`` and ``last_access_at = at``.

        While another connection holds the write lock for longer than
        :data:`~.connection.TOUCH_WAIT_MS`, the count is skipped (logged on ``memfold.storage``):
        the read answers instead of waiting the whole busy timeout for bookkeeping."""
        ids = list(record_ids)
        if not ids:
            return
        counted = self.c.run_if_free(
            f"UPDATE records SET access_count = access_count + 1, last_access_at = ? "
            f"WHERE id IN ({', '.join('?' * len(ids))})",
            [at, *ids], wait_ms=connection.TOUCH_WAIT_MS,
        )
        if not counted:
            logger.info("another connection held the write lock for %d ms: %d record access(es) not counted",
                        connection.TOUCH_WAIT_MS, len(ids))

    # -- supersession links --------------------------------------------------------------
    def set_supersedes(self, record_id: int, predecessor: int | None) -> None:
        """Set (or clear) the record this one supersedes."""
        self.c.run("UPDATE records SET supersedes = ? WHERE id = ?", [predecessor, record_id])

    def clear_supersedes(self, record_id: int, *, if_predecessor: int) -> None:
        """Clear ``supersedes`` of ``record_id`` only if it points at ``if_predecessor``."""
        self.c.run("UPDATE records SET supersedes = NULL WHERE id = ? AND supersedes = ?", [record_id, if_predecessor])

    def set_superseded_by(self, record_id: int, successor: int | None) -> None:
        """Set (or clear) the record that supersedes this one."""
        self.c.run("UPDATE records SET superseded_by = ? WHERE id = ?", [successor, record_id])

    def replace_superseded_by(self, record_id: int, *, old: int, new: int) -> None:
        """Point ``superseded_by`` of ``record_id`` at ``new`` only if it pointed at ``old``."""
        self.c.run("UPDATE records SET superseded_by = ? WHERE id = ? AND superseded_by = ?", [new, record_id, old])

    # -- reading -------------------------------------------------------------------------
    def get(self, record_id: int) -> MemoryRecord | None:
        """The record with ``record_id``, or ``None``."""
        row = self.c.one(f"SELECT {RECORD_COLUMNS} FROM records WHERE id = ?", [record_id])
        return None if row is None else _record(row)

    def get_many(self, record_ids: Sequence[int]) -> dict[int, MemoryRecord]:
        """``{id: record}`` for those of ``record_ids`` that exist (one statement)."""
        ids = list(record_ids)
        if not ids:
            return {}
        rows = self.c.all(f"SELECT {RECORD_COLUMNS} FROM records WHERE id IN ({', '.join('?' * len(ids))})", ids)
        return {r[0]: _record(r) for r in rows}

    def list(self, *, namespace: str | None = None, type: str | None = None, key: str | None = None,
             status: str | None = None) -> list[MemoryRecord]:
        """Records matching every filter given (``None``: any), in write order (id)."""
        where, params = where_equal(namespace=namespace, type=type, key=key, status=status)
        return [_record(r) for r in self.c.all(f"SELECT {RECORD_COLUMNS} FROM records{where} ORDER BY id", params)]

    def active_in_slot(self, namespace: str, type: str, key: str) -> list[MemoryRecord]:
        """Active records of one ``(namespace, type, key)`` slot, oldest first (normally at most one)."""
        rows = self.c.all(
            f"SELECT {RECORD_COLUMNS} FROM records WHERE namespace = ? AND type = ? AND key = ? AND status = 'active' "
            "ORDER BY id",
            [namespace, type, key],
        )
        return [_record(r) for r in rows]

    def score_rows(self, namespace: str, type: str) -> list[ScoreRow]:
        """Active records of one store as ``(id, importance, written_at, access_count, pinned)``
        tuples, in no particular order (the scorer's input)."""
        return self.c.all(
            "SELECT id, importance, written_at, access_count, pinned FROM records "
            "WHERE namespace = ? AND type = ? AND status = 'active'",
            [namespace, type],
        )

    def namespaces(self) -> list[str]:
        """Every namespace that has records, sorted."""
        return [r[0] for r in self.c.all("SELECT DISTINCT namespace FROM records ORDER BY namespace")]

    # -- store policies ------------------------------------------------------------------
    def policy(self, namespace: str, type: str) -> StoredPolicy | None:
        """The stored policy of one ``(namespace, type)`` store, or ``None`` if none was set."""
        row = self.c.one(
            "SELECT capacity, half_life, access_weight FROM store_policies WHERE namespace = ? AND type = ?",
            [namespace, type],
        )
        return None if row is None else StoredPolicy(row[0], row[1], row[2])

    def put_policy(self, namespace: str, type: str, *, capacity: int | None, half_life: float | None,
                   access_weight: float | None, updated_at: float) -> None:
        """Create or replace the policy row of one store."""
        self.c.run(
            "INSERT OR REPLACE INTO store_policies(namespace, type, capacity, half_life, access_weight, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [namespace, type, capacity, half_life, access_weight, updated_at],
        )
    # added by wt-cards
    def record_labels(self, record_id: int) -> list[str] | None:
        """The labels of a memory record, or ``None`` when there is none (for relabelling)."""
        row = self.c.one("SELECT labels FROM records WHERE id = ?", [record_id])
        return None if row is None else json.loads(row[0])
    def set_record_labels(self, record_id: int, labels: list[str]) -> None:
        """Replace the labels of a memory record (the caller validates them and logs the change)."""
        self.c.run("UPDATE records SET labels = ? WHERE id = ?", [json.dumps(labels), record_id])
    # added by wt-runs (replay report reads)
    def has_active(self, namespace: str) -> bool:
        """True when ``namespace`` holds at least one active record (one indexed statement)."""
        return self.c.one("SELECT 1 FROM records WHERE namespace = ? AND status = 'active' LIMIT 1",
                          [namespace]) is not None
    def count_records(self, *, type: str | None = None, status: str | None = None) -> int:
        """How many records (every namespace) have this type and status (None: any)."""
        from .connection import where_equal
        where, params = where_equal(type=type, status=status)
        return self.c.value("SELECT COUNT(*) FROM records" + where, params, default=0)
    def count_superseded(self) -> int:
        """How many records have been superseded (``superseded_by`` set)."""
        return self.c.value("SELECT COUNT(*) FROM records WHERE superseded_by IS NOT NULL", default=0)
    def count_consolidated(self, type: str) -> int:
        """How many records of ``type`` a consolidation run wrote (``metadata.consolidation_run`` set)."""
        return self.c.value("SELECT COUNT(*) FROM records WHERE type = ? "
                            "AND json_extract(metadata, '$.consolidation_run') IS NOT NULL", [type], default=0)
    def contents_of_type(self, type: str) -> list[str]:
        """The content of every record of ``type``, whatever its status or namespace."""
        return [r[0] for r in self.c.all("SELECT content FROM records WHERE type = ?", [type])]
