"""The phrasing classes of issue 20, points 10 and 11 (round 4), each through a real MemFold conversation.

A class is a shape of phrasing (an imperative made standing by a frequency lead, a deontic verb, a
scope marker, a deadline named as a date or a relative time, an approval granted or withheld, a
reset of everything said so far, a replacement, ...), not a sentence: each case below is a
sentence of its class, appended as a user turn to a real database file; the assertions read the
protected channel (or the semantic store) afterwards. Near misses in the same shapes must make no
record. The rule families can be turned off one by one (``memfold.memory.families``), which is how
``bench/phrasing_retention.py --loso`` measures each phrasing set as if it had been left out.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

import memfold
from memfold.memory import families
from memfold.window import directives
from memfold.window.constraints import RuleConstraintExtractor

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("phrasing_retention_classes", ROOT / "bench" / "phrasing_retention.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


bench = _bench()


@pytest.fixture
def mf(db_path, clock):
    # the rule families alone (family off -> not retained); the model has tests/test_instruction_model.py
    with memfold.MemFold(db_path, clock=clock, token_counter="words", embedder=None,
                         constraint_extractor=RuleConstraintExtractor(model=False)) as instance:
        yield instance


def _active(mf, cid):
    return {r.text: r.kind for r in mf.protected.active_for(cid)}


def _states(mf, cid):
    return {r.text: r.state for r in mf.protected.list(conversation_id=cid, state=None)}


CLASSES = [
    # imperatives without "must", standing by a frequency or occasion lead
    ("Each morning, post a summary of open tickets in the team channel.", "obligation"),
    ("Daily, back up the customer spreadsheet to the shared drive.", "obligation"),
    ("On weekdays, open each support shift by checking the overnight queue.", "obligation"),
    ("Each time a ticket is reopened, tag it as a regression.", "obligation"),
    # deontic verbs and statements of duty
    ("You're supposed to copy the auditor on every payment approval.", "obligation"),
    ("It's your job to chase unpaid invoices every Friday.", "obligation"),
    ("Attaching the receipt to each expense claim is mandatory.", "obligation"),
    ("Every summary you write for me needs a one-line TL;DR at the top.", "obligation"),
    ("There must be no mention of the lawsuit in customer emails.", "constraint"),
    ("You need manager sign-off before closing a ticket as fraud.", "prerequisite"),
    # prohibitions in other forms
    ("Don't ever promise a delivery date to wholesale clients.", "constraint"),
    ("Do not, under any circumstances, delete customer records.", "constraint"),
    ("At no point should you share the roadmap with partners.", "constraint"),
    ("Oh and mum's the word on the salary numbers, okay?", "constraint"),
    # scope markers: going forward, from now on, until further notice, from today, effective immediately
    ("From today, invoices are sent in euros.", "constraint"),
    ("Effective immediately, expense claims go through the new portal.", "constraint"),
    # deadlines as dates or relative times
    ("Renew the SSL certificate before Friday 5pm.", "deadline"),
    ("Lodge the appeal by 2026-11-30.", "deadline"),
    ("File the insurance claim within a fortnight.", "deadline"),
    ("Have the draft contract ready by Wednesday noon.", "deadline"),
    ("We need the translated brochure within ten working days.", "deadline"),
    # approvals granted and withheld
    ("Legal has approved the updated privacy notice.", "approval"),
    ("The hiring request is not approved yet.", "approval"),
    ("The board rejected the office expansion plan.", "approval"),
    ("Green light from me on the Berlin offsite.", "approval"),
    # evidence
    ("The customer sent a photo showing the screen was cracked on arrival.", "evidence"),
    ("According to the delivery log, the parcel was signed for by J. Smith.", "evidence"),
    ("Just so you know, the outage started at 02:14 UTC according to the monitoring graphs.", "evidence"),
    # decisions
    ("Final call: the launch moves to the 12th.", "policy_state"),
    ("We've landed on Hetzner for hosting.", "policy_state"),
    ("The chosen supplier is Hartley & Sons.", "policy_state"),
]


@pytest.mark.parametrize("text, kind", CLASSES)
def test_each_class_is_a_standing_instruction(mf, text, kind):
    conv = mf.conversation("c", namespace="n")
    conv.append({"role": "user", "content": text})
    assert _active(mf, "c") == {text: kind}
    # the record is in every compiled context, word for word
    assert any(text in m["content"] for m in conv.context(budget=2000).messages if m["role"] == "system")


NEAR_MISSES = [
    "Every morning I go for a run by the river.",
    "Going forward, I hope we see each other more.",
    "From now on I'm going to sleep earlier.",
    "Until further notice, I'm living on coffee and toast.",
    "Don't ever change, you're the best!",
    "Never in a million years did I expect that.",
    "Never have I ever eaten sushi.",
    "Scratch that, I'm just rambling.",
    "Let's start fresh this year with new hobbies!",
    "The kids approved of the new puppy.",
    "Instead of cooking, we ordered pizza last night.",
    "Here's a photo of my family's dog on a couch.",
    "And remember to stay patient and positive throughout the grooming process.",
    "You must be so proud of your daughter!",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_small_talk_in_the_same_shapes_makes_no_record(mf, text):
    conv = mf.conversation("c", namespace="n")
    conv.append({"role": "user", "content": text})
    assert _states(mf, "c") == {}


@pytest.mark.parametrize("old, reset, new_part", [
    ("The plan is to ship the redesign in one big release.",
     "Scratch everything we agreed so far: we ship the redesign in three small releases.", "three small releases"),
    ("The plan is to renovate the office in August.",
     "Throw out the old plan; the office renovation happens in January instead.", "January"),
    ("The plan is to move the servers in June.",
     "Everything we said until now is void: the servers move in September.", "September"),
    ("We'll use Zoom for the client calls.", "Instead of Zoom, we'll use Teams for the client calls.", "Teams"),
    ("The plan is to hold the review on Friday.", "Replace that with a review on Wednesday morning.", "Wednesday"),
])
def test_a_reset_or_replacement_supersedes_the_standing_decision(mf, old, reset, new_part):
    conv = mf.conversation("c", namespace="n")
    conv.append({"role": "user", "content": old})
    assert _states(mf, "c") == {old: "active"}
    conv.append({"role": "user", "content": reset})
    states = _states(mf, "c")
    assert states[old] == "superseded"
    [new] = [r for r in mf.protected.active_for("c")]
    assert new_part in new.text and new.kind == "policy_state"
    [was] = [r for r in mf.protected.list(conversation_id="c", state=None) if r.text == old]
    assert was.superseded_by == new.id


def test_a_rule_replacement_supersedes_only_the_rule_it_names(mf):
    conv = mf.conversation("c", namespace="n")
    for text in ["Always send the weekly update by email.", "Never call me at work.",
                 "Send the weekly update on Slack instead of by email from now on."]:
        conv.append({"role": "user", "content": text})
    states = _states(mf, "c")
    assert states == {"Always send the weekly update by email.": "superseded", "Never call me at work.": "active",
                      "Send the weekly update on Slack instead of by email from now on.": "active"}
    conv.append({"role": "user", "content": "Keep every reply under 200 words."})
    conv.append({"role": "user", "content": "Replace the 200-word limit with a 100-word limit."})
    [new] = [r for r in mf.protected.active_for("c") if "100-word" in r.text]
    assert new.kind == "constraint"  # the kind of the record it replaced
    assert _states(mf, "c")["Keep every reply under 200 words."] == "superseded"


def test_a_replacement_that_names_nothing_standing_makes_no_record(mf):
    conv = mf.conversation("c", namespace="n")
    conv.append({"role": "user", "content": "Never call me at work."})
    conv.append({"role": "user", "content": "Replace the old tyres with winter ones."})
    assert _states(mf, "c") == {"Never call me at work.": "active"}


@pytest.mark.parametrize("rule, withdrawal", [
    ("Don't send me text messages.", "Scrap the rule about text messages, texting me is fine."),
    ("Don't contact the supplier directly.", "The rule about contacting the supplier is no longer in force."),
    ("Do not cancel any orders today.", "The ban on cancelling orders is lifted."),
    ("Do not discuss pricing on calls.", "Scrap the pricing rule, you may discuss pricing on calls."),
    ("Don't use the color red in the charts.", "Red is allowed in the charts again."),
    ("Never schedule meetings on Fridays.", "Fridays are open for meetings again."),
])
def test_revocation_forms_withdraw_only_the_named_rule(mf, rule, withdrawal):
    conv = mf.conversation("c", namespace="n")
    for text in [rule, "Always include the ticket number.", withdrawal]:
        conv.append({"role": "user", "content": text})
    assert _states(mf, "c") == {rule: "revoked", "Always include the ticket number.": "active"}


def test_you_can_now_releases_a_waiting_record_as_satisfied(mf):
    conv = mf.conversation("c", namespace="n")
    for text in ["Wait for my OK before you email the landlord.", "Never call me at work.",
                 "OK, you can email the landlord now."]:
        conv.append({"role": "user", "content": text})
    assert _states(mf, "c") == {"Wait for my OK before you email the landlord.": "satisfied",
                                "Never call me at work.": "active"}


def test_a_system_turn_in_the_middle_stands_until_a_later_one_replaces_it(mf):
    conv = mf.conversation("c", namespace="n")
    conv.append({"role": "system", "content": "Answer in English."})
    conv.append({"role": "user", "content": "Hello there."})
    conv.append({"role": "system", "content": "Switch to German for every answer from here on."})
    for i in range(8):
        conv.append({"role": "user", "content": f"question {i} " + "words " * 30})
    messages = conv.context(budget=200).messages
    assert messages[0] == {"role": "system", "content": "Switch to German for every answer from here on."}
    assert not any("Answer in English." in str(m["content"]) for m in messages)
    assert mf.protected.active_for("c") == []  # a system turn stands as itself, not as a protected record


# -- point 11: attribute slots ------------------------------------------------------------------------
def _say(mf, conv, *texts):
    for text in texts:
        conv.append({"role": "user", "content": text})
        mf.consolidate("n", include_turns=True)
    return {r.key: r.content for r in mf.memory.list("n", "semantic") if r.key and r.key.startswith("user.")}


@pytest.mark.parametrize("turns, facts", [
    (["Pho is hands down my favourite soup."], {"user.favourite.soup": "Pho"}),
    (["My favourite series is Dark."], {"user.favourite.series": "Dark"}),
    (["My favourite sandwich is ham and cheese with mustard."], {"user.favourite.sandwich": "ham and cheese with mustard"}),
    (["I prefer aisle seats on long flights."], {"user.preferred.seat": "aisle seats"}),
    (["When it comes to airlines, I prefer KLM."], {"user.preferred.airline": "KLM"}),
    (["I'd rather have aisle seats."], {"user.preferred.seat": "aisle seats"}),
    (["I changed my default browser to Edge."], {"user.preferred.default_browser": "Edge"}),
    (["My favourite tea is Earl Grey.", "I've got a new favourite tea, it's Darjeeling."], {"user.favourite.tea": "Darjeeling"}),
    (["My favourite player is Rice.", "Rice isn't my favourite player anymore, it's Odegaard now."],
     {"user.favourite.player": "Odegaard"}),
    (["My preferred airline is easyJet.", "Actually it's Jet2, not easyJet."], {"user.preferred.airline": "Jet2"}),
    (["My go-to editor is Vim.", "I've since switched from Vim to Helix."], {"user.preferred.editor": "Helix"}),
    (["My preferred airline is Ryanair.", "I no longer fly with Ryanair."], {}),
    (["My preferred cinema is Odeon.", "I don't go to the Odeon anymore."], {}),
    (["My favourite uncle is coming to visit."], {}),
])
def test_attribute_classes_keep_one_active_value_per_slot(mf, turns, facts):
    conv = mf.conversation("c", namespace="n")
    assert _say(mf, conv, *turns) == facts
    for key in facts:  # one active value per attribute, the earlier one retired
        slot = mf.memory.list("n", "semantic", key=key, include_inactive=True)
        assert [r.status for r in slot].count("active") == 1


# -- the families and the bench's --set and --loso ----------------------------------------------------
def test_a_family_turned_off_stops_its_class_and_only_in_its_block(mf):
    text = "Each morning, post a summary of open tickets in the team channel."
    assert directives.classify(text)[0] == "obligation"
    with families.off([directives.F_FREQUENCY]):
        assert directives.classify(text) is None
        conv = mf.conversation("c", namespace="n")
        conv.append({"role": "user", "content": text})
        assert _states(mf, "c") == {}
    assert directives.classify(text)[0] == "obligation"
    assert "frequency_lead" not in families.motivated_only_by("fresh2")  # r4own motivated it too
    assert "replacement" in families.motivated_only_by("r4own")


def _write_set(data: Path, name: str) -> None:
    prot = {"items": [
        {"id": "o-1", "group": "obligation", "setup": [], "text": "Daily, back up the customer spreadsheet to the shared drive.",
         "expect": {"record": {"kind": "obligation", "contains": "back up the customer spreadsheet"}}},
        {"id": "n-1", "group": "near_miss", "setup": [], "text": "Every summer we rent a cabin by the lake.",
         "expect": {"none": True}},
        {"id": "s-1", "group": "system", "setup": ["Hi."], "role": "system", "text": "Answer only in Spanish.",
         "after": ["Hola."], "expect": {"system": "Answer only in Spanish."}},
        {"id": "x-1", "group": "deadline", "setup": [], "text": "Lovely weather today.",
         "expect": {"record": {"kind": "deadline", "contains": "Lovely weather"}}},
    ]}
    attr = {"items": [{"id": "a-1", "group": "favourite", "turns": [{"role": "user", "text": "My favourite series is Dark."}],
                       "expect": {"user.favourite.series": "Dark"}}]}
    (data / f"protected_paraphrases_{name}.json").write_text(json.dumps(prot), encoding="utf-8")
    (data / f"attribute_phrasings_{name}.json").write_text(json.dumps(attr), encoding="utf-8")


def test_the_bench_reports_any_set_by_name(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bench, "DATA", tmp_path)
    monkeypatch.setattr(bench, "ROOT", tmp_path)
    _write_set(tmp_path, "blind")
    out = tmp_path / "fig.json"
    assert bench.main(["--set", "blind", "--failures", "blind", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    fig = json.loads(out.read_text())
    assert fig["sets"] == ["blind"]
    assert fig["protected"]["all"]["blind"][:2] == [2, 3]        # the deadline item is a deliberate miss
    assert fig["protected"]["near_miss"]["blind"][:2] == [1, 1]
    assert fig["attributes"]["all"]["blind"] == [1, 1]
    assert "blind" in printed and "[blind] x-1: no record" in printed


def test_the_bench_refuses_a_set_it_cannot_find(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bench, "DATA", tmp_path)
    monkeypatch.setattr(bench, "ROOT", tmp_path)
    assert bench.main(["--set", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert "no phrasing set 'nosuch'" in err and "protected_paraphrases_nosuch.json" in err
    assert bench.main(["--set", "../etc"]) == 2
    assert "use letters, digits" in capsys.readouterr().err


def test_leave_one_set_out_turns_off_the_families_only_that_set_motivated(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "DATA", tmp_path)
    monkeypatch.setattr(bench, "ROOT", tmp_path)
    _write_set(tmp_path, "r4own")  # a set named like one that motivated families of its own
    rows = bench.leave_one_set_out({"r4own": bench.load_set("r4own")})
    row = rows["r4own"]
    assert "replacement" in row["off"] and "frequency_lead" not in row["off"]
    assert row["protected_in"] == [3, 4] and row["attributes_in"] == [1, 1]
    # the series slot is the invariant-plural family, which r4own motivated with fresh2: still on
    assert row["attributes_out"] == [1, 1]
    # strict: every family r4own had a hand in is off, the invariant plural too ("series" -> "sery")
    assert "attr_invariant_plural" in row["off_strict"] and row["attributes_strict"] == [0, 1]


def test_an_item_the_bench_cannot_judge_is_never_counted_retained(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bench, "DATA", tmp_path)
    monkeypatch.setattr(bench, "ROOT", tmp_path)
    doc = {"items": [{"group": "obligation", "text": "Daily, back up the customer spreadsheet to the shared drive.",
                      "expect": {"records": [{"kind": "obligation"}]}}]}
    (tmp_path / "protected_paraphrases_odd.json").write_text(json.dumps(doc), encoding="utf-8")
    prot, attr = bench.load_set("odd")
    assert "expectation keys this bench ignores: ['records']" in capsys.readouterr().err
    [row] = [bench.check_protected(i) for i in prot]
    assert attr == [] and row["id"] == "odd-001" and not row["retained"]
    assert row["why"].startswith("no expectation this bench knows")
