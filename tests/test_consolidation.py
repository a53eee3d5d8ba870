"""The consolidation pass (issue 5, points 1 and 3): seed case, idempotence, dry run, batches,
run records, provenance, turns, failures. Real SQLite file, LogicalClock, the rules extractor."""

from __future__ import annotations

import pytest

import memfold
from memfold.consolidation import runs as runs_db
from memfold.consolidation.consolidate import consolidate
from memfold.consolidation.extractors.base import Episode, Extractor, Proposal


@pytest.fixture
def db_path(backend_target):
    """Issue 17: every test here runs on SQLite and on PostgreSQL (conftest's ``backend_target``)."""
    return backend_target


NS = "acme/dana"
SEED = [
    "user asked whether a return after the window is allowed",
    "tool said after the window a 10% restocking fee applies",
    "user accepted the $180.00 refund on the $200 order",
    "user confirmed their name is Dana",
]
SEED_RULE = "returns after the 30-day window: apply a 10% restocking fee"


def write_seed(mf, namespace=NS):
    ids = []
    for tick, text in enumerate(SEED, start=1):
        mf.clock.set(max(mf.clock.tick, tick))
        ids.append(mf.memory.write(namespace, "episodic", text, event_time=tick).id)
    return ids


def dump(mf):
    """Every row of every table that consolidation may touch, for before/after comparisons."""
    tables = ("records", "events", "consolidation_runs", "consolidation_sources", "consolidation_cursors")
    if mf.db is not None:
        return {t: mf.db.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall() for t in tables}
    import psycopg  # PostgreSQL: the same rows through a connection of the test's own

    with psycopg.connect(mf.storage.url) as conn:
        return {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in tables}


def test_seed_case_becomes_the_fact_and_the_rule_and_consumes_all_four(mf):
    ids = write_seed(mf)
    run = mf.consolidate(NS)

    assert run.status == "ok" and run.episodes_consumed == 4 and run.batches == 1
    derived = [r for r in mf.memory.list(NS) if r.type != "episodic"]
    assert sorted((r.type, r.key, r.content) for r in derived) == [
        ("procedural", "policy.returns.after_the_30_day_window", SEED_RULE),
        ("semantic", "user.name", "Dana"),
    ]
    fact = next(r for r in derived if r.type == "semantic")
    rule = next(r for r in derived if r.type == "procedural")
    assert f"{fact.key} = {fact.content}" == "user.name = Dana"
    assert fact.provenance == (f"record:{ids[3]}",)
    assert rule.provenance == (f"record:{ids[0]}", f"record:{ids[1]}")
    assert [mf.memory.get(i).status for i in ids] == ["consumed"] * 4
    # each episode is linked to what it produced (t3 produced nothing but is consumed)
    links = {i: runs_db.consumption(mf.storage, f"record:{i}")["products"] for i in ids}
    assert links == {ids[0]: [rule.id], ids[1]: [rule.id], ids[2]: [], ids[3]: [fact.id]}
    assert [e.kind for e in mf.memory.events(NS, record_id=ids[2])] == ["write", "consume"]


def test_rerunning_changes_nothing(mf):
    write_seed(mf)
    mf.consolidate(NS)
    before = dump(mf)
    again = mf.consolidate(NS)
    after = dump(mf)
    assert again.status == "ok" and again.written == [] and again.consumed == []
    # the only new row is the (empty) run record itself
    assert after["consolidation_runs"][:-1] == before["consolidation_runs"]
    assert len(after["consolidation_runs"]) == len(before["consolidation_runs"]) + 1
    for table in ("records", "events", "consolidation_sources"):
        assert after[table] == before[table]


def test_restated_fact_in_a_later_run_does_not_add_a_second_active_fact(mf):
    write_seed(mf)
    mf.consolidate(NS)
    mf.clock.advance(1)
    mf.memory.write(NS, "episodic", "user said their name is Dana", event_time=mf.clock.tick)
    mf.consolidate(NS)
    assert [r.content for r in mf.memory.list(NS, "semantic", key="user.name")] == ["Dana"]


def test_a_new_name_supersedes_through_the_normal_write_path(mf):
    write_seed(mf)
    mf.consolidate(NS)
    mf.clock.advance(1)
    mf.memory.write(NS, "episodic", "user: my name is Dana Smith", event_time=mf.clock.tick)
    mf.consolidate(NS)
    names = mf.memory.list(NS, "semantic", key="user.name", include_inactive=True)
    assert [(r.content, r.status) for r in names] == [("Dana", "retired"), ("Dana Smith", "active")]


def test_dry_run_writes_nothing_and_shows_what_would_be_written(mf):
    write_seed(mf)
    before = dump(mf)
    dry = mf.consolidate(NS, dry_run=True)
    assert dump(mf) == before
    assert dry.id is None and dry.dry_run
    assert [p.render() for p in dry.proposals] == [SEED_RULE, "user.name = Dana"]
    real = mf.consolidate(NS)
    assert [p.render() for p in real.proposals] == [p.render() for p in dry.proposals]


def test_batches_each_commit_and_the_run_record_counts_them(mf):
    for i in range(25):
        mf.memory.write(NS, "episodic", f"user: I love board game {i}")
    run = consolidate(mf.consolidation_parts, NS, batch_size=10)
    assert run.batches == 3 and run.episodes_consumed == 25 and run.facts_written == 25
    stored = runs_db.get_run(mf.storage, run.id)
    assert (stored.status, stored.batches, stored.episodes_consumed, stored.facts_written, stored.rules_written) == (
        "ok", 3, 25, 25, 0)
    assert stored.started_at == mf.clock.now() and stored.finished_at == mf.clock.now()
    assert len({r.key for r in mf.memory.list(NS, "semantic")}) == 25


def test_every_derived_record_cites_consumed_sources(mf):
    texts = ["user: I'm Dana. My order ORD-3300 arrived broken.", "assistant said sorry Dana, checking now",
             "user: please contact me by email", "agent said if the item is damaged, the customer must send a photo",
             "user: I live in Lyon"]
    for t in texts:
        mf.memory.write(NS, "episodic", t)
    mf.consolidate(NS)
    derived = [r for r in mf.memory.list(NS) if r.type != "episodic"]
    assert {(r.key, r.content) for r in derived} == {
        ("user.name", "Dana"), ("user.order_id", "ORD-3300"), ("user.contact_preference", "email"),
        ("user.location", "Lyon"),
        ("policy.general.if_the_item_is_damaged", "if the item is damaged: the customer must send a photo"),
    }
    for r in derived:
        assert r.provenance
        for source in r.provenance:
            assert runs_db.consumption(mf.storage, source) is not None
            assert mf.memory.get(int(source.split(":")[1])).status == "consumed"


def test_horizon_now_leaves_later_episodes_for_the_next_run(mf):
    mf.memory.write(NS, "episodic", "user: my name is Dana")
    mf.clock.advance(5)
    late = mf.memory.write(NS, "episodic", "user: I live in Oslo")
    run = mf.consolidate(NS, now=2)
    assert run.episodes_consumed == 1 and mf.memory.get(late.id).status == "active"
    assert mf.consolidate(NS).episodes_consumed == 1


def test_namespaces_are_kept_apart(mf):
    write_seed(mf, "acme/dana")
    mf.memory.write("acme/sam", "episodic", "user: my name is Sam")
    mf.consolidate("acme/dana")
    assert [r.content for r in mf.memory.list("acme/dana", "semantic")] == ["Dana"]
    assert mf.memory.list("acme/sam", "semantic") == []
    assert [r.status for r in mf.memory.list("acme/sam", "episodic")] == ["active"]


def test_archived_turns_are_read_past_a_cursor(mf):
    conv = mf.conversation("t-1", namespace=NS)
    conv.append({"role": "user", "content": "Hi, my name is Dana and I prefer phone calls."})
    conv.append({"role": "assistant", "content": "Thanks! My name is Bob, I am your agent."})
    conv.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "return_policy", "arguments": "{}"}}]})
    conv.append({"role": "tool", "tool_call_id": "c1", "content": "After the return window a 10% restocking fee applies."})
    run = mf.consolidate(NS, include_turns=True)
    assert run.turns_consumed == 4 and run.episodes_consumed == 0
    facts = {(r.key, r.content, r.provenance) for r in mf.memory.list(NS)}
    turn_ids = [t.id for t in conv.history()]
    assert facts == {
        ("user.name", "Dana", (f"turn:{turn_ids[0]}",)),
        ("user.contact_preference", "phone", (f"turn:{turn_ids[0]}",)),
        ("policy.returns.after_the_30_day_window", SEED_RULE, (f"turn:{turn_ids[3]}",)),
    }
    assert runs_db.turn_cursor(mf.storage, NS) == turn_ids[-1]
    again = mf.consolidate(NS, include_turns=True)
    assert again.turns_consumed == 0 and again.written == []
    conv.append({"role": "user", "content": "I live in Lyon."})
    assert [p.render() for p in mf.consolidate(NS, include_turns=True).proposals] == ["user.location = Lyon"]


def test_bad_input_writes_nothing(mf):
    write_seed(mf)
    before = dump(mf)
    with pytest.raises(memfold.InvalidInput, match="batch_size"):
        mf.consolidate(NS, batch_size=0)
    with pytest.raises(memfold.InvalidInput, match="namespace"):
        mf.consolidate("")
    assert dump(mf) == before


class CitingStranger(Extractor):
    """An extractor whose output does not validate: it cites a source outside the batch."""

    id = "bad"

    def extract(self, episodes):
        return [Proposal("semantic", "user.name", "Eve", ("record:999",))]


class FactWithoutKey(Extractor):
    id = "nokey"

    def extract(self, episodes):
        return [Proposal("semantic", None, "Eve", (episodes[0].source,))]


@pytest.mark.parametrize("extractor", [CitingStranger(), FactWithoutKey()])
def test_invalid_extractor_output_consumes_nothing_and_is_recorded(mf, extractor):
    ids = write_seed(mf)
    run = mf.consolidate(NS, extractor=extractor)
    assert run.status == "failed" and run.episodes_consumed == 0 and run.errors
    assert [mf.memory.get(i).status for i in ids] == ["active"] * 4
    assert [r.type for r in mf.memory.list(NS)] == ["episodic"] * 4
    stored = runs_db.get_run(mf.storage, run.id)
    assert stored.status == "failed" and stored.errors == run.errors
    failures = mf.memory.events(NS, kind="consolidation_failed")
    assert len(failures) == 1 and failures[0].subject == f"run:{run.id}"


def test_facade_extractor_is_injected(db_path):
    class Shout(Extractor):
        id = "shout"

        def extract(self, episodes):
            return [Proposal("procedural", None, e.text.upper(), (e.source,)) for e in episodes]

    with memfold.MemFold(db_path, clock=memfold.LogicalClock(), token_counter="words", extractor=Shout()) as m:
        m.memory.write(NS, "episodic", "tool said hello")
        run = m.consolidate(NS)
        assert run.extractor == "shout"
        assert [r.content for r in m.memory.list(NS, "procedural")] == ["TOOL SAID HELLO"]
    with pytest.raises(memfold.InvalidInput, match="extractor"):
        memfold.MemFold(db_path, extractor="nonsense")


def test_episode_role_comes_from_metadata_before_text(mf):
    mf.memory.write(NS, "episodic", "my name is Dana", metadata={"role": "user"})
    mf.memory.write(NS, "episodic", "my name is Bob", metadata={"role": "assistant"})
    mf.memory.write(NS, "episodic", "user said my name is Carl", metadata={"role": "tool"})
    mf.consolidate(NS)
    assert [r.content for r in mf.memory.list(NS, "semantic")] == ["Dana"]
