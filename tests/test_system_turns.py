"""A system turn is a standing instruction (issue 20, point 10): never folded into a card, shown
verbatim in every compiled context until a later system turn replaces it."""

from __future__ import annotations

import random

import pytest

from memfold import BudgetError, LogicalClock, MemFold, WindowSettings
from memfold.window.context import layout, measure_total
from memfold.window.summarizers import ExtractiveSummarizer

SETTINGS = WindowSettings(budget_tokens=120, output_reserve_tokens=10, hot_turns=3, leaf_chunk_tokens=30,
                          card_target_tokens=8, rollup_fanin=3, compact_on_append=True)
FIRST = "SYSTEM: you are the Northwind support agent; refunds above 50 euros need a supervisor."
SECOND = "SYSTEM: you are the Northwind billing agent now; answer in German."


class RecordingSummarizer(ExtractiveSummarizer):
    """The shipped extractive summarizer, keeping a copy of every text it was handed."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def summarize(self, items, depth, *, target_tokens=None):
        self.seen.extend(item.text for item in items)
        return super().summarize(items, depth, target_tokens=target_tokens)


@pytest.fixture
def summarizer():
    return RecordingSummarizer()


@pytest.fixture
def mf(tmp_path, summarizer):
    with MemFold(tmp_path / "s.db", clock=LogicalClock(), token_counter="words", embedder=None,
                 window=SETTINGS, summarizer=summarizer) as instance:
        yield instance


def _chat(conv, rng, n, start=0):
    for i in range(start, start + n):
        role = "user" if i % 2 == 0 else "assistant"
        words = " ".join(f"w{i}x{j}" for j in range(rng.choice([4, 7, 11])))
        conv.append({"role": role, "content": f"order ORD-{i} {words}"})


def _texts(ctx):
    return [m.get("content") or "" for m in ctx.messages]


def test_a_system_turn_stands_in_every_context_and_in_no_card(mf, summarizer):
    rng = random.Random(20)
    conv = mf.conversation("c", namespace="n")
    _chat(conv, rng, 6)
    sys_id = conv.append({"role": "system", "content": FIRST})
    for i in range(6, 90):
        _chat(conv, rng, 1, start=i)
        ctx = conv.context()
        texts = _texts(ctx)
        assert texts[0] == FIRST and ctx.messages[0]["role"] == "system"  # first, verbatim
        assert texts.count(FIRST) == 1 and sum(FIRST in t for t in texts) == 1  # never also in a card or in place
        assert ctx.sections["system"] == mf.archive.get(sys_id).tokens
        assert ctx.total_tokens <= ctx.usable_tokens
        assert measure_total(conv.parts, conv.ref, SETTINGS) == layout(conv.parts, conv.ref, SETTINGS).total_tokens
    cards = mf.storage.cards.family("c")
    assert max(card.depth for card in cards) >= 2  # leaf folds and roll-ups both ran
    assert any(f"t{sys_id}" in card.covers for card in cards)  # it was folded over, as a pointer
    assert not any("Northwind" in card.text or "supervisor" in card.text for card in cards)
    assert summarizer.seen and not any("Northwind" in text for text in summarizer.seen)  # it never reached one
    assert f"[t{sys_id}: system turn, not summarised; expand t{sys_id}]" in summarizer.seen
    assert conv.expand(f"t{sys_id}") is not None  # still in the archive, word for word
    assert mf.archive.get(sys_id).content == FIRST


def test_a_later_system_turn_replaces_the_earlier_one(mf, summarizer):
    rng = random.Random(7)
    conv = mf.conversation("c", namespace="n")
    conv.append({"role": "system", "content": FIRST})
    _chat(conv, rng, 30)
    conv.append({"role": "system", "content": SECOND})
    for i in range(30, 60):
        _chat(conv, rng, 1, start=i)
        texts = _texts(conv.context())
        assert texts[0] == SECOND and texts.count(SECOND) == 1
        assert not any("Northwind support agent" in t for t in texts)  # replaced: shown nowhere
    assert not any("Northwind" in card.text for card in mf.storage.cards.family("c"))
    assert not any("Northwind" in text for text in summarizer.seen)


def test_the_system_turn_is_not_shown_in_its_place_nor_counted_as_a_hot_turn(mf):
    conv = mf.conversation("c", namespace="n")
    conv.append({"role": "user", "content": "hello there"})
    sys_id = conv.append({"role": "system", "content": FIRST})
    conv.append({"role": "assistant", "content": "how can I help"})
    ctx = conv.context()
    assert _texts(ctx) == [FIRST, "hello there", "how can I help"]
    assert ctx.refs[0] == f"t{sys_id}" and f"t{sys_id}" not in ctx.hot_refs
    assert ctx.sections["hot_turns"] == 6 and ctx.sections["system"] == len(FIRST.split())


def test_a_fork_keeps_the_parents_system_turn_up_to_the_fork_point(mf):
    conv = mf.conversation("c", namespace="n")
    conv.append({"role": "system", "content": FIRST})
    conv.append({"role": "user", "content": "hello there"})
    fork = conv.fork("c2")
    conv.append({"role": "system", "content": SECOND})
    assert _texts(fork.context())[0] == FIRST
    assert _texts(conv.context())[0] == SECOND
    fork.append({"role": "system", "content": "SYSTEM: fork rules."})
    assert _texts(fork.context())[0] == "SYSTEM: fork rules." and _texts(conv.context())[0] == SECOND


def test_a_reader_without_its_labels_sees_no_system_turn(mf):
    conv = mf.conversation("c", namespace="n")
    conv.append({"role": "system", "content": FIRST, "labels": ["ops"]})
    conv.append({"role": "user", "content": "hello there"})
    assert _texts(conv.context(reader=["ops"]))[0] == FIRST
    ctx = conv.context(reader=[])
    assert FIRST not in _texts(ctx) and ctx.sections["system"] == 0


def test_a_system_turn_too_big_for_the_budget_is_named(mf):
    conv = mf.conversation("c", namespace="n")
    conv.append({"role": "system", "content": " ".join(["rule"] * 200)})
    conv.append({"role": "user", "content": "hello"})
    with pytest.raises(BudgetError, match=r"system turn 200"):
        conv.context()
