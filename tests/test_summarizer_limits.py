"""A request larger than the summarizer accepts is split into smaller chunks (issue 13, point 6).

The summarizer is the real LLM summarizer talking HTTP to the local chat-completions stand-in
(``llm_server``): once with a declared ``max_input_tokens``, once refusing a request the way
OpenAI does (HTTP 400, ``context_length_exceeded``).
"""

import json

import pytest

import memfold
from memfold import InvalidInput, LogicalClock, MemFold, SummarizerInputTooLarge, WindowSettings
from memfold.memory.llm import LLMSettings
from memfold.window.catalog import is_contiguous_cover
from memfold.window.summarizers.llm import LLMSummarizer

SETTINGS = dict(budget_tokens=400, output_reserve_tokens=0, hot_turns=2, rollup_fanin=4, leaf_chunk_tokens=120,
                card_target_tokens=8, soft_watermark=0.5, hard_watermark=1.0)


def make(db_path, llm_server, **kw):
    mf = MemFold(db_path, clock=LogicalClock(), token_counter="words", window=WindowSettings(**SETTINGS))
    mf.summarizer = LLMSummarizer(LLMSettings(base_url=llm_server.base_url, model="stand-in", timeout_seconds=10), **kw)
    llm_server.default_reply = {"content": "Dana: ORD orders, delivery"}
    conv = mf.conversation("c")
    conv.append_many([{"role": "user" if i % 2 == 0 else "assistant",
                       "content": f"turn {i} about order ORD-{i} and its delivery to Elm St"} for i in range(40)],
                     compact=False)
    return mf, conv


def items_tokens(request):
    """Tokens of the items a summarizer request carried (its lines, less the 'role:' prefixes)."""
    text = request["body"]["messages"][1]["content"]
    return sum(len(line.split()) - 1 for line in text.split("\n\n"))


def covered_tokens(mf, card_id):
    kids = mf.db.execute("SELECT child_kind, child_id FROM card_covers WHERE card_id = ?", [card_id]).fetchall()
    total = 0
    for kind, child in kids:
        table = "turns" if kind == "turn" else "cards"
        total += mf.db.execute(f"SELECT tokens FROM {table} WHERE id = ?", [child]).fetchone()[0]
    return total


def test_a_declared_maximum_is_never_exceeded(db_path, llm_server):
    mf, conv = make(db_path, llm_server, max_input_tokens=30)
    report = conv.compact(target_tokens=0)
    assert report.folded and report.failures == []
    assert llm_server.requests and max(items_tokens(r) for r in llm_server.requests) <= 30
    cards = [r[0] for r in mf.db.execute("SELECT id FROM cards").fetchall()]
    assert all(covered_tokens(mf, c) <= 30 for c in cards)
    assert is_contiguous_cover(conv.catalog_items(), 40)
    mf.close()


def test_without_a_maximum_the_chunks_are_the_leaf_chunk(db_path, llm_server):
    """The control: the same conversation sends requests above 30 tokens when nothing is declared."""
    mf, conv = make(db_path, llm_server)
    conv.compact(target_tokens=0)
    assert max(items_tokens(r) for r in llm_server.requests) > 30
    mf.close()


def test_a_request_refused_as_too_large_is_split(db_path, llm_server):
    mf, conv = make(db_path, llm_server)
    refusal = json.dumps({"error": {"message": "This model's maximum context length is 64 tokens.",
                                    "type": "invalid_request_error", "code": "context_length_exceeded"}})
    llm_server.queue(status=400, raw=refusal)
    report = conv.compact(target_tokens=0)
    first, second = llm_server.requests[0], llm_server.requests[1]
    assert items_tokens(second) < items_tokens(first)  # the same work, in a smaller chunk
    assert max(items_tokens(r) for r in llm_server.requests[1:]) < items_tokens(first)
    assert report.folded and len(report.failures) == 1 and "too large" in report.failures[0]["error"]
    assert is_contiguous_cover(conv.catalog_items(), 40)
    mf.close()


def test_other_http_errors_are_plain_failures(db_path, llm_server):
    mf, conv = make(db_path, llm_server)
    llm_server.queue(status=500, raw="upstream busy")
    with pytest.raises(memfold.SummarizerError) as caught:
        mf.summarizer.summarize([memfold.window.summarizers.base.FoldItem("turn", 1, "hi", role="user")], 1)
    assert not isinstance(caught.value, SummarizerInputTooLarge)
    llm_server.queue(status=413, raw="request entity too large")
    with pytest.raises(SummarizerInputTooLarge):
        mf.summarizer.summarize([memfold.window.summarizers.base.FoldItem("turn", 1, "hi", role="user")], 1)
    mf.close()


def test_a_bad_maximum_is_refused():
    settings = LLMSettings(base_url="http://127.0.0.1:9/v1", model="m")
    for bad in (0, 1, -5, 2.5, True, "100"):
        with pytest.raises(InvalidInput, match="max_input_tokens"):
            LLMSummarizer(settings, max_input_tokens=bad)
