"""Readers that turn conversation files into sessions of turns for the replay.

Three formats (issue 9, point 1):

* **JSONL chat messages**: one file (one conversation) or a folder of ``*.jsonl`` files (one
  conversation each, in name order). Optional ``created_at`` per line: ISO-8601 with offset or
  POSIX seconds; on the lines of a logical-clock export (``"clock": "logical"``) a tick, replayed
  as that many minutes after 2026-01-01 UTC. An export's ``conversation_labels`` label the
  conversation.
* **LoCoMo JSON** (``locomo_dev.json``; schema in ``shared/data/locomo/README.md``): one conversation
  per sample; turn text ``"speaker: text"`` plus ``[shared image: caption]`` when there is one; each
  session's date is its turns' time; ``speaker_a`` plays ``user``, ``speaker_b`` ``assistant``;
  the ``dia_id`` is kept in turn metadata so evidence can be found again.
* **STAR** (``shared/data/star``; MIT): every dialogue of one persona in time order, one session
  per day, visible turns only (user ``utter``, wizard ``utter`` and ``pick_suggestion``; never
  ``request_suggestions``). The wizard's knowledge-base queries are kept as *gold* facts (the last
  value of each key the agent queried), never as turns.

Every reader returns :class:`ReplaySource`: conversations, each a list of sessions of turns in
the OpenAI message shape with an aware UTC ``created_at``.
"""

from __future__ import annotations

import csv
import json
import os
import re
import tarfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterator

from ..memory.errors import InvalidInput

#: query-constraint keys whose values are secrets: never facts, never card text (issue 9 point 2)
#: (``Code``: the access or clearance code a spaceship_access_codes user authenticates with)
SECRET_KEYS = frozenset({"PIN", "SecurityAnswer1", "SecurityAnswer2", "Password", "SecurityAnswer", "Code"})


@dataclass
class ReplaySession:
    """One session (a day's dialogue): turns as OpenAI-shaped dicts with ``created_at``."""

    session_id: str
    turns: list[dict[str, Any]]


@dataclass
class ReplayConversation:
    """One conversation to replay: its id, namespace and sessions in time order."""

    conversation_id: str
    namespace: str
    sessions: list[ReplaySession]
    #: gold current facts (key -> last value) when the source has them (STAR)
    gold_facts: dict[str, str] = field(default_factory=dict)
    #: evaluation questions when the source has them (LoCoMo): {question, evidence, category}
    questions: list[dict[str, Any]] = field(default_factory=list)
    #: secret values seen in the source (STAR PINs, security answers): must never become facts
    secrets: set[str] = field(default_factory=set)
    #: every non-secret value the source's agent queried (STAR), for the secret check's exclusions
    plain_values: set[str] = field(default_factory=set)
    #: the conversation's own labels (a JSONL export's ``conversation_labels``)
    labels: list[str] = field(default_factory=list)

    @property
    def turn_count(self) -> int:
        return sum(len(s.turns) for s in self.sessions)


@dataclass
class ReplaySource:
    """What a reader produced: the format name and the conversations."""

    format: str
    conversations: list[ReplayConversation]


# ----------------------------------------------------------------------------------- JSONL
def _parse_time(value: Any, where: str) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.fromtimestamp(float(value), timezone.utc)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise InvalidInput(f"{where}: created_at {value!r} is not ISO-8601") from None
        if parsed.tzinfo is None:
            raise InvalidInput(f"{where}: created_at {value!r} has no UTC offset (naive times are refused)")
        return parsed.astimezone(timezone.utc)
    raise InvalidInput(f"{where}: created_at must be ISO-8601 text or POSIX seconds, got {value!r}")


def _parse_tick(value: Any, where: str, base: datetime) -> datetime | None:
    """A logical-clock export's ``created_at`` (``"clock": "logical"``): a tick, never POSIX
    seconds. Tick ``n`` replays at ``base`` + ``n`` minutes (the step untimed lines get), so the
    turns keep their order and spacing instead of landing in 1970."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value != value:
        raise InvalidInput(f"{where}: created_at on a logical clock must be a tick (a number >= 0), got {value!r}")
    try:
        return base + timedelta(minutes=float(value))
    except OverflowError:
        raise InvalidInput(f"{where}: created_at tick {value!r} is too large to replay") from None


def read_jsonl_source(path: Path, namespace: str | None = None) -> ReplaySource:
    """Read one JSONL transcript or a folder of them. Turns without ``created_at`` get one minute
    apart from 2026-01-01 UTC, sessions split where the date changes. An export's
    ``conversation_labels`` become the conversation's labels; the ticks of a logical-clock
    export (its lines' ``"clock": "logical"``) replay as minutes from 2026-01-01 UTC.

    :raises InvalidInput: for a bad line (with its file and line number).
    """
    from ..window.transcripts import read_jsonl, take_export_fields

    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    if not files:
        raise InvalidInput(f"{path}: no *.jsonl files to replay")
    conversations = []
    for file in files:
        messages = read_jsonl(file)
        fields = take_export_fields(messages, source=str(file))  # an export's conversation labels and clock
        base = datetime(2026, 1, 1, tzinfo=timezone.utc)
        turns = []
        for i, msg in enumerate(messages):
            line = msg.pop("__line__")
            where = f"{file} line {line}"
            if fields.clock == "logical":
                when = _parse_tick(msg.pop("created_at", None), where, base) or base + timedelta(minutes=i)
            else:
                when = _parse_time(msg.pop("created_at", None), where) or base + timedelta(minutes=i)
            msg["created_at"] = when
            turns.append(msg)
        conversations.append(
            ReplayConversation(file.stem, namespace or file.stem, _split_by_day(turns, file.stem),
                               labels=fields.labels or [])
        )
    return ReplaySource("jsonl", conversations)


def _split_by_day(turns: list[dict[str, Any]], prefix: str) -> list[ReplaySession]:
    sessions: list[ReplaySession] = []
    current_day = None
    for turn in turns:
        day = turn["created_at"].date()
        if day != current_day:
            sessions.append(ReplaySession(f"{prefix}:{day.isoformat()}", []))
            current_day = day
        sessions[-1].turns.append(turn)
    return sessions


# ----------------------------------------------------------------------------------- LoCoMo
_LOCOMO_DATE = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$", re.I)
_MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"], start=1)}


def parse_locomo_date(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` -> aware UTC datetime. :raises InvalidInput: if it does not parse."""
    m = _LOCOMO_DATE.match(text or "")
    if not m:
        raise InvalidInput(f"LoCoMo session date {text!r} is not like '1:56 pm on 8 May, 2023'")
    hour, minute, ampm, day, month, year = m.groups()
    month_no = _MONTHS.get(month.lower())
    if month_no is None:
        raise InvalidInput(f"LoCoMo session date {text!r} has an unknown month {month!r}")
    h = int(hour) % 12 + (12 if ampm.lower() == "pm" else 0)
    return datetime(int(year), month_no, int(day), h, int(minute), tzinfo=timezone.utc)


def normalize_evidence(evidence: list[Any], valid_ids: set[str]) -> list[str]:
    """LoCoMo evidence ids normalised as the data's README says: split on ``[;\\s]+``, ``D:`` -> ``D``,
    strip leading zeros, drop ids not in the conversation."""
    out: list[str] = []
    for item in evidence or []:
        for part in re.split(r"[;\s]+", str(item)):
            part = part.strip().replace("D:", "D")
            m = re.match(r"^D(\d+):(\d+)$", part)
            if not m:
                continue
            norm = f"D{int(m.group(1))}:{int(m.group(2))}"
            if norm in valid_ids and norm not in out:
                out.append(norm)
    return out


def locomo_turn_text(turn: dict[str, Any]) -> str:
    """``"speaker: text"`` plus ``" [shared image: caption]"`` when the turn shared an image."""
    text = f"{turn['speaker']}: {turn.get('text', '')}"
    if turn.get("blip_caption"):
        text += f" [shared image: {turn['blip_caption']}]"
    return text


def read_locomo_source(path: Path) -> ReplaySource:
    """Read a LoCoMo JSON file (any file of the same schema).

    :raises InvalidInput: if the file is not a list of samples with conversations.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"{path}: cannot read LoCoMo JSON ({exc})") from None
    if not isinstance(data, list) or not all(isinstance(s, dict) and "conversation" in s for s in data):
        raise InvalidInput(f"{path}: not LoCoMo data (expected a list of samples with 'conversation')")
    conversations = []
    for sample in data:
        conv = sample["conversation"]
        sample_id = str(sample.get("sample_id", f"sample-{len(conversations) + 1}"))
        speaker_a = conv.get("speaker_a")
        numbers = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
        sessions, valid = [], set()
        for n in numbers:
            date = parse_locomo_date(conv[f"session_{n}_date_time"])
            turns = []
            for i, t in enumerate(conv[f"session_{n}"]):
                valid.add(t["dia_id"])
                turns.append({
                    "role": "user" if t["speaker"] == speaker_a else "assistant",
                    "content": locomo_turn_text(t),
                    "created_at": date + timedelta(seconds=i),
                    "metadata": {"dia_id": t["dia_id"], "speaker": t["speaker"]},
                })
            sessions.append(ReplaySession(f"{sample_id}:session_{n}", turns))
        questions = []
        for qa in sample.get("qa", []):
            if qa.get("category") not in (1, 2, 3, 4):
                continue
            evidence = normalize_evidence(qa.get("evidence", []), valid)
            if evidence:
                questions.append({"question": qa["question"], "evidence": evidence, "category": qa["category"]})
        conversations.append(ReplayConversation(sample_id, sample_id, sessions, questions=questions))
    return ReplaySource("locomo", conversations)


# ----------------------------------------------------------------------------------- STAR
def _strip_quotes(value: Any) -> str:
    text = str(value).strip()
    m = re.match(r'^api\.is_equal_to\((.*)\)$', text)
    if m:
        text = m.group(1).strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1]
    return text.strip()


def _star_dialogues(folder: Path, ids: list[int]) -> Iterator[dict[str, Any]]:
    wanted = set(ids)
    loose = folder / "dialogues_service"
    found: dict[int, dict[str, Any]] = {}
    for i in list(wanted):
        f = loose / f"{i}.json"
        if f.exists():
            found[i] = json.loads(f.read_text(encoding="utf-8"))
    missing = wanted - set(found)
    archive = folder / "dialogues.tar.xz"
    if missing and archive.exists():
        names = {f"dialogues/{i}.json": i for i in missing}
        with tarfile.open(archive) as tar:  # one sequential pass: xz has no random access
            for member in tar:
                if member.name in names:
                    fh = tar.extractfile(member)
                    if fh is not None:
                        found[names.pop(member.name)] = json.load(fh)
                    if not names:
                        break
    for i in ids:
        if i in found:
            yield found[i]


def star_personas(folder: Path) -> dict[str, int]:
    """Persona name -> number of dialogues, from ``index.tsv``."""
    counts: dict[str, int] = {}
    with open(folder / "index.tsv", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            for name in filter(None, (row.get("persona_names") or "").split("|")):
                counts[name] = counts.get(name, 0) + 1
    return counts


def read_star_source(folder: Path, persona: str, *, start: datetime | None = None,
                     limit: int | None = None, domain: str | None = None) -> ReplaySource:
    """Every STAR dialogue of ``persona`` in time order, one session per day from ``start``
    (default 2026-01-05 09:00 UTC), visible turns only.

    :param limit: replay only the first N dialogues (for quick runs).
    :param domain: only the dialogues whose tasks name this domain (``"bank"``; issue 15's secret benchmark).
    :raises InvalidInput: if the folder has no ``index.tsv`` or the persona has no dialogues.
    """
    index = folder / "index.tsv"
    if not index.exists():
        raise InvalidInput(f"{folder}: not a STAR folder (no index.tsv)")
    rows = []
    with open(index, encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            names = (row.get("persona_names") or "").split("|")
            if persona in names and (domain is None or domain in (row.get("tasks") or "")):
                rows.append((int(row["start_unix"] or 0), int(row["dialogue_id"])))
    if not rows:
        raise InvalidInput(f"no STAR dialogues for persona {persona!r}; personas with the most dialogues: "
                           + ", ".join(n for n, _ in sorted(star_personas(folder).items(), key=lambda kv: -kv[1])[:5]))
    rows.sort()
    if limit is not None:
        rows = rows[:limit]
    slug = re.sub(r"[^a-z0-9]+", "-", persona.lower()).strip("-")
    conv = _star_conversation(folder, [d for _, d in rows], f"star-{slug}", f"star/{slug}", start)
    return ReplaySource("star", [conv])


def read_star_dialogues(folder: Path, dialogues: list[int], *, conversation_id: str = "star-dialogues",
                        namespace: str | None = None, start: datetime | None = None) -> ReplaySource:
    """The given STAR dialogues (by ``DialogueID``, in the order given) as one conversation, one
    session per dialogue and day from ``start``, read like :func:`read_star_source` reads a
    persona's: from ``dialogues_service`` when the file is there, else from ``dialogues.tar.xz``
    (multi-task and disconnected dialogues live only there). For a set of dialogues that no
    persona ties together (issue 15's fresh secret check set, ``tests/data/star_secret_fresh.json``).

    :raises InvalidInput: if the folder is not a STAR folder, the list is empty or a dialogue is
        in neither place.
    """
    if not (folder / "index.tsv").exists():
        raise InvalidInput(f"{folder}: not a STAR folder (no index.tsv)")
    ids = [int(d) for d in dialogues]
    if not ids:
        raise InvalidInput("no STAR dialogues given")
    conv = _star_conversation(folder, ids, conversation_id, namespace or conversation_id.replace("-", "/", 1), start,
                              strict=True)
    return ReplaySource("star", [conv])


def _star_conversation(folder: Path, ids: list[int], conversation_id: str, namespace: str,
                       start: datetime | None, *, strict: bool = False) -> ReplayConversation:
    """The dialogues ``ids`` as one conversation: visible turns, gold facts, secrets, plain values
    (``strict``: a dialogue found nowhere is an error, else it is skipped)."""
    day0 = start or datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
    sessions, gold, secrets, plain = [], {}, set(), set()
    found = list(_star_dialogues(folder, ids))
    absent = sorted(set(ids) - {int(d.get("DialogueID", -1)) for d in found})
    if absent and strict:
        raise InvalidInput(f"STAR dialogues {absent[:5]} are neither in dialogues_service nor in dialogues.tar.xz")
    for day, dialogue in enumerate(found):
        first_time = None
        turns = []
        for event in dialogue.get("Events", []):
            agent, action = event.get("Agent"), event.get("Action")
            if action == "query" and agent == "Wizard":
                for constraint in event.get("Constraints", []):
                    for key, value in constraint.items():
                        value = _strip_quotes(value)
                        if key in SECRET_KEYS:
                            if value:
                                secrets.add(value)
                        elif value:
                            gold[key] = value
                            plain.add(value)
                continue
            visible = (agent == "User" and action == "utter") or (
                agent == "Wizard" and action in ("utter", "pick_suggestion"))
            if not visible or not (event.get("Text") or "").strip():
                continue
            unix = event.get("UnixTime")
            if first_time is None and unix:
                first_time = unix
            offset = (unix - first_time) if (unix and first_time) else len(turns) * 10
            turn: dict[str, Any] = {
                "role": "user" if agent == "User" else "assistant",
                "content": event["Text"],
                "created_at": day0 + timedelta(days=day, seconds=max(0, offset)),
                "metadata": {"star_dialogue": dialogue.get("DialogueID"), "star_action": event.get("ActionLabel") or action},
            }
            if turns and turn["created_at"] < turns[-1]["created_at"]:
                turn["created_at"] = turns[-1]["created_at"]
            turns.append(turn)
        if turns:
            sessions.append(ReplaySession(f"star:{dialogue.get('DialogueID')}", turns))
    return ReplayConversation(conversation_id, namespace, sessions, gold_facts=gold, secrets=secrets,
                              plain_values=plain)


def detect_format(path: Path) -> str:
    """``"star"``, ``"locomo"`` or ``"jsonl"`` from the path's shape.

    :raises InvalidInput: if the path does not exist or matches no format.
    """
    if not path.exists():
        raise InvalidInput(f"{path} does not exist")
    if path.is_dir():
        if (path / "index.tsv").exists():
            return "star"
        if any(path.glob("*.jsonl")):
            return "jsonl"
        raise InvalidInput(f"{path}: a folder with neither index.tsv (STAR) nor *.jsonl files")
    if path.suffix == ".jsonl":
        return "jsonl"
    if path.suffix == ".json":
        return "locomo"
    raise InvalidInput(f"{path}: unknown format (expected .jsonl, LoCoMo .json or a STAR folder)")


def read_source(path: str | os.PathLike, *, format: str | None = None, persona: str | None = None,
                limit: int | None = None, dialogues: list[int] | None = None) -> ReplaySource:
    """Read any supported source; ``format`` defaults to :func:`detect_format`. For STAR, either a
    ``persona``'s dialogues or the given ``dialogues`` (ids, :func:`read_star_dialogues`).

    :raises InvalidInput: for an unknown format, a STAR folder without ``persona``, or bad data.
    """
    p = Path(path)
    fmt = format or detect_format(p)
    if fmt == "jsonl":
        return read_jsonl_source(p)
    if fmt == "locomo":
        return read_locomo_source(p)
    if fmt == "star":
        if dialogues is not None and not persona:
            return read_star_dialogues(p, list(dialogues)[:limit] if limit is not None else list(dialogues))
        if not persona:
            raise InvalidInput("a STAR replay needs --persona NAME (for example 'Tyler Jones')")
        return read_star_source(p, persona, limit=limit)
    raise InvalidInput(f"unknown replay format {fmt!r}: use jsonl, locomo or star")
