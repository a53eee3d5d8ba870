"""Secrets at append, in the library (issue 9): every turn appended through a Conversation is read
by the facade's secret detector; secret turns are labelled, hidden from readers without the label,
never in card text, and consolidation reads them only with each secret span masked."""

import json

import pytest

from memfold import InvalidInput, MemFold, Proposal, Reader, SecretDetector
from memfold.consolidation.extractors.base import Episode, Extractor
from memfold.consolidation.extractors.rules import answer_facts, masked_answer_value
from memfold.window.secrets import SECRET_MASK, redact

ORDINARY = Reader.of([])


def _stored(mf, turn_id):
    labels, metadata = mf.db.execute("SELECT labels, metadata FROM turns WHERE id = ?", [turn_id]).fetchone()
    return json.loads(labels), json.loads(metadata)


def _all_record_text(mf):
    return " ".join(f"{r[0]} {r[1]}" for r in mf.db.execute("SELECT COALESCE(key, ''), content FROM records"))


def test_append_labels_a_pin_secret_and_hides_it_from_readers_without_the_label(mf):
    conv = mf.conversation("bank", namespace="bank/tyler")
    conv.append({"role": "user", "content": "Hi, I need my balance please"})
    conv.append({"role": "assistant", "content": "Sure, one moment."})
    pin_id = conv.append({"role": "user", "content": "my PIN is 4471"})
    plain_id = conv.append({"role": "user", "content": "and my account number is 12345678"})
    labels, metadata = _stored(mf, pin_id)
    assert labels == ["secret"] and metadata["secret_spans"] == [[10, 14]]
    assert _stored(mf, plain_id) == ([], {})
    ordinary = " ".join(m["content"] for m in conv.context(budget=400, output_reserve=0, reader=ORDINARY).messages)
    assert "4471" not in ordinary and "12345678" in ordinary
    owner = " ".join(m["content"] for m in conv.context(budget=400, output_reserve=0, reader=["secret"]).messages)
    assert "my PIN is 4471" in owner


def test_a_card_over_a_detected_pin_never_holds_it(mf):
    conv = mf.conversation("bank", namespace="bank/tyler")
    conv.append({"role": "user", "content": "Hi I need help with my account balance please"})
    pin_id = conv.append({"role": "user", "content": "my PIN is 4471 and my account is 12345678"})
    for i in range(8):
        conv.append({"role": "user" if i % 2 == 0 else "assistant",
                     "content": f"follow up message number {i} about the statement"})
    conv.compact(target_tokens=30, budget_tokens=60, output_reserve_tokens=0, hot_turns=2,
                 leaf_chunk_tokens=40, card_target_tokens=15)
    folded = mf.db.execute("SELECT c.text FROM cards c JOIN card_covers v ON v.card_id = c.id "
                           "WHERE v.child_kind = 'turn' AND v.child_id = ?", [pin_id]).fetchall()
    assert folded, "the secret turn was folded into a card"
    assert all("4471" not in text for (text,) in folded)
    assert all("4471" not in text for (text,) in mf.db.execute("SELECT text FROM cards"))


def test_consolidation_reads_the_masked_turn_and_never_the_pin(mf):
    conv = mf.conversation("bank", namespace="bank/tyler")
    conv.append({"role": "assistant", "content": "Can you tell me your account number, please?"})
    reply = conv.append({"role": "user", "content": "85731890, with PIN 4471"})
    assert _stored(mf, reply)[0] == ["secret"]
    run = mf.consolidate("bank/tyler", include_turns=True)
    assert run.status == "ok" and run.turns_consumed == 2
    facts = {r.key: r.content for r in mf.memory.list("bank/tyler", type="semantic")}
    assert facts == {"user.account_id": "85731890"}
    assert "4471" not in _all_record_text(mf)
    assert f"turn:{reply}" in json.dumps([r.provenance for r in mf.memory.list("bank/tyler", type="semantic")])


def test_a_wholly_secret_turn_is_never_read_and_does_not_stall_the_cursor(mf):
    conv = mf.conversation("bank", namespace="bank/tyler")
    conv.append({"role": "assistant", "content": "What is your PIN?"})
    whole = conv.append({"role": "user", "content": "4471"})  # answers a secret question: all of it
    caller = conv.append({"role": "user", "content": "my name is Sam Reed", "labels": ["secret"]})  # no spans
    assert _stored(mf, whole)[1]["secret_spans"] == [[0, 4]]
    assert _stored(mf, caller) == (["secret"], {})
    first = mf.consolidate("bank/tyler", include_turns=True, batch_size=1)
    assert first.status == "ok" and "4471" not in _all_record_text(mf) and "Sam Reed" not in _all_record_text(mf)
    conv.append({"role": "user", "content": "my name is Dana Ruiz"})
    second = mf.consolidate("bank/tyler", include_turns=True, batch_size=1)
    assert second.facts_written == 1
    assert {r.key: r.content for r in mf.memory.list("bank/tyler", type="semantic")} == {"user.name": "Dana Ruiz"}


def test_setting_off_labels_nothing(db_path, clock):
    mf = MemFold(db_path, clock=clock, token_counter="words", secrets="off")
    try:
        conv = mf.conversation("bank")
        ids = conv.append_many([{"role": "assistant", "content": "What is your PIN?"},
                                {"role": "user", "content": "my PIN is 4471"}])
        assert [_stored(mf, i) for i in ids] == [([], {}), ([], {})]
        assert mf.secret_detector is None
    finally:
        mf.close()


def test_bad_setting_is_refused(db_path, clock):
    with pytest.raises(InvalidInput, match="secrets must be 'detect', 'off' or a detector"):
        MemFold(db_path, clock=clock, token_counter="words", secrets="maybe")


def test_caller_labels_are_kept_and_merged(mf):
    conv = mf.conversation("bank")
    turn_id = conv.append({"role": "user", "content": "my PIN is 4471", "labels": ["vip"],
                           "metadata": {"channel": "chat"}})
    labels, metadata = _stored(mf, turn_id)
    assert sorted(labels) == ["secret", "vip"]
    assert metadata == {"channel": "chat", "secret_spans": [[10, 14]]}


def test_a_new_handle_reads_the_last_archived_turn_first(mf):
    mf.conversation("bank").append({"role": "assistant", "content": "And what was the name of the pet you had?"})
    turn_id = mf.conversation("bank").append({"role": "user", "content": "Biscuit"})
    assert _stored(mf, turn_id)[0] == ["secret"]


def test_append_many_and_import_jsonl_are_checked_with_the_turn_before(mf, tmp_path):
    conv = mf.conversation("bank")
    ids = conv.append_many([{"role": "assistant", "content": "Your mother's maiden name?"},
                            {"role": "user", "content": "Sanders"},
                            {"role": "user", "content": "thanks"}])
    assert [_stored(mf, i)[0] for i in ids] == [[], ["secret"], []]
    path = tmp_path / "chat.jsonl"
    path.write_text('{"role": "assistant", "content": "What is your PIN?"}\n{"role": "user", "content": "7402"}\n')
    other = mf.conversation("imported")
    imported = other.import_jsonl(path)
    assert [_stored(mf, i)[0] for i in imported] == [[], ["secret"]]


class OnlyDigits:
    """A custom detector: every run of 4 digits is a secret (no state, just spans)."""

    def spans(self, turn, previous=None):
        import re

        return [m.span() for m in re.finditer(r"\b\d{4}\b", turn["content"])]


def test_a_custom_detector_is_used_and_a_bad_one_writes_nothing(db_path, clock):
    mf = MemFold(db_path, clock=clock, token_counter="words", secrets=OnlyDigits())
    try:
        conv = mf.conversation("bank", namespace="bank/x")
        conv.append({"role": "assistant", "content": "Your account number and PIN, please?"})
        reply = conv.append({"role": "user", "content": "85731890, with PIN 4471"})
        assert _stored(mf, reply) == (["secret"], {"secret_spans": [[19, 23]]})
        # the question asks for a secret too; the PIN was masked, the account number is read
        mf.consolidate("bank/x", include_turns=True)
        assert {r.key: r.content for r in mf.memory.list("bank/x", type="semantic")} == {"user.account_id": "85731890"}
        assert "4471" not in _all_record_text(mf)

        class Broken:
            def spans(self, turn, previous=None):
                return [(0, 999)]

        mf.secret_detector = Broken()
        before = mf.db.execute("SELECT COUNT(*) FROM turns").fetchone()[0]
        with pytest.raises(InvalidInput, match="secret detector Broken returned"):
            conv.append_many([{"role": "user", "content": "fine"}, {"role": "user", "content": "also fine"}])
        assert mf.db.execute("SELECT COUNT(*) FROM turns").fetchone()[0] == before
    finally:
        mf.close()


@pytest.mark.parametrize("text, masked", [
    ("85731890, with PIN 5380", "85731890, with PIN [secret]"),
    ("5380 is my PIN, account is 85731890", "[secret] is my PIN, account is [secret]"),
    ("It says 7402 and 0314. Those might be my PIN numbers.", "It says [secret] and [secret]. Those might be my PIN numbers."),
    ("Wait, my pin is either 1596 or 3941", "Wait, my pin is either [secret] or [secret]"),
    ("I don't remember my PIN. My D.O.B. is 04/04/1990.", "I don't remember my PIN. My D.O.B. is 04/04/1990."),
    ("My account is 84318931431, but I don't remember what my PIN is.",
     "My account is 84318931431, but I don't remember what my PIN is."),
])
def test_detector_spans(text, masked):
    spans = SecretDetector().spans({"role": "user", "content": text})
    assert redact(text, spans) == masked


def test_slot_filling_from_a_masked_reply_never_reads_the_mask():
    question = Episode("turn:1", "assistant", "Your account number and PIN, please?")

    def fill(text, masked=True):
        return [(p.key, p.content) for p in answer_facts(question, Episode("turn:2", "user", text, masked=masked))]

    assert fill("85731890, with PIN [secret]") == [("user.account_id", "85731890")]
    assert fill("[secret], and the account is 85731890") == [("user.account_id", "85731890")]
    assert fill("[secret]") == []
    # typed by the user, not masked by the pass: the question asks for a secret, nothing is filled
    assert fill("85731890, with PIN [secret]", masked=False) == []
    assert fill("85731890 or 93418043810, PIN [secret]") == []  # two candidates: which is the account?
    assert masked_answer_value("Your name and PIN, please?", "Tyler Jones, PIN [secret]") is None
    assert masked_answer_value("Your account number, please?", "85731890, PIN [secret]") is None  # no secret asked


class EchoMask(Extractor):
    id = "echo"

    def extract(self, episodes):
        return [Proposal("semantic", "user.pin", e.text, (e.source,), 0.5, e.event_time) for e in episodes
                if e.role == "user"]


def test_a_proposal_repeating_the_mask_is_dropped(mf):
    conv = mf.conversation("bank", namespace="bank/e")
    conv.append({"role": "user", "content": "my PIN is 4471"})
    run = mf.consolidate("bank/e", include_turns=True, extractor=EchoMask())
    assert run.status == "ok" and run.facts_written == 0
    assert SECRET_MASK not in _all_record_text(mf) and "4471" not in _all_record_text(mf)


def test_memfold_ingest_labels_secrets(tmp_path):
    from click.testing import CliRunner

    from memfold.cli import cli

    db = str(tmp_path / "agent.db")
    src = tmp_path / "chat.jsonl"
    src.write_text('{"role": "user", "content": "hello"}\n{"role": "user", "content": "my PIN is 4471"}\n')
    runner = CliRunner()
    assert runner.invoke(cli, ["init", db, "--clock", "logical", "--tokens", "words"]).exit_code == 0
    result = runner.invoke(cli, ["ingest", db, "-c", "t1", str(src)])
    assert result.exit_code == 0, result.output
    mf = MemFold(db)
    try:
        assert [t.labels for t in mf.conversation("t1", create=False).history()] == [(), ("secret",)]
    finally:
        mf.close()


# --- the reviewer's misses (issue 9 follow-up): keywords, value shapes, any role -------------------

@pytest.mark.parametrize("role, text, masked", [
    ("user", "my pincode is 8123", "my pincode is [secret]"),
    ("user", "PIN4471", "PIN[secret]"),
    ("user", "my PIN is four four seven one", "my PIN is [secret]"),
    ("user", "the PIN is 44 71", "the PIN is [secret]"),
    ("user", "pin is 4-4-7-1", "pin is [secret]"),
    ("user", "My security code is 9911", "My security code is [secret]"),
    ("user", "the pin code is 2580, account 85731890", "the pin code is [secret], account 85731890"),
    ("user", "My OTP is 123456 and the CVV: 321", "My OTP is [secret] and the CVV: [secret]"),
    ("user", "verification code 774411", "verification code [secret]"),
    ("user", "my personal identification number is 4471", "my personal identification number is [secret]"),
    ("tool", "Temporary password: xK9mq7Lz", "Temporary password: [secret]"),
    ("assistant", "Your new password is BlueSky!", "Your new password is [secret]"),
    ("assistant", "Done. The passphrase is correct horse battery staple. Keep it safe.",
     "Done. The passphrase is [secret]. Keep it safe."),
    ("tool", "one-time code: 884213 (valid 10 minutes)", "one-time code: [secret] (valid 10 minutes)"),
])
def test_detector_finds_every_keyword_and_value_shape_in_any_role(role, text, masked):
    assert redact(text, SecretDetector().spans({"role": role, "content": text})) == masked


@pytest.mark.parametrize("role, text", [
    ("assistant", "Your password is wrong, please try again."),
    ("assistant", "The password is case sensitive."),
    ("tool", "password: expired"),
    ("user", "I pinned 300 photos to the board"),
    ("user", "We adopted a pet last year, 2 dogs and 1 cat"),
    ("assistant", "Pins and needles in your feet for 3 days? See a doctor."),
])
def test_detector_leaves_ordinary_text_alone(role, text):
    assert SecretDetector().spans({"role": role, "content": text}) == []


def _replies(turns):
    """Feed (role, text) pairs in order; the texts as a reader without the secret label sees them."""
    detector = SecretDetector()
    return [redact(text, detector.detect({"role": role, "content": text})) for role, text in turns]


@pytest.mark.parametrize("question", ["what is your personal identification number?",
                                      "Please enter your 4-digit code.", "What's the verification code we sent?",
                                      "Could you give me your passcode?"])
def test_a_bare_reply_to_a_secret_question_is_secret(question):
    assert _replies([("assistant", question), ("user", "4471")]) == [question, "[secret]"]


SECURITY_Q = "What is your pet name for the security question?"


def test_a_standing_instruction_is_not_the_answer_and_the_next_reply_is():
    assert _replies([("assistant", SECURITY_Q), ("user", "Never call me after 6pm."), ("user", "Fluffy the cat"),
                     ("user", "thanks")]) == [SECURITY_Q, "Never call me after 6pm.", "[secret]", "thanks"]


@pytest.mark.parametrize("not_yet", ["one sec", "Hold on, let me check.", "ok let me see", "Why do you need that?",
                                     "Please don't store my answers anywhere."])
def test_a_stall_or_a_question_back_keeps_the_question_pending(not_yet):
    assert _replies([("assistant", SECURITY_Q), ("user", not_yet), ("user", "Fluffy the cat")]) == [
        SECURITY_Q, not_yet, "[secret]"]


def test_the_question_stays_pending_for_two_user_turns_only():
    # issue 15 (prefer labelling over leaking): past the two pending turns a long reply is read
    # again, while a bare word said while secrets are being talked about stays secret
    assert _replies([("assistant", SECURITY_Q), ("user", "one sec"), ("user", "hold on"),
                     ("user", "Thanks, that is all I needed today")])[-1] == "Thanks, that is all I needed today"
    assert _replies([("assistant", SECURITY_Q), ("user", "one sec"), ("user", "hold on"),
                     ("user", "Fluffy")])[-1] == "[secret]"


def test_an_assistant_turn_that_moves_on_closes_the_question_one_that_asks_again_or_waits_does_not():
    moved_on = _replies([("assistant", SECURITY_Q), ("user", "one sec"), ("assistant", "Anything else today?"),
                         ("user", "Fluffy")])
    assert moved_on[-1] == "Fluffy"
    asked_again = _replies([("assistant", SECURITY_Q), ("user", "Why?"), ("user", "What for?"),
                            ("assistant", "I need the security answer to verify you."), ("user", "Fluffy")])
    assert asked_again[-1] == "[secret]"
    waited = _replies([("assistant", SECURITY_Q), ("user", "one sec"), ("assistant", "Sure, take your time."),
                       ("user", "Fluffy")])
    assert waited[-1] == "[secret]"


def test_a_stall_that_carries_the_value_is_the_answer():
    assert _replies([("assistant", "What was your mother's maiden name?"),
                     ("user", "Hold on, I think it's either 3100 or 7402 actually.")])[-1] == "[secret]"


def test_chit_chat_about_pets_is_not_a_security_question():
    assert _replies([("assistant", "We're thinking of adopting a rescue pet soon!"),
                     ("user", "Oh nice, a dog or a cat?"), ("user", "We got a cat last year.")]) == [
        "We're thinking of adopting a rescue pet soon!", "Oh nice, a dog or a cat?", "We got a cat last year."]


def test_a_pending_question_survives_separate_appends_and_a_new_handle(mf):
    mf.conversation("bank").append({"role": "assistant", "content": SECURITY_Q})
    stall = mf.conversation("bank").append({"role": "user", "content": "one sec"})
    answer = mf.conversation("bank").append({"role": "user", "content": "Fluffy the cat"})
    assert _stored(mf, stall) == ([], {})
    assert _stored(mf, answer) == (["secret"], {"secret_spans": [[0, 14]]})


def test_a_custom_detector_without_context_turns_gets_only_the_previous_turn(db_path, clock):
    seen = []

    class Recorder:
        def spans(self, turn, previous=None):
            seen.append(previous and previous["content"])
            return []

    mf = MemFold(db_path, clock=clock, token_counter="words", secrets=Recorder())
    try:
        conv = mf.conversation("c")
        conv.append({"role": "user", "content": "first"})
        conv.append_many([{"role": "user", "content": "second"}, {"role": "user", "content": "third"}])
        assert seen == [None, "first", "second"]
    finally:
        mf.close()


# --- a standing instruction that mentions a secret becomes a masked protected record ------------

def _protected_text(mf):
    return " ".join(f"{r[0]}" for r in mf.db.execute("SELECT text FROM protected"))


def test_a_standing_instruction_with_a_pin_is_protected_with_the_pin_masked(mf):
    conv = mf.conversation("bank", namespace="bank/tyler")
    turn_id = conv.append({"role": "user", "content": "Never read my PIN 4471 back to me in any reply."})
    assert _stored(mf, turn_id) == (["secret"], {"secret_spans": [[18, 22]]})  # the turn stays secret
    [rec] = mf.protected.active_for("bank")
    assert rec.text == "Never read my PIN [secret] back to me in any reply."
    assert rec.provenance == (f"turn:{turn_id}",) and "secret" not in rec.labels
    assert "4471" not in _protected_text(mf)
    shown = " ".join(m["content"] for m in conv.context(budget=400, output_reserve=0, reader=ORDINARY).messages)
    assert "Never read my PIN [secret] back to me" in shown and "4471" not in shown


def test_a_wholly_secret_turn_makes_no_protected_record(mf):
    conv = mf.conversation("bank")
    conv.append({"role": "user", "content": "Always use my password is hunter2 when you log in."})
    conv.append({"role": "user", "content": "Never share this: Sam Reed", "labels": ["secret"]})
    assert mf.protected.list(state=None) == []
