"""The small library methods the integrations stand on (issue 16): ``Conversation.fork(at=)``,
``Conversation.clear()``, ``Conversation.tail()`` and ``MemoryStore.write(restatement="exact")``."""

from __future__ import annotations

import re

import pytest

from memfold import InvalidInput, MemFold, LogicalClock, Reader, WindowSettings


def fill(conv, n, start=0):
    return [conv.append({"role": "user", "content": f"message {i}"}) for i in range(start, start + n)]


def test_fork_at_an_earlier_seq(mf):
    conv = mf.conversation("c", namespace="acme/dana")
    fill(conv, 5)
    fork = conv.fork("c-at-3", at=3)
    assert [t.content for t in fork.history()] == ["message 0", "message 1", "message 2"]
    assert fork.family_id == conv.family_id and fork.parent_id == "c" and fork.namespace == "acme/dana"
    fork.append({"role": "user", "content": "diverged"})
    assert [t.seq for t in fork.history()] == [1, 2, 3, 4]
    assert [t.content for t in conv.history()][-1] == "message 4"  # the parent is untouched
    assert [r for r in fork.context(budget=2000).refs] == ["t1", "t2", "t3", f"t{fork.history()[-1].id}"]
    for bad in (6, -1, 2.5, True):
        with pytest.raises(InvalidInput, match="fork point"):
            conv.fork(f"bad-{bad}", at=bad)
    assert "bad-6" not in mf.conversations()


def test_fork_at_splits_a_card_that_reaches_past_the_fork_point(tmp_path):
    mf = MemFold(tmp_path / "f.db", clock=LogicalClock(), token_counter="words", embedder=None,
                 window=WindowSettings(budget_tokens=60, output_reserve_tokens=0, hot_turns=2, rollup_fanin=3,
                                       leaf_chunk_tokens=20, card_target_tokens=6))
    conv = mf.conversation("long")
    for i in range(12):
        conv.append({"role": "user", "content": f"order ORD-{i} ships from dock {i} on May {i} at noon"})
    conv.compact(target_tokens=0)
    card = next(item for item in conv.catalog_items() if item.kind == "card" and item.depth > 1)
    at = (card.first_seq + card.last_seq) // 2  # inside the card: the fork must not show what follows
    assert card.first_seq < at < card.last_seq
    fork = conv.fork("long-fork", at=at)
    items = fork.catalog_items()
    assert items[-1].last_seq == at and [i.first_seq for i in items][0] == 1
    assert all(a.last_seq + 1 == b.first_seq for a, b in zip(items, items[1:]))  # a contiguous cover
    assert len(fork.history()) == at
    shown = " ".join(m["content"] for m in fork.context().messages)
    assert re.findall(r"ORD-(\d+)", shown) and all(int(n) < at for n in re.findall(r"ORD-(\d+)", shown))
    assert all(int(n) < at for card_ in items if card_.kind == "card"
               for t in fork.expand(card_.item_id, to_turns=True) for n in re.findall(r"ORD-(\d+)", t.content))
    mf.close()


def test_clear_starts_an_empty_session_in_the_family(mf):
    conv = mf.conversation("c", namespace="acme/dana")
    fill(conv, 3)
    mf.remember("acme/dana", "semantic", "Dana prefers email", key="user.contact")
    fresh = conv.clear("c-2")
    assert fresh.history() == [] and fresh.family_id == "c" and fresh.namespace == "acme/dana"
    assert [m["content"] for m in fresh.context(budget=2000).messages] == [
        "Memories:\n- [semantic user.contact] Dana prefers email"]
    assert len(conv.history()) == 3
    fresh.append({"role": "user", "content": "hello"})
    assert [t.seq for t in fresh.history()] == [1]
    with pytest.raises(InvalidInput, match="already exists"):
        conv.clear("c-2")


def test_tail_reads_the_end(mf):
    conv = mf.conversation("t")
    assert conv.tail(3) == []
    fill(conv, 6)
    assert [t.content for t in conv.tail()] == ["message 5"]
    assert [t.content for t in conv.tail(2)] == ["message 4", "message 5"]
    assert len(conv.tail(50)) == 6
    fork = conv.fork("t2", at=4)
    fill(fork, 1, start=10)
    assert [t.content for t in fork.tail(2)] == ["message 3", "message 10"]
    conv.append({"role": "user", "content": "my PIN is 4471"})  # labelled secret
    assert [t.content for t in conv.tail(2, reader=Reader.of([]))] == ["message 4", "message 5"]
    for bad in (0, -1, "2"):
        with pytest.raises(InvalidInput, match="tail"):
            conv.tail(bad)


def test_exact_restatement_keeps_every_distinct_value(mf):
    ns = "acme/dana"
    first = mf.remember(ns, "semantic", "Dana likes pizza", key="food")
    same = mf.remember(ns, "semantic", "dana likes PIZZA.", key="food")  # default: a restatement
    assert same.id == first.id
    cased = mf.memory.write_outcome(ns, "semantic", "DANA LIKES PIZZA", key="food", restatement="exact")
    assert cased.action.value == "supersede" and cased.retired == (first.id,)
    again = mf.memory.write_outcome(ns, "semantic", "DANA LIKES PIZZA", key="food", restatement="exact")
    assert again.action.value == "refresh" and again.record.id == cased.record.id
    assert [r.content for r in mf.memory.list(ns, "semantic", key="food", include_inactive=True)] == [
        "Dana likes pizza", "DANA LIKES PIZZA"]
    with pytest.raises(InvalidInput, match="restatement"):
        mf.remember(ns, "semantic", "x", key="food", restatement="fuzzy")
    assert len(mf.memory.list(ns, include_inactive=True)) == 2
