"""The default summarizer: offline, deterministic, extractive and depth-aware (issue 4, point 4).

It never invents text: a card is a selection of sentences from what it covers, tagged with who
said them. Sentences are scored for the details an agent needs later: numbers, money, dates,
ids, paths and URLs, e-mail addresses, names, decisions, user instructions and tool results.
Pure chatter ("thanks for checking", "ok", "sounds good") scores nothing and leaves the window
first (it never leaves the archive).

* depth 1 (over turns) keeps specifics, in their original order;
* deeper cards (over cards) keep decisions and instructions first, preferring the newest, since
  a later decision is the one still in force; specifics come next if room remains.

Same input, same output: no randomness, no clock, no network (DESIGN.md §4.10).
"""

from __future__ import annotations

import re
from typing import Sequence

from ...memory.tokens import TokenCounter, WordCounter
from .base import FoldItem, Summarizer, clip_to_tokens

_SPECIFICS = {
    "number": re.compile(r"\d"),
    "money": re.compile(r"[$€£¥]|\b(?:usd|eur|gbp|dollars?|euros?|cents?)\b", re.I),
    "date": re.compile(
        r"\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
        r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
        r"today|tomorrow|yesterday|tonight|next week|deadline)\b", re.I),
    "id": re.compile(r"\b[A-Z]{2,}[-_]?\d+[A-Z0-9-]*\b|#\d+\b|\b[a-f0-9]{8,}\b"),
    "path": re.compile(r"(?:[\w.~-]*/[\w.-]+){1,}|\b[\w-]+\.(?:py|js|ts|json|ya?ml|txt|md|csv|log|sh|toml|cfg|ini|html|sql|pdf)\b|https?://\S+"),
    "email": re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.]+\b"),
}
_DECISION = re.compile(
    r"\b(?:decided|decide|decision|agreed|agree|confirmed|confirm|approved|approve|will|won't|going to|must|"
    r"should|shall|need to|needs to|have to|always|never|don't|do not|prefer|prefers|instead|switch(?:ed)?|"
    r"cancel(?:led|ed)?|refund(?:ed)?|replace(?:ment)?|escalat\w*|policy|require[sd]?|only|from now on|"
    r"remember|make sure|no longer)\b", re.I)
_INSTRUCTION = re.compile(r"\b(?:please|i want|i'd like|i need|can you|could you|make sure|remember|don't|do not|"
                          r"always|never|use|send|call|email)\b", re.I)
_NAME = re.compile(r"(?<=[a-z,;:] )[A-Z][a-z]{2,}\b")
_CHATTER = re.compile(
    r"^(?:(?:ok(?:ay)?|k|thanks?(?: you)?(?: (?:so much|a lot|for (?:checking|that|your help|waiting)))?|"
    r"thank you(?: very much)?|ty|sounds good|great|cool|got it|sure(?: thing)?|perfect|hi(?: there)?|hello|hey|"
    r"bye|goodbye|see you|you're welcome|no problem|np|alright|all right|nice|awesome|yes|no|yep|nope|yeah|"
    r"understood|will do|noted|good|fine|lol|haha|one moment|let me check|hmm+)[\s,.!?:;)(-]*)+$",
    re.I,
)
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SPLIT.split(text) if s and s.strip()]


def _tag(item: FoldItem) -> str:
    if item.kind == "card":
        return ""
    if item.role == "tool":
        return f"tool({item.name}): " if item.name else "tool: "
    return f"{item.role}: "


class ExtractiveSummarizer(Summarizer):
    """Extractive, depth-aware summaries (see the module docstring).

    :param token_counter: counts tokens to honour ``target_tokens`` (default: words).
    """

    id = "extractive-v1"

    def __init__(self, token_counter: TokenCounter | None = None) -> None:
        self.counter = token_counter or WordCounter()

    def score(self, sentence: str, item: FoldItem, depth: int) -> float:
        """How much ``sentence`` deserves a place in a card of ``depth`` (0 = drop)."""
        if _CHATTER.match(sentence):
            return 0.0
        specifics = sum(1 for rx in _SPECIFICS.values() if rx.search(sentence))
        decision = 1 if _DECISION.search(sentence) else 0
        instruction = 1 if item.role == "user" and _INSTRUCTION.search(sentence) else 0
        names = 1 if _NAME.search(sentence) else 0
        if depth <= 1:
            score = 2.0 * specifics + 2.0 * decision + 2.0 * instruction + names
            if item.role == "tool":
                score += 3.0
        else:
            line_is_user = sentence.startswith("user:")
            score = 4.0 * decision + 3.0 * (1 if line_is_user and _INSTRUCTION.search(sentence) else 0) \
                + 1.0 * specifics + 0.5 * names
        return score

    def summarize(self, items: Sequence[FoldItem], depth: int, *, target_tokens: int | None = None) -> str:
        """Select salient sentences within ``target_tokens`` (see the module docstring)."""
        candidates: list[tuple[float, int, int, str]] = []  # score, order, item index, sentence
        seen: dict[str, int] = {}
        order = 0
        for index, item in enumerate(items):
            lines = item.text.splitlines() if item.kind == "card" else [item.text]
            for line in lines:
                for sentence in _sentences(line):
                    s = self.score(sentence, item, depth)
                    if s <= 0:
                        continue
                    key = " ".join(sentence.lower().split())
                    if key in seen:
                        if depth > 1:  # keep the newest statement of a repeated line
                            candidates[seen[key]] = (0.0, -1, -1, "")
                        else:
                            continue
                    seen[key] = len(candidates)
                    candidates.append((s, order, index, sentence))
                    order += 1
        candidates = [c for c in candidates if c[1] >= 0]
        if not candidates:
            what = "turns" if depth <= 1 else "summaries"
            return clip_to_tokens(f"{len(items)} {what} of small talk, nothing specific.",
                                  target_tokens if target_tokens is not None else 10 ** 9, self.counter)
        if depth <= 1:
            ranked = sorted(candidates, key=lambda c: (-c[0], c[1]))
        else:
            ranked = sorted(candidates, key=lambda c: (-c[0], -c[1]))
        budget = target_tokens if target_tokens is not None else 10 ** 9
        chosen: list[tuple[float, int, int, str]] = []
        used = 0
        for cand in ranked:
            cost = self.counter.count(_tag(items[cand[2]]) + cand[3])
            if used + cost <= budget:
                chosen.append(cand)
                used += cost
        if not chosen:  # even the best sentence is too long: keep its beginning
            best = ranked[0]
            return clip_to_tokens(_tag(items[best[2]]) + best[3], budget, self.counter)
        chosen.sort(key=lambda c: c[1])
        lines: list[str] = []
        last_index = None
        for _, _, index, sentence in chosen:
            if index == last_index and lines:
                lines[-1] += " " + sentence
            else:
                lines.append(_tag(items[index]) + sentence)
            last_index = index
        return clip_to_tokens("\n".join(lines), budget, self.counter)
