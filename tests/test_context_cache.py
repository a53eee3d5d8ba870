"""The compiled-context cache keeps contexts pickled (issue 18, point 4, round 9).

A hit must be the context the miss built, as a copy the caller may change freely; a context
holding something pickle cannot write is still cached (deep-copied, as before); the settings part
of the key tells settings apart and recognises equal ones built separately.
"""

from __future__ import annotations

import pickle

from memfold.window.context import CompiledContext
from memfold.window.context_cache import ContextCache, _frozen, _settings_key
from memfold.window.settings import WindowSettings


def _context(fold_menu=None) -> CompiledContext:
    return CompiledContext(
        messages=[{"role": "system", "content": "note"}, {"role": "user", "content": "hello",
                                                        "metadata": {"nested": [1, 2.5, None, "x"]}}],
        sections={"system_note": 1, "hot_turns": 1}, total_tokens=2, budget_tokens=100,
        output_reserve_tokens=10, refs=["t1"], glimpses=[], hot_refs=["t1"], fold_menu=fold_menu)


def test_a_hit_is_an_equal_independent_copy():
    cache = ContextCache()
    built = _context()
    cache.put(("c", 1), built)
    assert type(_frozen(built)) is bytes  # kept pickled
    built.messages[1]["content"] = "changed after the put"  # the caller's copy: not the cache's
    hit = cache.get(("c", 1), now=0.0)
    assert hit is not None and hit.messages[1]["content"] == "hello"
    assert hit.to_dict() == _context().to_dict() and hit.messages[1]["metadata"] == {"nested": [1, 2.5, None, "x"]}
    hit.messages.append({"role": "user", "content": "mine"})
    hit.refs.clear()
    again = cache.get(("c", 1), now=0.0)
    assert again is not hit and again.to_dict() == _context().to_dict()
    assert cache.hits == 2


def test_a_context_pickle_cannot_write_is_deep_copied():
    unpicklable = lambda: None  # noqa: E731 - a local function: pickle refuses it
    try:
        pickle.dumps(unpicklable)
        raise AssertionError("expected pickle to refuse a local lambda")
    except (pickle.PicklingError, AttributeError, TypeError):
        pass
    cache = ContextCache()
    built = _context(fold_menu={"callback": unpicklable})
    cache.put(("c", 1), built)
    assert type(_frozen(built)) is not bytes
    built.messages[0]["content"] = "changed"
    hit = cache.get(("c", 1), now=0.0)
    assert hit.messages[0]["content"] == "note" and hit.fold_menu["callback"] is unpicklable
    hit.messages[0]["content"] = "changed too"
    assert cache.get(("c", 1), now=0.0).messages[0]["content"] == "note"


def test_the_settings_key_tells_settings_apart():
    a = WindowSettings(budget_tokens=2000, output_reserve_tokens=200)
    same = WindowSettings(budget_tokens=2000, output_reserve_tokens=200)
    other = WindowSettings(budget_tokens=2000, output_reserve_tokens=300)
    assert _settings_key(a) == _settings_key(same) == tuple(sorted(a.to_dict().items()))
    assert _settings_key(other) != _settings_key(a)
    assert dict(_settings_key(other))["output_reserve_tokens"] == 300


def test_compiles_through_the_facade_hit_and_miss_alike(mf):
    conv = mf.conversation("a", namespace="ns")
    conv.append({"role": "user", "content": "Never call me on the phone, email only please."})
    conv.append({"role": "assistant", "content": "Noted: email only."})
    cache = mf.parts.context_cache
    first = conv.context(budget=2000)
    hits = cache.hits
    second = conv.context(budget=2000)
    assert cache.hits == hits + 1 and second.to_dict() == first.to_dict()
    assert any("email only" in m["content"] for m in second.messages)
    conv.append({"role": "user", "content": "and the invoice?"})
    third = conv.context(budget=2000)  # a write made the entry stale: a miss, the new turn shown
    assert cache.hits == hits + 1 and third.messages[-1]["content"] == "and the invoice?"
