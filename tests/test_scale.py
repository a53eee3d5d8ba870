"""Memory that stays fast as it grows (issue 18): what the speed work must not change.

Speed itself is measured by ``bench/bench_scale.py``; these tests check behaviour: the background
model load, that BM25-only use and ``memfold --help`` never import torch, that the in-memory
vector index follows writes without reloading, that scoped search ranks with the scope's own
statistics and only ever returns visible items, and the bounds on card chains.
"""

from __future__ import annotations

import math
import subprocess
import sys
import threading

import numpy as np
import pytest

from memfold import Embedder, HashingEmbedder, LogicalClock, MemFold, WindowSettings


class SlowLoadEmbedder(HashingEmbedder):
    """A hashing embedder whose ``preload`` records the thread it ran in and waits for a signal."""

    def __init__(self) -> None:
        super().__init__(64)
        self.release = threading.Event()
        self.loaded_in: list[str] = []

    def preload(self) -> None:
        self.release.wait(30)
        self.loaded_in.append(threading.current_thread().name)


def test_the_embedder_loads_in_a_background_thread_when_memfold_opens(tmp_path):
    emb = SlowLoadEmbedder()
    mf = MemFold(tmp_path / "a.db", clock=LogicalClock(), token_counter="words", embedder=emb,
                 preload_embedder=True)
    assert not mf.wait_for_embedder(timeout=0.01)  # still loading: the constructor did not wait
    emb.release.set()
    assert mf.wait_for_embedder(timeout=30)
    assert emb.loaded_in == ["memfold-embedder-preload"]
    mf.close()


def test_the_background_load_is_off_with_the_setting(tmp_path):
    emb = SlowLoadEmbedder()
    emb.release.set()
    mf = MemFold(tmp_path / "b.db", clock=LogicalClock(), token_counter="words", embedder=emb,
                 preload_embedder=False)
    assert mf.wait_for_embedder(timeout=0) and emb.loaded_in == []
    mf.close()


def test_a_failed_background_load_is_kept_and_the_first_embedding_tries_again(tmp_path):
    class Broken(HashingEmbedder):
        def preload(self) -> None:
            raise RuntimeError("no model here")

    mf = MemFold(tmp_path / "c.db", clock=LogicalClock(), token_counter="words", embedder=Broken(32),
                 preload_embedder=True)
    assert mf.wait_for_embedder(timeout=30)
    assert isinstance(mf.preload_error, RuntimeError)
    conv = mf.conversation("t")
    conv.append({"role": "user", "content": "the parcel went to Lisbon"})
    assert [h.kind for h in mf.search("parcel Lisbon", conversation_id="t")] == ["turn"]
    mf.close()


def _torch_after(code: str, tmp_path) -> str:
    import os

    env = {**os.environ, "MEMFOLD_PRELOAD_EMBEDDER": "1"}  # the background load on, as a user has it
    full = code + "\nimport sys; print('torch' in sys.modules, 'sentence_transformers' in sys.modules)"
    return subprocess.run([sys.executable, "-c", full], capture_output=True, text=True, check=True, env=env,
                          cwd=tmp_path).stdout.strip().splitlines()[-1]


def test_help_and_bm25_only_use_never_import_torch(tmp_path):
    help_code = ("from click.testing import CliRunner\nfrom memfold.cli import cli\n"
                 "r = CliRunner().invoke(cli, ['--help']); assert r.exit_code == 0, r.output\n"
                 "r = CliRunner().invoke(cli, ['search', '--help']); assert r.exit_code == 0, r.output")
    assert _torch_after(help_code, tmp_path) == "False False"
    bm25_code = ("import memfold\nmf = memfold.MemFold('x.db', embedder=None, token_counter='words')\n"
                 "c = mf.conversation('t'); c.append({'role': 'user', 'content': 'refund for ORD-7 please'})\n"
                 "assert mf.search('refund ORD-7', conversation_id='t')\n"
                 "assert c.search('refund')\nc.context(); mf.wait_for_embedder(); mf.close()")
    assert _torch_after(bm25_code, tmp_path) == "False False"
    mode_code = ("import memfold\nmf = memfold.MemFold('y.db', token_counter='words', preload_embedder=False)\n"
                 "c = mf.conversation('t'); c.append({'role': 'user', 'content': 'refund for ORD-7 please'})\n"
                 "assert mf.search('refund ORD-7', conversation_id='t', mode='bm25'); mf.close()")
    assert _torch_after(mode_code, tmp_path) == "False False"


# -- the in-memory vector index ---------------------------------------------------------------
def test_the_vector_index_reads_only_new_vectors_after_the_first_search(tmp_path):
    mf = MemFold(tmp_path / "v.db", clock=LogicalClock(), token_counter="words", embedder="hashing")
    conv = mf.conversation("t")
    conv.append_many([{"role": "user", "content": f"parcel {i} went to city {i}"} for i in range(50)])
    mf.search("parcel", conversation_id="t")
    assert mf.storage.vectors.in_memory("turn") == 50
    seen: list[str] = []
    mf.storage.db.conn.set_trace_callback(seen.append)
    try:
        conv.append({"role": "user", "content": "the Lisbon parcel is lost"})
        hits = mf.search("Lisbon parcel lost", conversation_id="t", limit=3)
    finally:
        mf.storage.db.conn.set_trace_callback(None)
    assert hits[0].text == "the Lisbon parcel is lost"  # found right after the append
    vector_reads = [s for s in seen if "FROM embeddings" in s and "vector" in s.split("FROM")[0]]
    probes = [s for s in vector_reads if s.endswith("LIMIT 1") or "WHERE rowid = " in s]  # one row, by key
    ranges = [s for s in vector_reads if s not in probes]
    assert len(ranges) == 1 and "rowid >" in ranges[0], vector_reads  # only what was written since
    assert mf.storage.vectors.in_memory("turn") == 51
    mf.close()


def test_a_first_load_of_many_vectors_reads_them_in_blocks_and_keeps_room_for_appends(tmp_path):
    """More vectors than one read block (4,096): every one is in the index and ranked, and the
    matrix was sized once for them plus headroom, so the next appends do not copy it."""
    mf = MemFold(tmp_path / "many.db", clock=LogicalClock(), token_counter="words", embedder="hashing")
    conv = mf.conversation("t")
    for start in range(0, 5_000, 500):
        conv.append_many([{"role": "user", "content": f"note {i} about topic{i}"} for i in range(start, start + 500)])
    mf.index_embeddings()
    reader = MemFold(tmp_path / "many.db", token_counter="words", embedder="hashing")  # a fresh index
    hits = reader.search("topic4321", conversation_id="t", mode="dense", limit=1)
    assert hits[0].text == "note 4321 about topic4321"
    assert reader.storage.vectors.in_memory("turn") == 5_000
    matrix = reader.storage.vectors._indexes["turn"].vectors  # the index's array (not an API)
    assert len(matrix) >= 5_000 + 5_000 // 8
    reader.conversation("t").append({"role": "user", "content": "the newest note"})
    assert reader.search("the newest note", conversation_id="t", mode="dense", limit=1)[0].text == "the newest note"
    assert reader.storage.vectors._indexes["turn"].vectors is matrix  # grown in place, not copied
    reader.close()
    mf.close()


def test_vectors_written_by_another_process_reach_a_running_index(tmp_path):
    path = tmp_path / "w.db"
    a = MemFold(path, clock=LogicalClock(), token_counter="words", embedder="hashing")
    b = MemFold(path, token_counter="words", embedder="hashing")
    a.conversation("t").append({"role": "user", "content": "alpha bravo"})
    assert [h.text for h in a.search("alpha", conversation_id="t")] == ["alpha bravo"]
    b.conversation("t").append({"role": "user", "content": "charlie delta"})
    b.index_embeddings()
    assert [h.text for h in a.search("charlie delta", conversation_id="t", mode="dense", limit=1)] == ["charlie delta"]
    b.close()
    a.close()


def test_an_erased_turn_never_comes_back_from_the_in_memory_index(tmp_path):
    mf = MemFold(tmp_path / "e.db", clock=LogicalClock(), token_counter="words", embedder="hashing")
    conv = mf.conversation("t")
    ids = conv.append_many([{"role": "user", "content": "my card number is private"},
                            {"role": "assistant", "content": "noted about the card"}])
    assert mf.search("card number private", conversation_id="t", mode="dense")  # vectors now in memory
    mf.erase(turn_ids=[ids[0]])
    for mode in ("dense", "hybrid", "bm25"):
        assert ids[0] not in [h.id for h in mf.search("card number private", conversation_id="t", mode=mode)]
    mf.close()


def test_a_vector_stored_where_the_erased_newest_one_was_reaches_the_running_index(tmp_path):
    # SQLite gives a new row the number after the largest one left: once the newest vector is
    # erased, the next one takes its row number, which the index had already read up to
    mf = MemFold(tmp_path / "r.db", clock=LogicalClock(), token_counter="words", embedder="hashing")
    conv = mf.conversation("t")
    ids = conv.append_many([{"role": "user", "content": f"parcel {i} went to city {i}"} for i in range(5)])
    assert mf.search("parcel city", conversation_id="t", mode="dense")  # vectors now in memory
    mf.erase(turn_ids=[ids[-1]])
    conv.append({"role": "user", "content": "the Lisbon parcel is lost"})
    hits = mf.search("the Lisbon parcel is lost", conversation_id="t", mode="dense", limit=1)
    assert [h.text for h in hits] == ["the Lisbon parcel is lost"]
    assert mf.storage.vectors.in_memory("turn") == 5
    mf.close()


def test_vectors_replaced_by_another_process_reach_a_running_index(tmp_path):
    # another process clears and stores every vector again in the same order (a re-embedding):
    # same row numbers, same items, new vectors
    path = tmp_path / "x.db"
    a = MemFold(path, clock=LogicalClock(), token_counter="words", embedder="hashing")
    conv = a.conversation("t")
    ids = conv.append_many([{"role": "user", "content": t} for t in ("alpha bravo", "charlie delta")])
    assert [h.text for h in a.search("alpha bravo", conversation_id="t", mode="dense", limit=1)] == ["alpha bravo"]
    b = MemFold(path, token_counter="words", embedder="hashing")
    swapped = b.embeddings.matrix("turn")[1][::-1].copy()  # each turn gets the other's vector
    with b.storage.transaction():
        b.storage.vectors.clear()
        b.storage.vectors.set_model(b.embedder.model_id, swapped.shape[1])
        b.storage.vectors.put("turn", ids, swapped, model_id=b.embedder.model_id)
    b.close()
    hits = a.search("alpha bravo", conversation_id="t", mode="dense", limit=1)
    assert [h.text for h in hits] == ["charlie delta"]  # the vector stored now, not the one read before
    a.close()


# -- scoped BM25 --------------------------------------------------------------------------------
def _bm25_by_hand(docs: list[list[str]], query: list[str]) -> list[float]:
    n, avgdl = len(docs), sum(len(d) for d in docs) / len(docs)
    dfs = {q: sum(1 for x in docs if any(t.startswith(q) for t in x)) for q in query}  # documents holding q
    out = []
    for d in docs:
        score = 0.0
        for q in query:
            df = dfs[q]
            tf = sum(1 for t in d if t.startswith(q))
            if not df or not tf:
                continue
            idf = math.log((n - df + 0.5) / (df + 0.5))
            idf = idf if idf > 0 else 1e-6
            score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(d) / avgdl))
        out.append(score)
    return out


@pytest.mark.parametrize("filler", [0, 2_000])  # small scope (its own texts) and large (index occurrences)
def test_scoped_bm25_uses_the_scopes_own_statistics(tmp_path, filler):
    mf = MemFold(tmp_path / "s.db", clock=LogicalClock(), token_counter="words", embedder=None)
    other = mf.conversation("other")
    if filler:  # another conversation full of "lisbon": rare in the scope, common in the file
        other.append_many([{"role": "user", "content": f"lisbon lisbon note {i}"} for i in range(filler)],
                          compact=False)
    conv = mf.conversation("t")
    texts = ["the parcel to lisbon is late", "parcel parcel parcel tracking", "my parcel arrived broken today",
             "lisbon weather is nice", "nothing to see here"] * (1 if not filler else 400)
    ids = conv.append_many([{"role": "user", "content": t} for t in texts], compact=False)
    hits = mf.search("parcel lisbon", conversation_id="t", mode="bm25", limit=5, neighbour_weight=0.0,
                     session_weight=0.0, length_weight=0.0)  # BM25 alone: no neighbour support, no priors
    docs = [t.split() for t in texts]
    expected = _bm25_by_hand(docs, ["parcel", "lisbon"])
    best = sorted((i for i in range(len(texts)) if expected[i] > 0), key=lambda i: (-expected[i], ids[i]))[:5]
    assert [h.id for h in hits] == [ids[i] for i in best]
    top = max(expected)
    assert [round(h.score, 6) for h in hits] == [round(expected[i] / top, 6) for i in best]
    assert all(h.conversation_id == "t" for h in hits)
    mf.close()


def test_search_in_a_small_conversation_of_a_big_file_reads_only_its_scope(tmp_path):
    mf = MemFold(tmp_path / "b.db", clock=LogicalClock(), token_counter="words", embedder=None)
    big = mf.conversation("big")
    big.append_many([{"role": "user", "content": f"refund request {i} for order"} for i in range(3_000)],
                    compact=False)
    small = mf.conversation("small")
    small.append_many([{"role": "user", "content": t} for t in ("refund my order", "thanks", "order refund ok")],
                      compact=False)
    mf.search("refund order", conversation_id="small", mode="bm25")  # documents now in memory
    seen: list[str] = []
    mf.storage.db.conn.set_trace_callback(seen.append)
    try:
        hits = mf.search("refund order", conversation_id="small", mode="bm25")
    finally:
        mf.storage.db.conn.set_trace_callback(None)
    assert {h.text for h in hits} == {"refund my order", "order refund ok"}
    assert not [s for s in seen if "instances" in s]  # no file-wide occurrence list for a small scope
    mf.close()


# -- a small scope's words kept between searches (issue 18 point 1, round 6) --------------------
_KEPT_TEXTS = ["the parcel to Lisbon is late", "parcel parcel parcel tracking", "I painted the café wall",
               "painting with Zoë at the café", "lisbon weather is nice", "nothing to see here",
               "refund the parcel please", "the painter was late again"]
_KEPT_QUERIES = ["parcel lisbon", "painting", "cafe zoe", "late refund", "weather tracking nothing"]


def _bm25_reference(docs: list[tuple[list[str], int]], query: list[str]) -> list[float]:
    """BM25 by hand over ``(words, length)`` per item (an erased item keeps the length the
    search's statistics read, and has no words), prefix matching, the scope's own statistics."""
    n, avgdl = len(docs), sum(length for _, length in docs) / len(docs)
    out = []
    for words, length in docs:
        score = 0.0
        for q in query:
            df = sum(1 for w, _ in docs if any(t.startswith(q) for t in w))
            tf = sum(1 for t in words if t.startswith(q))
            if not df or not tf:
                continue
            idf = math.log((n - df + 0.5) / (df + 0.5))
            score += (idf if idf > 0 else 1e-6) * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / avgdl))
        out.append(score)
    return out


def _plain_bm25(mf_or_searcher, query: str, conversation_id: str) -> list[tuple[int, float]]:
    hits = mf_or_searcher.search(query, conversation_id=conversation_id, mode="bm25", limit=10, neighbour_weight=0.0,
                                 session_weight=0.0, speaker_weight=0.0, date_weight=0.0, length_weight=0.0)
    return [(h.id, h.score) for h in hits]


def _check_against_references(mf: MemFold, conversation_id: str, ids: list[int], texts: list[str],
                              erased: set[int]) -> None:
    from memfold.memory.search import HybridSearch, index_tokens, query_tokens

    # an erased turn leaves the scope: its words, and its share of the count and mean length
    # (round 7: a searcher's statistics are read anew after an erasure, in any process)
    kept = [(i, t) for i, t in zip(ids, texts) if i not in erased]
    ids, texts = [i for i, _ in kept], [t for _, t in kept]
    docs = [(index_tokens(t), len(index_tokens(t))) for t in texts]
    for query in _KEPT_QUERIES:
        got = _plain_bm25(mf, query, conversation_id)
        expected = _bm25_reference(docs, [t for t, _ in query_tokens(query)])
        best = sorted((k for k in range(len(ids)) if expected[k] > 0), key=lambda k: (-expected[k], ids[k]))[:10]
        assert [i for i, _ in got] == [ids[k] for k in best], query
        top = max(expected)
        assert [round(s, 9) for _, s in got] == [round(expected[k] / top, 9) for k in best], query
        # and exactly what a searcher that kept nothing gives (it reads every text now)
        assert got == _plain_bm25(HybridSearch(mf.storage), query, conversation_id), query


def _items_read(mf: MemFold, run) -> list[int]:
    """How many turns each ``items`` read of a search (``SELECT t.id, t.content ...``) asked for."""
    seen: list[str] = []
    mf.storage.db.conn.set_trace_callback(seen.append)
    try:
        run()
    finally:
        mf.storage.db.conn.set_trace_callback(None)
    return [s.split(" IN (")[1].count(",") + 1 for s in seen if s.startswith("SELECT t.id, t.content")]


def test_a_small_scopes_words_kept_between_searches_rank_as_its_texts_read_now(tmp_path):
    path = tmp_path / "k.db"
    mf = MemFold(path, clock=LogicalClock(), token_counter="words", embedder=None)
    mf.conversation("other").append_many([{"role": "user", "content": f"parcel lisbon painting {i}"}
                                          for i in range(30)], compact=False)  # in the file, not the scope
    conv = mf.conversation("t")
    texts = _KEPT_TEXTS * 4  # 32 turns: a small scope
    ids = conv.append_many([{"role": "user", "content": t} for t in texts], compact=False)
    _check_against_references(mf, "t", ids, texts, set())
    # nothing changed: no text of the scope is read again, only the hits (at most 10)
    reads = _items_read(mf, lambda: _plain_bm25(mf, "parcel lisbon", "t"))
    assert reads and max(reads) <= 10
    # an append: the new turn alone is read and split, and it ranks at once
    new = conv.append({"role": "user", "content": "Lisbon parcel lisbon parcel"})
    ids.append(new)
    texts.append("Lisbon parcel lisbon parcel")
    reads = _items_read(mf, lambda: _plain_bm25(mf, "weather", "t"))
    assert reads[0] == 1
    assert _plain_bm25(mf, "parcel lisbon", "t")[0][0] == new
    _check_against_references(mf, "t", ids, texts, set())
    # an erasure in this process: the turn's words leave the scope's statistics
    mf.erase(turn_ids=[new, ids[2]])
    _check_against_references(mf, "t", ids, texts, {new, ids[2]})
    assert new not in [i for i, _ in _plain_bm25(mf, "parcel lisbon", "t")]
    # an erasure by another process on the same file
    other = MemFold(path, token_counter="words", embedder=None)
    other.erase(turn_ids=[ids[0]])
    other.close()
    _check_against_references(mf, "t", ids, texts, {new, ids[2], ids[0]})
    # a fork sees its parent up to the fork point: a scope of its own
    fork = conv.fork("f", at=10)
    more = fork.append({"role": "user", "content": "zoe painted a parcel in lisbon"})
    fork_ids, fork_texts = ids[:10] + [more], texts[:10] + ["zoe painted a parcel in lisbon"]
    _check_against_references(mf, "f", fork_ids, fork_texts, {ids[2], ids[0]})
    _check_against_references(mf, "t", ids, texts, {new, ids[2], ids[0]})
    mf.close()


def test_kept_scope_words_count_like_splitting_the_texts_now():
    import random

    from memfold.memory.storage.rows import SearchItem
    from memfold.memory.search import _ScopeTerms, _small_scope_term_frequencies

    rnd = random.Random(3)
    vocab = ["parcel", "parcels", "paint", "painted", "painting", "café", "cafe", "Zoë", "zoe", "lisbon", "a",
             "foo_bar", "x9", "naïve", "late", "later", "lateral"]
    texts = {i: SearchItem(kind="turn", id=i, text=" ".join(rnd.choice(vocab) for _ in range(rnd.randint(0, 12))))
             for i in range(1, 61)}
    texts.pop(17)  # an item without a text (read as missing) has no words
    ids = list(range(1, 61))
    tokens = [(t, p) for t in ("parcel", "pa", "paint", "cafe", "zoe", "lat", "late", "bar", "x9", "naive", "q")
              for p in (True, False)]
    kept = _ScopeTerms()
    for start, end in ((0, 1), (1, 25), (25, 26), (26, 60)):  # built in pieces, as appends extend it
        kept.extend(ids[start:end], texts)
        now = _small_scope_term_frequencies(ids[:end], texts, tokens)
        for (token, prefix), tf in zip(tokens, now):
            at, counts = kept.frequencies(token, prefix)
            assert at.tolist() == np.flatnonzero(tf).tolist(), (token, prefix, end)
            assert counts.tolist() == tf[tf > 0].tolist(), (token, prefix, end)
    assert kept.occurrences == sum(len(t.text.split()) + t.text.count("_") for t in texts.values())


def test_a_search_inside_a_rolled_back_transaction_leaves_no_words_behind(tmp_path):
    mf = MemFold(tmp_path / "r.db", clock=LogicalClock(), token_counter="words", embedder=None)
    conv = mf.conversation("t")
    ids = conv.append_many([{"role": "user", "content": t} for t in _KEPT_TEXTS], compact=False)
    _check_against_references(mf, "t", ids, _KEPT_TEXTS, set())

    class Undo(Exception):
        pass

    with pytest.raises(Undo):
        with mf.storage.transaction():
            mf.erase(turn_ids=[ids[0]])
            assert ids[0] not in [i for i, _ in _plain_bm25(mf, "parcel lisbon", "t")]
            raise Undo
    _check_against_references(mf, "t", ids, _KEPT_TEXTS, set())  # the turn is back, and so are its words
    mf.close()


def test_the_small_scopes_kept_are_bounded(tmp_path):
    from memfold.memory import search as search_module

    mf = MemFold(tmp_path / "b.db", clock=LogicalClock(), token_counter="words", embedder=None)
    for c in range(search_module.SCOPE_TERMS_CACHED + 5):
        mf.conversation(f"c{c}").append({"role": "user", "content": f"parcel {c} to lisbon"})
        assert mf.search("parcel lisbon", conversation_id=f"c{c}", mode="bm25")
    assert len(mf.searcher._scope_terms) == search_module.SCOPE_TERMS_CACHED
    assert [h.text for h in mf.search("parcel lisbon", conversation_id="c0", mode="bm25")] == ["parcel 0 to lisbon"]
    mf.close()


def test_hits_of_a_reader_respect_labels_with_the_new_ranking(tmp_path):
    mf = MemFold(tmp_path / "l.db", clock=LogicalClock(), token_counter="words", embedder="hashing")
    conv = mf.conversation("t")
    conv.append_many([{"role": "user", "content": "the vault code is secret", "labels": ["hr"]},
                      {"role": "user", "content": "the vault is in the basement"}])
    for mode in ("bm25", "hybrid", "dense"):
        shown = [h.text for h in mf.search("vault", conversation_id="t", reader_labels=[], mode=mode)]
        assert "the vault code is secret" not in shown and "the vault is in the basement" in shown
    mf.close()


# -- protected channel de-duplication (point 5) -----------------------------------------------
def test_restated_standing_instructions_refresh_the_record_in_force(tmp_path):
    mf = MemFold(tmp_path / "p.db", clock=LogicalClock(), token_counter="words", embedder=None)
    conv = mf.conversation("t", namespace="acme")
    said = ["Never call me on the phone.", "Always reply in English.", "Don't share my address with anyone."]
    for i in range(30):
        conv.append({"role": "user", "content": said[i % 3] if i % 2 else "please " + said[i % 3].lower()})
        conv.append({"role": "assistant", "content": f"noted {i}"})
    active = mf.protected.active_for("t", namespace="acme")
    assert len(active) == len({r.text.lower().rstrip(".") for r in active}) <= 3
    assert all(len(r.metadata.get("restated_by", [])) >= 8 for r in active), [r.metadata for r in active]
    ctx = conv.context()
    assert ctx.sections["protected"] > 0
    conv.append({"role": "user", "content": "Never call me on the phone after 6pm."})  # a new instruction
    assert len(mf.protected.active_for("t", namespace="acme")) == len(active) + 1
    mf.close()


# -- no pathological chains (point 6) -------------------------------------------------------------
WORDS = ("order refund parcel Lisbon tracking invoice May June address email phone replacement warranty "
         "battery screen courier delayed approved denied manager ticket").split()


def _chatter(i: int) -> str:
    rnd = (i * 2654435761) % 2**32
    n = 8 + rnd % 17
    return " ".join(WORDS[(rnd >> (k % 24)) % len(WORDS)] + (str(i) if k == 3 else "") for k in range(n))


@pytest.mark.parametrize("budget", [2_000, 8_000])
def test_card_depth_cards_and_summarizer_calls_stay_bounded(tmp_path, budget):
    """The suite's size (1,500 turns appended one by one, 16 hot turns) shows the same bounds the
    benchmark measures at 100K turns (bench/bench_scale.py --chains): depth within
    ceil(log_fanin(turns)) + 3, stored cards within 2x the leaf folds, and at budgets >= 8,000 at
    most one summarizer call per 8 turns. Before absorbing roll-ups, budget 2,000 chained one
    level per leaf fold (depth ~90 here)."""
    from memfold.window.summarizers.extractive import ExtractiveSummarizer

    class Counting(ExtractiveSummarizer):
        calls = 0

        def summarize(self, items, depth, *, target_tokens=None):
            Counting.calls += 1
            return super().summarize(items, depth, target_tokens=target_tokens)

    settings = WindowSettings(budget_tokens=budget, output_reserve_tokens=budget // 8, hot_turns=16,
                              leaf_chunk_tokens=min(2_000, budget // 4), card_target_tokens=min(150, budget // 40),
                              rollup_fanin=4)
    mf = MemFold(tmp_path / "c.db", clock=LogicalClock(), token_counter="words", embedder=None, window=settings,
                 summarizer=Counting())
    conv = mf.conversation("chain")
    turns = 1_500
    for i in range(turns):
        conv.append({"role": "user" if i % 2 == 0 else "assistant", "content": _chatter(i)})
    by_depth = mf.storage.cards.count_by_depth()
    leaf_folds = len(mf.storage.events.list(kind="fold", limit=100_000))
    assert leaf_folds > 5
    assert max(by_depth) <= math.ceil(math.log(turns, settings.rollup_fanin)) + 3, by_depth
    assert sum(by_depth.values()) <= 2 * leaf_folds, (by_depth, leaf_folds)
    if budget >= 8_000:
        assert Counting.calls / turns <= 1 / 8, Counting.calls
    assert conv.context().total_tokens <= settings.usable_tokens
    mf.close()
