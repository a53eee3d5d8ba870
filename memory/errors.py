"""The memfold error tree: every error the library raises derives from :class:`MemfoldError`.

::

    MemfoldError
     ├── InvalidInput (ValueError)        bad input, rejected before anything is written
     │    ├── ClockError                  a naive datetime, a clock moving backwards, a clock-kind mismatch
     │    ├── CapacityExceeded            a store cannot fit a write: every other record is pinned
     │    ├── IllegalFold                 a fold, strategy or receipt call the host refuses (issue 14)
     │    ├── DuplicateKey                a key given twice in one JSON object (a JSONL line, an HTTP body)
     │    └── SettingError                an environment switch (MEMFOLD_*) has a value memfold does not know
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
     │    ├── ErasureIncomplete           erased bytes may remain: another connection holds the WAL open
     │    ├── WriteLockBusy               a write a reader can go without met another program's write lock
     │    └── StorageConflict             a write broke a uniqueness rule (e.g. an episode consumed twice)
     │         └── CatalogChanged         a fold lost its race: the catalog changed under the splice
     ├── SummarizerError                  a summarizer failed, timed out or returned unusable text
     │    ├── SummarizerInputTooLarge     the request was larger than the summarizer accepts (split it)
     │    └── NothingToKeep               the items are chatter only: nothing for a card of their own
     ├── ExtractorError                   an extractor failed or returned invalid output
     │    └── ModelFileError              the instruction model's weights file is missing or malformed
     ├── EmbeddingError                   the embedder is missing, or vectors come from another model
     ├── MissingExtra (ImportError)       a setting needs an optional extra that is not installed
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


class SettingError(InvalidInput):
    """An environment switch (``MEMFOLD_INSTRUCTION_MODEL``) has a value memfold does not know: the
    message names the variable, the value and the values it accepts. Raised when a
    :class:`~memfold.MemFold` or an extractor reading the switch is built, before any file is opened."""


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


#: a :class:`StorageError`'s message for a write refused because memfold itself opened the memory
#: read-only (``MemFold(read_only=True)``, as the viewer does): the file may be perfectly writable
OPENED_READ_ONLY = ("the memory was opened read-only (MemFold(..., read_only=True), as `memfold view` opens it): "
                    "nothing was written; to write, open it without read_only (MemFold(path), or a memfold "
                    "command other than view)")


class DuplicateKey(InvalidInput):
    """A key given twice in one JSON object (a JSONL line, an HTTP body: ``loads_unique`` in
    :mod:`memfold.window.transcripts`); its name is :attr:`key`."""

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(f"the key {key!r} is given twice in one object: "
                         "JSON readers disagree on which one counts, so give it once")


class WriteLockBusy(StorageError):
    """Another connection held the write lock past the short wait of a write a reader can go
    without (a search's vector cache, :meth:`Storage.optional_transaction`): nothing was written,
    and the caller goes on without it."""


class StorageConflict(StorageError):
    """A write broke a uniqueness rule of the storage (a row that may exist only once already
    does); the transaction it ran in rolls back. Storage backends raise it in place of their
    driver's integrity error, so engines never see a driver exception."""


class CatalogChanged(StorageConflict):
    """A fold's splice found its run no longer in the catalog exactly: a concurrent compaction
    (another worker, a foreground fold) got there first. Nothing changed; the caller re-measures."""


class SchemaTooNew(StorageError):
    """The database file was written by a newer memfold than this one."""


class ErasureIncomplete(StorageError):
    """An erasure committed, but its bytes could not be made to leave the storage yet: another
    connection (a reader in another process or another ``MemFold`` on the file) holds a read
    transaction open on the write-ahead log past the bounded wait (issue 15, point 7). The
    content is already unreadable through memfold; call ``mf.vacuum()`` again once that reader
    closes, and only then report the erasure as complete."""


class SummarizerError(MemfoldError):
    """A summarizer failed, timed out, or returned empty or longer text."""


class SummarizerInputTooLarge(SummarizerError):
    """The summarizer refused a request as larger than it accepts (issue 13, point 6). The
    compactor then splits the work into smaller chunks instead of retrying the same request.

    :ivar input_tokens: the tokens of the items sent, when known (the compactor fills it in).
    """

    def __init__(self, message: str, *, input_tokens: int | None = None) -> None:
        super().__init__(message)
        self.input_tokens = input_tokens


class NothingToKeep(SummarizerError):
    """A summarizer found nothing worth a card in the items (chatter only). The compactor then
    folds them into the card right before them, whose text stays, so they leave the window
    without costing it a token (they stay in the archive); with no card before them the
    originals stay and the failure is recorded, as for any :class:`SummarizerError`."""


class ExtractorError(MemfoldError):
    """An extractor failed or returned output that does not validate."""


class ModelFileError(ExtractorError):
    """The instruction model's weights file (``window/instruction_model.bin``) is missing or malformed."""


class EmbeddingError(MemfoldError):
    """The embedding model cannot be loaded, or stored vectors come from another model."""


class MissingExtra(MemfoldError, ImportError):
    """A setting needs an optional extra that is not installed (e.g. ``vector_index="ann"`` needs
    ``pip install 'memfold[ann]'``). The message names the setting, the package and the extra;
    it is raised before anything is opened or written."""


class LLMError(MemfoldError):
    """The OpenAI-compatible endpoint (:mod:`memfold.memory.llm`) could not be reached, timed out,
    or answered with something unusable. The LLM summarizer and extractors turn it into a
    :class:`SummarizerError` or :class:`ExtractorError` naming the part that failed.

    :ivar status_code: the HTTP status of a non-2xx answer (``None`` for other failures).
    :ivar body: the start of that answer's body (``""`` otherwise).
    """

    status_code: int | None = None
    body: str = ""


class ConsolidationError(MemfoldError):
    """The consolidation pass or its scheduler failed."""
