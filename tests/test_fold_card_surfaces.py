"""The fold card (issue 14, point 1) is offered only where the model can answer it: memfold's
own surfaces that do not offer ``fold_unit`` (the HTTP API, the MCP server, the LangGraph hook
and the Agents SDK session) compile without it, while ``conv.context()`` of a host that offers
``tool_definitions(folds=True)`` carries it."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient

from memfold import LogicalClock, MemFold, WindowSettings
from memfold.integrations.http import create_app
from memfold.window.folds import NO_FOLD_CARD

WINDOW = WindowSettings(budget_tokens=200_000, output_reserve_tokens=1_000, fold_card_tool_calls=3)


def busy(conv, calls: int = 4) -> None:
    """``calls`` tool calls with their results, then a new user turn (the unit in progress)."""
    conv.append({"role": "user", "content": "please fix the failing test in src/app/cache.py"})
    for i in range(calls):
        conv.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": f"k{i}", "type": "function",
             "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/app/m{i}.py"})}}]})
        conv.append({"role": "tool", "tool_call_id": f"k{i}", "content": f"def f{i}(): return {i}"})
    conv.append({"role": "assistant", "content": "Fixed the cache test."})
    conv.append({"role": "user", "content": "now add a retry option"})


def test_the_library_context_carries_the_card_and_the_http_api_does_not(db_path):
    with MemFold(db_path, clock=LogicalClock(), token_counter="words", embedder=None, window=WINDOW) as mf:
        conv = mf.conversation("c", namespace="default")
        busy(conv)
        assert conv.context().fold_card is not None  # the thresholds were reached
        assert conv.context(**NO_FOLD_CARD).fold_card is None
        with TestClient(create_app(mf)) as client:
            got = client.get("/v1/conversations/c/context")
        assert got.status_code == 200
        body = got.json()
        texts = [m["content"] for m in body["messages"]]
        assert body.get("fold_card") is None and not any("fold_unit" in (t or "") for t in texts)
        assert texts[-1] == "now add a retry option"


def test_the_mcp_server_and_the_agents_session_compile_without_the_card(db_path):
    from memfold.integrations.agents import MemfoldSession
    from memfold.integrations.mcp import MemfoldTools

    with MemFold(db_path, clock=LogicalClock(), token_counter="words", embedder=None, window=WINDOW) as mf:
        conv = mf.conversation("c", namespace="default")
        busy(conv)
        assert conv.context().fold_card is not None
        result = MemfoldTools(mf, reader=None)._tool_context({"conversation": "c"})
        assert result.data.get("fold_card") is None
        assert not any("fold_unit" in (m["content"] or "") for m in result.data["messages"])
        session = MemfoldSession("c", mf)
        items = session._context_items(conv)
        assert not any("fold_unit" in json.dumps(item) for item in items)
