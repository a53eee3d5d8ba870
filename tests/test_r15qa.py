"""Round 15, r15qa: a new user's pass and the review leftovers of issues 18 and 20 (each test
failed before its fix)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memfold import InvalidInput, LogicalClock, MemFold
from memfold.cli import cli

NS = "acme/dana"
DEVELOPER = {"role": "developer", "content": "Always answer in formal English and cite the order id."}


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """The real ``memfold`` command in its own process."""
    return subprocess.run([sys.executable, "-c", "from memfold.cli import cli; cli()", *args],
                          capture_output=True, text=True, timeout=timeout)


def open_mf(path: Path) -> MemFold:
    return MemFold(path, clock=LogicalClock(), token_counter="words", embedder=None)


from conftest import database_dump as dump  # noqa: E402


# -- OpenAI's developer role -------------------------------------------------------------------
def test_a_developer_message_is_a_system_standing_instruction_that_keeps_its_role(tmp_path):
    with open_mf(tmp_path / "m.db") as mf:
        conv = mf.conversation("c", namespace=NS)
        tid = conv.append(DEVELOPER)
        for i in range(30):  # a long conversation: the system turn is never folded away
            conv.append({"role": "user", "content": f"Question {i} about the parcel and its many stops."})
            conv.append({"role": "assistant", "content": f"Answer {i}: the parcel is still on its way."})
        turn = conv.turns_by_id([tid])[tid]
        assert turn.role == "system" and turn.metadata["role"] == "developer"
        ctx = conv.context(budget=120)
        assert {"role": "system", "content": DEVELOPER["content"]} in [
            {k: m[k] for k in ("role", "content")} for m in ctx.messages]
        with pytest.raises(InvalidInput, match="metadata key\\(s\\) role are reserved"):
            conv.append({**DEVELOPER, "metadata": {"role": "x"}})
        with pytest.raises(InvalidInput, match="role must be one of user, assistant, tool, system, developer"):
            conv.append({"role": "moderator", "content": "hi"})


def test_developer_messages_come_in_through_jsonl_http_and_mcp(tmp_path):
    path = tmp_path / "m.db"
    lines = tmp_path / "chat.jsonl"
    lines.write_text(json.dumps(DEVELOPER) + "\n" + json.dumps({"role": "user", "content": "Hello"}) + "\n")
    open_mf(path).close()
    result = CliRunner().invoke(cli, ["ingest", str(path), "-c", "j", "-n", NS, str(lines)])
    assert result.exit_code == 0, result.output
    with open_mf(path) as mf:
        first = mf.conversation("j").history()[0]
        assert (first.role, first.metadata.get("role")) == ("system", "developer")
        from memfold.integrations.mcp import MemfoldTools

        added = MemfoldTools(mf, reader=None).call("append", {"conversation": "m", "namespace": NS, **DEVELOPER})
        turn = mf.conversation("m").history()[0]
        assert added.data["id"] == turn.id and turn.role == "system" and turn.metadata == {"role": "developer"}
        pytest.importorskip("fastapi")
        from fastapi.testclient import TestClient

        from memfold.integrations.http import create_app

        with TestClient(create_app(mf)) as client:
            reply = client.post("/v1/conversations/j/turns", json={"messages": [DEVELOPER]})
            assert reply.status_code == 201, reply.text
        turn = mf.conversation("j").history()[-1]
        assert turn.role == "system" and turn.metadata == {"role": "developer"}


def test_a_langchain_developer_message_is_archived_as_a_system_turn_that_says_so(tmp_path):
    pytest.importorskip("langchain_core")
    from langchain_core.messages import SystemMessage

    from memfold.integrations.langgraph import message_to_turn

    message = SystemMessage(content=DEVELOPER["content"], additional_kwargs={"__openai_role__": "developer"}, id="m1")
    with open_mf(tmp_path / "m.db") as mf:
        conv = mf.conversation("c", namespace=NS)
        turn = conv.turns_by_id([tid := conv.append(message_to_turn(message))])[tid]
        assert turn.role == "system" and turn.metadata == {"langchain_id": "m1", "role": "developer"}


# -- memfold init on an existing file ---------------------------------------------------------
def test_init_on_an_existing_file_says_it_existed_and_what_it_holds(tmp_path):
    path = tmp_path / "agent.db"
    runner = CliRunner()
    first = runner.invoke(cli, ["init", str(path)])
    assert first.exit_code == 0 and first.output.startswith(f"initialised {path} (")
    with MemFold(path, embedder=None) as mf:
        mf.conversation("c", namespace=NS).append({"role": "user", "content": "Hello there."})
        mf.memory.write(NS, "semantic", "Dana prefers email")
    before = dump(path)
    again = runner.invoke(cli, ["init", str(path)])
    assert again.exit_code == 0, again.output
    assert again.output.startswith(f"{path} already existed: nothing was reset (")
    assert "it holds 1 conversation, 1 turn, 0 cards, 1 memory record, 0 protected records" in again.output
    data = json.loads(runner.invoke(cli, ["init", str(path), "--json"]).output)
    assert data["created"] is False and data["holds"]["turns"] == 1 and data["holds"]["memory_records"] == 1
    other = runner.invoke(cli, ["init", str(path), "--tokens", "words"])
    assert other.exit_code == 1 and "counts tokens with tiktoken:cl100k_base: --tokens words cannot change" in other.output
    assert "Traceback" not in other.output and dump(path) == before
    assert json.loads(runner.invoke(cli, ["init", str(tmp_path / "new.db"), "--json"]).output)["created"] is True


def test_a_library_warning_is_one_warning_line_on_the_cli(tmp_path):
    result = run_cli("init", str(tmp_path / "n.db"), "--tokens", "gpt-17")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ("Warning: tiktoken does not know the model 'gpt-17': counting its tokens with "
                             "cl100k_base (pass token_counter='o200k_base' or 'cl100k_base' to choose)\n")


# -- orphan tool results ------------------------------------------------------------------------
def call(call_id: str) -> dict:
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]}


def chat_api_errors(messages: list[dict]) -> list[str]:
    """What OpenAI's chat API refuses about tool messages: each must answer a call of the assistant
    message right before it (or before the tool messages right before it)."""
    errors, open_calls = [], set()
    for n, m in enumerate(messages):
        if m["role"] == "tool":
            if m.get("tool_call_id") not in open_calls:
                errors.append(f"message {n}: tool message answers no preceding call")
        else:
            open_calls = {c["id"] for c in m.get("tool_calls") or ()}
    return errors


def test_an_orphan_tool_result_is_kept_and_compiled_as_a_marked_user_message(tmp_path):
    with open_mf(tmp_path / "m.db") as mf:
        conv = mf.conversation("c", namespace=NS)
        conv.append({"role": "user", "content": "What does the policy say?"})
        orphan = conv.append({"role": "tool", "tool_call_id": "call_9", "name": "search policy",
                              "content": "after the window a 10% restocking fee applies"})
        conv.append(call("call_1"))
        paired = conv.append({"role": "tool", "tool_call_id": "call_1", "content": "ORD-3300 shipped"})
        wrong = conv.append({"role": "tool", "tool_call_id": "call_2", "content": "answers another call"})
        turns = conv.turns_by_id([orphan])
        assert turns[orphan].role == "tool" and turns[orphan].tool_call_id == "call_9"  # archived verbatim
        ctx = conv.context(budget=1000)
        assert chat_api_errors(ctx.messages) == []
        assert ctx.orphan_results == [f"t{orphan}", f"t{wrong}"]
        assert {"role": "user", "content": "after the window a 10% restocking fee applies",
                "name": "tool_search_policy"} in ctx.messages
        assert {"role": "tool", "content": "ORD-3300 shipped", "tool_call_id": "call_1"} in ctx.messages
        assert ctx.to_dict()["orphan_results"] == ctx.orphan_results and f"t{paired}" not in ctx.orphan_results
        # the same tokens as before: the text is shown unchanged
        assert ctx.total_tokens == conv.window_status(budget=1000)["tokens"]


def test_compiled_contexts_stay_valid_for_the_chat_api_as_the_window_folds(tmp_path):
    with open_mf(tmp_path / "m.db") as mf:
        conv = mf.conversation("c", namespace=NS)
        for i in range(40):
            conv.append({"role": "user", "content": f"Step {i}: check order ORD-{i} for the customer please."})
            if i % 3 == 0:
                conv.append({"role": "tool", "tool_call_id": f"lost_{i}", "content": f"log line {i} of the tool"})
            conv.append(call(f"call_{i}"))
            conv.append({"role": "tool", "tool_call_id": f"call_{i}", "content": f"ORD-{i} is on its way"})
            ctx = conv.context(budget=200, hot_turns=4)
            assert chat_api_errors(ctx.messages) == [], i
        assert ctx.total_tokens <= 200


# -- a rule naming a kind of secret holds no secret --------------------------------------------
RULES = json.loads((Path(__file__).parent / "data" / "secret_rule_phrasings.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("text", RULES["no_value"])
def test_a_rule_naming_a_kind_of_secret_is_no_secret(text):
    from memfold import SecretDetector

    assert SecretDetector().detect({"role": "user", "content": text}) == []


@pytest.mark.parametrize("text", RULES["with_value"])
def test_a_rule_that_carries_a_secret_still_hides_it(text):
    from memfold import SecretDetector

    assert SecretDetector().detect({"role": "user", "content": text}) != []


def test_a_rule_about_the_password_reaches_the_context_for_every_reader(tmp_path):
    with open_mf(tmp_path / "m.db") as mf:
        conv = mf.conversation("c", namespace=NS)
        rule = conv.append({"role": "user", "content": "Never share your password with anyone."})
        secret = conv.append({"role": "user", "content": "My password is BlueSky99!"})
        turns = conv.turns_by_id([rule, secret])
        assert "secret" not in turns[rule].labels and "secret" in turns[secret].labels
        texts = [m["content"] for m in conv.context(budget=1000, reader=[]).messages]
        assert "Never share your password with anyone." in texts and not any("BlueSky99" in t for t in texts)


# -- a new user's pass: the CLI --------------------------------------------------------------------
def seeded(path: Path) -> None:
    with open_mf(path) as mf:
        conv = mf.conversation("c1", namespace=NS)
        conv.append({"role": "user", "content": "Where is ORD-3300?"})
        conv.append({"role": "assistant", "content": "Shipped on May 3."})


@pytest.mark.parametrize("target", ["agent.db", "agent.db-wal", "agent.db-shm"])
def test_export_onto_the_database_itself_is_refused_and_the_database_survives(tmp_path, monkeypatch, target):
    monkeypatch.chdir(tmp_path)
    seeded(tmp_path / "agent.db")
    before = dump(tmp_path / "agent.db")
    result = CliRunner().invoke(cli, ["export", "agent.db", "-c", "c1", "-o", target])
    assert result.exit_code == 1
    assert "it is the database (agent.db): writing there would destroy it" in result.output
    assert dump(tmp_path / "agent.db") == before


def test_replay_never_writes_its_report_or_database_over_its_source(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "t.jsonl"
    source.write_text('{"role": "user", "content": "Hello"}\n', encoding="utf-8")
    text = source.read_text(encoding="utf-8")
    for args in (["--db", "r.db", "--json", "t.jsonl"], ["--db", "t.jsonl"]):
        result = CliRunner().invoke(cli, ["replay", "t.jsonl", *args])
        assert result.exit_code == 1 and "it is the replayed source (t.jsonl)" in result.output
        assert source.read_text(encoding="utf-8") == text and not (tmp_path / "r.db").exists()


def test_memfold_window_on_an_empty_file_makes_no_conversation(tmp_path):
    path = tmp_path / "agent.db"
    seeded(path)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    before = dump(path)
    result = CliRunner().invoke(cli, ["window", str(path), "-c", "c3", str(empty)])
    assert result.exit_code == 1 and "holds no messages: nothing to append" in result.output
    assert dump(path) == before


# -- a new user's pass: JSONL --------------------------------------------------------------------
@pytest.mark.parametrize("line, words", [
    ('{"role": "user", "content": "a", "created_at": ' + "9" * 5000 + "}",
     "line 2: not valid JSON (a number has more digits than can be read (at most 4,300))"),
    ('{"role": "user", "content": "a", "role": "assistant"}', "line 2: the key 'role' is given twice in one object"),
    ('{"role": "user", "content": "a", "metadata": {"k": 1, "k": 2}}', "line 2: the key 'k' is given twice"),
], ids=["5000-digit-number", "role-twice", "metadata-key-twice"])
def test_jsonl_lines_json_readers_disagree_on_are_refused_whole(tmp_path, line, words):
    path = tmp_path / "agent.db"
    seeded(path)
    source = tmp_path / "in.jsonl"
    source.write_text('{"role": "user", "content": "fine"}\n' + line + "\n", encoding="utf-8")
    before = dump(path)
    result = CliRunner().invoke(cli, ["ingest", str(path), "-c", "c1", str(source)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output  # no traceback
    assert words in result.output and dump(path) == before


# -- a new user's pass: the facade -------------------------------------------------------------
@pytest.mark.parametrize("method, scope, known", [
    ("erase", {"turn": "t1"}, "it takes namespace, conversation_id, turn_ids, record_ids, protected_ids, cause"),
    ("erase_plan", {"conversation": "c1"}, "it takes namespace, conversation_id, turn_ids, record_ids, protected_ids"),
])
def test_erase_with_an_unknown_scope_name_is_a_clear_error(tmp_path, method, scope, known):
    path = tmp_path / "agent.db"
    seeded(path)
    before = dump(path)
    with open_mf(path) as mf:
        with pytest.raises(InvalidInput, match=f"{method}: unknown argument\\(s\\) {next(iter(scope))}: {known}"):
            getattr(mf, method)(**scope)
    assert dump(path) == before


# -- a new user's pass: HTTP -------------------------------------------------------------------
def test_a_body_that_is_not_json_is_named_so_over_http(tmp_path):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from memfold.integrations.http import create_app

    path = tmp_path / "agent.db"
    seeded(path)
    before = dump(path)
    with open_mf(path) as mf, TestClient(create_app(mf)) as client:
        reply = client.post("/v1/conversations/c1/turns", content=b'{"messages": [', headers={"content-type": "application/json"})
    assert reply.status_code == 422
    assert reply.json() == {"error": "the body is not valid JSON (Expecting value at character 14)", "type": "InvalidInput"}
    assert dump(path) == before


def test_tool_call_arguments_that_are_no_json_string_are_refused(tmp_path):
    path = tmp_path / "agent.db"
    seeded(path)
    before = dump(path)
    bad = {"role": "assistant", "content": None,
           "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]}
    with open_mf(path) as mf:
        with pytest.raises(InvalidInput, match=r"tool_calls\[0\].function.arguments must be a JSON string.*got dict"):
            mf.conversation("c1").append(bad)
    assert dump(path) == before


def test_compact_names_a_long_list_of_new_cards_in_one_short_line(tmp_path):
    path = tmp_path / "agent.db"
    with open_mf(path) as mf:
        mf.conversation("c", namespace=NS).append_many(
            [{"role": "user", "content": f"turn {i} the refund for order ORD-{i} needs the receipt"} for i in range(300)],
            compact=False)
    result = CliRunner().invoke(cli, ["compact", str(path), "-c", "c", "--budget", "200"])
    assert result.exit_code == 0, result.output
    line = result.output.strip()
    assert " ... " in line and "in all; --json lists them)" in line and len(line) < 300, line
    data = json.loads(CliRunner().invoke(cli, ["compact", str(path), "-c", "c", "--budget", "150", "--json"]).output)
    assert isinstance(data["cards"], list)
