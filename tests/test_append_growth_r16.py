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
