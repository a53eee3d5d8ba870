"""SQLite: the per-conversation catalog (implements :class:`memfold.memory.storage.base.CatalogStorage`).

A trigger (migration 3) refuses a card row whose card has no covers yet, so a catalog never points
at a card that is not written whole.
"""

from __future__ import annotations

from typing import Sequence

from ..rows import CatalogItem
from .db import SqliteDB


class SqliteCatalog:
    """the per-conversation catalog, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c

    def items(self, conversation_id: str) -> list[CatalogItem]:
        """The conversation's catalog items ordered by ``first_seq``."""
        rows = self.c.all(
            "SELECT kind, item_id, first_seq, last_seq, depth, tokens, role, has_tool_calls FROM catalog_items "
            "WHERE conversation_id = ? ORDER BY first_seq", [conversation_id]
        )
        return [CatalogItem(r[0], r[1], r[2], r[3], r[4], r[5], r[6], bool(r[7])) for r in rows]

    def totals(self, conversation_id: str, glimpse_over: int) -> tuple[int, list[tuple[int, int]], bool]:
        """``(tokens of the cards and of the turns of at most glimpse_over tokens, [(turn_id, tokens)]
        of the larger turns by first_seq, whether any card is in the catalog)``, from aggregates.
        System-role turns count in neither: they are never shown in place (issue 20; the standing
        one is shown in its own section)."""
        row = self.c.one(
            "SELECT COALESCE(SUM(CASE WHEN kind = 'card' OR (tokens <= ? AND role IS NOT 'system') THEN tokens "
            "ELSE 0 END), 0), COALESCE(SUM(kind = 'card'), 0) FROM catalog_items WHERE conversation_id = ?",
            [glimpse_over, conversation_id],
        )
        oversized = self.c.all(
            "SELECT item_id, tokens FROM catalog_items WHERE conversation_id = ? AND kind = 'turn' AND tokens > ? "
            "AND role IS NOT 'system' ORDER BY first_seq", [conversation_id, glimpse_over],
        )
        return row[0], [(r[0], r[1]) for r in oversized], bool(row[1])

    def cover(self, conversation_id: str) -> tuple[int, int | None]:
        """The seq the catalog covers (0 when empty) and the newest seq of the conversation's own
        turns (``None`` when none), in one statement (spans ``catalog_items`` and ``turns``)."""
        row = self.c.one("SELECT (SELECT last_seq FROM catalog_items WHERE conversation_id = ? ORDER BY first_seq "
                         "DESC LIMIT 1), (SELECT MAX(seq) FROM turns WHERE conversation_id = ?)",
                         [conversation_id, conversation_id])
        return (row[0] or 0, row[1])

    def last_seq(self, conversation_id: str) -> int:
        """The newest seq the conversation's catalog covers (0 when empty): the last item's, since
        the items are a contiguous cover in ``first_seq`` order (one step down the primary key,
        where ``MAX(last_seq)`` read every item of the conversation: issue 18, point 4)."""
        return self.c.value("SELECT last_seq FROM catalog_items WHERE conversation_id = ? ORDER BY first_seq DESC "
                            "LIMIT 1", [conversation_id], default=0)

    def insert(self, conversation_id: str, items: Sequence[CatalogItem]) -> None:
        """Add items to the conversation's catalog (the caller keeps the cover contiguous)."""
        self.c.run_many(
            "INSERT INTO catalog_items(conversation_id, first_seq, last_seq, kind, item_id, depth, tokens, role, "
            "has_tool_calls) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(conversation_id, i.first_seq, i.last_seq, i.kind, i.item_id, i.depth, i.tokens, i.role,
              int(i.has_tool_calls)) for i in items],
        )

    def refs_between(self, conversation_id: str, first_seq: int, last_first_seq: int) -> list[tuple[str, int]]:
        """``(kind, item_id)`` of the items whose ``first_seq`` lies in ``first_seq..last_first_seq``, in order."""
        rows = self.c.all(
            "SELECT kind, item_id FROM catalog_items WHERE conversation_id = ? AND first_seq BETWEEN ? AND ? "
            "ORDER BY first_seq", [conversation_id, first_seq, last_first_seq]
        )
        return [(r[0], r[1]) for r in rows]

    def delete_between(self, conversation_id: str, first_seq: int, last_first_seq: int) -> int:
        """Remove the items whose ``first_seq`` lies in ``first_seq..last_first_seq``; returns how many."""
        return self.c.run(
            "DELETE FROM catalog_items WHERE conversation_id = ? AND first_seq BETWEEN ? AND ?",
            [conversation_id, first_seq, last_first_seq],
        ).rowcount

    def stale_cards(self) -> list[tuple[str, int, int]]:
        """``(conversation_id, first_seq, card_id)`` of every catalog item, in any conversation,
        showing a stale card (reads ``cards`` too: it returns catalog rows)."""
        rows = self.c.all(
            "SELECT ci.conversation_id, ci.first_seq, ci.item_id FROM catalog_items ci JOIN cards c "
            "ON ci.kind = 'card' AND c.id = ci.item_id WHERE c.stale = 1"
        )
        return [(r[0], r[1], r[2]) for r in rows]

    def turn_item(self, turn_id: int) -> CatalogItem | None:
        """The catalog item of an archived turn (its seq, tokens, role and whether it has tool calls),
        or ``None`` when there is no such turn (reads ``turns``: it returns a catalog item)."""
        t = self.c.one("SELECT seq, tokens, role, tool_calls FROM turns WHERE id = ?", [turn_id])
        if t is None:
            return None
        return CatalogItem("turn", turn_id, t[0], t[0], 0, t[1], t[2], bool(t[3]))
    # added by wt-runs (replay report reads)
    def card_counts_by_depth(self) -> dict[int, int]:
        """``{depth: card items}`` over every conversation's catalog, by depth."""
        return {d: n for d, n in self.c.all(
            "SELECT depth, COUNT(*) FROM catalog_items WHERE kind = 'card' GROUP BY depth ORDER BY depth")}
