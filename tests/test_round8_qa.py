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
