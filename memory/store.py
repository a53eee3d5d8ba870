"""The typed memory stores over the records family of storage: write, get, list and change status.

Invariant kept here: a record's bytes are never deleted (storage refuses DELETE), every status
change is logged in the event log inside the same transaction, and bad input is rejected before
anything is written (DESIGN.md §4.7, §5). The policies that decide *which* status changes happen
(scoring in :mod:`memfold.memory.scoring`, supersession, refresh and eviction in
:mod:`memfold.memory.forgetting`) are pure functions; this module applies their decisions through
:class:`~memfold.memory.storage.base.RecordStorage` inside the write's own transaction, so every
write path (``write``, consolidation, the CLI) forgets by the same policy and a failed write
changes nothing. No SQL lives here (it is in :mod:`memfold.memory.storage.sqlite.records`).
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Protocol, Sequence

import numpy as np

from .clock import Clock
from .errors import CapacityExceeded, InvalidInput, MemfoldError, RecordNotFound
from .events import Event, list_events, log_event
from .forgetting import (
    DEFAULT_ACCESS_WEIGHT,
    PolicyChange,
    SameMeaning,
    StorePolicy,
    WriteAction,
    WriteOutcome,
    choose_evictions,
    decide_write,
    same_normalised_text,
)
from .records import RECORD_TYPES, STATUSES, MemoryRecord, check_record_type, check_status
from .scoring import ScoredRecord, rank, score
from .storage.base import Storage, write_scope
from .validation import (metadata_json, check_flag, result_count, check_id, check_importance, check_labels, check_name, check_provenance,
                         check_text)

#: marks a keyword argument the caller did not pass (``None`` is a meaningful value there)
_UNSET: Any = object()

#: the ``restatement=`` choices of :meth:`MemoryStore.write`
RESTATEMENTS = ("meaning", "exact")


def _identical(existing: str, new: str) -> bool:
    """The ``restatement="exact"`` test: only byte-identical content restates a slot's value."""
    return existing == new


class RecordSearcher(Protocol):
    """What :meth:`MemoryStore.read` needs of a search (a :class:`memfold.memory.search.HybridSearch`
    fits): hits with ``id``, ``type`` and ``score`` attributes, best first."""

    def search(self, query: str, **kwargs: Any) -> Sequence[Any]:
        """Hits for ``query`` (``kinds``, ``namespace``, ``type`` and ``limit`` are passed as keywords)."""


class MemoryStore:
    """All typed stores of one database, namespaced per tenant/user.

    :param storage: the opened :class:`~memfold.memory.storage.base.Storage` (its ``records``
        and ``events`` families are used).
    :param clock: the injected clock; every time column comes from it.
    :param searcher: the search ``read(query=...)`` ranks with (see :attr:`searcher`).
    """

    #: The restatement test of the write path: ``same_meaning(existing_content, new_content)``.
    #: Asked ONLY about the active record of the same (namespace, type, key) slot, so it can
    #: never cause supersession across slots. Default: equal after normalisation (casefold,
    #: collapsed whitespace, trailing punctuation stripped). Replace it per instance (e.g. with an
    #: embedding similarity test) to let restatements in other words refresh too.
    same_meaning: SameMeaning = staticmethod(same_normalised_text)

    def __init__(self, storage: Storage, clock: Clock, searcher: RecordSearcher | None = None) -> None:
        self.storage = storage
        self.records = storage.records
        self.clock = clock
        if searcher is not None:
            self.searcher = searcher

    # -- writing -------------------------------------------------------------------------
    def validate(
        self,
        namespace: object,
        type: object,
        content: object,
        *,
        key: object = None,
        importance: object = 0.5,
        labels: object = None,
        provenance: object = None,
        event_time: object = None,
        metadata: object = None,
    ) -> dict[str, Any]:
        """Check a would-be record and return its normalised fields; writes nothing.

        :raises InvalidInput: for an unknown type, empty/non-string content, NUL bytes, lone
            surrogates, importance outside [0, 1] or NaN, or an empty namespace or key.
        """
        fields = {
            "namespace": check_name(namespace, "namespace"),
            "type": check_record_type(type),
            "content": check_text(content, "content"),
            "key": None if key is None else check_name(key, "key"),
            "importance": check_importance(importance),
            "labels": check_labels(labels),
            "provenance": check_provenance(provenance),
            "event_time": None if event_time is None else self.clock.coerce(event_time),
        }
        fields["metadata"] = metadata_json(metadata)
        return fields

    def insert(self, fields: dict[str, Any], *, pinned: bool = False, cause: str = "write") -> MemoryRecord:
        """Insert validated ``fields`` as a new active record and log a ``write`` event.

        Call inside ``storage.transaction()``; the write path with policies is :meth:`write`.
        """
        now = self.clock.now()
        record_id = self.records.insert(
            namespace=fields["namespace"],
            type=fields["type"],
            key=fields["key"],
            content=fields["content"],
            importance=fields["importance"],
            created_at=now,
            written_at=now,
            event_time=fields["event_time"],
            pinned=bool(pinned),
            provenance=fields["provenance"],
            labels=fields["labels"],
            metadata=fields["metadata"],
        )
        log_event(
            self.storage,
            at=now,
            kind="write",
            subject=f"record:{record_id}",
            namespace=fields["namespace"],
            record_id=record_id,
            cause=cause,
            details={"type": fields["type"], "key": fields["key"]},
        )
        return self.get(record_id)

    def write(
        self,
        namespace: str,
        type: str,
        content: str,
        *,
        key: str | None = None,
        importance: float = 0.5,
        labels: Iterable[str] | None = None,
        provenance: Iterable[str] | None = None,
        event_time: object = None,
        metadata: dict[str, Any] | None = None,
        pinned: bool = False,
        cause: str = "write",
        restatement: str = "meaning",
    ) -> MemoryRecord:
        """Validate and write one record in one transaction, applying the forgetting policy.

        Inside the same transaction (issue 3; :mod:`memfold.memory.forgetting`): a keyed record
        restating its slot's current value refreshes it (no new row); a new value retires the
        slot's active record (linked both ways); an older statement by event time is stored as
        retired; and when the ``(namespace, type)`` store goes over capacity the lowest-scoring
        active record that is neither pinned nor this one is evicted. Use :meth:`write_outcome`
        to learn which of these happened.

        :param namespace: tenant/user scope, e.g. ``"acme/dana"``.
        :param type: ``working``, ``semantic``, ``episodic`` or ``procedural``.
        :param key: the slot for supersession, e.g. ``"user.contact_preference"`` (None: no slot,
            never supersedes or refreshes anything).
        :param importance: in [0, 1].
        :param event_time: when the stated thing happened (clock units), if known; orders
            statements of one slot.
        :param pinned: never evict this record (supersession still applies).
        :param restatement: what counts as restating the slot's current value (a refresh, no new
            row): ``"meaning"`` (default: :attr:`same_meaning`, equal after normalisation or, with
            an embedder, the same meaning) or ``"exact"`` (only byte-identical content; any other
            content supersedes, so every distinct value keeps its own row in the slot's history:
            what a key-value store whose values must round-trip exactly needs, such as
            :class:`memfold.integrations.langgraph.MemfoldStore`).
        :returns: the stored :class:`MemoryRecord` (the refreshed one for a restatement).
        :raises InvalidInput: see :meth:`validate`; nothing is written.
        :raises CapacityExceeded: the store is full and every other active record is pinned;
            nothing is written.
        """
        return self.write_outcome(
            namespace, type, content, key=key, importance=importance, labels=labels, provenance=provenance,
            event_time=event_time, metadata=metadata, pinned=pinned, cause=cause, restatement=restatement,
        ).record

    def write_outcome(
        self,
        namespace: str,
        type: str,
        content: str,
        *,
        key: str | None = None,
        importance: float = 0.5,
        labels: Iterable[str] | None = None,
        provenance: Iterable[str] | None = None,
        event_time: object = None,
        metadata: dict[str, Any] | None = None,
        pinned: bool = False,
        cause: str = "write",
        restatement: str = "meaning",
    ) -> WriteOutcome:
        """:meth:`write`, returning a :class:`~memfold.memory.forgetting.WriteOutcome`: the
        record, the :class:`~memfold.memory.forgetting.WriteAction` taken and the ids retired
        and evicted. Same parameters and errors as :meth:`write`."""
        if restatement not in RESTATEMENTS:
            raise InvalidInput(f"restatement must be one of {', '.join(RESTATEMENTS)}, got {restatement!r}")
        check_flag(pinned, "pinned")
        fields = self.validate(
            namespace, type, content, key=key, importance=importance, labels=labels,
            provenance=provenance, event_time=event_time, metadata=metadata,
        )
        # the namespace's lock (PostgreSQL): its slots and its capacity are read, then written
        with self.storage.transaction(write_scope(records=[fields["namespace"]])):
            return self.apply_write(fields, pinned=pinned, cause=cause, restatement=restatement)

    def apply_write(self, fields: dict[str, Any], *, pinned: bool = False, cause: str = "write",
                    restatement: str = "meaning") -> WriteOutcome:
        """Apply validated ``fields`` (from :meth:`validate`) with supersession, refresh and eviction.

        Call inside ``storage.transaction()`` (an exception rolls the whole write back).
        ``restatement`` as in :meth:`write`.
        :raises CapacityExceeded: see :meth:`write`.
        """
        key = fields["key"]
        actives = self._active_in_slot(fields["namespace"], fields["type"], key) if key is not None else []
        current = actives[-1] if actives else None
        same = self.same_meaning if restatement == "meaning" else _identical
        action = decide_write(current, fields["content"], fields["event_time"], same)
        if action is WriteAction.REFRESH:
            assert current is not None
            return WriteOutcome(self._refresh(current, fields, pinned=pinned, cause=cause), action)
        new = self.insert(fields, pinned=pinned, cause=cause)
        if action is WriteAction.STORE_RETIRED:
            assert current is not None
            self._store_as_older(new, current)
            return WriteOutcome(self.get(new.id), action, retired=(new.id,))
        retired: list[int] = []
        if action is WriteAction.SUPERSEDE:
            assert current is not None
            for old in actives:
                linked = old.id == current.id
                self._retire_row(
                    old,
                    cause=f"superseded by record {new.id} in slot {key}" if linked
                    else f"duplicate active record in slot {key}, retired by record {new.id}",
                    superseded_by=new.id if linked else None,
                    details={"slot": [fields["namespace"], fields["type"], key], "by": new.id},
                )
                retired.append(old.id)
            self.records.set_supersedes(new.id, current.id)
        evicted = self._enforce_capacity(
            fields["namespace"], fields["type"], protect=new.id, cause=f"over capacity after write of record {new.id}"
        )
        return WriteOutcome(self.get(new.id), action, retired=tuple(retired), evicted=tuple(evicted))

    # -- forgetting internals (storage calls only; the decisions live in memory/forgetting.py)
    def _active_in_slot(self, namespace: str, type: str, key: str) -> list[MemoryRecord]:
        """Active records of one slot, oldest first (normally at most one)."""
        return self.records.active_in_slot(namespace, type, key)

    def _retire_row(self, record: MemoryRecord, *, cause: str, superseded_by: int | None = None,
                    details: dict[str, Any] | None = None) -> None:
        """Set an active record to retired (optionally linking its successor) and log it."""
        self.records.retire(record.id, superseded_by=superseded_by)
        log_event(
            self.storage, at=self.clock.now(), kind="retire", subject=f"record:{record.id}", namespace=record.namespace,
            record_id=record.id, cause=cause,
            details={"from": record.status, "to": "retired", "superseded_by": superseded_by, **(details or {})},
        )

    def _refresh(self, current: MemoryRecord, fields: dict[str, Any], *, pinned: bool, cause: str) -> MemoryRecord:
        """A restatement: bump the slot's record's written_at (and importance, event time, sources)."""
        now = self.clock.now()
        importance = max(current.importance, fields["importance"])
        times = [t for t in (current.event_time, fields["event_time"]) if t is not None]
        event_time = max(times) if times else None
        provenance = list(current.provenance) + [p for p in fields["provenance"] if p not in current.provenance]
        labels = sorted(set(current.labels) | set(fields["labels"]))
        metadata = {**current.metadata, **json.loads(fields["metadata"])}
        self.records.refresh(
            current.id, written_at=now, importance=importance, event_time=event_time, provenance=provenance,
            labels=labels, metadata=json.dumps(metadata, sort_keys=True, ensure_ascii=False),
            pinned=current.pinned or bool(pinned),
        )
        log_event(
            self.storage, at=now, kind="refresh", subject=f"record:{current.id}", namespace=current.namespace,
            record_id=current.id, cause=cause,
            details={"written_at": [current.written_at, now], "importance": [current.importance, importance],
                     "key": current.key},
        )
        return self.get(current.id)

    def _store_as_older(self, new: MemoryRecord, current: MemoryRecord) -> None:
        """Retire ``new`` (older by event time than the slot's ``current``) and link it into the
        slot's history at its place in event-time order, keeping links consistent both ways."""
        assert new.event_time is not None
        successor, seen = current, {current.id}
        while successor.supersedes is not None and successor.supersedes not in seen:
            previous = self.get(successor.supersedes)
            if previous.event_time is None or previous.event_time <= new.event_time:
                break
            seen.add(previous.id)
            successor = previous
        predecessor = successor.supersedes
        self.records.set_supersedes(new.id, predecessor)
        self.records.set_supersedes(successor.id, new.id)
        if predecessor is not None:
            self.records.replace_superseded_by(predecessor, old=successor.id, new=new.id)
        self._retire_row(
            new,
            cause=f"older statement: event time {new.event_time:g} is before record {current.id}'s "
                  f"{current.event_time:g} in slot {new.key}",
            superseded_by=successor.id,
            details={"slot": [new.namespace, new.type, new.key], "current": current.id},
        )

    def _store_arrays(self, namespace: str, type: str) -> np.ndarray:
        """Active records of one store as a float64 array ``(n, 5)``: id, importance, written_at,
        access_count, pinned."""
        rows = self.records.score_rows(namespace, type)
        return np.array(rows, dtype=np.float64).reshape(-1, 5)

    def _enforce_capacity(self, namespace: str, type: str, *, protect: int | None, cause: str) -> list[int]:
        """Evict the lowest-scoring evictable active records until the store fits its capacity.

        :raises CapacityExceeded: when not enough records may be evicted (all pinned).
        """
        policy = self.policy(namespace, type)
        if policy.capacity is None:
            return []
        arr = self._store_arrays(namespace, type)
        excess = arr.shape[0] - policy.capacity
        if excess <= 0:
            return []
        now = self.clock.now()
        half_life = policy.effective_half_life(type, self.clock.unit)
        ids = arr[:, 0].astype(np.int64)
        scores = score(arr[:, 1], arr[:, 2], arr[:, 3], now, half_life=half_life, access_weight=policy.access_weight)
        victims = choose_evictions(ids, scores, arr[:, 4] != 0, protect=protect, excess=excess)
        if victims is None:
            pinned = int((arr[:, 4] != 0).sum())
            raise CapacityExceeded(
                f"the {type} store of {namespace} holds {arr.shape[0]} active records against a capacity of "
                f"{policy.capacity}, and {pinned} of them are pinned, so nothing can be evicted: unpin or retire "
                "a record, or raise the capacity with set_policy"
            )
        by_id = dict(zip(ids.tolist(), scores.tolist()))
        for victim in victims:
            self.records.set_status(victim, "evicted")
            log_event(
                self.storage, at=now, kind="evict", subject=f"record:{victim}", namespace=namespace, record_id=victim,
                cause=cause,
                details={"from": "active", "to": "evicted", "score": by_id[victim], "capacity": policy.capacity,
                         "type": type},
            )
        return victims

    # -- reading -------------------------------------------------------------------------
    def get(self, record_id: int) -> MemoryRecord:
        """The record with ``record_id``. :raises RecordNotFound: if there is none."""
        check_id(record_id, "record id")
        record = self.records.get(record_id)
        if record is None:
            raise RecordNotFound(f"no memory record with id {record_id}")
        return record

    def list(
        self,
        namespace: str | None = None,
        type: str | None = None,
        *,
        key: str | None = None,
        include_inactive: bool = False,
        status: str | None = None,
    ) -> list[MemoryRecord]:
        """Records in write order (id). Active only unless ``include_inactive`` or ``status`` is given.

        :raises InvalidInput: for an unknown type or status.
        """
        check_flag(include_inactive, "include_inactive")  # "no" is truthy: it listed retired records (round 14)
        if status is None and not include_inactive:
            status = "active"
        if namespace is not None:
            check_name(namespace, "namespace")  # '\ud800' broke the SQL (UnicodeEncodeError)
        if key is not None:
            check_name(key, "key")
        return self.records.list(
            namespace=namespace,
            type=None if type is None else check_record_type(type),
            key=key,
            status=None if status is None else check_status(status),
        )

    def namespaces(self) -> list[str]:
        """Every namespace that has records, sorted."""
        return self.records.namespaces()

    # -- status changes ------------------------------------------------------------------
    def set_status(self, record_id: int, status: str, *, cause: str, kind: str | None = None) -> MemoryRecord:
        """Change a record's status and log it (kind defaults to the status's verb).

        :raises RecordNotFound: if there is no such record.
        :raises InvalidInput: for an unknown status.
        """
        check_status(status)
        with self.storage.transaction():
            record = self.get(record_id)
            self.records.set_status(record_id, status)
            log_event(
                self.storage,
                at=self.clock.now(),
                kind=kind or {"retired": "retire", "evicted": "evict", "consumed": "consume", "erased": "erase", "active": "status"}[status],
                subject=f"record:{record_id}",
                namespace=record.namespace,
                record_id=record_id,
                cause=cause,
                details={"from": record.status, "to": status},
            )
            return self.get(record_id)

    # -- reading by score ----------------------------------------------------------------
    def read(
        self,
        namespace: str,
        limit: int = 10,
        *,
        types: str | Iterable[str] | None = None,
        at: object = None,
        touch: bool = True,
        query: str | None = None,
        k: int | None = None,
    ) -> list[ScoredRecord]:
        """The top ``limit`` active records of ``namespace`` by score, best first.

        With ``query``, only records relevant to it are read: the hybrid search of
        :mod:`memfold.memory.search` (BM25 + embeddings when the facade has an embedder, see
        :attr:`searcher`) picks up to ``max(50, 5k)`` candidates, and they are ordered by
        ``score x relevance`` (relevance = fused search score / the best one, in (0, 1]), so a
        relevant but stale fact can lose to a fresh, important one. Each result's ``score``
        stays the plain policy score (issue 6, point 2).

        score = importance x 0.5^(age / half_life) x (1 + access_weight x access_count), with
        age = at - written_at and each store's own policy (:mod:`memfold.memory.scoring`;
        DESIGN.md §1 "score"). Ties: the newer record (larger id) first. Reading never deletes,
        retires or evicts; with ``touch`` it raises each returned record's ``access_count`` by
        one and sets ``last_access_at`` to the clock's now (age is not reset). Access updates are
        not logged as events: they are statistics, not status changes. The ranking is one read
        snapshot and takes no write lock; the access update is one statement after it.

        :param namespace: tenant/user scope.
        :param limit: how many records, >= 1 (``k=`` is its deprecated alias).
        :param types: one type or several (default: all four typed stores).
        :param at: score at this time (clock units or an aware datetime); default the clock's now.
            Records written after ``at`` score as if just written.
        :param touch: count this read as an access (default). ``False`` ranks without changing
            anything, e.g. for an operator inspecting the store.
        :returns: :class:`~memfold.memory.scoring.ScoredRecord` list; each ``record`` is as it was
            before this read touched it, so ``score`` can be recomputed from it.
        :raises InvalidInput: for an empty namespace, a ``k`` below 1, an unknown type or a bad time.
        """
        namespace = check_name(namespace, "namespace")
        k, name = result_count(limit, k, default=10, where="read")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidInput(f"{name} must be a whole number >= 1, got {k!r}")
        check_flag(touch, "touch")
        if types is None:
            wanted = list(RECORD_TYPES)
        else:
            wanted = [types] if isinstance(types, str) else list(types)
            if not wanted:
                raise InvalidInput("types is empty: give at least one type, or None for all")
            wanted = sorted({check_record_type(t) for t in wanted}, key=RECORD_TYPES.index)
        at_value = self.clock.now() if at is None else self.clock.coerce(at)
        relevance = None if query is None else self._relevance(namespace, wanted, query, k)
        with self.storage.snapshot():  # one consistent read, no write lock (DESIGN.md §3)
            result = self._rank(namespace, k, wanted, at_value, relevance)
        if touch and result:
            # the one write of a read: a single statement counting the accesses of what was shown
            # (atomic on its own; ``access_count + 1`` never loses a concurrent reader's count)
            self.records.touch([s.record.id for s in result], self.clock.now())
        return result

    #: The search used by ``read(query=...)``: a :class:`RecordSearcher` such as
    #: :class:`memfold.memory.search.HybridSearch`. The facade sets one sharing its embedder
    #: (injected, so this module never imports the search that imports it).
    searcher: RecordSearcher | None = None

    def _relevance(self, namespace: str, types: list[str], query: str, k: int) -> dict[int, float]:
        """``{record id: relevance in (0, 1]}`` for the active records of ``types`` relevant to ``query``."""
        if self.searcher is None:
            raise MemfoldError(
                "read(query=...) needs a search: set MemoryStore.searcher (the MemFold facade sets its HybridSearch)"
            )
        hits = self.searcher.search(query, kinds=("record",), namespace=namespace,
                                    type=types[0] if len(types) == 1 else None, limit=max(50, 5 * k))
        hits = [h for h in hits if h.type in types]
        if not hits:
            return {}
        best = max(h.score for h in hits)
        return {int(h.id): (h.score / best if best > 0 else 1.0) for h in hits}

    def _rank(self, namespace: str, k: int, types: list[str], at: float,
              relevance: dict[int, float] | None = None) -> list[ScoredRecord]:
        """Score every active record of the given stores at ``at`` and fetch the top ``k``
        (with ``relevance``: only those records, ordered by score x relevance)."""
        ids_parts, score_parts = [], []
        for type in types:
            policy = self.policy(namespace, type)
            arr = self._store_arrays(namespace, type)
            if not arr.shape[0]:
                continue
            ids_parts.append(arr[:, 0].astype(np.int64))
            score_parts.append(score(arr[:, 1], arr[:, 2], arr[:, 3], at,
                                     half_life=policy.effective_half_life(type, self.clock.unit),
                                     access_weight=policy.access_weight))
        if not ids_parts:
            return []
        ids = np.concatenate(ids_parts)
        scores = np.concatenate(score_parts)
        if relevance is not None:
            keep = np.array([int(i) in relevance for i in ids], dtype=bool)
            if not keep.any():
                return []
            ids, scores = ids[keep], scores[keep]
            weighted = scores * np.array([relevance[int(i)] for i in ids])
            top = rank(weighted, ids, k)
            top_ids = [int(i) for i in ids[top]]
            by_id = self.records.get_many(top_ids)
            return [ScoredRecord(by_id[i], float(s), at) for i, s in zip(top_ids, scores[top].tolist())]
        top = rank(scores, ids, k)
        top_ids = [int(i) for i in ids[top]]
        by_id = self.records.get_many(top_ids)
        return [ScoredRecord(by_id[i], float(s), at) for i, s in zip(top_ids, scores[top].tolist())]

    # -- policy --------------------------------------------------------------------------
    def policy(self, namespace: str, type: str) -> StorePolicy:
        """The :class:`~memfold.memory.forgetting.StorePolicy` of one ``(namespace, type)`` store
        (the documented defaults when none was set). :raises InvalidInput: for an unknown type."""
        check_record_type(type)
        check_name(namespace, "namespace")  # '\udcff' broke the SQL
        stored = self.records.policy(namespace, type)
        if stored is None:
            return StorePolicy()
        return StorePolicy(capacity=stored.capacity, half_life=stored.half_life,
                           access_weight=DEFAULT_ACCESS_WEIGHT if stored.access_weight is None else stored.access_weight)

    def set_policy(
        self,
        namespace: str,
        type: str,
        *,
        capacity: int | None = _UNSET,
        half_life: float | None = _UNSET,
        access_weight: float | None = _UNSET,
        cause: str = "set_policy",
    ) -> PolicyChange:
        """Change a store's policy; only the arguments passed change. Logged as a ``policy`` event.

        Lowering the capacity below the active count evicts the lowest-scoring unpinned records
        at once, in the same transaction.

        :param capacity: most active records (>= 1), or ``None`` for unbounded.
        :param half_life: in clock units (> 0), or ``None`` for the default of the type and clock.
        :param access_weight: >= 0, or ``None`` for the default (0.1).
        :returns: a :class:`~memfold.memory.forgetting.PolicyChange` (policy now in force, ids evicted).
        :raises InvalidInput: for a bad value; nothing changes.
        :raises CapacityExceeded: a lowered capacity cannot be reached because too many records
            are pinned; nothing changes.
        """
        namespace = check_name(namespace, "namespace")
        check_record_type(type)
        old = self.policy(namespace, type)
        changes: dict[str, Any] = {}
        if capacity is not _UNSET:
            changes["capacity"] = capacity
        if half_life is not _UNSET:
            changes["half_life"] = half_life
        if access_weight is not _UNSET:
            changes["access_weight"] = DEFAULT_ACCESS_WEIGHT if access_weight is None else access_weight
        new = old.updated(**changes)
        with self.storage.transaction(write_scope(records=[namespace])):
            now = self.clock.now()
            self.records.put_policy(namespace, type, capacity=new.capacity, half_life=new.half_life,
                                    access_weight=new.access_weight, updated_at=now)
            log_event(self.storage, at=now, kind="policy", subject=f"store:{namespace}/{type}", namespace=namespace,
                      cause=cause, details={"type": type, "from": old.to_dict(), "to": new.to_dict()})
            evicted = self._enforce_capacity(namespace, type, protect=None,
                                             cause=f"capacity of the {type} store lowered to {new.capacity}")
        return PolicyChange(namespace, type, new, tuple(evicted), new.effective_half_life(type, self.clock.unit))

    # -- pin, retire, revert -------------------------------------------------------------
    def pin(self, record_id: int, *, cause: str = "manual") -> MemoryRecord:
        """Pin a record: eviction never picks it (supersession still retires it). Logged as ``pin``.
        :raises RecordNotFound: if there is no such record."""
        return self._set_pinned(record_id, True, cause)

    def unpin(self, record_id: int, *, cause: str = "manual") -> MemoryRecord:
        """Unpin a record, making it evictable again. Logged as ``unpin``.
        :raises RecordNotFound: if there is no such record."""
        return self._set_pinned(record_id, False, cause)

    def _set_pinned(self, record_id: int, pinned: bool, cause: str) -> MemoryRecord:
        with self.storage.transaction():
            record = self.get(record_id)
            if record.pinned != pinned:
                self.records.set_pinned(record_id, pinned)
                log_event(self.storage, at=self.clock.now(), kind="pin" if pinned else "unpin",
                          subject=f"record:{record_id}", namespace=record.namespace, record_id=record_id, cause=cause,
                          details={"status": record.status})
            return self.get(record_id)

    def retire(self, record_id: int, *, cause: str = "manual") -> MemoryRecord:
        """Retire an active record by hand (no successor). Its bytes and links stay; logged.

        :raises RecordNotFound: if there is no such record.
        :raises InvalidInput: if the record is not active.
        """
        with self.storage.transaction():
            record = self.get(record_id)
            if record.status != "active":
                raise InvalidInput(f"record {record_id} is {record.status}: only an active record can be retired")
            self._retire_row(record, cause=cause)
            return self.get(record_id)

    def revert(self, record_id: int, *, cause: str = "manual") -> MemoryRecord:
        """Undo a retirement (or an eviction): the record becomes active again. Logged as ``revert``.

        The reinstated record becomes its slot's current value: any other active record of the
        same (namespace, type, key) is retired (logged, cause names the revert). The supersession
        link to the successor it had is removed on both sides (the event's details keep it), so
        links stay consistent both ways. If the store is then over capacity, the lowest-scoring
        other unpinned record is evicted.

        :raises RecordNotFound: if there is no such record.
        :raises InvalidInput: unless the record is retired or evicted.
        :raises CapacityExceeded: if it cannot fit because every other record is pinned; nothing changes.
        """
        with self.storage.transaction():
            record = self.get(record_id)
            if record.status not in ("retired", "evicted"):
                raise InvalidInput(
                    f"record {record_id} is {record.status}: only a retired or evicted record can be reverted"
                )
            unlinked = None
            if record.superseded_by is not None:
                unlinked = record.superseded_by
                self.records.clear_supersedes(unlinked, if_predecessor=record_id)
                self.records.set_superseded_by(record_id, None)
            displaced = []
            if record.key is not None:
                for other in self._active_in_slot(record.namespace, record.type, record.key):
                    self._retire_row(other, cause=f"record {record_id} reinstated by revert in slot {record.key}",
                                     details={"reinstated": record_id})
                    displaced.append(other.id)
            self.records.set_status(record_id, "active")
            log_event(self.storage, at=self.clock.now(), kind="revert", subject=f"record:{record_id}",
                      namespace=record.namespace, record_id=record_id, cause=cause,
                      details={"from": record.status, "to": "active", "unlinked_successor": unlinked,
                               "retired": displaced})
            self._enforce_capacity(record.namespace, record.type, protect=record_id,
                                   cause=f"over capacity after revert of record {record_id}")
            return self.get(record_id)

    def events(self, namespace: str | None = None, *, record_id: int | None = None, kind: str | None = None,
               limit: int | None = None) -> list[Event]:
        """The audit log (oldest first), optionally filtered."""
        return list_events(self.storage, namespace=namespace, record_id=record_id, kind=kind, limit=limit)


class TypedStore:
    """One typed store (``working``, ``semantic``, ``episodic`` or ``procedural``) of a namespace.

    A thin view over :class:`MemoryStore` with the type (and optionally the namespace) fixed.
    """

    def __init__(self, store: MemoryStore, type: str, namespace: str | None = None) -> None:
        self.store = store
        self.type = check_record_type(type)
        self.namespace = namespace

    def write(self, content: str, *, namespace: str | None = None, **kwargs: Any) -> MemoryRecord:
        """Write a record of this type; see :meth:`MemoryStore.write`."""
        ns = namespace or self.namespace
        if ns is None:
            raise InvalidInput("namespace is required: pass namespace=... or bind the store to one")
        return self.store.write(ns, self.type, content, **kwargs)

    def list(self, *, namespace: str | None = None, **kwargs: Any) -> list[MemoryRecord]:
        """Records of this type; see :meth:`MemoryStore.list`."""
        return self.store.list(namespace or self.namespace, self.type, **kwargs)

    def read(self, limit: int = 10, *, namespace: str | None = None, **kwargs: Any) -> list[ScoredRecord]:
        """The top ``limit`` active records of this type by score (``k=``: deprecated alias);
        see :meth:`MemoryStore.read`."""
        ns = namespace or self.namespace
        if ns is None:
            raise InvalidInput("namespace is required: pass namespace=... or bind the store to one")
        return self.store.read(ns, limit, types=[self.type], **kwargs)

    def policy(self, *, namespace: str | None = None) -> StorePolicy:
        """This store's policy; see :meth:`MemoryStore.policy`."""
        ns = namespace or self.namespace
        if ns is None:
            raise InvalidInput("namespace is required: pass namespace=... or bind the store to one")
        return self.store.policy(ns, self.type)

    def set_policy(self, *, namespace: str | None = None, **changes: Any) -> PolicyChange:
        """Change this store's policy; see :meth:`MemoryStore.set_policy`."""
        ns = namespace or self.namespace
        if ns is None:
            raise InvalidInput("namespace is required: pass namespace=... or bind the store to one")
        return self.store.set_policy(ns, self.type, **changes)

    def get(self, record_id: int) -> MemoryRecord:
        """A record of this type by id. :raises RecordNotFound: if missing or of another type."""
        record = self.store.get(record_id)
        if record.type != self.type:
            raise RecordNotFound(f"record {record_id} is {record.type}, not {self.type}")
        return record
