"""Round 9 QA probe (not a test: it is a race): 4 processes compile one conversation (with memories, so a
compile writes access counts) while a 5th erases turns and appends new ones; a worker counts the compiles
that showed a turn erased before that compile began (read from the eraser's list, written after each
erase commits). Any count above 0 is the stale-put race of ``Conversation.context`` that round 9 QA found and
round 9 fixed (tests/test_round9_qa.py places it deterministically). Usage: python bench/race_cache_erase_probe.py [runs]"""
import json, subprocess, sys, textwrap, os
import memfold
W = textwrap.dedent('''
import json, sys, memfold
path, role, wid = sys.argv[1], sys.argv[2], sys.argv[3]
mf = memfold.MemFold(path, clock=memfold.LogicalClock(), token_counter="words", embedder=None, secrets="off", preload_embedder=False)
conv = mf.conversation("c1", create=False)
bad = 0
for i in range(150):
    if role == "eraser":
        doomed = [t for t in conv.history() if t.content.startswith("eraseme") and not t.erased]
        if doomed:
            mf.erase(turn_ids=[t.id for t in doomed])
            with open(path + ".erased", "a") as f:
                f.write(" ".join(t.content.split()[0] for t in doomed) + " ")
        conv.append({"role": "user", "content": f"erasemeE{i} x"})
    else:
        try:
            erased = open(path + ".erased").read().split()
        except FileNotFoundError:
            erased = []
        text = json.dumps(conv.context(budget=60000).to_dict())
        shown = [m for m in erased if m + " " in text]
        if shown:
            bad += 1
        if i % 5 == 0:
            mf.memory.write("ns", "semantic", f"note {wid} {i}", key=f"k{wid}")
print(role, wid, "stale hits showing erased text:", bad)
''')
import tempfile

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
for run in range(runs):
    path = os.path.join(tempfile.mkdtemp(prefix="r9qa-race-"), "probe.db")
    print("run", run + 1, flush=True)
    mf = memfold.MemFold(path, clock=memfold.LogicalClock(), token_counter="words", embedder=None, secrets="off",
                         preload_embedder=False)
    c = mf.conversation("c1", namespace="ns")
    c.append({"role": "user", "content": "seed"})
    mf.memory.write("ns", "semantic", "Dana likes tea", key="user.drink")
    mf.close()
    ps = [subprocess.Popen([sys.executable, "-c", W, path, r, str(i)]) for i, r in enumerate(["eraser", "w", "w", "w", "w"])]
    for p in ps:
        p.wait()
