"""Round-16 rule families (``memfold.window.directives_r16``, from ``fresh12``'s misses).

Each family is checked on paraphrases written here of the English form it describes (none is a
``fresh12`` item), on a near miss of the same shape that must stay unrecorded (small talk, the
past, a question, someone else's rule), and with the family turned off (the form is then missed,
so the test shows the family is what reads it)."""

from __future__ import annotations

import pytest

from memfold import LogicalClock, MemFold
from memfold.memory import families
from memfold.window import directives_r16 as d16
from memfold.window.constraints import RuleConstraintExtractor

R16 = sorted(v for k, v in vars(d16).items() if k.startswith("F_"))


@pytest.fixture(autouse=True)
def _rules_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rules are under test: the instruction model is off (it reads some of these forms too)."""
    monkeypatch.setenv("MEMFOLD_INSTRUCTION_MODEL", "off")


def _record(text: str) -> list[tuple[str, str]]:
    return [(p.kind, p.text) for p in RuleConstraintExtractor(model=False).extract(text).proposals]


# (family, message, kind expected) -- own paraphrases of each shape
FORMS = [
    ("structured_r16", "| Chore | Allowed? |\n|---|---|\n| Feeding the fish human food | never |", "constraint"),
    ("structured_r16", "| Item | Due |\n|---|---|\n| Council tax payment | 1 March, noon |", "deadline"),
    ("structured_r16", "| Request | Status |\n|---|---|\n| Team offsite in Bristol | approved |", "approval"),
    ("structured_r16", "| Step | Only after |\n|---|---|\n| Book the caterer | the headcount is final |", "prerequisite"),
    ("structured_r16", "decisions:\n  office_plants: fake ones only (final)", "policy_state"),
    ("structured_r16", "evidence:\n  dashcam_clip: shows the van reversing into my bumper at 08:14", "evidence"),
    ("contract_register_r16", "Clause 12.3: The Deliverables shall be handed over no later than 1 June 2027.", "deadline"),
    ("contract_register_r16", "3.4(a) The Assistant may, at its discretion, waive late fees of up to £20.", "permission"),
    ("contract_register_r16", "The Parties have agreed that the venue for all meetings shall be Leeds.", "policy_state"),
    ("verb_final_r16", "The spare keys, these you must to nobody hand over.", "constraint"),
    ("verb_final_r16", "The shared calendar, this you may freely edit.", "permission"),
    ("verb_final_r16", "You may the parking fines under 50 euro alone pay.", "permission"),
    ("verb_final_r16", "Please the invoices always to the accountant on Friday forward.", "obligation"),
    ("verb_final_r16", "For the team shirts, the blue design we have chosen.", "policy_state"),
    ("answer_lead_r16", "You asked whether you can book the cheaper hotel — yes, you can, go ahead.", "permission"),
    ("answer_lead_r16", "You asked how many guests you can invite — keep it under 12.", "constraint"),
    ("answer_lead_r16", "You asked if you should tell the tenants — no, never mention the sale to them.", "constraint"),
    ("answer_lead_r16", "To your question about which printer to use: only the one on the second floor.", "constraint"),
    ("dialect_register_r16", "Dinnae ever leave the gate open when the sheep are out, aye?", "constraint"),
    ("dialect_register_r16", "Negative on overtime — you do not book anyone past 40 hours, over.", "constraint"),
    ("dialect_register_r16", "Sure look, you'll have to lock the shed every night, so you will.", "obligation"),
    ("authority_lead_r16", "Coach's orders: you stretch for ten minutes after every run, no excuses.", "obligation"),
    ("authority_lead_r16", "Chef says you can give the regulars a free coffee.", "permission"),
    ("authority_lead_r16", "House rule for poker night: you never show your folded cards.", "constraint"),
    ("authority_lead_r16", "In my kitchen you don't use the good knives on the chopping board with the crack.", "constraint"),
    ("bare_rule_r16", "No screens after nine.", "constraint"),
    ("bare_rule_r16", "No swimming until the lifeguard arrives.", "prerequisite"),
    ("bare_rule_r16", "Don't let anyone but the caretaker open the hall.", "constraint"),
    ("reset_forms_r16", "The garden plan's off, the whole thing. We're paving it over.", "policy_state"),
    ("reset_forms_r16", "The whole plan for the launch, this you can forget. We go live in May instead.", "policy_state"),
]


@pytest.mark.parametrize("family,text,kind", FORMS, ids=[f"{f}-{n}" for n, (f, _t, _k) in enumerate(FORMS)])
def test_each_family_reads_its_form_and_only_it(family: str, text: str, kind: str) -> None:
    got = _record(text)
    assert got, f"no record of {text!r}"
    assert got[0][0] == kind
    assert all(t in text for _k, t in got)  # records keep the user's words
    with families.off([family]):
        assert _record(text) != got, f"{family} off: the same records, so the family is not what reads {text!r}"


# (family, near miss in the family's own shape) -- each must make no record
NEAR_MISSES = [
    ("structured_r16", "| Name | Age |\n|---|---|\n| Tom | 12 |"),
    ("structured_r16", "shopping:\n  - milk: 2 pints\n  - eggs: a dozen"),
    ("contract_register_r16", "Clause 3 of my old lease was about pets, funny enough."),
    ("verb_final_r16", "The old flat, this we never liked much."),
    ("answer_lead_r16", "You asked how my weekend was — honestly, lovely, we went to the coast."),
    ("dialect_register_r16", "Aye, it was a braw day oot on the hills, so it was."),
    ("authority_lead_r16", "Chef says you should try the risotto, it's amazing."),
    ("authority_lead_r16", "In my house you never know what the cat will break next."),
    ("bare_rule_r16", "No problem at all, see you tomorrow."),
    ("bare_rule_r16", "Don't let anyone ruin your day."),
    ("reset_forms_r16", "I binned the whole plan for the weekend, so lazy!"),
    ("reported_r16", "My sister has a rule: no shoes in the house. Bit much."),
    ("reported_r16", "The pool's sign says swimmers must shower first, but they never check."),
]


@pytest.mark.parametrize("family,text", NEAR_MISSES, ids=[f"{f}-{n}" for n, (f, _t) in enumerate(NEAR_MISSES)])
def test_a_near_miss_of_the_same_shape_makes_no_record(family: str, text: str) -> None:
    assert _record(text) == []


@pytest.mark.parametrize("text", [
    "Sydney is 11 hours ahead, so their morning is our night — always confuses me.",
    "The umpire approved the catch after the replay, what a moment.",
    "```yaml\nrules:\n  - always use tabs\n```\nwhy does the linter reject this?",
])
def test_reported_small_talk_is_no_record_and_the_family_is_why(text: str) -> None:
    assert _record(text) == []
    with families.off(["reported_r16"]):
        assert _record(text) != []  # an earlier rule reads it as a rule: reported_r16 is what stops it


def _conversation(setup: list[str], message: str) -> dict[str, str]:
    mf = MemFold(None, clock=LogicalClock(), embedder=None, token_counter="words")
    try:
        conv = mf.conversation("r16", namespace="t")
        for s in [*setup, message]:
            conv.append({"role": "user", "content": s})
        return {r.text: r.state for r in mf.protected.list(conversation_id=conv.id, state=None) if r.text in setup}
    finally:
        mf.close()


WITHDRAWALS = [
    # (family, the rule withdrawn, the message) -- "Always get a receipt." must stay active
    ("revoke_forms_r16", "No spending over £100 without me.", "As treasurer I'm lifting the spending ban, the grant came through."),
    ("revoke_forms_r16", "Don't pick Ana for the relay.", "Ana's suspension is over, she's back in the squad."),
    ("verb_final_r16", "Never use taxis for short trips.", "Taxis you may again use, the budget is fine."),
    ("answer_lead_r16", "Never book flights with Ryanair.", "To your question: yes, Ryanair is fine again, forget the ban."),
    ("structured_r16", "Don't park in bay 4.", "| Rule | Status |\n|---|---|\n| No parking in bay 4 | withdrawn |"),
    ("condition_met_r16", "Don't convert the dollars until the rate is above 1.31.", "GBP/USD just hit 1.31."),
    ("condition_met_r16", "Don't start the match until the rain stops.", "It's stopped raining, the pitch looks fine."),
]


@pytest.mark.parametrize("family,rule,message", WITHDRAWALS, ids=[f"{f}-{n}" for n, (f, _r, _m) in enumerate(WITHDRAWALS)])
def test_withdrawal_forms_end_the_rule_they_name(family: str, rule: str, message: str) -> None:
    keep = "Always get a receipt."
    states = _conversation([rule, keep], message)
    assert states[keep] == "active"
    assert states[rule] != "active", f"{message!r} left {rule!r} active"
    with families.off([family]):
        assert _conversation([rule, keep], message)[rule] == "active"


def test_resets_replace_the_plan_and_keep_the_whole_message() -> None:
    plan = "Plan for the fete: stalls at 10, the dog show at 2."
    new = "Bin all of the fete plan, the field is flooded. We're moving it to the church hall on Sunday."
    mf = MemFold(None, clock=LogicalClock(), embedder=None, token_counter="words")
    try:
        conv = mf.conversation("r16", namespace="t")
        conv.append({"role": "user", "content": plan})
        conv.append({"role": "user", "content": new})
        rows = {r.text: r.state for r in mf.protected.list(conversation_id=conv.id, state=None)}
    finally:
        mf.close()
    assert rows[plan] == "superseded" and rows[new] == "active"


def test_every_family_is_registered_with_fresh12_only() -> None:
    assert len(R16) == 11
    for name in R16:
        assert families.REGISTRY[name] == frozenset({"fresh12"})
        with families.off([name]):
            assert not families.on(name)
        assert families.on(name)
