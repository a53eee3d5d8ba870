"""The runs and meta storage families (issue 12, point 1): what they return and refuse."""

from __future__ import annotations

import pytest

import memfold
from memfold.memory.storage.rows import ConsolidationRun, LeaseRow
from memfold.memory.storage.sqlite.migrations import latest_version


def test_meta_key_values_and_settings(mf):
    meta = mf.storage.meta
    assert meta.clock_kind() == "logical" and meta.token_counter() == "words"
    assert meta.schema_version() == latest_version()
    with mf.storage.transaction():
        meta.set("k", "1")
        meta.set("k", "2")
        assert not meta.add("k", "3") and meta.add("j", "x")
    assert meta.get("k") == "2" and meta.get("nope") is None
    assert meta.get_many(["k", "j", "nope"]) == {"k": "2", "j": "x"}
    with mf.storage.transaction():
        assert meta.delete(["k", "j", "nope"]) == 2
    assert meta.get_many(["k", "j"]) == {}


def test_meta_newest_time_and_logical_tick_resume(db_path):
    with memfold.MemFold(db_path, clock=memfold.LogicalClock(), token_counter="words") as mf:
        assert mf.storage.meta.newest_stored_time() is None and mf.storage.meta.logical_tick() is None
        mf.clock.advance(3)
        mf.memory.write("acme/dana", "episodic", "user: hello")
        assert mf.storage.meta.newest_stored_time() == 3
        assert mf.advance_clock(4) == 7 and mf.storage.meta.logical_tick() == 7.0
    with memfold.MemFold(db_path) as mf:
        assert mf.clock.now() == 7


def test_runs_ledger_refuses_a_second_consumption(mf):
    runs = mf.storage.runs
    with mf.storage.transaction():
        run_id = runs.start_run("acme/dana", "rules", "manual", 0.0)
        runs.record_consumed("record:1", "acme/dana", run_id, 0.0, [5, 4, 5])
    with pytest.raises(memfold.StorageConflict):
        with mf.storage.transaction():
            runs.record_consumed("record:1", "acme/dana", run_id, 1.0, [])
    assert runs.consumption("record:1")["products"] == [4, 5]
    with mf.storage.transaction():
        runs.add_batch(run_id, episodes=1, turns=0, facts=2, rules=0)
        runs.finish_run(run_id, "ok", 1.0, [])
    run = runs.get_run(run_id)
    assert isinstance(run, ConsolidationRun) and (run.status, run.batches, run.facts_written) == ("ok", 1, 2)
    assert runs.list_runs("acme/dana") == [run] and runs.list_runs("other") == [] and runs.count_runs() == 1


def test_runs_leases_round_trip(mf):
    runs = mf.storage.runs
    with mf.storage.transaction():
        runs.insert_lease("job", 10.0, "a", acquired_at=10.0, expires_at=20.0)
    with pytest.raises(memfold.StorageConflict):
        with mf.storage.transaction():
            runs.insert_lease("job", 10.0, "b", acquired_at=11.0, expires_at=21.0)
    assert runs.get_lease("job", 10.0) == LeaseRow("job", 10.0, "a", 10.0, 20.0, None, None)
    assert not runs.newer_lease_exists("job", 10.0) and runs.newer_lease_exists("job", 5.0)
    assert runs.renew_lease("job", 10.0, "a", expires_at=30.0) and not runs.renew_lease("job", 10.0, "b", expires_at=30.0)
    assert runs.finish_lease("job", 10.0, "a", finished_at=12.0, outcome="ok")
    assert not runs.finish_lease("job", 10.0, "a", finished_at=13.0, outcome="ok")
    assert runs.list_leases("job") == [LeaseRow("job", 10.0, "a", 10.0, 30.0, 12.0, "ok")]


def test_job_store_table_name_must_be_an_identifier(mf):
    with pytest.raises(memfold.StorageError):
        mf.storage.runs.ensure_job_store("jobs; DROP TABLE turns")
    assert mf.storage.runs.ensure_job_store("memfold_scheduler_jobs")
    assert not mf.storage.runs.ensure_job_store("memfold_scheduler_jobs")
