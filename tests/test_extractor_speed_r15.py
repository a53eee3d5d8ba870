"""Round 15's speed work on the constraint extractor (issue 18, point 4): what it remembers gives
the answers a fresh reading gives, the gated methods made from one maker per method answer as the
patterns do, and every rule module the extractor imports is prefiltered, a later one included."""

from __future__ import annotations

import re
import types
from datetime import datetime, timezone

import pytest

from memfold.memory import families
from memfold.window import constraints, directives, directives_r13, directives_r14, instruction_model, prefilter
from memfold.window.prefilter import Prefiltered

import test_prefilter as tp


class _SystemClock:
    kind = "system"


def _fresh(ex: constraints.RuleConstraintExtractor, text: str, **kw):
    constraints._NO_PROPOSAL.cache_clear()
    return ex.extract(text, **kw)


def test_a_sentence_remembered_as_holding_no_instruction_follows_the_family_state():
    ex = constraints.RuleConstraintExtractor(model=False)
    constraints._NO_PROPOSAL.cache_clear()
    for sentence, family, rule in (("pls always reply in english", directives.F_TEXTING, "always"),
                                   ("Whenever a refund is issued, log it in the ledger.", directives.F_FREQUENCY,
                                    "frequency_imperative")):
        with families.off([family]):
            assert ex._classify(sentence, None, None) is None  # remembered for this family state
            assert (sentence, families.off_key()) in constraints._NO_PROPOSAL
        found = ex._classify(sentence, None, None)  # every family on: read again, and found
        assert found is not None and found.rule == rule
        with families.off([family]):
            assert ex._classify(sentence, None, None) is None


def test_what_is_remembered_gives_what_a_fresh_reading_gives():
    texts = [t for g in tp._corpus(every=64) for t in g][::12]
    assert len(texts) > 300
    ex = constraints.RuleConstraintExtractor(model=False)
    fresh = [_fresh(ex, t) for t in texts]
    constraints._NO_PROPOSAL.cache_clear()
    first = [ex.extract(t) for t in texts]
    again = [ex.extract(t) for t in texts]  # every sentence without an instruction is now remembered
    assert len(constraints._NO_PROPOSAL) > 300
    assert first == fresh and again == fresh
    assert sum(1 for e in fresh if e.proposals) > 40


def test_a_remembered_sentence_keeps_no_time():
    ex = constraints.RuleConstraintExtractor(model=False)
    text = "Send the quarterly report by Friday 5pm."
    monday = datetime(2026, 3, 2, 9, tzinfo=timezone.utc).timestamp()
    saturday = datetime(2026, 3, 7, 9, tzinfo=timezone.utc).timestamp()
    got = [ex.extract(text, now=now, clock=_SystemClock()) for now in (monday, saturday, monday)]
    want = [_fresh(ex, text, now=now, clock=_SystemClock()) for now in (monday, saturday, monday)]
    assert got == want
    dues = [e.proposals[0].due_at for e in got]
    assert dues[0] == dues[2] != dues[1] and None not in dues


def test_the_models_remembered_answers_follow_its_parameters():
    shipped = instruction_model.shipped()
    assert shipped is not None
    sents = [s for g in tp._texts(tp.HERE / "data") for t in g[::5] for s in constraints.sentences(t)][:2000:4]

    def model(threshold: float) -> instruction_model.InstructionModel:
        return instruction_model.InstructionModel(shipped.weights, shipped.bias, threshold, shipped.char_n)

    want = model(shipped.threshold).predict_many(sents)
    m = model(shipped.threshold)
    assert m.predict_many(sents) == want and m.predict_many(sents) == want  # the second from memory
    assert sum(1 for a in want if a) > 20
    m.threshold = 0.0  # changed in place: answers read again, not remembered ones
    assert m.predict_many(sents) == model(0.0).predict_many(sents) != want
    m.threshold = shipped.threshold
    assert m.predict_many(sents[::-1]) == want[::-1]


@pytest.mark.parametrize("name", ["search", "match", "fullmatch", "findall", "sub", "split"])
def test_a_method_taken_before_its_test_is_compiled_answers_as_the_pattern(name):
    raw = re.compile(r"(?:never|don't)\s+(?:call|email)\s+(?:me|us)\s+(?:before|after)\s+\d+", re.I)
    p = prefilter.prefiltered(raw, group="test_r15_" + name)
    assert isinstance(p, Prefiltered) and p._test != "True" and "match" in p._gated
    method = getattr(p, name)  # taken before any use
    texts = ["Never call me before 9.", "never email us after 6 pm please", "Don't call me, ever.",  # the test fails
             "call me before 9", "The weather is fine.", "DON'T EMAIL ME AFTER 10", ""]
    args = (lambda t: ("X", t)) if name == "sub" else (lambda t: (t,))
    for text in texts * 2:
        got, want = method(*args(text)), getattr(raw, name)(*args(text))
        assert (got.span() if isinstance(got, re.Match) else got) == (want.span() if isinstance(want, re.Match) else want)
        made = getattr(p, name)(*args(text))  # the method as made now (with the compiled test)
        assert (made.span() if isinstance(made, re.Match) else made) == (
            want.span() if isinstance(want, re.Match) else want)
    assert p._testfn is not None


def test_a_test_is_compiled_only_for_a_text_among_its_candidates():
    p = prefilter.prefiltered(re.compile(r"quux\w+ (?:alpha|beta) zzyzx", re.I), group="test_r15_lazy")
    assert p.search("nothing here at all") is None and p._testfn is None  # turned down by its first test
    assert p.search("Quuxes beta zzyzx").span() == (0, 17) and p._testfn is not None


def test_every_rule_module_the_extractor_imports_is_prefiltered():
    assert {m.__name__ for m in constraints.RULE_MODULES} >= {directives.__name__, directives_r13.__name__,
                                                            directives_r14.__name__}
    for module in constraints.RULE_MODULES:
        wrapped = [v for v in vars(module).values() if isinstance(v, Prefiltered)]
        left = [k for k, v in vars(module).items() if isinstance(v, re.Pattern) and prefilter.prefiltered(v) is not v]
        assert len(wrapped) >= 20 and not left, (module.__name__, left)
        assert {p._group.name for p in wrapped} == {"rules"}


def test_a_rule_module_imported_later_is_found_without_an_edit():
    later = types.ModuleType(directives.__name__ + "_r99")
    later._LATER_R99 = re.compile(r"\bthe r99 (?:cue|sign)\b", re.I)
    found = constraints.rule_modules({"directives": directives, "directives_r99": later, "re": re,
                                      "prefilter": prefilter})
    assert found == (directives, later)
    for module in found[1:]:
        prefilter.prefilter_module(vars(module), group="test_r15_later")
    assert isinstance(later._LATER_R99, Prefiltered)
    assert later._LATER_R99.search("Mind the R99 sign.").span() == (5, 17)
    assert later._LATER_R99.search("No cue here.") is None


def test_a_gate_hiding_a_cue_is_caught_by_the_exactness_comparison():
    # the check the prefilters answer to (tests/test_prefilter.py, bench/prefilter_exactness.py) is
    # not vacuous: a round-14 pattern given a requirement its matches do not meet (as a gate that
    # left a family's cue out would) changes the extraction, and the comparison sees it
    name = "_LIMIT_R14"
    good = getattr(directives_r14, name)
    assert isinstance(good, Prefiltered)
    texts = [t for g in tp._texts(tp.HERE / "data") for t in g if good.unfiltered.search(t)][:300]
    assert len(texts) > 5
    ex = constraints.RuleConstraintExtractor(model=False)
    want = [_fresh(ex, t) for t in texts]
    bad = Prefiltered(good.unfiltered, "('zzqx' in low)", req=("lit", frozenset({"zzqx"})), group="rules")
    try:
        setattr(directives_r14, name, bad)
        directives._remembered_clear()
        got = [_fresh(ex, t) for t in texts]
    finally:
        setattr(directives_r14, name, good)
        directives._remembered_clear()
        constraints._NO_PROPOSAL.cache_clear()
    assert got != want
    assert [_fresh(ex, t) for t in texts] == want
