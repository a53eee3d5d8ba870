"""``memfold`` commands on the protected channel and erasure (issue 8).

``protect add|list|satisfy|expire|revoke|supersede`` and ``erase``.
"""

from __future__ import annotations

import click

from .. import InvalidInput
from .core import (
    MemfoldGroup,
    cli,
    db_argument,
    emit_json,
    json_option,
    open_db,
    parse_time,
    plural,
    reader_from,
    reader_option,
)


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
    record = mf.protect(text, kind=kind, conversation_id=conversation_id, namespace=namespace, due_at=due_at,
                        labels=list(labels))
    if as_json:
        emit_json(record.to_dict())
    else:
        click.echo("added " + format_protected(record, mf.clock))
        if record.state == "expired":
            click.echo(_expired_note(record, mf.clock))
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


def _expired_note(record, clock) -> str:
    """The note after a deadline that expired as it was written (its due time was not after now)."""
    return (f"note: due {clock.format(record.due_at)} is not after now ({clock.format(clock.now())}): "
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
    elif conversation_id is not None:  # the conversation's whole scope, namespace-wide records included
        records = mf.protected.for_conversation(conversation_id, state=None if state == "all" else state,
                                                reader=reader)
        if namespace is not None:
            records = [r for r in records if r.namespace == namespace]
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
    record = mf.supersede_protected(record_id, text, kind=kind, due_at=due_at, cause=cause)
    if as_json:
        emit_json(record.to_dict())
    else:
        click.echo(f"P{record_id} superseded by " + format_protected(record, mf.clock))
        if record.state == "expired":
            click.echo(_expired_note(record, mf.clock))
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
@click.option("--vacuum-wait", type=click.FloatRange(min=0), default=None,
              help="Seconds to wait for another connection holding the WAL open (default 10), then fail.")
@json_option
def erase(db: str, namespace: str | None, conversation_id: str | None, turn_ids: tuple[int, ...],
          record_ids: tuple[int, ...], protected_ids: tuple[int, ...], cause: str, no_vacuum: bool, yes: bool,
          vacuum_wait: float | None, as_json: bool) -> None:
    """Erase content for good: archive turns, memory records, protected records, derived summary
    cards, full-text entries and vectors. The event log keeps ids and counts, never the content."""
    mf = open_db(db)
    scope = dict(namespace=namespace, conversation_id=conversation_id, turn_ids=list(turn_ids),
                 record_ids=list(record_ids), protected_ids=list(protected_ids))
    plan = mf.erase_plan(**scope)
    counts = plan.to_dict()["counts"]
    summary = erase_counts(counts)
    if not yes:
        why = "nothing erased"
        try:
            sure = click.confirm(f"erase {summary}? This cannot be undone", default=False, err=True)
        except click.Abort:  # no answer to read (stdin closed or empty, as in a script): not a yes
            sure, why = False, "nothing erased: no answer to the confirmation (stdin is closed); pass --yes in a script"
            click.echo("", err=True)
        if not sure:
            mf.close()
            raise click.ClickException(why)
    done = mf.erase(**scope, cause=cause, vacuum=not no_vacuum, vacuum_wait=vacuum_wait)
    if as_json:
        emit_json(done.to_dict())
    else:
        click.echo("erased " + erase_counts(done.to_dict()["counts"])
                   + ("" if no_vacuum else " (file vacuumed)"))
    mf.close()
