"""Access labels: who may see a turn, a card, a memory record or a protected row (DESIGN.md §1, §4.9).

Invariant kept here: an item is shown to a reader only if the reader holds **every** label the
item requires; a card requires the union of its sources' labels. Every read path (compiled
context, search, describe, expand, read, the protected channel) asks :func:`can_read` and never
decides by itself, so the rule lives in one place.

A reader is a :class:`Reader` (a set of held labels) or ``None``. ``None`` means the trusted
owner of the database (the agent's own process, the CLI without ``--reader``): it sees
everything. Pass a :class:`Reader` whenever the context is compiled for someone who may lack a
label.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..memory.errors import InvalidInput, PermissionDenied
from ..memory.validation import check_labels


#: the label of secrets (PINs, passwords, security answers; issue 9): a turn carrying it stays in
#: the archive for readers holding the label, but never reaches a summarizer (so no card text
#: repeats it) and never reaches the consolidation pass (so no fact holds it).
SECRET_LABEL = "secret"


@dataclass(frozen=True)
class Reader:
    """Someone reading memfold output, holding a set of access labels.

    :param labels: the labels held (deduplicated, sorted).
    :param name: an optional name used in error messages.
    """

    labels: frozenset[str] = frozenset()
    name: str = "reader"

    def __post_init__(self) -> None:
        # Reader("legal") held the string itself: every check then raised TypeError (round 14)
        if not isinstance(self.labels, frozenset):
            if isinstance(self.labels, str):
                raise InvalidInput(f"reader labels must be a list of label names, got the string {self.labels!r}: "
                                   f"use Reader.of([{self.labels!r}])")
            object.__setattr__(self, "labels", frozenset(check_labels(self.labels, "reader labels")))
        if not isinstance(self.name, str) or not self.name.strip():
            raise InvalidInput(f"a reader's name must be a non-empty string (it names the reader in errors), "
                               f"got {self.name!r}")

    @classmethod
    def of(cls, labels: Iterable[str] | None = None, name: str = "reader") -> "Reader":
        """A reader holding ``labels``.

        :raises InvalidInput: for a bad label name, ``labels`` given as one string (``"legal"`` made
            the labels ``a, e, g, l``: round 14), or a ``name`` that is not a non-empty string.
        """
        if isinstance(labels, str):
            raise InvalidInput(f"reader labels must be a list of label names, got the string {labels!r}: "
                               f"use Reader.of([{labels!r}])")
        return cls(frozenset(check_labels(labels, "reader labels")), name)

    def can_read(self, required: Iterable[str]) -> bool:
        """True if this reader holds every label in ``required``."""
        return set(required) <= self.labels


def as_reader(reader: object) -> Reader | None:
    """Normalise a ``reader=`` argument: ``None``, a :class:`Reader`, or an iterable of label names.

    :raises InvalidInput: for anything else (for example a single string, which is ambiguous).
    """
    if reader is None or isinstance(reader, Reader):
        return reader
    if isinstance(reader, str):
        raise InvalidInput(f"reader must be a Reader or a list of labels, got the string {reader!r}: "
                           f"use Reader.of([{reader!r}])")
    if isinstance(reader, (dict, bytes)) or not isinstance(reader, Iterable):
        raise InvalidInput(f"reader must be a Reader or a list of labels, got {reader!r}: "
                           f"use Reader.of([...]) or a list such as ['secret']")
    try:
        return Reader.of(list(reader))  # type: ignore[arg-type]
    except TypeError:
        raise InvalidInput(f"reader must be a Reader or a list of labels, got {reader!r}") from None


def can_read(reader: Reader | None, required: Iterable[str]) -> bool:
    """True if ``reader`` may see an item requiring ``required`` labels (``None`` sees everything)."""
    return reader is None or reader.can_read(required)


def require(reader: Reader | None, required: Iterable[str], what: str) -> None:
    """:raises PermissionDenied: naming ``what`` and the missing labels when ``reader`` may not see it."""
    if reader is None:
        return
    missing = sorted(set(required) - reader.labels)
    if missing:
        raise PermissionDenied(f"{reader.name} may not read {what}: it lacks the label(s) {', '.join(missing)}")


def union_labels(*groups: Iterable[str]) -> list[str]:
    """The sorted union of several label lists (a card requires the union of its sources' labels)."""
    out: set[str] = set()
    for g in groups:
        out.update(g)
    return sorted(out)
