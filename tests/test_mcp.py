"""The MCP server (issue 16, point 1): every tool through the MCP SDK's own client, in memory,
over stdio with the real ``memfold mcp`` subprocess, and over streamable HTTP against the real
server on 127.0.0.1; one fixed reader and an optional namespace per server; memfold's errors as
MCP tool errors."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading

import pytest
from anyio.from_thread import start_blocking_portal
from click.testing import CliRunner
from mcp import Client, StdioServerParameters

import memfold
from memfold import Reader, WindowSettings
from memfold.cli import cli
from memfold.integrations.mcp import MemfoldTools, create_server, listen_socket

SECRET = "ZEBRA-7731"
#: what a leak of SECRET looks like in any output (search snippets bracket each matched word)
SECRET_PARTS = ("ZEBRA", "7731")
WINDOW = WindowSettings(budget_tokens=100, output_reserve_tokens=0, hot_turns=2, rollup_fanin=3,
                        leaf_chunk_tokens=20, card_target_tokens=8)
TOOLS = ["search", "describe", "expand", "append", "context", "remember", "memories", "protect_list"]


def open_mf(path):
    return memfold.MemFold(path, clock=memfold.LogicalClock(), token_counter="words", embedder=None, window=WINDOW)


def seed(path) -> None:
    """Two tenants. acme/dana: a ticket whose second turn, a protected record and a memory
    record carry the label ``vault`` (and hold SECRET), enough turns to fold into cards, a tool
    call and its result. acme/bob: a conversation, a record and a protected record."""
    with open_mf(path) as mf:
        conv = mf.conversation("ticket-42", namespace="acme/dana")
        conv.append({"role": "user", "content": "My order ORD-3300 arrived broken"})
        conv.append({"role": "user", "content": f"the vault code is {SECRET} keep it", "labels": ["vault"]})
        conv.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "policy_lookup", "arguments": "{\"topic\": \"refund\"}"}}]})
        conv.append({"role": "tool", "tool_call_id": "call_1", "name": "policy_lookup",
                     "content": "Refunds go to the original card within 5 days"})
        for i in range(14):
            conv.append({"role": "user" if i % 2 == 0 else "assistant",
                         "content": f"order ORD-{i} ships May {i} to Elm street number {i}"})
        mf.protected.add("Refund only to the original card", kind="constraint", namespace="acme/dana")
        mf.protected.add(f"Vault access needs code {SECRET}", kind="prerequisite", namespace="acme/dana",
                         labels=["vault"])
        mf.remember("acme/dana", "semantic", "Dana prefers email contact", key="user.contact_preference",
                    importance=0.6)
        mf.remember("acme/dana", "semantic", f"Dana's vault code is {SECRET}", key="user.vault_code",
                    importance=0.9, labels=["vault"])
        bob = mf.conversation("bob-1", namespace="acme/bob")
        bob.append({"role": "user", "content": "Bob here, order ORD-9999 is late"})
        mf.remember("acme/bob", "semantic", "Bob prefers phone contact", key="user.contact_preference")
        mf.protected.add("Bob: no calls before 9am", kind="constraint", namespace="acme/bob")


class SyncClient:
    """The SDK's :class:`mcp.Client`, driven from a test through an anyio blocking portal."""

    def __init__(self, portal, client):
        self.portal, self.client = portal, client

    def tools(self):
        return self.portal.call(self.client.list_tools).tools

    def call(self, name, arguments=None):
        return self.portal.call(self.client.call_tool, name, arguments or {})

    def ok(self, name, arguments=None):
        result = self.call(name, arguments)
        assert not result.is_error, f"{name} failed: {result.content[0].text}"
        return result

    def text(self, name, arguments=None) -> str:
        return self.ok(name, arguments).content[0].text

    def error(self, name, arguments=None) -> tuple[str, str]:
        """The error text and type of a call that must fail."""
        result = self.call(name, arguments)
        assert result.is_error, f"{name} should have failed, got {result.content[0].text}"
        assert result.structured_content["error"] == result.content[0].text
        return result.content[0].text, result.structured_content["type"]


@contextlib.contextmanager
def connect(target):
    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(Client(target)) as client:
            yield SyncClient(portal, client)


@pytest.fixture
def seeded(tmp_path):
    path = tmp_path / "agent.db"
    seed(path)
    return path


@pytest.fixture
def served(seeded):
    """connect(reader=..., namespace=...) -> a client of an in-memory server on the seeded file."""
    opened = []

    @contextlib.contextmanager
    def serve(**rights):
        mf = open_mf(seeded)
        opened.append(mf)
        with connect(create_server(mf, **rights)) as client:
            yield client

    yield serve
    for mf in opened:
        mf.close()


def leaks(texts: list[str]) -> list[str]:
    return [text for text in texts if any(part in text for part in SECRET_PARTS)]


def everything_shown(client, conversation="ticket-42") -> list[str]:
    """The text of every successful read a client can make of the seeded ticket: each tool, each
    turn and card expanded and described (errors are left out: they show nothing)."""
    out = []
    for name, args in [("search", {"query": f"vault code {SECRET} ZEBRA"}), ("search", {"query": "order"}),
                       ("context", {}), ("protect_list", {})]:
        out.append(client.text(name, {"conversation": conversation, **args}))
    out.append(client.text("memories", {"namespace": "acme/dana"}))
    out.append(client.text("memories", {"namespace": "acme/dana", "query": "vault code"}))
    out.append(client.text("protect_list", {"namespace": "acme/dana", "state": "all"}))
    for ref in [f"t{i}" for i in range(1, 20)] + [f"c{i}" for i in range(1, 30)]:
        for name, args in [("describe", {"id": ref}), ("expand", {"id": ref}), ("expand", {"id": ref, "to_turns": True})]:
            result = client.call(name, {"conversation": conversation, **args})
            if not result.is_error:
                out.append(result.content[0].text + json.dumps(result.structured_content))
    return out


# -- listing: the schemas tool_definitions() gives ---------------------------------------------------
def test_tools_are_listed_with_the_schemas_tool_definitions_gives(served, seeded):
    with served() as client:
        tools = {t.name: t for t in client.tools()}
    assert list(tools) == TOOLS
    with open_mf(seeded) as mf:
        definitions = mf.conversation("ticket-42").tool_definitions()
    for definition in definitions:
        fn = definition["function"]
        schema = dict(tools[fn["name"]].input_schema)
        assert schema["properties"].pop("conversation")["type"] == "string"
        assert schema["required"][0] == "conversation"
        schema["required"] = schema["required"][1:]
        assert schema == fn["parameters"]
        assert tools[fn["name"]].description == fn["description"]
    for tool in tools.values():
        assert tool.input_schema["type"] == "object" and tool.input_schema["additionalProperties"] is False
        assert tool.description
    assert {t.name for t in tools.values() if t.annotations.read_only_hint} == {"search", "describe", "expand",
                                                                              "protect_list"}


# -- every tool ------------------------------------------------------------------------------------
def test_every_tool_works_in_memory(served, seeded):
    with served(namespace="acme/dana", reader=["vault"]) as client:
        appended = client.ok("append", {"conversation": "ticket-42", "role": "user",
                                        "content": "Is the refund for ORD-3300 on its way?"}).structured_content
        assert appended["turn"] == f"t{appended['id']}" and appended["namespace"] == "acme/dana"
        assert appended["window"]["usable"] == 100
        call = client.ok("append", {"conversation": "ticket-43", "role": "assistant", "content": None, "tool_calls": [
            {"id": "call_9", "type": "function", "function": {"name": "refund_status", "arguments": "{}"}}]})
        client.ok("append", {"conversation": "ticket-43", "role": "tool", "tool_call_id": "call_9",
                             "name": "refund_status", "content": "refund sent May 3"})
        hits = client.ok("search", {"conversation": "ticket-42", "query": "refund ORD-3300", "k": 3}).structured_content
        assert hits["hits"] and hits["hits"][0]["ref"] == appended["turn"]
        ctx = client.ok("context", {"conversation": "ticket-42"}).structured_content
        assert ctx["total_tokens"] <= ctx["usable_tokens"] == 100
        assert ctx["messages"][-1]["content"] == "Is the refund for ORD-3300 on its way?"
        card = next(ref for ref in ctx["refs"] if ref.startswith("c"))
        described = client.ok("describe", {"conversation": "ticket-42", "id": card}).structured_content
        assert described["ref"] == card and described["kind"] == "card"
        children = client.ok("expand", {"conversation": "ticket-42", "id": card}).structured_content["items"]
        assert [c["ref"] if "ref" in c else f"t{c['id']}" for c in children] == described["children"]
        wrote = client.ok("remember", {"content": "Dana prefers phone contact", "type": "semantic",
                                       "key": "user.contact_preference", "importance": 0.7}).structured_content
        assert wrote["action"] == "supersede" and wrote["record"]["namespace"] == "acme/dana"
        top = client.ok("memories", {"k": 5}).structured_content["memories"]
        assert [m["content"] for m in top] == [f"Dana's vault code is {SECRET}", "Dana prefers phone contact"]
        rules = client.ok("protect_list", {"conversation": "ticket-42"}).structured_content["records"]
        assert [r["text"] for r in rules] == ["Refund only to the original card", f"Vault access needs code {SECRET}"]
        # ticket-43 was created in the bound namespace, the tool call and its result archived verbatim
        assert "refund sent May 3" in client.text("expand", {"conversation": "ticket-43",
                                                             "id": f"t{call.structured_content['id'] + 1}"})
    with open_mf(seeded) as mf:
        assert mf.conversation("ticket-43").namespace == "acme/dana"
        assert [t.role for t in mf.conversation("ticket-43").history()] == ["assistant", "tool"]
        assert mf.conversation("ticket-42").history()[-1].content == "Is the refund for ORD-3300 on its way?"


def test_recall_tools_answer_as_handle_tool_call_does(served, seeded):
    calls = [("search", {"query": "order ORD-3300 Elm"}), ("search", {"query": "policy refund", "k": 2}),
             ("describe", {"id": "t1"}), ("expand", {"id": "t4"}), ("expand", {"id": "t3", "to_turns": True})]
    with served() as client:
        got = [client.text(name, {"conversation": "ticket-42", **args}) for name, args in calls]
    with open_mf(seeded) as mf:
        conv = mf.conversation("ticket-42")
        want = [conv.handle_tool_call(name, args, reader=Reader.of([])) for name, args in calls]
    assert got == want
    assert "call policy_lookup" not in got[3] and "Refunds go to the original card" in got[3]


# -- rights: one fixed reader, one namespace --------------------------------------------------------
def test_a_reader_without_the_label_never_sees_a_labelled_item_through_any_tool(served):
    with served() as client:  # the default: a reader holding no label
        shown = everything_shown(client)
        assert len(shown) > 20
        assert not leaks(shown)
        text, kind = client.error("expand", {"conversation": "ticket-42", "id": "t2"})
        assert kind == "PermissionDenied" and "lacks the label(s) vault" in text
        assert client.error("describe", {"conversation": "ticket-42", "id": "t2"})[1] == "PermissionDenied"
    with served(reader=["secret"]) as client:  # another label does not help
        assert not leaks(everything_shown(client))
    with served(reader=["vault"]) as client:  # the label's holder sees every one of them
        shown = everything_shown(client)
        assert SECRET in client.text("expand", {"conversation": "ticket-42", "id": "t2"})
        assert "[ZEBRA]-[7731]" in client.text("search", {"conversation": "ticket-42", "query": SECRET})
        assert SECRET in client.text("memories", {"namespace": "acme/dana"})
        assert SECRET in client.text("protect_list", {"conversation": "ticket-42"})
        assert SECRET in client.text("context", {"conversation": "ticket-42"})
        assert len(leaks(shown)) >= 8


def test_a_reader_is_fixed_per_server_no_argument_widens_it(served):
    with served() as client:
        for name in ["search", "expand", "context", "memories"]:
            text, kind = client.error(name, {"conversation": "ticket-42", "namespace": "acme/dana", "query": "x",
                                             "id": "t2", "reader": ["vault"]})
            assert kind == "InvalidInput" and "unknown argument" in text and "reader" in text


def test_a_namespace_bound_server_refuses_every_other_namespace(served, seeded):
    with served(namespace="acme/dana", reader=None) as client:  # even the owner stays in its namespace
        for name, args in [("search", {"query": "order"}), ("describe", {"id": "t19"}), ("expand", {"id": "t19"}),
                           ("context", {}), ("protect_list", {}),
                           ("append", {"role": "user", "content": "hello from dana's agent"})]:
            text, kind = client.error(name, {"conversation": "bob-1", **args})
            assert kind == "PermissionDenied", (name, text)
            assert text == ("this server is bound to namespace 'acme/dana': conversation 'bob-1' belongs to "
                            "another namespace")
        for name, args in [("memories", {}), ("remember", {"content": "Bob is VIP", "type": "semantic"}),
                           ("protect_list", {}), ("append", {"conversation": "new-1", "role": "user", "content": "hi"})]:
            text, kind = client.error(name, {"namespace": "acme/bob", **args})
            assert kind == "PermissionDenied" and "namespace 'acme/bob' is outside it" in text, (name, text)
        # unqualified calls stay inside acme/dana
        assert "Bob" not in client.text("protect_list", {"state": "all"})
        assert "Bob" not in client.text("memories", {"query": "contact"})
        assert "ORD-9999" not in client.text("search", {"conversation": "ticket-42", "query": "ORD-9999 Bob late"})
    with open_mf(seeded) as mf:  # nothing was written for acme/bob
        assert len(mf.conversation("bob-1").history()) == 1
        assert [r.content for r in mf.memory.list("acme/bob")] == ["Bob prefers phone contact"]
        assert "new-1" not in mf.conversations()


def test_an_unbound_server_needs_a_namespace_for_records_and_sees_each_one_named(served):
    with served() as client:
        for name, args in [("memories", {}), ("remember", {"content": "x", "type": "semantic"})]:
            text, kind = client.error(name, args)
            assert kind == "InvalidInput" and text.startswith("namespace is required")
        assert "Bob prefers phone contact" in client.text("memories", {"namespace": "acme/bob"})
        assert "[ORD]-[9999]" in client.text("search", {"conversation": "bob-1", "query": "ORD-9999"})


# -- errors as MCP tool errors ---------------------------------------------------------------------
def test_bad_input_comes_back_as_a_tool_error_with_memfolds_message_and_writes_nothing(served, seeded):
    with open_mf(seeded) as mf:
        conv = mf.conversation("ticket-42")
        expected = {}
        for key, call in [("card", lambda: conv.describe("c999")),
                          ("tool turn", lambda: conv.append({"role": "tool", "content": "orphan"})),
                          ("budget", lambda: conv.context(budget=3, reader=Reader.of([]))),
                          ("empty", lambda: mf.memory.write("acme/dana", "semantic", "   ")),
                          ("no conversation", lambda: mf.conversation("nope", create=False))]:
            with pytest.raises(memfold.MemfoldError) as caught:
                call()
            expected[key] = (str(caught.value), type(caught.value).__name__)
        turns_before = len(conv.history())
    with served(namespace="acme/dana") as client:
        assert client.error("describe", {"conversation": "ticket-42", "id": "c999"}) == expected["card"]
        assert client.error("append", {"conversation": "ticket-42", "role": "tool",
                                       "content": "orphan"}) == expected["tool turn"]
        assert client.error("append", {"conversation": "brand-new", "role": "tool",
                                       "content": "orphan"}) == expected["tool turn"]
        assert client.error("context", {"conversation": "ticket-42", "budget": 3}) == expected["budget"]
        assert expected["budget"][1] == "BudgetError"
        assert client.error("remember", {"content": "   ", "type": "semantic"}) == expected["empty"]
        assert client.error("search", {"conversation": "nope", "query": "x"}) == expected["no conversation"]
        # arguments that break the schema are named before any facade call
        assert client.error("search", {"conversation": "ticket-42", "query": "x", "k": 0}) == (
            "search: argument k must be at least 1, got 0", "InvalidInput")
        assert client.error("expand", {"conversation": "ticket-42", "id": "c1", "to_turns": "yes"}) == (
            'expand: argument to_turns must be boolean, got "yes"', "InvalidInput")
        assert client.error("describe", {"conversation": "ticket-42"}) == (
            "describe: missing required argument(s) id", "InvalidInput")
        assert client.error("remember", {"content": "x", "type": "fact"})[0].startswith(
            "remember: argument type must be one of working, semantic, episodic, procedural")
        assert client.error("memories", {"types": ["semantic", 3]})[0] == (
            "memories: argument types[1] must be string, got 3")
        assert client.error("no_such_tool", {})[0].startswith("unknown tool 'no_such_tool'")
    with open_mf(seeded) as mf:
        assert len(mf.conversation("ticket-42").history()) == turns_before
        assert "brand-new" not in mf.conversations()
        assert [r.content for r in mf.memory.list("acme/dana")] == ["Dana prefers email contact",
                                                                    f"Dana's vault code is {SECRET}"]


def test_a_write_never_names_a_record_the_reader_may_not_see(served):
    with served(namespace="acme/dana") as client:  # a slot whose value the reader may not see is not writable
        text, kind = client.error("remember", {"content": "Dana's vault code changed", "type": "semantic",
                                               "key": "user.vault_code"})
        assert kind == "PermissionDenied" and "user.vault_code" in text and SECRET not in text
    with served(namespace="acme/dana", reader=["vault"]) as client:
        wrote = client.ok("remember", {"content": "Dana's vault code changed again", "type": "semantic",
                                       "key": "user.vault_code"}).structured_content
        assert wrote["retired"] == [wrote["record"]["supersedes"]]


def test_the_tools_without_mcp_are_the_same_calls(seeded):
    with open_mf(seeded) as mf:
        tools = MemfoldTools(mf, namespace="acme/dana")
        assert [d["name"] for d in tools.definitions()] == TOOLS
        assert tools.call("search", {"conversation": "ticket-42", "query": SECRET}).text == "no matches"
        with pytest.raises(memfold.PermissionDenied):
            tools.call("memories", {"namespace": "acme/bob"})
        with pytest.raises(memfold.InvalidInput, match="leading or trailing whitespace"):
            MemfoldTools(mf, namespace=" acme")
        assert tools.describe_rights() == "as a reader holding no label, in namespace acme/dana"


# -- the real server: stdio subprocess and streamable HTTP -------------------------------------------
def memfold_command() -> list[str]:
    exe = shutil.which("memfold")
    return [exe] if exe else [sys.executable, "-c", "from memfold.cli import cli; cli()"]


def test_memfold_mcp_over_stdio(seeded):
    command, *prefix = memfold_command()
    params = StdioServerParameters(command=command, args=[*prefix, "mcp", str(seeded), "--embedder", "none",
                                                          "--reader", "vault"], env=dict(os.environ))
    with connect(params) as client:
        assert [t.name for t in client.tools()] == TOOLS
        added = client.ok("append", {"conversation": "ticket-42", "role": "user", "content": "Any news on ORD-3300?",
                                     "namespace": "acme/dana"}).structured_content
        assert SECRET in client.text("expand", {"conversation": "ticket-42", "id": "t2"})
        assert "Any [news] on ORD-3300?" in client.text("search", {"conversation": "ticket-42", "query": "news"})
        assert SECRET in client.text("memories", {"namespace": "acme/dana"})
        assert client.error("describe", {"conversation": "ticket-42", "id": "c999"})[1] == "CardNotFound"
    with open_mf(seeded) as mf:
        assert mf.conversation("ticket-42").history()[-1].id == added["id"]


class HttpServer:
    """``memfold mcp DB --http --port 0 ...`` as a subprocess; ``url`` once it listens."""

    def __init__(self, *args: str):
        self.proc = subprocess.Popen([*memfold_command(), "mcp", *args, "--http", "--port", "0"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=dict(os.environ))
        self.lines: queue.Queue = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        line = self.lines.get(timeout=120)  # a hang guard, not a timing assertion
        assert line is not None and " at http://" in line, "".join(self.stderr)
        self.status = line
        self.url = line.split(" at ", 1)[1].split()[0]

    def _read(self):
        for line in self.proc.stderr:
            self.stderr.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(timeout=60)


def test_memfold_mcp_over_streamable_http_on_localhost(seeded):
    server = HttpServer(str(seeded), "--embedder", "none", "-n", "acme/dana")
    try:
        assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/mcp")
        assert "as a reader holding no label, in namespace acme/dana" in server.status
        with connect(server.url) as client:
            assert [t.name for t in client.tools()] == TOOLS
            client.ok("append", {"conversation": "ticket-44", "role": "user", "content": "Where is ORD-4400?"})
            assert "ORD" in client.text("search", {"conversation": "ticket-44", "query": "ORD-4400"})
            assert not leaks([client.text("context", {"conversation": "ticket-42"})])
            assert client.error("expand", {"conversation": "bob-1", "id": "t19"})[1] == "PermissionDenied"
            assert client.error("expand", {"conversation": "ticket-42", "id": "t2"})[1] == "PermissionDenied"
            client.ok("remember", {"content": "Dana's order ORD-4400 is late", "type": "episodic"})
            assert "ORD-4400" in client.text("memories", {"query": "ORD-4400"})
    finally:
        assert server.stop() == 0, "".join(server.stderr)
    with open_mf(seeded) as mf:
        assert mf.conversation("ticket-44").namespace == "acme/dana"


def test_the_http_socket_lets_asyncio_turn_nagle_off():
    """Connections accepted on the server's socket get TCP_NODELAY from asyncio (a socket made
    with proto 0 does not, and every JSON response then waits ~40 ms for a delayed ACK)."""
    import asyncio
    import socket

    sock = listen_socket("127.0.0.1", 0)
    nodelay = []

    async def main():
        async def handle(reader, writer):
            nodelay.append(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(handle, sock=sock)
        async with server:
            reader, writer = await asyncio.open_connection(*sock.getsockname()[:2])
            await reader.read()  # EOF once the handler has looked and closed
            writer.close()

    asyncio.run(main())
    assert nodelay == [1]


# -- the command ------------------------------------------------------------------------------------
def test_mcp_command_refuses_bad_option_combinations(seeded, tmp_path):
    runner = CliRunner()
    for args, message in [(["--port", "9"], "--port is for --http"),
                          (["--owner", "--reader", "vault"], "cannot be combined with --reader"),
                          (["-n", " acme"], "leading or trailing whitespace")]:
        result = runner.invoke(cli, ["mcp", str(seeded), *args])
        assert result.exit_code == 1 and message in result.stderr, result.output
    result = runner.invoke(cli, ["mcp", str(tmp_path / "missing.db")])
    assert result.exit_code == 1 and "no database at" in result.stderr


def test_a_taken_port_is_a_clear_error(seeded):
    server = HttpServer(str(seeded), "--embedder", "none")
    try:
        port = server.url.rsplit(":", 1)[1].split("/")[0]
        result = subprocess.run([*memfold_command(), "mcp", str(seeded), "--http", "--port", port], text=True,
                                capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
        assert result.returncode == 2  # a usage error, as for memfold serve and view (checked before serving)
        assert result.stderr.strip().splitlines()[-1].startswith(
            f"Error: Invalid value for '--port': port {port} on 127.0.0.1 is already in use")
    finally:
        server.stop()


def test_the_cli_does_not_import_mcp():
    code = ("import sys\nfrom click.testing import CliRunner\nfrom memfold.cli import cli\n"
            "codes = [CliRunner().invoke(cli, args).exit_code for args in (['--help'], ['mcp', '--help'])]\n"
            "print(codes, sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[0, 0] []"
