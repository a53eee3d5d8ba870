"""The nightly consolidation job's entry point: what APScheduler's job store calls at each fire.

The persistent job store (:class:`~memfold.consolidation.scheduler.ConsolidationScheduler`)
pickles the job's function by its textual reference, ``"memfold.nightly:run_scheduled_job"``
(:data:`~memfold.consolidation.scheduler.JOB_FUNC`), and each fire may run in any worker process,
so the function receives only the database path and the settings and opens the database itself.
Opening it means building the facade (the file's clock, token counter, embedder and the memory
store's restatement matching), so this module sits at the facade layer, beside ``__init__.py``:
the scheduler below names it only by that string and never imports it (DESIGN.md §2, "Parts").

Invariant kept here: one fire opens one :class:`~memfold.MemFold` on the file, hands its
:attr:`~memfold.MemFold.consolidation_parts` to :func:`~memfold.consolidation.scheduler.run_job`
(the lease, then the pass) and closes it, whatever the outcome.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from . import MemFold
from .consolidation.scheduler import run_job, stop_event
from .memory.clock import Clock, SystemClock


def run_scheduled_job(db_path: str | os.PathLike, settings: dict[str, Any], *, clock: Clock | None = None,
                      stop: threading.Event | None = None, catch_up_from: float | None = None) -> dict[str, Any]:
    """Open the database and run one fire of the nightly job on it (see
    :func:`~memfold.consolidation.scheduler.run_job`).

    :param db_path: the memfold database file.
    :param settings: :meth:`~memfold.consolidation.scheduler.SchedulerSettings.to_dict` output.
    :param clock: the lease clock (POSIX seconds); default the system clock.
    :param stop: asks the pass to stop after its current batch; default the event
        :meth:`ConsolidationScheduler.shutdown` sets for this file.
    :param catch_up_from: the missed fire time the scheduler found on start (POSIX seconds), so
        the catch-up run can count the fires it folds in.
    :returns: ``{"fire_time", "holder", "ran", "runs": [...], "missed_fires"}``; ``ran`` is False
        when another worker holds or finished this fire time's lease.
    """
    clock = clock or SystemClock()
    fired_at = clock.now()  # the fire this run stands for, however long the file takes to open
    stop = stop or stop_event(db_path)
    with MemFold(db_path) as mf:
        return run_job(mf.consolidation_parts, settings, clock=clock, stop=stop, fired_at=fired_at,
                       catch_up_from=catch_up_from)


__all__ = ["run_scheduled_job"]
