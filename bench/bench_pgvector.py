"""Benchmark: nearest-neighbour and hybrid search on SQLite, PostgreSQL + pgvector (HNSW) and
PostgreSQL without it (issue 17, point 2).

For each archive size (``--sizes``, default 10K turns; 100K with ``--sizes 10000 100000``) it loads
the same turns as ``bench/bench_postgres.py`` (1,000 per conversation, 50 tenants) into a SQLite
file and into one PostgreSQL database, embeds every turn once with ``--embedder`` (``hashing``,
the deterministic 256-dimension one, or ``default``, all-MiniLM-L6-v2 through sentence-transformers,
offline) and stores the same vectors in both (``EmbeddingIndex.store``; on PostgreSQL this fills
the pgvector column and its HNSW index). Then, per backend, p50/p95 in milliseconds of:

* ``nearest``: ``storage.vectors.nearest("turn", q, SearchScope(), limit=10)``, the whole archive
  (what the HNSW index serves);
* ``nearest/tenant``: the same inside one tenant's namespace (2% of the turns: the index's first
  answers are mostly other tenants', so it refills with an exact scan in SQL);
* ``hybrid``: ``mf.search(question, limit=10)`` over everything (BM25 + cosine fused);
* ``hybrid/tenant``: ``mf.search(question, namespace=..., limit=10)``.

``postgres-hnsw`` is the database opened normally (after ``ANALYZE``, as autovacuum would have
run); ``postgres-inproc`` is the same database opened with ``?pgvector=off`` (the exact in-process
scan, as without the extension); ``sqlite`` is the embedded backend (in-process). Recall@10 of
``nearest`` against the exact answer is printed too (HNSW is approximate).

PostgreSQL is a ``pgserver`` (PostgreSQL 16 + pgvector 0.6) in a temp folder, or ``--pg-url``.
This machine is shared: figures are indicative. Run:
``python bench/bench_pgvector.py [--sizes 10000 100000] [--embedder hashing|default]``.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_postgres import WORDS, Postgres, load, timed  # noqa: E402  (the same archive as the storage benchmark)

import memfold  # noqa: E402
from memfold.memory.embeddings import EmbeddingIndex  # noqa: E402
from memfold.memory.storage.rows import SearchScope  # noqa: E402
from memfold.replay.stats import percentile  # noqa: E402

BACKENDS = ("sqlite", "postgres-hnsw", "postgres-inproc")


def open_mf(target, embedder):
    return memfold.MemFold(target, clock=memfold.LogicalClock(), token_counter="words", embedder=embedder)


def embed_all(target, embedder, cache: dict) -> float:
    """Store one vector per turn (computed once per size, reused for every backend); returns seconds."""
    mf = open_mf(target, None)
    todo = mf.storage.vectors.unembedded("turn")
    if "vectors" not in cache:
        t = time.perf_counter()
        cache["vectors"] = embedder.embed_batch([text for _, text in todo])
        cache["embed_seconds"] = time.perf_counter() - t
    index = EmbeddingIndex(mf.storage)
    t = time.perf_counter()
    for start in range(0, len(todo), 1000):
        chunk = todo[start:start + 1000]
        index.store("turn", [i for i, _ in chunk], cache["vectors"][start:start + len(chunk)], model_id=embedder.model_id)
    stored = time.perf_counter() - t
    if getattr(mf.storage.vectors, "analyze", None):
        mf.storage.vectors.analyze()
    mf.close()
    return stored


def measure(target, embedder, convs, samples: int, seed: int = 11) -> dict[str, tuple[float, float]]:
    rnd = random.Random(seed)
    mf = open_mf(target, embedder)
    questions = [" ".join(rnd.sample(WORDS, 3)) for _ in range(samples + 1)]
    tenants = [rnd.choice(convs)[1] for _ in range(samples + 1)]
    qvecs = embedder.embed_batch(questions)
    out = {}
    cases = {
        "nearest": lambda k: mf.storage.vectors.nearest("turn", qvecs[k], SearchScope(), limit=10),
        "nearest/tenant": lambda k: mf.storage.vectors.nearest("turn", qvecs[k], SearchScope(namespace=tenants[k]),
                                                               limit=10),
        "hybrid": lambda k: mf.search(questions[k], limit=10, kinds=("turn",)),
        "hybrid/tenant": lambda k: mf.search(questions[k], namespace=tenants[k], limit=10, kinds=("turn",)),
    }
    for name, fn in cases.items():
        fn(samples)  # warm: caches, prepared statements, the in-process matrix
        ks = iter(range(samples))
        xs = timed(lambda: fn(next(ks)), samples)
        out[name] = (1000 * percentile(xs, 0.5), 1000 * percentile(xs, 0.95))
    mf.close()
    return out


def recall(target_exact, target, embedder, samples: int, seed: int = 13) -> float:
    """Mean recall@10 of ``target``'s whole-archive ``nearest`` against ``target_exact``'s."""
    rnd = random.Random(seed)
    qvecs = embedder.embed_batch([" ".join(rnd.sample(WORDS, 3)) for _ in range(samples)])
    a, b = open_mf(target_exact, None), open_mf(target, None)
    try:
        got = [len({i for i, _ in a.storage.vectors.nearest("turn", q, SearchScope(), limit=10)}
                   & {i for i, _ in b.storage.vectors.nearest("turn", q, SearchScope(), limit=10)}) / 10
               for q in qvecs]
    finally:
        a.close()
        b.close()
    return float(np.mean(got))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000], help="archive sizes in turns")
    parser.add_argument("--samples", type=int, default=50, help="timed calls per operation")
    parser.add_argument("--embedder", default="hashing", help="hashing (deterministic) or default (all-MiniLM-L6-v2)")
    parser.add_argument("--pg-url", default=None, help="a PostgreSQL server URL (default: start a pgserver)")
    args = parser.parse_args()
    from memfold.memory.embeddings import HashingEmbedder, SentenceTransformerEmbedder

    embedder = HashingEmbedder() if args.embedder == "hashing" else SentenceTransformerEmbedder(
        None if args.embedder == "default" else args.embedder)
    pg = Postgres(args.pg_url)
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="memfold-bench-") as tmp:
            for size in args.sizes:
                cache: dict = {}
                sqlite_target = Path(tmp) / f"vec-{size}.db"
                pg_target = pg.fresh()
                targets = {"sqlite": sqlite_target, "postgres-hnsw": pg_target,
                           "postgres-inproc": pg_target + ("&" if "?" in pg_target else "?") + "pgvector=off"}
                for backend in ("sqlite", "postgres-hnsw"):
                    t = time.perf_counter()
                    convs = load(targets[backend], size)
                    loaded = time.perf_counter() - t
                    stored = embed_all(targets[backend], embedder, cache)
                    print(f"{backend:16} {size:>7} turns: loaded {loaded:.1f} s, vectors stored {stored:.1f} s "
                          f"(embedded once in {cache['embed_seconds']:.1f} s)", flush=True)
                for backend in BACKENDS:
                    figures = measure(targets[backend], embedder, convs, args.samples)
                    rows.append((backend, size, figures))
                    print(f"{backend:16} {size:>7} | " + " | ".join(
                        f"{k} p50 {v[0]:.1f} ms p95 {v[1]:.1f} ms" for k, v in figures.items()), flush=True)
                r = recall(sqlite_target, pg_target, embedder, args.samples)
                print(f"HNSW recall@10 of whole-archive nearest vs the exact scan at {size:,}: {r:.3f}", flush=True)
                rows.append(("recall", size, r))
    finally:
        pg.stop()
    print()
    print(f"embedder: {embedder.model_id}")
    print("| backend | turns | nearest p50 / p95 ms | nearest, one tenant | hybrid | hybrid, one tenant |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for backend, size, f in rows:
        if backend == "recall":
            continue
        print(f"| {backend} | {size:,} | " + " | ".join(f"{f[k][0]:.1f} / {f[k][1]:.1f}" for k in
                                                       ("nearest", "nearest/tenant", "hybrid", "hybrid/tenant")) + " |")
    for backend, size, r in rows:
        if backend == "recall":
            print(f"HNSW recall@10 (whole archive, vs exact) at {size:,}: {r:.3f}")


if __name__ == "__main__":
    main()
