"""Changed user facts (address, contact preference, name, account number): the rules extractor
reads the ways people say a value changed, keeps its guards (user turns only, the user as
subject, no questions, no negations, no masks), and the new value supersedes the old one."""

from __future__ import annotations

import pytest

from memfold.consolidation.extractors.base import Episode, speaker_of
from memfold.consolidation.extractors.rules import RulesExtractor

NS = "acme/dana"


def facts(*texts):
    episodes = [Episode(f"record:{i}", speaker_of(t), t, float(i)) for i, t in enumerate(texts, 1)]
    return [p.render() for p in RulesExtractor().extract(episodes)]


@pytest.mark.parametrize("text, expected", [
    # address
    ("user: My address is 12 Elm Street.", ["user.address = 12 Elm Street"]),
    ("user: I moved. My new address is 99 Oak Avenue.", ["user.address = 99 Oak Avenue"]),
    ("user: My address is now 7 Pine Road, Capital City.", ["user.address = 7 Pine Road, Capital City"]),
    ("user: My address changed to 3 Ash Court.", ["user.address = 3 Ash Court"]),
    ("user: My address has changed from 12 Elm Street to 99 Oak Avenue.", ["user.address = 99 Oak Avenue"]),
    ("user: Please update my address: 8 Cedar Way.", ["user.address = 8 Cedar Way"]),
    ("user: Please change my shipping address to 21 Hill Road, Leeds.", ["user.address = 21 Hill Road, Leeds"]),
    ("user: Ship it to my new address, 14 Maple Drive", ["user.address = 14 Maple Drive"]),
    ("user: My mailing address: PO Box 442, Salem", ["user.address = PO Box 442, Salem"]),
    ("user: I live at 5 Birch Lane", ["user.address = 5 Birch Lane"]),
    ("user said their new address is 99 Oak Avenue", ["user.address = 99 Oak Avenue"]),
    ("user: My address is 1 Main St and my name is Dana", ["user.name = Dana", "user.address = 1 Main St"]),
    # "moved to": a street address is an address, a place is a location
    ("user: I moved to 5 Birch Lane", ["user.address = 5 Birch Lane"]),
    ("user: I've just moved to 5 Birch Lane, Springfield last week.", ["user.address = 5 Birch Lane, Springfield"]),
    ("user: I moved to PO Box 17", ["user.address = PO Box 17"]),
    ("user: I moved to Oslo", ["user.location = Oslo"]),
    ("user: I moved to 5th Avenue", ["user.location = 5th Avenue"]),  # no house number: a place
    ("user said they moved from Lyon to Oslo", ["user.location = Oslo"]),
    # contact preference
    ("user: please text me instead of emailing", ["user.contact_preference = text"]),
    ("user: from now on call me", ["user.contact_preference = phone"]),
    ("user: Please text me at 555-0142 from now on.", ["user.contact_preference = text"]),
    ("user: Don't call me, text me instead", ["user.contact_preference = text"]),
    ("user: Only email me", ["user.contact_preference = email"]),
    ("user: switch my contact preference to phone", ["user.contact_preference = phone"]),
    ("user: My preferred contact method is now email", ["user.contact_preference = email"]),
    ("user: From now on call me Dana", ["user.name = Dana"]),  # a name, not a channel
    # name
    ("user: I changed my name to Dana Smith", ["user.name = Dana Smith"]),
    ("user: I've changed my name to Dana Smith now.", ["user.name = Dana Smith"]),
    ("user: my new name is Dana Smith", ["user.name = Dana Smith"]),
    ("user: My name is now Dana Smith", ["user.name = Dana Smith"]),
    ("user: My name changed from Dana Jones to Dana Smith", ["user.name = Dana Smith"]),
    # account number
    ("user: my new account number is ACC-99881", ["user.account_id = ACC-99881"]),
    ("user: My account number is now 12345678.", ["user.account_id = 12345678"]),
    ("user: Please update my account number to 87654321", ["user.account_id = 87654321"]),
])
def test_changed_values_are_read(text, expected):
    assert facts(text) == expected


@pytest.mark.parametrize("text", [
    "user: My friend's new address is 1 Side St",            # about someone else
    "user: Ship it to my friend's new address, 1 Side St",
    "user: My friend moved to 5 Birch Lane",
    "user: My friend's new name is Sam",
    "user: My friend's new account number is 55555",
    "user: What is my address?",                              # questions
    "user: Can you update my address to 9 Pine Road?",
    "user asked whether their new address is 99 Oak Avenue",
    "user: Is my contact preference phone?",
    "user: My address is not 12 Elm Street",                  # negations
    "user: I haven't moved to 5 Birch Lane",
    "user: I haven't changed my name to Sam",
    "user: Please don't text me instead",
    "user: My old address was 12 Elm Street",                 # a past value is not the current one
    "user: My previous address is 12 Elm Street",
    "user: Please email me the receipt instead",              # a one-off, not a standing preference
    "user: Call me back later",
    "user: Only call me if it's urgent",
    "user: Please update my address to the one on file",      # no address in it
    "assistant: I've updated your address to 99 Oak Avenue",  # never from assistant text
    "assistant: My new address is 99 Oak Avenue",
    "agent said I moved to 5 Birch Lane",
    "tool: from now on call me",
    "user: My new account number is [secret]",                # a mask is no value
    "user: My new address is [secret]",
])
def test_no_changed_fact(text):
    assert facts(text) == []


def test_an_address_change_in_turns_supersedes_the_old_address(mf):
    conv = mf.conversation("t-1", namespace=NS)
    conv.append({"role": "user", "content": "My address is 12 Elm Street."})
    conv.append({"role": "assistant", "content": "Thanks, noted 12 Elm Street."})
    mf.consolidate(NS, include_turns=True)
    conv.append({"role": "user", "content": "I moved. My new address is 99 Oak Avenue."})
    conv.append({"role": "assistant", "content": "Updated your address to 99 Oak Avenue."})
    mf.consolidate(NS, include_turns=True)

    rows = mf.memory.list(NS, "semantic", key="user.address", include_inactive=True)
    assert [(r.content, r.status) for r in rows] == [("12 Elm Street", "retired"), ("99 Oak Avenue", "active")]
    old, new = rows
    assert old.superseded_by == new.id and new.supersedes == old.id
    turn_ids = [t.id for t in conv.history()]
    assert new.provenance == (f"turn:{turn_ids[2]}",)
    assert [r.content for r in mf.memory.list(NS, "semantic", key="user.location")] == []


def test_changes_in_one_pass_keep_the_latest_of_each_slot(mf):
    conv = mf.conversation("t-2", namespace=NS)
    for text in ("My name is Dana Jones and I prefer email.", "My account number is 11112222.",
                 "I changed my name to Dana Smith.", "Please text me instead of emailing.",
                 "My new account number is 33334444.", "I moved to 5 Birch Lane"):
        conv.append({"role": "user", "content": text})
    mf.consolidate(NS, include_turns=True)
    current = {r.key: r.content for r in mf.memory.list(NS, "semantic")}
    assert current == {"user.name": "Dana Smith", "user.contact_preference": "text",
                       "user.account_id": "33334444", "user.address": "5 Birch Lane"}
    retired = {(r.key, r.content) for r in mf.memory.list(NS, "semantic", include_inactive=True) if r.status == "retired"}
    assert retired == {("user.name", "Dana Jones"), ("user.contact_preference", "email"), ("user.account_id", "11112222")}
