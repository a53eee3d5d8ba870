"""``StopSignals``: what ``memfold worker`` and ``memfold scheduler run`` stop on. The handler
records the signal and takes no lock, so a signal landing anywhere in the main thread (also
inside a lock the loop holds, where ``threading.Event.set()`` would wait for ever) is seen."""

from __future__ import annotations

import os
import signal
import threading

from memfold.memory.signals import StopSignals


def test_a_signal_is_recorded_and_the_previous_handler_comes_back():
    before = signal.getsignal(signal.SIGTERM)
    with StopSignals() as stop:
        assert not stop.is_set() and not stop.wait(0.05)  # nothing asked: the wait times out
        os.kill(os.getpid(), signal.SIGTERM)
        assert stop.wait(5) and stop.received == [signal.SIGTERM]
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_signal_landing_while_the_main_thread_holds_a_lock_does_not_hang():
    lock = threading.Condition(threading.Lock())  # what Event.wait() holds between its waits
    with StopSignals() as stop:
        with lock:
            os.kill(os.getpid(), signal.SIGTERM)  # the handler runs here, the lock held
            seen = stop.is_set()
        assert seen
        assert stop.wait(0)


def test_set_without_a_signal_stops_a_wait():
    stop = StopSignals()
    threading.Timer(0.05, stop.set).start()
    assert stop.wait(10)
