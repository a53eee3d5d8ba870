"""PostgreSQL: summary cards and their cover lists (implements :class:`memfold.memory.storage.base.CardStorage`).

The ``cards`` table refuses any change but the ``stale`` flag (and erasure) and any delete (triggers
made by migrations 3 and 5), so a card written here never changes its words.
"""

from __future__ import annotations

import json
from typing import Iterable, Sequence

from ..rows import Card
from .db import PostgresDB, marks
from ..textsearch import tsvector_literal

CARD_COLUMNS = (
    "id, family_id, conversation_id, depth, text, tokens, source_tokens, first_turn_id, last_turn_id, "
    "first_seq, last_seq, start_at, end_at, labels, summarizer, created_at, stale"
)


def _card(row: tuple, covers: tuple[str, ...]) -> Card:
    return Card(
        id=row[0], family_id=row[1], conversation_id=row[2], depth=row[3], text=row[4], tokens=row[5],
        source_tokens=row[6], first_turn_id=row[7], last_turn_id=row[8], first_seq=row[9], last_seq=row[10],
        start_at=row[11], end_at=row[12], labels=tuple(json.loads(row[13])), summarizer=row[14],
        created_at=row[15], stale=bool(row[16]), covers=covers,
    )


class PostgresCards:
    """summary cards and their cover lists, on one :class:`~memfold.memory.storage.postgres.db.PostgresDB`."""

    def __init__(self, c: PostgresDB) -> None:
        self.c = c

    def insert(self, *, family_id: str, conversation_id: str, depth: int, text: str, tokens: int,
               source_tokens: int, first_turn_id: int, last_turn_id: int, first_seq: int, last_seq: int,
               start_at: float, end_at: float, labels: Sequence[str], summarizer: str, created_at: float,
               covers: Sequence[tuple[str, int]]) -> int:
        """Store one card and its ordered cover list (``(kind, id)`` pairs, kind ``"turn"`` or
        ``"card"``); call inside a transaction so both are one write. Returns the card id."""
        cur = self.c.run(
            "INSERT INTO cards(family_id, conversation_id, depth, text, tokens, source_tokens, first_turn_id, "
            "last_turn_id, first_seq, last_seq, start_at, end_at, labels, summarizer, created_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            [family_id, conversation_id, depth, text, tokens, source_tokens, first_turn_id, last_turn_id,
             first_seq, last_seq, start_at, end_at, json.dumps(list(labels)), summarizer, created_at],
        )
        card_id = cur.rows[0][0]
        doc_len, tsv = tsvector_literal(text)
        self.c.run("INSERT INTO cards_fts(id, doc_len, tsv) VALUES (%s, %s, %s::tsvector)", [card_id, doc_len, tsv])
        self.c.run_many(
            "INSERT INTO card_covers(card_id, position, child_kind, child_id) VALUES (%s, %s, %s, %s)",
            [(card_id, i, kind, child) for i, (kind, child) in enumerate(covers)],
        )
        return card_id

    def get(self, card_id: int) -> Card | None:
        """The card with its covers, or ``None`` when there is none."""
        row = self.c.one(f"SELECT {CARD_COLUMNS} FROM cards WHERE id = %s", [card_id])
        if row is None:
            return None
        return _card(row, self.covers(card_id))

    def get_many(self, card_ids: Iterable[int]) -> dict[int, Card]:
        """Cards by id, without their cover lists (ids that do not exist are left out)."""
        ids = list(card_ids)
        out: dict[int, Card] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            qs = marks(len(chunk))
            for row in self.c.all(f"SELECT {CARD_COLUMNS} FROM cards WHERE id IN ({qs})", chunk):
                out[row[0]] = _card(row, ())
        return out

    def covers(self, card_id: int) -> tuple[str, ...]:
        """The card's ordered child refs (``"t12"`` or ``"c3"``)."""
        return tuple(
            ("t" if kind == "turn" else "c") + str(child)
            for kind, child in self.c.all(
                "SELECT child_kind, child_id FROM card_covers WHERE card_id = %s ORDER BY position", [card_id]
            )
        )

    def parents(self, kind: str, item_id: int) -> list[int]:
        """Ids of the cards whose cover list holds this turn (``kind="turn"``) or card, ascending."""
        return [r[0] for r in self.c.all(
            "SELECT card_id FROM card_covers WHERE child_kind = %s AND child_id = %s ORDER BY card_id", [kind, item_id]
        )]

    def family(self, family_id: str) -> list[Card]:
        """Every card of a family, oldest first, with covers."""
        rows = self.c.all(f"SELECT {CARD_COLUMNS} FROM cards WHERE family_id = %s ORDER BY id", [family_id])
        return [_card(r, self.covers(r[0])) for r in rows]

    def mark_stale(self, card_ids: Sequence[int]) -> list[int]:
        """Set the ``stale`` flag of those of ``card_ids`` that are not stale yet; returns those ids."""
        ids = list(card_ids)
        if not ids:
            return []
        qs = marks(len(ids))
        fresh = [r[0] for r in self.c.all(f"SELECT id FROM cards WHERE stale = 0 AND id IN ({qs}) ORDER BY id", ids)]
        if fresh:
            self.c.run(f"UPDATE cards SET stale = 1 WHERE id IN ({marks(len(fresh))})", fresh)
        return fresh

    def next_id(self) -> int:
        """The id the next inserted card will get (from the ``cards`` id sequence; another session may take it first)."""
        row = self.c.one("SELECT last_value, is_called FROM cards_id_seq")
        return row[0] + 1 if row[1] else row[0]
    # added by wt-runs (replay report reads)
    def count_by_depth(self) -> dict[int, int]:
        """``{depth: cards}`` over every card, by depth."""
        return {d: n for d, n in self.c.all("SELECT depth, COUNT(*) FROM cards GROUP BY depth ORDER BY depth")}
    def all_texts(self) -> list[str]:
        """The text of every card (every conversation)."""
        return [r[0] for r in self.c.all("SELECT text FROM cards")]
