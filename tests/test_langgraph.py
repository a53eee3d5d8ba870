"""The LangGraph store and pre-model hook (issue 16, point 3), tested with LangGraph itself.

LangGraph ships no conformance suite for stores, so the same operations run against its own
``InMemoryStore`` and against :class:`MemfoldStore` and the answers are compared: contract tests
parametrized over both stores (STYLE.md rule 15), and a differential run of generated op
sequences (hypothesis, derandomized). Then a real ``StateGraph(store=MemfoldStore(...))`` and a
prebuilt ReAct agent with memfold's ``pre_model_hook`` run on LangGraph's runner with a fake chat
model from ``langchain_core``.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("langgraph")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from memfold import HashingEmbedder, InvalidInput, LogicalClock, MemFold, Reader, WindowSettings
from memfold.integrations.langgraph import (
    InvalidStoreNamespace,
    MemfoldContext,
    MemfoldStore,
    pre_model_hook,
    to_langgraph_namespace,
    to_memfold_namespace,
)


def open_memfold(path, **kw) -> MemFold:
    kw.setdefault("embedder", "hashing")
    return MemFold(path, clock=LogicalClock(), token_counter="words", **kw)


@pytest.fixture
def hmf(tmp_path):
    instance = open_memfold(tmp_path / "graph.db")
    yield instance
    instance.close()


@pytest.fixture(params=["InMemoryStore", "MemfoldStore"])
def store(request, tmp_path):
    """Each contract test runs against LangGraph's own store and against memfold's."""
    if request.param == "InMemoryStore":
        yield InMemoryStore()
        return
    instance = open_memfold(tmp_path / "contract.db")
    yield MemfoldStore(instance)
    instance.close()


def view(item):
    """What the two stores must agree on: namespace, key, value (times come from other clocks)."""
    return None if item is None else (tuple(item.namespace), item.key, item.value)


def views(items):
    return sorted((view(i) for i in items), key=lambda v: (v[0], v[1]))


# -- contract tests, both stores -------------------------------------------------------------------
def test_put_get_overwrite_delete(store):
    ns = ("users", "dana")
    assert store.get(ns, "food") is None
    store.put(ns, "food", {"likes": "pizza", "n": 1})
    assert view(store.get(ns, "food")) == (ns, "food", {"likes": "pizza", "n": 1})
    store.put(ns, "food", {"likes": "sushi", "n": 2})
    assert store.get(ns, "food").value == {"likes": "sushi", "n": 2}
    store.delete(ns, "food")
    assert store.get(ns, "food") is None
    store.delete(ns, "never-there")  # deleting a missing key is a no-op
    store.put(ns, "food", {"likes": "ramen"})
    assert store.get(ns, "food").value == {"likes": "ramen"}
    assert store.get(("users", "sam"), "food") is None


def test_values_round_trip(store):
    value = {"text": "Dana \u00e9crit \u2603", "n": 3, "x": 1.5, "ok": True, "none": None,
             "tags": ["a", "b"], "nested": {"deep": {"k": [1, {"z": 0}]}}}
    store.put(("docs",), "v", value)
    assert store.get(("docs",), "v").value == value


FILTER_CASES = [
    ({"color": "red"}, {"k1", "k4"}),
    ({"color": {"$eq": "red"}}, {"k1", "k4"}),
    ({"color": {"$ne": "red"}}, {"k2", "k3"}),
    ({"score": {"$gt": 2}}, {"k3", "k4"}),
    ({"score": {"$gte": 2}}, {"k2", "k3", "k4"}),
    ({"score": {"$lt": 2}}, {"k1"}),
    ({"score": {"$lte": 2}}, {"k1", "k2"}),
    ({"score": {"$gte": 2, "$lt": 4}}, {"k2", "k3"}),
    ({"score": {"$gt": 1.5}, "color": "red"}, {"k4"}),
    ({"meta": {"lang": "fr"}}, {"k2"}),
    ({"tags": ["x", "y"]}, {"k3"}),
]


@pytest.mark.parametrize("condition,expected", FILTER_CASES, ids=[json.dumps(c) for c, _ in FILTER_CASES])
def test_search_filters(store, condition, expected):
    ns = ("shop", "items")
    store.put(ns, "k1", {"color": "red", "score": 1, "meta": {"lang": "en"}, "tags": ["x"]})
    store.put(ns, "k2", {"color": "blue", "score": 2, "meta": {"lang": "fr"}, "tags": []})
    store.put(ns, "k3", {"color": "green", "score": 3.5, "meta": {"lang": "en"}, "tags": ["x", "y"]})
    store.put(ns, "k4", {"color": "red", "score": 4, "meta": {"lang": "de"}, "tags": ["y"]})
    store.put(("shop", "other"), "k9", {"color": "red", "score": 9, "meta": {"lang": "fr"}, "tags": ["x", "y"]})
    found = store.search(ns, filter=condition, limit=50)
    assert {i.key for i in found} == expected
    assert all(tuple(i.namespace) == ns for i in found)


def test_search_prefix_limit_offset(store):
    for ns in [("a",), ("a", "b"), ("a", "b", "c"), ("x", "b")]:
        for k in range(3):
            store.put(ns, f"k{k}", {"n": k, "ns": "/".join(ns)})
    assert len(store.search(("a",), limit=100)) == 9
    assert len(store.search(("a", "b"), limit=100)) == 6
    assert len(store.search((), limit=100)) == 12
    pages = [store.search(("a",), limit=4, offset=o) for o in (0, 4, 8)]
    assert [len(p) for p in pages] == [4, 4, 1]
    assert views(i for p in pages for i in p) == views(store.search(("a",), limit=100))


NAMESPACES = [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"), ("a", "c", "f"),
              ("b", "a", "f"), ("users", "123"), ("users", "456", "settings")]
LIST_CASES = [
    dict(),
    dict(prefix=("a",)),
    dict(prefix=("a", "b")),
    dict(prefix=("a", "*", "f")),
    dict(suffix=("f",)),
    dict(suffix=("*", "f")),
    dict(prefix=("a",), suffix=("f",)),
    dict(prefix=("a", "b"), max_depth=3),
    dict(max_depth=1),
    dict(max_depth=2, limit=3),
    dict(limit=2, offset=3),
    dict(prefix=("users",), max_depth=2),
    dict(prefix=("nope",)),
]


@pytest.mark.parametrize("options", LIST_CASES, ids=[repr(o) for o in LIST_CASES])
def test_list_namespaces(store, options):
    for ns in NAMESPACES:
        store.put(ns, "k", {"v": 1})
    expected = InMemoryStore()
    for ns in NAMESPACES:
        expected.put(ns, "k", {"v": 1})
    assert store.list_namespaces(**options) == expected.list_namespaces(**options)
    if options == dict(prefix=("a", "b"), max_depth=3):  # the example of LangGraph's docstring
        assert store.list_namespaces(**options) == [("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f")]


def test_batch_reads_see_the_state_before_its_writes(store):
    ns = ("t",)
    store.put(ns, "k", {"v": 1})
    results = store.batch([
        PutOp(ns, "k", {"v": 2}),
        GetOp(ns, "k"),
        SearchOp(ns),
        PutOp(ns, "new", {"v": 3}),
        ListNamespacesOp(),
        PutOp(ns, "k", {"v": 4}),  # the last put of a key wins
    ])
    assert results[0] is None and results[3] is None and results[5] is None
    assert results[1].value == {"v": 1}
    assert views(results[2]) == [(ns, "k", {"v": 1})]
    assert results[4] == [ns]
    assert store.get(ns, "k").value == {"v": 4}
    assert store.get(ns, "new").value == {"v": 3}


def test_async_api(store):
    async def run():
        await store.aput(("async", "ns"), "k", {"v": 1})
        item = await store.aget(("async", "ns"), "k")
        found = await store.asearch(("async",), filter={"v": 1})
        listed = await store.alist_namespaces(prefix=("async",))
        await store.adelete(("async", "ns"), "k")
        return item, found, listed, await store.aget(("async", "ns"), "k")

    item, found, listed, gone = asyncio.run(run())
    assert item.value == {"v": 1} and [i.key for i in found] == ["k"]
    assert listed == [("async", "ns")] and gone is None


def test_bad_namespaces_are_refused(store):
    for ns in [(), ("a.b",), ("",), ("langgraph", "x")]:
        with pytest.raises(ValueError):
            store.put(ns, "k", {"v": 1})


# -- the differential run: generated op sequences, both stores, compared -------------------------------
NS_POOL = [("a",), ("a", "b"), ("a", "c"), ("a", "b", "d"), ("x", "b"), ("users", "dana")]
PREFIXES = [(), ("a",), ("a", "b"), ("x",), ("users", "dana"), ("zz",)]
FILTERS = [None, {"n": 1}, {"n": {"$gt": 0}}, {"n": {"$lte": -1}}, {"n": {"$ne": 2}},
           {"tag": "red"}, {"tag": {"$ne": "red"}}, {"n": {"$gte": -1, "$lt": 3}, "tag": "blue"},
           {"sub": {"m": 0}}]
values = st.fixed_dictionaries(
    {"n": st.integers(-3, 3), "tag": st.sampled_from(["red", "blue", "Red", "red "])},
    optional={"sub": st.fixed_dictionaries({"m": st.integers(0, 1)}),
              "text": st.text(alphabet="ab \u00e9", max_size=5)},
)
puts = st.builds(PutOp, namespace=st.sampled_from(NS_POOL), key=st.sampled_from(["k1", "k2", "k3"]),
                 value=st.one_of(st.none(), values))
gets = st.builds(GetOp, namespace=st.sampled_from(NS_POOL), key=st.sampled_from(["k1", "k2", "k3"]))
searches = st.builds(SearchOp, namespace_prefix=st.sampled_from(PREFIXES), filter=st.sampled_from(FILTERS),
                     limit=st.just(100), offset=st.just(0), query=st.none())
conditions = st.one_of(
    st.builds(MatchCondition, st.just("prefix"), st.sampled_from([("a",), ("a", "*"), ("x", "b"), ("users",)])),
    st.builds(MatchCondition, st.just("suffix"), st.sampled_from([("b",), ("*", "b"), ("dana",), ("d",)])),
)
lists = st.builds(ListNamespacesOp, match_conditions=st.one_of(st.none(), st.tuples(conditions)),
                  max_depth=st.sampled_from([None, 1, 2]), limit=st.sampled_from([100, 2]),
                  offset=st.sampled_from([0, 1]))
batches = st.lists(st.lists(st.one_of(puts, puts, gets, searches, lists), min_size=1, max_size=6),
                   min_size=1, max_size=8)


def live_namespaces(reference: InMemoryStore, op: ListNamespacesOp) -> list[tuple[str, ...]]:
    """InMemoryStore's answer with one documented difference taken out: it keeps listing a
    namespace after its last item is deleted (or merely read: its dict is a defaultdict), while
    memfold (like LangGraph's PostgreSQL store) lists only namespaces that hold an item."""
    everything = reference.batch([op._replace(max_depth=None, limit=10**6, offset=0)])[0]
    live = [ns for ns in everything if any(tuple(i.namespace) == ns for i in reference.search(ns, limit=10**6))]
    if op.max_depth is not None:
        live = sorted({ns[:op.max_depth] for ns in live})
    return live[op.offset:op.offset + op.limit]


def compare(reference: InMemoryStore, ours: MemfoldStore, batch: list) -> None:
    expected_lists = {i: live_namespaces(reference, op) for i, op in enumerate(batch)
                      if isinstance(op, ListNamespacesOp)}
    expected = reference.batch(batch)
    got = ours.batch(batch)
    for i, op in enumerate(batch):
        if isinstance(op, GetOp):
            assert view(got[i]) == view(expected[i]), op
        elif isinstance(op, SearchOp):
            assert views(got[i]) == views(expected[i]), op
        elif isinstance(op, ListNamespacesOp):
            assert got[i] == expected_lists[i], op
        else:
            assert got[i] is None and expected[i] is None


@settings(max_examples=60, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(batches)
def test_differential_against_inmemorystore(batches_of_ops):
    with tempfile.TemporaryDirectory() as folder:
        mf = open_memfold(Path(folder) / "diff.db", embedder=None)
        try:
            reference, ours = InMemoryStore(), MemfoldStore(mf)
            for batch in batches_of_ops:
                compare(reference, ours, batch)
            # and the whole final state, namespace by namespace
            for ns in NS_POOL:
                assert views(ours.search(ns, limit=100)) == views(reference.search(ns, limit=100))
        finally:
            mf.close()


def test_query_search_agrees_with_an_embedding_inmemorystore(hmf):
    """With a query, InMemoryStore ranks by embedding cosine (given an index) and memfold by its
    hybrid search; on queries with one clear answer both put the same item first."""
    embedder = HashingEmbedder()

    def embed(texts):
        return [list(map(float, v)) for v in embedder.embed_batch(list(texts))]

    reference = InMemoryStore(index={"dims": embedder.dim, "embed": embed, "fields": ["$"]})
    ours = MemfoldStore(hmf)
    docs = {
        "d1": {"text": "Dana prefers email contact for order updates"},
        "d2": {"text": "The earbuds from order ORD-3300 arrived broken"},
        "d3": {"text": "Shipping address is 12 Elm Street, Springfield"},
        "d4": {"text": "Refund of $180.00 approved after the restocking fee"},
    }
    for store_ in (reference, ours):
        for key, value in docs.items():
            store_.put(("acme", "dana"), key, value)
    for query, key in [("email contact", "d1"), ("earbuds arrived broken", "d2"),
                       ("Elm Street address", "d3"), ("refund restocking fee", "d4")]:
        mine = ours.search(("acme",), query=query, limit=2)
        theirs = reference.search(("acme",), query=query, limit=2)
        assert mine[0].key == theirs[0].key == key, query
        assert mine[0].score is not None and mine[0].score >= (mine[1].score if len(mine) > 1 else 0)


# -- memfold's own behaviour -----------------------------------------------------------------------
def test_supersession_keeps_history_and_is_revertible(hmf):
    store = MemfoldStore(hmf)
    ns = ("acme", "dana")
    store.put(ns, "contact", {"channel": "email"})
    store.put(ns, "contact", {"channel": "Email"})  # differs only in case: still a new version
    store.put(ns, "contact", {"channel": "phone"})
    store.put(ns, "contact", {"channel": "phone"})  # the same value again: a refresh, no new row
    versions = store.history(ns, "contact")
    assert [json.loads(r.content) for r in versions] == [{"channel": "email"}, {"channel": "Email"},
                                                         {"channel": "phone"}]
    assert [r.status for r in versions] == ["retired", "retired", "active"]
    assert versions[1].superseded_by == versions[2].id and versions[2].supersedes == versions[1].id
    assert [e.kind for e in hmf.memory.events("acme/dana")].count("refresh") == 1
    # undo the last put: the version it superseded is back, the newer one retired
    assert store.revert(ns, "contact").value == {"channel": "Email"}
    assert [r.status for r in store.history(ns, "contact")] == ["retired", "active", "retired"]
    assert store.revert(ns, "contact", versions[0].id).value == {"channel": "email"}
    # delete retires (bytes stay); revert brings the deleted item back
    store.delete(ns, "contact")
    assert store.get(ns, "contact") is None
    assert [r.content for r in store.history(ns, "contact")] == [r.content for r in versions]
    assert store.revert(ns, "contact").value == {"channel": "email"}
    assert store.get(ns, "contact").created_at <= store.get(ns, "contact").updated_at
    with pytest.raises(InvalidInput, match="not an earlier version"):
        store.revert(ns, "contact", 10**6)


def test_items_are_memfold_records_of_the_namespace(hmf):
    store = MemfoldStore(hmf)
    store.put(("acme", "dana"), "user.city", {"city": "Lyon"})
    record = hmf.memory.list("acme/dana", "semantic", key="user.city")[0]
    assert json.loads(record.content) == {"city": "Lyon"}
    # a fact memfold wrote itself in a slot is an item too
    hmf.remember("acme/dana", "semantic", "Dana prefers phone contact", key="user.contact_preference")
    hmf.remember("acme/dana", "episodic", "Dana called about ORD-3300")  # no slot: not an item
    assert store.get(("acme", "dana"), "user.contact_preference").value == {"content": "Dana prefers phone contact"}
    assert {i.key for i in store.search(("acme", "dana"))} == {"user.city", "user.contact_preference"}
    # what the graph stores reaches the compiled context of the user's conversations
    conv = hmf.conversation("ticket-1", namespace="acme/dana")
    conv.append({"role": "user", "content": "Where do I live?"})
    memories = conv.context(budget=2000).messages[0]["content"]
    assert memories.startswith("Memories:") and '{"city": "Lyon"}' in memories
    # the namespace mapping is one-to-one, also for labels holding '/' or '%'
    for ns in [("acme", "dana"), ("a/b", "c%2Fd"), ("x",)]:
        assert to_langgraph_namespace(to_memfold_namespace(ns)) == ns
    store.put(("a/b", "c%2Fd"), "k", {"v": 1})
    assert ("a/b", "c%2Fd") in store.list_namespaces()


def test_query_search_is_hybrid_and_filtered(hmf):
    store = MemfoldStore(hmf)
    ns = ("acme", "dana")
    store.put(ns, "order", {"text": "order ORD-3300 earbuds", "priority": 2})
    store.put(ns, "other", {"text": "order ORD-1200 charger", "priority": 5})
    store.put(("acme", "sam"), "order", {"text": "order ORD-3300 duplicate", "priority": 9})
    hits = store.search(ns, query="ORD-3300")
    assert [h.key for h in hits][:1] == ["order"] and all(tuple(h.namespace) == ns for h in hits)
    assert [h.key for h in store.search(ns, query="order", filter={"priority": {"$gt": 3}})] == ["other"]
    assert {tuple(h.namespace) for h in store.search(("acme",), query="ORD-3300")} >= {ns, ("acme", "sam")}
    assert store.search(ns, query="ORD-3300", offset=5) == []


def test_bad_input_writes_nothing(hmf):
    store = MemfoldStore(hmf)
    with pytest.raises(InvalidInput, match="JSON-serialisable"):
        store.batch([PutOp(("ns",), "good", {"v": 1}), PutOp(("ns",), "bad", {"v": {1, 2}})])
    with pytest.raises(InvalidInput, match="must be a dict"):
        store.batch([PutOp(("ns",), "good", {"v": 1}), PutOp(("ns",), "bad", ["not", "a", "dict"])])
    with pytest.raises(InvalidInput, match="key"):
        store.put(("ns",), " padded ", {"v": 1})
    with pytest.raises(InvalidInput, match=r"unknown filter operator '\$in'"):
        store.search(("ns",), filter={"v": {"$in": [1]}})
    with pytest.raises(InvalidStoreNamespace, match="at least one label"):
        store.batch([GetOp((), "k")])
    assert hmf.memory.list() == [] and store.list_namespaces() == []


def test_reader_labels_hide_items(hmf):
    writer = MemfoldStore(hmf, labels=["legal"])
    writer.put(("acme", "dana"), "case", {"note": "settlement talks"})
    MemfoldStore(hmf).put(("acme", "dana"), "open", {"note": "public"})
    outsider = MemfoldStore(hmf, reader=Reader.of([]))
    assert outsider.get(("acme", "dana"), "case") is None
    assert [i.key for i in outsider.search(("acme",))] == ["open"]
    lawyer = MemfoldStore(hmf, reader=["legal"])
    assert lawyer.get(("acme", "dana"), "case").value == {"note": "settlement talks"}


# -- a real graph on LangGraph's runner ---------------------------------------------------------------
class RecordingChatModel(GenericFakeChatModel):
    """langchain_core's fake chat model, recording the messages of every call (and accepting
    tools, which the prebuilt agent binds)."""

    seen: list = []

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.seen.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)

    def bind_tools(self, tools, **kwargs):
        return self


def test_state_graph_with_the_store_and_a_fake_chat_model(hmf):
    """Long-term memory across threads: thread 1 remembers a preference, thread 2 (a new
    conversation) reads it from the store and hands it to the model."""
    model = RecordingChatModel(messages=iter([AIMessage("Noted, email it is."), AIMessage("I'll email you.")]),
                               seen=[])

    def remember(state: MessagesState, config, *, store):
        user = config["configurable"]["user_id"]
        text = state["messages"][-1].content
        if text.startswith("remember:"):
            store.put(("acme", user), "contact", {"preference": text.removeprefix("remember:").strip()})
        return {}

    def call_model(state: MessagesState, config, *, store):
        user = config["configurable"]["user_id"]
        memories = store.search(("acme", user), query=state["messages"][-1].content, limit=3)
        memories = memories or store.search(("acme", user), limit=3)
        note = "Known about the user: " + "; ".join(json.dumps(m.value) for m in memories)
        return {"messages": [model.invoke([SystemMessage(note), *state["messages"]])]}

    builder = StateGraph(MessagesState)
    builder.add_node("remember", remember)
    builder.add_node("model", call_model)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "model")
    builder.add_edge("model", END)
    graph = builder.compile(store=MemfoldStore(hmf), checkpointer=InMemorySaver())

    first = graph.invoke({"messages": [HumanMessage("remember: email, never phone")]},
                         {"configurable": {"thread_id": "t1", "user_id": "dana"}})
    assert first["messages"][-1].content == "Noted, email it is."
    second = graph.invoke({"messages": [HumanMessage("How will you contact me?")]},
                          {"configurable": {"thread_id": "t2", "user_id": "dana"}})
    assert second["messages"][-1].content == "I'll email you."
    assert len(second["messages"]) == 2  # a new thread: no messages of the first one
    system = model.seen[-1][0]
    assert isinstance(system, SystemMessage) and "email, never phone" in system.content
    assert hmf.memory.list("acme/dana", "semantic", key="contact")[0].content == '{"preference": "email, never phone"}'


def test_async_graph_run_with_the_store(hmf):
    model = RecordingChatModel(messages=iter([AIMessage("stored")]), seen=[])

    async def node(state: MessagesState, *, store):
        await store.aput(("acme", "sam"), "last", {"said": state["messages"][-1].content})
        found = await store.asearch(("acme", "sam"))
        return {"messages": [await model.ainvoke([SystemMessage(str([f.value for f in found])),
                                                  *state["messages"]])]}

    builder = StateGraph(MessagesState)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    graph = builder.compile(store=MemfoldStore(hmf))
    out = asyncio.run(graph.ainvoke({"messages": [HumanMessage("hello there")]}))
    assert out["messages"][-1].content == "stored"
    assert "hello there" in model.seen[-1][0].content


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # create_react_agent: moving to langchain.agents
def test_prebuilt_agent_sees_the_compiled_window(tmp_path):
    """A ReAct agent with memfold's pre_model_hook: the graph state keeps every message, the model
    gets memfold's window: memories first, old turns folded into cards, the newest verbatim."""
    from langchain_core.tools import tool
    from langgraph.prebuilt import create_react_agent

    mf = open_memfold(tmp_path / "agent.db", window=WindowSettings(
        budget_tokens=160, output_reserve_tokens=0, hot_turns=2, rollup_fanin=3, leaf_chunk_tokens=30,
        card_target_tokens=10, compact_on_append=True))
    MemfoldStore(mf).put(("acme", "dana"), "contact", {"preference": "email"})

    @tool
    def order_status(order_id: str) -> str:
        """Look up an order."""
        return f"{order_id}: shipped on May 3 via DHL, tracking 99-123"

    replies = []
    for n in range(6):
        replies.append(AIMessage("", tool_calls=[{"name": "order_status", "args": {"order_id": f"ORD-{n}"},
                                                   "id": f"call{n}"}]))
        replies.append(AIMessage(f"Order ORD-{n} shipped on May 3 with DHL, tracking 99-123, all good."))
    model = RecordingChatModel(messages=iter(replies), seen=[])
    hook = pre_model_hook(mf, namespace="acme/dana")
    agent = create_react_agent(model, [order_status], pre_model_hook=hook, store=MemfoldStore(mf),
                               checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "ticket-42"}}
    for n in range(6):
        state = agent.invoke({"messages": [HumanMessage(f"Where is my order ORD-{n}? Please check it now.")]},
                             config)
    assert len(state["messages"]) == 24  # the state keeps everything
    conv = mf.conversation("ticket-42")
    archived = conv.history()
    assert len(archived) == 23  # all but the last answer, archived at the next model call
    assert [t.metadata["langchain_id"] for t in archived] == [m.id for m in state["messages"][:23]]
    last_input = model.seen[-1]
    assert len(last_input) < len(state["messages"]) - 1
    system = [m.content for m in last_input if isinstance(m, SystemMessage)]
    assert system[0].startswith("Summaries [cN] are maps")  # memfold's system note
    assert 'Memories:\n- [semantic contact] {"preference": "email"}' in system  # the store's item
    assert any(isinstance(m, SystemMessage) and m.content.startswith("[c") for m in last_input)  # a card
    assert isinstance(last_input[-1], ToolMessage) and last_input[-1].tool_call_id == "call5"
    assert isinstance(last_input[-2], AIMessage) and last_input[-2].tool_calls[0]["id"] == "call5"
    # the hook as post_model_hook archives the final answer too; archiving twice adds nothing
    hook.archive(state, config)
    hook.archive(state, config)
    assert len(conv.history()) == 24
    mf.close()


def test_context_hook_needs_a_conversation(hmf):
    hook = MemfoldContext(hmf)
    with pytest.raises(InvalidInput, match="thread_id"):
        hook({"messages": [HumanMessage("hi", id="m1")]}, {})
    with pytest.raises(InvalidInput, match="has no id"):
        hook({"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "t"}})
    out = hook({"messages": [HumanMessage("hi", id="m1")]}, {"configurable": {"thread_id": "t"}})
    assert [m.content for m in out["llm_input_messages"]] == ["hi"]


def test_memfold_help_does_not_import_langgraph():
    code = ("import sys\nfrom memfold.cli import cli\n"
            "try:\n    cli(['--help'], standalone_mode=False)\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('langgraph', 'langchain_core') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"
