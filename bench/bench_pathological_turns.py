"""CPU time of appending one 50 KB pathological user turn (repeated words, commas, list lines,
"before before ...", runs without spaces) to a fresh file each, one after another in this process (the first one also pays the
rules' first compilation: run one name a process for cold figures): the round-8
phrasing rules must stay linear (round 8 QA). Usage: python bench/bench_pathological_turns.py [name ...]"""
import sys, time, os, tempfile
import memfold
from memfold import LogicalClock
N = 50_000
def rep(s): return (s * (N // len(s) + 1))[:N]
INPUTS = {
 "words": rep("plan "), "commas": rep(","), "comma_words": rep("plan, "), "list_lines": rep("- only the customer\n"),
 "before": rep("before "), "before_comma": rep("before 1,"), "nospace": "a" * N, "nospace_dash": rep("a-"),
 "only": rep("only "), "colon": rep("Plan: "), "the_word": rep("the big "), "apostrophe": rep("x' "),
 "deadline": "deadline for " + rep("a ") , "we_only": "we only " + rep("x "), "only_once": "only once " + rep("a "),
 "the_customer": "the " + rep("customer "), "needs": "the " + rep("x ") + " needs", "colon_long": rep("ab") + ": " + rep("c "),
 "forget": rep("ok, "), "dots": rep("."), "digits_commas": "before " + rep("1,"), "mixed_unicode": rep("é’ "),
}
which = sys.argv[1:] or list(INPUTS)
d = tempfile.mkdtemp(prefix="memfold-pathological-")
for name in which:
    mf = memfold.MemFold(os.path.join(d, name + ".db"), clock=LogicalClock(), token_counter="words", embedder=None, preload_embedder=False)
    conv = mf.conversation("c", namespace="n")
    t0, c0 = time.perf_counter(), time.thread_time()
    conv.append({"role": "user", "content": INPUTS[name]})
    print(f"{name:15s} wall {time.perf_counter()-t0:7.3f}s cpu {time.thread_time()-c0:7.3f}s", flush=True)
    mf.close()
