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
load average (printed) beside any figure: the machine is shared.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import os
import pstats
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_scale as bs  # noqa: E402

import memfold  # noqa: E402
from memfold import WindowSettings  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, required=True, help="a bench_scale file (one-N.db or many-N.db)")
    parser.add_argument("--modes", default="bm25,hybrid,after")
    parser.add_argument("--tag", default="")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--profile", default=None, help="a mode to profile")
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
        for mode in modes:
            search_mode = "hybrid" if mode in ("after", "afternew", "loop") else mode
            mf.search("warm up query", conversation_id=target, kinds=("turn", "card"), mode=search_mode)
            wall, cpu, proc, hits = [], [], [], []
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
            out[mode] = (wall, cpu, proc, hits)
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
