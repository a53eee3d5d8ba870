"""Clocks: logical ticks never go backwards; system time is aware UTC; naive datetimes are refused."""

from datetime import datetime, timedelta, timezone

import pytest

from memfold import ClockError, InvalidInput, LogicalClock, MemFold, SystemClock


def test_logical_clock_advances_and_never_goes_back():
    clock = LogicalClock()
    assert clock.now() == 0.0
    assert clock.advance(3) == 3
    assert clock.advance() == 4
    assert clock.set(10) == 10
    with pytest.raises(ClockError, match="never moves backwards"):
        clock.advance(-1)
    with pytest.raises(ClockError, match="never moves backwards"):
        clock.set(9)
    with pytest.raises(ClockError, match="integer"):
        clock.advance(1.5)
    with pytest.raises(ClockError):
        LogicalClock(-1)
    assert clock.now() == 10.0
    assert clock.format(10.0) == "t=10"


def test_system_clock_is_aware_utc():
    clock = SystemClock()
    now = clock.now_datetime()
    assert now.tzinfo is not None and now.utcoffset() == timedelta(0)
    assert abs(clock.now() - now.timestamp()) < 5


def test_naive_datetime_is_rejected():
    clock = SystemClock()
    with pytest.raises(ClockError, match="naive datetime"):
        clock.coerce(datetime(2026, 1, 1, 12, 0))
    assert isinstance(ClockError("x"), InvalidInput)


def test_aware_datetimes_compare_correctly_across_zones(db_path):
    clock = SystemClock()
    with MemFold(db_path, clock=clock, token_counter="words") as mf:
        conv = mf.conversation("c")
        plus2 = timezone(timedelta(hours=2))
        # 12:00+02:00 is 10:00 UTC: earlier than 11:00 UTC although its wall time is later
        conv.append({"role": "user", "content": "later wall time", "created_at": datetime(2026, 1, 1, 12, tzinfo=plus2)})
        conv.append({"role": "user", "content": "utc", "created_at": datetime(2026, 1, 1, 11, tzinfo=timezone.utc)})
        first, second = conv.history()
        assert first.created_at < second.created_at
        with pytest.raises(InvalidInput, match="naive datetime"):
            conv.append({"role": "user", "content": "naive", "created_at": datetime(2026, 1, 1, 12)})
        assert len(conv.history()) == 2


def test_logical_database_rejects_datetimes(mf):
    conv = mf.conversation("c")
    with pytest.raises(ClockError, match="integer ticks"):
        conv.append({"role": "user", "content": "x", "created_at": datetime(2026, 1, 1, tzinfo=timezone.utc)})


def test_a_logical_clock_passed_in_never_runs_behind_the_database(tmp_path):
    """Issue 20, point 4: reopening with LogicalClock() resumes the file's time (it used to
    restart at 0, so turn times went [100, 0]); going back afterwards is refused, naming both."""
    path = tmp_path / "logical.db"
    with MemFold(path, clock=LogicalClock(100), token_counter="words", embedder=None) as mf:
        mf.conversation("c", namespace="n").append({"role": "user", "content": "at 100"})
    clock = LogicalClock()
    with MemFold(path, clock=clock, token_counter="words", embedder=None) as mf:
        assert mf.clock is clock and clock.tick == 100
        conv = mf.conversation("c")
        conv.append({"role": "user", "content": "later"})
        assert [t.created_at for t in conv.history()] == [100.0, 100.0]
        with pytest.raises(ClockError, match=r"set\(5\) is before tick 100"):
            clock.set(5)
        mf.advance_clock(20)
    ahead = LogicalClock(500)  # a clock ahead of the file is kept as given
    with MemFold(path, clock=ahead, token_counter="words", embedder=None) as mf:
        assert mf.clock.tick == 500
    with MemFold(path, clock=LogicalClock(), token_counter="words", embedder=None) as mf:
        assert mf.clock.tick == 120  # the advanced tick is remembered too


def test_system_clock_reads_aware_iso_text():
    clock = SystemClock()
    assert clock.coerce("2026-01-31T12:00:00+01:00") == datetime(2026, 1, 31, 11, tzinfo=timezone.utc).timestamp()
    assert clock.coerce("2026-01-31T11:00:00Z") == datetime(2026, 1, 31, 11, tzinfo=timezone.utc).timestamp()
    with pytest.raises(ClockError, match="no UTC offset"):
        clock.coerce("2026-01-31T12:00:00")
    with pytest.raises(ClockError, match="not an ISO-8601 time"):
        clock.coerce("garbage")
    with pytest.raises(ClockError, match="number of ticks, not text"):
        LogicalClock().coerce("2026-01-31T12:00:00+00:00")
