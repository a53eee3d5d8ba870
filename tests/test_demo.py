"""The seed demo (issue 7): a full run equals the stored transcript, runs are byte-identical,
``python -m memfold.demo`` works, ``--plot`` writes a real PNG, ``--db`` leaves a database the
other commands read, ``--json`` is machine-readable. Real SQLite files, real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memfold import InvalidInput, MemFold
from memfold.cli import cli
from memfold.demo import run_demo
from memfold.demo.session import WINDOW as SEED_WINDOW

EXPECTED = (Path(__file__).parent / "data" / "demo_expected.txt").read_text(encoding="utf-8")
TEMP_NOTE = "database: a temporary file, now deleted (keep one with --db PATH)\n"


def test_a_full_run_prints_the_stored_transcript(tmp_path):
    result = CliRunner().invoke(cli, ["demo"])
    assert result.exit_code == 0, result.output
    assert result.output == EXPECTED + "\n" + TEMP_NOTE


#: the seed program's printed trace (DESIGN.md §6), read where it lives, never copied into memfold
SEED_TRACE = Path(os.environ.get("MEMFOLD_SEED_TRACE",
                                  Path(__file__).resolve().parents[2] / "shared" / "seed" / "demo-trace.txt"))


def seed_blocks() -> list[list[str]]:
    """The trace's lines as blocks: its ``#`` header (a note about the file) and the blank line
    after it are not program output; a ``...`` line is the essay's elision (any lines)."""
    lines = SEED_TRACE.read_text(encoding="utf-8").splitlines()
    while lines and (lines[0].startswith("#") or not lines[0].strip()):
        lines.pop(0)
    blocks: list[list[str]] = [[]]
    for line in lines:
        if line == "...":
            blocks.append([])
        else:
            blocks[-1].append(line)
    return [b for b in blocks if b]


def contains_in_order(output: list[str], blocks: list[list[str]]) -> list[int]:
    """Where each block starts in ``output``: each block's lines consecutive and byte for byte,
    the blocks in order, the first at the very top. :raises AssertionError: naming the block."""
    at, starts = 0, []
    for n, block in enumerate(blocks):
        found = next((i for i in range(at, len(output) - len(block) + 1) if output[i:i + len(block)] == block),
                     None)
        assert found is not None, f"seed trace block {n} not found in order:\n" + "\n".join(block)
        assert n or found == 0, "the demo must open with the seed program's first lines"
        starts.append(found)
        at = found + len(block)
    return starts


@pytest.mark.skipif(not SEED_TRACE.exists(), reason=f"the seed trace is not at {SEED_TRACE}")
def test_memfold_demo_prints_every_line_of_the_seed_trace():
    result = CliRunner().invoke(cli, ["demo"])
    assert result.exit_code == 0, result.output
    blocks = seed_blocks()
    assert sum(len(b) for b in blocks) == 49 and len(blocks) == 8  # the whole file, not a part of it
    starts = contains_in_order(result.output.splitlines(), blocks)
    assert len(starts) == len(blocks)


def test_the_seed_matcher_fails_on_a_changed_figure():
    """The comparison above can fail: one figure off, or blocks out of order, is reported."""
    output = ["a", "b", "c", "d"]
    assert contains_in_order(output, [["a"], ["c", "d"]]) == [0, 2]
    for blocks in ([["a"], ["d", "c"]], [["b"]], [["c"], ["a"]]):
        with pytest.raises(AssertionError):
            contains_in_order(output, blocks)


def test_the_transcript_comes_from_the_engine(tmp_path):
    """The figures are memfold's: the meter is window_status, the cards are real and expand back."""
    result = run_demo(tmp_path / "demo.db")
    meter = [(r.turn, r.tokens, r.after) for r in result.meter]
    assert meter == [(1, 11, None), (2, 20, None), (3, 29, None), (4, 41, 29), (5, 40, None), (6, 49, 28),
                     (7, 39, None), (8, 49, 39), (9, 48, 37), (10, 47, 32)]
    assert [len(r.chatter_left) for r in result.meter if r.after is not None] == [1, 2, 1, 1, 0]
    assert sorted(t for r in result.meter for t in r.chatter_left) == ["t1", "t3", "t4", "t6", "t7"]
    mf = MemFold(tmp_path / "demo.db", embedder=None)
    conv = mf.conversation("ticket-42", create=False)
    ctx = conv.context(**SEED_WINDOW.to_dict())
    assert ctx.total_tokens == 32 and ctx.hot_refs == ["t9", "t10"]
    assert [t.content for t in conv.expand(ctx.refs[0], to_turns=True)][0].startswith("Hi, can I still return")
    assert conv.verify() == []
    mf.close()


def test_a_second_run_gives_identical_output(tmp_path):
    first = run_demo(tmp_path / "one.db")
    second = run_demo(tmp_path / "two.db")
    assert first.text == second.text == EXPECTED
    assert [m.to_dict() for m in first.meter] == [m.to_dict() for m in second.meter]


def test_the_demo_figures(tmp_path):
    result = run_demo(tmp_path / "demo.db")
    assert len(result.meter) == 10 and all(r.usable == 40 for r in result.meter)
    assert all((r.after or 0) <= 40 for r in result.meter)
    assert [r.turn for r in result.meter if r.after is not None] == [4, 6, 8, 9, 10]
    assert [s for _, s in result.rankings["t0"]] == [0.90, 0.70, 0.60, 0.20]
    assert [s for _, s in result.rankings["t6"]] == [0.38, 0.25, 0.21, 0.07]
    assert [s for _, s in result.rankings["final"]] == [0.60, 0.38, 0.25, 0.15]
    assert result.consolidation["facts"] == ["user.name = Dana"]
    assert result.consolidation["rules"] == ["returns after the 30-day window: apply a 10% restocking fee"]
    assert result.consolidation["statuses"] == ["consumed"] * 4


def test_python_dash_m_memfold_demo(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "memfold.demo"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == EXPECTED + "\n" + TEMP_NOTE


def test_plot_writes_a_png_of_the_meter(tmp_path):
    from PIL import Image

    png = tmp_path / "meter.png"
    result = CliRunner().invoke(cli, ["demo", "--plot", str(png)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(EXPECTED) and f"window meter drawn in {png}" in result.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    with Image.open(png) as image:
        assert image.format == "PNG" and image.size[0] >= 600 and image.size[1] >= 300
        assert len(image.convert("RGB").getcolors(maxcolors=100_000) or []) > 10  # not a blank canvas


def test_db_leaves_a_database_the_other_commands_read(tmp_path):
    db = tmp_path / "demo.db"
    runner = CliRunner()
    result = runner.invoke(cli, ["demo", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert result.output == EXPECTED + f"\ndatabase: {db} (inspect it: memfold memories {db} --all)\n"

    listed = runner.invoke(cli, ["memories", str(db), "--all", "--json"])
    assert listed.exit_code == 0, listed.output
    status = {(r["namespace"], r["content"]): r["status"] for r in json.loads(listed.output)}
    assert status[("acme/dana", "Dana prefers email contact")] == "retired"
    assert status[("acme/dana", "Dana prefers phone contact")] == "active"
    assert status[("acme/dana", "Dana mentioned it is raining today")] == "evicted"
    assert status[("acme/dana/nightly", "Dana")] == "active"
    assert status[("acme/dana/nightly", "user confirmed their name is Dana")] == "consumed"

    events = runner.invoke(cli, ["events", str(db), "--json"])
    assert events.exit_code == 0, events.output
    kinds = {e["kind"] for e in json.loads(events.output)}
    assert {"write", "retire", "evict", "consume"} <= kinds

    expanded = runner.invoke(cli, ["expand", str(db), "c6", "-c", "ticket-42", "--turns"])
    assert expanded.exit_code == 0, expanded.output
    assert "t6 [turn 6, user] Got it, that seems fair enough I suppose" in expanded.output

    mf = MemFold(db, embedder=None)
    assert [t.content for t in mf.conversation("ticket-42", create=False).history()][2] == \
        "Oh interesting, thanks for checking that for me"
    mf.close()


def test_db_refuses_an_existing_database(tmp_path):
    db = tmp_path / "demo.db"
    assert CliRunner().invoke(cli, ["demo", "--db", str(db)]).exit_code == 0
    before = db.read_bytes()
    again = CliRunner().invoke(cli, ["demo", "--db", str(db)])
    assert again.exit_code == 1 and "already exists" in again.output
    assert db.read_bytes() == before
    with pytest.raises(InvalidInput, match="already exists"):
        run_demo(db)


def test_json_output(tmp_path):
    result = CliRunner().invoke(cli, ["demo", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert "\n".join(data["lines"]) + "\n" == EXPECTED
    assert data["budget_tokens"] == 40 and len(data["meter"]) == 10
    assert data["meter"][3] == {"turn": 4, "turn_id": 4, "tokens": 41, "usable": 40, "after": 29, "cards": ["c1"],
                                "chatter_left": ["t1"]}


def test_demo_has_help():
    result = CliRunner().invoke(cli, ["demo", "--help"])
    assert result.exit_code == 0 and "--plot" in result.output and "--db" in result.output


def test_readme_shows_the_demo_output():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("<!-- section: demo -->")[1].split("<!-- /section: demo -->")[0]
    shown = section.split("```text\n")[1].split("```")[0]
    assert shown == EXPECTED + "\n" + TEMP_NOTE
