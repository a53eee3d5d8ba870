"""Write ``star_secret_split.json``: the STAR personas split into a tuning set and a check set (issue 15, point 8).

The unit is a persona (a customer name the wizard queried, from ``index.tsv``) that appears in at
least one bank dialogue (the tasks whose knowledge-base queries carry PINs, passwords and
security answers). The names are sorted, shuffled with seed 15 (the issue's number) and cut in
half: the first half tunes the secret detector, the second half is the check set, measured once
after tuning. This script and its output were committed before any check-set persona was read.

    python tests/data/split_star_secrets.py [STAR_DIR]
"""

from __future__ import annotations

import csv
import json
import random
import sys
from pathlib import Path

SEED = 15


def bank_personas(folder: Path) -> list[str]:
    names: set[str] = set()
    with open(folder / "index.tsv", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if "bank" in (row.get("tasks") or ""):
                names.update(filter(None, (row.get("persona_names") or "").split("|")))
    return sorted(names)


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[3] / "shared" / "data" / "star"
    names = bank_personas(folder)
    random.Random(SEED).shuffle(names)
    half = len(names) // 2
    out = {"seed": SEED, "unit": "persona (bank dialogues only)", "tuning": sorted(names[:half]),
           "check": sorted(names[half:])}
    target = Path(__file__).with_name("star_secret_split.json")
    target.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(out['tuning'])} tuning, {len(out['check'])} check personas -> {target}")


if __name__ == "__main__":
    main()
