"""The HTTP API (issue 16, point 2) through FastAPI's TestClient: every route, the API keys that
map callers to readers and namespaces, the error tree as status codes, and the committed OpenAPI
document. Real parts throughout: a SQLite file, a LogicalClock, word tokens; no mocks.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

import memfold
from memfold import LogicalClock, MemFold, WindowSettings
from memfold.integrations.http import (
    KEYS_ENV,
    STATUS_BY_ERROR,
    check_bind,
    create_app,
    is_loopback,
    load_keys,
    openapi_document,
    parse_keys,
    status_for,
)
from memfold.memory import errors

OPENAPI = Path(__file__).resolve().parents[1] / "openapi.json"
WINDOW = WindowSettings(budget_tokens=60, output_reserve_tokens=0, hot_turns=2, rollup_fanin=3,
                        leaf_chunk_tokens=20, card_target_tokens=8)
DANA, OPS, OWNER, EVE = ("dana-key-0123456789abcdef", "ops-key-0123456789abcdef",
                         "owner-key-0123456789abcdef", "eve-key-0123456789abcdef")
KEYS = {"keys": [
    {"name": "dana-bot", "key": DANA, "namespaces": ["acme/dana"]},
    {"name": "ops", "key": OPS, "namespaces": ["acme/*"], "labels": ["secret", "billing"]},
    {"name": "admin", "key": OWNER, "namespaces": ["*"], "owner": True},
    {"name": "eve-bot", "key": EVE, "namespaces": ["globex/eve"]},
]}


@pytest.fixture
def mfw(db_path):
    instance = MemFold(db_path, clock=LogicalClock(), token_counter="words", embedder=None, window=WINDOW)
    yield instance
    instance.close()


@pytest.fixture
def owner(mfw):
    """A client of a server without keys: every caller is the owner."""
    with TestClient(create_app(mfw)) as client:
        yield client


@pytest.fixture
def keyed(mfw):
    """A client of a server with :data:`KEYS`; ``keyed.as_(KEY)`` sends that key."""
    app = create_app(mfw, keys=parse_keys(KEYS, "test keys"))
    with TestClient(app) as client:
        yield client


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def error_of(response) -> tuple[int, str, str]:
    body = response.json()
    assert set(body) == {"error", "type"}, body
    return response.status_code, body["type"], body["error"]


# -- every route ------------------------------------------------------------------------------------
def test_every_route_answers_a_whole_session(mfw):
    app = create_app(mfw)
    hit: set[tuple[str, str]] = set()

    @app.middleware("http")
    async def record_route(request, call_next):
        response = await call_next(request)
        route = request.scope.get("route")
        if route is not None and response.status_code < 400:
            hit.add((request.method, route.path))
        return response

    c = TestClient(app)
    assert c.get("/v1/health").json() == {"status": "ok", "version": memfold.__version__, "auth": False}
    assert c.post("/v1/conversations", json={"id": "ticket-42", "namespace": "acme/dana"}).status_code == 201
    again = c.post("/v1/conversations", json={"id": "ticket-42"})
    assert again.status_code == 200 and again.json()["namespace"] == "acme/dana" and not again.json()["created"]
    assert [x["id"] for x in c.get("/v1/conversations").json()["conversations"]] == ["ticket-42"]
    assert c.get("/v1/conversations/ticket-42").json()["family_id"] == "ticket-42"

    script = [
        {"role": "user", "content": "My $200 earbuds from order ORD-3300 arrived 41 days ago. Can I return them?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "policy_lookup", "arguments": "{\"topic\":\"late return\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "name": "policy_lookup",
         "content": "Policy: 10% restocking fee after the 30-day window."},
        {"role": "user", "content": "Oh interesting, thanks for checking that for me"},
        {"role": "assistant", "content": "You can return them for $180.00 after the fee."},
        {"role": "user", "content": "Do the earbuds have a warranty? Never call me, email only."},
        {"role": "assistant", "content": "Yes: a 2-year limited warranty."},
    ]
    for i, message in enumerate(script):
        r = c.post("/v1/conversations/ticket-42/turns", json={"messages": [message]}, headers={"Idempotency-Key": f"m{i}"})
        assert r.status_code == 201, r.text
    turns = c.get("/v1/conversations/ticket-42/turns").json()["turns"]
    assert [t["content"] for t in turns][0] == script[0]["content"]
    assert turns[1]["tool_calls"] == script[1]["tool_calls"] and turns[2]["tool_call_id"] == "call_1"
    assert [t["seq"] for t in c.get("/v1/conversations/ticket-42/turns", params={"after_seq": 5}).json()["turns"]] == [6, 7]

    ctx = c.get("/v1/conversations/ticket-42/context").json()
    assert ctx["total_tokens"] <= ctx["usable_tokens"] == 60
    cards = [ref for ref in ctx["refs"] if ref.startswith("c")]
    assert cards, ctx["refs"]
    assert c.post("/v1/conversations/ticket-42/compact", json={}).json()["conversation_id"] == "ticket-42"
    assert c.post("/v1/conversations/ticket-42/compact").status_code == 200  # the body is optional
    card = c.get(f"/v1/conversations/ticket-42/cards/{cards[0]}").json()
    assert card["kind"] == "card" and card["children"]
    under = c.get(f"/v1/conversations/ticket-42/cards/{cards[0]}/expand", params={"to_turns": True}).json()
    assert under["items"] and all(i["kind"] == "turn" for i in under["items"])
    assert "ORD-3300" in " ".join(i["content"] for i in under["items"]) or under["items"][0]["seq"] > 1

    hits = c.post("/v1/search", json={"query": "restocking fee", "conversation_id": "ticket-42"}).json()["hits"]
    assert hits and "restocking" in hits[0]["text"]

    wrote = c.post("/v1/memories", json={"namespace": "acme/dana", "type": "semantic", "content": "Dana prefers email",
                                         "key": "user.contact_preference", "importance": 0.6})
    assert wrote.status_code == 201 and wrote.json()["action"] == "insert"
    first = wrote.json()["record"]["id"]
    second = c.post("/v1/memories", json={"namespace": "acme/dana", "type": "semantic", "content": "Dana prefers phone",
                                          "key": "user.contact_preference"}).json()
    assert second["action"] == "supersede" and second["retired"] == [first]
    listed = c.get("/v1/memories", params={"namespace": "acme/dana", "all": True}).json()["records"]
    assert [r["status"] for r in listed] == ["retired", "active"]
    top = c.get("/v1/memories/read", params={"namespace": "acme/dana", "k": 5}).json()["records"]
    assert [r["content"] for r in top] == ["Dana prefers phone"] and "score" in top[0]
    assert c.get(f"/v1/memories/{first}").json()["superseded_by"] == second["record"]["id"]
    assert c.post(f"/v1/memories/{first}/revert", json={"cause": "agent mistake"}).json()["status"] == "active"
    assert c.post(f"/v1/memories/{first}/pin").json()["pinned"] is True
    assert c.post(f"/v1/memories/{first}/unpin").json()["pinned"] is False
    assert c.post(f"/v1/memories/{first}/retire").json()["status"] == "retired"

    in_force = c.get("/v1/conversations/ticket-42/protected").json()["records"]
    assert any("email only" in r["text"] or "Never call me" in r["text"] for r in in_force), in_force
    made = [c.post("/v1/protected", json={"text": f"Refund step {i}.", "conversation_id": "ticket-42"}) for i in range(4)]
    assert all(m.status_code == 201 for m in made)
    ids = [m.json()["id"] for m in made]
    assert c.post(f"/v1/protected/{ids[0]}/satisfy").json()["state"] == "satisfied"
    assert c.post(f"/v1/protected/{ids[1]}/expire").json()["state"] == "expired"
    assert c.post(f"/v1/protected/{ids[2]}/revoke", json={"cause": "user withdrew"}).json()["state"] == "revoked"
    new = c.post(f"/v1/protected/{ids[3]}/supersede", json={"text": "Refund in full."})
    assert new.status_code == 201 and new.json()["supersedes"] == ids[3]
    states = {r["id"]: r["state"] for r in c.get("/v1/protected", params={"namespace": "acme/dana", "state": "all"}).json()["records"]}
    assert [states[i] for i in ids] == ["satisfied", "expired", "revoked", "superseded"]

    for text in ("user asked whether a return after the window is allowed", "user confirmed their name is Dana"):
        c.post("/v1/memories", json={"namespace": "acme/dana", "type": "episodic", "content": text})
    run = c.post("/v1/consolidate", json={"namespace": "acme/dana"}).json()
    assert run["status"] == "ok" and run["episodes_consumed"] == 2 and run["facts_written"] == 1
    kinds = {e["kind"] for e in c.get("/v1/events", params={"namespace": "acme/dana"}).json()["events"]}
    assert {"write", "retire", "revert", "pin", "unpin", "consume", "protect"} <= kinds
    assert len(c.get("/v1/events", params={"limit": 3}).json()["events"]) == 3

    erased = c.post("/v1/erase", json={"turn_ids": [turns[0]["id"]], "vacuum": True}).json()
    assert erased["turns"] == [turns[0]["id"]] and erased["counts"]["turns"] == 1
    assert c.get("/v1/conversations/ticket-42/turns").json()["turns"][0]["erased"] is True

    routes = {(method, route.path) for route in app.routes if isinstance(route, APIRoute) for method in route.methods}
    assert routes - hit == set(), f"routes no test called successfully: {sorted(routes - hit)}"


# -- turns and idempotency --------------------------------------------------------------------------
def test_turns_keep_the_openai_message_shape_verbatim(owner, mfw):
    owner.post("/v1/conversations", json={"id": "c1"})
    messages = [
        {"role": "system", "content": "You are a support agent."},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_9", "type": "function", "function": {"name": "lookup", "arguments": "{\"id\": 7}"},
             "extra": "kept"}]},
        {"role": "tool", "tool_call_id": "call_9", "content": "{\"status\": \"shipped\"}"},
        {"role": "user", "name": "dana", "content": "Thanks ✓", "metadata": {"channel": "chat"}, "created_at": 3},
    ]
    r = owner.post("/v1/conversations/c1/turns", json={"messages": messages})
    assert r.status_code == 201 and r.json()["refs"] == ["t1", "t2", "t3", "t4"]
    stored = mfw.conversation("c1").history()
    assert [t.message() for t in stored] == [{k: v for k, v in m.items() if k not in ("metadata", "created_at")}
                                             for m in messages]
    assert stored[3].metadata == {"channel": "chat"} and stored[3].created_at == 3
    assert mfw.archive.verify() == []


def test_append_with_an_idempotency_key_writes_once(owner, mfw):
    owner.post("/v1/conversations", json={"id": "c1"})
    body = {"messages": [{"role": "user", "content": "hello"}], "idempotency_key": "req-1"}
    first = owner.post("/v1/conversations/c1/turns", json=body)
    retry = owner.post("/v1/conversations/c1/turns", json=body)
    assert (first.status_code, retry.status_code) == (201, 200)
    assert retry.json()["turn_ids"] == first.json()["turn_ids"] and retry.json()["replayed"] == [True]
    # the header works the same; a batch under key K uses K#1..K#n
    batch = {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]}
    one = owner.post("/v1/conversations/c1/turns", json=batch, headers={"Idempotency-Key": "req-2"}).json()
    two = owner.post("/v1/conversations/c1/turns", json=batch, headers={"Idempotency-Key": "req-2"}).json()
    assert one["turn_ids"] == two["turn_ids"] and two["replayed"] == [True, True]
    assert mfw.conversation("c1").append({"role": "assistant", "content": "b"}, idempotency_key="req-2#2") == one["turn_ids"][1]
    assert [t.content for t in mfw.conversation("c1").history()] == ["hello", "a", "b"]
    # reusing a key for other content, or two different keys at once, is refused and writes nothing
    other = owner.post("/v1/conversations/c1/turns", json={"messages": [{"role": "user", "content": "bye"}],
                                                           "idempotency_key": "req-1"})
    assert error_of(other)[:2] == (422, "InvalidInput") and "other content" in other.json()["error"]
    both = owner.post("/v1/conversations/c1/turns", json=body, headers={"Idempotency-Key": "req-9"})
    assert error_of(both)[:2] == (422, "InvalidInput")
    assert len(mfw.conversation("c1").history()) == 3


def test_a_bad_turn_is_refused_with_the_librarys_message_and_nothing_is_written(owner, mfw):
    owner.post("/v1/conversations", json={"id": "c1"})
    r = owner.post("/v1/conversations/c1/turns", json={"messages": [
        {"role": "user", "content": "fine"}, {"role": "tool", "content": "no call id"}]})
    assert error_of(r) == (422, "InvalidInput", "a tool turn needs the tool_call_id of the call it answers")
    r = owner.post("/v1/conversations/c1/turns", json={"messages": [{"role": "robot", "content": "x"}]})
    assert error_of(r)[:2] == (422, "InvalidInput") and "role" in r.json()["error"]
    r = owner.post("/v1/conversations/c1/turns", json={"messages": [{"role": "user", "content": "x", "reader": ["secret"]}]})
    assert error_of(r)[:2] == (422, "InvalidInput")
    assert mfw.conversation("c1").history() == []


# -- API keys: readers and namespaces ---------------------------------------------------------------
@pytest.fixture
def two_tenants(mfw):
    """acme/dana (with a secret turn) and globex/eve, written through the facade."""
    dana = mfw.conversation("dana-1", namespace="acme/dana")
    dana.append({"role": "user", "content": "My order ORD-3300 arrived broken."})
    dana.append({"role": "assistant", "content": "What is your account PIN?"})
    pin = dana.append({"role": "user", "content": "my PIN is 4471"})
    eve = mfw.conversation("eve-1", namespace="globex/eve")
    eve.append({"role": "user", "content": "Eve's order ORD-9000 is late."})
    rec = mfw.memory.write("globex/eve", "semantic", "Eve lives in Lyon", key="user.location")
    prot = mfw.protected.add("Never phone Eve.", namespace="globex/eve")
    mfw.memory.write("acme/dana", "semantic", "Dana's card ends 1234", labels=["billing"])
    return {"pin": pin, "eve_record": rec.id, "eve_protected": prot.id, "eve_turn": eve.history()[0].id}


def test_a_key_is_required_and_must_be_known(keyed, two_tenants):
    assert keyed.get("/v1/health").status_code == 200  # liveness needs no key
    r = keyed.get("/v1/conversations")
    assert error_of(r)[:2] == (401, "Unauthorized") and r.headers["www-authenticate"] == "Bearer"
    assert error_of(keyed.get("/v1/conversations", headers=auth("not-a-key-0123456789")))[:2] == (401, "Unauthorized")
    assert keyed.get("/v1/conversations", headers={"X-API-Key": DANA}).status_code == 200


def test_a_key_sees_only_its_namespaces(keyed, two_tenants):
    ids = lambda key: [c["id"] for c in keyed.get("/v1/conversations", headers=auth(key)).json()["conversations"]]  # noqa: E731
    assert ids(DANA) == ["dana-1"] and ids(EVE) == ["eve-1"] and ids(OPS) == ["dana-1"]
    assert ids(OWNER) == ["dana-1", "eve-1"]
    # an id in another namespace answers exactly as an id that does not exist
    for path in ("/v1/conversations/eve-1", "/v1/conversations/eve-1/turns", "/v1/conversations/eve-1/context",
                 "/v1/conversations/eve-1/protected", f"/v1/conversations/eve-1/cards/t{two_tenants['eve_turn']}"):
        elsewhere, nowhere = keyed.get(path, headers=auth(DANA)), keyed.get(path.replace("eve-1", "nope"), headers=auth(DANA))
        assert error_of(elsewhere)[:2] == (404, "ConversationNotFound"), path
        assert elsewhere.json()["error"].replace("eve-1", "X") == nowhere.json()["error"].replace("nope", "X")
    r = keyed.post("/v1/conversations/eve-1/turns", headers=auth(DANA), json={"messages": [{"role": "user", "content": "hi"}]})
    assert error_of(r)[:2] == (404, "ConversationNotFound")
    rec, prot = two_tenants["eve_record"], two_tenants["eve_protected"]
    assert error_of(keyed.get(f"/v1/memories/{rec}", headers=auth(DANA))) == (404, "RecordNotFound", f"no memory record with id {rec}")
    assert error_of(keyed.get("/v1/memories/999", headers=auth(DANA))) == (404, "RecordNotFound", "no memory record with id 999")
    for verb in ("retire", "pin", "unpin", "revert"):
        assert keyed.post(f"/v1/memories/{rec}/{verb}", headers=auth(DANA)).status_code == 404
    for verb in ("satisfy", "expire", "revoke"):
        assert error_of(keyed.post(f"/v1/protected/{prot}/{verb}", headers=auth(DANA)))[:2] == (404, "ProtectedNotFound")
    assert keyed.post(f"/v1/protected/{prot}/supersede", headers=auth(DANA), json={"text": "x"}).status_code == 404
    # nothing changed in eve's namespace
    assert keyed.get(f"/v1/memories/{rec}", headers=auth(EVE)).json()["status"] == "active"
    assert keyed.get("/v1/protected", headers=auth(EVE), params={"namespace": "globex/eve"}).json()["records"][0]["state"] == "active"


def test_a_key_cannot_name_another_namespace(keyed, two_tenants):
    h = auth(DANA)
    denied = [
        keyed.post("/v1/conversations", headers=h, json={"id": "new", "namespace": "globex/eve"}),
        keyed.post("/v1/search", headers=h, json={"query": "order", "namespace": "globex/eve"}),
        keyed.get("/v1/memories", headers=h, params={"namespace": "globex/eve"}),
        keyed.get("/v1/memories/read", headers=h, params={"namespace": "globex/eve"}),
        keyed.post("/v1/memories", headers=h, json={"namespace": "globex/eve", "type": "semantic", "content": "x"}),
        keyed.get("/v1/protected", headers=h, params={"namespace": "globex/eve"}),
        keyed.post("/v1/protected", headers=h, json={"text": "x", "namespace": "globex/eve"}),
        keyed.post("/v1/consolidate", headers=h, json={"namespace": "globex/eve"}),
        keyed.post("/v1/erase", headers=h, json={"namespace": "globex/eve"}),
        keyed.get("/v1/events", headers=h, params={"namespace": "globex/eve"}),
    ]
    for r in denied:
        assert error_of(r) == (403, "PermissionDenied", "API key 'dana-bot' may not use namespace 'globex/eve'"), r.request.url
    # ids of another namespace in an erasure are unknown ids; nothing is erased
    for body, kind in (({"turn_ids": [two_tenants["eve_turn"]]}, "TurnNotFound"),
                       ({"record_ids": [two_tenants["eve_record"]]}, "RecordNotFound"),
                       ({"protected_ids": [two_tenants["eve_protected"]]}, "ProtectedNotFound"),
                       ({"conversation_id": "eve-1"}, "ConversationNotFound")):
        assert error_of(keyed.post("/v1/erase", headers=h, json=body))[:2] == (404, kind)
    assert keyed.get("/v1/conversations/eve-1/turns", headers=auth(EVE)).json()["turns"][0]["erased"] is False
    # a taken id in another namespace does not reveal that namespace
    r = keyed.post("/v1/conversations", headers=h, json={"id": "eve-1"})
    assert error_of(r) == (422, "InvalidInput", "conversation id 'eve-1' is taken: choose another id")
    # nothing in a request widens the key: unknown parameters change nothing, unknown fields are refused
    widened = keyed.get("/v1/memories", headers=h, params={"user_id": "globex/eve", "reader": "secret"}).json()["records"]
    assert all(r["namespace"] == "acme/dana" for r in widened)
    r = keyed.post("/v1/search", headers=h, json={"query": "order", "reader_labels": ["secret"]})
    assert error_of(r)[:2] == (422, "InvalidInput")


def test_a_key_reads_as_its_reader(keyed, two_tenants):
    pin = two_tenants["pin"]
    contents = lambda key: [t["content"] for t in keyed.get("/v1/conversations/dana-1/turns", headers=auth(key)).json()["turns"]]  # noqa: E731
    assert "my PIN is 4471" not in contents(DANA)
    assert "my PIN is 4471" in contents(OPS) and "my PIN is 4471" in contents(OWNER)
    ctx = keyed.get("/v1/conversations/dana-1/context", headers=auth(DANA), params={"budget": 2000}).json()
    assert "4471" not in json.dumps(ctx["messages"])
    hits = keyed.post("/v1/search", headers=auth(DANA), json={"query": "4471 PIN"}).json()["hits"]
    assert all("4471" not in h["text"] for h in hits)  # the key's single namespace is the default scope
    assert any("4471" in h["text"] for h in keyed.post("/v1/search", headers=auth(OPS),
                                                       json={"query": "4471 PIN", "namespace": "acme/dana"}).json()["hits"])
    r = keyed.get(f"/v1/conversations/dana-1/cards/t{pin}/expand", headers=auth(DANA))
    assert error_of(r)[:2] == (403, "PermissionDenied") and "secret" in r.json()["error"]
    assert error_of(keyed.get(f"/v1/conversations/dana-1/cards/t{pin}", headers=auth(DANA)))[:2] == (403, "PermissionDenied")
    assert keyed.get(f"/v1/conversations/dana-1/cards/t{pin}/expand", headers=auth(OPS)).json()["items"][0]["content"] == "my PIN is 4471"
    # a record labelled billing: listed and read only for the key holding the label
    listed = lambda key: [r["content"] for r in keyed.get("/v1/memories", headers=auth(key), params={"namespace": "acme/dana"}).json()["records"]]  # noqa: E731
    assert listed(DANA) == [] and listed(OPS) == ["Dana's card ends 1234"]
    read = keyed.get("/v1/memories/read", headers=auth(DANA), params={"namespace": "acme/dana"}).json()["records"]
    assert read == []
    billing = keyed.get("/v1/memories", headers=auth(OPS), params={"namespace": "acme/dana"}).json()["records"][0]["id"]
    assert error_of(keyed.get(f"/v1/memories/{billing}", headers=auth(DANA)))[:2] == (403, "PermissionDenied")
    assert error_of(keyed.post(f"/v1/memories/{billing}/retire", headers=auth(DANA)))[:2] == (403, "PermissionDenied")


def test_a_key_with_several_namespaces_must_scope_its_search_and_events_stay_in_its_namespaces(keyed, two_tenants):
    r = keyed.post("/v1/search", headers=auth(OPS), json={"query": "order"})
    assert error_of(r)[:2] == (422, "InvalidInput") and "namespace or conversation_id" in r.json()["error"]
    # acme/dana's only event is about a record labelled billing, which dana-bot may not read (hidden too)
    assert {e["namespace"] for e in keyed.get("/v1/events", headers=auth(DANA)).json()["events"]} <= {"acme/dana"}
    assert {e["namespace"] for e in keyed.get("/v1/events", headers=auth(OWNER)).json()["events"]} >= {"acme/dana", "globex/eve"}
    # a key creates conversations in its own namespace by default, and may write there
    made = keyed.post("/v1/conversations", headers=auth(DANA), json={"id": "dana-2"}).json()
    assert made["namespace"] == "acme/dana" and made["created"]
    assert keyed.post("/v1/memories", headers=auth(DANA),
                      json={"namespace": "acme/dana", "type": "episodic", "content": "user called"}).status_code == 201


# -- keys files, binding -----------------------------------------------------------------------------
def test_keys_load_from_a_file_or_the_environment(tmp_path):
    path = tmp_path / "keys.json"
    path.write_text(json.dumps(KEYS), encoding="utf-8")
    from_file = load_keys(path, environ={})
    assert [k.name for k in from_file] == ["dana-bot", "ops", "admin", "eve-bot"]
    assert from_file[1].allows("acme/dana") and not from_file[1].allows("acme") and not from_file[1].allows("globex/eve")
    assert from_file[2].allows("anything") and from_file[2].reader() is None
    assert sorted(from_file[1].reader().labels) == ["billing", "secret"]
    from_env = load_keys(None, environ={KEYS_ENV: json.dumps(KEYS["keys"])})
    assert [k.digest for k in from_env] == [k.digest for k in from_file]
    assert load_keys(None, environ={}) is None
    import hashlib

    hashed = parse_keys([{"name": "h", "sha256": hashlib.sha256(DANA.encode()).hexdigest(), "namespaces": ["a"]}], "x")
    assert hashed[0].digest == from_file[0].digest
    assert all(DANA not in repr(k) for k in from_file)  # only the digest is kept


@pytest.mark.parametrize("data,message", [
    ({"keys": []}, "at least one key"),
    ([{"name": "a", "key": "short", "namespaces": ["x"]}], "at least 16 characters"),
    ([{"name": "a", "namespaces": ["x"]}], "exactly one of 'key'"),
    ([{"name": "a", "key": DANA, "namespaces": []}], "needs 'namespaces'"),
    ([{"name": "a", "key": DANA, "namespaces": ["x"], "role": "admin"}], "unknown field"),
    ([{"name": "a", "key": DANA, "namespaces": ["x"]}, {"name": "b", "key": DANA, "namespaces": ["y"]}], "repeats the key"),
    ([{"name": "a", "key": DANA, "namespaces": ["x"], "owner": "yes"}], "owner must be true or false"),
    ([{"name": "a", "sha256": "abc", "namespaces": ["x"]}], "64 lowercase hex"),
])
def test_malformed_keys_are_refused_naming_the_entry(data, message):
    with pytest.raises(memfold.InvalidInput, match=message):
        parse_keys(data, "keys.json")


def test_a_keys_file_that_is_not_json_or_missing_is_refused(tmp_path):
    bad = tmp_path / "keys.json"
    bad.write_text("{nope", encoding="utf-8")
    with pytest.raises(memfold.InvalidInput, match=r"keys.json is not JSON: .* line 1"):
        load_keys(bad, environ={})
    with pytest.raises(memfold.InvalidInput, match="cannot read the keys file"):
        load_keys(tmp_path / "missing.json", environ={})


def test_without_keys_only_loopback_may_be_bound():
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        assert is_loopback(host)
        check_bind(host, None)
    for host in ("0.0.0.0", "192.168.1.4", "::", "example.org"):
        with pytest.raises(memfold.InvalidInput, match=f"refusing to serve on {host} without API keys"):
            check_bind(host, None)
        check_bind(host, parse_keys(KEYS, "k"))  # with keys any address


# -- the error tree ----------------------------------------------------------------------------------
def test_every_library_error_maps_to_a_status_that_is_not_500():
    classes = [getattr(errors, name) for name in dir(errors)
               if isinstance(getattr(errors, name), type) and issubclass(getattr(errors, name), errors.MemfoldError)
               and getattr(errors, name) is not errors.MemfoldError]
    assert len(classes) >= 15
    got = {cls.__name__: status_for(cls("x")) for cls in classes}
    assert [name for name, status in got.items() if status == 500] == [], "add them to STATUS_BY_ERROR"
    assert {k: got[k] for k in ("InvalidInput", "ClockError", "CapacityExceeded", "NotFound", "TurnNotFound",
                                "PermissionDenied", "BudgetError", "StorageError", "SchemaTooNew",
                                "StorageConflict")} == {
        "InvalidInput": 422, "ClockError": 422, "CapacityExceeded": 422, "NotFound": 404, "TurnNotFound": 404,
        "PermissionDenied": 403, "BudgetError": 409, "StorageError": 503, "SchemaTooNew": 503,
        "StorageConflict": 409}
    assert set(STATUS_BY_ERROR) <= set(classes)


def test_errors_come_back_as_status_and_error_type(owner, mfw):
    owner.post("/v1/conversations", json={"id": "c1", "namespace": "acme/dana"})
    assert error_of(owner.get("/v1/conversations/nope"))[:2] == (404, "ConversationNotFound")
    assert error_of(owner.get("/v1/conversations/c1/cards/c99"))[:2] == (404, "CardNotFound")
    assert error_of(owner.get("/v1/conversations/c1/cards/zz"))[:2] == (422, "InvalidInput")
    assert error_of(owner.post("/v1/memories", json={"namespace": "a", "type": "semantic", "content": " "}))[:2] == (422, "InvalidInput")
    assert error_of(owner.get("/v1/memories/0"))[:2] == (422, "InvalidInput")
    assert error_of(owner.post("/v1/memories/1/retire"))[:2] == (404, "RecordNotFound")
    assert error_of(owner.post("/v1/consolidate", json={"namespace": "nobody"})) == (404, "NotFound", "no namespace 'nobody'")[:2] + (
        owner.post("/v1/consolidate", json={"namespace": "nobody"}).json()["error"],)
    assert error_of(owner.get("/v1/nowhere")) == (404, "NotFound", "Not Found")
    assert error_of(owner.delete("/v1/conversations"))[:2] == (405, "MethodNotAllowed")
    assert error_of(owner.post("/v1/search", content=b"{not json", headers={"Content-Type": "application/json"}))[:2] == (422, "InvalidInput")
    # a protected channel larger than the budget: BudgetError, 409
    mfw.protected.add("Always " + "verify the customer identity twice " * 6, conversation_id="c1")
    code, kind, message = error_of(owner.get("/v1/conversations/c1/context", params={"budget": 20, "output_reserve": 0}))
    assert (code, kind) == (409, "BudgetError") and "protected" in message
    # a retire of a record that is not active: InvalidInput naming it
    rid = mfw.memory.write("acme/dana", "semantic", "x").id
    owner.post(f"/v1/memories/{rid}/retire")
    assert error_of(owner.post(f"/v1/memories/{rid}/retire")) == (422, "InvalidInput", f"record {rid} is retired: only an active record can be retired")


def test_a_locked_database_is_503_and_writes_nothing(owner, mfw, db_path, monkeypatch):
    from memfold.memory.storage.sqlite import connection

    monkeypatch.setattr(connection, "BUSY_RETRY_SECONDS", 0.2)
    mfw.db.conn.execute("PRAGMA busy_timeout = 50")
    blocker = sqlite3.connect(db_path, timeout=0)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        r = owner.post("/v1/memories", json={"namespace": "acme/dana", "type": "semantic", "content": "Dana likes tea"})
        code, kind, message = error_of(r)
        assert (code, kind) == (503, "StorageError") and "locked" in message
    finally:
        blocker.rollback()
        blocker.close()
    assert mfw.memory.list("acme/dana") == []


# -- the OpenAPI document ----------------------------------------------------------------------------
def test_the_committed_openapi_document_matches_the_app():
    committed = json.loads(OPENAPI.read_text(encoding="utf-8"))
    assert committed == openapi_document(), (
        "openapi.json drifted from the app: regenerate it with "
        "'python -m memfold.integrations.http openapi.json' and commit it")


def test_the_served_openapi_document_is_the_committed_one(owner):
    assert owner.get("/openapi.json").json() == json.loads(OPENAPI.read_text(encoding="utf-8"))


def test_the_openapi_document_names_every_error_status_and_both_key_schemes():
    doc = openapi_document()
    schemes = doc["components"]["securitySchemes"]
    assert schemes["HTTPBearer"]["scheme"] == "bearer" and schemes["APIKeyHeader"]["name"] == "X-API-Key"
    for path, operations in doc["paths"].items():
        for method, op in operations.items():
            assert {"401", "403", "404", "409", "422", "503"} <= set(op["responses"]), (method, path)
    assert doc["components"]["schemas"]["ChatMessage"]["properties"]["role"]["enum"] == ["user", "assistant", "tool", "system",
                                                                                       "developer"]


def test_explicit_nulls_mean_the_default(owner, mfw):
    """Found by the property run: ``"kinds": null`` reached the searcher as None."""
    owner.post("/v1/conversations", json={"id": "c1", "namespace": "acme/dana"})
    owner.post("/v1/conversations/c1/turns", json={"messages": [{"role": "user", "content": "broken earbuds",
                                                                 "labels": None, "metadata": None, "name": None}]})
    r = owner.post("/v1/search", json={"query": "earbuds", "kinds": None, "type": None, "since": None, "namespace": None})
    assert r.status_code == 200 and [h["text"] for h in r.json()["hits"]] == ["broken earbuds"]
    w = owner.post("/v1/memories", json={"namespace": "acme/dana", "type": "semantic", "content": "x", "key": None,
                                         "labels": None, "metadata": None, "event_time": None, "provenance": None})
    assert w.status_code == 201
    p = owner.post("/v1/protected", json={"text": "Never phone.", "conversation_id": "c1", "due_at": None, "labels": None})
    assert p.status_code == 201
