"""SQLite: the protected channel (implements :class:`memfold.memory.storage.base.ProtectedStorage`).

The ``protected`` table's triggers (migration 6) refuse edits of a record's text, deletes, and
any state change out of a final state, so a record leaves the channel only by a transition the
engine (:mod:`memfold.window.protected`) asks for, or by erasure (:class:`.erasure.SqliteErasure`).
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from ..rows import ProtectedRecord
from .connection import where_equal
from .db import SqliteDB

#: the columns :func:`_record` reads, in order
PROTECTED_COLUMNS = (
    "id, namespace, conversation_id, kind, text, state, due_at, provenance, labels, source, created_at, "
    "changed_at, supersedes, superseded_by, metadata"
)

#: :data:`PROTECTED_COLUMNS` without the metadata, read as ``'{}'`` (``get_many(metadata=False)``)
BRIEF_COLUMNS = PROTECTED_COLUMNS.replace("superseded_by, metadata", "superseded_by, '{}'")


def _record(row: tuple) -> ProtectedRecord:
    """A :class:`ProtectedRecord` from a row selected with :data:`PROTECTED_COLUMNS`."""
    return ProtectedRecord(
        id=row[0], namespace=row[1], conversation_id=row[2], kind=row[3], text=row[4], state=row[5],
        due_at=row[6], provenance=tuple(json.loads(row[7])), labels=tuple(json.loads(row[8])),
        source=row[9], created_at=row[10], changed_at=row[11], supersedes=row[12], superseded_by=row[13],
        metadata=json.loads(row[14]),
    )


def _metadata_json(metadata: dict[str, Any] | None) -> str:
    return json.dumps(metadata or {}, sort_keys=True, ensure_ascii=False)


class SqliteProtected:
    """The protected channel, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c

    # -- writing -------------------------------------------------------------------------
    def insert(self, *, namespace: str, conversation_id: str | None, kind: str, text: str, state: str,
               due_at: float | None, provenance: Iterable[str], labels: Iterable[str], source: str,
               created_at: float, metadata: dict[str, Any] | None = None) -> int:
        """Insert one validated record (``changed_at`` = ``created_at``); returns its id."""
        cur = self.c.run(
            "INSERT INTO protected(namespace, conversation_id, kind, text, state, due_at, provenance, labels, "
            "source, created_at, changed_at, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [namespace, conversation_id, kind, text, state, due_at, json.dumps(list(provenance)),
             json.dumps(list(labels)), source, created_at, created_at, _metadata_json(metadata)],
        )
        return cur.lastrowid

    def set_state(self, record_id: int, state: str, *, changed_at: float, superseded_by: int | None = None) -> None:
        """Move a record to ``state`` at ``changed_at``; ``superseded_by`` is kept unless given."""
        self.c.run(
            "UPDATE protected SET state = ?, changed_at = ?, superseded_by = COALESCE(?, superseded_by) WHERE id = ?",
            [state, changed_at, superseded_by, record_id],
        )

    def set_supersedes(self, record_id: int, supersedes: int) -> None:
        """Record which record ``record_id`` replaced."""
        self.c.run("UPDATE protected SET supersedes = ? WHERE id = ?", [supersedes, record_id])

    def set_superseded_by(self, record_id: int, superseded_by: int) -> None:
        """Record which record replaced ``record_id``."""
        self.c.run("UPDATE protected SET superseded_by = ? WHERE id = ?", [superseded_by, record_id])

    def set_metadata(self, record_id: int, metadata: dict[str, Any]) -> None:
        """Replace a record's metadata."""
        self.c.run("UPDATE protected SET metadata = ? WHERE id = ?", [_metadata_json(metadata), record_id])

    # -- reading -------------------------------------------------------------------------
    def get(self, record_id: int) -> ProtectedRecord | None:
        """The record with ``record_id``, or ``None``."""
        row = self.c.one(f"SELECT {PROTECTED_COLUMNS} FROM protected WHERE id = ?", [record_id])
        return None if row is None else _record(row)

    def get_many(self, record_ids: Iterable[int], *, lock: bool = False,
                 metadata: bool = True) -> dict[int, ProtectedRecord]:
        """The records with those ids that exist, by id (one statement; ``lock`` changes nothing
        here: a SQLite write holds the whole file; ``metadata=False``: metadata left unread, ``{}``)."""
        ids = sorted(set(record_ids))
        out: dict[int, ProtectedRecord] = {}
        columns = PROTECTED_COLUMNS if metadata else BRIEF_COLUMNS
        for start in range(0, len(ids), 500):  # well under SQLite's bound on parameters
            chunk = ids[start:start + 500]
            rows = self.c.all(f"SELECT {columns} FROM protected WHERE id IN ({','.join('?' * len(chunk))})",
                              chunk)
            out.update((r[0], _record(r)) for r in rows)
        return out

    def list(self, *, namespace: str | None = None, conversation_id: str | None = None,
             state: str | None = None) -> list[ProtectedRecord]:
        """Records in id order, filtered by every argument that is not ``None``."""
        where, params = where_equal(namespace=namespace, conversation_id=conversation_id, state=state)
        rows = self.c.all(f"SELECT {PROTECTED_COLUMNS} FROM protected{where} ORDER BY id", params)
        return [_record(r) for r in rows]

    def active_in_scope(self, namespace: str, conversation_ids: Iterable[str]) -> list[ProtectedRecord]:
        """Active records of ``namespace`` that are namespace-wide or scoped to one of
        ``conversation_ids``, in id order."""
        ids = list(conversation_ids)
        rows = self.c.all(
            f"SELECT {PROTECTED_COLUMNS} FROM protected WHERE namespace = ? AND state = 'active' "
            f"AND (conversation_id IS NULL OR conversation_id IN ({','.join('?' * len(ids))})) ORDER BY id",
            [namespace, *ids],
        )
        return [_record(r) for r in rows]

    def version(self) -> object | None:
        """A value that changes whenever the ``protected`` table may have changed: another
        connection's commit (``PRAGMA data_version``) or this connection's write to it, or
        rollback (:attr:`SqliteDB.protected_changes`). One statement; the channel's rendering is
        cached under it (issue 18, point 4)."""
        with self.c.lock:
            return (self.c.one("PRAGMA data_version")[0], self.c.protected_changes)

    def due_ids(self, at: float) -> list[int]:
        """Ids of active records whose ``due_at`` is at or before ``at``, in id order."""
        rows = self.c.all(
            "SELECT id FROM protected WHERE state = 'active' AND due_at IS NOT NULL AND due_at <= ? ORDER BY id", [at])
        return [r[0] for r in rows]

    def texts_for_family(self, family_id: str) -> list[str]:
        """Texts of non-erased records scoped to a conversation of the family, or namespace-wide in
        a namespace the family's conversations are in (spans ``conversations``; returns protected rows)."""
        rows = self.c.all(
            "SELECT p.text FROM protected p WHERE p.state != 'erased' AND (p.conversation_id IN "
            "(SELECT id FROM conversations WHERE family_id = ?) OR (p.conversation_id IS NULL AND p.namespace IN "
            "(SELECT namespace FROM conversations WHERE family_id = ?)))",
            [family_id, family_id],
        )
        return [r[0] for r in rows]

    def guarded_texts(self, family_id: str, namespace: str) -> list[tuple[int, str]]:
        """``(id, text)`` of non-erased, non-empty records scoped to a conversation of the family or
        namespace-wide in ``namespace``, longest text first, then by id (spans ``conversations``;
        returns protected rows)."""
        rows = self.c.all(
            "SELECT p.id, p.text FROM protected p WHERE p.state != 'erased' AND p.text != '' AND (p.conversation_id IN "
            "(SELECT id FROM conversations WHERE family_id = ?) OR (p.conversation_id IS NULL AND p.namespace = ?)) "
            "ORDER BY length(p.text) DESC, p.id", [family_id, namespace])
        return [(r[0], r[1]) for r in rows]

    def live_provenance(self) -> list[tuple[str, ...]]:
        """The provenance lists of every non-erased record."""
        return [tuple(json.loads(r[0])) for r in self.c.all("SELECT provenance FROM protected WHERE state != 'erased'")]
    # added by wt-cards
    def protected_labels(self, protected_id: int) -> list[str] | None:
        """The labels of a protected record, or ``None`` when there is none (for relabelling)."""
        row = self.c.one("SELECT labels FROM protected WHERE id = ?", [protected_id])
        return None if row is None else json.loads(row[0])
    def set_protected_labels(self, protected_id: int, labels: list[str]) -> None:
        """Replace the labels of a protected record (the caller validates them and logs the change)."""
        self.c.run("UPDATE protected SET labels = ? WHERE id = ?", [json.dumps(labels), protected_id])
    # added by wt-runs (replay report reads)
    def count_all(self) -> int:
        """How many protected records exist (every namespace, every state)."""
        return self.c.value("SELECT COUNT(*) FROM protected", default=0)
    def all_texts(self) -> list[str]:
        """The text of every protected record (every namespace, every state)."""
        return [r[0] for r in self.c.all("SELECT text FROM protected")]
