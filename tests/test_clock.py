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
