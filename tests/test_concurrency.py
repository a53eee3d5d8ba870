"""Two processes appending to one database file at once: no "database is locked", no row lost."""

import subprocess
import sys
import textwrap

from memfold import LogicalClock, MemFold

WRITER = textwrap.dedent(
    """
    import sys
    from memfold import MemFold, LogicalClock
    path, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    mf = MemFold(path, clock=LogicalClock(), token_counter="words")
    conv = mf.conversation("shared")
    for i in range(n):
        conv.append({"role": "user", "content": f"{who} turn {i}"})
        mf.memory.write("ns", "episodic", f"{who} event {i}")
    mf.close()
    print("done", who)
    """
)


def test_two_processes_append_to_the_same_file(db_path):
    with MemFold(db_path, clock=LogicalClock(), token_counter="words") as mf:
        mf.conversation("shared")
    n = 150
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(db_path), who, str(n)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for who in ("alpha", "beta")
    ]
    results = [p.communicate(timeout=300) for p in procs]
    for proc, (out, err) in zip(procs, results):
        assert proc.returncode == 0, err
        assert "locked" not in err
    with MemFold(db_path, token_counter="words") as mf:
        history = mf.conversation("shared").history()
        assert len(history) == 2 * n
        assert [t.seq for t in history] == list(range(1, 2 * n + 1))
        for who in ("alpha", "beta"):
            mine = [t.content for t in history if t.content.startswith(who)]
            assert mine == [f"{who} turn {i}" for i in range(n)]  # each writer's order is kept
        records = mf.memory.list("ns")
        assert len(records) == 2 * n
        assert len({r.content for r in records}) == 2 * n
        assert mf.archive.verify() == []
