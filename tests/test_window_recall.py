"""Recall tools, reachability of every archived turn, and the randomized contiguous-cover property (issue 4, points 7, 8, 10)."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings, strategies as st

import memfold
from memfold import WindowSettings
from memfold.window.catalog import is_contiguous_cover
from memfold.window.cards import Card

WORDS = "order refund ORD-{} ships May {} Elm /etc/app{}.conf decided email thanks ok".split()


def build(db_path, n=120, seed=1):
    mf = memfold.MemFold(db_path, clock=memfold.LogicalClock(), token_counter="words",
                         window=WindowSettings(budget_tokens=60, output_reserve_tokens=0, hot_turns=2,
                                               rollup_fanin=3, leaf_chunk_tokens=20, card_target_tokens=8))
    conv = mf.conversation("c")
    rnd = random.Random(seed)
    for i in range(n):
        text = " ".join(rnd.choice(WORDS).format(rnd.randint(1, 99)) for _ in range(rnd.randint(2, 8)))
        conv.append({"role": "user" if i % 2 == 0 else "assistant", "content": text})
    return mf, conv


def test_every_archived_turn_is_reachable_through_expand(db_path):
    mf, conv = build(db_path)
    reached = []
    for item in conv.catalog_items():
        if item.kind == "turn":
            reached.append(item.item_id)
            continue
        stack = [item.ref]
        while stack:
            for child in conv.expand(stack.pop(0)):
                if isinstance(child, Card):
                    stack.append(child.ref)
                else:
                    reached.append(child.id)
    assert sorted(reached) == [t.id for t in conv.history()]
    mf.close()


def test_search_is_literal_and_ranked(db_path):
    mf, conv = build(db_path)
    conv.append({"role": "user", "content": 'run "make deploy" NEAR (prod): now -- AND *'})
    for query in ['"make', "NEAR (prod):", "AND OR NOT", "*", "-x", "prod)"]:
        conv.search(query, 5)  # never a syntax error
    hits = conv.search('"make deploy" NEAR', 3)
    assert hits[0].kind == "turn" and "make" in hits[0].snippet
    assert conv.search("!!!", 5) == []
    cards = conv.search("ORD", 5, {"kind": "card"})
    assert cards and all(h.kind == "card" for h in cards)
    mf.close()


def test_describe_and_tool_calls(db_path):
    mf, conv = build(db_path)
    card_ref = next(i.ref for i in conv.catalog_items() if i.kind == "card")
    info = conv.describe(card_ref)
    assert info["depth"] >= 1 and info["children"] and info["first_seq"] == 1
    names = [t["function"]["name"] for t in conv.tool_definitions()]
    assert names == ["search", "describe", "expand"]
    out = conv.handle_tool_call("describe", json.dumps({"id": card_ref}))
    assert json.loads(out)["ref"] == card_ref
    assert conv.handle_tool_call("expand", {"id": card_ref, "to_turns": True}).startswith("t1 [turn 1,")
    assert "ORD" in conv.handle_tool_call("search", '{"query": "ORD", "k": 2}')
    assert conv.handle_tool_call("nope", "{}").startswith("error: unknown tool")
    assert conv.handle_tool_call("expand", '{"id": "c999999"}').startswith("error: no summary card")
    assert conv.handle_tool_call("search", "{bad json").startswith("error: tool 'search': arguments are not valid JSON")
    mf.close()


def test_export_tree(db_path, tmp_path):
    mf, conv = build(db_path, n=40)
    info = conv.export_tree(tmp_path / "tree")
    base = tmp_path / "tree" / "c"
    assert info["turns"] == 40 and len(list((base / "turns").iterdir())) == 40
    card_files = sorted(base.glob("depth-*/c*.md"))
    assert len(card_files) == info["cards"] > 0
    for f in card_files:  # every child path listed exists
        children = f.read_text().split("## children\n")[1].split()
        assert children and all((base / c).exists() for c in children)
    first = conv.history()[0]
    assert (base / f"turns/000001-t{first.id}.md").read_text().endswith(first.content + "\n")
    mf.close()


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["append", "compact", "fail", "tool"]), st.integers(1, 12)),
                min_size=1, max_size=40))
def test_random_appends_compactions_failures_keep_a_contiguous_cover(tmp_path_factory, ops):
    class Flaky(memfold.Summarizer):
        id = "flaky"

        def __init__(self):
            self.inner = memfold.ExtractiveSummarizer(memfold.WordCounter())

        def summarize(self, items, depth, *, target_tokens=None):
            if self.fail:
                raise RuntimeError("down")
            return self.inner.summarize(items, depth, target_tokens=target_tokens)

    path = tmp_path_factory.mktemp("prop") / "db.sqlite"
    flaky = Flaky()
    flaky.fail = False
    mf = memfold.MemFold(path, clock=memfold.LogicalClock(), token_counter="words", summarizer=flaky,
                         window=WindowSettings(budget_tokens=80, output_reserve_tokens=0, hot_turns=2,
                                               rollup_fanin=3, leaf_chunk_tokens=15, card_target_tokens=6))
    conv = mf.conversation("p")
    n = 0
    for op, size in ops:
        flaky.fail = op == "fail"
        if op == "tool":
            n += 2
            conv.append_many([
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": f"k{n}", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": f"k{n}", "content": " ".join(["r"] * size)}])
        else:
            n += 1
            conv.append({"role": "user", "content": " ".join([f"w{size}"] * size)})
        if op in ("compact", "fail"):
            conv.compact(target_tokens=0)
        items = conv.catalog_items()
        assert is_contiguous_cover(items, n)
    assert mf.archive.verify() == []
    mf.close()
