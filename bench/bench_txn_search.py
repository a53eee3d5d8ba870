"""Benchmark: what a search inside a caller's write transaction adds (round 10).

Inside a transaction the search's in-memory statistics may meet the transaction's own uncommitted
turns; they go into a copy for that search alone (``_Docs.extended``, ``TurnFacets.copy`` via
``TurnFacets.refresh(private=True)``) so a rollback leaves nothing behind. This prints the cost
of those copies at 10K, 100K and 1M items (synthetic rows of 100-turn conversations, two speakers;
best of 5). Searches outside a transaction make no copy. Run: ``python bench/bench_txn_search.py``.
"""

from __future__ import annotations

import os
import time

from memfold.memory.recall_priors import TurnFacets
from memfold.memory.search import _Docs


def main() -> None:
    print(f"load average {os.getloadavg()[0]:.2f}")
    for n in (10_000, 100_000, 1_000_000):
        docs = _Docs()
        docs.add([(i + 1, 12, f"c{i // 100}", i % 100 + 1) for i in range(n)])
        facets = TurnFacets()
        facets._add([(i + 1, f"c{i // 100}", float(i), "dana" if i % 2 else "bot") for i in range(n)])
        best_docs = best_facets = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            docs.extended([(n + 1, 5, "c0", 101)], [])
            best_docs = min(best_docs, time.perf_counter() - t0)
            t0 = time.perf_counter()
            facets.copy()._add([(n + 1, "c0", float(n), "dana")])
            best_facets = min(best_facets, time.perf_counter() - t0)
        print(f"{n:>9,} items: statistics copy {best_docs * 1000:6.2f} ms, turn facets copy {best_facets * 1000:6.2f} ms")


if __name__ == "__main__":
    main()
