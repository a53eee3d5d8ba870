"""The background compaction worker (issue 13): notes, leases, lost races, backoff, processes.

Processes are synchronised by files and by polling a condition with a generous deadline, never
by fixed sleeps.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import memfold
from memfold import ExtractiveSummarizer, LogicalClock, MemFold, SummarizerError
from memfold.window.catalog import is_contiguous_cover
from memfold.window.settings import WindowSettings
from memfold.worker import Worker, scan_for_notes

SETTINGS = dict(budget_tokens=100, output_reserve_tokens=0, hot_turns=3, rollup_fanin=3, leaf_chunk_tokens=20,
                card_target_tokens=6, soft_watermark=0.5, hard_watermark=1.0)
DEADLINE = 120.0


def small_mf(path, **kw):
    return MemFold(path, clock=LogicalClock(), token_counter="words", window=WindowSettings(**SETTINGS), **kw)


def wait_for(condition, what, deadline=DEADLINE):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.05)  # polling a condition, not synchronising by time
    raise AssertionError(f"timed out waiting for {what}")


def talk(conv, n, start=0):
    for i in range(start, start + n):
        conv.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} about order ORD-{i} and its delivery"})


def orphan_cards(mf):
    """Cards neither in a catalog nor covered by another card (read through the storage
    Protocols, so the same check runs on both backends)."""
    st = mf.storage
    ids = st.archive.conversation_ids()
    shown = {i.item_id for cid in ids for i in st.catalog.items(cid) if i.kind == "card"}
    cards = [c for family in sorted({st.archive.conversation(cid).family_id for cid in ids})
             for c in st.cards.family(family)]
    covered = {int(ref[1:]) for c in cards for ref in c.covers if ref.startswith("c")}
    return sorted(c.id for c in cards if c.id not in shown and c.id not in covered)


def test_soft_watermark_leaves_a_note_and_the_worker_folds(db_path):
    mf = small_mf(db_path)
    conv = mf.conversation("c")
    n = 0
    while conv.compaction_note() is None:
        talk(conv, 1, n)
        n += 1
    assert mf.db.execute("SELECT COUNT(*) FROM cards").fetchone()[0] == 0  # the append only noted
    note = conv.compaction_note()
    assert note["pressure"] >= mf.window.soft_tokens and note["namespace"] == "default"
    worker = mf.worker(lease_seconds=30)
    assert worker.run_once() == 1
    assert worker.stats.folds == 1 and worker.stats.cards >= 1
    assert conv.pressure() < mf.window.soft_tokens
    assert conv.compaction_note() is None
    assert is_contiguous_cover(conv.catalog_items(), n)
    assert orphan_cards(mf) == []
    leases = mf.storage.runs.list_leases()
    assert [l.outcome for l in leases] == ["ok"]
    mf.close()


def test_a_lost_race_rolls_the_card_back_and_the_pass_goes_on(db_path):
    """A foreground fold on another connection splices first while this fold's summarizer runs."""
    mf = small_mf(db_path)
    conv = mf.conversation("c")
    talk(conv, 11)  # past the soft watermark, below the hard one: noted, not folded
    assert conv.compaction_note() is not None
    other = small_mf(db_path)

    class Racing(ExtractiveSummarizer):
        raced = False

        def summarize(self, items, depth, *, target_tokens=None):
            if not Racing.raced:
                Racing.raced = True
                assert other.conversation("c").compact().folded  # the other writer wins the race
            return super().summarize(items, depth, target_tokens=target_tokens)

    report = conv.compact(summarizer=Racing(mf.token_counter))
    assert report.lost_races == 1
    assert orphan_cards(mf) == []
    assert is_contiguous_cover(conv.catalog_items(), 11)
    assert conv.pressure() <= mf.window.soft_tokens
    other.close()
    mf.close()


def test_append_never_raises_after_its_commit(db_path):
    """A hard-watermark fold that keeps losing its race still returns the committed turn's id."""
    mf = small_mf(db_path, )
    conv = mf.conversation("c")
    other = small_mf(db_path)

    class AlwaysRaced(ExtractiveSummarizer):
        def summarize(self, items, depth, *, target_tokens=None):
            other.conversation("c").append({"role": "user", "content": "a concurrent turn"}, compact=False)
            other.conversation("c").compact(target_tokens=0, summarizer=ExtractiveSummarizer(mf.token_counter))
            return super().summarize(items, depth, target_tokens=target_tokens)

    talk(conv, 10)
    mf.summarizer = AlwaysRaced(mf.token_counter)
    ids = [conv.append({"role": "user", "content": "word " * 30}) for _ in range(3)]
    assert len(ids) == 3 and all(isinstance(i, int) for i in ids)
    assert orphan_cards(mf) == []
    assert is_contiguous_cover(conv.catalog_items(), len(conv.history()))
    other.close()
    mf.close()


def test_a_retried_append_with_the_same_key_stores_one_turn(db_path):
    mf = small_mf(db_path)
    conv = mf.conversation("c")
    first = conv.append({"role": "user", "content": "hello"}, idempotency_key="k-1")
    again = conv.append({"role": "user", "content": "hello"}, idempotency_key="k-1")
    assert first == again and len(conv.history()) == 1
    mf.close()


def test_every_card_merges_at_least_two_items(db_path):
    mf = small_mf(db_path)
    conv = mf.conversation("c")
    talk(conv, 120)
    conv.compact(target_tokens=0)
    covers = mf.db.execute("SELECT card_id, COUNT(*) FROM card_covers GROUP BY card_id").fetchall()
    assert covers and all(count >= 2 for _, count in covers)
    mf.close()


def test_the_scanner_finds_a_lost_note(db_path):
    mf = small_mf(db_path)
    conv = mf.conversation("c")
    talk(conv, 40, 0)
    mf.conversation("quiet").append({"role": "user", "content": "hi"})
    note = conv.compaction_note()
    with mf.storage.transaction():
        assert mf.storage.runs.drop_compaction_note("c", note["generation"])  # lost to a crash
    assert scan_for_notes(mf.parts) == 1
    assert conv.compaction_note() is not None and mf.conversation("quiet").compaction_note() is None
    mf.close()


def test_a_failing_summarizer_backs_off_and_records_it(db_path):
    mf = small_mf(db_path)
    conv = mf.conversation("c")
    talk(conv, 30)

    class Failing(ExtractiveSummarizer):
        calls = 0

        def summarize(self, items, depth, *, target_tokens=None):
            Failing.calls += 1
            raise SummarizerError("the model is down")

    mf.summarizer = Failing(mf.token_counter)
    worker = mf.worker(backoff_base_seconds=3600, backoff_cap_seconds=7200)
    assert worker.run_once() == 1
    calls = Failing.calls
    assert calls >= 1 and worker.stats.backoffs == 1
    note = conv.compaction_note()
    assert note["attempts"] == 1 and note["not_before"] > time.time() + 3000 and "down" in note["last_error"]
    assert worker.run_once() == 0 and Failing.calls == calls  # waiting: the summarizer is not called again
    rows = mf.db.execute("SELECT details FROM events WHERE kind = 'compaction_backoff'").fetchall()
    assert len(rows) == 1 and json.loads(rows[0][0])["wait_seconds"] == 3600
    mf.close()


def test_start_worker_folds_in_a_thread(db_path):
    mf = small_mf(db_path)
    thread = mf.start_worker(poll_seconds=0.01)
    try:
        conv = mf.conversation("c")
        talk(conv, 40)
        wait_for(lambda: not mf.compaction_notes() and thread.stats.folds >= 1, "the thread's folds")
    finally:
        stats = thread.stop()
    assert stats.folds >= 1 and stats.errors == []
    assert is_contiguous_cover(conv.catalog_items(), 40) and orphan_cards(mf) == []
    mf.close()


# -- real processes ------------------------------------------------------------------------------
ENV = {**os.environ}

BLOCKING_WORKER = textwrap.dedent(
    """
    import os, sys, threading
    from memfold import ExtractiveSummarizer, MemFold
    from memfold.window.settings import WindowSettings
    path, marker, settings = sys.argv[1], sys.argv[2], eval(sys.argv[3])

    class Blocking(ExtractiveSummarizer):
        def summarize(self, items, depth, *, target_tokens=None):
            open(marker, "w").close()  # inside the fold now
            threading.Event().wait()   # until killed

    mf = MemFold(path, token_counter="words", window=WindowSettings(**settings))
    mf.summarizer = Blocking(mf.token_counter)
    mf.worker(lease_seconds=1.0, holder="doomed").run(threading.Event())
    """
)


def memfold_cmd(*args):
    return [sys.executable, "-c", "from memfold.cli import main; main()", *args]


def test_a_worker_killed_inside_a_fold_leaves_nothing_and_another_finishes(db_path, tmp_path):
    mf = small_mf(db_path)
    conv = mf.conversation("c")
    talk(conv, 11)
    assert conv.compaction_note() is not None
    marker = tmp_path / "in-fold"
    doomed = subprocess.Popen([sys.executable, "-c", BLOCKING_WORKER, str(db_path), str(marker), repr(SETTINGS)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: marker.exists() or doomed.poll() is not None, "the worker to enter its fold")
        assert doomed.poll() is None, doomed.stderr.read()
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(timeout=DEADLINE)
    finally:
        if doomed.poll() is None:
            doomed.kill()
            doomed.wait()
    assert mf.db.execute("SELECT COUNT(*) FROM cards").fetchone()[0] == 0  # nothing visible
    assert [l.holder for l in mf.storage.runs.list_leases()] == ["doomed"]
    # another worker takes the expired lease over and finishes the job
    rescuer = mf.worker(lease_seconds=30, holder="rescuer", poll_seconds=0.05)
    wait_for(lambda: rescuer.run_once() and conv.compaction_note() is None, "the rescuer to finish")
    jobs = mf.compaction_jobs()
    assert [(j["holder"], j["status"]) for j in jobs] == [("doomed", "abandoned"), ("rescuer", "ok")]
    shown = subprocess.run(memfold_cmd("runs", str(db_path), "--compaction"), capture_output=True, text=True)
    assert shown.returncode == 0 and "[abandoned] doomed" in shown.stdout, shown.stderr
    assert conv.pressure() < mf.window.soft_tokens and orphan_cards(mf) == []
    mf.close()


def test_memfold_worker_stops_cleanly_on_sigterm(db_path):
    mf = small_mf(db_path)
    conv = mf.conversation("c")
    talk(conv, 40)
    assert mf.compaction_notes()
    mf.close()
    args = ["--budget", "100", "--reserve", "0", "--hot-turns", "3", "--fanin", "3", "--leaf-chunk", "20",
            "--card-target", "6", "--soft", "0.5", "--poll", "0.05"]
    proc = subprocess.Popen(memfold_cmd("worker", str(db_path), "--json", *args),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = json.loads(proc.stdout.readline())
        assert first["event"] == "started"
        note = json.loads(proc.stdout.readline())
        assert note["event"] == "note" and note["conversation"] == "c"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    last = json.loads(out.strip().splitlines()[-1])
    assert last["event"] == "stopped" and last["notes_taken"] >= 1 and last["errors"] == []
    with MemFold(db_path, token_counter="words") as again:
        assert again.db.execute("SELECT COUNT(*) FROM cards").fetchone()[0] >= 1
        assert orphan_cards(again) == []


WRITER = textwrap.dedent(
    """
    import sys, traceback
    from memfold import MemFold, LogicalClock
    from memfold.window.settings import WindowSettings
    path, who, n, settings = sys.argv[1], sys.argv[2], int(sys.argv[3]), eval(sys.argv[4])
    mf = MemFold(path, clock=LogicalClock(), token_counter="words", window=WindowSettings(**settings))
    errors = 0
    for i in range(n):
        conv = mf.conversation(who if i % 2 == 0 else "shared")
        try:
            conv.append({"role": "user" if i % 4 < 2 else "assistant",
                         "content": f"{who} turn {i} about order ORD-{i} and the delivery window"},
                        idempotency_key=f"{who}-{i}")
        except Exception:
            errors += 1
            traceback.print_exc()
    mf.close()
    print("errors", errors)
    """
)

READER = textwrap.dedent(
    """
    import os, sys, traceback
    from memfold import MemFold, LogicalClock
    from memfold.window.settings import WindowSettings
    path, stop, settings = sys.argv[1], sys.argv[2], eval(sys.argv[3])
    mf = MemFold(path, clock=LogicalClock(), token_counter="words", window=WindowSettings(**settings))
    errors = compiles = over = 0
    while not os.path.exists(stop) or compiles < 3:
        for cid in ("shared", "w0"):
            try:
                ctx = mf.conversation(cid).context()
                compiles += 1
                over += ctx.total_tokens > ctx.usable_tokens
                mf.conversation(cid).search("delivery", k=3)
            except Exception:
                errors += 1
                traceback.print_exc()
    mf.close()
    print("errors", errors, "compiles", compiles, "over", over)
    """
)


def test_four_writers_two_workers_and_a_reader(backend_target, tmp_path):
    """Real processes on one database: four writers, two ``memfold worker`` processes and a
    reader; on SQLite (one file) and on PostgreSQL (issue 17, point 3: the worker works the same)."""
    db_path = backend_target
    settings = dict(SETTINGS, budget_tokens=160, hot_turns=4)
    with small_mf(db_path) as mf:
        for cid in ("shared", "w0", "w1", "w2", "w3"):
            mf.conversation(cid)
    n = 32 if str(db_path).startswith("postgresql://") else 64  # PostgreSQL's round trips: fewer turns, same races
    stop = tmp_path / "stop"
    wargs = ["--budget", "160", "--reserve", "0", "--hot-turns", "4", "--fanin", "3", "--leaf-chunk", "20",
             "--card-target", "6", "--soft", "0.5", "--poll", "0.05", "--lease-seconds", "30"]
    logs = [open(tmp_path / f"worker-{k}.jsonl", "w") for k in range(2)]  # files: a pipe read only at the end fills up
    workers = [subprocess.Popen(memfold_cmd("worker", str(db_path), "--json", "--holder", f"worker-{k}", *wargs),
                                stdout=logs[k], stderr=subprocess.STDOUT, text=True) for k in range(2)]
    reader = subprocess.Popen([sys.executable, "-c", READER, str(db_path), str(stop), repr(settings)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(db_path), f"w{k}", str(n), repr(settings)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for k in range(4)]
    try:
        for w in writers:
            out, err = w.communicate(timeout=600)
            assert w.returncode == 0 and out.split() == ["errors", "0"], err
        with small_mf(db_path) as mf:
            wait_for(lambda: not mf.compaction_notes(), "the workers to take every note", deadline=300)
        stop.touch()
        out, err = reader.communicate(timeout=600)
        assert reader.returncode == 0, err
        words = out.split()
        assert words[1] == "0" and words[5] == "0", err  # no error, every compile within budget
    finally:
        stop.touch()
        for p in workers:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in [*workers, reader, *writers]:
            try:
                p.communicate(timeout=DEADLINE)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
    for log in logs:
        log.close()
    for k, p in enumerate(workers):
        assert p.returncode == 0, (tmp_path / f"worker-{k}.jsonl").read_text()[-500:]
    with small_mf(db_path) as mf:
        for k in range(4):
            mine = [t for t in mf.conversation(f"w{k}").history()]
            assert len(mine) == n // 2
        shared = mf.conversation("shared").history()
        assert len(shared) == 4 * n // 2 and len({t.content for t in shared}) == len(shared)  # 0 lost, 0 duplicated
        assert orphan_cards(mf) == []
        for cid in ("shared", "w0", "w1", "w2", "w3"):
            conv = mf.conversation(cid)
            assert is_contiguous_cover(conv.catalog_items(), len(conv.history()))
        assert sum(mf.storage.cards.count_by_depth().values()) > 0


def test_settings_whose_fixed_parts_cannot_fit_are_refused(db_path):
    with pytest.raises(memfold.InvalidInput, match=r"system note 15 tokens >= usable budget 12 \(budget 12 - output reserve 0\)"):
        MemFold(db_path, clock=LogicalClock(), token_counter="words",
                window=WindowSettings(budget_tokens=12, output_reserve_tokens=0))
    mf = small_mf(db_path)
    with pytest.raises(memfold.InvalidInput, match="system note 15 tokens"):
        mf.window = WindowSettings(budget_tokens=40, output_reserve_tokens=30)
    assert mf.window.budget_tokens == 100  # unchanged
    mf.window = WindowSettings(budget_tokens=40, output_reserve_tokens=30, system_note="")  # no note: fits
    mf.close()


def test_a_cache_warm_conversation_waits_unless_past_the_hard_line(db_path):
    mf = small_mf(db_path)
    conv = mf.conversation("c")
    talk(conv, 8)
    conv.report_usage(60)  # a model call just now: past the soft line (50), below the hard one (100)
    assert conv.compaction_note() is not None
    worker = mf.worker(cache_warm_seconds=300)
    assert worker.run_once() == 1 and worker.stats.warm_waits == 1 and worker.stats.folds == 0
    assert conv.compaction_note()["not_before"] > time.time() + 200
    assert mf.db.execute("SELECT COUNT(*) FROM cards").fetchone()[0] == 0
    mf.clock.advance(301)  # the cache has cooled: the note is due again on the window's clock
    with mf.storage.transaction():
        mf.storage.runs.renote_compaction("c", attempts=0, not_before=0.0, error=None)
    assert worker.run_once() == 1 and worker.stats.folds == 1
    mf.close()


def test_a_hot_tail_larger_than_the_budget_shrinks_by_tokens_keeping_a_tool_call_with_its_result(db_path):
    """``hot_turns`` is a maximum (issue 13, point 6): 6 hot turns of 30 words cannot fit 100 tokens."""
    mf = MemFold(db_path, clock=LogicalClock(), token_counter="words",
                 window=WindowSettings(**dict(SETTINGS, hot_turns=6, leaf_chunk_tokens=60)))
    conv = mf.conversation("c")
    for i in range(4):
        conv.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} " + "word " * 28})
    call = [{"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{\"order\": \"ORD-9\"}"}}]
    conv.append({"role": "assistant", "content": "looking it up", "tool_calls": call})
    conv.append({"role": "tool", "tool_call_id": "call_1", "content": "ORD-9 shipped " + "detail " * 25})
    ctx = conv.context()
    assert ctx.total_tokens <= ctx.usable_tokens
    hot = [m for m in ctx.messages[-len(ctx.hot_refs):]]
    assert 1 <= len(ctx.hot_refs) < 6  # fewer than hot_turns: the tail shrank to what fits
    assert hot[0]["role"] != "tool" and hot[-1]["role"] == "tool"  # the result kept with its call
    assert any(m.get("tool_calls") for m in hot)
    mf.close()


class GatedSummarizer(ExtractiveSummarizer):
    """An extractive summarizer whose first call waits until the test opens the gate (a slow LLM)."""

    def __init__(self, counter):
        super().__init__(counter)
        import threading

        self.entered, self.gate = threading.Event(), threading.Event()

    def summarize(self, items, depth, *, target_tokens=None):
        self.entered.set()
        assert self.gate.wait(DEADLINE), "the test never opened the gate"
        return super().summarize(items, depth, target_tokens=target_tokens)


def test_a_fold_slower_than_its_lease_keeps_the_lease_and_no_other_worker_takes_it(db_path):
    import threading

    mf = small_mf(db_path)
    slow = GatedSummarizer(mf.token_counter)
    mf.parts.summarizer = slow
    conv = mf.conversation("c", namespace="default")
    n = 0
    while conv.compaction_note() is None:
        talk(conv, 1, n)
        n += 1
    first = mf.worker(lease_seconds=3.0, holder="first")
    runner = threading.Thread(target=first.run_once)
    runner.start()
    other_mf = small_mf(db_path)
    try:
        assert slow.entered.wait(DEADLINE)
        [held] = other_mf.storage.runs.list_leases()
        # the heartbeat renews every third of the lease (1 s): wait until it renewed twice (the lease
        # outlived its first term), then the second worker comes within the ~2 s the lease has left
        # (a 0.6 s lease left 0.4 s, which a stalled heartbeat thread on a loaded machine can miss)
        wait_for(lambda: other_mf.storage.runs.list_leases()[0].expires_at >= held.acquired_at + 4.5,
                 "the running fold to renew its lease")
        second = other_mf.worker(lease_seconds=3.0, holder="second")
        [note] = other_mf.storage.runs.compaction_notes()
        assert second.take(note) is False and second.stats.notes_busy == 1  # still held: not taken
        assert [l.holder for l in other_mf.storage.runs.list_leases()] == ["first"]
    finally:
        slow.gate.set()
        runner.join(DEADLINE)
    assert first.stats.folds == 1 and first.stats.lost_races == 0 and first.stats.abandoned == 0
    assert [(l.holder, l.outcome) for l in other_mf.storage.runs.list_leases()] == [("first", "ok")]
    assert orphan_cards(mf) == [] and conv.compaction_note() is None
    other_mf.close()
    mf.close()
