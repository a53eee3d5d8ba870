"""The seeded randomized rights checker (issue 15, point 9): 2,000 reader/operation pairs, 0 violations.

Every operation that returns text (context, search, describe, expand, history, export, memory
reads, the protected listing, the recall tool calls) on a root conversation and its fork, for
readers holding different labels; see :mod:`memfold.replay.rights`. The benchmark
(``bench/bench_rights.py``) runs 10,000 pairs.
"""

from __future__ import annotations

import pytest

from memfold.replay.rights import build_world, check, revoked_exposure


def test_two_thousand_random_pairs_show_nothing_a_reader_may_not_see(tmp_path):
    world = build_world(15, tmp_path)
    try:
        result = check(world, 2000, 15)
    finally:
        world.mf.close()
    assert result["violations"] == 0, result["first_violations"]
    assert result["markers_shown"] > 500  # the checker saw plenty: it can fail
    assert all(n > 100 for n in result["by_operation"].values())


def test_the_checker_catches_a_violation(tmp_path):
    """A checker that cannot fail is a defect: an owner's context checked as a no-label reader's is one."""
    world = build_world(3, tmp_path)
    try:
        conv = world.mf.conversation("root")
        text = "\n".join(m["content"] or "" for m in conv.context(budget=2000).messages)
        import re

        markers = set(re.findall(r"\bZv[a-z]{3}\b", text))
        assert any(not world.allowed(m, "root", (), via="conversation") for m in markers)
        fork = "\n".join(t.content for t in world.mf.conversation("fork").history())
        assert not any(world.allowed(m, "root", None, via="conversation")
                       for m in re.findall(r"\bZv[a-z]{3}\b", fork) if world.sources[m].conversation == "fork")
    finally:
        world.mf.close()


@pytest.mark.parametrize("seed", [1, 2])
def test_revoked_content_is_never_exposed_later(tmp_path, seed):
    result = revoked_exposure(seed, turns=60, directory=tmp_path)
    assert result["outputs"] > 20 and result["revoked_sources"] > 5
    assert result["exposed"] == 0, result
