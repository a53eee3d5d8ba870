"""The rules extractor's slot filling from answers to the agent's questions (issue 9, point 2)."""

from __future__ import annotations

import pytest

from memfold.consolidation.extractors.base import Episode
from memfold.consolidation.extractors.rules import RulesExtractor


def facts(question: str, answer: str, asker: str = "assistant"):
    episodes = [Episode("turn:1", asker, question, 1.0), Episode("turn:2", "user", answer, 2.0)]
    return [(p.key, p.content, p.sources) for p in RulesExtractor().extract(episodes)]


@pytest.mark.parametrize("question, answer, expected", [
    ("Could I get your full name, please?", "tyler jones", ("user.name", "Tyler Jones")),
    ("Could I get your full name, please?", "Yes it is Tyler Jones.", ("user.name", "Tyler Jones")),
    ("Can you tell me your account number, please?", "That would be 351531510", ("user.account_id", "351531510")),
    ("Can you tell me your account number, please?", "93418043810 and my PIN is 7402", ("user.account_id", "93418043810")),
    ("Could you provide your date of birth, please?", "February 29, 1980", ("user.date_of_birth", "February 29, 1980")),
    ("Could you provide your date of birth, please?", "Sure - it's 06/08/1985", ("user.date_of_birth", "06/08/1985")),
])
def test_answer_fills_the_asked_slot_citing_question_and_answer(question, answer, expected):
    assert facts(question, answer) == [(*expected, ("turn:1", "turn:2"))]


@pytest.mark.parametrize("question, answer", [
    ("What was your mother's maiden name?", "Wong"),                      # a secret is never a fact
    ("Ok, could I have your account number and PIN please?", "123456"),   # asks for a secret too
    ("May I have your name, please?", "What is the weather in Pittsburgh?"),  # a question
    ("Can you tell me your account number, please?", "I can't remember it, sorry"),  # a refusal
    ("Could you provide your date of birth, please?", "I was told not to provide that"),
    ("May I have your name, please?", "I'"),
])
def test_no_fact_from_secrets_questions_or_refusals(question, answer):
    assert facts(question, answer) == []


def test_only_the_agent_asking_counts_and_only_the_turn_right_after():
    assert facts("Could I get your full name, please?", "Tyler Jones", asker="user") == []
    episodes = [Episode("turn:1", "assistant", "Could I get your full name, please?", 1.0),
                Episode("turn:2", "assistant", "Take your time.", 2.0), Episode("turn:3", "user", "Tyler Jones", 3.0)]
    assert RulesExtractor().extract(episodes) == []


def test_stated_date_of_birth():
    got = RulesExtractor().extract([Episode("turn:5", "user", "I don't know my account. My D.O.B. is 04/04/1990.", 1.0)])
    assert [(p.key, p.content) for p in got] == [("user.date_of_birth", "04/04/1990")]
