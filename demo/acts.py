"""The seed demo's three acts: compaction, forgetting, consolidation (issue 7).

:func:`run_demo` plays :mod:`memfold.demo.session` through the public API only (the
:class:`~memfold.MemFold` facade, its conversations, memory store and consolidation pass; no SQL)
on a :class:`~memfold.LogicalClock` with the :class:`~memfold.WordCounter`, and returns the
transcript as lines plus the figures behind it. The same inputs give the same bytes on every run
(DESIGN.md §4.10): nothing printed depends on the database path or the wall clock.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from .. import InvalidInput, LogicalClock, MemFold
from . import session as S

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass
class MeterRow:
    """One meter reading: ``tokens`` (words) of the compiled context right after turn ``turn`` was
    appended, the ``usable`` budget, and ``after`` the size once compaction ran (``None`` if none)."""

    turn: int
    turn_id: int
    tokens: int
    usable: int
    after: int | None = None
    cards: list[str] = field(default_factory=list)
    folded: list[str] = field(default_factory=list)
    chatter_left: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dict(self.__dict__)


@dataclass
class DemoResult:
    """What :func:`run_demo` printed (``lines``) and the figures behind it."""

    lines: list[str]
    meter: list[MeterRow]
    rankings: dict[str, list[tuple[str, float]]]
    consolidation: dict[str, Any]

    @property
    def text(self) -> str:
        """The transcript, one line per line, ending in a newline."""
        return "\n".join(self.lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the transcript lines, the meter, the rankings and the consolidation."""
        return {"lines": self.lines, "meter": [m.to_dict() for m in self.meter],
                "rankings": {k: [[c, s] for c, s in v] for k, v in self.rankings.items()},
                "consolidation": self.consolidation, "budget_tokens": S.WINDOW.budget_tokens,
                "hot_turns": S.WINDOW.hot_turns}


def _who(turn) -> str:
    return turn.role + (f"({turn.name})" if turn.name else "")


def _show(turn) -> str:
    """A turn as one line: role, content, and its tool calls written out."""
    text = turn.content
    for call in turn.tool_calls or ():
        text = (text + " " if text else "") + f"call {call['function']['name']}({call['function']['arguments']})"
    return f"t{turn.id} {_who(turn)}: {text}"


def _in_window(turn, card_texts: list[str], turn_refs: set[str]) -> bool:
    """Whether anything of ``turn`` is still in the window: the turn itself, or one of its
    sentences kept by a card."""
    if f"t{turn.id}" in turn_refs:
        return True
    sentences = [s.strip() for s in _SENTENCE.split(turn.content) if s.strip()]
    return any(s in text for s in sentences for text in card_texts)


def is_chatter(turn) -> bool:
    """Whether the script marks this turn as small talk (:data:`memfold.demo.session.CHATTER`)."""
    return turn.seq in S.CHATTER


def _window_view(conv, *, unbounded: bool = False) -> tuple[list[str], set[str]]:
    """The texts of the cards in the compiled context and the refs of the turns shown verbatim.
    ``unbounded``: the catalog as it stands, even over budget (a budget too big to compact)."""
    settings = S.WINDOW.with_overrides(budget_tokens=10**6) if unbounded else S.WINDOW
    ctx = conv.context(**settings.to_dict())
    card_texts = [m["content"] for m in ctx.messages if m["role"] == "system"]
    return card_texts, {r for r in ctx.refs if r.startswith("t")}


def act_compaction(mf: MemFold, out: list[str]) -> list[MeterRow]:
    """Act 1: the ten-turn ticket under a 40-word budget; returns the meter rows."""
    w = S.WINDOW
    out += [
        "== Act 1: compaction ==",
        f"Ticket {S.CONVERSATION} ({S.NAMESPACE}). Tokens are words; budget {w.budget_tokens}, hot tail "
        f"{w.hot_turns} turns, roll-up fan-in {w.rollup_fanin}.",
        "A turn is one archived message: a user line, an assistant tool call or a tool result.",
        "The meter shows the compiled context's size right after each turn. Over budget, the oldest",
        "turns fold into summary cards; cards roll up a level deeper three at a time.",
        "",
    ]
    conv = mf.conversation(S.CONVERSATION, namespace=S.NAMESPACE)
    settings = w.to_dict()
    rows: list[MeterRow] = []
    seen_cards: set[str] = set()
    for n, message in enumerate(S.TURNS, start=1):
        mf.clock.set(n)
        turn_id = conv.append(message)
        turn = conv.turns_by_id([turn_id])[turn_id]
        status = conv.window_status(**settings)
        row = MeterRow(n, turn_id, status["tokens"], status["usable"])
        flag = " OVER" if status["over"] else ""
        out.append(f"turn {n:2d}: window {row.tokens}/{row.usable}{flag:<5}  {_show(turn)}")
        rows.append(row)
        if not status["over"]:
            continue
        before_texts, before_refs = _window_view(conv, unbounded=True)
        visible_before = [t for t in conv.history() if _in_window(t, before_texts, before_refs)]
        report = conv.compact(**settings)
        after_texts, after_refs = _window_view(conv)
        row.after = report.after_tokens
        row.cards = list(report.cards)
        new_leaf = [c for c in report.cards if conv.describe(c)["depth"] == 1]
        row.folded = [f"t{t.id}" for c in new_leaf for t in conv.expand(c, to_turns=True)]
        row.chatter_left = [f"t{t.id}" for t in visible_before
                            if is_chatter(t) and not _in_window(t, after_texts, after_refs)]
        seen_cards.update(report.cards)
        what = []
        for c in report.cards:
            info = conv.describe(c)
            what.append(f"{c} (depth {info['depth']}: {' '.join(info['children'])})")
        left = len(row.chatter_left)
        out.append(f"          compacted: {', '.join(what)}; {left} chatter turn{'s' if left != 1 else ''} "
                   f"left the window{' (' + ' '.join(row.chatter_left) + ')' if left else ''}; "
                   f"now {row.after}/{row.usable}")
    out += ["", *_final_window(mf, conv), ""]
    out += _expand_dropped(conv)
    return rows


def _final_window(mf: MemFold, conv) -> list[str]:
    """The final compiled context as its cold (depth >= 2), warm (depth 1) and hot parts."""
    ctx = conv.context(**S.WINDOW.to_dict())
    depth = {i.ref: i.depth for i in conv.catalog_items()}
    cold, warm, older, hot = [], [], [], []
    turns = {f"t{t.id}": t for t in conv.history()}
    for ref, message in zip(ctx.refs, ctx.messages):
        if ref.startswith("c"):
            (cold if depth[ref] >= 2 else warm).append(f"  {message['content']}")
        elif ref in ctx.hot_refs:
            hot.append(f"  {_show(turns[ref])}")
        else:
            older.append(f"  {_show(turns[ref])}")
    lines = [f"Final window: {ctx.total_tokens}/{ctx.usable_tokens} words "
             f"({', '.join(f'{k} {v}' for k, v in ctx.sections.items() if v)})",
             "cold (roll-ups, depth 2+: what is still in force):", *(cold or ["  -"]),
             "warm (depth-1 cards: names, numbers, tool results):", *(warm or ["  -"])]
    if older:
        lines += ["older turns, not folded yet:", *older]
    lines += [f"hot (the newest {S.WINDOW.hot_turns} turns verbatim; the question stays with its tool call "
              "while it fits):", *hot]
    card_texts = [m["content"] for m in ctx.messages if m["role"] == "system"]
    chatter = [t for t in conv.history() if is_chatter(t)]
    still = [f"t{t.id}" for t in chatter if _in_window(t, card_texts, set(ctx.refs))]
    lines.append(f"$180.00 in warm: {'yes' if any('$180.00' in x for x in warm) else 'NO'}; "
                 f"chatter ({' '.join(f't{t.id}' for t in chatter)}) in the window: "
                 f"{'none' if not still else ' '.join(still)}")
    return lines


def _shown(turn, card_texts: list[str], turn_refs: set[str]) -> bool:
    """Whether a turn's text (or, for a bare tool call, the call) is still in the window."""
    if turn.content:
        return _in_window(turn, card_texts, turn_refs)
    return f"t{turn.id}" in turn_refs


def _expand_dropped(conv) -> list[str]:
    """Expand every card in the window down to its turns and check each against the script."""
    ctx = conv.context(**S.WINDOW.to_dict())
    card_texts = [m["content"] for m in ctx.messages if m["role"] == "system"]
    refs = {r for r in ctx.refs if r.startswith("t")}
    script = {n: m for n, m in enumerate(S.TURNS, start=1)}
    lines = ["Nothing is lost: expand each card in the window down to its verbatim turns",
             "(* = dropped from the window, still in the archive):"]
    exact = True
    for ref in [r for r in ctx.refs if r.startswith("c")]:
        turns = conv.expand(ref, to_turns=True)
        lines.append(f"expand {ref} --turns:")
        for t in turns:
            mark = " " if _shown(t, card_texts, refs) else "*"
            original = script[t.seq]
            same = t.content == original["content"] and (t.tool_calls or None) == original.get("tool_calls")
            exact = exact and same
            lines.append(f" {mark} {_show(t)}")
    bad = conv.verify()
    n = len(conv.history())
    lines.append(f"word for word: {'every' if exact else 'NOT every'} expanded turn equals the script; "
                 f"archive sha256 check: {n - len(bad)}/{n} turns intact")
    return lines


def _ranking(mf: MemFold, label: str, out: list[str]) -> list[tuple[str, float]]:
    """Print the active store ranked by score without counting it as a read (``touch=False``)."""
    hits = mf.memory.read(S.NAMESPACE, 10, types="semantic", touch=False)
    out.append(label)
    for h in hits:
        out.append(f"  {h.score:.2f}  {h.record.content}")
    out.append("  -> " + " / ".join(f"{h.score:.2f}" for h in hits))
    return [(h.record.content, round(h.score, 2)) for h in hits]


def act_forgetting(mf: MemFold, out: list[str]) -> dict[str, list[tuple[str, float]]]:
    """Act 2: the forgetting seed trace (issue 3, point 5); returns the three rankings."""
    start = S.FORGETTING_START
    out += ["== Act 2: forgetting ==",
            f"Semantic store {S.NAMESPACE}: score = importance x 0.5^(age / {S.HALF_LIFE}) x "
            f"(1 + {S.ACCESS_WEIGHT} x reads); t counts ticks from tick {start}.", ""]
    mf.clock.set(start)
    mf.memory.set_policy(S.NAMESPACE, "semantic", half_life=S.HALF_LIFE, access_weight=S.ACCESS_WEIGHT)
    for content, key, importance in S.FACTS:
        mf.memory.write(S.NAMESPACE, "semantic", content, key=key, importance=importance)
    rankings = {"t0": _ranking(mf, "t=0, four facts written:", out)}
    for t in S.NAME_READS:
        mf.clock.set(start + t)
        (top,) = mf.memory.read(S.NAMESPACE, 1, types="semantic")
        out.append(f"t={t}: the agent reads its top memory: {top.record.content}")
    mf.clock.set(start + S.INSPECT_AT)
    rankings["t6"] = _ranking(mf, f"t={S.INSPECT_AT}, after two reads of the name (reads raise the score, not the age):",
                              out)
    content, key, importance = S.NEW_PREFERENCE
    outcome = mf.memory.write_outcome(S.NAMESPACE, "semantic", content, key=key, importance=importance)
    out.append(f"t={S.INSPECT_AT}: write \"{content}\" ({importance:.2f}) into slot {key}: {outcome.action.value}")
    for record in mf.memory.list(S.NAMESPACE, "semantic", key=key, include_inactive=True):
        link = (f", superseded by #{record.superseded_by}" if record.superseded_by
                else f", supersedes #{record.supersedes}" if record.supersedes else "")
        out.append(f"  #{record.id} [{record.status}] {record.content}{link}")
    mf.memory.set_policy(S.NAMESPACE, "semantic", capacity=S.CAPACITY)
    content, key, importance = S.FIFTH_FACT
    outcome = mf.memory.write_outcome(S.NAMESPACE, "semantic", content, key=key, importance=importance)
    evicted = [mf.memory.get(i) for i in outcome.evicted]
    out.append(f"capacity {S.CAPACITY}: write \"{content}\" ({importance:.2f}): evicts "
               + (", ".join(f"#{r.id} \"{r.content}\" [{r.status}]" for r in evicted) or "nothing"))
    rankings["final"] = _ranking(mf, "the active store now:", out)
    out.append("Nothing was deleted: retired and evicted records keep their bytes and links "
               "(memfold memories DB --all).")
    return rankings


def act_consolidation(mf: MemFold, out: list[str]) -> dict[str, Any]:
    """Act 3: the consolidation seed case (issue 5, point 3); returns what the pass did."""
    ns = S.EPISODES_NAMESPACE
    out += ["== Act 3: consolidation ==", f"Raw episodes in {ns}:"]
    ids = []
    for n, text in enumerate(S.EPISODES, start=1):
        tick = S.CONSOLIDATION_START + n
        mf.clock.set(tick)
        record = mf.memory.write(ns, "episodic", text, event_time=tick)
        ids.append(record.id)
        out.append(f"  t{n} #{record.id} [{record.status}] {text}")
    mf.clock.set(S.CONSOLIDATION_START + len(S.EPISODES) + 1)
    run = mf.consolidate(ns)
    out.append(f"consolidate {ns}: run #{run.id} {run.status}, {run.episodes_consumed} episodes consumed, "
               f"{run.facts_written} fact, {run.rules_written} rule:")
    derived = [r for r in mf.memory.list(ns) if r.type != "episodic"]
    episode_label = {f"record:{i}": f"t{n}" for n, i in enumerate(ids, start=1)}
    facts, rules = [], []
    for record in sorted(derived, key=lambda r: (r.type != "semantic", r.id)):
        shown = f"{record.key} = {record.content}" if record.type == "semantic" else record.content
        (facts if record.type == "semantic" else rules).append(shown)
        kind = "fact" if record.type == "semantic" else "rule"
        sources = " ".join(episode_label.get(p, p) for p in record.provenance)
        out.append(f"  {kind} #{record.id}: {shown}   (from {sources})")
    out.append("Episodes after the pass:")
    statuses = []
    for n, i in enumerate(ids, start=1):
        record = mf.memory.get(i)
        statuses.append(record.status)
        out.append(f"  t{n} #{record.id} [{record.status}] {record.content}")
    again = mf.consolidate(ns)
    out.append(f"Running the pass again consumes {again.episodes_consumed} and writes "
               f"{again.facts_written + again.rules_written}: each episode is consumed once.")
    return {"run": run.id, "facts": facts, "rules": rules, "episodes": S.EPISODES, "statuses": statuses,
            "episodes_consumed": run.episodes_consumed}


def run_demo(db_path: str | os.PathLike) -> DemoResult:
    """Play the three acts into a new database at ``db_path``.

    :param db_path: where to write the demo's SQLite file; it must not exist yet (or be empty),
        so that every run starts from the same state and prints the same bytes.
    :returns: a :class:`DemoResult` (transcript lines, meter, rankings, consolidation).
    :raises InvalidInput: if ``db_path`` already holds data.
    """
    if os.path.exists(db_path) and os.path.getsize(db_path) > 0:
        raise InvalidInput(f"{db_path} already exists: the demo writes a fresh database; pass a new path "
                           "or delete the file")
    mf = MemFold(db_path, clock=LogicalClock(), token_counter="words", embedder=None)
    try:
        out = ["memfold demo: one support ticket, start to finish, on a logical clock (no network, no LLM).", ""]
        meter = act_compaction(mf, out)
        out.append("")
        rankings = act_forgetting(mf, out)
        out.append("")
        consolidation = act_consolidation(mf, out)
    finally:
        mf.close()
    return DemoResult(out, meter, rankings, consolidation)
