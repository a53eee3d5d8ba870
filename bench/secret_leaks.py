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

``--set fresh`` (round 4) replays the fresh check set of ``tests/data/star_fresh_secrets.py``
(``tests/data/star_secret_fresh.json``, committed before any of its dialogues was read): the bank
dialogues of the archive that no persona names and the spaceship_access_codes dialogues, one
conversation per persona name of each part (:func:`memfold.replay.formats.read_star_dialogues`,
which reads the tar.xz), checked the same way. The round-3 sets are in-sample now: both were
tuned on. ``--cost`` counts the turns the detector labels secret where there is no secret to
find: LoCoMo dev and the non-bank STAR dialogues of ``dialogues_service``, and (round 15) the
user rules of ``tests/data/secret_rule_phrasings.json`` that name a kind of secret without a value
("Never share your password with anyone."), beside its rules that carry one (all must stay secret).

    python bench/secret_leaks.py [--set tuning|check|both|fresh] [--failures] [--cost] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from pathlib import Path

from memfold import MemFold, SecretDetector
from memfold.replay.formats import ReplaySource, read_locomo_source, read_star_dialogues, read_star_source
from memfold.replay.runner import replay

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data" / "star"
SPLIT = REPO / "tests" / "data" / "star_secret_split.json"
FRESH = REPO / "tests" / "data" / "star_secret_fresh.json"
LOCOMO = REPO.parent / "shared" / "data" / "locomo" / "locomo_dev.json"
#: round 15: user rules that name a kind of secret without a value, and rules that carry one
RULES = REPO / "tests" / "data" / "secret_rule_phrasings.json"


def measure(persona: str, workdir: Path, *, failures: bool = False, n: int = 0,
            source: ReplaySource | None = None) -> dict:
    source = source or read_star_source(DATA, persona, domain="bank")
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


COUNTS = ("checked", "in_facts", "in_cards", "in_protected", "unlabelled_turns")


def run(which: str, *, failures: bool = False, fresh_file: Path = FRESH) -> dict:
    if which == "fresh":
        return run_fresh(failures=failures, fresh_file=fresh_file)
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
    total = {k: sum(r[k] for r in ok) for k in COUNTS}
    return {"set": which, "personas": len(names), "measured": len(ok), **total,
            "seconds": round(time.perf_counter() - start, 1), "rows": rows}


def run_fresh(*, failures: bool = False, fresh_file: Path = FRESH) -> dict:
    """The fresh check set: each conversation of each part replayed and checked like a persona;
    totals per part and overall. Errors are reported per conversation, never skipped silently."""
    fresh = json.loads(fresh_file.read_text(encoding="utf-8"))
    rows = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for part, convs in fresh["parts"].items():
            for conv in convs:
                label = f"{part}/{conv['conversation']}"
                slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
                try:
                    source = read_star_dialogues(DATA, conv["dialogues"], conversation_id=f"fresh-{slug}",
                                                 namespace=f"fresh/{slug}")
                    row = measure(label, Path(tmp), failures=failures, n=len(rows), source=source)
                except Exception as exc:
                    row = {"persona": label, "error": f"{type(exc).__name__}: {exc}"}
                rows.append({"part": part, **row})
    ok = [r for r in rows if "error" not in r]
    parts = {part: {k: sum(r[k] for r in ok if r["part"] == part) for k in COUNTS} for part in fresh["parts"]}
    return {"set": "fresh", "personas": len(rows), "measured": len(ok), "dialogues": fresh["dialogues"],
            **{k: sum(r[k] for r in ok) for k in COUNTS}, "parts": parts,
            "seconds": round(time.perf_counter() - start, 1), "rows": rows}


def cost(*, failures: bool = False) -> dict:
    """Turns labelled secret where nobody says a secret: every LoCoMo dev turn, and every visible
    turn of the non-bank STAR dialogues in ``dialogues_service`` (hotel service requests, ride
    changes and statuses), each conversation fed in order to the detector the library uses."""
    out: dict = {}
    listing = []
    groups: dict[str, list[list[dict]]] = {"locomo": [], "star_non_bank": []}
    for conv in read_locomo_source(LOCOMO).conversations:
        groups["locomo"].append([t for s in conv.sessions for t in s.turns])
    for f in sorted((DATA / "dialogues_service").glob("*.json")):
        dialogue = json.loads(f.read_text(encoding="utf-8"))
        if any("bank" in (c.get("Task") or "") for c in dialogue["Scenario"].get("WizardCapabilities", [])):
            continue
        groups["star_non_bank"].append([
            {"role": "user" if e["Agent"] == "User" else "assistant", "content": e["Text"]}
            for e in dialogue.get("Events", [])
            if ((e.get("Agent"), e.get("Action")) in (("User", "utter"), ("Wizard", "utter"), ("Wizard", "pick_suggestion"))
                and (e.get("Text") or "").strip())])
    rules = json.loads(RULES.read_text(encoding="utf-8"))
    groups["rules"] = [[{"role": "user", "content": text}] for text in rules["no_value"]]
    for name, convs in groups.items():
        turns = labelled = 0
        for conv in convs:
            detector = SecretDetector()
            for turn in conv:
                turns += 1
                spans = detector.detect(turn)
                if spans:
                    labelled += 1
                    listing.append({"source": name, "role": turn["role"], "text": turn["content"], "spans": spans})
        out[name] = {"turns": turns, "labelled_secret": labelled}
    held = [text for text in rules["with_value"] if not SecretDetector().detect({"role": "user", "content": text})]
    out["rules_with_value"] = {"turns": len(rules["with_value"]), "labelled_secret": len(rules["with_value"]) - len(held),
                               "missed": held}
    if failures:
        out["listing"] = listing
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", dest="which", choices=("tuning", "check", "both", "fresh", "none"), default="tuning")
    parser.add_argument("--failures", action="store_true", help="print every leaked or unlabelled value")
    parser.add_argument("--cost", action="store_true", help="count turns labelled secret on LoCoMo dev and "
                                                            "non-bank STAR dialogues")
    parser.add_argument("--fresh-file", type=Path, default=FRESH,
                        help="the fresh set's JSON (default tests/data/star_secret_fresh.json)")
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    sets = {"both": ("tuning", "check"), "none": ()}.get(args.which, (args.which,))
    results = [run(w, failures=args.failures, fresh_file=args.fresh_file) for w in sets]
    for res in results:
        unit = "conversations" if res["set"] == "fresh" else "personas"
        print(f"{res['set']}: {res['measured']}/{res['personas']} {unit}, {res['checked']} gold secret values; "
              f"in facts {res['in_facts']}, cards {res['in_cards']}, protected {res['in_protected']}; "
              f"turns holding one without the secret label {res['unlabelled_turns']} ({res['seconds']} s)")
        for part, counts in res.get("parts", {}).items():
            print(f"  {part} ({res['dialogues'][part]} dialogues): {counts['checked']} values; in facts "
                  f"{counts['in_facts']}, cards {counts['in_cards']}, protected {counts['in_protected']}; "
                  f"unlabelled turns {counts['unlabelled_turns']}")
        if args.failures:
            for r in res["rows"]:
                if r.get("error") or r.get("in_facts") or r.get("in_cards") or r.get("in_protected") or r.get(
                        "unlabelled_turns"):
                    print(json.dumps(r, ensure_ascii=False)[:3000])
    if args.cost:
        figures = cost(failures=args.failures)
        for name in ("locomo", "star_non_bank", "rules"):
            f = figures[name]
            print(f"cost, {name}: {f['labelled_secret']} of {f['turns']} turns labelled secret "
                  f"({100 * f['labelled_secret'] / max(1, f['turns']):.2f}%)")
        f = figures["rules_with_value"]
        print(f"rules holding a value: {f['labelled_secret']} of {f['turns']} labelled secret (must be all)"
              + (f"; missed: {f['missed']}" if f["missed"] else ""))
        for item in figures.get("listing", []):
            print(json.dumps(item, ensure_ascii=False)[:600])
        results.append({"set": "cost", **figures})
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
