"""The LLM one setting away (issue 20, point 2), against the real chat-completions server of
``tests/conftest.py`` (``llm_server``, HTTP on 127.0.0.1): with ``MEMFOLD_LLM_BASE_URL`` and
``MEMFOLD_LLM_MODEL`` set, the facade, ``memfold compact``, ``memfold window``, ``memfold demo
--llm``, ``memfold consolidate`` and the worker's parts use the LLM summarizer and extractor by
default; 429/503 answers are retried honouring ``Retry-After`` within a cap; a failure keeps the
originals."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import memfold
from memfold import (ExtractiveSummarizer, InvalidInput, LLMError, LLMExtractor, LLMSettings, LLMSummarizer,
                     LogicalClock, MemFold, RulesExtractor)
from memfold.cli import cli
from memfold.memory.llm import ChatClient

TURNS = ["My order ORD-3300 arrived broken, I paid $200 on May 2.",
         "Sorry to hear that. I can refund $200 or send a replacement.",
         "A replacement please, shipped to 12 Elm St.",
         "Done: the replacement ships May 3 to 12 Elm St.",
         "Thanks. Please email me, never call.",
         "Noted: email only."]


@pytest.fixture
def llm_env(monkeypatch, llm_server):
    monkeypatch.setenv("MEMFOLD_LLM_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("MEMFOLD_LLM_MODEL", "env-model")
    monkeypatch.setenv("MEMFOLD_LLM_API_KEY", "sk-env")
    monkeypatch.setenv("MEMFOLD_LLM_RETRY_CAP", "0.2")  # keep the retry waits of these tests short
    return llm_server


@pytest.fixture
def no_llm_env(monkeypatch):
    for name in ("MEMFOLD_LLM_BASE_URL", "MEMFOLD_LLM_MODEL", "MEMFOLD_LLM_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def fill(conv):
    for n, text in enumerate(TURNS):
        conv.append({"role": "user" if n % 2 == 0 else "assistant", "content": text}, compact=False)


def test_without_the_variables_memfold_stays_offline(db_path, no_llm_env):
    with MemFold(db_path, clock=LogicalClock(), token_counter="words", embedder=None) as mf:
        assert isinstance(mf.summarizer, ExtractiveSummarizer) and isinstance(mf.extractor, RulesExtractor)


def test_the_variables_make_the_llm_the_facade_default(db_path, llm_env):
    with MemFold(db_path, clock=LogicalClock(), token_counter="words", embedder=None) as mf:
        assert isinstance(mf.summarizer, LLMSummarizer) and mf.summarizer.id == "llm:env-model"
        assert isinstance(mf.extractor, LLMExtractor)
        conv = mf.conversation("c")
        fill(conv)
        llm_env.queue("user: ORD-3300 broken, $200, replacement to 12 Elm St.")
        report = conv.compact(target_tokens=0, hot_turns=2)
        assert report.cards and report.failures == []
        request = llm_env.requests[0]
        assert request["body"]["model"] == "env-model" and request["headers"]["Authorization"] == "Bearer sk-env"
        assert "ORD-3300" in request["body"]["messages"][1]["content"]
        assert conv.describe(report.cards[0])["summarizer"] == "llm:env-model"
    with MemFold(db_path, extractor="rules", summarizer=ExtractiveSummarizer(), embedder=None) as mf:
        assert isinstance(mf.extractor, RulesExtractor)  # an explicit choice still wins


def test_a_failing_endpoint_keeps_the_originals(db_path, llm_env):
    with MemFold(db_path, clock=LogicalClock(), token_counter="words", embedder=None) as mf:
        conv = mf.conversation("c")
        fill(conv)
        for _ in range(10):
            llm_env.queue(status=500)
        report = conv.compact(target_tokens=0, hot_turns=2)
        assert report.cards == [] and report.failures
        assert all(i.kind == "turn" for i in conv.catalog_items()) and conv.verify() == []
        assert "HTTP 500" in conv.failures()[0]["error"]


def test_a_model_without_a_name_is_refused_clearly(db_path, monkeypatch, llm_server):
    monkeypatch.setenv("MEMFOLD_LLM_BASE_URL", llm_server.base_url)
    monkeypatch.delenv("MEMFOLD_LLM_MODEL", raising=False)
    with pytest.raises(InvalidInput, match="MEMFOLD_LLM_MODEL"):
        MemFold(db_path, embedder=None)
    monkeypatch.setenv("MEMFOLD_LLM_MODEL", "m")
    monkeypatch.setenv("MEMFOLD_LLM_MAX_RETRIES", "many")
    with pytest.raises(InvalidInput, match="MEMFOLD_LLM_MAX_RETRIES"):
        LLMSettings.from_env()


def client(server, *, retries=3, cap=5.0):
    waits: list[float] = []
    settings = LLMSettings(base_url=server.base_url, model="m", max_retries=retries, retry_cap_seconds=cap)
    return ChatClient(settings, sleep=waits.append, wall_clock=lambda: 1_000_000_000.0), waits


def test_retry_after_is_honoured_on_429_and_503(llm_server):
    chat, waits = client(llm_server)
    llm_server.queue(status=429, raw='{"error": "slow down"}', headers={"Retry-After": "2"})
    llm_server.queue(status=503, raw="busy", headers={"Retry-After": "Sun, 09 Sep 2001 01:46:43 GMT"})  # +3 s
    llm_server.queue("the answer")
    assert chat.complete([{"role": "user", "content": "hi"}]) == "the answer"
    assert waits == [2.0, 3.0] and len(llm_server.requests) == 3


def test_without_retry_after_the_waits_back_off_within_the_cap(llm_server):
    chat, waits = client(llm_server, cap=0.75)
    for _ in range(3):
        llm_server.queue(status=503, raw="busy")
    llm_server.queue("fine")
    assert chat.complete([{"role": "user", "content": "hi"}]) == "fine"
    assert waits == [0.5, 0.75, 0.75]


def test_a_retry_after_beyond_the_cap_and_endless_429s_fail(llm_server):
    chat, waits = client(llm_server, cap=5.0)
    llm_server.queue(status=429, raw="later", headers={"Retry-After": "120"})
    with pytest.raises(LLMError, match="retry after 120 s, longer than the 5 s cap"):
        chat.complete([{"role": "user", "content": "hi"}])
    assert waits == [] and len(llm_server.requests) == 1
    chat, waits = client(llm_server, retries=2)
    for _ in range(3):
        llm_server.queue(status=429, raw="no", headers={"Retry-After": "1"})
    with pytest.raises(LLMError, match="HTTP 429 after 2 retries"):
        chat.complete([{"role": "user", "content": "hi"}])
    assert waits == [1.0, 1.0] and len(llm_server.requests) == 4
    chat, waits = client(llm_server)
    llm_server.queue(status=500, raw="boom")
    with pytest.raises(LLMError, match="HTTP 500"):
        chat.complete([{"role": "user", "content": "hi"}])  # not a retryable answer
    assert waits == []


def test_cli_compact_and_window_use_the_llm(tmp_path, llm_env):
    db = str(tmp_path / "cli.db")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", db, "--clock", "logical", "--tokens", "words"]).exit_code == 0
    src = tmp_path / "t.jsonl"
    src.write_text("".join(json.dumps({"role": "user" if n % 2 == 0 else "assistant", "content": t}) + "\n"
                           for n, t in enumerate(TURNS)), encoding="utf-8")
    llm_env.default_reply = {"content": "user: ORD-3300, $200."}
    result = runner.invoke(cli, ["window", db, str(src), "-c", "w", "--budget", "30", "--reserve", "0",
                                 "--hot-turns", "2"])
    assert result.exit_code == 0, result.output
    assert "compacted" in result.output and llm_env.requests
    assert runner.invoke(cli, ["ingest", db, "-c", "k", str(src)]).exit_code == 0
    before = len(llm_env.requests)
    result = runner.invoke(cli, ["compact", db, "-c", "k", "--budget", "30", "--reserve", "0", "--hot-turns", "2",
                                 "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["cards"] and len(llm_env.requests) > before
    assert all(r["body"]["model"] == "env-model" for r in llm_env.requests)


def test_cli_consolidate_uses_the_llm_extractor_by_default(tmp_path, llm_env):
    db = str(tmp_path / "c.db")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", db, "--clock", "logical"]).exit_code == 0
    assert runner.invoke(cli, ["remember", db, "user: my name is Dana", "-n", "acme/dana", "-t", "episodic"]).exit_code == 0
    llm_env.queue(json.dumps({"facts": [], "rules": []}))
    result = runner.invoke(cli, ["consolidate", db, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)[0]["extractor"] == "llm:env-model"
    offline = runner.invoke(cli, ["consolidate", db, "--extractor", "rules", "--json"])
    assert offline.exit_code == 0 and all(r["extractor"] == "rules-v1" for r in json.loads(offline.output))


def test_demo_llm_folds_with_the_endpoint(llm_env):
    llm_env.default_reply = {"content": "tool: fee 10%"}
    result = CliRunner().invoke(cli, ["demo", "--llm"])
    assert result.exit_code == 0, result.output
    assert "memfold demo --llm: cards by llm:env-model" in result.output
    assert any("earbuds" in json.dumps(r["body"]) for r in llm_env.requests)
    assert "tool: fee 10%" in result.output  # a card the endpoint wrote, in the final window


def test_demo_stays_offline_without_llm_even_with_the_variables(llm_env):
    result = CliRunner().invoke(cli, ["demo"])
    assert result.exit_code == 0 and llm_env.requests == []
    assert "    COLD : [2 earlier turns summarized]" in result.output


def test_demo_llm_without_an_endpoint_is_one_clear_error(no_llm_env):
    result = CliRunner().invoke(cli, ["demo", "--llm"])
    assert result.exit_code == 1 and "MEMFOLD_LLM_BASE_URL" in result.output


def test_the_worker_folds_with_the_llm(db_path, llm_env):
    window = memfold.WindowSettings(budget_tokens=60, output_reserve_tokens=0, hot_turns=2, soft_watermark=0.5,
                                    leaf_chunk_tokens=20, card_target_tokens=8)
    with MemFold(db_path, clock=LogicalClock(), token_counter="words", embedder=None, window=window) as mf:
        conv = mf.conversation("c")
        for n, text in enumerate(TURNS[:5]):
            conv.append({"role": "user" if n % 2 == 0 else "assistant", "content": text})  # past soft: a note
        assert conv.compaction_note() is not None and llm_env.requests == []
        llm_env.default_reply = {"content": "user: ORD-3300 $200"}
        worker = mf.worker(cache_warm_seconds=0)
        assert worker.run_once() == 1
        assert llm_env.requests and llm_env.requests[0]["body"]["model"] == "env-model"
        assert any(i.kind == "card" for i in conv.catalog_items())
