"""Memory records: the typed entries of the working, semantic, episodic and procedural stores.

A record's bytes are never deleted: forgetting changes its ``status`` (DESIGN.md §1, §4.7).
:class:`MemoryRecord` is defined with the other rows storage returns
(:mod:`memfold.memory.storage.rows`) and re-exported here, where users import it.
"""

from __future__ import annotations

from .errors import InvalidInput
from .storage.rows import MemoryRecord

#: the four typed stores (DESIGN.md §1 "memory record")
RECORD_TYPES = ("working", "semantic", "episodic", "procedural")
#: record statuses; only ``active`` records are read, scored and put in context
STATUSES = ("active", "retired", "evicted", "consumed", "erased")


def check_record_type(value: object) -> str:
    """:raises InvalidInput: unless ``value`` is one of :data:`RECORD_TYPES`."""
    if value not in RECORD_TYPES:
        raise InvalidInput(f"unknown record type {value!r}: use one of {', '.join(RECORD_TYPES)}")
    return value  # type: ignore[return-value]


def check_status(value: object) -> str:
    """:raises InvalidInput: unless ``value`` is one of :data:`STATUSES`."""
    if value not in STATUSES:
        raise InvalidInput(f"unknown status {value!r}: use one of {', '.join(STATUSES)}")
    return value  # type: ignore[return-value]


__all__ = ["MemoryRecord", "RECORD_TYPES", "STATUSES", "check_record_type", "check_status"]
