"""The round-8 phrasing classes of issue 20, points 10 and 11, each through a real MemFold conversation.

``fresh4`` (written blind in round 5, measured once: 61.8% of its standing instructions, 69.0% of its
attribute facts) was read for the *class* of each miss; each class is one rule family registered
with ``fresh4`` in ``memfold.memory.families``. One case per family: a sentence of its class (new
sentences written here, not items of any phrasing set) appended as a user turn to a real database
file, the protected record (or fact) there afterwards, and the same turn giving nothing (or
something else) with that family turned off; and near misses in the same shapes that must make no
record.
"""

from __future__ import annotations

import pytest

import memfold
from memfold.consolidation.extractors import attributes as a
from memfold.memory import families
from memfold.window import directives as d
from phrasing_support import _active, _say, _states, mf, with_later  # noqa: F401 (mf: a fixture)


#: (family, sentence, kind of the record it makes)
STANDING = [
    # an imperative about a kind of things, not one thing, stands ("Send the invoice" is a task)
    (d.F_GENERIC_IMPERATIVE, "Route refund disputes to the billing queue.", "obligation"),
    (d.F_GENERIC_IMPERATIVE, "Forward supplier complaints to Priya.", "obligation"),
    (d.F_GENERIC_IMPERATIVE, "Back up the shared drive on Fridays.", "obligation"),
    # a plan stated by its label or its noun
    (d.F_PLAN_STATEMENT, "Our plan: pilot the new rota with the night shift, then roll it out in March.", "policy_state"),
    (d.F_PLAN_STATEMENT, "The itinerary is Porto for two nights, then Lisbon for five.", "policy_state"),
    (d.F_PLAN_STATEMENT, "We'll phase out the paper forms over the summer.", "policy_state"),
    # a lead that adds nothing of its own
    (d.F_LEAD_STRIP, "Just to be safe, no discounts on the Hartley order.", "constraint"),
    (d.F_LEAD_STRIP, "No matter what, never reply to the spam tickets.", "constraint"),
    (d.F_LEAD_STRIP, "Quick note from the board meeting: the bot may now waive the setup fee on annual plans.",
     "permission"),
    # approvals
    # ("You've got my OK to ..." is read by the base permission rule since round 9 fixed its dead
    # "you 've got" branch, so the round-8 form is tested with "Here's my go-ahead")
    (d.F_APPROVAL_R8, "Here's my go-ahead to reissue the voucher for order 3391.", "approval"),
    (d.F_APPROVAL_R8, "Go ahead with the replacement headset for Omar, it's approved.", "approval"),
    (d.F_APPROVAL_R8, "Consider this formal approval to extend the trial for Brightline.", "approval"),
    (d.F_APPROVAL_R8, "Fine by me, send the updated quote to the school.", "approval"),
    # evidence
    (d.F_EVIDENCE_R8, "According to the gate camera, the van arrived at 14:05.", "evidence"),
    (d.F_EVIDENCE_R8, "The site foreman confirmed the scaffolding came down on 3 May.", "evidence"),
    (d.F_EVIDENCE_R8, "The claimant's sick note runs from 2 to 16 March.", "evidence"),
    # decisions
    (d.F_DECISION_R8, "It's been agreed that the Leeds office closes early on Fridays in August.", "policy_state"),
    (d.F_DECISION_R8, "The finance committee agreed that mileage is paid at 45p.", "policy_state"),
    (d.F_DECISION_R8, "So that's settled, the quiz night moves to the 14th.", "policy_state"),
    # restrictions
    (d.F_RESTRICT_R8, "Spare parts come from Halden Supply and nowhere else.", "constraint"),
    (d.F_RESTRICT_R8, "Only nurses on the ward rota may change the medication chart.", "constraint"),
    (d.F_RESTRICT_R8, "We only accept returns within 14 days.", "constraint"),
    # permissions
    (d.F_PERMIT_R8, "I don't mind you rescheduling my Friday calls when needed.", "permission"),
    (d.F_PERMIT_R8, "It's perfectly fine to spend up to 80 pounds on the team lunch.", "permission"),
    (d.F_PERMIT_R8, "Members on the family plan are allowed three free guest passes a month.", "permission"),
    (d.F_PERMIT_R8, "If a booking clashes with a holiday, you can move it to the next weekday.", "permission"),
    # deadlines
    (d.F_DEADLINE_R8, "Deadline for the grant report: Friday the 9th, noon.", "deadline"),
    (d.F_DEADLINE_R8, "The printer wants the final artwork by 3 March at the latest.", "deadline"),
    (d.F_DEADLINE_R8, "We've got until 5pm Tuesday to file the appeal.", "deadline"),
    # prerequisites
    (d.F_PREREQ_R8, "Only after the survey is back can you book the builders.", "prerequisite"),
    (d.F_PREREQ_R8, "Ahead of any server reboot, copy it to the NAS.", "prerequisite"),
    (d.F_PREREQ_R8, "The patient's weight must be recorded before the scan starts.", "prerequisite"),
    (d.F_PREREQ_R8, "Before wiring more than £10,000, call the bank to confirm the payee.", "prerequisite"),
    # prohibitions
    (d.F_PROHIBIT_R8, "Refrain from commenting on the merger.", "constraint"),
    (d.F_PROHIBIT_R8, "Sale items are non-refundable, don't refund them.", "constraint"),
    # a standing request as a question
    (d.F_POLITE_HABIT, "Could you make a habit of copying Jonas on supplier emails?", "obligation"),
]


@pytest.mark.parametrize("family, text, kind", STANDING)
def test_each_round8_class_is_protected_and_only_with_its_family(mf, family, text, kind):
    _say(mf, text)
    assert _active(mf) == {text: kind}
    conv = mf.conversation("c", namespace="n")
    assert any(text in m["content"] for m in conv.context(budget=2000).messages if m["role"] == "system")
    with families.off(with_later(family)):
        _say(mf, text, cid="off")
        assert _active(mf, "off") != {text: kind}


NEAR_MISSES = [
    "Take photos of the sunsets, they're gorgeous!",
    "Read more books and try different genres.",
    "Change starts small, so keep at it.",
    "We're planning to visit my aunt in Cork next month.",
    "Our plan for the weekend is sleep and more sleep!",
    "To be clear, I loved the movie.",
    "Whatever happens, we'll always have the memories.",
    "Feel free to bring snacks to the picnic!",
    "The news says landlords must give two months' notice.",
    "Back when I worked at the bank they made us log off by 6pm.",
    "My friend's boss makes him submit reports by 8am, which seems mad.",
    "Never mind the rain, we had a great time.",
    "Only once did I see a whale up close.",
    "My cousin only eats pasta and nothing else.",
    "The gym wants a photo for the membership card.",
    "My sister confirmed she is coming on the 12th.",
    # one-off requests with a plural object: one batch, a task, no standing instruction
    "Add eggs to the shopping list.",
    "Check flights to Rome for next week.",
    "Print labels for the parcels.",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_small_talk_in_the_round8_shapes_makes_no_record(mf, text):
    _say(mf, text)
    assert _states(mf) == {}


def test_a_speaker_introduction_is_read_with_what_follows(mf):
    text = "Team lead here. The overtime claim for ticket 5521 is approved."
    _say(mf, text)
    assert _active(mf) == {text: "approval"}
    with families.off([d.F_SPEAKER_INTRO]):
        _say(mf, text, cid="off")
        assert text not in _active(mf, "off")
    # a signed-off line before the action it grants is one record too
    text = "Signed off. The spring newsletter can go out on Tuesday."
    _say(mf, text, cid="c2")
    assert _active(mf, "c2") == {text: "approval"}


def test_a_list_under_a_standing_lead_is_one_record(mf):
    text = "Checks for every new starter from now on:\n- copy their passport\n- add them to payroll"
    _say(mf, text)
    assert list(_active(mf)) == [text]
    with families.off([d.F_LIST_UNDER_LEAD]):
        _say(mf, text, cid="off")
        assert list(_active(mf, "off")) == ["Checks for every new starter from now on:"]
    # a list under a lead that states nothing standing is no record
    _say(mf, "Shopping list for the party:\n- crisps\n- lemonade", cid="c2")
    assert _states(mf, "c2") == {}


def test_a_round8_reset_supersedes_the_plan_in_force(mf):
    old = "The plan is to repaint the hall in May."
    new = "Disregard the May repaint; the hall gets new wallpaper in June."
    _say(mf, old, "Only use low-odour paint.", new)
    assert _states(mf) == {old: "superseded", "Only use low-odour paint.": "active", new: "active"}
    with families.off([d.F_RESET_R8]):
        _say(mf, old, new, cid="off")
        assert _states(mf, "off")[old] == "active"
    plan = "Plan for the launch: a soft open on the 3rd, press on the 10th."
    _say(mf, plan, "Completely different plan: one big opening on the 12th.", cid="c2")
    assert _states(mf, "c2")[plan] == "superseded"
    with families.off([d.F_RESET_R8]):
        _say(mf, plan, "Completely different plan: one big opening on the 12th.", cid="off2")
        assert _states(mf, "off2")[plan] == "active"


def test_a_discarded_rule_is_revoked_not_reset(mf):
    # a discard verb naming a rule or a limit is a revocation: the plan stays
    _say(mf, "The plan is to post twice a week.", "Keep every post under 200 words.", "Forget the 200-word cap, longer posts are fine.")
    states = _states(mf)
    assert states["The plan is to post twice a week."] == "active"


def test_round8_revocations_withdraw_only_the_named_rule(mf):
    _say(mf, "Never book me on night buses.", "Always get me an aisle seat.",
         "I've changed my mind about night buses, they're fine.")
    assert _states(mf) == {"Never book me on night buses.": "revoked", "Always get me an aisle seat.": "active"}
    _say(mf, "Never approve travel claims over $300.", "Attach receipts to every claim.",
         "That $300 travel cap no longer applies.", cid="c2")
    assert _states(mf, "c2")["Never approve travel claims over $300."] == "revoked"
    assert _states(mf, "c2")["Attach receipts to every claim."] == "active"
    _say(mf, "Only quote prices from the Basic range.", "Always greet customers by name.",
         "You're no longer limited to the Basic range; quote any product.", cid="c3")
    assert _states(mf, "c3")["Only quote prices from the Basic range."] == "revoked"
    with families.off([d.F_REVOKE_R8]):
        _say(mf, "Never approve travel claims over $300.", "That $300 travel cap no longer applies.", cid="off")
        assert _states(mf, "off")["Never approve travel claims over $300."] == "active"


def test_a_no_rule_lifts_the_prohibition_not_a_duty_sharing_a_word(mf):
    # each record shares one word with the rule's name ("emails", "8pm"): the prohibition is meant
    ban, duty = "Don't message the client after 8pm.", "Always log the email outcome."
    _say(mf, duty, ban, "Cancel the no-emails-after-8pm rule.")
    assert _states(mf) == {duty: "active", ban: "revoked"}
    with families.off([d.F_REVOKE_R8]):
        _say(mf, duty, ban, "Cancel the no-emails-after-8pm rule.", cid="off")
        assert _states(mf, "off")[duty] == "revoked"


def test_a_report_of_the_event_releases_a_one_event_prerequisite(mf):
    rec = "The safety inspection has to be completed before the reopening."
    _say(mf, rec, "Keep the visitor log in the lobby.", "The safety inspection finished this morning with no issues.")
    assert _states(mf) == {rec: "satisfied", "Keep the visitor log in the lobby.": "active"}
    with families.off([d.F_COMPLETION_R8]):
        _say(mf, rec, "The safety inspection finished this morning with no issues.", cid="off")
        assert _states(mf, "off")[rec] == "active"
    # a condition before every such action stands: one report releases nothing
    standing = "Notify the landlord before any contractor visit."
    _say(mf, standing, "The landlord notified us about the contractor visit.", cid="c2")
    assert _states(mf, "c2")[standing] == "active"


# -- attribute slots --------------------------------------------------------------------------------
ATTRIBUTES = [
    (a.F_ABBREVIATION, ["My favourite novelist is Iain M. Banks."], {"user.favourite.novelist": "Iain M. Banks"}),
    (a.F_ABBREVIATION, ["My favourite cologne is Acqua No. 9."], {"user.favourite.cologne": "Acqua No. 9"}),
    (a.F_TITLE_VALUE, ["My favourite play is No Exit."], {"user.favourite.play": "No Exit"}),
    (a.F_LABEL, ["Fave biscuit: custard creams."], {"user.favourite.biscuit": "custard creams"}),
    (a.F_THATS_MY, ["Honestly Lisbon, that's my favourite city, the light is unreal."], {"user.favourite.city": "Lisbon"}),
    (a.F_QUALIFIER_MORE, ["Blur have been my favourite band since school."], {"user.favourite.band": "Blur"}),
    (a.F_SWITCH_R8, ["Just changed my energy tariff to Octopus Flux."], {"user.preferred.energy_tariff": "Octopus Flux"}),
    (a.F_SWITCH_R8, ["My preferred music app is Spotify.", "I've moved over from Spotify to Tidal."],
     {"user.preferred.music_app": "Tidal"}),
    (a.F_SWITCH_R8, ["I switched phone network, it's Giffgaff now."], {"user.preferred.phone_network": "Giffgaff"}),
    (a.F_SWITCH_R8, ["My go-to browser is Opera.", "I switched to Vivaldi, Opera kept crashing."],
     {"user.preferred.browser": "Vivaldi"}),
    (a.F_TIME_ADJUNCT, ["I switched my bank to Monzo in January."], {"user.preferred.bank": "Monzo"}),
    (a.F_NO_LONGER_R8, ["My go-to cereal is Weetabix.", "I've given up Weetabix for good."], {}),
    (a.F_NO_LONGER_R8, ["My favourite team is Leyton Orient.", "I'm no longer a Leyton Orient fan."], {}),
    (a.F_NO_LONGER_R8, ["My preferred cab app is Bolt.", "I don't use Bolt these days."], {}),
]


def _facts(mf, ns, turns):
    conv = mf.conversation(f"a-{ns}", namespace=ns)
    for text in turns:
        conv.append({"role": "user", "content": text})
        mf.consolidate(ns, include_turns=True)
    return {r.key: r.content for r in mf.memory.list(ns, "semantic")
            if r.key and r.key.startswith(("user.favourite.", "user.preferred."))}


@pytest.mark.parametrize("family, turns, facts", ATTRIBUTES)
def test_each_round8_attribute_class_keeps_one_value_and_only_with_its_family(mf, family, turns, facts):
    assert _facts(mf, "on", turns) == facts
    # the round-12 families (from fresh8's misses) read some of these sentences too ("tbh" is a texting
    # abbreviation; a bare name after a switch fills the preferred slot just talked about), so "this
    # family off -> not kept" holds with them off as well; so do the round-14 ones (from fresh10's misses:
    # "Just changed my energy tariff ..." is a statement with its subject dropped)
    with families.off([family, *families.motivated_by("fresh8"), *families.motivated_by("fresh10")]):
        assert _facts(mf, "off", turns) != facts


@pytest.mark.parametrize("turns", [
    ["I've given up on running."],
    ["My brother switched his bank to Monzo in May."],
    ["I switched to decaf, coffee kept me up."],
    ["Fave memory: that trip to Skye, hands down?"],
    ["I moved from Leeds to York last year."],
])
def test_round8_attribute_near_misses_make_no_fact(mf, turns):
    assert _facts(mf, "nm", turns) == {}


def test_every_round8_family_names_fresh4_and_only_it():
    names = ["generic_imperative", "plan_statement", "lead_strip", "speaker_intro", "approval_forms_r8",
             "evidence_forms_r8", "decision_forms_r8", "restriction_forms_r8", "permission_forms_r8",
             "deadline_forms_r8", "prerequisite_forms_r8", "reset_forms_r8", "revoke_forms_r8", "completion_forms_r8",
             "reported_deontic", "prohibition_forms_r8", "polite_habit_request", "attr_abbreviation_dots",
             "attr_title_case_value", "attr_label", "attr_thats_my", "attr_qualifier_more", "attr_switch_forms_r8",
             "attr_time_adjunct", "attr_no_longer_forms_r8", "list_under_lead"]
    for name in names:
        assert families.REGISTRY[name] == {"fresh4"}, name
    assert set(families.motivated_only_by("fresh4")) == set(names)
