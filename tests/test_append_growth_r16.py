"""Issue 18, point 4 (round 16): what a user append reads does not grow with the conversation.

A decision override ("Scratch that, let's go with ...") replaces the decision in force and names
its whole chain of earlier decisions, which grows with the conversation. The chain's records are
read in one statement, not one per record (real SQLite files, the statement trace of the append).
"""

from __future__ import annotations

import re

from memfold import LogicalClock, MemFold, WindowSettings
from test_statements import traced  # the trace of one call's statements, SQLite's nested ones aside

PROTECTED_READ = re.compile(r"^SELECT id, namespace, conversation_id, kind, text\b.*\bFROM protected\b")
COLOURS = ["blue", "red", "green", "yellow", "purple", "orange", "white", "black", "grey", "brown", "pink", "teal"]


def decided(path, overrides: int):
    """A conversation where the user changed their mind ``overrides`` times, then the traced
    statements of one more override, the conversation and its facade."""
    mf = MemFold(path, clock=LogicalClock(), token_counter="words", embedder=None,
                 window=WindowSettings(budget_tokens=4000, output_reserve_tokens=200, hot_turns=8))
    conv = mf.conversation("c", namespace="ns")
    for colour in COLOURS[:overrides]:
        conv.append({"role": "user", "content": f"Scratch that, let's go with the {colour} tent instead."})
        conv.append({"role": "assistant", "content": "Noted."})
    _, statements = traced(mf, lambda: conv.append(
        {"role": "user", "content": "Scratch that, let's go with the striped tent instead."}))
    return mf, conv, statements


def test_an_override_reads_the_chain_it_replaces_in_one_statement(tmp_path):
    short, _, few = decided(tmp_path / "short.db", 2)
    long, conv, many = decided(tmp_path / "long.db", 12)
    try:
        # the same reads of protected records whatever the chain's length (it was one per record)
        assert sum(bool(PROTECTED_READ.match(s)) for s in many) == sum(bool(PROTECTED_READ.match(s)) for s in few)
        active = [r for r in long.protected.list(state="active") if r.kind == "policy_state"]
        assert [r.text for r in active] == ["Scratch that, let's go with the striped tent instead."]
        meta = active[0].metadata
        earlier = [r for r in long.protected.list(state="superseded") if r.kind == "policy_state"]
        assert sorted(meta["replaces"]) == sorted(r.id for r in earlier) and len(earlier) == 12
        assert all(r.superseded_by is not None for r in earlier)
        rendered = "\n".join(m["content"] for m in conv.context().messages if m["role"] == "system")
        for colour in COLOURS:
            assert f"the {colour} tent" in rendered  # every replaced decision is named, no longer in force
    finally:
        short.close()
        long.close()


TURNS_READ = re.compile(r"^SELECT id, conversation_id, family_id, seq\b.*\bFROM turns WHERE conversation_id = '(\w+)' AND seq > (\d+)")


def long_chat(path, filler: int):
    """A conversation whose decision is stated among its six newest user turns, after ``filler``
    turns of chat, with no decision in force: an override looks back at those turns for it."""
    mf = MemFold(path, clock=LogicalClock(), token_counter="words", embedder=None,
                 window=WindowSettings(budget_tokens=100_000, output_reserve_tokens=200, hot_turns=8))
    conv = mf.conversation("c", namespace="ns")
    conv.append({"role": "user", "content": "We should take the train to Leeds."})  # too far back
    conv.append_many([{"role": "assistant", "content": f"note {i}"} for i in range(filler)])
    conv.append({"role": "user", "content": "We should take the coach to York."})
    for i in range(5):  # more user turns: the override reads back to the sixth
        conv.append({"role": "assistant", "content": "Sure."})
        conv.append({"role": "user", "content": f"The weather is grey today, part {i}."})
    return mf, conv


def test_an_override_with_no_decision_in_force_reads_only_the_newest_turns(tmp_path):
    mf, conv = long_chat(tmp_path / "long.db", 400)
    try:
        _, statements = traced(mf, lambda: conv.append(
            {"role": "user", "content": "Scratch that, let's take the plane instead."}))
        reads = [int(m.group(2)) for s in statements if (m := TURNS_READ.match(s))]
        assert reads and min(reads) > 300  # the newest turns only, not all 400 (it read from seq 0)
        superseded = [r.text for r in mf.protected.list(state="superseded")]
        assert superseded == ["We should take the coach to York."]  # the newest earlier decision
        active = [r for r in mf.protected.list(state="active") if r.kind == "policy_state"]
        assert active[0].metadata["replaces_text"] == ["We should take the coach to York."]
    finally:
        mf.close()


def test_an_override_looks_back_at_six_user_turns_past_assistant_turns_erasures_and_a_fork(tmp_path):
    # the window widens until it holds six user turns (here through 60 assistant turns, an erased
    # user turn and the parent's turns a fork shares): the same turns the whole history gave
    mf = MemFold(tmp_path / "f.db", clock=LogicalClock(), token_counter="words", embedder=None,
                 window=WindowSettings(budget_tokens=100_000, output_reserve_tokens=200, hot_turns=8))
    try:
        conv = mf.conversation("p", namespace="ns")
        conv.append({"role": "user", "content": "Let's meet at the library."})  # the sixth user turn back
        erased = conv.append({"role": "user", "content": "I had pasta for lunch."})
        conv.append_many([{"role": "assistant", "content": f"note {i}"} for i in range(60)])
        fork = conv.fork("f")
        for i in range(4):
            fork.append({"role": "user", "content": f"The weather is grey today, part {i}."})
        fork.append_many([{"role": "assistant", "content": f"reply {i}"} for i in range(30)])
        fork.append({"role": "user", "content": "My sister called."})
        mf.erase(turn_ids=[erased])
        fork.append({"role": "user", "content": "Scratch that, let's meet at the park instead."})
        superseded = [r.text for r in mf.protected.list(state="superseded")]
        # six user turns back from the override: the fork's five and the parent's first
        assert superseded == ["Let's meet at the library."]
    finally:
        mf.close()


def test_an_override_chain_on_each_backend(backend_target):
    # the chain's records read in one statement (locked inside the write on PostgreSQL, as one
    # get per record was): each earlier decision superseded by the one after it, the newest named
    mf = MemFold(backend_target, clock=LogicalClock(), token_counter="words", embedder=None)
    try:
        conv = mf.conversation("c", namespace="ns")
        for colour in COLOURS[:4]:
            conv.append({"role": "user", "content": f"Scratch that, let's go with the {colour} tent instead."})
        records = sorted(mf.protected.list(namespace="ns", state=None), key=lambda r: r.id)
        assert [r.state for r in records] == ["superseded"] * 3 + ["active"]
        assert [r.superseded_by for r in records[:3]] == [records[1].id, records[2].id, records[3].id]
        assert records[3].metadata["replaces"] == [r.id for r in records[:3]]
        # the one in force first, then the chain it carried
        assert records[3].metadata["replaces_text"] == [records[2].text, records[0].text, records[1].text]
    finally:
        mf.close()
