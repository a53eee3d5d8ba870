"""Readers everywhere (review fixes): the recall tools an agent calls run as the agent's reader,
the CLI reads as a reader with --reader, --json errors are JSON on stdout, a conversation keeps its
namespace, and consolidating an unknown namespace fails without writing."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from memfold import Reader
from memfold.cli import cli
from memfold.memory.errors import InvalidInput, NotFound

PIN = "4471"
TURNS = [
    {"role": "user", "content": "Hi, I need to reset my card."},
    {"role": "assistant", "content": "Sure, I can help with the card reset."},
    {"role": "user", "content": f"my PIN is {PIN}"},
    {"role": "assistant", "content": "Thanks, never share it again."},
    {"role": "user", "content": "Also please ship the new card to 12 Elm St."},
    {"role": "assistant", "content": "Done, the card ships to 12 Elm St."},
]


# -- 1. the recall tools run as the agent's reader --------------------------------------------------------
@pytest.fixture
def secret_conv(mf):
    conv = mf.conversation("c1", namespace="bank/tyler")
    ids = conv.append_many(TURNS)
    secret_id = ids[2]
    assert "secret" in conv.history()[2].labels  # the library's detector labelled it
    return conv, secret_id


def test_tool_calls_hide_secret_turns_from_a_reader_without_the_label(secret_conv):
    conv, secret_id = secret_conv
    nobody = Reader.of([])
    expanded = conv.handle_tool_call("expand", {"id": f"t{secret_id}"}, reader=nobody)
    assert PIN not in expanded and expanded.startswith("error:") and "may not read" in expanded
    described = conv.handle_tool_call("describe", json.dumps({"id": f"t{secret_id}"}), reader=nobody)
    assert described.startswith("error:") and "sha256" not in described
    searched = conv.handle_tool_call("search", {"query": PIN}, reader=nobody)
    assert PIN not in searched and f"t{secret_id}" not in searched
    # a label list works as the reader too
    assert PIN not in conv.handle_tool_call("expand", {"id": f"t{secret_id}"}, reader=[])


def test_tool_calls_show_secret_turns_to_the_owner_and_to_a_holder_of_the_label(secret_conv):
    conv, secret_id = secret_conv
    for reader in (None, Reader.of(["secret"])):
        assert PIN in conv.handle_tool_call("expand", {"id": f"t{secret_id}"}, reader=reader)
        assert f"t{secret_id}" in conv.handle_tool_call("search", {"query": PIN}, reader=reader)
        assert json.loads(conv.handle_tool_call("describe", {"id": f"t{secret_id}"}, reader=reader))["labels"] == ["secret"]


def test_tool_calls_through_a_card_leave_out_the_secret_turn(secret_conv):
    conv, secret_id = secret_conv
    conv.compact(target_tokens=10, hot_turns=2, leaf_chunk_tokens=200)
    cards = [i.ref for i in conv.catalog_items() if i.ref.startswith("c")]
    assert cards, "compaction made no card"
    owner_text = conv.handle_tool_call("expand", {"id": cards[0], "to_turns": True})
    assert PIN in owner_text
    # the card covering the secret turn needs the secret label itself, so a reader without it is refused
    hidden = conv.handle_tool_call("expand", {"id": cards[0], "to_turns": True}, reader=Reader.of([]))
    assert PIN not in hidden


def test_tool_call_with_a_bad_reader_is_the_callers_error(secret_conv):
    conv, _ = secret_conv
    with pytest.raises(InvalidInput, match="reader must be"):
        conv.handle_tool_call("search", {"query": "card"}, reader="secret")


def test_history_and_export_for_a_reader(secret_conv):
    conv, secret_id = secret_conv
    assert [t.id for t in conv.history(reader=Reader.of([]))] == [t.id for t in conv.history() if t.id != secret_id]
    assert len(conv.history(reader=[], limit=3)) == 3 and secret_id not in [t.id for t in conv.history(reader=[], limit=3)]
    assert PIN not in conv.export_jsonl(reader=Reader.of([]))
    assert PIN in conv.export_jsonl()
    assert PIN in conv.export_jsonl(reader=["secret"])


# -- 2. the CLI reads as a reader -------------------------------------------------------------------------
@pytest.fixture
def runner():
    return CliRunner()


@pytest.fixture
def db(tmp_path, runner):
    path = str(tmp_path / "r.db")
    assert runner.invoke(cli, ["init", path, "--clock", "logical", "--tokens", "words"]).exit_code == 0
    src = tmp_path / "t.jsonl"
    src.write_text("".join(json.dumps(t) + "\n" for t in TURNS), encoding="utf-8")
    assert runner.invoke(cli, ["ingest", path, str(src), "-c", "c1", "-n", "bank/tyler"]).exit_code == 0
    return path


def secret_id_of(runner, db):
    turns = json.loads(runner.invoke(cli, ["history", db, "-c", "c1", "--json"]).stdout)
    return next(t["id"] for t in turns if "secret" in t["labels"])


@pytest.mark.parametrize("reader", [["--reader", ""], ["--reader", "billing"], ["--reader", "billing", "--reader", "ops"]])
def test_cli_reader_never_prints_the_pin(runner, db, reader):
    tid = secret_id_of(runner, db)
    for args in (["context", db, "-c", "c1"], ["context", db, "-c", "c1", "--json"],
                 ["search", db, PIN, "-c", "c1", "--embedder", "none"],
                 ["search", db, "PIN", "-c", "c1", "--embedder", "none", "--json"],
                 ["history", db, "-c", "c1"], ["history", db, "-c", "c1", "--json"],
                 ["export", db, "-c", "c1"]):
        result = runner.invoke(cli, args + reader)
        assert result.exit_code == 0, (args, result.output)
        assert PIN not in result.output, args
    for args in (["expand", db, f"t{tid}", "-c", "c1"], ["describe", db, f"t{tid}", "-c", "c1"]):
        result = runner.invoke(cli, args + reader)
        assert result.exit_code == 1 and PIN not in result.output
        assert "may not read" in result.stderr and "lacks the label(s) secret" in result.stderr


def test_cli_without_reader_or_with_the_label_prints_the_pin(runner, db):
    tid = secret_id_of(runner, db)
    for reader in ([], ["--reader", "secret"]):
        for args in (["context", db, "-c", "c1"], ["search", db, PIN, "-c", "c1", "--embedder", "none"],
                     ["history", db, "-c", "c1"], ["export", db, "-c", "c1"], ["expand", db, f"t{tid}", "-c", "c1"]):
            result = runner.invoke(cli, args + reader)
            assert result.exit_code == 0, (args, result.output)
            assert PIN in result.stdout, (args, reader)
        assert runner.invoke(cli, ["describe", db, f"t{tid}", "-c", "c1"] + reader).exit_code == 0


def test_cli_history_reader_counts_visible_turns(runner, db):
    owner = json.loads(runner.invoke(cli, ["history", db, "-c", "c1", "--json"]).stdout)
    reader = json.loads(runner.invoke(cli, ["history", db, "-c", "c1", "--json", "--reader", ""]).stdout)
    assert len(owner) == len(TURNS) and len(reader) == len(TURNS) - 1
    assert all("secret" not in t["labels"] for t in reader)


def test_cli_export_reader_to_file_and_tree_refused(runner, db, tmp_path):
    out = tmp_path / "x.jsonl"
    data = json.loads(runner.invoke(cli, ["export", db, "-c", "c1", "-o", str(out), "--json", "--reader", ""]).stdout)
    assert data["turns"] == len(TURNS) - 1 and PIN not in out.read_text()
    refused = runner.invoke(cli, ["export", db, "-c", "c1", "--tree", str(tmp_path / "t"), "--reader", ""])
    assert refused.exit_code == 1 and "--reader cannot be combined with --tree" in refused.stderr
    assert not (tmp_path / "t").exists()


def test_cli_reader_bad_label_and_help(runner, db):
    bad = runner.invoke(cli, ["history", db, "-c", "c1", "--reader", " secret"])
    assert bad.exit_code == 1 and "whitespace" in bad.stderr and PIN not in bad.output
    for command in ("context", "search", "expand", "describe", "history", "export"):
        text = runner.invoke(cli, [command, "--help"]).output
        assert "--reader LABEL" in text and "--reader ''" in " ".join(text.split()), command


def test_protect_list_reader_empty_means_no_label(runner, db):
    assert runner.invoke(cli, ["protect", "add", db, "Never read the PIN back", "-c", "c1", "--label", "secret"]).exit_code == 0
    owner = json.loads(runner.invoke(cli, ["protect", "list", db, "-c", "c1", "--json"]).stdout)
    nobody = json.loads(runner.invoke(cli, ["protect", "list", db, "-c", "c1", "--json", "--reader", ""]).stdout)
    assert [r["text"] for r in owner if "PIN" in r["text"]] and not [r for r in nobody if "PIN" in r["text"]]


# -- 3. --json errors ---------------------------------------------------------------------------------------
def test_json_error_on_stdout_and_plain_line_on_stderr(runner, db):
    result = runner.invoke(cli, ["history", db, "-c", "nope", "--json"])
    assert result.exit_code == 1
    assert result.stderr.splitlines() == ["Error: no conversation 'nope': create it first (memfold ingest or MemFold.conversation)"]
    assert json.loads(result.stdout) == {"error": "no conversation 'nope': create it first (memfold ingest or "
                                                  "MemFold.conversation)", "type": "ConversationNotFound"}
    plain = runner.invoke(cli, ["history", db, "-c", "nope"])
    assert plain.exit_code == 1 and plain.stdout == ""


def test_json_usage_error_and_nested_group(runner, db):
    usage = runner.invoke(cli, ["search", db, "x", "-c", "c1", "-k", "0", "--json"])
    assert usage.exit_code == 2 and "Error: Invalid value" in usage.stderr
    err = json.loads(usage.stdout)
    assert err["type"] == "BadParameter" and "-k" in err["error"]
    nested = runner.invoke(cli, ["protect", "satisfy", db, "999", "--json"])
    assert nested.exit_code == 1 and nested.stderr.startswith("Error: ")
    assert len(nested.stdout.splitlines()) == 1 and json.loads(nested.stdout)["type"] == "ProtectedNotFound"


def test_erase_json_without_yes_keeps_stdout_for_json(runner, db):
    declined = runner.invoke(cli, ["erase", db, "-c", "c1", "--json"], input="n\n")
    assert declined.exit_code == 1
    assert "This cannot be undone" in declined.stderr and "This cannot be undone" not in declined.stdout
    assert json.loads(declined.stdout) == {"error": "nothing erased", "type": "ClickException"}
    aborted = runner.invoke(cli, ["erase", db, "-c", "c1", "--json"], input="")
    assert aborted.exit_code == 1
    assert json.loads(aborted.stdout) == {"type": "ClickException", "error": "nothing erased: no answer to the "
                                          "confirmation (stdin is closed); pass --yes in a script"}
    human = runner.invoke(cli, ["erase", db, "-c", "c1"], input="")  # an Error: line, not click's "Aborted!"
    assert human.exit_code == 1 and human.stderr.rstrip().endswith("Error: nothing erased: no answer to the "
                                                                   "confirmation (stdin is closed); pass --yes in a script")
    assert len(json.loads(runner.invoke(cli, ["history", db, "-c", "c1", "--json"]).stdout)) == len(TURNS)


# -- 4. a conversation keeps its namespace ----------------------------------------------------------------
def test_conversation_namespace_mismatch_is_refused(mf):
    conv = mf.conversation("conv2", namespace="ns/one")
    assert mf.conversation("conv2").namespace == "ns/one"  # no namespace given: whatever it has
    assert mf.conversation("conv2", namespace="ns/one").id == "conv2"
    with pytest.raises(InvalidInput, match="'conv2' is in namespace 'ns/one', not 'ns/other'"):
        mf.conversation("conv2", namespace="ns/other")
    assert mf.conversation("fresh").namespace == "default"
    conv.append({"role": "user", "content": "hello"})
    assert len(conv.history()) == 1


def test_ingest_into_existing_conversation_of_another_namespace(runner, db, tmp_path):
    src = tmp_path / "more.jsonl"
    src.write_text(json.dumps({"role": "user", "content": "one more"}) + "\n", encoding="utf-8")
    refused = runner.invoke(cli, ["ingest", db, str(src), "-c", "c1", "-n", "other/ns", "--json"])
    assert refused.exit_code == 1
    assert "'c1' is in namespace 'bank/tyler', not 'other/ns'" in refused.stderr
    assert json.loads(refused.stdout)["type"] == "InvalidInput"
    assert len(json.loads(runner.invoke(cli, ["history", db, "-c", "c1", "--json"]).stdout)) == len(TURNS)
    assert runner.invoke(cli, ["ingest", db, str(src), "-c", "c1"]).exit_code == 0  # no -n: appends
    assert runner.invoke(cli, ["ingest", db, str(src), "-c", "c1", "-n", "bank/tyler"]).exit_code == 0
    assert len(json.loads(runner.invoke(cli, ["history", db, "-c", "c1", "--json"]).stdout)) == len(TURNS) + 2
    assert runner.invoke(cli, ["ingest", db, str(src), "-c", "c9"]).exit_code == 0
    assert "Namespace for a new conversation (default: default)" in runner.invoke(cli, ["ingest", "--help"]).output


# -- 6. consolidating an unknown namespace -----------------------------------------------------------------
def test_consolidate_unknown_namespace_fails_and_writes_nothing(runner, db):
    result = runner.invoke(cli, ["consolidate", db, "-n", "nope", "--json"])
    assert result.exit_code == 1
    assert "no namespace 'nope'" in result.stderr
    assert json.loads(result.stdout)["type"] == "NotFound"
    both = runner.invoke(cli, ["consolidate", db, "-n", "bank/tyler", "-n", "nope"])
    assert both.exit_code == 1
    assert json.loads(runner.invoke(cli, ["runs", db, "--json"]).stdout) == []  # not even bank/tyler ran
    ok = runner.invoke(cli, ["consolidate", db, "-n", "bank/tyler", "--include-turns", "--json"])
    assert ok.exit_code == 0 and json.loads(ok.stdout)[0]["status"] == "ok"


def test_facade_consolidate_unknown_namespace_but_nightly_unaffected(mf):
    from memfold.consolidation.consolidate import consolidate_all

    with pytest.raises(NotFound, match="no namespace 'nope'"):
        mf.consolidate("nope")
    assert mf.db.execute("SELECT COUNT(*) FROM consolidation_runs").fetchone()[0] == 0
    mf.remember("acme/dana", "episodic", "Dana moved to Lyon.")
    assert [r.namespace for r in consolidate_all(mf.consolidation_parts)] == ["acme/dana"]
