"""A small client for an OpenAI-compatible chat-completions endpoint (optional; offline by default).

memfold never needs an LLM. When one is configured (base URL, model, key from arguments or the
environment variables ``MEMFOLD_LLM_BASE_URL``, ``MEMFOLD_LLM_MODEL``, ``MEMFOLD_LLM_API_KEY``), the
LLM summarizer and the LLM extractor use this client, and with the environment variables set the
facade uses them by default (issue 20, point 2). Transport is httpx; every failure becomes one
:class:`LLMError` naming the endpoint and the cause.

Retries (issue 20, point 2): an answer of HTTP 429 or 503 is retried up to ``max_retries`` times.
A ``Retry-After`` header (seconds, or an HTTP date) is honoured as long as it is within
``retry_cap_seconds``; a server that asks for longer is not retried (waiting less than it asked
would only be refused again): the call fails at once, and callers fall back (the compactor keeps
the originals, the consolidation pass consumes nothing). Without the header the waits are 0.5 s,
1 s, 2 s, ... capped likewise. Connection errors and timeouts are not retried.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any, Callable

import httpx

from .errors import InvalidInput, LLMError

__all__ = ["ChatClient", "LLMError", "LLMSettings"]  # LLMError lives in the error tree (memory/errors.py)


@dataclass(frozen=True)
class LLMSettings:
    """Where the OpenAI-compatible endpoint is. ``timeout_seconds`` bounds each request;
    ``max_retries`` is how many times an HTTP 429/503 answer is retried and ``retry_cap_seconds``
    the longest wait between tries (see the module docstring)."""

    base_url: str
    model: str
    api_key: str | None = None
    timeout_seconds: float = 30.0
    max_retries: int = 3
    retry_cap_seconds: float = 30.0

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "LLMSettings | None":
        """Settings from ``MEMFOLD_LLM_BASE_URL`` / ``_MODEL`` / ``_API_KEY`` / ``_TIMEOUT``;
        ``None`` when no base URL is set (memfold then runs offline).

        :raises InvalidInput: if a base URL is set without a model, or the timeout is not a number.
        """
        env = dict(os.environ if env is None else env)
        base = env.get("MEMFOLD_LLM_BASE_URL")
        if not base:
            return None
        model = env.get("MEMFOLD_LLM_MODEL")
        if not model:
            raise InvalidInput("MEMFOLD_LLM_BASE_URL is set but MEMFOLD_LLM_MODEL is not: name the model too")
        try:
            timeout = float(env.get("MEMFOLD_LLM_TIMEOUT", "30"))
        except ValueError:
            raise InvalidInput(f"MEMFOLD_LLM_TIMEOUT must be seconds, got {env.get('MEMFOLD_LLM_TIMEOUT')!r}") from None
        raw_retries = env.get("MEMFOLD_LLM_MAX_RETRIES", "3")
        if not (raw_retries.strip().isascii() and raw_retries.strip().isdigit()):
            raise InvalidInput(f"MEMFOLD_LLM_MAX_RETRIES must be a whole number >= 0, got {raw_retries!r}")
        try:
            cap = float(env.get("MEMFOLD_LLM_RETRY_CAP", "30"))
        except ValueError:
            cap = -1.0
        if not cap >= 0 or cap == float("inf"):
            raise InvalidInput(f"MEMFOLD_LLM_RETRY_CAP must be seconds >= 0, got {env.get('MEMFOLD_LLM_RETRY_CAP')!r}")
        return cls(base_url=base, model=model, api_key=env.get("MEMFOLD_LLM_API_KEY"), timeout_seconds=timeout,
                   max_retries=int(raw_retries), retry_cap_seconds=cap)


class ChatClient:
    """Calls ``POST {base_url}/chat/completions`` and returns the first choice's message text.

    :param settings: endpoint, model, key, timeout and retries.
    :param sleep: how to wait between retries (seconds); default :func:`time.sleep`.
    :param wall_clock: POSIX seconds now, to read a ``Retry-After`` HTTP date; default :func:`time.time`.
    """

    #: the answers that are retried: rate limited, temporarily unavailable
    RETRY_STATUSES = (429, 503)

    def __init__(self, settings: LLMSettings, *, sleep: Callable[[float], None] = time.sleep,
                 wall_clock: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.id = f"llm:{settings.model}"
        self.sleep = sleep
        self.wall_clock = wall_clock

    def retry_after(self, value: str | None) -> float | None:
        """Seconds a ``Retry-After`` header asks to wait (a number, or an HTTP date), or ``None``
        when there is none or it cannot be read."""
        if not value:
            return None
        value = value.strip()
        try:
            return max(0.0, float(value))
        except ValueError:
            pass
        try:
            when: datetime = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        return max(0.0, when.timestamp() - self.wall_clock())

    def _post(self, url: str, body: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
        """POST with the retries of the module docstring; the last answer is returned."""
        cap = self.settings.retry_cap_seconds
        for attempt in range(self.settings.max_retries + 1):
            try:
                response = httpx.post(url, json=body, headers=headers, timeout=self.settings.timeout_seconds)
            except httpx.TimeoutException:
                raise LLMError(f"{url} did not answer within {self.settings.timeout_seconds:g} s") from None
            except httpx.HTTPError as exc:
                raise LLMError(f"cannot reach {url}: {exc}") from None
            if response.status_code not in self.RETRY_STATUSES or attempt == self.settings.max_retries:
                return response
            wait = self.retry_after(response.headers.get("Retry-After"))
            if wait is None:
                wait = min(cap, 0.5 * 2 ** attempt)
            elif wait > cap:
                raise LLMError(f"{url} answered HTTP {response.status_code} asking to retry after {wait:g} s, longer "
                               f"than the {cap:g} s cap (MEMFOLD_LLM_RETRY_CAP): not retried")
            self.sleep(wait)
        return response  # pragma: no cover - the loop always returns

    def complete(self, messages: list[dict[str, Any]], *, temperature: float = 0.0,
                 max_tokens: int | None = None, json_mode: bool = False) -> str:
        """One chat completion.

        :param messages: OpenAI-shaped messages.
        :param json_mode: ask for ``response_format: {"type": "json_object"}``.
        :returns: the assistant message content (may be empty; callers decide what that means).
        :raises LLMError: on connection errors, timeouts, non-2xx answers (429 and 503 after the
            retries) or a malformed body.
        """
        url = self.settings.base_url.rstrip("/") + "/chat/completions"
        body: dict[str, Any] = {"model": self.settings.model, "messages": messages, "temperature": temperature}
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        headers = {"Authorization": f"Bearer {self.settings.api_key}"} if self.settings.api_key else {}
        response = self._post(url, body, headers)
        if response.status_code // 100 != 2:
            tries = "" if response.status_code not in self.RETRY_STATUSES or not self.settings.max_retries else (
                f" after {self.settings.max_retries} retries")
            error = LLMError(f"{url} answered HTTP {response.status_code}{tries}: {response.text[:200]}")
            error.status_code, error.body = response.status_code, response.text[:2000]  # for callers that tell causes apart
            raise error
        try:
            content = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise LLMError(f"{url} answered with a body that is not a chat completion: {response.text[:200]}") from None
        if content is None:
            return ""
        if not isinstance(content, str):
            raise LLMError(f"{url} answered with non-text content: {content!r}"[:300])
        return content
