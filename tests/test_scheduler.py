"""The nightly job (issue 5, point 4) with the real APScheduler 3.x: cron defaults and timezone,
the persisted job under a fixed id, a restart after a missed fire time, several worker
processes running each fire time once, leases that expire, clean shutdown on SIGTERM."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

import memfold
from memfold.consolidation import lease
from memfold.consolidation.scheduler import (
    JOB_ID,
    JOBS_TABLE,
    ConsolidationScheduler,
    SchedulerSettings,
    latest_fire_time,
)

NS = "acme/dana"


def seed(db_path, n=3):
    with memfold.MemFold(db_path, clock=memfold.LogicalClock(), token_counter="words") as mf:
        for i in range(n):
            mf.memory.write(NS, "episodic", f"user: I love board game {i}")


def wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_default_is_03_00_every_night_in_the_configured_timezone(db_path):
    seed(db_path)
    s = ConsolidationScheduler(db_path, SchedulerSettings(timezone="Europe/Paris"))
    try:
        nxt = s.start()
    finally:
        s.shutdown()
    local = nxt.astimezone(ZoneInfo("Europe/Paris"))
    assert (local.hour, local.minute, local.second) == (3, 0, 0)


def test_settings_reject_bad_input():
    with pytest.raises(memfold.InvalidInput, match="timezone"):
        SchedulerSettings(timezone="Mars/Olympus")
    with pytest.raises(memfold.InvalidInput, match="cron"):
        SchedulerSettings(cron="61 3 * * *")
    with pytest.raises(memfold.InvalidInput, match="misfire"):
        SchedulerSettings(misfire_grace_seconds=0)
    with pytest.raises(memfold.InvalidInput, match="extractor"):
        SchedulerSettings(extractor="magic")


def test_latest_fire_time_is_the_fire_a_coalesced_run_stands_for():
    trigger = SchedulerSettings(timezone="America/New_York").trigger()
    now = datetime(2025, 3, 10, 12, 0, tzinfo=ZoneInfo("America/New_York"))
    assert latest_fire_time(trigger, now) == datetime(2025, 3, 10, 3, 0, tzinfo=ZoneInfo("America/New_York"))
    every_second = SchedulerSettings(cron={"second": "*"}).trigger()
    now = datetime(2025, 1, 1, 0, 0, 5, 500000, tzinfo=timezone.utc)
    assert latest_fire_time(every_second, now) == datetime(2025, 1, 1, 0, 0, 5, tzinfo=timezone.utc)


def test_a_restart_keeps_one_job_under_the_fixed_id(db_path):
    seed(db_path)
    for _ in range(3):
        s = ConsolidationScheduler(db_path)
        s.start()
        s.shutdown()
    with memfold.MemFold(db_path) as mf:
        assert mf.db.execute(f"SELECT id FROM {JOBS_TABLE}").fetchall() == [(JOB_ID,)]


def test_restart_after_missed_fire_times_runs_once(tmp_path):
    # two fire times one second apart, shortly ahead (round 14: 2 s ahead, where this took 8 s and
    # waited out the end of the minute; a fire time past 59 s wraps into the next minute). The
    # scheduler below must be started and shut down before the first: when it was not (a loaded
    # machine), the attempt is made again on a new file with the fire times further ahead.
    for attempt in range(6):
        db_path = tmp_path / f"attempt-{attempt}.db"
        seed(db_path)
        now = datetime.now(timezone.utc)
        first_at = now.replace(microsecond=0) + timedelta(seconds=2 + 2 * attempt)
        second_at = first_at + timedelta(seconds=1)
        # fires twice a minute, at these seconds
        settings = SchedulerSettings(cron={"second": f"{first_at.second},{second_at.second}"})
        down = ConsolidationScheduler(db_path, settings)
        stored_next = down.start()
        down.shutdown()  # the process goes down before either fire time
        if datetime.now(timezone.utc) < first_at:
            break
    else:
        pytest.fail("starting and stopping a scheduler took longer than 12 s, six times")
    assert stored_next == first_at
    # both fires missed (a wait on the clock)
    assert wait_for(lambda: datetime.now(timezone.utc) > second_at + timedelta(seconds=0.5), 30)

    results = []
    up = ConsolidationScheduler(db_path, settings, on_result=results.append)
    up.start()
    try:
        assert wait_for(lambda: results, 120)
        # no second catch-up run comes (round 14, where this slept 1 s): the job's next run is the
        # next minute's first fire (the scheduler moves it on right after it submits the coalesced run)
        assert wait_for(lambda: up.next_run_time() == first_at + timedelta(minutes=1), 60), up.next_run_time()
    finally:
        up.shutdown()
    assert len(results) == 1 and results[0]["ran"]
    assert datetime.fromisoformat(results[0]["fire_time"]) == second_at  # the two missed fires collapsed
    assert results[0]["missed_fires"] == 1  # the fire at `first`, folded into the run for `second`
    with memfold.MemFold(db_path) as mf:
        leases = lease.list_leases(mf.storage, JOB_ID)
        assert [(datetime.fromtimestamp(x.fire_time, timezone.utc), x.outcome) for x in leases] == [(second_at, "ok")]
        assert {r.status for r in mf.memory.list(NS, "episodic", include_inactive=True)} == {"consumed"}


def test_lease_once_per_fire_time_and_expiry_when_a_holder_dies(mf):
    assert lease.acquire(mf.storage, "job", 100.0, "a", ttl_seconds=10, now=100.0)
    assert not lease.acquire(mf.storage, "job", 100.0, "b", ttl_seconds=10, now=105.0)   # held
    assert lease.acquire(mf.storage, "job", 100.0, "b", ttl_seconds=10, now=111.0)       # a died: expired
    assert not lease.renew(mf.storage, "job", 100.0, "a", ttl_seconds=10, now=112.0)     # a lost it
    assert lease.release(mf.storage, "job", 100.0, "b", now=113.0, outcome="ok")
    assert not lease.acquire(mf.storage, "job", 100.0, "c", ttl_seconds=10, now=500.0)   # finished: never again
    assert lease.acquire(mf.storage, "job", 200.0, "c", ttl_seconds=10, now=500.0)
    assert not lease.acquire(mf.storage, "job", 150.0, "d", ttl_seconds=10, now=500.0)   # older than a claimed fire
    kinds = [e.kind for e in mf.memory.events(kind=None) if e.subject == "lease:job"]
    assert kinds == ["lease_acquired", "lease_taken_over", "lease_released", "lease_acquired"]


WORKER = textwrap.dedent("""
    import sys, time
    from memfold.consolidation.scheduler import ConsolidationScheduler, SchedulerSettings
    s = ConsolidationScheduler(sys.argv[1], SchedulerSettings(cron={"second": "*"}, batch_size=3),
                               on_result=lambda r: print("ran" if r.get("ran") else "skipped", r.get("fire_time"), flush=True))
    s.run_forever(ready=lambda t: print("ready", flush=True))
    print("stopped", flush=True)
""")


def _finished_runs(db_path) -> int:
    with memfold.MemFold(db_path) as mf:
        return sum(x.outcome == "ok" for x in lease.list_leases(mf.storage, JOB_ID))


def test_several_worker_processes_run_each_fire_time_once_and_stop_cleanly(backend_target):
    """Three scheduler processes on one database, a SQLite file or PostgreSQL (issue 17, point 3:
    the nightly job run by several workers runs each fire time exactly once)."""
    db_path = backend_target
    seed(db_path, n=40)
    ConsolidationScheduler(db_path).shutdown()  # create the file's tables once
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(db_path)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(3)]
    early = {p.pid: [] for p in procs}  # lines a worker printed before "ready" (a fire may run first)
    try:
        for p in procs:
            while (line := p.stdout.readline()).strip() != "ready":
                if not line:  # the worker died while starting: show why
                    p.kill()
                    raise AssertionError(f"worker said {early[p.pid]!r}, stderr: {p.communicate(timeout=60)[1]}")
                early[p.pid].append(line)
        time.sleep(4.5)
        # at least three fire times finished before the stop (a heavily loaded machine may need
        # longer than 4.5 s for them); the assertions below need three runs to compare. (Round 14
        # tried the wait alone: three leases can be "ok" before the third worker has printed its
        # "ran" line, and a fresh clone's run failed with two; the 4.5 s of further fires stay.)
        assert wait_for(lambda: _finished_runs(db_path) >= 3, 180), _finished_runs(db_path)
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
    # a worker finishes the run it is in before it stops; at load average 20 on 2 cores that took
    # more than 60 s once (a fresh clone's suite beside a 16-process stress), so the wait is long
    outs = [("".join(early[p.pid]) + out, err) for p in procs for out, err in [p.communicate(timeout=240)]]
    assert [p.returncode for p in procs] == [0, 0, 0], [e for _, e in outs]
    assert all(out.strip().endswith("stopped") for out, _ in outs)
    ran = [line.split()[1] for out, _ in outs for line in out.splitlines() if line.startswith("ran")]
    assert len(ran) >= 3 and len(ran) == len(set(ran))  # each fire time ran in exactly one process
    with memfold.MemFold(db_path) as mf:
        acquired = Counter(e.details["fire_time"] for e in mf.memory.events(kind="lease_acquired"))
        assert acquired and max(acquired.values()) == 1
        assert len(acquired) >= len(ran)
        assert {r.status for r in mf.memory.list(NS, "episodic", include_inactive=True)} == {"consumed"}
        assert len(mf.memory.list(NS, "semantic")) == 40


def _job_table_schema(path):
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT type, name, sql FROM sqlite_master WHERE tbl_name = ? ORDER BY type, name",
                            [JOBS_TABLE]).fetchall()
    finally:
        conn.close()


def test_storage_makes_the_job_table_once_as_apscheduler_would(db_path, tmp_path):
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore

    ConsolidationScheduler(db_path).shutdown()  # no scheduler started: the table exists all the same
    with memfold.MemFold(db_path) as mf:
        assert not mf.storage.runs.ensure_job_store(JOBS_TABLE)  # made once; a second call creates nothing
    theirs = tmp_path / "apscheduler-only.db"
    store = SQLAlchemyJobStore(url=f"sqlite:///{theirs}", tablename=JOBS_TABLE)
    store.jobs_t.create(store.engine, True)
    store.engine.dispose()
    assert _job_table_schema(db_path) == _job_table_schema(theirs) != []


STARTER = textwrap.dedent("""
    import sys, time
    from memfold.consolidation.scheduler import ConsolidationScheduler
    s = ConsolidationScheduler(sys.argv[1])
    print("ready", flush=True)
    go = float(sys.stdin.readline())
    while time.time() < go:  # every job store starts at the same moment
        time.sleep(0.001)
    s.start()
    s.shutdown()
    print("ok", flush=True)
""")


def test_schedulers_starting_together_on_a_fresh_file_do_not_race(db_path):
    procs = [subprocess.Popen([sys.executable, "-c", STARTER, str(db_path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    # every process has opened the file and waits (round 14: told when to start once all say so,
    # where a start 4 s ahead was fixed up front)
    said = [p.stdout.readline().strip() for p in procs]
    assert said == ["ready"] * 4, [p.communicate(timeout=120)[1] for p in procs]
    go = repr(time.time() + 0.2) + "\n"
    for p in procs:
        p.stdin.write(go)
        p.stdin.flush()
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], [e for _, e in outs]
    with memfold.MemFold(db_path) as mf:
        assert mf.db.execute(f"SELECT id FROM {JOBS_TABLE}").fetchall() == [(JOB_ID,)]
