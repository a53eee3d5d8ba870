"""The fresh secret check set (issue 15, point 8, round 4) is a fixed function of STAR's index.

``tests/data/star_fresh_secrets.py`` defines it from ``index.tsv`` and the names of the loose files
only; the committed ``tests/data/star_secret_fresh.json`` must be exactly what it writes, and it
must never overlap what earlier rounds replayed (the loose files, named bank personas).
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
STAR = HERE.parents[1] / "shared" / "data" / "star"
pytestmark = pytest.mark.skipif(not (STAR / "index.tsv").exists(), reason="needs ../shared/data/star")


def _script():
    spec = importlib.util.spec_from_file_location("star_fresh_secrets", HERE / "data" / "star_fresh_secrets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fresh_set_is_deterministic_and_matches_the_committed_file():
    script = _script()
    first, second = script.fresh_set(STAR), script.fresh_set(STAR)
    assert first == second
    committed = json.loads((HERE / "data" / "star_secret_fresh.json").read_text(encoding="utf-8"))
    assert json.loads(json.dumps(first)) == committed
    assert committed["dialogues"] == {"bank": 160, "access_codes": 139}


def test_fresh_set_holds_nothing_an_earlier_replay_read():
    committed = json.loads((HERE / "data" / "star_secret_fresh.json").read_text(encoding="utf-8"))
    ids = [d for convs in committed["parts"].values() for c in convs for d in c["dialogues"]]
    assert len(ids) == len(set(ids))
    loose = set(os.listdir(STAR / "dialogues_service"))
    split = json.loads((HERE / "data" / "star_secret_split.json").read_text(encoding="utf-8"))
    replayed = set(split["tuning"]) | set(split["check"]) | {"Tyler Jones"}
    rows = {int(r["dialogue_id"]): r for r in csv.DictReader(open(STAR / "index.tsv", encoding="utf-8"), delimiter="\t")}
    for d in ids:
        assert rows[d]["file"] not in loose
        if "bank" in rows[d]["tasks"]:
            assert not replayed & set(filter(None, rows[d]["persona_names"].split("|")))
