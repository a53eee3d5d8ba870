"""Forgetting by policy on a real SQLite file: read, supersession, refresh, event time, revert,
eviction, store policies and the seed trace (issue 3 points 1-5)."""

import pytest

import memfold
from memfold import CapacityExceeded, InvalidInput, LogicalClock, MemFold, RecordNotFound, StorePolicy, WriteAction
from memfold.memory.forgetting import DEFAULT_HALF_LIFE_SECONDS, normalise_text

NS = "acme/dana"
SLOT = "user.contact_preference"


def scores_of(result):
    return [round(s.score, 2) for s in result]


def test_seed_trace(mf, clock):
    """The seed trace of issue 3 point 5, on a LogicalClock with half-life 4 and access weight 0.1.

    How reads, writes and ticks produce the figures:

    * t=0: the four facts are written, so age 0 and access_count 0: the scores are the
      importances 0.90 / 0.70 / 0.60 / 0.20. Looking at that ranking is an *inspection*
      (``read(..., touch=False)``), not an access: if it counted as a read of all four, the
      order fact would score 0.7 x 0.354 x 1.1 = 0.27 at t=6, not the 0.25 the trace gives.
    * Between t=0 and t=6 the agent reads its top memory twice (``read(NS, 1)`` at t=3 and
      t=5); both return the name, whose access_count becomes 2. Reads do not reset age.
    * t=6: recency = 0.5 ** (6 / 4) = 0.3536, so the name scores 0.9 x 0.3536 x 1.2 = 0.38, the
      order 0.25, email 0.21, weather 0.07 (again inspected without touching).
    * Still at t=6 "Dana prefers phone contact" (0.60) is written into the email fact's slot: it
      retires the email fact (linked both ways) and scores 0.60.
    * With capacity 4 the promo fact (0.15) is the fifth active record; the lowest-scoring
      evictable record is the weather remark (0.07; the promo itself is protected as the record
      just written), so it is evicted and the store reads 0.60 / 0.38 / 0.25 / 0.15.
    """
    mf.memory.set_policy(NS, "semantic", half_life=4, access_weight=0.1)
    name = mf.memory.write(NS, "semantic", "the user is Dana", key="user.name", importance=0.90)
    order = mf.memory.write(NS, "semantic", "Dana's order is ORD-3300 ($200)", key="order.current", importance=0.70)
    email = mf.memory.write(NS, "semantic", "Dana prefers email contact", key=SLOT, importance=0.60)
    weather = mf.memory.write(NS, "semantic", "Dana mentioned it is raining today", importance=0.20)

    at0 = mf.memory.read(NS, 10, touch=False)
    assert [s.record.id for s in at0] == [name.id, order.id, email.id, weather.id]
    assert scores_of(at0) == [0.90, 0.70, 0.60, 0.20]

    clock.set(3)
    assert [s.record.id for s in mf.memory.read(NS, 1)] == [name.id]
    clock.set(5)
    assert [s.record.id for s in mf.memory.read(NS, 1)] == [name.id]
    clock.set(6)
    at6 = mf.memory.read(NS, 10, touch=False)
    assert [s.record.id for s in at6] == [name.id, order.id, email.id, weather.id]
    assert scores_of(at6) == [0.38, 0.25, 0.21, 0.07]
    assert mf.memory.get(name.id).access_count == 2 and mf.memory.get(name.id).written_at == 0

    phone = mf.memory.write_outcome(NS, "semantic", "Dana prefers phone contact", key=SLOT, importance=0.60)
    assert phone.action is WriteAction.SUPERSEDE and phone.retired == (email.id,)
    retired = mf.memory.get(email.id)
    assert retired.status == "retired" and retired.superseded_by == phone.record.id
    assert phone.record.supersedes == email.id

    mf.memory.set_policy(NS, "semantic", capacity=4)
    promo = mf.memory.write_outcome(NS, "semantic", "Dana clicked a promo email once", importance=0.15)
    assert promo.evicted == (weather.id,)
    assert mf.memory.get(weather.id).status == "evicted"
    final = mf.memory.read(NS, 10, touch=False)
    assert [s.record.id for s in final] == [phone.record.id, name.id, order.id, promo.record.id]
    assert scores_of(final) == [0.60, 0.38, 0.25, 0.15]


# -- read ------------------------------------------------------------------------------------
def test_read_touch_counts_access_without_resetting_age(mf, clock):
    r = mf.memory.write(NS, "semantic", "fact", importance=0.5)
    clock.advance(4)
    (hit,) = mf.memory.read(NS, 5)
    assert hit.score == pytest.approx(0.25)
    assert hit.record.access_count == 0  # the record as it was when read
    after = mf.memory.get(r.id)
    assert (after.access_count, after.last_access_at, after.written_at) == (1, 4.0, 0.0)
    (hit,) = mf.memory.read(NS, 5, touch=False)
    assert hit.score == pytest.approx(0.25 * 1.1)
    assert mf.memory.get(r.id).access_count == 1


def test_read_is_top_k_deterministic_on_ties_and_filters_types(mf):
    ids = [mf.memory.write(NS, "semantic", f"same {i}", importance=0.5).id for i in range(4)]
    proc = mf.memory.write(NS, "procedural", "rule", importance=0.9).id
    mf.memory.write("other/ns", "semantic", "not mine", importance=1.0)
    assert [s.record.id for s in mf.memory.read(NS, 3, touch=False)] == [proc, ids[3], ids[2]]
    assert [s.record.id for s in mf.memory.read(NS, 10, types="semantic", touch=False)] == ids[::-1]
    assert [s.record.id for s in mf.memory.read(NS, 10, types=["procedural"], touch=False)] == [proc]
    assert mf.memory.read("nobody", 3) == []


def test_read_at_another_time_and_per_type_policies(mf):
    mf.memory.set_policy(NS, "working", half_life=1)
    w = mf.memory.write(NS, "working", "scratch", importance=1.0)
    s = mf.memory.write(NS, "semantic", "fact", importance=0.5)
    later = mf.memory.read(NS, 2, at=4, touch=False)
    assert [x.record.id for x in later] == [s.id, w.id]
    assert [x.score for x in later] == pytest.approx([0.5 * 0.5, 1.0 * 2 ** -4])
    assert all(x.at == 4.0 for x in later)


def test_reading_never_retires_or_evicts(mf, clock):
    mf.memory.set_policy(NS, "semantic", capacity=3)
    for i in range(3):
        mf.memory.write(NS, "semantic", f"fact {i}", importance=0.1 * (i + 1))
    before = [(r.id, r.status) for r in mf.memory.list(NS, include_inactive=True)]
    for _ in range(5):
        clock.advance(10)
        mf.memory.read(NS, 2)
    assert [(r.id, r.status) for r in mf.memory.list(NS, include_inactive=True)] == before


@pytest.mark.parametrize("kwargs,message", [
    ({"k": 0}, "limit must be a whole number >= 1"),
    ({"k": True}, "limit must be a whole number >= 1"),
    ({"types": ["facts"]}, "unknown record type 'facts'"),
    ({"types": []}, "types is empty"),
    ({"at": "yesterday"}, "must be a number of ticks"),
])
def test_read_rejects_bad_input(mf, kwargs, message):
    args = {"k": 3, **kwargs}
    with pytest.raises(InvalidInput, match=message):
        mf.memory.read(NS, args.pop("k"), **args)


# -- supersession and refresh ----------------------------------------------------------------
def test_supersession_retires_the_slot_and_links_both_ways(mf, clock):
    old = mf.memory.write(NS, "semantic", "Dana prefers email contact", key=SLOT, importance=0.6)
    clock.advance(2)
    new = mf.memory.write(NS, "semantic", "Dana prefers phone contact", key=SLOT, importance=0.6)
    old_now = mf.memory.get(old.id)
    assert (old_now.status, old_now.superseded_by, new.supersedes) == ("retired", new.id, old.id)
    assert old_now.content == "Dana prefers email contact"  # bytes kept
    (event,) = mf.memory.events(record_id=old.id, kind="retire")
    assert event.cause == f"superseded by record {new.id} in slot {SLOT}"
    assert event.at == 2.0 and event.details["superseded_by"] == new.id
    assert [r.id for r in mf.memory.list(NS, key=SLOT)] == [new.id]


def test_only_the_same_slot_is_superseded(mf):
    base = mf.memory.write(NS, "semantic", "Dana prefers email contact", key=SLOT)
    mf.memory.write(NS, "semantic", "Dana prefers email contact, not phone", key="user.other")
    mf.memory.write(NS, "semantic", "Dana prefers phone contact")  # no key
    mf.memory.write(NS, "semantic", "Dana prefers email contact")  # no key, identical text
    mf.memory.write(NS, "episodic", "Dana prefers phone contact", key=SLOT)  # other type
    mf.memory.write("acme/other", "semantic", "prefers phone contact", key=SLOT)  # other namespace
    assert mf.memory.get(base.id).status == "active"
    assert len(mf.memory.list(NS, "semantic")) == 4
    assert mf.memory.events(kind="retire") == []


def test_restating_refreshes_instead_of_adding(mf, clock):
    first = mf.memory.write(NS, "semantic", "Dana prefers email contact", key=SLOT, importance=0.4,
                            provenance=["turn:1"])
    clock.advance(5)
    outcome = mf.memory.write_outcome(NS, "semantic", "  dana prefers EMAIL   contact. ", key=SLOT, importance=0.7,
                                      provenance=["turn:9"])
    assert outcome.action is WriteAction.REFRESH and outcome.record.id == first.id
    assert (outcome.record.written_at, outcome.record.created_at, outcome.record.importance) == (5.0, 0.0, 0.7)
    assert outcome.record.content == "Dana prefers email contact"
    assert outcome.record.provenance == ("turn:1", "turn:9")
    assert len(mf.memory.list(NS, include_inactive=True)) == 1
    (event,) = mf.memory.events(kind="refresh")
    assert event.record_id == first.id and event.details["written_at"] == [0.0, 5.0]
    # a lower importance restated keeps the higher one
    assert mf.memory.write(NS, "semantic", "Dana prefers email contact", key=SLOT, importance=0.1).importance == 0.7


def test_normalise_text():
    assert normalise_text("Dana prefers  EMAIL\tcontact!!") == "dana prefers email contact"
    assert normalise_text("ＤＡＮＡ") == "dana"
    assert normalise_text("ORD-3300 ($200).") == "ord-3300 ($200)"


def test_same_meaning_hook_is_replaceable_and_only_asked_within_the_slot(mf):
    calls = []

    def same_meaning(existing, new):
        calls.append((existing, new))
        return "phone" in existing and "phone" in new

    mf.memory.same_meaning = same_meaning
    a = mf.memory.write(NS, "semantic", "call Dana by phone", key=SLOT)
    mf.memory.write(NS, "semantic", "phone is how Dana likes it", key="user.elsewhere")
    mf.memory.write(NS, "semantic", "phone again, no key")
    assert calls == []  # never asked across slots or without a key
    b = mf.memory.write(NS, "semantic", "Dana wants a phone call", key=SLOT)
    assert b.id == a.id and calls == [("call Dana by phone", "Dana wants a phone call")]
    c = mf.memory.write(NS, "semantic", "Dana wants email", key=SLOT)
    assert c.supersedes == a.id


def test_chain_a_b_a_keeps_history_and_newest_is_current(mf, clock):
    a = mf.memory.write(NS, "semantic", "prefers email", key=SLOT)
    clock.advance()
    b = mf.memory.write(NS, "semantic", "prefers phone", key=SLOT)
    clock.advance()
    a2 = mf.memory.write(NS, "semantic", "prefers email", key=SLOT)
    assert len({a.id, b.id, a2.id}) == 3
    rows = {r.id: r for r in mf.memory.list(NS, key=SLOT, include_inactive=True)}
    assert [rows[i].status for i in (a.id, b.id, a2.id)] == ["retired", "retired", "active"]
    assert (rows[a.id].superseded_by, rows[b.id].supersedes, rows[b.id].superseded_by, rows[a2.id].supersedes) == (
        b.id, a.id, a2.id, b.id)


def test_event_time_orders_statements(mf, clock):
    current = mf.memory.write(NS, "semantic", "lives in Paris", key="user.city", event_time=10)
    clock.advance()
    older = mf.memory.write_outcome(NS, "semantic", "lives in Lyon", key="user.city", event_time=5)
    assert older.action is WriteAction.STORE_RETIRED
    assert (older.record.status, older.record.superseded_by) == ("retired", current.id)
    assert mf.memory.get(current.id).supersedes == older.record.id
    assert [r.id for r in mf.memory.list(NS, key="user.city")] == [current.id]
    (event,) = mf.memory.events(record_id=older.record.id, kind="retire")
    assert "older statement" in event.cause
    # equal event time: ingestion order breaks the tie, the newer write wins
    tie = mf.memory.write(NS, "semantic", "lives in Nice", key="user.city", event_time=10)
    assert tie.status == "active" and mf.memory.get(current.id).status == "retired"
    # no event time on either side: ingestion order
    plain = mf.memory.write(NS, "semantic", "lives in Rome", key="user.city")
    assert plain.status == "active"


def test_older_statement_is_linked_at_its_place_in_history(mf):
    a = mf.memory.write(NS, "semantic", "v1", key="k", event_time=1)
    b = mf.memory.write(NS, "semantic", "v3", key="k", event_time=10)
    c = mf.memory.write(NS, "semantic", "v2", key="k", event_time=5)
    a, b, c = (mf.memory.get(x.id) for x in (a, b, c))
    assert (a.superseded_by, c.supersedes, c.superseded_by, b.supersedes) == (c.id, a.id, b.id, c.id)
    assert b.status == "active" and c.status == "retired"


# -- retire and revert -----------------------------------------------------------------------
def test_revert_reinstates_and_retires_the_current_value(mf):
    old = mf.memory.write(NS, "semantic", "prefers email", key=SLOT)
    new = mf.memory.write(NS, "semantic", "prefers phone", key=SLOT)
    back = mf.memory.revert(old.id, cause="wrong extraction")
    assert back.status == "active" and back.superseded_by is None
    displaced = mf.memory.get(new.id)
    assert displaced.status == "retired" and displaced.supersedes is None  # link removed on both sides
    (event,) = mf.memory.events(kind="revert")
    assert (event.record_id, event.cause, event.details["unlinked_successor"], event.details["retired"]) == (
        old.id, "wrong extraction", new.id, [new.id])
    assert [r.id for r in mf.memory.list(NS, key=SLOT)] == [old.id]


def test_manual_retire_and_revert_of_evicted(mf):
    r = mf.memory.write(NS, "semantic", "fact")
    assert mf.memory.retire(r.id, cause="obsolete").status == "retired"
    with pytest.raises(InvalidInput, match="only an active record can be retired"):
        mf.memory.retire(r.id)
    assert mf.memory.revert(r.id).status == "active"
    with pytest.raises(InvalidInput, match="only a retired or evicted record can be reverted"):
        mf.memory.revert(r.id)
    with pytest.raises(RecordNotFound):
        mf.memory.revert(999)
    mf.memory.set_policy(NS, "semantic", capacity=1)
    newer = mf.memory.write(NS, "semantic", "newer fact")
    assert mf.memory.get(r.id).status == "evicted"
    mf.memory.revert(r.id)
    assert mf.memory.get(r.id).status == "active" and mf.memory.get(newer.id).status == "evicted"


# -- eviction --------------------------------------------------------------------------------
def test_eviction_picks_lowest_score_skipping_pinned_and_just_written(mf, clock):
    mf.memory.set_policy(NS, "semantic", capacity=3, half_life=4)
    low = mf.memory.write(NS, "semantic", "low", importance=0.1, pinned=True)
    mid = mf.memory.write(NS, "semantic", "mid", importance=0.3)
    high = mf.memory.write(NS, "semantic", "high", importance=0.9)
    clock.advance(8)
    tiny = mf.memory.write_outcome(NS, "semantic", "tiny but new", importance=0.01)
    assert tiny.evicted == (mid.id,)  # low is pinned; tiny is the one just written
    assert {r.id for r in mf.memory.list(NS)} == {low.id, high.id, tiny.record.id}
    gone = mf.memory.get(mid.id)
    assert gone.content == "mid" and gone.status == "evicted"
    (event,) = mf.memory.events(kind="evict")
    assert event.details["score"] == pytest.approx(0.3 * 0.25) and event.details["capacity"] == 3
    assert [r.id for r in mf.memory.list(NS, status="evicted")] == [mid.id]
    assert len(mf.memory.list(NS, include_inactive=True)) == 4


def test_eviction_ties_are_deterministic(mf):
    mf.memory.set_policy(NS, "episodic", capacity=2)
    a = mf.memory.write(NS, "episodic", "a", importance=0.5)
    b = mf.memory.write(NS, "episodic", "b", importance=0.5)
    mf.memory.write(NS, "episodic", "c", importance=0.5)
    assert mf.memory.get(a.id).status == "evicted" and mf.memory.get(b.id).status == "active"


def test_capacity_is_per_namespace_and_type(mf):
    mf.memory.set_policy(NS, "semantic", capacity=1)
    mf.memory.write(NS, "semantic", "one")
    mf.memory.write(NS, "episodic", "other type")
    mf.memory.write("acme/other", "semantic", "other namespace")
    assert len(mf.memory.list(include_inactive=False)) == 3
    mf.memory.write(NS, "semantic", "two")
    assert [r.content for r in mf.memory.list(NS, "semantic")] == ["two"]


def test_full_store_of_pinned_records_refuses_the_write(mf):
    mf.memory.set_policy(NS, "semantic", capacity=1)
    mf.memory.write(NS, "semantic", "pinned", pinned=True)
    events_before = len(mf.memory.events())
    with pytest.raises(CapacityExceeded, match="capacity of 1, and 1 of them are pinned"):
        mf.memory.write(NS, "semantic", "does not fit")
    assert [r.content for r in mf.memory.list(NS, include_inactive=True)] == ["pinned"]
    assert len(mf.memory.events()) == events_before


def test_lowering_capacity_evicts_at_once(mf):
    ids = [mf.memory.write(NS, "semantic", f"f{i}", importance=0.1 * (i + 1)).id for i in range(5)]
    change = mf.memory.set_policy(NS, "semantic", capacity=2)
    assert change.evicted == (ids[0], ids[1], ids[2])
    assert [r.id for r in mf.memory.list(NS)] == ids[3:]
    mf.memory.pin(ids[3])
    mf.memory.pin(ids[4])
    with pytest.raises(CapacityExceeded):
        mf.memory.set_policy(NS, "semantic", capacity=1)
    assert mf.memory.policy(NS, "semantic").capacity == 2


def test_pin_and_unpin_are_logged(mf):
    r = mf.memory.write(NS, "semantic", "fact")
    assert mf.memory.pin(r.id).pinned is True
    assert mf.memory.unpin(r.id).pinned is False
    assert [e.kind for e in mf.memory.events(record_id=r.id)] == ["write", "pin", "unpin"]


# -- policies --------------------------------------------------------------------------------
def test_policy_defaults_and_persistence(db_path, clock):
    mf = MemFold(db_path, clock=clock, token_counter="words")
    assert mf.memory.policy(NS, "semantic") == StorePolicy(capacity=None, half_life=None, access_weight=0.1)
    assert StorePolicy().effective_half_life("semantic", "ticks") == 4.0
    assert StorePolicy().effective_half_life("working", "seconds") == DEFAULT_HALF_LIFE_SECONDS["working"] == 86_400
    change = mf.memory.set_policy(NS, "semantic", capacity=7, half_life=12.5)
    assert change.effective_half_life == 12.5
    mf.memory.set_policy(NS, "semantic", access_weight=0.3)  # other fields untouched
    mf.close()
    mf = MemFold(db_path, token_counter="words")
    assert mf.memory.policy(NS, "semantic") == StorePolicy(capacity=7, half_life=12.5, access_weight=0.3)
    mf.memory.set_policy(NS, "semantic", capacity=None, half_life=None)
    assert mf.memory.policy(NS, "semantic") == StorePolicy(access_weight=0.3)
    assert [e.kind for e in mf.memory.events(kind="policy")] == ["policy"] * 3
    mf.close()


@pytest.mark.parametrize("kwargs,message", [
    ({"capacity": 0}, "capacity must be at least 1"),
    ({"capacity": 2.5}, "capacity must be a whole number"),
    ({"half_life": 0}, "half_life must be > 0"),
    ({"half_life": float("nan")}, "half_life must be finite"),
    ({"access_weight": -0.1}, "access_weight must be >= 0"),
])
def test_bad_policy_is_rejected_and_nothing_changes(mf, kwargs, message):
    with pytest.raises(InvalidInput, match=message):
        mf.memory.set_policy(NS, "semantic", **kwargs)
    assert mf.memory.policy(NS, "semantic") == StorePolicy()
    assert mf.memory.events() == []


def test_writes_through_the_facade_and_typed_stores_follow_the_policy(mf):
    facts = mf.store("semantic", NS)
    facts.set_policy(capacity=2)
    facts.write("a", key="k1", importance=0.2)
    mf.remember(NS, "semantic", "b", key="k1", importance=0.5)
    facts.write("c", importance=0.9)
    facts.write("d", importance=0.8)
    assert [s.record.content for s in facts.read(5, touch=False)] == ["c", "d"]
    assert [s.record.content for s in mf.read(NS, 5, touch=False)] == ["c", "d"]
    assert facts.policy().capacity == 2
    assert isinstance(memfold.MemFold(mf.db, clock=LogicalClock()).memory.write(NS, "working", "x"), memfold.MemoryRecord)
