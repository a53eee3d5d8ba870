"""Directive speech acts in their common shapes: the second layer of the rule constraint extractor (issue 20, point 10).

:class:`~memfold.window.constraints.RuleConstraintExtractor` first tries its phrase rules (the
issue-8 list: "never", "always", "only", "until I confirm", ...). A sentence none of them matches
comes here, where it is read by *form* rather than by a fixed phrase:

* **imperatives** ("Use British spelling throughout."), a base-form verb opening the main clause
  (after lead words, a scope marker or a leading "Whenever ..., " clause). A one-off request
  ("Send the invoice.") is a task, not a standing instruction, so an imperative is protected only
  when it says it stands (every / each / all / any / whenever / throughout / exclusively / at all
  ...), restricts (limit, restrict, stick to, stay within, keep ... under), forbids (avoid,
  refrain from, steer clear of, skip, leave ... alone), orders steps (first ... then, before,
  prior to, ahead of) or sets a time limit;
* **modal statements** about the agent or its output ("You have to mention ...", "Your answers
  should include ...", "Every summary you write needs ...", "Any booking has to be refundable.",
  "The contract must be countersigned ..."): deontic *must / has to / needs to / should* with a
  subject that is the agent, its output, a quantified thing or a thing of the task, never
  epistemic "it must have been fun";
* **statements of kind**: permissions ("You're free to ...", "It's fine for you to ...",
  "Permission granted to ..."), prohibitions ("X is off-limits", "It is forbidden to ...",
  "No calls to the client after 6 pm"), limits ("capped at", "at most", "the maximum ... is"),
  deadlines ("no later than noon", "within 48 hours", "by the 15th", "is due ..."),
  prerequisites ("requires ... first", "has to wait until ...", "only ... after ...", "not
  before"), approvals ("... is approved", "you have my sign-off", "signed off on"), evidence
  ("For the record, ...", "Note that ...", "The log file shows ...") and decisions ("We've
  decided to ...", "Let's lock in ...", "The plan is to ...": policy state).

Small talk uses the same forms ("Keep it up!", "Feel free to reach out any time", "It's okay to
take a break", "Let's catch up soon"), so the weaker forms also need the sentence to be about a
*thing of the task*: a noun from :data:`TASK_NOUNS` (documents, accounts, orders, messages,
systems, money, bookings ...), a number, an amount or an identifier. A question is never a
directive. The rules were written from the phrasing sets in ``tests/data`` (tuning half only) and
checked for false records against LoCoMo small talk; see ``bench/phrasing_retention.py``.

Every function here is pure: the same sentence gives the same answer.
"""

from __future__ import annotations

import re

# -- vocabulary -----------------------------------------------------------------------------------
#: nouns that make a sentence about the task rather than about life (singular; plurals match too)
TASK_NOUNS = frozenset("""
account accounts address admin agenda agent airline alert alias allowance amount analysis answer api app
application approval archive article asset attachment audit backup balance bank banner batch beta bill
billing board booking branch brief browser bucket budget bug build bulletin buyer cache calendar call caller
campaign card cart case catalog catalogue certificate change changelog channel charge chart chat checkout
cheque claim client cluster code column comment commit company complaint config configuration contract
contractor copy courier credit credential customer dashboard data database deadline deal delivery
demo deploy deployment deposit design desk detail device diff discount disk dispute document documentation
domain draft drive email e-mail employee entry error escalation estimate event exception expense export fax
fee feature field figure file filter firewall flight folder form format forecast fraud fund greeting guest
headcount hotel inbox incident installation instance intern invoice invite issue item itinerary job key
landing launch lease ledger legal letter licence license limit line link list listing load loan log logo
mailbox mailing manager manual margin meeting memo merge message meter metric migration milestone mock-up
model module newsletter note notice notification number offer office onboarding option order output
package page parcel partner password patch payment payroll pdf permission phone photo plan platform policy
portal post price pricing printer priority process product production profile project promo proposal
prototype pull purchase query quote quota rate receipt record recipient refund registration release
reminder renewal repo report repository request reservation response retreat return review roadmap
router rule salary sale sample sandbox schedule schema screenshot script seat section server service
session sheet shipment shipping signature site slide snapshot software source spam spec spelling
spreadsheet sprint staff staging statement statistic status stock storage store subject subscription
summary supplier support survey system table tag task tax team template tenant test ticket timeline
timesheet title token tool tracking transaction transfer translation trial upgrade upload upsell user
vat vendor venue version vm voucher waiver warehouse warranty website wiki wire workflow workshop
ad ads advert brand bullet bundle carrier catering colour color currency dollar emoji euro font heading html
json csv layout markdown menu packaging paragraph scheme tier theme tone unit word
appointment fare setting taxi train trip
""".split())
_TASK_NOUN = re.compile(r"\b(?:" + "|".join(sorted((re.escape(n) for n in TASK_NOUNS), key=len, reverse=True))
                        + r")(?:s|es)?\b", re.I)
#: a number, an amount, an identifier or a quoted literal also makes a sentence concrete
_CONCRETE = re.compile(r"\d|[$€£%@#]|\b[A-Z]{2,}[-\d]|'[^']{2,}'|\"[^\"]{2,}\"")

#: verbs an instruction to an agent opens with (base form)
_VERBS = frozenset("""
add address alert answer apply archive ask attach audit avoid back block book bring build call cancel cap
cc change charge check cite clean clear close collect comment commit compile confirm contact copy correct
create credit cut deactivate delete deliver deploy describe disable document double-check download draft
drop edit email enable end escalate estimate exclude export file fill filter finish fix flag follow format
forward get give handle hold include inform insert install issue keep label leave limit link list load
lock log mail mark mention merge message migrate move name note notify offer order pack pay phone pick
ping place post prefix prepare print prioritise prioritize process publish purge put quote read rebook
record redirect refer reference refund reject release remind remove rename reopen reply report request
reschedule reserve reset respond restart restrict return review rewrite round route run save schedule
screen send set share ship show sign skip sort specify spell split start state stay stick stop store
submit suggest summarise summarize switch tag take test text track transfer translate treat turn type
unsubscribe update upgrade upload use validate verify wait warn wrap write
apologise apologize approve greet highlight invite loop proofread thank waive
""".split())
def task_verbs() -> frozenset[str]:
    """The base-form task verbs an instruction to an agent opens with."""
    return _VERBS


#: objects that make an imperative small talk ("Keep it up", "Take care", "Let me know")
_SMALL_TALK_OBJECT = re.compile(
    r"^(?:it|that|this|them|yourself|yourselves|me (?:posted|updated|informed|know)|care|going|up|at it|in touch|"
    r"on|pushing|trying|moving|smiling|a (?:shot|try|look|break|breath|deep breath)|a (?:moment|second|minute)(?!\s+\w)|"
    r"some (?:rest|time)|your (?:time|head|chin)|the faith|faith|calm|safe|strong|warm|cool|fun|easy)\b", re.I)

# -- sentence parts ------------------------------------------------------------------------------
_LEADS = re.compile(
    r"^(?:(?:hey|hi|oh|ok|okay|so|and|also|btw|by the way|one more thing|one last thing|quick one|quick thing|"
    r"please|kindly|again|alright|all right|right|yes|yeah|great|thanks|thank you|now|then|plus|important|"
    r"remember|note|reminder|heads up|rule|absolutely)\b\s*[:,;!\-—]*\s*)+", re.I)
_SCOPES = re.compile(
    r"^(?:from now on|from here on(?: out)?|going forward|moving forward|until further notice|for now|"
    r"for the rest of (?:this|the) (?:session|conversation|chat|project|call|week|day|ticket)|"
    r"in (?:this|the) (?:chat|conversation|session)|as a rule|in general|by default|"
    r"make it (?:a|your) (?:habit|rule|point|priority) to|make a (?:habit|point) of)\b\s*[:,;\-—]*\s*", re.I)
_LEAD_CLAUSE = re.compile(
    r"^(?P<lead>(?:whenever|each time|every time|any ?time|when(?! it comes)|if|once|before|after|until|"
    r"whatever|wherever|whoever|when it comes to|for|with|on|in|during|while)\b[^,;:]{2,90})\s*,\s*(?P<main>.+)$",
    re.I | re.S)
_LIGHT_LEADS = re.compile(r"^(?:(?:hey|hi|oh|ok|okay|so|and|also|btw|by the way|please|one more thing|plus)\b\s*[:,;!\-—]*\s*)+",
                          re.I)
_QUESTION = re.compile(r"\?\s*[\"')\]]*\s*$")

#: a sentence says its instruction stands (rather than asking for one thing once)
_STANDING = re.compile(
    r"\b(?:always|every|each|all|any|anything|everything|nothing|whenever|whatever|wherever|throughout|"
    r"exclusively|strictly|entirely|consistently|at all(?: times)?|anywhere|no matter|regardless|habit|"
    r"and nothing else|nothing (?:else|further|more)|only|just use|by default|going forward|from now on|"
    r"until (?:further notice|the (?:launch|end|release|audit))|for (?:this|the whole|the rest of (?:this|the)) "
    r"(?:account|customer|caller|client|chat|session|week|project|trip|audit|ticket|team|board|case|conversation)|"
    r"with this (?:customer|caller|client|vendor|account)|this week|on my behalf|in (?:all|every|each|any) )\b", re.I)

# -- kinds by form ---------------------------------------------------------------------------------
_PROHIBIT_VERB = re.compile(
    r"^(?:avoid|refrain from|steer clear of|keep away from|stay away from|keep clear of|hold off on|"
    r"stop (?!by\b|in\b)\w+ing|skip\b|leave (?:.+ )?(?:alone|untouched|as it is|as is|out of)|quit \w+ing|"
    r"cease|desist|never again)\b", re.I)
_RESTRICT_VERB = re.compile(
    r"^(?:limit|restrict|cap|confine|stick (?:to|with)|stay (?:within|under|below|inside)|"
    r"keep (?:[\w'’-]+ ){1,6}?(?:under|below|within|to|short|brief|formal|between|in)\b|keep (?:it|things) "
    r"(?:under|below|within|short|brief|formal)|use (?:only|just)|"
    r"(?:respond|reply|answer|write) (?:only )?in\b)", re.I)
_MODAL_YOU = re.compile(
    r"^(?:you(?:'ll| will)? (?:must|have to|need to|are required to|are expected to|ought to|should|"
    r"will need to|are to|have got to|'ve got to|got to)|you're (?:required|expected|to)\b|"
    r"you're required to|(?:i|we) (?:need|want|'d like|would like|expect|require) you to|"
    r"(?:i|we)(?:'d| would) (?:like|love|prefer) you to|"
    r"(?:i|we)(?:'d| would)? (?:need|want|like|expect) (?:all|every|each|any|the|your) )\s*", re.I)
_MODAL_YOU_NOT = re.compile(
    r"^(?:you (?:must not|mustn't|should not|shouldn't|cannot|can't|can never|may not|are not to|aren't to|"
    r"are not allowed to|aren't allowed to|are not permitted to|will not|won't)|you're not (?:to|allowed to)|"
    r"(?:i|we) (?:don't|do not) want you(?: to)?)\b", re.I)
# a subject that an instruction is about: the agent's output, a quantified thing, a thing of the task
_SUBJECT = (r"(?:(?:your|all (?:the |of your |your )?|every|each|any|no|the|our|my|this|these)\s+)?"
            r"(?:[\w'’/$-]+\s+){0,6}?")
_MODAL_THING = re.compile(
    r"^(?P<subject>" + _SUBJECT + r")(?P<modal>must(?: not| never)?|mustn't|has to|have to|needs to|need to|"
    r"should(?: not| never)?|shouldn't|shall(?: not)?|is (?:not )?to|are (?:not )?to|cannot|can't|can only|can never|"
    r"may only|may not|is required to|are required to|is expected to)\s+(?P<rest>.+)$", re.I | re.S)
_PRONOUN_SUBJECT = re.compile(r"^(?:it|that|this|he|she|they|we|i|you|there|everyone|everybody|people|life|"
                              r"things|someone|somebody|one|who)\s*$", re.I)
_EPISTEMIC = re.compile(r"^(?:be (?:so |really |very |such |quite |pretty |a |an |the )|"
                        r"be (?:tired|exhausted|worried|thrilled|excited|bored|stressed|surprised|amazed|pleased|"
                        r"delighted|relieved|scared|interested|impressed|overwhelmed|drained|shocked|starved|frozen)\b|be (?!(?:in|under|below|within|at|on|sent|written)\b)\w+(?<!ed)(?<!en)\b(?! (?:by|to|in|on|with|at|for|before|after|within|as|from)\b)|"
                        r"have (?:been|had|felt|seen|done|gone|made|taken)|feel|seem|look)", re.I)
_STATE_PROHIBIT = re.compile(
    r"\b(?:is|are) (?:off[- ]limits|forbidden|prohibited|banned|not allowed|not permitted|out of bounds|"
    r"not to be (?:used|shared|touched|changed|mentioned|sent|opened|deleted|given|shown|forwarded|discussed))\b|"
    r"^it(?:'s| is) (?:forbidden|prohibited|not allowed|not ok(?:ay)?|against (?:the )?(?:rules|policy)) to\b|"
    r"^(?:nothing|nobody|no one|none of)\b.+\b(?:goes|go|gets|get|leaves|leave|is|are|should|must|can)\b|"
    r"^mum's the word\b|\bstrictly between\b|\bunder no circumstances\b", re.I)
_NO_NOUN = re.compile(r"^no (?:more )?(?!more than|worries|worry|problem|problems|way|doubt|pressure|kidding|idea|clue|"
                      r"rush|big deal|thanks|thank|wonder|matter|offense|offence|hard feelings|one|time|need|"
                      r"longer|shame|biggie|judgment|judgement|joke|chance|luck|comment)(?P<what>[\w'-]+)", re.I)
_LIMIT = re.compile(
    r"\b(?:capped at|at (?:the )?most|tops\b|no more than|not more than|up to a maximum of|at a maximum|"
    r"maximum (?:of|is)|the (?:maximum|max|limit|cap|minimum) (?:[\w-]+ ){0,4}?(?:is|are)|in scope|out of scope|"
    r"can(?:not|'t)? exceed|must not exceed|not exceed|under \d|below \d|fewer than \d|less than \d|"
    r"nothing further|nothing else|exclusively|throughout|has to be|have to be|needs to be|need to be|must be)\b", re.I)
_PERMIT = re.compile(
    r"^(?:you(?:'re| are) (?:free|welcome|allowed|permitted|authori[sz]ed|cleared|entitled|fine) to|"
    r"consider yourself (?:cleared|free|authori[sz]ed|allowed) to|"
    r"you (?:have|'ve got|got) (?:my |the |full )?(?:permission|green light|go-ahead|go ahead|blessing|ok|okay|"
    r"clearance|authority) to|(?:i|we) (?:give|grant) you (?:the |my |full )?(?:go-ahead|go ahead|green light|"
    r"permission|ok|okay|authority|clearance)|permission (?:granted|given)|"
    r"it(?:'s| is) (?:fine|ok|okay|alright|all right|acceptable) (?:for you )?to|"
    r"(?:i'm|i am|we're|we are) (?:ok|okay|fine|happy|good|cool) with you|"
    r"(?:there's )?no need to (?:ask|check with|consult|run it by|get (?:my )?approval)|"
    r"you (?:don't|do not|won't|no longer) need (?:to ask|to check|my (?:ok|okay|approval|permission))|"
    r"feel free to|go ahead and|you (?:can|may) (?:always )?)\b", re.I)
_PERMIT_STRONG = re.compile(
    r"\b(?:allowed|permitted|authori[sz]ed|cleared|permission|green light|go-ahead|blessing|"
    r"no need to (?:ask|check)|(?:don't|do not) need to (?:ask|check)|on my behalf|without (?:asking|checking|"
    r"my (?:approval|review|ok|okay|sign-off)|a review|review)|whenever|if (?:something|anything|it|they|you)|"
    r"as long as|up to)\b", re.I)
_PERMIT_SOCIAL = re.compile(
    r"\b(?:reach out|ask (?:me )?(?:anything|away|questions?)|share (?:more|anything|your)|talk|chat|vent|"
    r"drop (?:by|me a line)|hit me up|message me|call me|text me|come|join|visit|stop by|relax|rest|cry|feel|"
    r"be (?:yourself|sad|upset)|take (?:a break|your time|it easy)|make mistakes|say no)\b", re.I)
_APPROVAL = re.compile(
    r"\b(?:(?:is|are|was|were|been|be|as|'s|’s) (?:now |hereby |officially )?(?:approved|authori[sz]ed|signed off)(?! of)|"
    r"^approved\b|approval (?:granted|given|stands)|my approval|(?:my|your|their|the) sign-?off|"
    r"sign(?:ed|ing|s)? off on|(?:i|we) (?:hereby )?(?:approve|authori[sz]e)(?! of)|hereby approve|"
    r"(?:gave|give|gives|given|has given) (?:the |their |his |her |my |our )?(?:ok|okay|go-ahead|green light|"
    r"approval|blessing|thumbs up) (?:to|for|on)|green light (?:from me|on)|consider (?:.+ )?approved)\b", re.I)
_DEADLINE_MORE = re.compile(
    r"\b(?:(?:by|before|until|no later than|due(?: on| by)?|deadline(?: for [\w' -]+?)? is)\s+(?:the\s+)?"
    r"(?:end of (?:the )?(?:day|week|month|quarter|year|business)|close of business|cob|eod|eow|"
    r"(?:next |this )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|week|month)(?: (?:morning|"
    r"afternoon|evening|at \d{1,2}(?::\d{2})?\s*(?:am|pm)?))?|(?:\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)\s*)?"
    r"(?:tomorrow|today|tonight)(?: (?:morning|noon|afternoon|evening|night))?|"
    r"\d{1,2}(?:st|nd|rd|th)\b|(?:january|february|march|april|may|june|july|august|september|october|"
    r"november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.? \d{1,2}|"
    r"\d{1,2} (?:january|february|march|april|may|june|july|august|september|october|november|december)|"
    r"midnight|noon|\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)|\d{1,2}:\d{2})|"
    r"within (?:the |an |a |one |two |three |four |five |\d+ )?(?:hour|hours|day|days|minutes|weeks|business days|"
    r"working days)|at the latest|in (?:\d+|one|two|three|four|five) (?:hours|days|weeks),? tops|"
    r"(?:is|are) due\b|due (?:on|by|end|at)\b|last (?:working|business) day of|"
    r"(?:by|before|no later than)\b[^.!?]{0,40}?\b(?:on )?(?:the )?\d{1,2}(?:st|nd|rd|th)\b)", re.I)
_PAST = re.compile(r"\b(?:was|were|had|did|went|got|ago|yesterday|last (?:year|month|week|night|time)|used to)\b", re.I)
_PREREQ = re.compile(
    r"\b(?:prior to|ahead of (?:every|each|any|the|a)|as a first step|first,? then|first\b.*\bthen\b|"
    r"\bfirst\s*[,.]?\s*then\b|only (?:\w+ ){1,6}?after\b|not before\b|and not before|comes? after\b|"
    r"(?:has|have|needs?|must) to wait (?:until|for)|requires? (?:.+ )?first\b|until (?:.+ )?"
    r"(?:is|are|has been|have been|gets?|has)\s+(?:\w+ )?(?:verified|confirmed|cleared|approved|signed|done|"
    r"finished|complete|completed|received|paid|exported|checked|reviewed|tested|backed up|processed)|"
    r"until (?:the |my |our |your )?\w+ (?:clears?|arrives?|is in|lands?|exports?|confirms?|signs?|"
    r"approves?|finish(?:es)?|completes?)|"
    r"before (?:you |deleting|touching|closing|issuing|any|every|each|the |it |they |we |running|sending|"
    r"making|deploying|publishing|looking|booking|changing|wiping|shipping|merging|cancel+ing|transferring|"
    r"releasing|removing|refunding|charging|paying|signing|submitting|starting|doing))", re.I)
_EVIDENCE_LEAD = re.compile(
    r"^(?:for the record|for (?:future |your )?reference|for context|important context|just so you know|"
    r"so you know|fyi|for your information|(?:please )?note(?: that|:)|please note|take note|noting(?: for [\w ]+)?:|"
    r"keep (?:this |that )?in mind(?: that)?|bear (?:this |that )?in mind(?: that)?|remember(?: that|:)|"
    r"don't forget(?: that)?|do not forget(?: that)?|worth (?:remembering|noting|knowing)(?: that)?|"
    r"as evidence|for evidence|evidence:|(?:please )?keep on file(?: that)?|to be clear|be aware(?: that)?)"
    r"\s*[:,;\-—]*\s*", re.I)
_EVIDENCE_DOC = re.compile(
    r"^(?:the |this |that |my |our |their |his |her |its )?(?:[\w'’-]+(?:'s|’s) )?(?:[\w-]+ ){0,2}?"
    r"(?:receipt|invoice|log|logs|log file|screenshot|statement|record|records|ticket|report|note|chat log|"
    r"email|e-mail|letter|contract|photo|photos|picture|tracking|monitoring|graph|graphs|audit|reading|warranty|"
    r"history|video|recording|footage|document|documentation|timestamp|trace|stack trace|error|message|card|"
    r"label|order|form|transcript|confirmation|reply|response)(?: (?:i|we|you|they) (?:sent|shared|got|attached|"
    r"received|uploaded|forwarded))?\s+(?:clearly |also |only )?(?:shows?|showed|proves?|proved|confirms?|confirmed|"
    r"states?|stated|says|said|lists?|listed|indicates?|indicated|documents?|mentions?|mentioned|reads|has|"
    r"contains?|is dated|was dated|was issued|were issued)\b|^it(?:'s| is| was) (?:documented|recorded|noted|"
    r"logged|confirmed|on record|in writing)\b", re.I)
_DECISION_STRONG = re.compile(
    r"^(?:decision|final (?:answer|decision)|verdict|the verdict is in|agreed|settled|it's settled|so it's settled|"
    r"the decision is|our decision is|the plan is|the new plan is|our plan is|the (?:approach|strategy) is|"
    r"our (?:approach|strategy) (?:is|will be))\b\s*[:,]?\s*|^the (?:chosen|selected|agreed|preferred) \w+ (?:is|are)\b",
    re.I)
_DECISION_WEAK = re.compile(
    r"^(?:(?:we|i)(?:'ve| have)? (?:decided|agreed|chosen|opted|settled|voted|committed)(?: to| on| for| that)?|"
    r"the (?:team|board|group|committee) (?:voted|decided|agreed|chose)(?: to| on| for)?|"
    r"(?:we're|we are|i'm|i am) (?:going with|standardi[sz]ing on|sticking with|switching to|moving to)|"
    r"going with|we(?:'ll| will| shall) (?:go with|take|pick|choose|use|book|ship|handle|run|launch|"
    r"order|hold|send|move|switch|migrate|adopt|standardi[sz]e|lock in|stick with)|"
    r"i(?:'ll| will) (?:go with|take|pick|choose) (?:option|plan|the|version)|"
    r"let's|let us)\b\s*", re.I)
_LETS_SOCIAL = re.compile(
    r"^(?:let's|let us) (?:catch up|hang out|hang|meet|grab|get together|keep (?:in touch|going|pushing|working|"
    r"growing|it up|at it|each other|supporting|talking|chatting|this|that)|see|do (?:it|this|that)|go\b(?! with)|"
    r"talk|chat|hope|celebrate|plan (?:a|to|something)|try|make (?:it|this|the most|sure)|stay|have|be|"
    r"continue|never|not|get|do)\b", re.I)
_RESET = re.compile(
    r"\b(?:forget (?:everything|all (?:of )?(?:that|this|the above|we|i)|what we(?:'ve)? (?:said|discussed|agreed|"
    r"decided)|it all)|scrap (?:all (?:of )?(?:that|this)|everything|that|this|the (?:plan|whole thing))|"
    r"(?:^|[.!?:;]\s*|let's |let us |we(?:'ll| will) )start (?:over|again|afresh|fresh|from scratch)|"
    r"(?:rethink|redo|restart|plan) (?:this|it|everything) from (?:the top|scratch)|wipe the slate clean|"
    r"(?:^|[.!?]\s*)clean slate\b|"
    r"disregard (?:everything|all|what we|what i|the (?:earlier|previous|old) (?:plan|decision)s?)|"
    r"ignore (?:all|everything) (?:the )?(?:previous|earlier|before|up to now|so far)|"
    r"(?:let's|let us) (?:reset|rethink)\b(?! and)|full reset|reset:|throw out the (?:plan|idea)|change of plan|"
    r"back to square one|tear it up|(?:everything|all) (?:we|i)(?:'ve)? (?:discussed|said|agreed|decided)\b.*\boff the table|"
    r"cancel everything|drop the (?:earlier|previous|old|original) plan|new plan(?: replacing|:)|"
    r"new direction|replacing the old one|everything up to now)\b", re.I)


def _strip(sentence: str) -> str:
    """The sentence without lead words and scope markers (repeatedly), trailing punctuation kept."""
    s = sentence.strip()
    for _ in range(4):
        before = s
        s = _LEADS.sub("", s)
        s = _SCOPES.sub("", s)
        if s == before:
            break
    return s


def main_clause(sentence: str) -> tuple[str | None, str]:
    """``(lead clause or None, main clause)`` of a sentence ("Whenever X, do Y" -> ("Whenever X", "do Y"))."""
    s = _strip(sentence)
    m = _LEAD_CLAUSE.match(s)
    if m and not re.match(r"^(?:if|when) (?:so|not|possible|needed|you can|you want|you like)\b", m.group("lead"), re.I):
        return m.group("lead"), _strip(m.group("main"))
    return None, s


def concrete(text: str) -> bool:
    """True when the text names a thing of the task: a task noun, a number, an amount or an id."""
    return bool(_TASK_NOUN.search(text) or _CONCRETE.search(text))


_PRE_VERB = (r"^(?:(?:please|kindly|just|do|also|always|now|then|consistently|strictly|carefully|clearly|politely|"
             r"briefly|properly|promptly|immediately|simply|gently|quickly|personally|manually|automatically|"
             r"only|explicitly|regularly|routinely)\s+)*")


def _first_word(clause: str) -> str:
    m = re.match(_PRE_VERB + r"([a-z][a-z-]*)", clause, re.I)
    return m.group(1).lower() if m else ""


def imperative(clause: str) -> bool:
    """The clause opens with a base-form task verb and its object is not small talk."""
    verb = _first_word(clause)
    if verb not in _VERBS:
        return False
    rest = re.sub(_PRE_VERB + r"[a-z-]+\s*", "", clause, flags=re.I)
    rest = re.sub(r"^(?:out|up|off|on|in|back|over|away|through)\s+", "", rest, flags=re.I)
    return not _SMALL_TALK_OBJECT.match(rest)


def _deadline(sentence: str) -> bool:
    return bool(_DEADLINE_MORE.search(sentence))


#: advice names the listener's benefit ("... so you get a handle on it"); an instruction does not
ADVICE = re.compile(r"\bso (?:that )?you(?:'ll| will| can| get| have| know| don't| won't| feel)\b", re.I)


def classify(sentence: str) -> tuple[str, str] | None:
    """``(kind, rule)`` for a sentence that states a standing instruction, else None.

    :param sentence: one sentence of a user message, verbatim.
    """
    s = sentence.strip()
    if not s or _QUESTION.search(s) or ADVICE.search(s):
        return None
    lead, main = main_clause(s)
    low = main.lower()
    whole = _strip(s)

    # evidence: a marked fact, or a document that shows something
    light = _LIGHT_LEADS.sub("", s)
    ev = _EVIDENCE_LEAD.match(light)
    if ev and not s.rstrip().endswith("!"):
        fact = light[ev.end():]
        if concrete(fact) and not re.match(r"^(?:i|we)\b(?!'ve)", fact, re.I) or _EVIDENCE_DOC.match(fact):
            return "evidence", "evidence"
    if _EVIDENCE_DOC.match(whole) and not s.rstrip().endswith("!") and concrete(whole):
        return "evidence", "evidence_document"

    # approvals and permissions
    if _APPROVAL.search(whole) and concrete(whole) and not re.search(r"\bapprove of\b", whole, re.I):
        return "approval", "approval_statement"
    pm = _PERMIT.match(main) or _PERMIT.match(whole)
    if pm:
        rest = (main if _PERMIT.match(main) else whole)[pm.end():].strip()
        rest = re.sub(r"^(?:go ahead and|now|also|always)\s+", "", rest, flags=re.I)
        opener = pm.group(0).lower().strip()
        strong = bool(_PERMIT_STRONG.search(opener) or _PERMIT_STRONG.search(rest))
        # "you can / may / go ahead and" are permissions only with a task verb ("You can use my
        # card for ..."), never "you can do it"; every form needs a thing of the task
        weak = opener.startswith(("you can", "you may", "go ahead"))
        if not _PERMIT_SOCIAL.match(rest) and concrete(rest) and (not weak or strong or _first_word(rest) in _VERBS):
            if _deadline(s) and not strong:
                return "deadline", "deadline_form"
            return "permission", "permission_form"

    # decisions (policy state)
    strong = _DECISION_STRONG.match(whole)
    if strong and len(whole.split()) >= 4 and not _PAST.search(whole[:40]) and not s.rstrip().endswith("!") and (
            concrete(whole[strong.end():]) or re.match(r"^(?:decision|final|the decision|the plan|our plan|the new plan|"
                                                       r"the verdict)\b", whole, re.I)):
        return "policy_state", "decision"
    dm = _DECISION_WEAK.match(whole)
    if dm and not _LETS_SOCIAL.match(whole) and concrete(whole[dm.end():]) and not s.rstrip().endswith("!") \
            and not re.search(r"\b(?:last|ago|yesterday)\b", whole, re.I):
        rest = whole[dm.end():]
        # "let's" decides only when it selects or schedules ("Let's go with ...", "Let's hold the
        # workshop on Monday"), not when it proposes an activity ("Let's create some content")
        if not dm.group(0).lower().startswith("let") or re.match(
                r"^(?:go with|use|lock in|pick|choose|opt for|settle on|switch to|stick with|start with|launch|ship|"
                r"postpone|delay|push back|move|hold|book|order|run|send|schedule|standardi[sz]e|target|keep|drop|"
                r"cancel|set)\b", rest, re.I):
            return "policy_state", "decision"

    # prohibitions stated as a state of things
    if _STATE_PROHIBIT.search(whole):
        return "constraint", "prohibition_state"
    nm = _NO_NOUN.match(main)
    if nm and (concrete(main) or _STANDING.search(main)) and len(main.split()) >= 3:
        if _PREREQ.search(main):
            return "prerequisite", "prerequisite_form"
        return "constraint", "prohibition_state"

    # the agent addressed with a modal
    if _MODAL_YOU_NOT.match(main) and (concrete(main) or _STANDING.search(s)):
        return "constraint", "modal_not"
    mm = _MODAL_YOU.match(main)
    if mm:
        rest = main[mm.end():]
        if not _EPISTEMIC.match(rest) and (concrete(rest) or _STANDING.search(s)):
            if _deadline(s):
                return "deadline", "deadline_form"
            if _PREREQ.search(s) or lead and re.match(r"^(?:before|once|after|until)\b", lead, re.I):
                return "prerequisite", "prerequisite_form"
            return "obligation", "modal"
    m = _MODAL_THING.match(main)
    if m and not _PRONOUN_SUBJECT.match(m.group("subject")) and not _EPISTEMIC.match(m.group("rest")):
        subject = m.group("subject")
        if concrete(subject):
            modal = m.group("modal").lower()
            if _deadline(s):
                return "deadline", "deadline_form"
            if _PREREQ.search(s):
                return "prerequisite", "prerequisite_form"
            if re.search(r"not|n't|never|only", modal) or _LIMIT.search(m.group("rest")):
                return "constraint", "modal_thing"
            return "obligation", "modal_thing"

    # "It's essential that you ...", "I need you to ..." already above; "It's essential/important that"
    if re.match(r"^it(?:'s| is) (?:essential|important|crucial|vital|critical|mandatory|required|a must) that "
                r"(?:you|we|every|all|each|the)\b", whole, re.I) and concrete(whole):
        return "obligation", "necessity"

    # imperatives
    if imperative(main):
        if _PROHIBIT_VERB.match(re.sub(r"^(?:please |kindly |just |also )*", "", main, flags=re.I)):
            return "constraint", "prohibit_verb"
        if _deadline(s) and (concrete(main) or _STANDING.search(s)):
            return "deadline", "deadline_form"
        if (_PREREQ.search(s) or lead and re.match(r"^(?:before|once|after|until)\b", lead, re.I)) \
                and concrete(s):
            return "prerequisite", "prerequisite_form"
        if _RESTRICT_VERB.match(re.sub(r"^(?:please |kindly |just |also )*", "", main, flags=re.I)) and concrete(main) \
                or re.match(r"^just use\b", main, re.I):
            return "constraint", "restrict_verb"
        restrictive = re.search(r"\b(?:exclusively|throughout|and nothing else|nothing else|strictly|only)\b", main, re.I)
        if restrictive:
            return "constraint", "imperative_limit"
        if _STANDING.search(s) or lead and re.match(r"^(?:whenever|each time|every time|any ?time|when|if|whatever|"
                                                    r"for|with)\b", lead, re.I):
            if concrete(s):
                limit = _LIMIT.search(main) and re.search(r"\b(?:only|exclusively|nothing else|nothing further|"
                                                          r"throughout|under|below|at most)\b", main, re.I)
                return ("constraint", "imperative_limit") if limit else ("obligation", "imperative")
    elif _PROHIBIT_VERB.match(main) and concrete(main):
        return "constraint", "prohibit_verb"

    # limits stated of a thing ("The budget is capped at $1,500", "The report can be two pages at most")
    if _LIMIT.search(whole) and concrete(whole) and re.search(
            r"\b(?:capped at|at (?:the )?most|no more than|not more than|maximum|max|in scope|out of scope|"
            r"exceed|tops)\b", whole, re.I) and not _PAST.search(whole):
        return "constraint", "limit"

    # deadlines stated of a thing ("The quote is due end of day Friday", "Deadline for X is Monday")
    if _deadline(s) and not _PAST.search(s) and (concrete(s) or re.search(r"\b(?:due|deadline)\b", s, re.I)) and (
            imperative(main) or re.search(r"\b(?:due|deadline|has to|have to|must|needs? to|should|i need|i want|"
                                          r"we need|get (?:it|this|that|the)|turn .+ around)\b", s, re.I)):
        if not re.match(r"^(?:i|we)(?:'ll|'m| will| am| was| have| had)\b", whole, re.I):
            return "deadline", "deadline_form"

    # prerequisites stated of a thing ("X requires Y first", "X has to wait until Y", "X comes after Y")
    if _PREREQ.search(whole) and concrete(whole) and not _PAST.search(whole) and re.search(
            r"\b(?:requires?|has to wait|have to wait|must wait|needs? to wait|comes? after|not before|prior to|"
            r"only .+ after|first\b.*\bthen)\b", whole, re.I):
        return "prerequisite", "prerequisite_form"
    return None


def is_reset(text: str) -> bool:
    """True when a message throws away the plan so far ("Forget everything we've said so far: ...")."""
    return bool(_RESET.search(text))


# -- withdrawals -------------------------------------------------------------------------------------
_WITHDRAW_ABOUT = re.compile(
    r"\b(?:forget|disregard|ignore|scratch|cancel|drop|lift|remove|withdraw|rescind|undo|never mind|nevermind)\s+"
    r"(?:what i (?:said|told you|asked)|my (?:earlier |previous |last |original )?(?:instruction|rule|request|note|"
    r"restriction|ban|requirement)s?|the (?:earlier |previous |old )?(?:rule|restriction|instruction|ban|"
    r"requirement|limit|constraint)s?)\s+(?:about|on|regarding|re|for|against|to|concerning)\s+(?P<what>[^.!?;]+)",
    re.I)
_WITHDRAW_STATE = re.compile(
    r"^(?P<what>.+?)\s+(?:ban|restriction|rule|requirement|limit|constraint|instruction)s?\s+(?:is|are|has been|"
    r"have been)\s+(?:now )?(?:lifted|over|cancell?ed|revoked|removed|dropped|gone|off|void|no longer needed)\b|"
    r"^(?P<what2>.+?)\s+(?:ban|restriction|rule|requirement|limit|constraint)s?\s+no longer applies\b", re.I)
_WITHDRAW_LIFT = re.compile(
    r"\b(?:i(?:'m| am)|we(?:'re| are)) (?:lifting|dropping|removing|cancell?ing|ending|withdrawing) the "
    r"(?:restriction|ban|rule|requirement|limit) (?:on|about|against|for|regarding) (?P<what>[^.!?;]+)", re.I)
_WITHDRAW_FINE = re.compile(
    r"^(?P<what>(?!it\b|that\b|this\b|everything\b|all\b|things\b|i\b|we\b|you\b).+?)\s+(?:is|are)\s+(?:totally |"
    r"perfectly |completely )?(?:fine|ok|okay|allowed|permitted|alright|all right|open|back on|acceptable)\s*"
    r"(?:(?:for \w+ )?again|after all|now|from now on|once more)\b", re.I)
_WITHDRAW_CAN_NOW = re.compile(
    r"^(?P<what>(?!it\b|that\b|this\b|they\b|i\b|we\b|you\b).+?)\s+can (?:now )?be\s+(?P<verb>\w+ed|\w+en|sent|"
    r"shared|made|done|kept|put|set|run)\b(?:.*?)\b(?:now|again|after all)\b", re.I)
_WITHDRAW_NO_LONGER = re.compile(
    r"\b(?:no need to (?:keep |continue )?|you (?:don't|do not|no longer) (?:need|have) to (?:keep |continue )?|"
    r"stop |you can stop |quit )(?P<what>\w+ing\b[^.!?;,]*?|\w+ [^.!?;,]*?)(?:[,;]\s*(?:it's|it is|that's) "
    r"(?:not (?:needed|necessary)|no longer (?:needed|necessary))|\s+(?:anymore|any more|any longer))\b", re.I)
_WITHDRAW_DROP_NOW = re.compile(r"\byou can (?:now )?(?:drop|skip|forget|ignore|stop) (?P<what>[^.!?;]+?)\s+(?:now|"
                                r"from now on|again|anymore)\b", re.I)


def withdrawn_terms(sentence: str) -> str | None:
    """The words naming what a sentence withdraws ("Scratch the rule about the shared printer." ->
    "the shared printer"), or None when it withdraws nothing."""
    s = _strip(sentence)
    for pattern in (_WITHDRAW_ABOUT, _WITHDRAW_LIFT, _WITHDRAW_STATE, _WITHDRAW_FINE, _WITHDRAW_CAN_NOW,
                    _WITHDRAW_NO_LONGER, _WITHDRAW_DROP_NOW):
        m = pattern.search(s)
        if m:
            groups = {k: v for k, v in m.groupdict().items() if v}
            what = groups.get("what") or groups.get("what2") or ""
            if groups.get("verb"):
                what = f"{what} {groups['verb']}"
            return what
    return None


# a go signal for a waiting record: an explicit confirmation, or the condition met / the gated
# action asked for now (weaker: the tracker then wants two shared words with the record)
_GO_EXPLICIT = re.compile(
    r"\b(?:confirmed|i confirm|i say so|go ahead|approved|green light|you're clear|you are clear|clear to|"
    r"you have (?:the|my) (?:word|ok|okay|go-ahead))\b", re.I)
_GO = re.compile(
    r"\b(?:all good|can go (?:through|ahead|out)|\w+ away\b|replied yes|said yes|is correct|are correct|passed|arrived|"
    r"is done|are done|i've (?:checked|reviewed|read|verified)|(?:was|were|has been|have been) "
    r"(?:returned|received|verified|checked|done|signed)|you can|you may|ok\b|okay\b|yes\b|yep\b)", re.I)


def go_signal(sentence: str) -> str | None:
    """``"explicit"`` when a sentence confirms outright ("Confirmed, send the invoice.", "Green
    light on cancelling the account."), ``"weak"`` when it says the condition is met or asks
    for the action ("The goods arrived this morning, release the payment."), else None."""
    s = _strip(sentence)
    if _QUESTION.search(s) or re.search(r"\b(?:not yet|don't|do not|never|wait|hold on|hold off)\b", s, re.I):
        return None
    if _GO_EXPLICIT.search(sentence):
        return "explicit"
    if s.rstrip().endswith("!"):  # "Keep doing what makes you happy!" is cheering, not a go-ahead
        return None
    if _GO.search(sentence):
        return "weak"
    parts = [p.strip() for p in re.split(r"[,:;]|\bso\b", s) if p.strip()]
    return "weak" if any(imperative(p) for p in parts) else None


def withdraws_explicitly(sentence: str) -> bool:
    """True when a withdrawal names the instruction it ends ("the rule about X", "the X ban is
    lifted", "forget what I said about X"), rather than only saying X is fine now."""
    s = _strip(sentence)
    return any(p.search(s) for p in (_WITHDRAW_ABOUT, _WITHDRAW_LIFT, _WITHDRAW_STATE))


def withdraws_about(sentence: str) -> bool:
    """True for "forget what I said about X" (a withdrawal of X, not a reset of everything)."""
    return bool(_WITHDRAW_ABOUT.search(_strip(sentence)))
