"""Write ``star_secret_fresh.json``: a fresh check set for the secret detector (issue 15, point 8, round 4).

Why not simply "every bank dialogue of the archive outside ``dialogues_service``": of those 607,
the 447 that name a persona were already replayed in round 3. ``bench/secret_leaks.py`` replays a
persona's bank dialogues through :func:`memfold.replay.formats.read_star_source`, which reads any
dialogue missing from ``dialogues_service`` out of ``dialogues.tar.xz``; so the tuning personas'
multi-task and disconnected bank dialogues were tuned on, and the check personas' were measured
and then tuned after (the round-3 counts, 154 and 186 gold values, only add up with them: the
loose files alone hold 94 and 98). They are in-sample, not fresh.

The rule, from ``index.tsv`` only (no dialogue is opened here), with no sampling (so no seed):

* **bank** part: every dialogue whose tasks name the bank domain, that is *not* in
  ``dialogues_service`` and whose ``persona_names`` is empty (the wizard never queried a name, so
  no persona-keyed replay of an earlier round, neither the secret benchmark's two sets nor the
  "Tyler Jones" replay, ever read it). Most are disconnected early, so few hold a gold secret.
* **access codes** part: every ``spaceship_access_codes`` dialogue (all are archive-only; no
  benchmark, test or replay of an earlier round reads that task). The user authenticates with a
  code ("Please enter the code."), the knowledge-base query's ``Code``: a credential like a PIN.

Within a part, dialogues are grouped into one conversation per persona name (case-folded; the
unnamed ones form one conversation) and ordered by ``start_unix`` then id, one session each, as
``read_star_source`` orders a persona's history. This script and its output were committed
before any of these dialogues was read.

    python tests/data/star_fresh_secrets.py [STAR_DIR]
"""

from __future__ import annotations

import csv
import json
import os
import re
import sys
from pathlib import Path

TARGET = Path(__file__).with_name("star_secret_fresh.json")


def fresh_set(folder: Path) -> dict:
    """The fresh check set as a JSON-ready dict (deterministic: a function of ``index.tsv`` and the
    names of the files in ``dialogues_service``)."""
    loose = set(os.listdir(folder / "dialogues_service"))
    parts: dict[str, dict[str, list[tuple[int, int]]]] = {"bank": {}, "access_codes": {}}
    excluded = {"bank_in_dialogues_service": 0, "bank_archive_named_persona_replayed_in_round_3": 0}
    with open(folder / "index.tsv", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            tasks = re.split(r"[,|]", row.get("tasks") or "")
            names = sorted(filter(None, (row.get("persona_names") or "").split("|")))
            key = (int(row["start_unix"] or 0), int(row["dialogue_id"]))
            group = names[0].strip().lower() if names else "(unnamed)"
            if any(t.startswith("bank_") for t in tasks):
                if row["file"] in loose:
                    excluded["bank_in_dialogues_service"] += 1
                elif names:
                    excluded["bank_archive_named_persona_replayed_in_round_3"] += 1
                else:
                    parts["bank"].setdefault(group, []).append(key)
            if "spaceship_access_codes" in tasks:
                parts["access_codes"].setdefault(group, []).append(key)
    out_parts = {
        part: [{"conversation": name, "dialogues": [d for _, d in sorted(keys)]}
               for name, keys in sorted(groups.items())]
        for part, groups in parts.items()
    }
    return {
        "rule": "bank: archive-only bank dialogues with no persona name; access_codes: every "
                "spaceship_access_codes dialogue; one conversation per case-folded persona name "
                "(unnamed together), ordered by start_unix; no sampling",
        "parts": out_parts,
        "dialogues": {part: sum(len(c["dialogues"]) for c in convs) for part, convs in out_parts.items()},
        "excluded": excluded,
    }


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[3] / "shared" / "data" / "star"
    out = fresh_set(folder)
    TARGET.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"fresh set: {out['dialogues']} dialogues; excluded {out['excluded']} -> {TARGET}")


if __name__ == "__main__":
    main()
