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

#: the warning ``mf.conversation(new_id)`` gives without ``namespace=`` (issue 20, point 7: a typo'd id
#: must not silently start an empty conversation). Tests create conversations that way on purpose by
#: the hundred, so the suite ignores it; ``tests/test_api_naming.py`` asserts it with ``pytest.warns``
#: (which records every warning whatever the filters) and that a namespace given on purpose is silent.
#: No colon in the pattern: the ini syntax splits on colons; the message is matched from its start.
NEW_CONVERSATION_WARNING = r"conversation '.*' did not exist"


def pytest_configure(config):
    config.addinivalue_line("filterwarnings", f"ignore:{NEW_CONVERSATION_WARNING}:UserWarning")


# the facade's background model load (issue 18, point 3) stays off in tests and in the processes they
# start; tests/test_scale.py turns it on where it is the subject
os.environ.setdefault("MEMFOLD_PRELOAD_EMBEDDER", "0")
# numpy's BLAS keeps its threads in the suite (memfold sets one thread before its first background
# embedding: memory/embeddings_blas.py); results are the same either way, and the suite's many large
# embedding batches keep the speed they had; tests/test_blas_threads.py clears it where it is the subject
os.environ.setdefault("MEMFOLD_BLAS_THREADS", "keep")


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

    def queue(self, content: str | None = None, *, status: int = 200, delay: float = 0.0, raw: str | None = None,
              headers: dict[str, str] | None = None) -> None:
        """Queue one reply: ``content`` as the assistant message, or a raw body / HTTP status / delay,
        with extra response ``headers`` (``Retry-After``)."""
        with self.lock:
            self.replies.append({"content": content, "status": status, "delay": delay, "raw": raw,
                                 "headers": dict(headers or {})})

    def next_reply(self) -> dict:
        with self.lock:
            return self.replies.pop(0) if self.replies else dict(self.default_reply, status=200, delay=0.0, raw=None,
                                                                  headers={})


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
                for name, value in reply.get("headers", {}).items():
                    self.send_header(name, value)
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


# --- PostgreSQL (issue 17): a real server for the backend's tests ----------------------------------
#: set to ``skip`` to run without PostgreSQL (its tests are then skipped, saying why); otherwise a
#: server that cannot start makes every PostgreSQL test fail
PG_OPT_OUT = "MEMFOLD_TEST_PG"


class PostgresServer:
    """A PostgreSQL server for the session: ``MEMFOLD_TEST_PG_URL`` when set (a role that may
    create databases), else a ``pgserver`` (PostgreSQL 16 + pgvector) in a temp dir, started here
    and stopped at the end. :meth:`fresh_url` makes a new empty database per test."""

    def __init__(self) -> None:
        import os
        import tempfile

        self.server = None
        self.error: str | None = None
        self.count = 0
        url = os.environ.get("MEMFOLD_TEST_PG_URL")
        try:
            if not url:
                import pgserver

                # a folder of its own, not under pytest's basetemp: a concurrent pytest run prunes old basetemps
                self.base_dir = tempfile.mkdtemp(prefix="memfold-pg-")
                self.server = pgserver.get_server(os.path.join(self.base_dir, "pgdata"), cleanup_mode=None)
                url = self.server.get_uri()
            self.admin_url = url
            import psycopg

            with psycopg.connect(url, autocommit=True) as conn:
                if self.server is not None:  # a throw-away server: no durability needed, only speed
                    # and no autovacuum: its ANALYZE takes a transaction id, which moves the server's
                    # snapshot and so meta.state_version() between two reads of a test (the contract
                    # test of that value failed so once on a loaded machine)
                    for setting in ("fsync", "synchronous_commit", "full_page_writes", "autovacuum"):
                        conn.execute(f"ALTER SYSTEM SET {setting} = off")
                    conn.execute("SELECT pg_reload_conf()")
                conn.execute("DROP DATABASE IF EXISTS memfold_template")
                conn.execute("CREATE DATABASE memfold_template TEMPLATE template0 ENCODING 'UTF8' "
                             "LC_COLLATE 'C' LC_CTYPE 'C'")
                conn.execute("DROP DATABASE IF EXISTS memfold_migrated")
                conn.execute("CREATE DATABASE memfold_migrated TEMPLATE memfold_template")
            # migrating once and copying is 0.2 s a test instead of 0.8 s (no clock kind is recorded yet)
            from memfold.memory.storage import open_storage

            open_storage(self.url_for("memfold_migrated")).close()
        except Exception as exc:  # reported by every PostgreSQL test, which then fails
            self.error = f"PostgreSQL could not start: {type(exc).__name__}: {exc}"

    def url_for(self, dbname: str) -> str:
        from urllib.parse import urlsplit, urlunsplit

        parts = urlsplit(self.admin_url)
        return urlunsplit(parts._replace(path="/" + dbname))

    def fresh_url(self, *, migrated: bool = True) -> str:
        """A new database: a copy of a migrated one (no clock kind recorded yet), or with
        ``migrated=False`` of an empty one (UTF-8, C collation)."""
        import os

        import psycopg

        self.count += 1
        name = f"memfold_test_{os.getpid()}_{self.count}"
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name}")
            conn.execute(f"CREATE DATABASE {name} TEMPLATE {'memfold_migrated' if migrated else 'memfold_template'}")
        return self.url_for(name)

    def drop(self, url: str) -> None:
        import psycopg

        name = url.rsplit("/", 1)[1].split("?", 1)[0]
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def stop(self) -> None:
        if self.server is not None:
            import os
            import signal
            import time

            import psutil

            # an immediate shutdown (SIGQUIT): nothing on a throw-away server needs a checkpoint
            pid = int(open(os.path.join(self.base_dir, "pgdata", "postmaster.pid")).readline())
            os.kill(pid, signal.SIGQUIT)
            try:
                psutil.Process(pid).wait(30)
            except psutil.NoSuchProcess:
                pass
            # the data folder (GBs of WAL after many CREATE DATABASE) is removed in the background
            import subprocess

            subprocess.Popen(["rm", "-rf", self.base_dir], start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.fixture(scope="session")
def pg_server():
    import os

    if os.environ.get(PG_OPT_OUT) == "skip":
        pytest.skip(f"PostgreSQL tests opted out ({PG_OPT_OUT}=skip)")
    server = PostgresServer()
    yield server
    server.stop()


@pytest.fixture
def pg_url(pg_server):
    """The URL of a new, empty PostgreSQL database for this test, dropped afterwards."""
    if pg_server.error:
        pytest.fail(pg_server.error + f" (set {PG_OPT_OUT}=skip to run without it)")
    url = pg_server.fresh_url()
    yield url
    pg_server.drop(url)


@pytest.fixture
def pg_empty_url(pg_server):
    """The URL of a new PostgreSQL database holding nothing yet (not migrated), dropped afterwards."""
    if pg_server.error:
        pytest.fail(pg_server.error + f" (set {PG_OPT_OUT}=skip to run without it)")
    url = pg_server.fresh_url(migrated=False)
    yield url
    pg_server.drop(url)


@pytest.fixture(params=["sqlite", "postgres"])
def backend_target(request, tmp_path):
    """A database target on each backend: a SQLite file path, or a fresh PostgreSQL URL."""
    if request.param == "sqlite":
        return tmp_path / "memfold.db"
    return request.getfixturevalue("pg_url")


@pytest.fixture
def sqlite_path(tmp_path):
    """A temp-file SQLite path, for a test about the SQLite file itself in a module whose
    ``db_path`` runs on both backends."""
    return tmp_path / "memfold.db"


def database_dump(path) -> str:
    """The whole SQLite database as SQL text (every table's rows): equal before and after a refused
    call when nothing was written."""
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        return "\n".join(conn.iterdump())
    finally:
        conn.close()


def database_bytes(target) -> bytes:
    """Every byte a database keeps in its files: a SQLite file with its WAL (checkpointed first),
    or, for a ``postgresql://`` URL, every file of the database's folder on the server after a
    ``CHECKPOINT`` (read with ``pg_read_binary_file``, so it needs a superuser, as the test server
    has). PostgreSQL's WAL (``pg_wal``) is not read: it is the server's, shared by every
    database, and keeps old row images until recycled (README, "Running on PostgreSQL")."""
    from pathlib import Path

    from memfold.memory.storage import is_database_url

    if not is_database_url(target):
        import sqlite3

        conn = sqlite3.connect(target)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        out = b""
        for suffix in ("", "-wal", "-shm", "-journal"):
            p = Path(str(target) + suffix)
            if p.exists():
                out += p.read_bytes()
        return out
    import psycopg

    with psycopg.connect(str(target), autocommit=True) as conn:
        conn.execute("CHECKPOINT")
        oid = conn.execute("SELECT oid FROM pg_database WHERE datname = current_database()").fetchone()[0]
        folder = f"base/{oid}"
        names = [r[0] for r in conn.execute("SELECT pg_ls_dir(%s)", [folder]).fetchall()]
        out = b""
        for name in names:
            row = conn.execute("SELECT pg_read_binary_file(%s, true)", [f"{folder}/{name}"]).fetchone()
            out += row[0] or b""
        return out
