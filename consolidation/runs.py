"""Consolidation's storage: run records, the consumed-source ledger, the turn cursor.

All SQL of the consolidation pass lives here (DESIGN.md §3: SQL behind one module per concept);
the pass in :mod:`memfold.consolidation.consolidate` is policy only. Invariants kept here:

* every source (``"record:12"``, ``"turn:5"``) is consumed at most once: ``consolidation_sources``
  has it as primary key, so a second consumption fails and rolls its whole batch back;
* the ledger is append-only (a trigger refuses deletes) and each row lists what its source
  produced, so every episode stays linked to the facts and rules made from it;
* a run row is written when a pass starts and updated after each committed batch, so a pass that
  dies keeps status ``running`` with the counts of the batches that did commit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import sqlite_utils

RUN_COLUMNS = ("id, namespace, extractor, trigger, status, started_at, finished_at, batches, episodes_consumed, "
               "turns_consumed, facts_written, rules_written, errors")


@dataclass
class ConsolidationRun:
    """What one consolidation pass did (or, for a dry run, would do).

    Times are clock time values. ``id`` is None for a dry run (nothing is recorded).
    ``status``: ``running`` (in progress, or the process died), ``ok``, ``failed`` (an extractor
    or write error stopped it; ``errors`` says why), ``stopped`` (asked to stop between batches).
    ``proposals`` lists what was (or would be) written, in order; ``written`` the record ids the
    write path returned; ``consumed`` the sources marked consumed.
    """

    id: int | None
    namespace: str
    extractor: str
    trigger: str = "manual"
    status: str = "running"
    started_at: float = 0.0
    finished_at: float | None = None
    batches: int = 0
    episodes_consumed: int = 0
    turns_consumed: int = 0
    facts_written: int = 0
    rules_written: int = 0
    errors: list[str] = field(default_factory=list)
    dry_run: bool = False
    proposals: list[Any] = field(default_factory=list)
    written: list[int] = field(default_factory=list)
    consumed: list[str] = field(default_factory=list)

    @classmethod
    def from_row(cls, row: tuple) -> "ConsolidationRun":
        """Build from a row selected with :data:`RUN_COLUMNS` (proposals/written/consumed empty)."""
        return cls(id=row[0], namespace=row[1], extractor=row[2], trigger=row[3], status=row[4], started_at=row[5],
                   finished_at=row[6], batches=row[7], episodes_consumed=row[8], turns_consumed=row[9],
                   facts_written=row[10], rules_written=row[11], errors=json.loads(row[12]))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        d = dict(self.__dict__)
        d["proposals"] = [p.to_dict() if hasattr(p, "to_dict") else p for p in self.proposals]
        return d


# -- run records -------------------------------------------------------------------------------
def start_run(db: sqlite_utils.Database, namespace: str, extractor: str, trigger: str, at: float) -> int:
    """Insert a ``running`` run row and return its id. Call inside a write transaction."""
    cur = db.execute(
        "INSERT INTO consolidation_runs(namespace, extractor, trigger, status, started_at) VALUES (?, ?, ?, 'running', ?)",
        [namespace, extractor, trigger, at],
    )
    return cur.lastrowid


def add_batch(db: sqlite_utils.Database, run_id: int, *, episodes: int, turns: int, facts: int, rules: int) -> None:
    """Add one committed batch's counts to the run (inside that batch's transaction)."""
    db.execute(
        "UPDATE consolidation_runs SET batches = batches + 1, episodes_consumed = episodes_consumed + ?, "
        "turns_consumed = turns_consumed + ?, facts_written = facts_written + ?, rules_written = rules_written + ? "
        "WHERE id = ?",
        [episodes, turns, facts, rules, run_id],
    )


def finish_run(db: sqlite_utils.Database, run_id: int, status: str, at: float, errors: list[str]) -> None:
    """Close a run with its final status and errors."""
    db.execute("UPDATE consolidation_runs SET status = ?, finished_at = ?, errors = ? WHERE id = ?",
               [status, at, json.dumps(errors), run_id])


def get_run(db: sqlite_utils.Database, run_id: int) -> ConsolidationRun | None:
    """The run with this id, or None."""
    row = db.execute(f"SELECT {RUN_COLUMNS} FROM consolidation_runs WHERE id = ?", [run_id]).fetchone()
    return ConsolidationRun.from_row(row) if row else None


def list_runs(db: sqlite_utils.Database, namespace: str | None = None, limit: int | None = None) -> list[ConsolidationRun]:
    """Runs oldest first, optionally of one namespace; ``limit`` keeps the newest N."""
    sql = f"SELECT {RUN_COLUMNS} FROM consolidation_runs"
    params: list[Any] = []
    if namespace is not None:
        sql += " WHERE namespace = ?"
        params.append(namespace)
    sql += " ORDER BY id DESC"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [ConsolidationRun.from_row(r) for r in reversed(db.execute(sql, params).fetchall())]


# -- the ledger ------------------------------------------------------------------------------
def record_consumed(db: sqlite_utils.Database, source: str, namespace: str, run_id: int, at: float,
                    products: list[int]) -> None:
    """Record that ``source`` was consumed by ``run_id`` and produced ``products`` (record ids).

    :raises sqlite3.IntegrityError: if ``source`` was already consumed (the batch must roll back).
    """
    db.execute("INSERT INTO consolidation_sources(source, namespace, run_id, consumed_at, products) VALUES (?, ?, ?, ?, ?)",
               [source, namespace, run_id, at, json.dumps(sorted(set(products)))])


def consumption(db: sqlite_utils.Database, source: str) -> dict[str, Any] | None:
    """The ledger row of ``source`` (run id, time, products), or None if not consumed."""
    row = db.execute("SELECT source, namespace, run_id, consumed_at, products FROM consolidation_sources WHERE source = ?",
                     [source]).fetchone()
    if row is None:
        return None
    return {"source": row[0], "namespace": row[1], "run_id": row[2], "consumed_at": row[3], "products": json.loads(row[4])}


# -- what is pending ------------------------------------------------------------------------------
def pending_episodes(db: sqlite_utils.Database, namespace: str, *, after_id: int, horizon: float,
                     limit: int) -> list[tuple[int, str, str, float | None, float]]:
    """Active episodic records of ``namespace`` written at or before ``horizon``, id order.

    :returns: rows ``(id, content, metadata_json, event_time, created_at)``.
    """
    return db.execute(
        "SELECT id, content, metadata, event_time, created_at FROM records WHERE namespace = ? AND type = 'episodic' "
        "AND status = 'active' AND id > ? AND created_at <= ? ORDER BY id LIMIT ?",
        [namespace, after_id, horizon, limit],
    ).fetchall()


def count_active(db: sqlite_utils.Database, record_ids: list[int]) -> int:
    """How many of ``record_ids`` are still active episodic records."""
    if not record_ids:
        return 0
    marks = ", ".join("?" for _ in record_ids)
    return db.execute(f"SELECT COUNT(*) FROM records WHERE status = 'active' AND type = 'episodic' AND id IN ({marks})",
                      record_ids).fetchone()[0]


def check_namespace_exists(db: sqlite_utils.Database, namespace: str) -> None:
    """Refuse a namespace that holds nothing at all (no conversation, memory record or protected
    record), so a typo such as ``consolidate -n nope`` fails instead of recording an empty "ok"
    run. The nightly job never asks: it only visits namespaces with pending work.

    :raises InvalidInput: for an empty or malformed name. :raises NotFound: for an unknown namespace.
    """
    from ..memory.errors import NotFound
    from ..memory.validation import check_name
    from ..window.archive import namespace_exists

    check_name(namespace, "namespace")
    if not namespace_exists(db, namespace):
        raise NotFound(f"no namespace {namespace!r}: no conversation, memory record or protected record "
                       f"belongs to it; nothing consolidated")


def pending_namespaces(db: sqlite_utils.Database, *, include_turns: bool = False) -> list[str]:
    """Namespaces with active episodic records (and, with ``include_turns``, unread turns), sorted."""
    names = {r[0] for r in db.execute("SELECT DISTINCT namespace FROM records WHERE type = 'episodic' AND status = 'active'")}
    if include_turns:
        names |= {r[0] for r in db.execute(
            "SELECT DISTINCT c.namespace FROM turns t JOIN conversations c ON c.id = t.conversation_id "
            "LEFT JOIN consolidation_cursors k ON k.namespace = c.namespace "
            "WHERE t.erased = 0 AND t.id > COALESCE(k.last_turn_id, 0)")}
    return sorted(names)


def turn_cursor(db: sqlite_utils.Database, namespace: str) -> int:
    """The id of the last archived turn of ``namespace`` already consolidated (0 for none)."""
    row = db.execute("SELECT last_turn_id FROM consolidation_cursors WHERE namespace = ?", [namespace]).fetchone()
    return row[0] if row else 0


def set_turn_cursor(db: sqlite_utils.Database, namespace: str, last_turn_id: int, run_id: int) -> None:
    """Move the namespace's turn cursor forward to ``last_turn_id``."""
    db.execute(
        "INSERT INTO consolidation_cursors(namespace, last_turn_id, run_id) VALUES (?, ?, ?) "
        "ON CONFLICT(namespace) DO UPDATE SET last_turn_id = excluded.last_turn_id, run_id = excluded.run_id",
        [namespace, last_turn_id, run_id],
    )


def pending_turns(db: sqlite_utils.Database, namespace: str, *, after_id: int, horizon: float,
                  limit: int) -> list[tuple[int, str, str, float, str, str]]:
    """Unerased archived turns of ``namespace``'s conversations with id > ``after_id``, created at
    or before ``horizon``, id order. A turn labelled ``secret`` is read only when its metadata
    records secret spans (the pass masks them; :func:`memfold.window.secrets.readable_text`); a
    secret turn without spans is never read (secrets are not memories, issue 9).

    :returns: rows ``(id, role, content, created_at, labels_json, metadata_json)``.
    """
    return db.execute(
        "SELECT t.id, t.role, t.content, t.created_at, t.labels, t.metadata FROM turns t "
        "JOIN conversations c ON c.id = t.conversation_id "
        "WHERE c.namespace = ? AND t.erased = 0 AND t.id > ? AND t.created_at <= ? "
        "AND (NOT EXISTS (SELECT 1 FROM json_each(t.labels) WHERE json_each.value = 'secret') "
        "OR json_type(t.metadata, '$.secret_spans') = 'array') ORDER BY t.id LIMIT ?",
        [namespace, after_id, horizon, limit],
    ).fetchall()
