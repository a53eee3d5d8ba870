"""The compiled context: what one model call sees, within ``budget - output_reserve`` tokens.

Invariant kept here (DESIGN.md §4.5): a compiled context either fits the usable budget or is not
returned: :class:`~memfold.BudgetError` names every section's size. Sections come in one fixed
order from :func:`build_sections`: the standing system turn, the system note, the protected
channel, the top memories, the catalog (cards with their ids, older turns verbatim) and the hot
tail (verbatim).

A system-role turn is a standing instruction (issue 20, point 10): the newest one of the
conversation's lineage is shown verbatim in its own first section of every compiled context, like
the protected channel, until a later system turn replaces it; no system turn is ever shown in its
place in the catalog, and none reaches a summarizer (:func:`~memfold.window.protected.summarizer_input`),
so no card, however deep, holds its words. A turn larger
than half the usable budget is shown as a bounded *glimpse* with its id, never dropped: the
whole turn stays in the archive and ``expand t<id>`` returns it (issue 4, point 6).

One compile reads each thing once (issue 12, point 3): :func:`layout` reads the catalog, the
protected channel and the oversized turns once, and the same :class:`Layout` serves the
compactor's check and the renderer (:func:`build_sections` reads only the cards and the turns
not read yet, then the memories). Compiling takes no write lock: the one write is the access
count of the memory records shown (DESIGN.md §3).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..memory.errors import BudgetError
from .archive import Turn
from .catalog import CatalogItem, hot_start
from .labels import as_reader, can_read
from .parts import ConversationRef, WindowParts
from .protected import ChannelRendering
from .settings import WindowSettings
from .summarizers.base import clip_to_tokens

#: The default system note (issue 4, point 7).
SYSTEM_NOTE = (
    "Summaries [cN] are maps; expand or search first for exact ids, numbers, dates, paths, commands."
)
#: the sections' names, in the order their tokens are listed; ``fold_card`` counts the fold card
#: (issue 14), whose message sits among the turns, right before the newest user turn
SECTION_NAMES = ("system", "system_note", "protected", "memories", "cards", "turns", "hot_turns", "fold_card")


@dataclass
class Section:
    """One section of a compiled context: its messages and their tokens."""

    name: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    tokens: int = 0
    refs: list[str] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)  #: refs of its orphan tool results (:func:`orphan_message`)


@dataclass
class CompiledContext:
    """A compiled context.

    ``messages`` are OpenAI-shaped chat messages in order; ``sections`` maps each section name
    (``system`` = the standing system turn, ``system_note``, ``protected``, ``memories``, ``cards``,
    ``turns`` = older turns not folded yet, ``hot_turns``, ``fold_card`` = the fold card of issue 14,
    whose message sits among the turns) to its tokens; ``total_tokens`` is their sum and never exceeds
    ``usable_tokens`` = ``budget_tokens - output_reserve_tokens``. ``refs`` lists the catalog items
    shown (``c12``, ``t40``); ``glimpses`` the ids of turns shown as excerpts.
    """

    messages: list[dict[str, Any]]
    sections: dict[str, int]
    total_tokens: int
    budget_tokens: int
    output_reserve_tokens: int
    refs: list[str]
    glimpses: list[int]
    hot_refs: list[str]
    fold_card: str | None = None  #: the fold card's text when one is attached (issue 14), else None
    fold_menu: Any = field(default=None, repr=False, compare=False)  #: that :class:`~memfold.window.folds.FoldCard`
    #: refs of the tool results shown without the call they answer (orphans), compiled as marked user messages
    orphan_results: list[str] = field(default_factory=list)

    @property
    def usable_tokens(self) -> int:
        """``budget_tokens - output_reserve_tokens``."""
        return self.budget_tokens - self.output_reserve_tokens

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "messages": self.messages, "sections": self.sections, "total_tokens": self.total_tokens,
            "budget_tokens": self.budget_tokens, "output_reserve_tokens": self.output_reserve_tokens,
            "usable_tokens": self.usable_tokens, "refs": self.refs, "glimpses": self.glimpses,
            "hot_refs": self.hot_refs,
            **({"fold_card": self.fold_card} if self.fold_card is not None else {}),
            **({"orphan_results": self.orphan_results} if self.orphan_results else {}),
        }


def orphan_message(message: dict[str, Any]) -> dict[str, Any]:
    """An *orphan* tool result as the compiled context shows it: a tool message whose
    ``tool_call_id`` is named by no assistant ``tool_calls`` message right before it (its call
    was never appended, as in a transcript that logs results only, or is not shown to this
    reader). Chat APIs refuse such a ``tool`` message (OpenAI: "messages with role 'tool' must
    be a response to a preceding message with 'tool_calls'"), which would fail every later call
    of the conversation; the archive keeps the turn verbatim, and the context shows its text
    unchanged (same tokens) as a ``user`` message named after the tool (``tool_<name>``) and
    listed in :attr:`CompiledContext.orphan_results`."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", f"tool_{message.get('name') or 'result'}")[:64]
    return {"role": "user", "content": message["content"], "name": name}


def glimpse_threshold(settings: WindowSettings) -> int:
    """A turn with more tokens than this is shown as a glimpse: half the usable budget."""
    return max(1, settings.usable_tokens // 2)


#: glimpse excerpts already cut, by (turn id, sha256, erased, length, excerpt tokens, counter id):
#: an archived turn never changes but by erasure (part of the key), so a huge turn is cut once
#: per process, not at every compile and pressure check (issue 20, point 6)
_GLIMPSES: dict[tuple, str] = {}
_GLIMPSES_MAX = 256


def glimpse_text(turn: Turn, settings: WindowSettings, counter) -> str:
    """A bounded excerpt of an oversized turn, with its id and size, for the compiled context.
    Its cost does not depend on the turn's size: the excerpt is cut from a head of the text near
    the target (:func:`clip_to_tokens`) and remembered for the next compile."""
    excerpt_tokens = max(1, min(settings.card_target_tokens, settings.usable_tokens // 8))
    key = (turn.id, turn.sha256, turn.erased, len(turn.content), excerpt_tokens, getattr(counter, "id", id(counter)))
    excerpt = _GLIMPSES.get(key)
    if excerpt is None:
        excerpt = clip_to_tokens(turn.content, excerpt_tokens, counter)
        if len(_GLIMPSES) >= _GLIMPSES_MAX:
            _GLIMPSES.pop(next(iter(_GLIMPSES)))
        _GLIMPSES[key] = excerpt
    return f"{excerpt} [glimpse t{turn.id} of {turn.tokens} tokens; expand t{turn.id}]"


def note_text(settings: WindowSettings) -> str:
    """The system note for these settings."""
    return SYSTEM_NOTE if settings.system_note is None else settings.system_note


@dataclass
class Layout:
    """Sizes of the compiled context without loading card or turn texts (cheap; used for pressure).

    ``shown[i]`` is item i's size as shown (glimpse-sized for oversized turns, 0 for a system
    turn, which is never shown in place); ``hot`` the index of the first hot item. ``protected``
    is the protected channel as read for this layout, ``system`` the standing system turn (or
    ``None``) and ``turns`` the oversized turns read to size their glimpses, so rendering from
    this layout reads none of them again.
    """

    items: list[CatalogItem]
    shown: list[int]
    hot: int
    note_tokens: int
    protected_tokens: int
    protected: ChannelRendering = field(default_factory=lambda: ChannelRendering([], 0, []))
    turns: dict[int, Turn] = field(default_factory=dict)
    system: Turn | None = None
    fold_card: Any = None  #: the :class:`~memfold.window.folds.FoldCard` shown, or None (issue 14)

    @property
    def system_tokens(self) -> int:
        """The standing system turn's tokens (0 when there is none the reader may see)."""
        return self.system.tokens if self.system is not None else 0

    @property
    def catalog_tokens(self) -> int:
        return sum(self.shown)

    @property
    def total_tokens(self) -> int:
        """Everything but the memories (which only take what is left)."""
        return (self.system_tokens + self.note_tokens + self.protected_tokens + self.catalog_tokens
                + (self.fold_card.tokens if self.fold_card is not None else 0))

    @property
    def hot_tokens(self) -> int:
        return sum(self.shown[self.hot:])


def _glimpse_sizes(parts: WindowParts, settings: WindowSettings, turns: dict[int, Turn]) -> dict[int, int]:
    """``{turn id: glimpse tokens}`` of the oversized turns whose glimpse is smaller than the turn."""
    counter = parts.token_counter
    sizes = {tid: counter.count(glimpse_text(turn, settings, counter)) for tid, turn in turns.items()}
    return {tid: size for tid, size in sizes.items() if size < turns[tid].tokens}


def layout(parts: WindowParts, ref: ConversationRef, settings: WindowSettings,
           reader: Iterable[str] | None = None, *, protected: ChannelRendering | None = None,
           sync: bool = True) -> Layout:
    """Measure the conversation's compiled context (see :class:`Layout`): one read of the catalog
    (after syncing it with the archive), one of the protected channel, one batch of oversized turns.

    :param protected: the channel as already read for ``reader`` in this call (the compactor
        re-measures after each fold, and folding never changes the channel); read otherwise.
    :param sync: bring the catalog up to the archive first (a write). ``False`` inside a
        :meth:`~memfold.memory.storage.base.Storage.snapshot`: turns the catalog does not cover
        yet are laid out as turn items without being written (see :meth:`Catalog.view`).
    """
    counter = parts.token_counter
    catalog = parts.catalog(ref)
    items = catalog.items() if sync else catalog.view()
    limit = glimpse_threshold(settings)
    oversized = [i.item_id for i in items if i.kind == "turn" and i.tokens > limit and i.role != "system"]
    turns = parts.turns(oversized) if oversized else {}
    glimpse_sizes = _glimpse_sizes(parts, settings, turns)
    shown = [0 if i.role == "system" and i.kind == "turn" else glimpse_sizes.get(i.item_id, i.tokens)
             if i.kind == "turn" else i.tokens for i in items]
    any_map = bool(glimpse_sizes) or any(i.kind == "card" for i in items)
    note = note_text(settings)
    note_tokens = counter.count(note) if (any_map and note) else 0
    rendering = protected_rendering(parts, ref, reader) if protected is None else protected
    system = standing_system_turn(parts, ref, reader)
    room = settings.usable_tokens - note_tokens - rendering.tokens - (system.tokens if system else 0)
    hot = hot_start(items, settings.hot_turns, room, shown)
    lay = Layout(items, shown, hot, note_tokens, rendering.tokens, rendering, turns, system)
    last_card = max((n for n, i in enumerate(items) if i.kind == "card"), default=-1)
    lay.fold_card = _fitting_fold_card(parts, ref, settings, items[last_card + 1:], reader, lay.total_tokens)
    return lay


def _fitting_fold_card(parts: WindowParts, ref: ConversationRef, settings: WindowSettings, tail, reader,
                       total_tokens: int):
    """The fold card (issue 14, point 1) for the work since the last fold, when one is due and
    fits in what the context leaves of the usable budget; else None."""
    from .folds import fold_card

    card = fold_card(parts, ref, settings, tail, reader)  # None at once when no card is due
    if card is None or total_tokens + card.tokens > settings.usable_tokens:
        return None
    return card


def standing_system_turn(parts: WindowParts, ref: ConversationRef, reader: Iterable[str] | None) -> Turn | None:
    """The system turn in force (the lineage's newest, :meth:`Archive.standing_system_turn`) when
    the reader may see it; ``None`` when there is none, it is erased, or the reader lacks one of
    its labels (an older system turn never stands in: it was replaced)."""
    turn = parts.archive.standing_system_turn(ref.id, lineage=ref.lineage)
    if turn is None or turn.erased or not can_read(as_reader(reader), turn.labels):
        return None
    return turn


def measure_total(parts: WindowParts, ref: ConversationRef, settings: WindowSettings,
                  reader: Iterable[str] | None = None, *, sync: bool = True) -> int:
    """``layout(parts, ref, settings, reader).total_tokens``, computed from SQL aggregates instead
    of every catalog item, so the pressure check after each append costs the same at any catalog
    size. Glimpses, the system note and the protected channel are counted exactly as
    :func:`layout` counts them (a test keeps the two equal)."""
    counter = parts.token_counter
    limit = glimpse_threshold(settings)
    whole, oversized, has_card = parts.catalog(ref).totals(limit, sync=sync)
    turns = parts.turns([turn_id for turn_id, _ in oversized]) if oversized else {}
    glimpse_sizes = _glimpse_sizes(parts, settings, turns)
    shown_oversized = sum(glimpse_sizes.get(turn_id, tokens) for turn_id, tokens in oversized)
    note = note_text(settings)
    note_tokens = counter.count(note) if ((glimpse_sizes or has_card) and note) else 0
    system = standing_system_turn(parts, ref, reader)
    total = ((system.tokens if system else 0) + note_tokens + protected_rendering(parts, ref, reader).tokens
             + whole + shown_oversized)
    card = None
    if settings.fold_cards_on and settings.fold_card_due(*parts.storage.folds.unfolded_totals(ref.id)):  # aggregates first: the tail
        tail = parts.storage.folds.unfolded_tail(ref.id)  # is read only when a card is due (issue 14)
        card = _fitting_fold_card(parts, ref, settings, tail, reader, total)
    return total + (card.tokens if card is not None else 0)


def protected_rendering(parts: WindowParts, ref: ConversationRef, reader: Iterable[str] | None) -> ChannelRendering:
    """The protected channel for the conversation as the reader may see it: every active record in
    force, verbatim (issue 8; :meth:`ProtectedChannel.render`), read with the ref's namespace and
    lineage (no ``conversations`` row is read)."""
    return parts.protected.render(ref.id, reader=reader, namespace=ref.namespace, lineage=ref.lineage)


def protected_messages(parts: WindowParts, ref: ConversationRef,
                       reader: Iterable[str] | None) -> list[tuple[dict[str, Any], int]]:
    """The protected channel's messages with their tokens (see :func:`protected_rendering`)."""
    rendering = protected_rendering(parts, ref, reader)
    return [(m, rendering.tokens) for m in rendering.messages]


def check_fixed_parts(settings: WindowSettings, counter) -> None:
    """Refuse settings whose fixed parts cannot fit (issue 13, point 6): the system note (shown
    whenever a card is) must leave room in ``budget - output_reserve`` for at least one turn.

    :raises InvalidInput: naming the sizes.
    """
    from ..memory.errors import InvalidInput

    note = note_text(settings)
    note_tokens = counter.count(note) if note else 0
    if note_tokens >= settings.usable_tokens:
        raise InvalidInput(
            f"the window settings cannot fit their fixed parts: system note {note_tokens} tokens >= usable budget "
            f"{settings.usable_tokens} (budget {settings.budget_tokens} - output reserve "
            f"{settings.output_reserve_tokens}); raise the budget, lower the reserve or shorten system_note"
        )


def check_can_fit(parts: WindowParts, settings: WindowSettings, lay: Layout) -> None:
    """Refuse, before anything is folded, a budget that no compaction could meet (issue 20,
    point 3: ``memfold context --budget 1`` used to fold the whole conversation into cards and
    then fail): after a fold the system note is shown, and the standing system turn, the
    protected channel and the newest item always stay verbatim.

    :raises BudgetError: naming those sizes and the usable budget; nothing is written.
    """
    check_protected_fits(settings, lay)
    if not lay.items:
        return
    note = note_text(settings)
    note_tokens = max(lay.note_tokens, parts.token_counter.count(note) if note else 0)
    newest = lay.shown[-1]
    least = lay.system_tokens + note_tokens + lay.protected_tokens + newest
    if least > settings.usable_tokens and lay.total_tokens > settings.usable_tokens:
        system = f"system turn {lay.system_tokens} + " if lay.system_tokens else ""
        raise BudgetError(
            f"what must stay verbatim does not fit: {system}system note {note_tokens} + protected "
            f"{lay.protected_tokens} + hot tail {newest} tokens (1 turns) = {least} tokens > usable budget "
            f"{settings.usable_tokens} (budget {settings.budget_tokens} - output reserve "
            f"{settings.output_reserve_tokens}); no compaction can fit it, so nothing was folded: raise the budget"
        )


def check_protected_fits(settings: WindowSettings, lay: Layout) -> None:
    """:raises BudgetError: when the protected channel alone exceeds the usable budget. Protected
    records never leave the channel for size (DESIGN.md §4.6), so this is the caller's to fix."""
    usable = settings.usable_tokens
    if lay.protected_tokens > usable:
        count = len(lay.protected.record_ids)
        raise BudgetError(
            f"the protected channel alone is {lay.protected_tokens} tokens ({count} active records) > usable budget "
            f"{usable} (budget {settings.budget_tokens} - output reserve {settings.output_reserve_tokens}); "
            "protected records never leave the context for size: satisfy, expire, revoke or supersede some "
            "(memfold protect list), or raise the budget"
        )


def memory_lines(parts: WindowParts, ref: ConversationRef, settings: WindowSettings, room_tokens: int,
                 reader: Iterable[str] | None, *, touch: bool = True) -> tuple[dict[str, Any] | None, int]:
    """The memories message (top ``memories_k`` records of the conversation's namespace that fit
    in ``room_tokens``) and its tokens; ``(None, 0)`` when none fit or none exist. ``touch=False``
    reads without counting accesses (a viewer's compile writes nothing, issue 19)."""
    store = parts.memory
    if settings.memories_k <= 0 or room_tokens <= 0 or store is None:
        return None, 0
    if getattr(store, "storage", None) is parts.storage and not parts.storage.records.has_active(ref.namespace):
        return None, 0  # the facade's own store, and nothing to read: one statement (issue 18, point 4)
    counter = parts.token_counter
    rdr = as_reader(reader)
    scored = [e for e in (store.read(ref.namespace, settings.memories_k) if touch else
                          store.read(ref.namespace, settings.memories_k, touch=False))
              if can_read(rdr, getattr(getattr(e, "record", e), "labels", ()))]
    header = "Memories:"
    lines: list[str] = []
    used = counter.count(header)
    for entry in scored:
        record = getattr(entry, "record", entry)
        key = f" {record.key}" if getattr(record, "key", None) else ""
        line = f"- [{record.type}{key}] {record.content}"
        cost = counter.count(line)
        if used + cost > room_tokens:
            break
        lines.append(line)
        used += cost
    if not lines:
        return None, 0
    text = "\n".join([header, *lines])
    return {"role": "system", "content": text}, counter.count(text)


def build_sections(parts: WindowParts, ref: ConversationRef, settings: WindowSettings,
                   reader: Iterable[str] | None = None, *, with_memories: bool = True,
                   lay: Layout | None = None) -> tuple[list[Section], Layout]:
    """The sections of the compiled context, in order: system note, protected, memories, cards
    and older turns (the catalog before the hot tail), hot turns.

    :param lay: the :class:`Layout` of this compile when the caller measured it already (for the
        same ``settings`` and ``reader``, with no change to the catalog since); read otherwise.
    :raises BudgetError: when the system note, the protected channel and the hot tail alone do not
        fit, or when the whole catalog still does not fit (sizes named in the message).
    """
    counter = parts.token_counter
    if lay is None:
        lay = layout(parts, ref, settings, reader)
    usable = settings.usable_tokens
    check_protected_fits(settings, lay)
    must = lay.system_tokens + lay.note_tokens + lay.protected_tokens + lay.hot_tokens
    if must > usable:
        system = f"system turn {lay.system_tokens} + " if lay.system_tokens else ""
        raise BudgetError(
            f"what must stay verbatim does not fit: {system}system note {lay.note_tokens} + protected "
            f"{lay.protected_tokens} + hot tail {lay.hot_tokens} tokens ({len(lay.items) - lay.hot} turns) = "
            f"{must} tokens > usable budget {usable} (budget {settings.budget_tokens} - output reserve "
            f"{settings.output_reserve_tokens}); raise the budget or lower hot_turns"
        )
    if lay.total_tokens > usable:
        cards = sum(s for it, s in zip(lay.items[:lay.hot], lay.shown) if it.kind == "card")
        older = sum(s for it, s in zip(lay.items[:lay.hot], lay.shown) if it.kind == "turn")
        failures = parts.storage.archive.summarizer_failure_count(ref.id)
        system = f"system turn {lay.system_tokens} + " if lay.system_tokens else ""
        raise BudgetError(
            f"the compiled context does not fit after compaction: {system}system note {lay.note_tokens} + protected "
            f"{lay.protected_tokens} + cards {cards} + unfolded turns {older} + hot tail {lay.hot_tokens} = "
            f"{lay.total_tokens} tokens > usable budget {usable}; "
            f"{failures} summarizer failure(s) recorded (see conversation.failures())"
        )
    sections = {name: Section(name) for name in SECTION_NAMES}
    if lay.system is not None:  # the standing system turn, verbatim (issue 20)
        sections["system"].messages.append(lay.system.message())
        sections["system"].tokens = lay.system_tokens
        sections["system"].refs.append(f"t{lay.system.id}")
    note = note_text(settings)
    if lay.note_tokens:
        sections["system_note"].messages.append({"role": "system", "content": note})
        sections["system_note"].tokens = lay.note_tokens
    for message in lay.protected.messages:
        sections["protected"].messages.append(message)
        sections["protected"].tokens += lay.protected.tokens
    if with_memories:
        room = min(usable - lay.total_tokens, int(settings.memories_share * usable))
        message, tokens = memory_lines(parts, ref, settings, room, reader)
        if message is not None:
            sections["memories"].messages.append(message)
            sections["memories"].tokens = tokens
    card_ids = [i.item_id for i in lay.items if i.kind == "card"]
    cards = parts.cards.get_many(card_ids) if card_ids else {}
    missing = [i.item_id for i in lay.items if i.kind == "turn" and i.item_id not in lay.turns and i.role != "system"]
    turns = {**lay.turns, **(parts.turns(missing) if missing else {})}
    rdr = as_reader(reader)
    seen_turn = False  # a card after a turn (a fold the model chose, a strategy's report) is shown in place
    open_calls: set[str] = set()  # the call ids a tool message shown next may answer
    for n, item in enumerate(lay.items):
        if lay.fold_card is not None and item.kind == "turn" and item.item_id == lay.fold_card.at_turn_id:
            section = sections["hot_turns" if n >= lay.hot else "turns"]  # the fold card: right before the
            section.messages.append({"role": "system", "content": lay.fold_card.text})  # newest user turn,
            open_calls = set()
            sections["fold_card"].tokens = lay.fold_card.tokens  # counted on its own line, not as a turn
        if item.kind == "turn" and item.role == "system":
            continue  # never shown in place: the standing one has its own section, older ones were replaced
        source = cards[item.item_id] if item.kind == "card" else turns[item.item_id]
        if not can_read(rdr, source.labels) or getattr(source, "erased", False):
            continue  # labels (issue 8): never shown to a reader who lacks one; erased turns show nothing
        if item.kind == "turn" and source.conversation_id != ref.id and source.metadata.get("quoted_from") is not None:
            continue  # issue 15: quoted material stays in the conversation that quoted it, never in a fork
        if item.kind == "card":
            section = sections["turns" if seen_turn and n < lay.hot else "hot_turns" if seen_turn else "cards"]
            section.messages.append({"role": "system", "content": cards[item.item_id].render()})
            open_calls = set()
        else:
            seen_turn = True
            section = sections["hot_turns" if n >= lay.hot else "turns"]
            turn = turns[item.item_id]
            message = turn.message()
            if lay.shown[n] != item.tokens:  # shown as a glimpse
                message["content"] = glimpse_text(turn, settings, counter)
            if message["role"] == "tool" and message.get("tool_call_id") not in open_calls:
                message = orphan_message(message)
                section.orphans.append(item.ref)
            elif message["role"] != "tool":
                open_calls = {c["id"] for c in message.get("tool_calls") or ()}
            section.messages.append(message)
        section.tokens += lay.shown[n]
        section.refs.append(item.ref)
    return [sections[name] for name in SECTION_NAMES], lay


def compile_context(parts: WindowParts, ref: ConversationRef, settings: WindowSettings,
                    reader: Iterable[str] | None = None, *, lay: Layout | None = None,
                    snapshot: bool = False, touch: bool = True) -> CompiledContext:
    """Assemble the compiled context (no compaction here; :meth:`Conversation.context` compacts first).

    :param lay: this compile's :class:`Layout`, when measured already (see :func:`build_sections`).
    :param snapshot: read the catalog, cards, turns and protected channel in one
        :meth:`~memfold.memory.storage.base.Storage.snapshot` (issue 13, point 5; ``lay`` is then
        ignored and read inside it), and the memories after it: a memory read counts accesses
        (its one write), which must not upgrade the snapshot's read transaction.
    :param touch: ``False``: the memory read counts no access (with ``snapshot``, nothing is written).
    :raises BudgetError: see :func:`build_sections`.
    """
    if not snapshot:
        sections, lay = build_sections(parts, ref, settings, reader, lay=lay)
        return _assemble(sections, lay, settings)
    with parts.storage.snapshot():
        lay = layout(parts, ref, settings, reader, sync=False)
        sections, lay = build_sections(parts, ref, settings, reader, with_memories=False, lay=lay)
    return finish_compile(parts, ref, settings, reader, sections, lay, touch=touch)


def finish_compile(parts: WindowParts, ref: ConversationRef, settings: WindowSettings,
                   reader: Iterable[str] | None, sections: list[Section], lay: Layout, *,
                   touch: bool = True) -> CompiledContext:
    """Add the memories to sections built ``with_memories=False`` (outside any snapshot: the
    memory read's access count is a write) and assemble the compiled context."""
    usable = settings.usable_tokens
    room = min(usable - lay.total_tokens, int(settings.memories_share * usable))
    message, tokens = memory_lines(parts, ref, settings, room, reader, touch=touch)
    if message is not None:
        memories = next(s for s in sections if s.name == "memories")
        memories.messages.append(message)
        memories.tokens = tokens
    return _assemble(sections, lay, settings)


def _assemble(sections: list[Section], lay: Layout, settings: WindowSettings) -> CompiledContext:
    messages = [m for s in sections for m in s.messages]
    refs = [r for s in sections for r in s.refs]
    shown_refs = set(refs)  # an item the reader may not see is not rendered: its ref is not named either
    glimpses = [i.item_id for i, shown in zip(lay.items, lay.shown)
                if i.kind == "turn" and i.role != "system" and shown != i.tokens and i.ref in shown_refs]
    return CompiledContext(
        messages=messages, sections={s.name: s.tokens for s in sections},
        total_tokens=sum(s.tokens for s in sections), budget_tokens=settings.budget_tokens,
        output_reserve_tokens=settings.output_reserve_tokens,
        refs=refs, glimpses=glimpses,
        hot_refs=[i.ref for i in lay.items[lay.hot:] if i.role != "system" and i.ref in shown_refs],
        fold_card=lay.fold_card.text if lay.fold_card is not None else None, fold_menu=lay.fold_card,
        orphan_results=[r for s in sections for r in s.orphans],
    )
