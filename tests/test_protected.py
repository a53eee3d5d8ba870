"""The protected channel: structured rows, states, clock-driven deadlines, verbatim rendering (issue 8 points 1, 3)."""

from __future__ import annotations

import sqlite3

import pytest

import memfold
from memfold import InvalidInput, ProtectedNotFound, Reader


@pytest.fixture
def conv(mf):
    return mf.conversation("ticket-1", namespace="acme/dana")


def test_add_stores_structured_row_verbatim(mf, conv):
    text = "  Never delete the customer's backups — not even old ones!  "
    rec = mf.protected.add(text, kind="constraint", conversation_id=conv.id, provenance=["turn:1"], labels=["ops"])
    assert rec.text == text
    assert (rec.kind, rec.state, rec.scope, rec.namespace) == ("constraint", "active", "conversation", "acme/dana")
    assert rec.provenance == ("turn:1",) and rec.labels == ("ops",)
    assert mf.protected.get(rec.id) == rec


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"text": "", "namespace": "n"}, "empty"),
        ({"text": "x", "kind": "wish", "namespace": "n"}, "unknown protected kind"),
        ({"text": "x"}, "needs a scope"),
        ({"text": "x", "namespace": "n", "labels": "ops"}, "list of label names"),
        ({"text": "x", "conversation_id": "ticket-1", "namespace": "other"}, "is in namespace"),
        ({"text": "x\x00", "namespace": "n"}, "NUL"),
    ],
)
def test_bad_input_writes_nothing(mf, conv, kwargs, message):
    text = kwargs.pop("text")
    with pytest.raises(InvalidInput, match=message):
        mf.protected.add(text, **kwargs)
    assert mf.db.execute("SELECT COUNT(*) FROM protected").fetchone()[0] == 0
    assert mf.memory.events(kind="protect") == []


def test_transitions_leave_channel_and_are_logged_without_text(mf, conv):
    texts = ["Send the refund by Friday.", "Never call after 6 pm.", "Only email, never SMS.", "Keep the ticket open."]
    recs = [mf.protected.add(t, conversation_id=conv.id) for t in texts]
    mf.protected.satisfy(recs[0].id, cause="refund sent")
    mf.protected.expire(recs[1].id)
    mf.protected.revoke(recs[2].id, cause="user said so")
    new = mf.protected.supersede(recs[3].id, "Close the ticket after the refund.")
    states = {r.id: r.state for r in mf.protected.list(state=None)}
    assert states == {recs[0].id: "satisfied", recs[1].id: "expired", recs[2].id: "revoked",
                      recs[3].id: "superseded", new.id: "active"}
    assert mf.protected.get(recs[3].id).superseded_by == new.id
    assert mf.db.execute("SELECT supersedes FROM protected WHERE id = ?", [new.id]).fetchone()[0] == recs[3].id
    kinds = [e.kind for e in mf.memory.events() if e.subject.startswith("protected:")]
    assert kinds == ["protect"] * 4 + ["protected_satisfied", "protected_expired", "protected_revoked", "protect",
                                       "protected_superseded"]
    log = repr([e.to_dict() for e in mf.memory.events()])
    assert not any(t in log for t in texts)
    assert [r.id for r in mf.protected.active_for(conv.id)] == [new.id]


def test_only_active_records_change_state(mf, conv):
    rec = mf.protected.add("Never share the invoice.", conversation_id=conv.id)
    mf.protected.revoke(rec.id)
    for verb in ("satisfy", "expire", "revoke"):
        with pytest.raises(InvalidInput, match="is revoked, not active"):
            getattr(mf.protected, verb)(rec.id)
    with pytest.raises(InvalidInput, match="cannot be superseded"):
        mf.protected.supersede(rec.id, "x")
    with pytest.raises(ProtectedNotFound):
        mf.protected.satisfy(999)


def test_sql_refuses_edits_deletes_and_reactivation(mf, conv):
    rec = mf.protected.add("Never share the invoice.", conversation_id=conv.id)
    with pytest.raises(sqlite3.DatabaseError, match="verbatim"):
        mf.db.execute("UPDATE protected SET text = 'Share it' WHERE id = ?", [rec.id])
    with pytest.raises(sqlite3.DatabaseError, match="never deleted"):
        mf.db.execute("DELETE FROM protected WHERE id = ?", [rec.id])
    mf.protected.satisfy(rec.id)
    with pytest.raises(sqlite3.DatabaseError, match="only an active"):
        mf.db.execute("UPDATE protected SET state = 'active' WHERE id = ?", [rec.id])


def test_deadlines_expire_by_the_clock(mf, conv, clock):
    due = mf.protected.add("Refund before t=5.", kind="deadline", conversation_id=conv.id, due_at=5)
    later = mf.protected.add("Call back before t=9.", kind="deadline", namespace="acme/dana", due_at=9)
    clock.advance(4)
    assert [r.id for r in mf.protected.active_for(conv.id)] == [due.id, later.id]
    clock.advance(1)
    assert [r.id for r in mf.protected.active_for(conv.id)] == [later.id]
    expired = mf.protected.get(due.id)
    assert expired.state == "expired" and expired.changed_at == 5.0
    assert [e.cause for e in mf.memory.events(kind="protected_expired")] == ["due"]


def test_namespace_scope_and_other_conversations(mf, conv):
    other = mf.conversation("ticket-2", namespace="acme/dana")
    elsewhere = mf.conversation("ticket-3", namespace="globex/lee")
    ns = mf.protected.add("Always address the customer as Ms. Okafor.", namespace="acme/dana")
    own = mf.protected.add("Never refund twice.", conversation_id=conv.id)
    assert [r.id for r in mf.protected.active_for(conv.id)] == [ns.id, own.id]
    assert [r.id for r in mf.protected.active_for(other.id)] == [ns.id]
    assert mf.protected.active_for(elsewhere.id) == []


def test_fork_inherits_records_from_shared_turns_only(mf, conv):
    t1 = conv.append({"role": "user", "content": "Never refund in cash."})
    fork = conv.fork("ticket-1b")
    t2 = conv.append({"role": "user", "content": "Always cc the manager."})
    assert [r.text for r in mf.protected.active_for(fork.id)] == ["Never refund in cash."]
    assert [r.text for r in mf.protected.active_for(conv.id)] == ["Never refund in cash.", "Always cc the manager."]


def test_render_is_verbatim_with_token_accounting_and_never_drops_for_size(mf, conv):
    texts = [f"Rule {i}: never touch server db-{i:03d} without a ticket." for i in range(300)]
    for t in texts:
        mf.protected.add(t, conversation_id=conv.id)
    out = mf.protected.render(conv.id)
    assert len(out.messages) == 1 and out.messages[0]["role"] == "system"
    content = out.messages[0]["content"]
    assert all(t in content for t in texts)
    assert out.tokens == mf.token_counter.count(content) > 3000
    assert len(out.record_ids) == 300


def test_render_hides_records_the_reader_lacks(mf, conv):
    mf.protected.add("Public rule: be polite.", conversation_id=conv.id)
    mf.protected.add("Legal hold on invoice 77: never delete it.", conversation_id=conv.id, labels=["legal"])
    anyone = mf.protected.render(conv.id, reader=Reader.of([]))
    assert "Public rule" in anyone.messages[0]["content"] and "Legal hold" not in anyone.messages[0]["content"]
    lawyer = mf.protected.render(conv.id, reader=["legal"])
    assert "Legal hold" in lawyer.messages[0]["content"]
    assert "Legal hold" in mf.protected.render(conv.id).messages[0]["content"]  # the owner sees everything


def test_supersede_names_what_it_replaces(mf, conv):
    old = mf.protected.add("Ship with carrier A.", kind="policy_state", conversation_id=conv.id)
    mf.protected.supersede(old.id, "Ship with carrier B.")
    content = mf.protected.render(conv.id).messages[0]["content"]
    assert "Ship with carrier B." in content
    assert "no longer in force: Ship with carrier A." in content


def test_empty_channel_renders_nothing(mf, conv):
    out = mf.protected.render(conv.id)
    assert out.messages == [] and out.tokens == 0


def test_reopen_keeps_records(db_path, clock):
    with memfold.MemFold(db_path, clock=clock, token_counter="words", embedder=None) as a:
        a.conversation("c", namespace="n")
        rec = a.protected.add("Never reboot prod on Fridays.", conversation_id="c")
    with memfold.MemFold(db_path, token_counter="words", embedder=None) as b:
        assert b.protected.get(rec.id).text == "Never reboot prod on Fridays."
