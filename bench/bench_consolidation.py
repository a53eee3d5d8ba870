"""Benchmark the consolidation pass: episodes consolidated per second as the backlog grows.

For each size N (default 1K, 10K, 50K episodes in one namespace; a realistic mix of user facts,
tool policy statements, questions and chatter, about 40% of them yielding a fact or rule), it
prints the rules extractor alone (episodes/s, no database), a dry run (read + extract), and the
real pass (read, extract, write through the normal write path with supersession, consume, ledger;
one transaction per batch) at batch sizes 100 and 1000, plus the facts/rules written and a re-run
that must find nothing. Real SQLite file, LogicalClock, WordCounter.

    python bench/bench_consolidation.py [--sizes 1000,10000,50000] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

from memfold import LogicalClock, MemFold
from memfold.consolidation.consolidate import consolidate
from memfold.consolidation.extractors.base import Episode, speaker_of
from memfold.consolidation.extractors.rules import RulesExtractor

TEMPLATES = [
    "user: my order ORD-{i} arrived broken",
    "user asked whether a return after the window is allowed",
    "tool said after the window a {p}% restocking fee applies",
    "user: I love board game {i}",
    "assistant said sorry about that, checking order ORD-{i}",
    "user accepted the ${i}.00 refund on the ${j} order",
    "user asked whether Sam {i} is the account holder",
    "user: please contact me by email",
    "agent said thanks for waiting, the courier was late",
    "user confirmed their name is Dana",
]


def episode_text(i: int) -> str:
    return TEMPLATES[i % len(TEMPLATES)].format(i=i, j=i + 20, p=5 + i % 10)


def fill(path: str, n: int) -> MemFold:
    mf = MemFold(path, clock=LogicalClock(), token_counter="words", embedder=None)
    for start in range(0, n, 1000):
        with mf.db.conn:  # bulk load outside the measured part
            for i in range(start, min(n, start + 1000)):
                mf.memory.write("bench/dana", "episodic", episode_text(i), event_time=i)
    return mf


def bench_size(n: int, workdir: str) -> dict:
    out: dict = {"episodes": n}
    episodes = [Episode(f"record:{i}", speaker_of(episode_text(i)), episode_text(i), float(i)) for i in range(n)]
    extractor = RulesExtractor()
    t0 = time.perf_counter()
    for start in range(0, n, 100):
        extractor.extract(episodes[start:start + 100])
    out["extract_only_per_s"] = n / (time.perf_counter() - t0)

    mf = fill(os.path.join(workdir, f"dry_{n}.db"), n)
    t0 = time.perf_counter()
    dry = consolidate(mf.consolidation_parts, "bench/dana", dry_run=True, batch_size=100)
    out["dry_run_per_s"] = n / (time.perf_counter() - t0)
    mf.close()

    for batch in (100, 1000):
        mf = fill(os.path.join(workdir, f"real_{n}_{batch}.db"), n)
        t0 = time.perf_counter()
        run = consolidate(mf.consolidation_parts, "bench/dana", batch_size=batch)
        seconds = time.perf_counter() - t0
        assert run.status == "ok" and run.episodes_consumed == n, run.errors
        out[f"pass_batch{batch}_per_s"] = n / seconds
        out["facts_written"], out["rules_written"] = run.facts_written, run.rules_written
        t0 = time.perf_counter()
        again = consolidate(mf.consolidation_parts, "bench/dana", batch_size=batch)
        out["rerun_ms"] = (time.perf_counter() - t0) * 1000
        assert again.written == [] and again.consumed == []
        out["active_derived"] = len([r for r in mf.memory.list("bench/dana") if r.type != "episodic"])
        mf.close()
    out["proposals_dry"] = len(dry.proposals)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,50000", help="comma-separated episode counts")
    parser.add_argument("--json", dest="json_out", default=None, help="also write the figures to this file")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        print(f"{'episodes':>9} {'extract/s':>10} {'dry run/s':>10} {'pass b=100/s':>13} {'pass b=1000/s':>14} "
              f"{'facts':>7} {'rules':>6} {'active':>7} {'re-run ms':>10}")
        for n in sizes:
            r = bench_size(n, workdir)
            rows.append(r)
            print(f"{n:>9,} {r['extract_only_per_s']:>10,.0f} {r['dry_run_per_s']:>10,.0f} "
                  f"{r['pass_batch100_per_s']:>13,.0f} {r['pass_batch1000_per_s']:>14,.0f} {r['facts_written']:>7,} "
                  f"{r['rules_written']:>6,} {r['active_derived']:>7,} {r['rerun_ms']:>10.1f}", flush=True)
    print("extract = rules extractor alone; dry run = read + extract; pass = read, extract, write through the normal"
          " write path, consume, ledger (one transaction per batch); active = derived records left active after"
          " supersession; re-run = the idempotent second pass")
    if args.json_out:
        with open(args.json_out, "w") as fh:
            json.dump(rows, fh, indent=2)


if __name__ == "__main__":
    main()
