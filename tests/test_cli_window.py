"""CLI: memfold context, compact, search, describe, expand, window, export --tree (issue 4, point 9)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from memfold.cli import cli

TURNS = ["Hi, I am Dana. My order ORD-3300 arrived broken.", "Sorry to hear that Dana, let me check.", "thanks",
         "The replacement ships on May 4 to 12 Elm St.", "ok sounds good",
         "Please confirm: email dana@example.com, not phone?", "Yes email me, never call.", "Noted, we will email you."]
TINY = ["--budget", "40", "--reserve", "0", "--hot-turns", "2", "--fanin", "3", "--leaf-chunk", "20",
        "--card-target", "8"]


def setup(tmp_path):
    db = str(tmp_path / "w.db")
    src = tmp_path / "t.jsonl"
    src.write_text("".join(json.dumps({"role": "user" if i % 2 == 0 else "assistant", "content": t}) + "\n"
                           for i, t in enumerate(TURNS)))
    runner = CliRunner()
    assert runner.invoke(cli, ["init", db, "--clock", "logical", "--tokens", "words"]).exit_code == 0
    return runner, db, str(src)


def test_window_meter_lines(tmp_path):
    runner, db, src = setup(tmp_path)
    result = runner.invoke(cli, ["window", db, src, "-c", "s1", *TINY])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "turn 1: window 9/40"
    assert lines[6] == "turn 7: window 42/40 OVER -> compacted -> 35/40"
    as_json = runner.invoke(cli, ["window", db, src, "-c", "s2", "--json", *TINY])
    rows = json.loads(as_json.output)
    assert rows[6]["state"] == "over" and rows[6]["after"] == 35


def test_context_search_describe_expand_compact_export(tmp_path):
    runner, db, src = setup(tmp_path)
    runner.invoke(cli, ["window", db, src, "-c", "s1", *TINY])
    out = runner.invoke(cli, ["context", db, "-c", "s1", *TINY])
    assert out.exit_code == 0 and out.output.splitlines()[-1].startswith("-- 34/40 tokens (system 0, system_note 15")
    data = json.loads(runner.invoke(cli, ["context", db, "-c", "s1", "--json", *TINY]).output)
    assert data["total_tokens"] <= 40 and data["sections"]["protected"] == 0
    hits = runner.invoke(cli, ["search", db, 'ORD-3300 "AND" (x', "-c", "s1"])
    assert hits.exit_code == 0 and hits.output.splitlines()[0].startswith("t1 [turn 1, user]")
    desc = runner.invoke(cli, ["describe", db, "c1", "-c", "s1"])
    assert desc.output.startswith("c1: depth 1, turns 1-2") and "children: t1 t2" in desc.output
    exp = runner.invoke(cli, ["expand", db, "c1", "-c", "s1"])
    assert exp.output.splitlines()[0] == "t1 [turn 1, user] Hi, I am Dana. My order ORD-3300 arrived broken."
    comp = json.loads(runner.invoke(cli, ["compact", db, "-c", "s1", "--json", *TINY]).output)
    assert comp["usable_tokens"] == 40
    tree = runner.invoke(cli, ["export", db, "-c", "s1", "--tree", str(tmp_path / "tree")])
    assert tree.exit_code == 0 and tree.output.startswith("wrote 8 turns and ")
    assert (tmp_path / "tree" / "s1" / "catalog.md").exists()


def test_errors_are_one_line(tmp_path):
    runner, db, src = setup(tmp_path)
    runner.invoke(cli, ["window", db, src, "-c", "s1", *TINY])
    bad = runner.invoke(cli, ["describe", db, "c999", "-c", "s1"])
    assert bad.exit_code == 1 and bad.output.strip() == "Error: no summary card c999: list cards with 'memfold context' or search for one"
    tight = runner.invoke(cli, ["context", db, "-c", "s1", "--budget", "5", "--reserve", "0", "--hot-turns", "2"])
    assert tight.exit_code == 1 and "does not fit" in tight.output
    for cmd in ("context", "compact", "search", "describe", "expand", "window"):
        assert runner.invoke(cli, [cmd, "--help"]).exit_code == 0
