"""Benchmark read-time scoring, ranking and eviction (issue 3 point 1).

Prints two tables:

1. **pure ranking**: :func:`memfold.memory.scoring.score` + :func:`rank` (top 10) over numpy
   arrays of 1K, 10K, 100K and 1M active records: the cost of the policy itself.
2. **end to end on SQLite**: ``MemoryStore.read(ns, 10)`` on a real database file with N active
   records in one namespace (load columns, score, rank, fetch the top 10; with ``touch`` also the
   access-count update), and one ``write`` into a full store of N records (supersession check,
   eviction scoring over the whole store, eviction, all in one transaction).

Medians of several runs, milliseconds.

    python bench/bench_scoring.py [--sizes 1000,10000,100000,1000000] [--db-sizes 1000,10000,100000] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time

import numpy as np

from memfold import LogicalClock, MemFold
from memfold.memory.scoring import rank, score


def median_ms(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def bench_pure(n: int) -> dict:
    rng = np.random.default_rng(0)
    importance = rng.random(n)
    written_at = rng.integers(0, 1000, n).astype(np.float64)
    access = rng.integers(0, 20, n)
    ids = np.arange(1, n + 1)
    repeats = 50 if n <= 100_000 else 10

    def run():
        s = score(importance, written_at, access, 1000.0, half_life=4.0, access_weight=0.1)
        return rank(s, ids, 10)

    return {"records": n, "score_and_top10_ms": median_ms(run, repeats)}


def load_store(mf: MemFold, n: int) -> None:
    """Bulk-load n active semantic records (bypassing the write path, which is what is measured)."""
    rng = np.random.default_rng(1)
    importance = rng.random(n).round(3)
    written = rng.integers(0, 1000, n)
    batch = 50_000
    for start in range(0, n, batch):
        rows = [
            {"namespace": "bench", "type": "semantic", "key": None, "content": f"fact number {i}",
             "importance": float(importance[i]), "created_at": float(written[i]), "written_at": float(written[i]),
             "access_count": int(i % 7), "status": "active"}
            for i in range(start, min(n, start + batch))
        ]
        mf.db["records"].insert_all(rows)


def bench_db(n: int, workdir: str) -> dict:
    path = os.path.join(workdir, f"scoring_{n}.db")
    mf = MemFold(path, clock=LogicalClock(1000), token_counter="words")
    t0 = time.perf_counter()
    load_store(mf, n)
    load_s = time.perf_counter() - t0
    repeats = 20 if n <= 100_000 else 5
    peek = median_ms(lambda: mf.memory.read("bench", 10, touch=False), repeats)
    touch = median_ms(lambda: mf.memory.read("bench", 10), repeats)
    mf.memory.set_policy("bench", "semantic", capacity=n)
    counter = iter(range(10**9))
    write = median_ms(lambda: mf.memory.write("bench", "semantic", f"new fact {next(counter)}", importance=0.5),
                      repeats)
    assert len(mf.memory.list("bench", "semantic", status="evicted")) == repeats
    mf.close()
    return {"records": n, "load_s": load_s, "read_top10_ms": peek, "read_top10_touch_ms": touch,
            "write_with_eviction_ms": write}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000,1000000")
    parser.add_argument("--db-sizes", default="1000,10000,100000",
                        help="record counts of the SQLite case (1,000,000 takes minutes; add it explicitly)")
    parser.add_argument("--json", dest="json_out", default=None, help="Also write the figures to this file.")
    args = parser.parse_args()
    pure = [bench_pure(int(n)) for n in args.sizes.split(",") if n]
    print("pure ranking (score + top-10, numpy)")
    print(f"{'records':>10} {'ms':>10}")
    for row in pure:
        print(f"{row['records']:>10,} {row['score_and_top10_ms']:>10.3f}")
    db_rows = []
    with tempfile.TemporaryDirectory() as workdir:
        print("\nend to end on a SQLite file (one namespace, one semantic store)")
        print(f"{'records':>10} {'read ms':>10} {'read+touch':>11} {'write+evict':>12} {'(load s)':>9}")
        for n in [int(x) for x in args.db_sizes.split(",") if x]:
            row = bench_db(n, workdir)
            db_rows.append(row)
            print(f"{row['records']:>10,} {row['read_top10_ms']:>10.2f} {row['read_top10_touch_ms']:>11.2f} "
                  f"{row['write_with_eviction_ms']:>12.2f} {row['load_s']:>9.1f}", flush=True)
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as fh:
            json.dump({"pure": pure, "db": db_rows}, fh, indent=2)


if __name__ == "__main__":
    main()
