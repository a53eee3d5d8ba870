"""SQLite: the per-conversation catalog (implements :class:`memfold.memory.storage.base.CatalogStorage`)."""

from __future__ import annotations

from .db import SqliteDB


class SqliteCatalog:
    """the per-conversation catalog, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c

    # added by wt-runs (replay report reads)
    def card_counts_by_depth(self) -> dict[int, int]:
        """``{depth: card items}`` over every conversation's catalog, by depth."""
        return {d: n for d, n in self.c.all(
            "SELECT depth, COUNT(*) FROM catalog_items WHERE kind = 'card' GROUP BY depth ORDER BY depth")}
