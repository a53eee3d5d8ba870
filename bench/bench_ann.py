"""Benchmark: the exact in-memory vector scan against the HNSW option (issue 18, point 2).

``vector_index="exact"`` scores every vector of a search's scope (:class:`IncrementalMatrix.top`);
``vector_index="ann"`` asks an HNSW graph (hnswlib, :class:`memfold.memory.storage.ann.HnswIndex`)
for candidates and scores them exactly. This measures both at the level the SQLite backend runs
them (the in-memory index; no SQL, no embedder), in a fresh process per size with one thread
(``OMP_NUM_THREADS`` and friends = 1, hnswlib ``num_threads=1``), and prints per size:

* build: filling the exact matrix (``IncrementalMatrix.add`` in blocks), and building the graph
  over it (the first ANN search of a process pays it), s;
* RSS of the process (``VmRSS``) before and after each, and bytes per vector of each part;
* query p50 / p95 (top 10, one query at a time) and recall@10 of the graph against the exact scan,
  for the whole index and for scopes holding 10%, 5% and 1% of it (a conversation's lineage,
  picked from the matrix's groups as ``SqliteVectors.nearest`` does); ``rule`` says which one
  ``vector_index="ann"`` uses for that scope (:meth:`HnswIndex.worth`);
* after the build: 100 vectors appended one by one, each followed by a search (the new vector
  must come back first: new items are found right after they are written), p50 / p95.

Vectors (dim 384): ``--data locomo`` (default) mixes real all-MiniLM-L6-v2 embeddings of LoCoMo
texts: each vector is ``a + w·b + noise`` for two random LoCoMo vectors ``a``, ``b``, ``w`` uniform
in [0, 0.8] and Gaussian noise of 0.02 per dimension, normalised (queries are drawn the same way
from their own seed); ``--data random`` gives uniform random unit vectors (no neighbour structure:
the hard case for any graph index). The LoCoMo vectors are read from ``--vectors`` (default the
shared bench cache, ``/tmp/memfold-bench-scale/locomo-vectors.npy``, read only) or, when it is
missing, embedded with :class:`memfold.MiniLMEmbedder` from ``../shared/data/locomo``.

The load average is printed beside every figure (the machine is shared). Run:
``python bench/bench_ann.py [--sizes 100000,1000000] [--queries 200] [--data locomo|random]
[--compare 100000]``; ``--compare N`` also builds hnswlib and usearch (float32 and int8) on the same
N vectors, which is how hnswlib was chosen.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data" / "locomo" / "locomo_dev.json"
SHARED_CACHE = Path("/tmp/memfold-bench-scale/locomo-vectors.npy")
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
DIM = 384
GROUPS = 100  # item i belongs to conversation "c{i % 100}": a scope of g groups holds g% of the index
SCOPES = (("all", None), ("10%", 10), ("5%", 5), ("1%", 1))


def rss_mb() -> float:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def load() -> str:
    return "load %.1f" % os.getloadavg()[0]


def locomo_vectors(path: Path):
    """Real all-MiniLM-L6-v2 vectors of LoCoMo texts: the cache, or embedded now (and saved)."""
    import numpy as np

    if path.exists():
        return np.load(path)
    from memfold import MiniLMEmbedder

    texts = []
    for conv in json.loads(DATA.read_text()):
        for key, value in conv["conversation"].items():
            if key.startswith("session_") and isinstance(value, list):
                texts += [t["text"] for t in value if t.get("text")]
    vectors = np.asarray(MiniLMEmbedder().embed_batch(texts), dtype=np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def make(n: int, data: str, base, seed: int):
    """``(n, DIM) float32`` unit vectors (see the module docstring)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    if data == "random":
        x = rng.standard_normal((n, DIM)).astype(np.float32)
    else:
        a = base[rng.integers(0, len(base), n)]
        b = base[rng.integers(0, len(base), n)]
        w = rng.uniform(0.0, 0.8, (n, 1)).astype(np.float32)
        x = a + w * b + rng.normal(0.0, 0.02, (n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def pct(values, p):
    import numpy as np

    return float(np.percentile(np.asarray(values) * 1000, p))


def child(n: int, queries: int, data: str, vectors: Path) -> dict:
    import numpy as np

    from memfold.memory.storage import ann, vectorscan

    base = locomo_vectors(vectors) if data == "locomo" else None
    out: dict = {"n": n, "data": data, "rss_start_mb": rss_mb()}
    mem = vectorscan.IncrementalMatrix()
    mem.reserve(vectorscan.grown_capacity(n), DIM)
    t = time.perf_counter()
    block = 50_000
    for start in range(0, n, block):
        x = make(min(block, n - start), data, base, seed=1000 + start // block)
        mem.add([(start + i + 1, start + i + 1, f"c{(start + i) % GROUPS}", start + i, x[i]) for i in range(len(x))])
    out["exact_build_s"], out["exact_build_load"] = time.perf_counter() - t, load()
    out["rss_exact_mb"] = rss_mb()
    graph = ann.HnswIndex()
    t = time.perf_counter()
    graph.sync(mem)
    out["ann_build_s"], out["ann_build_load"] = time.perf_counter() - t, load()
    out["rss_ann_mb"] = rss_mb()
    out["exact_bytes_per_vector"] = (out["rss_exact_mb"] - out["rss_start_mb"]) * 2**20 / n
    out["ann_bytes_per_vector"] = (out["rss_ann_mb"] - out["rss_exact_mb"]) * 2**20 / n
    qs = make(queries, data, base, seed=7)
    out["scopes"] = []
    for name, groups in SCOPES:
        lineage = None if groups is None else [(f"c{g}", None) for g in range(groups)]
        exact_t, ann_t, hit = [], [], 0
        for q in qs:  # interleaved, so both see the same load
            t = time.perf_counter()
            e = mem.top(q, mem.rows(lineage), 10)
            exact_t.append(time.perf_counter() - t)
            t = time.perf_counter()
            a = graph.top(mem, q, mem.rows(lineage), 10)
            ann_t.append(time.perf_counter() - t)
            hit += len({i for i, _ in e} & {i for i, _ in (a or [])})
        rows = len(mem.rows(lineage))
        out["scopes"].append({
            "scope": name, "rows": rows, "exact_p50": pct(exact_t, 50), "exact_p95": pct(exact_t, 95),
            "ann_p50": pct(ann_t, 50), "ann_p95": pct(ann_t, 95), "recall10": hit / (10 * len(qs)),
            "rule": "ann" if graph.worth(rows, mem.n) else "exact", "load": load()})
    appended, found = [], 0
    extra = make(100, data, base, seed=99)
    for j, v in enumerate(extra):
        item = n + j + 1
        t = time.perf_counter()
        mem.add([(item, item, f"c{item % GROUPS}", item, v)])
        a = graph.top(mem, v, mem.rows(None), 10)
        appended.append(time.perf_counter() - t)
        found += bool(a) and a[0][0] == item
    out["append_p50"], out["append_p95"], out["append_found"] = pct(appended, 50), pct(appended, 95), found
    out["append_load"] = load()
    return out


def compare(n: int, queries: int, data: str, vectors: Path) -> dict:
    """hnswlib against usearch (float32 and int8) on the same vectors, whole index, top 10, one
    thread, the same graph settings (M / connectivity 16, ef_construction / expansion_add 64,
    ef / expansion_search 64): how the library was chosen."""
    import numpy as np

    base = locomo_vectors(vectors) if data == "locomo" else None
    x = make(n, data, base, seed=1000)
    qs = make(queries, data, base, seed=7)
    truth = [set(np.argsort(-(x @ q))[:10].tolist()) for q in qs]
    out = {"n": n, "data": data, "rows": []}
    import hnswlib

    graph = hnswlib.Index(space="cosine", dim=DIM)
    graph.init_index(max_elements=n, M=16, ef_construction=64, random_seed=100)
    t = time.perf_counter()
    graph.add_items(x, np.arange(n), num_threads=1)
    build = time.perf_counter() - t
    graph.set_ef(64)
    times, hit = [], 0
    for q, want in zip(qs, truth):
        t = time.perf_counter()
        labels, _ = graph.knn_query(q.reshape(1, -1), k=10, num_threads=1)
        times.append(time.perf_counter() - t)
        hit += len(want & set(labels[0].tolist()))
    out["rows"].append(["hnswlib f32", build, pct(times, 50), pct(times, 95), hit / (10 * len(qs)), load()])
    del graph
    try:
        from usearch.index import Index
    except ImportError:
        return out
    for dtype in ("f32", "i8"):
        index = Index(ndim=DIM, metric="cos", dtype=dtype, connectivity=16, expansion_add=64, expansion_search=64)
        t = time.perf_counter()
        index.add(np.arange(n), x, threads=1)
        build = time.perf_counter() - t
        times, hit = [], 0
        for q, want in zip(qs, truth):
            t = time.perf_counter()
            found = index.search(q, 10, threads=1)
            times.append(time.perf_counter() - t)
            hit += len(want & set(found.keys.tolist()))
        out["rows"].append([f"usearch {dtype}", build, pct(times, 50), pct(times, 95), hit / (10 * len(qs)), load()])
    return out


def report_compare(r: dict) -> None:
    print(f"\n== libraries on {r['n']:,} vectors ({r['data']}), whole index, top 10, one thread ==")
    print(f"{'library':<12} {'build s':>8} {'p50 ms':>7} {'p95 ms':>7} {'recall@10':>9}  load")
    for name, build, p50, p95, recall, at in r["rows"]:
        print(f"{name:<12} {build:>8.1f} {p50:>7.2f} {p95:>7.2f} {recall:>9.3f}  {at}")


def report(r: dict) -> None:
    print(f"\n== {r['n']:,} vectors of dim {DIM} ({r['data']}) ==")
    print(f"exact matrix: filled in {r['exact_build_s']:.1f} s ({r['exact_build_load']}), "
          f"RSS {r['rss_start_mb']:.0f} -> {r['rss_exact_mb']:.0f} MB, {r['exact_bytes_per_vector']:,.0f} bytes/vector")
    print(f"HNSW graph (M={r['M']}, ef_construction={r['efc']}, one thread): built in {r['ann_build_s']:.1f} s "
          f"({r['ann_build_load']}), RSS -> {r['rss_ann_mb']:.0f} MB, {r['ann_bytes_per_vector']:,.0f} bytes/vector more")
    print(f"{'scope':>6} {'rows':>9} {'exact p50':>9} {'p95':>7} {'ann p50':>8} {'p95':>7} {'recall@10':>9} {'rule':>5}  load")
    for s in r["scopes"]:
        print(f"{s['scope']:>6} {s['rows']:>9,} {s['exact_p50']:>9.2f} {s['exact_p95']:>7.2f} {s['ann_p50']:>8.2f} "
              f"{s['ann_p95']:>7.2f} {s['recall10']:>9.3f} {s['rule']:>5}  {s['load']}")
    print(f"append one vector + ANN search, 100 times: p50 {r['append_p50']:.2f} ms, p95 {r['append_p95']:.2f} ms, "
          f"new vector first {r['append_found']}/100 ({r['append_load']})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--data", choices=("locomo", "random"), default="locomo")
    parser.add_argument("--vectors", type=Path, default=SHARED_CACHE)
    parser.add_argument("--compare", type=int, default=0, metavar="N",
                        help="also compare hnswlib with usearch (pip install usearch) on N vectors")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--compare-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.compare_child:
        print(json.dumps(compare(args.compare_child, args.queries, args.data, args.vectors)))
        return
    if args.child:
        from memfold.memory.storage import ann

        r = child(args.child, args.queries, args.data, args.vectors)
        r["M"], r["efc"] = ann.M, ann.EF_CONSTRUCTION
        print(json.dumps(r))
        return
    env = dict(os.environ, **{v: "1" for v in THREAD_VARS})
    print(f"bench_ann: exact scan vs HNSW (hnswlib), top-10, one thread, {args.queries} queries, data {args.data}; "
          f"{load()} at start")
    for n in (int(s) for s in args.sizes.split(",")):
        done = subprocess.run([sys.executable, __file__, "--child", str(n), "--queries", str(args.queries),
                               "--data", args.data, "--vectors", str(args.vectors)],
                              env=env, capture_output=True, text=True)
        if done.returncode:
            print(done.stderr, file=sys.stderr)
            raise SystemExit(done.returncode)
        report(json.loads(done.stdout.strip().splitlines()[-1]))
    if args.compare:
        done = subprocess.run([sys.executable, __file__, "--compare-child", str(args.compare), "--queries",
                               str(args.queries), "--data", args.data, "--vectors", str(args.vectors)],
                              env=env, capture_output=True, text=True)
        if done.returncode:
            print(done.stderr, file=sys.stderr)
            raise SystemExit(done.returncode)
        report_compare(json.loads(done.stdout.strip().splitlines()[-1]))


if __name__ == "__main__":
    main()
