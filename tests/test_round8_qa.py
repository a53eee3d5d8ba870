"""Round 8 QA (issue 18 / issue 20): try to break round 8's pieces as a user would.

* kept query-word counts and labelled items in large-scope BM25 statistics
  (``memory/search.py``): every ranking after a change is compared with a fresh MemFold
  (a new open of the same file, which keeps nothing); changes come from another process.
* the time prior's argument (``time_weight``): bad values raise ``InvalidInput`` naming it.
* the round-8 phrasing families: small talk in their shapes must not become protected records,
  and pathological turns give bounded, correct output (speed is measured in a script, not here).
* opening a fresh SQLite file from many processes at once: never "database is locked".

Real SQLite files and real processes, no mocks of memfold's code."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import pytest

import memfold
from memfold import LogicalClock
from memfold.memory.embeddings import HashingEmbedder
from memfold.memory.errors import InvalidInput
from memfold.memory.search import SMALL_SCOPE


def _open(path):
    return memfold.MemFold(path, clock=LogicalClock(), token_counter="words", embedder=None, secrets="off",
                           preload_embedder=False)


def _hits(mf, query, **kw):
    return [(h.kind, h.id, round(h.score, 9)) for h in mf.search(query, limit=10, mode="bm25", **kw)]


def _fresh_hits(path, query, **kw):
    fresh = _open(path)
    try:
        return _hits(fresh, query, **kw)
    finally:
        fresh.close()


def _in_other_process(path, code):
    """Run ``code`` (with ``mf`` open on ``path``) in a new Python process."""
    script = textwrap.dedent(f"""
        import memfold
        from memfold import LogicalClock
        mf = memfold.MemFold({str(path)!r}, clock=LogicalClock(), token_counter="words", embedder=None,
                             secrets="off", preload_embedder=False)
    """) + textwrap.dedent(code) + "\nmf.close()\n"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr


def _fill(mf, n=SMALL_SCOPE + 50, conv_id="c"):
    conv = mf.conversation(conv_id, namespace="n")
    base = ["the zebra ran to the river", "a zebra and a lion", "the river is wide",
            "filler line {i}", "lions by the river crossing"]
    conv.append_many([{"role": "user", "content": base[i % 5].format(i=i)} for i in range(n)], compact=False)
    return conv


QUERIES = ["zebra crossing", "lion river", "river crossing wide"]


def _same_as_fresh(mf, path, **kw):
    for q in QUERIES:
        assert _hits(mf, q, **kw) == _fresh_hits(path, q, **kw), q


# --- 1. kept counts and labelled items ---------------------------------------------------------

def test_a_turn_relabelled_by_another_process_leaves_a_large_scopes_statistics(tmp_path):
    """A turn relabelled after a search read the statistics was not in ``_Docs.labelled`` (read once,
    "labels never change on turns and cards"), so a large scope kept its words for a reader who may
    not see it; a fresh open left them out and ranked differently. Fixed: relabel counts as an erasure."""
    path = tmp_path / "m.db"
    mf = _open(path)
    conv = _fill(mf)
    rare = [conv.append({"role": "user", "content": "crossing crossing crossing crossing"}) for _ in range(20)]
    before = _hits(mf, "zebra crossing", conversation_id="c", reader_labels=[])
    assert before == _fresh_hits(path, "zebra crossing", conversation_id="c", reader_labels=[])
    _in_other_process(path, "".join(f"mf.relabel('t{t}', ['board'])\n" for t in rare))
    after = _hits(mf, "zebra crossing", conversation_id="c", reader_labels=[])
    assert not set(rare) & {i for _, i, _ in after}  # the hits themselves are checked
    assert after == _fresh_hits(path, "zebra crossing", conversation_id="c", reader_labels=[])
    mf.close()


def test_a_label_revoked_by_another_process_lets_the_reader_see_the_turn(tmp_path):
    path = tmp_path / "m.db"
    mf = _open(path)
    conv = _fill(mf)
    secret = conv.append({"role": "user", "content": "crossing crossing crossing the zebra", "labels": ["board"]})
    assert secret not in [i for _, i, _ in _hits(mf, "zebra crossing", conversation_id="c", reader_labels=[])]
    _in_other_process(path, f"mf.revoke_label('t{secret}', 'board')\n")
    after = _hits(mf, "zebra crossing", conversation_id="c", reader_labels=[])
    assert after[0][1] == secret
    assert after == _fresh_hits(path, "zebra crossing", conversation_id="c", reader_labels=[])
    mf.close()


def test_readers_with_different_labels_in_one_process_get_their_own_statistics(tmp_path):
    path = tmp_path / "m.db"
    mf = _open(path)
    conv = _fill(mf)
    for i in range(30):
        conv.append({"role": "user", "content": f"crossing {i} by the board", "labels": ["board"]})
    for i in range(30):
        conv.append({"role": "user", "content": f"crossing {i} legal lion", "labels": ["legal"]})
    readers = [None, [], ["board"], ["legal"], ["board", "legal"], ["other"]]
    for _ in range(2):  # the second round reads what the first kept
        for labels in readers:
            kw = dict(conversation_id="c", reader_labels=labels)
            for q in QUERIES + ["crossing board", "legal lion crossing"]:
                assert _hits(mf, q, **kw) == _fresh_hits(path, q, **kw), (labels, q)
    mf.close()


def test_other_processes_appending_and_erasing_between_searches(tmp_path):
    path = tmp_path / "m.db"
    mf = _open(path)
    _fill(mf)
    _same_as_fresh(mf, path, conversation_id="c")
    _in_other_process(path, """
        c = mf.conversation("c", namespace="n")
        ids = c.append_many([{"role": "user", "content": "zebra crossing crossing %d" % i} for i in range(40)],
                            compact=False)
        mf.erase(turn_ids=list(ids)[:10])
    """)
    _same_as_fresh(mf, path, conversation_id="c")
    _same_as_fresh(mf, path)
    _in_other_process(path, """
        c = mf.conversation("c", namespace="n")
        c.append_many([{"role": "user", "content": "Zoë traversée zèbre crossing %d" % i} for i in range(40)],
                      compact=False)
    """)
    for q in QUERIES + ["zèbre traversée", "zebre", "Zoë crossing"]:
        assert _hits(mf, q, conversation_id="c") == _fresh_hits(path, q, conversation_id="c"), q
    mf.close()


def test_a_fork_searches_like_a_fresh_open(tmp_path):
    path = tmp_path / "m.db"
    mf = _open(path)
    conv = _fill(mf)
    _same_as_fresh(mf, path, conversation_id="c")
    fork = conv.fork("f", at=SMALL_SCOPE - 10)
    fork.append_many([{"role": "user", "content": f"zebra crossing fork {i}"} for i in range(30)], compact=False)
    conv.append_many([{"role": "user", "content": f"crossing parent {i}"} for i in range(30)], compact=False)
    for cid in ("c", "f"):
        _same_as_fresh(mf, path, conversation_id=cid)
    _same_as_fresh(mf, path)
    mf.close()


def test_a_search_inside_a_callers_transaction_sees_its_own_writes(tmp_path):
    path = tmp_path / "m.db"
    mf = _open(path)
    conv = _fill(mf)
    _same_as_fresh(mf, path, conversation_id="c")
    with mf.storage.transaction():
        new = conv.append({"role": "user", "content": "crossing crossing crossing zebra inside"})
        inside = _hits(mf, "zebra crossing", conversation_id="c")
    assert _hits(mf, "zebra crossing", conversation_id="c") == _fresh_hits(path, "zebra crossing", conversation_id="c")
    assert new in [i for _, i, _ in _hits(mf, "zebra crossing", conversation_id="c")]
    assert inside[0][1] == new or new in [i for _, i, _ in inside]
    mf.close()


def test_more_query_words_than_the_cache_holds(tmp_path):
    from memfold.memory.search import POSTINGS_CACHED_TERMS

    path = tmp_path / "m.db"
    mf = _open(path)
    conv = mf.conversation("c", namespace="n")
    words = [f"w{i}x" for i in range(POSTINGS_CACHED_TERMS + 200)]
    conv.append_many([{"role": "user", "content": " ".join(words[i % len(words)] for i in range(k, k + 7))}
                      for k in range(SMALL_SCOPE + 100)], compact=False)
    queries = [" ".join(words[j:j + 60]) for j in range(0, len(words), 60)]
    for q in queries:
        _hits(mf, q, conversation_id="c")
    conv.append_many([{"role": "user", "content": " ".join(words[::37])} for _ in range(5)], compact=False)
    kept = mf.searcher._doc_stats["turn"].postings
    assert len(kept) <= POSTINGS_CACHED_TERMS
    for q in queries[:3] + queries[-3:] + [" ".join(words[::37])]:
        assert _hits(mf, q, conversation_id="c") == _fresh_hits(path, q, conversation_id="c")
    mf.close()


# --- 2. the time prior's argument -----------------------------------------------------------------

@pytest.mark.parametrize("value", [-1, -0.5, math.nan, math.inf, "0.5", True, False, None, [0.1]])
def test_a_bad_time_weight_is_refused_naming_it(tmp_path, value):
    mf = _open(tmp_path / "m.db")
    conv = mf.conversation("c", namespace="n")
    conv.append({"role": "user", "content": "I painted a sunrise yesterday"})
    state = mf.db.execute("SELECT count(*) FROM events").fetchone()
    with pytest.raises(InvalidInput, match="time_weight"):
        mf.search("When did I paint a sunrise?", time_weight=value, mode="bm25")
    assert mf.db.execute("SELECT count(*) FROM events").fetchone() == state
    assert mf.search("When did I paint a sunrise?", time_weight=0.5, mode="bm25")
    mf.close()


# --- 3. the round-8 phrasing families: small talk in their shapes ---------------------------------

def _records_of(tmp_path, text):
    with _open(tmp_path / "p.db") as mf:
        mf.conversation("c", namespace="n").append({"role": "user", "content": text})
        return [(r.kind, r.text) for r in mf.protected.active_for("c")]


#: small talk that round 8's families made protected records (none was one at e9fa801, before round 8)
ROUND8_FALSE_RECORDS = [
    "Plan: pizza tonight lol",                                       # policy_state (plan label)
    "Plan for tonight: pizza and a movie lol",                       # policy_state
    "Our plan for Saturday: sleep in lol",                           # policy_state
    "My plan: do nothing this weekend haha",                         # policy_state
    "Schedule: nap, snack, nap.",                                    # policy_state
    "Agenda for today: nothing lol",                                 # policy_state
    "Route: home, couch, bed.",                                      # policy_state
    "It's been agreed that Friday is the best day of the week haha",  # policy_state (decision)
    "So that's settled, we're friends now lol",                      # policy_state (decision)
    "Let's settle this: cats are better than dogs.",                 # policy_state (decision)
    "Deadline for the cake: whenever haha",                          # deadline
    "Refrain from laughing, please lol",                             # constraint (prohibition)
]


@pytest.mark.parametrize("text", ROUND8_FALSE_RECORDS)
def test_round8_shapes_in_small_talk_make_no_protected_record(tmp_path, text):
    assert _records_of(tmp_path, text) == []


@pytest.mark.parametrize("text", [
    "Manager here. How's your weekend?", "Manager here, just saying hi.", "Doctor here, how are you doing?",
    "Per my mum, the cake was amazing.", "According to Sam, the film is great.", "We only live once!",
    "Only you would say that!", "Just look at this sunset!", "Got until Friday to decide what to wear lol",
    "Evidence: I ate all the cookies lol", "Context: my dog ate my homework lol", "Before dinner, I went for a walk.",
    "Prior to this job I was a chef.", "Customers only, the sign said lol", "My cat is now live on Instagram lol",
    "Signed off for the weekend, see you Monday!", "We're going to have so much fun!", "Every cat needs a nap.",
])
def test_small_talk_that_held(tmp_path, text):
    assert _records_of(tmp_path, text) == []


def _rep(unit, n=50_000):
    return (unit * (n // len(unit) + 1))[:n]


@pytest.mark.parametrize("unit", ["plan ", ",", "- only the customer\n", "before ", "a", "before 1,",
                                  "only once a ", "é’ "])
def test_a_50kb_pathological_turn_makes_no_record(tmp_path, unit):
    """Speed is measured by a script (the report); here the output: a 50 KB turn of one repeated
    shape is stored whole and makes no protected record."""
    with _open(tmp_path / "p.db") as mf:
        conv = mf.conversation("c", namespace="n")
        tid = conv.append({"role": "user", "content": _rep(unit)})
        assert mf.archive.get(tid).content == _rep(unit)
        assert [r.text[:40] for r in mf.protected.active_for("c")] == []


@pytest.mark.parametrize("text", [_rep("Plan: "), "Plan: " + _rep("x "), "Deadline for the launch: " + _rep("x "),
                                  "Never share the " + _rep("x ")])
def test_a_run_on_paste_makes_no_huge_protected_record(tmp_path, text):
    assert all(len(t) <= 2_000 for _, t in _records_of(tmp_path, text))


# --- 4. many processes opening one fresh file -------------------------------------------------------

_OPENER = r"""
import sys, time
from memfold import MemFold, LogicalClock
path, me = sys.argv[1], sys.argv[2]
print("ready", flush=True)
start = float(sys.stdin.readline())
while time.time() < start:
    pass
mf = MemFold(path, clock=LogicalClock(), token_counter="words", embedder=None, secrets="off", preload_embedder=False)
mf.conversation("c" + me, namespace="n").append({"role": "user", "content": "hello from " + me})
mf.close()
"""


def test_a_dozen_processes_open_a_fresh_file_at_once(tmp_path):
    import time

    # one race; the deterministic case is tests/test_concurrency.py's rollback-mode writer
    path = tmp_path / "fresh.db"
    procs = [subprocess.Popen([sys.executable, "-c", _OPENER, str(path), str(i)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(12)]
    # every process imported before the race starts (round 14: each says so, then all are given
    # one start time, where a start 3 s ahead was fixed up front and the early ones spun until then)
    said = [p.stdout.readline().strip() for p in procs]
    assert said == ["ready"] * 12, [p.communicate(timeout=300)[1][-500:] for p in procs]
    start = repr(time.time() + 0.2) + "\n"
    for p in procs:
        p.stdin.write(start)
        p.stdin.flush()
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 12, [e.strip().splitlines()[-1:] for e in errors if e.strip()]
    with _open(path) as mf:
        assert mf.db.execute("SELECT count(*) FROM turns").fetchone() == (12,)
        assert mf.db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_kept_counts_after_appends_of_odd_ascii_and_unicode_texts(tmp_path):
    path = tmp_path / "m.db"
    mf = _open(path)
    conv = _fill(mf)
    queries = ["zebra crossing", "crossing2026 zebra", "ZEBRA_CROSSING", "straße zebra", "İstanbul crossing",
               "zebra*", "cross", "日本 zebra", "crossingcrossing"]
    for q in queries:
        _hits(mf, q, conversation_id="c")
    odd = ["zebra\tcrossing\r\nZEBRA", "ZEBRA_crossing zebra-crossing zebra.crossing", "crossing2026 zebra2026 2026",
           "x" * 300 + " crossing", "crossingcrossing crossing'crossing", "zebra\u00a0crossing\u2003zebra",
           "straße STRASSE zebra", "İstanbul ıstanbul crossing", "日本 zebra 日本語", "zebra 🦓 crossing",
           "ZEBRA CROSSING " * 50]
    ascii_only = [t for t in odd if t.isascii()] + ["a\x7fzebra\x1bcrossing"]
    for batch in (ascii_only, [t for t in odd if not t.isascii()]):  # ASCII texts are split in Python
        _in_other_process(path, f"""
            c = mf.conversation("c", namespace="n")
            for t in {batch!r}:
                c.append({{"role": "user", "content": t}})
        """)
        for q in queries:
            assert _hits(mf, q, conversation_id="c") == _fresh_hits(path, q, conversation_id="c"), q
            assert _hits(mf, q) == _fresh_hits(path, q), q
    mf.close()


def test_threads_with_different_readers_while_another_process_appends(tmp_path):
    import threading

    path = tmp_path / "m.db"
    mf = _open(path)
    conv = _fill(mf)
    for i in range(20):
        conv.append({"role": "user", "content": f"crossing board zebra {i}", "labels": ["board"]})
    writer = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import memfold
        from memfold import LogicalClock
        mf = memfold.MemFold({str(path)!r}, clock=LogicalClock(), token_counter="words", embedder=None,
                             secrets="off", preload_embedder=False)
        c = mf.conversation("c", namespace="n")
        for i in range(60):
            c.append({{"role": "user", "content": "zebra crossing lion %d" % i,
                       "labels": ["board"] if i % 3 == 0 else []}})
        mf.close()
    """)])
    errors = []

    def reader(labels):
        try:
            while writer.poll() is None:
                for q in QUERIES:
                    _hits(mf, q, conversation_id="c", reader_labels=labels)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=reader, args=(labels,)) for labels in (None, [], ["board"])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert writer.returncode == 0 and errors == []
    for labels in (None, [], ["board"]):
        for q in QUERIES:
            kw = dict(conversation_id="c", reader_labels=labels)
            assert _hits(mf, q, **kw) == _fresh_hits(path, q, **kw), (labels, q)
    mf.close()


def test_a_search_inside_a_rolled_back_transaction_leaves_nothing_stale(backend_target):
    """A search inside a caller's transaction added its uncommitted turns to the in-memory statistics
    (``_Docs``, ``mark``); after a rollback SQLite hands the same id to the next turn, whose length and
    counts were then the rolled-back text's (PostgreSQL: a length of a turn that never existed), so
    rankings differed from a fresh open until the process restarted. Fixed: only committed rows are
    kept; a search inside a transaction ranks with a copy (round 10)."""
    path = backend_target
    mf = _open(path)
    conv = _fill(mf)
    _same_as_fresh(mf, path, conversation_id="c")
    with pytest.raises(RuntimeError):
        with mf.storage.transaction():
            gone = conv.append({"role": "user", "content": "crossing crossing crossing zebra rolled back"})
            inside = _hits(mf, "zebra crossing", conversation_id="c")
            assert inside[0][1] == gone  # the transaction's own turn is searched inside it
            raise RuntimeError("roll back")
    conv2 = mf.conversation("c", namespace="n")
    new = conv2.append({"role": "user", "content": "lion lion lion river after the rollback"})
    got = _hits(mf, "lion river", conversation_id="c")
    assert new in [i for _, i, _ in got]
    assert got == _fresh_hits(path, "lion river", conversation_id="c")
    _same_as_fresh(mf, path, conversation_id="c")
    mf.close()


def test_a_rolled_back_turns_speaker_and_time_do_not_stay_in_the_priors(backend_target):
    """The turn facets (time, speaker, session: the recall priors) read inside a caller's
    transaction are not kept either: the rolled-back turn was by "Zed", the next turn (same id on
    SQLite) by nobody, and a question naming Zed must rank as a fresh open ranks it."""
    path = backend_target
    mf = _open(path)
    conv = _fill(mf)
    with pytest.raises(RuntimeError):
        with mf.storage.transaction():
            conv.append({"role": "user", "name": "Zed", "content": "Zed here, the zebra crossing is closed"})
            _hits(mf, "what did Zed say about the zebra crossing", conversation_id="c")
            raise RuntimeError("roll back")
    new = mf.conversation("c", namespace="n").append({"role": "user", "content": "the zebra crossing is open"})
    for q in ("what did Zed say about the zebra crossing", "zebra crossing"):
        got = _hits(mf, q, conversation_id="c")
        assert new in [i for _, i, _ in got]
        assert got == _fresh_hits(path, q, conversation_id="c"), q
    mf.close()


class _CountingEmbedder(HashingEmbedder):
    """The hashing embedder (same model id, same vectors), remembering every text it embedded."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed_batch(self, texts):
        self.texts.extend(texts)
        return super().embed_batch(texts)


@pytest.fixture(params=["sqlite", "postgres", "postgres-no-pgvector"])
def dense_target(request, tmp_path):
    """A database on each vector store: SQLite's in-memory index, PostgreSQL with pgvector (nothing
    kept in memory) and without it (the in-process matrix)."""
    if request.param == "sqlite":
        return tmp_path / "m.db"
    url = request.getfixturevalue("pg_url")
    if request.param == "postgres-no-pgvector":
        url += ("&" if "?" in url else "?") + "pgvector=off"
    return url


def _open_dense(target, embedder="hashing"):
    return memfold.MemFold(target, clock=LogicalClock(), token_counter="words", embedder=embedder,
                           secrets="off", preload_embedder=False)


def _dense(mf, query, limit=5):
    return [(h.id, round(h.score, 6)) for h in mf.search(query, conversation_id="c", mode="dense", limit=limit)]


def _fresh_dense(target, query, limit=5):
    fresh = _open_dense(target)
    try:
        return _dense(fresh, query, limit)
    finally:
        fresh.close()


def _river(mf, n=150):
    conv = mf.conversation("c", namespace="n")
    conv.append_many([{"role": "user", "content": f"filler line {i} about the river"} for i in range(n)],
                     compact=False)
    mf.search("river", conversation_id="c")  # every vector stored, the scan marks and the kept index loaded
    return conv


def test_a_dense_search_after_a_rolled_back_transaction_finds_the_next_turn(dense_target):
    """A hybrid search inside a caller's transaction embedded its uncommitted turn and moved the
    scan mark past it; after the rollback SQLite hands the same id to the next turn, which then
    never got a vector in this process (dense mode missed it, a fresh open found it). Fixed in
    round 10: marks move only outside a caller's transaction, and what the vector store reads
    inside one is used for that search only."""
    mf = _open_dense(dense_target)
    conv = _river(mf)
    with pytest.raises(RuntimeError):
        with mf.storage.transaction():
            gone = conv.append({"role": "user", "content": "zebra zebra zebra crossing rolled back"})
            assert _dense(mf, "zebra zebra crossing")[0][0] == gone  # its own turn, searched inside it
            mf.search("zebra crossing", conversation_id="c")
            raise RuntimeError("roll back")
    new = mf.conversation("c", namespace="n").append({"role": "user", "content": "lion lion savannah after rollback"})
    got = _dense(mf, "lion savannah")
    want = _fresh_dense(dense_target, "lion savannah")
    assert want[0][0] == new
    assert got == want
    assert _dense(mf, "zebra zebra crossing") == _fresh_dense(dense_target, "zebra zebra crossing")
    mf.close()


def test_a_committed_turn_embedded_inside_a_rolled_back_transaction_gets_its_vector_again(dense_target):
    """A committed turn without a vector yet, embedded by a search inside a caller's transaction
    that rolls back: its vector goes with the rollback, and the next search embeds it again (the
    scan mark had passed it: it never got a vector in this process, on every backend)."""
    mf = _open_dense(dense_target)
    conv = _river(mf)
    kept = conv.append({"role": "user", "content": "heron heron heron by the weir"})
    with pytest.raises(RuntimeError):
        with mf.storage.transaction():
            assert _dense(mf, "heron weir")[0][0] == kept
            raise RuntimeError("roll back")
    got = _dense(mf, "heron weir")
    assert got[0][0] == kept
    assert got == _fresh_dense(dense_target, "heron weir")
    mf.close()


def test_a_rolled_back_vector_is_never_kept_under_an_id_a_later_turn_gets(dense_target):
    """Two turns appended and searched inside a transaction that rolls back, then two turns with
    the same ids (on SQLite), the second with the same text as before: the first one's
    rolled-back vector must not stay in memory under its id (SQLite also reuses the vectors'
    row numbers, so the newest stored row looks unchanged)."""
    mf = _open_dense(dense_target)
    conv = _river(mf)
    with pytest.raises(RuntimeError):
        with mf.storage.transaction():
            first = conv.append({"role": "user", "content": "zebra zebra zebra crossing rolled back"})
            conv.append({"role": "user", "content": "otter otter in the reeds"})
            assert _dense(mf, "zebra zebra crossing")[0][0] == first
            raise RuntimeError("roll back")
    conv = mf.conversation("c", namespace="n")
    new = conv.append({"role": "user", "content": "lion lion savannah after rollback"})
    conv.append({"role": "user", "content": "otter otter in the reeds"})
    _dense(mf, "otter reeds")  # both new turns embedded in one batch
    for q in ("lion savannah", "zebra zebra crossing", "otter reeds"):
        assert _dense(mf, q) == _fresh_dense(dense_target, q), q
    assert _dense(mf, "lion savannah")[0][0] == new
    mf.close()


def test_a_turn_embedded_inside_a_committed_transaction_is_not_embedded_again(dense_target):
    """The other way out: the transaction commits, with the vector its search stored; the next
    search finds the turn by its vector without embedding it again, as a fresh open does."""
    embedder = _CountingEmbedder()
    mf = _open_dense(dense_target, embedder)
    conv = _river(mf)
    text = "kingfisher kingfisher diving at dawn"
    with mf.storage.transaction():
        kept = conv.append({"role": "user", "content": text})
        assert _dense(mf, "kingfisher dawn")[0][0] == kept
    assert embedder.texts.count(text) == 1
    got = _dense(mf, "kingfisher diving")
    assert got[0][0] == kept
    assert got == _fresh_dense(dense_target, "kingfisher diving")
    mf.search("kingfisher diving at dawn", conversation_id="c")  # hybrid: nothing pending either
    assert embedder.texts.count(text) == 1
    mf.close()


def test_a_search_inside_a_committed_transaction_then_matches_a_fresh_open(backend_target):
    """The other way out of the transaction: its turns commit, and the next search (which reads
    them into the kept statistics then) ranks as a fresh open does."""
    path = backend_target
    mf = _open(path)
    conv = _fill(mf)
    with mf.storage.transaction():
        kept = conv.append({"role": "user", "name": "Zed", "content": "crossing crossing crossing zebra kept"})
        assert _hits(mf, "zebra crossing", conversation_id="c")[0][1] == kept
    assert _hits(mf, "zebra crossing", conversation_id="c")[0][1] == kept
    _same_as_fresh(mf, path, conversation_id="c")
    _same_as_fresh(mf, path)
    mf.close()


#: small talk that round 8's attribute families read as a fact about the user (none did at e9fa801; round 10's
#: vetoes, family ``attr_small_talk_vetoes_r10``, read none of them again)
ROUND8_FALSE_FACTS = [
    "I changed my mind, it's fine.",            # user.preferred.mind = fine (attr_switch_forms_r8)
    "Just switched my phone to silent lol",     # user.preferred.phone = 'silent lol'
    "Switched my brain to sleep mode lol",      # user.preferred.brain = 'sleep mode lol'
    "Moved my meeting to Friday",               # user.preferred.meeting = Friday (a one-off, no preference)
    "Lol, that's my favourite joke",            # user.favourite.joke = 'Lol' (attr_thats_my)
    "I gave up halfway lol",                    # retire 'halfway lol' (attr_no_longer_forms_r8)
    "I quit caring lol",                        # retire 'caring lol'
    "I moved over from the couch to the bed lol",  # write 'the bed lol'
]


@pytest.mark.parametrize("text", ROUND8_FALSE_FACTS)
def test_round8_attribute_shapes_in_small_talk_make_no_fact(text):
    from memfold.consolidation.extractors.attributes import attribute_statements

    assert attribute_statements(text) == []


def test_laughter_is_not_part_of_an_attribute_name():
    from memfold.consolidation.extractors.attributes import attribute_statements

    assert [s.key for s in attribute_statements("Sleep, that's my favourite hobby haha")] == ["user.favourite.hobby"]
