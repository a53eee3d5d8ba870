"""Benchmark: instructions (callgrind) and thread CPU of one user and one assistant ``append``
at each scale, with the same turns at every scale (issue 18, point 4: does an append grow with
history?).

``bench/bench_append.py`` appends the LoCoMo turns that follow where each scale file's build
stopped, so its 1K and 100K runs append different texts; an extractor whose cost depends on the
text then looks like growth. This benchmark appends the same turns (``--start``, default 0, an
index into the LoCoMo turns) on a copy of each file, so what differs is the history only.

For each ``--db`` (a file ``bench/bench_scale.py`` built, e.g.
``/tmp/memfold-bench-scale/one-100000.db``; it is copied, never written) it opens the copy as
``bench_append.py`` does (logical clock, word tokens, the scale settings, no embedder), appends
``--warmup`` turns and compiles after each (first-use work of the extractor and caches), then
appends ``--pairs`` user and assistant turns, each followed by a compile. It prints per role:

* thread CPU (``time.thread_time``) p50 of the appends, in a plain run (a fresh process per
  file: the extractor remembers sentences per process, so a second file would read the same turns
  from that memory);
* with ``--callgrind``: the median instructions of each append (and of the compile after it),
  the run repeated under ``valgrind --tool=callgrind`` (``PYTHONHASHSEED=0``), one dump per step
  split by a ``binascii.crc_hqx`` call made before each step.

Run: ``python bench/bench_append_cg.py --db /tmp/memfold-bench-scale/one-1000.db --db
/tmp/memfold-bench-scale/one-100000.db [--pairs 10] [--callgrind]``.
"""

from __future__ import annotations

import argparse
import binascii
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))


def run_steps(db: Path, copy: Path, start: int, warmup: int, pairs: int, marks: bool) -> list[tuple[str, float]]:
    """Append on a copy of ``db``; (phase, thread CPU seconds) per measured step."""
    import memfold
    from bench_scale import locomo_texts, settings_kwargs
    from memfold import WindowSettings

    texts, _ = locomo_texts()
    shutil.copy(db, copy)
    mf = memfold.MemFold(copy, clock=memfold.LogicalClock(), token_counter="words", embedder=None,
                         window=WindowSettings(**settings_kwargs()))
    conv = mf.conversation("c0", namespace="bench")
    conv.context()
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "content": texts[(start + i) % len(texts)]}
             for i in range(warmup + 2 * pairs)]
    for t in turns[:warmup]:
        conv.append(t)
        conv.context()
    out: list[tuple[str, float]] = []
    for t in turns[warmup:]:
        for phase, step in (("append-" + t["role"], lambda: conv.append(t)), ("compile", conv.context)):
            if marks:
                binascii.crc_hqx(b"mark", 0)
            c0 = time.thread_time()
            step()
            out.append((phase, time.thread_time() - c0))
    if marks:
        binascii.crc_hqx(b"mark", 0)
    mf.close()
    return out


def child(db: Path, start: int, warmup: int, pairs: int, valgrind: bool) -> list[tuple[str, float]]:
    """The steps run in a fresh process (the extractor's per-sentence memory is per process: a
    second file in the same process would read the same turns from it), under callgrind when
    ``valgrind`` (its dumps left in the current folder); (phase, thread CPU seconds) per step."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(db), "--start", str(start), "--warmup", str(warmup),
           "--pairs", str(pairs), "--phases", "phases.json"]
    if valgrind:
        cmd = ["valgrind", "--tool=callgrind", "--dump-before=binascii_crc_hqx", "--callgrind-out-file=cg.out", *cmd]
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return [tuple(x) for x in json.loads(Path("phases.json").read_text())]


def callgrind(db: Path, start: int, warmup: int, pairs: int) -> dict[str, float]:
    """Median instructions per phase, the steps run under callgrind in a child process."""
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            child(db, start, warmup, pairs, valgrind=True)
        finally:
            os.chdir(here)
        phases = [p for p, _ in json.loads(Path(f"{tmp}/phases.json").read_text())]
        files = sorted(glob.glob(f"{tmp}/cg.out.*"), key=lambda f: int(f.rsplit(".", 1)[1]))
        totals = [int(re.search(r"^totals: (\d+)", Path(f).read_text(), re.M).group(1)) for f in files]
    # dump k (1-based) holds what ran before mark k: the steps are dumps 2 .. len(phases) + 1
    seg: dict[str, list[int]] = {}
    for k, phase in enumerate(phases):
        seg.setdefault(phase, []).append(totals[k + 1])
    return {phase: statistics.median(xs) for phase, xs in seg.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", type=Path, action="append", help="a database bench_scale.py built (repeatable)")
    parser.add_argument("--start", type=int, default=0, help="index of the first LoCoMo turn appended")
    parser.add_argument("--warmup", type=int, default=20, help="appends (each with a compile) not measured")
    parser.add_argument("--pairs", type=int, default=10, help="user + assistant appends measured")
    parser.add_argument("--callgrind", action="store_true", help="also count instructions under callgrind")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--phases", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:  # under callgrind: run the steps with marks, write the phases
        with tempfile.TemporaryDirectory() as tmp:
            steps = run_steps(args.child, Path(tmp) / "m.db", args.start, args.warmup, args.pairs, marks=True)
        Path(args.phases).write_text(json.dumps(steps))
        return
    here = os.getcwd()
    for db in args.db or parser.error("give --db"):
        with tempfile.TemporaryDirectory() as tmp:
            os.chdir(tmp)
            try:
                steps = child(db.resolve(), args.start, args.warmup, args.pairs, valgrind=False)
            finally:
                os.chdir(here)
        load = os.getloadavg()[0]
        cpu: dict[str, list[float]] = {}
        for phase, sec in steps:
            cpu.setdefault(phase, []).append(sec)
        print(f"{db.name}: {args.pairs} pairs from LoCoMo turn {args.start} (load average {load:.2f})")
        counts = callgrind(db.resolve(), args.start, args.warmup, args.pairs) if args.callgrind else {}
        for phase in ("append-user", "append-assistant", "compile"):
            line = f"  {phase:17s} thread CPU p50 {statistics.median(cpu[phase]) * 1000:7.3f} ms"
            if phase in counts:
                line += f"   instructions median {counts[phase] / 1e6:7.3f} M"
            print(line)


if __name__ == "__main__":
    main()
