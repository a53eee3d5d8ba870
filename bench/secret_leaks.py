"""Secrets measured where nobody tuned (issue 15, point 8): STAR bank personas, tuning set vs check set.

The personas are split once by ``tests/data/split_star_secrets.py`` (seed 15) into
``tests/data/star_secret_split.json``; the detector is tuned on the tuning set only and the check
set is measured after tuning. For every persona, its bank dialogues are replayed through the whole
pipeline (``memfold.replay``: append with the secret detector, the constraint extractor, folding,
the nightly consolidation pass), then every gold secret value the wizard queried (PIN, password,
security answers) is looked for in semantic facts, card texts and protected records
(:func:`memfold.replay.report.secret_check`, a whole-word, case-insensitive match), and, stricter,
in archived turns that are *not* labelled ``secret`` (a value the detector missed, even where
nothing derived repeats it). A gold value that is also an ordinary word ("Long", a maiden name,
in "how long"; "Buddy", a pet, in "my work buddy") is matched wherever the word is used: read
the ``--failures`` listing to tell those from a leak.

    python bench/secret_leaks.py [--set tuning|check|both] [--failures] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from pathlib import Path

from memfold import MemFold
from memfold.replay.formats import read_star_source
from memfold.replay.runner import replay

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data" / "star"
SPLIT = REPO / "tests" / "data" / "star_secret_split.json"


def measure(persona: str, workdir: Path, *, failures: bool = False, n: int = 0) -> dict:
    source = read_star_source(DATA, persona, domain="bank")
    db = workdir / (f"{n:03d}-" + re.sub(r"[^a-z0-9]+", "-", persona.lower()) + ".db")
    report = replay(source, db, token_counter="words")
    s = report.secrets or {"checked": 0, "in_facts": 0, "in_cards": 0, "in_protected": 0, "found": {}}
    values = set()
    for conv in source.conversations:
        plain = [str(v).lower() for v in list(conv.gold_facts.values()) + sorted(conv.plain_values)]
        values |= {str(v).strip() for v in conv.secrets
                   if str(v).strip() and str(v).strip().lower() != "null" and not any(str(v).strip().lower() in p
                                                                                     for p in plain)}
    patterns = [(v, re.compile(r"(?<![\w])" + re.escape(v) + r"(?![\w])", re.IGNORECASE)) for v in sorted(values)]
    mf = MemFold(db, token_counter="words", embedder=None)
    unlabelled = []
    for turn in mf.storage.archive.unerased_turns():
        if "secret" in turn.labels:
            continue
        for v, pat in patterns:
            if pat.search(turn.content):
                unlabelled.append({"value": v, "role": turn.role, "text": turn.content})
    mf.close()
    out = {"persona": persona, "dialogues": len(source.conversations[0].sessions) if source.conversations else 0,
           "turns": report.figures.get("turns") if hasattr(report, "figures") else None,
           "checked": s["checked"], "in_facts": s["in_facts"], "in_cards": s["in_cards"],
           "in_protected": s["in_protected"], "unlabelled_turns": len(unlabelled)}
    if failures:
        out["found"] = s.get("found")
        out["unlabelled"] = unlabelled
    return out


def run(which: str, *, failures: bool = False) -> dict:
    split = json.loads(SPLIT.read_text(encoding="utf-8"))
    names = split[which]
    rows = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            try:
                rows.append(measure(name, Path(tmp), failures=failures, n=len(rows)))
            except Exception as exc:  # a persona without bank dialogues in the loose files, say
                rows.append({"persona": name, "error": str(exc)})
    ok = [r for r in rows if "error" not in r]
    total = {k: sum(r[k] for r in ok) for k in ("checked", "in_facts", "in_cards", "in_protected", "unlabelled_turns")}
    return {"set": which, "personas": len(names), "measured": len(ok), **total,
            "seconds": round(time.perf_counter() - start, 1), "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", dest="which", choices=("tuning", "check", "both"), default="tuning")
    parser.add_argument("--failures", action="store_true", help="print every leaked or unlabelled value")
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    results = [run(w, failures=args.failures) for w in (("tuning", "check") if args.which == "both" else (args.which,))]
    for res in results:
        print(f"{res['set']}: {res['measured']}/{res['personas']} personas, {res['checked']} gold secret values; "
              f"in facts {res['in_facts']}, cards {res['in_cards']}, protected {res['in_protected']}; "
              f"turns holding one without the secret label {res['unlabelled_turns']} ({res['seconds']} s)")
        if args.failures:
            for r in res["rows"]:
                if r.get("error") or r.get("in_facts") or r.get("in_cards") or r.get("in_protected") or r.get(
                        "unlabelled_turns"):
                    print(json.dumps(r, ensure_ascii=False)[:3000])
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
