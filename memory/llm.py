"""A small client for an OpenAI-compatible chat-completions endpoint (optional; offline by default).

memfold never needs an LLM. When one is configured (base URL, model, key from arguments or the
environment variables ``MEMFOLD_LLM_BASE_URL``, ``MEMFOLD_LLM_MODEL``, ``MEMFOLD_LLM_API_KEY``), the
LLM summarizer and the LLM extractor use this client. Transport is httpx; every failure becomes
one :class:`LLMError` naming the endpoint and the cause.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import httpx

from .errors import InvalidInput, LLMError

__all__ = ["ChatClient", "LLMError", "LLMSettings"]  # LLMError lives in the error tree (memory/errors.py)


@dataclass(frozen=True)
class LLMSettings:
    """Where the OpenAI-compatible endpoint is. ``timeout_seconds`` bounds each request."""

    base_url: str
    model: str
    api_key: str | None = None
    timeout_seconds: float = 30.0

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
        return cls(base_url=base, model=model, api_key=env.get("MEMFOLD_LLM_API_KEY"), timeout_seconds=timeout)


class ChatClient:
    """Calls ``POST {base_url}/chat/completions`` and returns the first choice's message text.

    :param settings: endpoint, model, key and timeout.
    """

    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings
        self.id = f"llm:{settings.model}"

    def complete(self, messages: list[dict[str, Any]], *, temperature: float = 0.0,
                 max_tokens: int | None = None, json_mode: bool = False) -> str:
        """One chat completion.

        :param messages: OpenAI-shaped messages.
        :param json_mode: ask for ``response_format: {"type": "json_object"}``.
        :returns: the assistant message content (may be empty; callers decide what that means).
        :raises LLMError: on connection errors, timeouts, non-2xx answers or a malformed body.
        """
        url = self.settings.base_url.rstrip("/") + "/chat/completions"
        body: dict[str, Any] = {"model": self.settings.model, "messages": messages, "temperature": temperature}
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        headers = {"Authorization": f"Bearer {self.settings.api_key}"} if self.settings.api_key else {}
        try:
            response = httpx.post(url, json=body, headers=headers, timeout=self.settings.timeout_seconds)
        except httpx.TimeoutException:
            raise LLMError(f"{url} did not answer within {self.settings.timeout_seconds:g} s") from None
        except httpx.HTTPError as exc:
            raise LLMError(f"cannot reach {url}: {exc}") from None
        if response.status_code // 100 != 2:
            error = LLMError(f"{url} answered HTTP {response.status_code}: {response.text[:200]}")
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
