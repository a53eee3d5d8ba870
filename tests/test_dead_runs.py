"""Dead consolidation runs (issue 13, point 7): a pass whose holder died is closed as
``abandoned`` when the next fire takes its place, ``memfold runs`` shows it so, and the next pass
redoes the work. The dying holder is a real process killed with SIGKILL while its extractor waits
on the real-HTTP-server LLM stand-in; no sleep synchronises anything (the lease's expiry is
reached with a clock that reads a minute ahead, not by waiting)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import memfold
from memfold.consolidation import lease
from memfold.consolidation.scheduler import JOB_ID, SchedulerSettings, run_job, run_trigger
from memfold.memory.clock import SystemClock
from memfold.nightly import run_scheduled_job

NS = "acme/dana"
EVERY_SECOND = {"second": "*"}


class MinuteAhead(SystemClock):
    """Real time, one minute on: every lease taken now has expired by this clock."""

    ahead = 60.0

    def now(self) -> float:
        return super().now() + self.ahead


class TwoMinutesAhead(MinuteAhead):
    """A later fire time than any :class:`MinuteAhead` call made in the same second."""

    ahead = 120.0


def seed(db_path, n=6):
    with memfold.MemFold(db_path, clock=memfold.LogicalClock(), token_counter="words") as mf:
        for i in range(n):
            mf.memory.write(NS, "episodic", f"user: I love board game {i}")


def wait_for(predicate, what, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)  # polling a condition, not synchronising by time
    raise AssertionError(f"timed out waiting for {what}")


DYING = textwrap.dedent("""
    import sys
    from memfold.consolidation.scheduler import SchedulerSettings
    from memfold.nightly import run_scheduled_job
    settings = SchedulerSettings(cron={"second": "*"}, extractor="llm", lease_seconds=5, batch_size=3)
    run_scheduled_job(sys.argv[1], settings.to_dict())
""")


def test_a_killed_pass_is_abandoned_shown_and_redone_by_the_next_fire(db_path, llm_server):
    seed(db_path)
    llm_server.queue("[]", delay=300)  # the dying pass waits on its model call until it is killed
    env = dict(os.environ, MEMFOLD_LLM_BASE_URL=llm_server.base_url, MEMFOLD_LLM_MODEL="stand-in",
               MEMFOLD_LLM_TIMEOUT="600")
    proc = subprocess.Popen([sys.executable, "-c", DYING, str(db_path)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: llm_server.requests or proc.poll() is not None, "the pass to call its model")
        assert proc.poll() is None, proc.stderr.read()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with memfold.MemFold(db_path, clock=memfold.LogicalClock(), token_counter="words") as mf:
        [dead_run] = mf.runs()
        assert dead_run.status == "running" and dead_run.episodes_consumed == 0
        [dead_lease] = lease.list_leases(mf.storage, JOB_ID)
        assert dead_lease.finished_at is None

    result = run_scheduled_job(db_path, SchedulerSettings(cron=EVERY_SECOND, batch_size=3).to_dict(),
                               clock=MinuteAhead())
    assert result["ran"] and [(a["holder"], a["runs"]) for a in result["abandoned"]] == [(dead_lease.holder, 1)]
    with memfold.MemFold(db_path, clock=memfold.LogicalClock(), token_counter="words") as mf:
        first, second = mf.runs()
        assert first.id == dead_run.id and first.status == "abandoned" and first.finished_at is not None
        assert first.errors == [f"abandoned: the lease of {dead_lease.holder} expired"]
        assert second.status == "ok" and second.episodes_consumed == 6  # the next fire redid the work
        assert [x.outcome for x in lease.list_leases(mf.storage, JOB_ID)] == ["abandoned", "ok"]
    shown = subprocess.run([sys.executable, "-c", "from memfold.cli import main; main()", "runs", str(db_path)],
                           capture_output=True, text=True)
    assert shown.returncode == 0 and f"#{dead_run.id} {NS} [abandoned]" in shown.stdout, shown.stderr
    # a later fire time (a MinuteAhead call in the same second would find this fire time's lease taken)
    again = run_scheduled_job(db_path, SchedulerSettings(cron=EVERY_SECOND).to_dict(), clock=TwoMinutesAhead())
    assert again["ran"] and again["abandoned"] == []  # closed once


def test_a_fire_taken_over_from_a_dead_holder_closes_its_runs(db_path):
    seed(db_path, n=3)
    settings = SchedulerSettings(cron=EVERY_SECOND, lease_seconds=5)
    fire = float(int(time.time()))
    with memfold.MemFold(db_path, clock=memfold.LogicalClock(), token_counter="words") as mf:
        assert lease.acquire(mf.storage, JOB_ID, fire, "ghost", ttl_seconds=5, now=fire)
        with mf.storage.transaction():
            ghost_run = mf.storage.runs.start_run(NS, "rules", run_trigger(settings, fire), 0)
        other_run = mf.consolidate(NS).id  # a manual run is nobody's lease: never abandoned
        result = run_job(mf.consolidation_parts, settings.to_dict(), clock=MinuteAhead(), fired_at=fire)
    assert result["ran"] and [(a["holder"], a["runs"]) for a in result["abandoned"]] == [("ghost", 1)]
    with memfold.MemFold(db_path, clock=memfold.LogicalClock(), token_counter="words") as mf:
        runs = {r.id: r for r in mf.runs()}
        assert runs[ghost_run].status == "abandoned" and runs[other_run].status == "ok"
        [held] = lease.list_leases(mf.storage, JOB_ID)
        assert (held.fire_time, held.outcome) == (fire, "ok")  # taken over, then finished by the new holder
