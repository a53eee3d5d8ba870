"""Shared fixtures: real parts only (STYLE.md rule 14).

* ``db_path``: a temp-file SQLite database path.
* ``mf``: a :class:`memfold.MemFold` on that file with a :class:`LogicalClock` and the
  whitespace :class:`WordCounter` (deterministic).
* ``llm_server``: a real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions shape,
  standing in for an LLM endpoint. Tests queue replies (text, an HTTP status, a delay) and read
  the requests it received.
"""

from __future__ import annotations

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import memfold

# the facade's background model load (issue 18, point 3) stays off in tests and in the processes they
# start; tests/test_scale.py turns it on where it is the subject
os.environ.setdefault("MEMFOLD_PRELOAD_EMBEDDER", "0")


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "memfold.db"


@pytest.fixture
def clock():
    return memfold.LogicalClock()


@pytest.fixture
def mf(db_path, clock):
    instance = memfold.MemFold(db_path, clock=clock, token_counter="words")
    yield instance
    instance.close()


class FakeLLMEndpoint:
    """State of the local chat-completions server: queued replies and received requests."""

    def __init__(self) -> None:
        self.replies: list[dict] = []
        self.requests: list[dict] = []
        self.default_reply: dict = {"content": "ok"}
        self.lock = threading.Lock()
        self.base_url = ""

    def queue(self, content: str | None = None, *, status: int = 200, delay: float = 0.0, raw: str | None = None) -> None:
        """Queue one reply: ``content`` as the assistant message, or a raw body / HTTP status / delay."""
        with self.lock:
            self.replies.append({"content": content, "status": status, "delay": delay, "raw": raw})

    def next_reply(self) -> dict:
        with self.lock:
            return self.replies.pop(0) if self.replies else dict(self.default_reply, status=200, delay=0.0, raw=None)


@pytest.fixture
def llm_server():
    state = FakeLLMEndpoint()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # keep test output clean
            pass

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            with state.lock:
                state.requests.append({"path": self.path, "body": body, "headers": dict(self.headers)})
            reply = state.next_reply()
            if reply["delay"]:
                time.sleep(reply["delay"])
            if reply["raw"] is not None:
                payload = reply["raw"].encode()
            else:
                payload = json.dumps(
                    {
                        "id": "cmpl-test",
                        "object": "chat.completion",
                        "model": body.get("model"),
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply["content"]}, "finish_reason": "stop"}],
                    }
                ).encode()
            try:
                self.send_response(reply["status"])
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    yield state
    server.shutdown()
    server.server_close()
