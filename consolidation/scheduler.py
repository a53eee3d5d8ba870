"""The nightly job: APScheduler 3.x wiring around :func:`consolidate_all`, plus a lease.

The scheduler stays at the edge (STYLE.md rule 18): the pass is a plain function; this module
only decides *when* it runs and makes sure it runs *once*. It never imports the facade
(DESIGN.md §2, "Parts"): the job body here, :func:`run_job`, runs on the
:class:`~memfold.consolidation.parts.ConsolidationParts` it is given, and the function the job
store calls at each fire, which opens the database and builds those parts, lives at the facade
layer (:func:`memfold.nightly.run_scheduled_job`). The scheduler names that function only by its
textual reference (:data:`JOB_FUNC`), which is also what the persistent job store keeps.

* **Trigger**: a cron trigger, default ``"0 3 * * *"`` (03:00 every night) in a configurable
  timezone (IANA name, default ``UTC``).
* **Persistence**: the job lives in APScheduler's ``SQLAlchemyJobStore`` in the same SQLite file
  (table ``memfold_scheduler_jobs``), under the fixed id :data:`JOB_ID` with
  ``replace_existing=True``, so a restart replaces the job instead of adding a second one (a job
  stored by an older memfold under another function reference is replaced the same way). The
  storage creates that table (``storage.runs.ensure_job_store``, in one write transaction) before
  any job store starts: the job store's own check-then-create is not atomic, and workers
  starting together on a fresh file would race to create it.
* **Missed runs**: ``coalesce=True``, ``max_instances=1`` and a misfire grace time (default one
  day). On start, if the stored job's next run time has already passed (the process was down at
  fire time), that run time is kept, so the missed fires run once, right away, instead of being
  skipped by the re-added job. With a one-day grace, any downtime yields exactly one catch-up run.
  That run counts the fire times it folds in (since the previous lease, or since the missed
  fire the scheduler found on start), logs them on ``memfold.scheduler`` and records a
  ``schedule_coalesced`` event with the count (issue 20, point 9).
* **Several workers**: APScheduler 3 does not coordinate schedulers that share a job store, so
  each fire can be seen by every worker. The job body first takes the lease row
  ``(JOB_ID, fire time)`` (:mod:`memfold.consolidation.lease`); only its holder runs the pass,
  renewing the lease between batches. A holder that dies lets the lease expire
  (``lease_seconds``), and the pass itself is idempotent, so nothing is done twice.
* **Shutdown**: :meth:`ConsolidationScheduler.shutdown` asks a running pass to stop after its
  current batch (each batch is one transaction) and waits for it; ``run_forever`` does that on
  SIGINT and SIGTERM.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Callable, Mapping
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger

from ..memory.clock import Clock, SystemClock
from ..memory.errors import InvalidInput
from ..memory.events import log_event
from ..memory.signals import StopSignals
from ..memory.storage import job_store_options, open_storage, resolve_target
from . import lease
from .consolidate import DEFAULT_BATCH_SIZE, consolidate_all
from .extractors import EXTRACTOR_NAMES, make_extractor
from .parts import ConsolidationParts

logger = logging.getLogger("memfold.scheduler")

#: the job's fixed id in the job store (and the lease name)
JOB_ID = "memfold-consolidation"
#: APScheduler's table in the memfold database
JOBS_TABLE = "memfold_scheduler_jobs"
#: the job function, by textual reference so the persistent job store can find it again: it
#: opens the database per fire, so it lives at the facade layer (a string is not an import)
JOB_FUNC = "memfold.nightly:run_scheduled_job"

_stop_events: dict[str, threading.Event] = {}


@dataclass(frozen=True)
class SchedulerSettings:
    """When and how the nightly consolidation runs.

    :ivar cron: a crontab expression (``"0 3 * * *"``, minute resolution) or a mapping of
        APScheduler ``CronTrigger`` fields (``{"hour": 3, "minute": 0}``, ``{"second": "*/2"}``).
    :ivar timezone: IANA zone the cron fields are read in, e.g. ``"Europe/Paris"``.
    :ivar misfire_grace_seconds: how late (seconds) a missed fire may still run; default one day.
    :ivar lease_seconds: how long a worker's lease lasts without renewal (renewed every batch).
    :ivar batch_size: episodes per batch (one transaction each).
    :ivar include_turns: also consolidate archived turns.
    :ivar extractor: ``"auto"`` (default: ``llm`` when ``MEMFOLD_LLM_*`` names an endpoint in the
        worker's environment, else ``rules``), ``"rules"`` or ``"llm"``.
    :raises InvalidInput: on construction, for a bad cron, zone, number or extractor name.
    """

    cron: str | Mapping[str, Any] = "0 3 * * *"
    timezone: str = "UTC"
    misfire_grace_seconds: int = 86_400
    lease_seconds: float = 1_800.0
    batch_size: int = DEFAULT_BATCH_SIZE
    include_turns: bool = False
    extractor: str = "auto"

    def __post_init__(self) -> None:
        self.trigger()
        for name in ("misfire_grace_seconds", "lease_seconds", "batch_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise InvalidInput(f"{name} must be a positive number, got {value!r}")
        if self.extractor not in EXTRACTOR_NAMES:
            raise InvalidInput(f"unknown extractor {self.extractor!r}: use one of {', '.join(EXTRACTOR_NAMES)}")

    def zone(self) -> ZoneInfo:
        """The timezone. :raises InvalidInput: for an unknown zone name."""
        try:
            return ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError, TypeError):
            raise InvalidInput(f"unknown timezone {self.timezone!r}: use an IANA name such as 'UTC' or 'Europe/Paris'") from None

    def trigger(self) -> CronTrigger:
        """The cron trigger. :raises InvalidInput: for a malformed cron expression or field."""
        zone = self.zone()
        try:
            if isinstance(self.cron, str):
                return CronTrigger.from_crontab(self.cron, timezone=zone)
            return CronTrigger(**dict(self.cron), timezone=zone)
        except (ValueError, TypeError) as exc:
            raise InvalidInput(f"bad cron schedule {self.cron!r}: {exc}") from None

    def to_dict(self) -> dict[str, Any]:
        """Plain data (stored in the job's kwargs)."""
        d = asdict(self)
        d["cron"] = self.cron if isinstance(self.cron, str) else dict(self.cron)
        return d


def latest_fire_time(trigger: CronTrigger, now: datetime, lookback: timedelta = timedelta(days=8)) -> datetime | None:
    """The trigger's most recent fire time at or before ``now`` (an aware datetime), or None
    when there is none within ``lookback``.

    This is the fire time a coalesced run stands for, and the lease key. The search widens its
    window (a minute, an hour, a day, ``lookback``) so a per-second schedule stays cheap.
    """
    for window in (timedelta(minutes=1), timedelta(hours=1), timedelta(days=1), lookback):
        fire = trigger.get_next_fire_time(None, now - min(window, lookback))
        latest = None
        while fire is not None and fire <= now:
            latest = fire
            fire = trigger.get_next_fire_time(fire, fire + timedelta(microseconds=1))
        if latest is not None or window >= lookback:
            return latest
    return None


#: at most this many missed fire times are counted (a per-second schedule down for a month)
MISSED_COUNT_CAP = 10_000


def missed_fire_times(trigger: CronTrigger, since: datetime, fire: datetime, *, inclusive: bool) -> int:
    """How many of the trigger's fire times lie between ``since`` and ``fire`` (``fire`` itself not
    counted; ``since`` counted when ``inclusive``): the fires a coalesced run at ``fire`` folds in
    (issue 20, point 9). Counting stops at :data:`MISSED_COUNT_CAP`."""
    t = trigger.get_next_fire_time(None, since)
    n = 0
    while t is not None and t < fire and n < MISSED_COUNT_CAP:
        if inclusive or t > since:
            n += 1
        t = trigger.get_next_fire_time(t, t + timedelta(microseconds=1))
    return n


def holder_id() -> str:
    """This worker's name in lease rows: ``host:pid:thread``."""
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


def stop_event(db_path: str | os.PathLike) -> threading.Event:
    """The event that asks a running pass on ``db_path`` to stop after its current batch (one per
    resolved path in this process; :meth:`ConsolidationScheduler.shutdown` sets it)."""
    return _stop_events.setdefault(resolve_target(db_path), threading.Event())


def run_job(parts: ConsolidationParts, settings: dict[str, Any], *, clock: Clock | None = None,
            stop: threading.Event | None = None, fired_at: float | None = None,
            catch_up_from: float | None = None) -> dict[str, Any]:
    """The job body: take the lease for the current fire time, then consolidate every namespace.

    :param parts: the opened database's consolidation parts (its storage holds the leases).
    :param settings: :meth:`SchedulerSettings.to_dict` output.
    :param clock: the lease clock (POSIX seconds); default the system clock.
    :param stop: when set, the pass ends after its current batch; default never set.
    :param fired_at: when the job fired (POSIX seconds, read before the database was opened); the
        fire time it stands for is the trigger's latest at or before it. Default ``clock.now()``.
    :param catch_up_from: the first fire time the scheduler found missed when it started (POSIX
        seconds; :meth:`ConsolidationScheduler.start`), when no earlier lease tells it.
    :returns: ``{"fire_time", "holder", "ran", "runs": [...], "missed_fires"}``; ``ran`` is False
        when another worker holds or finished this fire time's lease. ``missed_fires`` counts the
        fire times since the previous run (the last lease before this one, else
        ``catch_up_from``) that this one run stands for too: APScheduler coalesced them (issue 20,
        point 9). When it is above 0 the run logs a warning on ``memfold.scheduler`` and records a
        ``schedule_coalesced`` event with the count.
    """
    config = SchedulerSettings(**settings)
    clock = clock or SystemClock()
    stop = stop or threading.Event()
    storage = parts.storage
    now_dt = datetime.fromtimestamp(clock.now() if fired_at is None else fired_at, config.zone())
    fire = latest_fire_time(config.trigger(), now_dt)
    fire_ts = (fire or now_dt).timestamp()
    holder = holder_id()
    result: dict[str, Any] = {"fire_time": (fire or now_dt).isoformat(), "holder": holder, "ran": False, "runs": []}
    result["missed_fires"] = 0
    previous = storage.runs.get_lease(JOB_ID, fire_ts)
    if not lease.acquire(storage, JOB_ID, fire_ts, holder, ttl_seconds=config.lease_seconds, now=clock.now()):
        return result
    result["abandoned"] = abandon_dead_runs(parts, config, holder, now=clock.now(), taken_over=previous)
    result["missed_fires"] = _record_coalesced(storage, config, fire or now_dt, catch_up_from, clock)
    outcome = "failed"
    lost = []

    def should_stop() -> bool:
        if stop.is_set():
            return True
        if not lease.renew(storage, JOB_ID, fire_ts, holder, ttl_seconds=config.lease_seconds, now=clock.now()):
            lost.append(True)
            return True
        return False

    try:
        done = consolidate_all(parts, include_turns=config.include_turns, batch_size=config.batch_size,
                               extractor=make_extractor(config.extractor), trigger=run_trigger(config, fire_ts),
                               should_stop=should_stop)
        result["ran"] = True
        result["runs"] = [r.to_dict() for r in done]
        outcome = "stopped" if stop.is_set() or lost or any(r.status == "stopped" for r in done) else (
            "failed" if any(r.status == "failed" for r in done) else "ok")
    finally:
        lease.release(storage, JOB_ID, fire_ts, holder, now=clock.now(), outcome=outcome)
    return result


def run_trigger(config: SchedulerSettings, fire_ts: float) -> str:
    """The ``trigger`` a scheduled run records: ``schedule@<fire time, ISO-8601 in the zone>``."""
    return f"schedule@{datetime.fromtimestamp(fire_ts, config.zone()).isoformat()}"


def abandon_dead_runs(parts: ConsolidationParts, config: SchedulerSettings, holder: str, *, now: float,
                      taken_over: lease.LeaseRow | None = None) -> list[dict[str, Any]]:
    """Close the work of holders that died (issue 13, point 7): every unfinished lease of the job
    that expired (older fire times) is finished as ``abandoned``, and every run its pass left
    ``running`` is closed as ``abandoned`` too (``memfold runs`` shows it). The fire time
    ``holder`` just took over from a dead holder (``taken_over``, the lease row as it was before)
    keeps its lease, but the dead holder's runs are closed the same way. The pass that follows
    redoes the work: it consumes every episode the dead pass did not commit (each batch is one
    transaction, so nothing is half done).

    :returns: ``[{"fire_time", "holder", "runs"}]``, one per dead holder found.
    """
    storage, at = parts.storage, parts.clock.now()
    dead: list[lease.LeaseRow] = [row for row in storage.runs.list_leases(JOB_ID)
                                  if row.finished_at is None and row.expires_at <= now and row.holder != holder]
    if (taken_over is not None and taken_over.finished_at is None and taken_over.holder != holder
            and all(row.fire_time != taken_over.fire_time for row in dead)):
        dead.append(taken_over)
    out = []
    for row in dead:
        with storage.transaction():
            if row is not taken_over and not lease.release(storage, JOB_ID, row.fire_time, row.holder, now=now,
                                                           outcome="abandoned"):
                continue  # another worker closed it first
            closed = storage.runs.abandon_runs(run_trigger(config, row.fire_time), at,
                                               f"abandoned: the lease of {row.holder} expired")
        out.append({"fire_time": row.fire_time, "holder": row.holder, "runs": closed})
    return out


def _record_coalesced(storage: Any, config: SchedulerSettings, fire: datetime, catch_up_from: float | None,
                      clock: Clock) -> int:
    """Count the fire times this run folds in (see :func:`run_job`); log and record them when any."""
    previous = [x.fire_time for x in lease.list_leases(storage, JOB_ID, limit=2) if x.fire_time < fire.timestamp()]
    if previous:
        since, inclusive = datetime.fromtimestamp(previous[-1], config.zone()), False
        if catch_up_from is not None and catch_up_from > previous[-1]:
            since, inclusive = datetime.fromtimestamp(catch_up_from, config.zone()), True
    elif catch_up_from is not None:
        since, inclusive = datetime.fromtimestamp(catch_up_from, config.zone()), True
    else:
        return 0
    missed = missed_fire_times(config.trigger(), since, fire, inclusive=inclusive)
    if missed:
        capped = "at least " if missed >= MISSED_COUNT_CAP else ""
        logger.warning("memfold nightly job: %s%d missed fire time(s) since %s coalesced into the run for %s",
                       capped, missed, since.isoformat(), fire.isoformat())
        with storage.transaction():
            log_event(storage, at=clock.now(), kind="schedule_coalesced", subject=f"job:{JOB_ID}",
                      cause="coalesce",
                      details={"fire_time": fire.isoformat(), "missed_fires": missed, "since": since.isoformat(),
                               "capped": bool(capped)})
    return missed


def _prepare(db_path: str, *, recent: int = 0) -> list[lease.LeaseRow]:
    """Create or migrate the database file and the job store's table (before any job store
    starts: its own check-then-create races across processes); returns the ``recent`` newest
    leases of the job."""
    storage = open_storage(db_path)
    try:
        storage.runs.ensure_job_store(JOBS_TABLE)
        return lease.list_leases(storage, JOB_ID, limit=recent) if recent else []
    finally:
        storage.close()


def _stored_next_run_time(scheduler: BackgroundScheduler, store: Any) -> datetime | None:
    """The stored job's next run time, or ``None`` when there is no job (or it is paused).

    A job stored by an older memfold under a function reference that no longer resolves cannot
    be loaded (``LookupError``); its row's next run time is read without loading it, so the job
    that replaces it still catches up a fire missed while the workers were down.
    """
    try:
        job = scheduler.get_job(JOB_ID)
    except LookupError:
        return store.get_next_run_time()  # the table holds memfold's one job
    return None if job is None else job.next_run_time


class ConsolidationScheduler:
    """The nightly consolidation job on an APScheduler 3.x ``BackgroundScheduler``.

    :param db_path: the memfold database file (the job store lives in it too).
    :param settings: schedule and pass settings.
    :param on_result: called with each job's result dict (see :func:`run_job`).
    """

    def __init__(self, db_path: str | os.PathLike, settings: SchedulerSettings | None = None, *,
                 on_result: Callable[[dict[str, Any]], None] | None = None) -> None:
        from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_EXECUTED
        from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore

        self.db_path = resolve_target(db_path)
        self.settings = settings or SchedulerSettings()
        _prepare(self.db_path)  # create / migrate the file and the job table before the job store starts
        self.stop_event = stop_event(self.db_path)
        self.stop_event.clear()
        url, engine_options = job_store_options(self.db_path)
        self.jobstore = SQLAlchemyJobStore(url=url, tablename=JOBS_TABLE, engine_options=engine_options)
        self.scheduler = BackgroundScheduler(timezone=self.settings.zone())
        self.scheduler.add_jobstore(self.jobstore, "default")
        self.on_result = on_result

        def listener(event: Any) -> None:
            if self.on_result is None or event.job_id != JOB_ID:
                return
            if event.exception is not None:
                self.on_result({"error": repr(event.exception), "ran": False})
            else:
                self.on_result(event.retval)

        self.scheduler.add_listener(listener, EVENT_JOB_EXECUTED | EVENT_JOB_ERROR)

    def start(self) -> datetime | None:
        """Start the scheduler and (re)place the job; returns its next run time.

        A stored job whose next run time has passed keeps it, so a missed fire runs once now.
        """
        self.scheduler.start(paused=True)
        stored_next = _stored_next_run_time(self.scheduler, self.jobstore)
        now = datetime.fromtimestamp(SystemClock().now(), self.settings.zone())
        options: dict[str, Any] = {}
        if stored_next is not None and stored_next <= now:
            options["next_run_time"] = stored_next
            options["kwargs"] = {"catch_up_from": stored_next.timestamp()}
            logger.warning("memfold nightly job: the fire time %s passed while no scheduler ran; the missed "
                           "fire(s) run once now", stored_next.isoformat())
        job = self.scheduler.add_job(
            JOB_FUNC, trigger=self.settings.trigger(), args=[self.db_path, self.settings.to_dict()],
            id=JOB_ID, name="memfold nightly consolidation", replace_existing=True, coalesce=True,
            max_instances=1, misfire_grace_time=int(self.settings.misfire_grace_seconds), **options,
        )
        self.scheduler.resume()
        return self.scheduler.get_job(JOB_ID).next_run_time if job else None

    def next_run_time(self) -> datetime | None:
        """When the job runs next (aware datetime), or None when not scheduled."""
        job = self.scheduler.get_job(JOB_ID)
        return job.next_run_time if job else None

    def shutdown(self, wait: bool = True) -> None:
        """Stop: a running pass ends after its current batch; ``wait`` waits for it."""
        self.stop_event.set()
        if self.scheduler.running:
            self.scheduler.pause()  # no new submissions while the running pass finishes its batch
            self.scheduler.shutdown(wait=wait)
        self.jobstore.engine.dispose()

    def run_forever(self, *, ready: Callable[[datetime | None], None] | None = None) -> None:
        """The foreground daemon: start, wait for SIGINT or SIGTERM, shut down cleanly.

        :param ready: called with the next run time once the job is scheduled.
        """
        with StopSignals() as stop:  # the handlers take no lock (see memory/signals.py)
            try:
                next_time = self.start()
                if ready is not None:
                    ready(next_time)
                stop.wait()
            finally:
                self.shutdown(wait=True)


def scheduler_status(db_path: str | os.PathLike, *, recent: int = 5) -> dict[str, Any]:
    """The stored job (its cron and next run time) and the most recent leases, without running it.

    :returns: ``{"job": {"id", "trigger", "next_run_time"} | None, "leases": [...]}``; times
        as ISO-8601 strings.
    """
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore

    path = resolve_target(db_path)
    leases = _prepare(path, recent=recent)  # the probe's job store would otherwise create the table, racily
    url, engine_options = job_store_options(path)
    store = SQLAlchemyJobStore(url=url, tablename=JOBS_TABLE, engine_options=engine_options)
    # The job is read from the store itself: a scheduler started (even paused) and shut down
    # processes due jobs once on its way out, which would move a missed fire's next run time on
    # without running it (or drop a job it cannot load). This scheduler is never started.
    store.start(BackgroundScheduler(timezone="UTC"), "default")
    try:
        try:
            job = store.lookup_job(JOB_ID)
        except LookupError:  # stored by an older memfold under another function reference
            nxt = store.get_next_run_time()
            info = {"id": JOB_ID, "trigger": "unknown (stored by an older memfold; 'memfold scheduler run' replaces it)",
                    "next_run_time": nxt.isoformat() if nxt else None}
        else:
            info = None if job is None else {"id": job.id, "trigger": str(job.trigger),
                                             "next_run_time": job.next_run_time.isoformat() if job.next_run_time else None}
    finally:
        store.shutdown()

    def iso(value: float | None) -> str | None:
        return None if value is None else datetime.fromtimestamp(value).astimezone().isoformat(timespec="seconds")

    return {"job": info, "leases": [
        {"fire_time": iso(x.fire_time), "holder": x.holder, "acquired_at": iso(x.acquired_at),
         "expires_at": iso(x.expires_at), "finished_at": iso(x.finished_at), "outcome": x.outcome} for x in leases]}
