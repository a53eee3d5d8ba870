"""``memfold view``: the browser viewer of the window, the card tree and the memories (issue 19).

Imports its integration (:mod:`memfold.integrations.viewer`) only when it runs, so ``memfold
--help`` never loads FastAPI or uvicorn. The database is opened read-only: the viewer never
writes (not even access counts).
"""

from __future__ import annotations

import os
import tempfile

import click

from .. import InvalidInput
from .core import cli, ensure_port_free, open_db


def _exit_on_sigterm() -> None:
    """Turn SIGTERM into ``SystemExit(143)`` so ``finally`` blocks run. uvicorn catches SIGTERM and
    SIGINT while it serves, shuts down, then raises the signal again with the previous handler:
    Python's default for SIGTERM ends the process on the spot, leaving the scratch folder behind,
    while SIGINT's raises KeyboardInterrupt, which unwinds. Only the main thread may set handlers."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
        def stop(signum, frame):
            raise SystemExit(128 + signum)

        signal.signal(signal.SIGTERM, stop)


@cli.command(name="view")
@click.argument("db", required=False, envvar="MEMFOLD_DB")
@click.option("--reader", "reader_labels", multiple=True, metavar="LABEL",
              help="A label the viewer's reader holds (repeatable). Without --reader (or --owner) the reader "
                   "holds no label: labelled turns (secrets) stay hidden.")
@click.option("--owner", is_flag=True, help="View as the database owner, who sees every label (not with --reader).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind. Anything but loopback needs API keys (--keys or MEMFOLD_API_KEYS).")
@click.option("--port", type=click.IntRange(0, 65535), default=8700, show_default=True,
              help="TCP port (0 picks a free one).")
@click.option("--keys", "keys_path", type=click.Path(dir_okay=False), default=None,
              help="JSON file of API keys (as for memfold serve): the page then asks for one, and a key's labels "
                   "are cut down to the viewer's reader.")
@click.option("--open", "open_browser", is_flag=True, help="Open the page in a browser, where one exists.")
@click.option("--budget", type=click.IntRange(min=1), default=None, help="Default budget of the views (tokens).")
@click.option("--output-reserve", type=click.IntRange(min=0), default=None, help="Default output reserve (tokens).")
@click.option("--hot-turns", type=click.IntRange(min=0), default=None, help="Default hot tail (turns).")
@click.option("--tokens", default=None, help="Token counter (default: the one recorded in the file).")
@click.option("--seed", is_flag=True,
              help="Play the seed demo into a temporary file and view it (its window: 40 words, hot tail 2; "
                   "its words counted as the demo counts them, 'seed-words').")
@click.option("--embedder", default="none", show_default=True,
              help="Search ranking: 'none' (BM25 only, no model load), 'auto', 'hashing' or a local model path.")
@click.option("--log-level", type=click.Choice(["critical", "error", "warning", "info", "debug"]), default="warning",
              show_default=True, help="uvicorn's log level.")
def view(db: str | None, reader_labels: tuple[str, ...], owner: bool, host: str, port: int, keys_path: str | None,
         open_browser: bool, budget: int | None, output_reserve: int | None, hot_turns: int | None,
         tokens: str | None, seed: bool, embedder: str, log_level: str) -> None:
    """Open a local web page showing DB: the window as a strip and a card tree down to the verbatim
    turns, the compiled context (now and replayed at turn N), the memories with their score
    factors, supersession chains, evictions, consolidation runs, the protected channel, and a
    growth demo that plays a conversation turn by turn.

    Read-only: the database is opened so that every write is refused. Prints the URL; Ctrl-C
    stops it. Needs the server extra: pip install 'memfold[server]'."""
    if owner and reader_labels:
        raise InvalidInput("--owner sees every label; it cannot be combined with --reader")
    if seed and db:
        raise InvalidInput("--seed views the seed demo's own temporary database: give DB or --seed, not both")
    if not seed and not db:
        raise InvalidInput("give the database file DB (or MEMFOLD_DB), or --seed for the seed demo")
    try:
        from ..integrations.http import check_bind, load_keys
        from ..integrations.viewer import serve
    except ImportError as exc:
        raise click.ClickException(f"memfold view needs the server extra: pip install 'memfold[server]' ({exc})")
    keys = load_keys(keys_path)
    check_bind(host, keys)
    ensure_port_free(host, port)
    window = None
    scratch = None
    if seed:
        from ..demo.program import WINDOW, play

        _exit_on_sigterm()  # so the scratch folder is removed on SIGTERM too, not only on Ctrl-C
        scratch = tempfile.TemporaryDirectory(prefix="memfold-view-")
        try:
            db = os.path.join(scratch.name, "seed.db")
            play(db)
        except BaseException:
            scratch.cleanup()
            raise
        window = WINDOW
        # no --tokens: the counter the demo recorded in the file ('seed-words': a card's [cN] id is
        # not counted), so the views replay the demo's meter; 'words' would count one more per card
    try:
        mf = open_db(db, embedder=embedder, read_only=True, **({"token_counter": tokens} if tokens else {}))
    except BaseException:
        if scratch is not None:
            scratch.cleanup()
        raise
    try:
        base = window or mf.window
        window = base.with_overrides(budget=budget, output_reserve=output_reserve, hot_turns=hot_turns)
        reader = None if owner else [label for label in reader_labels if label]
        who = "the owner (every label)" if reader is None else (
            f"a reader holding {', '.join(reader)}" if reader else "a reader holding no label")

        def ready(url: str) -> None:
            auth = "the page asks for an API key" if keys else "no API keys: loopback only"
            click.echo(f"memfold view: {url} ({db}, read-only, as {who}; {auth}; Ctrl-C stops)")
            if open_browser:
                import webbrowser

                if not webbrowser.open(url):
                    click.echo("memfold view: no browser found here; open the URL yourself", err=True)

        serve(mf, host=host, port=port, reader=reader, keys=keys, window=window, log_level=log_level, on_ready=ready)
    finally:
        mf.close()
        if scratch is not None:
            scratch.cleanup()
