"""Hybrid search: fusion, modes and filters over turns, cards and records (issue 6, point 2).

Uses the deterministic HashingEmbedder (no model load); the real model is covered in
tests/test_embeddings.py.
"""

from __future__ import annotations

import pytest

import memfold
from memfold.memory.search import bm25_query, light_stem, rrf_fuse


@pytest.fixture
def hmf(db_path, clock):
    instance = memfold.MemFold(db_path, clock=clock, token_counter="words", embedder="hashing")
    yield instance
    instance.close()


@pytest.fixture
def loaded(hmf, clock):
    """Two conversations in two namespaces, a fork, and records of several types and times."""
    a = hmf.conversation("ticket-1", namespace="acme/dana")
    a.append_many([
        {"role": "user", "content": "My order ORD-3300 arrived broken"},
        {"role": "assistant", "content": "Sorry to hear that. I can arrange a refund or a replacement."},
        {"role": "user", "content": "A refund please, to my card"},
        {"role": "assistant", "content": "Done: the refund will reach your card in five days."},
    ])
    clock.advance(10)
    b = hmf.conversation("ticket-2", namespace="globex/eve")
    b.append_many([
        {"role": "user", "content": "The refund for order ORD-9 never arrived"},
        {"role": "assistant", "content": "Let me check the payment gateway."},
    ])
    clock.advance(10)
    hmf.remember("acme/dana", "semantic", "Dana prefers refunds to her card", key="refund.method")
    hmf.remember("acme/dana", "procedural", "Refunds over 100 EUR need a supervisor")
    clock.advance(10)
    hmf.remember("globex/eve", "semantic", "Eve asked about a refund twice", key="history")
    return hmf


def test_stemmed_prefix_bm25_query_is_literal():
    assert bm25_query("When did Caroline start painting?") == '"caroline" * OR "start" * OR "paint" *'
    assert bm25_query('"quoted" NEAR(a b) -x OR *', prefix=False) == '"quoted" OR "near" OR "b" OR "x"'
    assert bm25_query("the of and") == '"the" * OR "of" * OR "and" *'  # only stop words: keep them
    assert bm25_query("?!") is None
    assert light_stem("painted") == "paint" and light_stem("bus") == "bus" and light_stem("camping") == "camp"


def test_fts_syntax_in_a_query_is_plain_text(loaded):
    for text in ['refund" OR', "NEAR(refund card)", "refund*", "-refund", "order: ORD-3300", "(("]:
        loaded.search(text)  # never an FTS5 syntax error


def test_rrf_fuse_rewards_agreement():
    fused = rrf_fuse([["a", "b", "c"], ["b", "c", "a"]], k=60)
    assert [key for key, _ in fused] == ["b", "a", "c"]
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 61)
    weighted = rrf_fuse([["a", "b"], ["b", "a"]], weights=[3.0, 1.0])
    assert weighted[0][0] == "a"
    with pytest.raises(memfold.InvalidInput, match="one weight per ranking"):
        rrf_fuse([["a"]], weights=[1.0, 2.0])


def test_hybrid_finds_all_kinds_best_first(loaded):
    hits = loaded.search("refund to my card", limit=5)
    assert hits[0].kind in ("turn", "record")
    kinds = {h.kind for h in hits}
    assert {"turn", "record"} <= kinds
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    top = hits[0]
    assert top.bm25_rank is not None and top.similarity is not None
    assert "card" in top.text.lower()


def test_modes_give_the_rankers_separately(loaded):
    bm25 = loaded.search("arranged replacement", mode="bm25", kinds=["turn"])
    assert [h.text for h in bm25] == ["Sorry to hear that. I can arrange a refund or a replacement."]
    assert bm25[0].similarity is None and bm25[0].dense_rank is None
    dense = loaded.search("arranged replacement", mode="dense", kinds=["turn"], limit=3, neighbour_weight=0.0)
    assert len(dense) == 3
    assert [h.similarity for h in dense] == sorted((h.similarity for h in dense), reverse=True)
    assert all(h.dense_rank == i for i, h in enumerate(dense, start=1))
    rrf = loaded.search("refund card", fusion="rrf", kinds=["turn"], limit=3)
    assert len(rrf) == 3


def test_dense_only_hits_need_min_similarity(loaded):
    assert loaded.search("zebra xylophone") == []
    assert loaded.search("zebra xylophone", mode="dense", limit=2) != []  # pure ranking returns neighbours


def test_filter_conversation_namespace_type_key(loaded):
    in_conv = loaded.search("refund", conversation_id="ticket-2", limit=20)
    assert in_conv and {h.conversation_id for h in in_conv} == {"ticket-2"}
    assert all(h.kind == "turn" for h in in_conv)  # records belong to no conversation
    ns = loaded.search("refund", namespace="acme/dana", limit=20)
    assert {h.namespace for h in ns} == {"acme/dana"}
    assert {h.kind for h in ns} == {"turn", "record"}
    typed = loaded.search("refund", type="procedural", limit=20)
    assert [h.text for h in typed] == ["Refunds over 100 EUR need a supervisor"]
    keyed = loaded.search("refund", key="history", limit=20)
    assert [h.text for h in keyed] == ["Eve asked about a refund twice"]
    only_records = loaded.search("refund", kinds=["record"], limit=20)
    assert {h.kind for h in only_records} == {"record"} and len(only_records) == 3


def test_filter_time_range(loaded):
    early = loaded.search("refund", until=5, limit=20)
    assert early and all(h.time <= 5 for h in early) and {h.conversation_id for h in early} == {"ticket-1"}
    late = loaded.search("refund", since=25, limit=20)
    assert [h.text for h in late] == ["Eve asked about a refund twice"]
    window = loaded.search("refund", since=10, until=20, limit=20)
    assert {h.time for h in window} <= {10.0, 20.0} and window


def test_fork_sees_its_parent_up_to_the_fork_only(loaded):
    fork = loaded.conversation("ticket-1").fork("ticket-1b")
    fork.append({"role": "user", "content": "Actually I want a replacement instead of the refund"})
    loaded.conversation("ticket-1").append({"role": "user", "content": "refund arrived, thanks"})
    texts = [h.text for h in loaded.search("refund", conversation_id="ticket-1b", limit=20)]
    assert "Actually I want a replacement instead of the refund" in texts
    assert "A refund please, to my card" in texts
    assert "refund arrived, thanks" not in texts


def test_labels_the_reader_lacks_are_never_returned(hmf):
    hmf.remember("ns", "semantic", "salary band is B4", labels=["hr"])
    hmf.remember("ns", "semantic", "salary review in May")
    assert len(hmf.search("salary", limit=10)) == 2  # trusted caller: no label check
    assert [h.text for h in hmf.search("salary", reader_labels=[], limit=10)] == ["salary review in May"]
    assert len(hmf.search("salary", reader_labels=["hr"], limit=10)) == 2


def test_inactive_records_and_erased_turns_are_not_found(hmf):
    old = hmf.remember("ns", "semantic", "plan is Basic", key="plan")
    hmf.remember("ns", "semantic", "plan is Pro", key="plan")
    texts = [h.text for h in hmf.search("plan", limit=10)]
    assert texts == ["plan is Pro"] and hmf.memory.get(old.id).status == "retired"
    conv = hmf.conversation("c")
    tid = conv.append({"role": "user", "content": "my secret plan"})
    assert any(h.id == tid for h in hmf.search("secret", kinds=["turn"]))
    hmf.db.execute("UPDATE turns SET erased = 1, content = '' WHERE id = ?", [tid])
    assert hmf.search("secret", kinds=["turn"]) == []


def test_new_items_are_indexed_on_search(hmf):
    conv = hmf.conversation("c")
    conv.append({"role": "user", "content": "first message about parcels"})
    assert hmf.search("parcels")[0].dense_rank == 1
    conv.append({"role": "user", "content": "second message about parcels"})
    assert hmf.embeddings.count("turn") == 1
    hits = hmf.search("second parcels")
    assert hmf.embeddings.count("turn") == 2
    assert hits[0].text == "second message about parcels"


def test_neighbouring_turns_lend_support(hmf):
    conv = hmf.conversation("c")
    conv.append_many([
        {"role": "user", "content": "What did you do at the lake?"},
        {"role": "assistant", "content": "We rented a kayak."},
        {"role": "user", "content": "Unrelated: my printer is jammed."},
        {"role": "user", "content": "Unrelated: the weather is fine."},
    ])
    plain = hmf.search("lake", mode="bm25", neighbour_weight=0.0, kinds=["turn"])
    assert [h.text for h in plain] == ["What did you do at the lake?"]
    hybrid = [h.text for h in hmf.search("lake trip", kinds=["turn"], min_similarity=-1.0, limit=2)]
    assert hybrid == ["What did you do at the lake?", "We rented a kayak."]


def test_without_embedder_search_is_bm25(db_path, clock):
    with memfold.MemFold(db_path, clock=clock, token_counter="words", embedder=None) as mf:
        mf.conversation("c").append({"role": "user", "content": "parcel lost"})
        hits = mf.search("parcel")
        assert [h.text for h in hits] == ["parcel lost"] and hits[0].similarity is None
        with pytest.raises(memfold.EmbeddingError, match="needs an embedder"):
            mf.search("parcel", mode="dense")
        assert mf.embeddings.count() == 0


@pytest.mark.parametrize("kwargs, message", [
    ({"query": ""}, "non-empty"),
    ({"query": "x", "limit": 0}, "positive integer"),
    ({"query": "x", "mode": "magic"}, "unknown search mode"),
    ({"query": "x", "kinds": ["email"]}, "unknown item kind"),
    ({"query": "x", "type": "gossip"}, "unknown record type"),
    ({"query": "x", "fusion": "max"}, "unknown fusion"),
    ({"query": "x", "bm25_weight": 2}, "bm25_weight"),
])
def test_bad_search_input_is_refused(hmf, kwargs, message):
    with pytest.raises(memfold.InvalidInput, match=message):
        hmf.search(**kwargs)


def test_unknown_conversation_is_not_found(hmf):
    with pytest.raises(memfold.ConversationNotFound):
        hmf.search("x", conversation_id="nope")


def test_same_inputs_same_hits(db_path, tmp_path, clock):
    def run(path):
        with memfold.MemFold(path, clock=memfold.LogicalClock(), token_counter="words", embedder="hashing") as mf:
            mf.conversation("c").append_many([{"role": "user", "content": f"note {i} about refunds and parcels"}
                                              for i in range(8)])
            return [h.to_dict() for h in mf.search("refund parcel", limit=5)]

    assert run(db_path) == run(tmp_path / "other.db")


def test_store_read_with_query_uses_hybrid_search(hmf, clock):
    hmf.remember("ns", "semantic", "Dana prefers refunds to her card", key="refund.method", importance=0.4)
    hmf.remember("ns", "semantic", "Dana's parcel locker is at Elm Street", key="locker", importance=0.9)
    hmf.remember("ns", "procedural", "Refunds over 100 EUR need a supervisor", importance=0.8)
    hmf.remember("other", "semantic", "Refunds in another namespace", importance=1.0)
    plain = [r.record.content for r in hmf.memory.read("ns", 3, touch=False)]
    assert plain[0] == "Dana's parcel locker is at Elm Street"
    refunds = hmf.memory.read("ns", 5, query="refund", touch=False)
    assert [r.record.content for r in refunds] == ["Refunds over 100 EUR need a supervisor",
                                                   "Dana prefers refunds to her card"]
    assert refunds[0].score == pytest.approx(hmf.memory.read("ns", 1, types="procedural", touch=False)[0].score)
    typed = hmf.store("semantic", "ns").read(5, query="refund", touch=False)
    assert [r.record.content for r in typed] == ["Dana prefers refunds to her card"]
    assert hmf.memory.read("ns", 5, query="zebra", touch=False) == []
    touched = hmf.memory.read("ns", 1, query="locker")
    assert hmf.memory.get(touched[0].record.id).access_count == 1


def test_summary_cards_are_searched_and_scoped(db_path):
    from memfold import WindowSettings

    mf = memfold.MemFold(db_path, clock=memfold.LogicalClock(), token_counter="words", embedder="hashing",
                         window=WindowSettings(budget_tokens=60, output_reserve_tokens=0, hot_turns=2,
                                               rollup_fanin=3, leaf_chunk_tokens=20, card_target_tokens=8))
    conv = mf.conversation("c", namespace="acme")
    for i in range(40):
        conv.append({"role": "user", "content": f"order ORD-{i} ships to Elm street on May {i % 28 + 1}"})
    mf.conversation("other", namespace="globex").append({"role": "user", "content": "order ORD-1 elsewhere"})
    cards = mf.search("ORD ships Elm", kinds=["card"], conversation_id="c", limit=50)
    stored = {r[0]: r[1] for r in mf.db.execute("SELECT id, text FROM cards WHERE stale = 0")}
    assert cards and all(h.kind == "card" and stored[h.id] == h.text for h in cards)
    assert mf.search("ORD ships Elm", kinds=["card"], conversation_id="other") == []
    assert set(stored) <= set(mf.embeddings.matrix("card")[0].tolist())  # every live card was embedded
    mixed = mf.search("ORD ships Elm", conversation_id="c", limit=50)
    assert {h.kind for h in mixed} == {"turn", "card"}
    mf.close()
