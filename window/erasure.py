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
* :meth:`Eraser.vacuum` then has the backend make the bytes leave its files
  (``storage.erasure.vacuum()``: on SQLite FTS5 merges, WAL checkpoints and ``VACUUM`` with
  ``secure_delete``; on PostgreSQL ``VACUUM FULL`` of the tables that held the text), so the
  erased text is nowhere in the database's files (a test greps the bytes on both backends).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from ..memory.clock import Clock
from ..memory.errors import InvalidInput
from ..memory.validation import check_id
from .archive import namespace_exists
from ..memory.events import log_event
from ..memory.search import ERASURES_KEY
from ..memory.storage.base import Storage
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
    """Plans and performs erasures on one storage.

    :param storage: the opened :class:`~memfold.memory.storage.base.Storage`.
    :param clock: the injected clock (event times).
    :param token_counter: re-counts catalog items when stale cards are unfolded.
    """

    def __init__(self, storage: Storage, clock: Clock, token_counter: TokenCounter) -> None:
        self.storage = storage
        self.clock = clock
        self.token_counter = token_counter
        #: called after every committed erasure (the facade drops its compiled-context cache here)
        self.listeners: list[Any] = []

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
        store = self.storage.erasure
        turns: set[int] = set()
        records: set[int] = set()
        protected: set[int] = set()
        for kind, ids, err in (("turn", t_ids, TurnNotFound), ("record", r_ids, RecordNotFound),
                               ("protected", p_ids, ProtectedNotFound)):
            for i in ids:
                if not store.exists(kind, i):
                    raise err(f"no {kind if kind != 'protected' else 'protected record'} with id {i}")
        turns.update(t_ids)
        records.update(r_ids)
        protected.update(p_ids)
        if namespace is not None:
            check_name(namespace, "namespace")
            if not namespace_exists(self.storage, namespace):
                raise NotFound(f"no namespace {namespace!r}: no conversation, memory record or protected record "
                               "belongs to it; nothing erased")
            ns_turns, ns_records, ns_protected = store.namespace_ids(namespace)
            turns.update(ns_turns)
            records.update(ns_records)
            protected.update(ns_protected)
        if conversation_id is not None:
            check_name(conversation_id, "conversation_id")  # 10**400 or '\ud800' broke the look-up
            if not store.conversation_exists(conversation_id):
                raise ConversationNotFound(f"no conversation {conversation_id!r}")
            conv_turns, conv_protected = store.conversation_ids(conversation_id)
            turns.update(conv_turns)
            protected.update(conv_protected)
        # derived content: anything whose provenance cites an erased turn or an erased record
        # (a fact consolidated from an episode cites "record:<id>", issue 15), transitively
        frontier = {f"turn:{t}" for t in turns} | {f"record:{r}" for r in records}
        seen: set[str] = set()
        while frontier:
            seen |= frontier
            citing_records, citing_protected = store.citing_sources(sorted(frontier))
            protected |= citing_protected
            new = citing_records - records
            records |= citing_records
            frontier = {f"record:{r}" for r in new} - seen
        cards: list[int] = []
        if turns and store.has_cards():
            from .staleness import cards_derived_from  # the window's cards exist from migration 3

            cards = cards_derived_from(self.storage, turn_ids=turns)
        return ErasurePlan(
            turns=store.live_ids("turn", turns),
            records=store.live_ids("record", records),
            protected=store.live_ids("protected", protected),
            cards=store.live_card_ids(cards),
        )

    def erase(self, *, namespace: str | None = None, conversation_id: str | None = None,
              turn_ids: Iterable[int] | None = None, record_ids: Iterable[int] | None = None,
              protected_ids: Iterable[int] | None = None, cause: str = "", vacuum: bool = False,
              vacuum_wait: float | None = None) -> ErasurePlan:
        """Erase a scope in one transaction (see the module docstring), then optionally VACUUM.

        Besides the items themselves: the slot keys of erased records (a key may be built from
        content) and the events that logged them are blanked, and the texts of erased protected
        records leave the "this replaces" history of the records that replaced them (issue 15).

        :param cause: why (kept in the event; never put the erased content here).
        :param vacuum: also run :meth:`vacuum` so the bytes leave the file now.
        :param vacuum_wait: seconds :meth:`vacuum` waits for another connection's reader (default 10).
        :returns: the :class:`ErasurePlan` that was carried out.
        :raises InvalidInput: / :raises NotFound: as :meth:`plan`; nothing is written then.
        :raises ErasureIncomplete: with ``vacuum``, when another connection still holds the WAL
            open after the wait: the erasure is committed (hidden everywhere), but its bytes may
            remain until :meth:`vacuum` succeeds.
        """
        store = self.storage.erasure
        store.secure_delete()  # freed pages are zeroed, not left behind (set outside a transaction)
        with self.storage.transaction():
            plan = self.plan(namespace=namespace, conversation_id=conversation_id, turn_ids=turn_ids,
                             record_ids=record_ids, protected_ids=protected_ids)
            now = self.clock.now()
            gone = set(plan.records)
            keys = [k for k in {r.key for r in self.storage.records.get_many(plan.records).values() if r.key}
                    if all(o.id in gone or o.status == "erased" for o in self.storage.records.list(key=k))]
            store.blank_turns(plan.turns)
            store.scrub_replaced_texts(plan.protected)
            store.blank_records(plan.records)
            store.blank_protected(plan.protected, changed_at=now)
            store.blank_cards(plan.cards)
            if plan.cards:
                from .staleness import mark_stale

                mark_stale(self.storage, plan.cards, at=now, cause="erase", counter=self.token_counter)
            store.scrub_events(subjects=[f"record:{r}" for r in plan.records] + [f"protected:{p}" for p in plan.protected]
                               + [f"t{t}" for t in plan.turns], record_ids=plan.records, texts=keys)
            scope = {"namespace": namespace, "conversation": conversation_id}
            log_event(self.storage, at=now, kind="erase", subject=f"erasure:{plan.total}", namespace=namespace,
                      cause=cause, details={**plan.to_dict(), "scope": scope})
            # every searcher, in any process, drops the statistics it read before this erasure
            meta = self.storage.meta
            meta.set(ERASURES_KEY, str(int(meta.get(ERASURES_KEY) or 0) + 1))
        for listener in self.listeners:  # in-memory caches built from erased content (compiled contexts)
            listener()
        if vacuum:
            self.vacuum(wait_seconds=vacuum_wait)
        return plan

    def vacuum(self, *, wait_seconds: float | None = None) -> None:
        """Make erased bytes leave the database's files (the backend's ``erasure.vacuum()``: on
        SQLite FTS5 merges, WAL checkpoints and ``VACUUM`` with ``secure_delete``; on PostgreSQL
        ``VACUUM FULL`` of every table that may have held the text).

        :param wait_seconds: how long to wait for another connection's open reader (default 10 s).
        :raises StorageError: if called inside a transaction.
        :raises ErasureIncomplete: when another connection still holds the WAL open after the wait.
        """
        if wait_seconds is None:
            self.storage.erasure.vacuum()
        else:
            self.storage.erasure.vacuum(wait_seconds=wait_seconds)
