"""A search keeps the query words' counts of a large scope between calls (issue 18, point 1):
``_Docs.postings``, extended by the items written since (``FullTextStorage.term_frequencies_after``)
and dropped with the statistics on erasure. What is kept must never change a ranking: every
search here is compared with the same search from a fresh MemFold on the same file (which keeps
nothing), hits and scores. Real SQLite files, no mocks."""

from __future__ import annotations

import memfold
from memfold import LogicalClock
from memfold.memory.search import SMALL_SCOPE

QUERIES = ["zebra river", "lion river crossing", "café zebra", "Zoë lion", "filler zebra"]


def _open(path):
    return memfold.MemFold(path, clock=LogicalClock(), token_counter="words", embedder=None, secrets="off",
                           preload_embedder=False)


def _hits(mf, query, **kw):
    return [(h.kind, h.id, round(h.score, 9)) for h in mf.search(query, limit=10, mode="bm25", **kw)]


def _same_as_fresh(mf, path, **kw):
    fresh = _open(path)
    try:
        for q in QUERIES:
            assert _hits(mf, q, **kw) == _hits(fresh, q, **kw), q
    finally:
        fresh.close()


def _fill(mf, n=SMALL_SCOPE + 50):
    conv = mf.conversation("c", namespace="n")
    texts = []
    for i in range(n):
        texts.append(["the zebra ran to the river", "a zebra and a lion", "the river is wide",
                      f"filler line {i}", "lions by the river crossing"][i % 5])
    conv.append_many([{"role": "user", "content": t} for t in texts], compact=False)
    return conv


def test_kept_counts_follow_appends_of_any_text(tmp_path):
    path = tmp_path / "m.db"
    mf = _open(path)
    conv = _fill(mf)
    _same_as_fresh(mf, path, conversation_id="c")
    kept = mf.searcher._doc_stats["turn"].postings
    assert ("zebra", True) in kept and ("river", True) in kept  # the large scope's words are kept
    # ASCII turns (split in Python on SQLite), then turns the index folds (walked in the index)
    conv.append({"role": "user", "content": "ZEBRA zebras at the RIVER, river-side"})
    _same_as_fresh(mf, path, conversation_id="c")
    conv.append({"role": "user", "content": "Zoë's café by the river: zébra, Lion"})
    conv.append({"role": "assistant", "content": "a zebra_lion hybrid"})
    _same_as_fresh(mf, path, conversation_id="c")
    covered = kept[("zebra", True)][0]
    assert covered == mf.searcher._doc_stats["turn"].n  # extended to every item known
    other = _open(path)  # another writer on the file: its turns are counted too
    other.conversation("c", namespace="n").append_many(
        [{"role": "user", "content": f"zebra {i} river"} for i in range(30)], compact=False)
    other.conversation("d", namespace="n").append({"role": "user", "content": "zebra zebra zebra"})
    other.close()
    _same_as_fresh(mf, path, conversation_id="c")
    _same_as_fresh(mf, path, conversation_id="d")
    _same_as_fresh(mf, path)
    mf.close()


def test_an_erased_turn_leaves_the_kept_counts(tmp_path):
    path = tmp_path / "m.db"
    mf = _open(path)
    conv = _fill(mf)
    rare = conv.append({"role": "user", "content": "crossing crossing crossing the zebra river"})
    before = _hits(mf, "zebra crossing", conversation_id="c")
    assert before[0][1] == rare
    mf.erase(turn_ids=[rare])
    after = _hits(mf, "zebra crossing", conversation_id="c")
    assert rare not in [i for _, i, _ in after]
    fresh = _open(path)
    assert after == _hits(fresh, "zebra crossing", conversation_id="c")  # its counts weigh nowhere
    fresh.close()
    kept = mf.searcher._doc_stats["turn"].postings
    assert all(rare not in mf.searcher._doc_stats["turn"].ids[pos].tolist() for _, pos, _ in kept.values())
    _same_as_fresh(mf, path, conversation_id="c")
    mf.close()


def test_an_erasure_by_another_process_drops_the_kept_counts(tmp_path):
    path = tmp_path / "m.db"
    mf = _open(path)
    conv = _fill(mf)
    rare = conv.append({"role": "user", "content": "crossing crossing crossing the zebra river"})
    assert _hits(mf, "zebra crossing", conversation_id="c")[0][1] == rare
    other = _open(path)
    other.erase(turn_ids=[rare])
    other.close()
    _same_as_fresh(mf, path, conversation_id="c")
    assert rare not in [i for _, i, _ in _hits(mf, "zebra crossing", conversation_id="c")]
    mf.close()
