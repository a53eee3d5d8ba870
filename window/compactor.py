"""The compactor: folds old turns into cards and cards into deeper cards until the window fits.

Invariants kept here (DESIGN.md §4.2-4.5; issue 4, points 2-5):

* The hot tail is never folded, and no fold ends between a tool call and its results.
* A fold writes the card, its covers and the catalog splice in one transaction, after the
  summarizer returned (never inside a transaction): a crash leaves nothing, and a lost race (the
  run changed under the splice: a worker or a foreground fold got there first) rolls the card
  back too, so no orphan card is ever written; the pass re-measures and goes on (issue 13).
* A card must be strictly shorter than its sources and must shrink the window; otherwise, or
  when the summarizer errors, times out or answers empty, the originals stay, the failure is
  recorded (``summarizer_failures`` + a ``summarizer_failed`` event) and that range is not tried
  again in the same pass.
* Compaction always terminates: every successful fold removes at least one catalog item and
  every failure removes one candidate, so a pass makes at most (items + candidates) steps.
* Concurrent compactions of one conversation never fail the caller (issue 12.4): inside one
  process they take turns (one lock per storage and conversation), so a second thread measures
  again what the first one left. A compaction inside a caller's transaction does not wait for
  that turn (the other thread may need the storage it holds). A fold whose range another
  thread or process folded first loses the splice (:class:`~memfold.memory.errors.CatalogChanged`,
  a ``StorageConflict``); its card rolls back with it (issue 13) and the pass goes on from the
  catalog as it now is.

Folding order in one pass: roll up any ``rollup_fanin`` adjacent same-depth cards (the regular
roll-up that keeps the active cards logarithmic in history); then, while the window is above the
target (the soft watermark by default), fold the oldest foldable turns into a depth-1 card of at
most ``leaf_chunk_tokens`` source tokens; when no turn is left to fold, fold the oldest adjacent
cards early (a *forced roll-up*: the oldest card followed by a shallower one, which it *absorbs*
at its own depth; else the oldest run of 2+ same-depth cards, one level deeper than they are;
else the oldest two adjacent cards, else a card with an adjacent turn too small to fold alone,
both absorbed at the deeper one's depth) so a small budget is still met; and
when the window is still over the usable budget, re-summarize the largest card with the item
next to it, one level deeper (absorbing, at the deeper card's level, when the other item is
shallower) and shorter by at least the excess (a *shrink*; a card is never re-summarized alone:
every roll-up merges at least two items).

With ``fold_to_hot`` (the seed program's rule, issue 20) every turn outside the hot tail is
leaf-folded in each pass, whatever the target; roll-ups still run only while over it. A summarizer
that finds nothing to keep in a chunk of turns (chatter only) raises
:class:`~memfold.memory.errors.NothingToKeep`: the chunk is then folded into the card right before
it (one level deeper, the card's text kept), so it leaves the window at no cost; with no card
before it the originals stay and the failure is recorded. A tool result whose call is not in the
window (an orphan, :func:`~memfold.window.catalog.joins_previous`) is no tool group's member and
folds or starts a chunk on its own.

Why absorbing (issue 18, point 6): at a budget that holds only a card or two, every leaf fold used
to be followed by a forced roll-up of the oldest (deepest) card with the new depth-1 card, one
level deeper each time: a chain as deep as the number of leaf folds (depth 481 over 100K turns at
budget 2,000). Depth now grows only when cards of one depth merge, so it stays within
``ceil(log_fanin(turns)) + 3`` and each leaf fold adds at most one more card.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from ..memory.errors import CatalogChanged, SummarizerError, SummarizerInputTooLarge
from ..memory.events import log_event
from ..memory.storage.base import write_scope
from .archive import Turn
from .cards import Card, card_header
from .catalog import CatalogItem, joins_previous
from .context import Layout, layout
from .parts import ConversationRef, WindowParts
from .protected import summarizer_input
from .settings import WindowSettings
from .summarizers.base import FoldItem, NothingToKeep, Summarizer, run_summarizer


@dataclass
class CompactionReport:
    """What one compaction pass did. Token figures are compiled-context tokens (without the
    memories section); ``pressure_before`` also counts the usage the caller last reported."""

    conversation_id: str
    usable_tokens: int
    target_tokens: int
    before_tokens: int
    after_tokens: int
    pressure_before: int
    cards: list[str] = field(default_factory=list)
    leaf_folds: int = 0
    rollups: int = 0
    forced_rollups: int = 0
    lost_races: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)

    @property
    def folded(self) -> bool:
        """True when at least one card entered the catalog."""
        return bool(self.cards)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {**self.__dict__, "folded": self.folded}


def record_failure(parts: WindowParts, ref: ConversationRef, *, summarizer: str, depth: int, first_seq: int,
                   last_seq: int, source_tokens: int, error: str) -> dict[str, Any]:
    """Record a summarizer failure (a ``summarizer_failures`` row and a ``summarizer_failed``
    event, in one transaction); returns it as a dict."""
    storage = parts.storage
    at = parts.clock.now()
    with storage.transaction(write_scope(conversations=[ref.id])):
        failure = storage.archive.add_summarizer_failure(
            conversation_id=ref.id, at=at, summarizer=summarizer, depth=depth, first_seq=first_seq,
            last_seq=last_seq, source_tokens=source_tokens, error=error,
        )
        log_event(storage, at=at, kind="summarizer_failed", namespace=ref.namespace,
                  subject=f"conversation:{ref.id}", cause=summarizer,
                  details={"depth": depth, "first_seq": first_seq, "last_seq": last_seq, "error": error})
    return failure.to_dict()


def fold_item_for_turn(turn: Turn) -> FoldItem:
    """The summarizer's view of a turn: its content plus any tool calls, written out."""
    text = turn.content
    if turn.tool_calls:
        calls = "; ".join(
            f"call {c['function']['name']}({c['function'].get('arguments', '')})" for c in turn.tool_calls
        )
        text = f"{text} {calls}".strip()
    return FoldItem(kind="turn", id=turn.id, text=text, role=turn.role, name=turn.name)


def fold_item_for_card(card: Card) -> FoldItem:
    """The summarizer's view of a card: its text and depth."""
    return FoldItem(kind="card", id=card.id, text=card.text, depth=card.depth)


def phase_bounds(parts: WindowParts, ref: ConversationRef) -> tuple[set[int], set[int]]:
    """``(seqs after which a closed unit ends, start seqs of the open strategy frames)``: the
    closed units are the folds, strategy yields and receipts of the conversation (issue 14)."""
    folds = parts.storage.folds.folds(ref.id)
    closed = {f.index.get("parent_seq", 0) if f.kind == "receipt" else f.last_seq for f in folds}
    starts = {f.start_seq for f in parts.storage.folds.frames(ref.id) if f.status != "closed"}
    return closed - {0}, starts


#: per opened storage, one lock per conversation id: compactions of one conversation take turns
_COMPACTING: "weakref.WeakKeyDictionary[Any, dict[str, threading.Lock]]" = weakref.WeakKeyDictionary()
_COMPACTING_GUARD = threading.Lock()


def compaction_lock(storage: Any, conversation_id: str) -> threading.Lock:
    """The lock a compaction of ``conversation_id`` on ``storage`` holds for its whole pass."""
    with _COMPACTING_GUARD:
        return _COMPACTING.setdefault(storage, {}).setdefault(conversation_id, threading.Lock())


class Compactor:
    """Runs compaction passes over one conversation.

    :param parts: the window's parts (storage, clock, token counter, protected channel, ...).
    :param ref: the conversation. :param settings: the window settings for this pass.
    :param summarizer: the summarizer to fold with.

    After :meth:`compact`, :attr:`layout` is the conversation's layout as the pass left it (for
    the same settings and reader), so a compile that compacted first renders from it.
    """

    def __init__(self, parts: WindowParts, ref: ConversationRef, settings: WindowSettings,
                 summarizer: Summarizer) -> None:
        self.parts = parts
        self.ref = ref
        self.settings = settings
        self.summarizer = summarizer
        self.counter = parts.token_counter
        self.catalog = parts.catalog(ref)
        self.layout: Layout | None = None
        self._phases: tuple[set[int], set[int]] | None = None  # read once per compactor (issue 14, point 7)
        declared = getattr(summarizer, "max_input_tokens", None)
        #: the most input tokens one summarizer request may carry (issue 13, point 6): what the
        #: summarizer declares, lowered for the rest of the pass when it refuses a request as too large
        self.max_input: int | None = declared if isinstance(declared, int) and not isinstance(declared, bool) \
            and declared > 0 else None

    def _fits(self, run: Sequence[CatalogItem]) -> bool:
        """Whether ``run`` is within what the summarizer accepts in one request."""
        return self.max_input is None or sum(i.tokens for i in run) <= self.max_input

    def compact(self, target_tokens: int | None = None, reader: Iterable[str] | None = None, *,
                lay: Layout | None = None, reported: int | None = None) -> CompactionReport:
        """One compaction pass (see the module docstring).

        :param target_tokens: fold until the compiled context is at most this big; default the
            soft watermark. Compiled-context tokens exclude the memories section.
        :param lay: the conversation's current :class:`Layout` for these settings and ``reader``,
            when the caller measured it already; read otherwise.
        :param reported: the prompt tokens last reported, when the caller read them already.
        :returns: a :class:`CompactionReport`.
        :raises StorageError: if the database cannot be written (the catalog stays consistent).
        """
        from ..memory.validation import check_count

        check_count(target_tokens, "target_tokens", minimum=0, allow_none=True)  # int() took 'x', NaN, 1.5
        storage = self.parts.storage
        if storage.in_transaction:  # inside the caller's transaction: waiting for another thread's
            return self._compact(target_tokens, reader, lay, reported)  # pass could deadlock; a lost splice is safe
        lock = compaction_lock(storage, self.ref.id)
        if not lock.acquire(blocking=False):  # another thread is compacting this conversation: wait for
            lock.acquire()  # it, then measure again what it left
            lay = reported = None
        try:
            return self._compact(target_tokens, reader, lay, reported)
        finally:
            lock.release()

    def _compact(self, target_tokens: int | None, reader: Iterable[str] | None, lay: Layout | None,
                 reported: int | None) -> CompactionReport:
        s = self.settings
        parts, ref = self.parts, self.ref
        if lay is None:
            lay = layout(parts, ref, s, reader)
        if reported is None:
            reported = parts.storage.archive.reported_usage(ref.id)
        reported = reported or 0
        target = s.soft_tokens if target_tokens is None else max(0, int(target_tokens))
        overhead = max(0, reported - lay.total_tokens)  # what the model's prompt adds around our context
        goal = max(0, target - overhead)
        report = CompactionReport(ref.id, s.usable_tokens, target, lay.total_tokens, lay.total_tokens,
                                  max(lay.total_tokens, reported))
        failed: set[tuple[str, int, int]] = set()
        while True:
            run = self._regular_rollup(lay, failed)
            kind = "rollup"
            if run is None:
                if lay.total_tokens <= goal and not s.fold_to_hot:
                    break
                run, kind = self._leaf_chunk(lay, failed), "fold"
                if run is None and lay.total_tokens <= goal:
                    break  # fold_to_hot: every turn outside the hot tail is folded; roll-ups only while over
                if run is None:
                    run, kind = self._forced_rollup(lay, failed), "forced_rollup"
                if run is None and lay.total_tokens > s.usable_tokens:
                    run, kind = self._shrink_candidate(lay, failed), "shrink"
                if run is None:
                    break
            excess = lay.total_tokens - s.usable_tokens if kind == "shrink" else 0
            self._fold(lay, run, kind, report, failed, excess=excess)
            lay = layout(parts, ref, s, reader, protected=lay.protected)  # folding never changes the channel
        report.after_tokens = lay.total_tokens
        self.layout = lay
        if report.folded:
            with parts.storage.transaction(write_scope(conversations=[ref.id])):
                parts.storage.archive.clear_reported_usage(ref.id)
        return report

    # -- choosing what to fold -------------------------------------------------------------
    @staticmethod
    def _key(run: Sequence[CatalogItem]) -> tuple[str, int, int]:
        return (run[0].kind, run[0].first_seq, run[-1].last_seq)

    def _regular_rollup(self, lay: Layout, failed: set) -> list[CatalogItem] | None:
        items, fanin = lay.items[:lay.hot], self.settings.rollup_fanin
        i = 0
        while i < len(items):
            if items[i].kind != "card":
                i += 1
                continue
            j = i
            while j < len(items) and items[j].kind == "card" and items[j].depth == items[i].depth:
                j += 1
            for start in range(i, j - fanin + 1):
                run = items[start:start + fanin]
                if self._key(run) not in failed and self._fits(run):
                    return run
            i = j
        return None

    def _leaf_chunk(self, lay: Layout, failed: set) -> list[CatalogItem] | None:
        items, hot, limit = lay.items, lay.hot, self.settings.leaf_chunk_tokens
        if self.max_input is not None:
            limit = min(limit, self.max_input)  # a smaller request per card, more cards
        i = 0
        while i < hot:
            if items[i].kind != "turn" or joins_previous(items, i):
                i += 1
                continue
            j = i
            while j < hot and items[j].kind == "turn":
                j += 1
            end, used = i, 0
            while end < j and (end == i or used + items[end].tokens <= limit):
                used += items[end].tokens
                end += 1
            if joins_previous(items, end):  # never end inside a tool group
                back = end
                while back > i and joins_previous(items, back):
                    back -= 1
                if back > i:
                    end = back
                else:
                    while end < j and joins_previous(items, end):
                        end += 1
                    if joins_previous(items, end):
                        i = j
                        continue
            if (end - i > 1 and end < len(items) and items[end - 1].role == "user"
                    and items[end].role == "assistant" and items[end].kind == "turn"):
                end -= 1  # keep a question with the answer that follows it
            end = self._phase_end(items, i, end, j)
            run = items[i:end]
            if not sum(lay.shown[i:end]):  # only system turns, shown nowhere in place: nothing to gain
                i = end
                continue
            if self._key(run) not in failed and self._fits(run):
                return run
            i = end
        return None

    def _phase_end(self, items: Sequence[CatalogItem], i: int, end: int, j: int) -> int:
        """Where a leaf chunk ``items[i:end]`` (in a run of turns ending at ``j``) should end at a
        phase boundary (issue 14, point 7; seed note 003): never past the start of an open
        strategy frame (its branch folds when it yields), and, when the chunk cuts the run, at
        the end of the last closed unit inside it (a receipt, a fold or a yield) rather than
        mid-unit."""
        if self._phases is None:
            self._phases = phase_bounds(self.parts, self.ref)
        closed, starts = self._phases
        for k in range(i + 1, end):
            if items[k].first_seq in starts:
                return k
        if end < j and closed:
            best = max((k for k in range(i + 1, end) if items[k - 1].last_seq in closed), default=None)
            if best is not None:
                return best
        return end

    def _forced_rollup(self, lay: Layout, failed: set) -> list[CatalogItem] | None:
        items, fanin = lay.items[:lay.hot], self.settings.rollup_fanin
        # a deeper card absorbs the shallower card after it: no deeper level (issue 18, point 6). Not
        # under the seed program's fold_to_hot rule (issue 20), whose recorded trace stacks levels.
        for i in range(len(items) - 1 if not self.settings.fold_to_hot else 0):
            run = items[i:i + 2]
            if (run[0].kind == "card" and run[1].kind == "card" and run[0].depth > run[1].depth
                    and self._key(run) not in failed):
                return run
        for i in range(len(items) - 1):
            if items[i].kind == "card" and items[i + 1].kind == "card" and items[i].depth == items[i + 1].depth:
                j = i
                while j < len(items) and j - i < fanin and items[j].kind == "card" and items[j].depth == items[i].depth \
                        and (j - i < 2 or self._fits(items[i:j + 1])):  # fewer cards when a request would be too large
                    j += 1
                run = items[i:j]
                if self._key(run) not in failed and self._fits(run):
                    return run
        for i in range(len(items) - 1):
            run = items[i:i + 2]
            if run[0].kind == "card" and run[1].kind == "card" and self._key(run) not in failed and self._fits(run):
                return run
        for i in range(len(items) - 1):  # a card and a turn too small to fold on its own
            run = items[i:i + 2]
            if "card" in (run[0].kind, run[1].kind) and self._key(run) not in failed and self._fits(run):
                if run[1].kind == "turn" and run[1].role == "tool" or (
                        i + 2 < len(items) and items[i + 2].role == "tool"):
                    continue  # never split a tool group
                return run
        return None

    def _shrink_candidate(self, lay: Layout, failed: set) -> list[CatalogItem] | None:
        """Last resort when the window is still over the budget and no other fold is left: the
        largest card with the item next to it (after it, else before it), re-summarized one level
        deeper and shorter by at least the excess. A roll-up always merges at least two items
        (issue 13, point 2): a card is never re-summarized alone, and no tool group is split."""
        # over the usable budget the hot tail's protection loosens by one turn (hot_turns is a
        # maximum): the card may take the oldest hot turn with it; the newest turn always stays
        items = lay.items[:min(len(lay.items) - 1, lay.hot + 1)]
        order = sorted((n for n, it in enumerate(items) if it.kind == "card"),
                       key=lambda n: (-items[n].tokens, items[n].first_seq))
        for n in order:
            for run in (items[n:n + 2], items[n - 1:n + 1] if n > 0 else []):
                if len(run) != 2 or self._key(run) in failed or not self._fits(run):
                    continue
                end = lay.items.index(run[-1]) + 1
                if run[-1].role == "tool" or (end < len(lay.items) and lay.items[end].role == "tool"):
                    continue  # never split a tool group
                return run
        return None

    # -- folding ---------------------------------------------------------------------------
    def _fold(self, lay: Layout, run: list[CatalogItem], kind: str, report: CompactionReport, failed: set,
              *, excess: int = 0) -> None:
        parts, ref, s = self.parts, self.ref, self.settings
        start = lay.items.index(run[0])
        shown_before = sum(lay.shown[start:start + len(run)])
        turns = parts.turns([i.item_id for i in run if i.kind == "turn"])
        cards = parts.cards.get_many(i.item_id for i in run if i.kind == "card")
        children: list[Any] = [turns[i.item_id] if i.kind == "turn" else cards[i.item_id] for i in run]
        fold_items = [fold_item_for_card(c) if isinstance(c, Card) else fold_item_for_turn(c) for c in children]
        depths = [c.depth if isinstance(c, Card) else 0 for c in children]
        depth = 1 + max(depths)
        if kind in ("forced_rollup", "shrink") and len(set(depths)) > 1 and not s.fold_to_hot:
            depth = max(depths)  # absorbing: a deep card takes in younger, shallower items at its own level
        source_tokens = sum(c.tokens for c in children)
        next_id = parts.cards.next_id()
        header_tokens = self.counter.count_header(card_header(next_id))
        target = min(s.card_target_tokens, max(1, s.usable_tokens // 4), source_tokens - 1,
                     shown_before - header_tokens - 1)
        if excess > 0:  # a shrink must free at least the excess
            target = min(target, shown_before - header_tokens - excess)
        try:
            if target < 1:
                raise SummarizerError(
                    f"{len(run)} item(s) of {shown_before} tokens are too small to fold into a shorter card"
                )
            # protected/quoted/erased/secret text never passes
            fold_items = summarizer_input(parts.storage, children, fold_items, family_id=ref.family_id,
                                          namespace=ref.namespace)
            text, tokens = run_summarizer(self.summarizer, fold_items, depth, source_tokens=source_tokens,
                                          target_tokens=target, counter=self.counter)
            rendered = self.counter.count_card(card_header(next_id), text)
            if rendered >= shown_before:
                raise SummarizerError(
                    f"the card ({rendered} tokens with its header) would not shrink the window ({shown_before} tokens)"
                )
        except NothingToKeep as exc:
            absorb = [lay.items[start - 1], *run] if kind == "fold" and start > 0 else []
            if absorb and absorb[0].kind == "card" and self._key(absorb) not in failed:
                # chatter only: it leaves the window inside the card before it (one level deeper,
                # the card's text kept), so it costs the window nothing (issue 20, point 1)
                failed.add(self._key(run))
                self._fold(lay, absorb, "absorb", report, failed)
                return
            failed.add(self._key(run))
            report.failures.append(record_failure(
                parts, ref, summarizer=getattr(self.summarizer, "id", type(self.summarizer).__name__), depth=depth,
                first_seq=run[0].first_seq, last_seq=run[-1].last_seq, source_tokens=source_tokens,
                error=f"{exc} (and no card right before them to fold them into)",
            ))
            return
        except SummarizerError as exc:
            if isinstance(exc, SummarizerInputTooLarge):  # split: no later request of this pass is as large
                sent = sum(i.tokens for i in run)
                self.max_input = max(1, min(sent - 1, self.max_input if self.max_input is not None else sent))
            failed.add(self._key(run))
            report.failures.append(record_failure(
                parts, ref, summarizer=getattr(self.summarizer, "id", type(self.summarizer).__name__), depth=depth,
                first_seq=run[0].first_seq, last_seq=run[-1].last_seq, source_tokens=source_tokens, error=str(exc),
            ))
            return
        storage = parts.storage
        try:
            # The card, its covers and the splice commit together (issue 13, point 3): a lost race
            # (the run is no longer in the catalog exactly) rolls the card back too, so no orphan
            # card is ever written, and a crash before the commit leaves nothing at all.
            with storage.transaction(write_scope(conversations=[ref.id])):
                card = parts.cards.insert(
                    family_id=ref.family_id, conversation_id=ref.id, depth=depth, text=text, tokens=tokens,
                    children=children, summarizer=getattr(self.summarizer, "id", type(self.summarizer).__name__),
                )
                self.catalog.splice(run, card)
        except CatalogChanged:
            report.lost_races += 1  # another writer folded this range first; the pass re-measures
            failed.add(self._key(run))
            return
        with storage.transaction(write_scope(conversations=[ref.id])):
            log_event(storage, at=parts.clock.now(), kind="fold" if kind == "fold" else "rollup",
                      namespace=ref.namespace, subject=f"conversation:{ref.id}", cause=kind,
                      details={"card": card.ref, "depth": depth, "covers": list(card.covers),
                               "source_tokens": source_tokens, "tokens": tokens})
        report.cards.append(card.ref)
        if kind == "fold":
            report.leaf_folds += 1
        elif kind == "rollup":
            report.rollups += 1
        else:
            report.forced_rollups += 1  # forced roll-ups and last-resort shrinks of a lone card


def failure_dict(row: Sequence[Any]) -> dict[str, Any]:
    """A ``summarizer_failures`` row as a dict."""
    keys = ("id", "conversation_id", "at", "summarizer", "depth", "first_seq", "last_seq", "source_tokens", "error")
    return dict(zip(keys, row))


__all__ = ["CompactionReport", "Compactor", "failure_dict", "fold_item_for_card", "fold_item_for_turn",
           "record_failure"]
