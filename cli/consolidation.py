"""``memfold`` commands on consolidation and the nightly job (issue 5).

``consolidate``, ``runs`` and ``scheduler run|status``. The scheduler is the edge component of
STYLE.md rule 18: it takes the database path and opens its own facade per job.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from .core import MemfoldGroup, ReportedError, cli, db_argument, emit_json, json_option, open_db, plural


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
@click.option("--extractor", type=click.Choice(["auto", "rules", "llm"]), default="auto", show_default=True,
              help="rules: offline and deterministic; llm: the MEMFOLD_LLM_* endpoint; auto: llm when "
                   "MEMFOLD_LLM_BASE_URL and MEMFOLD_LLM_MODEL are set, else rules.")
@json_option
def consolidate(db: str, namespaces: tuple[str, ...], dry_run: bool, batch_size: int, include_turns: bool,
                extractor: str, as_json: bool) -> None:
    """Run the consolidation pass now: episodes become facts and rules, then are consumed."""
    mf = open_db(db, extractor=extractor)
    show = not as_json and sys.stderr.isatty()

    def progress(done: int) -> None:
        if show:
            click.echo(f"\r  {plural(done, 'source')} consumed", err=True, nl=False)

    # every named namespace is checked before any runs, so a typo writes nothing at all
    results = mf.consolidate_all(namespaces, dry_run=dry_run, batch_size=batch_size, include_turns=include_turns,
                                 trigger="cli", progress=progress)
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
@click.option("--compaction", is_flag=True, help="List the compaction worker's jobs instead (running, ok, abandoned...).")
@json_option
def runs(db: str, namespace: str | None, limit: int, as_json: bool, compaction: bool = False) -> None:
    """List recorded consolidation runs (start, end, counts, errors), oldest first."""
    mf = open_db(db)
    if compaction:
        jobs = mf.compaction_jobs(limit)
        if as_json:
            emit_json(jobs)
        else:
            for j in jobs:
                click.echo(f"{j['conversation']} #{j['generation']} [{j['status']}] {j['holder']}")
            if not jobs:
                click.echo("no compaction jobs")
        mf.close()
        return
    found = mf.runs(namespace, limit=limit)
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
@click.option("--extractor", type=click.Choice(["auto", "rules", "llm"]), default="auto", show_default=True,
              help="Which extractor the job uses (auto: llm when MEMFOLD_LLM_* names an endpoint, else rules).")
@json_option
def scheduler_run(db: str, cron: str, timezone: str, misfire_grace: int, lease_seconds: float, batch_size: int,
                  include_turns: bool, extractor: str, as_json: bool) -> None:
    """Run the scheduler in the foreground until SIGINT or SIGTERM (then stop cleanly)."""
    from ..consolidation.scheduler import ConsolidationScheduler, SchedulerSettings

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
    from ..consolidation.scheduler import scheduler_status as status

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
