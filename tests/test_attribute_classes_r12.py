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
from phrasing_support import mf  # noqa: F401 (mf: a fixture)

ATTRIBUTE_KEYS = ("user.favourite.", "user.preferred.", "user.preference.")


def _facts(mf, ns, turns):
    conv = mf.conversation(f"a-{ns}", namespace=ns)
    for text in turns:
        conv.append({"role": "user", "content": text})
        mf.consolidate(ns, include_turns=True)
    return {r.key: r.content for r in mf.memory.list(ns, "semantic") if r.key and r.key.startswith(ATTRIBUTE_KEYS)}


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
