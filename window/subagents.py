"""Subagent receipts (issue 14, point 6; seed note 002): a child conversation that sees only its
brief and hands back a receipt, the conclusion and not the search.

``spawn(brief)`` makes a child conversation in the parent's family (a fork at seq 0: it inherits
no turn, so the child's model sees only the brief). ``finish(receipt)`` folds the child's whole
history into one card whose text is exactly the receipt (in the child's catalog; the family
shares cards), and appends to the parent ONE host turn carrying the receipt and the card's ref,
so the parent's model reads the conclusion and can ``expand`` the card down to the child's
verbatim archive. The child's turns never enter the parent's compiled context: the parent's
catalog holds only its own turns, and the receipt turn names the card instead of quoting them.

Invariant: the child's card, its covers, the child's catalog splice, the parent's receipt turn
and the ``folds`` row commit in one transaction; a child is finished once.
"""

from __future__ import annotations

from typing import Any

from ..memory.errors import IllegalFold
from .archive import Turn
from .folds import HOST_KEY, mechanical_index, write_fold
from .parts import ConversationRef, WindowParts

SPAWN_KEY = "spawned_by"


def spawn(parts: WindowParts, ref: ConversationRef, brief: Any, *, child_id: str | None = None) -> ConversationRef:
    """Start a child conversation of ``ref`` that sees only ``brief`` (its first user turn).

    :param child_id: the child's id (default ``<parent>/sub<n>``).
    :returns: the child's :class:`ConversationRef`.
    :raises IllegalFold: for an empty brief; :raises InvalidInput: for an id in use.
    """
    if not isinstance(brief, str) or not brief.strip():
        raise IllegalFold("a subagent needs a brief: the task it works on, as non-empty text")
    storage = parts.storage
    with storage.transaction():
        n = storage.folds.bump(ref.id, "spawned")
        child = child_id or f"{ref.id}/sub{n}"
        parts.archive.create_conversation(child, ref.namespace, parent_id=ref.id, fork_after_seq=0)
        parts.archive.append_many(child, [{"role": "user", "content": brief.strip(),
                                           "metadata": {SPAWN_KEY: ref.id}}])
    return ConversationRef.load(parts.archive, child)


def finish(parts: WindowParts, child: ConversationRef, receipt: Any) -> dict[str, Any]:
    """Close the child ``child`` with ``receipt``: fold its history into the receipt card and
    append the receipt to the parent as one item (see the module docstring).

    :returns: ``{"parent", "child", "card", "turn", "fold", "child_tokens", "receipt_tokens"}``.
    :raises IllegalFold: when ``child`` was not spawned, is finished already, waits for a tool
        result, or the receipt is empty or not shorter than the child's work; nothing is written.
    """
    if not isinstance(receipt, str) or not receipt.strip():
        raise IllegalFold("the receipt must be non-empty text: the conclusion the parent keeps")
    parent_id = child.parent_id
    first = parts.archive.history(child.id, limit=1, lineage=child.lineage)
    if parent_id is None or not first or first[0].metadata.get(SPAWN_KEY) != parent_id:
        raise IllegalFold(f"conversation {child.id!r} is not a subagent: start one with spawn(brief)")
    parent = ConversationRef.load(parts.archive, parent_id)
    storage = parts.storage
    if any(f.kind == "receipt" and f.index.get("child") == child.id for f in storage.folds.folds(parent.id)):
        raise IllegalFold(f"subagent {child.id!r} is finished already: its receipt is in {parent.id!r}")
    items = parts.catalog(child).items()
    if items[-1].kind == "turn" and items[-1].role == "assistant" and items[-1].has_tool_calls:
        raise IllegalFold(f"subagent {child.id!r} waits for the result of its last tool call: append it first")
    turns = parts.turns([i.item_id for i in items if i.kind == "turn"])
    children = [turns[i.item_id] if i.kind == "turn" else parts.cards.get(i.item_id) for i in items]
    source = sum(c.tokens for c in children)
    tokens = parts.token_counter.count(receipt)
    if tokens >= source:
        raise IllegalFold(f"the receipt ({tokens} tokens) is not shorter than the work it concludes ({source} "
                          "tokens): write the conclusion, not the search")
    index = {**mechanical_index([c for c in children if isinstance(c, Turn)]), "child": child.id}
    with storage.transaction():
        index["parent_seq"] = parts.archive.last_seq(parent.id, lineage=parent.lineage) + 1  # the receipt turn
        card, fold_id = write_fold(parts, parent, "receipt", items, children, receipt.strip(), index,
                                   items[-1].last_seq, catalog_ref=child)
        turn_id = parts.archive.append_many(parent.id, [{
            "role": "user", "name": "memfold",
            "content": f"[receipt from subagent {child.id}; expand {card.ref} for its work] {receipt.strip()}",
            "metadata": {HOST_KEY: {"event": "receipt", "child": child.id, "card": card.ref, "fold": fold_id}},
        }])[0]
    return {"parent": parent.id, "child": child.id, "card": card.ref, "turn": f"t{turn_id}", "fold": fold_id,
            "child_tokens": source, "receipt_tokens": tokens}


__all__ = ["finish", "spawn"]
