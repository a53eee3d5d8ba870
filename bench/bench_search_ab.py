"""A/B timing of search on a bench_scale file: wall and thread CPU p50/p95 and a digest of the hits.

Runs in one process per call, on a fresh copy of ``--db`` (a file ``bench/bench_scale.py`` built),
the same 60 LoCoMo questions as bench_scale (seed 7), in a conversation of the file's layout
(``c0`` for ``one``, the middle one for ``many``). Modes: ``bm25``, ``hybrid``, ``after``
(hybrid right after an append, with a question searched before in ``hybrid``, so its vector is
kept and only the new turn is embedded), ``afternew`` (the same with questions never searched
before: the question and the new turn are both embedded, as in a bot's loop with no think time) and ``loop`` (an agent's loop: the assistant's answer is appended,
then, once the facade's embed-ahead thread is idle (the user's think time; main, which has none,
does nothing there), the user's next message, and the search: on main it embeds both turns with
the question, with embed-ahead only the user's turn is left, and it is being embedded already). Run it with two checkouts taking turns in the same minute, e.g.
``PYTHONPATH=A python bench/bench_search_ab.py --db one-100000.db --modes bm25 --tag A`` then the
same with B, and compare the figures and the ``hits`` digests (equal digests: the same hits and
scores to 9 decimals; ``ids``: the same ranked hits, scores aside). ``--profile MODE`` prints cProfile's top functions for that mode. Say the
load average (printed) beside any figure: the machine is shared. ``--phases`` times each step of
every search (wall and thread CPU of the search's own steps and of the embedding threads' forward
passes, and Python's garbage collections) and prints, per mode, each step's p50 / p95 and how much
more the slowest tenth of the searches spent in it than the median search (round 14).
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import gc
import hashlib
import json
import os
import pstats
import random
import shutil
import sys
import statistics
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_scale as bs  # noqa: E402

import memfold  # noqa: E402
from memfold import WindowSettings  # noqa: E402
from memfold.memory import embeddings as E  # noqa: E402
from memfold.memory import search as S  # noqa: E402
from memfold.memory.storage import vectorscan as V  # noqa: E402
from memfold.memory.storage.sqlite import vectors as SV  # noqa: E402

#: the steps --phases times: (class, method); the search's own steps run in its thread, embed_batch
#: in the embedding threads too
PHASES = [(S.HybridSearch, m) for m in ("_bm25_phase", "_dense_top", "_with_new_items", "_visible", "_with_priors",
                                        "_hit_items")] + [
    (E.EmbeddingIndex, "prepare"), (E.EmbeddingIndex, "store_items"), (E.SearchEmbedding, "wait"),
    (E._Ahead, "result"), (SV.SqliteVectors, "similarity"), (SV.SqliteVectors, "_index"),
    (V.Projection, "candidates"), (S._Docs, "neighbours")]


class Phases:
    """Wall and thread CPU per step of one search (``--phases``), in every thread, and GC pauses."""

    def __init__(self, mf) -> None:
        self.steps: list[tuple[str, str, float, float]] = []  # (step, thread, wall, cpu)
        self._gc: dict[str, tuple[float, float]] = {}
        for cls, name in [*PHASES, (type(mf.embedder), "embed_batch")]:
            self._wrap(cls, name)
        gc.callbacks.append(self._on_gc)

    def _wrap(self, cls, name) -> None:
        fn, steps = getattr(cls, name), self.steps

        @functools.wraps(fn)
        def timed(*a, **k):
            t, c = time.perf_counter(), time.thread_time()
            try:
                return fn(*a, **k)
            finally:
                steps.append((name, threading.current_thread().name, time.perf_counter() - t, time.thread_time() - c))
        setattr(cls, name, timed)

    def _on_gc(self, phase, info) -> None:
        th = threading.current_thread().name
        if phase == "start":
            self._gc[th] = (time.perf_counter(), time.thread_time())
        elif th in self._gc:
            t, c = self._gc.pop(th)
            self.steps.append((f"gc gen{info['generation']}", th, time.perf_counter() - t, time.thread_time() - c))

    def take(self) -> dict[str, tuple[float, float]]:
        out: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        for name, th, wall, cpu in self.steps:
            key = name if th == "MainThread" else f"{name} [{th}]"
            out[key][0] += wall
            out[key][1] += cpu
        self.steps.clear()
        return {k: (v[0], v[1]) for k, v in out.items()}


def print_phases(tag: str, mode: str, wall: list[float], per: list[dict[str, tuple[float, float]]]) -> None:
    """Each step's wall and thread CPU p50 / p95 (ms) over the searches of one mode, and the mean
    of the slowest tenth (by the search's wall) less the median: where the tail spends its excess."""
    cut = bs.percentile(wall, 90)
    slow = [p for p, w in zip(per, wall) if w >= cut]
    keys = sorted({k for p in per for k in p}, key=lambda k: -sum(p.get(k, (0, 0))[0] for p in per))
    print(f"{tag:5} phases of {mode} ({len(per)} searches; slow = the {len(slow)} at or over wall p90 "
          f"{cut * 1e3:.1f} ms): wall p50 / p95 | thread cpu p50 / p95 | slow: wall, cpu over the p50")
    for k in keys:
        w = [p.get(k, (0, 0))[0] for p in per]
        c = [p.get(k, (0, 0))[1] for p in per]
        sw = statistics.mean(p.get(k, (0, 0))[0] for p in slow) - bs.percentile(w, 50)
        sc = statistics.mean(p.get(k, (0, 0))[1] for p in slow) - bs.percentile(c, 50)
        print(f"{tag:5}   {k:44s} {bs.percentile(w, 50) * 1e3:7.2f} {bs.percentile(w, 95) * 1e3:7.2f} | "
              f"{bs.percentile(c, 50) * 1e3:6.2f} {bs.percentile(c, 95) * 1e3:6.2f} | {sw * 1e3:+7.2f} {sc * 1e3:+6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, required=True, help="a bench_scale file (one-N.db or many-N.db)")
    parser.add_argument("--modes", default="bm25,hybrid,after")
    parser.add_argument("--tag", default="")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--profile", default=None, help="a mode to profile")
    parser.add_argument("--phases", action="store_true", help="time each step of every search (see above)")
    parser.add_argument("--after-queries", type=int, default=None,
                        help="searches in the after/afternew/loop modes (default max(10, queries / 4))")
    args = parser.parse_args()
    layout, size = args.db.stem.split("-")
    size = int(size)
    modes = args.modes.split(",")
    texts, questions = bs.locomo_texts()
    qs = random.Random(7).sample(questions, args.queries)
    out = {}
    prof = cProfile.Profile() if args.profile else None
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.db"
        shutil.copy(args.db, path)
        emb = "default" if any(m != "bm25" for m in modes) else None
        mf = memfold.MemFold(path, clock=memfold.LogicalClock(), token_counter="words", embedder=emb,
                             window=WindowSettings(**bs.settings_kwargs()))
        target = "c0" if layout == "one" else f"c{(size // bs.CONV_TURNS) // 2}"
        conv = mf.conversation(target, namespace="bench")
        if emb:
            mf.embedder.embed_batch(["warm up"])
        conv.context()
        phases = Phases(mf) if args.phases else None
        for mode in modes:
            search_mode = "hybrid" if mode in ("after", "afternew", "loop") else mode
            mf.search("warm up query", conversation_id=target, kinds=("turn", "card"), mode=search_mode)
            wall, cpu, proc, hits, per = [], [], [], [], []
            n_after = args.after_queries or max(10, args.queries // 4)
            asked = qs if mode not in ("after", "afternew", "loop") else qs[:n_after]
            if mode == "afternew":  # questions outside qs: never searched in this process
                asked = [q for q in random.Random(8).sample(questions, 4 * args.queries) if q not in set(qs)][:len(asked)]
            for i, q in enumerate(asked):
                if mode == "loop":
                    conv.append({"role": "assistant", "content": texts[(size + 400 + i) % len(texts)]})
                    ahead = getattr(mf.embeddings, "ahead", None)
                    if ahead is not None:
                        ahead.drain()
                if mode in ("after", "afternew", "loop"):
                    conv.append({"role": "user", "content": texts[(size + 200 + i) % len(texts)]})
                if phases is not None:
                    phases.take()  # the append's own steps (an embed-ahead pass it started ends in the search's)
                t0, c0, p0 = time.perf_counter(), time.thread_time(), time.process_time()
                if prof is not None and args.profile == mode:
                    prof.enable()
                r = mf.search(q, conversation_id=target, kinds=("turn", "card"), mode=search_mode, limit=10)
                if prof is not None and args.profile == mode:
                    prof.disable()
                cpu.append(time.thread_time() - c0)
                wall.append(time.perf_counter() - t0)
                proc.append(time.process_time() - p0)
                hits.append([(h.kind, h.id, round(h.score, 9)) for h in r])
                if phases is not None:
                    per.append(phases.take())
            out[mode] = (wall, cpu, proc, hits)
            if phases is not None:
                print_phases(args.tag, mode, wall, per)
        mf.close()
    load = os.getloadavg()[0]
    for mode, (wall, cpu, proc, hits) in out.items():
        digest = hashlib.md5(json.dumps(hits).encode()).hexdigest()[:10]
        ids = hashlib.md5(json.dumps([[h[:2] for h in r] for r in hits]).encode()).hexdigest()[:6]
        print(f"{args.tag:5} {args.db.stem} {mode:7} wall p50 {bs.percentile(wall, 50) * 1e3:6.2f} "
              f"p95 {bs.percentile(wall, 95) * 1e3:6.2f} | main-thread cpu p50 {bs.percentile(cpu, 50) * 1e3:6.2f} "
              f"p95 {bs.percentile(cpu, 95) * 1e3:6.2f} | process cpu p50 {bs.percentile(proc, 50) * 1e3:6.2f} "
              f"p95 {bs.percentile(proc, 95) * 1e3:6.2f} | hits {digest} ids {ids} | load {load:.2f}", flush=True)
    print(f"{args.tag:5} {args.db.stem} peak RSS {bs.peak_rss_mb():.0f} MB", flush=True)
    if prof is not None:
        pstats.Stats(prof).sort_stats("cumulative").print_stats(40)
        pstats.Stats(prof).sort_stats("tottime").print_stats(30)


if __name__ == "__main__":
    main()
