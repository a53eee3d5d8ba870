"""Token counting works offline for cl100k_base and o200k_base, with special text as plain text."""

import socket

import pytest

from memfold import InvalidInput, TiktokenCounter, WordCounter
from memfold.memory.tokens import load_encoding, make_token_counter


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError("network access is blocked in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    load_encoding.cache_clear()
    yield
    load_encoding.cache_clear()


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_tiktoken_counts_offline(no_network, encoding):
    counter = TiktokenCounter(encoding)
    assert counter.count("") == 0
    assert counter.count("hello world") == 2
    ids = counter.encode("Dana's order ORD-3300 costs $200.")
    assert counter.decode(ids) == "Dana's order ORD-3300 costs $200."


def test_known_token_ids_match_the_published_vocabularies():
    # Published reference ids: "hello world" is [15339, 1917] in cl100k_base and [24912, 2375] in o200k_base.
    assert TiktokenCounter("cl100k_base").encode("hello world") == [15339, 1917]
    assert TiktokenCounter("o200k_base").encode("hello world") == [24912, 2375]


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_special_token_text_is_plain_text(encoding):
    counter = TiktokenCounter(encoding)
    text = "ignore this <|endoftext|> marker"
    ids = counter.encode(text)
    assert counter.decode(ids) == text
    special = load_encoding(encoding)._special_tokens["<|endoftext|>"]
    assert special not in ids
    assert counter.count("<|endoftext|>") > 1


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_cjk_and_emoji_round_trip_and_count(encoding):
    counter = TiktokenCounter(encoding)
    for text in ["日本語のテキストを数える", "价格是两百美元", "👍🏽🎉 thanks!", "한국어 문장"]:
        ids = counter.encode(text)
        assert counter.decode(ids) == text
        assert counter.count(text) == len(ids) > 0
    # a skin-toned emoji is several code points and more than one token, never zero
    assert counter.count("👍🏽") >= 2
    assert counter.count_many(["a b", "日本"]) == [counter.count("a b"), counter.count("日本")]


def test_unknown_encoding_lists_known_ones():
    with pytest.raises(InvalidInput, match="known encodings are cl100k_base, o200k_base"):
        TiktokenCounter("p50k_base")
    with pytest.raises(InvalidInput, match="unknown token counter 'bpe'"):
        make_token_counter("bpe")


def test_word_counter():
    counter = WordCounter()
    assert counter.count("") == 0
    assert counter.count("  Oh interesting, thanks   for checking \n that ") == 6


def test_a_counter_other_than_the_recorded_one_warns_once_naming_both(tmp_path):
    """README: an existing file keeps its recorded settings. A clock of another kind is refused;
    a token counter of another kind is used (nothing breaks) but warned about, once per file and pair."""
    import warnings

    from memfold import MemFold

    path = tmp_path / "agent.db"
    MemFold(path, token_counter="words", embedder=None).close()
    with pytest.warns(UserWarning) as caught:
        mf = MemFold(path, token_counter="cl100k_base", embedder=None)
    messages = [str(w.message) for w in caught if "token counter" in str(w.message)]
    assert messages == [
        "this memory records token counter 'words' (its turns and cards were counted with it), but "
        "token_counter='tiktoken:cl100k_base' was given: new counts use 'tiktoken:cl100k_base', so budgets add up "
        "figures of both; leave token_counter out to count with 'words'"]
    assert mf.token_counter.id == "tiktoken:cl100k_base"
    mf.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MemFold(path, token_counter="cl100k_base", embedder=None).close()  # the same pair again: once is enough
        MemFold(path, token_counter="words", embedder=None).close()  # the recorded one
        reopened = MemFold(path, embedder=None)  # none given: the recorded one, silently
        assert reopened.token_counter.id == "words"
        reopened.close()
