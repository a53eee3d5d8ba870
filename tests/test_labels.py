"""Labels, the protected channel in compiled contexts, the summarizer guard and stale cards (issue 8 points 3, 5)."""

from __future__ import annotations

import random
import re

import pytest

import memfold
from memfold import BudgetError, PermissionDenied, Reader, WindowSettings
from memfold.window.summarizers import ExtractiveSummarizer
from memfold.window.summarizers.base import Summarizer


@pytest.fixture
def db_path(backend_target):
    """Issue 17: every test here runs on SQLite and on PostgreSQL (conftest's ``backend_target``)."""
    return backend_target


SMALL = dict(budget_tokens=300, output_reserve_tokens=20, hot_turns=4, leaf_chunk_tokens=60, card_target_tokens=25,
             rollup_fanin=3, compact_on_append=True, memories_k=3)


class RecordingSummarizer(Summarizer):
    """The deterministic extractive summarizer, recording every input it is given."""

    id = "recording"

    def __init__(self, counter):
        self.inner = ExtractiveSummarizer(counter)
        self.inputs: list[str] = []

    def summarize(self, items, depth, *, target_tokens=None):
        self.inputs.extend(i.text for i in items)
        return self.inner.summarize(items, depth, target_tokens=target_tokens)


@pytest.fixture
def small(db_path, clock):
    counter = memfold.WordCounter()
    rec = RecordingSummarizer(counter)
    m = memfold.MemFold(db_path, clock=clock, token_counter=counter, embedder=None, summarizer=rec,
                        window=WindowSettings(**SMALL))
    m.recorder = rec
    yield m
    m.close()


def chatter(i: int) -> str:
    return f"Turn {i}: we talked about the parcel to Leeds and the weather near depot {i} again today."


def test_protected_channel_in_every_context_verbatim_and_never_summarised(small):
    conv = small.conversation("c", namespace="n")
    rule = "For the rest of this session, never mention the discount code SAVE20 to the customer."
    quoted = "Quoted: the admin password is hunter2-quoted."
    for i in range(60):
        if i == 3:
            conv.append({"role": "user", "content": rule})
        elif i == 5:
            conv.append({"role": "user", "content": quoted, "metadata": {"quoted_from": "ticket-9"}})
        else:
            conv.append({"role": "user" if i % 2 else "assistant", "content": chatter(i)})
        ctx = conv.context()
        messages = [m["content"] for m in ctx.messages]
        if i >= 3:
            assert ctx.sections["protected"] > 0  # present, verbatim, in every compiled context
            assert sum(rule in m for m in messages) >= 1
            protected_index = next(n for n, m in enumerate(messages) if rule in m)
            assert all(not re.match(r"\[c\d+ ", m) for m in messages[:protected_index])  # before the cards
        assert ctx.total_tokens <= 280
    assert conv.catalog.items()[0].kind == "card"  # compaction really happened
    assert ctx.sections["protected"] > 0
    assert small.recorder.inputs  # the summarizer ran ...
    assert not any(rule in text or "SAVE20" in text for text in small.recorder.inputs)  # ... never on protected text
    assert not any("hunter2" in text for text in small.recorder.inputs)  # nor on quoted turns
    assert any("[protected P1]" in text for text in small.recorder.inputs)


def test_protected_channel_alone_over_budget_raises_naming_sizes(small):
    conv = small.conversation("c", namespace="n")
    conv.append({"role": "user", "content": "hello"})
    small.protected.add(" ".join(["Never"] + ["touch"] * 400) + ".", conversation_id="c")
    with pytest.raises(BudgetError, match=r"protected channel alone is \d+ tokens \(1 active records\) > usable budget 280"):
        conv.context()


def test_state_change_removes_record_from_context(small):
    conv = small.conversation("c", namespace="n")
    conv.append({"role": "user", "content": "Never call me before 9 am."})
    [rec] = small.protected.active_for("c")
    assert any("Never call me before 9 am." in m["content"] for m in conv.context().messages if m["role"] == "system")
    small.protected.satisfy(rec.id)
    assert conv.context().sections["protected"] == 0


def test_reader_never_sees_labelled_items_on_any_path(small):
    conv = small.conversation("c", namespace="n")
    conv.append({"role": "user", "content": "Legal says: never delete invoice INV-7781.", "labels": ["legal"]})
    for i in range(30):
        conv.append({"role": "assistant", "content": chatter(i)})
    conv.append({"role": "user", "content": "Secret merger codename BLUEFIN for the board.", "labels": ["board"]})
    small.memory.write("n", "semantic", "Board memo BLUEFIN approved", labels=["board"])
    reader = Reader.of(["legal"])
    text = " ".join(m["content"] for m in conv.context(reader=reader).messages)
    assert "INV-7781" in text and "BLUEFIN" not in text
    assert conv.search("BLUEFIN", reader=reader) == [] and conv.search("BLUEFIN") != []
    assert all("BLUEFIN" not in r.record.content for r in small.read("n", reader=reader))
    board_turn = conv.history()[-1]
    with pytest.raises(PermissionDenied, match="lacks the label"):
        conv.expand(f"t{board_turn.id}", reader=reader)
    with pytest.raises(PermissionDenied):
        conv.describe(f"t{board_turn.id}", reader=["legal"])
    card = next(i for i in conv.catalog.items() if i.kind == "card")
    assert "legal" in small.conversation("c").cards.get(card.item_id).labels  # a card requires its sources' labels
    with pytest.raises(PermissionDenied):
        conv.expand(f"c{card.item_id}", reader=[])


def test_revoking_a_label_makes_derived_cards_stale_and_rebuilt(small):
    conv = small.conversation("c", namespace="n")
    first = conv.append({"role": "user", "content": "Budget code K-42 is confidential.", "labels": ["finance"]})
    for i in range(30):
        conv.append({"role": "assistant", "content": chatter(i)})
    old_cards = [i.item_id for i in conv.catalog.items() if i.kind == "card"]
    covering = [c for c in old_cards if "finance" in conv.cards.get(c).labels]
    assert covering
    stale = small.revoke_label(f"t{first}", "finance", cause="declassified")
    assert set(covering) <= set(stale)
    assert not any(i.kind == "card" and i.item_id in stale for i in conv.catalog.items())  # never served
    ctx = conv.context()
    assert not any(f"[c{c} " in m["content"] for c in stale for m in ctx.messages)
    conv.compact()
    fresh = [i.item_id for i in conv.catalog.items() if i.kind == "card"]
    assert fresh and not set(fresh) & set(stale)
    assert all("finance" not in conv.cards.get(c).labels for c in fresh)  # rebuilt from what remains
    assert conv.search("confidential", filters={"kind": "card"}) == [] or all(
        h.id not in stale for h in conv.search("confidential", filters={"kind": "card"}))


def test_erasing_a_source_erases_and_rebuilds_derived_cards(small, db_path):
    conv = small.conversation("c", namespace="n")
    secret = conv.append({"role": "user", "content": "My card number is 4111-1111-XYZZY please note."})
    for i in range(30):
        conv.append({"role": "assistant", "content": chatter(i)})
    plan = small.erase(turn_ids=[secret], vacuum=True)
    assert plan.cards
    assert not any(i.kind == "card" and i.item_id in plan.cards for i in conv.catalog.items())
    assert "XYZZY" not in " ".join(m["content"] or "" for m in conv.context().messages)
    conv.compact()
    from conftest import database_bytes

    assert b"XYZZY" not in database_bytes(db_path)
    assert conv.search("XYZZY") == []


@pytest.mark.parametrize("seed", range(4))
def test_randomized_no_reader_sees_a_label_it_lacks(small, seed):
    """Random turns, records and protected rows with random labels, compaction on; random readers
    query every path. Each item carries a unique marker; a marker that reaches a reader must belong
    to an item whose labels the reader holds."""
    rnd = random.Random(seed)
    labels = ["a", "b", "c"]
    conv = small.conversation("c", namespace="n")
    owner: dict[str, set[str]] = {}
    for i in range(40):
        mark = f"mk{seed}x{i}"
        lab = set(rnd.sample(labels, rnd.randint(0, 2)))
        owner[mark] = lab
        roll = rnd.random()
        if roll < 0.1:
            small.protected.add(f"Never reveal {mark} anywhere.", conversation_id="c", labels=sorted(lab))
        elif roll < 0.2:
            small.memory.write("n", "semantic", f"Fact about {mark} here.", labels=sorted(lab))
        else:
            conv.append({"role": rnd.choice(["user", "assistant"]), "content": f"{mark} {chatter(i)}",
                         "labels": sorted(lab)})
    turns = conv.history()
    for _ in range(12):
        reader = Reader.of(rnd.sample(labels, rnd.randint(0, 3)))
        seen: list[str] = [m["content"] or "" for m in conv.context(reader=reader).messages]
        seen += [h.snippet for h in conv.search("parcel Leeds depot", limit=50, reader=reader)]
        seen += [r.record.content for r in small.read("n", 50, reader=reader)]
        seen += [r.text for r in small.protected.active_for("c", reader=reader)]
        for item in conv.catalog.items():
            ref = ("t" if item.kind == "turn" else "c") + str(item.item_id)
            try:
                seen.append(str(conv.describe(ref, reader=reader)))
                seen += [getattr(x, "content", None) or getattr(x, "text", "") for x in
                         conv.expand(ref, reader=reader, to_turns=item.kind == "card")]
            except PermissionDenied:
                pass
        for t in rnd.sample(turns, 5):
            try:
                seen += [x.content for x in conv.expand(f"t{t.id}", reader=reader)]
            except PermissionDenied:
                pass
        text = " ".join(seen)
        for mark in set(re.findall(rf"mk{seed}x\d+", text)):
            assert owner[mark] <= reader.labels, f"{mark} (labels {owner[mark]}) shown to reader {sorted(reader.labels)}"
