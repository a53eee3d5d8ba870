"""The archive and conversations: verbatim append, stable history, hashes, forks, JSONL import/export."""

import hashlib
import json
import sqlite3

import pytest

from memfold import ConversationNotFound, InvalidInput, MemFold, TurnNotFound
from memfold.window.archive import canonical_hash

TOOL_CALL = [{"id": "call_1", "type": "function", "function": {"name": "policy_lookup", "arguments": "{\"topic\": \"returns\"}"}}]


def test_append_stores_verbatim_and_returns_id(mf):
    conv = mf.conversation("ticket-1", namespace="acme/dana")
    text = "  Leading spaces, trailing newline\n, emoji 👍🏽, CJK 日本, <|endoftext|> stays text  "
    turn_id = conv.append({"role": "user", "content": text, "name": "dana", "metadata": {"channel": "chat"}})
    turn = mf.archive.get(turn_id)
    assert turn.content == text
    assert turn.name == "dana"
    assert turn.metadata == {"channel": "chat"}
    assert turn.tokens == len(text.split())
    expected = hashlib.sha256(
        json.dumps({"content": text, "name": "dana", "role": "user", "tool_call_id": None, "tool_calls": None},
                   sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    ).hexdigest()
    assert turn.sha256 == "sha256:" + expected
    assert mf.archive.verify() == []


def test_tool_calls_and_results_round_trip(mf):
    conv = mf.conversation("c")
    conv.append({"role": "assistant", "content": None, "tool_calls": TOOL_CALL})
    conv.append({"role": "tool", "content": "after the window a 10% restocking fee applies", "tool_call_id": "call_1", "name": "policy_lookup"})
    a, t = conv.history()
    assert a.message() == {"role": "assistant", "content": "", "tool_calls": TOOL_CALL}
    assert t.message() == {"role": "tool", "content": "after the window a 10% restocking fee applies", "name": "policy_lookup", "tool_call_id": "call_1"}


def test_history_order_is_stable_when_times_are_equal(mf):
    conv = mf.conversation("c")
    for i in range(50):
        conv.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}", "created_at": 7})
    history = conv.history()
    assert [t.content for t in history] == [f"message {i}" for i in range(50)]
    assert [t.seq for t in history] == list(range(1, 51))
    assert all(t.created_at == 7.0 for t in history)


def test_archive_is_immutable_and_never_deleted(mf):
    conv = mf.conversation("c")
    turn_id = conv.append({"role": "user", "content": "original words"})
    with pytest.raises(sqlite3.DatabaseError, match="immutable"):
        mf.db.execute("UPDATE turns SET content = 'rewritten' WHERE id = ?", [turn_id])
    with pytest.raises(sqlite3.DatabaseError, match="never deleted"):
        mf.db.execute("DELETE FROM turns WHERE id = ?", [turn_id])
    assert mf.archive.get(turn_id).content == "original words"


def test_verify_detects_tampering_below_the_trigger(mf):
    conv = mf.conversation("c")
    turn_id = conv.append({"role": "user", "content": "original words"})
    mf.db.execute("DROP TRIGGER turns_immutable")
    mf.db.execute("UPDATE turns SET content = 'tampered' WHERE id = ?", [turn_id])
    assert mf.archive.verify() == [turn_id]


@pytest.mark.parametrize(
    "turn,message",
    [
        ({"role": "robot", "content": "x"}, "role must be one of"),
        ({"role": "user", "content": ""}, "content is empty"),
        ({"role": "user", "content": 5}, "content must be a string"),
        ({"role": "user", "content": "a\x00b"}, "NUL byte"),
        ({"role": "user", "content": "\udc80"}, "lone surrogate"),
        ({"role": "tool", "content": "result"}, "tool turn needs the tool_call_id"),
        ({"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "f"}}]}, "needs a string 'id'"),
        ({"role": "user", "content": "x", "colour": "blue"}, "unknown turn field"),
        ({"role": "user", "content": "x", "metadata": [1]}, "metadata must be an object"),
        ("just a string", "must be an object"),
    ],
)
def test_bad_turns_are_rejected_and_nothing_written(mf, turn, message):
    conv = mf.conversation("c")
    conv.append({"role": "user", "content": "kept"})
    with pytest.raises(InvalidInput, match=message):
        conv.append(turn)
    assert [t.content for t in conv.history()] == ["kept"]


def test_append_many_is_all_or_nothing(mf):
    conv = mf.conversation("c")
    with pytest.raises(InvalidInput):
        conv.append_many([{"role": "user", "content": "fine"}, {"role": "user", "content": ""}])
    assert conv.history() == []


def test_unknown_conversation(mf):
    with pytest.raises(ConversationNotFound, match="no conversation 'nope'"):
        mf.conversation("nope", create=False)
    with pytest.raises(TurnNotFound):
        mf.archive.get(12345)


def test_fork_shares_turns_by_pointer(mf):
    parent = mf.conversation("main", namespace="ns")
    for i in range(3):
        parent.append({"role": "user", "content": f"p{i}"})
    child = parent.fork("branch")
    child.append({"role": "assistant", "content": "child only"})
    parent.append({"role": "user", "content": "parent only"})
    assert [t.content for t in child.history()] == ["p0", "p1", "p2", "child only"]
    assert [t.content for t in parent.history()] == ["p0", "p1", "p2", "parent only"]
    assert [t.seq for t in child.history()] == [1, 2, 3, 4]
    # shared, not copied: the archive holds each turn once
    assert mf.db.execute("SELECT COUNT(*) FROM turns").fetchone()[0] == 5
    assert child.family_id == parent.family_id == "main"


def test_jsonl_import_export_round_trip(mf, tmp_path):
    src = tmp_path / "in.jsonl"
    messages = [
        {"role": "system", "content": "You are a support agent."},
        {"role": "user", "content": "My order ORD-3300 arrived broken 😞", "name": "dana"},
        {"role": "assistant", "content": "", "tool_calls": TOOL_CALL},
        {"role": "tool", "content": "10% restocking fee after 30 days", "tool_call_id": "call_1"},
        {"role": "assistant", "content": "A 10% fee applies after the window."},
    ]
    src.write_text("\n".join(json.dumps(m, ensure_ascii=False) for m in messages) + "\n\n", encoding="utf-8")
    conv = mf.conversation("imported")
    ids = conv.import_jsonl(src)
    assert len(ids) == 5
    exported = conv.export_jsonl()
    assert [json.loads(line) for line in exported.splitlines()] == messages
    # re-import of the export into another conversation gives byte-identical hashes
    out = tmp_path / "out.jsonl"
    out.write_text(exported, encoding="utf-8")
    again = mf.conversation("again")
    again.import_jsonl(out)
    assert [t.sha256 for t in again.history()] == [t.sha256 for t in conv.history()]


@pytest.mark.parametrize(
    "lines,message",
    [
        (['{"role": "user", "content": "ok"}', '{"role": "user", "content": "broken"'], "line 2: not valid JSON"),
        (['{"role": "user", "content": "ok"}', "", '[1, 2]'], "line 3: expected a message object"),
        (['{"role": "user", "content": "ok"}', '{"role": "alien", "content": "x"}'], "line 2: role must be one of"),
        (['{"role": "user", "content": "ok"}', '{"role": "tool", "content": "x"}'], "line 2: a tool turn needs"),
    ],
)
def test_malformed_jsonl_reports_line_and_imports_nothing(mf, tmp_path, lines, message):
    src = tmp_path / "bad.jsonl"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    conv = mf.conversation("c")
    with pytest.raises(InvalidInput, match=message):
        conv.import_jsonl(src)
    assert conv.history() == []


def test_non_utf8_file_is_reported(mf, tmp_path):
    src = tmp_path / "latin1.jsonl"
    src.write_bytes('{"role": "user", "content": "caf\xe9"}\n'.encode("latin-1"))
    with pytest.raises(InvalidInput, match="not UTF-8"):
        mf.conversation("c").import_jsonl(src)


def test_canonical_hash_ignores_key_order():
    a = canonical_hash({"role": "user", "content": "x"})
    b = canonical_hash({"content": "x", "role": "user", "name": None})
    assert a == b and a.startswith("sha256:")
