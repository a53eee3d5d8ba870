"""Literal prefilters for the rule regexes: a pattern that cannot match is not run (issue 18, point 4).

The constraint extractor (:mod:`memfold.window.constraints`, :mod:`memfold.window.directives`)
and the secret detector (:mod:`memfold.window.secrets`) read every appended turn with a few
hundred regular expressions, most of them long alternations that Python's engine tries at every
position of the text, and almost all of them fail on ordinary chat. A pattern's *required
literals* are worked out once from its parsed form (:func:`required_literals`,
:func:`requirement`): strings of which every match must contain one (a tree of them: each part of
a sequence, one branch of an alternation). Before the pattern runs, :class:`Prefiltered` tests
that requirement on the text; when it fails the pattern cannot match, and the answer is given
without running it (``None``, no matches, the text unchanged). When it holds, or when no
requirement could be worked out, the pattern runs as before, so every result is the pattern's
own: a prefilter changes what is computed, never what is found.

Since round 10 the requirement is not tested by substring tests on each call: the literals of
all the patterns of a group (the rule modules together, the secret detector apart) are found in
a text once (:class:`_Index`, through one trigram per literal, each candidate confirmed by a
substring test), and a call tests the pattern's number against the text's candidates (the
patterns whose first test, :func:`_necessary`, holds) and the rest of its requirement as set
tests on the literals found. The same truth values as the substring tests, at a fraction of the
cost. ``match`` and ``fullmatch`` are gated too, unless the pattern starts with a fixed character.

Why a literal's absence proves no match: the set is built so that each path through the pattern
passes through one of its strings (a sequence needs one of its parts, an alternation one of every
branch, a repetition its body only when it must repeat at least once; anchors, look-arounds,
classes and back-references add nothing). Literals are ASCII only and compared lowercased, which
is right for case-sensitive and case-insensitive patterns alike as long as the text holds no
character that Python's case-insensitive matching pairs with an ASCII letter (the Kelvin sign, the
long s, the dotted and dotless i: :data:`_ASCII_FOLDS`); a text holding one runs every pattern.
``tests/test_prefilter.py`` checks the analysis against the patterns themselves, and that the
extractor and the detector give identical results with and without prefilters on every phrasing
set and benchmark text in the repository.
"""

from __future__ import annotations

import re
import sys
from functools import partial
from itertools import chain
from typing import Any

try:  # Python 3.11+
    from re import _constants as _c, _parser as _p  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - older layouts
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _p  # type: ignore[no-redef]

#: characters outside ASCII that case-insensitive matching pairs with an ASCII letter ("K" KELVIN
#: SIGN with k, "ſ" with s, "İ"/"ı" with i): a text holding one is never prefiltered
#: (every such character in Unicode; ``tests/test_prefilter.py`` checks the whole range)
_ASCII_FOLDS = re.compile("[\u0130\u0131\u017f\u212a]")
#: literal sets larger than this are not worth testing one by one
MAX_LITERALS = 64


def _literal_char(code: int) -> str | None:
    ch = chr(code)
    return ch.lower() if ch.isascii() else None


def _alternatives(items: list) -> frozenset[str] | None:
    """Strings of which every match of the sequence ``items`` contains one, or None (no such set).
    Neighbouring parts that match only a few fixed strings are joined ("h" then "i|ello|ey" is
    "hi|hello|hey"); of the candidates, the most selective is taken (:func:`_better`)."""
    best: frozenset[str] | None = None
    run: frozenset[str] = frozenset([""])

    def consider(found: frozenset[str] | None) -> None:
        nonlocal best
        if found is None or not found or "" in found:
            return
        if best is None or _better(found, best):
            best = found

    for op, av in items:
        exact = _exact(op, av)
        if exact is not None and len(run) * len(exact) <= MAX_LITERALS:
            consider(run)  # the parts so far, and this part alone, are requirements too
            consider(exact)
            run = frozenset(a + b for a in run for b in exact)
            continue
        consider(run)
        run = frozenset([""]) if exact is None else exact
        if exact is None:
            consider(_node(op, av))
    consider(run)
    return best


def _exact(op: Any, av: Any) -> frozenset[str] | None:
    """Every string the part matches, when they are few and ASCII (zero-width parts match ""),
    else None."""
    if op is _c.LITERAL:
        ch = _literal_char(av)
        return frozenset([ch]) if ch is not None else None
    if op is _c.IN:
        return _node(op, av)
    if op in (_c.AT, _c.ASSERT, _c.ASSERT_NOT):
        return frozenset([""])
    if op is _c.SUBPATTERN:
        return _exact_sequence(list(av[-1]))
    if op is _c.BRANCH:
        out = _union(av[1], _exact_sequence)
        return out if out is not None and len(out) <= MAX_LITERALS else None
    if op is _c.MAX_REPEAT or op is _c.MIN_REPEAT:
        low, high, body = av
        if high > 1:
            return None
        found = _exact_sequence(list(body))
        if found is None:
            return None
        return found | {""} if low == 0 else found
    return None


def _exact_sequence(items: list) -> frozenset[str] | None:
    out = frozenset([""])
    for op, av in items:
        found = _exact(op, av)
        if found is None or len(out) * len(found) > MAX_LITERALS:
            return None
        out = frozenset(a + b for a in out for b in found)
    return out


def _union(branches: Any, of: Any) -> frozenset[str] | None:
    """The strings of an alternation: ``of(branch)`` of every branch together, or None when one
    branch has none (``of``: :func:`_exact_sequence` or :func:`_alternatives`)."""
    out: set[str] = set()
    for branch in branches:
        found = of(list(branch))
        if found is None:
            return None
        out |= found
    return frozenset(out)


def _better(a: frozenset[str], b: frozenset[str]) -> bool:
    """Is literal set ``a`` the better test than ``b``: its shortest string longer (up to three
    characters, which few texts hold by chance), then fewer strings (each is one substring test)?"""
    return (min(3, *map(len, a)), -len(a)) > (min(3, *map(len, b)), -len(b))


def _node(op: Any, av: Any) -> frozenset[str] | None:
    if op is _c.LITERAL:
        ch = _literal_char(av)
        return frozenset([ch]) if ch is not None else None
    if op is _c.IN:
        chars = []
        for sub_op, sub_av in av:
            if sub_op is not _c.LITERAL:
                return None  # a range, a category or a negated class: anything
            ch = _literal_char(sub_av)
            if ch is None:
                return None
            chars.append(ch)
        return frozenset(chars) if chars else None
    if op is _c.SUBPATTERN:
        return _alternatives(list(av[-1]))
    if op is _c.BRANCH:
        return _union(av[1], _alternatives)
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT) or op is getattr(_c, "POSSESSIVE_REPEAT", None):
        low, _high, body = av
        return _alternatives(list(body)) if low >= 1 else None
    if op is getattr(_c, "ATOMIC_GROUP", None):
        return _alternatives(list(av))
    return None  # AT, ASSERT, ASSERT_NOT, ANY, NOT_LITERAL, CATEGORY, GROUPREF...: nothing required


#: strings a run of fixed parts may stand for in a requirement (more: the run is cut there)
RUN_STRINGS = 16
#: substring tests one requirement may hold (more: the flat literal set is used)
MAX_TESTS = 600


def _all_of(items: list) -> Any:
    """The requirement of a sequence: what each of its parts requires, all of it (``("and",
    [...])``; a run of fixed parts is one ``("lit", strings)``), or None when no part requires
    anything."""
    reqs: list[Any] = []
    run: frozenset[str] = frozenset([""])

    def flush() -> None:
        if run and "" not in run:
            reqs.append(("lit", run))

    for op, av in items:
        exact = _exact(op, av)
        if exact is not None:
            if len(run) * len(exact) <= RUN_STRINGS:
                run = frozenset(a + b for a in run for b in exact)
                continue
            flush()
            run = exact if len(exact) <= RUN_STRINGS else frozenset([""])
            if len(exact) > RUN_STRINGS and "" not in exact:
                reqs.append(("lit", exact))
            continue
        flush()
        run = frozenset([""])
        found = _requirement_of(op, av)
        if found is not None:
            reqs.append(found)
    flush()
    if not reqs:
        return None
    return reqs[0] if len(reqs) == 1 else ("and", reqs)


def _requirement_of(op: Any, av: Any) -> Any:
    """The requirement of one part (see :func:`_all_of`), or None."""
    if op is _c.SUBPATTERN:
        return _all_of(list(av[-1]))
    if op is getattr(_c, "ATOMIC_GROUP", None):
        return _all_of(list(av))
    if op is _c.BRANCH:
        branches = []
        for branch in av[1]:
            found = _all_of(list(branch))
            if found is None:
                return None  # one way through requires nothing
            branches.append(found)
        return branches[0] if len(branches) == 1 else ("or", branches)
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT) or op is getattr(_c, "POSSESSIVE_REPEAT", None):
        low, _high, body = av
        return _all_of(list(body)) if low >= 1 else None
    found = _node(op, av)
    return None if found is None or "" in found else ("lit", found)


def _tests(req: Any) -> int:
    return len(req[1]) if req[0] == "lit" else sum(_tests(r) for r in req[1])


def _expression(req: Any) -> str:
    """Python source testing a requirement on ``low`` (each literal written as its repr)."""
    if req[0] == "lit":
        return "(" + " or ".join(f"{lit!r} in low" for lit in sorted(req[1], key=len, reverse=True)) + ")"
    if req[0] == "and":
        # every part must hold, in any order: the part of fewest substring tests first, so a text
        # lacking it is turned down after those few (round 7; the same truth value)
        return "(" + " and ".join(_expression(r) for r in sorted(req[1], key=_tests)) + ")"
    return "(" + " or ".join(_expression(r) for r in req[1]) + ")"


def _requirement_tree(pattern: re.Pattern) -> Any:
    """The requirement of ``pattern`` (a tree of ``("lit", strings)``, ``("and", [...])`` and
    ``("or", [...])``), the flat literal set when the tree is too long, or None."""
    if not isinstance(pattern.pattern, str):
        return None
    try:
        req = _all_of(list(_p.parse(pattern.pattern, pattern.flags)))
    except Exception:  # noqa: BLE001 - anything unexpected: no prefilter, the pattern runs
        return None
    if req is None or _tests(req) > MAX_TESTS:
        literals = required_literals(pattern)
        return None if literals is None else ("lit", literals)
    return req


def requirement(pattern: re.Pattern) -> str | None:
    """A Python expression over ``low`` (the lowercased text) that is true for every text the
    pattern can match in: a sequence requires each of its parts, an alternation one of its
    branches, a literal run one of its strings (see the module docstring); None when nothing is
    known or the test would be too long."""
    req = _requirement_tree(pattern)
    return None if req is None else _expression(req)


def required_literals(pattern: re.Pattern) -> frozenset[str] | None:
    """Lowercase ASCII strings of which every match of ``pattern`` contains one (matched against
    the lowercased text), or None when no such set is known (the pattern may match anywhere)."""
    if not isinstance(pattern.pattern, str):
        return None
    try:
        parsed = _p.parse(pattern.pattern, pattern.flags)
    except Exception:  # noqa: BLE001 - anything unexpected: no prefilter, the pattern runs
        return None
    found = _alternatives(list(parsed))
    if found is None or len(found) > MAX_LITERALS:
        return None
    return found


# --- present literals (round 10) -----------------------------------------------------------
#
# Testing a requirement one substring test at a time cost about half of a user turn's
# extraction (round 10's profile: a few hundred literals per pattern, a few hundred pattern calls
# per turn, almost all turned down). Instead, every literal of every prefiltered pattern is kept
# in one index per group (:class:`_Group`), and the literals present in a text are found once per text
# (:func:`_info`): the short ones by substring tests, the others through one trigram of each
# (a text holding a literal holds each of its trigrams, so the literals whose trigram the text
# holds are the only candidates, each then confirmed by a substring test). A requirement is then
# tested on that set, one ``isdisjoint`` in C per literal group: the same truth value as its
# substring tests, at a fraction of the cost. A text read inside a recent one (a sentence of a
# turn, a clause of a sentence) takes the literals of that text that it holds: each ASCII string
# in ``text.lower()`` is in ``root.lower()`` when ``text`` is part of ``root`` (ASCII characters
# lowercase one to one and no other character lowercases to an ASCII one, :data:`_ASCII_FOLDS`
# aside), so no literal is missed.

#: frequent English trigrams a literal's index trigram avoids where it can: a rarer one makes
#: fewer candidates to confirm (any choice finds the same literals; this only decides the work)
_COMMON_TRIGRAMS = frozenset(
    "the and ing ion ent her for tha nth int ere tio ter est ers ati hat ate all eth hes ver his "
    "oft ith fth sth oth res ont are you not was rea ear con com pro".split())
_LETTER_RANK = {c: i for i, c in enumerate("etaoinshrdlcumwfgypbvkjxqz")}


def _trigram_cost(tri: str) -> tuple:
    """How often a trigram is expected in chat text (lower is rarer)."""
    plain = sum(1 for c in tri if not c.isalpha())  # spaces and punctuation are everywhere
    return (tri in _COMMON_TRIGRAMS, plain, -sum(_LETTER_RANK.get(c, 13) for c in tri if c.isalpha()), tri)


def _index_trigram(literal: str) -> tuple[str, str, str]:
    """The trigram of ``literal`` (three characters or more) it is indexed under, as a tuple of
    characters (the form :meth:`_Index.present` reads a text in)."""
    best = min((literal[i:i + 3] for i in range(len(literal) - 2)), key=_trigram_cost)
    return tuple(best)  # type: ignore[return-value]


class _Index:
    """Every literal of the prefiltered patterns: the short ones (under three characters) and the
    others by their index trigram; and for each literal, the patterns whose first test
    (:func:`_necessary`) holds it. Built on first use after patterns were added, never changed."""

    __slots__ = ("literals", "short", "by_gram", "keys", "patterns_of")

    def __init__(self, literals: frozenset[str], firsts: dict[int, frozenset[str]]) -> None:
        self.literals = literals
        self.short = tuple(sorted(lit for lit in literals if len(lit) < 3))
        # each literal under the trigram fewest literals share (then the rarer in chat text):
        # fewer candidates to confirm per text (any choice finds the same literals)
        shared: dict[str, int] = {}
        for lit in literals:
            for tri in {lit[i:i + 3] for i in range(len(lit) - 2)}:
                shared[tri] = shared.get(tri, 0) + 1
        by_gram: dict[tuple, list[str]] = {}
        for lit in sorted(literals):
            if len(lit) >= 3:
                tri = min((lit[i:i + 3] for i in range(len(lit) - 2)), key=lambda t: (shared[t], _trigram_cost(t)))
                by_gram.setdefault(tuple(tri), []).append(lit)
        self.by_gram = {gram: tuple(lits) for gram, lits in by_gram.items()}
        self.keys = frozenset(self.by_gram)
        patterns_of: dict[str, set[int]] = {}
        for pid, first in firsts.items():
            for lit in first:
                patterns_of.setdefault(lit, set()).add(pid)
        self.patterns_of = {lit: frozenset(pids) for lit, pids in patterns_of.items()}

    def present(self, low: str) -> frozenset[str]:
        """The literals in ``low`` (a lowercased text): exactly those, by the trigram argument."""
        grams = self.keys.intersection(zip(low, low[1:], low[2:]))
        return frozenset(filter(low.__contains__, chain(self.short, chain.from_iterable(map(self.by_gram.__getitem__, grams)))))

    def candidates(self, found: frozenset[str]) -> frozenset[int]:
        """The patterns whose first test holds on a text holding ``found``."""
        patterns_of = self.patterns_of
        return frozenset().union(*[patterns_of[lit] for lit in found if lit in patterns_of])


class _Group:
    """The patterns that read the same texts (a module's, or the rule modules' together): their
    literals and first tests, the index built from them, and the texts read lately."""

    def __init__(self, name: str) -> None:
        self.name = name
        #: find every literal of a text up front (:class:`_Index`), or test each call's
        #: requirement by substring tests on the lowercased text (a group of few patterns, each
        #: text read by few of them: finding every literal first would cost more)
        self.indexed = True
        self.literals: set[str] = set()  #: every literal of the group's patterns
        self.firsts: dict[int, frozenset[str]] = {}  #: each pattern's first test, by pattern number
        #: the index in use (a one-element list: the methods read it each call); None until
        #: built, and again when patterns are added (:meth:`current_index`)
        self.index: list[_Index | None] = [None]
        #: the last text read: (text, the literals present in it or None when it may not be
        #: prefiltered, the index they were found with, the patterns whose first test holds on it)
        self.last: list = [("", None, object(), None)]
        #: recent texts whose literals were found from the index ("roots"), newest first
        self.roots: list[tuple[str, frozenset, _Index]] = []
        #: recent texts read inside a root, newest first (:func:`_info`)
        self.parts: list[tuple[str, frozenset, _Index]] = []
        #: texts read lately (the rules go back and forth between a turn's sentences and clauses)
        self.seen: dict[str, tuple] = {}

    def current_index(self) -> _Index:
        index = self.index[0]
        if index is None:
            index = _Index(frozenset(self.literals), dict(self.firsts))
            self.index[0] = index
        return index

    def register(self, req: Any, first: frozenset[str]) -> int:
        """Add a pattern's literals and first test (the index is rebuilt on next use: texts read
        with the old one are read again). :returns: the pattern's number."""
        def walk(r: Any) -> None:
            if r[0] == "lit":
                self.literals.update(r[1])
            else:
                for part in r[1]:
                    walk(part)

        walk(req)
        pid = len(self.firsts)
        self.firsts[pid] = first
        self.index[0] = None
        return pid


_GROUPS: dict[str, _Group] = {}


def _group(name: str) -> _Group:
    found = _GROUPS.get(name)
    if found is None:
        found = _GROUPS.setdefault(name, _Group(name))
    return found


#: words of chat text so frequent that a literal group holding one is met by most texts
_FREQUENT = frozenset("a an the is are was be to of in on at for and or but not no it its i me my we our you your "
                      "he she they this that these those there what with as by from about have has had do so if "
                      "just can will all".split())


def _chance(req: Any) -> float:
    """A rough chance that a chat text meets ``req`` (speed only: which part is tested first, which
    literals :func:`_necessary` takes; any answer keeps the tests exact)."""
    if req[0] == "lit":
        total = 0.0
        for lit in req[1]:
            word = lit.strip(" ,.'")
            total += 0.9 if len(lit) < 2 else 0.5 if len(lit) < 3 or word in _FREQUENT else 0.1 if len(lit) < 4 \
                else 0.03 if len(lit) < 6 else 0.01
        return min(1.0, total)
    chances = [_chance(r) for r in req[1]]
    if req[0] == "and":
        return min(chances)
    return min(1.0, sum(chances))


def _necessary(req: Any) -> frozenset[str]:
    """Literals of which a text meeting ``req`` holds one: a group's own, one part's of a
    sequence (the one least often met, :func:`_chance`), every branch's of an alternation together."""
    if req[0] == "lit":
        return frozenset(req[1])
    if req[0] == "and":
        return _necessary(min(req[1], key=_chance))
    return frozenset().union(*(_necessary(r) for r in req[1]))


def _set_expression(req: Any, names: dict[str, frozenset]) -> str:
    """Python source testing ``req`` on ``found`` (the literals present in the text), each literal
    group bound in ``names``: true exactly where :func:`_expression`'s substring tests are."""
    if req[0] == "lit":
        name = f"_L{len(names)}"
        names[name] = frozenset(req[1])
        return f"not {name}.isdisjoint(found)"
    inner = [_set_expression(r, names) for r in (sorted(req[1], key=_chance) if req[0] == "and" else req[1])]
    return "(" + f" {req[0]} ".join(inner) + ")"


MAX_ROOTS = 6
#: recent texts read inside a root (sentences, clauses) kept to read their own parts from
MAX_PARTS = 4
MAX_SEEN = 64
#: texts longer than this are not kept as roots (a huge turn is not kept alive past the next few)
MAX_KEPT = 2_000_000
#: nor, longer than this, among the texts read lately (sentences and clauses are what repeat)
MAX_SEEN_CHARS = 20_000


def _info(group: _Group, text: str) -> tuple:
    """``(text, found, index, candidates)`` for ``text``, kept in the group's ``last``: the
    literals of the group's index present in ``text.lower()`` (None when the text holds a
    character that case-insensitive matching pairs with an ASCII letter, :data:`_ASCII_FOLDS`)
    and the patterns whose first test holds on them. A text inside a recent root keeps those of
    the root's literals it holds (module comment above)."""
    index = group.index[0]
    if index is None:
        index = group.current_index()
    seen = group.seen.get(text)
    if seen is not None and seen[2] is index:
        group.last[0] = seen = (text, seen[1], index, seen[3])  # this object: the next call tells it by identity
        return seen
    if not text.isascii() and _ASCII_FOLDS.search(text) is not None:
        out: tuple = (text, None, index, None)
    elif not group.indexed:
        out = (text, text.lower(), index, None)
    else:
        low = text.lower()
        # the smallest recent text holding this one gives the fewest literals to confirm (round
        # 13, speed only: a clause of a sentence keeps the sentence's literals it holds, not the turn's)
        for part, part_found, part_index in group.parts:
            if part_index is index and text in part:
                found = frozenset(filter(low.__contains__, part_found))
                break
        else:
            roots = group.roots
            for root, root_found, root_index in roots:
                if root_index is index and text in root:
                    found = root_found if len(text) == len(root) else frozenset(filter(low.__contains__, root_found))
                    break
            else:
                found = index.present(low)
                if len(text) <= MAX_KEPT:
                    roots.insert(0, (text, found, index))
                    del roots[MAX_ROOTS:]
                    group.parts.clear()
        if len(text) <= MAX_SEEN_CHARS and (not group.roots or group.roots[0][0] is not text):
            group.parts.insert(0, (text, found, index))
            del group.parts[MAX_PARTS:]
        out = (text, found, index, index.candidates(found))
    group.last[0] = out
    if len(text) <= MAX_SEEN_CHARS:
        if len(group.seen) >= MAX_SEEN:
            group.seen.clear()
        group.seen[text] = out
    return out


def read(text: str, group: str) -> None:
    """Find the literals of ``text`` for the patterns of ``group`` now, as a root its sentences
    and clauses share (a caller about to run the rules over a whole turn calls this first: each
    part of it then costs a few substring tests, not an index look-up of its own). Speed only:
    every answer is the same."""
    if type(text) is str and text:
        _info(_group(group), text)


#: a gated method, with the signature of the :class:`re.Pattern` method it stands for (round 11:
#: named parameters with the same defaults instead of ``*args, **kwargs``, which cost a dict per
#: call; a rule turn makes about 700 gated calls). Round 15: the source is compiled once per method
#: name and form (:func:`_factory`) and each pattern's method is a closure over its own raw method,
#: number and test, instead of a copy of this source compiled per pattern (0.15 ms each, about a
#: quarter of a user turn's extraction in a process's first few hundred turns); the test is one
#: function per pattern (:meth:`Prefiltered._test_function`), shared by its methods.
_TEMPLATE = '''
def _make(raw, pid, test, _LAST, _INDEX, _info, _SEEN_GET, _MAXSIZE):
    def {name}({params}):
        if type(string) is str:
            last = _LAST[0]
            if last[0] is not string and last[0] != string or last[2] is not _INDEX[0]:
                last = _SEEN_GET(string)  # a text read lately (round 13: no call to _info for it)
                if last is None or last[2] is not _INDEX[0]:
                    last = _info(string)
                else:
                    _LAST[0] = last
            found = last[1]
            if found is not None and ({condition}):
                return {absent}
        return raw({args})
    return {name}
'''
#: the condition under which the method answers without running the pattern, by form: the
#: pattern not among the text's candidates, or the rest of its requirement failing on the
#: literals found (``indexed``), that alone (``first``: a requirement of one literal group, whose
#: first test is the whole of it), or the substring tests failing on the lowercased text
#: (``substrings``, a group without an index: ``found`` is then the lowercased text)
_CONDITIONS = {"indexed": "pid not in last[3] or not test(found)", "first": "pid not in last[3]",
               "substrings": "not test(found)"}
#: each method's parameters (as :class:`re.Pattern` has them) and the call passing them on
_SIGNATURES = {name: ("string, pos=0, endpos=_MAXSIZE", "string, pos, endpos")
               for name in ("search", "match", "fullmatch", "finditer", "findall")}
_SIGNATURES["split"] = ("string, maxsplit=0", "string, maxsplit")
_SIGNATURES["sub"] = _SIGNATURES["subn"] = ("repl, string, count=0", "repl, string, count")
#: what each method answers on a text that cannot hold a match
_ABSENT = {"search": "None", "match": "None", "fullmatch": "None", "finditer": "iter(())", "findall": "[]",
           "split": "[string]", "sub": "string", "subn": "(string, 0)"}
_FACTORIES: dict[tuple[str, str], Any] = {}


def _factory(name: str, form: str) -> Any:
    """The maker of gated ``name`` methods of one form (:data:`_CONDITIONS`), compiled on first use."""
    made = _FACTORIES.get((name, form))
    if made is None:
        params, args = _SIGNATURES[name]
        namespace: dict[str, Any] = {}
        exec(_TEMPLATE.format(name=name, params=params, args=args, condition=_CONDITIONS[form],  # noqa: S102
                              absent=_ABSENT[name]), namespace)  # names only
        made = _FACTORIES[(name, form)] = namespace["_make"]
    return made


def _method(pattern: re.Pattern, name: str, group: _Group, pid: int, test: Any, trivial: bool) -> Any:
    """The method ``name`` of ``pattern`` behind its test: one Python call around it. ``test`` is
    the pattern's test function (:meth:`Prefiltered._test_function`: over the literals found, or
    over the lowercased text in a group that is not indexed); ``trivial``: the requirement is the
    first test itself (no test function is called)."""
    form = "substrings" if not group.indexed else "first" if trivial else "indexed"
    return _factory(name, form)(getattr(pattern, name), pid, test, group.last, group.index, partial(_info, group),
                                group.seen.get, sys.maxsize)


_SCANNING = ("search", "finditer", "findall", "split", "sub", "subn")
_ANCHORED = ("match", "fullmatch")


class Prefiltered:
    """A compiled pattern that is not run on a text lacking its required literals (module
    docstring). Same methods and attributes as :class:`re.Pattern` for ``str`` texts.

    The methods that scan the text (``search``, ``finditer``, ``findall``, ``sub``, ``subn``,
    ``split``) test the text first; ``match`` and ``fullmatch`` too when the pattern does not
    start with a fixed character (:func:`_fixed_start`: a leading optional lead, word run or
    alternation is tried at length before it fails). Each method is written for this pattern on
    first use (:func:`_method`): the pattern among the text's candidates, the rest of the
    requirement on the literals found (:func:`_info`), then the pattern."""

    __slots__ = ("_pattern", "_literals", "_group", "_pid", "_test", "_names", "_gated", "_built", "_testfn", "pattern",
                 "flags", "groups", "groupindex", "match", "fullmatch", *_SCANNING)

    def __init__(self, pattern: re.Pattern, test: str, gate_anchored: bool = False, req: Any = None,
                 group: str = "") -> None:
        self._pattern = pattern
        self._literals = test  #: the requirement's source (:func:`requirement`)
        if req is None:
            req = _requirement_tree(pattern)
        self._group = _group(group)
        self._pid = self._group.register(req, _necessary(req))
        self._names: dict[str, frozenset] = {}
        #: after the first test (the pattern among the text's candidates), the rest of the
        #: requirement on the literals found; a single literal group is the first test itself
        self._test = "True" if req[0] == "lit" else _set_expression(req, self._names)
        self._gated = _SCANNING + _ANCHORED if gate_anchored else _SCANNING
        self.pattern, self.flags = pattern.pattern, pattern.flags
        self.groups, self.groupindex = pattern.groups, pattern.groupindex
        self.match, self.fullmatch = pattern.match, pattern.fullmatch
        # the methods are written on first use (:meth:`_build`): importing pays nothing for the
        # gates, and a process that never searches with a pattern never for its
        self._built: dict[str, Any] = {}
        self._testfn: Any = None
        for name in self._gated:
            setattr(self, name, partial(self._first_call, name))

    def _test_function(self) -> Any:
        """The rest of the requirement as a function (compiled once, for all the gated methods):
        of the literals found (:func:`_set_expression`), or in a group without an index of the
        lowercased text (the substring tests of :func:`requirement`); None when the requirement
        is one literal group (the first test is all of it)."""
        if self._testfn is None:
            if not self._group.indexed:
                self._testfn = eval("lambda low: " + self._literals, {})  # noqa: S307 - reprs of literals
            elif self._test != "True":
                self._testfn = eval("lambda found: " + self._test, dict(self._names))  # noqa: S307 - names only
        return self._testfn

    def _lazy_test(self, found: Any) -> bool:
        """The test before it is compiled (the first text that needs it compiles it: a pattern
        that is never among a text's candidates never pays for it); the methods made before are
        made again with the compiled test (a method taken earlier keeps this one, the same answers)."""
        test = self._test_function()
        for name in list(self._built):
            self._make(name)
        return test(found)

    def _make(self, name: str) -> Any:
        trivial = self._group.indexed and self._test == "True"
        test = None if trivial else self._testfn if self._testfn is not None else self._lazy_test
        method = self._built[name] = _method(self._pattern, name, self._group, self._pid, test, trivial)
        setattr(self, name, method)
        return method

    def _first_call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        method = self._built.get(name)
        if method is None:  # a method taken before its first use still lands here: made once
            method = self._make(name)
        return method(*args, **kwargs)

    def _build(self) -> None:
        """Make every gated method now (:func:`_method`; each is otherwise made on its first
        use, so that a process pays only for the methods it calls)."""
        for name in self._gated:
            if name not in self._built:
                self._make(name)

    @property
    def unfiltered(self) -> re.Pattern:
        """The pattern itself."""
        return self._pattern

    def _absent(self, text: Any) -> bool:
        """True when ``text`` cannot hold a match (the requirement fails on it)."""
        if type(text) is not str:
            return False
        info = _info(self._group, text)
        found = info[1]
        if not self._group.indexed:
            return found is not None and not eval("lambda low: " + self._literals)(found)  # noqa: S307
        return found is not None and (self._pid not in info[3]
                                      or not eval("lambda found: " + self._test, dict(self._names))(found))  # noqa: S307

    def __repr__(self) -> str:
        return f"Prefiltered({self._pattern!r})"


class AnyOf:
    """A gate in front of a run of patterns tried on the same text one after another (round 11,
    speed only): :meth:`possible` is False only when none of them can match the text, which is
    exactly when each one's ``search`` would answer ``None`` without running (the pattern is
    not among the text's candidates, :func:`_info`). A run holding a pattern that is not
    prefiltered, or patterns of several groups or of a group without an index, is never
    turned down. So ``for p in (run if gate.possible(text) else ()): p.search(text)`` finds
    what the loop over the whole run finds, for one test instead of one call per pattern."""

    __slots__ = ("_group", "_pids")

    def __init__(self, patterns: Any) -> None:
        found = list(patterns)
        groups = {id(p._group) for p in found if isinstance(p, Prefiltered)}
        if found and len(groups) == 1 and all(isinstance(p, Prefiltered) for p in found) and found[0]._group.indexed:
            self._group: _Group | None = found[0]._group
            self._pids = frozenset(p._pid for p in found)
        else:
            self._group, self._pids = None, frozenset()

    def possible(self, text: Any) -> bool:
        """False only when no pattern of the run can match ``text`` (see the class docstring)."""
        group = self._group
        if group is None or type(text) is not str:
            return True
        last = group.last[0]
        if last[0] is not text and last[0] != text or last[2] is not group.index[0]:
            last = _info(group, text)
        return last[1] is None or not last[3].isdisjoint(self._pids)


def folds_to_ascii(text: str) -> bool:
    """Does ``text`` hold a character that case-insensitive matching pairs with an ASCII letter
    (:data:`_ASCII_FOLDS`)? Then no prefilter is used on it."""
    return _ASCII_FOLDS.search(text) is not None


def _anchored(pattern: re.Pattern) -> bool:
    """Does the pattern only match at the start of the text (``^`` without MULTILINE, ``\\A``)?"""
    try:
        parsed = list(_p.parse(pattern.pattern, pattern.flags))
    except Exception:  # noqa: BLE001
        return False
    if not parsed or parsed[0][0] is not _c.AT:
        return False
    at = parsed[0][1]
    return at is _c.AT_BEGINNING_STRING or (at is _c.AT_BEGINNING and not pattern.flags & re.MULTILINE)


def _fixed_start(pattern: re.Pattern) -> bool:
    """Does every match start with a fixed character (a literal or a class of literals, after the
    leading anchors)? An anchored try of such a pattern fails at the first character of most
    texts: a gate in front of ``match`` would only add its cost. Speed only: either answer is exact."""
    try:
        parsed = list(_p.parse(pattern.pattern, pattern.flags))
    except Exception:  # noqa: BLE001
        return True
    items = [item for item in parsed if item[0] is not _c.AT]
    if not items:
        return True
    op, av = items[0]
    return op in (_c.LITERAL, _c.NOT_LITERAL, _c.IN)  # an alternation tries each of its branches


def prefiltered(pattern: re.Pattern, group: str = "") -> re.Pattern | Prefiltered:
    """``pattern`` with a prefilter when its required literals are known, else ``pattern`` itself.
    A pattern anchored at the start of the text whose matches start with a fixed character is
    left as it is (it fails at the first characters anyway)."""
    if not isinstance(pattern, re.Pattern):
        return pattern
    fixed = _fixed_start(pattern)
    if fixed and _anchored(pattern):
        return pattern
    req = _requirement_tree(pattern)
    return pattern if req is None else Prefiltered(pattern, _expression(req), gate_anchored=not fixed, req=req, group=group)


def prefilter_module(namespace: dict[str, Any], group: str | None = None, *, indexed: bool = True) -> int:
    """Give every compiled pattern bound at the top of a module (``globals()``; also those in
    top-level tuples and lists of patterns) its prefilter. ``group`` names the patterns that read
    the same texts and share one literal index (:func:`read`; default: the module's name);
    ``indexed=False``: no index, each call tests its requirement by substring tests (for a few
    patterns that each text meets only a few of). :returns: how many got one."""
    if group is None:
        group = namespace.get("__name__", "")
    _group(group).indexed = indexed
    made = 0

    def wrap(value: Any) -> Any:
        nonlocal made
        if isinstance(value, re.Pattern):
            out = prefiltered(value, group)
            made += out is not value
            return out
        if isinstance(value, tuple) and any(isinstance(v, (re.Pattern, tuple)) for v in value):
            return tuple(wrap(v) for v in value)
        if isinstance(value, list) and value and all(isinstance(v, tuple) for v in value):
            return [wrap(v) for v in value]
        return value

    for name, value in list(namespace.items()):
        if not name.startswith("__"):
            namespace[name] = wrap(value)
    return made


__all__ = ["MAX_LITERALS", "AnyOf", "Prefiltered", "folds_to_ascii", "prefilter_module", "prefiltered", "read",
           "required_literals", "requirement"]
