"""CLI for consolidation (issue 5): ``memfold consolidate``, ``memfold runs``, ``memfold scheduler``.
Exit codes and exact output."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner

from memfold.cli import cli

SEED = ["user asked whether a return after the window is allowed", "tool said after the window a 10% restocking fee applies",
        "user accepted the $180.00 refund on the $200 order", "user confirmed their name is Dana"]


@pytest.fixture
def seeded(tmp_path):
    db = str(tmp_path / "cli.db")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", db, "--clock", "logical", "--tokens", "words"]).exit_code == 0
    for text in SEED:
        assert runner.invoke(cli, ["remember", db, text, "-n", "acme/dana", "-t", "episodic"]).exit_code == 0
    return db


def test_consolidate_prints_the_fact_and_the_rule(seeded):
    runner = CliRunner()
    dry = runner.invoke(cli, ["consolidate", seeded, "--dry-run"])
    assert dry.exit_code == 0
    assert dry.output == (
        "dry run acme/dana [ok]: 4 sources would be consumed, would write 1 fact and 1 rule (rules-v1)\n"
        "  ~ returns after the 30-day window: apply a 10% restocking fee  <- record:1, record:2\n"
        "  ~ user.name = Dana  <- record:4\n"
    )
    result = runner.invoke(cli, ["consolidate", seeded])
    assert result.exit_code == 0
    assert result.output == (
        "run 1 acme/dana [ok]: 4 sources consumed, wrote 1 fact and 1 rule (rules-v1)\n"
        "  + returns after the 30-day window: apply a 10% restocking fee  <- record:1, record:2\n"
        "  + user.name = Dana  <- record:4\n"
    )
    again = runner.invoke(cli, ["consolidate", seeded])
    assert (again.exit_code, again.output) == (0, "nothing to consolidate\n")
    runs = runner.invoke(cli, ["runs", seeded])
    assert runs.output == "#1 acme/dana [ok] cli t=0 -> t=0: 1 batch, 4 episodes, 0 turns, 1 fact, 1 rule\n"
    memories = runner.invoke(cli, ["memories", seeded, "--all", "--json"])
    statuses = [(r["type"], r["status"]) for r in json.loads(memories.output)]
    assert statuses == [("episodic", "consumed")] * 4 + [("procedural", "active"), ("semantic", "active")]


def test_consolidate_json(seeded):
    result = CliRunner().invoke(cli, ["consolidate", seeded, "-n", "acme/dana", "--json"])
    assert result.exit_code == 0
    [run] = json.loads(result.output)
    assert (run["status"], run["episodes_consumed"], run["facts_written"], run["rules_written"]) == ("ok", 4, 1, 1)
    assert [p["content"] for p in run["proposals"]] == ["returns after the 30-day window: apply a 10% restocking fee", "Dana"]
    runs = json.loads(CliRunner().invoke(cli, ["runs", seeded, "--json"]).output)
    assert [r["id"] for r in runs] == [1]


def test_llm_extractor_without_endpoint_is_one_line_error(seeded, monkeypatch):
    monkeypatch.delenv("MEMFOLD_LLM_BASE_URL", raising=False)
    result = CliRunner().invoke(cli, ["consolidate", seeded, "--extractor", "llm"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: the LLM extractor needs an endpoint") and result.output.count("\n") == 1


def test_missing_database_is_an_error(tmp_path):
    result = CliRunner().invoke(cli, ["consolidate", str(tmp_path / "nope.db")])
    assert result.exit_code == 1 and "no database at" in result.output


@pytest.mark.parametrize("command", [["consolidate"], ["runs"], ["scheduler"], ["scheduler", "run"], ["scheduler", "status"]])
def test_every_command_has_help(command):
    result = CliRunner().invoke(cli, command + ["--help"])
    assert result.exit_code == 0 and "Usage:" in result.output and len(result.output.splitlines()) > 3


def test_scheduler_run_foreground_stops_cleanly_on_sigint_and_status_shows_the_job(seeded):
    proc = subprocess.Popen([sys.executable, "-c", "from memfold.cli import cli; cli()", "scheduler", "run", seeded, "--timezone", "Europe/Paris"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline()
    assert first.startswith("scheduler started: next_run ")
    assert first.rstrip().endswith(("03:00:00+01:00", "03:00:00+02:00"))  # 03:00 Paris time (CET or CEST)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=240)  # a stop finishes the running pass: generous on a loaded machine
    assert proc.returncode == 0, err
    assert out == "scheduler stopped\n"
    status = CliRunner().invoke(cli, ["scheduler", "status", seeded, "--json"])
    info = json.loads(status.output)
    assert info["job"]["id"] == "memfold-consolidation" and "hour='3'" in info["job"]["trigger"]
    assert info["leases"] == []
