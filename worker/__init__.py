"""The background compaction worker (issue 13; DESIGN.md §1 "watermarks", "worker").

Folding calls a model and takes seconds, so it never sits where a user waits: past the soft
watermark an append only leaves a *compaction note* (conversation, pressure, when) and returns;
the worker takes the notes and folds. It runs as ``memfold worker DB`` (a process beside a bot
backend) or as ``mf.start_worker()`` (a thread in a single-process app); both run
:class:`Worker`, which takes the window's parts, never the facade.
"""

from .loop import Worker, WorkerStats, WorkerThread, scan_for_notes

__all__ = ["Worker", "WorkerStats", "WorkerThread", "scan_for_notes"]
