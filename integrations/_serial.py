"""One lock per facade, shared by every integration adapter in the process.

A :class:`~memfold.MemFold` holds one SQLite connection (opened with ``check_same_thread=False``),
and a connection runs one transaction at a time. Frameworks call adapters from worker threads
(LangGraph runs graph nodes in a thread pool; async adapters hand work to a thread), so two
adapters over the same facade must never interleave their calls: each call holds this lock.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

_LOCKS: "weakref.WeakKeyDictionary[Any, threading.RLock]" = weakref.WeakKeyDictionary()
_GUARD = threading.Lock()


def facade_lock(memfold: Any) -> threading.RLock:
    """The re-entrant lock that serialises integration calls on ``memfold`` (created on first use)."""
    with _GUARD:
        lock = _LOCKS.get(memfold)
        if lock is None:
            lock = _LOCKS[memfold] = threading.RLock()
        return lock
