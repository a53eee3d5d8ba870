"""Retention on phrasings nobody tuned on (issue 20, points 10 and 11), beside the public figures.

The phrasing sets live in ``tests/data``, each written and committed before the extractors ran on
it: the original set (``protected_paraphrases.json`` / ``attribute_phrasings.json``, split per
group into a tuning and a held-out half with a fixed seed, ``tests/data/split_phrasings.py``) and
the later ones named by their suffix (``protected_paraphrases_<name>.json`` /
``attribute_phrasings_<name>.json``: ``fresh``, ``fresh2``, ``r4own``, ``r4own2``, ``fresh3``,
``r5own``, ``r5own2``, ``fresh4``, ``fresh5``, ``fresh6``; ``--set NAME`` measures any set by name, e.g. a blind one, ``--set fresh7``).
``fresh4`` was written blind in round 5, measured once, and tuned on in round 8; ``fresh5`` was written
blind in round 8, measured once (70.5% of its protected items, 77.4% of its attribute facts), and is
tuned on since round 9; ``fresh6`` was written blind in round 9, measured twice (78.8% of its protected
items and 89.8% of its attribute facts on round 9's rules), and is tuned on since round 10. A set written
blind later (``fresh7``, round 10; ``fresh8``, round 11) is in the default sets since round 12, and
``fresh9`` (round 12) since round 13 (all three are tuned on since); a new blind set (``fresh10``,
round 13) is measured with ``--set`` only.

* Protected items: standing instructions per protected kind (obligations, prohibitions,
  restrictions, permissions, deadlines, prerequisites, approvals, evidence, decisions), plan
  resets and replacements, revocations and confirmations, system turns in the middle of a
  conversation, plus near misses. Each item runs through a real :class:`~memfold.MemFold`
  conversation (setup turns, then the message, then any ``after`` turns): it is retained when
  the expected protected record is active afterwards (and, for withdrawals, the setup record has
  left the channel in the expected state while the unrelated one stays; for a system turn, it is
  the compiled context's system message). "kind" is the share of retained records whose kind is
  the one written down.
* Attribute items: facts users state in common shapes (favourites, preferences, switches, "I no
  longer ...", "actually" corrections), each turn appended and consolidated in order; an item is
  right when the active facts in ``user.favourite.*``, ``user.preferred.*`` and
  ``user.preference.*`` are exactly the expected ones.
* ``--loso``: leave-one-set-out. The rule families added in rounds 4, 5, 8, 9 and 10 are registered with the sets
  whose misses they were written from (:mod:`memfold.memory.families`); each set is measured
  with the families only it motivated turned off, beside its in-sample figure.

False protected records: every LoCoMo dev turn (3,435, both speakers, small talk between friends)
through the constraint extractor; the figure counts the records it proposes. With ``--public``
the COMPINT side-constraint and CompactBench figures of ``bench/constraint_retention.py`` are
computed too and printed beside these (that replay takes a few minutes).

Usage::

    python bench/phrasing_retention.py [--set NAME ...] [--loso] [--public] [--limit N] [--failures SPLIT] [--json OUT]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from memfold import LogicalClock, MemFold
from memfold.memory import families
from memfold.window import instruction_model
from memfold.window.constraints import RuleConstraintExtractor

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
SHARED = ROOT.parent / "shared" / "data"
LOCOMO = SHARED / "locomo" / "locomo_dev.json"
ATTRIBUTE_FAMILIES = ("user.favourite.", "user.preferred.", "user.preference.")


HALVES = ("tune", "heldout")
#: the sets measured when no --set is given, in column order ("original" is the first set with its
#: tuning and held-out halves; the others are named by their files' suffix)
DEFAULT_SETS = ("original", "fresh", "fresh2", "r4own", "r4own2", "fresh3", "r5own", "r5own2", "fresh4", "fresh5",
                "fresh6", "fresh7", "fresh8", "fresh9", "fresh10", "fresh11", "fresh12")


def load(name: str) -> list[dict[str, Any]]:
    """The items of a phrasing set in ``tests/data``."""
    return json.loads((DATA / name).read_text(encoding="utf-8"))["items"]


class UnknownSet(ValueError):
    """A --set name with no phrasing file in ``tests/data``."""


def set_files(name: str) -> tuple[Path, Path]:
    """The protected and attribute files of a set: ``original`` is ``protected_paraphrases.json``
    and ``attribute_phrasings.json``; any other name ``N`` is ``protected_paraphrases_N.json`` and
    ``attribute_phrasings_N.json`` (either may be absent, not both)."""
    if not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,40}", name):
        raise UnknownSet(f"set name {name!r}: use letters, digits, '_' or '-' (e.g. fresh3)")
    suffix = "" if name == "original" else f"_{name}"
    return DATA / f"protected_paraphrases{suffix}.json", DATA / f"attribute_phrasings{suffix}.json"


def load_set(name: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(protected items, attribute items)`` of a set; each item's ``split`` is the set's name
    (the original set keeps its ``tune`` / ``heldout`` halves).

    :raises UnknownSet: when neither file exists.
    """
    prot_path, attr_path = set_files(name)
    if not prot_path.exists() and not attr_path.exists():
        raise UnknownSet(f"no phrasing set {name!r}: neither {prot_path.relative_to(ROOT)} nor "
                         f"{attr_path.relative_to(ROOT)} exists")
    out = []
    for path in (prot_path, attr_path):
        items = load(path.name) if path.exists() else []
        for n, item in enumerate(items):
            if name != "original" or item.get("split") not in HALVES:
                item["split"] = name
            item.setdefault("id", f"{name}-{n + 1:03d}")
            item.setdefault("group", "ungrouped")
            unknown = set(item.get("expect", {})) - KNOWN_KEYS if path == prot_path else set()
            if unknown:
                print(f"warning: {path.name} item {item['id']}: expectation keys this bench ignores: "
                      f"{sorted(unknown)}", file=sys.stderr)
        out.append(items)
    return out[0], out[1]


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def _find(records, contains: str):
    return [r for r in records if contains in r.text]


# -- point 10: protected records ----------------------------------------------------------------
#: the expectations check_protected judges; an item with none of them is reported, not passed
OUTCOME_KEYS = frozenset({"record", "withdrawn", "kept", "none", "system", "not_system"})
KNOWN_KEYS = OUTCOME_KEYS | {"setup"}


def _turn(spec: str | dict[str, Any], role: str = "user") -> dict[str, str]:
    """A setup/after entry as a message: plain text is a user turn, a dict gives its own role."""
    if isinstance(spec, str):
        return {"role": role, "content": spec}
    return {"role": spec.get("role", role), "content": spec.get("text", spec.get("content", ""))}


def check_protected(item: dict[str, Any], mf: MemFold | None = None) -> dict[str, Any]:
    """Run one paraphrase item through a fresh conversation.

    The item's setup turns are appended, then its text (as ``item["role"]``, default ``user``),
    then its ``after`` turns. ``expect`` may name a protected ``record`` that must be active, a
    setup record ``withdrawn`` into a state, records ``kept``, ``none`` (no new record), and, for
    a system turn in the middle of a conversation, ``system`` / ``not_system``: text that the
    compiled context's system message must / no message may contain (after the ``after`` turns,
    compiled at a budget that folds them).

    :returns: ``{"id", "group", "split", "retained": bool, "kind_ok": bool | None, "why": str}``.
    """
    own = mf is None
    mf = mf or MemFold(None, clock=LogicalClock(), embedder=None, token_counter="words")
    conv = mf.conversation(f"p-{item['id']}", namespace="phr")
    cid = conv.id
    out = {"id": item["id"], "group": item["group"], "split": item.get("split"), "retained": False,
           "kind_ok": None, "why": ""}
    exp = item["expect"]
    if not OUTCOME_KEYS & set(exp):  # an item this bench cannot judge never counts as retained
        out["why"] = f"no expectation this bench knows: {sorted(exp)} (known: {sorted(OUTCOME_KEYS)})"
        if own:
            mf.close()
        return out
    try:
        for spec in item.get("setup", []):
            conv.append(_turn(spec))
        active = mf.protected.active_for(cid)
        for want in exp.get("setup", []):
            if not _find(active, want["contains"]):
                out["why"] = f"setup not protected: {want['contains']!r}"
                return out
        before = {r.id for r in mf.protected.list(conversation_id=cid, state=None)}
        conv.append({"role": item.get("role", "user"), "content": item["text"]})
        for spec in item.get("after", []):
            conv.append(_turn(spec))
        active = mf.protected.active_for(cid)
        made = [r for r in mf.protected.list(conversation_id=cid, state=None) if r.id not in before]
        if "system" in exp or "not_system" in exp:
            messages = conv.context(budget=200).messages
            first = messages[0] if messages else {}
            if "system" in exp and not (first.get("role") == "system" and exp["system"] in str(first.get("content"))):
                out["why"] = f"system turn not the context's system message: {str(first.get('content'))[:80]!r}"
                return out
            if "not_system" in exp and any(exp["not_system"] in str(m.get("content")) for m in messages):
                out["why"] = f"a replaced system turn is still in the context: {exp['not_system']!r}"
                return out
        if exp.get("none"):
            out["retained"] = not made
            out["why"] = "" if not made else f"false record: {[r.kind for r in made]}"
            return out
        if "record" in exp:
            hits = _find(active, exp["record"]["contains"])
            if not hits:
                out["why"] = "no record" if not made else f"record without the text: {[r.text for r in made]}"
                return out
            out["kind_ok"] = any(r.kind == exp["record"]["kind"] for r in hits)
        if "withdrawn" in exp:
            w = exp["withdrawn"]
            old = [r for r in mf.protected.list(conversation_id=cid, state=None)
                   if w["contains"] in r.text and r.id in before]
            if any(r.state == "active" for r in old):
                out["why"] = f"still active: {w['contains']!r}"
                return out
            if not any(r.state == w["state"] for r in old):
                out["why"] = f"not {w['state']}: {[r.state for r in old]}"
                return out
        for kept in exp.get("kept", []):
            if not _find(active, kept):
                out["why"] = f"withdrew the unrelated {kept!r}"
                return out
        out["retained"] = True
        return out
    finally:
        if own:
            mf.close()


def protected_figures(items: list[dict[str, Any]]) -> dict[str, Any]:
    """Per group and split: retained / total, and kind agreement among the retained."""
    rows = [check_protected(item) for item in items]
    table: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0, 0, 0]))
    for r in rows:
        for group in dict.fromkeys((r["group"], "all" if r["group"] != "near_miss" else "near_miss")):
            for split in (r["split"], "both") if r["split"] in HALVES else (r["split"],):
                cell = table[group][split]
                cell[0] += r["retained"]
                cell[1] += 1
                cell[2] += bool(r["kind_ok"])
                cell[3] += r["kind_ok"] is not None
    return {"rows": rows, "table": {g: dict(s) for g, s in table.items()}}


def locomo_split(sample_ids: list[str], seed: int = 20) -> dict[str, str]:
    """LoCoMo conversations split like the phrasing sets: shuffled with ``random.Random(seed)``,
    the first half (rounded down) ``tune``, the rest ``heldout`` (conv-43, conv-26, conv-42 tune)."""
    import random

    ids = sorted(sample_ids)
    random.Random(seed).shuffle(ids)
    half = len(ids) // 2
    return {i: ("tune" if n < half else "heldout") for n, i in enumerate(ids)}


def locomo_false_positives(path: Path = LOCOMO, extractor=None) -> dict[str, Any]:
    """Every LoCoMo turn (both speakers) through the constraint extractor: the protected records
    it would make, overall and per conversation split."""
    extractor = extractor or RuleConstraintExtractor()
    samples = json.loads(path.read_text(encoding="utf-8"))
    split = locomo_split([s["sample_id"] for s in samples])
    out: dict[str, Any] = {"turns": 0, "records": 0, "flagged": [],
                           "tune": [0, 0], "heldout": [0, 0]}
    for s in samples:
        part = split[s["sample_id"]]
        for k, v in s["conversation"].items():
            if not (k.startswith("session_") and isinstance(v, list)):
                continue
            for t in v:
                ex = extractor.extract(t["text"])
                out["turns"] += 1
                out[part][1] += 1
                if ex.proposals:
                    out["records"] += len(ex.proposals)
                    out[part][0] += len(ex.proposals)
                    out["flagged"].append((part, t["text"], [p.kind for p in ex.proposals]))
    out["rate"] = out["records"] / out["turns"]
    return out


# -- point 11: attribute facts ------------------------------------------------------------------
def attribute_facts(mf: MemFold, namespace: str) -> dict[str, str]:
    """Active facts in the attribute families, key -> value."""
    return {r.key: r.content for r in mf.memory.list(namespace, "semantic")
            if r.key and r.key.startswith(ATTRIBUTE_FAMILIES)}


def check_attribute(item: dict[str, Any]) -> dict[str, Any]:
    """Append the item's turns one by one, consolidating after each; compare the active facts."""
    with MemFold(None, clock=LogicalClock(), embedder=None, token_counter="words") as mf:
        ns = "attr"
        conv = mf.conversation(f"a-{item['id']}", namespace=ns)
        for turn in item["turns"]:
            conv.append({"role": turn["role"], "content": turn["text"]})
            mf.consolidate(ns, include_turns=True)
        got = attribute_facts(mf, ns)
    want = item["expect"]
    ok = {k: _norm(v) for k, v in got.items()} == {k: _norm(v) for k, v in want.items()}
    return {"id": item["id"], "group": item["group"], "split": item.get("split"), "correct": ok,
            "got": got, "want": want}


def attribute_figures(items: list[dict[str, Any]]) -> dict[str, Any]:
    rows = [check_attribute(item) for item in items]
    table: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for r in rows:
        for group in (r["group"], "all"):
            for split in (r["split"], "both") if r["split"] in HALVES else (r["split"],):
                table[group][split][0] += r["correct"]
                table[group][split][1] += 1
    return {"rows": rows, "table": {g: dict(s) for g, s in table.items()}}


# -- leave-one-set-out --------------------------------------------------------------------------------
#: the folds: the original set's two halves count as two sets (both were written in round 1)
def _folds(loaded: dict[str, tuple[list, list]]) -> dict[str, tuple[list, list]]:
    out: dict[str, tuple[list, list]] = {}
    for name, (prot, attr) in loaded.items():
        if name == "original":
            for half in HALVES:
                out[half] = ([i for i in prot if i["split"] == half], [i for i in attr if i["split"] == half])
        else:
            out[name] = (prot, attr)
    return out


def leave_one_set_out(loaded: dict[str, tuple[list, list]]) -> dict[str, dict[str, Any]]:
    """Each set measured twice: with every rule family on (in-sample) and with the round-4 and -5
    families that only it motivated turned off (``memfold.memory.families``): what the rules would
    retain had that set been left out of the tuning. Near misses count as items (right when no
    record is made)."""
    # import the extractors so their families are registered
    import memfold.consolidation.extractors.attributes  # noqa: F401
    import memfold.window.directives  # noqa: F401

    out: dict[str, dict[str, Any]] = {}
    for name, (prot, attr) in _folds(loaded).items():
        off = families.motivated_only_by(name)
        strict = families.motivated_by(name)
        row: dict[str, Any] = {"off": off, "off_strict": strict}
        for label, ctx in (("in", families.off(())), ("out", families.off(off)), ("strict", families.off(strict))):
            # the rules alone: the instruction model was trained on every set (its own
            # leave-one-set-out figures are bench/instruction_model_eval.py's)
            with ctx, instruction_model.using(None):
                p = [check_protected(i)["retained"] for i in prot]
                a = [check_attribute(i)["correct"] for i in attr]
            row[f"protected_{label}"] = [sum(p), len(p)] if p else None
            row[f"attributes_{label}"] = [sum(a), len(a)] if a else None
        out[name] = row
    return out


# -- the public figures of bench/constraint_retention.py ------------------------------------------
def public_figures(limit: int | None) -> dict[str, Any]:
    spec = importlib.util.spec_from_file_location("constraint_retention", ROOT / "bench" / "constraint_retention.py")
    cr = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cr)  # type: ignore[union-attr]
    import memfold

    counter = memfold.TiktokenCounter("cl100k_base")
    side = cr.side_constraint_bench(SHARED / "locomo" / "locomo_dev.json",
                                    SHARED / "compint_side_constraints" / "side_constraints.json", limit, counter)
    cb = cr.compactbench_bench(SHARED / "compactbench" / "benchmarks" / "public", counter)
    return {"side_constraints": side["memfold"]["all:all"], "forbidden_behaviors": cb["memfold"]["forbidden_behaviors"],
            "locked_decisions": cb["memfold"]["locked_decisions"]}


def _cell(cell: list[int] | None) -> str:
    if not cell:
        return f"{'-':>16}"
    return f"{cell[0] / cell[1]:>7.1%} ({cell[0]:>3}/{cell[1]:<3})"


def _columns(sets: list[str]) -> list[tuple[str, str]]:
    """``(header, split)`` per table column."""
    cols: list[tuple[str, str]] = []
    for name in sets:
        cols += [("tune", "tune"), ("held-out", "heldout"), ("both", "both")] if name == "original" else [(name, name)]
    return cols


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", dest="sets", action="append", default=None, metavar="NAME",
                        help="Measure this phrasing set (repeatable): 'original', or N for "
                             "tests/data/protected_paraphrases_N.json and attribute_phrasings_N.json "
                             f"(default: {', '.join(DEFAULT_SETS)}).")
    parser.add_argument("--loso", action="store_true",
                        help="Leave-one-set-out: each set measured with the round-4, -5, -8, -9 and -10 rule families that only it "
                             "motivated turned off, beside its in-sample figure.")
    parser.add_argument("--public", action="store_true", help="Also run bench/constraint_retention.py's figures.")
    parser.add_argument("--limit", type=int, default=None, help="With --public: only the first N LoCoMo conversations.")
    parser.add_argument("--failures", default=None, metavar="SPLIT",
                        help="List the items (and LoCoMo turns) that failed in this split: tune, heldout, a set's "
                             "name, or all.")
    parser.add_argument("--json", dest="json_out", type=Path, default=None)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    sets = [n for chunk in (args.sets or []) for n in chunk.split(",") if n] or [
        n for n in DEFAULT_SETS if any(p.exists() for p in set_files(n))]
    try:
        loaded = {name: load_set(name) for name in sets}
    except UnknownSet as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2
    cols = _columns(sets)

    prot = protected_figures([i for name in sets for i in loaded[name][0]])
    print("Point 10: standing instructions, own paraphrases (retained = the expected protected record is active;")
    print(f"sets: {', '.join(sets)})")
    print(f"{'group':16}" + "".join(f"{h:>18}" for h, _ in cols) + "   kind right")
    order = sorted(prot["table"], key=lambda g: (g in ("all", "near_miss"), g == "near_miss", g))
    for g in order:
        t = prot["table"][g]
        cells = [t.get(split) for _, split in cols]
        hit = [sum(c[2] for c in cells if c), sum(c[3] for c in cells if c)]
        kind = f"{hit[0] / hit[1]:.0%}" if hit[1] else "-"
        label = "near miss: none" if g == "near_miss" else g
        print(f"{label:16}" + "".join(_cell(c) for c in cells) + f"   {kind}")
    fp = locomo_false_positives()
    print(f"\nLoCoMo small talk: {fp['records']} protected records from {fp['turns']} turns "
          f"= {fp['rate']:.3%} (goal <= 0.1%); tuning conversations {fp['tune'][0]}/{fp['tune'][1]}, "
          f"held-out conversations {fp['heldout'][0]}/{fp['heldout'][1]}")

    attr = attribute_figures([i for name in sets for i in loaded[name][1]])
    print("\nPoint 11: attribute facts, own phrasings (correct = exactly the expected active facts)")
    print(f"{'group':16}" + "".join(f"{h:>18}" for h, _ in cols))
    for g in sorted(attr["table"], key=lambda g: (g == "all", g)):
        t = attr["table"][g]
        print(f"{g:16}" + "".join(_cell(t.get(split)) for _, split in cols))

    loso = None
    if args.loso:
        loso = leave_one_set_out(loaded)
        print("\nLeave-one-set-out (round-4, -5, -8, -9 and -10 rule families): LOSO = the families only that set motivated off; "
              "strict = every family it had a hand in off")
        print(f"{'set':10}{'protected in':>18}{'LOSO':>18}{'strict':>18}{'attributes in':>18}{'LOSO':>18}"
              f"{'strict':>18}   families off (LOSO)")
        for name, row in loso.items():
            print(f"{name:10}{_cell(row['protected_in'])}{_cell(row['protected_out'])}{_cell(row['protected_strict'])}"
                  f"{_cell(row['attributes_in'])}{_cell(row['attributes_out'])}{_cell(row['attributes_strict'])}"
                  f"   {', '.join(row['off']) or '-'}")

    public = None
    if args.public:
        print("\nPublic figures (bench/constraint_retention.py, memfold column):", file=sys.stderr)
        public = public_figures(args.limit)
        own_all = prot["table"]["all"]
        print("\nSide by side: retained by memfold")
        print(f"{'set':48}{'retained':>18}")
        s = public["side_constraints"]
        print(f"{'COMPINT side constraints in LoCoMo (public)':48}{_cell([s['retained'], s['runs']])}")
        for name, key in (("CompactBench forbidden behaviours (public)", "forbidden_behaviors"),
                          ("CompactBench locked decisions (public)", "locked_decisions")):
            c = public[key]
            print(f"{name:48}{_cell([c['retained'], c['items']])}")
        for header, split in cols:
            print(f"{'own paraphrases, ' + header:48}{_cell(own_all.get(split))}")

    if args.failures:
        want = lambda split: args.failures in ("all", split)  # noqa: E731
        print(f"\nFailures ({args.failures}):")
        for r in prot["rows"]:
            if not r["retained"] and want(r["split"]):
                print(f"  [{r['split']}] {r['id']}: {r['why']}")
        for r in attr["rows"]:
            if not r["correct"] and want(r["split"]):
                print(f"  [{r['split']}] {r['id']}: got {r['got']} want {r['want']}")
        for part, text, kinds in fp["flagged"]:
            if want(part):
                print(f"  [{part}] LoCoMo {kinds}: {text[:110]!r}")
    print(f"\n({time.perf_counter() - started:.0f} s)")
    if args.json_out:
        args.json_out.write_text(json.dumps({"sets": sets, "protected": prot["table"], "attributes": attr["table"],
                                             "locomo": {k: v for k, v in fp.items() if k != "flagged"},
                                             "loso": loso, "public": public}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
