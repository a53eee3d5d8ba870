"""Extractors: the pluggable part of consolidation (``base.py`` the interface, one module each).

``rules`` is the offline deterministic extractor; ``llm`` asks an OpenAI-compatible endpoint;
``auto`` (the default of the facade, the CLI and the nightly job) is ``llm`` when the
``MEMFOLD_LLM_*`` environment variables name an endpoint and ``rules`` otherwise (issue 20, point 2).
"""

from __future__ import annotations

from ...memory.errors import InvalidInput
from .base import Episode, Extractor, Proposal

EXTRACTOR_NAMES = ("auto", "rules", "llm")


def make_extractor(name: str) -> Extractor:
    """An extractor by name: ``"rules"`` (offline), ``"llm"`` (endpoint from the
    ``MEMFOLD_LLM_*`` environment variables) or ``"auto"`` (``llm`` when those name an endpoint,
    else ``rules``).

    :raises InvalidInput: for an unknown name, or ``MEMFOLD_LLM_BASE_URL`` without a model.
    :raises ExtractorError: for ``"llm"`` when no endpoint is configured.
    """
    if name == "auto":
        from ...memory.llm import LLMSettings

        name = "llm" if LLMSettings.from_env() is not None else "rules"
    if name == "rules":
        from .rules import RulesExtractor

        return RulesExtractor()
    if name == "llm":
        from .llm import LLMExtractor

        return LLMExtractor()
    raise InvalidInput(f"unknown extractor {name!r}: use one of {', '.join(EXTRACTOR_NAMES)}")


__all__ = ["EXTRACTOR_NAMES", "Episode", "Extractor", "Proposal", "make_extractor"]
