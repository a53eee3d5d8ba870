"""Round-13 phrasing classes of the rule constraint extractor (issue 20, point 10), from ``fresh9``.

``fresh9`` was written blind in round 12 and measured once (72.5% of its standing instructions with
the rules alone); it is the tuning set of round 13. Its misses were read by class, and each class
that generalises became one family here, registered with ``{"fresh9"}`` in
:mod:`memfold.memory.families`, so ``bench/phrasing_retention.py --loso`` turns them off for that
set. The extractor (:mod:`memfold.window.constraints`) calls this module through small hooks after
the earlier rounds' rules (:mod:`memfold.window.directives`) have had their say; nothing here
changes what those rules find, except the vetoes of :func:`reported_r13`, which turn down a
record the earlier rules would have made of another's rule.

The families (each rule is stated again where it is written):

* ``typo_keywords_r13``: a misspelled rule word ("allways", "shoud", "whenver", "remeber",
  "aproved", "requirment", "decison", "evrything") is read as the word it misspells (one edit
  away, same first letter, at least five letters, not an inflection of a known word); the record
  keeps the sentence verbatim.
* ``reported_rule_r13``: another's rule or a past rule reported is not a standing instruction:
  a speech or reading verb in the past with a rule in what it reports ("The customer said another
  agent told her to call back before 9", "I read an article saying you should never ...", "the
  email said 'do not reply'", "The parking app said payment was due by 6pm"), a question reported
  ("Customers keep asking whether they have to ..."), an anecdote ("Funny story: ...", "At my
  last job we could only ...", "our intern once approved ...").
* ``manner_imperative_r13``: a bare imperative whose complement states how a kind of task is
  always done is a standing obligation, not a one-off task: a currency or means of payment ("Invoice
  in GBP", "Pay contractors by bank transfer"), a place things are recorded or posted ("Record flag
  changes in the changelog", "Post announcements in #general"), a standing condition ("on
  request", "for every new lead", "to every image", "for voids over £50"), a setting held at a
  value ("Keep the office thermostat at 19°C"), a house standard ("Use the company boilerplate",
  "Use the customer's first name"), a bare plural of things booked or paid ("Book aisle seats").
* ``evidence_source_r13``: a source in the present tense stating a concrete fact ("Stripe shows
  two charges of €49.00 ...", "The tracking page says the parcel was delivered ...", "GPS data
  from the driver's phone puts him at the depot at 18:30"), a check reported with its finding
  ("I've checked, and ...", "Confirmed from the payroll export: ...", "Looking at the audit trail,
  ...").
* ``approval_forms_r13``: a go-ahead for a named thing ("Sure, go ahead with the replacement for
  order 4471-B"), "I'm happy to approve ...", an affirmed purchase with its limit ("Yes, buy the
  standing desk, up to $600"), "... is okayed", "I'll allow ... this once", "Your request to ...
  is approved".
* ``revoke_forms_r13``: withdrawals the earlier rules miss: "You can drop / stop the X", "Please
  stop the X", "You're not limited to X anymore", "We're reversing the X policy", "ignore what I
  said earlier about X", "X can ... now" (a prohibition lifted).
* ``condition_met_r13``: an awaited event reported as a state or an arrival ("Deposit of £150
  received", "The structural engineer's report has come in", "Landing page is live at ...").

Every function here is pure: the same sentence gives the same answer.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..memory import families
from ..memory.families import family
from . import directives

F_TYPO_R13 = family("typo_keywords_r13", {"fresh9"})
F_REPORTED_R13 = family("reported_rule_r13", {"fresh9"})
F_MANNER_R13 = family("manner_imperative_r13", {"fresh9"})
F_EVIDENCE_R13 = family("evidence_source_r13", {"fresh9"})
F_APPROVAL_R13 = family("approval_forms_r13", {"fresh9"})
F_REVOKE_R13 = family("revoke_forms_r13", {"fresh9"})
F_CONDITION_R13 = family("condition_met_r13", {"fresh9"})

_QUESTION = re.compile(r"\?\s*[\"')\]]*\s*$")
_WORD = re.compile(r"[A-Za-z]+")


# -- typo_keywords_r13 ----------------------------------------------------------------------------
#: the rule words a misspelling of which is read as the word (the words the rules key on)
_KEYWORDS = frozenset("""
always never whenever should remember approved approve decided decision requirement required everything
anymore allowed permitted accept accepted message messages escalate website customer customers address
finished passed receipt number annual single please cancelled canceled confirmed deadline reminder
refund invoice delivery schedule before until tomorrow weekend weekends separate immediately necessary
received mandatory forbidden prohibited authorised authorized permission approval contract payment
""".split())
_LONGEST = max(map(len, _KEYWORDS))
_FIRST_LETTERS = frozenset(k[0] for k in _KEYWORDS)
#: real words one edit from a keyword (found in the phrasing sets and LoCoMo's small talk)
_REAL_WORDS = frozenset("newer contact contacts wherever pasted paused remainder reminded fever lever sever seven".split())
_SUFFIXES = ("", "s", "es", "ed", "ing", "er", "ly", "y", "al")


def _inflections(a: str, b: str) -> bool:
    """``a`` and ``b`` are one stem with different endings ("requires" / "required")."""
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    if len(long_) == len(short) + 1 and long_.startswith(short) and long_[-1] in "dnrs":
        return True  # "decide" / "decided", "approve" / "approver", "should" / "shouldn"
    return any(a.endswith(x) and b.endswith(y) and a[:len(a) - len(x)] == b[:len(b) - len(y)]
               for x in _SUFFIXES for y in _SUFFIXES if x != y)


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1:] for i in range(len(word))}


@lru_cache(maxsize=1)
def _typo_index() -> dict[str, frozenset[str]]:
    """Each string one deletion from a keyword (and the keyword itself) -> the keywords it comes from."""
    out: dict[str, set[str]] = {}
    for k in _KEYWORDS:
        for d in _deletes(k) | {k}:
            out.setdefault(d, set()).add(k)
    return {d: frozenset(ks) for d, ks in out.items()}


def _damerau1(a: str, b: str) -> bool:
    """``a`` and ``b`` differ by one insertion, deletion, substitution or swap of neighbours."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] \
            and a[diff[1]] == b[diff[0]]
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


@lru_cache(maxsize=65536)  # a vocabulary's worth of words (speed only)
def _correction(word: str) -> str | None:
    low = word.lower()
    if len(low) < 5 or len(low) > _LONGEST + 1 or low[0] not in _FIRST_LETTERS or low in _KEYWORDS or low in _REAL_WORDS:
        return None
    index = _typo_index()
    cands = set(index.get(low, ()))
    for d in _deletes(low):
        cands |= index.get(d, frozenset())
    # the same first letter, and the difference not only in the last two letters (an inflection:
    # "requires" / "required", "reminded" / "reminder", "finishes" / "finished")
    cands = {k for k in cands if k[0] == low[0] and _damerau1(low, k) and not _inflections(low, k)}
    if len(cands) != 1:
        return None
    fixed = next(iter(cands))
    return fixed.capitalize() if word[:1].isupper() else fixed


def fix_typos(sentence: str) -> str:
    """``sentence`` with misspelled rule words written out (family ``typo_keywords_r13``): a word
    of at least five letters one edit from exactly one word of :data:`_KEYWORDS`, with the same
    first letter, and no inflection of it, is read as that word ("allways" -> "always",
    "aprroved" -> "approved"). For reading only; the record keeps the sentence verbatim."""
    if not families.on(F_TYPO_R13):
        return sentence
    return _fixed(sentence)


@lru_cache(maxsize=4096)
def _fixed(sentence: str) -> str:
    out = sentence
    # one scan; most texts have no misspelled rule word and no bare contraction, and most of their
    # words were seen before (speed only: a word with no correction is remembered as clean)
    words = _WORD.findall(sentence.lower())
    new = set(words).difference(_CLEAN_WORDS)
    typo = False
    for w in new:
        if _correction(w) is None:
            if len(_CLEAN_WORDS) < 200_000:
                _CLEAN_WORDS.add(w)
        else:
            typo = True
    if typo:
        out = _WORD.sub(lambda m: _correction(m.group(0)) or m.group(0), sentence)
    if _CONTRACTION_WORDS.isdisjoint(words):
        return out
    # an apostrophe dropped from a contraction ("Youre free to ...", "dont")
    return _CONTRACTION.sub(lambda m: _CONTRACTIONS[m.group(0).lower()] if m.group(0).islower()
                            else _CONTRACTIONS[m.group(0).lower()].capitalize(), out)


#: lowercased words known to have no correction (bounded; speed only)
_CLEAN_WORDS: set[str] = set()


_CONTRACTIONS = {"youre": "you're", "dont": "don't", "doesnt": "doesn't", "cant": "can't", "wont": "won't",
                 "isnt": "isn't", "arent": "aren't", "shouldnt": "shouldn't", "mustnt": "mustn't", "theyre": "they're",
                 "weve": "we've", "youve": "you've", "didnt": "didn't"}
_CONTRACTION_WORDS = frozenset(_CONTRACTIONS)
_CONTRACTION = re.compile(r"\b(?:" + "|".join(_CONTRACTIONS) + r")\b", re.I)


# -- reported_rule_r13 ----------------------------------------------------------------------------
#: a rule inside what a third party said: an order given ("told her to call back"), a duty or a ban
#: ("said we have to ...", "said 'do not reply ...'"), a due date ("said payment was due by 6pm")
_SAID_RULE = (r"(?:\btold\s+(?:me|us|her|him|them|everyone|people)\s+(?:to|not to|never to)\s+[a-z]+|"
              r"\bsaid\s+(?:that\s+)?(?:you|we|they|i|he|she|people|everyone)\s+(?:should|must|have to|had to|need to|needed to|"
              r"can't|cannot|couldn't|could only|weren't allowed|were not allowed|aren't allowed)\b|"
              r"\b(?:said|read|says)\s*:?\s*['\"‘“]\s*(?:do not|don't|never|always|please|no)\b|"
              r"\bsaid\s+(?:that\s+)?[\w'’ -]{2,30}?\s+(?:was|were)\s+due\b)")
_REPORTED_R13 = re.compile(
    # another party said or wrote a rule ("The customer said another agent told her to ...")
    r"^(?:(?:so|and|oh|also|btw|fyi)[,\s]+)*(?!(?:i|we|you)\b)(?:the |a |an |my |our |their |his |her |this |that )?"
    r"[\w'’ -]{1,40}?\s+(?=(?:said|told|wrote)\b)[^.;!?]*?" + _SAID_RULE + r"|"
    # a reading reported ("I read an article saying you should never ...")
    r"\b(?:read|saw|heard|watched|found)\s+(?:an?|the|this|that|some)\s+[\w'’ -]{1,30}?\s+(?:saying|claiming|that said|"
    r"which said|telling)\b|"
    # a question reported ("Customers keep asking whether ...")
    r"\b(?:keeps?|kept)\s+asking\s+(?:whether|if|about|how|why|what|when)\b|\basked (?:me )?(?:whether|if)\b|"
    # an anecdote ("Funny story: ...", "At my last job ...", "our intern once approved ...")
    r"^(?:(?:so|and|oh|lol|haha)[,\s]+)*(?:funny story|fun fact|true story|story time|long story short)\b|"
    r"\bat my (?:last|old|previous|former|first) (?:job|company|employer|workplace|place|firm|gig)\b|"
    r"\b(?:[a-z]+(?<!only)(?<!just)(?<!then)(?<!until)(?<!and)(?<!but)(?<!or))\s+once\s+(?:\w+ed|gave|took|sent|told|made|got|"
    r"went|let|said|wrote|paid|sold|bought|came|forgot|had)\b", re.I)
_W_REPORTED = frozenset("said told wrote saying claiming telling asking asked story fact once".split())
_W_JOB = frozenset("job company employer workplace place firm gig".split())


def reported_r13(sentence: str) -> bool:
    """Another's rule or a past one reported, not a standing instruction (family ``reported_rule_r13``).

    A speech verb in the past with a rule in what it reports (a third party as the speaker, never
    "I" or "you": "As I said, never ..." restates a rule), a reading reported ("I read an article
    saying ..."), a question reported ("Customers keep asking whether ..."), or an anecdote
    ("Funny story: ...", "At my last job ...", "X once approved ...")."""
    if not families.on(F_REPORTED_R13):
        return False
    words = directives._words(sentence.lower())
    if words.isdisjoint(_W_REPORTED) and ("at" not in words or words.isdisjoint(_W_JOB)):
        return False  # a word each branch needs (speed only)
    return bool(_REPORTED_R13.search(sentence.strip()))


# -- manner_imperative_r13 ------------------------------------------------------------------------
_CURRENCY = (r"(?:gbp|usd|eur|cad|aud|nzd|chf|jpy|sek|nok|dkk|pln|inr|sgd|hkd|zar|pounds|sterling|dollars|euros|"
             r"us dollars|local currency|the customer's currency|their currency)")
_MEANS = (r"(?:bank transfer|wire transfer|wire|bacs|direct debit|standing order|cheque|check|card|credit card|debit card|"
          r"paypal|stripe|invoice|cash|bank|courier|recorded delivery|signed-for post|tracked post|first class|first-class|"
          r"email|e-mail|sms|text|phone|post)")
#: where things are recorded or posted: a log-like place or a chat channel
_PLACE = (r"(?:#[\w-]+|the (?:[\w-]+ )?(?:changelog|change log|log|logbook|ticket|tracker|sheet|spreadsheet|crm|wiki|"
          r"register|ledger|notes|system|channel|thread|stand-?up|meeting|handover|report|board|calendar|diary|file|"
          r"folder|inbox|queue|portal|database)s?)")
_MANNER_R13 = re.compile(
    r"\bin\s+" + _CURRENCY + r"\b|"
    r"\b(?:by|via|through|with|over)\s+" + _MEANS + r"\s*(?:[.!,;]|$|only\b|unless\b|except\b)|"
    r"\b(?:in|on|to|into)\s+" + _PLACE + r"\s*(?:[.!,;]|$)|"
    r"\b(?:on|upon)\s+(?:request|arrival|delivery|receipt|check-?in|check-?out|dispatch|collection|booking|sign-?up)\b|"
    r"\b(?:to|for|on|with|in|from)\s+(?:every|each|all|any)\s+(?:new\s+|single\s+|incoming\s+|outgoing\s+)?[a-z-]{3,}|"
    r"\b(?:for|on)\s+(?:[a-z-]+\s+){0,2}?[a-z]{3,}s\s+(?:over|above|under|below|of more than|of less than)\s+[$€£]?\d|"
    r"^(?:keep|hold|set|leave)\s+(?:the\s+)?(?:[\w-]+\s+){1,3}?at\s+[$€£]?\d[\d.,]*\s*(?:°\s*[cf]|%|degrees|[a-z]+)?\s*[.!]?$|"
    r"^use\s+(?:the\s+)?(?:company|house|standard|official|approved|brand|corporate|team|shared|agreed|default|customer's|"
    r"customers'|caller's|client's|their)\s+[\w' -]{2,30}?\s*[.!]?$|"
    r"\bfrom\s+[\w.+-]+@[\w-]+(?:\.[\w-]+)+|"
    r"\bevery\s+(?:day|morning|evening|night|week|month|quarter|year|hour|weekday|weekend|monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday)s?\b|"
    r"\bto\s+the\s+(?:original|same|customer's|default|registered)\s+(?:card|payment method|account|address|method)\b|"
    r"^(?:pay|invoice|bill|charge|send|email|post|run|review)\s+(?:[a-z-]+\s+)?[a-z]{3,}s\s+on\s+the\s+\d{1,2}(?:st|nd|rd|th)\b"
    r"\s*(?:of (?:each|every|the) month)?\s*[.!]?$|"
    r"^(?:book|reserve|pay|invoice|bill|charge|quote|refund)\s+(?!(?:it|them|me|us|him|her)\b)"
    r"(?:[a-z-]+\s+)?[a-z-]{3,}s\s*(?:[.!]|$)", re.I)
_W_MANNER = frozenset("""in by via through with over on upon to into for from every each all any at use""".split())
#: a frequency ("every Friday afternoon") makes any verb's imperative a routine, with a thing of the task
_EVERY_PERIOD_R13 = re.compile(r"\bevery\s+(?:day|morning|evening|night|week|month|quarter|year|hour|weekday|weekend|monday|"
                               r"tuesday|wednesday|thursday|friday|saturday|sunday)s?\b", re.I)
_NOT_A_VERB_R13 = frozenset("""i we you he she they it the a an my our your his her their this that these those there here
every each all any no not never always so just also and but or if when then thanks thank hi hey hello yes no ok okay
sure great good nice lol wow what who why how where""".split())
_ONE_OFF = re.compile(r"\b(?:now|today|tonight|tomorrow|right away|asap|this (?:morning|afternoon|evening|week|time)|"
                      r"later|next|again|yesterday|real quick|for me|for us|quickly)\b", re.I)


def manner_imperative_r13(sentence: str) -> bool:
    """A bare imperative that says how a kind of task is always done (family ``manner_imperative_r13``).

    The sentence opens with a task verb (:func:`memfold.window.directives.task_verbs`, or one of
    "require", "invoice", "quote", "ping", "book", "pay", "post", "note", "record") and its
    complement is a standing manner: a currency or a means ("in GBP", "by bank transfer"), a
    place things are recorded or posted ("in the changelog", "in #general"), a standing condition
    ("on request", "for every new lead", "for voids over £50"), a setting held at a value ("Keep the
    thermostat at 19°C"), a house standard ("Use the company boilerplate"), or a bare plural of
    things booked, bought or paid ("Book aisle seats"). A time word of one occasion ("now",
    "today", "tomorrow", "this time", "for me") makes it a one-off task; so does an exclamation."""
    if not families.on(F_MANNER_R13):
        return False
    s = sentence.strip()
    if not s or s.endswith("!"):
        return False
    verb = directives._first_word(s)
    if verb not in directives.task_verbs() and verb not in _EXTRA_VERBS and not (
            verb.isalpha() and verb not in _NOT_A_VERB_R13 and not verb.endswith(("ing", "ed", "ly", "s"))
            # round 15, speed only: the period test before the pattern made of the verb (each new
            # verb compiled one, thrashing re's cache); the tests are pure, so their order is free
            and _EVERY_PERIOD_R13.search(s)
            and re.match(r"^(?:please\s+)?" + verb + r"\s+(?!(?:is|are|was|were|has|have|had|will|would|can|could|"
                         r"should|must|does|did|and|or)\b)(?:the|a|an|all|every|each|our|your|my|their)\b", s, re.I)
            and (directives._names_task_noun(s) or directives.concrete(s))):
        return False
    low = s.lower()
    if directives._words(low).isdisjoint(_W_MANNER) and not low.startswith(("book", "reserve", "pay",
                                                                             "invoice", "bill", "charge", "quote", "refund")):
        return False
    if _QUESTION.search(s) or _ONE_OFF.search(s) or directives._PAST.search(s) or len(s.split()) < 3 or len(s.split()) > 25:
        return False
    return bool(_MANNER_R13.search(s))


_EXTRA_VERBS = frozenset("require invoice quote ping book pay post note record bill charge".split())


# -- evidence_source_r13 --------------------------------------------------------------------------
#: a source of record: a document, a log, a system's page, data
_SOURCE = (r"(?:page|recording|footage|data|log|logs|trail|headers?|export|pdf|records?|screenshot|statement|report|receipt|"
           r"reciept|invoice|contract|dashboard|portal|history|tracking|gateway|ledger|file|emails?|message|notes?|"
           r"system|crm|database|spreadsheet|sheet|timeline|manifest|certificate|policy|terms|agreement|quote|order|"
           r"transcript|printout|readout|scan|audit|backup|reading|meter|tracker|stripe|paypal|shopify|xero|sentry|"
           r"datadog|grafana|jira|salesforce|hubspot|zendesk)")
_EVIDENCE_SOURCE_R13 = re.compile(
    r"^(?!(?:i|we|you|he|she|they|it|that|this|there|which|who)\b)(?:(?:the|our|their|his|her|its|your|my)\s+)?"
    r"(?:[\w'’.-]+\s+){0,3}?" + _SOURCE + r"\b(?:\s+(?:from|on|of|for|in|at)\s+(?:the\s+)?[\w'’ ./-]{2,40}?)?"
    r"(?:\s*,\s*[^,]{2,25},)?\s+(?:says|shows|show|lists|list|puts|reads|states|confirms|confirm|records|indicates|"
    r"indicate|contains|has|have|gives|notes)\s+(?P<fact>[^;!?]{4,})", re.I)
_CHECKED_R13 = re.compile(
    r"^(?:i(?:'ve| have)?|we(?:'ve| have)?)\s+(?:just\s+)?(?:checked|looked|verified|double-checked)(?:\s+(?:it|the \w+))?\s*,?\s*"
    r"and\s+(?P<fact>.{8,})|"
    r"^(?:confirmed|verified|checked)\s+(?:from|in|against|with|via|on)\s+(?:the\s+)?[\w'’ -]{2,40}?\s*[:,—-]\s*(?P<fact2>.{8,})|"
    r"^(?:looking at|going through|checking)\s+(?:the\s+)?[\w'’ -]{2,40}?,\s*(?P<fact3>.{8,})", re.I)
_CASE_PARTY_R13 = (r"(?:customer|client|caller|user|tenant|member|buyer|seller|supplier|driver|courier|claimant|patient|"
                   r"applicant|account holder|guest|vendor)")
_PARTY_SENT_R13 = re.compile(
    r"^(?:the\s+)?" + _CASE_PARTY_R13 + r"\s+(?:has\s+)?(?:sent|provided|uploaded|attached|forwarded|shared|supplied)\s+"
    r"(?:us\s+)?(?:a |the |their |his |her )?(?:copy|photo|scan|screenshot|picture|proof|receipt|invoice|video|recording|"
    r"statement)\b[^;.]*[;,—-]\s*(?P<fact>.{8,})", re.I)
_ID_FACT_R13 = re.compile(r"\b[A-Z]{1,5}-?[A-Z0-9]*\d[\w-]*\b[^.;!?]*\b(?:falls? (?:in|within|outside)|matches|belongs to|"
                          r"is (?:listed|flagged|registered|recorded) (?:in|on|as|under))\b")
#: a word each evidence form needs (speed only): a source, a check, a party's document, an identifier placed
_W_EVIDENCE_R13 = frozenset("""page recording footage data log logs trail header headers export pdf record records screenshot
statement report receipt reciept invoice contract dashboard portal history tracking gateway ledger file email emails message
note notes system crm database spreadsheet sheet timeline manifest certificate policy terms agreement quote order transcript
printout readout scan audit backup reading meter tracker stripe paypal shopify xero sentry datadog grafana jira salesforce
hubspot zendesk checked looked verified double-checked confirmed looking going checking sent provided uploaded attached
forwarded shared supplied falls fall matches belongs listed flagged registered recorded""".split())
_W_CHECKED_R13 = frozenset("checked looked verified double-checked confirmed looking going checking".split())
_W_SENT_R13 = frozenset("sent provided uploaded attached forwarded shared supplied".split())
_W_ID_FACT_R13 = frozenset("falls fall matches belongs listed flagged registered recorded".split())
_W_REPORT_VERB_R13 = frozenset("says shows show lists list puts reads states confirms confirm records indicates indicate contains "
                               "has have gives notes".split())
_W_SOURCE_R13 = _W_EVIDENCE_R13 - _W_CHECKED_R13 - _W_SENT_R13 - _W_ID_FACT_R13
_NOT_FACT_R13 = re.compile(r"\b(?:how (?:much|fun|great|nice)|what a|what an|such a|so much fun|if|would|might|maybe|perhaps|"
                           r"hope|wish)\b", re.I)


def evidence_r13(sentence: str) -> bool:
    """A source in the present tense stating a concrete fact, a check with its finding, a party's
    document with what it shows, or an identifier placed (family ``evidence_source_r13``).

    The fact must be concrete (a number, an amount, an identifier, a quoted literal, a name) and
    not hedged or exclaimed ("The photo shows how much fun we had" is no evidence)."""
    if not families.on(F_EVIDENCE_R13):
        return False
    s = sentence.strip()
    if not s or _QUESTION.search(s) or s.endswith("!"):
        return False
    words = directives._words(s.lower())
    if words.isdisjoint(_W_EVIDENCE_R13):
        return False
    m = (not words.isdisjoint(_W_SOURCE_R13) and not words.isdisjoint(_W_REPORT_VERB_R13) and _EVIDENCE_SOURCE_R13.match(s)
         or not words.isdisjoint(_W_CHECKED_R13) and _CHECKED_R13.match(s)
         or not words.isdisjoint(_W_SENT_R13) and _PARTY_SENT_R13.match(s))
    if m:
        fact = next(v for v in m.groupdict().values() if v)
        if _NOT_FACT_R13.search(fact):
            return False
        return directives.concrete(fact) or bool(directives._NAMED.search(fact)) or bool(
            re.search(r"\b[A-Z][a-z]+\b", fact)) or len(fact.split()) >= 6 and _PARTY_SENT_R13.match(s) is not None \
            or len(fact.split()) >= 6 and bool(re.search(r"\b(?:log|logs|headers?|trail|export|records?)\b", s[:m.start(
                "fact")] if "fact" in m.groupdict() and m.group("fact") else "", re.I))
    return not words.isdisjoint(_W_ID_FACT_R13) and bool(_ID_FACT_R13.search(s)) and not directives._PAST.search(s)


# -- approval_forms_r13 ---------------------------------------------------------------------------
_YES = r"(?:(?:sure|yes|yep|yeah|ok|okay|fine|alright|all right|right|great)[,.!]?\s+)"
_APPROVAL_R13 = re.compile(
    r"^" + _YES + r"+go ahead (?:with|and)\s+(?:the|that|this|your)\s+\w|"
    r"\b(?:i'm|i am|we're|we are)\s+(?:happy|glad|pleased|willing|ok|okay|fine)\s+to\s+(?:approve|sign off on|authori[sz]e|"
    r"green-?light|okay|ok|sanction)\s+\w|"
    r"^" + _YES + r"+(?:buy|book|order|get|purchase|go for|take|approve)\s+(?:the|that|this|a|an|those|these)\s+[^,]{2,40},\s*"
    r"(?:up to|max(?:imum)?|no more than|under|within|capped at|as long as it's under|but no more than)\s+[$€£]?\d|"
    r"\b(?:is|are|has been|have been)\s+(?:now\s+)?(?:okayed|ok'd|okay'd|oked|green-?lit|greenlit|rubber-?stamped)\b|"
    r"^" + _YES + r"*(?:i'll|i will|we'll|we will)\s+(?:allow|approve|authori[sz]e|permit|accept|sign off on|okay)\s+"
    r"(?:the|that|this|a|an|your)\s+[^.;!?]{2,60}?\b(?:this once|just this once|this time|as a one-off|on this occasion)\b|"
    r"^(?:your|the|their|his|her)\s+(?:request|application|claim|proposal|ask)\s+(?:to|for)\s+[^.;!?]{2,60}?\s+(?:is|has been)\s+"
    r"(?:now\s+)?(?:approved|granted|accepted|authori[sz]ed|signed off)\b", re.I)
#: a word each approval form needs (speed only)
_W_APPROVAL_R13 = frozenset("""ahead approve sign authorise authorize greenlight green-light sanction okay ok up max maximum more
under within capped okayed ok'd okay'd oked green-lit greenlit rubber-stamped once time one-off occasion approved granted
accepted authorised authorized""".split())


def _approval_gate(w: frozenset, s: str) -> bool:
    """The words one of :data:`_APPROVAL_R13`'s forms needs (speed only)."""
    return ("ahead" in w or not w.isdisjoint(_G_APPROVE_VERB) and not w.isdisjoint(_G_HAPPY)
            or not w.isdisjoint(_G_LIMIT) and any(c.isdigit() for c in s) or not w.isdisjoint(_G_OKAYED)
            or not w.isdisjoint(_G_ONCE) and not w.isdisjoint(_G_ALLOW) or not w.isdisjoint(_G_GRANTED)
            and not w.isdisjoint(_G_REQUEST))


_G_APPROVE_VERB = frozenset("approve sign authorise authorize greenlight green-light green-light sanction okay ok".split())
_G_HAPPY = frozenset("happy glad pleased willing ok okay fine".split())
_G_LIMIT = frozenset("up max maximum more under within capped".split())
_G_OKAYED = frozenset("okayed ok'd okay'd oked green-lit greenlit rubber-stamped".split())
_G_ONCE = frozenset("once time one-off occasion".split())
_G_ALLOW = frozenset("allow approve authorise authorize permit accept sign okay".split())
_G_GRANTED = frozenset("approved granted accepted authorised authorized signed".split())
_G_REQUEST = frozenset("request application claim proposal ask".split())


def approval_r13(sentence: str) -> bool:
    """An approval in a form the earlier rules miss (family ``approval_forms_r13``): a go-ahead for
    a named thing after a yes ("Sure, go ahead with the replacement for order 4471-B"), "I'm happy
    to approve ...", an affirmed purchase with its limit ("Yes, buy the standing desk, up to $600"),
    "... is okayed", "I'll allow ... this once", "Your request to ... is approved". The thing
    approved must be of the task (a task noun, a number or a name)."""
    if not families.on(F_APPROVAL_R13):
        return False
    s = sentence.strip()
    if not s:
        return False
    words = directives._words(s.lower())
    if words.isdisjoint(_W_APPROVAL_R13) or not _approval_gate(words, s):
        return False
    if _QUESTION.search(s) or directives._PAST.search(s):
        return False
    return bool(_APPROVAL_R13.search(s)) and (directives.concrete(s) or directives._names_task_noun(s)
                                              or bool(directives._NAMED.search(s)))


# -- revoke_forms_r13 -----------------------------------------------------------------------------
_STOP_THE_R13 = re.compile(
    r"^(?:(?:ok|okay|so|also|and|hi|right|actually)[,\s]+)*(?:(?:you can|you may|feel free to|please|we can|let's|you can now)\s+)?"
    r"(?:drop|stop|scrap|ditch|cancel|end|kill|retire|turn off|switch off|pause|forget|bin|skip)\s+(?:the|my|our|that|those|"
    r"these|all the|with the)\s+(?P<what>[^.;!?,—]{2,50}?)\s*(?:[.;!,—–]|\s-\s|$)", re.I)
_NOT_LIMITED_R13 = re.compile(
    r"^you(?:'re| are)\s+(?:no longer|not)\s+(?:limited|restricted|confined|bound|tied)\s+to\s+(?P<what>[^.;!?,—]{2,50}?)"
    r"(?:\s+(?:any ?more|any longer))?\s*(?:[.;!,—–]|\s-\s|$)", re.I)
_REVERSING_R13 = re.compile(
    r"^(?:we(?:'re| are)|i(?:'m| am)|we(?:'ll| will)|we|i)\s+(?:now\s+)?(?:reversing|reverse|rolling back|roll back|undoing|"
    r"undo|lifting|lift|rescinding|rescind|revoking|revoke|retiring|retire|ending|end|dropping|drop|scrapping|scrap)\s+"
    r"(?:the|our|that|this|my)\s+(?P<what>[^.;!?,—]{2,60}?)\s*(?:[.;!,—–]|\s-\s|$)", re.I)
_IGNORE_WHAT_R13 = re.compile(
    r"\b(?:ignore|forget|disregard|scratch)\s+what\s+(?:i|we)\s+(?:said|told you|wrote|asked(?: for)?|mentioned)\s+"
    r"(?:earlier\s+|before\s+|previously\s+)?(?:about|re|regarding|on)\s+(?P<what>[^.;!?,—]{2,40})", re.I)
_CAN_NOW_R13 = re.compile(
    r"^(?P<who>(?!(?:i|we|it|that|this|he|she|they)\b)[\w'’ -]{2,30}?)\s+(?:can|may)\s+(?P<rest>[^.;!?,—]{4,60}?)\s+now\b", re.I)
_W_REVOKE_R13 = frozenset("""drop stop scrap ditch cancel end kill retire turn switch pause forget bin skip limited restricted
confined bound tied reversing reverse rolling roll undoing undo lifting lift rescinding rescind revoking revoke retiring ending
dropping scrapping ignore disregard scratch now""".split())
_RULE_TAIL_R13 = re.compile(r"\b(?:rule|limit|reminders?|summar(?:y|ies)|requirement|pings?|checks?|cap|ban|policy|"
                            r"restriction|thing|emails?|reports?|alerts?|notifications?|digests?|updates?|texts?|calls?)$", re.I)


def _stop_withdraws(s: str, m: "re.Match[str]") -> bool:
    """"Stop / drop / forget the X" withdraws X when it is said as a release ("You can drop ...",
    "Please stop ..."), X is a rule or a standing task's output ("the thermostat rule", "the 8am meds
    reminder"), or a reason follows ("..., its too noisy"); never "Stop the bot from ..."."""
    what = m.group("what")
    if re.search(r"\bfrom\b", what, re.I):
        return False
    lead = re.match(r"^(?:(?:ok|okay|so|also|and|hi|right|actually)[,\s]+)*(?:you can|you may|feel free to|please|we can|let's)\b",
                    s, re.I)
    return bool(lead or _RULE_TAIL_R13.search(what.strip()) or re.match(r"\s*(?:[,—–]|-\s)", s[m.end("what"):]))


_PRONOUN_WHAT = re.compile(r"^(?:them|it|that|this|those|these|him|her)\b", re.I)


def withdrawn_r13(sentence: str) -> tuple[str, str] | None:
    """``(words naming what is withdrawn, action)`` for a round-13 form (family ``revoke_forms_r13``),
    else None: "You can drop / stop the X", "Please stop the X", "You're not limited to X anymore",
    "We're reversing the X policy", "ignore what I said earlier about X" (a pronoun there names
    what the sentence said before it), and "X can ... now" (``lift``: ends only a prohibition
    naming it)."""
    if not families.on(F_REVOKE_R13):
        return None
    s = sentence.strip()
    if not s or _QUESTION.search(s):
        return None
    low = s.lower()
    if directives._words(low).isdisjoint(_W_REVOKE_R13):
        return None
    words = directives._words(low)
    s = fix_typos(s)
    m = _IGNORE_WHAT_R13.search(s) if "what" in words else None
    if m:
        what = m.group("what")
        if _PRONOUN_WHAT.match(what):
            # the pronoun names the subject of what was said before it ("Wednesdays are free ...")
            head = s[:m.start()]
            what = re.split(r"\s+(?:is|are|was|were|'s|'re|can|may|will|have|has)\b", head, maxsplit=1)[0]
        return directives.split_hyphens(what), "revoke"
    for pattern in (_STOP_THE_R13, _NOT_LIMITED_R13, _REVERSING_R13):
        m = pattern.match(s)
        if m and not directives._PAST.search(s[:m.end()]) and (pattern is not _STOP_THE_R13 or _stop_withdraws(s, m)):
            return directives.split_hyphens(m.group("what")), "revoke"
    m = _CAN_NOW_R13.match(s) if "now" in words and ("can" in words or "may" in words) else None
    if m and not directives._PAST.search(s):
        return directives.split_hyphens(f"{m.group('who')} {m.group('rest')}"), "lift"
    return None


# -- condition_met_r13 ----------------------------------------------------------------------------
_CONDITION_MET_R13 = re.compile(
    r"^(?!(?:i|we|you|it|that|this|there)\b)(?:the\s+)?[\w'’ -]{2,40}?(?:\s+of\s+[$€£]?\d[\d,.]*)?\s+(?:received|arrived|"
    r"cleared|landed|signed|approved|delivered)\b(?:\s+(?:from|by|at|on|in|today|this)\b|\s*[.!]*$)|"
    r"\b(?:has|have|'s)\s+(?:now\s+|just\s+|finally\s+)?(?:come in|come through|come back|arrived|landed|cleared|gone through|"
    r"gone live|been done|been signed|been received|been delivered)\b|"
    r"^(?!(?:i|we|you|it|that|this|there|everything|life)\b)(?:the\s+)?[\w'’ -]{2,40}?\s+(?:is|are|'s)\s+(?:now\s+|finally\s+)?"
    r"(?:live|up and running|in place|signed|through|done|complete|completed|finished)\b", re.I)
_W_CONDITION_R13 = frozenset("""received arrived cleared landed signed approved delivered come gone been live running place through
done complete completed finished""".split())


def condition_met_r13(sentence: str) -> bool:
    """An awaited event reported as an arrival or a state (family ``condition_met_r13``): "Deposit
    of £150 received from the Wongs", "The report has come in", "Landing page is live at ...".
    Never with a negation, a future or a hope."""
    if not families.on(F_CONDITION_R13):
        return False
    s = sentence.strip()
    low = s.lower()
    words = directives._words(low)
    if words.isdisjoint(_W_CONDITION_R13) or _QUESTION.search(s):
        return False
    if not words.isdisjoint(("not", "never", "yet", "still", "will", "hope", "hopefully", "if", "when", "until", "soon",
                             "should", "must", "once", "before", "after")) or "n't" in low:
        return False
    return bool(_CONDITION_MET_R13.search(s))


def classify_r13(sentence: str) -> tuple[str, str] | None:
    """The round-13 phrasing classes that make a record (families of :mod:`memfold.memory.families`, from ``fresh9``)."""
    s = sentence.strip()
    if not s or _QUESTION.search(s):
        return None
    if approval_r13(s):
        return "approval", "approval_statement"
    if evidence_r13(s):
        return "evidence", "evidence"
    if manner_imperative_r13(s):
        return "obligation", "imperative"
    return None


#: a record that waits for a thing before an act ("Wait for the deposit before confirming the booking"):
#: the thing is its condition (family ``condition_met_r13``)
_WAIT_FOR_R13 = re.compile(r"^(?:(?:please|always|kindly)\s+)?(?:wait for|await|hold (?:off )?for)\s+(?P<cond>.{3,80}?)\s+"
                           r"(?:before|prior to|ahead of)\s+\w", re.I)


def condition_r13(record_text: str) -> str | None:
    """What a "Wait for X before Y" record waits for, or None (family ``condition_met_r13``)."""
    if not families.on(F_CONDITION_R13):
        return None
    m = _WAIT_FOR_R13.match(record_text.strip())
    return m.group("cond") if m else None


#: "ignore what I said earlier about X": a withdrawal, never a reset of the whole plan
def withdraws_about_r13(sentence: str) -> bool:
    """The sentence withdraws what was said about one thing (family ``revoke_forms_r13``), so it is
    read as a withdrawal and not as a reset of everything ("..., please ignore what I said earlier
    about them")."""
    return families.on(F_REVOKE_R13) and "what" in sentence.lower() and bool(_IGNORE_WHAT_R13.search(sentence))


# -- lead_forms_r13 -------------------------------------------------------------------------------
F_LEAD_R13 = family("lead_forms_r13", {"fresh9"})
F_KINDS_R13 = family("kind_forms_r13", {"fresh9"})
F_RESET_R13 = family("reset_forms_r13", {"fresh9"})

#: wrappers around an instruction that add none of their own (family ``lead_forms_r13``): a list
#: bullet, a label for the agent ("Agent note:", "Standing order for you:", "Just FYI,"), an
#: interjection ("Do not, I repeat, do not ..."), and a polite request ("It would be great if you
#: could ...", "Could you (please) ...?"): the rest is read as the instruction, the record keeps
#: the sentence whole
_BULLET_R13 = re.compile(r"^\s*(?:[-*•–]|\d{1,2}[.)])\s+(?=\w)")
_LABEL_R13 = re.compile(
    r"^(?:(?:agent|operator|ops|admin|team|internal|staff|support|house|bot)\s+(?:note|rule|reminder|instruction)s?|"
    r"(?:standing|new|general|permanent)\s+(?:order|instruction|rule|note)s?(?:\s+for\s+(?:you|the bot|the assistant|the team))?|"
    r"note (?:for|to) (?:you|the bot|the assistant|the agent|agents|support)|"
    r"(?:just\s+)?fyi|for your information|heads[- ]up|pro tip|quick note)\s*[:,—-]\s*(?=\w)", re.I)
_INTERJECTION_R13 = re.compile(r",\s*(?:i repeat|i say again|seriously|honestly|and i mean it|i mean it|again),\s*", re.I)
#: "Do not, I repeat, do not ...": the words said twice are read once
_REPEATED_R13 = re.compile(r"^(?P<w>[\w'’]+(?:\s+[\w'’]+){0,2}?),\s*(?:i repeat|i say again|again|seriously),\s*(?=(?P=w)\b)", re.I)
_POLITE_R13 = re.compile(
    r"^(?:(?:hi|hey|ok|okay|so|and|also)[,\s]+)*(?:it would be (?:great|good|helpful|ideal|nice|brilliant|lovely|perfect)|"
    r"it'd be (?:great|good|helpful|ideal|nice|brilliant|lovely|perfect)|i'd appreciate it|i would appreciate it|"
    r"i'd be grateful|i would be grateful)\s+if\s+you\s+(?:could|can|would)\s+(?:please\s+)?(?P<rest>[a-z].+)$|"
    r"^(?:(?:hi|hey|ok|okay|so|and|also)[,\s]+)*(?:could|can|would|will)\s+you\s+(?:please\s+)?(?P<rest2>[a-z].+?)\s*\?\s*$", re.I | re.S)
#: a marker that the polite request stands (or has a time limit): it is no one-off favour
_STANDING_R13 = re.compile(r"\b(?:every|each|all|always|whenever|any|never|no|only|until|unless|before|by|within|no later than|"
                           r"from now on|going forward|in future)\b", re.I)


def strip_lead_r13(sentence: str) -> str | None:
    """The instruction inside a round-13 wrapper (family ``lead_forms_r13``), or None when there is none."""
    if not families.on(F_LEAD_R13):
        return None
    s = sentence.strip()
    out = s
    m = _BULLET_R13.match(out)
    if m:
        out = out[m.end():]
    m = _LABEL_R13.match(out)
    if m:
        out = out[m.end():]
    if "," in out:
        out = _REPEATED_R13.sub("", out)
        out = _INTERJECTION_R13.sub(", ", out)
    m = _POLITE_R13.match(out)
    if m:
        rest = (m.group("rest") or m.group("rest2")).rstrip(" ?")
        if not _STANDING_R13.search(rest) or not (directives._names_task_noun(rest) or directives.concrete(rest)):
            return None  # "Could you always be this cheerful?" asks nothing of the task
        out = rest + "."
    if out == s or len(out.split()) < 3:
        return None
    return out[:1].upper() + out[1:]


# -- kind_forms_r13 -------------------------------------------------------------------------------
_DAYWORD = (r"(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day)?|monday|tuesday|wednesday|thursday|friday|saturday|"
            r"sunday|tomorrow|tonight|today|eod|eow|noon|midnight|\d{1,2}(?:st|nd|rd|th)?(?:\s+\w+)?|end of (?:the )?\w+")
#: permissions (family ``kind_forms_r13``): "Go ahead and accept calendar invites from anyone at
#: ...", "ok to escalate straight to tier 2 if ...", "Happy for you to sign my name on ..."
_PERMIT_R13 = re.compile(
    r"^(?:(?:sure|yes|ok|okay)[,\s]+)?go ahead and\s+(?!(?:enjoy|have|relax|take|try|grab|get|go|rest|sleep|eat|treat|"
    r"celebrate|book yourself|be)\b)(?P<verb>[a-z]+)\s+(?P<obj>.{4,})$|"
    r"^(?:it's\s+|it is\s+)?(?:ok|okay|fine|alright|all right)\s+(?:for you\s+)?to\s+(?P<verb2>[a-z]+)\s+.{4,}$|"
    r"^(?:i'm\s+|i am\s+|we're\s+|we are\s+)?(?:happy|fine|ok|okay|content)\s+for\s+(?:you|the bot|the assistant|agents?)\s+to\s+"
    r"(?P<verb3>[a-z]+)\s+.{4,}$", re.I | re.S)
#: prerequisites: "The ticket stays open until ...", "No password resets unless ...", "The patch goes
#: out only after ...", "I'd prefer you didn't publish X until ...", "Merging into main requires two
#: approving reviews."
_PREREQ_R13 = re.compile(
    r"^(?:the|all|every|each|our|your|any)\s+[\w'’ -]{2,40}?\s+(?:stays?|remains?|stay|remain)\s+(?:open|closed|on hold|locked|"
    r"pending|frozen|paused|unpaid|in draft|private|hidden|offline|blocked)\s+(?:until|till|unless)\s+\w|"
    r"^no\s+[\w'’ -]{2,40}?\s+(?:unless|until|without)\s+(?:the|a|an|they|he|she|it|we|you|their|his|her)\b|"
    r"^(?:the|all|every|each|our|any)\s+[\w'’ -]{2,40}?\s+(?:goes? out|ships?|goes? live|happens?|gets? (?:sent|paid|released|"
    r"published|merged))\s+only\s+(?:after|once|when)\s+\w|"
    r"^(?:i'd|i would|we'd|we would)\s+(?:prefer|rather)\s+(?:that\s+)?you\s+(?:didn't|did not|don't|do not|not)\s+\w+[^.;!?]*?"
    r"\b(?:until|before|unless)\s+\w|"
    r"^(?:[a-z]+ing)\s+(?:[\w'’ -]{1,30}?\s+)?(?:requires|needs|needs at least|requires at least)\s+(?:\d+|one|two|three|four|five|"
    r"a|an)\s+[\w-]+", re.I)
#: deadlines: "due date for the website copy is thurs", "... by the last working day of the month",
#: "Please RSVP to the vendor summit before 12 September."
_DEADLINE_R13 = re.compile(
    r"^(?:the\s+)?(?:due date|deadline|cut-?off|submission date|closing date)\s+(?:for|on)\s+[\w'’ -]{2,40}?\s+(?:is|=|:)\s+"
    r"(?:" + _DAYWORD + r")\b|"
    r"\b(?:by|before|no later than)\s+the\s+(?:last|first|final)\s+(?:working|business|week)?\s*day\s+of\s+(?:the|each|every)\s+"
    r"(?:month|week|quarter|year)\b|"
    r"^(?:please\s+)?(?!(?:the|a|an|my|our|your|his|her|their|this|that|i|we|you|he|she|they|it|there)\b)[a-z]+\s+"
    r"[^.;!?]{2,60}?\s+(?:before|by|no later than)\s+\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|"
    r"jul|aug|sep|sept|oct|nov|dec)[a-z]*\b", re.I)
#: decisions: "It's been decided: ...", "X won the vote, so that's what we're using", "The call was
#: made to ...", "Board voted yesterday to cap ...", "we went for X in the end"
_DECISION_R13 = re.compile(
    r"^it(?:'s| has| is) been (?:decided|agreed|settled|confirmed)\s*[:—-]\s*\w|"
    r"\bwon the (?:vote|poll|pitch|bake-?off|shoot-?out|tender|bid)\b[^.;!?]*\bthat's what we(?:'re| are| will be|'ll be)\s+"
    r"(?:using|going with|doing|ordering|buying|booking)\b|"
    r"^the (?:call|decision) (?:was|has been) made to\s+\w|"
    r"^(?:the\s+)?(?:board|team|committee|council|panel|management|leadership|partners|directors|shareholders|members)\s+"
    r"(?:has\s+|have\s+)?voted\s+(?:\w+\s+)?to\s+\w|"
    r"^(?:so\s+|ok\s+so\s+)?we\s+(?:went|opted|settled)\s+(?:for|with|on)\s+(?:the|a|an)\s+[^.;!?]{2,60}?\s+in the end\b", re.I)
#: restrictions: "The main ground rule is that you only ...", "hotels that cost £180 a night or less",
#: "Working hours for the bot's outbound messages: 08:00-20:00 CET only.", "Restrict X to Y."
#: prohibitions and duties of the agent or a quantified thing: "the bot isn't allowed to give medical
#: diagnoses", "each shift handover must include a list of open P1 incidents"
_ROLE_R13 = r"(?:the\s+)?(?:bot|assistant|agent|agents|chatbot|support team|support staff|staff|helpdesk)"
_ROLE_BAN_R13 = re.compile(r"^" + _ROLE_R13 + r"\s+(?:isn't|is not|aren't|are not|is never|are never)\s+(?:allowed|permitted|"
                           r"authori[sz]ed|supposed|meant)\s+to\s+\w", re.I)
_QUANT_DUTY_R13 = re.compile(r"^(?:each|every|all|any)\s+[\w'’ -]{2,30}?\s+(?:must|should|has to|have to|needs? to|shall)\s+"
                             r"(?:always\s+)?(?:include|contain|have|mention|list|state|show|carry|cite|be signed|be logged|"
                             r"be tagged|be copied|be approved|be reviewed|go through)\b", re.I)
_RESTRICT_R13 = re.compile(
    r"^(?:the|our|my)\s+(?:main|one|only|first|golden|key|big|basic)?\s*(?:ground\s+)?rule\s+(?:here\s+)?is\s+(?:that\s+)?"
    r"(?:you|we|the bot|agents?)\s+(?:only|never|always|must|should|don't|do not)\b|"
    r"\b(?:cost|costs|costing|priced at|at)\s+[$€£]\s?\d[\d,.]*(?:\s+(?:a|per)\s+\w+)?\s+or\s+(?:less|under|below|cheaper)\b|"
    r"^[\w'’ -]{3,60}:\s*[^.;!?]{2,40}?\s+only\s*[.!]?$|"
    r"^(?:restrict|limit|confine)\s+(?!yourself\b)[\w'’ -]{2,40}?\s+to\s+(?:the|a|an|our|their|\d)\b", re.I)
_W_KINDS_R13 = frozenset("""go ok okay fine alright happy content stays stay remains remain no goes ships happens gets prefer
rather requires needs due deadline isn't not aren't never must should has have shall each every all any cut-off cutoff submission closing before by later decided agreed settled confirmed won
call decision voted went opted rule cost costs costing priced only restrict limit confine""".split())


def kinds_r13(sentence: str) -> tuple[str, str] | None:
    """The round-13 kind forms (family ``kind_forms_r13``): permissions, prerequisites, deadlines,
    decisions and restrictions in shapes the earlier rules miss (each pattern's comment gives its
    examples). The sentence must be about the task (a task noun, a number or a name) and, but for
    the decision forms that report a vote, not in the past."""
    if not families.on(F_KINDS_R13):
        return None
    s = sentence.strip()
    if not s or _QUESTION.search(s) or s.endswith("!"):
        return None
    low = s.lower()
    words = directives._words(low)
    if words.isdisjoint(_W_KINDS_R13):
        return None
    # the patterns first, in order, then the past and the task tested once (the same answers as
    # testing them first: speed only)
    found = None
    if _ROLE_BAN_R13.match(s):
        if not directives._PAST.search(s):
            return "constraint", "never"  # the agent named as the subject: about the task, whatever the object
    m = _PERMIT_R13.match(s)
    if m and (m.group("verb") or m.group("verb3") or m.group("verb2").lower() in directives.task_verbs()
              or m.group("verb2").lower() in _EXTRA_VERBS):
        found = ("permission", "permission_form", False)
    for pattern, kind, rule, past_ok in _KIND_PATTERNS_R13:
        if found is not None:
            break
        if pattern.search(s) if pattern is not _QUANT_DUTY_R13 else pattern.match(s):
            found = (kind, rule, past_ok)
            if not past_ok and directives._PAST.search(s):
                found = None  # the next pattern may still read it
    if found is None or not (directives.concrete(s) or directives._names_task_noun(s) or directives._NAMED.search(s)):
        return None
    if found[0] == "permission" and directives._PAST.search(s):
        found = None
        for pattern, kind, rule, past_ok in _KIND_PATTERNS_R13:
            if pattern.search(s) if pattern is not _QUANT_DUTY_R13 else pattern.match(s):
                if past_ok or not directives._PAST.search(s):
                    return kind, rule
        return None
    return found[0], found[1]


_KIND_PATTERNS_R13 = ((_PREREQ_R13, "prerequisite", "prerequisite_form", False), (_DEADLINE_R13, "deadline", "deadline_form", False),
                      (_DECISION_R13, "policy_state", "decision", True), (_RESTRICT_R13, "constraint", "imperative_limit", False),
                      (_QUANT_DUTY_R13, "obligation", "modal", False))


# -- reset_forms_r13 ------------------------------------------------------------------------------
#: resets (family ``reset_forms_r13``): "none of that stands anymore.", "All bets are off on the
#: office move.", "We're tearing up that plan —"; something of the task must follow
_RESET_R13 = re.compile(
    r"(?:^|[.!?;:,—]\s*)(?:none|nothing)\s+of\s+(?:that|this|it|the above)\s+(?:stands|holds|applies|counts|is happening)\s*"
    r"(?:any ?more|any longer|now)?\s*[.;:,—-]|"
    r"\ball bets are off\b(?:\s+(?:on|for|with)\s+[^.;:!?]{2,40})?\s*[.;:,—-]|"
    r"\b(?:we're|we are|i'm|i am)\s+(?:now\s+)?(?:tearing up|ripping up|binning|scrapping|ditching|throwing out|shelving)\s+"
    r"(?:that|the|our|this|my)\s+(?:[\w'’-]+\s+){0,2}?(?:plan|plans|itinerary|schedule|approach|idea|setup)\b\s*[.;:,—-]", re.I)


_W_RESET_R13 = frozenset("up binning scrapping ditching throwing shelving".split())


def reset_r13(text: str) -> "re.Match[str] | None":
    """A reset of the plan in a round-13 form (family ``reset_forms_r13``), with something of the
    task after it (a number, a name, a plan's shape or "we'll ... / the X is now ...")."""
    if not families.on(F_RESET_R13):
        return None
    low = text.lower()
    if "none" not in low and "nothing" not in low and "bets" not in low and directives._words(low).isdisjoint(_W_RESET_R13):
        return None  # a word each form needs (speed only)
    m = _RESET_R13.search(text)
    if not m or _QUESTION.search(text.strip()):
        return None
    rest = text[m.end():]
    if not rest.strip() or not (directives.concrete(rest) or directives._NAMED.search(rest) or re.search(
            r"\b(?:we(?:'re| are|'ll| will)|it's|instead|now|is now|goes|new)\b", rest, re.I)):
        return None
    return m
