"""Benchmark the HTTP API (issue 16, point 7) against a live uvicorn on 127.0.0.1.

Starts ``memfold serve`` (a subprocess, API keys on, BM25 search) on a database whose
conversations already hold some history, then runs each operation with ``--clients`` concurrent
httpx clients until ``--requests`` requests are done or ``--seconds`` have passed, and prints
requests per second and p50/p95 latency per operation as a table:

* ``POST /v1/conversations/{id}/turns``: one user turn per request, each with its own
  Idempotency-Key (each client appends to its own conversation, as many tickets at once);
* ``GET /v1/conversations/{id}/context?budget=2000``: the compiled context for the next call;
* ``POST /v1/search``: hybrid search scoped to the namespace (BM25 without an embedder).

    python bench/bench_http.py [--clients 4] [--requests 400] [--seconds 30] [--history 200] [--json OUT]

Figures depend on the machine and its load; the script never passes or fails on time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from memfold import MemFold
from memfold.replay.stats import percentile

KEY = "bench-key-0123456789abcdef"
NAMESPACE = "bench/shop"
QUERIES = ["refund for the broken earbuds", "where is order ORD-1042", "warranty", "restocking fee after 30 days",
           "change my delivery address", "invoice by email"]


def populate(path: str, clients: int, history: int) -> None:
    """One conversation per client, each with ``history`` turns of support chatter."""
    with MemFold(path, embedder=None) as mf:
        for c in range(clients):
            conv = mf.conversation(f"ticket-{c}", namespace=NAMESPACE)
            conv.append_many([
                {"role": "user" if i % 2 == 0 else "assistant",
                 "content": f"turn {i}: my order ORD-{1000 + i} ({QUERIES[i % len(QUERIES)]}) costs ${i % 300}.00"}
                for i in range(history)
            ])
        mf.memory.write(NAMESPACE, "procedural", "Refunds after 30 days carry a 10% restocking fee.")


def start_server(path: str, keys_path: str) -> tuple[subprocess.Popen, str]:
    """``memfold serve`` on a free port; returns once its health route answers."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "from memfold.cli import cli; cli()", "serve", path, "--port", "0", "--keys",
         keys_path, "--embedder", "none", "--log-level", "info"],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    port = None
    for line in proc.stderr:  # type: ignore[union-attr]
        match = re.search(r"Uvicorn running on http://127\.0\.0\.1:(\d+)", line)
        if match:
            port = int(match.group(1))
            break
    if port is None:
        raise SystemExit("memfold serve did not start")
    threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()  # keep draining its log
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{base}/v1/health", timeout=5).status_code == 200:
                return proc, base
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.05)  # polling interval, not synchronisation


def run(base: str, name: str, request, clients: int, total: int, seconds: float) -> dict:
    """``total`` requests split over ``clients`` threads (each its own connection), stopping early
    after ``seconds``; returns counts, requests/s and latency percentiles in ms."""
    latencies: list[float] = []
    errors = 0
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds
    counter = iter(range(total))

    def client(c: int) -> None:
        nonlocal errors
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {KEY}"}, timeout=60) as http:
            while time.monotonic() < stop_at:
                with lock:
                    i = next(counter, None)
                if i is None:
                    return
                t0 = time.perf_counter()
                response = request(http, c, i)
                took = time.perf_counter() - t0
                with lock:
                    latencies.append(took)
                    errors += response.status_code >= 400

    t0 = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, range(clients)))
    wall = time.perf_counter() - t0
    ms = sorted(x * 1000 for x in latencies)
    return {"operation": name, "requests": len(ms), "clients": clients, "seconds": round(wall, 2),
            "req_per_s": round(len(ms) / wall, 1) if wall else None, "p50_ms": round(statistics.median(ms), 1) if ms else None,
            "p95_ms": round(percentile(ms, 0.95), 1) if ms else None, "errors": errors}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--requests", type=int, default=400, help="requests per operation (bounded)")
    ap.add_argument("--seconds", type=float, default=30.0, help="time bound per operation")
    ap.add_argument("--history", type=int, default=200, help="turns already in each conversation")
    ap.add_argument("--json", dest="json_out", default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="memfold-bench-http-") as tmp:
        path = os.path.join(tmp, "http.db")
        keys_path = os.path.join(tmp, "keys.json")
        with open(keys_path, "w", encoding="utf-8") as f:
            json.dump({"keys": [{"name": "bench", "key": KEY, "namespaces": ["bench/*"]}]}, f)
        populate(path, args.clients, args.history)
        proc, base = start_server(path, keys_path)
        try:
            ops = [
                ("POST /turns", lambda http, c, i: http.post(
                    f"/v1/conversations/ticket-{c}/turns", headers={"Idempotency-Key": f"bench-{i}"},
                    json={"messages": [{"role": "user", "content": f"request {i}: is order ORD-{i} shipped yet?"}]})),
                ("GET /context", lambda http, c, i: http.get(f"/v1/conversations/ticket-{c}/context",
                                                             params={"budget": 2000})),
                ("POST /search", lambda http, c, i: http.post("/v1/search", json={
                    "query": QUERIES[i % len(QUERIES)], "namespace": NAMESPACE, "limit": 10})),
            ]
            rows = [run(base, name, fn, args.clients, args.requests, args.seconds) for name, fn in ops]
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    print(f"memfold HTTP API on a live uvicorn (127.0.0.1), {args.clients} concurrent clients, "
          f"{args.history} turns of history per conversation, BM25 search")
    print(f"{'operation':<14} {'requests':>8} {'req/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'errors':>7}")
    for r in rows:
        print(f"{r['operation']:<14} {r['requests']:>8} {r['req_per_s']:>8} {r['p50_ms']:>8} {r['p95_ms']:>8} {r['errors']:>7}")
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
