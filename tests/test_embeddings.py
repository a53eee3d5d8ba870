"""Embedders and the vector store: offline model loading, storage round-trip, model mismatch,
re-embedding, and near-duplicate refresh within one slot (issue 6, points 1, 3 and 5)."""

from __future__ import annotations

import socket

import numpy as np
import pytest

import memfold
from memfold.memory import embeddings as emb
from memfold.memory.embeddings import (
    DEFAULT_MODEL_ID,
    EmbeddingIndex,
    HashingEmbedder,
    SameMeaning,
    SentenceTransformerEmbedder,
    blob_to_vector,
    make_embedder,
    vector_to_blob,
)


@pytest.fixture(scope="module")
def real_embedder():
    """all-MiniLM-L6-v2 loaded once per module from the installed package, with the network
    blocked: any socket connect raises, so a download attempt would fail the load."""
    emb._MODEL_CACHE.clear()  # force a real load here, not a model some earlier test cached
    attempts = []

    def refuse(self, address, *args, **kwargs):
        attempts.append(address)
        raise OSError(f"network blocked in test: connect to {address!r}")

    mp = pytest.MonkeyPatch()
    mp.setattr(socket.socket, "connect", refuse)
    mp.setattr(socket.socket, "connect_ex", refuse)
    mp.delenv("HF_HUB_OFFLINE", raising=False)
    mp.delenv("TRANSFORMERS_OFFLINE", raising=False)
    mp.delenv(emb.MODEL_ENV, raising=False)
    try:
        embedder = SentenceTransformerEmbedder()
        vectors = embedder.embed_batch(["Dana prefers email contact", "Dana prefers to be contacted by email"])
    finally:
        mp.undo()
    return embedder, vectors, attempts


def test_real_model_loads_and_embeds_offline(real_embedder):
    embedder, vectors, attempts = real_embedder
    assert attempts == []
    assert embedder.model_id == DEFAULT_MODEL_ID
    assert embedder.dim == 384
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert float(vectors[0] @ vectors[1]) > 0.8  # a paraphrase


def test_real_model_separates_a_changed_value_from_a_paraphrase(real_embedder):
    embedder = real_embedder[0]
    same = SameMeaning(embedder)
    assert same("Dana prefers email contact", "Dana prefers to be contacted by email")
    assert not same("Dana prefers email contact", "Dana prefers phone contact")
    assert not same("The user's plan is Pro", "The user lives in Lisbon")


def test_missing_local_model_fails_clearly_without_downloading(tmp_path):
    embedder = SentenceTransformerEmbedder(tmp_path / "no-such-model")
    with pytest.raises(memfold.EmbeddingError, match="cannot load embedding model .* offline"):
        embedder.embed_batch(["hello"])


@pytest.mark.parametrize("embedder", [HashingEmbedder(), HashingEmbedder(64)], ids=["hash256", "hash64"])
def test_embedder_contract(embedder):
    out = embedder.embed_batch(["The cat sat", "", "A refund for order ORD-3300"])
    assert out.shape == (3, embedder.dim) and out.dtype == np.float32
    norms = np.linalg.norm(out, axis=1)
    np.testing.assert_allclose(norms[[0, 2]], 1.0, atol=1e-6)
    assert norms[1] == 0.0  # nothing to embed stays a zero vector
    assert embedder.embed_batch([]).shape == (0, embedder.dim)
    np.testing.assert_array_equal(embedder.embed_batch(["The cat sat"])[0], out[0])  # deterministic


def test_hashing_similarity_follows_shared_words():
    e = HashingEmbedder()
    a, b, c = e.embed_batch(["refund for the broken order", "the order arrived broken", "weather in Lisbon"])
    assert a @ b > a @ c


def test_make_embedder_specs(tmp_path):
    assert make_embedder(None) is None and make_embedder("none") is None
    assert make_embedder("hashing").model_id == "memfold-hashing-v1-256"
    assert make_embedder("hashing:32").dim == 32
    assert make_embedder("memfold-hashing-v1-32").dim == 32  # a stored model id opens the same embedder
    assert make_embedder("default").model_id == DEFAULT_MODEL_ID
    assert make_embedder(str(tmp_path)).model_id == str(tmp_path)
    with pytest.raises(memfold.InvalidInput, match="hashing:DIM"):
        make_embedder("hashing:x")
    with pytest.raises(memfold.InvalidInput):
        HashingEmbedder(2)


def test_blob_round_trip_is_exact():
    v = np.array([0.1, -2.5, 3e-8, 1.0], dtype=np.float32)
    blob = vector_to_blob(v)
    assert len(blob) == 16
    np.testing.assert_array_equal(blob_to_vector(blob, 4), v)
    with pytest.raises(memfold.EmbeddingError, match="expected 12"):
        blob_to_vector(blob, 3)


def test_storage_round_trip_records_model_and_dimension(mf):
    index = EmbeddingIndex(mf.storage)
    e = HashingEmbedder(32)
    vectors = e.embed_batch(["one", "two"])
    index.store("record", [7, 9], vectors, model_id=e.model_id)
    assert index.stored_model() == (e.model_id, 32)
    np.testing.assert_array_equal(index.get("record", 9), vectors[1])
    row = mf.db.execute("SELECT model_id, dim, length(vector) FROM embeddings WHERE item_id = 7").fetchone()
    assert row == (e.model_id, 32, 128)
    ids, matrix = index.matrix("record")
    assert ids.tolist() == [7, 9]
    np.testing.assert_array_equal(matrix, vectors)


def test_vectors_from_another_model_are_refused(mf):
    index = EmbeddingIndex(mf.storage)
    index.store("turn", [1], HashingEmbedder(32).embed_batch(["x"]), model_id="memfold-hashing-v1-32")
    other = HashingEmbedder(64)
    with pytest.raises(memfold.EmbeddingError, match=r"model 'memfold-hashing-v1-32' \(dimension 32\).*reembed"):
        index.store("turn", [2], other.embed_batch(["y"]), model_id=other.model_id)
    with pytest.raises(memfold.EmbeddingError, match="memfold-hashing-v1-32"):
        index.store("turn", [2], np.ones((1, 32), dtype=np.float32), model_id="some-other-model")
    assert index.count() == 1  # nothing written


def test_facade_search_refuses_mismatched_model_and_reembed_fixes_it(db_path):
    with memfold.MemFold(db_path, clock=memfold.LogicalClock(), token_counter="words", embedder="hashing:32") as mf:
        mf.conversation("c").append({"role": "user", "content": "my parcel is late"})
        mf.remember("ns", "semantic", "prefers email", key="contact")
        assert mf.index_embeddings() == 2
    # reopening with "auto" picks the file's model
    with memfold.MemFold(db_path, token_counter="words") as mf:
        assert mf.embedder.model_id == "memfold-hashing-v1-32"
    with memfold.MemFold(db_path, token_counter="words", embedder="hashing:64") as mf:
        with pytest.raises(memfold.EmbeddingError, match="reembed"):
            mf.search("parcel")
        assert mf.reembed() == 2
        assert mf.embeddings.stored_model() == ("memfold-hashing-v1-64", 64)
        assert [h.text for h in mf.search("parcel")] == ["my parcel is late"]


def test_index_is_incremental_and_erasure_drops_vectors(mf):
    mf.embedder = HashingEmbedder()
    conv = mf.conversation("c")
    ids = conv.append_many([{"role": "user", "content": "alpha"}, {"role": "user", "content": "beta"}])
    assert mf.embeddings.index(mf.embedder) == 2
    assert mf.embeddings.index(mf.embedder) == 0
    conv.append({"role": "user", "content": "gamma"})
    assert mf.embeddings.index(mf.embedder) == 1
    mf.db.execute("UPDATE turns SET erased = 1, content = '' WHERE id = ?", [ids[0]])
    assert mf.embeddings.get("turn", ids[0]) is None
    assert mf.embeddings.count("turn") == 2


def test_progress_is_reported_per_batch(mf):
    conv = mf.conversation("c")
    conv.append_many([{"role": "user", "content": f"message {i}"} for i in range(5)])
    seen = []
    mf.embeddings.index(HashingEmbedder(), batch_size=2, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(2, 5), (4, 5), (5, 5)]


# -- near-duplicates (issue 6, point 3) ---------------------------------------------------------------
class ParaphraseEmbedder(memfold.Embedder):
    """Deterministic embedder that knows two phrasings mean the same (stand-in for a model)."""

    model_id = "test-paraphrase"
    dim = 3
    MEANINGS = {"dana prefers email contact": 0, "dana likes to be reached by email": 0,
                "dana prefers phone contact": 1, "refunds need a receipt": 2}

    def embed_batch(self, texts):
        out = np.zeros((len(texts), 3), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, self.MEANINGS[t.lower()]] = 1.0
        return out


def test_restatement_in_other_words_refreshes_the_slot(db_path, clock):
    with memfold.MemFold(db_path, clock=clock, token_counter="words", embedder=ParaphraseEmbedder()) as mf:
        first = mf.remember("acme/dana", "semantic", "Dana prefers email contact", key="user.contact")
        clock.advance(3)
        again = mf.remember("acme/dana", "semantic", "Dana likes to be reached by email", key="user.contact")
        assert again.id == first.id
        assert again.written_at == 3.0
        assert [r.id for r in mf.memory.list("acme/dana")] == [first.id]
        clock.advance(1)
        changed = mf.remember("acme/dana", "semantic", "Dana prefers phone contact", key="user.contact")
        assert changed.id != first.id
        assert mf.memory.get(first.id).status == "retired"


def test_similarity_never_touches_another_slot(db_path, clock):
    with memfold.MemFold(db_path, clock=clock, token_counter="words", embedder=ParaphraseEmbedder()) as mf:
        a = mf.remember("acme/dana", "semantic", "Dana prefers email contact", key="user.contact")
        b = mf.remember("acme/dana", "semantic", "Dana likes to be reached by email", key="user.channel")
        c = mf.remember("acme/dana", "semantic", "Dana likes to be reached by email")  # no slot
        assert len({a.id, b.id, c.id}) == 3
        assert {r.status for r in mf.memory.list("acme/dana", include_inactive=True)} == {"active"}


def test_without_embedder_only_equal_text_refreshes(db_path, clock):
    with memfold.MemFold(db_path, clock=clock, token_counter="words", embedder=None) as mf:
        a = mf.remember("ns", "semantic", "Dana prefers email contact", key="k")
        b = mf.remember("ns", "semantic", "Dana likes to be reached by email", key="k")
        assert b.id != a.id and mf.memory.get(a.id).status == "retired"


def test_same_meaning_threshold_is_validated():
    with pytest.raises(memfold.InvalidInput, match="threshold"):
        SameMeaning(HashingEmbedder(), threshold=1.5)


class _FailsOnce(HashingEmbedder):
    """A hashing embedder whose first batch fails, as a model that cannot load the first time."""

    def __init__(self) -> None:
        super().__init__(32)
        self.failures = 1

    def embed_batch(self, texts):
        if self.failures:
            self.failures -= 1
            raise RuntimeError("the model is not loaded yet")
        return super().embed_batch(texts)


def test_items_a_failed_embedding_batch_skipped_are_embedded_by_the_next_index(db_path):
    with memfold.MemFold(db_path, clock=memfold.LogicalClock(), token_counter="words", embedder=None) as mf:
        mf.conversation("c", namespace="n").append({"role": "user", "content": "my parcel is late"})
        index, embedder = mf.searcher.index, _FailsOnce()
        with pytest.raises(memfold.EmbeddingError, match="not loaded yet") as failed:  # the model's error, named
            index.index(embedder, kinds=("turn",))
        assert isinstance(failed.value.__cause__, RuntimeError)
        assert index.index(embedder, kinds=("turn",)) == 1  # the failed batch's turn, not skipped for good
        assert index.missing("turn") == []
