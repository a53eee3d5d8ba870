"""Window settings: a per-call budget without a reserve keeps a reserve that fits (issue 4 usability)."""

from __future__ import annotations

import pytest

import memfold
from memfold import WindowSettings


def test_budget_alone_caps_the_default_reserve_at_a_quarter():
    defaults = WindowSettings()
    assert defaults.output_reserve_tokens == 4096
    small = defaults.with_overrides(budget=2000)
    assert (small.budget_tokens, small.output_reserve_tokens, small.usable_tokens) == (2000, 500, 1500)
    # a budget whose quarter exceeds the reserve keeps the reserve as it is
    big = defaults.with_overrides(budget=32_000)
    assert big.output_reserve_tokens == 4096
    # an explicit reserve is taken as given, even 0, and a bad one is still refused
    assert defaults.with_overrides(budget=2000, output_reserve=0).output_reserve_tokens == 0
    assert defaults.with_overrides(budget=2000, output_reserve=1999).output_reserve_tokens == 1999
    with pytest.raises(memfold.InvalidInput, match="output_reserve_tokens"):
        defaults.with_overrides(budget=2000, output_reserve=2000)
    # re-stating the facade's own budget does not touch its reserve
    own = WindowSettings(budget_tokens=2000, output_reserve_tokens=1000)
    assert own.with_overrides(budget=2000).output_reserve_tokens == 1000
    assert own.with_overrides(budget=1000).output_reserve_tokens == 250


def test_context_with_only_a_budget_works_on_default_settings(db_path):
    mf = memfold.MemFold(db_path, clock=memfold.LogicalClock(), token_counter="words")
    conv = mf.conversation("ticket-42")
    conv.append({"role": "user", "content": "Don't delete the old logs until I confirm."})
    ctx = conv.context(budget=2000)
    assert ctx.usable_tokens == 1500
    assert 0 < ctx.total_tokens <= 1500
    assert ctx.sections["protected"] > 0
    mf.close()


def test_budget_alone_also_scales_the_fold_sizes():
    defaults = WindowSettings()
    small = defaults.with_overrides(budget=1000)
    # usable 750: a leaf chunk of at most a third of it, a card of at most an eighth of the chunk
    assert (small.usable_tokens, small.leaf_chunk_tokens, small.card_target_tokens) == (750, 250, 31)
    # given sizes are kept; a big budget keeps the production defaults (they already fit)
    assert defaults.with_overrides(budget=1000, card_target_tokens=50).card_target_tokens == 50
    assert defaults.with_overrides(budget=1000, leaf_chunk_tokens=400).leaf_chunk_tokens == 400
    big = defaults.with_overrides(budget=200_000)
    assert (big.leaf_chunk_tokens, big.card_target_tokens) == (20_000, 1_200)


@pytest.mark.parametrize("name", ["budget_tokens", "output_reserve_tokens", "hot_turns", "fold_card_tokens"])
def test_a_count_beyond_two_to_the_53_is_refused_naming_the_setting(name):
    values = {"budget_tokens": 2**53} if name == "output_reserve_tokens" else {}
    with pytest.raises(memfold.InvalidInput, match=f"{name} must be at most 9,007,199,254,740,992"):
        WindowSettings(**{**values, name: 10**20})
    WindowSettings(budget_tokens=2**53, output_reserve_tokens=1)  # the largest accepted
