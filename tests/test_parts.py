"""The window engines run on their parts alone (issue 12, point 2; DESIGN.md §2 "Parts").

A :class:`WindowParts` built from an opened storage, without any :class:`MemFold`, drives a
conversation through append, compaction, the compiled context and the recall tools; the facade
builds one and shares it, so a part swapped on the facade reaches the conversations it handed out.
"""

from __future__ import annotations

import dataclasses

import pytest

from memfold import (
    Archive,
    ConversationNotFound,
    ExtractiveSummarizer,
    LogicalClock,
    MemFold,
    MemoryStore,
    ProtectedChannel,
    WindowSettings,
    WordCounter,
)
from memfold.memory.storage import open_storage
from memfold.window.conversation import Conversation
from memfold.window.parts import ConversationRef, WindowParts


def test_a_conversation_runs_on_parts_built_without_the_facade(db_path):
    clock, counter = LogicalClock(), WordCounter()
    storage = open_storage(db_path, clock.kind)
    archive = Archive(storage, clock, counter)
    parts = WindowParts(storage=storage, clock=clock, token_counter=counter, summarizer=ExtractiveSummarizer(counter),
                        window=WindowSettings(budget_tokens=80, output_reserve_tokens=8, hot_turns=2,
                                              leaf_chunk_tokens=20, card_target_tokens=6, rollup_fanin=3),
                        archive=archive, protected=ProtectedChannel(storage, clock, counter),
                        memory=MemoryStore(storage, clock))
    archive.create_conversation("t", "acme")
    conv = Conversation(parts, ConversationRef.load(archive, "t"))
    parts.protected.add("Never share the PIN.", conversation_id="t")
    parts.memory.write("acme", "semantic", "Dana prefers email.", key="user.contact")
    for i in range(30):
        conv.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"order ORD-{i} is on its way now"})
    ctx = conv.context()
    assert ctx.total_tokens <= 72 and ctx.sections["cards"] > 0  # folded to fit
    assert ctx.sections["protected"] > 0 and any("Never share the PIN." in m["content"] for m in ctx.messages)
    card = next(r for r in ctx.refs if r.startswith("c"))
    assert conv.expand(card, to_turns=True)  # every map leads back to the words
    assert conv.search("ORD-3")[0].ref.startswith(("t", "c"))
    storage.close()


def test_a_ref_holds_the_lineage_of_a_fork_and_refuses_an_unknown_conversation(mf):
    root = mf.conversation("root", namespace="acme")
    root.append({"role": "user", "content": "one"})
    root.append({"role": "assistant", "content": "two"})
    fork = root.fork("fork")
    assert fork.ref == ConversationRef("fork", "acme", "root", "root", (("root", 2), ("fork", None)))
    assert fork.ref.fork_after_seq == 2 and root.ref.fork_after_seq is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        fork.ref.namespace = "other"  # type: ignore[misc]
    with pytest.raises(ConversationNotFound):
        ConversationRef.load(mf.archive, "nope")


def test_the_facade_shares_one_parts_object_and_swaps_reach_every_conversation(db_path):
    mf = MemFold(db_path, clock=LogicalClock(), token_counter="words", embedder=None)
    a, b = mf.conversation("a"), mf.conversation("b")
    assert a.parts is b.parts is mf.parts
    assert not hasattr(a, "memfold") and not hasattr(a, "db")
    small = WindowSettings(budget_tokens=500, output_reserve_tokens=50)
    mf.window = small  # as `memfold window` does after opening the conversation
    assert a.window_settings() == small and b.context().budget_tokens == 500
    mf.secret_detector = None
    a.append({"role": "user", "content": "my PIN is 4471"})
    assert a.history()[-1].labels == ()  # detection off for the conversations handed out before
    mf.close()
