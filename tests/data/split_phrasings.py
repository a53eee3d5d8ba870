"""Assign the tuning / held-out split of the phrasing sets (issue 20, points 10 and 11).

Run once when the sets were written, before any extractor saw them; the split is committed with the
data. Within each group the items are shuffled with ``random.Random(SEED)`` and the first half
(rounded down) is ``tune``, the rest ``heldout``. Re-running gives the same split (a test checks it).

    python tests/data/split_phrasings.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path

SEED = 20
HERE = Path(__file__).resolve().parent
FILES = ("protected_paraphrases.json", "attribute_phrasings.json")


def assign(items: list[dict], seed: int = SEED) -> dict[str, str]:
    """item id -> ``"tune"`` or ``"heldout"``."""
    rng = random.Random(seed)
    out: dict[str, str] = {}
    groups: dict[str, list[str]] = {}
    for item in items:
        groups.setdefault(item["group"], []).append(item["id"])
    for group in sorted(groups):
        ids = sorted(groups[group])
        rng.shuffle(ids)
        half = len(ids) // 2
        out.update({i: "tune" for i in ids[:half]})
        out.update({i: "heldout" for i in ids[half:]})
    return out


def main() -> None:
    for name in FILES:
        path = HERE / name
        doc = json.loads(path.read_text(encoding="utf-8"))
        split = assign(doc["items"])
        for item in doc["items"]:
            item["split"] = split[item["id"]]
        doc["split"] = {"seed": SEED, "method": "random.Random(seed).shuffle of each group's sorted ids; "
                        "first half tune, rest heldout"}
        path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        tune = sum(1 for i in doc["items"] if i["split"] == "tune")
        print(f"{name}: {len(doc['items'])} items, {tune} tune, {len(doc['items']) - tune} heldout")


if __name__ == "__main__":
    main()
