"""Strategy frames: modes entered on purpose, like calls on a stack (issue 14, point 5; seed note 002;
DESIGN.md §1 "strategy frame").

``strategy_request(name, brief)`` (or the user typing ``/strategy NAME brief``) opens a frame;
``strategy_report(text)`` fills its report slot (each call replaces the last); ``strategy_yield
(reason)`` (or the user typing ``/back``) closes it: the whole branch, from the frame's first
turn to the yield, folds into one catalog item whose text is exactly the latest report, and that
item expands back to the branch. No model is called on the way in or out.

Invariants kept here:

* **The prefix stays byte-identical.** Entering appends exactly one message at the tail (the
  strategy's standing rules with the brief): the tool result of ``strategy_request``, or a host
  turn for ``/strategy`` and library calls. The system prompt, the system note and the tool list
  never change (the tool list offers every strategy at all times), so every message the model saw
  before is the same byte for byte (``tests/test_strategies.py`` compares them).
* **Frames nest like calls.** A frame opened inside another is its child; ``strategy_report`` and
  ``strategy_yield`` act on the innermost open frame; the outer branch folds with the inner
  report card inside it (one level deeper).
* **A yield never splits a tool call from its result.** A ``strategy_yield`` tool call marks the
  frame *closing*; the branch folds as soon as the call's result is archived (the next append, or
  the next compile), so the result folds with the call.
* **Read-only frames** (``intent``) refuse a writing tool call while open:
  :func:`tool_call_refusal` names the frame and the rule.

Strategies are data: ``NAME.toml`` files (``name``, ``summary``, ``rules``, ``read_only``, and for
read-only ones ``write_tools`` name patterns and ``write_commands`` shell prefixes). The built-in
ones live in ``strategy_data/``; folders in ``MEMFOLD_STRATEGY_PATH`` (``os.pathsep``-separated)
add or replace strategies.
"""

from __future__ import annotations

import fnmatch
import json
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..memory.errors import IllegalFold, InvalidInput, MemfoldError
from ..memory.storage.rows import FrameRow
from .folds import HOST_KEY, _calls, bump, is_shell_call, mechanical_index, write_fold
from .parts import ConversationRef, WindowParts

BUILTIN_DIR = Path(__file__).with_name("strategy_data")
PATH_VARIABLE = "MEMFOLD_STRATEGY_PATH"


@dataclass(frozen=True)
class Strategy:
    """One strategy: ``name``, a one-line ``summary``, the standing ``rules`` appended on entry,
    ``read_only`` with the ``write_tools`` name patterns and ``write_commands`` shell prefixes it
    refuses, and the file it came from."""

    name: str
    summary: str
    rules: str
    read_only: bool = False
    write_tools: tuple[str, ...] = ()
    write_commands: tuple[str, ...] = ()
    source: str = ""

    @classmethod
    def from_file(cls, path: Path) -> "Strategy":
        """Read ``NAME.toml``. :raises InvalidInput: naming the file and the field wrong."""
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise InvalidInput(f"strategy file {path}: {exc}") from None
        name = data.get("name", path.stem)
        for key, kind in (("name", str), ("summary", str), ("rules", str)):
            value = data.get(key, name if key == "name" else None)
            if not isinstance(value, kind) or not value.strip():
                raise InvalidInput(f"strategy file {path}: {key!r} must be non-empty text")
        if not isinstance(data.get("read_only", False), bool):
            raise InvalidInput(f"strategy file {path}: 'read_only' must be true or false")
        lists = {}
        for key in ("write_tools", "write_commands"):
            value = data.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                raise InvalidInput(f"strategy file {path}: {key!r} must be a list of text")
            lists[key] = tuple(value)
        return cls(name.strip(), data["summary"].strip(), data["rules"].strip(), data.get("read_only", False),
                   lists["write_tools"], lists["write_commands"], str(path))

    def writes(self, tool: str, args: Any) -> str | None:
        """What makes this tool call a write (a pattern or a shell prefix), or ``None``."""
        for pattern in self.write_tools:
            if fnmatch.fnmatch(tool.lower(), pattern.lower()):
                return f"tool {tool!r} matches {pattern!r}"
        if is_shell_call(tool, args):
            command = args.get("command", args.get("cmd", "")) if isinstance(args, Mapping) else str(args)
            command = " ".join(command) if isinstance(command, list) else str(command)
            for part in _shell_parts(command):
                for prefix in self.write_commands:
                    if part == prefix or part.startswith(prefix + " ") or (prefix == ">" and ">" in part):
                        return f"shell command {part!r} starts with {prefix!r}"
        return None


def _shell_parts(command: str) -> list[str]:
    out = []
    for chunk in command.replace("&&", ";").replace("||", ";").replace("|", ";").split(";"):
        chunk = " ".join(chunk.split())
        if chunk:
            out.append(chunk)
    return out


class StrategyBook:
    """The strategies a conversation may enter: the built-ins plus every ``*.toml`` in ``dirs``
    (later folders replace earlier names).

    A broken file (not TOML, a field missing or of the wrong type) disables only itself: the good
    files load, the broken one is kept in :attr:`broken` by its name (the file's stem) with the
    reason, a :class:`UserWarning` names the file, and :meth:`get` refuses that name with the same
    reason. A broken file replaces an earlier strategy of its name (a fix it meant to make must not
    silently fall back to the built-in); a later good file replaces a broken one.

    :param dirs: extra folders; ``None`` reads ``MEMFOLD_STRATEGY_PATH``.
    :param warn: warn about each broken file (once per book).
    :raises InvalidInput: for a folder that does not exist.
    """

    def __init__(self, dirs: Iterable[str | os.PathLike] | None = None, *, warn: bool = True) -> None:
        if dirs is None:
            dirs = [d for d in os.environ.get(PATH_VARIABLE, "").split(os.pathsep) if d]
        self.strategies: dict[str, Strategy] = {}
        #: broken strategy files by name (the file's stem): the message naming the file and the fault
        self.broken: dict[str, str] = {}
        for folder in [BUILTIN_DIR, *map(Path, dirs)]:
            if not folder.is_dir():
                raise InvalidInput(f"strategy folder {folder} does not exist (from {PATH_VARIABLE} or strategy_dirs)")
            for path in sorted(folder.glob("*.toml")):
                try:
                    strategy = Strategy.from_file(path)
                except InvalidInput as exc:
                    self.strategies.pop(path.stem, None)
                    self.broken[path.stem] = str(exc)
                    continue
                self.broken.pop(strategy.name, None)
                self.strategies[strategy.name] = strategy
        if warn:
            import warnings

            for message in self.broken.values():
                warnings.warn(f"{message}; the other strategies load, this one is refused until the file is fixed",
                              UserWarning, stacklevel=3)

    def names(self) -> list[str]:
        """The strategy names, sorted (broken files left out: see :attr:`broken`)."""
        return sorted(self.strategies)

    def get(self, name: Any) -> Strategy:
        """:raises IllegalFold: for an unknown name, listing the known ones, or the name of a broken
        file, naming the file and its fault."""
        key = name.strip() if isinstance(name, str) else name
        if isinstance(key, str) and key in self.broken:
            raise IllegalFold(f"strategy {key!r} cannot be used: {self.broken[key]}; fix the file (the strategies "
                              f"that work are {', '.join(self.names())})")
        if not isinstance(key, str) or key not in self.strategies:
            raise IllegalFold(f"unknown strategy {name!r}: the strategies are {', '.join(self.names())}")
        return self.strategies[key]


_BOOKS: dict[str, StrategyBook] = {}


def default_book() -> StrategyBook:
    """The built-ins plus the folders in ``MEMFOLD_STRATEGY_PATH`` (read once per distinct value)."""
    key = os.environ.get(PATH_VARIABLE, "")
    if key not in _BOOKS:
        _BOOKS[key] = StrategyBook()
    return _BOOKS[key]


def book_of(parts: WindowParts) -> StrategyBook:
    """The parts' strategy book (``parts.strategies``), else :func:`default_book`."""
    return getattr(parts, "strategies", None) or default_book()


# -- frames -----------------------------------------------------------------------------------------
@dataclass
class FrameOutcome:
    """What a strategy call did: the ``frame`` (id), its ``name``, ``status`` after the call, the
    ``message`` text (the standing rules on entry; the tool result otherwise), ``appended`` (the
    id of the host turn appended, if any), and on a fold its ``fold`` id and ``card`` ref."""

    frame: int
    name: str
    status: str
    message: str
    appended: int | None = None
    fold: int | None = None
    card: str | None = None
    depth: int = 1
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dict(self.__dict__)


def open_frames(parts: WindowParts, ref: ConversationRef) -> list[FrameRow]:
    """The frames not closed yet (open or closing), outermost first."""
    return [f for f in parts.storage.folds.frames(ref.id) if f.status != "closed"]


def innermost_open(parts: WindowParts, ref: ConversationRef) -> FrameRow | None:
    """The innermost frame still ``open`` (a closing one cannot take reports or yields)."""
    frames = [f for f in open_frames(parts, ref) if f.status == "open"]
    return frames[-1] if frames else None


def opening_message(strategy: Strategy, frame_id: int, brief: str, depth: int) -> str:
    """The one message appended on entry: the standing rules and the brief."""
    nest = f", nested {depth} deep" if depth > 1 else ""
    return (f"[strategy {strategy.name}, frame f{frame_id}{nest}] {strategy.summary}\n{strategy.rules}\n"
            f"Brief: {brief}")


def enter(parts: WindowParts, ref: ConversationRef, name: Any, brief: Any = "", *, opened_by: str = "host",
          start_seq: int | None = None) -> FrameOutcome:
    """Open a frame of strategy ``name`` with ``brief``.

    :param opened_by: ``"model"`` (the ``strategy_request`` tool: the branch starts at the
        assistant turn holding the call, and the caller appends the returned ``message`` as the
        call's result, the one message at the tail), ``"user"`` (``/strategy`` typed: the branch
        starts at that user turn) or ``"host"`` (a library or CLI call); for the last two the host
        appends the opening message itself, as a ``user`` turn named ``memfold``.
    :param start_seq: the seq the branch starts at (default: see ``opened_by``).
    :raises IllegalFold: for an unknown strategy, or a brief that is not text or is empty (a frame
        without its task has nothing to do and no report to owe); nothing is written.
    """
    strategy = book_of(parts).get(name)
    if not isinstance(brief, str):
        raise IllegalFold(f"the brief must be text, not {type(brief).__name__}")
    brief = brief.strip()
    if not brief:
        raise IllegalFold(f"strategy {strategy.name!r} needs a brief: the task this frame is for, in a sentence or "
                          f"two (strategy_request(name, brief), /strategy {strategy.name} BRIEF, or memfold strategy "
                          f"DB -c ID enter {strategy.name} BRIEF...); no frame was opened")
    storage = parts.storage
    last = parts.archive.last_seq(ref.id, lineage=ref.lineage)
    if start_seq is None:
        tail = parts.archive.history(ref.id, after_seq=max(0, last - 1), lineage=ref.lineage) if last else []
        calls_it = bool(tail) and tail[-1].role == "assistant" and any(
            n == "strategy_request" for n, _ in _calls(tail[-1]))
        start_seq = last if (opened_by == "model" and calls_it) else last + 1
    parent = innermost_open(parts, ref)
    depth = len(open_frames(parts, ref)) + 1
    with storage.transaction():
        frame_id = storage.folds.open_frame(conversation_id=ref.id, parent_frame=parent.id if parent else None,
                                            name=strategy.name, brief=brief, start_seq=start_seq,
                                            opened_by=opened_by, opened_at=parts.clock.now())
        message = opening_message(strategy, frame_id, brief, depth)
        appended = None
        if opened_by != "model":
            appended = parts.archive.append_many(ref.id, [{
                "role": "user", "name": "memfold", "content": message,
                "metadata": {HOST_KEY: {"event": "strategy_enter", "strategy": strategy.name, "frame": frame_id}},
            }])[0]
        storage.folds.bump(ref.id, "strategies_entered")
    return FrameOutcome(frame_id, strategy.name, "open", message, appended, depth=depth)


def report(parts: WindowParts, ref: ConversationRef, text: Any) -> FrameOutcome:
    """Replace the innermost open frame's report slot with ``text``.

    :raises IllegalFold: when no frame is open or the text is empty; nothing is written.
    """
    frame = innermost_open(parts, ref)
    if frame is None:
        raise IllegalFold("no strategy frame is open: enter one with strategy_request(name, brief) first")
    if not isinstance(text, str) or not text.strip():
        raise IllegalFold("the report must be non-empty text: the value this frame returns when it yields")
    with parts.storage.transaction():
        parts.storage.folds.set_report(frame.id, text)
    return FrameOutcome(frame.id, frame.name, "open",
                        f"report of frame f{frame.id} ({frame.name}) saved; it replaces the previous one "
                        f"({frame.reports + 1} {'report' if frame.reports == 0 else 'reports'} so far)")


def yield_frame(parts: WindowParts, ref: ConversationRef, reason: Any = "", *, by: str = "host") -> FrameOutcome:
    """Close the innermost open frame: mark it closing, then fold its branch to exactly its last
    report as soon as no tool call in it waits for its result (at once, unless the branch ends
    with the ``strategy_yield`` call itself, whose result comes next).

    :param by: ``"model"`` (the tool), ``"user"`` (``/back``) or ``"host"``.
    :raises IllegalFold: when no frame is open, or the model yields with no report written (the
        model must write the value it returns; the user's ``/back`` closes it regardless).
    """
    frame = innermost_open(parts, ref)
    if frame is None:
        raise IllegalFold("no strategy frame is open: there is nothing to yield from")
    if reason is None:
        reason = ""
    if not isinstance(reason, str):
        raise IllegalFold(f"the reason must be text, not {type(reason).__name__}")
    if by == "model" and frame.report is None:
        raise IllegalFold(f"frame f{frame.id} ({frame.name}) has no report yet: call strategy_report(text) with "
                          "the value this frame returns, then strategy_yield(reason)")
    with parts.storage.transaction():
        parts.storage.folds.close_frame(frame.id, status="closing", reason=reason.strip(), fold_id=None,
                                        closed_at=None)
    done = settle(parts, ref)
    mine = next((d for d in done if d.frame == frame.id), None)
    if mine is not None:
        return mine
    return FrameOutcome(frame.id, frame.name, "closing",
                        f"frame f{frame.id} ({frame.name}) yields: the branch folds to the last report once this "
                        "call's result is appended")


def _waiting_call(parts: WindowParts, items: Sequence[Any]) -> bool:
    """True when the newest assistant turn with tool calls still waits for some of their results
    (the catalog ends with the call, or with fewer results than calls)."""
    n = len(items)
    while n > 0 and items[n - 1].kind == "turn" and items[n - 1].role == "tool":
        n -= 1
    if n == 0 or items[n - 1].kind != "turn" or items[n - 1].role != "assistant" or not items[n - 1].has_tool_calls:
        return False
    call = parts.archive.get(items[n - 1].item_id)
    return len(items) - n < len(call.tool_calls or ())


def settle(parts: WindowParts, ref: ConversationRef) -> list[FrameOutcome]:
    """Fold every closing frame whose branch is complete (innermost first). Called after each
    append, before each compile, and by :func:`yield_frame`. :returns: what folded."""
    done: list[FrameOutcome] = []
    while True:
        frames = open_frames(parts, ref)
        if not frames or frames[-1].status != "closing":
            return done
        frame = frames[-1]
        items = parts.catalog(ref).items()
        if _waiting_call(parts, items):
            return done
        done.append(_fold_branch(parts, ref, frame, items))


def _fold_branch(parts: WindowParts, ref: ConversationRef, frame: FrameRow, items: Sequence[Any]) -> FrameOutcome:
    from .cards import Card

    branch = [i for i in items if i.first_seq >= frame.start_seq]
    text = frame.report if frame.report is not None else (
        f"(strategy {frame.name} closed without a report" + (f": {frame.reason})" if frame.reason else ")"))
    storage = parts.storage
    newest = items[-1].last_seq if items else 0
    if not branch:
        with storage.transaction():
            storage.folds.close_frame(frame.id, status="closed", reason=frame.reason, fold_id=None,
                                      closed_at=parts.clock.now())
        return FrameOutcome(frame.id, frame.name, "closed", "the frame had no turns to fold")
    turn_ids = [i.item_id for i in branch if i.kind == "turn"]
    turns = parts.turns(turn_ids)
    cards = parts.cards.get_many([i.item_id for i in branch if i.kind == "card"])
    children = [turns[i.item_id] if i.kind == "turn" else parts.cards.get(i.item_id) for i in branch]
    source = sum(c.tokens for c in children)
    tokens = parts.token_counter.count(text)
    ordered_turns = [c for c in children if not isinstance(c, Card)]
    index = {**mechanical_index(ordered_turns), "strategy": frame.name, "frame": frame.id, "reason": frame.reason,
             "reports": frame.reports, "cards_inside": sorted(cards)}
    with storage.transaction():
        if tokens >= source:  # the report is longer than the branch: keep the branch, close the frame
            fold_id = storage.folds.insert_fold(
                conversation_id=ref.id, kind="strategy", card_id=None, first_seq=branch[0].first_seq,
                last_seq=branch[-1].last_seq, made_after_seq=newest, index=index, created_at=parts.clock.now())
            card_ref = None
            message = (f"frame f{frame.id} ({frame.name}) closed; its branch ({source} tokens) is shorter than its "
                       f"report ({tokens} tokens), so it stays verbatim")
        else:
            card, fold_id = write_fold(parts, ref, "strategy", branch, children, text, index, newest)
            card_ref = card.ref
            message = (f"frame f{frame.id} ({frame.name}) closed: turns #{branch[0].first_seq}-#{branch[-1].last_seq} "
                       f"({source} tokens) folded to the last report [{card.ref}] ({tokens} tokens); expand "
                       f"{card.ref} reads the branch back")
        storage.folds.close_frame(frame.id, status="closed", reason=frame.reason, fold_id=fold_id,
                                  closed_at=parts.clock.now())
    return FrameOutcome(frame.id, frame.name, "closed", message, fold=fold_id, card=card_ref)


def tool_call_refusal(parts: WindowParts, ref: ConversationRef, name: str, arguments: Any) -> str | None:
    """Why a tool call must be refused now (an open read-only frame and a writing call), or None.

    The agent loop asks before running one of its own tools; the text is the tool result to send
    back. memfold's own tools (recall, folds, strategies) never write the user's world and pass.
    """
    if name in TOOL_NAMES or name in ("search", "describe", "expand", "fold_unit"):
        return None
    args: Any = arguments
    if isinstance(arguments, str):
        try:
            args = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            args = arguments
    book = book_of(parts)
    for frame in reversed(open_frames(parts, ref)):
        strategy = book.strategies.get(frame.name)
        if strategy is None or not strategy.read_only:
            continue
        why = strategy.writes(name, args)
        if why is not None:
            return (f"error: refused: frame f{frame.id} ({frame.name}) is read-only while open and this call writes "
                    f"({why}); read, search or ask instead, or strategy_yield(reason) first")
    return None


# -- the agent tools ----------------------------------------------------------------------------------
TOOL_NAMES = ("strategy_request", "strategy_report", "strategy_yield")


def tool_definitions(book: StrategyBook) -> list[dict[str, Any]]:
    """``strategy_request``, ``strategy_report`` and ``strategy_yield`` as function tools (the
    same list whether a frame is open or not, so the tool list never changes)."""
    menu = "; ".join(f"{s.name}: {s.summary}" for s in (book.strategies[n] for n in book.names()))
    return [
        {"type": "function", "function": {
            "name": "strategy_request",
            "description": f"Enter a strategy frame on purpose (frames nest like calls). Strategies: {menu}",
            "parameters": {"type": "object", "properties": {
                "name": {"type": "string", "enum": book.names(), "description": "The strategy to enter."},
                "brief": {"type": "string", "description": "The task for this frame, in one or two sentences."},
            }, "required": ["name", "brief"], "additionalProperties": False}}},
        {"type": "function", "function": {
            "name": "strategy_report",
            "description": "Write the open frame's report: the value it returns. Each call replaces the previous report.",
            "parameters": {"type": "object", "properties": {
                "text": {"type": "string", "description": "The whole current report (not a diff)."},
            }, "required": ["text"], "additionalProperties": False}}},
        {"type": "function", "function": {
            "name": "strategy_yield",
            "description": "Leave the open frame: its whole branch folds away and only the last report stays "
                           "(expandable to the branch).",
            "parameters": {"type": "object", "properties": {
                "reason": {"type": "string", "description": "Why the frame ends (done, blocked, ...)."},
            }, "required": [], "additionalProperties": False}}},
    ]


def handle_strategy_call(parts: WindowParts, ref: ConversationRef, name: str, args: Mapping[str, Any]) -> str:
    """Run one strategy tool call; returns the tool-result text (``error: ...`` when refused)."""
    allowed = {"strategy_request": {"name", "brief"}, "strategy_report": {"text"}, "strategy_yield": {"reason"}}[name]
    unknown = set(args) - allowed
    try:
        if unknown:
            raise IllegalFold(f"{name} takes {', '.join(sorted(allowed))} only, not {', '.join(sorted(unknown))}")
        if name == "strategy_request":
            if "name" not in args:
                raise IllegalFold(f"strategy_request needs a 'name': one of {', '.join(book_of(parts).names())}")
            return enter(parts, ref, args["name"], args.get("brief", ""), opened_by="model").message
        if name == "strategy_report":
            return report(parts, ref, args.get("text")).message
        return yield_frame(parts, ref, args.get("reason", ""), by="model").message
    except InvalidInput as exc:
        bump(parts, ref, "strategy_refused")
        return f"error: {exc}"
    except MemfoldError as exc:  # a busy database, a concurrent fold: the model may retry
        return f"error: {exc}"


# -- what the user types -----------------------------------------------------------------------------------
def user_command(content: str) -> tuple[str, str, str] | None:
    """``("enter", name, brief)`` for ``/strategy NAME brief``, ``("yield", "", reason)`` for
    ``/back [reason]``; ``None`` for any other text."""
    text = (content or "").strip()
    if text.startswith("/strategy"):
        rest = text[len("/strategy"):]
        if rest and not rest[0].isspace():
            return None
        words = rest.split(None, 1)
        return ("enter", words[0] if words else "", words[1] if len(words) > 1 else "")
    if text == "/back" or text.startswith("/back "):
        return ("yield", "", text[len("/back"):].strip())
    return None


def observe_user_turn(parts: WindowParts, ref: ConversationRef, turn: Any) -> FrameOutcome | None:
    """Act on ``/strategy`` or ``/back`` typed in an archived user turn. The turn is committed
    already, so a command that cannot run gets a host reply at the tail naming why (it never raises)."""
    command = user_command(turn.content) if turn.role == "user" else None
    if command is None:
        return None
    kind, name, rest = command
    try:
        if kind == "enter":
            return enter(parts, ref, name, rest, opened_by="user", start_seq=turn.seq)
        return yield_frame(parts, ref, rest, by="user")
    except IllegalFold as exc:
        parts.archive.append_many(ref.id, [{"role": "user", "name": "memfold", "content": f"[memfold] {exc}",
                                            "metadata": {HOST_KEY: {"event": "command_refused"}}}])
        return None


__all__ = ["FrameOutcome", "Strategy", "StrategyBook", "enter", "report", "settle", "yield_frame"]
