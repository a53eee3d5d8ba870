"""Append idempotency keys (issue 16): a retried append returns the turn its first attempt wrote.

Library tests on a real SQLite file; the race runs two real processes that append the same keys at
the same moment (a barrier releases both), and exactly one of them writes each turn.
"""

from __future__ import annotations

import multiprocessing

import pytest

import memfold
from memfold import InvalidInput, LogicalClock, MemFold
from memfold.memory.storage.sqlite.migrations import current_version


def test_a_retry_with_the_same_key_returns_the_first_id_and_writes_nothing(mf):
    conv = mf.conversation("ticket-1", namespace="acme/dana")
    first = conv.append({"role": "user", "content": "My order ORD-3300 arrived broken."}, idempotency_key="msg-1")
    again = conv.append({"role": "user", "content": "My order ORD-3300 arrived broken."}, idempotency_key="msg-1")
    assert again == first
    assert [t.id for t in conv.history()] == [first]
    assert mf.archive.verify() == []
    # a turn without a key is always written, even with the same content
    other = conv.append({"role": "user", "content": "My order ORD-3300 arrived broken."})
    assert other != first and len(conv.history()) == 2


def test_append_outcome_tells_which_turns_were_replayed(mf):
    conv = mf.conversation("ticket-1")
    one = conv.append_outcome([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
                              idempotency_keys=["k1", "k2"])
    assert one.replayed == (False, False) and one.written == one.turn_ids
    # the retried batch adds a third turn: the two known keys replay, the new one is written
    two = conv.append_outcome([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
                               {"role": "user", "content": "c"}], idempotency_keys=["k1", "k2", None])
    assert two.turn_ids[:2] == one.turn_ids and two.replayed == (True, True, False)
    assert two.written == (two.turn_ids[2],)
    assert [t.content for t in conv.history()] == ["a", "b", "c"]
    assert conv.append_many([{"role": "user", "content": "a"}], idempotency_keys=["k1"]) == [one.turn_ids[0]]
    assert two.to_dict() == {"turn_ids": list(two.turn_ids), "replayed": [True, True, False]}


def test_a_key_reused_for_other_content_is_refused_and_nothing_is_written(mf):
    conv = mf.conversation("ticket-1")
    conv.append({"role": "user", "content": "first"}, idempotency_key="k")
    with pytest.raises(InvalidInput, match=r"idempotency key 'k' was already used .* for turn t1 with other content"):
        conv.append_many([{"role": "user", "content": "new"}, {"role": "user", "content": "second"}],
                         idempotency_keys=[None, "k"])
    assert [t.content for t in conv.history()] == ["first"]
    # another role is other content too
    with pytest.raises(InvalidInput, match="other content"):
        conv.append({"role": "assistant", "content": "first"}, idempotency_key="k")


def test_keys_are_unique_per_conversation_not_per_file(mf):
    a = mf.conversation("a")
    b = mf.conversation("b")
    ta = a.append({"role": "user", "content": "hi"}, idempotency_key="same")
    tb = b.append({"role": "user", "content": "hi"}, idempotency_key="same")
    assert ta != tb
    # a fork has its own keys: the parent's key is not the fork's
    a2 = a.fork("a2")
    tf = a2.append({"role": "user", "content": "hi"}, idempotency_key="same")
    assert tf not in (ta, tb)
    assert [t.id for t in a2.history()] == [ta, tf]
    assert a2.append({"role": "user", "content": "hi"}, idempotency_key="same") == tf


@pytest.mark.parametrize("keys,message", [
    (["k", "k"], "given for two turns"),
    (["k"], "1 entries for 2 turns"),
    ("k1", "must be a list"),
    (["", None], "idempotency key 1"),
    ([" k", None], "whitespace"),
    (["x" * 201, None], "at most 200"),
    ([7, None], "idempotency key 1"),
])
def test_bad_keys_are_refused_before_anything_is_written(mf, keys, message):
    conv = mf.conversation("ticket-1")
    with pytest.raises(InvalidInput, match=message):
        conv.append_many([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}], idempotency_keys=keys)
    assert conv.history() == []


def test_a_replayed_turn_is_not_read_for_constraints_again(mf):
    conv = mf.conversation("ticket-1", namespace="acme/dana")
    turn = {"role": "user", "content": "Don't delete the old logs until I confirm."}
    conv.append(turn, idempotency_key="m1")
    assert len(mf.protected.active_for("ticket-1")) == 1
    events = len(mf.memory.events())
    conv.append(turn, idempotency_key="m1")
    assert len(mf.protected.active_for("ticket-1")) == 1
    assert len(mf.memory.events()) == events  # no protect event either: nothing happened


def test_a_retry_of_an_erased_turn_does_not_bring_it_back(mf):
    conv = mf.conversation("ticket-1", namespace="acme/dana")
    tid = conv.append({"role": "user", "content": "my card is 4111 1111"}, idempotency_key="m1")
    mf.erase(turn_ids=[tid])
    assert conv.append({"role": "user", "content": "my card is 4111 1111"}, idempotency_key="m1") == tid
    (turn,) = conv.history()
    assert turn.erased and turn.content == ""


def test_migration_7_adds_the_key_once_and_keeps_it_immutable(db_path):
    with MemFold(db_path, clock=LogicalClock(), token_counter="words") as mf:
        assert current_version(mf.db) >= 7
        names = [r[0] for r in mf.db.execute("SELECT name FROM schema_version WHERE version = 7")]
        assert names == ["turn_idempotency_keys"]
        conv = mf.conversation("c")
        tid = conv.append({"role": "user", "content": "hi"}, idempotency_key="k")
        with pytest.raises(Exception, match="set once"):
            mf.db.execute("UPDATE turns SET idempotency_key = 'other' WHERE id = ?", [tid])
        with pytest.raises(Exception, match="UNIQUE"):  # the index backs the check up
            mf.db.execute("INSERT INTO turns(conversation_id, family_id, seq, role, content, created_at, tokens, "
                          "sha256, idempotency_key) VALUES ('c', 'c', 9, 'user', 'x', 0, 1, 's', 'k')")
    with MemFold(db_path) as again:  # reopening applies nothing twice
        assert again.conversation("c").append({"role": "user", "content": "hi"}, idempotency_key="k") == tid


ROUNDS = 25


def _racer(path: str, barrier, results, worker: int) -> None:
    """One process: for each round, wait for the other at the barrier, then append the round's
    turn with the round's key; report (round, id, replayed)."""
    mf = MemFold(path, token_counter="words", embedder=None)
    conv = mf.conversation("race")
    out = []
    try:
        for i in range(ROUNDS):
            barrier.wait(timeout=120)
            outcome = conv.append_outcome([{"role": "user", "content": f"turn {i}"}], idempotency_keys=[f"k{i}"])
            out.append((i, outcome.turn_ids[0], outcome.replayed[0]))
    except Exception as exc:  # reported to the parent, which fails the test with it
        results.put((worker, repr(exc)))
        barrier.abort()
        return
    finally:
        mf.close()
    results.put((worker, out))


def test_two_processes_retrying_at_once_write_each_turn_once(db_path):
    with MemFold(db_path, token_counter="words", embedder=None) as mf:
        mf.conversation("race")
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(2)
    results = ctx.Queue()
    procs = [ctx.Process(target=_racer, args=(str(db_path), barrier, results, w)) for w in (0, 1)]
    for p in procs:
        p.start()
    got = dict(results.get(timeout=300) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    for worker, out in got.items():
        assert isinstance(out, list), f"worker {worker} failed: {out}"
    a, b = got[0], got[1]
    for (i, id_a, replayed_a), (j, id_b, replayed_b) in zip(a, b):
        assert i == j and id_a == id_b, f"round {i}: the two processes got turns {id_a} and {id_b}"
        assert replayed_a != replayed_b, f"round {i}: exactly one process writes the turn"
    with MemFold(db_path) as mf:
        history = mf.conversation("race").history()
        assert [t.content for t in history] == [f"turn {i}" for i in range(ROUNDS)]
        assert [t.id for t in history] == [id_ for _, id_, _ in a]


def test_append_outcome_is_exported_by_the_facade():
    from memfold.window.archive import AppendOutcome

    assert memfold.AppendOutcome is AppendOutcome
    assert AppendOutcome((1,), (False,)).written == (1,)
    assert memfold.Conversation.append_outcome.__doc__
