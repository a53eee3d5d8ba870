"""How long a read command takes while another program holds the database's write lock (issue 20,
point 3).

A lock holder (a separate process) begins ``BEGIN IMMEDIATE`` or ``BEGIN EXCLUSIVE`` on a WAL
database, writes a row it never commits and says so on stdout; then each read command runs as its
own ``memfold`` process and this prints its exit code, wall time, the child's CPU time (user +
system, from ``getrusage``) and the load average. On 7b2ffd7 every read opened inside a write
transaction, so it waited the busy timeout and its retries (about 150 s) and failed; pass
``--timeout`` to stop waiting sooner.

    python bench/bench_read_under_lock.py [--timeout 200] [--commands history,search]
"""

from __future__ import annotations

import argparse
import os
import resource
import sqlite3  # noqa: F401  (the lock holder's module, imported here so a missing one fails early)
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

COMMANDS = {
    "history": ["history", "{db}", "-c", "c"],
    "search": ["search", "{db}", "-c", "c", "parcel"],
    "context": ["context", "{db}", "-c", "c", "--json", "--reader", ""],
    "memories": ["memories", "{db}"],
}


def build(path: Path) -> None:
    from memfold import LogicalClock, MemFold

    with MemFold(path, clock=LogicalClock(), token_counter="words", embedder=None) as mf:
        conv = mf.conversation("c", namespace="acme/dana")
        for i in range(20):
            conv.append({"role": "user", "content": f"where is parcel {i}?"})
            conv.append({"role": "assistant", "content": f"parcel {i} left the depot"})
        mf.remember("acme/dana", "semantic", "The customer's parcel id is 42.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, default=200.0, help="seconds to wait for one command")
    parser.add_argument("--commands", default=",".join(COMMANDS), help="comma-separated: " + ", ".join(COMMANDS))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "agent.db"
        build(path)
        for mode in ("IMMEDIATE", "EXCLUSIVE"):
            holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
                import sqlite3, sys
                conn = sqlite3.connect({str(path)!r}, isolation_level=None)
                conn.execute("BEGIN {mode}")
                conn.execute("INSERT INTO meta(key, value) VALUES ('held', '1')")
                print("held", flush=True)
                sys.stdin.read()
                conn.execute("ROLLBACK")
                """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            assert holder.stdout.readline().strip() == "held"
            try:
                for name in args.commands.split(","):
                    argv = [a.replace("{db}", str(path)) for a in COMMANDS[name]]
                    before = resource.getrusage(resource.RUSAGE_CHILDREN)
                    start = time.monotonic()
                    try:
                        done = subprocess.run([sys.executable, "-c", "from memfold.cli import cli; cli()", *argv],
                                              capture_output=True, text=True, timeout=args.timeout)
                        code = str(done.returncode)
                    except subprocess.TimeoutExpired:
                        code = f"killed after {args.timeout:.0f} s"
                    wall = time.monotonic() - start
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
                    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
                    print(f"BEGIN {mode:9s} memfold {name:8s} exit {code}  wall {wall:6.2f} s  "
                          f"cpu {cpu:5.2f} s  load {load}", flush=True)
            finally:
                holder.stdin.close()
                holder.wait()


if __name__ == "__main__":
    main()
