"""Benchmark: the compiled context stays within budget and compiles in flat time as history grows.

For 1K, 10K and 100K turns of history (deterministic synthetic support chatter, whitespace word
counting, logical clock) it appends in batches of 1,000, compacts after each batch, then prints
compiled-context tokens, active cards (and their max depth) and the median compile time of
``conversation.context()``. Run: ``python bench/bench_window.py [--max 100000]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import memfold
from memfold import WindowSettings

WORDS = ("order refund replacement ORD-{} ships on May {} to {} Elm St please email never call thanks ok "
         "sounds good the a we will decided tracking TRK-{} path /srv/app{}/config.yaml amount ${}.00").split()
SETTINGS = WindowSettings(budget_tokens=8_000, output_reserve_tokens=1_000, hot_turns=32, leaf_chunk_tokens=2_000,
                          card_target_tokens=150, rollup_fanin=4)


def turns(rnd: random.Random, n: int, start: int):
    for i in range(start, start + n):
        text = " ".join(rnd.choice(WORDS).format(rnd.randint(1, 9999)) for _ in range(rnd.randint(4, 24)))
        yield {"role": "user" if i % 2 == 0 else "assistant", "content": text}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--max", type=int, default=100_000, help="largest history size (turns)")
    args = parser.parse_args()
    sizes = [s for s in (1_000, 10_000, 100_000) if s <= args.max]
    rnd = random.Random(42)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        mf = memfold.MemFold(Path(tmp) / "bench.db", clock=memfold.LogicalClock(), token_counter="words",
                             window=SETTINGS)
        conv = mf.conversation("bench")
        done, build_seconds = 0, 0.0
        for size in sizes:
            t0 = time.perf_counter()
            while done < size:
                mf.archive.append_many(conv.id, list(turns(rnd, 1_000, done)))
                done += 1_000
                conv.compact()
            build_seconds += time.perf_counter() - t0
            times = []
            for _ in range(20):
                t1 = time.perf_counter()
                ctx = conv.context()
                times.append(time.perf_counter() - t1)
            cards = [i for i in conv.catalog_items() if i.kind == "card"]
            rows.append((size, ctx.total_tokens, ctx.usable_tokens, len(cards), max((c.depth for c in cards), default=0),
                         statistics.median(times) * 1000, build_seconds))
            print(f"  ... {size:,} turns ready ({build_seconds:.1f} s appending + compacting so far)", flush=True)
        mf.close()
    print()
    print(f"window settings: budget {SETTINGS.budget_tokens}, reserve {SETTINGS.output_reserve_tokens}, "
          f"hot {SETTINGS.hot_turns}, leaf chunk {SETTINGS.leaf_chunk_tokens}, card target "
          f"{SETTINGS.card_target_tokens}, fan-in {SETTINGS.rollup_fanin} (word tokens)")
    print(f"{'turns':>8} | {'context tokens':>14} | {'usable':>6} | {'active cards':>12} | {'max depth':>9} | "
          f"{'compile ms (median)':>19}")
    print("-" * 86)
    for size, tokens, usable, n_cards, depth, ms, _ in rows:
        print(f"{size:>8,} | {tokens:>14,} | {usable:>6,} | {n_cards:>12} | {depth:>9} | {ms:>19.2f}")
    assert all(r[1] <= r[2] for r in rows), "a compiled context exceeded the budget"


if __name__ == "__main__":
    main()
