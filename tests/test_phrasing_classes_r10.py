"""The round-10 phrasing classes of issue 20, point 10, each through a real MemFold conversation.

``fresh6`` (written blind in round 9, measured twice: 78.8% of its protected items on round 9's
rules) was read for the *class* of each miss, withdrawals first (revocations 45.8%, plan resets
54.2%, confirmations 58.3%); each class is one rule family registered with ``fresh6`` in
``memfold.memory.families``, written as grammar (a thing declared not needed, a rule noun
declared gone, a banned thing allowed "again", a discard verb on a plan, a past-tense report of
the event a record waits for) rather than as the set's sentences. One case per family at least:
new sentences written here (not items of any phrasing set) appended as user turns to a real
database file, the record or withdrawal there afterwards, and the same turns giving something
else with that family off; and near misses in the same shapes that must make no record. Last, the
two round-8 QA defects fixed this round: the laughter / everyday-list / opinion veto and the
length bound on a record's text.
"""

from __future__ import annotations

import pytest

from memfold.memory import families
from memfold.window import constraints as c
from memfold.window import directives as d
from memfold.window import directives_r15 as r15
from phrasing_support import _active, _say, _states, check_withdrawal, mf  # noqa: F401 (mf: a fixture)


#: (family, sentence, kind of the record it makes)
STANDING = [
    (d.F_KINDS_R10, "It's absolutely forbidden to forward payroll files to personal inboxes.", "constraint"),
    (d.F_KINDS_R10, "You're not authorised to change a member's delivery address over the phone.", "constraint"),
    (d.F_KINDS_R10, "The most you can refund without a manager is £40.", "constraint"),
    (d.F_KINDS_R10, "The night shift has clearance to restart the print server when it hangs.", "permission"),
    (d.F_KINDS_R10, "It's fine by me if you move my dentist appointment to a later slot.", "permission"),
    (d.F_KINDS_R10, "Exception granted: waive the delivery charge on order 7712.", "approval"),
    (d.F_KINDS_R10, "You've got my nod to renew the domain for three years.", "approval"),
    (d.F_KINDS_R10, "Consensus from the planning call: the fair moves to the church hall.", "policy_state"),
    (d.F_KINDS_R10, "The final decision is that the newsletter goes out fortnightly.", "policy_state"),
    (d.F_KINDS_R10, "The chatbot shall log every complaint with a reference number.", "obligation"),
    (d.F_KINDS_R10, "We plan to open the second shop in the spring.", "policy_state"),
    (d.F_KINDS_R10, "Keep the autumn menu as a draft until the chef is back.", "prerequisite"),
    (d.F_SETUP_R10, "Answer the helpdesk chats in Spanish.", "obligation"),
    (d.F_SETUP_R10, "Greet returning members by their first name.", "obligation"),
    (d.F_SETUP_R10, "Remind me to water the tomatoes every evening.", "obligation"),
]


@pytest.mark.parametrize("family, text, kind", STANDING)
def test_each_round10_class_is_protected_and_only_with_its_family(mf, family, text, kind):
    _say(mf, text)
    assert _active(mf) == {text: kind}
    with families.off([family, *families.motivated_by("fresh9"), *families.motivated_by("fresh10")]):  # rounds 13-14 read some too
        _say(mf, text, cid="off")
        assert _active(mf, "off") != {text: kind}


@pytest.mark.parametrize("text, kind", [
    ("When a supplier is rude, don't reply in kind under any circumstances.", "constraint"),
    ("Offer a maximum of two free reschedules per booking.", "constraint"),
    ("The survey dated 3 June records a crack in the garage wall.", "evidence"),
])
def test_sentences_written_for_round10_classes_that_earlier_rules_read_already(mf, text, kind):
    # written for kind_forms_r10, read by earlier families too (so no family-off check)
    _say(mf, text)
    assert _active(mf) == {text: kind}


@pytest.mark.parametrize("text, kind", [
    ("Kindly never leave a parcel with a neighbour.", "constraint"),
    ("yeah and um don't print the drafts in colour", "constraint"),
    ("From 1 July, every refund over £100 must be logged in the ledger.", "obligation"),
    ("If a parcel comes back damaged, first make sure the courier has photographed it.", "obligation"),
])
def test_a_round10_lead_is_read_past_and_kept(mf, text, kind):
    _say(mf, text)
    assert _active(mf) == {text: kind}
    with families.off([d.F_LEAD_R10, *families.motivated_by("fresh10")]):  # round 14 drops fillers too
        _say(mf, text, cid="off")
        assert _active(mf, "off") != {text: kind}


NEAR_MISSES = [
    "My climbing gym has a rule that you have to chalk up outside.",
    "Everyone at work keeps saying we should automate the reports, nobody does.",
    "Turns out the chemist closes at 1pm on Sundays, who knew.",
    "We decided to repaint the hallway last weekend.",
    "We have until Friday to enjoy the heatwave apparently.",
    "Make sure yours is the best stall at the fair!",
    "The most I can eat is two slices, honestly.",
    "Remind me why we came here again?",
    "We exchanged numbers at the party and never spoke again.",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_small_talk_in_the_round10_shapes_makes_no_record(mf, text):
    _say(mf, text)
    assert _states(mf) == {}


@pytest.mark.parametrize("family, rule, other, withdrawal", [
    (d.F_REVOKE_R10, "Always attach a photo of the meter to energy claims.", "Never quote prices in dollars.",
     "Meter photos aren't needed any more on claims."),
    (d.F_REVOKE_R10, "Always escalate complaints about drivers to Tomasz.", "Keep replies under 120 words.",
     "Driver complaints no longer need to go to Tomasz."),
    (d.F_REVOKE_R10, "Never book meetings longer than 45 minutes.", "Always add a dial-in number.",
     "The 45-minute cap on meetings is history."),
    (d.F_REVOKE_R10, "Don't send newsletters on Sundays.", "Always use the blue template.",
     "Re the Sunday newsletter thing: forget it, people like them."),
    (d.F_REVOKE_R10, "Always quiz me on Spanish verbs every evening.", "Never book me on early trains.",
     "Let's drop the Spanish verbs quiz, my exam is over."),
    (d.F_RESTORE_R10, "Don't accept cheques from customers.", "Always print a receipt.",
     "We're accepting cheques again from Monday."),
    (d.F_RESTORE_R10, "Never book me into hostels.", "Always pick a room with a desk.",
     "You can go back to booking hostels for me."),
    (d.F_RESTORE_R10, "Don't schedule calls on Wednesdays.", "Always send an agenda first.",
     "We're doing Wednesday calls again."),
])
def test_round10_withdrawals_end_only_the_named_rule(mf, family, rule, other, withdrawal):
    check_withdrawal(mf, [family, *families.motivated_by("fresh9"), *families.motivated_by("fresh10")], rule, other, withdrawal)


@pytest.mark.parametrize("plan, reset", [
    ("The plan is to paint the office in May and recarpet it in June.",
     "Ignore the office plan I sent you. We're moving to a new office in August instead."),
    ("The plan is to sell the van in spring and lease an electric one.",
     "We've torn up the van plan; we keep it and fit a new engine in March."),
    ("The plan is two launches, Leeds in May and York in June.",
     "We're starting from scratch on the launches: one launch in Leeds on 1 July."),
    ("The plan is to recruit three engineers by March.",
     "ok so, new hiring plan, we're taking on one senior engineer in April."),
])
def test_a_round10_reset_supersedes_the_plan_in_force(mf, plan, reset):
    _say(mf, plan, "Always copy Dana on supplier emails.", reset)
    states = _states(mf)
    assert states[plan] == "superseded" and states["Always copy Dana on supplier emails."] == "active"
    assert states[reset] == "active"
    with families.off([d.F_RESET_R10, r15.F_RESET_R15]):  # round 15's reset forms read "Ignore the ... plan" too
        _say(mf, plan, reset, cid="off")
        assert _states(mf, "off")[plan] == "active"


@pytest.mark.parametrize("waiting, other, event", [
    ("Don't order the kitchen until we've measured the room.", "Always pay by card.", "We measured the room this morning."),
    ("Hold the deposit refund until the drill is inspected.", "Quote prices in euros.",
     "The drill's been inspected, it works fine."),
])
def test_a_condition_reported_in_the_past_releases_the_waiting_record(mf, waiting, other, event):
    _say(mf, waiting, other, event)
    states = _states(mf)
    assert states[waiting] == "satisfied" and states[other] == "active"
    with families.off([d.F_CONDITION_R10]):
        _say(mf, waiting, other, event, cid="off")
        assert _states(mf, "off")[waiting] == "active"


def test_a_past_report_sharing_one_word_with_the_condition_releases_nothing(mf):
    waiting = "Don't order the kitchen until we've measured the room."
    _say(mf, waiting, "We measured the garden yesterday.", "We haven't measured the room yet.")
    assert _states(mf)[waiting] == "active"


# -- the round-8 QA defects ----------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "Plan for Sunday: brunch, nap, telly haha", "Never reply to my mum's texts lol", "Itinerary: sofa, fridge, sofa.",
    "Let's settle it: autumn is better than spring.",
])
def test_laughter_an_everyday_list_or_an_opinion_makes_no_record(mf, text):
    _say(mf, text)
    assert _states(mf) == {}
    with families.off([d.F_CASUAL_R10]):
        _say(mf, text, cid="off")
        assert _states(mf, "off") != {}


def test_a_plan_label_over_a_list_of_the_task_is_still_a_plan(mf):
    text = "Schedule: invoices, payroll, backups."
    _say(mf, text)
    assert _active(mf) == {text: "policy_state"}


def test_a_record_text_is_bounded(mf):
    # just under the bound: a record; a run-on paste over it: none (MAX_RECORD_CHARS, README)
    head = "Never share the "
    fits = head + "quarterly revenue figures " * ((c.MAX_RECORD_CHARS - len(head) - 1) // 26) + "."
    assert len(fits) <= c.MAX_RECORD_CHARS
    _say(mf, fits)
    assert _active(mf) == {fits: "constraint"}
    over = head + "quarterly revenue figures " * (c.MAX_RECORD_CHARS // 26 + 1) + "."
    _say(mf, over, "Never call me after 9pm.", cid="c2")
    assert _active(mf, "c2") == {"Never call me after 9pm.": "constraint"}
