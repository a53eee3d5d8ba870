"""A hybrid search embeds its query and the items without a vector in one pass, in a worker thread
while BM25 ranks (issue 18, point 2): the hits are the same with and without the worker, a turn
appended just before is found by meaning, erased turns never come back, and a failed embedding
leaves the turn pending for the next search."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import memfold
from memfold.memory.bert import PACKED_TEXTS, load_encoder
from memfold.memory.embeddings import Embedder, EmbeddingError, MiniLMEmbedder, default_model_path

HISTORY = [
    "I repotted the basil and the tomatoes on the balcony this morning.",
    "My sister is visiting next month, she wants to see the museum.",
    "The printer at the office keeps jamming on double-sided pages.",
    "We tried the new ramen place downtown; the broth was excellent.",
    "I finally finished the mystery novel you lent me.",
    "The quarterly report is due on Friday and the charts are not ready.",
]
NEW_TURN = "Our flight to Lisbon leaves at dawn on Saturday."
QUERY = "airplane trip to Portugal"  # no word in common with NEW_TURN


class Recording(Embedder):
    """The real MiniLM embedder, recording each ``embed_batch`` call's texts and thread."""

    def __init__(self, inner: Embedder, fail: int = 0) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.calls: list[tuple[list[str], str]] = []
        self.fail = fail  # how many calls fail before the embedder works

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_batch(self, texts):
        self.calls.append((list(texts), threading.current_thread().name))
        if self.fail:
            self.fail -= 1
            raise EmbeddingError("the model is unavailable (test)")
        return self.inner.embed_batch(texts)


@pytest.fixture(scope="module")
def minilm():
    emb = MiniLMEmbedder()
    emb.preload()
    return emb


def _open(path, embedder, *, embed_ahead=False):
    """These tests check the search's own embedding (its worker or in line): the appended turns are
    not embedded ahead (``tests/test_embed_ahead.py`` checks that path)."""
    return memfold.MemFold(path, clock=memfold.LogicalClock(), token_counter="words", embedder=embedder,
                           embed_ahead=embed_ahead)


def test_right_after_an_append_one_pass_embeds_query_and_turn_and_finds_the_turn_by_meaning(db_path, minilm):
    rec = Recording(minilm)
    with _open(db_path, rec) as mf:
        conv = mf.conversation("c", namespace="n")
        conv.append_many([{"role": "user", "content": t} for t in HISTORY])
        mf.search("warm up", conversation_id="c")
        tid = conv.append({"role": "user", "content": NEW_TURN})
        rec.calls.clear()
        hits = mf.search(QUERY, conversation_id="c", kinds=["turn"], limit=3)
        assert rec.calls == [([NEW_TURN, QUERY], "memfold-search-embed")]  # one pass, in the worker
        assert hits[0].id == tid and hits[0].bm25_rank is None and hits[0].dense_rank == 1
        assert mf.embeddings.count("turn") == len(HISTORY) + 1
        rec.calls.clear()
        mf.search(QUERY, conversation_id="c")
        assert rec.calls == [([QUERY], "memfold-search-embed")]  # nothing pending any more
        rec.calls.clear()
        mf.search(QUERY, conversation_id="c")
        assert rec.calls == []  # the vector of the query embedded alone is kept


def _session(path, embedder, overlap: bool) -> list[list[dict]]:
    out = []
    with _open(path, embedder) as mf:
        mf.searcher.overlap_embedding = overlap
        conv = mf.conversation("c", namespace="n")
        conv.append_many([{"role": "user", "content": t} for t in HISTORY])
        for i, query in enumerate(["where is the report", QUERY, "a good book", "houseplants"]):
            conv.append({"role": "assistant", "content": f"{NEW_TURN} (note {i})" if i % 2 else HISTORY[i]})
            for mode in ("hybrid", "dense", "bm25"):
                out.append([h.to_dict() for h in mf.search(query, conversation_id="c", mode=mode, limit=5)])
            out.append([h.to_dict() for h in mf.search(query, limit=5)])
    return out


def test_the_worker_thread_changes_no_hit(tmp_path, minilm):
    with_worker = _session(tmp_path / "a.db", minilm, True)
    in_line = _session(tmp_path / "b.db", minilm, False)
    assert with_worker == in_line
    assert any(any(h["text"].startswith(NEW_TURN) for h in hits) for hits in with_worker)


def _repeating_session(path, embedder, overlap: bool, cached: int) -> tuple[list[list[dict]], list]:
    """Questions asked again right after appends: the second time the query's vectors are known
    and (with the worker) the dense ranker scans while the worker embeds the new turn."""
    from memfold.memory import search as search_module

    out = []
    saved = search_module.QUERY_VECTORS_CACHED
    search_module.QUERY_VECTORS_CACHED = cached
    try:
        rec = Recording(embedder)
        with _open(path, rec) as mf:
            mf.searcher.overlap_embedding = overlap
            conv = mf.conversation("c", namespace="n")
            conv.append_many([{"role": "user", "content": t} for t in HISTORY])
            mf.search("warm up", conversation_id="c")
            queries = ["where is the report", QUERY, "a good book"]
            for query in queries:  # embedded alone: nothing is pending
                out.append([h.to_dict() for h in mf.search(query, conversation_id="c", limit=5)])
            for i in range(4):
                conv.append({"role": "assistant", "content": f"{NEW_TURN} (note {i})" if i % 2 else HISTORY[i]})
                for mode in ("hybrid", "dense"):
                    out.append([h.to_dict() for h in mf.search(queries[i % 3], conversation_id="c", mode=mode,
                                                               limit=5)])
                out.append([h.to_dict() for h in mf.search(queries[(i + 1) % 3], limit=5)])
        return out, rec.calls
    finally:
        search_module.QUERY_VECTORS_CACHED = saved


def test_a_query_asked_again_after_an_append_gets_the_same_hits(tmp_path, minilm):
    """The dense list scanned while the worker embeds the new turn, joined by the new turn once
    stored, is the list one scan after the store gives (the in-line path, exactly), and keeping
    query vectors changes no hit."""
    overlapped, calls = _repeating_session(tmp_path / "a.db", minilm, True, 256)
    in_line, _ = _repeating_session(tmp_path / "b.db", minilm, False, 256)
    uncached, uncached_calls = _repeating_session(tmp_path / "c.db", minilm, True, 0)
    assert overlapped == in_line
    # without kept vectors a query asked after an append is embedded in one pass with the new turn,
    # which rounds its vector differently in the last float32 bits: the same hits, scores to 1e-6
    assert [[(h["kind"], h["id"]) for h in hits] for hits in overlapped] == \
        [[(h["kind"], h["id"]) for h in hits] for hits in uncached]
    assert all(abs(a["score"] - b["score"]) < 1e-6 for x, y in zip(overlapped, uncached) for a, b in zip(x, y))
    assert any(any(h["text"].startswith(NEW_TURN) for h in hits) for hits in overlapped)
    # with kept vectors the searches after an append embed only the new turn, in the worker
    new_turns = [f"{NEW_TURN} (note {i})" if i % 2 else HISTORY[i] for i in range(4)]
    assert calls[1:4] == [([q], "memfold-search-embed") for q in ["where is the report", QUERY, "a good book"]]
    assert calls[4:] == [([t], "memfold-search-embed") for t in new_turns]
    assert len(uncached_calls) > len(calls)


def test_in_a_large_scope_the_query_is_embedded_first_and_the_new_turn_joins_the_dense_list(tmp_path, minilm,
                                                                                            monkeypatch):
    """A scope of at least LARGE_SCOPE_VECTORS turns (1 here) embeds the query alone first, so the
    dense ranker scans while the worker embeds the new turn: the new turn is still found by
    meaning, and the hits are those of one pass over both (the in-line path) up to float32
    rounding of the query's vector."""
    from memfold.memory import search as search_module

    monkeypatch.setattr(search_module, "LARGE_SCOPE_VECTORS", 1)
    rec = Recording(minilm)
    with _open(tmp_path / "a.db", rec) as mf:
        conv = mf.conversation("c", namespace="n")
        conv.append_many([{"role": "user", "content": t} for t in HISTORY])
        mf.search("warm up", conversation_id="c")
        tid = conv.append({"role": "user", "content": NEW_TURN})
        rec.calls.clear()
        hits = mf.search(QUERY, conversation_id="c", kinds=["turn"], limit=3)
        assert rec.calls == [([QUERY], "memfold-search-embed"), ([NEW_TURN], "memfold-search-embed")]
        assert hits[0].id == tid and hits[0].bm25_rank is None and hits[0].dense_rank == 1
    split = _session(tmp_path / "b.db", minilm, True)
    in_line = _session(tmp_path / "c.db", minilm, False)
    assert [[(h["kind"], h["id"]) for h in hits] for hits in split] == \
        [[(h["kind"], h["id"]) for h in hits] for hits in in_line]
    assert all(abs(a["score"] - b["score"]) < 1e-6 for x, y in zip(split, in_line) for a, b in zip(x, y))
    assert any(any(h["text"].startswith(NEW_TURN) for h in hits) for hits in split)


def test_the_in_line_path_embeds_in_the_callers_thread(db_path, minilm):
    rec = Recording(minilm)
    with _open(db_path, rec) as mf:
        mf.searcher.overlap_embedding = False
        conv = mf.conversation("c", namespace="n")
        conv.append_many([{"role": "user", "content": t} for t in HISTORY])
        mf.search(QUERY)
        assert [(len(texts), thread) for texts, thread in rec.calls] == [
            (len(HISTORY) + 1, threading.current_thread().name)]


def test_erased_turns_are_never_returned_embedded_or_pending(db_path, minilm):
    with _open(db_path, minilm) as mf:
        conv = mf.conversation("c", namespace="n")
        conv.append_many([{"role": "user", "content": t} for t in HISTORY])
        kept = conv.append({"role": "user", "content": NEW_TURN})
        mf.search("warm up")
        mf.erase(turn_ids=[kept])  # embedded, then erased
        pending = conv.append({"role": "user", "content": "We board the plane to Porto at six."})
        mf.erase(turn_ids=[pending])  # erased before any search embedded it
        for mode in ("hybrid", "dense"):
            ids = {h.id for h in mf.search(QUERY, mode=mode, kinds=["turn"], limit=20, min_similarity=-1.0)}
            assert ids and kept not in ids and pending not in ids


def test_a_failed_embedding_raises_and_leaves_the_turn_pending(db_path, minilm):
    rec = Recording(minilm)
    with _open(db_path, rec) as mf:
        conv = mf.conversation("c", namespace="n")
        conv.append_many([{"role": "user", "content": t} for t in HISTORY])
        mf.search("warm up")
        tid = conv.append({"role": "user", "content": NEW_TURN})
        rec.fail = 1
        with pytest.raises(EmbeddingError, match="unavailable"):
            mf.search(QUERY)
        assert mf.embeddings.count("turn") == len(HISTORY)  # nothing stored
        hits = mf.search(QUERY, kinds=["turn"])
        assert hits[0].id == tid and rec.calls[-1][0] == [NEW_TURN, QUERY]


def test_searches_in_other_threads_wait_for_the_new_turn_rather_than_skip_it(db_path, minilm):
    with _open(db_path, minilm) as mf:
        conv = mf.conversation("c", namespace="n")
        conv.append_many([{"role": "user", "content": t} for t in HISTORY])
        mf.search("warm up")
        for turn, query in ((NEW_TURN, QUERY),
                            ("The vet says our puppy needs two more vaccinations.", "dog shots at the animal doctor"),
                            ("I bought a second-hand cello and started lessons.", "learning a string instrument")):
            tid = conv.append({"role": "user", "content": turn})
            start = threading.Barrier(4)
            found: list = []

            def search() -> None:
                start.wait()
                found.append(mf.search(query, kinds=["turn"], mode="dense", limit=1)[0].id)

            threads = [threading.Thread(target=search) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert found == [tid] * 4


def test_a_few_texts_of_unequal_length_run_unpadded_with_the_same_vectors(minilm):
    enc = load_encoder(default_model_path())
    texts = ["hi", QUERY, NEW_TURN, " ".join(HISTORY), " ".join(HISTORY * 8)]  # the last one past 256 tokens
    assert len(texts) <= PACKED_TEXTS and len({len(i) for i in enc.token_ids(texts)}) == len(texts)
    together = minilm.embed_batch(texts)
    alone = np.stack([minilm.embed_batch([t])[0] for t in texts])
    np.testing.assert_allclose(together, alone, atol=2e-5)
    assert float((together * alone).sum(axis=1).min()) >= 0.99999
    packed = enc.encode_packed(enc.token_ids(texts))
    padded_ids = enc.token_ids(texts)
    width = max(len(i) for i in padded_ids)
    ids = np.zeros((len(texts), width), dtype=np.int64)
    mask = np.zeros((len(texts), width), dtype=np.float32)
    for r, i in enumerate(padded_ids):
        ids[r, :len(i)], mask[r, :len(i)] = i, 1.0
    np.testing.assert_allclose(packed, enc.encode(ids, mask), atol=1e-4, rtol=1e-4)


def test_the_best_of_a_big_scope_are_those_of_a_full_sort():
    """IncrementalMatrix.top picks a big scope's best in float32 with a margin, then orders them by
    their float64 cosines: the same list as sorting every cosine (ties by smaller id)."""
    from memfold.memory.storage import vectorscan

    rng = np.random.default_rng(1)
    n, d = 5000, 32
    vectors = rng.standard_normal((n, d)).astype(np.float32)
    vectors[100:200] = vectors[50]  # exact ties
    vectors[300] = 0.0
    m = vectorscan.IncrementalMatrix()
    m.add([(i + 1, 1000 + i, "c" if i % 3 else "d", i, vectors[i]) for i in range(n)])
    for trial in range(60):
        q = vectors[rng.integers(n)] if trial % 2 else rng.standard_normal(d).astype(np.float32)
        rows = m.rows(None) if trial % 3 else m.rows([("c", None)])  # every row, or two thirds
        sims = m.cosines(rows, vectorscan.unit(q))
        for limit in (1, 10, 150):
            order = np.lexsort((m.ids[rows], -sims))[:limit]
            assert m.top(q, rows, limit) == [(int(m.ids[rows][i]), float(sims[i])) for i in order]


class ErasingWhileEmbedding(Embedder):
    """The real MiniLM embedder that, the first time it is asked for ``target``'s text, has that
    turn erased (through the facade, in whatever thread embeds) before it returns the vectors: the
    race of an erasure landing while a search computes the vector of the turn it erases."""

    def __init__(self, inner: Embedder, target_text: str) -> None:
        self.inner, self.model_id, self.target_text = inner, inner.model_id, target_text
        self.mf = None
        self.turn_id = None
        self.erased_in: list[str] = []

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_batch(self, texts):
        vectors = self.inner.embed_batch(texts)
        if self.turn_id is not None and not self.erased_in and self.target_text in texts:
            self.mf.erase(turn_ids=[self.turn_id])
            self.erased_in.append(threading.current_thread().name)
        return vectors


@pytest.mark.parametrize("path", ["worker", "in line", "index"])
def test_a_turn_erased_while_its_vector_is_computed_gets_none(tmp_path, minilm, path):
    emb = ErasingWhileEmbedding(minilm, NEW_TURN)
    with _open(tmp_path / "race.db", emb) as mf:
        emb.mf = mf
        mf.searcher.overlap_embedding = path == "worker"
        conv = mf.conversation("c", namespace="n")
        conv.append_many([{"role": "user", "content": t} for t in HISTORY])
        mf.search("warm up")
        emb.turn_id = conv.append({"role": "user", "content": NEW_TURN})
        if path == "index":
            mf.searcher.index.index(emb, kinds=["turn"])
        else:
            hits = mf.search(QUERY, kinds=["turn"], mode="dense", limit=20, min_similarity=-1.0)
            assert hits and emb.turn_id not in {h.id for h in hits}
        assert emb.erased_in == (["memfold-search-embed"] if path == "worker" else [threading.current_thread().name])
        assert mf.embeddings.get("turn", emb.turn_id) is None  # no vector outlives the erased words
        assert mf.embeddings.count("turn") == len(HISTORY)
        row = mf.db.execute("SELECT COUNT(*) FROM embeddings WHERE kind = 'turn' AND item_id = ?",
                            [emb.turn_id]).fetchone()
        assert row == (0,)
