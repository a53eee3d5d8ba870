"""Recall tools: search, describe and expand, as library calls and as agent tools (issue 4, point 7).

Invariant kept here: a summary is a map, and every map leads back to the exact words. ``expand``
walks a card's cover list down to verbatim archived turns; ``search`` finds archived turns and
cards with the facade's BM25 ranking (any query word may match, also as a word prefix; stop words
ignored; neighbouring turns support a match), fused with embeddings when the facade has an
embedder. The query is never syntax (quotes, ``*``, ``-``, ``NEAR``, ``AND``, parentheses and
colons are plain text: :func:`memfold.memory.fts.literal_query`). Everything is scoped to the
conversation's lineage (a fork sees its parent's turns up to the fork).

Every tool takes a ``reader``: an agent's tool calls must run with the same reader as its
compiled context, or they would reveal what the context hides (:func:`handle_tool_call`).

:func:`search` is the single entry point for retrieval, so a hybrid ranker can replace its body.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

from ..memory.errors import CardNotFound, InvalidInput, MemfoldError, TurnNotFound
from ..memory.fts import literal_query
from .archive import Turn
from .cards import Card, parse_ref
from .labels import as_reader, can_read, require
from .parts import ConversationRef, WindowParts

MAX_K = 100


@dataclass(frozen=True)
class RecallHit:
    """One hit of the recall tool ``search``: where an archived turn or card sits in the
    conversation, as the agent sees it. ``ref`` (``t<id>`` or ``c<id>``), ``kind``, ``score``
    (higher is better: the fused hybrid score, or the negated SQLite BM25 rank without a
    searcher), a ``snippet`` with matches in ``[...]``, the seq span,
    the card depth (0 for a turn) and the turn's role (``None`` for a card).

    Not a :class:`memfold.memory.search.SearchHit`: that is one ranked item of the hybrid ranker
    (turns, cards and memory records, fused score, higher is better, full text); a recall hit is
    the conversation-scoped view the tool reports, built from one.
    """

    ref: str
    kind: str
    id: int
    score: float
    snippet: str
    first_seq: int
    last_seq: int
    depth: int
    role: str | None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dict(self.__dict__)

    def line(self) -> str:
        """One human line."""
        where = (f"turn {self.first_seq}, {self.role}" if self.kind == "turn"
                 else f"card depth {self.depth}, turns {self.first_seq}-{self.last_seq}")
        return f"{self.ref} [{where}] {self.snippet}"


def _hit(m: Any, score: float, snippet: str) -> RecallHit:
    """A recall hit from a storage :class:`~memfold.memory.storage.rows.TextMatch`."""
    return RecallHit(f"{m.kind[0]}{m.id}", m.kind, m.id, score, snippet, m.first_seq, m.last_seq, m.depth, m.role)


def search(parts: WindowParts, ref: ConversationRef, query: str, k: int = 10,
           filters: Mapping[str, Any] | None = None, *, reader: Any = None,
           count_name: str = "k") -> list[RecallHit]:
    """Archived turns and cards matching ``query``, best first: hybrid BM25 + embedding ranking
    when the facade has an embedder (the default; :mod:`memfold.memory.search`), else the same BM25
    ranking alone (prefix matching, stop words, neighbour support); plain FTS5 BM25 only for a
    conversation whose parts have no searcher.

    :param query: user text, never FTS syntax (any word may match, also as a prefix; more matches rank higher).
    :param k: at most this many hits, 1..100.
    :param filters: optional ``{"kind": "turn" | "card"}``.
    :param reader: a :class:`~memfold.window.labels.Reader` or label list: hits whose labels it lacks
        are never returned; stale or erased cards never are (issue 8).
    :returns: hits best first; ``[]`` when the query has no searchable word.
    :raises InvalidInput: for a non-text query, a bad ``k`` or an unknown filter.
    """
    if not isinstance(query, str):
        raise InvalidInput(f"query must be text, got {type(query).__name__}")
    if not query.strip():
        raise InvalidInput("search query is empty: give words to look for")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise InvalidInput(f"{count_name} must be an integer from 1 to {MAX_K}, got {k!r}")
    if filters is not None and not isinstance(filters, Mapping):
        raise InvalidInput(f"search filters must be a mapping such as {{'kind': 'turn'}}, got {filters!r}")
    filters = dict(filters or {})
    unknown = set(filters) - {"kind"}
    if unknown:
        raise InvalidInput(f"unknown search filter(s) {', '.join(sorted(unknown))}: the known filter is 'kind'")
    kind = filters.get("kind")
    if kind not in (None, "turn", "card"):
        raise InvalidInput(f"filter kind must be 'turn' or 'card', got {kind!r}")
    match = literal_query(query)
    if match is None:
        return []
    rdr = as_reader(reader)
    if parts.searcher is not None:  # hybrid with an embedder, else the same BM25 ranking alone
        return _scoped(parts, ref, _hybrid_search(parts, ref, query, match, k if len(ref.lineage) == 1 else MAX_K * 10,
                                                  kind, rdr), k)
    # over-fetch, then drop what the reader (or, in a fork, the fork point) does not allow
    fetch = k if rdr is None and len(ref.lineage) == 1 else MAX_K * 10
    hits: list[RecallHit] = []
    fulltext = parts.storage.fulltext
    lineage = list(ref.lineage)
    if kind in (None, "turn"):
        hits.extend(_hit(m, -m.score, m.snippet) for m in fulltext.match_turns(match, lineage, fetch)
                    if can_read(rdr, list(m.labels)))
    if kind in (None, "card"):
        hits.extend(_hit(m, -m.score, m.snippet) for m in fulltext.match_cards(match, ref.family_id, lineage, fetch)
                    if can_read(rdr, list(m.labels)))
    hits.sort(key=lambda h: (-h.score, h.kind != "turn", h.id))  # SQLite's BM25 is negative: negated, higher is better
    return _scoped(parts, ref, hits, k)


def _scoped(parts: WindowParts, ref: ConversationRef, hits: list[RecallHit], k: int) -> list[RecallHit]:
    """The first ``k`` hits the conversation may show (issue 15): in a fork, no quoted turn of an
    ancestor and no ancestor card made after the fork point (:mod:`memfold.window.forks`). A root
    conversation's lineage is itself, so nothing is read for it."""
    if len(ref.lineage) == 1:
        return hits[:k]
    from .forks import card_visible, turn_visible

    turns = parts.turns([h.id for h in hits if h.kind == "turn"])
    cards = parts.cards.get_many([h.id for h in hits if h.kind == "card"])
    out = [h for h in hits if (turn_visible(ref, turns[h.id]) if h.kind == "turn" and h.id in turns
                               else card_visible(ref, cards[h.id]) if h.kind == "card" and h.id in cards else False)]
    return out[:k]


def _hybrid_search(parts: WindowParts, ref: ConversationRef, query: str, match: str, k: int, kind: str | None,
                   rdr: Any) -> list[RecallHit]:
    """The body of :func:`search` when the parts have a searcher: hybrid BM25 + embedding ranking
    (:class:`memfold.memory.search.HybridSearch`, issue 6) over the same lineage-scoped turns and
    non-stale cards. ``score`` is the fused score (higher is better); hits the
    BM25 ranker did not find get the item's opening words as their snippet."""
    kinds = ("turn", "card") if kind is None else (kind,)
    fetch = k if rdr is None else MAX_K * 10  # over-fetch, then drop what the reader may not see
    found = parts.searcher.search(query, conversation_id=ref.id, lineage=ref.lineage, kinds=kinds, limit=fetch)
    shown = [h for h in found if can_read(rdr, list(h.labels))][:k]
    fulltext = parts.storage.fulltext
    matches = {kind: fulltext.describe_matches(kind, [h.id for h in shown if h.kind == kind], match)
               for kind in dict.fromkeys(h.kind for h in shown)}  # one batch per kind, not per hit
    hits: list[RecallHit] = []
    for h in shown:
        m = matches[h.kind][h.id]
        words = h.text.split()
        snippet = m.snippet if m.snippet is not None else " ".join(words[:12]) + (" …" if len(words) > 12 else "")
        hits.append(_hit(m, h.score, snippet))
    return hits


def get_card(parts: WindowParts, ref: ConversationRef, card_id: int) -> Card:
    """A card this conversation may show: of its lineage, existing when a fork was made, not
    stale (issue 15, points 3 and 5; :func:`memfold.window.forks.card_visible`).

    :raises CardNotFound: otherwise; a stale card is refused by name (its sources were relabelled
        or erased, so its text and frozen labels are no longer what its sources allow)."""
    from .forks import card_visible

    _check_in_range(parts, ref, "card", card_id)
    card = parts.cards.get(card_id)
    if card.family_id != ref.family_id:
        raise CardNotFound(f"no summary card c{card_id} in conversation {ref.id!r}")
    if card.stale:
        raise CardNotFound(f"summary card c{card_id} is stale (a source was relabelled or erased) and is never "
                           "served: search, or expand the card that replaced it in the context")
    if not card_visible(ref, card) and _receipt_scope(parts, ref, card) is ref:
        raise CardNotFound(f"no summary card c{card_id} in conversation {ref.id!r} (it belongs to another branch "
                           "of the family, or was made after the fork point)")
    return card


def _receipt_scope(parts: WindowParts, ref: ConversationRef, card: Card) -> ConversationRef:
    """The conversation whose view a card is read in: a subagent's receipt card (issue 14, point
    6) that was handed to ``ref`` is read in the child's view, so the parent expands it down to
    the child's archive; any other card in ``ref``'s own (issue 15's fork rules)."""
    if card.conversation_id == ref.id:
        return ref
    fold = parts.storage.folds.fold_of_card(card.id)
    if fold is None or fold.kind != "receipt" or fold.conversation_id != ref.id:
        return ref
    return ConversationRef.load(parts.archive, card.conversation_id)


def _check_in_range(parts: WindowParts, ref: ConversationRef, kind: str, item_id: int) -> None:
    """Refuse an id no row can have (0, negative, past SQLite's range) naming the ids this
    conversation really has (only read on that error path).

    :raises InvalidInput: ``turn id 0 is out of range: the turns of 'x' are t1 to t57``.
    """
    from ..memory.validation import MAX_ID

    if isinstance(item_id, int) and not isinstance(item_id, bool) and 1 <= item_id <= MAX_ID:
        return
    if kind == "turn":
        first = parts.archive.history(ref.id, limit=1, lineage=ref.lineage)
        last_seq = parts.archive.last_seq(ref.id, lineage=ref.lineage)
        last = parts.archive.history(ref.id, after_seq=max(0, last_seq - 1), lineage=ref.lineage) if first else []
        where = (f"the turns of {ref.id!r} are t{first[0].id} to t{last[-1].id}" if first and last
                 else f"{ref.id!r} has no turns yet")
    else:
        cards = [i.item_id for i in parts.catalog(ref).view() if i.kind == "card"]
        where = (f"the cards in {ref.id!r}'s window are {', '.join(f'c{c}' for c in cards[:8])}"
                 + (" ..." if len(cards) > 8 else "") + " (the cards they fold can be expanded from them)"
                 if cards else f"{ref.id!r} has no summary cards yet")
    raise InvalidInput(f"{kind} id {item_id} is out of range: {where}")


def get_turn(parts: WindowParts, ref: ConversationRef, turn_id: int) -> Turn:
    """An archived turn this conversation may show: of its lineage up to the fork point, and a
    quoted turn only in the conversation that quoted it (issue 15, points 4-5).
    :raises TurnNotFound: otherwise."""
    from .forks import turn_visible

    _check_in_range(parts, ref, "turn", turn_id)
    turn = parts.archive.get(turn_id)
    if turn.family_id != ref.family_id or not turn_visible(ref, turn):
        raise TurnNotFound(f"no archived turn t{turn_id} in conversation {ref.id!r}")
    return turn


def describe(parts: WindowParts, conv: ConversationRef, ref: int | str, *, reader: Any = None) -> dict[str, Any]:
    """A card's coverage: depth, seq span, first/last turn ids, time range, child ids, token counts
    (its own and its sources'), labels, summarizer and the cards that roll it up.

    :param ref: ``"c12"``, ``12`` or ``"t34"`` (a turn is described by its own fields).
    :raises CardNotFound: / :raises TurnNotFound: for an id outside the conversation's family.
    """
    kind, item_id = parse_ref(ref)
    rdr = as_reader(reader)
    if kind == "turn":
        turn = get_turn(parts, conv, item_id)
        require(rdr, turn.labels, f"t{turn.id}")
        return {"ref": f"t{turn.id}", "kind": "turn", "seq": turn.seq, "role": turn.role, "tokens": turn.tokens,
                "created_at": turn.created_at, "labels": list(turn.labels), "sha256": turn.sha256,
                "parents": _visible_parents(parts, conv, "turn", turn.id, rdr)}
    card = get_card(parts, conv, item_id)
    require(rdr, card.labels, card.ref)
    conv = _receipt_scope(parts, conv, card)
    return {
        "ref": card.ref, "kind": "card", "depth": card.depth, "first_seq": card.first_seq, "last_seq": card.last_seq,
        "first_turn_id": card.first_turn_id, "last_turn_id": card.last_turn_id, "start_at": card.start_at,
        "end_at": card.end_at, "children": list(card.covers), "tokens": card.tokens,
        "source_tokens": card.source_tokens, "labels": list(card.labels), "summarizer": card.summarizer,
        "stale": card.stale, "created_at": card.created_at,
        "parents": _visible_parents(parts, conv, "card", card.id, rdr),
    }


def expand(parts: WindowParts, conv: ConversationRef, ref: int | str, *, to_turns: bool = False,
           reader: Any = None) -> list[Turn | Card]:
    """A card's children in order (turns for depth 1, cards deeper); with ``to_turns`` every
    verbatim turn it covers. A turn id expands to the whole turn itself (for glimpses).

    :raises CardNotFound: / :raises TurnNotFound: for an id outside the conversation's family.
    """
    kind, item_id = parse_ref(ref)
    rdr = as_reader(reader)
    if kind == "turn":
        turn = get_turn(parts, conv, item_id)
        require(rdr, turn.labels, f"t{turn.id}")
        return [turn]
    card = get_card(parts, conv, item_id)
    require(rdr, card.labels, card.ref)
    conv = _receipt_scope(parts, conv, card)
    from .forks import turn_visible

    def visible(item: Turn | Card) -> bool:
        # a child card's labels are frozen when it was made: one whose source was relabelled is
        # stale, and is left out (its turns are reachable through expand(to_turns) and search)
        if isinstance(item, Card):
            return not item.stale and not getattr(item, "erased", False) and can_read(rdr, item.labels)
        return turn_visible(conv, item) and can_read(rdr, item.labels)  # an erased turn stays, as a marker

    if to_turns:
        turns = parts.turns(sorted(_turn_ids_under(parts, card)))
        return [t for t in sorted(turns.values(), key=lambda t: t.seq) if visible(t)]
    out: list[Turn | Card] = []
    for child in card.covers:
        child_kind, child_id = parse_ref(child)
        item = parts.archive.get(child_id) if child_kind == "turn" else parts.cards.get(child_id)
        if visible(item):
            out.append(item)
    return out


def _visible_parents(parts: WindowParts, conv: ConversationRef, kind: str, item_id: int, rdr: Any) -> list[str]:
    """Refs of the cards rolling up an item that this conversation and reader may see."""
    from .forks import card_visible

    cards = parts.cards.get_many(parts.cards.parent_of(kind, item_id)).values()
    return [c.ref for c in sorted(cards, key=lambda c: c.id) if card_visible(conv, c) and can_read(rdr, c.labels)]


def _turn_ids_under(parts: WindowParts, card: Card) -> set[int]:
    ids: set[int] = set()
    stack = [card.id]
    while stack:
        for child in parts.cards.covers(stack.pop()):  # the cards family's cover list
            kind, child_id = parse_ref(child)
            (ids.add if kind == "turn" else stack.append)(child_id)
    return ids


TOOL_DEFINITIONS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "search",
        "description": "Search the full conversation archive (every past turn, verbatim) and the summary cards. "
                       "Use it to find exact commands, paths, ids, numbers and dates before relying on them.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "Words to look for: any word may match, also as the start of a longer word."},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_K, "description": "Maximum hits (default 5)."},
            "k": {"type": "integer", "minimum": 1, "maximum": MAX_K, "description": "Deprecated: the same as limit."},
        }, "required": ["query"], "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "describe",
        "description": "Describe a summary card [cN]: depth, the turns it spans, its time range, its children.",
        "parameters": {"type": "object", "properties": {
            "id": {"type": "string", "description": "A card id such as 'c12' (or a turn id such as 't34')."},
        }, "required": ["id"], "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "expand",
        "description": "Open a summary card [cN] to its children, or with to_turns=true to the verbatim turns it "
                       "covers; a turn id 't34' returns that whole turn (use it for glimpses).",
        "parameters": {"type": "object", "properties": {
            "id": {"type": "string", "description": "A card id such as 'c12' or a turn id such as 't34'."},
            "to_turns": {"type": "boolean", "description": "Return the verbatim turns (default false)."},
        }, "required": ["id"], "additionalProperties": False}}},
]


def format_item(item: Turn | Card) -> str:
    """One item as tool-result text: a turn verbatim with its id, or a card with its header."""
    if isinstance(item, Card):
        return f"{item.ref} [card depth {item.depth}, turns {item.first_seq}-{item.last_seq}] {item.text}"
    if item.erased:  # issue 15: an erased turn is a marker, never a silent gap
        return f"t{item.id} [turn {item.seq}] [erased t{item.id}]"
    who = item.role + (f"({item.name})" if item.name else "")
    calls = f" tool_calls={json.dumps(item.tool_calls, ensure_ascii=False)}" if item.tool_calls else ""
    return f"t{item.id} [turn {item.seq}, {who}] {item.content}{calls}"


def handle_tool_call(parts: WindowParts, conv: ConversationRef, name: str,
                     arguments: str | Mapping[str, Any] | None, *, reader: Any = None) -> str:
    """Run one recall tool call as an agent would send it and return text for the tool message.

    **Security: handle an agent's tool calls with the same ``reader`` as its compiled context.**
    ``reader=None`` means the trusted owner, who sees every turn: an agent whose context was
    compiled with ``context(reader=Reader.of([]))`` (secrets hidden) would otherwise read a
    secret turn back with ``expand t12`` or ``search 4471``. With a reader, ``search`` leaves out
    hits whose labels it lacks, and ``describe``/``expand`` of such an item answer
    ``"error: ... may not read ..."`` (DESIGN.md §4.9, :mod:`memfold.window.labels`).

    :param name: ``"search"``, ``"describe"`` or ``"expand"``.
    :param arguments: the call's arguments, as the JSON string the model produced or a dict.
    :param reader: a :class:`~memfold.window.labels.Reader`, a label list, or ``None`` (owner).
    :returns: the result text; problems the model can fix (unknown tool, bad JSON, unknown id,
        an item the reader may not see) come back as ``"error: ..."`` text instead of an
        exception, so the agent loop goes on.
    :raises InvalidInput: for a bad ``reader``, or ``arguments`` that are neither text nor a
        mapping (the caller's mistake, not the model's).
    """
    rdr = as_reader(reader)
    check_arguments_type(name, arguments)
    try:
        args = tool_arguments(name, arguments)
        if name not in _TOOL_ARGUMENTS:
            raise InvalidInput(f"unknown tool {name!r}: the recall tools are search, describe and expand")
        args = _check_tool_arguments(name, args)
        if name == "search":
            hits = search(parts, conv, args["query"], args.get("limit", args.get("k", 5)), reader=rdr,
                          count_name="limit" if "limit" in args else "k")
            return "\n".join(h.line() for h in hits) if hits else "no matches"
        if name == "describe":
            return json.dumps(describe(parts, conv, args["id"], reader=rdr), ensure_ascii=False)
        items = expand(parts, conv, args["id"], to_turns=args.get("to_turns", False), reader=rdr)
        return "\n".join(format_item(i) for i in items)
    except MemfoldError as exc:
        return f"error: {exc}"


def _json_kind(value: Any) -> str:
    """What a JSON value is, in JSON's words (``a list``, ``a number``, ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    return f"a {type(value).__name__}"


def check_arguments_type(name: Any, arguments: Any) -> None:
    """Refuse a Python value that cannot be a tool call's arguments (the caller's mistake: a
    model's arguments come as the JSON text it wrote, or as the dict parsed from it).

    :raises InvalidInput: naming the tool and the object expected.
    """
    if arguments is None or isinstance(arguments, (str, Mapping)):
        return
    raise InvalidInput(f"tool {name!r}: arguments must be a JSON object (a dict of argument names and values) or "
                       f"the JSON text of one, got {type(arguments).__name__} {arguments!r:.60}")


def tool_arguments(name: Any, arguments: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """A tool call's arguments as a dict: the JSON text the model wrote (empty text: no
    arguments) or a mapping.

    :raises InvalidInput: for text that is not JSON, or JSON that is not an object, naming the
        tool (never a Python internal such as ``cannot convert dictionary update sequence``).
    """
    check_arguments_type(name, arguments)
    if isinstance(arguments, str):
        try:
            args = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError) as exc:  # nested past the decoder's depth (round 13)
            raise InvalidInput(f"tool {name!r}: arguments are not valid JSON ({exc}): "
                               "send a JSON object of argument names and values") from None
    else:
        args = dict(arguments or {})
    if not isinstance(args, dict):
        raise InvalidInput(f"tool {name!r}: arguments must be a JSON object of argument names and values, "
                           f"got {_json_kind(args)}")
    return args


#: each recall tool's arguments: name -> (JSON type, required); ``limit`` is accepted for ``k``
_TOOL_ARGUMENTS: dict[str, dict[str, tuple[type, bool]]] = {
    "search": {"query": (str, True), "k": (int, False), "limit": (int, False)},
    "describe": {"id": (str, True)},
    "expand": {"id": (str, True), "to_turns": (bool, False)},
}
_JSON_NAMES = {str: "a string", int: "an integer", bool: "true or false"}


def _check_tool_arguments(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """``args`` checked against the tool's schema, with messages a model can act on (never a
    Python internal such as ``invalid literal for int()``).

    :raises InvalidInput: naming a missing or unknown argument, or one of the wrong type.
    """
    spec = _TOOL_ARGUMENTS[name]
    unknown = sorted(set(args) - set(spec))
    if unknown:
        raise InvalidInput(f"{name}: unknown argument(s) {', '.join(unknown)}; "
                           f"{name} takes {', '.join(spec)}")
    for arg, (kind, required) in spec.items():
        if arg not in args:
            if required:
                raise InvalidInput(f"{name}: the argument {arg!r} is required ({_JSON_NAMES[kind]})")
            continue
        value = args[arg]
        if kind is int and isinstance(value, float) and value.is_integer():
            value = args[arg] = int(value)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise InvalidInput(f"{name}: the argument {arg!r} must be {_JSON_NAMES[kind]}, got {value!r}")
    if name == "search" and "k" in args and "limit" in args:
        raise InvalidInput("search: give 'limit' or the deprecated 'k', not both")
    if name == "search" and not args["query"].strip():
        raise InvalidInput("search: the argument 'query' is empty: give words to look for")
    return args
