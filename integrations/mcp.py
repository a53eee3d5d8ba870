"""memfold as an MCP server: an agent's memory tools over the Model Context Protocol (issue 16).

``memfold mcp DB`` serves these tools over stdio, ``memfold mcp DB --http --port N`` over
streamable HTTP on 127.0.0.1; :func:`create_server` builds the same server in a program. Tools:

=============  ===========================================================================
``search``     the recall tools of :meth:`Conversation.tool_definitions` (their JSON schemas,
``describe``   plus the ``conversation`` they run in), answered as
``expand``     :meth:`Conversation.handle_tool_call` answers them
``append``     archive one turn (an OpenAI chat message) in a conversation
``context``    the compiled context for the next model call, within a token budget
``remember``   write a memory record (supersession, refresh and eviction by policy)
``memories``   the top memory records of a namespace by score (optionally for a query)
``protect_list`` the protected records in force (a conversation's, or a namespace's)
=============  ===========================================================================

Invariant kept here: **one server is one reader.** Every tool runs with the server's fixed
:class:`~memfold.Reader` (``--reader LABEL``; a reader holding no label by default, so an agent
sees no secret turn unless the operator grants the label), and a server bound to a namespace
(``-n``) refuses every conversation, record and protected row outside it. Nothing an agent sends
can widen either: a tool has no reader argument, and a namespace argument may only repeat the
bound one. So an agent cannot read outside its rights through any tool (DESIGN.md §4.9).

Errors: a :class:`~memfold.MemfoldError` (bad input, unknown id, a label the reader lacks, a
budget that does not fit...) comes back as an MCP tool error (``isError``) whose text is
memfold's message and whose structured content is ``{"error", "type"}``, the shape of the CLI's
``--json`` errors; nothing is written for bad input.

The layer is thin: :class:`MemfoldTools` maps each tool to one facade call and knows nothing of
MCP; :func:`create_server` wraps it in the SDK's low-level :class:`mcp.server.Server` (the SDK 2.x
server that serves hand-written JSON schemas as they are; ``MCPServer`` derives schemas from
Python signatures instead). The ``mcp`` package is an optional extra (``pip install
'memfold[mcp]'``), imported only by the functions that need it. Facade calls run one at a time
in a worker thread (one lock per server), so the event loop keeps serving while SQLite works.
"""

from __future__ import annotations

import copy
import json
import socket
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from .. import (
    RECORD_TYPES,
    ConversationNotFound,
    InvalidInput,
    MemfoldError,
    PermissionDenied,
    Reader,
    __version__,
)
from ..memory.validation import check_name
from ..window.recall import TOOL_DEFINITIONS

if TYPE_CHECKING:  # pragma: no cover
    from .. import Conversation, MemFold

#: the tools this module adds to the conversation's recall tools, in listing order
OWN_TOOLS = ("append", "context", "remember", "memories", "protect_list")
#: the protected states a ``protect_list`` call may ask for (``all``: every state)
PROTECTED_STATES = ("active", "satisfied", "expired", "revoked", "superseded", "erased", "all")
#: turn fields an agent may send with ``append`` (``created_at`` is the server clock's)
TURN_FIELDS = ("role", "content", "name", "tool_call_id", "tool_calls", "metadata", "labels")
#: tools that change nothing (MCP ``readOnlyHint``); ``context`` may compact, ``memories`` may
#: count a read
READ_ONLY = frozenset({"search", "describe", "expand", "protect_list"})

INSTRUCTIONS = (
    "memfold keeps this agent's memory. Append every turn of a conversation with append; before "
    "each model call take context (the compiled window: summaries [cN] of older turns, the newest "
    "turns verbatim, protected instructions, top memories). Summaries are maps, not the territory: "
    "search, describe and expand recover the exact words. remember writes a fact or rule; memories "
    "reads the best ones; protect_list shows the standing instructions in force."
)

_CONVERSATION = {"type": "string", "description": "The conversation (ticket, thread) the tool runs in."}
_NAMESPACE = {"type": "string",
              "description": "Tenant/user namespace, e.g. 'acme/dana'. A server bound to a namespace uses its own "
                             "(any other is refused); an unbound server needs it."}


class MissingDependency(ImportError):
    """The ``mcp`` package is not installed: ``pip install 'memfold[mcp]'``."""


def _require_mcp() -> None:
    """:raises MissingDependency: with the install command when ``mcp`` (2.x) is missing."""
    try:
        import mcp.server  # noqa: F401
        from mcp.server import Server  # noqa: F401  (2.x: the constructor-handler Server)
    except ImportError as exc:
        raise MissingDependency("the MCP server needs the mcp package (2.x): pip install 'memfold[mcp]'") from exc


# -- the tools, without MCP -----------------------------------------------------------------------
@dataclass(frozen=True)
class ToolResult:
    """What a tool returns: ``text`` for the model, ``data`` (a JSON object) for programs."""

    text: str
    data: dict[str, Any] | None = None


def _own_definitions() -> list[dict[str, Any]]:
    """The JSON-schema definitions of :data:`OWN_TOOLS`, in the shape of the recall tools'."""
    types = list(RECORD_TYPES)
    return [
        {"name": "append",
         "description": "Archive one turn of a conversation verbatim (an OpenAI chat message: role, content, "
                        "optional name, tool_call_id, tool_calls). A new conversation is created in the server's "
                        "namespace. Returns the turn id and the window's pressure; at the hard watermark older "
                        "turns fold into summary cards before it returns.",
         "parameters": {"type": "object", "properties": {
             "conversation": _CONVERSATION,
             "role": {"type": "string", "enum": ["user", "assistant", "tool", "system", "developer"],
                      "description": "'developer' (OpenAI's newer system role) is stored as a system turn."},
             "content": {"type": ["string", "null"],
                         "description": "The message text (may be empty or null for an assistant turn that only "
                                        "calls tools)."},
             "name": {"type": "string", "description": "The tool's name, for a tool turn."},
             "tool_call_id": {"type": "string", "description": "The call a tool turn answers."},
             "tool_calls": {"type": "array", "items": {"type": "object"},
                            "description": "An assistant turn's tool calls, in the OpenAI shape."},
             "metadata": {"type": "object", "description": "Free JSON kept with the turn."},
             "labels": {"type": "array", "items": {"type": "string"},
                        "description": "Access labels a reader must hold to see this turn."},
             "conversation_labels": {"type": "array", "items": {"type": "string"},
                                     "description": "Access labels of a new conversation: every turn appended to "
                                                    "it carries them. For an existing conversation they must be "
                                                    "its own (other labels are refused)."},
             "namespace": _NAMESPACE,
         }, "required": ["conversation", "role"], "additionalProperties": False}},
        {"name": "context",
         "description": "The compiled context for the next model call: OpenAI chat messages (system note, "
                        "protected channel, top memories, summary cards [cN], turns verbatim) within budget - "
                        "output_reserve tokens, with per-section token counts. Compacts first when needed.",
         "parameters": {"type": "object", "properties": {
             "conversation": _CONVERSATION,
             "budget": {"type": "integer", "minimum": 1, "description": "The model's window in tokens "
                                                                        "(default: the database's setting)."},
             "output_reserve": {"type": "integer", "minimum": 0,
                                "description": "Tokens kept free for the answer (default: the setting, capped at "
                                               "budget/4 when only budget is given)."},
         }, "required": ["conversation"], "additionalProperties": False}},
        {"name": "remember",
         "description": "Write a memory record: a semantic fact (give a slot key such as "
                        "'user.contact_preference': a new value supersedes the old one, history kept), a "
                        "procedural rule, an episodic event or working memory.",
         "parameters": {"type": "object", "properties": {
             "content": {"type": "string", "description": "The fact, rule or event, in one sentence."},
             "type": {"type": "string", "enum": types},
             "key": {"type": "string", "description": "Slot key for supersession (semantic facts)."},
             "importance": {"type": "number", "minimum": 0, "maximum": 1, "description": "Default 0.5."},
             "labels": {"type": "array", "items": {"type": "string"},
                        "description": "Access labels a reader must hold to see this record."},
             "pinned": {"type": "boolean", "description": "Never evict this record (default false)."},
             "namespace": _NAMESPACE,
         }, "required": ["content", "type"], "additionalProperties": False}},
        {"name": "memories",
         "description": "The best active memory records of the namespace, ranked by importance x recency x "
                        "access; with query, only records relevant to it.",
         "parameters": {"type": "object", "properties": {
             "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "How many (default 10)."},
             "k": {"type": "integer", "minimum": 1, "maximum": 100, "description": "Deprecated: the same as limit."},
             "query": {"type": "string", "description": "Rank only records relevant to these words."},
             "types": {"type": "array", "items": {"type": "string", "enum": types},
                       "description": "Only these typed stores (default all four)."},
             "namespace": _NAMESPACE,
         }, "additionalProperties": False}},
        {"name": "protect_list",
         "description": "The protected channel: standing instructions, obligations, deadlines and approvals "
                        "that compaction never drops. With conversation: the records in force there; else the "
                        "namespace's records in the given state.",
         "parameters": {"type": "object", "properties": {
             "conversation": {"type": "string", "description": "The records in force for this conversation."},
             "state": {"type": "string", "enum": list(PROTECTED_STATES),
                       "description": "Without conversation: only records in this state (default active)."},
             "namespace": _NAMESPACE,
         }, "additionalProperties": False}},
    ]


def _conversation_definitions() -> list[dict[str, Any]]:
    """The recall tools as :meth:`Conversation.tool_definitions` gives them (the same for every
    conversation and reader), each with a required ``conversation`` property added first."""
    out = []
    for tool in copy.deepcopy(TOOL_DEFINITIONS):
        fn = tool["function"]
        schema = fn["parameters"]
        schema["properties"] = {"conversation": dict(_CONVERSATION), **schema.get("properties", {})}
        schema["required"] = ["conversation", *[r for r in schema.get("required", []) if r != "conversation"]]
        out.append({"name": fn["name"], "description": fn["description"], "parameters": schema})
    return out


_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


def _check_value(where: str, schema: Mapping[str, Any], value: Any) -> None:
    """:raises InvalidInput: naming ``where`` when ``value`` breaks ``schema`` (type, enum, bounds, items)."""
    wanted = schema.get("type")
    if wanted is not None:
        kinds = [wanted] if isinstance(wanted, str) else list(wanted)
        if not any(_JSON_TYPES[k](value) for k in kinds):
            raise InvalidInput(f"{where} must be {' or '.join(kinds)}, got {json.dumps(value, ensure_ascii=False)}")
    if "enum" in schema and value not in schema["enum"]:
        raise InvalidInput(f"{where} must be one of {', '.join(map(str, schema['enum']))}, got {value!r}")
    if "minimum" in schema and value < schema["minimum"]:
        raise InvalidInput(f"{where} must be at least {schema['minimum']}, got {value!r}")
    if "maximum" in schema and value > schema["maximum"]:
        raise InvalidInput(f"{where} must be at most {schema['maximum']}, got {value!r}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            _check_value(f"{where}[{i}]", schema["items"], item)


def _result_count(tool: str, args: Mapping[str, Any], default: int) -> int:
    """A tool's result count: ``limit`` (or the deprecated ``k``). :raises InvalidInput: for both."""
    if "limit" in args and "k" in args:
        raise InvalidInput(f"{tool}: give 'limit' or the deprecated 'k', not both")
    return args.get("limit", args.get("k", default))


def check_arguments(tool: str, schema: Mapping[str, Any], arguments: Any) -> dict[str, Any]:
    """``arguments`` checked against a tool's JSON schema (the subset the tools use: required,
    no extra properties, types, enums, bounds, array items), so a model's mistake is named before
    any facade call. :raises InvalidInput: naming the tool and the argument."""
    if not isinstance(arguments, Mapping):
        raise InvalidInput(f"{tool}: arguments must be a JSON object, got {type(arguments).__name__}")
    properties = schema.get("properties", {})
    unknown = sorted(set(arguments) - set(properties))
    if unknown:
        raise InvalidInput(f"{tool}: unknown argument(s) {', '.join(unknown)}; it takes {', '.join(properties)}")
    missing = [name for name in schema.get("required", []) if name not in arguments]
    if missing:
        raise InvalidInput(f"{tool}: missing required argument(s) {', '.join(missing)}")
    for name, value in arguments.items():
        _check_value(f"{tool}: argument {name}", properties[name], value)
    return dict(arguments)


def _dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)


def _reader_of(reader: Reader | Iterable[str] | None) -> Reader | None:
    """The server's reader: a :class:`Reader` as given, ``None`` (the owner), or labels."""
    if reader is None or isinstance(reader, Reader):
        return reader
    if isinstance(reader, str):
        raise InvalidInput(f"reader must be a Reader or a list of labels, got the string {reader!r}")
    labels = sorted(set(reader))
    held = ", ".join(labels) if labels else "no label"
    return Reader.of(labels, name=f"this MCP server's reader (holding {held})")


class MemfoldTools:
    """The MCP tools as plain calls on a facade, for one fixed reader and an optional namespace.

    :param memfold: the open facade; the tools make one facade call each.
    :param reader: the reader every tool reads as: a :class:`~memfold.Reader`, a list of labels
        (default ``()``: a reader holding no label, who never sees a labelled turn, card, record
        or protected row), or ``None`` for the trusted owner, who sees everything.
    :param namespace: bind the tools to this namespace: conversations, records and protected rows
        of any other are refused (:class:`~memfold.PermissionDenied`), new conversations are made
        in it. ``None``: every namespace, named per call.
    :raises InvalidInput: for a bad label or namespace name.
    """

    def __init__(self, memfold: "MemFold", *, reader: Reader | Iterable[str] | None = (),
                 namespace: str | None = None) -> None:
        self.memfold = memfold
        self.reader = _reader_of(reader)
        self.namespace = None if namespace is None else check_name(namespace, "namespace")
        self.lock = threading.Lock()  # one facade call at a time (the facade holds one connection)
        self._definitions = _conversation_definitions() + _own_definitions()
        self._schemas = {d["name"]: d["parameters"] for d in self._definitions}
        self._recall = {d["name"] for d in self._definitions} - set(OWN_TOOLS)

    # -- listing --------------------------------------------------------------------------------
    def definitions(self) -> list[dict[str, Any]]:
        """Every tool as ``{"name", "description", "parameters"}`` (``parameters``: JSON schema)."""
        return copy.deepcopy(self._definitions)

    def input_schema(self, name: str) -> dict[str, Any] | None:
        """The JSON schema of tool ``name``, ``None`` for an unknown one."""
        schema = self._schemas.get(name)
        return None if schema is None else copy.deepcopy(schema)

    def describe_rights(self) -> str:
        """``"as a reader holding secret, in namespace acme/dana"`` and the like, for logs."""
        who = "as the owner (every label)" if self.reader is None else (
            f"as a reader holding {', '.join(sorted(self.reader.labels)) or 'no label'}")
        return f"{who}, {'in namespace ' + self.namespace if self.namespace else 'in every namespace'}"

    # -- calling --------------------------------------------------------------------------------
    def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """Run tool ``name`` with ``arguments`` (a JSON object) and return its result.

        :raises InvalidInput: for an unknown tool or arguments that break its schema.
        :raises PermissionDenied: for a namespace outside the bound one, or an item the reader lacks
            a label for (``describe``/``expand``).
        :raises MemfoldError: any other error of the facade call, with its message.
        """
        schema = self._schemas.get(name)
        if schema is None:
            raise InvalidInput(f"unknown tool {name!r}: the tools are {', '.join(self._schemas)}")
        args = check_arguments(name, schema, arguments if arguments is not None else {})
        with self.lock:
            if name in self._recall:
                return self._recall_tool(name, args)
            return getattr(self, f"_tool_{name}")(args)

    def _bound(self, given: str | None, *, required: bool) -> str | None:
        """The namespace a call uses: the bound one (``given`` may only repeat it), else ``given``.
        :raises PermissionDenied: / :raises InvalidInput: (unbound and required but not given)."""
        if self.namespace is not None:
            if given is not None and given != self.namespace:
                raise PermissionDenied(f"this server is bound to namespace {self.namespace!r}: namespace {given!r} "
                                       f"is outside it")
            return self.namespace
        if given is None and required:
            raise InvalidInput("namespace is required: this server is not bound to one "
                               "(memfold mcp DB -n NAMESPACE binds it)")
        return given

    def _conversation(self, conversation_id: str, *, namespace: str | None = None,
                      create: bool = False, labels: list[str] | None = None) -> "Conversation":
        """An existing conversation inside the server's rights (or a new one with ``create``, with
        ``labels``; an existing one must have those labels, as over HTTP).
        :raises ConversationNotFound: / :raises PermissionDenied: outside the bound namespace.
        :raises InvalidInput: for an existing conversation with other labels than ``labels``."""
        namespace = self._bound(namespace, required=False)
        try:
            conv = self.memfold.conversation(conversation_id, create=False)
        except ConversationNotFound:
            if not create:
                raise
            return self.memfold.conversation(conversation_id, namespace=namespace, labels=labels)
        if self.namespace is not None and conv.namespace != self.namespace:
            raise PermissionDenied(f"this server is bound to namespace {self.namespace!r}: conversation "
                                   f"{conversation_id!r} belongs to another namespace")
        if namespace is not None and conv.namespace != namespace:  # the facade's message names both
            return self.memfold.conversation(conversation_id, namespace=namespace)
        if labels is not None:  # other labels are refused (the facade's message names both)
            return self.memfold.conversation(conversation_id, labels=labels)
        return conv

    def _visible(self, labels: Iterable[str]) -> bool:
        return self.reader is None or self.reader.can_read(labels)

    def _recall_tool(self, name: str, args: dict[str, Any]) -> ToolResult:
        """search / describe / expand with the server's reader, answered in the text
        :meth:`Conversation.handle_tool_call` gives (plus the items as data); a tool of the
        definitions this module does not know goes through ``handle_tool_call`` itself."""
        from ..window.recall import format_item

        conv = self._conversation(args.pop("conversation"))
        if name == "search":
            hits = conv.search(args["query"], _result_count("search", args, 5), reader=self.reader)
            return ToolResult("\n".join(h.line() for h in hits) if hits else "no matches",
                              {"hits": [h.to_dict() for h in hits]})
        if name == "describe":
            info = conv.describe(args["id"], reader=self.reader)
            return ToolResult(_dumps(info), info)
        if name == "expand":
            items = conv.expand(args["id"], to_turns=args.get("to_turns", False), reader=self.reader)
            return ToolResult("\n".join(format_item(i) for i in items), {"items": [i.to_dict() for i in items]})
        text = conv.handle_tool_call(name, args, reader=self.reader)  # a recall tool added later (issue 14)
        if text.startswith("error: "):
            raise MemfoldError(text[len("error: "):])
        return ToolResult(text)

    def _tool_append(self, args: dict[str, Any]) -> ToolResult:
        turn = {k: args[k] for k in TURN_FIELDS if k in args}
        labels = args.get("conversation_labels")
        try:
            conv = self._conversation(args["conversation"], namespace=args.get("namespace"), labels=labels)
        except ConversationNotFound:
            with self.memfold.storage.transaction():  # a new conversation with a bad first turn: nothing written
                conv = self._conversation(args["conversation"], namespace=args.get("namespace"), create=True,
                                          labels=labels)
                turn_id = conv.append(turn)
        else:
            try:  # a reader lacking a label of the conversation is refused by the library: writing would
                # show its window figures, and mix its turns with ours
                turn_id = conv.append(turn, reader=self.reader)
            except PermissionDenied as exc:
                raise PermissionDenied(f"append: {exc}") from None
        own = conv.describe(f"t{turn_id}")  # the caller's own turn: its seq, size and labels (secret detection)
        data = {"turn": own["ref"], "id": turn_id, "seq": own["seq"], "tokens": own["tokens"],
                "labels": own["labels"], "conversation": conv.id, "namespace": conv.namespace,
                "window": conv.window_status()}
        return ToolResult(_dumps(data), data)

    def _tool_context(self, args: dict[str, Any]) -> ToolResult:
        conv = self._conversation(args["conversation"])
        from ..window.folds import NO_FOLD_CARD  # the server offers no fold_unit tool

        ctx = conv.context(args.get("budget"), args.get("output_reserve"), reader=self.reader, **NO_FOLD_CARD)
        data = ctx.to_dict()
        return ToolResult(_dumps(data), data)

    def _tool_remember(self, args: dict[str, Any]) -> ToolResult:
        namespace = self._bound(args.get("namespace"), required=True)
        if self.reader is not None and args.get("key") is not None:
            # a restatement would refresh (and return) a record this reader may not see, a new value
            # would retire it: refuse both, naming only the slot the agent gave
            for record in self.memfold.memory.list(namespace, args["type"], key=args["key"]):
                if not self.reader.can_read(record.labels):
                    raise PermissionDenied(f"remember: {self.reader.name} may not write slot {args['key']!r}: its "
                                           "current value requires a label this reader lacks")
        outcome = self.memfold.memory.write_outcome(
            namespace, args["type"], args["content"], key=args.get("key"), importance=args.get("importance", 0.5),
            labels=args.get("labels"), pinned=args.get("pinned", False))
        # ids of records this reader may not see stay unnamed (a write must not reveal them)
        shown = lambda ids: [i for i in ids if self._visible(self.memfold.memory.get(i).labels)]  # noqa: E731
        data = {"record": outcome.record.to_dict(), "action": outcome.action.value,
                "retired": shown(i for i in outcome.retired if i != outcome.record.id),
                "evicted": shown(outcome.evicted)}
        return ToolResult(_dumps(data), data)

    def _tool_memories(self, args: dict[str, Any]) -> ToolResult:
        namespace = self._bound(args.get("namespace"), required=True)
        scored = self.memfold.read(namespace, _result_count("memories", args, 10), reader=self.reader,
                                   types=args.get("types"), query=args.get("query"))
        data = {"namespace": namespace, "memories": [s.to_dict() for s in scored]}
        return ToolResult(_dumps(data), data)

    def _tool_protect_list(self, args: dict[str, Any]) -> ToolResult:
        state = args.get("state", "active")
        if "conversation" in args:
            if state != "active":
                raise InvalidInput("protect_list: with conversation it lists the records in force (active); "
                                   "leave state out, or drop conversation to list a namespace's records by state")
            conv = self._conversation(args["conversation"], namespace=args.get("namespace"))
            records = self.memfold.protected.active_for(conv.id, reader=self.reader)
        else:
            namespace = self._bound(args.get("namespace"), required=False)
            records = self.memfold.protected.list(namespace=namespace, state=None if state == "all" else state,
                                                  reader=self.reader)
        data = {"records": [r.to_dict() for r in records]}
        return ToolResult(_dumps(data), data)


# -- the MCP server -------------------------------------------------------------------------------
def create_server(memfold: "MemFold", *, reader: Reader | Iterable[str] | None = (), namespace: str | None = None,
                  name: str = "memfold") -> Any:
    """An MCP server (the SDK's :class:`mcp.server.Server`) serving :class:`MemfoldTools`.

    Run it with :func:`serve_stdio` or :func:`serve_http`, or connect to it in-process with
    ``mcp.Client(server)``. ``reader`` and ``namespace`` as in :class:`MemfoldTools`.

    :raises MissingDependency: without the ``mcp`` package.
    :raises InvalidInput: for a bad label or namespace name.
    """
    _require_mcp()
    import anyio
    from mcp import types
    from mcp.server import Server

    tools = MemfoldTools(memfold, reader=reader, namespace=namespace)
    listed = [types.Tool(name=d["name"], description=d["description"], input_schema=d["parameters"],
                         annotations=types.ToolAnnotations(read_only_hint=d["name"] in READ_ONLY))
              for d in tools.definitions()]

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=listed)

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        try:
            result = await anyio.to_thread.run_sync(tools.call, params.name, params.arguments or {})
        except MemfoldError as exc:
            return types.CallToolResult(content=[types.TextContent(type="text", text=str(exc))], is_error=True,
                                        structured_content={"error": str(exc), "type": type(exc).__name__})
        return types.CallToolResult(content=[types.TextContent(type="text", text=result.text)],
                                    structured_content=result.data)

    server = Server(name, version=__version__, instructions=INSTRUCTIONS, get_tool_input_schema=tools.input_schema,
                    on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    server.memfold_tools = tools  # type: ignore[attr-defined]  (for callers that want the plain calls)
    return server


def serve_stdio(server: Any) -> None:
    """Serve ``server`` on this process's stdin/stdout until stdin closes. Nothing else may
    write to stdout meanwhile: it is the protocol channel."""
    _require_mcp()
    import anyio
    from mcp.server.stdio import stdio_server

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(run)


def listen_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (``0``: a free port) for the HTTP server.

    Made with proto ``IPPROTO_TCP``, not ``0``: asyncio sets ``TCP_NODELAY`` only on connections
    whose socket says it is TCP, and without it each JSON response's body waits about 40 ms behind
    its headers (Nagle's algorithm meeting the client's delayed ACK).

    :raises InvalidInput: for a port outside 0..65535 or one that cannot be bound.
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise InvalidInput(f"port must be an integer from 0 to 65535, got {port!r}")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise InvalidInput(f"cannot listen on {host}:{port}: {(exc.strerror or str(exc)).lower()}: "
                           f"choose another --port (0 picks a free one)") from None
    return sock


def serve_http(server: Any, port: int, *, on_ready: Callable[[str], None] | None = None,
               log_level: str = "warning") -> None:
    """Serve ``server`` over streamable HTTP at ``http://127.0.0.1:PORT/mcp`` until interrupted.

    Only 127.0.0.1 is served: the MCP endpoint has no authentication of its own, so it must not
    be reachable from other machines (the SDK's DNS-rebinding protection is on for it).

    :param port: the TCP port; ``0`` picks a free one.
    :param on_ready: called with the endpoint URL once the socket listens (before the first request).
    :raises InvalidInput: when the port cannot be bound (in use, or not allowed).
    """
    _require_mcp()
    import uvicorn

    host = "127.0.0.1"
    sock = listen_socket(host, port)
    url = f"http://{host}:{sock.getsockname()[1]}/mcp"
    app = server.streamable_http_app(streamable_http_path="/mcp", host=host)
    config = uvicorn.Config(app, log_level=log_level, lifespan="on")
    if on_ready is not None:
        on_ready(url)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()


__all__ = ["MemfoldTools", "MissingDependency", "ToolResult", "check_arguments", "create_server", "listen_socket",
           "serve_http", "serve_stdio"]
