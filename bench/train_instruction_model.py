"""Train the instruction model (``window/instruction_model.bin``) from the phrasing sets and LoCoMo.

Inputs, named:

* the protected phrasing sets in ``tests/data`` listed in :data:`TRAIN_SETS` (the blind set of round 16,
  ``fresh13``, is never read: :func:`set_items` refuses it; ``fresh10``, round 13's, is trained on since round 14,
  ``fresh11``, round 14's, since round 15, ``fresh12``, round 15's, since round 16; ``train15a`` and ``train15b``,
  480 items each, were written in round 15 for training only, by a helper who read no code): each message's sentences, labelled with the kind of the record
  the item expects (the sentences holding its text), ``revoke`` / ``satisfy`` / ``plan_reset`` for
  the acts, ``none`` for near misses and the other sentences of a message;
* LoCoMo small talk, ``../shared/data/locomo/locomo_dev.json`` (every turn's sentences, ``none``);
* support traffic (round 13), ``none``: the user and wizard turns of STAR
  (``../shared/data/star/dialogues.tar.xz``, all 6,652 dialogues) and the customer and agent turns
  of ABCD (``../shared/data/abcd/abcd_sample.json``), split by dialogue: a dialogue whose id is
  divisible by 5 is held out (never trained on; :func:`support_examples` ``held=True`` gives it
  to the benches), ids 1 and 2 modulo 5 are trained on. A support sentence is dropped, not labelled, when the rules extractor makes a
  record or a withdrawal of it or it carries a standing-instruction cue (:data:`_CUE`: "never",
  "always", "from now on", "don't call" ...): a customer's "please don't call me again" is a
  standing instruction, not a negative;
* word salad (round 13), ``none``: seeded random sequences of support vocabulary (the most common
  words of the training support sentences) and of words from the positive training sentences,
  with and without an imperative verb or a cue word (:func:`word_salad`; seed
  :data:`SALAD_SEED`; the benches measure salad of another seed).

Only weights derived from these ship, never their text.

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
import random
import re
import sys
import tarfile
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from memfold.window import instruction_model as im
from memfold.window.constraints import sentences

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo_dev.json"
STAR = ROOT.parent / "shared" / "data" / "star" / "dialogues.tar.xz"
ABCD = ROOT.parent / "shared" / "data" / "abcd" / "abcd_sample.json"
#: the blind set no script here may read (round 16)
BLIND = "fresh13"
#: the phrasing sets trained on ("tune" and "heldout" are the original set's halves)
TRAIN_SETS = ("tune", "heldout", "fresh", "fresh2", "r4own", "r4own2", "fresh3", "r5own", "r5own2", "fresh4",
              "fresh5", "fresh6", "fresh7", "fresh8", "fresh9", "fresh10", "fresh11", "fresh12", "train15a", "train15b")
DIM = 1 << 15
CHAR_N = 4
C = 4.0
#: the probability a class other than none needs, chosen on LoCoMo leave-one-conversation-out
#: (round 13, with support negatives and salad: 0.95 gave 7 false records of 3,435 turns, 0.96 5,
#: 0.97 4, 0.98 2, 0.99 1, the rules' one included; the goal is at most 3): the lowest that meets
#: it, since each step up loses standing instructions (fresh8 + fresh9 left out of training:
#: 544, 539, 533, 524 of 676 at 0.95, 0.97, 0.98, 0.99); re-chosen by the same rule in round 15 with
#: fresh11, train15a and train15b trained on: 0.95-0.97 gave 4 records by LOCO, 0.98-0.99 2 (the rules' one
#: included; /work/r15notes/r15acts/loco.py), so 0.98 stays
THRESHOLD = 0.98
LOCOMO_WEIGHT = 5.0
#: the weight of a support sentence and of a word salad, beside a phrasing-set sentence's 1 (chosen
#: with fresh8 and fresh9 left out of training: their retention, held-out support records and
#: salad of another seed; 10 against 1 and 3: -1 item of 676, half the salad records)
SUPPORT_WEIGHT = 1.0
SALAD_WEIGHT = 10.0


def set_items(name: str) -> list[dict[str, Any]]:
    """The protected items of one training set (the original file's two halves are two sets)."""
    if name in ("tune", "heldout"):
        items = json.loads((DATA / "protected_paraphrases.json").read_text(encoding="utf-8"))["items"]
        return [i for i in items if i.get("split") == name]
    if BLIND in name:
        raise ValueError(f"{BLIND} is the blind set of round 16: never read, never trained on")
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


#: a support sentence carrying one of these may be a standing instruction the rules miss ("please
#: don't call me again", "from now on use my work email"): it is left out of the negatives
_CUE = re.compile(r"\b(?:never|always|from now on|going forward|in (?:the )?future|any ?more|ever again|"
                  r"(?:do not|don't|dont|stop|no more|quit)\s+(?:\w+ing|call|email|text|send|contact|book|use|"
                  r"charge|share|ring|message|bother)|make sure|remember to|only (?:ever )?(?:use|call|email|"
                  r"send|book|contact))\b", re.I)


def support_held(dialogue_id: int) -> bool:
    """A support dialogue whose id is divisible by 5 is held out: never trained on."""
    return dialogue_id % 5 == 0


def support_trained(dialogue_id: int) -> bool:
    """The support dialogues trained on: ids 1 and 2 modulo 5 (2 in 5; the other 2 in 5 are left
    unused, to keep a retrain, and the test that checks the shipped file, cheap)."""
    return dialogue_id % 5 in (1, 2)


@lru_cache(maxsize=None)
def support_dialogues(star: str = str(STAR), abcd: str = str(ABCD)) -> tuple[tuple[str, int, tuple[str, ...]], ...]:
    """``(source, dialogue id, turn texts)`` of every STAR dialogue (user and wizard turns) and
    every ABCD sample dialogue (customer and agent turns), in id order."""
    out = []
    if Path(star).exists():
        with tarfile.open(star) as tar:
            for member in tar:
                if not member.isfile() or not member.name.endswith(".json"):
                    continue
                d = json.load(tar.extractfile(member))  # type: ignore[arg-type]
                texts = tuple(e["Text"] for e in d["Events"] if e.get("Agent") in ("User", "Wizard")
                              and e.get("Action") in ("utter", "pick_suggestion") and isinstance(e.get("Text"), str))
                out.append(("star", int(d["DialogueID"]), texts))
    if Path(abcd).exists():
        for d in json.loads(Path(abcd).read_text(encoding="utf-8")):
            texts = tuple(t for who, t in d["original"] if who in ("customer", "agent"))
            out.append(("abcd", int(d["convo_id"]), texts))
    return tuple(sorted(out))


@lru_cache(maxsize=None)
def _support_sentences(held: bool) -> tuple[tuple[str, ...], int, int]:
    """The support sentences of the training (or held-out) dialogues kept as negatives: unique,
    in first-seen order; also how many were dropped (a rule's record or withdrawal, a cue)."""
    from memfold.window.constraints import RuleConstraintExtractor

    rules = RuleConstraintExtractor(model=False)
    seen: set[str] = set()
    kept: list[str] = []
    by_rules = by_cue = 0
    for _src, did, texts in support_dialogues():
        if not (support_held(did) if held else support_trained(did)):
            continue
        for text in texts:
            for sent in sentences(text):
                if sent in seen:
                    continue
                seen.add(sent)
                if _CUE.search(sent):
                    by_cue += 1
                    continue
                got = rules.extract(sent)
                if got.proposals or got.withdrawals:
                    by_rules += 1
                    continue
                kept.append(sent)
    return tuple(kept), by_rules, by_cue


def support_examples(held: bool = False) -> list[tuple[str, str]]:
    """The support negatives (``none``) of the training dialogues, or of the held-out ones."""
    return [(s, "none") for s in _support_sentences(held)[0]]


_WORD = re.compile(r"[a-z]+")
#: verbs and cue words a salad may carry (so the model learns that a cue alone is no instruction)
SALAD_VERBS = ("never", "always", "please", "don't", "do not", "make sure", "stop", "keep", "send", "call", "email",
               "book", "cancel", "check", "confirm", "update", "ship", "hold", "approve", "use", "avoid",
               "remember to", "must", "only", "from now on")
SALAD_SEED = 13
#: the seed of the salad the benches measure (never trained on)
SALAD_EVAL_SEED = 2027
SALAD_COUNT = 4000


ABCD_POLICY = ABCD.with_name("guidelines.json")


@lru_cache(maxsize=None)
def support_vocabulary(size: int = 400) -> tuple[str, ...]:
    """The ``size`` most common words (3+ letters) of the training support sentences, and as many
    of ABCD's agent manual (``guidelines.json``: an online store's refunds, orders, shipping and
    accounts; its text is read for its words only, never as examples)."""
    counts = Counter(w for s in _support_sentences(False)[0] for w in _WORD.findall(s.lower()) if len(w) >= 3)
    out = {w for w, _ in sorted(counts.items(), key=lambda x: (-x[1], x[0]))[:size]}
    if ABCD_POLICY.exists():
        policy = Counter(w for w in _WORD.findall(ABCD_POLICY.read_text(encoding="utf-8").lower()) if len(w) >= 3)
        out |= {w for w, _ in sorted(policy.items(), key=lambda x: (-x[1], x[0]))[:size]}
    return tuple(sorted(out))


def word_salad(positive: Iterable[tuple[str, str]], seed: int = SALAD_SEED, count: int = SALAD_COUNT) -> list[str]:
    """``count`` deterministic word salads: random sequences of support words, of words from the
    ``positive`` ``(sentence, class)`` pairs (all classes, or the sentences of one class: the
    words that class's records use), or both; half of them with a verb or cue word
    (:data:`SALAD_VERBS`) at the start or anywhere, some with a number glued to a word ("order3")
    or an end mark."""
    rng = random.Random(seed)
    support = list(support_vocabulary())
    positive = list(positive)
    # word lists with repeats: a word is drawn as often as the sentences use it ("approved" in
    # approvals), so a salad carries the words the model weighs most
    pos = sorted(w for s, _ in positive for w in _WORD.findall(s.lower()) if len(w) >= 3)
    by_class = {k: sorted(w for s, k2 in positive if k2 == k for w in _WORD.findall(s.lower()) if len(w) >= 3)
                for k in sorted({k for _, k in positive})}
    classes = sorted(by_class)
    out = []
    for i in range(count):
        mode = i % 8
        if mode in (6, 7):
            cls = by_class[rng.choice(classes)]
            pool = cls if mode == 6 else cls + support
        else:
            pool = (support, pos, support + pos)[mode % 3]
        words = [rng.choice(pool) for _ in range(rng.randint(3, 24))]
        if rng.random() < 0.2:
            k = rng.randrange(len(words))
            words[k] += str(rng.randint(0, 2000))
        if mode in (3, 4, 5, 7):
            verb = rng.choice(SALAD_VERBS)
            words.insert(0 if rng.random() < 0.5 else rng.randrange(len(words) + 1), verb)
        text = " ".join(words)
        if rng.random() < 0.5:
            text = text[0].upper() + text[1:]
        out.append(text + rng.choice(("", "", ".", "!", "?")))
    return out


@lru_cache(maxsize=200_000)
def _features(sentence: str, dim: int, char_n: int) -> tuple[int, ...]:
    return tuple(im.features(sentence, dim, char_n))


def train(examples: list[tuple[str, str]], *, dim: int = DIM, char_n: int = CHAR_N, c: float = C,
          threshold: float = THRESHOLD, locomo_count: int = 0, extra_weights: Iterable[float] = ()) -> im.InstructionModel:
    """Fit the model on ``examples`` (the last ``locomo_count`` of them are LoCoMo's; the first
    ones are weighted by ``extra_weights``, one factor each, as far as it goes)."""
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
    extra = np.asarray(list(extra_weights), dtype=float)
    if len(extra):
        w[:len(extra)] *= extra
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


def build(sets: Iterable[str] = TRAIN_SETS, locomo_exclude: Iterable[str] = (), *, support: bool = True,
          salad: bool = True, **kw: Any) -> im.InstructionModel:
    """The model trained on ``sets``, LoCoMo (less ``locomo_exclude``), the training support
    dialogues and word salad (built from the support words and ``sets``' own positive words)."""
    pos = phrasing_examples(sets)
    sup = support_examples() if support else []
    sal = [(t, "none") for t in word_salad([(s, k) for s, k in pos if k != "none"])] if salad else []
    neg = locomo_examples(locomo_exclude)
    weights = [1.0] * len(pos) + [SUPPORT_WEIGHT] * len(sup) + [SALAD_WEIGHT] * len(sal)
    return train(pos + sup + sal + neg, locomo_count=len(neg), extra_weights=weights, **kw)


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
