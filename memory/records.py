"""Memory records: the typed entries of the working, semantic, episodic and procedural stores.

A record's bytes are never deleted: forgetting changes its ``status`` (DESIGN.md §1, §4.7).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

#: the four typed stores (DESIGN.md §1 "memory record")
RECORD_TYPES = ("working", "semantic", "episodic", "procedural")
#: record statuses; only ``active`` records are read, scored and put in context
STATUSES = ("active", "retired", "evicted", "consumed", "erased")

RECORD_COLUMNS = (
    "id, namespace, type, key, content, importance, created_at, written_at, event_time, last_access_at, "
    "access_count, status, supersedes, superseded_by, pinned, provenance, labels, metadata"
)


@dataclass(frozen=True)
class MemoryRecord:
    """One typed memory record as stored.

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

    @classmethod
    def from_row(cls, row: tuple) -> "MemoryRecord":
        """Build from a row selected with :data:`RECORD_COLUMNS`."""
        return cls(
            id=row[0],
            namespace=row[1],
            type=row[2],
            key=row[3],
            content=row[4],
            importance=row[5],
            created_at=row[6],
            written_at=row[7],
            event_time=row[8],
            last_access_at=row[9],
            access_count=row[10],
            status=row[11],
            supersedes=row[12],
            superseded_by=row[13],
            pinned=bool(row[14]),
            provenance=tuple(json.loads(row[15])),
            labels=tuple(json.loads(row[16])),
            metadata=json.loads(row[17]),
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        d = asdict(self)
        d["provenance"] = list(self.provenance)
        d["labels"] = list(self.labels)
        return d
