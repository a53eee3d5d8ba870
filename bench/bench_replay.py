"""Replay benchmark (issue 9): the generated sample, STAR 'Tyler Jones' and LoCoMo dev, end to end.

Prints each replay's report figures and wall time (reading included). Usage::

    python bench/bench_replay.py [--only sample|star|locomo] [--budget 2000] [--json OUT]
    python bench/bench_replay.py --compare-postgres [--pg-url URL] [--only star] [--limit N]

``--compare-postgres`` (issue 17, point 5) replays each source on SQLite and on PostgreSQL (a
``pgserver`` started for the run, or ``--pg-url``) and prints both reports' figures side by side,
whether each is equal, and whether the rest of the report (facts, secrets, evidence) is equal.
Figures that measure time (``*_ms_*``, ``*_seconds``) are shown but not compared.

Data paths default to ``../shared/data`` next to the repository; a missing dataset is skipped.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from memfold.replay.runner import ReplaySettings, replay_path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
RUNS = {
    "sample": dict(sample=True),
    "star": dict(path=DATA / "star", persona="Tyler Jones"),
    "locomo": dict(path=DATA / "locomo" / "locomo_dev.json"),
}
SHOWN = ("turns", "archive_tokens", "compiled_tokens_median", "compiled_tokens_p95", "compiled_tokens_max",
         "ratio_to_transcript_median", "over_budget", "budget_errors", "folds", "rollups", "facts_written",
         "superseded", "summarizer_calls_per_turn", "append_ms_median", "append_ms_p95", "compile_ms_median",
         "compile_ms_p95", "consolidation_seconds")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(RUNS), default=None)
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--json", dest="json_out", default=None)
    parser.add_argument("--compare-postgres", action="store_true",
                        help="replay on SQLite and on PostgreSQL and compare the reports")
    parser.add_argument("--pg-url", default=None, help="a PostgreSQL server URL (default: start a pgserver)")
    parser.add_argument("--limit", type=int, default=None, help="STAR: only the first N dialogues")
    parser.add_argument("--tokens", default="cl100k_base", help="token counter (cl100k_base, o200k_base, words)")
    args = parser.parse_args()
    if args.compare_postgres:
        compare_backends(args)
        return
    results = {}
    for name, kwargs in RUNS.items():
        if args.only and name != args.only:
            continue
        if "path" in kwargs and not Path(kwargs["path"]).exists():
            print(f"{name}: skipped ({kwargs['path']} not found)")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            report = replay_path(**{k: (str(v) if k == "path" else v) for k, v in kwargs.items()},
                                 db=Path(tmp) / "replay.db", settings=ReplaySettings(budget_tokens=args.budget))
            wall = time.perf_counter() - t0
        d = report.to_dict()
        d["wall_seconds_total"] = round(wall, 2)
        results[name] = d
        print(f"== {name}: {wall:.1f} s wall (reading included)")
        for key in SHOWN:
            print(f"  {key:28s} {d['figures'][key]}")
        if report.facts:
            print(f"  current-fact accuracy        {report.facts['correct']}/{report.facts['compared']}, stale {report.facts['stale']}")
        if report.secrets:
            s = report.secrets
            print(f"  secrets in facts/cards/prot  {s['in_facts']}/{s['in_cards']}/{s['in_protected']} of {s['checked']} checked")
        if report.evidence:
            e = report.evidence
            print(f"  evidence reachable           {e['reachable']}/{e['evidence_turns']}")
            print(f"  evidence recall@10           {e['recall_at_10']:.3f} (with covering cards {e['recall_at_10_with_cards']:.3f})")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=2))


#: report figures that measure time, not behaviour (they differ run to run on one backend too)
TIMINGS = ("_ms_", "_seconds")


def compare_backends(args) -> None:
    """Replay each source on both backends; print the figures side by side and what differs."""
    from bench_postgres import Postgres

    pg = Postgres(args.pg_url)
    results: dict[str, dict] = {}
    try:
        for name, kwargs in RUNS.items():
            if args.only and name != args.only:
                continue
            if "path" in kwargs and not Path(kwargs["path"]).exists():
                print(f"{name}: skipped ({kwargs['path']} not found)")
                continue
            if name == "star" and args.limit:
                kwargs = dict(kwargs, limit=args.limit)
            reports, walls = {}, {}
            for backend in ("sqlite", "postgres"):
                with tempfile.TemporaryDirectory() as tmp:
                    db = Path(tmp) / "replay.db" if backend == "sqlite" else pg.fresh()
                    t0 = time.perf_counter()
                    report = replay_path(**{k: (str(v) if k == "path" else v) for k, v in kwargs.items()}, db=db,
                                         settings=ReplaySettings(budget_tokens=args.budget), token_counter=args.tokens)
                    walls[backend] = time.perf_counter() - t0
                reports[backend] = report.to_dict()
                print(f"   {name} on {backend}: {walls[backend]:.1f} s", flush=True)
            a, b = reports["sqlite"]["figures"], reports["postgres"]["figures"]
            print(f"== {name}{f' (first {args.limit} dialogues)' if name == 'star' and args.limit else ''}: "
                  f"SQLite {walls['sqlite']:.1f} s, PostgreSQL {walls['postgres']:.1f} s wall")
            print(f"  {'figure':30s} {'SQLite':>14s} {'PostgreSQL':>14s}  equal")
            differ = []
            for key in sorted(set(a) | set(b)):
                timing = any(t in key for t in TIMINGS)
                same = a.get(key) == b.get(key)
                if not same and not timing:
                    differ.append(key)
                print(f"  {key:30s} {str(a.get(key)):>14s} {str(b.get(key)):>14s}  {'(time)' if timing else same}")
            rest_a = {k: v for k, v in reports["sqlite"].items() if k != "figures"}
            rest_b = {k: v for k, v in reports["postgres"].items() if k != "figures"}
            rest_differ = sorted(k for k in set(rest_a) | set(rest_b) if rest_a.get(k) != rest_b.get(k))
            print(f"  figures other than timings equal: {not differ}" + (f" (differ: {', '.join(differ)})" if differ else ""))
            print(f"  rest of the report equal (facts, secrets, evidence, ...): {not rest_differ}"
                  + (f" (differ: {', '.join(rest_differ)})" if rest_differ else ""))
            results[name] = {"sqlite": reports["sqlite"], "postgres": reports["postgres"], "walls": walls,
                             "figures_differ": differ, "rest_differ": rest_differ}
    finally:
        pg.stop()
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=2, default=str))


if __name__ == "__main__":
    main()
