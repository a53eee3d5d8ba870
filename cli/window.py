"""``memfold`` commands on the window: the compiled context, compaction, recall and the meter (issue 4).

``context``, ``compact``, ``search``, ``describe``, ``expand`` and ``window``.
"""

from __future__ import annotations

import json
from typing import Any

import click

from .core import ReportedError, cli, db_argument, emit_json, json_option, open_db, plural, reader_from, reader_option


def window_options(fn):
    """Window settings for one call; unset options keep the library defaults."""
    options = [
        click.option("--budget", type=click.IntRange(min=1), default=None, help="Budget in tokens (the model's window)."),
        click.option("--reserve", "output_reserve", type=click.IntRange(min=0), default=None,
                     help="Tokens kept free for the answer."),
        click.option("--hot-turns", type=click.IntRange(min=0), default=None, help="Newest turns kept verbatim."),
        click.option("--leaf-chunk", "leaf_chunk_tokens", type=click.IntRange(min=1), default=None,
                     help="Max source tokens per depth-1 card."),
        click.option("--card-target", "card_target_tokens", type=click.IntRange(min=1), default=None,
                     help="Summary size to aim for, in tokens."),
        click.option("--fanin", "rollup_fanin", type=click.IntRange(min=2), default=None,
                     help="Same-depth cards per roll-up."),
        click.option("--soft", "soft_watermark", type=float, default=None, help="Soft watermark (fraction)."),
        click.option("--hard", "hard_watermark", type=float, default=None, help="Hard watermark (fraction)."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def message_lines(message: dict[str, Any]) -> str:
    """One compiled-context message for people: ``role: text``, a summary card as
    ``card [c4]: text``, and every further line of a message indented with ``  | `` so a card's
    or a turn's second line (``assistant: call calculator(...)``) never reads as a turn of its own."""
    import re

    content = message.get("content") or ""
    card = re.match(r"\[(c\d+)\] ?", content) if message["role"] == "system" else None
    if card:
        who, content = f"card [{card.group(1)}]", content[card.end():]
    else:
        who = message["role"] + (f"({message['name']})" if message.get("name") else "")
    calls = f" tool_calls={json.dumps(message['tool_calls'], ensure_ascii=False)}" if message.get("tool_calls") else ""
    first, *more = (content + calls).split("\n")
    return "\n".join([f"{who}: {first}", *(f"  | {line}" for line in more)])


def _card_list(cards: list[str], most: int = 12) -> str:
    """``c1 c2 c3``, or for a long list its first and last five and the count (a compaction of
    3,000 turns printed 632 ids on one line): ``--json`` lists them all."""
    if len(cards) <= most:
        return " ".join(cards)
    return f"{' '.join(cards[:5])} ... {' '.join(cards[-5:])} ({len(cards)} in all; --json lists them)"


def conversation_option(fn):
    """The required ``--conversation/-c ID`` option."""
    return click.option("--conversation", "-c", "conversation_id", required=True, help="Conversation id.")(fn)


@cli.command()
@db_argument
@conversation_option
@window_options
@reader_option
@json_option
def context(db: str, conversation_id: str, reader_labels: tuple[str, ...], as_json: bool, **settings: Any) -> None:
    """Print the compiled context (compacting first if it is over the hard watermark); with
    --reader, the context compiled for that reader (turns, cards and protected records it may
    not see are left out)."""
    reader = reader_from(reader_labels)
    mf = open_db(db)
    conv = mf.conversation(conversation_id, create=False)
    ctx = conv.context(reader=reader, **settings)
    if as_json:
        emit_json(ctx.to_dict())
    else:
        for m in ctx.messages:
            click.echo(message_lines(m))
        parts = ", ".join(f"{k} {v}" for k, v in ctx.sections.items())
        click.echo(f"-- {ctx.total_tokens}/{ctx.usable_tokens} tokens ({parts})")
    mf.close()


@cli.command()
@db_argument
@conversation_option
@click.option("--target", "target_tokens", type=click.IntRange(min=0), default=None,
              help="Fold down to this many tokens (default: the soft watermark).")
@window_options
@json_option
def compact(db: str, conversation_id: str, target_tokens: int | None, as_json: bool, **settings: Any) -> None:
    """Fold old turns into summary cards now."""
    mf = open_db(db)
    report = mf.conversation(conversation_id, create=False).compact(target_tokens=target_tokens, **settings)
    if as_json:
        emit_json(report.to_dict())
    else:
        click.echo(f"{report.before_tokens} -> {report.after_tokens}/{report.usable_tokens} tokens: "
                   f"{report.leaf_folds} fold(s), {report.rollups} roll-up(s), {report.forced_rollups} forced, "
                   f"{len(report.failures)} summarizer failure(s)"
                   + (f"; new cards {_card_list(report.cards)}" if report.cards else ""))
        for failure in report.failures:
            click.echo(f"failed: turns {failure['first_seq']}-{failure['last_seq']}: {failure['error']}", err=True)
    mf.close()


@cli.command()
@db_argument
@click.argument("query")
@conversation_option
@click.option("--limit", "-k", "k", type=click.IntRange(min=1, max=100), default=10, show_default=True,
              help="Maximum hits (-k is the older spelling).")
@click.option("--kind", type=click.Choice(["turn", "card"]), default=None, help="Only turns or only cards.")
@click.option("--embedder", default="auto", show_default=True,
              help="Ranking: 'auto' (hybrid BM25 + the file's embedding model, else all-MiniLM-L6-v2), "
                   "'none' (BM25 only, no model load), 'hashing', or a local model path.")
@reader_option
@json_option
def search(db: str, query: str, conversation_id: str, k: int, kind: str | None, embedder: str,
           reader_labels: tuple[str, ...], as_json: bool) -> None:
    """Search a conversation's archived turns and summary cards for QUERY.

    Any word of QUERY may match and more matches rank higher: BM25 with prefix matching (pay
    finds payment), stop words ignored and support from neighbouring turns; hybrid with
    embeddings unless --embedder none. With --reader, hits it may not see are left out.
    Scores (--json) are higher-is-better, as everywhere in memfold."""
    reader = reader_from(reader_labels)
    mf = open_db(db, embedder=embedder)
    hits = mf.conversation(conversation_id, create=False).search(query, k, {"kind": kind} if kind else None,
                                                                  reader=reader)
    if as_json:
        emit_json([h.to_dict() for h in hits])
    else:
        for h in hits:
            click.echo(h.line())
        if not hits:
            click.echo("no matches")
    mf.close()


@cli.command()
@db_argument
@click.argument("card_id")
@conversation_option
@reader_option
@json_option
def describe(db: str, card_id: str, conversation_id: str, reader_labels: tuple[str, ...], as_json: bool) -> None:
    """Describe summary card CARD_ID (c12): depth, span, time range, children, tokens (with
    --reader: an error if that reader may not see it)."""
    reader = reader_from(reader_labels)
    mf = open_db(db)
    info = mf.conversation(conversation_id, create=False).describe(card_id, reader=reader)
    if as_json:
        emit_json(info)
    elif info["kind"] == "turn":
        click.echo(f"{info['ref']}: turn {info['seq']} ({info['role']}), {info['tokens']} tokens, "
                   f"at {mf.clock.format(info['created_at'])}, in cards {' '.join(info['parents']) or '-'}")
    else:
        click.echo(f"{info['ref']}: depth {info['depth']}, turns {info['first_seq']}-{info['last_seq']} "
                   f"(t{info['first_turn_id']}..t{info['last_turn_id']}), {mf.clock.format(info['start_at'])}.."
                   f"{mf.clock.format(info['end_at'])}, {info['tokens']} tokens from {info['source_tokens']}, "
                   f"{info['summarizer']}")
        click.echo(f"children: {' '.join(info['children'])}")
    mf.close()


@cli.command()
@db_argument
@click.argument("card_id")
@conversation_option
@click.option("--turns", "to_turns", is_flag=True, help="Down to every verbatim turn the card covers.")
@reader_option
@json_option
def expand(db: str, card_id: str, conversation_id: str, to_turns: bool, reader_labels: tuple[str, ...],
           as_json: bool) -> None:
    """Print the children of summary card CARD_ID (c12), or a whole turn (t34); with --reader,
    children it may not see are left out (and an item it may not see is an error)."""
    from ..window.recall import format_item

    reader = reader_from(reader_labels)
    mf = open_db(db)
    items = mf.conversation(conversation_id, create=False).expand(card_id, to_turns=to_turns, reader=reader)
    if as_json:
        emit_json([i.to_dict() for i in items])
    else:
        for item in items:
            click.echo(format_item(item))
    mf.close()


@cli.command()
@db_argument
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@conversation_option
@click.option("--namespace", "-n", default=None,
              help="Namespace for a new conversation (default: default). Given for an existing conversation, "
                   "it must be that conversation's namespace.")
@window_options
@json_option
def window(db: str, file: str, conversation_id: str, namespace: str | None, as_json: bool, **settings: Any) -> None:
    """Append FILE (chat-messages JSONL) turn by turn, printing the window meter after each turn.

    A line reads ``turn 4: window 41/40 OVER -> compacted -> 29/40``: the compiled context's
    tokens over the usable budget after the append, and after compaction when one ran. Turns go
    through the conversation's append, so standing instructions reach the protected channel
    exactly as with ``ingest``. When compaction cannot bring a turn within the budget, its line
    ends ``STILL OVER: ...`` naming what needs the room, a summary line follows at the end and the
    command exits 1 (every turn is still appended and kept). A bad line appends nothing.
    """
    mf = open_db(db)
    readings = mf.meter_jsonl(conversation_id, file, namespace=namespace,
                              on_reading=None if as_json else (lambda r: click.echo(_meter_line(r))), **settings)
    if as_json:
        emit_json([r.to_dict() for r in readings])
    mf.close()
    over = [r.turn for r in readings if r.still_over is not None]
    if over:
        usable = readings[-1].usable
        raise (ReportedError if as_json else click.ClickException)(
            f"{plural(len(over), 'turn')} of {len(readings)} stayed over the {usable}-token budget after compaction "
            f"(turn{'s' * (len(over) != 1)} {', '.join(map(str, over))}): raise --budget or lower --hot-turns"
        )


def _meter_line(reading) -> str:
    """One window meter line for a :class:`~memfold.MeterReading`: ``turn 7: window 42/40 OVER ->
    compacted -> 35/40``, and when compaction could not get within the budget ``... STILL OVER:
    hot turns 30 + ... need 45``."""
    line = f"turn {reading.turn}: window {reading.tokens}/{reading.usable}"
    if reading.state == "over":
        line += " OVER"
    elif reading.state == "due":
        line += " due"
    if reading.after is not None:
        line += f" -> compacted -> {reading.after}/{reading.usable}"
    need = reading.still_over
    if need:
        names = (("hot_turns", "hot turns"), ("system", "system turn"), ("system_note", "system note"),
                 ("protected", "protected"), ("older", "cards and older turns"))
        parts = " + ".join(f"{label} {need[key]}" for key, label in names if need[key])
        line += f" STILL OVER: {parts} need {need['total']}"
        if reading.failures:
            line += f" ({plural(reading.failures, 'summarizer failure')})"
    return line
