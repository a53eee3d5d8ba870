"""The memfold error tree: every error the library raises derives from :class:`MemfoldError`.

::

    MemfoldError
     ├── InvalidInput (ValueError)        bad input, rejected before anything is written
     │    ├── ClockError                  a naive datetime, a clock moving backwards, a clock-kind mismatch
     │    ├── CapacityExceeded            a store cannot fit a write: every other record is pinned
     │    └── IllegalFold                 a fold, strategy or receipt call the host refuses (issue 14)
     ├── NotFound (KeyError)              an id that does not exist
     │    ├── RecordNotFound
     │    ├── TurnNotFound
     │    ├── CardNotFound
     │    ├── ConversationNotFound
     │    └── ProtectedNotFound
     ├── BudgetError                      what must stay verbatim does not fit the token budget
     ├── PermissionDenied (PermissionError)  the reader lacks a label the item requires
     ├── StorageError                     the database cannot be opened, migrated or written
     │    ├── SchemaTooNew                the file was written by a newer memfold
     │    └── StorageConflict             a write broke a uniqueness rule (e.g. an episode consumed twice)
     │         └── CatalogChanged         a fold lost its race: the catalog changed under the splice
     ├── SummarizerError                  a summarizer failed, timed out or returned unusable text
     ├── ExtractorError                   an extractor failed or returned invalid output
     ├── EmbeddingError                   the embedder is missing, or vectors come from another model
     ├── LLMError                         the LLM endpoint is unreachable, timed out or answered unusably
     └── ConsolidationError               the consolidation pass or its scheduler failed

Messages name the value, the rule it broke and the fix (STYLE.md rule 11; DESIGN.md §5).
"""

from __future__ import annotations


class MemfoldError(Exception):
    """Base class of every error memfold raises."""


class InvalidInput(MemfoldError, ValueError):
    """Bad input: rejected before anything is written."""


class ClockError(InvalidInput):
    """A time value that the configured clock cannot accept (naive datetime, wrong kind, going backwards)."""


class CapacityExceeded(InvalidInput):
    """A write, revert or capacity change would leave a store over capacity with nothing evictable
    (every other active record is pinned): unpin one, retire one, or raise the capacity."""


class IllegalFold(InvalidInput):
    """A ``fold_unit``, strategy or receipt call the host refuses (issue 14): the turns do not
    exist, the range is reversed, nests in an earlier fold, reaches into the unit in progress,
    splits a tool call from its result, crosses an open strategy frame, or would not shrink the
    window. The message says which rule and what range would be legal; nothing is written."""


class NotFound(MemfoldError, KeyError):
    """An id that does not exist."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class RecordNotFound(NotFound):
    """No memory record with that id."""


class TurnNotFound(NotFound):
    """No archived turn with that id."""


class CardNotFound(NotFound):
    """No summary card with that id."""


class ConversationNotFound(NotFound):
    """No conversation with that id."""


class ProtectedNotFound(NotFound):
    """No protected record with that id."""


class BudgetError(MemfoldError):
    """What must stay in the compiled context verbatim does not fit the token budget."""


class PermissionDenied(MemfoldError, PermissionError):
    """The reader lacks a label that the item requires."""


class StorageError(MemfoldError):
    """The database cannot be opened, migrated or written."""


class StorageConflict(StorageError):
    """A write broke a uniqueness rule of the storage (a row that may exist only once already
    does); the transaction it ran in rolls back. Storage backends raise it in place of their
    driver's integrity error, so engines never see a driver exception."""


class CatalogChanged(StorageConflict):
    """A fold's splice found its run no longer in the catalog exactly: a concurrent compaction
    (another worker, a foreground fold) got there first. Nothing changed; the caller re-measures."""


class SchemaTooNew(StorageError):
    """The database file was written by a newer memfold than this one."""


class SummarizerError(MemfoldError):
    """A summarizer failed, timed out, or returned empty or longer text."""


class ExtractorError(MemfoldError):
    """An extractor failed or returned output that does not validate."""


class EmbeddingError(MemfoldError):
    """The embedding model cannot be loaded, or stored vectors come from another model."""


class LLMError(MemfoldError):
    """The OpenAI-compatible endpoint (:mod:`memfold.memory.llm`) could not be reached, timed out,
    or answered with something unusable. The LLM summarizer and extractors turn it into a
    :class:`SummarizerError` or :class:`ExtractorError` naming the part that failed."""


class ConsolidationError(MemfoldError):
    """The consolidation pass or its scheduler failed."""
