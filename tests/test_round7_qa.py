"""Round 7 QA: defects found by using memfold as a new user would and trying to break what changed
last (the overlapped search embedding, kept scope words, the ANN index, the regex prefilters, turns
embedded without their speaker label). Each test failed before its fix. Real SQLite files, real
processes where concurrency matters, no mocks of memfold's code, no timed assertions."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import subprocess
import sys

import pytest

import memfold
from memfold import LogicalClock, MemfoldError

TEXTS = ["the zebra ate grass", "zebra stripes are black and white and very striking indeed",
         "I like giraffes", "giraffe necks are long, longer than a zebra", "unicorns are rare",
         "the weather is fine"]


def _open(path, embedder="hashing", **kw):
    return memfold.MemFold(path, clock=LogicalClock(), token_counter="words", embedder=embedder,
                           preload_embedder=False, **kw)


def _hits(mf, query="zebra giraffe", **kw):
    return [(h.kind, h.id, round(h.score, 9)) for h in mf.search(query, limit=10, **kw)]


def _fill(path):
    mf = _open(path)
    conv = mf.conversation("c1", namespace="ns")
    for text in TEXTS:
        conv.append({"role": "user", "content": text})
    return mf


# -- an erased turn leaves the BM25 statistics of the searches after it -----------------------------

@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_erased_turn_leaves_scope_statistics_in_process(tmp_path, mode):
    """A long-lived searcher counted an erased turn in its scope's size and mean length (and its
    speaker and time in the turn priors) forever: its scores after the erasure differed from a
    fresh process's over the same file."""
    path = tmp_path / "a.db"
    mf = _fill(path)
    _hits(mf, mode=mode, conversation_id="c1")  # the in-memory statistics now hold every turn
    mf.erase(turn_ids=[2])
    after = _hits(mf, mode=mode, conversation_id="c1")
    fresh = _open(path)
    assert after == _hits(fresh, mode=mode, conversation_id="c1")
    assert all(i != 2 for _, i, _ in after)


def _erase_in_child(path, turn_id):
    mf = _open(path)
    mf.erase(turn_ids=[turn_id])
    mf.close()


def test_erased_turn_leaves_scope_statistics_across_processes(tmp_path):
    """The same when another process erases: the searcher's next search scores as a fresh one."""
    path = tmp_path / "a.db"
    mf = _fill(path)
    _hits(mf, mode="bm25", conversation_id="c1")
    _hits(mf, mode="bm25")  # the file-wide scope too
    proc = mp.get_context("spawn").Process(target=_erase_in_child, args=(str(path), 4))
    proc.start()
    proc.join()
    assert proc.exitcode == 0
    fresh = _open(path)
    for kw in ({"conversation_id": "c1"}, {}):
        assert _hits(mf, mode="bm25", **kw) == _hits(fresh, mode="bm25", **kw)


# -- bad search parameters: a MemfoldError naming the problem, nothing written ------------------------

@pytest.mark.parametrize("kw", [
    {"kinds": None}, {"kinds": 5},
    {"bm25_weight": "x"}, {"bm25_weight": None},
    {"neighbour_weight": "x"}, {"neighbour_weight": float("nan")}, {"neighbour_weight": -1.0},
    {"min_similarity": "x"}, {"min_similarity": float("nan")},
    {"candidates": -1}, {"candidates": "x"}, {"candidates": 2.5}, {"candidates": True},
])
def test_bad_search_parameters_are_invalid_input(tmp_path, kw):
    mf = _fill(tmp_path / "a.db")
    mf.search("zebra")  # every vector stored: a search writes nothing more
    before = mf.storage.meta.state_version()
    name = next(iter(kw))
    with pytest.raises(memfold.InvalidInput, match=name):
        mf.search("zebra", **kw)
    assert mf.storage.meta.state_version() == before
