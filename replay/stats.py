"""What a replay measured, and the order statistics the report draws from it.

The loop (:mod:`memfold.replay.runner`) fills a :class:`ReplayRun` and the report
(:mod:`memfold.replay.report`) reads one; both import it from here, so the runner may build the
report without the report importing the runner back (no import cycle, issue 12 point 2).

Invariant kept here: every statistic is a pure function of its values (no clock, no database),
and an empty list gives 0.0, so a replay with nothing measured still reports.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Sequence

from ..window.settings import WindowSettings
from .formats import ReplayConversation


@dataclass
class ReplayRun:
    """What the loop measured (times in seconds, sizes in tokens); the report adds the database's figures."""

    source_format: str
    settings: WindowSettings
    conversations: list[ReplayConversation]
    turn_ids: dict[str, dict[str, int]] = field(default_factory=dict)  # conversation -> dia_id -> turn id
    append_seconds: list[float] = field(default_factory=list)
    compile_seconds: list[float] = field(default_factory=list)
    compact_seconds: list[float] = field(default_factory=list)
    compiled_tokens: list[int] = field(default_factory=list)
    transcript_tokens: list[int] = field(default_factory=list)  # full transcript at each compile
    budget_errors: list[str] = field(default_factory=list)
    over_budget: int = 0
    nightly_passes: int = 0
    consolidation_seconds: float = 0.0
    summarizer_calls: int = 0
    secret_turns: int = 0
    clamped_times: int = 0
    wall_seconds: float = 0.0


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) by linear interpolation; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def median(values: Sequence[float]) -> float:
    """The median; 0.0 for no values."""
    return statistics.median(values) if values else 0.0


__all__ = ["ReplayRun", "median", "percentile"]
