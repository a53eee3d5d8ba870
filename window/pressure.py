"""The watermark check after an append, without measuring the window each time (issue 13, points 2, 9).

After every append the window must know whether the conversation crossed a watermark: past the
soft line it leaves a compaction note, past the hard one it folds in the foreground. Measuring
(:func:`~memfold.window.context.measure_total`) reads the catalog (syncing it first, a write
transaction), the protected channel and the standing system turn; done after every append it made
an append past the soft line cost three commits and a protected-channel render instead of one
commit (issue 13: append p95 5x that of an append with no compaction at 10K turns).

So each process keeps, per conversation, an **upper bound** of the pressure: the pressure last
measured plus the tokens of every turn this process appended since, plus the system note's tokens
(a first card brings the note in). Appending never lowers a bound; folding, erasing and clearing
the reported usage only lower the real pressure, so a stale bound is only too high, and a bound
at or past the soft line is checked against the notes (one read) and measured in full when no
note is waiting (the first append after a fold) or when it reaches the hard line.

The fold card (issue 14) is the one part that can grow by more than the turns appended: it joins
the window, whole, once the work since the last card reaches ``fold_card_tool_calls`` tool results
or ``fold_card_tokens`` tokens, and then lists every new turn. So the bound also carries that work
(measured, plus what each append adds), and an append after which a card may show measures in full.

The bound is dropped, so the next append measures in full, when it cannot hold:

* another writer appended to the conversation since (the new turn's seq is not the next one);
* the append's turns made protected records (the constraint tracker), or usage was reported;
* the window settings changed, or ``remeasure_every`` appends went by on the bound, which
  catches what this process cannot see (a record protected by another process);
* the work since the last card reached a fold-card threshold (the card may show).

Nothing here decides correctness: ``context()`` always measures in full and folds at the hard
line (DESIGN.md §4.5), and the worker's scanner notes a conversation over the soft line without a
note. The bound only decides when an append may skip the measurement.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from .settings import WindowSettings

#: appends a bound may be carried over before the next append measures in full
REMEASURE_EVERY = 64


@dataclass
class _Bound:
    tokens: int
    next_seq: int
    settings: WindowSettings
    appends: int = 0
    work_results: int = 0  #: tool results since the last card (the fold card's first threshold)
    work_tokens: int = 0  #: tokens since the last card (its second threshold)


class PressureBounds:
    """Per-conversation pressure bounds of one process (shared by the threads of one facade).

    :param remeasure_every: the most appends one measurement serves (see the module docstring).
    """

    def __init__(self, remeasure_every: int = REMEASURE_EVERY) -> None:
        self.remeasure_every = int(remeasure_every)
        self._bounds: dict[str, _Bound] = {}
        self._lock = threading.Lock()

    def after_append(self, conversation_id: str, settings: WindowSettings, *, first_seq: int, last_seq: int,
                     tokens: int, tool_results: int = 0) -> int | None:
        """Carry the bound over an append of seqs ``first_seq..last_seq`` holding ``tokens``, of
        which ``tool_results`` turns are tool results.

        :returns: the new bound, or ``None`` when there is none to carry (measure in full).
        """
        with self._lock:
            bound = self._bounds.pop(conversation_id, None)
            if (bound is None or bound.settings is not settings or bound.next_seq != first_seq
                    or bound.appends >= self.remeasure_every):
                return None
            bound.work_results += tool_results
            bound.work_tokens += tokens
            if settings.fold_card_due(bound.work_results, bound.work_tokens):
                return None  # a fold card may show now: its size is not bounded by the turns'
            bound.tokens += tokens
            bound.next_seq = last_seq + 1
            bound.appends += 1
            self._bounds[conversation_id] = bound
            return bound.tokens

    def measured(self, conversation_id: str, settings: WindowSettings, *, pressure: int, note_tokens: int,
                 last_seq: int, work: tuple[int, int] = (0, 0)) -> None:
        """Start a bound from a full measurement of ``pressure`` taken after seq ``last_seq``;
        ``work``: the tool results and tokens since the last card then (the fold card's measure)."""
        with self._lock:
            self._bounds[conversation_id] = _Bound(pressure + note_tokens, last_seq + 1, settings,
                                                   work_results=work[0], work_tokens=work[1])

    def forget(self, conversation_id: str | None = None) -> None:
        """Drop one conversation's bound (or every bound): its next append measures in full."""
        with self._lock:
            if conversation_id is None:
                self._bounds.clear()
            else:
                self._bounds.pop(conversation_id, None)


__all__ = ["REMEASURE_EVERY", "PressureBounds"]
