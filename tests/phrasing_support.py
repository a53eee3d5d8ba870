"""Shared by the phrasing-class tests of rounds 5, 8 and 9 (``test_phrasing_classes_r*.py``): a
real database without an embedder, and the protected records a conversation's user turns leave."""

from __future__ import annotations

import pytest

import memfold
from memfold.memory import families
from memfold.window.constraints import RuleConstraintExtractor


@pytest.fixture
def mf(db_path, clock):
    # the rule families alone: these tests turn families off and check what the rules then miss,
    # which the instruction model (tests/test_instruction_model.py) might read instead
    with memfold.MemFold(db_path, clock=clock, token_counter="words", embedder=None,
                         constraint_extractor=RuleConstraintExtractor(model=False)) as instance:
        yield instance


def _active(mf, cid="c"):
    return {r.text: r.kind for r in mf.protected.active_for(cid)}


def _states(mf, cid="c"):
    return {r.text: r.state for r in mf.protected.list(conversation_id=cid, state=None)}


def _say(mf, *texts, cid="c"):
    conv = mf.conversation(cid, namespace="n")
    for text in texts:
        conv.append({"role": "user", "content": text})
    return conv


def with_later(*names):
    """The named families and every round-10, round-13, round-14, round-15 and round-16 family
    (``families.motivated_by`` ``"fresh6"``, ``"fresh9"``, ``"fresh10"``, ``"fresh11"``, ``"fresh12"``): written later, from those sets' misses, as grammar,
    they read some sentences an earlier family's test uses, so "this family off -> not retained"
    holds with them all off."""
    import memfold.window.directives  # noqa: F401 (registers the families)
    import memfold.window.directives_r13  # noqa: F401
    import memfold.window.directives_r14  # noqa: F401
    import memfold.window.directives_r15  # noqa: F401
    import memfold.window.directives_r16  # noqa: F401

    return [*names, *families.motivated_by("fresh6"), *families.motivated_by("round8_qa"),
            *families.motivated_by("fresh9"), *families.motivated_by("fresh10"),
            *families.motivated_by("fresh11"), *families.motivated_by("fresh12")]


def check_withdrawal(mf, off, rule, other, withdrawal):
    """``withdrawal`` after ``rule`` and ``other`` revokes ``rule`` only, and with the families
    ``off`` turned off it leaves ``rule`` active (the shared body of the rounds' withdrawal tests)."""
    _say(mf, rule, other, withdrawal)
    states = _states(mf)
    assert states[rule] == "revoked" and states[other] == "active"
    with families.off(off):
        _say(mf, rule, other, withdrawal, cid="off")
        assert _states(mf, "off")[rule] == "active"


#: the attribute slots (issue 20, point 11) and the likes the rules extractor writes
ATTRIBUTE_KEYS = ("user.favourite.", "user.preferred.", "user.preference.")


def attribute_facts(mf, ns, turns):
    """The active attribute facts of namespace ``ns`` after each of ``turns`` is appended as a user
    turn and consolidated."""
    conv = mf.conversation(f"a-{ns}", namespace=ns)
    for text in turns:
        conv.append({"role": "user", "content": text})
        mf.consolidate(ns, include_turns=True)
    return {r.key: r.content for r in mf.memory.list(ns, "semantic") if r.key and r.key.startswith(ATTRIBUTE_KEYS)}
