"""The dense scan of a large scope alone: one full product against the exact two-stage scan.

Reads the turn vectors of a ``bench/bench_scale.py`` file (``--db``, e.g. ``one-100000.db``),
embeds the same 60 LoCoMo questions as bench_scale (seed 7) with the default MiniLM embedder,
and times :meth:`~memfold.memory.storage.vectorscan.IncrementalMatrix.top` (the best ``--limit``
of every row, as a search's dense ranker asks: depth 100 + 8) with the two-stage scan
(:class:`~memfold.memory.storage.vectorscan.Projection`) and without it, alternating, in this
process. It prints p50 / p95 of each, how many rows the bound left to score exactly (``-1``: it
fell back to the full product), the time to build the projection, and whether both lists are the
same (ids equal, scores within 1e-6). Say the load average (printed) beside any figure. Run:
``OPENBLAS_NUM_THREADS=1 python bench/bench_dense_scan.py --db /tmp/memfold-bench-scale/one-100000.db``.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_scale as bs  # noqa: E402

import memfold  # noqa: E402
from memfold.memory.embeddings import make_embedder  # noqa: E402
from memfold.memory.storage import vectorscan as vs  # noqa: E402


def same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(i == j and abs(s - t) < 1e-6 for (i, s), (j, t) in zip(a, b))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, required=True, help="a bench_scale file")
    parser.add_argument("--limit", type=int, default=108)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:  # a copy: opening a file may write to it
        path = Path(tmp) / "m.db"
        shutil.copy(args.db, path)
        mf = memfold.MemFold(path, clock=memfold.LogicalClock(), token_counter="words", embedder=None)
        ids, vectors = mf.embeddings.matrix("turn")
        mf.close()
    dim = vectors.shape[1]
    _, questions = bs.locomo_texts()
    queries = make_embedder("default").embed_batch(random.Random(7).sample(questions, 60))
    m = vs.IncrementalMatrix()
    m.reserve(vs.grown_capacity(len(ids)), dim)
    m.add([(i + 1, int(item), "c0", i, vectors[i]) for i, item in enumerate(ids)])
    every = m.rows(None)
    t0 = time.perf_counter()
    projection = vs.Projection(m.vectors, m.n, len(m.ids))
    built = time.perf_counter() - t0
    threshold = vs.PROJECTION_MIN_ROWS
    lists: dict[str, list] = {}
    for rep in range(args.reps):
        for name in ("full", "two-stage"):
            m.projection = projection if name == "two-stage" else None
            vs.PROJECTION_MIN_ROWS = threshold if name == "two-stage" else 10**12
            times, out = [], []
            for q in queries:
                t0 = time.perf_counter()
                out.append(m.top(q, every, args.limit))
                times.append(time.perf_counter() - t0)
            lists[name] = out
            print(f"{name:10} p50 {bs.percentile(times, 50) * 1e3:6.2f} p95 {bs.percentile(times, 95) * 1e3:6.2f} ms "
                  f"| load {os.getloadavg()[0]:.2f}", flush=True)
    vs.PROJECTION_MIN_ROWS = threshold
    left = [len(c) if (c := projection.candidates(m, vs.unit(q), None, args.limit)) is not None else -1 for q in queries]
    print(f"{m.n:,} vectors of dimension {dim}; projection ({projection.coords.shape[1]} coordinates) built in "
          f"{built:.2f} s; rows scored exactly p50 {int(np.median(left)):,}, max {max(left):,}, "
          f"fallbacks {left.count(-1)} of {len(left)}; same lists: "
          f"{sum(same(a, b) for a, b in zip(lists['full'], lists['two-stage']))} of {len(queries)}")


if __name__ == "__main__":
    main()
