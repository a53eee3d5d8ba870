"""Benchmark the viewer's JSON routes (issue 19) on the replayed sample history.

Replays ``memfold replay --sample`` (words as tokens, budget 300, hot tail 4) into a temporary
file, serves the viewer on it (read-only) with uvicorn on 127.0.0.1 and times each route the
pages call, ``--repeats`` times, with one httpx client; prints the median and p95 latency and the
answer's size per route, and checks the database bytes did not change.

    python bench/bench_viewer.py [--repeats 20]

Figures depend on the machine and its load; the script never passes or fails on time.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from click.testing import CliRunner

from memfold import MemFold
from memfold.cli import cli
from memfold.integrations.viewer import make_server
from memfold.replay.stats import percentile

CONV = "sample-history"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="memfold-bench-viewer-"))
    db = folder / "sample.db"
    result = CliRunner().invoke(cli, ["replay", "--sample", "--db", str(db), "--tokens", "words", "--budget", "300",
                                      "--hot-turns", "4"])
    if result.exit_code != 0:
        sys.exit(result.output)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    mf = MemFold(db, embedder=None, token_counter="words", read_only=True)
    turns = len(mf.conversation(CONV, create=False).history())
    ready, urls = threading.Event(), []
    server = make_server(mf, port=0, reader=[], window=mf.window.with_overrides(budget=300, hot_turns=4),
                         on_ready=lambda url: (urls.append(url), ready.set()))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    ready.wait(60)
    routes = [f"/v1/view/conversations/{CONV}/tree", f"/v1/view/conversations/{CONV}/context",
              f"/v1/view/conversations/{CONV}/at/{turns // 2}", f"/v1/view/conversations/{CONV}/search?q=refund",
              f"/v1/view/conversations/{CONV}/growth", f"/v1/view/memories?namespace={CONV}",
              f"/v1/view/runs?namespace={CONV}", f"/v1/view/protected?namespace={CONV}", "/v1/view/chains"]
    print(f"viewer routes on the replayed sample ({turns} turns), {args.repeats} requests each, one client")
    print(f"{'route':<62} {'p50 ms':>8} {'p95 ms':>8} {'KB':>8}")
    with httpx.Client(base_url=urls[0].rstrip("/"), timeout=120) as client:
        for route in routes:
            times, size = [], 0
            for _ in range(args.repeats):
                start = time.perf_counter()
                response = client.get(route)
                times.append((time.perf_counter() - start) * 1000)
                response.raise_for_status()
                size = len(response.content)
            print(f"{route:<62} {statistics.median(times):>8.1f} {percentile(times, 0.95):>8.1f} {size / 1024:>8.1f}")
    server.should_exit = True
    thread.join(60)
    mf.close()
    after = hashlib.sha256(db.read_bytes()).hexdigest()
    print("database bytes unchanged:", before == after)


if __name__ == "__main__":
    main()
