"""Priors that re-rank a search's turn candidates by what the question says about *when* and *who*,
and by the session a candidate sits in (issue 18 point 7).

A search (:mod:`memfold.memory.search`) first scores its candidates by their words and meaning
(BM25 and cosine, each turn helped by its neighbours). Three priors are then added, each scaled by
the best candidate's score so its weight means the same whatever the query:

* **date** — the question names a date, month or year (:func:`~.query_analysis.date_windows`;
  "yesterday", "last week" too when the clock is a system clock): a turn whose time lies inside
  gains ``date_weight``, one outside gains ``date_weight × exp(-days away / date_tau_days)``.
* **speaker** — the question names exactly one of the candidates' speakers (a turn's ``name``):
  that speaker's turns gain ``speaker_weight``.
* **length** — a turn gains ``length_weight × min(its length / LENGTH_FULL, 1)`` (its length in
  index tokens, the BM25 length): on LoCoMo a turn of 60 or more tokens is evidence for some
  question 12 times as often as one of under 10 (0.61 vs 0.05), where BM25's length
  normalisation and a long text's diluted vector both favour the short ones ("Wow, great!").
* **time** — the question asks *when* or *how long* (:func:`~.query_analysis.asks_when`): of the
  best :data:`TIME_TOP` candidates so far, those whose text says a time word
  (:func:`~.query_analysis.mentions_time`: "yesterday", "last week", "two years ago") gain
  ``time_weight``. The answer to "When did Melanie paint a sunrise?" is the turn that dates it
  ("I painted that lake sunrise last year"); on LoCoMo dev 81% of such questions' evidence turns
  say a time word, 17% of all turns. Only those candidates' texts are read (one read, reused
  for the hits).
* **session** — a turn gains ``session_weight ×`` the best score among the candidates of its
  session (a run of a conversation's turns with no gap over :data:`SESSION_GAP` seconds between
  them): the evidence of a question clusters in the session that talks about it, the coarse level
  of a coarse-to-fine search.

What each turn needs (its time, speaker and session) is kept in memory by :class:`TurnFacets`,
filled at the first search and extended with only the turns written since, like the search's
document statistics; a search looks up only its candidates. The weights were chosen by
leave-one-conversation-out cross-validation on LoCoMo (``bench/locomo_recall.py``).
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .query_analysis import DAY, asks_when, date_windows, mentions_time, named_speakers

#: a turn more than this many seconds after the previous turn of its conversation starts a session
SESSION_GAP = 3600.0
#: the priors' default weights (each a share of the best candidate's score; LoCoMo dev, chosen by
#: leave-one-conversation-out cross-validation in ``bench/locomo_recall.py``)
DATE_WEIGHT = 0.8
DATE_TAU_DAYS = 10.0
SPEAKER_WEIGHT = 0.3
SESSION_WEIGHT = 0.4
#: the length prior (round 7): a turn of ``LENGTH_FULL`` index tokens or more gains ``LENGTH_WEIGHT``
#: (LoCoMo dev hybrid recall@10, leave-one-conversation-out: 0.801 -> 0.806 in ``bench/locomo_ideas.py``,
#: 0.7925 -> 0.798 with every prior's weight re-fit per fold; 0.799 -> 0.808 end to end)
LENGTH_WEIGHT = 0.3
LENGTH_FULL = 40.0
#: the time prior (round 8): of a "when" question's best ``TIME_TOP`` candidates, those saying a time
#: word gain ``TIME_WEIGHT`` (LoCoMo dev hybrid recall@10 in ``bench/locomo_ideas.py --only r8_time``:
#: 0.808 -> 0.812 leave-one-conversation-out, 0.798 -> 0.805 with every prior's weight re-fit per
#: fold; every fold chose 0.1; the best 30 give the same figure as every candidate; end to end
#: 0.808 -> 0.812, BM25 alone 0.737 -> 0.742)
TIME_WEIGHT = 0.1
TIME_TOP = 30


class TurnFacets:
    """Each indexed turn's time, speaker and session, in memory (about 24 bytes a turn plus the
    distinct speaker names), read incrementally: :meth:`refresh` reads only turns above the last
    id seen (:meth:`FullTextStorage.turn_facets`)."""

    def __init__(self) -> None:
        self.n = 0
        self.mark = 0
        self._ids = np.zeros(0, dtype=np.int64)
        self._times = np.zeros(0, dtype=np.float64)
        self._speakers = np.zeros(0, dtype=np.int32)
        self._sessions = np.zeros(0, dtype=np.int64)
        self.names: list[str] = []
        self._code: dict[str, int] = {}
        self._last: dict[Any, tuple[float, int]] = {}  # conversation -> (last time, its session)
        self._speakers_of: dict[Any, set[int]] = {}  # conversation -> codes of its speakers
        self._next_session = 0
        self._lock = threading.Lock()

    ids = property(lambda self: self._ids[:self.n])

    def refresh(self, storage: Any, *, indexed_mark: int | None = None, private: bool = False) -> "TurnFacets":
        """Bring the facets up to date from ``storage`` (a settled read of the new turns).
        ``indexed_mark``, the largest turn id the caller knows is indexed (the search's document
        statistics have just read it), skips the read when no turn above :attr:`mark` exists.
        ``private`` (a read inside the caller's transaction, whose turns may roll back): the new
        turns go into a copy, returned, and these facets are left as they were."""
        if indexed_mark is not None and indexed_mark <= self.mark:
            return self
        with storage.settled(), self._lock:
            rows = storage.fulltext.turn_facets(self.mark)  # only ids above the mark
            if not private:
                self._add(rows)
                return self
            if not rows:
                return self
            out = self.copy()
            out._add(rows)
            return out

    def copy(self) -> "TurnFacets":
        """A copy that shares nothing this object changes (what :meth:`refresh` adds a
        transaction's turns to); call with the lock held or no writer about."""
        out = TurnFacets()
        for name in ("n", "mark", "_next_session"):
            setattr(out, name, getattr(self, name))
        for name in ("_ids", "_times", "_speakers", "_sessions"):
            setattr(out, name, getattr(self, name)[:self.n].copy())
        out.names, out._code, out._last = list(self.names), dict(self._code), dict(self._last)
        out._speakers_of = {c: set(codes) for c, codes in self._speakers_of.items()}
        return out

    def _add(self, rows: Sequence[tuple[int, Any, float, str | None]]) -> None:
        if not rows:
            return
        need = self.n + len(rows)
        if need > len(self._ids):
            cap = max(need, 2 * len(self._ids), 1024)
            for name in ("_ids", "_times", "_speakers", "_sessions"):
                arr = getattr(self, name)
                grown = np.zeros(cap, dtype=arr.dtype)
                grown[:self.n] = arr[:self.n]
                setattr(self, name, grown)
        for k, (item_id, conversation, when, name) in enumerate(rows, start=self.n):
            when = float(when)
            last = self._last.get(conversation)
            if last is None or when - last[0] > SESSION_GAP:
                session = self._next_session
                self._next_session += 1
            else:
                session = last[1]
            self._last[conversation] = (when, session)
            if name:
                code = self._code.get(name)
                if code is None:
                    code = self._code[name] = len(self.names)
                    self.names.append(name)
                self._speakers_of.setdefault(conversation, set()).add(code)
            else:
                code = -1
            self._ids[k], self._times[k], self._speakers[k], self._sessions[k] = int(item_id), when, code, session
        self.n = need
        self.mark = int(rows[-1][0])

    def speakers(self, conversations: Sequence[Any] | None = None) -> list[str]:
        """The speaker names of the turns of ``conversations`` (``None``: of every turn), in the
        order first seen."""
        if conversations is None:
            return list(self.names)
        codes = set().union(*(self._speakers_of.get(c, set()) for c in conversations)) if conversations else set()
        return [self.names[c] for c in sorted(codes)]

    def lookup(self, ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """For ``ids``: (known?, time, speaker code or -1, session or -1)."""
        ids = np.asarray(ids, dtype=np.int64)
        if not self.n or not len(ids):
            z = np.zeros(len(ids))
            return z.astype(bool), z, np.full(len(ids), -1), np.full(len(ids), -1)
        at = np.clip(np.searchsorted(self.ids, ids), 0, self.n - 1)
        known = self._ids[at] == ids
        return (known, np.where(known, self._times[at], np.nan), np.where(known, self._speakers[at], -1),
                np.where(known, self._sessions[at], -1))


def date_prior(times: np.ndarray, windows: Sequence[tuple[float, float]], tau_days: float) -> np.ndarray:
    """1 for a time inside one of ``windows``, ``exp(-days to the nearest / tau_days)`` outside, 0
    for an unknown (NaN) time."""
    best = np.zeros(len(times))
    t = np.nan_to_num(times, nan=np.inf)
    for start, end in windows:
        days = np.maximum(0.0, np.maximum(start - t, t - end)) / DAY
        with np.errstate(invalid="ignore", over="ignore"):
            best = np.maximum(best, np.where(np.isfinite(days), np.exp(-days / max(tau_days, 1e-9)), 0.0))
    return best


def length_prior(lengths: np.ndarray) -> np.ndarray:
    """``min(length / LENGTH_FULL, 1)`` of each length in index tokens (0 for an unknown, NaN, one)."""
    return np.minimum(np.nan_to_num(np.asarray(lengths, dtype=np.float64), nan=0.0) / LENGTH_FULL, 1.0)


def time_prior(ids: Sequence[int], scores: np.ndarray, ok: np.ndarray,
               texts: Callable[[list[int]], Mapping[int, str]]) -> np.ndarray:
    """1 for each of the best :data:`TIME_TOP` candidates that may be returned (``ok``, by
    ``scores``, ties by id) whose text (``texts``) says a time word, else 0; only their texts are read."""
    out = np.zeros(len(ids))
    pool = np.flatnonzero(ok)
    if not len(pool):
        return out
    ids_arr = np.asarray(ids, dtype=np.int64)
    best = pool[np.lexsort((ids_arr[pool], -scores[pool]))][:TIME_TOP]
    got = texts([int(ids_arr[i]) for i in best])
    for i in best:
        text = got.get(int(ids_arr[i]))
        if text and mentions_time(text):
            out[i] = 1.0
    return out


def apply_turn_priors(query: str, ids: Sequence[int], scores: np.ndarray, ok: np.ndarray, facets: TurnFacets, *,
                      top: float, now: float | None, dates: bool, date_weight: float = DATE_WEIGHT,
                      date_tau_days: float = DATE_TAU_DAYS, speaker_weight: float = SPEAKER_WEIGHT,
                      session_weight: float = SESSION_WEIGHT, length_weight: float = LENGTH_WEIGHT,
                      lengths: np.ndarray | None = None, time_weight: float = TIME_WEIGHT,
                      texts: Callable[[list[int]], Mapping[int, str]] | None = None) -> np.ndarray:
    """``scores`` of the turn candidates ``ids`` with the date, speaker, length and session priors added
    (module doc). ``ok`` marks the candidates that may be returned (only they lend their score to
    a session); ``top`` is the best such score of the whole search; ``dates`` says whether turn
    times are POSIX seconds (a system clock), without which no date prior applies; ``now`` is
    the clock's time for "yesterday"-style expressions (``None``: absolute dates only);
    ``lengths`` the candidates' lengths in index tokens (``None``: no length prior); ``texts(ids)``
    reads the texts of some of ``ids`` (``{id: text}``; ``None``: no time prior). The length and
    time priors are added before the session prior, so a session's best candidate counts them."""
    scores = np.asarray(scores, dtype=np.float64)
    if lengths is None:
        length_weight = 0.0
    if texts is None:
        time_weight = 0.0
    if not len(ids) or not (date_weight or speaker_weight or session_weight or length_weight or time_weight):
        return scores
    top = top if top > 0 else 1.0
    known, times, speakers, sessions = facets.lookup(ids)
    out = scores.copy()
    if date_weight and dates:
        windows = date_windows(query, now=now)
        if windows:
            out = out + date_weight * top * date_prior(times, windows, date_tau_days)
    if speaker_weight:
        present = np.unique(speakers[speakers >= 0]).tolist()
        named = named_speakers(query, [facets.names[c] for c in present])
        if len(named) == 1:
            out = out + speaker_weight * top * (speakers == facets._code[named[0]])
    if length_weight:
        out = out + length_weight * top * length_prior(lengths)
    if time_weight and asks_when(query):
        out = out + time_weight * top * time_prior(ids, out, ok, texts)
    if session_weight:
        live = ok & known & (sessions >= 0)
        if live.any():
            labels, at = np.unique(np.where(known, sessions, -1), return_inverse=True)
            best = np.zeros(len(labels))  # each session's best candidate that may be returned (>= 0)
            np.maximum.at(best, at[live], np.maximum(out[live], 0.0))
            out = out + session_weight * np.where(known, best[at], 0.0)
    return out
