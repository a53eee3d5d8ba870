"""Typed stores: write, get, list, status changes, namespacing, and every bad input of issue 2 point 4."""

import math

import pytest

import memfold
from memfold import InvalidInput, MemFold, RecordNotFound


def count_rows(mf, table):
    return mf.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


@pytest.mark.parametrize("record_type", memfold.RECORD_TYPES)
def test_write_and_get_each_type(mf, record_type):
    record = mf.memory.write("acme/dana", record_type, f"a {record_type} record", importance=0.4)
    got = mf.memory.get(record.id)
    assert got == record
    assert got.type == record_type
    assert got.status == "active"
    assert got.importance == 0.4
    assert got.access_count == 0


def test_record_has_every_design_field(mf, clock):
    clock.advance(3)
    record = mf.memory.write(
        "acme/dana", "semantic", "Dana prefers email contact", key="user.contact_preference",
        importance=0.6, labels=["pii", "crm"], provenance=["turn:1"], pinned=True, metadata={"src": "test"},
    )
    d = record.to_dict()
    for field in ("namespace", "type", "key", "content", "importance", "created_at", "last_access_at",
                  "access_count", "status", "supersedes", "superseded_by", "provenance", "labels", "pinned"):
        assert field in d
    assert record.created_at == 3.0 and record.written_at == 3.0
    assert record.labels == ("crm", "pii")
    assert record.provenance == ("turn:1",)
    assert record.pinned is True
    assert record.metadata == {"src": "test"}


def test_list_is_namespaced_and_active_by_default(mf):
    a = mf.memory.write("tenant-a", "semantic", "fact a")
    b = mf.memory.write("tenant-b", "semantic", "fact b")
    c = mf.memory.write("tenant-a", "episodic", "event c")
    assert [r.id for r in mf.memory.list("tenant-a")] == [a.id, c.id]
    assert [r.id for r in mf.memory.list("tenant-a", "semantic")] == [a.id]
    mf.memory.set_status(a.id, "retired", cause="test")
    assert [r.id for r in mf.memory.list("tenant-a")] == [c.id]
    assert [r.id for r in mf.memory.list("tenant-a", include_inactive=True)] == [a.id, c.id]
    assert [r.id for r in mf.memory.list(status="retired")] == [a.id]
    assert [r.id for r in mf.memory.list("tenant-b")] == [b.id]


def test_status_change_keeps_bytes_and_is_logged(mf, clock):
    record = mf.memory.write("ns", "episodic", "user asked about returns")
    clock.advance(2)
    changed = mf.memory.set_status(record.id, "consumed", cause="consolidation run 1")
    assert changed.status == "consumed"
    assert changed.content == "user asked about returns"
    events = mf.memory.events(record_id=record.id)
    assert [(e.kind, e.at, e.cause) for e in events] == [("write", 0.0, "write"), ("consume", 2.0, "consolidation run 1")]
    assert events[1].details == {"from": "active", "to": "consumed"}


def test_typed_store_view(mf):
    semantic = mf.store("semantic", "acme/dana")
    record = semantic.write("Dana likes tea")
    assert record.type == "semantic" and record.namespace == "acme/dana"
    assert semantic.list() == [record]
    episodic = mf.store("episodic", "acme/dana")
    with pytest.raises(RecordNotFound):
        episodic.get(record.id)
    with pytest.raises(InvalidInput, match="unknown record type"):
        mf.store("factual")


def test_get_missing_record(mf):
    with pytest.raises(RecordNotFound, match="no memory record with id 99"):
        mf.memory.get(99)
    with pytest.raises(KeyError):  # RecordNotFound also refines KeyError
        mf.memory.get(99)


BAD_INPUTS = [
    ({"type": "factual"}, "unknown record type 'factual'"),
    ({"content": ""}, "content is empty"),
    ({"content": "   \n\t "}, "content is empty or whitespace only"),
    ({"content": 42}, "content must be a string, got int"),
    ({"content": b"bytes"}, "content must be a string, got bytes"),
    ({"content": None}, "content must be a string"),
    ({"importance": 1.5}, "importance 1.5 is outside"),
    ({"importance": -0.1}, "importance -0.1 is outside"),
    ({"importance": math.nan}, "importance is NaN"),
    ({"importance": math.inf}, "outside"),
    ({"importance": "high"}, "importance must be a number"),
    ({"importance": True}, "importance must be a number"),
    ({"content": "bad \ud800 surrogate"}, "lone surrogate"),
    ({"content": "nul\x00byte"}, "NUL byte"),
    ({"namespace": ""}, "namespace is empty"),
    ({"namespace": "  "}, "namespace is empty"),
    ({"key": ""}, "key is empty"),
    ({"key": "   "}, "key is empty"),
    ({"namespace": None}, "namespace must be a string"),
    ({"labels": "pii"}, "labels must be a list"),
    ({"labels": [""]}, "label in labels is empty"),
]


@pytest.mark.parametrize("override,message", BAD_INPUTS, ids=[m for _, m in BAD_INPUTS])
def test_bad_input_is_rejected_and_writes_nothing(mf, override, message):
    args = {"namespace": "ns", "type": "semantic", "content": "fine", "key": "k", "importance": 0.5}
    args.update(override)
    before = (count_rows(mf, "records"), count_rows(mf, "events"))
    with pytest.raises(InvalidInput, match=message.replace("(", r"\(").replace(")", r"\)")) as info:
        mf.memory.write(args.pop("namespace"), args.pop("type"), args.pop("content"), **args)
    assert isinstance(info.value, memfold.MemfoldError)
    assert (count_rows(mf, "records"), count_rows(mf, "events")) == before


def test_unknown_status_is_rejected(mf):
    record = mf.memory.write("ns", "semantic", "x")
    with pytest.raises(InvalidInput, match="unknown status 'gone'"):
        mf.memory.set_status(record.id, "gone", cause="test")
    assert mf.memory.get(record.id).status == "active"


def test_records_cannot_be_deleted(mf):
    record = mf.memory.write("ns", "semantic", "x")
    import sqlite3

    with pytest.raises(sqlite3.DatabaseError, match="never deleted"):
        mf.db.execute("DELETE FROM records WHERE id = ?", [record.id])
    assert mf.memory.get(record.id).content == "x"


def test_event_log_is_append_only(mf):
    mf.memory.write("ns", "semantic", "x")
    import sqlite3

    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        mf.db.execute("UPDATE events SET cause = 'rewritten'")


def test_records_survive_reopen(db_path, clock):
    with MemFold(db_path, clock=clock, token_counter="words") as first:
        record = first.memory.write("ns", "procedural", "apply a 10% restocking fee after 30 days", importance=0.8)
    with MemFold(db_path, token_counter="words") as second:
        assert second.memory.get(record.id) == record
        assert second.clock.kind == "logical"
