"""Scoring as pure, vectorised functions of (arrays, now, policy) (issue 3 point 1; STYLE.md rule 6)."""

import math
import random

import numpy as np
import pytest

from memfold.memory.scoring import eviction_order, rank, recency, score, score_records


def test_score_is_importance_times_recency_times_access():
    # 0.9 * 0.5 ** (6 / 4) * (1 + 0.1 * 2), written by hand
    got = score([0.9], [0.0], [2], 6.0, half_life=4.0, access_weight=0.1)
    assert got.shape == (1,)
    assert got[0] == pytest.approx(0.9 * 0.5 ** 1.5 * 1.2, rel=1e-12)


def test_recency_halves_every_half_life_and_never_exceeds_one():
    ages = np.array([0.0, 4.0, 8.0, 12.0, -3.0])
    assert recency(ages, 4.0).tolist() == pytest.approx([1.0, 0.5, 0.25, 0.125, 1.0])


def test_age_counts_from_written_at_not_from_reads():
    # Two records written at different times: only written_at and now enter the recency term.
    got = score([0.5, 0.5], [2.0, 6.0], [0, 0], 10.0, half_life=4.0, access_weight=0.0)
    assert got.tolist() == pytest.approx([0.5 * 0.25, 0.5 * 0.5])


def test_per_record_policies_broadcast():
    got = score([1.0, 1.0], [0.0, 0.0], [1, 1], 4.0, half_life=np.array([4.0, 2.0]),
                access_weight=np.array([0.0, 1.0]))
    assert got.tolist() == pytest.approx([0.5, 0.25 * 2.0])


def test_scoring_is_pure():
    args = ([0.3, 0.8], [1.0, 2.0], [0, 5], 9.0)
    first = score(*args, half_life=3.0, access_weight=0.2)
    second = score(*args, half_life=3.0, access_weight=0.2)
    assert np.array_equal(first, second)


def test_rank_orders_by_score_then_newer_id():
    scores = np.array([0.5, 0.9, 0.5, 0.1, 0.9])
    ids = np.array([10, 11, 12, 13, 14])
    assert ids[rank(scores, ids)].tolist() == [14, 11, 12, 10, 13]
    assert ids[rank(scores, ids, 3)].tolist() == [14, 11, 12]
    assert rank(scores, ids, 0).tolist() == []


def reference_order(scores, ids):
    return [i for _, i in sorted(zip(scores.tolist(), ids.tolist()), key=lambda p: (-p[0], -p[1]))]


@pytest.mark.parametrize("seed", range(20))
def test_partial_top_k_equals_full_sort_even_with_ties(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 300)
    scores = np.array([rng.choice([0.1, 0.2, 0.3, 0.25]) for _ in range(n)])  # many ties
    ids = np.array(rng.sample(range(1, 10_000), n))
    k = rng.randint(1, n + 5)
    assert ids[rank(scores, ids, k)].tolist() == reference_order(scores, ids)[:k]


def test_eviction_order_is_reverse_of_rank_over_evictable_records():
    scores = np.array([0.5, 0.2, 0.2, 0.9, 0.1])
    ids = np.array([1, 2, 3, 4, 5])
    evictable = np.array([True, True, True, True, False])  # 5 is pinned
    assert ids[eviction_order(scores, ids, evictable)].tolist() == [2, 3, 1, 4]
    full = ids[rank(scores[:4], ids[:4])].tolist()
    assert list(reversed(full)) == [2, 3, 1, 4]


def test_score_records_matches_score(mf):
    r1 = mf.memory.write("ns", "semantic", "a", importance=0.4)
    mf.clock.advance(3)
    r2 = mf.memory.write("ns", "semantic", "b", importance=0.8)
    got = score_records([r1, r2], 5.0, half_life=2.0, access_weight=0.1)
    assert got.tolist() == pytest.approx([0.4 * 2 ** -2.5, 0.8 * 2 ** -1.0])
    assert not any(math.isnan(x) for x in got)
