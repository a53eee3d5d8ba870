"""Rights benchmark (issue 15): the randomized checker at 10,000 pairs, revoked-context exposure,
the compiled-context cache's hit path, and fork cost at 1K vs 100K turns.

Prints figures; nothing passes or fails on time. Usage::

    python bench/bench_rights.py [--pairs 10000] [--seeds 3] [--large 100000] [--only checker|exposure|cache|fork]
        [--json OUT]

* **checker**: :func:`memfold.replay.rights.check` on worlds from ``--seeds`` seeds, ``--pairs``
  reader/operation pairs in all: violations (goal 0), outputs and markers checked.
* **exposure**: seed note 003's metric, :func:`memfold.replay.rights.revoked_exposure`: after
  revoking a third and erasing a tenth of a conversation's sources midway, the share of later
  compiled contexts, search hits and expansions that show revoked content (goal 0).
* **cache**: ``context()`` on an unchanged 1,000-turn conversation, first call (compile) vs
  repeated calls (the cache's hit path), median and p95 in ms; a second reader misses.
* **fork**: ``fork(at=...)`` in the middle of a compacted conversation of 1,000 and ``--large``
  turns: wall time and rows written (catalog items seeded, protected records copied, one
  conversation row and one card mark).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from memfold import LogicalClock, MemFold, WindowSettings
from memfold.replay.rights import build_world, check, revoked_exposure


def checker(pairs: int, seeds: int) -> dict:
    total = {"pairs": 0, "outputs": 0, "markers_shown": 0, "violations": 0, "seconds": 0.0}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(1, seeds + 1):
            world = build_world(seed, tmp)
            start = time.perf_counter()
            res = check(world, pairs // seeds + (pairs % seeds if seed == seeds else 0), seed)
            total["seconds"] += time.perf_counter() - start
            world.mf.close()
            for k in ("pairs", "outputs", "markers_shown", "violations"):
                total[k] += res[k]
            if res["violations"]:
                total.setdefault("first_violations", res["first_violations"])
    total["seconds"] = round(total["seconds"], 1)
    return total


def exposure(seeds: int) -> dict:
    rows = [revoked_exposure(seed, turns=200) for seed in range(1, seeds + 1)]
    outputs = sum(r["outputs"] for r in rows)
    exposed = sum(r["exposed"] for r in rows)
    by_kind = {k: sum(r["by_kind"][k] for r in rows) for k in rows[0]["by_kind"]}
    return {"outputs": outputs, "exposed": exposed, "share": exposed / outputs if outputs else 0.0,
            "by_kind": by_kind, "revoked_sources": sum(r["revoked_sources"] for r in rows)}


def _pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p * (len(values) - 1))))]


def cache() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        mf = MemFold(Path(tmp) / "c.db", clock=LogicalClock(), token_counter="words", embedder=None)
        conv = mf.conversation("c", namespace="acme")
        conv.append_many([{"role": "user" if i % 2 == 0 else "assistant",
                           "content": f"turn {i} about order ORD-{i} and dock {i % 9} with a few more words"}
                          for i in range(1000)], compact=False)
        mf.protected.add("Never ship on Sundays.", conversation_id="c")
        conv.context(budget=4000)  # compact once
        misses, hits = [], []
        for i in range(30):
            conv.append({"role": "user", "content": f"fresh turn {i}"})  # a write: the next call compiles
            start = time.perf_counter()
            conv.context(budget=4000)
            misses.append((time.perf_counter() - start) * 1000)
            for _ in range(10):
                start = time.perf_counter()
                conv.context(budget=4000)
                hits.append((time.perf_counter() - start) * 1000)
        c = mf.parts.context_cache
        out = {"compile_ms_median": round(statistics.median(misses), 2), "compile_ms_p95": round(_pct(misses, .95), 2),
               "hit_ms_median": round(statistics.median(hits), 3), "hit_ms_p95": round(_pct(hits, .95), 3),
               "hits": c.hits, "misses": c.misses}
        mf.close()
    return out


def fork_cost(large: int) -> dict:
    out = {}
    for n in (1000, large):
        with tempfile.TemporaryDirectory() as tmp:
            mf = MemFold(Path(tmp) / "f.db", clock=LogicalClock(), token_counter="words", embedder=None,
                         window=WindowSettings(budget_tokens=8000, output_reserve_tokens=0, leaf_chunk_tokens=2000,
                                               card_target_tokens=120, hot_turns=8))
            conv = mf.conversation("p", namespace="acme")
            start = time.perf_counter()
            for lo in range(0, n, 5000):
                conv.append_many([{"role": "user" if i % 2 == 0 else "assistant",
                                   "content": f"turn {i} about order ORD-{i} from dock {i % 9} today"}
                                  for i in range(lo, min(n, lo + 5000))], compact=False)
            conv.compact()
            build = time.perf_counter() - start
            items = conv.catalog_items()
            straddling = next((i for i in reversed(items) if i.kind == "card"), None)
            at = (straddling.first_seq + straddling.last_seq) // 2 if straddling else n // 2
            times, rows = [], []
            for k in range(5):
                start = time.perf_counter()
                info = conv.fork_info(f"f{k}", at=at - k)
                times.append((time.perf_counter() - start) * 1000)
                rows.append(info["catalog_items"] + info["protected_copied"] + 2)
            out[n] = {"catalog_items_parent": len(items), "fork_ms_median": round(statistics.median(times), 2),
                      "rows_written": rows[0], "build_seconds": round(build, 1)}
            mf.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--only", choices=("checker", "exposure", "cache", "fork"), default=None)
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    results: dict = {}
    if args.only in (None, "checker"):
        results["checker"] = checker(args.pairs, args.seeds)
        print("checker:", json.dumps(results["checker"]))
    if args.only in (None, "exposure"):
        results["exposure"] = exposure(args.seeds)
        print("revoked-context exposure:", json.dumps(results["exposure"]))
    if args.only in (None, "cache"):
        results["cache"] = cache()
        print("context cache:", json.dumps(results["cache"]))
    if args.only in (None, "fork"):
        results["fork"] = fork_cost(args.large)
        print("fork cost:", json.dumps(results["fork"]))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
