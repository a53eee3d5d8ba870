"""Issue 18 point 7: the search's date, speaker and session priors, and the question analysis behind
them. Each search test also runs with the prior turned off and checks the order flips, so it
fails without the feature."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

import memfold
from memfold.memory.errors import InvalidInput
from memfold.memory.query_analysis import absolute_windows, date_windows, named_speakers, relative_windows
from memfold.memory.recall_priors import LENGTH_FULL, LENGTH_WEIGHT, SESSION_GAP, TurnFacets, date_prior, length_prior


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=timezone.utc)


def ts(*args) -> float:
    return utc(*args).timestamp()


# -- question analysis ---------------------------------------------------------------------------

def test_absolute_dates_days_months_and_years():
    day = (ts(2023, 11, 16), ts(2023, 11, 17))
    assert absolute_windows("What did Tim say about his injury on 16 November, 2023?") == [day]
    assert absolute_windows("as mentioned on November 16, 2023") == [day]
    assert absolute_windows("the book he finished on 16th nov 2023") == [day]
    assert absolute_windows("logged 2023-11-16 by the bot") == [day]
    assert absolute_windows("What workshop did Audrey sign up for in May 2023?") == [(ts(2023, 5, 1), ts(2023, 6, 1))]
    assert absolute_windows("the December 2023 recital") == [(ts(2023, 12, 1), ts(2024, 1, 1))]
    assert absolute_windows("what charity event did John organize in 2024?") == [(ts(2024, 1, 1), ts(2025, 1, 1))]
    # a named day hides its month and year; nothing without a date; an impossible day is no window
    assert absolute_windows("on 8 May, 2023 (in 2023)") == [(ts(2023, 5, 8), ts(2023, 5, 9))]
    assert absolute_windows("When did Caroline go to the support group?") == []
    assert absolute_windows("on 31 February 2023") == []
    assert absolute_windows("he has 2023 stamps") == []


def test_relative_dates_need_now():
    now = ts(2023, 5, 17, 12)  # a Wednesday
    assert relative_windows("what did I buy yesterday?", now) == [(ts(2023, 5, 16), ts(2023, 5, 17))]
    assert relative_windows("what did I buy last week?", now) == [(ts(2023, 5, 8), ts(2023, 5, 15))]
    assert relative_windows("and last month?", now) == [(ts(2023, 4, 1), ts(2023, 5, 1))]
    assert relative_windows("what about last weekend", now) == [(ts(2023, 5, 13), ts(2023, 5, 15))]
    (start, end), = relative_windows("the call three days ago", now)
    assert start <= ts(2023, 5, 14, 12) <= end and end - start == 86_400
    assert date_windows("what did I buy last week?") == []  # no clock time: absolute dates only
    assert date_windows("what did I buy last week?", now=now) == [(ts(2023, 5, 8), ts(2023, 5, 15))]


def test_named_speakers_are_whole_words():
    assert named_speakers("What did Caroline research?", ["Melanie", "Caroline"]) == ["Caroline"]
    assert named_speakers("What did Carol say?", ["Caroline"]) == []
    assert named_speakers("Did Mel and caroline meet?", ["Caroline", "Mel"]) == ["Caroline", "Mel"]
    assert named_speakers("ask Ana Lu", ["Ana Lu", "Lu"]) == ["Ana Lu", "Lu"]


def test_date_prior_is_one_inside_and_decays_outside():
    day = 86_400.0
    got = date_prior(np.array([5 * day, 12 * day, np.nan]), [(4 * day, 6 * day)], tau_days=2.0)
    assert got[0] == 1.0 and got[1] == pytest.approx(np.exp(-3.0)) and got[2] == 0.0


def test_turn_facets_sessions_and_speakers():
    facets = TurnFacets()
    facets._add([(1, "c", 0.0, "Ann"), (2, "c", 10.0, "Bo"), (3, "d", 20.0, None),
                 (4, "c", 10.0 + SESSION_GAP + 1, "Ann"), (5, "d", 30.0, "Bo")])
    known, times, speakers, sessions = facets.lookup([1, 2, 4, 5, 3, 99])
    assert known.tolist() == [True] * 5 + [False]
    assert [facets.names[c] if c >= 0 else None for c in speakers[:5]] == ["Ann", "Bo", "Ann", "Bo", None]
    assert sessions[0] == sessions[1] != sessions[2]  # the gap starts a new session in "c"
    assert sessions[3] == sessions[4] != sessions[0]  # "d" is its own session


# -- the priors in search ------------------------------------------------------------------------

@pytest.fixture
def db_path(backend_target):
    """Every search test here runs on SQLite and on PostgreSQL (conftest's ``backend_target``)."""
    return backend_target


@pytest.fixture
def replay_mf(db_path):
    clock = memfold.ReplayClock(utc(2023, 5, 17, 12))  # system-kind: times are POSIX seconds
    mf = memfold.MemFold(db_path, clock=clock, token_counter="words", embedder=None)
    yield mf
    mf.close()


def _ids(hits):
    return [h.id for h in hits]


def test_last_week_finds_the_turn_of_that_week_not_one_a_month_earlier(replay_mf):
    mf, now = replay_mf, utc(2023, 5, 17, 12)
    conv = mf.conversation("shop")
    old, filler, recent = conv.append_many([
        {"role": "user", "content": "I bought running shoes, good running shoes", "created_at": now - timedelta(days=35)},
        {"role": "user", "content": "the weather was fine all month", "created_at": now - timedelta(days=20)},
        {"role": "user", "content": "I bought running shoes", "created_at": now - timedelta(days=8)},
    ])
    query = "Which running shoes did I buy last week?"
    assert _ids(mf.search(query, conversation_id="shop", kinds=["turn"], limit=2))[0] == recent
    # without the date prior the month-old turn (more matching words) ranks first
    assert _ids(mf.search(query, conversation_id="shop", kinds=["turn"], limit=2, date_weight=0))[0] == old
    # an absolute date works the same way, and picks the old turn when it names the old day
    day = (now - timedelta(days=35)).strftime("%d %B %Y")
    assert _ids(mf.search(f"running shoes bought on {day}", conversation_id="shop", kinds=["turn"],
                          limit=2))[0] == old


def test_a_named_speaker_ranks_their_turn_first(replay_mf):
    mf = replay_mf
    conv = mf.conversation("chat")
    at = utc(2023, 5, 1)
    mel, caroline, *_ = conv.append_many([
        {"role": "user", "name": "Melanie", "content": "I painted a sunset, painted the sunset", "created_at": at},
        {"role": "assistant", "name": "Caroline", "content": "I painted a sunset too", "created_at": at},
        *({"role": "user", "name": "Melanie", "content": f"the kids had fun, day {i}", "created_at": at}
          for i in range(4)),
    ])
    query = "What did Caroline paint? A sunset?"
    assert _ids(mf.search(query, conversation_id="chat", kinds=["turn"], limit=2, speaker_weight=0)) == [mel, caroline]
    assert _ids(mf.search(query, conversation_id="chat", kinds=["turn"], limit=2)) == [caroline, mel]
    # a turn appended after a search is known to the next one (the facets read only new turns)
    (later,) = conv.append_many([{"role": "assistant", "name": "Caroline", "content": "a sunset again",
                                  "created_at": at + timedelta(minutes=1)}])
    assert later in _ids(mf.search("Caroline sunset", conversation_id="chat", kinds=["turn"], limit=3))
    # naming both speakers (or neither) adds nothing
    assert _ids(mf.search("Did Caroline or Melanie paint a sunset?", conversation_id="chat", kinds=["turn"],
                          limit=1)) == [mel]


def test_the_session_that_talks_about_it_lends_its_turns_weight(replay_mf):
    mf = replay_mf
    conv = mf.conversation("trips")
    day1, day9 = utc(2023, 4, 1), utc(2023, 4, 9)
    ids = conv.append_many([
        {"role": "user", "content": "we went hiking once", "created_at": day1},                       # session 1
        {"role": "user", "content": "lunch was soup", "created_at": day1},
        {"role": "user", "content": "dinner was pasta", "created_at": day1},
        {"role": "user", "content": "the mountain trip: mountain hiking with boots", "created_at": day9},  # session 2
        {"role": "user", "content": "lunch was bread", "created_at": day9},
        {"role": "user", "content": "dinner was rice", "created_at": day9},
        {"role": "user", "content": "we went hiking twice", "created_at": day9},
    ])
    first_session, strong, later_same_session = ids[0], ids[3], ids[6]
    query = "the mountain hiking"
    off = _ids(mf.search(query, conversation_id="trips", kinds=["turn"], limit=3, session_weight=0,
                         neighbour_weight=0))
    on = _ids(mf.search(query, conversation_id="trips", kinds=["turn"], limit=3, neighbour_weight=0))
    assert off[0] == on[0] == strong
    assert off.index(first_session) < off.index(later_same_session)  # a tie: the older id first
    assert on.index(later_same_session) < on.index(first_session)    # the mountain session lends weight


def test_no_date_prior_on_a_logical_clock(db_path):
    mf = memfold.MemFold(db_path, clock=memfold.LogicalClock(), token_counter="words", embedder=None)
    conv = mf.conversation("c")
    a, b = conv.append_many([{"role": "user", "content": "shoes shoes"}, {"role": "user", "content": "shoes"}])
    # ticks are not POSIX seconds: a date in the question changes nothing
    assert _ids(mf.search("shoes on 1 January 1970", conversation_id="c", kinds=["turn"])) == [a, b]
    mf.close()


def test_length_prior_grows_with_length_up_to_full():
    out = length_prior(np.array([0, 10, LENGTH_FULL / 2, LENGTH_FULL, 3 * LENGTH_FULL, np.nan]))
    assert out.tolist() == [0.0, 10 / LENGTH_FULL, 0.5, 1.0, 1.0, 0.0]


def test_a_long_turn_outranks_a_short_one_that_says_as_much(replay_mf):
    """BM25's length normalisation ranks a two-word turn above a long one with the same match;
    the length prior lifts the long one (an evidence turn is rarely a short reply)."""
    mf = replay_mf
    conv = mf.conversation("talk")
    long_text = ("we finally adopted an alpaca from the farm near the lake last spring and she now lives in "
                 "the paddock behind the house with two goats, a very old horse and far too many chickens")
    short, long_, _ = conv.append_many([{"role": "user", "content": "alpaca, really?"},
                                        {"role": "user", "content": long_text},
                                        {"role": "user", "content": "the weather was fine"}])
    query, only = "the alpaca", dict(conversation_id="talk", kinds=["turn"], limit=2, neighbour_weight=0, session_weight=0)
    assert _ids(mf.search(query, length_weight=0, **only)) == [short, long_]
    assert _ids(mf.search(query, length_weight=1.0, **only)) == [long_, short]
    # on by default: the default search scores as LENGTH_WEIGHT does, the long turn closer to the short one
    default, off = mf.search(query, **only), mf.search(query, length_weight=0, **only)
    assert [h.score for h in default] == [h.score for h in mf.search(query, length_weight=LENGTH_WEIGHT, **only)]
    assert default[1].score - default[0].score > off[1].score - off[0].score


@pytest.mark.parametrize("name", ["date_weight", "date_tau_days", "speaker_weight", "session_weight", "length_weight"])
def test_bad_prior_weights_are_refused(replay_mf, name):
    replay_mf.conversation("c").append({"role": "user", "content": "hello"})
    for bad in (-0.1, float("nan"), "high", True):
        with pytest.raises(InvalidInput, match=name):
            replay_mf.search("hello", conversation_id="c", **{name: bad})


def test_bm25_alone_keeps_a_hits_neighbour_ranked_past_the_depth(db_path, monkeypatch):
    """Without an embedder BM25 looks BM25_ONLY_DEPTH times deeper, so a weak match next to the
    best one keeps its own score (and its neighbour support) instead of being dropped."""
    from memfold.memory import search as search_module

    mf = memfold.MemFold(db_path, clock=memfold.LogicalClock(), token_counter="words", embedder=None)
    conv = mf.conversation("c")
    medium, filler = "alpaca alpaca", "the weather was fine"
    texts = [medium, filler, medium, filler, medium, filler, medium, filler, "alpaca alpaca alpaca",
             "an alpaca and a great many other words that make this turn long", *[filler] * 10]
    ids = conv.append_many([{"role": "user", "content": t} for t in texts])
    weak = ids[9]
    hits = _ids(mf.search("alpaca", conversation_id="c", kinds=["turn"], limit=6, candidates=2, mode="bm25"))
    assert weak in hits
    monkeypatch.setattr(search_module, "BM25_ONLY_DEPTH", 1)
    hits = _ids(mf.search("alpaca", conversation_id="c", kinds=["turn"], limit=6, candidates=2, mode="bm25"))
    assert weak not in hits
    mf.close()


def test_hybrid_keeps_the_bm25_match_of_a_candidate_past_three_times_the_depth(db_path, monkeypatch):
    """A hybrid search reads BM25 HYBRID_BM25_DEPTH times deeper than its candidates: a hit's
    neighbour that matches the question only weakly (one word in a long turn, a cosine under
    min_similarity) keeps its BM25 match and stays a hit, which a 3 x deep read dropped."""
    from memfold.memory import search as search_module

    mf = memfold.MemFold(db_path, clock=memfold.LogicalClock(), token_counter="words", embedder="hashing")
    conv = mf.conversation("c")
    weak_text = ("a zebra was somewhere in the long list of animals we saw on that trip along with lions, "
                 "giraffes, hippos, elephants, baboons, flamingos, hyenas, warthogs and one sleepy leopard")
    texts = ["zebra zebra zebra", weak_text, *["zebra zebra, the weather was fine"] * 12, *["nothing here"] * 5]
    ids = conv.append_many([{"role": "user", "content": t} for t in texts])
    weak = ids[1]
    hits = mf.search("zebra", conversation_id="c", kinds=["turn"], limit=20, candidates=2)
    assert weak in [h.id for h in hits] and next(h for h in hits if h.id == weak).similarity < search_module.MIN_SIMILARITY
    monkeypatch.setattr(search_module, "HYBRID_BM25_DEPTH", 3)
    assert weak not in [h.id for h in mf.search("zebra", conversation_id="c", kinds=["turn"], limit=20, candidates=2)]
    mf.close()
