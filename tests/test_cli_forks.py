"""``memfold fork`` and ``memfold clear`` (issue 15): exit codes and exact output."""

from __future__ import annotations

import json

from click.testing import CliRunner

import memfold
from memfold.cli import cli


def seeded(path):
    mf = memfold.MemFold(path, clock=memfold.LogicalClock(), token_counter="words", embedder=None)
    conv = mf.conversation("t-1", namespace="acme/dana")
    for text in ("hello", "Never call me after 6pm.", "thanks"):
        conv.append({"role": "user", "content": text})
    mf.remember("acme/dana", "semantic", "Dana prefers email", key="user.contact")
    mf.close()


def test_fork_prints_what_it_made(tmp_path):
    db = str(tmp_path / "f.db")
    seeded(db)
    runner = CliRunner()
    result = runner.invoke(cli, ["fork", db, "t-1", "t-1b", "--at", "2"])
    assert result.exit_code == 0, result.output
    assert result.output == "forked t-1 into t-1b after seq 2: 2 catalog items, 1 protected records copied\n"
    result = runner.invoke(cli, ["fork", db, "t-1", "t-1c", "--namespace", "acme/sandbox", "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert info["fork_after_seq"] == 3 and info["records_copied"] == 1 and info["protected_copied"] == 1
    result = runner.invoke(cli, ["fork", db, "t-1", "t-1b"])
    assert result.exit_code == 1 and "already exists" in result.output
    result = runner.invoke(cli, ["fork", db, "nope", "x"])
    assert result.exit_code == 1 and "nope" in result.output
    result = runner.invoke(cli, ["fork", db, "t-1", "t-1d", "--at", "9"])
    assert result.exit_code == 1 and "fork point 9" in result.output


def test_clear_starts_a_new_session(tmp_path):
    db = str(tmp_path / "c.db")
    seeded(db)
    runner = CliRunner()
    result = runner.invoke(cli, ["clear", db, "t-1", "t-2"])
    assert result.exit_code == 0, result.output
    assert result.output == ("started t-2, a new session in family t-1 (namespace acme/dana); "
                             "t-1's history stays searchable\n")
    result = runner.invoke(cli, ["clear", db, "t-1", "t-3", "--json"])
    assert json.loads(result.output) == {"id": "t-3", "family": "t-1", "namespace": "acme/dana", "parent": "t-1"}
    result = runner.invoke(cli, ["history", db, "-c", "t-2"])
    assert result.exit_code == 0 and "hello" not in result.output
