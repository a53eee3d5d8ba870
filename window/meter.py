"""The window meter: the compiled context's size right after each appended turn (issue 4).

A meter appends a turn without the append's own compaction, reads the size, then applies the same
watermark rule the append would (compact at the hard watermark, or at the soft one with
``compact_on_append``) and reads the size again. So one reading shows the window both between the
append and its compaction and after it; the budget rule (DESIGN.md §4.5) is kept all the same,
and a reading that stays over the budget says which sections need the room.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: the ``still_over`` keys, in the order a reading lists them
STILL_OVER_KEYS = ("hot_turns", "system", "system_note", "protected", "older", "total")


@dataclass(frozen=True)
class MeterReading:
    """One meter reading, in tokens of the conversation's counter.

    :param turn: the appended turn's seq in the conversation (1 for the first).
    :param id: the appended turn's id.
    :param tokens: the compiled context's size right after the append (before any compaction).
    :param usable: the usable budget (``budget - output reserve``).
    :param state: ``"over"`` when pressure passed the usable budget, ``"due"`` when it reached the
        soft watermark, else ``"ok"``.
    :param after: the size once compaction ran (``None``: none ran).
    :param failures: summarizer failures of that compaction (``None``: none ran).
    :param still_over: when compaction could not get within the budget, the sizes that need the
        room: ``hot_turns``, ``system`` (the standing system turn), ``system_note``, ``protected``,
        ``older`` (cards and older turns) and their ``total``; else ``None``.
    """

    turn: int
    id: int
    tokens: int
    usable: int
    state: str = "ok"
    after: int | None = None
    failures: int | None = None
    still_over: dict[str, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``memfold window --json`` prints one per turn): ``turn``, ``id``,
        ``tokens``, ``usable``, ``state`` and ``after``; ``failures`` when compaction ran,
        ``still_over`` when it stayed over the budget."""
        out: dict[str, Any] = {"turn": self.turn, "id": self.id, "tokens": self.tokens, "usable": self.usable,
                               "state": self.state, "after": self.after}
        if self.after is not None:
            out["failures"] = self.failures
        if self.still_over is not None:
            out["still_over"] = dict(self.still_over)
        return out
