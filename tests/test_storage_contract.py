"""The storage contract (issue 12, point 5; STYLE.md rule 15): one parametrized fixture runs the
same behavioural tests against every storage backend.

Backends today: a SQLite file and SQLite in memory. A new backend (PostgreSQL next) adds one
adapter class to :data:`BACKENDS` and must pass every test here unchanged. The tests talk to the
Protocols of :mod:`memfold.memory.storage.base` only: no SQL and no driver in a test body. What a
Protocol cannot express (a second connection, forcing a newer schema onto the file) lives in the
backend adapters.

Coverage is checked, not hoped for: each test declares the Protocol methods it exercises
(``@covers``); the ``storage`` fixture records every call the test makes through the storage it
yields and fails the test if a declared method was never called; and
:func:`test_every_protocol_method_is_covered` fails when a method of a Protocol in ``base.py``
is declared by no test (a family that gains a method needs a test for it here).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import threading
from collections import Counter

import numpy as np
import pytest

from memfold.memory.errors import (
    CardNotFound,
    ClockError,
    InvalidInput,
    MemfoldError,
    NotFound,
    RecordNotFound,
    SchemaTooNew,
    StorageConflict,
    StorageError,
    TurnNotFound,
)
from memfold.memory.fts import literal_query
from memfold.memory.search import bm25_query
from memfold.memory.storage import base, open_storage
from memfold.memory.storage.base import Storage
from memfold.memory.storage.rows import (
    Card,
    CatalogItem,
    ConsolidationRun,
    ConversationRow,
    Event,
    LeaseRow,
    MemoryRecord,
    PendingEpisode,
    PendingTurn,
    ProtectedRecord,
    SearchItem,
    SearchScope,
    StoredPolicy,
    SummarizerFailure,
    TextMatch,
    Turn,
)


# --- backends -------------------------------------------------------------------------------------
class SqliteFileBackend:
    """A SQLite file: every handle is a connection of its own, like another process."""

    shares_connection = False

    def __init__(self, tmp_path) -> None:
        self.path = tmp_path / "x.db"
        self.handles: list = []

    def open(self, clock_kind: str = "logical"):
        handle = open_storage(self.path, clock_kind)
        self.handles.append(handle)
        return handle

    def other_handle(self):
        """Another handle on the same data, with its own connection."""
        return self.open()

    def reopen(self, clock_kind: str = "logical"):
        """Open the data again (migrations and the clock check run again)."""
        return self.open(clock_kind)

    def latest_version(self) -> int:
        from memfold.memory.storage.sqlite.migrations import latest_version

        return latest_version()

    def set_schema_version(self, version: int) -> None:
        """Make the file look written by a newer memfold."""
        import sqlite3

        conn = sqlite3.connect(self.path)
        with conn:
            conn.execute("INSERT INTO schema_version(version, name) VALUES (?, 'from a newer memfold')", [version])
        conn.close()

    def close(self) -> None:
        for handle in self.handles:
            handle.close()


class SqliteMemoryBackend:
    """SQLite in memory: one connection, which every thread shares (and its lock)."""

    shares_connection = True

    def __init__(self, tmp_path) -> None:
        self.first = None

    def open(self, clock_kind: str = "logical"):
        self.first = open_storage(None, clock_kind)
        return self.first

    def other_handle(self):
        return self.first  # there is no second connection to an in-memory database

    def reopen(self, clock_kind: str = "logical"):
        return open_storage(self.first, clock_kind)

    def latest_version(self) -> int:
        from memfold.memory.storage.sqlite.migrations import latest_version

        return latest_version()

    def set_schema_version(self, version: int) -> None:
        self.first.db.execute("INSERT INTO schema_version(version, name) VALUES (?, 'from a newer memfold')",
                              [version])

    def close(self) -> None:
        self.first.close()


class PostgresBackend:
    """A fresh PostgreSQL database (conftest's ``pg_url``): every handle has its own pool."""

    shares_connection = False

    def __init__(self, tmp_path, request) -> None:
        self.url = request.getfixturevalue("pg_url")
        self.handles: list = []

    def open(self, clock_kind: str = "logical"):
        handle = open_storage(self.url, clock_kind)
        self.handles.append(handle)
        return handle

    def other_handle(self):
        return self.open()

    def reopen(self, clock_kind: str = "logical"):
        return self.open(clock_kind)

    def latest_version(self) -> int:
        from memfold.memory.storage.postgres.migrations import latest_version

        return latest_version()

    def set_schema_version(self, version: int) -> None:
        """Make the database look written by a newer memfold."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute("INSERT INTO schema_version(version, name) VALUES (%s, 'from a newer memfold')", [version])

    def close(self) -> None:
        for handle in self.handles:
            handle.close()


#: every backend the contract runs on
BACKENDS = {"sqlite-file": SqliteFileBackend, "sqlite-memory": SqliteMemoryBackend, "postgres": PostgresBackend}


# --- the Protocols and the recording wrapper ----------------------------------------------------------
FAMILIES = [name for name in base.Storage.__annotations__ if name != "kind"]


def protocol_of(family: str) -> type:
    return getattr(base, base.Storage.__annotations__[family])


def protocol_methods(protocol: type) -> list[str]:
    """The methods (and properties) a Protocol class declares itself (not inherited from ``Protocol``)."""
    return sorted(name for name, value in vars(protocol).items()
                  if (callable(value) or isinstance(value, property)) and not name.startswith("_"))


def every_protocol_method() -> set[str]:
    names = {f"{family}.{m}" for family in FAMILIES for m in protocol_methods(protocol_of(family))}
    return names | set(protocol_methods(base.Storage))


class _RecordingFamily:
    def __init__(self, family: str, target, calls: set) -> None:
        self._family, self._target, self._calls = family, target, calls

    def __getattr__(self, name: str):
        value = getattr(self._target, name)
        if not callable(value) or name.startswith("_"):
            return value
        key, calls = f"{self._family}.{name}", self._calls

        def recorded(*args, **kwargs):
            calls.add(key)
            return value(*args, **kwargs)

        return recorded


class RecordingStorage:
    """The backend's storage, recording every Protocol method a test calls (see ``covers``)."""

    def __init__(self, inner, backend, calls: set | None = None) -> None:
        self.inner, self.backend = inner, backend
        self.calls: set = set() if calls is None else calls
        self.kind = inner.kind
        for family in FAMILIES:
            setattr(self, family, _RecordingFamily(family, getattr(inner, family), self.calls))

    def transaction(self, scope=None):
        self.calls.add("transaction")
        return self.inner.transaction(scope)

    def optional_transaction(self):
        self.calls.add("optional_transaction")
        return self.inner.optional_transaction()

    def snapshot(self):
        self.calls.add("snapshot")
        return self.inner.snapshot()

    def settled(self):
        self.calls.add("settled")
        return self.inner.settled()

    def writers_held(self):
        self.calls.add("writers_held")
        return self.inner.writers_held()

    @property
    def in_transaction(self) -> bool:
        self.calls.add("in_transaction")
        return self.inner.in_transaction

    def close(self) -> None:
        self.calls.add("close")
        self.inner.close()

    def other(self) -> "RecordingStorage":
        """A second handle on the same data (its own connection where the backend has one)."""
        return RecordingStorage(self.backend.other_handle(), self.backend, self.calls)


def covers(*methods: str):
    """Declare the Protocol methods (``"family.method"``, or ``transaction``/``snapshot``/``close``)
    a test exercises; the fixture checks each was called, the meta-test that all are declared."""
    unknown = set(methods) - every_protocol_method()
    if unknown:
        raise AssertionError(f"@covers names methods no Protocol has: {sorted(unknown)}")

    def mark(fn):
        fn.covers = tuple(methods)
        return fn

    return mark


@pytest.fixture(params=sorted(BACKENDS))
def storage(request, tmp_path):
    cls = BACKENDS[request.param]
    backend = cls(tmp_path, request) if cls is PostgresBackend else cls(tmp_path)
    recording = RecordingStorage(backend.open(), backend)
    yield recording
    backend.close()
    declared = set(getattr(request.function, "covers", ()))
    missed = declared - recording.calls
    if missed:
        pytest.fail(f"{request.node.name} declares it covers {sorted(missed)} but never called them")


# --- helpers: data written through the Protocols only ---------------------------------------------------
def sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def add_conversation(s, cid: str, *, namespace: str = "ns", family: str | None = None, parent: str | None = None,
                     fork_after: int | None = None, labels=(), at: float = 1.0) -> None:
    with s.transaction():
        s.archive.insert_conversation(conversation_id=cid, namespace=namespace, family_id=family or cid,
                                      parent_id=parent, fork_after_seq=fork_after, created_at=at, labels=list(labels))


def add_turn(s, cid: str, seq: int, content: str, *, family: str | None = None, role: str = "user", labels=(),
             at: float | None = None, tool_calls=None, metadata: str = "{}", name: str | None = None) -> int:
    with s.transaction():
        return s.archive.insert_turn(
            conversation_id=cid, family_id=family or cid, seq=seq, role=role, content=content, name=name,
            tool_call_id=None, tool_calls=tool_calls, metadata=metadata, created_at=float(seq if at is None else at),
            tokens=len(content.split()), sha256=sha(content), labels=list(labels))


def add_card(s, cid: str, children: list, text: str, *, family: str | None = None, labels=(), at: float = 50.0) -> int:
    """A card over ``children`` (Turns for depth 1, Cards deeper), written with its covers."""
    depth = 1 + max((c.depth for c in children if isinstance(c, Card)), default=0)

    def span(c):
        if isinstance(c, Card):
            return c.first_turn_id, c.last_turn_id, c.first_seq, c.last_seq, c.start_at, c.end_at
        return c.id, c.id, c.seq, c.seq, c.created_at, c.created_at

    first, last = span(children[0]), span(children[-1])
    with s.transaction():
        return s.cards.insert(
            family_id=family or cid, conversation_id=cid, depth=depth, text=text, tokens=len(text.split()),
            source_tokens=sum(c.tokens for c in children), first_turn_id=first[0], last_turn_id=last[1],
            first_seq=first[2], last_seq=last[3], start_at=first[4], end_at=last[5], labels=list(labels),
            summarizer="test", created_at=at,
            covers=[("card" if isinstance(c, Card) else "turn", c.id) for c in children])


def add_record(s, content: str, *, namespace: str = "ns", type: str = "semantic", key: str | None = None,
               importance: float = 0.5, at: float = 1.0, pinned: bool = False, provenance=(), labels=(),
               metadata: str = "{}", event_time: float | None = None) -> int:
    with s.transaction():
        return s.records.insert(namespace=namespace, type=type, key=key, content=content, importance=importance,
                                created_at=at, written_at=at, event_time=event_time, pinned=pinned,
                                provenance=list(provenance), labels=list(labels), metadata=metadata)


def add_protected(s, text: str, *, namespace: str = "ns", conversation_id: str | None = None,
                  kind: str = "constraint", due_at: float | None = None, provenance=(), labels=(),
                  at: float = 1.0, metadata=None) -> int:
    with s.transaction():
        return s.protected.insert(namespace=namespace, conversation_id=conversation_id, kind=kind, text=text,
                                  state="active", due_at=due_at, provenance=list(provenance), labels=list(labels),
                                  source="manual", created_at=at, metadata=metadata)


def turn_item(t: Turn) -> CatalogItem:
    return CatalogItem("turn", t.id, t.seq, t.seq, 0, t.tokens, t.role, bool(t.tool_calls))


def card_item(c: Card) -> CatalogItem:
    return CatalogItem("card", c.id, c.first_seq, c.last_seq, c.depth, c.tokens)


def three_turns(s, cid: str = "c1", **conv) -> list[Turn]:
    add_conversation(s, cid, **conv)
    ids = [add_turn(s, cid, i, text) for i, text in
           enumerate(["the parcel is late again", "your refund was approved today", "thanks a lot"], start=1)]
    return s.archive.turns(ids)


def assert_translated(exc: BaseException) -> None:
    """A driver error became memfold's: a StorageError raised by memfold, caused by the driver's."""
    assert isinstance(exc, StorageError)
    assert type(exc).__module__.startswith("memfold."), type(exc)
    cause = exc.__cause__
    assert cause is not None and not isinstance(cause, MemfoldError), cause


class Boom(Exception):
    """An error of the caller's, raised inside a transaction."""


# --- Storage itself: the families, signatures, transactions, snapshots, close --------------------------
def test_backend_satisfies_storage(storage):
    inner = storage.inner
    assert isinstance(inner, Storage)
    assert isinstance(inner.kind, str) and inner.kind
    for family in FAMILIES:
        assert getattr(inner, family) is not None, family


def _annotation(value) -> str:
    text = value if isinstance(value, str) else inspect.formatannotation(value)
    return text.replace('"', "").replace("'", "").replace(" ", "")


def signature_problems(protocol_fn, impl_fn) -> list[str]:
    """Ways ``impl_fn`` cannot stand in for ``protocol_fn``: a missing or moved parameter, another
    kind (positional / keyword-only), another default or annotation, an extra required parameter,
    another return annotation."""
    want = [p for p in inspect.signature(protocol_fn).parameters.values() if p.name != "self"]
    have_sig = inspect.signature(impl_fn)
    have = [p for p in have_sig.parameters.values() if p.name != "self"]
    by_name = {p.name: p for p in have}
    problems = []
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    for index, p in enumerate(want):
        q = by_name.get(p.name)
        if q is None:
            problems.append(f"parameter {p.name!r} is missing")
            continue
        if p.kind in positional and (q.kind not in positional or have.index(q) != index):
            problems.append(f"parameter {p.name!r} must stay positional at place {index + 1}")
        if p.kind == inspect.Parameter.KEYWORD_ONLY and q.kind not in (inspect.Parameter.KEYWORD_ONLY,
                                                                      inspect.Parameter.POSITIONAL_OR_KEYWORD):
            problems.append(f"parameter {p.name!r} must be accepted by keyword")
        if p.default is not inspect.Parameter.empty and q.default != p.default:
            problems.append(f"parameter {p.name!r} must default to {p.default!r}, not {q.default!r}")
        if p.annotation is not inspect.Parameter.empty and _annotation(p.annotation) != _annotation(q.annotation):
            problems.append(f"parameter {p.name!r} is {q.annotation!r}, the Protocol says {p.annotation!r}")
    wanted = {p.name for p in want}
    for q in have:
        if q.name not in wanted and q.default is inspect.Parameter.empty and q.kind not in (
                inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            problems.append(f"extra required parameter {q.name!r}")
    returns = inspect.signature(protocol_fn).return_annotation
    if returns is not inspect.Signature.empty and _annotation(returns) != _annotation(have_sig.return_annotation):
        problems.append(f"returns {have_sig.return_annotation!r}, the Protocol says {returns!r}")
    return problems


@pytest.mark.parametrize("family", FAMILIES)
def test_family_implements_every_protocol_method_with_a_compatible_signature(storage, family):
    protocol = protocol_of(family)
    implementation = type(getattr(storage.inner, family))
    problems = {}
    for name in protocol_methods(protocol):
        wanted, have = vars(protocol)[name], getattr(implementation, name, None)
        if isinstance(wanted, property):
            if not isinstance(have, property):
                problems[name] = ["must be a property"]
            elif signature_problems(wanted.fget, have.fget):
                problems[name] = signature_problems(wanted.fget, have.fget)
            continue
        if not callable(have):
            problems[name] = ["not implemented"]
            continue
        found = signature_problems(wanted, have)
        if found:
            problems[name] = found
    assert problems == {}, f"{implementation.__name__} vs {protocol.__name__}"


def test_signature_check_catches_incompatible_methods():
    class Proto:
        def get(self, item_id: int, *, limit: int | None = None) -> "list[int]": ...

    def renamed(self, ident: int, *, limit: int | None = None) -> "list[int]": ...
    def positional_limit(self, item_id: int, limit: int | None = None, *, extra: int) -> "list[int]": ...
    def other_default(self, item_id: int, *, limit: int | None = 5) -> "list[int]": ...
    def other_return(self, item_id: int, *, limit: int | None = None) -> "list[str]": ...
    def compatible(self, item_id: int, *, limit: int | None = None, verbose: bool = False) -> list[int]: ...

    assert signature_problems(Proto.get, renamed)
    assert any("extra required" in p for p in signature_problems(Proto.get, positional_limit))
    assert any("default" in p for p in signature_problems(Proto.get, other_default))
    assert any("returns" in p for p in signature_problems(Proto.get, other_return))
    assert signature_problems(Proto.get, compatible) == []


@covers("transaction", "archive.insert_conversation", "archive.conversation", "archive.insert_turn",
        "archive.max_seq", "records.insert", "records.list", "events.append", "events.list", "protected.insert",
        "protected.list")
def test_transaction_rolls_back_every_family_on_an_exception(storage):
    error = Boom("the caller failed")
    with pytest.raises(Boom) as raised:
        with storage.transaction():
            add_conversation(storage, "c1")
            add_turn(storage, "c1", 1, "hello")
            add_record(storage, "prefers email")
            storage.events.append(at=1.0, kind="write", subject="record:1")
            add_protected(storage, "never call after 6pm")
            assert storage.archive.conversation("c1") is not None  # visible inside its own transaction
            raise error
    assert raised.value is error  # the caller's exception comes out as it was raised
    assert storage.archive.conversation("c1") is None
    assert storage.archive.max_seq("c1") is None
    assert storage.records.list() == []
    assert storage.events.list() == []
    assert storage.protected.list() == []


@covers("transaction", "archive.insert_conversation", "archive.conversation_ids")
def test_nested_transaction_failure_caught_inside_the_outer_one_undoes_only_the_inner(storage):
    with storage.transaction():
        add_conversation(storage, "before")
        try:
            with storage.transaction():
                add_conversation(storage, "inner")
                raise Boom("inner")
        except Boom:
            pass
        assert storage.archive.conversation_ids() == ["before"]
        add_conversation(storage, "after")
    assert storage.archive.conversation_ids() == ["before", "after"]


@covers("transaction", "archive.insert_conversation", "archive.conversation_ids")
def test_nested_transaction_joins_the_outer_one(storage):
    with pytest.raises(Boom):
        with storage.transaction():
            with storage.transaction():
                add_conversation(storage, "inner")
            assert storage.archive.conversation_ids() == ["inner"]
            raise Boom("outer")
    assert storage.archive.conversation_ids() == []  # the inner block committed with the outer, so not at all


@covers("transaction", "archive.insert_conversation", "archive.conversation")
def test_a_conflict_caught_in_a_nested_transaction_leaves_the_outer_one_usable(storage):
    with storage.transaction():
        add_conversation(storage, "a", namespace="first")
        with pytest.raises(StorageConflict) as raised:
            with storage.transaction():
                add_conversation(storage, "a", namespace="second")
        add_conversation(storage, "b")
    assert_translated(raised.value)
    assert storage.archive.conversation("a").namespace == "first"
    assert storage.archive.conversation("b") is not None


@covers("transaction", "archive.insert_conversation", "archive.insert_turn", "archive.max_seq",
        "archive.conversation_turns")
def test_transactions_are_serialised_so_read_then_write_never_interleaves(storage):
    add_conversation(storage, "c1")
    handles = [storage, storage, storage.other(), storage.other()]
    errors: list[BaseException] = []

    def work(s, n):
        try:
            for i in range(15):
                with s.transaction():
                    seq = (s.archive.max_seq("c1") or 0) + 1
                    s.archive.insert_turn(conversation_id="c1", family_id="c1", seq=seq, role="user",
                                          content=f"w{n} {i}", name=None, tool_call_id=None, tool_calls=None,
                                          metadata="{}", created_at=float(seq), tokens=2, sha256=sha(f"w{n} {i}"),
                                          labels=[])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(h, n)) for n, h in enumerate(handles)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    turns = storage.archive.conversation_turns("c1")
    assert [t.seq for t in turns] == list(range(1, 61))
    assert len({t.content for t in turns}) == 60


@covers("transaction", "archive.insert_conversation", "archive.conversation")
def test_uncommitted_writes_are_invisible_to_other_readers(storage):
    other = storage.other()
    if not storage.backend.shares_connection:  # another connection reads beside the open transaction
        with storage.transaction():
            add_conversation(storage, "c1")
            assert other.archive.conversation("c1") is None
        assert other.archive.conversation("c1") is not None
        return
    # one shared connection: a reader in another thread must wait for the commit
    seen: list[tuple[bool, bool]] = []
    committing = threading.Event()

    def read():
        found = other.archive.conversation("c1") is not None
        seen.append((found, committing.is_set()))

    reader = threading.Thread(target=read)
    with storage.transaction():
        add_conversation(storage, "c1")
        reader.start()
        reader.join(timeout=0.5)  # gives the reader a chance to run inside the transaction (it must not)
        committing.set()
    reader.join()
    found, after_commit_began = seen[0]
    assert after_commit_began or not found


@covers("snapshot", "archive.insert_conversation", "archive.conversation_ids")
def test_snapshot_sees_one_consistent_state_and_takes_no_write_lock(storage):
    add_conversation(storage, "a")
    other = storage.other()
    if not storage.backend.shares_connection:
        with storage.snapshot():
            before = storage.archive.conversation_ids()
            add_conversation(other, "b")  # commits beside the snapshot: a snapshot holds no write lock
            assert storage.archive.conversation_ids() == before == ["a"]
            assert other.archive.conversation_ids() == ["a", "b"]
        assert storage.archive.conversation_ids() == ["a", "b"]
        return
    done: list[bool] = []

    def write():
        add_conversation(other, "b")
        done.append(True)

    writer = threading.Thread(target=write)
    with storage.snapshot():
        before = storage.archive.conversation_ids()
        writer.start()
        writer.join(timeout=0.5)  # gives the writer a chance to commit inside the snapshot (it must not)
        assert storage.archive.conversation_ids() == before == ["a"]
    writer.join()
    assert done == [True] and storage.archive.conversation_ids() == ["a", "b"]


@covers("settled", "archive.insert_conversation", "archive.conversation_ids")
def test_settled_reads_every_committed_write_and_joins_an_open_transaction(storage):
    add_conversation(storage, "a")
    add_conversation(storage.other(), "b")  # committed by another handle before the read
    with storage.settled():
        assert storage.archive.conversation_ids() == ["a", "b"]
    with storage.transaction():
        add_conversation(storage, "c")
        with storage.settled():  # inside a transaction it joins it (it cannot wait for itself)
            assert storage.archive.conversation_ids() == ["a", "b", "c"]
    assert storage.archive.conversation_ids() == ["a", "b", "c"]


@covers("snapshot", "transaction", "archive.insert_conversation", "archive.conversation_ids")
def test_snapshot_inside_a_transaction_sees_its_writes(storage):
    with storage.transaction():
        add_conversation(storage, "a")
        with storage.snapshot():
            assert storage.archive.conversation_ids() == ["a"]
        add_conversation(storage, "b")
    assert storage.archive.conversation_ids() == ["a", "b"]


@covers("snapshot", "archive.conversation_ids")
def test_snapshot_ends_cleanly_on_an_exception(storage):
    with pytest.raises(Boom):
        with storage.snapshot():
            storage.archive.conversation_ids()
            raise Boom("reader failed")
    add_conversation(storage, "a")  # the read transaction is over: writing works
    assert storage.archive.conversation_ids() == ["a"]


@covers("in_transaction", "transaction", "snapshot")
def test_in_transaction_is_true_only_for_the_thread_inside(storage):
    assert not storage.in_transaction
    seen: list[bool] = []
    with storage.transaction():
        assert storage.in_transaction
        with storage.transaction():
            assert storage.in_transaction
        other = threading.Thread(target=lambda: seen.append(storage.in_transaction))
        other.start()
        other.join()
        assert storage.in_transaction
    assert seen == [False] and not storage.in_transaction
    with storage.snapshot():
        assert storage.in_transaction
    with pytest.raises(Boom):
        with storage.transaction():
            raise Boom("rolled back")
    assert not storage.in_transaction


@covers("close", "archive.conversation_ids")
def test_a_closed_storage_raises_storage_error(storage):
    add_conversation(storage, "a")
    storage.close()
    with pytest.raises(StorageError) as raised:
        storage.archive.conversation_ids()
    assert_translated(raised.value)
    storage.close()  # closing twice is harmless


# --- driver errors become StorageError / StorageConflict --------------------------------------------------
@covers("archive.insert_conversation", "archive.insert_turn", "archive.conversation", "archive.turn")
def test_duplicates_are_storage_conflicts_and_change_nothing(storage):
    add_conversation(storage, "c1", namespace="first")
    tid = add_turn(storage, "c1", 1, "original words")
    with pytest.raises(StorageConflict) as dup_conversation:
        add_conversation(storage, "c1", namespace="second")
    with pytest.raises(StorageConflict) as dup_seq:
        add_turn(storage, "c1", 1, "other words")
    for raised in (dup_conversation, dup_seq):
        assert_translated(raised.value)
    assert storage.archive.conversation("c1").namespace == "first"
    assert storage.archive.turn(tid).content == "original words"


@covers("records.insert", "records.list", "catalog.insert", "catalog.items", "cards.insert", "cards.get")
def test_writes_the_schema_refuses_are_storage_errors_not_conflicts(storage):
    turns = three_turns(storage)
    refused = []
    with pytest.raises(StorageError) as raised:
        add_record(storage, "too important", importance=1.5)
    refused.append(raised.value)
    with pytest.raises(StorageError) as raised:
        add_record(storage, "bad type", type="gossip")
    refused.append(raised.value)
    with pytest.raises(StorageError) as raised:  # a catalog never points at a card that is not written whole
        with storage.transaction():
            storage.catalog.insert("c1", [CatalogItem("card", 999, 1, 3, 1, 2)])
    refused.append(raised.value)
    with pytest.raises(StorageError) as raised:  # a card is strictly shorter than its sources (DESIGN.md §4.3)
        add_card(storage, "c1", turns[:1], "this text is longer than the parcel turn it covers")
    refused.append(raised.value)
    for exc in refused:
        assert_translated(exc)
        assert not isinstance(exc, StorageConflict)
    assert storage.records.list() == []
    assert storage.catalog.items("c1") == []
    assert storage.cards.get(1) is None


@covers("fulltext.rank", "fulltext.postings")
def test_a_match_expression_the_index_cannot_parse_is_a_storage_error(storage):
    three_turns(storage)
    for call in (lambda: storage.fulltext.rank("turn", '"unbalanced', SearchScope(), 5),
                 lambda: storage.fulltext.postings("turn", '"unbalanced')):
        with pytest.raises(StorageError) as raised:
            call()
        assert_translated(raised.value)


@pytest.mark.parametrize("call", [
    lambda s: s.fulltext.candidates("gossip", SearchScope()),
    lambda s: s.fulltext.rank("gossip", '"x"', SearchScope(), 5),
    lambda s: s.fulltext.postings("gossip", '"x"'),
    lambda s: s.fulltext.indexed_count("gossip"),
    lambda s: s.fulltext.item("gossip", 1),
    lambda s: s.fulltext.describe_match("record", 1, '"x"'),
    lambda s: s.fulltext.items("gossip", [1]),
    lambda s: s.fulltext.describe_matches("record", [1], '"x"'),
    lambda s: s.vectors.unembedded("gossip"),
    lambda s: s.vectors.embeddable("gossip"),
    lambda s: s.erasure.exists("card", 1),
    lambda s: s.erasure.live_ids("gossip", [1]),
], ids=["candidates", "rank", "postings", "indexed_count", "item", "describe_match", "items", "describe_matches",
        "unembedded", "embeddable", "exists", "live_ids"])
def test_an_unknown_item_kind_is_invalid_input(storage, call):
    with pytest.raises(InvalidInput, match="unknown"):
        call(storage)


# --- migrations and opening -----------------------------------------------------------------------------------
@covers("archive.insert_conversation", "archive.conversation")
def test_reopening_keeps_the_data_and_applies_nothing_twice(storage):
    add_conversation(storage, "c1")
    again = RecordingStorage(storage.backend.reopen(), storage.backend, storage.calls)
    assert again.archive.conversation("c1") is not None
    third = RecordingStorage(storage.backend.reopen(), storage.backend, storage.calls)
    assert third.archive.conversation("c1").id == "c1"


@covers("meta.schema_version")
def test_a_newer_schema_is_refused_naming_both_versions(storage):
    latest = storage.backend.latest_version()
    assert storage.meta.schema_version() == latest
    storage.backend.set_schema_version(latest + 3)
    assert storage.meta.schema_version() == latest + 3
    with pytest.raises(SchemaTooNew) as raised:
        storage.backend.reopen()
    message = str(raised.value)
    assert f"version {latest + 3}" in message and f"version {latest}" in message
    assert "upgrade memfold" in message
    assert isinstance(raised.value, StorageError)


def test_another_clock_kind_is_refused(storage):
    with pytest.raises(ClockError, match="logical clock"):
        storage.backend.reopen("system")


# --- archive ------------------------------------------------------------------------------------------------------
@covers("archive.conversation", "archive.insert_conversation", "archive.conversation_ids", "archive.namespace_exists")
def test_archive_conversations(storage):
    assert storage.archive.conversation("root") is None
    assert storage.archive.conversation_ids() == []
    add_conversation(storage, "root", namespace="acme", labels=["staff"], at=3.0)
    add_conversation(storage, "a-fork", namespace="acme", family="root", parent="root", fork_after=7, at=4.0)
    root, fork = storage.archive.conversation("root"), storage.archive.conversation("a-fork")
    assert isinstance(root, ConversationRow)
    assert (root.id, root.namespace, root.family_id, root.parent_id, root.fork_after_seq, root.created_at,
            root.labels, root.metadata) == ("root", "acme", "root", None, None, 3.0, ("staff",), {})
    assert (fork.family_id, fork.parent_id, fork.fork_after_seq) == ("root", "root", 7)
    assert storage.archive.conversation_ids() == ["root", "a-fork"]  # creation order, not alphabetical
    assert storage.archive.namespace_exists("acme")
    assert not storage.archive.namespace_exists("nobody")
    add_record(storage, "a fact", namespace="records-only")
    add_protected(storage, "a rule", namespace="protected-only")
    assert storage.archive.namespace_exists("records-only")
    assert storage.archive.namespace_exists("protected-only")


@covers("archive.insert_turn", "archive.turn", "archive.turns", "archive.max_seq", "archive.conversation_turns")
def test_archive_turns_round_trip(storage):
    add_conversation(storage, "c1")
    assert storage.archive.max_seq("c1") is None
    calls = [{"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{\"order\": 7}"}}]
    first = add_turn(storage, "c1", 1, "where is order 7?", labels=["pii"], metadata='{"channel": "chat"}', at=10.0)
    second = add_turn(storage, "c1", 2, "", role="assistant", tool_calls=calls, name="bot")
    assert second > first
    t = storage.archive.turn(first)
    assert isinstance(t, Turn)
    assert (t.conversation_id, t.family_id, t.seq, t.role, t.content, t.name, t.tool_calls, t.metadata,
            t.created_at, t.tokens, t.sha256, t.labels, t.erased) == (
        "c1", "c1", 1, "user", "where is order 7?", None, None, {"channel": "chat"}, 10.0, 4,
        sha("where is order 7?"), ("pii",), False)
    t2 = storage.archive.turn(second)
    assert (t2.role, t2.tool_calls, t2.name) == ("assistant", calls, "bot")
    assert storage.archive.turn(10_000) is None
    assert storage.archive.max_seq("c1") == 2
    with storage.transaction():  # many ids at once (more than one batch)
        ids = [storage.archive.insert_turn(
            conversation_id="c1", family_id="c1", seq=seq, role="user", content=f"bulk {seq}", name=None,
            tool_call_id=None, tool_calls=None, metadata="{}", created_at=float(seq), tokens=2,
            sha256=sha(f"bulk {seq}"), labels=[]) for seq in range(3, 1203)]
    got = storage.archive.turns([*ids, 999_999, first])
    assert sorted(t.id for t in got) == sorted([*ids, first])
    assert storage.archive.turns([]) == []
    assert [t.seq for t in storage.archive.conversation_turns("c1", after_seq=1199)] == [1200, 1201, 1202]
    assert [t.seq for t in storage.archive.conversation_turns("c1", after_seq=1, upto_seq=4)] == [2, 3, 4]
    assert storage.archive.conversation_turns("nobody") == []


@covers("archive.recent_messages")
def test_archive_recent_messages_are_the_newest_own_turns_oldest_first(storage):
    add_conversation(storage, "c1")
    add_conversation(storage, "c2")
    assert storage.archive.recent_messages("c1", limit=3) == []
    for seq in range(1, 8):
        add_turn(storage, "c1", seq, f"turn {seq}", role="user" if seq % 2 else "assistant")
    add_turn(storage, "c2", 1, "elsewhere")
    assert storage.archive.recent_messages("c1", limit=3) == [
        (5, "user", "turn 5"), (6, "assistant", "turn 6"), (7, "user", "turn 7")]
    assert storage.archive.recent_messages("c1", limit=2, upto_seq=4) == [(3, "user", "turn 3"), (4, "assistant", "turn 4")]
    assert [m[0] for m in storage.archive.recent_messages("c1", limit=100)] == list(range(1, 8))
    assert storage.archive.recent_messages("c1", limit=0) == []
    assert storage.archive.recent_messages("c1", limit=5, upto_seq=0) == []
    assert storage.archive.recent_messages("c2", limit=5) == [(1, "user", "elsewhere")]
    assert storage.archive.recent_messages("nobody", limit=5) == []


@covers("archive.latest_system_turn")
def test_archive_latest_system_turn_is_the_conversations_own_newest(storage):
    add_conversation(storage, "c1")
    add_conversation(storage, "c2")
    assert storage.archive.latest_system_turn("c1") is None
    add_turn(storage, "c1", 1, "hello")
    first = add_turn(storage, "c1", 2, "be brief", role="system")
    add_turn(storage, "c1", 3, "ok", role="assistant")
    second = add_turn(storage, "c1", 4, "be polite", role="system")
    add_turn(storage, "c1", 5, "thanks")
    add_turn(storage, "c2", 1, "other rules", role="system")
    got = storage.archive.latest_system_turn("c1")
    assert isinstance(got, Turn) and (got.id, got.content, got.role) == (second, "be polite", "system")
    assert storage.archive.latest_system_turn("c1", upto_seq=3).id == first  # a fork point bounds it
    assert storage.archive.latest_system_turn("c1", upto_seq=1) is None
    assert storage.archive.latest_system_turn("nobody") is None


@covers("archive.insert_turn", "archive.keyed_turns", "archive.max_seq")
def test_archive_idempotency_keys_are_unique_per_conversation(storage):
    add_conversation(storage, "c1")
    add_conversation(storage, "c2")

    def keyed(cid, seq, content, key):
        with storage.transaction():
            return storage.archive.insert_turn(
                conversation_id=cid, family_id=cid, seq=seq, role="user", content=content, name=None,
                tool_call_id=None, tool_calls=None, metadata="{}", created_at=float(seq),
                tokens=len(content.split()), sha256=sha(content), labels=[], idempotency_key=key)

    first = keyed("c1", 1, "hello", "msg-1")
    keyed("c1", 2, "no key", None)
    keyed("c1", 3, "also no key", None)  # many turns without a key
    other = keyed("c2", 1, "hello elsewhere", "msg-1")  # the same key in another conversation
    with pytest.raises(StorageConflict) as raised:
        keyed("c1", 4, "a retry written twice", "msg-1")
    assert_translated(raised.value)
    assert storage.archive.max_seq("c1") == 3
    found = storage.archive.keyed_turns("c1", ["msg-1", "msg-unknown"])
    assert list(found) == ["msg-1"] and found["msg-1"].id == first and found["msg-1"].content == "hello"
    assert storage.archive.keyed_turns("c2", ["msg-1"])["msg-1"].id == other
    assert storage.archive.keyed_turns("c1", []) == {}
    many = storage.archive.keyed_turns("c1", [f"k{i}" for i in range(1200)] + ["msg-1"])  # more than one batch
    assert list(many) == ["msg-1"]

@covers("archive.unerased_turns", "erasure.blank_turns")
def test_archive_unerased_turns_walks_every_page(storage):
    add_conversation(storage, "a")
    add_conversation(storage, "b")
    with storage.transaction():
        ids = {"a": [], "b": []}
        for seq in range(1, 1101):
            for cid in ("a", "b"):
                ids[cid].append(storage.archive.insert_turn(
                    conversation_id=cid, family_id=cid, seq=seq, role="user", content=f"{cid} {seq}", name=None,
                    tool_call_id=None, tool_calls=None, metadata="{}", created_at=float(seq), tokens=2,
                    sha256=sha(f"{cid} {seq}"), labels=[]))
    erased = [ids["a"][0], ids["a"][999], ids["b"][5]]
    with storage.transaction():
        storage.erasure.blank_turns(erased)
    everything = [t.id for t in storage.archive.unerased_turns()]
    assert everything == sorted(set(ids["a"] + ids["b"]) - set(erased))
    only_a = list(storage.archive.unerased_turns("a"))
    assert [t.id for t in only_a] == [i for i in ids["a"] if i not in erased]
    assert all(not t.erased and t.conversation_id == "a" for t in only_a)


@covers("archive.reported_usage", "archive.set_reported_usage", "archive.clear_reported_usage")
def test_archive_reported_usage(storage):
    add_conversation(storage, "c1")
    assert storage.archive.reported_usage("c1") is None
    with storage.transaction():
        storage.archive.set_reported_usage("c1", 900, 5.0)
    assert storage.archive.reported_usage("c1") == 900
    with storage.transaction():
        storage.archive.set_reported_usage("c1", 1200, 6.0)
    assert storage.archive.reported_usage("c1") == 1200
    with storage.transaction():
        storage.archive.clear_reported_usage("c1")
    assert storage.archive.reported_usage("c1") is None


@covers("archive.add_summarizer_failure", "archive.summarizer_failures", "archive.summarizer_failure_count")
def test_archive_summarizer_failures(storage):
    add_conversation(storage, "c1")
    add_conversation(storage, "c2")
    assert storage.archive.summarizer_failures("c1") == []
    assert storage.archive.summarizer_failure_count("c1") == 0
    with storage.transaction():
        first = storage.archive.add_summarizer_failure(conversation_id="c1", at=3.0, summarizer="llm", depth=1,
                                                       first_seq=1, last_seq=4, source_tokens=80, error="timeout")
        storage.archive.add_summarizer_failure(conversation_id="c2", at=3.0, summarizer="llm", depth=1,
                                               first_seq=1, last_seq=2, source_tokens=10, error="empty")
        second = storage.archive.add_summarizer_failure(conversation_id="c1", at=4.0, summarizer="llm", depth=2,
                                                        first_seq=1, last_seq=9, source_tokens=40, error="too long")
    assert isinstance(first, SummarizerFailure) and second.id > first.id
    assert (first.conversation_id, first.at, first.summarizer, first.depth, first.first_seq, first.last_seq,
            first.source_tokens, first.error) == ("c1", 3.0, "llm", 1, 1, 4, 80, "timeout")
    assert storage.archive.summarizer_failures("c1") == [first, second]
    assert storage.archive.summarizer_failure_count("c1") == 2


@covers("archive.turn_labels", "archive.set_turn_labels")
def test_archive_turn_labels(storage):
    add_conversation(storage, "c1")
    tid = add_turn(storage, "c1", 1, "my pin is 4471", labels=["secret"])
    assert storage.archive.turn_labels(tid) == ["secret"]
    assert storage.archive.turn_labels(999) is None
    with storage.transaction():
        storage.archive.set_turn_labels(tid, ["secret", "staff"])
    assert storage.archive.turn_labels(tid) == ["secret", "staff"]
    assert storage.archive.turn(tid).content == "my pin is 4471"  # relabelling leaves the words alone


# --- cards -----------------------------------------------------------------------------------------------------------
@covers("cards.insert", "cards.get", "cards.get_many", "cards.covers", "cards.next_id")
def test_cards_insert_and_read(storage):
    turns = three_turns(storage)
    expected_id = storage.cards.next_id()
    cid = add_card(storage, "c1", turns[:2], "parcel late; refund approved", labels=["pii"], at=9.0)
    assert cid == expected_id and storage.cards.next_id() == cid + 1
    card = storage.cards.get(cid)
    assert isinstance(card, Card)
    assert (card.family_id, card.conversation_id, card.depth, card.text, card.tokens, card.source_tokens,
            card.first_turn_id, card.last_turn_id, card.first_seq, card.last_seq, card.start_at, card.end_at,
            card.labels, card.summarizer, card.created_at, card.stale, card.covers) == (
        "c1", "c1", 1, "parcel late; refund approved", 4, 10, turns[0].id, turns[1].id, 1, 2, 1.0, 2.0,
        ("pii",), "test", 9.0, False, (f"t{turns[0].id}", f"t{turns[1].id}"))
    assert storage.cards.get(cid + 100) is None
    assert storage.cards.covers(cid) == card.covers
    assert storage.cards.covers(cid + 100) == ()
    many = storage.cards.get_many([cid, cid + 100])
    assert list(many) == [cid] and many[cid].covers == () and many[cid].text == card.text
    assert storage.cards.get_many([]) == {}


@covers("cards.parents", "cards.family", "cards.get")
def test_cards_parents_and_family(storage):
    turns = three_turns(storage)
    add_conversation(storage, "other")
    other_turn = storage.archive.turn(add_turn(storage, "other", 1, "unrelated words here", family="other"))
    leaf_a = storage.cards.get(add_card(storage, "c1", turns[:2], "late; refunded"))
    leaf_b = storage.cards.get(add_card(storage, "c1", turns[2:], "ok", at=51.0))
    add_card(storage, "other", [other_turn], "unrelated", family="other")
    deep = storage.cards.get(add_card(storage, "c1", [leaf_a, leaf_b], "handled", at=52.0))
    assert deep.depth == 2 and deep.covers == (leaf_a.ref, leaf_b.ref)
    assert storage.cards.parents("turn", turns[0].id) == [leaf_a.id]
    assert storage.cards.parents("card", leaf_b.id) == [deep.id]
    assert storage.cards.parents("card", deep.id) == []
    family = storage.cards.family("c1")
    assert [c.id for c in family] == [leaf_a.id, leaf_b.id, deep.id]
    assert family[2].covers == deep.covers
    assert storage.cards.family("nobody") == []


@covers("cards.mark_stale", "cards.get")
def test_cards_mark_stale_reports_only_newly_stale_cards(storage):
    turns = three_turns(storage)
    a = add_card(storage, "c1", turns[:2], "late; refunded")
    b = add_card(storage, "c1", turns[2:], "ok")
    with storage.transaction():
        assert storage.cards.mark_stale([a]) == [a]
    with storage.transaction():
        assert sorted(storage.cards.mark_stale([a, b])) == [b]
        assert storage.cards.mark_stale([]) == []
    assert storage.cards.get(a).stale and storage.cards.get(b).stale
    assert storage.cards.get(a).text == "late; refunded"  # the words stay


# --- catalog ------------------------------------------------------------------------------------------------------
@covers("catalog.insert", "catalog.items", "catalog.totals", "catalog.last_seq")
def test_catalog_items_and_totals(storage):
    turns = three_turns(storage)
    big = storage.archive.turn(add_turn(storage, "c1", 4, " ".join(["word"] * 40)))
    assert storage.catalog.items("c1") == [] and storage.catalog.last_seq("c1") == 0
    assert storage.catalog.totals("c1", 10) == (0, [], False)
    card = storage.cards.get(add_card(storage, "c1", turns[:2], "late; refunded"))
    items = [card_item(card), turn_item(turns[2]), turn_item(big)]
    with storage.transaction():
        storage.catalog.insert("c1", list(reversed(items)))
    assert storage.catalog.items("c1") == items  # ordered by first_seq, whatever the insert order
    assert storage.catalog.last_seq("c1") == 4
    assert storage.catalog.totals("c1", 10) == (card.tokens + turns[2].tokens, [(big.id, 40)], True)
    assert storage.catalog.totals("c1", 100) == (card.tokens + turns[2].tokens + 40, [], True)
    assert storage.catalog.items("nobody") == []


@covers("catalog.refs_between", "catalog.delete_between", "catalog.insert", "catalog.items")
def test_catalog_refs_between_and_delete_between(storage):
    turns = three_turns(storage)
    with storage.transaction():
        storage.catalog.insert("c1", [turn_item(t) for t in turns])
    assert storage.catalog.refs_between("c1", 1, 2) == [("turn", turns[0].id), ("turn", turns[1].id)]
    assert storage.catalog.refs_between("c1", 5, 9) == []
    card = storage.cards.get(add_card(storage, "c1", turns[:2], "late; refunded"))
    with storage.transaction():  # the splice a fold makes
        assert storage.catalog.delete_between("c1", 1, 2) == 2
        storage.catalog.insert("c1", [card_item(card)])
    assert storage.catalog.items("c1") == [card_item(card), turn_item(turns[2])]
    with storage.transaction():
        assert storage.catalog.delete_between("c1", 7, 9) == 0


@covers("catalog.stale_cards", "catalog.insert", "cards.mark_stale")
def test_catalog_stale_cards(storage):
    turns = three_turns(storage)
    card = storage.cards.get(add_card(storage, "c1", turns[:2], "late; refunded"))
    with storage.transaction():
        storage.catalog.insert("c1", [card_item(card), turn_item(turns[2])])
    assert storage.catalog.stale_cards() == []
    with storage.transaction():
        storage.cards.mark_stale([card.id])
    assert storage.catalog.stale_cards() == [("c1", 1, card.id)]


@covers("catalog.turn_item")
def test_catalog_turn_item(storage):
    add_conversation(storage, "c1")
    calls = [{"id": "x", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    plain = add_turn(storage, "c1", 1, "hello there friend")
    tool = add_turn(storage, "c1", 2, "", role="assistant", tool_calls=calls)
    assert storage.catalog.turn_item(plain) == CatalogItem("turn", plain, 1, 1, 0, 3, "user", False)
    assert storage.catalog.turn_item(tool) == CatalogItem("turn", tool, 2, 2, 0, 0, "assistant", True)
    assert storage.catalog.turn_item(999) is None


# --- records --------------------------------------------------------------------------------------------------------
@covers("records.insert", "records.get", "records.get_many", "records.list")
def test_records_insert_get_and_list(storage):
    a = add_record(storage, "prefers email", key="user.contact", importance=0.9, at=2.0, pinned=True,
                   provenance=["turn:1"], labels=["pii"], metadata='{"source": "chat"}', event_time=1.0)
    b = add_record(storage, "visited the shop", type="episodic", at=3.0)
    c = add_record(storage, "other tenant", namespace="other", at=4.0)
    r = storage.records.get(a)
    assert isinstance(r, MemoryRecord)
    assert (r.namespace, r.type, r.key, r.content, r.importance, r.created_at, r.written_at, r.event_time,
            r.last_access_at, r.access_count, r.status, r.supersedes, r.superseded_by, r.pinned, r.provenance,
            r.labels, r.metadata) == (
        "ns", "semantic", "user.contact", "prefers email", 0.9, 2.0, 2.0, 1.0, None, 0, "active", None, None,
        True, ("turn:1",), ("pii",), {"source": "chat"})
    assert storage.records.get(999) is None
    assert set(storage.records.get_many([a, c, 999])) == {a, c}
    assert storage.records.get_many([]) == {}
    assert [x.id for x in storage.records.list()] == [a, b, c]
    assert [x.id for x in storage.records.list(namespace="ns")] == [a, b]
    assert [x.id for x in storage.records.list(namespace="ns", type="episodic")] == [b]
    assert [x.id for x in storage.records.list(key="user.contact")] == [a]
    assert [x.id for x in storage.records.list(status="retired")] == []


@covers("records.refresh", "records.get")
def test_records_refresh_rewrites_all_but_content_and_status(storage):
    a = add_record(storage, "prefers email", key="user.contact", at=2.0)
    with storage.transaction():
        storage.records.refresh(a, written_at=7.0, importance=0.8, event_time=6.0, provenance=["turn:9"],
                                labels=["staff"], metadata='{"restated": true}', pinned=True)
    r = storage.records.get(a)
    assert (r.content, r.status, r.created_at, r.written_at, r.importance, r.event_time, r.provenance, r.labels,
            r.metadata, r.pinned) == ("prefers email", "active", 2.0, 7.0, 0.8, 6.0, ("turn:9",), ("staff",),
                                      {"restated": True}, True)


@covers("records.set_status", "records.retire", "records.set_pinned", "records.get")
def test_records_status_retire_and_pin(storage):
    a, b, c = (add_record(storage, f"fact {i}") for i in range(3))
    with storage.transaction():
        storage.records.set_status(a, "evicted")
        storage.records.retire(b)
        storage.records.retire(c, superseded_by=a)
        storage.records.set_pinned(a, True)
    assert storage.records.get(a).status == "evicted" and storage.records.get(a).pinned
    assert (storage.records.get(b).status, storage.records.get(b).superseded_by) == ("retired", None)
    assert (storage.records.get(c).status, storage.records.get(c).superseded_by) == ("retired", a)
    with storage.transaction():
        storage.records.set_pinned(a, False)
    assert not storage.records.get(a).pinned
    assert storage.records.get(a).content == "fact 0"  # bytes stay


@covers("records.touch", "records.get")
def test_records_touch_counts_reads(storage):
    a, b, c = (add_record(storage, f"fact {i}") for i in range(3))
    with storage.transaction():
        storage.records.touch([a, b], 5.0)
        storage.records.touch([a], 6.0)
        storage.records.touch([], 7.0)
    assert (storage.records.get(a).access_count, storage.records.get(a).last_access_at) == (2, 6.0)
    assert (storage.records.get(b).access_count, storage.records.get(b).last_access_at) == (1, 5.0)
    assert (storage.records.get(c).access_count, storage.records.get(c).last_access_at) == (0, None)
    assert storage.records.get(a).written_at == 1.0  # a read does not reset recency


@covers("records.set_supersedes", "records.clear_supersedes", "records.set_superseded_by",
        "records.replace_superseded_by", "records.get")
def test_records_supersession_links(storage):
    old, new, newer = (add_record(storage, f"address {i}", key="user.address") for i in range(3))
    with storage.transaction():
        storage.records.set_supersedes(new, old)
        storage.records.set_superseded_by(old, new)
    assert storage.records.get(new).supersedes == old and storage.records.get(old).superseded_by == new
    with storage.transaction():
        storage.records.clear_supersedes(new, if_predecessor=newer)  # points elsewhere: unchanged
        storage.records.replace_superseded_by(old, old=newer, new=old)  # points elsewhere: unchanged
    assert storage.records.get(new).supersedes == old and storage.records.get(old).superseded_by == new
    with storage.transaction():
        storage.records.replace_superseded_by(old, old=new, new=newer)
        storage.records.clear_supersedes(new, if_predecessor=old)
    assert storage.records.get(old).superseded_by == newer and storage.records.get(new).supersedes is None
    with storage.transaction():
        storage.records.set_superseded_by(old, None)
        storage.records.set_supersedes(newer, None)
    assert storage.records.get(old).superseded_by is None and storage.records.get(newer).supersedes is None


@covers("records.active_in_slot", "records.score_rows", "records.namespaces", "records.retire")
def test_records_slots_scores_and_namespaces(storage):
    first = add_record(storage, "lives in Leeds", key="user.city", importance=0.4, at=1.0)
    second = add_record(storage, "lives in York", key="user.city", importance=0.6, at=2.0, pinned=True)
    add_record(storage, "likes tea", key="user.drink", at=3.0)
    add_record(storage, "lives in Oslo", key="user.city", namespace="b-tenant")
    add_record(storage, "a walk", type="episodic", namespace="a-tenant")
    assert [r.id for r in storage.records.active_in_slot("ns", "semantic", "user.city")] == [first, second]
    with storage.transaction():
        storage.records.retire(first, superseded_by=second)
    assert [r.id for r in storage.records.active_in_slot("ns", "semantic", "user.city")] == [second]
    assert storage.records.active_in_slot("ns", "semantic", "user.none") == []
    rows = sorted(tuple(r) for r in storage.records.score_rows("ns", "semantic"))
    assert rows[0] == (second, 0.6, 2.0, 0, 1) and len(rows) == 2  # the retired one is not scored
    assert storage.records.score_rows("ns", "procedural") == []
    assert storage.records.namespaces() == ["a-tenant", "b-tenant", "ns"]


@covers("records.policy", "records.put_policy")
def test_records_store_policies(storage):
    assert storage.records.policy("ns", "semantic") is None
    with storage.transaction():
        storage.records.put_policy("ns", "semantic", capacity=10, half_life=4.0, access_weight=0.1, updated_at=1.0)
    assert storage.records.policy("ns", "semantic") == StoredPolicy(10, 4.0, 0.1)
    with storage.transaction():
        storage.records.put_policy("ns", "semantic", capacity=None, half_life=8.0, access_weight=None,
                                   updated_at=2.0)
    assert storage.records.policy("ns", "semantic") == StoredPolicy(None, 8.0, None)
    assert storage.records.policy("ns", "episodic") is None


@covers("records.record_labels", "records.set_record_labels")
def test_records_labels(storage):
    a = add_record(storage, "salary 50k", labels=["hr"])
    assert storage.records.record_labels(a) == ["hr"]
    assert storage.records.record_labels(999) is None
    with storage.transaction():
        storage.records.set_record_labels(a, [])
    assert storage.records.record_labels(a) == []


# --- protected ------------------------------------------------------------------------------------------------------
@covers("protected.insert", "protected.get", "protected.list")
def test_protected_insert_get_and_list(storage):
    add_conversation(storage, "c1")
    a = add_protected(storage, "never call after 6pm", conversation_id="c1", due_at=9.0, provenance=["turn:1"],
                      labels=["pii"], at=2.0, metadata={"why": "asked"})
    b = add_protected(storage, "refunds need approval", kind="policy_state", namespace="other")
    p = storage.protected.get(a)
    assert isinstance(p, ProtectedRecord)
    assert (p.namespace, p.conversation_id, p.kind, p.text, p.state, p.due_at, p.provenance, p.labels, p.source,
            p.created_at, p.changed_at, p.supersedes, p.superseded_by, p.metadata) == (
        "ns", "c1", "constraint", "never call after 6pm", "active", 9.0, ("turn:1",), ("pii",), "manual", 2.0, 2.0,
        None, None, {"why": "asked"})
    assert storage.protected.get(b).metadata == {} and storage.protected.get(999) is None
    assert [x.id for x in storage.protected.list()] == [a, b]
    assert [x.id for x in storage.protected.list(namespace="other")] == [b]
    assert [x.id for x in storage.protected.list(conversation_id="c1", state="active")] == [a]
    assert storage.protected.list(state="satisfied") == []


@covers("protected.set_state", "protected.set_supersedes", "protected.set_superseded_by", "protected.set_metadata",
        "protected.get")
def test_protected_transitions_and_links(storage):
    old = add_protected(storage, "call on mondays")
    new = add_protected(storage, "call on tuesdays")
    with storage.transaction():
        storage.protected.set_superseded_by(old, new)
        storage.protected.set_supersedes(new, old)
        storage.protected.set_state(old, "superseded", changed_at=5.0)  # superseded_by kept
        storage.protected.set_metadata(new, {"confirmed": True})
    o, n = storage.protected.get(old), storage.protected.get(new)
    assert (o.state, o.changed_at, o.superseded_by, o.text) == ("superseded", 5.0, new, "call on mondays")
    assert (n.supersedes, n.metadata, n.state) == (old, {"confirmed": True}, "active")
    with storage.transaction():
        storage.protected.set_state(new, "satisfied", changed_at=6.0, superseded_by=old)
    assert (storage.protected.get(new).state, storage.protected.get(new).superseded_by) == ("satisfied", old)
    with pytest.raises(StorageError) as raised:  # a record in a final state never changes state again
        with storage.transaction():
            storage.protected.set_state(new, "active", changed_at=7.0)
    assert_translated(raised.value)
    assert storage.protected.get(new).state == "satisfied"


@covers("protected.active_in_scope", "protected.due_ids", "protected.set_state")
def test_protected_scope_and_due(storage):
    add_conversation(storage, "c1")
    add_conversation(storage, "c2")
    wide = add_protected(storage, "namespace rule", due_at=10.0)
    mine = add_protected(storage, "c1 rule", conversation_id="c1", due_at=3.0)
    theirs = add_protected(storage, "c2 rule", conversation_id="c2")
    elsewhere = add_protected(storage, "other namespace rule", namespace="other", due_at=1.0)
    done = add_protected(storage, "done rule", due_at=2.0)
    with storage.transaction():
        storage.protected.set_state(done, "satisfied", changed_at=2.0)
    assert [p.id for p in storage.protected.active_in_scope("ns", ["c1"])] == [wide, mine]
    assert [p.id for p in storage.protected.active_in_scope("ns", ["c1", "c2"])] == [wide, mine, theirs]
    assert [p.id for p in storage.protected.active_in_scope("ns", [])] == [wide]
    assert storage.protected.due_ids(3.0) == [mine, elsewhere]  # active and due, any namespace, by id
    assert storage.protected.due_ids(10.0) == [wide, mine, elsewhere]
    assert storage.protected.due_ids(0.5) == []


@covers("protected.texts_for_family", "protected.guarded_texts", "protected.live_provenance",
        "erasure.blank_protected")
def test_protected_family_texts_and_provenance(storage):
    add_conversation(storage, "root", namespace="acme")
    add_conversation(storage, "fork", namespace="acme", family="root", parent="root", fork_after=0)
    add_conversation(storage, "elsewhere", namespace="beta")
    a = add_protected(storage, "never read the PIN back", namespace="acme", conversation_id="fork",
                      provenance=["turn:1"])
    b = add_protected(storage, "VIP", namespace="acme", provenance=["turn:2", "record:1"])
    add_protected(storage, "beta only", namespace="beta", conversation_id="elsewhere")
    gone = add_protected(storage, "erased words", namespace="acme", provenance=["turn:3"])
    add_protected(storage, "", namespace="acme")
    with storage.transaction():
        storage.protected.set_state(b, "satisfied", changed_at=2.0)  # not erased: still guarded
        storage.erasure.blank_protected([gone], changed_at=3.0)
    assert sorted(storage.protected.texts_for_family("root")) == sorted(["never read the PIN back", "VIP", ""])
    assert storage.protected.guarded_texts("root", "acme") == [(a, "never read the PIN back"), (b, "VIP")]
    assert storage.protected.guarded_texts("root", "beta") == [(a, "never read the PIN back")]
    provenance = storage.protected.live_provenance()
    assert ("turn:1",) in provenance and ("turn:2", "record:1") in provenance and ("turn:3",) not in provenance


@covers("protected.protected_labels", "protected.set_protected_labels")
def test_protected_labels(storage):
    a = add_protected(storage, "hr only", labels=["hr"])
    assert storage.protected.protected_labels(a) == ["hr"]
    assert storage.protected.protected_labels(999) is None
    with storage.transaction():
        storage.protected.set_protected_labels(a, ["hr", "staff"])
    assert storage.protected.protected_labels(a) == ["hr", "staff"]
    assert storage.protected.get(a).text == "hr only"


# --- full-text --------------------------------------------------------------------------------------------------------
def search_fixture(s):
    """root (turns 1-3) forked after seq 2 into "fork" (its own turn at seq 3), a card over root's
    first two turns, three records; returns a dict of ids."""
    add_conversation(s, "root", namespace="acme")
    r1 = add_turn(s, "root", 1, "the parcel is late again", at=1.0)
    r2 = add_turn(s, "root", 2, "refund approved for the parcel", at=2.0, labels=["pii"])
    r3 = add_turn(s, "root", 3, "root only: parcel delivered", at=3.0)
    add_conversation(s, "fork", namespace="acme", family="root", parent="root", fork_after=2)
    f3 = add_turn(s, "fork", 3, "fork only: parcel returned", family="root", at=4.0)
    add_conversation(s, "beta", namespace="beta")
    b1 = add_turn(s, "beta", 1, "a parcel for another tenant", at=5.0)
    card = add_card(s, "root", s.archive.turns([r1, r2]), "parcel late, refund", family="root", at=6.0)
    rec = add_record(s, "prefers parcel lockers", namespace="acme", key="user.delivery", at=7.0)
    ep = add_record(s, "parcel complaint call", namespace="acme", type="episodic", at=8.0, labels=["staff"])
    other = add_record(s, "parcel lockers in Oslo", namespace="beta", at=9.0)
    return dict(r1=r1, r2=r2, r3=r3, f3=f3, b1=b1, card=card, rec=rec, ep=ep, other=other)


@covers("fulltext.turn_facets", "erasure.blank_turns")
def test_fulltext_turn_facets(storage):
    ids = search_fixture(storage)
    named = add_turn(storage, "beta", 2, "parcel left at the door", at=6.5, name="Dana")
    facets = storage.fulltext.turn_facets()
    assert facets == [(ids["r1"], "root", 1.0, None), (ids["r2"], "root", 2.0, None), (ids["r3"], "root", 3.0, None),
                      (ids["f3"], "fork", 4.0, None), (ids["b1"], "beta", 5.0, None), (named, "beta", 6.5, "Dana")]
    assert [f[0] for f in storage.fulltext.turn_facets(ids["f3"])] == [ids["b1"], named]  # only newer ids
    assert storage.fulltext.turn_facets(named) == []
    with storage.transaction():  # an erased turn leaves the index, and so the facets
        storage.erasure.blank_turns([ids["r2"]])
    assert ids["r2"] not in [f[0] for f in storage.fulltext.turn_facets()]


@covers("fulltext.conversation_lineage")
def test_fulltext_conversation_lineage(storage):
    search_fixture(storage)
    assert storage.fulltext.conversation_lineage("root") == [("root", None)]
    assert storage.fulltext.conversation_lineage("fork") == [("fork", None), ("root", 2)]
    assert storage.fulltext.conversation_lineage("nobody") == []


@covers("fulltext.candidates", "fulltext.conversation_lineage", "cards.mark_stale", "records.retire",
        "erasure.blank_turns")
def test_fulltext_candidates_are_scoped(storage):
    ids = search_fixture(storage)
    fork = SearchScope(lineage=tuple(storage.fulltext.conversation_lineage("fork")))
    assert sorted(storage.fulltext.candidates("turn", fork)) == [ids["r1"], ids["r2"], ids["f3"]]
    assert sorted(storage.fulltext.candidates("turn", SearchScope(namespace="beta"))) == [ids["b1"]]
    assert len(storage.fulltext.candidates("turn", SearchScope())) == 5
    assert storage.fulltext.candidates("card", fork) == [ids["card"]]
    assert storage.fulltext.candidates("card", SearchScope(namespace="beta")) == []
    assert sorted(storage.fulltext.candidates("record", SearchScope(namespace="acme"))) == [ids["rec"], ids["ep"]]
    assert storage.fulltext.candidates("record", SearchScope(namespace="acme", type="episodic")) == [ids["ep"]]
    assert storage.fulltext.candidates("record", SearchScope(key="user.delivery")) == [ids["rec"]]
    assert sorted(storage.fulltext.candidates("turn", SearchScope(since=2.0, until=4.0))) == [
        ids["r2"], ids["r3"], ids["f3"]]
    no_labels = SearchScope(namespace="acme", reader_labels=())
    assert ids["r2"] not in storage.fulltext.candidates("turn", no_labels)
    assert storage.fulltext.candidates("record", no_labels) == [ids["rec"]]
    assert sorted(storage.fulltext.candidates("record", SearchScope(namespace="acme", reader_labels=("staff",)))) == [
        ids["rec"], ids["ep"]]
    with storage.transaction():  # live items only
        storage.cards.mark_stale([ids["card"]])
        storage.records.retire(ids["rec"])
        storage.erasure.blank_turns([ids["r1"]])
    assert storage.fulltext.candidates("card", fork) == []
    assert storage.fulltext.candidates("record", SearchScope(namespace="acme")) == [ids["ep"]]
    assert ids["r1"] not in storage.fulltext.candidates("turn", fork)


@covers("fulltext.turn_sequence")
def test_fulltext_turn_sequence(storage):
    ids = search_fixture(storage)
    assert storage.fulltext.turn_sequence(SearchScope(namespace="acme")) == [
        (ids["f3"], "fork", 3), (ids["r1"], "root", 1), (ids["r2"], "root", 2), (ids["r3"], "root", 3)]
    assert storage.fulltext.turn_sequence(SearchScope(lineage=(("root", 1),))) == [(ids["r1"], "root", 1)]


@covers("fulltext.rank", "fulltext.postings", "fulltext.indexed_count", "erasure.blank_turns")
def test_fulltext_bm25_ranking(storage):
    ids = search_fixture(storage)
    match = bm25_query("parcel refund")
    ranked = storage.fulltext.rank("turn", match, SearchScope(namespace="acme"), 10)
    assert ranked[0][0] == ids["r2"]  # the only turn with both words
    assert {i for i, _ in ranked} == {ids["r1"], ids["r2"], ids["r3"], ids["f3"]}
    scores = [score for _, score in ranked]
    assert scores == sorted(scores)  # best (lowest bm25) first
    assert len(storage.fulltext.rank("turn", match, SearchScope(namespace="acme"), 2)) == 2
    assert [i for i, _ in storage.fulltext.rank("record", bm25_query("lockers"), SearchScope(namespace="beta"), 5)] == [
        ids["other"]]
    assert storage.fulltext.rank("card", bm25_query("refund"), SearchScope(), 5)[0][0] == ids["card"]
    assert storage.fulltext.rank("turn", literal_query("zebra"), SearchScope(), 5) == []
    postings = dict(storage.fulltext.postings("turn", literal_query("refund")))
    assert list(postings) == [ids["r2"]]
    assert len(storage.fulltext.postings("turn", literal_query("parcel"))) == 5  # whole index, every tenant
    assert storage.fulltext.indexed_count("turn") == 5
    assert storage.fulltext.indexed_count("card") == 1
    assert storage.fulltext.indexed_count("record") == 3
    with storage.transaction():
        storage.erasure.blank_turns([ids["r2"]])
    assert storage.fulltext.indexed_count("turn") == 4
    assert storage.fulltext.postings("turn", literal_query("refund")) == []


@covers("fulltext.item")
def test_fulltext_item(storage):
    ids = search_fixture(storage)
    turn = storage.fulltext.item("turn", ids["r2"])
    assert turn == SearchItem(kind="turn", id=ids["r2"], text="refund approved for the parcel",
                              conversation_id="root", namespace="acme", time=2.0, labels=("pii",))
    record = storage.fulltext.item("record", ids["ep"])
    assert (record.kind, record.text, record.namespace, record.type, record.key, record.time, record.labels) == (
        "record", "parcel complaint call", "acme", "episodic", None, 8.0, ("staff",))
    card = storage.fulltext.item("card", ids["card"])
    assert (card.kind, card.text, card.conversation_id, card.time) == ("card", "parcel late, refund", "root", 2.0)
    for kind, missing in (("turn", TurnNotFound), ("record", RecordNotFound), ("card", CardNotFound)):
        with pytest.raises(missing):
            storage.fulltext.item(kind, 10_000)


@covers("fulltext.items", "fulltext.item")
def test_fulltext_items_in_one_read(storage):
    ids = search_fixture(storage)
    turns = storage.fulltext.items("turn", [ids["r2"], ids["r1"], 10_000, ids["r2"]])
    assert sorted(turns) == sorted([ids["r1"], ids["r2"]])  # missing ids absent, repeats once
    assert turns[ids["r2"]] == storage.fulltext.item("turn", ids["r2"])
    records = storage.fulltext.items("record", [ids["ep"], ids["other"]])
    assert records[ids["ep"]] == storage.fulltext.item("record", ids["ep"])
    assert storage.fulltext.items("card", [ids["card"]]) == {ids["card"]: storage.fulltext.item("card", ids["card"])}
    assert storage.fulltext.items("turn", []) == {}
    many = storage.fulltext.items("turn", [ids["r1"], *range(20_000, 21_200)])  # more than one batch
    assert list(many) == [ids["r1"]]


@covers("fulltext.match_turns", "fulltext.match_cards", "fulltext.conversation_lineage", "cards.mark_stale")
def test_fulltext_matches_with_snippets_within_a_lineage(storage):
    ids = search_fixture(storage)
    fork = storage.fulltext.conversation_lineage("fork")
    found = storage.fulltext.match_turns(literal_query("parcel"), fork, 10)
    assert all(isinstance(m, TextMatch) for m in found)
    assert sorted(m.id for m in found) == [ids["r1"], ids["r2"], ids["f3"]]  # not root's turn after the fork
    refund = storage.fulltext.match_turns(literal_query("refund"), fork, 10)
    assert len(refund) == 1
    m = refund[0]
    assert (m.kind, m.id, m.first_seq, m.last_seq, m.depth, m.role, m.labels) == (
        "turn", ids["r2"], 2, 2, 0, "user", ("pii",))
    assert "[refund]" in m.snippet and m.score is not None
    assert len(storage.fulltext.match_turns(literal_query("parcel"), fork, 1)) == 1
    cards = storage.fulltext.match_cards(literal_query("refund"), "root", fork, 10)
    assert [(c.kind, c.id, c.first_seq, c.last_seq, c.depth) for c in cards] == [("card", ids["card"], 1, 2, 1)]
    assert "[refund]" in cards[0].snippet
    assert storage.fulltext.match_cards(literal_query("refund"), "beta", fork, 10) == []
    with storage.transaction():
        storage.cards.mark_stale([ids["card"]])
    assert storage.fulltext.match_cards(literal_query("refund"), "root", fork, 10) == []


@covers("fulltext.describe_matches", "fulltext.describe_match")
def test_fulltext_describe_matches_in_one_read(storage):
    ids = search_fixture(storage)
    match = literal_query("refund")
    found = storage.fulltext.describe_matches("turn", [ids["r1"], ids["r2"], 10_000], match)
    assert sorted(found) == sorted([ids["r1"], ids["r2"]])
    for turn_id in (ids["r1"], ids["r2"]):
        assert found[turn_id] == storage.fulltext.describe_match("turn", turn_id, match)
    assert found[ids["r1"]].snippet is None and "[refund]" in found[ids["r2"]].snippet
    cards = storage.fulltext.describe_matches("card", [ids["card"]], literal_query("late"))
    assert cards == {ids["card"]: storage.fulltext.describe_match("card", ids["card"], literal_query("late"))}
    assert storage.fulltext.describe_matches("turn", [], match) == {}


@covers("fulltext.describe_match")
def test_fulltext_describe_match(storage):
    ids = search_fixture(storage)
    hit = storage.fulltext.describe_match("turn", ids["r2"], literal_query("refund"))
    assert (hit.kind, hit.id, hit.score, hit.first_seq, hit.last_seq, hit.depth, hit.role) == (
        "turn", ids["r2"], None, 2, 2, 0, "user")
    assert "[refund]" in hit.snippet
    assert storage.fulltext.describe_match("turn", ids["r1"], literal_query("refund")).snippet is None
    card = storage.fulltext.describe_match("card", ids["card"], literal_query("late"))
    assert (card.first_seq, card.last_seq, card.depth, card.role) == (1, 2, 1, None) and "[late]" in card.snippet
    with pytest.raises(NotFound):
        storage.fulltext.describe_match("turn", 10_000, literal_query("refund"))


# --- vectors -----------------------------------------------------------------------------------------------------------
@covers("vectors.model", "vectors.set_model", "vectors.put", "vectors.get", "vectors.count", "vectors.version",
        "vectors.matrix", "vectors.clear")
def test_vectors_store_read_and_clear(storage):
    ids = search_fixture(storage)
    assert storage.vectors.model() is None
    assert storage.vectors.count() == 0
    empty_ids, empty = storage.vectors.matrix("turn")
    assert empty_ids.shape == (0,) and empty.shape[0] == 0
    v0 = storage.vectors.version("turn")
    vectors = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    with storage.transaction():
        storage.vectors.set_model("test-model", 4)
        storage.vectors.put("turn", [ids["r3"], ids["r1"], ids["r2"]], vectors, model_id="test-model")
        storage.vectors.put("record", [ids["rec"]], vectors[:1], model_id="test-model")
    assert storage.vectors.model() == ("test-model", 4)
    got = storage.vectors.get("turn", ids["r1"])
    assert got.dtype == np.float32 and got.shape == (4,) and np.array_equal(got, vectors[1])
    assert storage.vectors.get("turn", ids["f3"]) is None
    assert (storage.vectors.count(), storage.vectors.count("turn"), storage.vectors.count("card")) == (4, 3, 0)
    v1 = storage.vectors.version("turn")
    assert v1 != v0
    matrix_ids, matrix = storage.vectors.matrix("turn")
    assert matrix_ids.dtype == np.int64 and list(matrix_ids) == sorted([ids["r1"], ids["r2"], ids["r3"]])
    assert matrix.dtype == np.float32 and matrix.shape == (3, 4)
    assert np.array_equal(matrix[list(matrix_ids).index(ids["r3"])], vectors[0])
    with storage.transaction():  # replacing a vector changes the version too
        storage.vectors.put("turn", [ids["r1"]], np.ones((1, 4), dtype=np.float32), model_id="test-model")
    assert storage.vectors.version("turn") != v1
    assert np.array_equal(storage.vectors.get("turn", ids["r1"]), np.ones(4, dtype=np.float32))
    with storage.transaction():
        assert storage.vectors.clear() == 4
    assert storage.vectors.model() is None and storage.vectors.count() == 0


@covers("vectors.unembedded", "vectors.embeddable", "vectors.embeddable_among", "vectors.put", "erasure.blank_turns",
        "erasure.blank_records", "erasure.blank_cards", "vectors.count")
def test_vectors_unembedded_and_embeddable_are_live_items(storage):
    ids = search_fixture(storage)
    turns = [ids["r1"], ids["r2"], ids["r3"], ids["f3"], ids["b1"]]
    unknown = max(turns) + 1000
    assert storage.vectors.embeddable_among("turn", [*turns, unknown]) == set(turns)
    assert storage.vectors.embeddable_among("card", [ids["card"]]) == {ids["card"]}
    assert storage.vectors.embeddable_among("record", [ids["rec"], ids["ep"]]) == {ids["rec"], ids["ep"]}
    assert storage.vectors.embeddable_among("turn", []) == set()
    assert [i for i, _ in storage.vectors.embeddable("turn")] == turns
    assert storage.vectors.unembedded("turn") == storage.vectors.embeddable("turn")
    assert storage.vectors.unembedded("turn", limit=2) == [(ids["r1"], "the parcel is late again"),
                                                           (ids["r2"], "refund approved for the parcel")]
    with storage.transaction():
        storage.vectors.put("turn", [ids["r1"]], np.ones((1, 3), dtype=np.float32), model_id="m")
        storage.vectors.put("card", [ids["card"]], np.ones((1, 3), dtype=np.float32), model_id="m")
        storage.vectors.put("record", [ids["rec"]], np.ones((1, 3), dtype=np.float32), model_id="m")
    assert [i for i, _ in storage.vectors.unembedded("turn")] == turns[1:]
    assert storage.vectors.unembedded("card") == []
    assert [i for i, _ in storage.vectors.unembedded("record")] == [ids["ep"], ids["other"]]
    with storage.transaction():  # erased words take their vectors with them and never come back
        storage.erasure.blank_turns([ids["r1"], ids["r2"]])
        storage.erasure.blank_records([ids["rec"]])
        storage.erasure.blank_cards([ids["card"]])
    assert storage.vectors.count() == 0
    assert [i for i, _ in storage.vectors.embeddable("turn")] == turns[2:]
    assert [i for i, _ in storage.vectors.unembedded("turn")] == turns[2:]
    assert [i for i, _ in storage.vectors.embeddable("record")] == [ids["ep"], ids["other"]]
    assert storage.vectors.embeddable("card") == [] and storage.vectors.unembedded("card") == []
    # an erased item is not among the embeddable ones (the index stores nothing for it)
    assert storage.vectors.embeddable_among("turn", turns) == set(turns[2:])
    assert storage.vectors.embeddable_among("record", [ids["rec"], ids["ep"]]) == {ids["ep"]}
    assert storage.vectors.embeddable_among("card", [ids["card"]]) == set()


@covers("vectors.mark", "vectors.since", "vectors.put")
def test_vectors_since_a_mark_are_the_ones_written_after_it(storage):
    ids = search_fixture(storage)
    assert storage.vectors.mark("turn") == 0 and storage.vectors.since("turn", 0) == []
    with storage.transaction():
        storage.vectors.put("turn", [ids["r1"], ids["b1"]], np.eye(2, 3, dtype=np.float32), model_id="m")
        storage.vectors.put("record", [ids["rec"]], np.ones((1, 3), dtype=np.float32), model_id="m")
    first = storage.vectors.since("turn", 0)
    assert [(i, g) for _, i, g, _ in first] == [(ids["r1"], "root"), (ids["b1"], "beta")]
    assert np.array_equal(first[1][3], np.eye(2, 3, dtype=np.float32)[1]) and first[1][3].dtype == np.float32
    mark = storage.vectors.mark("turn")
    assert mark == first[-1][0] and storage.vectors.since("turn", mark) == []
    assert [(i, g) for _, i, g, _ in storage.vectors.since("record", 0)] == [(ids["rec"], "acme")]
    with storage.transaction():  # a replaced vector comes again, after the mark
        storage.vectors.put("turn", [ids["r1"]], np.full((1, 3), 0.5, dtype=np.float32), model_id="m")
    again = storage.vectors.since("turn", mark)
    assert [i for _, i, _, _ in again] == [ids["r1"]] and again[0][0] > mark
    assert storage.vectors.mark("turn") == again[0][0]


@covers("vectors.unembedded", "vectors.newest_item", "vectors.put")
def test_vectors_unembedded_after_an_id_and_the_newest_item(storage):
    ids = search_fixture(storage)
    assert storage.vectors.newest_item("turn") == max(ids[k] for k in ("r1", "r2", "r3", "f3", "b1"))
    assert storage.vectors.newest_item("card") == ids["card"]
    assert storage.vectors.newest_item("record") == ids["other"]
    assert [i for i, _ in storage.vectors.unembedded("turn", after_id=ids["r3"])] == [
        i for i in (ids["f3"], ids["b1"]) if i > ids["r3"]]
    with storage.transaction():
        storage.vectors.put("turn", [ids["f3"]], np.ones((1, 3), dtype=np.float32), model_id="m")
    assert ids["f3"] not in [i for i, _ in storage.vectors.unembedded("turn", after_id=ids["r1"])]


@covers("fulltext.documents", "fulltext.occurrences", "erasure.blank_turns")
def test_fulltext_documents_and_occurrences(storage):
    ids = search_fixture(storage)
    docs = storage.fulltext.documents("turn")
    assert [(i, g, q) for i, _, g, q in docs] == [(ids["r1"], "root", 1), (ids["r2"], "root", 2),
                                                  (ids["r3"], "root", 3), (ids["f3"], "fork", 3),
                                                  (ids["b1"], "beta", 1)]
    assert [n for _, n, _, _ in docs] == [5, 5, 4, 4, 5]  # index tokens ("root only: parcel delivered" is 4)
    assert [i for i, *_ in storage.fulltext.documents("turn", ids["r3"])] == [ids["f3"], ids["b1"]]
    assert [(i, g, q) for i, _, g, q in storage.fulltext.documents("card")] == [(ids["card"], "root", 2)]
    assert {g for _, _, g, _ in storage.fulltext.documents("record")} == {"acme", "beta"}
    assert sorted(storage.fulltext.occurrences("turn", "parcel")) == sorted(ids[k] for k in ("r1", "r2", "r3", "f3", "b1"))
    assert storage.fulltext.occurrences("turn", "refund") == [ids["r2"]]
    assert sorted(storage.fulltext.occurrences("turn", "re", prefix=True)) == [ids["r2"], ids["f3"]]  # refund, returned
    assert storage.fulltext.occurrences("turn", "re") == []
    add_turn(storage, "beta", 2, "parcel parcel parcel", at=6.0)
    assert storage.fulltext.occurrences("turn", "parcel").count(ids["b1"] + 1) in (0, 3)
    with storage.transaction():  # an erased turn leaves the index
        storage.erasure.blank_turns([ids["r2"]])
    assert storage.fulltext.occurrences("turn", "refund") == []


@covers("fulltext.term_frequencies", "fulltext.occurrences", "erasure.blank_turns")
def test_fulltext_term_frequencies_count_each_items_occurrences(storage):
    ids = search_fixture(storage)
    every = ["parcel", "refund", "re", "deliv", "nothinglikethis"]
    for token in every:  # the same counts as the occurrence lists, per item, as int64 arrays by id
        for prefix in (False, True):
            found, counts = storage.fulltext.term_frequencies("turn", token, prefix=prefix)
            assert found.dtype == np.int64 and counts.dtype == np.int64
            assert list(found) == sorted(found) and len(set(found.tolist())) == len(found)
            expected = Counter(storage.fulltext.occurrences("turn", token, prefix=prefix))
            assert dict(zip(found.tolist(), counts.tolist())) == dict(expected), (token, prefix)
    found, counts = storage.fulltext.term_frequencies("turn", "re", prefix=True)
    assert found.tolist() == sorted([ids["r2"], ids["f3"]]) and counts.tolist() == [1, 1]  # refund, returned
    assert storage.fulltext.term_frequencies("turn", "re")[0].tolist() == []
    new = add_turn(storage, "beta", 2, "parcel parcel parcel", at=6.0)
    found, counts = storage.fulltext.term_frequencies("turn", "parcel")
    assert dict(zip(found.tolist(), counts.tolist()))[new] == 3
    with storage.transaction():  # an erased turn leaves the index
        storage.erasure.blank_turns([ids["r2"]])
    assert storage.fulltext.term_frequencies("turn", "refund")[0].tolist() == []
    assert storage.fulltext.term_frequencies("card", "parcel")[0].dtype == np.int64


@covers("fulltext.labelled", "erasure.blank_turns")
def test_fulltext_labelled_lists_the_items_requiring_a_label(storage):
    ids = search_fixture(storage)
    assert storage.fulltext.labelled("turn") == [ids["r2"]]
    assert storage.fulltext.labelled("turn", ids["r2"]) == []
    assert storage.fulltext.labelled("turn", 0, ids["r1"]) == []
    more = add_turn(storage, "beta", 2, "parcel for staff", at=6.0, labels=["staff", "pii"])
    add_turn(storage, "beta", 3, "parcel for all", at=7.0)
    assert storage.fulltext.labelled("turn") == [ids["r2"], more]
    assert storage.fulltext.labelled("turn", ids["r2"], more) == [more]
    assert storage.fulltext.labelled("turn", ids["r2"], more - 1) == []
    assert storage.fulltext.labelled("card") == []
    assert storage.fulltext.labelled("record") == [ids["ep"]]
    with storage.transaction():  # an erased turn leaves the index
        storage.erasure.blank_turns([ids["r2"]])
    assert storage.fulltext.labelled("turn") == [more]
    with pytest.raises(InvalidInput):
        storage.fulltext.labelled("protected")


@covers("fulltext.term_frequencies_after", "fulltext.term_frequencies", "erasure.blank_turns")
def test_fulltext_term_frequencies_after_counts_only_the_newer_items(storage):
    ids = search_fixture(storage)
    # ASCII texts (SQLite splits them itself) and a text with diacritics and case to fold (SQLite
    # walks the occurrence lists): the same counts as term_frequencies over the newer ids, either way
    texts = ["Parcel, PARCEL: parcels delivered", "no match here", "Ré-livraison du parcel: Réponse reçue",
             "refund_parcel42 re re"]
    tokens = [("parcel", False), ("parcel", True), ("re", True), ("re", False), ("reponse", False),
              ("nothinglikethis", True)]
    for after_key, extra in (("b1", texts[:2] + texts[3:]), ("r3", texts)):
        for text in extra:
            add_turn(storage, "beta", 10 + len(storage.fulltext.documents("turn")), text, at=20.0)
        after = ids[after_key]
        got = storage.fulltext.term_frequencies_after("turn", tokens, after)
        assert len(got) == len(tokens)
        for (token, prefix), (found, counts) in zip(tokens, got):
            every, n = storage.fulltext.term_frequencies("turn", token, prefix=prefix)
            assert found.dtype == np.int64 and counts.dtype == np.int64
            assert found.tolist() == [i for i in every.tolist() if i > after], (token, prefix)
            assert counts.tolist() == [c for i, c in zip(every.tolist(), n.tolist()) if i > after], (token, prefix)
    newest = storage.fulltext.documents("turn")[-1][0]
    assert all(len(f) == 0 for f, _ in storage.fulltext.term_frequencies_after("turn", tokens, newest))
    [(found, counts)] = storage.fulltext.term_frequencies_after("turn", [("parcel", False)], ids["b1"])
    first = found.tolist()[0]
    assert counts.tolist()[0] == 2  # "Parcel, PARCEL: parcels": two of the word, "parcels" is another
    with storage.transaction():  # an erased turn leaves the index, and so the newer counts
        storage.erasure.blank_turns([first])
    assert first not in storage.fulltext.term_frequencies_after("turn", [("parcel", False)], ids["b1"])[0][0].tolist()
    assert storage.fulltext.term_frequencies_after("card", [("parcel", False)], 0)[0][0].tolist() == [ids["card"]]
    assert storage.fulltext.term_frequencies_after("turn", [], 0) == []
    with pytest.raises(InvalidInput):
        storage.fulltext.term_frequencies_after("protected", [("parcel", False)], 0)


@covers("fulltext.indexed", "erasure.blank_turns", "erasure.blank_records", "erasure.blank_cards", "cards.mark_stale")
def test_fulltext_indexed_says_which_items_have_an_index_entry(storage):
    ids = search_fixture(storage)
    turns = [ids[k] for k in ("r1", "r2", "r3", "f3", "b1")]
    assert storage.fulltext.indexed("turn", turns + [10_000]) == set(turns)  # an unknown id has none
    assert storage.fulltext.indexed("turn", []) == set()
    assert storage.fulltext.indexed("card", [ids["card"], ids["r1"] + 10_000]) == {ids["card"]}
    assert storage.fulltext.indexed("record", [ids["rec"], ids["ep"], ids["other"]]) == {ids["rec"], ids["ep"], ids["other"]}
    many = [add_turn(storage, "beta", 2 + i, f"parcel {i}", at=10.0 + i) for i in range(600)]  # more than one batch
    assert storage.fulltext.indexed("turn", many) == set(many)
    with storage.transaction():
        storage.cards.mark_stale([ids["card"]])  # stale is not gone: a stale card keeps its entry
    assert storage.fulltext.indexed("card", [ids["card"]]) == {ids["card"]}
    with storage.transaction():  # erasure drops the entries
        storage.erasure.blank_turns([ids["r2"], many[0]])
        storage.erasure.blank_records([ids["ep"]])
        storage.erasure.blank_cards([ids["card"]])
    assert storage.fulltext.indexed("turn", turns + many) == set(turns + many) - {ids["r2"], many[0]}
    assert storage.fulltext.indexed("record", [ids["rec"], ids["ep"]]) == {ids["rec"]}
    assert storage.fulltext.indexed("card", [ids["card"]]) == set()
    with pytest.raises(InvalidInput):
        storage.fulltext.indexed("protected", [1])


@covers("fulltext.visible", "fulltext.conversation_lineage", "cards.mark_stale")
def test_fulltext_visible_checks_scope_labels_and_liveness(storage):
    ids = search_fixture(storage)
    fork = SearchScope(lineage=tuple(storage.fulltext.conversation_lineage("fork")))
    every = [ids[k] for k in ("r1", "r2", "r3", "f3", "b1")]
    assert storage.fulltext.visible("turn", fork, every) == {ids["r1"], ids["r2"], ids["f3"]}
    assert storage.fulltext.visible("turn", SearchScope(lineage=fork.lineage, reader_labels=()), every) == {
        ids["r1"], ids["f3"]}
    assert storage.fulltext.visible("turn", SearchScope(), []) == set()
    assert storage.fulltext.visible("record", SearchScope(namespace="acme"), [ids["rec"], ids["ep"], ids["other"]]) == {
        ids["rec"], ids["ep"]}
    with storage.transaction():
        storage.cards.mark_stale([ids["card"]])
    assert storage.fulltext.visible("card", fork, [ids["card"]]) == set()


def put_nearest_fixture(storage, ids):
    """Vectors for nearest-neighbour tests (3 dimensions, model claimed, so PostgreSQL indexes them)."""
    turns = {"r1": [1, 0, 0], "r2": [0.9, 0.1, 0], "r3": [0, 1, 0], "f3": [0.8, 0.2, 0], "b1": [1, 0, 0.05]}
    with storage.transaction():
        storage.vectors.set_model("m", 3)
        storage.vectors.put("turn", [ids[k] for k in turns], np.array(list(turns.values()), dtype=np.float32),
                            model_id="m")
        storage.vectors.put("card", [ids["card"]], np.array([[2, 0, 0]], dtype=np.float32), model_id="m")
        storage.vectors.put("record", [ids["rec"], ids["ep"], ids["other"]],
                            np.array([[0, 0, 1], [0.5, 0, 0.5], [0, 0, 2]], dtype=np.float32), model_id="m")


@covers("vectors.nearest", "vectors.set_model", "vectors.put", "fulltext.conversation_lineage",
        "erasure.blank_turns", "cards.mark_stale")
def test_vectors_nearest_ranks_by_cosine_inside_the_scope(storage):
    ids = search_fixture(storage)
    q = np.array([1, 0, 0], dtype=np.float32)
    assert storage.vectors.nearest("turn", q, SearchScope(), limit=5) == []  # no vectors yet
    put_nearest_fixture(storage, ids)

    def near(kind, scope=SearchScope(), limit=10, query=q):
        found = storage.vectors.nearest(kind, query, scope, limit=limit)
        assert all(isinstance(i, int) and isinstance(s, float) for i, s in found)
        return [i for i, _ in found], [round(s, 4) for _, s in found]

    assert near("turn") == ([ids["r1"], ids["b1"], ids["r2"], ids["f3"], ids["r3"]],
                            [1.0, 0.9988, 0.9939, 0.9701, 0.0])
    assert near("turn", limit=2)[0] == [ids["r1"], ids["b1"]]
    assert near("turn", SearchScope(namespace="acme"))[0] == [ids["r1"], ids["r2"], ids["f3"], ids["r3"]]
    fork = tuple(storage.fulltext.conversation_lineage("fork"))
    assert near("turn", SearchScope(lineage=fork))[0] == [ids["r1"], ids["r2"], ids["f3"]]  # root up to seq 2
    assert near("turn", SearchScope(lineage=fork, reader_labels=()))[0] == [ids["r1"], ids["f3"]]  # r2 needs pii
    assert near("turn", SearchScope(lineage=fork, reader_labels=()), limit=1)[0] == [ids["r1"]]
    assert near("turn", SearchScope(since=2.0, until=4.0))[0] == [ids["r2"], ids["f3"], ids["r3"]]
    assert near("card") == ([ids["card"]], [1.0])  # cosine, not the dot product: the card's vector is 2 long
    up = np.array([0, 0, 3], dtype=np.float32)  # the query need not be a unit vector either
    assert near("record", query=up) == ([ids["rec"], ids["other"], ids["ep"]], [1.0, 1.0, 0.7071])  # a tie: by id
    assert near("record", SearchScope(namespace="acme"), query=up)[0] == [ids["rec"], ids["ep"]]
    assert near("record", SearchScope(namespace="acme", reader_labels=()), query=up)[0] == [ids["rec"]]
    assert near("record", SearchScope(namespace="acme", type="episodic"), query=up)[0] == [ids["ep"]]
    assert near("turn", limit=0)[0] == []
    with storage.transaction():  # erased and stale items are gone from the ranking
        storage.erasure.blank_turns([ids["r1"]])
        storage.cards.mark_stale([ids["card"]])
    assert near("turn", limit=2)[0] == [ids["b1"], ids["r2"]]
    assert near("card") == ([], [])
    with pytest.raises(InvalidInput):
        storage.vectors.nearest("gossip", q, SearchScope(), limit=3)


@covers("vectors.nearest", "vectors.set_model", "vectors.put")
def test_vectors_nearest_refills_when_the_nearest_are_out_of_scope(storage):
    """Sixty turns of another tenant sit closer to the query than any of acme's five: a namespace
    search still returns ``limit`` acme turns (an index asked only for the nearest few would find
    none of them)."""
    add_conversation(storage, "acme-1", namespace="acme")
    add_conversation(storage, "beta-1", namespace="beta")
    mine = [add_turn(storage, "acme-1", seq, f"acme turn {seq}") for seq in range(1, 6)]
    theirs = [add_turn(storage, "beta-1", seq, f"beta turn {seq}") for seq in range(1, 61)]
    rng = np.random.default_rng(7)
    near_q = np.hstack([np.ones((60, 1)), 0.05 * rng.random((60, 7))]).astype(np.float32)
    far_q = np.hstack([0.2 * np.ones((5, 1)), rng.random((5, 7)) + 0.5]).astype(np.float32)
    with storage.transaction():
        storage.vectors.set_model("m", 8)
        storage.vectors.put("turn", theirs, near_q, model_id="m")
        storage.vectors.put("turn", mine, far_q, model_id="m")
    q = np.eye(1, 8, dtype=np.float32)[0]
    found = storage.vectors.nearest("turn", q, SearchScope(namespace="acme"), limit=3)
    unit = far_q / np.linalg.norm(far_q, axis=1, keepdims=True)
    best = [mine[i] for i in np.argsort(-unit[:, 0], kind="stable")[:3]]
    assert [i for i, _ in found] == best
    assert len(storage.vectors.nearest("turn", q, SearchScope(namespace="acme"), limit=50)) == 5
    assert set(i for i, _ in storage.vectors.nearest("turn", q, SearchScope(), limit=60)) == set(theirs)


@covers("vectors.similarity", "vectors.put", "erasure.blank_turns")
def test_vectors_similarity_of_given_items(storage):
    ids = search_fixture(storage)
    put_nearest_fixture(storage, ids)
    q = np.array([2, 0, 0], dtype=np.float32)
    got = storage.vectors.similarity("turn", q, [ids["r3"], ids["r1"], ids["r2"], ids["r1"], 10 ** 9])
    assert set(got) == {ids["r1"], ids["r2"], ids["r3"]}  # no entry for an id without a vector
    assert {k: round(v, 4) for k, v in got.items()} == {ids["r1"]: 1.0, ids["r2"]: 0.9939, ids["r3"]: 0.0}
    assert storage.vectors.similarity("record", np.array([0, 0, 1], dtype=np.float32), [ids["other"]]) == {
        ids["other"]: pytest.approx(1.0)}
    assert storage.vectors.similarity("card", q, []) == {}
    with storage.transaction():
        storage.erasure.blank_turns([ids["r1"]])
    assert set(storage.vectors.similarity("turn", q, [ids["r1"], ids["r2"]])) == {ids["r2"]}
    with pytest.raises(InvalidInput):
        storage.vectors.similarity("gossip", q, [1])


# --- events ---------------------------------------------------------------------------------------------------------------
@covers("events.append", "events.list")
def test_events_append_and_list(storage):
    with storage.transaction():
        first = storage.events.append(at=1.0, kind="write", subject="record:1", namespace="ns", record_id=1,
                                      cause="remember", details={"b": 2, "a": 1})
        storage.events.append(at=2.0, kind="retire", subject="record:1", namespace="ns", record_id=1)
        storage.events.append(at=3.0, kind="write", subject="record:2", namespace="other", record_id=2)
        last = storage.events.append(at=4.0, kind="fold", subject="conversation:c1")
    events = storage.events.list()
    assert [e.at for e in events] == [1.0, 2.0, 3.0, 4.0] and events[-1].id == last
    e = events[0]
    assert isinstance(e, Event)
    assert (e.id, e.at, e.kind, e.namespace, e.subject, e.record_id, e.cause, e.details) == (
        first, 1.0, "write", "ns", "record:1", 1, "remember", {"a": 1, "b": 2})
    assert (events[-1].namespace, events[-1].record_id, events[-1].cause, events[-1].details) == (None, None, "", {})
    assert [x.at for x in storage.events.list(namespace="ns")] == [1.0, 2.0]
    assert [x.at for x in storage.events.list(record_id=1, kind="retire")] == [2.0]
    assert [x.at for x in storage.events.list(kind="write")] == [1.0, 3.0]
    assert [x.at for x in storage.events.list(limit=2)] == [3.0, 4.0]  # the newest two, in order
    assert storage.events.list(kind="nothing") == []


# --- erasure -------------------------------------------------------------------------------------------------------------
@covers("erasure.exists", "erasure.conversation_exists", "erasure.namespace_ids", "erasure.conversation_ids",
        "erasure.citing_ids", "erasure.has_cards", "erasure.blank_records")
def test_erasure_resolves_a_scope(storage):
    add_conversation(storage, "c1", namespace="acme")
    add_conversation(storage, "c2", namespace="acme")
    add_conversation(storage, "b1", namespace="beta")
    t1, t2 = add_turn(storage, "c1", 1, "my pin is 4471"), add_turn(storage, "c1", 2, "thanks")
    t3 = add_turn(storage, "c2", 1, "hello")
    t4 = add_turn(storage, "b1", 1, "other tenant")
    r1 = add_record(storage, "pin 4471", namespace="acme", provenance=[f"turn:{t1}"])
    r2 = add_record(storage, "no source", namespace="acme")
    p1 = add_protected(storage, "never read the pin back", namespace="acme", conversation_id="c1",
                       provenance=[f"turn:{t1}", "record:9"])
    p2 = add_protected(storage, "namespace wide", namespace="acme")
    assert storage.erasure.exists("turn", t1) and storage.erasure.exists("record", r1)
    assert storage.erasure.exists("protected", p1) and not storage.erasure.exists("turn", 999)
    with storage.transaction():
        storage.erasure.blank_records([r2])
    assert storage.erasure.exists("record", r2)  # erased rows still exist
    assert storage.erasure.conversation_exists("c1") and not storage.erasure.conversation_exists("nobody")
    turns, records, protected = storage.erasure.namespace_ids("acme")
    assert (sorted(turns), sorted(records), sorted(protected)) == ([t1, t2, t3], [r1, r2], [p1, p2])
    assert storage.erasure.namespace_ids("nobody") == ([], [], [])
    turns, protected = storage.erasure.conversation_ids("c1")
    assert (sorted(turns), sorted(protected)) == ([t1, t2], [p1])
    assert storage.erasure.citing_ids([t1, t4]) == ({r1}, {p1})
    assert storage.erasure.citing_ids([t2]) == (set(), set())
    assert storage.erasure.has_cards()


@covers("erasure.live_ids", "erasure.live_card_ids", "erasure.blank_turns", "erasure.blank_records",
        "erasure.blank_protected", "erasure.blank_cards", "erasure.secure_delete", "archive.turn", "records.get",
        "protected.get", "cards.get", "fulltext.match_turns", "fulltext.match_cards", "fulltext.rank")
def test_erasure_blanks_every_family(storage):
    ids = search_fixture(storage)
    p = add_protected(storage, "parcel pin rule", namespace="acme")
    assert storage.erasure.live_ids("turn", [ids["r3"], ids["r1"], 999]) == [ids["r1"], ids["r3"]]
    assert storage.erasure.live_card_ids([ids["card"]]) == [ids["card"]]
    storage.erasure.secure_delete()  # outside a transaction: from now on
    with storage.transaction():
        storage.erasure.secure_delete()  # inside one: left as it is, no error
        storage.erasure.blank_turns([ids["r1"]])
        storage.erasure.blank_turns([ids["r1"]])  # erasing twice is harmless
        storage.erasure.blank_records([ids["rec"]])
        storage.erasure.blank_protected([p], changed_at=9.0)
        storage.erasure.blank_cards([ids["card"]])
    t = storage.archive.turn(ids["r1"])
    assert (t.content, t.erased, t.sha256, t.tool_calls, t.name) == ("", True, "erased", None, None)
    r = storage.records.get(ids["rec"])
    assert (r.content, r.status, r.metadata) == ("", "erased", {})
    pr = storage.protected.get(p)
    assert (pr.text, pr.state, pr.changed_at, pr.metadata) == ("", "erased", 9.0, {})
    c = storage.cards.get(ids["card"])
    assert (c.text, c.tokens) == ("", 0)
    assert storage.erasure.live_ids("turn", [ids["r1"], ids["r3"]]) == [ids["r3"]]
    assert storage.erasure.live_ids("record", [ids["rec"], ids["ep"]]) == [ids["ep"]]
    assert storage.erasure.live_ids("protected", [p]) == []
    assert storage.erasure.live_card_ids([ids["card"]]) == []
    lineage = [("root", None)]
    assert ids["r1"] not in [m.id for m in storage.fulltext.match_turns(literal_query("late"), lineage, 10)]
    assert storage.fulltext.match_cards(literal_query("refund"), "root", lineage, 10) == []
    assert storage.fulltext.rank("record", literal_query("lockers"), SearchScope(namespace="acme"), 5) == []


@covers("erasure.vacuum", "erasure.blank_turns", "transaction", "archive.turn")
def test_erasure_vacuum_runs_outside_transactions_only(storage):
    ids = search_fixture(storage)
    with storage.transaction():
        storage.erasure.blank_turns([ids["r1"]])
        with pytest.raises(StorageError, match="transaction"):
            storage.erasure.vacuum()
    storage.erasure.vacuum()
    assert storage.archive.turn(ids["r2"]).content == "refund approved for the parcel"
    assert storage.archive.turn(ids["r1"]).erased


@covers("erasure.citing_sources", "erasure.blank_records", "records.get")
def test_erasure_follows_record_provenance_and_blanks_slot_keys(storage):
    """Issue 15: a fact consolidated from an episode cites ``record:<id>``; an erased record's
    slot key (which may be built from content) goes with it."""
    add_conversation(storage, "c1", namespace="acme")
    t1 = add_turn(storage, "c1", 1, "I love kayaking")
    ep = add_record(storage, "episode: I love kayaking", namespace="acme", type="episodic")
    fact = add_record(storage, "likes kayaking", namespace="acme", key="user.preference.kayaking",
                      provenance=[f"record:{ep}"])
    from_turn = add_record(storage, "from the turn", namespace="acme", provenance=[f"turn:{t1}"])
    p1 = add_protected(storage, "never mention kayaking", namespace="acme", provenance=[f"record:{ep}"])
    assert storage.erasure.citing_sources([f"record:{ep}"]) == ({fact}, {p1})
    assert storage.erasure.citing_sources([f"turn:{t1}", f"record:{ep}"]) == ({fact, from_turn}, {p1})
    assert storage.erasure.citing_sources([]) == (set(), set())
    assert storage.erasure.citing_sources(["record:999"]) == (set(), set())
    with storage.transaction():
        storage.erasure.blank_records([fact])
    r = storage.records.get(fact)
    assert (r.content, r.key, r.status) == ("", None, "erased")


@covers("erasure.scrub_events", "events.append", "events.list")
def test_erasure_scrubs_the_events_about_erased_items(storage):
    with storage.transaction():
        storage.events.append(at=1.0, kind="write", subject="record:7", namespace="acme", record_id=7,
                              details={"type": "semantic", "key": "user.preference.kayaking"})
        storage.events.append(at=2.0, kind="retire", subject="record:3", namespace="acme", record_id=3,
                              details={"key": "user.preference.kayaking"}, cause="superseded")
        storage.events.append(at=3.0, kind="protect", subject="protected:4", namespace="acme", details={"kind": "x"})
        storage.events.append(at=4.0, kind="write", subject="record:8", namespace="acme", record_id=8,
                              details={"key": "user.name"})
        storage.events.append(at=5.0, kind="erase", subject="erasure:1", details={"records": [7]})
    with storage.transaction():
        n = storage.erasure.scrub_events(subjects=["protected:4"], record_ids=[7], texts=["user.preference.kayaking"])
    assert n == 3
    events = storage.events.list()
    assert [(e.at, e.kind, e.subject) for e in events] == [(1.0, "write", "record:7"), (2.0, "retire", "record:3"),
                                                           (3.0, "protect", "protected:4"), (4.0, "write", "record:8"),
                                                           (5.0, "erase", "erasure:1")]
    assert [e.details for e in events[:3]] == [{"erased": True}] * 3 and events[1].cause == ""
    assert events[3].details == {"key": "user.name"} and events[4].details == {"records": [7]}
    with storage.transaction():
        assert storage.erasure.scrub_events(subjects=[], record_ids=[], texts=[]) == 0


@covers("erasure.scrub_replaced_texts", "erasure.blank_protected", "protected.get")
def test_erasure_scrubs_replaced_texts(storage):
    old = add_protected(storage, "ship only to the Leeds depot", namespace="acme")
    keep = add_protected(storage, "call before noon", namespace="acme")
    new = add_protected(storage, "ship to Manchester", namespace="acme",
                        metadata={"replaces": [old, keep], "replaces_text": ["ship only to the Leeds depot",
                                                                             "call before noon"]})
    other = add_protected(storage, "unrelated", namespace="acme")
    with storage.transaction():
        assert storage.erasure.scrub_replaced_texts([old]) == 1
        storage.erasure.blank_protected([old], changed_at=2.0)
    meta = storage.protected.get(new).metadata
    assert meta["replaces_text"] == ["call before noon"] and meta["replaces"] == [keep]
    assert meta["replaces_erased"] == [old]
    assert storage.protected.get(other).metadata == {}
    with storage.transaction():
        assert storage.erasure.scrub_replaced_texts([]) == 0


@covers("erasure.fts_integrity", "erasure.blank_turns", "erasure.blank_records", "erasure.blank_cards")
def test_full_text_indexes_pass_their_integrity_check_after_erasure(storage):
    ids = search_fixture(storage)
    assert storage.erasure.fts_integrity() == []
    with storage.transaction():
        storage.erasure.blank_turns([ids["r1"]])
        storage.erasure.blank_records([ids["rec"]])
        storage.erasure.blank_cards([ids["card"]])
    assert storage.erasure.fts_integrity() == []
    storage.erasure.vacuum()
    assert storage.erasure.fts_integrity() == []


@covers("meta.state_version", "meta.set")
def test_state_version_changes_with_every_commit_from_any_handle(storage):
    """Issue 15, point 6: the compiled-context cache keys on it, so equal values must mean that
    nothing was committed in between, by this handle or another one."""
    first = storage.meta.state_version()
    assert storage.meta.state_version() == first  # reads change nothing
    with storage.transaction():
        storage.meta.set("a", "1")
    second = storage.meta.state_version()
    assert second != first and storage.meta.state_version() == second
    other = storage.other()
    with other.transaction():
        other.meta.set("b", "2")
    assert storage.meta.state_version() != second


@covers("writers_held", "meta.only_own_commits", "meta.state_version", "meta.set")
def test_only_own_commits_tells_another_handles_commit_apart(storage):
    """Round 9 QA: the compiled-context cache keeps a compile only when nobody else committed
    while it ran. Inside ``writers_held``: no change is known to be the caller's own; a commit by
    another connection never is (a backend that cannot tell its own commits apart says False for
    them too, which only costs the cache a miss)."""
    with storage.writers_held():
        first = storage.meta.state_version()
        assert storage.meta.only_own_commits(first, storage.meta.state_version())
        with storage.transaction():
            storage.meta.set("a", "1")
        own = storage.meta.state_version()
        assert own != first
        assert storage.meta.only_own_commits(first, own) in (True, False)  # True where the backend can tell
    if storage.backend.shares_connection:
        return  # the second handle is this connection: its commits are this connection's own
    other = storage.other()
    with other.transaction():
        other.meta.set("b", "2")
    with storage.writers_held():
        assert not storage.meta.only_own_commits(own, storage.meta.state_version())


@covers("erasure.vacuum", "erasure.blank_turns", "snapshot", "archive.turn")
def test_vacuum_refuses_to_report_success_while_another_handle_reads(storage):
    """Issue 15, point 7: erased bytes may sit in the log while another connection holds a read
    open, so vacuum waits (bounded) and then raises ErasureIncomplete; once the reader is done it
    succeeds. (A backend whose second handle is the same connection has no other reader.)"""
    from memfold import ErasureIncomplete

    ids = search_fixture(storage)
    with storage.transaction():
        storage.erasure.blank_turns([ids["r1"]])
    other = storage.other()
    with other.snapshot():
        pass  # (the memory backend's second handle is this one: nothing else can read)
    if other.inner is storage.inner:
        storage.erasure.vacuum(wait_seconds=0.1)
        assert storage.archive.turn(ids["r1"]).erased
        return
    with other.snapshot():
        other.archive.turn(ids["r2"])  # the read transaction starts here
        with pytest.raises(ErasureIncomplete, match="another connection"):
            storage.erasure.vacuum(wait_seconds=0.1)
    storage.erasure.vacuum(wait_seconds=0.1)
    assert storage.archive.turn(ids["r1"]).erased


# --- the whole-file counts the replay report reads (archive, cards, catalog, records, protected) --------------
@covers("archive.count_turns", "archive.count_turns_labelled", "archive.total_turn_tokens",
        "archive.count_summarizer_failures", "archive.turn_seqs", "cards.count_by_depth", "cards.all_texts",
        "catalog.card_counts_by_depth", "records.count_records", "records.count_superseded",
        "records.count_consolidated", "records.contents_of_type", "protected.count_all", "protected.all_texts",
        "archive.add_summarizer_failure", "records.retire", "erasure.blank_turns")
def test_whole_file_counts_for_the_report(storage):
    empty = (storage.archive.count_turns(), storage.archive.total_turn_tokens(),
             storage.archive.count_summarizer_failures(), storage.cards.count_by_depth(),
             storage.catalog.card_counts_by_depth(), storage.records.count_records(), storage.protected.count_all())
    assert empty == (0, 0, 0, {}, {}, 0, 0)
    turns = three_turns(storage)  # 5 + 5 + 3 words
    add_conversation(storage, "fork", family="c1", parent="c1", fork_after=2)
    own = add_turn(storage, "fork", 3, "fork words here", family="c1", labels=["secret", "pii"])
    add_turn(storage, "fork", 4, "more", family="c1", labels=["pii"])
    with storage.transaction():
        storage.erasure.blank_turns([turns[2].id])  # erased turns still count (tokens too)
        storage.archive.add_summarizer_failure(conversation_id="c1", at=1.0, summarizer="x", depth=1, first_seq=1,
                                               last_seq=2, source_tokens=9, error="empty")
    assert storage.archive.count_turns() == 5
    assert (storage.archive.count_turns_labelled("pii"), storage.archive.count_turns_labelled("secret"),
            storage.archive.count_turns_labelled("none")) == (2, 1, 0)
    assert storage.archive.total_turn_tokens() == 5 + 5 + 3 + 3 + 1
    assert storage.archive.count_summarizer_failures() == 1
    assert storage.archive.turn_seqs("fork") == {own: 3, own + 1: 4}  # its own turns, not the lineage's
    leaf_a = storage.cards.get(add_card(storage, "c1", turns[:1], "late"))
    leaf_b = storage.cards.get(add_card(storage, "c1", turns[1:2], "refunded"))
    deep = storage.cards.get(add_card(storage, "c1", [leaf_a, leaf_b], "done"))
    assert storage.cards.count_by_depth() == {1: 2, 2: 1}
    assert sorted(storage.cards.all_texts()) == ["done", "late", "refunded"]
    with storage.transaction():
        storage.catalog.insert("c1", [card_item(deep), turn_item(turns[2])])
        storage.catalog.insert("fork", [card_item(leaf_a), card_item(leaf_b)])
    assert storage.catalog.card_counts_by_depth() == {1: 2, 2: 1}
    old = add_record(storage, "lives in Leeds", key="user.city")
    new = add_record(storage, "lives in York", key="user.city", metadata='{"consolidation_run": 4}')
    add_record(storage, "visited", type="episodic", namespace="other")
    add_record(storage, "always greet", type="procedural", metadata='{"consolidation_run": 4}')
    with storage.transaction():
        storage.records.retire(old, superseded_by=new)
    assert storage.records.count_records() == 4
    assert storage.records.count_records(type="semantic") == 2
    assert storage.records.count_records(type="semantic", status="active") == 1
    assert storage.records.count_records(status="retired") == 1
    assert storage.records.count_superseded() == 1
    assert (storage.records.count_consolidated("semantic"), storage.records.count_consolidated("procedural"),
            storage.records.count_consolidated("episodic")) == (1, 1, 0)
    assert sorted(storage.records.contents_of_type("semantic")) == ["lives in Leeds", "lives in York"]
    add_protected(storage, "never call after 6pm")
    add_protected(storage, "vip", namespace="other")
    assert storage.protected.count_all() == 2
    assert sorted(storage.protected.all_texts()) == ["never call after 6pm", "vip"]

# --- runs: consolidation runs, the ledger, the turn cursor, the queue, leases, the job store ------------------
@covers("runs.start_run", "runs.add_batch", "runs.finish_run", "runs.get_run", "runs.list_runs", "runs.count_runs")
def test_runs_record_consolidation_passes(storage):
    assert storage.runs.count_runs() == 0 and storage.runs.list_runs() == []
    with storage.transaction():
        first = storage.runs.start_run("acme", "rules", "manual", 1.0)
        second = storage.runs.start_run("beta", "llm", "schedule", 2.0)
        third = storage.runs.start_run("acme", "rules", "schedule", 3.0)
    assert storage.runs.get_run(999) is None
    run = storage.runs.get_run(first)
    assert isinstance(run, ConsolidationRun)
    assert (run.id, run.namespace, run.extractor, run.trigger, run.status, run.started_at, run.finished_at,
            run.batches, run.errors) == (first, "acme", "rules", "manual", "running", 1.0, None, 0, [])
    with storage.transaction():
        storage.runs.add_batch(first, episodes=2, turns=5, facts=1, rules=0)
        storage.runs.add_batch(first, episodes=1, turns=0, facts=2, rules=1)
        storage.runs.finish_run(first, "ok", 4.0, [])
        storage.runs.finish_run(second, "failed", 5.0, ["extractor timed out"])
    run = storage.runs.get_run(first)
    assert (run.status, run.finished_at, run.batches, run.episodes_consumed, run.turns_consumed, run.facts_written,
            run.rules_written) == ("ok", 4.0, 2, 3, 5, 3, 1)
    assert storage.runs.get_run(second).errors == ["extractor timed out"]
    assert [r.id for r in storage.runs.list_runs()] == [first, second, third]
    assert [r.id for r in storage.runs.list_runs("acme")] == [first, third]
    assert [r.id for r in storage.runs.list_runs(limit=2)] == [second, third]  # the newest two, in order
    assert storage.runs.count_runs() == 3


@covers("runs.abandon_runs")
def test_runs_abandoned_when_their_holder_died(storage):
    with storage.transaction():
        dead = storage.runs.start_run("acme", "rules", "schedule@2026-01-01T03:00:00+00:00", 1.0)
        done = storage.runs.start_run("beta", "rules", "schedule@2026-01-01T03:00:00+00:00", 1.0)
        storage.runs.finish_run(done, "ok", 2.0, [])
        other = storage.runs.start_run("acme", "rules", "schedule@2026-01-02T03:00:00+00:00", 3.0)
    with storage.transaction():
        assert storage.runs.abandon_runs("schedule@2026-01-01T03:00:00+00:00", 9.0, "lease of h1 expired") == 1
    run = storage.runs.get_run(dead)
    assert (run.status, run.finished_at, run.errors) == ("abandoned", 9.0, ["lease of h1 expired"])
    assert storage.runs.get_run(done).status == "ok" and storage.runs.get_run(other).status == "running"
    with storage.transaction():
        assert storage.runs.abandon_runs("schedule@2026-01-01T03:00:00+00:00", 10.0, "again") == 0


@covers("runs.record_consumed", "runs.consumption", "runs.start_run")
def test_runs_ledger_consumes_each_source_once(storage):
    with storage.transaction():
        run = storage.runs.start_run("acme", "rules", "manual", 1.0)
        storage.runs.record_consumed("record:7", "acme", run, 2.0, [12, 11, 12])
    assert storage.runs.consumption("record:8") is None
    assert storage.runs.consumption("record:7") == {"source": "record:7", "namespace": "acme", "run_id": run,
                                                     "consumed_at": 2.0, "products": [11, 12]}
    with pytest.raises(StorageConflict) as raised:
        with storage.transaction():
            storage.runs.record_consumed("record:7", "acme", run, 3.0, [])
    assert_translated(raised.value)
    assert storage.runs.consumption("record:7")["consumed_at"] == 2.0


@covers("runs.turn_cursor", "runs.set_turn_cursor", "runs.start_run")
def test_runs_turn_cursor(storage):
    assert storage.runs.turn_cursor("acme") == 0
    with storage.transaction():
        run = storage.runs.start_run("acme", "rules", "manual", 1.0)
        storage.runs.set_turn_cursor("acme", 41, run)
    assert storage.runs.turn_cursor("acme") == 41
    with storage.transaction():
        storage.runs.set_turn_cursor("acme", 57, run)
    assert (storage.runs.turn_cursor("acme"), storage.runs.turn_cursor("beta")) == (57, 0)


@covers("runs.pending_episodes", "runs.count_active_episodes", "runs.pending_namespaces", "runs.pending_turns",
        "runs.set_turn_cursor", "runs.start_run", "records.set_status")
def test_runs_consolidation_queue(storage):
    e1 = add_record(storage, "called about the parcel", namespace="acme", type="episodic", at=1.0,
                    metadata='{"channel": "phone"}', event_time=0.5)
    e2 = add_record(storage, "asked for a refund", namespace="acme", type="episodic", at=2.0)
    late = add_record(storage, "wrote again", namespace="acme", type="episodic", at=9.0)
    add_record(storage, "a fact, not an episode", namespace="acme", at=1.0)
    gone = add_record(storage, "consumed already", namespace="beta", type="episodic", at=1.0)
    with storage.transaction():
        storage.records.set_status(gone, "consumed")
    pending = storage.runs.pending_episodes("acme", after_id=0, horizon=5.0, limit=10)
    assert isinstance(pending[0], PendingEpisode)
    assert [(p.id, p.content, p.metadata, p.event_time, p.created_at) for p in pending] == [
        (e1, "called about the parcel", {"channel": "phone"}, 0.5, 1.0), (e2, "asked for a refund", {}, None, 2.0)]
    assert [p.id for p in storage.runs.pending_episodes("acme", after_id=e1, horizon=10.0, limit=10)] == [e2, late]
    assert [p.id for p in storage.runs.pending_episodes("acme", after_id=0, horizon=10.0, limit=1)] == [e1]
    assert storage.runs.count_active_episodes([e1, e2, gone, 999]) == 2
    assert storage.runs.count_active_episodes([]) == 0
    assert storage.runs.pending_namespaces() == ["acme"]
    add_conversation(storage, "c1", namespace="talk")
    t1 = add_turn(storage, "c1", 1, "hello there", at=1.0)
    add_turn(storage, "c1", 2, "my pin is 4471", labels=["secret"], at=2.0)  # a secret without spans: never read
    spans = json.dumps({"secret_spans": [[10, 14]]})
    t3 = add_turn(storage, "c1", 3, "my pin is 9911", labels=["secret"], metadata=spans, at=3.0)
    t4 = add_turn(storage, "c1", 4, "bye", role="assistant", at=8.0)
    assert storage.runs.pending_namespaces(include_turns=True) == ["acme", "talk"]
    turns = storage.runs.pending_turns("talk", after_id=0, horizon=5.0, limit=10)
    assert isinstance(turns[0], PendingTurn)
    assert [(t.id, t.role, t.content, t.created_at, list(t.labels)) for t in turns] == [
        (t1, "user", "hello there", 1.0, []), (t3, "user", "my pin is 9911", 3.0, ["secret"])]
    assert turns[1].metadata == {"secret_spans": [[10, 14]]}
    assert [t.id for t in storage.runs.pending_turns("talk", after_id=t3, horizon=10.0, limit=10)] == [t4]
    with storage.transaction():
        storage.runs.set_turn_cursor("talk", t4, storage.runs.start_run("talk", "rules", "manual", 9.0))
    assert storage.runs.pending_namespaces(include_turns=True) == ["acme"]


@covers("transaction", "archive.insert_conversation", "runs.note_compaction", "runs.compaction_note",
        "runs.compaction_notes", "runs.renote_compaction", "runs.drop_compaction_note",
        "runs.conversations_without_note", "archive.set_reported_usage", "archive.last_model_call_at")
def test_runs_compaction_notes(storage):
    """Issue 13: one note per conversation; a new generation on renote; dropped only at its generation."""
    with storage.transaction():
        for cid in ("a", "b"):
            storage.archive.insert_conversation(conversation_id=cid, namespace="n", family_id=cid, parent_id=None,
                                                fork_after_seq=None, created_at=0.0, labels=[])
    assert storage.archive.last_model_call_at("a") is None
    with storage.transaction():
        storage.archive.set_reported_usage("a", 70, 5.0)
        assert storage.runs.note_compaction("a", "n", 70, 5.0)
        assert not storage.runs.note_compaction("a", "n", 80, 6.0)  # one note: the pressure is updated
    assert storage.archive.last_model_call_at("a") == 5.0
    note = storage.runs.compaction_note("a")
    assert (note.conversation_id, note.namespace, note.pressure, note.noted_at, note.attempts) == ("a", "n", 80, 5.0, 0)
    assert storage.runs.conversations_without_note() == ["b"]
    with storage.transaction():
        generation = storage.runs.renote_compaction("a", attempts=2, not_before=100.0, error="down")
    assert generation != note.generation
    assert storage.runs.compaction_notes(due_at=50.0) == [] and len(storage.runs.compaction_notes()) == 1
    assert storage.runs.compaction_notes(due_at=100.0)[0].last_error == "down"
    with storage.transaction():
        assert not storage.runs.drop_compaction_note("a", note.generation)  # an old generation
        assert storage.runs.drop_compaction_note("a", generation)
    assert storage.runs.compaction_note("a") is None and storage.runs.renote_compaction("a", attempts=0, not_before=0.0, error=None) is None


@covers("runs.newer_lease_exists", "runs.get_lease", "runs.insert_lease", "runs.take_lease", "runs.renew_lease",
        "runs.finish_lease", "runs.list_leases")
def test_runs_leases(storage):
    assert storage.runs.get_lease("nightly", 100.0) is None
    with storage.transaction():
        storage.runs.insert_lease("nightly", 100.0, "worker-a", acquired_at=100.0, expires_at=160.0)
    lease = storage.runs.get_lease("nightly", 100.0)
    assert isinstance(lease, LeaseRow)
    assert lease == LeaseRow("nightly", 100.0, "worker-a", 100.0, 160.0, None, None)
    with pytest.raises(StorageConflict) as raised:  # exactly one worker inserts the lease of a fire time
        with storage.transaction():
            storage.runs.insert_lease("nightly", 100.0, "worker-b", acquired_at=101.0, expires_at=161.0)
    assert_translated(raised.value)
    with storage.transaction():
        assert storage.runs.renew_lease("nightly", 100.0, "worker-a", expires_at=200.0)
        assert not storage.runs.renew_lease("nightly", 100.0, "worker-b", expires_at=300.0)
    assert storage.runs.get_lease("nightly", 100.0).expires_at == 200.0
    with storage.transaction():  # the holder died: another worker takes it over
        storage.runs.take_lease("nightly", 100.0, "worker-b", acquired_at=250.0, expires_at=310.0)
        assert not storage.runs.finish_lease("nightly", 100.0, "worker-a", finished_at=260.0, outcome="ok")
        assert storage.runs.finish_lease("nightly", 100.0, "worker-b", finished_at=270.0, outcome="ok")
        assert not storage.runs.finish_lease("nightly", 100.0, "worker-b", finished_at=280.0, outcome="again")
        assert not storage.runs.renew_lease("nightly", 100.0, "worker-b", expires_at=400.0)  # finished
    assert storage.runs.get_lease("nightly", 100.0) == LeaseRow("nightly", 100.0, "worker-b", 250.0, 310.0, 270.0, "ok")
    assert not storage.runs.newer_lease_exists("nightly", 100.0)
    with storage.transaction():
        storage.runs.insert_lease("nightly", 200.0, "worker-a", acquired_at=200.0, expires_at=260.0)
        storage.runs.insert_lease("hourly", 150.0, "worker-a", acquired_at=150.0, expires_at=160.0)
    assert storage.runs.newer_lease_exists("nightly", 100.0) and not storage.runs.newer_lease_exists("nightly", 200.0)
    assert [(l.name, l.fire_time) for l in storage.runs.list_leases()] == [
        ("nightly", 100.0), ("hourly", 150.0), ("nightly", 200.0)]
    assert [l.fire_time for l in storage.runs.list_leases("nightly")] == [100.0, 200.0]
    assert [l.fire_time for l in storage.runs.list_leases(limit=1)] == [200.0]


@covers("runs.ensure_job_store")
def test_runs_job_store_is_created_once(storage):
    assert storage.runs.ensure_job_store("memfold_scheduler_jobs") is True
    assert storage.runs.ensure_job_store("memfold_scheduler_jobs") is False
    assert storage.other().runs.ensure_job_store("memfold_scheduler_jobs") is False
    with pytest.raises(MemfoldError):
        storage.runs.ensure_job_store("jobs; DROP TABLE turns")


# --- meta: file-wide settings -------------------------------------------------------------------------------------
@covers("meta.get", "meta.get_many", "meta.set", "meta.add", "meta.delete")
def test_meta_key_values(storage):
    assert storage.meta.get("colour") is None
    with storage.transaction():
        storage.meta.set("colour", "blue")
        storage.meta.set("colour", "green")
        assert storage.meta.add("size", "large") is True
        assert storage.meta.add("size", "small") is False
    assert storage.meta.get("colour") == "green" and storage.meta.get("size") == "large"
    assert storage.meta.get_many(["colour", "size", "nothing"]) == {"colour": "green", "size": "large"}
    assert storage.meta.get_many([]) == {}
    with storage.transaction():
        assert storage.meta.delete(["colour", "nothing"]) == 1
        assert storage.meta.delete([]) == 0
    assert storage.meta.get("colour") is None and storage.meta.get("size") == "large"


@covers("meta.clock_kind", "meta.logical_tick", "meta.set_logical_tick", "meta.token_counter",
        "meta.record_token_counter", "meta.newest_stored_time", "meta.schema_version")
def test_meta_settings_memfold_keeps(storage):
    assert storage.meta.clock_kind() == "logical"  # recorded by the first open
    assert storage.meta.logical_tick() is None and storage.meta.token_counter() is None
    assert storage.meta.newest_stored_time() is None
    with storage.transaction():
        storage.meta.set_logical_tick(12)
        storage.meta.record_token_counter("words")
        storage.meta.record_token_counter("cl100k_base")  # the first counter recorded stays
    assert storage.meta.logical_tick() == 12 and storage.meta.token_counter() == "words"
    add_conversation(storage, "c1")
    add_turn(storage, "c1", 1, "hello", at=4.0)
    add_record(storage, "a fact", at=7.0)
    with storage.transaction():
        storage.events.append(at=5.0, kind="write", subject="record:1")
    assert storage.meta.newest_stored_time() == 7.0
    assert storage.meta.schema_version() == storage.backend.latest_version()


@covers("meta.set_read_only", "meta.read_only")
def test_meta_read_only_handle_refuses_every_write(storage):
    add_conversation(storage, "c1")
    add_turn(storage, "c1", 1, "hello", at=4.0)
    assert storage.meta.read_only() is False
    storage.meta.set_read_only()
    assert storage.meta.read_only() is True
    assert [t.content for t in storage.archive.conversation_turns("c1")] == ["hello"]  # reads go on
    with storage.snapshot():
        assert storage.archive.max_seq("c1") == 1
    with pytest.raises(StorageError):
        add_turn(storage, "c1", 2, "again", at=5.0)
    with pytest.raises(StorageError):
        storage.meta.set("colour", "blue")
    assert storage.archive.max_seq("c1") == 1 and storage.meta.get("colour") is None


# --- folds: model-chosen folds, strategy frames, counters (issue 14) -----------------------------------------
@covers("folds.insert_fold", "folds.folds", "folds.fold_of_card")
def test_folds_are_recorded_with_their_card(storage):
    turns = three_turns(storage)
    card = storage.cards.get(add_card(storage, "c1", turns[:2], "late; refunded"))
    assert storage.folds.folds("c1") == [] and storage.folds.fold_of_card(card.id) is None
    index = {"tool_calls": 2, "by_tool": {"read_file": 2}, "paths": ["src/a.py"], "shell_commands": 0}
    with storage.transaction():
        first = storage.folds.insert_fold(conversation_id="c1", kind="unit", card_id=card.id, first_seq=1,
                                          last_seq=2, made_after_seq=3, index=index, created_at=7.0)
        second = storage.folds.insert_fold(conversation_id="c1", kind="strategy", card_id=None, first_seq=3,
                                           last_seq=3, made_after_seq=3, index={}, created_at=8.0)
    folds = storage.folds.folds("c1")
    assert [f.id for f in folds] == [first, second]
    assert (folds[0].kind, folds[0].card_id, folds[0].first_seq, folds[0].last_seq, folds[0].made_after_seq,
            folds[0].index, folds[0].created_at) == ("unit", card.id, 1, 2, 3, index, 7.0)
    assert folds[1].card_id is None and folds[1].kind == "strategy"
    assert storage.folds.fold_of_card(card.id) == folds[0]
    assert storage.folds.folds("nobody") == []
    with pytest.raises(StorageError):  # a kind the schema does not know is refused
        with storage.transaction():
            storage.folds.insert_fold(conversation_id="c1", kind="nap", card_id=None, first_seq=1, last_seq=1,
                                      made_after_seq=1, index={}, created_at=9.0)
    assert len(storage.folds.folds("c1")) == 2


@covers("folds.open_frame", "folds.frames", "folds.set_report", "folds.close_frame")
def test_strategy_frames_stack_report_slot_and_close(storage):
    three_turns(storage)
    with storage.transaction():
        outer = storage.folds.open_frame(conversation_id="c1", parent_frame=None, name="errand", brief="fix it",
                                         start_seq=2, opened_by="model", opened_at=5.0)
        inner = storage.folds.open_frame(conversation_id="c1", parent_frame=outer, name="intent", brief="",
                                         start_seq=3, opened_by="user", opened_at=6.0)
    frames = storage.folds.frames("c1")
    assert [(f.id, f.parent_frame, f.name, f.start_seq, f.opened_by, f.status, f.report, f.reports)
            for f in frames] == [(outer, None, "errand", 2, "model", "open", None, 0),
                                 (inner, outer, "intent", 3, "user", "open", None, 0)]
    with storage.transaction():
        storage.folds.set_report(inner, "first")
        storage.folds.set_report(inner, "second")  # a slot: the second replaces the first
    got = storage.folds.frames("c1")[1]
    assert (got.report, got.reports) == ("second", 2)
    with storage.transaction():
        storage.folds.close_frame(inner, status="closing", reason="done", fold_id=None, closed_at=None)
    assert [f.id for f in storage.folds.frames("c1", status="closing")] == [inner]
    with storage.transaction():
        storage.folds.close_frame(inner, status="closed", reason="done", fold_id=None, closed_at=9.0)
    closed = storage.folds.frames("c1", status="closed")
    assert [(f.id, f.reason, f.closed_at) for f in closed] == [(inner, "done", 9.0)]
    assert [f.id for f in storage.folds.frames("c1", status="open")] == [outer]
    with pytest.raises(StorageError):
        with storage.transaction():
            storage.folds.close_frame(outer, status="asleep", reason=None, fold_id=None, closed_at=None)
    assert storage.folds.frames("c1", status="open")[0].status == "open"


@covers("folds.bump", "folds.set_counter", "folds.counters")
def test_fold_counters(storage):
    three_turns(storage)
    three_turns(storage, "c2")
    assert storage.folds.counters("c1") == {} and storage.folds.counters() == {}
    with storage.transaction():
        assert storage.folds.bump("c1", "proposed") == 1
        assert storage.folds.bump("c1", "proposed", 2) == 3
        assert storage.folds.bump("c2", "proposed") == 1
        storage.folds.set_counter("c1", "proposed_at_seq", 7)
        storage.folds.set_counter("c1", "proposed_at_seq", 4)
    assert storage.folds.counters("c1") == {"proposed": 3, "proposed_at_seq": 4}
    assert storage.folds.counters() == {"proposed": 4, "proposed_at_seq": 4}


@covers("folds.unfolded_tail", "folds.unfolded_totals", "catalog.insert")
def test_unfolded_tail_is_the_work_after_the_last_card(storage):
    turns = three_turns(storage)
    tool = storage.archive.turn(add_turn(storage, "c1", 4, "result of the call", role="tool"))
    system = storage.archive.turn(add_turn(storage, "c1", 5, "you are terse", role="system"))
    turns = [*turns, tool, system]
    assert storage.folds.unfolded_tail("c1") == [] and storage.folds.unfolded_totals("c1") == (0, 0)
    with storage.transaction():
        storage.catalog.insert("c1", [turn_item(t) for t in turns])
    assert storage.folds.unfolded_tail("c1") == [turn_item(t) for t in turns]
    assert storage.folds.unfolded_totals("c1") == (1, sum(t.tokens for t in turns[:4]))  # system turns not counted
    card = storage.cards.get(add_card(storage, "c1", turns[:2], "late; refunded"))
    with storage.transaction():
        storage.catalog.delete_between("c1", 1, 2)
        storage.catalog.insert("c1", [card_item(card)])
    assert storage.folds.unfolded_tail("c1") == [turn_item(t) for t in turns[2:]]
    assert storage.folds.unfolded_totals("c1") == (1, turns[2].tokens + tool.tokens)


# --- the coverage meta-test ----------------------------------------------------------------------------------------------
def declared_coverage() -> set[str]:
    return {name for fn in list(globals().values()) if callable(fn) and getattr(fn, "__name__", "").startswith("test_")
            for name in getattr(fn, "covers", ())}


def test_every_protocol_method_is_covered():
    missing = every_protocol_method() - declared_coverage()
    assert missing == set(), f"Protocol methods no contract test covers: {sorted(missing)}"


def test_the_recording_wrapper_sees_calls(tmp_path):
    backend = SqliteMemoryBackend(tmp_path)
    recording = RecordingStorage(backend.open(), backend)
    with recording.transaction():
        recording.archive.insert_conversation(conversation_id="c", namespace="n", family_id="c", parent_id=None,
                                              fork_after_seq=None, created_at=0.0, labels=[])
    assert recording.calls == {"transaction", "archive.insert_conversation"}
    backend.close()


# --- round 15 (issue 18, point 4): the hot path's reads ---------------------------------------------------------------
@covers("protected.get_many", "protected.version")
def test_protected_get_many_and_version(storage):
    import dataclasses

    a = add_protected(storage, "call on mondays")
    b = add_protected(storage, "call on tuesdays")
    got = storage.protected.get_many([b, a, 999, a])
    assert sorted(got) == [a, b] and got[a] == storage.protected.get(a) and storage.protected.get_many([]) == {}
    with storage.transaction():  # inside a write, locked as get() locks (round 16: link_replaced)
        assert storage.protected.get_many([b, a, 999], lock=True) == got
        assert storage.protected.get_many([], lock=True) == {}
    # metadata left unread: the same records with {} (round 16: a replaced record's chain)
    with storage.transaction():
        storage.protected.set_metadata(a, {"replaces_text": ["x" * 50]})
    brief = storage.protected.get_many([a, b], metadata=False)
    assert brief[a].metadata == {} and brief[a] == dataclasses.replace(storage.protected.get(a), metadata={})
    assert brief[b] == got[b] and storage.protected.get_many([], metadata=False) == {}
    before = storage.protected.version()
    if before is None:  # a backend without a cheap version: every rendering reads the table
        return
    assert storage.protected.version() == before  # nothing changed
    with storage.transaction():
        storage.protected.set_metadata(a, {"seen": 1})
    assert storage.protected.version() != before


@covers("archive.append_point", "catalog.cover")
def test_append_point_and_catalog_cover(storage):
    assert storage.archive.append_point("nobody") is None
    turns = three_turns(storage)
    assert storage.catalog.cover("c1") == (0, 3)
    with storage.transaction():
        storage.catalog.insert("c1", [turn_item(t) for t in turns[:2]])
    assert storage.catalog.cover("c1") == (2, 3)
    point = storage.archive.append_point("c1")
    assert (point.row, point.max_seq, point.catalog_last_seq, point.closing_frames) == (
        storage.archive.conversation("c1"), 3, 2, 0)
    assert point.note_waiting in (None, False)
    add_conversation(storage, "c2", parent="c1", family="c1", fork_after=2)
    fork = storage.archive.append_point("c2")
    assert (fork.max_seq, fork.catalog_last_seq, fork.row.fork_after_seq) == (None, 0, 2)
    assert storage.catalog.cover("c2") == (0, None)


@covers("records.has_active")
def test_records_has_active(storage):
    assert not storage.records.has_active("ns")
    rid = add_record(storage, "likes tea")
    assert storage.records.has_active("ns") and not storage.records.has_active("other")
    with storage.transaction():
        storage.records.set_status(rid, "retired")
    assert not storage.records.has_active("ns")


# --- round 16 (issue 20, point 3): a write a reader can go without ----------------------------------------------------
@covers("optional_transaction", "archive.insert_conversation", "archive.conversation_ids")
def test_an_optional_transaction_commits_rolls_back_and_joins_like_a_transaction(storage):
    with storage.optional_transaction():
        add_conversation(storage, "kept")
    with pytest.raises(Boom):
        with storage.optional_transaction():
            add_conversation(storage, "dropped")
            raise Boom("the caller failed")
    with pytest.raises(Boom):
        with storage.transaction():
            with storage.optional_transaction():  # nested: joins the outer one, rolled back with it
                add_conversation(storage, "inner")
            raise Boom("outer")
    assert storage.archive.conversation_ids() == ["kept"]
