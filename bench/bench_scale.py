"""Benchmark: memfold's costs as the history grows (issue 18, point 8).

LoCoMo dev text (``speaker: text``) is cycled to 1K, 10K and 100K turns in two layouts:

* ``one``: one conversation holding every turn (compacting as it goes, as a bot's append would);
* ``many``: conversations of 100 turns each (10, 100 and 1,000 of them), so a search inside one
  100-turn conversation of a 100K-turn file can be compared with the same search in a 1K file.

For each layout and size it prints append (all, and user and assistant turns apart: only a user
turn passes the constraint extractor), compile (``context()``: repeated, so a cached context after
the first, and right after an append, as a bot compiles), BM25 search and hybrid search
p50/p95 (hybrid also right after an append, when the new turn has no vector yet), peak RSS of the
measuring process, database size, active cards and their max depth, and the summarizer calls per
turn of the build, each with its growth ratio 100K/1K.

Window settings: budget 8,000 words, reserve 1,000, 32 hot turns, leaf chunk 2,000, card target
150, fan-in 4 (word tokens, deterministic extractive summarizer); embeddings all-MiniLM-L6-v2 on
one thread: ``--embedder default`` (the numpy :class:`~memfold.memory.embeddings.MiniLMEmbedder`,
no torch) or ``--embedder sentence-transformers`` (torch, the embedder before round 5; same
vectors), with ``OMP_NUM_THREADS``/``OPENBLAS_NUM_THREADS``/``MKL_NUM_THREADS`` set to 1 for the
measuring process and ``torch.set_num_threads(1)``. ``--chains`` also appends 100K turns one by one at budget 2,000 (16 hot turns)
and 8,000 and prints card depth, stored cards, leaf folds and summarizer calls per turn (issue 18,
point 6).

A database is built once per layout and size and cached under ``--cache`` (default
``/tmp/memfold-bench-scale``); each measurement runs on a copy in a fresh process, so peak RSS is
that of one process opening and using the file (not of the build). Delete the cache after a change
to what is stored. Run: ``python bench/bench_scale.py [--max 100000] [--layouts one,many]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data" / "locomo" / "locomo_dev.json"
SIZES = (1_000, 10_000, 100_000)
CONV_TURNS = 100  # turns per conversation of the "many" layout


def settings_kwargs(budget: int = 8_000, hot: int = 32) -> dict:
    return dict(budget_tokens=budget, output_reserve_tokens=budget // 8, hot_turns=hot, leaf_chunk_tokens=2_000,
                card_target_tokens=150, rollup_fanin=4)


def locomo_texts() -> tuple[list[str], list[str]]:
    """Every LoCoMo dev turn as ``speaker: text`` in order, and the questions (categories 1-4)."""
    data = json.loads(DATA.read_text())
    texts, questions = [], []
    for sample in data:
        conv = sample["conversation"]
        n = 1
        while f"session_{n}" in conv:
            for turn in conv[f"session_{n}"]:
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [image: {turn['blip_caption']}]"
                texts.append(text)
            n += 1
        questions += [q["question"] for q in sample["qa"] if q.get("category") in (1, 2, 3, 4)]
    return texts, questions


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100
    lo, hi = math.floor(k), math.ceil(k)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Counting:
    """Wraps a summarizer and counts its calls."""

    def __init__(self, inner):
        from memfold.window.summarizers.base import Summarizer

        class _C(Summarizer):
            id = getattr(inner, "id", "counting")
            calls = 0

            def summarize(s, items, depth, *, target_tokens=None):
                _C.calls += 1
                return inner.summarize(items, depth, target_tokens=target_tokens)

        self.summarizer = _C()

    @property
    def calls(self) -> int:
        return type(self.summarizer).calls


def vector_cache(cache: Path, texts: list[str]):
    """All-MiniLM vectors of the distinct texts, computed once and kept in ``cache``."""
    import numpy as np

    path = cache / "locomo-vectors.npy"
    unique = list(dict.fromkeys(texts))
    if path.exists():
        vectors = np.load(path)
        if len(vectors) == len(unique):
            return dict(zip(unique, vectors))
    from memfold.memory.embeddings import make_embedder

    emb = make_embedder("default")  # the same vectors as sentence-transformers (tests/test_minilm.py)
    t0 = time.perf_counter()
    vectors = np.concatenate([emb.embed_batch(unique[i:i + 512]) for i in range(0, len(unique), 512)])
    print(f"  embedded {len(unique):,} distinct texts in {time.perf_counter() - t0:.0f} s", flush=True)
    np.save(path, vectors)
    return dict(zip(unique, vectors))


def build(cache: Path, layout: str, size: int) -> Path:
    """The cached database of ``layout`` at ``size`` turns (built now if missing), with vectors."""
    import numpy as np

    import memfold
    from memfold import WindowSettings
    from memfold.window.summarizers.extractive import ExtractiveSummarizer

    db = cache / f"{layout}-{size}.db"
    meta = cache / f"{layout}-{size}.json"
    if db.exists() and meta.exists():
        return db
    for p in cache.glob(f"{layout}-{size}.db*"):
        p.unlink()
    texts, _ = locomo_texts()
    vectors = vector_cache(cache, texts)
    summ = Counting(ExtractiveSummarizer())  # word counting, like the facade's "words" counter
    mf = memfold.MemFold(db, clock=memfold.LogicalClock(), token_counter="words", embedder=None,
                         window=WindowSettings(**settings_kwargs()), summarizer=summ.summarizer)
    t0 = time.perf_counter()
    n_convs = 1 if layout == "one" else size // CONV_TURNS
    per_conv = size // n_convs
    ids_texts: list[tuple[int, str]] = []
    for c in range(n_convs):
        conv = mf.conversation(f"c{c}", namespace="bench")
        for start in range(0, per_conv, 50):
            batch = [{"role": "user" if (c * per_conv + i) % 2 == 0 else "assistant",
                      "content": texts[(c * per_conv + i) % len(texts)]}
                     for i in range(start, min(per_conv, start + 50))]
            ids = conv.append_many(batch)
            ids_texts += [(i, b["content"]) for i, b in zip(ids, batch)]
        if layout == "one" and size >= 10_000:
            print(f"    {layout} {size}: {per_conv:,} turns appended", flush=True)
    build_s = time.perf_counter() - t0
    from memfold.memory.embeddings import DEFAULT_MODEL_ID

    for start in range(0, len(ids_texts), 5_000):
        chunk = ids_texts[start:start + 5_000]
        mf.embeddings.store("turn", [i for i, _ in chunk], np.stack([vectors[t] for _, t in chunk]),
                            model_id=DEFAULT_MODEL_ID)
    mf.close()
    meta.write_text(json.dumps({"summarizer_calls": summ.calls, "turns": size, "build_seconds": build_s}))
    return db


def measure(db: Path, layout: str, size: int, queries: int, appends: int, embedder: str = "default") -> dict:
    """Measurements on a copy of ``db`` (run in a fresh process)."""
    import random

    if embedder == "sentence-transformers":
        import torch

        torch.set_num_threads(1)
    import memfold
    from memfold import WindowSettings

    texts, questions = locomo_texts()
    rnd = random.Random(7)
    qs = rnd.sample(questions, queries)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.db"
        shutil.copy(db, path)
        mf = memfold.MemFold(path, clock=memfold.LogicalClock(), token_counter="words", embedder=embedder,
                             window=WindowSettings(**settings_kwargs()))
        n_convs = 1 if layout == "one" else size // CONV_TURNS
        target = "c0" if layout == "one" else f"c{n_convs // 2}"
        conv = mf.conversation(target, namespace="bench")
        out: dict = {"layout": layout, "turns": size, "embedder": type(mf.embedder).__name__}
        mf.embedder.embed_batch(["warm up"])  # the model load is not a search's cost here (point 3 is)
        conv.context()
        # append
        times = []
        by_role: dict[str, list[float]] = {"user": [], "assistant": []}
        for i in range(appends):
            turn = {"role": "user" if i % 2 == 0 else "assistant", "content": texts[(size + i) % len(texts)]}
            t0 = time.perf_counter()
            conv.append(turn)
            times.append(time.perf_counter() - t0)
            by_role[turn["role"]].append(times[-1])
        out["append"] = times
        # a user turn also passes the constraint extractor; an assistant turn does not
        out["append_user"], out["append_assistant"] = by_role["user"], by_role["assistant"]
        times = []
        for _ in range(max(20, queries // 2)):
            t0 = time.perf_counter()
            conv.context()
            times.append(time.perf_counter() - t0)
        out["compile"] = times
        for mode in ("bm25", "hybrid"):
            times = []
            mf.search("warm up query", conversation_id=target, kinds=("turn", "card"), mode=mode)
            for q in qs:
                t0 = time.perf_counter()
                mf.search(q, conversation_id=target, kinds=("turn", "card"), mode=mode, limit=10)
                times.append(time.perf_counter() - t0)
            out[mode] = times
        times = []
        for i, q in enumerate(qs[: max(10, queries // 4)]):
            conv.append({"role": "user", "content": texts[(size + appends + i) % len(texts)]})
            t0 = time.perf_counter()
            mf.search(q, conversation_id=target, kinds=("turn", "card"), mode="hybrid", limit=10)
            times.append(time.perf_counter() - t0)
        out["hybrid_after_append"] = times
        # compile right after an append: what a bot pays each model call (the loop above serves a
        # cached context after the first; any write makes the cache stale)
        times = []
        for i in range(max(20, queries // 2)):
            conv.append({"role": "user" if i % 2 == 0 else "assistant",
                         "content": texts[(size + appends + queries + i) % len(texts)]})
            t0 = time.perf_counter()
            conv.context()
            times.append(time.perf_counter() - t0)
        out["compile_after_append"] = times
        items = conv.catalog_items()
        cards = [i for i in items if i.kind == "card"]
        out["active_cards"] = len(cards)
        out["max_depth"] = max((c.depth for c in cards), default=0)
        mf.close()
        out["db_mb"] = sum(p.stat().st_size for p in db.parent.glob(db.name + "*")) / 2**20
    out["peak_rss_mb"] = peak_rss_mb()
    out["torch_imported"] = "torch" in sys.modules
    meta = json.loads((db.with_suffix(".json")).read_text())
    out["summarizer_calls_per_turn"] = meta["summarizer_calls"] / size
    return out


def chains(size: int, budget: int, hot: int) -> dict:
    """Append ``size`` turns one by one at ``budget``; card depth, stored cards, leaf folds, calls."""
    import memfold
    from memfold import WindowSettings
    from memfold.window.summarizers.extractive import ExtractiveSummarizer

    texts, _ = locomo_texts()
    with tempfile.TemporaryDirectory() as tmp:
        summ = Counting(ExtractiveSummarizer())
        s = settings_kwargs(budget, hot)
        s["leaf_chunk_tokens"] = min(2_000, budget // 4)
        s["card_target_tokens"] = min(150, budget // 40)
        mf = memfold.MemFold(Path(tmp) / "c.db", clock=memfold.LogicalClock(), token_counter="words",
                             embedder=None, window=WindowSettings(**s), summarizer=summ.summarizer)
        conv = mf.conversation("chain", namespace="bench")
        t0 = time.perf_counter()
        for i in range(size):
            conv.append({"role": "user" if i % 2 == 0 else "assistant", "content": texts[i % len(texts)]})
        seconds = time.perf_counter() - t0
        items = conv.catalog_items()
        all_cards = mf.db.execute("SELECT depth, COUNT(*) FROM cards GROUP BY depth").fetchall()  # bench-only read
        leaf = sum(n for d, n in all_cards if d == 1)
        total = sum(n for _, n in all_cards)
        out = {"turns": size, "budget": budget, "hot": hot, "seconds": seconds,
               "max_depth": max((d for d, _ in all_cards), default=0),
               "active_cards": sum(1 for i in items if i.kind == "card"),
               "stored_cards": total, "leaf_folds": leaf, "summarizer_calls_per_turn": summ.calls / size,
               "depth_bound": math.ceil(math.log(size, s["rollup_fanin"])) + 3,
               "ctx_tokens": conv.context().total_tokens}
        mf.close()
    return out


def fmt_ratio(a: float, b: float) -> str:
    return f"{b / a:.2f}x" if a else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max", type=int, default=100_000, help="largest history (turns)")
    parser.add_argument("--layouts", default="one,many")
    parser.add_argument("--cache", default="/tmp/memfold-bench-scale")
    parser.add_argument("--embedder", default="default", choices=("default", "sentence-transformers"),
                        help="all-MiniLM-L6-v2 in numpy (default) or on sentence-transformers/torch")
    parser.add_argument("--queries", type=int, default=60, help="searches per mode")
    parser.add_argument("--appends", type=int, default=200, help="appends measured")
    parser.add_argument("--chains", action="store_true", help="also the chain test at 100K (budgets 2,000, 8,000)")
    parser.add_argument("--chain-turns", type=int, default=100_000)
    parser.add_argument("--only-chains", action="store_true")
    parser.add_argument("--_build", nargs=2, metavar=("LAYOUT", "SIZE"), help=argparse.SUPPRESS)
    parser.add_argument("--_child", nargs=3, metavar=("LAYOUT", "SIZE", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--_chain", nargs=4, metavar=("SIZE", "BUDGET", "HOT", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    if args._build:
        build(cache, args._build[0], int(args._build[1]))
        return
    if args._child:
        layout, size, outp = args._child[0], int(args._child[1]), args._child[2]
        db = build(cache, layout, size)
        Path(outp).write_text(json.dumps(measure(db, layout, size, args.queries, args.appends, args.embedder)))
        return
    if args._chain:
        size, budget, hot, outp = int(args._chain[0]), int(args._chain[1]), int(args._chain[2]), args._chain[3]
        Path(outp).write_text(json.dumps(chains(size, budget, hot)))
        return

    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    results: dict = {}
    sizes = [s for s in SIZES if s <= args.max]
    if not args.only_chains:
        for layout in args.layouts.split(","):
            for size in sizes:
                with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
                    outp = f.name
                print(f"  measuring {layout} {size:,} ...", flush=True)
                subprocess.run([sys.executable, __file__, "--cache", str(cache), "--_build", layout, str(size)],
                               check=True, env=env)  # its own process: the build's memory is not the figure
                subprocess.run([sys.executable, __file__, "--cache", str(cache), "--queries", str(args.queries),
                                "--appends", str(args.appends), "--embedder", args.embedder,
                                "--_child", layout, str(size), outp],
                               check=True, env=env)
                results[(layout, size)] = json.loads(Path(outp).read_text())
                os.unlink(outp)
        print()
        first = next(iter(results.values()), {})
        print(f"memfold at scale: LoCoMo dev text cycled; budget 8,000 words, 32 hot, one thread; embedder "
              f"{first.get('embedder')} (torch imported: {first.get('torch_imported')}); times in ms (p50 / p95)")
        for layout in args.layouts.split(","):
            label = "one conversation" if layout == "one" else f"conversations of {CONV_TURNS} turns, search in one"
            print(f"\nlayout {layout!r} ({label})")
            rows = [results[(layout, s)] for s in sizes]
            head = f"{'figure':<30}" + "".join(f"{s:>18,}" for s in sizes) + f"{'ratio last/first':>18}"
            print(head)
            print("-" * len(head))
            for key, name in (("append", "append"), ("append_user", "append (user turns)"),
                              ("append_assistant", "append (assistant turns)"), ("compile", "compile"),
                              ("compile_after_append", "compile after append"), ("bm25", "BM25 search"),
                              ("hybrid", "hybrid search"), ("hybrid_after_append", "hybrid after append")):
                if any(key not in r for r in rows):
                    continue  # a result file written before the figure existed
                for p in (50, 95):
                    vals = [percentile(r[key], p) * 1000 for r in rows]
                    print(f"{name + f' p{p} ms':<30}" + "".join(f"{v:>18.2f}" for v in vals)
                          + f"{fmt_ratio(vals[0], vals[-1]):>18}")
            for key, name, f in (("peak_rss_mb", "peak RSS MB", "{:.0f}"), ("db_mb", "DB size MB", "{:.1f}"),
                                 ("active_cards", "active cards", "{}"), ("max_depth", "max card depth", "{}"),
                                 ("summarizer_calls_per_turn", "summarizer calls/turn", "{:.4f}")):
                vals = [r[key] for r in rows]
                print(f"{name:<30}" + "".join(f"{f.format(v):>18}" for v in vals) + f"{fmt_ratio(vals[0], vals[-1]):>18}")
    if args.chains or args.only_chains:
        print(f"\nchains: {args.chain_turns:,} turns appended one by one (issue 18, point 6)")
        print(f"{'budget':>7} {'hot':>4} {'max depth':>10} {'bound':>6} {'stored cards':>13} {'leaf folds':>11} "
              f"{'cards/leaf':>11} {'calls/turn':>11} {'active':>7} {'ctx tokens':>11} {'seconds':>8}")
        for budget, hot in ((2_000, 16), (8_000, 16)):
            with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
                outp = f.name
            subprocess.run([sys.executable, __file__, "--_chain", str(args.chain_turns), str(budget), str(hot), outp],
                           check=True, env=env)
            r = json.loads(Path(outp).read_text())
            os.unlink(outp)
            print(f"{budget:>7,} {hot:>4} {r['max_depth']:>10} {r['depth_bound']:>6} {r['stored_cards']:>13,} "
                  f"{r['leaf_folds']:>11,} {r['stored_cards'] / max(1, r['leaf_folds']):>11.2f} "
                  f"{r['summarizer_calls_per_turn']:>11.4f} {r['active_cards']:>7} {r['ctx_tokens']:>11,} "
                  f"{r['seconds']:>8.0f}", flush=True)


if __name__ == "__main__":
    main()
