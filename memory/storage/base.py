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
* ``Storage.transaction(scope=...)`` names what a write transaction writes (:func:`write_scope`),
  so a backend whose writers run side by side (PostgreSQL) locks only that; a backend with one
  writer (SQLite) ignores it. No scope means "anything": the whole database is locked, as before.
"""

from __future__ import annotations

from typing import Any, ContextManager, Iterable, Protocol, Sequence, runtime_checkable

from .rows import Event
from .rows import MemoryRecord, ScoreRow, StoredPolicy  # records family
from typing import Sequence  # records family
from .rows import Event, ProtectedRecord
from .rows import Card, CatalogItem, Event
from typing import Iterator  # archive family
from .rows import AppendPoint, ConversationRow, SummarizerFailure, Turn  # archive family
from .rows import CompactionNote, ConsolidationRun, LeaseRow, PendingEpisode, PendingTurn  # runs
from .rows import FoldRow, FrameRow  # folds


# --- archive: conversations and turns (window/archive.py, window/conversation.py) ----------------
class ArchiveStorage(Protocol):
    """The lossless archive: ``conversations`` (with lineage and per-conversation state such as
    reported usage and summarizer failures) and ``turns`` (verbatim, immutable, with sha256)."""

    # added by wt-cards
    def turn_labels(self, turn_id: int) -> "list[str] | None":
        """The labels of a turn, or ``None`` when there is none (for relabelling)."""

    def set_turn_labels(self, turn_id: int, labels: "list[str]") -> None:
        """Replace the labels of a turn (the caller validates them and logs the change)."""
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
    def append_point(self, conversation_id: str) -> "AppendPoint | None":
        """Everything an append reads of its conversation, for the append's write transaction:
        the row, the newest own seq, the seq its catalog covers, its closing strategy frames and
        the turns' version (spans ``conversations``, ``turns``, ``catalog_items``,
        ``strategy_frames``); ``None`` when there is no such conversation. One statement where
        the backend can (issue 18, point 4)."""
    def insert_turn(self, *, conversation_id: str, family_id: str, seq: int, role: str, content: str,
                    name: str | None, tool_call_id: str | None, tool_calls: list[dict[str, Any]] | None,
                    metadata: str, created_at: float, tokens: int, sha256: str, labels: list[str],
                    idempotency_key: str | None = None) -> int:
        """Insert one validated turn (``metadata`` as canonical JSON text); returns its id.
        :raises StorageConflict: if the conversation already has a turn at ``seq``, or one with
            this ``idempotency_key`` (unique per conversation)."""
    def keyed_turns(self, conversation_id: str, keys: Iterable[str]) -> "dict[str, Turn]":
        """The conversation's own turns appended with these idempotency keys, by key (absent keys left out)."""
    def turn(self, turn_id: int) -> "Turn | None":
        """The turn with ``turn_id``, or ``None``."""
    def turns(self, turn_ids: Iterable[int]) -> "list[Turn]":
        """The turns with these ids (missing ids are simply absent)."""
    def latest_system_turn(self, conversation_id: str, *, upto_seq: int | None = None) -> "Turn | None":
        """The conversation's own newest ``system`` turn with ``seq <= upto_seq`` (``None``: no bound), or ``None``."""
    def conversation_turns(self, conversation_id: str, *, after_seq: int = 0,
                           upto_seq: int | None = None) -> "list[Turn]":
        """The conversation's own turns with ``after_seq < seq <= upto_seq`` (``None``: no upper bound), by seq."""
    def recent_messages(self, conversation_id: str, *, limit: int,
                        upto_seq: int | None = None) -> "list[tuple[int, str, str]]":
        """The conversation's own newest ``limit`` turns with ``seq <= upto_seq`` (``None``: no
        bound) as ``(seq, role, content)``, oldest first: what the secret detector reads of the
        turns before an append (issue 18, point 4), without decoding whole turns."""
    def unerased_turns(self, conversation_id: str | None = None) -> "Iterator[Turn]":
        """Every turn not erased (of one conversation, or all), by id, read a page at a time."""
    # per-conversation window state
    def reported_usage(self, conversation_id: str) -> int | None:
        """The prompt tokens last reported for the conversation (``None`` if none or cleared)."""
    def set_reported_usage(self, conversation_id: str, tokens: int, at: float) -> None:
        """Record (or replace) the prompt tokens the model used on the conversation's last call."""
    def last_model_call_at(self, conversation_id: str) -> float | None:
        """When usage was last reported for the conversation (its last model call), or None."""

    def clear_reported_usage(self, conversation_id: str) -> None:
        """Forget the conversation's reported usage."""
    def add_summarizer_failure(self, *, conversation_id: str, at: float, summarizer: str, depth: int,
                               first_seq: int, last_seq: int, source_tokens: int, error: str) -> "SummarizerFailure":
        """Record one summarizer failure; returns it with its new id."""
    def summarizer_failures(self, conversation_id: str) -> "list[SummarizerFailure]":
        """The conversation's recorded summarizer failures, oldest first."""
    def summarizer_failure_count(self, conversation_id: str) -> int:
        """How many summarizer failures the conversation has."""
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

    def insert(self, *, family_id: str, conversation_id: str, depth: int, text: str, tokens: int,
               source_tokens: int, first_turn_id: int, last_turn_id: int, first_seq: int, last_seq: int,
               start_at: float, end_at: float, labels: Sequence[str], summarizer: str, created_at: float,
               covers: Sequence[tuple[str, int]]) -> int:
        """Store one card and its ordered ``(kind, id)`` cover list (call inside a transaction); returns its id."""

    def get(self, card_id: int) -> "Card | None":
        """The card with its covers, or ``None`` when there is none."""

    def get_many(self, card_ids: Iterable[int]) -> "dict[int, Card]":
        """Cards by id, without their cover lists (ids that do not exist are left out)."""

    def covers(self, card_id: int) -> "tuple[str, ...]":
        """The card's ordered child refs (``"t12"`` or ``"c3"``)."""

    def parents(self, kind: str, item_id: int) -> "list[int]":
        """Ids of the cards whose cover list holds this turn (``kind="turn"``) or card, ascending."""

    def family(self, family_id: str) -> "list[Card]":
        """Every card of a family, oldest first, with covers."""

    def mark_stale(self, card_ids: Sequence[int]) -> "list[int]":
        """Set the ``stale`` flag of those of ``card_ids`` that are not stale yet; returns those ids."""

    def next_id(self) -> int:
        """The id the next inserted card will get."""
    # added by wt-runs (replay report reads)
    def count_by_depth(self) -> "dict[int, int]":
        """``{depth: cards}`` over every card, by depth."""
    def all_texts(self) -> "list[str]":
        """The text of every card (every conversation)."""


# --- catalog: the ordered context items a conversation shows (window/catalog.py) -----------------
class CatalogStorage(Protocol):
    """``catalog`` rows: per conversation, the ordered card refs and turn refs the model sees."""

    def items(self, conversation_id: str) -> "list[CatalogItem]":
        """The conversation's catalog items ordered by ``first_seq``."""

    def totals(self, conversation_id: str, glimpse_over: int) -> "tuple[int, list[tuple[int, int]], bool]":
        """(tokens of cards and of turns up to ``glimpse_over``, [(turn_id, tokens)] of larger turns, any card?);
        system-role turns are left out of both (they are never shown in place, issue 20)."""

    def last_seq(self, conversation_id: str) -> int:
        """The newest seq the conversation's catalog covers (0 when empty)."""
    def cover(self, conversation_id: str) -> "tuple[int, int | None]":
        """``(last_seq(conversation_id), the newest seq of the conversation's own turns or None)``
        in one statement (spans ``catalog_items`` and ``turns``): whether the catalog is in sync."""

    def insert(self, conversation_id: str, items: Sequence[CatalogItem]) -> None:
        """Add items to the conversation's catalog (the caller keeps the cover contiguous)."""

    def refs_between(self, conversation_id: str, first_seq: int, last_first_seq: int) -> "list[tuple[str, int]]":
        """``(kind, item_id)`` of the items whose ``first_seq`` lies in ``first_seq..last_first_seq``, in order."""

    def delete_between(self, conversation_id: str, first_seq: int, last_first_seq: int) -> int:
        """Remove the items whose ``first_seq`` lies in ``first_seq..last_first_seq``; returns how many."""

    def stale_cards(self) -> "list[tuple[str, int, int]]":
        """``(conversation_id, first_seq, card_id)`` of every catalog item showing a stale card (reads cards)."""

    def turn_item(self, turn_id: int) -> "CatalogItem | None":
        """The catalog item of an archived turn, or ``None`` when there is none (reads turns)."""
    # added by wt-runs (replay report reads)
    def card_counts_by_depth(self) -> "dict[int, int]":
        """``{depth: card items}`` over every conversation's catalog, by depth."""


# --- records: typed memory records and store policies (memory/store.py, memory/forgetting.py) ----
class RecordStorage(Protocol):
    """``records`` (working, semantic, episodic, procedural) and the per-store policies."""

    def insert(self, *, namespace: str, type: str, key: str | None, content: str, importance: float,
               created_at: float, written_at: float, event_time: float | None, pinned: bool,
               provenance: Sequence[str], labels: Sequence[str], metadata: str) -> int:
        """Insert one active record; ``metadata`` is JSON text. Returns the new id."""

    def refresh(self, record_id: int, *, written_at: float, importance: float, event_time: float | None,
                provenance: Sequence[str], labels: Sequence[str], metadata: str, pinned: bool) -> None:
        """Rewrite a restated record's write time, importance, event time, sources, labels, metadata, pin."""

    def set_status(self, record_id: int, status: str) -> None:
        """Set one record's status (bytes and links stay)."""

    def retire(self, record_id: int, *, superseded_by: int | None = None) -> None:
        """Set a record to ``retired``; with ``superseded_by``, also link it to its successor."""

    def set_pinned(self, record_id: int, pinned: bool) -> None:
        """Pin or unpin one record."""

    def touch(self, record_ids: Sequence[int], at: float) -> None:
        """Count one read of each record: ``access_count + 1`` and ``last_access_at = at``."""

    def set_supersedes(self, record_id: int, predecessor: int | None) -> None:
        """Set (or clear) the record this one supersedes."""

    def clear_supersedes(self, record_id: int, *, if_predecessor: int) -> None:
        """Clear ``supersedes`` of ``record_id`` only if it points at ``if_predecessor``."""

    def set_superseded_by(self, record_id: int, successor: int | None) -> None:
        """Set (or clear) the record that supersedes this one."""

    def replace_superseded_by(self, record_id: int, *, old: int, new: int) -> None:
        """Point ``superseded_by`` of ``record_id`` at ``new`` only if it pointed at ``old``."""

    def get(self, record_id: int) -> "MemoryRecord | None":
        """The record with ``record_id``, or ``None``."""

    def get_many(self, record_ids: Sequence[int]) -> "dict[int, MemoryRecord]":
        """``{id: record}`` for those of ``record_ids`` that exist (one statement)."""

    def list(self, *, namespace: str | None = None, type: str | None = None, key: str | None = None,
             status: str | None = None) -> "list[MemoryRecord]":
        """Records matching every filter given (``None``: any), in write order (id)."""

    def active_in_slot(self, namespace: str, type: str, key: str) -> "list[MemoryRecord]":
        """Active records of one ``(namespace, type, key)`` slot, oldest first (normally at most one)."""

    def score_rows(self, namespace: str, type: str) -> "list[ScoreRow]":
        """Active records of one store as ``(id, importance, written_at, access_count, pinned)`` tuples."""

    def namespaces(self) -> "list[str]":
        """Every namespace that has records, sorted."""

    def policy(self, namespace: str, type: str) -> "StoredPolicy | None":
        """The stored policy of one ``(namespace, type)`` store, or ``None`` if none was set."""

    def put_policy(self, namespace: str, type: str, *, capacity: int | None, half_life: float | None,
                   access_weight: float | None, updated_at: float) -> None:
        """Create or replace the policy row of one store."""
    # added by wt-cards
    def record_labels(self, record_id: int) -> "list[str] | None":
        """The labels of a memory record, or ``None`` when there is none (for relabelling)."""
    def set_record_labels(self, record_id: int, labels: "list[str]") -> None:
        """Replace the labels of a memory record (the caller validates them and logs the change)."""
    # added by wt-runs (replay report reads)
    def count_records(self, *, type: str | None = None, status: str | None = None) -> int:
        """How many records (every namespace) have this type and status (None: any)."""
    def has_active(self, namespace: str) -> bool:
        """True when ``namespace`` holds at least one active record (one indexed statement: a
        compile over a namespace without memories reads nothing more, issue 18, point 4)."""
    def count_superseded(self) -> int:
        """How many records have been superseded (``superseded_by`` set)."""
    def count_consolidated(self, type: str) -> int:
        """How many records of ``type`` a consolidation run wrote."""
    def contents_of_type(self, type: str) -> "list[str]":
        """The content of every record of ``type``, whatever its status or namespace."""


# --- protected: the protected channel (window/protected.py, window/constraints.py) ---------------
class ProtectedStorage(Protocol):
    """``protected`` records and their state history; never read by a summarizer."""

    def insert(self, *, namespace: str, conversation_id: str | None, kind: str, text: str, state: str,
               due_at: float | None, provenance: Iterable[str], labels: Iterable[str], source: str,
               created_at: float, metadata: dict[str, Any] | None = None) -> int:
        """Insert one validated record (``changed_at`` = ``created_at``); returns its id."""

    def set_state(self, record_id: int, state: str, *, changed_at: float, superseded_by: int | None = None) -> None:
        """Move a record to ``state`` at ``changed_at``; ``superseded_by`` is kept unless given."""

    def set_supersedes(self, record_id: int, supersedes: int) -> None:
        """Record which record ``record_id`` replaced."""

    def set_superseded_by(self, record_id: int, superseded_by: int) -> None:
        """Record which record replaced ``record_id``."""

    def set_metadata(self, record_id: int, metadata: dict[str, Any]) -> None:
        """Replace a record's metadata."""

    def get(self, record_id: int) -> ProtectedRecord | None:
        """The record with ``record_id``, or ``None``."""

    def get_many(self, record_ids: Iterable[int], *, lock: bool = False,
                 metadata: bool = True) -> "dict[int, ProtectedRecord]":
        """The records with those ids that exist, by id, in one statement (issue 18, point 4: a
        rendering reads every replaced record at once, not one by one). ``lock``: inside a write,
        lock the rows read until the commit as :meth:`get` does (PostgreSQL's ``FOR UPDATE``; a
        SQLite write holds the whole file already). ``metadata=False``: each record's metadata
        is left unread (``{}``): a replaced record's own chain of replaced texts, which grows
        with the conversation, is not decoded where only its text, state and labels are read."""

    def list(self, *, namespace: str | None = None, conversation_id: str | None = None,
             state: str | None = None) -> "list[ProtectedRecord]":
        """Records in id order, filtered by every argument that is not ``None``."""

    def active_in_scope(self, namespace: str, conversation_ids: Iterable[str]) -> "list[ProtectedRecord]":
        """Active records of ``namespace``, namespace-wide or scoped to one of ``conversation_ids``, by id."""

    def version(self) -> "object | None":
        """A value that changes whenever the ``protected`` table may have changed (by this
        connection or another), or ``None`` when the backend has none: a rendering of the
        channel read under one version stays right while it is unchanged (issue 18, point 4)."""

    def due_ids(self, at: float) -> "list[int]":
        """Ids of active records whose ``due_at`` is at or before ``at``, in id order."""

    def texts_for_family(self, family_id: str) -> "list[str]":
        """Texts of non-erased records of the family's conversations or their namespaces (spans conversations)."""

    def guarded_texts(self, family_id: str, namespace: str) -> "list[tuple[int, str]]":
        """``(id, text)`` of non-empty, non-erased records of the family or namespace, longest first (spans conversations)."""

    def live_provenance(self) -> "list[tuple[str, ...]]":
        """The provenance lists of every non-erased record."""
    # added by wt-cards
    def protected_labels(self, protected_id: int) -> "list[str] | None":
        """The labels of a protected record, or ``None`` when there is none (for relabelling)."""
    def set_protected_labels(self, protected_id: int, labels: "list[str]") -> None:
        """Replace the labels of a protected record (the caller validates them and logs the change)."""
    # added by wt-runs (replay report reads)
    def count_all(self) -> int:
        """How many protected records exist (every namespace, every state)."""
    def all_texts(self) -> "list[str]":
        """The text of every protected record (every namespace, every state)."""


# --- full-text: BM25 indexes over turns, cards and records (memory/search.py, window/recall.py) --
from typing import TYPE_CHECKING, Sequence  # noqa: E402  (imports of the full-text and vector families)

from .rows import SearchItem, SearchScope, TextMatch  # noqa: E402

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


class FullTextStorage(Protocol):
    """The full-text indexes (FTS5 on SQLite, tsvector on PostgreSQL) and their BM25 ranking.

    Every query is scoped *before* ranking by a :class:`~.rows.SearchScope`; the candidate,
    neighbour and item reads span the turns, cards, records and conversations tables because
    search is their only user.

    ``kind`` is ``"turn"``, ``"card"`` or ``"record"`` (another raises ``InvalidInput``). A ``match``
    expression is what :func:`memfold.memory.fts.literal_query` and
    :func:`memfold.memory.search.bm25_query` build: double-quoted words, each optionally a prefix
    (``"word" *``), joined by ``OR`` (or ``AND``); one the index cannot parse raises ``StorageError``."""

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

    def documents(self, kind: str, after_id: int = 0) -> list[tuple[int, int, str | None, int]]:
        """``[(id, length, group, seq)]`` of indexed items of ``kind`` with an id above ``after_id``, by id:
        length in index tokens, group = a turn's or card's conversation (a record's namespace), seq = a
        turn's seq (a card's last_seq, 0 for a record). What a search keeps in memory (issue 18)."""

    def occurrences(self, kind: str, token: str, *, prefix: bool = False) -> list[int]:
        """One item id per occurrence of the index token ``token`` (any token starting with it when
        ``prefix``) over the whole index of ``kind``: BM25's term frequencies, unscored."""

    def labelled(self, kind: str, after_id: int = 0, upto_id: int | None = None) -> list[int]:
        """Ids (ascending) of the items of ``kind`` in the full-text index with an id above
        ``after_id`` (and at most ``upto_id``) that require any label: the only ones a reader
        may be refused, which a search leaves out of a large scope's statistics (issue 18)."""

    def indexed(self, kind: str, item_ids: Sequence[int]) -> set[int]:
        """Which of ``item_ids`` have an entry in the full-text index of ``kind`` (erasure drops
        it): what a search keeping a small scope's words between calls re-checks (issue 18)."""

    def turn_facets(self, after_id: int = 0) -> list[tuple[int, str, float, str | None]]:
        """``[(turn id, conversation_id, created_at, name)]`` of the indexed turns with an id above
        ``after_id``, by id (``name`` the turn's optional speaker name): what a search's date,
        speaker and session priors keep in memory (issue 18 point 7)."""

    def term_frequencies(self, kind: str, token: str, *, prefix: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`occurrences` counted per item, as arrays: ``(ids, counts)``, both ``(n,) int64``,
        ids ascending and distinct, counts >= 1. What a scoped BM25 reads for a large scope (no
        Python object per occurrence)."""

    def term_frequencies_after(self, kind: str, tokens: Sequence[tuple[str, bool]],
                               after_id: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each ``(token, prefix)`` of ``tokens``, :meth:`term_frequencies` restricted to the
        indexed items with an id above ``after_id``: what a search keeping a word's counts in
        memory reads for the items written since (issue 18, point 1)."""

    def visible(self, kind: str, scope: SearchScope, item_ids: Sequence[int]) -> set[int]:
        """Which of ``item_ids`` are live items of ``kind`` inside ``scope`` (labels included)."""

    def item(self, kind: str, item_id: int) -> SearchItem:
        """The searchable fields (text, conversation, namespace, type, key, time, labels) of one item.
        :raises NotFound: (``TurnNotFound``, ``CardNotFound``, ``RecordNotFound``) when there is none."""

    def items(self, kind: str, item_ids: Sequence[int]) -> dict[int, SearchItem]:
        """The searchable fields (text, conversation, namespace, type, key, time, labels) of items by id."""

    def match_turns(self, match: str, lineage: Sequence[tuple[str, int | None]], limit: int) -> list[TextMatch]:
        """Live turns of ``lineage`` matching ``match`` with snippets, best BM25 first (ties by id)."""

    def match_cards(self, match: str, family_id: str, lineage: Sequence[tuple[str, int | None]],
                    limit: int) -> list[TextMatch]:
        """Non-stale cards of the family within ``lineage`` matching ``match`` with snippets, best first."""

    def describe_match(self, kind: str, item_id: int, match: str) -> TextMatch:
        """A turn's or card's snippet for ``match`` (``None`` if it does not match), seq span, depth and role.
        :raises NotFound: (``TurnNotFound``, ``CardNotFound``) when there is no such item."""

    def describe_matches(self, kind: str, item_ids: Sequence[int], match: str) -> dict[int, TextMatch]:
        """Turns' or cards' snippets for ``match`` (``None`` if one does not match), seq spans, depth and role, by id."""


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

    def nearest(self, kind: str, query_vector: np.ndarray, scope: SearchScope, *, limit: int,
                private: bool | None = None) -> list[tuple[int, float]]:
        """The ``limit`` live items of ``kind`` inside ``scope`` (labels included, filtered before
        ranking) whose vectors are most similar to ``query_vector`` (``(dim,) float32``):
        ``[(item_id, cosine similarity)]``, best first. Fewer only when fewer visible items have a
        vector. Exact in-process on SQLite; pgvector's HNSW index on PostgreSQL when present
        (approximate), else the same exact scan.

        :param private: the read may see rows that are not committed (a caller's transaction
            that may roll back): whatever it reads past the vectors kept in memory is used for this
            call only, and nothing kept is changed (no row added, none dropped). ``None`` (the
            default): when the calling thread is inside a transaction or snapshot of the storage.
            A search passes whether its caller was."""

    def similarity(self, kind: str, query_vector: np.ndarray, item_ids: Sequence[int], *,
                   private: bool | None = None) -> dict[int, float]:
        """``{item_id: cosine similarity}`` to ``query_vector`` of those of ``item_ids`` that have a
        vector (the caller passes only ids it may see); ``private`` as for :meth:`nearest`."""

    def unembedded(self, kind: str, *, limit: int | None = None, after_id: int = 0) -> list[tuple[int, str]]:
        """``[(item_id, text)]`` of live items of ``kind`` that have no vector yet, oldest first
        (only ids above ``after_id`` when given)."""

    def newest_item(self, kind: str) -> int:
        """The largest id among the items of ``kind`` (erased or not); 0 when there are none."""

    def mark(self, kind: str) -> int:
        """The newest vector row of ``kind`` (0 when none); a later write or replacement has a larger one."""

    def since(self, kind: str, after_row: int) -> list[tuple[int, int, str | None, np.ndarray]]:
        """``[(row, item_id, group, vector)]`` of vectors of ``kind`` written or replaced after row
        ``after_row``, by row; group = a turn's or card's conversation, a record's namespace."""

    def embeddable(self, kind: str) -> list[tuple[int, str]]:
        """``[(item_id, text)]`` of every live item of ``kind`` that may carry a vector, by id."""

    def embeddable_among(self, kind: str, item_ids: Sequence[int]) -> set[int]:
        """Which of ``item_ids`` are live items of ``kind`` that may carry a vector (what
        :meth:`unembedded` and :meth:`embeddable` list): called inside the transaction that stores
        their vectors, so a vector computed for an item erased meanwhile is never written."""


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

    def abandon_runs(self, trigger: str, at: float, error: str) -> int:
        """Close every ``running`` run of ``trigger`` as ``abandoned`` at ``at``, ``error`` added to
        its errors (its holder died: its lease expired unfinished); returns how many."""

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

    # compaction notes (issue 13): the background worker's queue, one note per conversation
    def note_compaction(self, conversation_id: str, namespace: str, pressure: int, at: float) -> bool:
        """Leave a note (or update the pressure of the one there, keeping its generation); True if new."""

    def compaction_note(self, conversation_id: str) -> "CompactionNote | None":
        """The conversation's note, or None."""

    def compaction_notes(self, *, due_at: float | None = None, limit: int | None = None) -> "list[CompactionNote]":
        """Notes oldest first; with ``due_at``, only those whose ``not_before`` has passed."""

    def renote_compaction(self, conversation_id: str, *, attempts: int, not_before: float,
                          error: str | None) -> int | None:
        """Give the note a new generation (and backoff state) after an attempt left it standing;
        returns the new generation (None when there is no note)."""

    def drop_compaction_note(self, conversation_id: str, generation: int) -> bool:
        """Delete the note if it is still of ``generation``; True if deleted."""

    def conversations_without_note(self) -> "list[str]":
        """Ids of every conversation that has no compaction note (the scanner measures them)."""

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

    def exists(self, kind: str, item_id: int) -> bool:
        """True when a ``turn``, ``record`` or ``protected`` row with this id exists (erased or not)."""

    def conversation_exists(self, conversation_id: str) -> bool:
        """True when the conversation exists (reads conversations)."""

    def namespace_ids(self, namespace: str) -> "tuple[list[int], list[int], list[int]]":
        """Ids of the turns, memory records and protected records in ``namespace`` (spans families)."""

    def conversation_ids(self, conversation_id: str) -> "tuple[list[int], list[int]]":
        """Ids of the conversation's own turns and conversation-scoped protected records (spans families)."""

    def citing_ids(self, turn_ids: Iterable[int]) -> "tuple[set[int], set[int]]":
        """Ids of memory records and protected records whose provenance cites one of ``turn_ids``."""

    def citing_sources(self, sources: Iterable[str]) -> "tuple[set[int], set[int]]":
        """Ids of memory records and protected records whose provenance cites one of ``sources``
        (``"turn:<id>"``, ``"record:<id>"``), erased or not (issue 15)."""

    def has_cards(self) -> bool:
        """True when the file has the window's summary cards (their cover lists)."""

    def live_ids(self, kind: str, ids: Iterable[int]) -> "list[int]":
        """The ``turn``, ``record`` or ``protected`` ids among ``ids`` not erased yet, sorted."""

    def live_card_ids(self, card_ids: Iterable[int]) -> "list[int]":
        """The card ids among ``card_ids`` not erased yet, in the order given."""

    def secure_delete(self) -> None:
        """Zero freed pages from now on (outside a transaction; inside one it is left as is)."""

    def blank_turns(self, turn_ids: Iterable[int]) -> None:
        """Blank archived turns (erased 0 -> 1); their full-text entries and vectors go too."""

    def blank_records(self, record_ids: Iterable[int]) -> None:
        """Blank memory records (status ``erased``: content, metadata and slot key); their
        full-text entries and vectors go too."""

    def blank_protected(self, protected_ids: Iterable[int], *, changed_at: float) -> None:
        """Blank protected records (state ``erased`` at ``changed_at``)."""

    def blank_cards(self, card_ids: Iterable[int]) -> None:
        """Blank summary cards (erased 0 -> 1, no tokens); their full-text entries and vectors go too,
        and so do the mechanical index of a fold whose result the card is and its strategy frame's
        brief and report (issue 14)."""

    def scrub_events(self, *, subjects: Iterable[str], record_ids: Iterable[int], texts: Iterable[str]) -> int:
        """Blank details and cause of the events about erased items (by subject or record id) or
        naming one of ``texts``; time, kind and subject stay (issue 15). Returns how many."""

    def scrub_replaced_texts(self, protected_ids: Iterable[int]) -> int:
        """Drop erased protected records' texts from the ``replaces_text`` of the records that
        replaced them (issue 15). Returns how many records were rewritten."""

    def fts_integrity(self) -> "list[str]":
        """The full-text indexes that fail their own integrity check (empty when all pass)."""

    def vacuum(self, *, wait_seconds: float = 10.0) -> None:
        """Make erased bytes leave the storage (indexes merged, log truncated, file rewritten); not
        inside a transaction. Waits up to ``wait_seconds`` for other connections' readers.
        :raises ErasureIncomplete: when another connection still holds the log open after that."""


# --- folds: model-chosen folds, strategy frames, their counters (window/folds.py, issue 14) -------
class FoldStorage(Protocol):
    """The ``folds`` a host made (closed units, strategy branches, subagent receipts; each points
    at the card that stands for its range), the ``strategy_frames`` stack of each conversation
    (with its report slot), and per-conversation counters (folds proposed/accepted/refused, reads
    back). A fold row is written in the same transaction as its card and the catalog splice."""

    def insert_fold(self, *, conversation_id: str, kind: str, card_id: int | None, first_seq: int, last_seq: int,
                    made_after_seq: int, index: dict[str, Any], created_at: float) -> int:
        """Record one fold (call inside the transaction that writes its card and splice); returns its id."""

    def folds(self, conversation_id: str) -> "list[FoldRow]":
        """The conversation's folds, oldest first."""

    def fold_of_card(self, card_id: int) -> "FoldRow | None":
        """The fold whose result is card ``card_id``, or ``None`` (a pressure card, or no such card)."""

    def open_frame(self, *, conversation_id: str, parent_frame: int | None, name: str, brief: str, start_seq: int,
                   opened_by: str, opened_at: float) -> int:
        """Push an ``open`` strategy frame; returns its id."""

    def frames(self, conversation_id: str, *, status: str | None = None) -> "list[FrameRow]":
        """The conversation's frames oldest first, optionally only those of one ``status``."""

    def set_report(self, frame_id: int, text: str) -> None:
        """Replace the frame's report slot with ``text`` and count the report."""

    def close_frame(self, frame_id: int, *, status: str, reason: str | None, fold_id: int | None,
                    closed_at: float | None) -> None:
        """Set the frame's ``status`` (``closing`` or ``closed``), yield reason, fold and close time."""

    def bump(self, conversation_id: str, name: str, by: int = 1) -> int:
        """Add ``by`` to the conversation's counter ``name`` (created at 0); returns the new value."""

    def set_counter(self, conversation_id: str, name: str, value: int) -> None:
        """Set the conversation's counter ``name`` to ``value``."""

    def counters(self, conversation_id: str | None = None) -> "dict[str, int]":
        """The conversation's counters by name (summed over every conversation when ``None``)."""

    def unfolded_totals(self, conversation_id: str) -> "tuple[int, int]":
        """``(tool-result turns, tokens of the non-system turns)`` among the catalog items after
        the last card item, from aggregates (the per-append check whether a fold card is due)."""

    def unfolded_tail(self, conversation_id: str) -> "list[CatalogItem]":
        """The catalog items after the conversation's last card item, oldest first (every item
        when it has no card): the work since the last fold (reads ``catalog_items``)."""


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

    def state_version(self) -> "tuple[int, int]":
        """A value that changes whenever anything is committed to the storage, by this
        connection or another (a cache key: equal values mean nothing changed in between)."""

    def only_own_commits(self, before: "tuple[int, int]", after: "tuple[int, int]") -> bool:
        """True when every commit between two :meth:`state_version` values taken inside one
        :meth:`Storage.writers_held` block was made by this connection (so by the caller); False
        when another connection may have committed (when the backend cannot tell: unless the two
        are equal)."""

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

    def set_read_only(self) -> None:
        """From now on this handle refuses every write with :class:`~memfold.StorageError` (reads
        go on); for viewers that must never change the file (issue 19). Cannot be undone."""

    def read_only(self) -> bool:
        """True after :meth:`set_read_only`."""


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
    folds: FoldStorage

    def transaction(self, scope: Sequence[str] | None = None) -> ContextManager[None]:
        """One atomic write (nested calls join the outer one); rolls back on any exception.

        :param scope: what the transaction writes, nested calls included (:func:`write_scope`);
            ``None``: anything (the whole database is locked). A nested call without a scope
            joins the outer one's; a nested scope adds its locks.
        """

    def optional_transaction(self) -> ContextManager[None]:
        """A :meth:`transaction` a reader can go without (a search's vector cache, issue 20 point
        3): SQLite waits only briefly for another connection's write lock, then raises
        :class:`~memfold.memory.errors.WriteLockBusy` with nothing written, so the reader goes on
        without the write instead of waiting the whole busy timeout."""

    def snapshot(self) -> ContextManager[None]:
        """One consistent read of committed state (a read transaction), taking no write lock."""

    def writers_held(self) -> ContextManager[None]:
        """A block in which no other thread of this process writes through this storage (SQLite:
        the connection's lock, held; PostgreSQL: nothing, as each thread has its own connection).
        With :meth:`MetaStorage.only_own_commits` it tells a compile's own writes from anyone
        else's (the compiled-context cache). Keep it short: other threads wait."""

    def settled(self) -> ContextManager[None]:
        """A read that sees every write handed an id before it began, committed: what a reader
        that moves a cursor over ids (the search's in-memory document statistics, the embedding
        scan) needs, so an id below its cursor never commits after it read past it. SQLite has one
        writer, whose ids commit in order: a :meth:`snapshot`. PostgreSQL's writers of different
        conversations commit side by side, so ids may commit out of order: it waits for the
        writers in flight and holds off new ones for the block (keep it short)."""

    @property
    def in_transaction(self) -> bool:
        """True while the calling thread is inside a :meth:`transaction` (or :meth:`snapshot`) of
        this storage; another thread's open transaction does not count."""

    def close(self) -> None:
        """Release the connection(s)."""


def write_scope(*, conversations: Iterable[str] = (), records: Iterable[str] = (), protected: Iterable[str] = (),
                leases: Iterable[str] = ()) -> tuple[str, ...]:
    """The scope of a write transaction (``Storage.transaction(scope=...)``), as sorted lock names.

    :param conversations: conversations whose own state it writes: turns (seq, idempotency
        keys), catalog, cards, folds and frames, compaction note, reported usage, summarizer
        failures (and the events logging them).
    :param records: namespaces whose memory records it writes (supersession, eviction,
        consolidation of the namespace).
    :param protected: namespaces whose protected records it writes (any conversation of the
        namespace, or namespace-wide).
    :param leases: lease names it takes, renews or releases.
    :returns: a tuple of ``"kind:name"`` strings; PostgreSQL takes one lock per name.
    """
    names = {f"conversation:{c}" for c in conversations} | {f"records:{n}" for n in records}
    names |= {f"protected:{n}" for n in protected} | {f"lease:{n}" for n in leases}
    return tuple(sorted(names))
