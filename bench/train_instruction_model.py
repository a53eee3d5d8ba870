"""Train the instruction model (``window/instruction_model.bin``) from the phrasing sets and LoCoMo.

Inputs, named:

* the protected phrasing sets in ``tests/data`` listed in :data:`TRAIN_SETS` (``fresh8``, the blind
  set of round 11, is never read): each message's sentences, labelled with the kind of the record
  the item expects (the sentences holding its text), ``revoke`` / ``satisfy`` / ``plan_reset`` for
  the acts, ``none`` for near misses and the other sentences of a message;
* LoCoMo small talk, ``../shared/data/locomo/locomo_dev.json`` (every turn's sentences, ``none``):
  only weights derived from them ship, never their text.

The model is a multinomial logistic regression (scikit-learn, ``lbfgs``, fixed settings) over the
hashed features of :func:`memfold.window.instruction_model.features`; its weights are written as
int8, so the file is byte-identical on every run with the same inputs.

Usage::

    python bench/train_instruction_model.py            # write window/instruction_model.bin
    python bench/train_instruction_model.py --check    # exit 1 when the shipped file differs
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from memfold.window import instruction_model as im
from memfold.window.constraints import sentences

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo_dev.json"
#: the phrasing sets trained on ("tune" and "heldout" are the original set's halves)
TRAIN_SETS = ("tune", "heldout", "fresh", "fresh2", "r4own", "r4own2", "fresh3", "r5own", "r5own2", "fresh4",
              "fresh5", "fresh6", "fresh7")
DIM = 1 << 15
CHAR_N = 4
C = 4.0
#: the probability a class other than none needs (chosen on LoCoMo leave-one-conversation-out)
THRESHOLD = 0.95
LOCOMO_WEIGHT = 5.0


def set_items(name: str) -> list[dict[str, Any]]:
    """The protected items of one training set (the original file's two halves are two sets)."""
    if name in ("tune", "heldout"):
        items = json.loads((DATA / "protected_paraphrases.json").read_text(encoding="utf-8"))["items"]
        return [i for i in items if i.get("split") == name]
    if "fresh8" in name:
        raise ValueError("fresh8 is the blind set of round 11: never trained on")
    return json.loads((DATA / f"protected_paraphrases_{name}.json").read_text(encoding="utf-8"))["items"]


def _overlaps(a: str, b: str) -> bool:
    return a in b or b in a


def item_examples(item: dict[str, Any]) -> list[tuple[str, str]]:
    """``(sentence, class)`` pairs of one phrasing item's message."""
    if item.get("role", "user") != "user":
        return []
    exp = item["expect"]
    sents = sentences(item["text"])
    group = item.get("group")
    if exp.get("none"):
        return [(s, "none") for s in sents]
    if group == "plan_reset":
        return [(s, "plan_reset") for s in sents]
    if group in ("revoke", "satisfy"):
        return [(s, group) for s in sents]
    if "record" in exp:
        want = exp["record"]["contains"]
        kind = exp["record"]["kind"]
        if kind not in im.RECORD_KINDS:
            return []
        hit = [s for s in sents if _overlaps(s, want)]
        return [(s, kind if s in hit else "none") for s in sents] if hit else [(s, kind) for s in sents]
    return []


def setup_examples(item: dict[str, Any], rules: Any) -> list[tuple[str, str]]:
    """``(sentence, class)`` pairs of an item's setup turns that it expects protected (standing
    instructions whose kind the set leaves open): the rules' kind where they read one, else the kind the act needs (a
    record a satisfaction releases waits: ``prerequisite``; others ``constraint``)."""
    out = []
    target = (item["expect"].get("withdrawn") or {}).get("contains", "")
    protected = [w["contains"] for w in item["expect"].get("setup", [])]
    for spec in item.get("setup", []):
        if not isinstance(spec, str) or not any(_overlaps(w, spec) for w in protected):
            continue  # only the setup turns the item expects protected (not its small talk)
        got = rules.extract(spec).proposals
        for s in sentences(spec):
            kinds = [p.kind for p in got if _overlaps(p.text, s)]
            if kinds:
                kind = kinds[0]
            elif item.get("group") == "satisfy" and target and _overlaps(s, target):
                kind = "prerequisite"
            elif item.get("group") == "plan_reset" and target and _overlaps(s, target):
                kind = "policy_state"
            else:
                kind = "constraint"
            out.append((s, kind))
    return out


@lru_cache(maxsize=None)
def _set_examples(name: str) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    from memfold.window.constraints import RuleConstraintExtractor

    rules = RuleConstraintExtractor(model=False)
    items = set_items(name)
    return (tuple(ex for item in items for ex in item_examples(item)),
            tuple(ex for item in items for ex in setup_examples(item, rules)))


def phrasing_examples(names: Iterable[str]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for name in names:
        messages, setups = _set_examples(name)
        out += messages
        for ex in setups:
            if ex[0] not in seen:  # the same setup recurs across items and sets
                seen.add(ex[0])
                out.append(ex)
    return out


def locomo_examples(exclude: Iterable[str] = (), path: Path = LOCOMO) -> list[tuple[str, str]]:
    """Every LoCoMo turn's sentences as ``none``, but for the conversations in ``exclude``."""
    skip = set(exclude)
    return [ex for conv, examples in _locomo(str(path)) if conv not in skip for ex in examples]


@lru_cache(maxsize=None)
def _locomo(path: str) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    out = []
    for s in json.loads(Path(path).read_text(encoding="utf-8")):
        examples = [(x, "none") for k, v in s["conversation"].items() if k.startswith("session_") and isinstance(v, list)
                    for t in v for x in sentences(t["text"])]
        out.append((s["sample_id"], tuple(examples)))
    return tuple(out)


@lru_cache(maxsize=200_000)
def _features(sentence: str, dim: int, char_n: int) -> tuple[int, ...]:
    return tuple(im.features(sentence, dim, char_n))


def train(examples: list[tuple[str, str]], *, dim: int = DIM, char_n: int = CHAR_N, c: float = C,
          threshold: float = THRESHOLD, locomo_count: int = 0) -> im.InstructionModel:
    """Fit the model on ``examples`` (the last ``locomo_count`` of them are LoCoMo's)."""
    from scipy.sparse import csr_matrix
    from sklearn.linear_model import LogisticRegression

    index = {c_: n for n, c_ in enumerate(im.CLASSES)}
    rows, cols = [], []
    for n, (s, _) in enumerate(examples):
        f = _features(s, dim, char_n)
        rows += [n] * len(f)
        cols += f
    x = csr_matrix((np.ones(len(cols)), (rows, cols)), shape=(len(examples), dim))
    y = np.array([index[k] for _, k in examples])
    counts = np.bincount(y, minlength=len(im.CLASSES)).astype(float)
    w = np.array([len(y) / (len(im.CLASSES) * max(counts[k], 1.0)) for k in y])
    if locomo_count:
        w[-locomo_count:] *= LOCOMO_WEIGHT
    clf = LogisticRegression(C=c, max_iter=500, tol=1e-4)
    clf.fit(x, y, sample_weight=w)
    weights = np.zeros((dim, len(im.CLASSES)))
    bias = np.zeros(len(im.CLASSES))
    for j, k in enumerate(clf.classes_):
        weights[:, k] = clf.coef_[j]
        bias[k] = clf.intercept_[j]
    for k in range(len(im.CLASSES)):
        if k not in clf.classes_:
            bias[k] = -30.0
    return im.InstructionModel(weights, bias, threshold, char_n)


def shipped_form(model: im.InstructionModel) -> im.InstructionModel:
    """The model as the package reads it back (int8 weights)."""
    return im.InstructionModel.from_bytes(model.to_bytes())


def build(sets: Iterable[str] = TRAIN_SETS, locomo_exclude: Iterable[str] = (), **kw: Any) -> im.InstructionModel:
    pos = phrasing_examples(sets)
    neg = locomo_examples(locomo_exclude)
    return train(pos + neg, locomo_count=len(neg), **kw)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="Compare with the shipped file instead of writing it.")
    parser.add_argument("--out", type=Path, default=im.WEIGHTS_PATH)
    args = parser.parse_args(argv)
    data = build().to_bytes()
    if args.check:
        same = args.out.exists() and args.out.read_bytes() == data
        print(f"{args.out}: {'identical' if same else 'DIFFERENT'} ({len(data)} bytes)")
        return 0 if same else 1
    args.out.write_bytes(data)
    print(f"wrote {args.out} ({len(data)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
