"""The archive as a directory tree, for grep-based tools (issue 4, point 8).

Layout written for one conversation under ``DIR/<conversation id>/``::

    catalog.md              the current catalog, in order: one child path per line
    turns/000001-t1.md      each archived turn, verbatim (a small header, then the exact content)
    depth-1/c3.md           each card: header, text, then the paths of its children
    depth-2/c9.md           ...one folder per depth

Paths inside files are relative to the conversation folder, so ``grep -r ORD-3300 DIR`` finds a
turn and the cards above it, and every card file leads down to verbatim turn files. The export is
a copy: the database stays the source of truth.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from ..memory.errors import InvalidInput
from .archive import Turn
from .cards import Card
from .parts import ConversationRef, WindowParts

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def turn_path(turn: Turn) -> str:
    """``turns/<seq:06d>-t<id>.md``."""
    return f"turns/{turn.seq:06d}-t{turn.id}.md"


def card_path(card: Card) -> str:
    """``depth-<d>/c<id>.md``."""
    return f"depth-{card.depth}/c{card.id}.md"


def export_tree(parts: WindowParts, conv: ConversationRef, directory: str | os.PathLike) -> dict[str, int]:
    """Write the conversation's archive and cards under ``directory/<conversation id>/``.

    :returns: ``{"turns": n, "cards": m, "path": ...}`` counts of files written.
    :raises InvalidInput: if ``directory`` exists and is not a directory.
    """
    root = Path(directory)
    if root.exists() and not root.is_dir():
        raise InvalidInput(f"{root} exists and is not a directory: choose another --tree path")
    base = root / (_SAFE.sub("_", conv.id) or "conversation")
    (base / "turns").mkdir(parents=True, exist_ok=True)
    turns = parts.archive.history(conv.id, lineage=conv.lineage)
    paths: dict[str, str] = {}
    for turn in turns:
        paths[f"t{turn.id}"] = turn_path(turn)
        header = f"# t{turn.id} turn {turn.seq} {turn.role}" + (f" ({turn.name})" if turn.name else "")
        extra = ""
        if turn.tool_calls:
            extra += f"tool_calls: {json.dumps(turn.tool_calls, ensure_ascii=False)}\n"
        if turn.tool_call_id:
            extra += f"tool_call_id: {turn.tool_call_id}\n"
        (base / paths[f"t{turn.id}"]).write_text(
            f"{header}\ncreated_at: {turn.created_at}\nsha256: {turn.sha256}\n{extra}\n{turn.content}\n", encoding="utf-8")
    lineage = dict(conv.lineage)
    cards = [c for c in parts.cards.family_cards(conv.family_id)
             if c.conversation_id in lineage and (lineage[c.conversation_id] is None
                                                 or c.last_seq <= lineage[c.conversation_id])]
    for card in cards:
        paths[card.ref] = card_path(card)
    for card in cards:
        (base / f"depth-{card.depth}").mkdir(exist_ok=True)
        children = "\n".join(paths.get(ref, ref) for ref in card.covers)
        (base / paths[card.ref]).write_text(
            f"# {card.ref} depth {card.depth} turns {card.first_seq}-{card.last_seq} "
            f"({card.tokens} tokens from {card.source_tokens}; {card.summarizer})\n\n{card.text}\n\n"
            f"## children\n{children}\n", encoding="utf-8")
    catalog = [paths.get(item.ref, item.ref) for item in parts.catalog(conv).items()]
    (base / "catalog.md").write_text("\n".join(catalog) + "\n", encoding="utf-8")
    return {"turns": len(turns), "cards": len(cards), "path": str(base)}
