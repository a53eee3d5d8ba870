"""Round-16 phrasing classes of the rule constraint extractor (issue 20, point 10), from ``fresh12``.

``fresh12`` was written blind in round 15 and measured once (71.3% of its standing instructions with
the rules alone, 80.8% with the instruction model); it is the tuning set of round 16. Its misses
were read by class, and each class that generalises became one family here, registered with
``{"fresh12"}`` in :mod:`memfold.memory.families`, so ``bench/phrasing_retention.py --loso`` turns
them off for that set. The extractor (:mod:`memfold.window.constraints`) calls this module through
small hooks after the earlier rounds' rules have had their say: nothing here changes what those
rules find, except the near misses of :func:`reported_r16` (small talk the earlier rules read as a
rule).

The families (each rule is stated again where it is written):

* ``structured_r16``: a message that is a Markdown table (a header row, a ``|---|`` row, rows) or
  a YAML-like block (``key:`` then indented ``- name: value`` or ``name: value`` lines) is one
  record when a column header or the top key names the kind of what the rows say: "Allowed?"
  ("never ..." a prohibition, "yes ..." a permission), "Rule", "Due", "Only after", "Status"
  ("approved" an approval; "revoked" / "withdrawn" / "lifted" a withdrawal of the rule the row
  names), "Shows" / "evidence", "Decision(s)", "When" with "you" in a row (a duty), "approvals",
  "policy_changes" ("ban removed", "can be ... now": a ban lifted); "<x>_plan: REPLACED" resets
  the plan. The record is the whole message.
* ``contract_register_r16``: a clause of a contract or an amendment: its number ("Clause 8.1:",
  "Amendment 3(a):", "7.1(b)", a heading line "4.3 Reporting." then "(b)") adds nothing; "The
  Assistant" is you ("The Assistant may, at its discretion, extend ..." -> "You may extend ...");
  "X shall be delivered no later than <date>" is a deadline; "The Parties have agreed that X shall
  be Y" a decision; "the prohibition on X is withdrawn" lifts a ban on X; "X is revoked in its
  entirety and replaced by Y" resets the plan.
* ``verb_final_r16``: a learner's word order with the verb last, as German puts it: an object put
  first and taken up by "this" / "these" ("Customer complaints, these you must every time to me
  forward", "My calendar, this you may freely change", "The private phone number of me, this you
  must to nobody give"), a modal before its object ("You may the small invoices alone approve"),
  the subject and object before the modal ("Only in German you the newsletter must write"),
  "Please" before the object ("Please the notes always to everyone send", "please maximum five
  lines write"), "Decided we have: X", "the green version we have chosen", "On the photo one sees
  clearly, that X" (evidence), "The rule with the car park, this is not more valid" (a rule
  ended), "Lieferando you may again use" (a ban lifted). The modal gives the kind: "may" / "can"
  a permission, "must" / "need" a duty, with "nobody" / "never" / "not" a prohibition, with
  "only" / "maximum" a restriction.
* ``answer_lead_r16``: an answer to the assistant's own question reads as the answer: "You asked
  if / whether / how / which ... — <answer>" and "To your question (about X): <answer>", the
  answer without its "yes," / "no,"; an answer "only X" to "which X to <verb>" is "<Verb> only
  X" (a restriction), "it's X, we've booked it" to "which X we went for" is a decision.
* ``dialect_register_r16``: the leads, tails and words of Scots and Irish English and of radio and
  kitchen talk add nothing: "Aye,", "Ah sure,", "Sure look,", "Heard?", "Be advised,", "Copy,",
  "Negative on X —", "mind and"; ", so you will", ", so it is", ", so it does", ", aye?",
  ", heard?", ", over"; "dinnae" / "doesnae" / "cannae" (don't, doesn't, can't), "fae" (from),
  "aff" (off), "tae" (to), "noo" (now), "efter" (after), "ye" (you).
* ``authority_lead_r16``: a rule said in the second person present under a lead that names whose
  rule it is: "Per clinic protocol, <imperative>", "Table rule for you as co-GM: <imperative>",
  "Coach's orders: you log every ...", "House rule for the campaign: you never reveal ...",
  "Coach says: you do not post ...", "Chef says you can comp ...", "In my classroom you don't use
  ...", "As GM assistant, don't ever ...", "As our classroom helper, you can ...", "From tonight
  you flag every ...": "you <verb>" reads as the imperative, "you never / don't X" as "Never /
  Don't X", "you can / may X" as a permission.
* ``bare_rule_r16``: a short standalone rule with no verb of its own: "No <thing> before / after /
  until / at / on / in / during <something>." ("No TV before school.", "No fuel uplift at
  Stansted.", "No dessert until Jack has eaten his vegetables." a prerequisite); "Don't let
  anyone (but me) <verb> ...", "Don't let the <animal> in the <room>".
* ``reset_forms_r16``: "bin all of the X plan", "the (whole) X plan, this you can forget", "the X
  plan's off, the whole thing", "<someone> has binned the whole X", "X plan reset, the old one is
  gone", "is revoked in its entirety".
* ``revoke_forms_r16``: "<I'm> lifting the X ban", "that rule's gone / done", "I've given up on
  that rule", "forget the ban", "the X restriction" cancelled, "X are allowed from now on", "X
  are fine now" after a lead, "the no-X rule is withdrawn" (times in the name), "X's suspension
  is over".
* ``condition_met_r16``: an awaited thing reported done: "X handed in", "<someone> has cleared /
  tasted / checked X", "it's stopped <raining>", "they found the X", "X just hit <figure>", "X
  complete", "X is in!", "the X's grand".
* ``reported_r16``: small talk that reads like a rule: someone else's rule ("My colleague has a
  rule: no meetings before 10."), a sign's or a policy's rule with the speaker's aside ("The
  hotel's sign says guests must check out by 11, but they never enforce it."), a habit of the
  speaker's ("... — always confuses me"), a referee's or umpire's call ("The referee approved the
  goal after VAR"), and a message that quotes code and asks about it (a fenced block and a
  question).

Every function here is pure: the same sentence gives the same answer. Each pattern is guarded by
a set of words one of which it needs (speed only).
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..memory import families
from ..memory.families import family
from . import directives, directives_r15

F_STRUCTURED_R16 = family("structured_r16", {"fresh12"})
F_CONTRACT_R16 = family("contract_register_r16", {"fresh12"})
F_VERB_FINAL_R16 = family("verb_final_r16", {"fresh12"})
F_ANSWER_R16 = family("answer_lead_r16", {"fresh12"})
F_DIALECT_R16 = family("dialect_register_r16", {"fresh12"})
F_AUTHORITY_R16 = family("authority_lead_r16", {"fresh12"})
F_BARE_R16 = family("bare_rule_r16", {"fresh12"})
F_RESET_R16 = family("reset_forms_r16", {"fresh12"})
F_REVOKE_R16 = family("revoke_forms_r16", {"fresh12"})
F_CONDITION_R16 = family("condition_met_r16", {"fresh12"})
F_REPORTED_R16 = family("reported_r16", {"fresh12"})

_QUESTION = directives_r15._QUESTION
_words = directives_r15._words
_cap = directives_r15._cap


# -- structured_r16 ------------------------------------------------------------------------------
_TABLE_ROW = re.compile(r"^\s*\|(.+)\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
_YAML_TOP = re.compile(r"^(?P<key>[a-z][a-z0-9_]{2,40}):\s*(?P<val>[^\n]*)$", re.I)
_YAML_ITEM = re.compile(r"^\s+(?:-\s+)?(?P<name>[^:\n]{2,80}):\s*(?P<val>\S[^\n]{0,200})$")
_NEG_CELL = re.compile(r"^(?:never|no|not|don't|do not|forbidden|prohibited|banned)\b", re.I)
_YES_CELL = re.compile(r"^(?:yes|ok|okay|allowed|fine|permitted|sure)\b", re.I)
_APPROVED = re.compile(r"\b(?:approved|accepted|signed off|authori[sz]ed|granted)\b", re.I)
_ENDED = re.compile(r"\b(?:revoked|withdrawn|lifted|removed|scrapped|cancell?ed|dropped|gone|ended|void)\b", re.I)
_LIFTED = re.compile(r"\b(?:ban|prohibition|restriction)\s+(?:removed|lifted|dropped|gone|withdrawn)\b|"
                     r"\bcan\s+be\s+[a-z]+(?:ed|en|t)\s+now\b|\ballowed\s+now\b", re.I)
_REPLACED = re.compile(r"^[a-z_]*plan:\s*(?:replaced|reset|cancell?ed|void|scrapped|superseded)\b", re.I | re.M)


def _cells(line: str) -> list[str]:
    m = _TABLE_ROW.match(line)
    return [c.strip() for c in m.group(1).split("|")] if m else []


def _header_kind(header: str, cell: str, row: list[str]) -> tuple[str, str] | None:
    """``(kind, rule)`` of a table cell under ``header``, ``("withdraw", action)`` for a rule ended."""
    h = header.lower().strip(" ?")
    if h in ("allowed", "permitted", "ok", "okay", "allowed to"):
        if _NEG_CELL.match(cell):
            return "constraint", "table_rule"
        if _YES_CELL.match(cell):
            return "permission", "table_permission"
        return None
    if h in ("rule", "rules", "policy", "restriction", "limit"):
        return "constraint", "table_rule"
    if h in ("due", "deadline", "due by", "by", "due date"):
        return "deadline", "table_deadline"
    if h in ("only after", "after", "prerequisite", "requires", "needs", "only when", "blocked until", "not before"):
        return "prerequisite", "table_prerequisite"
    if h in ("status", "state", "decision status", "approval"):
        if _APPROVED.search(cell):
            return "approval", "table_approval"
        if _ENDED.search(cell):
            return "withdraw", "revoke"
        return None
    if h in ("shows", "evidence", "finding", "reading", "result", "says", "records"):
        return "evidence", "table_evidence"
    if h in ("decision", "decided", "choice", "outcome", "resolution"):
        return "policy_state", "table_decision"
    if h in ("when", "schedule", "frequency", "how often") and any(re.search(r"\b(?:you|assistant|bot)\b", c, re.I) for c in row):
        return "obligation", "table_duty"
    return None


_YAML_KINDS = {"approvals": "approval", "approved": "approval", "evidence": "evidence", "findings": "evidence",
               "decisions": "policy_state", "decided": "policy_state", "rules": "constraint", "deadlines": "deadline",
               "permissions": "permission", "duties": "obligation", "tasks": "obligation"}


def structured_r16(text: str) -> tuple[str, str, str] | None:
    """What a table or a YAML-like block says (family ``structured_r16``): ``("record", kind, rule)``
    (one record, the whole message), ``("withdraw", action, what)`` (a rule ended or a ban lifted,
    ``what`` naming it), ``("reset", "", "")`` (the plan replaced), or ``None``. A table needs a
    header row, a ``---`` row and a row; a block a top key and indented ``name: value`` lines."""
    if not families.on(F_STRUCTURED_R16) or "\n" not in text or len(text) > 1000:
        return None
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if _REPLACED.search(text):
        return "reset", "", ""
    rows = [i for i, ln in enumerate(lines) if _TABLE_ROW.match(ln)]
    rule = next((i for i, ln in enumerate(lines) if _TABLE_RULE.match(ln) and "|" in ln), None)
    if rule is not None and rule >= 1 and rule - 1 in rows and any(i > rule for i in rows):
        header = _cells(lines[rule - 1])
        data = [_cells(lines[i]) for i in rows if i > rule]
        for row in data:
            for j, cell in enumerate(row[1:], start=1):
                if j >= len(header) or not cell:
                    continue
                got = _header_kind(header[j], cell, row)
                if got is None:
                    continue
                if got[0] == "withdraw":
                    return "withdraw", got[1], row[0]
                return "record", got[0], got[1]
        return None
    top = _YAML_TOP.match(lines[0])
    if top is None or top.group("val").strip():
        return None
    items = [_YAML_ITEM.match(ln) for ln in lines[1:]]
    if not items or any(m is None for m in items):
        return None
    key = top.group("key").lower()
    if key in ("policy_changes", "changes", "rule_changes", "policy_updates"):
        for m in items:
            if _LIFTED.search(m.group("val")):
                return "withdraw", "lift", m.group("name")
            if _ENDED.search(m.group("val")):
                return "withdraw", "revoke", m.group("name")
        return None
    kind = _YAML_KINDS.get(key)
    if kind is None:
        return None
    if kind == "approval" and not any(_APPROVED.search(m.group("val")) for m in items):
        return None
    return "record", kind, "yaml_" + key


# -- dialect_register_r16 ----------------------------------------------------------------------
_DIALECT_WORDS = {"dinnae": "don't", "dinna": "don't", "doesnae": "doesn't", "cannae": "can't", "canna": "can't",
                  "wouldnae": "wouldn't", "isnae": "isn't", "willnae": "won't", "didnae": "didn't", "fae": "from",
                  "aff": "off", "tae": "to", "noo": "now", "efter": "after", "ye": "you", "yer": "your"}
_DIALECT_WORD = re.compile(r"\b(?:" + "|".join(_DIALECT_WORDS) + r")\b", re.I)
_DIALECT_LEAD = re.compile(r"^(?:(?:aye|ah sure|sure look|look|och|heard\??|yes chef|be advised|copy(?: that)?|roger(?: that)?|"
                           r"negative on [^—–-]{3,40}|mind and|mind)\s*[,:;.!?—–-]*\s+)+(?=\w)", re.I)
_DIALECT_TAIL = re.compile(r"(?:,\s*(?:so (?:you|it|he|she|they|we) (?:will|is|does|are|do|did|was|has|have)|aye|heard|over|"
                           r"over and out|yeah)\s*[?!.]*|[,\s]+over\s*[.!]?)\s*$", re.I)
_W_DIALECT = frozenset(list(_DIALECT_WORDS) + "aye ah sure look och heard be copy roger negative mind so over yes".split())


def dialect_r16(sentence: str) -> str | None:
    """See :func:`_dialect_r16` (remembered per sentence and family state: speed only)."""
    return _dialect_r16(sentence, families.off_key())


@lru_cache(maxsize=4096)
def _dialect_r16(sentence: str, _off: frozenset) -> str | None:
    """The sentence with a dialect's or a radio's leads, tails and words written plainly (family
    ``dialect_register_r16``), or None when nothing changes."""
    if not families.on(F_DIALECT_R16):
        return None
    s = sentence.strip()
    if _words(s).isdisjoint(_W_DIALECT):
        return None
    out = _DIALECT_WORD.sub(lambda m: _DIALECT_WORDS[m.group(0).lower()], s)
    m = _DIALECT_LEAD.match(out)
    if m and len(out) - m.end() >= 10:
        out = out[m.end():]
    out = _DIALECT_TAIL.sub(".", out)
    out = re.sub(r"\bmind and\s+", "", out, flags=re.I)
    out = _cap(out)
    if m and m.group(0).strip(" ,:;.!?—–-").lower().startswith(("negative on", "heard", "be advised", "copy", "roger")):
        out = _you_form(out) or out  # "Negative on weekend deploys — you do not push ...": the order given
    return None if out == s else out


# -- contract_register_r16 ---------------------------------------------------------------------
_CLAUSE_NO = re.compile(r"^(?:(?:clause|section|article|amendment|schedule|para(?:graph)?|§)\s*\d+(?:\.\d+)*(?:\s*\([a-z0-9]{1,3}\))?"
                        r"\s*[:.]?|\d+(?:\.\d+)+\s*(?:\([a-z0-9]{1,3}\))?|\d+(?:\.\d+)*\s*\([a-z0-9]{1,3}\)|\([a-z0-9]{1,3}\))\s+"
                        r"(?:[A-Z][a-z]+\.\s*\n\s*(?:\([a-z0-9]{1,3}\)\s+)?)?(?=\S)", re.I)
_HEADING_LINE = re.compile(r"^\d+(?:\.\d+)*\s+[A-Z][\w ]{2,40}\.?\s*\n\s*(?:\([a-z0-9]{1,3}\)\s+)?(?=\S)")
_ASSISTANT = re.compile(r"^the\s+(?:assistant|agent|bot|service provider|contractor)\b(?:\s*,\s*at\s+its\s+(?:sole\s+)?discretion\s*,)?",
                        re.I)
_DISCRETION = re.compile(r",\s*at\s+(?:its|their|your)\s+(?:sole\s+|own\s+)?discretion\s*,", re.I)
#: "(<clause number>) The Assistant may / must / shall ...": the modal gives the kind
_ASSISTANT_MODAL = re.compile(r"^(?:\S{1,12}\s+)?(?:\([a-z0-9]{1,3}\)\s+)?the\s+(?:assistant|agent|bot|service provider|contractor)\s+"
                              r"(?P<modal>may|must|shall|will|is to)\b(?P<rest>.{3,200})$", re.I | re.S)
_SHALL_BY = re.compile(r"\bshall\s+be\s+[a-z]+(?:ed|en|t)(?:\s+(?:over|in|out|up|back|across|to\s+\w+))?\s+(?:no later than|not later than|by|before|on or before)\s+(?:\d|the\s+\d|"
                       r"(?:mon|tues|wednes|thurs|fri|satur|sun)day)", re.I)
_AGREED = re.compile(r"^the\s+parties\s+(?:have\s+)?(?:agreed|agree|resolved|decided)\s+that\s+.{3,200}\bshall\b", re.I)
_W_CONTRACT = frozenset("clause section article amendment schedule para paragraph assistant agent bot shall parties".split())


def contract_r16(sentence: str) -> str | None:
    """See :func:`_contract_r16` (remembered per sentence and family state: speed only)."""
    return _contract_r16(sentence, families.off_key())


@lru_cache(maxsize=4096)
def _contract_r16(sentence: str, _off: frozenset) -> str | None:
    """The clause without its number, "The Assistant" read as "You" (family ``contract_register_r16``)."""
    if not families.on(F_CONTRACT_R16):
        return None
    s = sentence.strip()
    if not (s[:1].isdigit() or s[:1] == "(" or not _words(s[:40]).isdisjoint(_W_CONTRACT)):
        return None
    out = s
    m = _HEADING_LINE.match(out) or _CLAUSE_NO.match(out)
    if m:
        out = out[m.end():]
    a = _ASSISTANT.match(out)
    if a:
        out = "You" + out[a.end():]
        out = _DISCRETION.sub("", out)
    out = _cap(out)
    return None if out == s or len(out.split()) < 3 else out


def contract_class_r16(sentence: str) -> tuple[str, str] | None:
    """A contract clause's own kind: "X shall be delivered no later than <date>" (deadline), "The
    Parties have agreed that X shall be Y" (decision)."""
    if not families.on(F_CONTRACT_R16) or _words(sentence).isdisjoint(_W_CONTRACT):
        return None
    if _SHALL_BY.search(sentence):
        return "deadline", "shall_by"
    if (m := _ASSISTANT_MODAL.match(sentence.strip())) is not None:
        modal = m.group("modal").lower()
        if modal == "may":
            return ("constraint" if _NEGATIVE.search(m.group("rest")[:20]) else "permission"), "assistant_may"
        return ("constraint" if _NEGATIVE.search(m.group("rest")[:20]) else "obligation"), "assistant_shall"
    if _AGREED.search(sentence):
        return "policy_state", "parties_agreed"
    return None


# -- verb_final_r16 ----------------------------------------------------------------------------
_DET = r"(?:the|a|an|my|our|your|his|her|their|this|these|those|all|every|each|any|no)"
_TOPIC = re.compile(r"^(?P<obj>[^,]{3,60}),\s+(?:this|these|that|those|them|it)\s+(?P<who>you|one|we)\s+(?P<modal>must|may|can|should|"
                    r"need to|need not|have to|are allowed to)\s+(?P<rest>[^.?!]{2,100})", re.I)
_MODAL_OBJ = re.compile(r"\b(?:you|one)\s+(?P<modal>must|may|can|should)\s+(?:not\s+)?" + _DET + r"\s+(?P<rest>[^.?!]{3,100})", re.I)
_MODAL_LAST = re.compile(r"\byou\s+" + _DET + r"\s+[^,.?!]{2,80}?\s+(?P<modal>must|may|"
                         r"can|should)\s+(?P<verb>[a-z]+)\s*[.!]?\s*$", re.I)
_PLEASE_OBJ = re.compile(r"(?:^|,\s*)please\s+(?:" + _DET + r"|maximum|max|minimum|only|never|at most|no more than)\s+[^.?!]{3,120}?"
                         r"\s+(?P<verb>[a-z]+)\s*(?:[,.!]|$)", re.I)
_CHOSEN_LAST = re.compile(r"^(?:decided|agreed|chosen|settled|picked)\s+(?:we|i)\s+have\b\s*[:,]?\s+\S|"
                          r",\s+(?:the|a|our)\s+[^,.]{2,60}?\s+(?:we|i)\s+(?:have|'ve)\s+(?:chosen|picked|decided on|selected|"
                          r"agreed on)\s*[.!]?\s*$", re.I)
_ONE_SEES = re.compile(r"^(?:on|in)\s+the\s+(?:photo|picture|video|image|footage|screenshot|scan|recording|log|report|document)\s+"
                       r"(?:one|you|we)\s+(?:can\s+)?(?:sees?|see)\s+(?:clearly|plainly)?\s*,?\s*that\s+\S", re.I)
_NOT_MORE_VALID = re.compile(r"^(?:the\s+)?(?:rule|ban|restriction|limit|policy|thing)\s+(?:with|about|on|for|of)\s+(?P<what>[^,]{3,50}),\s*"
                             r"(?:this|that|it)\s+(?:is|are)\s+(?:not|no)\s+(?:more|longer)\s+(?:valid|true|in force|ok)\b", re.I)
_MAY_AGAIN = re.compile(r"^(?P<what>[^,]{2,40}?)\s+you\s+(?:may|can)\s+again\s+[a-z]+\b", re.I)
_NEGATIVE = re.compile(r"\b(?:nobody|no one|never|not|nothing|none|nowhere)\b", re.I)
_ONLY = re.compile(r"\b(?:only|maximum|max|at most|no more than|minimum|under|below)\b", re.I)
_W_VERB_FINAL = frozenset("this these that those them it must may can should please decided agreed chosen settled picked "
                          "photo picture video image footage screenshot scan recording log report document rule again".split())
_NOT_FINAL_VERB = frozenset("""it them this that me him her us you too also now then here there again today tomorrow always
never please thanks only alone""".split())


def _modal_kind(modal: str, text: str) -> str:
    m = modal.lower()
    if m in ("may", "can", "are allowed to", "need not"):
        return "permission"
    if _NEGATIVE.search(text):
        return "constraint"
    if _ONLY.search(text):
        return "constraint"
    return "obligation"


def verb_final_r16(sentence: str) -> tuple[str, str] | None:
    """``(kind, rule)`` of a learner's verb-last rule (family ``verb_final_r16``), see the module docstring."""
    if not families.on(F_VERB_FINAL_R16):
        return None
    s = sentence.strip()
    words = _words(s)
    if words.isdisjoint(_W_VERB_FINAL) or _QUESTION.search(s):
        return None
    if (m := _TOPIC.match(s)) is not None:
        if re.search(r"\bforget\b", m.group("rest"), re.I) and re.search(r"\bplan\b", m.group("obj"), re.I):
            return None  # a reset (reset_r16)
        return _modal_kind(m.group("modal"), m.group("rest")), "topicalised_modal"
    if (m := _MODAL_OBJ.search(s)) is not None and s.lower().startswith(("you ", "one ")):
        return _modal_kind(m.group("modal"), s), "modal_before_object"
    if (m := _MODAL_LAST.search(s)) is not None and m.group("verb").lower() not in _NOT_FINAL_VERB:
        return _modal_kind(m.group("modal"), s), "modal_last"
    if (m := _PLEASE_OBJ.search(s)) is not None and m.group("verb").lower() not in _NOT_FINAL_VERB \
            and not m.group("verb").lower().endswith(("ly", "ed", "ing")):
        return ("constraint" if _ONLY.search(s) or _NEGATIVE.search(s) else "obligation"), "please_verb_last"
    if _CHOSEN_LAST.search(s):
        return "policy_state", "chosen_last"
    if _ONE_SEES.match(s):
        return "evidence", "one_sees"
    return None


def withdrawn_verb_final_r16(sentence: str) -> tuple[str, str] | None:
    """``(what, action)``: "The rule with the car park, this is not more valid" (revoke), "Lieferando
    you may again use" (lift)."""
    if not families.on(F_VERB_FINAL_R16):
        return None
    s = sentence.strip()
    if (m := _NOT_MORE_VALID.match(s)) is not None:
        return m.group("what"), "revoke"
    if (m := _MAY_AGAIN.match(s)) is not None:
        return m.group("what"), "lift"
    return None


# -- answer_lead_r16 ---------------------------------------------------------------------------
_ANSWER = re.compile(r"^(?:you asked (?P<q>(?:if|whether|how|which|what|when|who|where|about)\b[^—–:;]{3,120}?)\s*(?:[—–:;]|\s-)\s*|"
                     r"(?:to|on|re:?|about) your question(?: (?P<q2>about\b[^:—–]{3,100}?))?\s*[:—–,]\s*)(?P<a>\S.{2,300})$", re.I | re.S)
_YES_NO = re.compile(r"^(?:(?:yes|yeah|yep|no|nope|nah|sure|ok|okay)\b[,.!]?\s*)+", re.I)
_TO_VERB = re.compile(r"\b(?:which|what)\s+[\w'’ -]{2,40}?\s+to\s+(?P<verb>[a-z]+)\b", re.I)
_WENT_FOR = re.compile(r"^(?:which|what)\b[^—–]{2,80}\b(?:went for|chose|picked|decided on|booked|go with|went with|settled on)\b", re.I)
_LIMIT_ANSWER = re.compile(r"^(?:keep\s+(?:it|them|that|each|the\s+\w+)\s+(?:under|below|within|to|at)|no more than|not more than|"
                           r"at most|max(?:imum)?|up to|under|below)\s+\S*\d", re.I)
_YES = re.compile(r"^(?:yes|yeah|yep|sure|of course)\b", re.I)
_ITS_X = re.compile(r"^(?:it's|it is|we're going with|we went with)\s+[^,.]{2,60}", re.I)


def answer_r16(sentence: str) -> list[str]:
    """See :func:`_answer_r16` (remembered per sentence and family state: speed only)."""
    return list(_answer_r16(sentence, families.off_key()))


@lru_cache(maxsize=4096)
def _answer_r16(sentence: str, _off: frozenset) -> tuple[str, ...]:
    """The readings of an answer to the assistant's question (family ``answer_lead_r16``): the answer
    without its "yes," / "no,", and "<Verb> only X" for an "only X" answer to "which X to <verb>"."""
    if not families.on(F_ANSWER_R16):
        return ()
    s = sentence.strip()
    low = s[:40].lower()
    if "asked" not in low and "question" not in low:
        return ()
    m = _ANSWER.match(s)
    if m is None:
        return ()
    q = m.group("q") or m.group("q2") or ""
    a = m.group("a").strip()
    out = []
    bare = _YES_NO.sub("", a).strip()
    if bare and len(bare.split()) >= 2:
        out.append(_cap(bare))
    if bare.lower().startswith("only ") and (v := _TO_VERB.search(q)) is not None:
        out.append(_cap(f"{v.group('verb')} {bare}"))
    return tuple(out)


def answer_class_r16(sentence: str) -> tuple[str, str] | None:
    """An answer that is a choice made: "You asked which venue we went for — it's the Old Mill, we've
    booked it." (a decision)."""
    if not families.on(F_ANSWER_R16) or "asked" not in sentence[:20].lower():
        return None
    m = _ANSWER.match(sentence.strip())
    if m is None or not m.group("q"):
        return None
    q, a = m.group("q"), m.group("a").strip()
    bare = _YES_NO.sub("", a).strip()
    if _WENT_FOR.match(q) and _ITS_X.match(bare):
        return "policy_state", "answer_choice"
    if re.match(r"^how\s+(?:much|many|long|far|often|big|late)\b", q, re.I) and _LIMIT_ANSWER.match(bare):
        return "constraint", "answer_limit"  # "You asked how much you can spend — keep it under €40."
    if re.match(r"^(?:if|whether)\s+(?:you|i)\s+(?:can|could|may|might|should)\b", q, re.I) and _YES.match(a) \
            and re.match(r"^(?:you\s+(?:can|may)|go ahead|feel free|sure|please do|do)\b", bare, re.I):
        return "permission", "answer_yes"  # "You asked if you can reply to him — yes, you can, go ahead ..."
    return None


# -- authority_lead_r16 ------------------------------------------------------------------------
_ROLE = (r"(?:chef|coach|the coach|head chef|the boss|boss|management|the manager|the gm|gm|the captain|captain|the skipper|"
         r"the teacher|the head|the director|legal|hr|ops|the client|the doctor|matron|sarge|the sergeant|the landlord|the owner)")
_AUTH_LEAD = re.compile(
    r"^(?:per\s+(?:the\s+)?(?:[\w'’-]+\s+){0,2}(?:protocol|policy|rules?|guidelines|procedure|sop|handbook|contract|orders)\s*,\s*|"
    r"(?:[\w'’-]+\s+){0,3}(?:rule|rules|orders|instructions|policy|protocol|standing order)(?:\s+for\s+[^:.?!]{2,40}?)?\s*:\s*|"
    + _ROLE + r"(?:'s)?\s+(?:says|said|wants|orders)\s*:?\s*(?=you\b)|"
    r"in\s+(?:my|our|this|the)\s+(?:classroom|class|house|home|kitchen|office|shop|team|department|ward|clinic|restaurant|car|studio)"
    r"\s*,?\s*(?=you\b)|"
    r"as\s+(?:my|our|the)?\s*[\w'’ -]{2,30}?\s*(?:assistant|helper|delegate|deputy|co-gm|gm|second|stand-in)\s*,\s*|"
    r"from\s+(?:tonight|today|now on|this week|tomorrow|monday|next week)\s*,?\s*(?=you\b)|"
    r"(?:while|when|whenever)\s+i(?:'m| am)\s+(?:out|away|off|gone|on leave|travelling|abroad)(?:\s+[\w ]{2,20}?)?\s*,?\s*(?=you\b))", re.I)
_YOU_VERB = re.compile(r"^you\s+(?P<neg>never|don't|do not|dont|always|must|can|may|are allowed to|are to|will|need to|have to)?\s*(?P<rest>\S.*)$", re.I | re.S)
_W_AUTHORITY = frozenset("while when whenever per rule rules orders instructions policy protocol order in as from chef coach boss management manager "
                         "gm captain skipper teacher head director legal hr ops client doctor matron sarge sergeant landlord owner".split())
_NOT_YOU_VERB = frozenset("""know see think guess feel look are were have had need want like love hate get got mean said say
could would should might ever only just really also""".split())


def _you_form(rest: str) -> str | None:
    """A rule said as "you <verb> ..." as its imperative (see :func:`authority_r16`), or None."""
    y = _YOU_VERB.match(rest)
    if y is None:
        return None
    neg, body = (y.group("neg") or "").lower(), y.group("rest")
    first = body.split()[0].lower().strip(",")
    if neg in ("can", "may", "are allowed to"):
        return _cap(rest)
    if first in _NOT_YOU_VERB or first.endswith(("ed", "ing")):
        return None  # "you never know ...", "you always said ..."
    if neg in ("never", "always"):
        return _cap(f"{neg} {body}")
    if neg in ("don't", "do not", "dont"):
        return _cap(f"don't {body}")
    return _cap(body)


def _authority_rest(sentence: str) -> str | None:
    """What follows a lead of authority (:data:`_AUTH_LEAD`), at least three words, or None."""
    if not families.on(F_AUTHORITY_R16):
        return None
    s = sentence.strip()
    if _words(s[:60]).isdisjoint(_W_AUTHORITY):
        return None
    m = _AUTH_LEAD.match(s)
    rest = s[m.end():].strip() if m else ""
    return rest if len(rest.split()) >= 3 else None


def authority_class_r16(sentence: str) -> tuple[str, str] | None:
    """``(kind, rule)`` of a rule under a lead of authority (family ``authority_lead_r16``): the lead
    says the rest is a rule, so an imperative of any verb is a duty ("Table rule for you as co-GM:
    roll initiative openly ..."), "you can / may X" a permission ("As our classroom helper, you can
    award house points ...")."""
    if _QUESTION.search(sentence) or (rest := _authority_rest(sentence)) is None:
        return None
    if re.match(r"you\s+(?:can|may|are allowed to|are free to)\s+[a-z]+", rest, re.I):
        return "permission", "authority_permission"
    form = _you_form(rest) or rest
    first = form.split()[0].lower().strip(",")
    if first in ("never", "don't", "no"):
        return "constraint", "authority_rule"
    if first == "always" or (first.isalpha() and first not in directives_r15._NOT_IMPERATIVE
                             and not first.endswith(("ed", "ing", "s", "ly"))):
        return "obligation", "authority_rule"
    return None


def authority_r16(sentence: str) -> str | None:
    """The rule under a lead naming whose rule it is, as an imperative (family ``authority_lead_r16``):
    "Coach's orders: you log every ..." -> "Log every ...", "House rule: you never reveal X" ->
    "Never reveal X", "In my classroom you don't use X" -> "Don't use X", "Chef says you can X" ->
    "You can X"; the lead alone off when an imperative follows ("Per clinic protocol, always ...")."""
    if (rest := _authority_rest(sentence)) is None:
        return None
    if _YOU_VERB.match(rest) is None:
        return _cap(rest)
    return _you_form(rest)


# -- bare_rule_r16 -----------------------------------------------------------------------------
_BARE_NO = re.compile(r"^no\s+(?!(?:problem|problems|worries|way|idea|doubt|wonder|rush|pressure|need|kidding|clue|matter|offen[cs]e|"
                      r"one|thanks|thank|big deal|biggie|sweat|joke|shame|surprise|luck|chance|time|reason|comment|kidding|lie|"
                      r"questions?|fair|harm|love|fun|bother|dramas|stress|hard feelings|excuses)\b)(?P<thing>[a-z][\w'’-]*(?:\s+[\w'’-]+){0,3}?)"
                      r"\s+(?P<prep>before|after|until|till|at|on|in|during|inside|near|past)\s+(?P<rest>[^,;!?]{2,60})\.?$", re.I)
_DONT_LET = re.compile(r"^(?:don't|do not|never)\s+let\s+(?:(?:anyone|anybody|no one|nobody)(?:\s+(?:but|except|other than)\s+[\w'’ ]{2,30}?)?\s+"
                       r"[a-z]+|the\s+(?:dog|dogs|cat|cats|kids|children|puppy|kitten|boys|girls|guests|visitors|public|players|team)\s+"
                       r"(?:in|into|near|on|onto|upstairs|out|up)\b)"
                       r"(?![^!?]*\b(?:you|your|yourself|down|stop|get to|tell you)\b)[^!?]{2,60}\.?$", re.I)
_W_BARE = frozenset("no don't do never".split())


def bare_rule_r16(sentence: str) -> tuple[str, str] | None:
    """``(kind, rule)`` of a short rule with no verb of its own (family ``bare_rule_r16``)."""
    if not families.on(F_BARE_R16):
        return None
    s = sentence.strip()
    if len(s) > 90 or _words(s).isdisjoint(_W_BARE):
        return None
    m = _BARE_NO.match(s)
    if m is not None:
        if m.group("thing").lower().endswith(("ly",)):
            return None
        return ("prerequisite" if m.group("prep").lower() in ("until", "till") else "constraint"), "bare_no"
    if _DONT_LET.match(s):
        return "constraint", "dont_let_anyone"
    return None


# -- reset_forms_r16 ---------------------------------------------------------------------------
_PLAN = r"(?:plans?|schedule|itinerary|arrangements|programme|program|menu|rota|budget)"
_RESET_R16 = re.compile(
    r"\b(?:bin|chuck|ditch|scrap|forget|drop|ignore|tear up|rip up|throw out)\s+all\s+of\s+(?:the|that|our|this)\s+(?:[\w'’-]+\s+){0,2}?"
    + _PLAN + r"\b|"
    r"\b" + _PLAN + r"\b[^,.]{0,40},\s*(?:this|that|it)\s+(?:you|we)\s+(?:can|may|must|should)\s+forget\b|"
    r"\b" + _PLAN + r"(?:'s|\s+is|\s+has\s+been)\s+(?:off|binned|scrapped|dead|cancell?ed|gone)\s*,\s*(?:the\s+whole\s+thing|all\s+of\s+it|"
    r"completely|entirely|the\s+lot)\b|"
    r"\b(?:has|'s|have|'ve)\s+(?:binned|scrapped|ditched|torn up|ripped up|cancell?ed|thrown out)\s+the\s+(?:whole|entire)\s+"
    r"(?:[\w'’-]+\s+){0,2}?" + _PLAN + r"\b|"
    r"\b" + _PLAN + r"\s+reset\b[^.]{0,40}?\bthe\s+old\s+one\s+is\s+(?:gone|dead|void|off)\b|"
    r"\b(?:is|are)\s+(?:hereby\s+)?revoked\s+in\s+(?:its|their)\s+entirety\b", re.I)
_W_RESET_R16 = frozenset("bin chuck ditch scrap forget drop ignore tear rip throw off binned scrapped dead cancelled canceled "
                         "gone ditched torn ripped thrown reset revoked".split())


def reset_r16(text: str) -> "re.Match[str] | None":
    """A reset of the plan in force (family ``reset_forms_r16``), or None; see the module docstring.
    A dialect's words are read plainly first ("The caravan plan's aff, the whole thing.")."""
    if not families.on(F_RESET_R16) or len(text) > 1000:
        return None
    plain = dialect_r16(text) if families.on(F_DIALECT_R16) and "aff" in text.lower() else None
    t = plain or text
    if _words(t).isdisjoint(_W_RESET_R16):
        return None
    return _RESET_R16.search(t)


# -- revoke_forms_r16 --------------------------------------------------------------------------
_RULE_NOUN = r"(?:rule|ban|restriction|prohibition|requirement|limit|policy|embargo|suspension|thing)"
_REVOKE_R16 = (
    ("lift", re.compile(r"\b(?:i'm|i am|we're|we are)\s+(?:now\s+)?(?:lifting|dropping|scrapping|removing|ending|cancell?ing)\s+the\s+"
                        r"(?P<what>[\w'’ -]{2,40}?)\s+(?:ban|prohibition|restriction|embargo)\b", re.I)),
    ("lift", re.compile(r"\bthe\s+(?:ban|prohibition|restriction|embargo)\s+(?:on|of)\s+(?P<what>[\w'’ -]{2,50}?)\s+(?:is|has been)\s+"
                        r"(?:now\s+)?(?:withdrawn|lifted|removed|revoked|scrapped|cancell?ed|dropped|rescinded)\b", re.I)),
    ("lift", re.compile(r"^(?:cancel|drop|lift|scrap|remove|end)\s+the\s+(?P<what>[\w'’ -]{2,40}?)\s+(?:ban|restriction|prohibition|embargo)\b",
                        re.I)),
    ("lift", re.compile(r"^(?P<what>[\w'’ -]{3,40}?)\s+(?:are|is)\s+(?:allowed|permitted|fine|ok|okay)\s+(?:from now on|now|again|"
                        r"from today)\b", re.I)),
    ("lift", re.compile(r"^(?:let|you can let)\s+(?P<what>[\w'’ -]{3,50}?)\s*,\s*i(?:'ve| have)\s+given\s+up\s+on\s+(?:that|the|this)\s+"
                        r"(?:rule|ban)\b", re.I)),
    ("lift", re.compile(r"^(?P<what>(?:you|ye)\s+can\s+[\w'’ -]{3,50}?)\s+(?:now|again)\b[^.]*\.\s*that\s+(?:rule|ban)(?:'s|\s+is)\s+"
                        r"(?:done|gone|over|off|finished)\b", re.I | re.S)),
    ("revoke", re.compile(r"\bthe\s+(?P<what>no-[\w:'’-]+)\s+(?:rule|policy|ban)\s+(?:is|has been)\s+(?:now\s+)?(?:withdrawn|lifted|"
                          r"scrapped|removed|dropped|cancell?ed|gone|off)\b", re.I)),
    ("revoke", re.compile(r"^(?P<what>[\w'’ -]{2,30}?)(?:'s|\s+is)\s+(?:suspension|ban)\s+is\s+over\b", re.I)),
    ("revoke", re.compile(r"^(?:no,?\s+)?that\s+(?:rule|ban)(?:'s|\s+is|\s+has)\s+(?:gone|done|over|off|finished|been dropped)\b"
                          r"(?P<what>[^.]{0,60})", re.I)),
    ("lift", re.compile(r"^(?:yes,?\s+)?(?P<what>[\w'’ -]{2,30}?)\s+(?:is|are)\s+fine\s+again\s*,\s*forget\s+the\s+ban\b", re.I)),
)
_W_REVOKE_R16 = frozenset("lifting dropping scrapping removing ending cancelling canceling ban prohibition restriction embargo "
                          "cancel drop lift scrap remove end allowed permitted fine ok okay given rule suspension that".split())


def withdrawn_r16(sentence: str) -> tuple[str, str] | None:
    """``(what, action)`` of a round-16 withdrawal (family ``revoke_forms_r16``; the verb-last forms of
    ``verb_final_r16``), read also after an answer's lead and in a dialect's plain words."""
    s = sentence.strip()
    cands = [s]
    if (d := dialect_r16(s)) is not None:
        cands.append(d)
    for c in list(cands):
        cands.extend(answer_r16(c))
        if (c2 := contract_r16(c)) is not None:
            cands.append(c2)
    for c in cands:
        if (v := withdrawn_verb_final_r16(c)) is not None:
            return v
        if not families.on(F_REVOKE_R16) or _words(c).isdisjoint(_W_REVOKE_R16) or _QUESTION.search(c):
            continue
        for action, pat in _REVOKE_R16:
            if (m := pat.search(c)) is not None:
                what = (m.group("what") or "").strip()
                if not what and c is not s:
                    what = s  # "You asked if ... — no, that rule's gone": the question names the rule
                if what.lower().startswith("no-"):
                    what = what[3:].replace("-", " ")
                return what or s, action
    return None


def readings_r16(sentence: str) -> list[str]:
    """The round-16 readings of a sentence to try the earlier withdrawal forms on (an answer without
    its lead, a dialect's words, a clause without its number)."""
    s = sentence.strip()
    out: list[str] = []
    for r in (dialect_r16(s), contract_r16(s), *answer_r16(s)):  # (not a lead of authority: "From now on you can skip X" is a permission)
        if r is not None and r != s and r not in out:
            out.append(r)
    return out


# -- condition_met_r16 -------------------------------------------------------------------------
_MET_R16 = re.compile(
    r"\b(?:handed|turned|brought|sent|paid|signed)\s+in\b(?:\s+(?:today|yesterday|this morning|now|at last))?|"
    r"\b(?:has|'s|have|'ve)\s+(?:just\s+|now\s+|finally\s+)?(?:cleared|tasted|checked|finished|eaten|signed|passed|stopped|"
    r"found|returned|arrived|landed|cleared)\b|"
    r"\b(?:it's|it has|it is)\s+(?:just\s+)?stopped\s+[a-z]+ing\b|"
    r"^(?:they|we|he|she|the\s+[\w'’-]+)\s+(?:found|finished|passed|got|reached|signed|returned)\s+the\s+\w|"
    r"\bjust\s+(?:hit|reached|passed|crossed|topped)\s+\S*\d|"
    r"^[\w'’ /-]{2,30}?\s+(?:complete|completed|done|finished|sorted)\s*(?:[,.!]|$)|"
    r"^(?:the\s+)?[\w'’ -]{2,30}?\s+(?:is|are|'s)\s+in\s*!+\s*$|"
    r"\bthe\s+[\w'’-]+(?:'s|\s+is)\s+(?:grand|sound|fine|solid|good)\s*[.!]?\s*$", re.I)
_W_MET_R16 = frozenset("handed turned brought sent paid signed has have it's it they we he she the just complete completed done "
                       "finished sorted in grand sound fine solid good".split())


def condition_met_r16(sentence: str) -> bool:
    """An awaited thing reported done (family ``condition_met_r16``), see the module docstring."""
    if not families.on(F_CONDITION_R16):
        return False
    s = sentence.strip()
    if _words(s).isdisjoint(_W_MET_R16):
        return False
    plain = dialect_r16(s) or s
    return bool(_MET_R16.search(plain))


# -- reported_r16 ------------------------------------------------------------------------------
_OTHERS_RULE = re.compile(r"^(?:my|his|her|their|our)\s+(?:[\w'’-]+\s+){0,4}?(?:has|had|have)\s+(?:a|this|one)\s+(?:strict\s+|simple\s+|"
                          r"golden\s+|house\s+)?rule\b", re.I)
_SIGN_ASIDE = re.compile(r"^(?:the|their|his|her|a)\s+(?:[\w'’-]+\s+){0,3}?(?:sign|notice|poster|website|policy|rules?|terms|menu)\s+"
                         r"(?:says?|states?|reads?)\s+[^,;]{6,120}?,\s*but\s+(?:they|nobody|no one|i|we|he|she|it)\s+(?:never|don't|do not|"
                         r"doesn't|didn't|rarely|hardly|ignore)\b", re.I)
_HABIT_TAIL = re.compile(r"[—–-]\s*(?:that\s+)?always\s+(?:confuses|gets|throws|trips|catches|annoys|baffles|amazes|surprises)\s+me\b", re.I)
_REFEREE = re.compile(r"^the\s+(?:referee|ref|umpire|var|linesman|judges?|officials?)\s+(?:has\s+)?(?:approved|allowed|disallowed|"
                      r"given|awarded|overturned|confirmed)\b", re.I)
_W_REPORTED = frozenset("rule sign notice poster website policy rules terms menu always referee ref umpire var linesman "
                        "judge judges officials official".split())


def reported_r16(sentence: str) -> bool:
    """Small talk that reads like a rule (family ``reported_r16``): no record."""
    if not families.on(F_REPORTED_R16):
        return False
    s = sentence.strip()
    if _words(s).isdisjoint(_W_REPORTED):
        return False
    return bool(_OTHERS_RULE.match(s) or _SIGN_ASIDE.match(s) or _HABIT_TAIL.search(s) or _REFEREE.match(s))


_FENCE = re.compile(r"```.*?```", re.S)


def code_question_r16(text: str) -> bool:
    """A message that quotes code in a fenced block and asks about it (family ``reported_r16``): the
    rules in the code are not the user's."""
    if not families.on(F_REPORTED_R16) or "```" not in text:
        return False
    rest = _FENCE.sub(" ", text).strip()
    return rest != text.strip() and bool(_QUESTION.search(rest))


# -- the sentence's own classes and readings ---------------------------------------------------
# -- forms_r16: the other shapes of fresh12's misses, each of one family --------------------------
_FORMS_R16 = (
    # bare_rule_r16
    (F_BARE_R16, "deadline", "needs_doing_by", re.compile(
        r"\b(?:needs?|want|wants)\s+[a-z]+ing\s+(?:by|before|no later than)\s+(?:the\s+)?(?:\d|end of|(?:mon|tues|wednes|thurs|fri|satur|sun)day)",
        re.I)),
    (F_BARE_R16, "constraint", "only_verb", re.compile(
        r"^only\s+(?:let|give|use|send|book|allow|serve|buy|order|pay|accept|take|post|show|share|offer)\s+(?:the|a|an|my|our|them|him|her|us|"
        r"people|customers|guests|kids|children|staff)\b", re.I)),
    (F_BARE_R16, "constraint", "one_per", re.compile(
        r"^(?:just|only)\s+(?:the\s+)?(?:one|two|three|\d+)\s+[\w-]+(?:\s+[\w-]+)?\s+(?:per|a|each)\s+(?:person|head|day|week|table|"
        r"customer|guest|kid|child|month|order|visit)\b", re.I)),
    # approval_forms (fresh12): "X approved, let Y ...", "has signed off X — go ahead and ...", "that's approved — get ..."
    (F_AUTHORITY_R16, "approval", "approved_then_do", re.compile(
        r"^(?:[\w'’£$€.-]+\s+){0,5}(?:approved|signed off|okayed|authori[sz]ed)\s*[,;—–-]+\s*(?:let|go ahead|book|you can|please|get|"
        r"put|tell|send|order|pay|add)\b|"
        r"\bha(?:s|ve)\s+(?:signed off|approved|okayed|authori[sz]ed)\b[^.?!]{2,80}?[—–,;]\s*(?:go ahead|please|you can|book)\b|"
        r"^(?:that's|that is|it's|it is|this is)\s+(?:approved|signed off)\s*[—–,;-]+\s*(?:get|go ahead|book|please|you can|put|send|"
        r"order)\b", re.I)),
    (F_AUTHORITY_R16, "permission", "say_so", re.compile(
        r"\byou(?:'ve| have)\s+(?:got\s+)?my\s+(?:say-so|blessing|permission|ok|okay|go-ahead|authority)\s+to\s+[a-z]+", re.I)),
    (F_AUTHORITY_R16, "policy_state", "decision_label", re.compile(
        r"^(?:[\w'’-]+\s+){0,2}(?:decision|ruling)\s*(?:,\s*(?:copy|over|noted))?\s*:\s+(?:the|we|our|all|it|from)\b", re.I)),
    # evidence: a document or record that shows / says a thing happened
    (F_CONTRACT_R16, "evidence", "record_shows", re.compile(
        r"^(?:the\s+|an?\s+|my\s+|our\s+)?(?:[\w'’-]+\s+){0,2}(?:exhibit|photo|letter|page|log|receipt|statement|report|screenshot|"
        r"email|invoice|footage|meter|tracker|record|certificate|notice|scan|printout|label)\b[^.?!]{0,60}?\s+(?:shows|says|states|"
        r"confirms|proves)\s+(?:that\s+)?(?:the|a|an|it|its|our|your|their|his|her)\s+[^.?!]{0,60}?"
        r"\b(?:was|were|'s been|has been|have been|had been|'s|has|have)\s+(?:[a-z]+ly\s+)?[a-z]{3,}(?:ed|en|t|n)\b", re.I)),
)
_W_FORMS_R16 = frozenset("""need needs want wants only just approved signed okayed authorised authorized that's that it's it this
have you've decision ruling exhibit photo letter page log receipt statement report screenshot email invoice footage meter
tracker record certificate notice scan printout label""".split())


def forms_r16(sentence: str) -> tuple[str, str] | None:
    """``(kind, rule)`` of the shapes of :data:`_FORMS_R16` (the family named beside each)."""
    s = sentence.strip()
    if _QUESTION.search(s) or _words(s).isdisjoint(_W_FORMS_R16):
        return None
    for fam, kind, rule, pat in _FORMS_R16:
        if families.on(fam) and pat.search(s):
            return kind, rule
    return None


def classify_r16(sentence: str) -> tuple[str, str] | None:
    """The round-16 classes that make a record of a sentence read as it is (``(kind, rule)``)."""
    s = sentence.strip()
    if not s:
        return None
    return (verb_final_r16(s) or bare_rule_r16(s) or contract_class_r16(s) or answer_class_r16(s)
            or authority_class_r16(s) or forms_r16(s))


def reset_small_talk_r16(text: str) -> bool:
    """A round-16 reset that throws away nothing of the task: an exclamation about nothing concrete
    ("I binned the whole plan for the weekend, so lazy!")."""
    return text.rstrip().endswith("!") and not directives.concrete(text)


_FRAGMENT_LEAD = re.compile(r"^(?:heard|copy|roger|aye|right|listen|look|ok|okay|so)\s*[?!.,]*$", re.I)


def merge_r16(text: str, sents: list[str]) -> list[str]:
    """A one-word call before a sentence ("Heard?", "Copy.", "Aye.") joined to it (family
    ``dialect_register_r16``); each result a verbatim span of ``text``."""
    if len(sents) < 2 or not families.on(F_DIALECT_R16) or not _FRAGMENT_LEAD.match(sents[0]):
        return sents
    start = text.find(sents[0])
    nxt = text.find(sents[1], start + len(sents[0]))
    if start < 0 or nxt < 0:
        return sents
    return [text[start:nxt + len(sents[1])], *sents[2:]]


def rewrites_r16(sentence: str) -> list[str]:
    """The readings of a sentence the round-16 families give, each read by every rule: a dialect's
    words written plainly, a clause without its number, a rule under a lead of authority as its
    imperative, an answer without its lead. Each distinct from the sentence and from one another."""
    s = sentence.strip()
    out: list[str] = []

    def add(r: str | None) -> None:
        if r is not None and r != s and r not in out:
            out.append(r)

    add(dialect_r16(s))
    for base in [s, *out]:
        add(contract_r16(base))
    for base in [s, *out]:
        add(authority_r16(base))
    for base in [s, *out]:
        for a in answer_r16(base):
            add(a)
            add(authority_r16(a))
    for base in list(out):
        add(dialect_r16(base))
    return out
