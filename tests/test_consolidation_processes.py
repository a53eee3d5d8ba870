"""Consolidation across real processes (issue 5, point 5): two processes on one namespace at
once, and a process killed in the middle of a batch."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import memfold
from memfold.consolidation import runs as runs_db

NS = "acme/dana"

WORKER = textwrap.dedent("""
    import os, sys, time, memfold
    mf = memfold.MemFold(sys.argv[1], token_counter="words")
    open(sys.argv[4] + ".ready", "w").close()
    while not os.path.exists(sys.argv[4] + ".go"):   # start both passes at the same moment
        time.sleep(0.005)
    run = mf.consolidate(sys.argv[2], batch_size=int(sys.argv[3]))
    print(run.status, run.episodes_consumed)
""")

# Kills itself with SIGKILL inside the second batch's transaction, after it has written rows
# (total_changes counts uncommitted changes), using SQLite's progress handler: no code is patched.
KILLER = textwrap.dedent("""
    import os, signal, sys, memfold
    mf = memfold.MemFold(sys.argv[1], token_counter="words")
    conn = mf.db.conn
    state = {"commits": 0, "base": None}
    def on_progress():
        if not conn.in_transaction:
            state["base"] = None
            return 0
        if state["base"] is None:
            state["base"] = conn.total_changes
        if conn.total_changes - state["base"] >= 12 and state["seen_batch"]:
            os.kill(os.getpid(), signal.SIGKILL)
        return 0
    state["seen_batch"] = False
    def progress(done):
        state["seen_batch"] = True   # the first batch has committed
    conn.set_progress_handler(on_progress, 50)
    mf.consolidate(sys.argv[2], batch_size=10, progress=progress)
    print("not killed")
""")


def write_episodes(mf, n, namespace=NS):
    for i in range(n):
        mf.memory.write(namespace, "episodic", f"user: I love board game {i}")


def test_two_processes_consolidating_one_namespace_consume_each_episode_once(db_path, tmp_path):
    with memfold.MemFold(db_path, clock=memfold.LogicalClock(), token_counter="words") as mf:
        write_episodes(mf, 300)
    flag = str(tmp_path / "flag")
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(db_path), NS, "5", f"{flag}{i}"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
    deadline = time.monotonic() + 60
    while not all(os.path.exists(f"{flag}{i}.ready") for i in range(2)) and time.monotonic() < deadline:
        time.sleep(0.01)
    for i in range(2):
        open(f"{flag}{i}.go", "w").close()
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    consumed = [int(out.split()[1]) for out, _ in outs]
    print("episodes consumed per process:", consumed)
    assert sum(consumed) == 300
    with memfold.MemFold(db_path, token_counter="words") as mf:
        episodes = mf.memory.list(NS, "episodic", include_inactive=True)
        assert {e.status for e in episodes} == {"consumed"}
        assert mf.db.execute("SELECT COUNT(*), COUNT(DISTINCT source) FROM consolidation_sources").fetchone() == (300, 300)
        facts = mf.memory.list(NS, "semantic", include_inactive=True)
        assert len(facts) == 300 and len({f.key for f in facts}) == 300  # no duplicate facts
        consume_events = mf.memory.events(NS, kind="consume")
        assert len(consume_events) == 300 and len({e.record_id for e in consume_events}) == 300


def test_a_process_killed_mid_batch_leaves_nothing_half_written(db_path):
    with memfold.MemFold(db_path, clock=memfold.LogicalClock(), token_counter="words") as mf:
        write_episodes(mf, 30)
    proc = subprocess.run([sys.executable, "-c", KILLER, str(db_path), NS], capture_output=True, text=True, timeout=300)
    assert proc.returncode == -9, (proc.stdout, proc.stderr)
    with memfold.MemFold(db_path, token_counter="words") as mf:
        [run] = runs_db.list_runs(mf.storage, NS)
        # the first batch committed whole; the killed second batch left no trace
        assert (run.status, run.batches, run.episodes_consumed, run.facts_written) == ("running", 1, 10, 10)
        episodes = mf.memory.list(NS, "episodic", include_inactive=True)
        assert [e.status for e in episodes] == ["consumed"] * 10 + ["active"] * 20
        assert len(mf.memory.list(NS, "semantic", include_inactive=True)) == 10
        assert mf.db.execute("SELECT COUNT(*) FROM consolidation_sources").fetchone()[0] == 10
        for fact in mf.memory.list(NS, "semantic"):
            assert mf.memory.get(int(fact.provenance[0].split(":")[1])).status == "consumed"
        # the next pass finishes the job, once
        rerun = mf.consolidate(NS, batch_size=10)
        assert rerun.status == "ok" and rerun.episodes_consumed == 20
        assert len({f.key for f in mf.memory.list(NS, "semantic")}) == 30
