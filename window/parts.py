"""The window engines' parts, built once by the facade, and the small conversation reference.

DESIGN.md §2, "Parts": the facade builds the injected parts once (storage, clock, token counter,
summarizer, protected channel, memory reader, secret detector, constraint tracker, searcher) and
hands them to the engines (compiled context, compactor, recall tools, tree export) together with
a :class:`ConversationRef`. No engine imports or climbs back to the facade: everything an engine
may use is a field here, so what it depends on is visible in one place and a test can build the
parts without a :class:`~memfold.MemFold`.

Invariant kept here: a :class:`ConversationRef` holds only what never changes once a
conversation exists (its id, namespace, family, parent and lineage: a fork point is fixed when
the fork is made), so one read of the ``conversations`` rows at :meth:`ConversationRef.load`
serves every later call of a long-lived :class:`~memfold.window.conversation.Conversation`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Protocol, Sequence

from ..memory.clock import Clock
from ..memory.storage.base import Storage
from ..memory.tokens import TokenCounter
from .archive import Archive
from .cards import CardStore
from .catalog import Catalog
from .constraints import ConstraintTracker
from .pressure import PressureBounds
from .protected import ProtectedChannel
from .secrets import SecretDetectorLike
from .settings import WindowSettings
from .summarizers.base import Summarizer


class MemoryReader(Protocol):
    """What the compiled context's memories section reads (a :class:`~memfold.MemoryStore` fits):
    the top ``k`` active records of a namespace by score, each with a ``record`` attribute; a read
    counts as an access of every record it returns."""

    def read(self, namespace: str, k: int = 10, **kwargs: Any) -> Sequence[Any]:
        """The top ``k`` scored records of ``namespace``, best first."""


class RecallSearcher(Protocol):
    """What the recall tools' ``search`` ranks with (a :class:`~memfold.HybridSearch` fits): hits
    with ``kind``, ``id``, ``score``, ``text`` and ``labels``, best first."""

    def search(self, query: str, **kwargs: Any) -> Sequence[Any]:
        """Hits for ``query`` (``conversation_id``, ``kinds`` and ``limit`` are passed as keywords)."""


@dataclass(frozen=True)
class ConversationRef:
    """The unchanging facts of one conversation that the engines scope their reads by.

    :ivar id: the conversation's id.
    :ivar namespace: its namespace (tenant/user; never changes).
    :ivar family_id: the family its turns and cards belong to (the root conversation's id).
    :ivar parent_id: the conversation it was forked from, or ``None``.
    :ivar lineage: ``((conversation_id, last_seq_included_or_None), ...)`` from the root to this
        conversation: a fork sees each ancestor's turns up to the fork point, then its own.
    """

    id: str
    namespace: str
    family_id: str
    parent_id: str | None
    lineage: tuple[tuple[str, int | None], ...]
    #: ``((ancestor_id, newest card id it may show), ...)``: an ancestor's cards made after the
    #: fork are never this conversation's (issue 15; :mod:`memfold.window.forks`)
    marks: tuple[tuple[str, int], ...] = field(default=(), compare=False)

    @property
    def card_marks(self) -> dict[str, int]:
        """``{ancestor id: newest card id of it this conversation may show}``."""
        return dict(self.marks)

    @property
    def fork_after_seq(self) -> int | None:
        """The parent's seq this conversation was forked after (``None`` for a root)."""
        return self.lineage[-2][1] if len(self.lineage) > 1 else None

    @classmethod
    def load(cls, archive: Archive, conversation_id: str) -> "ConversationRef":
        """Read the conversation's row and its ancestors' (one statement per conversation in the
        lineage).

        :raises ConversationNotFound: if the conversation does not exist.
        """
        row = archive.conversation_row(conversation_id)
        chain: list[tuple[str, int | None]] = [(conversation_id, None)]
        marks: list[tuple[str, int]] = []
        limit, parent, child = row["fork_after_seq"], row["parent_id"], conversation_id
        while parent is not None:
            parent_row = archive.conversation_row(parent)
            chain.append((parent, limit))
            mark = archive.storage.meta.get(f"fork_card_mark:{child}")  # window/forks.py CARD_MARK_KEY
            if mark is not None:
                marks.append((parent, int(mark)))
            child = parent
            limit, parent = parent_row["fork_after_seq"], parent_row["parent_id"]
        return cls(conversation_id, row["namespace"], row["family_id"], row["parent_id"], tuple(reversed(chain)),
                   tuple(marks))


@dataclass
class WindowParts:
    """The injected parts the window engines use; the facade builds one and shares it.

    The fields a caller may swap at run time (``window``, ``summarizer``, ``secret_detector``,
    ``searcher``, ``constraints``) are read on every call, so a change made through the facade
    (``mf.window = ...``) reaches every conversation it handed out.

    :ivar storage: the opened :class:`~memfold.memory.storage.base.Storage`.
    :ivar clock: the injected clock.
    :ivar token_counter: counts every size the window works with.
    :ivar summarizer: the default summarizer of a compaction pass.
    :ivar window: the default :class:`~memfold.window.settings.WindowSettings`.
    :ivar archive: the turn archive over ``storage``.
    :ivar protected: the protected channel (rendered verbatim in every compiled context).
    :ivar constraints: reads appended user turns for standing instructions, or ``None``.
    :ivar secret_detector: labels appended turns holding secrets, or ``None`` (detection off).
    :ivar memory: the memories section's reader (:class:`MemoryReader`), or ``None`` for none.
    :ivar searcher: the recall tools' ranker (:class:`RecallSearcher`), or ``None`` for plain
        FTS5 BM25 over the conversation's lineage.
    :ivar cards: the card store over ``storage`` (built from it when not given).
    :ivar strategies: the strategies conversations may enter (``None``: the built-ins plus
        ``MEMFOLD_STRATEGY_PATH``; see :mod:`memfold.window.strategies`).
    :ivar context_cache: a :class:`~memfold.window.context_cache.ContextCache`, or ``None``.
    :ivar on_appended: ``on_appended(turns)`` after every append that wrote turns, or ``None``.
    :ivar pressure_bounds: this process's pressure bounds, so an append checks the watermarks
        without measuring the window each time (:mod:`memfold.window.pressure`).
    """

    storage: Storage
    clock: Clock
    token_counter: TokenCounter
    summarizer: Summarizer
    window: WindowSettings
    archive: Archive
    protected: ProtectedChannel
    constraints: ConstraintTracker | None = None
    secret_detector: SecretDetectorLike | None = None
    memory: MemoryReader | None = None
    searcher: RecallSearcher | None = None
    cards: CardStore = field(default=None)  # type: ignore[assignment]
    strategies: Any = None  #: a :class:`~memfold.window.strategies.StrategyBook`, or None for the default (issue 14)
    #: compiled contexts by state version, settings and reader (issue 15), or ``None``: no cache
    context_cache: Any = None
    pressure_bounds: PressureBounds = field(default_factory=PressureBounds)
    #: called with the turns an append wrote, once its transaction committed (the facade starts
    #: embedding them for the next search: issue 18, point 2), or ``None``
    on_appended: Any = None

    def __post_init__(self) -> None:
        if self.cards is None:
            self.cards = CardStore(self.storage, self.clock)

    def catalog(self, ref: ConversationRef) -> Catalog:
        """The catalog of one conversation (no I/O until it is read)."""
        return Catalog(self.storage, self.archive, self.cards, self.token_counter, ref.id, lineage=ref.lineage)

    def turns(self, turn_ids: Iterable[int]) -> dict[int, Any]:
        """Archived turns by id (one batch read; missing ids are absent)."""
        return self.archive.get_many(turn_ids)


__all__ = ["ConversationRef", "MemoryReader", "RecallSearcher", "WindowParts"]
