"""Round 10 QA (r10qa): defects found by trying to break what round 10 added on main.

Real databases and memfold's own code paths; deterministic parts (logical clock, word counter)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from memfold import LogicalClock, MemFold
from memfold.integrations.http import create_app
from memfold.window.constraints import MAX_RECORD_CHARS


def _open(tmp_path):
    return MemFold(tmp_path / "m.db", clock=LogicalClock(), token_counter="words", embedder=None,
                   secrets="off", preload_embedder=False)


def test_http_create_of_an_existing_conversation_with_other_labels_is_refused(tmp_path):
    """``POST /v1/conversations`` for an existing labelled conversation with other labels answered
    200 (the conversation as it stands), while ``mf.conversation(id, labels=[...])`` refuses other
    labels with ``InvalidInput``: a client asking for ``support`` believed it had a conversation its
    support agents could read. Now 422 naming both label sets, nothing changed."""
    mf = _open(tmp_path)
    with TestClient(create_app(mf)) as client:
        made = client.post("/v1/conversations", json={"id": "case-7", "namespace": "acme", "labels": ["legal"]})
        assert made.status_code == 201 and made.json()["labels"] == ["legal"]
        other = client.post("/v1/conversations", json={"id": "case-7", "namespace": "acme", "labels": ["support"]})
        assert other.status_code == 422, other.json()
        assert other.json()["type"] == "InvalidInput" and "support" in other.json()["error"]
        same = client.post("/v1/conversations", json={"id": "case-7", "labels": ["legal"]})
        assert same.status_code == 200 and same.json()["labels"] == ["legal"]
        unsaid = client.post("/v1/conversations", json={"id": "case-7"})  # labels not given: the conversation as it is
        assert unsaid.status_code == 200 and unsaid.json()["labels"] == ["legal"]
        client.post("/v1/conversations/case-7/turns", json={"messages": [{"role": "user", "content": "48,000"}]})
    assert [t.labels for t in mf.conversation("case-7", create=False).history()] == [("legal",)]
    mf.close()


def _plan_change(steps: int) -> str:
    pad = " ".join(f"Step {i}: we check table {i} and note the row count in the log." for i in range(steps))
    return "Scratch that, change of plans. Plan: migrate the billing database on Thursday instead. " + pad


def test_a_plan_change_just_over_the_record_bound_still_retires_the_old_plan(tmp_path):
    mf = _open(tmp_path)
    short, long = _plan_change(2), _plan_change(16)
    assert len(short) < MAX_RECORD_CHARS < len(long) < MAX_RECORD_CHARS + 100  # a real detailed message
    for cid, msg in (("short", short), ("long", long)):
        conv = mf.conversation(cid, namespace=f"ns-{cid}")
        conv.append({"role": "user", "content": "Plan: migrate the billing database on Monday, then update the invoices."})
        conv.append({"role": "user", "content": msg})
        active = [r.text for r in mf.protected.for_conversation(conv.id) if r.state == "active"]
        assert not any("Monday" in t for t in active), (cid, active)
    mf.close()


def test_an_instruction_repeated_in_one_message_makes_one_record(tmp_path):
    mf = _open(tmp_path)
    conv = mf.conversation("c", namespace="n")
    conv.append({"role": "user", "content": "Always be brief. Always be brief."})
    assert [r.text for r in mf.protected.for_conversation(conv.id) if r.state == "active"] == ["Always be brief."]
    mf.close()
