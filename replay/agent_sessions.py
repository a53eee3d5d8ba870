"""Units of agent work for the fold benchmark and its tests (issue 14, point 9).

Three sources, each a list of :class:`Unit` (a task: the user's request, the agent's tool calls
with their results, short user turns in between, and the agent's closing message), in OpenAI
chat-messages shape:

* :func:`coding_session`: a deterministic generator of long coding-agent sessions (tasks, tool
  calls with paths, dead ends such as a failing test run or a wrong file, short ambiguous user
  turns like "ok, turn it off"). The same ``seed`` gives the same session byte for byte.
* :func:`star_units`: one STAR persona's dialogues in time order (``../shared/data/star``), one
  unit per dialogue; each knowledge-base ``query`` is an assistant tool call (the API name, the
  constraints as arguments) and its ``return_item`` the tool result.
* :func:`abcd_units`: the ABCD sample's dialogues (``../shared/data/abcd/abcd_sample.json``), the
  agent's actions (pull up account, validate purchase, ...) as tool calls with their results.

:class:`ScriptedAgent` plays units into a conversation as a model would, asking for the compiled
context before each model turn, and folds a unit when the fold card offers one (fold at close),
or never (fold at pressure only). It records each request's size and the prompt-prefix tokens a
fold rewrote, for the benchmark.
"""

from __future__ import annotations

import csv
import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

WORDS = ("config", "parser", "cache", "client", "server", "retry", "token", "queue", "worker", "report", "schema",
         "index", "loader", "session", "handler", "router", "export", "metrics", "limits", "auth")
MODULES = ("src/app", "src/api", "src/core", "src/db", "lib/util", "services/billing", "services/search", "cli")
AMBIGUOUS = ("ok, turn it off", "hm", "yes", "wait", "go on", "fine, keep it", "no, the other one", "ok",
             "do that", "leave it for now")


@dataclass
class Unit:
    """One unit of work: a ``title`` and its ``messages`` (the first is the user's request)."""

    title: str
    messages: list[dict[str, Any]] = field(default_factory=list)

    def tool_calls(self) -> int:
        return sum(len(m.get("tool_calls") or ()) for m in self.messages)


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args, sort_keys=True)}}


def _code(rng: random.Random, path: str, lines: int) -> str:
    out = [f"# {path}"]
    for n in range(lines):
        w = rng.choice(WORDS)
        out.append(f"def {w}_{n}(value):  return value.{rng.choice(WORDS)}({rng.randint(1, 99)})")
    return "\n".join(out)


def coding_session(seed: int = 0, tasks: int = 12, *, calls_per_task: tuple[int, int] = (8, 18)) -> list[Unit]:
    """A long coding-agent session: ``tasks`` units, each with ``calls_per_task`` tool calls
    (read_file, grep, edit_file, bash running tests or linters) on real-looking paths, a dead end
    or two, short ambiguous user turns mid-task, and a closing message. Deterministic in ``seed``."""
    rng = random.Random(seed)
    units: list[Unit] = []
    n_call = 0
    for task in range(tasks):
        module = rng.choice(MODULES)
        feature = rng.choice(WORDS)
        path = f"{module}/{feature}.py"
        test = f"tests/test_{feature}.py"
        verb = rng.choice(("fix the failing test in", "add a retry option to", "speed up", "clean up the logging in",
                           "make the timeout configurable in", "rename the helper in"))
        unit = Unit(f"task {task + 1}: {verb} {path}")
        unit.messages.append({"role": "user", "content": f"Please {verb} {path}; {test} covers it."})
        calls = rng.randint(*calls_per_task)
        for k in range(calls):
            n_call += 1
            cid = f"call_{seed}_{n_call}"
            kind = rng.random()
            if k == 0 or kind < 0.3:
                target = path if rng.random() < 0.7 else f"{rng.choice(MODULES)}/{rng.choice(WORDS)}.py"  # dead ends too
                args, name = {"path": target}, "read_file"
                result = _code(rng, target, rng.randint(8, 30))
            elif kind < 0.45:
                name, args = "grep", {"pattern": f"{feature}_", "path": module}
                result = "\n".join(f"{module}/{rng.choice(WORDS)}.py:{rng.randint(1, 400)}: {feature}_{rng.randint(0, 9)}(x)"
                                   for _ in range(rng.randint(2, 8)))
            elif kind < 0.7:
                name, args = "edit_file", {"path": path, "old": f"{feature}_{k}", "new": f"{feature}_{k}_v2"}
                result = f"edited {path}: 1 replacement"
            else:
                cmd = rng.choice((f"python -m pytest -q {test}", f"ruff check {module}", f"python -m pytest -q {test} -k {feature}",
                                  "git diff --stat"))
                name, args = "bash", {"command": cmd}
                failed = rng.random() < 0.35
                result = (f"$ {cmd}\nFAILED {test}::test_{feature} - AssertionError: expected {rng.randint(1, 9)}\n1 failed"
                          if failed else f"$ {cmd}\n{rng.randint(3, 40)} passed in {rng.randint(1, 9)}.{rng.randint(0, 9)}s")
            unit.messages.append({"role": "assistant", "content": "", "tool_calls": [_call(cid, name, args)]})
            unit.messages.append({"role": "tool", "tool_call_id": cid, "name": name, "content": result})
            if rng.random() < 0.12:
                unit.messages.append({"role": "assistant", "content": f"The {feature} check still fails; trying the other branch."})
                unit.messages.append({"role": "user", "content": rng.choice(AMBIGUOUS)})
        unit.messages.append({"role": "assistant", "content": f"Done: {verb} {path}; {test} passes. Changed {path} "
                                                               f"({rng.randint(2, 30)} lines)."})
        units.append(unit)
    return units


# -- STAR ------------------------------------------------------------------------------------------
def _strip(value: Any) -> str:
    text = str(value).strip()
    m = re.match(r'^api\.is_equal_to\((.*)\)$', text)
    if m:
        text = m.group(1).strip()
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] == '"' else text


def _star_files(folder: Path, persona: str) -> list[Path]:
    rows = []
    with open(folder / "index.tsv", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if persona in (row.get("persona_names") or "").split("|"):
                f = folder / "dialogues_service" / row["file"]
                if f.exists():
                    rows.append((int(row["start_unix"] or 0), f))
    return [f for _, f in sorted(rows)]


def star_units(folder: str | Path, persona: str = "Jane Doe", *, limit: int | None = None) -> list[Unit]:
    """One unit per STAR dialogue of ``persona`` (time order, the uncompressed service dialogues):
    user and wizard utterances verbatim, each KB query a ``kb_<api>`` tool call with its
    constraints as arguments and the returned item as the tool result."""
    folder = Path(folder)
    units: list[Unit] = []
    for f in _star_files(folder, persona)[:limit]:
        d = json.loads(f.read_text(encoding="utf-8"))
        unit = Unit(f"star {d.get('DialogueID')}")
        pending: dict[str, Any] | None = None
        n = 0
        for e in d.get("Events", []):
            agent, action = e.get("Agent"), e.get("Action")
            if agent == "Wizard" and action == "query":
                n += 1
                args = {k: _strip(v) for c in e.get("Constraints", []) for k, v in c.items()}
                pending = _call(f"star_{d.get('DialogueID')}_{n}", f"kb_{e.get('APIName', 'query')}", args)
                unit.messages.append({"role": "assistant", "content": "", "tool_calls": [pending]})
            elif agent == "KnowledgeBase" and action == "return_item" and pending is not None:
                unit.messages.append({"role": "tool", "tool_call_id": pending["id"], "name": pending["function"]["name"],
                                      "content": json.dumps(e.get("Item", {}), sort_keys=True)})
                pending = None
            elif (agent == "User" and action == "utter") or (agent == "Wizard" and action in ("utter", "pick_suggestion")):
                text = (e.get("Text") or "").strip()
                if text:
                    unit.messages.append({"role": "user" if agent == "User" else "assistant", "content": text})
        if pending is not None:  # a query without a result: drop the dangling call
            unit.messages = [m for m in unit.messages if m.get("tool_calls") != [pending]]
        while unit.messages and unit.messages[0]["role"] != "user":
            unit.messages.pop(0)  # a unit starts with the user's words
        if unit.messages:
            units.append(unit)
    return units


def abcd_units(path: str | Path) -> list[Unit]:
    """One unit per ABCD sample dialogue: customer and agent turns, each agent action a tool call
    named after the action button (``pull-up-account`` -> ``pull_up_account``) with its values
    as arguments, and the action's text as the result."""
    units: list[Unit] = []
    for d in json.loads(Path(path).read_text(encoding="utf-8")):
        unit = Unit(f"abcd {d['convo_id']}")
        for n, (orig, delex) in enumerate(zip(d["original"], d["delexed"])):
            speaker, text = orig
            if speaker == "action":
                button = (delex.get("targets") or [None, None, "action"])[2] or "action"
                values = (delex.get("targets") or [None, None, None, []])[3] or []
                cid = f"abcd_{d['convo_id']}_{n}"
                name = re.sub(r"\W+", "_", str(button)).strip("_")
                unit.messages.append({"role": "assistant", "content": "", "tool_calls": [_call(cid, name, {"values": values})]})
                unit.messages.append({"role": "tool", "tool_call_id": cid, "name": name, "content": text})
            elif text.strip():
                unit.messages.append({"role": "user" if speaker == "customer" else "assistant", "content": text})
        while unit.messages and unit.messages[0]["role"] != "user":
            unit.messages.pop(0)
        units.append(unit)
    return units


# -- playing units as an agent would ---------------------------------------------------------------------
def message_tokens(counter: Any, message: dict[str, Any]) -> int:
    """Tokens of one chat message as a request carries it (content plus tool calls)."""
    text = message.get("content") or ""
    if message.get("tool_calls"):
        text += " " + json.dumps(message["tool_calls"], sort_keys=True)
    return counter.count(text)


def common_prefix_tokens(counter: Any, a: Sequence[dict[str, Any]], b: Sequence[dict[str, Any]]) -> int:
    """Tokens of the longest run of leading messages ``a`` and ``b`` share byte for byte."""
    total = 0
    for x, y in zip(a, b):
        if x != y:
            break
        total += message_tokens(counter, x)
    return total


@dataclass
class PlayLog:
    """What :class:`ScriptedAgent` measured: each request's tokens, the prompt-prefix tokens a
    request rewrote (the tokens of the previous request after the first message that changed),
    the fold card's tokens per request that carried one, and the folds made."""

    request_tokens: list[int] = field(default_factory=list)
    rewritten_tokens: list[int] = field(default_factory=list)
    card_tokens: list[int] = field(default_factory=list)
    folds: int = 0
    refused: int = 0
    errors: list[str] = field(default_factory=list)


class ScriptedAgent:
    """Plays units into ``conv`` as an agent would: before each assistant message it compiles the
    context (a "request"); when ``fold_at_close`` and the request carries a fold card, the agent
    answers it by folding the last closed unit (from the card's first turn to the turn before the
    unit in progress) with the ``fold_unit`` tool, as a model would from the printed menu."""

    def __init__(self, conv: Any, *, fold_at_close: bool, counter: Any, **overrides: Any) -> None:
        self.conv = conv
        self.fold_at_close = fold_at_close
        self.counter = counter
        self.overrides = overrides
        self.log = PlayLog()
        self._previous: list[dict[str, Any]] | None = None

    def _request(self) -> Any:
        ctx = self.conv.context(**self.overrides)
        messages = ctx.messages
        if self._previous is not None:
            shared = common_prefix_tokens(self.counter, self._previous, messages)
            before = sum(message_tokens(self.counter, m) for m in self._previous)
            self.log.rewritten_tokens.append(before - shared)
        self._previous = messages
        self.log.request_tokens.append(ctx.total_tokens)
        if ctx.fold_menu is not None:
            self.log.card_tokens.append(ctx.fold_menu.tokens)
        return ctx

    def play(self, units: Sequence[Unit]) -> PlayLog:
        """Append every unit's messages; each assistant message is preceded by a request. The
        agent knows where its units begin, as a model knows what it finished: on a fold card it
        folds from the card's first turn to the end of the last finished unit the card lists."""
        unit_start = 1
        for unit in units:
            unit_start = self.conv.archive.last_seq(self.conv.id) + 1
            for message in unit.messages:
                if message["role"] == "assistant":
                    ctx = self._request()
                    menu = ctx.fold_menu
                    if self.fold_at_close and menu is not None and menu.first_seq < unit_start:
                        last = min(menu.last_seq, unit_start - 1)
                        answer = self.conv.handle_tool_call("fold_unit", {"from": menu.first_seq, "to": last})
                        if answer.startswith("error:"):
                            self.log.refused += 1
                            self.log.errors.append(answer)
                        else:
                            self.log.folds += 1
                self.conv.append(message)
        self._request()
        return self.log


def default_data_dir() -> Path:
    """``../shared/data`` next to the repository checkout (evaluation data, never shipped)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "shared" / "data"
        if candidate.is_dir():
            return candidate
    return Path("/work/shared/data")


def iter_messages(units: Sequence[Unit]) -> Iterator[dict[str, Any]]:
    for unit in units:
        yield from unit.messages


__all__ = ["PlayLog", "ScriptedAgent", "Unit", "abcd_units", "coding_session", "star_units"]
