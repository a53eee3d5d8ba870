"""Consolidation's records: run records, the consumed-source ledger, the turn cursor.

The rows live behind the storage seam, in the runs family (:class:`~memfold.memory.storage.base.RunStorage`;
on SQLite :mod:`memfold.memory.storage.sqlite.runs`); the pass in
:mod:`memfold.consolidation.consolidate` is policy only. Invariants the storage keeps:

* every source (``"record:12"``, ``"turn:5"``) is consumed at most once: a second consumption
  raises :class:`~memfold.memory.errors.StorageConflict` and rolls its whole batch back;
* the ledger is append-only and each row lists what its source produced, so every episode stays
  linked to the facts and rules made from it;
* a run row is written when a pass starts and updated after each committed batch, so a pass that
  dies keeps status ``running`` with the counts of the batches that did commit.

The functions below are the read helpers the CLI and tests use; each takes the
:class:`~memfold.memory.storage.base.Storage` (``mf.storage``).
"""

from __future__ import annotations

from typing import Any

from ..memory.storage.base import RunStorage, Storage
from ..memory.storage.rows import ConsolidationRun

__all__ = ["ConsolidationRun", "check_namespace_exists", "consumption", "get_run", "list_runs",
           "pending_namespaces", "turn_cursor"]


def _runs(storage: Storage) -> RunStorage:
    return storage.runs


def get_run(storage: Storage, run_id: int) -> ConsolidationRun | None:
    """The run with this id, or None."""
    return _runs(storage).get_run(run_id)


def list_runs(storage: Storage, namespace: str | None = None, limit: int | None = None) -> list[ConsolidationRun]:
    """Runs oldest first, optionally of one namespace; ``limit`` keeps the newest N.

    :raises InvalidInput: for a ``limit`` that is not a whole number >= 0 (``int()`` took ``"x"``
        and NaN), or a bad ``namespace``."""
    from ..memory.validation import MAX_ID, check_count, check_name

    check_count(limit, "runs limit", minimum=0, allow_none=True)
    if namespace is not None:
        check_name(namespace, "namespace")
    return _runs(storage).list_runs(namespace, None if limit is None else min(limit, MAX_ID))


def consumption(storage: Storage, source: str) -> dict[str, Any] | None:
    """The ledger row of ``source`` (run id, time, products), or None if not consumed."""
    return _runs(storage).consumption(source)


def turn_cursor(storage: Storage, namespace: str) -> int:
    """The id of the last archived turn of ``namespace`` already consolidated (0 for none)."""
    return _runs(storage).turn_cursor(namespace)


def pending_namespaces(storage: Storage, *, include_turns: bool = False) -> list[str]:
    """Namespaces with active episodic records (and, with ``include_turns``, unread turns), sorted."""
    return _runs(storage).pending_namespaces(include_turns=include_turns)


def check_namespace_exists(storage: Storage, namespace: str) -> None:
    """Refuse a namespace that holds nothing at all (no conversation, memory record or protected
    record), so a typo such as ``consolidate -n nope`` fails instead of recording an empty "ok"
    run. The nightly job never asks: it only visits namespaces with pending work.

    :raises InvalidInput: for an empty or malformed name. :raises NotFound: for an unknown namespace.
    """
    from ..memory.errors import NotFound
    from ..memory.validation import check_name
    from ..window.archive import namespace_exists

    check_name(namespace, "namespace")
    if not namespace_exists(storage, namespace):
        raise NotFound(f"no namespace {namespace!r}: no conversation, memory record or protected record "
                       f"belongs to it; nothing consolidated")
