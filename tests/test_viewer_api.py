"""The viewer's JSON routes (issue 19, points 1-6), over a real uvicorn on 127.0.0.1 with httpx:
every route the page uses answers, what it returns agrees with the facade, nothing is written,
and nothing exceeds the viewer's reader (with and without API keys). ``memfold view`` itself
runs as a subprocess and prints its URL.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading

import httpx
import pytest
from click.testing import CliRunner

from memfold import MemFold, StorageError
from memfold.cli import cli
from memfold.demo.acts import run_demo
from memfold.demo.session import WINDOW as SEED_WINDOW
from memfold.integrations.http import parse_keys
from viewer_support import (CONV, SECRET, SECRET_FACT, SECRET_RULE, WINDOW, build_replayed_db, build_seed_db, digest, served,
                            shows)

OWNER_KEY, PLAIN_KEY, OTHER_KEY = "owner-key-0123456789abcdef", "plain-key-0123456789abcdef", "other-key-0123456789abcd"
KEYS = parse_keys({"keys": [
    {"name": "ops", "key": OWNER_KEY, "namespaces": ["*"], "owner": True},
    {"name": "bot", "key": PLAIN_KEY, "namespaces": [CONV], "labels": ["secret"]},
    {"name": "elsewhere", "key": OTHER_KEY, "namespaces": ["globex/*"]}]}, "test keys")


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    return build_replayed_db(tmp_path_factory.mktemp("viewer") / "replayed.db")


@pytest.fixture(scope="module")
def seed(tmp_path_factory):
    return build_seed_db(tmp_path_factory.mktemp("seed") / "seed.db")


def get(client: httpx.Client, path: str, **params) -> dict:
    response = client.get(path, params=params)
    assert response.status_code == 200, response.text
    return response.json()


def every_route(client: httpx.Client) -> dict[str, str]:
    """Every JSON route the page uses, answered; the text of each answer by route."""
    out = {}
    tree = get(client, f"/v1/view/conversations/{CONV}/tree")
    card = next(n["ref"] for n in tree["strip"] if n["kind"] == "card")
    paths = ["/v1/view/whoami", "/v1/view/namespaces", f"/v1/view/conversations/{CONV}/tree",
             f"/v1/view/conversations/{CONV}/children/{card}", f"/v1/view/conversations/{CONV}/search?q=4471",
             f"/v1/view/conversations/{CONV}/search?q=account", f"/v1/view/conversations/{CONV}/context",
             f"/v1/view/conversations/{CONV}/at/172", f"/v1/view/conversations/{CONV}/at/{tree['last_seq']}",
             f"/v1/view/conversations/{CONV}/growth", "/v1/view/memories", f"/v1/view/memories?namespace={CONV}",
             "/v1/view/chains", "/v1/view/runs", "/v1/view/protected", "/v1/conversations",
             f"/v1/conversations/{CONV}/turns", f"/v1/conversations/{CONV}/cards/{card}/expand?to_turns=true",
             f"/v1/conversations/{CONV}/protected", "/v1/memories?all=true", "/v1/protected?state=all", "/v1/events"]
    for path in paths:
        response = client.get(path)
        assert response.status_code == 200, (path, response.text)
        data = response.json()
        data.pop("query", None)  # a search echoes its query
        out[path] = json.dumps(data, ensure_ascii=False)
    response = client.post("/v1/search", json={"query": "PIN", "conversation_id": CONV})
    assert response.status_code == 200, response.text
    out["/v1/search"] = response.text
    return out


def test_every_route_answers_and_nothing_is_written(replayed):
    before = digest(replayed)
    with served(replayed, reader=None) as url, httpx.Client(base_url=url, timeout=60) as client:
        pages = every_route(client)
        assert len(pages) == 23
        for path in ("/", "/memories", f"/conversation/{CONV}", f"/conversation/{CONV}/context",
                     f"/conversation/{CONV}/growth", "/static/viewer.js", "/static/viewer.css"):
            assert client.get(path).status_code == 200, path
        # the API's writing routes are not mounted; a compile that may fold and a read that counts are not either
        assert client.post("/v1/conversations", json={"id": "new"}).status_code == 405
        assert client.post(f"/v1/conversations/{CONV}/turns", json={"messages": [{"role": "user", "content": "x"}]}
                           ).status_code == 405
        assert client.get(f"/v1/conversations/{CONV}/context").status_code == 404
        assert client.post("/v1/memories", json={"namespace": CONV, "type": "semantic", "content": "x"}
                           ).status_code == 405
        assert client.get("/v1/memories/read", params={"namespace": CONV}).status_code == 422  # read as a record id
        assert client.get("/static/../viewer.py").status_code == 404
        assert client.get("/static/viewer.py").status_code == 404
        assert json.loads(pages["/v1/view/whoami"])["read_only"] is True
    assert digest(replayed) == before


def test_read_only_facade_refuses_writes(replayed):
    before = digest(replayed)
    with MemFold(replayed, embedder=None, read_only=True) as mf:
        with pytest.raises(StorageError, match="the memory was opened read-only"):
            mf.remember(CONV, "semantic", "a new fact")
        with pytest.raises(StorageError):
            mf.conversation(CONV, create=False).append({"role": "user", "content": "hello"})
        assert mf.conversation(CONV, create=False).preview_context(WINDOW["budget"], hot_turns=4)["total_tokens"] > 0
    assert digest(replayed) == before


def test_tree_strip_is_the_catalog_and_children_go_down_to_verbatim_turns(replayed):
    with MemFold(replayed, embedder=None, read_only=True, token_counter="words") as mf:
        conv = mf.conversation(CONV, create=False)
        catalog = [i.ref for i in conv.catalog_view()]
        history = {f"t{t.id}": t for t in conv.history()}
    with served(replayed, reader=["secret"]) as url, httpx.Client(base_url=url, timeout=60) as client:
        tree = get(client, f"/v1/view/conversations/{CONV}/tree")
        assert [n["ref"] for n in tree["strip"]] == catalog
        assert tree["fits"] is True and tree["total_tokens"] <= tree["usable_tokens"] == 225
        assert [n["ref"] for n in tree["strip"] if n["hot"]] == catalog[-len([n for n in tree["strip"] if n["hot"]]):]
        node = tree["strip"][0]
        depth = node["depth"]
        while node["kind"] == "card":  # open the oldest card level by level
            children = get(client, f"/v1/view/conversations/{CONV}/children/{node['ref']}")["children"]
            assert all(not c["in_window"] for c in children)  # folded originals (dimmed by the page)
            # never deeper: one level down, or the same level for a card an absorbing roll-up took in
            # (issue 18, point 6: a deep card absorbs a shallower neighbour at its own depth)
            assert all(c["depth"] <= depth for c in children if c["kind"] == "card")
            node = children[0]
            depth = node.get("depth", 0)
        assert node["ref"] == "t1" and node["content"] == history["t1"].content  # the exact words
        assert node["sha256"] == history["t1"].sha256


def test_search_hits_carry_their_path_from_the_window_down(replayed):
    with served(replayed, reader=[]) as url, httpx.Client(base_url=url, timeout=60) as client:
        strip = {n["ref"] for n in get(client, f"/v1/view/conversations/{CONV}/tree")["strip"]}
        hits = get(client, f"/v1/view/conversations/{CONV}/search", q="ACC-55102")["hits"]
        assert hits and hits[0]["ref"] == "t3"
        for hit in hits:
            assert hit["path"][0] in strip and hit["path"][-1] == hit["ref"]
            for parent, child in zip(hit["path"], hit["path"][1:]):  # each step is one expand
                kids = get(client, f"/v1/view/conversations/{CONV}/children/{parent}")["children"]
                assert child in [k["ref"] for k in kids]
        assert client.get(f"/v1/view/conversations/{CONV}/search").status_code == 422  # q is required


def test_compiled_context_now_matches_a_real_compile_and_writes_nothing(replayed, tmp_path):
    copy = tmp_path / "copy.db"
    copy.write_bytes(replayed.read_bytes())
    with served(replayed, reader=[]) as url, httpx.Client(base_url=url, timeout=60) as client:
        now = get(client, f"/v1/view/conversations/{CONV}/context")
        small = get(client, f"/v1/view/conversations/{CONV}/context", budget=60, output_reserve=0)
        bad = client.get(f"/v1/view/conversations/{CONV}/context", params={"budget": 50, "output_reserve": 50})
    with MemFold(copy, embedder=None, token_counter="words") as mf:  # the real thing, on a copy
        real = mf.conversation(CONV, create=False).context(WINDOW["budget"], 75, reader=[], hot_turns=4).to_dict()
    assert now["fits"] and now["messages"] == real["messages"] and now["sections"] == real["sections"]
    assert [s["name"] for s in now["sections_detail"]] == list(real["sections"])
    assert sum(s["tokens"] for s in now["sections_detail"]) == now["total_tokens"] <= now["usable_tokens"]
    assert small["fits"] is False and "would fold first" in small["error"]
    assert bad.status_code == 422 and "below the budget" in bad.json()["error"]


def test_context_at_turn_n_replays_the_seed_demo_meter(seed):
    """The slider's context after turn N, rebuilt from the archive and the fold events, is the
    window the seed demo measured right after each turn's compaction."""
    meter = run_demo(seed.parent / "again.db").meter
    with served(seed, window=SEED_WINDOW) as url, httpx.Client(base_url=url, timeout=60) as client:
        for row in meter:
            at = get(client, f"/v1/view/conversations/ticket-42/at/{row.turn}")
            assert at["seq"] == row.turn
            assert at["total_tokens"] == (row.after if row.after is not None else row.tokens), row
            cards = [i["ref"] for i in at["items"] if i["kind"] == "card"]
            assert set(row.cards) - {c for c in row.cards if c not in cards} <= set(cards) | set(at["folded"])
        assert get(client, "/v1/view/conversations/ticket-42/at/1")["next"] == {"ref": "t2", "seq": 2, "role": "assistant"}
        last = get(client, "/v1/view/conversations/ticket-42/at/10")
        assert last["next"] is None
        # the trace's final window: COLD c6 (the roll-up of c2 and c4), WARM c5 (the calculator), HOT t9 t10
        assert [i["ref"] for i in last["items"]] == ["c6", "c5", "t9", "t10"]
        assert last["hot_refs"] == ["t9", "t10"]
        frames = get(client, "/v1/view/conversations/ticket-42/growth")["frames"]
        assert [f["new_cards"] for f in frames] == [sorted(r.cards, key=lambda c: int(c[1:])) for r in meter]
        assert [f["new_cards"] for f in frames] == [[], [], [], ["c1"], [], ["c2"], [], ["c3"], ["c4"], ["c5", "c6"]]
        assert client.get("/v1/view/conversations/ticket-42/at/0").status_code == 422
        assert client.get("/v1/view/conversations/nope/at/1").status_code == 404


def test_growth_frames_end_at_the_stored_catalog(replayed):
    with MemFold(replayed, embedder=None, read_only=True, token_counter="words") as mf:
        conv = mf.conversation(CONV, create=False)
        catalog = [i.ref for i in conv.catalog_view()]
        turns = len(conv.history())
    with served(replayed, reader=["secret"]) as url, httpx.Client(base_url=url, timeout=60) as client:
        growth = get(client, f"/v1/view/conversations/{CONV}/growth")
        frames = growth["frames"]
        assert len(frames) == turns and [f["seq"] for f in frames] == list(range(1, turns + 1))
        assert [i["ref"] for i in frames[-1]["items"]] == catalog
        for frame in frames:  # every card named in a frame is described, every item fits a contiguous cover
            seqs = [(i["first_seq"], i["last_seq"]) for i in frame["items"]]
            assert seqs[0][0] == 1 and seqs[-1][1] == frame["seq"]
            assert all(a[1] + 1 == b[0] for a, b in zip(seqs, seqs[1:]))
            assert all(ref in growth["cards"] for ref in frame["new_cards"])


def test_memories_table_factors_and_chains_evictions_runs_protected(replayed):
    with MemFold(replayed, embedder=None, read_only=True, token_counter="words") as mf:
        at = mf.clock.now()
        expected = {s.record.id: s.score for s in mf.memory.read(CONV, 50, at=at, touch=False)}
    with served(replayed, reader=[]) as url, httpx.Client(base_url=url, timeout=60) as client:
        mem = get(client, "/v1/view/memories", namespace=CONV, at=at)
        rows = {r["record"]["id"]: r for r in mem["records"]}
        for rid, score in expected.items():
            if rid in rows:
                row = rows[rid]
                assert row["status"] == "active"
                assert row["score"] == pytest.approx(score)
                assert row["score"] == pytest.approx(row["importance"] * row["recency"] * row["access"])
        assert {r["status"] for r in rows.values()} >= {"active", "retired", "evicted"}
        assert SECRET_FACT not in json.dumps(mem)
        early = get(client, "/v1/view/memories", namespace=CONV, at=1772500000)  # after the first night's run
        assert {r["record"]["key"] for r in early["records"]} == {"user.name", "user.account_id", "user.address",
                                                                 "user.contact_preference"}
        assert all(r["status"] == "active" for r in early["records"])  # not superseded yet then
        chains = get(client, "/v1/view/chains", namespace=CONV)
        assert sorted([r["key"] for r in chain] for chain in chains["chains"]) == [
            ["user.address", "user.address"], ["user.contact_preference", "user.contact_preference"]]
        assert all([r["status"] for r in chain] == ["retired", "active"] for chain in chains["chains"])
        assert [e["record"]["content"] for e in chains["evictions"]] == ["scratch: checking the invoice"]
        runs = get(client, "/v1/view/runs", namespace=CONV)["runs"]
        first = runs[0]
        assert first["facts_written"] == 4 and len(first["products"]) == 4
        name = next(p for p in first["products"] if p["record"]["key"] == "user.name")
        assert name["sources"][0]["ref"] == "t1" and "Dana Whitfield" in name["sources"][0]["content"]
        protected = {r["id"]: r for r in get(client, "/v1/view/protected", namespace=CONV)["records"]}
        approval = next(r for r in protected.values() if "ORD-7781" in r["text"])
        assert approval["state"] == "satisfied"
        assert [h["kind"] for h in approval["history"]] == ["protect", "protected_satisfied"]
        tier2 = next(r for r in protected.values() if "Tier 2" in r["text"])
        assert tier2["state"] == "superseded" and protected[tier2["superseded_by"]]["text"].endswith("Tier 3.")
        assert SECRET_RULE not in json.dumps(protected)
        assert client.get("/v1/view/memories", params={"at": "soon"}).status_code == 422


def test_nothing_exceeds_the_viewers_reader(replayed):
    with served(replayed, reader=[]) as url, httpx.Client(base_url=url, timeout=60) as client:
        pages = every_route(client)
        assert get(client, "/v1/view/whoami")["reader"] == []
    for path, text in pages.items():
        for secret in (SECRET, SECRET_FACT, SECRET_RULE):
            assert not shows(text, secret), (path, secret)
    with served(replayed, reader=["secret"]) as url, httpx.Client(base_url=url, timeout=60) as client:
        pages = every_route(client)
    everything = "".join(pages.values())
    assert shows(everything, SECRET) and shows(everything, SECRET_FACT) and shows(everything, SECRET_RULE)


def test_with_api_keys_every_route_needs_one_and_labels_are_cut_to_the_reader(replayed):
    with served(replayed, reader=[], keys=KEYS) as url, httpx.Client(base_url=url, timeout=60) as client:
        assert client.get("/").status_code == 200  # the page itself carries no data: it asks for a key
        assert client.get("/v1/view/whoami").status_code == 401
        assert client.get(f"/v1/view/conversations/{CONV}/tree", headers={"X-API-Key": "wrong-key-0123456789"}
                          ).status_code == 401
        client.headers["X-API-Key"] = PLAIN_KEY  # the key holds "secret"; the viewer's reader does not
        who = get(client, "/v1/view/whoami")
        assert who["reader"] == [] and who["key"] == "bot" and who["auth"] is True
        for text in every_route(client).values():
            assert not shows(text, SECRET) and SECRET_FACT not in text  # the PIN, not digits of a score
        client.headers["X-API-Key"] = OWNER_KEY  # an owner key reads as the viewer's reader too
        assert get(client, "/v1/view/whoami")["reader"] == []
        assert SECRET_FACT not in client.get("/v1/view/memories").text
        client.headers["X-API-Key"] = OTHER_KEY  # another namespace: the conversation does not exist for it
        assert client.get(f"/v1/view/conversations/{CONV}/tree").status_code == 404
        assert client.get("/v1/view/memories", params={"namespace": CONV}).status_code == 403
        assert get(client, "/v1/view/namespaces")["namespaces"] == []
        assert get(client, "/v1/view/memories")["records"] == []
    with served(replayed, reader=None, keys=KEYS) as url, httpx.Client(base_url=url, timeout=60) as client:
        client.headers["X-API-Key"] = PLAIN_KEY  # a viewer run as the owner: the key's own labels decide
        assert get(client, "/v1/view/whoami")["reader"] == ["secret"]
        assert SECRET_FACT in client.get("/v1/view/memories").text


def test_a_page_may_choose_a_narrower_reader_never_a_wider_one(replayed):
    with served(replayed, reader=None) as url, httpx.Client(base_url=url, timeout=60) as client:
        assert get(client, "/v1/view/whoami", reader="none")["reader"] == []
        narrow = {path: client.get(path, params={"reader": "none"}).text for path in (
            f"/v1/view/conversations/{CONV}/search?q=4471", "/v1/view/memories", "/v1/view/protected",
            f"/v1/view/conversations/{CONV}/at/172", f"/v1/view/conversations/{CONV}/context")}
        for path, text in narrow.items():
            assert SECRET_FACT not in text and SECRET_RULE not in text and '"content":"It\'s 4471."' not in text, path
        assert get(client, f"/v1/view/conversations/{CONV}/search", q="4471", reader="secret")["hits"]
        assert get(client, "/v1/view/whoami", reader="secret, other")["reader"] == ["other", "secret"]
    with served(replayed, reader=[]) as url, httpx.Client(base_url=url, timeout=60) as client:
        wider = client.get("/v1/view/memories", params={"reader": "secret"})
        assert wider.status_code == 403 and "cannot show more than its reader" in wider.json()["error"]
        assert get(client, f"/v1/view/conversations/{CONV}/search", q="4471", reader="none")["hits"] == []


class ViewProcess:
    """``memfold view`` in a subprocess; :meth:`url` waits for the line it prints."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        env.pop("MEMFOLD_API_KEYS", None)
        self.proc = subprocess.Popen([sys.executable, "-c", "from memfold.cli import cli; cli()", "view", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:  # type: ignore[union-attr]
            self.lines.put(line)
        self.lines.put("")

    def url(self) -> str:
        seen = []
        while True:
            line = self.lines.get(timeout=120)
            seen.append(line)
            if line.startswith("memfold view: http://"):
                return line.split()[2]
            if line == "":
                raise AssertionError("memfold view exited: " + "".join(seen))

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(60)


def test_memfold_view_prints_its_url_and_serves_read_only(replayed):
    before = digest(replayed)
    view = ViewProcess([str(replayed), "--port", "0", "--reader", "", "--budget", "300", "--hot-turns", "4"])
    try:
        url = view.url()
        assert url.startswith("http://127.0.0.1:")
        with httpx.Client(base_url=url, timeout=60) as client:
            assert "memfold viewer" in client.get("/").text
            who = get(client, "/v1/view/whoami")
            assert who["reader"] == [] and who["window"] == {"budget": 300, "output_reserve": 75, "hot_turns": 4}
            every_route(client)
    finally:
        assert view.stop() in (0, 1, -signal.SIGINT)
    assert digest(replayed) == before


def test_memfold_view_seed_plays_the_demo_into_a_scratch_file():
    view = ViewProcess(["--seed", "--port", "0", "--owner"])
    try:
        with httpx.Client(base_url=view.url(), timeout=60) as client:
            assert [c["id"] for c in get(client, "/v1/conversations")["conversations"]] == ["ticket-42"]
            who = get(client, "/v1/view/whoami")
            assert who["window"] == {"budget": 40, "output_reserve": 0, "hot_turns": 2}
            assert who["token_counter"] == "seed-words"  # the demo's own counter, recorded in its file
            assert get(client, "/v1/view/conversations/ticket-42/context")["total_tokens"] == 32  # the trace's 32/40
            # rebuilt windows count cards as the demo did: the trace's "window now 29/40" after turn 4
            assert get(client, "/v1/view/conversations/ticket-42/at/4")["total_tokens"] == 29
    finally:
        view.stop()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_memfold_view_seed_removes_its_scratch_folder_when_stopped(tmp_path, signum):
    """A real ``memfold view --seed`` process stopped by a signal removes its scratch folder (SIGTERM
    used to end it on the spot, after uvicorn re-raised the signal, leaving the folder behind)."""
    scratch_root = tmp_path / "tmp"
    scratch_root.mkdir()
    view = ViewProcess(["--seed", "--port", "0"], env={"TMPDIR": str(scratch_root)})
    try:
        view.url()
        made = [p.name for p in scratch_root.iterdir()]
        assert len(made) == 1 and made[0].startswith("memfold-view-")  # the scratch folder, while it serves
    finally:
        view.proc.send_signal(signum)
        code = view.proc.wait(60)
    assert list(scratch_root.iterdir()) == [], f"left behind after {signum.name} (exit {code})"
    assert code >= 0  # it unwound to an exit status (uvicorn may end a SIGINT cleanly with 0), not killed by the signal


def test_memfold_view_refuses_bad_arguments(replayed, tmp_path):
    runner = CliRunner()
    result = runner.invoke(cli, ["view", str(replayed), "--owner", "--reader", "secret"])
    assert result.exit_code == 1 and "cannot be combined with --reader" in result.output
    result = runner.invoke(cli, ["view", str(replayed), "--host", "0.0.0.0"])
    assert result.exit_code == 1 and "refusing to serve on 0.0.0.0 without API keys" in result.output
    result = runner.invoke(cli, ["view", str(tmp_path / "missing.db")], env={"MEMFOLD_DB": None})
    assert result.exit_code == 1 and "no database at" in result.output
    result = runner.invoke(cli, ["view"], env={"MEMFOLD_DB": None})
    assert result.exit_code == 1 and "give the database file DB" in result.output
    result = runner.invoke(cli, ["view", str(replayed), "--seed"])
    assert result.exit_code == 1 and "not both" in result.output
    assert runner.invoke(cli, ["view", "--help"]).exit_code == 0


def test_read_only_compile_shows_a_due_deadline_as_expired_without_writing(tmp_path):
    from memfold import LogicalClock

    path = tmp_path / "due.db"
    with MemFold(path, clock=LogicalClock(), token_counter="words", embedder=None) as mf:
        conv = mf.conversation("t-1", namespace="acme")
        conv.append({"role": "user", "content": "Where is my parcel?"})
        mf.protect("Call the courier back before the deadline.", kind="deadline", conversation_id="t-1", due_at=5)
        mf.protect("Never share the tracking link publicly.", conversation_id="t-1")
    before = digest(path)
    with MemFold(path, clock=LogicalClock(start=3), token_counter="words", embedder=None, read_only=True) as mf:
        text = str(mf.conversation("t-1", create=False).preview_context(200, 0)["messages"])
        assert "courier" in text and "tracking link" in text  # not due yet at tick 3
    with MemFold(path, clock=LogicalClock(start=9), token_counter="words", embedder=None, read_only=True) as mf:
        text = str(mf.conversation("t-1", create=False).preview_context(200, 0)["messages"])
        assert "courier" not in text and "tracking link" in text  # due at 5: shown as expired, not written
        assert [r.state for r in mf.protected.list(state=None)] == ["active", "active"]
    assert digest(path) == before
    with MemFold(path, clock=LogicalClock(start=9), token_counter="words", embedder=None) as mf:
        assert [r.state for r in mf.protected.list(state=None)] == ["expired", "active"]  # a writer expires it
