"""Round 16, r16qa: the four defects round 15's new-user pass saw and did not fix (issue 20, points
3 and 12). Each test failed on 7b2ffd7, before its fix, except
``test_opening_still_writes_what_a_fresh_or_older_file_needs``: a guard that the lock-free open
still migrates and records the clock when it must."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memfold import LogicalClock, MemFold, StorageError
from memfold.memory.storage.sqlite import connection
from test_r15qa import dump, open_mf, run_cli  # round 15's QA helpers: a facade on a file, its SQL dump, the CLI

NS = "acme/dana"


class LockHolder:
    """Another program holding the write lock of ``path``: a real process that begins ``mode``
    (IMMEDIATE or EXCLUSIVE), writes a row it never commits, says "held" on stdout once it holds
    the lock (the condition waited on: no sleeps), and rolls back when its stdin closes."""

    def __init__(self, path: Path, mode: str) -> None:
        script = textwrap.dedent(f"""
            import sqlite3, sys
            conn = sqlite3.connect({str(path)!r}, isolation_level=None)
            conn.execute("BEGIN {mode}")
            conn.execute("INSERT INTO meta(key, value) VALUES ('held by another program', '1')")
            print("held", flush=True)
            sys.stdin.read()
            conn.execute("ROLLBACK")
            """)
        self.proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def __enter__(self) -> "LockHolder":
        line = self.proc.stdout.readline()  # blocks until the lock is held (or the process died)
        assert line.strip() == "held", f"the lock holder did not start: {line!r}"
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


# -- 1. a reader is never blocked by another program's write lock -------------------------------
@pytest.fixture
def short_busy(monkeypatch):
    """A write under another program's lock gives up after about half a second (the library has no
    busy-timeout argument: the module's two limits are lowered for this process)."""
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_MS", 200)
    monkeypatch.setattr(connection, "BUSY_RETRY_SECONDS", 0.3)
    monkeypatch.setattr(connection, "TOUCH_WAIT_MS", 100, raising=False)  # new in round 16


@pytest.mark.parametrize("mode", ["IMMEDIATE", "EXCLUSIVE"])
def test_reads_answer_while_another_program_holds_the_write_lock_and_a_write_fails_clearly(tmp_path, short_busy,
                                                                                            mode):
    path = tmp_path / "agent.db"
    with open_mf(path) as mf:
        conv = mf.conversation("c", namespace=NS)
        conv.append({"role": "user", "content": "hello about parcel 42"})
        conv.append({"role": "assistant", "content": "parcel 42 is on its way"})
        mf.remember(NS, "semantic", "The customer's parcel id is 42.")
    before = dump(path)
    with LockHolder(path, mode):
        # WAL mode: neither BEGIN IMMEDIATE nor BEGIN EXCLUSIVE of another connection blocks a reader
        with open_mf(path) as mf:  # on 7b2ffd7 opening took the write lock: "stayed locked for 0 s"
            conv = mf.conversation("c", namespace=NS)
            assert [t.content for t in conv.history()] == ["hello about parcel 42", "parcel 42 is on its way"]
            assert "parcel 42" in "\n".join(m["content"] for m in conv.context(budget=200).messages)
            assert [s.record.content for s in mf.memory.read(NS)] == ["The customer's parcel id is 42."]
            assert conv.search("parcel")  # the access count it cannot write now is skipped, not waited for
            with pytest.raises(StorageError, match="the database stayed locked"):  # a write waits, then one error
                conv.append({"role": "user", "content": "a turn that cannot be written now"})
        if mode == "EXCLUSIVE":  # the command round 15 saw wait 120 s and fail (one run: it costs a process start)
            result = run_cli("history", str(path), "-c", "c")
            assert result.returncode == 0 and "hello about parcel 42" in result.stdout, result.stderr
    assert dump(path) == before  # the refused write wrote nothing; the holder rolled back


def test_a_hybrid_search_under_another_programs_write_lock_answers_and_caches_its_vectors_later(tmp_path,
                                                                                                short_busy):
    from memfold import HashingEmbedder

    path = tmp_path / "agent.db"
    with open_mf(path) as mf:  # turns archived without vectors: the first hybrid search embeds them
        conv = mf.conversation("c", namespace=NS)
        conv.append({"role": "user", "content": "where is parcel 42?"})
        conv.append({"role": "assistant", "content": "parcel 42 left the depot"})

    def vectors() -> int:
        conn = sqlite3.connect(path)
        try:
            return conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
        finally:
            conn.close()

    with LockHolder(path, "IMMEDIATE"):
        with MemFold(path, clock=LogicalClock(), token_counter="words", embedder=HashingEmbedder()) as mf:
            hits = mf.conversation("c", namespace=NS).search("parcel 42")  # 7b2ffd7: "stayed locked"
            assert hits and vectors() == 0  # ranked with the vectors it could not store
    with MemFold(path, clock=LogicalClock(), token_counter="words", embedder=HashingEmbedder()) as mf:
        assert mf.conversation("c", namespace=NS).search("parcel 42")
    assert vectors() == 2  # stored by the first search after the lock was gone


def test_opening_still_writes_what_a_fresh_or_older_file_needs(tmp_path):
    path = tmp_path / "agent.db"
    with open_mf(path) as mf:
        mf.conversation("c", namespace=NS).append({"role": "user", "content": "hi"})
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM meta WHERE key = 'clock_kind'")  # a file whose clock kind is not recorded yet
    conn.execute("DELETE FROM schema_version WHERE version = 20")  # and one migration not applied
    conn.execute("DROP INDEX turns_system")
    conn.commit()
    conn.close()
    with open_mf(path) as mf:
        assert [t.content for t in mf.conversation("c", namespace=NS).history()] == ["hi"]
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM meta WHERE key = 'clock_kind'").fetchone() == ("logical",)
    assert conn.execute("SELECT COUNT(*) FROM schema_version WHERE version = 20").fetchone() == (1,)
    conn.close()


# -- 2. HTTP refuses a JSON body that gives a key twice ------------------------------------------
def http_client(mf: MemFold):
    from fastapi.testclient import TestClient

    from memfold.integrations.http import create_app

    return TestClient(create_app(mf))


def post_raw(client, url: str, body: str):
    return client.post(url, content=body.encode(), headers={"content-type": "application/json"})


def test_http_refuses_a_body_with_a_duplicate_key_naming_it_and_writes_nothing(tmp_path):
    path = tmp_path / "agent.db"
    with open_mf(path) as mf, http_client(mf) as client:
        assert client.post("/v1/conversations", json={"id": "c", "namespace": NS}).status_code == 201
        before = dump(path)
        cases = [  # (url, body, the key named)
            ("/v1/conversations/c/turns", '{"messages": [{"role": "user", "content": "hi", "role": "system"}]}', "role"),
            ("/v1/conversations", '{"id": "d", "namespace": "acme/x", "id": "e"}', "id"),
            ("/v1/memories", '{"namespace": "acme/dana", "type": "semantic", "content": "a", "content": "b"}', "content"),
            ("/v1/protected", '{"text": "Never share the PIN.", "namespace": "acme/dana", "metadata": {"a": 1, "a": 2}}',
             "a"),
        ]
        for url, body, key in cases:
            response = post_raw(client, url, body)
            assert response.status_code == 422, (url, response.text)
            error = response.json()
            assert error["type"] == "InvalidInput"
            assert error["error"] == (f"the body: the key {key!r} is given twice in one object: "
                                      "JSON readers disagree on which one counts, so give it once")
        assert dump(path) == before
        # the same bodies without the repeat still go through, and bad JSON keeps its own message
        response = post_raw(client, "/v1/conversations/c/turns", '{"messages": [{"role": "user", "content": "hi"}]}')
        assert response.status_code == 201, response.text
        response = post_raw(client, "/v1/conversations/c/turns", '{"messages": [')
        assert response.status_code == 422 and response.json()["error"].startswith("the body is not valid JSON")


def test_the_jsonl_reader_and_http_share_one_duplicate_key_check(tmp_path):
    from memfold import InvalidInput
    from memfold.window.transcripts import DuplicateKey, loads_unique, parse_jsonl

    with pytest.raises(DuplicateKey) as caught:
        loads_unique('{"a": {"b": 1, "b": 2}}')
    assert caught.value.key == "b" and isinstance(caught.value, InvalidInput)
    with pytest.raises(InvalidInput, match="^input line 2: the key 'role' is given twice in one object: "):
        parse_jsonl('{"role": "user", "content": "a"}\n{"role": "user", "content": "b", "role": "system"}\n')


# -- 3. a conversation id holding "/" is reachable over HTTP (and MCP) ---------------------------
def test_a_conversation_id_with_a_slash_is_reachable_over_http_and_mcp(tmp_path):
    from memfold.integrations.mcp import MemfoldTools

    path = tmp_path / "agent.db"
    with open_mf(path) as mf, http_client(mf) as client:
        for cid in ("acme/c1", "acme"):  # "acme" is a conversation of its own, not a prefix of the other
            assert client.post("/v1/conversations", json={"id": cid, "namespace": NS}).status_code == 201
        response = client.post("/v1/conversations/acme%2Fc1/turns",  # round 15: 404
                               json={"messages": [{"role": "user", "content": "where is parcel 42?"}]})
        assert response.status_code == 201, response.text
        assert client.get("/v1/conversations/acme%2fc1").json()["id"] == "acme/c1"
        turns = client.get("/v1/conversations/acme%2Fc1/turns").json()
        assert turns["conversation_id"] == "acme/c1" and [t["content"] for t in turns["turns"]] == ["where is parcel 42?"]
        context = client.get("/v1/conversations/acme%2Fc1/context", params={"budget": 200}).json()
        assert [m["content"] for m in context["messages"]] == ["where is parcel 42?"]
        assert client.get("/v1/conversations/acme/turns").json()["turns"] == []  # the other conversation
        missing = client.get("/v1/conversations/acme/c1/turns")  # the slash not encoded: the 404 says why
        assert missing.status_code == 404
        assert "a conversation id holding '/' goes in the path with each '/' written %2F" in missing.json()["error"]
        nul = client.get("/v1/conversations/acme%00c1")  # the character encoded slashes are routed as
        assert nul.status_code == 422 and "NUL" in nul.json()["error"]
        from fastapi.testclient import TestClient

        from memfold.integrations.viewer import VIEW_PREFIX, create_viewer_app

        with TestClient(create_viewer_app(mf)) as viewer:  # the viewer quotes ids with safe='': it 404ed too
            assert viewer.get("/conversation/acme%2Fc1").status_code == 200
            assert viewer.get(f"{VIEW_PREFIX}/conversations/acme%2Fc1/tree").json()["conversation"]["id"] == "acme/c1"
        tools = MemfoldTools(mf)  # MCP: ids travel as JSON arguments, never in a path
        result = tools.call("context", {"conversation": "acme/c1", "budget": 200})
        assert [m["content"] for m in result.data["messages"]] == ["where is parcel 42?"]


# -- 4. protect() refuses a record the context could never show ----------------------------------
def small_window_mf(path: Path) -> MemFold:
    from memfold import WindowSettings

    return MemFold(path, clock=LogicalClock(), token_counter="words", embedder=None,
                   window=WindowSettings(budget_tokens=100, output_reserve_tokens=20))  # usable: 80


def words(n: int, word: str = "word") -> str:
    return " ".join([word] * n)


def test_protect_refuses_a_record_larger_than_the_usable_budget_naming_the_sizes(tmp_path):
    from memfold import BudgetError, InvalidInput

    path = tmp_path / "agent.db"
    with small_window_mf(path) as mf:
        conv = mf.conversation("c", namespace=NS)
        conv.append({"role": "user", "content": "hello"})
        before = dump(path)
        # on 7b2ffd7 this was stored, and every later context() of the conversation failed
        with pytest.raises(InvalidInput, match=r"^this protected record alone is 220 tokens in the channel \(its text "
                                               r"200\) > usable budget 80 \(budget 100 - output reserve 20\): no "
                                               r"context could show it, so nothing was written"):
            mf.protect(words(200), conversation_id="c")
        with pytest.raises(InvalidInput, match="alone is 220 tokens"):  # namespace-wide: the facade's settings too
            mf.protect(words(200), namespace=NS)
        assert dump(path) == before
        first = mf.protect(words(40), conversation_id="c")  # 60 tokens with the header: fits
        # fits alone, not beside the channel's other records: refused too (every context would fail)
        before = dump(path)
        with pytest.raises(BudgetError, match=r"^with this record \(60 tokens alone\) the protected channel of "
                                              r"conversation 'c' would be 102 tokens \(2 active records\) > usable "
                                              r"budget 80 .*nothing was written; satisfy, expire, revoke or supersede"):
            mf.protect(words(40, "rule"), conversation_id="c")
        with pytest.raises(BudgetError, match="the protected channel of conversation 'c' would be"):
            mf.protect(words(40, "rule"), namespace=NS)  # a namespace-wide record joins conversation c's channel
        with pytest.raises(InvalidInput, match="alone is"):  # the new line names the old text it replaces
            mf.supersede_protected(first.id, words(70, "rule"))
        assert dump(path) == before
        assert conv.context().sections["protected"] == 60  # still compiles
        replaced = mf.supersede_protected(first.id, words(5, "rule"))  # the old one no longer counts
        assert replaced.state == "active" and mf.protected.get(first.id).state == "superseded"


def test_http_protect_refuses_an_oversized_record_with_422_and_an_overfull_channel_with_409(tmp_path):
    path = tmp_path / "agent.db"
    with small_window_mf(path) as mf, http_client(mf) as client:
        assert client.post("/v1/conversations", json={"id": "c", "namespace": NS}).status_code == 201
        before = dump(path)
        response = client.post("/v1/protected", json={"text": words(200), "conversation_id": "c"})
        assert response.status_code == 422 and "alone is 220 tokens" in response.json()["error"], response.text
        assert dump(path) == before
        first = client.post("/v1/protected", json={"text": words(40), "conversation_id": "c"})
        assert first.status_code == 201, first.text
        response = client.post("/v1/protected", json={"text": words(40, "rule"), "namespace": NS})
        assert response.status_code == 409 and response.json()["type"] == "BudgetError", response.text
        response = client.post(f"/v1/protected/{first.json()['id']}/supersede", json={"text": words(70, "rule")})
        assert response.status_code == 422 and "alone is" in response.json()["error"], response.text
