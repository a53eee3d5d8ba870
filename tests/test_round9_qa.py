"""Round 9 QA: try to break what round 9 changed, as a user would.

* the compiled-context cache (``window/context_cache.py``) keeps a context pickled and works the
  settings part of its key out once per settings value: every context it serves is compared with
  a fresh MemFold's compile (a new open of the same file, which has no cache), after changes made
  by another process or thread, with hostile callers that scribble on what they were given and
  with readers of different labels in threads at once.
* a turn row's ``'{}'`` metadata and ``'[]'`` labels are no longer JSON-decoded
  (``memory/storage/sqlite/archive.py``): metadata of every shape round-trips through append,
  history and a new open on both backends, and each turn gets its own dict.

Real files, real processes and threads (synchronised by process exits, barriers and joins,
never by sleeps); no mocks of memfold's code. The token counter below is a user's own
:class:`~memfold.memory.tokens.TokenCounter` (a public extension point) that, when armed, lets
another process change the file while a compile is under way, which places that change
deterministically between the compile's read and its cache put."""

from __future__ import annotations

import json
import select
import subprocess
import sys
import textwrap
import threading

import pytest

import memfold
from memfold import LogicalClock
from memfold.memory.tokens import WordCounter


def _open(target, **kw):
    return memfold.MemFold(target, clock=LogicalClock(), token_counter=kw.pop("token_counter", "words"),
                           embedder=None, secrets="off", preload_embedder=False, **kw)


def _contents(ctx) -> list[str]:
    return [m["content"] for m in ctx.messages]


def _fresh_context(target, conversation_id, **kw):
    fresh = _open(target)
    try:
        return fresh.conversation(conversation_id, create=False).context(**kw)
    finally:
        fresh.close()


# --- a change committed by another process while a compile is under way ----------------------------

_CHANGER = textwrap.dedent("""
    import sys
    import memfold
    mf = memfold.MemFold(sys.argv[1], clock=memfold.LogicalClock(), token_counter="words", embedder=None,
                         secrets="off", preload_embedder=False)
    action = sys.argv[2]
    if action == "append":
        mf.conversation("c1", create=False).append({"role": "user", "content": "appended by another process"})
    elif action == "erase":
        mf.erase(turn_ids=[2])
    elif action == "relabel":
        mf.relabel("t2", ["hr"])
    mf.close()
""")


class _ChangeDuringCompile(WordCounter):
    """Counts words, as ``"words"`` does. Armed, the first count of the memories header (which a
    compile makes after its snapshot read, before it caches the context) runs ``action`` in
    another process and waits for that process to exit."""

    id = "words"

    def __init__(self, path, action):
        self.path, self.action, self.armed = str(path), action, False

    def count(self, text):
        if self.armed and text == "Memories:":
            self.armed = False
            subprocess.run([sys.executable, "-c", _CHANGER, self.path, self.action], check=True, timeout=120)
        return super().count(text)


def _race(tmp_path, action, reader=None):
    """Compile once with another process's ``action`` landing mid-compile; returns the context a
    second compile of the same facade gives, and a fresh open's."""
    path = tmp_path / "race.db"
    counter = _ChangeDuringCompile(path, action)
    mf = _open(path, token_counter=counter)
    conv = mf.conversation("c1", namespace="ns")
    conv.append({"role": "user", "content": "hello there"})
    conv.append({"role": "user", "content": "my secret is swordfish"})
    mf.memory.write("ns", "semantic", "Dana likes tea", key="user.drink")  # a memories section: the hook runs
    counter.armed = True
    conv.context(budget=4000, reader=reader)
    assert not counter.armed, "the other process did not run"
    again = conv.context(budget=4000, reader=reader)
    fresh = _fresh_context(path, "c1", budget=4000, reader=reader)
    mf.close()
    return again, fresh


def test_a_turn_erased_by_another_process_mid_compile_is_never_served(tmp_path):
    again, fresh = _race(tmp_path, "erase")
    assert "my secret is swordfish" not in _contents(fresh)
    assert "my secret is swordfish" not in _contents(again)


def test_a_turn_relabelled_by_another_process_mid_compile_is_hidden_from_a_reader_without_the_label(tmp_path):
    again, fresh = _race(tmp_path, "relabel", reader=["staff"])
    assert "my secret is swordfish" not in _contents(fresh)
    assert "my secret is swordfish" not in _contents(again)


def test_a_turn_appended_by_another_process_mid_compile_shows_at_the_next_compile(tmp_path):
    again, fresh = _race(tmp_path, "append")
    assert "appended by another process" in _contents(fresh)
    assert _contents(again) == _contents(fresh)


class _EraseInAThread(WordCounter):
    """Armed, the first count of the memories header starts a thread that erases turn 2 through
    the same facade, and waits until that thread is about to call ``erase``. The compile holds
    this process's other writers off (``Storage.writers_held``), so the erasure lands when the
    compile has ended (its listener then clears the cache); it was once able to land first and
    have the compile put the old context back under the new key."""

    id = "words"
    mf = None
    armed = False
    eraser = None

    def count(self, text):
        if self.armed and text == "Memories:":
            self.armed = False
            started = threading.Event()

            def erase():
                started.set()
                self.mf.erase(turn_ids=[2])

            self.eraser = threading.Thread(target=erase)
            self.eraser.start()
            assert started.wait(120)
        return super().count(text)


def test_a_turn_erased_by_another_thread_mid_compile_is_never_served(tmp_path):
    path = tmp_path / "thread.db"
    counter = _EraseInAThread()
    mf = _open(path, token_counter=counter)
    counter.mf = mf
    conv = mf.conversation("c1", namespace="ns")
    conv.append({"role": "user", "content": "hello there"})
    conv.append({"role": "user", "content": "my secret is swordfish"})
    mf.memory.write("ns", "semantic", "Dana likes tea", key="user.drink")
    counter.armed = True
    conv.context(budget=4000)
    assert not counter.armed
    counter.eraser.join(120)
    assert not counter.eraser.is_alive() and mf.archive.get(2).erased
    again = conv.context(budget=4000)
    mf.close()
    assert "my secret is swordfish" not in _contents(again)


# --- changes between compiles (the usual path): every context equals a fresh open's ----------------

_BETWEEN = textwrap.dedent("""
    import json, sys
    import memfold
    for line in sys.stdin:  # one change a line, each by a MemFold opened for it and closed after
      action, arg = json.loads(line)
      mf = memfold.MemFold(sys.argv[1], clock=memfold.LogicalClock(), token_counter="words", embedder=None,
                           secrets="off", preload_embedder=False)
      conv = mf.conversation("c1", create=False)
      if action == "append":
          conv.append({"role": "user", "content": arg})
      elif action == "erase":
          mf.erase(turn_ids=[int(arg)])
      elif action == "relabel":
          mf.relabel("t" + arg, ["hr"])
      elif action == "unlabel":
          mf.revoke_label("t" + arg, "hr")
      elif action == "protect":
          mf.protect(arg, conversation_id="c1")
      elif action == "satisfy":
          mf.protected.satisfy(int(arg))
      elif action == "revoke":
          mf.protected.revoke(int(arg))
      elif action == "fork":
          conv.fork("c1-fork")
      elif action == "record":
          mf.memory.write("ns", "semantic", arg, key="user.note")
      elif action == "erase_record":
          mf.erase(record_ids=[int(arg)])
      mf.close()
      print("done", flush=True)
""")


class _Between:
    """Another process making the changes: one Python process for the whole test (round 14, where
    a process was started per change: each start cost an import of memfold), each change made by a
    MemFold it opens for that change and closes before it answers ``done``."""

    def __init__(self, path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", _BETWEEN, str(path)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def __call__(self, action, arg="") -> None:
        self.proc.stdin.write(json.dumps([action, str(arg)]) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], 120)
        said = self.proc.stdout.readline() if ready else ""
        if said.strip() != "done":
            self.proc.kill()
            raise AssertionError(f"the other process, at {action} {arg}: {said!r} {self.proc.communicate()[1]}")

    def close(self) -> None:
        _, err = self.proc.communicate(timeout=120)
        assert self.proc.returncode == 0, err


READERS = [None, ["staff"], ["staff", "hr"]]


def test_every_cached_context_equals_a_fresh_compile_after_each_change_by_another_process(tmp_path):
    """After each change by another process, every reader's compile (twice: the second a hit)
    equals a fresh open's; the three readers' entries sit side by side in one cache."""
    path = tmp_path / "between.db"
    mf = _open(path)
    conv = mf.conversation("c1", namespace="ns")
    _between = _Between(path)
    for i in range(6):
        conv.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} about the order {i}"})

    def check(step):
        for reader in READERS:
            first = conv.context(budget=4000, reader=reader)
            second = conv.context(budget=4000, reader=reader)  # a hit when nothing changed
            fresh = _fresh_context(path, "c1", budget=4000, reader=reader)
            assert first.to_dict() == second.to_dict() == fresh.to_dict(), (step, reader)

    def shown(reader):
        return json.dumps(conv.context(budget=4000, reader=reader).to_dict())

    check("start")
    steps = [("append", "the zebra code is 4471"), ("relabel", 7), ("unlabel", 7), ("relabel", 3),
             ("erase", 7), ("protect", "Never call me before noon"), ("record", "Dana likes green tea"),
             ("fork", ""), ("append", "after the fork")]
    for action, arg in steps:
        _between(action, arg)
        check(f"after {action} {arg}")
    for reader in READERS:
        text = shown(reader)
        assert "zebra" not in text  # erased
        assert ("turn 2 about" in text) == (reader is None or "hr" in reader), reader  # t3 relabelled hr
        assert "Never call me before noon" in text
    _between("protect", "Always answer in French")
    check("after a second protect")
    ids = sorted(r.id for r in mf.protected.for_conversation("c1", state="active"))
    assert len(ids) == 2
    _between("satisfy", ids[0])
    check(f"after satisfy P{ids[0]}")
    _between("revoke", ids[1])
    check(f"after revoke P{ids[1]}")
    for reader in READERS:
        text = shown(reader)
        assert "before noon" not in text and "in French" not in text
    _between("erase_record", 1)
    check("after erase_record")
    assert not [r for r in READERS if "green tea" in shown(r)]
    _between.close()
    mf.close()


def test_window_settings_changed_between_compiles_are_a_miss(tmp_path):
    path = tmp_path / "s.db"
    mf = _open(path)
    conv = mf.conversation("c1", namespace="ns")
    for i in range(4):
        conv.append({"role": "user", "content": f"turn {i}"})
    mf.memory.write("ns", "semantic", "Dana likes tea", key="user.drink")
    seen = []
    for hot, k in [(32, 5), (2, 5), (1, 5), (1, 0), (2, 5), (32, 5)]:
        mf.window = memfold.WindowSettings(budget_tokens=4000, output_reserve_tokens=1000, hot_turns=hot, memories_k=k)
        got = conv.context()
        assert got.to_dict() == conv.context().to_dict()
        fresh = _open(path)
        fresh.window = memfold.WindowSettings(budget_tokens=4000, output_reserve_tokens=1000, hot_turns=hot,
                                              memories_k=k)
        assert got.to_dict() == fresh.conversation("c1", create=False).context().to_dict(), (hot, k)
        fresh.close()
        seen.append((len(got.hot_refs), any("Dana likes tea" in c for c in _contents(got))))
        # the same settings given per call (a separately built, equal value) give the same context
        assert conv.context(hot_turns=hot, memories_k=k).to_dict() == got.to_dict()
    assert seen == [(4, True), (2, True), (1, True), (1, False), (2, True), (4, True)]
    mf.close()


# --- hostile callers -----------------------------------------------------------------------------

def _scribble(obj):
    """Change every string, append to every list and add a key to every dict in ``obj``."""
    if isinstance(obj, dict):
        for key in list(obj):
            if isinstance(obj[key], str):
                obj[key] = "SCRIBBLED"
            else:
                _scribble(obj[key])
        obj["scribbled"] = "SCRIBBLED"
    elif isinstance(obj, list):
        for i, item in enumerate(obj):
            if isinstance(item, str):
                obj[i] = "SCRIBBLED"
            else:
                _scribble(item)
        obj.append("SCRIBBLED")


def test_a_caller_scribbling_on_misses_and_hits_changes_no_later_compile(tmp_path):
    path = tmp_path / "scribble.db"
    mf = _open(path)
    conv = mf.conversation("c1", namespace="ns")
    conv.append({"role": "system", "content": "You are a helpful bot."})
    conv.append({"role": "user", "content": "Never email me, call instead. My name is Dana."})
    conv.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": "call1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\": 1}"}}]})
    conv.append({"role": "tool", "tool_call_id": "call1", "content": "result 1"})
    conv.append({"role": "user", "content": [{"type": "text", "text": "part one"},
                                             {"type": "image_url", "image_url": {"url": "http://x/y.png"}}]})
    mf.memory.write("ns", "semantic", "Dana likes tea", key="user.drink", importance=0.9)
    for round_ in range(3):
        miss = conv.context(budget=4000)
        clean = json.dumps(miss.to_dict(), sort_keys=True)
        _scribble(miss.messages), _scribble(miss.refs), _scribble(miss.hot_refs), miss.sections.clear()
        hit = conv.context(budget=4000)
        assert json.dumps(hit.to_dict(), sort_keys=True) == clean
        _scribble(hit.messages), _scribble(hit.refs)
        assert json.dumps(conv.context(budget=4000).to_dict(), sort_keys=True) == clean
        conv.append({"role": "user", "content": f"more {round_}"})
        after = conv.context(budget=4000)
        fresh = _fresh_context(path, "c1", budget=4000)
        assert after.to_dict() == fresh.to_dict()
        assert "SCRIBBLED" not in json.dumps(after.to_dict()) + json.dumps([t.message() for t in conv.history()])
    mf.close()


def test_a_system_note_pickle_cannot_write_is_still_cached_and_served_equal(tmp_path):
    class Note(str):  # a local class: pickle refuses it, so the cache deep-copies
        pass

    mf = _open(tmp_path / "note.db")
    conv = mf.conversation("c1", namespace="ns")
    conv.append({"role": "user", "content": " ".join(f"word{i}" for i in range(200))})  # a glimpse: the note shows
    conv.append({"role": "user", "content": "hello"})
    first = conv.context(budget=400, system_note=Note("a note of my own"))
    second = conv.context(budget=400, system_note=Note("a note of my own"))
    assert first.to_dict() == second.to_dict() and "a note of my own" in _contents(second)
    assert mf.parts.context_cache.hits == 1
    second.messages[0]["content"] = "changed"
    assert "a note of my own" in _contents(conv.context(budget=400, system_note=Note("a note of my own")))
    assert mf.parts.context_cache.hits == 2
    mf.close()


def test_readers_in_threads_at_once_each_see_exactly_a_fresh_compile_for_them(tmp_path):
    path = tmp_path / "readers.db"
    mf = _open(path)
    conv = mf.conversation("c1", namespace="ns")
    for i in range(12):
        labels = [["hr"], ["legal"], ["hr", "legal"], []][i % 4]
        conv.append({"role": "user", "content": f"turn {i} marker{i}", "labels": labels})
    readers = [None, [], ["hr"], ["legal"], ["hr", "legal"], ["legal", "hr"], ["hr", "other"]]
    expected = {json.dumps(r): _fresh_context(path, "c1", budget=4000, reader=r).to_dict() for r in readers}
    for r in readers:  # the expected contexts hide what they must
        shown = json.dumps(expected[json.dumps(r)])
        for i in range(12):
            need = [{"hr"}, {"legal"}, {"hr", "legal"}, set()][i % 4]
            assert (f"marker{i}\"" in shown) == (r is None or need <= set(r)), (r, i)
    barrier = threading.Barrier(len(readers) * 2)
    wrong: list = []

    def worker(r):
        barrier.wait()
        for _ in range(30):
            got = conv.context(budget=4000, reader=r).to_dict()
            if got != expected[json.dumps(r)]:
                wrong.append((r, got))
                return

    threads = [threading.Thread(target=worker, args=(r,)) for r in readers * 2]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not wrong, wrong[:1]
    mf.close()


# --- metadata and labels round-trip (the '{}' / '[]' shortcut) -------------------------------------

METADATA = [None, {}, {"a": 1}, {"a": {}}, {"": []}, {"x": "{}"}, {"k": None}, {"nested": {"l": [1, 2.5, "é"]}}]


def test_metadata_and_labels_round_trip_on_both_backends(backend_target):
    mf = _open(backend_target)
    conv = mf.conversation("c", namespace="ns")
    for i, md in enumerate(METADATA):
        turn = {"role": "user", "content": f"turn {i}"}
        if md is not None:
            turn["metadata"] = md
        conv.append(turn)
    conv.append({"role": "user", "content": "no labels", "labels": []})
    conv.append({"role": "user", "content": "labels", "labels": ["b", "a"]})
    want_md = [md or {} for md in METADATA] + [{}, {}]
    hist = conv.history()
    assert [t.metadata for t in hist] == want_md
    assert [t.labels for t in hist][-2] == () and set(hist[-1].labels) == {"a", "b"}
    assert len({id(t.metadata) for t in hist}) == len(hist)  # each turn its own dict
    hist[0].metadata["changed"] = True  # a caller's change stays in the caller's copy
    hist[1].metadata.setdefault("also", 1)
    assert [t.metadata for t in conv.history()] == want_md
    assert [t.metadata for t in mf.archive.get_many([t.id for t in hist]).values()] == want_md
    mf.close()
    again = _open(backend_target)
    assert [t.metadata for t in again.conversation("c", create=False).history()] == want_md
    lines = [json.loads(x) for x in again.conversation("c", create=False).export_jsonl().splitlines()]
    assert [x["content"] for x in lines] == [f"turn {i}" for i in range(len(METADATA))] + ["no labels", "labels"]
    again.close()


# --- real processes at once: appenders/compilers/searchers, an eraser and a relabeller -------------

_WORKER = textwrap.dedent("""
    import fcntl, json, sys
    import memfold

    path, lock_path, role, wid, rounds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])

    def open_():
        return memfold.MemFold(path, clock=memfold.LogicalClock(), token_counter="words", embedder=None,
                               secrets="off", preload_embedder=False)

    def locked(mode):
        class L:
            def __enter__(self):
                self.f = open(lock_path, "a+")
                fcntl.flock(self.f, mode)
            def __exit__(self, *a):
                fcntl.flock(self.f, fcntl.LOCK_UN)
                self.f.close()
        return L()

    def listed(name):
        try:
            return [x for x in open(lock_path + "." + name).read().split() if x]
        except FileNotFoundError:
            return []

    mf = open_()
    conv = mf.conversation("c1", create=False)
    for i in range(rounds):
        if role == "worker":
            kind = "eraseme" if i % 3 == 0 else "keep"
            with locked(fcntl.LOCK_SH):  # writers run together; a check runs alone
                conv.append({"role": "user" if i % 2 == 0 else "assistant",
                             "content": f"{kind}w{wid}x{i} about the parcel number {i}"})
            mf.search("parcel number", limit=5, mode="bm25")  # unlocked: a search amid the others' writes
            with locked(fcntl.LOCK_EX):
                erased, hr = listed("erased"), listed("hr")
                for reader in (None, ["staff"]):
                    got = conv.context(budget=60000, reader=reader)
                    fresh_mf = open_()
                    fresh = fresh_mf.conversation("c1", create=False).context(budget=60000, reader=reader)
                    fresh_mf.close()
                    text = json.dumps(got.to_dict())
                    if got.to_dict() != fresh.to_dict():
                        sys.exit(f"worker {wid} round {i} reader {reader}: cached context != fresh open's")
                    shown = [m for m in erased if m + " " in text]
                    if shown:
                        sys.exit(f"worker {wid} round {i}: erased {shown} shown")
                    if reader is not None and [m for m in hr if m + " " in text]:
                        sys.exit(f"worker {wid} round {i}: relabelled turns shown to reader staff")
                hits = [h for h in mf.search("eraseme", limit=100, mode="bm25") if h.kind == "turn"]
                bad = [h.id for h in hits if mf.archive.get(h.id).erased]
                if bad:
                    sys.exit(f"worker {wid} round {i}: erased turns {bad} found by search")
        else:
            with locked(fcntl.LOCK_EX):  # the change and its record, at once
                turns = [t for t in conv.history() if not t.erased]
                if role == "eraser":
                    doomed = [t for t in turns if t.content.startswith("eraseme")]
                    if doomed:
                        mf.erase(turn_ids=[t.id for t in doomed])
                        with open(lock_path + ".erased", "a") as f:
                            f.write(" ".join(t.content.split()[0] for t in doomed) + " ")
                else:
                    plain = [t for t in turns if t.content.startswith("keep") and "hr" not in t.labels]
                    if plain:
                        mf.relabel(f"t{plain[0].id}", ["hr"])
                        with open(lock_path + ".hr", "a") as f:
                            f.write(plain[0].content.split()[0] + " ")
    mf.close()
""")


def test_processes_appending_compiling_and_searching_while_others_erase_and_relabel(tmp_path):
    path, lock = tmp_path / "many.db", tmp_path / "lock"
    mf = _open(path)
    conv = mf.conversation("c1", namespace="ns")
    for i in range(4):
        conv.append({"role": "user", "content": f"keepseed{i} the parcel number {i}"})
    for i in range(2):  # something to erase even if the eraser runs before any worker appends
        conv.append({"role": "user", "content": f"erasemeseed{i} the parcel number {i}"})
    mf.close()
    roles = [("worker", 0), ("worker", 1), ("worker", 2), ("worker", 3), ("eraser", 4), ("relabel", 5)]
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, str(path), str(lock), role, str(wid),
                               "20" if role == "worker" else "16"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for role, wid in roles]
    outcomes = [(p.wait(600), p.stderr.read()[-2000:]) for p in procs]
    assert all(rc == 0 for rc, _ in outcomes), outcomes
    erased = (tmp_path / "lock.erased").read_text().split() if (tmp_path / "lock.erased").exists() else []
    assert erased, "the eraser erased nothing"
    assert (tmp_path / "lock.hr").read_text().split()
    final = _open(path)
    history = final.conversation("c1", create=False).history()
    assert len(history) == 6 + 4 * 20
    text = json.dumps(final.conversation("c1", create=False).context(budget=60000).to_dict())
    assert not [m for m in erased if m + " " in text]
    final.close()


def test_export_jsonl_to_a_path_or_a_binary_file_is_a_clear_error(tmp_path):
    from memfold.memory.errors import InvalidInput

    mf = _open(tmp_path / "x.db")
    conv = mf.conversation("c1", namespace="ns")
    conv.append({"role": "user", "content": "hello"})
    target = tmp_path / "out.jsonl"
    for bad in (target, str(target)):
        with pytest.raises(InvalidInput, match="text stream"):
            conv.export_jsonl(bad)
    with open(target, "wb") as fh, pytest.raises(InvalidInput, match="text stream"):
        conv.export_jsonl(fh)
    assert target.read_bytes() == b""  # nothing written
    with open(target, "w", encoding="utf-8") as fh:
        assert conv.export_jsonl(fh) == 1
    assert json.loads(target.read_text()) == {"role": "user", "content": "hello"}
    mf.close()
