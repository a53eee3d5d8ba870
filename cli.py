"""The ``memfold`` command: a thin shell over the library (STYLE.md rules 1-2).

Each command parses its arguments, opens the :class:`~memfold.MemFold` facade, makes one library
call and prints: human output by default, ``--json`` for scripts. The database comes from the
``DB`` argument or the ``MEMFOLD_DB`` environment variable. A library error becomes one line on
stderr and a non-zero exit. No SQL here.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from .memory.errors import InvalidInput, MemfoldError


class MemfoldGroup(click.Group):
    """A click group that turns every :class:`MemfoldError` into one ``Error: ...`` line, exit 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MemfoldError as exc:
            raise click.ClickException(str(exc)) from None


def db_argument(fn):
    """The ``DB`` argument (falls back to ``MEMFOLD_DB``)."""
    return click.argument("db", envvar="MEMFOLD_DB", type=click.Path(dir_okay=False))(fn)


def json_option(fn):
    """The ``--json`` flag: machine-readable output on stdout."""
    return click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")(fn)


def open_db(db: str, *, must_exist: bool = True, **kwargs: Any):
    """Open the facade on ``db``; a missing file is an error unless ``must_exist`` is False."""
    from . import MemFold

    if must_exist and not os.path.exists(db):
        raise InvalidInput(f"no database at {db}: create it with 'memfold init {db}'")
    return MemFold(db, **kwargs)


def emit_json(data: Any) -> None:
    """Print ``data`` as indented JSON."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False))


@click.group(cls=MemfoldGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="memfold")
def cli() -> None:
    """memfold: keep an agent's context small without forgetting by accident.

    Every command takes the database file as DB (or from MEMFOLD_DB), prints for people by
    default and JSON with --json.
    """


# -- foundation: database, conversations, records -------------------------------------------------
@cli.command()
@db_argument
@click.option("--clock", type=click.Choice(["system", "logical"]), default="system", show_default=True,
              help="Clock kind recorded in the file: real UTC time or integer ticks.")
@click.option("--tokens", "token_counter", default="cl100k_base", show_default=True,
              help="Token counter: cl100k_base, o200k_base or words.")
@json_option
def init(db: str, clock: str, token_counter: str, as_json: bool) -> None:
    """Create (or upgrade) the database file DB."""
    from . import LogicalClock, SystemClock
    from .memory.migrations import current_version

    mf = open_db(db, must_exist=False, clock=LogicalClock() if clock == "logical" else SystemClock(),
                 token_counter=token_counter)
    info = {"db": db, "schema_version": current_version(mf.db), "clock": mf.clock.kind,
            "token_counter": mf.token_counter.id}
    mf.close()
    if as_json:
        emit_json(info)
    else:
        click.echo(f"initialised {db} (schema version {info['schema_version']}, {info['clock']} clock, "
                   f"tokens counted with {info['token_counter']})")


@cli.command()
@db_argument
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--conversation", "-c", "conversation_id", required=True, help="Conversation id to append to.")
@click.option("--namespace", "-n", default="default", show_default=True, help="Namespace for a new conversation.")
@json_option
def ingest(db: str, file: str, conversation_id: str, namespace: str, as_json: bool) -> None:
    """Append every message of FILE (OpenAI chat-messages JSONL) to a conversation, all or nothing."""
    mf = open_db(db)
    conv = mf.conversation(conversation_id, namespace=namespace)
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
        ids = conv.import_jsonl(file, progress=progress)
    finally:
        if "bar" in bar_state:
            bar_state["bar"].__exit__(None, None, None)
    mf.close()
    if as_json:
        emit_json({"conversation": conversation_id, "appended": len(ids), "first_id": ids[0] if ids else None,
                   "last_id": ids[-1] if ids else None})
    else:
        click.echo(f"appended {len(ids)} turns to {conversation_id}")


@cli.command()
@db_argument
@click.option("--conversation", "-c", "conversation_id", required=True, help="Conversation id.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Show at most this many turns.")
@json_option
def history(db: str, conversation_id: str, limit: int | None, as_json: bool) -> None:
    """Print a conversation's archived turns in append order."""
    mf = open_db(db)
    turns = mf.conversation(conversation_id, create=False).history(limit=limit)
    if as_json:
        emit_json([t.to_dict() for t in turns])
    else:
        for t in turns:
            who = t.role + (f"({t.name})" if t.name else "")
            click.echo(f"[{t.seq}] #{t.id} {mf.clock.format(t.created_at)} {who}: {t.content}")
    mf.close()


@cli.command()
@db_argument
@click.argument("content")
@click.option("--namespace", "-n", required=True, help="Tenant/user namespace, e.g. acme/dana.")
@click.option("--type", "-t", "record_type", required=True,
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
    record = mf.memory.write(namespace, record_type, content, key=key, importance=importance,
                             labels=list(labels), pinned=pinned)
    if as_json:
        emit_json(record.to_dict())
    else:
        click.echo(f"wrote record {record.id} ({record.type}{', key ' + record.key if record.key else ''}) "
                   f"in {record.namespace}")
    mf.close()


def format_record(record, clock) -> str:
    """One human line for a record: id, status, type, key, importance, content."""
    key = f" {record.key}" if record.key else ""
    pin = " pinned" if record.pinned else ""
    return (f"#{record.id} [{record.status}{pin}] {record.type}{key} "
            f"importance={record.importance:.2f} written {clock.format(record.written_at)}: {record.content}")


@cli.command()
@db_argument
@click.option("--namespace", "-n", default=None, help="Only this namespace.")
@click.option("--type", "-t", "record_type", default=None,
              type=click.Choice(["working", "semantic", "episodic", "procedural"]), help="Only this typed store.")
@click.option("--all", "include_inactive", is_flag=True, help="Include retired, evicted, consumed and erased records.")
@json_option
def memories(db: str, namespace: str | None, record_type: str | None, include_inactive: bool, as_json: bool) -> None:
    """List memory records (active ones unless --all)."""
    mf = open_db(db)
    records = mf.memory.list(namespace, record_type, include_inactive=include_inactive)
    if as_json:
        emit_json([r.to_dict() for r in records])
    else:
        for r in records:
            click.echo(format_record(r, mf.clock))
        if not records:
            click.echo("no records")
    mf.close()


@cli.command()
@db_argument
@click.option("--conversation", "-c", "conversation_id", required=True, help="Conversation id.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), default="-",
              show_default=True, help="File to write ('-' for stdout).")
@click.option("--with-times", is_flag=True, help="Also write each turn's created_at.")
def export(db: str, conversation_id: str, output: str, with_times: bool) -> None:
    """Export a conversation as OpenAI chat-messages JSONL (the format ingest reads)."""
    mf = open_db(db)
    conv = mf.conversation(conversation_id, create=False)
    if output == "-":
        conv.export_jsonl(sys.stdout, with_times=with_times)
    else:
        with open(output, "w", encoding="utf-8") as fh:
            n = conv.export_jsonl(fh, with_times=with_times)
        click.echo(f"wrote {n} turns to {output}", err=True)
    mf.close()


def main() -> None:  # pragma: no cover - console entry point
    cli()
