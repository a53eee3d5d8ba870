"""A seeded randomized rights checker and the revoked-context exposure figure (issue 15, points 9-10).

Invariants checked (DESIGN.md §4.9, §4.11-§4.13): no operation that returns text shows an item
whose labels the reader lacks, a fork never shows its parent's state after the fork point (nor the
parent the fork's), quoted material stays in the conversation that quoted it, and erased text is
shown by nothing.

:func:`build_world` makes a small, deterministic world from a seed: a root conversation and a
fork of it, labelled turns (some quoted, some standing instructions, some erased later), labelled
episodes consolidated into facts, folds and roll-ups, relabels and revokes of turns and episodes,
a protected record superseded under other labels. Every turn and episode carries one unique
*marker* word (``Zvabc``), and the world remembers, for each marker, its source: a turn (its
conversation, seq, current labels, quoted or erased) or an episode (its labels). :func:`check`
then runs reader/operation pairs drawn from the same seed (compiled context, search, describe,
expand, history, export, memory reads, the protected listing and rendering, the recall tool calls,
on the root and on the fork) and reports every marker an output shows that its reader may not
see: a *violation*. The suite runs 2,000 pairs (``tests/test_rights_checker.py``), the benchmark
10,000 (``bench/bench_rights.py``); the goal is 0.

:func:`revoked_exposure` is seed note 003's metric: a conversation is replayed with folding on;
midway some sources are revoked (a label the reader lacks is added) or erased; then, for the
rest of the replay, every compiled context, search and expansion the reader gets is checked for
any revoked marker. The figure is the share of those outputs that show one (goal 0).
"""

from __future__ import annotations

import json
import random
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MARKER = re.compile(r"\bZv[a-z]{3}\b", re.IGNORECASE)
LABELS = ("legal", "hr", "finance")
READERS: tuple[tuple[str, ...] | None, ...] = (None, (), ("legal",), ("hr",), ("finance",), ("legal", "hr"),
                                               ("legal", "hr", "finance"), ("secret",), ("legal", "secret"))


def _marker(n: int) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return "Zv" + letters[(n // 676) % 26] + letters[(n // 26) % 26] + letters[n % 26]


@dataclass
class Source:
    """Where a marker came from: a turn (``kind="turn"``) or an episode (``kind="episode"``)."""

    kind: str
    ref: str  #: ``t12`` or ``record:3``
    conversation: str | None = None
    seq: int = 0
    quoted: bool = False
    erased: bool = False


@dataclass
class World:
    """What :func:`build_world` made: the facade, its conversations and every marker's source."""

    mf: Any
    path: Path
    conversations: list[str]
    sources: dict[str, Source] = field(default_factory=dict)
    fork_point: int = 0

    def labels(self, marker: str) -> set[str]:
        """The current labels of a marker's source."""
        src = self.sources[marker]
        if src.kind == "turn":
            return set(self.mf.archive.get(int(src.ref[1:])).labels)
        return set(self.mf.memory.get(int(src.ref.split(":")[1])).labels)

    def allowed(self, marker: str, conversation: str, reader: tuple[str, ...] | None, *, via: str) -> bool:
        """May ``reader`` see ``marker`` in ``conversation``? ``via="namespace"`` for what the
        namespace shares by design (memory records), anything else for conversation state."""
        src = self.sources.get(marker.capitalize())
        if src is None:
            return True  # not a marker of this world
        if src.erased:
            return False
        labels = self.labels(marker.capitalize())
        if via == "namespace":
            labels.discard("secret")  # a fact is read from the masked text
        if reader is not None and not labels <= set(reader):
            return False
        if via == "namespace" or src.kind == "episode":
            return via == "namespace"
        if conversation == src.conversation:
            return True
        if src.quoted:
            return False
        # the fork sees the root's turns up to the fork point; the root never sees the fork's
        return conversation == "fork" and src.conversation == "root" and src.seq <= self.fork_point


def build_world(seed: int, directory: str | Path, *, turns: int = 36) -> World:
    """A deterministic world for the checker (see the module docstring)."""
    from .. import LogicalClock, MemFold, WindowSettings

    rng = random.Random(seed)
    path = Path(directory) / f"rights-{seed}.db"
    mf = MemFold(path, clock=LogicalClock(), token_counter="words", embedder=None,
                 window=WindowSettings(budget_tokens=120, output_reserve_tokens=0, hot_turns=3, rollup_fanin=3,
                                       leaf_chunk_tokens=30, card_target_tokens=10))
    world = World(mf, path, ["root", "fork"])
    root = mf.conversation("root", namespace="acme")
    count = 0

    def new_marker() -> str:
        nonlocal count
        count += 1
        return _marker(count * 37 + seed % 37)

    def append(conv: Any, name: str) -> None:
        marker = new_marker()
        labels = sorted(rng.sample(LABELS, rng.choice([0, 0, 1, 1, 2])))
        kind = rng.random()
        metadata: dict[str, Any] = {}
        if kind < 0.15:
            text = f"Never ship the crate to {marker} depot."  # a standing instruction: a protected record
        elif kind < 0.25:
            text = f"Forwarded note from another ticket: the courier code word is {marker}"
            metadata = {"quoted_from": "ticket-elsewhere"}
        elif kind < 0.32:
            labels = sorted(set(labels) | {"secret"})
            text = f"the vault word is {marker} keep it private"
        else:
            text = f"order {marker} ships from dock {rng.randint(1, 9)} on Monday with {rng.choice(['care', 'haste'])}"
        turn_id = conv.append({"role": rng.choice(["user", "user", "assistant"]) if not text.startswith("Never")
                               else "user", "content": text, "labels": labels, "metadata": metadata})
        turn = mf.archive.get(turn_id)
        world.sources[marker] = Source("turn", f"t{turn_id}", name, turn.seq, quoted=bool(metadata))

    for _ in range(turns):
        append(root, "root")
    for _ in range(6):
        marker = new_marker()
        labels = sorted(rng.sample(LABELS, rng.choice([0, 1, 1, 2])))
        what = rng.choice(["I live in {m}.", "My favourite band is {m}.", "My favourite city is {m}."])
        rec = mf.remember("acme", "episodic", "user: " + what.format(m=marker), labels=labels)
        world.sources[marker] = Source("episode", f"record:{rec.id}")
    mf.consolidate("acme")
    root.compact(target_tokens=0)
    world.fork_point = mf.archive.last_seq("root") - rng.randint(0, 4)
    fork = root.fork("fork", at=world.fork_point)
    for _ in range(turns // 3):
        append(root, "root")
        append(fork, "fork")
    root.compact(target_tokens=0)
    fork.compact(target_tokens=0)
    # relabels and revokes of turns and episodes, after the folds (the cards go stale)
    turn_markers = [m for m, s in world.sources.items() if s.kind == "turn"]
    for marker in rng.sample(turn_markers, 6):
        mf.relabel(world.sources[marker].ref, sorted(set(rng.sample(LABELS, 1)) | world.labels(marker)))
    for marker in rng.sample(turn_markers, 3):
        labels = world.labels(marker)
        if labels - {"secret"}:
            mf.revoke_label(world.sources[marker].ref, sorted(labels - {"secret"})[0])
    for marker in rng.sample([m for m, s in world.sources.items() if s.kind == "episode"], 2):
        mf.relabel(world.sources[marker].ref, ["hr"])
    # a labelled decision replaced by an open one (its "no longer in force" line is labelled)
    old_marker, new_marker_ = new_marker(), new_marker()
    old = mf.protected.add(f"Route parcels through {old_marker} hub.", conversation_id="root", labels=["legal"])
    tid = root.append({"role": "user", "content": f"note {old_marker} hub decision", "labels": ["legal"]})
    world.sources[old_marker] = Source("turn", f"t{tid}", "root", mf.archive.get(tid).seq)
    new = mf.protected.supersede(old.id, f"Route parcels through {new_marker_} hub.", labels=[])
    tid2 = root.append({"role": "user", "content": f"note {new_marker_} hub decision"})
    world.sources[new_marker_] = Source("turn", f"t{tid2}", "root", mf.archive.get(tid2).seq)
    assert new.id
    # erase a few turns (their markers must show nowhere)
    for marker in rng.sample(turn_markers, 3):
        mf.erase(turn_ids=[int(world.sources[marker].ref[1:])])
        world.sources[marker].erased = True
    return world


def _texts(op: str, world: World, conv_id: str, reader: tuple[str, ...] | None, rng: random.Random,
           items: list[str]) -> list[tuple[str, str]]:
    """Run one operation; returns ``[(via, text)]`` of everything it showed."""
    from ..memory.errors import MemfoldError

    mf = world.mf
    conv = mf.conversation(conv_id)
    rdr = None if reader is None else list(reader)
    try:
        if op == "context":
            ctx = conv.context(budget=rng.choice([400, 800, 2000]), reader=rdr)
            return [("namespace" if (m.get("content") or "").startswith("Memories:") else "conversation",
                     m.get("content") or "") for m in ctx.messages]
        if op == "search":
            marker = rng.choice(list(world.sources))
            return [("conversation", h.snippet) for h in conv.search(marker, limit=10, reader=rdr)]
        if op == "describe":
            return [("conversation", json.dumps(conv.describe(rng.choice(items), reader=rdr)))]
        if op == "expand":
            return [("conversation", getattr(i, "content", None) or getattr(i, "text", ""))
                    for i in conv.expand(rng.choice(items), to_turns=rng.random() < 0.5, reader=rdr)]
        if op == "history":
            return [("conversation", t.content) for t in conv.history(reader=rdr)]
        if op == "export":
            return [("conversation", conv.export_jsonl(reader=rdr))]
        if op == "read":
            return [("namespace", r.record.content) for r in mf.read("acme", 50, reader=rdr)]
        if op == "protected":
            rendering = mf.protected.render(conv_id, reader=rdr)
            return ([("conversation", r.text) for r in mf.protected.active_for(conv_id, reader=rdr)]
                    + [("conversation", m["content"]) for m in rendering.messages])
        if op == "tool":
            name = rng.choice(["search", "describe", "expand"])
            args = ({"query": rng.choice(list(world.sources))} if name == "search"
                    else {"id": rng.choice(items), "to_turns": rng.random() < 0.5})
            return [("conversation", conv.handle_tool_call(name, args, reader=rdr))]
    except MemfoldError:
        return []  # a refusal (PermissionDenied, NotFound) shows nothing
    raise ValueError(f"unknown operation {op!r}")


OPERATIONS = ("context", "search", "describe", "expand", "history", "export", "read", "protected", "tool")


def check(world: World, pairs: int, seed: int) -> dict[str, Any]:
    """Run ``pairs`` random reader/operation pairs; returns counts and the first violations."""
    rng = random.Random(seed * 7919 + 1)
    cards = [f"c{c.id}" for c in world.mf.parts.cards.family_cards("root")]
    turns = [s.ref for s in world.sources.values() if s.kind == "turn"]
    items = cards + turns
    violations: list[dict[str, Any]] = []
    outputs = shown = 0
    by_op: dict[str, int] = {op: 0 for op in OPERATIONS}
    for _ in range(pairs):
        op = rng.choice(OPERATIONS)
        conv_id = rng.choice(world.conversations)
        reader = rng.choice(READERS)
        by_op[op] += 1
        for via, text in _texts(op, world, conv_id, reader, rng, items):
            outputs += 1
            for m in set(MARKER.findall(text)):
                shown += 1
                if not world.allowed(m, conv_id, reader, via=via):
                    violations.append({"op": op, "conversation": conv_id, "reader": reader, "via": via,
                                       "marker": m, "source": world.sources[m.capitalize()].__dict__,
                                       "text": text[:300]})
    return {"pairs": pairs, "outputs": outputs, "markers_shown": shown, "violations": len(violations),
            "by_operation": by_op, "first_violations": violations[:10]}


def run_checker(seed: int, pairs: int, directory: str | Path | None = None) -> dict[str, Any]:
    """Build a world from ``seed`` and check ``pairs`` pairs on it."""
    with tempfile.TemporaryDirectory() as tmp:
        world = build_world(seed, directory or tmp)
        try:
            return check(world, pairs, seed)
        finally:
            world.mf.close()


def revoked_exposure(seed: int, *, turns: int = 120, directory: str | Path | None = None) -> dict[str, Any]:
    """Seed note 003's metric (see the module docstring): the share of compiled contexts, search
    hits and expansions after a revocation or erasure that show any revoked marker."""
    from .. import LogicalClock, MemFold, Reader, WindowSettings

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        mf = MemFold(Path(directory or tmp) / f"exposure-{seed}.db", clock=LogicalClock(), token_counter="words",
                     embedder=None, window=WindowSettings(budget_tokens=150, output_reserve_tokens=0, hot_turns=3,
                                                          rollup_fanin=3, leaf_chunk_tokens=30,
                                                          card_target_tokens=10))
        conv = mf.conversation("r", namespace="acme")
        reader = Reader.of(["team"])
        markers: dict[str, int] = {}
        revoked: set[str] = set()
        outputs = exposed = 0
        counts = {"contexts": 0, "search_hits": 0, "expansions": 0}
        exposed_by = {"contexts": 0, "search_hits": 0, "expansions": 0}

        def observe(kind: str, text: str) -> None:
            nonlocal outputs, exposed
            outputs += 1
            counts[kind] += 1
            if revoked & {m.capitalize() for m in MARKER.findall(text)}:
                exposed += 1
                exposed_by[kind] += 1

        for i in range(turns):
            marker = _marker(i * 13 + seed)
            tid = conv.append({"role": "user", "content": f"shipment {marker} leaves dock {i % 7} today",
                               "labels": ["team"]})
            markers[marker] = tid
            if i == turns // 2:  # midway: revoke a third, erase a tenth of what came so far
                pool = sorted(markers)
                for m in rng.sample(pool, len(pool) // 3):
                    mf.relabel(f"t{markers[m]}", ["team", "restricted"])
                    revoked.add(m)
                for m in rng.sample(sorted(set(pool) - revoked), len(pool) // 10):
                    mf.erase(turn_ids=[markers[m]])
                    revoked.add(m)
            if i > turns // 2:
                ctx = conv.context(reader=reader)
                observe("contexts", "\n".join(m.get("content") or "" for m in ctx.messages))
                for hit in conv.search(rng.choice(sorted(revoked)), limit=10, reader=reader):
                    observe("search_hits", hit.snippet)
                for ref in [r for r in ctx.refs if r.startswith("c")][:3]:
                    try:
                        text = "\n".join(getattr(x, "content", None) or getattr(x, "text", "")
                                         for x in conv.expand(ref, to_turns=True, reader=reader))
                    except Exception:  # noqa: BLE001 - a refusal shows nothing
                        continue
                    observe("expansions", text)
        mf.close()
    return {"outputs": outputs, "exposed": exposed, "share": exposed / outputs if outputs else 0.0,
            "by_kind": counts, "exposed_by_kind": exposed_by, "revoked_sources": len(revoked)}


__all__ = ["World", "build_world", "check", "revoked_exposure", "run_checker"]
