"""Attribute facts the rules extractor proposes on the LoCoMo dev turns (each turn as a user
episode), and the extractor's CPU per turn (user_facts and attribute_statements alone).

Usage: python bench/locomo_attributes.py [--show N] [--reps R] [--dump OUT.json]
(round 10, issue 20 point 11: the LoCoMo fact counts and CPU figures of the README's round-10
attribute paragraph).
"""
import argparse, json, sys, time
from pathlib import Path

import memfold
from memfold.consolidation.extractors.base import Episode
from memfold.consolidation.extractors.rules import RulesExtractor, _sentences
from memfold.consolidation.extractors import attributes

p = argparse.ArgumentParser()
p.add_argument("--show", type=int, default=0)
p.add_argument("--reps", type=int, default=3)
p.add_argument("--dump", type=Path, default=None)
a = p.parse_args()
print("memfold at", memfold.__file__, file=sys.stderr)
samples = json.loads((Path(__file__).resolve().parents[1].parent / "shared" / "data" / "locomo" / "locomo_dev.json").read_text())
texts = [t["text"] for s in samples for k, v in s["conversation"].items()
         if k.startswith("session_") and isinstance(v, list) for t in v]
ex = RulesExtractor()
facts = []
for i, t in enumerate(texts):
    for pr in ex.user_facts(Episode(f"turn:{i}", "user", t)):
        if (pr.metadata or {}).get("rule") == "attribute" or (pr.key or "").startswith("user.preference."):
            facts.append((i, pr.key, pr.content, "retire" if pr.retire else "write", pr.slot_of, t))
attr = [f for f in facts if not (f[1] or "").startswith("user.preference.")]
print(f"turns {len(texts)}; attribute proposals {len(attr)} (writes {sum(f[3]=='write' for f in attr)}, "
      f"retires {sum(f[3]=='retire' for f in attr)}); user.preference likes {len(facts)-len(attr)}")
for f in attr[: a.show]:
    print(f"  {f[3]:6} {f[1]} = {f[2]!r} slot_of={f[4]!r} <- {f[5][:120]!r}")
if a.dump:
    a.dump.write_text(json.dumps(attr, indent=1))
# CPU: user_facts on every turn, and attribute_statements on every sentence
best_uf = best_as = 1e9
sents = [s for t in texts for s in _sentences(t)]
for _ in range(a.reps):
    t0 = time.process_time()
    for i, t in enumerate(texts):
        ex.user_facts(Episode(f"turn:{i}", "user", t))
    best_uf = min(best_uf, time.process_time() - t0)
    t0 = time.process_time()
    for s in sents:
        attributes.attribute_statements(s)
    best_as = min(best_as, time.process_time() - t0)
print(f"CPU best of {a.reps}: user_facts {best_uf / len(texts) * 1e6:.0f} us/turn; "
      f"attribute_statements {best_as / len(sents) * 1e6:.0f} us/sentence ({len(sents)} sentences)")
