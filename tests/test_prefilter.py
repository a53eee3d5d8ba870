"""The rule regexes' literal prefilters (issue 18, point 4): a pattern is skipped only on a text
where it cannot match, so the constraint extractor and the secret detector find exactly what they
found without prefilters, on every phrasing set and benchmark text in the repository."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

import pytest

from memfold.window import constraints, directives, prefilter, secrets
from memfold.window.prefilter import Prefiltered, required_literals

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[1] / "shared" / "data"
#: every prefiltered module: the rule modules (round 15: :data:`constraints.RULE_MODULES`, every
#: ``directives*`` module the extractor imports, a later one included without an edit here), the
#: extractor's own and the secret detector
MODULES = (*constraints.RULE_MODULES, constraints, secrets)


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _texts(root: Path, every: int = 1) -> list[list[str]]:
    """Per JSON file under ``root``, its strings of more than one word, in file order (every ``every``-th)."""
    out = []
    for path in sorted(root.rglob("*.json")):
        found = [s for s in _strings(json.loads(path.read_text(encoding="utf-8"))) if " " in s.strip()]
        out.append(found[::every])
    return out


def _corpus(every: int = 12) -> list[list[str]]:
    """Every other text of the phrasing sets of ``tests/data``, and every ``every``-th text of
    ``../shared/data`` (LoCoMo, STAR, ABCD, CompactBench, COMPINT) when it is there (all of them,
    every=1, are compared by ``bench/prefilter_exactness.py``: identical in round 15)."""
    return _texts(HERE / "data", every=2) + (_texts(SHARED, every=every) if SHARED.exists() else [])


def _swap(value, unfilter: bool):
    if unfilter and isinstance(value, Prefiltered):
        return value.unfiltered
    if isinstance(value, tuple) and any(isinstance(v, (Prefiltered, re.Pattern, tuple)) for v in value):
        return tuple(_swap(v, unfilter) for v in value)
    if isinstance(value, list) and value and all(isinstance(v, tuple) for v in value):
        return [_swap(v, unfilter) for v in value]
    return value


def _clear_caches() -> None:
    # every per-text cache of the three modules (round 13: all their lru_caches, not a list that a
    # new cache could be missing from; a cache left full would answer the unfiltered run from the
    # filtered one)
    for m in MODULES:
        for value in list(vars(m).values()):
            if not isinstance(value, type) and callable(getattr(value, "cache_clear", None)):
                value.cache_clear()
    for fn in (directives._strip, directives._main_clause, directives._normalised, directives._first_word,
               secrets._asks_secret, secrets._mentions_secret, secrets._names_a_secret, secrets._tokens):
        assert getattr(fn, "cache_info", None) is None or fn.cache_info().currsize == 0, fn


@contextlib.contextmanager
def without_prefilters():
    """The three modules with every pattern unfiltered (and their per-text caches emptied)."""
    saved = [(m, dict(vars(m))) for m in MODULES]
    try:
        for m in MODULES:
            for name, value in list(vars(m).items()):
                if not name.startswith("__"):
                    setattr(m, name, _swap(value, unfilter=True))
        _clear_caches()
        yield
    finally:
        for m, names in saved:
            for name, value in names.items():
                setattr(m, name, value)
        _clear_caches()


def _prefiltered_patterns() -> list[tuple[str, Prefiltered]]:
    out = []
    for m in MODULES:
        for name, value in vars(m).items():
            if isinstance(value, Prefiltered):
                out.append((f"{m.__name__}.{name}", value))
    return out


def test_most_rule_patterns_have_a_prefilter():
    found = _prefiltered_patterns()
    assert len(found) >= 50, len(found)
    reset = directives._RESET_R5  # a search pattern: prefiltered
    assert isinstance(reset, Prefiltered)
    assert reset.search("Total reset: new plan.") is not None and reset.search("The weather is fine") is None
    # anchored at the start with a fixed first character, a pattern fails at the first characters
    # anyway: left as it is
    assert not isinstance(prefilter.prefiltered(re.compile(r"^never\b")), Prefiltered)
    assert not isinstance(prefilter.prefiltered(re.compile(r"\Anever\b")), Prefiltered)
    assert isinstance(prefilter.prefiltered(re.compile(r"^(?:never|don't)\b")), Prefiltered)  # each branch is tried
    assert isinstance(prefilter.prefiltered(re.compile(r"^never\b", re.M)), Prefiltered)  # any line start
    # round 10: one whose start is a run of optional words is gated, match and fullmatch too
    assert isinstance(directives._LEADS, Prefiltered) and directives._LEADS.pattern.startswith("^")
    lead = prefilter.prefiltered(re.compile(r"^(?:[\w-]+ ){0,3}?(?:rejected|vetoed)\b", re.I))
    assert isinstance(lead, Prefiltered)
    assert lead.match("The board VETOED it").span() == (0, 16) and lead.match("The board approved it") is None
    assert lead.fullmatch("they rejected") is not None and lead.fullmatch("they rejected it") is None


@pytest.mark.parametrize(("pattern", "flags", "literals"), [
    (r"abc", 0, {"abc"}),
    (r"\bABC\b", re.I, {"abc"}),
    (r"ab(?:cd|ef)", 0, {"abcd", "abef"}),  # fixed parts are joined
    (r"(?:never|do not)\s+(?:call|email) me", re.I, {"never", "do not"}),  # 3+ characters, the first found
    (r"x?yz+", 0, {"y"}),  # one string beats two of the same shortest length
    (r"(?:abc)?def", 0, {"def", "abcdef"}),
    (r"(?:abc)*", 0, None),
    (r"[ab]c", 0, {"ac", "bc"}),
    (r"[ab]", 0, {"a", "b"}),
    (r"[a-z]+", 0, None),
    (r"\d{3}", 0, None),
    (r"^(?:hi|hello|hey)\b", re.I, {"hi", "hello", "hey"}),
    (r"(?:hi|\w+)", 0, None),  # one branch requires nothing
    (r"caf\u00e9", 0, {"caf"}),  # non-ASCII letters are never required
    (r"(?i:Foo)bar", 0, {"foo"}),  # compared lowercased
    (r"(?=abc)", 0, None),  # a look-ahead adds nothing
    (r"(a)\1bcd", 0, {"bcd"}),
])
def test_required_literals(pattern, flags, literals):
    got = required_literals(re.compile(pattern, flags))
    assert got == (None if literals is None else frozenset(literals))


@pytest.mark.parametrize(("pattern", "flags", "text"), [
    (r"\bpin\b", re.I, "my PIN is 4471"),
    (r"pass", re.I, "PASSWORD"),
    (r"ok", re.I, "o\u212a"),  # KELVIN SIGN matches "k" case-insensitively
    (r"is", re.I, "i\u017f"),  # LONG S matches "s"
    (r"in", re.I, "\u0130n"),  # DOTTED CAPITAL I matches "i"
    (r"Abc", 0, "xxAbc"),
])
def test_a_prefilter_never_hides_a_match(pattern, flags, text):
    raw = re.compile(pattern, flags)
    filtered = prefilter.prefiltered(raw)
    assert isinstance(filtered, Prefiltered)
    assert raw.search(text) is not None
    assert filtered.search(text).span() == raw.search(text).span()
    assert filtered.sub("#", text) == raw.sub("#", text)
    assert [m.span() for m in filtered.finditer(text)] == [m.span() for m in raw.finditer(text)]


@pytest.mark.parametrize(("pattern", "flags", "holds", "lacks"), [
    # a sequence requires every part: "never" alone is not enough
    (r"\b(?:never|do not)\s+(?:call|email) me\b", re.I, ["Never CALL me", "do not email me"],
     ["never mind", "call me maybe", "do not"]),
    # an alternation requires one branch, each with its own parts
    (r"\bscrap (?:that|it)\b|\bforget\s+the plan\b", re.I, ["scrap that", "Forget the plan"],
     ["forget it", "the plan", "scrap"]),
    (r"(?:abc)?def", 0, ["def", "abcdef"], ["abc", "de f"]),
    (r"x+y", 0, ["xy", "xxxy"], ["y", "x"]),
])
def test_a_requirement_holds_on_every_text_the_pattern_matches(pattern, flags, holds, lacks):
    test = eval("lambda low: " + prefilter.requirement(re.compile(pattern, flags)))  # noqa: S307
    for text in holds:
        assert re.search(pattern, text, flags) and test(text.lower()), text
    for text in lacks:
        assert not re.search(pattern, text, flags) and not test(text.lower()), text


def test_a_text_without_the_literals_is_not_searched():
    filtered = prefilter.prefiltered(re.compile(r"\b(?:never|don't) (?:call|email)\b", re.I))
    assert filtered.search("I went hiking on Sunday") is None
    assert filtered.sub("#", "nothing here") == "nothing here"
    assert filtered.split("nothing here") == ["nothing here"]
    assert filtered.findall("nothing here") == [] and list(filtered.finditer("nothing here")) == []
    assert filtered.search("Please never call me") is not None


def test_the_ascii_folds_are_every_character_paired_with_an_ascii_letter():
    letter = re.compile("[a-z]", re.IGNORECASE)
    paired = {chr(c) for c in range(0x80, 0x110000) if letter.fullmatch(chr(c))}
    lowers_to_ascii = {chr(c) for c in range(0x80, 0x110000) if any(ch.isascii() for ch in chr(c).lower())}
    assert paired | lowers_to_ascii == {ch for ch in map(chr, range(0x80, 0x10000)) if prefilter.folds_to_ascii(ch)}


def test_task_nouns_read_word_by_word_as_the_pattern_reads_them():
    samples = ["Send the invoices", "the E-MAILS went out", "mock-up", "policies apply", "deliveries",
               "boxes", "taxes", "a ticketing system", "\u212aPI report", "p\u0130n", "my emails", "taxi",
               "retreats", "subscriptions!", "word_report", "_report", "report_", "caf\u00e9 menu"]
    for text in samples + [t for group in _texts(HERE / "data") for t in group][:3000]:
        assert directives._names_task_noun(text) == bool(directives._TASK_NOUN.search(text)), text
        assert directives._names_task_noun_ies(text) == bool(directives._TASK_NOUN_IES.search(text)), text


@pytest.fixture(scope="module")
def phrasing_sentences() -> list[str]:
    """Every other text of the phrasing sets of ``tests/data`` and its sentences, once each, sorted
    (every text, and LoCoMo's, are compared by ``bench/prefilter_exactness.py``: the sets grow each
    round, and the suite must stay under 10 minutes)."""
    texts = [t for group in _texts(HERE / "data", every=2) for t in group]
    return sorted({s for t in texts for s in re.split(r"(?<=[.!?])\s+", t)} | set(texts))


@pytest.fixture(scope="module")
def raw_spans(phrasing_sentences) -> dict[str, list]:
    """Per prefiltered pattern, the span of the unwrapped pattern's search on each of
    ``phrasing_sentences`` (None: no match): worked out once for the two tests that compare with it."""
    return {name: [m and m.span() for m in map(pattern.unfiltered.search, phrasing_sentences)]
            for name, pattern in _prefiltered_patterns()}


def test_every_prefiltered_pattern_agrees_with_itself_on_the_phrasing_sets(phrasing_sentences, raw_spans):
    # every phrasing text and its sentences (round 14: all of them, where this took every 8th:
    # text by text, as the rules read, a text's literals are found once for all the patterns; run
    # pattern by pattern, every call found them afresh, the group remembering only 64 recent texts,
    # 30 times slower); all of them, with LoCoMo, are compared by bench/prefilter_exactness.py
    # (16,059,120 calls, 0 different in round 10)
    patterns = _prefiltered_patterns()
    for i, text in enumerate(phrasing_sentences):
        for name, pattern in patterns:
            got = pattern.search(text)
            assert (got and got.span()) == raw_spans[name][i], (name, text)
    # and pattern by pattern on every 64th (more texts than the group remembers: each call finds
    # the text's literals itself, the path a pattern run alone on a text takes)
    sample = range(0, len(phrasing_sentences), 64)
    assert len(sample) > prefilter.MAX_SEEN + prefilter.MAX_ROOTS
    for name, pattern in patterns:
        for i in sample:
            got = pattern.search(phrasing_sentences[i])
            assert (got and got.span()) == raw_spans[name][i], (name, phrasing_sentences[i])


def _extract_all(corpus):
    ex = constraints.RuleConstraintExtractor()
    return [[ex.extract(t) for t in group] for group in corpus]


def _detect_all(corpus):
    out = []
    for group in corpus:
        for start in range(0, len(group), 40):  # conversations of 40 turns, roles taking turns
            detector = secrets.SecretDetector()
            out.append([detector.detect({"role": "user" if i % 2 == 0 else "assistant", "content": t})
                        for i, t in enumerate(group[start:start + 40])])
    return out


def test_the_extractor_finds_the_same_with_and_without_prefilters():
    # each distinct text once, in corpus order (round 14: 10,201 of 17,364; the extractor reads a
    # text alone, so a repeat gives the same extraction both ways and only cost time)
    corpus = [list(dict.fromkeys(t for g in _corpus() for t in g))]
    with without_prefilters():
        assert not isinstance(directives._QUESTION, Prefiltered)
        want = _extract_all(corpus)
    got = _extract_all(corpus)
    assert sum(len(g) for g in corpus) > 3000
    assert sum(1 for g in want for e in g if e.proposals or e.withdrawals) > 500  # the sets hold instructions
    assert got == want


def test_the_secret_detector_finds_the_same_with_and_without_prefilters():
    corpus = _corpus()
    with without_prefilters():
        want = _detect_all(corpus)
    got = _detect_all(corpus)
    assert sum(1 for conv in want for spans in conv if spans) > 50
    assert got == want


def test_both_gates_of_a_prefiltered_search_hold_wherever_its_pattern_matches(phrasing_sentences, raw_spans):
    """Round 7: a search first tests the flat literal set (when it is the shorter test), then the
    requirement; each turns a text down on its own, so each must hold on every text the pattern
    matches in (and the methods, written out per pattern, give the pattern's own answers)."""
    patterns = _prefiltered_patterns()
    gates = {}
    for name, pattern in patterns:
        raw = pattern.unfiltered
        gates[name] = (required_literals(raw),  # the flat literal set (tested first where it is shorter)
                       eval("lambda low: " + prefilter.requirement(raw)))  # noqa: S307
    gated = sum(literals is not None for literals, _ in gates.values())
    matched = 0
    for i, text in enumerate(phrasing_sentences):  # text by text (see the test above)
        low = text.lower()
        for name, pattern in patterns:
            if raw_spans[name][i] is None:  # the pattern does not match in this text
                continue
            raw = pattern.unfiltered
            literals, requirement = gates[name]
            assert requirement(low), (name, text)
            assert literals is None or any(lit in low for lit in literals), (name, text)
            assert pattern.sub("#", text) == raw.sub("#", text)
            assert pattern.findall(text) == raw.findall(text) and pattern.split(text) == raw.split(text)
            assert pattern.subn("#", text) == raw.subn("#", text)
            matched += 1
    assert gated >= 50 and matched > 10_000


def test_a_text_outside_the_flat_literals_is_turned_down_before_the_requirement():
    raw = re.compile(r"\b(?:by|before|until)\s+(?:monday|tuesday|noon|midnight|the end of (?:the )?(?:day|week))\b", re.I)
    filtered = prefilter.prefiltered(raw)
    assert isinstance(filtered, Prefiltered)
    for text in ("Send it by Monday", "not UNTIL noon", "before the end of the week", "by tuesday", "hello there",
                 "monday by", "by the way", "the end of the day", "Before midnight."):
        assert (filtered.search(text) and filtered.search(text).span()) == (raw.search(text) and raw.search(text).span())
        assert filtered.sub("#", text) == raw.sub("#", text)
    assert filtered.search("by Monday", 3) == raw.search("by Monday", 3)  # pos is passed on


def test_the_answer_words_shortcut_gives_what_the_full_reading_gives():
    """Round 7: a window of turns where no assistant asks for a secret and no user names one has
    no answer words without reading it in full; everywhere else the full reading runs."""
    corpus = _corpus()
    windows = 0
    found = 0
    for group in corpus:
        turns = [{"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(group[:400])]
        for end in range(1, len(turns), 3):
            window = turns[max(0, end - secrets.SecretDetector.context_turns):end]
            want = secrets._answer_words_of([secrets._role_text(t) for t in window])
            assert secrets._answer_words(window) == want, window[-1]
            windows += 1
            found += bool(want)
    asked = [{"role": "assistant", "content": "What was the name of your first pet?"},
             {"role": "user", "content": "Sanchez"}, {"role": "assistant", "content": "Thanks, Sanchez it is."}]
    assert secrets._answer_words(asked) == secrets._answer_words_of([secrets._role_text(t) for t in asked]) == {"Sanchez"}
    assert windows > 1000


def test_a_method_taken_before_the_first_search_still_gives_the_patterns_answers():
    """Round 7: the scanning methods are written on first use; one taken before then keeps working."""
    raw = re.compile(r"\bnever (?:call|email)\b", re.I)
    filtered = prefilter.prefiltered(raw)
    early, early_sub = filtered.search, filtered.sub
    assert early("Please never call me").span() == raw.search("Please never call me").span()
    assert filtered.search is not early  # written now
    assert early("hello") is None and filtered.search("hello") is None
    assert early_sub("#", "never email") == raw.sub("#", "never email") == filtered.sub("#", "never email")


# --- round 10: the literals found once per text ------------------------------------------------

TRICKY = [
    # (pattern, flags): shapes the literal analysis must get right for match, fullmatch and search
    (r"^(?:[\w-]+ ){0,3}?(?:rejected|vetoed|turned down)\b", re.I),  # a word run before the literal
    (r"^(?:please\s+)?(?:remember|don't forget)\b", re.I),  # an optional lead
    (r"(?<!not )\bapproved\b", re.I),  # a look-behind adds nothing
    (r"\bcall(?=\s+me)\b", re.I),  # a look-ahead adds nothing
    (r"(?:ab)?c(?:de)*f", 0),  # optional and repeated parts
    (r"(\w+) and \1", 0),  # a back-reference
    (r"""never \s+ (?: call | email ) \s+ me  # verbose""", re.I | re.X),
    (r"(?i:NEVER) CALL", 0),  # a scoped flag: "call" stays case-sensitive
    (r"^\W*(?:(?:oh|ok|and)[,\s]+)*(?:just )?so you know\s*[,:;]", re.I),
    (r"\b(?:by|before)\s+(?:monday|noon)\b|\bdeadline\b", re.I),
    (r"k\w+", re.I),  # "k" pairs with the Kelvin sign case-insensitively
]
TRICKY_TEXTS = [
    "The board VETOED it", "the new plan was turned down", "We rejected", "they approved it", "not approved",
    "never call me", "Please remember the milk", "don't forget", "cf", "abcdedef", "acf", "cats and cats",
    "cats and dogs", "NEVER CALL", "never call", "Never CALL", "Oh, ok, just so you know: it's late",
    "so you know", "by Monday", "the deadline", "by   noon!", "\u212aelvin", "kelvin", "Call me maybe", "call",
    "caf\u00e9 \u03a3\u039f\u03a3 never call me", "\u0130stanbul approved", "",
]


@pytest.mark.parametrize(("pattern", "flags"), TRICKY)
def test_a_gated_method_answers_as_the_pattern_on_tricky_shapes(pattern, flags):
    raw = re.compile(pattern, flags)
    gated = prefilter.prefiltered(raw, group="test-tricky")
    assert isinstance(gated, Prefiltered), pattern
    checked = 0
    for text in TRICKY_TEXTS + [t.upper() for t in TRICKY_TEXTS] + [t[3:] for t in TRICKY_TEXTS]:
        for method in ("search", "match", "fullmatch"):
            got, want = getattr(gated, method)(text), getattr(raw, method)(text)
            assert (got and (got.span(), got.groups())) == (want and (want.span(), want.groups())), (pattern, method, text)
        assert gated.sub("#", text) == raw.sub("#", text) and gated.findall(text) == raw.findall(text)
        assert gated.split(text) == raw.split(text) and gated.subn("#", text) == raw.subn("#", text)
        checked += raw.search(text) is not None
    assert checked, pattern  # each shape matches some of the texts


def test_the_literals_found_are_exactly_those_the_text_holds():
    """The index finds a literal through one of its trigrams, a sentence inside a turn keeps the
    turn's literals it holds: either way, exactly the literals in the lowercased text."""
    group = prefilter._group("rules")
    index = group.current_index()
    texts = [t for g in _corpus(every=40) for t in g][::6] + TRICKY_TEXTS
    for text in texts:
        if prefilter.folds_to_ascii(text):
            continue
        low = text.lower()
        want = frozenset(filter(low.__contains__, index.literals))  # every literal in the text
        assert index.present(low) == want, text
        prefilter.read(text, "rules")
        for part in {text[: len(text) // 2], text[len(text) // 3:], *re.split(r"(?<=[.!?,])\s+", text)}:
            if part:
                info = prefilter._info(group, part)
                assert info[1] == frozenset(filter(part.lower().__contains__, index.literals)), (text, part)
    assert len(index.literals) > 1000


def test_a_text_with_a_case_fold_character_runs_every_pattern():
    raw = re.compile(r"\bok\b", re.I)
    gated = prefilter.prefiltered(raw, group="test-folds")
    prefilter.read("fine by me, o\u212a?", "test-folds")  # a root holding the Kelvin sign
    for text in ("o\u212a", "fine by me, o\u212a?", "that is O\u212a"):
        assert gated.search(text) is not None and gated.search(text).span() == raw.search(text).span()
    assert gated.search("fine by me") is None


def test_a_pattern_added_later_to_a_group_is_seen_in_texts_read_before():
    first = prefilter.prefiltered(re.compile(r"\bpineapple\b", re.I), group="test-later")
    text = "I never eat mango or pineapple"
    assert first.search(text) is not None
    later = prefilter.prefiltered(re.compile(r"\bmango\b", re.I), group="test-later")  # new literals: a new index
    assert later.search(text).span() == (12, 17) and first.search(text).span() == (21, 30)
    assert later.search("I never eat pineapple") is None


def test_every_gated_pattern_agrees_with_itself_on_phrasings_and_locomo():
    """Every prefiltered pattern of the rule modules and the secret detector: search, match and
    fullmatch give the unwrapped pattern's answers on a twelfth of the phrasing texts and a
    sixtieth of the LoCoMo turns, and on their sentences, each read as a turn first (as the
    extractor does) so that the sentences share its literals."""
    texts = [t for group in _texts(HERE / "data") for t in group][::12]  # (every text: bench/prefilter_exactness.py)
    locomo = SHARED / "locomo" / "locomo_dev.json"
    if locomo.exists():
        data = json.loads(locomo.read_text(encoding="utf-8"))
        turns = [turn["text"] for sample in data for key, session in sample["conversation"].items()
                 if key.startswith("session_") and isinstance(session, list) for turn in session]
        texts += turns[::60]
    groups = {"rules": _prefiltered_patterns_of((*constraints.RULE_MODULES, constraints)),
              secrets.__name__: _prefiltered_patterns_of((secrets,))}
    compared = 0
    for text in dict.fromkeys(texts):
        parts = [text] + [s for s in re.split(r"(?<=[.!?])\s+", text) if s != text]
        for group, patterns in groups.items():
            prefilter.read(text, group)
            for part in parts:
                for name, pattern in patterns:
                    raw = pattern.unfiltered
                    for method in ("search", "match", "fullmatch")[:len(pattern._gated) - len(prefilter._SCANNING) + 1]:
                        got, want = getattr(pattern, method)(part), getattr(raw, method)(part)
                        assert (got and got.span()) == (want and want.span()), (name, method, part)
                        compared += 1
    assert compared > 20_000


def _prefiltered_patterns_of(modules):
    return [(f"{m.__name__}.{name}", value) for m in modules for name, value in vars(m).items()
            if isinstance(value, Prefiltered)]


def test_a_group_without_an_index_tests_substrings_per_call():
    """The secret detector's group (``indexed=False``): each call tests its requirement on the
    lowercased text; a literal that reads like the test's own source is still just a literal."""
    assert not prefilter._group(secrets.__name__).indexed and prefilter._group("rules").indexed
    namespace = {"__name__": "test-no-index", "P": re.compile(r"\bsign in low\b|never (?:call|email)", re.I)}
    assert prefilter.prefilter_module(namespace, indexed=False) == 1
    gated, raw = namespace["P"], namespace["P"].unfiltered
    for text in ("Please SIGN IN LOW tonight", "sign in high", "never email me", "never mind", "o\u212a sign in low"):
        got, want = gated.search(text), raw.search(text)
        assert (got and got.span()) == (want and want.span()), text
        assert gated.sub("#", text) == raw.sub("#", text)


# --- round 13: the rules' per-sentence answers, remembered per family state ---------------------

def test_remembered_rule_answers_follow_the_family_state():
    """advice, concrete, imperative, _imperative_r8, completion and _first_word keep their answers per
    text and set of families turned off: an answer remembered with every family on is never given
    with a family off that changes it (and back), and each equals the function worked out afresh."""
    from memfold.memory import families

    cases = [(directives.advice, "Just so you know, I moved the meeting so you can rest."),
             (directives.concrete, "all the deliveries"),
             (directives.imperative, "check that the customer has paid"),
             (directives._imperative_r8, "check that the customer has paid"),
             (directives.completion, "The parcel arrived this morning."),
             (directives._first_word, "Please always check the invoices")]
    fresh = {directives.advice: directives._advice, directives.concrete: directives._concrete,
             directives.imperative: directives._imperative, directives._imperative_r8: directives._imperative_r8_of,
             directives.completion: directives._completion}
    off = [directives.F_EVIDENCE, directives.F_PLURALS, directives.F_LEAD_BARE_VERB, directives.F_COMPLETION,
           directives.F_COMPLETION_R8]
    directives._remembered_clear()
    answers = []
    for state in ((), off, ()):
        with families.off(state):
            got = [fn(text) for fn, text in cases]
            want = [fresh[fn].__wrapped__(text, families.off_now()) if fn in fresh else fn.__wrapped__(text)
                    for fn, text in cases]
            assert got == want, state
            answers.append(got)
    assert answers[0] == answers[2] and answers[0] != answers[1]  # the state changes some answers
    assert answers[0][:2] == [False, True] and answers[1][:2] == [True, False]
