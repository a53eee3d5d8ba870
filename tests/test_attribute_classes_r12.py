"""The round-12 attribute class of issue 20, point 11 (``attr_decoration_r12``), through a real
MemFold conversation.

``fresh8`` (written blind in round 11, measured once blind: 83.0% of its attribute facts) was read
for the class of each miss. The class added here: a chat message's decoration is no part of a
value, neither a pictograph after it ("Orion ✨") nor emphasis before it ("basically Debussy").
The sentences below are new, not items of any phrasing set; each gives its value with the family
on and something else with it off. A hedge ("probably") still makes no fact, and symbols that are
part of a name ("Disney+", "C++") stay.
"""

from __future__ import annotations

import pytest

from memfold.consolidation.extractors import attributes as a
from memfold.memory import families
from phrasing_support import ATTRIBUTE_KEYS, mf  # noqa: F401 (mf: a fixture)
from phrasing_support import attribute_facts as _facts



DECORATED = [
    (["My favourite flower is the peony 🌸"], {"user.favourite.flower": "the peony"}),
    (["My favourite planet is Saturn ⭐️"], {"user.favourite.planet": "Saturn"}),
    (["My preferred airline is Finnair ✈️ !"], {"user.preferred.airline": "Finnair"}),
    (["My favourite guitarist is basically Hendrix."], {"user.favourite.guitarist": "Hendrix"}),
    (["My favourite cheese is without a doubt Stilton."], {"user.favourite.cheese": "Stilton"}),
    (["My favourite poet is totally Mary Oliver 💜"], {"user.favourite.poet": "Mary Oliver"}),
]


@pytest.mark.parametrize("turns, facts", DECORATED)
def test_decoration_is_no_part_of_a_value_and_only_with_its_family(mf, turns, facts):
    assert _facts(mf, "on", turns) == facts
    with families.off([a.F_DECORATION_R12]):
        assert _facts(mf, "off", turns) != facts


def test_symbols_that_belong_to_a_name_stay_and_a_hedge_is_still_no_fact(mf):
    assert _facts(mf, "plus", ["My preferred streaming service is Disney+."]) == {
        "user.preferred.streaming_service": "Disney+"}
    assert _facts(mf, "cpp", ["My favourite language is C++ 🙂"]) == {"user.favourite.language": "C++"}
    assert _facts(mf, "hedge", ["My favourite band is probably Wilco 🎸"]) == {}


# -- round 12, more classes from fresh8's misses (each its own family; sentences new, not set items) --

def _facts_roles(mf, ns, turns):
    """Like ``_facts``, with ``"A:"`` marking an assistant turn."""
    conv = mf.conversation(f"a-{ns}", namespace=ns)
    for text in turns:
        role, text = ("assistant", text[2:]) if text.startswith("A:") else ("user", text)
        conv.append({"role": role, "content": text})
        mf.consolidate(ns, include_turns=True)
    return {r.key: r.content for r in mf.memory.list(ns, "semantic") if r.key and r.key.startswith(ATTRIBUTE_KEYS)}


CLASSES = [
    # texting abbreviations are no part of an attribute or a value
    (a.F_TEXTING_R12, ["my fav podcast atm is Reply All"], {"user.favourite.podcast": "Reply All"}),
    (a.F_TEXTING_R12, ["My favourite snack is salted almonds rn"], {"user.favourite.snack": "salted almonds"}),
    # a time unit narrowed by a larger one is its own slot
    (a.F_OF_UNIT_R12, ["My favourite time of year is late October."], {"user.favourite.time_of_year": "late October"}),
    (a.F_OF_UNIT_R12, ["My favourite meal of the day is breakfast."], {"user.favourite.meal_of_the_day": "breakfast"}),
    # a leading "when I ..." clause: the main clause is the statement
    (a.F_LEAD_CLAUSE_R12, ["When I cycle to work, my preferred route is the canal path."],
     {"user.preferred.route": "the canal path"}),
    # a bare name after a switch: the preferred slot just talked about
    (a.F_RECENT_SLOT_R12, ["My preferred VPN is NordVPN.", "A:Noted.", "I switched to Mullvad last week."],
     {"user.preferred.vpn": "Mullvad"}),
    (a.F_RECENT_SLOT_R12, ["My go-to email client is Thunderbird. I've switched to Spark since it syncs better."],
     {"user.preferred.email_client": "Spark"}),
    # a pair noun keeps the number the user says
    (a.F_PAIR_NOUN_R12, ["I switched my hiking boots to Merrell."], {"user.preferred.hiking_boots": "Merrell"}),
    # an activity stopped retires the slot holding it
    (a.F_NO_LONGER_DO_R12, ["My favourite hobby is painting.", "My preferred gym is PureGym.", "I don't paint anymore."],
     {"user.preferred.gym": "PureGym"}),
    (a.F_NO_LONGER_DO_R12, ["My favourite pastime is jogging.", "I no longer jog, my knee is shot."], {}),
    (a.F_NO_LONGER_DO_R12, ["My favourite hobby is baking.", "I've stopped baking."], {}),
    # a refusal to pick a favourite makes no like
    (a.F_DECLINED_R12, ["Favourite film? Tough one, I like all of Ghibli's films."], {}),
]


@pytest.mark.parametrize("family, turns, facts", CLASSES)
def test_round12_class_gives_its_facts_and_only_with_its_family(mf, family, turns, facts):
    assert _facts_roles(mf, "on", turns) == facts
    with families.off([family]):
        assert _facts_roles(mf, "off", turns) != facts


@pytest.mark.parametrize("turns", [
    ["I switched to Mullvad last week."],  # nothing talked about
    ["My favourite band is Elbow.", "I switched to Tidal."],  # a favourite is no thing one switches to
    ["My preferred VPN is NordVPN.", "A:ok", "hi", "A:hello", "how are you", "A:fine", "I switched to Mullvad."],  # long ago
    ["My preferred bank is Monzo.", "I switched to decaf."],  # no name
])
def test_a_bare_switch_names_no_slot_unless_a_preferred_one_was_just_talked_about(mf, turns):
    before = _facts_roles(mf, "before", [t for t in turns if not t.startswith("I switched")])
    assert _facts_roles(mf, "after", turns) == before


@pytest.mark.parametrize("turns, facts", [
    (["When I was a kid, my favourite cereal is Weetabix."], {}),  # a clause in the past
    (["When is my preferred slot?"], {}),  # a question
    (["My favourite hobby is knitting.", "I no longer care."], {"user.favourite.hobby": "knitting"}),
    (["My favourite hobby is knitting.", "I no longer run."], {"user.favourite.hobby": "knitting"}),  # another activity
    (["My favourite season of the year is autumn."], {"user.favourite.season": "autumn"}),  # redundant unit
    (["My favourite running shoe is the Pegasus."], {"user.favourite.running_shoe": "the Pegasus"}),  # said singular
    (["I like all of Ghibli's films."], {"user.preference.all_of_ghibli_s_films": "likes all of Ghibli's films"}),
    (["Hard to choose, but I really enjoy the slow songs."], {"user.preference.the_slow_songs": "likes the slow songs"}),
])
def test_round12_classes_leave_what_they_do_not_name(mf, turns, facts):
    assert _facts_roles(mf, "x", turns) == facts


def test_just_talked_about_is_the_newest_attribute_fact_when_preferred_and_recent():
    said = [("user.preferred.vpn", ("turn:3",)), ("user.name", ("turn:5",))]
    assert a.just_talked_about(said, ("turn:7",)) == "user.preferred.vpn"
    assert a.just_talked_about(said, ("turn:8",)) is None  # more than RECENT_TURNS turns before
    assert a.just_talked_about(said, ("record:4",)) is None  # another kind of source
    assert a.just_talked_about(said + [("user.favourite.band", ("turn:6",))], ("turn:7",)) is None
    assert a.just_talked_about([("user.preferred.vpn", ("turn:9",))], ("turn:7",)) is None  # said after


def test_activity_forms():
    assert a._activity_forms("knit") == ["kniting", "knitting"]
    assert a._activity_forms("bake") == ["bakeing", "baking"]
    assert "painting" in a._activity_forms("paint") and "swimming" in a._activity_forms("swim")
