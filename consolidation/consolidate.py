"""The sleep-time pass: unconsumed episodes -> facts and rules, then the episodes are consumed.

Invariant kept here (DESIGN.md §4.8): each episode is consumed once, every derived record cites
its sources, and re-running changes nothing. How:

* **One transaction per batch.** Within one ``BEGIN IMMEDIATE`` transaction the pass re-checks
  that the batch is still unconsumed, writes each proposal through the normal write path
  (:meth:`MemoryStore.write`, so supersession, restatement refresh and capacity eviction apply),
  marks each episode ``consumed`` (logged in the event log), appends one ledger row per source
  listing what it produced, and adds the batch's counts to the run record. A crash at any point
  leaves the batch either fully done or not done at all.
* **Concurrency.** If another process consumed any episode of the batch between the read and
  the write lock, the batch is dropped (nothing written) and re-read; the ledger's primary key
  on the source is a second guard. Two processes on one namespace therefore consume each
  episode once and write each fact once.
* **Idempotence.** Consumed episodes are never read again and turns are read past a per-namespace
  cursor, so a second pass finds nothing to do and writes nothing but its (empty) run record.
* **Failures.** An extractor error (or invalid proposal) consumes nothing from that batch, stops
  the pass and is recorded in the run (``status='failed'``, ``errors``) and the event log.

The pass is a plain function of ``(parts, namespace, now)`` (STYLE.md rule 18): it takes the
:class:`~memfold.consolidation.parts.ConsolidationParts` the facade built (storage, clock, memory
store, default extractor), never the facade itself; the scheduler only calls it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

from ..memory.errors import ConsolidationError, ExtractorError, InvalidInput, MemfoldError, StorageConflict
from ..memory.events import log_event
from ..memory.validation import check_flag, check_name
from . import runs
from ..window.secrets import SECRET_MASK, readable_text
from ..memory.storage.base import Storage, write_scope
from .extractors.attributes import RECENT_SLOT, holds, just_talked_about
from .extractors.base import Episode, Extractor, Proposal, speaker_of
from .parts import ConsolidationParts

#: episodes per batch (and per transaction) by default
DEFAULT_BATCH_SIZE = 100
PROPOSAL_TYPES = ("semantic", "procedural")


def consolidate(
    parts: ConsolidationParts,
    namespace: str,
    *,
    now: object = None,
    dry_run: bool = False,
    batch_size: int = DEFAULT_BATCH_SIZE,
    include_turns: bool = False,
    extractor: Extractor | None = None,
    trigger: str = "manual",
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[int], None] | None = None,
) -> runs.ConsolidationRun:
    """Consolidate ``namespace``'s unconsumed episodes (and, optionally, its new archived turns).

    :param parts: the pass's parts (storage, clock, memory store, default extractor); the
        facade's are ``MemFold.consolidation_parts``.
    :param namespace: the tenant/user scope, e.g. ``"acme/dana"``.
    :param now: the horizon: only episodes and turns created at or before it are read (clock
        units: ticks, POSIX seconds or an aware datetime); default the clock's now.
    :param dry_run: propose without writing anything (no run record either); the returned run
        lists the proposals that would be written.
    :param batch_size: episodes per batch; each batch is one transaction.
    :param include_turns: also read the namespace's archived turns past its cursor (each turn's
        role says who spoke); they are not marked consumed (the archive is immutable), the cursor
        moves instead.
    :param extractor: overrides ``parts.extractor`` for this pass.
    :param trigger: recorded in the run (``manual``, ``cli``, ``schedule@<fire time>``).
    :param should_stop: polled between batches; when it returns True the pass ends with status
        ``stopped`` after the last committed batch.
    :param progress: called with the number of sources consumed so far after each batch.
    :returns: the :class:`~memfold.consolidation.runs.ConsolidationRun` (status ``ok``,
        ``failed`` or ``stopped``).
    :raises InvalidInput: for an empty namespace, a batch size below 1, or ``parts`` that is not a
        :class:`ConsolidationParts` (a :class:`~memfold.MemFold` included: call its
        ``consolidate`` method instead); nothing is written.
    """
    _check_parts(parts)
    check_name(namespace, "namespace")
    check_flag(dry_run, "dry_run")  # "no" is truthy: it made a dry run (round 14)
    check_flag(include_turns, "include_turns")  # "no" read the turns
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise InvalidInput(f"batch_size must be an integer >= 1, got {batch_size!r}")
    extractor = extractor or parts.extractor
    if extractor is None:
        from .extractors.rules import RulesExtractor

        extractor = RulesExtractor()
    clock, storage = parts.clock, parts.storage
    horizon = clock.now() if now is None else clock.coerce(now)
    run = runs.ConsolidationRun(id=None, namespace=namespace, extractor=extractor.id, trigger=trigger,
                                started_at=clock.now(), dry_run=dry_run)
    scope = write_scope(records=[namespace])  # a pass writes its namespace's records, runs and cursor
    if not dry_run:
        with storage.transaction(scope):
            run.id = storage.runs.start_run(namespace, extractor.id, trigger, run.started_at)

    kinds = ("records", "turns") if include_turns else ("records",)
    try:
        for kind in kinds:
            after_id = storage.runs.turn_cursor(namespace) if kind == "turns" else 0
            while True:
                if should_stop is not None and should_stop():
                    run.status = "stopped"
                    break
                batch, ids = _read_batch(storage, kind, namespace, after_id, horizon, batch_size)
                if not batch:
                    break
                try:
                    proposals = _resolve_slots(parts, namespace, _without_masks(extractor.extract(batch)))
                    _check_proposals(parts, namespace, proposals, batch)
                except (ExtractorError, InvalidInput) as exc:
                    _fail(parts, run, f"batch of {len(batch)} {kind} from {batch[0].source}: {exc}")
                    break
                if dry_run:
                    run.proposals.extend(proposals)
                    run.consumed.extend(e.source for e in batch)
                    run.batches += 1
                    after_id = ids[-1]
                    continue
                try:
                    done = _commit_batch(parts, run, kind, namespace, batch, ids, after_id, proposals)
                except StorageConflict:
                    done = False  # another process consumed a source first; re-read
                except MemfoldError as exc:
                    _fail(parts, run, f"writing a batch from {batch[0].source} failed: {exc}")
                    break
                if kind == "turns":
                    after_id = storage.runs.turn_cursor(namespace)
                if done and progress is not None:
                    progress(len(run.consumed))
            if run.status in ("failed", "stopped"):
                break
    except BaseException:
        if run.id is not None and not storage.in_transaction:
            with storage.transaction(scope):
                storage.runs.finish_run(run.id, "failed", clock.now(), run.errors + ["interrupted"])
        raise
    if run.status == "running":
        run.status = "ok"
    run.finished_at = clock.now()
    if run.id is not None:
        with storage.transaction(scope):
            storage.runs.finish_run(run.id, run.status, run.finished_at, run.errors)
    return run


def consolidate_all(parts: ConsolidationParts, *, include_turns: bool = False,
                    **kwargs: Any) -> list[runs.ConsolidationRun]:
    """Run :func:`consolidate` for every namespace with pending episodes (sorted by name).

    :param parts: as for :func:`consolidate`.
    :param kwargs: passed to :func:`consolidate` (``now``, ``batch_size``, ``should_stop``, ...).
    :returns: one run per namespace; stops early if ``should_stop`` says so.
    """
    _check_parts(parts)
    out = []
    should_stop = kwargs.get("should_stop")
    for namespace in parts.storage.runs.pending_namespaces(include_turns=include_turns):
        if should_stop is not None and should_stop():
            break
        out.append(consolidate(parts, namespace, include_turns=include_turns, **kwargs))
    return out


def episode_from_record(record_id: int, content: str, metadata: dict[str, Any], event_time: float | None,
                        created_at: float) -> Episode:
    """An :class:`Episode` for an episodic record; its role from metadata or text prefix."""
    return Episode(f"record:{record_id}", speaker_of(content, metadata), content,
                   event_time if event_time is not None else created_at)


def _check_parts(parts: object) -> None:
    """:raises InvalidInput: unless ``parts`` is a :class:`ConsolidationParts`."""
    if not isinstance(parts, ConsolidationParts):
        raise InvalidInput(f"the consolidation pass takes a ConsolidationParts (MemFold.consolidation_parts), "
                           f"got {type(parts).__name__}: pass mf.consolidation_parts, or call mf.consolidate(...)")


def _read_batch(storage: Storage, kind: str, namespace: str, after_id: int, horizon: float,
                limit: int) -> tuple[list[Episode], list[int]]:
    """The next batch as episodes ordered by (event time, id), plus their ids in id order."""
    if kind == "records":
        rows = storage.runs.pending_episodes(namespace, after_id=after_id, horizon=horizon, limit=limit)
        episodes = [episode_from_record(r.id, r.content, r.metadata, r.event_time, r.created_at) for r in rows]
    else:
        rows, episodes = [], []
        while not episodes:  # a batch of only unreadable secret turns is read past, never ends the pass
            more = storage.runs.pending_turns(namespace, after_id=after_id, horizon=horizon, limit=limit)
            if not more:
                break
            rows.extend(more)
            after_id = more[-1].id
            for t in more:
                text = readable_text(t.content, t.labels, t.metadata)
                if text is not None:  # issue 9: secret spans masked, a wholly secret turn skipped
                    episodes.append(Episode(f"turn:{t.id}", t.role, text, t.created_at, masked=text != t.content))
    ids = [r.id for r in rows]
    episodes.sort(key=lambda e: (e.event_time if e.event_time is not None else float("-inf"), int(e.source.split(":")[1])))
    return episodes, ids


def _without_masks(proposals: Sequence[Any]) -> list[Any]:
    """Drop proposals whose content repeats a secret mask: a masked span is no value (issue 9)."""
    return [p for p in proposals if not (isinstance(p, Proposal) and isinstance(p.content, str)
                                         and SECRET_MASK in p.content)]


def _resolve_slots(parts: ConsolidationParts, namespace: str, proposals: Sequence[Any]) -> list[Any]:
    """Give every proposal that names "the slot holding X" (``Proposal.slot_of``, issue 20) the
    key of the active fact in ``namespace`` whose value is X. A write that no slot holds X for
    falls back to ``metadata["fallback_key"]`` or is dropped; a retirement is dropped (nothing
    holds it, so nothing is retired)."""
    out: list[Any] = []
    facts = None
    for p in proposals:
        if not isinstance(p, Proposal) or p.slot_of is None:
            out.append(p)
            continue
        if facts is None:
            facts = [r for r in parts.memory.list(namespace, "semantic") if r.key and r.key.startswith("user.")]
        if p.slot_of == RECENT_SLOT:  # "I switched to Obsidian": the slot just talked about, or nothing
            key = just_talked_about([(r.key, r.provenance) for r in facts], p.sources)
            if key and not p.retire:
                out.append(dataclasses.replace(p, key=key, slot_of=None))
            continue
        keys = list(dict.fromkeys(r.key for r in reversed(facts) if holds(r.content, p.slot_of)))
        if not keys and not p.retire and p.metadata.get("fallback_key"):
            keys = [p.metadata["fallback_key"]]
        for key in keys[: None if p.retire else 1]:
            out.append(dataclasses.replace(p, key=key, slot_of=None))
    return out


def _check_proposals(parts: ConsolidationParts, namespace: str, proposals: Sequence[Proposal], batch: Sequence[Episode]) -> None:
    """Every proposal must be a well-formed fact or rule citing only this batch.

    :raises ExtractorError: naming the first bad proposal.
    """
    sources = {e.source for e in batch}
    for i, p in enumerate(proposals):
        if not isinstance(p, Proposal):
            raise ExtractorError(f"proposal {i} is a {type(p).__name__}, not a Proposal")
        if p.type not in PROPOSAL_TYPES:
            raise ExtractorError(f"proposal {i} has type {p.type!r}: an extractor proposes semantic or procedural records")
        if p.type == "semantic" and not p.key:
            raise ExtractorError(f"proposal {i} ({p.content!r}) is a fact without a slot key")
        if not p.sources or not set(p.sources) <= sources:
            raise ExtractorError(f"proposal {i} ({p.content!r}) cites {list(p.sources)}, not sources of this batch")
        if p.retire:
            if p.type != "semantic":
                raise ExtractorError(f"proposal {i} retires a {p.type} record: only a fact's slot can be retired")
            continue
        try:
            parts.memory.validate(namespace, p.type, p.content, key=p.key, importance=p.importance,
                                    provenance=p.sources, event_time=p.event_time)
        except InvalidInput as exc:
            raise ExtractorError(f"proposal {i} does not validate: {exc}") from None


def derived_labels(groups: Any) -> list[str]:
    """The labels a record derived from sources requires (issue 15, point 1; DESIGN.md §4.11):
    the union of its sources' labels, without ``secret``: a secret turn reaches the pass only with
    its secret spans masked (:func:`~memfold.window.secrets.readable_text`), so what is derived
    from it holds no secret, while every other label of the source (``legal``, ``hr``) carries over."""
    from ..window.labels import SECRET_LABEL

    out: set[str] = set()
    for g in groups:
        out.update(g)
    out.discard(SECRET_LABEL)
    return sorted(out)


def _source_labels(storage: Storage, batch: Sequence[Episode]) -> dict[str, list[str]]:
    """``{source: labels}`` of a batch's episodes (turns and episodic records), read now."""
    turn_ids = [int(e.source.split(":")[1]) for e in batch if e.source.startswith("turn:")]
    record_ids = [int(e.source.split(":")[1]) for e in batch if e.source.startswith("record:")]
    out: dict[str, list[str]] = {}
    if turn_ids:
        out.update((f"turn:{t.id}", list(t.labels)) for t in storage.archive.turns(turn_ids))
    if record_ids:
        out.update((f"record:{i}", list(r.labels)) for i, r in storage.records.get_many(record_ids).items())
    return out


def _commit_batch(parts: ConsolidationParts, run: runs.ConsolidationRun, kind: str, namespace: str,
                  batch: Sequence[Episode], ids: list[int], after_id: int, proposals: Sequence[Proposal]) -> bool:
    """Write one batch in one transaction. Returns False (nothing written) if it raced another pass."""
    storage, store = parts.storage, parts.memory
    cause = f"consolidation run {run.id}"
    with storage.transaction(write_scope(records=[namespace])):
        if kind == "records" and storage.runs.count_active_episodes(ids) != len(ids):
            return False
        if kind == "turns" and storage.runs.turn_cursor(namespace) != after_id:
            return False
        products: dict[str, list[int]] = {e.source: [] for e in batch}
        source_labels = _source_labels(storage, batch)
        written: list[int] = []
        facts = rules = 0
        for p in proposals:
            if p.retire:  # "I no longer have a favourite colour": the slot's active fact retires
                for old in store.list(namespace, "semantic", key=p.key):
                    if not p.content or holds(old.content, p.content):
                        store.retire(old.id, cause=cause)
                continue
            record = store.write(namespace, p.type, p.content, key=p.key, importance=p.importance,
                                 provenance=list(p.sources), event_time=p.event_time,
                                 labels=derived_labels(source_labels.get(s, ()) for s in p.sources),
                                 metadata={"consolidation_run": run.id, "extractor": run.extractor},
                                 cause=cause)
            written.append(record.id)
            for source in p.sources:
                products[source].append(record.id)
            if p.type == "semantic":
                facts += 1
            else:
                rules += 1
        at = parts.clock.now()
        for episode in batch:
            if kind == "records":
                store.set_status(int(episode.source.split(":")[1]), "consumed", cause=cause)
            storage.runs.record_consumed(episode.source, namespace, run.id, at, products[episode.source])
        if kind == "turns":
            storage.runs.set_turn_cursor(namespace, ids[-1], run.id)
        storage.runs.add_batch(run.id, episodes=len(batch) if kind == "records" else 0,
                       turns=len(batch) if kind == "turns" else 0, facts=facts, rules=rules)
    run.batches += 1
    run.proposals.extend(proposals)
    run.written.extend(written)
    run.consumed.extend(e.source for e in batch)
    run.facts_written += facts
    run.rules_written += rules
    if kind == "records":
        run.episodes_consumed += len(batch)
    else:
        run.turns_consumed += len(batch)
    return True


def _fail(parts: ConsolidationParts, run: runs.ConsolidationRun, message: str) -> None:
    """Record a failure in the run and (unless a dry run) in the event log."""
    run.status = "failed"
    run.errors.append(message)
    if run.id is not None:
        with parts.storage.transaction(write_scope(records=[run.namespace])):
            log_event(parts.storage, at=parts.clock.now(), kind="consolidation_failed", subject=f"run:{run.id}",
                      namespace=run.namespace, cause=run.extractor, details={"error": message})


def get_run(storage: Storage, run_id: int) -> runs.ConsolidationRun:
    """A recorded run by id. :raises ConsolidationError: if there is none."""
    run = storage.runs.get_run(run_id)
    if run is None:
        raise ConsolidationError(f"no consolidation run with id {run_id}")
    return run
