"""Constraint retention under compaction (issue 8, point 4): memfold vs. two baselines.

Each COMPINT side constraint is injected as a user turn "For the rest of this session, <sc>" at
the top, the middle and the bottom of each LoCoMo conversation. The conversation is replayed into
memfold with a 2,000-token budget (compaction on, deterministic extractive summarizer, cl100k
tokens), and the final compiled context is checked for the constraint text (normalised
substring: case-folded, whitespace collapsed). The same inputs go through two baselines:

* sliding window: the newest turns that fit the same usable budget, verbatim;
* one-shot summary: the same extractive summarizer folds everything but the newest turns into
  one summary once, at the end, and the newest turns fill the rest of the budget.

Then the CompactBench templates (``compactbench`` generates cases offline from the YAML files)
run the same way; retention counts ``locked_decisions`` and ``forbidden_behaviors`` strings
found in the final context. An item that is not verbatim in its own transcript (for example
``approach: X`` where the user wrote "Use X instead") is checked by its value after ``key:``.

Usage::

    python bench/constraint_retention.py [--conversations PATH] [--constraints PATH]
        [--compactbench DIR] [--limit N] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

import memfold
from memfold import LogicalClock, MemFold, WindowSettings
from memfold.window.summarizers import ExtractiveSummarizer
from memfold.window.summarizers.base import FoldItem

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
BUDGET = 2_000
RESERVE = 200
POSITIONS = ("top", "middle", "bottom")


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.casefold()).strip()


def locomo_turns(sample: dict) -> list[dict]:
    conv = sample["conversation"]
    a = conv["speaker_a"]
    sessions = sorted((int(k.split("_")[1]), v) for k, v in conv.items()
                      if re.fullmatch(r"session_\d+", k) and isinstance(v, list))
    out = []
    for _, turns in sessions:
        for t in turns:
            text = t["text"] + (f" [shares a photo: {t['blip_caption']}]" if t.get("blip_caption") else "")
            out.append({"role": "user" if t["speaker"] == a else "assistant", "content": text})
    return out


def inject(turns: list[dict], text: str, position: str) -> list[dict]:
    index = {"top": 0, "middle": len(turns) // 2, "bottom": len(turns)}[position]
    return turns[:index] + [{"role": "user", "content": text}] + turns[index:]


def settings() -> WindowSettings:
    return WindowSettings(budget_tokens=BUDGET, output_reserve_tokens=RESERVE, hot_turns=8, leaf_chunk_tokens=1_200,
                          card_target_tokens=150, rollup_fanin=3, compact_on_append=True, memories_k=0)


def run_memfold(turns: list[dict], counter) -> str:
    mf = MemFold(None, clock=LogicalClock(), token_counter=counter, embedder=None, window=settings())
    conv = mf.conversation("bench", namespace="bench")
    for t in turns:
        conv.append(t)
    ctx = conv.context()
    assert ctx.total_tokens <= BUDGET - RESERVE
    mf.close()
    return "\n".join(m.get("content") or "" for m in ctx.messages)


def newest_that_fit(turns: list[dict], room: int, counter) -> list[str]:
    kept: list[str] = []
    for t in reversed(turns):
        cost = counter.count(t["content"])
        if cost > room:
            break
        kept.append(t["content"])
        room -= cost
    return list(reversed(kept))


def run_sliding(turns: list[dict], counter) -> str:
    return "\n".join(newest_that_fit(turns, BUDGET - RESERVE, counter))


def run_one_shot(turns: list[dict], counter, summarizer) -> str:
    usable = BUDGET - RESERVE
    tail = newest_that_fit(turns, usable // 2, counter)
    older = turns[: len(turns) - len(tail)]
    summary = ""
    if older:
        items = [FoldItem("turn", i, t["content"], role=t["role"]) for i, t in enumerate(older)]
        summary = summarizer.summarize(items, 1, target_tokens=usable - sum(counter.count(x) for x in tail) - 10)
    return "\n".join([summary, *tail])


def side_constraint_bench(conversations: Path, constraints: Path, limit: int | None, counter) -> dict:
    samples = json.loads(conversations.read_text())[: limit or None]
    data = json.loads(constraints.read_text())
    summarizer = ExtractiveSummarizer(counter)
    hits = {m: defaultdict(lambda: [0, 0]) for m in ("memfold", "sliding_window", "one_shot_summary")}
    started = time.perf_counter()
    for sample in samples:
        base = locomo_turns(sample)
        for sc in data["side_constraints"]:
            text = "For the rest of this session, " + sc["sc"][0].lower() + sc["sc"][1:]
            for position in POSITIONS:
                turns = inject(base, text, position)
                outputs = {"memfold": run_memfold(turns, counter), "sliding_window": run_sliding(turns, counter),
                           "one_shot_summary": run_one_shot(turns, counter, summarizer)}
                for method, out in outputs.items():
                    ok = norm(text) in norm(out)
                    for key in (("type", sc["type"]), ("position", position), ("all", "all")):
                        hits[method][key][0] += ok
                        hits[method][key][1] += 1
        print(f"  {sample['sample_id']}: {len(base)} turns done ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    return {m: {f"{k[0]}:{k[1]}": {"retained": v[0], "runs": v[1], "share": v[0] / v[1]} for k, v in sorted(h.items())}
            for m, h in hits.items()}


def compactbench_bench(benchmarks: Path, counter, seeds=(1, 2, 3)) -> dict:
    from compactbench.dsl import DifficultyLevel
    from compactbench.dsl.parser import parse_template_file
    from compactbench.engine.generation import generate_case

    summarizer = ExtractiveSummarizer(counter)
    res = {m: defaultdict(lambda: [0, 0]) for m in ("memfold", "sliding_window", "one_shot_summary")}
    for path in sorted(benchmarks.glob("*/*.yaml")):
        template = parse_template_file(path)
        for seed in seeds:
            case = generate_case(template, seed, DifficultyLevel.HARD)
            turns = [{"role": str(getattr(t.role, "value", t.role)), "content": t.content} for t in case.transcript.turns]
            # pad with the case's own distractor turns (x8) before the final question, so the
            # 2,000-token budget forces compaction; constraint turns are never repeated
            filler = [{"role": str(getattr(t.role, "value", t.role)), "content": t.content}
                      for t in case.transcript.turns if "distractor" in (t.tags or [])]
            padded = turns[:-1] + filler * 8 + turns[-1:]
            full = norm("\n".join(t["content"] for t in padded))
            outputs = {"memfold": run_memfold(padded, counter), "sliding_window": run_sliding(padded, counter),
                       "one_shot_summary": run_one_shot(padded, counter, summarizer)}
            gt = case.ground_truth
            for kind, items in (("locked_decisions", gt.locked_decisions), ("forbidden_behaviors", gt.forbidden_behaviors)):
                for item in items:
                    probe = norm(item)
                    if probe not in full and ":" in item:
                        probe = norm(item.split(":", 1)[1])
                    for method, out in outputs.items():
                        ok = probe in norm(out)
                        for key in (kind, f"{template.family}:{kind}"):
                            res[method][key][0] += ok
                            res[method][key][1] += 1
    return {m: {k: {"retained": v[0], "items": v[1], "share": v[0] / v[1]} for k, v in sorted(h.items())}
            for m, h in res.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=Path, default=DATA / "locomo" / "locomo_dev.json")
    parser.add_argument("--constraints", type=Path, default=DATA / "compint_side_constraints" / "side_constraints.json")
    parser.add_argument("--compactbench", type=Path, default=DATA / "compactbench" / "benchmarks" / "public")
    parser.add_argument("--limit", type=int, default=None, help="Only the first N conversations.")
    parser.add_argument("--json", dest="json_out", type=Path, default=None, help="Also write the figures here.")
    args = parser.parse_args(argv)
    counter = memfold.TiktokenCounter("cl100k_base")
    print(f"memfold {memfold.__version__}: budget {BUDGET} tokens (reserve {RESERVE}), compaction on, cl100k tokens")
    side = side_constraint_bench(args.conversations, args.constraints, args.limit, counter)
    methods = list(side)
    print("\nCOMPINT side constraints injected into LoCoMo: share of final contexts that contain the constraint")
    print(f"{'group':28}" + "".join(f"{m:>20}" for m in methods))
    for key in side["memfold"]:
        row = "".join(f"{side[m][key]['share']:>14.1%} ({side[m][key]['retained']:>3})" for m in methods)
        print(f"{key:28}{row}")
    cb = {}
    if args.compactbench.exists():
        cb = compactbench_bench(args.compactbench, counter)
        print("\nCompactBench templates (hard difficulty, seeds 1-3, padded): items retained in the final context")
        print(f"{'group':48}" + "".join(f"{m:>20}" for m in methods))
        for key in cb["memfold"]:
            row = "".join(f"{cb[m][key]['share']:>14.1%} ({cb[m][key]['retained']:>3})" for m in methods)
            print(f"{key:48}{row}")
    if args.json_out:
        args.json_out.write_text(json.dumps({"budget_tokens": BUDGET, "side_constraints": side, "compactbench": cb},
                                            indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
