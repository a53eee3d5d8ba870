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

The two signals are fused linearly, ``0.4 × bm25 / max(bm25) + 0.6 × cosine``, after each turn
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

import math
from numbers import Real
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from .embeddings import ITEM_KINDS, EmbeddingIndex, Embedder
from .errors import ConversationNotFound, EmbeddingError, InvalidInput
from .fts import literal_terms
from .records import RECORD_TYPES
from .validation import check_labels
from .storage.base import Storage
from .storage.rows import SearchScope

#: reciprocal rank fusion constant (Cormack et al. 2009)
RRF_K = 60
#: search modes
MODES = ("hybrid", "bm25", "dense")
#: share of normalised BM25 in linear fusion (tuned on LoCoMo dev: 0.3-0.5 all within 0.01 recall@10)
BM25_WEIGHT = 0.4
#: share of the adjacent turns' signals a turn gains (LoCoMo dev: 0 -> 0.3 raises hybrid recall@10 by ~0.05)
NEIGHBOUR_WEIGHT = 0.3
#: cosine a hit needs when BM25 did not find it (all-MiniLM-L6-v2: unrelated sentences score ~0-0.15)
MIN_SIMILARITY = 0.2

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
                 *, index: EmbeddingIndex | None = None) -> None:
        self.storage = storage
        self.fulltext = self.storage.fulltext
        self._embedder = embedder
        self.index = index or EmbeddingIndex(self.storage)

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

    # -- rankers ---------------------------------------------------------------------------
    def _bm25(self, kind: str, match: str, scope: SearchScope, n: int) -> list[tuple[Any, float]]:
        return self.fulltext.rank(kind, match, scope, n)

    def _bm25_scoped(self, kind: str, terms: list[str], allowed: np.ndarray, n: int) -> list[tuple[Any, float]]:
        """BM25 with term statistics of the filtered scope ``allowed`` (sorted ids):
        ``[(id, score > 0)]``, best first.

        FTS5's ``bm25()`` weighs a word by how rare it is in the *whole* table. Searching inside one
        conversation, that makes the conversation's own participants' names look rare (they never
        occur elsewhere) although they are in half of its turns, and they swamp the words that
        matter (LoCoMo dev, 6 conversations in one file: hybrid recall@10 0.67 with table-wide
        rarity, 0.72 with rarity inside the conversation). So each word is matched alone and its
        table-wide IDF is swapped for the scope's: ``score = Σ_w bm25_w × idf_scope(w) / idf_table(w)``,
        with FTS5's ``idf = max(1e-6, ln((N - n + 0.5) / (n + 0.5)))`` (Robertson & Zaragoza 2009).
        """
        n_table = self.fulltext.indexed_count(kind)
        totals = np.zeros(len(allowed))
        for term in terms:
            rows = self.fulltext.postings(kind, term)
            if not rows:
                continue
            hit_ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            scores = np.fromiter((r[1] for r in rows), dtype=np.float64, count=len(rows))
            at = np.clip(np.searchsorted(allowed, hit_ids), 0, len(allowed) - 1)
            inside = allowed[at] == hit_ids
            n_in = int(inside.sum())
            if not n_in:
                continue
            idf_table = max(1e-6, math.log((n_table - len(rows) + 0.5) / (len(rows) + 0.5)))
            idf_scope = max(1e-6, math.log((len(allowed) - n_in + 0.5) / (n_in + 0.5)))
            np.add.at(totals, at[inside], -scores[inside] * (idf_scope / idf_table))
        matched = np.flatnonzero(totals > 0)
        order = matched[np.lexsort((allowed[matched], -totals[matched]))][:n]
        return [(int(allowed[i]), float(totals[i])) for i in order]

    def _allowed_ids(self, kind: str, scope: SearchScope) -> np.ndarray:
        ids = self.fulltext.candidates(kind, scope)
        return np.fromiter(ids, dtype=np.int64, count=len(ids))

    def _cosines(self, kind: str, qvec: np.ndarray | None, scope: SearchScope, ids: np.ndarray, bm: np.ndarray,
                 around: tuple[np.ndarray, np.ndarray] | None, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``(cosine, has_vector)`` arrays over the allowed ``ids`` (sorted) for what fusion can rank:
        the ``n`` nearest in scope (the storage's nearest-neighbour search: pgvector's HNSW index on
        PostgreSQL, an exact in-process scan otherwise), every BM25 hit, and the turns next to
        either (``around``: their cosines smooth a neighbour's). Any other item counts as having no
        vector: below the ``n``-th nearest, with no BM25 signal beside it, it cannot outrank them."""
        sims = np.zeros(len(ids))
        has_vec = np.zeros(len(ids), dtype=bool)
        if qvec is None or len(ids) == 0:
            return sims, has_vec
        near = self.storage.vectors.nearest(kind, qvec, scope, limit=n)
        if near:
            at = np.clip(np.searchsorted(ids, [i for i, _ in near]), 0, len(ids) - 1)
            same = ids[at] == np.array([i for i, _ in near])
            sims[at[same]] = np.array([s for _, s in near])[same]
            has_vec[at[same]] = True
        want = has_vec | (bm > 0)
        if around is not None:
            rows = np.flatnonzero(want)
            beside = np.concatenate([around[0][rows], around[1][rows]])
            want[beside[beside >= 0]] = True
        ask = np.flatnonzero(want & ~has_vec)
        if len(ask):
            got = self.storage.vectors.similarity(kind, qvec, ids[ask].tolist())
            for row in ask:
                value = got.get(int(ids[row]))
                if value is not None:
                    sims[row], has_vec[row] = value, True
        return sims, has_vec

    # -- the search ------------------------------------------------------------------------
    def _turn_neighbours(self, ids: np.ndarray, scope: SearchScope) -> tuple[np.ndarray, np.ndarray]:
        """For allowed turn ids (sorted), the positions of each turn's previous and next turn in the
        same conversation (-1 when there is none among the allowed turns)."""
        rows = self.fulltext.turn_sequence(scope)
        pos = {int(i): p for p, i in enumerate(ids)}
        prev = np.full(len(ids), -1, dtype=np.int64)
        nxt = np.full(len(ids), -1, dtype=np.int64)
        for a, b in zip(rows, rows[1:]):
            if a[1] == b[1] and b[2] == a[2] + 1 and a[0] in pos and b[0] in pos:
                nxt[pos[a[0]]] = pos[b[0]]
                prev[pos[b[0]]] = pos[a[0]]
        return prev, nxt

    @staticmethod
    def _smooth(values: np.ndarray, prev: np.ndarray, nxt: np.ndarray, weight: float) -> np.ndarray:
        padded = np.append(values, 0.0)  # index -1 reads the appended zero
        return values + weight * (padded[prev] + padded[nxt])

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
        if not 0.0 <= float(bm25_weight) <= 1.0:
            raise InvalidInput(f"bm25_weight must be in [0, 1], got {bm25_weight!r}")
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
        match = bm25_query(query) if mode != "dense" else None
        terms = bm25_terms(query)
        scoped = any(v is not None for v in (conversation_id, namespace, type, key, since, until))
        qvec = None
        if embedder is not None:
            self.index.index(embedder, kinds=tuple(filters), progress=progress)
            qvec = embedder.embed_batch([query])[0]

        # one consistent read of ids, BM25, vectors and hits, even while other threads write (issue 12.4)
        with self.storage.snapshot():
            # per kind: allowed ids (sorted), raw BM25 (>= 0, 0 = not matched) and cosine arrays
            parts = []
            for kind, flt in filters.items():
                ids = np.sort(self._allowed_ids(kind, flt))
                if len(ids) == 0:
                    continue
                bm = np.zeros(len(ids))
                if match is not None:
                    if scoped:
                        found = self._bm25_scoped(kind, terms, ids, depth)
                    else:  # the whole table: FTS5's own statistics are the scope's
                        found = [(i, -score) for i, score in self._bm25(kind, match, flt, depth)]
                    if found:
                        where_ = np.searchsorted(ids, [i for i, _ in found])
                        bm[where_] = [score for _, score in found]
                around = self._turn_neighbours(ids, flt) if kind == "turn" and neighbour_weight else None
                sims, has_vec = self._cosines(kind, qvec, flt, ids, bm, around, depth)
                parts.append((kind, ids, bm, sims, has_vec, around))
            if not parts:
                return []
            bm_max = max(float(p[2].max()) for p in parts) or 1.0

            keys: list[tuple[str, Any]] = []
            fused_all, bm_all, sim_all, ok_all = [], [], [], []
            for kind, ids, bm, sims, has_vec, around in parts:
                bn = bm / bm_max
                sm = sims
                if around is not None:
                    prev, nxt = around
                    bn = self._smooth(bn, prev, nxt, neighbour_weight)
                    if qvec is not None:
                        sm = self._smooth(sims, prev, nxt, neighbour_weight)
                if qvec is None:
                    fused, ok = bn, bm > 0
                elif mode == "dense":
                    fused, ok = sm, has_vec
                else:
                    fused = bm25_weight * bn + (1.0 - bm25_weight) * sm
                    ok = (bm > 0) | (has_vec & (sims >= min_similarity))
                keys.extend((kind, int(i)) for i in ids)
                fused_all.append(fused)
                bm_all.append(bm)
                sim_all.append(sims if qvec is not None else np.full(len(ids), np.nan))
                ok_all.append(ok)
            fused = np.concatenate(fused_all)
            bm = np.concatenate(bm_all)
            sims = np.concatenate(sim_all)
            ok = np.concatenate(ok_all)

            bm25_list = [keys[i] for i in np.argsort(-bm, kind="stable") if bm[i] > 0]
            has_vec = np.concatenate([p[4] for p in parts])
            dense_list = [] if qvec is None else [keys[i] for i in np.argsort(-sims, kind="stable") if has_vec[i]]
            if fusion == "rrf" and mode == "hybrid" and qvec is not None:
                allowed = {keys[i] for i in np.flatnonzero(ok)}
                ranked = [(k, s) for k, s in rrf_fuse([bm25_list[:depth], dense_list[:depth]]) if k in allowed]
            else:
                order = [i for i in np.argsort(-fused, kind="stable") if ok[i]]
                ranked = [(keys[i], float(fused[i])) for i in order]
            bm25_rank = {k: r for r, k in enumerate(bm25_list, start=1)}
            dense_rank = {k: r for r, k in enumerate(dense_list, start=1)}
            sim_of = {k: float(sims[i]) for i, k in enumerate(keys)} if qvec is not None else {}
            top = ranked[:limit]
            items = {kind: self.fulltext.items(kind, [i for (k, i), _ in top if k == kind])
                     for kind in dict.fromkeys(k for (k, _), _ in top)}  # one read per kind, not per hit
            return [self._hit(items[kind][item_id], score, bm25_rank.get((kind, item_id)),
                              dense_rank.get((kind, item_id)), sim_of.get((kind, item_id)))
                    for (kind, item_id), score in top]

    @staticmethod
    def _hit(item: Any, score: float, b: int | None, d: int | None, sim: float | None) -> SearchHit:
        kind = item.kind
        return SearchHit(kind=kind, id=item.id, score=score, text=item.text, conversation_id=item.conversation_id,
                         namespace=item.namespace, type=item.type, key=item.key, time=item.time, bm25_rank=b,
                         dense_rank=d, similarity=sim, labels=item.labels)
