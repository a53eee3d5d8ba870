"""Extractors (issue 5, point 2): who may state a fact about the user, policy rules, the LLM
extractor against a real local HTTP endpoint, and a contract every extractor keeps."""

from __future__ import annotations

import json

import pytest

from memfold.consolidation.extractors.base import Episode, speaker_of
from memfold.consolidation.extractors.llm import LLMExtractor
from memfold.consolidation.extractors.rules import RulesExtractor
from memfold.memory.llm import LLMSettings

NS = "acme/dana"


def facts(*texts, role=None):
    episodes = [Episode(f"record:{i}", role or speaker_of(t), t, float(i)) for i, t in enumerate(texts, 1)]
    return [p.render() for p in RulesExtractor().extract(episodes)]


@pytest.mark.parametrize("text, expected", [
    ("user confirmed their name is Dana", ["user.name = Dana"]),
    ("user: my name is dana", ["user.name = Dana"]),
    ("user: Hi, I'm Dana Smith.", ["user.name = Dana Smith"]),
    ("user: my account number is acc-77123", ["user.account_id = ACC-77123"]),
    ("user: my order ORD-3300 arrived broken", ["user.order_id = ORD-3300"]),
    ("user said they prefer to be contacted by e-mail", ["user.contact_preference = email"]),
    ("user: please reach me via text", ["user.contact_preference = text"]),
    ("user: I live in Portland, Oregon.", ["user.location = Portland, Oregon"]),
    ("user: my shipping address is 4 Elm St, Springfield; thanks", ["user.address = 4 Elm St, Springfield"]),
    ("user: my birthday is March 3", ["user.birthday = March 3"]),
    ("user: my delivery date is June 12", ["user.delivery_date = June 12"]),
    ("user: I love green tea", ["user.preference.green_tea = likes green tea"]),
    ("user said they hate automated calls", ["user.preference.automated_calls = dislikes automated calls"]),
])
def test_user_statements_about_themselves_become_facts(text, expected):
    assert facts(text) == expected


@pytest.mark.parametrize("text", [
    "assistant said your name is Bob",                      # assistant text is never a user fact
    "assistant: my name is Bob",
    "agent said I live in Oslo",
    "tool said my account number is ACC-1",
    "user asked whether Sam is the account holder",         # asking about another person
    "user asked if their name is Sam on the order",
    "user: is my name Sam on the account?",
    "user: my friend's name is Sam",                         # about someone else
    "user: I'm calling about John",
    "user: I'm Sam's mother",
    "user said their name is not Sam",                       # negated
    "user: I don't live in Oslo anymore",
    "user accepted the $180.00 refund on the $200 order",    # an event, not a standing fact
    "my name is Dana",                                       # nobody is said to speak: unknown role
    "user: I would like to return it",
])
def test_no_fact_about_the_user(text):
    assert facts(text) == []


@pytest.mark.parametrize("texts, expected", [
    (["user asked whether a return after the window is allowed", "tool said after the window a 10% restocking fee applies"],
     "returns after the 30-day window: apply a 10% restocking fee"),
    (["tool said a 5% fee applies after the 14-day return window"], "returns after the 14-day window: apply a 5% fee"),
    (["agent said within 7 days of delivery, exchanges must be requested by chat"],
     "within 7 days of delivery: exchanges must be requested by chat"),
    (["user asked about a refund", "tool said after the window a manager approval is required"],
     "refunds after the window: require a manager approval"),
])
def test_policy_statements_become_rules(texts, expected):
    assert facts(*texts)[-1] == expected


def test_the_window_length_is_a_setting_not_the_seed_string():
    episodes = [Episode("record:1", "user", "user asked whether a return after the window is allowed"),
                Episode("record:2", "tool", "tool said after the window a 10% restocking fee applies")]
    [rule] = RulesExtractor(windows={"return": 60}).extract(episodes)
    assert rule.content == "returns after the 60-day window: apply a 10% restocking fee"
    assert rule.sources == ("record:1", "record:2")


def test_policy_from_the_user_is_not_a_rule():
    assert facts("user said after the window a 10% restocking fee applies") == []


def test_speaker_from_metadata_then_prefix():
    assert speaker_of("my name is Dana", {"role": "customer"}) == "user"
    assert speaker_of("tool said x") == "tool"
    assert speaker_of("Assistant: hello") == "assistant"
    assert speaker_of("hello") == "unknown"


# -- the LLM extractor against a real local endpoint --------------------------------------------
SEED = ["user asked whether a return after the window is allowed", "tool said after the window a 10% restocking fee applies",
        "user accepted the $180.00 refund on the $200 order", "user confirmed their name is Dana"]


def seed(mf):
    return [mf.memory.write(NS, "episodic", t).id for t in SEED]


def llm(server, timeout_seconds: float = 30.0):
    """An extractor on the stand-in server; a generous timeout (a loaded machine may answer slowly),
    short only where a test wants the timeout itself."""
    return LLMExtractor(LLMSettings(base_url=server.base_url, model="test-model", timeout_seconds=timeout_seconds))


def test_llm_extractor_writes_validated_json(mf, llm_server):
    ids = seed(mf)
    llm_server.queue(json.dumps({
        "facts": [{"key": "user.name", "value": "Dana", "sources": [f"record:{ids[3]}"], "importance": 0.9}],
        "rules": [{"rule": "returns after the 30-day window: apply a 10% restocking fee",
                   "key": "policy.returns.after_the_30_day_window", "sources": [f"record:{ids[0]}", f"record:{ids[1]}"]}],
    }))
    run = mf.consolidate(NS, extractor=llm(llm_server))
    assert run.status == "ok" and run.extractor == "llm:test-model"
    assert sorted((r.type, r.key, r.content) for r in mf.memory.list(NS) if r.type != "episodic") == [
        ("procedural", "policy.returns.after_the_30_day_window", "returns after the 30-day window: apply a 10% restocking fee"),
        ("semantic", "user.name", "Dana"),
    ]
    body = llm_server.requests[0]["body"]
    assert body["response_format"] == {"type": "json_object"} and body["model"] == "test-model"
    sent = json.loads(body["messages"][1]["content"])
    assert [e["id"] for e in sent] == [f"record:{i}" for i in ids] and sent[1]["role"] == "tool"
    assert [mf.memory.get(i).status for i in ids] == ["consumed"] * 4


@pytest.mark.parametrize("reply", [
    {"raw": "not json"},
    {"content": "not json either"},
    {"content": json.dumps(["a list"])},
    {"content": json.dumps({"facts": [{"key": "name", "value": "Dana", "sources": ["record:4"]}]})},
    {"content": json.dumps({"facts": [{"key": "user.name", "value": "Dana", "sources": ["record:99"]}]})},
    {"content": json.dumps({"facts": [{"key": "user.name", "value": "Bob", "sources": ["record:2"]}]})},  # tool, not user
    {"content": json.dumps({"rules": [{"rule": "", "sources": ["record:2"]}]})},
    {"content": json.dumps({"facts": [], "extra": 1})},
    {"status": 500},
    {"delay": 2.0},
])
def test_llm_invalid_output_consumes_nothing_and_records_the_failure(mf, llm_server, reply):
    ids = seed(mf)
    llm_server.queue(reply.get("content"), status=reply.get("status", 200), delay=reply.get("delay", 0.0),
                     raw=reply.get("raw"))
    run = mf.consolidate(NS, extractor=llm(llm_server, 1.0 if "delay" in reply else 30.0))
    assert run.status == "failed" and run.errors and run.episodes_consumed == 0
    assert [mf.memory.get(i).status for i in ids] == ["active"] * 4
    assert [r.type for r in mf.memory.list(NS)] == ["episodic"] * 4
    assert len(mf.memory.events(NS, kind="consolidation_failed")) == 1


# -- the contract every extractor keeps (STYLE.md rule 15) ---------------------------------------
@pytest.fixture(params=["rules", "llm"])
def extractor(request, llm_server):
    if request.param == "rules":
        return RulesExtractor()
    llm_server.default_reply = {"content": json.dumps({"facts": [], "rules": []})}
    return llm(llm_server)


def test_contract_proposals_cite_only_the_batch_and_repeat(extractor):
    episodes = [Episode(f"record:{i}", speaker_of(t), t, float(i)) for i, t in enumerate(SEED, 1)]
    first = extractor.extract(episodes)
    second = extractor.extract(episodes)
    assert [p.to_dict() for p in first] == [p.to_dict() for p in second]
    for p in first:
        assert p.type in ("semantic", "procedural") and p.sources
        assert set(p.sources) <= {e.source for e in episodes}
    assert extractor.extract([]) == []
    assert isinstance(extractor.id, str) and extractor.id
