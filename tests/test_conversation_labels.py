"""A conversation created with labels (``mf.conversation(id, labels=[...])``) hides its turns,
cards and search hits from a reader lacking them: each turn carries the conversation's labels."""

from __future__ import annotations

import pytest

from memfold import InvalidInput, LogicalClock, MemFold


def _open(tmp_path):
    return MemFold(tmp_path / "m.db", clock=LogicalClock(), token_counter="words")


def test_turns_of_a_labelled_conversation_carry_its_labels(tmp_path):
    mf = _open(tmp_path)
    conv = mf.conversation("case-7", namespace="acme", labels=["legal"])
    conv.append({"role": "user", "content": "The settlement figure is 48,000 dollars."})
    conv.append({"role": "user", "content": "Keep it out of the ticket.", "labels": ["board"]})
    turns = conv.history()
    assert [t.labels for t in turns] == [("legal",), ("board", "legal")]
    assert conv.history(reader=["support"]) == []
    assert [t.content for t in conv.history(reader=["legal"])] == ["The settlement figure is 48,000 dollars."]


def test_a_reader_without_the_label_finds_nothing_by_search_or_context(tmp_path):
    mf = _open(tmp_path)
    conv = mf.conversation("case-7", namespace="acme", labels=["legal"])
    conv.append({"role": "user", "content": "The settlement figure is 48,000 dollars."})
    assert [h.text for h in mf.search("settlement", reader_labels=["legal"])] == [
        "The settlement figure is 48,000 dollars."]
    assert mf.search("settlement", reader_labels=["support"]) == []
    text = "\n".join(str(m.get("content")) for m in conv.context(reader=["support"]).messages)
    assert "48,000" not in text
    text = "\n".join(str(m.get("content")) for m in conv.context(reader=["legal"]).messages)
    assert "48,000" in text


def test_a_fork_of_a_labelled_conversation_is_labelled(tmp_path):
    mf = _open(tmp_path)
    conv = mf.conversation("case-7", namespace="acme", labels=["legal"])
    conv.append({"role": "user", "content": "First."})
    fork = conv.fork("case-7b")
    fork.append({"role": "user", "content": "Second, in the fork."})
    assert [t.labels for t in fork.history()] == [("legal",), ("legal",)]


def test_other_labels_for_an_existing_conversation_are_refused(tmp_path):
    mf = _open(tmp_path)
    mf.conversation("case-7", namespace="acme", labels=["legal"]).append({"role": "user", "content": "First."})
    with pytest.raises(InvalidInput, match="labels"):
        mf.conversation("case-7", labels=["support"])
    assert [t.labels for t in mf.conversation("case-7", labels=["legal"]).history()] == [("legal",)]
    assert len(mf.conversation("case-7").history()) == 1
