"""SQLite: FTS5 indexes and BM25 ranking (implements :class:`memfold.memory.storage.base.FullTextStorage`).

``turns_fts``, ``cards_fts`` and ``records_fts`` are external-content FTS5 tables kept in step by
triggers (migrations 1, 3 and 5); erasing an item drops its entry in the same statement. Every
query here is scoped *before* ranking (lineage, namespace, type, key, time, reader labels), so a
hit never comes from outside what the caller may see (DESIGN.md §4.9).

The candidate, neighbour and item queries read the ``turns``, ``cards``, ``records`` and
``conversations`` tables: they are here because search is their only user and they share the
scoping SQL with the BM25 queries.
"""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

import numpy as np

from ...errors import CardNotFound, InvalidInput, RecordNotFound, TurnNotFound
from ..rows import SearchItem, SearchScope, TextMatch
from ..textsearch import parse_match, snippet
from .db import SqliteDB

#: the FTS5 table and the alias of the content table, per item kind
_FTS = {"turn": "turns_fts", "record": "records_fts", "card": "cards_fts"}
_ALIAS = {"turn": "t", "record": "r", "card": "k"}
_MISSING = {"turn": TurnNotFound, "record": RecordNotFound, "card": CardNotFound}


def _fts(kind: str, kinds: Sequence[str] = ("turn", "record", "card")) -> str:
    """The FTS5 table of ``kind``. :raises InvalidInput: for a kind that is not one of ``kinds``."""
    if kind not in kinds:
        raise InvalidInput(f"unknown item kind {kind!r}: use one of {', '.join(kinds)}")
    return _FTS[kind]


def _varint(blob: bytes | None) -> int:
    """The first value of an FTS5 ``docsize`` blob (SQLite varints: 7 bits a byte, high bit set
    on all but the last): the item's length in tokens of its one indexed column."""
    value = 0
    for i, byte in enumerate(blob or b""):
        if i == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value
    return value


def _counted(text: str | None) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, counts)`` of a ``group_concat`` of item ids (one per occurrence): each id once,
    ascending, with how often it occurs. The occurrence lists come in runs of ascending ids (one
    run per matching term), so a stable sort (timsort, linear on such runs) and the run
    boundaries count them, several times faster than ``np.unique``."""
    if not text:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    docs = np.sort(np.fromstring(text, dtype=np.int64, sep=","), kind="stable")
    starts = np.flatnonzero(np.concatenate(([True], docs[1:] != docs[:-1])))
    return docs[starts], np.diff(np.append(starts, len(docs))).astype(np.int64)


#: the content table and its indexed column, per item kind
_CONTENT = {"turn": ("turns", "content"), "record": ("records", "content"), "card": ("cards", "text")}
#: how many items written since a search's last look :meth:`SqliteFullText.term_frequencies_after`
#: splits in Python at most (past that it walks the occurrence lists)
_SPLIT_AT_MOST = 1_000
#: an ASCII text's index tokens (FTS5 ``unicode61``: runs of ASCII letters and digits, lower-cased)
_ASCII_WORD = re.compile(r"[a-z0-9]+")


def _missing(kind: str, item_id: int) -> Exception:
    return _MISSING[kind](f"no {kind} {item_id}")


#: ids per ``IN (...)`` list of a batch read (well under SQLite's variable limit)
_BATCH = 500
#: a text longer than this (characters) takes its snippet from :func:`..textsearch.snippet`,
#: not FTS5's quadratic ``snippet()`` (:meth:`SqliteFullText.describe_matches`)
LONG_TEXT = 20_000


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
            parts.append(f"{alias}.conversation_id = ?")
            params.append(conversation_id)
        else:
            parts.append(f"({alias}.conversation_id = ? AND {alias}.{seq_column} <= ?)")
            params.extend([conversation_id, upto])
    return "(" + " OR ".join(parts) + ")", params


def _labels_clause(column: str, reader_labels: Sequence[str] | None) -> tuple[str, list[Any]]:
    """SQL true when every label required by ``column`` (a JSON list) is held by the reader."""
    if reader_labels is None:
        return "", []
    held = list(reader_labels)
    if not held:
        return f"json_array_length({column}) = 0", []
    marks = ", ".join("?" for _ in held)
    return f"NOT EXISTS (SELECT 1 FROM json_each({column}) WHERE value NOT IN ({marks}))", held


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
            where.append("c.namespace = ?")
            params.append(scope.namespace)
        time_col, labels_col = "t.created_at", "t.labels"
    elif kind == "record":
        frm = "records r"
        where.append("r.status = 'active'")
        if scope.namespace is not None:
            where.append("r.namespace = ?")
            params.append(scope.namespace)
        if scope.type is not None:
            where.append("r.type = ?")
            params.append(scope.type)
        if scope.key is not None:
            where.append("r.key = ?")
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
            where.append("k.family_id IN (SELECT family_id FROM conversations WHERE namespace = ?)")
            params.append(scope.namespace)
        time_col, labels_col = "k.end_at", "k.labels"
    else:
        raise InvalidInput(f"unknown item kind {kind!r}: use one of turn, record, card")
    if scope.since is not None:
        where.append(f"{time_col} >= ?")
        params.append(scope.since)
    if scope.until is not None:
        where.append(f"{time_col} <= ?")
        params.append(scope.until)
    clause, p = _labels_clause(labels_col, scope.reader_labels)
    if clause:
        where.append(clause)
        params += p
    return frm, " AND ".join(where) or "1", params


class SqliteFullText:
    """FTS5 indexes and BM25 ranking, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c
        self._views: set[str] = set()
        for fts in _FTS.values():  # the connection's temp views of the indexes' occurrences (no file write)
            if self.c.one("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [fts]):
                self.c.run(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{fts}_instances USING fts5vocab(main, {fts}, instance)")
                self._views.add(f"temp.{fts}_instances")

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
            row = self.c.one("SELECT parent_id, fork_after_seq FROM conversations WHERE id = ?", [current])
            if row is None:
                break
            chain.append((current, limit))
            limit, current = row[1], row[0]
        return chain

    def candidates(self, kind: str, scope: SearchScope) -> list[int]:
        """Ids of the live items of ``kind`` inside ``scope`` (turns not erased, cards not stale,
        records active), in no particular order. Reads the items' own tables."""
        frm, where, params = _filter(kind, scope)
        return [r[0] for r in self.c.all(f"SELECT {_ALIAS[kind]}.rowid FROM {frm} WHERE {where}", params)]

    def turn_sequence(self, scope: SearchScope) -> list[tuple[int, str, int]]:
        """``[(turn id, conversation_id, seq)]`` of the live turns inside ``scope``, ordered by
        conversation and seq (to find each turn's neighbours). Reads the archive's ``turns``."""
        frm, where, params = _filter("turn", scope)
        rows = self.c.all(f"SELECT t.id, t.conversation_id, t.seq FROM {frm} WHERE {where} "
                          f"ORDER BY t.conversation_id, t.seq", params)
        return [(r[0], r[1], r[2]) for r in rows]

    # -- BM25 ------------------------------------------------------------------------------
    def rank(self, kind: str, match: str, scope: SearchScope, limit: int) -> list[tuple[int, float]]:
        """``[(id, bm25)]`` of the items of ``kind`` inside ``scope`` matching the FTS expression
        ``match``, best first (FTS5 bm25: lower is better), at most ``limit``."""
        fts = _fts(kind)
        frm, where, params = _filter(kind, scope)
        a = _ALIAS[kind]
        sql = (f"SELECT {a}.rowid, bm25({fts}) FROM {fts}, {frm} "
               f"WHERE {fts} MATCH ? AND {a}.rowid = {fts}.rowid AND {where} ORDER BY bm25({fts}) LIMIT ?")
        return [(r[0], r[1]) for r in self.c.all(sql, [match, *params, limit])]

    def postings(self, kind: str, term: str) -> list[tuple[int, float]]:
        """``[(id, bm25)]`` of every indexed item of ``kind`` matching one term expression, over
        the whole index (table-wide statistics), in index order."""
        fts = _fts(kind)
        return [(r[0], r[1]) for r in self.c.all(f"SELECT rowid, bm25({fts}) FROM {fts} WHERE {fts} MATCH ?", [term])]

    def indexed_count(self, kind: str) -> int:
        """How many items of ``kind`` the full-text index holds (the N of BM25's idf)."""
        return self.c.value(f"SELECT COUNT(*) FROM {_fts(kind)}_docsize", default=0)

    # -- scoped ranking: document statistics and term occurrences (issue 18, point 1) ------
    def documents(self, kind: str, after_id: int = 0) -> list[tuple[int, int, str | None, int]]:
        """``[(id, length, group, seq)]`` of the items of ``kind`` in the full-text index with an
        id above ``after_id``, by id: ``length`` in index tokens, ``group`` what a scope picks by
        (a turn's or card's conversation, a record's namespace) and ``seq`` the turn's seq (a
        card's ``last_seq``, 0 for a record). A search keeps these in memory and reads only the
        ones written since (a primary-key range)."""
        fts = _fts(kind)
        join = {"turn": "JOIN turns x ON x.id = d.id", "card": "JOIN cards x ON x.id = d.id",
                "record": "JOIN records x ON x.id = d.id"}[kind]
        group, seq = {"turn": ("x.conversation_id", "x.seq"), "card": ("x.conversation_id", "x.last_seq"),
                      "record": ("x.namespace", "0")}[kind]
        rows = self.c.all(f"SELECT d.id, d.sz, {group}, {seq} FROM {fts}_docsize d {join} WHERE d.id > ? ORDER BY d.id",
                          [int(after_id)])
        return [(r[0], _varint(r[1]), r[2], r[3]) for r in rows]

    def labelled(self, kind: str, after_id: int = 0, upto_id: int | None = None) -> list[int]:
        """Ids (ascending) of the items of ``kind`` in the full-text index with an id above
        ``after_id`` (and at most ``upto_id``) whose labels (a JSON list) are not empty: the only
        items a reader may be refused. A primary-key range of FTS5's ``docsize`` table, like
        :meth:`documents`."""
        fts = _fts(kind)
        table, _ = _CONTENT[kind]
        upper, params = ("", [int(after_id)]) if upto_id is None else (" AND d.id <= ?", [int(after_id), int(upto_id)])
        return [r[0] for r in self.c.all(
            f"SELECT d.id FROM {fts}_docsize d JOIN {table} x ON x.id = d.id WHERE d.id > ?{upper} "
            f"AND COALESCE(json_array_length(x.labels), 0) > 0 ORDER BY d.id", params)]

    def indexed(self, kind: str, item_ids: Sequence[int]) -> set[int]:
        """Which of ``item_ids`` have an entry in the full-text index of ``kind`` (erasure drops an
        item's entry): one primary-key probe of FTS5's ``docsize`` table per id, one read per
        :data:`_BATCH` ids. What a search that keeps a small scope's words between calls checks
        when the file changed (issue 18, point 1)."""
        fts = _fts(kind)
        out: set[int] = set()
        for chunk in _chunks(item_ids):
            marks = ", ".join("(?)" for _ in chunk)
            out.update(r[0] for r in self.c.all(
                f"WITH wanted(id) AS (VALUES {marks}) SELECT d.id FROM wanted CROSS JOIN {fts}_docsize d "
                f"WHERE d.id = wanted.id", [int(i) for i in chunk]))
        return out

    def turn_facets(self, after_id: int = 0) -> list[tuple[int, str, float, str | None]]:
        """``[(turn id, conversation_id, created_at, name)]`` of the turns in the full-text index
        with an id above ``after_id``, by id (a primary-key range, like :meth:`documents`)."""
        rows = self.c.all("SELECT d.id, x.conversation_id, x.created_at, x.name FROM turns_fts_docsize d "
                          "JOIN turns x ON x.id = d.id WHERE d.id > ? ORDER BY d.id", [int(after_id)])
        return [(r[0], r[1], float(r[2]), r[3]) for r in rows]

    def _instances(self, kind: str) -> str:
        """The name of FTS5's ``fts5vocab`` instance view of ``kind``'s index, created in the
        connection's temp schema on first use."""
        fts = _fts(kind)
        view = f"temp.{fts}_instances"
        if view not in self._views:
            self.c.run(f"CREATE VIRTUAL TABLE IF NOT EXISTS {view} USING fts5vocab(main, {fts}, instance)")
            self._views.add(view)
        return view

    def occurrences(self, kind: str, token: str, *, prefix: bool = False) -> list[int]:
        """One item id per occurrence of the index token ``token`` (every token starting with it
        when ``prefix``) in the items of ``kind``, over the whole index, in no particular order:
        the term frequencies of BM25 without scoring anything in SQL. Reads FTS5's own
        ``fts5vocab`` instance view (created in the connection's temp schema on first use)."""
        view = self._instances(kind)
        if prefix:
            return [r[0] for r in self.c.all(f"SELECT doc FROM {view} WHERE term >= ? AND term < ?",
                                             [token, token + "\U0010ffff"])]
        return [r[0] for r in self.c.all(f"SELECT doc FROM {view} WHERE term = ?", [token])]

    def term_frequencies(self, kind: str, token: str, *, prefix: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`occurrences` counted per item: ``(ids, counts)``, ``(n,) int64`` arrays, ids
        ascending. The occurrences leave SQLite as one comma-separated text (``group_concat``)
        parsed by numpy, not as one Python row each: a frequent word has tens of thousands of
        occurrences at 100K turns, and a row each cost more than SQLite's own walk of them."""
        view = self._instances(kind)
        if prefix:
            text = self.c.value(f"SELECT group_concat(doc) FROM {view} WHERE term >= ? AND term < ?",
                                [token, token + "\U0010ffff"])
        else:
            text = self.c.value(f"SELECT group_concat(doc) FROM {view} WHERE term = ?", [token])
        return _counted(text)

    def term_frequencies_after(self, kind: str, tokens: Sequence[tuple[str, bool]],
                               after_id: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each ``(token, prefix)`` of ``tokens``, :meth:`term_frequencies` over the indexed
        items with an id above ``after_id`` only: what a search that keeps a word's counts in
        memory reads for the items written since (issue 18, point 1).

        FTS5 keeps no list of an item's words, so at most :data:`_SPLIT_AT_MOST` new items are
        read (one statement for every token) and split here when their texts are ASCII, where
        ``unicode61 remove_diacritics 2`` splits exactly at every character that is not an ASCII
        letter or digit and folds only case; otherwise each token's occurrence list is walked
        with the ids restricted."""
        fts = _fts(kind)
        table, column = _CONTENT[kind]
        rows = self.c.all(f"SELECT d.id, x.{column} FROM {fts}_docsize d JOIN {table} x ON x.id = d.id "
                          f"WHERE d.id > ? ORDER BY d.id LIMIT ?", [int(after_id), _SPLIT_AT_MOST + 1])
        if len(rows) <= _SPLIT_AT_MOST and all(text is None or text.isascii() for _, text in rows):
            split = [(item_id, _ASCII_WORD.findall(text.lower())) for item_id, text in rows if text]
            out = []
            for token, prefix in tokens:
                found: list[int] = []
                counts: list[int] = []
                for item_id, words in split:
                    n = sum(1 for w in words if w.startswith(token)) if prefix else words.count(token)
                    if n:
                        found.append(item_id)
                        counts.append(n)
                out.append((np.array(found, dtype=np.int64), np.array(counts, dtype=np.int64)))
            return out
        view = self._instances(kind)
        out = []
        for token, prefix in tokens:
            if prefix:
                text = self.c.value(f"SELECT group_concat(doc) FROM {view} WHERE term >= ? AND term < ? AND doc > ?",
                                    [token, token + "\U0010ffff", int(after_id)])
            else:
                text = self.c.value(f"SELECT group_concat(doc) FROM {view} WHERE term = ? AND doc > ?",
                                    [token, int(after_id)])
            out.append(_counted(text))
        return out

    def visible(self, kind: str, scope: SearchScope, item_ids: Sequence[int]) -> set[int]:
        """Which of ``item_ids`` are live items of ``kind`` inside ``scope`` (the check every
        candidate of a search passes before it is returned), one read per :data:`_BATCH` ids."""
        frm, where, params = _filter(kind, scope)
        a = _ALIAS[kind]
        out: set[int] = set()
        for chunk in _chunks(item_ids):
            marks = ", ".join("(?)" for _ in chunk)
            # the ids drive the join (CROSS JOIN keeps them outermost): one primary-key probe each,
            # never a walk over a conversation's turns by the scope's index
            out.update(r[0] for r in self.c.all(
                f"WITH wanted(id) AS (VALUES {marks}) SELECT {a}.rowid FROM wanted CROSS JOIN {frm} "
                f"WHERE {a}.rowid = wanted.id AND {where}", [*chunk, *params]))
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
                "JOIN conversations c ON c.id = t.conversation_id WHERE t.id = ?", [item_id])
            if r is None:
                raise _missing(kind, item_id)
            return SearchItem(kind="turn", id=r[0], text=r[1], conversation_id=r[2], namespace=r[3], time=r[4],
                              labels=tuple(json.loads(r[5])))
        if kind == "record":
            r = self.c.one("SELECT id, content, namespace, type, key, written_at, labels FROM records WHERE id = ?",
                           [item_id])
            if r is None:
                raise _missing(kind, item_id)
            return SearchItem(kind="record", id=r[0], text=r[1], namespace=r[2], type=r[3], key=r[4], time=r[5],
                              labels=tuple(json.loads(r[6])))
        r = self.c.one("SELECT id, text, conversation_id, end_at, labels FROM cards WHERE id = ?", [item_id])
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
            marks = ", ".join("?" for _ in chunk)
            if kind == "turn":
                rows = self.c.all(
                    "SELECT t.id, t.content, t.conversation_id, c.namespace, t.created_at, t.labels FROM turns t "
                    f"JOIN conversations c ON c.id = t.conversation_id WHERE t.id IN ({marks})", chunk)
                out.update((r[0], SearchItem(kind="turn", id=r[0], text=r[1], conversation_id=r[2], namespace=r[3],
                                             time=r[4], labels=tuple(json.loads(r[5])))) for r in rows)
            elif kind == "record":
                rows = self.c.all("SELECT id, content, namespace, type, key, written_at, labels FROM records "
                                  f"WHERE id IN ({marks})", chunk)
                out.update((r[0], SearchItem(kind="record", id=r[0], text=r[1], namespace=r[2], type=r[3], key=r[4],
                                             time=r[5], labels=tuple(json.loads(r[6])))) for r in rows)
            else:
                rows = self.c.all(f"SELECT id, text, conversation_id, end_at, labels FROM cards WHERE id IN ({marks})",
                                  chunk)
                out.update((r[0], SearchItem(kind="card", id=r[0], text=r[1], conversation_id=r[2], time=r[3],
                                             labels=tuple(json.loads(r[4])) if r[4] else ())) for r in rows)
        return out

    # -- recall tools: plain BM25 with snippets over a conversation's lineage ----------------
    def match_turns(self, match: str, lineage: Sequence[tuple[str, int | None]], limit: int) -> list[TextMatch]:
        """Live turns of ``lineage`` matching ``match``, best BM25 first (ties by id), with a
        12-token snippet marking matches in ``[...]``; at most ``limit``."""
        where, params = _lineage_clause("t", "seq", lineage)
        rows = self.c.all(
            "SELECT t.id, bm25(turns_fts), snippet(turns_fts, 0, '[', ']', '…', 12), t.seq, t.role, t.labels "
            f"FROM turns_fts JOIN turns t ON t.id = turns_fts.rowid WHERE turns_fts MATCH ? AND t.erased = 0 AND {where} "
            "ORDER BY bm25(turns_fts), t.id LIMIT ?", [match, *params, limit])
        return [TextMatch("turn", r[0], r[1], r[2], r[3], r[3], 0, r[4], tuple(json.loads(r[5]))) for r in rows]

    def match_cards(self, match: str, family_id: str, lineage: Sequence[tuple[str, int | None]],
                    limit: int) -> list[TextMatch]:
        """Non-stale cards of ``family_id`` within ``lineage`` matching ``match``, best BM25 first
        (ties by id), with a 12-token snippet; at most ``limit``."""
        where, params = _lineage_clause("c", "last_seq", lineage)
        rows = self.c.all(
            "SELECT c.id, bm25(cards_fts), snippet(cards_fts, 0, '[', ']', '…', 12), c.first_seq, c.last_seq, c.depth, "
            f"c.labels FROM cards_fts JOIN cards c ON c.id = cards_fts.rowid WHERE cards_fts MATCH ? AND c.family_id = ? "
            f"AND c.stale = 0 AND {where} ORDER BY bm25(cards_fts), c.id LIMIT ?", [match, family_id, *params, limit])
        return [TextMatch("card", r[0], r[1], r[2], r[3], r[4], r[5], None, tuple(json.loads(r[6]))) for r in rows]

    def describe_matches(self, kind: str, item_ids: Sequence[int], match: str) -> dict[int, TextMatch]:
        """Turns' or cards' snippets for ``match`` (``None`` for an item that does not match) with
        their seq span, depth and role, two reads per :data:`_BATCH` ids (three when one is
        longer than :data:`LONG_TEXT`); ``score`` stays ``None`` and ``labels`` empty; missing ids
        are absent.

        FTS5's ``snippet()`` scores every window of a text against every match, which is
        quadratic in a text's size (a 2 MB turn: 70 s). A text longer than :data:`LONG_TEXT`
        characters takes its 12-token snippet from :func:`..textsearch.snippet` (the PostgreSQL
        backend's, linear), once FTS5 says it matches: the same window rules, though its centring
        may put the window a few tokens from where FTS5's would (1.5% of LoCoMo snippets differ so)."""
        fts = _fts(kind, ("turn", "card"))
        table, text_col, span = (("turns", "content", "seq, seq, role") if kind == "turn"
                                 else ("cards", "text", "first_seq, last_seq, depth"))
        out: dict[int, TextMatch] = {}
        for chunk in _chunks(item_ids):
            marks = ", ".join("?" for _ in chunk)
            rows = self.c.all(f"SELECT id, {span}, length({text_col}) > ? FROM {table} WHERE id IN ({marks})",
                              [LONG_TEXT, *chunk])
            long = [r[0] for r in rows if r[4]]
            short = [i for i in chunk if i not in set(long)]
            snippets: dict[int, str | None] = {}
            if short:
                marks = ", ".join("?" for _ in short)
                snippets.update(self.c.all(f"SELECT rowid, snippet({fts}, 0, '[', ']', '…', 12) FROM {fts} "
                                           f"WHERE {fts} MATCH ? AND rowid IN ({marks})", [match, *short]))
            if long:
                marks = ", ".join("?" for _ in long)
                parsed = parse_match(match)
                for i, text in self.c.all(f"SELECT t.id, t.{text_col} FROM {table} t WHERE t.id IN ({marks}) "
                                          f"AND t.id IN (SELECT rowid FROM {fts} WHERE {fts} MATCH ?)",
                                          [*long, match]):
                    snippets[i] = snippet(text, parsed)
            if kind == "turn":
                out.update((r[0], TextMatch("turn", r[0], None, snippets.get(r[0]), r[1], r[2], 0, r[3])) for r in rows)
            else:
                out.update((r[0], TextMatch("card", r[0], None, snippets.get(r[0]), r[1], r[2], r[3], None))
                           for r in rows)
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
