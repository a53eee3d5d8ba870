"""A conversation: a channel, ticket or thread whose turns are archived verbatim.

This module is the per-conversation handle that the facade hands out. Appending stores the turn
in the lossless archive in one transaction (DESIGN.md §4.1, §4.2). The handle holds the facade's
:class:`~memfold.window.parts.WindowParts` and the conversation's
:class:`~memfold.window.parts.ConversationRef`, and passes both to the engines (compiled context,
compactor, recall tools, tree export); it never sees the facade itself (DESIGN.md §2, "Parts").
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Mapping
from typing import Any, Callable, Iterable

from ..memory.errors import BudgetError, InvalidInput, PermissionDenied
from ..memory.storage.base import Storage, write_scope
from ..memory.validation import check_flag
from .archive import AppendOutcome, Archive, Turn
from .cards import Card, CardStore
from .catalog import Catalog, CatalogItem
from .parts import ConversationRef, WindowParts
from .transcripts import read_import, write_jsonl


#: how many more folds a compile makes when turns other writers appended while it folded leave
#: the context over budget (another bot process on the same conversation); then it raises
REFOLDS_FOR_NEW_TURNS = 3


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
    def labels(self) -> tuple[str, ...]:
        """The conversation's own access labels (every turn appended to it carries them)."""
        return tuple(self.archive.conversation_row(self.id)["labels"])

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

    def append(self, turn: Mapping[str, Any], *, compact: bool = True, idempotency_key: str | None = None,
               reader: Any = None) -> int:
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
        :param reader: who writes (a :class:`~memfold.window.labels.Reader` or label list; ``None``,
            the default, is the owner): a writer must hold every label of a labelled conversation,
            since an append mixes its turn into turns it may not read (the HTTP API and the MCP
            server pass their caller's reader).

        :raises InvalidInput: for a malformed turn, a bad ``reader``, or a key already used for
            another turn (nothing is written).
        :raises PermissionDenied: when ``reader`` lacks a label of the conversation (nothing is
            written).
        """
        return self.append_outcome([turn], compact=compact, idempotency_keys=[idempotency_key],
                                   reader=reader).turn_ids[0]

    def append_many(self, turns: Iterable[Mapping[str, Any]], *, compact: bool = True,
                    idempotency_keys: Iterable[str | None] | None = None, reader: Any = None) -> list[int]:
        """Archive several turns in one transaction (all or nothing); returns their ids.
        ``compact``, ``reader`` and secret detection as in :meth:`append`; ``idempotency_keys``:
        one key (or ``None``) per turn, see :meth:`append_outcome`."""
        return list(self.append_outcome(turns, compact=compact, idempotency_keys=idempotency_keys,
                                        reader=reader).turn_ids)

    def append_outcome(self, turns: Iterable[Mapping[str, Any]], *, compact: bool = True,
                       idempotency_keys: Iterable[str | None] | None = None, reader: Any = None) -> AppendOutcome:
        """:meth:`append_many`, returning an :class:`~memfold.window.archive.AppendOutcome`: the
        turn ids and which were replayed. A turn whose idempotency key this conversation already
        holds (with the same role, content, name and tool calls) is not written again; only the
        turns written pass the constraint extractor and the watermarks (issue 16).

        :raises InvalidInput: for a malformed turn, a bad ``reader``, a bad or repeated key, or a
            key already used for other content; nothing is written.
        :raises PermissionDenied: when ``reader`` lacks a label of the conversation (see
            :meth:`append`); nothing is written.
        """
        check_flag(compact, "compact")  # "no" is truthy: it would compact (round 13)
        self.check_writer(reader)
        given = list(turns)
        archived: list[Turn] = []
        in_catalog: list[bool] = []

        closing: list[bool] = []
        noted: list[bool | None] = []

        def with_the_turns(written: list[Turn], before_seq: int, point) -> None:
            """In the append's transaction: the new turns' catalog items (one write transaction per
            append, issue 18, point 4), from the catalog's cover the append read with its row."""
            archived.extend(written)
            in_catalog.append(self.catalog.extend(written, before_seq, covered=point.catalog_last_seq))
            closing.append(point.closing_frames > 0)
            noted.append(point.note_waiting)

        label, reach = self._secret_labeller()
        outcome = self.archive.append_outcome(self.id, given, idempotency_keys=idempotency_keys,
                                              on_written=with_the_turns, label=label, reach=reach,
                                              lineage=self.ref.lineage)
        written = [(i, t) for i, t, again in zip(outcome.turn_ids, given, outcome.replayed) if not again]
        protected = self._observe_constraints([t.id for t in archived], archived)
        if written:  # /strategy, /back, a yield whose result arrived (issue 14)
            self._settle_frames(written, closing=closing[0] if closing else None)
        if compact and outcome.written:
            results = sum(1 for _, t in written if isinstance(t, Mapping) and t.get("role") == "tool")
            self._after_append(outcome=None if protected else outcome, tool_results=results,
                               synced=bool(in_catalog and in_catalog[0]), noted=noted[0] if noted else None)
        if archived and self.parts.on_appended is not None:
            self.parts.on_appended(archived)  # the facade embeds them for the next search, in a thread
        return outcome

    def check_writer(self, reader: Any) -> None:
        """Refuse a writer lacking one of this conversation's labels (``reader=None``: the owner).

        :raises InvalidInput: for a bad ``reader``.
        :raises PermissionDenied: naming the writer and the conversation.
        """
        from .labels import as_reader

        rdr = as_reader(reader)
        if rdr is not None and not rdr.can_read(self.labels):
            raise PermissionDenied(f"{rdr.name} may not write to conversation {self.id!r}: "
                                   "it requires a label this reader lacks")

    def _secret_labeller(self) -> tuple[Callable[[list[Any], list[Any]], list[Any]] | None, int]:
        """The facade's secret detector as the append's ``label`` hook and how many turns back it
        reads (``(None, 0)`` when detection is off): the archive calls it inside the append's
        transaction with the turns it read back together with the conversation's row (issue 18,
        point 4: no read of its own)."""
        detector = self.parts.secret_detector
        if detector is None:
            return None, 0
        context = getattr(detector, "context_turns", None)  # a detector that wants more than one turn back
        reach = max(1, context) if isinstance(context, int) and not isinstance(context, bool) else 1
        return (lambda turns, earlier: self._label_secrets(turns, earlier, detector, context, reach)), reach

    def _detect_secrets(self, turns: list[Any]) -> list[Any]:
        """``turns`` with the ``secret`` label (and spans) added where the facade's detector finds
        a secret; the first is read after the last archived turn, each next one after the one
        before it. Unchanged when detection is off. :raises InvalidInput: for a detector's bad span."""
        detector = self.parts.secret_detector
        if detector is None or not turns:
            return turns
        context = getattr(detector, "context_turns", None)  # a detector that wants more than one turn back
        reach = max(1, context) if isinstance(context, int) and not isinstance(context, bool) else 1
        # the last ``reach`` turns, role and content only (one narrow read, issue 18 point 4)
        earlier: list[Any] = self.archive.recent_messages(self.id, reach, lineage=self.ref.lineage)
        return self._label_secrets(turns, earlier, detector, context, reach)

    @staticmethod
    def _label_secrets(turns: list[Any], earlier: list[Any], detector: Any, context: Any, reach: int) -> list[Any]:
        """The body of :meth:`_detect_secrets` once the turns before ``turns`` are known: each
        turn is returned as given (the same object) unless the detector labels it."""
        from .secrets import check_detector_spans, label_turn

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

    def _observe_constraints(self, turn_ids: list[int], turns: list[Mapping[str, Any]]) -> int:
        """Pass every new user turn through the constraint extractor (issue 8, point 2): standing
        instructions become protected records with the turn as provenance. A secret turn is read
        with its secret spans masked (``[secret]``; the tracker does it, see
        :meth:`~memfold.window.constraints.ConstraintTracker.observe`), so "Never read my PIN 4471
        back" is protected as "Never read my PIN [secret] back" and the turn stays secret.
        :returns: how many protected records the turns made."""
        tracker = self.parts.constraints
        if tracker is None:
            return 0
        role = (lambda t: t.role) if all(isinstance(t, Turn) for t in turns) else (lambda t: t.get("role"))
        user_ids = [i for i, t in zip(turn_ids, turns) if role(t) == "user"]  # validated by the append
        if not user_ids:
            return 0
        made = 0
        known = {t.id: t for t in turns if isinstance(t, Turn)}  # as archived: no second read
        found = known if all(i in known for i in user_ids) else self.turns_by_id(user_ids)
        for turn in sorted((found[i] for i in user_ids if i in found), key=lambda t: t.seq):
            if turn.role == "user":
                made += len(tracker.observe(turn, namespace=self.namespace, lineage=self.ref.lineage))
        return made

    def history(self, *, after_seq: int = 0, limit: int | None = None, reader: Any = None) -> list[Turn]:
        """Every turn in append order, including a fork's inherited turns.

        :param after_seq: only turns with a larger seq.
        :param limit: at most this many turns (counted after the reader's filter).
        :param reader: a :class:`~memfold.window.labels.Reader` or label list: turns whose labels it
            lacks are left out (``None`` = the trusted owner, every turn; DESIGN.md §4.9).
        :raises InvalidInput: for a bad ``reader``.
        """
        from ..memory.validation import MAX_ID, check_count
        from .labels import as_reader, can_read

        check_count(limit, "history limit", minimum=0, allow_none=True)
        check_count(after_seq, "history after_seq", minimum=0)
        if after_seq > MAX_ID:  # no seq is that large, and SQLite cannot compare it
            raise InvalidInput(f"history after_seq {after_seq} is out of range: no turn number is that large")
        rdr = as_reader(reader)
        lineage = self.ref.lineage
        if rdr is None and len(lineage) == 1:
            return self.archive.history(self.id, after_seq=after_seq, limit=limit, lineage=lineage)
        visible = [t for t in self.archive.history(self.id, after_seq=after_seq, lineage=lineage)
                   if can_read(rdr, t.labels)
                   and (t.conversation_id == self.id or t.metadata.get("quoted_from") is None)]  # issue 15
        return visible if limit is None else visible[:limit]

    def fork(self, new_id: str, *, at: int | None = None, namespace: str | None = None) -> "Conversation":
        """A new conversation that shares this one's turns so far (by pointer, not copy), then
        diverges: neither side changes or reads the other's later state (issue 15, point 5; see
        :mod:`memfold.window.forks`).

        :param at: fork after this seq instead of at the end: the fork sees turns ``1..at`` and
            nothing after (``0``: none; see :meth:`clear`). Its catalog starts from this one's;
            the one card that reaches past ``at`` is expanded one level and the rest backfilled
            with raw turns.
        :param namespace: give the fork its own namespace (new), seeded with a copy of this
            one's memory records and namespace-wide protected records; by default the fork
            shares this conversation's namespace and its facts (they are about the user).
        :raises InvalidInput: for an id in use, a namespace in use, or ``at`` outside ``0..`` the last seq.
        """
        from .forks import fork_conversation

        fork_conversation(self.parts, self.ref, new_id, at=at, namespace=namespace)
        return Conversation(self.parts, ConversationRef.load(self.archive, new_id))

    def fork_info(self, new_id: str, *, at: int | None = None, namespace: str | None = None) -> dict[str, Any]:
        """:meth:`fork`, returning what the fork was made with (catalog items seeded, protected
        and memory records copied) instead of the conversation (the CLI and benchmarks read it)."""
        from .forks import fork_conversation

        return fork_conversation(self.parts, self.ref, new_id, at=at, namespace=namespace)

    def import_jsonl(self, path: str | os.PathLike, *, progress: Callable[[int, int], None] | None = None) -> list[int]:
        """Append every message of a JSONL transcript, all or nothing.

        :param progress: called as ``progress(done, total)`` while writing.

        Every message passes the secret detector as in :meth:`append`. A file whose lines carry
        ``conversation_labels`` (an export of a labelled conversation) is imported only into a
        conversation with those labels.

        :raises InvalidInput: ``"<path> line N: ..."`` for the first bad line, other
            ``conversation_labels`` than this conversation's, or times of another kind of clock
            (:func:`~memfold.window.transcripts.read_import`); nothing is written.
        """
        messages, fields = read_import(path, self.archive.clock)
        if fields.labels is not None:
            own = list(self.archive.conversation_row(self.id)["labels"])
            if fields.labels != own:
                raise InvalidInput(f"{path}: its lines' conversation_labels {fields.labels!r} are not conversation "
                                   f"{self.id!r}'s labels {own!r}: import it into a conversation with those labels "
                                   f"(a new one gets them: mf.ingest_jsonl, memfold ingest)")
        return self._import_messages(messages, progress=progress)

    def _import_messages(self, messages: list[dict[str, Any]], *,
                         progress: Callable[[int, int], None] | None = None) -> list[int]:
        """Append messages :func:`~memfold.window.transcripts.read_import` validated, in one batch."""
        total = len(messages)
        report = (lambda done: progress(done, total)) if progress else None
        ids = self.archive.append_many(self.id, self._detect_secrets(messages), progress=report)
        self._observe_constraints(ids, messages)
        return ids

    def export_jsonl(self, out: Any = None, *, with_times: bool = False, reader: Any = None) -> str | int:
        """Write the history as JSONL chat messages to ``out`` (a text stream), or return it as a
        string when ``out`` is None.

        Each line carries the turn's labels and metadata, the conversation's own labels
        (``conversation_labels``, when it has any) and, with ``with_times``, ``created_at``
        (with ``"clock": "logical"`` on a logical clock: ticks, not POSIX seconds; see
        :mod:`memfold.window.transcripts`).

        :param reader: as in :meth:`history`: turns whose labels the reader lacks are not written.
        :returns: the JSONL text (``out`` None) or the number of turns written.
        :raises InvalidInput: when ``out`` is not a text stream (a path, or a file opened in binary
            mode), before anything is read or written.
        """
        if out is not None and (not callable(getattr(out, "write", None))
                                or isinstance(out, (io.RawIOBase, io.BufferedIOBase))):
            raise InvalidInput(f"export_jsonl writes to a text stream (an object with write(str), such as "
                               f"open(path, 'w')), got {type(out).__name__} {out!r}")
        check_flag(with_times, "with_times")
        turns = self.history(reader=reader)
        # the conversation's own labels go on every line, so an import gives a new conversation the
        # same labels; a logical clock's ticks say so (system times stay as older readers read them)
        fields = {"conversation_labels": self.archive.conversation_row(self.id)["labels"],
                  "clock": "logical" if self.archive.clock.kind == "logical" else None}
        if out is None:
            buf = io.StringIO()
            write_jsonl(turns, buf, with_times=with_times, **fields)
            return buf.getvalue()
        return write_jsonl(turns, out, with_times=with_times, **fields)

    # -- the window (issue 4) ----------------------------------------------------------------
    def window_settings(self, overrides: Mapping[str, Any] | None = None, **more: Any):
        """The facade's :class:`~memfold.window.settings.WindowSettings` with per-call overrides
        (``budget``/``output_reserve`` aliases accepted). :raises InvalidInput: for a bad value."""
        return self.parts.window.with_overrides(dict(overrides or {}), **more)

    def _after_append(self, outcome: AppendOutcome | None = None, tool_results: int = 0, *,
                      synced: bool = False, noted: bool | None = None) -> None:
        """Watermarks (issue 4, point 5; issue 13, points 1-2), after the append committed.

        Past the hard watermark the fold runs here, in the foreground; past the soft one the
        append only leaves a compaction note for the worker (:mod:`memfold.worker`), or folds
        too with ``compact_on_append``. Nothing here raises for reasons of concurrency: the turn
        is committed, so a lost race or a busy database leaves a note instead (the worker or the
        scanner finishes the job) and the append returns its ids.

        :param outcome: the append just committed: the pressure bound of
            :mod:`memfold.window.pressure` is carried over its turns, and the window is measured
            only when the bound reaches the soft line without a note waiting, or the hard line.
            ``None`` (usage reported, protected records made) measures in full.
        :param synced: the append just wrote its turns' catalog items in its own transaction
            (issue 18, point 4): the measure does not check the catalog's sync again.
        :param noted: whether a compaction note waited when the append read its conversation, in
            its transaction (``None``: read here when needed).
        """
        from ..memory.errors import StorageError
        from .context import measure_total, note_text

        settings, bounds = self.parts.window, self.parts.pressure_bounds
        bound = None if outcome is None else bounds.after_append(
            self.id, settings, first_seq=outcome.first_seq, last_seq=outcome.last_seq, tokens=outcome.tokens,
            tool_results=tool_results)
        pressure = 0
        try:
            if bound is not None and bound < settings.soft_tokens:
                return  # below the soft line whatever folded meanwhile: nothing to do, nothing read
            if (bound is not None and bound < settings.hard_tokens and not settings.compact_on_append
                    and (noted if noted is not None else self.storage.runs.compaction_note(self.id) is not None)):
                return  # a note is waiting for the worker already
            bounds.forget(self.id)
            # the append just wrote the catalog items when ``synced``: no second sync check
            pressure = max(measure_total(self.parts, self.ref, settings, sync=not synced), self.reported_usage() or 0)
            if pressure >= settings.hard_tokens or (settings.compact_on_append and pressure >= settings.soft_tokens):
                report = self.compact()
                pressure = max(report.after_tokens, self.reported_usage() or 0)
            if pressure >= settings.soft_tokens:
                self.leave_note(pressure)
            if outcome is not None:
                note = note_text(settings)
                bounds.measured(self.id, settings, pressure=pressure, last_seq=outcome.last_seq,
                                note_tokens=self.parts.token_counter.count(note) if note else 0,
                                work=self.storage.folds.unfolded_totals(self.id) if settings.fold_cards_on else (0, 0))
        except StorageError:
            bounds.forget(self.id)
            try:
                self.leave_note(pressure)
            except StorageError:
                pass  # the scanner finds a conversation over the soft line without a note

    def leave_note(self, pressure: int) -> bool:
        """Leave a compaction note for the background worker (issue 13, point 2): the
        conversation, its pressure and when. One note per conversation: a later note updates the
        pressure. :returns: True when the note is new."""
        with self.storage.transaction(write_scope(conversations=[self.id])):
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
        settings = self.window_settings(overrides, budget=budget, output_reserve=output_reserve)
        if self.storage.folds.frames(self.id, status="closing"):  # a yield whose result arrived (issue 14)
            self._settle_frames()
        cache = self.parts.context_cache  # issue 15, point 6 (memfold.window.context_cache)
        now = self.parts.clock.now()
        # a deadline that is due leaves the channel at the next compile: no cached context then
        use_cache = cache is not None and not self.storage.protected.due_ids(now)
        if use_cache:
            hit = cache.get(cache.key(self.parts, self.ref, settings, reader), now)
            if hit is not None:
                return hit
        self.catalog.sync()  # the one write a compile may need (new turns into the catalog), before the read
        ctx, key = self._compile(settings, reader, cache if use_cache else None)
        if key is not None:
            cache.put(key, ctx)
        return ctx

    def _compile(self, settings, reader, cache=None):
        """The body of :meth:`context` after the settings and the catalog sync: the compiled
        context, and the cache key it may be kept under (``None``: not to be cached).

        The key is that of the state *after* the compile's own writes (the memories' access
        counts, a fold card's proposal), so the next compile of an unchanged conversation finds
        it. It is given only when nobody else committed between the version read before the
        snapshot and the one read after those writes: the whole compile runs with this process's
        other writers held (:meth:`Storage.writers_held`) and the storage tells its own commits
        from other connections' (:meth:`MetaStorage.only_own_commits`). Otherwise an erasure,
        relabel or append committed while this compile ran would be served, under the newer
        version, as if the old context were current (round 9 QA). A compile that folds is never
        cached (the summarizer runs without holding other writers off)."""
        from .compactor import Compactor
        from .context import build_sections, check_can_fit, check_protected_fits, compile_context, finish_compile, layout
        from .folds import record_proposal

        # other writers are held off only when the result may be cached (nothing to tell apart otherwise)
        with self.storage.writers_held() if cache is not None else contextlib.nullcontext():
            before = self.storage.meta.state_version() if cache is not None else None
            with self.storage.snapshot():  # one consistent state (issue 13, point 5)
                lay = layout(self.parts, self.ref, settings, reader, sync=False)
                check_protected_fits(settings, lay)  # issue 8: before any compaction
                reported = self.reported_usage()
                pressure = max(lay.total_tokens, reported or 0)
                fold = pressure >= settings.hard_tokens or lay.total_tokens > settings.usable_tokens
                if fold:
                    check_can_fit(self.parts, settings, lay)  # issue 20: a hopeless budget folds nothing
                if not fold:  # the usual case: compiled from this one read
                    sections, lay = build_sections(self.parts, self.ref, settings, reader, with_memories=False, lay=lay)
            if not fold:
                ctx = finish_compile(self.parts, self.ref, settings, reader, sections, lay)
                if ctx.fold_menu is not None:  # issue 14, point 8: a fold card shown counts as proposed once per unit
                    record_proposal(self.parts, self.ref, ctx.fold_menu)
                key = None
                if cache is not None:
                    key = cache.key(self.parts, self.ref, settings, reader)
                    if not self.storage.meta.only_own_commits(before, key[1]):
                        key = None  # someone else committed meanwhile: the next compile reads again
                return ctx, key
        archive = self.storage.archive
        compactor = Compactor(self.parts, self.ref, settings, self.parts.summarizer)
        seen = archive.max_seq(self.id)
        compactor.compact(reader=reader, lay=lay, reported=reported)  # once, then compile
        for again in range(REFOLDS_FOR_NEW_TURNS + 1):
            self.catalog.sync()
            try:
                ctx = compile_context(self.parts, self.ref, settings, reader, snapshot=True)
                break
            except BudgetError:
                now = archive.max_seq(self.id)
                if again == REFOLDS_FOR_NEW_TURNS or now == seen:
                    raise  # nothing arrived since the fold: the budget itself is the problem
                # another writer appended while this compile folded: fold what arrived, then compile
                seen = now
                Compactor(self.parts, self.ref, settings, self.parts.summarizer).compact(reader=reader)
        if ctx.fold_menu is not None:
            record_proposal(self.parts, self.ref, ctx.fold_menu)
        return ctx, None

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
        from .summarizers.base import Summarizer

        if summarizer is not None and not isinstance(summarizer, Summarizer):  # "fast" was taken (round 13)
            raise InvalidInput(f"summarizer must be a memfold Summarizer, got {type(summarizer).__name__}")
        settings = self.window_settings(overrides)
        return Compactor(self.parts, self.ref, settings, summarizer or self.parts.summarizer).compact(target_tokens,
                                                                                                     reader)

    def report_usage(self, tokens: int) -> None:
        """Record the prompt tokens the model actually used on the last call; watermark pressure
        is the larger of this and the compiled context's own size (issue 4, point 5).

        :raises InvalidInput: for a negative or non-integer count.
        """
        from ..memory.validation import MAX_ID

        if isinstance(tokens, bool) or not isinstance(tokens, int) or not 0 <= tokens <= MAX_ID:
            raise InvalidInput(f"reported usage must be a non-negative integer number of tokens, got {tokens!r}")
        with self.storage.transaction(write_scope(conversations=[self.id])):
            self.storage.archive.set_reported_usage(self.id, tokens, self.parts.clock.now())
        self.parts.pressure_bounds.forget(self.id)
        self._after_append()

    def reported_usage(self) -> int | None:
        """The prompt tokens last reported (``None`` if none since the last compaction)."""
        return self.storage.archive.reported_usage(self.id)

    def clear_reported_usage(self) -> None:
        """Forget the reported usage (after a compaction changed the context)."""
        with self.storage.transaction(write_scope(conversations=[self.id])):
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

    def search(self, query: str, limit: int = 10, filters: Mapping[str, Any] | None = None, *, reader: Any = None,
               k: int | None = None):
        """Search archived turns and cards (BM25 with prefixes, stop words and neighbours; hybrid with
        an embedder); see :func:`memfold.window.recall.search`. Hits come best first and their
        ``score`` is higher-is-better, as in :meth:`MemFold.search`.

        :param limit: at most this many hits, 1..100 (``k=`` is its deprecated alias).
        :param reader: hide hits whose labels the reader lacks (issue 8)."""
        from ..memory.validation import result_count
        from .recall import search

        limit, name = result_count(limit, k, default=10, where="search")
        return search(self.parts, self.ref, query, limit, filters, reader=reader, count_name=name)

    def describe(self, card_id: int | str, *, reader: Any = None) -> dict[str, Any]:
        """A card's coverage; see :func:`memfold.window.recall.describe`.
        :raises PermissionDenied: if the reader lacks one of the card's labels (issue 8)."""
        from .recall import describe

        return describe(self.parts, self.ref, card_id, reader=reader)

    def expand(self, card_id: int | str, *, to_turns: bool = False, reader: Any = None) -> list[Turn | Card]:
        """A card's children (or every verbatim turn under it); see :func:`memfold.window.recall.expand`.
        Children the reader may not see and erased turns are left out (issue 8)."""
        from .recall import expand

        check_flag(to_turns, "to_turns")  # "no" is truthy (round 14)
        return expand(self.parts, self.ref, card_id, to_turns=to_turns, reader=reader)

    def tool_definitions(self, *, folds: bool = False) -> list[dict[str, Any]]:
        """The recall tools (search, describe, expand) as OpenAI JSON-schema function tools; with
        ``folds=True`` also ``fold_unit`` and the strategy tools (``strategy_request``,
        ``strategy_report``, ``strategy_yield``; issue 14). The list never depends on the state
        (an open frame, a fold card), so offering it keeps the prompt prefix byte-identical.

        The definitions are the same for every reader (they name no content); what a call
        returns depends on the ``reader`` given to :meth:`handle_tool_call`."""
        import copy

        from .recall import TOOL_DEFINITIONS

        check_flag(folds, "folds")  # "no" is truthy: it offered the fold tools (round 14)
        tools = copy.deepcopy(TOOL_DEFINITIONS)
        if folds:
            from .folds import FOLD_TOOL_DEFINITIONS
            from .strategies import book_of, tool_definitions

            tools += copy.deepcopy(FOLD_TOOL_DEFINITIONS) + tool_definitions(book_of(self.parts))
        return tools

    def handle_tool_call(self, name: str, arguments: str | Mapping[str, Any] | None, *, reader: Any = None) -> str:
        """Run one memfold tool call and return its text: a recall tool (see
        :func:`memfold.window.recall.handle_tool_call`), ``fold_unit`` or a strategy tool (issue 14;
        a refusal comes back as ``"error: ..."`` text the model can act on). A recall call that
        reads inside a folded range counts as a read-back (:meth:`fold_stats`).

        **Pass the same ``reader`` as the agent's** :meth:`context`. ``reader=None`` runs the
        tools as the trusted owner, so an agent whose context was compiled for
        ``Reader.of([])`` could otherwise ``expand`` or ``search`` its way to the secret turns
        its context hides (DESIGN.md §4.9).

        An unknown tool's error lists the tools this dispatcher runs: the recall tools, and with
        the fold card on (``fold_card_tool_calls`` or ``fold_card_tokens``) ``fold_unit`` and the
        strategy tools too. :raises InvalidInput: for ``arguments`` that are neither JSON text nor
        a mapping (a list, a number: the caller's mistake), naming the tool; JSON text that is no
        object is the model's, answered as ``"error: ..."`` text."""
        from ..memory.errors import InvalidInput
        from .folds import handle_fold_call
        from .recall import TOOL_DEFINITIONS, check_arguments_type, handle_tool_call, tool_arguments
        from .strategies import TOOL_NAMES, handle_strategy_call

        check_arguments_type(name, arguments)  # a Python value that is no arguments: the caller's mistake
        if name == "fold_unit" or name in TOOL_NAMES:
            try:
                args = tool_arguments(name, arguments)
            except InvalidInput as exc:
                return f"error: {exc}"
            if name == "fold_unit":
                return handle_fold_call(self.parts, self.ref, args)
            return handle_strategy_call(self.parts, self.ref, name, args)
        recall = [t["function"]["name"] for t in TOOL_DEFINITIONS]
        settings = self.parts.window
        if name not in recall and (settings.fold_card_tool_calls or settings.fold_card_tokens):
            return (f"error: unknown tool {name!r}: the tools are {', '.join(recall)} (recall), fold_unit (folds) "
                    f"and {', '.join(TOOL_NAMES)} (strategies)")
        text = handle_tool_call(self.parts, self.ref, name, arguments, reader=reader)
        if name in ("search", "describe", "expand") and not text.startswith("error:"):
            self._count_read_back(name, text)
        return text

    def _count_read_back(self, name: str, text: str) -> None:
        """Count a recall call whose answer reads inside a folded range (issue 14, point 8)."""
        import re

        from .folds import bump, reads_folded

        if not self.storage.folds.folds(self.id):
            return
        refs = [(m.group(1), int(m.group(2)))
                for m in re.finditer(r"(?m)^\{?\"?(?:ref\"?: ?\"?)?([tc])(\d+)", text)]
        turns = self.turns_by_id([item for kind, item in refs if kind == "t"])  # one read for all
        found: list[tuple] = [("card", item) if kind == "c" else ("turn", turns[item].seq)
                              for kind, item in refs if kind == "c" or item in turns]
        if reads_folded(self.parts, self.ref, found):
            bump(self.parts, self.ref, "read_back")

    # -- folds the model chooses, strategies, subagents (issue 14) --------------------------------
    def fold_unit(self, first: int, last: int):
        """Fold the closed unit of turns ``#first``..``#last`` (seq numbers, as the fold card lists
        them) into a host-built result with zero model calls; see :func:`memfold.window.folds.fold_unit`.

        :returns: a :class:`~memfold.window.folds.FoldOutcome`.
        :raises IllegalFold: naming the legality rule broken; nothing is written.
        """
        from .folds import fold_unit

        return fold_unit(self.parts, self.ref, first, last)

    def fold_stats(self) -> dict[str, Any]:
        """The fold counters (proposed, accepted, refused, read_back, reruns, folds by kind,
        strategies, reports); see :func:`memfold.window.folds.fold_stats`."""
        from .folds import fold_stats

        return fold_stats(self.parts, self.ref)

    def folds(self) -> list[Any]:
        """The folds made in this conversation (:class:`~memfold.memory.storage.rows.FoldRow`), oldest first."""
        return self.storage.folds.folds(self.id)

    def strategy_enter(self, name: str, brief: str = "", *, opened_by: str = "host"):
        """Open a strategy frame (issue 14, point 5): one message with the standing rules is
        appended at the tail (see :func:`memfold.window.strategies.enter`).
        :returns: a :class:`~memfold.window.strategies.FrameOutcome`.
        :raises IllegalFold: for an unknown name or an empty brief; nothing is written."""
        from .strategies import enter

        outcome = enter(self.parts, self.ref, name, brief, opened_by=opened_by)
        if outcome.appended is not None:
            self._after_append()
        return outcome

    def strategy_report(self, text: str):
        """Replace the innermost open frame's report slot. :raises IllegalFold: when none is open."""
        from .strategies import report

        return report(self.parts, self.ref, text)

    def strategy_yield(self, reason: str = "", *, by: str = "host"):
        """Close the innermost open frame: its branch folds to exactly the last report.
        :raises IllegalFold: when none is open."""
        from .strategies import yield_frame

        return yield_frame(self.parts, self.ref, reason, by=by)

    def strategy_frames(self, *, open_only: bool = False) -> list[Any]:
        """The conversation's strategy frames (:class:`~memfold.memory.storage.rows.FrameRow`), outermost first."""
        from .strategies import open_frames

        check_flag(open_only, "open_only")  # "no" is truthy (round 14)
        return open_frames(self.parts, self.ref) if open_only else self.storage.folds.frames(self.id)

    def strategy_book(self):
        """The strategies this conversation may enter (a :class:`~memfold.window.strategies.StrategyBook`:
        ``names()``, and ``broken``, the strategy files that failed to load, by name, with why)."""
        from .strategies import book_of

        return book_of(self.parts)

    def tool_call_refusal(self, name: str, arguments: Any = None) -> str | None:
        """Why the agent's own tool call must not run now (an open read-only frame, such as
        ``intent``, and a call that writes), as the text to return to the model; ``None`` to run it."""
        from .strategies import tool_call_refusal

        return tool_call_refusal(self.parts, self.ref, name, arguments)

    def spawn(self, brief: str, *, child_id: str | None = None) -> "Conversation":
        """Start a subagent: a child conversation in the family that sees only ``brief``
        (:func:`memfold.window.subagents.spawn`); finish it with :meth:`finish`."""
        from .subagents import spawn

        return Conversation(self.parts, spawn(self.parts, self.ref, brief, child_id=child_id))

    def finish(self, receipt: str) -> dict[str, Any]:
        """Finish this subagent: append ``receipt`` to the parent as one item that expands to this
        conversation's archive (:func:`memfold.window.subagents.finish`)."""
        from .subagents import finish

        return finish(self.parts, self.ref, receipt)

    def _settle_frames(self, written: list[tuple[int, Mapping[str, Any]]] = (), *,
                       closing: bool | None = None) -> None:
        """Act on what the newest turns ask of the strategy frames (issue 14): ``/strategy NAME``
        or ``/back`` typed in a written user turn, and a closing frame whose yield result arrived.
        Runs after the append committed and never raises for the turn's sake (a command that
        cannot run gets a host reply naming why).

        :param closing: whether a frame was closing when the append read its conversation, in
            its transaction (``None``: read here); a command just typed is read again after it."""
        from .strategies import observe_user_turn, settle, user_command

        commands = [i for i, t in written if isinstance(t, Mapping) and t.get("role") == "user"
                    and isinstance(t.get("content"), str) and user_command(t["content"]) is not None]
        turns = self.turns_by_id(commands) if commands else {}
        for turn_id in commands:
            observe_user_turn(self.parts, self.ref, turns[turn_id])
        if closing is None or commands:
            closing = bool(self.storage.folds.frames(self.id, status="closing"))
        if closing:
            settle(self.parts, self.ref)

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

    # -- looking without writing (issue 19: the viewer) --------------------------------------
    def preview_context(self, budget: int | None = None, output_reserve: int | None = None, *,
                        reader: Iterable[str] | None = None, **overrides: Any):
        """The compiled context as :meth:`context` would return it now, without writing anything
        (:func:`memfold.window.timeline.preview`: one snapshot, memories read without counting
        accesses, no compaction), as a dict with the sections' messages (``sections_detail``).

        :raises BudgetError: when the context does not fit ``budget`` as it stands (a real
            :meth:`context` call would fold first), naming the sizes.
        """
        from .timeline import preview

        settings = self.window_settings(overrides, budget=budget, output_reserve=output_reserve)
        return preview(self.parts, self.ref, settings, reader)

    def catalog_view(self) -> list[CatalogItem]:
        """The catalog items as :meth:`catalog_items` returns them, without writing (turns not in
        the stored catalog yet come as turn items; :meth:`Catalog.view`)."""
        with self.storage.snapshot():
            return self.catalog.view()

    def context_at(self, seq: int, budget: int | None = None, output_reserve: int | None = None, *,
                   reader: Iterable[str] | None = None, **overrides: Any) -> dict[str, Any]:
        """What the compiled context was right after turn ``seq``, rebuilt from the archive and the
        event log without writing (:func:`memfold.window.timeline.context_at`).

        :raises InvalidInput: for a ``seq`` that is not a whole number or lies outside ``1..`` the
            last turn, naming the valid range (nothing is clamped)."""
        from .timeline import context_at

        settings = self.window_settings(overrides, budget=budget, output_reserve=output_reserve)
        return context_at(self.parts, self.ref, settings, seq, reader=reader)

    def window_at(self, seq: int):
        """The catalog right after turn ``seq`` (:func:`memfold.window.timeline.window_at`).
        :raises InvalidInput: as :meth:`context_at`."""
        from .timeline import window_at

        return window_at(self.parts, self.ref, seq)

    def timeline(self, budget: int | None = None, output_reserve: int | None = None, *,
                 reader: Iterable[str] | None = None, **overrides: Any) -> list[dict[str, Any]]:
        """One frame per turn: the strip and section sizes right after it
        (:func:`memfold.window.timeline.timeline`; reads only)."""
        from .timeline import timeline

        settings = self.window_settings(overrides, budget=budget, output_reserve=output_reserve)
        return timeline(self.parts, self.ref, settings, reader)
