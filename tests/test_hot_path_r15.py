"""Issue 18, point 4 (round 15): what the hot path keeps in memory stays right.

A compile keeps the protected channel's rendering under the table's version and the turns it read
under the file's version; an append reads its conversation (row, last seq, the turns the secret
detector reads back, the catalog's cover, closing frames) in one statement inside its write
transaction. Each test changes what is kept, by this connection or another one, and checks that
the next compile shows the change (a real SQLite file, a second ``MemFold`` on it for "another
connection"). The append-point tests run on both backends.
"""

from __future__ import annotations

import re

import pytest

from memfold import LogicalClock, MemFold, WindowSettings
from test_statements import traced  # the trace of one call's statements, SQLite's nested ones aside

PROTECTED_READ = re.compile(r"^SELECT id, namespace, conversation_id, kind, text\b.*\bFROM protected\b")
TURNS_BY_ID = re.compile(r"^SELECT id, conversation_id, family_id, seq\b.*\bFROM turns WHERE id IN \(")


def open_file(path) -> MemFold:
    settings = WindowSettings(budget_tokens=2000, output_reserve_tokens=200, hot_turns=8)
    return MemFold(path, clock=LogicalClock(), token_counter="words", window=settings, embedder=None)


def protected_text(ctx) -> str:
    return "\n".join(m["content"] for m in ctx.messages if m["role"] == "system")


@pytest.fixture
def chat(tmp_path):
    mf = open_file(tmp_path / "hot.db")
    conv = mf.conversation("c", namespace="ns")
    conv.append({"role": "user", "content": "Always answer in French from now on."})
    for i in range(6):
        conv.append({"role": "assistant" if i % 2 == 0 else "user", "content": f"turn {i} about the parcel to Leeds"})
    conv.context()
    yield tmp_path / "hot.db", mf, conv
    mf.close()


def test_an_append_that_adds_no_record_renders_nothing_again(chat):
    _, mf, conv = chat
    conv.append({"role": "assistant", "content": "D'accord."})
    ctx, statements = traced(mf, conv.context)
    assert "Always answer in French" in protected_text(ctx)
    assert not [s for s in statements if PROTECTED_READ.match(s)]  # kept under the table's version


def test_the_channel_changed_by_this_connection_shows_at_the_next_compile(chat):
    _, mf, conv = chat
    record = mf.protect("Never mention the refund policy.", conversation_id="c")
    ctx, statements = traced(mf, conv.context)
    assert "Never mention the refund policy." in protected_text(ctx)
    assert sum(bool(PROTECTED_READ.match(s)) for s in statements) == 1  # read once after the change
    mf.protected.revoke(record.id)
    assert "Never mention the refund policy." not in protected_text(conv.context())


def test_the_channel_changed_by_another_connection_shows_at_the_next_compile(chat):
    path, mf, conv = chat
    other = open_file(path)
    try:
        other.protect("Always sign replies as the Leeds desk.", conversation_id="c")
    finally:
        other.close()
    assert "Always sign replies as the Leeds desk." in protected_text(conv.context())


def test_a_rolled_back_record_is_not_kept(chat):
    _, mf, conv = chat

    class Boom(Exception):
        pass

    with pytest.raises(Boom):
        with mf.storage.transaction():
            mf.protect("Never ship to Leeds.", conversation_id="c")
            assert "Never ship to Leeds." in protected_text(conv.context())  # seen inside, uncommitted
            raise Boom
    assert "Never ship to Leeds." not in protected_text(conv.context())


@pytest.mark.parametrize("by_other", [False, True])
def test_an_erased_turn_is_not_served_from_memory(chat, by_other):
    path, mf, conv = chat
    secret = conv.append({"role": "user", "content": "the gate code is orange-falcon-42"})
    assert any("orange-falcon-42" in (m.get("content") or "") for m in conv.context().messages)
    _, statements = traced(mf, conv.context)
    if by_other:
        other = open_file(path)
        try:
            other.erase(turn_ids=[secret])
        finally:
            other.close()
    else:
        mf.erase(turn_ids=[secret])
        assert not mf.storage.c.kept_turns  # the erasure's statement dropped every kept turn at once
    ctx = conv.context()
    assert not any("orange-falcon-42" in (m.get("content") or "") for m in ctx.messages)


def test_a_relabelled_turn_is_hidden_from_a_reader_at_once(chat):
    _, mf, conv = chat
    turn = conv.append({"role": "user", "content": "the invoice number is INV-7731"})
    assert "INV-7731" in str(conv.context(reader=[]).messages)
    mf.relabel(f"t{turn}", ["legal"])
    assert "INV-7731" not in str(conv.context(reader=[]).messages)
    assert "INV-7731" in str(conv.context().messages)  # the owner still sees it


def test_a_compile_after_an_append_reads_only_the_new_turn(chat):
    _, mf, conv = chat
    conv.context()
    new = conv.append({"role": "assistant", "content": "Le colis part demain."})
    _, statements = traced(mf, conv.context)
    reads = [s for s in statements if TURNS_BY_ID.match(s)]
    assert reads and all(re.search(rf"WHERE id IN \({new}\)$", s) for s in reads), reads


def test_an_append_reads_its_conversation_in_one_statement(chat):
    _, mf, conv = chat
    _, statements = traced(mf, lambda: conv.append({"role": "assistant", "content": "Oui."}))
    work = [s for s in statements if not re.match(r"^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)", s, re.I)]
    reads = [s for s in work if s.lstrip().upper().startswith("SELECT")]
    assert len(reads) == 1 and "FROM conversations" in reads[0], reads
    assert statements[0].startswith("BEGIN IMMEDIATE")  # nothing read before the write lock


def test_a_forks_first_turn_is_read_with_its_parents_question(backend_target):
    """The detector reads the turn before: for a fork's first own turn, that is the parent's."""
    mf = MemFold(backend_target, clock=LogicalClock(), token_counter="words", embedder=None)
    try:
        conv = mf.conversation("bank", namespace="bank")
        conv.append({"role": "assistant", "content": "What is your PIN?"})
        fork = conv.fork("bank-2")
        answer = fork.append({"role": "user", "content": "4471"})
        turn = mf.archive.get(answer)
        assert "secret" in turn.labels and turn.metadata["secret_spans"] == [[0, 4]]
        plain = fork.append({"role": "user", "content": "thanks, that is all"})
        assert "secret" not in mf.archive.get(plain).labels
    finally:
        mf.close()


def test_a_missing_conversation_writes_nothing(backend_target):
    from memfold import ConversationNotFound

    mf = MemFold(backend_target, clock=LogicalClock(), token_counter="words", embedder=None)
    try:
        with pytest.raises(ConversationNotFound, match="no conversation 'ghost'"):
            mf.archive.append_many("ghost", [{"role": "user", "content": "hello"}])
        assert mf.conversation("real", namespace="n").history() == []
    finally:
        mf.close()
