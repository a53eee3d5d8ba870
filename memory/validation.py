"""Checks shared by every write path: text, names, labels, importance (DESIGN.md §5).

Every check raises :class:`~memfold.memory.errors.InvalidInput` naming the field, the rule and
the fix, and runs before anything is written.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from numbers import Real
from typing import Iterable

from .errors import InvalidInput


def check_text(value: object, what: str, *, allow_empty: bool = False) -> str:
    """Return ``value`` if it is storable text.

    Rejects non-strings, empty or whitespace-only text (unless ``allow_empty``), NUL bytes and
    lone surrogates (which cannot be encoded as UTF-8 and would be lost).

    :raises InvalidInput: naming ``what`` and the problem.
    """
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise InvalidInput(f"{what} is empty or whitespace only: give some text")
    if "\x00" in value:
        raise InvalidInput(f"{what} contains a NUL byte (\\x00) at position {value.index(chr(0))}: remove it")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(
            f"{what} contains a lone surrogate {value[exc.start]!r} at position {exc.start}: "
            "it is not valid Unicode text; decode the source with errors='replace' or fix it"
        ) from None
    return value


#: characters a name may not hold (round 13): control characters (a newline in a conversation id
#: breaks every line-per-item listing) and invisible ones that make two different names look the
#: same ("acme/\u200bdana", a right-to-left override); the zero-width joiner of emoji stays allowed
_NOT_IN_NAMES = re.compile("[\x00-\x1f\x7f-\x9f\u200b\u200c\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]")


#: the longest name (namespace, key, conversation id, label) in characters: every turn, card and
#: record row repeats its names, so a 100,000-character conversation id, namespace and label made 20
#: turns of "hello" a 14 MB file (round 14); the names of every phrasing set, benchmark and
#: integration are far shorter
MAX_NAME_CHARS = 1_000


def check_name(value: object, what: str) -> str:
    """A namespace, key, conversation id or label: non-empty text without surrounding whitespace,
    at most :data:`MAX_NAME_CHARS` characters.

    :raises InvalidInput: when empty, not a string, too long, padded with whitespace, or containing
        NUL, surrogates, control characters or invisible ones (zero-width spaces, direction overrides).
    """
    check_text(value, what)
    assert isinstance(value, str)
    if len(value) > MAX_NAME_CHARS:
        raise InvalidInput(f"{what} {value[:40]!r}... is {len(value):,} characters long: a name has at most "
                           f"{MAX_NAME_CHARS:,}")
    if value != value.strip():
        raise InvalidInput(f"{what} {value!r} has leading or trailing whitespace: strip it")
    bad = _NOT_IN_NAMES.search(value)
    if bad is not None:
        raise InvalidInput(f"{what} {value!r} contains the invisible or control character "
                           f"U+{ord(bad.group()):04X} at position {bad.start()}: remove it")
    return value


def check_importance(value: object) -> float:
    """An importance in [0, 1]. :raises InvalidInput: for NaN, infinities, bools, non-numbers or out of range."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InvalidInput(f"importance must be a number in [0, 1], got {value!r}")
    try:
        v = float(value)
    except OverflowError:  # an int past the float range
        raise InvalidInput("importance is an integer past any float: give a number in [0, 1]") from None
    if math.isnan(v):
        raise InvalidInput("importance is NaN: give a number in [0, 1]")
    if not 0.0 <= v <= 1.0:
        raise InvalidInput(f"importance {v} is outside [0, 1]")
    return v


def check_labels(labels: object, what: str = "labels") -> list[str]:
    """A list of label names, deduplicated and sorted. :raises InvalidInput: for a non-list or a bad name."""
    if labels is None:
        return []
    if isinstance(labels, str) or not isinstance(labels, Iterable):
        raise InvalidInput(f"{what} must be a list of label names, got {labels!r}")
    return sorted({check_name(label, f"label in {what}") for label in labels})


def check_provenance(provenance: object, what: str = "provenance") -> list[str]:
    """A list of source ids (``"turn:5"``, ``"record:12"``). :raises InvalidInput: for a single
    string (it would be split into characters), a non-list or a bad id."""
    if provenance is None:
        return []
    if isinstance(provenance, (str, bytes)) or not isinstance(provenance, Iterable):
        raise InvalidInput(f"{what} must be a list of source ids, got {provenance!r}: pass [{provenance!r}]")
    out = []
    for item in provenance:
        if isinstance(item, bool) or not isinstance(item, (str, int)):
            raise InvalidInput(f"a {what} id must be text such as 'turn:5', got {item!r}")
        out.append(check_name(str(item), f"{what} id"))
    return out


#: how deeply a metadata object may nest: json's decoder recurses once per level, so a record or
#: turn nested ~1,000 deep is written fine and then cannot be read back (RecursionError), and
#: the HTTP API's serializer gives up past ~250 levels
MAX_METADATA_DEPTH = 64


def _depth(value: object, limit: int) -> int:
    """The nesting depth of a JSON value, counted without recursion and stopping past ``limit``."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list, tuple)):
            deepest = max(deepest, level)
            if deepest > limit:
                return deepest
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def metadata_json(metadata: object, what: str = "metadata") -> str:
    """``metadata`` (a dict or ``None``) as the JSON text stored for it.

    :raises InvalidInput: naming ``what`` for a non-dict, a value JSON cannot hold (NaN or an
        infinity: not JSON, so an export would not be JSON and the HTTP API would read it as
        ``null``), a lone surrogate, or nesting deeper than :data:`MAX_METADATA_DEPTH` levels.
    """
    if metadata is None:
        return "{}"
    if not isinstance(metadata, dict):
        raise InvalidInput(f"{what} must be a dict, got {metadata.__class__.__name__} {metadata!r}")
    if _depth(metadata, MAX_METADATA_DEPTH) > MAX_METADATA_DEPTH:
        raise InvalidInput(f"{what} nests deeper than {MAX_METADATA_DEPTH} levels: flatten it")
    try:
        text = json.dumps(metadata, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except ValueError as exc:
        raise InvalidInput(f"{what} is not JSON: {exc} (NaN and infinities have no JSON form)") from None
    except TypeError as exc:
        raise InvalidInput(f"{what} is not JSON-serialisable: {exc}") from None
    check_text(text, what, allow_empty=True)  # a lone surrogate, which UTF-8 cannot store
    return text


def check_flag(value: object, what: str) -> bool:
    """A yes/no setting: only ``True`` or ``False`` (``"no"`` is truthy and would mean yes).

    :raises InvalidInput: for anything that is not a bool.
    """
    if not isinstance(value, bool):
        raise InvalidInput(f"{what} must be True or False, got {value!r}")
    return value


def check_count(value: object, what: str, *, minimum: int = 1, allow_none: bool = False) -> int | None:
    """A whole number of results (``limit``, ``k``) of at least ``minimum``.

    :raises InvalidInput: for a bool, a non-integer or a value below ``minimum``.
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidInput(f"{what} must be a whole number >= {minimum}, got {value!r}")
    return value


def result_count(limit: object, k: object, *, default: int, where: str) -> tuple[object, str]:
    """The result count of a call that takes ``limit=`` (the one name, issue 20 point 7) and the
    deprecated alias ``k=``: ``(value, the name it was given as)``. Using ``k`` warns with a
    :class:`DeprecationWarning`; its value is checked by the caller under the name used.

    :raises InvalidInput: when both are given with different values.
    """
    if k is None:
        return limit, "limit"
    warnings.warn(f"{where}(k=...) is deprecated: use limit=... (the same number of results)",
                  DeprecationWarning, stacklevel=3)
    if limit != default and limit != k:
        raise InvalidInput(f"{where}: give limit= or the deprecated k=, not both (got limit={limit!r}, k={k!r})")
    return k, "k"


#: the largest id SQLite can store (a signed 64-bit INTEGER)
MAX_ID = 2**63 - 1


def check_id(value: object, what: str) -> int:
    """A row id: an integer from 1 to :data:`MAX_ID` (SQLite's INTEGER range).

    :raises InvalidInput: for a non-integer, a bool, or a value out of range (such an id can never
        exist, and SQLite could not even compare it).
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{what} must be an integer, got {value!r}")
    if value < 1:
        raise InvalidInput(f"{what} {value} is out of range: ids start at 1")
    if value > MAX_ID:
        raise InvalidInput(f"{what} {value} is out of range: no id is that large (ids start at 1 and count up)")
    return value
