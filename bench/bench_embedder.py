"""Benchmark: the two all-MiniLM-L6-v2 embedders side by side (issue 18, points 2-3).

* ``numpy``: :class:`memfold.MiniLMEmbedder`, the default (numpy forward pass, safetensors,
  tokenizers; no torch);
* ``torch``: :class:`memfold.SentenceTransformerEmbedder` (sentence-transformers on torch), the
  default before round 5. Both give the same vectors (``tests/test_minilm.py``).

Each embedder runs in fresh processes, once on one thread (``OMP_NUM_THREADS``,
``OPENBLAS_NUM_THREADS`` and ``MKL_NUM_THREADS`` = 1, and ``torch.set_num_threads(1)``) and once
with the libraries' default threads. Per run it prints:

* import + load: from the first ``import memfold`` to a loaded model (``embedder.preload()``), s;
* RSS after load and peak RSS at the end of the run (``VmRSS`` / ``VmHWM``), MB;
* query embed p50/p95: ``embed(question)`` for LoCoMo questions (short queries), ms;
* batch throughput: ``embed_batch`` over ``--texts`` LoCoMo turns in batches of 256 (what
  :meth:`memfold.MemFold.index_embeddings` does), texts/s.

The figures move with the machine's load (the load average is printed); the README quotes them
with this command. Run: ``python bench/bench_embedder.py [--texts 2000] [--queries 100]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data" / "locomo" / "locomo_dev.json"
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
which, threads, data = sys.argv[1], sys.argv[2], json.loads(open(sys.argv[3]).read())
import memfold
if which == "torch":
    emb = memfold.SentenceTransformerEmbedder()
    emb.preload()
    if threads == "1":
        import torch
        torch.set_num_threads(1)
else:
    emb = memfold.MiniLMEmbedder()
    emb.preload()
load_s = time.perf_counter() - t0

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
rss_load = status("VmRSS")
emb.embed("warm up")
q = []
for text in data["queries"]:
    t = time.perf_counter()
    emb.embed(text)
    q.append(time.perf_counter() - t)
texts = data["texts"]
t = time.perf_counter()
for i in range(0, len(texts), 256):
    emb.embed_batch(texts[i:i + 256])
batch_s = time.perf_counter() - t
print(json.dumps({"load_s": load_s, "rss_load_mb": rss_load, "query_s": q, "batch_s": batch_s,
                  "texts": len(texts), "peak_rss_mb": status("VmHWM"), "torch": "torch" in sys.modules}))
"""


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100
    lo, hi = math.floor(k), math.ceil(k)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def locomo(n_texts: int, n_queries: int) -> dict:
    data = json.loads(DATA.read_text())
    texts, questions = [], []
    for sample in data:
        conv = sample["conversation"]
        n = 1
        while f"session_{n}" in conv:
            texts += [f"{t['speaker']}: {t['text']}" for t in conv[f"session_{n}"]]
            n += 1
        questions += [q["question"] for q in sample["qa"] if q.get("category") in (1, 2, 3, 4)]
    step = max(1, len(questions) // n_queries)
    return {"texts": texts[:n_texts], "queries": questions[::step][:n_queries]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", type=int, default=2000, help="LoCoMo turns embedded for the throughput")
    parser.add_argument("--queries", type=int, default=100, help="short queries embedded one by one")
    parser.add_argument("--embedders", default="numpy,torch")
    parser.add_argument("--threads", default="1,default")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data.json"
        data.write_text(json.dumps(locomo(args.texts, args.queries)))
        for which in args.embedders.split(","):
            for threads in args.threads.split(","):
                env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
                env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
                if threads == "1":
                    env.update({k: "1" for k in THREAD_VARS})
                out = subprocess.run([sys.executable, "-c", CHILD, which, threads, str(data)], env=env,
                                     capture_output=True, text=True, check=True, cwd=tmp)
                r = json.loads(out.stdout.strip().splitlines()[-1])
                rows.append((which, threads, r))
                print(f"  {which} threads={threads}: done", file=sys.stderr, flush=True)
    load = os.getloadavg()[0]
    print(f"all-MiniLM-L6-v2 embedders; load average at the end {load:.1f} on {os.cpu_count()} cores; "
          f"{args.queries} queries, {args.texts:,} LoCoMo turns")
    head = (f"{'embedder':<8} {'threads':>8} {'import+load s':>14} {'RSS load MB':>12} {'peak RSS MB':>12} "
            f"{'query p50 ms':>13} {'query p95 ms':>13} {'batch texts/s':>14} {'torch':>6}")
    print(head)
    print("-" * len(head))
    for which, threads, r in rows:
        print(f"{which:<8} {threads:>8} {r['load_s']:>14.2f} {r['rss_load_mb']:>12.0f} {r['peak_rss_mb']:>12.0f} "
              f"{percentile(r['query_s'], 50) * 1000:>13.1f} {percentile(r['query_s'], 95) * 1000:>13.1f} "
              f"{r['texts'] / r['batch_s']:>14.0f} {str(r['torch']):>6}")


if __name__ == "__main__":
    main()
