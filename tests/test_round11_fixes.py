"""Round 11 fixes (r11fix): defects carried from round 10's closing note.

Real databases and memfold's own code paths; deterministic parts (logical clock, word counter)."""

from __future__ import annotations

from memfold import LogicalClock, MemFold
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
