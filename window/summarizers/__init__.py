"""Summarizers: the interface in ``base.py``, one module per implementation (STYLE.md rule 4)."""

from .base import FoldItem, Summarizer, run_summarizer  # noqa: F401  (run_summarizer: the compactor's, not public)
from .extractive import ExtractiveSummarizer
from .llm import LLMSummarizer
from .seed import SeedSummarizer

__all__ = ["ExtractiveSummarizer", "FoldItem", "LLMSummarizer", "SeedSummarizer", "Summarizer"]
