"""The round-13 phrasing classes of issue 20, point 10, each through a real MemFold conversation.

``fresh9`` (written blind in round 12, measured once: 72.5% of its standing instructions with the
rules alone) was read for the *class* of each miss; each class is one rule family registered with
``fresh9`` in ``memfold.memory.families`` (:mod:`memfold.window.directives_r13`). One case per
family at least: new sentences written here (not items of any phrasing set) appended as user turns
to a real database file, the record or withdrawal there afterwards, and the same turns giving
something else with that family off; and, for the vetoes, sentences in the same shapes that make
a record with the family off and none with it on.
"""

from __future__ import annotations

import pytest

from memfold.memory import families
from memfold.window import directives_r13 as r13
from phrasing_support import _active, _say, _states, check_withdrawal, mf  # noqa: F401 (mf: a fixture)


#: (family, sentence, kind of the record it makes)
STANDING = [
    (r13.F_MANNER_R13, "Bill wholesale accounts in EUR.", "obligation"),
    (r13.F_MANNER_R13, "Post outage updates in #status.", "obligation"),
    (r13.F_MANNER_R13, "Send invoices from accounts@brightmoor.example.", "obligation"),
    (r13.F_MANNER_R13, "Offer gift wrapping on request.", "obligation"),
    (r13.F_MANNER_R13, "Reconcile the petty cash with the ledger every Friday.", "obligation"),
    (r13.F_EVIDENCE_R13, "Sentry shows 43 crashes on the checkout page since Monday.", "evidence"),
    (r13.F_EVIDENCE_R13, "Looking at the order history, the customer has returned 4 items since March.", "evidence"),
    (r13.F_APPROVAL_R13, "Sure, go ahead with the refund for order 5523.", "approval"),
    (r13.F_APPROVAL_R13, "I'm happy to approve the Lisbon offsite budget.", "approval"),
    (r13.F_APPROVAL_R13, "Yes, book the conference hotel, up to €900.", "approval"),
    (r13.F_APPROVAL_R13, "I'll allow the early check-in for room 12 this once.", "approval"),
    (r13.F_KINDS_R13, "Happy for you to reissue vouchers when a customer loses the email.", "permission"),
    (r13.F_KINDS_R13, "The refund stays pending until the warehouse scans the return.", "prerequisite"),
    (r13.F_KINDS_R13, "Deploying to production requires two sign-offs.", "prerequisite"),
    (r13.F_KINDS_R13, "Due date for the grant report is friday", "deadline"),
    (r13.F_KINDS_R13, "The assistant isn't allowed to quote delivery dates.", "constraint"),
    (r13.F_LEAD_R13, "Standing order for you: reconcile the card payments every Friday.", "obligation"),
    (r13.F_LEAD_R13, "It would be great if you could file the expense receipts every Friday.", "obligation"),
    (r13.F_LEAD_R13, "Never, I repeat, never forward the payroll file.", "constraint"),
    (r13.F_TYPO_R13, "allways confirm the delivery slot with the customer", "constraint"),
]


@pytest.mark.parametrize("family, text, kind", STANDING)
def test_each_round13_class_is_protected_and_only_with_its_family(mf, family, text, kind):
    _say(mf, text)
    assert _active(mf) == {text: kind}
    import memfold.window.directives_r16  # noqa: F401 (round 16's authority_lead_r16 reads "Standing order for you: ..." too)

    with families.off([family, *families.motivated_by("fresh12")]):
        _say(mf, text, cid="off")
        assert _active(mf, "off") != {text: kind}


#: another's rule, a reading, a question or an anecdote reported: a record only with the veto off
REPORTED = [
    "My neighbour said the bins were due out by 7am on Tuesdays.",
    "I read a post saying you should never reply to spam emails.",
    "The delivery driver told me to call back before 5pm.",
    "Our old landlord once approved a £20 repair with three forms.",
    "The gym email said 'do not bring outside food' so we ate in the car.",
    "Clients keep asking whether they have to pay a deposit for bookings.",
    "At my old job we could only book trains after 10am.",
]


@pytest.mark.parametrize("text", REPORTED)
def test_a_reported_rule_makes_no_record_and_only_with_its_veto(mf, text):
    _say(mf, text)
    assert _states(mf) == {}
    with families.off([r13.F_REPORTED_R13]):
        _say(mf, text, cid="off")
        assert _states(mf, "off") != {}


@pytest.mark.parametrize("text", [
    "Once approved, send the invoice to the client.",  # "once" opening a condition is no anecdote
])
def test_the_reported_veto_leaves_the_speakers_own_rules(mf, text):
    _say(mf, text)
    assert text in _active(mf)


@pytest.mark.parametrize("text", [
    "Send the invoice.",  # a one-off task: no manner of a kind of task
    "Add eggs to the list.",
    "Book a table for two tonight.",
    "Yeah, football is really important to me - I train every day to stay fit.",
    "The photo shows how much fun we had at the lake!",
    "We went for a walk in the end.",
])
def test_one_off_tasks_and_small_talk_in_the_round13_shapes_make_no_record(mf, text):
    _say(mf, text)
    assert _states(mf) == {}


def test_a_misspelt_rule_word_is_read_but_a_real_word_near_one_is_not():
    assert r13.fix_typos("plz allways ask, you shoud check, it's aprroved") == "plz always ask, you should check, it's approved"
    # inflections and real words one edit from a rule word are left as they are
    assert r13.fix_typos("It reminded me; she requires contact wherever he finishes") == \
        "It reminded me; she requires contact wherever he finishes"
    with families.off([r13.F_TYPO_R13]):
        assert r13.fix_typos("allways") == "allways"


@pytest.mark.parametrize("rule, other, withdrawal", [
    ("Always send me a weekly sales digest on Mondays.", "Never book flights before 8am.",
     "Please stop the weekly sales digests, I read the dashboard instead."),
    ("Answer only questions about shipping.", "Never promise delivery dates.",
     "You're not limited to shipping questions anymore."),
    ("Don't offer refunds on sale items.", "Always log calls in the CRM.",
     "We're reversing the no-refunds rule on sale items."),
    ("Don't book anything for me on Fridays.", "Always leave 10 minutes between calls.",
     "Fridays work for me now, so ignore what I said earlier about them."),
])
def test_round13_withdrawals_end_only_the_named_rule(mf, rule, other, withdrawal):
    check_withdrawal(mf, [r13.F_REVOKE_R13], rule, other, withdrawal)


@pytest.mark.parametrize("waiting, other, event", [
    ("Wait for the surveyor's report before booking the builders.", "Always pay by card.",
     "Surveyor's report received this morning."),
    ("Don't announce the sale until the landing page is live.", "Quote prices in euros.",
     "The landing page is live at shop.example/sale."),
])
def test_an_awaited_thing_reported_arrived_releases_the_waiting_record(mf, waiting, other, event):
    _say(mf, waiting, other, event)
    states = _states(mf)
    assert states[waiting] == "satisfied" and states[other] == "active"
    with families.off([r13.F_CONDITION_R13]):
        _say(mf, waiting, other, event, cid="off")
        assert _states(mf, "off")[waiting] == "active"


@pytest.mark.parametrize("reset", [
    "None of that stands anymore. The launch is now one event in Bristol on the 4th.",
    "All bets are off on the launch. We'll do one event in Bath on 2 May instead.",
    "We're tearing up that plan — the launch is one event in Leeds on 9 June.",
])
def test_a_round13_reset_supersedes_the_plan_in_force(mf, reset):
    plan = "The plan is two launch events, York in May and Hull in June."
    _say(mf, plan, "Always copy Dana on supplier emails.", reset)
    states = _states(mf)
    assert states[plan] == "superseded" and states["Always copy Dana on supplier emails."] == "active"
    with families.off([r13.F_RESET_R13]):
        _say(mf, plan, reset, cid="off")
        assert _states(mf, "off")[plan] == "active"


def test_every_round13_family_is_registered_with_fresh9_only():
    names = [n for n in families.REGISTRY if n.endswith("_r13")]
    assert len(names) == 10
    assert all(families.REGISTRY[n] == {"fresh9"} for n in names)
    assert set(names) <= set(families.motivated_only_by("fresh9"))
