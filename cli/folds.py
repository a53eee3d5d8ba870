"""``memfold`` commands for the folds the model chooses and strategy frames (issue 14).

``fold`` (fold a closed unit of turns), ``strategy`` (enter, report, yield, list frames) and
``stats`` (the fold counters of one conversation or every one).
"""

from __future__ import annotations

from typing import Any

import click

from .core import cli, db_argument, emit_json, json_option, open_db


def conversation_option(fn):
    """The required ``--conversation/-c ID`` option."""
    return click.option("--conversation", "-c", "conversation_id", required=True, help="Conversation id.")(fn)


@cli.command()
@db_argument
@conversation_option
@click.argument("first", type=int, metavar="FROM")
@click.argument("last", type=int, metavar="TO")
@json_option
def fold(db: str, conversation_id: str, first: int, last: int, as_json: bool) -> None:
    """Fold the closed unit of turns FROM..TO (turn numbers as the fold card lists them) into a
    host-built result: the tool calls by name, the paths, every user turn verbatim and the closing
    message. No model is called; `memfold expand DB CARD --turns` reads the turns back."""
    mf = open_db(db)
    outcome = mf.conversation(conversation_id, create=False).fold_unit(first, last)
    if as_json:
        emit_json(outcome.to_dict())
    else:
        click.echo(outcome.line())
        click.echo(outcome.text)
    mf.close()


@cli.command()
@db_argument
@conversation_option
@click.argument("action", type=click.Choice(["enter", "report", "yield", "list"]))
@click.argument("words", nargs=-1)
@json_option
def strategy(db: str, conversation_id: str, action: str, words: tuple[str, ...], as_json: bool) -> None:
    """Strategy frames: `enter NAME BRIEF...` opens one (its standing rules are appended at the
    tail), `report TEXT...` replaces the open frame's report, `yield [REASON...]` folds the branch
    to the last report, `list` shows the frames."""
    mf = open_db(db)
    conv = mf.conversation(conversation_id, create=False)
    text = " ".join(words)
    if action == "list":
        frames = conv.strategy_frames()
        if as_json:
            emit_json([f.__dict__ for f in frames])
        else:
            for f in frames:
                click.echo(f"f{f.id} {f.name} [{f.status}] from #{f.start_seq}, {f.reports} reports"
                           + (f": {f.report}" if f.report else ""))
            if not frames:
                click.echo("no strategy frames")
            for message in conv.strategy_book().broken.values():  # a broken file disables only itself
                click.echo(f"broken: {message} (the other strategies work)")
        mf.close()
        return
    if action == "enter":
        if not words:
            raise click.UsageError("enter needs a strategy name: memfold strategy DB -c ID enter NAME BRIEF...")
        outcome = conv.strategy_enter(words[0], " ".join(words[1:]))
    elif action == "report":
        outcome = conv.strategy_report(text)
    else:
        outcome = conv.strategy_yield(text)
    if as_json:
        emit_json(outcome.to_dict())
    else:
        click.echo(outcome.message)
    mf.close()


STAT_LABELS = (("proposed", "proposed"), ("accepted", "accepted"), ("refused", "refused"),
               ("read_back", "read back"), ("reruns", "re-runs"))


def stats_line(conversation_id: str, stats: dict[str, Any]) -> str:
    """One human line of a conversation's fold counters."""
    counts = ", ".join(f"{label} {stats[key]}" for key, label in STAT_LABELS)
    kinds = stats["folds"]
    return (f"{conversation_id}: folds {counts}; made: {kinds['unit']} units, {kinds['strategy']} strategy yields, "
            f"{kinds['receipt']} receipts; strategies {stats['strategies']} ({stats['open_frames']} open), "
            f"reports {stats['reports']}")


@cli.command()
@db_argument
@click.option("--conversation", "-c", "conversation_id", default=None, help="One conversation (default: every one).")
@json_option
def stats(db: str, conversation_id: str | None, as_json: bool) -> None:
    """The fold counters (issue 14): fold cards proposed, folds accepted and refused, reads back
    into folded ranges, tool calls re-run after a fold, folds by kind, strategy frames and reports."""
    mf = open_db(db)
    ids = [conversation_id] if conversation_id else mf.conversations()
    out = {cid: mf.conversation(cid, create=False).fold_stats() for cid in ids}
    if as_json:
        emit_json(out)
    else:
        for cid, s in out.items():
            click.echo(stats_line(cid, s))
        if not out:
            click.echo("no conversations")
    mf.close()
