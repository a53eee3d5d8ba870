"""SQLite storage: pragmas, schema_version, forward migrations, newer-schema refusal, clock kinds."""

import sqlite3

import pytest

from memfold import ClockError, LogicalClock, MemFold, SchemaTooNew, StorageError, SystemClock
from memfold.memory.storage.sqlite.migrations import current_version, latest_version
from memfold.memory.storage.sqlite.connection import open_database


def test_pragmas_and_schema_version(db_path):
    db = open_database(db_path, "logical")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000
    assert current_version(db) == latest_version() >= 1
    versions = [r[0] for r in db.execute("SELECT version FROM schema_version ORDER BY version")]
    assert versions == sorted(versions) and versions[0] == 1
    for table in ("meta", "conversations", "turns", "records", "events", "schema_version"):
        assert table in db.table_names()


def test_reopen_applies_nothing_twice(db_path):
    open_database(db_path, "logical").close()
    db = open_database(db_path, "logical")
    rows = db.execute("SELECT version, COUNT(*) FROM schema_version GROUP BY version HAVING COUNT(*) > 1").fetchall()
    assert rows == []


def test_newer_schema_is_refused_with_both_versions(db_path):
    db = open_database(db_path, "logical")
    newer = latest_version() + 5
    db.execute("INSERT INTO schema_version(version, name) VALUES (?, 'from the future')", [newer])
    db.close()
    with pytest.raises(SchemaTooNew) as info:
        MemFold(db_path, clock=LogicalClock())
    message = str(info.value)
    assert f"schema version {newer}" in message
    assert f"up to version {latest_version()}" in message
    assert "upgrade memfold" in message


def test_clock_kind_mismatch_is_refused(db_path):
    MemFold(db_path, clock=LogicalClock()).close()
    with pytest.raises(ClockError, match="written with a logical clock"):
        MemFold(db_path, clock=SystemClock())


def test_not_a_database_file(tmp_path):
    bogus = tmp_path / "notes.db"
    bogus.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StorageError, match="cannot"):
        MemFold(bogus, clock=LogicalClock())


def test_in_memory_database_works():
    with MemFold(None, clock=LogicalClock(), token_counter="words") as mf:
        conv = mf.conversation("c")
        conv.append({"role": "user", "content": "hello there"})
        assert [t.content for t in conv.history()] == ["hello there"]


def test_failed_write_rolls_back_everything(mf):
    from memfold.memory.storage.sqlite.connection import write_transaction

    before = mf.db.execute("SELECT COUNT(*) FROM records").fetchone()[0]
    with pytest.raises(RuntimeError):
        with write_transaction(mf.db):
            mf.memory.insert(mf.memory.validate("ns", "semantic", "first"))
            raise RuntimeError("crash in the middle")
    assert mf.db.execute("SELECT COUNT(*) FROM records").fetchone()[0] == before
    assert mf.db.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 0
