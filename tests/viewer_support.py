"""Shared by the viewer's tests (issue 19): a replayed database with every kind of thing the
viewer shows, the seed demo's database, and the viewer served by a real uvicorn on 127.0.0.1
(waited for by its ready callback, never by sleeping)."""

from __future__ import annotations

import contextlib
import hashlib
import re
import threading
from pathlib import Path
from typing import Iterator

from click.testing import CliRunner

from memfold import MemFold
from memfold.cli import cli

CONV = "sample-history"
SECRET = "4471"  # the sample's PIN turn, labelled secret by the replay
SECRET_FACT = "The account PIN hint is Lighthouse-77."
SECRET_RULE = "Read the security answer Lighthouse-88 back only to the account owner."
WINDOW = {"budget": 300, "hot_turns": 4}


def build_replayed_db(path: Path) -> Path:
    """``memfold replay --sample`` into ``path`` (words as tokens, budget 300, hot tail 4), then a
    protected record with a state history, one superseded protected record, a secret-labelled
    fact and protected record, and an eviction."""
    result = CliRunner().invoke(cli, ["replay", "--sample", "--db", str(path), "--tokens", "words", "--budget",
                                      str(WINDOW["budget"]), "--hot-turns", str(WINDOW["hot_turns"])])
    assert result.exit_code == 0, result.output
    with MemFold(path, embedder=None, token_counter="words") as mf:
        approval = mf.protect("Refund ORD-7781 only after the manager approves.", kind="approval",
                              conversation_id=CONV)
        mf.protected.satisfy(approval.id, cause="manager approved")
        old = mf.protect("Escalate billing disputes to Tier 2.", conversation_id=CONV)
        mf.supersede_protected(old.id, "Escalate billing disputes to Tier 3.", cause="new org chart")
        mf.protect(SECRET_RULE, conversation_id=CONV, labels=["secret"])
        mf.remember(CONV, "semantic", SECRET_FACT, key="user.pin_hint", labels=["secret"])
        mf.policy(CONV, "working", capacity=2)
        for text in ("scratch: checking the invoice", "scratch: waiting for the courier", "scratch: done"):
            mf.remember(CONV, "working", text, importance=0.1)
    return path


def shows(text: str, secret: str) -> bool:
    """Whether ``text`` holds ``secret`` other than as a few digits inside a longer number: the PIN
    ``4471`` shows in ``"It's 4471."``, ``<mark>4471</mark>`` or ``"\\n4471"``, but not in the
    digits of an unrelated number such as the score 0.999961594471015 or the time 1772504471."""
    return re.search(rf"(?<![0-9.]){re.escape(secret)}(?!\.?[0-9])", text) is not None


def build_seed_db(path: Path) -> Path:
    """The seed demo's database (``memfold demo --db``)."""
    result = CliRunner().invoke(cli, ["demo", "--db", str(path)])
    assert result.exit_code == 0, result.output
    return path


def digest(path: Path) -> str:
    """sha256 of the database file's bytes (its -wal too, when one is left)."""
    h = hashlib.sha256(Path(path).read_bytes())
    wal = Path(str(path) + "-wal")
    if wal.exists():
        h.update(wal.read_bytes())
    return h.hexdigest()


@contextlib.contextmanager
def served(path: Path, *, reader=None, keys=None, window=None, token_counter: str | None = None) -> Iterator[str]:
    """The viewer over ``path`` (opened read-only) on a free port; yields its base URL. The file is
    counted with the token counter it recorded (``words`` for the replayed sample, ``seed-words``
    for the seed demo) unless ``token_counter`` names another."""
    from memfold.integrations.viewer import make_server

    mf = MemFold(path, embedder=None, token_counter=token_counter, read_only=True)
    if window is None:
        window = mf.window.with_overrides(budget=WINDOW["budget"], hot_turns=WINDOW["hot_turns"])
    ready = threading.Event()
    urls: list[str] = []

    def on_ready(url: str) -> None:
        urls.append(url)
        ready.set()

    server = make_server(mf, port=0, reader=reader, keys=keys, window=window, on_ready=on_ready)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        assert ready.wait(60), "the viewer did not start"
        yield urls[0].rstrip("/")
    finally:
        server.should_exit = True
        thread.join(60)
        mf.close()
