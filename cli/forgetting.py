"""``memfold`` commands on forgetting: pins, retirement, revert, the audit log and store policies.

``pin``, ``unpin``, ``retire``, ``revert``, ``events`` and ``policy`` (issue 3).
"""

from __future__ import annotations

from typing import Any

import click

from .. import InvalidInput
from .core import cli, db_argument, emit_json, format_links, format_record, json_option, open_db


def _record_command(verb: str, done: str, summary: str, with_cause: bool):
    """Build ``memfold <verb> DB ID``: one call of ``mf.memory.<verb>(ID)``, or for ``revert``
    of :meth:`memfold.MemFold.revert` (which also reports the records the revert retired or evicted)."""

    @db_argument
    @click.argument("record_id", metavar="ID", type=int)
    @json_option
    def command(db: str, record_id: int, as_json: bool, cause: str = "manual") -> None:
        mf = open_db(db)
        kwargs = {"cause": cause} if with_cause else {}
        if verb == "revert":
            outcome = mf.revert(record_id, **kwargs)
            record, retired, evicted, data = outcome.record, outcome.retired, outcome.evicted, outcome.to_dict()
        else:
            record = getattr(mf.memory, verb)(record_id, **kwargs)
            retired, evicted, data = (), (), record.to_dict()
        if as_json:
            emit_json(data)
        else:
            click.echo(f"{done} " + format_record(record, mf.clock) + format_links(record))
            for other in retired:
                click.echo(f"retired #{other} (#{record_id} is its slot's current value again)")
            for other in evicted:
                click.echo(f"evicted #{other} (over capacity after the revert)")
        mf.close()

    command.__doc__ = summary
    if with_cause:
        command = click.option("--cause", default="manual", show_default=True,
                               help="Why, recorded in the event log.")(command)
    return cli.command(name=verb)(command)


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
    change = mf.policy(namespace, record_type, **changes)
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
