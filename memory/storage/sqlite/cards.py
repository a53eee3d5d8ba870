"""SQLite: summary cards and their cover lists (implements :class:`memfold.memory.storage.base.CardStorage`)."""

from __future__ import annotations

from .db import SqliteDB


class SqliteCards:
    """summary cards and their cover lists, on one :class:`~memfold.memory.storage.sqlite.db.SqliteDB`."""

    def __init__(self, c: SqliteDB) -> None:
        self.c = c

    # added by wt-runs (replay report reads)
    def count_by_depth(self) -> dict[int, int]:
        """``{depth: cards}`` over every card, by depth."""
        return {d: n for d, n in self.c.all("SELECT depth, COUNT(*) FROM cards GROUP BY depth ORDER BY depth")}

    def all_texts(self) -> list[str]:
        """The text of every card (every conversation)."""
        return [r[0] for r in self.c.all("SELECT text FROM cards")]
