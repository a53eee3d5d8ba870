"""The watermark check after an append (issue 13, points 2 and 9; :mod:`memfold.window.pressure`).

An append carries a per-process upper bound of the pressure instead of measuring the window: the
bound must never be below the real pressure, must be dropped when another writer appended, and an
append past the soft line with a note waiting must write nothing but its turn.
"""

import re

from memfold import LogicalClock, MemFold, WindowSettings

SETTINGS = dict(budget_tokens=100, output_reserve_tokens=0, hot_turns=3, rollup_fanin=3, leaf_chunk_tokens=20,
                card_target_tokens=6, soft_watermark=0.5, hard_watermark=1.0)
WRITE = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE|BEGIN IMMEDIATE)\b", re.I)


def small_mf(path):
    return MemFold(path, clock=LogicalClock(), token_counter="words", window=WindowSettings(**SETTINGS))


def bound_of(mf, cid):
    b = mf.parts.pressure_bounds._bounds.get(cid)
    return None if b is None else b.tokens


def turn(i):
    return {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} about order ORD-{i} and its delivery"}


def test_the_bound_is_never_below_the_real_pressure(db_path):
    mf = small_mf(db_path)
    other = small_mf(db_path)
    conv = mf.conversation("c")
    carried = 0
    for i in range(150):
        conv.append(turn(i))
        if i % 17 == 5:
            other.conversation("c").append(turn(1000 + i), compact=False)  # another writer: the next bound is dropped
            assert conv.append(turn(2000 + i)) and bound_of(mf, "c") is not None
        if i % 23 == 7:
            conv.compact(target_tokens=0)  # a fold only lowers the real pressure
        if i % 31 == 3:
            conv.append({"role": "system", "content": "You are a careful support agent for ACME orders"})
        b = bound_of(mf, "c")
        if b is not None:
            carried += 1
            assert b >= conv.pressure(), i
    assert carried > 100  # most appends were checked by the bound
    other.close()
    mf.close()


def test_another_writers_append_drops_the_bound(db_path):
    mf = small_mf(db_path)
    other = small_mf(db_path)
    conv = mf.conversation("c")
    conv.append(turn(0))
    assert bound_of(mf, "c") is not None
    other.conversation("c").append({"role": "user", "content": "word " * 45}, compact=False)
    b = mf.parts.pressure_bounds.after_append("c", mf.window, first_seq=3, last_seq=3, tokens=1)
    assert b is None and bound_of(mf, "c") is None  # seq 2 was not this process's: measure in full
    conv.append(turn(1))  # measured in full: past the soft line now, so noted
    assert conv.compaction_note() is not None and bound_of(mf, "c") >= conv.pressure()
    other.close()
    mf.close()


def test_an_append_with_a_note_waiting_writes_only_its_turn(db_path):
    mf = small_mf(db_path)
    conv = mf.conversation("c")
    i = 0
    while conv.compaction_note() is None:
        conv.append(turn(i))
        i += 1
    seen = []
    conn = mf.storage.db.conn
    conn.set_trace_callback(seen.append)
    try:
        conv.append({"role": "assistant", "content": "ok"})
    finally:
        conn.set_trace_callback(None)
    writes = [s for s in seen if WRITE.match(s) and not s.lstrip().startswith("--")]
    assert [w.split()[0].upper() for w in writes][:2] == ["BEGIN", "INSERT"], writes
    assert len([w for w in writes if w.upper().startswith("BEGIN")]) == 1, writes  # one write transaction
    # the turn and, in the same transaction, its catalog item (issue 18, point 4), nothing else
    assert all(re.match(r"(BEGIN|INSERT INTO turns|INSERT INTO catalog_items)", w) for w in writes), writes
    catalog = [s for s in seen if "catalog_items" in s]
    # no measurement: the catalog is read only for where it ends (the append's own extend), never summed
    # (round 15: read inside the append's one statement that reads its conversation, see AppendPoint)
    cover = "(SELECT last_seq FROM catalog_items WHERE conversation_id = c.id ORDER BY first_seq DESC LIMIT 1)"
    assert all(re.match(r"(SELECT last_seq FROM catalog_items WHERE conversation_id = \S+ ORDER BY first_seq DESC LIMIT 1$"
                        r"|INSERT INTO catalog_items)", s)
               or (s.startswith("SELECT c.id,") and s.count("catalog_items") == 1 and cover in s)
               for s in catalog), catalog
    assert not any("protected" in s for s in seen)
    mf.close()


def test_usage_reported_and_new_settings_measure_in_full(db_path):
    mf = small_mf(db_path)
    conv = mf.conversation("c")
    conv.append(turn(0))
    assert bound_of(mf, "c") is not None
    conv.report_usage(70)  # past the soft line by what the model saw
    assert conv.compaction_note() is not None
    mf.window = WindowSettings(**dict(SETTINGS, budget_tokens=200))
    assert mf.parts.pressure_bounds.after_append("c", mf.window, first_seq=2, last_seq=2, tokens=1) is None
    mf.close()


def tool_call(cid, path):
    return {"role": "assistant", "content": "", "tool_calls": [
        {"id": cid, "type": "function", "function": {"name": "read_file", "arguments": f'{{"path": "{path}"}}'}}]}


def test_a_fold_card_appearing_never_leaves_the_bound_below_the_pressure(db_path):
    """The fold card (issue 14) joins the window once enough work built up since the last card:
    an append of a few tokens can add the whole card (its question alone is ~50 words). The bound
    must cover it, so an append where a card may show measures in full."""
    mf = MemFold(db_path, clock=LogicalClock(), token_counter="words",
                 window=WindowSettings(**dict(SETTINGS, budget_tokens=600, fold_card_tool_calls=2)))
    conv = mf.conversation("c", namespace="default")
    carried = shown = folded = 0
    for i in range(12):
        for t in ({"role": "user", "content": f"please read module {i}"}, tool_call(f"a{i}", f"src/m{i}.py"),
                  {"role": "tool", "tool_call_id": f"a{i}", "content": f"def f{i}(): pass"}):
            conv.append(t)
            b = bound_of(mf, "c")
            real = conv.pressure()
            if b is not None:
                carried += 1
                assert b >= real, (i, t["role"], b, real)
            shown += conv.context().fold_card is not None
        menu = conv.context().fold_menu
        if i % 4 == 3 and menu is not None:  # the model folds the unit the card offers: the work starts over
            conv.fold_unit(menu.first_seq, menu.last_seq)
            folded += 1
    assert shown > 0 and folded > 0 and carried > 0  # cards showed and folded; appends still skip measuring
    mf.close()
