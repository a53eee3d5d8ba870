"""The worker's loop: take compaction notes under a lease per conversation and fold.

Invariants kept here (issue 13, point 3):

* **One folder per conversation at a time.** A worker takes a note only under the lease
  ``compaction:<conversation id>`` for the note's generation (never reused), in the runs
  family's lease table (:mod:`memfold.consolidation.lease`): several workers on one file never
  fold the same conversation at once. A killed worker's lease expires after ``lease_seconds``
  and another worker takes it over and finishes the job.
* **The summarizer runs outside any transaction**, and a card commits together with its splice
  (:mod:`memfold.window.compactor`), so a worker killed inside a fold leaves nothing visible,
  and a fold that lost a race to a foreground fold rolls back and is re-measured (the pass goes
  on from the new catalog).
* **A note is dropped only at the generation it was taken at.** When the fold leaves the
  conversation over the soft line the note gets a new generation (retried by the next sweep);
  after a summarizer failure that folded nothing it waits, with exponential backoff capped at
  ``backoff_cap_seconds``, recorded as a ``compaction_backoff`` event (issue 13, point 6).
* **A dead job is marked**: a note whose lease expired unfinished is finished as ``abandoned``
  (its holder died) and redone under a new generation (issue 13, point 7).
* **A lost note is found again**: :func:`scan_for_notes` measures every conversation without a
  note and notes those over the soft watermark (a note lost to a crash).

Lease times are POSIX seconds from the injected ``lease_clock`` (the system clock by default);
note generations come from the window's own clock.
"""

from __future__ import annotations

import os
import socket
import threading
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from ..consolidation import lease
from ..memory.clock import Clock, SystemClock
from ..memory.errors import ConversationNotFound, StorageError
from ..memory.events import log_event
from ..memory.storage.base import write_scope
from ..memory.storage.rows import CompactionNote
from ..window.compactor import Compactor
from ..window.context import measure_total
from ..window.parts import ConversationRef, WindowParts

if TYPE_CHECKING:
    from ..memory.signals import StopSignals


@dataclass
class WorkerStats:
    """What a worker did since it started (``to_dict`` for ``--json``)."""

    holder: str
    sweeps: int = 0
    notes_taken: int = 0
    notes_done: int = 0
    notes_kept: int = 0
    notes_busy: int = 0
    folds: int = 0
    cards: int = 0
    lost_races: int = 0
    failures: int = 0
    backoffs: int = 0
    abandoned: int = 0
    warm_waits: int = 0
    errors: list[str] = field(default_factory=list)
    scanned_notes: int = 0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)

    def status_line(self) -> str:
        """One line for people: what the worker did so far."""
        return (f"{self.holder}: {self.notes_done} done, {self.notes_kept} kept, {self.folds} fold(s), "
                f"{self.cards} card(s), {self.lost_races} lost race(s), {self.failures} failure(s), "
                f"{self.backoffs} backoff(s), {self.abandoned} abandoned job(s) redone, {len(self.errors)} error(s)")


def lease_name(conversation_id: str) -> str:
    """The lease a worker holds while it folds ``conversation_id`` (its fire time is the note's
    generation, which is never reused)."""
    return f"compaction:{conversation_id}"


def scan_for_notes(parts: WindowParts) -> int:
    """Note every conversation over the soft watermark that has no note (a note lost to a crash,
    or pressure reported while nothing appended). :returns: how many notes were left."""
    settings, storage = parts.window, parts.storage
    left = 0
    for conversation_id in storage.runs.conversations_without_note():
        try:
            ref = ConversationRef.load(parts.archive, conversation_id)
        except ConversationNotFound:
            continue
        pressure = max(measure_total(parts, ref, settings), storage.archive.reported_usage(ref.id) or 0)
        if pressure >= settings.soft_tokens:
            with storage.transaction(write_scope(conversations=[ref.id])):
                left += storage.runs.note_compaction(ref.id, ref.namespace, pressure, parts.clock.now())
    return left


class Worker:
    """Takes compaction notes and folds their conversations off the hot path.

    :param parts: the window's parts (storage, clock, summarizer, window settings, ...).
    :param holder: this worker's name in the lease table (default ``host:pid:thread``).
    :param lease_seconds: how long a lease lasts; a worker killed mid-fold blocks its
        conversation this long. A running fold renews its lease every third of it (a heartbeat).
    :param poll_seconds: the wait between sweeps when no note is due.
    :param scan_every: run :func:`scan_for_notes` every this many sweeps (0 = never).
    :param backoff_base_seconds, backoff_cap_seconds: the wait after a failed attempt is
        ``min(cap, base * 2 ** (failures in a row - 1))``.
    :param cache_warm_seconds: a conversation whose last model call (its last
        :meth:`~memfold.window.conversation.Conversation.report_usage`, on the window's clock) is
        younger than this waits, unless it is past the hard watermark: its prompt prefix is
        probably still warm in the provider's cache, and a fold would rewrite it (issue 13,
        point 4). 0 folds at once.
    :param lease_clock: the clock lease times are read from (system clock by default).
    :param progress: called with a dict after every note handled (``--json`` progress).
    """

    def __init__(self, parts: WindowParts, *, holder: str | None = None, lease_seconds: float = 60.0,
                 poll_seconds: float = 0.25, scan_every: int = 20, backoff_base_seconds: float = 1.0,
                 backoff_cap_seconds: float = 300.0, cache_warm_seconds: float = 300.0,
                 lease_clock: Clock | None = None,
                 progress: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.parts = parts
        self.holder = holder or f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"
        self.lease_seconds = float(lease_seconds)
        self.poll_seconds = float(poll_seconds)
        self.scan_every = int(scan_every)
        self.backoff_base = float(backoff_base_seconds)
        self.backoff_cap = float(backoff_cap_seconds)
        self.cache_warm_seconds = float(cache_warm_seconds)
        self.lease_clock = lease_clock or SystemClock()
        self.progress = progress
        self.stats = WorkerStats(self.holder)

    # -- one sweep -------------------------------------------------------------------------
    def run_once(self) -> int:
        """Handle every note due now (each under its lease). :returns: how many notes were taken."""
        storage = self.parts.storage
        self.stats.sweeps += 1
        if self.scan_every and self.stats.sweeps % self.scan_every == 1:
            self.stats.scanned_notes += scan_for_notes(self.parts)
        taken = 0
        for note in storage.runs.compaction_notes(due_at=self.lease_clock.now()):
            if self.take(note):
                taken += 1
        return taken

    def take(self, note: CompactionNote) -> bool:
        """Fold ``note``'s conversation under its lease. :returns: False when another live worker
        holds the lease (or the note's generation is finished)."""
        storage, name = self.parts.storage, lease_name(note.conversation_id)
        note = self._reclaim(note)
        if not lease.acquire(storage, name, note.generation, self.holder, ttl_seconds=self.lease_seconds,
                             now=self.lease_clock.now()):
            self.stats.notes_busy += 1
            return False
        self.stats.notes_taken += 1
        outcome = "ok"
        done = threading.Event()
        beat = threading.Thread(target=self._heartbeat, args=(name, note.generation, done), daemon=True,
                                name=f"memfold-lease-{note.conversation_id}")
        beat.start()  # the lease lives as long as the fold does, however slow the summarizer
        try:
            outcome = self._fold(note)
        except StorageError as exc:  # a busy database: the note stays, the next sweep retries
            outcome = "failed"
            self.stats.errors.append(f"{note.conversation_id}: {exc}")
            self._renote(note, attempts=note.attempts, not_before=0.0, error=str(exc))
        finally:
            done.set()
            beat.join()
            lease.release(storage, name, note.generation, self.holder, now=self.lease_clock.now(), outcome=outcome)
        if self.progress is not None:
            self.progress({"conversation": note.conversation_id, "outcome": outcome, **self.stats.to_dict()})
        return True

    def _heartbeat(self, name: str, generation: int, done: threading.Event) -> None:
        """Renew this worker's lease every third of ``lease_seconds`` until ``done`` (the fold
        ended), so another worker never takes a conversation whose fold is still running; a
        killed worker's heartbeat dies with it and the lease expires as before."""
        while not done.wait(self.lease_seconds / 3):
            try:
                if not lease.renew(self.parts.storage, name, generation, self.holder, ttl_seconds=self.lease_seconds,
                                   now=self.lease_clock.now()):
                    return  # lost (expired and taken over): nothing left to keep alive
            except StorageError:  # a busy database: try again at the next beat
                continue

    def _reclaim(self, note: CompactionNote) -> CompactionNote:
        """A note whose lease expired unfinished (its worker died): mark that job ``abandoned``
        (issue 13, point 7; ``memfold runs --compaction`` shows it) and redo the work under a
        new generation. :returns: the note to take (the new generation, or ``note`` as it was)."""
        storage, name, now = self.parts.storage, lease_name(note.conversation_id), self.lease_clock.now()
        row = storage.runs.get_lease(name, note.generation)
        if row is None or row.finished_at is not None or row.expires_at > now or row.holder == self.holder:
            return note
        with storage.transaction(write_scope(conversations=[note.conversation_id], leases=[name])):
            if not lease.release(storage, name, note.generation, row.holder, now=now, outcome="abandoned"):
                return note  # another worker reclaimed it first
            storage.runs.renote_compaction(note.conversation_id, attempts=note.attempts, not_before=0.0,
                                           error=f"abandoned by {row.holder}")
        self.stats.abandoned += 1
        return storage.runs.compaction_note(note.conversation_id) or note

    def _fold(self, note: CompactionNote) -> str:
        parts, storage = self.parts, self.parts.storage
        try:
            ref = ConversationRef.load(parts.archive, note.conversation_id)
        except ConversationNotFound:
            with storage.transaction(write_scope(conversations=[note.conversation_id])):
                storage.runs.drop_compaction_note(note.conversation_id, note.generation)
            return "gone"
        settings = parts.window
        called = storage.archive.last_model_call_at(ref.id)
        if called is not None and self.cache_warm_seconds > 0:
            warm_left = called + self.cache_warm_seconds - parts.clock.now()
            if warm_left > 0:
                pressure = max(measure_total(parts, ref, settings), storage.archive.reported_usage(ref.id) or 0)
                if pressure < settings.hard_tokens:  # the prefix is probably cached: wait
                    self.stats.warm_waits += 1
                    self._renote(note, attempts=note.attempts, not_before=self.lease_clock.now() + min(
                        warm_left, self.cache_warm_seconds), error=None)
                    return "warm"
        # below the soft line, so the conversation is no longer due (due = pressure >= soft)
        report = Compactor(parts, ref, settings, parts.summarizer).compact(max(0, settings.soft_tokens - 1))
        self.stats.folds += 1 if report.folded else 0
        self.stats.cards += len(report.cards)
        self.stats.lost_races += report.lost_races
        self.stats.failures += len(report.failures)
        pressure = max(report.after_tokens, storage.archive.reported_usage(ref.id) or 0)
        if report.failures and not report.folded:
            attempts = note.attempts + 1
            wait = min(self.backoff_cap, self.backoff_base * 2 ** (attempts - 1))
            now = self.lease_clock.now()
            self.stats.backoffs += 1
            with storage.transaction(write_scope(conversations=[ref.id])):
                self._renote(note, attempts=attempts, not_before=now + wait, error=report.failures[-1]["error"])
                log_event(storage, at=parts.clock.now(), kind="compaction_backoff", namespace=ref.namespace,
                          subject=f"conversation:{ref.id}", cause=self.holder,
                          details={"attempts": attempts, "wait_seconds": wait, "error": report.failures[-1]["error"]})
            return "backoff"
        if pressure >= settings.soft_tokens and (report.folded or report.lost_races):
            self.stats.notes_kept += 1
            self._renote(note, attempts=0, not_before=0.0, error=None)
            return "kept"
        with storage.transaction(write_scope(conversations=[note.conversation_id])):
            storage.runs.drop_compaction_note(note.conversation_id, note.generation)
        self.stats.notes_done += 1
        return "ok"

    def _renote(self, note: CompactionNote, *, attempts: int, not_before: float, error: str | None) -> None:
        storage = self.parts.storage
        with storage.transaction(write_scope(conversations=[note.conversation_id])):
            storage.runs.renote_compaction(note.conversation_id, attempts=attempts, not_before=not_before, error=error)

    # -- the loop --------------------------------------------------------------------------
    def run(self, stop: "threading.Event | StopSignals") -> WorkerStats:
        """Sweep until ``stop`` is set (checked between notes and while idle): an event another
        thread sets, or the :class:`~memfold.memory.signals.StopSignals` of a foreground process.
        :returns: the stats."""
        while not stop.is_set():
            try:
                taken = self.run_once()
            except StorageError as exc:
                self.stats.errors.append(str(exc))
                taken = 0
            if not taken:
                stop.wait(self.poll_seconds)
        return self.stats


class WorkerThread:
    """A :class:`Worker` running in a daemon thread (``mf.start_worker()``); :meth:`stop` ends it."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        self._stop = threading.Event()
        self._thread = threading.Thread(target=worker.run, args=(self._stop,), name="memfold-worker", daemon=True)
        self._thread.start()

    @property
    def stats(self) -> WorkerStats:
        """The worker's figures so far."""
        return self.worker.stats

    def stop(self, timeout: float | None = 30.0) -> WorkerStats:
        """Ask the worker to stop after the note in hand, and wait for it."""
        self._stop.set()
        self._thread.join(timeout)
        return self.worker.stats


__all__ = ["Worker", "WorkerStats", "WorkerThread", "lease_name", "scan_for_notes"]
