"""``memfold worker``: the background compaction worker (issue 13), until SIGTERM or SIGINT.

A thin shell over :meth:`memfold.MemFold.worker`: it takes the compaction notes appends leave past
the soft watermark, under a lease per conversation, and folds off the hot path. Human output is
one status line per note handled; ``--json`` prints one JSON object per line (``started``,
``note`` with the running figures, ``stopped``).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from ..memory.signals import StopSignals
from .core import cli, db_argument, json_option, open_db
from .window import window_options


@cli.command()
@db_argument
@click.option("--lease-seconds", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
              help="How long a lease on a conversation lasts; a killed worker's lease expires after this.")
@click.option("--poll", "poll_seconds", type=click.FloatRange(min=0.01), default=0.25, show_default=True,
              help="Seconds to wait between sweeps when no note is due.")
@click.option("--holder", default=None, help="This worker's name in the lease table (default host:pid:thread).")
@click.option("--cache-warm-seconds", type=click.FloatRange(min=0), default=300.0, show_default=True,
              help="Leave a conversation whose last model call is younger than this (its prompt prefix is "
                   "probably cached) until then, unless it is past the hard watermark.")
@click.option("--once", is_flag=True, help="Handle the notes due now, then exit.")
@window_options
@json_option
def worker(db: str, lease_seconds: float, poll_seconds: float, holder: str | None, cache_warm_seconds: float,
           once: bool, as_json: bool,
           **settings: Any) -> None:
    """Fold conversations in the background until SIGINT or SIGTERM (then stop cleanly, exit 0).

    Run it beside a bot backend on the same DB: appends past the soft watermark leave a note and
    return at once; this worker folds them. Several workers may share one file."""
    mf = open_db(db)
    mf.window = mf.window.with_overrides(settings)

    def say(event: str, data: dict[str, Any], line: str) -> None:
        if as_json:
            click.echo(json.dumps({"event": event, **data}, ensure_ascii=False))
        else:
            click.echo(line)
        sys.stdout.flush()

    def on_note(info: dict[str, Any]) -> None:
        say("note", info, f"{info['conversation']}: {info['outcome']} | {w.stats.status_line()}")

    w = mf.worker(lease_seconds=lease_seconds, poll_seconds=poll_seconds, holder=holder,
                  cache_warm_seconds=cache_warm_seconds, progress=on_note)
    with StopSignals() as stop:  # the handlers take no lock (see memory/signals.py)
        say("started", {"db": db, "holder": w.holder, "pid": os.getpid()},
            f"worker {w.holder} on {db} (stop with Ctrl-C or SIGTERM)")
        if once:
            w.run_once()
        else:
            w.run(stop)
    mf.close()
    say("stopped", w.stats.to_dict(), f"stopped: {w.stats.status_line()}")
