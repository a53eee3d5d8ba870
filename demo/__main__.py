"""``python -m memfold.demo``: the same as ``memfold demo`` (same options, same output).

Both run :mod:`memfold.demo.program`; this entry point sits in the demo layer and so never
imports the CLI. A library error is one ``Error: ...`` line on stderr, exit 1 (with ``--json``
also ``{"error", "type"}`` on stdout), as with ``memfold``.
"""

from __future__ import annotations

import json

import click

from .. import MemfoldError
from .program import HELP, options, play, show


@click.command(help=HELP, context_settings={"help_option_names": ["-h", "--help"]})
@options
def main(db_path: str | None, plot_path: str | None, use_llm: bool, as_json: bool) -> None:
    """Play the demo and print it (the help shown is :data:`memfold.demo.program.HELP`)."""
    try:
        run = play(db_path, plot_path, llm=use_llm)
    except MemfoldError as exc:
        if as_json:
            click.echo(json.dumps({"error": str(exc), "type": type(exc).__name__}, ensure_ascii=False))
        raise click.ClickException(str(exc)) from None
    show(run, as_json=as_json)


if __name__ == "__main__":  # pragma: no cover - exercised through a subprocess in tests
    main(prog_name="python -m memfold.demo")
