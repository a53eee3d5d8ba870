"""Secrets said in passing, guessed or answered to a usual security question (issue 15, point 8,
round 4): one test per rule, through the real pipeline (append with the facade's detector, then
compaction and the consolidation pass), each checking what the archive labels, what a reader
without the ``secret`` label sees, and that no card, fact or protected record holds the value."""

import json

import pytest

from memfold import Reader

ORDINARY = Reader.of([])


def _replay(mf, turns, namespace="bank/dana"):
    """Append ``turns`` ((role, text) pairs) to one conversation, fold it hard and consolidate it;
    return the conversation and the stored (labels, metadata) of every turn."""
    conv = mf.conversation(namespace.replace("/", "-"), namespace=namespace)
    ids = [conv.append({"role": role, "content": text}) for role, text in turns]
    for i in range(10):  # enough later turns for the secret ones to be folded into cards
        conv.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"later message {i} about the statement"})
    conv.compact(target_tokens=30, budget_tokens=60, output_reserve_tokens=0, hot_turns=2,
                 leaf_chunk_tokens=40, card_target_tokens=15)
    assert mf.consolidate(namespace, include_turns=True).status == "ok"
    stored = [mf.db.execute("SELECT labels, metadata FROM turns WHERE id = ?", [i]).fetchone() for i in ids]
    return conv, [(json.loads(labels), json.loads(metadata)) for labels, metadata in stored]


def _derived_text(mf):
    rows = list(mf.db.execute("SELECT COALESCE(key, '') || ' ' || content FROM records"))
    rows += list(mf.db.execute("SELECT text FROM cards"))
    rows += list(mf.db.execute("SELECT text FROM protected"))
    return " ".join(r[0] for r in rows)


def _shown(conv):
    return " ".join(m["content"] for m in conv.context(budget=4000, output_reserve=0, reader=ORDINARY).messages)


@pytest.mark.parametrize("text, value", [
    ("My first car was a Civic, if that is the question.", "Civic"),
    ("The city I was born in is Toledo.", "Toledo"),
    ("My childhood best friend was Marguerite.", "Marguerite"),
    ("My dad's middle name is Eustace.", "Eustace"),
    ("My mom, née Kowalczyk, banked here too.", "Kowalczyk"),
])
def test_a_security_question_topic_makes_the_whole_user_turn_secret(mf, text, value):
    conv, stored = _replay(mf, [("assistant", "How can I help?"), ("user", text)])
    assert stored[1] == (["secret"], {"secret_spans": [[0, len(text)]]})
    assert value not in _derived_text(mf) and value not in _shown(conv)


def test_an_ordinary_mention_of_a_car_or_a_birthplace_stays_readable(mf):
    conv, stored = _replay(mf, [("user", "Edinburgh is the birthplace of many writers."),
                                ("user", "I bought a new car last week.")])
    assert stored == [([], {}), ([], {})]


def test_a_pet_named_right_after_the_animal_is_secret(mf):
    text = "Sorry for the delay, my dog Rexford knocked the phone over."
    conv, stored = _replay(mf, [("assistant", "Anything else?"), ("user", text)])
    assert stored[1] == (["secret"], {"secret_spans": [[0, len(text)]]})
    assert "Rexford" not in _derived_text(mf) and "Rexford" not in _shown(conv)
    _, plain = _replay(mf, [("user", "My dog is sick so I am home today.")], namespace="bank/other")
    assert plain == [([], {})]


@pytest.mark.parametrize("text, masked", [
    ("I think it's 7402 but I am not sure.", "I think it's [secret] but I am not sure."),
    ("It might be 3941, I changed it in May.", "It might be [secret], I changed it in May."),
    ("probably 5508 then", "probably [secret] then"),
])
def test_a_pin_shaped_number_offered_as_a_guess_is_masked_without_any_keyword(mf, text, masked):
    conv, stored = _replay(mf, [("assistant", "Thanks for waiting, the branch is open until five."), ("user", text)])
    labels, metadata = stored[1]
    assert labels == ["secret"]
    start, end = metadata["secret_spans"][0]
    assert text[:start] + "[secret]" + text[end:] == masked
    value = text[start:end]
    assert value not in _derived_text(mf) and value not in _shown(conv)
    _, plain = _replay(mf, [("user", "I think it's 20 dollars more than last month.")], namespace="bank/other")
    assert plain == [([], {})]


@pytest.mark.parametrize("role, text, value", [
    ("assistant", "Your password for the banking app is Tr0ub4dor&3 until you change it.", "Tr0ub4dor&3"),
    ("assistant", "Done, your password's Zq81-mmx now.", "Zq81-mmx"),
])
def test_a_password_after_for_something_is_or_an_apostrophe_s_is_its_value(mf, role, text, value):
    conv, stored = _replay(mf, [("user", "I am locked out"), (role, text)])
    labels, metadata = stored[1]
    assert labels == ["secret"]
    [[start, end]] = metadata["secret_spans"]
    assert text[start:end] == value  # only the value: the rest of the turn stays readable
    assert value not in _derived_text(mf) and value not in _shown(conv)


def test_a_security_answer_said_again_later_in_passing_is_masked(mf):
    turns = [("assistant", "And what was the name of the pet you had as a child?"), ("user", "Biscuit"),
             ("assistant", "Your current balance is 2747 in credit."),
             ("user", "Oh no, that is far too low. I need to file a fraud report."),
             ("assistant", "Could you provide a detailed fraud report now, please?"),
             ("user", "Someone took money at a shop I never visited."),
             ("assistant", "Your report has been submitted."),
             ("user", "I am so upset. I miss Biscuit!")]  # seven turns after the answer
    conv, stored = _replay(mf, turns)
    assert stored[1] == (["secret"], {"secret_spans": [[0, 7]]})
    last = turns[-1][1]
    assert stored[-1] == (["secret"], {"secret_spans": [[last.index("Biscuit"), last.index("Biscuit") + 7]]})
    assert "Biscuit" not in _derived_text(mf) and "Biscuit" not in _shown(conv)


def test_a_word_said_before_the_answer_is_not_remembered_as_one(mf):
    # LoCoMo-shaped turns: the speakers' names come before any secret reply, so they are no answers
    turns = [("user", "Nate: Hey Joanna, long time!"), ("assistant", "Joanna: Hi Nate! What was your first pet?"),
             ("user", "Nate: my first pet was called Tilly, Joanna"), ("assistant", "Joanna: Aww, Nate, cute."),
             ("user", "Nate: Tilly was the best.")]
    _, stored = _replay(mf, turns, namespace="chat/nate")
    assert stored[2][0] == ["secret"]
    assert stored[3] == ([], {})  # "Nate" and "Joanna" were said before: not masked later
    assert stored[4][0] == ["secret"] and stored[4][1]["secret_spans"] == [[6, 11]]


def test_a_bare_pin_shaped_reply_to_an_identity_check_is_the_pin_given_unasked(mf):
    conv, stored = _replay(mf, [("assistant", "Can you tell me your account number, please?"), ("user", "5380"),
                                ("assistant", "Can you tell me your account number, please?"), ("user", "85731890")])
    assert stored[1] == (["secret"], {"secret_spans": [[0, 4]]})
    assert stored[3] == ([], {})  # an account number is longer than a PIN: it stays readable
    assert "5380" not in _derived_text(mf) and "5380" not in _shown(conv) and "85731890" in _shown(conv)


@pytest.mark.parametrize("text, value", [
    ("My Clearance Code is 9315831.", "9315831"),
    ("the door code is 4417, use it after six", "4417"),
    ("Here is my 2FA code: 882910", "882910"),
])
def test_a_code_named_by_what_it_unlocks_is_a_secret(mf, text, value):
    """Added after the fresh check set's one leak (a clearance code; in-sample since): a code named
    by what it opens or authorises (clearance, door, alarm, login, 2FA, recovery ...) is a secret."""
    conv, stored = _replay(mf, [("assistant", "How can I help?"), ("user", text)], namespace="ship/crew")
    assert stored[1][0] == ["secret"]
    assert value not in _derived_text(mf) and value not in _shown(conv)


def test_a_bare_reply_to_a_question_for_the_code_type_is_secret_and_other_codes_stay_readable(mf):
    conv, stored = _replay(mf, [("user", "The error code is 50312 and the zip code is 90210."),
                                ("assistant", "May I have the code and code type please?"), ("user", "425931")],
                           namespace="ship/crew")
    assert stored[0] == ([], {}) and stored[2][0] == ["secret"]
    assert "425931" not in _derived_text(mf) and "425931" not in _shown(conv)
