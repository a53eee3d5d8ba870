"""The consolidation engines' parts, built once by the facade.

DESIGN.md §2, "Parts": the facade builds the injected parts once and hands them to the engines;
no engine imports or climbs back to the facade. The sleep-time pass
(:func:`~memfold.consolidation.consolidate.consolidate`) and the nightly job's body
(:func:`~memfold.consolidation.scheduler.run_job`) use exactly what is listed here, so what they
depend on is visible in one place and a test can build the parts without a
:class:`~memfold.MemFold`.

Invariant kept here: every write the pass makes goes through ``memory`` (the normal write path:
validation, supersession, restatement refresh, capacity eviction, the event log), on the same
``storage`` and under the same ``clock`` as the rest of the facade, so a consolidated fact is
indistinguishable from one written by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..memory.clock import Clock
from ..memory.storage.base import Storage
from ..memory.store import MemoryStore
from .extractors.base import Extractor


@dataclass
class ConsolidationParts:
    """The injected parts of the consolidation pass and the nightly job; the facade builds one.

    ``extractor`` is read on every pass, so a change made through the facade
    (``mf.extractor = ...``) reaches the next pass.

    :ivar storage: the opened :class:`~memfold.memory.storage.base.Storage` (runs, cursors,
        the ledger, leases and the pending episodes and turns are read and written through it).
    :ivar clock: the injected clock (the horizon, run times, consumption times).
    :ivar memory: the memory store every proposal is written through, and episodes consumed by.
    :ivar extractor: the default extractor of a pass (``None``: the deterministic
        :class:`~memfold.consolidation.extractors.rules.RulesExtractor`).
    """

    storage: Storage
    clock: Clock
    memory: MemoryStore
    extractor: Extractor | None = None


__all__ = ["ConsolidationParts"]
