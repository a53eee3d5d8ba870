"""Benchmark the LangGraph store and the Agents SDK session (issue 16, points 3 and 4).

Prints, for stores holding N items in one namespace (default 1K and 10K), the median
milliseconds of one ``put`` (a supersession through memfold's write path), one ``get``, one
filtered ``search`` without a query, one hybrid ``search(query=...)`` (hashing embedder) and one
``list_namespaces``, beside LangGraph's ``InMemoryStore`` for scale (a dict in memory, built
without an index, so its query search is a plain listing); then, for sessions holding
N turns (default 100 and 1,000), the median milliseconds of ``add_items`` (two items), of
``get_items`` in the context view (the compiled window, 2,000-token budget) and the history
view, and of ``pop_item`` (a fork). Figures only: nothing passes or fails on time.

    python bench/bench_agent_adapters.py [--items 1000,10000] [--turns 100,1000] [--repeats 15]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from memfold import LogicalClock, MemFold
from memfold.integrations.agents import MemfoldSession
from memfold.integrations.langgraph import MemfoldStore


def median_ms(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def bench_store(n: int, repeats: int, folder: Path) -> dict[str, tuple[float, float]]:
    mf = MemFold(folder / f"store-{n}.db", clock=LogicalClock(), token_counter="words", embedder="hashing")
    ours, theirs = MemfoldStore(mf), InMemoryStore()
    ns = ("acme", "dana")
    for store in (ours, theirs):
        store.batch([PutOp(
            ns, f"k{i}", {"text": f"order ORD-{i} ships from dock {i % 17}", "n": i}) for i in range(n)])
    ours.search(ns, query="warm up the vectors")  # the first query embeds every record once
    counter = iter(range(10**9))
    out = {}
    for name, op in [
        ("put (supersede)", lambda s: s.put(ns, f"k{next(counter) % n}", {"text": f"v{next(counter)}", "n": -1})),
        ("get", lambda s: s.get(ns, f"k{n // 2}")),
        ("search filter", lambda s: s.search(ns, filter={"n": {"$gte": n - 5}}, limit=10)),
        ("search query", lambda s: s.search(ns, query=f"ORD-{n // 3} dock", limit=10)),
        ("list_namespaces", lambda s: s.list_namespaces()),
    ]:
        out[name] = (median_ms(lambda: op(ours), repeats), median_ms(lambda: op(theirs), repeats))
    mf.close()
    return out


def bench_session(n: int, repeats: int, folder: Path) -> dict[str, float]:
    mf = MemFold(folder / f"session-{n}.db", clock=LogicalClock(), token_counter="words", embedder=None)
    window = MemfoldSession("ticket", mf, budget=2000)
    history = MemfoldSession("ticket", mf, view="history")
    window.append([{"role": "user" if i % 2 == 0 else "assistant",
                    "content": f"turn {i} about order ORD-{i} and dock {i % 17}"} for i in range(n)])
    window.compact({"force": True})
    pair = [{"role": "user", "content": "where is it?"}, {"role": "assistant", "content": "on its way"}]
    out = {
        "add_items (2)": median_ms(lambda: asyncio.run(window.add_items(pair)), repeats),
        "get_items, context view": median_ms(lambda: asyncio.run(window.get_items()), repeats),
        "get_items, history view": median_ms(lambda: asyncio.run(history.get_items()), repeats),
        "get_items(limit=10), history": median_ms(lambda: asyncio.run(history.get_items(10)), repeats),
        "pop_item (a fork)": median_ms(lambda: asyncio.run(window.pop_item()), repeats),
    }
    out["window items / history items"] = (len(window.items()), len(history.items()))
    mf.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", default="1000,10000")
    parser.add_argument("--turns", default="100,1000")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print("LangGraph store: median ms per call (MemfoldStore / InMemoryStore)")
        for n in [int(x) for x in args.items.split(",")]:
            for name, (ours, theirs) in bench_store(n, args.repeats, folder).items():
                print(f"  {n:>6} items  {name:<18} {ours:8.2f} / {theirs:8.3f}")
        print("Agents SDK session: median ms per call")
        for n in [int(x) for x in args.turns.split(",")]:
            for name, value in bench_session(n, args.repeats, folder).items():
                shown = f"{value[0]} / {value[1]}" if isinstance(value, tuple) else f"{value:8.2f}"
                print(f"  {n:>6} turns  {name:<30} {shown}")


if __name__ == "__main__":
    main()
