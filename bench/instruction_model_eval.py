"""The instruction model measured honestly: rules alone against rules + model (issue 20, point 10).

For every phrasing set trained on (``bench/train_instruction_model.py``'s ``TRAIN_SETS``; the
original set's halves count as two sets):

* in-sample: the shipped configuration (every rule family on, the model trained on every set);
* LOSO (leave-one-set-out): the rule families only that set motivated turned off
  (``bench/phrasing_retention.py --loso``) and, for rules + model, a model trained on every other
  set: the figure that predicts a blind set's;
* near misses (no record wanted) are items like the others and also shown on their own.

LoCoMo small talk (3,435 turns): the protected records the extractor proposes, rules alone and
rules + model, where the model for each conversation is trained without that conversation
(leave-one-conversation-out, LOCO); the goal is at most 0.1%.

Support traffic and word salad (round 13): the records and acts the model adds (beside the rules')
on the turns of the STAR / ABCD dialogues held out of training (id divisible by 5), beside the
same on the training dialogues (in-sample); and on word salad of the training seed (in-sample)
and of :data:`train_instruction_model.SALAD_EVAL_SEED` (never trained on). Also the model's cost
per sentence.

Usage::

    python bench/instruction_model_eval.py [--sets a,b] [--no-loso] [--no-loco] [--no-support] [--json OUT] [--failures]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import phrasing_retention as pr  # noqa: E402
import train_instruction_model as tm  # noqa: E402

from memfold.memory import families  # noqa: E402
from memfold.window import instruction_model as im  # noqa: E402
from memfold.window.constraints import RuleConstraintExtractor, sentences  # noqa: E402


def fold_items(name: str) -> list[dict]:
    if name in ("tune", "heldout"):
        prot, _ = pr.load_set("original")
        return [i for i in prot if i["split"] == name]
    prot, _ = pr.load_set(name)
    return prot


def measure(items: list[dict], model: im.InstructionModel | None, off: list[str]) -> list[dict]:
    with families.off(off), im.using(model):
        return [pr.check_protected(i) for i in items]


def summary(rows: list[dict]) -> dict[str, list[int]]:
    inst = [r for r in rows if r["group"] != "near_miss"]
    near = [r for r in rows if r["group"] == "near_miss"]
    return {"instructions": [sum(r["retained"] for r in inst), len(inst)],
            "near_miss": [sum(r["retained"] for r in near), len(near)],
            "all": [sum(r["retained"] for r in rows), len(rows)]}


def locomo_records(model: im.InstructionModel | None, convs: set[str] | None = None) -> tuple[int, int, list]:
    ex = RuleConstraintExtractor(model=model is not None)
    n = made = 0
    flagged = []
    with im.using(model):
        for s in json.loads(pr.LOCOMO.read_text(encoding="utf-8")):
            if convs is not None and s["sample_id"] not in convs:
                continue
            for k, v in s["conversation"].items():
                if k.startswith("session_") and isinstance(v, list):
                    for t in v:
                        got = ex.extract(t["text"])
                        n += 1
                        if got.proposals:
                            made += len(got.proposals)
                            flagged.append((s["sample_id"], [p.kind for p in got.proposals], [p.rule for p in got.proposals]))
    return made, n, flagged


def model_additions(model: im.InstructionModel, texts: list[str]) -> tuple[int, int, list[str]]:
    """``(records and acts the model adds, texts with one, a few of those texts)`` over ``texts``."""
    on = RuleConstraintExtractor(model=True)
    made = hit = 0
    shown: list[str] = []
    with im.using(model):
        for t in texts:
            got = on.extract(t)
            n = sum(p.rule == "model" for p in got.proposals) + sum(w.action.startswith("model_") for w in got.withdrawals)
            made += n
            hit += n > 0
            if n and len(shown) < 10:
                shown.append(t[:100])
    return made, hit, shown


def support_turns(held: bool) -> list[str]:
    pick = tm.support_held if held else tm.support_trained
    return [t for _src, did, texts in tm.support_dialogues() if pick(did) for t in texts]


def cost(model: im.InstructionModel) -> dict[str, float]:
    """The model's CPU per sentence (predict alone), and the extractor's per LoCoMo turn with and without it."""
    sents = [x for s in json.loads(pr.LOCOMO.read_text(encoding="utf-8"))[:2]
             for k, v in s["conversation"].items() if k.startswith("session_") and isinstance(v, list)
             for t in v for x in sentences(t["text"])]
    best = []
    for _ in range(5):
        t0 = time.process_time()
        for s in sents:
            model.predict(s)
        best.append((time.process_time() - t0) / len(sents) * 1e6)
    texts = [t["text"] for s in json.loads(pr.LOCOMO.read_text(encoding="utf-8"))
             for k, v in s["conversation"].items() if k.startswith("session_") and isinstance(v, list) for t in v]
    turn = {True: [], False: []}
    with im.using(model):
        for _ in range(3):  # the extractor per LoCoMo turn, model on and off taking turns
            for on in (False, True):
                ex = RuleConstraintExtractor(model=on)
                t0 = time.process_time()
                for t in texts:
                    ex.extract(t)
                turn[on].append((time.process_time() - t0) / len(texts) * 1e6)
    return {"sentences": len(sents), "us_per_sentence_min": min(best), "us_per_sentence_median": float(np.median(best)),
            "turns": len(texts), "extract_us_per_turn_rules": min(turn[False]), "extract_us_per_turn_model": min(turn[True])}


def _pct(c: list[int]) -> str:
    return f"{c[0] / c[1]:6.1%} ({c[0]}/{c[1]})" if c[1] else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=",".join(tm.TRAIN_SETS))
    parser.add_argument("--no-loso", action="store_true")
    parser.add_argument("--no-loco", action="store_true")
    parser.add_argument("--no-support", action="store_true", help="Skip the support-traffic and word-salad figures.")
    parser.add_argument("--failures", action="store_true", help="List LOSO rules+model failures and LoCoMo records.")
    parser.add_argument("--json", dest="json_out", type=Path)
    parser.add_argument("--dim", type=int, default=tm.DIM, help="Try another configuration (not the shipped one).")
    parser.add_argument("--char-n", type=int, default=tm.CHAR_N)
    parser.add_argument("--c", type=float, default=tm.C)
    parser.add_argument("--threshold", type=float, default=tm.THRESHOLD)
    args = parser.parse_args(argv)
    kw = {"dim": args.dim, "char_n": args.char_n, "c": args.c, "threshold": args.threshold}
    import memfold.consolidation.extractors.attributes  # noqa: F401  (register its families)
    import memfold.window.directives  # noqa: F401

    started = time.perf_counter()
    sets = [s for s in args.sets.split(",") if s]
    assert not any(tm.BLIND in s for s in sets), f"{tm.BLIND} is blind this round"
    full = tm.shipped_form(tm.build(**kw))
    out: dict = {"config": kw, "sets": {}}
    print(f"config: {kw}")
    print(f"{'set':9}{'rules in':>20}{'rules+model in':>20}{'rules LOSO':>20}{'rules+model LOSO':>20}"
          f"{'near miss LOSO r / r+m':>26}")
    tot = {k: [0, 0] for k in ("rin", "min", "rlo", "mlo", "nr", "nm")}
    fails = []
    for name in sets:
        items = fold_items(name)
        off = families.motivated_only_by(name)
        r_in = summary(measure(items, None, []))
        m_in = summary(measure(items, full, []))
        row = {"rules_in": r_in, "model_in": m_in}
        if not args.no_loso:
            held = tm.shipped_form(tm.build([s for s in tm.TRAIN_SETS if s != name], **kw))
            r_lo = summary(measure(items, None, off))
            rows = measure(items, held, off)
            m_lo = summary(rows)
            fails += [(name, r["id"], r["why"]) for r in rows if not r["retained"]]
            row.update(rules_loso=r_lo, model_loso=m_lo)
        else:
            r_lo = m_lo = {"instructions": [0, 0], "near_miss": [0, 0]}
        out["sets"][name] = row
        for key, val in (("rin", r_in), ("min", m_in), ("rlo", r_lo), ("mlo", m_lo)):
            tot[key][0] += val["instructions"][0]
            tot[key][1] += val["instructions"][1]
        for key, val in (("nr", r_lo), ("nm", m_lo)):
            tot[key][0] += val["near_miss"][0]
            tot[key][1] += val["near_miss"][1]
        print(f"{name:9}{_pct(r_in['instructions']):>20}{_pct(m_in['instructions']):>20}"
              f"{_pct(r_lo['instructions']):>20}{_pct(m_lo['instructions']):>20}"
              f"{_pct(r_lo['near_miss']):>13}{_pct(m_lo['near_miss']):>13}", flush=True)
    print(f"{'all':9}{_pct(tot['rin']):>20}{_pct(tot['min']):>20}{_pct(tot['rlo']):>20}{_pct(tot['mlo']):>20}"
          f"{_pct(tot['nr']):>13}{_pct(tot['nm']):>13}")
    out["total"] = tot
    if not args.no_loco:
        r_made, n, _ = locomo_records(None)
        in_made, _, in_flag = locomo_records(full)
        loco_made, loco_flag = 0, []
        for conv in sorted({s["sample_id"] for s in json.loads(pr.LOCOMO.read_text(encoding="utf-8"))}):
            held = tm.shipped_form(tm.build(locomo_exclude=[conv], **kw))
            made, _, flag = locomo_records(held, {conv})
            loco_made += made
            loco_flag += flag
        print(f"LoCoMo false protected records: rules {r_made}/{n} = {r_made / n:.3%}; rules+model in-sample "
              f"{in_made}/{n} = {in_made / n:.3%}; rules+model LOCO {loco_made}/{n} = {loco_made / n:.3%} (goal <= 0.1%)")
        out["locomo"] = {"turns": n, "rules": r_made, "model_in": in_made, "model_loco": loco_made}
        if args.failures:
            for f in loco_flag:
                print("  LOCO record:", f)
    if not args.no_support:
        pos = [(s_, k) for s_, k in tm.phrasing_examples(tm.TRAIN_SETS) if k != "none"]
        out["support"] = {}
        for label, texts in (("support turns, training dialogues (in-sample)", support_turns(False)),
                             ("support turns, held-out dialogues", support_turns(True)),
                             (f"word salad, seed {tm.SALAD_SEED} (trained on)", tm.word_salad(pos)),
                             (f"word salad, seed {tm.SALAD_EVAL_SEED} (never trained on)",
                              tm.word_salad(pos, seed=tm.SALAD_EVAL_SEED))):
            made, hit, shown = model_additions(full, texts)
            print(f"{label}: model adds {made} records/acts in {hit} of {len(texts)} texts = {hit / len(texts):.3%}")
            out["support"][label] = {"made": made, "texts_with": hit, "texts": len(texts)}
            if args.failures:
                for t in shown:
                    print("   ", t)
    c = cost(full)
    print(f"model cost: {c['us_per_sentence_min']:.1f} us/sentence (min of 5), median {c['us_per_sentence_median']:.1f}"
          f" over {c['sentences']} LoCoMo sentences; weights file {len(full.to_bytes())} bytes")
    print(f"extractor CPU per LoCoMo turn ({c['turns']} turns, best of 3 alternating): rules "
          f"{c['extract_us_per_turn_rules']:.0f} us, rules+model {c['extract_us_per_turn_model']:.0f} us "
          f"(+{c['extract_us_per_turn_model'] - c['extract_us_per_turn_rules']:.0f} us)")
    out["cost"] = c
    if args.failures:
        for f in fails:
            print("  LOSO miss:", f)
    print(f"({time.perf_counter() - started:.0f} s)")
    if args.json_out:
        args.json_out.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
