"""Benchmark: append latency with a slow summarizer, foreground folding vs the background worker.

For 1K and 10K turns of history (synthetic support chatter, whitespace word counting, logical
clock) and a summarizer that sleeps ``--delay`` seconds (default 1 s) per call, it times
``--appends`` appends paced at ``--rate`` per second (a chat's pace) three ways:

* ``none``: ``append(compact=False)``, no compaction at all (the baseline);
* ``foreground``: the behaviour before issue 13, the window folding inside ``append``
  (``compact_on_append``: every append past the soft line folds before it returns);
* ``worker``: appends past the soft line only leave a note; ``mf.start_worker()`` folds in a
  thread (the hard line still folds in the foreground if the worker falls behind).

It prints append p50/p95/p99/max in milliseconds, the appends that folded in the foreground, and
the worker's folds (cards) per second. The goal of issue 13: worker p95 within 2x of ``none``.
The full-size 4-writer run of issue 13 (4 x 2,000 appends) is
``tests/test_worker.py::test_four_writers_two_workers_and_a_reader`` with ``n`` raised; the suite
runs it with 4 x 120. Run: ``python bench/bench_worker.py [--delay 1] [--appends 300]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--delay", type=float, default=1.0, help="summarizer seconds per call")
    parser.add_argument("--appends", type=int, default=300, help="timed appends per run")
    parser.add_argument("--rate", type=float, default=20.0, help="appends per second")
    parser.add_argument("--max", type=int, default=10_000, help="largest history (turns)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for history in [h for h in (1_000, 10_000) if h <= args.max]:
            for mode in ("none", "foreground", "worker"):
                rows.append(run(Path(tmp) / f"{history}-{mode}.db", history, mode, args))
                r = rows[-1]
                print(f"{r['history']:>7} {r['mode']:<10} p50 {r['p50']:8.1f} ms  p95 {r['p95']:8.1f} ms  "
                      f"p99 {r['p99']:8.1f} ms  max {r['max']:8.1f} ms  fg folds {r['foreground_folds']:3d}  "
                      f"cards {r['cards']:3d}" + (f"  worker {r['worker_cards_per_s']:.2f} cards/s"
                                                  if r["worker_cards_per_s"] is not None else ""), flush=True)
    print()
    print(f"summarizer {args.delay:g} s/call, {args.appends} appends at {args.rate:g}/s per run")
    print(f"{'history':>7} | {'mode':<10} | {'p50 ms':>8} | {'p95 ms':>8} | {'p99 ms':>8} | {'max ms':>8} | "
          f"{'fg folds':>8} | {'worker cards/s':>14}")
    for r in rows:
        wc = f"{r['worker_cards_per_s']:.2f}" if r["worker_cards_per_s"] is not None else "-"
        print(f"{r['history']:>7} | {r['mode']:<10} | {r['p50']:8.1f} | {r['p95']:8.1f} | {r['p99']:8.1f} | "
              f"{r['max']:8.1f} | {r['foreground_folds']:>8} | {wc:>14}")


if __name__ == "__main__":
    main()
