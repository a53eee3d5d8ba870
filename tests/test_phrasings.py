"""Standing instructions and attribute facts in phrasings nobody tuned on (issue 20, points 10 and 11).

The phrasing sets in ``tests/data`` were committed before the extractors ran on them and are split
per group into a tuning half and a held-out half with a fixed seed. The rules were tuned on the
tuning half only. The floors below are the figures measured on the held-out halves when the rules
were frozen (``python bench/phrasing_retention.py`` prints them); they catch a regression, and a
better rule raises them.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memfold
from memfold.consolidation.extractors.attributes import attribute_statements, clean_value
from memfold.consolidation.extractors.base import Episode
from memfold.consolidation.extractors.rules import RulesExtractor

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


bench = _load(ROOT / "bench" / "phrasing_retention.py", "phrasing_retention")


@pytest.fixture
def mf(db_path, clock):
    """A real database file without an embedder (the attribute tests write facts; loading the
    embedding model would only cost time here)."""
    with memfold.MemFold(db_path, clock=clock, token_counter="words", embedder=None) as instance:
        yield instance
split = _load(DATA / "split_phrasings.py", "split_phrasings")

# measured on the held-out halves when the rules were frozen (see the module docstring)
PROTECTED_HELDOUT_FLOOR = 132       # of 132 items (100%; round 3: 116, 87.9%)
NEAR_MISS_HELDOUT_FLOOR = 10        # of 10 near misses left without a record (round 3: 9)
ATTRIBUTE_HELDOUT_FLOOR = 77        # of 77 items (100%; round 3: 76)
# the first fresh sets: measured once in round 2 (46/60, 3/5, 32/35), then tuned on in round 3
# (so in-sample now): these floors are the round-3 figures
PROTECTED_FRESH_FLOOR = 59          # of 60 items (98.3%; round 3: 56; the miss is a turn the secret detector masks whole)
NEAR_MISS_FRESH_FLOOR = 5           # of 5 near misses (round 3: 4)
ATTRIBUTE_FRESH_FLOOR = 35          # of 35 items (100%; round 3: 33)
# the second fresh sets (round 3), written and committed before any extractor ran on them:
# measured once in round 3 (27/36, 18/21), tuned on in round 4 (in-sample now)
PROTECTED_FRESH2_FLOOR = 35         # of 36 items (97.2%; measured 27 in round 3, tuned on in round 4; the miss
                                    # is a turn the secret detector masks whole)
NEAR_MISS_FRESH2_FLOOR = 3          # of 3 near misses
ATTRIBUTE_FRESH2_FLOOR = 19         # of 21 items (90.5%; round 3: 18; the two misses name the attribute with its
                                    # qualifier, 'city_to_visit', against the first set's 'dish to cook' -> dish)
LOCOMO_MAX_RECORDS = 2              # of 3,435 LoCoMo turns (0.058%; the goal is at most 0.1%)


# -- the data and its split ---------------------------------------------------------------------
@pytest.mark.parametrize("name", split.FILES)
def test_split_is_the_seeded_one_and_every_group_is_big_enough(name):
    doc = json.loads((DATA / name).read_text(encoding="utf-8"))
    assert doc["split"]["seed"] == split.SEED == 20
    assigned = split.assign(doc["items"])
    assert {i["id"]: i["split"] for i in doc["items"]} == assigned
    groups: dict[str, list[str]] = {}
    for item in doc["items"]:
        groups.setdefault(item["group"], []).append(item["split"])
    for group, splits in groups.items():
        assert len(splits) >= 20, group
        assert splits.count("tune") == len(splits) // 2, group


# -- point 10: protected records ----------------------------------------------------------------
@pytest.fixture(scope="module")
def protected():
    return bench.protected_figures(bench.load("protected_paraphrases.json") + bench.load("protected_paraphrases_fresh.json")
                                   + bench.load("protected_paraphrases_fresh2.json"))


def test_held_out_paraphrases_are_protected(protected):
    cell = protected["table"]["all"]["heldout"]
    missed = [r["id"] for r in protected["rows"] if r["split"] == "heldout" and r["group"] != "near_miss"
              and not r["retained"]]
    assert cell[1] == 132
    assert cell[0] >= PROTECTED_HELDOUT_FLOOR, missed


def test_tuning_paraphrases_are_all_protected(protected):
    failed = [(r["id"], r["why"]) for r in protected["rows"] if r["split"] == "tune" and not r["retained"]]
    assert failed == []


def test_held_out_near_misses_make_no_record(protected):
    cell = protected["table"]["near_miss"]["heldout"]
    assert cell[0] >= NEAR_MISS_HELDOUT_FLOOR


def test_the_fresh_set_as_measured_once(protected):
    assert protected["table"]["all"]["fresh"][1] == 60
    assert protected["table"]["all"]["fresh"][0] >= PROTECTED_FRESH_FLOOR
    assert protected["table"]["near_miss"]["fresh"][0] >= NEAR_MISS_FRESH_FLOOR


def test_the_second_fresh_set_as_measured_once(protected):
    assert protected["table"]["all"]["fresh2"][1] == 36
    assert protected["table"]["all"]["fresh2"][0] >= PROTECTED_FRESH2_FLOOR
    assert protected["table"]["near_miss"]["fresh2"][0] >= NEAR_MISS_FRESH2_FLOOR


def test_locomo_small_talk_makes_at_most_a_tenth_of_a_percent_of_records():
    fp = bench.locomo_false_positives()
    assert fp["turns"] == 3435
    assert fp["records"] <= LOCOMO_MAX_RECORDS, fp["flagged"]
    assert fp["rate"] <= 0.001


def _states(mf, cid):
    return {r.text: r.state for r in mf.protected.list(conversation_id=cid, state=None)}


def test_a_withdrawal_touches_only_the_best_matching_record(mf):
    conv = mf.conversation("c", namespace="n")
    for text in ["Never give out the warehouse address.", "Never share my home address.",
                 "Go ahead and give out the warehouse address when asked."]:
        conv.append({"role": "user", "content": text})
    states = _states(mf, "c")
    assert states["Never give out the warehouse address."] == "revoked"
    assert states["Never share my home address."] == "active"
    assert states["Go ahead and give out the warehouse address when asked."] == "active"  # a permission


def test_one_shared_word_of_small_talk_withdraws_nothing(mf):
    conv = mf.conversation("c", namespace="n")
    for text in ["Before you send a message, wait for my go-ahead.", "Ok, I sent my sister a message yesterday.",
                 "My knee is fine now."]:
        conv.append({"role": "user", "content": text})
    assert _states(mf, "c") == {"Before you send a message, wait for my go-ahead.": "active"}


def test_a_go_signal_releases_the_record_waiting_for_it(mf):
    conv = mf.conversation("c", namespace="n")
    for text in ["Don't release the payment until the goods arrive.", "Don't sign the lease until I read it.",
                 "The goods arrived this morning, release the payment."]:
        conv.append({"role": "user", "content": text})
    assert _states(mf, "c") == {"Don't release the payment until the goods arrive.": "satisfied",
                                "Don't sign the lease until I read it.": "active"}


def test_a_reset_supersedes_the_standing_decision(mf):
    conv = mf.conversation("c", namespace="n")
    for text in ["The plan is to launch the beta in Canada first.",
                 "Forget everything we've said so far: we launch in the UK first, and Canada waits."]:
        conv.append({"role": "user", "content": text})
    [active] = mf.protected.active_for("c")
    assert active.kind == "policy_state" and active.text.startswith("Forget everything")
    assert _states(mf, "c")["The plan is to launch the beta in Canada first."] == "superseded"


def test_a_one_off_request_is_no_standing_instruction(mf):
    conv = mf.conversation("c", namespace="n")
    for text in ["Send the invoice.", "Check out my pottery creation in the pic!", "Keep it up!",
                 "Feel free to reach out any time.", "Let's catch up soon."]:
        conv.append({"role": "user", "content": text})
    assert mf.protected.list(conversation_id="c", state=None) == []


# -- point 11: attribute slots ------------------------------------------------------------------
@pytest.fixture(scope="module")
def attributes():
    return bench.attribute_figures(bench.load("attribute_phrasings.json") + bench.load("attribute_phrasings_fresh.json")
                                   + bench.load("attribute_phrasings_fresh2.json"))


def test_held_out_attribute_phrasings(attributes):
    cell = attributes["table"]["all"]["heldout"]
    wrong = [(r["id"], r["got"]) for r in attributes["rows"] if r["split"] == "heldout" and not r["correct"]]
    assert cell[1] == 77
    assert cell[0] >= ATTRIBUTE_HELDOUT_FLOOR, wrong


def test_fresh_attribute_phrasings_as_measured_once(attributes):
    cell = attributes["table"]["all"]["fresh"]
    assert cell[1] == 35 and cell[0] >= ATTRIBUTE_FRESH_FLOOR
    second = attributes["table"]["all"]["fresh2"]
    assert second[1] == 21 and second[0] >= ATTRIBUTE_FRESH2_FLOOR


def test_tuning_attribute_phrasings_are_all_right(attributes):
    assert [(r["id"], r["got"]) for r in attributes["rows"] if r["split"] == "tune" and not r["correct"]] == []


def _say(mf, conv, *texts, ns="n"):
    for text in texts:
        conv.append({"role": "user", "content": text})
        mf.consolidate(ns, include_turns=True)


def test_a_new_favourite_supersedes_the_old_one_in_the_same_slot(mf):
    conv = mf.conversation("c", namespace="n")
    _say(mf, conv, "My favourite player is Lionel Messi.", "My current favourite player is Kylian Mbappé.")
    slot = mf.memory.list("n", "semantic", key="user.favourite.player", include_inactive=True)
    assert [(r.content, r.status) for r in slot] == [("Lionel Messi", "retired"), ("Kylian Mbappé", "active")]
    old, new = slot
    assert old.superseded_by == new.id and new.supersedes == old.id
    assert [r.key for r in mf.memory.list("n", "semantic")] == ["user.favourite.player"]


def test_the_slot_keeps_one_value_within_one_batch_too(mf):
    conv = mf.conversation("c", namespace="n")
    for text in ["My favourite band is Muse.", "My new favourite band is Wet Leg.", "I switched to oat milk.",
                 "I switched back to almond milk."]:
        conv.append({"role": "user", "content": text})
    mf.consolidate("n", include_turns=True)
    active = {r.key: r.content for r in mf.memory.list("n", "semantic")}
    assert active == {"user.favourite.band": "Wet Leg", "user.preferred.milk": "almond milk"}


def test_no_longer_retires_the_slot(mf):
    conv = mf.conversation("c", namespace="n")
    _say(mf, conv, "My favourite band is Muse.", "My go-to browser is Chrome.", "Muse is no longer my favourite band.")
    assert {r.key: r.content for r in mf.memory.list("n", "semantic")} == {"user.preferred.browser": "Chrome"}
    [muse] = mf.memory.list("n", "semantic", key="user.favourite.band", include_inactive=True)
    assert muse.status == "retired" and muse.superseded_by is None
    _say(mf, conv, "I no longer use Chrome.")
    assert mf.memory.list("n", "semantic") == []
    _say(mf, conv, "I no longer watch football.")  # names no held value: retires nothing, writes nothing
    assert mf.memory.list("n", "semantic", include_inactive=True) == [muse, *mf.memory.list(
        "n", "semantic", key="user.preferred.browser", include_inactive=True)]


def test_a_retirement_names_the_value_it_ends(mf):
    conv = mf.conversation("c", namespace="n")
    _say(mf, conv, "My favourite show is Lost.", "My favourite show is Severance.", "My favourite show isn't Lost anymore.")
    assert [r.content for r in mf.memory.list("n", "semantic")] == ["Severance"]


def test_a_switch_from_a_value_writes_into_the_slot_holding_it(mf):
    conv = mf.conversation("c", namespace="n")
    _say(mf, conv, "My preferred browser is Chrome.", "I switched from Chrome to Firefox.")
    assert {r.key: r.content for r in mf.memory.list("n", "semantic")} == {"user.preferred.browser": "Firefox"}
    # a bare name fills the preferred slot just talked about (round 12, attr_switch_to_recent_slot_r12) ...
    _say(mf, conv, "I switched to Safari.")
    assert {r.key: r.content for r in mf.memory.list("n", "semantic")} == {"user.preferred.browser": "Safari"}
    # ... and says nothing about which slot it fills when none was (test_attribute_classes_r12.py)
    for text in ("hi", "how are you", "nice weather", "see you", "I switched to Brave."):
        _say(mf, conv, text)
    assert {r.key: r.content for r in mf.memory.list("n", "semantic")} == {"user.preferred.browser": "Safari"}


def test_a_dry_run_lists_a_retirement_and_writes_nothing(mf):
    conv = mf.conversation("c", namespace="n")
    _say(mf, conv, "My favourite colour is blue.")
    conv.append({"role": "user", "content": "I no longer have a favourite colour."})
    run = mf.consolidate("n", include_turns=True, dry_run=True)
    assert [(p.retire, p.key) for p in run.proposals] == [(True, "user.favourite.colour")]
    assert [p.render() for p in run.proposals] == ["retire user.favourite.colour"]
    assert [r.content for r in mf.memory.list("n", "semantic")] == ["blue"]


FILLERS = ["now", "actually", "currently", "still", "really", "honestly", "officially", "these days", "right now",
           "at the moment", "again", "lately"]
VALUES = ["Bukayo Saka", "Jude Bellingham", "oat milk", "The Godfather Part II", "Hard Fork", "KLM", "tea",
          "Son Heung-min", "gin and tonic", "Past Lives"]


@settings(max_examples=150, deadline=None)
@given(value=st.sampled_from(VALUES), before=st.lists(st.sampled_from(FILLERS), max_size=2),
       after=st.lists(st.sampled_from(FILLERS), max_size=2), lead=st.sampled_from(["", "Actually, ", "Now ", "So "]),
       shape=st.sampled_from(["my favourite player is {b}{v}{a}.", "my preferred airline is {b}{v}{a}.",
                              "my favourite drink right now is {b}{v}{a}.", "my favourite band is, {b}{v}{a}."]))
def test_now_or_actually_is_never_inside_a_value(value, before, after, lead, shape):
    text = lead + shape.format(b="".join(f + " " for f in before), v=value, a="".join(" " + f for f in after))
    text = text[0].upper() + text[1:]
    [st_] = attribute_statements(text)
    assert st_.op == "write" and st_.value == value, text


@pytest.mark.parametrize("text, fact", [
    ("My favourite player is now Bukayo Saka.", ("user.favourite.player", "Bukayo Saka")),
    ("Actually my favourite drink is tea.", ("user.favourite.drink", "tea")),
    ("My favourite colour is now actually purple.", ("user.favourite.colour", "purple")),
    ("I've actually switched my bank to Starling now.", ("user.preferred.bank", "Starling")),
    ("My favourite city is Kyoto now, after that trip.", ("user.favourite.city", "Kyoto")),
    ("My favourite snack is, as of this week, dried mango.", ("user.favourite.snack", "dried mango")),
])
def test_filler_words_stay_out_of_the_fact(text, fact):
    [p] = RulesExtractor().extract([Episode("turn:1", "user", text)])
    assert (p.key, p.content) == fact
    assert not re.search(r"\b(?:now|actually|currently|these days)\b", p.content, re.I)


@pytest.mark.parametrize("text", [
    "My brother's favourite player is Haaland.", "What's your favourite player?", "My favourite player was Zidane.",
    "My favourite food isn't pizza.", "If I had a favourite team it would be Celtic.", "I switched off the lights.",
    "My favourite player might be Pedri, I'm not sure.", "I'd prefer not to say.",
])
def test_not_a_fact(text):
    assert RulesExtractor().extract([Episode("turn:1", "user", text)]) == []


def test_an_assistant_stating_a_favourite_states_no_user_fact():
    assert RulesExtractor().extract([Episode("turn:1", "assistant", "My favourite player is Messi.")]) == []


def test_clean_value_drops_a_pronoun_or_hedge():
    assert clean_value("it") is None and clean_value("probably Pedri") is None
    assert clean_value("This American Life") == "This American Life"
    assert clean_value("they/them") == "they/them"
