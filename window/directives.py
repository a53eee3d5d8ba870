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
from functools import lru_cache

from ..memory import families
from ..memory.families import family
from . import prefilter

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
    r"will need to|are to|have got to|got to)|you've got to|you're (?:required|expected|to)\b|"
    r"you're required to|(?:i|we) (?:need|want|would like|expect|require) you to|"
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
    r"you(?: have| have got|'ve got| got) (?:my |the |full )?(?:permission|green light|go-ahead|go ahead|blessing|ok|okay|"
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
    r"(?:let's|let us) (?:reset|rethink)\b(?! and)|full reset|reset(?=:\s*\w)|throw out the (?:plan|idea)|change of plan|"
    r"back to square one|tear it up|(?:everything|all) (?:we|i)(?:'ve)? (?:discussed|said|agreed|decided)\b.*\boff the table|"
    r"cancel everything|drop the (?:earlier|previous|old|original) plan|new plan(?: replacing|(?=:\s*\w))|"
    r"new direction|replacing the old one|everything up to now)\b", re.I)


# -- round 4: phrasing classes (issue 20, point 10) --------------------------------------------------
# Each family below generalises one class of phrasing, registered with the phrasing sets whose
# misses it was written from (``memfold.memory.families``; ``bench/phrasing_retention.py --loso``
# turns off the families a held-out set alone motivated).
F_FREQUENCY = family("frequency_lead", {"fresh2", "r4own"})
F_DUTY = family("duty_forms", {"heldout", "r4own"})
F_PROHIBIT = family("prohibition_forms", {"heldout", "fresh", "fresh2", "r4own"})
F_TAG = family("tag_question", {"heldout"})
F_SCOPE = family("scope_forms", {"r4own"})
F_DATE = family("date_grammar", {"heldout", "fresh2", "r4own"})
F_APPROVAL = family("approval_forms", {"heldout", "r4own"})
F_EVIDENCE = family("evidence_forms", {"heldout", "fresh2", "r4own"})
F_DECISION = family("decision_forms", {"heldout", "fresh", "fresh2", "r4own"})
F_RESET = family("reset_grammar", {"fresh", "fresh2", "r4own"})
F_REPLACE = family("replacement", {"r4own"})
F_REVOKE = family("revoke_forms", {"heldout", "fresh", "fresh2", "r4own"})
F_WAITING = family("waiting_released", {"fresh"})
F_LIMIT_FORMS = family("limit_forms", {"heldout"})
F_PERMIT = family("permission_forms", {"heldout"})
# written from the misses of the second round-4 own set (measured once before they existed)
F_FREQUENCY_VERB = family("frequency_bare_verb", {"r4own2"})
F_EXISTENTIAL = family("existential_deontic", {"r4own2"})
F_DEADLINE_REQUEST = family("deadline_request", {"r4own2"})
F_APPROVAL_ACTIVE = family("approval_active", {"r4own2"})
F_DECISION_NAMED = family("decision_named_after_lead", {"r4own2"})
F_REPLACE_STATEMENT = family("replacement_statement", {"r4own2"})
F_NEVER_INVERSION = family("never_inversion", {"heldout", "r4own2"})
# written from an uncommitted spot check of 30 sentences after the sets were tuned on (so no set
# motivated them: never turned off by --loso)
F_SPOT = family("spot_forms", {"spot-check"})
_RESET_SPOT = re.compile(r"(?:^|[.!?;:,—]\s*)(?:never ?mind|forget about) (?:everything|all (?:of )?(?:that|this|the above))"
                         r"(?: (?:above|before|so far|until now|we said))?\b|\b(?:the|our) plans? (?:has|have) changed\b|"
                         r"\bplans have changed\b", re.I)
_GOOD_TO_GO = re.compile(r"^you(?:'re| are) (?:good to go|all set|cleared to proceed) (?:on|with|for) (?:the|this|that|my|our|a|an)\b",
                         re.I)
_MAKE_EVERY = re.compile(r"^(?:please\s+)?(?:make|have|let) (?:every|each|all|any) (?:[\w'-]+\s+){0,6}?"
                         r"(?:start|end|begin|include|carry|contain|mention|use|show|follow|open|close)\b", re.I)

#: "There must be no mention of X", "There should always be a second reviewer on refunds"
_EXISTENTIAL = re.compile(r"^there (?:must|should|shall|has to|needs to|is to|can)(?: (?:always|never|only))? be\s+"
                          r"(?P<neg>no|never|nothing|none)?\b", re.I)
_REQUEST_OBJECT = re.compile(r"^(?:i|we)(?:'d| would)? (?:need|want|expect|require|like)\s+(?:the|a|an|your|our|my|all|every|"
                             r"those|these|this|that)\b", re.I)
_APPROVAL_ACTIVE = re.compile(
    r"^(?:the |our |my |their )?(?:[\w-]+ ){0,3}?(?:rejected|declined|turned down|vetoed|refused|denied|blocked)\s+"
    r"(?:the|a|an|our|my|your|this|that|their)\b|"
    r"^(?:i'm|i am|we're|we are|i've|i have|we've|we have) (?:giving|granting|given|granted) you (?:the |my |our |full )?"
    r"(?:go-ahead|go ahead|green light|approval|ok|okay|sign-off|blessing|authori[sz]ation|clearance)\b", re.I)

#: a leading frequency or occasion ("Each morning, ...", "Every Monday, ...", "Daily, ...", "At the
#: end of each call, ...", "Once a week, ...", "On Fridays, ...")
_FREQUENCY_LEAD = re.compile(
    r"^(?P<lead>(?:(?:every|each)\s+(?:[\w'-]+\s+){0,3}?(?:morning|evening|night|day|week|month|quarter|year|"
    r"weekday|weekend|monday|tuesday|wednesday|thursday|friday|saturday|sunday|hour|shift|call|meeting|sprint|"
    r"release|time|order|ticket|visit|session|[\w-]+)|(?:once|twice|three times) (?:a|an|per|every) \w+|"
    r"daily|weekly|monthly|nightly|hourly|quarterly|yearly|annually|first thing(?: (?:each|every) \w+| in the morning)?|"
    r"at the (?:start|end|beginning|close|top|bottom) of (?:each|every|all|any|the) [\w' -]{2,40}|"
    r"on (?:weekdays|weekends|mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays)|"
    r"after (?:each|every) [\w' -]{2,40}|before (?:each|every) [\w' -]{2,40}))\s*,\s*(?P<main>.+)$", re.I | re.S)
#: a lead that states a duty, then the duty as a bare verb ("Please remember to attach ...", "It's
#: your job to chase ...", "You're supposed to copy ...", "I'm counting on you to confirm ...")
_DUTY_LEAD = re.compile(
    r"^(?:please\s+)?(?:(?:remember|don't forget|do not forget|be sure|take care|make sure|never forget|"
    r"you(?:'re| are) (?:supposed|obliged|obligated|meant|bound|expected|required)|"
    r"you(?:'ll| will) (?:always )?(?:want|have|need)|"
    r"it(?:'s| is| will be) (?:your|the assistant's) (?:job|task|duty|responsibility|role)|"
    r"your (?:job|task|duty|responsibility|role|standing order|standing instruction) is|"
    r"(?:i'm|i am|we're|we are) (?:counting on|relying on|trusting|depending on) you|"
    r"(?:i|we) (?:count on|rely on|depend on) you) to)\s+(?:always\s+)?(?P<rest>[a-z].*)$", re.I | re.S)
#: an attitude, not a task ("remember to stay patient throughout ...")
_ATTITUDE = re.compile(r"^(?:stay|keep|be|remain|feel)\s+(?:so |really |very )?(?:patient|positive|calm|strong|safe|focused|"
                       r"open|kind|humble|healthy|active|motivated|yourself|true|grounded|hydrated|curious|happy|"
                       r"optimistic|confident|brave|present|inspired)\b", re.I)
#: a bare verb opening a clause, whatever the verb ("chase unpaid invoices")
_BARE_VERB = re.compile(r"^(?!(?:i|we|you|he|she|they|it|the|a|an|my|our|your|be|have|do|not|never|always|so|just)\b)"
                        r"[a-z]+(?<!ed)(?<!ing)(?<!ly)\s+\w", re.I)
#: a gerund subject declared a must ("Attaching the receipt to each claim is mandatory.")
_GERUND_MUST = re.compile(
    r"^(?:always\s+)?(?P<subject>[a-z]+ing\b.{2,120}?)\s+(?:is|are)\s+(?:absolutely |strictly |always )?"
    r"(?:mandatory|required|compulsory|obligatory|a must|non-negotiable|essential|expected of you|a requirement)\b",
    re.I | re.S)
#: a quantified subject that needs or gets a thing ("Every summary you write needs a TL;DR at the top.")
_QUANTIFIED_NEEDS = re.compile(
    r"^(?P<subject>(?:every|each|all|any)\s+(?:[\w'’/-]+\s+){0,6}?)(?:needs?|requires?|gets?|must (?:have|get|carry|include)|"
    r"should (?:have|get|carry|include)|has to (?:have|carry|include)|have to (?:have|carry|include))\s+"
    r"(?P<rest>(?:a|an|the|its|their|one|two|three|\d)\b.+)$", re.I | re.S)
#: "you need X before Y" (a prerequisite without "to")
_NEED_BEFORE = re.compile(r"^you(?:'ll| will)? (?:need|require|must (?:have|get|obtain)|have to (?:have|get|obtain))\s+"
                          r"(?!to\b)(?P<what>.{2,80}?)\s+(?:before|prior to|ahead of)\s+\w+", re.I)
#: a tag question after a statement ("Mum's the word on the salaries, okay?") asks nothing
_TAG_QUESTION = re.compile(r",\s*(?:ok(?:ay)?|right|alright|all right|yeah|yes|got it|understood|deal|agreed|"
                           r"clear|please|thanks|capisce)\s*\?\s*[\"')\]]*\s*$", re.I)
#: a "must be" about a thing of the task is deontic unless the adjective judges an experience
#: ("The booking has to be refundable" vs "The trip must be exhausting")
_EVALUATIVE = re.compile(r"^be (?:so |really |very |quite |pretty |such )?(?:fun|nice|lovely|amazing|exhausting|tough|hard|"
                         r"great|awesome|cool|wonderful|exciting|tiring|stressful|beautiful|incredible|fantastic|"
                         r"terrible|awful|scary|crazy|weird|difficult|busy|boring|interesting|gorgeous|fascinating|"
                         r"rewarding|overwhelming|challenging|a (?:blast|relief|joy|lot|nightmare|dream))\b", re.I)
#: a reflexive restriction ("Restrict yourself to the three sources I gave you.")
_REFLEXIVE_RESTRICT = re.compile(r"^(?:restrict|limit|confine|keep) yourself to\b", re.I)
#: more ways to forbid by state or gesture ("Hands off the production database.")
_PROHIBIT_MORE = re.compile(r"^(?:(?:keep (?:your )?)?hands off|no touching|nobody touches|don't you dare)\b", re.I)

# dates and relative times a deadline can name
_MONTH = (r"(?:january|february|march|april|may|june|july|august|september|october|november|december|"
          r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.?")
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)"
_CLOCK = r"(?:\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)|\d{1,2}:\d{2}|noon|midday|midnight)"
_DATE = (r"(?:(?:the\s+)?(?:end|close|start|middle) of (?:the |this |next )?(?:day|week|month|quarter|year|business|play|"
         r"sprint|" + _WEEKDAY + r"|" + _MONTH + r")|close of business|cob|eod|eow|"
         r"(?:this |next |coming )?" + _WEEKDAY + r"(?:'s)?(?:\s+(?:morning|afternoon|evening|night|lunchtime))?(?:,?\s*(?:at\s+)?" + _CLOCK + r")?|"
         r"(?:tomorrow|today|tonight)(?:\s+(?:morning|afternoon|evening|night))?(?:,?\s*(?:at\s+)?(?:" + _CLOCK + r"|\d{1,2}\b))?|"
         r"(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?(?:\s+of)?\s+" + _MONTH + r"(?:\s+\d{4})?|" + _MONTH + r"\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?|"
         r"\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?|(?:the\s+)?\d{1,2}(?:st|nd|rd|th)\b(?:\s+of (?:this|next|the) month)?|"
         r"(?:at\s+)?" + _CLOCK + r"(?:\s+(?:today|tomorrow|on " + _WEEKDAY + r"))?|"
         r"(?:next|this|the coming) (?:week|month|quarter|year)|(?:the )?weekend)")
_DEADLINE_DATE = re.compile(
    r"\b(?:by|before|no later than|not later than|until|till|due(?: on| by| at)?|deadline(?: is| of)?:?|ahead of|"
    r"at the latest by)\s+" + _DATE + r"\b|"
    r"\b(?:within|in (?:the next|under)|inside)\s+(?:(?:a|an|one|two|three|four|five|six|seven|eight|ten|twelve|"
    r"twenty-four|forty-eight|\d+|a couple of|a few)\s+)?(?:fortnight|hours?|days?|weeks?|months?|minutes?|"
    r"business days?|working days?)\b|"
    r"\bin (?:a|an|one|two|three|four|five|\d+|a couple of) (?:hours?|days?|weeks?|fortnight)\b(?=[^.!?]*\b(?:at the latest|tops|max|"
    r"or less|latest)\b)|"
    r"\b(?:is|are) due\s+(?:on\s+)?" + _DATE + r"\b", re.I)
#: a clause shaped like an imperative whatever its verb ("Renew the SSL certificate ..."): a bare
#: word then a determiner or object pronoun (used only with a deadline)
_IMPERATIVE_SHAPE = re.compile(
    r"^(?:please\s+)?(?!(?:i|we|you|he|she|they|it|this|that|there|here|the|a|an|my|our|your|his|her|their|its|"
    r"what|who|how|when|why|where|which|and|but|so|or|if|then|just|also|thanks|thank|hope|happy|good|great|see|"
    r"enjoy|have|had|was|were|is|are|be|been|do|did|does|can|could|will|would|should|may|might|must)\b)"
    r"[a-z]+(?<!ed)(?<!ing)\s+(?:the|a|an|my|our|your|all|this|these|those|every|each|me|us|him|her|them)\b", re.I)
_CAUSATIVE = re.compile(r"^(?:please\s+)?(?:have|get)\s+(?:the |all |every |your |my |our |this |these |those )?"
                        r"[\w'-]+(?:\s+[\w'-]+){0,4}?\s+(?:\w+ed|done|sent|signed|written|drawn up|back|ready|finished|"
                        r"complete|live|in|out|up|over|sorted)\b", re.I)

# approvals granted or withheld
_APPROVAL_MORE = re.compile(
    r"\b(?:has|have|had)\s+(?:now |just |finally |already |officially )?(?:approved|authori[sz]ed|signed off on|"
    r"okayed|ok'd|greenlit|green-lit|cleared)\b(?! of\b)|"
    r"^(?:the |our |my )?(?:[\w-]+ ){0,3}?(?:approved|authori[sz]ed|okayed|greenlit|green-lit|signed off on)\s+"
    r"(?:the|a|an|our|my|your|this|that|these|those|\$|\d)|"
    r"\bconsider (?:.+ )?(?:approved|authori[sz]ed|signed off|green-?lit)\b|"
    r"\b(?:i've|i have|we've|we have) (?:given|granted) (?:the |my |our )?(?:go-ahead|go ahead|green light|approval|ok|"
    r"okay|sign-off|blessing) (?:for|to|on)\b", re.I)
_APPROVAL_WITHHELD = re.compile(
    r"\b(?:approval|sign-?off|go-ahead|authori[sz]ation|clearance)\b[^.!?]{0,60}?\b(?:is|are|has been|have been|was|remains?)"
    r"\s+(?:still\s+)?(?:withheld|denied|refused|rejected|declined|on hold|pending|not (?:yet )?(?:given|granted))\b|"
    r"\b(?:is|are|was|were|has been|have been)\s+(?:still\s+)?not\s+(?:yet\s+)?(?:approved|authori[sz]ed|signed off)\b|"
    r"\b(?:isn't|aren't|wasn't|hasn't been|haven't been)\s+(?:yet\s+)?(?:approved|authori[sz]ed|signed off)\b|"
    r"\b(?:hasn't|has not|haven't|have not|didn't|did not)\s+(?:yet\s+)?(?:approved?|signed off|authori[sz]ed?|"
    r"given (?:the |their |its )?(?:go-ahead|approval|sign-off|ok))\b|"
    r"\b(?:i|we)\s+(?:don't|do not|won't|will not|can't|cannot)\s+(?:approve|authori[sz]e|sign off on)\b|"
    r"\b(?:is|are|was|were|has been|have been)\s+(?:rejected|denied|declined|refused)\b|"
    r"\b(?:still\s+)?(?:awaiting|pending|needs|requires|waiting (?:on|for))\s+(?:the |my |your |their |legal |finance |"
    r"manager |management )?(?:approval|sign-?off|go-ahead|authori[sz]ation)\b", re.I)
_APPROVAL_OBJECT = re.compile(r"\b(?:green light|go-ahead|sign-?off|approval|blessing|ok)\b(?: from (?:me|us|\w+))?\s+"
                              r"(?:on|for|to)\s+(?:the|my|our|this|that|your|a|an)\s+\w+", re.I)

# evidence: documents sent, attached or cited
_DOC = (r"(?:receipt|invoice|log|logs|screenshot|screen ?shot|statement|record|records|ticket|report|photo|photos|picture|"
        r"pictures|image|video|recording|email|e-mail|letter|contract|tracking|scan|transcript|document|documentation|"
        r"confirmation|message|chat|graph|graphs|dashboard|audit|reading|trace|timestamp|bill|proof|footage|note|form|"
        r"certificate|readings|history|data|export|printout|file|spreadsheet)")
#: more documents a fact can be read from (round 5, family ``evidence_forms_r5``)
_DOC_R5 = r"(?:payslip|slip|manifest|waybill|deed|licen[cs]e|passport|minutes|notes|readout|bank letter|valuation|survey|quote)"
_EVIDENCE_MORE = re.compile(
    r"\b(?:sent|shared|attached|forwarded|uploaded|provided|submitted|emailed|posted|showed us|gave us)\s+"
    r"(?:us |me |you )?(?:a|an|the|their|his|her|its|this|two|three|\d+)\s+(?:[\w'-]+\s+){0,2}?" + _DOC +
    r"s?\b(?:\s+\w+){0,3}?\s+(?:showing|that shows|which shows|proving|that proves|confirming|that confirms|of|dated|"
    r"from|with|where)\b|"
    r"^(?:attached|enclosed|included) (?:is|are|you'll find|you will find)\b|^(?:here's|here is|here are) (?:the|a|an|my|our) "
    r"(?:[\w'-]+\s+){0,2}?" + _DOC + r"|"
    r"^according to (?:the |our |their |his |her |its |my |this |that )?(?:[\w'-]+(?:'s)?\s+){0,3}?" + _DOC + r"s?\b|"
    r"^as (?:the |our |their |his |her |my |this |that )?(?:[\w'-]+\s+){0,4}?" + _DOC + r"s?\b[^,]{0,40}?\s+"
    r"(?:shows?|showed|confirms?|confirmed|states?|stated|says|said|proves?|records?|recorded)\b|"
    r"\b(?:" + _DOC + r")s?\s+(?:clearly\s+)?(?:shows?|showed|proves?|proved|confirms?|confirmed)\s+(?:that\s+)?(?:the|a|an|"
    r"it|he|she|they|\w+ed|\d)", re.I)

# decisions
_DECISION_MORE = re.compile(
    r"^(?:final (?:call|word|verdict|answer|decision)|decided(?=\s*[:—-])|it's (?:decided|settled|official|final)|it is (?:decided|"
    r"settled|official|final)|done deal|we have a decision|the call is|the verdict|we've landed on|we have landed on|"
    r"we landed on)\b\s*[:,\-—]?\s*|"
    r"^(?:we're|we are|i'm|i am) (?:locking in|going for|opting for|settling on|moving ahead with|proceeding with|"
    r"adopting|picking|choosing|committing to|standardi[sz]ing on|sticking with|going with)\b\s*|"
    r"^(?:we|i)(?:'ve| have)? (?:settled on|landed on|locked in|signed with|gone with|picked|chosen|selected|"
    r"committed to)\b\s*|"
    r"^we(?:'ve| have)? (?:decided|agreed|chosen|opted) to [a-z]+ (?=(?:the|our|all|every|each)\b)|"
    r"^we(?:'ll| will| shall) (?:fly|travel|meet|host|print|hire|outsource|postpone|cancel|keep|go|do|stay|"
    r"drive|take|use|order|publish|release|build)\b\s*", re.I)
_NAMED = re.compile(r"(?<!^)(?<![.!?:]\s)\b[A-Z][a-zA-Z&'-]+\b")

# resets of everything said so far: a verb of discarding and an object of totality or the plan
_DISCARD = (r"(?:forget|scratch|scrap|drop|ditch|discard|disregard|ignore|throw (?:out|away)|toss|bin|wipe|erase|"
            r"cancel|void|nix|abandon|kill|undo|strike|junk|trash|lose|dump|shelve|park)")
_TOTALITY = (r"(?:everything|all (?:of )?(?:that|this|the above|it|those|these)|all that|that plan|this plan|it all|"
             r"the (?:old|earlier|previous|original|current|whole|existing|first|last|entire) (?:plan|idea|approach|"
             r"decision|setup|arrangement)s?|(?:the|our|my) plan|what (?:we|i)(?:'ve| have)? (?:said|agreed|discussed|decided|"
             r"planned|settled|had)|all (?:we|i)(?:'ve| have)? (?:said|agreed|discussed|decided|planned)|"
             r"everything (?:we|i)(?:'ve| have)? (?:said|agreed|discussed|decided|planned))")
_RESET_MORE = re.compile(
    r"(?:^|[.!?;:,—]\s*|\b(?:let's|let us|please|ok|okay|so|and)\s+)" + _DISCARD + r"\s+" + _TOTALITY + r"(?:\s+(?:entirely|completely|"
    r"altogether|so far|until now|up to now|before|above|earlier))*(?:\s+(?:so far|until now|up to now|before))?\b|"
    r"\b(?:throw|toss) (?:that|this|the) (?:plan|idea)s? (?:out|away)\b|"
    r"\b(?:everything|all|what) (?:we|i)(?:'ve| have)? (?:said|agreed|discussed|decided|planned)(?: so far| until now| up to now|"
    r" before| earlier)? (?:is|are) (?:void|off|cancell?ed|scrapped|dead|gone|obsolete|out|null and void|off the table)\b|"
    r"\bstart (?:over|again|afresh|anew|from (?:scratch|zero|square one|the top|the beginning))\b|"
    r"\bback to (?:the drawing board|square one)\b|\b(?:clean|blank) slate\b|\breset (?:everything|it all|the plan)\b", re.I)
#: what follows a reset must be about the task, not the speaker ("Scratch that, I'm just rambling.")
_RESET_SMALL_TALK = re.compile(r"^\s*(?:i(?:'m| am| was| think| guess| mean)?|it(?:'s| is| was| doesn't| does not)|"
                               r"that(?:'s| is)|never ?mind|whatever|nothing|lol|haha|sorry)\b", re.I)

# replacements: "Instead of X, Y", "Y instead of X", "Replace X with Y", "Rather than X, Y"
_REPLACE = re.compile(
    r"^(?:instead of|rather than|in place of)\s+(?P<old>[^,;:]{2,80}?)\s*,\s*(?P<new>.+)$|"
    r"^(?:please\s+)?(?:replace|swap|exchange)\s+(?P<old2>.{2,80}?)\s+(?:with|for)\s+(?P<new2>.+)$|"
    r"^(?P<new3>.+?)\s+instead of\s+(?P<old3>.{2,60}?)(?:\s+(?:from now on|going forward|from here on|for now|"
    r"this time|again))?[.!]?$|"
    r"^(?P<new4>.+?)\s+(?:replaces|supersedes|takes the place of)\s+(?P<old4>.+)$", re.I | re.S)
_REPLACE_PRONOUN = re.compile(r"^(?:that|this|it|the plan|that plan|this plan|the old plan|the earlier plan|"
                              r"the original plan|the previous plan|the current plan|what we had|what we said)$", re.I)

# revocations
_WITHDRAW_MORE = re.compile(
    r"\b(?:scrap|ditch|bin|kill|lose|void|suspend|waive|nix|strike)\s+(?:what i (?:said|told you|asked)|my (?:earlier |previous |"
    r"last |original )?(?:instruction|rule|request|note|restriction|ban|requirement)s?|the (?:earlier |previous |old )?"
    r"(?:rule|restriction|instruction|ban|requirement|limit|constraint)s?)\s+(?:about|on|regarding|re|for|against|to|"
    r"concerning)\s+(?P<what>[^.!?;,]+)|"
    r"\b(?:forget|disregard|ignore|scratch|cancel|drop|lift|remove|withdraw|rescind|undo|scrap|ditch|bin|kill|suspend|"
    r"waive|void)\s+(?:the|my|that|this) (?P<what2>(?!(?:earlier|previous|old|last|original|first|new|other)\b)"
    r"[\w' -]{2,40}?) (?:rule|ban|restriction|requirement|limit|"
    r"instruction|constraint|policy)s?\b|"
    r"^(?:the|that|this|my) (?:ban|restriction|rule|requirement|limit|constraint|instruction|policy)s? (?:on|about|against|"
    r"for|regarding|concerning) (?P<what3>.+?) (?:is|are|has been|have been) (?:now )?(?:lifted|over|cancell?ed|revoked|"
    r"removed|dropped|gone|off|void|suspended|no longer (?:in (?:force|effect|place)|needed|valid|active))\b|"
    r"^(?:the|that|this|my) (?:ban|restriction|rule|requirement|limit|constraint|instruction|policy)s? (?:on|about|against|"
    r"for|regarding|concerning) (?P<what4>.+?) (?:no longer (?:applies|stands|holds)|doesn't apply any ?more|"
    r"is no longer in (?:force|effect|place)|has expired|can go)\b|"
    r"^(?P<what5>(?!it\b|that\b|this\b|everything\b|all\b|things\b|i\b|we\b|you\b)[^.!?;]+?)\s+(?:is|are)\s+(?:totally |"
    r"perfectly |completely )?(?:fine|ok|okay|allowed|permitted|alright|all right|open|back on|acceptable)\s+"
    r"(?P<extra>(?:for|in|on|at|with|to|from|during)\s+[\w' -]{2,40}?)\s*(?:again|after all|now|from now on|once more)\b",
    re.I)


#: the families turned off in the current context, as a C-level callable (the key of the
#: per-sentence caches below: :func:`memfold.memory.families.off_now` without its Python frame)
_off_key = families.off_key


# Round 13 (issue 18, point 4, speed only): the pure per-sentence tests the rules ask again and
# again about the same sentence or clause (advice, imperative, _imperative_r8, concrete,
# completion, _first_word) keep their answers in an LRU cache keyed by the text and the set of
# families turned off in the current context ("remembered"): each depends on nothing else (its
# patterns, word sets and families.on), so a remembered answer is the answer.
# _remembered_clear() empties them.


def _remembered_clear() -> None:
    for cached in (_first_word, _imperative, _imperative_r8_of, _advice, _concrete, _completion):
        cached.cache_clear()


@lru_cache(maxsize=2048)
def _strip(sentence: str) -> str:
    """The sentence without lead words and scope markers (repeatedly), trailing punctuation kept.
    Remembered per sentence: the rules strip the same sentence and its clauses some 40 times
    (issue 18, point 4); :data:`_LEADS` and :data:`_SCOPES` depend on no family."""
    s = sentence.strip()
    for _ in range(4):
        before = s
        s = _LEADS.sub("", s)
        s = _SCOPES.sub("", s)
        if s == before:
            break
    return s


def main_clause(sentence: str) -> tuple[str | None, str]:
    """``(lead clause or None, main clause)`` of a sentence ("Whenever X, do Y" -> ("Whenever X", "do Y")).
    Remembered per sentence and family state: the rules of four rounds split the same sentence."""
    return _main_clause(sentence, families.on(F_FREQUENCY))


@lru_cache(maxsize=2048)
def _main_clause(sentence: str, frequency: bool) -> tuple[str | None, str]:
    s = _strip(sentence)
    m = _LEAD_CLAUSE.match(s)
    if m and not re.match(r"^(?:if|when) (?:so|not|possible|needed|you can|you want|you like)\b", m.group("lead"), re.I):
        return m.group("lead"), _strip(m.group("main"))
    if frequency:
        f = _FREQUENCY_LEAD.match(s)
        if f:
            return f.group("lead"), _strip(f.group("main"))
    return None, s


def concrete(text: str) -> bool:
    """True when the text names a thing of the task: a task noun (a "-ies" plural too: "deliveries"),
    a number, an amount or an id. Remembered per text and family state (see the comment at :func:`_remembered_clear`)."""
    return _concrete(text, _off_key())


@lru_cache(maxsize=2048)
def _concrete(text: str, _off: frozenset) -> bool:
    return bool(_names_task_noun(text) or _CONCRETE.search(text)
                or families.on(F_PLURALS) and _names_task_noun_ies(text))


#: the task nouns written with a hyphen, which span two words: matched by a pattern of their own
_TASK_NOUN_HYPHENATED = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in sorted(TASK_NOUNS) if "-" in n)
                                   + r")(?:s|es)?\b", re.I)
_TASK_NOUN_WORDS = frozenset(n for n in TASK_NOUNS if "-" not in n)
_WORD_RUN = re.compile(r"\w+")


def _names_task_noun(text: str) -> bool:
    """``_TASK_NOUN.search(text)``, read word by word (issue 18, point 4: the 357-way alternation
    cost more than the rest of :func:`concrete`). The pattern's ``\\b noun (s|es)? \\b`` around a
    noun of word characters matches exactly a whole run of word characters, so a run lowercased
    (ASCII, as the pattern's own letters) equal to a noun, or a noun with "s" or "es", is the
    same test; the two hyphenated nouns keep a pattern, and a text holding a character that
    case-insensitive matching pairs with an ASCII letter (:mod:`memfold.window.prefilter`) is
    searched with the pattern itself."""
    if not text.isascii() and prefilter.folds_to_ascii(text):
        return _TASK_NOUN.search(text) is not None
    nouns = _TASK_NOUN_WORDS
    for word in _WORD_RUN.findall(text):
        if word.isascii():
            w = word.lower()
            if w in nouns or w[-1:] == "s" and (w[:-1] in nouns or w[-2:] == "es" and w[:-2] in nouns):
                return True
    return _TASK_NOUN_HYPHENATED.search(text) is not None


def _names_task_noun_ies(text: str) -> bool:
    """``_TASK_NOUN_IES.search(text)`` ("deliveries"), read word by word as in :func:`_names_task_noun`."""
    if not text.isascii() and prefilter.folds_to_ascii(text):
        return _TASK_NOUN_IES.search(text) is not None
    nouns = _TASK_NOUN_WORDS
    for word in _WORD_RUN.findall(text):
        if len(word) > 3 and word.isascii():
            w = word.lower()
            if w.endswith("ies") and w[:-3] + "y" in nouns:
                return True
    return False


_PRE_VERB = (r"^(?:(?:please|kindly|just|do|also|always|now|then|consistently|strictly|carefully|clearly|politely|"
             r"briefly|properly|promptly|immediately|simply|gently|quickly|personally|manually|automatically|"
             r"only|explicitly|regularly|routinely)\s+)*")


_FIRST_WORD = re.compile(_PRE_VERB + r"([a-z][a-z-]*)", re.I)  # compiled once (round 9: 41k calls a LoCoMo pass)


@lru_cache(maxsize=4096)
def _first_word(clause: str) -> str:
    """The clause's first word after adverbs, lowercased. Remembered per clause (round 13, speed
    only: the rules ask it about 25 times per LoCoMo user text, 20 of them again; no family)."""
    m = _FIRST_WORD.match(clause)
    return m.group(1).lower() if m else ""


def imperative(clause: str) -> bool:
    """The clause opens with a base-form task verb and its object is not small talk. Remembered
    per clause and family state (see the comment at :func:`_remembered_clear`)."""
    return _imperative(clause, _off_key())


@lru_cache(maxsize=2048)
def _imperative(clause: str, _off: frozenset) -> bool:
    verb = _first_word(clause)
    if verb not in _VERBS:
        return False
    rest = re.sub(_PRE_VERB + r"[a-z-]+\s*", "", clause, flags=re.I)
    rest = re.sub(r"^(?:out|up|off|on|in|back|over|away|through)\s+", "", rest, flags=re.I)
    if families.on(F_LEAD_BARE_VERB) and _complement_object(clause):
        return True  # "check that the customer ...": a clause, not the pronoun "that"
    return not _SMALL_TALK_OBJECT.match(rest)


def _deadline(sentence: str) -> bool:
    return bool(_DEADLINE_MORE.search(sentence)) or (families.on(F_DATE) and bool(_DEADLINE_DATE.search(sentence)))


#: advice names the listener's benefit ("... so you get a handle on it"); an instruction does not
ADVICE = re.compile(r"\bso (?:that )?you(?:'ll| will| can| get| have| know| don't| won't| feel)\b", re.I)
_EVIDENCE_SO_YOU_KNOW = re.compile(r"^\W*(?:(?:oh|ok|okay|and|also|btw)[,\s]+)*(?:just )?so you know\s*[,:;—-]", re.I)


def advice(sentence: str) -> bool:
    """True when a sentence gives advice for the listener's benefit ("... so you get a handle on
    it"); "Just so you know, ..." introduces a fact instead. Remembered per sentence and family
    state (asked about 16 times per LoCoMo user text, 12 of them again; see the comment at :func:`_remembered_clear`)."""
    return _advice(sentence, _off_key())


@lru_cache(maxsize=2048)
def _advice(sentence: str, _off: frozenset) -> bool:
    if families.on(F_EVIDENCE) and _EVIDENCE_SO_YOU_KNOW.match(sentence):
        return False
    return bool(ADVICE.search(sentence))


def classify(sentence: str) -> tuple[str, str] | None:
    """``(kind, rule)`` for a sentence that states a standing instruction, else None.

    :param sentence: one sentence of a user message, verbatim.
    """
    s = sentence.strip()
    if families.on(F_TAG) and _TAG_QUESTION.search(s):
        s = _TAG_QUESTION.sub(".", s)
    if not s or not_a_directive(s):
        return None
    if _QUESTION.search(s) or advice(s):
        if _QUESTION.search(s):  # "Could you always ...?", "Could you make a habit of ...?"
            return classify_r5(s) or polite_habit_r8(s)
        return None
    if plan_statement(s) or plan_statement_r9(s):  # "The roadmap says we build iOS first, then Android": a plan
        return "policy_state", "decision"
    return _classify_base(s) or _classify_more(s) or classify_r5(s) or classify_r8(s) or classify_r9(s) or classify_r10(s)


def _imperative_loose(clause: str) -> bool:
    """An imperative whose object may be a pronoun ("tag it as a regression"), for a clause whose
    lead already names the thing."""
    return _first_word(clause) in _VERBS and not re.match(
        _PRE_VERB + r"[a-z-]+\s+(?:it|that|this) (?:up|easy|going|off)\b", clause, re.I)


def _classify_more(s: str) -> tuple[str, str] | None:
    """The round-4 phrasing classes (each a family of :mod:`memfold.memory.families`)."""
    lead, main = main_clause(s)
    whole = _strip(s)
    past = bool(_PAST.search(whole))
    exclaim = s.rstrip().endswith("!")
    if families.on(F_FREQUENCY) and lead and _FREQUENCY_LEAD.match(_strip(s)) or lead and re.match(
            r"^(?:each time|every time|whenever|any ?time)\b", lead, re.I) and families.on(F_FREQUENCY):
        if (_imperative_loose(main) or families.on(F_FREQUENCY_VERB) and _IMPERATIVE_SHAPE.match(main)) \
                and concrete(s) and not exclaim:
            if _PROHIBIT_VERB.match(main):
                return "constraint", "prohibit_verb"
            if _deadline(s):
                return "deadline", "deadline_form"
            return "obligation", "frequency_imperative"
    if families.on(F_DUTY):
        d = _DUTY_LEAD.match(whole) or _DUTY_LEAD.match(main) or _DUTY_LEAD.match(_LIGHT_LEADS.sub("", s))
        if d and not past and not exclaim:
            rest = d.group("rest")
            if re.match(r"^(?:never|not)\b", rest, re.I) and concrete(rest):
                return "constraint", "duty_not"
            strong_lead = not re.match(r"^(?:please\s+)?(?:remember|don't forget|do not forget|be sure|take care|"
                                       r"make sure|never forget)\b", d.group(0), re.I)
            verb_ok = _first_word(rest) in _VERBS or imperative(rest) or strong_lead and bool(_BARE_VERB.match(rest))
            if verb_ok and not _ATTITUDE.match(rest) and (concrete(rest) or strong_lead and _STANDING.search(s)):
                if _deadline(s):
                    return "deadline", "deadline_form"
                if _PREREQ.search(s):
                    return "prerequisite", "prerequisite_form"
                return "obligation", "duty"
        g = _GERUND_MUST.match(main)
        if g and (concrete(g.group("subject")) or _STANDING.search(g.group("subject"))) and not past:
            return "obligation", "gerund_must"
        q = _QUANTIFIED_NEEDS.match(main)
        if q and concrete(q.group("subject")) and not past and not exclaim:
            return "obligation", "quantified_needs"
        nb = _NEED_BEFORE.match(main)
        if nb and not past:
            return "prerequisite", "need_before"
    if families.on(F_LIMIT_FORMS):
        m = _MODAL_THING.match(main)
        if m and not _PRONOUN_SUBJECT.match(m.group("subject")) and concrete(m.group("subject")) \
                and re.match(r"^be\s", m.group("rest"), re.I) and not _EVALUATIVE.match(m.group("rest")) and not past:
            if _deadline(s):
                return "deadline", "deadline_form"
            return "constraint", "modal_thing"
        if _REFLEXIVE_RESTRICT.match(main) and len(main.split()) >= 5:
            return "constraint", "restrict_verb"
    if families.on(F_PROHIBIT) and _PROHIBIT_MORE.match(main) and concrete(main):
        return "constraint", "prohibit_verb"
    if families.on(F_SPOT) and not exclaim:
        if _GOOD_TO_GO.match(whole) and concrete(whole):
            return "approval", "approval_statement"
        if _MAKE_EVERY.match(main) and concrete(main):
            return "obligation", "quantified_needs"
    if families.on(F_EXISTENTIAL):
        ex = _EXISTENTIAL.match(main)
        if ex and concrete(main) and not exclaim:
            return ("constraint", "existential_not") if ex.group("neg") else ("obligation", "existential")
    if families.on(F_APPROVAL_ACTIVE) and _APPROVAL_ACTIVE.match(whole) and concrete(whole) and not exclaim:
        return "approval", "approval_statement"
    if families.on(F_DEADLINE_REQUEST) and _REQUEST_OBJECT.match(whole) and _DEADLINE_DATE.search(s) and not past:
        return "deadline", "deadline_form"
    if families.on(F_APPROVAL) and not _APPROVE_OF.search(whole):
        if _APPROVAL_WITHHELD.search(whole) and (concrete(whole) or _APPROVAL_OBJECT.search(whole)
                                                 or re.search(r"\b(?:the|this|that|our|my|your) \w+", whole, re.I)):
            return "approval", "approval_withheld"
        if (_APPROVAL_MORE.search(whole) and concrete(whole) or _APPROVAL_OBJECT.search(whole)) and not exclaim:
            return "approval", "approval_statement"
    if families.on(F_EVIDENCE) and not exclaim:
        light = _LIGHT_LEADS.sub("", s)
        ev = _EVIDENCE_LEAD.match(light) or _EVIDENCE_SO_YOU_KNOW.match(light)
        if ev and concrete(light[ev.end():]):
            return "evidence", "evidence"
        em = _EVIDENCE_MORE.search(whole)
        if em and concrete(re.sub(r"\b" + _DOC + r"s?\b", " ", whole, flags=re.I)) and (
                not re.match(r"^here", em.group(0), re.I) or re.search(r"\d|[$€£%@#]", whole)):
            return "evidence", "evidence_document"
    if families.on(F_DECISION) and not exclaim and len(whole.split()) >= 4:
        for clause in dict.fromkeys((whole, main)):
            dm = _DECISION_MORE.match(clause)
            agreed = dm and re.match(r"^we(?:'ve| have)? (?:decided|agreed|chosen|opted) to", dm.group(0), re.I)
            named = _NAMED.search(clause[dm.end():]) if dm else None
            if dm and families.on(F_DECISION_NAMED):
                named = named or re.match(r"[A-Z][a-zA-Z&'-]+", clause[dm.end():])
            if dm and (agreed or concrete(clause[dm.end():]) or named) \
                    and not re.search(r"\b(?:last|ago|yesterday)\b", clause, re.I):
                return "policy_state", "decision"
            strong = _DECISION_STRONG.match(clause)
            if strong and (_NAMED.search(clause[strong.end():]) or concrete(clause[strong.end():])) and not past:
                return "policy_state", "decision"
            weak = _DECISION_WEAK.match(clause)
            if weak and not _LETS_SOCIAL.match(clause) and _NAMED.search(clause[weak.end():]) and not past \
                    and not weak.group(0).lower().startswith("let"):
                return "policy_state", "decision"
    if families.on(F_DATE) and _DEADLINE_DATE.search(s) and not past and not exclaim:
        if (imperative(main) or _CAUSATIVE.match(main) or _IMPERATIVE_SHAPE.match(main)) \
                and (concrete(main) or len(main.split()) >= 4) \
                or re.search(r"\b(?:due|deadline|has to|have to|must|needs? to|should|i need|i want|we need)\b", s, re.I) \
                and concrete(s):
            if not re.match(r"^(?:i|we)(?:'ll|'m| will| am| was| have| had)\b", whole, re.I):
                return "deadline", "deadline_form"
    if families.on(F_PERMIT):
        pm = _PERMIT.match(main) or _PERMIT.match(whole)
        if pm:
            rest = (main if _PERMIT.match(main) else whole)[pm.end():].strip()
            if _PERMIT_STRONG.search(pm.group(0)) and not _PERMIT_SOCIAL.search(rest) and len(rest.split()) >= 3 \
                    and re.search(r"\b\w+ing\b|\b(?:the|my|your|our|any|all)\b", rest, re.I):
                return "permission", "permission_form"
    return None


def _classify_base(s: str) -> tuple[str, str] | None:
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
    if _IT_IS_ESSENTIAL.match(whole) and concrete(whole):
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
    """True when a message throws away the plan so far ("Forget everything we've said so far: ...",
    "Scratch all that: ...", "Throw out the old plan; ...", "Everything we said until now is void: ...")."""
    return bool(_RESET.search(text)) or (families.on(F_RESET) and bool(_RESET_MORE.search(text))) or (
        families.on(F_SPOT) and bool(_RESET_SPOT.search(text)))


def reset_is_small_talk(text: str, match: "re.Match[str] | None" = None) -> bool:
    """True when a reset or override phrase throws away nothing of the task: what follows it is
    about the speaker ("Scratch that, I'm just rambling."), or the message is an exclamation about
    nothing of the task ("Let's start fresh this year with new hobbies!")."""
    if not families.on(F_RESET):
        return False
    if match is not None and match.re in (getattr(_RESET_R9, "unfiltered", _RESET_R9),
                                          getattr(_RESET_R10, "unfiltered", _RESET_R10),
                                          getattr(_RESET_NAME_R10, "unfiltered", _RESET_NAME_R10)):
        return False  # :func:`reset_r9` / :func:`reset_r10` have read what follows the phrase already
    m = match or _RESET.search(text) or _RESET_MORE.search(text) or _RESET_SPOT.search(text) or reset_r5(text)
    rest = reset_rest(text, m.end()) if m else text
    rest = re.sub(r"^[\s,.:;!—-]+", "", rest)
    if not rest.strip():
        return not concrete(text)
    if _RESET_SMALL_TALK.match(rest) and not concrete(rest):
        return True
    return text.rstrip().endswith("!") and not concrete(text)


def replacement(sentence: str) -> tuple[str, str, str] | None:
    """``(form, old, new)`` when a sentence replaces something ("Instead of Zoom, we'll use Teams",
    "Replace the 200-word limit with a 100-word limit", "Send it on Slack instead of by email"):
    ``form`` is ``"plan"`` when the new part is a decision or the old part names the plan (a
    decision override), ``"rule"`` when the new part is a directive replacing an earlier one,
    else None (narration: "Instead of going out, we stayed home")."""
    if not families.on(F_REPLACE):
        return None
    s = _strip(sentence.strip())
    m = _REPLACE.match(s)
    if not m or _QUESTION.search(s) or _PAST.search(s):
        return None
    g = m.groupdict()
    old = (g.get("old") or g.get("old2") or g.get("old3") or g.get("old4") or "").strip()
    new = (g.get("new") or g.get("new2") or g.get("new3") or g.get("new4") or "").strip()
    if not old or not new:
        return None
    replace_verb = bool(g.get("old2"))
    if _REPLACE_PRONOUN.match(old) or plan_named(old) or _DECISION.search(new) or _DECISION_STRONG.match(new) or (
            _DECISION_WEAK.match(new) and not _LETS_SOCIAL.match(new)):
        return "plan", old, new
    if replace_verb or classify(new) is not None or imperative(new):
        return "rule", old, new
    if families.on(F_REPLACE_STATEMENT) and g.get("old") and (concrete(new) or _NAMED.search(new)) and not re.match(
            r"^(?:i|we)\b", new, re.I):
        return "plan", old, new  # "Instead of Zoom, the webinar runs on Google Meet."
    return None


_DECISION = re.compile(r"\b(?:let's|let us|we should|we'll|we will|we're going with|the plan is|go with)\b", re.I)


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
    if families.on(F_REVOKE):
        m = _WITHDRAW_MORE.search(s)
        if m:
            g = {k: v for k, v in m.groupdict().items() if v}
            what = g.get("what") or g.get("what2") or g.get("what3") or g.get("what4") or g.get("what5") or ""
            return f"{what} {g.get('extra', '')}".strip()
    for pattern in (_WITHDRAW_RUN if _WITHDRAW_RUN_GATE.possible(s) else ()):  # one test when none can match
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


_GOT_TO_R5 = re.compile(r"\b(?:'ve |have )?got to\b|\bgotta\b", re.I)
_GO_NOT = re.compile(r"\b(?:not yet|don't|do not|never|wait|hold on|hold off)\b", re.I)
_GO_PARTS = re.compile(r"[,:;]|\bso\b")


def go_signal(sentence: str) -> str | None:
    """``"explicit"`` when a sentence confirms outright ("Confirmed, send the invoice.", "Green
    light on cancelling the account."), ``"weak"`` when it says the condition is met or asks
    for the action ("The goods arrived this morning, release the payment."), else None."""
    s = _strip(sentence)
    if _QUESTION.search(s) or _GO_NOT.search(s):
        return None
    if _GO_EXPLICIT.search(sentence):
        return "explicit"
    if s.rstrip().endswith("!"):  # "Keep doing what makes you happy!" is cheering, not a go-ahead
        return "weak" if completion_r8(sentence) else None
    if _GO.search(sentence) or completion(sentence):
        return "weak"
    parts = [p.strip() for p in _GO_PARTS.split(s) if p.strip()]
    return "weak" if any(imperative(p) for p in parts) else None


def withdraws_explicitly(sentence: str) -> bool:
    """True when a withdrawal names the instruction it ends ("the rule about X", "the X ban is
    lifted", "forget what I said about X"), rather than only saying X is fine now."""
    s = _strip(sentence)
    if families.on(F_REVOKE):
        m = _WITHDRAW_MORE.search(s)
        if m and not m.group("what5"):
            return True
    return _WITHDRAW_RUN_GATE3.possible(s) and any(p.search(s) for p in _WITHDRAW_RUN[:3])


#: small talk in the shape of a prohibition ("Don't ever change, you're the best!", "Never have I
#: ever ...", "Never a dull moment!")
_NEGATION_SMALL_TALK = re.compile(
    r"^(?:never|don't|do not)\s+(?:ever\s+)?(?:have (?:i|we)|did (?:i|we)|had (?:i|we)|was (?:i|it)|in my life|an?\b|"
    r"again\s*[!.]|(?:change|stop|leave|go|grow up|give up|let (?:me|us) go)\s*[,!.])", re.I)
#: more prohibitions: "don't ever <verb>", a parenthetical ("Do not, under any circumstances, delete
#: ..."), "you shall not", "under no circumstances are you to ..."
_PROHIBIT_FORMS = re.compile(
    r"^(?:never|don't|dont|do not)\s+ever\s+(?!(?:change|stop|doubt|forget|give up|let|think|say|be|feel|get|lose|quit|"
    r"underestimate|settle|leave|go|grow|mind|worry)\b)[a-z]+\s+\w|"
    r"^(?:never|don't|dont|do not)\s*,\s*(?:under (?:any|no) circumstances|ever|whatever (?:happens|you do)|at any (?:point|time)|"
    r"in any case|please|repeat)\s*,\s*[a-z]+\s+\w|"
    r"^you (?:shall not|shan't|shall never)\s+\w|"
    r"^under no circumstances (?:are|should|must|may|will|can|is|do|shall)\b|"
    r"^at no (?:point|time) (?:are|should|must|may|will|can|do|shall)\b", re.I)


def negation_small_talk(clause: str) -> bool:
    """A prohibition's shape used as small talk (family ``prohibition_forms``; an inversion such as
    "Never in a million years did I ..." is family ``never_inversion``)."""
    c = _strip(clause)
    if families.on(F_NEVER_INVERSION) and re.match(r"^never\b[^,;]{0,40}?\b(?:did|have|had|was|were|would|could|will|"
                                                   r"do|am|is|shall)\s+(?:i|we|you|he|she|they|it)\b", c, re.I):
        return True
    return families.on(F_PROHIBIT) and bool(_NEGATION_SMALL_TALK.match(c))


def prohibition_more(clause: str) -> bool:
    """A prohibition in a form the phrase rules miss (family ``prohibition_forms``)."""
    c = _strip(clause)
    return families.on(F_PROHIBIT) and bool(_PROHIBIT_FORMS.match(c)) and not (c.rstrip().endswith("!") and not concrete(c))


def withdraws_about(sentence: str) -> bool:
    """True for "forget what I said about X" (a withdrawal of X, not a reset of everything)."""
    return bool(_WITHDRAW_ABOUT.search(_strip(sentence)))


# -- round 5: phrasing classes (issue 20, points 10-11) ---------------------------------------------
# Written from the misses of the round-4 blind set ``fresh3`` (measured once, then in-sample) and of
# the round-5 own set ``r5own`` (written and measured once before these rules existed); each family
# names the sets whose misses it was written from, so ``--loso`` can hold each set out.
F_TEXTING = family("texting_forms", {"fresh3"})
F_ROLE_SUBJECT = family("role_subject", {"fresh3", "r5own"})
F_PASSIVE_DEONTIC = family("passive_deontic", {"fresh3", "r5own"})
F_POLITE_QUESTION = family("polite_standing_request", {"r5own", "r5own2"})
F_LEAD_BARE_VERB = family("lead_clause_imperative", {"fresh3", "r5own"})
F_RULE_LABEL = family("rule_label", {"fresh3"})
F_QUANT_AGENT = family("quantified_agent_output", {"fresh3"})
F_RESTRICT_R5 = family("restriction_forms_r5", {"fresh3", "r5own"})
F_EMPHATIC_NO = family("emphatic_no", {"fresh3"})
F_PERMIT_R5 = family("permission_forms_r5", {"fresh3", "r5own"})
F_DEADLINE_R5 = family("deadline_forms_r5", {"fresh3", "r5own"})
F_PREREQ_R5 = family("prerequisite_forms_r5", {"r5own"})
F_APPROVAL_R5 = family("approval_forms_r5", {"fresh3", "r5own"})
F_EVIDENCE_R5 = family("evidence_forms_r5", {"r5own", "r5own2"})
F_DECISION_R5 = family("decision_forms_r5", {"r5own"})
F_RESET_R5 = family("reset_forms_r5", {"fresh3", "r5own"})
F_REVOKE_R5 = family("revoke_forms_r5", {"fresh3", "r5own"})
F_COMPLETION = family("completion_forms", {"r5own"})
F_NARRATED = family("narrated_third_party", {"fresh3", "r5own", "r5own2"})
# written from the misses of the second round-5 own set (measured once after the families above)
F_PLURALS = family("task_noun_plurals", {"r5own2"})
F_QUANT_PASSIVE = family("quantified_passive_duty", {"r5own2"})
F_AGENT_NOUN = family("agent_noun_subject", {"r5own2"})
F_DECISION_NP = family("decision_bare_np", {"r5own2"})

_TASK_NOUN_IES = re.compile(r"\b(?:" + "|".join(sorted((re.escape(n[:-1]) for n in TASK_NOUNS if n.endswith("y")),
                                                       key=len, reverse=True)) + r")ies\b", re.I)
#: "All visitor badges are to be handed back at reception": a quantified subject and a duty in the passive
_QUANT_PASSIVE = re.compile(r"^(?:all|every|each|any)\s+(?:[\w'’/-]+\s+){1,5}?(?:is|are|must|has to|have to|needs? to|should)\s+"
                            r"(?:to\s+)?(?:always\s+)?be\s+\w+(?:ed|en|t)\b", re.I)
#: a plural agent noun as the subject of a permission or duty ("Drivers are allowed to take the van home")
_AGENT_NOUN = re.compile(r"^(?!(?:my|our|his|her|their)\b)(?:the |all |our )?(?P<noun>[a-z]+(?:ers|ors|ists|ants|ents|ees|ians))\s+"
                         r"(?P<modal>are (?:not )?(?:allowed|permitted|authori[sz]ed|free|entitled) to|may(?: not)?|"
                         r"must(?: not| never)?|are (?:not )?to|have to|need to|should(?: not| never)?)\s+(?P<rest>\w.+)$", re.I | re.S)
#: "We've decided to hire a freelance designer", "We're going with weekly invoicing", "We'll run the pilot in two schools"
_DECIDED_TO = re.compile(r"^we(?:'ve| have)\s+(?:now\s+)?(?:decided|agreed|chosen|opted)\s+to\s+(?!(?:be|have|get|go|see|try|do|"
                         r"take a (?:break|trip|walk)|enjoy|celebrate|adopt)\b)[a-z]+\s+(?:a|an|the|our|two|three|\d)\b", re.I)
_GOING_WITH_NP = re.compile(r"^(?:we're|we are|we'll|we will|let's)\s+(?:go(?:ing)? with|opt(?:ing)? for|settl(?:e|ing) on)\s+"
                            r"(?!(?:you|him|her|them|it|my|me|us|friends?|family|the flow|whatever|that|this)\b)[a-z]+\s+[a-z]+", re.I)
_WILL_NP_DETAIL = re.compile(r"^we(?:'ll| will| shall)\s+(?!(?:see|be|have|try|talk|chat|meet up|catch up|get|keep|hang|miss|"
                             r"need|make it|figure|do)\b)[a-z]+\s+(?:the|our)\s+[\w -]{2,30}?\s+(?:in|on|at|for|with|from)\s+"
                             r"(?:\d|(?-i:[A-Z])|(?:one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple)\b)", re.I)
_SHOWS_HOW = re.compile(r"\b(?:shows?|showed|captures?|captured)\s+(?:how|what a|what an|just how)\b", re.I)
_INVITATION = re.compile(r"^(?:(?:oh|and|also|btw)[,\s]+)*(?:feel free to|you're welcome to|you can)\s+(?:bring|invite|join|come|"
                         r"swing by|pop|drop|stay|crash)\b[^!]*!\s*$", re.I)

#: texting spellings read as the words they stand for (classification only; records stay verbatim)
_TEXTING = ((re.compile(r"\b(?:pls|plz|plse)\b\.?", re.I), "please"), (re.compile(r"\bu\b"), "you"),
            (re.compile(r"\b(?:tmrw|tmrow|tmr|2moro|2morrow)\b", re.I), "tomorrow"),
            (re.compile(r"\bur\b"), "your"), (re.compile(r"\b(?:thx|thnx|tks)\b", re.I), "thanks"),
            (re.compile(r"\bgoing forwards\b", re.I), "going forward"),
            (re.compile(r"\bunder no circumstance\b", re.I), "under no circumstances"))


def normalise(sentence: str) -> str:
    """A sentence with texting spellings written out ("pls" -> "please", "u" -> "you", "ur" ->
    "your"), for reading only: a proposal always keeps the sentence verbatim (family ``texting_forms``)."""
    if not families.on(F_TEXTING):
        return sentence
    return _normalised(sentence)


@lru_cache(maxsize=2048)
def _normalised(sentence: str) -> str:
    for pattern, word in _TEXTING:
        sentence = pattern.sub(word, sentence)
    return sentence


#: the agent or staff named in the third person ("The assistant must never ...", "Operators may ...")
_ROLE = (r"(?:the |our |all |every |each |any )?(?:assistant|bot|agents?|operators?|staff|support (?:agents?|staff|team)|"
         r"reps?|representatives?|advisors?|advisers?|team members?|employees?|the team|ai|model)")
_ROLE_MODAL = re.compile(r"^" + _ROLE + r"\s+(?P<modal>must(?: not| never)?|mustn't|should(?: not| never)?|shouldn't|"
                         r"has to|have to|need to|needs to|may(?: not)?|can(?:not|'t)?(?: only)?|is (?:not )?to|are (?:not )?to|"
                         r"are (?:not )?(?:allowed|permitted|authori[sz]ed|free|expected|required) to|"
                         r"is (?:not )?(?:allowed|permitted|authori[sz]ed|free|expected|required) to)\s+(?P<rest>\w.+)$", re.I | re.S)
_INVERTED_PROHIBIT = re.compile(r"^(?:under no circumstances|at no (?:point|time)|in no case|on no account)\s+(?:is|are|should|"
                                r"must|may|can|will|shall|do|does)\b", re.I)
#: a state of requirement or prohibition said of a thing or an act ("Weekly backups are required",
#: "Moving money between accounts is strictly prohibited", "Refunds are limited to the card")
_PASSIVE_REQUIRED = re.compile(r"^(?P<subject>(?!(?:it|this|that|he|she|they|we|i|you|there)\b)[\w'’$€£%/-]+(?:\s+[\w'’$€£%/-]+){0,9}?)\s+"
                               r"(?:is|are)\s+(?:always |absolutely |strictly |now )?(?:required|mandatory|compulsory|obligatory|"
                               r"non-negotiable|a must)\b", re.I)
_PASSIVE_PROHIBITED = re.compile(r"\b(?:is|are)\s+(?:strictly|absolutely|completely|totally|expressly|now)\s+(?:forbidden|"
                                 r"prohibited|banned|not allowed|not permitted|off[- ]limits)\b", re.I)
_PASSIVE_LIMITED = re.compile(r"^(?P<subject>(?!(?:it|this|that|he|she|they|we|i|you|there)\b)[\w'’$€£%/-]+(?:\s+[\w'’$€£%/-]+){0,8}?)\s+"
                              r"(?:is|are)\s+(?:strictly |only )?(?:limited|restricted|confined|capped)\s+(?:to|at)\b", re.I)
_PASSIVE_CAN_WITHOUT = re.compile(r"^(?P<subject>(?!(?:it|this|that|he|she|they|we|i|you|there)\b)[\w'’$€£%/-]+(?:\s+[\w'’$€£%/-]+){0,8}?)\s+"
                                  r"(?:can|may)\s+(?:always |now |also )?be\s+\w+(?:ed|en|t)\s+(?:\w+\s+){0,4}?"
                                  r"(?:without|on your own|at your discretion|by you)\b", re.I)

#: "Could you always start the reply with ...?": a request in question form that says it stands
_POLITE_STANDING = re.compile(r"^(?:(?:hey|hi|ok|okay|so|and|also|please)[,\s]+)*(?:(?:could|can|would|will) you(?: please)?|"
                              r"would you mind|do you mind)\s+"
                              r"(?:always|never|from now on|going forward|make sure to always)\s+(?P<rest>\w.+?)\?\s*$", re.I | re.S)

#: a label that announces a standing rule ("Assistant policy: ...", "Standing rule for this repo: ...")
_RULE_LABEL = re.compile(r"^(?:(?:the |our |my |a )?(?:assistant|house|team|workspace|project|standing|new|general|ground|"
                         r"support|office|company)\s+)?(?:policy|rule|order|instruction|requirement|guideline)s?"
                         r"(?:\s+(?:for|in|on) (?:this|the|our|my|all) [\w' -]{1,30}?)?\s*:\s*(?P<rest>\w.+)$", re.I | re.S)
#: "Every PR you open needs ...": a quantified subject that the agent produces
_QUANT_AGENT = re.compile(r"^(?:every|each|all|any)\s+(?:[\w'’/-]+\s+){1,4}?(?:you|u)\s+(?:open|write|send|make|create|file|"
                          r"draft|book|raise|submit|push|ship|deploy|produce|post|reply to|answer|log|close|issue)\s+"
                          r"(?:needs?|requires?|must|should|has to|have to|gets?)\b", re.I)

_NUMBER_WORD = (r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|"
                r"hundred|a (?:couple|dozen|few))")
_LIMIT_WORDS = re.compile(r"^(?:no more than|not more than|at most|at the most|a maximum of|max(?:imum)?|never more than)\s+"
                          + _NUMBER_WORD + r"\b(?![^.!?]*\b(?:is|are|was|were|came|come|showed|turned)\b)", re.I)
_ELLIPTIC_ONLY = re.compile(r"^(?:just|only)\s+(?:the\s+)?[\w'’ -]{2,60}?,?\s*(?:and\s+)?(?:nothing|no one|nobody|none|nowhere)\s+"
                            r"(?:else|more|outside)\b", re.I)
_RESTRICT_VERB_R5 = re.compile(r"^(?:confine|scope|narrow|constrain|restrict|limit|keep)\s+(?:your |the |all |any |every |our |my )?"
                               r"[\w'’/ -]{2,50}?\s+(?:to|within|inside|under|below)\s+(?:the |a |an |your |our |one |\w+/|\d)", re.I)
_KEEP_REGISTER = re.compile(r"^keep\s+(?:the |your |all |our |every |each |any )?[\w'’ -]{1,40}?\s+(?:polite|professional|"
                            r"concise|friendly|neutral|simple|factual|courteous|casual|formal|informal|plain|warm|upbeat|"
                            r"short and (?:sweet|simple)|jargon-free|anonymous|confidential|private|blameless)\s*[.!]?$", re.I)
_NOTHING_OUTSIDE = re.compile(r",\s*(?:and\s+)?(?:nothing|none|no(?:thing)? changes?)\s+(?:outside|beyond|else|more)\b", re.I)

_EMPHATIC_NO = re.compile(r"^no\s+(?!(?:more than|worries|problem|way|doubt|idea|clue|kidding|thanks|offence|offense|"
                          r"pressure|rush|judgment|judgement|big deal|one|matter|wonder|need)\b)[\w'’ -]{2,40}?"
                          r"(?:,\s*(?:full stop|period|ever|at all|whatsoever|no exceptions|end of story)\b|\s+for (?:me|us|this "
                          r"(?:account|client|customer|trip|project))\b)", re.I)

_PERMIT_R5 = re.compile(r"^(?:(?:i'm|i am|we're|we are) (?:happy|fine|ok|okay|comfortable|content) for you to|"
                        r"it(?:'s| is) (?:fine|ok|okay|alright|all right) (?:if|when) you|"
                        r"(?:the )?(?:agents?|operators?|staff|reps?|the assistant|assistants|the team) (?:may|can|are allowed to|"
                        r"are permitted to|are free to|is allowed to|is permitted to))\s+(?P<rest>\w.+)$", re.I | re.S)
_PERMIT_R5_STRONG = re.compile(r"\b(?:on (?:your|their) own|without (?:asking|checking|running|escalat|my|a |approval)|"
                               r"on my behalf|at (?:your|their) (?:discretion|own)|whenever|anything|any\b|if (?:the|a|an|it|they|you)|"
                               r"as long as|up to|affected|by yourself)", re.I)
_CODE_THING = re.compile(r"\b[\w.-]+/(?:\w|\s|$)|\b\w+\.(?:py|js|ts|go|rs|json|yaml|yml|toml|md|sql|csv|txt)\b|`[^`]+`")

_EVENT_DATE = re.compile(r"\b(?:by|before|ahead of|in time for)\s+(?:the\s+)?[\w'’ -]{2,30}?\s+(?:on|at)\s+" + _DATE + r"\b", re.I)
_RELATIVE_DEADLINE = re.compile(r"\b(?:no later than|not later than|at least|at the latest)\s+(?:\d+|" + _NUMBER_WORD + r")\s+"
                                r"(?:minutes?|hours?|days?|weeks?|working days?|business days?)\s+(?:before|prior to|ahead of)\b", re.I)
_CLOSES_AT = re.compile(r"\b(?:closes?|expires?|ends?|lapses?|runs? out|shuts?|locks?|is cut off|goes live)\s+(?:at|on|by)?\s*"
                        r"(?:\d{1,2}[:.]\d{2}(?:\s*utc)?|" + _DATE + r")", re.I)
_CUTOFF = re.compile(r"^(?:the\s+)?(?:cut-?off|cutoff|closing date|closing time|last day|final day|latest)\s+(?:for|to|on)\s+"
                     r"[\w'’ -]{2,40}?\s+is\s+(?:\d|" + _DATE + r")", re.I)
_HAVE_UNTIL = re.compile(r"^(?:we|you|i)(?:'ve| have)?\s+(?:have |got |only have |have got )?until\s+" + _DATE + r"\s+to\s+\w+", re.I)
_DEADLINE_LABEL = re.compile(r"^(?:hard |firm |final )?deadline\s*[:—-]\s*\w", re.I)
_GOT_TO = re.compile(r"^(?:you've|you have|you)\s+(?:got to|gotta)\s+(?P<rest>\w.+)$", re.I | re.S)

_BLOCKED_UNTIL = re.compile(r"\b(?:is|are|stays?|remains?)\s+(?:blocked|on hold|paused|frozen|gated|parked|held)\s+(?:until|till|"
                            r"pending)\b", re.I)
_WITHOUT_LEAD = re.compile(r"^(?:without|unless|until)\s+[^,]{2,60},\s*(?P<main>(?:do not|don't|never|you (?:can't|cannot|mustn't|"
                           r"may not)|no)\b.+)$", re.I | re.S)
_AFTER_CLAUSE = re.compile(r"\s(?:after|once|only when|only after|as soon as)\s+(?:the|a|an|our|my|your|their|all|both|it|they|"
                           r"we|you|he|she)\b[\w'’ -]{0,50}?\b(?:has|have|is|are|gets?|got)\s+\w+", re.I)

_KIN = (r"(?:kids?|children|son|daughter|mum|mom|mother|dad|father|parents?|wife|husband|partner|girlfriend|boyfriend|"
        r"brother|sister|siblings?|family|friends?|grandma|grandpa|grandparents?|landlord|neighbou?rs?|roommates?|flatmates?|"
        r"boss|teacher|coach|doctor|dog|cat|pets?|uncle|aunt|cousins?|colleagues?)")
#: family and friends (a boss, a doctor or a landlord approving something is news for the task)
_KIN_CLOSE = (r"(?:kids?|children|son|daughter|mum|mom|mother|dad|father|parents?|wife|husband|partner|girlfriend|boyfriend|"
              r"brother|sister|siblings?|family|friends?|grandma|grandpa|grandparents?|roommates?|flatmates?|dog|cat|pets?|"
              r"uncle|aunt|cousins?)")
_APPROVAL_THIRD = re.compile(r"^(?!(?:i|we|he|she|they|you)\b)(?!(?:my|our|his|her|their)\s+(?:\w+\s+)?" + _KIN_CLOSE + r"\b)"
                             r"(?:[\w'’.-]+\s+){1,4}?(?:has |have |just |finally |officially )?(?:approved|okayed|ok'd|greenlit|"
                             r"green-lit|signed off on|authori[sz]ed|accepted)\s+(?:the|our|my|your|this|that|their|a|an)\s+"
                             r"[\w'’ -]{2,60}", re.I)
_APPROVAL_NOUN = re.compile(r"^(?:(?:final|formal|official|full)\s+)?(?:sign-?off|approval|go-ahead|green light|clearance|"
                            r"authori[sz]ation)\s+(?:received|given|granted|obtained|confirmed|secured|in)\b", re.I)
_APPROVAL_PROGRESSIVE = re.compile(r"^(?:i'm|i am|we're|we are)\s+(?:hereby\s+)?(?:approving|authori[sz]ing|signing off on|"
                                   r"okaying|greenlighting|green-lighting|sanctioning)\s+(?:the|a|an|this|that|your|our|\$|£|€|\d)",
                                   re.I)
_APPROVAL_DEICTIC = re.compile(r"^(?:(?:yep|yes|yeah|ok|okay|sure|right)[,.!]?\s+)*(?:that|this|it)(?:'s| is)\s+(?:now\s+)?(?:approved|authori[sz]ed|signed off)\s*"
                               r"(?:(?:from|on|by|for)\s+(?:my|our|me|us)\b.*)?[.!]?$", re.I)
#: a bare approval word that a following imperative spells out ("Approved. Go ahead and refund ...")
APPROVAL_INTERJECTION = re.compile(r"^(?:(?:ok|okay|yes|yep|fine|sure|right|alright)[,.!]?\s+)*(?:approved|sign-?off given|"
                                   r"approval (?:given|granted)|you have my approval|green light|greenlit)\s*[.!,:]?\s*$", re.I)

_EVIDENCE_LABEL = re.compile(r"^(?:(?:confirmed|verified|checked)(?: (?:with|by) [\w'’ -]{2,30}?)?|proof|documented|established|on record|"
                             r"for the file|note for the file|note for the record|logged|noted)\s*:\s*(?P<fact>\w.+)$", re.I | re.S)
_EVIDENCE_DOC_R5 = re.compile(r"^(?:the|this|that|their|his|her|our|my)\s+(?:[\w'’-]+\s+){0,2}?(?:" + _DOC + r"|" + _DOC_R5 + r"|results?|test(?: run)?|"
                              r"tests|scan|check|inspection|investigation|review|analysis|search|survey|lab|trace|x-ray)s?\b"
                              r"(?:\s+(?!(?:shows?|found|revealed|proves?|confirms?)\b)[\w'’-]+){0,4}?\s+(?:shows?|showed|found|"
                              r"revealed|reveals|identified|flagged|proves?|proved|confirms?|confirmed|came back|is back|are back|"
                              r"returned|records?|recorded|lists?|listed|reads)\b", re.I)
_VERIFIED_THAT = re.compile(r"^(?:i|we)(?:'ve| have)?\s+(?:verified|confirmed|checked|double-checked|established|made sure)\s+"
                            r"(?:that\s+)?(?:the|a|an|their|his|her|its|our|all)\b", re.I)
_PER_SOURCE = re.compile(r"^(?:per|as per|based on|going by|judging by)\s+(?:the |our |their |his |her |its |my |this |that )?"
                         r"(?:[\w'’-]+(?:'s|’s)?\s+){0,3}?" + _DOC + r"s?\b", re.I)
#: a reference number stated as a fact ("The police report number for the break-in is CR/2291/24"); never a code,
#: PIN or password, which would then stand verbatim in every context
_IDENTIFIER_FACT = re.compile(r"^(?:the|our|my|your|their)\s+(?![\w'’ -]{0,40}?\b(?:vault|door|access|security|pin|"
                              r"pass(?:word|code|phrase)?|login|secret|safe|alarm|gate|lock)\b)"
                              r"[\w'’ -]{0,40}?(?:number|reference|ref|serial|case|claim|booking|tracking|order|policy)"
                              r"(?:\s+(?:for|of|on)\s+[\w'’ -]{2,40}?)?\s+(?:is|was)\s+[A-Z0-9#][\w/#-]*\d", re.I)

_DECISION_LABEL = re.compile(r"^(?:it(?:'s| is) (?:settled|decided|official|final)|that(?:'s| is) (?:final|settled|decided)|"
                             r"decided|resolved|final(?: call| word| decision| answer)?|verdict|outcome|agreed|conclusion"
                             r"(?: of (?:the|our|today's) [\w -]{2,20})?|the decision)\s*:\s*(?P<rest>\w.+)$", re.I | re.S)
_DECISION_AGENT = re.compile(r"^(?:the |our )?(?:team|board|committee|group|management|leadership|council|panel|jury|client|"
                             r"customer|owners?|partners|directors?|we)\s+(?:has |have )?(?:chose|chosen|picked|selected|"
                             r"opted for|settled on|went with|gone with|determined|resolved|agreed|voted|decided)\b", re.I)
_DECISION_PASSIVE = re.compile(r"\b(?:has been|have been|is|are|got)\s+(?:now\s+)?(?:chosen|selected|picked|confirmed|agreed)\s+"
                               r"(?:as|for)\s+(?:the|our)\b", re.I)
_DECISION_LOCKED = re.compile(r"^(?:the|our)\s+[\w'’ -]{2,40}?\s+(?:is|are)\s+(?:now\s+)?(?:locked(?: in)?|set in stone|"
                              r"finali[sz]ed|final|decided|settled|fixed|confirmed)\s*(?::|,|\.|$|for\b|as\b)", re.I)
_DECISION_SELECT = re.compile(r"^(?:let's|let us|we'll|we will|we're|we are|we've|we have)\s+(?:go(?:ne|ing)? with|opt(?:ing)? for|"
                              r"settl(?:e|ing) on)\s+(?:a|an|the|option|plan|version)\s+(?!flow\b)[\w'’-]+", re.I)
_DECISION_WILL = re.compile(r"^we(?:'ll| will| shall)\s+(?!(?:see|be|have|try|talk|chat|meet up|catch up|get|keep|hang|miss|"
                            r"need|make it|figure)\b)[a-z]+\s+(?:the|our|all|every|each)\b", re.I)

_RESET_R5 = re.compile(
    r"(?:^|[.!?;:,—]\s*)(?:total|full|complete|hard|big) reset\b|(?:^|[.!?]\s*)reset (?:on|of|for) (?:the |our )?[\w -]{2,30}?:|"
    r"\b(?:redo|rework|rethink|rewrite|remake|rebuild) (?:the|our|this|that) (?:whole |entire )?(?:[\w-]+ )?plan\b|"
    r"\bplan from (?:zero|scratch|the top)\b|"
    r"\b(?:throw|toss|chuck|bin) (?:all (?:of )?)?(?:that|this|it|everything|those)\s+(?:out|away)\b|"
    r"(?:^|[.!?]\s*)(?:new|revised|different|updated) plan\s*[,:;—-]|"
    r"(?:^|[.!?]\s*)(?:on second thoughts?|on reflection|thinking about it (?:more|again)|come to think of it)\s*,|"
    r"\b(?:we're|we are|i'm|i am) (?:pivoting|changing (?:direction|course|tack)|doing a u-turn)\b|"
    r"\bthe plan (?:is now|has changed|now is)\b|(?:^|[.!?]\s*)update\s*:\s*the plan\b|"
    r"\bforget (?:the|that|this) (?:old|earlier|previous|original) one\b", re.I)
#: what a reset phrase may run on with ("Forget everything I said so far; ...")
_RESET_TAIL = re.compile(r"^\s*(?:that\s+)?(?:i|we|you)(?:'ve| have)?\s+(?:said|told you|discussed|agreed|planned|decided|"
                         r"wrote|asked for)(?:\s+(?:so far|until now|up to now|before|earlier|above))?\s*", re.I)
#: "Actually, let's send it on Thursday instead." (a decision restated with a trailing "instead")
_TRAILING_INSTEAD = re.compile(r"^(?:(?:actually|ok|okay|so|no|wait|hmm)[,\s]+)*(?:let's|let us|we'll|we will|we're going to|"
                               r"we should|we'll go with|we're going with)\s+.{3,}?\binstead\s*[.!]?\s*$", re.I | re.S)
_PLAN_NAMED = re.compile(r"^(?:the|our|that|this)\s+(?:[\w-]+\s+){0,2}?(?:plan|approach|arrangement|setup|schedule|decision)$", re.I)


def reset_r5(text: str) -> "re.Match[str] | None":
    """A reset of the plan in a round-5 form (family ``reset_forms_r5``): a reset noun ("Total
    reset."), redoing the plan, throwing all that out, "New plan, ...", "On second thought, ...",
    a pivot, "the plan is now ...", a restated decision ending in "instead"."""
    if not families.on(F_RESET_R5):
        return None
    return _RESET_R5.search(text) or _TRAILING_INSTEAD.match(text.strip())


def reset_rest(text: str, end: int) -> str:
    """What follows a reset phrase ending at ``end``, past any "(that) I said so far" it runs on with."""
    rest = text[end:]
    if families.on(F_RESET_R5):
        m = _RESET_TAIL.match(rest)
        if m:
            rest = rest[m.end():]
    return rest


def plan_named(old: str) -> bool:
    """The replaced part of "Replace X with Y" names a plan ("the archive plan")."""
    return families.on(F_RESET_R5) and bool(_PLAN_NAMED.match(old.strip()))


# revocations, round 5
_RULE_NOUN = r"(?:ban|restriction|rule|requirement|limit|constraint|instruction|policy|embargo)"
_WITHDRAW_R5 = re.compile(
    # "The no-texting rule for reminders is lifted", "The no-discount policy on the premium plan is rescinded"
    r"^(?:the|that|this|my|our)\s+(?P<what>[\w$€£%'’ -]{2,40}?)\s+" + _RULE_NOUN + r"s?(?:\s+(?:for|on|about|regarding|around|"
    r"against)\s+(?P<extra>[\w$€£%'’ -]{2,40}?))?\s+(?:is|are|has been|have been)\s+(?:now\s+)?(?:lifted|over|cancell?ed|"
    r"revoked|removed|dropped|gone|off|void|rescinded|withdrawn|repealed|scrapped|retired|suspended|ended)\b|"
    r"^(?:the|that|this|my|our)\s+(?P<what2>[\w$€£%'’ -]{2,40}?)\s+" + _RULE_NOUN + r"s?(?:\s+(?:for|on|about|regarding)\s+"
    r"(?P<extra2>[\w$€£%'’ -]{2,40}?))?\s+(?:no longer (?:applies|stands|holds)|doesn't apply any ?more)\b|"
    # "Forget the $500 refund rule."
    r"\b(?:forget|disregard|ignore|scratch|cancel|drop|lift|remove|withdraw|rescind|undo|scrap|ditch|bin|kill|suspend|waive|"
    r"void|retire)\s+(?:the|my|that|this|our)\s+(?P<what3>(?!(?:old|earlier|previous|last|original|first|new|other)\b)[\w$€£%'’ -]{2,40}?)\s+" + _RULE_NOUN + r"s?"
    r"(?:\s+(?:for|on|about|regarding)\s+(?P<extra3>[\w$€£%'’ -]{2,40}?))?(?=\s*(?:[.!?,;]|$))|"
    # "I take back what I said about X"
    r"\b(?:take back|retract|walk back|reverse|undo)\s+what (?:i|we) (?:said|told you|asked)\s+(?:about|on|regarding|re)\s+"
    r"(?P<what4>[^.!?;]+)|"
    # "You no longer need to call the client after site visits."
    r"\byou no longer (?:need|have) to\s+(?P<what5>[^.!?;]+?)(?:\s+(?:anymore|any more|any longer))?"
    r"(?=\s*(?:[.!?;]|$))|"
    # "no need to stick to nonstop"
    r"\bno need to (?:stick to|keep to|limit (?:it|yourself|things) to|restrict (?:it|yourself) to|only)\s+(?P<what6>[^.!?;,]+)|"
    # "I'm withdrawing the ban on LinkedIn posts"
    r"\b(?:i(?:'m| am)|we(?:'re| are))\s+(?:lifting|dropping|removing|cancell?ing|ending|withdrawing|scrapping|rescinding)\s+"
    r"(?:the|my|our)\s+(?:[\w-]+\s+)?" + _RULE_NOUN + r"s?\s+(?:on|about|against|for|regarding)\s+(?P<what7>[^.!?;]+)", re.I)
#: "X is back on (the table)", "X are allowed from today": X allowed again (a weaker withdrawal)
_WITHDRAW_BACK_ON = re.compile(
    r"^(?P<what>(?!it\b|that\b|this\b|everything\b|all\b|things\b|i\b|we\b|you\b)[^.!?;,]+?)\s+(?:is|are)\s+(?:back on(?: the table)?|"
    r"back in play|(?:fine|ok|okay|allowed|permitted|alright) (?:from|as of|starting) (?:today|now|tomorrow|this week|"
    r"monday|tuesday|wednesday|thursday|friday))\b", re.I)
#: a rule named with no words of its own ("ignore my old rule"), taking its words from the sentence
_WITHDRAW_BARE = re.compile(r"\b(?:ignore|forget|drop|disregard|scrap|cancel)\s+(?:my|the|that)\s+(?:old|earlier|previous|"
                            r"original|last)\s+" + _RULE_NOUN + r"\b", re.I)


def withdrawn_r5(sentence: str) -> tuple[str, bool] | None:
    """``(words naming what is withdrawn, explicit)`` for a round-5 revocation form, else None."""
    if not families.on(F_REVOKE_R5):
        return None
    s = _strip(normalise(sentence))
    m = _WITHDRAW_R5.search(s)
    if m:
        g = {k: v for k, v in m.groupdict().items() if v}
        what = " ".join(v for k, v in sorted(g.items()))
        return split_hyphens(what), True
    m = _WITHDRAW_BACK_ON.search(s)
    if m and not _QUESTION.search(s):
        rest = s[m.end():]
        explicit = bool(_WITHDRAW_BARE.search(rest))
        return split_hyphens(m.group("what")), explicit
    return None


def split_hyphens(text: str) -> str:
    """``no-loaner-laptops`` -> ``no loaner laptops`` (a rule named by a hyphenated compound)."""
    return re.sub(r"(?<=[\w$€£%])-(?=[\w$€£%])", " ", text)


def stop_doing(clause: str) -> bool:
    """"Stop printing copies of the contracts": ends an obligation to do it (family ``revoke_forms_r5``)."""
    return families.on(F_REVOKE_R5) and bool(re.match(r"^(?:please\s+)?(?:stop|quit|cease|no more)\s+\w+ing\b", _strip(clause), re.I))


# completions: the condition a waiting record names is met ("The payment went through", "The
# customer replied on 7781", "KYC checks are completed", "I've submitted the timesheets")
_COMPLETED = re.compile(
    r"\b(?:is|are|has been|have been|was|were|'s)\s+(?:now\s+|all\s+|finally\s+)?(?:done|finished|complete|completed|through|in|"
    r"received|signed|cleared|sorted|ready|back|verified|confirmed|fixed|green|approved|paid|delivered|submitted|filed|"
    r"booked|installed|resolved|passed|returned|inspected|reviewed|agreed|settled|closed)\b|"
    r"\b(?:went through|came (?:in|through|back)|arrived|landed|replied|responded|answered|signed|paid|passed|cleared|"
    r"cleared|showed up|turned up|got back)\b|"
    r"^(?:i|we)(?:'ve| have| just)\s+(?:just\s+)?(?:submitted|sent|filed|done|finished|completed|delivered|paid|returned|"
    r"uploaded|signed|booked|got|gathered|received|collected|obtained|secured)\b|"
    r"^(?:all set|sorted|done)\s+(?:with|on)\b|\bin hand\b", re.I)


def _completed(s: str) -> bool:
    """``bool(_COMPLETED.search(s))``: on ASCII text, :data:`_COMPLETED_LOWER` on the text lowercased."""
    if s.isascii():
        return _COMPLETED_LOWER(s.lower()) is not None
    return _COMPLETED.search(s) is not None


def completion(sentence: str) -> bool:
    """The sentence says something is done or has arrived (family ``completion_forms``).
    Remembered per sentence and family state (see the comment at :func:`_remembered_clear`)."""
    return _completion(sentence, _off_key())


@lru_cache(maxsize=2048)
def _completion(sentence: str, _off: frozenset) -> bool:
    s = _strip(sentence)
    return families.on(F_COMPLETION) and not _QUESTION.search(s) and _completed(s) and not re.search(
        r"\b(?:not|n't|never|yet to|once|when|until|if|before)\b", s, re.I) or completion_r8(sentence)


def first_person_completion(sentence: str) -> bool:
    """"I've submitted the timesheets": the speaker did a one-off task (ends a deadline for it)."""
    return families.on(F_COMPLETION) and bool(re.match(
        r"^(?:i|we)(?:'ve| have| just)\s+(?:just\s+)?(?:submitted|sent|filed|done|finished|completed|delivered|paid|returned|"
        r"uploaded|signed|booked)\b", _strip(sentence), re.I))


# narration about third parties in a directive's shape ("my landlord never answers emails before
# noon", "My kids are not allowed sweets before dinner", "Approved or not, I'm proud of it")
_NARRATED = re.compile(r"^(?:(?:lol|haha|omg|ugh|honestly|so)[,!\s]+)*(?:my|our|his|her|their)\s+(?:\w+\s+)?" + _KIN +
                       r"\s+(?:(?:never|always|usually|often|rarely|still)\s+\w+s\b|(?:is|are|was|were)\s+(?:not |never )?(?:allowed|"
                       r"permitted|supposed)\b|\w+s\b(?! (?:to me|me)\b))", re.I)
_CONCESSIVE = re.compile(r"\b(?:approved|allowed|permitted|deadline|rules?) or not\b", re.I)
_RECOMMEND = re.compile(r"^(?:(?:oh|and|also|but)[,\s]+)*(?:make sure|be sure)\s+(?:you\s+|to\s+)?(?:try|visit|see|check out|go|"
                        r"get to|grab|taste|watch|bring|take|pack|enjoy|stop by|eat|order the)\b[^!]*!\s*$", re.I)


def not_a_directive(sentence: str) -> bool:
    """Narration about the speaker's people, a concessive "approved or not", or a recommendation
    to enjoy something (family ``narrated_third_party``): small talk whatever its shape.
    Remembered per sentence and family state (the extractor asks twice per sentence)."""
    return _not_a_directive(sentence, _off_key())


@lru_cache(maxsize=2048)
def _not_a_directive(sentence: str, _off: frozenset) -> bool:
    if reported(sentence) or narrated_r9(sentence) or casual_r10(sentence) or narrated_r10(sentence):  # "The article says companies must report breaches within 72 hours."
        return True
    if not families.on(F_NARRATED):
        return False
    s = sentence.strip()
    return bool(_NARRATED.match(s) or _CONCESSIVE.search(s) or _RECOMMEND.match(s)
                or _SHOWS_HOW.search(s) or _INVITATION.match(s))


def _complement_object(clause: str) -> bool:
    """"check that the customer ...": "that" opens a clause, it is not the object pronoun."""
    return bool(re.match(_PRE_VERB + r"[a-z-]+\s+that\s+(?:the|a|an|all|every|each|no|your|our|their|its|his|her|you|they|"
                         r"we|it|he|she|there|this|these|those|[a-z]+'s)\b", clause, re.I))


def classify_r5(sentence: str) -> tuple[str, str] | None:
    """The round-5 phrasing classes for a sentence none of the earlier rules read (each a family
    of :mod:`memfold.memory.families`)."""
    s = sentence.strip()
    question = bool(_QUESTION.search(s))
    if families.on(F_POLITE_QUESTION) and question:
        m = _POLITE_STANDING.match(_LIGHT_LEADS.sub("", s))
        if m and (concrete(m.group("rest")) or imperative(m.group("rest"))):
            return "obligation", "polite_request"
    if question or advice(s):
        return None
    lead, main = main_clause(s)
    whole = _strip(s)
    past = bool(_PAST.search(_GOT_TO_R5.sub(" ", whole)))
    exclaim = s.rstrip().endswith("!")
    if exclaim and not concrete(s):
        return None
    if families.on(F_PREREQ_R5) and not past:
        m = _WITHOUT_LEAD.match(whole)
        if m and concrete(whole):
            return "prerequisite", "prerequisite_form"

    if families.on(F_AGENT_NOUN) and not past and (m := _AGENT_NOUN.match(whole)) \
            and not re.fullmatch(_KIN + r"s?", m.group("noun"), re.I) and not _EPISTEMIC.match(m.group("rest")):
        modal = m.group("modal").lower()
        if re.search(r"not|never", modal):
            return "constraint", "role_modal"
        if re.search(r"allowed|permitted|authori|free|entitled|may", modal):
            return "permission", "role_permission"
        return "obligation", "role_modal"
    if families.on(F_QUANT_PASSIVE) and not past and _QUANT_PASSIVE.match(whole) and not exclaim:
        return "obligation", "quantified_needs"
    if families.on(F_DECISION_NP) and not past and not exclaim and (
            _DECIDED_TO.match(whole) or _GOING_WITH_NP.match(whole) or _WILL_NP_DETAIL.match(whole)):
        return "policy_state", "decision"
    if families.on(F_ROLE_SUBJECT):
        if _INVERTED_PROHIBIT.match(whole):
            return "constraint", "never"
        m = _ROLE_MODAL.match(main)
        if m and not past and not _EPISTEMIC.match(m.group("rest")) and not _EVALUATIVE.match(m.group("rest")):
            modal = m.group("modal").lower()
            if re.search(r"\b(?:allowed|permitted|authori[sz]ed|free)\b", modal) and not re.search(r"not|n't", modal) \
                    or re.match(r"^(?:may|can)$", modal):
                return "permission", "role_permission"
            if re.search(r"not|n't|never", modal):
                return "constraint", "role_modal"
            if _deadline(s):
                return "deadline", "deadline_form"
            return ("constraint", "role_modal") if re.search(r"\bonly\b", modal + " " + m.group("rest")) else ("obligation", "role_modal")

    if families.on(F_PASSIVE_DEONTIC) and not past:
        if _PASSIVE_PROHIBITED.search(whole):
            return "constraint", "prohibition_state"
        m = _PASSIVE_REQUIRED.match(whole)
        if m and concrete(m.group("subject")) and not re.search(r"\bif you\b", whole, re.I):
            return "obligation", "passive_required"
        m = _PASSIVE_LIMITED.match(whole)
        if m and concrete(whole):
            return "constraint", "passive_limited"
        m = _PASSIVE_CAN_WITHOUT.match(whole)
        if m and concrete(m.group("subject")):
            return "permission", "passive_permission"

    if families.on(F_RULE_LABEL):
        m = _RULE_LABEL.match(whole)
        if m:
            rest = m.group("rest")
            if imperative(rest) or re.match(r"^(?!(?:i|we|you|he|she|they|it|the|a|an|my|our|your)\b)[a-z]+(?:-[a-z]+)?\s+\w",
                                            rest, re.I) and (concrete(rest) or _STANDING.search(rest)):
                if re.match(r"^(?:never|don't|do not|no)\b", rest, re.I):
                    return "constraint", "rule_label"
                return "obligation", "rule_label"

    if families.on(F_QUANT_AGENT) and _QUANT_AGENT.match(main) and not past:
        return "obligation", "quantified_needs"

    if families.on(F_LEAD_BARE_VERB) and lead and not past:
        shaped = _IMPERATIVE_SHAPE.match(main) or imperative(main) or _complement_object(main) and _first_word(main) in _VERBS
        if shaped and concrete(s) and not re.match(r"^(?:let|make|have|keep|take|give|feel|go|get|enjoy|try|see|wish|hope|"
                                                   r"thank|tell|ask)\b", main, re.I):
            if _PROHIBIT_VERB.match(main):
                return "constraint", "prohibit_verb"
            if re.match(r"^(?:before|once|after|until|prior to|ahead of)\b", lead, re.I) or _PREREQ.search(s):
                return "prerequisite", "prerequisite_form"
            if _deadline(s):
                return "deadline", "deadline_form"
            if re.match(r"^(?:if|when|whenever|each time|every time|any ?time|should)\b", lead, re.I) or (
                    families.on(F_QUANT_PASSIVE) and re.match(r"^(?:in case|in the event|where|provided|unless)\b", lead, re.I)):
                return "obligation", "conditional_imperative"

    if families.on(F_RESTRICT_R5) and not past:
        if _LIMIT_WORDS.match(whole) and len(whole.split()) >= 4:
            return "constraint", "limit"
        if _ELLIPTIC_ONLY.match(whole):
            return "constraint", "imperative_limit"
        if _RESTRICT_VERB_R5.match(main) and (concrete(main) or _STANDING.search(main) or _NAMED.search(main)
                                              or _CODE_THING.search(main)):
            return "constraint", "restrict_verb"
        if _KEEP_REGISTER.match(main) and concrete(main):
            return "constraint", "restrict_verb"
        if _NOTHING_OUTSIDE.search(main) and (imperative(main) or _IMPERATIVE_SHAPE.match(main)
                                              or re.match(r"^[a-z]+ (?:your|the|all)\b", main, re.I)):
            return "constraint", "imperative_limit"

    if families.on(F_EMPHATIC_NO) and _EMPHATIC_NO.match(whole) and not past:
        return "constraint", "prohibition_state"

    if families.on(F_PERMIT_R5):
        m = _PERMIT_R5.match(main) or _PERMIT_R5.match(whole)
        if m and not past and not _PERMIT_SOCIAL.match(m.group("rest")):
            rest = m.group("rest")
            if concrete(rest) or _PERMIT_R5_STRONG.search(rest) or _CODE_THING.search(rest):
                return "permission", "permission_form"
        pm = _PERMIT.match(main) or _PERMIT.match(whole)
        if pm and not past:
            rest = (main if _PERMIT.match(main) else whole)[pm.end():].strip()
            if not _PERMIT_SOCIAL.match(rest) and len(rest.split()) >= 3 and (
                    _CODE_THING.search(rest) or _PERMIT_R5_STRONG.search(rest) and (concrete(rest) or _BARE_VERB.match(rest))):
                return "permission", "permission_form"

    if families.on(F_DEADLINE_R5) and not past and not _I_WILL_R5.match(whole):
        g = _GOT_TO.match(whole)
        if g and _deadline(s):
            return "deadline", "deadline_form"
        if _DEADLINE_LABEL.match(whole) and (concrete(whole) or _deadline(s)):
            return "deadline", "deadline_form"
        if _HAVE_UNTIL.match(whole) or _CUTOFF.match(whole):
            return "deadline", "deadline_form"
        if (_EVENT_DATE.search(s) or _RELATIVE_DEADLINE.search(s) or _CLOSES_AT.search(s)) and (
                concrete(s) or re.search(r"\b(?:must|has to|have to|needs? to|should|due|before then|use it|submit|apply|"
                                         r"register|book|send|file)\b", s, re.I) or imperative(main)):
            return "deadline", "deadline_form"

    if families.on(F_PREREQ_R5) and not past:
        if _BLOCKED_UNTIL.search(whole) and concrete(whole):
            return "prerequisite", "prerequisite_form"
        if (imperative(main) or _IMPERATIVE_SHAPE.match(main)) and _AFTER_CLAUSE.search(main) and not exclaim:
            return "prerequisite", "prerequisite_form"

    if families.on(F_APPROVAL_R5) and not exclaim and not _APPROVE_OF.search(whole):
        if _APPROVAL_NOUN.match(whole) or _APPROVAL_PROGRESSIVE.match(whole) or _APPROVAL_DEICTIC.match(whole):
            return "approval", "approval_statement"
        if _APPROVAL_THIRD.match(whole):
            return "approval", "approval_statement"
        m = _APPROVED_LEAD_R5.match(whole)
        rest = re.sub(r"^(?:(?:go ahead and|go ahead,?|please|you can|feel free to)\s+)+", "", m.group("rest"), flags=re.I) \
            if m else ""
        if m and (imperative(rest) or _IMPERATIVE_SHAPE.match(rest)):
            return "approval", "approval_statement"

    if families.on(F_EVIDENCE_R5) and not exclaim:
        m = _EVIDENCE_LABEL.match(whole)
        if m and concrete(m.group("fact")):
            return "evidence", "evidence"
        if (_EVIDENCE_DOC_R5.match(whole) or _PER_SOURCE.match(whole)) and concrete(re.sub(_DOC, " ", whole, flags=re.I)):
            return "evidence", "evidence_document"
        if _VERIFIED_THAT.match(whole) and concrete(whole):
            return "evidence", "evidence"
        if _IDENTIFIER_FACT.match(whole):
            return "evidence", "evidence"

    if families.on(F_DECISION_R5) and not exclaim and len(whole.split()) >= 4:
        m = _DECISION_LABEL.match(whole)
        if m and len(m.group("rest").split()) >= 3 and not past:
            return "policy_state", "decision"
        for clause in dict.fromkeys((whole, main)):
            if _LAST_AGO.search(clause):
                continue
            if _DECISION_AGENT.match(clause) and (concrete(clause) or _NAMED.search(clause)
                                                  or re.search(r"\b(?:the|a|an) \w+|\bthat\b", clause)):
                return "policy_state", "decision"
            if _DECISION_PASSIVE.search(clause) and (concrete(clause) or _NAMED.search(clause)):
                return "policy_state", "decision"
            if _DECISION_LOCKED.match(clause):
                return "policy_state", "decision"
            if _DECISION_SELECT.match(clause) and not re.search(r"\b(?:friends?|family|kids|him|her|them|my|mum|mom|dad)\b",
                                                               clause, re.I):
                return "policy_state", "decision"
            if _DECISION_WILL.match(clause) and concrete(clause):
                return "policy_state", "decision"
    return None


# -- round 8: phrasing classes from the blind set fresh4 (issue 20, point 10) ------------------------
# ``fresh4`` was written blind in round 5 and measured once (61.8% of its standing instructions);
# its misses were then read for the class of phrasing each stands for, and each class below is one
# family registered with it. Every family has a test with new sentences of its class
# (``tests/test_phrasing_classes_r8.py``).
F_GENERIC_IMPERATIVE = family("generic_imperative", {"fresh4"})
F_PLAN_STATEMENT = family("plan_statement", {"fresh4"})
F_LEAD_STRIP = family("lead_strip", {"fresh4"})
F_SPEAKER_INTRO = family("speaker_intro", {"fresh4"})
F_APPROVAL_R8 = family("approval_forms_r8", {"fresh4"})
F_EVIDENCE_R8 = family("evidence_forms_r8", {"fresh4"})
F_DECISION_R8 = family("decision_forms_r8", {"fresh4"})
F_RESTRICT_R8 = family("restriction_forms_r8", {"fresh4"})
F_PERMIT_R8 = family("permission_forms_r8", {"fresh4"})
F_DEADLINE_R8 = family("deadline_forms_r8", {"fresh4"})
F_PREREQ_R8 = family("prerequisite_forms_r8", {"fresh4"})
F_RESET_R8 = family("reset_forms_r8", {"fresh4"})
F_REVOKE_R8 = family("revoke_forms_r8", {"fresh4"})
F_COMPLETION_R8 = family("completion_forms_r8", {"fresh4"})
F_REPORTED = family("reported_deontic", {"fresh4"})
F_PROHIBIT_R8 = family("prohibition_forms_r8", {"fresh4"})
F_POLITE_HABIT = family("polite_habit_request", {"fresh4"})
F_LIST_UNDER_LEAD = family("list_under_lead", {"fresh4"})

#: verbs a standing instruction opens with beside :data:`_VERBS` (read only by the round-8 classes)
_VERBS_R8 = frozenset("""prefer recommend ring refrain lodge photograph weigh double-check cc bcc quote
greet triage batch bundle invoice""".split())
#: determiners and possessives: a noun phrase opened by one names a thing, not a kind of things
_DETERMINERS_R8 = frozenset("""the a an my your our his her their its this that these those some any every each no
one two three four five me him them us it which what whose""".split())
#: words ending in "s" that are no plurals
_NOT_PLURAL_R8 = frozenset("""this is was has does us plus bus news always yes less unless address process access
business perhaps thus series status bonus campus focus analysis basis crisis various gas lens canvas
alias atlas chaos whereas its his hers ours yours theirs afterwards towards lots loads tons
things stuffs""".split())
_PREPOSITIONS_R8 = frozenset("for to on in with about as from of into across at via by under over".split())
_FREQUENCY_WORD = re.compile(r"\b(?:daily|nightly|weekly|fortnightly|monthly|quarterly|yearly|annually|hourly|"
                             r"(?:mon|tues|wednes|thurs|fri|satur|sun)days|weekends|weekdays|mornings|evenings|"
                             r"each (?:day|week|month|morning|evening)|per (?:day|week|month|order|customer|call|ticket))\b",
                             re.I)


#: verbs whose plural object names a kind of things ("Escalate legal threats to Jo")
_KIND_VERBS = frozenset("""escalate route forward redirect refer prefer avoid tag label flag cc bcc treat prioritise
prioritize triage decline reject refuse""".split())


def generic_plural(rest: str, verb: str | None = None) -> bool:
    """The words after an imperative's verb name a kind of things rather than one thing: a bare
    plural, at the start or after a preposition, with no determiner before it ("legal threats",
    "for replies", "to new accounts", "on Sunday mornings"), or a frequency word ("weekly",
    "on Mondays"). "Send the invoice" or "Email the report to Sam" name one thing. With ``verb``
    (the imperative's), a plural right after it counts only for :data:`_KIND_VERBS`."""
    if _FREQUENCY_WORD.search(rest):
        return True
    words = re.findall(r"[#\w'’/-]+|[,;:.!]", rest)
    open_np, seen, direct = True, 0, True
    for i, raw in enumerate(words):
        w = raw.lower().replace("’", "'")
        if w in (",", ";", ":", ".", "!", "and", "or", "but", "then"):
            break  # a second clause ("... and work with influencers") is read on its own, if at all
        if w in _PREPOSITIONS_R8:
            open_np, seen, direct = True, 0, False
            continue
        if w in _DETERMINERS_R8 or w.endswith("'s") or w[:1].isdigit() or w.startswith("#"):
            open_np = False
            continue
        if open_np:
            seen += 1
            if seen > 3:
                open_np = False
                continue
            if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is", "ous", "'s")) \
                    and w not in _NOT_PLURAL_R8 and raw[:1].islower():
                # the plural ends its noun phrase: the text, a stop or a preposition follows
                # ("starts small" is a verb; "channels and work with ..." runs on)
                nxt = words[i + 1].lower() if i + 1 < len(words) else ""
                if nxt in ("", ",", ";", ":", ".", "!") or nxt in _PREPOSITIONS_R8:
                    # a plural object of the verb is a kind of things only for a routing, format or
                    # preference verb ("Escalate legal threats to Jo", "Write dates as ..."); after
                    # another verb it is one batch ("Add eggs to the list", "Check flights to Rome")
                    if verb is None or not direct or nxt == "as" or verb in _KIND_VERBS:
                        return True
    return False


def _first_word_r8(clause: str) -> str:
    return _first_word(clause)


def _imperative_r8(clause: str) -> bool:
    """An imperative with a task verb or one of the round-8 verbs, its object not small talk.
    Remembered per clause and family state (see the comment at :func:`_remembered_clear`)."""
    return _imperative_r8_of(clause, _off_key())


@lru_cache(maxsize=2048)
def _imperative_r8_of(clause: str, _off: frozenset) -> bool:
    verb = _first_word(clause)
    if verb in _VERBS:
        return imperative(clause)
    if verb not in _VERBS_R8:
        return False
    rest = re.sub(_PRE_VERB + r"[a-z-]+\s*", "", clause, flags=re.I)
    return not _SMALL_TALK_OBJECT.match(rest) and len(rest.split()) >= 1


#: leads that add no instruction of their own: clarity, emphasis, a concession to every case
#: ("Just so we're clear, ...", "Whatever happens, ...", "No matter what, ...")
_LEAD_R8 = re.compile(
    r"^(?:(?:just )?(?:so|to be) (?:we're|we are|i'm|i am|you're|you are|everyone is|it's) (?:clear|on the same page)|"
    r"(?:just )?to be (?:clear|safe|sure|explicit|on the safe side)|for clarity|let me be clear|"
    r"whatever happens|no matter what(?: happens)?|come what may|in any case|either way|regardless|"
    r"under any circumstances|in every case|as a rule of thumb|"
    r"as (?:the |your |our )?(?:head|manager|director|lead|owner|chair|vp|cfo|ceo|cto|coo) of [\w' -]{2,30}?\b(?=\s*,|\s+(?:i|we)\b)|"
    r"as (?:the |your |our )?(?:[\w-]+ )?(?:manager|director|lead|owner|supervisor|admin|administrator)\b(?=\s*,|\s+(?:i|we)\b)|"
    r"(?:a )?(?:small |quick |short |brief )?(?:update|note|change|heads-up|heads up|reminder)"
    r"(?: (?:after|from|on|for|about) [\w' -]{2,40}?)?\s*:)\s*[,:;—-]?\s*", re.I)


def strip_lead_r8(sentence: str) -> str | None:
    """The sentence without a round-8 lead (family ``lead_strip``), or None when it has none."""
    if not families.on(F_LEAD_STRIP):
        return None
    s = _LIGHT_LEADS.sub("", sentence.strip())
    m = _LEAD_R8.match(s)
    if not m or len(s) - m.end() < 8:
        return None
    rest = s[m.end():]
    if s[:1].lower() in "kyue" and not (_first_word(rest) in _VERBS or _DIRECTIVE_START_R10.match(rest)):
        return None  # a filler before small talk ("Yeah, it was fun"): nothing to read again
    return rest[:1].upper() + rest[1:]


#: a speaker introducing themselves before what they say ("Manager here.", "This is Marta, the
#: support manager:", "Hi, Dave from ops.")
SPEAKER_INTRO = re.compile(
    r"^(?:(?:hi|hello|hey|morning|good morning|afternoon)[,!\s]+)*(?:(?:it's|this is|i'm|i am)\s+[A-Z][\w'’-]+"
    r"(?:\s+[A-Z][\w'’-]+)?(?:\s*,\s*(?:the |your |our )?[\w' -]{2,40}?|\s+(?:from|in|of) [\w' -]{2,30}?)?|"
    r"(?i:(?:the |your )?(?:[\w-]+ )?(?:manager|supervisor|director|lead|owner|admin|team lead|head of [\w -]{2,20}?) here)|"
    r"[A-Z][\w'’-]+ (?:from|in|of) (?:the )?[\w' -]{2,30}?(?: here)?)\s*[.:,—-]?\s*$")


def speaker_intro(sentence: str) -> bool:
    """The sentence only says who speaks (family ``speaker_intro``): read with the next one."""
    return families.on(F_SPEAKER_INTRO) and bool(SPEAKER_INTRO.match(sentence.strip())) and len(sentence.split()) <= 10


#: a colon-introduced clause after a short lead that itself says nothing ("This is Marta, the
#: support manager: I'm approving ...", "Long meeting, but we got there: ...")
_COLON_CLAUSE = re.compile(r"^(?P<lead>[^:]{3,60}?):\s+(?P<rest>\S.{8,})$", re.S)

_PLAN_NOUN = r"(?:plan|itinerary|roadmap|schedule|timeline|agenda|arrangement|approach|strategy|programme|program|route)"
_PLAN_LABEL = re.compile(r"^(?:(?:our|the|my|new|revised|updated|current)\s+)?(?:[\w-]+\s+)?" + _PLAN_NOUN +
                         r"(?:\s+[A-Z0-9]\b)?(?:\s+(?:for|on)\s+(?:the |our |this |my )?[\w' -]{2,30}?)?\s*:\s*(?P<rest>\w.{6,})$",
                         re.I | re.S)
_PLAN_SUBJECT = re.compile(r"^(?:the|our|my)\s+(?:[\w-]+\s+)?" + _PLAN_NOUN + r"(?:\s+(?:for|on)\s+(?:the |our |this )?"
                           r"[\w' -]{2,30}?)?\s+(?:is|says|will be|involves|looks like|goes)\s+(?P<rest>\w.{6,})$", re.I | re.S)
_PLANNING = re.compile(r"^(?:we|i)(?:'re| are|'m| am)\s+(?:now\s+)?(?:planning|aiming|intending|scheduled|set)\s+to\s+"
                       r"(?!(?:go|visit|see|travel|take a|have|get|spend|hang|meet|throw|celebrate|try|do|make|start a|"
                       r"catch|watch|relax|chill|move in|adopt|learn|explore|check out|head|stay|come|be)\b)(?P<rest>[a-z]+\s+\w.{4,})$",
                       re.I | re.S)
_WILL_PHRASAL = re.compile(r"^we(?:'ll| will| shall)\s+(?!(?:see|be|have|try|talk|chat|meet up|catch up|get|keep|hang|miss|"
                           r"need|make it|figure|go|come|visit|celebrate|spend|enjoy|watch|head)\b)[a-z]+\s+(?:out|up|off|over|"
                           r"back|through|down)\s+(?:the|our|all|every|each|a|an)\b.{4,}|"
                           r"^we(?:'ll| will| shall)\s+(?!(?:see|be|have|try|talk|chat|get|keep|hang|miss|need|figure|go|come|"
                           r"visit|celebrate|spend|enjoy|watch|head)\b)[a-z]+\s+(?:the|our|all)\s+[\w' -]{2,30}?\s+by\s+\w+ing\b",
                           re.I | re.S)


_PLAN_PAST = re.compile(r"\b(?:was|were|had|did|ago|yesterday|last)\b", re.I)
_GOT_TO_UNTIL = re.compile(r"\b(?:'ve |have )?got (?:to|until)\b|\bgotta\b", re.I)


def plan_statement(sentence: str) -> bool:
    """A plan stated for the task (family ``plan_statement``): a plan label ("Plan: ...", "Our
    plan: ...", "Plan A: ...", "Plan for the move: ..."), a plan noun as subject ("The itinerary
    is ...", "The roadmap says ..."), "we're planning to <verb> ...", "we'll roll out the ..." or
    "we'll handle the X by <doing>". Past and exclaimed sentences are no plan."""
    if not families.on(F_PLAN_STATEMENT):
        return False
    s = _strip(sentence.strip())
    if _QUESTION.search(s) or s.endswith("!") or _PLAN_PAST.search(s):
        return False
    if _PLAN_LABEL.match(s) or _PLAN_SUBJECT.match(s):
        return True
    m = _PLANNING.match(s)
    if m and (concrete(s) or _NAMED.search(s) or re.search(r"\bthis (?:quarter|month|year|week|sprint)\b", s, re.I)):
        return True
    return bool(_WILL_PHRASAL.match(s))


# approvals (round 8): a tail after the action, an OK to do it, written approval, "good to go"
_APPROVAL_TAIL = re.compile(r"[,;—-]\s*(?:(?:it's|it is|that's|that is|this is)\s+)?(?:now\s+)?(?:approved|signed off|authori[sz]ed|"
                            r"green-?lit)\s*[.!]?\s*$", re.I)
_APPROVAL_R8 = re.compile(
    r"^(?:you(?:'ve| have)? got|you have|here's|here is|you get)\s+(?:my|our|the)\s+(?:ok|okay|go-ahead|green light|approval|"
    r"sign-?off|blessing)\s+(?:to|for|on)\s+\w|"
    r"^consider (?:this|that|it)\s+(?:my |our |your |a |the )?(?:written |formal |official |explicit )?(?:approval|sign-?off|"
    r"go-ahead|authori[sz]ation|green light)\s+(?:to|for|on)\s+\w|"
    r"^(?:we're|we are|you're|you are|they're|they are)\s+(?:good to go|cleared|all clear)\s+(?:on|with|for)\s+"
    r"(?:the|this|that|our|your|a|an)\s+\w", re.I)
#: a bare approval before the action it grants ("Greenlit: ...", "Signed off. ...", "Fine by me, send ...")
APPROVAL_LEAD_R8 = re.compile(r"^(?:(?:ok|okay|yes|yep|fine|sure|right|alright)[,.!]?\s+)*(?:greenlit|green-lit|signed off|"
                              r"sign-off given|authori[sz]ed|fine by me|ok by me|okay by me|works for me|you have my blessing)"
                              r"\s*[.!,:;—-]?\s*(?P<rest>.*)$", re.I | re.S)


def _approval_r8(s: str, whole: str, main: str) -> bool:
    if _APPROVAL_R8.match(whole):
        return True
    if _APPROVAL_TAIL.search(whole) and (concrete(whole) or _NAMED.search(whole)) and not re.search(r"\b(?:not|n't|never)\b", whole, re.I):
        return True
    m = APPROVAL_LEAD_R8.match(whole)
    if m:
        rest = re.sub(r"^(?:(?:go ahead and|go ahead,?|please|you can|feel free to)\s+)+", "", m.group("rest"), flags=re.I)
        if rest and (imperative(rest) or _IMPERATIVE_SHAPE.match(rest) or re.search(
                r"\b(?:can|may)\s+(?:now\s+)?(?:go out|go ahead|proceed|ship|launch|be (?:sent|published|released|waived))\b",
                rest, re.I)):
            return True
    return False


# evidence (round 8)
_CASE_PARTY = (r"(?:customer|client|patient|claimant|caller|tenant|landlord|applicant|member|account holder|buyer|seller|"
               r"supplier|vendor|courier|driver|guest|passenger|policyholder|student|employee|contractor|witness|"
               r"defendant|plaintiff|complainant|reporter|sender|recipient|user|subscriber)")
_EVIDENCE_LABEL_R8 = re.compile(r"^(?:evidence|proof|facts?|background|context|timeline|findings?)(?:\s+(?:for|on|in|of)\s+"
                                r"(?:the |our |this )?[\w' -]{2,30}?)?\s*:\s*(?P<fact>\w.+)$|"
                                r"^(?:logged|noted|recorded|filed|documented)\s+(?:for|in|on)\s+(?:the )?(?:file|record|case|"
                                r"ticket|log)\s*:\s*(?P<fact2>\w.+)$", re.I | re.S)
_SOURCE_R8 = re.compile(r"^(?:per|as per|according to|going by|based on)\s+(?:the |our |their |his |her |its |this |that )?"
                        r"[\w'’ -]{2,30}?,\s*(?P<fact>\w.+)$", re.I | re.S)
_THIRD_CONFIRMED = re.compile(r"^(?:the|our|their|his|her)\s+(?:[\w'’-]+\s+){0,3}?(?:confirmed|reported|stated|verified|"
                              r"certified|testified|noted|recorded|logged|documented|told us|wrote)\s+(?:that\s+)?\w", re.I)
_CASE_FACT = re.compile(r"^(?:the|this|that|their|our)\s+(?:[\w'’-]+\s+){0,2}?" + _CASE_PARTY + r"(?:'s|’s|s'|s)?\b", re.I)
_DATED_RECORD = re.compile(r"^(?:the|their|our|this|that)\s+(?:[\w'’-]+\s+){0,5}?(?:was|were|has been|have been)\s+"
                           r"(?:\w+ed|sent|paid|made|done|issued|taken|given|written)\s+(?:on|at)\s+(?:\d|" + _MONTH + r"|"
                           + _WEEKDAY + r")", re.I)


def _evidence_r8(s: str, whole: str) -> bool:
    m = _EVIDENCE_LABEL_R8.match(whole)
    if m and concrete(m.group("fact") or m.group("fact2") or ""):
        return True
    m = _SOURCE_R8.match(whole)
    if m and _CONCRETE.search(m.group("fact")):
        return True
    if _THIRD_CONFIRMED.match(whole) and _CONCRETE.search(whole):
        return True
    if _CASE_FACT.match(whole) and re.search(r"\d", whole) and not re.search(r"\b(?:will|should|must|please|could|would)\b",
                                                                           whole, re.I):
        return True
    return bool(_DATED_RECORD.match(whole) and concrete(whole))


# decisions (round 8)
_DECISION_MID = re.compile(r"\b(?:let's settle (?:it|this|that)|(?:so )?that's (?:decided|settled|final|agreed)|"
                           r"it's (?:settled|decided|agreed|official)|we got there|we (?:landed|settled) on it|"
                           r"we've (?:agreed|decided)|(?:the )?decision(?: is)? made)\s*[:,;—-]\s*(?P<rest>\w.{8,})$", re.I | re.S)
_DECISION_AGREED_THAT = re.compile(r"^(?:it(?:'s| has| is) been|it was|it's)\s+(?:agreed|decided|settled|confirmed|resolved)\s+"
                                   r"(?:that|to)\s+\w", re.I)
_DECISION_AGENT_R8 = re.compile(r"^(?:the|our)\s+(?:[\w-]+\s+){0,2}?(?:team|board|committee|group|council|panel|leadership|"
                                r"management|family|partners|directors)\s+(?:has |have )?(?:decided|agreed|chose|settled on|"
                                r"opted for|voted|resolved)\b", re.I)
_GOING_TO_STANDING = re.compile(r"^we(?:'re| are)\s+going\s+to\s+(?P<verb>[a-z-]+)\s+", re.I)


def _decision_r8(s: str, whole: str) -> bool:
    m = _DECISION_MID.search(whole)
    if m and not re.match(r"^(?:i|we)\s+(?:was|were|had)\b", m.group("rest"), re.I):
        return True
    if _DECISION_AGREED_THAT.match(whole) and (concrete(whole) or _NAMED.search(whole)):
        return True
    if _DECISION_AGENT_R8.match(whole) and (concrete(whole) or _NAMED.search(whole) or re.search(r"\bwill\b", whole)):
        return True
    g = _GOING_TO_STANDING.match(whole)
    return bool(g and (g.group("verb").lower() in _VERBS or g.group("verb").lower() in _VERBS_R8)
                and (_STANDING.search(whole) or _SCOPE_R8.search(whole)) and concrete(whole))


_SCOPE_R8 = re.compile(r"\b(?:from now on|from (?:next|this) (?:week|month|monday|tuesday|wednesday|thursday|friday)|"
                       r"going forward|until further notice|starting (?:next|this|in|on)\b)", re.I)

# restrictions (round 8)
_EXCLUSIVE_TAIL = re.compile(r"(?:\bonly\b[^.;!?]{0,30}?[,;—-]\s*|\s+and\s+|,\s*)(?:nowhere|nobody|no one|none|nothing|no-one)\s+else\b|"
                             r"\b(?:and|but)\s+(?:nobody|no one|no-one)\s+else\b", re.I)
_ONLY_SUBJECT = re.compile(r"^only\s+(?!(?:once|after|when|if|then|because|just|a few|one of)\b)(?:[\w'’-]+\s+){1,6}?(?:may|can|"
                           r"are allowed to|is allowed to|get to|should|must)\s+\w", re.I)
_WE_ONLY = re.compile(r"^(?:(?:through|via|by|on|in|for) [\w' -]{2,20}?,?\s+)?we\s+only\s+(?:take|accept|ship|offer|serve|"
                      r"deliver|sell|book|refund|support|handle|process|cover|do)\s+\w", re.I)
_TRAILING_ONLY = re.compile(r"\s+only\s*(?:[.;,—-]|$)", re.I)
_JUST_LOOK = re.compile(r"^just\s+(?:look at|consider|book|show|search|use|pick|suggest|recommend|stick to)\s+\w", re.I)


def _restriction_r8(s: str, whole: str, main: str, lead: str | None) -> bool:
    if _EXCLUSIVE_TAIL.search(whole) and (concrete(whole) or _NAMED.search(whole)):
        return True
    if _ONLY_SUBJECT.match(whole) and (concrete(whole) or _NAMED.search(whole)):
        return True
    if _WE_ONLY.match(whole) and (concrete(whole) or re.search(r"\bup to\b", whole, re.I)):
        return True
    if _imperative_r8(main) and _TRAILING_ONLY.search(main):
        return True
    if lead and re.match(r"^for (?:this|the|our|my) ", lead, re.I) and _JUST_LOOK.match(main):
        return True
    m = _FOR_THIS_JUST_R8.match(whole)
    return bool(m and _JUST_LOOK.match(m.group("rest")))


# prohibitions (round 8): verbs that prohibit by themselves
_PROHIBIT_R8 = re.compile(r"^(?:please\s+)?(?:refrain from|abstain from|desist from|steer clear of)\s+\w+ing\b", re.I)

# permissions (round 8)
_PERMIT_R8 = re.compile(
    r"^(?:i|we) (?:don't|do not) mind (?:if )?you\s+\w|"
    r"^it(?:'s| is) (?:totally|perfectly|completely|absolutely|entirely) (?:fine|ok|okay|alright|acceptable) (?:for you )?to\s+\w|"
    r"^(?:you(?:'re| are) )?(?:totally |perfectly )?free to\s+\w", re.I)
_PARTY_ALLOWED = re.compile(r"^(?:the |all |our )?(?:[\w-]+\s+)?(?:customers|clients|members|guests|users|subscribers|"
                            r"students|patients|tenants|staff|employees|drivers|passengers|visitors)\s+(?:(?:on|with|in|from|at|"
                            r"who) [\w' -]{2,30}?\s+)?(?:are|is|get|may)\s+(?:(?:now|also)\s+)?(?:allowed|entitled to|permitted|"
                            r"eligible for)\b", re.I)
_CAN_LEAD = re.compile(r"^(?:you|the bot|the assistant|staff|agents?) (?:can|may) (?:now |also |always )?(?P<rest>[a-z].+)$", re.I | re.S)

# deadlines (round 8)
_DEADLINE_LABEL_R8 = re.compile(r"^(?:hard |firm |final )?deadline\s+(?:for|on)\s+[\w' -]{2,40}?\s*[:—-]\s*\w", re.I)
_PARTY_WANTS_BY = re.compile(r"^(?:the|our|their)\s+(?:[\w'’-]+\s+){1,3}?(?:wants|needs|expects|requires|asks for|asked for)\s+"
                             r"(?:the |a |an |our |your |all )?[\w' -]{2,40}?\s+(?:by|before|no later than)\s+\w", re.I)
_GOT_UNTIL = re.compile(r"^(?:we|you|i)(?:'ve| have)\s+got\s+until\s+.{2,30}?\s+to\s+\w", re.I)

# prerequisites (round 8)
_ONLY_ONCE_CAN = re.compile(r"^only\s+(?:once|after|when|if)\s+.{4,80}?\s+(?:can|may|should|will)\s+(?:you|we|they|the)\b", re.I)
_BEFORE_GERUND = re.compile(r"\s(?:before|prior to|ahead of)\s+(?:\w+ing|any|every|each)\b", re.I)
_PASSIVE_BEFORE = re.compile(r"^(?:the|all|every|each|any|our|your)\s+(?:[\w'’-]+\s+){0,5}?(?:must|has to|have to|needs? to|should|"
                             r"is to|are to)\s+be\s+\w+(?:ed|en)\s+(?:\w+\s+){0,3}?(?:before|prior to|ahead of)\s+\w", re.I)
_BEFORE_LEAD = re.compile(r"^(?:before|ahead of|prior to)\b", re.I)
_LEAD_PREREQ = re.compile(r"^(?P<lead>(?:before|ahead of|prior to)\s+(?:[^,]|,(?=\d)){2,80}),\s*(?P<main>.+)$", re.I | re.S)
_NEEDS_THING = re.compile(r"^(?:the|our|my|your|every|each|all)\s+[\w'’ -]{2,30}?\s+(?:needs|requires|must have|has to have|"
                          r"should have)\s+(?:a|an|the|its|their|to)\b", re.I)
_POLITE_HABIT = re.compile(r"^(?:(?:hey|hi|ok|okay|so|and|also|please)[,\s]+)*(?:could|can|would|will) you(?: please)?\s+"
                           r"(?:make (?:a|it a) (?:habit|rule|point) (?:of|to)|get (?:into|in) the habit of|make a point of)\s+\w", re.I)
_COMMA_BAN = re.compile(r"^(?P<head>(?!(?:i|we|you|he|she|they|it|that|this)\b)[^,]{4,60}?),\s*(?:so\s+)?(?:don't|do not|never)\s+"
                        r"(?P<rest>[a-z]+\b.{2,})$", re.I | re.S)


def polite_habit_r8(sentence: str) -> tuple[str, str] | None:
    """"Could you make a habit of double-checking ...?": a standing request as a question."""
    if families.on(F_POLITE_HABIT) and _POLITE_HABIT.match(_LIGHT_LEADS.sub("", sentence.strip())):
        return "obligation", "polite_request"
    return None

# narration of somebody else's rules (round 8): "The article says companies must ...", "Back when I
# was a student the library made you ...", "My colleague's manager makes her submit ..."
_REPORTED = re.compile(
    r"^(?:the|an|this|that|some|my)\s+(?:[\w-]+\s+)?(?:article|news|report|study|paper|book|blog|post|podcast|video|"
    r"documentary|website|law|teacher|professor|guy|woman|man|expert|doctor|lecturer)\s+(?:says|said|claims|claimed|"
    r"reckons|argues|argued|mentioned|mentions|suggests|suggested)\b|"
    r"^(?:back when|when i was (?:a |at |in |younger|little|small)|in my (?:old|last|previous|first) (?:job|school|company|flat))|"
    r"\b(?:makes|made|forces|forced|lets|let)\s+(?:her|him|them|us|me|you|everyone|my \w+)\s+(?:submit|send|return|pay|"
    r"work|do|file|finish|write|wear|sign|report)\b|,\s*which (?:seems|is|was|sounds|feels) (?:harsh|crazy|mad|a lot|strict|"
    r"unfair|ridiculous|insane|wild)\b", re.I)


def reported(sentence: str) -> bool:
    """Somebody else's rule narrated, not an instruction (family ``reported_deontic``)."""
    return families.on(F_REPORTED) and bool(_REPORTED.search(sentence.strip()))


_APPROVE_OF = re.compile(r"\bapprove[sd]? of\b", re.I)


def classify_r8(sentence: str) -> tuple[str, str] | None:
    """The round-8 phrasing classes for a sentence none of the earlier rules read (each a family
    of :mod:`memfold.memory.families`, written from the misses of ``fresh4``)."""
    s = sentence.strip()
    if _QUESTION.search(s) or advice(s):  # :func:`classify` has turned down reported rules and plans
        return None
    lead, main = main_clause(s)
    m = _LEAD_PREREQ.match(_strip(s)) if families.on(F_PREREQ_R8) and (lead is None or re.match(
        r"^(?:before|ahead of|prior to)\b", lead, re.I)) else None
    if m:
        lead, main = m.group("lead"), _strip(m.group("main"))
    whole = _strip(s)
    past = bool(_PAST.search(_GOT_TO_UNTIL.sub(" ", whole)))
    exclaim = s.rstrip().endswith("!")
    if exclaim and not concrete(s):
        return None
    if families.on(F_PREREQ_R8) and not past:
        if _ONLY_ONCE_CAN.match(whole):
            return "prerequisite", "prerequisite_form"
        if _PASSIVE_BEFORE.match(whole):
            return "prerequisite", "prerequisite_form"
        if (_imperative_r8(main) or _imperative_loose(main)) and (
                _BEFORE_GERUND.search(" " + main) or lead and _BEFORE_LEAD.match(lead)):
            if not re.match(r"^(?:let|make|have|take|give|feel|go|enjoy|try|see|wish|hope|thank|tell|ask)\b", main, re.I) \
                    and (not re.match(r"^get\b", main, re.I) or concrete(main)):
                return "prerequisite", "prerequisite_form"
        if lead and _BEFORE_LEAD.match(lead) and _NEEDS_THING.match(main) and (
                concrete(s) or _NAMED.search(s) or re.search(r"\b[A-Z]{2,}\b", s)):
            return "prerequisite", "prerequisite_form"
    if families.on(F_PROHIBIT_R8) and not past and not exclaim:
        b = _COMMA_BAN.match(whole)
        if b and (_first_word(b.group("rest")) in _VERBS) and (concrete(b.group("head")) or generic_plural(b.group("head"))):
            return "constraint", "never"
    if families.on(F_PROHIBIT_R8) and _PROHIBIT_R8.match(main) and len(main.split()) >= 4 and not past:
        return "constraint", "prohibit_verb"
    if families.on(F_APPROVAL_R8) and not exclaim and not _APPROVE_OF.search(whole):
        if _approval_r8(s, whole, main):
            return "approval", "approval_statement"
    if families.on(F_PERMIT_R8) and not past:
        m = _PERMIT_R8.match(whole) or _PERMIT_R8.match(main)
        if m and len(whole.split()) >= 6 and not _PERMIT_SOCIAL.search(whole[m.end() - 1:]):
            return "permission", "permission_form"
        if _PARTY_ALLOWED.match(whole) and (concrete(whole) or _NAMED.search(whole)):
            return "permission", "permission_form"
        c = _CAN_LEAD.match(main)
        if c and lead and re.match(r"^(?:if|when|whenever|once|for|on|in)\b", lead, re.I) and \
                (_first_word(c.group("rest")) in _VERBS or _first_word(c.group("rest")) in _VERBS_R8 or
                 re.match(r"^let\b.+\bslide\b", c.group("rest"), re.I)) and not _PERMIT_SOCIAL.search(c.group("rest")):
            return "permission", "permission_form"
        if lead and _CAN_LEAD.match(main) and re.match(r"^(?:once|twice|\w+ times) (?:a|per|each) ", lead, re.I):
            return "permission", "permission_form"
        f = _FEEL_FREE_R8.match(main)
        if f and _first_word(f.group("rest")) in _VERBS and not _PERMIT_SOCIAL.search(f.group("rest")) and not _INVITATION.match(main):
            obj = re.sub(r"^[a-z]+\s+", "", f.group("rest"), flags=re.I)
            if generic_plural(obj) and len(obj.split()) >= 2:
                return "permission", "permission_form"
    if families.on(F_DEADLINE_R8) and not exclaim:
        if _DEADLINE_LABEL_R8.match(whole) or _GOT_UNTIL.match(whole):
            return "deadline", "deadline_form"
        if _PARTY_WANTS_BY.match(whole) and (_deadline(s) or _DEADLINE_DATE.search(s)) and not past:
            return "deadline", "deadline_form"
    if families.on(F_RESTRICT_R8) and not past and not exclaim and _restriction_r8(s, whole, main, lead):
        return "constraint", "imperative_limit"
    if families.on(F_EVIDENCE_R8) and not exclaim and _evidence_r8(s, whole):
        return "evidence", "evidence"
    if families.on(F_DECISION_R8) and not exclaim and len(whole.split()) >= 5 and _decision_r8(s, whole):
        return "policy_state", "decision"
    if families.on(F_GENERIC_IMPERATIVE) and not past and not exclaim and _imperative_r8(main):
        rest = re.sub(_PRE_VERB + r"[a-z-]+\s*", "", main, flags=re.I)
        if generic_plural(rest, _first_word(main)) and len(main.split()) >= 3:
            if _PROHIBIT_VERB.match(main):
                return "constraint", "prohibit_verb"
            return "obligation", "generic_imperative"
    return None



# resets (round 8): a discard verb with the thing discarded and what replaces it
_RESET_R8 = re.compile(
    r"(?:^|[.!?;:,—]\s*)(?:(?:let's|let us|we'll|we will)\s+)?(?:start|begin) (?:over|again|afresh|from scratch)\b|"
    r"\b(?:completely|totally|entirely|a completely|a totally|an entirely) (?:different|new) (?:plan|approach|idea|setup|arrangement)\b|"
    r"\b(?:we've|we have|i've|i have) (?:thrown|tossed|scrapped|ditched|binned|dropped|abandoned) (?:out )?(?:the |our )?"
    r"(?:[\w-]+ )?(?:plan|idea|approach|roadmap|itinerary|schedule)(?: [A-Z0-9])?\b|"
    r"\b(?:all (?:of )?(?:the above|that|this)|everything (?:above|so far|before))\s+(?:is|are|has been|was)\s+(?:now\s+)?"
    r"(?:superseded|replaced|void|cancell?ed|scrapped|off)\b|"
    r"\beverything (?:i|we)(?:'ve| have)? (?:said|planned|agreed|discussed) (?:about|on|for) [\w' -]{2,30}? (?:is|was) "
    r"(?:now )?(?:off|void|cancell?ed|scrapped|out)\b|"
    r"\b(?:replace|redo|rework) the (?:whole |entire )?(?:[\w-]+ )?plan\s*[:;,—-]|"
    r"(?:^|[.!?]\s*)reset\s*[:—-]|"
    r"(?:^|[.!?]\s*)(?:throw out|toss out|bin|scrap|ditch) the (?:old|current|existing|original|whole) [\w-]+\s*[:;,—-]|"
    r"(?:^|[.!?]\s*)new plan\s*[,:;—-]\s*(?:ignore|forget|scrap|drop)\b", re.I)
_DISCARD_NP = re.compile(r"^(?:(?:ok|okay|so|right|actually|no)[,\s]+)*(?:forget|disregard|ignore|scrap|ditch|drop|never ?mind|"
                         r"throw out|toss|bin)\s+(?:the|that|this|our|my)\s+(?P<what>(?:[\w$€£%'’-]+\s*){1,4}?)\s*"
                         r"(?:[,;:—]|\s-\s|\.\s+(?=[A-Z]))(?=\s*(?P<rest>\w.{8,})$)", re.I | re.S)
_RULE_WORDS_R8 = re.compile(r"\b(?:rule|ban|restriction|requirement|limit|constraint|instruction|policy|cap|allowance|"
                            r"exception|embargo)s?\b|\b\w+-\w+\b|\bno\b", re.I)


def reset_r8(text: str) -> "re.Match[str] | None":
    """A reset of the plan in a round-8 form (family ``reset_forms_r8``): "start over", "a
    completely different plan", "we've thrown Plan A out", "all of the above is superseded",
    "everything I said about X is off", "Reset: ...", and a discard verb naming the old thing
    before what replaces it ("Disregard the April rollout; the new pricing goes live ...",
    "Forget the thirds. The new arrangement is ..."), never a rule's name (a revocation)."""
    if not families.on(F_RESET_R8):
        return None
    m = _RESET_R8.search(text)
    if m:
        return m
    d = _DISCARD_NP.match(text.strip())
    if d and not _RULE_WORDS_R8.search(d.group("what")) and not _QUESTION.search(text) and (
            concrete(d.group("rest")) or _NAMED.search(d.group("rest")) or re.match(
                r"^(?:the new|we(?:'re| are| will|'ll)|instead|now)\b", d.group("rest"), re.I)):
        return d
    return None


# revocations (round 8)
_WITHDRAW_R8 = re.compile(
    r"\b(?:i've|i have|we've|we have|i|we)\s+changed (?:my|our) minds? (?:about|on|regarding)\s+(?P<what>[^,.;!?]+)|"
    r"\b(?:i'm|i am|we're|we are|i|we)\s+(?:taking|take|took) back (?:the|my|our|that|this)\s+(?P<what2>[^,.;!?]+)|"
    r"^(?:that|this|the)\s+(?:thing|bit|part|point|stuff|instruction|note)\s+about\s+(?P<what3>[^:,;]+?)\s*[:,;—-]\s*"
    r"(?:just\s+)?(?:drop|forget|ignore|scrap|disregard|cancel|bin|ditch)\s+(?:it|that)\b|"
    r"\byou(?:'re| are)\s+no longer\s+(?:limited|restricted|confined|bound|tied)\s+to\s+(?P<what4>[^.;,!?]+)|"
    r"^(?:the|that|this|my|our)\s+(?P<what5>[\w$€£%'’ -]{2,40}?)\s+(?:cap|allowance|exception|hold|freeze)\s+"
    r"(?:no longer (?:applies|stands|holds)|is (?:now )?(?:lifted|cancell?ed|off|gone|withdrawn|over|removed))\b|"
    r"\b(?:forget|drop|scrap|cancel|lift|remove|rescind)\s+the\s+(?P<what6>[\w$€£%'’ -]{2,40}?)\s+(?:cap|allowance|exception)\b|"
    r"\b(?:disregard|ignore|forget|drop|cancel)\s+my\s+(?:earlier |previous |old )?(?:instruction|request|note)\s+to\s+"
    r"(?P<what7>[^.;,!?]+)|"
    r"^(?P<what8>(?!it\b|that\b|this\b|they\b|i\b|we\b|you\b)[\w$€£%'’ -]{2,40}?)\s+can\s+(?:now\s+)?(?:have|get|include|use|"
    r"go|be)\s+(?P<extra8>[^.;,!?]{2,40}?)\s+again\b", re.I)
_NOW_PUBLIC = re.compile(r"^(?P<what>(?!it\b|that\b|this\b)[\w$€£%'’ -]{2,40}?)\s+(?:is|are)\s+(?:now\s+)?(?:public|out|live|"
                         r"official|announced|no longer (?:secret|confidential|under wraps|embargoed))(?:\s+now)?\s*,?\s*"
                         r"(?:so\s+)?you (?:can|may)\s+(?P<what2>[^.;!?]+)", re.I)


def withdrawn_r8(sentence: str) -> tuple[str, bool] | None:
    """``(words naming what is withdrawn, explicit)`` for a round-8 revocation form, else None."""
    if not families.on(F_REVOKE_R8):
        return None
    s = _strip(normalise(sentence))
    m = _WITHDRAW_R8.search(s) or _NOW_PUBLIC.search(s)
    if not m:
        return None
    what = " ".join(v for k, v in sorted(m.groupdict().items()) if v)
    return split_hyphens(what), True


# completions (round 8): a third party did what a record waits for ("Orbis sent the signed NDA
# back", "The number port completed at 10:15", "Their admin accepted the invite")
_COMPLETED_R8 = re.compile(
    r"^(?:(?:great|good) news[,!:\s]+|update[,:\s]+|fyi[,:\s]+|so[,\s]+)*(?:(?:the|their|our|his|her|my|all|everyone)\s+)?"
    r"(?:[\w'’-]+\s+){0,4}?(?:has |have |had |just |finally |now |all )*(?:completed|finished|accepted|renewed|retested|"
    r"re-tested|reviewed|uploaded|emailed|sent|returned|signed|signed off|approved|verified|passed|cleared|ported|"
    r"processed|arrived|came through|came back|went through|landed|submitted|delivered|paid|done)\b", re.I)


def completion_r8(sentence: str) -> bool:
    """The sentence says a named party did or finished something (family ``completion_forms_r8``)."""
    if not families.on(F_COMPLETION_R8):
        return False
    s = _strip(sentence)
    return not _QUESTION.search(s) and bool(_COMPLETED_R8.match(s)) and not re.search(
        r"\b(?:not|n't|never|yet to|once|when|until|if|before|will|should|must)\b", s, re.I)


def colon_clause(sentence: str) -> str | None:
    """The clause after a colon when what comes before it is a short lead of no instruction
    ("This is Marta, the support manager: ...", "Long meeting, but we got there: ..."), else None
    (family ``lead_strip``)."""
    m = _COLON_CLAUSE.match(sentence.strip())
    if not m or re.search(r"\d", m.group("lead")) or _QUESTION.search(sentence):
        return None
    rest = m.group("rest")
    return rest[:1].upper() + rest[1:]


#: a bare approval sentence that the action after it spells out ("Signed off. The press release
#: can go out at 9am tomorrow.", "Greenlit.")
_APPROVAL_BARE_R8 = re.compile(r"^(?:(?:ok|okay|yes|yep|fine|sure|right|alright)[,.!]?\s+)*(?:greenlit|green-lit|signed off|"
                               r"sign-off given|authori[sz]ed|fine by me|ok by me|okay by me)\s*[.!]?\s*$", re.I)


def approval_bare_r8(sentence: str) -> bool:
    return families.on(F_APPROVAL_R8) and bool(_APPROVAL_BARE_R8.match(sentence.strip()))


# -- round 9: phrasing classes from the blind set fresh5 (issue 20, point 10) ------------------------
# ``fresh5`` was written blind in round 8 and measured once (70.5% of its protected items); its misses
# were then read for the class of phrasing each stands for, and each class below is one family
# registered with it. Every family has a test with a new sentence of its class and a near miss
# (``tests/test_phrasing_classes_r9.py``). Each function first tests for a few literals of its class
# in the lowercased text, so the ordinary chat of an append skips its patterns.
F_LEAD_R9 = family("lead_strip_r9", {"fresh5"})
F_SO_TAIL = family("so_tail_clause", {"fresh5"})
F_PROHIBIT_R9 = family("prohibition_forms_r9", {"fresh5"})
F_RESTRICT_R9 = family("restriction_forms_r9", {"fresh5"})
F_PERMIT_R9 = family("permission_forms_r9", {"fresh5"})
F_DEADLINE_R9 = family("deadline_forms_r9", {"fresh5"})
F_PREREQ_R9 = family("prerequisite_forms_r9", {"fresh5"})
F_APPROVAL_R9 = family("approval_forms_r9", {"fresh5"})
F_EVIDENCE_R9 = family("evidence_forms_r9", {"fresh5"})
F_DECISION_R9 = family("decision_forms_r9", {"fresh5"})
F_PLAN_R9 = family("plan_statement_r9", {"fresh5"})
F_RESET_R9 = family("reset_forms_r9", {"fresh5"})
F_REVOKE_R9 = family("revoke_forms_r9", {"fresh5"})
F_RESTORE_R9 = family("restore_forms_r9", {"fresh5"})
F_CONDITION_MET = family("condition_met", {"fresh5"})
F_NARRATED_R9 = family("narrated_forms_r9", {"fresh5"})
F_INITIAL_QUOTED = family("initial_in_quotes", {"fresh5"})

_MONTH_R9 = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_DATE_R9 = (r"(?:\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH_R9 + r"\b(?:\s+\d{4})?|" + _MONTH_R9 + r"\s+\d{1,2}(?:st|nd|rd|th)?\b"
            r"(?:,?\s+\d{4})?|(?:the\s+)?end of (?:q[1-4]|the (?:quarter|financial year|tax year|year|month|week|sprint))|"
            r"q[1-4]\b)")

# leads (family ``lead_strip_r9``): an interjection before "and" ("Oh, and never ..."), a lead clause
# before a round-8 lead ("For the Paris trip, just so we're clear, keep ..."), a narrative lead
# ("In the end we agreed ..."), a frequency lead with a time ("Each morning at 7:30, send ...")
_INTERJECTION_AND = re.compile(r"^(?:oh|ah|and|also|plus|btw|one more thing|last thing|ps|p\.s\.)\s*,\s*(?:and\s+)?(?:also\s+)?"
                               r"(?P<rest>\w.{6,})$|^(?:oh|ah)\s+and\s*,?\s*(?P<rest2>\w.{6,})$", re.I | re.S)
_NARRATIVE_LEAD = re.compile(r"^(?:in the end|ultimately|finally|eventually|after (?:a lot of|much|some) (?:debate|discussion|"
                             r"back and forth|thought)|all things considered|on balance|long story short)\s*,?\s*"
                             r"(?P<rest>(?:we|i|the|management|leadership)\b.{6,})$", re.I | re.S)
_TIMED_LEAD = re.compile(r"^(?P<every>(?:every|each)\s+(?:[\w'-]+\s+){0,2}?(?:morning|evening|night|day|weekday|monday|tuesday|"
                         r"wednesday|thursday|friday|saturday|sunday|week|month))\s+(?:at|around|by|before)\s+[\w:.]+(?:\s*(?:am|pm))?\s*,\s*"
                         r"(?P<rest>\w.{6,})$|^from\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|today|tomorrow|"
                         r"next (?:week|month)|the (?:\d{1,2}(?:st|nd|rd|th)?|first))\s+(?:on|onwards|onward)\s*,\s*(?P<rest2>\w.{6,})$",
                         re.I | re.S)


#: the first words of the leads :func:`clauses_r9` sets aside (a cheap test before their patterns)
_CLAUSE_LEAD_WORDS = ("oh", "ah", "and", "also", "plus", "btw", "one more", "last thing", "ps", "p.s", "in the end", "ultimately",
                      "finally", "eventually", "after", "all things", "on balance", "long story", "every", "each", "from")
_R8_LEAD_WORDS = ("just", "so ", "to be", "for clarity", "let me", "whatever", "no matter", "come what", "in any", "either",
                  "regardless", "under any", "in every", "as ", "a ", "small", "quick", "short", "brief", "update", "note",
                  "change", "heads", "reminder")


def clauses_r9(sentence: str) -> list[str]:
    """The clauses of a sentence that may hold its instruction once a round-9 lead is set aside
    (family ``lead_strip_r9``), and the clause after ", so" (family ``so_tail_clause``: "We ship
    only within the EU, so only offer delivery to EU addresses."). The caller keeps the sentence."""
    out: list[str] = []
    s = sentence.strip()
    low = s.lower()
    if low.startswith(_CLAUSE_LEAD_WORDS) and families.on(F_LEAD_R9):
        for pat in (_INTERJECTION_AND, _NARRATIVE_LEAD, _TIMED_LEAD):
            m = pat.match(s)
            if m:
                rest = m.group("rest") or m.groupdict().get("rest2")
                if rest and pat is _TIMED_LEAD and m.group("rest"):
                    out.append(f"{m.group('every')}, {rest}")  # "Each morning at 7:30, send ..." -> "Each morning, send ..."
                elif rest:
                    out.append(rest[:1].upper() + rest[1:])
    if "," in s and families.on(F_LEAD_R9):
        lead, main = main_clause(s)
        if lead is not None and main.lower().startswith(_R8_LEAD_WORDS) and (r := strip_lead_r8(main)) is not None:
            out.append(r)
    if families.on(F_SO_TAIL) and (", so " in low or "; so " in low):
        tail = so_tail(s)
        if tail is not None:
            out.append(tail)
    return out


_SO_TAIL = re.compile(r"^(?P<head>[^,;]{8,120}?)[,;]\s+so\s+(?P<tail>\w.{6,})$", re.I | re.S)


def so_tail(sentence: str) -> str | None:
    """The clause after a reason ("Gareth has left, so you can stop cc'ing him." -> "you can stop
    cc'ing him."), or None."""
    if not families.on(F_SO_TAIL):
        return None
    m = _SO_TAIL.match(sentence.strip())
    if not m:
        return None
    tail = m.group("tail")
    return tail[:1].upper() + tail[1:]


def so_head(sentence: str) -> str:
    """The reason before ", so" (empty when there is none)."""
    m = _SO_TAIL.match(sentence.strip())
    return m.group("head") if m else ""


# prohibitions
_PROHIBIT_R9 = re.compile(
    r"^(?:never|don't|dont|do not)\s*,\s*ever\s*,?\s+(?P<v1>[a-z][a-z-]+)\s+\w|"
    r"^(?:never|don't|dont|do not)\s+ever\s+(?P<v2>[a-z]+-[a-z]+)\s+\w|"
    r"^(?:never|don't|dont|do not)\s+(?:ever\s+)?let\s+(?:anyone|anybody|any(?:\s+\w+)?\s+(?:customers?|guests?|staff|users?|"
    r"callers?|visitors?)|customers|guests|visitors|staff|users|callers|people)\s+(?P<v3>[a-z]+)\s+\w", re.I)


# restrictions: a verb, then "only" ("Search only the 2024 policy documents", "Recommend only products that ...")
_VERB_ONLY = re.compile(r"^(?:please\s+)?(?P<verb>[a-z]+)\s+only\s+(?:the|my|our|from|in|to|with|on|\w+s\b|\d)", re.I)


# permissions
_PARTY_CAN_NOW = re.compile(r"^(?P<party>(?:the\s+)?(?:support|staff|agents?|team leads?|managers?|the team|ops|sales|"
                            r"customers?|members?|users?|tenants?|guests?|interns?|contractors?|drivers?|reception|"
                            r"the front desk|admins?)(?:\s+\w+)?)\s+(?:can|may)\s+now\s+(?P<rest>[a-z]+\s+\w.{4,})$", re.I | re.S)
_PASSIVE_MAY = re.compile(r"^(?P<subject>(?!(?:it|this|that|he|she|they|we|i|you|there|which|what)\b)[\w'’$€£%/-]+"
                          r"(?:\s+[\w'’$€£%/-]+){0,6}?)\s+(?:can|may)\s+(?:also\s+)?be\s+(?:given|offered|applied|issued|used|"
                          r"shared|sent|booked|refunded|waived|extended|upgraded|added|granted|accepted|approved|"
                          r"claimed|redeemed|combined|stacked|moved|changed|cancelled|canceled)\b(?P<rest>.*)$", re.I | re.S)
_FINE_TAIL = re.compile(r"[,;—-]\s*(?:that's|that is|it's|it is|this is)\s+(?:fine|ok|okay|allowed|acceptable|all right|alright)"
                        r"(?: (?:by|with) me)?\s*[.!]?\s*$", re.I)
_YOU_CAN_WHEN = re.compile(r"^you\s+(?:can|may)\s+(?!only\b|never\b|not\b)(?P<rest>[a-z]+\b.{4,}?)\s+(?:when|whenever|if|as long as)\s+"
                           r"you(?:'re| are)?\b", re.I | re.S)


# deadlines
#: "We have until the end of Q3 to ...": a date, a quarter or the end of a period (weekdays: family
#: ``deadline_forms_r5``)
_HAVE_UNTIL_R9 = re.compile(r"^(?:we|you|i|they)\s+(?:have|'ve got|have got)\s+until\s+(?:the\s+)?" + _DATE_R9 + r"\s+to\s+\w", re.I)
_DATE_DEADLINE = re.compile(r"\b(?:no later than|by|before|until|due(?: on| by)?)\s+(?:the\s+)?" + _DATE_R9, re.I)
_DEADLINE_NP = re.compile(r"^(?:the\s+)?(?:final|last|closing|cut-?off)\s+(?:date|day|deadline)\s+(?:for|to|of)\s+[\w'’ -]{3,60}?"
                          r"\s+(?:is|will be|falls on)\s+(?:the\s+)?(?:" + _DATE_R9 + r"|\d{1,2}(?:st|nd|rd|th)\b|"
                          r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))", re.I)
_DEONTIC_R9 = re.compile(r"\b(?:must|has to|have to|needs?(?: to)?|should|is to|are to|required|due|deadline)\b", re.I)


# prerequisites: a thing that cannot happen until a condition ("The new hire can't start until her
# references are back"), a state kept until a condition ("Keep the account frozen until ...")
_CANNOT_UNTIL = re.compile(r"^(?P<subject>(?!(?:i|we|it|that|this|you)\b)(?:the|our|my|your|this|that|any|no|new)\b[\w'’ -]{2,40}?)\s+"
                           r"(?:can't|cannot|can not|mustn't|must not|shouldn't|should not|won't|will not|may not|isn't to|"
                           r"is not to|aren't to)\s+(?:be\s+)?[a-z]+\b[^.!?]*?\s+(?:until|till|before|unless)\s+\w", re.I)
_KEEP_UNTIL = re.compile(r"^(?:please\s+)?(?:keep|leave|hold)\s+(?:the|my|our|this|that|their|his|her|all|every)\s+[\w'’ -]{2,40}?\s+"
                         r"(?:frozen|locked|closed|paused|suspended|blocked|open|on hold|offline|disabled|unpublished|"
                         r"hidden|in draft|as (?:is|they are|it is))\s+until\s+\w", re.I)


# approvals
_APPROVAL_TAIL_R9 = re.compile(r"[,;—-]\s*(?:that's|that is|it's|it is)\s+(?:fine|ok|okay|good|alright|all right)\s+(?:by|with)\s+"
                               r"(?:me|us)\s*[.!]?\s*$", re.I)
_APPROVAL_LEAD_R9 = re.compile(r"^(?:(?:yes|yep|yeah|ok|okay|sure)[,!.]?\s+)?(?:go for it|do it|let's do it|sure thing|"
                               r"you've got it|absolutely)\s*[,:;.!—-]\s*(?P<rest>\w.{6,})$", re.I | re.S)
_APPROVAL_PROGRESSIVE_R9 = re.compile(r"\b(?:i'm|i am|we're|we are)\s+(?:now\s+|hereby\s+)?(?:ok'?ing|okaying|okay'?ing|approving|"
                                   r"authori[sz]ing|greenlighting|green-lighting|signing off on|sanctioning|rubber-stamping)\s+"
                                   r"(?:the|this|that|your|his|her|their|a|an|it|mr|ms|mrs|\w+'s)\b", re.I)
_APPROVAL_YES = re.compile(r"^(?:that's|that is|it's|it is|consider (?:it|that))\s+a\s+(?:yes|go|green light|thumbs up)\s+"
                           r"(?:from (?:me|us|my side|our side)\s+)?(?:on|for|to)\s+\w", re.I)
_PROCEED = re.compile(r"\byou\s+(?:may|can)\s+(?:now\s+)?(?:proceed|go ahead)\s+(?:with|and)\s+\w", re.I)
#: a bare approval after the action it grants ("Yes, buy the tickets, both of them. Approved.")
APPROVAL_AFTER_R9 = re.compile(r"^(?:(?:and\s+)?(?:that's|that is|it's|it is)\s+)?(?:approved|authori[sz]ed|signed off|green-?lit)"
                               r"(?:\s+(?:by|from)\s+me)?\s*[.!]?\s*$", re.I)


def approval_after_r9(sentence: str) -> bool:
    return families.on(F_APPROVAL_R9) and bool(APPROVAL_AFTER_R9.match(sentence.strip()))


# evidence
_SOURCE_TAIL = re.compile(r",\s*(?:according to|as per|per|going by|as (?:shown|stated|recorded) (?:on|in|by))\s+"
                          r"(?:the|their|his|her|its|our|my)\s+[\w'’ -]{2,30}?\s*[.!]?\s*$", re.I)
_ATTACHED_LABEL = re.compile(r"^(?:the\s+)?(?:receipt|invoice|photos?|pictures?|screenshots?|proof|statement|certificate|"
                             r"confirmation|contract|letter|email|report|copy(?: of [\w' -]{2,20})?)\s+(?:attached|enclosed|below|"
                             r"here|uploaded)\s*[:—-]\s*(?P<fact>\w.{8,})$", re.I | re.S)
_READING = re.compile(r"^(?:the|my|our|their|his|her)\s+(?:[\w'’-]+\s+){0,3}?(?:meter|gas|electricity|odometer|mileage)?\s*"
                      r"(?:reading|balance|mileage|odometer)\b[^.!?]{0,40}?\s+"
                      r"(?:was|is|reads|read|showed|shows)\s+(?P<value>[\w$€£.,:/-]*\d[\w$€£.,:/-]*)", re.I)
_CONFIRMED_BY = re.compile(r"^(?:the|our|their|his|her)\s+(?:[\w'’-]+\s+){0,3}?(?:confirmed|reported|stated|verified|admitted|"
                           r"acknowledged|told us|told me|said)\s+(?:(?:by|in|over|on|via)\s+(?:the\s+)?[\w'’-]+\s+){1,3}that\s+\w", re.I)
_RECORD_VERB = re.compile(r"^(?:the|their|his|her|our|its)\s+(?:[\w'’-]+\s+){0,3}?(?:timestamp|footage|cctv|log|logs|record|records|"
                          r"notice|letter|email|receipt|statement|certificate|report|tracker|tracking|gps|screenshot|photo|"
                          r"invoice|system|portal|website|app)\s+(?:clearly\s+)?(?:says|states|shows|puts|places|records|"
                          r"indicates|confirms|lists|has)\s+(?P<fact>\w.{8,})$", re.I | re.S)
_FWIW = re.compile(r"^(?:fwiw|for what it'?s worth|for reference|for info|for your info|fyi|for the avoidance of doubt)\s*[,:—-]?\s*"
                   r"(?P<fact>\w.{8,})$", re.I | re.S)


# decisions
_DECIDER = (r"(?:we|i|my (?:partner|wife|husband|boss|team) and i|[A-Z][a-z]+ and i|management|leadership|the board|"
            r"the (?:committee|council|panel|team|client|company|directors|partners|family)|head office|hq|legal|finance|ops|sales|"
            r"the (?:steering|product|management|exec|executive) (?:group|committee|council|team))")
_DECISION_VERB_R9 = re.compile(
    r"^" + _DECIDER + r"(?:'ve|'s| have| has)\s+(?:now\s+|finally\s+|formally\s+|officially\s+)?(?:settled on|opted (?:for|to)|"
    r"gone (?:for|with)|plumped for|landed on|concluded that|agreed (?:that|on|to)|resolved to|chosen|picked|"
    r"decided (?:on|that|against))\s+\w|"
    r"^" + _DECIDER + r"(?:'re| are)\s+(?:now\s+)?(?:going ahead with|pressing ahead with|moving forward with|proceeding with|"
    r"sticking with|locking in)\s+(?:the|our|a|an|this|that)\s+\w|"
    r"^we\s+(?:agreed|concluded|resolved)\s+that\s+\w", re.I)
_MIND_MADE = re.compile(r"^(?:i've|i have|we've|we have)\s+made up (?:my|our) minds?\s*[,:;—-]\s*(?P<rest>\w.{6,})$|"
                        r"^(?:my|our) minds? (?:is|are) made up\s*[,:;—-]\s*(?P<rest2>\w.{6,})$", re.I | re.S)
_CHOSEN_NP = re.compile(r"^the\s+(?:chosen|agreed|selected|final|confirmed|winning|preferred)\s+(?:venue|date|option|supplier|vendor|"
                        r"design|name|colour|color|candidate|plan|route|hotel|approach|provider|caterer|quote|bid|location)\b"
                        r"[\w'’ -]{0,40}?\s+(?:is|will be)\s+\w", re.I)
_OUTCOME_LABEL = re.compile(r"^(?:the\s+)?(?:outcome|ruling|verdict|resolution|conclusion|upshot|decision|result)\s+"
                            r"(?:of|from)\s+[\w'’ -]{3,40}?\s*:\s*(?P<rest>\w.{6,})$", re.I | re.S)


#: cheap gates: a sentence holding none of a class's words skips its patterns (issue 18, point 4);
#: the word-set gates are one set intersection per sentence
_PUNCT_R9 = str.maketrans({ch: " " for ch in ",.;:!?\"()[]—"})
_LAST_WORDS: list = ["", frozenset()]


def _words(low: str) -> frozenset[str]:
    """The words of a lowercased sentence (the last answer kept: several gates ask in a row)."""
    if _LAST_WORDS[0] is low or _LAST_WORDS[0] == low:
        return _LAST_WORDS[1]
    words = frozenset(low.translate(_PUNCT_R9).split())
    _LAST_WORDS[0], _LAST_WORDS[1] = low, words
    return words


_W_PAST_NEEDED = frozenset("until till before unless first need needs require requires must can may every each all any by due "
                           "later can't cannot".split())
_W_DEADLINE = frozenset("until final last closing cut-off cutoff later by before due".split())
_W_EVIDENCE = frozenset("""attached enclosed below uploaded fwiw worth reference fyi info avoidance according per going shown stated
recorded reading balance mileage odometer confirmed reported verified admitted acknowledged told said timestamp footage cctv log
logs record records notice letter email receipt statement certificate report tracker tracking gps screenshot photo photos
invoice system portal website app""".split())
_W_DECISION = frozenset("""settled opted gone plumped landed concluded agreed resolved chosen picked decided ahead forward
proceeding sticking locking made selected final confirmed winning preferred outcome ruling verdict resolution conclusion upshot
decision result""".split())
_W_PLAN = frozenset("""plan plans itinerary roadmap schedule timeline agenda arrangement approach strategy programme program
route idea routine going planning planned""".split())
_W_APPROVAL = frozenset("""approved approve approving go do sure absolutely okaying ok'ing okay'ing oking authorising authorizing
authorised authorized greenlighting green-lighting greenlit green-lit green signing signed sanctioning rubber-stamping yes
thumbs proceed ahead""".split())
_W_WITHDRAW = frozenset("""longer apply stand hold need needs go dropped scrapped removed lifted off binned ban rule restriction
limit embargo block requirement thing bit part withdrawing dropping scrapping cancel cancelled canceled cancelling canceling
lifting removing stop reinstating restoring bringing reintroducing re-introducing re-enabling reenabling back again so""".split())
#: (the classes that look at the tense: prerequisites, permissions, duties, deadlines)
_GATE_PAST_NEEDED = re.compile(r"until|till|before|unless|first|need|require|must|can |may |every|each|all |any |by |due|"
                               r"no later").search
_GATE_EVIDENCE = re.compile(r"\b(?:attached|enclosed|below|uploaded|fwiw|worth|reference|fyi|info|avoidance|according|per |going by|"
                            r"as shown|as stated|as recorded|reading|balance|mileage|odometer|confirmed|reported|stated|verified|"
                            r"admitted|acknowledged|told|said|timestamp|footage|cctv|log|record|notice|letter|email|receipt|"
                            r"statement|certificate|report|track|gps|screenshot|photo|invoice|system|portal|website|app)").search
_GATE_DECISION = re.compile(r"\b(?:settled|opted|gone |plumped|landed on|concluded|agreed|resolved|chosen|picked|decided|ahead with|"
                            r"forward with|proceeding|sticking with|locking in|made up|minds? (?:is|are) made|selected|final|"
                            r"confirmed|winning|preferred|outcome|ruling|verdict|resolution|conclusion|upshot|decision|result)").search
_GATE_APPROVAL = re.compile(r"by me|with me|by us|with us|approved|go for it|do it|sure thing|you've got it|absolutely|ok'?ing|"
                            r"okay'?ing|approv|authori|greenlight|green-light|green light|signing off|sanction|rubber|a yes|a go |"
                            r"thumbs up|proceed|go ahead|signed off|green-?lit").search
_GATE_DEADLINE = re.compile(r"until|final|last|closing|cut|no later|by |before|due").search
_GATE_SIGNOFF = re.compile(r"(?:need|require|must have|must get)[^.;!?]*(?:approval|sign|ok|go-ahead|authori|consent)").search
_GATE_WITHDRAW_R9 = re.compile(r"no longer|n't apply|not apply|n't stand|not stand|n't hold|not hold|n't need|not need|n't have|"
                               r"not have|can go|could go|be dropped|be scrapped|be removed|be lifted|come off|be binned|"
                               r"ban |ban$|rule|restriction|limit|embargo|block|requirement|thing|bit|part|withdrawing|dropping|"
                               r"scrapping|cancel|lifting|removing|need for|stop|reinstat|restor|bringing back|introduc|enabl|"
                               r"back on|back in|again|back to|can now be|, so |; so ").search
_GATE_PLAN_R9 = re.compile(r"plan|itinerary|roadmap|schedule|timeline|agenda|arrangement|approach|strategy|program|route|idea|"
                           r"routine|going to").search


def _evidence_r9(s: str) -> bool:
    if _QUESTION.search(s):
        return False
    m = _ATTACHED_LABEL.match(s) or _FWIW.match(s)
    if m and concrete(m.group("fact")):
        return True
    if _SOURCE_TAIL.search(s) and concrete(s) and re.search(r"\d", s):
        return True
    if _READING.match(s) or _CONFIRMED_BY.match(s):
        return True
    r = _RECORD_VERB.match(s)
    return bool(r and re.search(r"\d", r.group("fact")))


def _decision_r9(s: str) -> bool:
    if _QUESTION.search(s):
        return False
    if _DECISION_VERB_R9.match(s):
        return not re.search(r"\b(?:in \d{4}|years? ago|last (?:year|month|week|night)|back then|when i was|yesterday|"
                             r"the other day)\b", s, re.I)
    m = _MIND_MADE.match(s)
    if m:
        return True
    if _CHOSEN_NP.match(s):
        return True
    o = _OUTCOME_LABEL.match(s)
    return bool(o)


#: narration of another's rule or approval: "The teacher told the kids they must ...", "My manager
#: approved my holiday last year ..."
_NARRATED_R9 = re.compile(
    r"\b(?:told|tells|asked|warned|reminded|ordered)\s+(?:the|my|his|her|their|our|all the)\s+[\w'’-]+\s+(?:that\s+)?"
    r"(?:they|he|she|we)\s+(?:must|have to|had to|need to|needed to|should|were to|are to)\b|"
    r"^(?:my|his|her|their|our|the)\s+[\w'’-]+\s+(?:approved|signed off|authori[sz]ed|okayed|ok'd)\b.*\b(?:last (?:year|month|week|"
    r"time)|years? ago|months? ago|back then|in \d{4}|once)\b", re.I)


def narrated_r9(sentence: str) -> bool:
    """Somebody else's rule or approval narrated (family ``narrated_forms_r9``)."""
    return families.on(F_NARRATED_R9) and bool(_NARRATED_R9.search(sentence.strip()))


def classify_r9(sentence: str) -> tuple[str, str] | None:
    """The round-9 phrasing classes for a sentence none of the earlier rules read (each a family
    of :mod:`memfold.memory.families`, written from the misses of ``fresh5``)."""
    s = _strip(sentence.strip())
    if not s or s.rstrip().rstrip("\"')]").rstrip().endswith("?"):
        return None
    low = s.lower()
    words = _words(low)
    past = bool(_PAST.search(s)) if not words.isdisjoint(_W_PAST_NEEDED) else False
    if families.on(F_PROHIBIT_R9) and ("never" in low or "don" in low or "do not" in low):
        m = _PROHIBIT_R9.match(s)
        if m:
            verb = (m.group("v1") or m.group("v2") or m.group("v3") or "").lower()
            if verb in _VERBS or verb in _VERBS_R8 or "-" in verb:
                return "constraint", "never"
    if families.on(F_RESTRICT_R9) and " only " in low:
        m = _VERB_ONLY.match(s)
        if m and (m.group("verb").lower() in _VERBS or m.group("verb").lower() in _VERBS_R8 or
                  m.group("verb").lower() in ("recommend", "search", "consider", "accept", "stock", "sell", "serve")):
            return "constraint", "only"
    if ("until" in low or "till" in low or "before" in low or "unless" in low) and not past and families.on(F_PREREQ_R9) \
            and ("n't" in low or "not" in low or low.startswith(("keep", "leave", "hold", "please"))):
        if (_CANNOT_UNTIL.match(s) or _KEEP_UNTIL.match(s)) and (_names_task_noun(s) or concrete(s)):
            return "prerequisite", "until"
    if not past and families.on(F_PREREQ_R9):
        if " first" in low and (m := _FIRST_THEN.match(s)) and (imperative(m.group("step")) or _first_word(m.group("step")) in _VERBS):
            return "prerequisite", "prerequisite_form"
        m = _NEEDS_SIGNOFF.match(s) if _GATE_SIGNOFF(low) else None
        if m and (_names_task_noun(m.group("subject")) or concrete(m.group("subject"))):
            return "prerequisite", "prerequisite_form"
    if not past and low.startswith(("every", "each", "all", "any")) and families.on(F_PREREQ_R9) and (m := _QUANT_DUTY_R9.match(s)):
        return "obligation", "modal"
    if ("can " in low or "may " in low) and (" now " in low or " be " in low or low.startswith("you ")) and not past \
            and families.on(F_PERMIT_R9):
        m = _PARTY_CAN_NOW.match(s) if " now " in low else None
        if m and (_first_word(m.group("rest")) in _VERBS or _first_word(m.group("rest")) in _VERBS_R8):
            return "permission", "permission_form"
        m = _PASSIVE_MAY.match(s) if " be " in low else None
        if m and (_names_task_noun(m.group("subject")) or _FINE_TAIL.search(s) or concrete(m.group("subject"))):
            return "permission", "permission_form"
        m = _YOU_CAN_WHEN.match(s) if low.startswith("you ") else None
        if m and _names_task_noun(s) and not _PERMIT_SOCIAL.search(s):
            return "permission", "permission_form"
    if not words.isdisjoint(_W_DEADLINE) and families.on(F_DEADLINE_R9):
        if ("until" in low and _HAVE_UNTIL_R9.match(s) and _names_task_noun(s)) or _DEADLINE_NP.match(s):
            return "deadline", "deadline_form"
        if _DATE_DEADLINE.search(s) and _DEONTIC_R9.search(s) and _names_task_noun(s) and not past \
                and not _SELF_NARRATION_R9.match(s):
            return "deadline", "deadline_form"
    if (not words.isdisjoint(_W_APPROVAL) or " me" in low or " us" in low) and families.on(F_APPROVAL_R9) and not re.search(r"\bapprove[sd]? of\b|\b(?:not|n't|never)\b", low):
        if _APPROVAL_TAIL_R9.search(s) and (imperative(_strip(re.sub(r"^(?:yes|yep|yeah|ok|okay|sure)[,!.]?\s+", "", s, flags=re.I)))
                                            or concrete(s)):
            return "approval", "approval_statement"
        m = _APPROVAL_LEAD_R9.match(s)
        if m and (imperative(m.group("rest")) or _first_word(m.group("rest")) in _VERBS_R8):
            return "approval", "approval_statement"
        if _APPROVAL_PROGRESSIVE_R9.search(s) or _APPROVAL_YES.match(s) or _PROCEED.search(s):
            return "approval", "approval_statement"
        parts = re.split(r"(?<=[.!])\s+", s)
        if len(parts) >= 2 and APPROVAL_AFTER_R9.match(parts[-1]) and (imperative(_strip(re.sub(
                r"^(?:yes|yep|yeah|ok|okay|sure)[,!.]?\s+", "", parts[0], flags=re.I))) or concrete(parts[0])):
            return "approval", "approval_statement"
    if not words.isdisjoint(_W_EVIDENCE) and families.on(F_EVIDENCE_R9) and _evidence_r9(s):
        return "evidence", "evidence"
    if not words.isdisjoint(_W_DECISION) and families.on(F_DECISION_R9) and _decision_r9(s):
        return "policy_state", "decision"
    return None


_FIRST_THEN = re.compile(r"^(?P<step>[a-z]+\b[^.;!?]{3,80}?)\s+first\s*[,;]?\s*(?:and\s+)?then\s+\w", re.I)
_NEEDS_SIGNOFF = re.compile(r"^(?P<subject>(?!(?:it|this|that|he|she|they|we|i|you)\b)[\w'’$€£%/, -]{3,50}?)\s+(?:need|needs|require|"
                            r"requires|must have|must get)\s+(?:my|our|the|a|an|your|written|prior|explicit)\s+(?:[\w'’-]+\s+)?"
                            r"(?:approval|sign-?off|ok|okay|go-ahead|authori[sz]ation|consent)\b", re.I)
#: a quantified subject with an amount ("every refund over £50 has to be logged")
_QUANT_DUTY_R9 = re.compile(r"^(?:every|each|all|any)\s+(?=[^.;!?]*?[\d$€£%][^.;!?]*?\s(?:has|have|must|needs?|should|is|are)\s)"
                            r"(?:[\w'’$€£%/-]+\s+){1,6}?(?:has to|have to|must|needs? to|should|is to|"
                            r"are to)\s+be\s+\w+(?:ed|en|t)\b", re.I)
_SELF_NARRATION_R9 = re.compile(r"^(?:i|we)\s+(?:had|was|were|used)\b", re.I)


# plan statements (family ``plan_statement_r9``): "Here's the plan: ...", "The roadmap is: ...",
# "Plan is we ...", "The idea is that ...", "We plan to / We're going to <do the X> in three waves ..."
_PLAN_NOUN_R9 = r"(?:plan|itinerary|roadmap|schedule|timeline|agenda|arrangement|approach|strategy|programme|program|route|idea|routine)"
_PLAN_HERE = re.compile(r"^(?:here's|here is)\s+(?:the|our|my)\s+(?:new\s+)?" + _PLAN_NOUN_R9 + r"(?:\s+(?:for|on)\s+[\w' -]{2,30}?)?"
                        r"\s*:\s*\w", re.I)
#: "The roadmap is: ...", "The idea is that ...", "Plan is we ..." ("The plan is X" is family ``plan_statement``)
_PLAN_IS = re.compile(r"^(?:(?:the|our|my)\s+(?:[\w-]+\s+)?" + _PLAN_NOUN_R9 + r"(?:\s+(?:for|on)\s+[\w' -]{2,30}?)?\s+"
                      r"is\s*(?::\s*|\s+that\s+)|" + _PLAN_NOUN_R9 + r"\s+is\s+(?:that\s+)?)(?P<rest>\w.{6,})$", re.I | re.S)
_PLAN_INTEND = re.compile(r"^(?:we|i)(?:'re| are|'m| am)?\s+(?:going to|planning to|plan to|intend to|aim to|are going to)\s+"
                          r"(?:do|run|hold|split|roll out|stage|phase|handle|organi[sz]e|structure)\s+(?:the|our|my|this)\s+"
                          r"[\w' -]{2,40}?\s+(?:in|on|over|across|with|by|as)\s+\w", re.I)
_PLAN_SHAPE = re.compile(r"\d|\b(?:first|then|starting with|waves?|phases?|stages?|weeks?|days?|months?|quarters?|"
                         r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|mornings?|evenings?|weekly|daily|monthly|"
                         r"two|three|four|five|six|q[1-4])\b", re.I)


def plan_statement_r9(sentence: str) -> bool:
    if not families.on(F_PLAN_R9):
        return False
    low = sentence.lower()
    if _words(low).isdisjoint(_W_PLAN) and "going to" not in low:
        return False
    s = _strip(sentence.strip())
    if _QUESTION.search(s) or s.endswith("!"):
        return False
    if _PLAN_HERE.match(s):
        return True
    m = _PLAN_IS.match(s)
    if m and not re.search(r"\b(?:was|were|had|did|ago|yesterday)\b", s, re.I) and (
            _PLAN_SHAPE.search(m.group("rest")) or _NAMED.search(s)):
        return True
    return bool(_PLAN_INTEND.match(s) and _PLAN_SHAPE.search(s) and not _PLAN_PAST.search(s))


# resets (family ``reset_forms_r9``)
_DISCARD_R9 = r"(?:scrap|ditch|drop|bin|rip up|tear up|throw out|toss out|forget|ignore|disregard|shelve|cancel)"
_RESET_R9 = re.compile(
    r"(?:^|[.!?;:,—]\s*)" + _DISCARD_R9 + r"\s+(?:the|our|my|that)\s+(?:[\w'’/-]+\s+){0,3}?" + _PLAN_NOUN_R9 +
    r"\b(?:\s+(?:we|i)\s+(?:agreed|discussed|made|had|sent|said))?(?:\s+(?:entirely|completely|altogether))?\s*[.;:,—-]|"
    r"\b" + _PLAN_NOUN_R9 + r"s?\s+(?:has been|have been|was|is|are|'s been)\s+(?:now\s+)?(?:thrown out|scrapped|dropped|ditched|"
    r"binned|shelved|cancell?ed|history|dead|off)\b|"
    r"^(?:the|our|my)\s+(?:[\w'’/-]+\s+){1,3}?(?:is|are|has been)\s+(?:now\s+)?(?:off|history|scrapped|cancell?ed|dropped)\s*"
    r"(?:[.;:—]|,\s*(?:and\s+)?(?:instead|now|we|everyone|it))|"
    r"\bnone of (?:what|the things)\s+(?:we|i)(?:'ve| have)?\s+(?:planned|said|agreed|discussed|decided)\b|"
    r"\b(?:ignore|forget|disregard|scrap|drop)\s+(?:all (?:of )?(?:that|this|the above)|everything (?:above|so far|i said|we said))\b|"
    r"\b(?:we've|i've|we have|i have)\s+(?:rethought|reconsidered|re-thought|reworked|redone)\s+(?:the whole thing|everything|"
    r"it all|the (?:whole |entire )?(?:[\w-]+\s+)?" + _PLAN_NOUN_R9 + r")\b|"
    r"\bplan [a-z] it is\b|"
    r"\bchange of (?:everything|all (?:of )?(?:it|that|the plans?))\b|"
    r"\b(?:this|that|the following|what follows)\s+replaces\s+(?:what (?:i|we) (?:said|wrote|planned|agreed)|everything|"
    r"the (?:earlier|previous|old|original) (?:one|plan|version))\b", re.I)


def reset_r9(text: str) -> "re.Match[str] | None":
    """A reset of the plan in a round-9 form (family ``reset_forms_r9``): a discard verb on a plan
    noun ("Rip up the Italy itinerary.", "Throw out the roadmap we agreed."), a plan declared
    thrown out ("The hiring plan has been thrown out; ...", "The phased office move is off."),
    "none of what we planned stands", "ignore all that", "we've rethought the whole thing", "Plan
    B it is", "change of everything", "this replaces what I said before"; never a rule's name."""
    if not families.on(F_RESET_R9):
        return None
    m = _RESET_R9.search(text)
    if not m or _QUESTION.search(text.strip()):
        return None
    if _RULE_WORDS_R8.search(m.group(0)) and not re.search(_PLAN_NOUN_R9, m.group(0), re.I):
        return None
    rest = text[m.end():]
    if not rest.strip() or not (concrete(rest) or _NAMED.search(rest) or _PLAN_SHAPE.search(rest) or re.search(
            r"\b(?:we(?:'re| are|'ll| will|'ve)|it's|instead|now|everyone|everything)\b", rest, re.I)):
        return None
    return m


# revocations (family ``revoke_forms_r9``)
_WITHDRAW_R9 = re.compile(
    r"^(?:the|my|our|that|this)\s+(?P<what>[\w$€£%'’/ -]{2,40}?)\s+(?:no longer|doesn't|does not|don't|do not)\s+(?:need|have)s?\s+"
    r"to\s+(?P<what2>[^.;!?]{2,60})|"
    r"^(?:the|that|this|my|our)\s+(?P<what3>[\w$€£%'’/ -]{2,40}?)\s+(?:doesn't|does not|don't|do not|won't|will not)\s+"
    r"(?:apply|stand|hold)\s+(?:any ?more|any longer|now)\b|"
    r"^(?:the|that|this|my|our)\s+(?P<what4>[\w$€£%'’/ -]{2,40}?)\s+(?:can|could)\s+(?:go|be dropped|be scrapped|be removed|"
    r"be lifted|come off|be binned)\s*(?:now\s*)?(?:[.;,—-]|$)|"
    r"\bthe\s+(?:ban|rule|restriction|limit|embargo|block|requirement)\s+(?:on|about|against)\s+(?P<what5>[^.;!?]{2,40}?)\s+"
    r"(?:is|has been)\s+(?:now\s+)?(?:lifted|over|gone|cancell?ed|removed|dropped|off)\b|"
    r"(?:^|[.;:,—]\s*)(?:scratch|forget|drop|ignore|never mind|scrap|skip)\s+the\s+(?P<what6>(?:[\w$€£%'’/-]+\s+){0,2}?"
    r"[\w$€£%'’/-]+)\s+(?:thing|bit|part)\b|"
    r"\b(?:i'm|i am|we're|we are)\s+(?:withdrawing|dropping|scrapping|cancell?ing|lifting|removing)\s+the\s+(?:rule|requirement|"
    r"restriction|ban|limit|instruction)\s+that\s+(?P<what7>[^.;!?]{2,80})|"
    r"\bno (?:more )?need for\s+(?:the|my|those|these|any)\s+(?P<what8>[^.;!?]{2,50}?)\s+(?:any ?more|any longer|now)\b|"
    r"\b(?:you can|you may|please)\s+stop\s+(?P<what9>[\w'’]+ing\b[^.;!?]{0,40})", re.I)
#: restorations lift a prohibition ("We're reinstating the admin fee", "dairy recipes are back on
#: the menu", "Let's go back to English", "trial users can now be told about pricing")
_RESTORE_R9 = re.compile(
    r"\b(?:we're|we are|i'm|i am)\s+(?:reinstating|restoring|bringing back|re-?introducing|re-?enabling)\s+(?P<what>[^.;!?]{3,60})|"
    r"^(?P<what2>(?!it\b|that\b|this\b|they\b)[\w$€£%'’/ -]{3,40}?)\s+(?:is|are)\s+(?:back on the (?:menu|table|list|cards)|"
    r"back in|allowed again|fine again|ok again|okay again)\b|"
    r"\b(?:let's|let us|we'll|we will|please)\s+(?:go|switch|change|move)\s+back\s+to\s+(?P<back>[^.;!?,]{2,40})|"
    r"^(?P<what4>(?!it\b|that\b|this\b|they\b|i\b|we\b|you\b)[\w$€£%'’/ -]{3,40}?)\s+can\s+now\s+be\s+(?P<verb>\w+(?:ed|en|ld|d|t))\b"
    r"(?P<what5>[^.;!?]{0,40})", re.I)


def withdrawn_r9(sentence: str) -> tuple[str, str] | None:
    """``(words naming what is withdrawn, action)`` for a round-9 form: ``revoke`` (family
    ``revoke_forms_r9``) or ``lift`` (a restoration, family ``restore_forms_r9``, which only ends
    a prohibition naming it), else None. A reason before ", so" adds its words (family
    ``so_tail_clause``: "Gareth has left, so you can stop cc'ing him")."""
    low = sentence.lower()
    if _words(low).isdisjoint(_W_WITHDRAW) and "n't" not in low and "can now be" not in low:
        return None
    s = _strip(normalise(sentence))
    low = s.lower()
    head = ""
    probes = [s]
    if families.on(F_SO_TAIL) and (", so " in low or "; so " in low) and (t := so_tail(s)) is not None:
        probes.append(t)
        head = so_head(s)
    c = _COLON_CLAUSE.match(s)
    if c and not re.search(r"\d", c.group("lead")):
        probes.append(c.group("rest"))
        head = f"{head} {c.group('lead')}"
    for probe in probes:
        if families.on(F_REVOKE_R9):
            m = _WITHDRAW_R9.search(probe)
            if m:
                what = " ".join(v for k, v in sorted(m.groupdict().items()) if v)
                return split_hyphens(f"{what} {head}".strip()), "revoke"
        if families.on(F_RESTORE_R9):
            m = _RESTORE_R9.search(probe)
            if m and m.group("back"):
                # "Let's go back to English, I've had enough French practice": the rule reverted
                # from is named by the rest of the sentence (two shared words wanted)
                return split_hyphens(s), "revert"
            if m:
                what = " ".join(v for k, v in sorted(m.groupdict().items()) if v)
                return split_hyphens(f"{what} {head}".strip()), "lift"
        if probe is not s and families.on(F_SO_TAIL):
            # an older withdrawal form after a reason ("..., so big parties can be booked again")
            what = withdrawn_terms(probe) or (withdrawn_r5(probe) or (None,))[0] or (withdrawn_r8(probe) or (None,))[0]
            if what:
                return split_hyphens(f"{what} {head}".strip()), "revoke"
    return None


#: a topic label before a withdrawal that names it only by a pronoun ("PO boxes: we can deliver to
#: them now, so that rule is cancelled"): the label names what is withdrawn (family ``revoke_forms_r9``)
_TOPIC_LABEL = re.compile(r"^(?P<label>[\w'’ -]{2,30}?)\s*:\s+(?P<rest>.*\b(?:that|this|the) (?:rule|one|restriction|ban|"
                          r"instruction|requirement)\b.*)$", re.I | re.S)


def topic_label_r9(sentence: str) -> str | None:
    if not families.on(F_REVOKE_R9) or ":" not in sentence:
        return None
    m = _TOPIC_LABEL.match(sentence.strip())
    return m.group("label") if m and not re.search(r"\d", m.group("label")) else None


def withdrawn_in_tail_r9(sentence: str) -> str | None:
    """For a reason and a withdrawal after ", so" ("The price rise is public, so the ban on
    mentioning it is lifted."), the reason's words, to be added to what the withdrawal names."""
    if not families.on(F_SO_TAIL):
        return None
    low = sentence.lower()
    if ", so " not in low and "; so " not in low:
        return None
    return so_head(sentence) or None


# conditions met (family ``condition_met``): a record waiting until something happens is released by
# a statement that it happened ("My new passport came in the post today", "Payment cleared overnight",
# "Planning permission was granted by the council yesterday")
_EVENT_MET = re.compile(
    r"\b(?:came|come|arrived|turned up|landed|passed|lifted|granted|cleared|received|signed off|signed|came back|"
    r"come back|came through|come through|showed|shown|approved|completed|finished|done|returned|delivered|paid|"
    r"confirmed|verified|checked|matches|issued|sorted|fixed|resolved|back)\b", re.I)
_NOT_MET = re.compile(r"\b(?:not|n't|never|yet|still waiting|waiting|until|once|if|when|will|should|must|hope|hopefully|"
                      r"expect|might|may|could|soon|tomorrow)\b", re.I)
_CONDITION = re.compile(r"\b(?:until|till|once|unless|after|before|when)\b(?P<cond>[^.;!?]+)", re.I)


def condition_met(sentence: str) -> bool:
    """The sentence reports that something happened (family ``condition_met``)."""
    if not families.on(F_CONDITION_MET):
        return False
    s = sentence.strip()
    if not _EVENT_MET.search(s) or _QUESTION.search(s) or len(s.split()) < 2:
        return False
    return not _NOT_MET.search(s)


def event_words(sentence: str) -> list[str]:
    """The words of ``sentence`` that report the event (:func:`condition_met`'s verbs: "arrived",
    "came through", "cleared"), which name no one condition."""
    return _EVENT_MET.findall(sentence)


def condition_of(record_text: str) -> str:
    """The condition a waiting record names ("Don't book the flights until my passport renewal
    arrives" -> "my passport renewal arrives"); the whole text for "Before you X, Y" (the
    condition is Y)."""
    m = _CONDITION.search(record_text)
    if m and not re.match(r"\s*(?:you|we|i)\b", m.group("cond"), re.I) and not re.match(r"^\s*before\b", record_text, re.I):
        return m.group("cond")
    return record_text


#: a record that waits for an event ("Only release the tickets once payment has cleared")
_WAITS_FOR_EVENT = re.compile(r"\b(?:until|till|once)\s+(?!further notice|(?:i|we) (?:say|tell)\b)(?:the|my|our|his|her|their|"
                              r"its|he|she|they|payment|planning|both|all)\b", re.I)


_BEFORE_YOU_ONE = re.compile(r"^(?:before|until)\s+you\s+[a-z]+\s+(?:the|my|our|this|that|his|her|their)\b(?![^,]*\b(?:every|each|any|all)\b)",
                             re.I)


_STANDING_R9 = re.compile(r"\b(?:for the rest of|from now on|going forward|until further notice|always|every|each|any|"
                          r"whenever|all)\b(?!-)", re.I)  # (round 10: not "the all-clear")


def standing_r9(record_text: str) -> bool:
    """A record that stands for every case ("For the rest of this session, before you run a
    command, ..."): no one event releases it (family ``condition_met``)."""
    return bool(_STANDING_R9.search(record_text))


def waits_for_event(record_text: str) -> bool:
    """A record that waits for one event ("... until the embargo lifts", "Before you order the new
    laptop, get a quote"): released when a later statement says it happened."""
    return families.on(F_CONDITION_MET) and bool(_WAITS_FOR_EVENT.search(record_text) or _BEFORE_YOU_ONE.match(record_text))


#: inline patterns of earlier rounds compiled once (round 9, append cost: the same patterns, the same answers)
_IT_IS_ESSENTIAL = re.compile(r"^it(?:'s| is) (?:essential|important|crucial|vital|critical|mandatory|required|a must) that "
                               r"(?:you|we|every|all|each|the)\b", re.I)
_APPROVED_LEAD_R5 = re.compile(r"^(?:(?:ok|okay|yes|yep|fine|sure|alright)\s*[,.]\s*)*approved\s*[,.:;]\s*(?P<rest>\w.+)$", re.I | re.S)
_LAST_AGO = re.compile(r"\b(?:last|ago|yesterday)\b", re.I)
_I_WILL_R5 = re.compile(r"^(?:i|we)(?:'ll|'m| will| am| was| had)\b", re.I)
_FEEL_FREE_R8 = re.compile(r"^(?:feel free to|you (?:can|may))\s+(?P<rest>[a-z]+\s+.+)$", re.I | re.S)
_FOR_THIS_JUST_R8 = re.compile(r"^(?:for|on|with) (?:this|the|our|my) [\w-]+,?\s+(?P<rest>just .+)$", re.I | re.S)


# -- round 10 ------------------------------------------------------------------------------------
#: the round-10 families: vetoes for small talk in a rule's shape (from round 8's QA list of false
#: records, ``tests/test_round8_qa.py``), and the classes written from the misses of ``fresh6``
F_CASUAL_R10 = family("casual_tail_r10", {"round8_qa"})

#: laughter anywhere in a sentence ("Plan: pizza tonight lol", "Refrain from laughing, please lol"):
#: the sentence is a joke, not an instruction (every phrasing set has laughter only in near misses)
_LAUGHTER = re.compile(r"\b(?:lol+|lolz|lmao|lmfao|rofl|roflmao|a?ha(?:ha)+h?|he(?:he)+|hihi+|jk|j/k)\b|[\U0001F602\U0001F923\U0001F606\U0001F605\U0001F61C\U0001F61D]",
                       re.I)
#: a plan label over a list of everyday words ("Schedule: nap, snack, nap.", "Route: home, couch, bed.")
_LABEL_LIST = re.compile(r"^(?i:(?:(?:our|the|my)\s+)?(?:[\w-]+\s+)?(?:plan|itinerary|schedule|agenda|route|programme|program|"
                         r"timeline|routine)(?:\s+for\s+[\w' -]{2,20}?)?)\s*:\s*(?P<items>[a-z][a-z ,;&'-]*?)\s*[.!]*$")
#: an opinion settled as if decided ("Let's settle this: cats are better than dogs.")
_OPINION = re.compile(r"\b(?:is|are)\s+(?:way\s+|much\s+|so\s+|far\s+|clearly\s+|definitely\s+)?(?:better|worse|nicer|cuter|"
                      r"superior|inferior|cooler|funnier|overrated|underrated|the best|the worst|the greatest)\b", re.I)


_LAUGH_WORDS = ("lol", "lmao", "lmfao", "rofl", "haha", "hehe", "hihi", "jk", "j/k")
_LAUGH_EMOJI = ("\U0001F602", "\U0001F923", "\U0001F606", "\U0001F605", "\U0001F61C", "\U0001F61D")
_OPINION_WORDS = frozenset("better worse nicer cuter superior inferior cooler funnier overrated underrated best worst greatest".split())


def casual_r10(sentence: str) -> bool:
    """Small talk in a rule's shape (family ``casual_tail_r10``): laughter in the sentence, a plan
    label over a list of everyday words, or an opinion settled as if it were decided."""
    if not families.on(F_CASUAL_R10):
        return False
    s = sentence.strip()
    low = s.lower()
    if (any(w in low for w in _LAUGH_WORDS) or not s.isascii() and any(e in s for e in _LAUGH_EMOJI)) and _LAUGHTER.search(s):
        return True
    m = _LABEL_LIST.match(s) if ":" in s else None
    if m:
        items = [i.strip() for i in re.split(r"[,;&]|\band\b", m.group("items")) if i.strip()]
        if items and all(len(i.split()) <= 2 for i in items) and not _names_task_noun(m.group("items")):
            return True
    if _words(low).isdisjoint(_OPINION_WORDS):
        return False
    return bool(_OPINION.search(s)) and not concrete(s) and not _names_task_noun(_OPINION.split(s, 1)[0])


F_REVOKE_R10 = family("revoke_grammar_r10", {"fresh6"})
F_RESTORE_R10 = family("restore_grammar_r10", {"fresh6"})
F_CONDITION_R10 = family("condition_met_r10", {"fresh6"})

# revocations by grammar (family ``revoke_grammar_r10``): the thing a rule asked for declared not
# needed ("The safety data sheets are no longer needed on orders", "The 6pm reminder isn't needed any
# more", "Refunds over £200 no longer need to go to a supervisor", "Friday afternoons don't need to be
# kept clear any more"), a rule noun declared gone ("The 30-day cut-off on returns is gone"), a
# deictic tail ("..., that instruction is withdrawn"), a topic dismissed ("re the X thing: forget
# it") and "let's drop the X"
_NP_R10 = r"(?!(?:i|we|you|it|that|this|they|he|she|there|everything|nothing|life)\b)[\w$€£%&'’/ -]{2,50}?"
_NOT_NEEDED_R10 = re.compile(
    r"^(?P<what>" + _NP_R10 + r")\s+(?:(?:is|are)\s+no\s+longer|(?:is|are)\s+not|isn't|aren't|'s\s+no\s+longer|'re\s+no\s+longer)\s+"
    r"(?:needed|required|necessary|wanted|mandatory|compulsory|in force|in effect|a requirement|part of the process)\b"
    r"(?P<tail>[^.;!?—]*)|"
    r"^(?P<what2>" + _NP_R10 + r")\s+(?:no longer|(?:don't|do not|doesn't|does not)\s+(?=[^.;!?]*\b(?:any ?more|any longer|now)\b))"
    r"\s*(?:need|needs|have|has)\s+to\s+(?P<rest2>[^.;!?—]{2,60})", re.I)
_RULE_GONE_R10 = re.compile(
    r"^(?:the|that|this|our|my|your)\s+(?P<what>[\w$€£%'’/ -]{0,40}?(?:cut-?off|limit|rule|ban|cap|restriction|requirement|policy|"
    r"embargo|minimum|maximum|threshold|blackout|freeze|block)(?:\s+(?:on|for|about|against|around)\s+[^.;!?,—]{2,40}?)?)\s+"
    r"(?:is|has been|'s|was)\s+(?:now\s+|officially\s+)?(?:gone|over|lifted|scrapped|removed|dropped|history|off|cancell?ed|"
    r"withdrawn|void|suspended|rescinded|no more|done away with)\b", re.I)
_DEICTIC_GONE_R10 = re.compile(
    r"[,;—-]\s*(?:so\s+)?(?:that|this|the|my)\s+(?:old\s+|earlier\s+)?(?:instruction|rule|restriction|ban|request|requirement|limit)\s+"
    r"(?:is|has been|'s)\s+(?:now\s+)?(?:withdrawn|cancell?ed|lifted|void|revoked|over|gone|off|rescinded|dead)\b", re.I)
_TOPIC_DISMISS_R10 = re.compile(
    r"^(?:re|regarding|about|as for|as to|on)\s+(?P<what>[^:,;]{2,50}?)\s*[:,;—-]\s*(?:just\s+|please\s+)?(?:forget|ignore|scrap|"
    r"drop|disregard|never mind|cancel|bin|ditch)\s+(?:it|that|this|about it)\b", re.I)
_LETS_DROP_R10 = re.compile(
    r"^(?:let's|let us|we can|we'll|we will|please)\s+(?:drop|ditch|scrap|stop|forget|skip|cancel|quit|knock)\s+(?:the|my|our|those|"
    r"these|that|this|all the)\s+(?P<what>[^.;!?,—]{2,40}?)(?:\s+(?:on the head|thing|bit|rule|requirement))?\s*(?:[.;!,—]|$)", re.I)
# restorations by grammar (family ``restore_grammar_r10``): a banned thing allowed again ("We're
# taking Amex again from today", "Thursdays are free again", "You're fine to talk about the sale
# again", "Ryanair's back on the table", "You can go back to booking city-centre hotels")
_AGAIN_R10 = re.compile(
    r"^(?:we're|we are|we'll|we will|we|you can|you may|you're|you are)\s+(?:(?:fine|free|welcome|ok|okay|allowed|clear|good)\s+to\s+)?"
    r"(?P<what>(?:[\w'’-]+\s+){1,6}?)again\b|"
    r"^(?P<what2>" + _NP_R10 + r")\s+(?:is|are|'s|'re)\s+(?:free|open|available|fine|ok|okay|allowed|back|bookable|on)\s+again\b|"
    r"^(?P<what3>" + _NP_R10 + r")(?:'s|’s|\s+is|\s+are)\s+back\s+(?:on the (?:table|menu|list|cards)|in play|allowed)\b|"
    r"^(?:you can|you may|feel free to|we can|please)\s+go\s+back\s+to\s+(?P<what4>\w+ing\b[^.;!?,—]{2,50})", re.I)
_W_REVOKE_R10 = frozenset("""longer needed required necessary mandatory need needs gone over lifted scrapped removed dropped history off
cancelled canceled withdrawn void suspended rescinded re regarding about drop ditch scrap stop forget skip cancel quit knock again
back""".split())


def withdrawn_r10(sentence: str) -> tuple[str, str] | None:
    """``(words naming what is withdrawn, action)`` for a round-10 form: ``revoke`` (family
    ``revoke_grammar_r10``) or ``lift`` (family ``restore_grammar_r10``: ends only a prohibition
    naming it), else None."""
    low = sentence.lower()
    if _words(low).isdisjoint(_W_REVOKE_R10) and "n't" not in low:
        return None
    s = _strip(normalise(sentence))
    if _QUESTION.search(s):
        return None
    if families.on(F_REVOKE_R10):
        m = _NOT_NEEDED_R10.match(s)
        if m and (m.group("what2") or "no longer" in m.group(0).lower() or re.search(
                r"\b(?:any ?more|any longer|now)\b", m.group(0), re.I)):
            what = " ".join(v for v in (m.group("what"), m.group("what2"), m.group("rest2")) if v)
            return split_hyphens(what), "revoke"
        m = _RULE_GONE_R10.match(s) or _TOPIC_DISMISS_R10.match(s) or _LETS_DROP_R10.match(s)
        if m:
            return split_hyphens(m.group("what")), "revoke"
        if _DEICTIC_GONE_R10.search(s):
            return split_hyphens(s[:_DEICTIC_GONE_R10.search(s).start()]), "revoke"
    if families.on(F_RESTORE_R10):
        m = _AGAIN_R10.match(s)
        if m:
            what = " ".join(v for k, v in sorted(m.groupdict().items()) if v)
            return split_hyphens(what), "lift"
    return None


# conditions met by grammar (family ``condition_met_r10``): a statement in the past or perfect
# ("We exchanged contracts this afternoon", "The CEO read the press release over lunch", "the
# returned laptop's been inspected", "customer replied w/ serial", "Physio gave me the all-clear")
# releases a record waiting for an event when the statement shares two words with its condition
_IRREGULAR_PAST = frozenset("""read gave sent came went got made took found brought bought sold paid told said left won
rang wrote spoke signed heard knew saw met put set shut""".split())
_NOT_MET_WORDS = frozenset("not never yet still waiting until if when will should must hope hopefully expect might may could "
                           "would soon tomorrow next gonna supposed".split())
_ED_WORD = re.compile(r"\b(?!(?:indeed|need|speed|proceed|exceed|succeed)\b)\w{3,}ed\b|\bbeen\b", re.I)


def condition_met_r10(sentence: str) -> bool:
    """The sentence reports that something happened, in the past or perfect (family ``condition_met_r10``)."""
    if not families.on(F_CONDITION_R10):
        return False
    low = sentence.lower()
    words = _words(low)
    if len(words) < 3 or words.isdisjoint(_IRREGULAR_PAST) and not _ED_WORD.search(sentence):
        return False
    if not words.isdisjoint(_NOT_MET_WORDS) or "n't" in low or "going to" in low:
        return False
    s = _strip(sentence.strip())
    if _QUESTION.search(s) or s.lower().startswith(("please", "let's", "don't", "never", "always", "make sure", "you ")):
        return False
    # the gate above found a past form ("-ed", an irregular past, "been"); the words it must not
    # have (not, yet, will, hope ...) are all single words of _NOT_MET_WORDS
    return True


#: a waiting record's condition after "until / once / before we've ..." ("until we've exchanged contracts")
_CONDITION_R10 = re.compile(r"\b(?:until|till|once|unless|after|when|for)\s+(?P<cond>(?:my|our|the|his|her|their|we|we've|i|i've|"
                            r"they|he|she|it)\b(?!\s+(?:say|tell|confirm|approve|give the|give you|get back))[^.;!?]+)", re.I)


def condition_r10(record_text: str) -> str | None:
    """The condition a waiting record names, pronoun subjects included (family ``condition_met_r10``)."""
    if not families.on(F_CONDITION_R10):
        return None
    m = _CONDITION_R10.search(record_text)
    return m.group("cond") if m else None


F_RESET_R10 = family("reset_grammar_r10", {"fresh6"})

# resets by grammar (family ``reset_grammar_r10``): a discard verb on a plan, its relative clause
# included ("Ignore the study plan I gave you.", "Wipe the sprint plan."), a perfect discard ("We've
# torn up the Q2 plan;", "We've rethought the school move entirely —"), a fresh start ("we're starting
# from scratch"), everything planned discarded ("Reverse everything we planned for the apps:",
# "Everything I told you about the bathroom plan is out the window;"), a plan declared replaced
# ("The event plan has been replaced wholesale:"), and a new plan named ("so um, new honeymoon plan, ...")
_PLAN_NOUN_R10 = (r"(?:plan|plans|itinerary|roadmap|schedule|timeline|agenda|arrangement|approach|strategy|programme|program|"
                  r"route|idea|routine|move|trip|setup|set-up|budget|menu|line-?up|rota)")
_DISCARD_R10 = (r"(?:scrap|ditch|drop|bin|rip up|tear up|throw out|toss out|forget|ignore|disregard|shelve|cancel|wipe|junk|"
                r"abandon|nix|kill|undo|reverse|trash)")
_DISCARDED_R10 = (r"(?:torn up|ripped up|scrapped|ditched|binned|dropped|thrown out|shelved|cancell?ed|abandoned|wiped|junked|"
                  r"rethought|re-thought|reconsidered|reworked|redone|overhauled|trashed|nixed|killed)")
_TOLD_R10 = r"(?:planned|said|agreed|decided|discussed|told you|arranged|sent|gave you|set up|sketched out|mapped out)"
_RESET_R10 = re.compile(
    r"(?:^|[.!?;:,—]\s*)" + _DISCARD_R10 + r"\s+(?:the|our|my|that|this)\s+(?:[\w'’/-]+\s+){0,3}?" + _PLAN_NOUN_R10 +
    r"\b(?:\s+(?:that\s+)?(?:i|we)\s+(?:\w+)(?:\s+(?:you|on|about|for|earlier|before))?)?(?:\s+(?:entirely|completely|altogether))?"
    r"\s*[.;:,—-](?=\s|$)|"
    r"\b(?:we've|we have|i've|i have|we|they've|they have)\s+(?:now\s+|just\s+|completely\s+|totally\s+)?" + _DISCARDED_R10 +
    r"\s+(?:the|our|my|that|this)\s+(?:[\w'’/-]+\s+){0,3}?" + _PLAN_NOUN_R10 +
    r"\b(?:\s+(?:entirely|completely|altogether|wholesale))?\s*[.;:,—-](?=\s|$)|"
    r"\b(?:starting|start|begin|beginning)\s+(?:over\s+|again\s+|afresh\s+)?from scratch\b|\bback to the drawing board\b|"
    r"\bclean slate\b|"
    r"\b" + _DISCARD_R10 + r"\s+everything\s+(?:that\s+)?(?:we|i)(?:'ve| have)?\s+" + _TOLD_R10 + r"\b|"
    r"\beverything\s+(?:that\s+)?(?:we|i)(?:'ve| have)?\s+" + _TOLD_R10 + r"\b[^.;:!?]{0,50}?\s+(?:is|are|'s)\s+(?:now\s+)?"
    r"(?:out (?:of )?the window|off|void|cancell?ed|scrapped|gone|history|dead|obsolete|binned)\b|"
    r"\b" + _PLAN_NOUN_R10 + r"\s+(?:has been|have been|was|is|'s been)\s+(?:now\s+)?(?:replaced|rewritten|overhauled|redone|reworked|"
    r"torn up|ripped up|wiped|changed completely|completely changed)\b|"
    r"^(?:(?:so|um+|uh+|er+|ok|okay|right|well|hmm+|alright|and)[,\s]+)*(?:a\s+)?(?:new|revised|updated|different)\s+(?:[\w'’-]+\s+)?"
    + _PLAN_NOUN_R10 + r"\s*[,:—-]", re.I)
#: "Forget Slough. We're staying in the current warehouse ...": a discarded name, then the new plan
_RESET_NAME_R10 = re.compile(r"^(?i:forget|scrap|ditch|drop|bin|skip)\s+(?:the\s+)?[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)?\s*[.;:—-]\s+"
                             r"(?=(?i:we(?:'re| are|'ll| will)|the new|instead|it's)\b)")


def reset_r10(text: str) -> "re.Match[str] | None":
    """A reset of the plan by grammar (family ``reset_grammar_r10``); never a rule's name (a
    revocation), and something of the task must follow."""
    if not families.on(F_RESET_R10):
        return None
    m = _RESET_R10.search(text) or _RESET_NAME_R10.match(text.strip())
    if not m or _QUESTION.search(text.strip()):
        return None
    if _RULE_WORDS_R8.search(m.group(0)) and not re.search(_PLAN_NOUN_R10, m.group(0), re.I):
        return None
    rest = text[m.end():]
    if not rest.strip() or not (concrete(rest) or _NAMED.search(rest) or _PLAN_SHAPE.search(rest) or re.search(
            r"\b(?:we(?:'re| are|'ll| will|'ve)|they(?:'ll| will|'re)|it's|instead|now|everyone|everything)\b", rest, re.I)):
        return None
    return m


F_LEAD_R10 = family("lead_strip_r10", {"fresh6"})
F_NARRATED_R10 = family("narrated_forms_r10", {"fresh6"})
F_KINDS_R10 = family("kind_forms_r10", {"fresh6"})
F_SETUP_R10 = family("manner_imperative_r10", {"fresh6"})

#: fillers and a dated scope before a directive ("Kindly do not ...", "yeah and uh don't ...",
#: "From 1 March, every order ...", "Starting next week, ..."): read without them, kept whole
_LEAD_R10 = re.compile(
    r"^(?:kindly|yeah|yea|yep|uh+|um+|er+|erm)\b[\s,]*(?:(?:kindly|yeah|yea|yep|uh+|um+|er+|erm|and|so|ok|okay|oh|right|well|"
    r"also|plus)\b[\s,]*)*(?=\w)|"
    r"^(?:from|starting|as of|effective|beginning|with effect from)\s+(?:the\s+)?(?:\d{1,2}(?:st|nd|rd|th)?\s+" + _MONTH +
    r"|" + _MONTH + r"\s+\d{1,2}(?:st|nd|rd|th)?|" + _MONTH + r"|next\s+(?:week|month|year|quarter)|" + _WEEKDAY +
    r"|q[1-4]|\d{4})\s*,\s*|"
    r"^(?:if|when|whenever|once|each time|every time)\s+[^,;:]{3,80},\s*(?=(?:first|then|always|never|please|make sure|be sure|"
    r"don't|do not)\b)", re.I)


_DIRECTIVE_START_R10 = re.compile(r"(?:don't|do not|never|always|please|make sure|be sure|you|every|each|any|all|no|only|"
                                  r"nothing|nobody|from now on|going forward)\b", re.I)
_LEAD_STARTS_R10 = ("kindly", "yeah", "yea", "yep", "uh", "um", "er", "from", "starting", "as of", "effective", "beginning",
                    "with effect", "if", "when", "once", "each time", "every time")


def strip_lead_r10(sentence: str) -> str | None:
    """The sentence without round-10 lead words (family ``lead_strip_r10``), or None when it has none."""
    if not families.on(F_LEAD_R10):
        return None
    s = sentence.strip()
    if not s.lower().startswith(_LEAD_STARTS_R10):
        return None
    m = _LEAD_R10.match(s)
    if not m or m.end() >= len(s) - 3:
        return None
    rest = s[m.end():]
    if s[:1].lower() in "kyue" and not (_first_word(rest) in _VERBS or _DIRECTIVE_START_R10.match(rest)):
        return None  # a filler before small talk ("Yeah, it was fun"): nothing to read again
    return rest[:1].upper() + rest[1:]


#: another's rule narrated ("The gym has a rule that you have to ...", "The whole team keeps saying we
#: should ...") or a fact remarked on ("Turns out the post office shuts at 12:30 ..., who knew.")
_NARRATED_R10 = re.compile(r"\b(?:has|have|had) a (?:rule|policy|thing) (?:that|where)\b|\b(?:keeps?|kept) (?:saying|telling|"
                           r"going on about)\b|^(?:(?:so|and|oh)[,\s]+)*turns out\b|\bwho knew\b|\bapparently\b|"
                           r"^(?:we|i)\b[^,;:]*\b(?:the other day|last (?:week|month|year|night|weekend|summer|winter|spring|autumn))\b", re.I)


def narrated_r10(sentence: str) -> bool:
    return families.on(F_NARRATED_R10) and bool(_NARRATED_R10.search(sentence))


# kinds in forms the earlier rules miss (family ``kind_forms_r10``)
_PROHIBIT_R10 = re.compile(
    r"^it(?:'s| is)\s+(?:strictly|absolutely|expressly|completely|totally)\s+(?:forbidden|prohibited|not allowed|not permitted|"
    r"banned)\s+to\s+\w|"
    r"^you(?:'re| are)\s+(?:not|never)\s+(?:permitted|authori[sz]ed|cleared|supposed)\s+to\s+\w|"
    r"\b(?:do not|don't|never|must not|mustn't|cannot|can't)\s+\w+[^.;!?]*\bunder any circumstances\b|"
    r"\bunder any circumstances\b[^.;!?]*\b(?:do not|don't|never|must not|mustn't|cannot|can't)\b", re.I)
_LIMIT_R10 = re.compile(
    r"\b(?:a maximum of|a minimum of|no more than|at most)\s+(?:\d+|" + _NUMBER_WORD + r")\b|"
    r"\bthe (?:most|least|maximum|minimum) (?:you|we|the bot|agents?) (?:can|may|should|are allowed to) (?:offer|give|spend|charge|"
    r"refund|discount|approve|book|quote|take)\b[^.;!?]*\bis\b|"
    r"(?:^|:\s*)nothing (?:later|earlier|longer|shorter|more|less|bigger|smaller|over|above|below|under|cheaper|pricier) than\b|"
    r"\b(?:don't|do not|never) go (?:beyond|over|above|past|below|under) (?:that|this|it|the \w+)\b|"
    r"\b(?:is|are) (?:max|maximum|capped at|limited to|min|minimum) \d", re.I)
_PERMIT_R10 = re.compile(
    r"^(?:the|our|all|every)\s+(?:[\w'’-]+\s+){0,3}?(?:has|have)\s+"
    r"(?:clearance|permission|the authority|authority|the go-ahead|the green light|my ok|approval)\s+to\s+\w|"
    r"^(?:it(?:'s| is)|that(?:'s| is))\s+(?:ok|okay|fine|alright|all right)\s+(?:with|by)\s+(?:me|us)\s+(?:if|for)\s+you\s+\w|"
    r"\bit(?:'s| is)\s+(?:fine|ok|okay|alright|acceptable)\s+for\s+(?:the\s+)?(?:bot|assistant|agents?|you|staff|support)\s+to\s+\w|"
    r"^(?:ur|your|you're|you are)\s+(?:allowed|free|permitted|welcome)\s+to\s+\w", re.I)
_APPROVAL_R10 = re.compile(
    r"^(?:request|application|refund|waiver|exception|expense|purchase|order)?\s*(?:granted|authori[sz]ed|approved|sanctioned|"
    r"signed off)\s*[:—-]\s*\w|"
    r"\byou(?:'ve| have)?\s+got\s+(?:the|my|our)\s+(?:ok|okay|go-ahead|go ahead|green light|nod|sign-?off)\s+to\s+\w|"
    r"^(?:i'm|i am|we're|we are)\s+(?:ok|okay|fine|happy|good)\s+with\s+(?:the|that|this|a|an)\s+[^.;!?]*?[\d$€£][^.;!?]*"
    r"(?:,|;|—|-)\s*(?:go for it|go ahead|do it|proceed|book it|order it)\b", re.I)
_DOC_R10 = (r"(?:report|quote|invoice|receipt|email|letter|statement|log|gateway|system|portal|contract|certificate|notice|survey|"
            r"inspection|valuation|manifest|bill|record|ticket|screenshot|order|tracker|meter|bank|app)")
_EVIDENCE_R10 = re.compile(
    r"^(?:the\s+)?(?:[\w'’-]+\s+){0,3}?" + _DOC_R10 + r"s?\b(?:\s+(?:[\w-]*\d[\w-]*|dated [\w ]{3,20}?|from [\w ]{3,20}?)|\s*,\s*"
    r"(?:sent|dated|received|signed) [^,]{3,30},)?\s+(?:notes|states|shows|lists|records|returned|reports|confirms|says|gives|has|puts|quotes|mentions|"
    r"specifies|reads|logged|recorded)\s+(?P<fact>[^.;!?]{4,})", re.I)
_DECISION_R10 = re.compile(
    r"^(?:locked in|decided|agreed|settled|final decision|final call|decision|verdict|consensus(?:\s+(?:from|of)\s+[\w'’ -]{2,30}?)?|"
    r"voted and (?:done|agreed|decided)|outcome|it's official|official)\s*:\s*\w|"
    r"^(?:the\s+)?(?:final\s+)?(?:decision|call|verdict|ruling)\s+is\s+(?:that\s+)?\w|"
    r"^(?:(?:right|ok|okay|so|well)[,\s]+)*that(?:'s| is)\s+(?:settled|decided|agreed)(?:\s+then)?\s*[,;:—-]\s*\w|"
    r"^(?:so\s+)?(?:we're|we are|i'm|i am)\s+(?:definitely|officially|now|firmly)\s+(?:going with|going for|opting for|sticking with)\s+\w",
    re.I)
# a standing manner of doing a task (family ``manner_imperative_r10``): "Use a friendly tone.",
# "Address customers by surname.", "Send tracking links by SMS.", "Reply to this customer in Polish.",
# "Remind me to stretch every morning."
_MANNER_R10 = re.compile(
    r"\b(?:in|with)\s+(?:a|an)\s+[\w-]+\s+(?:tone|voice|style|register)\b|\b(?:tone|voice|style|register)\s*[.!]?\s*$|"
    r"\bby\s+(?:sms|text message|text|e-?mail|phone|post|courier|whatsapp|slack|teams|surname|first name|last name|full name|"
    r"their (?:surname|first name|last name|title)|recorded delivery)\b|"
    r"\bin\s+(?:english|french|german|spanish|polish|italian|portuguese|dutch|welsh|irish|arabic|chinese|mandarin|cantonese|"
    r"japanese|korean|hindi|urdu|russian|ukrainian|turkish|greek|swedish|norwegian|danish|finnish|czech|romanian|hungarian|"
    r"british english|american english|plain english|uk english|us english|bullet points|plain text|markdown)\b", re.I)
_AGENT_SHALL = re.compile(r"^(?:the|our|this)\s+(?:bot|assistant|agent|agents|chatbot|helpdesk|support team|desk)\s+"
                          r"(?:shall|is to|are to)\s+(?!be\b)\w", re.I)
_WE_PLAN_TO = re.compile(r"^(?:we|i)\s+(?:plan|intend|aim|mean)\s+to\s+\w+[^.;!?]*\b(?:in|on|by|from|over)\s+(?:the\s+)?(?:" + _MONTH +
                         r"|" + _WEEKDAY + r"|\d|spring|summer|autumn|winter|next\s+(?:week|month|year))", re.I)
_KEEP_AS_UNTIL = re.compile(r"^(?:please\s+)?(?:keep|leave|hold)\s+(?:the|my|our|this|that|all)\s+[\w'’ -]{2,40}?\s+(?:as\s+(?:a\s+)?\w+|"
                            r"in\s+\w+|on\s+\w+)\s+until\s+(?:the|my|our|we|i|they|he|she|it)\b", re.I)
_REMIND_EVERY = re.compile(r"^remind\s+me\s+(?:to|about|of)\s+[^.;!?]{2,60}?\b(?:every|each|daily|weekly|nightly|monthly|on\s+\w+days|"
                           r"weekdays|weekends|at\s+\d)", re.I)


#: the words one of the kind forms needs (a sentence with none skips them all)
_W_KINDS_R10 = frozenset("""forbidden prohibited banned allowed permitted authorised authorized cleared supposed circumstances
maximum minimum most least nothing beyond over above past below under max min capped limited clearance permission authority
go-ahead green ok okay fine alright granted authorised sanctioned signed got nod sign-off happy good notes states shows lists
records returned reports confirms says gives has puts quotes mentions specifies reads logged recorded locked decided agreed
settled decision call verdict consensus voted outcome official ruling definitely officially firmly shall plan intend aim mean
until""".split())


def classify_r10(sentence: str) -> tuple[str, str] | None:
    """The round-10 phrasing classes (families of :mod:`memfold.memory.families`, from ``fresh6``)."""
    s = _strip(sentence.strip())
    if not s or _QUESTION.search(s):
        return None
    low = s.lower()
    words = _words(low)
    if families.on(F_KINDS_R10) and not words.isdisjoint(_W_KINDS_R10) and not narrated_r10(s):
        if _PROHIBIT_R10.search(s):
            return "constraint", "never"
        if _LIMIT_R10.search(s) and (concrete(s) or _names_task_noun(s)) and not _PAST.search(s):
            return "constraint", "imperative_limit"
        if _PERMIT_R10.search(s) and not _PERMIT_SOCIAL.search(s) and (concrete(s) or _names_task_noun(s)):
            return "permission", "permission_form"
        if _APPROVAL_R10.search(s):
            return "approval", "approval_statement"
        e = _EVIDENCE_R10.match(s)
        if e and re.search(r"\d", s) and not _PAST.search(s.split(e.group("fact"))[0] if e.group("fact") in s else ""):
            return "evidence", "evidence"
        if _DECISION_R10.search(s) and len(s.split()) >= 4 and not _PAST.search(s):
            return "policy_state", "decision"
        if _AGENT_SHALL.match(s):
            return "obligation", "modal"
        if _WE_PLAN_TO.match(s) and not _PAST.search(s):
            return "policy_state", "decision"
        if _KEEP_AS_UNTIL.match(s) and (_names_task_noun(s) or concrete(s)):
            return "prerequisite", "until"
    if families.on(F_SETUP_R10):
        if low.startswith("remind") and _REMIND_EVERY.match(s) and not narrated_r10(s):
            return "obligation", "imperative"
        if (_first_word(s) in _VERBS or _first_word(s) in ("address", "greet", "sign")) and _MANNER_R10.search(s) \
                and not s.endswith("!") and not _PAST.search(s) and not narrated_r10(s):
            return "obligation", "imperative"
    return None


#: every pattern above skips a text lacking its required literals (issue 18, point 4; results unchanged)
prefilter.prefilter_module(globals(), group="rules")  # with constraints.py's: the same texts
#: :data:`_COMPLETED` without IGNORECASE, for lowercased ASCII text (round 11, speed only, not
#: prefiltered: the lowercased copy is a new text each time): its pattern holds no capital letter,
#: and on ASCII text a case-insensitive match is a match of the lowercased text at the same places;
#: case-insensitive, every try at every place lowercased the text's characters again (3x the time)
assert _COMPLETED.pattern == _COMPLETED.pattern.lower() and _COMPLETED.flags & re.I
_COMPLETED_LOWER = re.compile(_COMPLETED.pattern).search
#: the withdrawal patterns :func:`withdrawn_terms` tries in turn, and their gates (speed only,
#: :class:`~memfold.window.prefilter.AnyOf`; the first three are also :func:`withdraws_about`'s)
_WITHDRAW_RUN = (_WITHDRAW_ABOUT, _WITHDRAW_LIFT, _WITHDRAW_STATE, _WITHDRAW_FINE, _WITHDRAW_CAN_NOW,
                 _WITHDRAW_NO_LONGER, _WITHDRAW_DROP_NOW)
_WITHDRAW_RUN_GATE = prefilter.AnyOf(_WITHDRAW_RUN)
_WITHDRAW_RUN_GATE3 = prefilter.AnyOf(_WITHDRAW_RUN[:3])
