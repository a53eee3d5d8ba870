"""Library calls the CLI and the demo make through the facade (issue 12, point 6).

Each command that used to loop or reach into storage now makes one call: the window meter
(:meth:`MemFold.meter_jsonl`, :meth:`Conversation.append_metered`), the multi-namespace
consolidation (:meth:`MemFold.consolidate_all`), revert with its side effects
(:meth:`MemFold.revert`), the policy in force (:meth:`MemFold.policy`), protected records in their
real state (:meth:`MemFold.protect`, :meth:`MemFold.supersede_protected`), the erase plan, the run
list, the schema version and the archive check. Real parts: a temp-file database, a LogicalClock
and the words counter (the ``mf`` fixture).
"""

from __future__ import annotations

import json

import pytest

import memfold
from memfold import InvalidInput, MeterReading, NotFound, RevertOutcome
from memfold.memory.storage.sqlite.migrations import latest_version

TURNS = ["Hi, I am Dana. My order ORD-3300 arrived broken.", "Sorry to hear that Dana, let me check.", "thanks",
         "The replacement ships on May 4 to 12 Elm St.", "ok sounds good",
         "Please confirm: email dana@example.com, not phone?", "Yes email me, never call.", "Noted, we will email you."]
TINY = dict(budget=40, output_reserve=0, hot_turns=2, rollup_fanin=3, leaf_chunk_tokens=20, card_target_tokens=8)


def transcript(tmp_path, lines=None):
    path = tmp_path / "t.jsonl"
    messages = lines if lines is not None else [
        {"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(TURNS)]
    path.write_text("".join((m if isinstance(m, str) else json.dumps(m)) + "\n" for m in messages))
    return path


# -- the window meter ----------------------------------------------------------------------------
def test_meter_jsonl_reads_the_window_between_append_and_compaction(mf, tmp_path):
    seen = []
    readings = mf.meter_jsonl("s1", transcript(tmp_path), on_reading=seen.append, **TINY)
    assert seen == readings and all(isinstance(r, MeterReading) for r in readings)
    assert [r.turn for r in readings] == list(range(1, 9))
    assert [r.id for r in readings] == [t.id for t in mf.conversation("s1").history()]
    first, seventh = readings[0], readings[6]
    assert (first.tokens, first.usable, first.state, first.after) == (9, 40, "ok", None)
    assert (seventh.tokens, seventh.state, seventh.after, seventh.failures) == (42, "over", 35, 0)
    assert seventh.still_over is None
    assert first.to_dict() == {"turn": 1, "id": first.id, "tokens": 9, "usable": 40, "state": "ok", "after": None}
    assert seventh.to_dict()["failures"] == 0 and "still_over" not in seventh.to_dict()
    # the facade's own settings are untouched by the per-call overrides
    assert mf.window == memfold.WindowSettings()


def test_meter_names_what_stays_over_and_keeps_every_turn(mf, tmp_path):
    readings = mf.meter_jsonl("s1", transcript(tmp_path), budget=12, output_reserve=0, hot_turns=3)
    assert all(r.state == "over" and r.still_over is not None for r in readings)
    need = readings[0].still_over
    assert list(need) == ["hot_turns", "system", "system_note", "protected", "older", "total"]
    assert need["total"] == need["hot_turns"] + need["system"] + need["system_note"] + need["protected"] + need["older"]
    assert readings[0].to_dict()["still_over"] == need
    assert len(mf.conversation("s1").history()) == len(TURNS)


def test_meter_rejects_a_bad_line_or_setting_before_writing(mf, tmp_path):
    bad = transcript(tmp_path, [{"role": "user", "content": "x"}, {"role": "nobody", "content": "y"}])
    with pytest.raises(InvalidInput, match=r"t\.jsonl line 2: role must be one of"):
        mf.meter_jsonl("s1", bad)
    with pytest.raises(InvalidInput, match="unknown window setting 'budjet'"):
        mf.meter_jsonl("s1", transcript(tmp_path), budjet=10)
    assert mf.conversations() == []


def test_append_metered_on_a_conversation(mf):
    conv = mf.conversation("s1")
    reading = conv.append_metered({"role": "user", "content": "one two three"}, budget=40, output_reserve=0)
    assert (reading.turn, reading.tokens, reading.usable, reading.state) == (1, reading.tokens, 40, "ok")
    assert reading.id == conv.history()[0].id and reading.after is None


# -- consolidation ---------------------------------------------------------------------------------
def episodes(mf):
    mf.memory.write("acme/b", "episodic", "user confirmed their name is Dana")
    mf.memory.write("acme/a", "episodic", "user asked whether a return after the window is allowed")
    mf.memory.write("acme/a", "episodic", "tool said after the window a 10% restocking fee applies")


def test_consolidate_all_runs_every_pending_namespace_sorted(mf):
    episodes(mf)
    runs = mf.consolidate_all(trigger="test")
    assert [r.namespace for r in runs] == ["acme/a", "acme/b"]
    assert all(r.status == "ok" and r.trigger == "test" for r in runs)
    assert mf.consolidate_all() == []  # nothing pending any more
    listed = mf.runs()
    assert [r.id for r in listed] == [r.id for r in runs]
    assert [r.namespace for r in mf.runs("acme/b")] == ["acme/b"]
    assert [r.id for r in mf.runs(limit=1)] == [runs[-1].id]


def test_consolidate_all_checks_every_named_namespace_first(mf):
    episodes(mf)
    with pytest.raises(NotFound, match="no namespace 'nope'"):
        mf.consolidate_all(["acme/a", "nope"])
    assert mf.runs() == []  # the typo wrote nothing, not even acme/a's run
    with pytest.raises(InvalidInput, match="not the string 'acme/a'"):
        mf.consolidate_all("acme/a")
    runs = mf.consolidate_all(["acme/b", "acme/a"], dry_run=True)
    assert [r.namespace for r in runs] == ["acme/b", "acme/a"] and all(r.dry_run for r in runs)
    assert mf.runs() == []


def test_consolidate_all_stops_when_asked(mf):
    episodes(mf)
    assert mf.consolidate_all(["acme/a", "acme/b"], should_stop=lambda: True) == []


# -- forgetting: revert and the policy in force ------------------------------------------------------
def test_revert_reports_the_record_it_retired(mf):
    old = mf.memory.write("ns", "semantic", "Dana prefers email", key="user.contact")
    new = mf.memory.write("ns", "semantic", "Dana prefers phone", key="user.contact")
    outcome = mf.revert(old.id, cause="agent was wrong")
    assert isinstance(outcome, RevertOutcome)
    assert outcome.record.id == old.id and outcome.record.status == "active"
    assert outcome.retired == (new.id,) and outcome.evicted == ()
    assert mf.memory.get(new.id).status == "retired"
    data = outcome.to_dict()
    assert data["id"] == old.id and data["retired"] == [new.id] and data["evicted"] == []
    assert mf.memory.events(record_id=old.id, kind="revert")[-1].cause == "agent was wrong"


def test_revert_reports_the_record_a_full_store_evicted(mf):
    mf.policy("ns", "semantic", capacity=2)
    keep = mf.memory.write("ns", "semantic", "the user is Dana", importance=0.9)
    middle = mf.memory.write("ns", "semantic", "Dana's order is ORD-3300", importance=0.5)
    low = mf.memory.write("ns", "semantic", "it is raining", importance=0.1)
    assert mf.memory.get(middle.id).status == "evicted"  # the newest write is never the one evicted
    outcome = mf.revert(middle.id)
    assert outcome.record.status == "active" and outcome.retired == ()
    assert outcome.evicted == (low.id,)
    assert mf.memory.get(keep.id).status == "active" and mf.memory.get(low.id).status == "evicted"


def test_revert_refuses_an_active_record(mf):
    record = mf.memory.write("ns", "semantic", "fact")
    with pytest.raises(InvalidInput, match="only a retired or evicted record can be reverted"):
        mf.revert(record.id)


def test_policy_shows_or_sets(mf):
    shown = mf.policy("ns", "semantic")
    current = mf.memory.policy("ns", "semantic")
    assert shown.policy == current and shown.evicted == ()
    assert shown.effective_half_life == current.effective_half_life("semantic", mf.clock.unit)
    for content in ("a", "b", "c"):
        mf.memory.write("ns", "semantic", content)
    changed = mf.policy("ns", "semantic", capacity=1, half_life=4)
    assert changed.policy.capacity == 1 and changed.effective_half_life == 4 and len(changed.evicted) == 2
    assert mf.policy("ns", "semantic").policy.capacity == 1


# -- the protected channel and erasure ------------------------------------------------------------
def test_protect_returns_a_past_deadline_expired(mf, clock):
    clock.set(5)
    past = mf.protect("Refund by tick 3", kind="deadline", namespace="acme/dana", due_at=3)
    future = mf.protect("Refund by tick 50", kind="deadline", namespace="acme/dana", due_at=50, labels=["billing"])
    standing = mf.protect("Never call", namespace="acme/dana")
    assert past.state == "expired" and future.state == "active" and standing.state == "active"
    assert list(future.labels) == ["billing"]
    replaced = mf.supersede_protected(future.id, "Refund by tick 1", due_at=1, cause="moved")
    assert replaced.state == "expired" and replaced.kind == "deadline"
    assert mf.protected.get(future.id).state == "superseded"
    kept = mf.supersede_protected(standing.id, "Email only")
    assert kept.state == "active" and kept.supersedes == standing.id


def test_erase_plan_writes_nothing(mf):
    conv = mf.conversation("s1", namespace="acme/dana")
    turn_id = conv.append({"role": "user", "content": "my pin is 4471"})
    plan = mf.erase_plan(turn_ids=[turn_id])
    assert plan.to_dict()["counts"]["turns"] == 1
    assert conv.history()[0].content == "my pin is 4471"
    with pytest.raises(NotFound):
        mf.erase_plan(namespace="nobody")


# -- the file and the archive -----------------------------------------------------------------------
def test_schema_version_is_the_newest_migration(mf):
    assert mf.schema_version() == latest_version()


def test_conversation_verify_finds_no_changed_turn(mf):
    conv = mf.conversation("s1")
    conv.append_many([{"role": "user", "content": "one"}, {"role": "assistant", "content": "two"}])
    assert conv.verify() == []
