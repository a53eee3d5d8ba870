"""Round-14 phrasing classes of the rule constraint extractor (issue 20, point 10), from ``fresh10``.

``fresh10`` was written blind in round 13 and measured once (71.9% of its standing instructions with
the rules alone); it is the tuning set of round 14. Its misses were read by class, and each class
that generalises became one family here, registered with ``{"fresh10"}`` in
:mod:`memfold.memory.families`, so ``bench/phrasing_retention.py --loso`` turns them off for that
set. The extractor (:mod:`memfold.window.constraints`) calls this module through small hooks after
the earlier rounds' rules (:mod:`memfold.window.directives`, :mod:`memfold.window.directives_r13`)
have had their say: nothing here changes what those rules find, except the veto of
:func:`reported_r14`, which turns down a record the earlier rules would have made of a quoted or
reported rule.

The families (each rule is stated again where it is written):

* ``spoken_forms_r14``: a voice transcript's fillers are not words of the instruction: "um", "uh",
  "erm", a filler "like" ("dont like give out ...", "so like basically"), "basically", a leading
  "yeah" / "so" / "of course" / "ofc" and a closing "okay" are dropped, and spoken contractions
  written out ("gotta" -> "have to", "gonna" -> "going to", "wanna" -> "want to", "till" -> "until",
  "thats" -> "that's"); the rest is read by every rule, the record keeps the sentence verbatim.
* ``learner_forms_r14``: the slips of a learner of English read as the form they stand for:
  "Please to reply" (an infinitive after "please"), "is obligatory to ask" (no subject), "You have
  permission for to", "Its okay you to", "Never you must give" (the adverb first), "we decide to"
  (a decision in the present).
* ``tail_forms_r14``: a short emphatic tail said as a sentence of its own ("ever.", "no exceptions.",
  "no need to ask.", "period.", "done." after a labelled decision) belongs to the sentence before it:
  the two are one record, read without the tail.
* ``list_forms_r14``: a message that names a list of rules, steps, permissions, decisions or
  findings in a header ending with a colon ("Rules of engagement for the beta:", "A few things you
  can do without asking:", "Steps for account closure:", "Decisions from my side:", "Findings so
  far:") and gives it as bullet lines is one record of the header's kind.
* ``formal_forms_r14``: the legal register: "The Agent shall ... <verb>" (a duty; "shall not": a
  ban), "it is required that you ...", "X hereby approves / authorises ...", "It is resolved that ...".
* ``permission_forms_r14``: "you're (now) cleared / entitled / at liberty to", "feel at liberty to",
  "You may, at your discretion, ...", "you have permission to", "ok to <verb> ..." for any verb
  with a thing of the task, "of course you can ...".
* ``approval_forms_r14``: "lgtm", "ship it", "that's fine, go for the X", "sure, order the X, all
  six", "I'm comfortable approving X", "Consent given for X", "Please proceed, X is accepted", "OK
  from me for X", "Fine by me to X", "yes, go ahead and <verb> the X".
* ``evidence_forms_r14``: a source reported in the present with a concrete fact, for sources the
  earlier rules did not list (monitoring, an error line, git blame, a timesheet, photos, a test
  run), "logs say ...", "<source> data: <fact>", "the X test passed, all N checks green", "Is
  showing in the system that ...".
* ``decision_forms_r14``: "decision: X" (a label and a short noun phrase, no clause), "(we) reached a conclusion: X", "Our choice is X", "The
  default X is now Y", "we're going to go with X".
* ``limit_forms_r14``: terse limits: "max 3 follow-ups per customer per week", "Spend cap on ads is
  $400 a day", "in formal register only", "Just the one discount per order", "no stacking codes"
  (no + gerund + noun), "The chatbot should only ...".
* ``standing_forms_r14``: standing imperatives and requirements the earlier rules miss: "Keep the X
  updated / up to date", "every 90 days", "excluding VAT", "on merge", "Use the university
  template", "Announce migrations in #ops", "Every PR needs a linked ticket", "Expenses over $500
  need two approvals", "anything tagged P1 gets a phone call".
* ``buried_clause_r14``: an instruction in the middle of a long sentence, after a discourse marker
  ("..., which is why I'm saying you must never ...", "..., so from today you need to ...", "we
  agreed that no one gets ...", "in the end I'm comfortable approving ...", "we reached a
  conclusion: ...", "..., and the audit trail shows ..."): the clause is read by every rule.
* ``reset_forms_r14``: "Everything said so far about X is void", "forget the whole X", "bin the
  whole X plan", "forget the X, we're ...", "all prior arrangements ... are superseded", "the above
  X arrangements are withdrawn".
* ``revoke_forms_r14``: "X is no more valid", "no more X needed", "the requirement to X is rescinded",
  "the X thing for Y is withdrawn",
  "PRs don't need X anymore", "..., so the X limit no longer applies" (after a reason), "Ok to X now"
  (a ban lifted).
* ``condition_met_r14``: an awaited thing reported done: "turned up", "showed up", "have completed
  their review", "ran clean", "used the last ...", "accepted my talk".
* ``polite_forms_r14``: a courtesy around an instruction adds nothing to it: a salutation or a
  reference to an earlier exchange opening the sentence ("Dear colleague, ...", "Further to our call,
  ...", "Following on from Thursday, ...", "please note (that) ..."), "Would you be so kind as to X?"
  (-> "X."), and a wish in the past subjunctive ("It would be really helpful if you refrained from X",
  "I'd appreciate it if you only used X" -> "Refrain from X.", "Only use X.").
* ``deadline_forms_r14``: a deadline with a numeric date or a clock time: "the deadline for X is
  14/11/2026 at 23:59", and the terse operator form "<thing> freeze / cut-off <time> (<zone>) <day>"
  ("pr freeze 18:00 UTC fri").
* ``order_forms_r14``: prerequisites stated by order: "X can proceed / start / go ahead only after Y",
  "X is conditional on / contingent on / dependent on Y", "Not until X should / can / may Y".
* ``reported_source_r14``: a rule quoted from a document or a game, a joke, or the past is no
  standing instruction: "Quote from the style guide: '...'", "From the API docs: '...'", "Joke of
  the day: ...", "The game's rules say ...", "The job ad says ...", "Back in 2019 we had to ...", "I
  wonder whether X has approved ...".

Every function here is pure: the same sentence gives the same answer.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..memory import families
from ..memory.families import family
from . import directives

F_SPOKEN_R14 = family("spoken_forms_r14", {"fresh10"})
F_LEARNER_R14 = family("learner_forms_r14", {"fresh10"})
F_TAIL_R14 = family("tail_forms_r14", {"fresh10"})
F_LIST_R14 = family("list_forms_r14", {"fresh10"})
F_FORMAL_R14 = family("formal_forms_r14", {"fresh10"})
F_PERMIT_R14 = family("permission_forms_r14", {"fresh10"})
F_APPROVAL_R14 = family("approval_forms_r14", {"fresh10"})
F_EVIDENCE_R14 = family("evidence_forms_r14", {"fresh10"})
F_DECISION_R14 = family("decision_forms_r14", {"fresh10"})
F_LIMIT_R14 = family("limit_forms_r14", {"fresh10"})
F_STANDING_R14 = family("standing_forms_r14", {"fresh10"})
F_CLAUSE_R14 = family("buried_clause_r14", {"fresh10"})
F_RESET_R14 = family("reset_forms_r14", {"fresh10"})
F_REVOKE_R14 = family("revoke_forms_r14", {"fresh10"})
F_CONDITION_R14 = family("condition_met_r14", {"fresh10"})
F_REPORTED_R14 = family("reported_source_r14", {"fresh10"})
F_POLITE_R14 = family("polite_forms_r14", {"fresh10"})
F_DEADLINE_R14 = family("deadline_forms_r14", {"fresh10"})
F_ORDER_R14 = family("order_forms_r14", {"fresh10"})

_QUESTION = re.compile(r"\?\s*[\"')\]]*\s*$")


def _about_task(s: str) -> bool:
    return bool(directives.concrete(s) or directives._names_task_noun(s) or directives._NAMED.search(s))


# -- spoken_forms_r14 -----------------------------------------------------------------------------
_W_SPOKEN = frozenset("um uh erm er umm uhh like basically gotta gonna wanna till thats ofc havent".split())
_FILLERS = re.compile(r"\b(?:um+|uh+|erm+|er)\b,?\s*|\blike\s+(?=(?:basically|literally|really|straight|totally|right|"
                      r"immediately|asap)\b)|\bbasically,?\s+", re.I)
#: a filler "like" after a conjunction, a negation or a pronoun, before no object ("dont like give out")
_LIKE_FILLER = re.compile(r"\b(?P<w>so|and|dont|don't|just|yeah|then|you|it|but|or)\s+like,?\s+"
                          r"(?!(?:to|that|this|it|the|a|an|them|him|her|me|us)\b)", re.I)
_SPOKEN_LEAD = re.compile(r"^(?:(?:so|yeah|yes|and|also|okay|ok|right|well|of course|ofc|lol no\.?|no)[,.]?\s+)+(?=\w)", re.I)
_SPOKEN_TAIL = re.compile(r"[,\s]+(?:okay|ok|alright|yeah|right|like straight away|straight away|just do it|"
                          r"please respect this)\s*[.!]?$", re.I)
_SPOKEN_CLAUSE = re.compile(r"^(?:when|whenever|if|once|after|before)\s+[^,]{3,60}?(?=\s+you\s+(?:have to|must|need to|should|"
                            r"can|may|gotta|got to)\b)", re.I)
_SPOKEN_WORDS = {"gotta": "have to", "gonna": "going to", "wanna": "want to", "till": "until", "thats": "that's",
                 "havent": "haven't", "hasnt": "hasn't", "ofc": "of course", "dont": "don't"}
_SPOKEN_WORD = re.compile(r"\b(?:" + "|".join(_SPOKEN_WORDS) + r")\b", re.I)


@lru_cache(maxsize=4096)
def _spoken(s: str) -> str | None:
    low = s.lower()
    if directives._words(low).isdisjoint(_W_SPOKEN):
        return None
    out = _LIKE_FILLER.sub(lambda m: m.group("w") + " ", _FILLERS.sub("", s))
    out = _SPOKEN_WORD.sub(lambda m: _SPOKEN_WORDS[m.group(0).lower()], out)
    for _ in range(2):
        out = _SPOKEN_LEAD.sub("", out.strip())
        out = _SPOKEN_TAIL.sub("", out)
    out = re.sub(r"\s{2,}", " ", out).strip()
    # no punctuation in a transcript: "when they ask for X you have to ..." -> "when they ask for X, you have to ..."
    out = _SPOKEN_CLAUSE.sub(lambda m: m.group(0).rstrip() + ",", out, count=1) if "," not in out else out
    if out == s.strip() or len(out.split()) < 3:
        return None
    return out[:1].upper() + out[1:]


def spoken_r14(sentence: str) -> str | None:
    """The sentence without a voice transcript's fillers, spoken contractions written out (family
    ``spoken_forms_r14``), or None when nothing was dropped. For reading only."""
    if not families.on(F_SPOKEN_R14):
        return None
    return _spoken(sentence.strip())


# -- learner_forms_r14 ----------------------------------------------------------------------------
_LEARNER = (
    (re.compile(r"^please to\s+(?=[a-z])", re.I), "Please "),
    (re.compile(r"^(?:is|it's|its)\s+(?=(?:obligatory|mandatory|compulsory|required|necessary)\s+to\s+\w)", re.I), "It is "),
    (re.compile(r"^you have (?:the )?permission (?:for|of)\s+to\s+", re.I), "You may "),
    (re.compile(r"^(?:its|it's|it is)\s+(?:okay|ok|fine|allowed)\s+(?:you|for you)\s+to\s+", re.I), "You may "),
    (re.compile(r"^never you (?P<m>must|should|can|may)\s+", re.I), "You must never "),
    (re.compile(r"^(?:after discussion,?\s+|after (?:the |some )?(?:meeting|talks?|debate),?\s+)?we decide to\s+", re.I),
     "We have decided to "),
)
_W_LEARNER = frozenset("please is it's its you never we".split())


def learner_r14(sentence: str) -> str | None:
    """The sentence with a learner's slip read as the form it stands for (family ``learner_forms_r14``):
    "Please to X" -> "Please X", "is obligatory to X" -> "It is obligatory to X", "You have permission
    for to X" / "Its okay you to X" -> "You may X", "Never you must X" -> "You must never X", "(After
    discussion) we decide to X" -> "We have decided to X". None when there is no slip."""
    if not families.on(F_LEARNER_R14):
        return None
    s = sentence.strip()
    first = s.split(None, 1)[0].lower() if s else ""
    if first not in _W_LEARNER and first != "after":
        return None
    for pattern, repl in _LEARNER:
        m = pattern.match(s)
        if m:
            out = repl + s[m.end():]
            out = re.sub(r",?\s*is not permitted\s*\.?$", ".", out, flags=re.I)
            return out
    return None


# -- tail_forms_r14 -------------------------------------------------------------------------------
_TAIL_R14 = re.compile(r"^\s*(?:ever|never|no exceptions?|without exception|period|full stop|no excuses|no ifs or buts|"
                       r"no need to (?:ask|check)(?: (?:me|first|with me))?(?: first)?|you don't need to ask|done|final|"
                       r"end of story|end of discussion)\s*[.!]*\s*$", re.I)
_LABELLED = re.compile(r"^\s*(?:decision|decided|ruling|outcome|resolution|rule|policy)\s*:\s*\S", re.I)


def merge_tails_r14(text: str, sents: list[str]) -> list[str]:
    """Sentences with an emphatic tail joined to the one before (family ``tail_forms_r14``):
    "no PII in slack. ever." is one sentence; "done." only after a labelled decision ("decision:
    monorepo. done."). Each result is a verbatim span of ``text``."""
    if len(sents) < 2 or not families.on(F_TAIL_R14):
        return sents
    if not any(len(s) < 40 and _TAIL_R14.match(s) for s in sents[1:]):
        return sents  # no tail (speed only)
    out: list[str] = []
    pos = 0
    for s in sents:
        if out and len(s) < 40 and _TAIL_R14.match(s) and (not re.match(r"^\s*(?:done|final)\b", s, re.I)
                                                             or _LABELLED.match(out[-1])):
            start = text.find(out[-1], max(0, pos - len(out[-1]) - len(s) - 4))
            end = text.find(s, start + len(out[-1]))
            if start >= 0 and end >= 0:
                out[-1] = text[start:end + len(s)]
                continue
        out.append(s)
        pos = text.find(s, pos) + len(s) if text.find(s, pos) >= 0 else pos
    return out


def strip_tail_r14(sentence: str) -> str | None:
    """The sentence without a merged emphatic tail (family ``tail_forms_r14``), or None."""
    if not families.on(F_TAIL_R14) or "." not in sentence.rstrip(" .!"):
        return None
    m = re.match(r"^(?P<head>.+?[.!])\s+(?P<tail>[^.!]{2,40}[.!]*)\s*$", sentence.strip(), re.S)
    if not m or not _TAIL_R14.match(m.group("tail")):
        return None
    return m.group("head")


# -- list_forms_r14 -------------------------------------------------------------------------------
_LIST_HEAD = re.compile(r"^(?P<head>[^\n]{3,80}?):\s*\n(?P<body>(?:\s*(?:[-*•–]|\d{1,2}[.)])\s+[^\n]+\n?){2,})\s*$", re.S)
_HEAD_KINDS = (
    (re.compile(r"\b(?:things|stuff)\s+(?:you|the bot|the assistant)\s+(?:can|may|are allowed to|are free to)\b|"
                r"\byou(?:'re| are)?\s+(?:allowed|free|welcome|cleared)\s+to\b|\bpermissions?\b|\bwithout asking\b", re.I),
     "permission", "permission_form"),
    (re.compile(r"\b(?:decisions?|approvals?|sign-?offs?|verdicts?)\b", re.I), "policy_state", "decision"),
    (re.compile(r"\b(?:findings?|evidence|facts|what (?:we|i) (?:found|know)|results?|observations?)\b", re.I),
     "evidence", "evidence"),
    (re.compile(r"\b(?:steps?|procedure|process|checklist|sequence|order of (?:play|work))\b", re.I),
     "obligation", "imperative"),
    (re.compile(r"\b(?:rules?|ground rules|guidelines?|policy|policies|dos and don'?ts|house rules|restrictions?|limits?|"
                r"constraints?|requirements?|standing orders?|instructions?)\b", re.I), "constraint", "imperative_limit"),
)
_BULLET_ORDER = re.compile(r"\b(?:only then|then|first|before|after|once|until)\b", re.I)


def list_r14(text: str) -> tuple[str, str] | None:
    """``(kind, rule)`` of a message that is a header naming a list of rules, steps, permissions,
    decisions or findings, ending with a colon, and two or more bullet lines (family
    ``list_forms_r14``); the whole message is one record. A list of steps with an order word in a
    bullet ("only then ...") is a prerequisite; decisions with "approved" in a bullet an approval."""
    if not families.on(F_LIST_R14) or "\n" not in text or ":" not in text:
        return None
    m = _LIST_HEAD.match(text.strip())
    if not m:
        return None
    head, body = m.group("head"), m.group("body")
    if _QUESTION.search(head) or directives._PAST.search(head):
        return None
    for pattern, kind, rule in _HEAD_KINDS:
        if pattern.search(head):
            if kind == "obligation" and _BULLET_ORDER.search(body):
                return "prerequisite", "prerequisite_form"
            if kind == "policy_state" and re.search(r"\bapproved\b", body, re.I):
                return "approval", "approval_statement"
            if not _about_task(body) and kind != "evidence":
                return None
            return kind, rule
    return None


# -- formal_forms_r14 -----------------------------------------------------------------------------
_PARTY = (r"(?:the\s+)?(?:agent|assistant|supplier|contractor|provider|company|customer|client|tenant|landlord|licensee|"
          r"licensor|vendor|buyer|seller|employee|employer|service provider|parties|party|operator|bot|processor|controller|you)")
_SHALL = re.compile(r"^" + _PARTY + r"\s+shall\s*(?P<neg>not\s+|never\s+)?(?:,\s*[^,]{3,80},\s*|\s*)(?:always\s+)?[a-z]+\b", re.I)
_FORMAL_KINDS = (
    (re.compile(r"^(?:it is|it's)\s+(?:hereby\s+)?(?:required|mandatory|obligatory|compulsory|expected)\s+that\s+(?:you|the agent|"
                r"agents|staff|all staff|the assistant|the bot|every|each|all)\b", re.I), "obligation", "modal"),
    (re.compile(r"^(?:it is|it's)\s+(?:obligatory|mandatory|compulsory)\s+to\s+\w", re.I), "obligation", "modal"),
    (re.compile(r"^(?:the\s+)?[\w'’ -]{2,40}?\s+(?:hereby\s+)(?:approves|authori[sz]es|sanctions|ratifies|grants)\b", re.I),
     "approval", "approval_statement"),
    (re.compile(r"^(?:you are|you're|the agent is|agents are)\s+hereby\s+(?:authori[sz]ed|permitted|allowed|empowered)\s+to\b", re.I),
     "permission", "permission_form"),
    (re.compile(r"^it is (?:hereby\s+)?(?:resolved|agreed|decided|determined)\s+that\s+\w", re.I), "policy_state", "decision"),
)
_W_FORMAL = frozenset("shall it it's hereby".split())
_W_FORMAL_ADJ = frozenset("required mandatory obligatory compulsory expected resolved agreed decided determined".split())


def formal_r14(sentence: str) -> tuple[str, str] | None:
    """``(kind, rule)`` of a sentence in the legal register (family ``formal_forms_r14``): "The Agent
    shall (, in respect of ...,) issue ..." (a duty; "shall not": a ban), "It is required that you
    ...", "It is obligatory to ...", "X hereby approves ...", "You are hereby authorised to ...", "It is
    resolved that ...". About the task, not in
    the past, not a question."""
    if not families.on(F_FORMAL_R14):
        return None
    s = sentence.strip()
    words = directives._words(s.lower())
    if words.isdisjoint(_W_FORMAL) or _QUESTION.search(s):
        return None
    if "shall" not in words and "hereby" not in words and words.isdisjoint(_W_FORMAL_ADJ):
        return None  # a word each form needs (speed only)
    found = None
    m = _SHALL.match(s) if "shall" in words else None
    if m:
        found = ("constraint", "never") if m.group("neg") else ("obligation", "modal")
    else:
        for pattern, kind, rule in _FORMAL_KINDS:
            if pattern.match(s):  # every form is anchored at the start
                found = (kind, rule)
                break
    if found is None or directives._PAST.search(s) or not _about_task(s):
        return None
    return found


# -- permission_forms_r14 -------------------------------------------------------------------------
_PERMIT_R14 = re.compile(
    r"^(?:(?:and|so|also|now)[,\s]+)?(?:you(?:'re| are)|the bot is|the assistant is|agents are)\s+(?:now\s+|also\s+|hereby\s+)?"
    r"(?:cleared|entitled|at liberty|welcome|authori[sz]ed|empowered|free)\s+to\s+(?P<v>[a-z]+)\b|"
    r"^(?:please\s+)?feel\s+(?:at liberty|free|welcome)\s+to\s+(?P<v2>[a-z]+)\b|"
    r"^you\s+(?:may|can)\s*,\s*(?:at your (?:own )?discretion|if you (?:like|want|wish|see fit)|where needed|as needed|"
    r"when needed|if needed|if necessary)\s*,\s*(?P<v3>[a-z]+)\b|"
    r"^you\s+have\s+(?:my\s+|the\s+)?(?:permission|authority|clearance|the go-ahead|my blessing)\s+to\s+(?P<v4>[a-z]+)\b|"
    r"^(?:it's\s+|it is\s+)?(?:ok|okay|fine|alright)\s+(?:for you\s+)?to\s+(?P<v5>[a-z]+)\s+(?:the|my|our|any|all|a|an)\b"
    r"[^.;!?]{3,}?\b(?:if|when|whenever|unless|as long as)\b|"
    r"^of course you (?:can|may)\s+(?P<v6>[a-z]+)\b", re.I)
_W_PERMIT_R14 = frozenset("cleared entitled liberty welcome authorised authorized empowered free feel may can permission "
                          "authority clearance go-ahead blessing ok okay fine alright course".split())


def permission_r14(sentence: str) -> bool:
    """A permission in a form the earlier rules miss (family ``permission_forms_r14``): "you're (now)
    cleared / entitled / at liberty to X", "feel at liberty to X", "You may, at your discretion, X",
    "You have permission to X", "ok to X the Y if ..." (any verb, with a condition), "of course you
    can X". About the task, not in the past, not a question."""
    if not families.on(F_PERMIT_R14):
        return False
    s = sentence.strip()
    words = directives._words(s.lower())
    if words.isdisjoint(_W_PERMIT_R14) or _QUESTION.search(s):
        return False
    m = _PERMIT_R14.match(s)  # every form is anchored at the start
    # "ok to restart the worker pods if they hang": a condition makes it a standing permission
    return bool(m) and not directives._PAST.search(s) and (_about_task(s) or m.group("v5") is not None)


# -- approval_forms_r14 ---------------------------------------------------------------------------
_YES_R14 = r"(?:(?:sure|yes|yep|yeah|ok|okay|fine|alright|right|great|that's fine|thats fine|that's ok|that's okay)[,.!]?\s+)"
_APPROVAL_R14 = re.compile(
    r"^(?:lgtm|sgtm|looks good to me|looks good)\s*[,.!;—-]*\s*(?:ship it|merge it|go ahead|approved|send it)\b|"
    r"^(?:that's|thats|that is)\s+(?:fine|ok|okay|good|great)\s*,?\s*(?:go|going)\s+(?:for|with)\s+(?:the|that|this|your|a)\s+\w|"
    r"^" + _YES_R14 + r"+(?:order|buy|book|get|purchase|take)\s+(?:the|those|these)\s+[^,]{2,40},\s*(?:all|both|the)\s+"
    r"(?:\d+|two|three|four|five|six|seven|eight|nine|ten|twelve|of them)\b|"
    r"\b(?:i'm|i am|we're|we are)\s+(?:comfortable|content|satisfied|okay|ok|fine)\s+(?:with\s+)?(?:approving|signing off|"
    r"authori[sz]ing|green-?lighting)\s+\w|"
    r"^(?:consent|permission|approval|authori[sz]ation|sign-?off)\s+(?:is\s+|has been\s+)?(?:given|granted|confirmed)\s+"
    r"(?:for|to)\s+\w|"
    r"^(?:please\s+)?(?:proceed|go ahead)\s*[,;:—-]\s*(?:the|your|their)\s+[^.;!?]{2,60}?\s+(?:is|are|has been)\s+"
    r"(?:accepted|approved|agreed|signed off)\b|"
    r"^(?:ok|okay|fine|good|green light|a yes|approved|thumbs up)\s+(?:from me|from my side|by me)\s+(?:for|to|on)\s+\w|"
    r"^(?:fine|ok|okay|good|alright)\s+by\s+(?:me|us)\s+(?:for\s+you\s+)?(?:to|for)\s+\w|"
    r"^" + _YES_R14 + r"+go ahead and\s+(?:pay|order|buy|book|send|refund|sign|approve|release|publish|ship|hire|renew|"
    r"accept|cancel|transfer|issue)\s+(?:the|that|this|my|our|them|him|her)\b", re.I)
_W_APPROVAL_R14 = frozenset("lgtm sgtm looks fine ok okay good great sure yes yep yeah comfortable content satisfied consent "
                            "permission approval authorisation authorization sign-off signoff proceed ahead approved "
                            "alright thats that's".split())


_G_YES_R14 = ("sure", "yes", "yep", "yeah", "ok", "okay", "fine", "alright", "right", "great", "that's", "thats")


def _approval_gate_r14(words: frozenset, low: str, s: str) -> bool:
    """The words one of :data:`_APPROVAL_R14`'s forms needs (speed only)."""
    return (low.startswith(("lgtm", "sgtm", "looks good", "that", "consent", "permission", "approval", "authori", "sign",
                            "please", "proceed", "go ahead", "ok ", "okay ", "fine ", "good ", "alright ", "green light",
                            "a yes", "approved ", "thumbs up"))
            or low.startswith(_G_YES_R14) and ("," in s or "ahead" in words)
            or not words.isdisjoint(("approving", "signing", "authorising", "authorizing", "green-lighting", "greenlighting")))


def approval_r14(sentence: str) -> bool:
    """An approval in a form the earlier rules miss (family ``approval_forms_r14``): "lgtm, ship
    it", "that's fine, go for the X", "sure, order the X, all six", "I'm comfortable approving X",
    "Consent given for X", "Please proceed, the X is accepted", "OK from me for X", "Fine by me to
    X", "yes, go ahead and pay the X". Not a question, not in the past; the thing approved is of the
    task but for "lgtm, ship it" (a code review's approval is about the change under review)."""
    if not families.on(F_APPROVAL_R14):
        return False
    s = sentence.strip()
    low = s.lower()
    words = directives._words(low)
    if words.isdisjoint(_W_APPROVAL_R14) or _QUESTION.search(s) or not _approval_gate_r14(words, low, s):
        return False
    if directives._PAST.search(s):
        return False
    m = _APPROVAL_R14.search(s)
    if not m:
        return False
    return low.startswith(("lgtm", "sgtm", "looks good")) or _about_task(s) or len(s.split()) >= 6


# -- evidence_forms_r14 ---------------------------------------------------------------------------
_SOURCE_R14 = (r"(?:monitoring|metrics|graphs?|charts?|errors?|error log|blame|git log|timesheets?|photos?|pictures?|images?|"
               r"videos?|cctv|camera|cameras|sensors?|output|trace|stack ?trace|alerts?|results?|readings?|scans?|x-?rays?|"
               r"tests?|checks?|diffs?|commits?|statements?|bank feed|logs?|records?|data|receipts?|emails?|reports?|"
               r"footage|console|panel|thermometer|gauge|meter|counter|inventory|stock count|sign-?in sheet|register|"
               r"manifest|waybill|bill of lading|tracking|pos|till|terminal)")
_EVIDENCE_R14 = re.compile(
    r"^(?!(?:i|we|you|he|she|they|it|that|this|there|which|who|what)\b)(?:(?:the|our|their|his|her|its|your|my)\s+)?"
    r"(?:[\w'’.-]+\s+){0,3}?" + _SOURCE_R14 + r"\b(?:\s+(?:from|on|of|for|in|at)\s+(?:the\s+)?[^\s]{2,80}?)?"
    r"\s+(?:says|say|shows|show|confirms|confirm|indicates|indicate|records|record|reads|read|lists|list|puts|put|has|have)\s+"
    r"(?:that\s+)?(?P<fact>[^;!?]{4,})|"
    r"^(?!(?:i|we|you|he|she|they|it|that|this|there)\b)(?:the\s+)?[\w'’ -]{2,30}?\s+(?:data|readings?|logs?|records?|"
    r"results?|figures|numbers|stats|statistics|report|export)\s*:\s*(?P<fact2>[^;!?]{8,})|"
    r"^(?:the\s+)?[\w'’ -]{2,30}?\s+(?:tests?|checks?|scan|build|pipeline|audit|inspection|restore)\s+(?:on|of|for|in)\s+"
    r"[\w'’ -]{2,30}?\s+(?:passed|failed)\s*,\s*(?P<fact3>[^;!?]{6,})|"
    r"^(?:is|it is|it's)\s+(?:showing|shown|written|recorded|listed)\s+in\s+the\s+[\w'’ -]{2,30}?\s+that\s+(?P<fact4>[^;!?]{8,})",
    re.I)
_W_EVIDENCE_R14 = frozenset("""says say shows show confirms confirm indicates indicate records record reads read lists list puts put
has have passed failed showing shown written recorded listed""".split())
_NOT_FACT_R14 = re.compile(r"\b(?:how (?:much|fun|great|nice)|what a|what an|such a|so much fun|if|would|might|maybe|perhaps|"
                           r"hope|wish|should|must|always|never|you can|you may)\b", re.I)


def evidence_r14(sentence: str) -> bool:
    """A source reported with a concrete fact in a form the earlier rules miss (family
    ``evidence_forms_r14``): a source of record they did not list ("Our monitoring at <url> shows
    ...", "The error in <path> says ...", "Git blame shows ...", "The signed timesheet shows ...",
    "Photos from the driver confirm ...", "logs say ..."), "<source> data: <fact>", "the X test on
    Y passed, all N checks green", "Is showing in the system that ...". The fact is concrete (a
    number, an id, a name) and no rule or hedge ("The style guide says you should ..." is no
    evidence)."""
    if not families.on(F_EVIDENCE_R14):
        return False
    s = sentence.strip()
    words = directives._words(s.lower())
    if (words.isdisjoint(_W_EVIDENCE_R14) and ":" not in s) or _QUESTION.search(s) or s.endswith("!"):
        return False
    m = _EVIDENCE_R14.match(s)
    if not m:
        return False
    fact = next(v for v in m.groupdict().values() if v)
    if _NOT_FACT_R14.search(fact) or re.search(r"[\"'‘“]", fact[:2]):
        return False
    return bool(directives.concrete(fact) or re.search(r"\d", fact) or directives._NAMED.search(fact))


# -- decision_forms_r14 ---------------------------------------------------------------------------
_DECISION_R14 = re.compile(
    r"^(?:the\s+|our\s+|final\s+)?(?:decision|ruling|outcome|final call)\s*:\s*(?P<what>(?:[^\s.;!?]+\s*){1,5})[.;!]*$|"
    r"\b(?:we|they|the (?:board|team|committee))\s+(?:have\s+|'ve\s+|has\s+)?(?:finally\s+)?(?:reached|came to|come to|arrived at)\s+"
    r"(?:a|the|our)\s+(?:conclusion|decision|verdict|agreement)\s*:\s*(?P<what2>.{6,})|"
    r"^(?:our|my|the team's|the final)\s+(?:choice|pick|selection|decision)\s+(?:is|will be)\s+(?:the\s+)?(?P<what3>[^.;!?]{2,60})|"
    r"^the\s+(?:default|standard|main|primary|official|new)\s+[\w'’ -]{2,30}?\s+is\s+now\s+(?P<what4>[^.;!?]{2,60})|"
    r"^(?:we(?:'re| are))\s+(?:going to|gonna)\s+(?:go|going)\s+(?:with|for)\s+(?:the|a|an|our)\s+(?P<what5>[^.;!?]{2,80})", re.I)
_W_DECISION_R14 = frozenset("decision verdict ruling outcome call reached came come arrived choice pick selection default "
                            "standard main primary official new going gonna".split())


def decision_r14(sentence: str) -> bool:
    """A decision in a form the earlier rules miss (family ``decision_forms_r14``): "decision: X",
    "we (finally) reached a conclusion: X", "Our choice is X", "The default X is now Y", "we're going
    to go with the X". What is decided names a thing (a name, a number, a task noun); not a
    question, not in the past but for the conclusion reached."""
    if not families.on(F_DECISION_R14):
        return False
    s = sentence.strip()
    words = directives._words(s.lower())
    if words.isdisjoint(_W_DECISION_R14) or _QUESTION.search(s):
        return False
    m = _DECISION_R14.search(s)
    if not m:
        return False
    key = next(k for k, v in m.groupdict().items() if v)
    what = m.group(key)
    if key != "what2" and directives._PAST.search(s[:m.start(key)]):
        return False  # "the caterer from last year" is what is chosen, not when
    if key == "what" and re.search(r"\b(?:is|are|was|were|be|been|i|we|you|it)\b", what, re.I):
        return False  # a label names what is decided, not a clause ("Outcome: it was fun")
    return bool(key == "what" or _about_task(what) or re.search(r"[`A-Z]", what) or len(what.split()) >= 4)


# -- limit_forms_r14 ------------------------------------------------------------------------------
_LIMIT_R14 = re.compile(
    r"^(?:max|maximum|at most|no more than|up to|a maximum of|limit(?: of)?)\s+[$€£]?\d[\d,.]*\s*[\w'’-]+(?:\s+[\w'’-]+){0,3}?"
    r"\s+(?:per|a|each|every)\s+\w+|"
    r"^(?:the\s+)?(?:[\w'’-]+\s+){0,3}?(?:cap|limit|ceiling|budget|maximum|max)\s+(?:on|for)\s+[\w'’ -]{2,30}?\s+is\s+[$€£]?\d|"
    r"\b(?:don't|do not|never)\s+go\s+(?:over|above|past|beyond)\b|"
    r"^(?:please\s+)?[a-z]+\s+(?:to|with)\s+(?:the\s+)?[\w'’ -]{2,40}?\s+in\s+[\w'’ -]{2,30}?\s+only\s*(?:[—–,;.-]|$)|"
    r"^(?:just|only)\s+(?:the\s+)?(?:one|two|three|\d+)\s+[\w'’-]+\s+(?:per|a|each|every)\s+\w+|"
    r"(?:^|[;,]\s*)no\s+[a-z]+ing\s+(?:of\s+)?[a-z]{3,}s?\s*[.!]?$|"
    r"^no\s+(?:[A-Z]{2,}s?|[\w'’-]+s)\s+(?:in|on|into|over|via|to)\s+(?:the\s+)?#?[\w-]+(?:\s+[\w-]+)?\s*[.!]?$|"
    r"^(?:the\s+)?(?:chatbot|bot|assistant|agent|agents|ai|model)\s+(?:should|must|can|may|is to|are to)\s+only\s+\w+", re.I)
_W_LIMIT_R14 = frozenset("max maximum most more up limit cap ceiling budget go only just no".split())


def limit_r14(sentence: str) -> bool:
    """A restriction in a terse form (family ``limit_forms_r14``): a number per period or per thing
    with no verb ("max 3 follow-ups per customer per week", "Just the one discount per order"), a
    cap stated ("Spend cap on ads is $400 a day"), "don't go over", "Talk to X in formal register
    only", a ban of a practice ("no stacking codes": no + gerund + noun), the agent's "should only".
    About the task, not in the past, not a question."""
    if not families.on(F_LIMIT_R14):
        return False
    s = sentence.strip()
    words = directives._words(s.lower())
    if words.isdisjoint(_W_LIMIT_R14) or _QUESTION.search(s) or directives._PAST.search(s):
        return False
    return bool(_LIMIT_R14.search(s)) and _about_task(s)


# -- standing_forms_r14 ---------------------------------------------------------------------------
_STANDING_R14 = (
    (re.compile(r"^(?:please\s+)?(?:always\s+)?keep\s+(?:the|our|your|all|every)\s+[\w'’ -]{2,30}?\s+(?:updated|up to date|up-to-date|"
                r"current|accurate|tidy|locked|filed|backed up|in sync|synced)\s*[.!]?$", re.I), "obligation", "imperative"),
    (re.compile(r"^(?:please\s+)?[a-z]+\s+(?:the\s+|all\s+|our\s+)?[\w'’ -]{2,40}?\s+every\s+(?:\d+|two|three|four|five|six|"
                r"seven|ten|twelve|thirty|ninety)\s+(?:days|weeks|months|hours|minutes|years)\s*[.!]?$", re.I), "obligation", "imperative"),
    (re.compile(r"^(?:please\s+)?[a-z]+\s+(?:the\s+|all\s+|our\s+)?[\w'’ -]{2,40}?\s+(?:excluding|including|exclusive of|inclusive of|"
                r"ex|incl\.?|net of|before|after)\s+(?:vat|gst|tax|taxes|shipping|fees|postage)\s*[.!]?$", re.I),
     "obligation", "imperative"),
    (re.compile(r"^(?:please\s+)?[a-z]+\s+(?:the\s+|all\s+|our\s+)?[\w'’ -]{2,30}?\s+(?:on|at|upon|after|before)\s+(?:every\s+|each\s+)?"
                r"(?:merge|deploy|deployment|release|push|checkout|close|closing|sign-?up|login|handover|shutdown|startup|"
                r"boot|commit)\s*[.!]?$", re.I), "obligation", "imperative"),
    (re.compile(r"^(?:please\s+)?(?:always\s+)?use\s+the\s+[\w'’ -]{2,30}?\s+(?:template|letterhead|format|signature|style guide|"
                r"branding|logo|font|layout|boilerplate|form|checklist|wording)\s*[.!]?$", re.I), "obligation", "imperative"),
    (re.compile(r"^(?:please\s+)?(?:always\s+)?[a-z]+\s+(?:all\s+|any\s+|the\s+)?[a-z-]{3,}s\s+(?:in|on|to)\s+#[\w-]+\s*[.!]?$", re.I),
     "obligation", "imperative"),
    (re.compile(r"^(?:every|each|all|any)\s+[\w'’ -]{1,30}?\s+(?:needs|need|requires|require|gets|get)\s+(?:a|an|the|\d+|one|"
                r"two|three|at least)\s+[\w'’ -]{2,40}?\s*[.!]?$", re.I), "prerequisite", "prerequisite_form"),
    (re.compile(r"^(?:the\s+|all\s+)?[a-z-]{3,}s\s+(?:over|above|under|below|of more than)\s+[$€£]?\d[\d,.]*[km]?\s+(?:need|require|"
                r"must have|get)\s+(?:a|an|\d+|one|two|three|four|at least)\s+[\w'’ -]{2,40}?\s*[.!]?$", re.I),
     "prerequisite", "prerequisite_form"),
    (re.compile(r"^(?:rule|policy)\s+(?:for|on)\s+[\w'’ -]{2,30}?:\s*(?:anything|everything|every|each|all|any)\s+[\w'’ -]{2,40}?"
                r"\s+(?:gets|get|goes|go|needs|must|should)\s+\w", re.I), "obligation", "imperative"),
    (re.compile(r"^(?:anything|everything|every \w+|each \w+|all \w+)\s+(?:tagged|marked|labelled|labeled|flagged)\s+[\w-]+\s+"
                r"(?:gets|goes|needs|must|should)\s+\w", re.I), "obligation", "imperative"),
)
_W_STANDING_R14 = frozenset("""keep every excluding including exclusive inclusive ex incl net before after on at upon use in to
each all any needs need requires require gets get rule policy anything everything""".split())


def standing_r14(sentence: str) -> tuple[str, str] | None:
    """``(kind, rule)`` of a standing imperative or requirement the earlier rules miss (family
    ``standing_forms_r14``): "Keep the X updated / up to date", "<verb> the X every 90 days", "Quote
    prices excluding VAT", "Squash commits on merge", "Use the university template", "Announce
    migrations in #ops", "Every PR needs a linked ticket", "Expenses over $500 need two approvals",
    "anything tagged P1 gets a phone call". The first word of an imperative is a verb (not a
    pronoun, article or small-talk word); one occasion ("today", "now") or the past makes it no
    standing rule."""
    if not families.on(F_STANDING_R14):
        return None
    s = sentence.strip()
    if not s or _QUESTION.search(s) or s.endswith("!") or len(s.split()) > 25:
        return None
    low = s.lower()
    words = directives._words(low)
    if words.isdisjoint(_W_STANDING_R14) or directives._PAST.search(s):
        return None
    first = directives._first_word(s)
    verb = first not in _NOT_A_VERB_R14 and not first.endswith(("ing", "ed", "ly"))
    if _ONE_OFF_R14.search(s):
        return None
    for i, (pattern, kind, rule) in enumerate(_STANDING_R14):
        if words.isdisjoint(_G_STANDING_R14[i]) and not (i == 5 and "#" in s):
            continue  # a word the pattern needs (speed only)
        if (verb or i >= _FIRST_STATEMENT_R14) and pattern.match(s) and (i < _FIRST_STATEMENT_R14 or _about_task(s)):
            return kind, rule  # a statement names a thing of the task ("Every summer needs a good book" does not)
    return None


#: per pattern of :data:`_STANDING_R14`, words one of which it needs (speed only; the sixth needs "#")
_G_STANDING_R14 = (
    frozenset(("keep",)), frozenset(("every",)),
    frozenset("excluding including exclusive inclusive ex incl incl. net before after".split()),
    frozenset("on at upon after before".split()), frozenset(("use",)), frozenset(),
    frozenset("every each all any".split()), frozenset("over above under below more".split()),
    frozenset(("rule", "policy", "rule:", "policy:")), frozenset("tagged marked labelled labeled flagged".split()),
)
#: the patterns of :data:`_STANDING_R14` from this index on are statements ("Every PR needs ..."),
#: the ones before it imperatives (their first word must be a verb)
_FIRST_STATEMENT_R14 = 6


_NOT_A_VERB_R14 = frozenset("""i we you he she they it the a an my our your his her their this that these those there here
every each all any no not never always so just also and but or if when then thanks thank hi hey hello yes ok okay sure great
good nice lol wow what who why how where anything everything rule policy""".split())
_ONE_OFF_R14 = re.compile(r"\b(?:now|today|tonight|tomorrow|right away|asap|this (?:morning|afternoon|evening|week|time)|"
                          r"yesterday|for me|for us)\b", re.I)


# -- buried_clause_r14 ----------------------------------------------------------------------------
_CLAUSE_CUT_R14 = re.compile(
    r"(?:,\s*|\s)(?:which is why|that's why|and that's why|so that's why)\s+(?:i'm|i am)\s+(?:saying|asking|telling you)\s+(?:that\s+)?|"
    r"\b(?:i'm|i am)\s+(?:saying|asking)\s+(?:that\s+)?(?=you\b)|"
    r",\s*(?:so|and so|which means)\s+(?=(?:from (?:today|now|tomorrow|monday)|going forward|as of \w+|starting \w+)\b)|"
    r"\bwe\s+(?:have\s+|'ve\s+)?(?:agreed|decided|settled on|resolved)\s+that\s+(?=(?:no one|nobody|no|every|each|all|any|you|the)\b)|"
    r"\bin the end,?\s+(?=(?:i'm|i am|we're|we are)\b)|"
    r",\s*(?=you(?:'re| are)\s+(?:now\s+)?(?:entitled|cleared|allowed|permitted|free|authori[sz]ed|required|expected|"
    r"not allowed|never allowed)\s+to\b|you\s+(?:must|should|need to|have to|may|can)\s+(?:never\s+|always\s+|only\s+|now\s+)?\w)|"
    r"(?:,\s*|\s)(?:and|but)\s+(?=(?:the|our|their)\s+(?:[\w'’-]+\s+){0,2}?(?:trail|logs?|records?|data|export|history|footage|"
    r"report|timeline|ledger|dashboard)\s+(?:shows?|says?|confirms?|indicates?)\b)", re.I)
_CLAUSE_END_R14 = re.compile(r",\s*(?:and then|however|though|whatever|no matter|even if|because)\b.*$|[.!]\s*$", re.I | re.S)
_G_CLAUSE_MARK = frozenset("why saying asking agreed decided settled resolved".split())
_G_CLAUSE_SCOPE = frozenset("from going as starting".split())
_G_CLAUSE_SOURCE = frozenset("trail log logs record records data export history footage report timeline ledger dashboard".split())
_G_CLAUSE_MODAL = frozenset("must should need have may can entitled cleared allowed permitted free authorised authorized "
                            "required expected not never".split())
_W_CLAUSE_R14 = frozenset("why saying asking so agreed decided settled resolved end and but means you you're".split())


def buried_clauses_r14(sentence: str) -> list[str]:
    """The clauses after a discourse marker in a long sentence (family ``buried_clause_r14``):
    "..., which is why I'm saying you must never ...", "..., so from today you need to ...", "we
    agreed that no one gets ...", "in the end I'm comfortable approving ...", "..., and the audit
    trail shows ...". The clause ends before a trailing aside (", and then ...", ", however ...").
    Each is read by every rule; the record keeps the sentence."""
    if not families.on(F_CLAUSE_R14) or len(sentence) < 60:
        return []
    words = directives._words(sentence.lower())
    if words.isdisjoint(_W_CLAUSE_R14):
        return []
    if words.isdisjoint(_G_CLAUSE_MARK) and ("end" not in words or "in" not in words) and words.isdisjoint(_G_CLAUSE_SOURCE) \
            and ("," not in sentence or words.isdisjoint(_G_CLAUSE_SCOPE)
                 and ("you" not in words and "you're" not in words or words.isdisjoint(_G_CLAUSE_MODAL))):
        return []  # a word each cut needs (speed only)
    out = []
    for m in _CLAUSE_CUT_R14.finditer(sentence):
        rest = sentence[m.end():]
        rest = _CLAUSE_END_R14.sub("", rest).strip()
        if len(rest.split()) >= 4:
            out.append(rest[:1].upper() + rest[1:] + ".")
    return out


# -- reset_forms_r14 ------------------------------------------------------------------------------
_RESET_R14 = re.compile(
    r"\b(?:everything|all|anything)\s+(?:(?:we|i|you)\s+)?(?:said|agreed|discussed|planned|decided)\s+(?:so far|before|earlier|"
    r"until now|up to now|previously)?\s*(?:about|on|regarding|re|for)\s+[\w'’ -]{2,30}?\s+(?:is|are)\s+(?:now\s+)?(?:void|off|"
    r"null and void|cancelled|canceled|scrapped|out)\b|"
    r"\b(?:forget|scratch|bin|ditch|scrap|drop|cancel|shelve)\s+the\s+(?:whole|entire)\s+(?:[\w'’-]+\s+){0,3}?(?:plan|plans|"
    r"itinerary|schedule|approach|idea|thing|project|setup|arrangement|arrangements|programme|program)\b|"
    r"\b(?:forget|scratch|ditch|scrap)\s+the\s+(?:[\w'’-]+\s+){0,2}?(?!(?:requirement|rule|limit|ban|cap|policy|restriction|"
    r"condition|check|reminder|deadline)s?\b)[\w'’-]+\s*,\s*(?=(?:we're|we are|we'll|we will|i'm|let's)\s+\w)|"
    r"\b(?:all\s+)?(?:prior|previous|earlier|existing|above|current)\s+(?:[\w'’-]+\s+){0,2}?(?:arrangements|plans|agreements|"
    r"instructions)\s+(?:regarding\s+[\w'’ -]{2,30}?\s+|about\s+[\w'’ -]{2,30}?\s+|for\s+[\w'’ -]{2,30}?\s+)?(?:are|is)\s+"
    r"(?:hereby\s+)?(?:superseded|withdrawn|void|revoked|cancelled|canceled|rescinded)\b", re.I)
_W_RESET_R14 = frozenset("void off cancelled canceled scrapped out whole entire forget scratch ditch scrap superseded "
                         "withdrawn revoked rescinded".split())


_G_RESET_SAID = frozenset("said agreed discussed planned decided".split())
_G_RESET_PLANS = frozenset("arrangements plans agreements instructions".split())


def reset_r14(text: str) -> "re.Match[str] | None":
    """A reset of the plan in a round-14 form (family ``reset_forms_r14``): "Everything said so far
    about X is void", "forget / bin / scratch the whole X (plan)", "forget the X, we're ...", "all
    prior arrangements regarding X are superseded", "the above X arrangements are withdrawn";
    something of the task after it or in it (a number, a name, "instead", "we're ...", "will
    now")."""
    if not families.on(F_RESET_R14):
        return None
    low = text.lower()
    words = directives._words(low)
    if words.isdisjoint(_W_RESET_R14) and "void" not in low:
        return None
    if not (not words.isdisjoint(("whole", "entire")) or not words.isdisjoint(_G_RESET_SAID) or "void" in low
            or "," in text and not words.isdisjoint(("forget", "scratch", "ditch", "scrap"))
            or not words.isdisjoint(_G_RESET_PLANS)):
        return None  # a word each form needs (speed only)
    m = _RESET_R14.search(text)
    if not m or _QUESTION.search(text.strip()):
        return None
    rest = text[m.end():]
    if not re.search(r"\b(?:we(?:'re| are|'ll| will)|instead|now|is now|new|will|henceforth|going to|gonna)\b", rest, re.I) \
            and not (directives.concrete(rest) and len(rest.split()) >= 3):
        return None
    return m


# -- revoke_forms_r14 -----------------------------------------------------------------------------
_REVOKE_R14 = re.compile(
    r"^(?:please be (?:informed|advised|aware)(?: that)?\s+|fyi,?\s+|note that\s+)?(?:the\s+)?(?P<what>[\w'’ -]{3,60}?)\s+"
    r"(?:is|are)\s+no\s+(?:more|longer)\s+(?:valid|in force|in effect|applicable|needed|required|a thing)\b|"
    r"^no more\s+(?P<what2>[\w'’ -]{3,40}?)\s+(?:needed|required|necessary)\b", re.I)
_RESCINDED_R14 = re.compile(
    r"^(?:(?:effective|with effect from|as of|from)\s+[\w ]{2,20}?,\s*)?(?:the\s+)?(?:requirement|rule|ban|policy|restriction|"
    r"obligation|need|prohibition)\s+(?:to|of|on|against|for|about)\s+(?P<what>[^.;!?]{3,80}?)\s+(?:is|has been|are|have been)\s+"
    r"(?:hereby\s+|now\s+)?(?:rescinded|withdrawn|revoked|retired|repealed|abolished|dropped|void)\b|"
    r"^(?:the\s+)?(?P<what5>[\w'’ -]{3,50}?)\s+(?:thing|rule|requirement|policy|limit|restriction|ban|cap|check)\b"
    r"(?P<what6>[^,.;]{0,40}?)\s+(?:is|has been)\s+(?:hereby\s+|now\s+)?(?:withdrawn|rescinded|revoked|repealed|abolished|"
    r"retired)\b|"
    r"^(?P<what2>[\w'’ -]{3,40}?)\s+(?:don't|dont|do not|no longer|doesn't|does not)\s+need\s+(?P<what3>[\w'’ -]{3,40}?)\s+"
    r"(?:any ?more|any longer)\b|"
    r"\b(?:so|and|now)\s+(?:the\s+)?(?P<what4>[\w'’ -]{3,40}?)\s+(?:no longer applies|no longer stands|no longer holds|"
    r"doesn't apply any ?more|is no longer (?:needed|required|in force|valid))\b", re.I)
_LIFT_NOW_R14 = re.compile(r"^(?:it's\s+)?(?:ok|okay|fine|alright)\s+to\s+(?P<what>[\w'’ -]{4,50}?)\s+now\b", re.I)
_W_RESCINDED_R14 = frozenset("rescinded withdrawn revoked retired repealed abolished dropped void anymore any longer "
                              "applies stands holds apply".split())
_W_REVOKE_R14 = _W_RESCINDED_R14 | frozenset("more longer now".split())


def withdrawn_r14(sentence: str) -> tuple[str, str] | None:
    """``(words naming what is withdrawn, action)`` for a round-14 form (family ``revoke_forms_r14``):
    "(Please be informed) the X is no more valid / no longer in force", "no more X needed", "the
    requirement to X is rescinded", "the X thing / rule for Y is withdrawn", "X don't need Y anymore", "..., so the X no longer applies"
    (revoke), "Ok to X now" (lift: ends only a prohibition naming it)."""
    if not families.on(F_REVOKE_R14):
        return None
    s = sentence.strip()
    words = directives._words(s.lower())
    if words.isdisjoint(_W_REVOKE_R14) or _QUESTION.search(s):
        return None
    m = _REVOKE_R14.match(s)
    if m:
        what = m.group("what") or m.group("what2")
        what = re.sub(r"^(?:prohibition|ban|rule|requirement|restriction)\s+(?:of|on|against)\s+", "", what, flags=re.I)
        return directives.split_hyphens(what), "revoke"
    m = _RESCINDED_R14.search(s) if not words.isdisjoint(_W_RESCINDED_R14) else None
    if m:
        what = " ".join(v for k, v in m.groupdict().items() if v)
        return directives.split_hyphens(what), "revoke"
    m = _LIFT_NOW_R14.match(s)
    if m and not directives._PAST.search(s[:m.end()]):
        return directives.split_hyphens(m.group("what")), "lift"
    return None


# -- condition_met_r14 ----------------------------------------------------------------------------
_CONDITION_MET_R14 = re.compile(
    r"\b(?:turned up|showed up|came through|has come|have come|got here|is here|are here)\b|"
    r"\b(?:have|has)\s+(?:now\s+|just\s+)?(?:completed|finished|done)\s+(?:their|his|her|its|the)\s+(?:review|check|inspection|"
    r"sign-?off|approval|audit)\b|"
    r"\b(?:ran|came back|passed)\s+clean\b|"
    r"\b(?:just\s+)?used\s+(?:up\s+)?the\s+last\s+\w+|"
    r"\b(?:they|the \w+)\s+(?:accepted|approved|confirmed)\s+(?:my|our|the)\s+\w+", re.I)
_W_CONDITION_R14 = frozenset("turned showed came has have got is are completed finished ran passed used accepted approved "
                             "confirmed".split())


def condition_met_r14(sentence: str) -> bool:
    """An awaited thing reported done (family ``condition_met_r14``): "the delivery turned up at 10",
    "Legal have completed their review", "the restore test ran clean", "we just used the last box",
    "They accepted my talk". Never with a negation, a future or a hope."""
    if not families.on(F_CONDITION_R14):
        return False
    s = sentence.strip()
    low = s.lower()
    words = directives._words(low)
    if words.isdisjoint(_W_CONDITION_R14) or _QUESTION.search(s):
        return False
    if not words.isdisjoint(("not", "never", "yet", "will", "hope", "hopefully", "if", "when", "until", "soon", "should", "must",
                             "once", "before")) or "n't" in low:
        return False
    return bool(_CONDITION_MET_R14.search(s))


# -- reported_source_r14 --------------------------------------------------------------------------
_REPORTED_R14 = re.compile(
    r"^(?:a\s+)?(?:quote|quotation|excerpt|line|extract)\s+(?:from|of)\s+[^:]{2,40}:|"
    r"^(?:from|per|according to|as (?:stated|written) in)\s+(?:the|their|its|an?)\s+[\w'’ -]{0,30}?(?:docs|documentation|manual|"
    r"handbook|guide|faq|spec|specification|readme|wiki|terms|rules|rulebook|article|book|textbook|website|site)\s*[:,]\s*"
    r"[\"'‘“]|"
    r"^(?:joke|quote|fun fact|riddle|pun|thought|motto|saying|proverb|wisdom|tip)\s+of\s+the\s+(?:day|week|month)\s*:|"
    r"^(?:the\s+)?(?:game's|game|board game's|sport's|league's|club's|tournament's)\s+rules?\s+(?:say|says|state|states)\b|"
    r"^(?:the\s+)?(?:job ad|job advert|job posting|listing|advert|ad|brochure|flyer|poster|leaflet)\s+(?:says|said|states|reads)\b|"
    r"^back in\s+(?:\d{4}|the day|the (?:\d0s|old days)|my day|school|college|uni)\b|"
    r"^(?:i|we)\s+(?:wonder|wondered|was wondering|were wondering|doubt)\s+(?:whether|if|why|how|when)\b", re.I)
_W_REPORTED_R14 = frozenset("quote quotation excerpt line extract from per according as joke fun riddle pun thought motto "
                            "saying proverb wisdom tip game's game board sport's league's club's tournament's job ad advert "
                            "posting listing brochure flyer poster leaflet back i we".split())


def reported_r14(sentence: str) -> bool:
    """A quoted or reported rule, not a standing instruction (family ``reported_source_r14``): a
    quotation labelled as one ("Quote from the style guide: ...", "From the API docs: '...'"), a
    joke or a saying of the day, the rules of a game or an advert reported ("The game's rules say
    ...", "The job ad says ..."), the past ("Back in 2019 we had to ..."), a question wondered
    about ("I wonder whether the landlord has approved ...")."""
    if not families.on(F_REPORTED_R14):
        return False
    s = sentence.strip()
    first = s.split(None, 1)[0].lower() if s else ""
    if first not in _W_REPORTED_R14 and first not in ("a", "the", "joke", "back"):
        return False
    return bool(_REPORTED_R14.match(s))  # every form is anchored at the start


# -- polite_forms_r14 -----------------------------------------------------------------------------
_COURTESY_LEAD = re.compile(
    r"^(?:(?:dear|hello|hi|hey)\s+[\w .'’-]{1,30}?,\s+)?"
    r"(?:(?:further to|following on from|following|as per|per|as discussed (?:in|on|at)|after|re)\s+(?:our|my|the|your|this|"
    r"last|yesterday's|today's|[a-z]+day's|[a-z]+day)\b[\w'’ -]{0,25},\s+)?"
    r"(?:please\s+(?:note|be (?:advised|informed|aware))\s*(?:that\s+)?(?=\w))?", re.I)
_SO_KIND = re.compile(r"^(?:would|could|will)\s+you\s+(?:be so kind as to|kindly|be good enough to)\s+(?P<rest>[a-z].+?)\s*\?"
                      r"(?:\s+(?:much appreciated|thanks|thank you|cheers|many thanks)[.!]*)?\s*$", re.I | re.S)
_WISH = re.compile(r"^(?:it would be|it'd be|i would|i'd)\s+(?:really\s+|very\s+|most\s+|so\s+|extremely\s+|hugely\s+)?"
                   r"(?:helpful|great|good|appreciated|grateful|ideal|appreciate it|be grateful|prefer it)\s+if\s+you\s+"
                   r"(?P<adv>(?:always|only|never|just)\s+)?(?P<verb>[a-z]+)\s+(?P<rest>.+)$", re.I | re.S)
_IRREGULAR = {"sent": "send", "kept": "keep", "wrote": "write", "gave": "give", "told": "tell", "made": "make", "took": "take",
              "put": "put", "let": "let", "left": "leave", "brought": "bring", "bought": "buy", "paid": "pay", "didn't": "don't",
              "did": "do", "spoke": "speak", "chose": "choose", "got": "get", "ran": "run", "said": "say"}
_W_POLITE = frozenset("dear hello hi hey further following per as after re please would could will it i i'd it'd".split())
_POLITE_OPEN = ("dear", "hello", "hi", "hey", "further", "following", "per", "as ", "after", "re ", "please", "would", "could",
                "will", "it would", "it'd", "i would", "i'd")


def _base_verb(word: str) -> str | None:
    low = word.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if not low.endswith("ed") or len(low) < 4:
        return None
    verbs = directives.task_verbs()
    for cand in (low[:-1], low[:-2], low[:-3], low[:-3] + "y" if low.endswith("ied") else ""):
        if cand and cand in verbs:
            return cand
    if low.endswith("ied"):
        return low[:-3] + "y"  # "copied"
    if low[-3] == low[-4] and low[-3] not in "aeiouls":
        return low[:-3]  # "stopped"
    vowels = "aeiou"
    # a silent e after one vowel and a consonant ("used", "included"), not after two vowels ("refrained")
    if low[-4] in vowels and (len(low) < 5 or low[-5] not in vowels):
        return low[:-1]
    return low[:-2]


def polite_r14(sentence: str) -> str | None:
    """The instruction inside a courtesy (family ``polite_forms_r14``), or None: a salutation or a
    reference to an earlier exchange opening the sentence, "please note (that)", "Would you be so
    kind as to X?" -> "X.", "It would be (really) helpful if you refrained from X" / "I'd appreciate
    it if you only used X" -> "Refrain from X." / "Only use X." (the verb in the past subjunctive
    read in the base form)."""
    if not families.on(F_POLITE_R14):
        return None
    s = sentence.strip()
    first = s.split(None, 1)[0].lower().rstrip(",") if s else ""
    if first not in _W_POLITE or not s.lower().startswith(_POLITE_OPEN):
        return None
    out = s
    m = _COURTESY_LEAD.match(out)
    if m and m.end():
        out = out[m.end():]
    m = _SO_KIND.match(out)
    if m:
        out = m.group("rest") + "."
    m = _WISH.match(out)
    if m:
        base = _base_verb(m.group("verb"))
        if base is None:
            return None
        adv = (m.group("adv") or "").strip()
        out = (f"{adv} {base} " if adv else f"{base} ") + m.group("rest")
    if out == s or len(out.split()) < 3:
        return None
    return out[:1].upper() + out[1:]


# -- deadline_forms_r14 ---------------------------------------------------------------------------
_NUM_DATE = r"(?:\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}|\d{4}-\d{2}-\d{2})"
_CLOCK = r"(?:\d{1,2}:\d{2}|\d{1,2}\s?(?:am|pm))"
_DAY_SHORT = r"(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day)?"
_DEADLINE_R14 = re.compile(
    r"^(?:the\s+)?(?:deadline|due date|cut-?off|closing date|submission date)\s+(?:for|on|of)\s+[\w'’ -]{2,40}?\s+(?:is|=|:)\s+"
    r"(?:on\s+)?(?:" + _NUM_DATE + r"|" + _CLOCK + r")|"
    r"^[\w'’-]+(?:\s+[\w'’-]+)?\s+(?:freeze|cut-?off|deadline|lock|lockdown)\s+(?:at\s+)?" + _CLOCK +
    r"(?:\s+[a-z]{2,4})?\s+(?:on\s+)?" + _DAY_SHORT + r"\b", re.I)
_W_DEADLINE_R14 = frozenset("deadline due cut-off cutoff closing submission freeze lock lockdown".split())


def deadline_r14(sentence: str) -> bool:
    """A deadline with a numeric date or a clock time (family ``deadline_forms_r14``): "the deadline
    for X is 14/11/2026 at 23:59 GMT", "pr freeze 18:00 UTC fri" (a thing frozen or cut off at a
    time on a day). Not a question, not in the past."""
    if not families.on(F_DEADLINE_R14):
        return False
    s = sentence.strip()
    words = directives._words(s.lower())
    if words.isdisjoint(_W_DEADLINE_R14) or _QUESTION.search(s) or directives._PAST.search(s):
        return False
    return bool(_DEADLINE_R14.match(s))  # every form is anchored at the start


# -- order_forms_r14 ------------------------------------------------------------------------------
_ORDER_R14 = re.compile(
    r"^(?!(?:it|this|that|he|she|they|we|i|there|everything|life|happiness)\b)(?:the\s+|all\s+|any\s+|our\s+)?[\w'’ -]{2,40}?\s+"
    r"(?:can|may|will|should|must|is to|are to)\s+(?:only\s+)?(?:proceed|start|begin|go ahead|go out|go live|ship|happen|"
    r"be released|be sent|be published|be merged|be deployed|resume|continue)\s+only\s+(?:after|once|when|if)\s+\w|"
    r"^(?!(?:it|this|that|he|she|they|we|i|you|there|everything|life|happiness|love)\b)(?:the\s+|all\s+|any\s+|our\s+)?"
    r"[\w'’ -]{2,40}?\s+(?:is|are)\s+(?:strictly\s+|always\s+)?(?:conditional|contingent|dependent)\s+(?:up)?on\s+\w|"
    r"^not until\s+[^,;]{3,60}?\s+(?:should|can|may|must|will|shall|do|does)\s+(?:the\s+|you\s+|we\s+|they\s+|any\s+)?\w+",
    re.I)
_W_ORDER_R14 = frozenset("only conditional contingent dependent until".split())


def order_r14(sentence: str) -> bool:
    """A prerequisite stated by order (family ``order_forms_r14``): "X can proceed only after Y",
    "X is conditional on Y", "Not until X should Y". Not a question, not in the past."""
    if not families.on(F_ORDER_R14):
        return False
    s = sentence.strip()
    words = directives._words(s.lower())
    if words.isdisjoint(_W_ORDER_R14) or _QUESTION.search(s) or directives._PAST.search(s):
        return False
    return bool(_ORDER_R14.match(s))  # every form is anchored at the start


# -- the sentence's own classes -------------------------------------------------------------------
def classify_r14(sentence: str) -> tuple[str, str] | None:
    """The round-14 classes that make a record of a sentence read as it is (families of
    :mod:`memfold.memory.families`, from ``fresh10``)."""
    s = sentence.strip()
    if not s:
        return None
    if (f := formal_r14(s)) is not None:
        return f
    if permission_r14(s):
        return "permission", "permission_form"
    if approval_r14(s):
        return "approval", "approval_statement"
    if evidence_r14(s):
        return "evidence", "evidence"
    if decision_r14(s):
        return "policy_state", "decision"
    if deadline_r14(s):
        return "deadline", "deadline_form"
    if order_r14(s):
        return "prerequisite", "prerequisite_form"
    if limit_r14(s):
        return "constraint", "imperative_limit"
    return standing_r14(s)


def rewrites_r14(sentence: str) -> list[str]:
    """The readings of a sentence the round-14 families give (each read by every rule): without a
    merged tail, without a transcript's fillers, without a courtesy, with a learner's slip read, the
    clauses buried in a long sentence. Each distinct from the sentence and from one another, in that order."""
    out: list[str] = []
    s = sentence.strip()
    for r in (strip_tail_r14(s), spoken_r14(s), polite_r14(s)):
        if r is not None and r != s and r not in out:
            out.append(r)
    for base in [s, *out]:
        r = learner_r14(base)
        if r is not None and r != s and r not in out:
            out.append(r)
    for base in [s, *out]:
        for r in buried_clauses_r14(base):
            if r != s and r not in out:
                out.append(r)
    return out
