"""The round-10 attribute classes of issue 20, point 11, each through a real MemFold conversation.

``fresh6`` (written blind in round 9, measured twice blind: 89.8% of its attribute facts) was read
for the *class* of each miss, with the misses of the same class left in earlier sets (fresh5);
each class is one rule family registered in ``memfold.memory.families`` with the sets it was
written from. One case per family at least: sentences of its class (new ones written here, not
items of any phrasing set) appended as user turns to a real database file and consolidated, the
active facts afterwards, and the same turns giving something else with that family turned off.
Common shapes written from no set's misses (``attr_common_forms_r10``: "I'm done with X", "X has
taken over as my favourite Y", ...) are tested the same way. Then small talk in the attribute shapes (the round-8 QA cases' class and LoCoMo's "I love ...")
that must make no fact, with the veto family shown to be what keeps each out, and the one-search
gate over sentences no rule can read, compared with the full rules on every phrasing set.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memfold.consolidation.extractors import attributes as a
from memfold.consolidation.extractors.rules import _sentences
from memfold.memory import families
from phrasing_support import mf  # noqa: F401 (mf: a fixture)
from phrasing_support import attribute_facts as _facts

DATA = Path(__file__).parent / "data"


#: (family, user turns, the active attribute facts afterwards)
ATTRIBUTES = [
    (a.F_SWITCH_THEN_R10, ["I changed banks, I use Nationwide now."], {"user.preferred.bank": "Nationwide"}),
    (a.F_SWITCH_THEN_R10, ["My preferred vet is Vets4Pets.", "I've switched vets - I'm with Parkside now."],
     {"user.preferred.vet": "Parkside"}),
    (a.F_SWITCH_BARE_R10, ["I switched broker to Freetrade."], {"user.preferred.broker": "Freetrade"}),
    (a.F_SWITCH_BARE_R10, ["My preferred florist is Bloom.", "I changed florist to a shop called Petals."],
     {"user.preferred.florist": "Petals"}),
    (a.F_NO_LONGER_R10, ["My favourite podcast is Serial.", "not into Serial any more"], {}),
    (a.F_NO_LONGER_R10, ["My preferred garage is Kwik Fit.", "I don't take the van to Kwik Fit anymore."], {}),
    (a.F_NO_LONGER_R10, ["My favourite magazine is Wired.", "I stopped reading Wired ages ago."], {}),
    (a.F_NO_LONGER_R10, ["My preferred bank is Lloyds.", "Lloyds isn't my preferred bank any longer."], {}),
    (a.F_HOLDS_R10, ["My preferred laptop brand is Lenovo.", "I don't buy Lenovo laptops anymore."], {}),
    (a.F_HOLDS_R10, ["My favourite cocktail is a mojito.", "My favourite cake is carrot cake.", "I've stopped drinking mojitos."],
     {"user.favourite.cake": "carrot cake"}),
    (a.F_CANCELLED_MY, ["My favourite streaming service is Mubi.", "I cancelled my Mubi subscription."], {}),
    (a.F_TITLE_FILLER, ["My favourite film is Apocalypse Now."], {"user.favourite.film": "Apocalypse Now"}),
    (a.F_TITLE_FILLER, ["My favourite Oasis album is still Be Here Now."], {"user.favourite.oasis_album": "Be Here Now"}),
    (a.F_TITLE_FILLER, ["My favourite Neil Diamond song is Hello Again."],
     {"user.favourite.neil_diamond_song": "Hello Again"}),
    (a.F_INVERTED_TAIL, ["Porto is my favourite city hands down."], {"user.favourite.city": "Porto"}),
    (a.F_COMMON_R10, ["My favourite app is TikTok.", "I'm done with TikTok."], {}),
    (a.F_COMMON_R10, ["My preferred supermarket is Asda.", "I've gone off Asda."], {}),
    (a.F_COMMON_R10, ["My favourite band is Keane.", "I can't stand Keane any more."], {}),
    (a.F_COMMON_R10, ["My preferred airline is Ryanair.", "I haven't flown with Ryanair in years."], {}),
    (a.F_COMMON_R10, ["My favourite fruit is kiwi.", "Mango has taken over as my favourite fruit."], {"user.favourite.fruit": "Mango"}),
    (a.F_COMMON_R10, ["My preferred music app is Deezer.", "Qobuz has replaced Deezer as my preferred music app."],
     {"user.preferred.music_app": "Qobuz"}),
    (a.F_COMMON_R10, ["My favourite band used to be Muse, now it's Idles."], {"user.favourite.band": "Idles"}),
    (a.F_COMMON_R10, ["My favourite food is pizza.", "Pizza used to be my favourite food."], {}),
    (a.F_COMMON_R10, ["My preferred browser is Firefox.", "I've been using Vivaldi instead of Firefox for a while now."],
     {"user.preferred.browser": "Vivaldi"}),
    (a.F_COMMON_R10, ["My go-to takeaway is Thai rather than Indian."], {"user.preferred.takeaway": "Thai"}),
    (a.F_COMMON_R10, ["My favourite board game has to be Azul."], {"user.favourite.board_game": "Azul"}),
    (a.F_COMMON_R10, ["My favourite album would have to be OK Computer."], {"user.favourite.album": "OK Computer"}),
    (a.F_COMMON_R10, ["Nothing beats Malbec, it's my favourite wine."], {"user.favourite.wine": "Malbec"}),
    (a.F_COMMON_R10, ["My favourite poet is, without question, Seamus Heaney."], {"user.favourite.poet": "Seamus Heaney"}),
    (a.F_COMMON_R10, ["My favourite show is Taskmaster.", "Taskmaster isn't my favourite anymore."], {}),
    (a.F_COMMON_R10, ["My favourite pub is The Anchor.", "We don't go to The Anchor anymore."], {}),
]


@pytest.mark.parametrize("family, turns, facts", ATTRIBUTES)
def test_each_round10_attribute_class_keeps_one_value_and_only_with_its_family(mf, family, turns, facts):
    assert _facts(mf, "on", turns) == facts
    with families.off([family]):
        assert _facts(mf, "off", turns) != facts


def test_filler_after_a_title_is_still_cut_when_it_is_lower_case(mf):
    assert _facts(mf, "n", ["My favourite film is Apocalypse Now these days."]) == {"user.favourite.film": "Apocalypse Now"}
    assert _facts(mf, "m", ["My favourite film is Blade Runner now."]) == {"user.favourite.film": "Blade Runner"}


def test_a_common_noun_before_the_held_value_retires_nothing(mf):
    # "tea shops" is no form of the favourite drink "tea": only a named value takes a noun after it
    assert _facts(mf, "n", ["My favourite drink is tea.", "I don't go to tea shops anymore."]) == {
        "user.favourite.drink": "tea"}


#: small talk in the attribute shapes: no fact (figures of speech, settings, one-off moves, laughter,
#: adverbs and activities after "gave up"/"quit", compliments and reactions after "I love"), with
#: the families whose rules keep each out
SMALL_TALK = [(text, [a.F_SMALL_TALK_R10]) for text in [
    "I moved over from the sofa to the armchair.",
    "Switched my laptop to dark mode lol",
    "Just switched my phone to vibrate",
    "Moved my dentist appointment to Thursday.",
    "I changed my flight to the morning one.",
    "I changed my mind about the trip, it's off.",
    "Haha, that's my favourite meme",
    "I gave up early, it was too hot.",
    "I quit halfway through the film.",
    "I dropped off the parcel on the way home.",
    "I love your garden so much!",
    "I love them!",
    "I love this!",
    "I love how it turned out.",
    "I enjoy the idea.",
]] + [(text, []) for text in [  # the common forms' own idioms, kept out by their rules
    "I'm over the moon about it!",
    "I'm off to Leeds tomorrow.",
    "I'm off work today.",
]]


@pytest.mark.parametrize("text, vetoes", SMALL_TALK)
def test_small_talk_in_the_attribute_shapes_makes_no_fact_and_the_veto_is_what_keeps_it_out(mf, text, vetoes):
    assert _facts(mf, "on", [text]) == {}
    if vetoes:
        with families.off(vetoes):
            off = _facts(mf, "off", [text])
            statements = a.attribute_statements(text)
        assert off or statements  # without the veto the sentence reads as a fact (or a retirement of one)
    else:
        assert a.attribute_statements(text) == []


def test_laughter_after_an_attribute_is_cut_from_its_name(mf):
    assert _facts(mf, "n", ["Naps, that's my favourite pastime lol"]) == {"user.favourite.pastime": "Naps"}


def test_a_switch_to_a_named_value_from_a_common_noun_is_still_a_switch(mf):
    # the veto on "moved over from the couch to the bed" needs an unnamed new value, not an unnamed old one
    facts = _facts(mf, "n", ["My preferred gym is the leisure centre.", "I've moved over from the leisure centre to PureGym."])
    assert facts == {"user.preferred.gym": "PureGym"}


def _phrasing_sentences():
    out = set()
    for path in sorted(DATA.glob("attribute_phrasings*.json")):
        for item in json.loads(path.read_text(encoding="utf-8"))["items"]:
            for turn in item["turns"]:
                out.add(turn["text"])
                out.update(_sentences(turn["text"]))
    return sorted(out)


@pytest.mark.parametrize("off", [(), tuple(families.REGISTRY)], ids=["all-on", "all-off"])
def test_the_one_search_gate_passes_over_only_sentences_no_rule_reads(off):
    # every attribute phrasing (and each sentence of it) gives the same statements through the gate
    # and the cache as through the full rules, with every family on and with every family off
    sentences = _phrasing_sentences()
    assert len(sentences) > 600
    with families.off(off):
        differ = [s for s in sentences if a.attribute_statements(s) != a._read_sentence(s)]
    assert differ == []
    assert any(a.attribute_statements(s) for s in sentences)


def test_the_cache_answers_for_the_families_off_when_asked():
    text = "My favourite film is Apocalypse Now."
    assert [s.value for s in a.attribute_statements(text)] == ["Apocalypse Now"]
    with families.off([a.F_TITLE_FILLER]):
        assert [s.value for s in a.attribute_statements(text)] == ["Apocalypse"]
    assert [s.value for s in a.attribute_statements(text)] == ["Apocalypse Now"]


def test_every_round10_attribute_family_names_the_sets_it_was_written_from():
    assert families.REGISTRY["attr_switch_then_now"] == {"fresh5", "fresh6"}
    assert families.REGISTRY["attr_switch_bare_noun"] == {"fresh5", "fresh6"}
    assert families.REGISTRY["attr_holds_head_noun"] == {"fresh5", "fresh6"}
    assert families.REGISTRY["attr_no_longer_forms_r10"] == {"fresh6"}
    assert families.REGISTRY["attr_title_ends_in_filler"] == {"fresh6"}
    assert families.REGISTRY["attr_cancelled_my"] == {"fresh5"}
    assert families.REGISTRY["attr_inverted_tail"] == {"fresh5"}
    # the vetoes come from small talk, not from a phrasing set: never off in --loso
    assert families.REGISTRY["attr_small_talk_vetoes_r10"] == {"round8_qa", "locomo"}
    assert families.REGISTRY["attr_common_forms_r10"] == {"r10own"}  # written from no set's misses
    assert {"attr_no_longer_forms_r10", "attr_title_ends_in_filler"} <= set(families.motivated_only_by("fresh6"))
