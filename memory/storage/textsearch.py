"""Tokens, match expressions, BM25 and snippets as FTS5 computes them, in Python: the PostgreSQL
full-text indexes rank with them, and SQLite takes its snippet of a very long text from them.

Search must give the same results on both backends (issue 17, point 2), so PostgreSQL does not
use its own text parser and ranking (``to_tsvector`` splits ``$180.00`` and ``user-id``
differently from SQLite's ``unicode61`` tokenizer, and ``ts_rank`` is not BM25). Instead:

* :func:`tokens` reproduces FTS5's ``unicode61 remove_diacritics 2``: a token is a run of letters
  and digits, case-folded, with diacritics removed. Each item's tokens are stored as a
  ``tsvector`` (lexeme -> positions) with a GIN index, which answers "which items match" for
  exact words (``'tok'``), prefixes (``'tok':*``) and phrases (``'a' <-> 'b'``).
* :func:`parse_match` reads the MATCH expressions memfold builds (double-quoted phrases,
  optionally prefixes, joined by ``OR`` / ``AND``) into phrases and a ``tsquery``.
* :func:`bm25` is FTS5's ``bm25()`` (k1 = 1.2, b = 0.75, ``idf = ln((N - n + 0.5)/(n + 0.5))``
  floored at 1e-6; lower is better), from term frequencies read off the stored positions.
* :func:`snippet` is FTS5's ``snippet(..., '[', ']', '…', 12)``: the 12-token window with the most
  distinct matched phrases, matches in brackets.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Iterable, Sequence

from ..errors import StorageError

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
#: the largest position a tsvector keeps, and positions per lexeme
MAX_POSITION = 16383
MAX_POSITIONS = 256
#: FTS5's bm25 constants
K1, B = 1.2, 0.75


def fold(token: str) -> str:
    """One token case-folded with its diacritics removed (``Crème`` -> ``creme``)."""
    if token.isascii():
        return token.lower()
    decomposed = unicodedata.normalize("NFD", token)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()


def token_spans(text: str) -> list[tuple[int, int, str]]:
    """``[(start, end, folded token)]`` of ``text``, in order."""
    out = []
    for m in _TOKEN.finditer(text or ""):
        folded = fold(m.group())
        if folded:
            out.append((m.start(), m.end(), folded))
    return out


def tokens(text: str) -> list[str]:
    """The folded tokens of ``text``, in order."""
    return [t for _, _, t in token_spans(text)]


def tsvector_literal(text: str) -> tuple[int, str]:
    """``(token count, tsvector text)`` for ``text``: each lexeme with its 1-based positions."""
    toks = tokens(text)
    positions: dict[str, list[int]] = {}
    for i, tok in enumerate(toks, start=1):
        if i > MAX_POSITION or len(tok.encode()) > 2000:
            continue
        slot = positions.setdefault(tok, [])
        if len(slot) < MAX_POSITIONS:
            slot.append(i)
    return len(toks), " ".join(f"'{lex}':{','.join(map(str, pos))}" for lex, pos in positions.items())


@dataclass(frozen=True)
class Phrase:
    """One quoted phrase of a match expression: its folded tokens; ``prefix``: the last is a prefix."""

    tokens: tuple[str, ...]
    prefix: bool

    def tsquery(self) -> str:
        parts = [f"'{t}'" for t in self.tokens]
        if self.prefix:
            parts[-1] += ":*"
        return " <-> ".join(parts)

    def matches_lexeme(self, i: int, lexeme: str) -> bool:
        want = self.tokens[i]
        if self.prefix and i == len(self.tokens) - 1:
            return lexeme.startswith(want)
        return lexeme == want

    def count(self, positions: dict[str, Sequence[int]]) -> int:
        """How many times the phrase occurs, given ``{lexeme: positions}`` of one item."""
        if not self.tokens:
            return 0
        per_token: list[set[int]] = []
        for i in range(len(self.tokens)):
            hits: set[int] = set()
            for lexeme, pos in positions.items():
                if self.matches_lexeme(i, lexeme):
                    hits.update(pos)
            per_token.append(hits)
        if len(per_token) == 1:
            if self.prefix:  # a prefix counts every matching token
                return sum(len(pos) for lexeme, pos in positions.items() if self.matches_lexeme(0, lexeme))
            return len(per_token[0])
        return sum(1 for p in per_token[0] if all(p + k in per_token[k] for k in range(1, len(per_token))))

    def lexeme_filter(self) -> tuple[list[str], list[str]]:
        """``(exact lexemes, LIKE patterns)`` selecting the lexemes this phrase may use."""
        exact = list(self.tokens[:-1] if self.prefix else self.tokens)
        like = [self.tokens[-1] + "%"] if self.prefix and self.tokens else []
        return exact, like


@dataclass(frozen=True)
class Match:
    """A parsed match expression: an OR of AND groups of phrases."""

    groups: tuple[tuple[Phrase, ...], ...]

    @property
    def phrases(self) -> list[Phrase]:
        """Every distinct phrase, in order of appearance."""
        return list(dict.fromkeys(p for g in self.groups for p in g))

    def tsquery(self) -> str | None:
        """The ``tsquery`` text, or ``None`` when no phrase can match (every phrase empty)."""
        ors = []
        for group in self.groups:
            if any(not p.tokens for p in group):
                continue  # an empty phrase matches nothing, so its AND group cannot match
            ors.append("(" + " & ".join(f"({p.tsquery()})" for p in group) + ")")
        return " | ".join(ors) if ors else None

    def matches(self, positions: dict[str, Sequence[int]]) -> bool:
        return any(all(p.count(positions) > 0 for p in group) for group in self.groups)

    def lexeme_filter(self) -> tuple[list[str], list[str]]:
        exact: list[str] = []
        like: list[str] = []
        for p in self.phrases:
            e, l = p.lexeme_filter()
            exact += e
            like += l
        return sorted(set(exact)), sorted(set(like))


class MatchSyntaxError(ValueError):
    """The match expression is not one this index reads (the cause of the ``StorageError``)."""


def _refused(match: str, why: str) -> StorageError:
    error = StorageError(f"the full-text index cannot parse the query {match!r}: {why}")
    error.__cause__ = MatchSyntaxError(why)
    return error


_PIECE = re.compile(r'\s*(?:"((?:[^"]|"")*)"(\s*\*)?|(OR|AND)\b)')


def parse_match(match: str) -> Match:
    """Parse a match expression of :func:`memfold.memory.fts.literal_query` /
    :func:`memfold.memory.search.bm25_query` (AND binds tighter than OR, as in FTS5).

    :raises StorageError: for an expression outside that form (as FTS5 would refuse it).
    """
    pos, groups, group, expect_phrase = 0, [], [], True
    text = match or ""
    while pos < len(text.rstrip()):
        m = _PIECE.match(text, pos)
        if m is None or m.end() == pos:
            raise _refused(match, f"unexpected text at {text[pos:pos + 20]!r}")
        pos = m.end()
        if m.group(3):
            if expect_phrase:
                raise _refused(match, f"{m.group(3)} without a word before it")
            if m.group(3) == "OR":
                groups.append(tuple(group))
                group = []
            expect_phrase = True
            continue
        if not expect_phrase:  # two phrases side by side: FTS5's implicit AND
            pass
        group.append(Phrase(tuple(tokens(m.group(1).replace('""', '"'))), bool(m.group(2))))
        expect_phrase = False
    if expect_phrase:
        raise _refused(match, "it ends without a word")
    groups.append(tuple(group))
    return Match(tuple(groups))


def idf(n_rows: int, n_hit: int) -> float:
    """FTS5's idf: ``ln((N - n + 0.5) / (n + 0.5))``, at least 1e-6."""
    value = math.log((n_rows - n_hit + 0.5) / (n_hit + 0.5))
    return value if value > 0 else 1e-6


def bm25(phrases: Sequence[Phrase], tf: dict[Phrase, int], doc_len: int, idfs: dict[Phrase, float],
         avgdl: float) -> float:
    """FTS5's ``bm25()`` of one row (negative: lower is better)."""
    score = 0.0
    for p in phrases:
        f = tf.get(p, 0)
        if f:
            score += idfs[p] * (f * (K1 + 1)) / (f + K1 * (1 - B + B * doc_len / avgdl))
    return -score


def snippet(text: str, match: Match, width: int = 12) -> str | None:
    """The ``width``-token snippet of ``text`` around its best matches, matches in ``[...]``,
    ``…`` where text is cut; ``None`` when ``text`` does not match."""
    spans = token_spans(text)
    positions: dict[str, list[int]] = {}
    for i, (_, _, tok) in enumerate(spans):
        positions.setdefault(tok, []).append(i + 1)
    if not match.matches(positions):
        return None
    phrases = match.phrases
    hits: list[tuple[int, int, int]] = []  # (first token index, last token index, phrase number)
    for n, p in enumerate(phrases):
        k = len(p.tokens)
        if not k:
            continue
        for i in range(len(spans) - k + 1):
            if all(p.matches_lexeme(j, spans[i + j][2]) for j in range(k)):
                hits.append((i, i + k - 1, n))
    hits.sort()
    total = len(spans)
    best_start, best_score = 0, -1
    lo = 0
    for first, _, _ in hits:
        start = max(0, first)
        # only the hits starting inside the window can score (sorted by start, so a scan from
        # the first one at ``start``): linear in the hits, not quadratic, for a huge text
        while hits[lo][0] < start:
            lo += 1
        seen: set[int] = set()
        score = 0
        for j in range(lo, len(hits)):
            a, b, n = hits[j]
            if a >= start + width:
                break
            if b < start + width:
                score += 1 if n in seen else 1000
                seen.add(n)
        if score > best_score:
            best_start, best_score = start, score
    inside = [(a, b) for a, b, _ in hits if a >= best_start and b < best_start + width]
    if inside:  # centre the matches in the window, as FTS5's fts5SnippetScore does
        first, last = inside[0][0], max(b for _, b in inside)
        adjust = first - (width - (last - first + 1)) // 2
        if adjust + width > total:
            adjust = total - width
        best_start = max(0, adjust)
    end = min(total, best_start + width)
    marked = {i for a, b, _ in hits if a >= best_start and b < end for i in range(a, b + 1)}
    out = []
    if best_start > 0:
        out.append("…")
    cursor = spans[best_start][0] if best_start > 0 else 0
    for i in range(best_start, end):
        s, e, _ = spans[i]
        out.append(text[cursor:s])
        out.append(f"[{text[s:e]}]" if i in marked else text[s:e])
        cursor = e
    if end < total:
        out.append("…")
    else:
        out.append(text[cursor:])
    return "".join(out)


def positions_of(rows: Iterable[tuple[str, Sequence[int]]]) -> dict[str, list[int]]:
    """``{lexeme: positions}`` from ``(lexeme, positions)`` rows of ``unnest(tsvector)``."""
    out: dict[str, list[int]] = {}
    for lexeme, pos in rows:
        out.setdefault(lexeme, []).extend(pos or ())
    return out
