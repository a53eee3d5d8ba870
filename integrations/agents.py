"""An OpenAI Agents SDK session over a memfold conversation (issue 16, point 4).
Install with ``pip install 'memfold[agents]'``.

:class:`MemfoldSession` implements the SDK's ``Session`` protocol (``get_items``, ``add_items``,
``pop_item``, ``clear_session``) and its compaction-aware extension (``run_compaction``), so
``Runner.run(agent, input, session=MemfoldSession("ticket-42", mf))`` keeps the run's history in
memfold and feeds the model memfold's compiled window.

**Items and turns.** Each Responses-API item the SDK adds is one archived turn in the OpenAI chat
shape, so the window, search, consolidation and the CLI read it like any turn: a message is a
``user``/``assistant``/``system`` turn (``developer`` becomes ``system``), a ``function_call`` an
assistant turn with one ``tool_calls`` entry, a ``function_call_output`` a ``tool`` turn, a
``reasoning`` item an assistant turn holding its summary; other item types become a turn naming
the type. Whenever the chat shape alone would not give the item back byte for byte (item ids,
status, content parts, annotations, item types without a chat equivalent), the item itself is
kept in the turn's ``metadata["responses_item"]``, so every item round-trips losslessly
(:func:`items_to_turns`, :func:`turns_to_items`; a test checks both directions; the archive's
sha256 covers the chat fields, the kept item rides beside them and is blanked with the turn by
an erasure). Turns appended
to the conversation by other means (``conv.append``, ``memfold ingest``) become items too.

**What the model sees.** ``view="context"`` (the default): ``get_items`` returns the compiled
context of :meth:`memfold.window.conversation.Conversation.context` as items: the system note,
the protected channel and the namespace's memories as ``system`` messages, then the catalog:
summary cards as ``system`` messages (``[c12] ...``) and every turn shown whole as its original
item (a glimpsed turn as a message holding the excerpt). Before anything is folded that is exactly
the items added. ``view="history"``: every item of the session, verbatim, never folded.
``limit=N`` returns the last ``N`` items of the view.

**Compaction.** Appending compacts at the hard watermark, as every memfold append does. The SDK
calls ``run_compaction`` after a turn's items are saved; memfold then folds down to the soft
watermark when it is due (``force`` folds everything outside the hot tail) and records the
prompt tokens the model really used (the last request of the run's usage) as watermark pressure. Tool calls and their
results are never split by a fold.

**pop and clear without deleting.** The archive is append-only, so a session is a chain of
conversations of one family: ``session_id``, then ``session_id~2``, ``session_id~3``, ...; the
newest is the *head*, where items go. ``pop_item`` forks a new head just before the newest item
(``Conversation.fork(at=seq - 1)``): the popped item leaves the session's items, its compiled
context, its search and its future cards, and stays archived, verbatim, in the conversation it
was added to. ``clear_session`` starts a new head with ``Conversation.clear()``: an empty
context in the same family and namespace; the old turns stay archived and searchable, and the
namespace's memories still reach the new session. One process at a time should pop or clear a
given session.

:meth:`MemfoldSession.recall_tools` gives the agent memfold's recall tools (search, describe,
expand) as SDK function tools over the session, so the model can open a card the window shows.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
from typing import Any, Iterable, Mapping

try:
    from agents.memory import SessionSettings
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("memfold.integrations.agents needs the OpenAI Agents SDK: pip install 'memfold[agents]'") from exc

from .. import MemFold
from ..memory.errors import ConversationNotFound, InvalidInput
from ..window.labels import as_reader
from ._serial import facade_lock

#: where a turn keeps the Responses item it was made from, when the chat shape cannot rebuild it
ITEM_KEY = "responses_item"
#: the content of a turn whose item carries no text (the item itself is kept in metadata)
EMPTY = "[empty]"
#: the two things ``get_items`` can return
VIEWS = ("context", "history")


# -- items <-> turns -------------------------------------------------------------------------------
def _plain(item: Any, where: str) -> dict[str, Any]:
    """A Responses item as plain JSON data (a pydantic item is dumped as the SDK dumps it)."""
    if hasattr(item, "model_dump") and not isinstance(item, Mapping):
        item = item.model_dump(exclude_unset=True, mode="json")
    if not isinstance(item, Mapping):
        raise InvalidInput(f"{where}: a Responses item must be a dict, got {type(item).__name__}")
    try:
        return json.loads(json.dumps(item, ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{where}: the item is not JSON-serialisable: {exc}") from None


def _parts_text(content: Any) -> str:
    """The text of a message content: a string, or content parts (text parts joined by a newline,
    other parts named, e.g. ``[input_image]``)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, Mapping):
                text = part.get("text", part.get("refusal"))
                out.append(text if isinstance(text, str) else f"[{part.get('type', 'part')}]")
            elif isinstance(part, str):
                out.append(part)
        return "\n".join(out)
    return json.dumps(content, ensure_ascii=False)


def _str_field(item: Mapping[str, Any], field: str, where: str) -> str:
    value = item.get(field)
    if not isinstance(value, str) or not value:
        raise InvalidInput(f"{where}: a {item.get('type')} item needs a non-empty string {field!r}")
    return value


def _chat_turn(item: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The chat-shaped turn of one item (without the item itself)."""
    kind = item.get("type")
    if kind in (None, "message"):
        role = item.get("role")
        if role not in ("user", "assistant", "system", "developer"):
            raise InvalidInput(f"{where}: a message item needs role user, assistant, system or developer, got {role!r}")
        return {"role": "system" if role == "developer" else role, "content": _parts_text(item.get("content")) or EMPTY}
    if kind == "function_call":
        call = {"id": _str_field(item, "call_id", where), "type": "function",
                "function": {"name": _str_field(item, "name", where), "arguments": item.get("arguments", "")}}
        return {"role": "assistant", "content": "", "tool_calls": [call]}
    if kind == "function_call_output":
        return {"role": "tool", "tool_call_id": _str_field(item, "call_id", where),
                "content": _parts_text(item.get("output")) or EMPTY}
    if kind == "reasoning":
        summary = _parts_text(item.get("summary"))
        return {"role": "assistant", "content": f"[reasoning] {summary}" if summary else "[reasoning]"}
    if not isinstance(kind, str) or not kind:
        raise InvalidInput(f"{where}: an item needs a string 'type' (or a message 'role'), got {kind!r}")
    call_id = item.get("call_id")
    if isinstance(call_id, str) and call_id and kind.endswith("_output"):
        return {"role": "tool", "tool_call_id": call_id, "content": _parts_text(item.get("output")) or f"[{kind}]"}
    if isinstance(call_id, str) and call_id:
        name = item.get("name") if isinstance(item.get("name"), str) and item.get("name") else kind
        arguments = {k: v for k, v in item.items() if k not in ("type", "id", "call_id", "name", "status")}
        call = {"id": call_id, "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False, sort_keys=True)}}
        return {"role": "assistant", "content": "", "tool_calls": [call]}
    return {"role": "assistant", "content": f"[{kind}]"}


def _chat_items(chat: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The Responses items a chat-shaped turn stands for (one, except an assistant turn with text
    and tool calls, or several calls, which is one item per part)."""
    role, content = chat["role"], chat.get("content") or ""
    if role == "tool":
        return [{"type": "function_call_output", "call_id": chat["tool_call_id"], "output": content}]
    if role == "assistant" and chat.get("tool_calls"):
        items: list[dict[str, Any]] = [{"role": "assistant", "content": content}] if content else []
        for call in chat["tool_calls"]:
            fn = call.get("function") or {}
            items.append({"type": "function_call", "call_id": call["id"], "name": fn.get("name", ""),
                          "arguments": fn.get("arguments", "")})
        return items
    return [{"role": role, "content": content}]


def items_to_turns(items: Iterable[Any]) -> list[dict[str, Any]]:
    """Chat-shaped turns for ``conv.append_many``, one per item; an item the chat shape cannot
    rebuild exactly rides along in ``metadata["responses_item"]``. Validates everything first.

    :raises InvalidInput: naming the first item that is not a JSON object, has no known role or
        type, or is a call without ``call_id``/``name``.
    """
    turns = []
    for i, raw in enumerate(items):
        where = f"item {i}"
        item = _plain(raw, where)
        turn = _chat_turn(item, where)
        if _chat_items(turn) != [item]:
            turn["metadata"] = {ITEM_KEY: item}
        turns.append(turn)
    return turns


def turn_items(turn: Any) -> list[dict[str, Any]]:
    """The Responses items of one archived turn (its kept item, else the chat shape's)."""
    kept = (turn.metadata or {}).get(ITEM_KEY)
    if isinstance(kept, dict):
        return [copy.deepcopy(kept)]
    return _chat_items(turn.message())


def turns_to_items(turns: Iterable[Any]) -> list[dict[str, Any]]:
    """The Responses items of archived turns, in order (the inverse of :func:`items_to_turns`)."""
    return [item for turn in turns for item in turn_items(turn)]


def _system_item(text: str) -> dict[str, Any]:
    return {"role": "system", "content": text}


# -- the session ---------------------------------------------------------------------------------
class MemfoldSession:
    """An Agents SDK session whose history is a memfold conversation (see the module docstring).

    :param session_id: the session's id: the id of its first conversation, the stem of the
        later ones (``<id>~2``, ... after a pop or clear).
    :param memfold: a :class:`~memfold.MemFold`, or a database path to open one (closed by
        :meth:`close`).
    :param namespace: the namespace of a new session (its memories and protected records reach
        the window).
    :param view: ``"context"`` (default: the compiled window) or ``"history"`` (every item).
    :param budget: / :param output_reserve: / :param window: window settings for this session's
        context and compaction (``hot_turns=...``; default the facade's).
    :param reader: compile the window for this reader (a :class:`~memfold.Reader` or labels), so
        turns it may not read (secrets) never reach the model; ``None``: the owner.
    :param session_settings: the SDK's ``SessionSettings`` (e.g. a default ``limit``).
    :raises InvalidInput: for a bad view, reader or id.
    """

    def __init__(self, session_id: str, memfold: MemFold | str | os.PathLike, *, namespace: str | None = None,
                 view: str = "context", budget: int | None = None, output_reserve: int | None = None,
                 reader: Any = None, session_settings: SessionSettings | None = None, **window: Any) -> None:
        if view not in VIEWS:
            raise InvalidInput(f"view must be one of {', '.join(VIEWS)}, got {view!r}")
        if not isinstance(session_id, str) or not session_id or session_id != session_id.strip():
            raise InvalidInput(f"session id must be non-empty text without surrounding whitespace, got {session_id!r}")
        self._owned = not isinstance(memfold, MemFold)
        self.memfold: MemFold = MemFold(memfold) if self._owned else memfold  # type: ignore[arg-type]
        self.session_id = session_id
        self.session_settings = session_settings
        self.namespace = namespace
        self.view = view
        self.reader = as_reader(reader)
        self.overrides: dict[str, Any] = dict(window)
        if budget is not None:
            self.overrides["budget"] = budget
        if output_reserve is not None:
            self.overrides["output_reserve"] = output_reserve
        self.memfold.window.with_overrides(dict(self.overrides))  # bad settings fail here, not mid-run
        self._lock = facade_lock(self.memfold)
        self._generation = 1
        #: the :class:`~memfold.CompactionReport` of the last compaction ``run_compaction`` ran
        self.last_compaction: Any = None
        with self._lock:
            self.memfold.conversation(self._conversation_id(1), namespace=namespace)

    def __repr__(self) -> str:
        return f"MemfoldSession({self.session_id!r}, head={self._conversation_id(self._generation)!r})"

    def close(self) -> None:
        """Close the facade if this session opened it from a path."""
        if self._owned:
            self.memfold.close()

    # -- the head conversation -------------------------------------------------------------------
    def _conversation_id(self, generation: int) -> str:
        return self.session_id if generation == 1 else f"{self.session_id}~{generation}"

    def _exists(self, generation: int) -> bool:
        try:
            self.memfold.conversation(self._conversation_id(generation), create=False)
        except ConversationNotFound:
            return False
        return True

    def conversation(self) -> Any:
        """The session's head conversation (where new items go), found anew on every call so a
        pop or clear by another session object over the same file is seen."""
        with self._lock:
            while self._exists(self._generation + 1):
                self._generation += 1
            return self.memfold.conversation(self._conversation_id(self._generation), create=False)

    def _next_head_id(self) -> str:
        """The id the next head gets; :meth:`_moved` makes it the head once it exists."""
        self.conversation()
        return self._conversation_id(self._generation + 1)

    def _moved(self, new: Any) -> None:
        assert new.id == self._conversation_id(self._generation + 1)
        self._generation += 1

    # -- the Session protocol ----------------------------------------------------------------------
    async def get_items(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The session's items as the model should see them (see ``view``), oldest first.

        :param limit: only the newest ``limit`` items.
        :raises BudgetError: (context view) when what must stay verbatim does not fit.
        """
        return await asyncio.to_thread(self.items, limit)

    async def add_items(self, items: list[Any]) -> None:
        """Append items as turns, all or nothing (compacting at the hard watermark).

        :raises InvalidInput: for an item memfold cannot store (nothing is written).
        """
        await asyncio.to_thread(self.append, items)

    async def pop_item(self) -> dict[str, Any] | None:
        """Take the newest item out of the session and return it (``None`` when empty); it stays
        archived in the conversation it was added to (see the module docstring)."""
        return await asyncio.to_thread(self.pop)

    async def clear_session(self) -> None:
        """Start the session afresh (a new, empty head in the family); nothing is deleted."""
        await asyncio.to_thread(self.clear)

    async def run_compaction(self, args: Mapping[str, Any] | None = None, *, wrapper: Any = None) -> None:
        """The SDK's compaction hook: fold down to the soft watermark when memfold says it is due;
        ``args["force"]`` folds everything outside the hot tail now. First records the prompt
        tokens of the run's last model request (``wrapper.usage``) as watermark pressure."""
        await asyncio.to_thread(self.compact, args, wrapper)

    # -- the same, synchronous -------------------------------------------------------------------
    def items(self, limit: int | None = None) -> list[dict[str, Any]]:
        """:meth:`get_items`, synchronously."""
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise InvalidInput(f"limit must be a whole number >= 0 or None, got {limit!r}")
        if limit == 0:
            return []
        with self._lock:
            conv = self.conversation()
            if self.view == "history":
                turns = conv.history(reader=self.reader) if limit is None else conv.tail(limit, reader=self.reader)
                items = turns_to_items(turns)
            else:
                items = self._context_items(conv)
        return items if limit is None else items[-limit:]

    def _context_items(self, conv: Any) -> list[dict[str, Any]]:
        from ..window.folds import NO_FOLD_CARD  # this session offers no fold_unit tool

        ctx = conv.context(reader=self.reader, **{**NO_FOLD_CARD, **self.overrides})
        header = len(ctx.messages) - len(ctx.refs)
        items = [_system_item(m["content"]) for m in ctx.messages[:header]]
        turns = conv.turns_by_id(int(r[1:]) for r in ctx.refs if r.startswith("t"))
        glimpsed = set(ctx.glimpses)
        for ref, message in zip(ctx.refs, ctx.messages[header:]):
            if ref.startswith("c"):
                items.append(_system_item(message["content"]))
            elif int(ref[1:]) in glimpsed:
                items.extend(_chat_items(message))
            else:
                items.extend(turn_items(turns[int(ref[1:])]))
        return items

    def append(self, items: Iterable[Any]) -> list[int]:
        """:meth:`add_items`, synchronously; returns the new turn ids."""
        turns = items_to_turns(items)
        if not turns:
            return []
        with self._lock:
            return self.conversation().append_many(turns)

    def pop(self) -> dict[str, Any] | None:
        """:meth:`pop_item`, synchronously."""
        with self._lock:
            head = self.conversation()
            last = head.tail(1)
            if not last:
                return None
            turn = last[0]
            items = turn_items(turn)
            # fork the conversation that holds the turn, so repeated pops do not chain forks
            owner = self.memfold.conversation(turn.conversation_id)
            new = owner.fork(self._next_head_id(), at=turn.seq - 1)
            self._moved(new)
            if len(items) > 1:  # a turn added by other means that stands for several items
                new.append_many(items_to_turns(items[:-1]))
            return items[-1]

    def clear(self) -> None:
        """:meth:`clear_session`, synchronously."""
        with self._lock:
            head = self.conversation()
            self._moved(head.clear(self._next_head_id()))

    def compact(self, args: Mapping[str, Any] | None = None, wrapper: Any = None) -> Any:
        """:meth:`run_compaction`, synchronously; returns the compaction report, or ``None``
        when nothing was due."""
        args = dict(args or {})
        with self._lock:
            conv = self.conversation()
            used = _last_request_input_tokens(wrapper)
            if used is not None:
                conv.report_usage(used)
            force = bool(args.get("force"))
            if not force and not conv.window_status(**self.overrides)["due"]:
                return None
            self.last_compaction = conv.compact(target_tokens=0 if force else None, reader=self.reader,
                                                **self.overrides)
            return self.last_compaction

    # -- recall tools ------------------------------------------------------------------------------
    def recall_tools(self) -> list[Any]:
        """memfold's recall tools (search, describe, expand) as Agents SDK ``FunctionTool`` s over
        this session, run as the session's reader, so the model can open what a card summarises."""
        from agents import FunctionTool

        def make(name: str, description: str, schema: dict[str, Any]) -> Any:
            def call(arguments: str) -> str:
                with self._lock:
                    return self.conversation().handle_tool_call(name, arguments, reader=self.reader)

            async def invoke(context: Any, arguments: str) -> str:
                return await asyncio.to_thread(call, arguments)

            return FunctionTool(name=name, description=description, params_json_schema=schema,
                                on_invoke_tool=invoke, strict_json_schema=False)

        with self._lock:
            definitions = self.conversation().tool_definitions()
        return [make(d["function"]["name"], d["function"].get("description", ""), d["function"]["parameters"])
                for d in definitions]


def _last_request_input_tokens(wrapper: Any) -> int | None:
    """The input tokens of the last model request of a run (``None`` when unknown or zero)."""
    usage = getattr(wrapper, "usage", None)
    entries = getattr(usage, "request_usage_entries", None) or []
    tokens = getattr(entries[-1], "input_tokens", None) if entries else None
    return tokens if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens > 0 else None


__all__ = [
    "ITEM_KEY",
    "MemfoldSession",
    "VIEWS",
    "items_to_turns",
    "turn_items",
    "turns_to_items",
]
