"""Which files the CLI and the facade agree to open, ingest's all-or-nothing on a new conversation,
and the logical clock across CLI processes."""

import json
import sqlite3

import pytest
from click.testing import CliRunner

from memfold import LogicalClock, MemFold, StorageError
from memfold.cli import cli


@pytest.fixture
def runner():
    return CliRunner()


def one_error_line(result):
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 1 and len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


def test_another_applications_database_is_refused_untouched(tmp_path, runner):
    foreign = tmp_path / "app.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE users (id INTEGER)")
    conn.commit()
    conn.close()
    for args in (["memories", str(foreign)], ["init", str(foreign)]):
        line = one_error_line(runner.invoke(cli, args))
        assert "is not a memfold database: it holds other tables (users)" in line
    with pytest.raises(StorageError, match="holds other tables"):
        MemFold(foreign, clock=LogicalClock())
    tables = {r[0] for r in sqlite3.connect(foreign).execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"users"}


def test_read_commands_refuse_an_empty_file_but_init_creates(tmp_path, runner):
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    line = one_error_line(runner.invoke(cli, ["memories", str(empty)]))
    assert line == f"Error: {empty} is not a memfold database (it is empty): create it with 'memfold init {empty}'"
    assert runner.invoke(cli, ["init", str(empty)]).exit_code == 0
    assert runner.invoke(cli, ["memories", str(empty)]).output == "no records\n"


def test_directory_is_refused(tmp_path, runner):
    result = runner.invoke(cli, ["memories", str(tmp_path)])
    assert result.exit_code != 0 and "directory" in result.output


def test_failed_ingest_leaves_no_new_conversation(tmp_path, runner):
    db = str(tmp_path / "x.db")
    runner.invoke(cli, ["init", db, "--tokens", "words"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "user", "content": "fine"}\n{"role": "user", "content": "a\\u0000b"}\n', encoding="utf-8")
    line = one_error_line(runner.invoke(cli, ["ingest", db, "-c", "fresh", str(bad)]))
    assert "line 2" in line and "NUL byte" in line
    line = one_error_line(runner.invoke(cli, ["history", db, "-c", "fresh"]))
    assert "no conversation 'fresh'" in line
    with MemFold(db) as mf:
        assert mf.conversations() == []


def test_init_again_keeps_the_files_clock_and_counter(tmp_path, runner):
    db = str(tmp_path / "l.db")
    runner.invoke(cli, ["init", db, "--clock", "logical", "--tokens", "words"])
    result = runner.invoke(cli, ["init", db, "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert info["clock"] == "logical" and info["token_counter"] == "words"


def test_logical_clock_advances_across_commands_and_records_decay(tmp_path, runner):
    db = str(tmp_path / "l.db")
    runner.invoke(cli, ["init", db, "--clock", "logical", "--tokens", "words"])
    runner.invoke(cli, ["remember", db, "Dana prefers email", "-n", "a", "-t", "semantic", "-i", "0.8"])
    assert runner.invoke(cli, ["clock", db, "--advance", "4"]).output == "logical clock at t=4\n"
    assert runner.invoke(cli, ["clock", db]).output == "logical clock at t=4\n"
    runner.invoke(cli, ["policy", db, "-n", "a", "-t", "semantic", "--half-life", "4"])
    top = json.loads(runner.invoke(cli, ["memories", db, "-n", "a", "--top", "1", "--json"]).output)
    assert round(top[0]["score"], 2) == 0.40  # 0.8 x 0.5^(4/4): one half-life passed between commands
    runner.invoke(cli, ["remember", db, "a later fact", "-n", "a", "-t", "semantic"])
    with MemFold(db) as mf:
        assert [r.written_at for r in mf.memory.list("a")] == [0.0, 4.0]


def test_system_clock_cannot_be_advanced(tmp_path, runner):
    db = str(tmp_path / "s.db")
    runner.invoke(cli, ["init", db])
    line = one_error_line(runner.invoke(cli, ["clock", db, "--advance", "3"]))
    assert "only a logical clock can be advanced" in line
