"""Detect secrets in a conversation as it is replayed: PINs, passwords, security answers.

Secrets are not memories (issue 9, point 2): a turn that holds one is appended with the label
``secret`` (:data:`memfold.window.labels.SECRET_LABEL`), so it stays verbatim in the archive for
readers holding that label, never reaches a summarizer (no card text repeats it), never reaches
the consolidation pass (no fact holds it) and never becomes a protected record.

Detection reads only the conversation itself, never gold data; it errs on the side of secrecy:

1. a turn by anyone that names a PIN, password or passcode next to a number
   ("my PIN is 1596", "it says 7402 and 0314, those might be my pin");
2. a user turn that mentions a security answer, a password, a maiden name or a pet's name
   ("my mother's maiden name is Sanders");
3. a user turn that directly follows an assistant turn asking for (or about) a PIN, password,
   security question or answer, maiden name, pet or authentication ("What is your PIN?" ->
   "1596"; "It's to authenticate your account" -> "Oh yes. It's 5380").
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from ..window.labels import SECRET_LABEL

_NUMBER = r"(?<![\d/.-])\d{3,8}(?![\d/])"  # not part of a date like 04/04/1990
_PIN_NEAR_NUMBER = re.compile(
    r"\b(?:pin|pins|password|passcode)\b.{0,60}?" + _NUMBER + "|" + _NUMBER + r".{0,60}?\b(?:pin|pins|password|passcode)\b",
    re.IGNORECASE | re.DOTALL)
_USER_SECRET_WORDS = re.compile(
    r"\b(?:security (?:answer|question)s?|password|passcode|maiden|pet'?s? name|name of (?:my|the) pet)\b",
    re.IGNORECASE)
_ASKS_SECRET = re.compile(
    r"\b(?:pin|pins|password|passcode|security (?:question|answer)s?|maiden|pet|authenticat\w*)\b", re.IGNORECASE)


class SecretDetector:
    """Labels the turns of one conversation that hold secrets; feed it every turn in order.

    Stateful only in remembering the previous turn (rule 3 of the module docstring).
    """

    def __init__(self) -> None:
        self._previous: Mapping[str, Any] | None = None

    def is_secret(self, turn: Mapping[str, Any]) -> bool:
        """True when ``turn`` (an OpenAI-shaped message) holds a secret; call once per turn, in order."""
        text = turn.get("content") or ""
        role = turn.get("role")
        previous, self._previous = self._previous, turn
        if _PIN_NEAR_NUMBER.search(text):
            return True
        if role != "user":
            return False
        if _USER_SECRET_WORDS.search(text):
            return True
        return bool(previous is not None and previous.get("role") == "assistant"
                    and _ASKS_SECRET.search(previous.get("content") or ""))

    def labels(self, turn: Mapping[str, Any]) -> list[str]:
        """``["secret"]`` or ``[]`` for ``turn`` (see :meth:`is_secret`)."""
        return [SECRET_LABEL] if self.is_secret(turn) else []
