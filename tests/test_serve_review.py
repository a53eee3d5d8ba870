"""Defects found by the round-2 review of the HTTP API and the MCP server, each with the request
that showed it: a slot write that refreshed (and returned) or retired a record the writer may not
read, and integer query parameters above SQLite's range answering 500 or 409 instead of 422."""

from __future__ import annotations

from anyio.from_thread import start_blocking_portal
from fastapi.testclient import TestClient
from mcp import Client

from memfold import LogicalClock, MemFold
from memfold.integrations.http import create_app, parse_keys
from memfold.integrations.mcp import create_server

HIDDEN = "Dana's salary is 99000 (HR only)"
DANA = "dana-key-0123456789abcdef"
KEYS = {"keys": [{"name": "dana-bot", "key": DANA, "namespaces": ["acme/dana"]},
                 {"name": "hr", "key": "hr-key-0123456789abcdefgh", "namespaces": ["acme/*"], "labels": ["hr"]}]}


def _seeded(db_path) -> MemFold:
    mf = MemFold(db_path, clock=LogicalClock(), token_counter="words", embedder=None)
    conv = mf.conversation("ticket-42", namespace="acme/dana")
    conv.append({"role": "user", "content": "My order ORD-3300 arrived broken."})
    mf.memory.write("acme/dana", "semantic", HIDDEN, key="user.salary", labels=["hr"], metadata={"source": "payroll"})
    return mf


def _slot(mf: MemFold) -> list[tuple[int, str, str]]:
    return [(r.id, r.status, r.content) for r in mf.memory.list("acme/dana", "semantic", key="user.salary",
                                                                include_inactive=True)]


def test_http_write_into_a_slot_whose_value_the_key_cannot_read_is_refused(db_path):
    mf = _seeded(db_path)
    before = (_slot(mf), len(mf.memory.events("acme/dana")))
    with TestClient(create_app(mf, keys=parse_keys(KEYS, "keys"))) as client:
        for content in ["dana's salary is 99000 (hr only)!", "Dana's salary is 5"]:  # a restatement, a new value
            r = client.post("/v1/memories", headers={"Authorization": f"Bearer {DANA}"},
                            json={"namespace": "acme/dana", "type": "semantic", "content": content, "key": "user.salary"})
            assert r.status_code == 403, r.text
            assert r.json()["type"] == "PermissionDenied" and "user.salary" in r.json()["error"]
            assert "99000" not in r.text and "payroll" not in r.text
        assert (_slot(mf), len(mf.memory.events("acme/dana"))) == before  # nothing written
        # a key holding the label still supersedes as before; other slots stay writable for dana-bot
        r = client.post("/v1/memories", headers={"X-API-Key": "hr-key-0123456789abcdefgh"},
                        json={"namespace": "acme/dana", "type": "semantic", "content": "Dana's salary is 5",
                              "key": "user.salary"})
        assert r.status_code == 201 and r.json()["action"] == "supersede"
        r = client.post("/v1/memories", headers={"Authorization": f"Bearer {DANA}"},
                        json={"namespace": "acme/dana", "type": "semantic", "content": "Dana prefers email",
                              "key": "user.contact"})
        assert r.status_code == 201 and r.json()["action"] == "insert"
    mf.close()


def test_http_integer_queries_beyond_sqlite_range_are_422(db_path):
    mf = _seeded(db_path)
    huge = 10**20
    with TestClient(create_app(mf, keys=parse_keys(KEYS, "keys")), raise_server_exceptions=False) as client:
        headers = {"Authorization": f"Bearer {DANA}"}
        for url in (f"/v1/conversations/ticket-42/turns?after_seq={huge}", f"/v1/conversations/ticket-42/turns?limit={huge}",
                    f"/v1/events?namespace=acme/dana&limit={huge}", f"/v1/events?limit={huge}"):
            r = client.get(url, headers=headers)
            assert r.status_code == 422, (url, r.status_code, r.text)
            assert r.json()["type"] == "InvalidInput"
        assert client.get(f"/v1/conversations/ticket-42/turns?after_seq={2**63 - 1}", headers=headers).json()["turns"] == []
    mf.close()


def test_mcp_remember_into_a_slot_the_reader_cannot_read_is_a_tool_error(db_path):
    mf = _seeded(db_path)
    before = (_slot(mf), len(mf.memory.events("acme/dana")))
    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(Client(create_server(mf, namespace="acme/dana"))) as agent:
            for content in ["dana's salary is 99000 (hr only)", "Dana's salary is 5"]:
                result = portal.call(agent.call_tool, "remember",
                                     {"content": content, "type": "semantic", "key": "user.salary"})
                text = result.content[0].text
                assert result.is_error and "user.salary" in text, text
                assert result.structured_content["type"] == "PermissionDenied"
                assert "99000" not in text and "payroll" not in text
            ok = portal.call(agent.call_tool, "remember",
                             {"content": "Dana prefers email", "type": "semantic", "key": "user.contact"})
            assert not ok.is_error and ok.structured_content["action"] == "insert"
        with portal.wrap_async_context_manager(Client(create_server(mf, namespace="acme/dana", reader=["hr"]))) as hr:
            result = portal.call(hr.call_tool, "remember",
                                 {"content": "Dana's salary is 5", "type": "semantic", "key": "user.salary"})
            assert not result.is_error and result.structured_content["action"] == "supersede"
    assert [s for _, s, _ in _slot(mf)] == ["retired", "active"]
    assert len(before[0]) == 1
    mf.close()


def test_http_erase_of_an_id_the_key_cannot_read_is_403_and_erases_nothing(db_path):
    mf = _seeded(db_path)
    conv = mf.conversation("ticket-42")
    secret_turn = conv.append({"role": "user", "content": "my PIN is 4471"})  # labelled secret on append
    hidden_protected = mf.protected.add("never mention the salary", namespace="acme/dana", labels=["hr"]).id
    hidden_record = _slot(mf)[0][0]
    with TestClient(create_app(mf, keys=parse_keys(KEYS, "keys"))) as client:
        headers = {"Authorization": f"Bearer {DANA}"}
        for body in ({"turn_ids": [secret_turn]}, {"record_ids": [hidden_record]}, {"protected_ids": [hidden_protected]}):
            r = client.post("/v1/erase", headers=headers, json=body)
            assert r.status_code == 403 and r.json()["type"] == "PermissionDenied", (body, r.text)
        assert not mf.archive.get(secret_turn).erased
        assert mf.memory.get(hidden_record).status == "active"
        assert mf.protected.get(hidden_protected).state == "active"
        r = client.post("/v1/erase", headers={"X-API-Key": "hr-key-0123456789abcdefgh"},
                        json={"record_ids": [hidden_record]})
        assert r.status_code == 200 and r.json()["records"] == [hidden_record]
    mf.close()



def test_http_events_about_a_record_the_key_cannot_read_are_hidden(db_path):
    mf = _seeded(db_path)
    hidden_id = _slot(mf)[0][0]
    with TestClient(create_app(mf, keys=parse_keys(KEYS, "keys"))) as client:
        for query in ("?namespace=acme/dana", ""):
            r = client.get(f"/v1/events{query}", headers={"Authorization": f"Bearer {DANA}"})
            assert r.status_code == 200, r.text
            assert all(e["record_id"] != hidden_id for e in r.json()["events"])
            assert "user.salary" not in r.text
        r = client.get("/v1/events?namespace=acme/dana", headers={"X-API-Key": "hr-key-0123456789abcdefgh"})
        assert any(e["record_id"] == hidden_id for e in r.json()["events"])  # the label holder sees them
    mf.close()


def test_serve_view_and_mcp_on_a_port_in_use_are_one_usage_error(db_path):
    """A real socket holds the port: each server command refuses before starting, naming the port,
    with exit status 2 like other usage errors (uvicorn used to log an ERROR line and exit 3)."""
    import os
    import socket
    import subprocess
    import sys

    _seeded(db_path).close()
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        for args in (["serve", str(db_path), "--embedder", "none"], ["view", str(db_path)],
                     ["mcp", str(db_path), "--http", "--embedder", "none"]):
            done = subprocess.run([sys.executable, "-c", "from memfold.cli import cli; cli()", *args, "--port", str(port)],
                                  capture_output=True, text=True, timeout=120, env={**os.environ})
            assert done.returncode == 2, (args, done.stdout, done.stderr)
            errors = [line for line in done.stderr.splitlines() if "rror" in line]
            assert errors == [f"Error: Invalid value for '--port': port {port} on 127.0.0.1 is already in use (Address "
                              f"already in use): stop the program holding it, choose another with --port PORT, or "
                              f"--port 0 for a free one"], (args, done.stderr)
            assert "Traceback" not in done.stderr and "uvicorn" not in done.stderr.lower()
    finally:
        holder.close()
