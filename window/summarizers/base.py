"""The summarizer interface and the one gate every summarizer input passes through.

A summarizer turns the items being folded into one shorter text (STYLE.md rule 7). Every call
goes through :func:`run_summarizer`, the single place where text leaves memfold for a summarizer:
it builds the :class:`FoldItem` list, calls ``summarize``, and validates the answer (text, not
empty, strictly fewer tokens than the sources). Anything else becomes a :class:`SummarizerError`,
so the compactor can leave the originals in place and record the failure (DESIGN.md §5).
The protected channel (DESIGN.md §4.6) checks what reaches summarizers here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ...memory.errors import MemfoldError, SummarizerError, SummarizerInputTooLarge
from ...memory.tokens import TokenCounter


@dataclass(frozen=True)
class FoldItem:
    """One item handed to a summarizer: a turn (``kind="turn"``, ``role`` set, ``depth`` 0) or a
    card (``kind="card"``, ``depth`` >= 1). ``text`` is what the summarizer may read."""

    kind: str
    id: int
    text: str
    role: str | None = None
    depth: int = 0
    name: str | None = None


class Summarizer(ABC):
    """Folds items into one summary. ``id`` names the summarizer (stored on every card).

    ``max_input_tokens`` is the most a summarizer accepts in one request, counted as the tokens
    of the items it is given (the window's token counter; leave room for the prompt around them):
    the compactor never sends more, so a leaf chunk, a roll-up or a shrink that would be larger
    is made of fewer items (issue 13, point 6). ``None``: no limit. A summarizer that finds out
    only when the request is refused raises :class:`~memfold.SummarizerInputTooLarge`; the
    compactor then splits the request in smaller chunks for the rest of its pass.
    """

    id: str = ""
    max_input_tokens: int | None = None

    @abstractmethod
    def summarize(self, items: Sequence[FoldItem], depth: int, *, target_tokens: int | None = None) -> str:
        """Summarize ``items`` into the text of a card of ``depth`` (1 = over turns: keep
        specifics; deeper = over cards: keep decisions still in force).

        :param target_tokens: the size to aim for, in tokens (a hint; the gate enforces only
            "strictly shorter than the sources").
        :returns: the summary text.
        :raises SummarizerError: when it cannot summarize.
        """


#: Observers called with (summarizer, items, depth) before every summarizer call: the hook the
#: protected channel uses to prove protected text never reaches a summarizer.
INPUT_OBSERVERS: list[Callable[[Summarizer, Sequence[FoldItem], int], None]] = []


def run_summarizer(summarizer: Summarizer, items: Sequence[FoldItem], depth: int, *, source_tokens: int,
                   target_tokens: int, counter: TokenCounter) -> tuple[str, int]:
    """Call ``summarizer`` on ``items`` and validate its answer.

    :returns: ``(text, tokens)`` with ``0 < tokens < source_tokens``.
    :raises SummarizerError: if the summarizer raised, returned non-text, empty text, or text not
        strictly shorter than its sources (the caller keeps the originals and records this).
    """
    for observe in INPUT_OBSERVERS:
        observe(summarizer, items, depth)
    name = getattr(summarizer, "id", "") or type(summarizer).__name__
    try:
        text: Any = summarizer.summarize(list(items), depth, target_tokens=target_tokens)
    except SummarizerInputTooLarge as exc:
        if exc.input_tokens is None:
            exc.input_tokens = sum(counter.count(item.text) for item in items)
        raise
    except SummarizerError:
        raise
    except MemfoldError as exc:
        raise SummarizerError(f"summarizer {name} failed: {exc}") from exc
    except Exception as exc:  # a third-party summarizer may raise anything; history must survive it
        raise SummarizerError(f"summarizer {name} raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(text, str):
        raise SummarizerError(f"summarizer {name} returned {type(text).__name__}, not text")
    text = text.strip()
    if not text:
        raise SummarizerError(f"summarizer {name} returned empty text")
    tokens = counter.count(text)
    if tokens >= source_tokens:
        raise SummarizerError(
            f"summarizer {name} returned {tokens} tokens for {source_tokens} source tokens: a card must be "
            "strictly shorter than what it covers"
        )
    return text, tokens


def clip_to_tokens(text: str, max_tokens: int, counter: TokenCounter) -> str:
    """The longest prefix of ``text`` (cut at a word boundary when possible) with at most
    ``max_tokens`` tokens; ``""`` when ``max_tokens`` < 1."""
    if max_tokens < 1:
        return ""
    # Count only a head of the text, never the whole of a huge turn (issue 20, point 6: a 5 MB
    # message was tokenized ~68 times per compile): start near the target and grow the head
    # until it holds more than ``max_tokens``, so the cost depends on the target, not the text.
    size = max_tokens * 8 + 64
    while True:
        head = text[:size]
        if len(head) == len(text):
            if counter.count(text) <= max_tokens:
                return text
            truncated = False
            break
        if counter.count(head) > max_tokens:
            truncated = True
            break
        size *= 4
    text = head
    encode, decode = getattr(counter, "encode", None), getattr(counter, "decode", None)
    if truncated and callable(encode) and callable(decode):
        # a BPE counter (tiktoken): cut once after the first max_tokens tokens, back to a word
        # boundary, instead of a binary search that counts the head a dozen times
        cut = decode(encode(text)[:max_tokens])
        space = cut.rfind(" ")
        cut = cut[:space] if space > 0 else cut
        if cut and text.startswith(cut) and counter.count(cut) <= max_tokens:
            return cut
    words = text.split(" ")
    lo, hi = 0, len(words) - 1 if truncated else len(words)  # the head's last word may be cut
    while lo < hi:  # largest word prefix that fits
        mid = (lo + hi + 1) // 2
        if counter.count(" ".join(words[:mid])) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    if lo > 0:
        return " ".join(words[:lo])
    lo, hi = 0, len(text)
    while lo < hi:  # a single long word: cut by characters
        mid = (lo + hi + 1) // 2
        if counter.count(text[:mid]) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]
