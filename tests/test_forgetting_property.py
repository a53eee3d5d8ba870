"""Property test (hypothesis) over random writes, reads, clock advances, capacity and policy
changes, pins, retirements and reverts (issue 3 point 7; DESIGN.md §4.7).

After every step: at most one active record per slot, no store holds more active records than its
capacity, no row ever disappears or changes its text, supersession links agree both ways, and
``read`` returns exactly the top k by an independently computed score, in score order.
"""

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memfold import CapacityExceeded, InvalidInput, LogicalClock, MemFold

NAMESPACES = ["ns/a", "ns/b"]
TYPES = ["semantic", "episodic"]
KEYS = [None, "k1", "k2"]
TEXTS = ["likes tea", "Likes tea.", "likes coffee", "lives in Oslo", "lives in Rome"]

write_op = st.tuples(st.just("write"), st.sampled_from(NAMESPACES), st.sampled_from(TYPES), st.sampled_from(KEYS),
                     st.sampled_from(TEXTS), st.sampled_from([0.0, 0.2, 0.5, 0.9, 1.0]),
                     st.one_of(st.none(), st.integers(0, 6)), st.booleans())
read_op = st.tuples(st.just("read"), st.sampled_from(NAMESPACES), st.integers(1, 6), st.booleans())
advance_op = st.tuples(st.just("advance"), st.integers(0, 5))
capacity_op = st.tuples(st.just("capacity"), st.sampled_from(NAMESPACES), st.sampled_from(TYPES),
                        st.one_of(st.none(), st.integers(1, 4)))
policy_op = st.tuples(st.just("policy"), st.sampled_from(NAMESPACES), st.sampled_from(TYPES),
                      st.sampled_from([1.0, 4.0, 10.0]), st.sampled_from([0.0, 0.1, 1.0]))
record_op = st.tuples(st.sampled_from(["pin", "unpin", "retire", "revert"]), st.integers(0, 50))
operations = st.lists(st.one_of(write_op, write_op, read_op, advance_op, capacity_op, policy_op, record_op),
                      min_size=1, max_size=30)


def snapshot(mf):
    return {r.id: r for r in mf.memory.list(include_inactive=True)}


def reference_top(mf, namespace, k, now):
    rows = []
    for r in mf.memory.list(namespace):
        p = mf.memory.policy(namespace, r.type)
        age = max(0.0, now - r.written_at)
        s = r.importance * 0.5 ** (age / p.effective_half_life(r.type, "ticks")) * (1 + p.access_weight * r.access_count)
        rows.append((s, r.id))
    rows.sort(key=lambda x: (-x[0], -x[1]))
    return rows[:k]


def check_invariants(mf, before):
    rows = snapshot(mf)
    # no row disappears, no text changes
    for record_id, old in before.items():
        assert record_id in rows and rows[record_id].content == old.content
    # at most one active per slot; active count within capacity
    slots, stores = {}, {}
    for r in rows.values():
        if r.status != "active":
            continue
        stores[(r.namespace, r.type)] = stores.get((r.namespace, r.type), 0) + 1
        if r.key is not None:
            slot = (r.namespace, r.type, r.key)
            assert slot not in slots, f"two active records in slot {slot}"
            slots[slot] = r.id
    for (ns, type), n in stores.items():
        cap = mf.memory.policy(ns, type).capacity
        assert cap is None or n <= cap
    # links agree both ways
    for r in rows.values():
        if r.superseded_by is not None:
            assert rows[r.superseded_by].supersedes == r.id
        if r.supersedes is not None:
            assert rows[r.supersedes].superseded_by == r.id
    return rows


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations)
def test_forgetting_invariants_hold_under_random_operations(ops):
    with tempfile.TemporaryDirectory() as tmp:
        clock = LogicalClock()
        mf = MemFold(Path(tmp) / "prop.db", clock=clock, token_counter="words")
        try:
            before = {}
            for op in ops:
                kind = op[0]
                try:
                    if kind == "write":
                        _, ns, type, key, text, importance, event_time, pinned = op
                        mf.memory.write(ns, type, text, key=key, importance=importance, event_time=event_time,
                                        pinned=pinned)
                    elif kind == "read":
                        _, ns, k, touch = op
                        expected = reference_top(mf, ns, k, clock.now())
                        got = mf.memory.read(ns, k, touch=touch)
                        assert [s.record.id for s in got] == [i for _, i in expected]
                        assert all(abs(s.score - e) < 1e-12 for s, (e, _) in zip(got, expected))
                        assert [s.score for s in got] == sorted((s.score for s in got), reverse=True)
                    elif kind == "advance":
                        clock.advance(op[1])
                    elif kind == "capacity":
                        mf.memory.set_policy(op[1], op[2], capacity=op[3])
                    elif kind == "policy":
                        mf.memory.set_policy(op[1], op[2], half_life=op[3], access_weight=op[4])
                    else:
                        ids = sorted(before)
                        if not ids:
                            continue
                        getattr(mf.memory, kind)(ids[op[1] % len(ids)])
                except CapacityExceeded:
                    # a refused change leaves every row as it was
                    assert {i: (r.status, r.pinned) for i, r in snapshot(mf).items()} == {
                        i: (r.status, r.pinned) for i, r in before.items()}
                except InvalidInput as exc:
                    assert kind in ("retire", "revert"), exc  # retiring an inactive / reverting an active record
                before = check_invariants(mf, before)
        finally:
            mf.close()
