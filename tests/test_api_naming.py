"""The API a bot author touches (issue 20, point 7): one result-count name (``limit``, with ``k``
a deprecated alias), one score direction (higher is better, also in ``conv.search`` and
``memfold search --json``), ``remember``/``read`` the same calls as ``memory.write``/``memory.read``,
a typo'd conversation id made visible, ``memfold remember`` defaulting to ``semantic``,
``protect list --state all`` keeping namespace-wide records, card lines in ``memfold context``
that cannot be read as turns; and ``since=`` given an aware datetime on a system-clock database."""

from __future__ import annotations

import json
import warnings
from datetime import datetime, timedelta, timezone

import pytest
from click.testing import CliRunner

from memfold import LogicalClock, MemFold, WindowSettings
from memfold.cli import cli

NS = "acme/dana"


@pytest.fixture
def filled(tmp_path):
    path = tmp_path / "a.db"
    mf = MemFold(path, clock=LogicalClock(), token_counter="words", embedder=None)
    conv = mf.conversation("c1", namespace=NS)
    for text in ["my refund for order ORD-3300", "the refund is on its way", "refund refund ORD-3300 refund",
                 "thanks, bye"]:
        conv.append({"role": "user", "content": text})
    for i in range(4):
        mf.memory.write(NS, "semantic", f"fact {i}", importance=0.2 * (i + 1))
    yield mf, conv, path
    mf.close()


def test_limit_is_the_result_count_and_k_a_deprecated_alias(filled):
    mf, conv, _ = filled
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new name never warns
        assert len(conv.search("refund", limit=2)) == 2
        assert len(mf.memory.read(NS, limit=3)) == 3
        assert len(mf.read(NS, limit=1)) == 1
        assert len(mf.store("semantic", NS).read(limit=2)) == 2
        assert len(mf.search("refund", limit=1)) == 1
    for call in (lambda: conv.search("refund", k=2), lambda: mf.memory.read(NS, k=2), lambda: mf.read(NS, k=2)):
        with pytest.warns(DeprecationWarning, match=r"\(k=\.\.\.\) is deprecated: use limit=\.\.\."):
            assert len(call()) == 2


def test_scores_are_higher_is_better_in_every_search(filled):
    mf, conv, path = filled
    hits = conv.search("refund ORD-3300", limit=4)
    assert len(hits) >= 2 and [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert hits[0].score > hits[-1].score
    assert hits[0].ref == "t3"  # the turn with the most matches ranks first and scores highest
    ranked = mf.search("refund ORD-3300", kinds=["turn"], conversation_id="c1", limit=4)
    assert [h.score for h in ranked] == sorted((h.score for h in ranked), reverse=True)
    result = CliRunner().invoke(cli, ["search", str(path), "refund ORD-3300", "-c", "c1", "--embedder", "none",
                                      "--json", "--limit", "4"])
    assert result.exit_code == 0, result.output
    scores = [h["score"] for h in json.loads(result.stdout)]
    assert scores == sorted(scores, reverse=True) and scores[0] > 0


def test_remember_and_read_are_memory_write_and_read(filled):
    mf, _, _ = filled
    a = mf.remember(NS, "semantic", "Dana prefers email", key="user.contact")
    b = mf.memory.write(NS, "semantic", "Dana prefers phone", key="user.contact")
    assert mf.memory.get(a.id).superseded_by == b.id  # one write path: the same slot rules
    top = mf.read(NS, 2, touch=False)
    assert [(s.record.id, s.score) for s in top] == [(s.record.id, s.score) for s in mf.memory.read(NS, 2, touch=False)]


def test_a_new_conversation_without_a_namespace_warns(filled):
    mf, _, _ = filled
    with pytest.warns(UserWarning, match="conversation 'tikcet-42' did not exist: created it in namespace 'default'"):
        conv = mf.conversation("tikcet-42")
    assert conv.namespace == "default"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mf.conversation("tikcet-42")       # it exists now: no warning
        mf.conversation("c1")              # an existing conversation: no warning
        mf.conversation("c2", namespace=NS)  # created on purpose: no warning


def test_cli_remember_defaults_to_semantic(filled):
    mf, _, path = filled
    mf.close()
    result = CliRunner().invoke(cli, ["remember", str(path), "Dana lives in Oslo", "-n", NS, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["type"] == "semantic"


def test_protect_list_state_all_keeps_namespace_wide_records(filled):
    mf, _, path = filled
    own = mf.protect("Refund before t=10.", kind="deadline", conversation_id="c1", due_at=10)
    wide = mf.protect("Always answer in English.", namespace=NS)
    other = mf.conversation("c9", namespace=NS)
    elsewhere = mf.protect("Only for c9.", conversation_id=other.id)
    mf.protected.satisfy(own.id)
    mf.close()
    result = CliRunner().invoke(cli, ["protect", "list", str(path), "-c", "c1", "--state", "all", "--json"])
    assert result.exit_code == 0, result.output
    ids = [r["id"] for r in json.loads(result.stdout)]
    assert own.id in ids and wide.id in ids and elsewhere.id not in ids
    result = CliRunner().invoke(cli, ["protect", "list", str(path), "-c", "c1", "--state", "satisfied", "--json"])
    assert [r["id"] for r in json.loads(result.stdout)] == [own.id]


def test_memfold_context_marks_card_lines(tmp_path):
    path = tmp_path / "w.db"
    # budget 100: a card of several lines (at 80, absorbing roll-ups (issue 18, point 6) leave one card
    # whose shortened text is a single line, and the test would check nothing)
    mf = MemFold(path, clock=LogicalClock(), token_counter="words", embedder=None,
                 window=WindowSettings(budget_tokens=100, output_reserve_tokens=0, hot_turns=2, leaf_chunk_tokens=40,
                                       card_target_tokens=30, rollup_fanin=3))
    conv = mf.conversation("c", namespace=NS)
    for i in range(6):
        conv.append({"role": "user", "content": f"Please compute the refund for order ORD-{3300 + i} of ${200 + i}.00 today"})
        conv.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{i}", "type": "function", "function": {"name": "calculator", "arguments": f"{{\"x\":{i}}}"}}]})
        conv.append({"role": "tool", "tool_call_id": f"call_{i}", "name": "calculator",
                     "content": f"refund is ${180 + i}.00 after the fee"})
    ctx = conv.context()
    cards = [m for m in ctx.messages if m["role"] == "system" and m["content"].startswith("[c")]
    assert cards and any("\n" in m["content"] for m in cards), "the test needs a card of several lines"
    mf.close()
    result = CliRunner().invoke(cli, ["context", str(path), "-c", "c"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()[:-1]  # the last line is the token summary
    assert sum(line.startswith("card [c") for line in lines) == len(cards)
    turns = [m for m in ctx.messages if m["role"] != "system"]
    as_turns = [line for line in lines if line.split(":", 1)[0].split("(")[0] in ("user", "assistant", "tool")]
    assert len(as_turns) == len(turns), "a card's line reads like a turn"
    assert all(line.startswith(("system: ", "card [c", "user", "assistant", "tool", "  | ")) for line in lines)


def test_since_takes_an_aware_datetime_on_the_system_clock(tmp_path):
    mf = MemFold(tmp_path / "s.db", token_counter="words", embedder=None)
    conv = mf.conversation("c", namespace=NS)
    conv.append({"role": "user", "content": "the parcel arrived damaged"})
    now = datetime.now(timezone.utc)
    assert [h.kind for h in mf.search("parcel", since=now - timedelta(hours=1))] == ["turn"]
    assert mf.search("parcel", since=now + timedelta(hours=1)) == []
    assert [h.kind for h in mf.search("parcel", until=now + timedelta(hours=1), since=now - timedelta(days=1))] == ["turn"]
    mf.close()
