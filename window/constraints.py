"""Constraint-aware extraction: every appended user turn is read for standing instructions (issue 8, point 2).

A :class:`ConstraintExtractor` turns one user message into an :class:`Extraction`: proposed
protected records (verbatim sentences of the message, with the kind and the rule that matched)
and withdrawals (a later statement that revokes, satisfies or replaces earlier ones, such as "you
can delete them now" or "scratch that, let's instead ..."). :class:`ConstraintTracker` applies
an extraction to the :class:`~memfold.window.protected.ProtectedChannel` with provenance
(``turn:<id>``), in one transaction with its events.

Invariants kept here:

* Deterministic by default: :class:`RuleConstraintExtractor` is a pure function of the text (and,
  for deadlines on the system clock, of ``now``), so the same turns give the same records.
* A proposal's text is a verbatim substring of the user's message; nothing is paraphrased.
* A withdrawal only touches active records of the same conversation (or its namespace) whose
  words it names; when nothing matches, nothing changes (a vague "never mind" revokes nothing).
* When an LLM is configured, :class:`LLMConstraintExtractor` may propose records too, but only
  sentences that occur verbatim in the message are accepted, and on any LLM failure the rules'
  answer is used and the failure logged.

The phrase list follows issue 8 ("do not / don't / never", "until I confirm", "always", "only",
"before you", "make sure", "from now on", "for the rest of this session", deadlines such as "by
Friday" or "before 5 pm"), the COMPINT side-constraint types (Action, Information, Process,
Preference, Output; arXiv 2608.11242) and the CompactBench template families (buried constraints
and decision overrides).
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Sequence

from ..memory.errors import ExtractorError, InvalidInput
from ..memory import families
from ..memory.events import log_event
from ..memory.storage.base import write_scope
from . import directives, directives_r13, directives_r14, directives_r15, directives_r16, instruction_model, prefilter
from .labels import SECRET_LABEL
from .protected import KINDS, ProtectedChannel, ProtectedRecord

if TYPE_CHECKING:  # pragma: no cover
    from ..memory.clock import Clock
    from ..memory.llm import ChatClient
    from .archive import Turn


@dataclass(frozen=True)
class ConstraintProposal:
    """A protected record a :class:`ConstraintExtractor` proposes (the consolidation extractors'
    facts and rules are :class:`memfold.consolidation.extractors.base.Proposal`).

    :ivar kind: one of :data:`~memfold.window.protected.KINDS`.
    :ivar text: verbatim sentence(s) of the message.
    :ivar rule: the name of the rule that matched (``never``, ``until_confirm``, ``deadline``, ...).
    :ivar due_at: for deadlines resolvable on the system clock, POSIX seconds; else None.
    :ivar replaces_previous: True for a decision override ("scratch that, let's instead ...").
    :ivar supersedes: for a rule replacement, the words naming the record it replaces.
    :ivar kind_of_replaced: take the replaced record's kind (and need one to replace).
    """

    kind: str
    text: str
    rule: str
    due_at: float | None = None
    replaces_previous: bool = False
    #: for a rule replacement ("Send it on Slack instead of by email"): content words of what it
    #: replaces; the tracker supersedes the earlier record sharing the most of them (and at least
    #: two words of the whole sentence). With ``kind_of_replaced`` the proposal takes that
    #: record's kind, and is dropped when no earlier record matches.
    supersedes: tuple[str, ...] = ()
    kind_of_replaced: bool = False


@dataclass(frozen=True)
class Withdrawal:
    """A statement that ends earlier records.

    :ivar action: ``revoke`` (the user withdrew a restriction) or ``satisfy`` (the user gave the
        confirmation a record was waiting for).
    :ivar text: the verbatim sentence.
    :ivar terms: content words naming what is withdrawn (matched against record texts). For
        ``satisfy`` they pick which waiting record is released; without terms (or when none
        matches) a bare confirmation releases every record waiting for the user's confirmation.
    :ivar min_overlap: how many content words (stems) a record must share with ``terms`` to be
        touched: 0 lets a bare "confirmed" release every record waiting for confirmation; an
        explicit withdrawal ("forget what I said about X", "confirmed, send the invoice") needs
        1; a weaker shape needs 2 (a go signal such as "the goods arrived, release the payment",
        "X is fine again", a permission lifting the prohibition it contradicts), so small talk
        that shares one word with a record ("ok, I'll send a message") changes nothing.
    """

    action: str
    text: str
    terms: tuple[str, ...] = ()
    min_overlap: int = 1


@dataclass(frozen=True)
class Extraction:
    """What one message proposes and withdraws."""

    proposals: list[ConstraintProposal] = field(default_factory=list)
    withdrawals: list[Withdrawal] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"proposals": [p.__dict__ for p in self.proposals],
                "withdrawals": [dict(w.__dict__, terms=list(w.terms)) for w in self.withdrawals]}


class ConstraintExtractor(ABC):
    """Reads one user message and proposes protected records (STYLE.md rule 7: one method)."""

    id: str = ""

    @abstractmethod
    def extract(self, text: str, *, now: float | None = None, clock: "Clock | None" = None) -> Extraction:
        """The proposals and withdrawals in ``text``.

        :param now: the time of the message (clock units), used to resolve deadlines.
        :param clock: the injected clock; deadlines get a ``due_at`` only on the system clock.
        :raises ExtractorError: when the extractor fails (the rule extractor never does).
        """


# -- the deterministic rules ------------------------------------------------------------------
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+[\"')\]]*|$)", re.M)
# Words that may precede a directive at the start of a sentence without changing it.
_LEAD = (r"(?:(?:absolutely|please|also|so|and|again|actually|remember|yes|ok|okay|rule\s+\w+|one\s+more\s+thing|first|"
         r"important|note|oh and|but)\s*[:,\-—]?\s+)*")
# A directive starts a sentence (after lead words), or follows a colon, semicolon or dash.
_CLAUSE_START = r"(?:^\s*|[:;—]\s*|\s-\s+)"
_SCOPE = re.compile(r"\b(?:from now on|for the rest of (?:this|the) (?:session|conversation|chat|project)|"
                    r"(?<!keep )(?<!keeps )(?<!keep on )going forward|until further notice|from here on(?: out)?)\b", re.I)
_SCOPE_PREFIX = re.compile(r"^\s*(?:" + _SCOPE.pattern + r")\s*[,.:;—-]?\s*", re.I)
# Small talk that looks like a directive: encouragement, reassurance, tag questions.
_NOT_AFTER_NEGATION = (r"(?!worry|mind|give up|quit|get me wrong|ever\b(?!\s+(?:" + "|".join(sorted(directives.task_verbs()))
                       + r")\b)|forget|"
                       r"be (?:sorry|afraid|shy|sad|scared|a stranger|too hard|so hard|hard)|hesitate|stop (?:believing|dreaming)|"
                       r"let (?:anything|anyone|anybody|it|that|this|them|the|fear|others|yourself|people)|feel|"
                       r"get (?:discouraged|down|me started)|limit yourself|rush|miss (?:a beat|out)|say never|lose (?:hope|heart)|"
                       r"doubt|you\b|they\b|we\b|i\b|it\b|he\b|she\b|"
                       r"(?:been|saw|seen|done|thought|tried|had|got|gets|gives|knew|felt|imagined|expected|"
                       r"fails?|gets? old|ceases?)\b)")
_NOT_AFTER_ALWAYS = (r"(?!remember|be there|there|here|cherish|believe|love|look on|stay (?:positive|strong|true)|"
                     r"count on|have (?:your|my) back|know|up\b|good|great|happy|nice|fun|a\b|an\b|the\b|been|staying|"
                     r"running|full|so\b|welcome|glad|wanted|loved|admired|interested|puts|makes|gets|brings|bringing|"
                     r"supporting|cheer|ready|exciting|amazing|wonderful)")
_RULES: list[tuple[str, str, re.Pattern[str]]] = [
    ("until_confirm", "prerequisite",
     re.compile(r"\buntil (?:i|we) (?:confirm|approve|say so|give (?:you )?(?:the )?(?:go-ahead|ok|okay|green light))"
                r"|\bwait for my (?:go-ahead|approval|confirmation|ok|okay)\b|\bwithout my (?:approval|confirmation|permission|ok)\b", re.I)),
    # an action held until something happens ("Don't ship the order until I've checked the address"):
    # a record waiting for a condition, released by a later go signal (issue 20)
    ("until", "prerequisite",
     re.compile(_CLAUSE_START + _LEAD + r"(?:(?:never|do not|don't|dont|hold|park|pause|keep (?:[\w'-]+ ){1,5}?on hold|"
                r"hold off on|wait (?:to|on|with))\b[^.!?]*?\buntil\b|wait (?:for|until) (?:my|the|i|we|you)\b[^.!?]*?\bbefore\b)",
                re.I)),
    ("before_you", "prerequisite",
     re.compile(_CLAUSE_START + _LEAD + r"before (?:you(?! know it)|doing|running|sending|making|deleting|deploying)\b", re.I)),
    ("never", "constraint",
     re.compile(_CLAUSE_START + _LEAD + r"(?:never|do not|don't|dont|do n't|must not|mustn't|under no circumstances|"
                r"you (?:must|should|may) not|you mustn't|you shouldn't|stop)\s+" + _NOT_AFTER_NEGATION, re.I)),
    ("always", "constraint",
     re.compile(_CLAUSE_START + _LEAD + r"always\s+" + _NOT_AFTER_ALWAYS, re.I)),
    ("only", "constraint",
     re.compile(_CLAUSE_START + _LEAD + r"only\s+(?:ever\s+)?(?:use|reply|respond|answer|write|send|show|give|recommend|"
                r"suggest|pick|include|book|contact|email|call|run|deploy|edit|touch|work|ship|quote|charge|accept|offer|"
                r"speak)\b|"
                r"\buse only\b", re.I)),
    ("make_sure", "obligation",
     re.compile(_CLAUSE_START + _LEAD + r"(?:make sure|be sure|ensure|don't forget to|do not forget to)\s+"
                r"(?!(?:to |you )?(?:take care|have fun|enjoy|relax|rest|treat yourself|smile|keep going|don't quit|"
                r"socialize|stay positive|take (?:breaks|some)|prepare emotionally|believe|build (?:relationships|connections|trust|"
                r"a network))|they\b|it'?s\b|yours\b)", re.I)),
    ("when_you", "constraint",
     re.compile(_CLAUSE_START + _LEAD + r"(?:when|whenever|each time|every time|any time|if) you\b[^,]{2,80},\s*"
                r"(?:always\s+|please\s+|do\s+)?(?:use|pick|prefer|choose|end|start|begin|include|add|write|put|"
                r"give|show|ask|reply|respond|answer|format|cite|mention|send|check|run|search|keep|stop|avoid|"
                r"don't (?!hesitate)|do not (?!hesitate)|never)", re.I)),
    ("every_reply", "constraint",
     re.compile(r"\b(?:every|each|all|any) (?:of your )?(?:repl(?:y|ies)|responses?|answers?|messages? you send|tool calls?)\b"
                r"|\bin your (?:repl(?:y|ies)|responses?|answers?)\b", re.I)),
    ("must", "obligation",
     re.compile(_CLAUSE_START + _LEAD + r"you (?:must|have to|need to|are required to)\s+(?!try|see|come|check out|go\b|"
                r"be\b|have\b|'ve|love|feel|really|enjoy|miss|know|think|keep|get|admit)", re.I)),
    ("permission", "permission",
     re.compile(r"\byou(?: are|'re) (?:allowed|authori[sz]ed|permitted|cleared) to\b|\byou have my permission\b", re.I)),
    ("approval", "approval",
     re.compile(r"\b(?:i|we) (?:approve|authori[sz]e|sign off on)\b(?! of\b)|\b(?:is|are) approved\b", re.I)),
]
_DEADLINE = re.compile(
    r"\b(?:by|before|no later than|due(?: on| by)?|until)\s+(?:the\s+)?(?:end of (?:the )?(?:day|week|month|today|tomorrow)|"
    r"eod|eow|tonight|tomorrow(?: (?:morning|noon|evening|night))?|today|noon|midnight|"
    r"(?:next\s+)?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.?|p\.m\.?)|\d{1,2}:\d{2})\b", re.I)
_DEADLINE_CONTEXT = re.compile(r"\b(?:please|you|need|needs|must|have to|has to|send|finish|submit|deliver|due|"
                               r"deadline|ship|get (?:it|this|that) (?:done|back)|reply|respond|make sure)\b", re.I)
_OVERRIDE = re.compile(
    r"\b(?:scratch that|ignore (?:the|my) (?:earlier|previous|last|original) (?:instruction|plan|idea|request|one)s?|"
    r"final answer|let me revise|change of plans?|(?:is|are) (?:now )?off the table|let's instead|instead,? let's|"
    r"let's (?:swap|switch|change) the (?:approach|plan))|(?:^|[.!?—:]\s*)forget (?:[a-z] and [a-z]|what i said|"
    r"the (?:earlier|previous|original) (?:plan|one|idea))\b", re.I)
_OVERRIDE_OPTION = re.compile(r"\b(?:[Gg]o with|[Ss]witch(?:ing)? to) (?:option )?[A-Z]\b")
_WITHDRAW = re.compile(
    r"\b(?:you can (?:now |go ahead and )?|you may (?:now )?|feel free to |go ahead and |it's (?:ok|okay|fine) to |"
    r"it is (?:ok|okay|fine) to |you no longer need to |no need to |you don't need to )"
    r"(?P<what>[^.!?;]*?)\s*(?P<when>\bnow\b|\banymore\b|\bany more\b|\bafter all\b|\bagain\b)[^.!?;]*[.!?]?", re.I)
_WITHDRAW_RULE = re.compile(
    r"\b(?:the|that|this|my) (?:rule|constraint|restriction|instruction) (?:about|on|regarding) (?P<what>[^.!?;]+?) "
    r"(?:no longer applies|is lifted|is over|is cancell?ed|is revoked)", re.I)
_CONFIRM = re.compile(r"^\s*(?:(?:ok|okay|yes|yep|alright)[,.!]?\s+)?(?:i confirm|confirmed|you have my (?:go-ahead|approval|ok)|"
                      r"go ahead(?: with it)?|approved|you're cleared|you are cleared)\b", re.I)
_STOP = frozenset("""a an the to of and or in on at for with by from now them it this that these those those all any
you your i me my we our us can may go ahead feel free no longer need don't dont do not anymore again after please
just ok okay fine is are be will would should could
what which who whom whose when where why how you're you'll you've i'm i've it's that's there their they
some more most very really about make makes made making take takes took taking do does did doing done
get gets got getting have has had having thing things something anything everything also too much many
lot lots sure want need know""".split())
_WORD = re.compile(r"[a-z0-9][a-z0-9'_-]*")
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


_ABBREVIATION_STOP = re.compile(r"(?<=\b(?:Mr|Ms|Dr|St|No|vs))\.|(?<=\bMrs)\.|(?<=\bProf)\.|(?<=\be\.g)\.|(?<=\bi\.e)\.|"
                                r"(?<=\d)\.(?=\d)", re.I)
_ABBREVIATION = re.compile(r"(?:^|\s)(?:mr|mrs|ms|dr|st|prof|jr|sr|inc|ltd|co|vs|etc|approx|no|e\.g|i\.e)\.$", re.I)


def _abbreviation_probe(sent: str) -> str:
    """``_ABBREVIATION_STOP.sub(" ", sent)``, tried only at the full stops (round 11, speed only:
    every match of the pattern is one "." and its look-arounds read the text around it, so the
    pattern tried at each "." finds the same matches as the scan over every position)."""
    out: list[str] | None = None
    at = sent.find(".")
    while at >= 0:
        if _ABBREVIATION_STOP_AT(sent, at):
            if out is None:
                out = list(sent)
            out[at] = " "
        at = sent.find(".", at + 1)
    return sent if out is None else "".join(out)


#: an initial before a surname ("signed for by J. Smith") ends no sentence either
_INITIAL = re.compile(r"(?:^|\s)[A-Z]\.$")
#: an initial inside quotes ("signed for by 'K. Ahmed'"), family ``initial_in_quotes``
_INITIAL_QUOTED = re.compile(r"(?:^|\s)['\"‘“(][A-Z]\.$")


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, each a verbatim substring (stripped of surrounding spaces). A
    full stop after a title or common abbreviation ("Mr. Obi", "e.g. this") ends no sentence."""
    prefilter.read(text, "rules")  # the text's literals once, shared by its sentences (speed only)
    spans = [[m.start(), m.end()] for m in _SENTENCE.finditer(text) if m.group(0).strip()]
    merged: list[list[int]] = []
    for span in spans:
        # no boundary inside "$39.99" or "v2.1" (no space after the stop), nor after "Mr."
        if merged and (merged[-1][1] == span[0] and not text[span[0]].isspace()
                       # the three patterns below each end in "\.$": a sentence not ending in a full
                       # stop matches none of them (round 13, speed only: no pattern call)
                       or (last := text[merged[-1][0]:merged[-1][1]].rstrip())[-1:] == "."
                       and (_ABBREVIATION.search(last)
                            or (_INITIAL.search(last) or families.on(directives.F_INITIAL_QUOTED) and _INITIAL_QUOTED.search(last))
                            and text[span[0]:].lstrip()[:1].isupper())):
            merged[-1][1] = span[1]
        else:
            merged.append(span)
    return [text[a:b].strip() for a, b in merged]


def content_terms(text: str) -> tuple[str, ...]:
    """Lower-cased content words of ``text`` (stop words dropped), in order, deduplicated."""
    seen: dict[str, None] = {}
    for w in _WORD.findall(text.lower()):
        if w not in _STOP and (len(w) > 2 or w.isdigit()):
            seen.setdefault(w, None)
    return tuple(seen)


def _stem(word: str) -> str:
    """A crude stem: possessive and one common suffix off, then the first five letters
    ("texting", "text" -> "text"; "merging", "merge" -> "merg"; "weekends" -> "weeke")."""
    w = word.lower().replace("’", "'")
    w = w[:-2] if w.endswith("'s") else w
    if w.endswith("ies") and len(w) > 4 and families.on(directives.F_REVOKE_R5):
        w = w[:-3] + "y"  # "replies", "reply" -> "reply"; "copies", "copy" -> "copy"
    for suffix in ("ing", "ed", "es", "s", "e"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            if suffix in ("es", "s") and w.endswith(("ing", "ed")) and not w.endswith("eed") \
                    and len(w) - (3 if w.endswith("ing") else 2) >= 3:
                # a plural of a gerund or past form ("meetings", "bookings"): the same stem as
                # "meeting" ("meet", not "meeti")
                w = w[: -3] if w.endswith("ing") else w[: -2]
            break
    return w[:5]


def resolve_due(phrase: str, now: float, clock: "Clock | None") -> float | None:
    """POSIX seconds for a deadline phrase on the system clock (UTC); None on a logical clock or
    when the phrase names no resolvable time. ``before 5 pm`` means 17:00 today (tomorrow if
    past); ``by Friday`` the end of the next Friday; ``end of day`` / ``tonight`` today 23:59:59."""
    if clock is None or clock.kind != "system":
        return None
    base = datetime.fromtimestamp(now, timezone.utc)
    p = phrase.lower()
    end_of = lambda d: d.replace(hour=23, minute=59, second=59, microsecond=0)  # noqa: E731
    m = re.search(r"(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?", p)
    if m and (m.group(3) or m.group(2)):
        hour = int(m.group(1)) % 12 if m.group(3) else int(m.group(1))
        if m.group(3) and m.group(3).startswith("p"):
            hour += 12
        if hour > 23:
            return None
        due = base.replace(hour=hour, minute=int(m.group(2) or 0), second=0, microsecond=0)
        if due <= base:
            due += timedelta(days=1)
        return due.timestamp()
    for i, day in enumerate(_WEEKDAYS):
        if day in p:
            delta = (i - base.weekday()) % 7 or 7
            return end_of(base + timedelta(days=delta)).timestamp()
    if "tomorrow" in p:
        return end_of(base + timedelta(days=1)).timestamp()
    if any(k in p for k in ("end of day", "eod", "tonight", "today", "midnight")):
        return end_of(base).timestamp()
    if "end of week" in p or "eow" in p or "end of the week" in p:
        return end_of(base + timedelta(days=(6 - base.weekday()))).timestamp()
    return None


#: the longest text a protected record is made of (characters): a longer sentence, or a longer
#: whole-message reset, is not read as a standing instruction. A record is shown verbatim in every
#: context, so a 50 KB run-on paste that opens like a rule ("Plan: ...", "Never share the ...")
#: must not become one; the longest record of every phrasing set and public benchmark is far shorter.
MAX_RECORD_CHARS = 1_000


#: the sentences :meth:`RuleConstraintExtractor._classify` found no instruction in, keyed with the
#: families off (round 15, speed only: chat repeats its sentences, "Thanks!", "Haha, same here.",
#: 17% of LoCoMo's). Whether a sentence holds an instruction depends on the sentence and the
#: family state alone (the clock only sets a found deadline's ``due_at``), so only "none" is kept.
class _Remembered(dict):
    """A dict of answers remembered for speed, emptied like an ``lru_cache`` (``cache_clear``)."""

    def cache_clear(self) -> None:
        self.clear()


_NO_PROPOSAL: _Remembered = _Remembered()
#: emptied when it holds this many (the answers stay the same)
MAX_NO_PROPOSAL = 8192


class RuleConstraintExtractor(ConstraintExtractor):
    """The deterministic extractor: phrase rules over sentences (see the module docstring)."""

    id = "rules"

    def __init__(self, *, model: bool | None = None) -> None:
        #: read the sentences no rule covers with the learned model (:mod:`.instruction_model`);
        #: None: on unless ``MEMFOLD_INSTRUCTION_MODEL=off``
        self.model = instruction_model.enabled_by_env() if model is None else bool(model)

    def extract(self, text: str, *, now: float | None = None, clock: "Clock | None" = None) -> Extraction:
        # a sentence longer than MAX_RECORD_CHARS is no standing instruction (a run-on paste that
        # starts like a rule): it is not read, so no record of that size is ever proposed
        sents = [s for s in directives_r16.merge_r16(text, directives_r15.merge_r15(
            text, directives_r14.merge_tails_r14(text, _merge_r5(text, sentences(text))))) if len(s) <= MAX_RECORD_CHARS]
        proposals: list[ConstraintProposal] = []
        withdrawals: list[Withdrawal] = []
        about = any(directives.withdraws_about(s) or directives_r13.withdraws_about_r13(s) for s in sents)
        if not about and len(text.strip()) <= MAX_RECORD_CHARS and _is_override(text):
            return Extraction([ConstraintProposal("policy_state", text.strip(), "override", replaces_previous=True)], [])
        if not about and len(text.strip()) <= MAX_RECORD_CHARS and (listed := directives_r14.list_r14(text)) is not None:
            # round 14: "Steps for account closure:\n- confirm ...\n- only then ...": one record
            return self._with_model(text, sents, Extraction([ConstraintProposal(listed[0], text.strip(), listed[1])], []),
                                    now, clock) if self.model else Extraction(
                [ConstraintProposal(listed[0], text.strip(), listed[1])], [])
        if not about and (st := _structured_r16(text)) is not None:  # round 16: a table or a YAML block
            return self._with_model(text, sents, st, now, clock) if self.model and st.proposals else st
        if directives_r16.code_question_r16(text):  # round 16: "```...``` is this valid YAML?"
            return Extraction([], [])
        if not about and len(sents) == 1 and (rep := directives.replacement(sents[0])) is not None:
            form, old, _new = rep
            if form == "plan":
                return Extraction([ConstraintProposal("policy_state", text.strip(), "replacement",
                                                      replaces_previous=True)], [])
            found = self._classify(sents[0], now, clock)
            terms = tuple(t for t in _split_terms(old))
            if terms:
                if found is not None:
                    found = ConstraintProposal(found.kind, found.text, found.rule, due_at=found.due_at, supersedes=terms)
                else:
                    found = ConstraintProposal("constraint", sents[0], "replacement", supersedes=terms,
                                               kind_of_replaced=True)
                return Extraction([found], [])
        if not about and len(text.strip()) > MAX_RECORD_CHARS and (span := _override_span(text, sents)) is not None:
            # a plan change in a message too long to be one record: the sentence(s) stating it
            # supersede the plan in force, and the rest of the message is read as usual
            proposals.append(ConstraintProposal("policy_state", span[0], "override", replaces_previous=True))
            sents = [s for j, s in enumerate(sents) if j not in span[1]]
        i = 0
        read: dict[str, ConstraintProposal | None] = {}  # sentences _states_standing classified
        while i < len(sents):
            sent = sents[i]
            # A bare scope marker ("For the rest of this session.") belongs to the next sentence.
            if _SCOPE.search(sent) and len(content_terms(_SCOPE.sub("", sent))) < 2 and i + 1 < len(sents):
                joined = text[text.index(sent): text.index(sents[i + 1], text.index(sent)) + len(sents[i + 1])]
                sents[i + 1] = joined
                i += 1
                continue
            probe = _abbreviation_probe(sent)  # "Mr. Obi" -> "Mr  Obi" so a clause can span it
            probe = directives_r13.fix_typos(probe)  # round 13: "the photo requirment ... is canceled"
            wm = _WITHDRAW.search(probe) or _WITHDRAW_RULE.search(probe)
            what = wm.group("what") if wm else directives.withdrawn_terms(probe)
            explicit_r5 = False
            if (r5 := directives.withdrawn_r5(probe)) is not None:
                # a round-5 form, alone or beside an earlier one ("Connecting flights are OK
                # again, no need to stick to nonstop": both halves name what is withdrawn)
                what = r5[0] if what is None else f"{what} {r5[0]}"
                explicit_r5 = r5[1]
            r16w = _withdrawn_r16(probe) if what is not None else None
            if r16w is not None:
                # round 16: a form an earlier clause pattern reads only in part ("Lieferando you may
                # again use, the problem with them is solved"): its words named too
                what, explicit_r5 = f"{what} {r16w[0]}", True
            if (r8 := directives.withdrawn_r8(probe)) is not None:
                # a round-8 form ("I've changed my mind about Ryanair", "That $500 expense cap no
                # longer applies"): it names what it ends
                what = r8[0] if what is None else f"{what} {r8[0]}"
                explicit_r5 = True
            r9 = directives.withdrawn_r9(probe) if what is None else None
            if r9 is not None:
                # a round-9 form ("The 10pm cut-off can go", "Scratch the Saturday thing", a
                # restoration "We're reinstating the admin fee"), its reason's words added
                if r9[1] == "lift":
                    withdrawals.append(Withdrawal("lift", sent, content_terms(r9[0]), min_overlap=2))
                elif r9[1] == "revert":
                    withdrawals.append(Withdrawal("revoke", sent, content_terms(r9[0]), min_overlap=1))
                else:
                    withdrawals.append(Withdrawal("revoke", sent, content_terms(r9[0]), min_overlap=1))
                i += 1
                continue
            r10 = directives.withdrawn_r10(probe) if what is None else None
            if r10 is not None:
                # a round-10 form ("X is no longer needed", "the 30-day cut-off is gone", "we're
                # taking Amex again"): a revocation, or a restoration that lifts a prohibition
                withdrawals.append(Withdrawal(r10[1], sent, content_terms(r10[0]), min_overlap=1))
                i += 1
                continue
            r13 = directives_r13.withdrawn_r13(probe) if what is None else None
            if r13 is not None:
                # a round-13 form ("You can drop the 80-word limit", "We're reversing the X policy")
                withdrawals.append(Withdrawal(r13[1], sent, content_terms(r13[0]), min_overlap=1))
                i += 1
                continue
            r14 = directives_r14.withdrawn_r14(probe) if what is None else None
            if r14 is not None:
                # a round-14 form ("the prohibition of X is no more valid", "Ok to X now")
                withdrawals.append(Withdrawal(r14[1], sent, content_terms(r14[0]), min_overlap=1))
                i += 1
                continue
            if what is None and (r15 := directives_r15.withdrawn_r15(probe)) is not None:
                # a round-15 form ("calls after 7 are fine now", "The QA sign-off rule is scrapped")
                withdrawals.append(Withdrawal(r15[1], sent, content_terms(r15[0]), min_overlap=1))
                i += 1
                continue
            if what is None and (r16 := _withdrawn_r16(probe)) is not None:
                # a round-16 form ("As GM I'm lifting the phone ban", "The rule with the car park, this is not more valid")
                withdrawals.append(Withdrawal(r16[1], sent, content_terms(r16[0]), min_overlap=1))
                i += 1
                continue
            if what is not None and r16w is None and (label := directives.topic_label_r9(probe)):
                what = label  # "PO boxes: we can deliver to them now, so that rule is cancelled"
            elif what is not None and (head := directives.withdrawn_in_tail_r9(probe)):
                what = f"{what} {head}"  # "The price rise is public, so the ban on mentioning it is lifted"
            if what is not None and families.on(directives.F_REVOKE_R5):
                what = directives.split_hyphens(what)  # "the no-loaner-laptops rule"
            if _CONFIRM.search(sent):
                withdrawals.append(Withdrawal("satisfy", sent, content_terms(sent), min_overlap=0))
            elif what is None and (go := directives.go_signal(sent)) and not (
                    go == "weak" and self._states_standing(sent, now, clock, read)):
                withdrawals.append(Withdrawal("satisfy", sent, content_terms(sent), min_overlap=1 if go == "explicit" else 2))
            if what is None and directives.completion(sent):
                # "I've submitted the timesheets": a deadline for that one task is met
                withdrawals.append(Withdrawal("complete", sent, content_terms(sent), min_overlap=1))
            if what is None and directives.condition_met(sent):
                # "Payment cleared overnight": a record waiting until that happens is released
                withdrawals.append(Withdrawal("met", sent, content_terms(sent), min_overlap=1))
            elif what is None and directives_r16.condition_met_r16(sent):
                # round 16: "Last permission slip handed in today", "It's stopped raining" (one word of
                # the condition besides the event's verb, read before round 10's two-word form)
                withdrawals.append(Withdrawal("met", sent, content_terms(sent), min_overlap=1))
            elif what is None and directives.condition_met_r10(sent):
                # "We exchanged contracts this afternoon": two words of the condition wanted
                withdrawals.append(Withdrawal("met", sent, content_terms(sent), min_overlap=2))
            elif what is None and directives_r13.condition_met_r13(sent):
                # round 13: "Deposit of £150 received", "Landing page is live at ..."
                withdrawals.append(Withdrawal("met", sent, content_terms(sent), min_overlap=1))
            elif what is None and directives_r14.condition_met_r14(sent):
                # round 14: "the delivery turned up at 10", "Legal have completed their review"
                withdrawals.append(Withdrawal("met", sent, content_terms(sent), min_overlap=1))
            elif what is None and directives_r15.condition_met_r15(sent):
                # round 15: "Sunil has given the go-ahead on the quote", "we hit 50 RSVPs"
                withdrawals.append(Withdrawal("met", sent, content_terms(sent), min_overlap=1))
            if what is not None:
                terms = content_terms(what)
                if families.on(directives.F_REVOKE_R8) and terms and re.match(r"^\s*(?:the\s+)?no\s+\w", what, re.I):
                    # "Cancel the no-calls-after-6pm rule": a "no-" rule is a prohibition
                    withdrawals.append(Withdrawal("lift", sent, terms, min_overlap=1))
                    i += 1
                    continue
                if terms and len(terms) < 2 and not explicit_r5 and (r5 is not None or families.on(directives.F_REVOKE_R8)) \
                        and wm is None and not directives.withdraws_explicitly(probe):
                    # "Free delivery is back on the table", "PO boxes are allowed again" (round 8): one
                    # content word, so only a prohibition naming it is lifted
                    withdrawals.append(Withdrawal("lift", sent, terms, min_overlap=1))
                elif terms:
                    strong = wm is not None or directives.withdraws_explicitly(probe) or explicit_r5
                    withdrawals.append(Withdrawal("revoke", sent, terms, min_overlap=1 if strong else 2))
                i += 1
                continue
            # the sentence as _states_standing read it, if it did (the same answer, read once)
            proposal = read.pop(sent) if sent in read else self._classify(sent, now, clock)
            if proposal is not None:
                proposals.append(proposal)
                if proposal.kind == "permission":
                    # a permission lifts the prohibition it contradicts ("You may mention pricing
                    # in the demo from now on" after "Never mention pricing in the demo")
                    withdrawals.append(Withdrawal("lift", sent, content_terms(sent), min_overlap=2))
                elif directives.stop_doing(sent):
                    # "Stop printing copies of the contracts" ends "Always print a copy of each contract"
                    withdrawals.append(Withdrawal("unrequire", sent, content_terms(sent), min_overlap=2))
            i += 1
        found = Extraction([p for p in proposals if len(p.text) <= MAX_RECORD_CHARS], withdrawals)
        return self._with_model(text, sents, found, now, clock) if self.model else found

    def _with_model(self, text: str, sents: list[str], found: Extraction, now: float | None,
                    clock: "Clock | None") -> Extraction:
        """``found`` plus what the learned model reads in the sentences no rule covered."""
        model = instruction_model.current()
        if model is None:
            return found
        # a sentence a rule made a record of, or read as a withdrawal, is the rules' (a rule's
        # tentative go signal, completion or condition met is not: it ends nothing unless it matches)
        covered = [p.text for p in found.proposals] + [w.text for w in found.withdrawals
                                                       if w.action not in ("satisfy", "complete", "met")]
        more = instruction_model.suggest(model, text, sents, covered, MAX_RECORD_CHARS, _small_talk)
        if not more:
            return found
        proposals, withdrawals = list(found.proposals), list(found.withdrawals)
        for s in more:
            if s.kind == "plan_reset":
                proposals.append(ConstraintProposal("policy_state", s.text, "model", replaces_previous=True))
            elif s.kind in instruction_model.ACTS:
                withdrawals.append(Withdrawal(f"model_{s.kind}", s.text, content_terms(s.text), min_overlap=1))
            else:
                dm = _DEADLINE.search(s.text) if s.kind == "deadline" and now is not None else None
                proposals.append(ConstraintProposal(s.kind, s.text, "model",
                                                    due_at=resolve_due(dm.group(0), now, clock) if dm else None))
        return Extraction(proposals, withdrawals)

    def _states_standing(self, sent: str, now: float | None, clock: "Clock | None",
                         read: dict[str, ConstraintProposal | None] | None = None) -> bool:
        """The sentence states a standing instruction of its own ("Always log account changes."),
        so it is no go signal for an earlier one (family ``completion_forms``). ``read``: where
        the sentence's proposal is kept for the caller (who would classify it next)."""
        if not families.on(directives.F_COMPLETION):
            return False
        p = self._classify(sent, now, clock)
        if read is not None:
            read[sent] = p
        return p is not None and p.kind in ("constraint", "obligation", "prerequisite", "deadline") \
            and not directives.completion(sent)

    def _classify(self, sent: str, now: float | None, clock: "Clock | None") -> ConstraintProposal | None:
        """The proposal for one sentence: read with texting spellings written out, kept verbatim.
        A sentence found to hold none is remembered per family state (:data:`_NO_PROPOSAL`)."""
        key = (sent, families.off_key())
        if key in _NO_PROPOSAL:
            return None
        found = self._classify_sentence(sent, now, clock)
        if found is None:
            if len(_NO_PROPOSAL) >= MAX_NO_PROPOSAL:
                _NO_PROPOSAL.clear()
            _NO_PROPOSAL[key] = None
        return found

    def _classify_sentence(self, sent: str, now: float | None, clock: "Clock | None") -> ConstraintProposal | None:
        """:meth:`_classify` itself, every rule read."""
        if (answered := self._answer_r16(sent, now, clock)) is not None:  # round 16: "You asked if ... — no, never ..."
            return answered
        if directives.not_a_directive(sent):  # "My kids are not allowed sweets before dinner"
            return None
        if directives_r13.reported_r13(sent):  # round 13: "The parking app said payment was due by 6pm"
            return None
        if (quoted := directives_r15.adopted_quote_r15(sent)) is not None:  # round 15: "...: 'X must ...' Follow that."
            found = self._classify(quoted, now, clock)
            return ConstraintProposal("constraint", sent, "adopted_quote") if found is None else replace(found, text=sent)
        if directives_r14.reported_r14(sent) or directives_r15.reported_aside_r15(sent) \
                or directives_r16.reported_r16(sent):  # "From the API docs: '...'", "My colleague has a rule: ..."
            return None
        norm = directives.normalise(sent)
        found = self._classify_read(norm, now, clock)
        if found is None and (rest := directives.strip_lead_r8(norm)) is not None:
            # "Just so we're clear, no more free upgrades ...": read without the lead, kept whole
            found = self._classify_read(rest, now, clock)
            if found is not None:
                found = replace(found, text=sent)
        if found is None and families.on(directives.F_LEAD_STRIP) and (c := directives.colon_clause(norm)) is not None:
            found = self._classify_read(c, now, clock)  # "This is Marta, the support manager: I'm approving ..."
            if found is not None:
                found = replace(found, text=sent)
        if found is None:
            # round 9: "Oh, and never ...", "For the trip, just so we're clear, keep ...", "..., so only offer ..."
            for c in directives.clauses_r9(norm):
                if directives.not_a_directive(c):
                    continue
                found = self._classify_read(c, now, clock)
                if found is not None:
                    found = replace(found, text=sent)
                    break
        if found is None and (rest := directives.strip_lead_r10(norm)) is not None and not directives.not_a_directive(rest):
            # round 10: "Kindly do not ...", "yeah and uh don't ...", "From 1 March, every order ..."
            found = self._classify_read(rest, now, clock)
            if found is not None:
                found = replace(found, text=sent)
        if found is None and (fixed := directives_r13.fix_typos(norm)) != norm:
            found = self._classify_read(fixed, now, clock)  # round 13: "plz allways ask ...", "aproved"
            if found is None and (rest := directives.strip_lead_r8(fixed)) is not None:
                found = self._classify_read(rest, now, clock)
            if found is not None:
                found = replace(found, text=sent)
        if found is None:
            found = self._classify_r13(sent, norm, now, clock)
        if found is None:
            found = self._classify_r14(sent, norm, now, clock)
        if found is None:
            found = self._classify_r15(sent, norm, now, clock)
        if found is None:
            found = self._classify_r16(sent, norm, now, clock)
        if found is not None and found.kind == "approval" and families.on(directives.F_KINDS_R10) \
                and _WAIT_FOR.search(sent):
            # "Before booking the holiday, wait for my leave to be approved.": a record that waits
            found = replace(found, kind="prerequisite")
        if found is not None and norm != sent:
            found = replace(found, text=sent)
        return found

    def _classify_r13(self, sent: str, norm: str, now: float | None, clock: "Clock | None") -> ConstraintProposal | None:
        """Round 13 (:mod:`.directives_r13`, from ``fresh9``): the sentence's own classes ("Invoice in
        GBP.", "Stripe shows ..."), then the instruction inside a wrapper ("- every quote needs ...",
        "Could you keep all replies in plain text?"), read by every rule; the record keeps ``sent``."""
        fixed = directives_r13.fix_typos(norm)
        r13 = directives_r13.classify_r13(fixed) or directives_r13.kinds_r13(fixed)
        if r13 is None and (lead := directives.strip_lead_r8(fixed)) is not None and not directives.not_a_directive(lead):
            r13 = directives_r13.classify_r13(lead) or directives_r13.kinds_r13(lead)  # "Just so we're clear: the bot isn't ..."
        if r13 is not None:
            return ConstraintProposal(r13[0], sent, r13[1])
        rest = directives_r13.strip_lead_r13(fixed)
        if rest is None or directives.not_a_directive(rest):
            return None
        found = self._classify_read(rest, now, clock)
        if found is None and (lead := directives.strip_lead_r8(rest)) is not None:
            found = self._classify_read(lead, now, clock)
        if found is None and (r13 := directives_r13.classify_r13(rest) or directives_r13.kinds_r13(rest)) is not None:
            found = ConstraintProposal(r13[0], sent, r13[1])
        return None if found is None else replace(found, text=sent)

    def _classify_r14(self, sent: str, norm: str, now: float | None, clock: "Clock | None") -> ConstraintProposal | None:
        """Round 14 (:mod:`.directives_r14`, from ``fresh10``): the sentence's own classes ("The Agent
        shall ...", "lgtm, ship it"), then its readings (without a tail or a transcript's fillers, a
        learner's slip read, a clause buried in a long sentence), each read by every rule; the
        record keeps ``sent``."""
        fixed = directives_r13.fix_typos(norm)
        r14 = directives_r14.classify_r14(fixed)
        if r14 is not None:
            return ConstraintProposal(r14[0], sent, r14[1])
        for rest in directives_r14.rewrites_r14(fixed):
            if (r14 := directives_r14.classify_r14(rest)) is not None:
                return ConstraintProposal(r14[0], sent, r14[1])
            if directives.not_a_directive(rest):
                continue
            found = self._classify_read(rest, now, clock) or self._classify_r13(rest, rest, now, clock)
            if found is None and (lead := directives.strip_lead_r8(rest)) is not None and not directives.not_a_directive(lead):
                found = self._classify_read(lead, now, clock)
            if found is not None:
                return replace(found, text=sent)
        return None

    def _classify_r15(self, sent: str, norm: str, now: float | None, clock: "Clock | None") -> ConstraintProposal | None:
        """Round 15 (:mod:`.directives_r15`, from ``fresh11``): the sentence's own classes, then its
        readings (without a label or a register's lead, a request as its imperative, a buried
        clause), each read by every earlier round's rules; the record keeps ``sent``."""
        return self._classify_later(sent, norm, now, clock, directives_r15.rewrites_r15, directives_r15.classify_r15,
                                    (self._classify_r13, self._classify_r14))

    def _classify_later(self, sent: str, norm: str, now: float | None, clock: "Clock | None", rewrites: Any,
                        classify: Any, earlier: tuple[Any, ...]) -> ConstraintProposal | None:
        """A later round's reading of a sentence: its own classes (``classify``) on the sentence and
        on each of its readings (``rewrites``), each reading read also by the base rules and the
        ``earlier`` rounds' classifiers; the record keeps ``sent``."""
        fixed = directives_r13.fix_typos(norm)
        for rest in (fixed, *rewrites(fixed)):
            if (own := classify(rest)) is not None:
                return ConstraintProposal(own[0], sent, own[1])
            if rest is fixed or directives.not_a_directive(rest):
                continue
            found = self._classify_read(rest, now, clock)
            for reader in earlier:
                if found is not None:
                    break
                found = reader(rest, rest, now, clock)
            if found is not None:
                return replace(found, text=sent)
        return None

    def _answer_r16(self, sent: str, now: float | None, clock: "Clock | None") -> ConstraintProposal | None:
        """An answer to the assistant's question read as the answer (family ``answer_lead_r16``),
        before the question's "You asked ..." reads as a report; the record keeps ``sent``."""
        if (own := directives_r16.answer_class_r16(sent)) is not None:
            return ConstraintProposal(own[0], sent, own[1])
        for rest in directives_r16.answer_r16(sent):
            if (found := self._classify(rest, now, clock)) is not None:
                return replace(found, text=sent)
        return None

    def _classify_r16(self, sent: str, norm: str, now: float | None, clock: "Clock | None") -> ConstraintProposal | None:
        """Round 16 (:mod:`.directives_r16`, from ``fresh12``): the sentence's own classes, then its
        readings (a dialect's words plain, a clause without its number, a rule under a lead of
        authority as its imperative, an answer without its lead), each read by every earlier
        round's rules; the record keeps ``sent``."""
        return self._classify_later(sent, norm, now, clock, directives_r16.rewrites_r16, directives_r16.classify_r16,
                                    (self._classify_r13, self._classify_r14, self._classify_r15))

    def _classify_read(self, sent: str, now: float | None, clock: "Clock | None") -> ConstraintProposal | None:
        if directives.advice(sent):  # "Make sure you watch ... first so you get a handle on it!"
            return None
        scope = _SCOPE_PREFIX.match(sent) or (families.on(directives.F_SCOPE) and _SCOPE_MORE_PREFIX.match(sent))
        core = sent[scope.end():] if scope else sent
        due = lambda m: resolve_due(m.group(0), now, clock) if now is not None else None  # noqa: E731
        for rule, kind, pattern in (_RULES if _RULES_GATE.possible(core) else ()):  # one test when none can match
            if pattern.search(core):
                if rule == "never" and directives.negation_small_talk(core):
                    continue
                dm = _DEADLINE.search(core)
                if dm and rule != "until_confirm":
                    return ConstraintProposal("deadline", sent, "deadline", due_at=due(dm))
                return ConstraintProposal(kind, sent, rule)
        if directives.prohibition_more(core):
            dm = _DEADLINE.search(core)
            if dm:
                return ConstraintProposal("deadline", sent, "deadline", due_at=due(dm))
            return ConstraintProposal("constraint", sent, "never")
        scoped = _SCOPE.search(sent) or (families.on(directives.F_SCOPE) and _SCOPE_MORE.search(sent))
        if scope or (scoped and not _SELF_STATEMENT.search(sent[: scoped.start()])):
            rest = sent[scoped.end():] if scoped else core
            if families.on(directives.F_SCOPE) and _scope_about_the_speaker(rest):
                return None  # "Going forward, I hope we see each other more."
            return ConstraintProposal("constraint", sent, "scope")
        dm = _DEADLINE.search(sent)
        if dm and _DEADLINE_CONTEXT.search(sent) and not _SELF_STATEMENT.match(sent):
            return ConstraintProposal("deadline", sent, "deadline", due_at=due(dm))
        found = directives.classify(sent)
        if found is not None:
            kind, rule = found
            return ConstraintProposal(kind, sent, rule, due_at=due(dm) if (kind == "deadline" and dm) else None)
        return None


def _withdrawn_r16(probe: str) -> tuple[str, str] | None:
    """``(what, action)`` of a round-16 withdrawal (:func:`.directives_r16.withdrawn_r16`), or of an
    earlier round's form read in a round-16 reading (an answer without its lead, a dialect's words)."""
    if (r16 := directives_r16.withdrawn_r16(probe)) is not None:
        return r16
    for rest in directives_r16.readings_r16(probe):
        for form in (directives_r15.withdrawn_r15, directives_r14.withdrawn_r14, directives_r13.withdrawn_r13,
                     directives.withdrawn_r10):
            if (got := form(rest)) is not None:
                return got
    return None


def _structured_r16(text: str) -> Extraction | None:
    """A table or a YAML-like block as one record, a withdrawal or a reset
    (:func:`.directives_r16.structured_r16`), or None."""
    st = directives_r16.structured_r16(text)
    if st is None:
        return None
    if st[0] == "reset":
        return Extraction([ConstraintProposal("policy_state", text.strip(), "structured_reset", replaces_previous=True)], [])
    if st[0] == "withdraw":
        return Extraction([], [Withdrawal(st[1], text.strip(), content_terms(st[2]), min_overlap=1)])
    return Extraction([ConstraintProposal(st[1], text.strip(), st[2])], [])


def _is_override(text: str) -> bool:
    """``text`` throws away the plan in force: a decision override ("scratch that, let's instead
    ...", "go with option B") or a reset of the plan, not small talk ("Scratch that, I'm rambling")."""
    override = _OVERRIDE.search(text)
    reset8 = None
    return bool((override or _OVERRIDE_OPTION.search(text) or directives.is_reset(text)
                 or directives.reset_r5(text) or (reset8 := directives.reset_r8(text))
                 or (reset8 := directives.reset_r9(text)) or (reset8 := directives.reset_r10(text))
                 or (reset8 := directives_r13.reset_r13(text)) or (reset8 := directives_r14.reset_r14(text))
                 or (reset8 := directives_r15.reset_r15(text)) )
                and not directives.reset_is_small_talk(text, override or reset8)) or (
        # round 16: "Chef's binned the whole wedding menu. It's now ...": read to its end already
        directives_r16.reset_r16(text) is not None and not directives_r16.reset_small_talk_r16(text)) or (
        # round 13: a misspelled reset ("scratch evrything we said about the rota")
        (fixed := directives_r13.fix_typos(text)) != text and _is_override(fixed))


def _override_span(text: str, sents: list[str]) -> tuple[str, tuple[int, ...]] | None:
    """The first plan change of a message longer than :data:`MAX_RECORD_CHARS`, read sentence by
    sentence: its verbatim text (at most that long) and the indices in ``sents`` it covers.

    A sentence that is an override on its own is the record, with the next sentence too when it
    states little itself ("Scratch that, change of plans. Plan: migrate on Thursday instead.");
    an override read only with the next sentence ("Rip up the itinerary. We fly to Rome.") is
    the pair. ``None`` when no sentence changes the plan."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for s in sents:
        start = text.index(s, pos)
        spans.append((start, start + len(s)))
        pos = start + len(s)
    for i, s in enumerate(sents):
        pair = text[spans[i][0]:spans[i + 1][1]] if i + 1 < len(sents) else None
        if pair is not None and len(pair) > MAX_RECORD_CHARS:
            pair = None  # a long sentence between them, or both too long together
        if _is_override(s):
            if pair is not None and (len(content_terms(s)) < 4 or s.rstrip().endswith(":")):
                return pair, (i, i + 1)
            return s, (i,)
        if pair is not None and _is_override(pair) and not _is_override(sents[i + 1]):
            return pair, (i, i + 1)
    return None


_WAIT_FOR = re.compile(r"\bwait (?:for|until)\b", re.I)


def _small_talk(sent: str) -> bool:
    """The rules' small-talk vetoes, which the instruction model respects too ("Plan: pizza tonight lol").
    ``not_a_directive`` includes ``casual_r10`` and is remembered per sentence (the rules asked it first)."""
    return directives.not_a_directive(sent)
_LIST_ITEM = re.compile(r"(?:[-*•–]|\d{1,2}[.)])\s+\w")


def _list_item(text: str, span: tuple[int, int]) -> bool:
    """A list item on its own line ("- weigh it", "* note the courier", "2. photograph it")."""
    return bool(_LIST_ITEM.match(text, span[0])) and text[:span[0]].rstrip(" \t").endswith("\n")


#: a sign-off after a request ("Can you send it by EOD? Thx") belongs to it
_SIGN_OFF = re.compile(r"^(?:thx|thanks|thank you|thanks a lot|cheers|ta|ty|tia|much appreciated|appreciated)[.!]*$", re.I)


def _merge_r5(text: str, sents: list[str]) -> list[str]:
    """Sentences read together (round 5): a bare approval with the action that follows it
    ("Approved. Go ahead and refund the annual plan.", family ``approval_forms_r5``), and a
    sign-off with the request in question form before it ("... by EOD? Thx", family
    ``texting_forms``; after a statement it stays apart: "Never delete the logs. Thanks."). Each
    result is a verbatim span of ``text``."""
    out: list[str] = []
    pos = 0
    spans: list[tuple[int, int]] = []
    for s in sents:
        start = text.index(s, pos)
        spans.append((start, start + len(s)))
        pos = start + len(s)
    i = 0
    merged: list[tuple[int, int]] = []
    while i < len(spans):
        a, b = spans[i]
        s = text[a:b]
        if i + 1 < len(spans):
            nxt = text[spans[i + 1][0]:spans[i + 1][1]]
            if (families.on(directives.F_APPROVAL_R5) and directives.APPROVAL_INTERJECTION.match(s)
                    or families.on(directives.F_APPROVAL_R8) and directives.approval_bare_r8(s)
                    or directives.speaker_intro(s)) and not nxt.rstrip().endswith("?"):
                merged.append((a, spans[i + 1][1]))
                i += 2
                continue
        if families.on(directives.F_LIST_UNDER_LEAD) and s.rstrip().endswith(":") and i + 1 < len(spans) \
                and _list_item(text, spans[i + 1]):
            # "Things to do on every return from now on:" and the list under it are one instruction
            j = i + 1
            while j < len(spans) and _list_item(text, spans[j]):
                j += 1
            merged.append((a, spans[j - 1][1]))
            i = j
            continue
        if merged and directives.approval_after_r9(s) and not text[merged[-1][0]:merged[-1][1]].rstrip().endswith("?"):
            # "Yes, buy the concert tickets, both of them. Approved." (family ``approval_forms_r9``)
            merged[-1] = (merged[-1][0], b)
            i += 1
            continue
        if merged and families.on(directives.F_TEXTING) and _SIGN_OFF.match(s) \
                and text[merged[-1][0]:merged[-1][1]].rstrip().endswith("?"):
            merged[-1] = (merged[-1][0], b)
            i += 1
            continue
        merged.append((a, b))
        i += 1
    out = [text[a:b] for a, b in merged]
    return out


_SELF_STATEMENT = re.compile(r"^\s*(?:but |and |so |yeah,? )?(?:i|i'll|i'm|i've|i'd|we|we'll|we're|we've)\b", re.I)
#: more scope markers (issue 20, round 4): "From today, ...", "Starting now, ...", "As of this week, ..."
_SCOPE_MORE = re.compile(
    r"\b(?:from (?:today|tomorrow|this (?:point|moment)(?: on| forward)?|here)|starting (?:now|today|tomorrow|immediately|"
    r"this (?:week|month)|next (?:week|month)|(?:on )?(?:monday|tuesday|wednesday|thursday|friday))|"
    r"as of (?:now|today|tomorrow|this (?:week|month|morning)|next (?:week|month)|monday|tuesday|wednesday|thursday|friday)|"
    r"effective (?:immediately|today|now|tomorrow)|for the (?:remainder|rest) of (?:this|the|our) \w+|"
    r"for the foreseeable future|until (?:i say|i tell you|told|you hear) otherwise|henceforth|hereafter|"
    r"for all future \w+)\b", re.I)
_SCOPE_MORE_PREFIX = re.compile(r"^\s*(?:" + _SCOPE_MORE.pattern + r")\s*[,.:;—-]?\s*", re.I)


def _scope_about_the_speaker(rest: str) -> bool:
    """What follows a scope marker speaks of the speaker, not the task ("..., I'm going to sleep
    earlier", "..., I hope we see each other more")."""
    r = re.sub(r"^[\s,.:;—-]+", "", rest)
    return bool(_SELF_STATEMENT.match(r)) and not re.search(r"\byou(?:r|rs)?\b", r, re.I) \
        and not directives.concrete(r)


def _split_terms(text: str) -> tuple[str, ...]:
    """Content words of ``text`` with hyphenated words split ("the 200-word limit" -> 200, word, limit)."""
    return content_terms(re.sub(r"(?<=\w)-(?=\w)", " ", text))


class LLMConstraintExtractor(ConstraintExtractor):
    """Asks an OpenAI-compatible model for standing instructions, keeping only verbatim sentences.

    The model must answer JSON ``{"constraints": [{"kind": ..., "text": ...}], "revokes": [...]}``.
    A proposal whose text is not a verbatim substring of the message, or whose kind is unknown, is
    dropped. The rule extractor's proposals are always kept as well (the LLM can add, never remove).

    :param client: a :class:`~memfold.memory.llm.ChatClient`.
    :raises ExtractorError: from :meth:`extract` when the endpoint fails or answers something that is
        not that JSON (the tracker then logs the failure and uses the rules alone).
    """

    PROMPT = (
        "You find standing instructions in a user's message to an assistant: obligations, constraints, "
        "permissions, deadlines, prerequisites for irreversible actions, approvals, evidence and policy state. "
        "Answer JSON only: {\"constraints\": [{\"kind\": one of " + ", ".join(KINDS) + ", \"text\": the exact "
        "sentence copied verbatim from the message}], \"revokes\": [words naming an earlier instruction the user "
        "now withdraws]}. Small talk has no constraints: answer {\"constraints\": [], \"revokes\": []}."
    )

    def __init__(self, client: "ChatClient") -> None:
        self.client = client
        self.rules = RuleConstraintExtractor()
        self.id = f"llm:{client.settings.model}"

    def extract(self, text: str, *, now: float | None = None, clock: "Clock | None" = None) -> Extraction:
        from ..memory.llm import LLMError

        base = self.rules.extract(text, now=now, clock=clock)
        try:
            answer = self.client.complete([{"role": "system", "content": self.PROMPT},
                                           {"role": "user", "content": text}], json_mode=True)
        except LLMError as exc:
            raise ExtractorError(f"the LLM constraint extractor failed: {exc}") from None
        try:
            data = json.loads(answer)
            items = data.get("constraints", [])
            revokes = data.get("revokes", [])
            if not isinstance(items, list) or not isinstance(revokes, list):
                raise TypeError
        except (ValueError, TypeError, AttributeError):
            raise ExtractorError(f"the LLM constraint extractor answered something that is not the JSON asked for: "
                                 f"{answer[:120]!r}") from None
        proposals = list(base.proposals)
        have = {p.text for p in proposals}
        for item in items:
            if not isinstance(item, dict):
                continue
            kind, sent = item.get("kind"), item.get("text")
            if kind in KINDS and isinstance(sent, str) and sent.strip() and sent.strip() in text and sent.strip() not in have:
                if any(sent.strip() in h or h in sent.strip() for h in have):
                    continue
                proposals.append(ConstraintProposal(kind, sent.strip(), "llm"))
                have.add(sent.strip())
        withdrawals = list(base.withdrawals)
        for r in revokes:
            if isinstance(r, str) and content_terms(r):
                withdrawals.append(Withdrawal("revoke", r, content_terms(r)))
        return Extraction(proposals, withdrawals)


# -- applying extractions to the channel --------------------------------------------------------
_DECISION = re.compile(r"\b(?:let's|let us|we should|we'll|we will|i think we should|approach:|plan:|go with|"
                       r"we're going with|the plan is)(?:\b|(?<=:))", re.I)


#: a user turn longer than this (characters) is read for instructions at its start and end only
#: (issue 20, point 6: a 5 MB pasted log took minutes to read sentence by sentence, and a
#: plan-reset phrase inside it would have made the whole log one protected record)
MAX_SCANNED_CHARS = 20_000


def scanned_text(text: str) -> str:
    """What of a user turn the constraint extractor reads: all of it up to
    :data:`MAX_SCANNED_CHARS` characters, else its first and last half of that, cut at line or
    sentence ends so no sentence is cut in half. Instructions in a huge paste sit around it."""
    if len(text) <= MAX_SCANNED_CHARS:
        return text
    half = MAX_SCANNED_CHARS // 2
    head, tail = text[:half], text[-half:]
    cut = max(head.rfind("\n"), head.rfind(". "))
    head = head[:cut + 1] if cut > 0 else head
    cut = max(tail.find("\n"), tail.find(". ") + 1)
    tail = tail[cut + 1:] if cut > 0 else tail
    return f"{head}\n{tail}"


class ConstraintTracker:
    """Runs the extractor on user turns and writes the results to the protected channel.

    :param channel: the :class:`ProtectedChannel`.
    :param extractor: any :class:`ConstraintExtractor` (default: the rules).
    :param lookback_turns: how many earlier user turns a decision override looks at for the
        decision it replaces.
    """

    def __init__(self, channel: ProtectedChannel, extractor: ConstraintExtractor | None = None,
                 *, lookback_turns: int = 6) -> None:
        self.channel = channel
        self.extractor = extractor or RuleConstraintExtractor()
        self.rules = RuleConstraintExtractor()
        self.lookback_turns = lookback_turns

    def observe(self, turn: "Turn", *, namespace: str | None = None,
                lineage: Sequence[tuple[str, int | None]] | None = None) -> list[ProtectedRecord]:
        """Read one archived turn; for a user turn, add proposed records and apply withdrawals.

        ``namespace`` and ``lineage`` are the turn's conversation's, when the caller holds them
        (a :class:`~memfold.window.parts.ConversationRef`); they are read when needed otherwise.

        Turns quoted from another conversation (metadata ``quoted_from``) and erased turns are
        skipped: they are not the user's instructions here. A turn labelled ``secret`` is read
        with each secret span masked (:func:`~memfold.window.secrets.readable_text`: "Never read my
        PIN [secret] back to me"), so its instruction is kept while the secret never reaches a
        protected record, which is shown verbatim in every context (issue 9); a turn secret as a
        whole (no spans) is skipped. Such a record does not carry the ``secret`` label: it holds
        no secret, and every reader must see the instruction.

        :returns: the protected records created by this turn (withdrawn ones are changed in place).
        """
        if turn.role != "user" or turn.erased or turn.metadata.get("quoted_from") is not None:
            return []
        text = _readable(turn)
        if text is None:
            return []
        text = scanned_text(text)
        labels = [label for label in turn.labels if label != SECRET_LABEL]
        storage = self.channel.storage
        try:
            extraction = self.extractor.extract(text, now=turn.created_at, clock=self.channel.clock)
        except ExtractorError as exc:
            with storage.transaction(write_scope(conversations=[turn.conversation_id])):
                log_event(storage, at=self.channel.clock.now(), kind="extractor_failed", subject=f"turn:{turn.id}",
                          namespace=namespace, cause=str(exc)[:300], details={"extractor": self.extractor.id})
            extraction = self.rules.extract(text, now=turn.created_at, clock=self.channel.clock)
        if not extraction.proposals and not extraction.withdrawals:
            return []
        created: list[ProtectedRecord] = []
        scope = _Scope(namespace if lineage is not None else None, lineage)
        ns = scope.namespace or self.channel._archive().conversation_row(turn.conversation_id)["namespace"]
        # the namespace's protected records are read (to withdraw, to replace), then written
        with storage.transaction(write_scope(protected=[ns])):
            model_acts = any(w.action.startswith("model_") for w in extraction.withdrawals)
            start = len(self._scope_records(turn, scope)) if model_acts else 0
            for w in extraction.withdrawals:
                if w.action.startswith("model_") and len(self._scope_records(turn, scope)) < start:
                    break  # a rule's withdrawal ended a record already: the model's acts are not needed
                self._withdraw(turn, w, scope)
            standing = None
            done: set[int] = set()  # the records this turn made or refreshed
            for p in extraction.proposals:
                if len(p.text) > MAX_RECORD_CHARS:
                    continue  # any extractor's proposal (the LLM's too) is bounded like the rules'
                replaced: list[ProtectedRecord] = []
                if p.supersedes:
                    replaced = self._replaced_by(turn, p, scope)
                    if not replaced and p.kind_of_replaced:
                        continue  # "Replace X with Y" where no X stands: nothing to replace
                    if p.kind_of_replaced:
                        p = ConstraintProposal(replaced[0].kind, p.text, p.rule, due_at=p.due_at, supersedes=p.supersedes)
                if not p.replaces_previous:  # a restatement refreshes the record in force (issue 18, point 5)
                    if standing is None:
                        standing = self._scope_records(turn, scope)
                    # this turn's own records too: "Always be brief. Always be brief." is one record
                    same = self._restates(p, labels, standing + created)
                    if same is not None:
                        if same.id not in done:  # refreshed once per turn; a record made now needs none
                            self._refresh(same, turn, namespace)
                            done.add(same.id)
                        continue
                rec = self.channel.add(
                    p.text, kind=p.kind, conversation_id=turn.conversation_id, due_at=p.due_at,
                    provenance=[f"turn:{turn.id}"], labels=labels, source=self.extractor.id,
                    metadata={"rule": p.rule}, cause="extracted",
                )
                if p.replaces_previous:
                    rec = self._replace_previous(turn, rec, scope)
                for old in replaced:
                    self.channel._transition(old.id, "superseded", f"turn:{turn.id}", superseded_by=rec.id)
                if replaced:
                    rec = self.channel.link_replaced(rec.id, [o.id for o in replaced])
                created.append(rec)
                done.add(rec.id)
        return created

    def _replaced_by(self, turn: "Turn", p: ConstraintProposal, scope: "_Scope") -> list[ProtectedRecord]:
        """The earlier records a rule replacement supersedes: of the turn's conversation, sharing a
        word with what it names as replaced and the most words (at least two) with the sentence."""
        old = {_stem(t) for t in p.supersedes}
        candidates = [r for r in self._scope_records(turn, scope) if r.conversation_id == turn.conversation_id
                      and r.kind != "policy_state" and old & {_stem(t) for t in _split_terms(r.text)}]
        want = {_stem(t) for t in _split_terms(p.text)}
        scored = [(len(want & {_stem(t) for t in _split_terms(r.text)}), r) for r in candidates]
        top = max((n for n, _ in scored), default=0)
        return [r for n, r in scored if n == top and n >= 2]

    @staticmethod
    def _restates(p: Any, labels: list[str], records: list[ProtectedRecord]) -> ProtectedRecord | None:
        """The active record of the scope that ``p`` restates: same kind, same deadline, same
        labels and the same words once case, spacing, punctuation and politeness are set aside
        ("Never call me." and "please never call me" are one instruction); ``None`` otherwise."""
        key = restatement_key(p.text)
        for rec in records:
            if (rec.kind == p.kind and rec.due_at == p.due_at and sorted(rec.labels) == sorted(labels)
                    and restatement_key(rec.text) == key):
                return rec
        return None

    def _refresh(self, rec: ProtectedRecord, turn: "Turn", namespace: str | None) -> None:
        """Note that ``turn`` restated ``rec`` (metadata ``restated_by``, the newest
        :data:`RESTATED_KEPT` turn ids, and ``restated_at``) instead of adding a record; logged as
        a ``protected_restated`` event."""
        meta = dict(rec.metadata)
        meta["restated_by"] = ([*meta.get("restated_by", []), f"turn:{turn.id}"])[-RESTATED_KEPT:]
        meta["restated_at"] = turn.created_at
        storage = self.channel.storage
        storage.protected.set_metadata(rec.id, meta)
        log_event(storage, at=self.channel.clock.now(), kind="protected_restated", subject=f"P{rec.id}",
                  namespace=namespace or rec.namespace, cause=f"turn:{turn.id}", details={"turn_id": turn.id})
        rec.metadata.clear()
        rec.metadata.update(meta)

    def _scope_records(self, turn: "Turn", scope: "_Scope") -> list[ProtectedRecord]:
        return [r for r in self.channel.active_for(turn.conversation_id, namespace=scope.namespace,
                                                   lineage=scope.lineage)
                if f"turn:{turn.id}" not in r.provenance]

    def _withdraw(self, turn: "Turn", w: Withdrawal, scope: "_Scope") -> None:
        """Apply one withdrawal to the best-matching records of the turn's scope.

        Only the records sharing the most content words (stems) with the withdrawal are touched,
        so "give out the warehouse address" revokes "Never give out the warehouse address", not
        "Never share my home address" (one shared word against three)."""
        records = self._scope_records(turn, scope)
        if w.action in ("model_revoke", "model_satisfy"):
            # the learned model's act: only the one record of this conversation it names
            mine = [r for r in records if r.conversation_id == turn.conversation_id and (
                w.action == "model_revoke" or _waiting(r) or r.kind in ("prerequisite", "deadline"))]
            end = self.channel.satisfy if w.action == "model_satisfy" else self.channel.revoke
            terms = content_terms
            if w.action == "model_satisfy":
                # the event's own verb ("arrived", "cleared") names no one condition (as for
                # the rules' condition_met): the words shared must name what was awaited
                def terms(text: str) -> list[str]:
                    said = {e.lower() for e in directives.event_words(text)}
                    return [t for t in content_terms(text) if t.lower() not in said]
            for rec in instruction_model.pick_target(w.action[6:], w.text, mine, _stem, terms):
                end(rec.id, cause=f"turn:{turn.id}")
            return
        if w.action == "satisfy":
            waiting = [r for r in records if _waiting(r) and r.conversation_id == turn.conversation_id]
            best = _best_matches(waiting, w.terms, at_least=max(1, w.min_overlap))
            if not best and w.min_overlap == 0:
                best = [r for r in waiting if r.metadata.get("rule") == "until_confirm"]
            for rec in best:
                self.channel.satisfy(rec.id, cause=f"turn:{turn.id}")
            return
        if w.action == "complete":
            # a one-off deadline whose task the turn reports done (family ``completion_forms``)
            due = [r for r in records if r.kind == "deadline" and r.conversation_id == turn.conversation_id]
            for rec in _best_matches(due, w.terms, at_least=max(1, w.min_overlap)):
                self.channel.satisfy(rec.id, cause=f"turn:{turn.id}")
            return
        if w.action == "met":
            # family ``condition_met``: the event a waiting record names in its condition happened
            waiting = [r for r in records if r.conversation_id == turn.conversation_id
                       and (_waiting(r) or directives.waits_for_event(r.text) or directives_r13.condition_r13(r.text))
                       and not directives.standing_r9(r.text)]
            want = {_stem(t) for t in w.terms}
            for rec in waiting:
                cond = directives_r13.condition_r13(rec.text) or directives.condition_of(rec.text)
                if w.min_overlap >= 2:  # family ``condition_met_r10``: "until we've exchanged contracts"
                    cond = directives.condition_r10(rec.text) or cond
                shared = want & {_stem(t) for t in content_terms(cond)}
                if w.min_overlap < 2:
                    # a word of what the condition names, not only the event's verb (round 11:
                    # "The new sofa arrived" shares only "arrive" with "until my passport arrives")
                    shared -= {_stem(t) for t in content_terms(" ".join(directives.event_words(w.text)))}
                if len(shared) >= max(1, w.min_overlap):
                    self.channel.satisfy(rec.id, cause=f"turn:{turn.id}")
            return
        if w.action == "unrequire":
            # "Stop printing copies of the contracts" ends the duty to print them (and, round 9,
            # "Stop offering the discount" the permission to offer it)
            kinds = ("obligation", "constraint", "permission") if families.on(directives.F_REVOKE_R9) else (
                "obligation", "constraint")
            duties = [r for r in records if r.kind in kinds and not _NEGATIVE.search(r.text)]
            for rec in _best_matches(duties, w.terms, at_least=max(2, w.min_overlap)):
                self.channel.revoke(rec.id, cause=f"turn:{turn.id}")
            return
        if w.action == "lift":
            prohibitions = [r for r in records if r.kind == "constraint" and _NEGATIVE.search(r.text)]
            for rec in _best_matches(prohibitions, w.terms, at_least=max(1, w.min_overlap)):
                self.channel.revoke(rec.id, cause=f"turn:{turn.id}")
            return
        for rec in _best_matches(records, w.terms, at_least=max(1, w.min_overlap)):
            if families.on(_F_WAITING) and _waiting(rec) and rec.conversation_id == turn.conversation_id \
                    and not directives.withdraws_explicitly(w.text):
                # "OK, you can email the landlord now" after "Wait for my OK before you email the
                # landlord": the condition is met, not the instruction withdrawn
                self.channel.satisfy(rec.id, cause=f"turn:{turn.id}")
                continue
            self.channel.revoke(rec.id, cause=f"turn:{turn.id}")

    def _replace_previous(self, turn: "Turn", rec: ProtectedRecord, scope: "_Scope") -> ProtectedRecord:
        """A decision override replaces the newest active decision of the conversation, or else the
        newest earlier user turn that states a decision (recorded as superseded, so its text stays
        named as "no longer in force")."""
        previous = [r for r in self._scope_records(turn, scope)
                    if r.kind == "policy_state" and r.conversation_id == turn.conversation_id and r.id != rec.id]
        if previous:
            old = previous[-1]
            with self.channel.storage.transaction():
                self.channel._transition(old.id, "superseded", f"turn:{turn.id}", superseded_by=rec.id)
                chain = [old.id] + list(old.metadata.get("replaces", []))
                return self.channel.link_replaced(rec.id, chain)
        for t in reversed(self._earlier_user_turns(turn, scope)):
            text = _readable(t)  # an earlier secret turn is named only masked, never verbatim
            if text is not None and _DECISION.search(text):
                old = self.channel.add(text.strip(), kind="policy_state", conversation_id=turn.conversation_id,
                                       provenance=[f"turn:{t.id}"], labels=[x for x in t.labels if x != SECRET_LABEL],
                                       source=self.extractor.id,
                                       metadata={"rule": "decision"}, cause="replaced_decision", state="superseded")
                return self.channel.link_replaced(rec.id, [old.id])
        return rec

    def _earlier_user_turns(self, turn: "Turn", scope: "_Scope") -> list["Turn"]:
        """The newest :attr:`lookback_turns` user turns before ``turn`` (not erased, not quoted),
        oldest first: the turns a decision override looks back at. Read from the end of the
        lineage in widening windows (issue 18, point 4: the whole history was read, 100K turns
        in a 100K-turn conversation): every turn after the window's start is read, so once the
        window holds enough of them they are the newest ones of the whole history."""
        archive = self.channel._archive()
        want = self.lookback_turns
        span = 8 * max(1, want)
        while True:
            after = max(0, turn.seq - 1 - span)
            earlier = [t for t in archive.history(turn.conversation_id, after_seq=after, lineage=scope.lineage)
                       if t.seq < turn.seq and t.role == "user"
                       and not t.erased and t.metadata.get("quoted_from") is None]
            if (want > 0 and len(earlier) >= want) or after == 0:
                return earlier[-want:]  # as the whole history's list was cut (0: every one)
            span *= 4


#: how many restating turns a protected record names in its metadata (``restated_by``)
RESTATED_KEPT = 20
_POLITE = re.compile(r"\b(?:please|kindly|again|just|always remember(?: that| to)?|remember(?: that| to)?|as i said)\b", re.I)


def restatement_key(text: str) -> str:
    """What two statements of one standing instruction share: the words, lower-cased, without
    punctuation and without politeness or reminder words (please, kindly, again, just, remember)."""
    words = re.findall(r"[\w$%'-]+", _POLITE.sub(" ", text.lower()))
    return " ".join(w.strip("'-") for w in words if w.strip("'-"))


@dataclass(frozen=True)
class _Scope:
    """The observed turn's conversation as the caller knows it (``None``: look it up)."""

    namespace: str | None
    lineage: Sequence[tuple[str, int | None]] | None


_F_WAITING = directives.F_WAITING
#: records that wait for something: released (satisfied) by a later go signal
_WAITING_RULES = ("until_confirm", "until")
_NEGATIVE = re.compile(r"\b(?:never|not|no|don't|dont|avoid|refrain|off[- ]limits|forbidden|stop|skip|steer clear|"
                       r"keep away|hold off|untouched|alone)\b|n't\b", re.I)


def _waiting(rec: ProtectedRecord) -> bool:
    if families.on(directives.F_COMPLETION_R8) and rec.kind in ("prerequisite", "obligation") \
            and _BEFORE_EVENT.search(rec.text) and not _BEFORE_ANY.search(rec.text):
        return True  # "The security review has to be completed before go-live": one event, released when done
    return rec.metadata.get("rule") in _WAITING_RULES or (
        rec.kind == "prerequisite" and re.search(r"\buntil\b|\bwait(?:ing)? for\b", rec.text, re.I) is not None) or (
        rec.kind == "prerequisite" and families.on(directives.F_COMPLETION) and _SPECIFIC_PREREQ.match(rec.text) is not None)


#: a condition before one named event ("before sharing the specs", "before go-live", "before it goes
#: out"), not before every such action ("before any maintenance"): family ``completion_forms_r8``
_BEFORE_EVENT = re.compile(r"\bbefore\s+(?:(?:\w+ing\s+)?(?:the|my|our|we|it|they|[\w]+-[\w]+)\b|\w+ing\s*[.!]?\s*$)", re.I)
_BEFORE_ANY = re.compile(r"\b(?:any|every|each|all|always|whenever)\b", re.I)
#: a prerequisite for one named action ("Before paying the contractor, get the certificate"), not a
#: standing one ("Before refunding a subscription, check ..."): released once its condition is met
_SPECIFIC_PREREQ = re.compile(r"^\s*(?:before|prior to|ahead of)\s+(?:\w+ing\s+)?(?:the|my|our|this|that|his|her|their)\b"
                              r"(?![^,]*\b(?:every|each|any|all)\b)", re.I)


def _best_matches(records: list[ProtectedRecord], terms: tuple[str, ...], *, at_least: int = 1) -> list[ProtectedRecord]:
    """The records sharing the most stems with ``terms`` (at least ``at_least``), ties all kept."""
    want = {_stem(t) for t in terms}
    scored = [(len(want & {_stem(t) for t in content_terms(r.text)}), r) for r in records]
    top = max((n for n, _ in scored), default=0)
    return [r for n, r in scored if n == top and n >= at_least]


def _readable(turn: "Turn") -> str | None:
    """What the tracker may read of ``turn``: its content, masked where secret, None when the
    whole turn is secret (:func:`memfold.window.secrets.readable_text`)."""
    from .secrets import readable_text

    return readable_text(turn.content, turn.labels, turn.metadata)


def make_constraint_extractor(spec: object = None) -> ConstraintExtractor:
    """An extractor from a setting: None/``"rules"`` for the rules, ``"llm"`` for the LLM one from
    the environment (``MEMFOLD_LLM_*``), or an extractor itself.

    :raises InvalidInput: for an unknown name, or ``"llm"`` with no endpoint configured.
    """
    if isinstance(spec, ConstraintExtractor):
        return spec
    if spec in (None, "rules"):
        return RuleConstraintExtractor()
    if spec == "llm":
        from ..memory.llm import ChatClient, LLMSettings

        settings = LLMSettings.from_env()
        if settings is None:
            raise InvalidInput("constraint extractor 'llm' needs MEMFOLD_LLM_BASE_URL and MEMFOLD_LLM_MODEL")
        return LLMConstraintExtractor(ChatClient(settings))
    raise InvalidInput(f"unknown constraint extractor {spec!r}: use 'rules' or 'llm'")


#: every pattern above skips a text lacking its required literals (issue 18, point 4; results unchanged)
prefilter.prefilter_module(globals(), group="rules")
#: the pattern itself, tried at one full stop (:func:`_abbreviation_probe`: a prefilter would only add its test)
_ABBREVIATION_STOP_AT = _ABBREVIATION_STOP.unfiltered.match
#: the rule patterns above as one gate (speed only, :class:`~memfold.window.prefilter.AnyOf`)
_RULES_GATE = prefilter.AnyOf(pattern for _rule, _kind, pattern in _RULES)
#: the rule modules this module reads sentences with: :mod:`.directives` and every later
#: ``directives_*`` module imported above (round 15: a module added later is in it by its import)
def rule_modules(namespace: dict[str, Any]) -> tuple[Any, ...]:
    """The modules in ``namespace`` that are :mod:`.directives` or a ``directives_*`` module beside
    it, by name."""
    base = directives.__name__
    return tuple(sorted((m for m in list(namespace.values()) if type(m) is type(directives)
                         and (m.__name__ == base or m.__name__.startswith(base + "_"))), key=lambda m: m.__name__))


RULE_MODULES = rule_modules(globals())
# round 15, speed only: the later rule modules' patterns are prefiltered too, in the rules' group
# (they read the same texts; directives_r13 and directives_r14 had none: every one of their
# patterns ran on every text). A module that prefilters itself is not wrapped twice.
for _module in RULE_MODULES:
    if _module is not directives:
        prefilter.prefilter_module(vars(_module), group="rules")
del _module
