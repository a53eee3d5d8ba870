"""Secrets at append: PINs, passwords and security answers are found where they are written.

Secrets are not memories (issue 9, point 2): a turn that holds one is archived with the label
``secret`` (:data:`memfold.window.labels.SECRET_LABEL`), so it stays verbatim in the archive for
readers holding that label, never reaches a summarizer (no card text repeats it), never becomes a
protected record, and reaches the consolidation pass only with each secret span masked as
:data:`SECRET_MASK` (no fact holds a secret). :meth:`memfold.window.conversation.Conversation.append`
runs the facade's detector on every turn (``MemFold(..., secrets="detect")``, the default).

Detection reads only the conversation itself (the turn and the one before it), never gold data,
and errs on the side of secrecy. It returns *spans* (character offsets into the turn's content):

1. a turn by anyone that names a PIN, password or passcode next to a number: when the keyword
   is directly followed by its value ("PIN 5380", "my pin # is 0314", "PIN is either 1596 or
   3941") the numbers after it (within 60 characters) are the secret, so "85731890, with PIN
   5380" masks only ``5380``; otherwise every number within 60 characters on either side is
   ("It says 7402 and 0314. Those might be my PIN numbers");
2. a whole user turn that mentions a security answer, a password, a maiden name or a pet's name
   ("my mother's maiden name is Sanders": where the answer sits is not known, so all of it);
3. a whole user turn that directly follows an assistant turn asking for (or about) a PIN,
   password, security question or answer, maiden name, pet or authentication ("What is your
   PIN?" -> "1596"; "It's to authenticate your account" -> "Oh yes. It's 5380").

Numbers are 3-8 digits and not part of a date (``04/04/1990``) or a longer number.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, Protocol, Sequence

from ..memory.errors import InvalidInput
from .labels import SECRET_LABEL

#: what replaces each secret span in the text the consolidation pass reads
SECRET_MASK = "[secret]"
#: the turn metadata key holding the secret spans found at append: ``[[start, end], ...]``
#: (character offsets into ``content``, end exclusive); a turn labelled ``secret`` without it is
#: secret as a whole
SECRET_SPANS_KEY = "secret_spans"

_NUMBER = re.compile(r"(?<![\d/.-])\d{3,8}(?![\d/])")  # not part of a date like 04/04/1990
_KEYWORD = re.compile(r"\b(?:pin|pins|password|passcode)\b", re.IGNORECASE)
#: a keyword directly followed by its value: "PIN 5380", "pin # is 0314", "PIN: either 1596"
_DIRECT_VALUE = re.compile(
    r"\A(?:\s*(?:number|no\.?|#|code))?(?:\s*(?:is|was|will be|would be|should be|might be|could be|"
    r"may be|it's|it is|either|maybe|probably|:|=|-))*\s*(?=\d)", re.IGNORECASE)
_REACH = 60  # characters between a keyword and a number that still go together
_USER_SECRET_WORDS = re.compile(
    r"\b(?:security (?:answer|question)s?|password|passcode|maiden|pet'?s? name|name of (?:my|the) pet)\b",
    re.IGNORECASE)
#: words in an assistant's turn that ask for (or about) a secret: the user's reply is secret
ASKS_SECRET = re.compile(
    r"\b(?:pin|pins|password|passcode|security (?:question|answer)s?|maiden|pet|authenticat\w*)\b",
    re.IGNORECASE)

Span = tuple[int, int]


class SecretDetectorLike(Protocol):
    """What ``MemFold(secrets=...)`` accepts as a custom detector: one method, no state needed."""

    def spans(self, turn: Mapping[str, Any], previous: Mapping[str, Any] | None = None) -> Sequence[Span]:
        """Secret spans of ``turn``'s content (see :meth:`SecretDetector.spans`)."""


class SecretDetector:
    """Finds the secret spans of a conversation's turns (rules in the module docstring).

    :meth:`spans` is stateless (the previous turn is passed in); :meth:`detect`,
    :meth:`is_secret` and :meth:`labels` remember the previous turn themselves, for a caller that
    feeds every turn of one conversation in order (seed with ``SecretDetector(previous=...)``).
    A custom detector for ``MemFold(secrets=...)`` needs only a ``spans`` method of this shape.
    """

    id = "rules"

    def __init__(self, previous: Mapping[str, Any] | None = None) -> None:
        self._previous: Mapping[str, Any] | None = previous

    def spans(self, turn: Mapping[str, Any], previous: Mapping[str, Any] | None = None) -> list[Span]:
        """The secret spans of ``turn``'s content, merged and sorted; ``[]`` when it holds none.

        :param turn: an OpenAI-shaped message (``role``, ``content``).
        :param previous: the turn just before it in the conversation (None for the first).
        :returns: ``[(start, end), ...]`` character offsets into ``content`` (end exclusive).
        """
        text = turn.get("content")
        if not isinstance(text, str) or not text:
            return []
        role = turn.get("role")
        if role == "user" and _USER_SECRET_WORDS.search(text):
            return [(0, len(text))]
        if (role == "user" and previous is not None and previous.get("role") == "assistant"
                and isinstance(previous.get("content"), str) and ASKS_SECRET.search(previous["content"])):
            return [(0, len(text))]
        return merge_spans(_numbers_next_to_keywords(text))

    def detect(self, turn: Mapping[str, Any]) -> list[Span]:
        """:meth:`spans` of ``turn`` after the turn fed last; call once per turn, in order."""
        previous, self._previous = self._previous, turn
        return self.spans(turn, previous)

    def is_secret(self, turn: Mapping[str, Any]) -> bool:
        """True when ``turn`` holds a secret (:meth:`detect`; call once per turn, in order)."""
        return bool(self.detect(turn))

    def labels(self, turn: Mapping[str, Any]) -> list[str]:
        """``["secret"]`` or ``[]`` for ``turn`` (see :meth:`is_secret`)."""
        return [SECRET_LABEL] if self.is_secret(turn) else []


def _numbers_next_to_keywords(text: str) -> list[Span]:
    numbers = [(m.start(), m.end()) for m in _NUMBER.finditer(text)]
    out: list[Span] = []
    for kw in _KEYWORD.finditer(text):
        after = [n for n in numbers if n[0] >= kw.end() and n[0] - kw.end() <= _REACH]
        before = [n for n in numbers if n[1] <= kw.start() and kw.start() - n[1] <= _REACH]
        lead = text[kw.end():after[0][0]] if after else ""
        direct = _DIRECT_VALUE.match(lead + "0")
        if after and direct is not None and direct.end() == len(lead):
            out.extend(after)  # "PIN 5380": the value follows, so a number before it is not the PIN
        else:
            out.extend(before + after)
    return out


def merge_spans(spans: Iterable[Span]) -> list[Span]:
    """Sort ``spans`` and merge the overlapping or touching ones."""
    out: list[Span] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def redact(text: str, spans: Iterable[Span], mask: str = SECRET_MASK) -> str:
    """``text`` with every span replaced by ``mask`` (spans as :meth:`SecretDetector.spans` gives)."""
    parts, at = [], 0
    for start, end in merge_spans(spans):
        parts.append(text[at:start])
        parts.append(mask)
        at = end
    parts.append(text[at:])
    return "".join(parts)


def stored_spans(content: str, metadata: Mapping[str, Any] | None) -> list[Span] | None:
    """The secret spans recorded in a turn's metadata (:data:`SECRET_SPANS_KEY`), or None when
    there are none or they are malformed (then the whole turn counts as secret)."""
    raw = (metadata or {}).get(SECRET_SPANS_KEY)
    if not isinstance(raw, list) or not raw:
        return None
    spans: list[Span] = []
    for item in raw:
        if (not isinstance(item, (list, tuple)) or len(item) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in item)
                or not 0 <= item[0] < item[1] <= len(content)):
            return None
        spans.append((item[0], item[1]))
    return merge_spans(spans)


def readable_text(content: str, labels: Iterable[str], metadata: Mapping[str, Any] | None) -> str | None:
    """What a reader without the ``secret`` label may learn from a turn: the content itself when
    it is not secret, the content with each recorded secret span masked when it is, and None when
    the whole turn is secret (no spans recorded, or nothing but masks and punctuation left)."""
    if SECRET_LABEL not in set(labels):
        return content
    spans = stored_spans(content, metadata)
    if spans is None:
        return None
    text = redact(content, spans)
    if not re.search(r"\w", text.replace(SECRET_MASK, "")):
        return None
    return text


def make_secret_detector(setting: Any) -> Any:
    """The detector for ``MemFold(secrets=...)``: ``"detect"`` (default) -> :class:`SecretDetector`,
    ``"off"`` / ``None`` -> None (nothing is labelled), or any object with a ``spans(turn,
    previous)`` method (:class:`SecretDetectorLike`), used as given.

    :raises InvalidInput: for anything else.
    """
    if setting == "detect":
        return SecretDetector()
    if setting is None or setting == "off":
        return None
    if isinstance(setting, str) or not callable(getattr(setting, "spans", None)):
        raise InvalidInput(f"secrets must be 'detect', 'off' or a detector with a spans(turn, previous) method, "
                           f"got {setting!r}")
    return setting


def label_turn(turn: Mapping[str, Any], spans: Sequence[Span]) -> Mapping[str, Any]:
    """``turn`` with the ``secret`` label and its spans added when ``spans`` is not empty.

    Labels the caller gave are kept (merged). The spans go to the metadata key
    :data:`SECRET_SPANS_KEY` only when the caller did not label the turn ``secret`` already (a
    turn the caller calls secret stays secret as a whole, unless the caller gave spans). A turn
    whose labels or metadata are malformed is returned unchanged, for validation to refuse it.
    """
    if not spans:
        return turn
    labels = turn.get("labels")
    metadata = turn.get("metadata")
    if labels is not None and not isinstance(labels, (list, tuple)):
        return turn
    if metadata is not None and not isinstance(metadata, dict):
        return turn
    labels = list(labels or [])
    out = dict(turn)
    if SECRET_LABEL not in labels:
        out["metadata"] = {**(metadata or {}), SECRET_SPANS_KEY: [[s, e] for s, e in merge_spans(spans)]}
        out["labels"] = labels + [SECRET_LABEL]
    return out


def check_detector_spans(spans: Any, content: str, detector: Any) -> list[Span]:
    """Validate what a (custom) detector returned for ``content``.

    :raises InvalidInput: naming the detector, for anything but ``(start, end)`` pairs inside the text.
    """
    out: list[Span] = []
    for item in spans or ():
        if (not isinstance(item, (list, tuple)) or len(item) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in item)
                or not 0 <= item[0] < item[1] <= len(content)):
            raise InvalidInput(f"secret detector {type(detector).__name__} returned {item!r}: a span must be "
                               f"(start, end) with 0 <= start < end <= {len(content)}")
        out.append((item[0], item[1]))
    return out
