"""The HTTP API (issue 16, point 2): FastAPI routes over the :class:`~memfold.MemFold` facade.

``memfold serve DB --port N`` runs it with uvicorn on 127.0.0.1; :func:`create_app` builds the
ASGI app for any other server. Every route parses its input, makes one facade call and returns
the facade's own ``to_dict()`` shape: no SQL and no engine internals live here. Turns travel in
the OpenAI chat-message shape (``role``, ``content``, ``name``, ``tool_call_id``,
``tool_calls``), plus memfold's optional ``metadata``, ``labels`` and ``created_at``.

Invariants kept here:

* **A key reads as its reader, only inside its namespaces.** With API keys configured
  (:func:`load_keys`: a JSON file or ``MEMFOLD_API_KEYS``), every request needs one
  (``Authorization: Bearer KEY`` or ``X-API-Key: KEY``), and the key alone decides the reader's
  labels and the namespaces it may touch. A namespace named in a request is checked against the
  key (403); an id that lives in another namespace answers exactly as an id that does not exist
  (404), so a key cannot even learn what other namespaces hold. Nothing a client sends can widen
  its rights: there is no ``user_id`` or reader parameter.
* **No keys, no network.** Without keys every caller is the database owner, so :func:`check_bind`
  refuses any host but a loopback address.
* **Errors keep memfold's tree.** Every error body is ``{"error": message, "type": class}``:
  :class:`~memfold.InvalidInput` 422, :class:`~memfold.NotFound` 404,
  :class:`~memfold.PermissionDenied` 403, :class:`~memfold.BudgetError` 409,
  :class:`~memfold.StorageConflict` 409, any other :class:`~memfold.StorageError` 503, a
  failing LLM (summarizer, extractor, endpoint) 502 (see :data:`STATUS_BY_ERROR`); request
  validation 422, a missing or unknown key 401.
* **One facade call at a time.** Routes are synchronous (run in the server's thread pool) and
  take the service lock around their facade call, so threads never interleave inside one
  connection; SQLite serialises writers anyway, and other processes share the file safely.

The OpenAPI document is committed as ``openapi.json`` at the repository root; a test fails when
it drifts (regenerate: ``python -m memfold.integrations.http openapi.json``).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Coroutine, Iterable, Literal
from urllib.parse import unquote

from fastapi import APIRouter, Depends, FastAPI, Header, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from fastapi.responses import JSONResponse
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field
from starlette.convertors import Convertor, register_url_convertor
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import (
    BudgetError,
    ConsolidationError,
    ConversationNotFound,
    EmbeddingError,
    ExtractorError,
    InvalidInput,
    LLMError,
    MemFold,
    MemfoldError,
    MissingExtra,
    NotFound,
    PermissionDenied,
    ProtectedNotFound,
    Reader,
    RecordNotFound,
    StorageConflict,
    StorageError,
    SummarizerError,
    TurnNotFound,
    __version__,
)
from ..memory.storage.base import write_scope
from ..memory.validation import check_name
from ..window.protected_fit import add_fitting, supersede_fitting
from ..window.transcripts import DuplicateKey, loads_unique

API_PREFIX = "/v1"
#: the environment variable that may hold the API keys (the same JSON as a keys file)
KEYS_ENV = "MEMFOLD_API_KEYS"
#: the shortest API key accepted, in characters (``secrets.token_urlsafe(24)`` gives 32)
MIN_KEY_LENGTH = 16
#: the largest integer SQLite stores (a query bound above it is refused as 422, not sent to SQLite)
MAX_INT = 2**63 - 1
#: HTTP status per memfold error class; the most specific class in an error's MRO wins
STATUS_BY_ERROR: dict[type[MemfoldError], int] = {
    InvalidInput: 422,
    NotFound: 404,
    PermissionDenied: 403,
    BudgetError: 409,
    StorageConflict: 409,
    StorageError: 503,
    EmbeddingError: 503,
    MissingExtra: 503,  # a setting (vector_index='ann') whose package is not installed
    SummarizerError: 502,
    ExtractorError: 502,
    LLMError: 502,
    ConsolidationError: 503,
}


def status_for(exc: MemfoldError) -> int:
    """The HTTP status of a memfold error: the entry of :data:`STATUS_BY_ERROR` for the most
    specific class in its MRO (500 only for a bare :class:`MemfoldError`)."""
    for cls in type(exc).__mro__:
        if cls in STATUS_BY_ERROR:
            return STATUS_BY_ERROR[cls]
    return 500


# -- API keys ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ApiKey:
    """One API key: who holds it, what it may read and where.

    :param name: shown in errors and events (never the key itself).
    :param digest: sha256 hex digest of the key (the key itself is never kept).
    :param namespaces: namespaces the key may touch: exact names, ``"prefix/*"`` (every
        namespace under ``prefix/``) or ``"*"`` (all).
    :param labels: the labels its reader holds; what requires another label stays hidden.
    :param owner: read as the database owner (every label), still only inside ``namespaces``.
    """

    name: str
    digest: str
    namespaces: tuple[str, ...]
    labels: frozenset[str] = frozenset()
    owner: bool = False

    def allows(self, namespace: str) -> bool:
        """True when ``namespace`` is one of the key's namespaces."""
        for pattern in self.namespaces:
            if pattern == "*" or pattern == namespace:
                return True
            if pattern.endswith("/*") and namespace.startswith(pattern[:-1]):
                return True
        return False

    def reader(self) -> Reader | None:
        """The reader this key reads as (``None`` for an owner key: every label)."""
        if self.owner:
            return None
        return Reader.of(sorted(self.labels), name=f"API key {self.name!r}")


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def parse_keys(data: Any, source: str) -> list[ApiKey]:
    """API keys from the decoded JSON of a keys file or of :data:`KEYS_ENV`:
    ``{"keys": [{"name": ..., "key": ... | "sha256": ..., "namespaces": [...], "labels": [...],
    "owner": false}]}`` (or the bare list).

    :raises InvalidInput: naming ``source`` and the entry, for anything malformed, a key shorter
        than :data:`MIN_KEY_LENGTH`, a duplicate key or name, or no key at all.
    """
    entries = data.get("keys") if isinstance(data, dict) and set(data) == {"keys"} else data
    if not isinstance(entries, list) or not entries:
        raise InvalidInput(f"{source}: expected {{\"keys\": [...]}} with at least one key")
    keys: list[ApiKey] = []
    for i, entry in enumerate(entries, start=1):
        where = f"{source}: key {i}"
        if not isinstance(entry, dict):
            raise InvalidInput(f"{where} must be an object with name, key (or sha256) and namespaces")
        unknown = sorted(set(entry) - {"name", "key", "sha256", "namespaces", "labels", "owner"})
        if unknown:
            raise InvalidInput(f"{where} has unknown field(s) {', '.join(unknown)}: allowed are key, labels, "
                               "name, namespaces, owner, sha256")
        name = check_name(entry.get("name"), f"{where} name")
        if ("key" in entry) == ("sha256" in entry):
            raise InvalidInput(f"{where} ({name}) needs exactly one of 'key' (the key) or 'sha256' (its hex digest)")
        if "key" in entry:
            raw = entry["key"]
            if not isinstance(raw, str) or len(raw) < MIN_KEY_LENGTH or raw != raw.strip():
                raise InvalidInput(f"{where} ({name}): a key must be a string of at least {MIN_KEY_LENGTH} "
                                   "characters without surrounding spaces (python -c 'import secrets; "
                                   "print(secrets.token_urlsafe(24))' makes one)")
            digest = _digest(raw)
        else:
            digest = entry["sha256"]
            if not isinstance(digest, str) or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
                raise InvalidInput(f"{where} ({name}): sha256 must be the 64 lowercase hex digits of the key's digest")
        namespaces = entry.get("namespaces")
        if not isinstance(namespaces, list) or not namespaces:
            raise InvalidInput(f"{where} ({name}) needs 'namespaces': a non-empty list of namespaces, "
                               "'prefix/*' or '*'")
        for ns in namespaces:
            check_name(ns, f"{where} ({name}) namespace")
        labels = entry.get("labels", [])
        if not isinstance(labels, list):
            raise InvalidInput(f"{where} ({name}): labels must be a list of label names")
        reader = Reader.of(labels)
        owner = entry.get("owner", False)
        if not isinstance(owner, bool):
            raise InvalidInput(f"{where} ({name}): owner must be true or false")
        if any(k.digest == digest for k in keys):
            raise InvalidInput(f"{where} ({name}) repeats the key of an earlier entry: every key must be distinct")
        if any(k.name == name for k in keys):
            raise InvalidInput(f"{where}: the name {name!r} is used twice")
        keys.append(ApiKey(name=name, digest=digest, namespaces=tuple(namespaces), labels=reader.labels, owner=owner))
    return keys


def load_keys(path: str | os.PathLike | None = None, *, environ: dict[str, str] | None = None) -> list[ApiKey] | None:
    """The API keys from ``path`` (a JSON file), else from :data:`KEYS_ENV`, else ``None`` (no keys:
    every caller is the owner, and only loopback may be bound).

    :raises InvalidInput: for a missing or unreadable file, bad JSON or a malformed key (see :func:`parse_keys`).
    """
    env = os.environ if environ is None else environ
    if path is not None:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise InvalidInput(f"cannot read the keys file {path}: {exc.strerror or exc}") from None
        source = str(path)
    elif env.get(KEYS_ENV):
        text, source = env[KEYS_ENV], KEYS_ENV
    else:
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{source} is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    return parse_keys(data, source)


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (``127.0.0.0/8``, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, keys: list[ApiKey] | None) -> None:
    """:raises InvalidInput: when ``host`` is not loopback and no API keys are configured
    (without keys every caller is the owner, who sees everything)."""
    if not keys and not is_loopback(host):
        raise InvalidInput(f"refusing to serve on {host} without API keys: every caller would read the whole "
                           f"database as its owner. Give --keys FILE (or {KEYS_ENV}), or bind 127.0.0.1")


# -- who is calling ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Caller:
    """The caller of one request: an API key, or ``None`` when the server has no keys (the owner)."""

    key: ApiKey | None = None

    @property
    def reader(self) -> Reader | None:
        """The reader every read runs as (``None``: every label)."""
        return None if self.key is None else self.key.reader()

    @property
    def reader_labels(self) -> list[str] | None:
        """The reader's labels for :meth:`MemFold.search` (``None``: no label check)."""
        reader = self.reader
        return None if reader is None else sorted(reader.labels)

    def may(self, namespace: str) -> bool:
        """True when the caller may touch ``namespace``."""
        return self.key is None or self.key.allows(namespace)

    def check_namespace(self, namespace: str) -> str:
        """:raises PermissionDenied: when the caller's key does not cover ``namespace``."""
        if not self.may(namespace):
            raise PermissionDenied(f"API key {self.key.name!r} may not use namespace {namespace!r}")  # type: ignore[union-attr]
        return namespace

    def can_read(self, labels: Iterable[str]) -> bool:
        """True when the caller's reader holds every label in ``labels``."""
        reader = self.reader
        return reader is None or reader.can_read(labels)

    def default_namespace(self) -> str | None:
        """The key's namespace when it names exactly one (no pattern), else ``None``."""
        if self.key is not None and len(self.key.namespaces) == 1 and "*" not in self.key.namespaces[0]:
            return self.key.namespaces[0]
        return None


@dataclass
class Service:
    """What the routes share: the facade, its lock and the keys (``None``: no auth)."""

    memfold: MemFold
    keys: list[ApiKey] | None = None
    lock: threading.RLock = field(default_factory=threading.RLock)

    def identify(self, presented: str | None) -> Caller:
        """The caller holding ``presented``. :raises _Unauthorized: for a missing or unknown key."""
        if not self.keys:
            return Caller(None)
        if not presented:
            raise _Unauthorized("an API key is required: send 'Authorization: Bearer KEY' or 'X-API-Key: KEY'")
        digest = _digest(presented)
        for key in self.keys:
            if hmac.compare_digest(key.digest, digest):
                return Caller(key)
        raise _Unauthorized("unknown API key")

    # facade look-ups that hide other namespaces (an id elsewhere is an id that does not exist)
    def conversation(self, caller: Caller, conversation_id: str):
        missing = f"no conversation {conversation_id!r}: create it with POST {API_PREFIX}/conversations"
        try:
            conv = self.memfold.conversation(conversation_id, create=False)
        except ConversationNotFound:
            raise ConversationNotFound(missing) from None
        if not caller.may(conv.namespace):
            raise ConversationNotFound(missing)
        return conv

    def record(self, caller: Caller, record_id: int):
        record = self.memfold.memory.get(record_id)
        if not caller.may(record.namespace):
            raise RecordNotFound(f"no memory record with id {record_id}")
        return record

    def protected(self, caller: Caller, record_id: int):
        record = self.memfold.protected.get(record_id)
        if not caller.may(record.namespace):
            raise ProtectedNotFound(f"no protected record with id {record_id}")
        return record

    def turn_namespace(self, turn_id: int) -> str:
        turn = self.memfold.archive.get(turn_id)
        return self.memfold.archive.conversation_row(turn.conversation_id)["namespace"]


class _Unauthorized(Exception):
    """A request without a valid API key (401)."""


def _service(request: Request) -> Service:
    return request.app.state.memfold_service


_bearer = HTTPBearer(auto_error=False, description="An API key from the server's keys file: `Bearer KEY`.")
_api_key = APIKeyHeader(name="X-API-Key", auto_error=False, description="The same API key, as a header.")


def _caller(request: Request, bearer: HTTPAuthorizationCredentials | None = Depends(_bearer),
            header: str | None = Depends(_api_key)) -> Caller:
    return _service(request).identify(bearer.credentials if bearer is not None else header)


# -- bodies and answers --------------------------------------------------------------------------
class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ErrorOut(BaseModel):
    """Every error: the message (what was wrong, what to do) and the error class."""

    error: str
    type: str


class FunctionCall(BaseModel):
    """The function a tool call names, OpenAI style (``arguments`` is JSON text)."""

    model_config = ConfigDict(extra="allow")
    name: str
    arguments: str = ""


class ToolCall(BaseModel):
    """One tool call of an assistant message, OpenAI style."""

    model_config = ConfigDict(extra="allow")
    id: str
    type: str = "function"
    function: FunctionCall


class ChatMessage(_Body):
    """One turn in the OpenAI chat-message shape, plus memfold's optional fields."""

    role: Literal["user", "assistant", "tool", "system", "developer"] = Field(
        description="'developer' (the system role of OpenAI's newer models) is stored as a system turn, "
                    "with metadata.role = 'developer'.")
    content: str | list[dict[str, Any]] | None = Field(
        None, description="Text, or OpenAI content parts ([{'type': 'text', 'text': ...}, ...]): the turn's text "
                          "is its text parts joined by newlines and the parts are kept in metadata.content_parts.")
    refusal: str | None = Field(None, description="An assistant refusal as OpenAI returns it (null when none).")
    name: str | None = None
    tool_call_id: str | None = None
    tool_calls: list[ToolCall] | None = None
    metadata: dict[str, Any] | None = None
    labels: list[str] | None = Field(None, description="Access labels a reader must hold to see the turn.")
    created_at: int | float | None = Field(None, description="Clock units: ticks, or POSIX seconds.")


class AppendBody(_Body):
    """Turns to append in one transaction (all or nothing)."""

    messages: list[ChatMessage] = Field(min_length=1, max_length=1000)
    idempotency_key: str | None = Field(
        None, description="Names this append: a retry with the same key returns the same turn ids and writes "
                          "nothing. One message uses the key itself; a batch of n uses KEY#1 .. KEY#n. The "
                          "Idempotency-Key header does the same.")
    compact: bool = Field(True, description="Apply the watermarks after appending (compact at the hard one).")


class ConversationBody(_Body):
    id: str
    namespace: str | None = Field(None, description="Default: the key's namespace when it has one, else 'default'.")
    labels: list[str] | None = None


class CompactBody(_Body):
    target_tokens: int | None = Field(None, ge=0, description="Fold down to this (default: the soft watermark).")


class SearchBody(_Body):
    query: str
    conversation_id: str | None = None
    namespace: str | None = None
    kinds: list[Literal["turn", "card", "record"]] | None = None
    type: str | None = Field(None, description="Only records of this type.")
    key: str | None = Field(None, description="Only records in this slot.")
    since: float | None = None
    until: float | None = None
    limit: int = Field(10, ge=1, le=100)
    mode: Literal["hybrid", "bm25", "dense"] = "hybrid"


class MemoryBody(_Body):
    namespace: str
    type: Literal["working", "semantic", "episodic", "procedural"]
    content: str
    key: str | None = None
    importance: float = Field(0.5, ge=0, le=1)
    labels: list[str] | None = None
    provenance: list[str] | None = None
    event_time: float | None = None
    metadata: dict[str, Any] | None = None
    pinned: bool = False


class CauseBody(_Body):
    cause: str = "api"


class ProtectedBody(_Body):
    text: str
    kind: str = "constraint"
    namespace: str | None = None
    conversation_id: str | None = None
    due_at: float | None = None
    labels: list[str] | None = None


class SupersedeBody(_Body):
    text: str
    kind: str | None = None
    due_at: float | None = None
    cause: str = "api"


class ConsolidateBody(_Body):
    namespace: str
    dry_run: bool = False
    batch_size: int = Field(100, ge=1, le=10_000)
    include_turns: bool = False


class EraseBody(_Body):
    namespace: str | None = None
    conversation_id: str | None = None
    turn_ids: list[int] | None = None
    record_ids: list[int] | None = None
    protected_ids: list[int] | None = None
    cause: str = "api"
    vacuum: bool = Field(False, description="Also rewrite the file so the erased bytes leave it now.")


class Health(BaseModel):
    status: Literal["ok"]
    version: str
    auth: bool


class ConversationOut(BaseModel):
    id: str
    namespace: str
    family_id: str
    parent_id: str | None
    fork_after_seq: int | None
    created_at: float
    labels: list[str]
    created: bool = False


class ConversationList(BaseModel):
    conversations: list[ConversationOut]


class TurnOut(BaseModel):
    kind: Literal["turn"] = "turn"
    ref: str
    id: int
    conversation_id: str
    family_id: str
    seq: int
    role: str
    content: str
    name: str | None
    tool_call_id: str | None
    tool_calls: list[dict[str, Any]] | None
    metadata: dict[str, Any]
    created_at: float
    tokens: int
    sha256: str
    labels: list[str]
    erased: bool


class CardOut(BaseModel):
    kind: Literal["card"] = "card"
    ref: str
    id: int
    family_id: str
    conversation_id: str
    depth: int
    text: str
    tokens: int
    source_tokens: int
    first_turn_id: int
    last_turn_id: int
    first_seq: int
    last_seq: int
    start_at: float
    end_at: float
    labels: list[str]
    summarizer: str
    created_at: float
    stale: bool
    covers: list[str]


class History(BaseModel):
    conversation_id: str
    turns: list[TurnOut]


class AppendOut(BaseModel):
    conversation_id: str
    turn_ids: list[int]
    refs: list[str]
    replayed: list[bool] = Field(description="True where the idempotency key was already taken: nothing written.")


class ContextOut(BaseModel):
    messages: list[dict[str, Any]] = Field(description="OpenAI chat messages for the next model call.")
    sections: dict[str, int]
    total_tokens: int
    budget_tokens: int
    output_reserve_tokens: int
    usable_tokens: int
    refs: list[str]
    glimpses: list[int]
    hot_refs: list[str]


class CompactionOut(BaseModel):
    conversation_id: str
    usable_tokens: int
    target_tokens: int
    before_tokens: int
    after_tokens: int
    pressure_before: int
    cards: list[str]
    leaf_folds: int
    rollups: int
    forced_rollups: int
    failures: list[dict[str, Any]]
    folded: bool


class SearchHitOut(BaseModel):
    kind: str
    id: int
    score: float
    text: str
    conversation_id: str | None
    namespace: str | None
    type: str | None
    key: str | None
    time: float | None
    bm25_rank: int | None
    dense_rank: int | None
    similarity: float | None
    labels: list[str]


class SearchOut(BaseModel):
    hits: list[SearchHitOut]


class ExpandOut(BaseModel):
    ref: str
    items: list[TurnOut | CardOut]


class RecordOut(BaseModel):
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
    provenance: list[str]
    labels: list[str]
    metadata: dict[str, Any]


class ScoredRecordOut(RecordOut):
    score: float
    scored_at: float


class WriteOut(BaseModel):
    record: RecordOut
    action: str
    retired: list[int]
    evicted: list[int]


class RecordList(BaseModel):
    records: list[RecordOut]


class ScoredList(BaseModel):
    records: list[ScoredRecordOut]


class ProtectedOut(BaseModel):
    id: int
    namespace: str
    conversation_id: str | None
    kind: str
    text: str
    state: str
    due_at: float | None
    provenance: list[str]
    labels: list[str]
    source: str
    created_at: float
    changed_at: float
    supersedes: int | None
    superseded_by: int | None
    metadata: dict[str, Any]
    scope: str


class ProtectedList(BaseModel):
    records: list[ProtectedOut]


class ConsolidationOut(BaseModel):
    id: int | None
    namespace: str
    extractor: str
    trigger: str
    status: str
    started_at: float
    finished_at: float | None
    batches: int
    episodes_consumed: int
    turns_consumed: int
    facts_written: int
    rules_written: int
    errors: list[str]
    dry_run: bool
    proposals: list[dict[str, Any]]
    written: list[int]
    consumed: list[str]


class ErasureOut(BaseModel):
    turns: list[int]
    records: list[int]
    protected: list[int]
    cards: list[int]
    counts: dict[str, int]


class EventOut(BaseModel):
    id: int
    at: float
    kind: str
    namespace: str | None
    subject: str
    record_id: int | None
    cause: str
    details: dict[str, Any]


class EventList(BaseModel):
    events: list[EventOut]


def _turn(turn: Any) -> dict[str, Any]:
    return {**turn.to_dict(), "kind": "turn", "ref": f"t{turn.id}"}


def _item(item: Any) -> dict[str, Any]:
    return {**item.to_dict(), "kind": "card"} if hasattr(item, "covers") else _turn(item)


def _conversation_out(mf: MemFold, conversation_id: str, created: bool = False) -> dict[str, Any]:
    return {**mf.archive.conversation_row(conversation_id), "created": created}


# -- conversation ids holding "/" (issue 20, point 3) ---------------------------------------------
#: what an encoded slash (``%2F``) inside a path segment becomes while the path is routed: NUL,
#: which no conversation id holds (:func:`~memfold.memory.validation.check_name` refuses it)
SLASH_IN_SEGMENT = "\x00"


class _ConversationIdConvertor(Convertor):
    """The ``{conversation_id:conversation_id}`` path parameter: one path segment, in which
    :class:`EncodedSlashes` turned each ``%2F`` into :data:`SLASH_IN_SEGMENT`; it is a ``/``
    again in the id the route receives. So ``/v1/conversations/a%2Fb/turns`` reads conversation
    ``a/b`` (round 15: 404), and an id is never mistaken for a longer route."""

    regex = "[^/]+"

    def convert(self, value: str) -> str:
        return value.replace(SLASH_IN_SEGMENT, "/")

    def to_string(self, value: str) -> str:
        return str(value).replace("/", SLASH_IN_SEGMENT)


register_url_convertor("conversation_id", _ConversationIdConvertor())


class EncodedSlashes:
    """ASGI middleware keeping ``%2F`` inside a path segment apart from the ``/`` between segments.

    Servers decode the path before routing (``a%2Fb`` arrives as ``a/b``), so a conversation id
    holding ``/`` could not be reached. From the undecoded ``raw_path`` this routes each segment's
    encoded slashes as :data:`SLASH_IN_SEGMENT`, turned back by the id's convertor. A path that
    already holds that character (``%00``) is refused with 422: no id holds it."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope.get("type") == "http":
            path = scope.get("path", "")
            if SLASH_IN_SEGMENT in path:
                response = _error(422, "the path holds NUL (%00): no conversation id or name holds it", "InvalidInput")
                await response(scope, receive, send)
                return
            raw = scope.get("raw_path") or b""
            if b"%2f" in raw.lower():
                routed = _split_encoded_slashes(raw)
                if routed is not None and routed.replace(SLASH_IN_SEGMENT, "/") == path:
                    scope = {**scope, "path": routed}
        await self.app(scope, receive, send)


def _split_encoded_slashes(raw: bytes) -> str | None:
    """``raw`` (an undecoded path) decoded segment by segment, each encoded slash within a segment
    as :data:`SLASH_IN_SEGMENT`; ``None`` when it is not UTF-8 (left to the server's decoding)."""
    try:
        text = raw.split(b"?", 1)[0].decode("utf-8")
    except UnicodeDecodeError:
        return None
    return "/".join(unquote(segment).replace("/", SLASH_IN_SEGMENT) for segment in text.split("/"))


# -- routes --------------------------------------------------------------------------------------
_ERRORS = {status: {"model": ErrorOut, "description": text} for status, text in (
    (401, "A missing or unknown API key."), (403, "PermissionDenied: the key lacks a namespace or a label."),
    (404, "NotFound (also an id in a namespace the key does not cover)."),
    (409, "BudgetError or StorageConflict."), (422, "InvalidInput, or a body or parameter that does not validate."),
    (503, "StorageError: the database is busy, locked or cannot be written."))}



class _StrictJSONRoute(APIRoute):
    """A route whose JSON body refuses a key given twice (422 naming the key), as the JSONL
    reader does (:func:`~memfold.window.transcripts.loads_unique`): FastAPI's own parse keeps the
    last value silently (round 15: ``{"role": "user", "role": "system"}`` was a system turn). The
    body is parsed once: the result is what FastAPI then reads (Starlette caches
    ``Request.json()`` in ``_json``). A body that is not valid JSON is left to FastAPI's own
    error."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def strict_handler(request: Request) -> Response:
            body = await request.body()
            kind = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
            if body and (kind == "application/json" or kind.endswith("+json")):
                try:
                    request._json = loads_unique(body)  # the parse FastAPI's handler reads next
                except DuplicateKey as exc:
                    raise InvalidInput(f"the body: {exc}") from None
                except (ValueError, RecursionError):
                    pass  # not JSON: FastAPI's handler reports it as before
            return await handler(request)

        return strict_handler


router = APIRouter(prefix=API_PREFIX, responses=_ERRORS, route_class=_StrictJSONRoute)
Svc = Depends(_service)
Who = Depends(_caller)


@router.get("/health", response_model=Health, tags=["server"], summary="Liveness (no key needed)")
def health(svc: Service = Svc) -> dict[str, Any]:
    return {"status": "ok", "version": __version__, "auth": bool(svc.keys)}


@router.get("/conversations", response_model=ConversationList, tags=["conversations"],
            summary="Conversations the key may see, in creation order")
def list_conversations(svc: Service = Svc, caller: Caller = Who) -> dict[str, Any]:
    with svc.lock:
        rows = [svc.memfold.archive.conversation_row(cid) for cid in svc.memfold.conversations()]
        return {"conversations": [{**row, "created": False} for row in rows if caller.may(row["namespace"])]}


@router.post("/conversations", response_model=ConversationOut, status_code=201, tags=["conversations"],
             summary="Create a conversation (201), or return it when it exists in the same namespace (200)")
def create_conversation(body: ConversationBody, response: Response, svc: Service = Svc,
                        caller: Caller = Who) -> dict[str, Any]:
    with svc.lock:
        mf = svc.memfold
        namespace = body.namespace or caller.default_namespace()
        try:
            existing = mf.conversation(body.id, create=False)
        except ConversationNotFound:
            existing = None
        if existing is not None:
            if not caller.may(existing.namespace):  # never say which namespace holds the id
                raise InvalidInput(f"conversation id {body.id!r} is taken: choose another id")
            if namespace is not None and namespace != existing.namespace:
                mf.conversation(body.id, namespace=namespace)  # raises InvalidInput naming both
            if body.labels is not None:  # other labels are refused, as mf.conversation refuses them
                mf.conversation(body.id, labels=body.labels)
            response.status_code = 200
            return _conversation_out(mf, body.id)
        caller.check_namespace(namespace or "default")
        conv = mf.conversation(body.id, namespace=namespace or "default", labels=body.labels)
        return _conversation_out(mf, conv.id, created=True)


@router.get("/conversations/{conversation_id:conversation_id}", response_model=ConversationOut, tags=["conversations"],
            summary="One conversation")
def get_conversation(conversation_id: str, svc: Service = Svc, caller: Caller = Who) -> dict[str, Any]:
    with svc.lock:
        conv = svc.conversation(caller, conversation_id)
        return _conversation_out(svc.memfold, conv.id)


@router.post("/conversations/{conversation_id:conversation_id}/turns", response_model=AppendOut, status_code=201,
             tags=["conversations"],
             summary="Append turns (OpenAI chat messages); 201 when written, 200 when every one was a retry")
def append_turns(conversation_id: str, body: AppendBody, response: Response, svc: Service = Svc,
                 caller: Caller = Who,
                 idempotency_header: str | None = Header(None, alias="Idempotency-Key",
                                                         description="Same as the body's idempotency_key.")
                 ) -> dict[str, Any]:
    key = body.idempotency_key
    if idempotency_header is not None:
        if key is not None and key != idempotency_header:
            raise InvalidInput("the Idempotency-Key header and the body's idempotency_key differ: send one of them")
        key = idempotency_header
    n = len(body.messages)
    keys = None if key is None else ([key] if n == 1 else [f"{key}#{i}" for i in range(1, n + 1)])
    turns = [m.model_dump(exclude_unset=True) for m in body.messages]
    with svc.lock:
        conv = svc.conversation(caller, conversation_id)
        # a key whose reader lacks a label of the conversation is refused by the library (403)
        outcome = conv.append_outcome(turns, idempotency_keys=keys, compact=body.compact, reader=caller.reader)
    if not outcome.written:
        response.status_code = 200
    return {"conversation_id": conversation_id, "turn_ids": list(outcome.turn_ids),
            "refs": [f"t{i}" for i in outcome.turn_ids], "replayed": list(outcome.replayed)}


@router.get("/conversations/{conversation_id:conversation_id}/turns", response_model=History, tags=["conversations"],
            summary="The history in append order (turns the key's reader may not see are left out)")
def history(conversation_id: str, after_seq: int = Query(0, ge=0, le=MAX_INT),
            limit: int | None = Query(None, ge=1, le=MAX_INT),
            svc: Service = Svc, caller: Caller = Who) -> dict[str, Any]:
    with svc.lock:
        conv = svc.conversation(caller, conversation_id)
        turns = conv.history(after_seq=after_seq, limit=limit, reader=caller.reader)
        return {"conversation_id": conversation_id, "turns": [_turn(t) for t in turns]}


@router.get("/conversations/{conversation_id:conversation_id}/context", response_model=ContextOut, tags=["window"],
            summary="The compiled context for the next model call (compacts first when it must)")
def context(conversation_id: str, budget: int | None = Query(None, ge=1, description="budget_tokens"),
            output_reserve: int | None = Query(None, ge=0, description="output_reserve_tokens"),
            svc: Service = Svc, caller: Caller = Who) -> dict[str, Any]:
    with svc.lock:
        conv = svc.conversation(caller, conversation_id)
        from ..window.folds import NO_FOLD_CARD  # the API offers no fold_unit tool

        return conv.context(budget, output_reserve, reader=caller.reader, **NO_FOLD_CARD).to_dict()


@router.post("/conversations/{conversation_id:conversation_id}/compact", response_model=CompactionOut, tags=["window"],
             summary="Fold old turns into summary cards now")
def compact(conversation_id: str, body: CompactBody | None = None, svc: Service = Svc,
            caller: Caller = Who) -> dict[str, Any]:
    target = body.target_tokens if body is not None else None
    with svc.lock:
        conv = svc.conversation(caller, conversation_id)
        return conv.compact(target_tokens=target, reader=caller.reader).to_dict()


@router.get("/conversations/{conversation_id:conversation_id}/cards/{ref}", response_model=dict[str, Any], tags=["window"],
            summary="Describe a card (c12) or turn (t5): depth, span, children, tokens, labels")
def describe(conversation_id: str, ref: str, svc: Service = Svc, caller: Caller = Who) -> dict[str, Any]:
    with svc.lock:
        return svc.conversation(caller, conversation_id).describe(ref, reader=caller.reader)


@router.get("/conversations/{conversation_id:conversation_id}/cards/{ref}/expand", response_model=ExpandOut, tags=["window"],
            summary="A card's children, or with to_turns every verbatim turn under it")
def expand(conversation_id: str, ref: str, to_turns: bool = False, svc: Service = Svc,
           caller: Caller = Who) -> dict[str, Any]:
    with svc.lock:
        items = svc.conversation(caller, conversation_id).expand(ref, to_turns=to_turns, reader=caller.reader)
        return {"ref": ref, "items": [_item(i) for i in items]}


@router.get("/conversations/{conversation_id:conversation_id}/protected", response_model=ProtectedList, tags=["protected"],
            summary="The protected records in force for a conversation")
def protected_in_force(conversation_id: str, svc: Service = Svc, caller: Caller = Who) -> dict[str, Any]:
    with svc.lock:
        conv = svc.conversation(caller, conversation_id)
        records = svc.memfold.protected.active_for(conv.id, reader=caller.reader)
        return {"records": [r.to_dict() for r in records]}


@router.post("/search", response_model=SearchOut, tags=["search"],
             summary="Hybrid search over turns, cards and memory records (higher score is better)")
def search(body: SearchBody, svc: Service = Svc, caller: Caller = Who) -> dict[str, Any]:
    with svc.lock:
        namespace = body.namespace
        if body.conversation_id is not None:
            svc.conversation(caller, body.conversation_id)
        elif namespace is None and caller.key is not None:
            namespace = caller.default_namespace()
            if namespace is None:
                raise InvalidInput("pass namespace or conversation_id: this API key covers several namespaces")
        if namespace is not None:
            caller.check_namespace(namespace)
        options: dict[str, Any] = {k: v for k, v in body.model_dump(exclude_unset=True, exclude_none=True).items()
                                   if k in ("kinds", "type", "key", "since", "until")}
        hits = svc.memfold.search(body.query, limit=body.limit, mode=body.mode, conversation_id=body.conversation_id,
                                  namespace=namespace, reader_labels=caller.reader_labels, **options)
        return {"hits": [h.to_dict() for h in hits]}


@router.post("/memories", response_model=WriteOut, status_code=201, tags=["memories"],
             summary="Write a memory record (supersession, refresh and eviction apply)")
def write_memory(body: MemoryBody, svc: Service = Svc, caller: Caller = Who) -> dict[str, Any]:
    fields = body.model_dump(exclude_unset=True)
    namespace, type_, content = caller.check_namespace(fields.pop("namespace")), fields.pop("type"), fields.pop("content")
    with svc.lock, svc.memfold.storage.transaction(write_scope(records=[namespace])):  # the namespace's lock only
        check_slot_readable(svc.memfold, caller.reader, namespace, type_, fields.get("key"),
                            f"API key {caller.key.name!r}" if caller.key is not None else "the caller")
        return svc.memfold.memory.write_outcome(namespace, type_, content, **fields).to_dict()


@router.get("/memories", response_model=RecordList, tags=["memories"],
            summary="Records in write order (active only unless status or all)")
def list_memories(namespace: str | None = None, type: str | None = None, key: str | None = None,
                  status: str | None = None, all: bool = Query(False, description="Include inactive records."),
                  svc: Service = Svc, caller: Caller = Who) -> dict[str, Any]:
    if namespace is not None:
        caller.check_namespace(namespace)
    with svc.lock:
        records = svc.memfold.memory.list(namespace, type, key=key, include_inactive=all, status=status)
    return {"records": [r.to_dict() for r in records if caller.may(r.namespace) and caller.can_read(r.labels)]}


@router.get("/memories/read", response_model=ScoredList, tags=["memories"],
            summary="The top k active records of a namespace by score (a read raises access counts)")
def read_memories(namespace: str, k: int = Query(10, ge=1, le=1000),
                  query: str | None = Query(None, description="Only records relevant to this text."),
                  types: list[str] | None = Query(None), svc: Service = Svc, caller: Caller = Who) -> dict[str, Any]:
    caller.check_namespace(namespace)
    with svc.lock:
        hits = svc.memfold.read(namespace, k, reader=caller.reader, types=types, query=query)
        return {"records": [h.to_dict() for h in hits]}


def check_slot_readable(mf: MemFold, reader: Reader | None, namespace: str, type_: str, key: str | None,
                        who: str) -> None:
    """Refuse a write into a slot whose current value ``reader`` may not read: a restatement
    would refresh that record and return it (its stored text, metadata and provenance), and a new
    value would retire it, so a writer could read or overwrite a fact hidden from it.

    :raises PermissionDenied: naming the slot (nothing is written).
    """
    if reader is None or key is None:
        return
    for record in mf.memory.list(namespace, type_, key=key):
        if not reader.can_read(record.labels):
            raise PermissionDenied(f"{who} may not write slot {key!r} of {namespace}/{type_}: its current value "
                                   "requires a label this reader lacks")


def _readable_record(svc: Service, caller: Caller, record_id: int):
    """The record, 404 outside the key's namespaces and 403 without the labels it requires."""
    record = svc.record(caller, record_id)
    if not caller.can_read(record.labels):
        raise PermissionDenied(f"API key {caller.key.name!r} may not read memory record {record_id}: it lacks "  # type: ignore[union-attr]
                               f"a label the record requires")
    return record


@router.get("/memories/{record_id}", response_model=RecordOut, tags=["memories"], summary="One memory record")
def get_memory(record_id: int, svc: Service = Svc, caller: Caller = Who) -> dict[str, Any]:
    with svc.lock:
        return _readable_record(svc, caller, record_id).to_dict()


def _record_action(verb: str, summary: str):
    def action(record_id: int, body: CauseBody | None = None, svc: Service = Svc, caller: Caller = Who) -> dict[str, Any]:
        cause = body.cause if body is not None else "api"
        with svc.lock:
            _readable_record(svc, caller, record_id)
            return getattr(svc.memfold.memory, verb)(record_id, cause=cause).to_dict()

    action.__name__ = f"{verb}_memory"
    router.post(f"/memories/{{record_id}}/{verb}", response_model=RecordOut, tags=["memories"], summary=summary)(action)


_record_action("retire", "Retire an active record by hand (bytes and links stay)")
_record_action("pin", "Pin a record: eviction never picks it")
_record_action("unpin", "Unpin a record")
_record_action("revert", "Undo a retirement or eviction: the record is its slot's current value again")


@router.post("/protected", response_model=ProtectedOut, status_code=201, tags=["protected"],
             summary="Add a protected record to a conversation or a whole namespace")
def add_protected(body: ProtectedBody, svc: Service = Svc, caller: Caller = Who) -> dict[str, Any]:
    with svc.lock:
        if body.conversation_id is not None:
            svc.conversation(caller, body.conversation_id)
        if body.namespace is not None:
            caller.check_namespace(body.namespace)
        fields = body.model_dump(exclude_unset=True)
        return add_fitting(svc.memfold.protected, svc.memfold.window, fields.pop("text"), **fields).to_dict()


@router.get("/protected", response_model=ProtectedList, tags=["protected"],
            summary="Protected records by namespace or conversation and state")
def list_protected(namespace: str | None = None, conversation_id: str | None = None,
                   state: str = Query("active", description="active, satisfied, expired, revoked, superseded, "
                                                            "erased, or all"),
                   svc: Service = Svc, caller: Caller = Who) -> dict[str, Any]:
    with svc.lock:
        if conversation_id is not None:
            svc.conversation(caller, conversation_id)
        if namespace is not None:
            caller.check_namespace(namespace)
        records = svc.memfold.protected.list(namespace=namespace, conversation_id=conversation_id,
                                             state=None if state == "all" else state, reader=caller.reader)
        return {"records": [r.to_dict() for r in records if caller.may(r.namespace)]}


def _protected_action(verb: str, summary: str):
    def action(record_id: int, body: CauseBody | None = None, svc: Service = Svc, caller: Caller = Who) -> dict[str, Any]:
        cause = body.cause if body is not None else "api"
        with svc.lock:
            _readable_protected(svc, caller, record_id)
            return getattr(svc.memfold.protected, verb)(record_id, cause=cause).to_dict()

    action.__name__ = f"{verb}_protected"
    router.post(f"/protected/{{record_id}}/{verb}", response_model=ProtectedOut, tags=["protected"],
                summary=summary)(action)


def _readable_protected(svc: Service, caller: Caller, record_id: int):
    record = svc.protected(caller, record_id)
    if not caller.can_read(record.labels):
        raise PermissionDenied(f"API key {caller.key.name!r} may not read protected record {record_id}")  # type: ignore[union-attr]
    return record


_protected_action("satisfy", "Mark an active record satisfied")
_protected_action("expire", "Mark an active record expired")
_protected_action("revoke", "Revoke an active record")


@router.post("/protected/{record_id}/supersede", response_model=ProtectedOut, status_code=201, tags=["protected"],
             summary="Replace an active record with a new one (returns the new record)")
def supersede_protected(record_id: int, body: SupersedeBody, svc: Service = Svc, caller: Caller = Who) -> dict[str, Any]:
    with svc.lock:
        _readable_protected(svc, caller, record_id)
        return supersede_fitting(svc.memfold.protected, svc.memfold.window, record_id, body.text, kind=body.kind,
                                 due_at=body.due_at, cause=body.cause).to_dict()


@router.post("/consolidate", response_model=ConsolidationOut, tags=["consolidation"],
             summary="Run the sleep-time pass on a namespace now")
def consolidate(body: ConsolidateBody, svc: Service = Svc, caller: Caller = Who) -> dict[str, Any]:
    caller.check_namespace(body.namespace)
    with svc.lock:
        run = svc.memfold.consolidate(body.namespace, dry_run=body.dry_run, batch_size=body.batch_size,
                                      include_turns=body.include_turns)
        return run.to_dict()


@router.post("/erase", response_model=ErasureOut, tags=["erasure"],
             summary="Erase content everywhere it lives (turns, records, protected rows, derived cards)")
def erase(body: EraseBody, svc: Service = Svc, caller: Caller = Who) -> dict[str, Any]:
    with svc.lock:
        if caller.key is not None:
            if body.namespace is not None:
                caller.check_namespace(body.namespace)
            if body.conversation_id is not None:
                svc.conversation(caller, body.conversation_id)
            # an id outside the key's namespaces is 404; one it may not read is 403, as for retire
            # and revoke: a key never erases what it cannot read
            for turn_id in body.turn_ids or []:
                if not caller.may(svc.turn_namespace(turn_id)):
                    raise TurnNotFound(f"no turn with id {turn_id}")
                if not caller.can_read(svc.memfold.archive.get(turn_id).labels):
                    raise PermissionDenied(f"API key {caller.key.name!r} may not erase turn {turn_id}: it lacks a "
                                           "label the turn requires")
            for record_id in body.record_ids or []:
                _readable_record(svc, caller, record_id)
            for record_id in body.protected_ids or []:
                _readable_protected(svc, caller, record_id)
        plan = svc.memfold.erase(namespace=body.namespace, conversation_id=body.conversation_id,
                                 turn_ids=body.turn_ids, record_ids=body.record_ids, protected_ids=body.protected_ids,
                                 cause=body.cause, vacuum=body.vacuum)
        return plan.to_dict()


@router.get("/events", response_model=EventList, tags=["events"],
            summary="The audit log, oldest first (limit keeps the newest N)")
def events(namespace: str | None = None, record_id: int | None = None, kind: str | None = None,
           limit: int | None = Query(None, ge=1, le=MAX_INT), svc: Service = Svc,
           caller: Caller = Who) -> dict[str, Any]:
    if namespace is not None:
        caller.check_namespace(namespace)
    with svc.lock:
        if caller.key is None or namespace is not None:
            found = svc.memfold.memory.events(namespace, record_id=record_id, kind=kind)
        else:
            found = [e for e in svc.memfold.memory.events(None, record_id=record_id, kind=kind)
                     if e.namespace is not None and caller.may(e.namespace)]
        labels: dict[int, Any] = {}

        def visible(event: Any) -> bool:
            """An event about a memory record shows only to a caller that may read the record
            (its key, ids and details name what the record is about)."""
            if event.record_id is None:
                return True
            if event.record_id not in labels:
                try:
                    labels[event.record_id] = svc.memfold.memory.get(event.record_id).labels
                except MemfoldError:
                    labels[event.record_id] = ()
            return caller.can_read(labels[event.record_id])

        found = [e for e in found if visible(e)]
        found = found[-limit:] if limit is not None else found
        return {"events": [e.to_dict() for e in found]}


# -- the app -------------------------------------------------------------------------------------
def _error(status: int, message: str, type_name: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message, "type": type_name}, status_code=status, headers=headers)


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        if err.get("type") == "json_invalid":  # was "1: JSON decode error" (round 15)
            ctx = err.get("ctx") or {}
            at = err.get("loc", ())[-1] if err.get("loc") else "?"
            parts.append(f"the body is not valid JSON ({ctx.get('error', 'cannot decode it')} at character {at})")
            continue
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "; ".join(parts)


def create_app(memfold: MemFold, *, keys: list[ApiKey] | None = None,
               routes: set[tuple[str, str]] | None = None) -> FastAPI:
    """The ASGI app serving ``memfold`` (which the caller keeps open, and closes after).

    :param keys: API keys (:func:`load_keys`); ``None`` or empty: no auth, every caller the owner
        (:func:`check_bind` keeps such a server on loopback).
    :param routes: serve only these ``(method, path)`` routes (the viewer mounts the reads only);
        ``None``: every route.
    """
    app = FastAPI(
        title="memfold", version=__version__, docs_url=None, redoc_url=None,
        description="The memfold HTTP API: conversations and turns, compiled contexts, compaction, recall, "
                    "typed memories, the protected channel, consolidation, erasure and the audit log. "
                    "Errors are {\"error\", \"type\"} objects.",
    )
    app.state.memfold_service = Service(memfold, keys or None)
    app.add_middleware(EncodedSlashes)
    if routes is None:
        app.include_router(router)
    else:
        subset = APIRouter(responses=_ERRORS)
        subset.routes.extend(r for r in router.routes if any((m, r.path_format) in routes for m in r.methods))
        app.include_router(subset)

    @app.exception_handler(MemfoldError)
    def memfold_error(request: Request, exc: MemfoldError) -> JSONResponse:
        return _error(status_for(exc), str(exc), type(exc).__name__)

    @app.exception_handler(RequestValidationError)
    def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(422, _validation_message(exc), "InvalidInput")

    @app.exception_handler(_Unauthorized)
    def unauthorized(request: Request, exc: _Unauthorized) -> JSONResponse:
        return _error(401, str(exc), "Unauthorized", {"WWW-Authenticate": "Bearer"})

    @app.exception_handler(StarletteHTTPException)
    def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        names = {404: "NotFound", 405: "MethodNotAllowed"}
        message = str(exc.detail)
        if exc.status_code == 404 and message == "Not Found" and request.url.path.startswith(f"{API_PREFIX}/conversations/"):
            message = (f"no route {request.method} {request.url.path}: a conversation id holding '/' goes in the "
                       "path with each '/' written %2F (conversation 'a/b' is /v1/conversations/a%2Fb)")
        return _error(exc.status_code, message, names.get(exc.status_code, "HTTPError"),
                      getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    def internal_error(request: Request, exc: Exception) -> JSONResponse:  # a bug: still the error shape
        return _error(500, f"internal error ({type(exc).__name__}): please report it", "InternalError")

    return app


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document of the API (the same for every database and key set)."""
    with MemFold(None, embedder=None) as mf:
        return create_app(mf).openapi()


def openapi_text() -> str:
    """:func:`openapi_document` as the committed ``openapi.json`` text."""
    return json.dumps(openapi_document(), indent=2, ensure_ascii=False) + "\n"


def serve(memfold: MemFold, *, host: str = "127.0.0.1", port: int = 8000, keys: list[ApiKey] | None = None,
          log_level: str = "info") -> None:
    """Serve ``memfold`` with uvicorn until interrupted (``memfold serve``).

    :raises InvalidInput: for a non-loopback ``host`` without keys (checked before binding).
    """
    import uvicorn

    check_bind(host, keys)
    uvicorn.run(create_app(memfold, keys=keys), host=host, port=port, log_level=log_level)


if __name__ == "__main__":  # python -m memfold.integrations.http [openapi.json]
    import sys

    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(openapi_text(), encoding="utf-8")
    else:
        sys.stdout.write(openapi_text())
