"""Round 13's new-user QA pass: the defects it found, each with what it did before, plus new bad
inputs that were already refused (so they stay refused). Every bad-input case asserts the error
class (a :class:`MemfoldError`), words of its message, and that the database is unchanged (dumped
as SQL before and after, or no file created)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from memfold import (
    ClockError,
    InvalidInput,
    LogicalClock,
    MemFold,
    MemfoldError,
    PermissionDenied,
    Reader,
    SecretDetector,
    StorageError,
)
from memfold.cli import cli

NS = "acme/dana"


def build_template(path: Path) -> None:
    mf = MemFold(path, clock=LogicalClock(), token_counter="words", embedder=None)
    conv = mf.conversation("c1", namespace=NS)
    conv.append({"role": "user", "content": "My order ORD-3300 arrived broken."})
    conv.append({"role": "assistant", "content": "Sorry to hear that. Let me check."})
    mf.memory.write(NS, "semantic", "Dana prefers email contact", key="user.contact_preference", importance=0.6)
    mf.protect("Always answer in English.", namespace=NS)
    mf.conversation("legal-1", namespace=NS, labels=["legal"]).append({"role": "user", "content": "Clause 7 is void"})
    mf.close()


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("r13") / "template.db"
    build_template(path)
    return path


@pytest.fixture
def db(template, tmp_path) -> Path:
    path = tmp_path / "agent.db"
    shutil.copyfile(template, path)
    return path


from conftest import database_dump as dump  # noqa: E402


def _conv(mf):
    return mf.conversation("c1", create=False)


def _closed(mf):
    mf.close()
    return mf


def _turn(**more):
    return {"role": "user", "content": "x", **more}


#: (id, call(mf), error class, words the message must contain). "before" says what each did.
API_CASES = [
    # -- defects found (before -> now) --
    # labels="secret" became the labels c, e, r, s, t
    ("protect-labels-str", lambda mf: mf.protect("x", namespace=NS, labels="secret"), InvalidInput,
     "labels must be a list of label names, got 'secret'"),
    # a truthy string compacted
    ("append-compact-str", lambda mf: _conv(mf).append(_turn(), compact="no"), InvalidInput,
     "compact must be True or False, got 'no'"),
    # ValueError: dictionary update sequence element #0 has length 1
    ("conv-search-filters-str", lambda mf: _conv(mf).search("order", filters="x"), InvalidInput,
     "search filters must be a mapping"),
    # open(5) read (and closed) file descriptor 5
    ("import-jsonl-int", lambda mf: _conv(mf).import_jsonl(5), InvalidInput,
     "a JSONL file must be a path (str or os.PathLike), got int 5"),
    ("ingest-jsonl-int", lambda mf: mf.ingest_jsonl("c9", 5), InvalidInput, "a JSONL file must be a path"),
    # silently no hit
    ("search-namespace-int", lambda mf: mf.search("order", namespace=5), InvalidInput,
     "namespace must be a string, got int"),
    # ConversationNotFound "no conversation 5"
    ("search-conversation-int", lambda mf: mf.search("order", conversation_id=5), InvalidInput,
     "conversation_id must be a string, got int"),
    # sqlite3.ProgrammingError: Cannot operate on a closed database
    ("closed-memory-read", lambda mf: _closed(mf).memory.read(NS), StorageError, "closed database"),
    # a string summarizer was taken (and would fail at the first fold)
    ("compact-summarizer-str", lambda mf: _conv(mf).compact(summarizer="fast"), InvalidInput,
     "summarizer must be a memfold Summarizer, got str"),
    # a truthy string wrote times
    ("export-with-times-str", lambda mf: _conv(mf).export_jsonl(with_times="yes"), InvalidInput,
     "with_times must be True or False, got 'yes'"),
    # names that look like others, or break line-per-item listings, were accepted
    ("conversation-id-rtl-override", lambda mf: mf.conversation("\u202eabc", namespace=NS), InvalidInput,
     "invisible or control character U+202E"),
    ("namespace-zero-width-space", lambda mf: mf.memory.write("acme/\u200bdana", "semantic", "x"), InvalidInput,
     "invisible or control character U+200B at position 5"),
    ("key-newline", lambda mf: mf.memory.write(NS, "semantic", "x", key="user.\nname"), InvalidInput,
     "U+000A"),
    ("conversation-id-tab", lambda mf: mf.conversation("a\tb", namespace=NS), InvalidInput, "U+0009"),
    ("label-bom", lambda mf: _conv(mf).append(_turn(labels=["\ufefflegal"])), InvalidInput, "U+FEFF"),
    # -- the library's labelled-conversation write check --
    ("append-reader-lacks-label", lambda mf: mf.conversation("legal-1", create=False).append(
        _turn(), reader=Reader.of([], "support-bot")), PermissionDenied,
     "support-bot may not write to conversation 'legal-1': it requires a label this reader lacks"),
    ("append-many-reader-lacks-label", lambda mf: mf.conversation("legal-1", create=False).append_many(
        [_turn(), _turn()], reader=["secret"]), PermissionDenied, "may not write to conversation 'legal-1'"),
    ("append-reader-str", lambda mf: mf.conversation("legal-1", create=False).append(_turn(), reader="legal"),
     InvalidInput, "reader must be a Reader or a list of labels, got the string 'legal'"),
    # -- new bad inputs already refused --
    ("write-key-int", lambda mf: mf.memory.write(NS, "semantic", "x", key=5), InvalidInput, "key must be a string"),
    ("write-importance-bool", lambda mf: mf.memory.write(NS, "semantic", "x", importance=True), InvalidInput,
     "importance must be a number in [0, 1], got True"),
    ("write-event-time-inf", lambda mf: mf.memory.write(NS, "semantic", "x", event_time=float("inf")), ClockError,
     "finite"),
    ("write-content-bytes", lambda mf: mf.memory.write(NS, "semantic", b"x"), InvalidInput, "content must be a string"),
    ("read-limit-bool", lambda mf: mf.memory.read(NS, True), InvalidInput, "limit must be a whole number >= 1"),
    ("get-negative", lambda mf: mf.memory.get(-1), InvalidInput, "record id -1 is out of range"),
    ("search-limit-float", lambda mf: mf.search("order", limit=2.5), InvalidInput, "positive integer, got 2.5"),
    ("append-none", lambda mf: _conv(mf).append(None), InvalidInput, "a turn must be an object"),
    ("append-role-upper", lambda mf: _conv(mf).append({"role": "USER", "content": "x"}), InvalidInput,
     "got 'USER'"),
    ("append-metadata-nan", lambda mf: _conv(mf).append(_turn(metadata={"k": float("nan")})), InvalidInput,
     "NaN and infinities have no JSON form"),
    ("append-created-bool", lambda mf: _conv(mf).append(_turn(created_at=True)), ClockError, "got True"),
    ("append-content-nbsp-only", lambda mf: _conv(mf).append({"role": "user", "content": "\u00a0\u3000"}),
     InvalidInput, "empty or whitespace only"),
    ("append-many-keys-mismatch", lambda mf: _conv(mf).append_many([_turn()], idempotency_keys=["a", "b"]),
     InvalidInput, "idempotency_keys has 2 entries for 1 turns"),
    ("append-many-bad-last-of-5000", lambda mf: _conv(mf).append_many(
        [{"role": "user", "content": f"m{i}"} for i in range(5000)] + [{"role": "user", "content": ""}]),
     InvalidInput, "empty or whitespace only"),
    ("context-budget-huge", lambda mf: _conv(mf).context(budget=10**30), InvalidInput, "at most"),
    ("context-reserve-over-budget", lambda mf: _conv(mf).context(budget=100, output_reserve=200), InvalidInput,
     "must be smaller than budget_tokens"),
    ("tail-bool", lambda mf: _conv(mf).tail(True), InvalidInput, "tail needs a whole number of turns >= 1"),
    ("fork-at-out-of-range", lambda mf: _conv(mf).fork("new", at=999), InvalidInput, "fork point 999 is outside"),
    ("protect-due-nan", lambda mf: mf.protect("x", kind="deadline", conversation_id="c1", due_at=float("nan")),
     ClockError, "finite"),
    ("satisfy-bool", lambda mf: mf.protected.satisfy(True), InvalidInput, "must be an integer, got True"),
    ("erase-ids-str", lambda mf: mf.erase(turn_ids="1"), InvalidInput, "turn id must be an integer"),
    ("advance-inf", lambda mf: mf.advance_clock(float("inf")), ClockError, "integer number of ticks, got inf"),
    ("policy-capacity-float", lambda mf: mf.policy(NS, "semantic", capacity=2.5), InvalidInput,
     "capacity must be a whole number"),
    ("closed-advance", lambda mf: _closed(mf).advance_clock(1), StorageError, "closed database"),
]


@pytest.mark.parametrize("call,error,words", [c[1:] for c in API_CASES], ids=[c[0] for c in API_CASES])
def test_api_bad_input_is_refused_and_writes_nothing(db, call, error, words):
    before = dump(db)
    mf = MemFold(db, embedder=None)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            with pytest.raises(error) as caught:
                call(mf)
    finally:
        mf.close()
    assert isinstance(caught.value, MemfoldError)
    assert words in str(caught.value), str(caught.value)
    assert dump(db) == before, "a refused call changed the database"


def test_a_deeply_nested_tool_call_is_a_tool_error_and_writes_nothing(db):
    """RecursionError escaped from the recall tools' JSON decoding."""
    before = dump(db)
    mf = MemFold(db, embedder=None)
    answer = _conv(mf).handle_tool_call("search", "[" * 100_000 + "]" * 100_000)
    mf.close()
    assert answer.startswith("error: tool 'search': arguments are not valid JSON"), answer
    assert dump(db) == before


@pytest.mark.parametrize("target, words", [
    (5, "the database must be a file path (str or os.PathLike) or a postgresql:// URL, got int 5"),  # TypeError
    (b"agent.db", "got bytes"),  # TypeError
    ("", "the database path is empty"),  # opened the folder "."
    ("a\x00b.db", "contains a NUL byte"),  # ValueError: embedded null byte
    ("mysql://host/db", "unsupported database URL mysql://"),  # looked for as a file
])
def test_a_database_target_naming_no_database_is_refused_and_creates_nothing(tmp_path, monkeypatch, target, words):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidInput) as caught:
        MemFold(target, embedder=None)
    assert words in str(caught.value), str(caught.value)
    assert list(tmp_path.iterdir()) == []


def test_the_library_refuses_a_writer_lacking_the_conversations_labels(db):
    """The HTTP route and the MCP tool each checked this themselves; now ``append(reader=...)``
    does, and they pass their caller's reader (their own tests: tests/test_round12_fixes.py)."""
    mf = MemFold(db, embedder=None)
    conv = mf.conversation("legal-1", create=False)
    ids = conv.append_many([_turn(content="and clause 8")], reader=Reader.of(["legal"], "counsel"))
    conv.append(_turn(content="and clause 9"))  # reader=None: the owner
    with pytest.raises(PermissionDenied, match="may not write to conversation 'legal-1'"):
        conv.append(_turn(content="what does clause 7 say?"), reader=["vip"])
    assert [t.content for t in conv.history()] == ["Clause 7 is void", "and clause 8", "and clause 9"]
    assert len(ids) == 1
    _conv(mf).append(_turn(content="an unlabelled conversation takes any writer"), reader=[])
    mf.close()


# -- the CLI ---------------------------------------------------------------------------------------

def test_ingesting_an_empty_file_is_refused_and_makes_no_conversation(db, tmp_path):
    """It said ``appended 0 turns to c3`` and created an empty conversation c3."""
    for text in ("", "\n\n  \n"):
        empty = tmp_path / "empty.jsonl"
        empty.write_text(text, encoding="utf-8")
        before = dump(db)
        result = CliRunner().invoke(cli, ["ingest", str(db), "-c", "c3", "-n", NS, str(empty), "--json"])
        assert result.exit_code == 1, result.output
        error = json.loads(result.stdout.splitlines()[0])
        assert error["type"] == "InvalidInput" and "holds no messages: nothing to ingest" in error["error"]
        assert dump(db) == before


def test_a_cli_error_whose_message_spans_lines_is_one_error_line(db, tmp_path):
    """A message quoting text with a newline (here the file's own name) printed several lines;
    ``--json`` keeps the message whole."""
    folder = tmp_path / "two\nlines"
    folder.mkdir()
    empty = folder / "t.jsonl"
    empty.write_text("", encoding="utf-8")
    before = dump(db)
    result = CliRunner().invoke(cli, ["ingest", str(db), "-c", "c3", "-n", NS, str(empty)])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and result.output.startswith("Error: ") and "two lines" in result.output
    as_json = CliRunner().invoke(cli, ["ingest", str(db), "-c", "c3", "-n", NS, str(empty), "--json"])
    assert "two\nlines" in json.loads(as_json.stdout.splitlines()[0])["error"]
    assert dump(db) == before


@pytest.mark.parametrize("args, code, words", [
    (["remember", "{db}", "x", "-n", NS, "-i", "nan"], 1, "importance is NaN"),
    (["remember", "{db}", "x", "-n", NS, "-k", "user.\tname"], 1, "U+0009"),
    (["context", "{db}", "-c", "c1", "--soft", "0.9", "--hard", "0.5"], 1, "must not exceed hard_watermark"),
    (["context", "{db}", "-c", "c1", "--soft", "nan"], 1, "soft_watermark must be a fraction in (0, 1], got nan"),
    (["policy", "{db}", "-n", NS, "-t", "semantic", "--half-life", "inf"], 1, "half_life must be finite"),
    (["protect", "add", "{db}", "x", "-c", "c1", "-k", "deadline", "--due", "nan"], 1, "finite"),
    (["history", "{db}", "-c", "c1", "--reader", " x"], 1, "leading or trailing whitespace"),
    (["fork", "{db}", "c1", "new", "--at", "999"], 1, "fork point 999 is outside"),
])
def test_cli_bad_values_are_one_error_line_json_on_stdout_and_write_nothing(db, args, code, words):
    argv = [str(db) if a == "{db}" else a for a in args]
    before = dump(db)
    plain = CliRunner().invoke(cli, argv)
    assert plain.exit_code == code and plain.output.startswith("Error: ") and words in plain.output, plain.output
    assert plain.output.count("\n") == 1, plain.output
    as_json = CliRunner().invoke(cli, argv + ["--json"])
    error = json.loads(as_json.stdout.splitlines()[0])
    assert words in error["error"] and error["type"] in ("InvalidInput", "ClockError")
    assert dump(db) == before


# -- the secret detector: a password manager is no secret (known defect of round 12) ---------------

@pytest.mark.parametrize("text", [
    "I switched my password manager to Bitwarden.",
    "I use a password manager now",
    "Which password generator do you like?",
    "I forgot my password.",
    "Can you reset my online banking password?",
])
def test_a_password_as_a_topic_is_no_secret(text):
    assert SecretDetector().spans({"role": "user", "content": text}) == []


@pytest.mark.parametrize("text, secret", [
    ("my password is hunter2", None),  # a user turn naming a password: all of it
    ("I forgot my password. It was Fluffy", None),
    ("My password manager's master password is Tr0ub4dor", None),
    ("pw: X1234abc", "X1234abc"),
    ("my PIN is 4471", "4471"),
    ("my api key is sk-abc123def456ghi789", "sk-abc123def456ghi789"),
    ("use token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
    ("card 4111 1111 1111 1111 please", "4111 1111 1111 1111"),
])
def test_true_secrets_stay_secret(text, secret):
    spans = SecretDetector().spans({"role": "user", "content": text})
    assert spans, text
    if secret is None:
        assert spans == [(0, len(text))]
    else:
        assert [text[a:b] for a, b in spans] == [secret]


@pytest.mark.parametrize("text", ["account 85731890", "call me at 4155550123", "order 1234567890123",
                                  "tokens: 12345678 used", "my api key is expired"])
def test_numbers_and_words_that_are_no_credential(text):
    """A long number failing the Luhn check, a phone number, a word after "api key is"."""
    assert SecretDetector().spans({"role": "user", "content": text}) == []


def test_a_reader_without_the_secret_label_sees_the_password_manager_turn(tmp_path):
    mf = MemFold(tmp_path / "s.db", clock=LogicalClock(), token_counter="words", embedder=None)
    conv = mf.conversation("c", namespace="n")
    conv.append({"role": "user", "content": "I switched my password manager to Bitwarden."})
    conv.append({"role": "user", "content": "my password is hunter2"})
    seen = [t.content for t in conv.history(reader=[])]
    mf.close()
    assert seen == ["I switched my password manager to Bitwarden."]


# -- "moved from X to Y" between products is no move of home (known leftover of round 11) -----------

def _facts_after(tmp_path, turns):
    mf = MemFold(tmp_path / "m.db", clock=LogicalClock(), token_counter="words", embedder=None, secrets="off",
                 preload_embedder=False)
    conv = mf.conversation("c", namespace="n")
    for text in turns:
        conv.append({"role": "user", "content": text})
        mf.consolidate("n", include_turns=True)
    facts = sorted((r.key, r.content) for r in mf.memory.list("n"))
    mf.close()
    return facts


@pytest.mark.parametrize("text", ["I moved from Google to Kagi.", "I've now moved from Spotify to Apple Music.",
                                  "I moved from iPhone to Android.", "I moved to Kagi."])
def test_a_move_between_products_with_nothing_known_is_no_location(tmp_path, text):
    """``user.location = Kagi`` before."""
    assert _facts_after(tmp_path, [text]) == []


@pytest.mark.parametrize("text, place", [("I moved from Leeds to Bristol.", "Bristol"),
                                          ("I moved from London to New York last year.", "New York"),
                                          ("I moved to 5th Avenue.", "5th Avenue"),
                                          ("I moved from Paris to Lyon in 2019.", "Lyon")])  # was "Lyon in 2019"
def test_a_move_between_places_is_still_a_location(tmp_path, text, place):
    assert _facts_after(tmp_path, [text]) == [("user.location", place)]
