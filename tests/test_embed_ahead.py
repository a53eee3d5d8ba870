"""An appended turn is embedded ahead of the next search, in the ``memfold-embed-ahead`` thread
(issue 18, point 2; :class:`memfold.memory.embeddings.EmbedAhead`): the search takes the vector
instead of embedding the turn itself, finds the turn right after the append whatever the thread's
timing, and the thread never leaves a vector for a turn erased or rolled back meanwhile. Every
wait here is on an event the code under test sets (no sleeps): a blocking embedder holds the
thread inside ``embed_batch`` until the test releases it."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import memfold
from memfold.memory.embeddings import EmbedAhead, EmbeddingError, HashingEmbedder

HISTORY = [
    "I repotted the basil and the tomatoes on the balcony this morning.",
    "My sister is visiting next month, she wants to see the museum.",
    "The printer at the office keeps jamming on double-sided pages.",
    "We tried the new ramen place downtown; the broth was excellent.",
]
NEW_TURN = "Our flight to Lisbon leaves at dawn on Saturday."
QUERY = "flight Lisbon dawn"
AHEAD = "memfold-embed-ahead"
WORKER = "memfold-search-embed"
WAIT = 120  # seconds: a guard against a hang, never a synchronisation


class Recording(HashingEmbedder):
    """Deterministic vectors; records each call's texts and thread. With ``block`` set, a call in
    the embed-ahead thread sets ``entered`` and waits for ``release``; ``fail_ahead`` makes the
    calls in that thread raise."""

    def __init__(self) -> None:
        super().__init__(64)
        self.calls: list[tuple[list[str], str]] = []
        self.block = False
        self.fail_ahead = False
        self.fail_all = False
        self.entered = threading.Event()
        self.release = threading.Event()
        self.release_when_the_search_embeds = False

    def embed_batch(self, texts):
        name = threading.current_thread().name
        self.calls.append((list(texts), name))
        if name == WORKER and self.release_when_the_search_embeds:
            self.release.set()
        if name == AHEAD:
            if self.block:
                self.entered.set()
                assert self.release.wait(WAIT)
            if self.fail_ahead:
                raise RuntimeError("the model broke (test)")
        if self.fail_all:
            raise RuntimeError("the model broke (test)")
        return super().embed_batch(texts)

    def ahead_calls(self):
        return [texts for texts, name in self.calls if name == AHEAD]


def _open(path, embedder, **kw):
    return memfold.MemFold(path, clock=memfold.LogicalClock(), token_counter="words", embedder=embedder, **kw)


def _start(mf):
    conv = mf.conversation("c", namespace="n")
    conv.append_many([{"role": "user", "content": t} for t in HISTORY])
    mf.search("warm up", conversation_id="c")  # the first search that embeds arms the thread
    return conv


def _stored(mf, turn_id):
    return mf.db.execute("SELECT COUNT(*) FROM embeddings WHERE kind = 'turn' AND item_id = ?",
                         [turn_id]).fetchone()[0]


def test_a_turn_appended_after_a_search_is_embedded_ahead_and_the_search_only_embeds_the_query(db_path):
    emb = Recording()
    with _open(db_path, emb) as mf:
        conv = _start(mf)
        assert emb.ahead_calls() == []  # the history was appended before any search: nothing ahead
        tid = conv.append({"role": "user", "content": NEW_TURN})
        mf.embeddings.ahead.drain()
        assert emb.ahead_calls() == [[NEW_TURN]]
        assert _stored(mf, tid) == 0  # the thread never writes: the search stores it
        emb.calls.clear()
        hits = mf.search(QUERY, conversation_id="c", kinds=["turn"], limit=3)
        assert emb.calls == [([QUERY], WORKER)]  # the turn's vector came from the thread
        assert hits[0].id == tid
        assert np.array_equal(mf.embeddings.get("turn", tid), HashingEmbedder(64).embed_batch([NEW_TURN])[0])
        assert mf.embeddings.ahead.pending() == 0  # handed out once


def test_a_search_right_after_each_append_finds_the_new_turn_whatever_the_threads_timing(db_path):
    emb = Recording()
    with _open(db_path, emb) as mf:
        conv = _start(mf)
        for i in range(12):
            text = f"Note {i}: the parcel number {1000 + i} went to locker {i}."
            tid = conv.append({"role": "user" if i % 2 else "assistant", "content": text})
            hits = mf.search(f"parcel number {1000 + i} locker", conversation_id="c", kinds=["turn"], limit=5)
            assert hits[0].id == tid
            assert np.array_equal(mf.embeddings.get("turn", tid), HashingEmbedder(64).embed_batch([text])[0])
        assert mf.embeddings.count("turn") == len(HISTORY) + 12


def test_a_turn_erased_while_its_vector_is_computed_ahead_gets_no_vector_and_no_hit(db_path):
    emb = Recording()
    with _open(db_path, emb) as mf:
        conv = _start(mf)
        emb.block = True
        tid = conv.append({"role": "user", "content": NEW_TURN})
        assert emb.entered.wait(WAIT)  # the thread is inside embed_batch on the turn
        mf.erase(turn_ids=[tid])
        emb.release.set()
        mf.embeddings.ahead.drain()
        assert mf.embeddings.ahead.pending() == 0  # the erasure dropped what the thread computed
        hits = mf.search(QUERY, conversation_id="c", mode="dense", limit=20, min_similarity=-1.0)
        assert hits and tid not in {h.id for h in hits}
        assert mf.embeddings.get("turn", tid) is None and _stored(mf, tid) == 0
        assert mf.embeddings.count("turn") == len(HISTORY)


def test_a_turn_erased_after_its_vector_was_computed_ahead_gets_no_vector(db_path):
    emb = Recording()
    with _open(db_path, emb) as mf:
        conv = _start(mf)
        tid = conv.append({"role": "user", "content": NEW_TURN})
        mf.embeddings.ahead.drain()
        assert mf.embeddings.ahead.pending() == 1
        mf.erase(turn_ids=[tid])
        assert mf.embeddings.ahead.pending() == 0
        assert tid not in {h.id for h in mf.search(QUERY, conversation_id="c", mode="dense", min_similarity=-1.0)}
        assert _stored(mf, tid) == 0


def test_a_turn_erased_after_the_search_took_its_vector_is_not_stored(db_path):
    """The search holds the entry (taken while the thread computes it); the turn is erased before
    the search stores: store_live finds it dead inside the storing transaction."""
    emb = Recording()
    with _open(db_path, emb) as mf:
        conv = _start(mf)
        emb.block = True
        tid = conv.append({"role": "user", "content": NEW_TURN})
        assert emb.entered.wait(WAIT)
        job = mf.embeddings.prepare(emb, [QUERY], kinds=["turn"])
        assert job.ahead == 1  # taken from the thread, not embedded again
        mf.erase(turn_ids=[tid])
        emb.release.set()
        job.wait()
        assert _stored(mf, tid) == 0 and mf.embeddings.get("turn", tid) is None


def test_a_rolled_back_append_is_not_embedded_ahead_and_its_id_gets_the_next_texts_vector(db_path):
    emb = Recording()
    with _open(db_path, emb) as mf:
        conv = _start(mf)
        with pytest.raises(RuntimeError):
            with mf.storage.transaction():
                conv.append({"role": "user", "content": "A sentence that rolls back."})
                raise RuntimeError("roll back (test)")
        mf.embeddings.ahead.drain()
        assert emb.ahead_calls() == [] and mf.embeddings.ahead.pending() == 0
        tid = conv.append({"role": "user", "content": NEW_TURN})
        assert mf.search(QUERY, conversation_id="c", kinds=["turn"])[0].id == tid
        assert np.array_equal(mf.embeddings.get("turn", tid), HashingEmbedder(64).embed_batch([NEW_TURN])[0])


def test_a_vector_computed_for_another_text_of_the_same_id_is_never_handed_out(db_path):
    emb = Recording()
    with _open(db_path, emb) as mf:
        _start(mf)
        ahead = mf.embeddings.ahead
        ahead.submit([("turn", 99, "the old words")])
        ahead.drain()
        assert ahead.take(emb, [("turn", 99, "other words")]) == {}
        assert ahead.take(HashingEmbedder(64), [("turn", 99, "the old words")]) == {}  # another embedder
        taken = ahead.take(emb, [("turn", 99, "the old words")])
        assert list(taken) == [0] and np.array_equal(taken[0].result(), emb.embed_batch(["the old words"])[0])


def test_a_queued_turn_is_embedded_by_the_search_itself_and_a_running_one_is_waited_for(db_path):
    emb = Recording()
    with _open(db_path, emb) as mf:
        conv = _start(mf)
        emb.block = True
        emb.release_when_the_search_embeds = True  # the thread finishes once the search's worker runs
        first = conv.append({"role": "user", "content": NEW_TURN})
        assert emb.entered.wait(WAIT)
        second = conv.append({"role": "assistant", "content": "Pack the blue suitcase for Lisbon."})
        emb.calls.clear()
        hits = mf.search("Lisbon", conversation_id="c", kinds=["turn"], limit=5)
        assert {first, second} <= {h.id for h in hits}
        assert emb.calls[0] == (["Lisbon"], WORKER)  # the query alone first
        assert (["Pack the blue suitcase for Lisbon."], WORKER) in emb.calls  # the queued one, by the search
        assert [t for t, name in emb.calls if name == AHEAD] == []  # nothing more was computed ahead
        assert _stored(mf, first) == 1 and _stored(mf, second) == 1


def test_a_failed_embedding_ahead_is_redone_by_the_search_and_a_broken_model_raises_there(db_path):
    emb = Recording()
    with _open(db_path, emb) as mf:
        conv = _start(mf)
        emb.fail_ahead = True
        tid = conv.append({"role": "user", "content": NEW_TURN})
        mf.embeddings.ahead.drain()
        assert mf.search(QUERY, conversation_id="c", kinds=["turn"])[0].id == tid
        assert (["Our flight to Lisbon leaves at dawn on Saturday."], "MainThread") in emb.calls
        emb.fail_all = True
        other = conv.append({"role": "user", "content": "The ferry to Porto is cancelled."})
        mf.embeddings.ahead.drain()
        with pytest.raises(EmbeddingError):
            mf.search("ferry Porto", conversation_id="c", kinds=["turn"])
        emb.fail_all = emb.fail_ahead = False
        assert mf.search("ferry Porto", conversation_id="c", kinds=["turn"])[0].id == other  # still pending


def test_close_with_work_pending_joins_the_thread_and_computes_nothing_queued(db_path):
    emb = Recording()
    mf = _open(db_path, emb)
    conv = _start(mf)
    emb.block = True
    conv.append({"role": "user", "content": NEW_TURN})
    assert emb.entered.wait(WAIT)
    conv.append({"role": "user", "content": "A second turn, queued behind the first."})
    conv.append({"role": "user", "content": "A third turn, queued too."})
    worker = mf.embeddings.ahead.thread
    closing = threading.Thread(target=mf.close)
    closing.start()
    assert mf.embeddings.ahead.stopping.wait(WAIT)  # close() took the queue away and now joins
    emb.release.set()
    closing.join(WAIT)
    assert not closing.is_alive() and not worker.is_alive()
    assert emb.ahead_calls() == [[NEW_TURN]]
    assert mf.embeddings.ahead.submit([("turn", 1, "after close")]) == 0  # a closed one takes nothing


def test_bm25_only_use_embeds_nothing_ahead_and_starts_no_thread(db_path):
    emb = Recording()
    with _open(db_path, emb) as mf:
        conv = mf.conversation("c", namespace="n")
        conv.append_many([{"role": "user", "content": t} for t in HISTORY])
        mf.search("basil", conversation_id="c", mode="bm25")
        conv.append({"role": "user", "content": NEW_TURN})
        assert mf.embeddings.ahead.thread is None and emb.calls == []
    with _open(db_path, None) as mf:
        mf.conversation("c").append({"role": "user", "content": "no embedder at all"})
        assert mf.embeddings.ahead.thread is None


def test_embed_ahead_off_leaves_every_embedding_to_the_search(db_path):
    emb = Recording()
    with _open(db_path, emb, embed_ahead=False) as mf:
        conv = _start(mf)
        tid = conv.append({"role": "user", "content": NEW_TURN})
        emb.calls.clear()
        assert mf.search(QUERY, conversation_id="c", kinds=["turn"])[0].id == tid
        assert mf.embeddings.ahead.thread is None
        assert emb.calls == [([NEW_TURN, QUERY], WORKER)]
    with pytest.raises(memfold.InvalidInput, match="embed_ahead"):
        _open(db_path, emb, embed_ahead="yes")


def test_the_default_embedder_embeds_ahead_without_importing_torch(db_path):
    if "torch" in sys.modules:
        pytest.skip("torch was imported by another test in this process")
    with _open(db_path, "default") as mf:
        conv = _start(mf)
        tid = conv.append({"role": "user", "content": NEW_TURN})
        mf.embeddings.ahead.drain()
        assert mf.search("a plane trip to Portugal", conversation_id="c", kinds=["turn"], limit=2)[0].id == tid
    assert "torch" not in sys.modules


def _session_hits(path, embedder, embed_ahead: bool):
    with _open(path, embedder, embed_ahead=embed_ahead) as mf:
        conv = _start(mf)
        out = []
        for i, (role, text) in enumerate([("assistant", "Pack the blue suitcase for Lisbon."), ("user", NEW_TURN),
                                          ("assistant", "The hotel is near the river, by the old tram line."),
                                          ("user", "Remind me to book the airport taxi for five.")]):
            tid = conv.append({"role": role, "content": text})
            if i % 2 == 0:
                mf.embeddings.ahead.drain()  # the answer embedded ahead during the user's think time
            out.append([h.to_dict() for h in mf.search(["a plane trip to Portugal", "where do we stay",
                                                         "getting to the airport", "luggage"][i],
                                                        conversation_id="c", limit=5)])
            out.append(mf.embeddings.get("turn", tid).tolist())
        return out


def test_with_minilm_embedding_ahead_gives_the_same_ranked_hits_and_vectors_as_the_search_alone(tmp_path):
    """In a small scope the search alone embeds the new turn and the query in one packed pass; with
    the turn embedded ahead the query goes alone, as in a large scope: the same ranked hits, with
    float32 rounding in the last bits (in a large scope both embed the query alone and the scores
    are equal to 9 decimals: bench/bench_search_ab.py's digests)."""
    from memfold.memory.embeddings import MiniLMEmbedder

    emb = MiniLMEmbedder()
    ahead = _session_hits(tmp_path / "ahead.db", emb, True)
    alone = _session_hits(tmp_path / "search.db", emb, False)
    assert len(ahead) == len(alone) == 8
    for hits_a, hits_b in zip(ahead[0::2], alone[0::2]):
        assert [(h["kind"], h["id"]) for h in hits_a] == [(h["kind"], h["id"]) for h in hits_b]
        assert np.allclose([h["score"] for h in hits_a], [h["score"] for h in hits_b], rtol=0, atol=1e-6)
    for vec_a, vec_b in zip(ahead[1::2], alone[1::2]):
        assert np.allclose(vec_a, vec_b, rtol=0, atol=1e-6)


def test_a_backlog_indexed_at_once_uses_the_vectors_computed_ahead(db_path):
    emb = Recording()
    with _open(db_path, emb) as mf:
        conv = _start(mf)
        texts = [f"Imported line {i} about the harbour and the boats." for i in range(6)]
        ids = [conv.append({"role": "user", "content": t}) for t in texts]
        mf.embeddings.ahead.drain()
        emb.calls.clear()
        assert mf.index_embeddings() == 6
        assert emb.calls == []  # all six came from the thread
        for tid, text in zip(ids, texts):
            assert np.array_equal(mf.embeddings.get("turn", tid), HashingEmbedder(64).embed_batch([text])[0])


class _GatedAhead(EmbedAhead):
    """An EmbedAhead whose worker starts its loop only once ``gate`` is set: it holds the state
    "queued, nothing running" that a busy machine gives for milliseconds after an append."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()

    def _run(self) -> None:
        assert self.gate.wait(WAIT)
        super()._run()


def test_a_queued_batch_alone_with_nothing_running_is_kept_for_the_worker_and_one_behind_another_is_not():
    emb = Recording()
    ahead = _GatedAhead()
    ahead.embedder = emb
    try:
        ahead.submit([("turn", 1, NEW_TURN)])
        taken = ahead.take(emb, [("turn", 1, NEW_TURN)])  # the worker was woken for it and has not run
        assert list(taken) == [0] and taken[0].state == "queued"
        ahead.submit([("turn", 2, "A second turn.")])
        ahead.submit([("turn", 3, "A third turn.")])  # two batches queued: neither is kept
        assert ahead.take(emb, [("turn", 2, "A second turn."), ("turn", 3, "A third turn.")]) == {}
        ahead.gate.set()
        assert np.array_equal(taken[0].result(), HashingEmbedder(64).embed_batch([NEW_TURN])[0])
        ahead.drain()
        assert emb.ahead_calls() == [[NEW_TURN]]  # computed by the worker; the cancelled two never
    finally:
        ahead.gate.set()
        ahead.close()
