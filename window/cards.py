"""Summary cards and their storage (DESIGN.md §1 "card", §4.2-4.3).

Invariants kept here:

* A card is immutable (a SQL trigger refuses any change but the ``stale`` flag) and strictly
  shorter than what it covers (a CHECK constraint and :meth:`CardStore.insert` both refuse it).
* A card and its ordered cover list are written in one transaction, and that transaction
  commits before any catalog row may point at the card (the catalog trigger checks the covers
  exist): archive before splice.
* A card requires the union of its sources' labels; ``stale`` (default 0) marks a card whose
  sources changed, so it can be rebuilt (issue 8 wires that).

Card ids are shown as ``c<id>`` and turn ids as ``t<id>`` wherever both can appear.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable

import sqlite_utils

from ..memory.clock import Clock
from ..memory.errors import CardNotFound, InvalidInput, TurnNotFound
from ..memory.storage import write_transaction
from ..memory.validation import check_id
from .labels import SECRET_LABEL

CARD_COLUMNS = (
    "id, family_id, conversation_id, depth, text, tokens, source_tokens, first_turn_id, last_turn_id, "
    "first_seq, last_seq, start_at, end_at, labels, summarizer, created_at, stale"
)


@dataclass(frozen=True)
class Card:
    """One summary card. ``tokens`` counts ``text``; ``source_tokens`` counts what it covers
    (turn tokens for depth 1, child card text tokens deeper). ``covers`` lists child refs in order
    (``"t12"`` turns or ``"c3"`` cards). ``first_seq``/``last_seq`` give the span in the
    conversation's lineage; ``start_at``/``end_at`` the time range (clock units)."""

    id: int
    family_id: str
    conversation_id: str
    depth: int
    text: str
    tokens: int
    source_tokens: int
    first_turn_id: int
    last_turn_id: int
    first_seq: int
    last_seq: int
    start_at: float
    end_at: float
    labels: tuple[str, ...]
    summarizer: str
    created_at: float
    stale: bool = False
    covers: tuple[str, ...] = ()

    @property
    def ref(self) -> str:
        """``"c<id>"``."""
        return f"c{self.id}"

    def header(self) -> str:
        """The short tag shown before the card's text in a compiled context: ``[c12]`` (its span
        and time range are one ``describe`` away; the tag stays one word for small budgets)."""
        return card_header(self.id)

    def render(self) -> str:
        """The card as the compiled context shows it: header, then text."""
        return f"{self.header()} {self.text}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (``ref`` included)."""
        d = dict(self.__dict__)
        d["labels"] = list(self.labels)
        d["covers"] = list(self.covers)
        d["ref"] = self.ref
        return d


def card_header(card_id: int) -> str:
    """``[c<id>]``: the tag before a card's text in a compiled context."""
    return f"[c{card_id}]"


def parse_ref(ref: object) -> tuple[str, int]:
    """``"c12"`` -> ``("card", 12)``, ``"t34"`` -> ``("turn", 34)``; a bare integer or digit
    string means a card.

    :raises InvalidInput: for anything else.
    """
    if isinstance(ref, bool):
        raise InvalidInput(f"not a card or turn id: {ref!r}")
    if isinstance(ref, int):
        return ("card", ref)
    if isinstance(ref, str):
        text = ref.strip()
        if text.isdigit():
            return ("card", int(text))
        if len(text) > 1 and text[0] in "cCtT" and text[1:].isdigit():
            return ("card" if text[0] in "cC" else "turn", int(text[1:]))
    raise InvalidInput(f"not a card or turn id: {ref!r}: use 'c<number>' for a card or 't<number>' for a turn")


class CardStore:
    """Writes and reads summary cards.

    :param db: an open, migrated database.
    :param clock: the injected clock (``created_at`` of new cards).
    """

    def __init__(self, db: sqlite_utils.Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    def insert(
        self, *, family_id: str, conversation_id: str, depth: int, text: str, tokens: int, children: list[Any],
        summarizer: str,
    ) -> Card:
        """Store a card covering ``children`` and its ordered cover list, in one committed transaction.

        ``children`` are :class:`~memfold.window.archive.Turn` (a depth-1 card covers only turns) or
        :class:`Card`; a deeper card covers cards, and a forced roll-up (see
        :mod:`memfold.window.compactor`) may cover a card and the turns right after it. ``depth``
        must be 1 over turns only, else one more than the deepest child card.

        :raises InvalidInput: if ``children`` is empty, the depth is wrong, or the text is not
            strictly shorter (in tokens) than the children (DESIGN.md §4.3).
        """
        if not children:
            raise InvalidInput("a card must cover at least one item")
        card_depths = [c.depth for c in children if isinstance(c, Card)]
        leaf = not card_depths
        expected = 1 if leaf else max(card_depths) + 1
        if depth != expected:
            raise InvalidInput(f"this card must have depth {expected} (its children's deepest + 1), not {depth}")
        source_tokens = sum(c.tokens for c in children)
        if tokens >= source_tokens:
            raise InvalidInput(
                f"a card must be strictly shorter than its sources: {tokens} tokens >= {source_tokens} source tokens"
            )
        first, last = children[0], children[-1]
        # A card requires the union of its sources' labels (DESIGN.md §1), with one exception: the
        # ``secret`` label of a turn does not pass on, because a secret turn reaches the summarizer
        # only as a pointer (window.protected.summarizer_input), so the card never holds its words.
        # Without this, every card near a PIN exchange would be hidden from ordinary readers.
        labels = sorted({label for c in children for label in c.labels
                         if not (label == SECRET_LABEL and not isinstance(c, Card))})
        span = (
            first.first_turn_id if isinstance(first, Card) else first.id,
            last.last_turn_id if isinstance(last, Card) else last.id,
            first.first_seq if isinstance(first, Card) else first.seq,
            last.last_seq if isinstance(last, Card) else last.seq,
        )
        times = [t for c in children for t in ((c.start_at, c.end_at) if isinstance(c, Card) else (c.created_at,))]
        with write_transaction(self.db):
            cur = self.db.execute(
                "INSERT INTO cards(family_id, conversation_id, depth, text, tokens, source_tokens, first_turn_id, "
                "last_turn_id, first_seq, last_seq, start_at, end_at, labels, summarizer, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [family_id, conversation_id, depth, text, tokens, source_tokens, *span, min(times), max(times),
                 json.dumps(labels), summarizer, self.clock.now()],
            )
            card_id = cur.lastrowid
            self.db.conn.executemany(
                "INSERT INTO card_covers(card_id, position, child_kind, child_id) VALUES (?, ?, ?, ?)",
                [(card_id, i, "card" if isinstance(c, Card) else "turn", c.id) for i, c in enumerate(children)],
            )
        return self.get(card_id)

    def get(self, card_id: int) -> Card:
        """The card with ``card_id``, with its covers. :raises CardNotFound: if there is none."""
        check_id(card_id, "card id")
        row = self.db.execute(f"SELECT {CARD_COLUMNS} FROM cards WHERE id = ?", [card_id]).fetchone()
        if row is None:
            raise CardNotFound(f"no summary card c{card_id}: list cards with 'memfold context' or search for one")
        return self._from_row(row, self.covers(card_id))

    def get_many(self, card_ids: Iterable[int]) -> dict[int, Card]:
        """Cards by id (without their cover lists, which the compiled context does not need)."""
        ids = list(card_ids)
        out: dict[int, Card] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for row in self.db.execute(f"SELECT {CARD_COLUMNS} FROM cards WHERE id IN ({marks})", chunk):
                out[row[0]] = self._from_row(row, ())
        return out

    def covers(self, card_id: int) -> tuple[str, ...]:
        """The card's ordered child refs (``"t12"`` or ``"c3"``)."""
        return tuple(
            ("t" if kind == "turn" else "c") + str(child)
            for kind, child in self.db.execute(
                "SELECT child_kind, child_id FROM card_covers WHERE card_id = ? ORDER BY position", [card_id]
            )
        )

    def parent_of(self, kind: str, item_id: int) -> list[int]:
        """Ids of the cards that cover this turn or card (one per fold that included it)."""
        return [r[0] for r in self.db.execute(
            "SELECT card_id FROM card_covers WHERE child_kind = ? AND child_id = ? ORDER BY card_id", [kind, item_id]
        )]

    def family_cards(self, family_id: str) -> list[Card]:
        """Every card of a family, oldest first, with covers."""
        rows = self.db.execute(f"SELECT {CARD_COLUMNS} FROM cards WHERE family_id = ? ORDER BY id", [family_id]).fetchall()
        return [self._from_row(r, self.covers(r[0])) for r in rows]

    @staticmethod
    def _from_row(row: tuple, covers: tuple[str, ...]) -> Card:
        return Card(
            id=row[0], family_id=row[1], conversation_id=row[2], depth=row[3], text=row[4], tokens=row[5],
            source_tokens=row[6], first_turn_id=row[7], last_turn_id=row[8], first_seq=row[9], last_seq=row[10],
            start_at=row[11], end_at=row[12], labels=tuple(json.loads(row[13])), summarizer=row[14],
            created_at=row[15], stale=bool(row[16]), covers=covers,
        )


def check_turn_exists(db: sqlite_utils.Database, turn_id: int) -> None:
    """:raises TurnNotFound: if no archived turn has ``turn_id``."""
    if db.execute("SELECT 1 FROM turns WHERE id = ?", [turn_id]).fetchone() is None:
        raise TurnNotFound(f"no archived turn t{turn_id}")
