"""Benchmark the MCP server: tool calls per second and their latency over streamable HTTP.

Starts the real server (``memfold mcp DB --http --port 0 --embedder none``) on 127.0.0.1 over a
database seeded with one conversation of ``--turns`` support turns, connects ``--clients`` MCP
sessions with the SDK's own client, and for each of ``append``, ``context`` and ``search`` has
every client call the tool back to back, at most ``--requests`` calls each and for at most
``--seconds`` per tool (after one untimed warm-up call each). Prints a table: calls, errors,
calls per second (all clients together, wall time of the timed phase), p50 and p95 latency as a
client sees it, and the p50 of the same call made in-process without MCP (``MemfoldTools``), so
the protocol's share shows.

    python bench/bench_mcp.py [--clients 4] [--requests 200] [--seconds 30] [--turns 300] [--json OUT]

Needs the mcp extra (``pip install 'memfold[mcp]'``). The figures are printed, never judged.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import AsyncExitStack

import anyio
from mcp import Client

from memfold import MemFold
from memfold.integrations.mcp import MemfoldTools
from memfold.replay.stats import percentile

BUDGET = 2000
WORDS = "order refund ORD-{} ships May {} to Elm street /srv/app{}.conf decided email thanks".split()


def seed(path: str, turns: int) -> None:
    with MemFold(path, embedder=None) as mf:
        conv = mf.conversation("bench", namespace="bench")
        conv.append_many([{"role": "user" if i % 2 == 0 else "assistant",
                           "content": " ".join(w.format(i % 97) for w in WORDS[: 4 + i % 9])} for i in range(turns)])
        mf.remember("bench", "semantic", "the customer prefers email", key="user.contact_preference")


def arguments(tool: str, client: int, n: int) -> dict:
    """The arguments of call ``n`` of ``client``: appends go to one conversation per client."""
    if tool == "append":
        return {"conversation": f"append-{client}", "role": "user" if n % 2 == 0 else "assistant",
                "content": f"client {client} turn {n}: where is order ORD-{n % 97}?"}
    if tool == "context":
        return {"conversation": "bench", "budget": BUDGET}
    return {"conversation": "bench", "query": f"ORD-{(client * 31 + n) % 97} refund", "k": 5}


async def measure(url: str, tool: str, clients: int, max_requests: int, max_seconds: float) -> dict:
    latencies: list[float] = []
    errors = 0
    async with AsyncExitStack() as stack:
        sessions = [await stack.enter_async_context(Client(url)) for _ in range(clients)]
        for i, session in enumerate(sessions):  # warm-up, untimed
            await session.call_tool(tool, arguments(tool, i, 10**6))

        async def worker(i: int, session: Client) -> None:
            nonlocal errors
            n = 0
            while n < max_requests and time.perf_counter() < deadline:
                t0 = time.perf_counter()
                result = await session.call_tool(tool, arguments(tool, i, n))
                latencies.append(time.perf_counter() - t0)
                errors += bool(result.is_error)
                n += 1

        start = time.perf_counter()
        deadline = start + max_seconds
        async with anyio.create_task_group() as tg:
            for i, session in enumerate(sessions):
                tg.start_soon(worker, i, session)
        wall = time.perf_counter() - start
    return {"tool": tool, "clients": clients, "calls": len(latencies), "errors": errors,
            "calls_per_s": round(len(latencies) / wall, 1),
            "p50_ms": round(percentile(latencies, 0.5) * 1000, 2), "p95_ms": round(percentile(latencies, 0.95) * 1000, 2)}


def direct_p50(path: str, tool: str, calls: int) -> float:
    """p50 in ms of the same call in-process (no MCP, no HTTP), on a copy of the database."""
    with MemFold(path, embedder=None) as mf:
        tools = MemfoldTools(mf)
        tools.call(tool, arguments(tool, 99, 10**6))
        times = []
        for n in range(calls):
            t0 = time.perf_counter()
            tools.call(tool, arguments(tool, 99, n))
            times.append(time.perf_counter() - t0)
    return round(statistics.median(times) * 1000, 2)


def start_server(path: str) -> tuple[subprocess.Popen, str]:
    exe = shutil.which("memfold")
    command = [exe] if exe else [sys.executable, "-c", "from memfold.cli import cli; cli()"]
    proc = subprocess.Popen([*command, "mcp", path, "--http", "--port", "0", "--embedder", "none"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        for line in proc.stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    line = lines.get(timeout=120)
    if line is None or " at http://" not in line:
        proc.kill()
        raise SystemExit(f"memfold mcp did not start: {line!r}")
    return proc, line.split(" at ", 1)[1].split()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--requests", type=int, default=200, help="at most this many calls per client per tool")
    parser.add_argument("--seconds", type=float, default=30.0, help="at most this long per tool")
    parser.add_argument("--turns", type=int, default=300, help="turns in the searched conversation")
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memfold-bench-mcp-") as tmp:
        path = os.path.join(tmp, "mcp.db")
        seed(path, args.turns)
        direct_path = os.path.join(tmp, "direct.db")
        seed(direct_path, args.turns)
        proc, url = start_server(path)
        try:
            rows = []
            for tool in ("append", "context", "search"):
                row = anyio.run(measure, url, tool, args.clients, args.requests, args.seconds)
                row["direct_p50_ms"] = direct_p50(direct_path, tool, min(200, args.requests))
                rows.append(row)
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
    print(f"memfold mcp over streamable HTTP on 127.0.0.1: {args.clients} concurrent clients, at most "
          f"{args.requests} calls each and {args.seconds:.0f} s per tool; conversation of {args.turns} turns, "
          f"context budget {BUDGET} tokens, BM25 search (--embedder none)")
    print(f"{'tool':<8} {'calls':>6} {'errors':>6} {'calls/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'direct p50 ms':>14}")
    for r in rows:
        print(f"{r['tool']:<8} {r['calls']:>6} {r['errors']:>6} {r['calls_per_s']:>8} {r['p50_ms']:>8} "
              f"{r['p95_ms']:>8} {r['direct_p50_ms']:>14}")
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as fh:
            json.dump({"clients": args.clients, "turns": args.turns, "budget": BUDGET, "rows": rows}, fh, indent=2)


if __name__ == "__main__":
    main()
