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
from typing import Iterator  # archive family
from .rows import ConversationRow, SummarizerFailure, Turn  # archive family


# --- archive: conversations and turns (window/archive.py, window/conversation.py) ----------------
class ArchiveStorage(Protocol):
    """The lossless archive: ``conversations`` (with lineage and per-conversation state such as
    reported usage and summarizer failures) and ``turns`` (verbatim, immutable, with sha256)."""

    # conversations
    def conversation(self, conversation_id: str) -> "ConversationRow | None":
        """The conversation's row, or ``None`` if there is none."""

    def insert_conversation(self, *, conversation_id: str, namespace: str, family_id: str, parent_id: str | None,
                            fork_after_seq: int | None, created_at: float, labels: list[str]) -> None:
        """Insert one conversation. :raises StorageConflict: if the id is taken."""

    def conversation_ids(self) -> list[str]:
        """Every conversation id, in creation order."""

    def namespace_exists(self, namespace: str) -> bool:
        """True when a conversation, memory record or protected record is in ``namespace`` (spans
        the archive, records and protected families; kept here, the conversation being a namespace's first row)."""

    # turns
    def max_seq(self, conversation_id: str) -> int | None:
        """The largest seq among the conversation's own turns (``None`` when it has none)."""

    def insert_turn(self, *, conversation_id: str, family_id: str, seq: int, role: str, content: str,
                    name: str | None, tool_call_id: str | None, tool_calls: list[dict[str, Any]] | None,
                    metadata: str, created_at: float, tokens: int, sha256: str, labels: list[str]) -> int:
        """Insert one validated turn (``metadata`` as canonical JSON text); returns its id."""

    def turn(self, turn_id: int) -> "Turn | None":
        """The turn with ``turn_id``, or ``None``."""

    def turns(self, turn_ids: Iterable[int]) -> "list[Turn]":
        """The turns with these ids (missing ids are simply absent)."""

    def conversation_turns(self, conversation_id: str, *, after_seq: int = 0,
                           upto_seq: int | None = None) -> "list[Turn]":
        """The conversation's own turns with ``after_seq < seq <= upto_seq`` (``None``: no upper bound), by seq."""

    def unerased_turns(self, conversation_id: str | None = None) -> "Iterator[Turn]":
        """Every turn not erased (of one conversation, or all), by id, read a page at a time."""

    # per-conversation window state
    def reported_usage(self, conversation_id: str) -> int | None:
        """The prompt tokens last reported for the conversation (``None`` if none or cleared)."""

    def set_reported_usage(self, conversation_id: str, tokens: int, at: float) -> None:
        """Record (or replace) the prompt tokens the model used on the conversation's last call."""

    def clear_reported_usage(self, conversation_id: str) -> None:
        """Forget the conversation's reported usage."""

    def add_summarizer_failure(self, *, conversation_id: str, at: float, summarizer: str, depth: int,
                               first_seq: int, last_seq: int, source_tokens: int, error: str) -> "SummarizerFailure":
        """Record one summarizer failure; returns it with its new id."""

    def summarizer_failures(self, conversation_id: str) -> "list[SummarizerFailure]":
        """The conversation's recorded summarizer failures, oldest first."""

    def summarizer_failure_count(self, conversation_id: str) -> int:
        """How many summarizer failures the conversation has."""


# --- cards: immutable summary cards and their cover lists (window/cards.py) -----------------------
class CardStorage(Protocol):
    """``cards`` and their ordered children; a card never changes once written."""


# --- catalog: the ordered context items a conversation shows (window/catalog.py) -----------------
class CatalogStorage(Protocol):
    """``catalog`` rows: per conversation, the ordered card refs and turn refs the model sees."""


# --- records: typed memory records and store policies (memory/store.py, memory/forgetting.py) ----
class RecordStorage(Protocol):
    """``records`` (working, semantic, episodic, procedural) and the per-store policies."""


# --- protected: the protected channel (window/protected.py, window/constraints.py) ---------------
class ProtectedStorage(Protocol):
    """``protected`` records and their state history; never read by a summarizer."""


# --- full-text: BM25 indexes over turns, cards and records (memory/search.py, window/recall.py) --
class FullTextStorage(Protocol):
    """The full-text indexes (FTS5 on SQLite, tsvector on PostgreSQL) and their BM25 ranking."""


# --- vectors: stored embeddings (memory/embeddings.py) --------------------------------------------
class VectorStorage(Protocol):
    """Embeddings of turns, cards and records, with the model that wrote them."""


# --- runs/leases: consolidation runs, fire-time leases, the scheduler's job store ----------------
class RunStorage(Protocol):
    """Consolidation ``runs``, the episodes they consumed, and leases (who works on what until when)."""


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

    def close(self) -> None:
        """Release the connection(s)."""
