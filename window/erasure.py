"""Erasure: remove content everywhere it lives, keep the structure, log that it happened (issue 8, point 6).

Erasure is the one exception to "nothing is ever deleted" (DESIGN.md §4.1). Invariants kept here:

* ``erase`` by namespace, conversation, turn ids, memory record ids or protected ids blanks the
  content of every matching archived turn (``erased 0 -> 1``, the only update the archive
  allows), memory record (status ``erased``), protected row (state ``erased``) and summary card
  derived from an erased turn, in **one** transaction. The SQL triggers of the archive, the card
  store and the embeddings table drop the full-text entries and vectors in the same statement.
* Derived content goes too: memory records and protected rows whose provenance cites an erased
  turn, and every card covering it (the card is blanked and marked stale, so it is unfolded and
  the window is rebuilt from what remains).
* The ``erase`` event names ids and counts, never the content.
* :meth:`Eraser.vacuum` then merges every FTS5 index (dropping deleted postings), checkpoints and
  truncates the WAL, and VACUUMs with ``secure_delete`` on, so the erased text is nowhere in the
  database file or its WAL (a test greps the bytes).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable

import sqlite_utils

from ..memory.clock import Clock
from ..memory.errors import InvalidInput, StorageError
from ..memory.validation import check_id
from .archive import namespace_exists
from ..memory.events import log_event
from ..memory.storage import write_transaction
from ..memory.tokens import TokenCounter
from ..memory.validation import check_name


@dataclass
class ErasurePlan:
    """The ids an erasure will blank (nothing is written while planning)."""

    turns: list[int] = field(default_factory=list)
    records: list[int] = field(default_factory=list)
    protected: list[int] = field(default_factory=list)
    cards: list[int] = field(default_factory=list)

    @property
    def total(self) -> int:
        """How many items in all."""
        return len(self.turns) + len(self.records) + len(self.protected) + len(self.cards)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with ids and counts."""
        return {"turns": self.turns, "records": self.records, "protected": self.protected, "cards": self.cards,
                "counts": {"turns": len(self.turns), "records": len(self.records),
                           "protected": len(self.protected), "cards": len(self.cards)}}


def _ids(values: Iterable[object] | None, what: str) -> list[int]:
    out = []
    for v in values or []:
        out.append(check_id(v, f"{what} id"))
    return out


class Eraser:
    """Plans and performs erasures on one database.

    :param db: an open, migrated database.
    :param clock: the injected clock (event times).
    :param token_counter: re-counts catalog items when stale cards are unfolded.
    """

    def __init__(self, db: sqlite_utils.Database, clock: Clock, token_counter: TokenCounter) -> None:
        self.db = db
        self.clock = clock
        self.token_counter = token_counter

    def plan(self, *, namespace: str | None = None, conversation_id: str | None = None,
             turn_ids: Iterable[int] | None = None, record_ids: Iterable[int] | None = None,
             protected_ids: Iterable[int] | None = None) -> ErasurePlan:
        """Resolve a scope to the ids it would erase, including derived records, protected rows
        and cards. Already-erased items are left out.

        :raises InvalidInput: when no scope is given, or an id is not an integer.
        :raises NotFound: for an unknown conversation, turn, record or protected id, or a namespace
            that nothing belongs to (an erasure that matches nothing fails loudly: a typo must not
            look like a completed erasure).
        """
        from ..memory.errors import ConversationNotFound, NotFound, ProtectedNotFound, RecordNotFound, TurnNotFound

        t_ids, r_ids, p_ids = _ids(turn_ids, "turn"), _ids(record_ids, "record"), _ids(protected_ids, "protected")
        if namespace is None and conversation_id is None and not (t_ids or r_ids or p_ids):
            raise InvalidInput("erase needs a scope: a namespace, a conversation, or turn/record/protected ids")
        db = self.db
        turns: set[int] = set()
        records: set[int] = set()
        protected: set[int] = set()
        for table, ids, err in (("turns", t_ids, TurnNotFound), ("records", r_ids, RecordNotFound),
                                ("protected", p_ids, ProtectedNotFound)):
            for i in ids:
                if db.execute(f"SELECT 1 FROM {table} WHERE id = ?", [i]).fetchone() is None:
                    raise err(f"no {table[:-1] if table != 'protected' else 'protected record'} with id {i}")
        turns.update(t_ids)
        records.update(r_ids)
        protected.update(p_ids)
        if namespace is not None:
            check_name(namespace, "namespace")
            if not namespace_exists(db, namespace):
                raise NotFound(f"no namespace {namespace!r}: no conversation, memory record or protected record "
                               "belongs to it; nothing erased")
            turns.update(r[0] for r in db.execute(
                "SELECT t.id FROM turns t JOIN conversations c ON c.id = t.conversation_id WHERE c.namespace = ?", [namespace]))
            records.update(r[0] for r in db.execute("SELECT id FROM records WHERE namespace = ?", [namespace]))
            protected.update(r[0] for r in db.execute("SELECT id FROM protected WHERE namespace = ?", [namespace]))
        if conversation_id is not None:
            if db.execute("SELECT 1 FROM conversations WHERE id = ?", [conversation_id]).fetchone() is None:
                raise ConversationNotFound(f"no conversation {conversation_id!r}")
            turns.update(r[0] for r in db.execute("SELECT id FROM turns WHERE conversation_id = ?", [conversation_id]))
            protected.update(r[0] for r in db.execute("SELECT id FROM protected WHERE conversation_id = ?",
                                                      [conversation_id]))
        # derived content: anything whose provenance cites an erased turn
        if turns:
            cites = {f"turn:{t}" for t in turns}
            for table, target in (("records", records), ("protected", protected)):
                for rid, prov in db.execute(f"SELECT id, provenance FROM {table} WHERE provenance != '[]'"):
                    if cites & set(json.loads(prov)):
                        target.add(rid)
        cards: list[int] = []
        if turns and "card_covers" in db.table_names():
            from .staleness import cards_derived_from  # the window's cards exist from migration 3

            cards = cards_derived_from(db, turn_ids=turns)
        live = lambda table, col, ids, gone: sorted(  # noqa: E731
            i for i in ids if db.execute(f"SELECT 1 FROM {table} WHERE id = ? AND {col} != ?", [i, gone]).fetchone())
        return ErasurePlan(
            turns=live("turns", "erased", turns, 1),
            records=live("records", "status", records, "erased"),
            protected=live("protected", "state", protected, "erased"),
            cards=[c for c in cards if "erased" in _columns(db, "cards")
                   and db.execute("SELECT 1 FROM cards WHERE id = ? AND erased = 0", [c]).fetchone()],
        )

    def erase(self, *, namespace: str | None = None, conversation_id: str | None = None,
              turn_ids: Iterable[int] | None = None, record_ids: Iterable[int] | None = None,
              protected_ids: Iterable[int] | None = None, cause: str = "", vacuum: bool = False) -> ErasurePlan:
        """Erase a scope in one transaction (see the module docstring), then optionally VACUUM.

        :param cause: why (kept in the event; never put the erased content here).
        :param vacuum: also run :meth:`vacuum` so the bytes leave the file now.
        :returns: the :class:`ErasurePlan` that was carried out.
        :raises InvalidInput: / :raises NotFound: as :meth:`plan`; nothing is written then.
        """
        if not self.db.conn.in_transaction:
            self.db.execute("PRAGMA secure_delete = ON")  # freed pages are zeroed, not left behind
        with write_transaction(self.db):
            plan = self.plan(namespace=namespace, conversation_id=conversation_id, turn_ids=turn_ids,
                             record_ids=record_ids, protected_ids=protected_ids)
            now = self.clock.now()
            db = self.db
            for t in plan.turns:
                db.execute("UPDATE turns SET content = '', tool_calls = NULL, name = NULL, metadata = '{}', "
                           "sha256 = 'erased', erased = 1 WHERE id = ? AND erased = 0", [t])
            for r in plan.records:
                db.execute("UPDATE records SET content = '', metadata = '{}', status = 'erased' WHERE id = ?", [r])
            for p in plan.protected:
                db.execute("UPDATE protected SET text = '', metadata = '{}', state = 'erased', changed_at = ? "
                           "WHERE id = ?", [now, p])
            for c in plan.cards:
                db.execute("UPDATE cards SET text = '', tokens = 0, erased = 1 WHERE id = ?", [c])
            if plan.cards:
                from .staleness import mark_stale

                mark_stale(db, plan.cards, at=now, cause="erase", counter=self.token_counter)
            scope = {"namespace": namespace, "conversation": conversation_id}
            log_event(db, at=now, kind="erase", subject=f"erasure:{plan.total}", namespace=namespace,
                      cause=cause, details={**plan.to_dict(), "scope": scope})
        if vacuum:
            self.vacuum()
        return plan

    def vacuum(self) -> None:
        """Make erased bytes leave the file: merge every FTS5 index (dropping deleted postings),
        checkpoint and truncate the WAL, VACUUM with ``secure_delete`` on, truncate the WAL again.

        :raises StorageError: if called inside a transaction or the database is busy.
        """
        conn = self.db.conn
        if conn.in_transaction:
            raise StorageError("vacuum cannot run inside a transaction: call it after the erasure commits")
        fts = [r[0] for r in self.db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%USING fts5%'")]
        with write_transaction(self.db):
            for name in fts:
                self.db.execute(f'INSERT INTO "{name}"("{name}") VALUES (\'optimize\')')
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _columns(db: sqlite_utils.Database, table: str) -> set[str]:
    return {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
