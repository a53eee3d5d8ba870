"""SQLite: typed memory records and store policies (implements :class:`memfold.memory.storage.base.RecordStorage`)."""

from __future__ import annotations

from .db import SqliteDB


class SqliteRecords:
    """typed memory records and store policies, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c

    # added by wt-runs (replay report reads)
    def count_records(self, *, type: str | None = None, status: str | None = None) -> int:
        """How many records (every namespace) have this type and status (None: any)."""
        from .connection import where_equal

        where, params = where_equal(type=type, status=status)
        return self.c.value("SELECT COUNT(*) FROM records" + where, params, default=0)

    def count_superseded(self) -> int:
        """How many records have been superseded (``superseded_by`` set)."""
        return self.c.value("SELECT COUNT(*) FROM records WHERE superseded_by IS NOT NULL", default=0)

    def count_consolidated(self, type: str) -> int:
        """How many records of ``type`` a consolidation run wrote (``metadata.consolidation_run`` set)."""
        return self.c.value("SELECT COUNT(*) FROM records WHERE type = ? "
                            "AND json_extract(metadata, '$.consolidation_run') IS NOT NULL", [type], default=0)

    def contents_of_type(self, type: str) -> list[str]:
        """The content of every record of ``type``, whatever its status or namespace."""
        return [r[0] for r in self.c.all("SELECT content FROM records WHERE type = ?", [type])]
