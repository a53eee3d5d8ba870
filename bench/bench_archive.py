"""Benchmark the foundation: append throughput, history reads and record writes as the archive grows.

Prints a table: for 1K, 10K and 100K archived turns, turns appended per second (one transaction
per append, as a support bot does, and batched), history read time, memory records written per
second, and the database size. Also times `memfold --help` (cold process start).

    python bench/bench_archive.py [--sizes 1000,10000,100000] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from memfold import LogicalClock, MemFold


def bench_size(n: int, workdir: str) -> dict:
    path = os.path.join(workdir, f"archive_{n}.db")
    mf = MemFold(path, clock=LogicalClock(), token_counter="cl100k_base")
    conv = mf.conversation("bench", namespace="bench")
    single = min(n, 2000)
    t0 = time.perf_counter()
    for i in range(single):
        mf.clock.advance(1)
        conv.append({"role": "user" if i % 2 == 0 else "assistant",
                     "content": f"turn {i}: order ORD-{1000 + i} costs ${i % 500}.00, shipped to /srv/data/{i}"})
    single_s = time.perf_counter() - t0
    rest = n - single
    t0 = time.perf_counter()
    batch = 1000
    for start in range(0, rest, batch):
        conv.append_many([
            {"role": "user", "content": f"turn {single + start + j}: order ORD-{start + j} shipped"}
            for j in range(min(batch, rest - start))
        ])
    batch_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    history = conv.history()
    history_s = time.perf_counter() - t0
    assert len(history) == n
    records = min(n, 5000)
    t0 = time.perf_counter()
    for i in range(records):
        mf.memory.write("bench", "episodic", f"event {i}: user asked about order ORD-{i}", importance=0.5)
    records_s = time.perf_counter() - t0
    mf.close()
    return {
        "turns": n,
        "append_per_s": round(single / single_s),
        "batched_append_per_s": round(rest / batch_s) if rest else None,
        "history_read_ms": round(history_s * 1000, 1),
        "record_writes_per_s": round(records / records_s),
        "db_mb": round(os.path.getsize(path) / 1e6, 1),
    }


def bench_cli_start(repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run(["memfold", "--help"], capture_output=True, check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as workdir:
        rows = [bench_size(n, workdir) for n in sizes]
    cli_s = bench_cli_start()
    header = f"{'turns':>8} {'append/s':>9} {'batched/s':>10} {'history ms':>11} {'records/s':>10} {'db MB':>7}"
    print(header)
    for r in rows:
        print(f"{r['turns']:>8} {r['append_per_s']:>9} {str(r['batched_append_per_s'] or '-'):>10} "
              f"{r['history_read_ms']:>11} {r['record_writes_per_s']:>10} {r['db_mb']:>7}")
    print(f"memfold --help: {cli_s * 1000:.0f} ms (median of 5 cold starts)")
    if args.json_out:
        with open(args.json_out, "w") as fh:
            json.dump({"sizes": rows, "cli_help_seconds": cli_s}, fh, indent=2)


if __name__ == "__main__":
    main()
