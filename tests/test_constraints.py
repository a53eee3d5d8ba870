"""Constraint-aware extraction on real side constraints, CompactBench templates and LoCoMo chatter (issue 8 point 2)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

import memfold
from memfold import LLMConstraintExtractor, RuleConstraintExtractor
from memfold.memory.llm import ChatClient, LLMSettings
from memfold.window.constraints import resolve_due

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SIDE = DATA / "compint_side_constraints" / "side_constraints.json"
LOCOMO = DATA / "locomo" / "locomo_dev.json"
rules = RuleConstraintExtractor()


def side_constraints():
    return json.loads(SIDE.read_text())


@pytest.mark.parametrize("framing", ["none", "direct_prefix", "strict_prefix", "strict_and_direct_prefix", "comma"])
def test_every_real_side_constraint_is_recognised(framing):
    data = side_constraints()
    assert len(data["side_constraints"]) == 10
    for sc in data["side_constraints"]:
        text = sc["sc"]
        if framing == "comma":
            text = "For the rest of this session, " + text[0].lower() + text[1:]
        elif framing != "none":
            text = data["framing"][framing] + text[0].lower() + text[1:]
        proposals = rules.extract(text).proposals
        assert proposals, f"side constraint {sc['id']} ({sc['type']}) not recognised with framing {framing}: {text}"
        # the proposal is verbatim and holds the whole constraint
        assert any(text.endswith(p.text) or p.text.endswith(sc["sc"][1:]) for p in proposals)
        assert all(p.text in text for p in proposals)


@pytest.mark.parametrize(
    "text, kind, rule",
    [
        ("Do not restart the database.", "constraint", "never"),
        ("Don't email the customer directly.", "constraint", "never"),
        ("Never share the API key.", "constraint", "never"),
        ("Keep the old invoices until I confirm.", "prerequisite", "until_confirm"),
        ("Always answer in French.", "constraint", "always"),
        ("Only use the staging cluster.", "constraint", "only"),
        ("Before you deploy, run the full test suite.", "prerequisite", "before_you"),
        ("Make sure the refund goes to the original card.", "obligation", "make_sure"),
        ("From now on, reply in bullet points.", "constraint", "scope"),
        ("For the rest of this session, cite sources.", "constraint", "scope"),
        ("Please send me the report by Friday.", "deadline", "deadline"),
        ("You need to finish the migration before 5 pm.", "deadline", "deadline"),
        ("You are allowed to issue refunds up to $50.", "permission", "permission"),
        ("I approve the replacement order.", "approval", "approval"),
    ],
)
def test_issue_phrases(text, kind, rule):
    proposals = rules.extract(text).proposals
    assert [(p.kind, p.rule, p.text) for p in proposals] == [(kind, rule, text)]


def test_scope_marker_sentence_joins_the_next_one():
    text = "Thanks! For the rest of this session. Never include my name in replies. Cool?"
    [p] = rules.extract(text).proposals
    assert p.text == "For the rest of this session. Never include my name in replies."


def test_locomo_small_talk_false_positive_rate():
    """Measured: 2 of 3,435 LoCoMo turns (0.06%) yield a protected record (friendly advice such as
    "Make sure yours stands out."). The bound leaves no room for a regression to the naive rules,
    which flagged 92 turns (2.7%)."""
    samples = json.loads(LOCOMO.read_text())
    turns = [t["text"] for s in samples for k, v in s["conversation"].items()
             if k.startswith("session_") and isinstance(v, list) for t in v]
    flagged = [t for t in turns if rules.extract(t).proposals]
    rate = len(flagged) / len(turns)
    print(f"LoCoMo false positives: {len(flagged)}/{len(turns)} turns = {rate:.4%}")
    assert len(turns) > 3000
    assert rate < 0.002, flagged


def test_appending_user_turns_extracts_with_provenance(mf):
    conv = mf.conversation("c", namespace="n")
    ids = conv.append_many([
        {"role": "user", "content": "Hi! Never delete the old logs. Thanks."},
        {"role": "assistant", "content": "Never fear, I will not."},  # assistants do not set constraints
        {"role": "user", "content": "Never cc Bob.", "metadata": {"quoted_from": "other-ticket"}},
    ])
    [rec] = mf.protected.active_for("c")
    assert rec.text == "Never delete the old logs." and rec.provenance == (f"turn:{ids[0]}",)
    assert rec.source == "rules" and rec.metadata["rule"] == "never"


def test_later_statement_revokes_matching_constraint_only(mf):
    conv = mf.conversation("c", namespace="n")
    for text in ["Don't delete the backup files until I confirm.", "Never email the client directly.",
                 "What's the weather like?", "OK, you can delete them now."]:
        conv.append({"role": "user", "content": text})
    states = {r.text: r.state for r in mf.protected.list(state=None)}
    # the record waited for a confirmation and got it: released as satisfied (issue 20, round 4;
    # it was "revoked" before), and the unrelated record stays
    assert states == {"Don't delete the backup files until I confirm.": "satisfied",
                      "Never email the client directly.": "active"}


def test_confirmation_satisfies_waiting_records(mf):
    conv = mf.conversation("c", namespace="n")
    for text in ["Draft the email but wait for my go-ahead.", "Never use my nickname.", "Confirmed, send it."]:
        conv.append({"role": "user", "content": text})
    states = {r.text: r.state for r in mf.protected.list(state=None)}
    assert states == {"Draft the email but wait for my go-ahead.": "satisfied", "Never use my nickname.": "active"}


def test_vague_withdrawal_revokes_nothing(mf):
    conv = mf.conversation("c", namespace="n")
    for text in ["Never reboot the router.", "You can relax now."]:
        conv.append({"role": "user", "content": text})
    assert [r.state for r in mf.protected.list(state=None)] == ["active"]


def test_decision_override_replaces_the_earlier_decision(mf):
    conv = mf.conversation("c", namespace="n")
    turns = [
        ("user", "For Tara's rollout, I think we should assume the server timezone is UTC."),
        ("assistant", "That works."),
        ("user", "Actually — wait. Let me revise. Let's commit directly to the main branch instead."),
        ("assistant", "OK, switching to option B."),
        ("user", "You know what, final answer: let's use regex to parse HTML. Forget A and B — go with C."),
    ]
    for role, text in turns:
        conv.append({"role": role, "content": text})
    active = mf.protected.active_for("c")
    assert [r.text for r in active] == [turns[4][1]]
    content = mf.protected.render("c").messages[0]["content"]
    for _, text in (turns[0], turns[2]):
        assert f"no longer in force: {text}" in content
    assert [r.state for r in mf.protected.list(state=None)] == ["superseded", "superseded", "active"]


def test_deadlines_resolve_on_the_system_clock_only():
    now = datetime(2026, 3, 4, 12, 0, tzinfo=timezone.utc).timestamp()  # a Wednesday
    system = memfold.SystemClock()
    assert resolve_due("before 5 pm", now, system) == datetime(2026, 3, 4, 17, 0, tzinfo=timezone.utc).timestamp()
    assert resolve_due("by Friday", now, system) == datetime(2026, 3, 6, 23, 59, 59, tzinfo=timezone.utc).timestamp()
    assert resolve_due("by tomorrow", now, system) == datetime(2026, 3, 5, 23, 59, 59, tzinfo=timezone.utc).timestamp()
    assert resolve_due("before 9 am", now, system) == datetime(2026, 3, 5, 9, 0, tzinfo=timezone.utc).timestamp()
    assert resolve_due("by Friday", 3.0, memfold.LogicalClock()) is None
    [p] = rules.extract("Please send the invoice by Friday.", now=now, clock=system).proposals
    assert p.due_at == datetime(2026, 3, 6, 23, 59, 59, tzinfo=timezone.utc).timestamp()


def test_llm_extractor_adds_only_verbatim_sentences(llm_server):
    client = ChatClient(LLMSettings(base_url=llm_server.base_url, model="m"))
    extractor = LLMConstraintExtractor(client)
    text = "We're on a budget this month. Keep every answer under 100 words."
    llm_server.queue(json.dumps({"constraints": [
        {"kind": "constraint", "text": "We're on a budget this month."},
        {"kind": "constraint", "text": "Answers must be short."},  # not verbatim: dropped
        {"kind": "wish", "text": "Keep every answer under 100 words."},  # unknown kind: dropped
    ], "revokes": []}))
    out = extractor.extract(text)
    assert [(p.text, p.rule) for p in out.proposals] == [
        ("Keep every answer under 100 words.", "every_reply"), ("We're on a budget this month.", "llm")]
    body = llm_server.requests[0]["body"]
    assert body["response_format"] == {"type": "json_object"} and body["messages"][1]["content"] == text


def test_llm_failure_falls_back_to_rules_and_is_logged(llm_server, db_path, clock):
    client = ChatClient(LLMSettings(base_url=llm_server.base_url, model="m", timeout_seconds=5))
    with memfold.MemFold(db_path, clock=clock, token_counter="words", embedder=None,
                         constraint_extractor=LLMConstraintExtractor(client)) as m:
        conv = m.conversation("c", namespace="n")
        llm_server.queue(status=500)
        conv.append({"role": "user", "content": "Never ping me at night."})
        llm_server.queue(raw="not json")
        conv.append({"role": "user", "content": "Always use metric units."})
        assert [r.text for r in m.protected.active_for("c")] == ["Never ping me at night.", "Always use metric units."]
        failures = m.memory.events(kind="extractor_failed")
        assert len(failures) == 2 and "HTTP 500" in failures[0].cause and "not a chat completion" in failures[1].cause
