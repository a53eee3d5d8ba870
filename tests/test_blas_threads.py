"""numpy's OpenBLAS is set to one thread before memfold's first background embedding, unless the
caller chose its threads (issue 18, point 2, round 14; :mod:`memfold.memory.embeddings_blas`)."""

from __future__ import annotations

import pytest

import memfold
from memfold.memory import embeddings_blas
from memfold.memory.embeddings import HashingEmbedder
from memfold.memory.errors import InvalidInput


@pytest.mark.parametrize("environ, threads", [
    ({}, 1),
    ({"OPENBLAS_NUM_THREADS": "4"}, None),
    ({"OMP_NUM_THREADS": "2"}, None),
    ({"GOTO_NUM_THREADS": "3"}, None),
    ({"OPENBLAS_NUM_THREADS": " "}, 1),
    ({"MEMFOLD_BLAS_THREADS": "keep"}, None),
    ({"MEMFOLD_BLAS_THREADS": "KEEP"}, None),
    ({"MEMFOLD_BLAS_THREADS": "3", "OPENBLAS_NUM_THREADS": "4"}, 3),
])
def test_the_plan_follows_the_environment(environ, threads):
    assert embeddings_blas.planned_threads(environ) == threads


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5", "kep"])
def test_a_bad_setting_is_refused_by_name(value):
    with pytest.raises(InvalidInput, match="MEMFOLD_BLAS_THREADS"):
        embeddings_blas.planned_threads({"MEMFOLD_BLAS_THREADS": value})


@pytest.mark.skipif(embeddings_blas.blas_threads() is None, reason="numpy's BLAS here is not OpenBLAS")
def test_the_first_background_search_sets_one_thread_and_a_bad_setting_fails_it_before_anything(
        tmp_path, monkeypatch):
    set_threads = embeddings_blas._openblas()[0][0]
    before = embeddings_blas.blas_threads()
    for name in (*embeddings_blas.CHOSEN, embeddings_blas.BLAS_THREADS_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(embeddings_blas, "_applied", False)  # as in a fresh process
    try:
        set_threads(2)
        with memfold.MemFold(tmp_path / "m.db", clock=memfold.LogicalClock(), token_counter="words",
                             embedder=HashingEmbedder(64)) as mf:
            conv = mf.conversation("c", namespace="n")
            tid = conv.append({"role": "user", "content": "The ferry to Porto leaves at noon."})
            monkeypatch.setenv(embeddings_blas.BLAS_THREADS_ENV, "none")
            with pytest.raises(InvalidInput, match="MEMFOLD_BLAS_THREADS"):
                mf.search("ferry Porto", conversation_id="c")
            assert embeddings_blas.blas_threads() == 2 and mf.embeddings.count() == 0
            monkeypatch.delenv(embeddings_blas.BLAS_THREADS_ENV)
            assert mf.search("ferry Porto", conversation_id="c")[0].id == tid
            assert embeddings_blas.blas_threads() == 1
            set_threads(2)  # the caller's own choice afterwards stays
            mf.search("ferry", conversation_id="c")
            assert embeddings_blas.blas_threads() == 2
    finally:
        set_threads(before)


def test_a_bad_setting_is_refused_before_the_file_is_created(tmp_path, monkeypatch):
    monkeypatch.setenv(embeddings_blas.BLAS_THREADS_ENV, "all")
    with pytest.raises(InvalidInput, match="MEMFOLD_BLAS_THREADS='all'"):
        memfold.MemFold(tmp_path / "m.db", embedder=HashingEmbedder(64))
    assert not (tmp_path / "m.db").exists()


@pytest.mark.skipif(embeddings_blas.blas_threads() is None, reason="numpy's BLAS here is not OpenBLAS")
def test_memfold_finds_blas_through_threadpoolctl_and_leaves_the_caller_in_control(monkeypatch):
    """The count memfold reads is threadpoolctl's, and after memfold set it once a caller's own
    threadpoolctl limit from another thread still takes effect (threadpoolctl 3.8 lets only the
    thread that set a pthreads OpenBLAS last change it, unless that thread gives control back)."""
    import threading

    from threadpoolctl import ThreadpoolController, threadpool_limits

    def numpy_blas() -> int:
        return ThreadpoolController().select(internal_api="openblas").lib_controllers[0].get_num_threads()

    before = embeddings_blas.blas_threads()
    assert before == numpy_blas()
    for name in (*embeddings_blas.CHOSEN, embeddings_blas.BLAS_THREADS_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(embeddings_blas, "_applied", False)
    seen = []
    try:
        assert embeddings_blas.limit_blas_threads() == 1 and numpy_blas() == 1

        def caller() -> None:
            with threadpool_limits(limits=3, user_api="blas"):
                seen.append(numpy_blas())

        worker = threading.Thread(target=caller)
        worker.start()
        worker.join(timeout=60)
        assert seen == [3]
    finally:
        embeddings_blas._openblas()[0][0](before)
