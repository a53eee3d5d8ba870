"""The LLM extractor: an OpenAI-compatible model proposes facts and rules as JSON (issue 5, point 2).

It uses the same :class:`~memfold.memory.llm.ChatClient` as the LLM summarizer, asks for a JSON
object (``json_mode``), and validates every field before the pass sees it. Invalid output (not
JSON, wrong shapes, unknown sources, a user fact with no user episode among its sources) raises
:class:`~memfold.memory.errors.ExtractorError`; the pass then consumes nothing from the batch and
records the failure in the run. The rule that only the user's own statements become facts about
the user is enforced here too, whatever the model says: a ``user.*`` fact must cite at least
one episode whose speaker is the user.

Expected reply::

    {"facts": [{"key": "user.name", "value": "Dana", "sources": ["record:4"], "importance": 0.9}],
     "rules": [{"rule": "returns after the 30-day window: apply a 10% restocking fee",
                "key": "policy.returns.after_the_30_day_window", "sources": ["record:1", "record:2"]}]}
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from ...memory.errors import ExtractorError
from ...memory.llm import ChatClient, LLMError, LLMSettings
from .base import Episode, Extractor, Proposal

SYSTEM_PROMPT = """You consolidate an agent's episodic memory into durable knowledge.
You get a JSON list of episodes, each with an id, the speaker's role and the text.
Return ONE JSON object: {"facts": [...], "rules": [...]}.
- facts: stable facts about the user, each {"key": "user.<slot>", "value": "<short value>",
  "sources": ["<episode id>", ...], "importance": <0..1>}. Slots: name, account_id, order_id,
  contact_preference, location, address, birthday, preference.<thing>.
  Only from episodes where the USER speaks about THEMSELVES. Never from assistant, agent or tool
  text. A question about another person is never a fact about the user.
- rules: policies stated by tools or agents, each {"rule": "<scope>: <action>", "key":
  "policy.<topic>.<condition>", "sources": ["<episode id>", ...]}.
Cite only ids from the input. Return {"facts": [], "rules": []} when there is nothing durable."""

DEFAULT_RULE_IMPORTANCE = 0.8
DEFAULT_FACT_IMPORTANCE = 0.6


class LLMExtractor(Extractor):
    """Ask an OpenAI-compatible chat model for facts and rules, then validate them strictly.

    :param client: a :class:`ChatClient` or :class:`LLMSettings`; default from the environment
        (``MEMFOLD_LLM_BASE_URL``, ``MEMFOLD_LLM_MODEL``, ...).
    :raises ExtractorError: at construction when no client is given and none is configured.
    """

    def __init__(self, client: ChatClient | LLMSettings | None = None) -> None:
        if client is None:
            settings = LLMSettings.from_env()
            if settings is None:
                raise ExtractorError("the LLM extractor needs an endpoint: set MEMFOLD_LLM_BASE_URL and "
                                     "MEMFOLD_LLM_MODEL, or use the default rules extractor")
            client = ChatClient(settings)
        elif isinstance(client, LLMSettings):
            client = ChatClient(client)
        self.client = client
        self.id = f"llm:{client.settings.model}"

    def extract(self, episodes: Sequence[Episode]) -> list[Proposal]:
        """One chat completion for the batch; see the module docstring for the reply shape.

        :raises ExtractorError: when the endpoint fails (wrapping :class:`LLMError`) or the reply
            does not validate.
        """
        if not episodes:
            return []
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": json.dumps([e.to_dict() for e in episodes], ensure_ascii=False)},
        ]
        try:
            reply = self.client.complete(messages, json_mode=True)
        except LLMError as exc:
            raise ExtractorError(f"LLM extractor failed: {exc}") from None
        return parse_reply(reply, episodes)


def parse_reply(reply: str, episodes: Sequence[Episode]) -> list[Proposal]:
    """Validate a model's JSON reply against the batch and turn it into proposals.

    :raises ExtractorError: naming the first problem found; nothing is returned partially.
    """
    try:
        data = json.loads(reply)
    except (TypeError, ValueError):
        raise ExtractorError(f"the LLM extractor's reply is not JSON: {str(reply)[:120]!r}") from None
    if not isinstance(data, dict):
        raise ExtractorError(f"the LLM extractor's reply must be a JSON object, got {type(data).__name__}")
    unknown = set(data) - {"facts", "rules"}
    if unknown:
        raise ExtractorError(f"the LLM extractor's reply has unknown fields {sorted(unknown)}: expected facts and rules")
    by_source = {e.source: e for e in episodes}
    proposals: list[Proposal] = []
    for i, fact in enumerate(_list(data, "facts")):
        where = f"facts[{i}]"
        key = _text(fact, "key", where)
        if not key.startswith("user.") or key != key.strip() or len(key) <= 5:
            raise ExtractorError(f"{where}.key {key!r} must be a 'user.<slot>' key")
        sources = _sources(fact, where, by_source)
        if not any(by_source[s].role == "user" for s in sources):
            raise ExtractorError(f"{where} ({key}) cites no user episode: facts about the user come only "
                                 "from the user's own statements")
        proposals.append(Proposal("semantic", key, _text(fact, "value", where), sources,
                                  _importance(fact, where, DEFAULT_FACT_IMPORTANCE), _latest(sources, by_source)))
    for i, rule in enumerate(_list(data, "rules")):
        where = f"rules[{i}]"
        key = rule.get("key")
        if key is not None and (not isinstance(key, str) or not key.strip() or key != key.strip()):
            raise ExtractorError(f"{where}.key must be a non-empty string or absent, got {key!r}")
        sources = _sources(rule, where, by_source)
        proposals.append(Proposal("procedural", key, _text(rule, "rule", where), sources,
                                  _importance(rule, where, DEFAULT_RULE_IMPORTANCE), _latest(sources, by_source)))
    return proposals


def _list(data: dict[str, Any], name: str) -> list[dict[str, Any]]:
    value = data.get(name, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ExtractorError(f"the LLM extractor's reply field {name!r} must be a list of objects")
    return value


def _text(item: dict[str, Any], name: str, where: str) -> str:
    value = item.get(name)
    if not isinstance(value, str) or not value.strip() or "\x00" in value:
        raise ExtractorError(f"{where}.{name} must be non-empty text, got {value!r}")
    return value.strip()


def _sources(item: dict[str, Any], where: str, by_source: dict[str, Episode]) -> tuple[str, ...]:
    value = item.get("sources")
    if not isinstance(value, list) or not value or not all(isinstance(s, str) for s in value):
        raise ExtractorError(f"{where}.sources must be a non-empty list of episode ids")
    missing = [s for s in value if s not in by_source]
    if missing:
        raise ExtractorError(f"{where}.sources cites {missing}, which are not in this batch")
    return tuple(dict.fromkeys(value))


def _importance(item: dict[str, Any], where: str, default: float) -> float:
    value = item.get("importance", default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
        raise ExtractorError(f"{where}.importance must be a number in [0, 1], got {value!r}")
    return float(value)


def _latest(sources: tuple[str, ...], by_source: dict[str, Episode]) -> float | None:
    times = [by_source[s].event_time for s in sources if by_source[s].event_time is not None]
    return max(times) if times else None
