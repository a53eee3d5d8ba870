"""The nightly job: APScheduler 3.x wiring around :func:`consolidate_all`, plus a lease.

The scheduler stays at the edge (STYLE.md rule 18): the pass is a plain function; this module
only decides *when* it runs and makes sure it runs *once*.

* **Trigger**: a cron trigger, default ``"0 3 * * *"`` (03:00 every night) in a configurable
  timezone (IANA name, default ``UTC``).
* **Persistence**: the job lives in APScheduler's ``SQLAlchemyJobStore`` in the same SQLite file
  (table ``memfold_scheduler_jobs``), under the fixed id :data:`JOB_ID` with
  ``replace_existing=True``, so a restart replaces the job instead of adding a second one. The
  storage creates that table (``storage.runs.ensure_job_store``, in one write transaction) before
  any job store starts: the job store's own check-then-create is not atomic, and workers
  starting together on a fresh file would race to create it.
* **Missed runs**: ``coalesce=True``, ``max_instances=1`` and a misfire grace time (default one
  day). On start, if the stored job's next run time has already passed (the process was down at
  fire time), that run time is kept, so the missed fires run once, right away, instead of being
  skipped by the re-added job. With a one-day grace, any downtime yields exactly one catch-up run.
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

import os
import signal
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
from . import lease
from .consolidate import DEFAULT_BATCH_SIZE, consolidate_all
from .extractors import EXTRACTOR_NAMES, make_extractor

#: the job's fixed id in the job store (and the lease name)
JOB_ID = "memfold-consolidation"
#: APScheduler's table in the memfold database
JOBS_TABLE = "memfold_scheduler_jobs"
#: the job function, by textual reference so the persistent job store can find it again
JOB_FUNC = "memfold.consolidation.scheduler:run_scheduled_job"

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
    :ivar extractor: ``"rules"`` or ``"llm"``.
    :raises InvalidInput: on construction, for a bad cron, zone, number or extractor name.
    """

    cron: str | Mapping[str, Any] = "0 3 * * *"
    timezone: str = "UTC"
    misfire_grace_seconds: int = 86_400
    lease_seconds: float = 1_800.0
    batch_size: int = DEFAULT_BATCH_SIZE
    include_turns: bool = False
    extractor: str = "rules"

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


def holder_id() -> str:
    """This worker's name in lease rows: ``host:pid:thread``."""
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


def run_scheduled_job(db_path: str, settings: dict[str, Any], *, clock: Clock | None = None,
                      stop: threading.Event | None = None) -> dict[str, Any]:
    """The job body: take the lease for the current fire time, then consolidate every namespace.

    :param db_path: the memfold database file.
    :param settings: :meth:`SchedulerSettings.to_dict` output.
    :param clock: the lease clock (POSIX seconds); default the system clock.
    :returns: ``{"fire_time", "holder", "ran", "runs": [...]}``; ``ran`` is False when another
        worker holds or finished this fire time's lease.
    """
    from .. import MemFold

    config = SchedulerSettings(**settings)
    clock = clock or SystemClock()
    stop = stop or _stop_events.setdefault(str(Path(db_path).resolve()), threading.Event())
    now_dt = datetime.fromtimestamp(clock.now(), config.zone())
    fire = latest_fire_time(config.trigger(), now_dt)
    fire_ts = (fire or now_dt).timestamp()
    holder = holder_id()
    result: dict[str, Any] = {"fire_time": (fire or now_dt).isoformat(), "holder": holder, "ran": False, "runs": []}
    with MemFold(db_path) as mf:
        if not lease.acquire(mf.storage, JOB_ID, fire_ts, holder, ttl_seconds=config.lease_seconds, now=clock.now()):
            return result
        outcome = "failed"
        lost = []

        def should_stop() -> bool:
            if stop.is_set():
                return True
            if not lease.renew(mf.storage, JOB_ID, fire_ts, holder, ttl_seconds=config.lease_seconds, now=clock.now()):
                lost.append(True)
                return True
            return False

        try:
            done = consolidate_all(mf, include_turns=config.include_turns, batch_size=config.batch_size,
                                   extractor=make_extractor(config.extractor), trigger=f"schedule@{result['fire_time']}",
                                   should_stop=should_stop)
            result["ran"] = True
            result["runs"] = [r.to_dict() for r in done]
            outcome = "stopped" if stop.is_set() or lost or any(r.status == "stopped" for r in done) else (
                "failed" if any(r.status == "failed" for r in done) else "ok")
        finally:
            lease.release(mf.storage, JOB_ID, fire_ts, holder, now=clock.now(), outcome=outcome)
    return result


class ConsolidationScheduler:
    """The nightly consolidation job on an APScheduler 3.x ``BackgroundScheduler``.

    :param db_path: the memfold database file (the job store lives in it too).
    :param settings: schedule and pass settings.
    :param on_result: called with each job's result dict (see :func:`run_scheduled_job`).
    """

    def __init__(self, db_path: str | os.PathLike, settings: SchedulerSettings | None = None, *,
                 on_result: Callable[[dict[str, Any]], None] | None = None) -> None:
        from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_EXECUTED
        from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore

        from .. import MemFold

        self.db_path = str(Path(db_path).resolve())
        self.settings = settings or SchedulerSettings()
        with MemFold(self.db_path) as mf:  # create / migrate the file and the job table before the job store starts
            mf.storage.runs.ensure_job_store(JOBS_TABLE)
        self.stop_event = _stop_events.setdefault(self.db_path, threading.Event())
        self.stop_event.clear()
        self.jobstore = SQLAlchemyJobStore(url=f"sqlite:///{self.db_path}", tablename=JOBS_TABLE,
                                           engine_options={"connect_args": {"timeout": 30}})
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
        existing = self.scheduler.get_job(JOB_ID)
        now = datetime.fromtimestamp(SystemClock().now(), self.settings.zone())
        options: dict[str, Any] = {}
        if existing is not None and existing.next_run_time is not None and existing.next_run_time <= now:
            options["next_run_time"] = existing.next_run_time
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
        stop = threading.Event()
        previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        for sig in previous:
            signal.signal(sig, lambda signum, frame: stop.set())
        try:
            next_time = self.start()
            if ready is not None:
                ready(next_time)
            while not stop.wait(0.5):
                pass
        finally:
            self.shutdown(wait=True)
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def scheduler_status(db_path: str | os.PathLike, *, recent: int = 5) -> dict[str, Any]:
    """The stored job (its cron and next run time) and the most recent leases, without running it.

    :returns: ``{"job": {"id", "trigger", "next_run_time"} | None, "leases": [...]}``; times
        as ISO-8601 strings.
    """
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore

    from .. import MemFold

    path = str(Path(db_path).resolve())
    with MemFold(path) as mf:
        mf.storage.runs.ensure_job_store(JOBS_TABLE)  # the probe's job store would otherwise create it, racily
        leases = lease.list_leases(mf.storage, JOB_ID, limit=recent)
    store = SQLAlchemyJobStore(url=f"sqlite:///{path}", tablename=JOBS_TABLE,
                               engine_options={"connect_args": {"timeout": 30}})
    probe = BackgroundScheduler()
    probe.add_jobstore(store, "default")
    probe.start(paused=True)
    try:
        job = probe.get_job(JOB_ID)
        info = None if job is None else {"id": job.id, "trigger": str(job.trigger),
                                         "next_run_time": job.next_run_time.isoformat() if job.next_run_time else None}
    finally:
        probe.shutdown(wait=False)
        store.engine.dispose()

    def iso(value: float | None) -> str | None:
        return None if value is None else datetime.fromtimestamp(value).astimezone().isoformat(timespec="seconds")

    return {"job": info, "leases": [
        {"fire_time": iso(x.fire_time), "holder": x.holder, "acquired_at": iso(x.acquired_at),
         "expires_at": iso(x.expires_at), "finished_at": iso(x.finished_at), "outcome": x.outcome} for x in leases]}
