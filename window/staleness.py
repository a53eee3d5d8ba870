"""Stale summary cards: a card whose sources were erased or relabelled is never served again.

Invariant kept here: a card requires the union of its sources' labels and summarises exactly
its sources' words (DESIGN.md §1 "labels"). When a source turn is erased or its labels change,
that no longer holds, so every card derived from it (its parents, their parents, ...) is marked
``stale``. A stale card is then **unfolded** in every catalog that shows it: the catalog row is
replaced by the card's children (recursively, through stale children), which keeps the catalog a
contiguous cover. The next compaction folds what remains into fresh cards, so a stale card is
rebuilt from what remains and never shown again.
"""

from __future__ import annotations

from typing import Iterable

import sqlite_utils

from ..memory.events import log_event
from ..memory.storage import write_transaction
from ..memory.tokens import TokenCounter
from .cards import CardStore
from .catalog import card_item


def cards_derived_from(db: sqlite_utils.Database, *, turn_ids: Iterable[int] = (), card_ids: Iterable[int] = ()) -> list[int]:
    """Ids of every card that covers one of ``turn_ids`` or ``card_ids``, directly or through
    deeper roll-ups (the given cards themselves included), sorted."""
    if "card_covers" not in db.table_names():
        return []
    found: set[int] = set(card_ids)
    frontier = [("turn", t) for t in turn_ids] + [("card", c) for c in card_ids]
    while frontier:
        kind, item = frontier.pop()
        for (parent,) in db.execute(
            "SELECT card_id FROM card_covers WHERE child_kind = ? AND child_id = ?", [kind, item]
        ).fetchall():
            if parent not in found:
                found.add(parent)
                frontier.append(("card", parent))
    return sorted(found)


def mark_stale(db: sqlite_utils.Database, card_ids: Iterable[int], *, at: float, cause: str,
               counter: TokenCounter) -> list[int]:
    """Mark cards stale (logging one ``card_stale`` event) and unfold them in every catalog.

    Call inside a write transaction or alone. :returns: the ids newly marked stale.
    """
    ids = sorted(set(card_ids))
    if not ids:
        return []
    with write_transaction(db):
        marks = ",".join("?" * len(ids))
        fresh = [r[0] for r in db.execute(f"SELECT id FROM cards WHERE stale = 0 AND id IN ({marks})", ids)]
        if fresh:
            db.execute(f"UPDATE cards SET stale = 1 WHERE id IN ({','.join('?' * len(fresh))})", fresh)
            log_event(db, at=at, kind="card_stale", subject=f"cards:{len(fresh)}", cause=cause,
                      details={"cards": fresh})
        unfold_stale(db, counter)
    return fresh


def unfold_stale(db: sqlite_utils.Database, counter: TokenCounter) -> int:
    """Replace every catalog row that points at a stale card by that card's children, recursively,
    so no catalog shows a stale card. :returns: the number of catalog rows unfolded."""
    if "catalog_items" not in db.table_names():
        return 0
    unfolded = 0
    with write_transaction(db):
        while True:
            rows = db.execute(
                "SELECT ci.conversation_id, ci.first_seq, ci.item_id FROM catalog_items ci JOIN cards c "
                "ON ci.kind = 'card' AND c.id = ci.item_id WHERE c.stale = 1"
            ).fetchall()
            if not rows:
                return unfolded
            for conversation_id, first_seq, card_id in rows:
                db.execute("DELETE FROM catalog_items WHERE conversation_id = ? AND first_seq = ?",
                           [conversation_id, first_seq])
                for kind, child in db.execute(
                    "SELECT child_kind, child_id FROM card_covers WHERE card_id = ? ORDER BY position", [card_id]
                ).fetchall():
                    if kind == "turn":
                        t = db.execute("SELECT seq, tokens, role, tool_calls FROM turns WHERE id = ?", [child]).fetchone()
                        row = [conversation_id, t[0], t[0], "turn", child, 0, t[1], t[2], int(bool(t[3]))]
                    else:
                        card = CardStore(db, None).get(child)  # type: ignore[arg-type]
                        item = card_item(card, counter)
                        row = [conversation_id, item.first_seq, item.last_seq, "card", child, item.depth, item.tokens,
                               None, 0]
                    db.execute(
                        "INSERT INTO catalog_items(conversation_id, first_seq, last_seq, kind, item_id, depth, tokens, "
                        "role, has_tool_calls) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
                unfolded += 1


def relabel(db: sqlite_utils.Database, ref: str, labels: Iterable[str], *, at: float, cause: str,
            counter: TokenCounter) -> list[int]:
    """Set the labels of a turn (``"t12"``), memory record (``"record:3"``) or protected record
    (``"P5"``), log a ``relabel`` event, and mark every card derived from a relabelled turn stale
    (a card requires the union of its sources' labels, so it must be rebuilt).

    :returns: the card ids newly marked stale.
    :raises InvalidInput: for a bad ref or label. :raises NotFound: for an unknown id.
    """
    import json

    from ..memory.errors import InvalidInput, ProtectedNotFound, RecordNotFound, TurnNotFound
    from ..memory.validation import check_labels

    label_list = check_labels(list(labels))
    if not isinstance(ref, str):
        raise InvalidInput(f"ref must be 't<id>', 'record:<id>' or 'P<id>', got {ref!r}")
    if ref.startswith("t") and ref[1:].isdigit():
        table, item, err = "turns", int(ref[1:]), TurnNotFound
    elif ref.startswith("record:") and ref[7:].isdigit():
        table, item, err = "records", int(ref[7:]), RecordNotFound
    elif ref.startswith("P") and ref[1:].isdigit():
        table, item, err = "protected", int(ref[1:]), ProtectedNotFound
    else:
        raise InvalidInput(f"ref must be 't<id>', 'record:<id>' or 'P<id>', got {ref!r}")
    with write_transaction(db):
        row = db.execute(f"SELECT labels FROM {table} WHERE id = ?", [item]).fetchone()
        if row is None:
            raise err(f"no {ref} to relabel")
        db.execute(f"UPDATE {table} SET labels = ? WHERE id = ?", [json.dumps(label_list), item])
        log_event(db, at=at, kind="relabel", subject=ref, cause=cause,
                  details={"from": json.loads(row[0]), "to": label_list})
        if table == "turns" and json.loads(row[0]) != label_list:
            return mark_stale(db, cards_derived_from(db, turn_ids=[item]), at=at, cause=f"relabel {ref}",
                              counter=counter)
    return []
