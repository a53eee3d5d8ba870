"""``vector_index="ann"``: an HNSW graph behind the SQLite vectors (issue 18, point 2).

Speed is measured by ``bench/bench_ann.py``; these tests check behaviour on real SQLite files: the
graph returns the exact scan's top hits (recall measured on LoCoMo turns), erased and
label-hidden items never come back, a new turn is found right after it is written, the same file
gives the same answers in a fresh process, and a missing hnswlib or a bad setting is refused
before anything is written. The graph is used only for scopes of ``ann.MIN_ROWS`` vectors and
more (10,000, and 5% of the file: the measured break-even); the tests lower that threshold so a small file reaches it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from memfold import InvalidInput, LogicalClock, MemFold, MissingExtra
from memfold.memory.storage import ann
from memfold.memory.storage.rows import SearchScope

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo_dev.json"
needs_locomo = pytest.mark.skipif(not LOCOMO.exists(), reason="needs ../shared/data/locomo")
pytest.importorskip("hnswlib")


@pytest.fixture
def small_scopes(monkeypatch):
    """Let the graph answer scopes of any size (the rule's threshold, not a code path), and score
    no newest rows beside it (``ann.RECENT``: in a file this small they would be most of it), so
    what the tests see is the graph's own answer."""
    monkeypatch.setattr(ann, "MIN_ROWS", 1)
    monkeypatch.setattr(ann, "RECENT", 0)


def _locomo(limit_turns: int = 1200) -> tuple[list[str], list[str]]:
    data = json.loads(LOCOMO.read_text())
    turns, questions = [], []
    for sample in data:
        for key, value in sample["conversation"].items():
            if key.startswith("session_") and isinstance(value, list):
                turns.extend(f"{t['speaker']}: {t['text']}" for t in value)
        questions.extend(str(q["question"]) for q in sample["qa"] if q.get("question"))
    return turns[:limit_turns], questions


def _open(path, index: str) -> MemFold:
    return MemFold(path, clock=LogicalClock(), token_counter="words", embedder="hashing", vector_index=index)


def _dense(mf: MemFold, query: str, conversation_id: str | None = None, **kw) -> list[tuple[int, float]]:
    hits = mf.search(query, conversation_id=conversation_id, mode="dense", limit=10, kinds=["turn"], **kw)
    return [(h.id, h.score) for h in hits]


@needs_locomo
def test_the_graph_returns_the_exact_scans_top_hits_on_locomo(tmp_path, small_scopes):
    turns, questions = _locomo()
    path = tmp_path / "locomo.db"
    writer = _open(path, "exact")
    for i in range(0, len(turns), 400):  # three conversations of 400 turns
        writer.conversation(f"c{i // 400}").append_many([{"role": "user", "content": t} for t in turns[i:i + 400]])
    writer.index_embeddings()
    writer.close()
    exact, graph = _open(path, "exact"), _open(path, "ann")
    found = wanted = same_scores = 0
    for q in questions[:60]:
        for scope in (None, "c1"):  # the whole file, and one conversation's lineage (a third of it)
            e, a = _dense(exact, q, scope), _dense(graph, q, scope)
            wanted += len(e)
            found += len({i for i, _ in e} & {i for i, _ in a})
            scores = dict(e)
            same_scores += sum(abs(scores[i] - s) < 1e-9 for i, s in a if i in scores)  # rescored exactly
    assert graph.storage.vectors._ann["turn"].built  # the graph answered (not the exact fallback)
    recall = found / wanted
    assert recall >= 0.95, recall
    assert same_scores == found
    exact.close()
    graph.close()


def test_an_erased_turn_never_comes_back_and_leaves_the_graph(tmp_path, small_scopes):
    mf = _open(tmp_path / "e.db", "ann")
    conv = mf.conversation("t")
    ids = conv.append_many([{"role": "user", "content": f"parcel {i} shipped to city {i}"} for i in range(300)])
    secret = conv.append({"role": "user", "content": "my card number is private"})
    conv.append_many([{"role": "user", "content": f"weather note {i}"} for i in range(50)])
    assert _dense(mf, "card number private", "t")[0][0] == secret
    graph = mf.storage.vectors._ann["turn"]
    assert secret in graph._prints
    mf.erase(turn_ids=[secret, ids[-1]])
    for conversation_id in ("t", None):
        assert secret not in [i for i, _ in _dense(mf, "card number private", conversation_id)]
    assert secret not in graph._prints  # forgotten by the graph too (its vector overwritten with zeros)
    mf.erase(turn_ids=[max(graph._prints)])  # the newest vector: the matrix reloads, the graph follows it
    assert secret not in [i for i, _ in _dense(mf, "card number private", "t")]
    mf.close()


def test_a_turn_is_found_right_after_it_is_written(tmp_path, small_scopes):
    mf = _open(tmp_path / "n.db", "ann")
    conv = mf.conversation("t")
    conv.append_many([{"role": "user", "content": f"note {i} about topic{i}"} for i in range(400)])
    assert _dense(mf, "topic7", "t")  # the graph is built
    graph = mf.storage.vectors._ann["turn"]
    built, hnsw = graph.live, graph._graph
    new = conv.append({"role": "user", "content": "the Lisbon parcel is lost"})
    assert _dense(mf, "the Lisbon parcel is lost", "t")[0][0] == new
    # the search that found it may have scored its vector before storing it (or taken it from
    # the embed-ahead thread, which finishes when it does): the graph follows the stored vectors
    # at its next search, so one more search shows the new item added to the same graph
    assert _dense(mf, "the Lisbon parcel is lost", "t")[0][0] == new
    assert mf.storage.vectors._ann["turn"] is graph and graph._graph is hnsw  # added, not rebuilt
    assert graph.live == built + 1 and new in graph._prints
    mf.close()


def test_labels_and_namespaces_still_filter_what_the_graph_proposes(tmp_path, small_scopes):
    mf = _open(tmp_path / "l.db", "ann")
    conv = mf.conversation("t", namespace="acme")
    conv.append_many([{"role": "user", "content": f"invoice {i} was paid"} for i in range(300)])
    hidden = conv.append({"role": "user", "content": "the billing invoice for Dana", "labels": ["billing"]})
    assert _dense(mf, "billing invoice Dana")[0][0] == hidden  # no reader given: no label check
    assert hidden not in [i for i, _ in _dense(mf, "billing invoice Dana", reader_labels=[])]
    assert hidden not in [i for i, _ in _dense(mf, "billing invoice Dana", namespace="acme", reader_labels=[])]
    assert _dense(mf, "billing invoice Dana", namespace="other") == []
    assert _dense(mf, "billing invoice Dana", reader_labels=["billing"])[0][0] == hidden
    # the storage's own answer, below the search's visibility check: the graph's proposals are filtered
    query = mf.embedder.embed("billing invoice Dana")
    assert hidden not in [i for i, _ in mf.storage.vectors.nearest("turn", query, SearchScope(reader_labels=()),
                                                                     limit=10)]
    assert hidden in [i for i, _ in mf.storage.vectors.nearest("turn", query, SearchScope(), limit=10)]
    mf.relabel(f"t{hidden}", ["billing", "legal"])
    assert hidden not in [i for i, _ in _dense(mf, "billing invoice Dana", reader_labels=["billing"])]
    mf.close()


def test_the_same_file_gives_the_same_answers_in_a_fresh_index(tmp_path, small_scopes):
    path = tmp_path / "d.db"
    mf = _open(path, "exact")
    mf.conversation("t").append_many([{"role": "user", "content": f"order {i} for item {i % 37}"} for i in range(500)])
    mf.index_embeddings()
    mf.close()
    answers = []
    for _ in range(2):
        reader = _open(path, "ann")
        answers.append([_dense(reader, f"item {k}", "t") for k in range(10)])
        reader.close()
    assert answers[0] == answers[1]


def test_ann_without_hnswlib_is_refused_naming_the_extra_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "hnswlib", None)  # what an environment without the package gives
    path = tmp_path / "none.db"
    with pytest.raises(MissingExtra, match=r"memfold\[ann\]") as caught:
        _open(path, "ann")
    assert isinstance(caught.value, ImportError)
    assert not path.exists()
    monkeypatch.setenv("MEMFOLD_VECTOR_INDEX", "ann")
    with pytest.raises(MissingExtra, match="hnswlib"):
        MemFold(path, embedder="hashing")
    assert not path.exists()


def test_postgresql_ignores_the_setting_and_needs_no_hnswlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "hnswlib", None)
    assert ann.check_vector_index("ann", sqlite=False) == "ann"  # pgvector's HNSW index serves it there
    with pytest.raises(MissingExtra):
        ann.check_vector_index("ann")


def test_postgresql_opens_with_the_setting_without_hnswlib(pg_url, monkeypatch):
    monkeypatch.setitem(sys.modules, "hnswlib", None)
    mf = MemFold(pg_url, clock=LogicalClock(), token_counter="words", embedder="hashing", vector_index="ann")
    mf.conversation("t").append({"role": "user", "content": "the Lisbon parcel is lost"})
    assert [h.text for h in mf.search("Lisbon parcel", conversation_id="t", mode="dense", limit=1)] == [
        "the Lisbon parcel is lost"]
    mf.close()


def test_an_unknown_vector_index_is_refused_and_writes_nothing(tmp_path):
    path = tmp_path / "bad.db"
    with pytest.raises(InvalidInput, match="'exact'.*'ann'"):
        _open(path, "hnsw")
    assert not path.exists()


def test_the_environment_chooses_the_index(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMFOLD_VECTOR_INDEX", "ann")
    mf = MemFold(tmp_path / "env.db", embedder="hashing")
    assert mf.storage.vectors.vector_index == "ann"
    mf.close()
    monkeypatch.delenv("MEMFOLD_VECTOR_INDEX")
    mf = MemFold(tmp_path / "env.db", embedder="hashing")
    assert mf.storage.vectors.vector_index == "exact"
    mf.close()


def test_small_scopes_are_scanned_exactly(tmp_path):
    """Below the threshold the graph is never built: the rule keeps small scopes exact."""
    mf = _open(tmp_path / "s.db", "ann")
    mf.conversation("t").append_many([{"role": "user", "content": f"note {i}"} for i in range(50)])
    assert _dense(mf, "note 7", "t")
    graph = mf.storage.vectors._ann.get("turn")
    assert graph is None or not graph.built
    mf.close()
