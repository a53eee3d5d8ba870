"""Summarizers: one contract for every implementation, and failures that never lose history (issue 4, point 4)."""

from __future__ import annotations

import pytest

import memfold
from memfold import ExtractiveSummarizer, LLMSummarizer, WindowSettings
from memfold.memory.llm import LLMSettings
from memfold.window.catalog import is_contiguous_cover
from memfold.window.summarizers.base import FoldItem

TURNS = [
    ("user", "Hi, I'm Dana. My order ORD-3300 arrived broken."),
    ("assistant", "Sorry to hear that, Dana. Let me check."),
    ("user", "thanks for checking"),
    ("assistant", "ok"),
    ("tool", "order ORD-3300: paid $49.90 on 2024-05-02, ships to /addr/12-elm-st"),
    ("user", "Please email me, never call. sounds good"),
    ("assistant", "We decided to send a replacement by May 4."),
    ("user", "ok"),
]


def make_mf(db_path, summarizer=None):
    return memfold.MemFold(db_path, clock=memfold.LogicalClock(), token_counter="words", summarizer=summarizer,
                           window=WindowSettings(budget_tokens=200, output_reserve_tokens=0, hot_turns=2,
                                                 leaf_chunk_tokens=200, card_target_tokens=30))


def fill(conv):
    for role, text in TURNS:
        turn = {"role": role, "content": text}
        if role == "tool":
            turn["tool_call_id"] = "call1"
        conv.append(turn)


@pytest.fixture(params=["extractive", "llm"])
def summarizer(request, llm_server):
    if request.param == "extractive":
        return ExtractiveSummarizer(memfold.WordCounter())
    llm_server.default_reply = {"content": "user Dana: ORD-3300 broken; replacement by May 4; email only."}
    return LLMSummarizer(LLMSettings(base_url=llm_server.base_url, model="test-model", timeout_seconds=30))


def test_contract_fold_makes_a_shorter_card_that_expands_to_the_turns(db_path, summarizer):
    mf = make_mf(db_path, summarizer)
    conv = mf.conversation("c")
    fill(conv)
    report = conv.compact(target_tokens=0)
    assert report.leaf_folds == 1 and not report.failures
    card = conv.describe(report.cards[0])
    assert card["depth"] == 1 and card["tokens"] < card["source_tokens"]
    assert card["summarizer"] == summarizer.id
    turns = conv.expand(report.cards[0], to_turns=True)
    # the hot tail is the last 2 turns widened to the question they answer: turns 6-8
    assert [t.content for t in turns] == [text for _, text in TURNS[:5]]
    mf.close()


def test_extractive_keeps_specifics_and_drops_chatter():
    s = ExtractiveSummarizer(memfold.WordCounter())
    items = [FoldItem("turn", i, text, role=role) for i, (role, text) in enumerate(TURNS)]
    text = s.summarize(items, 1, target_tokens=60)
    for needle in ("ORD-3300", "$49.90", "2024-05-02", "/addr/12-elm-st", "never call", "May 4"):
        assert needle in text
    assert "thanks for checking" not in text and "\nassistant: ok" not in text
    assert s.summarize(items, 1, target_tokens=60) == text  # deterministic


def test_extractive_deeper_cards_prefer_decisions_in_force():
    s = ExtractiveSummarizer(memfold.WordCounter())
    cards = [FoldItem("card", 1, "user: order ORD-1 costs 20 dollars\nassistant: we will ship by Monday", depth=1),
             FoldItem("card", 2, "user: the sky was grey on 3 days\nuser: please always email me", depth=1)]
    text = s.summarize(cards, 2, target_tokens=12)
    assert "please always email me" in text and "we will ship by Monday" in text
    assert "sky" not in text


def test_llm_request_shape(db_path, llm_server):
    mf = make_mf(db_path, LLMSummarizer(LLMSettings(base_url=llm_server.base_url, model="m1", api_key="k")))
    llm_server.queue("Dana: ORD-3300 broken, email only.")
    conv = mf.conversation("c")
    fill(conv)
    conv.compact(target_tokens=0)
    body = llm_server.requests[0]["body"]
    assert body["model"] == "m1" and llm_server.requests[0]["headers"]["Authorization"] == "Bearer k"
    assert "ORD-3300" in body["messages"][1]["content"]
    mf.close()


@pytest.mark.parametrize("reply", [
    {"status": 500}, {"delay": 1.5}, {"content": ""}, {"raw": "not json"},
    {"content": " ".join(["much longer text"] * 40)},
])
def test_llm_failure_keeps_originals_and_records_it(db_path, llm_server, reply):
    summarizer = LLMSummarizer(LLMSettings(base_url=llm_server.base_url, model="m", timeout_seconds=0.5))
    mf = make_mf(db_path, summarizer)
    conv = mf.conversation("c")
    fill(conv)
    for _ in range(5):
        llm_server.queue(reply.get("content"), status=reply.get("status", 200), delay=reply.get("delay", 0.0),
                         raw=reply.get("raw"))
    report = conv.compact(target_tokens=0)
    assert report.cards == [] and len(report.failures) == 1  # tried once, no loop
    assert all(i.kind == "turn" for i in conv.catalog_items())
    assert is_contiguous_cover(conv.catalog_items(), len(TURNS))
    failures = conv.failures()
    assert len(failures) == 1 and failures[0]["summarizer"] == "llm:m" and failures[0]["error"]
    assert mf.archive.verify() == []
    mf.close()


def test_llm_summarizer_needs_an_endpoint(monkeypatch):
    monkeypatch.delenv("MEMFOLD_LLM_BASE_URL", raising=False)
    with pytest.raises(memfold.InvalidInput, match="MEMFOLD_LLM_BASE_URL"):
        LLMSummarizer()


def test_a_raising_custom_summarizer_never_wipes_history(db_path):
    class Broken(memfold.Summarizer):
        id = "broken"

        def summarize(self, items, depth, *, target_tokens=None):
            raise RuntimeError("boom")

    mf = make_mf(db_path, Broken())
    conv = mf.conversation("c")
    fill(conv)
    report = conv.compact(target_tokens=0)
    assert report.failures and "boom" in report.failures[0]["error"]
    assert len(conv.catalog_items()) == len(TURNS)
    mf.close()
