"""The consolidation pass and the nightly job run on their parts (issue 12, point 2).

A :class:`ConsolidationParts` built from an opened storage, without any :class:`MemFold`, drives
the pass and the job body; the facade builds one and shares it; the scheduler reaches the per-fire
opener (:mod:`memfold.nightly`, the facade layer) only through its textual reference, and a job
stored by an older memfold under another reference is replaced, its missed fire still caught up.
"""

from __future__ import annotations

import pickle
import sqlite3
import time
from datetime import datetime, timedelta, timezone

import pytest
from apscheduler.util import ref_to_obj

import memfold
from memfold import ConsolidationParts, Extractor, InvalidInput, LogicalClock, MemFold, MemoryStore, Proposal
from memfold.consolidation import lease
from memfold.consolidation.consolidate import consolidate, consolidate_all
from memfold.consolidation.scheduler import (
    JOB_FUNC,
    JOB_ID,
    JOBS_TABLE,
    ConsolidationScheduler,
    SchedulerSettings,
    run_job,
    scheduler_status,
)
from memfold.memory.storage import open_storage

NS = "acme/dana"


def _parts(db_path) -> ConsolidationParts:
    clock = LogicalClock()
    storage = open_storage(db_path, clock.kind)
    return ConsolidationParts(storage=storage, clock=clock, memory=MemoryStore(storage, clock))


def test_the_pass_runs_on_parts_built_without_the_facade(db_path):
    parts = _parts(db_path)
    try:
        parts.memory.write(NS, "episodic", "user: my name is Dana")
        parts.memory.write("acme/lee", "episodic", "user: my name is Lee")
        run = consolidate(parts, NS)  # no extractor in the parts: the rules extractor
        assert (run.status, run.extractor, run.episodes_consumed, run.facts_written) == ("ok", "rules-v1", 1, 1)
        assert [r.content for r in parts.memory.list(NS, "semantic")] == ["Dana"]
        assert [r.namespace for r in consolidate_all(parts)] == ["acme/lee"]  # only what is still pending
        assert consolidate(parts, NS).written == []  # re-running changes nothing
    finally:
        parts.storage.close()


def test_the_pass_refuses_the_facade_and_writes_nothing(mf):
    mf.memory.write(NS, "episodic", "user: my name is Dana")
    for call in (lambda: consolidate(mf, NS), lambda: consolidate_all(mf)):
        with pytest.raises(InvalidInput, match="takes a ConsolidationParts .*got MemFold.*mf.consolidate"):
            call()
    assert mf.runs() == [] and mf.memory.list(NS, "semantic") == []


class Shouting(Extractor):
    id = "shouting"

    def extract(self, episodes):
        return [Proposal("semantic", "user.shout", e.text.upper(), (e.source,)) for e in episodes]


def test_the_facade_builds_the_parts_once_and_an_extractor_set_on_it_reaches_the_pass(mf):
    parts = mf.consolidation_parts
    assert (parts.storage, parts.clock, parts.memory) == (mf.storage, mf.clock, mf.memory)
    assert parts.extractor.id == "rules-v1" and mf.extractor is parts.extractor
    mf.extractor = Shouting()
    mf.memory.write(NS, "episodic", "user: hello there")
    run = mf.consolidate(NS)
    assert run.extractor == "shouting" and [r.content for r in mf.memory.list(NS, "semantic")] == ["USER: HELLO THERE"]
    with pytest.raises(InvalidInput, match="extractor must be"):
        mf.extractor = 42
    assert mf.consolidation_parts is parts and parts.extractor.id == "shouting"


def test_the_job_body_runs_on_parts_once_per_fire_time(db_path):
    parts = _parts(db_path)
    settings = SchedulerSettings(cron={"hour": 3, "minute": 0}).to_dict()
    fired = datetime(2025, 3, 10, 12, 0, tzinfo=timezone.utc).timestamp()
    try:
        parts.memory.write(NS, "episodic", "user: my name is Dana")
        first = run_job(parts, settings, fired_at=fired)
        assert first["ran"] and first["fire_time"] == "2025-03-10T03:00:00+00:00"
        assert [r["episodes_consumed"] for r in first["runs"]] == [1]
        again = run_job(parts, settings, fired_at=fired + 60)  # the same fire time: its lease is finished
        assert not again["ran"] and again["runs"] == []
        leases = lease.list_leases(parts.storage, JOB_ID)
        assert [(x.outcome, x.holder == first["holder"]) for x in leases] == [("ok", True)]
    finally:
        parts.storage.close()


def test_the_job_store_reference_names_the_facade_layer_opener(db_path):
    from memfold.nightly import run_scheduled_job

    assert ref_to_obj(JOB_FUNC) is run_scheduled_job
    with MemFold(db_path, clock=LogicalClock(), token_counter="words") as mf:
        mf.memory.write(NS, "episodic", "user: my name is Dana")
    result = run_scheduled_job(db_path, SchedulerSettings().to_dict())  # opens the file as each fire does
    assert result["ran"] and [r["namespace"] for r in result["runs"]] == [NS]
    with MemFold(db_path) as mf:
        assert [r.content for r in mf.memory.list(NS, "semantic")] == ["Dana"]
        assert mf.runs()[0].trigger == f"schedule@{result['fire_time']}"


OLD_FUNC = "memfold.consolidation.scheduler:run_scheduled_job"  # where the job body lived before issue 12


def _rewrite_stored_job(db_path, func: str, next_run: datetime) -> None:
    """Make the stored job look as an older memfold left it: another function reference, a
    next run time already past (the workers were down at fire time)."""
    conn = sqlite3.connect(db_path)
    try:
        (state,) = conn.execute(f"SELECT job_state FROM {JOBS_TABLE} WHERE id = ?", [JOB_ID]).fetchone()
        state = pickle.loads(state)
        state["func"], state["next_run_time"] = func, next_run
        conn.execute(f"UPDATE {JOBS_TABLE} SET job_state = ?, next_run_time = ? WHERE id = ?",
                     [pickle.dumps(state, pickle.HIGHEST_PROTOCOL), next_run.timestamp(), JOB_ID])
        conn.commit()
    finally:
        conn.close()


def _stored_func(db_path) -> str:
    conn = sqlite3.connect(db_path)
    try:
        return pickle.loads(conn.execute(f"SELECT job_state FROM {JOBS_TABLE}").fetchone()[0])["func"]
    finally:
        conn.close()


def test_a_job_stored_under_the_old_reference_is_replaced_and_its_missed_fire_runs_once(db_path):
    with MemFold(db_path) as mf:
        mf.memory.write(NS, "episodic", "user: my name is Dana")
    first = ConsolidationScheduler(db_path)
    first.start()
    first.shutdown()
    missed = (datetime.now(timezone.utc) - timedelta(hours=1)).replace(microsecond=0)
    _rewrite_stored_job(db_path, OLD_FUNC, missed)

    status = scheduler_status(db_path)
    assert status["job"]["id"] == JOB_ID and "older memfold" in status["job"]["trigger"]
    assert datetime.fromisoformat(status["job"]["next_run_time"]) == missed

    results = []
    up = ConsolidationScheduler(db_path, on_result=results.append)
    up.start()  # loading the stored job fails (its function is gone); the row's next run time is kept
    try:
        deadline = time.monotonic() + 120  # generous: a loaded machine may start the catch-up late
        while not results and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        up.shutdown()
    assert len(results) == 1 and results[0]["ran"], results  # the missed fire ran, once
    assert _stored_func(db_path) == JOB_FUNC
    with memfold.MemFold(db_path) as mf:
        assert {r.status for r in mf.memory.list(NS, "episodic", include_inactive=True)} == {"consumed"}
    assert "hour='3'" in scheduler_status(db_path)["job"]["trigger"]


def _stored_next_run_time(db_path) -> float | None:
    conn = sqlite3.connect(db_path)
    try:
        return conn.execute(f"SELECT next_run_time FROM {JOBS_TABLE} WHERE id = ?", [JOB_ID]).fetchone()[0]
    finally:
        conn.close()


def test_status_reads_a_due_job_without_moving_or_running_it(db_path):
    """While every worker is down, ``memfold scheduler status`` must not consume the missed fire
    (a started-then-stopped probe scheduler processes due jobs once on shutdown)."""
    with MemFold(db_path) as mf:
        mf.memory.write(NS, "episodic", "user: my name is Dana")
    first = ConsolidationScheduler(db_path)
    first.start()
    first.shutdown()
    missed = (datetime.now(timezone.utc) - timedelta(hours=1)).replace(microsecond=0)
    _rewrite_stored_job(db_path, JOB_FUNC, missed)
    for _ in range(2):
        status = scheduler_status(db_path)
        assert datetime.fromisoformat(status["job"]["next_run_time"]) == missed and "hour='3'" in status["job"]["trigger"]
    assert _stored_next_run_time(db_path) == missed.timestamp()
    with MemFold(db_path) as mf:
        assert mf.runs() == [] and lease.list_leases(mf.storage, JOB_ID) == []


def _coalesced_events(parts):
    return [e for e in parts.memory.events(kind="schedule_coalesced")]


def test_missed_fires_coalesced_into_one_run_are_logged_and_recorded(db_path, caplog):
    """Issue 20, point 9: the run after a gap counts the fire times it folds in."""
    parts = _parts(db_path)
    settings = SchedulerSettings(cron={"hour": 3, "minute": 0}).to_dict()
    day = datetime(2025, 3, 10, 12, 0, tzinfo=timezone.utc).timestamp()
    try:
        parts.memory.write(NS, "episodic", "user: my name is Dana")
        first = run_job(parts, settings, fired_at=day)
        assert first["ran"] and first["missed_fires"] == 0 and _coalesced_events(parts) == []
        nxt = run_job(parts, settings, fired_at=day + 86_400)  # the next night: nothing missed
        assert nxt["ran"] and nxt["missed_fires"] == 0
        with caplog.at_level("WARNING", logger="memfold.scheduler"):
            late = run_job(parts, settings, fired_at=day + 4 * 86_400)  # down for the 12th and 13th
        assert late["ran"] and late["fire_time"] == "2025-03-14T03:00:00+00:00" and late["missed_fires"] == 2
        (event,) = _coalesced_events(parts)
        assert event.details["missed_fires"] == 2 and event.details["fire_time"] == late["fire_time"]
        assert event.details["since"] == "2025-03-11T03:00:00+00:00"
        assert any("2 missed fire time(s)" in r.getMessage() for r in caplog.records)
    finally:
        parts.storage.close()


def test_a_first_catch_up_run_counts_from_the_missed_fire_the_scheduler_found(db_path):
    parts = _parts(db_path)
    settings = SchedulerSettings(cron={"hour": 3, "minute": 0}).to_dict()
    found = datetime(2025, 3, 11, 3, 0, tzinfo=timezone.utc).timestamp()  # the stored next run time, passed
    try:
        result = run_job(parts, settings, fired_at=found + 2 * 86_400 + 3600, catch_up_from=found)
        assert result["fire_time"] == "2025-03-13T03:00:00+00:00" and result["missed_fires"] == 2  # the 11th, 12th
        assert [e.details["missed_fires"] for e in _coalesced_events(parts)] == [2]
    finally:
        parts.storage.close()
