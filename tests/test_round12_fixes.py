"""Defects a new-user QA pass reported in round 11 and round 12 fixed, each with what it broke."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from memfold import InvalidInput, LogicalClock, MemFold, PermissionDenied
from memfold.integrations.http import create_app, parse_keys
from memfold.integrations.mcp import MemfoldTools
from memfold.window.labels import Reader


def _open(tmp_path, name="r12.db"):
    return MemFold(tmp_path / name, clock=LogicalClock(), token_counter="words", embedder=None)


@pytest.mark.parametrize("content, message", [
    ([], "empty list of content parts"),
    ([{"type": "text", "text": ""}], "empty or whitespace only"),
    ([{"type": "text", "text": "  "}, {"type": "input_text", "text": ""}], "empty or whitespace only"),
])
def test_content_parts_holding_nothing_are_refused_like_empty_text(tmp_path, content, message):
    """``content: []`` used to be archived as an empty user turn (``content: ""`` is refused)."""
    mf = _open(tmp_path)
    conv = mf.conversation("c", namespace="n")
    with pytest.raises(InvalidInput, match=message):
        conv.append({"role": "user", "content": content})
    assert conv.history() == []
    image = conv.append({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]})
    tool = conv.append({"role": "tool", "tool_call_id": "call_1", "content": []})  # a tool may answer with nothing
    assert [t.id for t in conv.history()] == [image, tool]
    mf.close()


def _labelled(mf):
    conv = mf.conversation("case-7", namespace="acme", labels=["legal"])
    conv.append({"role": "user", "content": "Clause 7 is void"})
    return conv


def test_an_mcp_reader_may_not_append_to_a_conversation_it_cannot_read(tmp_path):
    """The append answered with the conversation's window figures and mixed the reader's turn
    into a conversation whose words it may not see."""
    mf = _open(tmp_path)
    _labelled(mf)
    outsider = MemfoldTools(mf, reader=Reader.of([], "support-bot"), namespace="acme")
    with pytest.raises(PermissionDenied, match="may not write to conversation 'case-7'"):
        outsider.call("append", {"conversation": "case-7", "role": "user", "content": "what does clause 7 say?"})
    insider = MemfoldTools(mf, reader=Reader.of(["legal"], "counsel"), namespace="acme")
    insider.call("append", {"conversation": "case-7", "role": "user", "content": "and clause 8"})
    assert [t.content for t in mf.conversation("case-7", create=False).history()] == ["Clause 7 is void", "and clause 8"]
    mf.close()


def test_an_http_key_may_not_append_to_a_conversation_its_reader_cannot_read(tmp_path):
    mf = _open(tmp_path)
    _labelled(mf)
    keys = parse_keys({"keys": [
        {"name": "support", "key": "support-key-0123456789abcdef", "namespaces": ["acme"]},
        {"name": "counsel", "key": "counsel-key-0123456789abcdef", "namespaces": ["acme"], "labels": ["legal"]},
    ]}, "test keys")
    with TestClient(create_app(mf, keys=keys)) as client:
        url = "/v1/conversations/case-7/turns"
        body = {"messages": [{"role": "user", "content": "what does clause 7 say?"}]}
        refused = client.post(url, json=body, headers={"Authorization": "Bearer support-key-0123456789abcdef"})
        assert refused.status_code == 403 and "may not write to conversation 'case-7'" in refused.json()["error"]
        ok = client.post(url, json={"messages": [{"role": "user", "content": "and clause 8"}]},
                         headers={"Authorization": "Bearer counsel-key-0123456789abcdef"})
        assert ok.status_code == 201
    assert [t.content for t in mf.conversation("case-7", create=False).history()] == ["Clause 7 is void", "and clause 8"]
    mf.close()
