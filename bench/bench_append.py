"""Benchmark: one ``append`` on a cached scale file (issue 18, point 4).

Copies a database that ``bench/bench_scale.py`` built (``--db``, e.g.
``/tmp/memfold-bench-scale/one-100000.db``) to a temporary folder, opens it as that benchmark does
(logical clock, word tokens, its window settings, no embedder), compiles once, then appends
``--appends`` LoCoMo turns (user and assistant taking turns, from where the build stopped) and
prints per append: wall time p50/p95 (``time.perf_counter``), CPU time of the appending thread
p50/p95 (``time.thread_time``, which does not count time spent waiting for a core, so it holds
under load) and its p50 for user and for assistant turns apart (a user turn runs the rule
extractor, an assistant turn does not), and SQL statements (``set_trace_callback``; ``BEGIN``/``COMMIT`` counted apart).
Each scale file appends other LoCoMo turns (those after its build), and the extractor's cost follows
the text: to compare scales, ``bench/bench_append_cg.py`` appends the same turns on each (round 16).
``--profile FILE`` also writes a cProfile of the appends (a second, separate pass).
``--json`` prints the figures as one JSON object.
Run: ``python bench/bench_append.py --db /tmp/memfold-bench-scale/one-100000.db [--appends 300]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import locomo_texts, percentile, settings_kwargs  # noqa: E402

CONTROL = re.compile(r"^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)", re.I)


def open_copy(db: Path, tmp: str):
    import memfold
    from memfold import WindowSettings

    path = Path(tmp) / "m.db"
    shutil.copy(db, path)
    mf = memfold.MemFold(path, clock=memfold.LogicalClock(), token_counter="words", embedder=None,
                         window=WindowSettings(**settings_kwargs()))
    conv = mf.conversation("c0", namespace="bench")
    conv.context()
    return mf, conv


def turns_after(db: Path, n: int, texts: list[str]) -> list[dict]:
    meta = db.with_suffix(".json")
    start = json.loads(meta.read_text())["turns"] if meta.exists() else 0
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": texts[(start + i) % len(texts)]}
            for i in range(n)]


def measure(db: Path, appends: int) -> dict:
    texts, _ = locomo_texts()
    turns = turns_after(db, appends, texts)
    with tempfile.TemporaryDirectory() as tmp:
        mf, conv = open_copy(db, tmp)
        conn = mf.storage.db.conn
        seen: list[str] = []
        wall, cpu, stmts, control = [], [], [], []
        by_role: dict[str, list[float]] = {"user": [], "assistant": []}
        for turn in turns:
            seen.clear()
            conn.set_trace_callback(seen.append)
            t0, c0 = time.perf_counter(), time.thread_time()
            conv.append(turn)
            c1, t1 = time.thread_time(), time.perf_counter()
            conn.set_trace_callback(None)
            wall.append(t1 - t0)
            cpu.append(c1 - c0)
            by_role[turn["role"]].append(c1 - c0)
            n_control = sum(1 for s in seen if CONTROL.match(s))
            stmts.append(len(seen) - n_control)
            control.append(n_control)
        mf.close()
    ms = lambda xs, p: round(percentile(xs, p) * 1000, 4)  # noqa: E731
    return {"db": str(db), "appends": appends, "wall_p50_ms": ms(wall, 50), "wall_p95_ms": ms(wall, 95),
            "cpu_p50_ms": ms(cpu, 50), "cpu_p95_ms": ms(cpu, 95),
            "user_cpu_p50_ms": ms(by_role["user"], 50), "assistant_cpu_p50_ms": ms(by_role["assistant"], 50),
            "statements_mean": round(statistics.mean(stmts), 2), "statements_p50": percentile(stmts, 50),
            "control_mean": round(statistics.mean(control), 2), "load": os.getloadavg()[0]}


def profile(db: Path, appends: int, out: str) -> None:
    import cProfile

    texts, _ = locomo_texts()
    turns = turns_after(db, appends, texts)
    with tempfile.TemporaryDirectory() as tmp:
        mf, conv = open_copy(db, tmp)
        prof = cProfile.Profile()
        prof.enable()
        for turn in turns:
            conv.append(turn)
        prof.disable()
        prof.dump_stats(out)
        mf.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", type=Path, required=True, help="a database bench_scale.py built")
    parser.add_argument("--appends", type=int, default=300, help="appends measured")
    parser.add_argument("--profile", help="also write a cProfile of the appends to this file")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    result = measure(args.db, args.appends)
    if args.profile:
        profile(args.db, args.appends, args.profile)
    if args.json:
        print(json.dumps(result))
        return
    print(f"{args.appends} appends on a copy of {args.db} (load average {result['load']:.2f})")
    print(f"  wall p50 / p95: {result['wall_p50_ms']:.3f} / {result['wall_p95_ms']:.3f} ms")
    print(f"  CPU (thread time) p50 / p95: {result['cpu_p50_ms']:.3f} / {result['cpu_p95_ms']:.3f} ms")
    print(f"  CPU p50 by role: user {result['user_cpu_p50_ms']:.3f} ms, assistant {result['assistant_cpu_p50_ms']:.3f} ms")
    print(f"  SQL statements per append: {result['statements_mean']:.2f} (+ {result['control_mean']:.2f} BEGIN/COMMIT)")


if __name__ == "__main__":
    main()
