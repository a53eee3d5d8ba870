"""Stop signals for foreground loops (``memfold worker``, ``memfold scheduler run``).

A Python signal handler runs in the main thread between two bytecodes, wherever that thread is.
One that takes a lock the main thread already holds waits for ever: ``threading.Event.set()``
from a handler deadlocks when the signal lands while the main thread is inside the same event's
``wait()`` bookkeeping (it holds the event's condition lock there; cpython issue 126434). A
scheduler worker in CI kept running fire times for minutes after SIGTERM, as that would. So the handler
here only records the signal in a list, and the loop polls it with ``time.sleep``, which takes no
lock and which a signal interrupts.
"""

from __future__ import annotations

import signal
import time
from types import FrameType
from typing import Any

#: how often a waiting loop looks at the recorded signals (seconds)
POLL_SECONDS = 0.1


class StopSignals:
    """SIGINT and SIGTERM (or ``signals``) ask a loop to stop; a context manager installs the
    handlers in the main thread and puts the previous ones back on exit.

    It quacks like the part of :class:`threading.Event` a loop uses (``is_set()`` and
    ``wait(timeout)``), so ``Worker.run(stop)`` takes either. Nothing here takes a lock."""

    def __init__(self, signals: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)) -> None:
        self.signals = tuple(signals)
        self.received: list[int] = []
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> "StopSignals":
        for sig in self.signals:
            self._previous[sig] = signal.getsignal(sig)
            signal.signal(sig, self._record)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def _record(self, signum: int, frame: FrameType | None) -> None:
        self.received.append(signum)  # list.append takes no Python-level lock

    def set(self) -> None:
        """Ask the loop to stop without a signal (as a signal would)."""
        self.received.append(0)

    def is_set(self) -> bool:
        """Whether a stop was asked for."""
        return bool(self.received)

    def wait(self, timeout: float | None = None) -> bool:
        """Sleep until a stop is asked for or ``timeout`` seconds pass (``None``: until a stop);
        returns :meth:`is_set`."""
        end = None if timeout is None else time.monotonic() + max(0.0, float(timeout))
        while not self.received:
            left = POLL_SECONDS if end is None else end - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(POLL_SECONDS, left))
        return self.is_set()
