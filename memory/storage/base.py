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


# --- archive: conversations and turns (window/archive.py, window/conversation.py) ----------------
class ArchiveStorage(Protocol):
    """The lossless archive: ``conversations`` (with lineage and per-conversation state such as
    reported usage and summarizer failures) and ``turns`` (verbatim, immutable, with sha256)."""


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
from typing import TYPE_CHECKING, Sequence  # noqa: E402  (imports of the full-text and vector families)

from .rows import SearchItem, SearchScope, TextMatch  # noqa: E402

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


class FullTextStorage(Protocol):
    """The full-text indexes (FTS5 on SQLite, tsvector on PostgreSQL) and their BM25 ranking.

    Every query is scoped *before* ranking by a :class:`~.rows.SearchScope`; the candidate,
    neighbour and item reads span the turns, cards, records and conversations tables because
    search is their only user."""

    def conversation_lineage(self, conversation_id: str) -> list[tuple[str, int | None]]:
        """``[(conversation_id, last_seq_or_None)]`` from the conversation up to its root; ``[]`` if unknown."""

    def candidates(self, kind: str, scope: SearchScope) -> list[int]:
        """Ids of the live items of ``kind`` (turns not erased, cards not stale, records active) inside ``scope``."""

    def turn_sequence(self, scope: SearchScope) -> list[tuple[int, str, int]]:
        """``[(turn id, conversation_id, seq)]`` of the live turns inside ``scope``, by conversation and seq."""

    def rank(self, kind: str, match: str, scope: SearchScope, limit: int) -> list[tuple[int, float]]:
        """``[(id, bm25)]`` of items of ``kind`` in ``scope`` matching ``match``, best (lowest bm25) first."""

    def postings(self, kind: str, term: str) -> list[tuple[int, float]]:
        """``[(id, bm25)]`` of every indexed item of ``kind`` matching one term, with table-wide statistics."""

    def indexed_count(self, kind: str) -> int:
        """How many items of ``kind`` the full-text index holds."""

    def item(self, kind: str, item_id: int) -> SearchItem:
        """The searchable fields (text, conversation, namespace, type, key, time, labels) of one item."""

    def match_turns(self, match: str, lineage: Sequence[tuple[str, int | None]], limit: int) -> list[TextMatch]:
        """Live turns of ``lineage`` matching ``match`` with snippets, best BM25 first (ties by id)."""

    def match_cards(self, match: str, family_id: str, lineage: Sequence[tuple[str, int | None]],
                    limit: int) -> list[TextMatch]:
        """Non-stale cards of the family within ``lineage`` matching ``match`` with snippets, best first."""

    def describe_match(self, kind: str, item_id: int, match: str) -> TextMatch:
        """A turn's or card's snippet for ``match`` (``None`` if it does not match), seq span, depth and role."""


# --- vectors: stored embeddings (memory/embeddings.py) --------------------------------------------
class VectorStorage(Protocol):
    """Embeddings of turns, cards and records, with the model that wrote them."""

    def model(self) -> tuple[str, int] | None:
        """``(model_id, dim)`` recorded for the stored vectors, or ``None``."""

    def set_model(self, model_id: str, dim: int) -> None:
        """Record the model of the stored vectors (inside a transaction)."""

    def put(self, kind: str, item_ids: Sequence[int], vectors: np.ndarray, *, model_id: str) -> None:
        """Store or replace one ``float32`` vector per item (rows of ``vectors``)."""

    def clear(self) -> int:
        """Delete every vector and the recorded model (inside a transaction); returns how many vectors."""

    def get(self, kind: str, item_id: int) -> np.ndarray | None:
        """One item's ``(dim,) float32`` vector, or ``None``."""

    def count(self, kind: str | None = None) -> int:
        """How many vectors are stored (of one kind, or all)."""

    def version(self, kind: str) -> tuple:
        """A value that changes whenever the vectors of ``kind`` change (a cache key)."""

    def matrix(self, kind: str) -> tuple[np.ndarray, np.ndarray]:
        """All vectors of ``kind``: ``(ids (n,) int64 ascending, vectors (n, dim) float32)``."""

    def unembedded(self, kind: str, *, limit: int | None = None) -> list[tuple[int, str]]:
        """``[(item_id, text)]`` of live items of ``kind`` that have no vector yet, oldest first."""

    def embeddable(self, kind: str) -> list[tuple[int, str]]:
        """``[(item_id, text)]`` of every live item of ``kind`` that may carry a vector, by id."""


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
