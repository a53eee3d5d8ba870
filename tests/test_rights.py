"""Rights reach every derived artifact, forks are isolated, erasure leaves nothing (issue 15)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import memfold
from memfold import CardNotFound, ErasureIncomplete, LogicalClock, MemFold, Reader, TurnNotFound, WindowSettings

NOBODY = Reader.of([])


def file_bytes(db_path: Path) -> bytes:
    out = b""
    for suffix in ("", "-wal", "-shm", "-journal"):
        p = Path(str(db_path) + suffix)
        if p.exists():
            out += p.read_bytes()
    return out


def small(tmp_path, name="r.db", **settings):
    window = dict(budget_tokens=60, output_reserve_tokens=0, hot_turns=2, rollup_fanin=3, leaf_chunk_tokens=20,
                  card_target_tokens=6)
    window.update(settings)
    return MemFold(tmp_path / name, clock=LogicalClock(), token_counter="words", embedder=None,
                   window=WindowSettings(**window))


def shown(ctx) -> str:
    return "\n".join(m["content"] or "" for m in ctx.messages)


# --- point 1: consolidated facts carry their sources' labels ------------------------------------------
def test_consolidated_facts_require_their_sources_labels_and_follow_relabels(mf):
    conv = mf.conversation("a", namespace="ns")
    t1 = conv.append({"role": "user", "content": "My name is Dana Okafor.", "labels": ["legal"]})
    mf.remember("ns", "episodic", "user: I live in Leeds now.", labels=["hr"])
    mf.consolidate("ns", include_turns=True)
    facts = {r.key: r for r in mf.memory.list("ns", "semantic")}
    assert facts["user.name"].labels == ("legal",) and facts["user.location"].labels == ("hr",)
    assert [r.record.key for r in mf.read("ns", reader=NOBODY)] == []
    assert "Dana" not in shown(conv.context(budget=2000, reader=NOBODY))
    assert "Dana" in shown(conv.context(budget=2000, reader=["legal"]))
    mf.relabel(f"t{t1}", ["legal", "hr"])  # a relabel of the source reaches the fact
    assert mf.memory.get(facts["user.name"].id).labels == ("hr", "legal")
    mf.revoke_label(f"t{t1}", "legal")
    mf.revoke_label(f"t{t1}", "hr")  # a revoke too: the fact is now as open as its source
    assert mf.memory.get(facts["user.name"].id).labels == ()
    assert [e.details.get("derived_from") for e in mf.memory.events(kind="relabel")][-1] == f"turn:{t1}"


def test_a_relabel_reaches_protected_rows_derived_from_the_turn(mf):
    conv = mf.conversation("a", namespace="ns")
    t1 = conv.append({"role": "user", "content": "Never refund orders over 500 euros without Priya."})
    [rec] = mf.protected.active_for("a")
    mf.relabel(f"t{t1}", ["finance"])
    assert mf.protected.get(rec.id).labels == ("finance",)
    assert "Priya" not in shown(conv.context(budget=2000, reader=NOBODY))


# --- point 2: the protected channel's history respects labels -----------------------------------------
def test_replaced_text_is_shown_only_to_readers_of_the_replaced_record(mf):
    conv = mf.conversation("a", namespace="ns")
    old = mf.protected.add("Ship the prototype to the Zurich lab.", conversation_id="a", labels=["legal"])
    mf.protected.supersede(old.id, "Ship the prototype to the office.", labels=[])
    assert "Zurich" not in shown(conv.context(budget=2000, reader=NOBODY))
    assert "office" in shown(conv.context(budget=2000, reader=NOBODY))
    assert "no longer in force: Ship the prototype to the Zurich lab." in shown(conv.context(budget=2000,
                                                                                           reader=["legal"]))
    assert "Zurich" in shown(conv.context(budget=2000))  # the owner sees it


# --- point 3: stale cards are never served --------------------------------------------------------------
def test_stale_cards_are_refused_by_expand_describe_and_the_tools(tmp_path):
    mf = small(tmp_path)
    conv = mf.conversation("c")
    ids = [conv.append({"role": "user", "content": f"order ORD-{i} ships from dock {i} at noon"}) for i in range(12)]
    conv.compact(target_tokens=0)
    card = next(i for i in conv.catalog_items() if i.kind == "card")
    under = [t.id for t in conv.expand(card.item_id, to_turns=True)]
    mf.relabel(f"t{under[0]}", ["legal"])
    with pytest.raises(CardNotFound, match="stale"):
        conv.expand(card.item_id)
    with pytest.raises(CardNotFound, match="stale"):
        conv.describe(card.item_id)
    assert "stale" in conv.handle_tool_call("expand", {"id": f"c{card.item_id}"}, reader=NOBODY)
    assert "stale" in conv.handle_tool_call("describe", {"id": f"c{card.item_id}"})
    for item in conv.catalog_items():  # what replaced it never shows the relabelled turn to a reader without it
        if item.kind == "card":
            assert under[0] not in [t.id for t in conv.expand(item.item_id, to_turns=True, reader=NOBODY)]
    assert ids
    mf.close()


# --- point 4: quoted material stays where it was quoted ---------------------------------------------------
def test_a_quoted_turn_is_seen_only_in_the_conversation_that_quoted_it(mf):
    conv = mf.conversation("a", namespace="ns")
    conv.append({"role": "user", "content": "hello there"})
    quoted = conv.append({"role": "user", "content": "DM from Ravi: the launch code is marigold",
                          "metadata": {"quoted_from": "dm-ravi"}})
    assert "marigold" in shown(conv.context(budget=2000))
    fork = conv.fork("a-fork")
    assert "marigold" not in shown(fork.context(budget=2000))
    assert fork.search("marigold") == []
    with pytest.raises(TurnNotFound):
        fork.expand(f"t{quoted}")
    with pytest.raises(TurnNotFound):
        fork.describe(f"t{quoted}")
    assert "marigold" not in fork.handle_tool_call("expand", {"id": f"t{quoted}"})
    assert "marigold" not in " ".join(t.content for t in fork.history())
    assert [h.ref for h in conv.search("marigold")] == [f"t{quoted}"]


# --- point 5: forks are isolated, both ways ----------------------------------------------------------------
def test_a_fork_never_reads_the_parents_later_turns_or_cards(tmp_path):
    mf = small(tmp_path)
    conv = mf.conversation("p")
    for i in range(6):
        conv.append({"role": "user", "content": f"before the fork ticket TK-{i} ships from dock {i}"})
    fork = conv.fork("f")
    for i in range(6, 14):
        conv.append({"role": "user", "content": f"after the fork secret plan PL-{i} from dock {i}"})
    conv.compact(target_tokens=0)  # the parent folds turns the fork shares, after the fork
    later_cards = [c for c in mf.parts.cards.family_cards("p") if c.conversation_id == "p"]
    assert later_cards
    for card in later_cards:
        with pytest.raises(CardNotFound):
            fork.expand(card.id)
        with pytest.raises(CardNotFound):
            fork.describe(card.id)
    later = [t for t in conv.history() if "PL-" in t.content]
    with pytest.raises(TurnNotFound):
        fork.expand(f"t{later[0].id}")
    assert fork.search("secret plan") == []
    assert "PL-" not in shown(fork.context(budget=2000))
    fork_turn = fork.append({"role": "user", "content": "only in the fork: gardenia"})
    with pytest.raises(TurnNotFound):
        conv.expand(f"t{fork_turn}")
    assert conv.search("gardenia") == []
    mf.close()


def test_a_withdrawal_in_the_fork_leaves_the_parents_constraint(mf):
    conv = mf.conversation("p", namespace="ns")
    conv.append({"role": "user", "content": "Don't delete the old logs until I confirm."})
    fork = conv.fork("f")
    assert [r.text for r in mf.protected.active_for("f")] == ["Don't delete the old logs until I confirm."]
    fork.append({"role": "user", "content": "OK, you can delete the old logs now."})
    assert mf.protected.active_for("f") == []
    assert [r.text for r in mf.protected.active_for("p")] == ["Don't delete the old logs until I confirm."]
    conv.append({"role": "user", "content": "Never email the customer on weekends."})
    assert [r.text for r in mf.protected.active_for("f")] == []  # and the parent's later rule is not the fork's


def test_fork_with_its_own_namespace(mf):
    conv = mf.conversation("p", namespace="acme/dana")
    conv.append({"role": "user", "content": "hello"})
    mf.remember("acme/dana", "semantic", "Dana prefers email", key="user.contact")
    mf.protected.add("Always sign as the support team.", namespace="acme/dana")
    fork = conv.fork("f", namespace="acme/dana-sandbox")
    assert fork.namespace == "acme/dana-sandbox"
    [copy] = mf.memory.list("acme/dana-sandbox")
    assert copy.content == "Dana prefers email" and copy.provenance[0].startswith("record:")
    mf.remember("acme/dana-sandbox", "semantic", "Dana prefers phone", key="user.contact")
    assert [r.content for r in mf.memory.list("acme/dana")] == ["Dana prefers email"]  # the parent's facts stay
    assert [r.text for r in mf.protected.active_for("f")] == ["Always sign as the support team."]
    assert conv.fork("f2", namespace="acme/dana").namespace == "acme/dana"  # the parent's own: shared
    with pytest.raises(memfold.InvalidInput, match="in use"):
        conv.fork("f3", namespace="acme/dana-sandbox")


def test_fork_at_expands_the_straddling_card_one_level_and_backfills(tmp_path):
    mf = small(tmp_path)
    conv = mf.conversation("long")
    for i in range(30):
        conv.append({"role": "user", "content": f"order ORD-{i} ships from dock {i} on May {i} at noon"})
    conv.compact(target_tokens=0)
    card = next(item for item in conv.catalog_items() if item.kind == "card" and item.depth > 1)
    at = (card.first_seq + card.last_seq) // 2
    info = conv.fork_info("long-at", at=at)
    fork = mf.conversation("long-at")
    items = fork.catalog_items()
    assert items[-1].last_seq == at and items[0].first_seq == 1
    assert all(a.last_seq + 1 == b.first_seq for a, b in zip(items, items[1:]))
    assert info["catalog_items"] == len(items)
    # one level: the straddling card's children that fit stay as cards (depth - 1), the rest are raw turns
    inside = [i for i in items if card.first_seq <= i.first_seq <= at]
    assert {i.depth for i in inside if i.kind == "card"} <= {card.depth - 1}
    assert inside[-1].kind == "turn" or inside[-1].last_seq == at
    mf.close()


def test_clear_starts_an_empty_session_with_the_old_history_searchable(mf):
    conv = mf.conversation("c", namespace="ns")
    conv.append({"role": "user", "content": "the pallet goes to Rotterdam"})
    conv.append({"role": "user", "content": "Never ship on Sundays."})
    fresh = conv.clear("c-2")
    assert fresh.history() == [] and fresh.context(budget=2000).refs == []
    assert [r.text for r in mf.protected.active_for("c-2")] == []
    assert [h.kind for h in mf.search("Rotterdam", conversation_id="c")] == ["turn"]


# --- point 6: the compiled-context cache ------------------------------------------------------------------
def test_repeated_context_is_cached_per_reader_and_invalidated_by_writes(mf):
    conv = mf.conversation("a", namespace="ns")
    t1 = conv.append({"role": "user", "content": "the invoice number is INV-443"})
    conv.append({"role": "user", "content": "thanks"})
    cache = mf.parts.context_cache
    first = conv.context(budget=2000)
    hits = cache.hits
    again = conv.context(budget=2000)
    assert cache.hits == hits + 1 and again.to_dict() == first.to_dict() and again is not first
    hidden = conv.context(budget=2000, reader=NOBODY)  # another reader: never the owner's entry
    assert cache.hits == hits + 1 and "INV-443" in shown(hidden)
    mf.revoke_label(f"t{t1}", "x")  # no-op label removal still writes: fine, just a miss
    mf.relabel(f"t{t1}", ["legal"])
    assert "INV-443" not in shown(conv.context(budget=2000, reader=NOBODY))
    assert "INV-443" in shown(conv.context(budget=2000))
    other = conv.context(budget=1500)  # another budget: another entry
    assert other.budget_tokens == 1500
    mf.erase(turn_ids=[t1])
    assert len(cache) == 0 or "INV-443" not in shown(conv.context(budget=2000))
    assert "INV-443" not in shown(conv.context(budget=2000))


def test_a_second_connection_invalidates_the_cache(db_path, clock):
    a = MemFold(db_path, clock=clock, token_counter="words", embedder=None)
    b = MemFold(db_path, clock=clock, token_counter="words", embedder=None)
    conv = a.conversation("a")
    conv.append({"role": "user", "content": "first"})
    assert [m["content"] for m in conv.context(budget=2000).messages] == ["first"]
    b.conversation("a").append({"role": "user", "content": "second"})
    assert [m["content"] for m in conv.context(budget=2000).messages] == ["first", "second"]
    a.close()
    b.close()


# --- point 7: erasure leaves nothing ---------------------------------------------------------------------
SECRET = "Zebracorn"


def test_erasure_reaches_slot_keys_events_replaced_texts_and_episode_facts(db_path, clock):
    mf = MemFold(db_path, clock=clock, token_counter="words", embedder="hashing")
    conv = mf.conversation("a", namespace="ns")
    conv.append({"role": "user", "content": "hello"})
    rec = mf.remember("ns", "semantic", f"likes {SECRET} rides", key=f"user.preference.{SECRET.lower()}")
    episode = mf.remember("ns", "episodic", f"user: My name is {SECRET} Okafor.")
    mf.consolidate("ns")
    derived = [r for r in mf.memory.list("ns", "semantic") if f"record:{episode.id}" in r.provenance]
    assert derived and SECRET in derived[0].content
    old = mf.protected.add(f"Ship via {SECRET} freight.", conversation_id="a")
    new = mf.protected.supersede(old.id, "Ship via the post.")
    mf.index_embeddings()
    mf.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert SECRET.encode() in file_bytes(db_path) and SECRET.lower().encode() in file_bytes(db_path)
    plan = mf.erase(record_ids=[rec.id, episode.id], protected_ids=[old.id], vacuum=True)
    assert derived[0].id in plan.records
    data = file_bytes(db_path)
    assert SECRET.encode() not in data and SECRET.lower().encode() not in data
    assert mf.protected.get(new.id).metadata.get("replaces_text") == []
    assert "no longer in force" not in shown(conv.context(budget=2000))
    assert mf.storage.erasure.fts_integrity() == []
    mf.close()


def test_an_expansion_over_an_erased_turn_shows_a_marker(tmp_path):
    mf = small(tmp_path)
    conv = mf.conversation("c")
    ids = [conv.append({"role": "user", "content": f"order ORD-{i} ships from dock {i} at noon"}) for i in range(12)]
    conv.compact(target_tokens=0)
    card = next(i for i in conv.catalog_items() if i.kind == "card")
    under = [t.id for t in conv.expand(card.item_id, to_turns=True)]
    # erase a turn under a card that is still served: the card goes stale, its replacement is unfolded
    mf.erase(turn_ids=[under[0]])
    text = "\n".join(conv.handle_tool_call("expand", {"id": f"c{i.item_id}"}) for i in conv.catalog_items()
                     if i.kind == "card")
    text += conv.handle_tool_call("expand", {"id": f"t{under[0]}"})
    assert f"[erased t{under[0]}]" in text
    assert ids
    mf.close()


def test_erase_with_vacuum_waits_then_names_the_open_reader(db_path, clock):
    mf = MemFold(db_path, clock=clock, token_counter="words", embedder=None)
    conv = mf.conversation("a", namespace="ns")
    secret = conv.append({"role": "user", "content": f"my locker code word is {SECRET}"})
    conv.append({"role": "user", "content": "ok"})
    reader = sqlite3.connect(db_path)
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM turns").fetchone()  # a read transaction holds the WAL open
    with pytest.raises(ErasureIncomplete, match="another connection"):
        mf.erase(turn_ids=[secret], vacuum=True, vacuum_wait=0.2)
    assert mf.archive.get(secret).erased  # committed and hidden, but not reported complete
    reader.rollback()
    reader.close()
    mf.vacuum()
    assert SECRET.encode() not in file_bytes(db_path)
    mf.close()


@pytest.mark.parametrize("mode", ["turn_ids", "record_ids", "protected_ids", "conversation_id", "namespace"])
def test_every_erase_mode_leaves_no_bytes(db_path, clock, mode):
    mf = MemFold(db_path, clock=clock, token_counter="words", embedder="hashing")
    conv = mf.conversation("a", namespace="acme/x")
    other = mf.conversation("b", namespace="other")
    other.append({"role": "user", "content": "unrelated keepsake"})
    conv.append({"role": "user", "content": "hello"})
    t = conv.append({"role": "user", "content": f"I love {SECRET} kites."}) if mode in (
        "turn_ids", "conversation_id", "namespace") else None
    r = mf.remember("acme/x", "semantic", f"loves {SECRET} kites", key=f"user.preference.{SECRET.lower()}",
                    provenance=[f"turn:{t}"] if t else []) if mode in ("record_ids", "turn_ids", "namespace") else None
    p = mf.protected.add(f"Never mention {SECRET}.", conversation_id="a") if mode in (
        "protected_ids", "conversation_id") else None
    mf.index_embeddings()
    scope = {"turn_ids": {"turn_ids": [t]}, "record_ids": {"record_ids": [r.id] if r else []},
             "protected_ids": {"protected_ids": [p.id] if p else []}, "conversation_id": {"conversation_id": "a"},
             "namespace": {"namespace": "acme/x"}}[mode]
    mf.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert SECRET.encode() in file_bytes(db_path)
    mf.erase(**scope, vacuum=True)
    data = file_bytes(db_path)
    assert SECRET.encode() not in data and SECRET.lower().encode() not in data
    assert b"unrelated keepsake" in data
    assert mf.storage.erasure.fts_integrity() == []
    mf.close()
