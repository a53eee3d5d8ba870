"""Secrets at append: PINs, passwords and security answers are found where they are written.

Secrets are not memories (issue 9, point 2): a turn that holds one is archived with the label
``secret`` (:data:`memfold.window.labels.SECRET_LABEL`), so it stays verbatim in the archive for
readers holding that label, never reaches a summarizer (no card text repeats it), never becomes a
protected record, and reaches the consolidation pass only with each secret span masked as
:data:`SECRET_MASK` (no fact holds a secret). :meth:`memfold.window.conversation.Conversation.append`
runs the facade's detector on every turn (``MemFold(..., secrets="detect")``, the default).

Detection reads only the conversation itself (the turn and the one before it), never gold data,
and errs on the side of secrecy. It returns *spans* (character offsets into the turn's content):

1. a turn by anyone (user, assistant or tool) that names a secret -- PIN, pincode, pin code,
   passcode, password, passphrase, security / verification / one-time / access code, OTP, CVV,
   CVC, personal identification number -- next to its value. When the value follows the keyword
   directly ("PIN 5380", "PIN4471", "my pin # is 0314", "PIN is either 1596 or 3941", "the PIN is
   44 71", "pin is 4-4-7-1", "my PIN is four four seven one") only the value is the secret (and
   the numbers listed after it with "or" / "and" / ","), so "85731890, with PIN 5380" masks only
   ``5380``; after "password is" / "password:" (passcode, passphrase likewise) the next token is
   the value ("Temporary password: xK9mq7Lz", "Your new password is BlueSky!"), unless it is an
   ordinary word ("your password is wrong"); a passphrase runs to the end of its sentence.
   Otherwise every number within 60 characters on either side is ("It says 7402 and 0314. Those
   might be my PIN numbers");
2. a whole user turn that mentions a security answer, a password, a maiden name or a pet's name
   ("my mother's maiden name is Sanders": where the answer sits is not known, so all of it), a
   usual security question's topic ("my first car was a Civic", "the city I was born in",
   "my childhood best friend", "my first school", "my dad's middle name", "née Sanders") or a
   pet with its name in passing ("my dog Rex", "our late cat, Whiskers", "a puppy called Pixie");
   a standing rule that only names a kind of secret holds none ("Never share your password with
   anyone.", "Don't ask me for my PIN.": every sentence an instruction, no digit, no value after
   the word; round 15), while "never share it, my password is X" stays secret;
3. a whole user turn that answers an assistant turn asking for (or about) a PIN, password, code,
   security question or answer, maiden name, a pet's name or authentication ("What is your
   PIN?" -> "1596"; "enter your 4-digit code" -> "4471"). The question stays pending for up to
   :data:`PENDING_USER_TURNS` user turns: a reply that is a question back ("Why do you need
   that?"), only stalls ("one sec", "hold on, let me check") or is a standing instruction
   ("Never call me after 6pm.": it starts with never / don't / always / from now on ...) is not
   the answer, uses up one turn and stays readable, unless it carries a number no keyword
   covers ("Hold on, it's 3100"); the first answer-like reply is masked whole and closes it. An
   assistant turn that asks again reopens it; one that only waits ("take your time") keeps it;
   any other closes it. Chit-chat about pets is no security question: a pet counts only next to
   a name. This rule needs the turns before (``earlier=``, :attr:`SecretDetector.context_turns`).

A password's value is read after "password is", "password's" and "password for <up to four
words> is" ("my password for the bank app is BlueSky99!"); a PIN-shaped number offered as a
guess is secret in any user turn ("I think it's 7402", "it might be 7402", "probably 7402",
"9431, does that sound right?"). A security answer is remembered for
:attr:`SecretDetector.context_turns` turns: the same name said again later is masked ("Buddy"
as the pet's name, then "I miss Buddy!"), unless it was said before the answer (the speakers'
names, the customer's own surname).

Numbers are 3-8 digits and not part of a date (``04/04/1990``) or a longer number.
"""

from __future__ import annotations

import re
from functools import lru_cache
from collections.abc import Mapping
from typing import Any, Iterable, Protocol, Sequence

from ..memory.errors import InvalidInput
from . import prefilter
from .labels import SECRET_LABEL

#: what replaces each secret span in the text the consolidation pass reads
SECRET_MASK = "[secret]"
#: the turn metadata key holding the secret spans found at append: ``[[start, end], ...]``
#: (character offsets into ``content``, end exclusive); a turn labelled ``secret`` without it is
#: secret as a whole
SECRET_SPANS_KEY = "secret_spans"

_NUMBER = re.compile(r"(?<![\d/.-])\d{3,8}(?![\d/])")  # not part of a date like 04/04/1990
#: "password" as the name of a kind of thing, not of a secret: "my password manager", "a password
#: generator", "the password policy" (round 13: "I switched my password manager to Bitwarden." was
#: a whole-turn secret); "my password manager's password is X" still names one, with its second word
_NOT_A_SECRET_AFTER_PASSWORD = (r"(?![\s-]+(?:managers?|vaults?|generators?|polic(?:y|ies)|requirements?|"
                                r"strength|complexity|safes?|keepers?)(?![a-z]))")
#: the names of a secret code or word; "PIN4471" and "pincode" count (no word boundary needed
#: after "pin" before a digit)
_KEYWORD = re.compile(
    r"(?<![a-z])(?:personal identification numbers?|pin ?codes?|pins?(?![a-z])|pass ?codes?|passwords?" + _NOT_A_SECRET_AFTER_PASSWORD + r"|"
    r"passphrases?|passwd|security codes?|verification codes?|one[- ]time (?:pass)?codes?|otps?(?![a-z])|"
    r"cvv2?(?![a-z])|cvc2?(?![a-z])|access codes?|" + r"(?:" + "|".join(
        ("clearance", "authori[sz]ation", "auth", "login", "log-in", "unlock", "door", "alarm", "entry",
         "gate", "safe", "lock", "override", "recovery", "backup", "2fa", "mfa", "sms", "secret")) + r") codes?)(?![a-z])",
    re.IGNORECASE)
#: keywords whose value may be a word, not only digits ("password is BlueSky!")
_WORDY = re.compile(r"pass(?:word|phrase|wd)|pass ?code", re.IGNORECASE)
#: what may stand between a keyword and its value: "PIN 5380", "pin # is 0314", "PIN: either 1596"
_LEAD = re.compile(
    r"(?:\s*(?:numbers?|no\.?|#|code))?(?:\s+(?:for|to|on|of|at)(?:\s+[\w'.-]+){1,4}?(?=\s*(?:is|was|:|=)\s))?"
    r"((?:\s*(?:is|was|will be|would be|should be|might be|could be|"
    r"may be|it's|it is|'s|either|maybe|probably|now|:|=|-))*)\s*[\"'\u201c\u2018(]?", re.IGNORECASE)
_DIGIT_WORD = r"(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)"
#: digits written with spaces or dashes ("44 71", "4-4-7-1"), read only right after a keyword
_SPACED_DIGITS = re.compile(r"\d(?:[ \-]?\d){2,7}(?![\d/])")
#: digits spelled out ("four four seven one"), read only right after a keyword
_SPELLED_DIGITS = re.compile(rf"{_DIGIT_WORD}(?:[\s,\-]+{_DIGIT_WORD}){{2,7}}\b", re.IGNORECASE)
#: a password-like value: one token ("BlueSky!", "xK9mq7Lz"), read only after "is" / ":" / "="
_TOKEN = re.compile(r"[^\s\"'\u201c\u201d\u2018\u2019]+")
#: words that follow "password is" without being a password ("my password is wrong")
_NOT_A_VALUE = frozenset("""
a an the my your his her their our its this that it not too very so also just still now then
wrong incorrect invalid expired correct right required needed missing reset changed same different
weak strong long short easy hard simple secure safe saved stored hidden case sensitive being going
set there here what which something nothing somewhere written on in at for to of about either maybe
probably new old locked blocked forgotten unknown empty
""".split())
#: one more number listed after a value: "1596 or 3941", "0314, 9431"
_ALTERNATIVE = re.compile(r"(?:\s*(?:,|/|\bor\b|\band\b|\bmaybe\b|\bperhaps\b))+\s*(\d{3,8})(?![\d/])",
                          re.IGNORECASE)
_REACH = 60  # characters between a keyword and a number that still go together
_USER_SECRET_WORDS = re.compile(
    r"\b(?:security (?:answer|question)s?|password\b" + _NOT_A_SECRET_AFTER_PASSWORD + r"|passcode|maiden|pet'?s? name|"
    r"name of (?:my|the) (?:\w+ )?pet|mother'?s (?:maiden )?name|(?:first|childhood|old) pet)\b", re.IGNORECASE)
#: the usual security questions' topics in a user turn (issue 15, point 8): where the answer sits
#: is not known, so the whole turn ("my first car was a Civic", "I was born in Toledo, the city
#: you asked about"); "née Sanders" is a maiden name said in passing
_SECURITY_TOPIC = re.compile(
    r"\b(?:first car|(?:city|town|place) (?:of my birth|of birth|(?:where )?(?:i|you) (?:was|were) born(?: in)?)|"
    r"(?:my|your) birthplace|(?:my|your) first (?:school|teacher|job|boss|street|concert|kiss)|"
    r"(?:my|your) (?:elementary|primary|grade) school|(?:my|your) favou?rite teacher|"
    r"(?:my|your) childhood (?:best )?(?:friend|nickname|home|street|hero|phone number)|"
    r"best friend (?:growing up|as a (?:kid|child))|street (?:i|you) grew up on|"
    r"(?:father|dad|mother|mom|mum)'?s? (?:middle|first|family) name|n[\u00e9e]e [A-Z][a-z]+)\b", re.IGNORECASE)
#: a pet and its name in passing, the name right after the animal ("my dog Rex", "our late cat,
#: Whiskers"): case matters for the name
_ANIMAL_THEN_NAME = re.compile(
    r"\b(?:[Mm]y|[Oo]ur|[Hh]is|[Hh]er|[Tt]heir) (?:(?:old|little|late|first|childhood|beloved) )?"
    r"(?:pets?|dogs?|cats?|parrots?|fish|birds?|hamsters?|rabbits?|bunny|puppy|kitten|horse|pony|turtle|"
    r"goldfish)(?:,| was| is)? (?!I\b)[A-Z][a-z]+")
#: a pet next to its name, said in passing ("Like my pet Poppy's name?"): case matters for the name
_PET_NAMED = re.compile(r"\b[Pp]ets?,? (?:named |called )?[A-Z][a-z]+")
#: an animal and its name in one breath ("my dog was named Buddy", "my pet his name was Nemo")
_ANIMAL_NAMED = re.compile(r"\b(?:pets?|dogs?|cats?|parrots?|fish|birds?|hamsters?|rabbits?|bunny|bunnies|puppy|"
                           r"puppies|kittens?|horses?|pony|ponies|turtles?|goldfish)\b[^.!?]{0,25}?"
                           r"\b(?:named|called|name (?:is|was)|name's)\b", re.IGNORECASE)
#: a number offered as a guess: "9431, does that sound right?", "is it 7402?"
_GUESSED_NUMBER = re.compile(r"(?<![\d/.-])\d{4,6}(?![\d/])(?=[^.!?]{0,30}\b(?:does that sound right|is that right|"
                             r"is that correct|right\?|correct\?))|(?:is it|was it|maybe|try|i think it(?:'s| is| was)|"
                             r"it (?:might|could|may|should) be|i believe it(?:'s| is| was)|probably)\s+(\d{4,6})(?![\d/])",
                             re.IGNORECASE)
#: an assistant turn checking who the user is: a bare PIN-shaped reply to it is the PIN given
#: unasked ("Can you tell me your account number?" -> "5380": an account number is longer)
_IDENTITY_ASK = re.compile(r"\b(?:account (?:number|no)|verify|verification|identity|identify|date of birth|"
                           r"d\.?o\.?b|full name|who (?:am i|i am) speaking)", re.IGNORECASE)
#: a reply that is nothing but a PIN-shaped number ("5380", "it's 5380.")
_BARE_PIN = re.compile(r"\s*(?:(?:it'?s|it is|sure|ok(?:ay)?|yes)[\s,]+)?(\d{4,6})\s*[.!]?\s*", re.IGNORECASE)
#: a short reply that only agrees, declines or thanks: never a security answer by itself
_PLAIN_REPLY = re.compile(r"(?:yes|yeah|yep|no|nope|ok(?:ay)?|sure|thanks?(?: you)?|thank you|great|fine|"
                          r"hi|hello|hey|bye|goodbye|cool|perfect|correct|right|definitely|please)[\s,.!]*",
                          re.IGNORECASE)
#: a 4-6 digit number said on its own: the shape of a PIN or a guess at one (not a date, not an
#: 8-digit account number)
_PIN_SHAPED = re.compile(r"(?<![\d/.-])\d{4,6}(?![\d/])")
#: words that open a question back ("why do you need that?")
_QUESTION_WORD = re.compile(r"(?:why|what|how|who|whom|when|where|which|can|could|do|does|did|is|are|will|would|"
                            r"should|shall|may|must|have|has)\b", re.IGNORECASE)
#: words in an assistant's turn that ask for (or about) a secret: the user's reply is secret. A
#: pet counts only next to a name ("the name of the pet you had"): chit-chat about pets is not
#: a security question.
ASKS_SECRET = re.compile(
    r"(?<![a-z])(?:pin|pins|pin ?codes?|password" + _NOT_A_SECRET_AFTER_PASSWORD + r"|passcode|passphrase|"
    r"personal identification number|"
    r"security (?:question|answer|code)s?|verification code|one[- ]time (?:pass)?code|otp|cvv|cvc|"
    r"access code|(?:clearance|authori[sz]ation|auth|login|unlock|door|alarm|entry|gate|safe|lock|override|"
    r"recovery|backup|2fa|mfa|sms|secret) codes?|code type|\d[- ]digit (?:code|number|pin)|enter (?:your|the) (?:[\w-]+ ){0,3}code|maiden|"
    r"pet(?:'?s)? name|name of (?:the|your|my) (?:\w+ )?pet|authenticat\w*)(?![a-z])",
    re.IGNORECASE)
#: how many user turns a secret question stays open while the user stalls, asks back or gives
#: a standing instruction (rule 3)
PENDING_USER_TURNS = 2
#: an assistant turn that waits for the answer ("take your time") keeps a secret question open
_WAITS = re.compile(r"\b(?:take your time|no (?:rush|problem|worries)|whenever you(?:'re| are) ready|"
                    r"sure,? go ahead|i'?ll wait)\b", re.IGNORECASE)
#: a reply that only stalls: "one sec", "hold on", "let me check"
_STALL = re.compile(
    r"(?:(?:ok(?:ay)?|sure|yes|yeah|um+|uh+|hmm+|oh|ah|wait|sorry|right)[\s,.!]*)*"
    r"(?:(?:just )?(?:one|a|1) (?:sec(?:ond)?|moment|minute|min)|hold on|hang on|wait(?: a (?:sec|moment|minute))?|"
    r"let me (?:check|see|look|think|find (?:it|that)|get (?:it|that))|give me a (?:sec(?:ond)?|moment|minute)|"
    r"(?:i'?m |i am )?(?:checking|looking|getting it)|bear with me)"
    r"(?:[\s,.!]*(?:please|thanks|i(?:'ll| will) (?:check|look|find it|get it)|let me (?:check|see|look)|"
    r"(?:one|a) (?:sec(?:ond)?|moment)|hold on))*[\s,.!\u2026]*", re.IGNORECASE)
#: the opening of a standing instruction: "never ...", "don't ...", "from now on ..."
_INSTRUCTION = re.compile(
    r"(?:please,? )?(?:never(?! mind)|don'?t|do not|always|stop|from now on|going forward|in (?:the )?future|"
    r"make sure|remember (?:to|that)|no more)\b", re.IGNORECASE)
#: a question that may well be the answer itself: "Is it Fluffy?"
_GUESS = re.compile(r"(?:is it|was it|could it be|maybe|perhaps|i think)\b", re.IGNORECASE)

#: a short password keyword and its value ("pw: hunter2", "my pwd is X"): only after is / : / =
_SHORT_PASSWORD = re.compile(r"(?<![\w-])(?:pw|pwd|pword|passwd)\s*(?:(?:is|was)\s+|[:=]\s*)[\"'\u201c\u2018]?"
                             r"([^\s\"'\u201c\u201d\u2018\u2019]+)", re.IGNORECASE)
#: the name of a machine credential and its value ("my API key is sk-...", "token: ghp_..."):
#: a value of 8 characters or more holding a digit (not "my api key is expired")
_CREDENTIAL = re.compile(
    r"(?<![\w-])(?:api[ _-]?keys?|api[ _-]?tokens?|access[ _-]?tokens?|auth(?:entication)?[ _-]?tokens?|"
    r"bearer(?: token)?|secret[ _-]?keys?|private[ _-]?keys?|client[ _-]?secrets?|refresh[ _-]?tokens?|"
    r"(?:github|gitlab|slack|discord|bot|session|jwt|oauth) tokens?)(?:\s+(?:is|was)|\s*[:=]|\s+(?=[\w-]*\d))\s*[\"'\u201c\u2018]?"
    r"([A-Za-z0-9_\-./+=]{8,})", re.IGNORECASE)
#: well-known key shapes, said anywhere: OpenAI / Stripe / GitHub / AWS / Slack / Google keys
_KEY_SHAPE = re.compile(
    r"(?<![\w-])(?:sk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|"
    r"gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|AKIA[0-9A-Z]{16}|xox[abpr]-[A-Za-z0-9-]{10,}|"
    r"AIza[0-9A-Za-z_-]{35})(?![\w-])")
#: a payment card number: 13-19 digits, spaced or dashed in groups, passing the Luhn check
_CARD_NUMBER = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d])")
_HAS_DIGIT = re.compile(r"\d")

Span = tuple[int, int]
#: how many of the turns before a turn the question-and-answer rules read: a secret question,
#: two stalling replies and a waiting assistant turn between them
RECENT_TURNS = 6


def _per_text(fn: Any) -> Any:
    """``fn(text)`` remembered for short texts: every append reads the same turns before it again
    (:attr:`SecretDetector.context_turns`), so each turn's verdicts are worked out about once."""
    cached = lru_cache(maxsize=4096)(fn)

    def call(text: str) -> Any:
        return cached(text) if len(text) <= 2000 else fn(text)

    call.__doc__ = fn.__doc__
    call.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    return call


@_per_text
def _asks_secret(text: str) -> bool:
    """Does an assistant turn ask for (or about) a secret (:data:`ASKS_SECRET`)?"""
    return ASKS_SECRET.search(text) is not None


@_per_text
def _mentions_secret(text: str) -> bool:
    """Does a turn ask for a secret or name one (:data:`ASKS_SECRET` or :data:`_KEYWORD`)?"""
    return ASKS_SECRET.search(text) is not None or _KEYWORD.search(text) is not None


#: a one-sentence user turn about a password that ends at the word, with no value anywhere in it:
#: "I forgot my password.", "Can you reset my online banking password?" (round 13). It names the
#: topic only, so it is no whole-turn secret by rule 2 (the secret talk after it is read as before)
_PASSWORD_TOPIC_TURN = re.compile(
    r"\s*(?:[\w']+,?\s+){0,6}?(?:forgot|forgotten|forget|reset|change|changed|update|updated|lost|recover|renew|"
    r"unlock|locked out of|(?:can't|cannot|don't|do not) remember)\s+(?:my|the|our|your)\s+(?:[\w-]+\s+){0,3}?"
    r"password\s*[.!?]*\s*", re.IGNORECASE)


#: the secret words a rule may name without holding a value (round 15): "never share your password
#: with anyone", "always ask for my security answer first"; a maiden name, a pet or a security
#: question's topic names its answer's owner and stays a whole-turn secret
_RULE_SECRET_WORD = re.compile(
    r"\b(?:security (?:answer|question)s?|passwords?|passcodes?|pins?|pin ?codes?|passphrases?)\b", re.IGNORECASE)
#: what a rule's words go on with right after the secret word, when a value does not follow it:
#: "... your password with anyone", "... my PIN again", "... my password." (the end)
_RULE_GOES_ON = frozenset("""
with to for from in on over by via through again anymore ever unless until before after when while
without or and nor but either to anyone anybody someone somebody everyone nobody strangers others
people here there now first please yet even out aloud back so ok okay thanks
""".split())
#: a value cue after the secret word in its sentence: "is", "was", "it's", ":", "=", a quote
_VALUE_CUE = re.compile(r"\b(?:is|was|are|were|be)\b|'s\b|[:=\"\u201c\u201d\u2018\u2019`]", re.IGNORECASE)


def _is_rule_about_a_secret_kind(text: str) -> bool:
    """Is a user turn a standing rule that names a kind of secret and holds no value (round 15)?
    "Never share your password with anyone.", "Don't ask me for my PIN.", "Please never ask me
    for my password again." Every sentence opens as an instruction (never, don't, always, ...)
    or is a plain reply ("Thanks."), the turn holds no digit, and after the secret word comes no value: no
    "is" / ":" / quote, only lower-case words, the first of them one a rule goes on with."""
    if re.search(r"\d", text):
        return False
    named = False
    for sentence in re.split(r"(?<=[.!?;])\s+|\n+", text):
        if not sentence.strip() or _PLAIN_REPLY.fullmatch(sentence.strip()):
            continue  # "Thanks."
        if not _INSTRUCTION.match(sentence.strip()):
            return False  # every sentence a rule: "... first. The answer is Rex." holds one
        words = list(_RULE_SECRET_WORD.finditer(sentence))
        named = named or bool(words)
        for word in words:
            rest = sentence[word.end():]
            if _VALUE_CUE.search(rest):
                return False
            tokens = re.findall(r"[^\s,.!?;()]+", rest)
            if any(not t.isalpha() or not t.islower() for t in tokens if t != "I"):
                return False
            if tokens and tokens[0] not in _RULE_GOES_ON:
                return False
    return named


@_per_text
def _names_a_secret(text: str) -> bool:
    """Does a user turn name a secret or a security answer, where in it is not known (rule 2)?"""
    words = _USER_SECRET_WORDS.search(text)
    if (words is not None and words.group().lower() == "password" and _PASSWORD_TOPIC_TURN.fullmatch(text)
            and text.lower().count("pass") == 1 and not re.search(r"\d", text)):
        words = None  # "I forgot my password.": the topic, no value
    if words is not None and _is_rule_about_a_secret_kind(text) and not any(
            _RULE_SECRET_WORD.fullmatch(w.group()) is None for w in _USER_SECRET_WORDS.finditer(text)):
        words = None  # "Never share your password with anyone.": a rule naming a kind of secret, no value
    return bool(words or _PET_NAMED.search(text) or _ANIMAL_NAMED.search(text)
                or _SECURITY_TOPIC.search(text) or _ANIMAL_THEN_NAME.search(text))


class SecretDetectorLike(Protocol):
    """What ``MemFold(secrets=...)`` accepts as a custom detector: one method, no state needed."""

    def spans(self, turn: Mapping[str, Any], previous: Mapping[str, Any] | None = None) -> Sequence[Span]:
        """Secret spans of ``turn``'s content (see :meth:`SecretDetector.spans`)."""


class SecretDetector:
    """Finds the secret spans of a conversation's turns (rules in the module docstring).

    :meth:`spans` is stateless (the turns before are passed in); :meth:`detect`,
    :meth:`is_secret` and :meth:`labels` remember the turns before themselves, for a caller that
    feeds every turn of one conversation in order (seed with ``SecretDetector(previous=...)``).
    A custom detector for ``MemFold(secrets=...)`` needs only a ``spans`` method of this shape;
    one with a ``context_turns`` attribute (as here) is also given ``earlier=``, that many turns.
    """

    id = "rules"
    #: how many turns before a turn :meth:`spans` wants (``earlier=``): a security answer given
    #: in them is remembered that long ("Buddy" answered, "I miss Buddy!" nine turns later, issue
    #: 15 point 8); the other rules read only the last :data:`RECENT_TURNS` of them
    context_turns = 24

    def __init__(self, previous: Mapping[str, Any] | None = None) -> None:
        self._earlier: list[Mapping[str, Any]] = [previous] if previous is not None else []

    def spans(self, turn: Mapping[str, Any], previous: Mapping[str, Any] | None = None, *,
              earlier: Sequence[Mapping[str, Any]] | None = None) -> list[Span]:
        """The secret spans of ``turn``'s content, merged and sorted; ``[]`` when it holds none.

        :param turn: an OpenAI-shaped message (``role``, ``content``).
        :param previous: the turn just before it in the conversation (None for the first).
        :param earlier: the turns before it, oldest first (its last is ``previous``); when not
            given, only ``previous`` is known, so a secret question is seen one turn back only.
        :returns: ``[(start, end), ...]`` character offsets into ``content`` (end exclusive).
        """
        text = turn.get("content")
        if not isinstance(text, str) or not text:
            return []
        if earlier is None:
            earlier = [previous] if previous is not None else []
        role = turn.get("role")
        if role == "user" and _names_a_secret(text):
            return [(0, len(text))]
        recent = list(earlier)[-RECENT_TURNS:]
        found = merge_spans(_values_next_to_keywords(text, role))
        if role == "user" and _question_pending(recent) and _answers(text, found):
            return [(0, len(text))]
        return merge_spans(found + _in_secret_talk(text, role, recent, _answer_words(earlier)) + _credentials(text))

    def detect(self, turn: Mapping[str, Any]) -> list[Span]:
        """:meth:`spans` of ``turn`` after the turns fed before; call once per turn, in order."""
        earlier = list(self._earlier)
        self._earlier = (earlier + [turn])[-self.context_turns:]
        return self.spans(turn, earlier[-1] if earlier else None, earlier=earlier)

    def is_secret(self, turn: Mapping[str, Any]) -> bool:
        """True when ``turn`` holds a secret (:meth:`detect`; call once per turn, in order)."""
        return bool(self.detect(turn))

    def labels(self, turn: Mapping[str, Any]) -> list[str]:
        """``["secret"]`` or ``[]`` for ``turn`` (see :meth:`is_secret`)."""
        return [SECRET_LABEL] if self.is_secret(turn) else []


def _in_secret_talk(text: str, role: Any, earlier: Sequence[Mapping[str, Any]],
                    answer_words: Iterable[str] = ()) -> list[Span]:
    """Rules 4-6 (issue 15, point 8: where a rule cannot decide, label rather than leak), for a
    turn said while secrets are being talked about, that is, when one of ``earlier`` (the
    context turns) asked for or named a secret:

    4. a user turn's PIN-shaped numbers (4-6 digits on their own: "Either 9503 or 1596",
       "Oh wait... try 7402 or 3941", "0314"), guesses included;
    5. a short user reply (at most three words) that is more than a yes, no or thanks ("Sanchez"),
       unless the assistant's last turn asked another question (the reply answers that one): a
       security answer given late, whole;
    6. an assistant turn right after a user turn naming a secret ("what was my PIN?" -> "9431"):
       its numbers;
    and, in any turn, ``answer_words``: the words the user gave as a security answer in the
    turns before (:func:`_answer_words`, up to :attr:`SecretDetector.context_turns` back: "...
    his name. That's right Nemo." -> "... feeding Nemo"; "Buddy" -> "I miss Buddy!"). Also, always: an animal named in passing
    ("my dog was named Buddy"), a number offered as a guess ("9431, does that sound right?"), and
    a bare name asked back while secrets are talked about ("Wong?"), and a bare PIN-shaped
    reply to an identity check ("Can you tell me your account number?" -> "5380").
    """
    out: list[Span] = []
    for word in answer_words:
        out += [m.span() for m in re.finditer(r"(?<![\w])" + re.escape(word) + r"(?![\w])", text)]
    if not earlier:
        return out
    # the last assistant turn before this one, and whether secrets are talked about: a user turn's
    # rules read them (round 8: not worked out for other turns)
    asked = next((_content(t) for t in reversed(earlier) if (type(t) is dict or isinstance(t, Mapping)) and t.get("role") == "assistant"),
                 "") if role == "user" else ""
    if role == "user" and any(_mentions_secret(_content(t)) for t in earlier):
        out += [m.span() for m in _PIN_SHAPED.finditer(text)]
        words = re.findall(r"[\w'-]+", text)
        other_question = asked.rstrip().endswith("?") and not _asks_secret(asked)  # it answers that one
        users = [_content(t) for t in earlier if (type(t) is dict or isinstance(t, Mapping)) and t.get("role") == "user"][-2:]
        if any(_USER_SECRET_WORDS.search(u) or _KEYWORD.search(u) for u in users):
            other_question = False  # the user just named a secret ("Do you need my childhood pet name?")
        guess = re.fullmatch(r"\s*[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?\s*\?\s*", text) is not None  # "Wong?"
        if (0 < len(words) <= 3 and (not other_question or guess) and not _PLAIN_REPLY.fullmatch(text.strip())
                and not _STALL.fullmatch(text.strip())):
            out.append((0, len(text)))
    if role == "user":
        bare = _BARE_PIN.fullmatch(text)
        if bare and _IDENTITY_ASK.search(asked):
            out.append(bare.span(1))
    last = earlier[-1] if (type(earlier[-1]) is dict or isinstance(earlier[-1], Mapping)) else {}
    if role == "assistant" and last.get("role") == "user" and (
            _mentions_secret(_content(last))):
        out += [m.span() for m in _NUMBER.finditer(text)]
    if role == "user":
        out += [m.span(1) if m.group(1) else m.span() for m in _GUESSED_NUMBER.finditer(text)]
    return out


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


@_per_text
def _credentials(text: str) -> list[Span]:
    """Rule 7 (round 13), in any turn: a password after a short keyword ("pw: hunter2"), a
    machine credential after its name ("API key: sk-...", "my token is ghp_..."), a key of a
    well-known shape said anywhere, and a payment card number (13-19 digits passing the Luhn
    check, "4111 1111 1111 1111"): only the value is the secret."""
    out: list[Span] = []
    for m in _SHORT_PASSWORD.finditer(text):
        value = m.group(1).rstrip(".,;:)!?")
        if value and value.lower() not in _NOT_A_VALUE:
            out.append((m.start(1), m.start(1) + len(value)))
    out += [m.span() for m in _KEY_SHAPE.finditer(text)]
    if not _HAS_DIGIT.search(text):
        return out  # a credential's value and a card number hold digits (most turns hold none)
    for m in _CREDENTIAL.finditer(text):
        value = m.group(1).rstrip(".,;:)")
        if len(value) >= 8 and re.search(r"\d", value):
            out.append((m.start(1), m.start(1) + len(value)))
    for m in _CARD_NUMBER.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and _luhn(digits):
            out.append(m.span())
    return out


def _answer_words(earlier: Sequence[Mapping[str, Any]]) -> set[str]:
    """Capitalised words (not sentence openers, not "I") of the user turns in ``earlier`` that
    were whole secret replies (rules 2-3): the names a security answer gave. A word already said
    in a turn before the answer is not one: the names of the people talking ("Nate: ...") and of
    what they talk about are no security answers (and the customer's surname is no maiden name)."""
    for turn in earlier:
        # the turns as :func:`_role_text` reads them, in one loop (round 8: no tuple, no call per turn)
        if type(turn) is not dict and not isinstance(turn, Mapping):
            continue  # no role: neither asks nor names
        role, text = turn.get("role"), turn.get("content")
        if role == "assistant":
            if _asks_secret(text if isinstance(text, str) else ""):
                break
        elif role == "user" and _names_a_secret(text if isinstance(text, str) else ""):
            break
    else:
        # no secret question asked and no secret named: no reply answers one (``open_turns`` stays
        # 0) and no user turn names one, so no answer words (round 7: most appends; the per-text
        # verdicts are remembered, so this costs a lookup per turn)
        return set()
    return _answer_words_of([_role_text(t) for t in earlier])


def _answer_words_of(turns: Sequence[tuple[Any, str]]) -> set[str]:
    """:func:`_answer_words` of the turns as ``(role, text)``, worked out in full."""
    answers: list[int] = []  # the whole secret user replies, by position
    open_turns = 0  # the state of :func:`_question_pending`, kept in one pass over the turns
    for i, (role, text) in enumerate(turns):
        if role == "assistant":
            open_turns = _after_assistant(open_turns, text)
        elif role == "user":
            answered = bool(open_turns) and _answers(text, merge_spans(_values_next_to_keywords(text, "user")))
            if open_turns:
                open_turns = 0 if (answered or _USER_SECRET_WORDS.search(text)) else open_turns - 1
            if answered or _names_a_secret(text):
                answers.append(i)
    words: set[str] = set()
    seen: set[str] = set()
    for i, (_, text) in enumerate(turns[:answers[-1] + 1] if answers else ()):
        tokens = _tokens(text)
        if i in answers:
            words.update(w for w in _capitalised_words(text, tokens) if w not in seen)
        seen.update(tokens)
    return words


@_per_text
def _tokens(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"[\w'-]+", text))


def _capitalised_words(text: str, tokens: Sequence[str]) -> set[str]:
    """The names in a secret reply: in a bare answer (three words at most, "Poppy") its capitalised
    words, sentence opener included; elsewhere the capitalised words inside a sentence."""
    out: set[str] = set()
    if 0 < len(tokens) <= 3:
        out.update(w for w in tokens if w[:1].isupper() and w != "I" and len(w) > 2)
    for m in re.finditer(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,})\b", text):
        before = text[:m.start(1)].rstrip()
        if before and before[-1] not in ".!?\"'":
            out.add(m.group(1))
    return out


def _role_text(turn: Any) -> tuple[Any, str]:
    """A turn's role and text content ("" for none); plain dicts take the fast path."""
    if type(turn) is not dict and not isinstance(turn, Mapping):
        return None, ""
    text = turn.get("content")
    return turn.get("role"), text if isinstance(text, str) else ""


def _content(turn: Any) -> str:
    text = turn.get("content") if (type(turn) is dict or isinstance(turn, Mapping)) else None
    return text if isinstance(text, str) else ""


def _question_pending(earlier: Sequence[Mapping[str, Any]]) -> bool:
    """Is a secret question still open after ``earlier`` (rule 3)? An assistant turn asking for a
    secret opens it for :data:`PENDING_USER_TURNS` user turns; a user turn that answers closes it,
    one that does not answer (:func:`_answers`) uses up one of them; any other assistant turn
    closes it unless it only waits ("take your time"); tool and system turns change nothing."""
    open_turns = 0
    for t in earlier:
        role, text = t.get("role") if (type(t) is dict or isinstance(t, Mapping)) else None, _content(t)
        if role == "assistant":
            open_turns = _after_assistant(open_turns, text)
        elif role == "user" and open_turns:
            found = merge_spans(_values_next_to_keywords(text, "user"))
            if _USER_SECRET_WORDS.search(text) or _answers(text, found):
                open_turns = 0
            else:
                open_turns -= 1
    return open_turns > 0


def _after_assistant(open_turns: int, text: str) -> int:
    """The open user turns of a secret question after an assistant turn (rule 3): it asks (open
    anew), waits ("take your time": unchanged) or moves on (closed)."""
    if _asks_secret(text):
        return PENDING_USER_TURNS
    return open_turns if open_turns and _WAITS.search(text) else 0


def _answers(text: str, found: Sequence[Span]) -> bool:
    """Is a user turn the answer to an open secret question? Not when it is a question ("Why do
    you need it?"), only stalls ("one sec", "hold on, let me check") or is a standing
    instruction ("Never call me after 6pm."), unless it holds a number (or spelled-out digits)
    that no keyword already covers: "Hold on, it's 3100" answers. Anything else answers (errs on
    the side of secrecy: "I forgot it" is masked too)."""
    bare = redact(text, found, mask=" ")
    if _NUMBER.search(bare) or _SPACED_DIGITS.search(bare) or _SPELLED_DIGITS.search(bare):
        return True
    stripped = text.strip()
    if not stripped:
        return True
    if _STALL.fullmatch(stripped):
        return False
    if _INSTRUCTION.match(stripped):
        return False
    first = re.split(r"(?<=[.!?])\s+", stripped)[0]
    if (first.endswith("?") and len(re.findall(r"\w+", first)) >= 3 and not _GUESS.match(first)
            and _QUESTION_WORD.match(first)):
        return False  # a question back ("Why do you need that?"); "Cooper and ... would ya?" answers
    return True


def _value_at(text: str, at: int, keyword: str, connected: bool) -> Span | None:
    """The value written right at ``at`` after ``keyword``: digits (spaced, dashed or spelled
    out), or for a password-like keyword after "is" / ":" / "=", one token (a passphrase: the
    rest of the sentence)."""
    for shape in (_SPACED_DIGITS, _SPELLED_DIGITS):
        m = shape.match(text, at)
        if m:
            return m.span()
    if connected and _WORDY.search(keyword):
        if keyword.lower().startswith("passphrase"):
            m = re.compile(r"[^\n.!?]+").match(text, at)
        else:
            m = _TOKEN.match(text, at)
        if m:
            value = m.group().rstrip(".,;:)")
            if value and value.lower() not in _NOT_A_VALUE and re.search(r"\w", value):
                return (m.start(), m.start() + len(value))
    return None


def _values_next_to_keywords(text: str, role: Any = None) -> list[Span]:
    numbers: list[Span] | None = None  # the text's numbers, read at the first keyword without a value
    out: list[Span] = []
    for kw in _KEYWORD.finditer(text):
        lead = _LEAD.match(text, kw.end())
        connected = bool(re.search(r"\b(?:is|was|be)\b|[:=]|^'s", lead.group(1) or ""))
        value = _value_at(text, lead.end(), kw.group(), connected)
        if value is not None:
            out.append(value)
            at = value[1]
            while text[value[0]].isdigit():  # "PIN is either 1596 or 3941": the numbers it lists
                more = _ALTERNATIVE.match(text, at)
                if more is None:
                    break
                out.append(more.span(1))
                at = more.end()
        else:
            if numbers is None:
                numbers = [(m.start(), m.end()) for m in _NUMBER.finditer(text)]
            after = [n for n in numbers if n[0] >= kw.end() and n[0] - kw.end() <= _REACH]
            before = [n for n in numbers if n[1] <= kw.start() and kw.start() - n[1] <= _REACH]
            out.extend(before + after)
    return out


def merge_spans(spans: Iterable[Span]) -> list[Span]:
    """Sort ``spans`` and merge the overlapping or touching ones."""
    out: list[Span] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def redact(text: str, spans: Iterable[Span], mask: str = SECRET_MASK) -> str:
    """``text`` with every span replaced by ``mask`` (spans as :meth:`SecretDetector.spans` gives)."""
    parts, at = [], 0
    for start, end in merge_spans(spans):
        parts.append(text[at:start])
        parts.append(mask)
        at = end
    parts.append(text[at:])
    return "".join(parts)


def stored_spans(content: str, metadata: Mapping[str, Any] | None) -> list[Span] | None:
    """The secret spans recorded in a turn's metadata (:data:`SECRET_SPANS_KEY`), or None when
    there are none or they are malformed (then the whole turn counts as secret)."""
    raw = (metadata or {}).get(SECRET_SPANS_KEY)
    if not isinstance(raw, list) or not raw:
        return None
    spans: list[Span] = []
    for item in raw:
        if (not isinstance(item, (list, tuple)) or len(item) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in item)
                or not 0 <= item[0] < item[1] <= len(content)):
            return None
        spans.append((item[0], item[1]))
    return merge_spans(spans)


def readable_text(content: str, labels: Iterable[str], metadata: Mapping[str, Any] | None) -> str | None:
    """What a reader without the ``secret`` label may learn from a turn: the content itself when
    it is not secret, the content with each recorded secret span masked when it is, and None when
    the whole turn is secret (no spans recorded, or nothing but masks and punctuation left)."""
    if SECRET_LABEL not in set(labels):
        return content
    spans = stored_spans(content, metadata)
    if spans is None:
        return None
    text = redact(content, spans)
    if not re.search(r"\w", text.replace(SECRET_MASK, "")):
        return None
    return text


def make_secret_detector(setting: Any) -> Any:
    """The detector for ``MemFold(secrets=...)``: ``"detect"`` (default) -> :class:`SecretDetector`,
    ``"off"`` / ``None`` -> None (nothing is labelled), or any object with a ``spans(turn,
    previous)`` method (:class:`SecretDetectorLike`), used as given.

    :raises InvalidInput: for anything else.
    """
    if setting == "detect":
        return SecretDetector()
    if setting is None or setting == "off":
        return None
    if isinstance(setting, str) or not callable(getattr(setting, "spans", None)):
        raise InvalidInput(f"secrets must be 'detect', 'off' or a detector with a spans(turn, previous) method, "
                           f"got {setting!r}")
    return setting


def label_turn(turn: Mapping[str, Any], spans: Sequence[Span]) -> Mapping[str, Any]:
    """``turn`` with the ``secret`` label and its spans added when ``spans`` is not empty.

    Labels the caller gave are kept (merged). The spans go to the metadata key
    :data:`SECRET_SPANS_KEY` only when the caller did not label the turn ``secret`` already (a
    turn the caller calls secret stays secret as a whole, unless the caller gave spans). A turn
    whose labels or metadata are malformed is returned unchanged, for validation to refuse it.
    """
    if not spans:
        return turn
    labels = turn.get("labels")
    metadata = turn.get("metadata")
    if labels is not None and not isinstance(labels, (list, tuple)):
        return turn
    if metadata is not None and not isinstance(metadata, dict):
        return turn
    labels = list(labels or [])
    out = dict(turn)
    if SECRET_LABEL not in labels:
        out["metadata"] = {**(metadata or {}), SECRET_SPANS_KEY: [[s, e] for s, e in merge_spans(spans)]}
        out["labels"] = labels + [SECRET_LABEL]
    return out


def check_detector_spans(spans: Any, content: str, detector: Any) -> list[Span]:
    """Validate what a (custom) detector returned for ``content``.

    :raises InvalidInput: naming the detector, for anything but ``(start, end)`` pairs inside the text.
    """
    out: list[Span] = []
    for item in spans or ():
        if (not isinstance(item, (list, tuple)) or len(item) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in item)
                or not 0 <= item[0] < item[1] <= len(content)):
            raise InvalidInput(f"secret detector {type(detector).__name__} returned {item!r}: a span must be "
                               f"(start, end) with 0 <= start < end <= {len(content)}")
        out.append((item[0], item[1]))
    return out


#: every pattern above skips a text lacking its required literals (issue 18, point 4; results unchanged)
prefilter.prefilter_module(globals(), indexed=False)  # 17 patterns, few read each turn: substring tests
