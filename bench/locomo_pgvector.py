"""LoCoMo evidence recall with pgvector's HNSW index in the loop (issue 17, point 2).

``bench/locomo_recall.py`` searches each question inside its conversation; on PostgreSQL a
conversation's lineage is scanned exactly (no index can filter by it), so its figures compare
the exact paths. This script makes the index do the work: each conversation goes into a database
of its own and every question is searched over the whole database (no scope), which on
PostgreSQL walks the HNSW index. Three runs over the same data:

* ``sqlite``: the embedded backend (exact in-process scan);
* ``postgres-hnsw``: PostgreSQL 16 + pgvector, after ``ANALYZE`` (as autovacuum would have run);
* ``postgres-inproc``: the same PostgreSQL databases opened with ``?pgvector=off``.

One conversation is a few hundred turns: on so small a table PostgreSQL's planner prefers an exact
sort to the index even after ``ANALYZE``; ``--force-index`` (``enable_sort=off`` in the sessions)
makes it walk the HNSW index, which is what a large archive gets.

Printed: hybrid and dense recall@10 / @20 per run (mean over questions of |evidence ∩ top-k| /
|evidence|, evidence normalised as in ``locomo_recall.py``). Usage::

    python bench/locomo_pgvector.py [--embedder default|hashing] [--pg-url URL] [--samples N]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_postgres import Postgres  # noqa: E402
from locomo_recall import CATEGORIES, DEFAULT_DATA, normalize_evidence, session_turns, turn_text  # noqa: E402

from memfold import MemFold, SystemClock  # noqa: E402

MODES = ("hybrid", "dense")
RUNS = ("sqlite", "postgres-hnsw", "postgres-inproc")
KS = (10, 20)


def with_setting(url: str, value: str) -> str:
    return url + ("&" if "?" in url else "?") + f"pgvector={value}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--embedder", default="default")
    parser.add_argument("--samples", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--pg-url", default=None, help="a PostgreSQL server URL (default: start a pgserver)")
    parser.add_argument("--json", dest="json_out", type=Path, default=None)
    parser.add_argument("--runs", nargs="+", default=list(RUNS), choices=RUNS)
    parser.add_argument("--force-index", action="store_true",
                        help="PostgreSQL sessions with enable_sort=off: on a table of a few hundred rows the "
                             "planner prefers an exact sort to the HNSW index; this makes it walk the index")
    args = parser.parse_args()
    if args.force_index:
        os.environ["PGOPTIONS"] = (os.environ.get("PGOPTIONS", "") + " -c enable_sort=off").strip()
    samples = json.loads(args.data.read_text())[: args.samples or None]
    pg = Postgres(args.pg_url)
    sums = {run: {f"{m}@{k}": 0.0 for m in MODES for k in KS} for run in args.runs}
    n = 0
    try:
        with tempfile.TemporaryDirectory(prefix="memfold-locomo-") as tmp:
            for sample in samples:
                sid, conv_data = sample["sample_id"], sample["conversation"]
                speakers = (conv_data.get("speaker_a"), conv_data.get("speaker_b"))
                pairs = session_turns(conv_data)
                pg_url = pg.fresh()
                targets = {"sqlite": Path(tmp) / f"{sid}.db", "postgres-hnsw": pg_url,
                           "postgres-inproc": with_setting(pg_url, "off")}
                questions = None
                for run, target in targets.items():
                    if run not in args.runs:
                        continue
                    mf = MemFold(target, clock=SystemClock(), token_counter="words", embedder=args.embedder)
                    try:
                        if run != "postgres-inproc" or "postgres-hnsw" not in args.runs:  # else: the HNSW run's database
                            ids = mf.conversation(sid, namespace="locomo").append_many([
                                {"role": "user" if t["speaker"] == speakers[0] else "assistant",
                                 "content": turn_text(t), "created_at": when} for when, t in pairs])
                            mf.index_embeddings()
                            if hasattr(mf.storage.vectors, "analyze"):
                                mf.storage.vectors.analyze()
                            dia_of = {i: t["dia_id"] for i, (_, t) in zip(ids, pairs)}
                        if questions is None:
                            valid = set(dia_of.values())
                            questions = [(str(qa["question"]), ev) for qa in sample.get("qa", [])
                                         if qa.get("category") in CATEGORIES
                                         for ev in [normalize_evidence(qa.get("evidence"), valid)] if ev]
                        for question, evidence in questions:
                            for mode in MODES:
                                hits = mf.search(question, kinds=("turn",), limit=max(KS), mode=mode)
                                ranked = [dia_of[h.id] for h in hits]
                                for k in KS:
                                    sums[run][f"{mode}@{k}"] += len(set(ranked[:k]) & set(evidence)) / len(evidence)
                    finally:
                        mf.close()
                n += len(questions)
                print(f"  {sid}: {len(pairs)} turns, {n} questions so far", file=sys.stderr, flush=True)
    finally:
        pg.stop()
    report = {run: {k: round(v / max(n, 1), 4) for k, v in figures.items()} for run, figures in sums.items()}
    print(f"{len(samples)} conversations, {n} questions, embedder {args.embedder}; search over the whole database"
          + ("; PostgreSQL forced onto the HNSW index" if args.force_index else ""))
    print("| run | " + " | ".join(f"{m} recall@{k}" for m in MODES for k in KS) + " |")
    print("| --- | " + " | ".join("---:" for _ in MODES for _ in KS) + " |")
    for run, figures in report.items():
        print(f"| {run} | " + " | ".join(f"{figures[f'{m}@{k}']:.3f}" for m in MODES for k in KS) + " |")
    if args.json_out:
        args.json_out.write_text(json.dumps({"questions": n, "embedder": args.embedder, "results": report}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
