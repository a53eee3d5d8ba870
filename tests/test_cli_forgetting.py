"""CLI for forgetting: memories --top, pin, unpin, retire, revert, events, policy (issue 3 point 6).
Exit codes and exact output; --json on each; errors as one line."""

import json

import pytest
from click.testing import CliRunner

from memfold.cli import cli

NS = "acme/dana"


@pytest.fixture
def runner():
    return CliRunner()


@pytest.fixture
def db(tmp_path, runner):
    path = str(tmp_path / "forget.db")
    assert runner.invoke(cli, ["init", path, "--clock", "logical", "--tokens", "words"]).exit_code == 0
    return path


def run(runner, *args):
    result = runner.invoke(cli, list(args))
    return result


def remember(runner, db, text, importance, key=None):
    args = ["remember", db, text, "-n", NS, "-t", "semantic", "-i", str(importance)]
    if key:
        args += ["-k", key]
    result = run(runner, *args)
    assert result.exit_code == 0, result.output
    return result.output


def test_commands_exist_with_help(runner):
    for name in ("pin", "unpin", "retire", "revert", "events", "policy"):
        result = run(runner, name, "--help")
        assert result.exit_code == 0 and "Usage:" in result.output, name
    assert "--top" in run(runner, "memories", "--help").output


def test_policy_top_and_supersession(runner, db):
    result = run(runner, "policy", db, "-n", NS, "-t", "semantic")
    assert result.output == f"{NS} semantic: capacity unbounded, half-life 4 ticks (default), access weight 0.1\n"
    result = run(runner, "policy", db, "-n", NS, "-t", "semantic", "--capacity", "2", "--half-life", "4",
                 "--access-weight", "0.1", "--json")
    assert result.exit_code == 0
    assert json.loads(result.output) == {"namespace": NS, "type": "semantic", "capacity": 2, "half_life": 4.0,
                                         "access_weight": 0.1, "effective_half_life": 4.0, "evicted": []}
    remember(runner, db, "the user is Dana", 0.9, key="user.name")
    remember(runner, db, "Dana prefers email contact", 0.6, key="user.contact_preference")
    out = remember(runner, db, "Dana prefers phone contact", 0.6, key="user.contact_preference")
    assert out == ("wrote record 3 (semantic, key user.contact_preference) in acme/dana\n"
                   "retired record 2 (superseded by 3)\n")
    out = remember(runner, db, "dana prefers PHONE contact.", 0.5, key="user.contact_preference")
    assert out == "refreshed record 3 (semantic, key user.contact_preference) in acme/dana\n"
    out = remember(runner, db, "Dana mentioned it is raining today", 0.2)
    # capacity 2: the phone fact (0.60) scores below the name (0.90); the new record is protected
    assert out == "wrote record 4 (semantic) in acme/dana\nevicted record 3 (over capacity)\n"
    result = run(runner, "memories", db, "-n", NS, "--top", "5")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0].startswith("0.9000  #1 [active] semantic user.name importance=0.90")
    assert lines[1].startswith("0.2000  #4 [active] semantic importance=0.20")
    assert len(lines) == 2
    result = run(runner, "memories", db, "-n", NS, "--top", "1", "--json")
    (top,) = json.loads(result.output)
    assert (top["id"], top["score"], top["access_count"]) == (1, 0.9, 0)
    result = run(runner, "memories", db, "--all")
    assert "#2 [retired] acme/dana semantic user.contact_preference importance=0.60 written t=0: Dana prefers email " \
           "contact (superseded by #3)" in result.output  # no --namespace: each line names its namespace
    assert "#3 [evicted] acme/dana semantic user.contact_preference" in result.output
    result = run(runner, "memories", db, "--status", "evicted", "--json")
    assert [r["id"] for r in json.loads(result.output)] == [3]


def test_top_touch_counts_reads(runner, db):
    remember(runner, db, "fact", 0.5)
    run(runner, "memories", db, "-n", NS, "--top", "1", "--touch")
    result = run(runner, "memories", db, "-n", NS, "--top", "1", "--json")
    assert json.loads(result.output)[0]["access_count"] == 1
    result = run(runner, "memories", db, "-n", NS, "--top", "1", "--at", "4", "--json")
    assert json.loads(result.output)[0]["score"] == pytest.approx(0.5 * 0.5 * 1.1)


def test_pin_unpin_retire_revert_and_events(runner, db):
    remember(runner, db, "Dana prefers email contact", 0.6, key="user.contact_preference")
    result = run(runner, "pin", db, "1")
    assert result.exit_code == 0
    assert result.output == ("pinned #1 [active pinned] semantic user.contact_preference importance=0.60 "
                             "written t=0: Dana prefers email contact\n")
    assert json.loads(run(runner, "unpin", db, "1", "--json").output)["pinned"] is False
    result = run(runner, "retire", db, "1", "--cause", "customer asked")
    assert result.output.startswith("retired #1 [retired] semantic")
    result = run(runner, "revert", db, "1", "--json")
    assert json.loads(result.output)["status"] == "active"
    result = run(runner, "events", db)
    assert result.exit_code == 0
    assert result.output == (
        "#1 t=0 write record:1: write\n"
        "#2 t=0 pin record:1: manual\n"
        "#3 t=0 unpin record:1: manual\n"
        "#4 t=0 retire record:1: customer asked\n"
        "#5 t=0 revert record:1: manual\n"
    )
    events = json.loads(run(runner, "events", db, "--kind", "retire", "--json").output)
    assert [(e["kind"], e["record_id"], e["cause"]) for e in events] == [("retire", 1, "customer asked")]
    assert len(json.loads(run(runner, "events", db, "--record", "1", "--limit", "2", "--json").output)) == 2


@pytest.mark.parametrize("args,message", [
    (["revert", "{db}", "1"], "Error: record 1 is active: only a retired or evicted record can be reverted"),
    (["retire", "{db}", "99"], "Error: no memory record with id 99"),
    (["memories", "{db}", "--top", "3"], "Error: --top ranks one namespace: add --namespace NS"),
    (["policy", "{db}", "-n", NS, "-t", "semantic", "--half-life", "0"], "Error: half_life must be > 0, got 0.0"),
    (["policy", "{db}", "-n", NS, "-t", "semantic", "--capacity", "2", "--unbounded"],
     "Error: give either --capacity N or --unbounded, not both"),
    (["memories", "{db}", "-n", NS, "--top", "1", "--at", "soon"], "Error: --at 'soon' is neither a number"),
])
def test_errors_are_one_line_and_exit_1(runner, db, args, message):
    remember(runner, db, "fact", 0.5)
    result = runner.invoke(cli, [a.replace("{db}", db) for a in args])
    assert result.exit_code == 1
    assert result.output.startswith(message) and result.output.count("\n") == 1


def test_pinned_store_full_is_an_error(runner, db):
    run(runner, "policy", db, "-n", NS, "-t", "semantic", "--capacity", "1")
    result = run(runner, "remember", db, "kept", "-n", NS, "-t", "semantic", "--pinned")
    assert result.exit_code == 0
    result = run(runner, "remember", db, "no room", "-n", NS, "-t", "semantic")
    assert result.exit_code == 1 and "pinned, so nothing can be evicted" in result.output
