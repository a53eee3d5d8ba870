"""The round-16 attribute classes of issue 20, point 11, through a real MemFold conversation.

``fresh12`` (written blind in round 15, measured once blind then: 81.0% of its attribute facts) was
read for the class of each miss; each class is its own family in
``consolidation/extractors/attributes.py``, registered with ``fresh12``. The sentences below are new
paraphrases, not items of any phrasing set: each gives its facts with the family on and something
else with it off; the near misses beside them (at least one per family) make sure each class stays
narrow: they must keep the facts stated before them and make no new one.
"""

from __future__ import annotations

import pytest

from memfold.consolidation.extractors import attributes as a
from memfold.memory import families
from phrasing_support import mf  # noqa: F401 (a fixture)
from phrasing_support import attribute_facts as _facts

#: (family, turns, the facts with the family on)
CLASSES = [
    # an attribute inside an embedded question states no value
    (a.F_EMBEDDED_Q_R16, ["My nephew asked me what my favourite dinosaur is and I said I'd think about it."], {}),
    (a.F_EMBEDDED_Q_R16, ["The barista wondered whether my usual order is still an oat latte, and I laughed."], {}),
    (a.F_EMBEDDED_Q_R16, ["Nobody knows which my preferred route is to the office, not even me."], {}),
    # words that comment on a value open it, sit in commas inside the statement, or follow it
    (a.F_FILLER_R16, ["My favourite band is, bar none, Elbow."], {"user.favourite.band": "Elbow"}),
    (a.F_FILLER_R16, ["My preferred bakery is unquestionably Greggs."], {"user.preferred.bakery": "Greggs"}),
    (a.F_FILLER_R16, ["My favourite novel is, ever since I was a teenager, Jane Eyre."], {"user.favourite.novel": "Jane Eyre"}),
    (a.F_FILLER_R16, ["My favourite ground is Anfield to this day."], {"user.favourite.ground": "Anfield"}),
    (a.F_FILLER_R16, ["My favourite walk is far and away Helvellyn."], {"user.favourite.walk": "Helvellyn"}),
    # a capitalised "-ing" word opening a title is no event in progress
    (a.F_TITLE_ING_R16, ["My favourite song is Running Up That Hill."], {"user.favourite.song": "Running Up That Hill"}),
    (a.F_TITLE_ING_R16, ["My favourite painting is Skating by Henry Raeburn."],
     {"user.favourite.painting": "Skating by Henry Raeburn"}),
    # "back" after a side or a part of a team is a position
    (a.F_BACK_NOUN_R16, ["My preferred position is right back now."], {"user.preferred.position": "right back"}),
    (a.F_BACK_NOUN_R16, ["My favourite position to play is centre back."], {"user.favourite.position": "centre back"}),
    (a.F_BACK_NOUN_R16, ["My preferred position is left-back these days."], {"user.preferred.position": "left-back"}),
    # a contact word before a time noun says when
    (a.F_CONTACT_TIME_R16, ["My preferred contact hours are 9-11am GMT."], {"user.preferred.contact_hour": "9-11am GMT"}),
    (a.F_CONTACT_TIME_R16, ["My preferred communication window is Tuesday afternoons."],
     {"user.preferred.communication_window": "Tuesday afternoons"}),
    # a purpose with a stranded preposition is part of the attribute
    (a.F_PURPOSE_R16, ["My favourite music to work to is lo-fi hip hop."], {"user.favourite.music_to_work_to": "lo-fi hip hop"}),
    (a.F_PURPOSE_R16, ["My favourite city to get lost in is Venice."], {"user.favourite.city_to_get_lost_in": "Venice"}),
    # a switch said with a light verb or an aspect verb
    (a.F_SWITCH_PERIPHRASIS_R16, ["My preferred browser is Chrome.", "I finally made the switch to Firefox."],
     {"user.preferred.browser": "Firefox"}),
    (a.F_SWITCH_PERIPHRASIS_R16, ["I wound up changing my dentist to Dr Okafor."], {"user.preferred.dentist": "Dr Okafor"}),
    (a.F_SWITCH_PERIPHRASIS_R16, ["My preferred bank is Barclays.", "I got round to switching my bank to Starling."],
     {"user.preferred.bank": "Starling"}),
    (a.F_SWITCH_PERIPHRASIS_R16, ["My preferred airline is Ryanair.", "Made the change from Ryanair to Jet2."],
     {"user.preferred.airline": "Jet2"}),
    # a value rejected for good
    (a.F_REJECTED_R16, ["My preferred cinema is the Odeon.", "The Odeon is dead to me since they cut the seats."], {}),
    (a.F_REJECTED_R16, ["My favourite gym class is Zumba.", "Zumba is no longer for me."], {}),
    (a.F_REJECTED_R16, ["My preferred streaming service is Spotify.", "Spotify doesn't do it for me anymore."], {}),
    (a.F_REJECTED_R16, ["My favourite takeaway is Dominos.", "Dominos isn't for me any longer."], {}),
    # a value renounced
    (a.F_SWORN_OFF_R16, ["My favourite fizzy drink is Irn-Bru.", "I swore off Irn-Bru in January."], {}),
    (a.F_SWORN_OFF_R16, ["My preferred social network is Twitter.", "I've turned my back on Twitter."], {}),
    (a.F_SWORN_OFF_R16, ["My preferred taxi app is Uber.", "I've said goodbye to Uber for good."], {}),
    # given up, then never taken up again
    (a.F_GAVE_UP_FOR_R16, ["My favourite crisps are Monster Munch.", "I gave up Monster Munch and never went back."], {}),
    (a.F_GAVE_UP_FOR_R16, ["My preferred ride app is Bolt.", "I quit Bolt and haven't looked back."], {}),
    (a.F_GAVE_UP_FOR_R16, ["My favourite biscuit is a Hobnob.", "I gave up Hobnobs for Lent and never went back."], {}),
    # an activity with an object stopped, said with "anymore"
    (a.F_NOT_DOING_R16, ["My favourite game is Fortnite.", "I'm not playing Fortnite anymore."], {}),
    (a.F_NOT_DOING_R16, ["My favourite show is Love Island.", "Honestly, not watching Love Island any more."], {}),
]


@pytest.mark.parametrize("family, turns, facts", CLASSES, ids=[f"{c[0]}-{n}" for n, c in enumerate(CLASSES)])
def test_round16_class_with_its_family_and_not_without(mf, family, turns, facts):
    assert _facts(mf, "on", turns) == facts
    with families.off([family]):
        assert _facts(mf, "off", turns) != facts


#: near misses, at least one per family: the facts stated first stay, and nothing new is written
NEAR_MISSES = [
    # embedded question: a question about someone else's favourite changes nothing the user stated
    (a.F_EMBEDDED_Q_R16, ["My favourite colour is teal.", "She asked what my sister's favourite colour is."],
     {"user.favourite.colour": "teal"}),
    # comment words: a title in title case keeps words that look like them
    (a.F_FILLER_R16, ["My favourite film is To This Day."], {"user.favourite.film": "To This Day"}),
    # "-ing" title: a lower-case event in progress stays no fact
    (a.F_TITLE_ING_R16, ["My favourite cousin is coming up for the weekend."], {}),
    # "back": a filler "back" after a value that is no position goes, as before
    (a.F_BACK_NOUN_R16, ["My preferred gym is PureGym again, I moved back."], {"user.preferred.gym": "PureGym"}),
    # contact time: a contact word as the head stays the contact slot (no attribute)
    (a.F_CONTACT_TIME_R16, ["My preferred contact method is text."], {}),
    # purpose: a purpose with no stranded preposition stays a qualifier, and a pronoun names no kind
    (a.F_PURPOSE_R16, ["My favourite sport to play is squash."], {"user.favourite.sport": "squash"}),
    (a.F_PURPOSE_R16, ["My favourite one to sing along to is Dancing Queen."], {}),
    # switch periphrasis: a switch only thought of is no switch made
    (a.F_SWITCH_PERIPHRASIS_R16, ["My preferred browser is Chrome.", "I'm thinking of making the switch to Firefox."],
     {"user.preferred.browser": "Chrome"}),
    # rejected: "isn't for me" alone is a gift or a dislike, not a value given up
    (a.F_REJECTED_R16, ["My favourite cake is the lemon drizzle.", "The lemon drizzle isn't for me, it's for Sam."],
     {"user.favourite.cake": "the lemon drizzle"}),
    # sworn off: a value held elsewhere is not retired by a renounced other thing
    (a.F_SWORN_OFF_R16, ["My favourite fizzy drink is Irn-Bru.", "I've sworn off sugar in my tea."],
     {"user.favourite.fizzy_drink": "Irn-Bru"}),
    # given up for a while: without "never went back" it is a while without it
    (a.F_GAVE_UP_FOR_R16, ["My favourite sweet is Haribo.", "I gave up Haribo for Lent."], {"user.favourite.sweet": "Haribo"}),
    # not doing: one time without "anymore"
    (a.F_NOT_DOING_R16, ["My favourite game is Fortnite.", "Not playing Fortnite tonight, I'm shattered."],
     {"user.favourite.game": "Fortnite"}),
]


@pytest.mark.parametrize("family, turns, facts", NEAR_MISSES, ids=[f"{c[0]}-{n}" for n, c in enumerate(NEAR_MISSES)])
def test_round16_near_misses_keep_their_facts(mf, family, turns, facts):
    assert _facts(mf, "near", turns) == facts


def test_still_my_favourite_after_a_round16_retirement_form_keeps_the_slot(mf):
    turns = ["My favourite game is FIFA.", "I'm not playing FIFA anymore, but it's still my favourite game."]
    assert _facts(mf, "still", turns) == {"user.favourite.game": "FIFA"}
