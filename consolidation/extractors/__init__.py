"""Extractors: the pluggable part of consolidation (``base.py`` the interface, one module each).

``rules`` is the offline deterministic default; ``llm`` asks an OpenAI-compatible endpoint.
"""

from __future__ import annotations

from ...memory.errors import InvalidInput
from .base import Episode, Extractor, Proposal

EXTRACTOR_NAMES = ("rules", "llm")


def make_extractor(name: str) -> Extractor:
    """An extractor by name: ``"rules"`` (default, offline) or ``"llm"`` (endpoint from the
    ``MEMFOLD_LLM_*`` environment variables).

    :raises InvalidInput: for an unknown name.
    :raises ExtractorError: for ``"llm"`` when no endpoint is configured.
    """
    if name == "rules":
        from .rules import RulesExtractor

        return RulesExtractor()
    if name == "llm":
        from .llm import LLMExtractor

        return LLMExtractor()
    raise InvalidInput(f"unknown extractor {name!r}: use one of {', '.join(EXTRACTOR_NAMES)}")


__all__ = ["EXTRACTOR_NAMES", "Episode", "Extractor", "Proposal", "make_extractor"]
