"""The default extractor: offline, deterministic rules over episode text (issue 5, point 2).

Two kinds of output, each with a strict rule about who may state it:

* **Facts about the user** (semantic records with a ``user.*`` slot key) come only from
  episodes whose speaker is the user, and only from statements in which the user is the
  subject: first person ("my name is Dana", "I live in Lyon") or a narration of the user about
  themselves ("user confirmed their name is Dana"). Assistant, agent and tool text never becomes
  a fact about the user. Questions never become facts ("user asked whether Sam is the account
  holder", "is my name Dana?"), and neither does a statement about someone else ("my friend's
  name is Sam" does not match ``my name is``), nor a negated one ("my name is not Sam").
  Recognised slots:

  ===========================  ===================================  ==========
  key                          example statement                    importance
  ===========================  ===================================  ==========
  ``user.name``                my name is Dana / I'm Dana           0.9
  ``user.account_id``          my account number is ACC-1234        0.7
  ``user.order_id``            my order ORD-3300 ... (the current   0.7
                               order; a newer one supersedes it)
  ``user.contact_preference``  I prefer email / contact me by phone 0.6
  ``user.location``            I live in Lyon / I moved to Oslo     0.6
  ``user.address``             my address is 4 Elm St / I moved to  0.6
                               5 Birch Lane / I live at 5 Birch Ln
  ``user.birthday``, ...       my birthday is May 3 / my delivery   0.6
                               date is June 1 (``user.<what>``)
  ``user.preference.<thing>``  I love tea -> "likes tea";           0.4
                               I hate tea -> "dislikes tea"
  ===========================  ===================================  ==========

  Values change, and the ways of saying so are read as statements of the new value (the
  consolidation pass then supersedes the old record in the slot):

  * "my new address is X", "my address is now X", "my address (has) changed (from Y) to X",
    "please update/change my address to/: X", "ship it to my new address, X" (a bare
    "my address, X" / "my address: X" / "update my address to X" needs X to be a street
    address, so "update my address to the one on file" gives nothing);
  * "I moved to X": X shaped like a street address (a house number then a street word such as
    Street/St/Lane/Road/Way/Court, or a PO Box) is ``user.address``; anything else (a city, a
    region, "5th Avenue") is ``user.location``. One statement fills one of the two, never both;
    trailing time words ("last week", "recently") are no part of the value;
  * "my new name is X", "my name is now X", "I (have) changed my name to X";
  * "my new account number is X", "my account number is now X", "update my account number to X";
  * "switch my contact preference to phone", "my preferred contact method is now email", and a
    standing contact instruction: "please text me instead of emailing", "from now on call me",
    "only email me", "don't call me, text me instead" (the last un-negated one wins). It must
    say it stands ("instead", "from now on", "going forward", "only ...") and name no object,
    so "email me the receipt instead", "call me back" and "only call me if it's urgent" give
    nothing, and "from now on call me Dana" is a name.

  A past value ("my old address was ...", "my previous address is ...") is not a current one,
  and a value that is or holds a secret mask (``[secret]``) is dropped.

* **Procedural rules** come only from policy statements by a tool, an agent, the assistant or
  the system ("after the window a 10% restocking fee applies"), never from the user. A rule is
  written as ``"<scope>: <action>"``, e.g. ``"returns after the 30-day window: apply a 10%
  restocking fee"``, with slot key ``policy.<topic>.<condition>`` so a changed policy supersedes
  the old one.

How "the window" is resolved
----------------------------
A policy statement often says "the window" without saying which one. The extractor resolves it
from context, in this order: a topic named in the statement itself ("the return window"), else
the most recent earlier episode in the batch that mentions a windowed topic ("user asked whether
a return after the window is allowed" gives ``return``). The window's length comes from the
statement when it says so ("the 14-day window", "within 14 days"), else from the extractor's
``windows`` setting, a documented default of ``{"return": 30}`` (a 30-day return window, the
common retail default) that a deployment overrides with its own policy. The topic episode is
cited in the rule's sources next to the statement.

Answers to the agent's questions (slot filling)
-----------------------------------------------
Customers mostly answer what the agent asked: "Could I get your full name, please?" ->
"Tyler Jones". When a user episode directly follows an assistant/agent episode in the batch, and
that episode asks for exactly one known slot, the reply fills it (:func:`answer_facts`):

===========================  ===========================================  ==========================
key                          the agent asks for                           the reply must hold
===========================  ===========================================  ==========================
``user.name``                your (full/first) name                       1-3 name words, nothing else
``user.account_id``          your account number / account #              a number of 5+ digits
``user.date_of_birth``       your date of birth / birthday / D.O.B.       a date (04/04/1990,
                                                                          February 29, 1980)
===========================  ===========================================  ==========================

Nothing is filled when the question also asks for a secret (PIN, password, security question or
answer, maiden name, pet's name: secrets are not memories, issue 9), when it asks for two slots
at once, or when the reply is a question, negated or a refusal ("I forgot", "I can't remember").
One exception: the secret detector found and masked the secret part of the reply (the pass sets
``Episode.masked``; the text holds ``[secret]``), the question asks for one slot with a distinct
shape (an account number or a date of birth, never a name, which a masked answer could stand
next to) and the unmasked rest holds exactly one value of that shape: "account number and PIN?"
-> "85731890, with PIN [secret]" fills ``user.account_id`` = 85731890. The masked part is never
read: it is cut out before any value is looked for.
The question is cited in the fact's sources next to the answer. The user may also state the date
of birth outright ("my D.O.B. is 04/04/1990", "my birthdate is ...").

Every function here is pure: the same episodes give the same proposals, byte for byte.
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from ...window.secrets import ASKS_SECRET, SECRET_MASK

from ...memory import families
from .attributes import FAMILIES as ATTRIBUTE_FAMILIES
from .attributes import (F_ABBREVIATION, F_WHEN_IT_COMES, FAVOURITE_IMPORTANCE, RECENT_SLOT, _ABBREV_DOT, _HELD_DOT,
                         after_leading_clause, attribute_statements, declines_choice, holds, just_talked_about,
                         not_a_liked_thing)
from .base import Episode, Extractor, Proposal

#: default policy windows in days, per topic (overridable: ``RulesExtractor(windows=...)``)
DEFAULT_WINDOWS: dict[str, int] = {"return": 30}
#: topics a policy window can belong to, singular -> plural used in rule text
WINDOW_TOPICS: dict[str, str] = {
    "return": "returns", "refund": "refunds", "exchange": "exchanges", "cancellation": "cancellations",
    "trial": "trials", "warranty": "warranty claims",
}

FACT_IMPORTANCE = {"user.name": 0.9, "user.account_id": 0.7, "user.order_id": 0.7}
DEFAULT_FACT_IMPORTANCE = 0.6
PREFERENCE_IMPORTANCE = 0.4
RULE_IMPORTANCE = 0.8

# -- splitting text -----------------------------------------------------------------------------
_SENTENCE_END = re.compile(r"(?<=[!?;])\s+|(?<=[^\d\s][.])\s+")
_REPORTING = re.compile(
    r"^(?P<verb>said|says|stated|states|confirmed|confirms|mentioned|mentions|noted|notes|told us|"
    r"explained|explains|wrote|writes|added|adds|replied|replies|answered|answers|clarified|clarifies|"
    r"reported|reports|shared|shares|indicated|indicates|responded|responds|"
    r"asked|asks|wondered|wonders|inquired|inquires|enquired|queried|wants to know|wanted to know)"
    r"(?:\s+that)?\s+",
    re.IGNORECASE,
)
_QUESTION_VERBS = {"asked", "asks", "wondered", "wonders", "inquired", "inquires", "enquired", "queried",
                   "wants to know", "wanted to know"}
_QUESTION_START = re.compile(
    r"^(?:is|are|am|was|were|do|does|did|can|could|would|will|should|shall|may|what|who|whom|whose|"
    r"whether|if|how|why|when|where|which)\b",
    re.IGNORECASE,
)
_PREFIX = re.compile(r"^\s*(?:user|customer|assistant|agent|tool|system)\b\s*:?\s*", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|never|no longer)\b|n't\b", re.IGNORECASE)

# third-person narration of the user ("their name is Dana") -> first person ("my name is Dana")
_TO_FIRST_PERSON = [
    (re.compile(r"\btheir\b", re.IGNORECASE), "my"),
    (re.compile(r"\bthey're\b", re.IGNORECASE), "I'm"),
    (re.compile(r"\bthey are\b", re.IGNORECASE), "I am"),
    (re.compile(r"\bthey\b", re.IGNORECASE), "I"),
    (re.compile(r"\bthem\b", re.IGNORECASE), "me"),
]

_NAME = r"(?P<v>[A-Za-z][A-Za-z'\-]*(?:\s+[A-Z][A-Za-z'\-]*){0,2})"
_ID = r"(?P<v>[A-Za-z0-9][A-Za-z0-9\-_/#]{2,})"
_PHRASE = r"(?P<v>[^.;!?]+?)"
_END = r"\s*(?:$|[.;!?]|,\s*(?:and|but)\b|\s+(?:and|but)\s)"
_NOT_NAMES = {"a", "an", "the", "not", "here", "there", "calling", "asking", "looking", "trying", "sorry",
              "happy", "fine", "good", "ok", "okay", "sure", "just", "also", "still", "so", "very", "in", "at",
              "on", "from", "with", "going", "writing", "interested", "unhappy", "glad", "now", "currently"}
#: words that may follow a name in a sentence but are no part of it ("changed my name to Dana Smith now")
_NAME_TAIL = {"now", "today", "please", "thanks", "instead", "officially", "legally"}

# a value shaped like a street address: a house number and a street word, or a PO box
_STREET_WORDS = (r"street|st|avenue|ave|road|rd|lane|ln|drive|dr|court|ct|way|boulevard|blvd|place|pl|terrace|"
                 r"circle|cir|parkway|pkwy|highway|hwy|square|sq|close|crescent|row|trail|alley|grove|walk|mews")
_STREET = (r"(?:(?:apt|apartment|unit|flat|suite)\.?\s*#?\w+,?\s+)?\d+[A-Za-z]?(?:-\d+)?,?\s+"
           r"(?:[A-Za-z0-9.'\-]+\s+){0,4}?(?:" + _STREET_WORDS + r")\b|p\.?\s?o\.?\s?box\s+\d+|post office box\s+\d+")
_STREET_START = re.compile(r"^(?:" + _STREET + r")", re.IGNORECASE)
_ADDRESS_END = r"(?=\s*(?:$|[;!?]|\.\s|\.$|,?\s+and\s+(?:my|i)\b))"
_ADDRESS_OF = r"my (?:new |current |updated |correct )?(?:home |shipping |mailing |billing |delivery |postal |street )?address"
_CHANGED = r"(?:(?:has |have |was )?(?:just |now )?changed from [^.;!?]+? to |is (?:now |currently )?|has (?:now )?changed to |(?:has been |was |just )?changed to |(?:is |has been )?updated to |should (?:now )?be )"
_CONTACT = r"(?P<v>e-?mail|phone calls?|phone|text messages?|texts?|sms|post|mail|live chat|chat)"
_SET = r"(?:change|update|switch|set|correct)"
_NAME_END = r"(?=\s*(?:$|[.,;!?]|\s(?:and|but|now|please)\b))"

# (key, pattern): the first pattern of a key that matches a sentence gives its value. Key
# "user.moved" is resolved per value: a street address is user.address, a place user.location.
_FACT_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("user.name", re.compile(r"\bmy (?:new |legal |real )?(?:full |first )?name " + _CHANGED + _NAME + _NAME_END, re.IGNORECASE)),
    ("user.name", re.compile(r"\b(?:i(?: have|'ve)?(?: just| recently| legally| officially)? )?"
                             r"(?:change|changed|update|updated|correct) my (?:full |first )?name to " + _NAME + _NAME_END,
                             re.IGNORECASE)),
    ("user.name", re.compile(r"\b(?i:call me|i'm|i am) " + r"(?P<v>[A-Z][a-z'\-]+(?:\s+[A-Z][a-z'\-]+){0,2})(?=\s*(?:$|[.,;!?]|\s(?:and|but|here)\b))")),
    ("user.account_id", re.compile(r"\bmy (?:new |current |updated |correct )?account (?:number |no\.? |id |#)?"
                                   r"(?:" + _CHANGED + r"|:\s*)?" + _ID, re.IGNORECASE)),
    ("user.account_id", re.compile(r"\b" + _SET + r" my account (?:number |no\.? |id |#)?(?:to|:)\s*" + _ID, re.IGNORECASE)),
    ("user.order_id", re.compile(r"\bmy (?:current |latest )?order (?:number |no\.? |id |#)?(?:is )?" + _ID, re.IGNORECASE)),
    ("user.contact_preference", re.compile(
        r"\b(?:i )?prefer(?:s)? (?:to be (?:contacted|reached) (?:by|via|over|through) |being contacted by |"
        r"contact (?:by|via) |)" + _CONTACT + r"\b",
        re.IGNORECASE)),
    ("user.contact_preference", re.compile(
        r"\b(?:contact|reach) me (?:by|via|over|through) (?P<v>e-?mail|phone|text|sms|post|mail|chat)\b",
        re.IGNORECASE)),
    ("user.contact_preference", re.compile(
        r"\bmy (?:new |current |updated )?(?:preferred )?(?:contact|communication)(?: preference| method| channel)s? "
        r"(?:" + _CHANGED + r"|:\s*)(?:by |via )?" + _CONTACT + r"\b", re.IGNORECASE)),
    ("user.contact_preference", re.compile(
        r"\b" + _SET + r" my (?:preferred )?(?:contact|communication)(?: preference| method| channel)?s? (?:to|:)\s*(?:be )?"
        r"(?:by |via )?" + _CONTACT + r"\b", re.IGNORECASE)),
    ("user.location", re.compile(
        r"\bi(?: am|'m)? (?:live|living|based|located|reside|residing) in " + _PHRASE + _END, re.IGNORECASE)),
    ("user.address", re.compile(r"\b" + _ADDRESS_OF + r" " + _CHANGED + _PHRASE + _ADDRESS_END, re.IGNORECASE)),
    ("user.address", re.compile(r"\b" + _SET + r" my (?:home |shipping |mailing |billing |delivery |postal )?address "
                                r"(?:to|:)\s*(?:be )?(?P<v>(?:" + _STREET + r")[^;!?]*?)" + _ADDRESS_END, re.IGNORECASE)),
    ("user.address", re.compile(r"\b" + _ADDRESS_OF + r"\s*(?:,|:|-|\bat\b)\s*(?P<v>(?:" + _STREET + r")[^;!?]*?)"
                                + _ADDRESS_END, re.IGNORECASE)),
    ("user.address", re.compile(r"\bi(?: now)? live at (?P<v>(?:" + _STREET + r")[^;!?]*?)" + _ADDRESS_END, re.IGNORECASE)),
    ("user.moved", re.compile(r"\bi(?: have|'ve)?(?: just| recently| now)? moved (?:from [^.;!?]+? )?to " + _PHRASE + _END,
                              re.IGNORECASE)),
    ("user.birthday", re.compile(r"\bi was born (?:on|in) " + _PHRASE + _END, re.IGNORECASE)),
]
#: the old value of a "moved from X to Y" (a move of home, or a switch: "from Google to Kagi"),
#: family ``attr_moved_from_r11`` (round 11, from r4own2's "I've now moved from Google to Kagi")
F_MOVED_FROM = families.family("attr_moved_from_r11", {"r4own2"})
_MOVED_FROM = re.compile(r"\bmoved from (?P<from>[^.;!?]+?) to ", re.IGNORECASE)
_MOVED_TO = re.compile(r"\bmoved to ", re.IGNORECASE)
#: products and services a user "moves" between without moving home (round 13: "I moved from
#: Google to Kagi" with nothing known gave ``user.location = Kagi``): such a move is a switch, never
#: a location. Names that are also places or common words (Orange, Three, Phoenix) are left out.
_SERVICES = frozenset("""
google bing kagi duckduckgo ecosia yahoo startpage brave chrome chromium firefox safari edge opera vivaldi arc
gmail outlook hotmail protonmail proton yandex icloud fastmail hey tutanota thunderbird
whatsapp telegram signal messenger imessage slack discord teams zoom skype webex wechat viber
spotify tidal deezer pandora soundcloud youtube netflix hulu disney+ hbo max paramount+ peacock prime crunchyroll twitch
iphone android ios ipad pixel samsung galaxy windows macos mac linux ubuntu fedora debian arch chromebook
aws gcp azure heroku vercel netlify digitalocean linode cloudflare dropbox onedrive box github gitlab bitbucket
notion obsidian evernote onenote roam logseq bear todoist trello asana jira linear clickup monday airtable
vim neovim emacs vscode vs code sublime atom intellij pycharm xcode cursor
facebook instagram twitter x threads mastodon bluesky reddit tiktok snapchat linkedin tumblr
verizon at&t t-mobile sprint vodafone ee o2 comcast xfinity spectrum
venmo paypal zelle cash app revolut monzo wise chime n26 starling robinhood coinbase
uber lyft doordash grubhub deliveroo instacart airbnb
photoshop gimp figma sketch canva lightroom excel word powerpoint keynote numbers pages sheets docs
bitwarden 1password lastpass dashlane keepass nordvpn expressvpn mullvad
kindle kobo audible goodreads strava peloton fitbit garmin duolingo chatgpt claude gemini copilot
""".split()) | {"vs code", "apple music", "amazon music", "youtube music", "google drive", "google docs", "disney plus",
                "prime video", "amazon prime", "apple tv", "hbo max", "microsoft teams", "google meet", "proton mail",
                "cash app", "visual studio code", "google chrome", "microsoft edge", "apple mail"}


def _is_service(name: str) -> bool:
    """Is ``name`` a product or service ("Kagi", "Apple Music", "iPhone", "1Password"), not a place?
    Known names (:data:`_SERVICES`), and names shaped like products: a capital inside a word
    ("DuckDuckGo", "iPhone") or letters and digits in one word ("1Password", "PS5"; not an ordinal: "5th Avenue")."""
    words = re.sub(r"^(?:the|my|a|an)\s+", "", name.strip(), flags=re.IGNORECASE)
    if words.casefold() in _SERVICES or any(w.casefold() in _SERVICES for w in words.split()[:1]):
        return True
    return bool(re.search(r"[a-z][A-Z]|\b\d+(?!(?:st|nd|rd|th)\b)[A-Za-z]|\b[A-Za-z]+\d", words))
#: "please text me instead of emailing", "from now on call me": an instruction naming a channel,
#: with a word saying it is standing ("instead", "from now on", ...), never "email me the receipt"
_CONTACT_ME = re.compile(r"\b(?P<v>text|sms|message|e-?mail|call|phone|ring) me\b(?=(?P<after>[^.;!?]*))", re.IGNORECASE)
_CONTACT_AFTER = re.compile(
    r"^\s*(?:$|,|instead\b|from now on\b|going forward\b|from here on\b|in (?:the )?future\b|rather than\b|"
    r"at \+?\(?\d|on my (?:phone|mobile|cell|email)\b|by default\b)", re.IGNORECASE)
_STANDING = re.compile(
    r"\b(?:instead|from now on|going forward|from here on|henceforth|in (?:the )?future|rather than|by default)\b"
    r"|\bonly$", re.IGNORECASE)
_CONTACT_NEGATED = re.compile(r"(?:\bnot|\bnever|n't|\bstop|\bno need to|\bno longer)\s+(?:\w+\s+)?$", re.IGNORECASE)
#: trailing time words that are no part of a value ("5 Birch Lane last week" -> "5 Birch Lane")
_TRAILING_TIME = re.compile(
    r"(?:,?\s+(?:last|this|next) (?:week|weekend|month|year)|,?\s+(?:yesterday|today|recently|now)|"
    # "I moved from Paris to Lyon in 2019": a year or a month is no part of the place (round 13)
    r",?\s+(?:back )?in (?:(?:early|late|mid) )?(?:(?:19|20)\d\d|(?:january|february|march|april|may|june|july|august|"
    r"september|october|november|december)(?: (?:19|20)\d\d)?)|"
    r",?\s+(?:a|\d+) (?:few |couple of )?(?:days?|weeks?|months?|years?) ago)+$", re.IGNORECASE)
_DATE_FACT = re.compile(
    r"\bmy (?P<what>birthday|date of birth|anniversary|[a-z\-]+(?: [a-z\-]+)? (?:date|deadline))"
    r" is (?:on )?" + _PHRASE + _END,
    re.IGNORECASE,
)
_LIKE = re.compile(r"\bi (?:really |also |just )?(?P<verb>like|love|enjoy|adore|prefer)s? " + _PHRASE + _END, re.IGNORECASE)
_DISLIKE = re.compile(
    r"\bi (?:really |also |just )?(?P<verb>hate|dislike|detest|can't stand|cannot stand|don't like|do not like)s? "
    + _PHRASE + _END,
    re.IGNORECASE,
)
_CONTACT_WORDS = re.compile(r"^(?:e-?mail|phone|text|sms|post|mail|chat|to be contacted|being contacted|contact)\b", re.I)
_DATE_LIKE = re.compile(
    r"\d|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b",
    re.IGNORECASE,
)

# -- policy statements -------------------------------------------------------------------------
_COND = r"(?P<cond>(?:after|before|within|beyond|past|outside|if|when|once|unless|for|on) [^,]+?)"
_THING = r"(?P<thing>(?:an?|the) [^,]+?)"
_APPLIES = r"(?P<verb>applies|apply|will apply|is applied|will be applied|is charged|will be charged|is due|is required|are required)"
_POLICY_PATTERNS = [
    re.compile(r"^" + _COND + r",?\s+" + _THING + r"\s+" + _APPLIES + r"$", re.IGNORECASE),
    re.compile(r"^" + _THING + r"\s+" + _APPLIES + r"\s+" + _COND + r"$", re.IGNORECASE),
]
_MODAL_PATTERN = re.compile(
    r"^" + _COND + r",?\s+(?P<subj>[^,]+?)\s+(?P<modal>must not|must|cannot|can't|may not|will not be|won't be|are not|is not)\s+(?P<rest>.+)$",
    re.IGNORECASE,
)
_WINDOW = re.compile(r"\bthe (?P<mods>(?:[\w-]+ ){0,2})window\b", re.IGNORECASE)
_DAYS = re.compile(r"(?P<days>\d+)[- ]day", re.IGNORECASE)
_WITHIN_DAYS = re.compile(r"\bwithin (?P<days>\d+) days\b", re.IGNORECASE)


def _slug(text: str) -> str:
    """``"after the 30-day window"`` -> ``"after_the_30_day_window"``."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _sentences(text: str) -> list[str]:
    if families.on(F_ABBREVIATION):  # "Chanel No. 5", "Ursula K. Le Guin", "Fontaines D.C." end no sentence
        held = _ABBREV_DOT.sub(_HELD_DOT, _ABBREV_DOT.sub(_HELD_DOT, text))
        return [s.strip().replace(_HELD_DOT, ".") for s in _SENTENCE_END.split(held) if s and s.strip()]
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def _strip_speaker(text: str) -> tuple[str, bool, bool]:
    """Remove the ``user``/``tool said`` prefix. Returns (body, is_question, is_narration)."""
    match = _PREFIX.match(text)
    if not match:
        return text.strip(), False, False
    body = text[match.end():]
    reporting = _REPORTING.match(body)
    question = False
    if reporting:
        question = reporting.group("verb").lower() in _QUESTION_VERBS
        body = body[reporting.end():]
    return body.strip(), question, True


def _is_question(sentence: str) -> bool:
    if families.on(F_WHEN_IT_COMES) and re.match(r"^\s*when it comes to\b", sentence, re.I):
        return sentence.rstrip().endswith("?")  # "When it comes to pizza, I prefer thin crust."
    return sentence.rstrip().endswith("?") or bool(_QUESTION_START.match(sentence))


class RulesExtractor(Extractor):
    """The default extractor: deterministic rules, no model, no network (see module docstring).

    :param windows: policy windows in days per topic, e.g. ``{"return": 30}`` (the default,
        :data:`DEFAULT_WINDOWS`); used when a policy statement says "the window" without a length.
    """

    id = "rules-v1"

    def __init__(self, windows: Mapping[str, int] | None = None) -> None:
        self.windows = dict(DEFAULT_WINDOWS if windows is None else windows)

    # -- the interface -----------------------------------------------------------------------
    def extract(self, episodes: Sequence[Episode]) -> list[Proposal]:
        """Facts from the user's own statements, rules from tools' and agents' policy statements.

        :param episodes: the batch, ordered by event time then source.
        :returns: proposals in the order their (last) source appears; a fact stated twice with
            the same value is one proposal citing both episodes.
        """
        proposals: list[Proposal] = []
        for index, episode in enumerate(episodes):
            if episode.role == "user":
                proposals.extend(_resolve_in_batch(proposals, self.user_facts(episode)))
                proposals.extend(answer_facts(episodes[index - 1] if index > 0 else None, episode))
            elif episode.role in ("tool", "agent", "assistant", "system"):
                proposals.extend(self.policy_rules(episode, episodes[:index]))
        return _merge(proposals)

    # -- facts -------------------------------------------------------------------------------
    def user_facts(self, episode: Episode) -> list[Proposal]:
        """Facts in which the user is the subject, from one user episode (empty for questions)."""
        body, question, narration = _strip_speaker(episode.text)
        if question:
            return []
        if narration:
            for pattern, replacement in _TO_FIRST_PERSON:
                body = pattern.sub(replacement, body)
        found: list[Proposal] = []
        for sentence in _sentences(body):
            if _is_question(sentence):
                # "When I fly long-haul, my preferred seat is an aisle seat.": a statement after a
                # "when I ..." clause, read for its attribute slots only (family attr_leading_clause_r12)
                if (main := after_leading_clause(sentence)) and not _is_question(main):
                    found.extend(self._attribute_proposals(episode, main))
                continue
            facts = self._facts_in(sentence)
            for key, content, importance in facts:
                moved = _MOVED_FROM.search(sentence) if key == "user.location" and families.on(F_MOVED_FROM) else None
                if moved and (source := _clean(moved.group("from"))):
                    # "I've now moved from Google to Kagi": the slot holding Google (a search
                    # engine), else (nothing holds it) the location, as "moved from Leeds to Bristol";
                    # a move between products or services never falls back to the location (round 13)
                    service = _is_service(source) or _is_service(content)
                    found.append(Proposal("semantic", key, content, (episode.source,), importance, episode.event_time,
                                          {"rule": "moved_from", **({} if service else {"fallback_key": key})},
                                          slot_of=source))
                    continue
                if key == "user.location" and content and _MOVED_TO.search(sentence) and _is_service(content):
                    continue  # "I moved to Kagi": a switch, no location
                found.append(Proposal("semantic", key, content, (episode.source,), importance, episode.event_time,
                                      {"rule": key}))
            if any(key == "user.contact_preference" for key, _, _ in facts):
                continue  # this sentence's channel is no attribute; the turn's other sentences still are
            found.extend(self._attribute_proposals(episode, sentence))
        return found

    @staticmethod
    def _attribute_proposals(episode: Episode, sentence: str) -> list[Proposal]:
        return [Proposal("semantic", st.key, st.value or "", (episode.source,), FAVOURITE_IMPORTANCE, episode.event_time,
                         {"rule": "attribute", "fallback_key": st.fallback_key}, retire=st.op == "retire",
                         slot_of=st.slot_of) for st in attribute_statements(sentence)]

    def _facts_in(self, sentence: str) -> list[tuple[str, str, float]]:
        out: list[tuple[str, str, float]] = []
        taken: set[str] = set()
        for key, pattern in _FACT_PATTERNS:
            if key in taken:
                continue
            match = pattern.search(sentence)
            if not match or _negated(sentence, match):
                continue
            value = _clean(match.group("v"))
            if SECRET_MASK in value:  # a masked span is no value (issue 9)
                continue
            if key in ("user.moved", "user.address", "user.location"):
                value = _clean(_TRAILING_TIME.sub("", re.sub(r"^(?:now|currently)\s+", "", value, flags=re.I)))
                if key == "user.moved":
                    key = "user.address" if _STREET_START.match(value) else "user.location"
                    if key in taken:
                        continue
            if key == "user.name":
                first = value.split()[0]
                if first.lower() in _NOT_NAMES or value.endswith("'s"):
                    continue
                words = value.split()
                while len(words) > 1 and words[-1].lower() in _NAME_TAIL:
                    words.pop()
                value = " ".join(words)
                value = " ".join(w[:1].upper() + w[1:] for w in value.split())
            elif key in ("user.account_id", "user.order_id"):
                if not re.search(r"\d", value):
                    continue
                value = value.upper()
            elif key == "user.contact_preference":
                value = _contact_value(value)
            if not value:
                continue
            taken.add(key)
            out.append((key, value, FACT_IMPORTANCE.get(key, DEFAULT_FACT_IMPORTANCE)))
        if "user.contact_preference" not in taken:
            channel = _contact_instruction(sentence)
            if channel:
                taken.add("user.contact_preference")
                out.append(("user.contact_preference", channel, DEFAULT_FACT_IMPORTANCE))
        date = _DATE_FACT.search(sentence)
        if date and not _negated(sentence, date) and _DATE_LIKE.search(date.group("v")):
            key = "user." + _slug(date.group("what"))
            if key not in taken:
                out.append((key, _clean(date.group("v")), DEFAULT_FACT_IMPORTANCE))
        for pattern, verdict in ((_DISLIKE, "dislikes"), (_LIKE, "likes")):
            if attribute_statements(sentence):  # "I prefer window seats" is user.preferred.seat
                break
            match = pattern.search(sentence)
            if not match:
                continue
            thing = _clean(match.group("v"))
            if verdict == "likes" and (_negated(sentence, match) or thing.lower().startswith(("to ", "it", "that"))
                                       or _CONTACT_WORDS.match(thing) or not_a_liked_thing(thing)
                                       or declines_choice(sentence, thing)):
                continue
            if thing and len(thing.split()) <= 5:
                out.append((f"user.preference.{_slug(thing)}", f"{verdict} {thing}", PREFERENCE_IMPORTANCE))
            break
        return out

    # -- rules -------------------------------------------------------------------------------
    def policy_rules(self, episode: Episode, earlier: Sequence[Episode]) -> list[Proposal]:
        """Procedural rules from one tool/agent/assistant/system episode's policy statements.

        :param earlier: the batch's episodes before this one, used to resolve "the window".
        """
        body, question, _narration = _strip_speaker(episode.text)
        if question:
            return []
        rules: list[Proposal] = []
        for sentence in _sentences(body):
            if sentence.rstrip().endswith("?"):  # "if ..."/"when ..." open conditions, not questions
                continue
            sentence = sentence.rstrip(".!; ")
            parsed = self._parse_policy(sentence)
            if parsed is None:
                continue
            cond, action = parsed
            cond = cond[:1].lower() + cond[1:]  # "After the window" starts a sentence, not a rule
            scope, topic, topic_source = self._scope(cond, sentence, earlier)
            sources = tuple(s for s in (topic_source, episode.source) if s)
            key = f"policy.{_slug(WINDOW_TOPICS.get(topic, topic) if topic else 'general')}.{_slug(cond_key(scope, topic))}"
            rules.append(Proposal("procedural", key, f"{scope}: {action}", sources, RULE_IMPORTANCE,
                                  episode.event_time, {"rule": "policy"}))
        return rules

    @staticmethod
    def _parse_policy(sentence: str) -> tuple[str, str] | None:
        """``(condition, action)`` for a policy sentence, or None."""
        for pattern in _POLICY_PATTERNS:
            match = pattern.match(sentence)
            if match:
                verb = match.group("verb").lower()
                thing = match.group("thing").strip()
                action = ("require " if "required" in verb else "charge " if verb == "is due" else "apply ") + thing
                return match.group("cond").strip(), action
        match = _MODAL_PATTERN.match(sentence)
        if match:
            return match.group("cond").strip(), f"{match.group('subj')} {match.group('modal')} {match.group('rest')}".strip()
        return None

    def _scope(self, cond: str, sentence: str, earlier: Sequence[Episode]) -> tuple[str, str | None, str | None]:
        """Resolve "the window" in ``cond``: returns (scope text, topic, source of the topic)."""
        window = _WINDOW.search(cond)
        if window is None:
            return cond, None, None
        mods = window.group("mods")
        topic = _topic_in(mods) or _topic_in(sentence.replace(window.group(0), ""))
        topic_source = None
        if topic is None:
            for previous in reversed(earlier):
                topic = _topic_in(previous.text)
                if topic is not None:
                    topic_source = previous.source
                    break
        stated = _DAYS.search(mods)
        days = stated.group("days") if stated else None
        if days is None:
            within = _WITHIN_DAYS.search(sentence)
            days = within.group("days") if within else None
        if days is None and topic is not None and topic in self.windows:
            days = str(int(self.windows[topic]))
        resolved = "the " + (f"{days}-day " if days else "") + "window"
        scoped = cond[: window.start()] + resolved + cond[window.end():]
        if topic is not None:
            scoped = f"{WINDOW_TOPICS[topic]} {scoped}"
        return scoped, topic, topic_source


def cond_key(scope: str, topic: str | None) -> str:
    """The condition part of a rule's slot key: the scope without its topic word."""
    if topic and scope.startswith(WINDOW_TOPICS[topic] + " "):
        return scope[len(WINDOW_TOPICS[topic]) + 1:]
    return scope


def _topic_in(text: str) -> str | None:
    """The first windowed topic (``return``, ``refund``, ...) mentioned in ``text``, singular."""
    best: tuple[int, str] | None = None
    for topic in WINDOW_TOPICS:
        match = re.search(rf"\b{topic}(?:s|ed|ing)?\b", text, re.IGNORECASE)
        if match and (best is None or match.start() < best[0]):
            best = (match.start(), topic)
    return best[1] if best else None


def _negated(sentence: str, match: re.Match[str]) -> bool:
    """True when the matched statement is negated ("my name is not Sam", "I don't live in Oslo")."""
    span = sentence[max(0, match.start() - 12): match.end()]
    return bool(_NEGATION.search(span))


def _clean(value: str) -> str:
    return re.sub(r"\s+", " ", value).strip(" ,.;:!?\"'")


def _contact_instruction(sentence: str) -> str | None:
    """The channel of a standing contact instruction ("please text me instead of emailing",
    "from now on call me", "only email me"), or None. The last un-negated instruction wins
    ("don't call me, text me instead" -> text); one without a word saying it stands
    ("email me the receipt", "call me back") and "call me <Name>" give None."""
    found = None
    for match in _CONTACT_ME.finditer(sentence):
        before, after = sentence[: match.start()], match.group("after")
        if _CONTACT_NEGATED.search(before) or not _CONTACT_AFTER.match(after):
            continue
        if re.match(r"^\s+[A-Z]", after):  # "call me Dana" is a name
            continue
        if not (_STANDING.search(before.rstrip(" ,")) or _STANDING.search(after)):
            continue
        found = _contact_value(match.group("v"))
    return found


def _contact_value(value: str) -> str:
    v = value.lower()
    if v in ("call", "ring"):
        return "phone"
    if v == "message":
        return "text"
    if v.startswith(("email", "e-mail")):
        return "email"
    if v.startswith("phone"):
        return "phone"
    if v.startswith(("text", "sms")):
        return "text"
    if v in ("post", "mail"):
        return "post"
    return "chat" if "chat" in v else v


def _merge(proposals: list[Proposal]) -> list[Proposal]:
    """Merge proposals with the same (type, key, content), citing every source, keeping order
    (a retirement or a slot still to resolve is never merged with a write)."""
    merged: dict[tuple[str, str | None, str, bool, str | None], Proposal] = {}
    for p in proposals:
        slot = (p.type, p.key, p.content, p.retire, p.slot_of)
        if slot in merged:
            old = merged.pop(slot)
            sources = tuple(dict.fromkeys(old.sources + p.sources))
            times = [t for t in (old.event_time, p.event_time) if t is not None]
            p = Proposal(p.type, p.key, p.content, sources, max(old.importance, p.importance),
                         max(times) if times else None, p.metadata, p.retire, p.slot_of)
        merged[slot] = p
    return list(merged.values())


def _resolve_in_batch(earlier: list[Proposal], new: list[Proposal]) -> list[Proposal]:
    """Give a proposal naming "the slot holding X" the key of the newest earlier fact of this
    batch whose value is X; the rest the consolidation pass resolves against the store."""
    out = []
    for p in new:
        if p.slot_of == RECENT_SLOT:  # "I switched to Obsidian": the slot just talked about, when the batch says
            said = [(q.key, q.sources) for q in earlier + out if q.type == "semantic" and q.key and not q.retire]
            if any(key.startswith(ATTRIBUTE_FAMILIES) for key, _ in said):
                key = just_talked_about(said, p.sources)
                if key:
                    out.append(Proposal(p.type, key, p.content, p.sources, p.importance, p.event_time, p.metadata,
                                        p.retire, None))
                continue  # the batch's own last attribute decides; else the pass asks the store
        if p.slot_of is not None:
            for q in reversed(earlier + out):
                if q.type == "semantic" and q.key and not q.retire and holds(q.content, p.slot_of):
                    p = Proposal(p.type, q.key, p.content, p.sources, p.importance, p.event_time, p.metadata,
                                 p.retire, None)
                    break
        out.append(p)
    return out


# -- answers to the agent's questions (slot filling; see the module docstring) ----------------
_ASKS_SLOT = {
    "user.name": re.compile(r"\byour (?:full |first |first and last )?name\b", re.IGNORECASE),
    "user.account_id": re.compile(r"\b(?:your )?account (?:number|no\.?|#|id)\b|\baccount #", re.IGNORECASE),
    "user.date_of_birth": re.compile(r"\b(?:date of birth|birth ?date|birthday|d\.?o\.?b\b\.?)", re.IGNORECASE),
}
#: a question that asks for a secret fills no slot: the library's secret-question words
#: (:data:`memfold.window.secrets.ASKS_SECRET`, one list for detection and extraction), plus any
#: mention of a pet, to stay on the safe side when filling slots
_ANY_PET = re.compile(r"\bpets?\b", re.IGNORECASE)


def asks_secret(question: str) -> bool:
    """True when the agent's ``question`` asks for (or about) a secret."""
    return bool(ASKS_SECRET.search(question) or _ANY_PET.search(question))

_REFUSAL = re.compile(
    r"\b(?:not|never|no|don't|dont|do not|can't|cant|cannot|forgot|forget|remember|recall|unsure|not sure|"
    r"sorry|why|rather not)\b", re.IGNORECASE)
_NAME_LEAD = re.compile(
    r"^(?:(?:yes|yeah|sure|ok|okay)[,!.]?\s+)?(?:it'?s\s+|it is\s+|this is\s+|i am\s+|i'm\s+|"
    r"my (?:full )?name is\s+|name is\s+|name's\s+)?", re.IGNORECASE)
_NAME_ONLY = re.compile(r"^(?P<v>[A-Za-z][A-Za-z'\-]+(?:\s+[A-Za-z][A-Za-z'\-]+){0,2})\s*[.!]?$")
_ACCOUNT_VALUE = re.compile(r"(?<![\w/-])(?P<v>(?:[A-Z]{2,5}-)?\d{5,})(?![\w/])")
_PIN_SPAN = re.compile(r"\b(?:pin|password|passcode)\b\D{0,20}\d+", re.IGNORECASE)
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DATE_VALUE = re.compile(
    r"(?P<v>\b\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}\b|\b" + _MONTH + r"\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}\b|"
    r"\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r",?\s+\d{4}\b)", re.IGNORECASE)
_DOB_STATEMENT = re.compile(r"\bmy (?:birth ?date|d\.?o\.?b\.?|dob)\s+is\s+", re.IGNORECASE)


#: slots a reply to a question that also asks for a secret may fill once the secret is masked
_MASKED_FILLABLE = ("user.account_id", "user.date_of_birth")


def masked_answer_value(question: str, reply: str) -> tuple[str, str] | None:
    """``(slot, value)`` from a masked reply to a question asking for a secret and one slot
    (module docstring), or None. ``reply`` must hold :data:`SECRET_MASK`; every masked span is
    cut out first, and the rest must hold exactly one value of the slot's shape."""
    if SECRET_MASK not in reply or not asks_secret(question):
        return None
    asked = [key for key, pattern in _ASKS_SLOT.items() if pattern.search(question)]
    if len(asked) != 1 or asked[0] not in _MASKED_FILLABLE:
        return None
    rest = " ; ".join(part for part in reply.split(SECRET_MASK))
    if asked[0] == "user.account_id":
        found = _ACCOUNT_VALUE.findall(_PIN_SPAN.sub(" ", rest))
    else:
        found = [m.group("v") for m in _DATE_VALUE.finditer(rest)]
    if len(found) != 1:
        return None
    value = answer_value(asked[0], rest)
    return (asked[0], value) if value else None


def asked_slots(question: str) -> list[str]:
    """The ``user.*`` slots an agent's turn asks for (empty if it asks for a secret too)."""
    if asks_secret(question):
        return []
    return [key for key, pattern in _ASKS_SLOT.items() if pattern.search(question)]


def answer_value(key: str, reply: str) -> str | None:
    """The value of slot ``key`` in a user's reply to a question asking for it, or None.

    A name must be the whole reply (1-3 words after an optional "it's"/"my name is"); an account
    number is the first 5+ digit number that is not a PIN; a date of birth is the first date.
    Questions, refusals and negations give None.
    """
    sentences = [x for x in _sentences(reply.strip()) if not _is_question(x)]
    if not sentences or _is_question(reply.strip()):
        return None
    text = " ".join(sentences)
    if key == "user.name":
        first = re.split(r"(?<=[a-z])[.!;]\s+|\n", text)[0].strip()
        if _REFUSAL.search(first):
            return None
        first = _NAME_LEAD.sub("", first, count=1)
        match = _NAME_ONLY.match(first)
        if not match:
            return None
        words = match.group("v").split()
        if words[0].lower() in _NOT_NAMES or any(sum(c.isalpha() for c in w) < 2 for w in words):
            return None
        return " ".join(w[:1].upper() + w[1:].lower() if w.islower() or w.isupper() else w for w in words)
    if _REFUSAL.search(text) and not re.search(r"\d", text):
        return None
    if key == "user.account_id":
        match = _ACCOUNT_VALUE.search(_PIN_SPAN.sub(" ", text))
        return match.group("v").upper() if match else None
    if key == "user.date_of_birth":
        match = _DATE_VALUE.search(text)
        return _clean(match.group("v")) if match else None
    return None


def answer_facts(previous: Episode | None, episode: Episode) -> list[Proposal]:
    """Facts from a user's reply to the agent's question just before it (slot filling), plus a
    stated date of birth ("my D.O.B. is 04/04/1990"). Cites both episodes for an answer.

    :param previous: the episode just before ``episode`` in the batch (None for the first).
    :param episode: a user episode.
    """
    out: list[Proposal] = []
    if episode.role != "user":
        return out
    body, question, _ = _strip_speaker(episode.text)
    if question:
        return out
    stated = _DOB_STATEMENT.search(body)
    if stated:
        date = _DATE_VALUE.match(body[stated.end():].strip())
        if date:
            out.append(Proposal("semantic", "user.date_of_birth", _clean(date.group("v")), (episode.source,),
                                DEFAULT_FACT_IMPORTANCE, episode.event_time, {"rule": "user.date_of_birth"}))
    if previous is not None and previous.role in ("assistant", "agent"):
        asked = _strip_speaker(previous.text)[0]
        slots = asked_slots(asked)
        masked = masked_answer_value(asked, body) if episode.masked and not slots else None
        if masked is not None and not any(p.key == masked[0] for p in out):
            out.append(Proposal("semantic", masked[0], masked[1], (previous.source, episode.source),
                                FACT_IMPORTANCE.get(masked[0], DEFAULT_FACT_IMPORTANCE), episode.event_time,
                                {"rule": "answer", "masked": True}))
        if len(slots) == 1 and not any(p.key == slots[0] for p in out):
            value = answer_value(slots[0], body)
            if value:
                out.append(Proposal("semantic", slots[0], value, (previous.source, episode.source),
                                    FACT_IMPORTANCE.get(slots[0], DEFAULT_FACT_IMPORTANCE), episode.event_time,
                                    {"rule": "answer"}))
    return out
