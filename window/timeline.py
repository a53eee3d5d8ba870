"""The window and the typed stores as they stood at a chosen time, read back from the archive,
the cards and the event log (issue 19: the viewer's time slider and memories table).

Nothing here writes. A record's status at time ``t`` is the ``to`` of its last status event at or
before ``t`` (``active`` from its first write on); its ``written_at`` at ``t`` is its creation or
the newest ``refresh`` event at or before ``t``. The score's three factors at ``t`` follow
:func:`memfold.memory.scoring.score`: importance, recency ``0.5^((t - written_at) / half_life)``
and access ``1 + access_weight x access_count``. Reads are statistics, not events (see
:meth:`MemoryStore.read`), so the access count is the record's current one at any ``t``; the
importance is the current one too (a refresh may have raised it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from ..memory.events import Event
from ..memory.records import MemoryRecord
from ..memory.scoring import recency
from ..memory.storage.rows import CatalogItem, ProtectedRecord
from ..memory.store import MemoryStore
from .archive import Turn
from .cards import Card
from .catalog import card_item, hot_start, turn_item
from .context import SECTION_NAMES, note_text
from .labels import as_reader, can_read
from .parts import ConversationRef, WindowParts
from .protected import CHANNEL_HEADER, render_line
from .settings import WindowSettings

#: event kinds that change a record's status (their details carry ``to``)
STATUS_KINDS = frozenset({"retire", "evict", "consume", "revert", "status"})


@dataclass(frozen=True)
class RecordAt:
    """One record as it stood at ``at``: its status then and the score's factors."""

    record: MemoryRecord
    at: float
    status: str
    written_at: float
    importance: float
    recency: float
    access: float
    half_life: float
    access_weight: float

    @property
    def score(self) -> float:
        return self.importance * self.recency * self.access

    def to_dict(self) -> dict[str, Any]:
        return {"record": self.record.to_dict(), "at": self.at, "status": self.status, "written_at": self.written_at,
                "importance": self.importance, "recency": self.recency, "access": self.access,
                "half_life": self.half_life, "access_weight": self.access_weight, "score": self.score}


def _events_by_record(events: Iterable[Event]) -> dict[int, list[Event]]:
    out: dict[int, list[Event]] = {}
    for event in events:
        if event.record_id is not None:
            out.setdefault(event.record_id, []).append(event)
    return out


def load_records(store: MemoryStore, namespace: str | None) -> tuple[list[MemoryRecord], dict[int, list[Event]]]:
    """Every record of ``namespace`` and its events by record id (what :func:`records_at` reads)."""
    return store.list(namespace, include_inactive=True), _events_by_record(store.events(namespace))


def records_at(store: MemoryStore, namespace: str | None, at: float, *, reader: Any = None,
               include_inactive: bool = True, loaded: tuple[list[MemoryRecord], dict[int, list[Event]]] | None = None
               ) -> list[RecordAt]:
    """Every record of ``namespace`` (``None``: all) written at or before ``at``, with its status
    then and its score's factors at ``at``, best score first (active before the rest).

    :param reader: labels (``None``: every label); records needing a label it lacks are left out.
    :param include_inactive: also the records retired, evicted or consumed by ``at``.
    :param loaded: :func:`load_records` of the same namespace, when the caller reads many times.
    """
    rdr = as_reader(reader)
    every, events = load_records(store, namespace) if loaded is None else loaded
    records = [r for r in every if r.created_at <= at and can_read(rdr, r.labels)]
    policies: dict[tuple[str, str], Any] = {}
    out = []
    for record in records:
        status, written = "active", record.created_at
        for event in events.get(record.id, []):
            if event.at > at:
                break
            if event.kind in STATUS_KINDS and event.details.get("to"):
                status = event.details["to"]
            elif event.kind == "refresh":
                written = event.at
        if status != "active" and not include_inactive:
            continue
        key = (record.namespace, record.type)
        if key not in policies:
            policies[key] = store.policy(*key)
        policy = policies[key]
        half_life = policy.effective_half_life(record.type, store.clock.unit)
        out.append(RecordAt(record=record, at=at, status=status, written_at=written, importance=record.importance,
                            recency=float(recency(at - written, half_life)),
                            access=1.0 + policy.access_weight * record.access_count,
                            half_life=half_life, access_weight=policy.access_weight))
    out.sort(key=lambda r: (r.status != "active", -r.score, -r.record.id))
    return out


__all__ = ["RecordAt", "STATUS_KINDS", "load_records", "records_at"]


# -- the window at turn N ------------------------------------------------------------------------
@dataclass(frozen=True)
class MadeCard:
    """A card with the time it was made: its ``fold``/``rollup`` event's time (the card's own
    ``created_at`` when no event names it)."""

    card: Card
    made_at: float


def made_cards(parts: WindowParts, ref: ConversationRef) -> list[MadeCard]:
    """The cards of the conversation's lineage (the family's cards made in it or in the part of an
    ancestor it shares), oldest first, each with the time its fold event was logged."""
    lineage = dict(ref.lineage)
    cards = [c for c in parts.cards.family_cards(ref.family_id)
             if c.conversation_id in lineage and (lineage[c.conversation_id] is None
                                                  or c.last_seq <= lineage[c.conversation_id])]
    made: dict[str, float] = {}
    for kind in ("fold", "rollup"):
        for event in parts.storage.events.list(namespace=ref.namespace, kind=kind):
            card_ref = event.details.get("card")
            if isinstance(card_ref, str) and card_ref not in made:
                made[card_ref] = event.at
    return [MadeCard(c, made.get(c.ref, c.created_at)) for c in sorted(cards, key=lambda c: c.id)]


@dataclass
class WindowAt:
    """The catalog right after turn ``seq`` was appended (and compacted): the turns up to it with
    every card made before the next turn replacing what it covers.

    ``items`` are catalog items in order; ``turns`` and ``cards`` hold their sources (every turn up
    to ``seq``, every card alive then); ``at`` is turn ``seq``'s time.
    """

    seq: int
    at: float
    items: list[CatalogItem]
    turns: dict[int, Turn]
    cards: dict[int, Card]
    folded: set[str]
    next_turn: Turn | None = None


def check_turn_number(seq: Any, last: int, conversation_id: str) -> int:
    """``seq`` checked as a turn number of a conversation whose last turn is ``last``.

    :raises InvalidInput: for a value that is not a whole number, or one outside ``1..last``,
        naming the valid range (never clamped: turn 0 or 10**9 is a caller's mistake).
    """
    from ..memory.errors import InvalidInput

    if last < 1:
        raise InvalidInput(f"conversation {conversation_id!r} has no turns yet: there is no turn {seq!r} to look at")
    import operator

    try:
        if isinstance(seq, bool):
            raise TypeError
        seq = operator.index(seq)  # an int, or a numpy integer
    except TypeError:
        raise InvalidInput(f"the turn number must be a whole number from 1 to {last} (the turns of "
                           f"{conversation_id!r}), got {type(seq).__name__} {seq!r}") from None
    if not 1 <= seq <= last:
        raise InvalidInput(f"turn {seq} is out of range: {conversation_id!r} has turns 1 to {last}")
    return seq


def window_at(parts: WindowParts, ref: ConversationRef, seq: int, *, history: list[Turn] | None = None,
              cards: list[MadeCard] | None = None) -> WindowAt:
    """The catalog as it stood after turn ``seq`` (1-based, at most the last turn), rebuilt from the
    archive and the fold/roll-up events: a card counts from the moment its event was logged, i.e.
    when it was made before the next turn's time (ties go to the later turn). ``folded`` names every
    turn and card that a card alive then covers (shown dimmed by the viewer)."""
    turns = parts.archive.history(ref.id, lineage=ref.lineage) if history is None else history
    seq = check_turn_number(seq, len(turns), ref.id)
    made = made_cards(parts, ref) if cards is None else cards
    upto = turns[:seq]
    next_at = turns[seq].created_at if seq < len(turns) else float("inf")
    alive = [m.card for m in made if m.made_at < next_at and m.card.last_seq <= seq and not m.card.stale]
    order: list[str] = [f"t{t.id}" for t in upto]
    folded: set[str] = set()
    for card in alive:
        covers = list(card.covers)
        if not covers or covers[0] not in order:
            continue
        i = order.index(covers[0])
        if order[i:i + len(covers)] != covers:
            continue  # not a contiguous run of the catalog then (a fork's view, a lost race): left unfolded
        order[i:i + len(covers)] = [card.ref]
        folded.update(covers)
    by_turn = {f"t{t.id}": t for t in upto}
    by_card = {c.ref: c for c in alive}
    counter = parts.token_counter
    items = [turn_item(by_turn[r]) if r in by_turn else card_item(by_card[r], counter) for r in order]
    return WindowAt(seq, upto[-1].created_at, items, {t.id: t for t in upto}, {c.id: c for c in alive}, folded,
                    turns[seq] if seq < len(turns) else None)


def protected_at(parts: WindowParts, ref: ConversationRef, at: float, reader: Any = None) -> list[ProtectedRecord]:
    """The protected records in force for the conversation at ``at``: made by then, not yet moved
    out of ``active`` (``changed_at`` later, or still active), and not past a deadline."""
    rdr = as_reader(reader)
    scope = {conv for conv, _ in ref.lineage}
    out = []
    for rec in parts.storage.protected.list(namespace=ref.namespace):
        if rec.conversation_id is not None and rec.conversation_id not in scope:
            continue
        if rec.created_at > at or not can_read(rdr, rec.labels):
            continue
        if rec.state != "active" and rec.changed_at <= at:
            continue
        if rec.due_at is not None and rec.due_at <= at:
            continue
        out.append(rec)
    return out


def context_at(parts: WindowParts, ref: ConversationRef, settings: WindowSettings, seq: int, *,
               reader: Any = None, history: list[Turn] | None = None,
               cards: list[MadeCard] | None = None,
               loaded: tuple[list[MemoryRecord], dict[int, list[Event]]] | None = None) -> dict[str, Any]:
    """What the compiled context was right after turn ``seq``, section by section, for ``reader``
    (:func:`window_at` for the catalog; the protected channel, the standing system turn and the top
    memories as they stood at that turn's time, :func:`protected_at`, :func:`records_at`). Items the
    reader may not see are left out, as in a live compile.

    :returns: ``{"seq", "at", "items": [...], "messages": [...], "sections": {name: tokens},
        "total_tokens", "usable_tokens", "budget_tokens", "hot_refs", "folded", "cards"}`` (``cards``:
        every card alive then, also those rolled up since); each message carries its ``section``
        and, for catalog items, its ``ref``.
    """
    counter = parts.token_counter
    rdr = as_reader(reader)
    win = window_at(parts, ref, seq, history=history, cards=cards)
    sections: dict[str, int] = {name: 0 for name in SECTION_NAMES}
    messages: list[dict[str, Any]] = []
    system = next((t for t in reversed(list(win.turns.values())) if t.role == "system"), None)
    if system is not None and not system.erased and can_read(rdr, system.labels):
        messages.append({**system.message(), "section": "system", "ref": f"t{system.id}"})
        sections["system"] = system.tokens
    note = note_text(settings)
    if note and any(i.kind == "card" for i in win.items):
        messages.append({"role": "system", "content": note, "section": "system_note"})
        sections["system_note"] = counter.count(note)
    records = protected_at(parts, ref, win.at, reader)
    if records:
        content = CHANNEL_HEADER + "\n" + "\n".join(render_line(r, parts.clock) for r in records)
        messages.append({"role": "system", "content": content, "section": "protected"})
        sections["protected"] = counter.count(content)
    shown = [0 if i.kind == "turn" and i.role == "system" else i.tokens for i in win.items]
    fixed = sections["system"] + sections["system_note"] + sections["protected"]
    hot = hot_start(win.items, settings.hot_turns, settings.usable_tokens - fixed, shown)
    catalog_tokens = sum(shown)
    memory_at = len(messages)
    room = min(settings.usable_tokens - fixed - catalog_tokens, int(settings.memories_share * settings.usable_tokens))
    if parts.memory is not None and settings.memories_k > 0 and room > 0 and isinstance(parts.memory, MemoryStore):
        lines, used = [], counter.count("Memories:")
        for entry in records_at(parts.memory, ref.namespace, win.at, reader=reader, include_inactive=False,
                                loaded=loaded)[
                :settings.memories_k]:
            rec = entry.record
            line = f"- [{rec.type}{f' {rec.key}' if rec.key else ''}] {rec.content}"
            cost = counter.count(line)
            if used + cost > room:
                break
            lines.append(line)
            used += cost
        if lines:
            text = "\n".join(["Memories:", *lines])
            messages.insert(memory_at, {"role": "system", "content": text, "section": "memories"})
            sections["memories"] = counter.count(text)
    hot_refs = []
    for n, item in enumerate(win.items):
        if item.kind == "turn" and item.role == "system":
            continue
        source = win.cards[item.item_id] if item.kind == "card" else win.turns[item.item_id]
        if not can_read(rdr, source.labels) or getattr(source, "erased", False):
            continue
        if item.kind == "card":
            name, message = "cards", {"role": "system", "content": source.render()}
        else:
            name, message = ("hot_turns" if n >= hot else "turns"), source.message()
            if n >= hot:
                hot_refs.append(item.ref)
        messages.append({**message, "section": name, "ref": item.ref})
        sections[name] += shown[n]
    visible = {m.get("ref") for m in messages}
    return {
        "seq": win.seq, "at": win.at, "at_text": parts.clock.format(win.at),
        "items": [{**i.to_dict(), "hot": n >= hot} for n, i in enumerate(win.items) if i.ref in visible],
        "messages": messages, "sections": sections, "total_tokens": sum(sections.values()),
        "usable_tokens": settings.usable_tokens, "budget_tokens": settings.budget_tokens,
        "hot_refs": hot_refs, "folded": sorted(win.folded),
        "cards": [c.ref for c in win.cards.values() if can_read(rdr, c.labels)],
        # the turn appended next: an assistant turn there is the model call that read this context
        "next": None if win.next_turn is None or not can_read(rdr, win.next_turn.labels) else {
            "ref": f"t{win.next_turn.id}", "seq": win.next_turn.seq, "role": win.next_turn.role},
    }


__all__ += ["MadeCard", "WindowAt", "context_at", "made_cards", "protected_at", "window_at"]


def preview(parts: WindowParts, ref: ConversationRef, settings: WindowSettings, reader: Any = None) -> dict[str, Any]:
    """The compiled context a model call would get now, section by section, read without writing:
    one snapshot, turns the catalog does not hold yet laid out as turn items, memories read without
    counting accesses and no compaction (:func:`memfold.window.context.compile_context` with
    ``snapshot`` and ``touch=False``).

    :returns: the compiled context's dict plus ``"sections_detail"``: ``[{"name", "tokens", "refs",
        "messages"}]`` in the order the model reads them.
    :raises BudgetError: when the context does not fit as it stands (a real call would fold first).
    """
    from .context import build_sections, finish_compile, layout

    with parts.storage.snapshot():
        lay = layout(parts, ref, settings, reader, sync=False)
        sections, lay = build_sections(parts, ref, settings, reader, with_memories=False, lay=lay)
    compiled = finish_compile(parts, ref, settings, reader, sections, lay, touch=False)
    return {**compiled.to_dict(), "sections_detail": [
        {"name": s.name, "tokens": s.tokens, "refs": list(s.refs), "messages": list(s.messages)} for s in sections]}


__all__ += ["preview"]


def timeline(parts: WindowParts, ref: ConversationRef, settings: WindowSettings, reader: Any = None) -> list[dict[str, Any]]:
    """:func:`context_at` after every turn, without the messages: one frame per turn with the
    strip (``items``), the section sizes, the cards made after that turn (``new_cards``, also one
    rolled up in the same turn) and what the cards alive then fold."""
    history = parts.archive.history(ref.id, lineage=ref.lineage)
    cards = made_cards(parts, ref)
    loaded = load_records(parts.memory, ref.namespace) if isinstance(parts.memory, MemoryStore) else None
    frames, seen = [], set()
    for seq in range(1, len(history) + 1):
        at = context_at(parts, ref, settings, seq, reader=reader, history=history, cards=cards, loaded=loaded)
        alive = set(at["cards"])  # a card rolled up in the turn it was made counts too
        new = sorted(alive - seen, key=lambda r: int(r[1:]))
        seen |= alive
        frames.append({"seq": seq, "at": at["at"], "at_text": at["at_text"], "turn": f"t{history[seq - 1].id}",
                       "items": at["items"], "sections": at["sections"], "total_tokens": at["total_tokens"],
                       "usable_tokens": at["usable_tokens"], "new_cards": new, "folded": at["folded"]})
    return frames


__all__ += ["timeline"]
