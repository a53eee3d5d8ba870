"""The round-15 attribute classes of issue 20, point 11, through a real MemFold conversation.

``fresh11`` (written blind in round 13, measured once blind in round 14: 87.0% of its attribute
facts) was read for the class of each miss; each class is its own family in
``consolidation/extractors/attributes.py``, registered with ``fresh11``. The sentences below are new
paraphrases, not items of any phrasing set: each gives its facts with the family on and something
else with it off; the near misses beside them make sure each class stays narrow.
"""

from __future__ import annotations

import pytest

from memfold.consolidation.extractors import attributes as a
from memfold.memory import families
from phrasing_support import mf  # noqa: F401 (a fixture)
from phrasing_support import attribute_facts as _facts

#: (family, turns, the facts with the family on)
CLASSES = [
    # a lead that speaks to the conversation is no condition on the fact
    (a.F_DISCOURSE_LEAD_R15, ["If you must know, my favourite painter is Turner."], {"user.favourite.painter": "Turner"}),
    (a.F_DISCOURSE_LEAD_R15, ["If you're curious, my preferred airline is KLM."], {"user.preferred.airline": "KLM"}),
    (a.F_DISCOURSE_LEAD_R15, ["If you want to know, my favourite biscuit is a custard cream."],
     {"user.favourite.biscuit": "a custard cream"}),
    # a request to note carries the statement
    (a.F_REQUEST_NOTE_R15, ["Can you remember that my preferred supermarket is Lidl?"], {"user.preferred.supermarket": "Lidl"}),
    (a.F_REQUEST_NOTE_R15, ["Would you please note my favourite composer is Elgar?"], {"user.favourite.composer": "Elgar"}),
    # a request to forget a held value retires its slot
    (a.F_FORGET_R15, ["My preferred podcast app is Overcast.", "Can you forget Overcast? I deleted it."], {}),
    (a.F_FORGET_R15, ["My favourite cafe is Bean There.", "Please forget about Bean There."], {}),
    # a remark in brackets comments on a value
    (a.F_BRACKET_R15, ["My favourite tea is Lapsang (the smoky one)."], {"user.favourite.tea": "Lapsang"}),
    (a.F_BRACKET_R15, ["My preferred editor is Helix [the modal one]."], {"user.preferred.editor": "Helix"}),
    # commas around a comment; time words after a value
    (a.F_FILLER_R15, ["My favourite walk is, as it happens, Stanage Edge."], {"user.favourite.walk": "Stanage Edge"}),
    (a.F_FILLER_R15, ["My favourite snack is, admittedly, Wotsits."], {"user.favourite.snack": "Wotsits"}),
    (a.F_FILLER_R15, ["My favourite podcast is Desert Island Discs in recent months."],
     {"user.favourite.podcast": "Desert Island Discs"}),
    # texting words read as what they stand for
    (a.F_TEXTING_R15, ["My favourite pizza is deffo a margherita."], {"user.favourite.pizza": "a margherita"}),
    (a.F_TEXTING_R15, ["switched my energy supplier to Octopus last wk"], {"user.preferred.energy_supplier": "Octopus"}),
    (a.F_TEXTING_R15, ["My favourite band is prolly Elbow."], {}),
    # "X and I are finished", "I'm through with X"
    (a.F_FINISHED_R15, ["My favourite cereal is Weetabix.", "Weetabix and I are done, too bland."], {}),
    (a.F_FINISHED_R15, ["My preferred gym is PureGym.", "I'm through with PureGym."], {}),
    (a.F_FINISHED_R15, ["My favourite app is Strava.", "Strava and me have parted ways."], {}),
    # a switch to a bare name, then a reason
    (a.F_SWITCH_REASON_R15, ["My preferred browser is Chrome.", "I switched to Vivaldi, it's faster on my laptop."],
     {"user.preferred.browser": "Vivaldi"}),
    # a contact word after another head noun only qualifies it
    (a.F_CONTACT_QUALIFIER_R15, ["My preferred time for contact is the evening."],
     {"user.preferred.time_for_contact": "the evening"}),
]


@pytest.mark.parametrize("family, turns, facts", CLASSES, ids=[f"{c[0]}-{n}" for n, c in enumerate(CLASSES)])
def test_round15_class_with_its_family_and_not_without(mf, family, turns, facts):
    assert _facts(mf, "on", turns) == facts
    with families.off([family]):
        assert _facts(mf, "off", turns) != facts


def test_declined_pick_of_many_is_no_preference_and_one_pick_stays(mf):
    turns = ["Favourite? Tough to say, I like loads of bands."]
    assert _facts(mf, "many", turns) == {}
    with families.off([a.F_DECLINED_MANY_R15]):
        assert _facts(mf, "many-off", turns) != {}
    assert _facts(mf, "one", ["Hard to choose, but I really like Radiohead."]) == {"user.preference.radiohead": "likes Radiohead"}


NEAR_MISSES = [
    # a real condition stays no fact; a request about someone else is no fact about the user
    (["If I had a favourite painter, it would be Turner."], {}),
    (["Could you note that my brother's favourite team is Spurs?"], {}),
    # "don't forget" retires nothing
    (["My preferred airline is KLM.", "Don't forget KLM needs a passport number."], {"user.preferred.airline": "KLM"}),
    # "Def Leppard" is a name, not "definitely"
    (["My favourite band is Def Leppard."], {"user.favourite.band": "Def Leppard"}),
    # "we're done with X" is a task finished, not a like ended
    (["My favourite pub is The Crown.", "We're done with The Crown quiz for tonight."], {"user.favourite.pub": "The Crown"}),
    # a contact word as the head stays the contact slot's (no attribute)
    (["My preferred contact method is email."], {}),
]


@pytest.mark.parametrize("turns, facts", NEAR_MISSES)
def test_round15_near_misses_keep_their_facts(mf, turns, facts):
    assert _facts(mf, "near", turns) == facts
