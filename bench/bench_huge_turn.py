"""Benchmark: one huge message (5 MB) does not slow down later compiles or appends (issue 20, point 6).

Two conversations of the same 200 short support turns, tiktoken cl100k_base counting (the
default), budget 8,000 tokens: one plain, one with a 5 MB user message (a pasted log) as turn
50. The huge turn is archived whole and shown as a glimpse; the glimpse is cut from a head of the
text near its target size, so its cost does not depend on the turn's size. Prints p50/p95 of
``context()`` and of ``append`` for both and the ratio (goal: context() p95 within 2x), and
``conv.search`` for a word the huge turn holds (round 11: FTS5's snippet() is quadratic in a
text's size, so a text over ``LONG_TEXT`` characters takes its snippet from the linear
``memory/storage/textsearch.snippet``; before, a 2 MB turn made one search take 70 s).
Run: ``python bench/bench_huge_turn.py [--mb 5] [--calls 30]``.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # replay.stats when run from a clone

import memfold  # noqa: E402
from memfold import WindowSettings  # noqa: E402
from memfold.replay.stats import percentile  # noqa: E402

WORDS = ("order refund replacement ORD-{} ships on May {} to {} Elm St please email never call thanks ok "
         "sounds good the a we will decided tracking TRK-{} amount ${}.00").split()
SETTINGS = WindowSettings(budget_tokens=8_000, output_reserve_tokens=1_000, hot_turns=32)


def short_turns(rnd: random.Random, n: int) -> list[dict]:
    return [{"role": "user" if i % 2 == 0 else "assistant",
             "content": " ".join(rnd.choice(WORDS).format(rnd.randint(1, 9999)) for _ in range(rnd.randint(4, 24)))}
            for i in range(n)]


def huge_text(mb: float) -> str:
    line = "2026-05-03T12:00:00Z INFO worker-7 request id=ORD-3300 path=/srv/app/config.yaml status=200 ms=41\n"
    return line * int(mb * 1_000_000 / len(line))


def measure(conv, calls: int, rnd: random.Random) -> tuple[list[float], list[float]]:
    compile_ms, append_ms = [], []
    for _ in range(calls):
        t0 = time.perf_counter()
        conv.context()
        compile_ms.append((time.perf_counter() - t0) * 1000)
    for turn in short_turns(rnd, calls):
        t0 = time.perf_counter()
        conv.append(turn)
        append_ms.append((time.perf_counter() - t0) * 1000)
    return compile_ms, append_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=5.0, help="size of the huge message in MB")
    parser.add_argument("--calls", type=int, default=30, help="context() calls and appends measured per case")
    args = parser.parse_args()
    text = huge_text(args.mb)
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        mf = memfold.MemFold(Path(tmp) / "bench.db", clock=memfold.LogicalClock(), embedder=None, window=SETTINGS,
                             secrets="off")
        for name, huge in (("plain", False), ("with 5 MB turn", True)):
            rnd = random.Random(42)
            conv = mf.conversation(name, namespace="bench")
            history = short_turns(rnd, 200)
            t0 = time.perf_counter()
            for i, turn in enumerate(history):
                if huge and i == 50:
                    t1 = time.perf_counter()
                    conv.append({"role": "user", "content": text})
                    rows.setdefault("huge append ms", (time.perf_counter() - t1) * 1000)
                conv.append(turn)
            build = time.perf_counter() - t0
            ctx = conv.context()
            compile_ms, append_ms = measure(conv, args.calls, rnd)
            search_ms = []
            for _ in range(5):
                t0 = time.perf_counter()
                conv.search("ORD-3300 config.yaml")
                search_ms.append((time.perf_counter() - t0) * 1000)
            rows[name] = (build, ctx.total_tokens, ctx.usable_tokens, len(ctx.glimpses), compile_ms, append_ms, search_ms)
        mf.close()
    print(f"huge message: {len(text.encode()) / 1e6:.1f} MB; its own append (counted once): "
          f"{rows['huge append ms']:.0f} ms")
    print(f"{'case':>16} | {'build s':>7} | {'context tokens':>14} | {'glimpses':>8} | {'context() p50 / p95 ms':>22} | "
          f"{'append p50 / p95 ms':>19} | {'search p50 / max ms':>19}")
    print("-" * 124)
    for name in ("plain", "with 5 MB turn"):
        build, tokens, usable, glimpses, compile_ms, append_ms, search_ms = rows[name]
        print(f"{name:>16} | {build:>7.1f} | {tokens:>6,} / {usable:>5,} | {glimpses:>8} | "
              f"{percentile(compile_ms, 0.5):>9.1f} / {percentile(compile_ms, 0.95):>8.1f} | "
              f"{percentile(append_ms, 0.5):>8.1f} / {percentile(append_ms, 0.95):>7.1f} | "
              f"{percentile(search_ms, 0.5):>8.1f} / {max(search_ms):>8.1f}")
    ratio = percentile(rows["with 5 MB turn"][4], 0.95) / percentile(rows["plain"][4], 0.95)
    append_ratio = percentile(rows["with 5 MB turn"][5], 0.95) / percentile(rows["plain"][5], 0.95)
    print(f"\ncontext() p95 ratio (5 MB / plain): {ratio:.2f} (goal <= 2: {'met' if ratio <= 2 else 'not met'}); "
          f"append p95 ratio {append_ratio:.2f}")


if __name__ == "__main__":
    main()
