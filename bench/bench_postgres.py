"""Benchmark: SQLite and PostgreSQL side by side (issue 17, point 6).

For each backend and each archive size (``--sizes``, default 10K and 100K turns) it loads the
archive through the public API (``append_many``, 1,000 turns per conversation, one transaction
per batch of 500), then measures on the loaded database, through the facade:

* ``append``: one turn appended to a random conversation (one write transaction, compaction off
  the hot path as in production: the soft watermark only leaves a note);
* ``compile``: ``conversation.context()`` of a random conversation;
* ``search``: ``mf.search(question, namespace=...)`` (BM25, no embedder) of a random tenant;

and prints p50/p95 in milliseconds, and the SQL statements (round trips) one append costs.
Then throughput: ``--writers`` (default 1, 2, 4, 8, 16) writer processes (bot processes), each
appending ``--appends`` turns (``conversation.append``, watermarks on) to a conversation of its
own, and once more all to one shared conversation, all on one database; turns per second over
the slowest writer's wall time. The table gives both backends side by side and says where the
PostgreSQL line crosses the SQLite one (PostgreSQL writers of different conversations run side
by side; SQLite has one writer at a time).

PostgreSQL is a ``pgserver`` (PostgreSQL 16) started in a temp folder with
``synchronous_commit = off`` (the durability of SQLite's ``synchronous=NORMAL`` in WAL mode: no
fsync per commit, no corruption on a crash), or ``--pg-url`` (a role that may create databases). Word-counted tokens, a logical clock, no embedder: the figures are
storage and engine cost. This machine is shared, so figures are indicative; run on an idle one
for numbers to quote. Run: ``python bench/bench_postgres.py [--sizes 10000 100000] [--writers 1 2 4 8 16]``
(``--sizes`` with no value: throughput only).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import memfold
from memfold import WindowSettings
from memfold.replay.stats import percentile

PER_CONVERSATION = 1_000
BATCH = 500
WORDS = ("order refund parcel courier delivery invoice address email phone warranty desk chair lamp "
         "monday tuesday broken late cancelled approved damaged replacement tracking label").split()
SETTINGS = dict(budget_tokens=4_000, output_reserve_tokens=400, hot_turns=16, leaf_chunk_tokens=800,
                card_target_tokens=80, compact_on_append=False)


def text(rnd: random.Random, i: int) -> str:
    return f"turn {i}: " + " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(8, 30))) + f" ORD-{rnd.randint(1000, 9999)}"


def open_mf(target):
    return memfold.MemFold(target, clock=memfold.LogicalClock(), token_counter="words", embedder=None,
                           window=WindowSettings(**SETTINGS))


def load(target, turns: int, seed: int = 7) -> list[tuple[str, str]]:
    """``turns`` turns in ``turns / 1000`` conversations of 50 tenants; returns ``[(conversation, namespace)]``."""
    rnd = random.Random(seed)
    mf = open_mf(target)
    convs = []
    for c in range(max(1, turns // PER_CONVERSATION)):
        cid, ns = f"c{c}", f"tenant{c % 50}"
        conv = mf.conversation(cid, namespace=ns)
        for start in range(0, PER_CONVERSATION, BATCH):
            conv.append_many([{"role": "user" if (start + i) % 2 == 0 else "assistant", "content": text(rnd, start + i)}
                              for i in range(BATCH)])
        convs.append((cid, ns))
    mf.close()
    return convs


def timed(fn, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def measure(target, convs, samples: int, seed: int = 11) -> dict[str, tuple[float, float]]:
    rnd = random.Random(seed)
    mf = open_mf(target)
    conversations = {cid: mf.conversation(cid) for cid, _ in convs}
    counter = iter(range(10**9))

    def append():
        cid = rnd.choice(convs)[0]
        conversations[cid].append({"role": "user", "content": text(rnd, next(counter))})

    def compile_():
        conversations[rnd.choice(convs)[0]].context()

    def search():
        mf.search(" ".join(rnd.sample(WORDS, 3)), namespace=rnd.choice(convs)[1], limit=10)

    out = {}
    for name, fn in (("append", append), ("compile", compile_), ("search", search)):
        fn()  # warm: prepared statements, caches
        before = mf.storage.statements
        xs = timed(fn, samples)
        out[name] = (1000 * percentile(xs, 0.5), 1000 * percentile(xs, 0.95))
        out[name + " statements"] = (mf.storage.statements - before) / samples
    mf.close()
    return out


WRITER = textwrap.dedent("""
    import sys, time
    from memfold import MemFold, LogicalClock, WindowSettings
    target, who, n, go, settings = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), eval(sys.argv[5])
    mf = MemFold(target, clock=LogicalClock(), token_counter="words", embedder=None, window=WindowSettings(**settings))
    conv = mf.conversation(sys.argv[6], namespace="default")
    while time.time() < go:
        time.sleep(0.001)
    t = time.time()
    for i in range(n):
        conv.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"{who} turn {i} about order ORD-{i}"})
    print(time.time() - t, flush=True)
    mf.close()
""")


def throughput(target, writers: int, appends: int, *, shared: bool = False) -> float:
    """Turns per second of ``writers`` processes appending at once (over the slowest one's time),
    each to its own conversation, or with ``shared`` all to one."""
    names = [f"w{writers}-shared" if shared else f"w{writers}-{k}" for k in range(writers)]
    mf = open_mf(target)
    for name in sorted(set(names)):
        mf.conversation(name, namespace="default")
    mf.close()
    go = time.time() + 3.0 + 0.4 * writers  # every process has opened the database by then
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(target), f"w{writers}-{k}", str(appends), str(go),
                               repr(SETTINGS), names[k]], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for k in range(writers)]
    walls = []
    for p in procs:
        out, err = p.communicate(timeout=3600)
        if p.returncode != 0:
            raise RuntimeError(f"a writer failed: {err[-2000:]}")
        walls.append(float(out.split()[-1]))
    return writers * appends / max(walls)


class Postgres:
    """A server for the run: ``--pg-url`` or a pgserver in a temp folder; one new database per use."""

    def __init__(self, url: str | None) -> None:
        self.server = None
        if url is None:
            import pgserver

            self.folder = tempfile.mkdtemp(prefix="memfold-bench-pg-")
            self.server = pgserver.get_server(os.path.join(self.folder, "pgdata"), cleanup_mode="delete")
            url = self.server.get_uri()
            import psycopg

            # SQLite runs WAL with synchronous=NORMAL (no fsync per commit); the same durability
            # class on PostgreSQL is synchronous_commit=off (fsync stays on: no corruption on a crash)
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("ALTER SYSTEM SET synchronous_commit = off")
                conn.execute("SELECT pg_reload_conf()")
        self.url = url
        self.n = 0

    def fresh(self) -> str:
        import psycopg
        from urllib.parse import urlsplit, urlunsplit

        self.n += 1
        name = f"memfold_bench_{os.getpid()}_{self.n}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name}")
            conn.execute(f"CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'")
        return urlunsplit(urlsplit(self.url)._replace(path="/" + name))

    def stop(self) -> None:
        if self.server is not None:
            import shutil

            self.server.cleanup()
            shutil.rmtree(self.folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000], help="archive sizes in turns")
    parser.add_argument("--samples", type=int, default=200, help="timed calls per operation")
    parser.add_argument("--writers", type=int, nargs="*", default=[1, 2, 4, 8, 16], help="concurrent writer processes")
    parser.add_argument("--no-shared", action="store_true", help="skip the runs where every writer shares one conversation")
    parser.add_argument("--appends", type=int, default=100, help="appends per writer process")
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgres"], choices=["sqlite", "postgres"])
    parser.add_argument("--pg-url", default=None, help="a PostgreSQL server URL (default: start a pgserver)")
    args = parser.parse_args()
    pg = Postgres(args.pg_url) if "postgres" in args.backends else None
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="memfold-bench-") as tmp:
            for size in args.sizes:
                for backend in args.backends:
                    target = Path(tmp) / f"bench-{size}.db" if backend == "sqlite" else pg.fresh()
                    t = time.perf_counter()
                    convs = load(target, size)
                    loaded = time.perf_counter() - t
                    figures = measure(target, convs, args.samples)
                    rows.append((backend, size, figures, loaded))
                    print(f"{backend:9} {size:>7} turns loaded in {loaded:6.1f} s | " + " | ".join(
                        f"{k} p50 {v[0]:.2f} ms p95 {v[1]:.2f} ms" for k, v in figures.items() if isinstance(v, tuple))
                        + f" | {figures['append statements']:.1f} statements per append", flush=True)
            speeds = {}
            for mode in ("own", "shared") if not args.no_shared else ("own",):
                for writers in args.writers:
                    for backend in args.backends:
                        target = Path(tmp) / f"writers-{mode}-{writers}.db" if backend == "sqlite" else pg.fresh()
                        rate = throughput(target, writers, args.appends, shared=mode == "shared")
                        speeds[mode, backend, writers] = rate
                        print(f"{backend:9} {writers:>3} writer processes ({mode} conversation"
                              f"{'s' if mode == 'own' else ''}): {rate:8.1f} appends/s", flush=True)
    finally:
        if pg is not None:
            pg.stop()
    print()
    if rows:
        print("| backend | turns | append p50 / p95 ms | statements per append | compile p50 / p95 ms | "
              "search p50 / p95 ms | load s |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for backend, size, f, loaded in rows:
            print(f"| {backend} | {size:,} | {f['append'][0]:.2f} / {f['append'][1]:.2f} | "
                  f"{f['append statements']:.1f} | {f['compile'][0]:.2f} / "
                  f"{f['compile'][1]:.2f} | {f['search'][0]:.2f} / {f['search'][1]:.2f} | {loaded:.0f} |")
        print()
    if speeds:
        print_speeds(speeds, args.writers, args.backends)


def print_speeds(speeds: dict, writers: list[int], backends: list[str]) -> None:
    """The throughput table (appends/s by writer processes, per backend and mode) and where the
    PostgreSQL line crosses the SQLite one."""
    modes = sorted({m for m, _, _ in speeds}, key=["own", "shared"].index)
    cols = [(m, b) for m in modes for b in backends]
    print("| writer processes | " + " | ".join(f"{b} ({m} conversation{'s' if m == 'own' else ''})"
                                             for m, b in cols) + " |")
    print("| ---: | " + " | ".join("---:" for _ in cols) + " |")
    for w in writers:
        print(f"| {w} | " + " | ".join(f"{speeds[m, b, w]:.1f}" for m, b in cols) + " |")
    if {"sqlite", "postgres"} <= set(backends):
        for m in modes:
            ahead = [w for w in writers if speeds[m, "postgres", w] >= speeds[m, "sqlite", w]]
            what = f"{m} conversation{'s' if m == 'own' else ''}"
            if not ahead:
                print(f"{what}: the lines do not cross up to {max(writers)} writers (SQLite ahead at every count; "
                      f"PostgreSQL/SQLite at {max(writers)}: {speeds[m, 'postgres', max(writers)] / speeds[m, 'sqlite', max(writers)]:.2f})")
            else:
                print(f"{what}: PostgreSQL is at or above SQLite from {ahead[0]} writer process(es) "
                      f"(at: {', '.join(map(str, ahead))})")


if __name__ == "__main__":
    main()
