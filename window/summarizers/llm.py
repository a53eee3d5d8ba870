"""An LLM summarizer over an OpenAI-compatible chat-completions endpoint (optional).

Configured from :class:`~memfold.memory.llm.LLMSettings` (base URL, model, key and timeout, or the
``MEMFOLD_LLM_*`` environment variables). Any transport failure, timeout, non-2xx answer or
malformed body becomes a :class:`SummarizerError`; the compactor then keeps the originals in
place and records the failure (issue 4, point 4). The prompt is depth-aware like the extractive
summarizer: depth 1 keeps specifics, deeper cards keep decisions still in force.
"""

from __future__ import annotations

import re
from typing import Sequence

from ...memory.errors import InvalidInput, SummarizerError, SummarizerInputTooLarge
from ...memory.llm import ChatClient, LLMError, LLMSettings
from .base import FoldItem, Summarizer

LEAF_PROMPT = (
    "You compress part of a support conversation into a summary card. Keep every name, number, amount, "
    "date, id, path, command, decision, tool result and user instruction exactly as written. Drop "
    "greetings, thanks and acknowledgements. Write terse lines 'who: fact'. Answer with the summary only."
)
ROLLUP_PROMPT = (
    "You merge older summary cards into one shorter card. Keep only decisions, commitments, constraints "
    "and user instructions that are still in force (a later statement overrides an earlier one), plus ids "
    "and numbers they need. Write terse lines. Answer with the summary only."
)


#: how an endpoint says a request was too large for the model: HTTP 413, or a 400 whose body
#: says so (OpenAI's ``context_length_exceeded``, vLLM's and llama.cpp's wordings)
TOO_LARGE = re.compile(r"context.length|context window|maximum context|too (?:long|large|many tokens)|"
                       r"exceeds? the (?:maximum|limit)", re.I)


class LLMSummarizer(Summarizer):
    """Summaries from a chat-completions endpoint.

    :param settings: the endpoint; ``None`` reads the ``MEMFOLD_LLM_*`` environment variables.
    :param max_input_tokens: the most the model takes in one request, counted as the tokens of
        the items folded (see :class:`~memfold.window.summarizers.base.Summarizer`); ``None``:
        no limit declared. Whatever it says, an answer "request too large" (HTTP 413, or a 400
        naming the context length) raises :class:`~memfold.SummarizerInputTooLarge`, and the
        compactor splits the request.
    :raises InvalidInput: when no endpoint is configured, or for a bad ``max_input_tokens``.
    """

    def __init__(self, settings: LLMSettings | None = None, *, max_input_tokens: int | None = None) -> None:
        settings = settings or LLMSettings.from_env()
        if settings is None:
            raise InvalidInput(
                "the LLM summarizer needs an endpoint: pass LLMSettings or set MEMFOLD_LLM_BASE_URL and MEMFOLD_LLM_MODEL"
            )
        if max_input_tokens is not None and (isinstance(max_input_tokens, bool) or not isinstance(max_input_tokens, int)
                                             or max_input_tokens < 2):
            raise InvalidInput(f"max_input_tokens must be a whole number of tokens >= 2 or None, got {max_input_tokens!r}")
        self.client = ChatClient(settings)
        self.id = f"llm:{settings.model}"
        self.max_input_tokens = max_input_tokens

    def messages(self, items: Sequence[FoldItem], depth: int, target_tokens: int | None) -> list[dict]:
        """The chat messages sent for one fold."""
        lines = []
        for item in items:
            if item.kind == "card":
                lines.append(f"[card c{item.id}, depth {item.depth}]\n{item.text}")
            else:
                who = f"{item.role}({item.name})" if item.name else str(item.role)
                lines.append(f"{who}: {item.text}")
        limit = f" Use at most {target_tokens} tokens." if target_tokens else ""
        return [
            {"role": "system", "content": (LEAF_PROMPT if depth <= 1 else ROLLUP_PROMPT) + limit},
            {"role": "user", "content": "\n\n".join(lines)},
        ]

    def summarize(self, items: Sequence[FoldItem], depth: int, *, target_tokens: int | None = None) -> str:
        """One completion; :raises SummarizerError: when the endpoint fails or times out."""
        try:
            return self.client.complete(self.messages(items, depth, target_tokens),
                                        max_tokens=(2 * target_tokens if target_tokens else None))
        except LLMError as exc:
            if exc.status_code == 413 or (exc.status_code == 400 and TOO_LARGE.search(exc.body)):
                raise SummarizerInputTooLarge(f"LLM summarizer {self.id}: the request was too large: {exc}") from exc
            raise SummarizerError(f"LLM summarizer {self.id}: {exc}") from exc
