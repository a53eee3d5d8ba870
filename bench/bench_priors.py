"""Benchmark: what the search's turn priors (issue 18 point 7: date, speaker, session, length, time) cost per query.

Uses ``bench/bench_scale.py``'s cached database of one conversation at ``--size`` turns (built
there when missing, with all-MiniLM-L6-v2 vectors), opens it, and times the same LoCoMo questions
with the priors on (the defaults) and off (all four weights 0), interleaved in one process so the
machine's load hits both alike; BM25 and hybrid, p50 / p95 ms and the difference. The searcher is
given a system clock so the question's dates are parsed and the date prior computed, as on a real
deployment (the cached file's times are logical ticks, so no turn falls inside a date; the cost is
the same). Which of the two runs first alternates from question to question. The first search
of the process, which reads every turn's facets once, is reported apart. Besides the wall time,
the CPU time of the searching thread (``time.thread_time``, which the machine's load inflates far
less) is reported per search. ``--prior time`` compares only round 8's time prior (``time_weight``
on and 0) on "when" questions (:func:`memfold.memory.query_analysis.asks_when`), the only ones it
touches.

Run: ``python bench/bench_priors.py [--size 10000] [--cache /tmp/memfold-bench-scale] [--queries 80]
[--prior all|time]``.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OFF = dict(date_weight=0.0, speaker_weight=0.0, session_weight=0.0, length_weight=0.0, time_weight=0.0)


def pct(values: list[float], p: int) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--cache", default="/tmp/memfold-bench-scale")
    parser.add_argument("--queries", type=int, default=80)
    parser.add_argument("--prior", choices=("all", "time"), default="all",
                        help="all: every prior on vs off; time: the time prior alone, on 'when' questions")
    args = parser.parse_args()
    off = OFF if args.prior == "all" else dict(time_weight=0.0)
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, str(HERE / "bench_scale.py"), "--cache", str(cache), "--_build", "one",
                    str(args.size)], check=True)
    sys.path.insert(0, str(HERE))
    import torch

    torch.set_num_threads(1)
    import memfold
    from bench_scale import locomo_texts
    from memfold.memory.query_analysis import asks_when
    from memfold.memory.search import HybridSearch

    _, questions = locomo_texts()
    rnd = random.Random(7)
    if args.prior == "time":
        when = [q for q in questions if asks_when(q)]
        qs = rnd.sample(when, min(len(when), args.queries))
    else:
        dated = [q for q in questions if any(ch.isdigit() for ch in q)]
        qs = rnd.sample(questions, args.queries - args.queries // 4) + rnd.sample(dated, min(len(dated), args.queries // 4))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.db"
        shutil.copy(cache / f"one-{args.size}.db", path)
        mf = memfold.MemFold(path, clock=memfold.LogicalClock(), token_counter="words", embedder="default")
        searcher = HybridSearch(mf.storage, mf.embedder, index=mf.embeddings, clock=memfold.SystemClock())
        mf.embedder.embed_batch(["warm up"])
        searcher.search("warm up query", conversation_id="c0", kinds=("turn", "card"), mode="bm25", **OFF)
        searcher.search("warm up query", conversation_id="c0", kinds=("turn", "card"), mode="hybrid", **OFF)
        t0 = time.perf_counter()
        searcher.search("warm up query", conversation_id="c0", kinds=("turn", "card"), mode="bm25")
        first = time.perf_counter() - t0
        times: dict = {}
        cpu: dict = {}
        for mode in ("bm25", "hybrid"):
            for n, q in enumerate(qs):  # which runs first alternates (the second finds warmer caches)
                for label, kw in ((("on", {}), ("off", off)) if n % 2 else (("off", off), ("on", {}))):
                    t0, c0 = time.perf_counter(), time.thread_time()
                    searcher.search(q, conversation_id="c0", kinds=("turn", "card"), mode=mode, limit=10, **kw)
                    cpu.setdefault((mode, label), []).append(time.thread_time() - c0)
                    times.setdefault((mode, label), []).append(time.perf_counter() - t0)
        facets = searcher._facets.n
        mf.close()
    what = f"({args.queries // 4} naming a date)" if args.prior == "all" else "(all asking when: the time prior alone)"
    print(f"turn priors at {args.size:,} turns in one conversation, {len(qs)} questions {what}; ms "
          f"(wall p50 / p95 / mean, then the searching thread's CPU p50 / mean)")
    print(f"first search with priors (reads {facets:,} turns' facets once): {first * 1000:.1f} ms")
    print(f"{'mode':<8}{'priors':<8}{'p50':>9}{'p95':>9}{'mean':>9}{'cpu p50':>9}{'cpu mean':>9}")
    for mode in ("bm25", "hybrid"):
        for label in ("off", "on"):
            v, c = times[(mode, label)], cpu[(mode, label)]
            print(f"{mode:<8}{label:<8}{pct(v, 50):>9.2f}{pct(v, 95):>9.2f}{statistics.mean(v) * 1000:>9.2f}"
                  f"{pct(c, 50):>9.2f}{statistics.mean(c) * 1000:>9.2f}")
        diffs = [a - b for a, b in zip(times[(mode, "on")], times[(mode, "off")])]
        cdiffs = [a - b for a, b in zip(cpu[(mode, "on")], cpu[(mode, "off")])]
        print(f"{mode:<8}{'on-off':<8}{pct(diffs, 50):>9.2f}{pct(diffs, 95):>9.2f}{statistics.mean(diffs) * 1000:>9.2f}"
              f"{pct(cdiffs, 50):>9.2f}{statistics.mean(cdiffs) * 1000:>9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
