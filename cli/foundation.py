"""``memfold`` commands on the foundation: the file, its clock, conversations and records.

``init``, ``clock``, ``ingest``, ``history``, ``export``, ``remember`` and ``memories``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from .. import InvalidInput
from .core import (
    check_output_path,
    cli,
    db_argument,
    emit_json,
    format_links,
    format_record,
    json_option,
    open_db,
    parse_time,
    plural,
    reader_from,
    reader_option,
)


@cli.command()
@db_argument
@click.option("--clock", type=click.Choice(["system", "logical"]), default=None,
              help="Clock kind recorded in a new file: real UTC time (default) or integer ticks. "
                   "An existing file keeps its own.")
@click.option("--tokens", "token_counter", default=None,
              help="Token counter for a new file: cl100k_base (default), o200k_base or words. "
                   "An existing file keeps its own.")
@json_option
def init(db: str, clock: str | None, token_counter: str | None, as_json: bool) -> None:
    """Create (or upgrade) the database file DB.

    On a file that is already a memfold database nothing is made anew: it says so and what the
    file holds (conversations, turns, cards, memory and protected records). An existing file keeps
    its clock and token counter: --clock or --tokens naming others is refused, nothing written."""
    from .. import LogicalClock, SystemClock, make_token_counter
    from ..memory.paths import is_database_url

    wanted = None if token_counter is None else make_token_counter(token_counter)  # a bad name: refused first
    existed = not is_database_url(db) and os.path.isfile(db) and os.path.getsize(db) > 0
    chosen = None if clock is None else (LogicalClock() if clock == "logical" else SystemClock())
    mf = open_db(db, must_exist=False, clock=chosen, token_counter=None if existed else wanted)
    try:
        info: dict[str, Any] = {"db": db, "schema_version": mf.schema_version(), "clock": mf.clock.kind,
                                "token_counter": mf.token_counter.id}
        if existed and wanted is not None and wanted.id != mf.token_counter.id:
            raise InvalidInput(f"{db} already exists and counts tokens with {mf.token_counter.id}: --tokens "
                               f"{token_counter} cannot change that (leave --tokens out, or init a new file)")
        holds = mf.holdings()
        existed = existed or any(holds.values())  # a server database that already held something
        info.update(created=not existed, holds=holds)
    finally:
        mf.close()
    if as_json:
        emit_json(info)
        return
    settings = (f"schema version {info['schema_version']}, {info['clock']} clock, "
                f"tokens counted with {info['token_counter']}")
    if not existed:
        click.echo(f"initialised {db} ({settings})")
        return
    held = ", ".join(plural(n, name.replace("_", " ").rstrip("s")) for name, n in holds.items())
    click.echo(f"{db} already existed: nothing was reset ({settings}); it holds {held}")


@cli.command()
@db_argument
@click.option("--advance", type=click.IntRange(min=0), default=None,
              help="Logical clock only: move it forward this many ticks (remembered in the file).")
@json_option
def clock(db: str, advance: int | None, as_json: bool) -> None:
    """Show the database's clock (kind and current time); --advance moves a logical clock on.

    Each CLI command is its own process: a logical clock resumes from the newest time stored in
    the file, so advancing it here is how ticks pass between commands (decay, deadlines).
    """
    mf = open_db(db)
    if advance is not None:
        mf.advance_clock(advance)
    info = {"clock": mf.clock.kind, "unit": mf.clock.unit, "now": mf.clock.now(),
            "now_text": mf.clock.format(mf.clock.now())}
    mf.close()
    if as_json:
        emit_json(info)
    else:
        click.echo(f"{info['clock']} clock at {info['now_text']}")


@cli.command()
@db_argument
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--conversation", "-c", "conversation_id", required=True, help="Conversation id to append to.")
@click.option("--namespace", "-n", default=None,
              help="Namespace for a new conversation (default: default). Given for an existing conversation, "
                   "it must be that conversation's namespace.")
@click.option("--label", "labels", multiple=True,
              help="Access label of a new conversation (repeatable): every turn appended to it carries it. "
                   "Default: the conversation_labels of the file's lines (an export of a labelled conversation). "
                   "Given for an existing conversation, they must be its labels.")
@json_option
def ingest(db: str, file: str, conversation_id: str, namespace: str | None, labels: tuple[str, ...],
           as_json: bool) -> None:
    """Append every message of FILE (OpenAI chat-messages JSONL) to a conversation, all or nothing.

    An export of a labelled conversation names its labels on every line (conversation_labels): a
    new conversation gets them, an existing one must have them."""
    mf = open_db(db)
    bar_state: dict[str, Any] = {}

    def progress(done: int, total: int) -> None:
        if total < 500:
            return
        if "bar" not in bar_state:
            bar_state["bar"] = click.progressbar(length=total, label="ingesting", file=sys.stderr)
            bar_state["bar"].__enter__()
            bar_state["done"] = 0
        bar_state["bar"].update(done - bar_state["done"])
        bar_state["done"] = done

    try:
        ids = mf.ingest_jsonl(conversation_id, file, namespace=namespace, labels=list(labels) if labels else None,
                              progress=progress)
    finally:
        if "bar" in bar_state:
            bar_state["bar"].__exit__(None, None, None)
    mf.close()
    if as_json:
        emit_json({"conversation": conversation_id, "appended": len(ids), "first_id": ids[0] if ids else None,
                   "last_id": ids[-1] if ids else None})
    else:
        click.echo(f"appended {plural(len(ids), 'turn')} to {conversation_id}")


@cli.command()
@db_argument
@click.option("--conversation", "-c", "conversation_id", required=True, help="Conversation id.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Show at most this many turns.")
@reader_option
@json_option
def history(db: str, conversation_id: str, limit: int | None, reader_labels: tuple[str, ...], as_json: bool) -> None:
    """Print a conversation's archived turns in append order (with --reader: only those it may see)."""
    reader = reader_from(reader_labels)
    mf = open_db(db)
    turns = mf.conversation(conversation_id, create=False).history(limit=limit, reader=reader)
    if as_json:
        emit_json([t.to_dict() for t in turns])
    else:
        for t in turns:
            who = t.role + (f"({t.name})" if t.name else "")
            click.echo(f"[{t.seq}] #{t.id} {mf.clock.format(t.created_at)} {who}: {turn_text(t)}")
    mf.close()


@cli.command()
@db_argument
@click.argument("content")
@click.option("--namespace", "-n", required=True, help="Tenant/user namespace, e.g. acme/dana.")
@click.option("--type", "-t", "record_type", default="semantic", show_default=True,
              type=click.Choice(["working", "semantic", "episodic", "procedural"]), help="Typed store.")
@click.option("--key", "-k", default=None, help="Slot key for supersession, e.g. user.contact_preference.")
@click.option("--importance", "-i", type=float, default=0.5, show_default=True, help="Importance in [0, 1].")
@click.option("--label", "labels", multiple=True, help="Access label the reader must hold (repeatable).")
@click.option("--pinned", is_flag=True, help="Never evict this record.")
@json_option
def remember(db: str, content: str, namespace: str, record_type: str, key: str | None, importance: float,
             labels: tuple[str, ...], pinned: bool, as_json: bool) -> None:
    """Write a memory record with CONTENT."""
    mf = open_db(db)
    outcome = mf.memory.write_outcome(namespace, record_type, content, key=key, importance=importance,
                                      labels=list(labels), pinned=pinned)
    record = outcome.record
    if as_json:
        emit_json(record.to_dict())
    else:
        verb = {"refresh": "refreshed", "store_retired": "stored as retired"}.get(outcome.action.value, "wrote")
        click.echo(f"{verb} record {record.id} ({record.type}{', key ' + record.key if record.key else ''}) "
                   f"in {record.namespace}")
        for old in outcome.retired:
            if old != record.id:
                click.echo(f"retired record {old} (superseded by {record.id})")
        for gone in outcome.evicted:
            click.echo(f"evicted record {gone} (over capacity)")
    mf.close()




def turn_text(turn) -> str:
    """A turn's content for people, followed by its tool calls written out:
    ``call policy_lookup({"topic": "returns"})`` (an assistant turn that only calls a tool has no content)."""
    calls = "; ".join(f"call {c.get('function', {}).get('name', '?')}({c.get('function', {}).get('arguments', '')})"
                      for c in (turn.tool_calls or []))
    return " ".join(part for part in (turn.content, calls) if part)



@cli.command()
@db_argument
@click.option("--namespace", "-n", default=None, help="Only this namespace.")
@click.option("--type", "-t", "record_type", default=None,
              type=click.Choice(["working", "semantic", "episodic", "procedural"]), help="Only this typed store.")
@click.option("--all", "include_inactive", is_flag=True, help="Include retired, evicted, consumed and erased records.")
@click.option("--status", default=None, type=click.Choice(["active", "retired", "evicted", "consumed", "erased"]),
              help="Only records with this status.")
@click.option("--top", type=click.IntRange(min=1), default=None,
              help="Rank the active records by score and show the best K with their scores (needs --namespace).")
@click.option("--at", "at", default=None, help="With --top: score at this time (ticks, or ISO-8601 UTC); default now.")
@click.option("--touch", is_flag=True, help="With --top: count this listing as a read (raises access counts).")
@json_option
def memories(db: str, namespace: str | None, record_type: str | None, include_inactive: bool, status: str | None,
             top: int | None, at: str | None, touch: bool, as_json: bool) -> None:
    """List memory records (active ones unless --all or --status), or the top K by score (--top).

    Without --namespace each line names the record's namespace after its status, since records
    of different namespaces (tenants, users) may share a key.
    """
    mf = open_db(db)
    if top is not None:
        if namespace is None:
            raise InvalidInput("--top ranks one namespace: add --namespace NS")
        scored = mf.memory.read(namespace, top, types=record_type, at=parse_time(at), touch=touch)
        if as_json:
            emit_json([s.to_dict() for s in scored])
        else:
            for s in scored:
                click.echo(f"{s.score:.4f}  {format_record(s.record, mf.clock)}")
            if not scored:
                click.echo("no active records")
        mf.close()
        return
    records = mf.memory.list(namespace, record_type, include_inactive=include_inactive, status=status)
    if as_json:
        emit_json([r.to_dict() for r in records])
    else:
        for r in records:
            click.echo(format_record(r, mf.clock, namespace=namespace is None) + format_links(r))
        if not records:
            click.echo("no records")
    mf.close()


@cli.command()
@db_argument
@click.option("--conversation", "-c", "conversation_id", required=True, help="Conversation id.")
@click.option("--output", "-o", type=click.Path(allow_dash=True), default="-",
              show_default=True, help="File to write ('-' for stdout).")
@click.option("--with-times", is_flag=True, help="Also write each turn's created_at.")
@click.option("--tree", "tree_dir", type=click.Path(), default=None,
              help="Instead write the archive as a directory tree: folders per card depth, one file per "
                   "card listing its children's paths, and the verbatim turns (for grep-based tools).")
@click.option("--json", "as_json", is_flag=True,
              help="Print a JSON summary on stdout: {conversation, turns, output} (with --tree: the tree's "
                   "turns, cards and path). The exported data itself stays JSONL, so it needs -o FILE or --tree.")
@reader_option
def export(db: str, conversation_id: str, output: str, with_times: bool, tree_dir: str | None, as_json: bool,
           reader_labels: tuple[str, ...]) -> None:
    """Export a conversation as OpenAI chat-messages JSONL (the format ingest reads), or as a tree.

    Each line carries the turn's labels and metadata, so an ingest elsewhere hides the same turns
    from the same readers; an erased turn is a marker line without text, which ingest refuses.

    With --reader only the turns that reader may see are written (JSONL only: the tree is the
    owner's full archive, so --reader with --tree is refused)."""
    if as_json and tree_dir is None and output == "-":
        raise InvalidInput("--json prints a summary on stdout, where the JSONL would go: add -o FILE (or --tree DIR)")
    reader = reader_from(reader_labels)
    if reader is not None and tree_dir is not None:
        raise InvalidInput("--reader cannot be combined with --tree: the tree is the owner's full archive; "
                           "export JSONL for a reader instead")
    if tree_dir is not None:
        check_output_path(tree_dir, "--tree", folder=True)
    else:
        check_output_path(output, "--output", keep=[(db, "the database")])
    mf = open_db(db)
    conv = mf.conversation(conversation_id, create=False)
    if tree_dir is not None:
        info = conv.export_tree(tree_dir)
        summary = {"conversation": conversation_id, **info}
        message = (f"wrote {plural(info['turns'], 'turn')} and {plural(info['cards'], 'card')} "
                   f"under {info['path']}")
    elif output == "-":
        conv.export_jsonl(sys.stdout, with_times=with_times, reader=reader)
        summary, message = None, None
    else:
        try:
            with open(output, "w", encoding="utf-8") as fh:
                n = conv.export_jsonl(fh, with_times=with_times, reader=reader)
        except OSError as exc:
            raise InvalidInput(f"cannot write --output {output}: {(exc.strerror or str(exc)).lower()}") from None
        summary = {"conversation": conversation_id, "turns": n, "output": output}
        message = f"wrote {plural(n, 'turn')} to {output}"
    mf.close()
    if as_json:
        emit_json(summary)
    elif message and tree_dir is not None:
        click.echo(message)
    elif message:
        click.echo(message, err=True)
