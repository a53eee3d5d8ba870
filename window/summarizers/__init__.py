"""Summarizers: the interface in ``base.py``, one module per implementation (STYLE.md rule 4)."""

from .base import FoldItem, Summarizer, run_summarizer
from .extractive import ExtractiveSummarizer
from .llm import LLMSummarizer

__all__ = ["ExtractiveSummarizer", "FoldItem", "LLMSummarizer", "Summarizer", "run_summarizer"]
