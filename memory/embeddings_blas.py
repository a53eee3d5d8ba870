"""One BLAS thread while memfold's embedding threads run beside the caller's (issue 18, point 2).

A hybrid search embeds in a worker thread (``memfold-search-embed``, and ``memfold-embed-ahead``
after an append) while the calling thread ranks BM25 and scans the stored vectors: both run
matrix products in numpy's BLAS at the same time. numpy's OpenBLAS (the wheels' pthreads build)
runs each product on one pool of threads shared by every caller, by default as many as there are
cores; two callers at once queue on that pool and spin while they wait, and its threads spin
between products, so on 2 cores a search right after an append took several times its CPU
(round 14, 100K turns in one conversation, load 4.5: process CPU p50 172 ms against 37 ms with
one BLAS thread, the scan's own thread CPU 24 ms against 6; wall p50 / p95 271 / 779 ms against
63 / 99). memfold's threads are its own parallelism, so before its first background embedding
(:meth:`~.embeddings.EmbeddingIndex.prepare`) the process's OpenBLAS is set to one thread, once,
unless the caller chose: ``OPENBLAS_NUM_THREADS``, ``GOTO_NUM_THREADS`` or ``OMP_NUM_THREADS``
set leaves it alone, and so does ``MEMFOLD_BLAS_THREADS=keep``; ``MEMFOLD_BLAS_THREADS=N`` sets
``N``. It is the process's setting (OpenBLAS has no per-thread one in a pthreads build): the
caller's own numpy products run on one thread too from then on. The thread count never changes a
result (each output element is summed the same way; the bench's hit digests are the same).
OpenBLAS is found and set through ``threadpoolctl``; without an OpenBLAS loaded (MKL, Accelerate)
nothing is changed.

::

    planned_threads(environ)  the thread count to set, or None to leave BLAS alone
    limit_blas_threads()      apply it once per process (EmbeddingIndex.prepare calls it)
    blas_threads()            numpy's OpenBLAS thread count now, or None without one
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Mapping

import numpy as np

from .errors import InvalidInput

#: environment variable: ``keep`` (leave BLAS as it is) or a thread count; unset: one thread
#: unless one of :data:`CHOSEN` is set
BLAS_THREADS_ENV = "MEMFOLD_BLAS_THREADS"
#: the variables through which a caller chooses OpenBLAS's threads itself (memfold then keeps them)
CHOSEN = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")

_lock = threading.Lock()
_applied = False
_found: list[tuple[Callable[[int], Any], Callable[[], int]]] | bool = False  # False: not looked for yet


def planned_threads(environ: Mapping[str, str]) -> int | None:
    """The OpenBLAS thread count memfold sets for ``environ``, or ``None`` to leave it alone.

    :raises InvalidInput: for a :data:`BLAS_THREADS_ENV` value that is neither ``keep`` nor a
        positive integer."""
    value = str(environ.get(BLAS_THREADS_ENV, "")).strip()
    if value.lower() == "keep":
        return None
    if value:
        if not value.isdigit() or int(value) < 1:
            raise InvalidInput(f"{BLAS_THREADS_ENV}={value!r}: use 'keep' (leave numpy's BLAS threads as they "
                               f"are) or a positive number of threads")
        return int(value)
    if any(str(environ.get(name, "")).strip() for name in CHOSEN):
        return None
    return 1


def _openblas() -> list[tuple[Callable[[int], Any], Callable[[], int]]]:
    """``[(set_num_threads, get_num_threads)]`` of every OpenBLAS this process loaded, numpy's first
    (another package may carry its own copy: each has its own pool), found by ``threadpoolctl``.

    threadpoolctl (3.8) lets only one Python thread, the first to set a count, change a pthreads
    OpenBLAS; memfold's setter gives that control back after its one change (it clears it only when
    it took it), so a caller's own ``threadpool_limits`` from any thread still works afterwards."""
    global _found
    if _found is not False:
        return _found  # type: ignore[return-value]
    try:
        from threadpoolctl import OpenBLASController, ThreadpoolController
        controllers = ThreadpoolController().select(internal_api="openblas").lib_controllers
    except Exception:  # noqa: BLE001 - no threadpoolctl, or a library it cannot read: leave BLAS alone
        controllers = []
    numpy_dir = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy")
    controllers = sorted(controllers, key=lambda c: (not str(c.filepath).startswith(numpy_dir), str(c.filepath)))

    def pair(controller: Any) -> tuple[Callable[[int], Any], Callable[[], int]]:
        def set_threads(threads: int) -> None:
            controller.set_num_threads(int(threads))
            clear = getattr(OpenBLASController, "clear_controlling_thread", None)  # threadpoolctl >= 3.8
            if clear is not None:
                clear()  # only if this thread took control here

        return set_threads, controller.get_num_threads

    _found = [pair(c) for c in controllers]
    return _found


def blas_threads() -> int | None:
    """How many threads numpy's OpenBLAS runs a product on now (``None`` without one)."""
    found = _openblas()
    return int(found[0][1]()) if found else None


def limit_blas_threads() -> int | None:
    """Set OpenBLAS's threads as :func:`planned_threads` of ``os.environ`` says, the first time
    only (a later change by the caller stays); returns the count set, or ``None`` when nothing was.

    :raises InvalidInput: for a bad :data:`BLAS_THREADS_ENV` (on every call, until it is fixed)."""
    global _applied
    if _applied:
        return None
    threads = planned_threads(os.environ)
    with _lock:
        if _applied:
            return None
        _applied = True
        found = _openblas() if threads is not None else []
        for setter, _ in found:
            setter(threads)
        return threads if found else None
