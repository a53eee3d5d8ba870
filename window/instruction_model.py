"""A learned sentence classifier for standing instructions, beside the rules (issue 20, point 10).

The rule extractor (:mod:`memfold.window.constraints`, :mod:`memfold.window.directives`) was
grown for ten rounds from each new phrasing set's misses; on sets nobody tuned on it kept 70-80%
of the standing instructions. This model is trained across every phrasing set in ``tests/data``
(with LoCoMo small talk, support-bot traffic from STAR and ABCD, and seeded word salad as
negatives, round 13) by ``bench/train_instruction_model.py`` and reads only the sentences the
rules gave nothing for: when it says, with enough confidence, that a sentence is a
standing instruction of kind K, the extractor adds a record of kind K with the sentence verbatim;
when it says the sentence withdraws, satisfies or resets earlier instructions, the tracker picks
the one active record it names (:func:`pick_target`), and does nothing when that is ambiguous.

* Deterministic and offline: features are hashed word uni/bigrams, sentence-start words,
  character 4-grams and the sentence's share of closed-class words (``zlib.crc32``, not Python's
  salted ``hash``); a long run of words with no closed-class word (:func:`keyword_run`: keyword
  chatter) is never read; the weights are a small data
  file in the package (``instruction_model.bin``: a JSON header line, then int8 weights), read once
  with numpy. The same sentence always gets the same answer.
* On by default since round 13 (off in rounds 11-12: it flooded support-word chatter with
  records); off with ``MEMFOLD_INSTRUCTION_MODEL=off`` (or ``0``, ``false``, ``no``) in the
  environment, or ``RuleConstraintExtractor(model=False)``; any value other than those and ``on``,
  ``1``, ``true``, ``yes`` (or empty) is refused with :class:`~memfold.SettingError` (round 14). Off, the extractor's output is the
  rules' exactly.
  :func:`using` swaps the model within a ``with`` block (the benches' leave-one-set-out runs).
"""

from __future__ import annotations

import json
import os
import re
import zlib
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from ..memory.errors import ModelFileError, SettingError

#: the classes, in weight-column order: ``none``, the record kinds it may add, then the acts
RECORD_KINDS = ("obligation", "constraint", "permission", "deadline", "prerequisite", "approval", "evidence",
                "policy_state")
ACTS = ("revoke", "satisfy", "plan_reset")
CLASSES = ("none", *RECORD_KINDS, *ACTS)
WEIGHTS_PATH = Path(__file__).with_name("instruction_model.bin")
ENV_SWITCH = "MEMFOLD_INSTRUCTION_MODEL"
#: a sentence shorter than this many characters is never read by the model ("ok", "thanks!")
MIN_CHARS = 12
#: nor one of fewer words ("Manager here.", the opening of a longer approval, is no instruction alone)
MIN_WORDS = 3

_TOKEN = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?|[?!:;$%£€@#]")
#: closed-class words (articles, pronouns, prepositions, auxiliaries, conjunctions): a sentence's
#: share of them is a feature, so a run of content words ("order refund approved manager ticket",
#: a support bot's keyword chatter) reads as what it is, not as the instruction its words suggest
FUNCTION_WORDS = frozenset(
    "the a an to of for on in at by with from into onto about over under after before within without until "
    "during between through per via my me i you your we our us it its is are was were be been being am this "
    "that these those and or but nor not no if when while as so than then they them their he she his her "
    "him do does did has have had will would can could should shall may might must there here what which "
    "who whom whose how why where any all every each some".split())
FORMAT = "memfold-instruction-model/2"
#: a run of at least this many words with no closed-class word is keyword chatter, never read
KEYWORD_RUN_WORDS = 8
_WORDS = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?")
#: how far ``none``'s logit must lead every other class's for :meth:`InstructionModel.predict_many`
#: to answer None without the probabilities
NONE_MARGIN = 1 / 128


def keyword_run(sentence: str) -> bool:
    """True for a sentence of :data:`KEYWORD_RUN_WORDS` or more words none of which is a
    closed-class word ("order refund parcel May tracking invoice approved manager ticket"): no
    English instruction that long lacks every article, pronoun, preposition and auxiliary. A
    capitalised word after the first is a name, not a closed-class word ("May", "Will"), but "I"."""
    words = _WORDS.findall(sentence)
    if len(words) < KEYWORD_RUN_WORDS:
        return False
    return not any(w.lower() in FUNCTION_WORDS and (n == 0 or w == "I" or not w[0].isupper())
                   for n, w in enumerate(words))


def features(sentence: str, dim: int, char_n: int = 4) -> list[int]:
    """The hashed feature indices of one sentence (each at most once, sorted)."""
    return sorted(_feature_set(_TOKEN.findall(sentence.lower()), sentence, dim, char_n))


def _feature_set(toks: list[str], sentence: str, dim: int, char_n: int) -> set[int]:
    """:func:`features` unsorted, from the sentence's tokens."""
    if not toks or char_n > 4:
        # no token: the n-grams of the bare "  " are no token's; longer n-grams may span three
        # tokens: the featurizer's premises (neither is the shipped model's case)
        return set(_reference_features(sentence, dim, char_n))
    got = _FEATURIZERS.get((dim, char_n))
    if got is None:
        got = _FEATURIZERS[(dim, char_n)] = _Featurizer(dim, char_n)
    return got.indices(toks)


#: a featurizer's memo is emptied when it holds this many entries (the answers stay the same)
MEMO_ENTRIES = 50_000
#: and a model's answers per sentence (:meth:`InstructionModel.predict_many`) when it holds this many
ANSWER_ENTRIES = 8192
_PUNCT = frozenset("?!:;$%£€@#")


class _Featurizer:
    """The features of :func:`_reference_features` (the definition) for one ``(dim, char_n)``,
    with every hashed index remembered (round 14: the same set of indices, fewer steps).

    The character n-grams of a sentence's ``" tok1 tok2 ... "`` either have no space among
    their inner characters, and then lie inside one token's ``" tok "``, or have one, and then
    (for ``char_n`` up to 4) lie inside the ``" tok tok' "`` of the two tokens around it. So a
    token brings its unigram and its inner n-grams (remembered per token), a pair of adjacent
    tokens its bigram and the n-grams across its space (remembered per pair), and the first,
    second and third token, the last one and the sentence's shape (closed-class count and share,
    length) the rest. ``char_n`` above 4 is not handled here (see :func:`_feature_set`)."""

    def __init__(self, dim: int, char_n: int) -> None:
        self.mask = dim - 1
        self.char_n = char_n
        self.tokens: dict[str, tuple[int, ...]] = {}
        self.pairs: dict[tuple[str, str], tuple[int, ...]] = {}
        self.ends: dict = {}

    def _index(self, feature: str) -> int:
        return zlib.crc32(feature.encode()) & self.mask

    def _token(self, tok: str) -> tuple[int, ...]:
        n, mask, crc = self.char_n, self.mask, zlib.crc32
        padded = f" {tok} "
        got = [f"u{tok}"]
        if n:
            got += ["c" + padded[i:i + n] for i in range(len(padded) - n + 1)]
        if len(self.tokens) >= MEMO_ENTRIES:
            self.tokens.clear()
        entry = self.tokens[tok] = tuple([crc(f.encode()) & mask for f in got])
        return entry

    def _pair(self, pair: tuple[str, str]) -> tuple[int, ...]:
        a, b = pair
        got = [f"b{a} {b}"]
        if self.char_n == 4:  # the two n-grams with the space between a and b inside
            got += [f"c{a[-1]} {(b + ' ')[:2]}", f"c{(' ' + a)[-2:]} {b[0]}"]
        elif self.char_n == 3:
            got.append(f"c{a[-1]} {b[0]}")
        if len(self.pairs) >= MEMO_ENTRIES:
            self.pairs.clear()
        mask, crc = self.mask, zlib.crc32
        entry = self.pairs[pair] = tuple([crc(f.encode()) & mask for f in got])
        return entry

    def _end(self, key) -> int:
        kind, tok = key
        if len(self.ends) >= MEMO_ENTRIES:
            self.ends.clear()
        feature = f"b{tok} $" if kind == "$" else (f"b^ {tok}", f"p0{tok}") if kind == 0 else f"p{kind}{tok}"
        got = self.ends[key] = (self._index(feature[0]), self._index(feature[1])) if kind == 0 else self._index(feature)
        return got

    def indices(self, toks: list[str]) -> set[int]:
        out: set[int] = set()
        tokens, pairs, ends = self.tokens, self.pairs, self.ends
        for t in toks:
            out.update(tokens.get(t) or self._token(t))
        for pair in zip(toks, toks[1:]):
            out.update(pairs.get(pair) or self._pair(pair))
        key = (0, toks[0])
        out.update(ends.get(key) or self._end(key))
        for key in enumerate(toks[1:3], 1):
            got = ends.get(key)
            out.add(self._end(key) if got is None else got)
        key = ("$", toks[-1])
        got = ends.get(key)
        out.add(self._end(key) if got is None else got)
        n_words = len(toks) - sum(map(_PUNCT.__contains__, toks))
        fw = sum(map(FUNCTION_WORDS.__contains__, toks))
        size = 0 if n_words < 5 else 1 if n_words < 9 else 2 if n_words < 15 else 3
        share = 0 if not fw else 1 if fw * 6 < n_words else 2 if fw * 3 < n_words else 3
        key = (min(fw, 3), share, size)
        got = ends.get(key)
        if got is None:
            got = ends[key] = (self._index(f"g{key[0]}"), self._index(f"s{share}:{size}"))
        out.update(got)
        return out


_FEATURIZERS: dict[tuple[int, int], _Featurizer] = {}


def _reference_features(sentence: str, dim: int, char_n: int = 4) -> list[int]:
    """The definition of :func:`features` (the straightforward form, before round 14's memo)."""
    low = sentence.lower()
    toks = _TOKEN.findall(low)
    feats = {f"u{t}" for t in toks}
    prev = "^"
    for t in toks:
        feats.add(f"b{prev} {t}")
        prev = t
    feats.add(f"b{prev} $")
    for i, t in enumerate(toks[:3]):
        feats.add(f"p{i}{t}")
    words = [t for t in toks if t[0].isalnum()]
    fw = sum(t in FUNCTION_WORDS for t in words)
    size = 0 if len(words) < 5 else 1 if len(words) < 9 else 2 if len(words) < 15 else 3
    share = 0 if not fw else 1 if fw * 6 < len(words) else 2 if fw * 3 < len(words) else 3
    feats.add(f"g{min(fw, 3)}")
    feats.add(f"s{share}:{size}")
    if char_n:
        flat = " " + " ".join(toks) + " "
        for i in range(len(flat) - char_n + 1):
            feats.add("c" + flat[i:i + char_n])
    mask = dim - 1
    return sorted({zlib.crc32(f.encode()) & mask for f in feats})


@dataclass
class InstructionModel:
    """Multinomial logistic regression over hashed features: ``weights`` (dim x classes, float),
    ``bias`` (classes), and the confidence ``threshold`` a non-``none`` class needs."""

    weights: np.ndarray
    bias: np.ndarray
    threshold: float
    char_n: int = 4
    classes: tuple[str, ...] = CLASSES
    #: the file this model was read from (written back as is: re-quantising is not exact)
    raw: bytes | None = field(default=None, repr=False, compare=False)
    _pad: tuple | None = field(default=None, init=False, repr=False, compare=False)
    #: answers of :meth:`predict_many` per sentence, with the parameters they were read with
    _answers: tuple | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def dim(self) -> int:
        return int(self.weights.shape[0])

    def scores(self, sentence: str) -> np.ndarray:
        """Class probabilities of one sentence."""
        idx = features(sentence, self.dim, self.char_n)
        # the same sums as ``weights[idx].sum(axis=0) + bias``, with fewer temporaries (round 13)
        z = np.add.reduce(self.weights.take(idx, axis=0), axis=0) if idx else np.zeros_like(self.bias)
        z += self.bias
        z -= z.max()
        np.exp(z, out=z)
        z /= z.sum()
        return z

    def predict(self, sentence: str) -> tuple[str, float] | None:
        """``(class, probability)`` when a class other than ``none`` reaches the threshold."""
        return self.predict_many([sentence])[0]

    def predict_many(self, sentences: Sequence[str]) -> list[tuple[str, float] | None]:
        """:meth:`predict` of each sentence, the same answers (round 14: the weight sums of all of
        them in one numpy pass; the class probabilities only where ``none`` does not lead by a margin).

        * The sums are the same: each sentence's indices sorted, padded at the end with a zero
          row past the last weight row (``x + 0.0 == x``), summed in order along the same axis.
        * A sentence whose logits put ``none`` first by more than :data:`NONE_MARGIN` has
          ``none`` as its most probable class (the softmax keeps the order and ``exp`` of a
          difference of -1/128 or less is far below ``exp(0) == 1``), so its answer is None
          without the probabilities; any other sentence gets them exactly as :meth:`scores`."""
        out: list[tuple[str, float] | None] = [None] * len(sentences)
        rows: list[int] = []
        sets: list[set[int]] = []
        dim, char_n = self.dim, self.char_n
        # round 15, speed only: a sentence read before with these very parameters gets its answer
        # again (chat repeats its sentences; an answer is the sentence's alone, see above)
        memo = self._answers
        if memo is None or memo[0] is not self.weights or memo[1] is not self.bias or memo[2] != (
                self.threshold, char_n, self.classes):
            memo = self._answers = (self.weights, self.bias, (self.threshold, char_n, self.classes), {})
        answers: dict[str, tuple[str, float] | None] = memo[3]
        for n, sentence in enumerate(sentences):
            if len(sentence.strip()) < MIN_CHARS:
                continue
            if sentence in answers:
                out[n] = answers[sentence]
                continue
            toks = _TOKEN.findall(sentence.lower())
            if len(toks) < MIN_WORDS or keyword_run(sentence):
                continue
            rows.append(n)
            sets.append(_feature_set(toks, sentence, dim, char_n))
        if not rows:
            return out
        width = max(map(len, sets))
        flat: list[int] = []
        for got in sets:
            flat += got
            flat += [dim] * (width - len(got))  # the zero row, sorted last
        idx = np.fromiter(flat, dtype=np.intp, count=len(flat)).reshape(len(sets), width)
        idx.sort(axis=1)
        # position j of every sentence in row j: one add of a row of len(sets) x classes per
        # position, each sentence's sum still taken in its own sorted order
        w = self._padded()
        z = np.add.reduce(w.take(idx.T, axis=0).reshape(width, -1), axis=0).reshape(len(sets), w.shape[1])
        z += self.bias
        lead = z[:, 0] - z[:, 1:].max(axis=1) > NONE_MARGIN
        for r in np.flatnonzero(~lead).tolist():
            p = z[r].copy()
            p -= p.max()
            np.exp(p, out=p)
            p /= p.sum()
            k = int(p.argmax())
            if k and p[k] >= self.threshold:
                out[rows[r]] = (self.classes[k], float(p[k]))
        if len(answers) + len(rows) > ANSWER_ENTRIES:
            answers.clear()
        for n in rows:
            answers[sentences[n]] = out[n]
        return out

    def _padded(self) -> np.ndarray:
        """``weights`` with one zero row after the last (index ``dim``), kept while ``weights`` is."""
        got = self._pad
        if got is None or got[0] is not self.weights:
            w = self.weights
            got = self._pad = (w, np.concatenate([w, np.zeros((1, w.shape[1]), dtype=w.dtype)]))
        return got[1]

    # -- the data file -----------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """The weights file: a JSON header line, then the weights as int8 (one scale per class)."""
        if self.raw is not None:
            return self.raw
        w = np.asarray(self.weights, dtype=np.float64)
        scale = np.abs(w).max(axis=0) / 127.0
        scale[scale == 0] = 1.0
        q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
        header = {"format": FORMAT, "classes": list(self.classes), "dim": self.dim,
                  "char_n": self.char_n, "threshold": round(float(self.threshold), 6),
                  "scale": [float(f"{s:.8e}") for s in scale], "bias": [float(f"{b:.8e}") for b in self.bias]}
        return json.dumps(header, sort_keys=True).encode() + b"\n" + q.tobytes(order="C")

    @classmethod
    def from_bytes(cls, data: bytes) -> "InstructionModel":
        head, sep, body = data.partition(b"\n")
        try:
            header = json.loads(head)
            classes = tuple(header["classes"])
            dim = int(header["dim"])
            q = np.frombuffer(body, dtype=np.int8).reshape(dim, len(classes))
        except (ValueError, KeyError, TypeError) as exc:
            raise ModelFileError(f"instruction model file is malformed: {exc}") from exc
        if header.get("format") != FORMAT or not sep:
            raise ModelFileError(f"instruction model file has an unknown format: {header.get('format')!r}")
        weights = q.astype(np.float32) * np.asarray(header["scale"], dtype=np.float32)
        return cls(weights, np.asarray(header["bias"], dtype=np.float32), float(header["threshold"]),
                   int(header["char_n"]), classes, raw=bytes(data))


_SHIPPED: list[InstructionModel | None] = []
#: a model swapped in by :func:`using` (``False``: none, the rules alone)
_OVERRIDE: ContextVar[InstructionModel | None | bool] = ContextVar("memfold_instruction_model", default=True)


def shipped() -> InstructionModel | None:
    """The model in the package (read once); None when its file is absent."""
    if not _SHIPPED:
        _SHIPPED.append(InstructionModel.from_bytes(WEIGHTS_PATH.read_bytes()) if WEIGHTS_PATH.exists() else None)
    return _SHIPPED[0]


OFF_VALUES = ("off", "0", "false", "no")
ON_VALUES = ("on", "1", "true", "yes")


def enabled_by_env() -> bool:
    """Whether ``MEMFOLD_INSTRUCTION_MODEL`` turns the model on: ``on``, ``1``, ``true``, ``yes``
    or unset/empty (the default since round 13; rounds 11-12 kept it off: on a support bot's chatter
    of "approved manager ticket" it made 222 records in 1,500 turns; it now makes none there), or
    off: ``off``, ``0``, ``false``, ``no`` (case and surrounding spaces aside).

    :raises SettingError: for any other value ("maybe", "of": a typo of "off" must not leave the
        model on unnoticed), naming the variable and the values it accepts. Called when a
        :class:`~memfold.MemFold` or a ``RuleConstraintExtractor`` is built, never at import.
    """
    raw = os.environ.get(ENV_SWITCH, "")
    value = raw.strip().lower()
    if value in ("", *ON_VALUES):
        return True
    if value in OFF_VALUES:
        return False
    raise SettingError(f"{ENV_SWITCH}={raw!r} is not understood: use on, 1, true or yes (the default, "
                       f"also when unset or empty) to read sentences with the instruction model, or off, "
                       f"0, false or no for the rules alone")


def current() -> InstructionModel | None:
    """The model in force here: the one :func:`using` set, else the shipped one."""
    got = _OVERRIDE.get()
    if got is True:
        return shipped()
    return got or None


@contextmanager
def using(model: InstructionModel | None) -> Iterator[None]:
    """Use ``model`` (None: no model) inside the ``with`` block (current thread or task only)."""
    token = _OVERRIDE.set(model if model is not None else False)
    try:
        yield
    finally:
        _OVERRIDE.reset(token)


@dataclass(frozen=True)
class Suggestion:
    """What the model reads in the sentences the rules left alone: ``kind`` is a record kind or an
    act (:data:`ACTS`); ``text`` is verbatim (for a record, the run of flagged sentences; for a
    plan reset, the whole message)."""

    kind: str
    text: str
    confidence: float


def suggest(model: InstructionModel, text: str, sents: Sequence[str], covered: Sequence[str],
            max_chars: int, small_talk: Callable[[str], bool] | None = None) -> list[Suggestion]:
    """The model's suggestions for ``text``'s sentences that no rule output covers.

    Consecutive sentences flagged with the same record kind become one record (a scope sentence
    and its instruction); a plan reset anywhere makes the whole message the new plan. Nothing
    longer than ``max_chars`` is suggested, nor any sentence ``small_talk`` (the rules' vetoes)
    calls small talk."""
    read = [not any(s in c or c in s for c in covered) and not (small_talk is not None and small_talk(s))
            for s in sents]
    got = iter(model.predict_many([s for s, r in zip(sents, read) if r]))
    flagged: list[tuple[str, str, float]] = []
    for s, r in zip(sents, read):
        p = next(got) if r else None
        flagged.append((p[0], s, p[1]) if p else ("", s, 0.0))
    if any(k == "plan_reset" for k, _, _ in flagged):
        if not covered and len(text.strip()) <= max_chars:
            best = max(c for k, _, c in flagged if k == "plan_reset")
            return [Suggestion("plan_reset", text.strip(), best)]
        flagged = [("", s, 0.0) if k == "plan_reset" else (k, s, c) for k, s, c in flagged]
    out: list[Suggestion] = []
    i = 0
    while i < len(flagged):
        kind, s, conf = flagged[i]
        if not kind:
            i += 1
            continue
        if kind in ACTS:
            out.append(Suggestion(kind, s, conf))
            i += 1
            continue
        j = i
        while j + 1 < len(flagged) and flagged[j + 1][0] == kind:
            j += 1
        start = text.find(s)
        end_s = flagged[j][1]
        end = text.find(end_s, start) + len(end_s) if start >= 0 else -1
        span = text[start:end] if start >= 0 and end > start else s
        if len(span) > max_chars:
            span = s
        if len(span) <= max_chars:
            out.append(Suggestion(kind, span, max(c for _, _, c in flagged[i:j + 1])))
        i = j + 1
    return out


def pick_target(act: str, text: str, records: Sequence, stem, terms) -> list:
    """The one active record an act of the model ends, or ``[]`` when that is ambiguous.

    ``records`` are the active records of the turn's conversation the act may end (for a
    satisfaction, the ones that wait); ``terms`` maps a text to its
    content words and ``stem`` a word to its stem (the tracker's own). The record sharing the
    most stems (at least one) with the act's sentence wins when no other ties it; a satisfaction
    whose sentence names nothing (no content word) picks the only waiting prerequisite."""
    pool = list(records)
    want = {stem(t) for t in terms(text)}
    scored = sorted(((len(want & {stem(t) for t in terms(r.text)}), n, r) for n, r in enumerate(pool)),
                    key=lambda x: (-x[0], x[1]))
    if scored and scored[0][0] >= 1 and (len(scored) == 1 or scored[1][0] < scored[0][0]):
        return [scored[0][2]]
    if act == "satisfy" and not want and len(pool) == 1 and pool[0].kind == "prerequisite":
        # "It's here." / "All done.": a sentence naming nothing may only end the one waiting
        # record; one naming something else ("The new sofa arrived") ends nothing
        return [pool[0]]
    return []
