"""Exactness of the rule regexes' prefilters (issue 18, point 4), in full.

``tests/test_prefilter.py`` compares samples; this compares everything: (1) every prefiltered
pattern of the rule modules (:data:`memfold.window.constraints.RULE_MODULES`: :mod:`memfold.window.directives`
and every later ``directives_*`` module), :mod:`memfold.window.constraints` and
:mod:`memfold.window.secrets` against the pattern itself (``search``, and ``match``/``fullmatch``
where they are gated) on every text of ``tests/data/*.json`` and every LoCoMo dev turn
(``../shared/data/locomo/locomo_dev.json``) and their sentences, each turn read first as the
extractor reads it; (2) the constraint extractor's output (every proposal and withdrawal, all
their fields) and the secret detector's spans on every one of those texts, with
the prefilters and without (every pattern unwrapped, per-text caches emptied). Prints the counts
of identical and different answers and the extractor CPU per text both ways.
Run: ``python bench/prefilter_exactness.py``.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent / "tests"
LOCOMO = HERE.parent.parent / "shared" / "data" / "locomo" / "locomo_dev.json"


def _load_test_helpers():
    spec = importlib.util.spec_from_file_location("_prefilter_tests", TESTS / "test_prefilter.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    tp = _load_test_helpers()
    from memfold.window import constraints, directives, prefilter, secrets

    phrasings = [t for group in tp._texts(TESTS / "data") for t in group]
    locomo = []
    if LOCOMO.exists():
        data = json.loads(LOCOMO.read_text(encoding="utf-8"))
        locomo = [turn["text"] for sample in data for key, session in sample["conversation"].items()
                  if key.startswith("session_") and isinstance(session, list) for turn in session]
    texts = list(dict.fromkeys(phrasings + locomo))
    print(f"{len(phrasings):,} phrasing texts, {len(locomo):,} LoCoMo turns ({len(texts):,} distinct)")

    groups = {"rules": tp._prefiltered_patterns_of((*constraints.RULE_MODULES, constraints)),
              secrets.__name__: tp._prefiltered_patterns_of((secrets,))}
    same = diff = 0
    for text in texts:
        parts = [text] + [s for s in re.split(r"(?<=[.!?])\s+", text) if s != text]
        for group, patterns in groups.items():
            prefilter.read(text, group)
            for part in parts:
                for name, pattern in patterns:
                    methods = ("search", "match", "fullmatch") if "match" in pattern._gated else ("search",)
                    for method in methods:
                        got, want = getattr(pattern, method)(part), getattr(pattern.unfiltered, method)(part)
                        if (got and got.span()) == (want and want.span()):
                            same += 1
                        else:
                            diff += 1
                            print("DIFFERENT", name, method, repr(part[:80]))
    print(f"pattern calls: {same:,} identical, {diff:,} different")

    def extract_all():
        ex = constraints.RuleConstraintExtractor()
        out, t0 = [], time.thread_time()
        for t in texts:
            e = ex.extract(t)
            out.append(([repr(p) for p in e.proposals], [repr(w) for w in e.withdrawals]))
        return out, (time.thread_time() - t0) / len(texts) * 1e3

    def detect_all():
        out = []
        for start in range(0, len(texts), 40):
            detector = secrets.SecretDetector()
            out += [detector.detect({"role": "user" if i % 2 == 0 else "assistant", "content": t})
                    for i, t in enumerate(texts[start:start + 40])]
        return out

    got, cpu_with = extract_all()
    got_spans = detect_all()
    with tp.without_prefilters():
        want, cpu_without = extract_all()
        want_spans = detect_all()
    n_same = sum(a == b for a, b in zip(got, want))
    found = sum(1 for p, w in want if p or w)
    print(f"extractor: {n_same:,} identical, {len(texts) - n_same:,} different "
          f"({found:,} texts with proposals or withdrawals); CPU {cpu_with:.3f} ms/text with prefilters, "
          f"{cpu_without:.3f} without")
    s_same = sum(a == b for a, b in zip(got_spans, want_spans))
    print(f"secret detector: {s_same:,} identical, {len(texts) - s_same:,} different "
          f"({sum(1 for s in want_spans if s):,} texts with spans)")
    sys.exit(1 if diff or n_same != len(texts) or s_same != len(texts) else 0)


if __name__ == "__main__":
    main()
