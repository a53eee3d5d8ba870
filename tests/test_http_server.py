"""``memfold serve`` (issue 16): the CLI command, and one session against a real uvicorn on
127.0.0.1 with httpx. The server runs as a subprocess on a free port (port 0; its port is read
from uvicorn's start line) and is waited for by polling its health route, never by sleeping.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from memfold import LogicalClock, MemFold
from memfold.cli import cli

DANA, EVE = "dana-key-0123456789abcdef", "eve-key-0123456789abcdef"
KEYS = {"keys": [{"name": "dana-bot", "key": DANA, "namespaces": ["acme/dana"]},
                 {"name": "eve-bot", "key": EVE, "namespaces": ["globex/eve"]}]}


def test_memfold_help_and_serve_help_do_not_import_the_web_stack():
    code = ("import sys\nfrom memfold.cli import cli\n"
            "for args in (['--help'], ['serve', '--help']):\n"
            "    try:\n        cli(args)\n    except SystemExit as exc:\n        assert exc.code == 0, exc.code\n"
            "loaded = sorted(m for m in ('fastapi', 'uvicorn', 'starlette', 'pydantic', 'memfold.integrations.http') "
            "if m in sys.modules)\nprint('LOADED', loaded)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "serve" in result.stdout and "LOADED []" in result.stdout


@pytest.fixture
def served_db(tmp_path):
    path = tmp_path / "served.db"
    with MemFold(path, clock=LogicalClock(), token_counter="words", embedder=None) as mf:
        eve = mf.conversation("eve-1", namespace="globex/eve")
        eve.append({"role": "user", "content": "Eve's order ORD-9000 is late."})
    return path


def test_serve_refuses_a_public_address_without_keys(served_db):
    result = CliRunner().invoke(cli, ["serve", str(served_db), "--host", "0.0.0.0", "--port", "0"])
    assert result.exit_code == 1
    assert "Error: refusing to serve on 0.0.0.0 without API keys" in result.output


def test_serve_refuses_bad_keys_and_a_missing_database(served_db, tmp_path):
    bad = tmp_path / "keys.json"
    bad.write_text(json.dumps({"keys": [{"name": "a", "key": "short", "namespaces": ["x"]}]}), encoding="utf-8")
    result = CliRunner().invoke(cli, ["serve", str(served_db), "--keys", str(bad)])
    assert result.exit_code == 1 and "at least 16 characters" in result.output
    result = CliRunner().invoke(cli, ["serve", str(served_db)], env={"MEMFOLD_API_KEYS": "{nope"})
    assert result.exit_code == 1 and "MEMFOLD_API_KEYS is not JSON" in result.output
    result = CliRunner().invoke(cli, ["serve", str(tmp_path / "missing.db")])
    assert result.exit_code == 1 and "no database at" in result.output


class Server:
    """``memfold serve`` in a subprocess; :meth:`start` returns once the health route answers."""

    def __init__(self, args: list[str]) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.pop("MEMFOLD_API_KEYS", None)
        self.proc = subprocess.Popen([sys.executable, "-c", "from memfold.cli import cli; cli()", "serve", *args],
                                     stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env)
        self.lines: queue.Queue[str] = queue.Queue()
        self.log: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.proc.stderr:  # type: ignore[union-attr]
            self.lines.put(line)
        self.lines.put("")  # end of output

    def start(self, deadline_s: float = 120.0) -> str:
        deadline = time.monotonic() + deadline_s
        port = None
        while port is None:
            line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            self.log.append(line)
            if line == "":
                raise AssertionError("memfold serve exited before it listened:\n" + "".join(self.log))
            match = re.search(r"Uvicorn running on http://127\.0\.0\.1:(\d+)", line)
            port = int(match.group(1)) if match else None
        base = f"http://127.0.0.1:{port}"
        while True:  # uvicorn logs before its first accept; poll the health route until it answers
            try:
                if httpx.get(f"{base}/v1/health", timeout=5).status_code == 200:
                    return base
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
            if self.proc.poll() is not None:
                raise AssertionError("memfold serve exited:\n" + "".join(self.log))

    def stop(self) -> int:
        self.proc.terminate()
        return self.proc.wait(timeout=60)


def test_a_real_uvicorn_serves_keys_namespaces_and_idempotent_appends(served_db, tmp_path):
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps(KEYS), encoding="utf-8")
    server = Server([str(served_db), "--port", "0", "--keys", str(keys), "--embedder", "none",
                     "--log-level", "info"])
    try:
        base = server.start()
        assert any("serving" in line and "2 API keys" in line for line in server.log)
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {DANA}"}, timeout=30) as dana:
            assert httpx.get(f"{base}/v1/conversations", timeout=30).status_code == 401
            made = dana.post("/v1/conversations", json={"id": "ticket-42"})
            assert made.status_code == 201 and made.json()["namespace"] == "acme/dana"
            # four clients retry one append at once: exactly one writes, all get the same id
            body = {"messages": [{"role": "user", "content": "My order ORD-3300 arrived broken."}]}

            def append(_: int) -> httpx.Response:
                with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {DANA}",
                                                          "Idempotency-Key": "msg-1"}, timeout=30) as c:
                    return c.post("/v1/conversations/ticket-42/turns", json=body)

            with ThreadPoolExecutor(4) as pool:
                answers = list(pool.map(append, range(4)))
            assert sorted(a.status_code for a in answers) == [200, 200, 200, 201]
            assert len({tuple(a.json()["turn_ids"]) for a in answers}) == 1
            dana.post("/v1/conversations/ticket-42/turns", json={"messages": [
                {"role": "assistant", "content": "Sorry! A replacement ships May 3."}]})
            turns = dana.get("/v1/conversations/ticket-42/turns").json()["turns"]
            assert [t["content"] for t in turns] == ["My order ORD-3300 arrived broken.", "Sorry! A replacement ships May 3."]
            ctx = dana.get("/v1/conversations/ticket-42/context", params={"budget": 2000}).json()
            assert [m["content"] for m in ctx["messages"]][-1] == "Sorry! A replacement ships May 3."
            hits = dana.post("/v1/search", json={"query": "replacement"}).json()["hits"]
            assert hits and hits[0]["conversation_id"] == "ticket-42"
            # the other tenant stays invisible and untouchable
            assert dana.get("/v1/conversations/eve-1").status_code == 404
            denied = dana.get("/v1/memories", params={"namespace": "globex/eve"})
            assert denied.status_code == 403 and denied.json()["type"] == "PermissionDenied"
        with httpx.Client(base_url=base, headers={"X-API-Key": EVE}, timeout=30) as eve:
            assert [c["id"] for c in eve.get("/v1/conversations").json()["conversations"]] == ["eve-1"]
    finally:
        server.stop()
    with MemFold(served_db) as mf:  # everything the server wrote is in the file
        assert len(mf.conversation("ticket-42").history()) == 2


README = Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\s*$", re.S | re.M)


def readme_session() -> tuple[str, str]:
    """The bash block of the README's HTTP section and the text block of what it prints."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("<!-- section: http -->"):text.index("<!-- /section: http -->")]
    blocks = FENCE.findall(section)
    bash = next(body for lang, body in blocks if lang == "bash")
    printed = next(body for lang, body in blocks if lang == "text")
    return bash, printed


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_readme_curl_session_prints_the_lines_it_shows(tmp_path):
    script, expected = readme_session()
    assert "memfold serve" in script and "8765" in script
    bin_dir = tmp_path / "bin"  # `memfold` is this interpreter's memfold, whatever else is on PATH
    bin_dir.mkdir()
    shim = bin_dir / "memfold"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "from memfold.cli import cli; cli()" "$@"\n')
    shim.chmod(0o755)
    work = tmp_path / "session"
    work.mkdir()
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env.pop("MEMFOLD_API_KEYS", None)
    env.pop("MEMFOLD_DB", None)
    proc = subprocess.Popen(["bash", "-e", "-c", script.replace("8765", str(free_port()))], cwd=work, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=300)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)  # the server too, if the script stopped early
    assert proc.returncode == 0, err
    assert out == expected, f"README's HTTP session printed other lines:\n{out}\nstderr:\n{err}"
