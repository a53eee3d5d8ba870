"""The seed demo's script: the support ticket, the facts and the episodes (issue 7).

Everything here is data. :mod:`memfold.demo.acts` plays it through the public API on a
:class:`~memfold.LogicalClock` with the :class:`~memfold.WordCounter`, so every run prints the
same bytes (DESIGN.md §4.10).

What a *turn* is: one archived message (DESIGN.md §1), so a tool call (an assistant message with
``tool_calls``) and its result (a ``tool`` message) are two turns. The ticket has ten.

The window settings are the seed's (budget 40 words, hot tail 2 turns, roll-up fan-in 3) plus
three knobs sized for a 40-word budget: no system note (its 15 words would leave the cards almost
no room; production budgets keep it), cards of at most 12 words from at most 30 words of turns,
and compaction folding down to the budget itself (soft watermark 100%) rather than 70% of it.
"""

from __future__ import annotations

import json
from typing import Any

from .. import WindowSettings

#: Where act 1 happens.
CONVERSATION = "ticket-42"
NAMESPACE = "acme/dana"
#: Act 3 consolidates in its own namespace so act 2's store stays exactly as printed.
EPISODES_NAMESPACE = "acme/dana/nightly"

#: The seed's window: 40 words, hot tail 2, fan-in 3 (DESIGN.md §1a, demo column).
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
)


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """One OpenAI-shaped tool call."""
    return [{"id": call_id, "type": "function",
             "function": {"name": name, "arguments": json.dumps(arguments, separators=(",", ":"))}}]


#: The ticket: ten turns (user, assistant tool calls, tool results), two of them chatter.
TURNS: list[dict[str, Any]] = [
    {"role": "user", "content": "My $200 earbuds from order ORD-3300 arrived 41 days ago. Can I still return them?"},
    {"role": "assistant", "content": "", "tool_calls": _call("call_1", "policy_lookup", {"topic": "late return"})},
    {"role": "tool", "tool_call_id": "call_1", "name": "policy_lookup",
     "content": "Policy: 10% restocking fee after the 30-day window."},
    {"role": "user", "content": "Oh interesting, thanks for checking that for me"},
    {"role": "assistant", "content": "", "tool_calls": _call("call_2", "calculator", {"expression": "200*0.9"})},
    {"role": "tool", "tool_call_id": "call_2", "name": "calculator", "content": "$180.00 (200 * 0.9 after the fee)"},
    {"role": "user", "content": "Got it, that seems fair enough I suppose"},
    {"role": "user", "content": "Do the earbuds have a warranty?"},
    {"role": "assistant", "content": "",
     "tool_calls": _call("call_3", "product_search", {"query": "earbuds warranty"})},
    {"role": "tool", "tool_call_id": "call_3", "name": "product_search", "content": "2-year limited warranty"},
]

#: The turns (1-based) the script means as small talk: the window must drop them, the archive keep them.
CHATTER = (4, 7)

#: Act 2: the four facts of the forgetting seed trace (issue 3, point 5): (content, key, importance).
FACTS = [
    ("the user is Dana", "user.name", 0.90),
    ("Dana's order is ORD-3300 ($200)", "order.current", 0.70),
    ("Dana prefers email contact", "user.contact_preference", 0.60),
    ("Dana mentioned it is raining today", None, 0.20),
]
NEW_PREFERENCE = ("Dana prefers phone contact", "user.contact_preference", 0.60)
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
