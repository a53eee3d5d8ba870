"""Full-text search helpers for SQLite FTS5 (BM25).

Invariant kept here: user text is always searched *literally*. Quotes, ``*``, ``-``, ``NEAR``,
``AND``, ``OR``, ``NOT``, parentheses and colons in a query are never FTS5 syntax, so no user
query can raise a syntax error (issue 4, point 7).
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)


def literal_terms(text: str) -> list[str]:
    """The word tokens of ``text`` (letters, digits, underscore), in order, without duplicates."""
    seen: dict[str, None] = {}
    for term in _WORD.findall(text or ""):
        seen.setdefault(term.lower(), None)
    return list(seen)


def literal_query(text: str, *, mode: str = "or") -> str | None:
    """An FTS5 MATCH expression that searches ``text`` literally.

    Each word becomes a double-quoted phrase (so ``NEAR`` or ``AND`` are plain words), joined by
    ``OR`` (``mode="or"``, best for BM25 ranking of natural questions) or ``AND``.

    :returns: the expression, or ``None`` when ``text`` has no searchable word.
    """
    terms = literal_terms(text)
    if not terms:
        return None
    joiner = " OR " if mode == "or" else " AND "
    return joiner.join('"' + t.replace('"', '""') + '"' for t in terms)
