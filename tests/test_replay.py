"""Replay (issue 9): a small fixture in each format, the report's figures checked against the
database it wrote, secrets kept out of facts, cards and protected records, and the replay clock."""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

import memfold
from memfold.memory.clock import ReplayClock
from memfold.memory.errors import ClockError, InvalidInput
from memfold.replay.formats import read_source
from memfold.replay.runner import ReplaySettings, replay, replay_path
from memfold.replay.sample import GOLD_FACTS, generate_sample_history
from memfold.replay.secrets import SecretDetector

T0 = datetime(2026, 2, 2, 9, 0, tzinfo=timezone.utc)
SMALL = ReplaySettings(budget_tokens=300, output_reserve_tokens=50, hot_turns=4)


# ------------------------------------------------------------------------------- fixtures
def write_jsonl(path, days=4, per_day=12):
    lines = []
    for d in range(days):
        for i in range(per_day):
            when = T0 + timedelta(days=d, minutes=i)
            if i == 0 and d == 0:
                text, role = "Hi, my name is Dana Whitfield and my account number is ACC-55102.", "user"
            elif i == 0 and d == 2:
                text, role = "My address is 48 Cedar Street, Seattle, WA 98101.", "user"
            else:
                role = "user" if i % 2 == 0 else "assistant"
                text = f"Day {d} message {i}: checking on order ORD-{3300 + d} with some ordinary chatter words."
            lines.append({"role": role, "content": text, "created_at": when.isoformat()})
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


def write_locomo(path):
    sessions = {}
    for s in range(1, 4):
        sessions[f"session_{s}_date_time"] = f"10:0{s} am on {s + 3} May, 2023"
        sessions[f"session_{s}"] = [
            {"speaker": "Ann" if i % 2 == 0 else "Bob", "dia_id": f"D{s}:{i + 1}",
             "text": f"Session {s} line {i}: " + ("I adopted a puppy named Biscuit." if (s, i) == (1, 2)
                                                  else "we talked about the weather and the garden at length.")}
            for i in range(14)
        ]
    data = [{"sample_id": "conv-test", "conversation": {"speaker_a": "Ann", "speaker_b": "Bob", **sessions},
             "qa": [{"question": "What is the name of Ann's puppy?", "answer": "Biscuit", "evidence": ["D1:3"],
                     "category": 4},
                    {"question": "What did they talk about in session 3?", "answer": "weather",
                     "evidence": ["D3:5; D:3:6"], "category": 1}]}]
    path.write_text(json.dumps(data))
    return path


STAR_DIALOGUES = [
    # (dialogue id, start unix, [(agent, action, text)], queries)
    (501, 1590000000, [
        ("User", "utter", "Somebody took money from my account."),
        ("Wizard", "pick_suggestion", "Could I get your full name, please?"),
        ("User", "utter", "Tyler Jones"),
        ("Wizard", "pick_suggestion", "Can you tell me your account number, please?"),
        ("User", "utter", "11112222"),
        ("Wizard", "pick_suggestion", "Right, and your PIN as well please."),
        ("User", "utter", "4321"),
        ("Wizard", "request_suggestions", "hidden: never a turn"),
        ("Wizard", "pick_suggestion", "What was your mother's maiden name?"),
        ("User", "utter", "Sanders"),
        ("Wizard", "pick_suggestion", "Thanks, I have filed the fraud report."),
    ], [{"FullName": '"Tyler Jones"', "AccountNumber": '"11112222"', "PIN": '"4321"'}]),
    (502, 1590100000, [
        ("User", "utter", "Hello, I need to check my balance."),
        ("Wizard", "pick_suggestion", "Could I get your full name, please?"),
        ("User", "utter", "tyler jones"),
        ("Wizard", "pick_suggestion", "Can you tell me your account number, please?"),
        ("User", "utter", "That would be 99998888"),
        ("Wizard", "pick_suggestion", "Could you provide your date of birth, please?"),
        ("User", "utter", "04/04/1990"),
        ("Wizard", "pick_suggestion", "And what was the name of the pet you had as a child?"),
        ("User", "utter", "Biscuit"),
        ("Wizard", "utter", "Your balance is 500 dollars."),
    ], [{"FullName": '"Tyler Jones"', "AccountNumber": '"99998888"', "DateOfBirth": '"04/04/1990"',
         "SecurityAnswer1": '"Biscuit"'}]),
]


def write_star(folder):
    (folder / "dialogues_service").mkdir(parents=True)
    header = "dialogue_id\tfile\tstart_unix\tpersona_names\n"
    rows = []
    for did, start, events, queries in STAR_DIALOGUES:
        evs = []
        for n, (agent, action, text) in enumerate(events):
            evs.append({"Agent": agent, "Action": action, "Text": text, "UnixTime": start + 10 * n})
            if n == 1:
                evs.append({"Agent": "Wizard", "Action": "query", "Constraints": queries, "UnixTime": start + 10 * n})
        (folder / "dialogues_service" / f"{did}.json").write_text(json.dumps({"DialogueID": did, "Events": evs}))
        rows.append(f"{did}\tdialogues/{did}.json\t{start}\tTyler Jones\n")
    (folder / "index.tsv").write_text(header + "".join(rows))
    return folder


def db_figures(db):
    con = sqlite3.connect(db)
    q = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
    out = {
        "turns": q("SELECT COUNT(*) FROM turns"),
        "archive_tokens": q("SELECT SUM(tokens) FROM turns"),
        "folds": q("SELECT COUNT(*) FROM cards WHERE depth = 1"),
        "rollups": q("SELECT COUNT(*) FROM cards WHERE depth > 1"),
        "facts_written": q("SELECT COUNT(*) FROM records WHERE type = 'semantic' AND status IN ('active', 'retired') "
                           "AND json_extract(metadata, '$.consolidation_run') IS NOT NULL"),
        "superseded": q("SELECT COUNT(*) FROM records WHERE status = 'retired' AND superseded_by IS NOT NULL"),
        "cards_text": [r[0] for r in con.execute("SELECT text FROM cards")],
        "facts": [r for r in con.execute("SELECT key, content, status FROM records WHERE type = 'semantic'")],
        "protected": [r[0] for r in con.execute("SELECT text FROM protected")],
    }
    con.close()
    return out


# ------------------------------------------------------------------------------- formats
def test_jsonl_replay_report_matches_database(tmp_path):
    src = write_jsonl(tmp_path / "dana.jsonl")
    db = tmp_path / "r.db"
    report = replay(read_source(src), db, settings=SMALL, token_counter="words")
    f, d = report.figures, db_figures(db)
    assert f["turns"] == d["turns"] == 48
    assert f["archive_tokens"] == d["archive_tokens"]
    assert f["folds"] == d["folds"] > 0
    assert f["rollups"] == d["rollups"]
    assert f["facts_written"] == d["facts_written"] >= 3
    assert f["superseded"] == d["superseded"]
    assert f["compiles"] == 24  # one per assistant turn
    assert f["compiled_tokens_max"] <= f["usable_tokens"] == 250
    assert f["over_budget"] == f["budget_errors"] == 0
    assert f["nightly_passes"] == 4 and f["consolidation_runs"] == 4
    assert f["summarizer_calls"] >= f["folds"] + f["rollups"]
    assert 0 < f["ratio_to_transcript_median"]
    keys = {(k, c) for k, c, s in d["facts"] if s == "active"}
    assert ("user.name", "Dana Whitfield") in keys and ("user.address", "48 Cedar Street, Seattle, WA 98101") in keys


def test_replay_times_follow_the_turns(tmp_path):
    src = write_jsonl(tmp_path / "dana.jsonl", days=2, per_day=4)
    db = tmp_path / "r.db"
    replay(read_source(src), db, settings=SMALL, token_counter="words")
    con = sqlite3.connect(db)
    times = [r[0] for r in con.execute("SELECT created_at FROM turns ORDER BY id")]
    runs = [r[0] for r in con.execute("SELECT started_at FROM consolidation_runs ORDER BY id")]
    con.close()
    assert times[0] == T0.timestamp() and times[4] == (T0 + timedelta(days=1)).timestamp()
    # the nightly pass runs at the midnight after each day, as the scheduled job would
    assert runs == [datetime(2026, 2, 3, tzinfo=timezone.utc).timestamp(), datetime(2026, 2, 4, tzinfo=timezone.utc).timestamp()]


def test_locomo_replay_evidence_reachable_and_recall(tmp_path):
    src = read_source(write_locomo(tmp_path / "locomo.json"))
    db = tmp_path / "r.db"
    report = replay(src, db, settings=SMALL, token_counter="words")
    assert report.figures["turns"] == db_figures(db)["turns"] == 42
    assert report.figures["folds"] > 0 and report.figures["over_budget"] == 0
    ev = report.evidence
    assert ev["questions"] == 2 and ev["evidence_turns"] == 3 and ev["reachable"] == 3
    assert 0.0 <= ev["recall_at_10"] <= ev["recall_at_10_with_cards"] <= 1.0
    assert ev["recall_at_10"] >= 0.5  # the puppy question finds its turn by name


def test_star_replay_facts_and_secrets(tmp_path):
    src = read_source(write_star(tmp_path / "star"), persona="Tyler Jones")
    conv = src.conversations[0]
    assert conv.gold_facts["AccountNumber"] == "99998888" and {"4321", "Biscuit"} <= conv.secrets
    assert all("hidden" not in t["content"] for s in conv.sessions for t in s.turns)
    db = tmp_path / "r.db"
    report = replay(src, db, settings=SMALL, token_counter="words")
    d = db_figures(db)
    assert report.figures["turns"] == d["turns"] == 20
    assert report.facts["compared"] == 3
    assert report.facts["correct"] == 3 and report.facts["stale"] == 0
    # the first account number was superseded by the second, never deleted
    assert ("user.account_id", "11112222", "retired") in d["facts"]
    assert report.figures["secret_turns"] == 3  # PIN, maiden name, pet
    s = report.secrets
    assert s["checked"] == 2 and s["in_facts"] == s["in_cards"] == s["in_protected"] == 0
    texts = d["cards_text"] + [c for _, c, _ in d["facts"]] + d["protected"]
    for secret in ("4321", "Sanders", "Biscuit"):
        assert not any(re.search(rf"\b{secret}\b", t) for t in texts)
    # hidden from readers without the label, there for the owner and for readers holding it
    mf = memfold.MemFold(db, embedder=None)
    c = mf.conversation(conv.conversation_id, create=False)
    assert not [h for h in c.search("4321", reader=memfold.Reader.of([]))]
    assert [h for h in c.search("4321", reader=memfold.Reader.of(["secret"])) if h.kind == "turn"]
    secret_turns = [t for t in c.history() if "secret" in t.labels]
    assert {t.content for t in secret_turns} == {"4321", "Sanders", "Biscuit"}
    mf.close()


def test_star_fixture_cards_never_hold_secrets_even_when_folded(tmp_path):
    src = read_source(write_star(tmp_path / "star"), persona="Tyler Jones")
    db = tmp_path / "r.db"
    tiny = ReplaySettings(budget_tokens=120, output_reserve_tokens=20, hot_turns=2)
    report = replay(src, db, settings=tiny, token_counter="words")
    con = sqlite3.connect(db)
    folded_secret = con.execute(
        "SELECT COUNT(*) FROM card_covers cc JOIN turns t ON cc.child_kind = 'turn' AND cc.child_id = t.id "
        "WHERE t.labels LIKE '%secret%'").fetchone()[0] if "card_covers" in {
        r[0] for r in con.execute("SELECT name FROM sqlite_master")} else None
    con.close()
    assert report.figures["folds"] > 0
    assert report.secrets["in_cards"] == 0
    if folded_secret is not None:
        assert folded_secret > 0  # secret turns were folded, yet no card repeats them


# ------------------------------------------------------------------------------- sample
def test_sample_history_is_deterministic_and_monotonic():
    a, b = generate_sample_history(), generate_sample_history()
    assert a == b and 250 <= len(a) <= 450
    times = [datetime.fromisoformat(m["created_at"]) for m in a]
    assert times == sorted(times) and (times[-1] - times[0]).days >= 35


def test_sample_replay_scores_its_gold_facts(tmp_path):
    report = replay_path(sample=True, db=tmp_path / "s.db", token_counter="words")
    assert report.facts["compared"] == len(GOLD_FACTS)
    assert report.facts["correct"] == len(GOLD_FACTS) and report.facts["stale"] == 0
    assert report.figures["secret_turns"] >= 1 and report.secrets["in_facts"] == report.secrets["in_cards"] == 0
    assert report.figures["superseded"] >= 2  # address and contact preference changed


# ------------------------------------------------------------------------------- errors and parts
def test_replay_refuses_existing_conversation_and_bad_input(tmp_path):
    src = write_jsonl(tmp_path / "dana.jsonl", days=1, per_day=2)
    db = tmp_path / "r.db"
    replay(read_source(src), db, settings=SMALL, token_counter="words")
    with pytest.raises(InvalidInput, match="already holds conversation"):
        replay(read_source(src), db, settings=SMALL, token_counter="words")
    with pytest.raises(InvalidInput, match="not both"):
        replay_path(src, sample=True)
    with pytest.raises(InvalidInput, match="budget"):
        ReplaySettings(budget_tokens=10).window()
    with pytest.raises(InvalidInput, match="persona"):
        read_source(write_star(tmp_path / "star"))


def test_replay_clock():
    clock = ReplayClock(T0)
    assert clock.kind == "system" and clock.now() == T0.timestamp() and clock.now() == clock.now()
    assert clock.set(T0 + timedelta(hours=1)) == T0.timestamp() + 3600
    assert clock.now_datetime() == T0 + timedelta(hours=1)
    with pytest.raises(ClockError, match="never moves backwards"):
        clock.set(T0)
    with pytest.raises(ClockError, match="naive"):
        clock.set(datetime(2030, 1, 1))


def test_secret_detector_reads_the_conversation():
    det = SecretDetector()
    turns = [("assistant", "Could I get your full name, please?", False), ("user", "Tyler Jones", False),
             ("assistant", "Right, and your PIN as well please.", False), ("user", "1596", True),
             ("user", "I don't remember my PIN. My D.O.B. is 04/04/1990.", False),
             ("user", "Wait, my PIN might be 9431 or 0314.", True),
             ("user", "my mother's maiden name is Sanders", True),
             ("assistant", "Your PIN 0314 is not valid.", True)]
    assert [det.is_secret({"role": r, "content": t}) for r, t, _ in turns] == [s for _, _, s in turns]
