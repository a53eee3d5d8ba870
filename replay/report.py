"""The replay report: what a replay did, read back from the database it wrote (issue 9, point 1).

Every count comes from the file (turns, cards, records, events), not from the loop's own
tallies, so a test can check the report against the database and an operator can trust it.
Timings and compiled-context sizes are the loop's measurements (:class:`ReplayRun`).

Evaluations, when the source carries gold data:

* **current facts** (STAR, the generated sample): memfold's *active* semantic facts against the
  gold current value of each key. STAR keys are compared only where memfold has a customer slot
  for them (:data:`STAR_KEY_MAP`: FullName, AccountNumber, DateOfBirth); the other STAR query
  keys (restaurant, weather, party size, ...) describe requests, not the customer. Values
  compare case-insensitively on letters and digits. ``stale`` counts active facts of those keys
  whose value is not the gold one.
* **secrets** (STAR): every gold secret value (PINs, security answers) is looked for, as a
  whole word, in semantic facts of any status, card texts and protected records. Values that
  also occur inside a non-secret value the agent queried (the surname 'Jones' of a security
  answer inside 'Tyler Jones'; an account number or a date of birth the wizard once typed into
  the PIN or security-answer field) or that are the placeholder ``null`` are left out of the
  check, since finding them proves nothing; the report lists them under ``excluded``.
* **evidence** (LoCoMo): every evidence turn must be reachable from the final catalog through
  ``expand`` (turn refs directly, card refs down to their verbatim turns); evidence recall@10
  of the recall tools' ``search`` on the final state, strict (turn hits) and with a card hit
  counting for the turns it covers.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .stats import ReplayRun, median, percentile

if TYPE_CHECKING:  # pragma: no cover
    from .. import MemFold

#: STAR query keys that name the customer -> memfold's slot keys (see the module docstring)
STAR_KEY_MAP = {"FullName": "user.name", "AccountNumber": "user.account_id", "DateOfBirth": "user.date_of_birth"}
RECALL_K = 10


def _norm(value: str) -> str:
    return re.sub(r"[^a-z0-9]", "", str(value).lower())


@dataclass
class ReplayReport:
    """The figures of one replay: ``figures`` (flat, JSON-ready) plus optional evaluations."""

    figures: dict[str, Any]
    facts: dict[str, Any] | None = None
    secrets: dict[str, Any] | None = None
    evidence: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (what ``memfold replay --json OUT`` writes)."""
        out: dict[str, Any] = {"figures": self.figures}
        for name in ("facts", "secrets", "evidence"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        out["notes"] = self.notes
        return out

    # -- collecting ----------------------------------------------------------------------------
    @classmethod
    def collect(cls, mf: "MemFold", run: "ReplayRun") -> "ReplayReport":
        """Read the figures from ``mf``'s database after the loop ``run``."""
        storage = mf.storage
        records = storage.records
        turns = storage.archive.count_turns()
        by_depth = {str(d): n for d, n in storage.cards.count_by_depth().items()}
        in_catalog = {str(d): n for d, n in storage.catalog.card_counts_by_depth().items()}
        ratios = [c / t for c, t in zip(run.compiled_tokens, run.transcript_tokens) if t > 0]
        ms = lambda xs, q: round(1000 * (median(xs) if q is None else percentile(xs, q)), 3)  # noqa: E731
        figures = {
            "format": run.source_format,
            "conversations": len(run.conversations),
            "turns": turns,
            "secret_turns": storage.archive.count_turns_labelled("secret"),
            "archive_tokens": storage.archive.total_turn_tokens(),
            "budget_tokens": run.settings.budget_tokens,
            "usable_tokens": run.settings.usable_tokens,
            "compiles": len(run.compiled_tokens),
            "compiled_tokens_median": median(run.compiled_tokens),
            "compiled_tokens_p95": round(percentile(run.compiled_tokens, 0.95), 1),
            "compiled_tokens_max": max(run.compiled_tokens, default=0),
            "ratio_to_transcript_median": round(median(ratios), 4),
            "ratio_to_transcript_p95": round(percentile(ratios, 0.95), 4),
            "ratio_to_transcript_max": round(max(ratios, default=0.0), 4),
            "over_budget": run.over_budget,
            "budget_errors": len(run.budget_errors),
            "folds": by_depth.get("1", 0),
            "rollups": sum(n for d, n in by_depth.items() if d != "1"),
            "cards_per_depth": by_depth,
            "catalog_cards_per_depth": in_catalog,
            "compactions": len(run.compact_seconds),
            "summarizer_failures": storage.archive.count_summarizer_failures(),
            "nightly_passes": run.nightly_passes,
            "consolidation_runs": storage.runs.count_runs(),
            "facts_written": records.count_consolidated("semantic"),
            "rules_written": records.count_consolidated("procedural"),
            "active_facts": records.count_records(type="semantic", status="active"),
            "protected_records": storage.protected.count_all(),
            "superseded": records.count_superseded(),
            "evicted": records.count_records(status="evicted"),
            "summarizer_calls": run.summarizer_calls,
            "summarizer_calls_per_turn": round(run.summarizer_calls / turns, 4) if turns else 0.0,
            "append_ms_median": ms(run.append_seconds, None),
            "append_ms_p95": ms(run.append_seconds, 0.95),
            "compile_ms_median": ms(run.compile_seconds, None),
            "compile_ms_p95": ms(run.compile_seconds, 0.95),
            "compact_ms_median": ms(run.compact_seconds, None),
            "compact_ms_p95": ms(run.compact_seconds, 0.95),
            "consolidation_seconds": round(run.consolidation_seconds, 3),
            "wall_seconds": round(run.wall_seconds, 3),
        }
        figures.update(fold_figures(mf, run.conversations))
        report = cls(figures)
        if run.clamped_times:
            report.notes.append(f"{run.clamped_times} turn time(s) earlier than the turn before were moved up to it")
        if run.budget_errors:
            report.notes.append(f"first budget error: {run.budget_errors[0]}")
        gold = {k: v for c in run.conversations for k, v in c.gold_facts.items()}
        if gold:
            report.facts = current_facts(mf, run.conversations)
        if any(c.secrets for c in run.conversations):
            report.secrets = secret_check(mf, run.conversations)
        if any(c.questions for c in run.conversations):
            report.evidence = evidence_check(mf, run)
        return report

    # -- printing ------------------------------------------------------------------------------
    def rows(self) -> list[tuple[str, str]]:
        """``(figure, value)`` rows of the report table, in print order."""
        f = self.figures
        rows = [
            ("turns (secret-labelled)", f"{f['turns']:,} ({f['secret_turns']:,})"),
            ("conversations", str(f["conversations"])),
            ("archive tokens", f"{f['archive_tokens']:,}"),
            ("budget (usable) tokens", f"{f['budget_tokens']:,} ({f['usable_tokens']:,})"),
            ("compiled-context tokens per call: median / p95 / max",
             f"{f['compiled_tokens_median']:,.0f} / {f['compiled_tokens_p95']:,.0f} / {f['compiled_tokens_max']:,} "
             f"({f['compiles']:,} calls)"),
            ("ratio to the full transcript: median / p95 / max",
             f"{f['ratio_to_transcript_median']:.3f} / {f['ratio_to_transcript_p95']:.3f} / {f['ratio_to_transcript_max']:.3f}"),
            ("contexts over budget / budget errors", f"{f['over_budget']} / {f['budget_errors']}"),
            ("folds (depth-1 cards) / roll-ups", f"{f['folds']:,} / {f['rollups']:,}"),
            ("cards per depth (in final catalog)",
             ", ".join(f"d{d}: {n} ({f['catalog_cards_per_depth'].get(d, 0)})" for d, n in f["cards_per_depth"].items()) or "-"),
            ("compactions / summarizer failures", f"{f['compactions']:,} / {f['summarizer_failures']}"),
            ("nightly consolidation passes", f"{f['nightly_passes']} ({f['consolidation_runs']} runs, {f['consolidation_seconds']:.1f} s)"),
            ("facts written / rules written", f"{f['facts_written']:,} / {f['rules_written']:,}"),
            ("active facts / protected records", f"{f['active_facts']:,} / {f['protected_records']:,}"),
            ("records superseded / evicted", f"{f['superseded']:,} / {f['evicted']:,}"),
            ("summarizer calls per turn", f"{f['summarizer_calls_per_turn']:.3f} ({f['summarizer_calls']:,} calls)"),
            ("ms per append: median / p95", f"{f['append_ms_median']:.2f} / {f['append_ms_p95']:.2f}"),
            ("ms per compile: median / p95", f"{f['compile_ms_median']:.2f} / {f['compile_ms_p95']:.2f}"),
            ("ms per compaction: median / p95", f"{f['compact_ms_median']:.2f} / {f['compact_ms_p95']:.2f}"),
            ("wall time", f"{f['wall_seconds']:.1f} s"),
        ]
        if "fold_proposed" in f:  # issue 14: the folds the model chose
            rows.insert(-4, ("model folds: proposed / accepted / refused; read back; re-runs",
                             f"{f['fold_proposed']} / {f['fold_accepted']} / {f['fold_refused']}; "
                             f"{f['fold_read_back']}; {f['fold_reruns']}"))
        if self.facts is not None:
            rows.append(("current-fact accuracy", f"{self.facts['correct']}/{self.facts['compared']} "
                         f"({self.facts['accuracy']:.0%}); stale values still active: {self.facts['stale']}"))
        if self.secrets is not None:
            s = self.secrets
            rows.append(("secrets in facts / cards / protected",
                         f"{s['in_facts']} / {s['in_cards']} / {s['in_protected']} (of {s['checked']} gold secret values checked)"))
        if self.evidence is not None:
            e = self.evidence
            rows.append(("evidence turns reachable via expand", f"{e['reachable']}/{e['evidence_turns']}"))
            rows.append((f"evidence recall@{RECALL_K} (turn hits / with covering cards)",
                         f"{e['recall_at_10']:.3f} / {e['recall_at_10_with_cards']:.3f} ({e['questions']} questions)"))
        return rows

    def render(self, console: Any = None, title: str = "memfold replay") -> None:
        """Print the report as a rich table (and the fact comparison, if any) to ``console``."""
        from rich.console import Console
        from rich.table import Table

        console = console or Console()
        table = Table(title=title, show_header=True, header_style="bold")
        table.add_column("figure")
        table.add_column("value", justify="right")
        for name, value in self.rows():
            table.add_row(name, value)
        console.print(table)
        if self.facts is not None and self.facts["keys"]:
            facts = Table(title="current facts (active semantic records vs gold)", header_style="bold")
            for col in ("gold key", "memfold key", "gold value", "memfold value", "ok"):
                facts.add_column(col)
            for k in self.facts["keys"]:
                facts.add_row(k["gold_key"], k["key"], k["gold"], k["active"] or "-", "yes" if k["correct"] else "no")
            console.print(facts)
        for note in self.notes:
            console.print(f"note: {note}")


def fold_figures(mf: "MemFold", conversations: list[Any]) -> dict[str, int]:
    """The fold counters (issue 14, point 8) summed over the replayed conversations:
    ``fold_proposed``, ``fold_accepted``, ``fold_refused``, ``fold_read_back``, ``fold_reruns``."""
    totals = {"fold_proposed": 0, "fold_accepted": 0, "fold_refused": 0, "fold_read_back": 0, "fold_reruns": 0}
    for c in conversations:
        stats = mf.conversation(c.conversation_id, create=False).fold_stats()
        for key in ("proposed", "accepted", "refused", "read_back", "reruns"):
            totals[f"fold_{key}"] += stats[key]
    return totals


def current_facts(mf: "MemFold", conversations: list[Any]) -> dict[str, Any]:
    """Compare active semantic facts with each conversation's gold current values (module docstring)."""
    keys = []
    for conv in conversations:
        for gold_key, gold_value in conv.gold_facts.items():
            key = gold_key if gold_key.startswith("user.") else STAR_KEY_MAP.get(gold_key)
            if key is None:
                continue
            active = [r.content for r in mf.memory.list(conv.namespace, "semantic", key=key)]
            value = active[-1] if active else None
            keys.append({"namespace": conv.namespace, "gold_key": gold_key, "key": key, "gold": gold_value,
                         "active": value, "correct": value is not None and _norm(value) == _norm(gold_value),
                         "stale": sum(1 for a in active if _norm(a) != _norm(gold_value))})
    correct = sum(1 for k in keys if k["correct"])
    return {"compared": len(keys), "correct": correct, "accuracy": correct / len(keys) if keys else 0.0,
            "stale": sum(k["stale"] for k in keys), "keys": keys,
            "scope": "keys memfold maps to customer slots: " + ", ".join(f"{a}->{b}" for a, b in STAR_KEY_MAP.items())}


def secret_check(mf: "MemFold", conversations: list[Any]) -> dict[str, Any]:
    """Look for gold secret values in facts, card texts and protected records (module docstring)."""
    storage = mf.storage
    values: set[str] = set()
    excluded: set[str] = set()
    for conv in conversations:
        plain = [str(v).lower() for v in list(conv.gold_facts.values()) + sorted(getattr(conv, "plain_values", ()))]
        for secret in conv.secrets:
            s = str(secret).strip()
            if not s or s.lower() == "null" or any(s.lower() in p for p in plain):
                excluded.add(s)
            else:
                values.add(s)
    facts = storage.records.contents_of_type("semantic")
    cards = storage.cards.all_texts()
    protected = storage.protected.all_texts()

    def hits(texts: list[str]) -> list[str]:
        found = []
        for v in sorted(values):
            pattern = re.compile(r"(?<![\w])" + re.escape(v) + r"(?![\w])", re.IGNORECASE)
            if any(pattern.search(t) for t in texts):
                found.append(v)
        return found

    in_facts, in_cards, in_protected = hits(facts), hits(cards), hits(protected)
    return {"checked": len(values), "excluded": sorted(excluded), "in_facts": len(in_facts),
            "in_cards": len(in_cards), "in_protected": len(in_protected),
            "found": {"facts": in_facts, "cards": in_cards, "protected": in_protected}}


def evidence_check(mf: "MemFold", run: "ReplayRun") -> dict[str, Any]:
    """LoCoMo: evidence reachability through ``expand`` and search recall@10 (module docstring)."""
    evidence_turns = reachable = questions = 0
    recall_sum = recall_cards_sum = 0.0
    missing: list[str] = []
    for conv_src in run.conversations:
        if not conv_src.questions:
            continue
        conv = mf.conversation(conv_src.conversation_id, create=False)
        ids = run.turn_ids.get(conv.id, {})
        seq_of = mf.storage.archive.turn_seqs(conv.id)
        seen: set[int] = set()
        for item in conv.catalog_items():
            if item.kind == "turn":
                seen.add(item.item_id)
            else:
                seen.update(t.id for t in conv.expand(item.item_id, to_turns=True))
        wanted = {ids[d] for q in conv_src.questions for d in q["evidence"] if d in ids}
        evidence_turns += len(wanted)
        reachable += len(wanted & seen)
        missing += [f"{conv.id}:t{t}" for t in sorted(wanted - seen)]
        for q in conv_src.questions:
            gold = {ids[d] for d in q["evidence"] if d in ids}
            if not gold:
                continue
            questions += 1
            hits = conv.search(q["question"], limit=RECALL_K)
            turn_hits = {h.id for h in hits if h.kind == "turn"}
            covered = set(turn_hits)
            for h in hits:
                if h.kind == "card":
                    covered.update(t for t in gold if h.first_seq <= seq_of[t] <= h.last_seq)
            recall_sum += len(gold & turn_hits) / len(gold)
            recall_cards_sum += len(gold & covered) / len(gold)
    return {"questions": questions, "evidence_turns": evidence_turns, "reachable": reachable,
            "unreachable": missing[:20], "recall_at_10": recall_sum / questions if questions else 0.0,
            "recall_at_10_with_cards": recall_cards_sum / questions if questions else 0.0}


def write_json(report: ReplayReport, path: str) -> None:
    """Write ``report.to_dict()`` as indented JSON to ``path``."""
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(report.to_dict(), fh, indent=2, ensure_ascii=False)
        fh.write("\n")
