"""The dataclasses the storage Protocols return (and engines pass back in).

They live here, at the bottom layer, so every backend can build them without importing the
engines above; each concept module re-exports its own (``window/archive.py`` re-exports
:class:`Turn`, ``memory/events.py`` :class:`Event`, ...), so users keep importing them from there.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from dataclasses import dataclass, field
from typing import Any


# --- events ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Event:
    """One row of the audit log. ``at`` is a time value in the clock's unit."""

    id: int
    at: float
    kind: str
    namespace: str | None
    subject: str
    record_id: int | None
    cause: str
    details: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dict(self.__dict__)


# --- archive (turns, conversations) ------------------------------------------------------------
@dataclass(frozen=True)
class Turn:
    """One archived message. ``seq`` is its 1-based position in its conversation's lineage;
    ``created_at`` is a time value (clock units); ``tokens`` is counted by the injected counter."""

    id: int
    conversation_id: str
    family_id: str
    seq: int
    role: str
    content: str
    name: str | None = None
    tool_call_id: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: float = 0.0
    tokens: int = 0
    sha256: str = ""
    labels: tuple[str, ...] = ()
    erased: bool = False

    def message(self) -> dict[str, Any]:
        """The turn in the OpenAI chat-messages shape (role, content, name, tool_calls, tool_call_id)."""
        msg: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.name is not None:
            msg["name"] = self.name
        if self.tool_calls is not None:
            msg["tool_calls"] = self.tool_calls
        if self.tool_call_id is not None:
            msg["tool_call_id"] = self.tool_call_id
        return msg

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        d = dict(self.__dict__)
        d["labels"] = list(self.labels)
        return d


@dataclass(frozen=True)
class AppendPoint:
    """What an append reads of its conversation inside its write transaction, in one statement
    (issue 18, point 4): the row, the newest own seq (``None``: no own turn yet), the seq the
    catalog covers (0: none), how many strategy frames are closing, whether a compaction note
    waits, and the version of the
    turns (``None`` when the backend keeps none): while it holds, no turn was changed and no
    other connection committed since it was read, so what the process knows of the newest turns
    (those it appended) is still what they say."""

    row: "ConversationRow"
    max_seq: int | None
    catalog_last_seq: int = 0
    closing_frames: int = 0
    version: object | None = None
    #: whether a compaction note waits for the worker (``None``: not read)
    note_waiting: bool | None = None


@dataclass(frozen=True)
class ConversationRow:
    """One stored conversation: its namespace, family and fork point (``parent_id`` and the last
    parent seq it inherits, ``fork_after_seq``; both ``None`` for a family's root)."""

    id: str
    namespace: str
    family_id: str
    parent_id: str | None
    fork_after_seq: int | None
    created_at: float
    labels: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (``labels`` as a list)."""
        d = dict(self.__dict__)
        d["labels"] = list(self.labels)
        return d


@dataclass(frozen=True)
class SummarizerFailure:
    """One recorded summarizer failure: the seq range it could not fold stayed in the window."""

    id: int
    conversation_id: str
    at: float
    summarizer: str
    depth: int
    first_seq: int
    last_seq: int
    source_tokens: int
    error: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dict(self.__dict__)



# --- cards and catalog -------------------------------------------------------------------------
def card_header(card_id: int) -> str:
    """``[c<id>]``: the tag before a card's text in a compiled context."""
    return f"[c{card_id}]"


@dataclass(frozen=True)
class Card:
    """One summary card. ``tokens`` counts ``text``; ``source_tokens`` counts what it covers
    (turn tokens for depth 1, child card text tokens deeper). ``covers`` lists child refs in order
    (``"t12"`` turns or ``"c3"`` cards). ``first_seq``/``last_seq`` give the span in the
    conversation's lineage; ``start_at``/``end_at`` the time range (clock units)."""

    id: int
    family_id: str
    conversation_id: str
    depth: int
    text: str
    tokens: int
    source_tokens: int
    first_turn_id: int
    last_turn_id: int
    first_seq: int
    last_seq: int
    start_at: float
    end_at: float
    labels: tuple[str, ...]
    summarizer: str
    created_at: float
    stale: bool = False
    covers: tuple[str, ...] = ()

    @property
    def ref(self) -> str:
        """``"c<id>"``."""
        return f"c{self.id}"

    def header(self) -> str:
        """The short tag shown before the card's text in a compiled context: ``[c12]`` (its span
        and time range are one ``describe`` away; the tag stays one word for small budgets)."""
        return card_header(self.id)

    def render(self) -> str:
        """The card as the compiled context shows it: header, then text."""
        return f"{self.header()} {self.text}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (``ref`` included)."""
        d = dict(self.__dict__)
        d["labels"] = list(self.labels)
        d["covers"] = list(self.covers)
        d["ref"] = self.ref
        return d


@dataclass(frozen=True)
class CatalogItem:
    """One context item: ``kind`` is ``"turn"`` or ``"card"``; ``item_id`` the turn or card id;
    ``first_seq``..``last_seq`` its span; ``depth`` 0 for a turn; ``tokens`` the turn's tokens or
    the rendered card's tokens; ``role`` and ``has_tool_calls`` (turns) keep tool groups whole."""

    kind: str
    item_id: int
    first_seq: int
    last_seq: int
    depth: int
    tokens: int
    role: str | None = None
    has_tool_calls: bool = False

    @property
    def ref(self) -> str:
        """``"t<id>"`` or ``"c<id>"``."""
        return ("t" if self.kind == "turn" else "c") + str(self.item_id)

    def to_dict(self) -> dict:
        """A JSON-ready dict (with ``ref``)."""
        return {**self.__dict__, "ref": self.ref}



# --- records -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class MemoryRecord:
    """One typed memory record as stored (re-exported by :mod:`memfold.memory.records`).

    Times (``created_at``, ``written_at``, ``event_time``, ``last_access_at``) are time values in the
    clock's unit (ticks or POSIX seconds). ``written_at`` is the last write (a restatement refreshes
    it); score age counts from it. ``provenance`` lists source ids such as ``"turn:12"`` or
    ``"record:3"``.
    """

    id: int
    namespace: str
    type: str
    key: str | None
    content: str
    importance: float
    created_at: float
    written_at: float
    event_time: float | None
    last_access_at: float | None
    access_count: int
    status: str
    supersedes: int | None
    superseded_by: int | None
    pinned: bool
    provenance: tuple[str, ...] = field(default_factory=tuple)
    labels: tuple[str, ...] = field(default_factory=tuple)
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        d = asdict(self)
        d["provenance"] = list(self.provenance)
        d["labels"] = list(self.labels)
        return d


@dataclass(frozen=True)
class StoredPolicy:
    """The stored policy row of one ``(namespace, type)`` store, as written (not validated again;
    :class:`memfold.memory.forgetting.StorePolicy` is the policy object built from it).
    ``None`` means the default for that setting."""

    capacity: int | None
    half_life: float | None
    access_weight: float | None


#: one active record as the scorer needs it: ``(id, importance, written_at, access_count, pinned)``
ScoreRow = tuple[int, float, float, int, int]



# --- protected channel -------------------------------------------------------------------------
@dataclass(frozen=True)
class ProtectedRecord:
    """One protected row.

    ``due_at``, ``created_at`` and ``changed_at`` are time values in clock units (ticks or POSIX
    seconds). ``provenance`` lists source ids such as ``"turn:12"``. ``conversation_id`` is None
    for a namespace-wide record. ``source`` is ``manual``, ``rules`` (the deterministic extractor)
    or ``llm:<model>``.
    """

    id: int
    namespace: str
    conversation_id: str | None
    kind: str
    text: str
    state: str
    due_at: float | None
    provenance: tuple[str, ...]
    labels: tuple[str, ...]
    source: str
    created_at: float
    changed_at: float
    supersedes: int | None
    superseded_by: int | None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def scope(self) -> str:
        """``"conversation"`` or ``"namespace"``."""
        return "namespace" if self.conversation_id is None else "conversation"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (plus ``scope``)."""
        d = dict(self.__dict__)
        d["provenance"] = list(self.provenance)
        d["labels"] = list(self.labels)
        d["scope"] = self.scope
        return d



# --- search (full-text and vectors) ------------------------------------------------------------
@dataclass(frozen=True)
class SearchScope:
    """What a search may see, applied by storage *before* ranking (DESIGN.md §4.9).

    :ivar lineage: ``[(conversation_id, last_seq_included_or_None), ...]``: only turns (and cards,
        by their ``last_seq``) these conversations see; ``None`` for no conversation filter.
    :ivar namespace: only this namespace (records; turns and cards via their conversation).
    :ivar type: / :ivar key: only records of this type / slot.
    :ivar since: / :ivar until: inclusive time range (turn ``created_at``, record ``written_at``,
        card ``end_at``).
    :ivar reader_labels: the labels the reader holds (sorted), or ``None`` to skip the label check.
    """

    lineage: tuple[tuple[str, int | None], ...] | None = None
    namespace: str | None = None
    type: str | None = None
    key: str | None = None
    since: float | None = None
    until: float | None = None
    reader_labels: tuple[str, ...] | None = None


@dataclass(frozen=True)
class SearchItem:
    """A searchable item as storage returns it (the ranking adds its scores on top).

    :ivar kind: ``"turn"``, ``"card"`` or ``"record"``.
    :ivar time: turn ``created_at``, record ``written_at``, card ``end_at`` (clock units).
    """

    kind: str
    id: Any
    text: str
    conversation_id: str | None = None
    namespace: str | None = None
    type: str | None = None
    key: str | None = None
    time: float | None = None
    labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class TextMatch:
    """One full-text match of a turn or card: its BM25 ``score`` (lower is better, as FTS5 ranks;
    ``None`` when not ranked), a ``snippet`` with matches in ``[...]`` (``None`` when the item does
    not match), its seq span, card depth (0 for a turn), the turn's role and the item's labels."""

    kind: str
    id: int
    score: float | None
    snippet: str | None
    first_seq: int
    last_seq: int
    depth: int
    role: str | None
    labels: tuple[str, ...] = ()



# --- runs and leases ---------------------------------------------------------------------------
@dataclass
class ConsolidationRun:
    """What one consolidation pass did (or, for a dry run, would do).

    Times are clock time values. ``id`` is None for a dry run (nothing is recorded).
    ``status``: ``running`` (in progress, or the process died), ``ok``, ``failed`` (an extractor
    or write error stopped it; ``errors`` says why), ``stopped`` (asked to stop between batches).
    ``proposals`` lists what was (or would be) written, in order; ``written`` the record ids the
    write path returned; ``consumed`` the sources marked consumed. A run read back from storage
    has the three lists empty (they are not stored).
    """

    id: int | None
    namespace: str
    extractor: str
    trigger: str = "manual"
    status: str = "running"
    started_at: float = 0.0
    finished_at: float | None = None
    batches: int = 0
    episodes_consumed: int = 0
    turns_consumed: int = 0
    facts_written: int = 0
    rules_written: int = 0
    errors: list[str] = field(default_factory=list)
    dry_run: bool = False
    proposals: list[Any] = field(default_factory=list)
    written: list[int] = field(default_factory=list)
    consumed: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        d = dict(self.__dict__)
        d["proposals"] = [p.to_dict() if hasattr(p, "to_dict") else p for p in self.proposals]
        return d


@dataclass(frozen=True)
class PendingEpisode:
    """An active episodic record waiting for consolidation (``metadata`` parsed)."""

    id: int
    content: str
    metadata: dict[str, Any]
    event_time: float | None
    created_at: float


@dataclass(frozen=True)
class PendingTurn:
    """An archived turn past a namespace's consolidation cursor (``labels``/``metadata`` parsed)."""

    id: int
    role: str
    content: str
    created_at: float
    labels: list[str]
    metadata: dict[str, Any]


@dataclass(frozen=True)
class LeaseRow:
    """One lease as stored; times in POSIX seconds."""

    name: str
    fire_time: float
    holder: str
    acquired_at: float
    expires_at: float
    finished_at: float | None
    outcome: str | None



@dataclass(frozen=True)
class CompactionNote:
    """One compaction note (issue 13): a conversation past the soft watermark, waiting for the
    worker. ``generation`` is never reused (the fire time of the note's lease; a note left
    standing gets a new one); ``noted_at`` is from the window's clock, ``not_before`` in POSIX
    seconds."""

    generation: int
    conversation_id: str
    namespace: str
    pressure: int
    noted_at: float
    attempts: int
    not_before: float
    last_error: str | None


# --- folds (issue 14) ---------------------------------------------------------------------------
@dataclass(frozen=True)
class FoldRow:
    """One fold the host made (issue 14): a closed unit the model chose (``kind="unit"``), a
    strategy frame folded to its report (``"strategy"``) or a subagent receipt (``"receipt"``).
    ``card_id`` is the card that stands for the range in the catalog (``None`` when the range
    stayed verbatim); ``first_seq``..``last_seq`` the range (in the conversation whose catalog
    holds it; for a receipt, the child's whole history); ``made_after_seq`` the conversation's
    newest seq when the fold was made (what came later may re-run its tool calls); ``index`` the
    mechanical index (tool calls by name, paths, shell commands) as a dict."""

    id: int
    conversation_id: str
    kind: str
    card_id: int | None
    first_seq: int
    last_seq: int
    made_after_seq: int
    index: dict[str, Any]
    created_at: float


@dataclass(frozen=True)
class FrameRow:
    """One strategy frame (issue 14, point 5): ``name`` and ``brief``, the seq its branch starts
    at, who opened it (``model``, ``user``, ``host``), the report slot (``report``, ``None`` until
    the first report; ``reports`` counts the calls), ``status`` (``open``, ``closing`` = yield asked
    for and waiting for the yield call's result turn, ``closed``), the yield ``reason`` and the
    fold it became (``fold_id``)."""

    id: int
    conversation_id: str
    parent_frame: int | None
    name: str
    brief: str
    start_seq: int
    opened_by: str
    report: str | None
    reports: int
    status: str
    reason: str | None
    fold_id: int | None
    opened_at: float
    closed_at: float | None


# --- erasure -----------------------------------------------------------------------------------


# --- meta --------------------------------------------------------------------------------------
