"""The bad-input corpus (issue 20, points 3, 5 and 12): every case is refused with a clear
:class:`MemfoldError` subclass naming the problem, and writes nothing.

Each case runs on a fresh copy of one populated database (a conversation with a tool call, a
memory record, a protected record, a compiled context) and compares the whole database, dumped
as SQL, before and after: not one row may change. Cases that must not create a database at all
check that no file appears. CLI cases run the real ``memfold`` command group and check the exit
status and the one ``Error: ...`` line. The inputs real clients send (OpenAI content parts,
``refusal: null``, ``content: null`` with ``tool_calls``, an empty tool result, a UTF-8 BOM) are
accepted, stored losslessly, and shown.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
import warnings
from datetime import datetime, timezone
from pathlib import Path

import pytest
import sqlite_utils
from click.testing import CliRunner

from memfold import (
    BudgetError,
    ClockError,
    ConversationNotFound,
    InvalidInput,
    LogicalClock,
    MemFold,
    MemfoldError,
    NotFound,
    RecordNotFound,
    StorageError,
)
from memfold.cli import cli

NS = "acme/dana"


def build_template(path: Path) -> None:
    """The populated database every case starts from."""
    mf = MemFold(path, clock=LogicalClock(), token_counter="words", embedder=None)
    conv = mf.conversation("c1", namespace=NS)
    conv.append({"role": "user", "content": "My order ORD-3300 arrived broken."})
    conv.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{\"order\":\"ORD-3300\"}"}}]})
    conv.append({"role": "tool", "tool_call_id": "call_1", "name": "lookup", "content": "ORD-3300: shipped May 3"})
    conv.append({"role": "user", "content": "Please never call me, email only."})
    mf.memory.write(NS, "semantic", "Dana prefers email contact", key="user.contact_preference", importance=0.6)
    mf.protect("Refund before t=10.", kind="deadline", conversation_id="c1", due_at=10)
    mf.protect("Always answer in English.", namespace=NS)
    conv.context(budget=2000)  # the catalog is synced: a later compile writes nothing
    mf.close()


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bad-input") / "template.db"
    build_template(path)
    return path


from conftest import database_dump as dump  # noqa: E402


@pytest.fixture
def db(template, tmp_path) -> Path:
    path = tmp_path / "agent.db"
    shutil.copyfile(template, path)
    return path


def facade(path: Path) -> MemFold:
    return MemFold(path, embedder=None)


AWARE = datetime(2026, 1, 1, tzinfo=timezone.utc)
TOOL_CALL = {"id": "call_9", "type": "function", "function": {"name": "f", "arguments": "{}"}}

#: (id, call(mf), error class, words the message must contain)
API_CASES = [
    # memory records
    ("write-metadata-str", lambda mf: mf.memory.write(NS, "semantic", "t", metadata="x"),
     InvalidInput, "metadata must be a dict, got str 'x'"),
    ("write-metadata-unserialisable", lambda mf: mf.memory.write(NS, "semantic", "t", metadata={"a": object()}),
     InvalidInput, "metadata is not JSON-serialisable"),
    ("write-provenance-str", lambda mf: mf.memory.write(NS, "semantic", "t", provenance="turn:1"),
     InvalidInput, "provenance must be a list of source ids, got 'turn:1': pass ['turn:1']"),
    ("write-provenance-bad-id", lambda mf: mf.memory.write(NS, "semantic", "t", provenance=[None]),
     InvalidInput, "a provenance id must be text"),
    ("write-pinned-no", lambda mf: mf.memory.write(NS, "semantic", "t", pinned="no"),
     InvalidInput, "pinned must be True or False, got 'no'"),
    ("write-importance-high", lambda mf: mf.memory.write(NS, "semantic", "t", importance=1.5),
     InvalidInput, "importance 1.5 is outside [0, 1]"),
    ("write-importance-nan", lambda mf: mf.memory.write(NS, "semantic", "t", importance=float("nan")),
     InvalidInput, "importance is NaN"),
    ("write-type", lambda mf: mf.memory.write(NS, "facts", "t"), InvalidInput, "facts"),
    ("write-empty", lambda mf: mf.memory.write(NS, "semantic", "  "), InvalidInput, "content is empty"),
    ("write-nul", lambda mf: mf.memory.write(NS, "semantic", "a\x00b"), InvalidInput, "NUL byte"),
    ("write-namespace-padded", lambda mf: mf.memory.write(" acme", "semantic", "t"),
     InvalidInput, "leading or trailing whitespace"),
    ("write-labels-str", lambda mf: mf.memory.write(NS, "semantic", "t", labels="secret"),
     InvalidInput, "labels must be a list of label names"),
    ("write-event-time-text", lambda mf: mf.memory.write(NS, "semantic", "t", event_time="yesterday"),
     ClockError, "must be a number of ticks"),
    ("write-event-time-negative", lambda mf: mf.memory.write(NS, "semantic", "t", event_time=-1),
     ClockError, "tick from 0 to 2**53"),
    ("write-restatement", lambda mf: mf.memory.write(NS, "semantic", "t", restatement="fuzzy"),
     InvalidInput, "restatement must be one of"),
    ("remember-metadata-str", lambda mf: mf.remember(NS, "semantic", "t", metadata="x"),
     InvalidInput, "metadata must be a dict"),
    ("read-zero", lambda mf: mf.memory.read(NS, 0), InvalidInput, "limit must be a whole number >= 1, got 0"),
    ("read-types-empty", lambda mf: mf.memory.read(NS, types=[]), InvalidInput, "types is empty"),
    ("read-touch-str", lambda mf: mf.memory.read(NS, touch="no"), InvalidInput, "touch must be True or False"),
    ("read-limit-and-k", lambda mf: mf.read(NS, 3, k=5), InvalidInput, "not both"),
    ("read-reader-dict", lambda mf: mf.read(NS, reader={"a": 1}), InvalidInput, "reader must be a Reader"),
    ("pin-zero", lambda mf: mf.memory.pin(0), InvalidInput, "out of range"),
    ("pin-huge", lambda mf: mf.memory.pin(10**30), InvalidInput, "out of range"),
    ("pin-missing", lambda mf: mf.memory.pin(999), RecordNotFound, "999"),
    ("policy-capacity", lambda mf: mf.policy(NS, "semantic", capacity=-1), InvalidInput, "capacity"),
    ("policy-half-life", lambda mf: mf.policy(NS, "semantic", half_life=0), InvalidInput, "half_life"),
    ("policy-unknown", lambda mf: mf.policy(NS, "semantic", size=3), InvalidInput, "size"),
    # search
    ("search-until-list", lambda mf: mf.search("order", until=[1]), InvalidInput, "until must be a time"),
    ("search-since-garbage", lambda mf: mf.search("order", since="garbage"), InvalidInput, "since must be a time"),
    ("search-since-aware-on-logical", lambda mf: mf.search("order", since=AWARE), ClockError,
     "since: this database uses a LogicalClock"),
    ("search-since-negative", lambda mf: mf.search("order", since=-5), ClockError, "since: a time on a LogicalClock"),
    ("search-range-reversed", lambda mf: mf.search("order", since=5, until=1), InvalidInput, "is after until"),
    ("search-reader-labels-str", lambda mf: mf.search("order", reader_labels="secret"), InvalidInput,
     "reader_labels must be a list of labels"),
    ("search-limit", lambda mf: mf.search("order", limit=0), InvalidInput, "limit must be a positive integer"),
    ("search-empty", lambda mf: mf.search("  "), InvalidInput, "search query must be non-empty"),
    ("search-kind", lambda mf: mf.search("order", kinds=["pages"]), InvalidInput, "unknown item kind 'pages'"),
    ("search-type", lambda mf: mf.search("order", type="facts"), InvalidInput, "unknown record type 'facts'"),
    ("conv-search-limit", lambda mf: mf.conversation("c1").search("order", 101), InvalidInput,
     "limit must be an integer from 1 to 100"),
    ("conv-search-reader-str", lambda mf: mf.conversation("c1").search("order", reader="secret"), InvalidInput,
     "use Reader.of(['secret'])"),
    # turns
    ("append-created-huge", lambda mf: mf.conversation("c1").append({"role": "user", "content": "x", "created_at": 1e300}),
     ClockError, "created_at: a time on a LogicalClock is a tick from 0 to 2**53"),
    ("append-created-very-negative",
     lambda mf: mf.conversation("c1").append({"role": "user", "content": "x", "created_at": -1e12}),
     ClockError, "created_at: a time on a LogicalClock"),
    ("append-created-negative", lambda mf: mf.conversation("c1").append({"role": "user", "content": "x", "created_at": -1}),
     ClockError, "created_at"),
    ("append-created-nan", lambda mf: mf.conversation("c1").append({"role": "user", "content": "x", "created_at": float("nan")}),
     ClockError, "must be finite"),
    ("append-role", lambda mf: mf.conversation("c1").append({"role": "robot", "content": "x"}), InvalidInput,
     "role must be one of"),
    ("append-content-int", lambda mf: mf.conversation("c1").append({"role": "user", "content": 5}), InvalidInput,
     "content must be a string"),
    ("append-unknown-field", lambda mf: mf.conversation("c1").append({"role": "user", "content": "x", "foo": 1}),
     InvalidInput, "unknown turn field(s) foo"),
    ("append-tool-without-id", lambda mf: mf.conversation("c1").append({"role": "tool", "content": "x"}), InvalidInput,
     "needs the tool_call_id"),
    ("append-tool-calls-str", lambda mf: mf.conversation("c1").append({"role": "assistant", "content": "", "tool_calls": "x"}),
     InvalidInput, "tool_calls"),
    ("append-user-empty", lambda mf: mf.conversation("c1").append({"role": "user", "content": ""}), InvalidInput,
     "content is empty"),
    ("append-part-not-object", lambda mf: mf.conversation("c1").append({"role": "user", "content": [1]}), InvalidInput,
     "content part 0 must be an object with a 'type'"),
    ("append-text-part-without-text",
     lambda mf: mf.conversation("c1").append({"role": "user", "content": [{"type": "text"}]}), InvalidInput,
     "content part 0 is a text part without a 'text' string"),
    ("append-refusal-number", lambda mf: mf.conversation("c1").append({"role": "assistant", "content": "x", "refusal": 5}),
     InvalidInput, "refusal is not supported in a turn (got 5)"),
    ("append-metadata-reserved",
     lambda mf: mf.conversation("c1").append({"role": "user", "content": [{"type": "text", "text": "hi"}],
                                              "metadata": {"content_parts": 1}}),
     InvalidInput, "metadata key(s) content_parts are reserved"),
    ("append-labels-str", lambda mf: mf.conversation("c1").append({"role": "user", "content": "x", "labels": "secret"}),
     InvalidInput, "labels must be a list of label names"),
    ("append-many-one-bad", lambda mf: mf.conversation("c1").append_many(
        [{"role": "user", "content": "fine"}, {"role": "user", "content": "a\x00"}]), InvalidInput, "NUL byte"),
    ("history-limit-negative", lambda mf: mf.conversation("c1").history(limit=-1), InvalidInput,
     "history limit must be a whole number >= 0, got -1"),
    ("history-after-seq", lambda mf: mf.conversation("c1").history(after_seq=-1), InvalidInput, "after_seq"),
    ("context-reader-dict", lambda mf: mf.conversation("c1").context(reader={"a": 1}), InvalidInput,
     "reader must be a Reader or a list of labels, got {'a': 1}"),
    ("context-budget-1", lambda mf: mf.conversation("c1").context(budget=1, output_reserve=0), BudgetError,
     "the protected channel alone is 39 tokens (3 active records) > usable budget 1"),
    ("context-budget-50", lambda mf: mf.conversation("c1").context(budget=50, output_reserve=0), BudgetError,
     "system note 15 + protected 39 + hot tail 6 tokens (1 turns) = 60 tokens > usable budget 50 (budget 50 - "
     "output reserve 0); no compaction can fit it, so nothing was folded"),
    ("context-budget-zero", lambda mf: mf.conversation("c1").context(budget=0), InvalidInput, "budget"),
    ("report-usage-negative", lambda mf: mf.conversation("c1").report_usage(-5), InvalidInput,
     "reported usage must be a non-negative integer"),
    ("expand-unknown", lambda mf: mf.conversation("c1").expand("c999"), NotFound, "c999"),
    ("describe-bad-ref", lambda mf: mf.conversation("c1").describe("x1"), InvalidInput, "not a card or turn id"),
    ("describe-turn-zero", lambda mf: mf.conversation("c1").describe("t0"), InvalidInput,
     "turn id 0 is out of range: the turns of 'c1' are t1 to t4"),
    ("describe-turn-huge", lambda mf: mf.conversation("c1").describe(f"t{10**30}"), InvalidInput,
     "is out of range: the turns of 'c1' are t1 to t4"),
    ("expand-card-zero", lambda mf: mf.conversation("c1").expand("c0"), InvalidInput,
     "card id 0 is out of range: 'c1' has no summary cards yet"),
    ("context-at-zero", lambda mf: mf.conversation("c1").context_at(0), InvalidInput,
     "turn 0 is out of range: 'c1' has turns 1 to 4"),
    ("context-at-negative", lambda mf: mf.conversation("c1").context_at(-1), InvalidInput,
     "turn -1 is out of range: 'c1' has turns 1 to 4"),
    ("context-at-huge", lambda mf: mf.conversation("c1").context_at(10**9), InvalidInput,
     "turn 1000000000 is out of range: 'c1' has turns 1 to 4"),
    ("context-at-text", lambda mf: mf.conversation("c1").context_at("x"), InvalidInput,
     "the turn number must be a whole number from 1 to 4 (the turns of 'c1'), got str 'x'"),
    ("context-at-float", lambda mf: mf.conversation("c1").context_at(2.5), InvalidInput,
     "must be a whole number from 1 to 4"),
    ("window-at-zero", lambda mf: mf.conversation("c1").window_at(0), InvalidInput, "has turns 1 to 4"),
    ("tool-call-arguments-list", lambda mf: mf.conversation("c1").handle_tool_call("search", [1, 2]), InvalidInput,
     "tool 'search': arguments must be a JSON object (a dict of argument names and values) or the JSON text of "
     "one, got list [1, 2]"),
    ("tool-call-arguments-number", lambda mf: mf.conversation("c1").handle_tool_call("fold_unit", 7), InvalidInput,
     "tool 'fold_unit': arguments must be a JSON object"),
    # labels
    ("relabel-str", lambda mf: mf.relabel("t1", "secret"), InvalidInput,
     "labels must be a list of label names, got the string 'secret': pass ['secret']"),
    ("relabel-bad-ref", lambda mf: mf.relabel("x1", ["a"]), InvalidInput, "ref must be 't<id>'"),
    ("relabel-missing", lambda mf: mf.relabel("t999", ["a"]), NotFound, "t999"),
    ("revoke-empty-label", lambda mf: mf.revoke_label("t1", ""), InvalidInput, "label is empty"),
    # conversations
    ("conversation-other-namespace", lambda mf: mf.conversation("c1", namespace="other"), InvalidInput,
     "is in namespace 'acme/dana', not 'other'"),
    ("conversation-empty-id", lambda mf: mf.conversation("", namespace=NS), InvalidInput, "empty"),
    ("conversation-create-str", lambda mf: mf.conversation("new", namespace=NS, create="no"), InvalidInput,
     "create must be True or False"),
    ("conversation-missing", lambda mf: mf.conversation("nope", create=False), ConversationNotFound, "nope"),
    # protected channel, erasure, consolidation, clock
    ("protect-kind", lambda mf: mf.protect("x", kind="wish", conversation_id="c1"), InvalidInput, "wish"),
    ("protect-provenance-str", lambda mf: mf.protected.add("x", conversation_id="c1", provenance="turn:1"),
     InvalidInput, "provenance must be a list of source ids"),
    ("protect-due-text", lambda mf: mf.protect("x", kind="deadline", conversation_id="c1", due_at="soon"),
     ClockError, "must be a number of ticks"),
    ("protect-no-scope", lambda mf: mf.protect("x"), InvalidInput, "namespace"),
    ("protect-unknown-conversation", lambda mf: mf.protect("x", conversation_id="nope"), ConversationNotFound, "nope"),
    ("protect-satisfy-missing", lambda mf: mf.protected.satisfy(999), NotFound, "999"),
    ("strategy-enter-no-brief", lambda mf: mf.conversation("c1").strategy_enter("errand"), InvalidInput,
     "strategy 'errand' needs a brief: the task this frame is for"),
    ("strategy-enter-blank-brief", lambda mf: mf.conversation("c1").strategy_enter("errand", "  "), InvalidInput,
     "needs a brief"),
    ("spawn-no-brief", lambda mf: mf.conversation("c1").spawn(" "), InvalidInput, "a subagent needs a brief"),
    ("erase-no-scope", lambda mf: mf.erase(), InvalidInput, "scope"),
    ("erase-bad-id", lambda mf: mf.erase(turn_ids=["t1"]), InvalidInput, "integer"),
    ("consolidate-unknown", lambda mf: mf.consolidate("nope"), NotFound, "no namespace 'nope'"),
    ("advance-negative", lambda mf: mf.advance_clock(-1), ClockError, "never moves backwards"),
]


@pytest.mark.parametrize("call,error,words", [c[1:] for c in API_CASES], ids=[c[0] for c in API_CASES])
def test_api_bad_input_is_refused_and_writes_nothing(db, call, error, words):
    before = dump(db)
    mf = facade(db)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(error) as caught:
            call(mf)
    mf.close()
    assert isinstance(caught.value, MemfoldError)
    assert words in str(caught.value), str(caught.value)
    assert dump(db) == before, "a refused call changed the database"


#: recall tool calls as a model sends them: the answer is "error: ..." text the model can act
#: on, naming the problem, never a Python internal; nothing is written
TOOL_CASES = [
    ("search-missing-query", "search", {}, "error: search: the argument 'query' is required (a string)"),
    ("search-empty-query", "search", {"query": " "}, "error: search: the argument 'query' is empty"),
    ("search-k-text", "search", {"query": "order", "k": "x"}, "error: search: the argument 'k' must be an integer, got 'x'"),
    ("search-k-too-big", "search", {"query": "order", "k": 500}, "error: k must be an integer from 1 to 100, got 500"),
    ("search-unknown-arg", "search", {"query": "order", "top": 3}, "error: search: unknown argument(s) top"),
    ("search-bad-json", "search", "{not json", "error: tool 'search': arguments are not valid JSON"),
    ("search-not-object", "search", "[1, 2]",
     "error: tool 'search': arguments must be a JSON object of argument names and values, got a list"),
    ("fold-not-object", "fold_unit", "[1, 7]",
     "error: tool 'fold_unit': arguments must be a JSON object of argument names and values, got a list"),
    ("strategy-not-object", "strategy_request", '"errand"',
     "error: tool 'strategy_request': arguments must be a JSON object of argument names and values, got a string"),
    ("describe-missing-id", "describe", {}, "error: describe: the argument 'id' is required (a string)"),
    ("expand-id-number", "expand", {"id": 5}, "error: expand: the argument 'id' must be a string, got 5"),
    ("expand-to-turns-text", "expand", {"id": "t1", "to_turns": "yes"},
     "error: expand: the argument 'to_turns' must be true or false, got 'yes'"),
    ("expand-unknown-card", "expand", {"id": "c999"}, "error: no summary card c999"),
    ("unknown-tool", "delete", {"id": "t1"}, "error: unknown tool 'delete'"),
    # issue 20 follow-up: with the fold card on (the default), every tool the dispatcher runs is named
    ("unknown-tool-names-fold-tools", "delete", {"id": "t1"},
     "error: unknown tool 'delete': the tools are search, describe, expand (recall), fold_unit (folds) and "
     "strategy_request, strategy_report, strategy_yield (strategies)"),
]


@pytest.mark.parametrize("name,arguments,answer", [c[1:] for c in TOOL_CASES], ids=[c[0] for c in TOOL_CASES])
def test_recall_tool_bad_arguments_answer_clearly(db, name, arguments, answer):
    before = dump(db)
    mf = facade(db)
    text = mf.conversation("c1").handle_tool_call(name, arguments)
    mf.close()
    assert text.startswith(answer), text
    assert "invalid literal" not in text and "Traceback" not in text
    assert dump(db) == before


def test_context_at_in_a_conversation_without_turns_names_it(tmp_path):
    mf = MemFold(tmp_path / "a.db", clock=LogicalClock(), token_counter="words", embedder=None)
    conv = mf.conversation("fresh", namespace=NS)
    with pytest.raises(InvalidInput, match="conversation 'fresh' has no turns yet: there is no turn 1 to look at"):
        conv.context_at(1)
    mf.close()


# -- settings refused before any database exists ------------------------------------------------
SETTING_CASES = [
    ("clock-str", {"clock": "logical"}, InvalidInput, "clock must be a memfold Clock such as LogicalClock()"),
    ("token-counter", {"token_counter": "banana"}, InvalidInput, "unknown token counter 'banana'"),
    ("token-counter-number", {"token_counter": 42}, InvalidInput, "unknown token counter 42"),
    ("secrets", {"secrets": "maybe"}, InvalidInput, "secrets must be 'detect', 'off' or a detector"),
    ("embedder", {"embedder": 42}, InvalidInput, "embedder must be an Embedder or a model name/path, got 42"),
    ("window", {"window": "big"}, InvalidInput, "window must be a WindowSettings"),
    ("summarizer", {"summarizer": "fast"}, InvalidInput, "summarizer must be a memfold Summarizer"),
    ("extractor", {"extractor": "magic"}, InvalidInput, "unknown extractor 'magic'"),
    ("constraint-extractor", {"constraint_extractor": 3}, InvalidInput, "constraint_extractor must be"),
    ("create", {"create": "yes"}, InvalidInput, "create must be True or False"),
]


@pytest.mark.parametrize("kwargs,error,words", [c[1:] for c in SETTING_CASES], ids=[c[0] for c in SETTING_CASES])
def test_bad_settings_create_no_database(tmp_path, kwargs, error, words):
    path = tmp_path / "new.db"
    with pytest.raises(error, match=None) as caught:
        MemFold(path, **kwargs)
    assert words in str(caught.value), str(caught.value)
    assert list(tmp_path.iterdir()) == [], "a refused setting left a file behind"


@pytest.mark.parametrize("kwargs", [c[1] for c in SETTING_CASES[:5]], ids=[c[0] for c in SETTING_CASES[:5]])
def test_bad_settings_leave_an_existing_database_unchanged(db, kwargs):
    before = dump(db)
    with pytest.raises(InvalidInput):
        MemFold(db, **kwargs)
    assert dump(db) == before


def test_unknown_model_name_counts_with_cl100k_and_warns(tmp_path):
    with pytest.warns(UserWarning, match="tiktoken does not know the model 'gpt-17': counting its tokens with cl100k_base"):
        mf = MemFold(tmp_path / "a.db", token_counter="gpt-17", embedder=None)
    assert mf.token_counter.id == "tiktoken:cl100k_base"
    mf.close()


@pytest.mark.parametrize("model,encoding", [("gpt-4o", "o200k_base"), ("gpt-4o-mini", "o200k_base"),
                                            ("gpt-4.1", "o200k_base"), ("o3", "o200k_base"), ("o4-mini", "o200k_base"),
                                            ("gpt-4", "cl100k_base"), ("gpt-3.5-turbo", "cl100k_base")])
def test_token_counter_by_model_name_is_offline(tmp_path, model, encoding):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a known model never warns
        mf = MemFold(tmp_path / "a.db", token_counter=model, embedder=None)
    assert mf.token_counter.id == f"tiktoken:{encoding}"
    assert mf.token_counter.count("Hello, Dana!") == 4
    mf.close()


# -- files memfold must refuse untouched -----------------------------------------------------
def test_read_only_database_is_one_storage_error_and_unchanged(db):
    before = dump(db)
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
    mf = MemFold(sqlite_utils.Database(conn), embedder=None)
    with pytest.raises(StorageError) as caught:
        mf.remember(NS, "semantic", "a new fact")
    assert "the database is read-only" in str(caught.value) and "nothing was written" in str(caught.value)
    with pytest.raises(StorageError, match="the database is read-only"):
        mf.conversation("c1").append({"role": "user", "content": "hello"})
    mf.close()
    assert dump(db) == before


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_memory_opened_read_only_says_so_and_how_to_write(request, template, tmp_path, backend):
    """MemFold(read_only=True) on a writable file (the viewer's way): the refusal names the
    read-only open and the fix, not the file's permissions."""
    if backend == "sqlite":
        target = tmp_path / "agent.db"
        shutil.copyfile(template, target)
    else:
        target = request.getfixturevalue("pg_url")
        MemFold(target, clock=LogicalClock(), token_counter="words", embedder=None).conversation(
            "c1", namespace=NS).append({"role": "user", "content": "hello"})
    ro = MemFold(target, embedder=None, read_only=True)
    turns, records = len(ro.conversation("c1").history()), len(ro.memory.list(include_inactive=True))
    for write in (lambda: ro.conversation("c1").append({"role": "user", "content": "hello"}),
                  lambda: ro.remember(NS, "semantic", "a new fact")):
        with pytest.raises(StorageError) as caught:
            write()
        message = str(caught.value)
        assert message.startswith("the memory was opened read-only (MemFold(..., read_only=True), as `memfold "
                                  "view` opens it): nothing was written; to write, open it without read_only"), message
        assert "writable" not in message
    assert len(ro.conversation("c1").history()) == turns and len(ro.memory.list(include_inactive=True)) == records
    ro.close()


def test_foreign_sqlite_file_keeps_its_journal_mode_and_gets_no_wal_files(tmp_path):
    foreign = tmp_path / "app.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE users (id INTEGER)")
    conn.execute("INSERT INTO users VALUES (1)")
    conn.commit()
    conn.close()
    data = foreign.read_bytes()
    with pytest.raises(StorageError, match=r"is not a memfold database: it holds other tables \(users\)"):
        MemFold(foreign, embedder=None)
    result = CliRunner().invoke(cli, ["memories", str(foreign)])
    assert result.exit_code == 1 and "holds other tables (users)" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.db"]
    assert foreign.read_bytes() == data
    assert sqlite3.connect(foreign).execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_zero_byte_file_is_refused_by_read_commands_and_not_written(tmp_path):
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    for args in (["memories", str(empty)], ["history", str(empty), "-c", "c1"], ["events", str(empty)]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 1, result.output
        assert result.output.strip().splitlines()[-1] == (
            f"Error: {empty} is not a memfold database (it is empty): create it with 'memfold init {empty}'")
    assert empty.read_bytes() == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.db"]


def test_a_file_that_is_not_sqlite_is_refused_untouched(tmp_path):
    junk = tmp_path / "notes.db"
    junk.write_bytes(b"these are my notes, not a database" * 100)
    with pytest.raises(StorageError, match="cannot open .* as a memfold database"):
        MemFold(junk, embedder=None)
    assert junk.read_bytes() == b"these are my notes, not a database" * 100
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db"]


# -- the CLI ---------------------------------------------------------------------------------
def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def cli_cases(tmp: Path) -> list[tuple[str, list[str], int, str]]:
    bad = write(tmp / "bad.jsonl", '{"role": "user", "content": "fine"}\n{"role": "user", "content": "a\\u0000b"}\n')
    good = write(tmp / "good.jsonl", '{"role": "user", "content": "hello"}\n')
    notjson = write(tmp / "notjson.jsonl", '{"role": "user", "content": "fine"}\n{oops\n')
    return [
        ("remember-empty", ["remember", "{db}", "  ", "-n", NS], 1, "content is empty"),
        ("remember-importance", ["remember", "{db}", "x", "-n", NS, "-i", "2"], 1, "importance 2.0 is outside [0, 1]"),
        ("remember-type", ["remember", "{db}", "x", "-n", NS, "-t", "facts"], 2, "Invalid value for '--type'"),
        ("pin-zero", ["pin", "{db}", "0"], 1, "record id 0 is out of range"),
        ("pin-huge", ["pin", "{db}", "99999999999999999999999"], 1, "is out of range: no id is that large"),
        ("describe-turn-zero", ["describe", "{db}", "t0", "-c", "c1"], 1,
         "turn id 0 is out of range: the turns of 'c1' are t1 to t4"),
        ("pin-text", ["pin", "{db}", "abc"], 2, "'abc' is not a valid integer"),
        ("pin-missing", ["pin", "{db}", "999"], 1, "999"),
        ("satisfy-missing", ["protect", "satisfy", "{db}", "999"], 1, "999"),
        ("satisfy-float", ["protect", "satisfy", "{db}", "1e3"], 2, "'1e3' is not a valid integer"),
        ("history-unknown", ["history", "{db}", "-c", "nope"], 1, "no conversation 'nope'"),
        ("history-limit", ["history", "{db}", "-c", "c1", "--limit", "-1"], 2, "-1 is not in the range x>=1"),
        ("context-budget-1", ["context", "{db}", "-c", "c1", "--budget", "1", "--reserve", "0"], 1,
         "the protected channel alone is 39 tokens"),
        ("context-budget-50", ["context", "{db}", "-c", "c1", "--budget", "50", "--reserve", "0"], 1,
         "no compaction can fit it, so nothing was folded"),
        ("search-empty", ["search", "{db}", " ", "-c", "c1", "--embedder", "none"], 1, "search query is empty"),
        ("search-unknown-conversation", ["search", "{db}", "order", "-c", "nope", "--embedder", "none"], 1, "nope"),
        ("search-limit", ["search", "{db}", "order", "-c", "c1", "--limit", "500"], 2, "500 is not in the range"),
        ("expand-unknown", ["expand", "{db}", "c999", "-c", "c1"], 1, "c999"),
        ("describe-bad-ref", ["describe", "{db}", "x1", "-c", "c1"], 1, "not a card or turn id"),
        ("ingest-bad-line", ["ingest", "{db}", "-c", "c1", bad], 1, "line 2: content contains a NUL byte"),
        ("ingest-not-json", ["ingest", "{db}", "-c", "c2", notjson], 1, "line 2: not valid JSON"),
        ("ingest-other-namespace", ["ingest", "{db}", "-c", "c1", "-n", "other", good], 1,
         "is in namespace 'acme/dana', not 'other'"),
        ("protect-add-empty", ["protect", "add", "{db}", " ", "-c", "c1"], 1, "protected text is empty"),
        ("protect-add-due", ["protect", "add", "{db}", "x", "-c", "c1", "-k", "deadline", "--due", "soon"], 1, "soon"),
        ("erase-no-scope", ["erase", "{db}", "--yes"], 1, "scope"),
        ("export-unknown", ["export", "{db}", "-c", "nope", "-o", str(tmp / "out.jsonl")], 1, "nope"),
        ("policy-half-life", ["policy", "{db}", "-n", NS, "-t", "semantic", "--half-life", "0"], 1, "half"),
        ("consolidate-unknown", ["consolidate", "{db}", "-n", "nope"], 1, "no namespace 'nope'"),
        ("strategy-enter-no-brief", ["strategy", "{db}", "-c", "c1", "enter", "errand"], 1,
         "strategy 'errand' needs a brief"),
    ]


with tempfile.TemporaryDirectory() as _ids_dir:  # cli_cases writes its input files: never into the cwd
    CLI_IDS = [c[0] for c in cli_cases(Path(_ids_dir))]


@pytest.mark.parametrize("index", range(len(CLI_IDS)), ids=CLI_IDS)
def test_cli_bad_input_is_one_error_line_and_writes_nothing(db, tmp_path, index):
    name, args, code, words = cli_cases(tmp_path)[index]
    before = dump(db)
    result = CliRunner().invoke(cli, [str(db) if a == "{db}" else a for a in args])
    assert result.exit_code == code, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("Error: ") and words in result.output, result.output
    if code == 1:  # a library error: exactly one line, no traceback
        assert len(result.output.strip().splitlines()) == 1, result.output
    assert dump(db) == before


def test_cli_json_error_is_an_object_on_stdout(db):
    result = CliRunner().invoke(cli, ["context", str(db), "-c", "c1", "--budget", "50", "--reserve", "0", "--json"])
    assert result.exit_code == 1
    error = json.loads(result.stdout)
    assert error["type"] == "BudgetError" and "nothing was folded" in error["error"]


def test_the_corpus_has_at_least_sixty_cases():
    total = len(API_CASES) + len(TOOL_CASES) + len(SETTING_CASES) + len(CLI_IDS)
    assert total >= 60, total


# -- inputs real clients send (point 5) -------------------------------------------------------
def test_openai_client_messages_are_accepted_and_lossless(db):
    mf = facade(db)
    conv = mf.conversation("c1")
    parts = [{"type": "text", "text": "Here is the photo."},
             {"type": "image_url", "image_url": {"url": "https://example.com/earbuds.png"}},
             {"type": "text", "text": "It is cracked."}]
    t_parts = conv.append({"role": "user", "content": parts})
    t_refusal = conv.append({"role": "assistant", "content": "Let me check.", "refusal": None})
    t_call = conv.append({"role": "assistant", "content": None, "refusal": None, "tool_calls": [TOOL_CALL]})
    t_empty = conv.append({"role": "tool", "tool_call_id": "call_9", "content": ""})
    t_refused = conv.append({"role": "assistant", "content": None, "refusal": "I can't help with that."})
    turns = mf.conversation("c1").turns_by_id([t_parts, t_refusal, t_call, t_empty, t_refused])
    assert turns[t_parts].content == "Here is the photo.\nIt is cracked."
    assert turns[t_parts].metadata["content_parts"] == parts  # the image part too: nothing lost
    assert turns[t_refusal].content == "Let me check." and "refusal" not in turns[t_refusal].metadata
    assert turns[t_call].content == "" and turns[t_call].tool_calls == [TOOL_CALL]
    assert turns[t_empty].content == "" and turns[t_empty].tool_call_id == "call_9"
    assert turns[t_refused].content == "I can't help with that."
    assert turns[t_refused].metadata["refusal"] == "I can't help with that."
    messages = conv.context(budget=2000).messages
    # the empty tool result answers its call in the compiled context
    call_at = next(i for i, m in enumerate(messages) if m.get("tool_calls") == [TOOL_CALL])
    assert messages[call_at + 1] == {"role": "tool", "content": "", "tool_call_id": "call_9"}
    assert [h.ref for h in conv.search("cracked photo", 3)][:1] == [f"t{t_parts}"]
    mf.close()


def test_jsonl_with_a_byte_order_mark_ingests(db, tmp_path):
    path = tmp_path / "windows.jsonl"
    lines = [{"role": "user", "content": [{"type": "text", "text": "hello from Windows"}]},
             {"role": "assistant", "content": None, "refusal": None, "tool_calls": [TOOL_CALL]},
             {"role": "tool", "tool_call_id": "call_9", "content": ""}]
    path.write_bytes(b"\xef\xbb\xbf" + "\n".join(json.dumps(m) for m in lines).encode("utf-8") + b"\n")
    result = CliRunner().invoke(cli, ["ingest", str(db), "-c", "win", "-n", NS, str(path)])
    assert result.exit_code == 0, result.output
    mf = facade(db)
    history = mf.conversation("win").history()
    assert [t.content for t in history] == ["hello from Windows", "", ""]
    assert history[1].tool_calls == [TOOL_CALL] and history[2].tool_call_id == "call_9"
    mf.close()


def test_http_api_takes_what_openai_clients_send(db):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from memfold.integrations.http import create_app

    mf = facade(db)
    with TestClient(create_app(mf)) as client:
        messages = [{"role": "user", "content": [{"type": "text", "text": "Is my refund done?"}]},
                    {"role": "assistant", "content": None, "refusal": None, "tool_calls": [TOOL_CALL]},
                    {"role": "tool", "tool_call_id": "call_9", "content": ""}]
        reply = client.post("/v1/conversations/c1/turns", json={"messages": messages})
        assert reply.status_code == 201, reply.text
        before = dump(db)
        bad = client.post("/v1/conversations/c1/turns", json={"messages": [{"role": "user", "content": [7]}]})
        assert bad.status_code == 422 and "content" in bad.text
        assert dump(db) == before
    turns = mf.conversation("c1").turns_by_id(reply.json()["turn_ids"])
    assert [t.content for t in sorted(turns.values(), key=lambda t: t.seq)] == ["Is my refund done?", "", ""]
    mf.close()
