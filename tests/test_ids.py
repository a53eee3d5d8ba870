"""Ids beyond SQLite's INTEGER range, zero or negative are refused with one clear error, never an
OverflowError, wherever an id enters the library."""

import pytest

from memfold import InvalidInput, StorePolicy

HUGE = 2**64


def test_record_turn_card_and_protected_ids_are_range_checked(mf):
    conv = mf.conversation("c")
    conv.append({"role": "user", "content": "hello"})
    for call, what in [
        (lambda i: mf.memory.get(i), "record id"),
        (lambda i: mf.memory.events(record_id=i), "record id"),
        (lambda i: mf.archive.get(i), "turn id"),
        (lambda i: conv.expand(f"c{i}"), "card id"),
        (lambda i: mf.protected.get(i), "protected record id"),
        (lambda i: mf.erase(turn_ids=[i]), "turn id"),
    ]:
        for bad in (HUGE, 0, -3):
            if what == "card id" and bad < 0:
                expected = "not a card or turn id: 'c-3'"  # the parser refuses a sign before the range check
            else:
                expected = f"{what} {bad} is out of range"
            with pytest.raises(InvalidInput, match=expected):
                call(bad)
    assert [t.content for t in conv.history()] == ["hello"]


def test_capacity_beyond_sqlite_is_refused():
    with pytest.raises(InvalidInput, match="more than SQLite can count"):
        StorePolicy(capacity=HUGE)
