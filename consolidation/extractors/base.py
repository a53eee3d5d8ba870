"""The extractor interface: episodes in, proposed facts and rules out (DESIGN.md §1 "consolidation").

An extractor is a heavy part behind a one-method interface (STYLE.md rule 7): ``extract(episodes)``
returns :class:`Proposal` objects and never writes anything itself. The consolidation pass
(:mod:`memfold.consolidation.consolidate`) validates every proposal, writes it through the normal
write path and marks the episodes consumed, so every extractor gets the same guarantees
(idempotence, provenance, one transaction per batch).

Who spoke in an episode
-----------------------
An episodic record says who spoke in one of two ways, checked in this order:

1. ``metadata["role"]`` (or ``metadata["speaker"]``): ``user``, ``assistant``, ``agent``, ``tool``
   or ``system`` (``customer`` counts as ``user``);
2. otherwise the first word of its text: ``"user asked ..."``, ``"tool said ..."``,
   ``"assistant: ..."``, ``"agent replied ..."``, ``"customer ..."``.

An episode with neither has role ``unknown``: it never yields a fact about the user nor a policy
rule. Archived turns carry their role already.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

#: roles an episode can have; ``unknown`` when neither metadata nor a text prefix says
SPEAKER_ROLES = ("user", "assistant", "agent", "tool", "system", "unknown")
_ROLE_ALIASES = {"user": "user", "customer": "user", "assistant": "assistant", "agent": "agent",
                 "tool": "tool", "system": "system"}
_PREFIX = re.compile(r"^\s*(user|customer|assistant|agent|tool|system)\b\s*:?\s*", re.IGNORECASE)


def speaker_of(text: str, metadata: Mapping[str, Any] | None = None) -> str:
    """The role of whoever spoke in an episode: metadata ``role``/``speaker`` first, then the
    text's first word; ``"unknown"`` when neither says (see the module docstring)."""
    for name in ("role", "speaker"):
        value = (metadata or {}).get(name)
        if isinstance(value, str) and value.strip().lower() in _ROLE_ALIASES:
            return _ROLE_ALIASES[value.strip().lower()]
    match = _PREFIX.match(text)
    return _ROLE_ALIASES[match.group(1).lower()] if match else "unknown"


@dataclass(frozen=True)
class Episode:
    """One input to an extractor.

    :ivar source: the id that derived records cite, ``"record:12"`` (an episodic record) or
        ``"turn:5"`` (an archived turn).
    :ivar role: who spoke, one of :data:`SPEAKER_ROLES`.
    :ivar text: the episode's text exactly as stored, except that in a turn labelled ``secret``
        each secret span is replaced by :data:`memfold.window.secrets.SECRET_MASK` (issue 9).
    :ivar event_time: when it happened (clock units), or None if unknown.
    :ivar masked: True when ``text`` had secret spans masked (set by the pass, never by the
        text, so typing ``[secret]`` does not make a turn masked).
    """

    source: str
    role: str
    text: str
    event_time: float | None = None
    masked: bool = False

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (also what the LLM extractor sends)."""
        return {"id": self.source, "role": self.role, "text": self.text}


@dataclass(frozen=True)
class Proposal:
    """A fact or rule an extractor proposes; the pass validates and writes it. (What a
    :class:`~memfold.window.constraints.ConstraintExtractor` proposes is a
    :class:`~memfold.window.constraints.ConstraintProposal`, a protected record.)

    :ivar type: ``"semantic"`` (a fact, with a slot ``key`` such as ``user.name``) or
        ``"procedural"`` (a rule; a key is optional and lets a changed policy supersede the old one).
    :ivar key: the slot; facts need one.
    :ivar content: the value (``"Dana"``) or the rule text.
    :ivar sources: the episode sources it came from, e.g. ``("record:4",)``; never empty.
    :ivar importance: in [0, 1].
    :ivar event_time: when the stated thing was said (the latest source's event time), or None.
    :ivar retire: True for a retirement ("I no longer have a favourite colour"): the pass retires
        the active fact in slot ``key`` (only while its value is ``content``, unless ``content``
        is empty) instead of writing one.
    :ivar slot_of: the slot is the one whose active value is this ("I switched from Chrome to
        Firefox" -> the slot holding "Chrome"); the pass resolves it against the store before
        writing, and drops the proposal when no slot holds it and ``key`` is None.
    """

    type: str
    key: str | None
    content: str
    sources: tuple[str, ...]
    importance: float = 0.5
    event_time: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    retire: bool = False
    slot_of: str | None = None

    def render(self) -> str:
        """``user.name = Dana`` for a fact, ``retire user.favourite.band (Muse)`` for a
        retirement, the rule text for a rule."""
        if self.retire:
            return f"retire {self.key or 'the slot holding ' + repr(self.slot_of)}" + (f" ({self.content})" if self.content else "")
        return f"{self.key} = {self.content}" if self.type == "semantic" else self.content

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        out = {"type": self.type, "key": self.key, "content": self.content, "sources": list(self.sources),
               "importance": self.importance, "event_time": self.event_time}
        if self.retire:
            out["retire"] = True
        if self.slot_of is not None:
            out["slot_of"] = self.slot_of
        return out


class Extractor(ABC):
    """Turns a batch of episodes into proposals. Must be deterministic for the same input if
    tests and demos are to be reproducible (the shipped :class:`RulesExtractor` is).

    ``id`` names the extractor in run records and derived records' metadata.
    """

    id: str = "extractor"

    @abstractmethod
    def extract(self, episodes: Sequence[Episode]) -> list[Proposal]:
        """Propose facts and rules for ``episodes`` (ordered by event time, then source).

        :returns: proposals whose ``sources`` are all among ``episodes``; episodes that yield
            nothing are still consumed by the pass.
        :raises ExtractorError: when the extractor fails or its output does not validate; the
            pass then consumes nothing from this batch and records the failure.
        """
