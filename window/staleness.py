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

from ..memory.errors import TurnNotFound
from ..memory.events import log_event
from ..memory.storage.base import Storage
from ..memory.tokens import TokenCounter
from .cards import CardStore
from .catalog import card_item


def cards_derived_from(storage: Storage, *, turn_ids: Iterable[int] = (), card_ids: Iterable[int] = ()) -> list[int]:
    """Ids of every card that covers one of ``turn_ids`` or ``card_ids``, directly or through
    deeper roll-ups (the given cards themselves included), sorted."""
    found: set[int] = set(card_ids)
    frontier = [("turn", t) for t in turn_ids] + [("card", c) for c in card_ids]
    while frontier:
        kind, item = frontier.pop()
        for parent in storage.cards.parents(kind, item):
            if parent not in found:
                found.add(parent)
                frontier.append(("card", parent))
    return sorted(found)


def mark_stale(storage: Storage, card_ids: Iterable[int], *, at: float, cause: str,
               counter: TokenCounter) -> list[int]:
    """Mark cards stale (logging one ``card_stale`` event) and unfold them in every catalog.

    Call inside a write transaction or alone. :returns: the ids newly marked stale.
    """
    ids = sorted(set(card_ids))
    if not ids:
        return []
    with storage.transaction():
        fresh = storage.cards.mark_stale(ids)
        if fresh:
            log_event(storage, at=at, kind="card_stale", subject=f"cards:{len(fresh)}", cause=cause,
                      details={"cards": fresh})
        unfold_stale(storage, counter)
    return fresh


def unfold_stale(storage: Storage, counter: TokenCounter) -> int:
    """Replace every catalog row that points at a stale card by that card's children, recursively,
    so no catalog shows a stale card. :returns: the number of catalog rows unfolded."""
    unfolded = 0
    with storage.transaction():
        while True:
            rows = storage.catalog.stale_cards()
            if not rows:
                return unfolded
            for conversation_id, first_seq, card_id in rows:
                storage.catalog.delete_between(conversation_id, first_seq, first_seq)
                for ref in storage.cards.covers(card_id):
                    child = int(ref[1:])
                    if ref[0] == "t":
                        item = storage.catalog.turn_item(child)
                        if item is None:
                            raise TurnNotFound(f"no archived turn t{child} (covered by card c{card_id})")
                    else:
                        item = card_item(CardStore(storage, None).get(child), counter)  # type: ignore[arg-type]
                    storage.catalog.insert(conversation_id, [item])
                unfolded += 1


def relabel(storage: Storage, ref: str, labels: Iterable[str], *, at: float, cause: str,
            counter: TokenCounter) -> list[int]:
    """Set the labels of a turn (``"t12"``), memory record (``"record:3"``) or protected record
    (``"P5"``), log a ``relabel`` event, and mark every card derived from a relabelled turn stale
    (a card requires the union of its sources' labels, so it must be rebuilt).

    :returns: the card ids newly marked stale.
    :raises InvalidInput: for a bad ref or label. :raises NotFound: for an unknown id.
    """
    from ..memory.errors import InvalidInput, ProtectedNotFound, RecordNotFound
    from ..memory.validation import check_id, check_labels

    if isinstance(labels, str):
        raise InvalidInput(f"labels must be a list of label names, got the string {labels!r}: "
                           f"pass [{labels!r}] (a string would become one label per character)")
    label_list = check_labels(labels)
    if not isinstance(ref, str):
        raise InvalidInput(f"ref must be 't<id>', 'record:<id>' or 'P<id>', got {ref!r}")
    if ref.startswith("t") and (ref[1:].isascii() and ref[1:].isdigit()):
        kind, item, err = "turn", int(ref[1:]), TurnNotFound
        get, put = storage.archive.turn_labels, storage.archive.set_turn_labels
    elif ref.startswith("record:") and (ref[7:].isascii() and ref[7:].isdigit()):
        kind, item, err = "record", int(ref[7:]), RecordNotFound
        get, put = storage.records.record_labels, storage.records.set_record_labels
    elif ref.startswith("P") and (ref[1:].isascii() and ref[1:].isdigit()):
        kind, item, err = "protected", int(ref[1:]), ProtectedNotFound
        get, put = storage.protected.protected_labels, storage.protected.set_protected_labels
    else:
        raise InvalidInput(f"ref must be 't<id>', 'record:<id>' or 'P<id>', got {ref!r}")
    check_id(item, f"{kind} id")  # t99999999999999999999 is no id, and SQLite cannot compare it
    with storage.transaction():
        before = get(item)
        if before is None:
            raise err(f"no {ref} to relabel")
        put(item, label_list)
        log_event(storage, at=at, kind="relabel", subject=ref, cause=cause,
                  details={"from": before, "to": label_list})
        if before != label_list and kind == "turn":
            # a search's in-memory statistics list the turns and cards that require a label once,
            # when read (HybridSearch._docs): counted as an erasure, the change makes every searcher
            # (any process) read them again, so a relabelled turn leaves a large scope's statistics
            from ..memory.search import ERASURES_KEY

            storage.meta.set(ERASURES_KEY, str(int(storage.meta.get(ERASURES_KEY) or 0) + 1))
        if before != label_list and kind in ("turn", "record"):
            propagate_labels(storage, f"{kind}:{item}", before, label_list, at=at, cause=f"relabel {ref}")
        if kind == "turn" and before != label_list:
            return mark_stale(storage, cards_derived_from(storage, turn_ids=[item]), at=at, cause=f"relabel {ref}",
                              counter=counter)
    return []


def _source_labels(storage: Storage, source: str) -> list[str]:
    kind, _, raw = source.partition(":")
    if not (raw.isascii() and raw.isdigit()):
        return []
    got = (storage.archive.turn_labels(int(raw)) if kind == "turn"
           else storage.records.record_labels(int(raw)) if kind == "record" else None)
    return list(got or [])


def propagate_labels(storage: Storage, source: str, before: Iterable[str], after: Iterable[str], *,
                     at: float, cause: str) -> list[str]:
    """Carry a source's relabel to everything derived from it (issue 15, point 1; DESIGN.md
    §4.11): every memory record and protected record whose provenance cites ``source``
    (``"turn:12"``, ``"record:3"``), and, through records, what was derived from them in turn.

    A label the source gained is added to each derived item (``secret`` excepted: what is derived
    from a secret turn was read with its spans masked); a label the source lost is removed unless
    another source of the item still carries it. Each change is logged as a ``relabel`` event.
    Call inside the relabel's transaction. :returns: the refs relabelled (``record:3``, ``P5``).
    """
    from .labels import SECRET_LABEL

    changed: list[str] = []
    frontier = [(source, set(before), set(after))]
    seen: set[str] = {source}
    while frontier:
        src, old, new = frontier.pop()
        added, removed = (new - old) - {SECRET_LABEL}, old - new
        records, protected = storage.erasure.citing_sources([src])
        for kind, ids in (("record", records), ("protected", protected)):
            for i in sorted(ids):
                ref = f"record:{i}" if kind == "record" else f"P{i}"
                item = storage.records.get(i) if kind == "record" else storage.protected.get(i)
                if item is None or getattr(item, "status", getattr(item, "state", "")) == "erased":
                    continue
                others: set[str] = set()
                for p in item.provenance:
                    if p != src:
                        others.update(_source_labels(storage, p))
                current = set(item.labels)
                updated = (current - (removed - others)) | added
                if updated == current:
                    continue
                labels = sorted(updated)
                if kind == "record":
                    storage.records.set_record_labels(i, labels)
                else:
                    storage.protected.set_protected_labels(i, labels)
                log_event(storage, at=at, kind="relabel", subject=ref, cause=cause,
                          details={"from": sorted(current), "to": labels, "derived_from": src})
                changed.append(ref)
                if kind == "record" and ref not in seen:
                    seen.add(ref)
                    frontier.append((ref, current, updated))
    return changed
