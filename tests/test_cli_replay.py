"""CLI tests for ``memfold replay`` (issue 9): help, the sample's table, ``--json OUT`` and errors."""

from __future__ import annotations

import json
import sqlite3

from click.testing import CliRunner

from memfold.cli import cli


def test_replay_help_lists_every_option():
    result = CliRunner().invoke(cli, ["replay", "--help"])
    assert result.exit_code == 0
    for option in ("--sample", "--persona", "--budget", "--json OUT", "--db", "--format", "--no-consolidate"):
        assert option in result.output


def test_replay_sample_prints_table_and_writes_json(tmp_path):
    out, db = tmp_path / "report.json", tmp_path / "s.db"
    result = CliRunner().invoke(cli, ["replay", "--sample", "--db", str(db), "--tokens", "words", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "memfold replay: generated sample history" in result.output
    assert "current-fact accuracy" in result.output and "4/4 (100%)" in result.output
    assert f"report written to {out}" in result.output
    data = json.loads(out.read_text())
    con = sqlite3.connect(db)
    assert data["figures"]["turns"] == con.execute("SELECT COUNT(*) FROM turns").fetchone()[0]
    assert data["figures"]["folds"] == con.execute("SELECT COUNT(*) FROM cards WHERE depth = 1").fetchone()[0]
    con.close()
    assert data["facts"]["correct"] == data["facts"]["compared"] == 4
    assert not (tmp_path / "sample-history.jsonl").exists()  # the generated transcript goes to a temporary folder


def test_replay_json_to_stdout(tmp_path):
    src = tmp_path / "c.jsonl"
    src.write_text('{"role": "user", "content": "my name is Ann Lee", "created_at": "2026-01-01T10:00:00+00:00"}\n'
                   '{"role": "assistant", "content": "Hello Ann", "created_at": "2026-01-01T10:01:00+00:00"}\n')
    result = CliRunner().invoke(cli, ["replay", str(src), "--tokens", "words", "--json", "-"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["figures"]["turns"] == 2 and data["figures"]["compiles"] == 1 and data["figures"]["facts_written"] == 1


def test_replay_errors_are_one_line(tmp_path):
    result = CliRunner().invoke(cli, ["replay"])
    assert result.exit_code == 1 and result.output.strip() == "Error: give a SOURCE file or folder to replay, or --sample (not both)"
    (tmp_path / "star").mkdir()
    (tmp_path / "star" / "index.tsv").write_text("dialogue_id\tstart_unix\tpersona_names\n")
    result = CliRunner().invoke(cli, ["replay", str(tmp_path / "star")])
    assert result.exit_code == 1 and "needs --persona" in result.output
