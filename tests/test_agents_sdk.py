"""The OpenAI Agents SDK session (issue 16, point 4), tested with the SDK's own ``Runner`` and a
scripted fake ``Model`` (no network, tracing off): several turns with a tool call and its result,
lossless items, pop and clear without deleting, and memfold's compaction through the SDK's
compaction-aware runner.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("agents")

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.memory import Session, SessionSettings, is_openai_responses_compaction_aware_session
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from memfold import InvalidInput, LogicalClock, MemFold, Reader, WindowSettings
from memfold.integrations.agents import ITEM_KEY, MemfoldSession, items_to_turns, turns_to_items

set_tracing_disabled(True)


class ScriptedModel(Model):
    """A fake model: each call pops the next step, a list of output items or a function of the
    input that returns one; every input is recorded."""

    def __init__(self, steps, *, input_tokens: int = 0) -> None:
        self.steps = list(steps)
        self.inputs: list = []
        self.input_tokens = input_tokens

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs,
                           tracing, *, previous_response_id, conversation_id, prompt):
        self.inputs.append(json.loads(json.dumps(input, default=str)))
        step = self.steps.pop(0)
        output = step(self.inputs[-1]) if callable(step) else step
        usage = Usage(requests=1, input_tokens=self.input_tokens, output_tokens=1,
                      total_tokens=self.input_tokens + 1)
        return ModelResponse(output=output, usage=usage, response_id=f"resp-{len(self.inputs)}")

    async def stream_response(self, *args, **kwargs):  # pragma: no cover - not used
        raise NotImplementedError
        yield


def say(n: int, text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(id=f"msg_{n}", type="message", role="assistant", status="completed",
                                 content=[ResponseOutputText(type="output_text", text=text, annotations=[])])


def call(n: int, name: str, arguments: dict) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(id=f"fc_{n}", call_id=f"call_{n}", type="function_call", name=name,
                                    arguments=json.dumps(arguments))


@function_tool
def order_status(order_id: str) -> str:
    """Look up where an order is."""
    return f"{order_id}: shipped May 3 via DHL, tracking 99-123"


def run(agent, text, session):
    return asyncio.run(Runner.run(agent, text, session=session))


@pytest.fixture
def amf(tmp_path):
    instance = MemFold(tmp_path / "agents.db", clock=LogicalClock(), token_counter="words", embedder=None)
    yield instance
    instance.close()


# -- items <-> turns ---------------------------------------------------------------------------------
ITEMS = [
    {"content": "Where is my order ORD-3300?", "role": "user"},
    {"role": "user", "content": [{"type": "input_text", "text": "see the photo"},
                                 {"type": "input_image", "image_url": "https://example.com/x.png", "detail": "auto"}]},
    {"role": "developer", "content": "Answer in French."},
    {"role": "system", "content": "You are a support agent."},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "typed message"}]},
    {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "Let me check.", "annotations": [], "logprobs": []}]},
    {"arguments": "{\"order_id\": \"ORD-3300\"}", "call_id": "call_1", "name": "order_status",
     "type": "function_call", "id": "fc_1", "status": "completed"},
    {"type": "function_call_output", "call_id": "call_1", "output": "ORD-3300: shipped May 3"},
    {"type": "function_call", "call_id": "call_2", "name": "noop", "arguments": ""},
    {"type": "function_call_output", "call_id": "call_2", "output": ""},
    {"type": "function_call_output", "call_id": "call_3", "output": [{"type": "input_text", "text": "list output"}]},
    {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "check the order first"}],
     "encrypted_content": "gAAAA..."},
    {"id": "rs_2", "type": "reasoning", "summary": []},
    {"id": "ws_1", "type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "DHL"}},
    {"id": "cu_1", "type": "computer_call", "call_id": "cc_1", "status": "completed", "pending_safety_checks": [],
     "action": {"type": "click", "x": 1, "y": 2, "button": "left"}},
    {"type": "computer_call_output", "call_id": "cc_1", "output": {"type": "computer_screenshot", "image_url": "data:,"}},
    {"content": "", "role": "user"},
    {"role": "assistant", "content": "plain chat-shaped answer"},
]


def test_items_round_trip_losslessly(amf):
    conv = amf.conversation("items")
    conv.append_many(items_to_turns(ITEMS))
    assert turns_to_items(conv.history()) == ITEMS
    # chat-shaped items need no copy of themselves; the others keep one
    kept = [ITEM_KEY in t.metadata for t in conv.history()]
    assert kept[0] is False and kept[7] is False and kept[-1] is False
    assert kept[5] is True and kept[11] is True
    # the archive holds real chat turns: roles, tool calls and their results, searchable text
    by_role = [(t.role, t.content, t.tool_call_id) for t in conv.history()]
    assert by_role[2] == ("system", "Answer in French.", None)
    assert by_role[6][0] == "assistant" and conv.history()[6].tool_calls[0]["function"]["name"] == "order_status"
    assert by_role[7] == ("tool", "ORD-3300: shipped May 3", "call_1")
    assert [h.ref for h in conv.search("ORD-3300", limit=5)]
    assert amf.archive.verify() == []


def test_chat_turns_from_elsewhere_become_items(amf):
    conv = amf.conversation("ingested")
    conv.append_many([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "checking two orders", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "order_status", "arguments": "{\"order_id\": \"1\"}"}},
            {"id": "b", "type": "function", "function": {"name": "order_status", "arguments": "{\"order_id\": \"2\"}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "1: shipped"},
        {"role": "tool", "tool_call_id": "b", "content": "2: lost"},
    ])
    items = turns_to_items(conv.history())
    assert items == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "checking two orders"},
        {"type": "function_call", "call_id": "a", "name": "order_status", "arguments": "{\"order_id\": \"1\"}"},
        {"type": "function_call", "call_id": "b", "name": "order_status", "arguments": "{\"order_id\": \"2\"}"},
        {"type": "function_call_output", "call_id": "a", "output": "1: shipped"},
        {"type": "function_call_output", "call_id": "b", "output": "2: lost"},
    ]
    # and back: the same chat messages
    again = amf.conversation("again")
    again.append_many(items_to_turns(items))
    assert turns_to_items(again.history()) == items


def test_bad_items_write_nothing(amf):
    session = MemfoldSession("bad", amf)
    for bad in [[{"role": "user", "content": "ok"}, "not a dict"],
                [{"role": "user", "content": "ok"}, {"type": "function_call", "name": "f"}],
                [{"role": "robot", "content": "beep"}],
                [{"type": 7}],
                [{"role": "user", "content": "ok"}, {"role": "user", "content": {1, 2}}]]:
        with pytest.raises(InvalidInput, match="item"):
            asyncio.run(session.add_items(bad))
    assert asyncio.run(session.get_items()) == []
    with pytest.raises(InvalidInput, match="view"):
        MemfoldSession("x", amf, view="everything")
    with pytest.raises(InvalidInput, match="unknown window setting"):
        MemfoldSession("x", amf, hot_turn=3)


# -- Runner.run over several turns -------------------------------------------------------------------------
def test_runner_several_turns_with_a_tool_call(amf):
    model = ScriptedModel([
        [call(1, "order_status", {"order_id": "ORD-3300"})],
        [say(2, "ORD-3300 shipped May 3 via DHL.")],
        [say(3, "The tracking number is 99-123.")],
        [say(4, "You're welcome, Dana.")],
    ])
    agent = Agent(name="support", instructions="Help with orders.", model=model, tools=[order_status])
    session = MemfoldSession("ticket-42", amf, namespace="acme/dana")
    assert isinstance(session, Session) and is_openai_responses_compaction_aware_session(session)

    assert run(agent, "Where is ORD-3300?", session).final_output == "ORD-3300 shipped May 3 via DHL."
    assert run(agent, "And the tracking number?", session).final_output == "The tracking number is 99-123."
    assert run(agent, "Thanks!", session).final_output == "You're welcome, Dana."

    items = asyncio.run(session.get_items())
    assert [i.get("type", i.get("role")) for i in items] == [
        "user", "function_call", "function_call_output", "message", "user", "message", "user", "message"]
    # the model of the third run got the first two runs' items back verbatim, then the new input
    assert model.inputs[-1] == items[:-1]
    assert items[1] == {"arguments": "{\"order_id\": \"ORD-3300\"}", "call_id": "call_1", "id": "fc_1",
                        "name": "order_status", "type": "function_call"}
    assert items[2] == {"type": "function_call_output", "call_id": "call_1",
                        "output": "ORD-3300: shipped May 3 via DHL, tracking 99-123"}
    # in memfold they are chat turns of one conversation
    conv = amf.conversation("ticket-42")
    assert [t.role for t in conv.history()] == ["user", "assistant", "tool", "assistant", "user", "assistant",
                                               "user", "assistant"]
    assert conv.namespace == "acme/dana"
    assert asyncio.run(session.get_items(limit=2)) == items[-2:]
    # a second session object over the same file sees the same items
    assert asyncio.run(MemfoldSession("ticket-42", amf).get_items()) == items


def test_session_settings_limit_reaches_the_model(amf):
    model = ScriptedModel([[say(1, "one")], [say(2, "two")], [say(3, "three")]])
    agent = Agent(name="a", instructions="", model=model)
    session = MemfoldSession("limited", amf, session_settings=SessionSettings(limit=2))
    for text in ["first", "second", "third"]:
        run(agent, text, session)
    assert [i.get("content") if i.get("role") == "user" else i["id"] for i in model.inputs[-1]] == [
        "second", "msg_2", "third"]


def test_memories_and_protected_records_reach_the_model(amf):
    amf.remember("acme/dana", "semantic", "Dana prefers email contact", key="user.contact_preference")
    model = ScriptedModel([[say(1, "ok")], [say(2, "ok")]])
    agent = Agent(name="a", instructions="", model=model)
    session = MemfoldSession("t-mem", amf, namespace="acme/dana", budget=2000)
    run(agent, "From now on, never call me before 9am.", session)
    run(agent, "hello", session)
    system = [i["content"] for i in model.inputs[-1] if i.get("role") == "system"]
    assert any("Dana prefers email contact" in s for s in system)
    assert any("never call me before 9am" in s for s in system)  # the protected channel, verbatim
    # the history view is the session's own items only
    history = asyncio.run(MemfoldSession("t-mem", amf, view="history").get_items())
    assert [i.get("role") for i in history] == ["user", "assistant", "user", "assistant"]


def test_a_reader_keeps_secrets_from_the_model(amf):
    model = ScriptedModel([[say(1, "Thanks, verified.")], [say(2, "Done.")]])
    agent = Agent(name="a", instructions="", model=model)
    session = MemfoldSession("bank", amf, namespace="bank/tyler", reader=Reader.of([]))
    run(agent, "my PIN is 4471", session)
    run(agent, "now move $20", session)
    assert "4471" not in json.dumps(model.inputs[-1])
    owner = asyncio.run(MemfoldSession("bank", amf, view="history").get_items())
    assert owner[0] == {"content": "my PIN is 4471", "role": "user"}  # archived, verbatim, for the owner


# -- pop and clear ------------------------------------------------------------------------------------------
def test_pop_item_hides_the_item_and_keeps_its_bytes(amf):
    session = MemfoldSession("pop", amf, view="history")
    items = [{"role": "user", "content": f"message {n}"} for n in range(4)]
    asyncio.run(session.add_items(items))
    assert asyncio.run(session.pop_item()) == items[3]
    assert asyncio.run(session.get_items()) == items[:3]
    assert session.conversation().id == "pop~2"
    assert asyncio.run(session.pop_item()) == items[2]
    assert asyncio.run(session.get_items()) == items[:2]
    # repeated pops fork the conversation that holds the item: no chain of forks
    head = session.conversation()
    assert head.id == "pop~3" and head.parent_id == "pop"
    # nothing was deleted: the first conversation still holds all four, verbatim
    assert turns_to_items(amf.conversation("pop").history()) == items
    assert amf.archive.verify() == []
    # the session goes on from the head; the context and search of the head do not see popped items
    asyncio.run(session.add_items([{"role": "user", "content": "message 2 again"}]))
    assert asyncio.run(session.get_items())[-1] == {"role": "user", "content": "message 2 again"}
    popped = {t.id for t in amf.conversation("pop").history()[2:]}
    assert {h.id for h in head.search("message 3") if h.kind == "turn"}.isdisjoint(popped)
    assert "message 3" not in json.dumps(MemfoldSession("pop", amf).items())
    # a new session object finds the head; popping an empty session gives None
    again = MemfoldSession("pop", amf, view="history")
    assert again.items() == items[:2] + [{"role": "user", "content": "message 2 again"}]
    for _ in range(3):
        assert again.pop() is not None
    assert again.pop() is None and again.items() == []


def test_pop_item_of_a_turn_standing_for_several_items(amf):
    conv = amf.conversation("multi")
    conv.append({"role": "assistant", "content": "two calls", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        {"id": "b", "type": "function", "function": {"name": "g", "arguments": "{}"}}]})
    session = MemfoldSession("multi", amf, view="history")
    assert session.pop() == {"type": "function_call", "call_id": "b", "name": "g", "arguments": "{}"}
    assert session.items() == [{"role": "assistant", "content": "two calls"},
                               {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"}]


def test_clear_session_starts_a_new_session_in_the_family(amf):
    amf.remember("acme/dana", "semantic", "Dana prefers email contact", key="user.contact_preference")
    session = MemfoldSession("clear", amf, namespace="acme/dana", budget=2000)
    asyncio.run(session.add_items([{"role": "user", "content": "My order ORD-3300 arrived broken"}]))
    asyncio.run(session.clear_session())
    head = session.conversation()
    assert head.id == "clear~2" and head.family_id == "clear" and head.namespace == "acme/dana"
    assert head.history() == []
    assert MemfoldSession("clear", amf, view="history").items() == []
    # the new session's window still carries the namespace's memories
    assert asyncio.run(session.get_items()) == [
        {"role": "system", "content": "Memories:\n- [semantic user.contact_preference] Dana prefers email contact"}]
    # the old session stays archived and searchable
    assert [t.content for t in amf.conversation("clear").history()] == ["My order ORD-3300 arrived broken"]
    assert [h.kind for h in amf.search("ORD-3300", kinds=("turn",))] == ["turn"]
    asyncio.run(session.add_items([{"role": "user", "content": "hello again"}]))
    assert MemfoldSession("clear", amf, view="history").items() == [{"role": "user", "content": "hello again"}]


# -- compaction through the compaction-aware runner ------------------------------------------------------
def small_window_memfold(path) -> MemFold:
    return MemFold(path, clock=LogicalClock(), token_counter="words", embedder=None,
                   window=WindowSettings(budget_tokens=90, output_reserve_tokens=0, hot_turns=2, rollup_fanin=3,
                                         leaf_chunk_tokens=30, card_target_tokens=10))


def test_runner_calls_run_compaction_and_memfold_folds(tmp_path):
    mf = small_window_memfold(tmp_path / "compact.db")
    model = ScriptedModel([[say(n, f"Order ORD-{n} shipped on May {n} via DHL, tracking 99-{n}.")] for n in range(8)],
                          input_tokens=7)
    agent = Agent(name="a", instructions="", model=model)
    session = MemfoldSession("folding", mf)
    calls = []
    original = session.compact

    def spy(args=None, wrapper=None):
        calls.append(dict(args or {}))
        return original(args, wrapper)

    session.compact = spy
    for n in range(8):
        run(agent, f"Where is my order ORD-{n}, please?", session)
    # the SDK's runner called run_compaction after every saved turn, with the response id
    assert len(calls) == 8 and calls[0]["response_id"] == "resp-1" and calls[-1]["force"] is False
    conv = session.conversation()
    assert session.last_compaction is not None and session.last_compaction.folded
    window = asyncio.run(session.get_items())
    history = asyncio.run(MemfoldSession("folding", mf, view="history").get_items())
    assert len(history) == 16 and len(window) < len(history)
    assert window[0]["content"].startswith("Summaries [cN] are maps")
    assert any(re.match(r"\[c\d+\]", i.get("content", "")) for i in window if i.get("role") == "system")
    tail = [i for i in window if i.get("role") != "system"]
    assert tail == history[-len(tail):]  # the hot tail is the original items, verbatim
    assert conv.window_status()["tokens"] <= 90
    # the model of the last run got the folded window, not the whole history
    assert len(model.inputs[-1]) < 15
    mf.close()


def test_run_compaction_force_and_reported_usage(tmp_path):
    mf = small_window_memfold(tmp_path / "force.db")
    session = MemfoldSession("force", mf)
    session.append([{"role": "user", "content": f"turn {n} about order ORD-{n} and its refund"} for n in range(6)])
    assert session.compact() is None  # not due yet: nothing folded
    report = asyncio.run(session.run_compaction({"force": True}))
    assert report is None and session.last_compaction is not None and session.last_compaction.folded

    # the runner hands run_compaction the run's usage: the last request's prompt tokens become pressure
    model = ScriptedModel([[say(1, "ok")]], input_tokens=40)
    other = MemfoldSession("usage", mf)
    run(Agent(name="a", instructions="", model=model), "short", other)
    assert other.conversation().reported_usage() == 40
    assert other.conversation().window_status()["pressure"] == 40
    mf.close()


def test_recall_tools_open_a_card(tmp_path):
    mf = small_window_memfold(tmp_path / "recall.db")
    session = MemfoldSession("recall", mf)
    session.append([{"role": "user", "content": f"Order ORD-{n} costs ${n}00 and ships from dock {n}"}
                    for n in range(8)])
    session.compact({"force": True})
    window = session.items()
    card = next(re.match(r"\[(c\d+)\]", i["content"]).group(1) for i in window
                if i.get("role") == "system" and re.match(r"\[c\d+\]", i["content"]))

    def open_card(model_input):
        return [call(1, "expand", {"id": card})]

    model = ScriptedModel([open_card, [say(2, "Dock 0.")]])
    agent = Agent(name="a", instructions="", model=model, tools=session.recall_tools())
    result = run(agent, "Which dock ships ORD-0?", session)
    assert result.final_output == "Dock 0."
    outputs = [i for i in model.inputs[-1] if i.get("type") == "function_call_output"]
    assert outputs and "ORD-0" in outputs[-1]["output"]
    assert {t.name for t in session.recall_tools()} == {"search", "describe", "expand"}
    mf.close()


def test_memfold_help_does_not_import_the_agents_sdk():
    code = ("import sys\nfrom memfold.cli import cli\n"
            "try:\n    cli(['--help'], standalone_mode=False)\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('agents', 'openai') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"
