"""PostgreSQL: tsvector indexes and BM25 ranking (implements :class:`memfold.memory.storage.base.FullTextStorage`).

``turns_fts``, ``cards_fts`` and ``records_fts`` hold one GIN-indexed ``tsvector`` per item,
written with the item (and deleted by erasure in the same transaction). GIN finds the matching
items; the score is FTS5's ``bm25()`` computed from the stored positions (:mod:`..textsearch`),
so both backends rank alike (issue 17, point 2). Every
query here is scoped *before* ranking (lineage, namespace, type, key, time, reader labels), so a
hit never comes from outside what the caller may see (DESIGN.md §4.9).

The candidate, neighbour and item queries read the ``turns``, ``cards``, ``records`` and
``conversations`` tables: they are here because search is their only user and they share the
scoping SQL with the BM25 queries.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

import numpy as np

from ...errors import CardNotFound, InvalidInput, RecordNotFound, TurnNotFound
from ..rows import SearchItem, SearchScope, TextMatch
from .db import PostgresDB
from ..textsearch import Match, Phrase, bm25, idf, parse_match, snippet, tokens

#: the full-text table and the alias of the content table, per item kind
_FTS = {"turn": "turns_fts", "record": "records_fts", "card": "cards_fts"}
_ALIAS = {"turn": "t", "record": "r", "card": "k"}
_MISSING = {"turn": TurnNotFound, "record": RecordNotFound, "card": CardNotFound}


def _fts(kind: str, kinds: Sequence[str] = ("turn", "record", "card")) -> str:
    """The full-text table of ``kind``. :raises InvalidInput: for a kind that is not one of ``kinds``."""
    if kind not in kinds:
        raise InvalidInput(f"unknown item kind {kind!r}: use one of {', '.join(kinds)}")
    return _FTS[kind]


def _missing(kind: str, item_id: int) -> Exception:
    return _MISSING[kind](f"no {kind} {item_id}")


#: ids per ``IN (...)`` list of a batch read (well under SQLite's variable limit)
_BATCH = 500


def _chunks(ids: Sequence[int]) -> list[list[int]]:
    """``ids`` without repeats, in order, cut into lists of at most :data:`_BATCH`."""
    unique = list(dict.fromkeys(ids))
    return [unique[i:i + _BATCH] for i in range(0, len(unique), _BATCH)]


def _lineage_clause(alias: str, seq_column: str, lineage: Sequence[tuple[str, int | None]]) -> tuple[str, list[Any]]:
    """SQL over ``alias`` selecting the turns (or cards, by ``last_seq``) a conversation sees: each
    lineage member's own rows, up to its fork point when it has one (DESIGN.md §1 "family")."""
    parts, params = [], []
    for conversation_id, upto in lineage:
        if upto is None:
            parts.append(f"{alias}.conversation_id = %s")
            params.append(conversation_id)
        else:
            parts.append(f"({alias}.conversation_id = %s AND {alias}.{seq_column} <= %s)")
            params.extend([conversation_id, upto])
    return "(" + " OR ".join(parts) + ")", params


def _labels_clause(column: str, reader_labels: Sequence[str] | None) -> tuple[str, list[Any]]:
    """SQL true when every label required by ``column`` (a JSON list) is held by the reader."""
    if reader_labels is None:
        return "", []
    held = list(reader_labels)
    if not held:
        return f"{column}::jsonb = '[]'::jsonb", []
    return f"{column}::jsonb <@ %s::jsonb", [json.dumps(held)]


def _filter(kind: str, scope: SearchScope) -> tuple[str, str, list[Any]]:
    """``(from_sql, where_sql, params)`` selecting the live items of ``kind`` inside ``scope``.

    Fields that do not apply to a kind (``type``/``key`` on turns and cards, ``lineage`` on
    records) are the caller's to leave out.
    """
    where: list[str] = []
    params: list[Any] = []
    if kind == "turn":
        frm = "turns t JOIN conversations c ON c.id = t.conversation_id"
        where.append("t.erased = 0")
        if scope.lineage is not None:
            clause, p = _lineage_clause("t", "seq", scope.lineage)
            where.append(clause)
            params += p
        elif scope.namespace is not None:
            where.append("c.namespace = %s")
            params.append(scope.namespace)
        time_col, labels_col = "t.created_at", "t.labels"
    elif kind == "record":
        frm = "records r"
        where.append("r.status = 'active'")
        if scope.namespace is not None:
            where.append("r.namespace = %s")
            params.append(scope.namespace)
        if scope.type is not None:
            where.append("r.type = %s")
            params.append(scope.type)
        if scope.key is not None:
            where.append("r.key = %s")
            params.append(scope.key)
        time_col, labels_col = "r.written_at", "r.labels"
    elif kind == "card":
        frm = "cards k LEFT JOIN conversations c ON c.id = k.conversation_id"
        where.append("k.stale = 0")
        if scope.lineage is not None:
            clause, p = _lineage_clause("k", "last_seq", scope.lineage)
            where.append(clause)
            params += p
        elif scope.namespace is not None:
            where.append("k.family_id IN (SELECT family_id FROM conversations WHERE namespace = %s)")
            params.append(scope.namespace)
        time_col, labels_col = "k.end_at", "k.labels"
    else:
        raise InvalidInput(f"unknown item kind {kind!r}: use one of turn, record, card")
    if scope.since is not None:
        where.append(f"{time_col} >= %s")
        params.append(scope.since)
    if scope.until is not None:
        where.append(f"{time_col} <= %s")
        params.append(scope.until)
    clause, p = _labels_clause(labels_col, scope.reader_labels)
    if clause:
        where.append(clause)
        params += p
    return frm, " AND ".join(where) or "TRUE", params


class PostgresFullText:
    """FTS5 indexes and BM25 ranking, on one :class:`~memfold.memory.storage.postgres.db.PostgresDB`."""

    def __init__(self, c: PostgresDB) -> None:
        self.c = c

    # -- scoping ---------------------------------------------------------------------------
    def conversation_lineage(self, conversation_id: str) -> list[tuple[str, int | None]]:
        """``[(conversation_id, last_seq_included_or_None), ...]`` from this conversation up to its
        root (an ancestor is seen up to the fork point); ``[]`` when the conversation does not exist.

        Reads the archive's ``conversations`` table, for search scoping.
        """
        chain: list[tuple[str, int | None]] = []
        limit: int | None = None
        current: str | None = conversation_id
        while current is not None:
            row = self.c.one("SELECT parent_id, fork_after_seq FROM conversations WHERE id = %s", [current])
            if row is None:
                break
            chain.append((current, limit))
            limit, current = row[1], row[0]
        return chain

    def candidates(self, kind: str, scope: SearchScope) -> list[int]:
        """Ids of the live items of ``kind`` inside ``scope`` (turns not erased, cards not stale,
        records active), in no particular order. Reads the items' own tables."""
        frm, where, params = _filter(kind, scope)
        return [r[0] for r in self.c.all(f"SELECT {_ALIAS[kind]}.id FROM {frm} WHERE {where}", params)]

    def turn_sequence(self, scope: SearchScope) -> list[tuple[int, str, int]]:
        """``[(turn id, conversation_id, seq)]`` of the live turns inside ``scope``, ordered by
        conversation and seq (to find each turn's neighbours). Reads the archive's ``turns``."""
        frm, where, params = _filter("turn", scope)
        rows = self.c.all(f"SELECT t.id, t.conversation_id, t.seq FROM {frm} WHERE {where} "
                          f"ORDER BY t.conversation_id COLLATE \"C\", t.seq", params)
        return [(r[0], r[1], r[2]) for r in rows]

    # -- BM25 ------------------------------------------------------------------------------
    def _stats(self, kind: str) -> tuple[int, float]:
        """``(N, average document length)`` of the kind's index (BM25's table-wide statistics)."""
        n, total = self.c.one(f"SELECT COUNT(*), COALESCE(SUM(doc_len), 0)::bigint FROM {_fts(kind)}")
        return n, (total / n if n else 0.0)

    def _hits(self, kind: str, phrase: Phrase) -> int:
        """How many indexed items of ``kind`` contain ``phrase`` (its BM25 ``n``)."""
        if not phrase.tokens:
            return 0
        return self.c.value(f"SELECT COUNT(*) FROM {_fts(kind)} WHERE tsv @@ %s::tsquery", [phrase.tsquery()], 0)

    def _scored(self, kind: str, match: Match, frm: str | None, where: str, params: list[Any]) -> list[tuple[int, float]]:
        """``[(id, bm25)]`` of the items matching ``match`` (inside ``frm``/``where`` when given),
        best first, ties by id.

        One phrase of one token (what :func:`~memfold.memory.search.bm25_query` makes, one per
        word) is scored in SQL from the stored positions; anything else (phrases, AND groups)
        reads the matching lexemes' positions and is scored here."""
        query = match.tsquery()
        if query is None:
            return []
        fts = _fts(kind)
        exact, like = match.lexeme_filter()
        inner = f"({frm})" if frm and " JOIN " in frm else frm
        join = f" JOIN {inner} ON {_ALIAS[kind]}.id = f.id" if frm else ""
        cond = f" AND {where}" if frm else ""
        phrases = match.phrases
        n_rows, avgdl = self._stats(kind)
        avgdl = avgdl or 1.0
        simple = len(match.groups) == 1 and len(phrases) == 1 and len(phrases[0].tokens) == 1
        if simple:
            phrase = phrases[0]
            rows = self.c.all(
                f"SELECT f.id, f.doc_len, (SELECT SUM(cardinality(u.positions)) FROM unnest(f.tsv) u "
                f"WHERE u.lexeme = ANY(%s) OR u.lexeme LIKE ANY(%s)) FROM {fts} f{join} "
                f"WHERE f.tsv @@ %s::tsquery{cond}", [exact, like, query, *params])
            hits = len(rows) if frm is None else self._hits(kind, phrase)
            weight = idf(n_rows, hits)
            scored = [(item_id, bm25([phrase], {phrase: int(tf)}, doc_len, {phrase: weight}, avgdl))
                      for item_id, doc_len, tf in rows if tf]
        else:
            rows = self.c.all(
                f"SELECT f.id, f.doc_len, u.lexeme, u.positions FROM {fts} f{join}, unnest(f.tsv) u "
                f"WHERE f.tsv @@ %s::tsquery{cond} AND (u.lexeme = ANY(%s) OR u.lexeme LIKE ANY(%s))",
                [query, *params, exact, like])
            if not rows:
                return []
            docs: dict[int, tuple[int, dict[str, list[int]]]] = {}
            for item_id, doc_len, lexeme, positions in rows:
                docs.setdefault(item_id, (doc_len, {}))[1].setdefault(lexeme, []).extend(positions or ())
            idfs = {p: idf(n_rows, self._hits(kind, p)) for p in phrases}
            scored = []
            for item_id, (doc_len, positions) in docs.items():
                if not match.matches(positions):
                    continue
                tf = {p: p.count(positions) for p in phrases}
                scored.append((item_id, bm25(phrases, tf, doc_len, idfs, avgdl)))
        scored.sort(key=lambda r: (r[1], r[0]))
        return scored

    def rank(self, kind: str, match: str, scope: SearchScope, limit: int) -> list[tuple[int, float]]:
        """``[(id, bm25)]`` of the items of ``kind`` inside ``scope`` matching the expression
        ``match``, best first (FTS5's bm25: lower is better; ties by id), at most ``limit``."""
        _fts(kind)
        parsed = parse_match(match)
        frm, where, params = _filter(kind, scope)
        return self._scored(kind, parsed, frm, where, params)[:limit]

    def postings(self, kind: str, term: str) -> list[tuple[int, float]]:
        """``[(id, bm25)]`` of every indexed item of ``kind`` matching one term expression, over
        the whole index (table-wide statistics), in id order."""
        _fts(kind)
        return sorted(self._scored(kind, parse_match(term), None, "", []))

    def indexed_count(self, kind: str) -> int:
        """How many items of ``kind`` the full-text index holds (the N of BM25's idf)."""
        return self.c.value(f"SELECT COUNT(*) FROM {_fts(kind)}", default=0)

    # -- scoped ranking: document statistics and term occurrences (issue 18, point 1) ------
    def documents(self, kind: str, after_id: int = 0) -> list[tuple[int, int, str | None, int]]:
        """``[(id, length, group, seq)]`` of the items of ``kind`` in the full-text index with an
        id above ``after_id``, by id: ``length`` in index tokens (``doc_len``), ``group`` what a
        scope picks by (a turn's or card's conversation, a record's namespace) and ``seq`` the
        turn's seq (a card's ``last_seq``, 0 for a record). A search keeps these in memory and
        reads only the ones written since (a primary-key range).

        Writers of different conversations commit ids out of order, so the caller reads inside
        :meth:`~memfold.memory.storage.postgres.PostgresStorage.settled` (every writer in flight
        has ended): no id at or below the last one read commits later. Called inside another
        transaction it cannot wait, and a turn committed out of order may be missed by that process."""
        fts = _fts(kind)
        table = {"turn": "turns", "card": "cards", "record": "records"}[kind]
        group, seq = {"turn": ("x.conversation_id", "x.seq"), "card": ("x.conversation_id", "x.last_seq"),
                      "record": ("x.namespace", "0")}[kind]
        rows = self.c.all(f"SELECT f.id, f.doc_len, {group}, {seq} FROM {fts} f JOIN {table} x ON x.id = f.id "
                          f"WHERE f.id > %s ORDER BY f.id", [int(after_id)])
        return [(r[0], int(r[1]), r[2], int(r[3])) for r in rows]

    def indexed(self, kind: str, item_ids: Sequence[int]) -> set[int]:
        """Which of ``item_ids`` have an entry in the full-text index of ``kind`` (erasure deletes
        an item's row), one primary-key read per :data:`_BATCH` ids. What a search that keeps a
        small scope's words between calls checks when the database changed (issue 18, point 1)."""
        fts = _fts(kind)
        out: set[int] = set()
        for chunk in _chunks(item_ids):
            out.update(r[0] for r in self.c.all(f"SELECT id FROM {fts} WHERE id = ANY(%s)",
                                                [[int(i) for i in chunk]]))
        return out

    def turn_facets(self, after_id: int = 0) -> list[tuple[int, str, float, str | None]]:
        """``[(turn id, conversation_id, created_at, name)]`` of the turns in the full-text index
        with an id above ``after_id``, by id (a primary-key range, like :meth:`documents`; read
        inside ``settled()`` for the same reason)."""
        rows = self.c.all(f"SELECT f.id, x.conversation_id, x.created_at, x.name FROM {_fts('turn')} f "
                          f"JOIN turns x ON x.id = f.id WHERE f.id > %s ORDER BY f.id", [int(after_id)])
        return [(r[0], r[1], float(r[2]), r[3]) for r in rows]

    def occurrences(self, kind: str, token: str, *, prefix: bool = False) -> list[int]:
        """One item id per occurrence of the index token ``token`` (every token starting with it
        when ``prefix``) in the items of ``kind``, over the whole index, in no particular order:
        the term frequencies of BM25 without scoring anything in SQL. GIN finds the items; the
        stored positions give the counts (a ``tsvector`` keeps at most
        :data:`~..textsearch.MAX_POSITIONS` per lexeme, as it does for :meth:`rank`)."""
        fts = _fts(kind)
        folded = tokens(token)
        if len(folded) != 1:
            return []  # not one index token: it occurs nowhere as one
        phrase = Phrase((folded[0],), prefix)
        exact, like = phrase.lexeme_filter()
        rows = self.c.all(
            f"SELECT f.id, SUM(cardinality(u.positions))::bigint FROM {fts} f, unnest(f.tsv) u "
            f"WHERE f.tsv @@ %s::tsquery AND (u.lexeme = ANY(%s) OR u.lexeme LIKE ANY(%s)) GROUP BY f.id",
            [phrase.tsquery(), exact, like])
        return [item_id for item_id, n in rows for _ in range(int(n or 0))]

    def labelled(self, kind: str, after_id: int = 0, upto_id: int | None = None) -> list[int]:
        """Ids (ascending) of the items of ``kind`` in the full-text index with an id above
        ``after_id`` (and at most ``upto_id``) whose labels (a JSON list) are not empty: the only
        items a reader may be refused."""
        fts = _fts(kind)
        table = {"turn": "turns", "card": "cards", "record": "records"}[kind]
        upper, params = ("", [int(after_id)]) if upto_id is None else (" AND f.id <= %s", [int(after_id), int(upto_id)])
        return [int(r[0]) for r in self.c.all(
            f"SELECT f.id FROM {fts} f JOIN {table} x ON x.id = f.id WHERE f.id > %s{upper} "
            f"AND COALESCE(x.labels::jsonb, '[]'::jsonb) <> '[]'::jsonb ORDER BY f.id", params)]

    def term_frequencies(self, kind: str, token: str, *, prefix: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`occurrences` counted per item: ``(ids, counts)``, ``(n,) int64`` arrays, ids
        ascending (the per-item sums :meth:`occurrences` expands)."""
        return self._term_frequencies(kind, token, prefix, 0)

    def term_frequencies_after(self, kind: str, tokens: Sequence[tuple[str, bool]],
                               after_id: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each ``(token, prefix)`` of ``tokens``, :meth:`term_frequencies` over the indexed
        items with an id above ``after_id`` only (GIN finds the items, the id range bounds them):
        what a search that keeps a word's counts in memory reads for the items written since."""
        _fts(kind)
        return [self._term_frequencies(kind, token, prefix, int(after_id)) for token, prefix in tokens]

    def _term_frequencies(self, kind: str, token: str, prefix: bool, after_id: int) -> tuple[np.ndarray, np.ndarray]:
        fts = _fts(kind)
        folded = tokens(token)
        empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        if len(folded) != 1:
            return empty  # not one index token: it occurs nowhere as one
        phrase = Phrase((folded[0],), prefix)
        exact, like = phrase.lexeme_filter()
        rows = self.c.all(
            f"SELECT f.id, SUM(cardinality(u.positions))::bigint FROM {fts} f, unnest(f.tsv) u "
            f"WHERE f.tsv @@ %s::tsquery AND f.id > %s AND (u.lexeme = ANY(%s) OR u.lexeme LIKE ANY(%s)) "
            f"GROUP BY f.id ORDER BY f.id", [phrase.tsquery(), after_id, exact, like])
        rows = [(int(i), int(n or 0)) for i, n in rows if n]
        if not rows:
            return empty
        return np.array([i for i, _ in rows], dtype=np.int64), np.array([n for _, n in rows], dtype=np.int64)

    def visible(self, kind: str, scope: SearchScope, item_ids: Sequence[int]) -> set[int]:
        """Which of ``item_ids`` are live items of ``kind`` inside ``scope`` (the check every
        candidate of a search passes before it is returned), one read per :data:`_BATCH` ids,
        each a primary-key probe."""
        frm, where, params = _filter(kind, scope)
        a = _ALIAS[kind]
        out: set[int] = set()
        for chunk in _chunks(item_ids):
            out.update(r[0] for r in self.c.all(
                f"SELECT {a}.id FROM {frm} WHERE {a}.id = ANY(%s) AND {where}", [list(map(int, chunk)), *params]))
        return out

    # -- items -----------------------------------------------------------------------------
    def item(self, kind: str, item_id: int) -> SearchItem:
        """The searchable fields of one turn, card or record (to build a hit). Reads the item's
        own table (and ``conversations`` for a turn's namespace).

        :raises TurnNotFound: / :raises CardNotFound: / :raises RecordNotFound: when there is none."""
        _fts(kind)
        if kind == "turn":
            r = self.c.one(
                "SELECT t.id, t.content, t.conversation_id, c.namespace, t.created_at, t.labels FROM turns t "
                "JOIN conversations c ON c.id = t.conversation_id WHERE t.id = %s", [item_id])
            if r is None:
                raise _missing(kind, item_id)
            return SearchItem(kind="turn", id=r[0], text=r[1], conversation_id=r[2], namespace=r[3], time=r[4],
                              labels=tuple(json.loads(r[5])))
        if kind == "record":
            r = self.c.one("SELECT id, content, namespace, type, key, written_at, labels FROM records WHERE id = %s",
                           [item_id])
            if r is None:
                raise _missing(kind, item_id)
            return SearchItem(kind="record", id=r[0], text=r[1], namespace=r[2], type=r[3], key=r[4], time=r[5],
                              labels=tuple(json.loads(r[6])))
        r = self.c.one("SELECT id, text, conversation_id, end_at, labels FROM cards WHERE id = %s", [item_id])
        if r is None:
            raise _missing(kind, item_id)
        return SearchItem(kind="card", id=r[0], text=r[1], conversation_id=r[2], time=r[3],
                          labels=tuple(json.loads(r[4])) if r[4] else ())

    def items(self, kind: str, item_ids: Sequence[int]) -> dict[int, SearchItem]:
        """The searchable fields of turns, cards or records by id (to build hits), one read per
        :data:`_BATCH` ids; missing ids are absent. Reads the items' own table (and
        ``conversations`` for a turn's namespace)."""
        _fts(kind)
        out: dict[int, SearchItem] = {}
        for chunk in _chunks(item_ids):
            if kind == "turn":
                rows = self.c.all(
                    "SELECT t.id, t.content, t.conversation_id, c.namespace, t.created_at, t.labels FROM turns t "
                    f"JOIN conversations c ON c.id = t.conversation_id WHERE t.id = ANY(%s)", [chunk])
                out.update((r[0], SearchItem(kind="turn", id=r[0], text=r[1], conversation_id=r[2], namespace=r[3],
                                             time=r[4], labels=tuple(json.loads(r[5])))) for r in rows)
            elif kind == "record":
                rows = self.c.all("SELECT id, content, namespace, type, key, written_at, labels FROM records "
                                  f"WHERE id = ANY(%s)", [chunk])
                out.update((r[0], SearchItem(kind="record", id=r[0], text=r[1], namespace=r[2], type=r[3], key=r[4],
                                             time=r[5], labels=tuple(json.loads(r[6])))) for r in rows)
            else:
                rows = self.c.all(f"SELECT id, text, conversation_id, end_at, labels FROM cards WHERE id = ANY(%s)",
                                  [chunk])
                out.update((r[0], SearchItem(kind="card", id=r[0], text=r[1], conversation_id=r[2], time=r[3],
                                             labels=tuple(json.loads(r[4])) if r[4] else ())) for r in rows)
        return out

    # -- recall tools: plain BM25 with snippets over a conversation's lineage ----------------
    def match_turns(self, match: str, lineage: Sequence[tuple[str, int | None]], limit: int) -> list[TextMatch]:
        """Live turns of ``lineage`` matching ``match``, best BM25 first (ties by id), with a
        12-token snippet marking matches in ``[...]``; at most ``limit``."""
        parsed = parse_match(match)
        where, params = _lineage_clause("t", "seq", lineage)
        ranked = self._scored("turn", parsed, "turns t", f"t.erased = 0 AND {where}", params)[:limit]
        if not ranked:
            return []
        rows = {r[0]: r for r in self.c.all("SELECT id, content, seq, role, labels FROM turns WHERE id = ANY(%s)",
                                            [[i for i, _ in ranked]])}
        return [TextMatch("turn", i, score, snippet(rows[i][1], parsed), rows[i][2], rows[i][2], 0, rows[i][3],
                          tuple(json.loads(rows[i][4]))) for i, score in ranked]

    def match_cards(self, match: str, family_id: str, lineage: Sequence[tuple[str, int | None]],
                    limit: int) -> list[TextMatch]:
        """Non-stale cards of ``family_id`` within ``lineage`` matching ``match``, best BM25 first
        (ties by id), with a 12-token snippet; at most ``limit``."""
        parsed = parse_match(match)
        where, params = _lineage_clause("k", "last_seq", lineage)
        ranked = self._scored("card", parsed, "cards k", f"k.family_id = %s AND k.stale = 0 AND {where}",
                              [family_id, *params])[:limit]
        if not ranked:
            return []
        rows = {r[0]: r for r in self.c.all(
            "SELECT id, text, first_seq, last_seq, depth, labels FROM cards WHERE id = ANY(%s)", [[i for i, _ in ranked]])}
        return [TextMatch("card", i, score, snippet(rows[i][1], parsed), rows[i][2], rows[i][3], rows[i][4], None,
                          tuple(json.loads(rows[i][5]))) for i, score in ranked]

    def describe_matches(self, kind: str, item_ids: Sequence[int], match: str) -> dict[int, TextMatch]:
        """Turns' or cards' snippets for ``match`` (``None`` for an item that does not match) with
        their seq span, depth and role, one read per :data:`_BATCH` ids; ``score`` stays ``None``
        and ``labels`` empty; missing ids are absent. An erased item (no index entry) has no snippet."""
        _fts(kind, ("turn", "card"))
        parsed = parse_match(match)
        out: dict[int, TextMatch] = {}
        for chunk in _chunks(item_ids):
            if kind == "turn":
                rows = self.c.all("SELECT id, seq, role, content, erased FROM turns WHERE id = ANY(%s)", [chunk])
                out.update((r[0], TextMatch("turn", r[0], None, None if r[4] else snippet(r[3], parsed), r[1], r[1],
                                            0, r[2])) for r in rows)
            else:
                rows = self.c.all("SELECT id, first_seq, last_seq, depth, text, erased FROM cards WHERE id = ANY(%s)",
                                  [chunk])
                out.update((r[0], TextMatch("card", r[0], None, None if r[5] else snippet(r[4], parsed), r[1], r[2],
                                            r[3], None)) for r in rows)
        return out

    def describe_match(self, kind: str, item_id: int, match: str) -> TextMatch:
        """One turn's or card's snippet for ``match`` (``None`` when it does not match) and its seq
        span, depth and role; ``score`` stays ``None`` and ``labels`` empty.

        :raises TurnNotFound: / :raises CardNotFound: when there is no such item."""
        _fts(kind, ("turn", "card"))
        found = self.describe_matches(kind, [item_id], match)
        if item_id not in found:
            raise _missing(kind, item_id)
        return found[item_id]
