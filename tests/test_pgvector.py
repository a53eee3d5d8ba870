"""pgvector on PostgreSQL (issue 17, point 2): the HNSW index is what nearest-neighbour search walks
when the extension is present; the in-process path serves when it is absent or switched off
(``?pgvector=off``), with the same answers; hybrid search gives the same hits either way.

The behaviour both backends share is in ``tests/test_storage_contract.py``; these tests are about
PostgreSQL's own choices and run against the session's real server (conftest's ``pg_url``).
"""

from __future__ import annotations

import numpy as np
import pytest

import memfold
from memfold.memory.errors import StorageError
from memfold.memory.storage import open_storage
from memfold.memory.storage.rows import SearchScope


def with_setting(url: str, value: str) -> str:
    return url + ("&" if "?" in url else "?") + f"pgvector={value}"


def fill(storage, n: int = 2000, dim: int = 32, seed: int = 3) -> tuple[list[int], np.ndarray]:
    """``n`` turns in two conversations of two namespaces (every third turn labelled ``pii``), each
    with a random vector; the model is claimed first, so the HNSW indexes exist."""
    with storage.transaction():
        for cid, ns in (("a", "acme"), ("b", "beta")):
            storage.archive.insert_conversation(conversation_id=cid, namespace=ns, family_id=cid, parent_id=None,
                                                fork_after_seq=None, created_at=1.0, labels=[])
        ids = [storage.archive.insert_turn(
            conversation_id="ab"[i % 2], family_id="ab"[i % 2], seq=i // 2 + 1, role="user", content=f"turn {i}",
            name=None, tool_call_id=None, tool_calls=None, metadata="{}", created_at=float(i), tokens=2,
            sha256=f"{i:064x}", labels=["pii"] if i % 3 == 0 else []) for i in range(n)]
    vectors = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    with storage.transaction():
        storage.vectors.set_model("random", dim)
        storage.vectors.put("turn", ids, vectors, model_id="random")
    return ids, vectors


def exact(ids, vectors, q, keep) -> list[tuple[int, float]]:
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    sims = unit @ (q / np.linalg.norm(q))
    order = [i for i in np.lexsort((ids, -sims)) if keep(i)]
    return [(ids[i], float(sims[i])) for i in order]


def same(found, want) -> bool:
    """The same ids in the same order with the same cosines (to float32 precision)."""
    return [i for i, _ in found] == [i for i, _ in want] and all(
        abs(a - b) < 1e-5 for (_, a), (_, b) in zip(found, want))


def test_wide_scopes_walk_the_hnsw_index_and_keep_the_scope(pg_url):
    s = open_storage(pg_url, "logical")
    try:
        assert s.vectors.uses_pgvector()
        ids, vectors = fill(s)
        s.vectors.analyze()  # what autovacuum does after a bulk load
        q = vectors[10] + 0.1
        for scope in (SearchScope(), SearchScope(namespace="acme", reader_labels=())):
            plan = s.vectors.explain_nearest("turn", q, scope, limit=20)
            assert "Index Scan using embeddings_hnsw_turn" in plan, plan
        # a conversation's lineage is scanned exactly: no index can filter by it
        lineage = SearchScope(lineage=(("a", None),))
        assert "embeddings_hnsw_turn" not in s.vectors.explain_nearest("turn", q, lineage, limit=20)

        visible = {i for pos, i in enumerate(ids) if pos % 2 == 0 and pos % 3 != 0}  # acme, no pii
        found = s.vectors.nearest("turn", q, SearchScope(namespace="acme", reader_labels=()), limit=20)
        assert len(found) == 20 and {i for i, _ in found} <= visible  # limit visible items, none other
        truth = dict(exact(ids, vectors, q, lambda pos: True))
        assert all(abs(sim - truth[i]) < 1e-5 for i, sim in found)  # true cosines, best first
        assert [sim for _, sim in found] == sorted((sim for _, sim in found), reverse=True)
        want = exact(ids, vectors, q, lambda pos: ids[pos] in visible)[:20]
        assert same(s.vectors.nearest("turn", q, SearchScope(lineage=(("a", None),), reader_labels=()),
                                      limit=20), want)  # the exact path gives the exact answer
    finally:
        s.close()


def test_switched_off_the_same_database_is_searched_in_process(pg_url):
    on = open_storage(pg_url, "logical")
    off = open_storage(with_setting(pg_url, "off"), "logical")
    try:
        ids, vectors = fill(on, n=300)
        assert on.vectors.uses_pgvector() and not off.vectors.uses_pgvector()
        assert off.vectors.explain_nearest("turn", vectors[0], SearchScope(), limit=5) == ""
        scope = SearchScope(lineage=(("b", None),), reader_labels=())
        want = exact(ids, vectors, vectors[7], lambda pos: pos % 2 == 1 and pos % 3 != 0)[:15]
        assert same(off.vectors.nearest("turn", vectors[7], scope, limit=15), want)
        assert same(on.vectors.nearest("turn", vectors[7], scope, limit=15), want)
        # a write through the switched-off handle still fills the pgvector column
        with off.transaction():
            off.vectors.put("turn", [ids[1]], -vectors[7:8], model_id="random")
        assert on.vectors.similarity("turn", vectors[7], [ids[1]]) == {ids[1]: pytest.approx(-1.0, abs=1e-5)}
    finally:
        on.close()
        off.close()


def test_without_the_extension_migration_21_adds_nothing_and_search_runs_in_process(pg_empty_url):
    url = with_setting(pg_empty_url, "off")  # what a server without pgvector (Debian's 15) amounts to
    s = open_storage(url, "logical")
    try:
        assert s.meta.schema_version() >= 21 and not s.vectors.uses_pgvector()
        ids, vectors = fill(s, n=100)
        want = exact(ids, vectors, vectors[3], lambda pos: True)[:5]
        assert same(s.vectors.nearest("turn", vectors[3], SearchScope(), limit=5), want)
    finally:
        s.close()
    later = open_storage(pg_empty_url, "logical")  # pgvector allowed now: the schema has no column for it
    try:
        assert not later.vectors.uses_pgvector()
        assert same(later.vectors.nearest("turn", vectors[3], SearchScope(), limit=5), want)
    finally:
        later.close()


def test_a_bad_setting_is_refused_naming_it(pg_url):
    with pytest.raises(StorageError, match="pgvector=on or pgvector=off"):
        open_storage(with_setting(pg_url, "maybe"), "logical")


def test_hybrid_search_gives_the_same_hits_with_and_without_pgvector(pg_url, tmp_path, clock):
    """The same conversation in SQLite, in PostgreSQL with pgvector and in PostgreSQL without it:
    the same hits, in the same order, for wide and conversation-scoped searches."""
    lines = ["my parcel to Oslo is late", "the courier lost the tracking number", "I want a refund for the blender",
             "can you change my delivery address", "the blender arrived broken", "what is your returns policy",
             "please call me tomorrow morning", "my password reset email never came", "a refund takes five days",
             "the courier rang twice at noon", "Oslo depot closes at six", "send the broken blender back",
             "tracking shows the parcel in Bergen", "my new address is Storgata 5", "call the depot about the parcel"]
    hits = {}
    for name, target in (("sqlite", tmp_path / "m.db"), ("pgvector", pg_url), ("off", with_setting(pg_url, "off"))):
        mf = memfold.MemFold(target, clock=clock.__class__(), token_counter="words", embedder="hashing")
        try:
            if name == "sqlite" or name == "pgvector":
                conv = mf.conversation("c", namespace="shop")
                for line in lines:
                    conv.append({"role": "user", "content": line})
            got = []
            for query in ("blender refund", "late parcel courier", "address change"):
                got.append([(h.kind, h.id) for h in mf.search(query, limit=5)])
                got.append([(h.kind, h.id) for h in mf.search(query, limit=5, conversation_id="c", mode="dense")])
            hits[name] = got
        finally:
            mf.close()
    assert hits["pgvector"] == hits["off"] == hits["sqlite"]
    assert [len(g) for g in hits["sqlite"]] == [4, 5, 5, 5, 2, 5]  # hybrid keeps only real matches
