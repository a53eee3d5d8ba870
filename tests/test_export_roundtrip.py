"""Export then import restores the same turns for the same readers (round 10).

``conv.export_jsonl`` (and ``memfold export``) wrote each turn's chat message only: no labels and
no metadata. An export imported elsewhere (``import_jsonl``, ``ingest_jsonl``, ``memfold ingest``)
then showed a turn labelled ``legal`` (or ``secret``, with detection off or a custom detector) to a
reader it was hidden from. Now a line carries the turn's ``labels`` and ``metadata`` (and
``created_at`` with ``with_times``), and an erased turn is exported as a marker without text,
which an import refuses clearly. Real databases, no mocks of memfold's code."""

from __future__ import annotations

import io
import json

import pytest
from click.testing import CliRunner

import memfold
from memfold import LogicalClock, Reader
from memfold.cli import cli
from memfold.memory.errors import InvalidInput

PIN = "4471"
TOOL_CALL = [{"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": '{"order": "ORD-3300"}'}}]


def _open(target, secrets="detect"):
    return memfold.MemFold(target, clock=LogicalClock(), token_counter="words", embedder=None,
                           secrets=secrets, preload_embedder=False)


def _fill(mf):
    conv = mf.conversation("c", namespace="acme/dana")
    ids = [
        conv.append({"role": "system", "content": "You are a support agent.", "created_at": 1}),
        conv.append({"role": "user", "content": "Contract clause 7 is void", "name": "dana", "labels": ["legal"],
                     "created_at": 2}),
        conv.append({"role": "user", "content": f"my PIN is {PIN}", "created_at": 3}),  # detected: secret
        conv.append({"role": "assistant", "content": "", "tool_calls": TOOL_CALL, "created_at": 4}),
        conv.append({"role": "tool", "content": "shipped on May 3", "tool_call_id": "call_1",
                     "metadata": {"source": "crm", "n": [1, 2]}, "created_at": 5}),
        conv.append({"role": "user", "content": [{"type": "text", "text": "see the photo"},
                                                 {"type": "image_url", "image_url": {"url": "https://x/y.png"}}],
                     "created_at": 6}),
        conv.append({"role": "assistant", "content": "Noted, Dana.", "labels": ["board", "legal"], "created_at": 7}),
    ]
    return conv, ids


def _fields(turn):
    return (turn.role, turn.content, turn.name, turn.tool_calls, turn.tool_call_id, turn.metadata,
            sorted(turn.labels), turn.created_at, turn.sha256, turn.tokens)


def test_export_then_import_restores_labels_metadata_times_roles_tool_calls_and_names(backend_target, tmp_path):
    mf = _open(backend_target)
    conv, _ = _fill(mf)
    source = conv.history()
    assert "secret" in source[2].labels and source[2].metadata.get("secret_spans")  # the detector's work
    path = tmp_path / "c.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        assert conv.export_jsonl(fh, with_times=True) == len(source)
    # imported where nothing would label the PIN again: the labels come from the file alone
    other = _open(tmp_path / "other.db", secrets="off")
    other.ingest_jsonl("copy", path, namespace="acme/dana")
    copy = other.conversation("copy", create=False).history()
    assert [_fields(t) for t in copy] == [_fields(t) for t in source]
    for reader in ([], ["legal"], ["secret"], ["legal", "board", "secret"]):
        assert [t.seq for t in other.conversation("copy", create=False).history(reader=reader)] == \
               [t.seq for t in conv.history(reader=reader)], reader
    assert other.search(PIN, conversation_id="copy", reader_labels=[], mode="bm25") == []
    assert other.search("clause", conversation_id="copy", reader_labels=[], mode="bm25") == []
    assert [h.id for h in other.search("clause", conversation_id="copy", reader_labels=["legal"], mode="bm25")] \
        == [copy[1].id]
    # and an export of the copy is the same file
    assert other.conversation("copy", create=False).export_jsonl(with_times=True) == path.read_text(encoding="utf-8")
    other.close()
    mf.close()


def test_a_line_of_the_export_is_the_chat_message_plus_labels_and_metadata(tmp_path):
    mf = _open(tmp_path / "m.db")
    conv, _ = _fill(mf)
    lines = [json.loads(x) for x in conv.export_jsonl().splitlines()]
    assert lines[0] == {"role": "system", "content": "You are a support agent."}  # nothing to add: as before
    assert lines[1] == {"role": "user", "content": "Contract clause 7 is void", "name": "dana", "labels": ["legal"]}
    assert lines[2]["labels"] == ["secret"] and lines[2]["metadata"]["secret_spans"]
    assert lines[3] == {"role": "assistant", "content": "", "tool_calls": TOOL_CALL}
    assert lines[4]["metadata"] == {"source": "crm", "n": [1, 2]} and "created_at" not in lines[4]
    assert lines[5]["content"] == "see the photo" and len(lines[5]["metadata"]["content_parts"]) == 2
    # a reader's export holds only its turns, and their labels are labels that reader holds
    for reader in ([], ["legal"]):
        out = [json.loads(x) for x in conv.export_jsonl(reader=reader).splitlines()]
        assert all(set(x.get("labels", [])) <= set(reader) for x in out)
        assert len(out) == len(conv.history(reader=reader))
    assert PIN not in conv.export_jsonl(reader=Reader.of(["legal"]))
    mf.close()


def test_export_carries_labels_changed_after_the_append(tmp_path):
    mf = _open(tmp_path / "m.db")
    conv, ids = _fill(mf)
    mf.relabel(f"t{ids[0]}", ["hr"])
    mf.revoke_label(f"t{ids[1]}", "legal")
    lines = [json.loads(x) for x in conv.export_jsonl().splitlines()]
    assert lines[0]["labels"] == ["hr"] and "labels" not in lines[1]
    mf.close()


def test_an_erased_turn_is_exported_as_a_marker_without_its_text_and_an_import_refuses_it(tmp_path):
    mf = _open(tmp_path / "m.db")
    conv, ids = _fill(mf)
    mf.erase(turn_ids=[ids[1], ids[4]])
    text = conv.export_jsonl(with_times=True)
    assert "clause" not in text and "shipped" not in text and "crm" not in text and "dana\"" not in text
    lines = [json.loads(x) for x in text.splitlines()]
    assert lines[1] == {"role": "user", "content": "", "erased": True, "labels": ["legal"], "created_at": 2,
                        "clock": "logical"}  # round 11: the clock the time is on
    assert lines[4] == {"role": "tool", "content": "", "erased": True, "tool_call_id": "call_1", "created_at": 5,
                        "clock": "logical"}
    path = tmp_path / "c.jsonl"
    path.write_text(text, encoding="utf-8")
    other = _open(tmp_path / "other.db", secrets="off")  # the file's labels alone (detection may add some)
    with pytest.raises(InvalidInput, match=r"c\.jsonl line 2: an erased turn's marker"):
        other.ingest_jsonl("copy", path)
    assert "copy" not in other.archive.conversation_ids()  # nothing written, not even the conversation
    existing = other.conversation("kept")
    with pytest.raises(InvalidInput, match="line 2: an erased turn's marker"):
        existing.import_jsonl(path)
    assert existing.history() == []
    with pytest.raises(InvalidInput, match="an erased turn's marker"):
        existing.append(lines[1])
    # without the marker lines the rest imports, labels kept
    path.write_text("".join(x + "\n" for x in text.splitlines() if '"erased": true' not in x), encoding="utf-8")
    assert len(existing.import_jsonl(path)) == len(ids) - 2
    assert [t.labels for t in existing.history()] == [t.labels for t in conv.history() if not t.erased]
    other.close()
    mf.close()


def test_cli_export_then_ingest_keeps_a_labelled_turn_hidden(tmp_path):
    runner = CliRunner()
    src, dst = str(tmp_path / "src.db"), str(tmp_path / "dst.db")
    for db in (src, dst):
        assert runner.invoke(cli, ["init", db, "--clock", "logical", "--tokens", "words"]).exit_code == 0
    mf = _open(src, secrets="off")
    mf.conversation("t1").append_many([{"role": "user", "content": "the merger closes Friday", "labels": ["board"]},
                                       {"role": "assistant", "content": "Understood"}], compact=False)
    mf.close()
    out = tmp_path / "t1.jsonl"
    result = runner.invoke(cli, ["export", src, "-c", "t1", "-o", str(out), "--with-times"])
    assert result.exit_code == 0, result.output
    assert runner.invoke(cli, ["ingest", dst, "-c", "t1", str(out)]).exit_code == 0
    hidden = runner.invoke(cli, ["history", dst, "-c", "t1", "--reader", "", "--json"])
    assert [t["content"] for t in json.loads(hidden.output)] == ["Understood"]
    board = runner.invoke(cli, ["history", dst, "-c", "t1", "--reader", "board", "--json"])
    assert [t["labels"] for t in json.loads(board.output)] == [["board"], []]


def test_export_jsonl_to_a_stream_writes_what_it_returns(tmp_path):
    mf = _open(tmp_path / "m.db")
    conv, _ = _fill(mf)
    buf = io.StringIO()
    assert conv.export_jsonl(buf, with_times=True) == len(conv.history())
    assert buf.getvalue() == conv.export_jsonl(with_times=True)
    mf.close()
