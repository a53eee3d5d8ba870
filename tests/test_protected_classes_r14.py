"""The round-14 phrasing classes of issue 20, point 10, each through a real MemFold conversation.

``fresh10`` (written blind in round 13, measured once: 71.9% of its standing instructions with the
rules alone) was read for the *class* of each miss; each class is one rule family registered with
``fresh10`` in ``memfold.memory.families`` (:mod:`memfold.window.directives_r14`). One case per
family at least: new sentences written here (not items of any phrasing set) appended as user turns
to a real database file, the record or withdrawal there afterwards, and the same turns giving
something else with that family off; and, per family, a sentence in the same shape that must make
no record (small talk, the past, a question, a one-off).
"""

from __future__ import annotations

import pytest

from memfold.memory import families
from memfold.window import directives_r14 as r14
from memfold.window import directives_r15 as r15
from memfold.window import directives_r16 as r16
from phrasing_support import _active, _say, _states, check_withdrawal, mf  # noqa: F401 (mf: a fixture)


#: (family, message, kind of the record it makes; the record is the message)
STANDING = [
    (r14.F_SPOKEN_R14, "so um like basically you gotta log every refund in the tracker okay", "obligation"),
    (r14.F_LEARNER_R14, "Please to answer the tickets only in Spanish, not in weekend.", "constraint"),
    (r14.F_FORMAL_R14, "The Supplier shall, in respect of each order, provide a tracking number within two days.",
     "obligation"),
    (r14.F_PERMIT_R14, "You're now cleared to waive late fees up to £30 for regular clients.", "permission"),
    (r14.F_APPROVAL_R14, "Fine by me to give Priya edit rights on the pricing sheet.", "approval"),
    (r14.F_APPROVAL_R14, "Consent given for the recordings of the webinar to be shared with partners.", "approval"),
    (r14.F_EVIDENCE_R14, "The thermometer reads 4.5 degrees in fridge 2.", "evidence"),
    (r14.F_DECISION_R14, "Our choice is the Lenovo X1, 32 GB, black.", "policy_state"),
    (r14.F_LIMIT_R14, "max 2 discount codes per customer per month", "constraint"),
    (r14.F_STANDING_R14, "Refunds over £200 need two signatures.", "prerequisite"),
    (r14.F_STANDING_R14, "Renew the SSL certificates every 60 days.", "obligation"),
    (r14.F_POLITE_R14, "I'd appreciate it if you only quoted prices in euros in customer emails.", "constraint"),
    (r14.F_DEADLINE_R14, "release freeze 17:00 CET thu", "deadline"),
    (r14.F_ORDER_R14, "Publication of the results is contingent on the ethics board signing off.", "prerequisite"),
]


@pytest.mark.parametrize("family, text, kind", STANDING)
def test_each_round14_class_is_protected_and_only_with_its_family(mf, family, text, kind):
    _say(mf, text)
    assert _active(mf) == {text: kind}
    with families.off([family, *families.motivated_by("fresh11")]):  # round 15 reads some of these shapes too
        _say(mf, text, cid="off")
        assert _active(mf, "off") != {text: kind}


def test_an_emphatic_tail_is_one_record_with_the_sentence_before_it(mf):
    text = "no card numbers in the ticket notes. no exceptions."
    _say(mf, text)
    assert _active(mf) == {text: "constraint"}
    with families.off([r14.F_TAIL_R14]):
        _say(mf, text, cid="off")
        assert text not in _active(mf, "off")


def test_a_list_of_rules_under_a_header_is_one_record(mf):
    text = "House rules for the shared inbox:\n- reply within 4 hours\n- only the duty agent closes tickets"
    _say(mf, text)
    assert _active(mf) == {text: "constraint"}
    with families.off([r14.F_LIST_R14, r15.F_LABEL_R15, r16.F_AUTHORITY_R16]):  # rounds 15 and 16 read "House rules ...:" as a lead too
        _say(mf, text, cid="off")
        assert text not in _active(mf, "off")


def test_an_instruction_buried_in_a_long_sentence_is_read(mf):
    text = ("We had a rough quarter with disputes and the auditors were not impressed, which is why I'm saying "
            "you must always attach the signed delivery note to every invoice, whatever the client says.")
    _say(mf, text)
    assert text in _active(mf)
    with families.off([r14.F_CLAUSE_R14]):
        _say(mf, text, cid="off")
        assert text not in _active(mf, "off")


#: (family, a sentence in the family's shape that is no standing instruction)
NEAR = [
    (r14.F_SPOKEN_R14, "um yeah so like we went to the beach and it was basically perfect"),
    (r14.F_LEARNER_R14, "Please to meet you, I am new in the team."),
    (r14.F_FORMAL_R14, "The bakery shall be missed by everyone on our street."),
    (r14.F_PERMIT_R14, "You're welcome to come over for dinner whenever."),
    (r14.F_APPROVAL_R14, "Fine by me to watch a film tonight?"),
    (r14.F_EVIDENCE_R14, "The photos show how much fun we had at the lake."),
    (r14.F_DECISION_R14, "Our choice is never easy when it comes to holidays, is it?"),
    (r14.F_LIMIT_R14, "no worries in the slightest"),
    (r14.F_STANDING_R14, "Every summer needs a good book."),
    (r14.F_POLITE_R14, "It would be great if you visited us in spring."),
    (r14.F_DEADLINE_R14, "code freeze 17:00 was brutal last fri"),
    (r14.F_ORDER_R14, "Happiness is conditional on good sleep, I think."),
    (r14.F_REPORTED_R14, "Quote from my gran's cookbook: 'Never rush the dough.'"),
]


@pytest.mark.parametrize("family, text", NEAR)
def test_small_talk_in_the_round14_shapes_makes_no_record(mf, family, text):
    _say(mf, text)
    assert _states(mf) == {}


@pytest.mark.parametrize("text", [
    "From the onboarding handbook: 'Staff must badge in at every door.'",
    "I wonder if the manager has approved my leave for March.",
    "Joke of the day: always borrow money from a pessimist, they never expect it back.",
])
def test_a_quoted_or_wondered_rule_makes_no_record_and_only_with_its_veto(mf, text):
    _say(mf, text)
    assert _states(mf) == {}
    with families.off([r14.F_REPORTED_R14]):
        _say(mf, text, cid="off")
        assert _states(mf, "off") != {}


@pytest.mark.parametrize("rule, other, withdrawal", [
    ("Always collect a signed form before lending equipment.", "Always log loans in the tracker.",
     "With effect from today, the requirement to collect a signed form before lending equipment is rescinded."),
    ("Every release needs a changelog entry.", "Never deploy on Sundays.",
     "Releases dont need a changelog entry anymore, that rule is retired."),
    ("Always keep paper receipts for expenses.", "Always offer a high chair for toddlers.",
     "no more paper receipts needed, everything is scanned now"),
])
def test_round14_withdrawals_end_only_the_named_rule(mf, rule, other, withdrawal):
    check_withdrawal(mf, [r14.F_REVOKE_R14], rule, other, withdrawal)


@pytest.mark.parametrize("reset", [
    "Everything agreed so far about the launch is void; the new plan is a single event in Cardiff on 3 May.",
    "Please bin the whole launch plan. What we'll do instead is one webinar on 12 May.",
])
def test_a_round14_reset_supersedes_the_plan_in_force(mf, reset):
    plan = "The plan is two launch events, York in May and Hull in June."
    _say(mf, plan, "Always copy Dana on supplier emails.", reset)
    states = _states(mf)
    assert states[plan] == "superseded" and states["Always copy Dana on supplier emails."] == "active"
    with families.off([r14.F_RESET_R14, r15.F_RESET_R15]):  # round 15's reset forms read "bin the whole ... plan" too
        _say(mf, plan, reset, cid="off")
        assert _states(mf, "off")[plan] != "superseded"  # left active, or revoked with nothing in its place


def test_a_reset_form_naming_a_rule_is_a_withdrawal_not_a_reset(mf):
    plan = "The plan is two launch events, York in May and Hull in June."
    _say(mf, plan, "Scrap the dress-code requirement, we'll be outdoors.")
    assert _states(mf)[plan] == "active"


def test_the_past_subjunctive_is_read_in_the_base_form():
    assert r14.polite_r14("It would be really helpful if you refrained from calling after 8pm.") == \
        "Refrain from calling after 8pm."
    assert r14.polite_r14("I'd appreciate it if you only used the shared drive.") == "Only use the shared drive."
    assert [r14._base_verb(w) for w in ("stopped", "included", "copied", "kept")] == ["stop", "include", "copy", "keep"]


def test_every_round14_family_is_registered_with_fresh10_only():
    # the protected-channel families of round 14 (the attribute slots' round-14 families, named
    # attr_*_r14, live in the same registry and are checked in tests/test_round14_qa.py)
    names = [n for n in families.REGISTRY if n.endswith("_r14") and not n.startswith("attr_")]
    assert len(names) == 19
    assert all(families.REGISTRY[n] == {"fresh10"} for n in names)
    assert set(names) <= set(families.motivated_only_by("fresh10"))
