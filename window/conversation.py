"""A conversation: a channel, ticket or thread whose turns are archived verbatim.

This module is the per-conversation handle that the facade hands out. Appending stores the turn
in the lossless archive in one transaction (DESIGN.md §4.1, §4.2). The handle holds the facade's
:class:`~memfold.window.parts.WindowParts` and the conversation's
:class:`~memfold.window.parts.ConversationRef`, and passes both to the engines (compiled context,
compactor, recall tools, tree export); it never sees the facade itself (DESIGN.md §2, "Parts").
"""

from __future__ import annotations

import io
import os
from typing import Any, Callable, Iterable, Mapping

from ..memory.errors import InvalidInput
from ..memory.storage.base import Storage
from .archive import AppendOutcome, Archive, Turn
from .cards import Card, CardStore
from .catalog import Catalog, CatalogItem
from .parts import ConversationRef, WindowParts
from .transcripts import read_jsonl, write_jsonl


class Conversation:
    """One conversation, as :meth:`memfold.MemFold.conversation` hands it out.

    :param parts: the injected parts the window engines use (shared by every conversation of a
        facade, so a part the facade swaps reaches them all).
    :param ref: the conversation (id, namespace, family, parent, lineage), e.g.
        ``ConversationRef.load(parts.archive, "ticket-42")``.
    """

    def __init__(self, parts: WindowParts, ref: ConversationRef) -> None:
        self.parts = parts
        self.ref = ref
        self.catalog: Catalog = parts.catalog(ref)

    @property
    def id(self) -> str:
        """The conversation's id."""
        return self.ref.id

    @property
    def namespace(self) -> str:
        """The namespace the conversation belongs to (it never moves)."""
        return self.ref.namespace

    @property
    def family_id(self) -> str:
        """The family whose turns and cards the conversation shares (forks of one root)."""
        return self.ref.family_id

    @property
    def parent_id(self) -> str | None:
        """The conversation this one was forked from, or ``None``."""
        return self.ref.parent_id

    @property
    def archive(self) -> Archive:
        """The turn archive (shared)."""
        return self.parts.archive

    @property
    def cards(self) -> CardStore:
        """The card store (shared)."""
        return self.parts.cards

    @property
    def storage(self) -> Storage:
        """The opened storage (shared)."""
        return self.parts.storage

    def __repr__(self) -> str:
        return f"Conversation({self.id!r}, namespace={self.namespace!r})"

    def append(self, turn: Mapping[str, Any], *, compact: bool = True, idempotency_key: str | None = None) -> int:
        """Archive one turn verbatim and return its id.

        :param turn: an OpenAI-shaped message, e.g. ``{"role": "user", "content": "hi"}``; may also
            carry ``created_at`` (ticks or an aware datetime), ``metadata`` and ``labels``.
        :param compact: apply the watermarks (compact at the hard one, or at the soft one with
            ``compact_on_append``). ``False`` is for callers that compact themselves right after,
            such as a meter that shows the size before compaction; keeping the budget (DESIGN.md
            §4.5) is then the caller's job.

        The facade's secret detector (``MemFold(secrets=...)``, issue 9) reads the turn with the
        one before it: a turn holding a PIN, password or security answer is labelled ``secret``
        and its secret spans are kept in ``metadata["secret_spans"]``
        (:mod:`memfold.window.secrets`); labels the caller gave are kept.

        :param idempotency_key: names this attempt to append this turn (a UUID, a message id),
            unique in the conversation: a retry with the same key and turn returns the id the
            first attempt archived and writes nothing (issue 16; see :meth:`append_outcome`).

        :raises InvalidInput: for a malformed turn, or a key already used for another turn
            (nothing is written).
        """
        return self.append_outcome([turn], compact=compact, idempotency_keys=[idempotency_key]).turn_ids[0]

    def append_many(self, turns: Iterable[Mapping[str, Any]], *, compact: bool = True,
                    idempotency_keys: Iterable[str | None] | None = None) -> list[int]:
        """Archive several turns in one transaction (all or nothing); returns their ids.
        ``compact`` and secret detection as in :meth:`append`; ``idempotency_keys``: one key (or
        ``None``) per turn, see :meth:`append_outcome`."""
        return list(self.append_outcome(turns, compact=compact, idempotency_keys=idempotency_keys).turn_ids)

    def append_outcome(self, turns: Iterable[Mapping[str, Any]], *, compact: bool = True,
                       idempotency_keys: Iterable[str | None] | None = None) -> AppendOutcome:
        """:meth:`append_many`, returning an :class:`~memfold.window.archive.AppendOutcome`: the
        turn ids and which were replayed. A turn whose idempotency key this conversation already
        holds (with the same role, content, name and tool calls) is not written again; only the
        turns written pass the constraint extractor and the watermarks (issue 16).

        :raises InvalidInput: for a malformed turn, a bad or repeated key, or a key already used
            for other content; nothing is written.
        """
        given = list(turns)
        archived: list[Turn] = []
        in_catalog: list[bool] = []

        def with_the_turns(written: list[Turn], before_seq: int) -> None:
            """In the append's transaction: the new turns' catalog items (one write transaction per
            append, issue 18, point 4)."""
            archived.extend(written)
            in_catalog.append(self.catalog.extend(written, before_seq))

        outcome = self.archive.append_outcome(self.id, self._detect_secrets(given),
                                              idempotency_keys=idempotency_keys, on_written=with_the_turns)
        self._observe_constraints([t.id for t in archived], archived)
        if compact and outcome.written:
            self._after_append(synced=bool(in_catalog and in_catalog[0]))
        return outcome

    def _detect_secrets(self, turns: list[Any]) -> list[Any]:
        """``turns`` with the ``secret`` label (and spans) added where the facade's detector finds
        a secret; the first is read after the last archived turn, each next one after the one
        before it. Unchanged when detection is off. :raises InvalidInput: for a detector's bad span."""
        from .secrets import check_detector_spans, label_turn

        detector = self.parts.secret_detector
        if detector is None or not turns:
            return turns
        context = getattr(detector, "context_turns", None)  # a detector that wants more than one turn back
        reach = max(1, context) if isinstance(context, int) and not isinstance(context, bool) else 1
        last = self.archive.last_seq(self.id, lineage=self.ref.lineage)
        tail = self.archive.history(self.id, after_seq=max(0, last - reach), lineage=self.ref.lineage) if last else []
        earlier: list[Any] = [{"role": t.role, "content": t.content} for t in tail]
        out = []
        for turn in turns:
            if isinstance(turn, Mapping) and isinstance(turn.get("content"), str):
                previous = earlier[-1] if earlier else None
                found = (detector.spans(turn, previous, earlier=list(earlier)) if context is not None
                         else detector.spans(turn, previous))
                out.append(label_turn(turn, check_detector_spans(found, turn["content"], detector)))
            else:  # malformed or content-less (tool calls): validation decides
                out.append(turn)
            if isinstance(turn, Mapping):
                earlier = (earlier + [turn])[-reach:]
        return out

    def _observe_constraints(self, turn_ids: list[int], turns: list[Mapping[str, Any]]) -> None:
        """Pass every new user turn through the constraint extractor (issue 8, point 2): standing
        instructions become protected records with the turn as provenance. A secret turn is read
        with its secret spans masked (``[secret]``; the tracker does it, see
        :meth:`~memfold.window.constraints.ConstraintTracker.observe`), so "Never read my PIN 4471
        back" is protected as "Never read my PIN [secret] back" and the turn stays secret."""
        tracker = self.parts.constraints
        if tracker is None:
            return
        role = (lambda t: t.role) if all(isinstance(t, Turn) for t in turns) else (lambda t: t.get("role"))
        user_ids = [i for i, t in zip(turn_ids, turns) if role(t) == "user"]  # validated by the append
        if not user_ids:
            return
        known = {t.id: t for t in turns if isinstance(t, Turn)}  # as archived: no second read
        found = known if all(i in known for i in user_ids) else self.turns_by_id(user_ids)
        for turn in sorted((found[i] for i in user_ids if i in found), key=lambda t: t.seq):
            if turn.role == "user":
                tracker.observe(turn, namespace=self.namespace, lineage=self.ref.lineage)

    def history(self, *, after_seq: int = 0, limit: int | None = None, reader: Any = None) -> list[Turn]:
        """Every turn in append order, including a fork's inherited turns.

        :param after_seq: only turns with a larger seq.
        :param limit: at most this many turns (counted after the reader's filter).
        :param reader: a :class:`~memfold.window.labels.Reader` or label list: turns whose labels it
            lacks are left out (``None`` = the trusted owner, every turn; DESIGN.md §4.9).
        :raises InvalidInput: for a bad ``reader``.
        """
        from .labels import as_reader, can_read

        rdr = as_reader(reader)
        lineage = self.ref.lineage
        if rdr is None:
            return self.archive.history(self.id, after_seq=after_seq, limit=limit, lineage=lineage)
        visible = [t for t in self.archive.history(self.id, after_seq=after_seq, lineage=lineage)
                   if can_read(rdr, t.labels)]
        return visible if limit is None else visible[:limit]

    def fork(self, new_id: str, *, at: int | None = None) -> "Conversation":
        """A new conversation that shares this one's turns so far (by pointer, not copy).

        :param at: fork after this seq instead of at the end: the fork sees turns ``1..at`` and
            nothing after (``0``: none; see :meth:`clear`). Its catalog starts from this one's, a
            card that reaches past ``at`` replaced by its children.
        :raises InvalidInput: for an id in use or ``at`` outside ``0..`` the last seq.
        """
        self.archive.create_conversation(new_id, self.namespace, parent_id=self.id, fork_after_seq=at)
        return Conversation(self.parts, ConversationRef.load(self.archive, new_id))

    def import_jsonl(self, path: str | os.PathLike, *, progress: Callable[[int, int], None] | None = None) -> list[int]:
        """Append every message of a JSONL transcript, all or nothing.

        :param progress: called as ``progress(done, total)`` while writing.

        Every message passes the secret detector as in :meth:`append`.

        :raises InvalidInput: ``"<path> line N: ..."`` for the first bad line; nothing is written.
        """
        messages = read_jsonl(path)
        normalized = []
        for msg in messages:
            line = msg.pop("__line__")
            normalized.append((line, msg))
        # validate each line with its number, then write once
        from .archive import normalize_turn

        for line, msg in normalized:
            normalize_turn(msg, self.archive.clock, where=f"{path} line {line}: ")
        total = len(normalized)
        report = (lambda done: progress(done, total)) if progress else None
        given = [m for _, m in normalized]
        ids = self.archive.append_many(self.id, self._detect_secrets(given), progress=report)
        self._observe_constraints(ids, given)
        return ids

    def export_jsonl(self, out: Any = None, *, with_times: bool = False, reader: Any = None) -> str | int:
        """Write the history as JSONL chat messages to ``out`` (a text stream), or return it as a
        string when ``out`` is None.

        :param reader: as in :meth:`history`: turns whose labels the reader lacks are not written.
        :returns: the JSONL text (``out`` None) or the number of turns written.
        """
        turns = self.history(reader=reader)
        if out is None:
            buf = io.StringIO()
            write_jsonl(turns, buf, with_times=with_times)
            return buf.getvalue()
        return write_jsonl(turns, out, with_times=with_times)

    # -- the window (issue 4) ----------------------------------------------------------------
    def window_settings(self, overrides: Mapping[str, Any] | None = None, **more: Any):
        """The facade's :class:`~memfold.window.settings.WindowSettings` with per-call overrides
        (``budget``/``output_reserve`` aliases accepted). :raises InvalidInput: for a bad value."""
        return self.parts.window.with_overrides(dict(overrides or {}), **more)

    def _after_append(self, *, synced: bool = False) -> None:
        """Watermarks (issue 4, point 5; issue 13, points 1-2), after the append committed.

        Past the hard watermark the fold runs here, in the foreground; past the soft one the
        append only leaves a compaction note for the worker (:mod:`memfold.worker`), or folds
        too with ``compact_on_append``. Nothing here raises for reasons of concurrency: the turn
        is committed, so a lost race or a busy database leaves a note instead (the worker or the
        scanner finishes the job) and the append returns its ids.
        """
        from ..memory.errors import StorageError

        from .context import measure_total

        settings = self.parts.window
        pressure = 0
        try:
            # the append just wrote the catalog items when ``synced``: no second sync check
            pressure = max(measure_total(self.parts, self.ref, settings, sync=not synced), self.reported_usage() or 0)
            if pressure >= settings.hard_tokens or (settings.compact_on_append and pressure >= settings.soft_tokens):
                report = self.compact()
                pressure = max(report.after_tokens, self.reported_usage() or 0)
            if pressure >= settings.soft_tokens:
                self.leave_note(pressure)
        except StorageError:
            try:
                self.leave_note(pressure)
            except StorageError:
                pass  # the scanner finds a conversation over the soft line without a note

    def leave_note(self, pressure: int) -> bool:
        """Leave a compaction note for the background worker (issue 13, point 2): the
        conversation, its pressure and when. One note per conversation: a later note updates the
        pressure. :returns: True when the note is new."""
        with self.storage.transaction():
            return self.storage.runs.note_compaction(self.id, self.namespace, int(pressure), self.parts.clock.now())

    def compaction_note(self) -> dict[str, Any] | None:
        """The conversation's compaction note as a dict, or ``None`` when none is waiting."""
        import dataclasses

        note = self.storage.runs.compaction_note(self.id)
        return None if note is None else dataclasses.asdict(note)

    def pressure(self, **overrides: Any) -> int:
        """Watermark pressure in tokens: the larger of the compiled context's own size (without
        memories) and the prompt tokens last reported with :meth:`report_usage`."""
        from .context import measure_total

        return max(measure_total(self.parts, self.ref, self.window_settings(overrides)), self.reported_usage() or 0)

    def window_status(self, **overrides: Any) -> dict[str, Any]:
        """``{"tokens", "reported", "pressure", "usable", "soft", "hard", "due", "over"}``:
        ``due`` when pressure reached the soft watermark, ``over`` when it passed the usable budget."""
        from .context import measure_total

        settings = self.window_settings(overrides)
        tokens = measure_total(self.parts, self.ref, settings)
        reported = self.reported_usage()
        pressure = max(tokens, reported or 0)
        return {"tokens": tokens, "reported": reported, "pressure": pressure, "usable": settings.usable_tokens,
                "soft": settings.soft_tokens, "hard": settings.hard_tokens,
                "due": pressure >= settings.soft_tokens, "over": pressure > settings.usable_tokens}

    def context(self, budget: int | None = None, output_reserve: int | None = None, *,
                reader: Iterable[str] | None = None, **overrides: Any):
        """The compiled context for the next model call (issue 4, point 1).

        Compacts first when pressure reached the hard watermark or the context does not fit.

        :param budget: ``budget_tokens`` for this call (default: the facade's window settings).
        :param output_reserve: ``output_reserve_tokens`` for this call (default: the facade's,
            capped at ``budget // 4`` when only ``budget`` is given, so ``context(budget=2000)``
            works with the default 4,096-token reserve; see ``WindowSettings.with_overrides``).
        :param reader: the reader's labels (``None`` = every label); passed to the section builder.
        :param overrides: any other :class:`~memfold.window.settings.WindowSettings` field.
        :returns: a :class:`~memfold.window.context.CompiledContext` within ``budget - output_reserve``.
        :raises BudgetError: when what must stay verbatim cannot fit, naming the sizes.
        """
        from .compactor import Compactor
        from .context import build_sections, check_protected_fits, compile_context, finish_compile, layout

        settings = self.window_settings(overrides, budget=budget, output_reserve=output_reserve)
        self.catalog.sync()  # the one write a compile may need (new turns into the catalog), before the read
        with self.storage.snapshot():  # one consistent state (issue 13, point 5)
            lay = layout(self.parts, self.ref, settings, reader, sync=False)
            check_protected_fits(settings, lay)  # issue 8: before any compaction
            reported = self.reported_usage()
            pressure = max(lay.total_tokens, reported or 0)
            fold = pressure >= settings.hard_tokens or lay.total_tokens > settings.usable_tokens
            if not fold:  # the usual case: compiled from this one read
                sections, lay = build_sections(self.parts, self.ref, settings, reader, with_memories=False, lay=lay)
        if not fold:
            return finish_compile(self.parts, self.ref, settings, reader, sections, lay)
        compactor = Compactor(self.parts, self.ref, settings, self.parts.summarizer)
        compactor.compact(reader=reader, lay=lay, reported=reported)  # once, then compile
        self.catalog.sync()
        return compile_context(self.parts, self.ref, settings, reader, snapshot=True)

    def compact(self, *, target_tokens: int | None = None, summarizer: Any = None,
                reader: Iterable[str] | None = None, **overrides: Any):
        """Fold old turns into cards until the compiled context is at most ``target_tokens``
        (default: the soft watermark). Never loops, never drops history; summarizer failures are
        recorded and leave the originals in place (issue 4, points 3-4).

        :param summarizer: a :class:`~memfold.window.summarizers.base.Summarizer` for this pass
            (default: the facade's).
        :returns: a :class:`~memfold.window.compactor.CompactionReport`.
        """
        from .compactor import Compactor

        settings = self.window_settings(overrides)
        return Compactor(self.parts, self.ref, settings, summarizer or self.parts.summarizer).compact(target_tokens,
                                                                                                     reader)

    def report_usage(self, tokens: int) -> None:
        """Record the prompt tokens the model actually used on the last call; watermark pressure
        is the larger of this and the compiled context's own size (issue 4, point 5).

        :raises InvalidInput: for a negative or non-integer count.
        """
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            raise InvalidInput(f"reported usage must be a non-negative integer number of tokens, got {tokens!r}")
        with self.storage.transaction():
            self.storage.archive.set_reported_usage(self.id, tokens, self.parts.clock.now())
        self._after_append()

    def reported_usage(self) -> int | None:
        """The prompt tokens last reported (``None`` if none since the last compaction)."""
        return self.storage.archive.reported_usage(self.id)

    def clear_reported_usage(self) -> None:
        """Forget the reported usage (after a compaction changed the context)."""
        with self.storage.transaction():
            self.storage.archive.clear_reported_usage(self.id)

    def record_failure(self, *, summarizer: str, depth: int, first_seq: int, last_seq: int, source_tokens: int,
                       error: str) -> dict[str, Any]:
        """Record a summarizer failure (table + ``summarizer_failed`` event); returns it as a dict."""
        from .compactor import record_failure

        return record_failure(self.parts, self.ref, summarizer=summarizer, depth=depth, first_seq=first_seq,
                              last_seq=last_seq, source_tokens=source_tokens, error=error)

    def failures(self) -> list[dict[str, Any]]:
        """Every recorded summarizer failure of this conversation, oldest first."""
        return [f.to_dict() for f in self.storage.archive.summarizer_failures(self.id)]

    def failure_count(self) -> int:
        """How many summarizer failures were recorded for this conversation."""
        return self.storage.archive.summarizer_failure_count(self.id)

    def catalog_items(self) -> list[CatalogItem]:
        """The catalog, oldest first: card refs and turn refs covering the whole history."""
        return self.catalog.items()

    def turns_by_id(self, turn_ids: Iterable[int]) -> dict[int, Turn]:
        """Archived turns by id (a batch read; see :meth:`Archive.get_many`)."""
        return self.archive.get_many(turn_ids)

    def search(self, query: str, k: int = 10, filters: Mapping[str, Any] | None = None, *, reader: Any = None):
        """Search archived turns and cards (BM25 with prefixes, stop words and neighbours; hybrid with
        an embedder); see :func:`memfold.window.recall.search`.
        ``reader``: hide hits whose labels the reader lacks (issue 8)."""
        from .recall import search

        return search(self.parts, self.ref, query, k, filters, reader=reader)

    def describe(self, card_id: int | str, *, reader: Any = None) -> dict[str, Any]:
        """A card's coverage; see :func:`memfold.window.recall.describe`.
        :raises PermissionDenied: if the reader lacks one of the card's labels (issue 8)."""
        from .recall import describe

        return describe(self.parts, self.ref, card_id, reader=reader)

    def expand(self, card_id: int | str, *, to_turns: bool = False, reader: Any = None) -> list[Turn | Card]:
        """A card's children (or every verbatim turn under it); see :func:`memfold.window.recall.expand`.
        Children the reader may not see and erased turns are left out (issue 8)."""
        from .recall import expand

        return expand(self.parts, self.ref, card_id, to_turns=to_turns, reader=reader)

    def tool_definitions(self) -> list[dict[str, Any]]:
        """The recall tools (search, describe, expand) as OpenAI JSON-schema function tools.

        The definitions are the same for every reader (they name no content); what a call
        returns depends on the ``reader`` given to :meth:`handle_tool_call`."""
        import copy

        from .recall import TOOL_DEFINITIONS

        return copy.deepcopy(TOOL_DEFINITIONS)

    def handle_tool_call(self, name: str, arguments: str | Mapping[str, Any] | None, *, reader: Any = None) -> str:
        """Run one recall tool call and return its text; see :func:`memfold.window.recall.handle_tool_call`.

        **Pass the same ``reader`` as the agent's** :meth:`context`. ``reader=None`` runs the
        tools as the trusted owner, so an agent whose context was compiled for
        ``Reader.of([])`` could otherwise ``expand`` or ``search`` its way to the secret turns
        its context hides (DESIGN.md §4.9)."""
        from .recall import handle_tool_call

        return handle_tool_call(self.parts, self.ref, name, arguments, reader=reader)

    def export_tree(self, directory: str | os.PathLike) -> dict[str, Any]:
        """Write the archive as a directory tree (folders per depth, verbatim turns); see
        :func:`memfold.window.tree.export_tree`."""
        from .tree import export_tree

        return export_tree(self.parts, self.ref, directory)

    # -- the window meter and the archive check (issue 12: library calls the CLI and demo make) ----
    def append_metered(self, turn: Mapping[str, Any], **overrides: Any):
        """Append one turn and read the window meter around its compaction (:mod:`memfold.window.meter`).

        The turn is appended without the append's own compaction; the meter then reads the
        compiled context's size and applies the append's watermark rule itself, with these
        settings: compact at the hard watermark, or at the soft one with ``compact_on_append``. So
        the reading shows the size between the append and its compaction, and after it. When
        compaction cannot get within the budget, the reading names the sections that need the
        room; the turn stays appended and archived either way.

        :param turn: an OpenAI-shaped message, as for :meth:`append`.
        :param overrides: :class:`~memfold.window.settings.WindowSettings` fields for this call
            (``budget``/``output_reserve`` aliases accepted); default the facade's settings.
        :returns: a :class:`~memfold.window.meter.MeterReading`.
        :raises InvalidInput: for a malformed turn or a bad setting (nothing is written).
        """
        from .context import layout
        from .meter import MeterReading

        settings = self.window_settings(overrides)
        fixed = settings.to_dict()
        turn_id = self.append(turn, compact=False)
        status = self.window_status(**fixed)
        state = "over" if status["pressure"] > status["usable"] else ("due" if status["due"] else "ok")
        after = failures = still_over = None
        if status["pressure"] >= status["hard"] or (settings.compact_on_append and status["due"]):
            report = self.compact(**fixed)
            after, failures = report.after_tokens, len(report.failures)
            if report.after_tokens > status["usable"]:
                lay = layout(self.parts, self.ref, settings)
                still_over = {"hot_turns": lay.hot_tokens, "system": lay.system_tokens, "system_note": lay.note_tokens,
                              "protected": lay.protected_tokens, "older": lay.catalog_tokens - lay.hot_tokens,
                              "total": lay.total_tokens}
        seq = self.turns_by_id([turn_id])[turn_id].seq
        return MeterReading(seq, turn_id, status["tokens"], status["usable"], state, after, failures, still_over)

    def verify(self) -> list[int]:
        """Recompute the sha256 of every turn this conversation archived (DESIGN.md §4.1).

        :returns: the ids of turns whose bytes no longer match their hash; empty when the
            conversation's archive is intact (erased turns are skipped).
        """
        return self.archive.verify(self.id)

    # -- sessions (issue 16: the Agents SDK session's pop and clear) -------------------------
    def tail(self, n: int = 1, *, reader: Any = None) -> list[Turn]:
        """The newest ``n`` turns of the lineage, oldest first (fewer when there are fewer).

        Reads only the end of the history, so it costs the same at any length (a reader's filter
        widens the window until ``n`` visible turns are found or the history is exhausted).

        :param reader: as in :meth:`history`.
        :raises InvalidInput: for ``n`` below 1 or a bad ``reader``.
        """
        from .labels import as_reader, can_read

        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise InvalidInput(f"tail needs a whole number of turns >= 1, got {n!r}")
        rdr = as_reader(reader)
        last = self.archive.last_seq(self.id)
        reach = n
        while True:
            after = max(0, last - reach)
            turns = [t for t in self.archive.history(self.id, after_seq=after) if can_read(rdr, t.labels)]
            if len(turns) >= n or after == 0:
                return turns[-n:]
            reach *= 2

    def clear(self, new_id: str) -> "Conversation":
        """Start a new session in this conversation's family (DESIGN.md §1 "fork / clear"): a
        conversation ``new_id`` in the same namespace and family that inherits no turn, so its
        context starts empty. Nothing is deleted: this conversation's turns stay archived,
        searchable through it (``mf.conversation(old_id)``) and through :meth:`MemFold.search`;
        the namespace's memories and namespace-wide protected records reach the new session too.

        :returns: the new :class:`Conversation`.
        :raises InvalidInput: for an id already in use.
        """
        return self.fork(new_id, at=0)
