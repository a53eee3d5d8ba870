"""The learned instruction model beside the rules (issue 20, point 10; memfold.window.instruction_model)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

import memfold
from memfold.memory.errors import MemfoldError
from memfold.window import instruction_model as im
from memfold.window.constraints import RuleConstraintExtractor, make_constraint_extractor

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo_dev.json"

#: standing instructions in shapes no rule reads (written for this test, in no phrasing set)
MISSED_BY_RULES = [
    "Tickets tagged urgent get a human reply inside the hour.",
    "The final call: we ship the mobile app first.",
    "The signed consent form is on file, dated 3 May.",
    "Do remember to copy Priya on supplier emails.",
    "Keep the Lisbon booking on hold pending the visa.",  # round 14's rules read "till" as "until"
]
SMALL_TALK = [
    "We went to the beach last weekend and the kids loved it!",
    "Did you ever finish that painting you were working on?",
    "Thanks so much, talk soon!",
    "My sister always says I should take up running, maybe next year.",
    "That concert was amazing, I still can't believe we got front row seats.",
]


@pytest.fixture
def mf(db_path, clock, monkeypatch):
    """A MemFold with the model switched on (the default since round 13, set here all the same)."""
    monkeypatch.setenv(im.ENV_SWITCH, "on")
    with memfold.MemFold(db_path, clock=clock, token_counter="words", embedder=None) as instance:
        yield instance


def _say(mf, *texts, cid="c"):
    conv = mf.conversation(cid, namespace="n")
    for text in texts:
        conv.append({"role": "user", "content": text})
    return {r.text: (r.kind, r.metadata.get("rule")) for r in mf.protected.active_for(conv.id)}


def _texts() -> list[str]:
    """Every user message of the phrasing sets the model was trained on (never the blind fresh13)."""
    spec = importlib.util.spec_from_file_location("train_instruction_model", ROOT / "bench" / "train_instruction_model.py")
    tm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tm)  # type: ignore[union-attr]
    out = []
    for name in tm.TRAIN_SETS:
        for item in tm.set_items(name):
            out += [s for s in item.get("setup", []) if isinstance(s, str)] + [item["text"]]
    return out, tm


def test_the_model_ships_and_is_on_by_default(monkeypatch):
    monkeypatch.delenv(im.ENV_SWITCH, raising=False)
    assert im.shipped() is not None
    assert im.WEIGHTS_PATH.stat().st_size < 2_000_000
    assert RuleConstraintExtractor().model is True
    assert make_constraint_extractor(None).model is True
    for value in ("off", "0", "false", "no", " OFF "):
        monkeypatch.setenv(im.ENV_SWITCH, value)
        assert RuleConstraintExtractor().model is False, value
        assert make_constraint_extractor(None).model is False, value
    monkeypatch.setenv(im.ENV_SWITCH, "on")
    assert RuleConstraintExtractor().model is True
    assert RuleConstraintExtractor(model=False).model is False


def test_a_phrasing_the_rules_miss_gets_a_record_from_the_model(mf):
    rules = RuleConstraintExtractor(model=False)
    for text in MISSED_BY_RULES:  # the precondition: no rule reads any of them
        got = rules.extract(text)
        assert not got.proposals, text
    made = {}
    for n, text in enumerate(MISSED_BY_RULES):
        made.update(_say(mf, text, cid=f"c{n}"))
    assert made, "the model read none of the instructions the rules miss"
    for text, (kind, rule) in made.items():
        assert text in MISSED_BY_RULES  # verbatim, the whole sentence
        assert kind in im.RECORD_KINDS and rule == "model"


def test_small_talk_gets_no_record(mf):
    ex = RuleConstraintExtractor(model=True)
    for text in SMALL_TALK:
        assert ex.extract(text).proposals == [], text
    assert _say(mf, *SMALL_TALK) == {}


def test_the_off_setting_restores_the_rules_output_exactly(monkeypatch):
    texts, _ = _texts()
    texts = texts[::3]
    plain = RuleConstraintExtractor(model=False)
    monkeypatch.setenv(im.ENV_SWITCH, "off")
    by_env = RuleConstraintExtractor()
    assert by_env.model is False
    monkeypatch.setenv(im.ENV_SWITCH, "on")
    on = RuleConstraintExtractor()
    differs = 0
    for text in texts:
        want = plain.extract(text).to_dict()
        assert by_env.extract(text).to_dict() == want, text
        with im.using(None):  # no model in force: the rules alone, even with the setting on
            assert on.extract(text).to_dict() == want, text
        differs += on.extract(text).to_dict() != want
    assert differs > 0  # the model does add something on these sets, so the comparison can fail


def test_the_off_setting_through_the_facade_gives_the_rules_records(db_path, clock, monkeypatch):
    turns = ["The final call: we ship the mobile app first.", "Never call me after 9pm.",
             "Do remember to copy Priya on supplier emails.", "Thanks so much, talk soon!"]
    monkeypatch.setenv(im.ENV_SWITCH, "off")
    with memfold.MemFold(db_path, clock=clock, token_counter="words", embedder=None) as mf:
        off = _say(mf, *turns)
    with memfold.MemFold(None, clock=memfold.LogicalClock(), token_counter="words", embedder=None,
                         constraint_extractor=RuleConstraintExtractor(model=False)) as mf:
        rules = _say(mf, *turns)
    assert off == rules
    assert all(rule != "model" for _, rule in off.values())
    monkeypatch.delenv(im.ENV_SWITCH)  # the default: on
    with memfold.MemFold(None, clock=memfold.LogicalClock(), token_counter="words", embedder=None) as mf:
        on = _say(mf, *turns)
    assert any(rule == "model" for _, rule in on.values())  # the model adds records, so the comparison can fail


def test_a_withdrawal_the_rules_miss_ends_only_the_record_it_names(mf):
    setup = ["Never book flights with a layover in Frankfurt.", "Keep replies under 80 words."]
    act = "Frankfurt layovers are fine by me again."  # the round-14 model: 0.97 for "... by me now", under 0.98
    assert RuleConstraintExtractor(model=False).extract(act).withdrawals == []  # no rule reads it
    _say(mf, *setup, act)
    states = {r.text: r.state for r in mf.protected.list(conversation_id=mf.conversation("c", namespace="n").id,
                                                          state=None)}
    assert states["Keep replies under 80 words."] == "active"
    assert states["Never book flights with a layover in Frankfurt."] == "revoked"


def test_an_ambiguous_act_ends_nothing():
    class Rec:
        def __init__(self, text, kind="constraint"):
            self.text, self.kind = text, kind

    from memfold.window.constraints import _stem, content_terms

    two = [Rec("Never email the Paris office."), Rec("Never call the Paris office.")]
    assert im.pick_target("revoke", "The Paris office thing is over.", two, _stem, content_terms) == []
    assert im.pick_target("revoke", "Emailing is fine again.", two, _stem, content_terms) == [two[0]]
    assert im.pick_target("revoke", "That rule is over.", two, _stem, content_terms) == []


def test_a_malformed_weights_file_is_refused():
    with pytest.raises(MemfoldError, match="instruction model"):
        im.InstructionModel.from_bytes(b"not json\n\x00\x01")
    with pytest.raises(MemfoldError, match="format"):
        im.InstructionModel.from_bytes(json.dumps({"format": "x", "classes": ["none"], "dim": 1}).encode() + b"\n\x00")


def test_the_same_sentence_always_gets_the_same_answer():
    model = im.shipped()
    text = "Tickets tagged urgent get a human reply inside the hour."
    assert im.features(text, model.dim) == im.features(text, model.dim)
    assert (model.scores(text) == model.scores(text)).all()
    back = im.InstructionModel.from_bytes(model.to_bytes())
    assert (back.scores(text) == model.scores(text)).all()


def test_the_shipped_weights_are_what_the_training_script_produces():
    pytest.importorskip("sklearn")
    if not LOCOMO.exists():
        pytest.skip("LoCoMo (../shared/data) is not on this machine")
    _, tm = _texts()
    assert tm.build().to_bytes() == im.WEIGHTS_PATH.read_bytes()


def test_word_salad_of_support_words_gets_no_model_record(mf):
    """Round 11 kept the model off by default for this: on tests/test_scale.py's chatter (random
    support words, "battery approved address tracking parcel refund order phone invoice") it
    made 222 records in 1,500 turns. Since round 13 such a run of words with no closed-class word
    is never read (``keyword_run``), and support turns and word salad are trained on as ``none``."""
    words = "order refund parcel Lisbon tracking invoice approved denied manager ticket courier".split()
    texts = [" ".join(words[(i * 7 + k * 3) % len(words)] for k in range(9 + i % 5)) for i in range(40)]
    made = _say(mf, *texts)
    assert [t for t, (_, rule) in made.items() if rule == "model"] == []


def test_a_long_run_of_keywords_is_never_read_but_a_sentence_is():
    model = im.shipped()
    chatter = "refund parcel tracking invoice approved manager ticket courier"
    assert im.keyword_run(chatter)
    assert model.predict(chatter) is None
    # the same words as an English sentence are read (closed-class words: "the", "for", "by")
    assert not im.keyword_run("The refund for the parcel was approved by the manager on the ticket.")
    # a capitalised month after the first word is a name, not the modal "may"
    assert im.keyword_run("order refund parcel May tracking invoice approved ticket")
    assert not im.keyword_run("You may refund the parcel without tracking or an invoice.")
    assert not im.keyword_run("refund parcel tracking approved")  # too short to call chatter


def test_the_training_script_refuses_the_blind_set_before_reading_it():
    _, tm = _texts()
    assert tm.BLIND == "fresh13" and tm.BLIND not in tm.TRAIN_SETS and "fresh12" in tm.TRAIN_SETS
    with pytest.raises(ValueError, match="blind"):
        tm.set_items(tm.BLIND)
