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

EXPECTED = (Path(__file__).parent / "data" / "demo_expected.txt").read_text(encoding="utf-8")
TEMP_NOTE = "database: a temporary file, now deleted (keep one with --db PATH)\n"


def test_a_full_run_prints_the_stored_transcript(tmp_path):
    result = CliRunner().invoke(cli, ["demo"])
    assert result.exit_code == 0, result.output
    assert result.output == EXPECTED + "\n" + TEMP_NOTE


def test_the_transcript_shows_every_figure_the_issue_asks_for():
    """The stored transcript itself holds the seed figures (so it cannot be re-blessed blindly)."""
    assert "turn  4: window 41/40 OVER" in EXPECTED
    assert "1 chatter turn left the window (t4)" in EXPECTED and "1 chatter turn left the window (t7)" in EXPECTED
    warm = EXPECTED.split("warm (depth-1 cards")[1].split("hot (")[0]
    assert "$180.00 (200 * 0.9 after the fee)" in warm
    final = EXPECTED.split("Final window:")[1].split("Nothing is lost")[0]
    assert "Oh interesting" not in final and "fair enough" not in final
    assert " * t4 user: Oh interesting, thanks for checking that for me" in EXPECTED
    assert " * t7 user: Got it, that seems fair enough I suppose" in EXPECTED
    for figures in ("0.90 / 0.70 / 0.60 / 0.20", "0.38 / 0.25 / 0.21 / 0.07", "0.60 / 0.38 / 0.25 / 0.15"):
        assert f"  -> {figures}\n" in EXPECTED
    assert "[retired] Dana prefers email contact" in EXPECTED and "[active] Dana prefers phone contact" in EXPECTED
    assert "user.name = Dana" in EXPECTED
    assert "returns after the 30-day window: apply a 10% restocking fee" in EXPECTED
    assert EXPECTED.count("[consumed]") == 4


def test_a_second_run_gives_identical_output(tmp_path):
    first = run_demo(tmp_path / "one.db")
    second = run_demo(tmp_path / "two.db")
    assert first.text == second.text == EXPECTED
    assert [m.to_dict() for m in first.meter] == [m.to_dict() for m in second.meter]


def test_the_demo_figures(tmp_path):
    result = run_demo(tmp_path / "demo.db")
    assert len(result.meter) == 10 and all(r.usable == 40 for r in result.meter)
    assert all((r.after or 0) <= 40 for r in result.meter)
    assert [r.turn for r in result.meter if r.after is not None] == [4, 5, 6, 9]
    assert sorted(t for r in result.meter for t in r.chatter_left) == ["t4", "t7"]
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

    expanded = runner.invoke(cli, ["expand", str(db), "c5", "-c", "ticket-42", "--turns"])
    assert expanded.exit_code == 0, expanded.output
    assert "t7 [turn 7, user] Got it, that seems fair enough I suppose" in expanded.output

    mf = MemFold(db, embedder=None)
    assert [t.content for t in mf.conversation("ticket-42", create=False).history()][3] == \
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
    assert data["meter"][3] == {"turn": 4, "turn_id": 4, "tokens": 41, "usable": 40, "after": 37, "cards": ["c1"],
                                "folded": ["t1"], "chatter_left": []}


def test_demo_has_help():
    result = CliRunner().invoke(cli, ["demo", "--help"])
    assert result.exit_code == 0 and "--plot" in result.output and "--db" in result.output


def test_readme_shows_the_demo_output():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("<!-- section: demo -->")[1].split("<!-- /section: demo -->")[0]
    shown = section.split("```text\n")[1].split("```")[0]
    assert shown == EXPECTED + "\n" + TEMP_NOTE
