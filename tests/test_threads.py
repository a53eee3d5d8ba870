"""Threads (issue 12, point 4): several threads share one ``MemFold``, with no errors and no lost,
doubled or misplaced turn.

The thread model (``memory/storage/sqlite/db.py``, ``THREADS.md``): one connection per opened
storage, guarded by one re-entrant lock held for a whole transaction, a whole snapshot, or one
statement. These are soaks, not timing tests: each thread runs for a fixed time *and* at least a
fixed number of rounds (so a slow machine still does enough work to fold), then the invariants are
checked on what was written: every appended turn is in its conversation's history exactly once,
seqs are contiguous, ids are unique, the catalog covers the history without gap or overlap, and
every compiled context fits its budget.
"""

from __future__ import annotations

import random
import threading
import time
import traceback

from memfold import LogicalClock, MemFold, WindowSettings

#: how long each soak runs, in seconds (a duration, not an assertion)
SOAK_SECONDS = 10.0
#: rounds every thread completes whatever the duration (one round: 2 appends, 1 compile, 2 searches)
MIN_ROUNDS = 12
WORDS = ("invoice refund shipping address parcel delay billing account router modem password order "
         "tracking courier voucher warranty").split()
SETTINGS = WindowSettings(budget_tokens=400, output_reserve_tokens=50, hot_turns=4, leaf_chunk_tokens=60,
                          card_target_tokens=10, rollup_fanin=3, memories_k=2)


def open_memfold(path) -> MemFold:
    return MemFold(path, clock=LogicalClock(), token_counter="words", embedder="hashing", window=SETTINGS)


class Soak:
    """Runs ``threads`` workers, each on one of ``facades``, appending, compiling and searching on
    the conversations ``conversation_ids`` until the deadline and ``MIN_ROUNDS`` are both reached."""

    def __init__(self, facades: list[MemFold], conversation_ids: list[str], threads: int, seconds: float) -> None:
        self.facades, self.conversation_ids = facades, conversation_ids
        self.threads, self.seconds = threads, seconds
        self.lock = threading.Lock()
        self.errors: list[str] = []
        self.appended: dict[str, dict[int, str]] = {cid: {} for cid in conversation_ids}
        self.contexts: list = []
        self.counts = {"append": 0, "context": 0, "conversation search": 0, "memfold search": 0, "remember": 0}

    def worker(self, n: int, start: threading.Barrier) -> None:
        mf = self.facades[n % len(self.facades)]
        conversations = [mf.conversation(cid) for cid in self.conversation_ids]
        rnd = random.Random(n)
        start.wait()
        deadline = time.monotonic() + self.seconds
        rounds = 0
        while rounds < MIN_ROUNDS or time.monotonic() < deadline:
            conv = conversations[(n + rounds) % len(conversations)]
            for op in ("append user", "context", "append assistant", "conversation search", "memfold search",
                       "remember"):
                try:
                    if op.startswith("append"):
                        text = f"w{n}r{rounds} " + " ".join(rnd.choice(WORDS) for _ in range(8))
                        turn_id = conv.append({"role": op.split()[1], "content": text})
                        with self.lock:
                            self.appended[conv.id][turn_id] = text
                        op = "append"
                    elif op == "context":
                        compiled = conv.context()
                        with self.lock:
                            self.contexts.append(compiled)
                    elif op == "conversation search":
                        conv.search(rnd.choice(WORDS))
                    elif op == "memfold search":
                        mf.search(rnd.choice(WORDS), namespace=conv.namespace)
                    elif rounds % 4 == n % 4:  # now and then a memory, so compiles show a memories section
                        mf.remember(conv.namespace, "semantic", f"thread {n} prefers {rnd.choice(WORDS)}",
                                    key=f"thread{n}.preference")
                    else:
                        continue
                    with self.lock:
                        self.counts[op] += 1
                except BaseException:  # noqa: BLE001 - every error of every thread is reported
                    with self.lock:
                        self.errors.append(f"thread {n}, {op}:\n{traceback.format_exc()}")
            rounds += 1

    def run(self) -> None:
        start = threading.Barrier(self.threads)
        workers = [threading.Thread(target=self.worker, args=(n, start), name=f"soak-{n}") for n in range(self.threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()

    def check(self, mf: MemFold) -> None:
        """The invariants, read back through ``mf`` after every thread finished."""
        assert self.errors == [], f"{len(self.errors)} error(s); the first:\n{self.errors[0]}"
        assert all(n > 0 for n in self.counts.values()), self.counts
        seen_ids: set[int] = set()
        for cid, appended in self.appended.items():
            conv = mf.conversation(cid)
            history = conv.history()
            ids = [t.id for t in history]
            assert len(ids) == len(set(ids)), f"{cid}: a turn appears twice in the history"
            assert {t.id: t.content for t in history} == appended, f"{cid}: history differs from what was appended"
            assert [t.seq for t in history] == list(range(1, len(history) + 1)), f"{cid}: seqs are not contiguous"
            assert not seen_ids & set(ids), "a turn id is in two conversations"
            seen_ids |= set(ids)
            items = conv.catalog_items()
            assert items[0].first_seq == 1 and items[-1].last_seq == len(history)
            for before, after in zip(items, items[1:]):
                assert after.first_seq == before.last_seq + 1, f"{cid}: the catalog has a gap or an overlap"
            assert any(i.kind == "card" for i in items), f"{cid}: nothing was folded; the soak did too little"
            final = conv.context()
            assert final.total_tokens <= final.usable_tokens
        for compiled in self.contexts:
            assert compiled.total_tokens <= compiled.usable_tokens, compiled.sections
            assert compiled.total_tokens == sum(compiled.sections.values())


def test_eight_threads_append_compile_and_search_on_one_memfold(tmp_path):
    mf = open_memfold(tmp_path / "threads.db")
    try:
        for cid in ("ticket-1", "ticket-2"):
            mf.conversation(cid, namespace="acme")
        soak = Soak([mf], ["ticket-1", "ticket-2"], threads=8, seconds=SOAK_SECONDS)
        soak.run()
        print(f"\none MemFold, 8 threads, {SOAK_SECONDS:.0f} s: {soak.counts}")
        soak.check(mf)
    finally:
        mf.close()


def test_several_memfolds_on_one_file_in_one_process(tmp_path):
    """Two facades on one file are two connections, kept apart like two processes (SQLite's file
    locks); two threads on each append to, compile and search the same conversations."""
    path = tmp_path / "shared.db"
    first = open_memfold(path)
    first.conversation("ticket-1", namespace="acme")
    second = open_memfold(path)
    try:
        soak = Soak([first, second], ["ticket-1"], threads=4, seconds=SOAK_SECONDS / 2)
        soak.run()
        print(f"\ntwo MemFolds on one file, 4 threads, {SOAK_SECONDS / 2:.0f} s: {soak.counts}")
        soak.check(first)
        soak.check(second)
    finally:
        first.close()
        second.close()


def test_a_write_from_another_thread_never_joins_an_open_transaction(tmp_path):
    """Thread A holds a transaction open, then fails; thread B writes meanwhile through another
    path of the same facade (``advance_clock``). B's write waits for A's transaction to end
    instead of running inside it, so A's rollback cannot take B's committed write with it."""

    class Failed(Exception):
        pass

    path = tmp_path / "lock.db"
    mf = open_memfold(path)
    conv = mf.conversation("ticket-1", namespace="acme")
    in_transaction, b_done = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def thread_a():
        try:
            with mf.storage.transaction():
                conv.append({"role": "user", "content": "rolled back"})
                in_transaction.set()
                b_done.wait(timeout=0.5)  # a chance for B to write inside this transaction (it must not)
                raise Failed()
        except Failed:
            pass
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def thread_b():
        try:
            in_transaction.wait()
            mf.advance_clock(5)
            b_done.set()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=thread_a), threading.Thread(target=thread_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    mf.close()
    assert errors == []
    with MemFold(path, token_counter="words", embedder=None) as again:
        assert again.clock.tick == 5  # B's committed tick survived A's rollback
        assert again.conversation("ticket-1").history() == []  # A's append did not


def test_a_compaction_inside_a_transaction_never_waits_for_another_threads_compaction(tmp_path):
    """Thread B compacts and is stopped inside its summarizer (holding the conversation's turn to
    compact, not the storage); thread A then appends inside its own transaction, which pushes the
    window past the hard watermark. A must not wait for B's turn (B needs the storage A holds): it
    folds on its own, and B's later splice of the same range loses and is dropped."""
    from memfold.window.summarizers.base import Summarizer

    inside, release = threading.Event(), threading.Event()

    class Blocking(Summarizer):
        id = "blocking"

        def summarize(self, items, depth, *, target_tokens=None):
            inside.set()
            release.wait()
            return "blocked summary"

    mf = MemFold(tmp_path / "order.db", clock=LogicalClock(), token_counter="words", embedder=None,
                 window=WindowSettings(budget_tokens=200, output_reserve_tokens=0, hot_turns=2, leaf_chunk_tokens=40,
                                       card_target_tokens=5, soft_watermark=0.5, hard_watermark=0.9))
    conv = mf.conversation("ticket-1", namespace="acme")
    for i in range(14):  # 140 words: past the soft line (100), under the hard one (180)
        conv.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} " + "word " * 8})
    errors: list[BaseException] = []

    def thread_b():
        try:
            conv.compact(summarizer=Blocking())
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def thread_a():
        try:
            inside.wait()
            with mf.storage.transaction():
                conv.append({"role": "user", "content": "a long one " + "word " * 60})
            release.set()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
            release.set()

    threads = [threading.Thread(target=thread_b, daemon=True), threading.Thread(target=thread_a, daemon=True)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 120
    for t in threads:
        t.join(timeout=max(0.0, deadline - time.monotonic()))  # a deadlock shows as a live thread, not a hung suite
    assert not any(t.is_alive() for t in threads), "the two compactions deadlocked"
    assert errors == []
    items = conv.catalog_items()
    assert any(i.kind == "card" for i in items)
    assert [i.first_seq for i in items[1:]] == [i.last_seq + 1 for i in items[:-1]]
    compiled = conv.context()
    assert compiled.total_tokens <= compiled.usable_tokens
    mf.close()
