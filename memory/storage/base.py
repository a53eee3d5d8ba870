"""The storage seam: small Protocols, one per table family, that every backend implements.

Everything above ``memory/storage/`` (policy, engines, the facade) talks to storage only through
these Protocols and the dataclasses they return; no SQL text and no driver exception ever crosses
this line (DESIGN.md §2-§3). A backend (``sqlite/`` today, ``postgres/`` next) implements every
family and passes the same contract suite (``tests/test_storage_contract.py``).

Invariants every backend keeps:

* :meth:`Storage.transaction` is one atomic write; nested calls join the outer one (a savepoint),
  and an exception inside rolls the whole block back, so bad input writes nothing.
* A driver error never escapes: it becomes :class:`~memfold.memory.errors.StorageError` or a
  subclass (:class:`~memfold.memory.errors.StorageConflict` for a broken uniqueness rule).
* Methods return memfold's own dataclasses (or plain ``int``/``str``/``dict`` values), never
  driver rows or cursors, so a caller cannot depend on one backend's row type.
* Reads outside :meth:`Storage.transaction` see committed state only and take no write lock.
"""

from __future__ import annotations

from typing import Any, ContextManager, Iterable, Protocol, runtime_checkable

from .rows import Event
from .rows import ConsolidationRun, LeaseRow, PendingEpisode, PendingTurn  # runs


# --- archive: conversations and turns (window/archive.py, window/conversation.py) ----------------
class ArchiveStorage(Protocol):
    """The lossless archive: ``conversations`` (with lineage and per-conversation state such as
    reported usage and summarizer failures) and ``turns`` (verbatim, immutable, with sha256)."""

    # added by wt-runs (replay report reads)
    def count_turns(self) -> int:
        """How many turns the archive holds (every conversation, erased ones included)."""

    def count_turns_labelled(self, label: str) -> int:
        """How many turns carry ``label``."""

    def total_turn_tokens(self) -> int:
        """The tokens of every archived turn, summed."""

    def count_summarizer_failures(self) -> int:
        """How many summarizer failures are recorded (every conversation)."""

    def turn_seqs(self, conversation_id: str) -> "dict[int, int]":
        """``{turn id: seq}`` of the turns appended to this conversation itself (not its lineage)."""


# --- cards: immutable summary cards and their cover lists (window/cards.py) -----------------------
class CardStorage(Protocol):
    """``cards`` and their ordered children; a card never changes once written."""

    # added by wt-runs (replay report reads)
    def count_by_depth(self) -> "dict[int, int]":
        """``{depth: cards}`` over every card, by depth."""

    def all_texts(self) -> "list[str]":
        """The text of every card (every conversation)."""


# --- catalog: the ordered context items a conversation shows (window/catalog.py) -----------------
class CatalogStorage(Protocol):
    """``catalog`` rows: per conversation, the ordered card refs and turn refs the model sees."""

    # added by wt-runs (replay report reads)
    def card_counts_by_depth(self) -> "dict[int, int]":
        """``{depth: card items}`` over every conversation's catalog, by depth."""


# --- records: typed memory records and store policies (memory/store.py, memory/forgetting.py) ----
class RecordStorage(Protocol):
    """``records`` (working, semantic, episodic, procedural) and the per-store policies."""

    # added by wt-runs (replay report reads)
    def count_records(self, *, type: str | None = None, status: str | None = None) -> int:
        """How many records (every namespace) have this type and status (None: any)."""

    def count_superseded(self) -> int:
        """How many records have been superseded (``superseded_by`` set)."""

    def count_consolidated(self, type: str) -> int:
        """How many records of ``type`` a consolidation run wrote."""

    def contents_of_type(self, type: str) -> "list[str]":
        """The content of every record of ``type``, whatever its status or namespace."""


# --- protected: the protected channel (window/protected.py, window/constraints.py) ---------------
class ProtectedStorage(Protocol):
    """``protected`` records and their state history; never read by a summarizer."""

    # added by wt-runs (replay report reads)
    def count_all(self) -> int:
        """How many protected records exist (every namespace, every state)."""

    def all_texts(self) -> "list[str]":
        """The text of every protected record (every namespace, every state)."""


# --- full-text: BM25 indexes over turns, cards and records (memory/search.py, window/recall.py) --
class FullTextStorage(Protocol):
    """The full-text indexes (FTS5 on SQLite, tsvector on PostgreSQL) and their BM25 ranking."""


# --- vectors: stored embeddings (memory/embeddings.py) --------------------------------------------
class VectorStorage(Protocol):
    """Embeddings of turns, cards and records, with the model that wrote them."""


# --- runs/leases: consolidation runs, fire-time leases, the scheduler's job store ----------------
class RunStorage(Protocol):
    """Consolidation ``runs``, the episodes they consumed, and leases (who works on what until when).

    Also the consolidation queue (pending episodes and turns, read past this family's cursor) and
    the scheduler's job store table. Every source is consumed once: a second
    :meth:`record_consumed` of one source raises ``StorageConflict``.
    """

    # run records
    def start_run(self, namespace: str, extractor: str, trigger: str, at: float) -> int:
        """Insert a ``running`` run row; returns its id."""

    def add_batch(self, run_id: int, *, episodes: int, turns: int, facts: int, rules: int) -> None:
        """Add one committed batch's counts to the run."""

    def finish_run(self, run_id: int, status: str, at: float, errors: "list[str]") -> None:
        """Close a run with its final status, time and errors."""

    def get_run(self, run_id: int) -> "ConsolidationRun | None":
        """The run with this id, or None."""

    def list_runs(self, namespace: str | None = None, limit: int | None = None) -> "list[ConsolidationRun]":
        """Runs oldest first, optionally of one namespace; ``limit`` keeps the newest N."""

    def count_runs(self) -> int:
        """How many consolidation runs are recorded (every namespace, every status)."""

    # the ledger of consumed sources
    def record_consumed(self, source: str, namespace: str, run_id: int, at: float, products: "list[int]") -> None:
        """Record that ``source`` was consumed by ``run_id`` and produced ``products``; StorageConflict if it was already."""

    def consumption(self, source: str) -> "dict[str, Any] | None":
        """The ledger row of ``source`` (``source, namespace, run_id, consumed_at, products``), or None."""

    # the per-namespace turn cursor
    def turn_cursor(self, namespace: str) -> int:
        """The id of the last archived turn of ``namespace`` already consolidated (0 for none)."""

    def set_turn_cursor(self, namespace: str, last_turn_id: int, run_id: int) -> None:
        """Move the namespace's turn cursor to ``last_turn_id`` (set by run ``run_id``)."""

    # the consolidation queue
    def pending_episodes(self, namespace: str, *, after_id: int, horizon: float, limit: int) -> "list[PendingEpisode]":
        """Active episodic records with id > ``after_id`` written at or before ``horizon``, id order."""

    def count_active_episodes(self, record_ids: "list[int]") -> int:
        """How many of ``record_ids`` are still active episodic records."""

    def pending_namespaces(self, *, include_turns: bool = False) -> "list[str]":
        """Namespaces with active episodes (and, with ``include_turns``, turns past their cursor), sorted."""

    def pending_turns(self, namespace: str, *, after_id: int, horizon: float, limit: int) -> "list[PendingTurn]":
        """Unerased turns with id > ``after_id`` created at or before ``horizon``, id order; secret turns only with spans."""

    # leases: one row per (name, fire time)
    def newer_lease_exists(self, name: str, fire_time: float) -> bool:
        """True when a lease of ``name`` for a later fire time exists."""

    def get_lease(self, name: str, fire_time: float) -> "LeaseRow | None":
        """The lease of ``name`` for ``fire_time``, or None."""

    def insert_lease(self, name: str, fire_time: float, holder: str, *, acquired_at: float, expires_at: float) -> None:
        """Insert a new, unfinished lease; StorageConflict if one exists for this fire time."""

    def take_lease(self, name: str, fire_time: float, holder: str, *, acquired_at: float, expires_at: float) -> None:
        """Give the lease of ``name`` for ``fire_time`` to ``holder`` (re-entry or takeover)."""

    def renew_lease(self, name: str, fire_time: float, holder: str, *, expires_at: float) -> bool:
        """Extend ``holder``'s unfinished lease; False if ``holder`` does not hold it."""

    def finish_lease(self, name: str, fire_time: float, holder: str, *, finished_at: float, outcome: str) -> bool:
        """Finish ``holder``'s unfinished lease with ``outcome``; False if ``holder`` does not hold it."""

    def list_leases(self, name: str | None = None, limit: int | None = None) -> "list[LeaseRow]":
        """Leases by fire time (oldest first), optionally of one name; ``limit`` keeps the newest N."""

    # the scheduler's job store
    def ensure_job_store(self, table: str) -> bool:
        """Create the scheduler job store's table if missing, race-free across processes; True if created."""


# --- events: the append-only audit log (memory/events.py) ----------------------------------------
class EventStorage(Protocol):
    """The append-only ``events`` log: every state change with its time, kind and cause."""

    def append(self, *, at: float, kind: str, subject: str, namespace: str | None = None,
               record_id: int | None = None, cause: str = "", details: dict[str, Any] | None = None) -> int:
        """Append one event (inside the transaction of the change it logs); returns its id."""

    def list(self, *, namespace: str | None = None, record_id: int | None = None, kind: str | None = None,
             limit: int | None = None) -> "list[Event]":
        """Events in the order they happened, optionally filtered; ``limit`` keeps the newest N."""


# --- erasure: removing content for good across every family (window/erasure.py) ------------------
class ErasureStorage(Protocol):
    """Cross-family scrubbing of erased content (every table and index that may hold its bytes)."""


# --- meta: file-wide settings (clock kind, logical tick, token counter, schema version) ----------
class MetaStorage(Protocol):
    """Key/value settings of the file and the schema version."""

    def get(self, key: str) -> str | None:
        """The value stored under ``key``, or None."""

    def get_many(self, keys: Iterable[str]) -> "dict[str, str]":
        """The stored values of those ``keys`` that have one."""

    def set(self, key: str, value: str) -> None:
        """Store ``value`` under ``key``, replacing any value there."""

    def add(self, key: str, value: str) -> bool:
        """Store ``value`` under ``key`` unless a value is there already; True when it was stored."""

    def delete(self, keys: Iterable[str]) -> int:
        """Remove those ``keys``; returns how many were there."""

    def clock_kind(self) -> str | None:
        """The kind of clock that wrote the file (``"logical"``/``"system"``), None for a fresh file."""

    def logical_tick(self) -> float | None:
        """The tick a logical clock was last advanced to, or None."""

    def set_logical_tick(self, tick: int) -> None:
        """Remember the tick a logical clock was advanced to."""

    def token_counter(self) -> str | None:
        """The id of the token counter recorded for the file, or None."""

    def record_token_counter(self, counter_id: str) -> None:
        """Record the file's token counter unless one is recorded already."""

    def newest_stored_time(self) -> float | None:
        """The newest time value stored in turns, memory records and events, or None when empty."""

    def schema_version(self) -> int:
        """The file's schema version (0 for a file that has none yet)."""


@runtime_checkable
class Storage(Protocol):
    """One opened backend: every table family plus transactions.

    Made only by :func:`memfold.memory.storage.open_storage`; engines receive it from the facade.
    """

    kind: str  #: ``"sqlite"`` (and ``"postgres"`` later)
    archive: ArchiveStorage
    cards: CardStorage
    catalog: CatalogStorage
    records: RecordStorage
    protected: ProtectedStorage
    fulltext: FullTextStorage
    vectors: VectorStorage
    runs: RunStorage
    events: EventStorage
    erasure: ErasureStorage
    meta: MetaStorage

    def transaction(self) -> ContextManager[None]:
        """One atomic write (nested calls join the outer one); rolls back on any exception."""

    def snapshot(self) -> ContextManager[None]:
        """One consistent read of committed state (a read transaction), taking no write lock."""

    @property
    def in_transaction(self) -> bool:
        """True while a :meth:`transaction` (or :meth:`snapshot`) is open on this storage."""

    def close(self) -> None:
        """Release the connection(s)."""
