"""Benchmark of the compaction worker (issue 13, points 4, 8 and 9), printed as one table.

Three parts (``--parts latency,cache,load``; whitespace word counting throughout):

* **latency**: for 1K and 10K turns of history (synthetic support chatter, logical clock) and a
  summarizer that sleeps ``--delay`` seconds (default 1 s) per call, ``--appends`` appends
  paced at ``--rate`` per second (a chat's pace), three ways: ``none``,
  ``append(compact=False)``, no compaction at all (the baseline); ``foreground``, the behaviour
  before issue 13 (``compact_on_append``: every append past the soft line folds before it
  returns); ``worker``, appends past the soft line only leave a note and ``mf.start_worker()``
  folds in a thread (the hard line still folds in the foreground if the worker falls behind).
  Append p50/p95/p99/max in ms, the appends that folded in the foreground, the worker's cards
  per second. Goal of issue 13: worker p95 within 2x of ``none``.
* **cache**: a bot's sessions on the logical clock (``--sessions`` of ``--calls`` model calls
  10 s apart, 600 s idle between sessions; each call compiles the context, then reports its
  usage), the worker run after every turn, with the cache-warm skip (``cache_warm_seconds``
  300) and without (0). Per model call made while the provider's cache is warm (the previous
  call less than 300 s before), the prompt-prefix tokens rewritten: the tokens of the compiled
  context after its common prefix with the previous call's, less the turns appended since.
* **load**: real processes on one file: ``--writers`` writers x ``--load-appends`` appends (each
  writer alternates its own conversation and a shared one, with idempotency keys, as fast as
  it can), two worker processes (``memfold worker``) and a reader compiling and searching until
  the writers are done and every note is taken (BM25 search: hybrid search's cost under load is
  issue 18's). It checks the issue's figures (0 errors of any
  kind, 0 lost, 0 duplicated turns, 0 orphan cards, every compiled context within budget,
  every catalog a contiguous cover) and prints append and compile p50/p95 under that load and
  the workers' cards per second. The suite runs the same shape smaller
  (``tests/test_worker.py::test_four_writers_two_workers_and_a_reader``, 4 x 120); the issue's
  size, 4 x 2,000, is this part's default.

Run: ``python bench/bench_worker.py [--delay 1] [--appends 300] [--parts latency,cache,load]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import memfold
from memfold import ExtractiveSummarizer, WindowSettings
from memfold.replay.stats import percentile as pct

#: support chatter without standing instructions: words such as "never" and "please" would make the
#: constraint extractor protect a random sentence every few turns, so the protected channel (shown
#: verbatim, never folded) would grow without bound and the bench would measure that instead
WORDS = ("order refund replacement ORD-{} ships on May {} to {} Elm St by email or phone thanks ok "
         "sounds good the a we will check tracking TRK-{} path /srv/app{}/config.yaml amount ${}.00").split()
SETTINGS = dict(budget_tokens=3_000, output_reserve_tokens=0, hot_turns=16, leaf_chunk_tokens=400,
                card_target_tokens=40, rollup_fanin=4, soft_watermark=0.7, hard_watermark=1.0)


class Sleepy(ExtractiveSummarizer):
    """The extractive summarizer, taking ``delay`` seconds per call like a model would."""

    id = "sleepy"

    def __init__(self, counter, delay: float) -> None:
        super().__init__(counter)
        self.delay = delay

    def summarize(self, items, depth, *, target_tokens=None):
        time.sleep(self.delay)
        return super().summarize(items, depth, target_tokens=target_tokens)


def turns(rnd: random.Random, n: int, start: int):
    for i in range(start, start + n):
        text = " ".join(rnd.choice(WORDS).format(rnd.randint(1, 9999)) for _ in range(rnd.randint(4, 16)))
        yield {"role": "user" if i % 2 == 0 else "assistant", "content": text}


def run(path: Path, history: int, mode: str, args) -> dict:
    mf = memfold.MemFold(path, clock=memfold.LogicalClock(), token_counter="words",
                         window=WindowSettings(**SETTINGS, compact_on_append=(mode == "foreground")))
    conv = mf.conversation("bench")
    rnd = random.Random(7)
    for start in range(0, history, 1_000):
        conv.append_many(turns(rnd, 1_000, start), compact=False)
        conv.compact()  # the history, folded with the fast summarizer first
    mf.summarizer = Sleepy(mf.token_counter, args.delay)
    thread = mf.start_worker(poll_seconds=0.02) if mode == "worker" else None
    times, folded, gap = [], 0, 1.0 / args.rate
    cards_before = mf.db.execute("SELECT COUNT(*) FROM cards").fetchone()[0]
    began = time.perf_counter()
    for turn in turns(rnd, args.appends, history):
        t0 = time.perf_counter()
        conv.append(turn, compact=(mode != "none"))
        took = time.perf_counter() - t0
        times.append(took * 1000)
        folded += took > args.delay * 0.9
        time.sleep(max(0.0, gap - took))  # pacing a chat, not synchronising
    elapsed = time.perf_counter() - began
    stats = thread.stop() if thread else None
    cards = mf.db.execute("SELECT COUNT(*) FROM cards").fetchone()[0] - cards_before
    mf.close()
    return {"history": history, "mode": mode, "p50": statistics.median(times), "p95": pct(times, 0.95),
            "p99": pct(times, 0.99), "max": max(times), "foreground_folds": folded,
            "worker_cards_per_s": (stats.cards / elapsed) if stats else None, "cards": cards}


# -- cache: prompt-prefix tokens rewritten per model call, with and without the cache-warm skip --------
def cache_run(warm_seconds: float, args) -> dict:
    clock = memfold.LogicalClock()
    settings = dict(SETTINGS, budget_tokens=1_500, leaf_chunk_tokens=200, hot_turns=8)
    with tempfile.TemporaryDirectory() as tmp:
        mf = memfold.MemFold(Path(tmp) / "cache.db", clock=clock, token_counter="words",
                             window=WindowSettings(**settings))
        conv = mf.conversation("bot")
        worker = mf.worker(cache_warm_seconds=warm_seconds, lease_clock=clock, scan_every=0)
        gen, count = turns(random.Random(3), 10 ** 9, 0), mf.token_counter.count
        previous, last_call, fresh = None, None, 0
        warm_calls = rewritten = calls = 0
        for _ in range(args.sessions):
            for _ in range(args.calls):
                for speaker in ("user", "assistant"):
                    if speaker == "assistant":  # the model's answer, after the call
                        worker.run_once()
                    turn = next(gen)
                    conv.append(turn)
                    fresh += count(turn["content"])
                    clock.advance(5)
                    if speaker == "assistant":
                        continue
                    ctx = conv.context()  # the model call's prompt
                    messages = [(m["role"], m.get("content")) for m in ctx.messages]
                    same = 0
                    if previous is not None:
                        while same < min(len(previous), len(messages)) and previous[same] == messages[same]:
                            same += 1
                    after_prefix = sum(count(text or "") for _, text in messages[same:])
                    calls += 1
                    if last_call is not None and clock.now() - last_call < 300:  # the provider's cache is warm
                        warm_calls += 1
                        rewritten += max(0, after_prefix - fresh)
                    previous, last_call, fresh = messages, clock.now(), 0
                    conv.report_usage(ctx.total_tokens)
            clock.advance(600)  # idle: the cache cools
            worker.run_once()
        cards = len(mf.db.execute("SELECT id FROM cards").fetchall())
        mf.close()
    return {"warm_seconds": warm_seconds, "calls": calls, "warm_calls": warm_calls,
            "rewritten_per_warm_call": rewritten / max(1, warm_calls), "rewritten": rewritten,
            "worker_folds": worker.stats.folds, "warm_waits": worker.stats.warm_waits, "cards": cards}


# -- load: 4 writer processes, 2 workers and a reader on one file ----------------------------------
LOAD_SETTINGS = dict(budget_tokens=160, output_reserve_tokens=0, hot_turns=4, rollup_fanin=3, leaf_chunk_tokens=20,
                     card_target_tokens=6, soft_watermark=0.5, hard_watermark=1.0)
WRITER = textwrap.dedent("""
    import json, sys, time, traceback
    from memfold import MemFold, LogicalClock
    from memfold.window.settings import WindowSettings
    path, who, n, settings = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
    mf = MemFold(path, clock=LogicalClock(), token_counter="words", window=WindowSettings(**settings))
    errors, times = 0, []
    for i in range(n):
        conv = mf.conversation(who if i % 2 == 0 else "shared")
        t0 = time.perf_counter()
        try:
            conv.append({"role": "user" if i % 4 < 2 else "assistant",
                         "content": f"{who} turn {i} about order ORD-{i} and the delivery window"},
                        idempotency_key=f"{who}-{i}")
        except Exception:
            errors += 1
            traceback.print_exc()
        times.append((time.perf_counter() - t0) * 1000)
    mf.close()
    print(json.dumps({"errors": errors, "times": times}))
""")
READER = textwrap.dedent("""
    import json, os, sys, time, traceback
    from memfold import MemFold, LogicalClock
    from memfold.window.settings import WindowSettings
    path, stop, settings = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    mf = MemFold(path, clock=LogicalClock(), token_counter="words", window=WindowSettings(**settings), embedder=None)
    errors = over = 0
    times, searches = [], []
    while not os.path.exists(stop) or len(times) < 3:
        for cid in ("shared", "w0"):
            try:
                t0 = time.perf_counter()
                ctx = mf.conversation(cid).context()
                times.append((time.perf_counter() - t0) * 1000)
                over += ctx.total_tokens > ctx.usable_tokens
                t0 = time.perf_counter()
                mf.conversation(cid).search("delivery", k=3)
                searches.append((time.perf_counter() - t0) * 1000)
            except Exception:
                errors += 1
                traceback.print_exc()
    mf.close()
    print(json.dumps({"errors": errors, "over": over, "times": times, "searches": searches}))
""")


def load_run(args) -> dict:
    from memfold.window.catalog import is_contiguous_cover

    names = [f"w{k}" for k in range(args.writers)]
    n = args.load_appends
    with tempfile.TemporaryDirectory() as tmp:
        db, stop = Path(tmp) / "load.db", Path(tmp) / "stop"
        settings = json.dumps(LOAD_SETTINGS)
        with memfold.MemFold(db, clock=memfold.LogicalClock(), token_counter="words",
                             window=WindowSettings(**LOAD_SETTINGS)) as mf:
            for cid in ("shared", *names):
                mf.conversation(cid)
        cli = [sys.executable, "-c", "from memfold.cli import main; main()"]
        wargs = ["--budget", "160", "--reserve", "0", "--hot-turns", "4", "--fanin", "3", "--leaf-chunk", "20",
                 "--card-target", "6", "--soft", "0.5", "--poll", "0.05", "--lease-seconds", "30"]
        began = time.perf_counter()
        logs = [open(Path(tmp) / f"worker-{k}.jsonl", "w+") for k in range(2)]  # a file: a pipe nobody reads fills up
        workers = [subprocess.Popen([*cli, "worker", str(db), "--json", "--holder", f"worker-{k}", *wargs],
                                    stdout=logs[k], stderr=subprocess.STDOUT, text=True) for k in range(2)]
        reader = subprocess.Popen([sys.executable, "-c", READER, str(db), str(stop), settings],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(db), who, str(n), settings],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for who in names]
        results, problems = [], []
        for w in writers:
            out, err = w.communicate()
            if w.returncode != 0:
                problems.append(f"writer exit {w.returncode}: {err[-300:]}")
            results.append(json.loads(out) if out.strip() else {"errors": 1, "times": []})
        writing = time.perf_counter() - began
        with memfold.MemFold(db, clock=memfold.LogicalClock(), token_counter="words",
                             window=WindowSettings(**LOAD_SETTINGS)) as mf:
            while mf.compaction_notes():  # the workers take every note (a condition, polled)
                time.sleep(0.1)
        stop.touch()
        rout, rerr = reader.communicate()
        read = json.loads(rout) if rout.strip() else {"errors": 1, "over": 0, "times": []}
        elapsed = time.perf_counter() - began
        stats = []
        for p, log in zip(workers, logs):
            p.send_signal(signal.SIGTERM)
            p.wait()
            log.seek(0)
            out = log.read()
            log.close()
            lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
            stats.append(lines[-1] if lines else {})
            if os.environ.get("BENCH_DEBUG"):
                print("worker", stats[-1], file=sys.stderr)
            if p.returncode != 0:
                problems.append(f"worker exit {p.returncode}: {out[-300:]}")
        with memfold.MemFold(db, clock=memfold.LogicalClock(), token_counter="words",
                             window=WindowSettings(**LOAD_SETTINGS)) as mf:
            lost = sum(max(0, n // 2 - len(mf.conversation(who).history())) for who in names)
            shared = mf.conversation("shared").history()
            lost += max(0, len(names) * (n // 2) - len(shared))
            duplicated = len(shared) - len({t.content for t in shared}) + sum(
                len(mf.conversation(who).history()) - len({t.content for t in mf.conversation(who).history()})
                for who in names)
            orphans = len(mf.db.execute(
                "SELECT id FROM cards WHERE id NOT IN (SELECT item_id FROM catalog_items WHERE kind = 'card') "
                "AND id NOT IN (SELECT child_id FROM card_covers WHERE child_kind = 'card')").fetchall())
            contiguous = all(is_contiguous_cover(mf.conversation(c).catalog_items(), len(mf.conversation(c).history()))
                             for c in ("shared", *names))
            cards = len(mf.db.execute("SELECT id FROM cards").fetchall())
    times = [t for r in results for t in r["times"]]
    return {"writers": len(names), "appends": n, "errors": sum(r["errors"] for r in results) + read["errors"],
            "lost": lost, "duplicated": duplicated, "orphans": orphans, "over_budget": read["over"],
            "contiguous": contiguous, "problems": problems, "append_p50": statistics.median(times),
            "append_p95": pct(times, 0.95), "compile_p50": statistics.median(read["times"]),
            "compile_p95": pct(read["times"], 0.95), "compiles": len(read["times"]), "cards": cards,
            "search_p50": statistics.median(read["searches"]), "search_p95": pct(read["searches"], 0.95),
            "worker_cards": sum(s.get("cards", 0) for s in stats), "writing_s": writing, "elapsed_s": elapsed,
            "worker_cards_per_s": sum(s.get("cards", 0) for s in stats) / elapsed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", default="latency,cache,load", help="which parts to run (comma-separated)")
    parser.add_argument("--delay", type=float, default=1.0, help="summarizer seconds per call (latency)")
    parser.add_argument("--appends", type=int, default=300, help="timed appends per latency run")
    parser.add_argument("--rate", type=float, default=20.0, help="appends per second (latency)")
    parser.add_argument("--max", type=int, default=10_000, help="largest history (turns, latency)")
    parser.add_argument("--sessions", type=int, default=12, help="bot sessions (cache)")
    parser.add_argument("--calls", type=int, default=30, help="model calls per session (cache)")
    parser.add_argument("--writers", type=int, default=4, help="writer processes (load)")
    parser.add_argument("--load-appends", type=int, default=2_000, help="appends per writer (load)")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    rows, cache, load = [], [], None
    if "latency" in parts:
        with tempfile.TemporaryDirectory() as tmp:
            for history in [h for h in (1_000, 10_000) if h <= args.max]:
                for mode in ("none", "foreground", "worker"):
                    rows.append(run(Path(tmp) / f"{history}-{mode}.db", history, mode, args))
                    r = rows[-1]
                    print(f"latency {r['history']:>6} {r['mode']:<10} p50 {r['p50']:.2f} ms  p95 {r['p95']:.2f} ms  "
                          f"max {r['max']:.1f} ms  fg folds {r['foreground_folds']}", flush=True)
    if "cache" in parts:
        for warm in (0.0, 300.0):
            cache.append(cache_run(warm, args))
            print("cache", cache[-1], flush=True)
    if "load" in parts:
        load = load_run(args)
        print("load", {k: v for k, v in load.items()}, flush=True)
    print()
    if rows:
        print(f"append latency: summarizer {args.delay:g} s/call, {args.appends} appends at {args.rate:g}/s per run")
        print(f"| history | mode | p50 ms | p95 ms | p99 ms | max ms | fg folds | worker cards/s | p95 / none |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        base = {r["history"]: r["p95"] for r in rows if r["mode"] == "none"}
        for r in rows:
            wc = f"{r['worker_cards_per_s']:.2f}" if r["worker_cards_per_s"] is not None else "-"
            print(f"| {r['history']:,} | {r['mode']} | {r['p50']:.2f} | {r['p95']:.2f} | {r['p99']:.2f} | "
                  f"{r['max']:.1f} | {r['foreground_folds']} | {wc} | {r['p95'] / base[r['history']]:.2f}x |")
        print()
    if cache:
        print(f"prompt-prefix tokens rewritten per model call ({args.sessions} sessions x {args.calls} calls)")
        print("| cache-warm skip | warm calls | rewritten tokens / warm call | rewritten in all | worker folds | warm waits |")
        print("| --- | --- | --- | --- | --- | --- |")
        for c in cache:
            label = "off (0 s)" if not c["warm_seconds"] else f"on ({c['warm_seconds']:g} s)"
            print(f"| {label} | {c['warm_calls']} | {c['rewritten_per_warm_call']:.1f} | {c['rewritten']:,} | "
                  f"{c['worker_folds']} | {c['warm_waits']} |")
        print()
    if load:
        L = load
        print(f"under load: {L['writers']} writer processes x {L['appends']:,} appends, 2 workers, 1 reader "
              f"({L['writing_s']:.1f} s writing, {L['elapsed_s']:.1f} s until every note was taken)")
        print("| errors | lost | duplicated | orphan cards | contexts over budget | contiguous cover | "
              "append p50 / p95 ms | compile p50 / p95 ms | search p50 / p95 ms | compiles | cards (by workers) | "
              "worker cards/s |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        print(f"| {L['errors']} | {L['lost']} | {L['duplicated']} | {L['orphans']} | {L['over_budget']} | "
              f"{'yes' if L['contiguous'] else 'NO'} | {L['append_p50']:.2f} / {L['append_p95']:.2f} | "
              f"{L['compile_p50']:.2f} / {L['compile_p95']:.2f} | {L['search_p50']:.1f} / {L['search_p95']:.1f} | "
              f"{L['compiles']:,} | {L['cards']:,} ({L['worker_cards']:,}) | {L['worker_cards_per_s']:.1f} |")
        for problem in L["problems"]:
            print("problem:", problem)


if __name__ == "__main__":
    main()
