"""CLI for the foundation: init, ingest, history, remember, memories, export; --help, --json, errors."""

import json
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from memfold.cli import cli


@pytest.fixture
def runner():
    return CliRunner()


@pytest.fixture
def cli_db(tmp_path, runner):
    path = str(tmp_path / "cli.db")
    result = runner.invoke(cli, ["init", path, "--clock", "logical", "--tokens", "words"])
    assert result.exit_code == 0, result.output
    return path


def write_jsonl(path, messages):
    path.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")


def test_every_command_has_help(runner):
    result = runner.invoke(cli, ["--help"])
    assert result.exit_code == 0
    names = sorted(cli.commands)
    assert {"init", "ingest", "history", "remember", "memories", "export"} <= set(names)

    assert (cli.help or "").strip() and "Commands:" in result.output
    seen = []

    def walk(group, prefix):
        for name, command in group.commands.items():
            res = runner.invoke(cli, prefix + [name, "--help"])
            assert res.exit_code == 0, (name, res.output)
            assert "Usage:" in res.output
            assert (command.help or "").strip(), f"{name} has no help text"
            # the first line of the help text is what --help shows, and so is every option's help
            assert command.help.strip().splitlines()[0].split()[0] in res.output
            for param in command.params:
                if isinstance(param, click.Option) and not param.hidden:
                    assert (param.help or "").strip(), f"memfold {' '.join(prefix + [name])} {param.opts[0]} has no help"
            seen.append(" ".join(prefix + [name]))
            if hasattr(command, "commands"):
                walk(command, prefix + [name])

    walk(cli, [])
    assert {"protect add", "scheduler run", "window"} <= set(seen)  # subcommands are walked too


def test_init_output(runner, tmp_path):
    path = str(tmp_path / "new.db")
    result = runner.invoke(cli, ["init", path, "--clock", "logical", "--tokens", "words", "--json"])
    assert result.exit_code == 0
    info = json.loads(result.output)
    assert info["clock"] == "logical" and info["token_counter"] == "words" and info["schema_version"] >= 1


def test_ingest_history_export_round_trip(runner, cli_db, tmp_path):
    src = tmp_path / "t.jsonl"
    messages = [{"role": "user", "content": "Hi, I'm Dana"}, {"role": "assistant", "content": "Hello Dana"}]
    write_jsonl(src, messages)
    result = runner.invoke(cli, ["ingest", cli_db, "--conversation", "t1", str(src)])
    assert result.exit_code == 0
    assert result.output == "appended 2 turns to t1\n"
    result = runner.invoke(cli, ["history", cli_db, "-c", "t1"])
    assert result.output == "[1] #1 t=0 user: Hi, I'm Dana\n[2] #2 t=0 assistant: Hello Dana\n"
    result = runner.invoke(cli, ["history", cli_db, "-c", "t1", "--json"])
    data = json.loads(result.output)
    assert [d["content"] for d in data] == ["Hi, I'm Dana", "Hello Dana"]
    assert all(d["sha256"].startswith("sha256:") for d in data)
    result = runner.invoke(cli, ["export", cli_db, "-c", "t1"])
    assert [json.loads(line) for line in result.output.splitlines()] == messages


def test_ingest_malformed_file_imports_nothing(runner, cli_db, tmp_path):
    src = tmp_path / "bad.jsonl"
    src.write_text('{"role": "user", "content": "ok"}\n{"role": "user", "content": \n', encoding="utf-8")
    result = runner.invoke(cli, ["ingest", cli_db, "-c", "t1", str(src)])
    assert result.exit_code == 1
    assert "line 2: not valid JSON" in result.output
    result = runner.invoke(cli, ["history", cli_db, "-c", "t1", "--json"])
    assert result.exit_code == 1 and "no conversation 't1'" in result.output  # not even an empty one


def test_remember_and_memories(runner, cli_db):
    result = runner.invoke(cli, ["remember", cli_db, "Dana prefers email contact", "-n", "acme/dana",
                                 "-t", "semantic", "-k", "user.contact_preference", "-i", "0.6"])
    assert result.exit_code == 0
    assert result.output == "wrote record 1 (semantic, key user.contact_preference) in acme/dana\n"
    result = runner.invoke(cli, ["memories", cli_db, "-n", "acme/dana"])
    assert "#1 [active] semantic user.contact_preference importance=0.60" in result.output
    assert "Dana prefers email contact" in result.output
    result = runner.invoke(cli, ["memories", cli_db, "--json"])
    (record,) = json.loads(result.output)
    assert record["key"] == "user.contact_preference" and record["importance"] == 0.6


@pytest.mark.parametrize(
    "args,message",
    [
        (["remember", "{db}", "  ", "-n", "ns", "-t", "semantic"], "content is empty"),
        (["remember", "{db}", "x", "-n", "ns", "-t", "semantic", "-i", "2"], "importance 2.0 is outside [0, 1]"),
        (["remember", "{db}", "x", "-n", "", "-t", "semantic"], "namespace is empty"),
        (["history", "{db}", "-c", "missing"], "no conversation 'missing'"),
        (["memories", "{missing}"], "no database at"),
    ],
)
def test_errors_are_one_line_and_nonzero(runner, cli_db, tmp_path, args, message):
    args = [a.format(db=cli_db, missing=str(tmp_path / "missing.db")) for a in args]
    result = runner.invoke(cli, args)
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ")
    assert message in lines[0]


def test_db_from_environment(runner, cli_db):
    result = runner.invoke(cli, ["memories", "--json"], env={"MEMFOLD_DB": cli_db})
    assert result.exit_code == 0
    assert json.loads(result.output) == []


def test_console_script_errors_go_to_stderr(cli_db):
    proc = subprocess.run(["memfold", "history", cli_db, "-c", "nope"], capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.strip().count("\n") == 0 and "no conversation 'nope'" in proc.stderr


def test_cli_import_does_not_load_torch():
    code = "import sys, memfold.cli; print('torch' in sys.modules, 'sentence_transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False False"


def test_ingest_accepts_aware_iso_created_at_as_replay_and_due_do(runner, tmp_path):
    """Issue 20, point 4: ISO-8601 text with a UTC offset is a time on a system-clock database; a
    naive one, or text on a logical-clock database, is refused naming the line, nothing written."""
    db = str(tmp_path / "sys.db")
    assert runner.invoke(cli, ["init", db, "--tokens", "words"]).exit_code == 0
    src = tmp_path / "t.jsonl"
    write_jsonl(src, [{"role": "user", "content": "hi", "created_at": "2026-01-31T12:00:00+01:00"},
                      {"role": "assistant", "content": "hello", "created_at": "2026-01-31T11:00:30Z"},
                      {"role": "user", "content": "bye", "created_at": 1769860900}])
    result = runner.invoke(cli, ["ingest", db, "-c", "t1", str(src)])
    assert result.exit_code == 0, result.output
    data = json.loads(runner.invoke(cli, ["history", db, "-c", "t1", "--json"]).output)
    assert [d["created_at"] for d in data] == [1769857200.0, 1769857230.0, 1769860900.0]

    write_jsonl(src, [{"role": "user", "content": "ok"}, {"role": "user", "content": "x",
                                                           "created_at": "2026-01-31T12:00:00"}])
    result = runner.invoke(cli, ["ingest", db, "-c", "t2", str(src)])
    assert result.exit_code == 1 and "line 2" in result.output and "no UTC offset" in result.output
    write_jsonl(src, [{"role": "user", "content": "x", "created_at": "last tuesday"}])
    result = runner.invoke(cli, ["ingest", db, "-c", "t2", str(src)])
    assert result.exit_code == 1 and "not an ISO-8601 time" in result.output
    assert runner.invoke(cli, ["history", db, "-c", "t2"]).exit_code == 1  # nothing was written

    logical = str(tmp_path / "logical.db")
    assert runner.invoke(cli, ["init", logical, "--clock", "logical", "--tokens", "words"]).exit_code == 0
    write_jsonl(src, [{"role": "user", "content": "x", "created_at": "2026-01-31T12:00:00+00:00"}])
    result = runner.invoke(cli, ["ingest", logical, "-c", "t1", str(src)])
    assert result.exit_code == 1 and "number of ticks" in result.output
