"""PostgreSQL: conversations and turns (implements :class:`memfold.memory.storage.base.ArchiveStorage`).

The ``turns`` table is immutable (triggers made by migration 1 refuse any change except erasure,
and refuse deletes); this class only inserts and reads turns. It also holds the per-conversation
state the window keeps beside the archive: the reported prompt usage (``window_state``) and the
summarizer failures (``summarizer_failures``).
"""

from __future__ import annotations

import json

from typing import Any, Iterable, Iterator
from ..rows import AppendPoint, ConversationRow, SummarizerFailure, Turn
from .db import PostgresDB, marks
from ..textsearch import tsvector_literal

#: the ``turns`` columns every turn read selects, in :func:`_turn` order
TURN_COLUMNS = (
    "id, conversation_id, family_id, seq, role, content, name, tool_call_id, tool_calls, metadata, "
    "created_at, tokens, sha256, labels, erased"
)
_CONVERSATION_COLUMNS = "id, namespace, family_id, parent_id, fork_after_seq, created_at, labels, metadata"
_FAILURE_COLUMNS = "id, conversation_id, at, summarizer, depth, first_seq, last_seq, source_tokens, error"
#: ids per ``IN (...)`` list, well under SQLite's parameter limit
_BATCH = 500
#: turns per page when :meth:`SqliteArchive.unerased_turns` walks the archive
_PAGE = 1000


def _turn(row: tuple) -> Turn:
    """A :class:`Turn` from a row selected with :data:`TURN_COLUMNS`."""
    return Turn(
        id=row[0], conversation_id=row[1], family_id=row[2], seq=row[3], role=row[4], content=row[5],
        name=row[6], tool_call_id=row[7], tool_calls=json.loads(row[8]) if row[8] else None,
        metadata=json.loads(row[9]), created_at=row[10], tokens=row[11], sha256=row[12],
        labels=tuple(json.loads(row[13])), erased=bool(row[14]),
    )


class PostgresArchive:
    """conversations and turns, on one :class:`~memfold.memory.storage.postgres.db.PostgresDB`."""

    def __init__(self, c: PostgresDB) -> None:
        self.c = c

    # added by wt-cards
    def turn_labels(self, turn_id: int) -> list[str] | None:
        """The labels of a turn, or ``None`` when there is none (for relabelling)."""
        row = self.c.one("SELECT labels FROM turns WHERE id = %s", [turn_id])
        return None if row is None else json.loads(row[0])

    def set_turn_labels(self, turn_id: int, labels: list[str]) -> None:
        """Replace the labels of a turn (the caller validates them and logs the change)."""
        self.c.run("UPDATE turns SET labels = %s WHERE id = %s", [json.dumps(labels), turn_id])
    # -- conversations -------------------------------------------------------------------
    def conversation(self, conversation_id: str) -> ConversationRow | None:
        """The conversation's row, or ``None`` if there is none."""
        row = self.c.one(f"SELECT {_CONVERSATION_COLUMNS} FROM conversations WHERE id = %s", [conversation_id])
        if row is None:
            return None
        return ConversationRow(id=row[0], namespace=row[1], family_id=row[2], parent_id=row[3],
                               fork_after_seq=row[4], created_at=row[5], labels=tuple(json.loads(row[6])),
                               metadata=json.loads(row[7]))
    def insert_conversation(self, *, conversation_id: str, namespace: str, family_id: str, parent_id: str | None,
                            fork_after_seq: int | None, created_at: float, labels: list[str]) -> None:
        """Insert one conversation. :raises StorageConflict: if the id is taken."""
        self.c.run(
            "INSERT INTO conversations(id, namespace, family_id, parent_id, fork_after_seq, created_at, labels) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s)",
            [conversation_id, namespace, family_id, parent_id, fork_after_seq, created_at, json.dumps(labels)],
        )
    def conversation_ids(self) -> list[str]:
        """Every conversation id, in creation order."""
        return [r[0] for r in self.c.all("SELECT id FROM conversations ORDER BY rid")]
    def namespace_exists(self, namespace: str) -> bool:
        """True when a conversation, a memory record or a protected record belongs to ``namespace``.
        Spans three families (``conversations``, ``records``, ``protected``); it lives here because
        the conversation is the first thing a namespace holds."""
        return any(self.c.one(f"SELECT 1 FROM {table} WHERE namespace = %s LIMIT 1", [namespace])
                   for table in ("conversations", "records", "protected"))
    # -- turns ---------------------------------------------------------------------------
    def max_seq(self, conversation_id: str) -> int | None:
        """The largest seq among the conversation's own turns (``None`` when it has none)."""
        return self.c.value("SELECT MAX(seq) FROM turns WHERE conversation_id = %s", [conversation_id])
    def append_point(self, conversation_id: str) -> AppendPoint | None:
        """The row, newest own seq, catalog cover and closing frames of a conversation (spans
        ``conversations``, ``turns``, ``catalog_items``, ``strategy_frames``); ``None`` when there
        is no such conversation. A few statements here, and no version (``None``: the newest
        turns are read each time); the SQLite backend reads it in one."""
        row = self.conversation(conversation_id)
        if row is None:
            return None
        cover = self.c.value("SELECT last_seq FROM catalog_items WHERE conversation_id = %s "
                             "ORDER BY first_seq DESC LIMIT 1", [conversation_id], default=0)
        closing = self.c.value("SELECT COUNT(*) FROM strategy_frames WHERE conversation_id = %s AND status = 'closing'",
                               [conversation_id], default=0)
        return AppendPoint(row=row, max_seq=self.max_seq(conversation_id), catalog_last_seq=cover,
                           closing_frames=closing)
    def insert_turn(self, *, conversation_id: str, family_id: str, seq: int, role: str, content: str,
                    name: str | None, tool_call_id: str | None, tool_calls: list[dict[str, Any]] | None,
                    metadata: str, created_at: float, tokens: int, sha256: str, labels: list[str],
                    idempotency_key: str | None = None) -> int:
        """Insert one validated turn (``metadata`` is its canonical JSON text); returns its id.
        :raises StorageConflict: if the conversation already has a turn at ``seq``, or one
            appended with ``idempotency_key``."""
        doc_len, tsv = tsvector_literal(content)
        # the turn and its full-text row in one statement (one round trip instead of two)
        cur = self.c.run(
            "WITH t AS (INSERT INTO turns(conversation_id, family_id, seq, role, content, name, tool_call_id, "
            "tool_calls, metadata, created_at, tokens, sha256, labels, idempotency_key) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id) "
            "INSERT INTO turns_fts(id, doc_len, tsv) SELECT id, %s, %s::tsvector FROM t RETURNING id",
            [
                conversation_id, family_id, seq, role, content, name, tool_call_id,
                json.dumps(tool_calls) if tool_calls else None, metadata, created_at, tokens, sha256,
                json.dumps(labels), idempotency_key, doc_len, tsv,
            ],
        )
        return cur.rows[0][0]
    def keyed_turns(self, conversation_id: str, keys: Iterable[str]) -> dict[str, Turn]:
        """The conversation's own turns appended with these idempotency keys, by key (keys no
        turn carries are simply absent), read in batches."""
        wanted = list(keys)
        out: dict[str, Turn] = {}
        for start in range(0, len(wanted), _BATCH):
            chunk = wanted[start:start + _BATCH]
            qs = marks(len(chunk))
            for row in self.c.all(f"SELECT idempotency_key, {TURN_COLUMNS} FROM turns "
                                  f"WHERE conversation_id = %s AND idempotency_key IN ({qs})",
                                  [conversation_id, *chunk]):
                out[row[0]] = _turn(row[1:])
        return out
    def turn(self, turn_id: int) -> Turn | None:
        """The turn with ``turn_id``, or ``None``."""
        row = self.c.one(f"SELECT {TURN_COLUMNS} FROM turns WHERE id = %s", [turn_id])
        return None if row is None else _turn(row)
    def turns(self, turn_ids: Iterable[int]) -> list[Turn]:
        """The turns with these ids (missing ids are simply absent), read in batches."""
        ids = list(turn_ids)
        out: list[Turn] = []
        for start in range(0, len(ids), _BATCH):
            chunk = ids[start:start + _BATCH]
            qs = marks(len(chunk))
            out.extend(_turn(r) for r in self.c.all(f"SELECT {TURN_COLUMNS} FROM turns WHERE id IN ({qs})", chunk))
        return out
    def latest_system_turn(self, conversation_id: str, *, upto_seq: int | None = None) -> Turn | None:
        """The conversation's own newest ``system`` turn with ``seq <= upto_seq`` (no bound when
        ``None``), or ``None`` (the partial index ``turns_system`` of migration 20 answers it)."""
        sql = f"SELECT {TURN_COLUMNS} FROM turns WHERE conversation_id = %s AND role = 'system'"
        params: list[Any] = [conversation_id]
        if upto_seq is not None:
            sql += " AND seq <= %s"
            params.append(upto_seq)
        row = self.c.one(sql + " ORDER BY seq DESC LIMIT 1", params)
        return None if row is None else _turn(row)

    def conversation_turns(self, conversation_id: str, *, after_seq: int = 0, upto_seq: int | None = None) -> list[Turn]:
        """The conversation's own turns with ``after_seq < seq <= upto_seq`` (no upper bound when
        ``None``), by seq. Inherited turns are read from each ancestor separately (see lineage)."""
        sql = f"SELECT {TURN_COLUMNS} FROM turns WHERE conversation_id = %s AND seq > %s"
        params: list[Any] = [conversation_id, after_seq]
        if upto_seq is not None:
            sql += " AND seq <= %s"
            params.append(upto_seq)
        sql += " ORDER BY seq"
        return [_turn(r) for r in self.c.all(sql, params)]
    def recent_messages(self, conversation_id: str, *, limit: int, upto_seq: int | None = None) -> list[tuple[int, str, str]]:
        """The conversation's own newest ``limit`` turns with ``seq <= upto_seq`` (no bound when
        ``None``) as ``(seq, role, content)``, oldest first (one indexed statement, no JSON decoded)."""
        if limit <= 0:
            return []
        sql = "SELECT seq, role, content FROM turns WHERE conversation_id = %s"
        params: list[Any] = [conversation_id]
        if upto_seq is not None:
            sql += " AND seq <= %s"
            params.append(upto_seq)
        rows = self.c.all(sql + " ORDER BY seq DESC LIMIT %s", [*params, limit])
        return [(r[0], r[1], r[2]) for r in reversed(rows)]
    def unerased_turns(self, conversation_id: str | None = None) -> Iterator[Turn]:
        """Every turn not erased (of one conversation, or of the whole file), by id, read a page at a time."""
        after = 0
        while True:
            sql = f"SELECT {TURN_COLUMNS} FROM turns WHERE erased = 0 AND id > %s"
            params: list[Any] = [after]
            if conversation_id is not None:
                sql += " AND conversation_id = %s"
                params.append(conversation_id)
            rows = self.c.all(sql + f" ORDER BY id LIMIT {_PAGE}", params)
            yield from (_turn(r) for r in rows)
            if len(rows) < _PAGE:
                return
            after = rows[-1][0]
    # -- per-conversation window state ---------------------------------------------------
    def reported_usage(self, conversation_id: str) -> int | None:
        """The prompt tokens last reported for the conversation (``None`` if none or cleared)."""
        row = self.c.one("SELECT reported_tokens FROM window_state WHERE conversation_id = %s", [conversation_id])
        return row[0] if row else None
    def set_reported_usage(self, conversation_id: str, tokens: int, at: float) -> None:
        """Record (or replace) the prompt tokens the model used on the conversation's last call."""
        self.c.run(
            "INSERT INTO window_state(conversation_id, reported_tokens, reported_at) VALUES (%s, %s, %s) "
            "ON CONFLICT(conversation_id) DO UPDATE SET reported_tokens = excluded.reported_tokens, "
            "reported_at = excluded.reported_at", [conversation_id, tokens, at],
        )
    def last_model_call_at(self, conversation_id: str) -> float | None:
        """When usage was last reported for the conversation (its last model call), or None."""
        row = self.c.one("SELECT reported_at FROM window_state WHERE conversation_id = %s", [conversation_id])
        return row[0] if row else None
    def clear_reported_usage(self, conversation_id: str) -> None:
        """Forget the conversation's reported usage (its row stays, with no tokens)."""
        self.c.run("UPDATE window_state SET reported_tokens = NULL WHERE conversation_id = %s", [conversation_id])
    def add_summarizer_failure(self, *, conversation_id: str, at: float, summarizer: str, depth: int,
                               first_seq: int, last_seq: int, source_tokens: int, error: str) -> SummarizerFailure:
        """Record one summarizer failure; returns it with its new id."""
        cur = self.c.run(
            "INSERT INTO summarizer_failures(conversation_id, at, summarizer, depth, first_seq, last_seq, "
            "source_tokens, error) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            [conversation_id, at, summarizer, depth, first_seq, last_seq, source_tokens, error],
        )
        return SummarizerFailure(cur.rows[0][0], conversation_id, at, summarizer, depth, first_seq, last_seq,
                                 source_tokens, error)
    def summarizer_failures(self, conversation_id: str) -> list[SummarizerFailure]:
        """The conversation's recorded summarizer failures, oldest first."""
        return [SummarizerFailure(*r) for r in self.c.all(
            f"SELECT {_FAILURE_COLUMNS} FROM summarizer_failures WHERE conversation_id = %s ORDER BY id",
            [conversation_id])]
    def summarizer_failure_count(self, conversation_id: str) -> int:
        """How many summarizer failures the conversation has."""
        return self.c.value("SELECT COUNT(*) FROM summarizer_failures WHERE conversation_id = %s", [conversation_id], 0)
    # added by wt-runs (replay report reads)
    def count_turns(self) -> int:
        """How many turns the archive holds (every conversation, erased ones included)."""
        return self.c.value("SELECT COUNT(*) FROM turns", default=0)
    def count_turns_labelled(self, label: str) -> int:
        """How many turns carry ``label``."""
        return self.c.value("SELECT COUNT(*) FROM turns WHERE labels::jsonb ? %s",
                            [label], default=0)
    def total_turn_tokens(self) -> int:
        """The tokens of every archived turn, summed."""
        return self.c.value("SELECT COALESCE(SUM(tokens), 0)::bigint FROM turns", default=0)
    def count_summarizer_failures(self) -> int:
        """How many summarizer failures are recorded (every conversation)."""
        return self.c.value("SELECT COUNT(*) FROM summarizer_failures", default=0)
    def turn_seqs(self, conversation_id: str) -> dict[int, int]:
        """``{turn id: seq}`` of the turns appended to this conversation itself (not its lineage)."""
        return {tid: seq for tid, seq in self.c.all("SELECT id, seq FROM turns WHERE conversation_id = %s",
                                                    [conversation_id])}
