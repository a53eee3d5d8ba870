"""The catalog: the ordered context items (card refs and turn refs) a conversation's model sees.

Invariant kept here: the catalog is a **contiguous cover** of the conversation's history: its
items, ordered by ``first_seq``, span seq 1 to the newest seq with no gap and no overlap. A fold
replaces a contiguous run of items with one card covering exactly their span, in one
transaction, and only after the card and its covers are committed (DESIGN.md §4.2). New turns
join the catalog lazily (:meth:`Catalog.sync`), so appending never depends on the window.

A fork starts from its parent's catalog up to the fork point; a parent card that reaches past the
fork point is replaced by its children, recursively, so the fork never shows turns it lacks.
"""

from __future__ import annotations

from typing import Sequence

from ..memory.errors import CatalogChanged, StorageError
from ..memory.storage.base import Storage, write_scope
from ..memory.storage.rows import CatalogItem
from ..memory.tokens import TokenCounter
from .archive import Archive, Turn
from .cards import Card, CardStore


def turn_item(turn: Turn) -> CatalogItem:
    """The catalog item for an archived turn."""
    return CatalogItem("turn", turn.id, turn.seq, turn.seq, 0, turn.tokens, turn.role, bool(turn.tool_calls))


def card_item(card: Card, counter: TokenCounter) -> CatalogItem:
    """The catalog item for a card (its tokens are those of the rendered card)."""
    return CatalogItem("card", card.id, card.first_seq, card.last_seq, card.depth, counter.count_card(card.header(), card.text))


class Catalog:
    """The catalog of one conversation.

    :param storage: the opened storage. :param archive: the turn archive. :param cards: the card store.
    :param counter: the token counter (rendered card sizes).
    :param conversation_id: whose catalog.
    :param lineage: the conversation's lineage (root first, see :meth:`Archive.lineage`) when the
        caller holds it, so syncing reads no ``conversations`` row; looked up when needed otherwise.
    """

    def __init__(self, storage: Storage, archive: Archive, cards: CardStore, counter: TokenCounter,
                 conversation_id: str, *, lineage: Sequence[tuple[str, int | None]] | None = None) -> None:
        self.storage = storage
        self.archive = archive
        self.cards = cards
        self.counter = counter
        self.conversation_id = conversation_id
        self.lineage = None if lineage is None else tuple(lineage)

    def _lineage(self) -> tuple[tuple[str, int | None], ...]:
        if self.lineage is None:
            self.lineage = tuple(self.archive.lineage(self.conversation_id))
        return self.lineage

    # -- reading -------------------------------------------------------------------------
    def items(self) -> list[CatalogItem]:
        """The items in order (oldest first), after :meth:`sync`."""
        self.sync()
        return self._read()

    def view(self) -> list[CatalogItem]:
        """The items as :meth:`items` would return them, without writing: the stored items plus
        a turn item for each archived turn not covered yet (a fork not seeded yet is seeded in
        memory from its parent's view). For reads inside a snapshot (issue 13, point 5)."""
        lineage = self._lineage()
        stored = self._read()
        covered = stored[-1].last_seq if stored else 0
        if covered == self.archive.last_seq(self.conversation_id, lineage=lineage):
            return stored
        items = list(stored)
        if covered == 0:
            items = self._seed_from_parent(sync=False)
            covered = items[-1].last_seq if items else 0
        items.extend(turn_item(t) for t in self.archive.history(self.conversation_id, after_seq=covered,
                                                                 lineage=lineage))
        return items

    def _read(self) -> list[CatalogItem]:
        return self.storage.catalog.items(self.conversation_id)

    def totals(self, glimpse_over: int, *, sync: bool = True) -> tuple[int, list[tuple[int, int]], bool]:
        """Aggregate sizes without reading every item into Python (the per-append pressure check).

        :param glimpse_over: turns above this many tokens are shown as glimpses.
        :returns: ``(tokens of the cards and of the turns shown whole, [(turn_id, tokens)] of the
            oversized turns, whether any card is in the catalog)``, after :meth:`sync`.
        """
        if sync:
            self.sync()
        return self.storage.catalog.totals(self.conversation_id, glimpse_over)

    def last_seq(self) -> int:
        """The newest seq the catalog covers (0 when empty)."""
        return self.storage.catalog.last_seq(self.conversation_id)

    # -- writing -------------------------------------------------------------------------
    def sync(self) -> int:
        """Add a turn item for every archived turn the catalog does not cover yet (and seed a
        fork from its parent). Returns how many items were added."""
        lineage = self._lineage()
        known, own = self.storage.catalog.cover(self.conversation_id)  # one statement (issue 18, point 4)
        newest = own if own is not None else ((lineage[-2][1] if len(lineage) > 1 else None) or 0)
        if known == newest:
            return 0
        # this catalog's lock; a fork seeded from its parents syncs theirs too (all taken at once)
        ids = [self.conversation_id] + ([cid for cid, _ in lineage[:-1]] if known == 0 else [])
        with self.storage.transaction(write_scope(conversations=ids)):
            covered = self.last_seq()
            items: list[CatalogItem] = []
            if covered == 0:
                items = self._seed_from_parent()
                covered = items[-1].last_seq if items else 0
            items.extend(turn_item(t) for t in self.archive.history(self.conversation_id, after_seq=covered,
                                                                     lineage=lineage))
            self._insert(items)
        return len(items)

    def extend(self, turns: Sequence[Turn], before_seq: int, *, covered: int | None = None) -> bool:
        """Add the catalog items of turns just archived after seq ``before_seq``, inside the
        append's own write transaction, when the catalog already covers everything before them
        (one read; none when the caller read ``covered``, the seq the catalog covers, in this
        transaction); otherwise leave them to :meth:`sync`. :returns: True when they were added."""
        if (self.last_seq() if covered is None else covered) != before_seq:
            return False  # an unseeded fork's catalog needs its parent's items, a lagging one a full sync
        self._insert([turn_item(t) for t in turns])
        return True

    def _seed_from_parent(self, *, sync: bool = True) -> list[CatalogItem]:
        lineage = self._lineage()
        if len(lineage) < 2 or not lineage[-2][1]:
            return []
        parent_id, limit = lineage[-2]
        parent = Catalog(self.storage, self.archive, self.cards, self.counter, parent_id,
                         lineage=(*lineage[:-2], (parent_id, None)))
        out: list[CatalogItem] = []
        for item in (parent.items() if sync else parent.view()):
            if item.first_seq > limit:
                break
            out.extend(self._within(item, limit))
        return out

    def _within(self, item: CatalogItem, limit: int) -> list[CatalogItem]:
        """``item`` if it ends by ``limit``, else its children that start by ``limit`` (recursively)."""
        if item.last_seq <= limit:
            return [item]
        if item.kind == "turn":
            return []
        out: list[CatalogItem] = []
        for ref in self.cards.covers(item.item_id):
            kind, child_id = ref[0], int(ref[1:])
            child = (turn_item(self.archive.get(child_id)) if kind == "t"
                     else card_item(self.cards.get(child_id), self.counter))
            if child.first_seq <= limit:
                out.extend(self._within(child, limit))
        return out

    def _insert(self, items: Sequence[CatalogItem]) -> None:
        self.storage.catalog.insert(self.conversation_id, items)

    def splice(self, replaced: Sequence[CatalogItem], card: Card) -> CatalogItem:
        """Replace the contiguous run ``replaced`` with ``card`` in one transaction.

        :raises CatalogChanged: (a ``StorageConflict``) if the run is no longer in the catalog exactly (a concurrent
            compaction got there first); nothing changes then.
        """
        new = card_item(card, self.counter)
        with self.storage.transaction(write_scope(conversations=[self.conversation_id])):
            current = self.storage.catalog.refs_between(self.conversation_id, replaced[0].first_seq,
                                                        replaced[-1].first_seq)
            if [(i.kind, i.item_id) for i in replaced] != current or (
                new.first_seq, new.last_seq) != (replaced[0].first_seq, replaced[-1].last_seq):
                raise CatalogChanged(
                    f"the catalog of {self.conversation_id!r} changed during compaction (seq "
                    f"{replaced[0].first_seq}-{replaced[-1].last_seq}); run compact again"
                )
            self.storage.catalog.delete_between(self.conversation_id, replaced[0].first_seq, replaced[-1].first_seq)
            self._insert([new])
        return new


def joins_previous(items: Sequence[CatalogItem], k: int) -> bool:
    """Whether ``items[k]`` belongs to one tool group with the item before it: a tool result right
    after its call (a turn with ``tool_calls``) or after another result. A tool turn after anything
    else answers a call that is not in the window (an *orphan* result, as in a transcript that
    logs results without calls) and may stand, fold and start the hot tail alone."""
    if not 0 < k < len(items):
        return False
    item, before = items[k], items[k - 1]
    return (item.kind == "turn" and item.role == "tool" and before.kind == "turn"
            and (before.has_tool_calls or before.role == "tool"))


def hot_start(items: Sequence[CatalogItem], hot_turns: int, room_tokens: int, shown: Sequence[int]) -> int:
    """Index of the first item of the hot tail (``len(items)`` when there is none).

    The hot tail is the newest ``hot_turns`` turns at most (system turns not counted: they are
    never shown in place, issue 20), fewer when they would not fit in ``room_tokens`` (the newest
    turn always stays), widened so that a tool result is never
    separated from the call it answers, and so that a user question stays with the assistant
    answer that directly follows it when both fit: when the whole catalog, shown verbatim, fits
    in ``room_tokens`` (issue 4, point 2; DESIGN.md §4.4). ``shown[i]`` is item i's size as the compiled context shows it.
    """
    n = len(items)
    i = n
    count = used = 0
    # ``hot_turns`` is a maximum, not a promise (issue 13, point 6): the tail stops growing when
    # the next turn would not fit in ``room_tokens`` (the newest turn is always hot)
    while i > 0 and count < hot_turns and items[i - 1].kind == "turn" and (
            count == 0 or used + shown[i - 1] <= room_tokens):
        i -= 1
        count += items[i].role != "system"
        used += shown[i]
    if i == n:
        return n
    while 0 < i < n and joins_previous(items, i):
        i -= 1
    if 0 < i < n and items[i].role == "assistant" and items[i - 1].kind == "turn" and items[i - 1].role == "user":
        if sum(shown) <= room_tokens:
            i -= 1
    return i


def is_contiguous_cover(items: Sequence[CatalogItem], last_seq: int) -> bool:
    """True when ``items`` cover seq 1..``last_seq`` exactly once, in order."""
    expected = 1
    for item in items:
        if item.first_seq != expected or item.last_seq < item.first_seq:
            return False
        expected = item.last_seq + 1
    return expected == last_seq + 1
