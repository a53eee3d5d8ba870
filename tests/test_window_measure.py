"""The per-append pressure check (SQL aggregates) measures exactly what the full layout measures:
glimpses of oversized turns, the system note once a card or glimpse exists, the protected channel."""

import random

from memfold import LogicalClock, MemFold, WindowSettings
from memfold.window.context import layout, measure_total


def test_measure_total_equals_layout_through_appends_folds_and_glimpses(tmp_path):
    rng = random.Random(11)
    settings = WindowSettings(budget_tokens=120, output_reserve_tokens=10, hot_turns=3, leaf_chunk_tokens=40,
                              card_target_tokens=8, rollup_fanin=3, compact_on_append=True)
    with MemFold(tmp_path / "m.db", clock=LogicalClock(), token_counter="words", embedder=None,
                 window=settings) as mf:
        conv = mf.conversation("c", namespace="ns")
        checked = 0
        for i in range(120):
            mf.clock.advance(1)
            size = rng.choice([3, 5, 8, 13, 70])  # 70 words is over the glimpse threshold (55)
            words = " ".join(f"w{i}x{j}" for j in range(size))
            role = "user" if i % 2 == 0 else "assistant"
            content = f"From now on never share order ORD-{i}. {words}" if i % 37 == 5 else f"order ORD-{i} {words}"
            conv.append({"role": role, "content": content})
            for probe in (settings, settings.with_overrides({"system_note": ""})):
                assert measure_total(conv.parts, conv.ref, probe) == layout(conv.parts, conv.ref, probe).total_tokens
                checked += 1
        kinds = {item.kind for item in conv.catalog_items()}
        assert "card" in kinds  # folds happened, so the note and cards were part of the measure
        assert any(t.tokens > 55 for t in conv.history())  # and oversized turns (glimpses)
        assert mf.protected.active_for("c")  # and the protected channel
        assert checked == 240
