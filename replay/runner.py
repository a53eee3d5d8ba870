"""The replay loop: play conversations turn by turn through memfold as a support-bot backend would.

Issue 9, point 1. For every turn, in time order across all conversations of the source (a bot
serves many customers at once, so a multi-conversation source is interleaved by turn time):

1. the :class:`~memfold.memory.clock.ReplayClock` is set to the turn's ``created_at``, so every
   stored time (archive, records, events, scores, consolidation horizons) follows the history;
2. when the turn opens a new UTC day, the consolidation pass runs first for every namespace
   that had turns since the last pass, with the horizon at midnight, as the nightly job would
   (:func:`memfold.consolidation.consolidate.consolidate`, ``include_turns=True``);
3. an assistant turn is *answered*: the context for the model call is compiled first with the
   configured budget (:meth:`Conversation.context`), measured, then the reply is appended;
4. the turn is appended through :meth:`Conversation.append`, whose secret detector (the
   library's, :mod:`memfold.window.secrets`) labels it ``secret`` when it holds a PIN, password
   or security answer, and the window is compacted when the soft watermark says it is due.

A last pass runs at the midnight after the final turn. Then the figures are collected from the
database (:mod:`memfold.replay.report`), so what the report says is what the file holds.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Sequence

from ..memory.clock import ReplayClock
from ..memory.errors import BudgetError, InvalidInput
from ..window.labels import SECRET_LABEL
from ..window.settings import WindowSettings
from ..window.summarizers.base import FoldItem, Summarizer
from .formats import ReplaySource
from .stats import ReplayRun


@dataclass(frozen=True)
class ReplaySettings:
    """How the replayed bot's window is configured. Sizes are tokens of the facade's counter.

    :param budget_tokens: the model's context window for every compiled context.
    :param output_reserve_tokens: kept free for the answer; default ``min(1024, budget // 4)``.
    :param hot_turns: newest turns kept verbatim (DESIGN.md §1a default 32; 16 suits small budgets).
    :param leaf_chunk_tokens: source tokens per depth-1 card; default a third of the usable budget.
    :param card_target_tokens: card size asked of the summarizer; default an eighth of a leaf
        chunk (at least 32), the 16:1-ish fold ratio of the design notes scaled to the budget.
    :param rollup_fanin: same-depth cards per roll-up.
    :param consolidate: run the nightly consolidation pass at every day boundary.
    :param detect_secrets: label PINs, passwords and security answers ``secret`` at append
        (``MemFold(secrets="detect")``; False gives ``secrets="off"``).
    :param batch_size: consolidation batch size (a day's turns usually fit one batch, so an
        agent's question and the user's answer land in the same batch).
    """

    budget_tokens: int = 4000
    output_reserve_tokens: int | None = None
    hot_turns: int = 16
    leaf_chunk_tokens: int | None = None
    card_target_tokens: int | None = None
    rollup_fanin: int = 4
    consolidate: bool = True
    detect_secrets: bool = True
    batch_size: int = 1000

    def window(self) -> WindowSettings:
        """The :class:`WindowSettings` these settings give. :raises InvalidInput: for bad sizes."""
        if isinstance(self.budget_tokens, bool) or not isinstance(self.budget_tokens, int) or self.budget_tokens < 100:
            raise InvalidInput(f"budget must be an integer of at least 100 tokens, got {self.budget_tokens!r}")
        reserve = self.output_reserve_tokens if self.output_reserve_tokens is not None else min(1024, self.budget_tokens // 4)
        usable = self.budget_tokens - reserve
        leaf = self.leaf_chunk_tokens or max(64, usable // 3)
        target = self.card_target_tokens or max(32, leaf // 8)
        return WindowSettings(budget_tokens=self.budget_tokens, output_reserve_tokens=reserve,
                              hot_turns=self.hot_turns, leaf_chunk_tokens=leaf, card_target_tokens=target,
                              rollup_fanin=self.rollup_fanin, compact_on_append=False)


class CountingSummarizer(Summarizer):
    """Wraps a summarizer and counts its calls (for "summarizer calls per turn"); same ``id``."""

    def __init__(self, inner: Summarizer) -> None:
        self.inner = inner
        self.id = inner.id
        self.calls = 0

    def summarize(self, items: Sequence[FoldItem], depth: int, *, target_tokens: int | None = None) -> str:
        self.calls += 1
        return self.inner.summarize(items, depth, target_tokens=target_tokens)


def _midnight_after(moment: datetime) -> datetime:
    return datetime(moment.year, moment.month, moment.day, tzinfo=timezone.utc) + timedelta(days=1)


def replay(source: ReplaySource, db: str | os.PathLike, *, settings: ReplaySettings | None = None,
           token_counter: str = "cl100k_base", embedder: Any = None,
           progress: Callable[[int, int], None] | None = None) -> "ReplayReport":
    """Replay ``source`` into a new database file ``db`` and return the report.

    :param source: from :func:`memfold.replay.formats.read_source`.
    :param db: a database path; it must not hold any of the source's conversations yet.
    :param settings: the window and pass settings (default :class:`ReplaySettings`).
    :param token_counter: ``cl100k_base`` (default), ``o200k_base`` or ``words``.
    :param embedder: for search at the end: ``None`` (BM25, default), ``"hashing"`` or a model.
    :param progress: called as ``progress(turns_done, turns_total)`` after every turn.
    :returns: a :class:`~memfold.replay.report.ReplayReport`.
    :raises InvalidInput: for an empty source, bad settings or a conversation already in ``db``
        (nothing is written); :raises BudgetError: never: budget errors are counted in the report.
    """
    from .. import MemFold
    from .report import ReplayReport

    settings = settings or ReplaySettings()
    window = settings.window()
    stream = []
    for ci, conv in enumerate(source.conversations):
        last: datetime | None = None
        for session in conv.sessions:
            for ti, turn in enumerate(session.turns):
                stream.append([turn["created_at"], ci, len(stream), turn])
    if not stream:
        raise InvalidInput("nothing to replay: the source has no turns")
    run = ReplayRun(source.format, window, source.conversations)
    # a conversation's own order always wins: a turn earlier than its predecessor takes its time
    for ci, conv in enumerate(source.conversations):
        last = None
        for entry in (e for e in stream if e[1] == ci):
            if last is not None and entry[0] < last:
                entry[0] = last
                run.clamped_times += 1
            last = entry[0]
    stream.sort(key=lambda e: (e[0], e[1], e[2]))
    clock = ReplayClock(stream[0][0])
    started = time.perf_counter()
    mf = MemFold(db, clock=clock, token_counter=token_counter, embedder=embedder, window=window,
                 secrets="detect" if settings.detect_secrets else "off")
    try:
        existing = set(mf.conversations())
        clash = [c.conversation_id for c in source.conversations if c.conversation_id in existing]
        if clash:
            raise InvalidInput(f"{db} already holds conversation(s) {', '.join(clash[:3])}: replay into a new file")
        counting = CountingSummarizer(mf.summarizer)
        mf.summarizer = counting
        convs = [mf.conversation(c.conversation_id, namespace=c.namespace, labels=c.labels or None)
                 for c in source.conversations]
        transcript = [0] * len(convs)
        touched: set[str] = set()
        day = None
        total = len(stream)
        for done, (when, ci, _, turn) in enumerate(stream, start=1):
            if day is not None and when.date() != day:
                if settings.consolidate:
                    _nightly(mf, clock, run, touched, _midnight_after(datetime.combine(day, datetime.min.time(), timezone.utc)), settings)
                touched = set()
            day = when.date()
            clock.set(when)
            conv = convs[ci]
            message = {k: v for k, v in turn.items() if k != "created_at"}
            message["created_at"] = when
            if turn["role"] == "assistant":
                t0 = time.perf_counter()
                try:
                    ctx = conv.context()
                except BudgetError as exc:
                    run.budget_errors.append(str(exc))
                else:
                    run.compile_seconds.append(time.perf_counter() - t0)
                    run.compiled_tokens.append(ctx.total_tokens)
                    run.transcript_tokens.append(transcript[ci])
                    if ctx.total_tokens > ctx.usable_tokens:
                        run.over_budget += 1
            t0 = time.perf_counter()
            turn_id = conv.append(message)
            run.append_seconds.append(time.perf_counter() - t0)
            appended = mf.archive.get(turn_id)
            transcript[ci] += appended.tokens
            if SECRET_LABEL in appended.labels:
                run.secret_turns += 1
            dia = (turn.get("metadata") or {}).get("dia_id")
            if dia is not None:
                run.turn_ids.setdefault(conv.id, {})[dia] = turn_id
            touched.add(conv.namespace)
            t0 = time.perf_counter()
            if conv.window_status()["due"]:
                conv.compact()
                run.compact_seconds.append(time.perf_counter() - t0)
            if progress is not None:
                progress(done, total)
        if settings.consolidate and day is not None:
            _nightly(mf, clock, run, touched, _midnight_after(datetime.combine(day, datetime.min.time(), timezone.utc)), settings)
        run.summarizer_calls = counting.calls
        run.wall_seconds = time.perf_counter() - started
        return ReplayReport.collect(mf, run)
    finally:
        mf.close()


def _nightly(mf: Any, clock: ReplayClock, run: ReplayRun, namespaces: set[str], midnight: datetime,
             settings: ReplaySettings) -> None:
    """The nightly job at ``midnight``: one consolidation pass per namespace touched that day."""
    if not namespaces:
        return
    clock.set(midnight)
    t0 = time.perf_counter()
    for namespace in sorted(namespaces):
        mf.consolidate(namespace, now=midnight, include_turns=True, trigger=f"replay-nightly@{midnight.date()}",
                       batch_size=settings.batch_size)
    run.consolidation_seconds += time.perf_counter() - t0
    run.nightly_passes += 1


def replay_path(path: str | os.PathLike | None = None, *, sample: bool = False, format: str | None = None,
                persona: str | None = None, limit: int | None = None, db: str | os.PathLike | None = None,
                settings: ReplaySettings | None = None, token_counter: str = "cl100k_base", embedder: Any = None,
                progress: Callable[[int, int], None] | None = None,
                on_source: Callable[[ReplaySource], None] | None = None) -> "ReplayReport":
    """Read a source and replay it: what ``memfold replay`` calls.

    :param path: a JSONL file or folder, a LoCoMo JSON file or a STAR folder (or None with ``sample``).
    :param sample: replay the generated sample history (:mod:`memfold.replay.sample`) and score
        it against its gold facts and secrets; the transcript is written to a temporary folder
        (never next to ``db``, where it could overwrite a user's file) and removed afterwards.
    :param db: the database file to write (must not hold the source's conversations); default a
        temporary file, removed after the report is collected.
    :param on_source: called with the source once it is read (the CLI sizes its progress bar).
    :raises InvalidInput: for neither or both of ``path`` and ``sample``, and what
        :func:`read_source` and :func:`replay` raise.
    """
    import tempfile
    from pathlib import Path

    from .formats import read_source
    from .sample import GOLD_FACTS, SECRETS, write_sample_history

    if bool(path) == bool(sample):
        raise InvalidInput("give a SOURCE file or folder to replay, or --sample (not both)")
    with tempfile.TemporaryDirectory(prefix="memfold-replay-") as tmp:
        if sample:
            path = write_sample_history(Path(tmp) / "sample-history.jsonl")
        source = read_source(path, format=format, persona=persona, limit=limit)
        if sample:
            source.conversations[0].gold_facts = dict(GOLD_FACTS)
            source.conversations[0].secrets = set(SECRETS)
        if on_source is not None:
            on_source(source)
        target = db if db is not None else os.path.join(tmp, "replay.db")
        return replay(source, target, settings=settings, token_counter=token_counter, embedder=embedder,
                      progress=progress)
