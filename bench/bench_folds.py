"""Benchmark: folding units of work when they close (the model chooses) vs folding only at pressure.

Issue 14, point 9. Each source is played twice by :class:`memfold.replay.agent_sessions.ScriptedAgent`
(a request, i.e. a compiled context, before every assistant message): once answering every fold
card by folding the finished units it lists (**fold at close**), once never folding (**pressure
only**: the compactor folds by age at the watermarks). Sources: a generated long coding-agent
session (deterministic), one STAR persona's dialogues with the knowledge-base queries as tool
calls, and the ABCD sample with the agent's actions as tool calls.

Printed per source and budget: median and final request size in tokens with folds and without
(and their ratio), the prompt-prefix tokens rewritten over the session (the tokens of a request
after the first message that changed from the request before: what a provider's prompt cache
loses) folding at close vs at pressure only (no fold card), the same with the fold card shown but
never answered (the card sits before the newest user turn, so each new user turn moves it),
fold-card overhead (tokens per request that carried one, and their share of all request tokens),
and the counters (folds proposed / accepted / refused, read-backs, re-runs).

Run: ``python bench/bench_folds.py [--tasks 30] [--tokens cl100k_base|words] [--budget 32000 ...]``.
The "model" folds exactly the finished units the card lists (it knows where its units began); a
real model also decides *whether* a unit is finished, which this does not measure.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import memfold
from memfold import WindowSettings
from memfold.replay.agent_sessions import ScriptedAgent, abcd_units, coding_session, default_data_dir, star_units


def play(units, *, fold_at_close: bool, budget: int, tokens: str, tmp: Path, name: str, card_calls: int) -> dict:
    settings = WindowSettings(budget_tokens=budget, output_reserve_tokens=min(4_096, budget // 8),
                              fold_card_tool_calls=card_calls)
    mf = memfold.MemFold(tmp / f"{name}-{budget}-{fold_at_close}-{card_calls}.db", clock=memfold.LogicalClock(), token_counter=tokens,
                         embedder=None, window=settings)
    conv = mf.conversation(name)
    started = time.perf_counter()
    log = ScriptedAgent(conv, fold_at_close=fold_at_close, counter=mf.parts.token_counter).play(units)
    seconds = time.perf_counter() - started
    stats = conv.fold_stats()
    requests = log.request_tokens
    out = {
        "requests": len(requests), "median": statistics.median(requests), "final": requests[-1],
        "rewritten": sum(log.rewritten_tokens), "card_median": statistics.median(log.card_tokens) if log.card_tokens else 0,
        "card_total": sum(log.card_tokens), "card_share": sum(log.card_tokens) / max(1, sum(requests)),
        "cards_shown": len(log.card_tokens), "stats": stats, "seconds": seconds,
        "archive": mf.storage.archive.total_turn_tokens(),
    }
    mf.close()
    return out


def row(name: str, budget: int, fold: dict, plain: dict, ignored: dict) -> list[str]:
    s = fold["stats"]
    return [
        name, f"{budget:,}", f"{fold['archive']:,}", str(fold["requests"]),
        f"{fold['median']:,.0f} / {plain['median']:,.0f} ({fold['median'] / plain['median']:.2f}x)",
        f"{fold['final']:,} / {plain['final']:,} ({fold['final'] / plain['final']:.2f}x)",
        f"{fold['rewritten']:,} / {plain['rewritten']:,} "
        + (f"({fold['rewritten'] / plain['rewritten']:.2f}x)" if plain["rewritten"] else "(no pressure fold)"),
        f"{ignored['rewritten']:,} ({ignored['median']:,.0f})",
        f"{fold['card_median']:,.0f} ({fold['cards_shown']} shown, {fold['card_share']:.1%})",
        f"{s['proposed']}/{s['accepted']}/{s['refused']}", f"{s['read_back']}", f"{s['reruns']}",
    ]


HEADER = ["source", "budget", "archive tok", "requests", "median req: folds / none", "final req: folds / none",
          "prefix rewritten: close / pressure", "card ignored: rewritten (median req)", "fold card tok (median)", "prop/acc/ref", "read back", "re-runs"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=24, help="tasks in the generated coding session")
    parser.add_argument("--star-dialogues", type=int, default=30, help="STAR dialogues of the persona")
    parser.add_argument("--persona", default="Jane Doe")
    parser.add_argument("--tokens", default="cl100k_base", help="token counter: cl100k_base (default) or words")
    parser.add_argument("--budget", type=int, action="append", help="budgets to run (repeatable)")
    args = parser.parse_args()
    budgets = args.budget or [128_000, 16_000]
    data = default_data_dir()
    # (name, units, fold card after this many tool calls): service dialogues make 1-4 KB queries
    # each, so the card comes after 4 calls there; coding sessions use the default 20
    sources = [("coding (generated)", coding_session(0, tasks=args.tasks), 20)]
    if (data / "star" / "index.tsv").exists():
        sources.append((f"STAR {args.persona}", star_units(data / "star", args.persona, limit=args.star_dialogues), 4))
    if (data / "abcd" / "abcd_sample.json").exists():
        sources.append(("ABCD sample", abcd_units(data / "abcd" / "abcd_sample.json"), 4))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, units, card_calls in sources:
            for budget in budgets:
                slug = "".join(c for c in name if c.isalnum())
                common = dict(budget=budget, tokens=args.tokens, tmp=Path(tmp), name=slug, card_calls=card_calls)
                fold = play(units, fold_at_close=True, **common)
                plain = play(units, fold_at_close=False, **{**common, "card_calls": 0})  # pressure only: no card
                ignored = play(units, fold_at_close=False, **common)  # the card shown, never answered
                rows.append(row(f"{name} (card at {card_calls} calls)", budget, fold, plain, ignored))
    widths = [max(len(r[i]) for r in [HEADER, *rows]) for i in range(len(HEADER))]
    print(f"memfold fold benchmark (tokens: {args.tokens}; fold card at N tool calls or 100,000 tokens)")
    for r in [HEADER, ["-" * w for w in widths], *rows]:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths)))


if __name__ == "__main__":
    main()
