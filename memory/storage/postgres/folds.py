"""PostgreSQL: folds, strategy frames and fold counters (implements
:class:`memfold.memory.storage.base.FoldStorage`; tables made by PostgreSQL migration 14).

A ``folds`` row is written inside the transaction of its card and the catalog splice
(:mod:`memfold.window.folds`), so no fold row ever points at a card that is not stored.
"""

from __future__ import annotations

import json
from typing import Any

from ..rows import CatalogItem, FoldRow, FrameRow
from .db import PostgresDB

FOLD_COLUMNS = "id, conversation_id, kind, card_id, first_seq, last_seq, made_after_seq, index_json, created_at"
FRAME_COLUMNS = ("id, conversation_id, parent_frame, name, brief, start_seq, opened_by, report, reports, status, "
                 "reason, fold_id, opened_at, closed_at")


def _fold(r: tuple) -> FoldRow:
    return FoldRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], json.loads(r[7]), r[8])


def _frame(r: tuple) -> FrameRow:
    return FrameRow(*r)


class PostgresFolds:
    """Folds, frames and counters, on one :class:`~memfold.memory.storage.postgres.db.PostgresDB`."""

    def __init__(self, c: PostgresDB) -> None:
        self.c = c

    def insert_fold(self, *, conversation_id: str, kind: str, card_id: int | None, first_seq: int, last_seq: int,
                    made_after_seq: int, index: dict[str, Any], created_at: float) -> int:
        """Record one fold; returns its id."""
        return self.c.run(
            "INSERT INTO folds(conversation_id, kind, card_id, first_seq, last_seq, made_after_seq, index_json, "
            "created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            [conversation_id, kind, card_id, first_seq, last_seq, made_after_seq,
             json.dumps(index, sort_keys=True, ensure_ascii=False), created_at],
        ).rows[0][0]

    def folds(self, conversation_id: str) -> list[FoldRow]:
        """The conversation's folds, oldest first."""
        return [_fold(r) for r in self.c.all(
            f"SELECT {FOLD_COLUMNS} FROM folds WHERE conversation_id = %s ORDER BY id", [conversation_id])]

    def fold_of_card(self, card_id: int) -> FoldRow | None:
        """The fold whose result is card ``card_id``, or ``None``."""
        row = self.c.one(f"SELECT {FOLD_COLUMNS} FROM folds WHERE card_id = %s ORDER BY id LIMIT 1", [card_id])
        return None if row is None else _fold(row)

    def open_frame(self, *, conversation_id: str, parent_frame: int | None, name: str, brief: str, start_seq: int,
                   opened_by: str, opened_at: float) -> int:
        """Push an open frame; returns its id."""
        return self.c.run(
            "INSERT INTO strategy_frames(conversation_id, parent_frame, name, brief, start_seq, opened_by, opened_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
            [conversation_id, parent_frame, name, brief, start_seq, opened_by, opened_at],
        ).rows[0][0]

    def frames(self, conversation_id: str, *, status: str | None = None) -> list[FrameRow]:
        """The conversation's frames oldest first (of one ``status`` when given)."""
        sql = f"SELECT {FRAME_COLUMNS} FROM strategy_frames WHERE conversation_id = %s"
        params: list[Any] = [conversation_id]
        if status is not None:
            sql += " AND status = %s"
            params.append(status)
        return [_frame(r) for r in self.c.all(sql + " ORDER BY id", params)]

    def set_report(self, frame_id: int, text: str) -> None:
        """Replace the report slot and count the report."""
        self.c.run("UPDATE strategy_frames SET report = %s, reports = reports + 1 WHERE id = %s", [text, frame_id])

    def close_frame(self, frame_id: int, *, status: str, reason: str | None, fold_id: int | None,
                    closed_at: float | None) -> None:
        """Set status, reason, fold and close time."""
        self.c.run("UPDATE strategy_frames SET status = %s, reason = %s, fold_id = %s, closed_at = %s WHERE id = %s",
                   [status, reason, fold_id, closed_at, frame_id])

    def bump(self, conversation_id: str, name: str, by: int = 1) -> int:
        """Add ``by`` to a counter; returns the new value."""
        self.c.run(
            "INSERT INTO fold_counters(conversation_id, name, value) VALUES (%s, %s, %s) "
            "ON CONFLICT(conversation_id, name) DO UPDATE SET value = fold_counters.value + excluded.value",
            [conversation_id, name, int(by)],
        )
        return self.c.value("SELECT value FROM fold_counters WHERE conversation_id = %s AND name = %s",
                            [conversation_id, name], default=0)

    def set_counter(self, conversation_id: str, name: str, value: int) -> None:
        """Set a counter."""
        self.c.run(
            "INSERT INTO fold_counters(conversation_id, name, value) VALUES (%s, %s, %s) "
            "ON CONFLICT(conversation_id, name) DO UPDATE SET value = excluded.value",
            [conversation_id, name, int(value)],
        )

    def counters(self, conversation_id: str | None = None) -> dict[str, int]:
        """Counters by name, of one conversation or summed over all."""
        if conversation_id is None:
            rows = self.c.all("SELECT name COLLATE \"C\", SUM(value) FROM fold_counters GROUP BY 1 ORDER BY 1")
        else:
            rows = self.c.all("SELECT name, value FROM fold_counters WHERE conversation_id = %s ORDER BY name COLLATE \"C\"",
                              [conversation_id])
        return {r[0]: int(r[1]) for r in rows}

    def unfolded_totals(self, conversation_id: str) -> tuple[int, int]:
        """Tool-result turns and non-system turn tokens after the last card item."""
        row = self.c.one(
            "SELECT COUNT(*) FILTER (WHERE role = 'tool'), COALESCE(SUM(CASE WHEN role IS DISTINCT FROM 'system' "
            "THEN tokens ELSE 0 END), 0)::bigint FROM catalog_items WHERE conversation_id = %s AND first_seq > COALESCE((SELECT "
            "MAX(last_seq) FROM catalog_items WHERE conversation_id = %s AND kind = 'card'), 0)",
            [conversation_id, conversation_id],
        )
        return int(row[0]), int(row[1])

    def unfolded_tail(self, conversation_id: str) -> list[CatalogItem]:
        """The catalog items after the last card item, oldest first."""
        rows = self.c.all(
            "SELECT kind, item_id, first_seq, last_seq, depth, tokens, role, has_tool_calls FROM catalog_items "
            "WHERE conversation_id = %s AND first_seq > COALESCE((SELECT MAX(last_seq) FROM catalog_items "
            "WHERE conversation_id = %s AND kind = 'card'), 0) ORDER BY first_seq",
            [conversation_id, conversation_id],
        )
        return [CatalogItem(r[0], r[1], r[2], r[3], r[4], r[5], r[6], bool(r[7])) for r in rows]
