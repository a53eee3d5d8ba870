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

from typing import Any, Iterable

from ..memory.clock import Clock
from ..memory.errors import CardNotFound, InvalidInput
from ..memory.storage.base import Storage, write_scope
from ..memory.storage.rows import Card, card_header
from ..memory.validation import check_id
from .labels import SECRET_LABEL


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
        if text.isascii() and text.isdigit():  # isdigit() alone is true of '²', which int() refuses
            return ("card", int(text))
        if len(text) > 1 and text[0] in "cCtT" and text[1:].isascii() and text[1:].isdigit():
            return ("card" if text[0] in "cC" else "turn", int(text[1:]))
    raise InvalidInput(f"not a card or turn id: {ref!r}: use 'c<number>' for a card or 't<number>' for a turn")


class CardStore:
    """Writes and reads summary cards.

    :param storage: the opened storage.
    :param clock: the injected clock (``created_at`` of new cards).
    """

    def __init__(self, storage: Storage, clock: Clock) -> None:
        self.storage = storage
        self.clock = clock

    def insert(
        self, *, family_id: str, conversation_id: str, depth: int, text: str, tokens: int, children: list[Any],
        summarizer: str,
    ) -> Card:
        """Store a card covering ``children`` and its ordered cover list, in one committed transaction.

        ``children`` are :class:`~memfold.window.archive.Turn` (a depth-1 card covers only turns) or
        :class:`Card`; a deeper card covers cards, and a forced roll-up (see
        :mod:`memfold.window.compactor`) may cover a card and the turns right after it. ``depth``
        must be 1 over turns only, else one more than the deepest child card, or the deepest
        child card's own depth when the children's depths differ (an absorbing roll-up).

        :raises InvalidInput: if ``children`` is empty, the depth is wrong, or the text is not
            strictly shorter (in tokens) than the children (DESIGN.md §4.3).
        """
        if not children:
            raise InvalidInput("a card must cover at least one item")
        card_depths = [c.depth for c in children if isinstance(c, Card)]
        leaf = not card_depths
        expected = 1 if leaf else max(card_depths) + 1
        # an absorbing roll-up (issue 18, point 6): children of mixed depths may stay at the deepest one's
        mixed = not leaf and len({c.depth if isinstance(c, Card) else 0 for c in children}) > 1
        if depth != expected and not (mixed and depth == expected - 1):
            raise InvalidInput(f"this card must have depth {expected} (its children's deepest + 1"
                               f"{', or the deepest when their depths differ' if mixed else ''}), not {depth}")
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
        with self.storage.transaction(write_scope(conversations=[conversation_id])):
            card_id = self.storage.cards.insert(
                family_id=family_id, conversation_id=conversation_id, depth=depth, text=text, tokens=tokens,
                source_tokens=source_tokens, first_turn_id=span[0], last_turn_id=span[1], first_seq=span[2],
                last_seq=span[3], start_at=min(times), end_at=max(times), labels=labels, summarizer=summarizer,
                created_at=self.clock.now(),
                covers=[("card" if isinstance(c, Card) else "turn", c.id) for c in children],
            )
        return self.get(card_id)

    def get(self, card_id: int) -> Card:
        """The card with ``card_id``, with its covers. :raises CardNotFound: if there is none."""
        check_id(card_id, "card id")
        card = self.storage.cards.get(card_id)
        if card is None:
            raise CardNotFound(f"no summary card c{card_id}: list cards with 'memfold context' or search for one")
        return card

    def get_many(self, card_ids: Iterable[int]) -> dict[int, Card]:
        """Cards by id (without their cover lists, which the compiled context does not need)."""
        return self.storage.cards.get_many(card_ids)

    def covers(self, card_id: int) -> tuple[str, ...]:
        """The card's ordered child refs (``"t12"`` or ``"c3"``)."""
        return self.storage.cards.covers(card_id)

    def parent_of(self, kind: str, item_id: int) -> list[int]:
        """Ids of the cards that cover this turn or card (one per fold that included it)."""
        return self.storage.cards.parents(kind, item_id)

    def family_cards(self, family_id: str) -> list[Card]:
        """Every card of a family, oldest first, with covers."""
        return self.storage.cards.family(family_id)

    def next_id(self) -> int:
        """The id the next card written will get (the compactor sizes its header before writing)."""
        return self.storage.cards.next_id()


__all__ = ["Card", "CardStore", "card_header", "parse_ref"]
