"""The seed demo's script: the support session, the facts and the episodes (issues 7 and 20).

Everything here is data. :mod:`memfold.demo.acts` plays it through the public API on a
:class:`~memfold.LogicalClock`, so every run prints the same bytes (DESIGN.md §4.10), and what it
prints holds every line of the seed program's trace, ``../shared/seed/demo-trace.txt`` (issue 20,
point 1).

The session is the seed program's: ten turns, user lines and tool results (the program logs a
tool's result without the agent's call, so each result is an *orphan*: it stands alone in the
window). The trace shows each turn's first 38 characters and the last two whole; the rest of each
text is written here to the word counts the trace's meter implies.

The window is configured like the seed program (issue 20, point 1): words as tokens counted as
the program counts its lines (:class:`~memfold.SeedWordCounter`: a role label counts, a card's id
does not), budget 40, hot tail 2 turns, cards written by :class:`~memfold.SeedSummarizer` (one
warm line per decision, chatter dropped, the cold count when rolled up), every turn outside the hot
tail folded at each compaction (``fold_to_hot``), no system note and no memories section (the
program has neither), compaction down to the budget itself (soft watermark 100%).
"""

from __future__ import annotations

from typing import Any

from .. import WindowSettings

#: Where act 1 happens.
CONVERSATION = "ticket-42"
NAMESPACE = "acme/dana"
#: Act 3 consolidates in its own namespace so act 2's store stays exactly as printed.
EPISODES_NAMESPACE = "acme/dana/nightly"

#: The seed's window: 40 words, hot tail 2 (DESIGN.md §1a, demo column), folded as the program folds.
WINDOW = WindowSettings(
    budget_tokens=40,
    output_reserve_tokens=0,
    hot_turns=2,
    rollup_fanin=3,
    leaf_chunk_tokens=30,
    card_target_tokens=12,
    soft_watermark=1.0,
    hard_watermark=1.0,
    memories_k=0,
    system_note="",
    fold_to_hot=True,
)


def _tool(n: int, name: str, content: str) -> dict[str, Any]:
    """A tool result as the seed program logs it (its call is not in the session)."""
    return {"role": "tool", "name": name, "tool_call_id": f"call_{n}", "content": content}


#: The session: ten turns, as the seed program plays them.
TURNS: list[dict[str, Any]] = [
    {"role": "user", "content": "Hi, can I still return the earbuds from order ORD-3300?"},
    {"role": "assistant", "content": "Returns are accepted within 30 days of delivery."},
    {"role": "user", "content": "Oh interesting, thanks for checking that for me"},
    {"role": "user", "content": "It has actually been about 40 days since they arrived, though."},
    _tool(5, "search_policy", "after the window, a 10% restocking fee applies."),
    {"role": "user", "content": "Got it, that seems fair enough I suppose"},
    {"role": "user", "content": "So what would my refund be on the $200 order?"},
    _tool(8, "calculator", "$180.00 (200 * 0.9 after the fee)."),
    {"role": "user", "content": "Perfect. Could you also check the earbuds warranty?"},
    _tool(10, "search_products", "Globex earbuds carry a 2-year limited warranty."),
]

#: The seed program's opening note.
NOT_CONDENSATION = [
    "NOT the same as RAG P20 condensation: P20 rewrites the QUESTION into a standalone",
    "one; COMPACTION compresses the HISTORY to fit the window. Different operations.",
]
#: The trace shows this many characters of a turn's text after its role.
SHOWN_CHARS = 38

#: Act 2: the four facts of the forgetting seed trace (issue 3, point 5): (content, key, importance).
FACTS = [
    ("the user is Dana", "user.name", 0.90),
    ("Dana's order is ORD-3300 ($200)", "order.current", 0.70),
    ("Dana prefers email contact", "user.contact_preference", 0.60),
    ("Dana mentioned it is raining today", None, 0.20),
]
NEW_PREFERENCE = ("Dana prefers phone contact", "user.contact_preference", 0.60)
SUPERSESSION_NOTE = "Dana says to use the phone instead of email."
FIFTH_FACT = ("Dana clicked a promo email once", None, 0.15)
HALF_LIFE = 4
ACCESS_WEIGHT = 0.1
CAPACITY = 4
#: Act 2 starts at this tick (t=0); the name is read at t=3 and t=5, the store inspected at t=6.
FORGETTING_START = 20
NAME_READS = (3, 5)
INSPECT_AT = 6

#: Act 3: the four raw episodes of the consolidation seed case (issue 5, point 3).
EPISODES = [
    "user asked whether a return after the window is allowed",
    "tool said after the window a 10% restocking fee applies",
    "user accepted the $180.00 refund on the $200 order",
    "user confirmed their name is Dana",
]
CONSOLIDATION_START = 30
