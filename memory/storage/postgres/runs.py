"""PostgreSQL: consolidation runs, the consumed-source ledger, the turn cursor, leases and the
scheduler's job store (implements :class:`memfold.memory.storage.base.RunStorage`).

Invariants the tables keep (made by migration 4):

* every source (``"record:12"``, ``"turn:5"``) is consumed at most once: ``consolidation_sources``
  has it as primary key, so a second consumption raises
  :class:`~memfold.memory.errors.StorageConflict` and its whole batch rolls back;
* the ledger is append-only (a trigger refuses deletes) and each row lists what its source
  produced, so every episode stays linked to the facts and rules made from it;
* one lease row per ``(name, fire_time)`` (primary key), so exactly one worker inserts it.

The consolidation queue (pending episodes, pending turns, namespaces with work) lives here too:
those reads return ``records`` and ``turns`` rows, but only in the shape the consolidation pass
consumes them and against this family's cursor, so a backend implements them beside the ledger.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...errors import StorageError
from ..rows import CompactionNote, ConsolidationRun, LeaseRow, PendingEpisode, PendingTurn
from .db import where_equal
from .db import PostgresDB, marks

RUN_COLUMNS = ("id, namespace, extractor, trigger, status, started_at, finished_at, batches, episodes_consumed, "
               "turns_consumed, facts_written, rules_written, errors")
LEASE_COLUMNS = "name, fire_time, holder, acquired_at, expires_at, finished_at, outcome"
NOTE_COLUMNS = "generation, conversation_id, namespace, pressure, noted_at, attempts, not_before, last_error"


def _run(row: tuple) -> ConsolidationRun:
    return ConsolidationRun(id=row[0], namespace=row[1], extractor=row[2], trigger=row[3], status=row[4],
                            started_at=row[5], finished_at=row[6], batches=row[7], episodes_consumed=row[8],
                            turns_consumed=row[9], facts_written=row[10], rules_written=row[11],
                            errors=json.loads(row[12]))


class PostgresRuns:
    """Consolidation runs, leases and the scheduler job store, on one :class:`~memfold.memory.storage.postgres.db.PostgresDB`."""

    def __init__(self, c: PostgresDB) -> None:
        self.c = c

    # -- run records -------------------------------------------------------------------------
    def start_run(self, namespace: str, extractor: str, trigger: str, at: float) -> int:
        """Insert a ``running`` run row; returns its id."""
        cur = self.c.run(
            "INSERT INTO consolidation_runs(namespace, extractor, trigger, status, started_at) "
            "VALUES (%s, %s, %s, 'running', %s) RETURNING id",
            [namespace, extractor, trigger, at],
        )
        return cur.rows[0][0]

    def add_batch(self, run_id: int, *, episodes: int, turns: int, facts: int, rules: int) -> None:
        """Add one committed batch's counts to the run."""
        self.c.run(
            "UPDATE consolidation_runs SET batches = batches + 1, episodes_consumed = episodes_consumed + %s, "
            "turns_consumed = turns_consumed + %s, facts_written = facts_written + %s, rules_written = rules_written + %s "
            "WHERE id = %s",
            [episodes, turns, facts, rules, run_id],
        )

    def finish_run(self, run_id: int, status: str, at: float, errors: list[str]) -> None:
        """Close a run with its final status, time and errors."""
        self.c.run("UPDATE consolidation_runs SET status = %s, finished_at = %s, errors = %s WHERE id = %s",
                   [status, at, json.dumps(errors), run_id])

    def abandon_runs(self, trigger: str, at: float, error: str) -> int:
        """Close every ``running`` run of ``trigger`` as ``abandoned`` (its holder died); returns how many."""
        return self.c.run(
            "UPDATE consolidation_runs SET status = 'abandoned', finished_at = %s, "
            "errors = (errors::jsonb || jsonb_build_array(%s::text))::text WHERE trigger = %s AND status = 'running'",
            [at, error, trigger]).rowcount

    def get_run(self, run_id: int) -> ConsolidationRun | None:
        """The run with this id, or None."""
        row = self.c.one(f"SELECT {RUN_COLUMNS} FROM consolidation_runs WHERE id = %s", [run_id])
        return _run(row) if row else None

    def list_runs(self, namespace: str | None = None, limit: int | None = None) -> list[ConsolidationRun]:
        """Runs oldest first, optionally of one namespace; ``limit`` keeps the newest N."""
        where, params = where_equal(namespace=namespace)
        sql = f"SELECT {RUN_COLUMNS} FROM consolidation_runs{where} ORDER BY id DESC"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [_run(r) for r in reversed(self.c.all(sql, params))]

    def count_runs(self) -> int:
        """How many consolidation runs are recorded (every namespace, every status)."""
        return self.c.value("SELECT COUNT(*) FROM consolidation_runs", default=0)

    # -- the ledger --------------------------------------------------------------------------
    def record_consumed(self, source: str, namespace: str, run_id: int, at: float, products: list[int]) -> None:
        """Record that ``source`` was consumed by ``run_id`` and produced ``products`` (record ids).

        :raises StorageConflict: if ``source`` was already consumed (the batch must roll back).
        """
        self.c.run("INSERT INTO consolidation_sources(source, namespace, run_id, consumed_at, products) "
                   "VALUES (%s, %s, %s, %s, %s)",
                   [source, namespace, run_id, at, json.dumps(sorted(set(products)))])

    def consumption(self, source: str) -> dict[str, Any] | None:
        """The ledger row of ``source`` (``source, namespace, run_id, consumed_at, products``), or None."""
        row = self.c.one("SELECT source, namespace, run_id, consumed_at, products FROM consolidation_sources "
                         "WHERE source = %s", [source])
        if row is None:
            return None
        return {"source": row[0], "namespace": row[1], "run_id": row[2], "consumed_at": row[3],
                "products": json.loads(row[4])}

    # -- the turn cursor ---------------------------------------------------------------------
    def turn_cursor(self, namespace: str) -> int:
        """The id of the last archived turn of ``namespace`` already consolidated (0 for none)."""
        row = self.c.one("SELECT last_turn_id FROM consolidation_cursors WHERE namespace = %s", [namespace])
        return row[0] if row else 0

    def set_turn_cursor(self, namespace: str, last_turn_id: int, run_id: int) -> None:
        """Move the namespace's turn cursor to ``last_turn_id`` (set by run ``run_id``)."""
        self.c.run(
            "INSERT INTO consolidation_cursors(namespace, last_turn_id, run_id) VALUES (%s, %s, %s) "
            "ON CONFLICT(namespace) DO UPDATE SET last_turn_id = excluded.last_turn_id, run_id = excluded.run_id",
            [namespace, last_turn_id, run_id],
        )

    # -- the consolidation queue (reads records and turns; see the module docstring) ------------
    def pending_episodes(self, namespace: str, *, after_id: int, horizon: float, limit: int) -> list[PendingEpisode]:
        """Active episodic records of ``namespace`` with id > ``after_id`` written at or before
        ``horizon``, id order, at most ``limit`` (rows of the records family)."""
        rows = self.c.all(
            "SELECT id, content, metadata, event_time, created_at FROM records WHERE namespace = %s AND type = 'episodic' "
            "AND status = 'active' AND id > %s AND created_at <= %s ORDER BY id LIMIT %s",
            [namespace, after_id, horizon, limit],
        )
        return [PendingEpisode(r[0], r[1], json.loads(r[2]), r[3], r[4]) for r in rows]

    def count_active_episodes(self, record_ids: list[int]) -> int:
        """How many of ``record_ids`` are still active episodic records (records family rows)."""
        if not record_ids:
            return 0
        qs = marks(len(record_ids))
        return self.c.value(f"SELECT COUNT(*) FROM records WHERE status = 'active' AND type = 'episodic' "
                            f"AND id IN ({qs})", list(record_ids), default=0)

    def pending_namespaces(self, *, include_turns: bool = False) -> list[str]:
        """Namespaces with active episodic records (and, with ``include_turns``, unerased turns past
        their cursor), sorted (reads records, turns and conversations)."""
        names = {r[0] for r in self.c.all(
            "SELECT DISTINCT namespace FROM records WHERE type = 'episodic' AND status = 'active'")}
        if include_turns:
            names |= {r[0] for r in self.c.all(
                "SELECT DISTINCT c.namespace FROM turns t JOIN conversations c ON c.id = t.conversation_id "
                "LEFT JOIN consolidation_cursors k ON k.namespace = c.namespace "
                "WHERE t.erased = 0 AND t.id > COALESCE(k.last_turn_id, 0)")}
        return sorted(names)

    def pending_turns(self, namespace: str, *, after_id: int, horizon: float, limit: int) -> list[PendingTurn]:
        """Unerased archived turns of ``namespace``'s conversations with id > ``after_id``, created
        at or before ``horizon``, id order, at most ``limit`` (rows of the archive family). A turn
        labelled ``secret`` is returned only when its metadata records secret spans (the pass masks
        them); a secret turn without spans is never read (secrets are not memories, issue 9).

        Read once every write in flight has ended (:meth:`~.db.PostgresDB.quiesced`): turns of
        different conversations commit side by side, so without it a turn could commit after a
        larger id was read, and the caller's cursor (the largest id read) would pass it by."""
        with self.c.quiesced():
            rows = self.c.all(
                "SELECT t.id, t.role, t.content, t.created_at, t.labels, t.metadata FROM turns t "
                "JOIN conversations c ON c.id = t.conversation_id "
                "WHERE c.namespace = %s AND t.erased = 0 AND t.id > %s AND t.created_at <= %s "
                "AND (NOT (t.labels::jsonb ? 'secret') "
                "OR jsonb_typeof(t.metadata::jsonb -> 'secret_spans') = 'array') ORDER BY t.id LIMIT %s",
                [namespace, after_id, horizon, limit],
            )
        return [PendingTurn(r[0], r[1], r[2], r[3], json.loads(r[4]), json.loads(r[5])) for r in rows]

    # -- leases ------------------------------------------------------------------------------
    def newer_lease_exists(self, name: str, fire_time: float) -> bool:
        """True when a lease of ``name`` for a fire time after ``fire_time`` exists."""
        return self.c.one("SELECT 1 FROM leases WHERE name = %s AND fire_time > %s LIMIT 1", [name, fire_time]) is not None

    def get_lease(self, name: str, fire_time: float) -> LeaseRow | None:
        """The lease of ``name`` for ``fire_time``, or None."""
        lock = " FOR UPDATE" if self.c.in_write else ""  # the row stays locked until the taker commits
        row = self.c.one(f"SELECT {LEASE_COLUMNS} FROM leases WHERE name = %s AND fire_time = %s{lock}",
                         [name, fire_time])
        return LeaseRow(*row) if row else None

    def insert_lease(self, name: str, fire_time: float, holder: str, *, acquired_at: float, expires_at: float) -> None:
        """Insert a new, unfinished lease. :raises StorageConflict: if one exists for this fire time."""
        self.c.run("INSERT INTO leases(name, fire_time, holder, acquired_at, expires_at) VALUES (%s, %s, %s, %s, %s)",
                   [name, fire_time, holder, acquired_at, expires_at])

    def take_lease(self, name: str, fire_time: float, holder: str, *, acquired_at: float, expires_at: float) -> None:
        """Give the lease of ``name`` for ``fire_time`` to ``holder`` (re-entry or takeover)."""
        self.c.run("UPDATE leases SET holder = %s, acquired_at = %s, expires_at = %s WHERE name = %s AND fire_time = %s",
                   [holder, acquired_at, expires_at, name, fire_time])

    def renew_lease(self, name: str, fire_time: float, holder: str, *, expires_at: float) -> bool:
        """Extend ``holder``'s unfinished lease to ``expires_at``; False if ``holder`` does not hold it."""
        cur = self.c.run(
            "UPDATE leases SET expires_at = %s WHERE name = %s AND fire_time = %s AND holder = %s AND finished_at IS NULL",
            [expires_at, name, fire_time, holder],
        )
        return cur.rowcount == 1

    def finish_lease(self, name: str, fire_time: float, holder: str, *, finished_at: float, outcome: str) -> bool:
        """Finish ``holder``'s unfinished lease with ``outcome``; False if ``holder`` does not hold it."""
        cur = self.c.run(
            "UPDATE leases SET finished_at = %s, outcome = %s WHERE name = %s AND fire_time = %s AND holder = %s "
            "AND finished_at IS NULL",
            [finished_at, outcome, name, fire_time, holder],
        )
        return cur.rowcount == 1

    def list_leases(self, name: str | None = None, limit: int | None = None) -> list[LeaseRow]:
        """Leases by fire time (oldest first), optionally of one name; ``limit`` keeps the newest N."""
        where, params = where_equal(name=name)
        sql = f"SELECT {LEASE_COLUMNS} FROM leases{where} ORDER BY fire_time DESC"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [LeaseRow(*r) for r in reversed(self.c.all(sql, params))]

    # -- compaction notes (migration 8) -------------------------------------------------------
    def note_compaction(self, conversation_id: str, namespace: str, pressure: int, at: float) -> bool:
        """Leave a note, or update the pressure of the one there (its generation stays); True if new."""
        with self.c.transaction():
            if self.c.one("SELECT 1 FROM compaction_notes WHERE conversation_id = %s", [conversation_id]):
                self.c.run("UPDATE compaction_notes SET pressure = %s WHERE conversation_id = %s",
                           [pressure, conversation_id])
                return False
            self.c.run("INSERT INTO compaction_notes(conversation_id, namespace, pressure, noted_at) VALUES (%s, %s, %s, %s)",
                       [conversation_id, namespace, pressure, at])
            return True

    def compaction_note(self, conversation_id: str) -> CompactionNote | None:
        """The conversation's note, or None."""
        row = self.c.one(f"SELECT {NOTE_COLUMNS} FROM compaction_notes WHERE conversation_id = %s", [conversation_id])
        return CompactionNote(*row) if row else None

    def compaction_notes(self, *, due_at: float | None = None, limit: int | None = None) -> list[CompactionNote]:
        """Notes oldest first; with ``due_at``, only those whose ``not_before`` has passed."""
        sql, params = f"SELECT {NOTE_COLUMNS} FROM compaction_notes", []
        if due_at is not None:
            sql += " WHERE not_before <= %s"
            params.append(due_at)
        sql += " ORDER BY generation"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [CompactionNote(*r) for r in self.c.all(sql, params)]

    def renote_compaction(self, conversation_id: str, *, attempts: int, not_before: float,
                          error: str | None) -> int | None:
        """Give the note a new generation (a new row id) and backoff state; None without a note."""
        with self.c.transaction():
            row = self.c.one("SELECT namespace, pressure, noted_at FROM compaction_notes WHERE conversation_id = %s",
                             [conversation_id])
            if row is None:
                return None
            self.c.run("DELETE FROM compaction_notes WHERE conversation_id = %s", [conversation_id])
            cur = self.c.run("INSERT INTO compaction_notes(conversation_id, namespace, pressure, noted_at, attempts, "
                             "not_before, last_error) VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING generation",
                             [conversation_id, row[0], row[1], row[2], attempts, not_before, error])
            return cur.rows[0][0]

    def drop_compaction_note(self, conversation_id: str, generation: int) -> bool:
        """Delete the note if it is still of ``generation``."""
        cur = self.c.run("DELETE FROM compaction_notes WHERE conversation_id = %s AND generation = %s",
                         [conversation_id, generation])
        return cur.rowcount == 1

    def conversations_without_note(self) -> list[str]:
        """Ids of every conversation with no compaction note, sorted."""
        return [r[0] for r in self.c.all(
            "SELECT id FROM conversations WHERE id NOT IN (SELECT conversation_id FROM compaction_notes) "
            "ORDER BY id COLLATE \"C\"")]

    # -- the scheduler's job store -----------------------------------------------------------
    def ensure_job_store(self, table: str) -> bool:
        """Create APScheduler's ``SQLAlchemyJobStore`` table ``table`` (and its index) if missing,
        in one write transaction, so processes starting together never race to create it.

        The DDL is the one SQLAlchemy emits for the job store on PostgreSQL (``id VARCHAR(191)``
        primary key, ``next_run_time FLOAT`` indexed, ``job_state BYTEA``); once the table exists,
        the job store's own ``create(checkfirst=True)`` at start finds it and creates nothing.

        :returns: True when this call created the table.
        :raises StorageError: for a table name that is not a plain SQL identifier.
        """
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", table):
            raise StorageError(f"bad job store table name {table!r}: use letters, digits and underscores")
        with self.c.transaction():
            if self.c.value("SELECT to_regclass(%s)", [table.lower()]) is not None:
                return False
            self.c.run(f"CREATE TABLE {table} (id VARCHAR(191) NOT NULL, next_run_time FLOAT, "
                       f"job_state BYTEA NOT NULL, PRIMARY KEY (id))")
            self.c.run(f"CREATE INDEX ix_{table}_next_run_time ON {table} (next_run_time)")
            return True
