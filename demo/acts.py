"""The seed demo's three acts: compaction, forgetting, consolidation (issues 7 and 20).

:func:`run_demo` plays :mod:`memfold.demo.session` through the public API only (the
:class:`~memfold.MemFold` facade, its conversations, memory store and consolidation pass; no SQL)
on a :class:`~memfold.LogicalClock`, and returns the transcript as lines plus the figures behind
it. The transcript holds every line of the seed program's trace (``../shared/seed/demo-trace.txt``,
issue 20, point 1) in the program's format, each figure read from memfold: the meter is the
compiled context's size (``window_status``), a compaction is :meth:`Conversation.compact` when a
turn takes the window over the budget, the chatter count is the turns that left the compiled
context, COLD/WARM/HOT are its cards by depth and its hot tail. memfold's own checks (every card
expanded back to the exact words, the archive's sha256) follow the trace. The same inputs give
the same bytes on every run (DESIGN.md §4.10): nothing printed depends on the database path or
the wall clock.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from .. import BudgetError, InvalidInput, LLMSettings, LLMSummarizer, LogicalClock, MemFold, SeedSummarizer, SeedWordCounter
from . import session as S


@dataclass
class MeterRow:
    """One meter reading: ``tokens`` (words) of the compiled context right after turn ``turn`` was
    appended, the ``usable`` budget, and ``after`` the size once compaction ran (``None`` if none);
    ``cards`` the cards that compaction made, ``chatter_left`` the turns it took out of the window."""

    turn: int
    turn_id: int
    tokens: int
    usable: int
    after: int | None = None
    cards: list[str] = field(default_factory=list)
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


def _line(turn) -> str:
    """A turn as the seed program prints it: ``user: text``, ``tool: name -> text``."""
    return SeedWordCounter.line(turn.role, turn.content, turn.name)


def _show(turn) -> str:
    """A turn as memfold's checks print it: its id, role and text."""
    who = turn.role + (f"({turn.name})" if turn.name else "")
    return f"t{turn.id} {who}: {turn.content}"


#: the demo's window with room for anything: reads the window as it stands, even over the budget
#: (right after an append, or with ``--llm`` when an endpoint failed and the originals stayed)
_UNBOUNDED = S.WINDOW.with_overrides(budget_tokens=10**6, output_reserve_tokens=0)


def _visible(conv, turns) -> tuple[set[str], set[str]]:
    """The refs of the turns the compiled context shows verbatim, and of those one of its cards
    keeps as a line (a seed card keeps a turn's text whole or not at all). Right after an append
    the window may be over the budget: it is read unbounded then."""
    ctx = conv.context(**_UNBOUNDED.to_dict())
    verbatim = {r for r in ctx.refs if r.startswith("t")}
    card_text = "\n".join(m["content"] for r, m in zip(ctx.refs, ctx.messages) if r.startswith("c"))
    return verbatim, {f"t{t.id}" for t in turns if t.content and t.content in card_text}


def act_compaction(mf: MemFold, out: list[str]) -> list[MeterRow]:
    """Act 1: the seed session under a 40-word budget; returns the meter rows."""
    w = S.WINDOW
    out += [*S.NOT_CONDENSATION, "",
            f"== Act 1: compaction == ticket {S.CONVERSATION} ({S.NAMESPACE}): budget {w.budget_tokens} words, "
            f"hot tail {w.hot_turns} turns.",
            "The meter is the compiled context's size right after each turn; a turn that takes it over the",
            "budget runs compact(): chatter leaves the window (never the archive), decisions fold warm, then cold."]
    conv = mf.conversation(S.CONVERSATION, namespace=S.NAMESPACE)
    settings = w.to_dict()
    rows: list[MeterRow] = []
    for n, message in enumerate(S.TURNS, start=1):
        mf.clock.set(n)
        turn_id = conv.append(message, compact=False)  # the seed compacts only over the budget (below)
        turn = conv.turns_by_id([turn_id])[turn_id]
        status = conv.window_status(**settings)
        row = MeterRow(n, turn_id, status["tokens"], status["usable"])
        rows.append(row)
        text = _line(turn)
        shown = text[:len(turn.role) + 2 + S.SHOWN_CHARS]
        out.append(f"  turn {n:2d}: window {row.tokens}/{row.usable} {'OVER' if status['over'] else 'ok'}  "
                   f"(+ {shown})")
        if not status["over"]:
            continue
        history = conv.history()
        verbatim, _ = _visible(conv, history)
        report = conv.compact(**settings)
        shown, kept = _visible(conv, history)
        row.after, row.cards = report.after_tokens, list(report.cards)
        # chatter: turns shown verbatim before the compaction that no longer show at all
        row.chatter_left = [f"t{t.id}" for t in history if f"t{t.id}" in verbatim - shown - kept]
        out.append(f"          -> COMPACT: dropped {len(row.chatter_left)} chatter turn(s), folded older decisions "
                   f"warm/cold; window now {row.after}/{row.usable}")
    out += ["", *_final_window(conv)]
    return rows


def _final_window(conv) -> list[str]:
    """The final compiled context as the seed prints it: COLD (cards of depth 2+), WARM (depth-1
    cards) and HOT (the hot tail's turns)."""
    try:
        ctx = conv.context(**S.WINDOW.to_dict())
    except BudgetError:  # --llm with a failing endpoint: the originals stayed, over the budget
        ctx = conv.context(**_UNBOUNDED.to_dict())
    depth = {i.ref: i.depth for i in conv.catalog_items()}
    texts = {}
    for ref, message in zip(ctx.refs, ctx.messages):
        if ref.startswith("c"):
            texts[ref] = message["content"].split(" ", 1)[1]  # after its [cN] id
    turns = {f"t{t.id}": t for t in conv.history()}
    cold = [t for r, t in texts.items() if depth[r] >= 2]
    warm = [t for r, t in texts.items() if depth[r] == 1]
    hot = [_line(turns[r]) for r in ctx.hot_refs if r in turns]
    return ["  Final window state (this is all the model still sees):",
            f"    COLD : {' '.join(cold) if cold else '(none)'}",
            f"    WARM : {warm!r}",
            f"    HOT  : {hot!r}"]


def _checks(conv) -> list[str]:
    """memfold's checks after the trace: every card in the window expanded back to its verbatim
    turns (* = out of the window, still in the archive), compared with the script, and the
    archive's sha256 of every turn."""
    ctx = conv.context(**_UNBOUNDED.to_dict())
    history = conv.history()
    verbatim, kept = _visible(conv, history)
    visible = verbatim | kept
    script = {n: m for n, m in enumerate(S.TURNS, start=1)}
    lines = ["== memfold's checks: nothing is lost ==",
             "Each card in the final window expanded down to its verbatim turns (* = out of the window,",
             "still in the archive):"]
    exact = True
    for ref in [r for r in ctx.refs if r.startswith("c")]:
        info = conv.describe(ref)
        lines.append(f"expand {ref} --turns (depth {info['depth']}, covers {' '.join(info['children'])}):")
        for t in conv.expand(ref, to_turns=True):
            original = script[t.seq]
            exact = exact and t.content == original["content"] and t.role == original["role"]
            lines.append(f" {' ' if f't{t.id}' in visible else '*'} {_show(t)}")
    bad = conv.verify()
    n = len(history)
    lines.append(f"word for word: {'every' if exact else 'NOT every'} expanded turn equals the script; "
                 f"archive sha256 check: {n - len(bad)}/{n} turns intact")
    return lines


def _ranking(mf: MemFold, label: str, out: list[str]) -> list[tuple[str, float]]:
    """Print the active store ranked by score without counting it as a read (``touch=False``)."""
    hits = mf.memory.read(S.NAMESPACE, 10, types="semantic", touch=False)
    out.append(f"  {label}")
    for h in hits:
        out.append(f"    {h.score:.2f}  {h.record.content}")
    return [(h.record.content, round(h.score, 2)) for h in hits]


_TIMES = {1: "once", 2: "twice"}


def act_forgetting(mf: MemFold, out: list[str]) -> dict[str, list[tuple[str, float]]]:
    """Act 2: the forgetting seed trace (issue 3, point 5); returns the three rankings."""
    start = S.FORGETTING_START
    out += ["== Act 2: forgetting ==",
            f"Semantic store {S.NAMESPACE}: score = importance x 0.5^(age / {S.HALF_LIFE}) x "
            f"(1 + {S.ACCESS_WEIGHT} x reads); t counts ticks from tick {start}."]
    mf.clock.set(start)
    mf.memory.set_policy(S.NAMESPACE, "semantic", half_life=S.HALF_LIFE, access_weight=S.ACCESS_WEIGHT)
    for content, key, importance in S.FACTS:
        mf.memory.write(S.NAMESPACE, "semantic", content, key=key, importance=importance)
    rankings = {"t0": _ranking(mf, "Read-time ranking at t=0 (importance x recency x access):", out)}
    top = None
    for t in S.NAME_READS:
        mf.clock.set(start + t)
        (top,) = mf.memory.read(S.NAMESPACE, 1, types="semantic")
        out.append(f"  t={t}: the agent reads its top memory: {top.record.content}")
    mf.clock.set(start + S.INSPECT_AT)
    read = mf.memory.get(top.record.id)
    slot = (read.key or read.content).rsplit(".", 1)[-1]
    times = _TIMES.get(read.access_count, f"{read.access_count} times")
    rankings["t6"] = _ranking(mf, f"At t={S.INSPECT_AT}, importance has decayed with age; '{slot}' was accessed "
                                  f"{times}:", out)
    content, key, importance = S.NEW_PREFERENCE
    outcome = mf.memory.write_outcome(S.NAMESPACE, "semantic", content, key=key, importance=importance)
    out.append(f"  (write \"{content}\" into slot {key}: {outcome.action.value})")
    out.append(f"  SUPERSESSION: {S.SUPERSESSION_NOTE}")
    links = []
    for record in mf.memory.list(S.NAMESPACE, "semantic", key=key, include_inactive=True):
        out.append(f"    [{record.status}] {record.content}")
        if record.superseded_by:
            links.append(f"#{record.id} superseded by #{record.superseded_by}")
    out.append(f"  (links kept both ways: {', '.join(links)})")
    mf.memory.set_policy(S.NAMESPACE, "semantic", capacity=S.CAPACITY)
    content, key, importance = S.FIFTH_FACT
    active = len(mf.memory.read(S.NAMESPACE, 100, types="semantic", touch=False))
    outcome = mf.memory.write_outcome(S.NAMESPACE, "semantic", content, key=key, importance=importance)
    evicted = [mf.memory.get(i) for i in outcome.evicted]
    out.append(f"  EVICTION: a {_ordinal(active + 1)} fact arrives but capacity is {S.CAPACITY}; the weakest is evicted.")
    for record in evicted:
        out.append(f"    evicted (lowest score): {record.content}")
    rankings["final"] = _ranking(mf, "Active store now:", out)
    out.append("  Nothing was deleted: retired and evicted records keep their bytes and links "
               "(memfold memories DB --all).")
    return rankings


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def act_consolidation(mf: MemFold, out: list[str]) -> dict[str, Any]:
    """Act 3: the consolidation seed case (issue 5, point 3); returns what the pass did."""
    ns = S.EPISODES_NAMESPACE
    out += ["== Act 3: consolidation ==", "  Raw episodic log (what happened):"]
    ids = []
    for n, text in enumerate(S.EPISODES, start=1):
        tick = S.CONSOLIDATION_START + n
        mf.clock.set(tick)
        record = mf.memory.write(ns, "episodic", text, event_time=tick)
        ids.append(record.id)
        out.append(f"    t{n}: {record.content}")
    mf.clock.set(S.CONSOLIDATION_START + len(S.EPISODES) + 1)
    run = mf.consolidate(ns)
    derived = [r for r in mf.memory.list(ns) if r.type != "episodic"]
    facts = [f"{r.key} = {r.content}" for r in derived if r.type == "semantic"]
    rules = [r.content for r in derived if r.type == "procedural"]
    active_episodes = [r for r in mf.memory.list(ns) if r.type == "episodic"]
    out += ["", "  After the sleep-time consolidation pass:",
            f"    -> SEMANTIC facts   : {facts!r}",
            f"    -> PROCEDURAL rules : {rules!r}",
            f"    -> episodic log pruned: {run.episodes_consumed} raw events distilled and cleared"]
    episode_label = {f"record:{i}": f"t{n}" for n, i in enumerate(ids, start=1)}
    statuses = [mf.memory.get(i).status for i in ids]
    out.append(f"  (memfold run #{run.id} {run.status}: the active log now holds {len(active_episodes)} episodes; "
               f"the {statuses.count('consumed')} are marked consumed, bytes kept)")
    for record in sorted(derived, key=lambda r: (r.type != "semantic", r.id)):
        sources = " ".join(episode_label.get(p, p) for p in record.provenance)
        out.append(f"  ({'fact' if record.type == 'semantic' else 'rule'} #{record.id} cites {sources})")
    again = mf.consolidate(ns)
    out.append(f"  (running the pass again consumes {again.episodes_consumed} and writes "
               f"{again.facts_written + again.rules_written}: each episode is consumed once)")
    return {"run": run.id, "facts": facts, "rules": rules, "episodes": S.EPISODES, "statuses": statuses,
            "episodes_consumed": run.episodes_consumed}


def run_demo(db_path: str | os.PathLike, *, llm: bool = False) -> DemoResult:
    """Play the three acts into a new database at ``db_path``.

    :param db_path: where to write the demo's SQLite file; it must not exist yet (or be empty),
        so that every run starts from the same state and prints the same bytes.
    :param llm: fold with the :class:`~memfold.LLMSummarizer` and consolidate with the LLM
        extractor of the ``MEMFOLD_LLM_*`` endpoint (issue 20, point 2) instead of the seed's
        deterministic parts; the output then depends on the model (and no longer matches the seed
        trace). Without it the demo stays offline even when those variables are set.
    :returns: a :class:`DemoResult` (transcript lines, meter, rankings, consolidation).
    :raises InvalidInput: if ``db_path`` already holds data, or ``llm`` with no endpoint set.
    """
    settings = LLMSettings.from_env() if llm else None
    if llm and settings is None:
        raise InvalidInput("memfold demo --llm needs an endpoint: set MEMFOLD_LLM_BASE_URL and MEMFOLD_LLM_MODEL "
                           "(and MEMFOLD_LLM_API_KEY when it needs one)")
    if os.path.exists(db_path) and os.path.getsize(db_path) > 0:
        raise InvalidInput(f"{db_path} already exists: the demo writes a fresh database; pass a new path "
                           "or delete the file")
    mf = MemFold(db_path, clock=LogicalClock(), token_counter=SeedWordCounter(), embedder=None,
                 summarizer=LLMSummarizer(settings) if settings else SeedSummarizer(), window=S.WINDOW,
                 extractor="llm" if settings else "rules")
    try:
        out: list[str] = []
        if settings:
            out += [f"(memfold demo --llm: cards by {mf.summarizer.id}, facts and rules by {mf.extractor.id}, "
                    f"from {settings.base_url}; the seed trace's figures assume the seed's own summarizer)", ""]
        meter = act_compaction(mf, out)
        out.append("")
        rankings = act_forgetting(mf, out)
        out.append("")
        consolidation = act_consolidation(mf, out)
        out.append("")
        out += _checks(mf.conversation(S.CONVERSATION, create=False))
    finally:
        mf.close()
    return DemoResult(out, meter, rankings, consolidation)
