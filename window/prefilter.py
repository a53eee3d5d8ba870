"""Literal prefilters for the rule regexes: a pattern that cannot match is not run (issue 18, point 4).

The constraint extractor (:mod:`memfold.window.constraints`, :mod:`memfold.window.directives`)
and the secret detector (:mod:`memfold.window.secrets`) read every appended turn with a few
hundred regular expressions, most of them long alternations that Python's engine tries at every
position of the text, and almost all of them fail on ordinary chat. A pattern's *required
literals* are worked out once from its parsed form (:func:`required_literals`): a set of strings
of which every match must contain at least one. Before the pattern runs, :class:`Prefiltered`
looks for them in the lowercased text (plain substring tests); when none is there the pattern
cannot match, and the answer is given without running it (``None``, no matches, the text
unchanged). When one is there, or when no set could be worked out, the pattern runs as before, so
every result is the pattern's own: a prefilter changes what is computed, never what is found.

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
from functools import partial
from typing import Any, Iterator

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


def requirement(pattern: re.Pattern) -> str | None:
    """A Python expression over ``low`` (the lowercased text) that is true for every text the
    pattern can match in: a sequence requires each of its parts, an alternation one of its
    branches, a literal run one of its strings (see the module docstring); None when nothing is
    known or the test would be too long."""
    if not isinstance(pattern.pattern, str):
        return None
    try:
        req = _all_of(list(_p.parse(pattern.pattern, pattern.flags)))
    except Exception:  # noqa: BLE001 - anything unexpected: no prefilter, the pattern runs
        return None
    if req is None or _tests(req) > MAX_TESTS:
        literals = required_literals(pattern)
        return None if literals is None else _expression(("lit", literals))
    return _expression(req)


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


def _methods(pattern: re.Pattern, test: Any, flat: Any) -> tuple[Any, ...]:
    """The scanning methods of a :class:`Prefiltered` (issue 18, point 4, round 7): each reads the
    text's lowercase from :data:`_LAST` itself and turns the text down when ``flat`` (the flat
    literal set's test, or None) or ``test`` (the requirement's) fails on it: one Python call per
    search around the tests, where a method calling :meth:`Prefiltered._absent` made four. Both
    tests hold on every text the pattern matches in, so either turning a text down proves no
    match; ``flat`` goes first where it is the shorter test. A text that is not a ``str``, or may
    not be prefiltered (:data:`_ASCII_FOLDS`), always runs the pattern."""
    raw_search, raw_finditer, raw_findall = pattern.search, pattern.finditer, pattern.findall
    raw_split, raw_sub, raw_subn = pattern.split, pattern.sub, pattern.subn

    if flat is None:
        def absent(string: Any) -> bool:
            if type(string) is not str:
                return False
            last = _LAST
            low = last[1] if last[0] is string else _lowered(string)
            return low is not None and not test(low)

        def search(string: Any, *args: Any) -> re.Match | None:
            if type(string) is str:
                last = _LAST
                low = last[1] if last[0] is string else _lowered(string)
                if low is not None and not test(low):
                    return None
            return raw_search(string, *args)

        def sub(repl: Any, string: Any, *args: Any, **kwargs: Any) -> str:
            if type(string) is str:
                last = _LAST
                low = last[1] if last[0] is string else _lowered(string)
                if low is not None and not test(low):
                    return string
            return raw_sub(repl, string, *args, **kwargs)
    else:
        def absent(string: Any) -> bool:
            if type(string) is not str:
                return False
            last = _LAST
            low = last[1] if last[0] is string else _lowered(string)
            return low is not None and (not flat(low) or not test(low))

        def search(string: Any, *args: Any) -> re.Match | None:
            if type(string) is str:
                last = _LAST
                low = last[1] if last[0] is string else _lowered(string)
                if low is not None and (not flat(low) or not test(low)):
                    return None
            return raw_search(string, *args)

        def sub(repl: Any, string: Any, *args: Any, **kwargs: Any) -> str:
            if type(string) is str:
                last = _LAST
                low = last[1] if last[0] is string else _lowered(string)
                if low is not None and (not flat(low) or not test(low)):
                    return string
            return raw_sub(repl, string, *args, **kwargs)

    def finditer(string: Any, *args: Any) -> Iterator[re.Match]:
        return iter(()) if absent(string) else raw_finditer(string, *args)

    def findall(string: Any, *args: Any) -> list:
        return [] if absent(string) else raw_findall(string, *args)

    def split(string: Any, *args: Any, **kwargs: Any) -> list:
        return [string] if absent(string) else raw_split(string, *args, **kwargs)

    def subn(repl: Any, string: Any, *args: Any, **kwargs: Any) -> tuple[str, int]:
        return (string, 0) if absent(string) else raw_subn(repl, string, *args, **kwargs)

    return search, finditer, findall, split, sub, subn


_SCANNING = ("search", "finditer", "findall", "split", "sub", "subn")


class Prefiltered:
    """A compiled pattern that is not run on a text lacking its required literals (module
    docstring). Same methods and attributes as :class:`re.Pattern` for ``str`` texts.
    ``match`` and ``fullmatch`` are the pattern's own: they are anchored, so they fail at the
    first characters anyway; the methods that scan the text (``search``, ``finditer``,
    ``findall``, ``sub``, ``subn``, ``split``) test the literals first.

    Each of those is a function made for this pattern by :func:`_methods` on its first use
    (round 7): the requirement's test as in :meth:`_absent`, with the flat literal set tested
    first where that is the shorter test, and fewer calls around them."""

    __slots__ = ("_pattern", "_literals", "_any", "_built", "pattern", "flags", "groups", "groupindex", "match", "fullmatch",
                 *_SCANNING)

    def __init__(self, pattern: re.Pattern, test: str) -> None:
        self._pattern = pattern
        self._literals = test  #: the requirement's source (:func:`requirement`)
        # one expression of substring tests (``("never" in low or "do not" in low) and "me" in
        # low``), compiled once: several times faster than walking a tree of literals
        self._any = eval("lambda low: " + test)  # noqa: S307 - built from repr()s of ASCII strings
        self.pattern, self.flags = pattern.pattern, pattern.flags
        self.groups, self.groupindex = pattern.groups, pattern.groupindex
        self.match, self.fullmatch = pattern.match, pattern.fullmatch
        # the scanning methods are made on first use (:meth:`_build`): importing pays nothing for
        # the flat literal sets, and a process that never searches with a pattern never for its
        self._built = False
        for name in _SCANNING:
            setattr(self, name, partial(self._first_call, name))

    def _first_call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if not self._built:  # a method taken before the first use still lands here: made once
            self._build()
        return getattr(self, name)(*args, **kwargs)

    def _build(self) -> None:
        """Make the scanning methods (:func:`_methods`) and put them in place: the flat literal
        set (:func:`required_literals`) is tested first where it is fewer substring tests."""
        literals = required_literals(self._pattern)
        flat = None if literals is None else _expression(("lit", literals))
        flat_test = None
        if flat is not None and flat != self._literals and len(literals) < self._literals.count(" in low"):
            flat_test = eval("lambda low: " + flat)  # noqa: S307 - built from repr()s of ASCII strings
        for name, fn in zip(_SCANNING, _methods(self._pattern, self._any, flat_test)):
            setattr(self, name, fn)
        self._built = True

    @property
    def unfiltered(self) -> re.Pattern:
        """The pattern itself."""
        return self._pattern

    def _absent(self, text: Any) -> bool:
        """True when ``text`` cannot hold a match (none of the literals is in it)."""
        if type(text) is not str:
            return False
        last = _LAST
        low = last[1] if last[0] is text else _lowered(text)
        return low is not None and not self._any(low)

    def __repr__(self) -> str:
        return f"Prefiltered({self._pattern!r})"


#: the last text lowered: (text, its lowercase or None when it may not be prefiltered)
_LAST: tuple[str, str | None] = ("", "")


def folds_to_ascii(text: str) -> bool:
    """Does ``text`` hold a character that case-insensitive matching pairs with an ASCII letter
    (:data:`_ASCII_FOLDS`)? Then no prefilter is used on it."""
    return _ASCII_FOLDS.search(text) is not None


def _lowered(text: str) -> str | None:
    """``text`` lowercased, or None when a prefilter may not be used on it (:data:`_ASCII_FOLDS`).
    The last answer is kept: the rules read one sentence with many patterns in a row."""
    global _LAST
    last = _LAST
    if last[0] is text or last[0] == text:  # the rules of several rounds re-strip the same sentence (round 9)
        return last[1]
    low = text.lower() if text.isascii() or _ASCII_FOLDS.search(text) is None else None
    _LAST = (text, low)
    return low


def _anchored(pattern: re.Pattern) -> bool:
    """Does the pattern only match at the start of the text (``^`` without MULTILINE, ``\\A``)?
    Such a search fails at the first characters already: a prefilter would only add its cost."""
    try:
        parsed = list(_p.parse(pattern.pattern, pattern.flags))
    except Exception:  # noqa: BLE001
        return False
    if not parsed or parsed[0][0] is not _c.AT:
        return False
    at = parsed[0][1]
    return at is _c.AT_BEGINNING_STRING or (at is _c.AT_BEGINNING and not pattern.flags & re.MULTILINE)


def prefiltered(pattern: re.Pattern) -> re.Pattern | Prefiltered:
    """``pattern`` with a prefilter when its required literals are known, else ``pattern`` itself."""
    if not isinstance(pattern, re.Pattern) or _anchored(pattern):
        return pattern
    test = requirement(pattern)
    return pattern if test is None else Prefiltered(pattern, test)


def prefilter_module(namespace: dict[str, Any]) -> int:
    """Give every compiled pattern bound at the top of a module (``globals()``; also those in
    top-level tuples and lists of patterns) its prefilter. :returns: how many got one."""
    made = 0

    def wrap(value: Any) -> Any:
        nonlocal made
        if isinstance(value, re.Pattern):
            out = prefiltered(value)
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


__all__ = ["MAX_LITERALS", "Prefiltered", "folds_to_ascii", "prefilter_module", "prefiltered", "required_literals",
           "requirement"]
