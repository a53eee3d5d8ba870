"""Replay benchmark (issue 9): the generated sample, STAR 'Tyler Jones' and LoCoMo dev, end to end.

Prints each replay's report figures and wall time (reading included). Usage::

    python bench/bench_replay.py [--only sample|star|locomo] [--budget 2000] [--json OUT]

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
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
