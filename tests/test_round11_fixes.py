"""Round 11 fixes (r11fix): defects carried from round 10's closing note.

Real databases and memfold's own code paths; deterministic parts (logical clock, word counter)."""

from __future__ import annotations

import json

import numpy as np

import pytest
from click.testing import CliRunner

from memfold import LogicalClock, MemFold
from memfold.cli import cli
from memfold.integrations.mcp import MemfoldTools
from memfold.memory.errors import InvalidInput
from memfold.window.constraints import MAX_RECORD_CHARS


def _open(tmp_path, name: str = "m.db"):
    return MemFold(tmp_path / name, clock=LogicalClock(), token_counter="words", embedder=None,
                   secrets="off", preload_embedder=False)


def _active(mf, conv):
    return [r for r in mf.protected.for_conversation(conv.id) if r.state == "active"]


# -- 1a: a plan change in a message over MAX_RECORD_CHARS ---------------------------------------

def _steps(n: int) -> str:
    return " ".join(f"Step {i}: we check table {i} and note the row count in the log." for i in range(n))


def test_a_long_plan_change_supersedes_with_its_own_sentences_and_the_rest_is_still_read(tmp_path):
    """The plan-change sentences of a long message become the new plan (bounded, verbatim), the
    old plan is superseded, and a standing instruction elsewhere in the message is still kept."""
    mf = _open(tmp_path)
    conv = mf.conversation("c", namespace="n")
    conv.append({"role": "user", "content": "Plan: migrate the billing database on Monday, then update the invoices."})
    msg = ("Scratch that, change of plans. Plan: migrate the billing database on Thursday instead. " + _steps(18)
           + " Never touch the production replica during the migration.")
    assert len(msg) > MAX_RECORD_CHARS
    conv.append({"role": "user", "content": msg})
    active = _active(mf, conv)
    plans = [r for r in active if r.kind == "policy_state"]
    assert [r.text for r in plans] == ["Scratch that, change of plans. Plan: migrate the billing database on Thursday instead."]
    assert all(len(r.text) <= MAX_RECORD_CHARS for r in active)
    assert any(r.text == "Never touch the production replica during the migration." for r in active)
    old = [r for r in mf.protected.for_conversation(conv.id) if "Monday" in r.text]
    assert [r.state for r in old] == ["superseded"]
    mf.close()


def test_a_plan_change_late_in_a_long_message_supersedes_too(tmp_path):
    """The override need not open the message: a long status update that ends with a change of
    plan retires the old plan (the override sentence carries the new plan itself)."""
    mf = _open(tmp_path)
    conv = mf.conversation("c", namespace="n")
    conv.append({"role": "user", "content": "Plan: ship the release on Friday with the new checkout."})
    msg = _steps(18) + " Scratch that, let's instead ship the release on Tuesday without the new checkout."
    assert len(msg) > MAX_RECORD_CHARS
    conv.append({"role": "user", "content": msg})
    plans = [r.text for r in _active(mf, conv) if r.kind == "policy_state"]
    assert plans == ["Scratch that, let's instead ship the release on Tuesday without the new checkout."]
    mf.close()


def test_a_long_message_without_a_plan_change_keeps_the_plan(tmp_path):
    """A long message that changes nothing leaves the plan in force (no override is read into it)."""
    mf = _open(tmp_path)
    conv = mf.conversation("c", namespace="n")
    conv.append({"role": "user", "content": "Plan: ship the release on Friday with the new checkout."})
    msg = _steps(20) + " Scratch that, I'm just rambling."
    assert len(msg) > MAX_RECORD_CHARS
    conv.append({"role": "user", "content": msg})
    plans = [r.text for r in _active(mf, conv) if r.kind == "policy_state"]
    assert plans == ["Plan: ship the release on Friday with the new checkout."]
    mf.close()


# -- 1b: an instruction repeated inside one message ---------------------------------------------

def test_a_restatement_repeated_in_one_turn_refreshes_the_older_record_once(tmp_path):
    """An earlier instruction restated twice in one message: one record, refreshed once by that
    turn (``restated_by`` names the turn once), nothing added."""
    mf = _open(tmp_path)
    conv = mf.conversation("c", namespace="n")
    conv.append({"role": "user", "content": "Never call me before 9am."})
    turn = conv.append({"role": "user", "content": "Please never call me before 9am. Never call me before 9am!"})
    active = _active(mf, conv)
    assert [r.text for r in active] == ["Never call me before 9am."]
    assert active[0].metadata["restated_by"] == [f"turn:{turn}"]
    mf.close()


def test_different_instructions_in_one_message_stay_two_records(tmp_path):
    """Only a restatement is folded: two instructions in one message are two records."""
    mf = _open(tmp_path)
    conv = mf.conversation("c", namespace="n")
    conv.append({"role": "user", "content": "Always be brief. Always cite the source."})
    assert sorted(r.text for r in _active(mf, conv)) == ["Always be brief.", "Always cite the source."]
    mf.close()


# -- 2: a conversation's own labels through export and import; MCP creates labelled ones -------

def _labelled_export(tmp_path, *, with_times=False):
    mf = _open(tmp_path, "src.db")
    conv = mf.conversation("case-7", namespace="acme", labels=["legal"])
    conv.append({"role": "user", "content": "Clause 7 of the lease is void"})
    conv.append({"role": "assistant", "content": "Noted: clause 7.", "labels": ["board"]})
    path = tmp_path / "case-7.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        conv.export_jsonl(fh, with_times=with_times)
    mf.close()
    return path


def _row_labels(mf, cid):
    return list(mf.archive.conversation_row(cid)["labels"])


def test_an_imported_labelled_export_gives_the_new_conversation_its_labels(backend_target, tmp_path):
    """Turns appended to an imported copy of a labelled conversation are hidden like the
    original's: the copy has the conversation's labels (every line names them)."""
    path = _labelled_export(tmp_path)
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert [x["conversation_labels"] for x in lines] == [["legal"], ["legal"]]
    mf = _open_target(backend_target)
    mf.ingest_jsonl("copy", path, namespace="acme")
    assert _row_labels(mf, "copy") == ["legal"]
    copy = mf.conversation("copy", create=False)
    copy.append({"role": "user", "content": "Also clause 9 is void"})
    assert copy.history(reader=[]) == []
    assert [sorted(t.labels) for t in copy.history()] == [["legal"], ["board", "legal"], ["legal"]]
    # and a re-export of the copy is the same file
    assert mf.conversation("copy", create=False).export_jsonl().splitlines()[:2] == path.read_text(
        encoding="utf-8").splitlines()
    mf.close()


def _open_target(target):
    return MemFold(target, clock=LogicalClock(), token_counter="words", embedder=None, secrets="off",
                   preload_embedder=False)


def test_an_unlabelled_conversation_exports_no_conversation_labels(tmp_path):
    mf = _open(tmp_path)
    conv = mf.conversation("c", namespace="n")
    conv.append({"role": "user", "content": "hello"})
    assert json.loads(conv.export_jsonl()) == {"role": "user", "content": "hello"}
    mf.close()


def test_an_import_into_a_conversation_with_other_labels_is_refused_writing_nothing(tmp_path):
    path = _labelled_export(tmp_path)
    mf = _open(tmp_path)
    plain = mf.conversation("plain", namespace="acme")
    with pytest.raises(InvalidInput, match="legal"):
        plain.import_jsonl(path)
    with pytest.raises(InvalidInput, match="legal"):
        mf.ingest_jsonl("plain", path)
    with pytest.raises(InvalidInput, match="support"):  # the labels given differ from the file's
        mf.ingest_jsonl("new", path, labels=["support"])
    assert plain.history() == [] and mf.conversations() == ["plain"]
    mf.close()


def test_lines_naming_different_conversation_labels_are_refused_by_line(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_text(json.dumps({"role": "user", "content": "a", "conversation_labels": ["legal"]}) + "\n"
                    + json.dumps({"role": "user", "content": "b", "conversation_labels": ["hr"]}) + "\n",
                    encoding="utf-8")
    mf = _open(tmp_path)
    with pytest.raises(InvalidInput, match="line 2"):
        mf.ingest_jsonl("c", path)
    assert mf.conversations() == []
    mf.close()


def test_memfold_ingest_label_creates_a_labelled_conversation(tmp_path):
    db = str(tmp_path / "cli.db")
    src = tmp_path / "t.jsonl"
    src.write_text(json.dumps({"role": "user", "content": "Clause 7 is void"}) + "\n", encoding="utf-8")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", db, "--clock", "logical"]).exit_code == 0
    result = runner.invoke(cli, ["ingest", db, "-c", "case-7", "-n", "acme", "--label", "legal", str(src)])
    assert result.exit_code == 0, result.output
    again = runner.invoke(cli, ["ingest", db, "-c", "case-7", "--label", "support", str(src)])
    assert again.exit_code != 0 and "legal" in again.output
    with MemFold(db, embedder=None, preload_embedder=False) as mf:
        assert _row_labels(mf, "case-7") == ["legal"]
        assert [t.labels for t in mf.conversation("case-7", create=False).history()] == [("legal",)]


def test_memfold_window_and_replay_read_the_conversation_labels_of_an_export(tmp_path):
    path = _labelled_export(tmp_path)
    mf = _open(tmp_path)
    mf.meter_jsonl("metered", path, namespace="acme")
    assert _row_labels(mf, "metered") == ["legal"]
    mf.close()
    from memfold.replay.formats import read_jsonl_source
    from memfold.replay.runner import ReplaySettings, replay

    source = read_jsonl_source(path)
    assert source.conversations[0].labels == ["legal"]
    replay(source, tmp_path / "replayed.db", settings=ReplaySettings(budget_tokens=400, consolidate=False),
           token_counter="words")
    with MemFold(tmp_path / "replayed.db", token_counter="words", embedder=None, preload_embedder=False) as again:
        assert _row_labels(again, "case-7") == ["legal"]


def test_the_mcp_append_tool_creates_a_labelled_conversation_and_refuses_other_labels(tmp_path):
    """As ``POST /v1/conversations`` with ``labels``: a new conversation gets them, an existing
    one with other labels is refused (nothing written)."""
    mf = _open(tmp_path)
    tools = MemfoldTools(mf, reader=None, namespace="acme")
    out = tools.call("append", {"conversation": "case-7", "role": "user", "content": "Clause 7 is void",
                                "conversation_labels": ["legal"]})
    assert out.data["labels"] == ["legal"]
    assert _row_labels(mf, "case-7") == ["legal"]
    tools.call("append", {"conversation": "case-7", "role": "user", "content": "and clause 8",
                          "conversation_labels": ["legal"]})
    with pytest.raises(InvalidInput, match="support"):
        tools.call("append", {"conversation": "case-7", "role": "user", "content": "clause 9",
                              "conversation_labels": ["support"]})
    tools.call("append", {"conversation": "case-7", "role": "user", "content": "clause 10"})  # not given: as it is
    hist = mf.conversation("case-7", create=False).history()
    assert [t.content for t in hist] == ["Clause 7 is void", "and clause 8", "clause 10"]
    assert all("legal" in t.labels for t in hist)
    mf.close()


# -- 3: an export's times are read on the clock they were written on ----------------------------

def _logical_export_with_times(tmp_path):
    mf = _open(tmp_path, "ticks.db")
    conv = mf.conversation("dana", namespace="acme")
    for tick, text in ((5, "Where is my order ORD-3300?"), (7, "It shipped on May 3."), (95, "Thanks!")):
        conv.append({"role": "user" if tick != 7 else "assistant", "content": text, "created_at": tick})
    path = tmp_path / "dana.jsonl"
    path.write_text(conv.export_jsonl(with_times=True), encoding="utf-8")
    mf.close()
    return path


def test_replay_reads_a_logical_exports_ticks_as_ticks_not_as_1970(tmp_path):
    """Tick ``n`` replays at 2026-01-01 UTC + ``n`` minutes (order and spacing kept)."""
    from datetime import datetime, timedelta, timezone

    from memfold.replay.formats import read_jsonl_source

    from memfold.replay.runner import ReplaySettings, replay

    path = _logical_export_with_times(tmp_path)
    source = read_jsonl_source(path)
    turns = [t for s in source.conversations[0].sessions for t in s.turns]
    base = datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert [t["created_at"] for t in turns] == [base + timedelta(minutes=m) for m in (5, 7, 95)]
    assert all(json.loads(x)["clock"] == "logical" for x in path.read_text(encoding="utf-8").splitlines())
    replay(source, tmp_path / "replayed.db", settings=ReplaySettings(budget_tokens=400, consolidate=False),
           token_counter="words")
    with MemFold(tmp_path / "replayed.db", token_counter="words", embedder=None, preload_embedder=False) as mf:
        stored = [t.created_at for t in mf.conversation("dana", create=False).history()]
    assert stored == [(base + timedelta(minutes=m)).timestamp() for m in (5, 7, 95)]


def test_times_of_one_clock_are_not_ingested_on_the_other(tmp_path):
    from memfold import SystemClock

    ticks = _logical_export_with_times(tmp_path)
    system = MemFold(tmp_path / "sys.db", clock=SystemClock(), token_counter="words", embedder=None,
                     secrets="off", preload_embedder=False)
    with pytest.raises(InvalidInput, match="logical-clock ticks"):
        system.ingest_jsonl("copy", ticks, namespace="acme")
    assert system.conversations() == []
    conv = system.conversation("s", namespace="acme")
    conv.append({"role": "user", "content": "hello"})
    line = json.loads(conv.export_jsonl(with_times=True))
    assert "clock" not in line  # a system-clock export is what older readers read
    seconds = tmp_path / "s.jsonl"
    seconds.write_text(json.dumps({**line, "clock": "system"}) + "\n", encoding="utf-8")
    system.close()
    logical = _open(tmp_path, "logical.db")
    with pytest.raises(InvalidInput, match="system-clock POSIX seconds"):
        logical.ingest_jsonl("copy", seconds, namespace="acme")
    logical.ingest_jsonl("copy", ticks, namespace="acme")  # the same clock: the ticks are kept
    assert [t.created_at for t in logical.conversation("copy", create=False).history()] == [5, 7, 95]
    logical.close()


# -- 4: PostgreSQL without pgvector reads the vector stamp and the matrix in one snapshot -------

def test_a_write_between_the_stamp_and_the_matrix_never_caches_a_vector_under_the_old_stamp(pg_url):
    """Two connections. While A loads its in-process matrix, B commits a vector for a new turn,
    then erases that turn (its vector row goes): the stamp (count, max rid, sum rid) is back to
    A's. Read in two statements, A cached the matrix holding B's vector under the old stamp and
    kept serving the erased turn's vector. The write is committed at the one point the race needs
    (after A's stamp, before its matrix) by wrapping the load the cache calls; memfold's own code
    runs unchanged, and nothing waits or sleeps."""
    from memfold.memory.storage import vectorscan

    url = pg_url + ("&" if "?" in pg_url else "?") + "pgvector=off"
    a = MemFold(url, clock=LogicalClock(), token_counter="words", embedder="hashing", secrets="off",
                preload_embedder=False)
    conv = a.conversation("c", namespace="n")
    conv.append_many([{"role": "user", "content": f"river bank line {i}"} for i in range(3)], compact=False)
    a.search("river", conversation_id="c")  # every turn's vector stored
    b = MemFold(url, clock=LogicalClock(), token_counter="words", embedder=None, secrets="off",
                preload_embedder=False)
    late = b.conversation("c", create=False).append({"role": "user", "content": "a late river line"})
    vectors = a.storage.vectors
    model_id, dim = vectors.model()
    query = np.ones(dim, dtype=np.float32)

    class WriteDuringLoad(vectorscan.MatrixCache):
        armed = True

        def get(self, kind, stamp, load, *, keep=True):
            def load_after_b_writes():
                if self.armed:
                    self.armed = False
                    with b.storage.transaction():
                        b.storage.vectors.put("turn", [late], np.ones((1, dim), dtype=np.float32), model_id=model_id)
                return load()
            return super().get(kind, stamp, load_after_b_writes, keep=keep)

    vectors._matrices = WriteDuringLoad()
    first = vectors.similarity("turn", query, [late], private=False)
    b.erase(turn_ids=[late])  # the turn and its vector row go: the stamp is what A read first
    assert vectors.count("turn") == 3
    assert vectors.similarity("turn", query, [late], private=False) == {}, first
    b.close()
    a.close()


# -- 5: the rules extractor's location and contact preference -----------------------------------

def _facts_after(tmp_path, turns):
    mf = _open(tmp_path)
    conv = mf.conversation("c", namespace="n")
    for text in turns:
        conv.append({"role": "user", "content": text})
        mf.consolidate("n", include_turns=True)
    facts = sorted((r.key, r.content) for r in mf.memory.list("n"))
    mf.close()
    return facts


def test_moving_from_a_service_to_another_is_a_switch_not_a_move_of_home(tmp_path):
    """"I've now moved from Google to Kagi" after "My go-to search engine is Google" changes the
    search engine; it gave ``user.location = Kagi`` beside the old engine."""
    assert _facts_after(tmp_path, ["My go-to search engine is Google.", "I've now moved from Google to Kagi."]) == [
        ("user.preferred.search_engine", "Kagi")]


def test_moving_from_a_place_to_another_is_still_a_move_of_home(tmp_path):
    assert _facts_after(tmp_path, ["I moved from Leeds to Bristol."]) == [("user.location", "Bristol")]
    assert _facts_after(tmp_path, ["I live in Leeds.", "I moved from Leeds to Bristol last year."]) == [
        ("user.location", "Bristol")]


def test_a_contact_preference_leaves_the_other_sentences_of_the_turn_read(tmp_path):
    """A contact preference in one sentence stopped attribute statements in every later sentence
    of the same turn."""
    assert _facts_after(tmp_path, ["Please contact me by email. My favourite colour is green."]) == [
        ("user.contact_preference", "email"), ("user.favourite.colour", "green")]


# -- 6: the older condition_met rule needs a word of the condition, not only the event's verb ----

def _states_after(tmp_path, record, report, name):
    mf = _open(tmp_path, name)
    conv = mf.conversation("c", namespace="n")
    conv.append({"role": "user", "content": record})
    conv.append({"role": "user", "content": report})
    states = {r.text: r.state for r in mf.protected.for_conversation(conv.id)}
    mf.close()
    return states[record]


@pytest.mark.parametrize("record, report", [
    ("Don't book the flights until my passport renewal arrives.", "The new sofa arrived this morning."),
    ("Don't release the invoice until the payment clears.", "The snow cleared overnight."),
])
def test_an_event_sharing_only_its_verb_with_the_condition_releases_nothing(tmp_path, record, report):
    """"The new sofa arrived" released "until my passport renewal arrives" on the one shared
    word "arrive"."""
    assert _states_after(tmp_path, record, report, "m.db") == "active"


@pytest.mark.parametrize("record, report", [
    ("Don't book the flights until my passport renewal arrives.", "My passport renewal arrived this morning."),
    ("Hold the payment until the goods arrive.", "The goods arrived."),
    ("Don't book the flights until my visa is approved.", "Great news, the visa came through today!"),
])
def test_the_event_a_condition_names_still_releases_it(tmp_path, record, report):
    assert _states_after(tmp_path, record, report, "m.db") == "satisfied"


def test_a_turn_longer_than_long_text_gets_its_snippet_from_the_linear_path(backend_target):
    """FTS5's snippet() is quadratic in a text's size (a 2 MB turn made one search take 70 s):
    a turn over ``LONG_TEXT`` characters takes its snippet from ``textsearch.snippet``, with the
    match marked, on both backends; a short turn keeps FTS5's own snippet; a long turn that does
    not match has none."""
    from memfold.memory.storage.sqlite.fulltext import LONG_TEXT

    mf = _open_target(backend_target)
    conv = mf.conversation("c", namespace="n")
    filler = " ".join(f"word{i}" for i in range(LONG_TEXT // 6 + 10))
    big = conv.append({"role": "user", "content": f"{filler} the parcel ORD-77 is late {filler}"})
    other = conv.append({"role": "user", "content": f"{filler} nothing to see {filler}"})
    small = conv.append({"role": "user", "content": "Where is ORD-77 now?"})
    assert min(len(t.content) for t in conv.history()[:2]) > LONG_TEXT
    found = mf.storage.fulltext.describe_matches("turn", [big, other, small], '"ord" AND "77"')
    assert found[big].snippet is not None and "[ORD]-[77]" in found[big].snippet
    assert found[big].snippet.startswith("…") and found[big].snippet.endswith("…")
    assert len(found[big].snippet.split()) <= 14
    assert found[other].snippet is None
    assert found[small].snippet == "Where is [ORD]-[77] now?"
    hits = {h.ref: h for h in conv.search("ORD-77")}
    assert {f"t{big}", f"t{small}"} <= set(hits) and "[ORD]-[77]" in hits[f"t{big}"].snippet
    mf.close()
