"""Folds the model chooses (issue 14, points 1-4, 7, 8): the fold card, fold_unit's legality rules,
the host-built result with zero model calls, reading a fold back, crash safety, phase boundaries
and the counters. Real parts: a SQLite file, the logical clock, words as tokens, real processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from memfold import IllegalFold, LogicalClock, MemFold, Summarizer, WindowSettings
from memfold.replay.agent_sessions import ScriptedAgent, abcd_units, coding_session, default_data_dir, star_units

BIG = dict(budget_tokens=200_000, output_reserve_tokens=1_000)


class ExplodingSummarizer(Summarizer):
    """A summarizer that must never be called: it counts the attempt and raises."""

    id = "exploding"

    def __init__(self) -> None:
        self.calls = 0

    def summarize(self, items, depth, *, target_tokens=None):
        self.calls += 1
        raise RuntimeError("a fold the model chose must not call a model")


def call(cid: str, name: str, **args) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def open_mf(path, **kw):
    kw.setdefault("window", WindowSettings(**BIG))
    return MemFold(path, clock=LogicalClock(), token_counter="words", embedder=None, **kw)


def two_units(conv) -> None:
    """Unit 1 (#1-#7: a request, two tool calls, a short user turn, a closing message), then unit 2
    in progress (#8 the newest user turn, #9-#10 a tool call and its result)."""
    conv.append_many([
        {"role": "user", "content": "Please fix the failing test in src/app/cache.py"},                    # 1
        {"role": "assistant", "content": "", "tool_calls": [call("a", "read_file", path="src/app/cache.py")]},
        {"role": "tool", "tool_call_id": "a", "content": "def get(key): return store[key]  # src/app/cache.py " * 8},
        {"role": "user", "content": "ok, turn it off"},                                                     # 4
        {"role": "assistant", "content": "", "tool_calls": [call("b", "bash", command="pytest -q tests/test_cache.py")]},
        {"role": "tool", "tool_call_id": "b", "content": "3 passed in 0.2s " * 10},                          # 6
        {"role": "assistant", "content": "Fixed: cache.get now returns None for a missing key; tests pass."},  # 7
        {"role": "user", "content": "Now add a retry option to src/app/client.py"},                        # 8
        {"role": "assistant", "content": "", "tool_calls": [call("c", "read_file", path="src/app/client.py")]},
        {"role": "tool", "tool_call_id": "c", "content": "class Client: pass " * 30},                        # 10
    ])


@pytest.fixture
def conv(db_path):
    mf = open_mf(db_path)
    c = mf.conversation("coding")
    two_units(c)
    yield c
    mf.close()


# -- the result: host-built, zero model calls, expandable (points 3-4) --------------------------------
def test_fold_unit_builds_the_result_without_calling_the_summarizer(db_path):
    exploding = ExplodingSummarizer()
    mf = open_mf(db_path, summarizer=exploding)
    conv = mf.conversation("coding")
    two_units(conv)
    before = {t.id: t.sha256 for t in conv.history()}
    outcome = conv.fold_unit(1, 7)
    assert exploding.calls == 0
    card = mf.parts.cards.get(int(outcome.card[1:]))
    assert card.summarizer == "fold_unit" and card.depth == 1 and card.tokens < card.source_tokens
    text = card.text
    assert "2 tool calls (bash 1, read_file 1); shell commands 1" in text
    assert "paths: src/app/cache.py, tests/test_cache.py" in text
    assert "User #1: Please fix the failing test in src/app/cache.py" in text
    assert "User #4: ok, turn it off" in text  # every user turn, word for word
    assert text.endswith("Closing #7: Fixed: cache.get now returns None for a missing key; tests pass.")
    assert outcome.index["by_tool"] == {"bash": 1, "read_file": 1} and outcome.index["tool_calls"] == 2
    items = conv.catalog_items()
    assert [(i.kind, i.first_seq, i.last_seq) for i in items][:2] == [("card", 1, 7), ("turn", 8, 8)]
    # the archive is untouched and the card expands back to the verbatim turns
    assert {t.id: t.sha256 for t in conv.history()} == before and conv.verify() == []
    assert [t.seq for t in conv.expand(outcome.card, to_turns=True)] == list(range(1, 8))
    ctx = conv.context()
    assert ctx.refs[0] == outcome.card and "Closing #7" in ctx.messages[0]["content"] or any(
        "Closing #7" in m["content"] for m in ctx.messages)
    assert exploding.calls == 0
    mf.close()


def test_a_fold_card_sits_in_place_between_turns(conv):
    conv.fold_unit(1, 7)
    conv.append({"role": "assistant", "content": "Retry added."})
    conv.append({"role": "user", "content": "thanks"})
    conv.fold_unit(8, 11)
    roles = [(m["role"], m["content"][:12]) for m in conv.context().messages]
    first_card = next(i for i, m in enumerate(roles) if m[1].startswith("[c1]"))
    second_card = next(i for i, m in enumerate(roles) if m[1].startswith("[c2]"))
    assert first_card < second_card and roles[-1] == ("user", "thanks")


# -- legality: every rule, a clear error, nothing written (point 2) --------------------------------------
@pytest.mark.parametrize("first,last,message", [
    (0, 3, "turn #0 (from) does not exist: this conversation has turns #1-#10"),
    (2, 11, "turn #11 (to) does not exist: this conversation has turns #1-#10"),
    (5, 2, "the range #5-#2 is reversed"),
    (1, 8, "turns from #8 on are the unit in progress (the newest user turn #8 and everything after it) and cannot "
           "be folded: end the range by #7"),
    (9, 10, "turns from #8 on are the unit in progress"),
    (3, 7, "turn #3 is the result of a tool call made before it (#2): a tool call is never split from its result; "
           "start the range at #2"),
    (1, 2, "turn #3 is the result of a tool call inside the range: a tool call is never split from its result; end "
           "the range at #3"),
    ("x", 3, "from must be a turn number from the fold card"),
])
def test_illegal_ranges_are_refused_with_a_readable_error(conv, first, last, message):
    before = conv.catalog_items()
    with pytest.raises(IllegalFold) as err:
        conv.fold_unit(first, last)
    assert message in str(err.value)
    assert conv.catalog_items() == before and conv.folds() == [] and conv.fold_stats()["accepted"] == 0


def test_folds_do_not_nest(conv):
    conv.fold_unit(1, 7)
    conv.append({"role": "assistant", "content": "Retry added to src/app/client.py."})
    conv.append({"role": "user", "content": "next: the docs"})
    for first, last in ((1, 7), (2, 9), (1, 11), (7, 9)):
        with pytest.raises(IllegalFold, match=r"turns #1-#7 are already folded into \[c1\] \(an earlier fold\); "
                                              "folds do not nest"):
            conv.fold_unit(first, last)
    assert len(conv.folds()) == 1


def test_a_pressure_card_inside_the_range_is_named_too(db_path):
    mf = open_mf(db_path, window=WindowSettings(budget_tokens=90, output_reserve_tokens=0, hot_turns=3,
                                                leaf_chunk_tokens=30, card_target_tokens=5, fold_card_tool_calls=0,
                                                fold_card_tokens=0))
    conv = mf.conversation("c")
    two_units(conv)
    card = next(i for i in conv.catalog_items() if i.kind == "card")
    with pytest.raises(IllegalFold, match=rf"already folded into \[c{card.item_id}\] \(a summary card\)"):
        conv.fold_unit(card.first_seq, card.last_seq)
    mf.close()


def test_a_result_that_would_not_shrink_the_window_is_refused(db_path):
    mf = open_mf(db_path)
    conv = mf.conversation("c")
    conv.append_many([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
                      {"role": "user", "content": "bye"}])
    with pytest.raises(IllegalFold, match="would not make the window smaller"):
        conv.fold_unit(1, 2)
    assert conv.folds() == []
    mf.close()


def test_the_tool_answers_errors_as_text_and_counts_them(conv):
    assert conv.handle_tool_call("fold_unit", {"from": 1, "to": 9}).startswith(
        "error: turns from #8 on are the unit in progress")
    assert conv.handle_tool_call("fold_unit", '{"from": 1}') == (
        "error: fold_unit needs 'from' and 'to': the first and last turn numbers of the unit")
    assert conv.handle_tool_call("fold_unit", "{not json").startswith("error: tool 'fold_unit': arguments are not valid JSON")
    answer = conv.handle_tool_call("fold_unit", json.dumps({"from": 1, "to": 7}))
    assert answer.startswith("folded turns #1-#7") and "expand c1" in answer
    stats = conv.fold_stats()
    assert (stats["accepted"], stats["refused"]) == (1, 2)


def test_a_refusal_from_the_library_counts_as_refused_too(conv):
    """A fold refused through ``conv.fold_unit`` (the library, ``memfold fold``) counts in the fold
    stats like one refused through the tool; nothing else is written."""
    folds_before = conv.folds()
    with pytest.raises(IllegalFold, match="the unit in progress"):
        conv.fold_unit(1, 9)
    with pytest.raises(IllegalFold, match="does not exist"):
        conv.fold_unit(1, 99)
    assert conv.fold_stats()["refused"] == 2 and conv.folds() == folds_before
    assert conv.handle_tool_call("fold_unit", {"from": 1, "to": 9}).startswith("error: ")
    assert conv.fold_stats()["refused"] == 3  # the tool counts once, not twice
    conv.fold_unit(1, 7)
    assert (conv.fold_stats()["accepted"], conv.fold_stats()["refused"]) == (1, 3)


# -- the fold card (point 1) -----------------------------------------------------------------------------
def test_the_fold_card_appears_when_work_built_up_and_lists_turns_by_number(db_path):
    mf = open_mf(db_path, window=WindowSettings(**BIG, fold_card_tool_calls=2))
    conv = mf.conversation("coding")
    two_units(conv)
    ctx = conv.context()
    assert ctx.fold_card is not None
    lines = ctx.fold_card.splitlines()
    assert lines[0].startswith("[fold card] Work since the last fold: turns #1-#7 (7 turns, 2 tool calls")
    assert "The unit in progress starts at #8" in lines[0]
    assert lines[1] == '#1 user 7 tok: "Please fix the failing test in src/app/cache.py"'
    assert lines[2] == "#2-#3 10+48 tok: read_file src/app/cache.py"  # a call and its result: one line
    assert lines[3] == '#4 user 4 tok: "ok, turn it off"'
    assert lines[4] == "#5-#6 12+40 tok: bash tests/test_cache.py"
    assert lines[5] == "#7 assistant 11 tok"
    assert lines[-1].startswith("Is a unit of work behind you finished?") and "Ignoring this card" in lines[-1]
    # attached right before the newest user turn; counted in the budget
    at = next(i for i, m in enumerate(ctx.messages) if m["content"] == ctx.fold_card)
    assert ctx.messages[at + 1]["content"] == "Now add a retry option to src/app/client.py"
    assert ctx.total_tokens == sum(ctx.sections.values()) and conv.pressure() == ctx.total_tokens
    counter = mf.parts.token_counter
    assert ctx.fold_menu.tokens == counter.count(ctx.fold_card)
    # its tokens are a section of their own, not turns (the message sits among the turns)
    turn_tokens = sum(t.tokens for t in conv.history())
    assert ctx.sections["fold_card"] == ctx.fold_menu.tokens
    assert ctx.sections["turns"] + ctx.sections["hot_turns"] == turn_tokens
    assert conv.window_status()["tokens"] == ctx.total_tokens
    conv.context()  # the same menu again is one proposal
    assert conv.fold_stats()["proposed"] == 1
    conv.fold_unit(ctx.fold_menu.first_seq, ctx.fold_menu.last_seq)
    assert conv.context().fold_card is None  # the work since the last fold is only the unit in progress
    mf.close()


def test_no_fold_card_below_the_thresholds(conv):
    assert conv.context().fold_card is None  # 3 tool calls < 20, few tokens < 100,000 (the defaults)


def test_fold_card_size_on_the_seed_like_session(db_path):
    """The seed's card costs about 250 tokens when nothing is closed: a 20-call coding task."""
    mf = open_mf(db_path)
    conv = mf.conversation("s")
    log = ScriptedAgent(conv, fold_at_close=False, counter=mf.parts.token_counter).play(coding_session(3, tasks=3))
    assert log.card_tokens and 150 <= min(log.card_tokens) <= 600
    mf.close()


# -- reading back and re-runs (point 8) ------------------------------------------------------------------------
def test_reading_a_folded_range_back_and_reruns_are_counted(conv):
    conv.fold_unit(1, 7)
    assert conv.fold_stats()["read_back"] == 0
    conv.handle_tool_call("expand", {"id": "c1", "to_turns": True})
    conv.handle_tool_call("describe", {"id": "c1"})
    conv.handle_tool_call("search", {"query": "cache.py"})
    conv.handle_tool_call("search", {"query": "Client"})  # hits only the unit in progress: not a read-back
    assert conv.fold_stats()["read_back"] == 3
    conv.append({"role": "assistant", "content": "", "tool_calls": [call("d", "read_file", path="src/app/cache.py")]})
    conv.append({"role": "tool", "tool_call_id": "d", "content": "same file"})
    conv.append({"role": "assistant", "content": "", "tool_calls": [call("e", "read_file", path="src/app/other.py")]})
    assert conv.fold_stats()["reruns"] == 1


# -- phase boundaries (point 7) -----------------------------------------------------------------------------
def test_pressure_compaction_ends_at_a_closed_unit_rather_than_mid_unit(db_path):
    settings = WindowSettings(budget_tokens=10_000, output_reserve_tokens=0, hot_turns=2, leaf_chunk_tokens=60,
                              card_target_tokens=5, fold_card_tool_calls=0, fold_card_tokens=0)
    mf = open_mf(db_path, window=settings)
    parent = mf.conversation("p")
    parent.append_many([{"role": "user", "content": f"step {i} of the migration plan for the billing tables"}
                        for i in range(3)])
    child = parent.spawn("count the rows of every billing table")
    child.append_many([{"role": "assistant", "content": f"table {i} has {i * 100} rows and two indexes"}
                       for i in range(6)])
    receipt = child.finish("billing has 6 tables, 1,500 rows in all")
    parent.append_many([{"role": "user", "content": f"later step {i} of the migration for the billing tables"}
                        for i in range(6)])
    receipt_seq = int(mf.parts.archive.get(int(receipt["turn"][1:])).seq)
    report = parent.compact(target_tokens=0)
    first_card = mf.parts.cards.get(int(report.cards[0][1:]))
    assert first_card.last_seq == receipt_seq  # the chunk would reach #6 by size; it stops after the receipt
    mf.close()


# -- crash safety (point 3): a real process killed between the steps -------------------------------------------
CRASH = textwrap.dedent("""
    import os, signal, sys
    from memfold import LogicalClock, MemFold, WindowSettings
    from memfold.memory.storage.sqlite import cards, catalog, folds

    step = sys.argv[2]
    targets = {"card": (cards.SqliteCards, "insert"), "fold_row": (folds.SqliteFolds, "insert_fold"),
               "delete": (catalog.SqliteCatalog, "delete_between"), "splice": (catalog.SqliteCatalog, "insert")}
    if step in targets:  # the step runs, then the process is killed before the next one
        cls, name = targets[step]
        real = getattr(cls, name)
        def then_die(self, *args, **kwargs):
            real(self, *args, **kwargs)
            os.kill(os.getpid(), signal.SIGKILL)
        setattr(cls, name, then_die)
    mf = MemFold(sys.argv[1], clock=LogicalClock(), token_counter="words", embedder=None,
                 window=WindowSettings(budget_tokens=200000, output_reserve_tokens=1000))
    mf.conversation("coding").fold_unit(1, 7)
    if step == "committed":
        os.kill(os.getpid(), signal.SIGKILL)
    print("folded")
""")


@pytest.mark.parametrize("step", ["card", "fold_row", "delete", "splice", "committed", "none"])
def test_a_process_killed_during_a_fold_leaves_the_range_unfolded_or_folded(db_path, step):
    mf = open_mf(db_path)
    conv = mf.conversation("coding")
    two_units(conv)
    before = [(i.kind, i.first_seq, i.last_seq) for i in conv.catalog_items()]
    mf.close()
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, "-c", CRASH, str(db_path), step], env=env, capture_output=True, text=True,
                          timeout=120)
    mf = open_mf(db_path)
    conv = mf.conversation("coding")
    after = [(i.kind, i.first_seq, i.last_seq) for i in conv.catalog_items()]
    folds = conv.folds()
    if step == "none":
        assert proc.returncode == 0 and "folded" in proc.stdout
    else:
        assert proc.returncode == -signal.SIGKILL, proc.stderr
    if step in ("card", "fold_row", "delete", "splice"):  # killed inside the transaction: unfolded, nothing left
        assert after == before and folds == []
        assert mf.parts.cards.family_cards(conv.family_id) == []
    else:  # committed: folded, the card, its covers, the fold row and the splice are all there
        assert after[0] == ("card", 1, 7) and after[1:] == before[7:]
        assert len(folds) == 1 and f"c{folds[0].card_id}" == "c1"
        assert [t.seq for t in conv.expand("c1", to_turns=True)] == list(range(1, 8))
    assert conv.verify() == []
    if after == before:
        conv.fold_unit(1, 7)  # and a retry after the crash succeeds
    assert [(i.kind, i.first_seq, i.last_seq) for i in conv.catalog_items()][0] == ("card", 1, 7)
    mf.close()


# -- data: STAR, ABCD and the generator play as units of work (point 9) -------------------------------------------
def test_the_coding_session_generator_is_deterministic_and_long():
    a, b = coding_session(7, tasks=5), coding_session(7, tasks=5)
    assert [u.messages for u in a] == [u.messages for u in b]
    assert [u.messages for u in coding_session(8, tasks=5)] != [u.messages for u in a]
    assert all(u.messages[0]["role"] == "user" and u.tool_calls() >= 8 for u in a)
    shorts = [m["content"] for u in a for m in u.messages[1:] if m["role"] == "user"]
    assert shorts and all(len(s.split()) <= 5 for s in shorts)  # "ok, turn it off" and the like


DATA = default_data_dir()


@pytest.mark.skipif(not (DATA / "star" / "index.tsv").exists(), reason="needs ../shared/data/star")
def test_star_dialogues_play_as_units_with_kb_queries_as_tool_calls(db_path):
    units = star_units(DATA / "star", "Jane Doe", limit=4)
    assert len(units) == 4 and all(u.tool_calls() >= 1 for u in units)
    first_call = next(m for m in units[0].messages if m.get("tool_calls"))
    assert first_call["tool_calls"][0]["function"]["name"].startswith("kb_")
    mf = open_mf(db_path, window=WindowSettings(**BIG, fold_card_tool_calls=1))
    conv = mf.conversation("star")
    log = ScriptedAgent(conv, fold_at_close=True, counter=mf.parts.token_counter).play(units)
    assert log.folds >= 2 and log.refused == 0, log.errors
    assert conv.fold_stats()["folds"]["unit"] == log.folds
    mf.close()


@pytest.mark.skipif(not (DATA / "abcd" / "abcd_sample.json").exists(), reason="needs ../shared/data/abcd")
def test_abcd_actions_become_tool_calls():
    units = abcd_units(DATA / "abcd" / "abcd_sample.json")
    assert len(units) == 3
    names = {c["function"]["name"] for u in units for m in u.messages for c in m.get("tool_calls") or ()}
    assert "pull_up_account" in names


def test_a_user_turn_the_context_shows_as_a_glimpse_is_an_excerpt_in_the_fold_card(db_path):
    """The fold card quotes user turns verbatim, but a pasted log of more than half the usable
    budget was copied whole into the card at every pressure check (a 5 MB paste made each later
    append 0.5-0.7 s); it is shown by an excerpt the glimpse's size, naming its ref to expand."""
    settings = WindowSettings(budget_tokens=8_000, output_reserve_tokens=1_000, fold_card_tool_calls=2)
    mf = open_mf(db_path, window=settings)
    conv = mf.conversation("coding")
    paste = "ERROR worker-7 timeout at src/app/cache.py line 41 " * 600
    conv.append({"role": "user", "content": "Here is the log: " + paste})
    two_units(conv)
    ctx = conv.context()
    huge = conv.history()[0]
    assert huge.tokens > settings.usable_tokens // 2
    assert ctx.fold_card is not None
    line = ctx.fold_card.splitlines()[1]
    assert line.startswith(f'#1 user {huge.tokens} tok: "Here is the log: ERROR worker-7')
    assert line.endswith(f"[glimpse of {huge.tokens} tokens; expand t{huge.id}]")
    assert mf.parts.token_counter.count(line) < settings.usable_tokens // 4
    assert paste not in ctx.fold_card
    assert ctx.fold_card.splitlines()[2] == '#2 user 7 tok: "Please fix the failing test in src/app/cache.py"'
    mf.close()
