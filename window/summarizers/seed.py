"""The seed program's summarizer: a ledger of decisions, chatter dropped (issue 20, point 1).

The companion program of the design notes (its printed trace is ``../shared/seed/demo-trace.txt``)
compacts by rules the trace shows: a user line (a question, a reaction, small talk) is
conversation and leaves the window once it is out of the hot tail, since the answer and the tool
result that follow it keep what was settled; the agent's statements and tool results are the
*decisions* and stay warm, one line each as the program prints them (``calculator -> $180.00 ...``);
when the window is still over budget the oldest warm lines go cold, kept only as a count
(``[2 earlier turns summarized]``). This class writes those cards for memfold's real compactor:

* over turns (a leaf fold): one line per decision, in order; when the turns hold no decision it
  raises :class:`~memfold.memory.errors.NothingToKeep`, and the compactor folds them into the
  card before them, so chatter leaves the window without costing it a word;
* over a card and the turns after it (that absorbing fold): the card's lines, then the turns';
* over cards only (a roll-up): the cold count of the decisions they hold.

Deterministic and offline (DESIGN.md §4.10). It never invents text, but it drops user lines
from the window by design (they stay in the archive, and ``expand`` returns them): a production
window keeps them with :class:`~memfold.window.summarizers.extractive.ExtractiveSummarizer`.
"""

from __future__ import annotations

import re
from typing import Sequence

from ...memory.errors import NothingToKeep
from .base import FoldItem, Summarizer

_COLD = re.compile(r"^\[(\d+) earlier turns? summarized\]$")


def decision_line(item: FoldItem) -> str | None:
    """A turn as a warm line (``None`` for a user line or an empty turn): an assistant turn's
    text, a tool result as ``name -> text`` (the seed program's form)."""
    text = item.text.strip()
    if item.role == "user" or not text:
        return None
    return f"{item.name} -> {text}" if item.role == "tool" and item.name else text


def cold_count(text: str) -> int:
    """How many decisions a card's text holds: the number a cold line states, else its lines."""
    total = 0
    for line in text.splitlines():
        if line.strip():
            match = _COLD.match(line.strip())
            total += int(match.group(1)) if match else 1
    return total


class SeedSummarizer(Summarizer):
    """Cards as the seed program writes them (see the module docstring)."""

    id = "seed-v1"

    def summarize(self, items: Sequence[FoldItem], depth: int, *, target_tokens: int | None = None) -> str:
        """Warm lines over turns, the cold count over cards only.

        :raises NothingToKeep: when the items are turns that hold no decision.
        """
        cards = [i for i in items if i.kind == "card"]
        if cards and len(cards) == len(items):
            n = sum(cold_count(c.text) for c in cards)
            return f"[{n} earlier turn{'s' if n != 1 else ''} summarized]"
        lines = [line for c in cards for line in c.text.splitlines() if line.strip()]
        lines += [line for i in items if i.kind == "turn" for line in [decision_line(i)] if line]
        if not lines:
            raise NothingToKeep(f"{len(items)} turn(s) of conversation hold no decision or tool result")
        return "\n".join(lines)
