"""Strategy frames and subagent receipts (issue 14, points 5-6): entering keeps the compiled prefix
byte-identical, the report is a slot, yield keeps exactly the last report (expandable to the
branch) with zero model calls, frames nest, ``intent`` is read-only, ``/strategy`` and ``/back``,
strategies as data a user extends, and receipts from child conversations."""

from __future__ import annotations

import json
import os

import pytest

from memfold import IllegalFold, LogicalClock, MemFold, Summarizer, WindowSettings
from memfold.window.strategies import StrategyBook, user_command

BIG = dict(budget_tokens=200_000, output_reserve_tokens=1_000)


class ExplodingSummarizer(Summarizer):
    id = "exploding"

    def __init__(self) -> None:
        self.calls = 0

    def summarize(self, items, depth, *, target_tokens=None):
        self.calls += 1
        raise RuntimeError("no model call on entering or leaving a frame")


def call(cid: str, tool: str, **args) -> dict:
    return {"id": cid, "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}


@pytest.fixture
def setup(db_path):
    summarizer = ExplodingSummarizer()
    mf = MemFold(db_path, clock=LogicalClock(), token_counter="words", embedder=None, summarizer=summarizer,
                 window=WindowSettings(**BIG, fold_card_tool_calls=0, fold_card_tokens=0))
    conv = mf.conversation("agent")
    conv.append_many([
        {"role": "system", "content": "You are a careful coding agent."},
        {"role": "user", "content": "The deploy of billing failed; please look into it."},
        {"role": "assistant", "content": "", "tool_calls": [call("a", "read_file", path="deploy.log")]},
        {"role": "tool", "tool_call_id": "a", "content": "ERROR: migration 0042 timed out " * 5},
    ])
    yield mf, conv, summarizer
    mf.close()


def model_turn(conv, cid: str, tool: str, **args) -> str:
    """The model calls ``tool``: its assistant turn, memfold's answer, the tool result turn."""
    conv.append({"role": "assistant", "content": "", "tool_calls": [call(cid, tool, **args)]})
    answer = conv.handle_tool_call(tool, json.dumps(args))
    conv.append({"role": "tool", "tool_call_id": cid, "content": answer})
    return answer


def test_entering_by_tool_keeps_the_prefix_byte_identical(setup):
    mf, conv, summarizer = setup
    tools = conv.tool_definitions(folds=True)
    before = conv.context().messages
    answer = model_turn(conv, "s1", "strategy_request", name="errand", brief="find why migration 0042 times out")
    after = conv.context().messages
    assert after[:len(before)] == before  # byte for byte, system prompt included
    assert after[len(before)]["tool_calls"][0]["function"]["name"] == "strategy_request"
    assert len(after) == len(before) + 2 and after[-1]["content"] == answer  # one message with the rules
    assert answer.startswith("[strategy errand, frame f1] Do only this task, keep the report current, yield when done.")
    assert "Brief: find why migration 0042 times out" in answer
    assert conv.tool_definitions(folds=True) == tools  # the tool list does not change
    assert summarizer.calls == 0


def test_entering_by_the_user_or_the_host_appends_one_message(setup):
    mf, conv, _ = setup
    before = conv.context().messages
    conv.append({"role": "user", "content": "/strategy triage everything that broke in the deploy"})
    after = conv.context().messages
    assert after[:len(before)] == before and len(after) == len(before) + 2
    assert after[-1]["name"] == "memfold" and after[-1]["content"].startswith("[strategy triage, frame f1]")
    frame = conv.strategy_frames()[0]
    assert (frame.name, frame.brief, frame.opened_by, frame.start_seq) == (
        "triage", "everything that broke in the deploy", "user", 5)
    outcome = conv.strategy_enter("counsel", "roll back or push a fix?")
    assert conv.context().messages[:len(after)] == after and outcome.depth == 2


def test_the_report_is_a_slot_and_yield_keeps_exactly_the_last_report(setup):
    mf, conv, summarizer = setup
    model_turn(conv, "s1", "strategy_request", name="errand", brief="find why migration 0042 times out")
    start = conv.strategy_frames()[0].start_seq
    model_turn(conv, "r1", "strategy_report", text="looking at the lock table")
    model_turn(conv, "b1", "bash", command="psql -c 'select * from pg_locks'")
    model_turn(conv, "r2", "strategy_report", text="0042 waits on a lock held by the nightly export job")
    assert conv.strategy_frames()[0].report == "0042 waits on a lock held by the nightly export job"
    assert conv.strategy_frames()[0].reports == 2
    conv.append({"role": "assistant", "content": "", "tool_calls": [call("y", "strategy_yield", reason="found it")]})
    answer = conv.handle_tool_call("strategy_yield", {"reason": "found it"})
    assert "folds to the last report once this call's result is appended" in answer
    assert conv.strategy_frames()[0].status == "closing"
    last = conv.append({"role": "tool", "tool_call_id": "y", "content": answer})
    items = conv.catalog_items()
    branch = [i for i in items if i.last_seq >= start]
    assert len(branch) == 1 and branch[0].kind == "card"  # exactly one item: the last report
    card = mf.parts.cards.get(branch[0].item_id)
    assert card.text == "0042 waits on a lock held by the nightly export job"
    assert card.summarizer == "strategy_yield" and card.last_seq == mf.parts.archive.get(last).seq
    turns = conv.expand(card.ref, to_turns=True)
    assert turns[0].seq == start and turns[-1].id == last  # expandable to the whole branch, the yield's result too
    frame = conv.strategy_frames()[0]
    assert frame.status == "closed" and frame.reason == "found it" and frame.fold_id == conv.folds()[0].id
    ctx = conv.context()
    assert ctx.messages[-1]["content"] == f"[{card.ref}] 0042 waits on a lock held by the nightly export job"
    assert summarizer.calls == 0


def test_frames_nest_like_calls(setup):
    mf, conv, summarizer = setup
    conv.strategy_enter("errand", "fix the deploy")
    conv.append({"role": "assistant", "content": "First I need to know what the user wants."})
    conv.strategy_enter("intent", "what does 'fix' mean here?")
    conv.append({"role": "user", "content": "just make it green, the export can wait " * 3})
    conv.strategy_report("intent: deploy green today; the export job may be paused")
    inner = conv.strategy_yield("clear")
    assert inner.status == "closed" and inner.card
    assert conv.strategy_frames(open_only=True)[0].name == "errand"
    conv.append({"role": "assistant", "content": "Paused the export job and re-ran the deploy: green. " * 3})
    conv.strategy_report("deploy green: export job paused until tonight")
    outer = conv.strategy_yield("done")
    card = mf.parts.cards.get(int(outer.card[1:]))
    assert card.depth == 2 and inner.card in card.covers and card.text == "deploy green: export job paused until tonight"
    assert conv.catalog_items()[-1].item_id == card.id
    assert [t.role for t in conv.expand(card.ref, to_turns=True)][:2] == ["user", "assistant"]
    assert summarizer.calls == 0


def test_strategy_errors_are_clear_and_write_nothing(setup):
    mf, conv, _ = setup
    with pytest.raises(IllegalFold, match="no strategy frame is open: enter one"):
        conv.strategy_report("x")
    with pytest.raises(IllegalFold, match="no strategy frame is open: there is nothing to yield from"):
        conv.strategy_yield("x")
    with pytest.raises(IllegalFold, match="unknown strategy 'nap': the strategies are counsel, errand, intent, triage"):
        conv.strategy_enter("nap")
    assert conv.strategy_frames() == []
    model_turn(conv, "s", "strategy_request", name="errand", brief="b")
    assert conv.handle_tool_call("strategy_yield", {}).startswith("error: frame f1 (errand) has no report yet")
    assert conv.handle_tool_call("strategy_report", {"text": " "}).startswith("error: the report must be non-empty")
    assert conv.handle_tool_call("strategy_request", {"name": "nap", "brief": ""}).startswith("error: unknown strategy")
    assert conv.strategy_frames()[0].status == "open" and len(conv.strategy_frames()) == 1


def test_a_frame_without_a_brief_is_refused_and_writes_nothing(setup):
    mf, conv, _ = setup
    turns = len(conv.history())
    for brief in ("", "   "):
        with pytest.raises(IllegalFold, match="strategy 'errand' needs a brief: the task this frame is for"):
            conv.strategy_enter("errand", brief)
    assert conv.handle_tool_call("strategy_request", {"name": "errand"}).startswith(
        "error: strategy 'errand' needs a brief")
    assert conv.handle_tool_call("strategy_request", {"name": "errand", "brief": " "}).startswith(
        "error: strategy 'errand' needs a brief")
    assert conv.strategy_frames() == [] and len(conv.history()) == turns
    conv.append({"role": "user", "content": "/strategy errand"})  # typed: the host says why at the tail
    assert conv.strategy_frames() == []
    assert conv.history()[-1].content.startswith("[memfold] strategy 'errand' needs a brief")


def test_back_typed_by_the_user_closes_the_frame(setup):
    mf, conv, _ = setup
    conv.append({"role": "user", "content": "/back"})  # no frame open: the host says so at the tail
    assert conv.history()[-1].content == "[memfold] no strategy frame is open: there is nothing to yield from"
    conv.append({"role": "user", "content": "/strategy errand read the deploy log " * 2})
    conv.append({"role": "assistant", "content": "The log says migration 0042 timed out on a lock. " * 3})
    conv.strategy_report("0042 timed out on a lock")
    conv.append({"role": "user", "content": "/back enough"})
    frame = conv.strategy_frames()[0]
    assert frame.status == "closed" and frame.reason == "enough" and frame.opened_by == "user"
    assert mf.parts.cards.get(conv.catalog_items()[-1].item_id).text == "0042 timed out on a lock"
    assert user_command("/strategyx") is None and user_command("/back later") == ("yield", "", "later")


def test_intent_is_read_only_while_open(setup):
    mf, conv, _ = setup
    assert conv.tool_call_refusal("write_file", {"path": "a.py"}) is None
    conv.strategy_enter("intent", "what should change?")
    refusal = conv.tool_call_refusal("write_file", {"path": "a.py", "text": "x"})
    assert refusal.startswith("error: refused: frame f1 (intent) is read-only while open and this call writes "
                              "(tool 'write_file' matches 'write*')")
    assert "starts with 'rm'" in conv.tool_call_refusal("bash", json.dumps({"command": "ls && rm -rf build"}))
    assert conv.tool_call_refusal("bash", {"command": "git log --oneline | head"}) is None
    assert conv.tool_call_refusal("read_file", {"path": "a.py"}) is None
    assert conv.tool_call_refusal("search", {"query": "a"}) is None
    conv.strategy_enter("errand", "nested errand")  # a frame inside intent is still under it
    assert conv.tool_call_refusal("edit_file", {"path": "a.py"}) is not None
    conv.strategy_yield()
    conv.strategy_yield()
    assert conv.tool_call_refusal("write_file", {"path": "a.py"}) is None


def test_strategies_are_data_a_user_extends(tmp_path, db_path, monkeypatch):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "bisect.toml").write_text('name = "bisect"\nsummary = "Halve the range until one change is left."\n'
                                        'rules = "Test the middle commit; keep the report current."\n')
    (folder / "errand.toml").write_text('name = "errand"\nsummary = "My errand."\nrules = "Mine."\n')
    book = StrategyBook([folder])
    assert book.names() == ["bisect", "counsel", "errand", "intent", "triage"]
    assert book.get("errand").summary == "My errand." and book.get("intent").read_only
    monkeypatch.setenv("MEMFOLD_STRATEGY_PATH", str(folder))
    mf = MemFold(db_path, clock=LogicalClock(), token_counter="words", embedder=None)
    conv = mf.conversation("c")
    conv.append({"role": "user", "content": "which commit broke it?"})
    assert conv.strategy_enter("bisect", "v1.2..v1.3").message.startswith("[strategy bisect, frame f1]")
    names = [t["function"]["name"] for t in conv.tool_definitions(folds=True)]
    assert names == ["search", "describe", "expand", "fold_unit", "strategy_request", "strategy_report",
                     "strategy_yield"]
    assert "bisect" in conv.tool_definitions(folds=True)[4]["function"]["parameters"]["properties"]["name"]["enum"]
    mf.close()


def test_one_broken_strategy_file_disables_only_itself(tmp_path, db_path, monkeypatch):
    from click.testing import CliRunner

    from memfold.cli import cli

    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "bisect.toml").write_text('name = "bisect"\nsummary = "Halve the range."\nrules = "Test the middle."\n')
    (folder / "bad.toml").write_text('name = "bad"\nsummary = ""\nrules = "x"\n')
    (folder / "garbled.toml").write_text('name = "garbled\nsummary = ')
    with pytest.warns(UserWarning) as caught:
        book = StrategyBook([folder])
    warned = sorted(str(w.message) for w in caught)
    assert len(warned) == 2 and warned[0].startswith(f"strategy file {folder / 'bad.toml'}: 'summary' must be "
                                                     "non-empty text; the other strategies load")
    assert warned[1].startswith(f"strategy file {folder / 'garbled.toml'}: ")
    assert book.names() == ["bisect", "counsel", "errand", "intent", "triage"]  # the good ones all load
    assert sorted(book.broken) == ["bad", "garbled"]
    with pytest.raises(IllegalFold, match=r"strategy 'bad' cannot be used: strategy file .*bad.toml: 'summary' "
                                          r"must be non-empty text; fix the file \(the strategies that work are bisect"):
        book.get("bad")
    # through a conversation, the tool and the CLI: the good ones work, the broken one is refused by name
    monkeypatch.setenv("MEMFOLD_STRATEGY_PATH", str(folder))
    with pytest.warns(UserWarning) as caught:
        mf = MemFold(db_path, clock=LogicalClock(), token_counter="words", embedder=None)
        conv = mf.conversation("c", namespace="default")
        conv.append({"role": "user", "content": "which commit broke it?"})
        assert conv.strategy_enter("bisect", "v1.2..v1.3").message.startswith("[strategy bisect, frame f1]")
    assert sorted(str(w.message).split(".toml")[0] for w in caught) == [
        f"strategy file {folder / 'bad'}", f"strategy file {folder / 'garbled'}"]
    with pytest.raises(IllegalFold, match="strategy 'garbled' cannot be used: strategy file"):
        conv.strategy_enter("garbled", "anything")
    assert conv.handle_tool_call("strategy_request", {"name": "bad", "brief": "x"}).startswith(
        "error: strategy 'bad' cannot be used")
    assert len(conv.strategy_frames()) == 1
    mf.close()
    out = CliRunner().invoke(cli, ["strategy", str(db_path), "-c", "c", "list"])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert lines[0] == "f1 bisect [open] from #2, 0 reports"
    assert [line.split(".toml")[0] for line in lines[1:]] == [f"broken: strategy file {folder / 'bad'}",
                                                              f"broken: strategy file {folder / 'garbled'}"]
    assert lines[1].endswith("'summary' must be non-empty text (the other strategies work)")


def test_a_broken_file_replacing_a_built_in_refuses_it_rather_than_falling_back(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "errand.toml").write_text('name = "errand"\nrules = 3\n')
    with pytest.warns(UserWarning, match="errand.toml"):
        book = StrategyBook([folder])
    assert "errand" not in book.names() and "errand" in book.broken
    with pytest.raises(IllegalFold, match="strategy 'errand' cannot be used"):
        book.get("errand")


# -- subagent receipts (point 6) ------------------------------------------------------------------------------
def test_a_subagent_sees_only_its_brief_and_its_receipt_expands_to_its_archive(setup):
    mf, conv, summarizer = setup
    child = conv.spawn("list every migration that touches the billing tables")
    assert [t.content for t in child.history()] == ["list every migration that touches the billing tables"]
    assert child.family_id == conv.family_id and child.parent_id == conv.id
    child.append_many([
        {"role": "assistant", "content": "", "tool_calls": [call("g", "grep", pattern="billing", path="migrations")]},
        {"role": "tool", "tool_call_id": "g", "content": "migrations/0040_billing.py\nmigrations/0042_billing_idx.py " * 6},
        {"role": "assistant", "content": "Two migrations touch billing: 0040 and 0042."},
    ])
    secret_words = "migrations/0040_billing.py"
    out = child.finish("0040 and 0042 touch billing; 0042 adds the index that locks")
    ctx = conv.context()
    texts = [m["content"] for m in ctx.messages]
    assert texts[-1] == (f"[receipt from subagent agent/sub1; expand {out['card']} for its work] 0040 and 0042 touch "
                         "billing; 0042 adds the index that locks")
    assert not any(secret_words in t for t in texts)  # the child's turns never enter the parent's context
    assert [t.content for t in conv.expand(out["card"], to_turns=True)][0] == (
        "list every migration that touches the billing tables")
    assert conv.fold_stats()["folds"]["receipt"] == 1
    with pytest.raises(IllegalFold, match="is finished already"):
        child.finish("again")
    with pytest.raises(IllegalFold, match="is not a subagent"):
        conv.finish("x")
    short = conv.spawn("tiny")
    with pytest.raises(IllegalFold, match="not shorter than the work it concludes"):
        short.finish("a much longer receipt than the brief")
    assert summarizer.calls == 0


def test_erasing_a_folded_conversation_leaves_no_fold_index_or_report_behind(db_path):
    mf = MemFold(db_path, clock=LogicalClock(), token_counter="words", embedder=None,
                 window=WindowSettings(**BIG, fold_card_tool_calls=0, fold_card_tokens=0))
    conv = mf.conversation("a")
    conv.append_many([
        {"role": "user", "content": "Please tidy the folder quokka-archive-7731 for me"},
        {"role": "assistant", "content": "", "tool_calls": [call("a", "read_file", path="quokka-archive-7731/index.md")]},
        {"role": "tool", "tool_call_id": "a", "content": "quokka-archive-7731/index.md lists forty files " * 4},
        {"role": "assistant", "content": "Tidied quokka-archive-7731."},
        {"role": "user", "content": "thanks"},
    ])
    conv.fold_unit(1, 4)
    conv.strategy_enter("errand", "sort quokka-archive-7731 by year")
    conv.append({"role": "assistant", "content": "Sorted the files of quokka-archive-7731 by year. " * 3})
    conv.strategy_report("quokka-archive-7731 sorted: 40 files in 6 year folders")
    conv.strategy_yield("done")
    mf.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = lambda: b"".join(open(str(db_path) + s, "rb").read() for s in ("", "-wal") if os.path.exists(str(db_path) + s))
    assert b"quokka-archive-7731" in raw()  # the check can fail
    mf.erase(conversation_id="a", vacuum=True)
    assert b"quokka-archive-7731" not in raw()
    assert conv.folds()[0].index == {} and conv.strategy_frames()[0].report is None
    mf.close()


def test_a_yield_waits_for_every_result_of_a_parallel_call(setup):
    mf, conv, _ = setup
    conv.strategy_enter("errand", "check both logs")
    conv.append({"role": "assistant", "content": "Both logs say 0042 waits on the export lock. " * 3})
    conv.strategy_report("0042 waits on the export lock")
    conv.append({"role": "assistant", "content": "", "tool_calls": [call("r", "read_file", path="b.log"),
                                                                    call("y", "strategy_yield", reason="done")]})
    conv.handle_tool_call("strategy_yield", {"reason": "done"})
    conv.append({"role": "tool", "tool_call_id": "r", "content": "b.log: nothing new"})
    assert conv.strategy_frames()[0].status == "closing"  # the yield's own result is still to come
    conv.append({"role": "tool", "tool_call_id": "y", "content": "yielded"})
    assert conv.strategy_frames()[0].status == "closed"
    assert mf.parts.cards.get(conv.catalog_items()[-1].item_id).text == "0042 waits on the export lock"
