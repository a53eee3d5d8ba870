"""The text embedded for a turn (issue 18 point 7): a turn's ``"<name>: "`` label stays out of its
vector, files written before that re-embed their labelled turns once, and erased turns never
regain a vector on the way."""

from __future__ import annotations

import numpy as np
import pytest

import memfold
from memfold.memory.embeddings import TURN_TEXT_FORM, TURN_TEXT_KEY, HashingEmbedder, turn_embedding_text

TURNS = [
    {"role": "user", "content": "Dana: my parcel is late again", "name": "Dana"},
    {"role": "assistant", "content": "Sam: the refund is approved", "name": "Sam"},
    {"role": "user", "content": "Note: the courier called", "name": "Dana"},  # not her label
    {"role": "user", "content": "no label at all"},
    {"role": "user", "content": "Dana: and the box was torn", "name": "Dana"},
]


@pytest.fixture
def db_path(backend_target):
    """Every test here runs on SQLite and on PostgreSQL (conftest's ``backend_target``)."""
    return backend_target


def test_the_label_of_the_turns_own_speaker_is_left_out():
    assert turn_embedding_text("Dana: hello there", "Dana") == "hello there"
    assert turn_embedding_text("Note: buy milk", "Dana") == "Note: buy milk"
    assert turn_embedding_text("Dana: hello", None) == "Dana: hello"
    assert turn_embedding_text("Dana: hello", "") == "Dana: hello"
    assert turn_embedding_text("Dana:   ", "Dana") == "Dana:   "  # nothing else: kept whole
    assert turn_embedding_text("Dana:hello", "Dana") == "Dana:hello"


def _stored(mf, ids):
    return [mf.embeddings.get("turn", i) for i in ids]


def test_a_new_file_embeds_turns_without_their_label_and_records_the_form(db_path):
    emb = HashingEmbedder()
    with memfold.MemFold(db_path, token_counter="words", embedder=emb) as mf:
        ids = mf.conversation("c").append_many(TURNS)
        assert mf.index_embeddings() == len(TURNS)
        expected = emb.embed_batch(["my parcel is late again", "the refund is approved", "Note: the courier called",
                                    "no label at all", "and the box was torn"])
        for got, want in zip(_stored(mf, ids), expected):
            np.testing.assert_array_equal(got, want)
        assert mf.storage.meta.get(TURN_TEXT_KEY) == TURN_TEXT_FORM
        # BM25 still sees the name: the label is only out of the vector
        assert [h.id for h in mf.search("Sam", mode="bm25", kinds=("turn",))][:1] == [ids[1]]


def _old_file(db_path, emb):
    """A file as round 5 wrote it: every turn embedded with its content as it is, no form recorded."""
    with memfold.MemFold(db_path, token_counter="words", embedder=None) as mf:
        ids = mf.conversation("c").append_many(TURNS)
        mf.embeddings.store("turn", ids, emb.embed_batch([t["content"] for t in TURNS]), model_id=emb.model_id)
        assert mf.storage.meta.get(TURN_TEXT_KEY) is None
    return ids


def test_an_old_file_re_embeds_its_labelled_turns_once_and_erased_ones_stay_gone(db_path):
    emb = HashingEmbedder()
    ids = _old_file(db_path, emb)
    with memfold.MemFold(db_path, token_counter="words", embedder=None) as mf:
        mf.erase(turn_ids=[ids[4]], cause="test")
    with memfold.MemFold(db_path, token_counter="words", embedder=emb) as mf:
        untouched = _stored(mf, ids[2:4])
        hits = mf.search("parcel", kinds=("turn",))  # the first search upgrades the file
        assert hits and hits[0].id == ids[0]
        np.testing.assert_array_equal(mf.embeddings.get("turn", ids[0]), emb.embed("my parcel is late again"))
        np.testing.assert_array_equal(mf.embeddings.get("turn", ids[1]), emb.embed("the refund is approved"))
        for got, before in zip(_stored(mf, ids[2:4]), untouched):  # no label: the same vector
            np.testing.assert_array_equal(got, before)
        assert mf.embeddings.get("turn", ids[4]) is None  # erased before the upgrade: no vector
        assert mf.embeddings.count("turn") == 4
        assert mf.storage.meta.get(TURN_TEXT_KEY) == TURN_TEXT_FORM
        assert mf.embeddings.upgrade_turn_texts(emb) == 0
    with memfold.MemFold(db_path, token_counter="words", embedder=emb) as mf:  # a later process: nothing to do
        assert mf.embeddings.upgrade_turn_texts(emb) == 0


class ErasingEmbedder(HashingEmbedder):
    """Erases a turn through another handle while its first batch is being embedded (another
    process erasing during the upgrade)."""

    def __init__(self, db_path, turn_id):
        super().__init__()
        self.db_path, self.turn_id, self.fired = db_path, turn_id, False

    def embed_batch(self, texts):
        if not self.fired:
            self.fired = True
            with memfold.MemFold(self.db_path, token_counter="words", embedder=None) as other:
                other.erase(turn_ids=[self.turn_id], cause="test")
        return super().embed_batch(texts)


def test_a_turn_erased_while_the_upgrade_embeds_never_regains_a_vector(db_path):
    emb = HashingEmbedder()
    ids = _old_file(db_path, emb)
    eraser = ErasingEmbedder(db_path, ids[0])
    with memfold.MemFold(db_path, token_counter="words", embedder=eraser) as mf:
        assert mf.embeddings.upgrade_turn_texts(eraser) == 2  # Sam's and Dana's second turn
        assert eraser.fired
        assert mf.embeddings.get("turn", ids[0]) is None
        np.testing.assert_array_equal(mf.embeddings.get("turn", ids[4]), emb.embed("and the box was torn"))
        assert ids[0] not in [h.id for h in mf.search("parcel late", kinds=("turn",))]


def test_reembed_uses_the_form_and_records_it(db_path):
    emb = HashingEmbedder()
    ids = _old_file(db_path, emb)
    with memfold.MemFold(db_path, token_counter="words", embedder=emb) as mf:
        assert mf.reembed() == len(TURNS)
        np.testing.assert_array_equal(mf.embeddings.get("turn", ids[0]), emb.embed("my parcel is late again"))
        assert mf.storage.meta.get(TURN_TEXT_KEY) == TURN_TEXT_FORM


def test_without_names_drops_whole_names_and_possessives():
    from memfold.memory.query_analysis import without_names

    assert without_names("What did Caroline's friend paint?", ["Caroline", "Mel"]) == "What did friend paint?"
    assert without_names("When did caroline and Mel go?", ["Caroline", "Mel"]) == "When did and go?"
    assert without_names("Is Carolina there?", ["Caroline"]) == "Is Carolina there?"
    assert without_names("Caroline?", ["Caroline"]) == "Caroline?"  # nothing else left: kept


def test_turns_are_ranked_by_the_question_without_the_speakers_names(db_path):
    """Turns' cosine is the question's without the searched conversation's speakers' names (the
    turn vectors leave their labels out), in hybrid and dense mode; records keep the whole question."""
    emb = HashingEmbedder()
    with memfold.MemFold(db_path, token_counter="words", embedder=emb) as mf:
        conv = mf.conversation("c")
        ids = conv.append_many(TURNS)
        mf.conversation("other").append({"role": "user", "content": "Zed: hi", "name": "Zed"})
        query = "What did Dana and Zed say about the parcel?"
        for mode in ("hybrid", "dense"):
            hit = next(h for h in mf.search(query, conversation_id="c", kinds=("turn",), mode=mode) if h.id == ids[0])
            turn = mf.embeddings.get("turn", ids[0])
            # Zed speaks only in another conversation: his name stays
            assert hit.similarity == pytest.approx(float(turn @ emb.embed("What did and Zed say about the parcel?")),
                                                   abs=1e-6)
            assert hit.similarity != pytest.approx(float(turn @ emb.embed(query)), abs=1e-6)
        record = mf.remember("acme", "semantic", "Dana says the parcel is late")
        hits = mf.search(query, kinds=("turn", "record"))  # no conversation: every speaker's name out for turns
        rec = next(h for h in hits if h.kind == "record" and h.id == record.id)
        assert rec.similarity == pytest.approx(float(mf.embeddings.get("record", record.id) @ emb.embed(query)), abs=1e-6)
        turn_hit = next(h for h in hits if h.kind == "turn" and h.id == ids[0])
        assert turn_hit.similarity == pytest.approx(
            float(mf.embeddings.get("turn", ids[0]) @ emb.embed("What did and say about the parcel?")), abs=1e-6)
