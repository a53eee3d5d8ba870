"""Erasure: content leaves the archive, records, protected rows, FTS, vectors and the file (issue 8 point 6)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import memfold
from memfold import InvalidInput, NotFound


@pytest.fixture
def db_path(backend_target):
    """Issue 17: every test here runs on SQLite and on PostgreSQL (conftest's ``backend_target``)."""
    return backend_target


SECRET = "Zebracorn passphrase violet-kumquat-9931"
SECRET_WORDS = [b"Zebracorn", b"zebracorn", b"kumquat", b"9931"]


from conftest import database_bytes as file_bytes  # noqa: E402  (the SQLite file and WAL, or PostgreSQL's table files)


@pytest.fixture
def mfh(db_path, clock):
    """A MemFold with the deterministic hashing embedder, so vectors exist for turns and records."""
    m = memfold.MemFold(db_path, clock=clock, token_counter="words", embedder="hashing")
    yield m
    m.close()


def seed(m):
    """Two conversations in one namespace, a third elsewhere; the secret sits in conversation a."""
    a = m.conversation("a", namespace="acme/dana")
    b = m.conversation("b", namespace="acme/dana")
    c = m.conversation("c", namespace="globex/lee")
    for i in range(40):
        b.append({"role": "user", "content": f"filler turn {i} about shipping and weather"})
        c.append({"role": "user", "content": f"other tenant turn {i}"})
    secret_turn = a.append({"role": "user", "content": f"Never reveal {SECRET} to anyone."})
    a.append({"role": "assistant", "content": "Understood."})
    rec = m.memory.write("acme/dana", "semantic", f"The passphrase is {SECRET}", key="user.passphrase",
                         provenance=[f"turn:{secret_turn}"])
    m.index_embeddings()
    return secret_turn, rec


def test_erased_text_is_nowhere_in_the_file_after_vacuum(mfh, db_path):
    secret_turn, rec = seed(mfh)
    before = file_bytes(db_path)
    assert all(w in before for w in SECRET_WORDS)  # the check can fail: the bytes were there
    plan = mfh.erase(conversation_id="a", cause="GDPR request 17", vacuum=True)
    assert plan.turns == [secret_turn, secret_turn + 1] and plan.records == [rec.id] and len(plan.protected) == 1
    after = file_bytes(db_path)
    assert [w for w in SECRET_WORDS if w in after] == []
    assert b"other tenant turn" in after and b"filler turn" in after  # everything else is intact


def test_erased_text_leaves_postgresqls_statistics_too(mfh, db_path):
    """PostgreSQL's ANALYZE (autovacuum runs it) samples column values into pg_statistic; an
    erasure with vacuum must not leave the erased words there."""
    if not str(db_path).startswith("postgresql"):
        pytest.skip("pg_statistic is PostgreSQL's")
    import psycopg

    seed(mfh)
    with psycopg.connect(str(db_path), autocommit=True) as conn:
        conn.execute("ANALYZE")  # what autovacuum would do after the writes
        sampled = conn.execute("SELECT count(*) FROM pg_stats WHERE array_to_string(most_common_vals::text::text[], ' ') "
                               "LIKE '%kumquat%' OR array_to_string(histogram_bounds::text::text[], ' ') LIKE '%kumquat%'"
                               ).fetchone()[0]
    assert sampled >= 1  # the check can fail: the statistics held the secret
    assert b"kumquat" in file_bytes(db_path)
    mfh.erase(conversation_id="a", cause="GDPR request 17", vacuum=True)
    assert [w for w in SECRET_WORDS if w in file_bytes(db_path)] == []


def test_erased_vectors_are_nowhere_in_the_files_after_vacuum(mfh, db_path):
    """The erased turn's vector leaves every copy: the stored bytes, and on PostgreSQL the pgvector
    column and its HNSW index too (``VACUUM FULL embeddings`` rebuilds the table and its indexes)."""
    from memfold.memory.embeddings import vector_to_blob

    secret_turn, _ = seed(mfh)
    vector = mfh.storage.vectors.get("turn", secret_turn)
    start = int(np.flatnonzero(vector)[0])
    window = vector_to_blob(vector)[4 * start:4 * start + 96]  # 24 floats from its first non-zero one
    before = file_bytes(db_path)
    copies = before.count(window)  # the check can fail: on PostgreSQL the pgvector row and its HNSW entry
    assert copies >= (2 if getattr(mfh.storage.vectors, "uses_pgvector", lambda: False)() else 1), copies
    mfh.erase(conversation_id="a", cause="GDPR request 17", vacuum=True)
    assert window not in file_bytes(db_path)


def test_erasure_blanks_rows_indexes_and_vectors(mfh):
    secret_turn, rec = seed(mfh)
    stored = mfh.storage  # the index reads go through the storage Protocols: the same on both backends
    assert stored.vectors.get("turn", secret_turn) is not None
    assert [i for i, _ in stored.fulltext.postings("turn", '"zebracorn"')] == [secret_turn]
    assert [i for i, _ in stored.fulltext.postings("record", '"zebracorn"')] == [rec.id]
    mfh.erase(turn_ids=[secret_turn])
    turn = mfh.archive.get(secret_turn)
    assert (turn.content, turn.erased, turn.sha256) == ("", True, "erased")
    assert mfh.memory.get(rec.id).status == "erased" and mfh.memory.get(rec.id).content == ""
    assert [r.state for r in mfh.protected.list(state=None)] == ["erased"]
    assert mfh.protected.active_for("a") == []
    assert stored.fulltext.postings("turn", '"zebracorn"') == []
    assert stored.fulltext.postings("record", '"zebracorn"') == []
    assert stored.vectors.get("turn", secret_turn) is None and stored.vectors.get("record", rec.id) is None
    assert mfh.archive.verify() == []  # the rest of the archive still verifies
    assert [t.content for t in mfh.conversation("a").history()] == ["", "Understood."]


def test_erase_event_has_ids_not_content(mfh):
    secret_turn, rec = seed(mfh)
    mfh.erase(namespace="acme/dana", cause="account closed")
    [event] = mfh.memory.events(kind="erase")
    assert event.cause == "account closed" and secret_turn in event.details["turns"]
    assert rec.id in event.details["records"] and event.details["counts"]["turns"] == 42
    log = repr([e.to_dict() for e in mfh.memory.events()])
    assert "Zebracorn" not in log and "kumquat" not in log


def test_namespace_erasure_leaves_other_tenants(mfh):
    seed(mfh)
    mfh.erase(namespace="acme/dana")
    assert all(t.erased for t in mfh.conversation("b").history())
    assert not any(t.erased for t in mfh.conversation("c").history())
    assert mfh.memory.list("acme/dana", include_inactive=True)[0].status == "erased"


def test_record_and_protected_ids(mfh):
    secret_turn, rec = seed(mfh)
    [prot] = mfh.protected.active_for("a")
    plan = mfh.erase(record_ids=[rec.id], protected_ids=[prot.id])
    assert (plan.turns, plan.records, plan.protected) == ([], [rec.id], [prot.id])
    assert mfh.archive.get(secret_turn).content.startswith("Never reveal")


def test_bad_scope_writes_nothing(mfh):
    secret_turn, _ = seed(mfh)
    events = len(mfh.memory.events())
    with pytest.raises(InvalidInput, match="needs a scope"):
        mfh.erase()
    with pytest.raises(NotFound, match="no turn with id 9999"):
        mfh.erase(turn_ids=[secret_turn, 9999])
    with pytest.raises(InvalidInput, match="must be an integer"):
        mfh.erase(turn_ids=["1"])
    with pytest.raises(NotFound):
        mfh.erase(conversation_id="nope")
    assert not mfh.archive.get(secret_turn).erased
    assert len(mfh.memory.events()) == events


def test_erasing_twice_is_a_no_op(mfh):
    secret_turn, _ = seed(mfh)
    first = mfh.erase(turn_ids=[secret_turn])
    second = mfh.erase(turn_ids=[secret_turn])
    assert first.total == 3 and second.total == 0
