"""Round-15 rule families (``memfold.window.directives_r15``, from ``fresh11``'s misses).

Each family is checked on paraphrases written here of the English form it describes (none is a
``fresh11`` item), on small talk of the same surface that must stay unrecorded, and with the
family turned off (the form is then missed, so the test shows the family is what reads it)."""

from __future__ import annotations

import pytest

from memfold import LogicalClock, MemFold
from memfold.memory import families
from memfold.window import directives_r15 as d15
from memfold.window.constraints import RuleConstraintExtractor

R15 = sorted(v for k, v in vars(d15).items() if k.startswith("F_"))


@pytest.fixture(autouse=True)
def _rules_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rules are under test: the instruction model is off (it reads some of these forms too)."""
    monkeypatch.setenv("MEMFOLD_INSTRUCTION_MODEL", "off")


def _kinds(text: str) -> list[str]:
    return [p.kind for p in RuleConstraintExtractor(model=False).extract(text).proposals]


def _record(text: str) -> list[tuple[str, str]]:
    return [(p.kind, p.text) for p in RuleConstraintExtractor(model=False).extract(text).proposals]


# (family, message, kind expected) -- own paraphrases of each shape
FORMS = [
    ("label_lead_r15", "Every Friday 16:00: archive the week's support tickets to the cold bucket.", "obligation"),
    ("label_lead_r15", "[cal] Thu 14:00 budget review — approved, put it in my diary", "approval"),
    ("label_lead_r15", "Weekdays after 18:00: you can reply to my school emails if they look routine.", "permission"),
    ("request_forms_r15", "Would you mind waiting for the signed lease before paying the agent?", "prerequisite"),
    ("request_forms_r15", "Could you note that we've picked Parcelwise as our carrier from April?", "policy_state"),
    ("request_forms_r15", "Could you go ahead and renew the van insurance? You have my OK.", "permission"),
    ("adopted_quote_r15", "From the IT policy, part 4: \"All laptops must be encrypted before they leave the office.\" "
                          "Please apply that to the new starters' machines.", "obligation"),
    ("adopted_quote_r15", "The lease says 'Pets may be kept with written consent only.' Keep the pet-sitter plans within that.",
     None),
    ("register_leads_r15", "Kindly do the needful and always attach the purchase order to every vendor invoice.", None),
    ("approval_forms_r15", "ok fine, the £80 plant order for the office is a go", "approval"),
    ("approval_forms_r15", "Kindly note the expense claim of Ms. Rao for the Pune trip stands sanctioned.", "approval"),
    ("approval_forms_r15", "The committee approves the grant of £2,000 for the allotment shed.", "approval"),
    ("permission_forms_r15", "No worries if you want to move my dentist slot, you've got the green light.", "permission"),
    ("permission_forms_r15", "It's not forbidden for you to email the landlord yourself.", "permission"),
    ("evidence_forms_r15", "The bathroom scale read 81.2 kg this morning.", "evidence"),
    ("evidence_forms_r15", "The speed test gives 3 Mbps against the 50 we pay for.", "evidence"),
    ("decision_forms_r15", "Right, we've made our minds up, the reunion is in Bath this year.", "policy_state"),
    ("decision_forms_r15", "The venue has been chosen by the committee: the old boathouse.", "policy_state"),
    ("limit_forms_r15", "Nothing above $60 a head for the team dinner.", "constraint"),
    ("duty_forms_r15", "Righto, whenever you take a booking for Saturday, send the customer a text that morning, yeah?",
     "obligation"),
    ("duty_forms_r15", "Never fail to lock the server room on your way out.", "obligation"),
    ("duty_forms_r15", "The new laptops don't get imaged until security signs off.", "prerequisite"),
    ("duty_forms_r15", "Never let the dog out after the fireworks start.", "constraint"),
]


@pytest.mark.parametrize("family,text,kind", FORMS, ids=[f"{f}-{n}" for n, (f, _t, _k) in enumerate(FORMS)])
def test_each_family_reads_its_form_and_only_it(family: str, text: str, kind: str | None) -> None:
    got = _record(text)
    assert got, f"no record of {text!r}"
    assert kind is None or got[0][0] == kind
    assert all(t in text for _k, t in got)  # records keep the user's words
    import memfold.window.directives_r16  # noqa: F401 (round 16 reads some of these shapes too: off with it)

    with families.off([family, *families.motivated_by("fresh12")]):
        assert _record(text) != got, f"{family} off: the same records, so the family is not what reads {text!r}"


SMALL_TALK = [
    "Whenever you need a hand with the move, just let me know.",
    "Appreciate all the help this week, see ya later!",
    "After all safety is what matters most when the kids are out on their bikes.",
    "It gives us hope and reminds us we're not alone.",
    "Quote from the handbook: 'Always wear a lanyard.' Do people still follow that?",
    "Thanks all for coming tonight!",
    "Don't let the bumps in the road bring you down.",
    "The gym's rules say towels must be used on every bench, which nobody does.",
    "Their style guide says headings must be in title case; we don't follow it though.",
    "We hit the beach early and it was lovely.",
]


@pytest.mark.parametrize("text", SMALL_TALK)
def test_small_talk_of_the_same_surface_makes_no_record(text: str) -> None:
    assert _kinds(text) == []


def test_a_quoted_rule_left_alone_is_no_instruction_but_adopted_it_is() -> None:
    quoted = "The club handbook says: 'Members must sign in guests at the bar.'"
    assert _kinds(quoted) == []
    adopted = quoted + " Please follow that when you bring my cousin."
    assert _record(adopted) == [("obligation", adopted)]


def test_a_request_and_its_grant_are_one_record() -> None:
    text = "Could you go ahead and renew the van insurance? You have my OK."
    assert _record(text) == [("permission", text)]


def _conversation(setup: list[str], message: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    mf = MemFold(None, clock=LogicalClock(), embedder=None, token_counter="words")
    try:
        conv = mf.conversation("r15", namespace="t")
        for s in setup:
            conv.append({"role": "user", "content": s})
        conv.append({"role": "user", "content": message})
        rows = mf.protected.list(conversation_id=conv.id, state=None)
        return ([(r.text, r.state) for r in rows if r.text in setup],
                [(r.kind, r.text) for r in rows if r.text not in setup])
    finally:
        mf.close()


def test_reset_forms_replace_the_plan() -> None:
    plan = "Plan for the open day: tours at 10, talks at 2."
    for new in ("It's not that we don't like tours, but none of the open day plan stands. We're doing a virtual tour.",
                "Shift handover: previous open day plan no longer applies. A virtual tour runs at 11."):
        setup, made = _conversation([plan], new)
        assert setup == [(plan, "superseded")]
        assert ("policy_state", new) in made
        with families.off(["reset_forms_r15"]):
            setup_off, _ = _conversation([plan], new)
        assert setup_off == [(plan, "active")]


def test_revoke_forms_lift_and_end_rules() -> None:
    ban = "No phone calls during lunch."
    keep = "Always answer in Spanish."
    setup, _ = _conversation([ban, keep], "phone calls are fine again now")
    assert dict(setup)[ban] != "active" and dict(setup)[keep] == "active"
    rule = "Never deploy without a sign-off from security."
    setup, _ = _conversation([rule, keep], "The security sign-off rule is scrapped.")
    assert dict(setup)[rule] != "active" and dict(setup)[keep] == "active"


def test_a_request_to_stop_ends_the_rule() -> None:
    rule = "Always copy my deputy on supplier emails."
    keep = "Never share my home address."
    setup, _ = _conversation([rule, keep], "Would you stop copying my deputy on supplier emails? He's moved teams.")
    assert dict(setup)[rule] != "active" and dict(setup)[keep] == "active"


def test_condition_met_forms_release_the_waiting_record() -> None:
    wait = "Don't book the coach until we have 40 sign-ups."
    keep = "Always get a receipt."
    setup, _ = _conversation([wait, keep], "we hit 40 sign-ups last night")
    assert dict(setup)[wait] != "active" and dict(setup)[keep] == "active"


def test_every_family_is_registered_with_fresh11_only() -> None:
    assert len(R15) == 15
    for name in R15:
        with families.off([name]):
            assert not families.on(name)
        assert families.on(name)
