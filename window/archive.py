"""The lossless archive: every turn ever appended, verbatim, immutable, hashed (DESIGN.md §4.1).

Invariant kept here: a turn is written once, byte for byte, with the sha256 of its canonical JSON
(``"sha256:<hex>"``); SQL triggers refuse any later change except erasure, and refuse deletes.
:meth:`Archive.verify` recomputes every hash. Turns belong to a conversation's *family*: a fork
shares its parent's turns up to the fork point by pointer, never by copy (STYLE.md rule 10).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

import sqlite_utils

from ..memory.clock import Clock
from ..memory.errors import ConversationNotFound, InvalidInput, TurnNotFound
from ..memory.storage import write_transaction
from ..memory.tokens import TokenCounter
from ..memory.validation import check_id, check_labels, check_name, check_text

ROLES = ("user", "assistant", "tool", "system")
TURN_COLUMNS = (
    "id, conversation_id, family_id, seq, role, content, name, tool_call_id, tool_calls, metadata, "
    "created_at, tokens, sha256, labels, erased"
)


@dataclass(frozen=True)
class Turn:
    """One archived message. ``seq`` is its 1-based position in its conversation's lineage;
    ``created_at`` is a time value (clock units); ``tokens`` is counted by the injected counter."""

    id: int
    conversation_id: str
    family_id: str
    seq: int
    role: str
    content: str
    name: str | None = None
    tool_call_id: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: float = 0.0
    tokens: int = 0
    sha256: str = ""
    labels: tuple[str, ...] = ()
    erased: bool = False

    @classmethod
    def from_row(cls, row: tuple) -> "Turn":
        """Build from a row selected with :data:`TURN_COLUMNS`."""
        return cls(
            id=row[0], conversation_id=row[1], family_id=row[2], seq=row[3], role=row[4], content=row[5],
            name=row[6], tool_call_id=row[7], tool_calls=json.loads(row[8]) if row[8] else None,
            metadata=json.loads(row[9]), created_at=row[10], tokens=row[11], sha256=row[12],
            labels=tuple(json.loads(row[13])), erased=bool(row[14]),
        )

    def message(self) -> dict[str, Any]:
        """The turn in the OpenAI chat-messages shape (role, content, name, tool_calls, tool_call_id)."""
        msg: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.name is not None:
            msg["name"] = self.name
        if self.tool_calls is not None:
            msg["tool_calls"] = self.tool_calls
        if self.tool_call_id is not None:
            msg["tool_call_id"] = self.tool_call_id
        return msg

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        d = dict(self.__dict__)
        d["labels"] = list(self.labels)
        return d


def canonical_hash(message: Mapping[str, Any]) -> str:
    """``"sha256:<hex>"`` of the canonical JSON (sorted keys, no spaces, UTF-8) of a message's
    role, content, name, tool_call_id and tool_calls."""
    canon = {k: message.get(k) for k in ("role", "content", "name", "tool_call_id", "tool_calls")}
    data = json.dumps(canon, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _check_tool_calls(value: object, where: str) -> list[dict[str, Any]] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        raise InvalidInput(f"{where}tool_calls must be a non-empty list of tool calls, got {value!r}")
    for i, call in enumerate(value):
        if not isinstance(call, dict):
            raise InvalidInput(f"{where}tool_calls[{i}] must be an object, got {call!r}")
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id:
            raise InvalidInput(f"{where}tool_calls[{i}] needs a string 'id'")
        fn = call.get("function")
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn.get("name"):
            raise InvalidInput(f"{where}tool_calls[{i}] needs a 'function' with a 'name'")
    try:
        json.dumps(value)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{where}tool_calls is not JSON-serialisable: {exc}") from None
    return value


def normalize_turn(turn: Mapping[str, Any], clock: Clock, *, where: str = "") -> dict[str, Any]:
    """Validate a turn given as an OpenAI-shaped message (plus optional ``created_at``,
    ``metadata``, ``labels``) and return its normalised fields; writes nothing.

    ``where`` prefixes messages (for example ``"line 3: "``).

    :raises InvalidInput: for an unknown role, non-string content, NUL bytes, lone surrogates, a
        tool turn without ``tool_call_id``, malformed ``tool_calls`` or unknown fields.
    """
    if not isinstance(turn, Mapping):
        raise InvalidInput(f"{where}a turn must be an object with 'role' and 'content', got {type(turn).__name__}")
    allowed = {"role", "content", "name", "tool_call_id", "tool_calls", "created_at", "metadata", "labels"}
    unknown = sorted(set(turn) - allowed)
    if unknown:
        raise InvalidInput(f"{where}unknown turn field(s) {', '.join(unknown)}: allowed are {', '.join(sorted(allowed))}")
    role = turn.get("role")
    if role not in ROLES:
        raise InvalidInput(f"{where}role must be one of {', '.join(ROLES)}, got {role!r}")
    tool_calls = _check_tool_calls(turn.get("tool_calls"), where)
    content = turn.get("content")
    if content is None and tool_calls is not None:
        content = ""
    content = check_text(content, f"{where}content", allow_empty=tool_calls is not None)
    name = turn.get("name")
    if name is not None:
        name = check_name(name, f"{where}name")
    tool_call_id = turn.get("tool_call_id")
    if tool_call_id is not None:
        tool_call_id = check_name(tool_call_id, f"{where}tool_call_id")
    if role == "tool" and tool_call_id is None:
        raise InvalidInput(f"{where}a tool turn needs the tool_call_id of the call it answers")
    metadata = turn.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise InvalidInput(f"{where}metadata must be an object, got {metadata!r}")
    try:
        metadata_json = json.dumps(metadata, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{where}metadata is not JSON-serialisable: {exc}") from None
    created_at = turn.get("created_at")
    try:
        created = None if created_at is None else clock.coerce(created_at)
    except InvalidInput as exc:
        raise type(exc)(f"{where}created_at: {exc}") from None
    message = {"role": role, "content": content, "name": name, "tool_call_id": tool_call_id, "tool_calls": tool_calls}
    return {
        **message,
        "metadata": metadata_json,
        "created_at": created,
        "labels": check_labels(turn.get("labels"), f"{where}labels"),
        "sha256": canonical_hash(message),
    }


def namespace_exists(db: sqlite_utils.Database, namespace: str) -> bool:
    """True when a conversation, a memory record or a protected record belongs to ``namespace``
    (the check behind erasing or consolidating a named namespace)."""
    return any(db.execute(f"SELECT 1 FROM {table} WHERE namespace = ? LIMIT 1", [namespace]).fetchone()
               for table in ("conversations", "records", "protected"))


class Archive:
    """Reads and writes archived turns and conversations.

    :param db: an open, migrated database.
    :param clock: the injected clock (turn times default to ``clock.now()``).
    :param token_counter: counts each turn's tokens once, at append.
    """

    def __init__(self, db: sqlite_utils.Database, clock: Clock, token_counter: TokenCounter) -> None:
        self.db = db
        self.clock = clock
        self.token_counter = token_counter

    # -- conversations -------------------------------------------------------------------
    def conversation_row(self, conversation_id: str) -> dict[str, Any]:
        """The conversation's row. :raises ConversationNotFound: if it does not exist."""
        row = self.db.execute(
            "SELECT id, namespace, family_id, parent_id, fork_after_seq, created_at, labels, metadata "
            "FROM conversations WHERE id = ?",
            [conversation_id],
        ).fetchone()
        if row is None:
            raise ConversationNotFound(f"no conversation {conversation_id!r}: create it first (memfold ingest or MemFold.conversation)")
        keys = ("id", "namespace", "family_id", "parent_id", "fork_after_seq", "created_at", "labels", "metadata")
        out = dict(zip(keys, row))
        out["labels"] = json.loads(out["labels"])
        out["metadata"] = json.loads(out["metadata"])
        return out

    def create_conversation(
        self, conversation_id: str, namespace: str, *, parent_id: str | None = None, labels: Iterable[str] | None = None
    ) -> dict[str, Any]:
        """Create a conversation (or a fork of ``parent_id`` at its current end).

        :raises InvalidInput: for a bad id or namespace, or an id already in use.
        :raises ConversationNotFound: if ``parent_id`` does not exist.
        """
        check_name(conversation_id, "conversation id")
        check_name(namespace, "namespace")
        label_list = check_labels(labels)
        with write_transaction(self.db):
            if self.db.execute("SELECT 1 FROM conversations WHERE id = ?", [conversation_id]).fetchone():
                raise InvalidInput(f"conversation {conversation_id!r} already exists")
            family_id, fork_after = conversation_id, None
            if parent_id is not None:
                parent = self.conversation_row(parent_id)
                family_id = parent["family_id"]
                fork_after = self.last_seq(parent_id)
            self.db.execute(
                "INSERT INTO conversations(id, namespace, family_id, parent_id, fork_after_seq, created_at, labels) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [conversation_id, namespace, family_id, parent_id, fork_after, self.clock.now(), json.dumps(label_list)],
            )
        return self.conversation_row(conversation_id)

    def conversation_ids(self) -> list[str]:
        """Every conversation id, in creation order."""
        return [r[0] for r in self.db.execute("SELECT id FROM conversations ORDER BY rowid")]

    def lineage(self, conversation_id: str) -> list[tuple[str, int | None]]:
        """``[(conversation_id, last_seq_included_or_None), ...]`` from the root to this conversation.

        A fork sees its ancestors' turns up to each fork point, then its own.
        """
        chain: list[tuple[str, int | None]] = []
        limit: int | None = None
        current: str | None = conversation_id
        while current is not None:
            row = self.conversation_row(current)
            chain.append((current, limit))
            limit = row["fork_after_seq"]
            current = row["parent_id"]
        return list(reversed(chain))

    def last_seq(self, conversation_id: str) -> int:
        """The seq of the newest turn in this conversation's lineage (0 when empty)."""
        row = self.conversation_row(conversation_id)
        own = self.db.execute("SELECT MAX(seq) FROM turns WHERE conversation_id = ?", [conversation_id]).fetchone()[0]
        if own is not None:
            return own
        return row["fork_after_seq"] or 0

    # -- turns ---------------------------------------------------------------------------
    def insert_turn(self, conversation_id: str, family_id: str, fields: dict[str, Any], seq: int) -> int:
        """Insert one validated turn; call inside a write transaction. Returns the turn id."""
        tokens = self.token_counter.count(fields["content"]) + (
            self.token_counter.count(json.dumps(fields["tool_calls"])) if fields["tool_calls"] else 0
        )
        created = fields["created_at"] if fields["created_at"] is not None else self.clock.now()
        cur = self.db.execute(
            "INSERT INTO turns(conversation_id, family_id, seq, role, content, name, tool_call_id, tool_calls, "
            "metadata, created_at, tokens, sha256, labels) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                conversation_id, family_id, seq, fields["role"], fields["content"], fields["name"],
                fields["tool_call_id"], json.dumps(fields["tool_calls"]) if fields["tool_calls"] else None,
                fields["metadata"], created, tokens, fields["sha256"], json.dumps(fields["labels"]),
            ],
        )
        return cur.lastrowid

    def append_many(
        self, conversation_id: str, turns: list[Mapping[str, Any]], *, where_prefix: str = "",
        progress: Callable[[int], None] | None = None,
    ) -> list[int]:
        """Validate every turn, then append them all in one transaction.

        :param progress: called with the number of turns written so far, every 100 turns and at the end.

        :returns: the new turn ids, in order.
        :raises InvalidInput: for the first bad turn (nothing is written).
        :raises ConversationNotFound: if the conversation does not exist.
        """
        normalized = [
            normalize_turn(t, self.clock, where=where_prefix.format(i=i + 1) if where_prefix else "")
            for i, t in enumerate(turns)
        ]
        with write_transaction(self.db):
            row = self.conversation_row(conversation_id)
            seq = self.last_seq(conversation_id)
            ids = []
            for fields in normalized:
                seq += 1
                ids.append(self.insert_turn(conversation_id, row["family_id"], fields, seq))
                if progress is not None and len(ids) % 100 == 0:
                    progress(len(ids))
        if progress is not None:
            progress(len(ids))
        return ids

    def get(self, turn_id: int) -> Turn:
        """The turn with ``turn_id``. :raises TurnNotFound: if there is none."""
        check_id(turn_id, "turn id")
        row = self.db.execute(f"SELECT {TURN_COLUMNS} FROM turns WHERE id = ?", [turn_id]).fetchone()
        if row is None:
            raise TurnNotFound(f"no archived turn with id {turn_id}")
        return Turn.from_row(row)

    def get_many(self, turn_ids: Iterable[int]) -> dict[int, Turn]:
        """Turns by id, in batches of 500 (missing ids are simply absent)."""
        ids = list(turn_ids)
        out: dict[int, Turn] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for row in self.db.execute(f"SELECT {TURN_COLUMNS} FROM turns WHERE id IN ({marks})", chunk):
                out[row[0]] = Turn.from_row(row)
        return out

    def history(self, conversation_id: str, *, after_seq: int = 0, limit: int | None = None) -> list[Turn]:
        """Turns of the conversation's lineage in append order (by seq, stable for equal times)."""
        out: list[Turn] = []
        for conv, upto in self.lineage(conversation_id):
            sql = f"SELECT {TURN_COLUMNS} FROM turns WHERE conversation_id = ? AND seq > ?"
            params: list[Any] = [conv, after_seq]
            if upto is not None:
                sql += " AND seq <= ?"
                params.append(upto)
            sql += " ORDER BY seq"
            out.extend(Turn.from_row(r) for r in self.db.execute(sql, params))
        if limit is not None:
            out = out[:limit]
        return out

    def verify(self, conversation_id: str | None = None) -> list[int]:
        """Recompute every turn's sha256; returns the ids whose bytes no longer match (erased turns
        are skipped). An empty list means the archive is intact."""
        sql = f"SELECT {TURN_COLUMNS} FROM turns WHERE erased = 0"
        params: list[Any] = []
        if conversation_id is not None:
            sql += " AND conversation_id = ?"
            params.append(conversation_id)
        bad = []
        for row in self.db.execute(sql, params):
            turn = Turn.from_row(row)
            if canonical_hash(turn.message()) != turn.sha256:
                bad.append(turn.id)
        return bad
