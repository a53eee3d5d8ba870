"""One compile, one read of each thing (issue 12, point 3; DESIGN.md §3).

The SQL statements of one call are traced on the storage's real SQLite connection
(``sqlite3.Connection.set_trace_callback``). Reading a context, the history or a search takes no
write lock: the one write of a compile is the statement counting the accesses of the memory
records it shows. A compile reads the catalog and the protected channel once and the
``conversations`` rows not at all (the conversation's ref holds what they say); an append reads
its conversation's row once.
"""

from __future__ import annotations

import re

import pytest

from memfold import LogicalClock, MemFold, WindowSettings

WRITE = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE|BEGIN IMMEDIATE|CREATE|DROP|ALTER)\b", re.I)
CONVERSATION_ROW = re.compile(r"\bFROM\s+conversations\b", re.I)
ACCESS_COUNT = re.compile(r"^UPDATE records SET access_count = access_count \+ 1, last_access_at = \S+ WHERE id IN \(")


def traced(mf: MemFold, fn) -> tuple[object, list[str]]:
    seen: list[str] = []
    conn = mf.storage.db.conn
    conn.set_trace_callback(seen.append)
    try:
        result = fn()
    finally:
        conn.set_trace_callback(None)
    return result, [s for s in seen if not s.lstrip().startswith("--")]  # SQLite's own nested statements aside


@pytest.fixture
def settled(tmp_path):
    """A conversation with a protected constraint, two memories and 300 turns folded into cards,
    compiled once so that nothing is left to fold or sync."""
    settings = WindowSettings(budget_tokens=600, output_reserve_tokens=60, hot_turns=6, leaf_chunk_tokens=120,
                              card_target_tokens=20, rollup_fanin=3)
    mf = MemFold(tmp_path / "s.db", clock=LogicalClock(), token_counter="words", window=settings, embedder=None)
    conv = mf.conversation("ticket", namespace="acme")
    conv.append({"role": "user", "content": "Never call me on the phone, email only please."})
    mf.remember("acme", "semantic", "The customer prefers email.", key="user.contact_preference")
    mf.remember("acme", "procedural", "Refunds over $500 need approval.")
    conv.append_many([{"role": "user" if i % 2 == 0 else "assistant",
                       "content": f"order ORD-{i} ships on May {i % 28 + 1} to {i} Elm St, tracking TRK-{i} ok"}
                      for i in range(300)])
    conv.context()
    yield mf, conv
    mf.close()


def test_context_on_a_settled_conversation_writes_only_the_access_counts(settled):
    mf, conv = settled
    before = {r.id: r.access_count for r in mf.memory.list("acme")}
    mf.parts.context_cache.clear()  # a compile, not the cache's hit path (issue 15)
    ctx, statements = traced(mf, conv.context)
    assert ctx.sections["cards"] > 0 and ctx.sections["protected"] > 0 and ctx.sections["memories"] > 0
    writes = [s for s in statements if WRITE.match(s)]
    assert len(writes) == 1 and ACCESS_COUNT.match(writes[0]), writes  # no write lock, one access statement
    after = {r.id: r.access_count for r in mf.memory.list("acme")}
    assert {i: after[i] - before[i] for i in after} == {i: 1 for i in after}  # and it did count them
    # each thing read once: the catalog, the protected channel; the conversation row not at all
    # (the catalog's last seq, one step down its primary key, is not a read of its items)
    assert sum(bool(re.search(r"FROM catalog_items WHERE conversation_id = \S+ ORDER BY first_seq(?! DESC)", s))
               for s in statements) == 1
    # the protected channel: at most once (none here: its rendering is kept under the table's
    # version, issue 18 point 4, and nothing changed it since the fixture's compile)
    assert sum(bool(re.search(r"^SELECT id, namespace, conversation_id, kind, text\b.*\bFROM protected\b", s))
               for s in statements) <= 1
    assert not [s for s in statements if CONVERSATION_ROW.search(s)]
    assert conv.context().to_dict() == ctx.to_dict()  # the same compile again


def test_history_and_search_take_no_write_lock(settled):
    mf, conv = settled
    turns, statements = traced(mf, conv.history)
    assert len(turns) == 301 and not [s for s in statements if WRITE.match(s)]
    hits, statements = traced(mf, lambda: conv.search("refund ORD-7", 10))
    assert hits and not [s for s in statements if WRITE.match(s)]
    assert not [s for s in statements if CONVERSATION_ROW.search(s)]  # the lineage comes from the ref


@pytest.mark.parametrize("fork", [False, True])
def test_append_reads_the_conversation_row_once(settled, fork):
    mf, conv = settled
    if fork:
        conv = conv.fork("ticket-b")
        conv.append({"role": "assistant", "content": "Forked here."})  # seeds the fork's catalog
    turn_id, statements = traced(mf, lambda: conv.append({"role": "user", "content": "and the refund for ORD-7?"}))
    rows = [s for s in statements if CONVERSATION_ROW.search(s)]
    assert len(rows) == 1, rows
    assert conv.history()[-1].id == turn_id


def test_an_append_is_one_write_transaction_of_a_few_statements(settled):
    """Issue 18, point 4: the turn and its catalog item commit together (one BEGIN IMMEDIATE), and
    the whole append, with its watermark check, traces at most 16 statements of its own (12
    distinct ones: SQLite's trace shows an INSERT once more per trigger program it runs; 27 in two
    write transactions before)."""
    mf, conv = settled
    _, statements = traced(mf, lambda: conv.append({"role": "user", "content": "and the refund for ORD-7?"}))
    work = [s for s in statements if not re.match(r"^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)", s, re.I)]
    assert sum(bool(re.match(r"^\s*BEGIN IMMEDIATE", s, re.I)) for s in statements) == 1, statements
    assert len(work) <= 16, work
    assert conv.catalog.last_seq() == conv.history()[-1].seq  # the catalog item came with the turn
