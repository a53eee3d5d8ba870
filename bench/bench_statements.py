"""Benchmark: SQL statements per ``append`` and per ``context()`` (issue 12, point 3).

Builds one conversation (whitespace word counting, logical clock, deterministic components) with
a protected constraint, a few memory records and ``--turns`` turns of history folded into cards,
then traces every statement SQLite runs (``sqlite3.Connection.set_trace_callback``) for one
``append``, one ``context()`` and one ``search``, and says whether the compile wrote anything (a
write lock). ``internal`` counts the statements SQLite runs by itself inside those (trace lines
starting with ``--``: FTS5's own reads, such as one ``turns_fts_docsize`` read per posting that
``bm25()`` scores, and trigger bodies); they are part of ``statements``.
Run: ``python bench/bench_statements.py [--turns 2000]``.
"""

from __future__ import annotations

import argparse
import re
import tempfile
from collections import Counter
from pathlib import Path

import memfold
from memfold import WindowSettings

WRITE = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE|BEGIN IMMEDIATE)", re.I)
CONTROL = re.compile(r"^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)", re.I)


def connection(mf):
    storage = getattr(mf, "storage", None)
    return storage.db.conn if storage is not None else mf.db.conn


def traced(mf, fn):
    seen: list[str] = []
    conn = connection(mf)
    conn.set_trace_callback(seen.append)
    try:
        fn()
    finally:
        conn.set_trace_callback(None)
    return seen


def summary(statements: list[str]) -> tuple[int, int, int, int, int]:
    work = [s for s in statements if not CONTROL.match(s)]
    writes = [s for s in statements if WRITE.match(s)]
    conv_reads = sum(1 for s in work if re.search(r"FROM\s+conversations\b", s, re.I))
    internal = sum(1 for s in work if s.lstrip().startswith("--"))
    return len(work), len(writes), conv_reads, len(statements), internal


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=2_000, help="turns of history before measuring")
    parser.add_argument("--show", action="store_true", help="print the statements of each call")
    args = parser.parse_args()
    settings = WindowSettings(budget_tokens=2_000, output_reserve_tokens=200, hot_turns=8, leaf_chunk_tokens=400,
                              card_target_tokens=60, rollup_fanin=4)
    with tempfile.TemporaryDirectory() as tmp:
        mf = memfold.MemFold(Path(tmp) / "bench.db", clock=memfold.LogicalClock(), token_counter="words",
                             window=settings, embedder=None)
        conv = mf.conversation("bench", namespace="acme")
        conv.append({"role": "user", "content": "Never call me on the phone, email only please."})
        mf.remember("acme", "semantic", "The customer prefers email.", key="user.contact_preference")
        mf.remember("acme", "procedural", "Refunds over $500 need approval.")
        batch = [{"role": "user" if i % 2 == 0 else "assistant",
                  "content": f"order ORD-{i} ships on May {i % 28 + 1} to {i} Elm St, tracking TRK-{i} ok"}
                 for i in range(args.turns)]
        for start in range(0, len(batch), 500):
            conv.append_many(batch[start:start + 500])
        conv.context()  # settle: compact to the budget before measuring
        rows = []
        for name, fn in (("append", lambda: conv.append({"role": "user", "content": "and the refund for ORD-7?"})),
                         ("context()", lambda: conv.context()),
                         ("search", lambda: conv.search("refund ORD-7", 10))):
            statements = traced(mf, fn)
            rows.append((name, *summary(statements)))
            if args.show:
                print(f"--- {name}")
                for s in statements:
                    print("   ", " ".join(s.split())[:160])
        print(f"memfold statements per call ({args.turns:,} turns of history, budget {settings.budget_tokens})")
        print(f"{'call':<10} {'statements':>10} {'writes':>7} {'conversation-row reads':>23} {'with BEGIN/COMMIT':>18}"
              f" {'internal':>9}")
        for name, work, writes, conv_reads, total, internal in rows:
            print(f"{name:<10} {work:>10} {writes:>7} {conv_reads:>23} {total:>18} {internal:>9}")
        mf.close()


if __name__ == "__main__":
    main()
