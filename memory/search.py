"""Hybrid search over archived turns, summary cards and memory records.

Two rankers look at the same filtered items and their lists are fused:

* **BM25** through SQLite FTS5 (``turns_fts``, ``records_fts``, and ``cards_fts`` when the window
  schema has it). The question is searched literally (:func:`bm25_query`, built like
  :func:`memfold.memory.fts.literal_query`), as an OR of its lightly stemmed words as prefixes,
  minus English stop words, so "When did Caroline go to the support group?" ranks by *caroline*,
  *support*, *group* rather than by *the* and *did*.
* **Cosine similarity** of unit vectors from the configured :class:`~memfold.memory.embeddings.Embedder`
  (vectors stored by :class:`~memfold.memory.embeddings.EmbeddingIndex`): the storage's
  nearest-neighbour search finds the closest items in scope (pgvector's HNSW index on PostgreSQL,
  an exact numpy scan otherwise), and the similarity of every BM25 hit and its neighbours is read too.

The two signals are fused linearly, ``0.3 × bm25 / max(bm25) + 0.7 × cosine``, after each turn
gains 0.3 × the signals of its neighbouring turns; on LoCoMo this beats reciprocal rank fusion
(Cormack, Clarke & Büttcher, SIGIR 2009; still available as ``fusion="rrf"``) by about 0.1
recall@10, because RRF throws away how *much* better the top BM25 match is. Items that only the
embedding ranker found must reach ``min_similarity`` cosine, so a query about something absent
does not return noise.

Invariant kept here: filters are applied **before** ranking, inside the SQL that picks candidates,
so a hit never comes from another conversation lineage, namespace, type, time range, or from an
item whose labels the reader lacks (DESIGN.md §4.9), and erased turns and inactive records are
never returned. Items that have no vector yet are embedded on the next search (incremental
indexing), so callers never have to remember to index.
"""

from __future__ import annotations

import bisect
import math
import re
import threading
import unicodedata
from collections import ChainMap, OrderedDict
from numbers import Real
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from .embeddings import ITEM_KINDS, EmbeddingIndex, Embedder, check_progress
from .errors import ConversationNotFound, EmbeddingError, InvalidInput
from .fts import literal_terms
from .records import RECORD_TYPES
from .query_analysis import without_names
from .recall_priors import (DATE_TAU_DAYS, DATE_WEIGHT, LENGTH_WEIGHT, SESSION_WEIGHT, SPEAKER_WEIGHT, TIME_WEIGHT,
                            TurnFacets, apply_turn_priors)
from .validation import check_labels
from .storage.base import Storage
from .storage.rows import SearchScope
from .storage.vectorscan import grown_capacity, lineage_mask

#: reciprocal rank fusion constant (Cormack et al. 2009)
RRF_K = 60
#: search modes
MODES = ("hybrid", "bm25", "dense")
#: share of normalised BM25 in linear fusion (LoCoMo dev, round 6: every leave-one-conversation-out fold
#: chose 0.3 once turns are ranked by the question without the speakers' names; 0.4 before)
BM25_WEIGHT = 0.3
#: share of the adjacent turns' signals a turn gains (LoCoMo dev: 0 -> 0.3 raises hybrid recall@10 by ~0.05)
NEIGHBOUR_WEIGHT = 0.3
#: cosine a hit needs when BM25 did not find it (all-MiniLM-L6-v2: unrelated sentences score ~0-0.15)
MIN_SIMILARITY = 0.2

#: how many times deeper BM25 looks when it ranks alone (no embedder, ``mode="bm25"``): its hits'
#: neighbours keep their own BM25 (issue 18 point 7)
BM25_ONLY_DEPTH = 3
#: how many times deeper than the candidate depth a hybrid search reads BM25 scores: its candidates
#: that BM25 ranks past the depth (a hit's neighbour, a dense hit) keep their own BM25 score (issue 18
#: point 7, round 6: LOO 0.791 -> 0.799 at 3 x), and one that matches the question only by a common
#: word (a speaker's name, an IDF near 0) still counts as a BM25 match, so the priors may lift it
#: (round 7, with the length prior: 0.800 at 3 x 100 deep, 0.808 at 10 x, in bench/locomo_ideas.py)
HYBRID_BM25_DEPTH = 10
#: BM25 parameters (FTS5's and Robertson & Zaragoza's usual values)
BM25_K1 = 1.2
BM25_B = 0.75
#: a scope of at most this many items is ranked from its own texts (one read), a larger one from
#: the index's occurrence lists (cost follows the terms' occurrences in the file)
SMALL_SCOPE = 400
#: ... and of at most this many index tokens in all (a few hundred long cards are cheaper from the
#: occurrence lists than tokenized in Python)
SMALL_SCOPE_TOKENS = 12_000
#: how many small scopes keep their words between searches (:class:`_ScopeTerms`, least recently
#: searched dropped first; at most :data:`SMALL_SCOPE_TOKENS` occurrences of 8 bytes each a scope)
SCOPE_TERMS_CACHED = 64
#: how many query words' counts (:meth:`HybridSearch._term_positions`) a kind's statistics keep
#: between searches, least recently used dropped first, and how many postings (item, count) in
#: all: 16 bytes each, at most 32 MB a kind
POSTINGS_CACHED_TERMS = 1_024
POSTINGS_CACHED = 2_000_000
#: how many searches' query vectors are kept (the texts :meth:`HybridSearch._query_texts` embeds,
#: 1,536 bytes a text with all-MiniLM-L6-v2, least recently searched dropped first): a question
#: asked again (an agent's recall tool repeating a search, the same question after an append)
#: is not embedded again; 0 keeps none
QUERY_VECTORS_CACHED = 256
#: a search whose turn scope holds at least this many turns embeds its query alone first when items
#: are pending (the turn just appended), so the dense scan runs while the worker embeds them:
#: scanning 100K MiniLM vectors costs about as much as embedding one turn, and in a small scope
#: one pass over query and turn together is cheaper
LARGE_SCOPE_VECTORS = 20_000
_UNREAD = object()  # no erasure count read (nothing kept may be used)
#: the ``meta`` key counting the erasures of a file (:meth:`memfold.window.erasure.Eraser.erase` raises
#: it in its transaction): a searcher whose in-memory statistics were read at another count drops
#: them, since an erased item's length, time and speaker must not weigh in later searches (a turn's
#: relabel, :func:`memfold.window.staleness.relabel`, raises it too: the labelled items are read anew)
ERASURES_KEY = "erasures"

#: English function words dropped from BM25 OR queries (kept when a query has nothing else).
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me might more
    most my myself no nor not now of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves s t d ll m re ve y""".split()
)


def light_stem(term: str) -> str:
    """Strip one common English suffix (``ing``, ``ed``, ``es``, ``s``) from a word longer than the
    suffix plus three letters: ``painted`` -> ``paint``, ``camping`` -> ``camp``; ``bus`` stays."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(term) > len(suffix) + 3 and term.endswith(suffix):
            return term[: -len(suffix)]
    return term


def bm25_terms(text: str, *, stop_words: frozenset[str] = STOP_WORDS, prefix: bool = True) -> list[str]:
    """The query's words as FTS5 phrase expressions, one per word: stop words removed (all words
    kept when every word is a stop word); with ``prefix`` each word is lightly stemmed
    (:func:`light_stem`) and matched as a prefix (``"paint" *``), so *painted* finds *painting*.
    Words stay quoted: no user text is ever FTS5 syntax."""
    terms = literal_terms(text)
    kept = [t for t in terms if t not in stop_words] or terms
    if prefix:
        kept = list(dict.fromkeys(light_stem(t) for t in kept))
        return ['"' + t.replace('"', '""') + '" *' for t in kept]
    return ['"' + t.replace('"', '""') + '"' for t in kept]


_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def index_tokens(text: str) -> list[str]:
    """``text`` split into tokens the way the full-text index (FTS5 ``unicode61 remove_diacritics
    2``) splits it: runs of letters and digits, lower-cased, diacritics removed."""
    if text.isascii():  # nothing to decompose: the common case, about 30x faster
        return _TOKEN.findall(text.lower())
    folded = unicodedata.normalize("NFKD", text.lower())
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return _TOKEN.findall(folded)


def query_tokens(text: str, *, stop_words: frozenset[str] = STOP_WORDS) -> list[tuple[str, bool]]:
    """The query's words as ``(index token, prefix)`` pairs, as :func:`bm25_terms` picks them (stop
    words dropped unless nothing else is left, lightly stemmed, matched as prefixes); a word the
    index splits in several tokens (``foo_bar``) gives each of them."""
    out: list[tuple[str, bool]] = []
    for term in bm25_terms(text, stop_words=stop_words, prefix=True):
        word = term[1:term.rindex('"')].replace('""', '"')
        for token in index_tokens(word):
            out.append((token, True))
    return list(dict.fromkeys(out))


class _Docs:
    """The indexed items of one kind in memory: ``ids`` (ascending), ``lengths`` (index tokens),
    ``groups`` (codes of a turn's or card's conversation, a record's namespace), ``seqs``;
    ``mark`` is the largest id read. About 40 bytes per item plus the (group, seq) map of turns.

    ``postings`` keeps query words' counts between searches (:meth:`HybridSearch._term_positions`):
    ``(token, prefix) -> (covered, positions, counts)``, the positions (ascending) of the items
    among the first ``covered`` the word occurs in and how often. ``erasures`` is the file's
    erasure count (:data:`ERASURES_KEY`) these statistics were started at: a search uses the kept
    counts only while its snapshot still reads that count (an erasure drops the whole object)."""

    def __init__(self, erasures: Any = None) -> None:
        self.erasures = erasures
        self.postings: "OrderedDict[tuple[str, bool], tuple[int, np.ndarray, np.ndarray]]" = OrderedDict()
        self.posting_count = 0
        self.postings_lock = threading.Lock()
        self.labelled = np.zeros(0, dtype=np.int64)  # ids (ascending) of the items requiring a label
        self.n = 0
        self.mark = 0
        self._ids = np.zeros(0, dtype=np.int64)
        self._lengths = np.zeros(0, dtype=np.float64)
        self._groups = np.zeros(0, dtype=np.int32)
        self._seqs = np.zeros(0, dtype=np.int64)
        self.names: dict[Any, int] = {}
        self.at: "dict[tuple[int, int], int] | ChainMap" = {}  # (group code, seq) -> id

    ids = property(lambda self: self._ids[:self.n])
    lengths = property(lambda self: self._lengths[:self.n])
    groups = property(lambda self: self._groups[:self.n])
    seqs = property(lambda self: self._seqs[:self.n])

    def add(self, rows: Sequence[tuple[int, int, Any, int]]) -> None:
        if not rows:
            return
        need = self.n + len(rows)
        if need > len(self._ids):
            cap = grown_capacity(need)
            for name in ("_ids", "_lengths", "_groups", "_seqs"):
                arr = getattr(self, name)
                grown = np.zeros(cap, dtype=arr.dtype)
                grown[:self.n] = arr[:self.n]
                setattr(self, name, grown)
        n = self.n
        codes = [self.names.setdefault(g, len(self.names)) for _, _, g, _ in rows]
        self._ids[n:need] = [r[0] for r in rows]
        self._lengths[n:need] = [r[1] for r in rows]
        self._groups[n:need] = codes
        self._seqs[n:need] = [r[3] for r in rows]
        self.at.update(((c, r[3]), r[0]) for c, r in zip(codes, rows))
        self.n = need
        self.mark = int(rows[-1][0])

    def extended(self, rows: Sequence[tuple[int, int, Any, int]], labelled: Sequence[int]) -> "_Docs":
        """A copy with ``rows`` (and the ``labelled`` ids among them) added, this object left as it
        was: the statistics of a search inside the caller's transaction, whose rows may roll back
        (and SQLite hands a rolled-back id to the next turn). Nothing kept between searches is
        copied (no ``postings``: such a search keeps none)."""
        out = _Docs(self.erasures)
        out.n, out.mark = self.n, self.mark
        for name in ("_ids", "_lengths", "_groups", "_seqs"):
            setattr(out, name, getattr(self, name)[:self.n].copy())
        # the (group, seq) map is read through, not copied (O(items)): the new rows' keys go to a
        # dict of their own, in front; a key the kept map gains later names a committed turn,
        # which the search checks visible like any other neighbour
        out.names, out.at = dict(self.names), ChainMap({}, self.at)
        out.labelled = np.concatenate([self.labelled, np.asarray(labelled, dtype=np.int64)])
        out.add(rows)
        return out

    def rows(self, lineage: Sequence[tuple[str, int | None]] | None) -> np.ndarray:
        """Positions of the items a lineage sees (``None``: every item)."""
        if lineage is None:
            return np.arange(self.n)
        return np.flatnonzero(lineage_mask(self.names, self.groups, self.seqs, lineage))

    def rows_of(self, ids: np.ndarray) -> np.ndarray:
        """Positions of the (sorted) ``ids`` that are known here."""
        pos = self.position(ids)
        return np.sort(pos[pos >= 0])

    def position(self, ids: np.ndarray) -> np.ndarray:
        """Each id's position, or -1 when it is not known here."""
        if not self.n or not len(ids):
            return np.full(len(ids), -1, dtype=np.int64)
        at = np.clip(np.searchsorted(self.ids, ids), 0, self.n - 1)
        return np.where(self.ids[at] == ids, at, -1)

    @staticmethod
    def scope_index(rows: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """For positions ``pos``, their index in the sorted ``rows`` (-1 outside)."""
        if not len(rows):
            return np.full(len(pos), -1, dtype=np.int64)
        at = np.clip(np.searchsorted(rows, pos), 0, len(rows) - 1)
        return np.where(rows[at] == pos, at, -1)

    def neighbours(self, ids: Sequence[int]) -> tuple[dict[int, int | None], dict[int, int | None]]:
        """Each turn's previous and next turn in its conversation (by seq), ``None`` when unknown.

        A conversation's turns mostly come one after the other in id order, so the item just
        before (after) a turn's position is checked first, for all turns at once; only the turns
        whose neighbour is elsewhere are looked up by (conversation, seq). A (conversation, seq)
        names one turn, so both ways give the same turn."""
        ids = list(ids)
        pos = self.position(np.asarray(ids, dtype=np.int64))
        n = self.n
        prev_ids = np.full(len(ids), -1, dtype=np.int64)
        next_ids = np.full(len(ids), -1, dtype=np.int64)
        known = pos >= 0
        for out, step in ((prev_ids, -1), (next_ids, 1)):
            other = pos + step
            ok = known & (other >= 0) & (other < n)
            at, there = pos[ok], other[ok]
            same = (self._groups[there] == self._groups[at]) & (self._seqs[there] == self._seqs[at] + step)
            hit = np.flatnonzero(ok)[same]
            out[hit] = self._ids[there[same]]
        prev_list, next_list = prev_ids.tolist(), next_ids.tolist()
        for k in np.flatnonzero(known & ((prev_ids < 0) | (next_ids < 0))).tolist():
            p = pos[k]
            g, q = int(self._groups[p]), int(self._seqs[p])
            if prev_list[k] < 0:
                prev_list[k] = self.at.get((g, q - 1), -1)
            if next_list[k] < 0:
                next_list[k] = self.at.get((g, q + 1), -1)
        prev = {i: (p if p >= 0 else None) for i, p in zip(ids, prev_list)}
        nxt = {i: (q if q >= 0 else None) for i, q in zip(ids, next_list)}
        return prev, nxt


def _small_scope_term_frequencies(ids: Sequence[int], texts: dict[int, Any],
                                  tokens: Sequence[tuple[str, bool]]) -> list[np.ndarray]:
    """For each query ``(token, prefix)``, ``(len(ids),) float64``: how often it occurs in each
    item's text (``texts[id].text``; an item without one has none), counted the way the index
    splits words (:func:`index_tokens`), a prefix matching every word that starts with it.

    Each text is split once; each distinct word gets a code and every occurrence is counted with
    one ``bincount`` per query token, so the cost is the scope's words, not words x query tokens."""
    codes: dict[str, int] = {}
    item_of: list[int] = []
    word_of: list[int] = []
    for at, item_id in enumerate(ids):
        item = texts.get(int(item_id))
        if item is None:
            continue
        words = index_tokens(item.text)
        word_of.extend(codes.setdefault(w, len(codes)) for w in words)
        item_of.extend([at] * len(words))
    items = np.asarray(item_of, dtype=np.int64)
    word_codes = np.asarray(word_of, dtype=np.int64)
    out = []
    for token, prefix in tokens:  # each query word's matching index words, found once per scope
        wanted = [c for w, c in codes.items() if w.startswith(token)] if prefix else \
            ([codes[token]] if token in codes else [])
        if not wanted or not len(word_codes):
            out.append(np.zeros(len(ids)))
            continue
        hit = np.zeros(len(codes), dtype=bool)
        hit[wanted] = True
        out.append(np.bincount(items[hit[word_codes]], minlength=len(ids)).astype(np.float64))
    return out


class _ScopeTerms:
    """One small scope's words, kept between searches (issue 18 point 1): each item's text split
    once (:func:`index_tokens`), every occurrence as ``(item index, word code)`` into the scope's
    own vocabulary, and the vocabulary sorted for prefix look-ups. :meth:`frequencies` then counts
    a query token with one ``bincount`` over the scope's occurrences, with no text read or split.

    ``ids`` are the scope's item ids in scope order (ascending). :meth:`extend` adds items at the
    end (the turns and cards written since), so an append re-reads and splits only the new item.
    ``version`` is the storage state (:meth:`MetaStorage.state_version`) at which every item was
    last known to be in the full-text index: an item that left it (erasure) makes the owner drop
    the whole entry, its words with it. That check suffices because an indexed text never changes
    in place: turns and cards are immutable and a record's content is only ever blanked by erasure
    (a new fact is a new record)."""

    __slots__ = ("ids", "version", "_codes", "_words", "_items", "_word_of", "_n_occ", "_indexed")

    def __init__(self) -> None:
        self.ids = np.zeros(0, dtype=np.int64)
        self.version: Any = None
        self._codes: dict[str, int] = {}
        self._words: list[str] = []  # the vocabulary, sorted (prefix ranges by bisection)
        self._items = np.zeros(0, dtype=np.int32)  # per occurrence: index into ids
        self._word_of = np.zeros(0, dtype=np.int32)  # per occurrence: word code
        self._n_occ = 0
        self._indexed: list[int] = []  # ids whose text had words (the ones erasure can change)

    @property
    def occurrences(self) -> int:
        return self._n_occ

    def indexed_ids(self) -> list[int]:
        return self._indexed

    def extend(self, ids: Sequence[int], texts: dict[int, Any]) -> None:
        """Add the items ``ids`` (after those held) with their ``texts[id].text`` (an item
        without one has no words)."""
        codes = self._codes
        new_words: list[str] = []
        item_of: list[int] = []
        word_of: list[int] = []
        base = len(self.ids)
        for at, item_id in enumerate(ids, start=base):
            item = texts.get(int(item_id))
            if item is None:
                continue
            tokens = index_tokens(item.text)
            if not tokens:
                continue
            self._indexed.append(int(item_id))
            for w in tokens:
                code = codes.get(w)
                if code is None:
                    code = codes[w] = len(codes)
                    new_words.append(w)
                word_of.append(code)
            item_of.extend([at] * len(tokens))
        if new_words:  # the sorted vocabulary plus a few new words: timsort merges them in linear time
            self._words.extend(new_words)
            self._words.sort()
        self.ids = np.concatenate([self.ids, np.asarray(ids, dtype=np.int64)])
        if word_of:
            self._items = np.concatenate([self._items[:self._n_occ], np.asarray(item_of, dtype=np.int32)])
            self._word_of = np.concatenate([self._word_of[:self._n_occ], np.asarray(word_of, dtype=np.int32)])
            self._n_occ = len(self._items)

    def frequencies(self, token: str, prefix: bool) -> tuple[np.ndarray, np.ndarray]:
        """``(at, tf)``: the indexes into :attr:`ids` (ascending, distinct) of the items in which
        ``token`` occurs (any word starting with it when ``prefix``) and how often (float64),
        the same counts as :func:`_small_scope_term_frequencies`."""
        n = len(self.ids)
        if prefix:
            words = self._words
            lo = bisect.bisect_left(words, token)
            hi = lo
            while hi < len(words) and words[hi].startswith(token):
                hi += 1
            wanted = [self._codes[w] for w in words[lo:hi]]
        else:
            wanted = [self._codes[token]] if token in self._codes else []
        if not wanted or not self._n_occ:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        if len(wanted) == 1:
            sel = self._word_of == wanted[0]
        else:
            hit = np.zeros(len(self._codes), dtype=bool)
            hit[wanted] = True
            sel = hit[self._word_of]
        tf = np.bincount(self._items[sel], minlength=n)
        at = np.flatnonzero(tf)
        return at, tf[at].astype(np.float64)


def _bm25_top(ids: np.ndarray, lengths: np.ndarray, avgdl: float,
              tfs: Sequence[tuple[np.ndarray, np.ndarray]], n: int) -> dict[int, float]:
    """``{id: score > 0}`` of the best ``n`` of a scope's items (``ids``, their ``lengths`` in
    index tokens, their mean ``avgdl``) by BM25 (k1 :data:`BM25_K1`, b :data:`BM25_B`, FTS5's idf
    floor 1e-6), best first, ties by smaller id. ``tfs`` holds per query token ``(at, tf)``: the
    (distinct) indexes of the items it occurs in and how often.

    Only the items a token occurs in are scored (a term adds exactly 0 elsewhere), and only the
    best ``n`` (with every tie of the last) are sorted: the cost follows the occurrences and k,
    not the scope's size."""
    n_scope = len(ids)
    totals = np.zeros(n_scope)
    norm = BM25_K1 * (1 - BM25_B + BM25_B * lengths / avgdl)
    for at, tf in tfs:
        df = len(at)
        if not df:
            continue
        idf = math.log((n_scope - df + 0.5) / (df + 0.5))
        idf = idf if idf > 0 else 1e-6
        totals[at] += idf * tf * (BM25_K1 + 1) / (tf + norm[at])
    hit = np.flatnonzero(totals > 0)
    if not len(hit):
        return {}
    scores = totals[hit]
    if len(hit) > n:  # the best n (argpartition), with every tie of the n-th, then sorted exactly
        keep = np.argpartition(-scores, n - 1)[:n]
        keep = np.flatnonzero(scores >= scores[keep].min())
        hit, scores = hit[keep], scores[keep]
    found = ids[hit]
    order = np.lexsort((found, -scores))[:n]
    return dict(zip(found[order].tolist(), scores[order].tolist()))


def bm25_query(text: str, *, stop_words: frozenset[str] = STOP_WORDS, prefix: bool = True) -> str | None:
    """The FTS5 MATCH expression for a natural-language query: the OR of :func:`bm25_terms`
    (LoCoMo dev: stemmed prefixes raise BM25 recall@10 from 0.56 to 0.60).

    :returns: the expression, or ``None`` when the text has no word.
    """
    terms = bm25_terms(text, stop_words=stop_words, prefix=prefix)
    return " OR ".join(terms) if terms else None


def rrf_fuse(rankings: Sequence[Sequence[Any]], *, weights: Sequence[float] | None = None,
             k: int = RRF_K) -> list[tuple[Any, float]]:
    """Weighted reciprocal rank fusion of ranked lists of keys.

    :param rankings: lists of keys, best first (a key may be missing from some lists).
    :param weights: one weight per list (default 1.0 each).
    :param k: the RRF constant; larger flattens the head of each list.
    :returns: ``[(key, score)]`` best first; ties keep the order of first appearance.
    """
    weights = list(weights) if weights is not None else [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise InvalidInput(f"rrf_fuse needs one weight per ranking: {len(weights)} weights, {len(rankings)} rankings")
    scores: dict[Any, float] = {}
    for ranking, weight in zip(rankings, weights):
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    order = {key: i for i, key in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


@dataclass(frozen=True)
class SearchHit:
    """One search result.

    :ivar kind: ``"turn"``, ``"card"`` or ``"record"``.
    :ivar id: the item id (turn id, card id or record id).
    :ivar score: the fused score (higher is better; only comparable within one search).
    :ivar text: the item's text (turn content, card text, record content).
    :ivar bm25_rank: 1-based rank in the BM25 list, or None if BM25 did not find it.
    :ivar dense_rank: 1-based rank in the embedding list, or None.
    :ivar similarity: cosine similarity to the query, or None without an embedder.
    :ivar time: turn ``created_at``, record ``written_at``, card end of span (clock units).

    The recall tool ``search`` reports hits as :class:`memfold.window.recall.RecallHit`
    (conversation position and snippet), built from these.
    """

    kind: str
    id: Any
    score: float
    text: str
    conversation_id: str | None = None
    namespace: str | None = None
    type: str | None = None
    key: str | None = None
    time: float | None = None
    bm25_rank: int | None = None
    dense_rank: int | None = None
    similarity: float | None = None
    labels: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        d = asdict(self)
        d["labels"] = list(self.labels)
        return d


class HybridSearch:
    """Search turns, cards and records with BM25, embeddings, or both fused.

    :param storage: the opened :class:`~memfold.memory.storage.base.Storage` (its ``fulltext``
        and ``vectors`` families).
    :param embedder: the :class:`Embedder` for the dense ranker, or ``None`` for BM25 only. A
        callable returning an embedder is resolved on first use (so a model loads only when needed).
    :param index: the :class:`EmbeddingIndex` (default: one over ``storage``).
    """

    def __init__(self, storage: Storage, embedder: Embedder | Callable[[], Embedder | None] | None = None,
                 *, index: EmbeddingIndex | None = None, clock: Any = None) -> None:
        self.storage = storage
        self.clock = clock  # its unit says whether turn times are POSIX seconds (the date prior)
        self._facets = TurnFacets()
        self.fulltext = self.storage.fulltext
        self._embedder = embedder
        self.index = index or EmbeddingIndex(self.storage)
        self._doc_stats: dict[str, _Docs] = {}
        self._docs_lock = threading.Lock()
        #: embed the query (and items without a vector) in a worker thread while BM25 ranks; the
        #: hits are the same either way (tests/test_search_overlap.py), False computes them in line
        self.overlap_embedding = True
        self._scope_terms: "OrderedDict[Any, _ScopeTerms]" = OrderedDict()  # small scopes' words
        self._scope_terms_lock = threading.Lock()
        self._erasures: str | None = None  # the file's erasure count the statistics were read at
        #: the query texts' vectors of the last searches (:data:`QUERY_VECTORS_CACHED`), for one embedder
        self._query_vectors: "OrderedDict[tuple[str, ...], np.ndarray]" = OrderedDict()
        self._query_vectors_of: Embedder | None = None
        self._query_vectors_lock = threading.Lock()

    @property
    def embedder(self) -> Embedder | None:
        """The embedder, resolved from a factory on first access."""
        if self._embedder is not None and not isinstance(self._embedder, Embedder):
            self._embedder = self._embedder()
        return self._embedder  # type: ignore[return-value]

    # -- filters ---------------------------------------------------------------------------
    def _scope(self, kind: str, *, conversation_id: str | None, lineage: Callable[[], tuple],
               namespace: str | None, type: str | None, key: str | None, since: float | None,
               until: float | None, reader_labels: Sequence[str] | None) -> SearchScope | None:
        """The :class:`SearchScope` of live, visible items of ``kind``; None when the filters
        exclude the kind altogether (a record type or slot on turns and cards, a conversation on
        records). ``lineage()`` gives the conversation's lineage (looked up once per search)."""
        labels = None if reader_labels is None else tuple(reader_labels)
        if kind == "record":
            if conversation_id is not None:
                return None
            return SearchScope(namespace=namespace, type=type, key=key, since=since, until=until,
                               reader_labels=labels)
        if type is not None or key is not None:
            return None
        if conversation_id is not None:
            return SearchScope(lineage=lineage(), since=since, until=until, reader_labels=labels)
        return SearchScope(namespace=namespace, since=since, until=until, reader_labels=labels)

    # -- the in-memory document statistics --------------------------------------------------
    def _docs(self, kind: str) -> "_Docs":
        """The indexed items of ``kind`` (id, length, group, seq) in memory, brought up to date by
        reading only the items indexed since the last search (a primary-key range).

        Only committed items are kept: inside the caller's transaction (or snapshot) the items
        read past the kept ones may be its own uncommitted writes, which a rollback undoes (and
        SQLite then hands the same id to the next turn, which a kept row would shadow). They go
        into a copy for this search alone (:meth:`_Docs.extended`); the kept statistics read them
        at the first search after the transaction, committed or not there at all."""
        private = self.storage.in_transaction
        # settled: no id below the mark may commit after it is read (PostgreSQL's writers of
        # different conversations commit side by side); storage first, then the statistics' lock
        with self.storage.settled(), self._docs_lock:
            docs = self._doc_stats.get(kind)
            if docs is None:
                docs = _Docs(self._erasures)
                if not private:
                    self._doc_stats[kind] = docs
            rows = self.fulltext.documents(kind, docs.mark)
            if rows and rows[0][0] <= docs.mark:  # cannot happen with growing ids; reload to be safe
                docs = _Docs(self._erasures)
                if not private:
                    self._doc_stats[kind] = docs
                rows = self.fulltext.documents(kind, 0)
            labelled = []
            if rows and kind in ("turn", "card"):  # a turn's relabel counts as an erasure (ERASURES_KEY): read anew
                labelled = self.fulltext.labelled(kind, docs.mark, int(rows[-1][0]))
            if private:
                return docs.extended(rows, labelled) if rows else docs
            if labelled:
                docs.labelled = np.concatenate([docs.labelled, np.asarray(labelled, dtype=np.int64)])
            docs.add(rows)
            return docs

    def _forget_erased(self) -> None:
        """Drop the in-memory statistics (document lengths, turn facets, kept scope words) when the
        file was erased in since they were read (:data:`ERASURES_KEY`, by any process), so an
        erased item's length, time and speaker no longer count: the next search reads them anew,
        as a fresh process would. One primary-key read per search; a reload only after an erasure.
        Read before the statistics: an erasure committing after it is caught by the next search."""
        count = self.storage.meta.get(ERASURES_KEY)
        if count == self._erasures:
            return
        with self._docs_lock:
            self._doc_stats = {}
        with self._scope_terms_lock:
            self._scope_terms.clear()
        self._facets = TurnFacets()
        if not self.storage.in_transaction:  # a count read inside the caller's transaction may roll back
            self._erasures = count

    def _scope_rows(self, kind: str, docs: "_Docs", flt: SearchScope) -> np.ndarray:
        """Positions in ``docs`` of the items inside ``flt``: by the lineage's groups and seqs in
        memory when the scope is a conversation (or nothing), else from storage's candidate read.
        Labels are checked on the hits (:meth:`FullTextStorage.visible`), not here."""
        simple = flt.namespace is None and flt.type is None and flt.key is None and flt.since is None \
            and flt.until is None and kind != "record"
        if simple:
            return docs.rows(flt.lineage)
        allowed = np.sort(np.fromiter(self.fulltext.candidates(kind, flt), dtype=np.int64))
        return docs.rows_of(allowed)

    def _bm25_rows(self, kind: str, docs: "_Docs", rows: np.ndarray, tokens: list[tuple[str, bool]],
                   n: int, read: dict[int, Any] | None = None, *, scope_key: Any = None,
                   state: Any = None, known: int | None = None, keep: bool = False) -> dict[int, float]:
        """BM25 (Robertson & Zaragoza 2009, k1 1.2, b 0.75, FTS5's idf floor) of the items at
        ``rows`` with the statistics of those items alone (their count, mean length and document
        frequencies): ``{id: score > 0}`` for the best ``n``.

        Term frequencies come from the scope's own texts when the scope is small (at most
        :data:`SMALL_SCOPE` items of :data:`SMALL_SCOPE_TOKENS` tokens in all: one read, whatever
        the file's size), else from the index's per-item counts (:meth:`_term_positions`: ``known``
        is how many of ``docs``' items were known before this search's snapshot, ``keep`` whether
        the counts kept between searches may be used).
        A small scope's items, read for that, are added to ``read`` (``{id: SearchItem}``) when
        given, so the hits among them are not read again. With ``scope_key`` (what identifies the
        scope) and ``state`` (the storage's :meth:`~MetaStorage.state_version`, read before this
        search's snapshot) a small scope's words are kept between searches (:meth:`_scope_terms_of`):
        only the items written since are read and split.

        Why the scope's statistics: FTS5's ``bm25()`` weighs a word by how rare it is in the
        *whole* table. Searching inside one conversation, that makes the conversation's own
        participants' names look rare (they never occur elsewhere) although they are in half of
        its turns, and they swamp the words that matter (LoCoMo dev, 6 conversations in one file:
        hybrid recall@10 0.67 with table-wide rarity, 0.72 with rarity inside the conversation).
        """
        if not len(rows) or not tokens:
            return {}
        lengths = docs.lengths[rows]
        avgdl = float(lengths.mean()) or 1.0
        n_scope = len(rows)
        if n_scope <= SMALL_SCOPE and float(lengths.sum()) <= SMALL_SCOPE_TOKENS and state is not None \
                and scope_key is not None:
            tfs = self._scope_terms_of(kind, scope_key, state, docs.ids[rows], tokens, read)
        elif n_scope <= SMALL_SCOPE and float(lengths.sum()) <= SMALL_SCOPE_TOKENS:
            texts = self.fulltext.items(kind, docs.ids[rows].tolist())
            if read is not None:
                read.update(texts)
            tfs = [(np.flatnonzero(tf), tf[tf > 0])
                   for tf in _small_scope_term_frequencies(docs.ids[rows].tolist(), texts, tokens)]
        else:
            tfs = self._scope_term_frequencies(kind, docs, rows, tokens, docs.n if known is None else known, keep)
        return _bm25_top(docs.ids[rows], lengths, avgdl, tfs, n)

    def _scope_terms_of(self, kind: str, scope_key: Any, state: Any, ids: np.ndarray,
                        tokens: Sequence[tuple[str, bool]], read: dict[int, Any] | None) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per query token ``(at, tf)`` in the small scope of ``ids`` (ascending), from the scope's
        words kept since an earlier search (:class:`_ScopeTerms`), the same counts as splitting its
        texts now (:func:`_small_scope_term_frequencies`).

        The entry is reused while the storage's ``state`` is the one it was checked at; after any
        commit its items are checked to still be in the full-text index
        (:meth:`FullTextStorage.indexed`: an erased item is not, and its words must not stay),
        and an entry with an item gone is dropped and rebuilt. Items written since (ids after the
        entry's, as turns and cards of a conversation come) are read and split alone; a scope
        that is not the entry's items plus newer ones is rebuilt. Called inside the search's
        snapshot, ``state`` read before it, so an entry is never newer than the state it names."""
        with self._scope_terms_lock:
            entry = self._scope_terms.pop(scope_key, None)
            if entry is not None and entry.version != state:
                held = entry.indexed_ids()
                if held and len(self.fulltext.indexed(kind, held)) != len(held):
                    entry = None  # an item left the index (erased): its words go with the entry
            if entry is not None:
                old = len(entry.ids)
                if len(ids) < old or not np.array_equal(ids[:old], entry.ids):
                    entry = None
            if entry is None:
                entry = _ScopeTerms()
            new = ids[len(entry.ids):]
            if len(new):
                texts = self.fulltext.items(kind, new.tolist())
                if read is not None:
                    read.update(texts)
                entry.extend(new.tolist(), texts)
            entry.version = state
            self._scope_terms[scope_key] = entry
            while len(self._scope_terms) > SCOPE_TERMS_CACHED:
                self._scope_terms.popitem(last=False)
            return [entry.frequencies(token, prefix) for token, prefix in tokens]

    def _scope_term_frequencies(self, kind: str, docs: "_Docs", rows: np.ndarray,
                                tokens: Sequence[tuple[str, bool]], known: int,
                                keep: bool) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per query ``(token, prefix)``, ``(at, tf)``: the indexes into ``rows`` (distinct) of the
        items in which the token occurs, and how often (float64), from :meth:`_term_positions`.
        A scope holding every known item (one conversation that is the whole file) skips the
        look-up of positions inside the scope."""
        n_scope = len(rows)
        out = []
        for pos, tf in self._term_positions(kind, docs, tokens, known, keep):
            at = pos if n_scope == known else docs.scope_index(rows, pos)  # index into rows, -1 outside
            inside = (at >= 0) & (at < n_scope)
            out.append((at[inside], tf[inside]))
        return out

    def _term_positions(self, kind: str, docs: "_Docs", tokens: Sequence[tuple[str, bool]], known: int,
                        keep: bool) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per query ``(token, prefix)``, ``(positions, tf)``: the positions in ``docs`` (ascending,
        below ``known``) of the items the token occurs in, and how often (float64), from the
        index's per-item counts (:meth:`FullTextStorage.term_frequencies`). Call inside the
        search's snapshot; ``known`` is ``docs.n`` read before it (every item below it is in the
        snapshot).

        With ``keep`` (turns and cards, which never change in place, outside a caller's
        transaction, while the snapshot reads the erasure count ``docs`` started at) a word's
        counts are kept in ``docs.postings`` between searches: a word searched before reads only
        the items written since (:meth:`FullTextStorage.term_frequencies_after`, one read for
        every such word), so a conversation's recurring words (its speakers' names, which occur
        in a large share of its turns) are not walked again on every search. An erasure drops
        ``docs`` and what it keeps (:meth:`_forget_erased`); the counts are those a fresh read
        gives (tests/test_search_postings.py)."""
        out: list[tuple[np.ndarray, np.ndarray] | None] = [None] * len(tokens)
        kept: dict[int, tuple[int, np.ndarray, np.ndarray]] = {}
        if keep:
            with docs.postings_lock:
                for k, token in enumerate(tokens):
                    entry = docs.postings.get(token)
                    if entry is not None:
                        docs.postings.move_to_end(token)
                        kept[k] = entry
        behind = [k for k, (covered, _, _) in kept.items() if covered < known]
        if behind:
            since = min(kept[k][0] for k in behind)
            after_id = int(docs.ids[since - 1]) if since else 0
            fresh = self.fulltext.term_frequencies_after(kind, [tokens[k] for k in behind], after_id)
            for k, (ids, counts) in zip(behind, fresh):
                covered, pos0, tf0 = kept[k]
                pos = docs.position(ids)
                new = (pos >= covered) & (pos < known)
                kept[k] = (known, np.concatenate([pos0, pos[new]]), np.concatenate([tf0, counts[new].astype(np.float64)]))
        for k, (covered, pos, tf) in kept.items():
            upto = int(np.searchsorted(pos, known)) if covered > known else len(pos)
            out[k] = (pos[:upto], tf[:upto])
        for k, (token, prefix) in enumerate(tokens):
            if out[k] is not None:
                continue
            ids, counts = self.fulltext.term_frequencies(kind, token, prefix=prefix)
            pos = docs.position(ids)  # -1 when not a known item
            inside = (pos >= 0) & (pos < known)  # (an item another thread's search added since is outside)
            out[k] = (pos[inside], counts[inside].astype(np.float64))
            if keep:
                kept[k] = (known, *out[k])
        if keep and kept:
            with docs.postings_lock:
                for k, entry in kept.items():
                    old = docs.postings.pop(tokens[k], None)
                    if old is not None and old[0] > entry[0]:
                        entry = old  # another search read further meanwhile
                    docs.posting_count += len(entry[1]) - (len(old[1]) if old is not None else 0)
                    docs.postings[tokens[k]] = entry
                while docs.postings and (len(docs.postings) > POSTINGS_CACHED_TERMS
                                         or docs.posting_count > POSTINGS_CACHED):
                    _, dropped = docs.postings.popitem(last=False)
                    docs.posting_count -= len(dropped[1])
        return out  # type: ignore[return-value]

    def _bm25_phase(self, filters: dict[str, SearchScope], current: dict[str, "_Docs"],
                    tokens: list[tuple[str, bool]], depth: int, dense: bool,
                    read: dict[str, dict[int, Any]], state: Any,
                    known: dict[str, int]) -> dict[str, tuple[np.ndarray, dict[int, float]]]:
        """``{kind: (scope rows, {id: BM25})}`` for the kinds whose scope holds any item (call in a
        snapshot; ``state`` as for :meth:`_bm25_rows`). BM25 alone looks deeper than ``depth``: a
        turn past the depth would lose its own score (and with it its place) when it is only a
        neighbour of a hit (LoCoMo dev, BM25 recall@10 0.637 -> 0.681 on the first conversation;
        BM25_ONLY_DEPTH); with a dense ranker :data:`HYBRID_BM25_DEPTH` times as deep."""
        out = {}
        # the counts kept between searches only while no erasure committed since they were
        # started, as this snapshot reads it; never inside a caller's transaction
        erasures = self.storage.meta.get(ERASURES_KEY) if state is not None and tokens else _UNREAD
        for kind, flt in filters.items():
            docs = current[kind]
            n_known = known.get(kind, docs.n)
            rows = self._scope_rows(kind, docs, flt)
            rows = rows[rows < n_known] if len(rows) and rows[-1] >= n_known else rows
            if flt.reader_labels is not None and 0 < len(rows) <= SMALL_SCOPE:
                # a small scope's statistics count only what this reader may see: a hidden turn's
                # words must not move the rarity (idf) of a query word, nor the mean length, of the
                # visible ones (one read of at most SMALL_SCOPE ids). Larger scopes still count them.
                seen = self.fulltext.visible(kind, flt, docs.ids[rows].tolist())
                rows = rows[np.isin(docs.ids[rows], np.fromiter(seen, dtype=np.int64, count=len(seen)))]
            elif flt.reader_labels is not None and len(rows) and kind in ("turn", "card"):
                # a larger scope: only its items that require a label can be refused (kept in
                # memory with the statistics), so only they are checked, and the refused ones
                # leave the statistics too
                pos = docs.position(docs.labelled)
                at = docs.scope_index(rows, pos[pos >= 0])
                asking = docs.ids[rows[at[at >= 0]]]
                if len(asking):
                    seen = self.fulltext.visible(kind, flt, asking.tolist())
                    refused = asking[~np.isin(asking, np.fromiter(seen, dtype=np.int64, count=len(seen)))]
                    if len(refused):
                        rows = rows[~np.isin(docs.ids[rows], refused)]
            if not len(rows):
                continue
            bm_depth = (HYBRID_BM25_DEPTH if dense else BM25_ONLY_DEPTH) * depth
            keep = kind in ("turn", "card") and erasures is not _UNREAD and erasures == docs.erasures
            out[kind] = (rows, self._bm25_rows(kind, docs, rows, tokens, bm_depth, read.setdefault(kind, {}),
                                               scope_key=(kind, flt), state=state, known=n_known,
                                               keep=keep) if tokens else {})
        return out

    def _with_new_items(self, kind: str, dense: dict[int, float], new_ids: list[int], qvec: np.ndarray,
                        flt: SearchScope, n: int, private: bool) -> dict[int, float]:
        """The ``n`` nearest of ``dense`` (the scope's nearest stored vectors, scanned before the
        items ``new_ids`` had theirs) and of those new items that are inside ``flt`` and now have a
        vector: best first, ties by smaller id, as :meth:`VectorStorage.nearest` orders them. Call
        inside the search's snapshot, after the new vectors are stored."""
        if not new_ids:
            return dense
        inside = self.fulltext.visible(kind, flt, sorted(set(new_ids)))
        added = self.storage.vectors.similarity(kind, qvec, sorted(inside), private=private) if inside else {}
        if not added:
            return dense
        merged = {**dense, **added}
        return dict(sorted(merged.items(), key=lambda kv: (-kv[1], kv[0]))[:n])

    def _visible(self, kind: str, flt: SearchScope, item_ids: Iterable[int], docs: "_Docs", known: int,
                 erasures: Any) -> set[int]:
        """Which of ``item_ids`` are live items of ``kind`` inside ``flt``: what
        :meth:`FullTextStorage.visible` answers, with the turns of a lineage scope answered from
        ``docs`` (the statistics in memory) when that is the same answer, so only the others are
        read (none in a bot's plain search, was one read of every candidate and neighbour).

        Call inside the search's snapshot, ``erasures`` the file's erasure count
        (:data:`ERASURES_KEY`) read in it (``_UNREAD`` inside a caller's transaction: always read).
        A turn is known live from memory when it is among ``docs``' first ``known`` items (read,
        committed and in the full-text index, so not erased, before this snapshot began), the
        snapshot still reads the erasure count ``docs`` was started at (an erasure, or a relabel,
        which counts as one, since then would drop ``docs``: a turn once indexed stays live and
        keeps its labels until one of them commits; turns are never deleted), and its
        conversation and seq fall in the lineage (as the SQL clause picks them). A turn that
        requires a label (``docs.labelled``) for a reader with labels, an unknown one, and every
        card and record (a card goes stale without an erasure) are read as before."""
        ids = sorted({int(i) for i in item_ids})
        if not ids:
            return set()
        if (kind != "turn" or erasures is _UNREAD or erasures != docs.erasures or flt.lineage is None
                or flt.namespace is not None or flt.since is not None or flt.until is not None or not known):
            return self.fulltext.visible(kind, flt, ids)
        arr = np.asarray(ids, dtype=np.int64)
        pos = docs.position(arr)
        sure = (pos >= 0) & (pos < known)
        if flt.reader_labels is not None and len(docs.labelled):
            sure &= ~np.isin(arr, docs.labelled)
        at = pos[sure]
        inside = lineage_mask(docs.names, docs.groups[at], docs.seqs[at], flt.lineage)
        out = set(arr[sure][inside].tolist())
        rest = arr[~sure]
        if len(rest):
            out |= self.fulltext.visible(kind, flt, rest.tolist())
        return out

    def _large_scope(self, found_lineage: list[tuple]) -> bool:
        """Whether the search's turn scope held at least :data:`LARGE_SCOPE_VECTORS` turns at the
        last search (the statistics as they stand, not brought up to date: a guess of the dense
        scan's cost; a search with no conversation counts every turn)."""
        docs = self._doc_stats.get("turn")
        if docs is None or docs.n < LARGE_SCOPE_VECTORS:
            return False
        if not found_lineage:
            return True
        return len(docs.rows(found_lineage[0])) >= LARGE_SCOPE_VECTORS

    # -- the query vectors kept between searches ----------------------------------------------
    def _cached_query_vectors(self, embedder: Embedder, texts: list[str]) -> np.ndarray | None:
        """The vectors of ``texts`` (:meth:`_query_texts`) computed by an earlier search with this
        embedder, or ``None``."""
        key = tuple(texts)
        with self._query_vectors_lock:
            if self._query_vectors_of is not embedder:
                return None
            hit = self._query_vectors.get(key)
            if hit is not None:
                self._query_vectors.move_to_end(key)
            return hit

    def _keep_query_vectors(self, embedder: Embedder, texts: list[str], vectors: np.ndarray) -> None:
        """Keep ``vectors`` (one row per text of ``texts``, computed together) for later searches
        of the same texts; the least recently searched are dropped past :data:`QUERY_VECTORS_CACHED`."""
        if QUERY_VECTORS_CACHED <= 0 or len(vectors) != len(texts):
            return
        with self._query_vectors_lock:
            if self._query_vectors_of is not embedder:
                self._query_vectors.clear()
                self._query_vectors_of = embedder
            self._query_vectors[tuple(texts)] = np.array(vectors, dtype=np.float32, copy=True)
            while len(self._query_vectors) > QUERY_VECTORS_CACHED:
                self._query_vectors.popitem(last=False)

    def _dense_top(self, kind: str, qvec: np.ndarray, flt: SearchScope, n: int, private: bool) -> dict[int, float]:
        """``{id: cosine}`` of the ``n`` nearest vectors among the scope's items: the storage's
        nearest-neighbour search (:meth:`VectorStorage.nearest`: on SQLite the incremental
        in-memory index, on PostgreSQL pgvector's HNSW index when present); ``private`` inside a
        caller's transaction (what it reads past the kept vectors is not kept)."""
        return dict(self.storage.vectors.nearest(kind, qvec, flt, limit=n, private=private))

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        kinds: Iterable[str] = ITEM_KINDS,
        conversation_id: str | None = None,
        lineage: Sequence[tuple[str, int | None]] | None = None,
        namespace: str | None = None,
        type: str | None = None,
        key: str | None = None,
        since: float | None = None,
        until: float | None = None,
        reader_labels: Iterable[str] | None = None,
        mode: str = "hybrid",
        fusion: str = "linear",
        bm25_weight: float = BM25_WEIGHT,
        neighbour_weight: float = NEIGHBOUR_WEIGHT,
        min_similarity: float = MIN_SIMILARITY,
        candidates: int | None = None,
        progress: Callable[[int, int], None] | None = None,
        date_weight: float = DATE_WEIGHT,
        date_tau_days: float = DATE_TAU_DAYS,
        speaker_weight: float = SPEAKER_WEIGHT,
        session_weight: float = SESSION_WEIGHT,
        length_weight: float = LENGTH_WEIGHT,
        time_weight: float = TIME_WEIGHT,
    ) -> list[SearchHit]:
        """The best ``limit`` items for ``query``.

        Hybrid scoring (``fusion="linear"``, the default, measured on LoCoMo by
        ``bench/locomo_recall.py``): ``bm25_weight × bm25 / max(bm25) + (1 - bm25_weight) × cosine``,
        where each turn's two signals first gain ``neighbour_weight ×`` those of the turns just before
        and after it in its conversation (an answer often sits next to the turn that names the
        topic). ``fusion="rrf"`` uses reciprocal rank fusion of the two lists instead.

        :param query: natural-language text, searched literally (no FTS syntax).
        :param limit: how many hits (>= 1).
        :param kinds: any of ``"turn"``, ``"card"``, ``"record"``.
        :param conversation_id: only turns this conversation sees (its lineage) and its family's
            cards; records have no conversation and are skipped.
        :param lineage: that conversation's lineage, root first (``[(conversation_id,
            last_seq_or_None)]``, as :class:`~memfold.window.parts.ConversationRef` holds it), when
            the caller knows it; read from storage otherwise.
        :param namespace: only this namespace (records; turns and cards via their conversation).
        :param type: only records of this type (``semantic``, ...); turns and cards are skipped.
        :param key: only records in this slot.
        :param since: / :param until: inclusive time range in clock units (turn ``created_at``,
            record ``written_at``, card end of span).
        :param reader_labels: the labels the reader holds; items requiring others are never
            returned. ``None`` skips the label check (trusted caller).
        :param mode: ``"hybrid"`` (default), ``"bm25"`` or ``"dense"``. Without an embedder,
            hybrid falls back to BM25.
        :param fusion: ``"linear"`` (default) or ``"rrf"``.
        :param bm25_weight: share of the normalised BM25 score in linear fusion, in [0, 1].
        :param neighbour_weight: how much of the adjacent turns' signals a turn gains (0 disables).
        :param min_similarity: cosine an item needs when BM25 did not find it (hybrid mode), so a
            query about something absent returns nothing rather than noise.
        :param candidates: how deep BM25 looks per kind (default ``max(100, 5 × limit)``).
        :param progress: ``progress(done, total)`` while embedding new items before the search.
        :param date_weight: / :param date_tau_days: / :param speaker_weight: / :param session_weight: /
            :param length_weight: / :param time_weight: the turn priors of
            :mod:`memfold.memory.recall_priors` (a date the question names, a speaker it names, the
            best candidate of a turn's session, the turn's length, a time word in a turn when the
            question asks when), each a share of the best
            candidate's score; 0 turns one off. Linear fusion in ``hybrid`` and ``bm25`` modes only
            (``dense`` is the embedding ranker alone).
        :returns: hits, best first.
        :raises InvalidInput: for an empty query, a bad limit, kind, mode or weight.
        :raises ConversationNotFound: for an unknown ``conversation_id``.
        :raises EmbeddingError: in ``dense`` mode without an embedder, or when the database holds
            vectors of another model.
        """
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("search query must be non-empty text")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInput(f"search limit must be a positive integer, got {limit!r}")
        if mode not in MODES:
            raise InvalidInput(f"unknown search mode {mode!r}: use one of {', '.join(MODES)}")
        if fusion not in ("linear", "rrf"):
            raise InvalidInput(f"unknown fusion {fusion!r}: use 'linear' or 'rrf'")
        for name, value, low, high in (("bm25_weight", bm25_weight, 0.0, 1.0), ("min_similarity", min_similarity, -1.0, 1.0),
                                       ("neighbour_weight", neighbour_weight, 0.0, math.inf)):
            if isinstance(value, bool) or not isinstance(value, Real) or not low <= float(value) <= high \
                    or not math.isfinite(float(value)):
                raise InvalidInput(f"{name} must be a number in [{low:g}, {high:g}], got {value!r}")
        if candidates is not None and (isinstance(candidates, bool) or not isinstance(candidates, int) or candidates < 1):
            raise InvalidInput(f"candidates must be a positive integer (how deep each ranker looks), got {candidates!r}")
        check_progress(progress)
        if lineage is not None and (isinstance(lineage, (str, bytes)) or not isinstance(lineage, Sequence) or not all(
                isinstance(m, (tuple, list)) and len(m) == 2 and isinstance(m[0], str)
                and (m[1] is None or (isinstance(m[1], int) and not isinstance(m[1], bool))) for m in lineage)):
            raise InvalidInput(f"lineage must be a list of (conversation_id, last_seq or None) pairs, root first, "
                               f"got {lineage!r}: leave it out to have it read from storage")
        if isinstance(kinds, (str, bytes)) or not isinstance(kinds, Iterable):
            raise InvalidInput(f"kinds must be a list of item kinds such as ['turn', 'card'], got {kinds!r}")
        kinds = tuple(kinds)
        for kind in kinds:
            if kind not in ITEM_KINDS:
                raise InvalidInput(f"unknown item kind {kind!r}: use one of {', '.join(ITEM_KINDS)}")
        if type is not None and type not in RECORD_TYPES:
            raise InvalidInput(f"unknown record type {type!r}: use one of {', '.join(RECORD_TYPES)}")
        if isinstance(reader_labels, (str, bytes, dict)):
            raise InvalidInput(f"reader_labels must be a list of labels, got {reader_labels!r}: "
                               f"pass a list such as ['secret']")
        labels = None if reader_labels is None else check_labels(reader_labels, "reader_labels")
        for name, value in (("date_weight", date_weight), ("date_tau_days", date_tau_days),
                            ("speaker_weight", speaker_weight), ("session_weight", session_weight),
                            ("length_weight", length_weight), ("time_weight", time_weight)):
            if isinstance(value, bool) or not isinstance(value, Real) or not 0.0 <= float(value) < math.inf:
                raise InvalidInput(f"{name} must be a number >= 0, got {value!r}")
        for name, value in (("since", since), ("until", until)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, Real)
                                      or not math.isfinite(float(value))):
                raise InvalidInput(f"{name} must be a time in clock units (ticks, or POSIX seconds on the "
                                   f"system clock), got {value!r}; MemFold.search also takes an aware datetime")
        if since is not None and until is not None and since > until:
            raise InvalidInput(f"since ({since!r}) is after until ({until!r}): nothing could match")
        embedder = self.embedder if mode != "bm25" else None
        if mode == "dense" and embedder is None:
            raise EmbeddingError("dense search needs an embedder: pass embedder=... to MemFold")
        depth = candidates or max(100, 5 * limit)

        self._forget_erased()  # before anything read from the statistics (the speakers' names too)
        found_lineage: list[tuple] = []

        known_lineage = None if lineage is None else tuple(reversed(tuple(lineage)))  # storage's order: leaf first

        def lineage_of() -> tuple:
            if not found_lineage:
                chain = known_lineage or self.fulltext.conversation_lineage(conversation_id)
                if not chain:
                    raise ConversationNotFound(f"no conversation {conversation_id!r} to search in")
                found_lineage.append(tuple(chain))
            return found_lineage[0]

        filters = {}
        for kind in kinds:
            flt = self._scope(kind, conversation_id=conversation_id, lineage=lineage_of, namespace=namespace, type=type,
                              key=key, since=since, until=until, reader_labels=labels)
            if flt is not None:
                filters[kind] = flt
        qvec = None
        # inside a caller's transaction (it may roll back) the vector stores keep nothing they read
        private = self.storage.in_transaction
        qvecs: dict[str, np.ndarray] = {}  # a kind's own query vector, when it differs from qvec
        job = None
        early: dict[str, dict[int, float]] = {}  # dense lists scanned while the worker embedded new items
        if embedder is not None:
            # the query (one or two texts: _query_texts) and any item without a vector yet (the
            # turn just appended) in one MiniLM pass, computed in a worker thread while BM25 ranks
            # below; nothing dense runs before job.wait() has stored the new vectors (issue 18, point 2)
            qtexts = self._query_texts(query, tuple(filters),
                                       conversations=[c for c, _ in found_lineage[0]] if found_lineage else None)
            # a query searched before keeps its vectors (QUERY_VECTORS_CACHED): only the items are embedded
            known_qvecs = self._cached_query_vectors(embedder, qtexts)
            # in a large scope the query is embedded alone first, so the dense ranker scans while the
            # worker embeds the new items (the scan costs about as much as embedding a turn)
            first = self.overlap_embedding and "turn" in filters and self._large_scope(found_lineage)
            job = self.index.prepare(embedder, qtexts if known_qvecs is None else [], kinds=tuple(filters),
                                     progress=progress, background=self.overlap_embedding, texts_first=first)

        # one consistent read of ids, BM25, vectors and hits, even while other threads write (issue 12.4).
        # Cost follows the scope and k (issue 18, point 1): each ranker gives its best `depth`
        # candidates; only they, and the turns next to them, are scored, checked and read.
        tokens = query_tokens(query) if mode != "dense" else []
        # the document statistics are brought up to date first, outside the snapshot: a settled
        # read (on PostgreSQL it waits for the writers in flight, which a snapshot cannot see end)
        current = {kind: self._docs(kind) for kind in filters}
        known = {kind: docs.n for kind, docs in current.items()}  # every item below is in the snapshots
        priors = dict(date_weight=float(date_weight), date_tau_days=float(date_tau_days),
                      speaker_weight=float(speaker_weight), session_weight=float(session_weight),
                      length_weight=float(length_weight), time_weight=float(time_weight))
        use_priors = "turn" in filters and fusion == "linear" and mode != "dense" and (
            date_weight or speaker_weight or session_weight or length_weight or time_weight)
        facets = self._facets.refresh(self.storage, indexed_mark=current["turn"].mark,
                                      private=self.storage.in_transaction) if use_priors else None
        read: dict[str, dict[int, Any]] = {}  # items already read on the way, by kind
        # the storage state before the snapshot: a small scope's words kept since a search at the
        # same state need no check (_scope_terms_of); none inside a caller's transaction (it may roll back)
        state = self.storage.meta.state_version() if tokens and not self.storage.in_transaction else None
        ranked: dict[str, tuple[np.ndarray, dict[int, float]]] = {}
        if job is not None:
            # BM25 in a snapshot of its own while the worker embeds; the dense ranker, the checks
            # and the hits read a second one, taken after the new vectors are stored. A small
            # scope's texts read for BM25 are not reused for the hits (read them where they are checked)
            with self.storage.snapshot():
                ranked = self._bm25_phase(filters, current, tokens, depth, True, {}, state, known)
            if (known_qvecs is not None or job.texts_first) and job.items and self.overlap_embedding:
                # the query's vectors are known (kept, or embedded alone first) while the worker
                # embeds the new items: the dense ranker scans the vectors stored already meanwhile,
                # and the new items join its list once stored (_with_new_items): the same list as
                # one scan after the store
                vectors = known_qvecs if known_qvecs is not None else job.text_vectors()
                if known_qvecs is None:
                    self._keep_query_vectors(embedder, qtexts, vectors)
                qvec, qvecs = self._as_query_vectors(query, qtexts, vectors)
                early = {kind: self._dense_top(kind, qvecs.get(kind, qvec), filters[kind], depth, private)
                         for kind in ranked}
                job.wait()
            else:
                vectors = job.wait()
                if known_qvecs is None and not job.items:
                    # only vectors of the query embedded alone are kept: a kept one is what embedding
                    # it again gives (packed with new items, float32 rounds it a little differently)
                    self._keep_query_vectors(embedder, qtexts, vectors)
                qvec, qvecs = self._as_query_vectors(query, qtexts, vectors if known_qvecs is None else known_qvecs)
        with self.storage.snapshot():
            per_kind = []
            # the erasure count this snapshot reads: while it is the one the statistics were started
            # at, a known turn's liveness is read from them (_visible); never inside a caller's
            # transaction (``private``, read before: inside the snapshot in_transaction is always true)
            erasures = _UNREAD if private or "turn" not in filters else self.storage.meta.get(ERASURES_KEY)
            if job is None:
                ranked = self._bm25_phase(filters, current, tokens, depth, False, read, state, known)
            for kind, flt in filters.items():
                docs = current[kind]
                if kind not in ranked:
                    continue
                rows, bm = ranked[kind]
                if kind in early:
                    dense = self._with_new_items(kind, early[kind], job.item_ids(kind), qvecs.get(kind, qvec), flt,
                                                 depth, private)
                else:
                    dense = (self._dense_top(kind, qvecs.get(kind, qvec), flt, depth, private)
                             if qvec is not None else {})
                # hybrid reads BM25 HYBRID_BM25_DEPTH times deeper, but only its best `depth` are
                # candidates: the rest keep their own score only as a candidate's neighbour or a
                # dense hit
                cands = list(dict.fromkeys([*(bm if qvec is None else list(bm)[:depth]), *dense]))
                prev = nxt = None
                if kind == "turn" and neighbour_weight and cands:
                    prev, nxt = docs.neighbours(cands)
                    picked = set(cands)
                    around = [i for i in [*prev.values(), *nxt.values()] if i is not None and i not in picked]
                    cands = list(dict.fromkeys([*cands, *around]))
                    p2, n2 = docs.neighbours([i for i in around if i not in prev or i not in nxt])
                    prev.update({k: v for k, v in p2.items() if k not in prev})
                    nxt.update({k: v for k, v in n2.items() if k not in nxt})
                every = set(cands)
                if prev is not None:
                    every |= {i for i in [*prev.values(), *nxt.values()] if i is not None}
                live = self._visible(kind, flt, every, docs, known[kind], erasures)
                cands = [i for i in cands if i in live]
                if not cands:
                    continue
                sims = {}
                if qvec is not None:
                    sims = self.storage.vectors.similarity(kind, qvecs.get(kind, qvec), sorted(every & live),
                                                           private=private)
                per_kind.append((kind, cands, bm, sims, prev, nxt, live))
            if not per_kind:
                return []
            # normalised by the best BM25 among the items checked visible (live, in scope, labels held):
            # an item this reader may not see, or one erased since BM25 ranked, never sets the scale
            # (a hidden turn holding a query word made every visible score collapse: an oracle for its words)
            bm_max = max((max((p[2][i] for i in p[6] if i in p[2]), default=0.0) for p in per_kind), default=0.0) or 1.0

            keys: list[tuple[str, Any]] = []
            fused_all, bm_all, sim_all, ok_all = [], [], [], []
            for kind, cands, bm, sims, prev, nxt, live in per_kind:
                raw = np.array([bm.get(i, 0.0) for i in cands])
                cos = np.array([sims.get(i, 0.0) for i in cands])
                has_vec = np.array([i in sims for i in cands], dtype=bool)
                bn, sm = raw / bm_max, cos
                if prev is not None:
                    # each candidate's live neighbours (None when absent or not visible), found once
                    # for both signals; a missing one adds 0.0, as the visible ones' sum always did
                    before = [p if p in live else None for p in map(prev.get, cands)]
                    after = [q if q in live else None for q in map(nxt.get, cands)]
                    bn = bn + neighbour_weight * np.array([bm.get(p, 0.0) + bm.get(q, 0.0)
                                                           for p, q in zip(before, after)]) / bm_max
                    if qvec is not None:
                        sm = cos + neighbour_weight * np.array([sims.get(p, 0.0) + sims.get(q, 0.0)
                                                                for p, q in zip(before, after)])
                if qvec is None:
                    fused, ok = bn, raw > 0
                elif mode == "dense":
                    fused, ok = sm, has_vec
                else:
                    fused = bm25_weight * bn + (1.0 - bm25_weight) * sm
                    ok = (raw > 0) | (has_vec & (cos >= min_similarity))
                keys.extend((kind, int(i)) for i in cands)
                fused_all.append(fused)
                bm_all.append(raw)
                sim_all.append(cos if qvec is not None else np.full(len(cands), np.nan))
                ok_all.append(ok)
            fused = np.concatenate(fused_all)
            bm = np.concatenate(bm_all)
            sims = np.concatenate(sim_all)
            ok = np.concatenate(ok_all)
            if facets is not None:
                fused = self._with_priors(query, keys, fused, ok, facets, priors, current["turn"],
                                          read.setdefault("turn", {}))
            # ties broken by (kind, id) so the order does not depend on how candidates were gathered
            tie = np.arange(len(keys))
            tie[np.lexsort(([k[1] for k in keys], [ITEM_KINDS.index(k[0]) for k in keys]))] = np.arange(len(keys))
            bm25_list = [keys[i] for i in np.lexsort((tie, -bm)) if bm[i] > 0]
            dense_list = [] if qvec is None else [keys[i] for i in np.lexsort((tie, -np.nan_to_num(sims, nan=-2.0)))]
            if fusion == "rrf" and mode == "hybrid" and qvec is not None:
                allowed = {keys[i] for i in np.flatnonzero(ok)}
                ranked = [(k, s) for k, s in rrf_fuse([bm25_list[:depth], dense_list[:depth]]) if k in allowed]
            else:
                order = [i for i in np.lexsort((tie, -fused)) if ok[i]]
                ranked = [(keys[i], float(fused[i])) for i in order]
            bm25_rank = {k: r for r, k in enumerate(bm25_list, start=1)}
            dense_rank = {k: r for r, k in enumerate(dense_list, start=1)}
            sim_of = {k: float(sims[i]) for i, k in enumerate(keys)} if qvec is not None else {}
            top = ranked[:limit]
            items = {kind: self._hit_items(kind, [i for (k, i), _ in top if k == kind], read.get(kind, {}))
                     for kind in dict.fromkeys(k for (k, _), _ in top)}  # one read per kind, not per hit
            return [self._hit(items[kind][item_id], score, bm25_rank.get((kind, item_id)),
                              dense_rank.get((kind, item_id)), sim_of.get((kind, item_id)))
                    for (kind, item_id), score in top]

    def _query_texts(self, query: str, kinds: Sequence[str], *,
                     conversations: Sequence[Any] | None) -> list[str]:
        """The texts to embed for the query: ``[query]``, or ``[query, turn text]`` when turns are
        ranked by another one (``[turn text]`` when only turns are searched). Turns are ranked by
        the query without the names of the speakers of ``conversations`` (``None``: every
        speaker) (:func:`~.query_analysis.without_names`), since a turn's vector leaves its
        speaker's label out (:func:`~.embeddings.turn_embedding_text`): the vector carries
        *what*, BM25 and the speaker prior *who* (LoCoMo dev recall@10, the names-free question:
        hybrid LOO 0.784 -> 0.801, dense alone 0.457 -> 0.625). Cards and records keep the whole
        query (their text names people). :meth:`_as_query_vectors` reads the vectors back."""
        turn_text = query
        if "turn" in kinds:
            speakers = self._facets.refresh(self.storage, private=self.storage.in_transaction).speakers(conversations)
            turn_text = without_names(query, speakers)
        if turn_text == query:
            return [query]
        if all(kind == "turn" for kind in kinds):
            return [turn_text]
        return [query, turn_text]

    @staticmethod
    def _as_query_vectors(query: str, texts: list[str], vectors: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """``(query vector, {"turn": vector})`` from the vectors of :meth:`_query_texts`'s texts:
        ``{}`` when turns are ranked by the query's own vector."""
        if len(texts) == 2:
            return vectors[0], {"turn": vectors[1]}
        if texts[0] != query:
            return vectors[0], {"turn": vectors[0]}
        return vectors[0], {}

    def _with_priors(self, query: str, keys: list[tuple[str, Any]], fused: np.ndarray, ok: np.ndarray,
                     facets: TurnFacets, priors: dict, docs: "_Docs", read: dict[int, Any]) -> np.ndarray:
        """``fused`` with the turn priors (:func:`~.recall_priors.apply_turn_priors`) added to the
        turn candidates; the date prior only when the clock counts POSIX seconds; the length prior
        from ``docs``, the turns' statistics (length in index tokens); the time prior from the
        texts of its few candidates, read in this search's snapshot into ``read`` (``{id:
        SearchItem}``, the turns read already), where the hits find them."""
        turn_at = [i for i, k in enumerate(keys) if k[0] == "turn"]
        if not turn_at or not ok.any():
            return fused
        seconds = getattr(self.clock, "unit", None) == "seconds"
        now = float(self.clock.now()) if seconds else None
        at = np.asarray(turn_at)
        fused = fused.copy()
        ids = [keys[i][1] for i in turn_at]
        pos = docs.position(np.asarray(ids, dtype=np.int64))
        lengths = np.where(pos >= 0, docs.lengths[np.maximum(pos, 0)], np.nan) if docs.n else np.full(len(ids), np.nan)

        def texts(item_ids: list[int]) -> dict[int, str]:
            read.update(self._hit_items("turn", item_ids, read))
            return {i: read[i].text for i in item_ids if i in read}
        fused[at] = apply_turn_priors(query, ids, fused[at], ok[at], facets, top=float(fused[ok].max()), now=now,
                                      dates=seconds, lengths=lengths, texts=texts, **priors)
        return fused

    def _hit_items(self, kind: str, item_ids: list[int], read: dict[int, Any]) -> dict[int, Any]:
        """The hits' items (``{id: SearchItem}``): those read already in this search's snapshot
        (a small scope's texts) from ``read``, the others in one read."""
        missing = [i for i in item_ids if i not in read]
        out = self.fulltext.items(kind, missing) if missing else {}
        out.update((i, read[i]) for i in item_ids if i in read)
        return out

    @staticmethod
    def _hit(item: Any, score: float, b: int | None, d: int | None, sim: float | None) -> SearchHit:
        kind = item.kind
        return SearchHit(kind=kind, id=item.id, score=score, text=item.text, conversation_id=item.conversation_id,
                         namespace=item.namespace, type=item.type, key=item.key, time=item.time, bm25_rank=b,
                         dense_rank=d, similarity=sim, labels=item.labels)
