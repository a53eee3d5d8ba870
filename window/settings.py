"""Window settings: the token budget and the folding knobs (DESIGN.md §1a).

Every size is in **tokens** as counted by the facade's injected :class:`~memfold.TokenCounter`
(words with :class:`~memfold.WordCounter`). Watermarks are fractions of the usable budget,
``budget_tokens - output_reserve_tokens``. Settings are immutable; the facade holds defaults and
every window call may override any field (``conversation.context(budget=40, hot_turns=2)``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..memory.errors import InvalidInput

#: keyword aliases accepted by the window calls (issue 4 writes ``context(budget=…, output_reserve=…)``)
ALIASES = {"budget": "budget_tokens", "output_reserve": "output_reserve_tokens"}



#: the largest count a window setting may hold (every integer up to it is exact as a float)
MAX_SETTING = 2**53

@dataclass(frozen=True)
class WindowSettings:
    """How big the compiled context may be and how the window folds.

    :param budget_tokens: the model's context window, in tokens.
    :param output_reserve_tokens: tokens kept free for the model's answer; the compiled context
        fits ``budget_tokens - output_reserve_tokens`` (the *usable* budget).
    :param hot_turns: the newest turns kept verbatim and never folded (DESIGN.md §4.4).
    :param leaf_chunk_tokens: at most this many source tokens per depth-1 card (a tool call and
        its results are never split, so a single oversized group may exceed it).
    :param card_target_tokens: the summary size asked of the summarizer (about 16:1 by default).
    :param rollup_fanin: this many adjacent same-depth cards roll up into one card a level deeper.
    :param soft_watermark: fraction of the usable budget at which compaction is due, and the
        level compaction folds down to.
    :param hard_watermark: fraction at which an append compacts before returning.
    :param compact_on_append: compact during ``append`` as soon as the soft watermark is passed.
    :param memories_k: how many top memories of the namespace to offer in the compiled context.
    :param memories_share: the memories section takes at most this fraction of the usable budget,
        and only what the catalog leaves free.
    :param system_note: the system note text; ``None`` for the default, ``""`` for none.
    :param fold_card_tool_calls: attach the fold card (issue 14, point 1) once this many tool calls
        (counted by their results) built up since the last fold; 0 turns this trigger off.
    :param fold_card_tokens: ... or once this many tokens of turns built up; 0 turns it off.
    :param fold_to_hot: a compaction leaf-folds every turn outside the hot tail, not only until
        the target is met (the seed program's rule, ``memfold demo``); roll-ups still run only
        while the window is over the target.
    """

    budget_tokens: int = 128_000
    output_reserve_tokens: int = 4_096
    hot_turns: int = 32
    leaf_chunk_tokens: int = 20_000
    card_target_tokens: int = 1_200
    rollup_fanin: int = 4
    soft_watermark: float = 0.70
    hard_watermark: float = 1.00
    compact_on_append: bool = False
    memories_k: int = 5
    memories_share: float = 0.10
    system_note: str | None = None
    fold_card_tool_calls: int = 20
    fold_card_tokens: int = 100_000
    fold_to_hot: bool = False

    def __post_init__(self) -> None:
        for name in ("budget_tokens", "leaf_chunk_tokens", "card_target_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidInput(f"{name} must be a positive integer number of tokens, got {value!r}")
        for name in ("output_reserve_tokens", "hot_turns", "memories_k", "fold_card_tool_calls", "fold_card_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidInput(f"{name} must be an integer >= 0, got {value!r}")
        for name in ("budget_tokens", "leaf_chunk_tokens", "card_target_tokens", "output_reserve_tokens",
                     "hot_turns", "memories_k", "fold_card_tool_calls", "fold_card_tokens"):
            if getattr(self, name) > MAX_SETTING:  # stored in SQLite INTEGER columns and counted in floats
                raise InvalidInput(f"{name} must be at most {MAX_SETTING:,} (2**53), got {getattr(self, name)!r}")
        if isinstance(self.rollup_fanin, bool) or not isinstance(self.rollup_fanin, int) or self.rollup_fanin < 2:
            raise InvalidInput(f"rollup_fanin must be an integer >= 2, got {self.rollup_fanin!r}")
        if self.output_reserve_tokens >= self.budget_tokens:
            raise InvalidInput(
                f"output_reserve_tokens ({self.output_reserve_tokens}) must be smaller than budget_tokens "
                f"({self.budget_tokens}): nothing would be left for the context"
            )
        for name in ("soft_watermark", "hard_watermark", "memories_share"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
                raise InvalidInput(f"{name} must be a fraction in (0, 1], got {value!r}")
        if self.soft_watermark > self.hard_watermark:
            raise InvalidInput(
                f"soft_watermark ({self.soft_watermark}) must not exceed hard_watermark ({self.hard_watermark})"
            )
        for name in ("compact_on_append", "fold_to_hot"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidInput(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.system_note is not None and not isinstance(self.system_note, str):
            raise InvalidInput(f"system_note must be text or None, got {self.system_note!r}")

    @property
    def usable_tokens(self) -> int:
        """``budget_tokens - output_reserve_tokens``: what the compiled context may fill."""
        return self.budget_tokens - self.output_reserve_tokens

    @property
    def soft_tokens(self) -> int:
        """The soft watermark in tokens."""
        return int(self.soft_watermark * self.usable_tokens)

    @property
    def hard_tokens(self) -> int:
        """The hard watermark in tokens."""
        return int(self.hard_watermark * self.usable_tokens)

    @property
    def fold_cards_on(self) -> bool:
        """False when both fold card settings are 0 (no fold card is ever attached)."""
        return self.fold_card_tool_calls > 0 or self.fold_card_tokens > 0

    def fold_card_due(self, tool_results: int, tokens: int) -> bool:
        """True when the work since the last fold reached ``fold_card_tool_calls`` (counted by their
        results) or ``fold_card_tokens`` (a setting at 0 is off)."""
        calls_at, tokens_at = self.fold_card_tool_calls, self.fold_card_tokens
        return (calls_at > 0 and tool_results >= calls_at) or (tokens_at > 0 and tokens >= tokens_at)

    def with_overrides(self, overrides: dict[str, Any] | None = None, **more: Any) -> "WindowSettings":
        """A copy with some fields replaced (aliases ``budget``/``output_reserve`` accepted;
        ``None`` values are ignored).

        A new ``budget`` given without an ``output_reserve`` keeps the inherited reserve only up
        to a quarter of that budget: ``min(output_reserve_tokens, budget // 4)`` (the rule the
        replay uses), so ``context(budget=2000)`` works with the default 4,096-token reserve
        (reserve 500, usable 1,500). An explicit ``output_reserve`` is always taken as given.
        Likewise ``leaf_chunk_tokens`` is capped at a third of the new usable budget and
        ``card_target_tokens`` at an eighth of that leaf chunk, unless given, so folds at a small
        per-call budget make cards that fit it (``budget=1000``: leaf chunk 250, card target 31).

        :raises InvalidInput: for an unknown field or an invalid value.
        """
        changes: dict[str, Any] = {}
        for key, value in {**(overrides or {}), **more}.items():
            if value is None:
                continue
            field = ALIASES.get(key, key)
            if field not in {f.name for f in dataclasses.fields(self)}:
                known = ", ".join(sorted({f.name for f in dataclasses.fields(self)} | set(ALIASES)))
                raise InvalidInput(f"unknown window setting {key!r}: known settings are {known}")
            changes[field] = value
        budget = changes.get("budget_tokens")
        if (budget != self.budget_tokens and isinstance(budget, int) and not isinstance(budget, bool)
                and budget >= 1):
            if "output_reserve_tokens" not in changes:
                changes["output_reserve_tokens"] = min(self.output_reserve_tokens, budget // 4)
            reserve = changes["output_reserve_tokens"]
            usable = budget - reserve if isinstance(reserve, int) and 0 <= reserve < budget else budget
            # Fold sizes follow a smaller budget too (DESIGN.md §1a: a leaf chunk is about a sixth
            # of the window, a card about 1/16 of its sources), unless given: the 1,200-token card
            # target of a 128K window would never fit a 1,000-token budget.
            if "leaf_chunk_tokens" not in changes:
                changes["leaf_chunk_tokens"] = max(1, min(self.leaf_chunk_tokens, usable // 3))
            if "card_target_tokens" not in changes:
                leaf = changes["leaf_chunk_tokens"]
                changes["card_target_tokens"] = max(1, min(self.card_target_tokens, leaf // 8))
        return dataclasses.replace(self, **changes) if changes else self

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return dataclasses.asdict(self)
