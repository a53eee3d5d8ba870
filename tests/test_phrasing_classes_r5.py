"""The round-5 phrasing classes of issue 20, points 10 and 11, each through a real MemFold conversation.

One case per rule family added in round 5 (``memfold.memory.families``): a sentence of its class
(new sentences, not items of the phrasing sets) appended as a user turn to a real database file,
the protected record active afterwards, and the same turn making no record with that family turned
off (so each case shows what the family adds); and a near miss in the same shape that must make
no record. The attribute families are checked the same way through the consolidation pass.
"""

from __future__ import annotations

import pytest

import memfold
from memfold.consolidation.extractors import attributes
from memfold.memory import families
from memfold.window import directives as d
from phrasing_support import _active, _say, _states, mf, with_later  # noqa: F401 (mf: a fixture)


#: (family, sentence, kind of the record it makes)
STANDING = [
    (d.F_TEXTING, "pls always attach the invoice number to ur replies", "constraint"),
    (d.F_ROLE_SUBJECT, "The assistant must never quote prices in dollars.", "constraint"),
    ((d.F_ROLE_SUBJECT, d.F_PERMIT_R5, d.F_AGENT_NOUN), "Operators may waive the booking fee for returning guests.", "permission"),
    (d.F_PASSIVE_DEONTIC, "Two-factor login for the admin portal is mandatory.", "obligation"),
    (d.F_PASSIVE_DEONTIC, "Sharing customer addresses with third parties is strictly prohibited.", "constraint"),
    (d.F_POLITE_QUESTION, "Could you always put the ticket number in the subject line?", "obligation"),
    (d.F_LEAD_BARE_VERB, "When a parcel goes missing, open a claim with the courier.", "obligation"),
    # round 8 reads some round-5 sentences too (its lead prerequisites, rule labels before a colon,
    # sources before a comma): those families are off beside the round-5 one
    ((d.F_LEAD_BARE_VERB, d.F_PREREQ_R8), "Before renewing a contract, check that the supplier's insurance is current.",
     "prerequisite"),
    ((d.F_RULE_LABEL, d.F_LEAD_STRIP), "House rule: label every invoice with the client code.", "obligation"),
    (d.F_QUANT_AGENT, "Every PR you open needs a screenshot.", "obligation"),
    (d.F_RESTRICT_R5, "At most two drinks each at the bar.", "constraint"),
    (d.F_RESTRICT_R5, "Confine the experiments to the sandbox cluster.", "constraint"),
    (d.F_EMPHATIC_NO, "No ferries for me, I get seasick.", "constraint"),
    (d.F_PERMIT_R5, "I'm happy for you to rebook my dentist appointments.", "permission"),
    (d.F_DEADLINE_R5, "The early-bird rate expires at midnight on Friday, so book before then.", "deadline"),
    (d.F_DEADLINE_R5, "We have until Monday to answer the auditors.", "deadline"),
    (d.F_PREREQ_R5, "Deployment is blocked until the load test passes.", "prerequisite"),
    (d.F_PREREQ_R5, "Without a signed waiver, do not let anyone on the climbing wall.", "prerequisite"),
    (d.F_APPROVAL_R5, "The landlord has approved the sublet.", "approval"),
    (d.F_APPROVAL_R5, "Sign-off received from the board for the new logo.", "approval"),
    ((d.F_EVIDENCE_R5, d.F_EVIDENCE_R8), "Per the courier's email, the parcel left Leeds at 9:40.", "evidence"),
    (d.F_EVIDENCE_R5, "I verified that the serial number matches the delivery note.", "evidence"),
    (d.F_EVIDENCE_R5, "The claim reference for the flood damage is HX-20931.", "evidence"),
    (d.F_DECISION_R5, "Resolved: we keep the old company name.", "policy_state"),
    (d.F_DECISION_R5, "The committee picked the harbour venue over the castle.", "policy_state"),
    # from the second round-5 own set (r5own2)
    (d.F_PLURALS, "It's fine for you to reschedule the deliveries when I'm away.", "permission"),
    (d.F_QUANT_PASSIVE, "All hard hats are to be returned to the site office.", "obligation"),
    (d.F_QUANT_PASSIVE, "In case the alarm goes off, phone the security desk.", "obligation"),
    (d.F_AGENT_NOUN, "Cleaners are allowed to use the staff kitchen after hours.", "permission"),
    (d.F_DECISION_NP, "We've decided to rent a minibus for the choir.", "policy_state"),
    (d.F_DECISION_NP, "We're going with fortnightly check-ins for the volunteers.", "policy_state"),
]


@pytest.mark.parametrize("family, text, kind", STANDING)
def test_each_round5_class_is_protected_and_only_with_its_family(mf, family, text, kind):
    _say(mf, text)
    assert _active(mf) == {text: kind}
    # the record is in every compiled context, word for word
    conv = mf.conversation("c", namespace="n")
    assert any(text in m["content"] for m in conv.context(budget=2000).messages if m["role"] == "system")
    with families.off(with_later(*([family] if isinstance(family, str) else family))):
        _say(mf, text, cid="off")
        assert _active(mf, "off") == {}


NEAR_MISSES = [
    "Staff must have been exhausted after the festival.",
    "Taking initiative is a must if you wanna achieve your goals.",
    "Could you always be this cheerful?",
    "If you're ever in Leeds, visit the market.",
    "House rules at my gran's: shoes off at the door.",
    "At least two of my friends are coming to the party.",
    "No way, that's amazing!",
    "I'm happy for you to finally have a break!",
    "My gym membership expires next month, sadly.",
    "The road was blocked until noon yesterday.",
    "My mum approved the new haircut.",
    "Per my mum's advice, I drink more water now.",
    "Verdict: the movie was amazing.",
    "I need a total reset after this week, honestly.",
    "My brother is not allowed to drive after dark.",
    "Approved or not, the trip was worth it.",
    "Make sure you try the pastries if you visit!",
    "lol my neighbour never answers the door before noon",
    "The picture shows how tiny the puppy was back then.",
    "Feel free to bring the kids to the picnic!",
    "My grandparents are allowed to visit on Sundays now.",
    "We've decided to adopt a kitten!",
    "We're going with friends to the lake.",
    "We'll see the castle on Saturday.",
    "My sister accepted the job offer in Leeds.",
    "the gate code is 5523 keep it",  # a code stated is no evidence to show in every context
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_small_talk_in_the_round5_shapes_makes_no_record(mf, text):
    _say(mf, text)
    assert _states(mf) == {}


def test_a_round5_reset_supersedes_the_decision_in_force(mf):
    old = "The plan is to print the brochures in-house."
    # (with a colon, "Total reset: ..." is read by the base "reset:" phrase since round 9 fixed it)
    _say(mf, old, "Total reset, we outsource the brochures to a print shop.")
    states = _states(mf)
    assert states[old] == "superseded"
    [new] = mf.protected.active_for("c")
    assert "print shop" in new.text and new.kind == "policy_state"
    with families.off([d.F_RESET_R5]):
        _say(mf, old, "Total reset, we outsource the brochures to a print shop.", cid="off")
        assert _states(mf, "off")[old] == "active"


def test_reset_phrases_that_run_on_and_trailing_instead(mf):
    _say(mf, "We've decided to hold the launch at the office.",
         "Forget everything I said so far; the launch is at the museum.")
    assert _states(mf)["We've decided to hold the launch at the office."] == "superseded"
    _say(mf, "We'll send the invoices on Mondays.", "Actually, let's send the invoices on Fridays instead.", cid="c2")
    assert _states(mf, "c2")["We'll send the invoices on Mondays."] == "superseded"


def test_round5_revocations_withdraw_only_the_named_rule(mf):
    _say(mf, "Never offer refunds over $200.", "Always thank the customer.", "The $200 refund rule is rescinded.")
    assert _states(mf) == {"Never offer refunds over $200.": "revoked", "Always thank the customer.": "active"}
    _say(mf, "Never use the loaner laptops.", "Always lock the cabinet.", "Cancel the no-loaner-laptops rule.", cid="c2")
    assert _states(mf, "c2")["Never use the loaner laptops."] == "revoked"
    _say(mf, "Always print a copy of each receipt.", "Never email receipts.", "Stop printing copies of the receipts.",
         cid="c3")
    assert _states(mf, "c3")["Always print a copy of each receipt."] == "revoked"
    assert _states(mf, "c3")["Never email receipts."] == "active"
    with families.off(with_later(d.F_REVOKE_R5)):
        _say(mf, "Never offer refunds over $200.", "The $200 refund rule is rescinded.", cid="off")
        assert _states(mf, "off")["Never offer refunds over $200."] == "active"


def test_a_withdrawal_that_names_nothing_standing_changes_nothing(mf):
    _say(mf, "Never offer refunds over $200.", "The parking restriction on my street is lifted.")
    assert _states(mf) == {"Never offer refunds over $200.": "active"}


def test_completions_release_waiting_records_and_one_off_deadlines(mf):
    _say(mf, "Hold the invoice until the purchase order is signed.", "Always attach the timesheet.",
         "The purchase order is signed, send the invoice.")
    assert _states(mf) == {"Hold the invoice until the purchase order is signed.": "satisfied",
                           "Always attach the timesheet.": "active"}
    _say(mf, "The expense report is due by Friday.", "I've filed the expense report.", cid="c2")
    assert _states(mf, "c2") == {"The expense report is due by Friday.": "satisfied"}
    _say(mf, "Before paying the plumber, get the gas safety certificate.",
         "We have the gas safety certificate in hand, pay the plumber.", cid="c3")
    assert _states(mf, "c3")["Before paying the plumber, get the gas safety certificate."] == "satisfied"
    with families.off([d.F_COMPLETION]):
        _say(mf, "The expense report is due by Friday.", "I've filed the expense report.", cid="off")
        assert _states(mf, "off") == {"The expense report is due by Friday.": "active"}


def test_a_standing_instruction_or_a_denial_is_no_completion(mf):
    # a new rule sharing words with a waiting one does not release it
    _say(mf, "Don't change the account email until the customer's identity is verified.", "Always log account changes.")
    assert _states(mf)["Don't change the account email until the customer's identity is verified."] == "active"
    _say(mf, "The expense report is due by Friday.", "I haven't filed the expense report yet.", cid="c2")
    assert _states(mf, "c2") == {"The expense report is due by Friday.": "active"}
    # a standing prerequisite ("a contract": every one) is not released by one completion
    _say(mf, "Before renewing a contract, check that the supplier's insurance is current.",
         "The supplier's insurance is current, renew the contract.", cid="c3")
    assert _states(mf, "c3") == {"Before renewing a contract, check that the supplier's insurance is current.": "active"}


def test_a_bare_approval_and_the_action_after_it_are_one_record(mf):
    text = "Approved. Go ahead and reprint the damaged labels."
    _say(mf, text)
    assert _active(mf) == {text: "approval"}


def test_a_sign_off_after_a_question_request_belongs_to_it(mf):
    text = "Can you send the payroll file by EOD? Thx"
    _say(mf, text)
    assert _active(mf) == {text: "deadline"}


# -- attribute slots --------------------------------------------------------------------------------
ATTRIBUTES = [
    (attributes.F_USE_AS, ["These days I use Fastmail as my email provider."], {"user.preferred.email_provider": "Fastmail"}),
    (attributes.F_INSTEAD, ["My go-to cafe is Pret.", "These days I go to Gail's instead of Pret."],
     {"user.preferred.cafe": "Gail's"}),
    (attributes.F_STILL, ["My favourite sport is cricket.", "I no longer play cricket, but it's still my favourite sport."],
     {"user.favourite.sport": "cricket"}),
    (attributes.F_NOT_MY, ["My go-to supermarket is Lidl.", "lidl isn't my supermarket anymore"], {}),
    (attributes.F_NEG_FILLER, ["My favourite pizza is honestly not pineapple."], {}),
    (attributes.F_FILLER_MORE, ["My favourite band is, for the time being, Wet Leg."], {"user.favourite.band": "Wet Leg"}),
    (attributes.F_SWITCH_VERBS, ["I moved my pension to Vanguard."], {"user.preferred.pension": "Vanguard"}),
    (attributes.F_ARTICLE, ["My preferred laptop is a MacBook.", "I switched from MacBook to a ThinkPad."],
     {"user.preferred.laptop": "a ThinkPad"}),
]


def _facts(mf, ns, turns):
    conv = mf.conversation(f"a-{ns}", namespace=ns)
    for text in turns:
        conv.append({"role": "user", "content": text})
        mf.consolidate(ns, include_turns=True)
    return {r.key: r.content for r in mf.memory.list(ns, "semantic")
            if r.key and r.key.startswith(("user.favourite.", "user.preferred."))}


@pytest.mark.parametrize("family, turns, facts", ATTRIBUTES)
def test_each_round5_attribute_class_keeps_one_value_and_only_with_its_family(mf, family, turns, facts):
    assert _facts(mf, "on", turns) == facts
    with families.off([family]):
        assert _facts(mf, "off", turns) != facts


@pytest.mark.parametrize("turns", [
    ["My sister uses Fastmail as her email provider."],
    ["I switched seats with Sam at the concert."],
    ["Netflix isn't my thing anymore."],
    ["I moved my car to the other side of the street."],
])
def test_attribute_near_misses_make_no_fact(mf, turns):
    assert _facts(mf, "nm", turns) == {}


def test_every_round5_family_names_the_sets_it_was_written_from():
    names = ["texting_forms", "role_subject", "passive_deontic", "polite_standing_request", "lead_clause_imperative",
             "rule_label", "quantified_agent_output", "restriction_forms_r5", "emphatic_no", "permission_forms_r5",
             "deadline_forms_r5", "prerequisite_forms_r5", "approval_forms_r5", "evidence_forms_r5", "decision_forms_r5",
             "reset_forms_r5", "revoke_forms_r5", "completion_forms", "narrated_third_party", "attr_value_article",
             "attr_use_as", "attr_instead_of", "attr_still_favourite", "attr_not_my_anymore",
             "attr_negation_after_filler", "attr_filler_more", "attr_switch_verbs", "task_noun_plurals",
             "quantified_passive_duty", "agent_noun_subject", "decision_bare_np"]
    for name in names:
        assert families.REGISTRY[name] and families.REGISTRY[name] <= {"fresh3", "r5own", "r5own2"}, name
    assert set(families.motivated_only_by("fresh3")) >= {"texting_forms", "rule_label", "emphatic_no"}
    # fresh4 (blind in round 5) is tuned on since round 8 (tests/test_phrasing_classes_r8.py), never by a round-5 family
    assert not any("fresh4" in families.REGISTRY[name] for name in names)
