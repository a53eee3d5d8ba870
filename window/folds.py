"""Folds the model chooses (issue 14, points 1-4 and 8; seed note 002; DESIGN.md §1 "fold unit").

Pressure compaction folds by age when the window fills. This module is the other half: the model
closes a *unit of work* on purpose with ``fold_unit(from, to)``, picking turn numbers from a
**fold card** the host attaches to the compiled context, and the host builds the result itself,
with **zero model calls**, from facts that cannot be wrong:

* a mechanical index: tool calls counted by name, the paths they touched (from the calls'
  arguments and the results), the number of shell commands, the turns and their tokens;
* every user turn of the range word for word (a secret or protected span is a pointer, as for
  a summarizer: :func:`~memfold.window.protected.summarizer_input`);
* the model's own closing message for the unit (the last assistant message in the range).

Invariants kept here:

* **Legality only.** The host never judges whether a unit is finished; it checks that the turns
  exist, the range is not reversed, no earlier fold lies inside it (folds do not nest), the unit
  in progress (the newest user turn and everything after it) is not part of it, no tool call is
  split from its result, no open strategy frame's start lies inside it, and the result is
  strictly shorter than the turns. Each refusal is an :class:`~memfold.memory.errors.IllegalFold`
  whose message the model can act on, and nothing is written.
* **Archive, then splice, in one transaction** (DESIGN.md §4.2): the originals are already in the
  archive; the result card, its cover list, the ``folds`` row and the catalog splice commit
  together, so a crash leaves the range either unfolded or folded (``tests/test_folds.py`` kills
  a real process between the steps).
* A fold result is a card (``summarizer`` = ``fold_unit``): an item of the catalog like any
  card, expandable back to the verbatim turns with ``expand``, found by ``search``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from ..memory.errors import IllegalFold, InvalidInput, MemfoldError
from ..memory.storage.rows import CatalogItem, FoldRow
from .archive import Turn
from .cards import Card
from .labels import as_reader, can_read
from .parts import ConversationRef, WindowParts
from .settings import WindowSettings

#: the metadata key of a turn the host appended itself (a strategy's rules, a receipt)
HOST_KEY = "memfold"

#: the window settings of a host that does not offer ``fold_unit`` (``tool_definitions()`` without
#: ``folds=True``): no fold card, since the model could not answer it. memfold's own MCP server,
#: HTTP API, LangGraph hook and Agents SDK session compile with it (a caller's own settings win).
NO_FOLD_CARD: dict[str, int] = {"fold_card_tool_calls": 0, "fold_card_tokens": 0}
#: the ``summarizer`` id of the cards this module writes, by fold kind
FOLD_SUMMARIZERS = {"unit": "fold_unit", "strategy": "strategy_yield", "receipt": "subagent_receipt"}
#: tool names counted as shell commands (also any call whose arguments hold ``command``/``cmd``)
SHELL_TOOLS = frozenset({"bash", "sh", "shell", "run_shell", "shell_command", "exec", "run_command", "terminal",
                         "execute_command", "run_terminal_cmd", "execute"})
PATH_KEYS = frozenset({"path", "paths", "file", "files", "filename", "file_path", "filepath", "target", "dir",
                       "directory", "src", "dst", "source", "destination", "cwd"})
_EXT = (r"py|pyi|js|jsx|ts|tsx|md|rst|txt|json|jsonl|toml|yaml|yml|ini|cfg|conf|sh|rs|go|java|kt|c|h|cc|cpp|hpp|"
        r"cs|rb|php|html|css|scss|sql|lock|csv|tsv|xml|proto|env|log|ipynb|mk")
_PATH_RE = re.compile(
    r"(?<![\w/.:-])(?:~|\.{1,2})?/?(?:[\w.@+-]+/)+[\w.@+-]+|(?<![\w/.:-])[\w@+-][\w.@+-]*\.(?:" + _EXT + r")\b"
)
FOLD_CARD_QUESTION = (
    "Is a unit of work behind you finished? If so, call fold_unit(from, to) with its first and last turn "
    "numbers from this list: the host replaces those turns with an index, the user's words and your closing "
    "message (expand reads them back). Ignoring this card is a valid answer."
)


def is_host_turn(turn: Turn) -> bool:
    """True for a turn the host appended itself (a strategy's standing rules, a receipt)."""
    return isinstance(turn.metadata, dict) and HOST_KEY in turn.metadata


def _calls(turn: Turn) -> list[tuple[str, Any]]:
    """``[(tool name, parsed arguments)]`` of an assistant turn's tool calls."""
    out = []
    for call in turn.tool_calls or ():
        fn = call.get("function", {}) if isinstance(call, Mapping) else {}
        raw = fn.get("arguments", "")
        try:
            args = json.loads(raw) if isinstance(raw, str) and raw.strip() else (raw or {})
        except ValueError:
            args = raw
        out.append((str(fn.get("name", "?")), args))
    return out


def call_key(name: str, args: Any) -> str:
    """A canonical key of one tool call (name and arguments) to spot a re-run."""
    try:
        canon = json.dumps(args, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        canon = str(args)
    return f"{name}:{canon}"


def paths_in(text: str) -> list[str]:
    """Path-like words of ``text`` in order, once each (URLs left out)."""
    text = re.sub(r"\w+://\S+", " ", text or "")
    out: list[str] = []
    for m in _PATH_RE.finditer(text):
        p = m.group(0).rstrip(".,:;)'\"")
        if p and p not in out and not p.replace(".", "").isdigit():
            out.append(p)
    return out


def _arg_paths(args: Any) -> list[str]:
    out: list[str] = []

    def walk(value: Any, key: str | None) -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                walk(v, str(k).lower())
        elif isinstance(value, (list, tuple)):
            for v in value:
                walk(v, key)
        elif isinstance(value, str):
            found = [value.strip()] if key in PATH_KEYS and value.strip() and "\n" not in value.strip() else []
            for p in found + paths_in(value):
                if p not in out:
                    out.append(p)

    walk(args, None)
    return out


def turn_paths(turn: Turn, text: str | None = None) -> list[str]:
    """The paths a turn touched: from its tool calls' arguments, or from its text (a tool result)."""
    if turn.tool_calls:
        out: list[str] = []
        for _, args in _calls(turn):
            for p in _arg_paths(args):
                if p not in out:
                    out.append(p)
        return out
    if turn.role == "tool":
        return paths_in(turn.content if text is None else text)
    return []


def is_shell_call(name: str, args: Any) -> bool:
    """True when a tool call runs a shell command (a shell tool, or ``command``/``cmd`` arguments)."""
    return name.lower() in SHELL_TOOLS or (isinstance(args, Mapping) and ("command" in args or "cmd" in args))


def mechanical_index(turns: Sequence[Turn], texts: Mapping[int, str] | None = None) -> dict[str, Any]:
    """What a range did, counted by the host: ``turns``, ``tokens``, ``tool_calls`` (total),
    ``by_tool`` (name -> calls, most used first), ``paths`` (in order of first touch),
    ``shell_commands`` and ``user_turns``. ``texts`` (turn id -> sanitized text) replaces turn
    contents where given (secrets never reach the index)."""
    texts = texts or {}
    by_tool: Counter[str] = Counter()
    paths: list[str] = []
    shell = 0
    for turn in turns:
        for name, args in _calls(turn):
            by_tool[name] += 1
            shell += is_shell_call(name, args)
        for p in turn_paths(turn, texts.get(turn.id)):
            if p not in paths:
                paths.append(p)
    return {
        "turns": len(turns), "tokens": sum(t.tokens for t in turns), "tool_calls": sum(by_tool.values()),
        "by_tool": dict(sorted(by_tool.items(), key=lambda kv: (-kv[1], kv[0]))), "paths": paths,
        "shell_commands": shell, "user_turns": sum(1 for t in turns if t.role == "user" and not is_host_turn(t)),
    }


MAX_INDEX_PATHS = 40


def result_text(turns: Sequence[Turn], index: Mapping[str, Any], texts: Mapping[int, str]) -> str:
    """The host-built result of a closed unit: the index, every user turn verbatim, the closing message."""
    first, last = turns[0].seq, turns[-1].seq
    tools = ", ".join(f"{n} {c}" for n, c in index["by_tool"].items()) or "none"
    paths = list(index["paths"])
    shown = ", ".join(paths[:MAX_INDEX_PATHS]) + (f" (+{len(paths) - MAX_INDEX_PATHS} more)"
                                                   if len(paths) > MAX_INDEX_PATHS else "")
    lines = [f"Closed unit, turns #{first}-#{last} ({index['turns']} turns, {index['tokens']} tokens).",
             f"Index: {index['tool_calls']} tool calls ({tools}); shell commands {index['shell_commands']}; "
             f"paths: {shown or 'none'}."]
    for t in turns:
        if t.role == "user" and not is_host_turn(t):
            lines.append(f"User #{t.seq}: {texts.get(t.id, t.content)}")
    closing = next((t for t in reversed(turns) if t.role == "assistant" and (t.content or "").strip()), None)
    lines.append(f"Closing #{closing.seq}: {texts.get(closing.id, closing.content)}" if closing
                 else "Closing: (no assistant message in the range)")
    return "\n".join(lines)


def sanitized_texts(parts: WindowParts, ref: ConversationRef, turns: Sequence[Turn]) -> dict[int, str]:
    """Turn id -> text as a fold result may hold it (content, plus tool calls written out): secret
    turns, system turns, quoted turns and protected text become pointers, exactly as for a
    summarizer (:func:`~memfold.window.protected.summarizer_input`; no model is called)."""
    from .protected import summarizer_input
    from .summarizers.base import FoldItem

    items = []
    for t in turns:  # the summarizer's view of a turn (as the compactor builds it): content plus tool calls
        calls = "; ".join(f"call {name}({json.dumps(args, ensure_ascii=False) if not isinstance(args, str) else args})"
                          for name, args in _calls(t))
        items.append(FoldItem(kind="turn", id=t.id, text=f"{t.content} {calls}".strip(), role=t.role, name=t.name))
    safe = summarizer_input(parts.storage, list(turns), items, family_id=ref.family_id, namespace=ref.namespace)
    return {t.id: item.text for t, item in zip(turns, safe)}


# -- the fold card (point 1) --------------------------------------------------------------------
@dataclass(frozen=True)
class FoldCard:
    """The numbered menu attached to a compiled context when enough work built up since the last
    fold: ``text`` (shown as one system message right before the newest user turn), its
    ``tokens``, the foldable span ``first_seq``..``last_seq``, ``in_progress_seq`` (the newest
    user turn: where the unit in progress starts) and ``at_turn_id`` (that turn's id)."""

    text: str
    tokens: int
    first_seq: int
    last_seq: int
    in_progress_seq: int
    at_turn_id: int
    tool_calls: int
    work_tokens: int


def fold_card(parts: WindowParts, ref: ConversationRef, settings: WindowSettings, tail: Sequence[CatalogItem],
              reader: Iterable[str] | None = None) -> FoldCard | None:
    """The fold card for the work since the last fold (``tail``: the catalog items after the last
    card), or ``None`` when too little built up (fewer than ``fold_card_tool_calls`` tool calls,
    counted by their results, and fewer than ``fold_card_tokens`` tokens; either at 0 is off) or
    nothing before the unit in progress is foldable."""
    results = sum(1 for i in tail if i.role == "tool")
    tokens = sum(i.tokens for i in tail if i.role != "system")
    if not tail or not settings.fold_card_due(results, tokens):
        return None
    turns = parts.turns([i.item_id for i in tail if i.kind == "turn"])
    ordered = [turns[i.item_id] for i in tail if i.kind == "turn" and i.item_id in turns]
    newest_user = next((t for t in reversed(ordered) if t.role == "user" and not is_host_turn(t)), None)
    if newest_user is None:
        return None
    menu = [t for t in ordered if t.seq < newest_user.seq and t.role != "system"]
    if not menu:
        return None
    rdr = as_reader(reader)
    calls = sum(len(t.tool_calls or ()) for t in menu)
    clip = _user_words_clip(settings, parts.token_counter)
    lines = [f"[fold card] Work since the last fold: turns #{menu[0].seq}-#{menu[-1].seq} ({len(menu)} turns, "
             f"{calls} tool calls, {sum(t.tokens for t in menu)} tokens). The unit in progress starts at "
             f"#{newest_user.seq} (the newest user turn) and cannot be folded."]
    n = 0
    while n < len(menu):  # a tool call and its results share one line: "#2-#3 read_file a.py [12+310 tok]"
        t = menu[n]
        results = []
        while t.tool_calls and n + 1 + len(results) < len(menu) and menu[n + 1 + len(results)].role == "tool":
            results.append(menu[n + 1 + len(results)])
        lines.append(_menu_line(t, rdr, results, clip))
        n += 1 + len(results)
    lines.append(FOLD_CARD_QUESTION)
    text = "\n".join(lines)
    return FoldCard(text, parts.token_counter.count(text), menu[0].seq, menu[-1].seq, newest_user.seq,
                    newest_user.id, calls, sum(t.tokens for t in menu))


def _user_words_clip(settings: WindowSettings, counter):
    """How a fold card shows a user turn: verbatim, but a turn the context shows as a glimpse
    (more than half the usable budget, :func:`.context.glimpse_threshold`) by an excerpt the
    glimpse's size, cut near its target, so a pasted 5 MB log is neither copied into every
    pressure check's fold card nor counted there (that made each append 0.5-0.7 s)."""
    from .summarizers.base import clip_to_tokens

    limit = max(1, settings.usable_tokens // 2)
    excerpt_tokens = max(1, min(settings.card_target_tokens, settings.usable_tokens // 8))

    def clip(t: Turn) -> str:
        if t.tokens <= limit:
            return json.dumps(t.content, ensure_ascii=False)
        return (f"{json.dumps(clip_to_tokens(t.content, excerpt_tokens, counter), ensure_ascii=False)} "
                f"[glimpse of {t.tokens} tokens; expand t{t.id}]")
    return clip


def _menu_line(t: Turn, rdr: Any, results: Sequence[Turn] = (), clip=None) -> str:
    """One line of the fold card: the turn's number, role and size (a tool call with its results:
    every number and size), then what it touched, or a user turn verbatim (``clip``: a huge one
    by an excerpt, :func:`_user_words_clip`)."""
    if results:
        head = f"#{t.seq}-#{results[-1].seq} {'+'.join(str(x.tokens) for x in (t, *results))} tok"
    else:
        head = f"#{t.seq} {t.role} {t.tokens} tok"
    if not can_read(rdr, t.labels) or t.erased:
        return f"{head}: (hidden)"
    if is_host_turn(t):
        what = t.metadata[HOST_KEY].get("event", "host") if isinstance(t.metadata[HOST_KEY], Mapping) else "host"
        return f"{head}: [{what}]"
    if t.role == "user":
        return f"{head}: {clip(t) if clip else json.dumps(t.content, ensure_ascii=False)}"
    if t.tool_calls:
        parts = []
        for name, args in _calls(t):
            paths = _arg_paths(args)[:3]
            parts.append(name + (f" {' '.join(paths)}" if paths else ""))
        seen = {p for _, a in _calls(t) for p in _arg_paths(a)}
        extra = [p for r in results if can_read(rdr, r.labels) for p in turn_paths(r) if p not in seen][:3]
        return f"{head}: {'; '.join(parts)}" + (f" -> {' '.join(extra)}" if extra else "")
    paths = turn_paths(t)[:3]
    return f"{head}" + (f": {' '.join(paths)}" if paths else "")


# -- fold_unit (points 2-4) ------------------------------------------------------------------------
@dataclass
class FoldOutcome:
    """What a fold did: the ``fold_id``, the result ``card`` ref, the range, the tokens the range
    had and its result has, the result ``text`` and the mechanical ``index``."""

    fold_id: int
    kind: str
    card: str | None
    first_seq: int
    last_seq: int
    source_tokens: int
    result_tokens: int
    text: str
    index: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dict(self.__dict__)

    def line(self) -> str:
        """One human line."""
        where = f"[{self.card}]" if self.card else "(kept verbatim)"
        return (f"folded turns #{self.first_seq}-#{self.last_seq} ({self.source_tokens} tokens) into {where} "
                f"of {self.result_tokens} tokens")


def turn_number(value: Any, what: str) -> int:
    """A turn number the model gave (``12``, ``"12"`` or ``"#12"``). :raises IllegalFold: otherwise."""
    if isinstance(value, bool):
        raise IllegalFold(f"{what} must be a turn number from the fold card, such as 12, not {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("#").isascii() and value.strip().lstrip("#").isdigit():
        return int(value.strip().lstrip("#"))
    raise IllegalFold(f"{what} must be a turn number from the fold card, such as 12, not {value!r}")


def unit_in_progress(parts: WindowParts, items: Sequence[CatalogItem]) -> tuple[int, str] | None:
    """Where the unit in progress starts, as ``(seq, why)``: the newest user turn (host turns not
    counted); when that turn is folded already, the item after the card that holds it. ``None``
    when there is no user turn at all."""
    for n in range(len(items) - 1, -1, -1):
        item = items[n]
        if item.kind == "turn" and item.role == "user":
            turn = parts.archive.get(item.item_id)
            if not is_host_turn(turn):
                return turn.seq, f"the newest user turn #{turn.seq} and everything after it"
        elif item.kind == "card":
            if n + 1 < len(items):
                return items[n + 1].first_seq, f"its user turn is folded in [c{item.item_id}]"
            return None
    return None


def check_range(parts: WindowParts, ref: ConversationRef, first: Any, last: Any, *,
                in_progress: bool = True) -> tuple[list[CatalogItem], int]:
    """The catalog items a legal ``fold_unit(first, last)`` replaces, and the newest seq.

    :param in_progress: refuse a range reaching into the unit in progress (the strategy yield
        and the receipt fold their own ranges and pass ``False``).
    :raises IllegalFold: naming the rule broken and a legal choice.
    """
    first = turn_number(first, "from")
    last = turn_number(last, "to")
    items = parts.catalog(ref).items()
    newest = items[-1].last_seq if items else 0
    if newest == 0:
        raise IllegalFold("this conversation has no turns yet: there is nothing to fold")
    for n, what in ((first, "from"), (last, "to")):
        if not 1 <= n <= newest:
            raise IllegalFold(f"turn #{n} ({what}) does not exist: this conversation has turns #1-#{newest}")
    if first > last:
        raise IllegalFold(f"the range #{first}-#{last} is reversed: give the first turn of the unit, then its "
                          f"last (fold_unit({last}, {first}))")
    if in_progress:
        start = unit_in_progress(parts, items)
        if start is not None and last >= start[0]:
            user, why = start
            raise IllegalFold(
                f"turns from #{user} on are the unit in progress ({why}) and cannot be folded"
                + (f": end the range by #{user - 1}" if first < user else ""))
    inside = [i for i in items if i.last_seq >= first and i.first_seq <= last]
    for item in inside:
        if item.kind == "card":
            fold = parts.storage.folds.fold_of_card(item.item_id)
            what = "an earlier fold" if fold is not None else "a summary card"
            raise IllegalFold(
                f"turns #{item.first_seq}-#{item.last_seq} are already folded into [c{item.item_id}] ({what}); folds "
                f"do not nest: choose a range that lies wholly between folds")
    turns = parts.turns([i.item_id for i in inside])
    head = turns[inside[0].item_id]
    if head.role == "tool":
        call = next((i.first_seq for i in reversed(items) if i.first_seq < first and i.role != "tool"), None)
        raise IllegalFold(f"turn #{first} is the result of a tool call made before it"
                          + (f" (#{call})" if call else "") + ": a tool call is never split from its result; "
                          + (f"start the range at #{call}" if call else "start the range at the call"))
    after = [i for i in items if i.first_seq > last]
    if after and after[0].kind == "turn" and after[0].role == "tool":
        end = after[0].first_seq
        for i in after:
            if i.kind == "turn" and i.role == "tool":
                end = i.last_seq
            else:
                break
        raise IllegalFold(f"turn #{last + 1} is the result of a tool call inside the range: a tool call is never "
                          f"split from its result; end the range at #{end} or before the call")
    for frame in parts.storage.folds.frames(ref.id):
        if frame.status != "closed" and first < frame.start_seq <= last:
            raise IllegalFold(
                f"turns from #{frame.start_seq} on belong to the open strategy frame {frame.name!r} (f{frame.id}); "
                f"it folds when it yields: end the range by #{frame.start_seq - 1} or start it at #{frame.start_seq} "
                "or later")
    return inside, newest


def write_fold(parts: WindowParts, ref: ConversationRef, kind: str, replaced: Sequence[CatalogItem],
               children: Sequence[Turn | Card], text: str, index: Mapping[str, Any], made_after_seq: int,
               *, catalog_ref: ConversationRef | None = None) -> tuple[Card, int]:
    """Write the result card, its covers, the ``folds`` row and the catalog splice in ONE
    transaction (archive before splice: the catalog trigger refuses a card whose covers are not
    stored; a crash anywhere leaves the range unfolded or folded). Returns the card and fold id.

    :param catalog_ref: the conversation whose catalog is spliced (default ``ref``; a receipt
        splices the child's).
    :raises CatalogChanged: when the range changed under the splice (nothing is written).
    """
    target = catalog_ref or ref
    storage = parts.storage
    depths = [c.depth for c in children if isinstance(c, Card)]
    depth = max(depths) + 1 if depths else 1
    with storage.transaction():
        card = parts.cards.insert(family_id=target.family_id, conversation_id=target.id, depth=depth, text=text,
                                  tokens=parts.token_counter.count(text), children=list(children),
                                  summarizer=FOLD_SUMMARIZERS[kind])
        fold_id = storage.folds.insert_fold(
            conversation_id=ref.id, kind=kind, card_id=card.id, first_seq=replaced[0].first_seq,
            last_seq=replaced[-1].last_seq, made_after_seq=made_after_seq, index=dict(index),
            created_at=parts.clock.now())
        parts.catalog(target).splice(replaced, card)
        if kind == "unit":
            storage.folds.bump(ref.id, "accepted")  # counted with the fold, in its transaction
    return card, fold_id


def fold_unit(parts: WindowParts, ref: ConversationRef, first: Any, last: Any) -> FoldOutcome:
    """Fold the closed unit of turns ``#first``..``#last`` (numbers from the fold card) into a
    host-built result, with zero model calls (see the module docstring).

    :returns: a :class:`FoldOutcome`.
    :raises IllegalFold: for an illegal range (see :func:`check_range`) or a result that would
        not be shorter than the turns; nothing is written.
    :raises CatalogChanged: when a concurrent fold changed the range (nothing is written).
    """
    try:
        replaced, newest = check_range(parts, ref, first, last)
        turns_by_id = parts.turns([i.item_id for i in replaced])
        turns = [turns_by_id[i.item_id] for i in replaced]
        texts = sanitized_texts(parts, ref, turns)
        index = mechanical_index(turns, texts)
        text = result_text(turns, index, texts)
        tokens = parts.token_counter.count(text)
        source = sum(t.tokens for t in turns)
        if tokens >= source:
            raise IllegalFold(
                f"folding turns #{turns[0].seq}-#{turns[-1].seq} would not make the window smaller: the host-built "
                f"result is {tokens} tokens, the turns are {source}; leave them, or fold a longer unit")
    except InvalidInput:
        count_refusal(parts, ref)  # every refusal counts, from the tool, the library or `memfold fold`
        raise
    card, fold_id = write_fold(parts, ref, "unit", replaced, turns, text, index, newest)
    return FoldOutcome(fold_id, "unit", card.ref, turns[0].seq, turns[-1].seq, source, tokens, text, index)


# -- counters (point 8) ------------------------------------------------------------------------------
COUNTERS = ("proposed", "accepted", "refused", "read_back")


def record_proposal(parts: WindowParts, ref: ConversationRef, card: FoldCard) -> bool:
    """Count a fold card as proposed once per unit in progress (a compile that shows the same
    menu again does not count). :returns: True when counted."""
    storage = parts.storage
    with storage.transaction():
        seen = storage.folds.counters(ref.id).get("proposed_at_seq", 0)
        if card.in_progress_seq <= seen:
            return False
        storage.folds.set_counter(ref.id, "proposed_at_seq", card.in_progress_seq)
        storage.folds.bump(ref.id, "proposed")
    return True


def bump(parts: WindowParts, ref: ConversationRef, name: str, by: int = 1) -> None:
    """Add to one of the conversation's fold counters."""
    with parts.storage.transaction():
        parts.storage.folds.bump(ref.id, name, by)


def count_refusal(parts: WindowParts, ref: ConversationRef, name: str = "refused") -> None:
    """Count a refused fold (or strategy call) in the fold stats. The refusal itself is the news:
    a counter that cannot be written (a read-only memory, a busy file) never hides it."""
    try:
        bump(parts, ref, name)
    except MemfoldError:
        pass


def reads_folded(parts: WindowParts, ref: ConversationRef, spans_or_refs: Iterable[Any]) -> bool:
    """True when one of the items read (``("card", id)``, ``("turn", seq)`` or ``(first, last)``
    seq spans) lies inside a folded range or is a fold result."""
    folds = parts.storage.folds.folds(ref.id)
    if not folds:
        return False
    cards = {f.card_id for f in folds}
    spans = [(f.first_seq, f.last_seq) for f in folds if f.kind != "receipt"]
    for kind, a, *rest in spans_or_refs:
        if kind == "card" and a in cards:
            return True
        lo, hi = (a, rest[0]) if rest else (a, a)
        if kind in ("turn", "span") and any(f <= lo and hi <= l for f, l in spans):
            return True
    return False


def fold_stats(parts: WindowParts, ref: ConversationRef) -> dict[str, Any]:
    """The conversation's fold counters: ``proposed``, ``accepted``, ``refused``, ``read_back``
    (expand/describe/search calls that read inside a folded range), ``reruns`` (tool calls, same
    name and arguments, made again after the fold that held them), plus ``folds`` by kind,
    ``strategies`` entered and ``reports``."""
    storage = parts.storage
    counters = storage.folds.counters(ref.id)
    folds = storage.folds.folds(ref.id)
    frames = storage.folds.frames(ref.id)
    return {
        **{name: counters.get(name, 0) for name in COUNTERS},
        "reruns": count_reruns(parts, ref, folds),
        "folds": {kind: sum(1 for f in folds if f.kind == kind) for kind in ("unit", "strategy", "receipt")},
        "strategies": len(frames), "open_frames": sum(1 for f in frames if f.status != "closed"),
        "reports": sum(f.reports for f in frames),
    }


def count_reruns(parts: WindowParts, ref: ConversationRef, folds: Sequence[FoldRow] | None = None) -> int:
    """How many tool calls made after a fold repeat (same name and arguments) a call inside it."""
    folds = [f for f in (parts.storage.folds.folds(ref.id) if folds is None else folds) if f.kind != "receipt"]
    if not folds:
        return 0
    history = parts.archive.history(ref.id, lineage=ref.lineage)
    by_seq = {t.seq: t for t in history}
    reruns = 0
    start = min(f.made_after_seq for f in folds)
    for turn in history:
        if turn.seq <= start or not turn.tool_calls:
            continue
        earlier = set()
        for f in folds:
            if f.made_after_seq < turn.seq:
                for s in range(f.first_seq, f.last_seq + 1):
                    t = by_seq.get(s)
                    if t is not None and t.tool_calls:
                        earlier.update(call_key(n, a) for n, a in _calls(t))
        reruns += sum(1 for n, a in _calls(turn) if call_key(n, a) in earlier)
    return reruns


# -- the agent tool (point 2) ---------------------------------------------------------------------------
FOLD_TOOL_DEFINITIONS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "fold_unit",
        "description": "Fold a finished unit of work, turns #from-#to from the fold card, into a short host-built "
                       "result: an index of the tool calls and paths, every user message verbatim and your closing "
                       "message. The verbatim turns stay readable with expand. The unit in progress cannot be folded.",
        "parameters": {"type": "object", "properties": {
            "from": {"type": "integer", "minimum": 1, "description": "The first turn number of the unit (from the fold card)."},
            "to": {"type": "integer", "minimum": 1, "description": "The last turn number of the unit (from the fold card)."},
        }, "required": ["from", "to"], "additionalProperties": False}}},
]


def handle_fold_call(parts: WindowParts, ref: ConversationRef, args: Mapping[str, Any]) -> str:
    """Run one ``fold_unit`` tool call; returns the tool-result text (``error: ...`` when refused,
    counted as refused; counted as accepted when it folds)."""
    unknown = set(args) - {"from", "to"}
    try:
        if unknown:
            raise IllegalFold(f"fold_unit takes 'from' and 'to' only, not {', '.join(sorted(unknown))}")
        if "from" not in args or "to" not in args:
            raise IllegalFold("fold_unit needs 'from' and 'to': the first and last turn numbers of the unit")
    except InvalidInput as exc:
        count_refusal(parts, ref)
        return f"error: {exc}"
    try:
        outcome = fold_unit(parts, ref, args["from"], args["to"])  # counts its own refusals
    except InvalidInput as exc:
        return f"error: {exc}"
    except MemfoldError as exc:  # a concurrent fold changed the range, a busy database: the model may retry
        return f"error: {exc}"
    return f"{outcome.line()}; expand {outcome.card} to read the turns back"


__all__ = ["NO_FOLD_CARD", "FoldCard", "FoldOutcome", "check_range", "fold_card", "fold_stats", "fold_unit", "mechanical_index"]
