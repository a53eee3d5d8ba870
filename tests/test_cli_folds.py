"""The CLI of issue 14 (``memfold fold``, ``memfold strategy``, ``memfold stats``), the replay
report's fold counters, and the README session where a unit closes, folds and is read back."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memfold import LogicalClock, MemFold, WindowSettings
from memfold.cli import cli

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def call(cid: str, tool: str, **args) -> dict:
    return {"id": cid, "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "agent.db"
    mf = MemFold(path, clock=LogicalClock(), token_counter="words", embedder=None,
                 window=WindowSettings(budget_tokens=200_000, output_reserve_tokens=1_000))
    mf.conversation("coding").append_many([
        {"role": "user", "content": "Please fix the failing test in src/app/cache.py"},
        {"role": "assistant", "content": "", "tool_calls": [call("a", "read_file", path="src/app/cache.py")]},
        {"role": "tool", "tool_call_id": "a", "content": "def get(key): return store[key] " * 12},
        {"role": "assistant", "content": "Fixed: cache.get returns None for a missing key."},
        {"role": "user", "content": "Now add a retry option to src/app/client.py"},
    ])
    mf.close()
    return str(path)


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_context_meter_counts_the_fold_card_on_its_own_line(tmp_path):
    path = tmp_path / "card.db"
    mf = MemFold(path, clock=LogicalClock(), token_counter="words", embedder=None)
    conv = mf.conversation("coding", namespace="default")
    work = [{"role": "user", "content": "Please fix the failing tests in src/app/"}]
    for i in range(20):  # the default card shows at 20 tool calls since the last fold
        work += [{"role": "assistant", "content": "", "tool_calls": [call(f"a{i}", "read_file", path=f"src/app/m{i}.py")]},
                 {"role": "tool", "tool_call_id": f"a{i}", "content": f"def f{i}(): return {i}"}]
    work += [{"role": "assistant", "content": "Fixed all twenty modules."},
             {"role": "user", "content": "Now add a retry option to src/app/client.py"}]
    conv.append_many(work)
    turns = sum(t.tokens for t in conv.history())
    mf.close()
    settings = ["--budget", "200000", "--reserve", "1000"]
    data = json.loads(run("context", str(path), "-c", "coding", *settings, "--json").stdout)
    card = data["sections"]["fold_card"]
    assert data["fold_card"] and card > 0
    assert data["sections"]["turns"] + data["sections"]["hot_turns"] == turns  # the card is not a turn
    out = run("context", str(path), "-c", "coding", *settings)
    assert out.exit_code == 0, out.output
    older, hot = data["sections"]["turns"], data["sections"]["hot_turns"]
    assert out.output.splitlines()[-1].endswith(f"turns {older}, hot_turns {hot}, fold_card {card})")
    status = MemFold(path, embedder=None).conversation("coding").window_status(budget=200000, output_reserve=1000)
    assert status["tokens"] == data["total_tokens"] == sum(data["sections"].values())


def test_fold_prints_the_result_and_refuses_illegal_ranges(db):
    out = run("fold", db, "-c", "coding", "1", "4")
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert re.fullmatch(r"folded turns #1-#4 \(\d+ tokens\) into \[c1\] of \d+ tokens", lines[0])
    assert lines[1] == "Closed unit, turns #1-#4 (4 turns, 73 tokens)."
    assert "User #1: Please fix the failing test in src/app/cache.py" in lines
    again = run("fold", db, "-c", "coding", "1", "4", "--json")
    assert again.exit_code == 1
    error = json.loads(again.stdout.splitlines()[0])
    assert error["type"] == "IllegalFold" and "folds do not nest" in error["error"]
    assert run("fold", db, "-c", "coding", "5", "5").output.startswith(
        "Error: turns from #5 on are the unit in progress")
    stats = json.loads(run("stats", db, "-c", "coding", "--json").stdout)["coding"]
    assert (stats["accepted"], stats["refused"]) == (1, 2)  # both refusals of `memfold fold` counted
    expand = run("expand", db, "c1", "-c", "coding", "--turns")
    assert expand.output.splitlines()[0] == "t1 [turn 1, user] Please fix the failing test in src/app/cache.py"


def test_fold_json(db):
    out = run("fold", db, "-c", "coding", "1", "4", "--json")
    data = json.loads(out.output)
    assert (data["card"], data["first_seq"], data["last_seq"], data["kind"]) == ("c1", 1, 4, "unit")
    assert data["index"]["by_tool"] == {"read_file": 1} and data["index"]["paths"] == ["src/app/cache.py"]


def test_strategy_enter_report_yield_list_and_stats(db):
    out = run("strategy", db, "-c", "coding", "enter", "errand", "add", "the", "retry", "option")
    assert out.exit_code == 0 and out.output.startswith("[strategy errand, frame f1] Do only this task")
    assert "Brief: add the retry option" in out.output
    assert run("strategy", db, "-c", "coding", "report", "retry added: 3 attempts").output == (
        "report of frame f1 (errand) saved; it replaces the previous one (1 report so far)\n")
    done = json.loads(run("strategy", db, "-c", "coding", "yield", "done", "--json").output)
    assert done["status"] == "closed" and done["card"] == "c1"
    assert run("strategy", db, "-c", "coding", "list").output == (
        "f1 errand [closed] from #6, 1 reports: retry added: 3 attempts\n")
    assert run("strategy", db, "-c", "coding", "yield").output == (
        "Error: no strategy frame is open: there is nothing to yield from\n")
    bad = run("strategy", db, "-c", "coding", "enter", "nap", "--json")
    assert bad.exit_code == 1 and json.loads(bad.stdout.splitlines()[0])["type"] == "IllegalFold"
    stats = run("stats", db)
    assert stats.output == ("coding: folds proposed 0, accepted 0, refused 0, read back 0, re-runs 0; made: 0 units, "
                            "1 strategy yields, 0 receipts; strategies 1 (0 open), reports 1\n")
    data = json.loads(run("stats", db, "-c", "coding", "--json").output)
    assert data["coding"]["folds"]["strategy"] == 1


def test_the_replay_report_carries_the_fold_counters(tmp_path):
    mf = MemFold(tmp_path / "r.db", clock=LogicalClock(), token_counter="words", embedder=None)
    conv = mf.conversation("x")
    conv.append_many([{"role": "user", "content": "a b c d e f g h"}, {"role": "assistant", "content": "i j k l m n"},
                      {"role": "user", "content": "next"}])
    conv.handle_tool_call("fold_unit", {"from": 3, "to": 3})
    from memfold.replay.report import fold_figures

    class C:
        conversation_id = "x"

    assert fold_figures(mf, [C()]) == {"fold_proposed": 0, "fold_accepted": 0, "fold_refused": 1, "fold_read_back": 0,
                                       "fold_reruns": 0}
    mf.close()


def test_the_readme_session_prints_what_the_readme_shows(tmp_path):
    section = README[README.index("<!-- section: folds -->"):README.index("<!-- /section: folds -->")]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    shown = re.search(r"prints\n\n```text\n(.*?)```", section, re.S).group(1)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout == shown
