"""The lossless archive: every turn ever appended, verbatim, immutable, hashed (DESIGN.md §4.1).

Invariant kept here: a turn is written once, byte for byte, with the sha256 of its canonical JSON
(``"sha256:<hex>"``); SQL triggers refuse any later change except erasure, and refuse deletes.
:meth:`Archive.verify` recomputes every hash. Turns belong to a conversation's *family*: a fork
shares its parent's turns up to the fork point by pointer, never by copy (STYLE.md rule 10).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from collections.abc import Mapping
from typing import Any, Callable, Iterable, Sequence

from ..memory.clock import Clock
from ..memory.errors import ConversationNotFound, InvalidInput, TurnNotFound
from ..memory.storage import Storage
from ..memory.storage.base import write_scope
from ..memory.storage.rows import AppendPoint, ConversationRow, SummarizerFailure, Turn  # noqa: F401 (re-exported: users import Turn from here)
from ..memory.tokens import TokenCounter
from ..memory.validation import check_count, check_id, check_labels, check_name, check_text
from ..memory.validation import metadata_json as _metadata_json

ROLES = ("user", "assistant", "tool", "system")
#: roles clients send for what memfold stores as ``system`` (the original is kept in ``metadata["role"]``)
CLIENT_SYSTEM_ROLES = ("developer",)
#: the longest append idempotency key, in characters (a UUID is 36, a hash hex digest 64)
MAX_IDEMPOTENCY_KEY = 200


@dataclass(frozen=True)
class AppendOutcome:
    """What one append call did (issue 16): ``turn_ids`` in the order the turns were given, and
    for each whether it was ``replayed``: its idempotency key was already taken in the
    conversation by an earlier call with the same turn, so nothing was written and the id is that
    earlier turn's."""

    turn_ids: tuple[int, ...]
    replayed: tuple[bool, ...]
    #: the seqs of the first and last turn written (0 when none was) and their tokens in all
    #: (issue 13: the watermark check carries its pressure bound over them)
    first_seq: int = 0
    last_seq: int = 0
    tokens: int = 0

    @property
    def written(self) -> tuple[int, ...]:
        """The ids this call archived (those not replayed)."""
        return tuple(i for i, again in zip(self.turn_ids, self.replayed) if not again)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"turn_ids": list(self.turn_ids), "replayed": list(self.replayed)}


def check_idempotency_keys(keys: object, count: int) -> list[str | None]:
    """One idempotency key (or ``None``) per turn, ``count`` of them, none repeated.

    A key is what its caller chose to name one attempt to append one turn (a UUID, a message id):
    1 to :data:`MAX_IDEMPOTENCY_KEY` characters without surrounding whitespace, NUL or surrogates.

    :raises InvalidInput: for a non-list, a wrong length, a bad key or a key given twice.
    """
    if keys is None:
        return [None] * count
    if isinstance(keys, (str, bytes, Mapping)) or not isinstance(keys, Iterable):
        raise InvalidInput(f"idempotency_keys must be a list with one key (or None) per turn, got {keys!r}")
    keys = list(keys)
    if len(keys) != count:
        raise InvalidInput(f"idempotency_keys has {len(keys)} entries for {count} turns: give one key (or None) per turn")
    seen: set[str] = set()
    out: list[str | None] = []
    for i, key in enumerate(keys):
        if key is not None:
            check_name(key, f"idempotency key {i + 1}")
            if len(key) > MAX_IDEMPOTENCY_KEY:
                raise InvalidInput(f"idempotency key {i + 1} has {len(key)} characters: at most "
                                   f"{MAX_IDEMPOTENCY_KEY} are allowed")
            if key in seen:
                raise InvalidInput(f"idempotency key {key!r} is given for two turns of one append: a key names one turn")
            seen.add(key)
        out.append(key)
    return out


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
        if "arguments" in fn and not isinstance(fn["arguments"], str):  # round 15: kept, then every API call failed
            raise InvalidInput(f"{where}tool_calls[{i}].function.arguments must be a JSON string, as chat APIs "
                               f"send and require it, got {type(fn['arguments']).__name__}: pass json.dumps(...) of it")
    try:
        json.dumps(value)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{where}tool_calls is not JSON-serialisable: {exc}") from None
    return value


#: the content-part types that carry text (the others, images and audio, are kept as they are)
_TEXT_PART_TYPES = ("text", "input_text", "output_text")

#: fields OpenAI's chat API puts on messages that carry nothing when null/empty
_NULLABLE_CLIENT_FIELDS = ("refusal", "audio", "function_call", "annotations")


def _client_fields(turn: Mapping[str, Any], where: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """What real OpenAI clients send, made into a plain turn (issue 20, point 5).

    * ``content`` as a list of content parts (``[{"type": "text", "text": ...}, ...]``): the
      turn's text is its text parts joined by newlines, and the parts themselves are kept
      verbatim in ``metadata["content_parts"]`` (nothing is lost: images and other parts too).
    * ``refusal``, ``audio``, ``function_call``, ``annotations`` set to ``null`` (or empty) are
      dropped; a refusal's text is kept in ``metadata["refusal"]`` and is the content of a
      message that has no other content.
    * the ``developer`` role (the system role of OpenAI's newer models) is a system turn, a
      standing instruction like any system message; ``metadata["role"]`` keeps ``"developer"``.

    :returns: the turn without those fields, and the metadata they add.
    :raises InvalidInput: for a content part that is not an object with a ``type``, a text part
        whose ``text`` is not a string, or one of those fields holding something else.
    """
    plain = dict(turn)
    extra: dict[str, Any] = {}
    if plain.get("role") in CLIENT_SYSTEM_ROLES:  # OpenAI's "developer": the system role of newer models
        extra["role"] = plain["role"]
        plain["role"] = "system"
    content = plain.get("content")
    if isinstance(content, list):
        texts = []
        for i, part in enumerate(content):
            if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
                raise InvalidInput(f"{where}content part {i} must be an object with a 'type' "
                                   f"(such as {{'type': 'text', 'text': '...'}}), got {part!r}")
            if part["type"] in _TEXT_PART_TYPES:
                if not isinstance(part.get("text"), str):
                    raise InvalidInput(f"{where}content part {i} is a text part without a 'text' string: {part!r}")
                texts.append(part["text"])
        try:
            json.dumps(content)
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"{where}content parts are not JSON-serialisable: {exc}") from None
        extra["content_parts"] = list(content)
        plain["content"] = "\n".join(texts)
    for field in _NULLABLE_CLIENT_FIELDS:
        if field not in plain:
            continue
        value = plain.pop(field)
        if value is None or value == [] or value == {}:
            continue
        if field == "refusal" and isinstance(value, str):
            extra["refusal"] = value
            if plain.get("content") in (None, "") and not extra.get("content_parts"):
                plain["content"] = value
            continue
        raise InvalidInput(f"{where}{field} is not supported in a turn (got {value!r}): "
                           f"leave it out or null, or keep it in metadata")
    return plain, extra


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
    if "erased" in turn:  # the marker an export writes where a turn was erased (window/transcripts.py)
        raise InvalidInput(f"{where}an erased turn's marker (\"erased\") cannot be imported or appended: its text "
                           f"is gone and a turn is never written erased; remove the line to import the others")
    turn, extra_metadata = _client_fields(turn, where)
    unknown = sorted(set(turn) - allowed)
    if unknown:
        raise InvalidInput(f"{where}unknown turn field(s) {', '.join(unknown)}: allowed are {', '.join(sorted(allowed))}")
    role = turn.get("role")
    if role not in ROLES:
        raise InvalidInput(f"{where}role must be one of {', '.join(ROLES + CLIENT_SYSTEM_ROLES)}, got {role!r}")
    tool_calls = _check_tool_calls(turn.get("tool_calls"), where)
    content = turn.get("content")
    if content is None and tool_calls is not None:
        content = ""
    # an assistant tool call carries no text, a tool may answer with nothing, and a message of
    # content parts may hold no text part (an image only): empty content is their real content.
    # An empty part list, or text parts that are all empty, hold nothing at all: refused like "".
    parts = extra_metadata.get("content_parts")
    if parts is not None and not parts and tool_calls is None and role != "tool":
        raise InvalidInput(f"{where}content is an empty list of content parts: give at least one part "
                           f"(such as {{'type': 'text', 'text': '...'}})")
    other_parts = any(p["type"] not in _TEXT_PART_TYPES for p in parts or ())
    content = check_text(content, f"{where}content",
                         allow_empty=tool_calls is not None or role == "tool" or other_parts)
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
    if extra_metadata:
        clash = sorted(set(extra_metadata) & set(metadata))
        if clash:
            raise InvalidInput(f"{where}metadata key(s) {', '.join(clash)} are reserved for the message's own "
                               f"{', '.join(clash)}: rename them")
        metadata = {**metadata, **extra_metadata}
    # no metadata (most turns): its JSON, without the encoder; otherwise the records' own check
    # (NaN, infinities, lone surrogates and nesting past 64 levels refused before anything is written)
    metadata_json = "{}" if not metadata else _metadata_json(metadata, f"{where}metadata")
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


def namespace_exists(storage: Storage, namespace: str) -> bool:
    """True when a conversation, a memory record or a protected record belongs to ``namespace``
    (the check behind erasing or consolidating a named namespace)."""
    return storage.archive.namespace_exists(namespace)


class Archive:
    """Reads and writes archived turns and conversations.

    :param storage: the opened :class:`~memfold.memory.storage.Storage` (its ``archive`` family).
    :param clock: the injected clock (turn times default to ``clock.now()``).
    :param token_counter: counts each turn's tokens once, at append.
    """

    def __init__(self, storage: Storage, clock: Clock, token_counter: TokenCounter) -> None:
        self.storage = storage
        self.clock = clock
        self.token_counter = token_counter
        #: conversation -> (turns' version, last seq, reach, its newest turns): what the secret
        #: detector reads back before an append, kept from the last one (issue 18, point 4)
        self._recent: dict[str, tuple[object, int, int, tuple[dict[str, Any], ...]]] = {}

    # -- conversations -------------------------------------------------------------------
    def conversation_row(self, conversation_id: str) -> dict[str, Any]:
        """The conversation's row. :raises ConversationNotFound: if it does not exist."""
        row = self.storage.archive.conversation(conversation_id)
        if row is None:
            raise ConversationNotFound(f"no conversation {conversation_id!r}: create it first (memfold ingest or MemFold.conversation)")
        return row.to_dict()

    def create_conversation(
        self, conversation_id: str, namespace: str, *, parent_id: str | None = None, labels: Iterable[str] | None = None,
        fork_after_seq: int | None = None,
    ) -> dict[str, Any]:
        """Create a conversation (or a fork of ``parent_id`` at its current end).

        :param labels: access labels every turn appended to this conversation carries, beside its
            own (a reader lacking one sees none of them); a fork adds its parent's labels.
        :param fork_after_seq: with ``parent_id``, fork after this seq of the parent's lineage
            instead of at its end (``0``: a fork that inherits no turn, a new session of the
            family); the fork sees the parent's turns up to it.
        :raises InvalidInput: for a bad id or namespace, an id already in use, or a fork point
            outside ``0..`` the parent's last seq (or given without ``parent_id``).
        :raises ConversationNotFound: if ``parent_id`` does not exist.
        """
        check_name(conversation_id, "conversation id")
        check_name(namespace, "namespace")
        label_list = check_labels(labels)
        if fork_after_seq is not None and parent_id is None:
            raise InvalidInput("fork_after_seq needs the parent_id of the conversation to fork")
        # a new root conversation locks only itself; a fork reads its parent's end (the whole database)
        scope = write_scope(conversations=[conversation_id]) if parent_id is None else None
        with self.storage.transaction(scope):
            if self.storage.archive.conversation(conversation_id) is not None:
                raise InvalidInput(f"conversation {conversation_id!r} already exists")
            family_id, fork_after = conversation_id, None
            if parent_id is not None:
                parent = self.conversation_row(parent_id)
                family_id = parent["family_id"]
                label_list = sorted(set(label_list) | set(parent["labels"]))  # a fork of a labelled conversation is labelled
                fork_after = self.last_seq(parent_id)
                if fork_after_seq is not None:
                    if (isinstance(fork_after_seq, bool) or not isinstance(fork_after_seq, int)
                            or not 0 <= fork_after_seq <= fork_after):
                        raise InvalidInput(f"fork point {fork_after_seq!r} is outside conversation {parent_id!r}: "
                                           f"give a seq from 0 to its last, {fork_after}")
                    fork_after = fork_after_seq
            self.storage.archive.insert_conversation(
                conversation_id=conversation_id, namespace=namespace, family_id=family_id, parent_id=parent_id,
                fork_after_seq=fork_after, created_at=self.clock.now(), labels=label_list,
            )
        return self.conversation_row(conversation_id)

    def conversation_ids(self) -> list[str]:
        """Every conversation id, in creation order."""
        return self.storage.archive.conversation_ids()

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

    def last_seq(self, conversation_id: str, *, lineage: Sequence[tuple[str, int | None]] | None = None) -> int:
        """The seq of the newest turn in this conversation's lineage (0 when empty).

        :param lineage: the conversation's lineage when the caller holds it (a
            :class:`~memfold.window.parts.ConversationRef`): then no ``conversations`` row is read.
        """
        if lineage is None:
            return self._last_seq(conversation_id, self.conversation_row(conversation_id)["fork_after_seq"])
        return self._last_seq(conversation_id, lineage[-2][1] if len(lineage) > 1 else None)

    def _last_seq(self, conversation_id: str, fork_after_seq: int | None) -> int:
        own = self.storage.archive.max_seq(conversation_id)
        if own is not None:
            return own
        return fork_after_seq or 0

    # -- turns ---------------------------------------------------------------------------
    def turn_tokens(self, fields: Mapping[str, Any]) -> int:
        """A validated turn's tokens, as the token counter counts a turn (its content, its tool
        calls; :meth:`~memfold.memory.tokens.TokenCounter.count_turn`)."""
        return self.token_counter.count_turn(fields["role"], fields["content"], fields["name"], fields["tool_calls"])

    def insert_turn(self, conversation_id: str, family_id: str, fields: dict[str, Any], seq: int,
                    idempotency_key: str | None = None, tokens: int | None = None) -> int:
        """Insert one validated turn; call inside a write transaction. Returns the turn id.
        ``tokens``: :meth:`turn_tokens` when the caller counted them already."""
        return self._insert(conversation_id, family_id, fields, seq, idempotency_key, tokens).id

    def _insert(self, conversation_id: str, family_id: str, fields: dict[str, Any], seq: int,
                idempotency_key: str | None = None, tokens: int | None = None) -> Turn:
        """Insert one validated turn (inside a write transaction) and return it as archived."""
        tokens = self.turn_tokens(fields) if tokens is None else tokens
        created = fields["created_at"] if fields["created_at"] is not None else self.clock.now()
        turn_id = self.storage.archive.insert_turn(
            conversation_id=conversation_id, family_id=family_id, seq=seq, role=fields["role"],
            content=fields["content"], name=fields["name"], tool_call_id=fields["tool_call_id"],
            tool_calls=fields["tool_calls"], metadata=fields["metadata"], created_at=created, tokens=tokens,
            sha256=fields["sha256"], labels=fields["labels"], idempotency_key=idempotency_key,
        )
        return Turn(id=turn_id, conversation_id=conversation_id, family_id=family_id, seq=seq, role=fields["role"],
                    content=fields["content"], name=fields["name"], tool_call_id=fields["tool_call_id"],
                    tool_calls=fields["tool_calls"],
                    metadata={} if fields["metadata"] == "{}" else json.loads(fields["metadata"]), created_at=created,
                    tokens=tokens, sha256=fields["sha256"], labels=tuple(fields["labels"]))

    def append_many(
        self, conversation_id: str, turns: list[Mapping[str, Any]], *, where_prefix: str = "",
        progress: Callable[[int], None] | None = None, idempotency_keys: Iterable[str | None] | None = None,
    ) -> list[int]:
        """Validate every turn, then append them all in one transaction.

        :param progress: called with the number of turns written so far, every 100 turns and at the end.
        :param idempotency_keys: one key (or ``None``) per turn; see :meth:`append_outcome`.

        :returns: the turn ids, in order (a replayed turn's id is the one archived before).
        :raises InvalidInput: for the first bad turn or key (nothing is written).
        :raises ConversationNotFound: if the conversation does not exist.
        """
        return list(self.append_outcome(conversation_id, turns, where_prefix=where_prefix, progress=progress,
                                        idempotency_keys=idempotency_keys).turn_ids)

    def append_outcome(
        self, conversation_id: str, turns: list[Mapping[str, Any]], *, where_prefix: str = "",
        progress: Callable[[int], None] | None = None, idempotency_keys: Iterable[str | None] | None = None,
        on_written: Callable[[list[Turn], int, AppendPoint], None] | None = None,
        label: Callable[[list[Mapping[str, Any]], list[dict[str, Any]]], list[Mapping[str, Any]]] | None = None,
        reach: int = 0, lineage: Sequence[tuple[str, int | None]] | None = None,
    ) -> AppendOutcome:
        """:meth:`append_many`, telling which turns were replayed (issue 16).

        :param on_written: called inside the append's write transaction with the turns written
            (as archived), the lineage's last seq before them and the
            :class:`~memfold.memory.storage.rows.AppendPoint` read, so a caller can write what
            belongs with them in the same transaction (the conversation adds their catalog items:
            one write transaction per append, issue 18, point 4).
        :param label: called inside the transaction, after every turn validated, with the turns
            as given and the newest ``reach`` turns of the lineage before them (``{"role",
            "content"}``, oldest first, read with the conversation's row in one statement):
            returns the turns to write (the secret detector labels some); a turn it returns
            changed is validated again.
        :param lineage: the conversation's lineage when the caller holds it (a fork whose own
            turns are fewer than ``reach`` reads its ancestors' with it).

        A turn given with an idempotency key already taken in this conversation (its own turns,
        not a fork parent's) is not written again: its earlier id is returned and marked
        replayed, so a client that retries an append whose answer it never saw gets the same ids
        and no duplicate. The check and the insert run in one write transaction (``BEGIN
        IMMEDIATE``; on PostgreSQL the conversation's lock), so two processes retrying at once still write the turn once (the loser
        waits for the lock, then finds the key); the unique index of migration 7 backs this up.
        Turns without a key are always written. A key whose turn was erased still replays (the
        erased turn's id): a retry never brings erased content back.

        :raises InvalidInput: for the first bad turn or key, or a key already used in this
            conversation for a turn with other content (role, content, name, tool calls; the
            sha256 differs): nothing is written.
        :raises ConversationNotFound: if the conversation does not exist.
        """
        turns = list(turns)
        normalized = [
            normalize_turn(t, self.clock, where=where_prefix.format(i=i + 1) if where_prefix else "")
            for i, t in enumerate(turns)
        ]
        keys = check_idempotency_keys(idempotency_keys, len(normalized))
        with self.storage.transaction(write_scope(conversations=[conversation_id])):  # seq and keys: this conversation's
            # the one read (issue 18, point 4): existence, family, fork point, labels, last seq,
            # the turns the detector reads back, the catalog's cover and closing frames
            point = self.storage.archive.append_point(conversation_id)
            if point is None:
                raise ConversationNotFound(f"no conversation {conversation_id!r}: create it first "
                                           f"(memfold ingest or MemFold.conversation)")
            row = point.row
            last = point.max_seq if point.max_seq is not None else (row.fork_after_seq or 0)
            read_back: list[dict[str, Any]] | None = None
            if label is not None:
                read_back = self._known_recent(conversation_id, point, last, reach)
                if read_back is None:
                    read_back = self.recent_messages(conversation_id, reach, lineage=lineage)
                for i, (given, labelled) in enumerate(zip(turns, label(list(turns), read_back))):
                    if labelled is not given:
                        normalized[i] = normalize_turn(labelled, self.clock,
                                                       where=where_prefix.format(i=i + 1) if where_prefix else "")
            if row.labels:  # a labelled conversation's turns each carry its labels (and their own)
                for fields in normalized:
                    fields["labels"] = sorted(set(fields["labels"]) | set(row.labels))
            taken = self.storage.archive.keyed_turns(conversation_id, [k for k in keys if k is not None]) \
                if any(keys) else {}
            for key, fields in zip(keys, normalized):
                earlier = taken.get(key) if key is not None else None
                if earlier is not None and not earlier.erased and earlier.sha256 != fields["sha256"]:
                    raise InvalidInput(
                        f"idempotency key {key!r} was already used in conversation {conversation_id!r} for turn "
                        f"t{earlier.id} with other content: a retry must send the same turn, a new turn needs "
                        f"a new key")
            seq = before = last
            first_seq, tokens = seq + 1, 0
            ids: list[int] = []
            replayed: list[bool] = []
            written: list[Turn] = []
            for key, fields in zip(keys, normalized):
                earlier = taken.get(key) if key is not None else None
                if earlier is not None:
                    ids.append(earlier.id)
                    replayed.append(True)
                    continue
                seq += 1
                size = self.turn_tokens(fields)
                tokens += size
                written.append(self._insert(conversation_id, row.family_id, fields, seq, idempotency_key=key,
                                            tokens=size))
                ids.append(written[-1].id)
                replayed.append(False)
                if progress is not None and len(ids) % 100 == 0:
                    progress(len(ids))
            if read_back is not None:  # what the next append's detector reads back, known without a read
                self._keep_recent(conversation_id, point, seq, reach, read_back, written)
            if on_written is not None and written:
                on_written(written, before, point)
        if progress is not None:
            progress(len(ids))
        wrote = seq >= first_seq
        return AppendOutcome(tuple(ids), tuple(replayed), first_seq if wrote else 0, seq if wrote else 0, tokens)

    def _known_recent(self, conversation_id: str, point: AppendPoint, last: int,
                      reach: int) -> list[dict[str, Any]] | None:
        """The newest ``reach`` turns before an append, as this process last appended them, when
        they are still what the archive holds: the turns' version is the one they were kept
        under (no other connection committed, no turn of this one was erased or relabelled, no
        rollback) and the lineage still ends at the seq they end at. ``None``: read them."""
        kept = self._recent.get(conversation_id)
        if kept is None or point.version is None or kept[0] != point.version or kept[1] != last or kept[2] != reach:
            return None
        return list(kept[3])

    def _keep_recent(self, conversation_id: str, point: AppendPoint, seq: int, reach: int,
                     earlier: list[dict[str, Any]], written: list[Turn]) -> None:
        """Keep the newest ``reach`` turns after this append (those before it and those it wrote,
        as archived) under the turns' version, for :meth:`_known_recent`."""
        if point.version is None:
            return
        if len(self._recent) >= 1024:
            self._recent.clear()
        recent = [*earlier, *({"role": t.role, "content": t.content} for t in written)][-reach:]
        self._recent[conversation_id] = (point.version, seq, reach, tuple(recent))

    def get(self, turn_id: int) -> Turn:
        """The turn with ``turn_id``. :raises TurnNotFound: if there is none."""
        check_id(turn_id, "turn id")
        turn = self.storage.archive.turn(turn_id)
        if turn is None:
            raise TurnNotFound(f"no archived turn with id {turn_id}")
        return turn

    def get_many(self, turn_ids: Iterable[int]) -> dict[int, Turn]:
        """Turns by id, read in batches (missing ids are simply absent)."""
        return {turn.id: turn for turn in self.storage.archive.turns(turn_ids)}

    def history(self, conversation_id: str, *, after_seq: int = 0, limit: int | None = None,
                lineage: Sequence[tuple[str, int | None]] | None = None) -> list[Turn]:
        """Turns of the conversation's lineage in append order (by seq, stable for equal times).

        :param lineage: the conversation's lineage when the caller holds it (no ``conversations``
            rows are read then).
        """
        check_count(limit, "history limit", minimum=0, allow_none=True)
        if isinstance(after_seq, bool) or not isinstance(after_seq, int) or after_seq < 0:
            raise InvalidInput(f"after_seq must be a whole number >= 0, got {after_seq!r}")
        out: list[Turn] = []
        for conv, upto in (self.lineage(conversation_id) if lineage is None else lineage):
            out.extend(self.storage.archive.conversation_turns(conv, after_seq=after_seq, upto_seq=upto))
        if limit is not None:
            out = out[:limit]
        return out

    def recent_messages(self, conversation_id: str, limit: int, *,
                        lineage: Sequence[tuple[str, int | None]] | None = None) -> list[dict[str, Any]]:
        """The newest ``limit`` turns of the conversation's lineage as ``{"role", "content"}``,
        oldest first: the turns before an append that the secret detector reads (issue 18, point
        4: one narrow read, no turn decoded). The same turns as :meth:`history` after
        ``last_seq - limit`` (a lineage's seqs run on without gaps); a fork reads its ancestors
        only when its own turns are fewer.

        :param lineage: the conversation's lineage when the caller holds it.
        """
        out: list[tuple[int, str, str]] = []
        for conv, upto in reversed(list(self.lineage(conversation_id) if lineage is None else lineage)):
            if len(out) >= limit:
                break
            out[:0] = self.storage.archive.recent_messages(conv, limit=limit - len(out), upto_seq=upto)
        return [{"role": role, "content": content} for _seq, role, content in out]

    def standing_system_turn(self, conversation_id: str, *,
                             lineage: Sequence[tuple[str, int | None]] | None = None) -> Turn | None:
        """The system turn in force for the conversation: the newest ``system`` turn of its lineage
        (a later one replaces an earlier one, issue 20), or ``None``. One indexed statement per
        conversation of the lineage, newest first, so it costs the same at any history length.

        :param lineage: the conversation's lineage when the caller holds it.
        """
        for conv, upto in reversed(list(self.lineage(conversation_id) if lineage is None else lineage)):
            turn = self.storage.archive.latest_system_turn(conv, upto_seq=upto)
            if turn is not None:
                return turn
        return None

    def verify(self, conversation_id: str | None = None) -> list[int]:
        """Recompute every turn's sha256; returns the ids whose bytes no longer match (erased turns
        are skipped). An empty list means the archive is intact."""
        return [turn.id for turn in self.storage.archive.unerased_turns(conversation_id)
                if canonical_hash(turn.message()) != turn.sha256]

