"""The round-9 phrasing classes of issue 20, points 10 and 11, each through a real MemFold conversation.

``fresh5`` (written blind in round 8, measured once: 70.5% of its protected items, 77.4% of its
attribute facts) was read for the *class* of each miss; each class is one rule family registered
with ``fresh5`` in ``memfold.memory.families``. One case per family at least: a sentence of its
class (new sentences written here, not items of any phrasing set) appended as a user turn to a real
database file, the protected record (or fact, or withdrawal) there afterwards, and the same turns
giving something else with that family turned off; and near misses in the same shapes that must
make no record. The dead patterns of earlier rounds that round 9 found and fixed are tested last.
"""

from __future__ import annotations

import pytest

import memfold
from memfold.consolidation.extractors import attributes as a
from memfold.memory import families
from memfold.window import constraints as c
from memfold.window import directives as d
from phrasing_support import _active, _say, _states, check_withdrawal, mf, with_later  # noqa: F401 (mf: a fixture)


#: (family, sentence, kind of the record it makes)
STANDING = [
    (d.F_LEAD_R9, "Oh, and never renew the Hendry contract without asking.", "constraint"),
    (d.F_LEAD_R9, "For the Leeds office, just so we're clear, keep each order under £300.", "constraint"),
    (d.F_SO_TAIL, "The warehouse is closed on Sundays, so only offer collection for weekend orders.", "constraint"),
    (d.F_PROHIBIT_R9, "Never, ever share the admin login with contractors.", "constraint"),
    (d.F_PROHIBIT_R9, "don't ever auto-renew a subscription without a reminder email", "constraint"),
    (d.F_PROHIBIT_R9, "Don't let anyone book the van on Fridays.", "constraint"),
    (d.F_RESTRICT_R9, "Recommend only the courses on the approved list.", "constraint"),
    (d.F_PERMIT_R9, "Reception can now issue visitor badges without checking the list.", "permission"),
    (d.F_PERMIT_R9, "Store credit may be applied to sale items too.", "permission"),
    (d.F_DEADLINE_R9, "The last date for booking the team dinner is 12 November.", "deadline"),
    (d.F_PREREQ_R9, "The new laptop can't be handed out until IT has encrypted the disk.", "prerequisite"),
    (d.F_PREREQ_R9, "Keep the listing hidden until the photographer sends the pictures.", "prerequisite"),
    (d.F_PREREQ_R9, "Orders above £2,000 need my written approval.", "prerequisite"),
    (d.F_APPROVAL_R9, "Sure, order the replacement monitor, that's fine by me.", "approval"),
    (d.F_APPROVAL_R9, "That's a yes from me on renewing the cleaning contract.", "approval"),
    (d.F_EVIDENCE_R9, "The CCTV footage places the van outside at 22:15.", "evidence"),
    (d.F_EVIDENCE_R9, "The gas meter reading on Friday was 18532.", "evidence"),
    (d.F_EVIDENCE_R9, "Photos attached: the fence panel was broken on 9 May.", "evidence"),
    (d.F_DECISION_R9, "The board has opted to close the Bristol branch in spring.", "policy_state"),
    (d.F_DECISION_R9, "Upshot of the vendor call: we renew with Acme for two years.", "policy_state"),
    (d.F_DECISION_R9, "The chosen caterer for the launch is Green Fork.", "policy_state"),
    (d.F_PLAN_R9, "Here's the plan for the audit: inventory on Monday, interviews on Wednesday.", "policy_state"),
    (d.F_PLAN_R9, "Plan is we paint the bedrooms first and then redo the kitchen in March.", "policy_state"),
]


@pytest.mark.parametrize("family, text, kind", STANDING)
def test_each_round9_class_is_protected_and_only_with_its_family(mf, family, text, kind):
    _say(mf, text)
    assert _active(mf) == {text: kind}
    import memfold.window.directives_r16  # noqa: F401 (round 16's bare_rule_r16 reads "Don't let anyone ..." too)

    with families.off([family, *families.motivated_by("fresh12")]):
        _say(mf, text, cid="off")
        assert _active(mf, "off") != {text: kind}


NEAR_MISSES = [
    "Oh, and the film was great.",
    "It rained all day, so we stayed in and played cards.",
    "Never, ever again am I eating that much cake!",
    "Don't let anyone tell you you can't do it.",
    "My nephew eats only pasta and chips.",
    "My brother can now drive, which is terrifying.",
    "The kids can't go out until the rain stops, poor things.",
    "Sure, that's fine by me, whatever you think is best.",
    "The coach told the players they must run every morning.",
    "My boss approved my leave last month without a fuss.",
    "The plan was a barbecue, but it poured.",
    "Here's the thing: I never liked jazz.",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_small_talk_in_the_round9_shapes_makes_no_record(mf, text):
    _say(mf, text)
    assert _states(mf) == {}


def test_a_trailing_approval_is_read_with_the_action_before_it(mf):
    text = "Yes, book the 9:15 ferry for both of us. Approved."
    _say(mf, text)
    assert _active(mf) == {text: "approval"}
    with families.off([d.F_APPROVAL_R9]):
        _say(mf, text, cid="off")
        assert text not in _active(mf, "off")


def test_an_initial_inside_quotes_ends_no_sentence():
    text = "For the record, the parcel was signed for by 'J. Okafor' on 4 May."
    assert c.sentences(text) == [text]
    with families.off([d.F_INITIAL_QUOTED]):
        assert len(c.sentences(text)) == 2


@pytest.mark.parametrize("plan, reset", [
    ("The plan is to launch the shop in two phases, clothes in May and shoes in June.",
     "Rip up the launch plan. Everything goes live on 1 June."),
    ("Our plan is to drive to Cornwall on the Friday and back on Monday.",
     "The Cornwall plan has been scrapped; we're taking the train to Bath instead."),
    ("The plan is to hire two interns in the summer.",
     "We've rethought the whole thing. We'll hire one graduate in September."),
    ("The plan is to move the servers on the 3rd, then test on the 4th.",
     "Update on the migration, and this replaces what I said before: one cut-over on the 10th."),
])
def test_a_round9_reset_supersedes_the_plan_in_force(mf, plan, reset):
    _say(mf, plan, "Always copy Dana on supplier emails.", reset)
    states = _states(mf)
    assert states[plan] == "superseded" and states["Always copy Dana on supplier emails."] == "active"
    assert states[reset] == "active"
    with families.off(with_later(d.F_RESET_R9)):
        _say(mf, plan, reset, cid="off")
        assert _states(mf, "off")[plan] == "active"


@pytest.mark.parametrize("family, rule, other, withdrawal", [
    (d.F_REVOKE_R9, "Always attach the safety sheet to every quote.", "Never quote delivery on Sundays.",
     "The safety sheet no longer needs to go with quotes."),
    (d.F_REVOKE_R9, "Never send texts after 9pm.", "Keep replies under 80 words.",
     "The 9pm text cut-off can go; I'm up late these days."),
    (d.F_REVOKE_R9, "Keep my Fridays free of calls.", "Never share my mobile number.",
     "Scratch the Friday thing. Calls are fine then."),
    (d.F_REVOKE_R9, "Always cc Imran on invoices.", "Never pay invoices by cheque.",
     "Imran has moved to the Dublin office, so you can stop cc'ing him."),
    (d.F_RESTORE_R9, "Don't charge the delivery fee to pensioners.", "Always ask for a postcode.",
     "We're reinstating the delivery fee for pensioners next month."),
    (d.F_RESTORE_R9, "Always write to me in German.", "Never book aisle seats.",
     "Let's go back to English, enough German for now."),
])
def test_round9_withdrawals_end_only_the_named_rule(mf, family, rule, other, withdrawal):
    check_withdrawal(mf, with_later(family), rule, other, withdrawal)


def test_a_reason_before_so_names_what_a_withdrawal_ends(mf):
    # "cc'ing him" shares no word with the rule: the reason names who it was about
    rule, other = "Always cc Mareike on vendor emails.", "Never pay vendors by cheque."
    text = "Mareike has moved to the Berlin team, so you can stop cc'ing her."
    _say(mf, rule, other, text)
    assert _states(mf) == {rule: "revoked", other: "active"}
    with families.off([d.F_SO_TAIL]):
        _say(mf, rule, other, text, cid="off")
        assert _states(mf, "off")[rule] == "active"
    # a reason and an older withdrawal form after it
    rule, other = "Don't mention the merger to clients.", "Always sign off as 'The Desk Team'."
    _say(mf, rule, other, "The merger was announced this morning, so the ban on mentioning it is lifted.", cid="c2")
    assert _states(mf, "c2") == {rule: "revoked", other: "active"}


def test_stopping_an_offer_ends_the_permission_to_make_it(mf):
    permit, other = "You can offer free gift wrap to members.", "Keep every reply under 100 words."
    _say(mf, permit, other, "Please stop offering the member gift wrap, it costs too much.")
    assert _states(mf)[permit] == "revoked" and _states(mf)[other] == "active"


@pytest.mark.parametrize("waiting, other, event", [
    ("Don't order the tiles until the sample arrives.", "Always pay by card.", "The tile sample came this morning."),
    ("Only ship the piano once the deposit has been paid.", "Quote prices in euros.", "The deposit was paid today."),
])
def test_a_condition_reported_met_releases_the_waiting_record(mf, waiting, other, event):
    _say(mf, waiting, other, event)
    states = _states(mf)
    assert states[waiting] == "satisfied" and states[other] == "active"
    with families.off([d.F_CONDITION_MET]):
        _say(mf, waiting, other, event, cid="off")
        assert _states(mf, "off")[waiting] == "active"


def test_a_condition_not_yet_met_releases_nothing(mf):
    waiting = "Don't order the tiles until the sample arrives."
    _say(mf, waiting, "The tile sample hasn't come yet.", "Hopefully the sample arrives tomorrow.")
    assert _states(mf)[waiting] == "active"


# -- point 11: attribute facts ---------------------------------------------------------------------
def _facts(mf, ns, turns):
    conv = mf.conversation(f"a-{ns}", namespace=ns)
    for text in turns:
        conv.append({"role": "user", "content": text})
        mf.consolidate(ns, include_turns=True)
    return {r.key: r.content for r in mf.memory.list(ns, "semantic")
            if r.key and r.key.startswith(("user.favourite.", "user.preferred."))}


ATTRIBUTES = [
    (a.F_FILLER_R9, ["my favourite pizza place is Franco's now tbh"], {"user.favourite.pizza_place": "Franco's"}),
    (a.F_FILLER_R9, ["I switched my gym to PureGym a few weeks ago."], {"user.preferred.gym": "PureGym"}),
    (a.F_FILLER_R9, ["My favourite biscuit is, believe it or not, the custard cream."],
     {"user.favourite.biscuit": "the custard cream"}),
    (a.F_FILLER_R9, ["My favourite football podcast is The Overlap based in London."],
     {"user.favourite.football_podcast": "The Overlap"}),
    (a.F_CALLED, ["My favourite bar is a tiny place called The Lamp."], {"user.favourite.bar": "The Lamp"}),
    (a.F_SWITCH_FOR_MY, ["My preferred notes app is Evernote.", "I switched to Obsidian for my notes app."],
     {"user.preferred.notes_app": "Obsidian"}),
    (a.F_NO_LONGER_R9, ["My favourite podcast is Serial.", "im not into Serial anymore"], {}),
    (a.F_NOT_A_VALUE_R9, ["My preferred seat would have been the window, but it was taken."], {}),
]


@pytest.mark.parametrize("family, turns, facts", ATTRIBUTES)
def test_each_round9_attribute_class_keeps_one_value_and_only_with_its_family(mf, family, turns, facts):
    assert _facts(mf, "on", turns) == facts
    # the round-12 families (from fresh8's misses) read some of these sentences too ("tbh" is a texting
    # abbreviation; a bare name after a switch fills the preferred slot just talked about), so "this
    # family off -> not kept" holds with them off as well
    with families.off([family, *families.motivated_by("fresh8")]):
        assert _facts(mf, "off", turns) != facts


# -- dead patterns of earlier rounds, fixed in round 9 ----------------------------------------------
def test_youve_got_my_ok_is_read_as_a_permission():
    # ``you (?:have|'ve got|got) my OK`` needed "you 've got": "you've got my OK" never matched
    assert d._PERMIT.search("you've got my OK to reorder the toner")
    assert d._PERMIT.search("you have got the go-ahead to reorder the toner")


def test_youve_got_to_is_a_duty():
    assert d._MODAL_YOU.search("you've got to copy Sam on every invoice")


def test_youre_allowed_to_matches_the_permission_rule():
    pattern = next(p for rule, _kind, p in c._RULES if rule == "permission")
    assert pattern.search("you're allowed to refund orders under $20")


def test_reset_colon_opens_a_reset():
    # ``reset:\b`` wanted a word character right after the colon: "Reset: ..." never matched
    assert d._RESET.search("Reset: we launch on the 9th with one product.")
    assert d._RESET.search("New plan: we launch on the 9th with one product.")
    assert not d._RESET.search("The router needs a reset: it keeps dropping.".replace("reset:", "reset :"))


def test_a_deadline_in_dotted_am_pm_is_read():
    assert c._DEADLINE.search("send it by 9 a.m. please")
    assert c._DEADLINE.search("call them before 5 p.m. sharp")


def test_plural_gerunds_share_the_stem_of_the_gerund():
    # "meetings" was stemmed "meeti", "meeting" "meet": a withdrawal about meetings missed the rule
    assert c._stem("meetings") == c._stem("meeting") == "meet"
    assert c._stem("bookings") == c._stem("booking") == c._stem("book")
    assert c._stem("needs") == "need" and c._stem("seeds") == "seed"


def test_every_round9_family_names_fresh5_and_only_it():
    names = ["lead_strip_r9", "so_tail_clause", "prohibition_forms_r9", "restriction_forms_r9", "permission_forms_r9",
             "deadline_forms_r9", "prerequisite_forms_r9", "approval_forms_r9", "evidence_forms_r9", "decision_forms_r9",
             "plan_statement_r9", "reset_forms_r9", "revoke_forms_r9", "restore_forms_r9", "condition_met",
             "narrated_forms_r9", "initial_in_quotes", "attr_filler_r9", "attr_called_value", "attr_switch_for_my",
             "attr_no_longer_forms_r9", "attr_not_a_value_r9"]
    for name in names:
        assert families.REGISTRY[name] == {"fresh5"}, name
    # round 10 read fresh5's remaining misses too (tests/test_attribute_classes_r10.py)
    assert set(families.motivated_only_by("fresh5")) - {"attr_cancelled_my", "attr_inverted_tail"} == set(names)
