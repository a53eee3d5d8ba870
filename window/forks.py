"""Forks and new sessions: a conversation that starts from another's state and then diverges (issue 15, point 5).

Invariant kept here (DESIGN.md §4.12): a fork and its parent never change or read each other's
state after the fork point. How:

* **Made in one transaction, complete at birth.** :func:`fork_conversation` creates the fork's
  row, seeds its catalog from the parent's catalog at the fork point, copies the protected
  records in force for the parent (its own and its ancestors' within the fork) as records scoped
  to the fork, and records the newest card id of the family (the fork's *card mark*). Nothing of
  the fork is built lazily from the parent later, so a fold or a withdrawal the parent makes
  afterwards never reaches it.
* **Reads stop at the fork point.** The fork sees an ancestor's turns up to the fork point (its
  lineage) and an ancestor's cards only when they existed at the fork (id at most the card
  mark) and end by the fork point (:func:`card_visible`); the parent never sees the fork's turns
  or cards (they are not in its lineage). Withdrawals and supersessions in the fork act on the
  fork's copies of the protected records, never on the parent's.
* **Quoted material stays where it was quoted.** A turn marked ``metadata["quoted_from"]`` is
  seen only in the conversation that appended it (:func:`turn_visible`), never in a fork's
  context, search, describe or expand.
* **Cost independent of history length.** Seeding copies the parent's catalog up to the fork
  point (a compacted catalog is a handful of cards and the hot tail). The one card that straddles
  the fork point is expanded one level: its children that end by the fork point are kept, and the
  rest up to the fork point is backfilled with raw turns (seed note 000), so no deeper expansion
  and no scan of the history is needed.
* **Namespace facts stay shared by design**: memory records are about the user, not the thread,
  so a fork in its parent's namespace reads and writes the same facts. ``fork(namespace=...)``
  gives the fork its own namespace, seeded with a copy of the parent namespace's active records
  (each citing ``record:<id>`` it came from) and its namespace-wide protected records.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..memory.storage.rows import CatalogItem
from ..memory.validation import check_name
from .catalog import card_item, turn_item
from .parts import ConversationRef, WindowParts

#: the meta key holding a fork's card mark: the newest card id of the family when it was made
CARD_MARK_KEY = "fork_card_mark:{}"


def card_mark(parts_or_storage: Any, conversation_id: str) -> int | None:
    """The card mark recorded for a fork (``None`` for a root, or a fork made before marks)."""
    storage = getattr(parts_or_storage, "storage", parts_or_storage)
    raw = storage.meta.get(CARD_MARK_KEY.format(conversation_id))
    return None if raw is None else int(raw)


def turn_visible(ref: ConversationRef, turn: Any) -> bool:
    """True when ``turn`` is part of what the conversation ``ref`` may show: in its lineage (an
    ancestor's turn up to the fork point) and, for a quoted turn, appended by this very
    conversation (DESIGN.md §4.12; seed note 000)."""
    limits = dict(ref.lineage)
    if turn.conversation_id not in limits:
        return False
    upto = limits[turn.conversation_id]
    if upto is not None and turn.seq > upto:
        return False
    if (turn.metadata or {}).get("quoted_from") is not None and turn.conversation_id != ref.id:
        return False
    return True


def card_visible(ref: ConversationRef, card: Any) -> bool:
    """True when ``card`` belongs to what ``ref`` may show: made by a conversation of its lineage,
    ending by that ancestor's fork point, existing when the fork was made (see the module
    docstring), and not stale."""
    if getattr(card, "stale", False):
        return False
    limits = dict(ref.lineage)
    if card.conversation_id not in limits:
        return False
    upto = limits[card.conversation_id]
    if upto is not None and card.last_seq > upto:
        return False
    mark = ref.card_marks.get(card.conversation_id) if ref.card_marks else None
    return mark is None or card.id <= mark


def _seed_items(parts: WindowParts, parent: ConversationRef, at: int) -> list[CatalogItem]:
    """The fork's first catalog: the parent's items up to ``at``; the one card straddling ``at``
    expanded one level, the rest backfilled with raw turns up to ``at``."""
    catalog = parts.catalog(parent)
    out: list[CatalogItem] = []
    for item in catalog.items():
        if item.first_seq > at:
            break
        if item.last_seq <= at:
            out.append(item)
            continue
        # the one item that straddles the fork point (a turn never does: it is one seq)
        start = item.first_seq
        for ref in parts.cards.covers(item.item_id):
            child = (turn_item(parts.archive.get(int(ref[1:]))) if ref[0] == "t"
                     else card_item(parts.cards.get(int(ref[1:])), parts.token_counter))
            if child.last_seq > at:
                break
            out.append(child)
            start = child.last_seq + 1
        out.extend(_raw_turns(parts, parent, start, at))
        break
    return out


def _raw_turns(parts: WindowParts, parent: ConversationRef, first_seq: int, last_seq: int) -> list[CatalogItem]:
    """Turn items of the parent's lineage with ``first_seq <= seq <= last_seq`` (an indexed range read)."""
    if first_seq > last_seq:
        return []
    items: list[CatalogItem] = []
    for conv, upto in parent.lineage:
        hi = last_seq if upto is None else min(upto, last_seq)
        if hi >= first_seq:
            items.extend(turn_item(t) for t in parts.storage.archive.conversation_turns(
                conv, after_seq=first_seq - 1, upto_seq=hi))
    return items


def _copy_protected(parts: WindowParts, fork: ConversationRef, parent_namespace: str, *, whole: bool,
                    with_namespace: bool) -> list[int]:
    """Copy the protected records in force for the fork at its birth (the parent's and its
    ancestors' records from the turns it shares; with ``whole``, a fork at the parent's end,
    also the manual ones) into the fork's own scope, so what the fork does to them never reaches
    the parent; with ``with_namespace`` (a fork in another namespace) the parent namespace's
    namespace-wide records too."""
    records = parts.protected.active_for(fork.id, namespace=parent_namespace, lineage=fork.lineage, inherit=True,
                                         inherit_manual=whole)
    out = []
    for rec in records:
        if rec.conversation_id is None and not with_namespace:
            continue  # namespace-wide: shared by design, not copied
        meta = {k: v for k, v in rec.metadata.items() if k not in ("replaces", "replaces_text")}
        meta["forked_from"] = rec.id
        copy = parts.protected.add(rec.text, kind=rec.kind, conversation_id=fork.id, namespace=fork.namespace,
                                   due_at=rec.due_at, provenance=list(rec.provenance), labels=list(rec.labels),
                                   source=rec.source, metadata=meta, cause=f"fork of {fork.parent_id}")
        out.append(copy.id)
    return out


def _copy_namespace(parts: WindowParts, source_ns: str, target_ns: str, at: float) -> int:
    """Seed a fork's own namespace with the active records of ``source_ns`` (each citing the
    record it copies). :returns: how many were copied."""
    storage = parts.storage
    copied = 0
    for rec in storage.records.list(namespace=source_ns, status="active"):
        storage.records.insert(namespace=target_ns, type=rec.type, key=rec.key, content=rec.content,
                               importance=rec.importance, created_at=at, written_at=rec.written_at,
                               event_time=rec.event_time, pinned=rec.pinned,
                               provenance=[f"record:{rec.id}"], labels=list(rec.labels),
                               metadata=json.dumps({**rec.metadata, "forked_from": rec.id}, sort_keys=True,
                                                   ensure_ascii=False))
        copied += 1
    return copied


def fork_conversation(parts: WindowParts, parent: ConversationRef, new_id: str, *, at: int | None = None,
                      namespace: str | None = None) -> dict[str, Any]:
    """Make ``new_id`` a fork of ``parent`` after seq ``at`` (default: its end), in one transaction.

    :param at: the fork sees the parent's turns ``1..at`` (``0``: none, a new session).
    :param namespace: the fork's own namespace (default: the parent's, whose facts it then shares).
    :returns: ``{"id", "fork_after_seq", "catalog_items", "protected_copied", "records_copied",
        "card_mark"}``: what the fork was made with (the rows written, for benchmarks).
    :raises InvalidInput: for an id in use, a bad namespace, or ``at`` outside ``0..`` the last seq.
    """
    from ..memory.errors import InvalidInput

    ns = parent.namespace if namespace is None else check_name(namespace, "namespace")
    storage = parts.storage
    with storage.transaction():
        if ns != parent.namespace and storage.archive.namespace_exists(ns):
            raise InvalidInput(f"namespace {ns!r} is in use: a fork's own namespace must be new "
                               "(leave namespace out to share the parent's)")
        row = parts.archive.create_conversation(new_id, ns, parent_id=parent.id, fork_after_seq=at)
        point = row["fork_after_seq"]
        mark = storage.cards.next_id() - 1
        storage.meta.set(CARD_MARK_KEY.format(new_id), str(mark))
        items = _seed_items(parts, parent, point) if point else []
        if items:
            storage.catalog.insert(new_id, items)
        other_ns = ns != parent.namespace
        records = _copy_namespace(parts, parent.namespace, ns, parts.clock.now()) if other_ns else 0
        fork_ref = ConversationRef.load(parts.archive, new_id)
        parent_last = parts.archive.last_seq(parent.id, lineage=parent.lineage)
        protected = _copy_protected(parts, fork_ref, parent.namespace, whole=point == parent_last and point > 0,
                                    with_namespace=other_ns)
    return {"id": new_id, "fork_after_seq": point, "catalog_items": len(items), "protected_copied": len(protected),
            "records_copied": records, "card_mark": mark}


def fork_summary(info: Mapping[str, Any]) -> str:
    """One human line for a fork (the CLI prints it)."""
    return (f"forked {info['id']} after seq {info['fork_after_seq']}: {info['catalog_items']} catalog items, "
            f"{info['protected_copied']} protected records copied, {info['records_copied']} memory records copied")
