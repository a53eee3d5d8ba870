"""CLI: memfold protect add/list/satisfy/expire/revoke/supersede and memfold erase (issue 8)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import memfold
from memfold.cli import cli


@pytest.fixture
def db(tmp_path):
    path = str(tmp_path / "cli.db")
    result = CliRunner().invoke(cli, ["init", path, "--clock", "logical", "--tokens", "words"])
    assert result.exit_code == 0, result.output
    return path


def run(*args, input=None):
    return CliRunner().invoke(cli, list(args), input=input)


def test_add_and_list(db):
    r = run("protect", "add", db, "Never delete the backups.", "-n", "acme")
    assert r.exit_code == 0 and r.output == "added P1 [active] constraint (namespace acme): Never delete the backups.\n"
    r = run("protect", "add", db, "Ship the fix.", "-n", "acme", "-k", "deadline", "--due", "5", "--label", "ops", "--json")
    data = json.loads(r.output)
    assert (data["kind"], data["due_at"], data["labels"], data["scope"]) == ("deadline", 5.0, ["ops"], "namespace")
    r = run("protect", "list", db)
    assert r.output == ("P1 [active] constraint (namespace acme): Never delete the backups.\n"
                        "P2 [active] deadline (namespace acme due t=5 labels=ops): Ship the fix.\n")
    r = run("protect", "list", db, "--reader", "sales", "--json")
    assert [d["id"] for d in json.loads(r.output)] == [1]


@pytest.mark.parametrize("verb, state", [("satisfy", "satisfied"), ("expire", "expired"), ("revoke", "revoked")])
def test_transitions(db, verb, state):
    run("protect", "add", db, "Never delete the backups.", "-n", "acme")
    r = run("protect", verb, db, "1", "--cause", "done", "--json")
    assert r.exit_code == 0 and json.loads(r.output)["state"] == state
    assert run("protect", "list", db).output == "no protected records\n"
    again = run("protect", verb, db, "1")
    assert again.exit_code == 1
    assert again.output.strip() == f"Error: protected record 1 is {state}, not active: only an active record can become {state}"


def test_supersede(db):
    run("protect", "add", db, "Ship with carrier A.", "-n", "acme", "-k", "policy_state")
    r = run("protect", "supersede", db, "1", "Ship with carrier B.")
    assert r.output == "P1 superseded by P2 [active] policy_state (namespace acme): Ship with carrier B.\n"
    r = run("protect", "list", db, "--state", "all", "--json")
    assert [(d["id"], d["state"], d["superseded_by"]) for d in json.loads(r.output)] == [(1, "superseded", 2), (2, "active", None)]


def test_bad_input_is_one_line(db):
    r = run("protect", "add", db, "   ", "-n", "acme")
    assert r.exit_code == 1 and r.output == "Error: protected text is empty or whitespace only: give some text\n"
    r = run("protect", "add", db, "x")
    assert r.exit_code == 1 and "needs a scope" in r.output
    r = run("protect", "satisfy", db, "42")
    assert r.exit_code == 1 and r.output == "Error: no protected record with id 42\n"


def test_erase_asks_for_confirmation(db, tmp_path):
    with memfold.MemFold(db, embedder=None) as m:
        m.conversation("t", namespace="acme").append({"role": "user", "content": "my pin is 4417-secret"})
    r = run("erase", db, "-c", "t", input="n\n")
    assert r.exit_code == 1 and "erase 1 turn, 0 records, 0 protected records, 0 cards? This cannot be undone" in r.output
    assert r.output.strip().endswith("Error: nothing erased")
    with memfold.MemFold(db, embedder=None) as m:
        assert m.conversation("t").history()[0].content == "my pin is 4417-secret"
    r = run("erase", db, "-c", "t", input="y\n")
    assert r.exit_code == 0 and r.output.strip().endswith("erased 1 turn, 0 records, 0 protected records, 0 cards (file vacuumed)")
    r = run("erase", db, "-n", "acme", "--yes", "--json")
    assert json.loads(r.output)["counts"] == {"turns": 0, "records": 0, "protected": 0, "cards": 0}
    assert b"4417-secret" not in open(db, "rb").read()


def test_erase_without_scope_fails(db):
    r = run("erase", db, "--yes")
    assert r.exit_code == 1 and "erase needs a scope" in r.output


def test_every_command_has_help():
    for args in (["protect"], ["protect", "add"], ["protect", "list"], ["protect", "satisfy"], ["protect", "expire"],
                 ["protect", "revoke"], ["protect", "supersede"], ["erase"]):
        r = run(*args, "--help")
        assert r.exit_code == 0 and "Usage:" in r.output
