"""Round 11 QA (r11qa): defects found by following the README on a fresh clone and attacking every
entry point. Real databases and memfold's own code paths; deterministic parts (logical clock, word
counter) unless a test says otherwise."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from memfold import LogicalClock, MemFold, WindowSettings
from memfold.cli import cli
from memfold.memory.errors import ClockError, InvalidInput, MemfoldError


def _open(path, **kw):
    kw = {"clock": LogicalClock(), "token_counter": "words", "embedder": None, "secrets": "off",
          "preload_embedder": False, **kw}
    return MemFold(path, **kw)


# -- the clock: a tick past 2**53 bricked the file -------------------------------------------------

@pytest.mark.parametrize("ticks", [2**53 + 1, 10**400])
def test_advancing_a_logical_clock_past_two_to_the_53_is_refused_and_the_file_still_opens(tmp_path, ticks):
    """``mf.advance_clock(10**400)`` was accepted and stored the tick in the file; from then on
    every open of that database (every CLI command) died with ``OverflowError: cannot convert float
    infinity to integer``. Now the clock refuses a tick past 2**53 (what a stored time holds)
    before moving, and nothing is written."""
    db = tmp_path / "m.db"
    mf = _open(db)
    mf.conversation("c", namespace="ns").append({"role": "user", "content": "hello"})
    with pytest.raises(ClockError, match="2\\*\\*53"):
        mf.advance_clock(ticks)
    assert mf.clock.tick == 0
    mf.close()
    again = _open(db)
    assert [t.content for t in again.conversation("c", create=False).history()] == ["hello"]
    assert again.clock.tick == 0
    again.close()
    result = CliRunner().invoke(cli, ["clock", str(db), "--advance", str(ticks)])
    assert result.exit_code == 1 and result.output.count("Error:") == 1 and "2**53" in result.output, result.output
    assert CliRunner().invoke(cli, ["history", str(db), "-c", "c"]).exit_code == 0


def test_a_logical_clock_starting_past_two_to_the_53_is_refused():
    with pytest.raises(ClockError, match="at most 2\\*\\*53"):
        LogicalClock(2**54)


@pytest.mark.parametrize("clock", ["logical", "system"])
def test_a_created_at_integer_past_any_float_is_a_clock_error_naming_it(tmp_path, clock):
    """``created_at: 10**400`` (a JSONL line, an HTTP body, ``conv.append``) raised a bare
    ``OverflowError`` from ``float()``: a traceback from ``memfold ingest``, a 500 from HTTP."""
    db = tmp_path / "m.db"
    assert CliRunner().invoke(cli, ["init", str(db), "--clock", clock]).exit_code == 0
    line = '{"role": "user", "content": "x", "created_at": 1' + "0" * 400 + "}\n"
    path = tmp_path / "t.jsonl"
    path.write_text('{"role": "user", "content": "first"}\n' + line, encoding="utf-8")
    result = CliRunner().invoke(cli, ["ingest", str(db), "-c", "c", "-n", "ns", str(path)])
    assert result.exit_code == 1, result.output
    assert result.output.count("Error:") == 1 and "line 2" in result.output and "finite" in result.output
    assert not isinstance(result.exception, OverflowError)
    mf = MemFold(db, embedder=None, preload_embedder=False)
    assert mf.conversations() == []  # all or nothing: not even the conversation
    conv = mf.conversation("c2", namespace="ns")
    with pytest.raises(ClockError, match="finite"):
        conv.append({"role": "user", "content": "x", "created_at": 10**5000})  # too long even to print
    assert conv.history() == []
    mf.close()


# -- numbers and names past what the storage can hold: a bare OverflowError / UnicodeEncodeError ---

def _one_conversation(tmp_path):
    mf = _open(tmp_path / "m.db")
    conv = mf.conversation("c", namespace="ns")
    conv.append({"role": "user", "content": "My order ORD-1 arrived broken."})
    mf.memory.write("ns", "semantic", "Dana prefers email", key="user.contact", importance=0.5)
    return mf, conv


@pytest.mark.parametrize("call", [
    "conversation_id_huge", "conversation_id_surrogate", "create_false_surrogate",
    "importance_huge", "half_life_huge", "access_weight_huge",
    "history_after_seq_huge", "report_usage_huge", "compact_target_text", "compact_target_nan",
    "runs_limit_text", "runs_limit_nan", "jobs_limit_text", "jobs_limit_negative",
    "erase_conversation_huge", "erase_conversation_surrogate", "relabel_huge_turn", "revoke_label_not_text",
    "memories_list_surrogate", "memories_list_key_surrogate",
])
def test_bad_values_at_facade_entry_points_are_memfold_errors_and_write_nothing(tmp_path, call):
    """Each of these raised a bare Python error (``OverflowError: int too large to convert to float``
    or ``... to SQLite INTEGER``, ``UnicodeEncodeError``, ``ValueError: invalid literal for int()``,
    ``TypeError: slice indices ...``) instead of an ``InvalidInput`` naming the argument."""
    mf, conv = _one_conversation(tmp_path)
    calls = {
        "conversation_id_huge": lambda: mf.conversation(10**400, namespace="ns"),
        "conversation_id_surrogate": lambda: mf.conversation("\ud800", namespace="ns"),
        "create_false_surrogate": lambda: mf.conversation("c\ud800", create=False),
        "importance_huge": lambda: mf.memory.write("ns", "semantic", "x", importance=10**400),
        "half_life_huge": lambda: mf.policy("ns", "semantic", half_life=10**400),
        "access_weight_huge": lambda: mf.policy("ns", "semantic", access_weight=-10**400),
        "history_after_seq_huge": lambda: conv.history(after_seq=2**63),
        "report_usage_huge": lambda: conv.report_usage(2**63),
        "compact_target_text": lambda: conv.compact(target_tokens="5"),
        "compact_target_nan": lambda: conv.compact(target_tokens=float("nan")),
        "runs_limit_text": lambda: mf.runs(limit="x"),
        "runs_limit_nan": lambda: mf.runs(limit=float("nan")),
        "jobs_limit_text": lambda: mf.compaction_jobs(limit="5"),
        "jobs_limit_negative": lambda: mf.compaction_jobs(limit=-1),
        "erase_conversation_huge": lambda: mf.erase(conversation_id=10**400),
        "erase_conversation_surrogate": lambda: mf.erase(conversation_id="\ud800"),
        "relabel_huge_turn": lambda: mf.relabel("t" + "9" * 30, ["legal"]),
        "revoke_label_not_text": lambda: mf.revoke_label(5, "legal"),
        "memories_list_surrogate": lambda: mf.memory.list("\ud800"),
        "memories_list_key_surrogate": lambda: mf.memory.list("ns", key="k\ud800"),
    }
    before = (mf.conversations(), [t.content for t in conv.history()], len(mf.memory.list("ns", include_inactive=True)),
              mf.memory.events("ns"))
    with pytest.raises(InvalidInput):
        calls[call]()
    after = (mf.conversations(), [t.content for t in conv.history()], len(mf.memory.list("ns", include_inactive=True)),
             mf.memory.events("ns"))
    assert after == before
    mf.close()


def test_compaction_jobs_limit_zero_is_no_jobs(tmp_path):
    """``mf.compaction_jobs(limit=0)`` returned every job (``jobs[-0:]`` is the whole list)."""
    mf = _open(tmp_path / "m.db", window=WindowSettings(budget_tokens=200, output_reserve_tokens=0, hot_turns=1,
                                                      leaf_chunk_tokens=40, card_target_tokens=10,
                                                      compact_on_append=False))
    conv = mf.conversation("c", namespace="ns")
    for i in range(12):
        conv.append({"role": "user", "content": f"Turn {i}: the order ORD-{i} shipped by courier on May {i + 1}."})
    assert mf.compaction_notes(), "the appends past the soft watermark leave a note"
    assert mf.worker(holder="w").run_once() >= 1
    jobs = mf.compaction_jobs()
    assert len(jobs) >= 1
    assert mf.compaction_jobs(limit=0) == []
    assert mf.compaction_jobs(limit=1) == jobs[-1:]
    mf.close()


@pytest.mark.parametrize("ref", ["t\u00b2", "c\u00b2", "\u00b9"])
def test_a_superscript_digit_in_a_ref_is_invalid_input_everywhere(tmp_path, ref):
    """``str.isdigit()`` is true of '²', which ``int()`` refuses: ``conv.expand('t²')``,
    ``conv.describe('c²')``, ``mf.relabel('t²', ...)`` and the model's ``expand`` tool call raised
    ``ValueError: invalid literal for int()`` (a 500 over HTTP)."""
    mf, conv = _one_conversation(tmp_path)
    with pytest.raises(InvalidInput):
        conv.expand(ref)
    with pytest.raises(InvalidInput):
        conv.describe(ref)
    with pytest.raises(InvalidInput):
        mf.relabel(ref, ["legal"])
    answer = conv.handle_tool_call("expand", {"id": ref})
    assert answer.startswith("error:") and "not a card or turn id" in answer
    assert conv.history()[0].labels == ()
    mf.close()


# -- metadata JSON cannot hold, or nested so deep it cannot be read back ---------------------------

def _nested(depth: int) -> dict:
    value: object = 1
    for _ in range(depth):
        value = {"a": value}
    return value  # type: ignore[return-value]


@pytest.mark.parametrize("metadata", [{"k": float("nan")}, {"k": [1, {"b": float("inf")}]}, {"k": "\ud800"},
                                      {"\ud800": 1}, _nested(985)], ids=["nan", "inf", "surrogate", "surrogate-key", "deep"])
def test_record_metadata_json_cannot_hold_is_invalid_input(tmp_path, metadata):
    """``mf.memory.write(..., metadata={"k": nan})`` stored ``NaN`` (not JSON: the HTTP API reads it
    back as null, an export is not JSON); a lone surrogate raised ``UnicodeEncodeError`` from the
    driver; metadata nested ~1,000 deep was written and then broke the reads that decode it."""
    mf, _ = _one_conversation(tmp_path)
    before = mf.memory.list("ns", include_inactive=True)
    with pytest.raises(InvalidInput, match="metadata"):
        mf.memory.write("ns", "semantic", "Dana likes tea", metadata=metadata)
    with pytest.raises(InvalidInput, match="metadata"):
        mf.protected.add("Always reply in French.", namespace="ns", metadata=metadata)
    assert mf.memory.list("ns", include_inactive=True) == before
    assert mf.protected.list(namespace="ns") == []
    assert mf.memory.write("ns", "semantic", "Dana likes tea", metadata={"src": [1, {"x": "y"}]}).metadata == \
        {"src": [1, {"x": "y"}]}
    mf.close()


@pytest.mark.parametrize("metadata", [_nested(985), {"k": float("nan")}], ids=["deep", "nan"])
def test_turn_metadata_json_cannot_hold_is_refused_and_the_conversation_stays_readable(tmp_path, metadata):
    mf, conv = _one_conversation(tmp_path)
    try:
        conv.append({"role": "user", "content": "x", "metadata": metadata})
    except InvalidInput:
        pass
    conv.context(budget=10_000)
    lines = conv.export_jsonl().splitlines()
    assert all(json.loads(line, parse_constant=lambda c: pytest.fail(f"{c} is not JSON")) for line in lines)
    assert [t.content for t in conv.history()] == ["My order ORD-1 arrived broken."]
    mf.close()


def test_a_jsonl_line_nested_too_deeply_is_an_error_naming_its_line(tmp_path):
    """``memfold ingest`` of a line nested 100,000 deep printed a ``RecursionError`` traceback."""
    db, path = tmp_path / "m.db", tmp_path / "t.jsonl"
    path.write_text('{"role": "user", "content": "ok"}\n{"role": "user", "content": "x", "metadata": '
                    + '{"a":' * 100_000 + "1" + "}" * 100_001 + "\n", encoding="utf-8")
    assert CliRunner().invoke(cli, ["init", str(db), "--clock", "logical", "--tokens", "words"]).exit_code == 0
    result = CliRunner().invoke(cli, ["ingest", str(db), "-c", "c", "-n", "ns", str(path)])
    assert result.exit_code == 1 and not isinstance(result.exception, RecursionError), result.output
    assert result.output.count("Error:") == 1 and "line 2" in result.output and "nested" in result.output
    mf = _open(db)
    assert mf.conversations() == []
    mf.close()


def test_an_mcp_describe_of_a_superscript_ref_is_a_tool_error_not_an_internal_error(tmp_path):
    """Over ``memfold mcp``, ``describe {"id": "t²"}`` answered the agent "Internal server error"
    (a ``ValueError`` in ``parse_ref``) instead of a tool error naming the id."""
    anyio = pytest.importorskip("anyio")
    mcp = pytest.importorskip("mcp")
    from memfold.integrations.mcp import create_server

    mf, _ = _one_conversation(tmp_path)
    server = create_server(mf, namespace="ns")

    async def main():
        async with mcp.Client(server) as agent:
            for tool in ("describe", "expand"):
                answer = await agent.call_tool(tool, {"conversation": "c", "id": "t\u00b2"})
                assert answer.is_error and "not a card or turn id" in answer.content[0].text, answer

    anyio.run(main)
    mf.close()


@pytest.mark.parametrize("args", [
    ["events", "{db}", "-n", "\udcff"],
    ["policy", "{db}", "-n", "\udcff", "-t", "semantic"],
    ["memories", "{db}", "-n", "\udcff"],
    ["history", "{db}", "-c", "\udcff"],
    ["runs", "{db}", "-n", "\udcff"],
], ids=["events", "policy", "memories", "history", "runs"])
def test_an_undecodable_byte_in_a_cli_name_is_one_error_line(tmp_path, args):
    """A byte that is not UTF-8 in argv (``memfold events DB -n $'\\xff'``) reaches Python as the
    surrogate ``'\\udcff'``; ``events`` and ``policy`` passed it to SQLite and printed a
    ``UnicodeEncodeError`` traceback."""
    db = tmp_path / "m.db"
    assert CliRunner().invoke(cli, ["init", str(db), "--clock", "logical", "--tokens", "words"]).exit_code == 0
    result = CliRunner().invoke(cli, [str(db) if a == "{db}" else a for a in args])
    assert result.exit_code == 1, result.output
    assert result.output.count("Error:") == 1 and "surrogate" in result.output
    assert not isinstance(result.exception, UnicodeError)


# -- the secret detector hides turns that hold no secret (the README's sample figure moved) --------

@pytest.mark.xfail(strict=True, reason=(
    "window/secrets.py over-labels after a PIN exchange: the user's next turn 'Okay, sounds good.' "
    "(no value at all) is labelled secret whole, and 'PO Box 7731' two turns on is labelled secret "
    "as if 7731 were a PIN, so a reader without 'secret' never sees the PO-box instruction and the "
    "protected channel and consolidation never read it. `memfold replay --sample` shows it: 3 "
    "secret-labelled turns where the README says 1. A detector-tuning change, not a QA-window fix"))
def test_after_a_pin_exchange_only_the_pin_turn_is_secret(tmp_path):
    mf = _open(tmp_path / "m.db", secrets="detect")
    conv = mf.conversation("c", namespace="ns")
    for role, text in [("assistant", "Before I change it: for security, what is the PIN on your account?"),
                       ("user", "It's 4471."),
                       ("user", "Okay, sounds good."),
                       ("assistant", "Thanks, I've updated your address to 48 Cedar Street, Seattle."),
                       ("user", "Please send the next order to a PO box: PO Box 7731, Seattle.")]:
        conv.append({"role": role, "content": text})
    assert [t.content for t in conv.history() if "secret" in t.labels] == ["It's 4471."]
    mf.close()


# -- get-or-create raced by several processes -----------------------------------------------------

def _create_and_append(path: str, barrier, queue, i: int, own_namespace: bool = False) -> None:
    mf = MemFold(path, token_counter="words", embedder=None, secrets="off", preload_embedder=False)
    barrier.wait()  # every process looks the id up at once: none finds it
    try:
        for name in ("new-a", "new-b"):
            mf.conversation(name, namespace=f"ns-{i}" if own_namespace else "ns").append({"role": "user", "content": f"hello {name} from {i}"})
        queue.put((i, "ok"))
    except Exception as exc:  # reported to the test, which names it
        queue.put((i, f"{type(exc).__name__}: {exc}"))
    finally:
        mf.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_processes_getting_or_creating_one_new_conversation_at_once_all_get_it(tmp_path, request, backend):
    """``mf.conversation(id, namespace=...)`` is get-or-create, but when several processes asked for
    the same new id at once (two bot workers serving one new user), all but the first raised
    ``InvalidInput: conversation 'new-a' already exists`` (5 of 6 processes on SQLite, 3 of 6 on PostgreSQL).
    Now a creator that lost the race gets the conversation the winner made (its namespace and
    labels checked as for any existing one), and every process's turn is appended."""
    import multiprocessing

    target = str(tmp_path / "m.db") if backend == "sqlite" else request.getfixturevalue("pg_url")
    _open(target).close()
    ctx = multiprocessing.get_context("spawn")
    n = 4
    barrier, queue = ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=_create_and_append, args=(target, barrier, queue, i)) for i in range(n)]
    for p in procs:
        p.start()
    outcomes = sorted(queue.get(timeout=300) for _ in range(n))
    for p in procs:
        p.join(timeout=60)
    assert [o for _, o in outcomes] == ["ok"] * n, outcomes
    mf = _open(target)
    for name in ("new-a", "new-b"):
        conv = mf.conversation(name, create=False)
        assert conv.namespace == "ns"
        assert sorted(t.content for t in conv.history()) == sorted(f"hello {name} from {i}" for i in range(n))
    mf.close()


def test_a_lost_create_race_still_checks_the_winners_namespace(tmp_path):
    """The race's way out is the existing-conversation path, so a namespace other than the one the
    conversation has is still refused, naming both (checked here without a race)."""
    mf = _open(tmp_path / "m.db")
    mf.conversation("c", namespace="ns-1")
    with pytest.raises(InvalidInput, match="ns-1"):
        mf.conversation("c", namespace="ns-2")
    mf.close()


def test_processes_creating_one_id_in_different_namespaces_never_share_it(tmp_path):
    """A creator that lost the race for an id asked in another namespace is refused (``InvalidInput``:
    ``already exists`` on the race path, which never names the winner's namespace, or the usual
    "is in namespace ..." when it looked after the winner committed); it never appends into the
    winner's conversation. A process says ok only when both ids are in its own namespace."""
    import multiprocessing

    target = str(tmp_path / "m.db")
    _open(target).close()
    ctx = multiprocessing.get_context("spawn")
    n = 4
    barrier, queue = ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=_create_and_append, args=(target, barrier, queue, i, True)) for i in range(n)]
    for p in procs:
        p.start()
    outcomes = sorted(queue.get(timeout=300) for _ in range(n))
    for p in procs:
        p.join(timeout=60)
    mf = _open(target)
    homes = {name: mf.conversation(name, create=False) for name in ("new-a", "new-b")}
    for i, o in outcomes:
        if o == "ok":
            assert all(c.namespace == f"ns-{i}" for c in homes.values()), outcomes
        else:
            assert o.startswith("InvalidInput:") and ("already exists" in o or "is in namespace" in o), outcomes
    for conv in homes.values():  # only its creator's turn: no loser appended into it
        assert [t.content for t in conv.history()] == [f"hello {conv.id} from {conv.namespace[3:]}"]
    mf.close()
