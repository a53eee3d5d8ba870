"""Round-15 phrasing classes of the rule constraint extractor (issue 20, point 10), from ``fresh11``.

``fresh11`` was written blind in round 14 and measured once (63.6% of its standing instructions with
the rules alone, 71.6% with the instruction model); it is the tuning set of round 15. Its misses
were read by class, and each class that generalises became one family here, registered with
``{"fresh11"}`` in :mod:`memfold.memory.families`, so ``bench/phrasing_retention.py --loso`` turns
them off for that set. The extractor (:mod:`memfold.window.constraints`) calls this module through
small hooks after the earlier rounds' rules have had their say: nothing here changes what those
rules find, except :func:`adopted_quote_r15`, which reads a quoted rule the user adopts ("...:
'X.' Please follow that.") where round 14 turned every quoted rule down.

The families (each rule is stated again where it is written):

* ``label_lead_r15``: a label ending in a colon that names where a line comes from or what it is
  about ("Handover note from Priya, late shift:", "Runbook step 3 (yours):", "Shift notes to bot:",
  "Re your PR:", "Comment on line 88:", "Review:", "PR discussion summary:"), a calendar tag
  ("[cal] ..."), and a calendar entry's head before a dash ("Wed 9:00 vendor demo — approved, ...")
  add nothing to the instruction: the rest is read by every rule, the record keeps the sentence. A
  schedule label ("Every Monday 08:30:", "Weekdays after 17:30:", "Daily 12:00-13:00:") followed by an
  imperative is a standing duty.
* ``request_forms_r15``: a polite question that asks for a standing behaviour reads as the
  imperative it stands for: "Would you mind keeping X?" (-> "Keep X."), "Would it be possible to
  have X before Y?" (-> "Have X before Y."), "Could you note / record / add to the file that X?"
  (-> "X."), "Would you stop X-ing ...?" (-> "Stop X-ing ..."); and such a request followed by a
  short grant ("You have my OK.", "It has my sign-off.", "I approve the X.", "You're allowed to
  ...") is one record with it.
* ``adopted_quote_r15``: a rule quoted from a document and adopted by the next sentence ("From the
  Staff Handbook: 'X must ...' Please follow that.", "... Stick to it.", "... Book mine
  accordingly.", "... Please action it.") is a standing instruction: the quoted rule is read by
  every rule and the record is the whole message. A finding quoted from a report ("The surveyor's
  report states: 'Rising damp was detected ...'") is evidence.
* ``register_leads_r15``: the leads and tails of regional and office registers add nothing: "Kindly
  do the needful and", "Kindly note (that)", "Righto,", "Mate,", "Yeah nah,", "If it helps,", "For
  the record,", "If anyone asks,", "Since X came back," (a reason clause before "we've ..."), ", yeah?"
  and ", mate" at the end; "revert" in the sense "reply" ("Kindly revert with X by Monday").
* ``reported_aside_r15``: a rule reported from someone else's rules with the speaker's own aside
  after it is small talk, not an instruction: "The council's recycling rules say glass must go in the
  blue box, which I always forget.", "The school's policy states pupils must wear blazers, which my
  son hates.", "Their API docs say requests are limited to 100 per minute; we don't use it though."
* ``emoji_tail_r15``: a fragment of emoji and punctuation only ("👍", "🙏") belongs to the sentence
  before it.
* ``approval_forms_r15``: "Approved, he can enrol.", "Yes, accepted, please ...", "yep approved ✅
  go ahead and ...", "approving this PR", "the X is a go", "It has my sign-off", "gets the thumbs up
  from me", "stands sanctioned", "so yes, the trip is approved", "The Board approves the X".
* ``permission_forms_r15``: "you've got the green light / free rein", "You have my OK", "You are
  most welcome to", "It's not forbidden for you to", "I wouldn't mind (at all) if you", "No dramas
  if you want to", "As my delegate, you may".
* ``evidence_forms_r15``: a reading reported from any instrument or record, with a figure, a date
  or a day in it ("the bank app shows the transfer as pending since Tuesday", "The scale read 23.4
  kg", "The speed test gives 4 Mbps down", "the outbox shows it went on the 3rd", "X is dated 30
  November 2025"), after a lead ("When I checked the X, it shows ...", ", and sure enough the log
  shows ...", "and there it is: ...").
* ``decision_forms_r15``: "we've decided (that) X", "We have finalised that X", "we've made our
  minds up, X", "X has been chosen by the board", "decision made", "decided at retro", "X moves to
  Y permanently", "It's not undecided any more: X", "The answer is yes, X".
* ``limit_forms_r15``: "Nothing above £80 a night", "<verb> X only, don't Y", "one page per weekly
  update, no more", "X stay under 40 lines", "X are to be kept to Y only", "Economy class only for
  Y", "may be used for X only", "only urgent calls get booked", "no emojis in X pls".
* ``duty_forms_r15``: "Every single one needs X", "Never fail to X", "whenever you X, <verb> Y",
  "don't ever <verb> me ...", "X have to reach Y within 72 h", "Not a day later than the 9th",
  "<day> <date>, <time> — X due", "X doesn't get shipped until Y", "<verb> every / all X" (a
  standing imperative over every item: "Announce every maintenance window ...", "Anonymise all
  participant quotes"), "All X goes through Y", "Bedtime is 8pm", "X, never by card".
* ``reset_forms_r15``: "chuck / bin / tear up / throw out / ignore / reset the (whole) X plan", "the
  (whole / previous) X plan is void / cancelled (in full) / superseded / withdrawn", "previous X
  plan no longer applies", "old schedule deleted", "none of the X plan stands", "new plan
  (entirely)", "forget the lot".
* ``revoke_forms_r15``: "X are fine / ok now / again", "the X rule / thing / ban has been withdrawn
  / is scrapped / is off", "the X rule doesn't stand any more", "X freeze removed", "X can have a Y
  now", "It isn't true any longer that you can't X".
* ``condition_met_r15``: "X has given the go-ahead", "X has (now) read / seen / tested Y", "we hit 50
  RSVPs", "Jess has told us: lemon", "Flags are up ..., good to go", "I've just tested X again and
  it's fine", "Goods inspected at the warehouse".

Every function here is pure: the same sentence gives the same answer. Each pattern is guarded by
a set of words one of which it needs (speed only).
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..memory import families
from ..memory.families import family
from . import directives
from .directives_r14 import _about_task


F_LABEL_R15 = family("label_lead_r15", {"fresh11"})
F_REQUEST_R15 = family("request_forms_r15", {"fresh11"})
F_QUOTE_R15 = family("adopted_quote_r15", {"fresh11"})
F_REGISTER_R15 = family("register_leads_r15", {"fresh11"})
F_EMOJI_R15 = family("emoji_tail_r15", {"fresh11"})
F_ASIDE_R15 = family("reported_aside_r15", {"fresh11"})
F_APPROVAL_R15 = family("approval_forms_r15", {"fresh11"})
F_PERMIT_R15 = family("permission_forms_r15", {"fresh11"})
F_EVIDENCE_R15 = family("evidence_forms_r15", {"fresh11"})
F_DECISION_R15 = family("decision_forms_r15", {"fresh11"})
F_LIMIT_R15 = family("limit_forms_r15", {"fresh11"})
F_DUTY_R15 = family("duty_forms_r15", {"fresh11"})
F_RESET_R15 = family("reset_forms_r15", {"fresh11"})
F_REVOKE_R15 = family("revoke_forms_r15", {"fresh11"})
F_CONDITION_R15 = family("condition_met_r15", {"fresh11"})

_QUESTION = re.compile(r"\?\s*[\"')\]]*\s*$")


def _words(s: str) -> frozenset[str]:
    return directives._words(s.lower())


def _cap(s: str) -> str:
    s = s.strip()
    return s[:1].upper() + s[1:]


# -- emoji_tail_r15 + request grant + adopted quote: sentences joined ------------------------------
_NO_WORD = re.compile(r"^[^\w]*$")
#: a request for an action, as a question ("Could you go ahead and book X?", "Would you be OK to X?")
_REQUEST_Q = re.compile(r"^(?:could|would|will|can)\s+you\s+(?:please\s+|kindly\s+)?(?:go ahead and|proceed with|be ok(?:ay)? to|"
                        r"mind|handle|take care of|sort out|book|order|sign|pay|send|reply)\b[^?]{3,120}\?\s*$", re.I)
#: a short grant after such a request
_GRANT = re.compile(r"^(?:you have my (?:ok|okay|approval|blessing|go-ahead|sign-off|permission)|"
                    r"(?:it|this|that) has my (?:ok|okay|approval|blessing|go-ahead|sign-off)|"
                    r"i approve (?:the|this|that|your)\b|you(?:'re| are) (?:allowed|permitted|free|welcome) to\b)", re.I)
_OPEN_Q = "\"“'‘"
#: "<lead up to the quote> '<the quoted rule>' <an adopting sentence>"
_ADOPTED = re.compile(r"^(?P<lead>[^\"“‘]{0,120}?)(?:\"(?P<a>[^\"]{12,400}?)\"|“(?P<b>[^”]{12,400}?)”|"
                      r"(?<![\w])'(?P<c>.{12,400}?[.!?])'(?=\s|$)|‘(?P<d>[^’]{12,400}?)’)\s*[.,;]?\s*(?P<tail>.*)$", re.S)
_ADOPT_TAIL = re.compile(r"^(?:please\s+|kindly\s+)?(?:follow|apply|observe|respect|action|honour|honor|enforce|stick to|keep to|"
                         r"keep\b.{0,40}\bwithin|stay within|work within|book|get|file|plan)\b.{0,80}?"
                         r"\b(?:that|it|this|them|those|accordingly|before that|by then)\b|"
                         r"^(?:that|this)(?:'s| is)? (?:covers you|applies to you|now final|final|binding|our rule|the rule)\b|"
                         r"^(?:please\s+)?(?:book|plan|file|handle|arrange)\b.{0,40}\baccordingly\b|"
                         r"^(?:as my delegate|on my behalf),?\s+you may\b", re.I | re.S)
_FINDING = re.compile(r"\b(?:was|were|is|are|has been|have been)\s+(?:detected|found|recorded|measured|observed|noted|"
                      r"confirmed|identified|seen|present)\b", re.I)
_SOURCE_LEAD = re.compile(r"\b(?:report|survey|audit|inspection|assessment|findings|results?|minutes?|log)\b.{0,40}\b"
                          r"(?:states?|reads?|says?|notes?|records?|concludes?)\s*:?\s*$", re.I)
_RULE_MODAL = re.compile(r"\b(?:must|shall|may|should|will|can|cannot|never|always|only|don't|do not|not)\b", re.I)


def _quote(sentence: str) -> "re.Match[str] | None":
    if not any(q in sentence for q in _OPEN_Q):
        return None
    return _ADOPTED.match(sentence.strip())


def _inner(m: "re.Match[str]") -> str:
    return next(g for g in (m.group("a"), m.group("b"), m.group("c"), m.group("d")) if g is not None).strip()


def adopted_quote_r15(sentence: str) -> str | None:
    """The quoted rule of a message that adopts it (family ``adopted_quote_r15``): "From the Staff
    Handbook, s. 7.3: 'Every expense claim must ...' Please follow that when you file mine." ->
    "Every expense claim must ...". The tail after the quote must adopt it (follow / apply / stick
    to / keep within / action it, "book mine accordingly", "That covers you", "That's now final",
    "As my delegate, you may ..."). ``None`` otherwise: a rule quoted and left alone stays a report."""
    if not families.on(F_QUOTE_R15):
        return None
    m = _quote(sentence)
    tail = m.group("tail").strip() if m is not None else ""
    if not tail or _QUESTION.search(tail) or not _ADOPT_TAIL.match(tail):
        return None
    return _inner(m)


def quoted_finding_r15(sentence: str) -> bool:
    """A finding quoted from a report (family ``adopted_quote_r15``): "The surveyor's report, section
    5, states: 'Rising damp was detected in the rear wall ...'": a lead naming a report that states,
    and a quoted passive finding with no rule word in it, nothing after it."""
    if not families.on(F_QUOTE_R15):
        return False
    m = _quote(sentence)
    if m is None or m.group("tail").strip():
        return False
    inner = _inner(m)
    return bool(_SOURCE_LEAD.search(m.group("lead")) and _FINDING.search(inner) and not _RULE_MODAL.search(inner))


def merge_r15(text: str, sents: list[str]) -> list[str]:
    """Sentences joined to the one before (each result a verbatim span of ``text``): a fragment of
    emoji only (family ``emoji_tail_r15``), a grant after a request (``request_forms_r15``), and a
    whole message that quotes a rule and adopts it (``adopted_quote_r15``, one record)."""
    if len(sents) < 2:
        return sents
    whole = text.strip()
    if families.on(F_QUOTE_R15) and len(whole) <= 1000 and adopted_quote_r15(whole) is not None:
        return [whole]
    emoji = families.on(F_EMOJI_R15)
    grant = families.on(F_REQUEST_R15)
    out: list[str] = []
    pos = 0
    for s in sents:
        join = out and ((emoji and _NO_WORD.match(s) and len(s) <= 12)
                        or (grant and len(s) < 80 and _GRANT.match(s) and _REQUEST_Q.match(out[-1])))
        if join:
            start = text.rfind(out[-1], 0, pos)
            end = text.find(s, pos)
            if start >= 0 and end >= 0:
                out[-1] = text[start:end + len(s)]
                pos = end + len(s)
                continue
        out.append(s)
        found = text.find(s, pos)
        pos = found + len(s) if found >= 0 else pos
    return out


# -- reported_aside_r15 ------------------------------------------------------------------------
_ASIDE_R15 = re.compile(
    r"^(?:the|their|his|her|our|my|a|an)\s+(?:[\w'’-]+\s+){0,3}?(?:rules?|policy|policies|docs|documentation|guide|guidelines|"
    r"handbook|manual|terms|regulations|code)\s+(?:says?|states?|reads?|requires?|tells? you)\s+(?:that\s+)?[^;]{6,120}?"
    r"(?:,\s*which\s+(?:i|my|we|our|he|she|they|nobody|no one)\b|;\s*(?:we|i)\s+(?:don't|do not|never|no longer)\b"
    r"[^.;]*\b(?:though|anyway|anymore|any more)\b)", re.I)
_W_ASIDE_R15 = frozenset("rule rules policy policies docs documentation guide guidelines handbook manual terms regulations "
                         "code".split())


def reported_aside_r15(sentence: str) -> bool:
    """A rule reported from another's rules, with the speaker's aside after it (family
    ``reported_aside_r15``): small talk, no record."""
    if not families.on(F_ASIDE_R15) or "," not in sentence and ";" not in sentence:
        return False
    s = sentence.strip()
    if _words(s).isdisjoint(_W_ASIDE_R15):
        return False
    return bool(_ASIDE_R15.match(s))


# -- rewrites: label leads, register leads, requests --------------------------------------------
_W_LABEL = frozenset("""[cal] re handover runbook shift notes note comment review summary minute minutes ticket pr update
change changes fyi memo bulletin""".split())
_LABEL = re.compile(r"^(?:\[[a-z]{2,10}\]\s*)?(?P<label>(?:[^:\n]|:(?=\d))(?:[^:\n]|:(?=\d)){1,59}?)\s*:\s+(?=\S)", re.I)
_CAL = re.compile(r"^\[[a-z]{2,10}\]\s*", re.I)
_DASH_HEAD = re.compile(r"^[^—–]{3,60}?\s[—–]\s+(?=\S)")
_LABEL_CLAUSE = frozenset("""i i'm i've we we're we've you you're he she they it it's is are was were am be must should will would
can could may shall need needs have has had do does did don't said says told asked want wants""".split())
_SCHEDULE = re.compile(r"^(?:every|each|daily|weekdays|weekends|weekly|nightly|mornings|evenings|mon|tue|wed|thu|fri|sat|sun)\w*\b"
                       r"[\w:\s.,-]{0,30}$", re.I)
_NOT_VERB = frozenset("""i we you he she they it the a an my our your his her their this that these those there here
what when where who why how if so and but or no not yes yeah ok okay thanks thank love hope miss enjoy nice great good
is are was were be been one two all each every some any just only also really very""".split())


def _label_rest(s: str) -> tuple[str, str] | None:
    """``(label, rest)`` of a sentence opening with a label (see the module docstring)."""
    m = _LABEL.match(s)
    if m is None:
        c = _CAL.match(s)
        return ("", s[c.end():]) if c and len(s) - c.end() > 8 else None
    label = m.group("label")
    if not _words(label).isdisjoint(_LABEL_CLAUSE) or len(label.split()) > 8:
        return None
    rest = s[m.end():]
    return (label, rest) if len(rest.split()) >= 2 else None


def label_r15(sentence: str) -> str | None:
    """The sentence without its label (family ``label_lead_r15``), or None."""
    if not families.on(F_LABEL_R15):
        return None
    s = sentence.strip()
    if ":" not in s and "[" not in s and "—" not in s and "–" not in s:
        return None
    got = _label_rest(s)
    rest = got[1] if got else s
    d = _DASH_HEAD.match(rest)
    if d and (got or _CAL.match(s) or re.search(r"\d", rest[:d.end()])):
        rest = rest[d.end():]
    if rest == s or len(rest.split()) < 2:
        return None
    return _cap(rest)


def scheduled_duty_r15(sentence: str) -> bool:
    """A schedule label and an imperative (family ``label_lead_r15``): "Every Monday 08:30: rotate
    the on-call pager ...", "Daily 12:00: back up the shared drive."."""
    if not families.on(F_LABEL_R15) or ":" not in sentence:
        return False
    m = _LABEL.match(sentence.strip())
    if m is None or not _SCHEDULE.match(m.group("label")):
        return False
    first = sentence.strip()[m.end():].split()[0].lower().strip(",")
    return first.isalpha() and first not in _NOT_VERB and not first.endswith(("ed", "s"))


_REGISTER_LEAD = re.compile(r"^(?:kindly do the needful and|kindly note(?: that)?|please note(?: that)?|righto|yeah,? righto|"
                            r"mate|yeah,? nah|no worries|if it helps|for what it's worth|fwiw|for the record|if anyone asks|"
                            r"just so you know|sure enough|and there it is|since [^,]{3,60}|when i (?:checked|looked at|looked "
                            r"(?:at|through|in))\b[^,]{0,60}|as my delegate|this year|this season|this quarter|right|right then|"
                            r"(?:during|outside|throughout)\s+[^,]{3,40},|for this (?:account|customer|client|project|job|repo),)"
                            r"\s*[,:]?\s+(?=\w)", re.I)
_REGISTER_TAIL = re.compile(r",\s*(?:yeah|mate|eh|ok|k|thx|thanks)\s*[?!.]*\s*$", re.I)
_W_REGISTER = frozenset("""kindly please righto mate yeah worries if for fwiw just sure and since when as this""".split())
_REVERT = re.compile(r"\brevert\s+(?=with|back)", re.I)


def register_r15(sentence: str) -> str | None:
    """The sentence without a register's lead or tail (family ``register_leads_r15``), or None."""
    if not families.on(F_REGISTER_R15):
        return None
    s = sentence.strip()
    out = s
    for _ in range(2):
        m = _REGISTER_LEAD.match(out)
        if m and len(out) - m.end() >= 10:
            out = out[m.end():]
    out = _REGISTER_TAIL.sub(".", out)
    out = _REVERT.sub("reply ", out)
    if out == s:
        return None
    return _cap(out)


_MIND = re.compile(r"^(?:would|could|will)\s+you\s+(?:please\s+)?mind\s+(?P<ger>[a-z]+ing)\b(?P<rest>[^?]*)\?*\s*$", re.I)
_POSSIBLE = re.compile(r"^(?:would|will)\s+it\s+be\s+(?:possible|ok|okay)\s+(?:for you\s+)?to\s+(?P<rest>[^?]{6,})\?*\s*$", re.I)
_NOTE_THAT = re.compile(r"^(?:could|would|will|can)\s+you\s+(?:please\s+)?(?:note|record|log|add to the (?:file|notes|record|log)|"
                        r"make a note|note down|put (?:it )?on record)\s+that\s+(?P<rest>[^?]{6,})\?*\s*$", re.I)
_STOP = re.compile(r"^(?:could|would|will|can)\s+you\s+(?:please\s+)?(?P<rest>stop\s+[a-z]+ing\b[^?]*)\?*\s*$", re.I)
_W_REQUEST = frozenset("would could will can".split())
_GERUND_E = frozenset("shar sav us mak hav tak writ giv leav serv clos plac mov chang includ provid arriv stor scor "
                      "receiv continu driv pric rat quot issu rout schedul".split())


def _base(ger: str) -> str:
    stem = ger[:-3]
    if stem.lower() in _GERUND_E:
        return stem + "e"
    if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
        return stem[:-1]
    return stem


def request_r15(sentence: str) -> str | None:
    """The imperative a polite request stands for (family ``request_forms_r15``), or None."""
    if not families.on(F_REQUEST_R15):
        return None
    s = sentence.strip()
    if "?" not in s[-3:] or _words(s).isdisjoint(_W_REQUEST):
        return None
    if (m := _MIND.match(s)) is not None:
        return _cap(_base(m.group("ger")) + m.group("rest").rstrip() + ".")
    for pat in (_POSSIBLE, _NOTE_THAT, _STOP):
        if (m := pat.match(s)) is not None:
            return _cap(m.group("rest").rstrip() + ".")
    return None


_CUT_R15 = re.compile(r"\b(?:i'm|i am)\s+(?:saying|asking|telling you)\s*:\s*|"
                      r"\b(?:(?:we(?:'ve| have)\s+got|there's|there is|here's)\s+)?(?:a|the|our|one)\s+(?:new\s+)?rule(?:\s+now)?\s*:\s*|"
                      r";\s+(?=[a-z]+\s)|"
                      r",\s*so\s+(?=(?:yes|yeah|ok|okay|this year|this season|you(?:'ve| have)? got|you may|you can)\b)|"
                      r",?\s+and sure enough\s+|\band there it is:\s*|"
                      r"(?<=[a-z]):\s+(?=(?:the|my|our|your|their)\s+[\w'’-]+(?:\s+[\w'’-]+){0,2}\s+(?:shows?|reads?|says?)\b)", re.I)
_W_CUT = frozenset("saying asking telling so sure there the rule".split())


def clauses_r15(sentence: str) -> list[str]:
    """The clauses after a discourse marker (family ``register_leads_r15``): "..., which is why I'm
    saying: don't ...", "..., so yes, the trip is approved", "..., so this year you may ...", "...,
    and sure enough the log shows ...", "It's not true that X: the outbox shows ..."."""
    if not families.on(F_REGISTER_R15) or len(sentence) < 40 or (_words(sentence).isdisjoint(_W_CUT) and ";" not in sentence):
        return []
    out = []
    for m in _CUT_R15.finditer(sentence):
        rest = sentence[m.end():].strip()
        if len(rest.split()) >= 3:
            out.append(_cap(rest))
    return out


def rewrites_r15(sentence: str) -> list[str]:
    """The readings of a sentence the round-15 families give, each read by every rule: without a
    label, without a register's lead or tail, a request as its imperative, the clauses after a
    discourse marker. Each distinct from the sentence and from one another."""
    s = sentence.strip()
    out: list[str] = []

    def add(r: str | None) -> None:
        if r is not None and r != s and r not in out:
            out.append(r)

    add(label_r15(s))
    for base in [s, *out]:
        add(register_r15(base))
    for base in [s, *out]:
        add(request_r15(base))
    for base in [s, *out]:
        for c in clauses_r15(base):
            add(c)
            add(register_r15(c))
    return out


# -- the sentence's own classes ----------------------------------------------------------------
_APPROVAL_R15 = re.compile(
    r"^(?:(?:yep|yes|yeah|ok|okay|sure|fine|right)[,.!]?\s+)*(?:approved|accepted|signed off|authori[sz]ed|sanctioned)\b"
    r"[^\w]{0,6}\s*(?:please|go ahead|he|she|they|you|we|accept|order|book|tell|proceed|pay|send|it's|that's|put|add|confirm|"
    r"schedule|sign|buy|reply|let|get|pop|stick)\b|"
    r"^approving\s+(?:this|the|your)\s+(?:pr|change|patch|request|diff|mr|merge request|plan|quote|budget|spend|order)\b|"
    r"\b(?:the|this|that|your|our)\s+[^,.;?]{2,40}?\s+(?:is|'s)\s+a go\b|"
    r"^(?:it|this|that)\s+has\s+my\s+(?:sign-off|approval|blessing|ok|okay|go-ahead)\b|"
    r"\bgets?\s+(?:the\s+)?(?:thumbs up|nod|go-ahead|green light)\s+from\s+(?:me|us)\b|"
    r"\b(?:stands|is|are|has been|have been)\s+(?:duly\s+)?sanctioned\b|"
    r"^(?:so\s+)?(?:yes|yeah|ok|okay)[,.]?\s+(?:the|your|his|her|their|our)\s+[\w'’ -]{2,40}?\s+(?:is|are|has been)\s+approved\b|"
    r"^the\s+(?:board|committee|council|director|directors|ceo|panel|trustees|management|partners)\s+approves?\s+"
    r"(?:the|a|an|our|your|this)\b", re.I)
_W_APPROVAL_R15 = frozenset("approved accepted signed authorised authorized sanctioned approving go sign-off thumbs nod "
                            "go-ahead approves approve".split())
_PERMIT_R15 = re.compile(
    r"\byou(?:'ve|\s+have)?\s+got\s+(?:the\s+)?(?:green light|free rein|a free hand|carte blanche)\b|"
    r"\byou\s+have\s+(?:free rein|a free hand|carte blanche|my ok|my okay|my permission|my blessing)\b|"
    r"^(?:it's|it is)\s+not\s+(?:forbidden|prohibited|banned|against the rules)\s+(?:for you\s+)?to\s+\w|"
    r"^i\s+(?:wouldn't|would not|don't|do not)\s+mind\s+(?:at all\s+)?if\s+you\s+\w|"
    r"^you\s+are\s+(?:most|very|more than)\s+welcome\s+to\s+\w|"
    r"^no\s+(?:dramas|worries|problem|probs|bother)\s+if\s+you\s+(?:want|need|'d like|would like|decide)\s+to\s+\w", re.I)
_W_PERMIT_R15 = frozenset("got have not mind welcome dramas worries problem probs bother".split())
_EVIDENCE_R15 = re.compile(
    r"^(?:the|my|our|his|her|their|your)\s+(?:[\w'’.-]+\s+){0,3}?(?:shows?|reads?|read|gives?|lists?|records?|logged|"
    r"displays?)\s+(?!(?:us|me|you|them|him|her)\b)(?P<fact>.{4,160})$|^it\s+(?:shows|reads)\s+(?P<fact2>.{4,160})$|"
    r"^(?:the|my|our|his|her|their|your)\s+(?:[\w'’-]+\s+){0,3}?(?:is|was)\s+dated\s+(?P<date>.{3,40})$", re.I | re.S)
_W_EVIDENCE_R15 = frozenset("show shows read reads give gives list lists record records logged display displays dated".split())
_FACTUAL = re.compile(r"\d|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\b(?:january|february|march|april|may|june|july|"
                      r"august|september|october|november|december|overnight|since|pending|no|never|not)\b", re.I)
_NOT_FACT_R15 = re.compile(r"\b(?:if|would|might|maybe|perhaps|could|will|should|love|lovely|beautiful|amazing|happy|fun|"
                           r"cute|how much|what a|my (?:dog|cat|kids?|son|daughter|mum|dad|family|friends?))\b|!", re.I)
_DECISION_R15 = re.compile(
    r"^(?:we|i|the team|the board)\s*(?:'ve|\s+have)\s+(?:finally\s+)?(?:decided|finali[sz]ed|settled)\s+(?:that\s+|to\s+)?"
    r"(?:the|we|our|it|this|each|every|all|keep|go|move|stay|use|run|hire|drop|switch|make)\b|"
    r"^(?:we|i)(?:'ve|\s+have)\s+made\s+(?:our|my)\s+minds?\s+up\b[,:]?\s+\S|"
    r"\bhas\s+been\s+(?:chosen|picked|selected|decided)\s+by\s+the\b|"
    r"\bdecision\s+made\b|,\s*decided\s+(?:at|in|by)\s+(?:the\s+)?[\w-]+\s*\.?$|"
    r"\b(?:moves?|is moving)\s+to\s+\S+\s+permanently\b|"
    r"^(?:it's|it is)\s+not\s+undecided\s+any\s*more\b|"
    r"^the\s+answer\s+is\s+(?:yes|no)\b[,:]", re.I)
_W_DECISION_R15 = frozenset("decided finalised finalized settled made chosen picked selected decision moves moving undecided "
                            "answer".split())
_LIMIT_R15 = re.compile(
    r"^nothing\s+(?:above|over|more than|under|below|less than|beyond|past)\s+(?:[£$€]\s?\d|\d)|"
    r"^(?P<verb>[a-z]+)\s+[^,.]{2,50}?\s+only\s*[,;]\s*(?:don't|do not|no|never)\b|"
    r"^(?:one|two|three|four|five|\d+)\s+[\w-]+\s+per\s+[\w -]{2,30}?,?\s+(?:no more|max|maximum|tops|at most)\b|"
    r"^(?:[\w'’-]+\s+){1,5}(?:stay|stays|remain|remains)\s+(?:under|below|within)\s+\d+\s+\w+|"
    r"^(?:[\w'’-]+\s+){1,3}(?:is|are)\s+to\s+be\s+(?:kept|limited|restricted|confined)\s+to\b|"
    r"^(?:[\w'’-]+\s+){1,3}only\s+for\s+(?:flights|trips|journeys|orders|customers|bookings|staff|members|calls|meetings)\b|"
    r"\bmay\s+be\s+used\s+for\s+[\w'’ -]{2,40}?\s+only\b|"
    r"(?:^|,\s*)only\s+[\w'’ -]{2,30}?\s+(?:get|gets|are|is)\s+(?:booked|allowed|accepted|let|sent|approved|put|scheduled)\b|"
    r"^no\s+[\w-]+s\s+(?:in|on|during|to|for)\s+[^.]{3,60}?\b(?:pls|plz|please)\b", re.I)
_W_LIMIT_R15 = frozenset("nothing only per stay stays remain remains kept limited restricted confined no".split())
_DUTY_R15 = (
    ("obligation", "every_needs", re.compile(r"^(?:every|each)\s+(?:single\s+)?[\w-]+(?:\s+[\w-]+)?\s+(?:needs|requires|must|has to|should)\s+\w", re.I)),
    ("obligation", "never_fail", re.compile(r"^never\s+fail\s+to\s+\w", re.I)),
    ("obligation", "whenever_duty", re.compile(r"^(?:whenever|every time|each time|any time)\s+(?:you|we|someone|anyone|a customer)\s+[^,]{3,80},\s*"
                                               r"(?:always\s+)?(?!(?:i|we|you|he|she|they|it|the|a|that|this|just|let|feel|give me|call me|tell me|ask|shout|"
                                               r"text me|ping me|message me|hit me)\b)[a-z]+\s+\w", re.I)),
    ("constraint", "dont_ever", re.compile(r"^(?:don't|do not|dont)\s+ever\s+[a-z]+\s+(?:me|us|my|our|the|a|an|any)\b", re.I)),
    ("deadline", "within_time", re.compile(r"\b(?:have to|has to|must|need to|needs to|should)\s+(?:[\w'’.-]+\s+){1,8}?within\s+\d+\s*"
                                           r"(?:h|hrs?|hours?|days?|weeks?|minutes?|mins?)\b", re.I)),
    ("deadline", "not_later", re.compile(r"^not\s+(?:a day|one day|a minute|an hour|a week)\s+later\s+than\b", re.I)),
    ("deadline", "calendar_due", re.compile(r"^(?:\[[a-z]{2,10}\]\s*)?(?:mon|tue|wed|thu|fri|sat|sun)\w*\s+\d{1,2}\s+[a-z]{3,9},?\s+"
                                            r"\d{1,2}:\d{2}\s*[—–-]\s*.{3,80}\bdue\b", re.I)),
    ("prerequisite", "not_until", re.compile(r"\b(?:doesn't|does not|don't|do not|won't|will not)\s+get\s+[a-z]+(?:ed|en|t)\s+until\s+\w", re.I)),
    ("deadline", "have_by", re.compile(r"^(?:have|get)\s+.{3,60}?\s+(?:with me|to me|ready|done|over|in)\s+(?:before|by)\s+(?:the\s+)?\d", re.I)),
    ("obligation", "all_through", re.compile(r"^all\s+(?:[\w-]+\s+){1,3}(?:goes|go|gets|get|must go|has to go)\s+(?:through|past|via)\s+"
                                             r"(?:the|a|our|my)\b", re.I)),
    ("constraint", "clock_rule", re.compile(r"^(?:bedtime|curfew|lights out|check-?in|check-?out|kick-?off|opening time|closing time|"
                                            r"last orders)\s+is\s+(?:at\s+)?\d{1,2}(?::\d{2})?\s*(?:am|pm)\s*\.?$", re.I)),
    ("constraint", "dont_let", re.compile(r"^(?:don't|do not|never)\s+let\s+(?:the|my|our|any|a)\s+(?!(?:fear|doubt|haters?|past|world|"
                                          r"stress|negativity|bad|little|small|weather|rain|pressure)\b)[\w-]+\s+"
                                          r"(?:use|start|go|come|have|take|eat|stay|play|watch|drive|leave|out)\b"
                                          r"(?![^!?]*\b(?:you|down|stop|get to)\b)[^!?]{3,60}$", re.I)),
    ("constraint", "never_by", re.compile(r",\s*never\s+(?:by|via|in|on|with|through)\s+[\w-]+\s*\.?$", re.I)),
)
_W_DUTY_R15 = frozenset("every each never whenever time don't dont within not mon tue wed thu fri sat sun doesn't won't have "
                        "get all let bedtime curfew lights check-in checkin check-out kick-off opening closing last".split())
#: a standing imperative over every item: "<verb> (on to) every / all X"
_EVERY_IMPERATIVE = re.compile(r"^(?P<verb>[A-Z][a-z]+)(?:\s+(?:on|up|out|back|off)\s+to|\s+(?:on|up|out|back|off))?\s+"
                               r"(?:every|all|each)\s+(?!(?:the\s+)?(?:best|time|day|night|week|the way)\b)[\w-]+")
_NOT_IMPERATIVE = _NOT_VERB | frozenset("""hi hello hey wow sorry congrats congratulations welcome happy merry cheers bye
good best lol haha omg aww thx ty see catch talk appreciate like want wish need know try after before for with
from of at by in on above over under to despite thanks""".split())


def classify_r15(sentence: str) -> tuple[str, str] | None:
    """The round-15 classes that make a record of a sentence read as it is (``(kind, rule)``)."""
    s = sentence.strip()
    if not s:
        return None
    words = _words(s)
    question = bool(_QUESTION.search(s))
    if not question and families.on(F_APPROVAL_R15) and not words.isdisjoint(_W_APPROVAL_R15) and _APPROVAL_R15.search(s):
        return "approval", "approval_r15"
    if not question and families.on(F_PERMIT_R15) and not words.isdisjoint(_W_PERMIT_R15) and _PERMIT_R15.search(s):
        return "permission", "permission_r15"
    if families.on(F_EVIDENCE_R15) and not question and not words.isdisjoint(_W_EVIDENCE_R15):
        m = _EVIDENCE_R15.match(s)
        if m and _FACTUAL.search(m.group("fact") or m.group("fact2") or m.group("date") or "") and not _NOT_FACT_R15.search(s):
            return "evidence", "evidence_r15"
    if quoted_finding_r15(s):
        return "evidence", "quoted_finding"
    if not question and families.on(F_DECISION_R15) and not words.isdisjoint(_W_DECISION_R15) and _DECISION_R15.search(s):
        return "policy_state", "decision_r15"
    if not question and families.on(F_LIMIT_R15) and not words.isdisjoint(_W_LIMIT_R15):
        m = _LIMIT_R15.search(s)
        if m and (m.group("verb") is None or m.group("verb").lower() not in _NOT_IMPERATIVE):
            return "constraint", "limit_r15"
    if not question and families.on(F_DUTY_R15):
        if not words.isdisjoint(_W_DUTY_R15):
            for kind, rule, pat in _DUTY_R15:
                if pat.search(s) and (rule != "every_needs" or _about_task(s)):
                    return kind, rule  # "Every order needs ..." names a thing of the task; "Every cat needs a nap." does not
        m = _EVERY_IMPERATIVE.match(s)
        if m and m.group("verb").lower() not in _NOT_IMPERATIVE and not m.group("verb").lower().endswith(("ed", "ing")) \
                and not directives._PAST.search(s):
            return "obligation", "every_imperative"
    if scheduled_duty_r15(s):
        return "obligation", "scheduled_duty"
    return None


# -- reset_forms_r15 ---------------------------------------------------------------------------
_PLAN = r"(?:plans?|schedule|itinerary|arrangements|layouts|programme|program)"
_RESET_R15 = re.compile(
    r"\b(?:chuck|bin|ditch|scrap|tear up|tore|torn|throw out|throwing out|ignore|forget|reset|drop|rip up)\s+(?:all\s+)?"
    r"(?:the|that|our|this)\s+(?:whole\s+|entire\s+|previous\s+|old\s+)?(?:[\w'’-]+\s+){0,2}?" + _PLAN + r"\b|"
    r"\b(?:whole|entire|previous|old|earlier|prior|previously agreed|above)\s+(?:[\w'’-]+\s+){0,2}?" + _PLAN +
    r"(?:,[^,]{3,60},)?\s+(?:is|are|has been|have been)\s+(?:now\s+|hereby\s+)?(?:void|cancell?ed|withdrawn|superseded|deleted|"
    r"scrapped|off|dead|binned)\b|"
    r"^(?:the\s+)?[\w'’-]+\s+" + _PLAN + r",\s*and everything said about it(?: so far)?,\s*(?:is|are)\s+(?:superseded|void|withdrawn)\b|"
    r"\b(?:previous|old|earlier|prior)\s+(?:[\w'’-]+\s+){0,2}?" + _PLAN + r"\s+(?:no longer applies|no longer apply|doesn't apply|"
    r"deleted|scrapped)\b|"
    r"\bnone\s+of\s+the\s+(?:[\w'’-]+\s+){0,2}?plan\s+(?:stands|holds|applies)\b|"
    r"^new\s+plan\s+(?:entirely|altogether|completely)\b|\bforget\s+the\s+lot\b", re.I)
_W_RESET_R15 = frozenset("chuck bin ditch scrap tear tore torn throw throwing ignore forget reset drop rip whole entire previous "
                         "old earlier prior previously above none new everything".split())


def reset_r15(text: str) -> "re.Match[str] | None":
    """A reset of the plan in force (family ``reset_forms_r15``), or None; see the module docstring."""
    if not families.on(F_RESET_R15) or len(text) > 1000:
        return None
    if _words(text).isdisjoint(_W_RESET_R15):
        return None
    return _RESET_R15.search(text)


# -- revoke_forms_r15 --------------------------------------------------------------------------
_RULE_NOUN = r"(?:rule|thing|ban|freeze|requirement|restriction|limit|policy|cap|embargo)"
_LIFT_R15 = re.compile(r"^(?P<what>[\w'’ -]{3,40}?)\s+(?:are|is|r)\s+(?:fine|ok|okay|allowed|good)\s+(?:now|again)\b", re.I)
_REVOKE_R15 = re.compile(
    r"(?:^|,\s*so\s+)(?:the\s+)?(?P<what>[\w'’ -]{2,40}?\s+" + _RULE_NOUN + r")\s+(?:has been|have been|is|are)\s+(?:now\s+)?(?:withdrawn|"
    r"scrapped|removed|lifted|dropped|off|gone|cancell?ed|binned|ditched|rescinded)\b|"
    r"\b(?:the\s+)?(?P<what2>[\w'’ -]{2,40}?\s+" + _RULE_NOUN + r")\s+(?:doesn't|does not|no longer)\s+(?:stand|apply|hold)|"
    r"^(?P<what3>[\w'’ -]{2,40}?\s+" + _RULE_NOUN + r")\s+(?:removed|lifted|scrapped|dropped|gone|withdrawn)\s*[.!]?$", re.I)
_CAN_NOW = re.compile(r"^(?:the\s+)?(?P<who>[\w'’ -]{2,30}?)\s+can\s+(?:have|get|use|take|see|keep)\s+(?P<obj>[\w'’ -]{2,30}?)\s+now\b", re.I)
_NOT_TRUE = re.compile(r"^(?:it\s+)?(?:isn't|is not|'s not|it's not)\s+true\s+any\s*(?:longer|more)\s+that\s+(?:you|we)\s+"
                       r"(?:can't|cannot|mustn't|shouldn't|aren't allowed to|can not)\s+(?P<what>[^;,.]{3,60})", re.I)
_W_REVOKE_R15 = frozenset("fine ok okay allowed good withdrawn scrapped removed lifted dropped off gone cancelled canceled "
                          "binned ditched rescinded stand apply hold can true".split())


def withdrawn_r15(sentence: str) -> tuple[str, str] | None:
    """``(what, action)`` of a round-15 withdrawal (family ``revoke_forms_r15``): a ban lifted ("calls
    after 7 are fine now", "the cleaner can have a key now", "It isn't true any longer that you can't
    talk about the merger": ``lift``), a rule ended ("The QA sign-off rule is scrapped", "the
    after-dark rule doesn't stand any more", "Friday deploy freeze removed": ``revoke``). A label
    before it is read past ("Runbook change: ...", "Handover from Liz: ...")."""
    if not families.on(F_REVOKE_R15):
        return None
    s = sentence.strip()
    if families.on(F_REQUEST_R15) and (r := request_r15(s)) is not None and r.lower().startswith("stop "):
        return r[5:], "unrequire"  # "Would you stop copying my assistant on client emails?"
    if _words(s).isdisjoint(_W_REVOKE_R15) or _QUESTION.search(s):
        return None
    for cand in (s, label_r15(s)):
        if cand is None:
            continue
        if (m := _NOT_TRUE.match(cand)) is not None:
            return m.group("what"), "lift"
        if (m := _REVOKE_R15.search(cand)) is not None:
            return m.group("what") or m.group("what2") or m.group("what3"), "revoke"
        if (m := _LIFT_R15.match(cand)) is not None:
            return m.group("what"), "lift"
        if (m := _CAN_NOW.match(cand)) is not None:
            return f"{m.group('who')} {m.group('obj')}", "lift"
    return None


# -- condition_met_r15 -------------------------------------------------------------------------
_MET_R15 = re.compile(
    r"\bha(?:s|ve)\s+(?:now\s+|just\s+)?(?:given|gave)\s+(?:us\s+)?(?:the|their|his|her|its)\s+(?:go-ahead|green light|ok|okay|"
    r"nod|thumbs up|sign-off)\b|"
    r"\bhas\s+(?:now\s+|just\s+|finally\s+)?(?:read|seen|reviewed|checked|signed|tested|told us)\b|"
    r"^we\s+(?:hit|reached|passed|got to|made)\s+\d+\b|"
    r"\b(?:are|is)\s+(?:up|down|in|out|done|sorted)\b[^.]{0,40},\s*good to go\b|"
    r"\bi(?:'ve|\s+have)\s+(?:just\s+)?(?:re-?)?tested\b.{0,60}\b(?:it's|it is)\s+(?:fine|working|ok|okay|good)\b|"
    r"^[\w'’ -]{2,30}?\s+(?:inspected|checked|verified|certified|signed|tested)\s+(?:at|by|on|this|today|yesterday)\b", re.I)
_W_MET_R15 = frozenset("given gave read seen reviewed checked signed tested told hit reached passed made got good inspected "
                       "verified certified".split())


def condition_met_r15(sentence: str) -> bool:
    """An awaited thing reported done (family ``condition_met_r15``), see the module docstring."""
    if not families.on(F_CONDITION_R15):
        return False
    s = sentence.strip()
    if _words(s).isdisjoint(_W_MET_R15):
        return False
    return bool(_MET_R15.search(s))
