"""Round 11 QA (r11qa): defects found by following the README on a fresh clone and attacking every
entry point. Real databases and memfold's own code paths; deterministic parts (logical clock, word
counter) unless a test says otherwise."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from memfold import LogicalClock, MemFold
from memfold.cli import cli
from memfold.memory.errors import ClockError, InvalidInput, MemfoldError


def _open(path, **kw):
    kw = {"clock": LogicalClock(), "token_counter": "words", "embedder": None, "secrets": "off",
          "preload_embedder": False, **kw}
    return MemFold(path, **kw)


# -- the clock: a tick past 2**53 bricked the file -------------------------------------------------

@pytest.mark.parametrize("ticks", [2**53 + 1, 10**400])
def test_advancing_a_logical_clock_past_two_to_the_53_is_refused_and_the_file_still_opens(tmp_path, ticks):
    """``mf.advance_clock(10**400)`` was accepted and stored the tick in the file; from then on
    every open of that database (every CLI command) died with ``OverflowError: cannot convert float
    infinity to integer``. Now the clock refuses a tick past 2**53 (what a stored time holds)
    before moving, and nothing is written."""
    db = tmp_path / "m.db"
    mf = _open(db)
    mf.conversation("c", namespace="ns").append({"role": "user", "content": "hello"})
    with pytest.raises(ClockError, match="2\\*\\*53"):
        mf.advance_clock(ticks)
    assert mf.clock.tick == 0
    mf.close()
    again = _open(db)
    assert [t.content for t in again.conversation("c", create=False).history()] == ["hello"]
    assert again.clock.tick == 0
    again.close()
    result = CliRunner().invoke(cli, ["clock", str(db), "--advance", str(ticks)])
    assert result.exit_code == 1 and result.output.count("Error:") == 1 and "2**53" in result.output, result.output
    assert CliRunner().invoke(cli, ["history", str(db), "-c", "c"]).exit_code == 0


def test_a_logical_clock_starting_past_two_to_the_53_is_refused():
    with pytest.raises(ClockError, match="at most 2\\*\\*53"):
        LogicalClock(2**54)


@pytest.mark.parametrize("clock", ["logical", "system"])
def test_a_created_at_integer_past_any_float_is_a_clock_error_naming_it(tmp_path, clock):
    """``created_at: 10**400`` (a JSONL line, an HTTP body, ``conv.append``) raised a bare
    ``OverflowError`` from ``float()``: a traceback from ``memfold ingest``, a 500 from HTTP."""
    db = tmp_path / "m.db"
    assert CliRunner().invoke(cli, ["init", str(db), "--clock", clock]).exit_code == 0
    line = '{"role": "user", "content": "x", "created_at": 1' + "0" * 400 + "}\n"
    path = tmp_path / "t.jsonl"
    path.write_text('{"role": "user", "content": "first"}\n' + line, encoding="utf-8")
    result = CliRunner().invoke(cli, ["ingest", str(db), "-c", "c", "-n", "ns", str(path)])
    assert result.exit_code == 1, result.output
    assert result.output.count("Error:") == 1 and "line 2" in result.output and "finite" in result.output
    assert not isinstance(result.exception, OverflowError)
    mf = MemFold(db, embedder=None, preload_embedder=False)
    assert mf.conversations() == []  # all or nothing: not even the conversation
    conv = mf.conversation("c2", namespace="ns")
    with pytest.raises(ClockError, match="finite"):
        conv.append({"role": "user", "content": "x", "created_at": 10**5000})  # too long even to print
    assert conv.history() == []
    mf.close()
