"""Issue 18 point 7, round 8: the time prior. A question that asks *when* lifts, among its best
candidates, the turns that say a time word ("last year", "yesterday"): the turn that dates what the
question asks about. Each search test also runs with the prior off and checks the order flips."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pytest

import memfold
from memfold.memory.errors import InvalidInput
from memfold.memory.query_analysis import asks_when, mentions_time
from memfold.memory.recall_priors import TIME_TOP, TIME_WEIGHT, TurnFacets, apply_turn_priors, time_prior


def test_asks_when():
    for q in ("When did Melanie paint a sunrise?", "how long has Tim played the piano?",
              "In which year did she move?", "What year was that?", "what month did they meet"):
        assert asks_when(q), q
    for q in ("What did Melanie paint?", "Whenever you like", "Where did they go?", "How many pets?"):
        assert not asks_when(q), q


def test_mentions_time_whole_words_only():
    for t in ("I went there yesterday.", "Two weeks ago we met", "LAST WEEK was busy", "a year-long trip",
              "my_week", "Recently, yes", "this weekend!"):
        assert mentions_time(t), t
    for t in ("weekly meetings", "I love Chicago", "the yearbook", "no time word here", ""):
        assert not mentions_time(t), t


def test_time_prior_reads_only_the_best_candidates():
    n = TIME_TOP + 10
    ids = list(range(100, 100 + n))
    scores = np.arange(n, 0, -1, dtype=float)  # ids[0] best
    ok = np.ones(n, bool)
    ok[1] = False  # may not be returned: never read, never lifted
    asked = []

    def texts(item_ids):
        asked.extend(item_ids)
        return {i: "we met last week" for i in item_ids}
    out = time_prior(ids, scores, ok, texts)
    expect = [i for k, i in enumerate(ids) if k != 1][:TIME_TOP]
    assert asked == expect
    assert out.tolist() == [1.0 if i in expect else 0.0 for i in ids]
    # a text without a time word, or one not found, gains nothing
    assert time_prior(ids, scores, ok, lambda item_ids: {item_ids[0]: "no date here"}).sum() == 0
    # apply_turn_priors asks only for a "when" question
    asked.clear()
    kw = dict(top=1.0, now=None, dates=False, date_weight=0, speaker_weight=0, session_weight=0, length_weight=0,
              texts=texts)
    same = apply_turn_priors("What did we do?", ids, scores, ok, TurnFacets(), **kw)
    assert asked == [] and same.tolist() == scores.tolist()
    lifted = apply_turn_priors("When did we meet?", ids, scores, ok, TurnFacets(), **kw)
    assert np.allclose(lifted - scores, TIME_WEIGHT * out)


@pytest.fixture
def replay_mf(backend_target):
    mf = memfold.MemFold(backend_target, clock=memfold.ReplayClock(datetime(2023, 5, 17, 12, tzinfo=timezone.utc)),
                         token_counter="words", embedder=None)
    yield mf
    mf.close()


def test_a_when_question_lifts_the_turn_that_dates_it(replay_mf):
    mf = replay_mf
    conv = mf.conversation("art")
    plain, dated, _ = conv.append_many([
        {"role": "user", "name": "Melanie", "content": "I love to paint a sunrise, a sunrise is my favourite to paint"},
        {"role": "user", "name": "Melanie", "content": "I painted that sunrise last year, by the lake"},
        {"role": "assistant", "name": "Caroline", "content": "the weather was fine"},
    ])
    only = dict(conversation_id="art", kinds=["turn"], limit=2, neighbour_weight=0, session_weight=0,
                length_weight=0)
    query = "When did Melanie paint a sunrise?"
    assert [h.id for h in mf.search(query, time_weight=0, **only)] == [plain, dated]
    hits = mf.search(query, time_weight=1.0, **only)
    assert [h.id for h in hits] == [dated, plain]
    assert hits[0].text == "I painted that sunrise last year, by the lake"  # the text read for the prior serves the hit
    # on by default: the default search scores as TIME_WEIGHT does, the dated turn closer to the other
    default, off = mf.search(query, **only), mf.search(query, time_weight=0, **only)
    assert [h.score for h in default] == [h.score for h in mf.search(query, time_weight=TIME_WEIGHT, **only)]
    assert default[0].score - default[1].score < off[0].score - off[1].score
    # a question that does not ask when is unchanged
    what = "What did Melanie paint? A sunrise?"
    assert [h.score for h in mf.search(what, **only)] == [h.score for h in mf.search(what, time_weight=0, **only)]


def test_bad_time_weight_is_refused(replay_mf):
    replay_mf.conversation("c").append({"role": "user", "content": "hello"})
    for bad in (-0.1, float("nan"), "high", True):
        with pytest.raises(InvalidInput, match="time_weight"):
            replay_mf.search("hello", conversation_id="c", time_weight=bad)
