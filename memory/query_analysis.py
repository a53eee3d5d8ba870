"""What a search question says beyond its words: the dates it names and the participants it names.

Two readings of a natural-language question, both pure functions of its text (no storage, no
model), used by :mod:`memfold.memory.recall_priors` to re-rank a search's candidates:

* :func:`date_windows` — the time ranges a question names, as ``[start, end)`` pairs of POSIX
  seconds (UTC): absolute dates ("on 8 May, 2023", "November 6, 2023", "8th december 2023"),
  months ("in May 2023"), years ("in 2024"), and, when the caller passes ``now``, relative ones
  ("yesterday", "last week", "last month", "three days ago", "two weeks ago", "last weekend",
  "this week"). LoCoMo questions often pin the turn they ask about this way ("what did Tim say
  about his injury on 16 November, 2023?").
* :func:`named_speakers` — which of a conversation's speakers a question names as a word
  ("What did Caroline research?" names Caroline, not Mel).
* :func:`asks_when` — whether a question asks *when* or *how long* ("When did Melanie paint a
  sunrise?"), and :func:`mentions_time`, whether a turn's text says a time word ("yesterday",
  "last week", "two years ago"): the evidence of a "when" question is the turn that dates it.

Nothing here raises on odd text: an unparseable or impossible date (31 February) is simply not a
window.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Iterable

DAY = 86_400.0

MONTHS = {name: i + 1 for i, name in enumerate(
    "january february march april may june july august september october november december".split())}
_ABBR = {name[:3]: num for name, num in MONTHS.items()} | {"sept": 9}
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december|" \
         r"jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_ORD = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"
_DAY_MONTH_YEAR = re.compile(rf"\b{_ORD}(?:\s+of)?\s+{_MONTH},?\s*{_YEAR}\b")
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH}\s+{_ORD},?\s*{_YEAR}\b")
_MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b")
_YEAR_ALONE = re.compile(rf"\b(?:in|during|of|since|throughout)\s+{_YEAR}\b")
_ISO = re.compile(r"\b((?:19|20)\d\d)-(\d{1,2})-(\d{1,2})\b")

_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "couple of": 2, "a few": 3, "few": 3}
_COUNT = r"(\d{1,3}|a couple of|couple of|a few|few|an|a|one|two|three|four|five|six|seven|eight|nine|ten)"
_AGO = re.compile(rf"\b{_COUNT}\s+(day|week|month|year)s?\s+ago\b")


def _month(token: str) -> int:
    token = token.rstrip(".")
    return MONTHS.get(token) or _ABBR[token[:4] if token == "sept" else token[:3]]


def _day_window(year: int, month: int, day: int) -> tuple[float, float] | None:
    try:
        start = datetime(year, month, day, tzinfo=timezone.utc)
    except ValueError:
        return None
    return start.timestamp(), start.timestamp() + DAY


def _month_window(year: int, month: int) -> tuple[float, float]:
    start = datetime(year, month, 1, tzinfo=timezone.utc)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=timezone.utc)
    return start.timestamp(), end.timestamp()


def absolute_windows(text: str) -> list[tuple[float, float]]:
    """The calendar dates, months and years ``text`` names, as ``[start, end)`` POSIX seconds
    (UTC). A day that is named hides the month and year it sits in (``"on 8 May 2023"`` gives the
    day only); a month hides its year."""
    s = text.lower()
    days: list[tuple[float, float]] = []
    taken: list[tuple[int, int]] = []
    for rx, order in ((_DAY_MONTH_YEAR, "dmy"), (_MONTH_DAY_YEAR, "mdy")):
        for m in rx.finditer(s):
            if order == "dmy":
                day, month, year = int(m.group(1)), _month(m.group(2)), int(m.group(3))
            else:
                month, day, year = _month(m.group(1)), int(m.group(2)), int(m.group(3))
            window = _day_window(year, month, day)
            taken.append(m.span())  # an impossible day (31 February) is no window, nor its month
            if window is not None:
                days.append(window)
    for m in _ISO.finditer(s):
        window = _day_window(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        if window is not None:
            days.append(window)
            taken.append(m.span())

    def free(span: tuple[int, int]) -> bool:
        return all(span[1] <= a or span[0] >= b for a, b in taken)

    months = []
    for m in _MONTH_YEAR.finditer(s):
        if free(m.span()):
            months.append(_month_window(int(m.group(2)), _month(m.group(1))))
            taken.append(m.span())
    years = []
    for m in _YEAR_ALONE.finditer(s):
        if free(m.span(1)):
            year = int(m.group(1))
            years.append((datetime(year, 1, 1, tzinfo=timezone.utc).timestamp(),
                          datetime(year + 1, 1, 1, tzinfo=timezone.utc).timestamp()))
    finer = days + months

    def hidden(window: tuple[float, float], by: list[tuple[float, float]]) -> bool:
        return any(window[0] <= a and b <= window[1] for a, b in by)

    months = [w for w in months if not hidden(w, days)]
    years = [w for w in years if not hidden(w, finer)]
    return list(dict.fromkeys(days + months + years))


def relative_windows(text: str, now: float) -> list[tuple[float, float]]:
    """The ranges ``text`` names relative to ``now`` (POSIX seconds): ``yesterday``, ``today``,
    ``last week`` / ``last month`` / ``last year`` (the calendar week, Monday first, month or year
    before ``now``'s), ``this week`` / ``this month``, ``last weekend``, ``N days / weeks / months /
    years ago`` (that day, week, month or year, give or take half a unit)."""
    s = text.lower()
    today = datetime.fromtimestamp(now, tz=timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    out: list[tuple[float, float]] = []

    def span(a: datetime, b: datetime) -> None:
        out.append((a.timestamp(), b.timestamp()))

    week = today - timedelta(days=today.weekday())
    if re.search(r"\byesterday\b", s):
        span(today - timedelta(days=1), today)
    if re.search(r"\b(today|tonight|this morning|this afternoon|this evening)\b", s):
        span(today, today + timedelta(days=1))
    if re.search(r"\blast week\b|\bthe week before\b|\bprevious week\b", s):
        span(week - timedelta(days=7), week)
    if re.search(r"\bthis week\b", s):
        span(week, week + timedelta(days=7))
    if re.search(r"\blast weekend\b|\bpast weekend\b", s):
        saturday = week - timedelta(days=2)
        span(saturday, saturday + timedelta(days=2))
    first = today.replace(day=1)
    if re.search(r"\blast month\b|\bprevious month\b", s):
        prev = (first - timedelta(days=1)).replace(day=1)
        span(prev, first)
    if re.search(r"\bthis month\b", s):
        span(first, (first + timedelta(days=32)).replace(day=1))
    if re.search(r"\blast year\b|\bprevious year\b", s):
        span(today.replace(year=today.year - 1, month=1, day=1), today.replace(month=1, day=1))
    for m in _AGO.finditer(s):
        count = int(m.group(1)) if m.group(1).isdigit() else _NUMBERS[m.group(1)]
        unit = {"day": 1, "week": 7, "month": 30.44, "year": 365.25}[m.group(2)]
        centre = now - count * unit * DAY
        half = max(0.5, unit / 2) * DAY
        out.append((centre - half, centre + half))
    return list(dict.fromkeys(out))


_RELATIVE_HINT = re.compile(r"yesterday|today|tonight|this (?:morning|afternoon|evening)|week|month|year|ago",
                            re.IGNORECASE)


def date_windows(text: str, *, now: float | None = None) -> list[tuple[float, float]]:
    """Every time range ``text`` names: :func:`absolute_windows`, plus :func:`relative_windows`
    when ``now`` (POSIX seconds) is given. ``[]`` when it names none. A question with no digit
    and no word such as *yesterday*, *week* or *ago* is answered without parsing (every search
    asks)."""
    out = absolute_windows(text) if any(ch.isdigit() for ch in text) else []
    if now is not None and _RELATIVE_HINT.search(text):
        out += [w for w in relative_windows(text, now) if w not in out]
    return out


def named_speakers(text: str, names: Iterable[str]) -> list[str]:
    """Which of ``names`` occur in ``text`` as whole words (case-insensitive; a name of several
    words must occur as that phrase), in the order given."""
    lowered = text.lower()
    out = []
    for name in names:
        if name and re.search(r"(?<!\w)" + re.escape(name.lower()) + r"(?!\w)", lowered):
            out.append(name)
    return out


def without_names(text: str, names: Iterable[str]) -> str:
    """``text`` with every whole-word occurrence of ``names`` (and a possessive ``'s`` after one)
    removed, case-insensitive, spaces collapsed; ``text`` itself when nothing else would be left.

    The question a dense ranker embeds when the speaker prior carries *who* (issue 18 point 7):
    "What did Caroline research?" -> "What did research?" (LoCoMo dev, hybrid recall@10
    leave-one-conversation-out 0.784 -> 0.801 with turns embedded without their label)."""
    out = text
    low = text.lower() if text.isascii() else None  # an ASCII text: a plain substring test first
    for name in names:
        if not name:
            continue
        if low is not None and not _may_match_ascii(name, low):
            continue  # the name cannot occur in it: no regex (a file may hold thousands of speakers)
        new = re.sub(r"(?<!\w)" + re.escape(name) + r"(?:'s)?(?!\w)", " ", out, flags=re.IGNORECASE)
        if new != out:
            out = new
            low = out.lower() if out.isascii() else None
    out = " ".join(out.split())
    return out if re.search(r"\w", out) else text


#: characters outside ASCII that case-insensitive matching pairs with an ASCII letter (see
#: :mod:`memfold.window.prefilter`): a name holding one may match an ASCII text
_ASCII_FOLDS = frozenset("\u0130\u0131\u017f\u212a")


def _may_match_ascii(name: str, low: str) -> bool:
    """Could ``name`` match case-insensitively in the lowercased ASCII text ``low``? An ASCII name
    only as a substring of it; another only when each of its characters is ASCII or pairs with
    an ASCII letter (then the regex decides)."""
    if name.isascii():
        return name.lower() in low
    return all(c.isascii() or c in _ASCII_FOLDS for c in name)


#: a question that asks for a time: *when*, *how long*, *what year / month / day / date / time*,
#: *which year / month / day*
_ASKS_WHEN = re.compile(r"\b(?:when|how long|what (?:year|month|day|date|time)|which (?:year|month|day))\b",
                        re.IGNORECASE)
#: the words that date what a turn tells (whole index tokens: "week" but not "weekly" or "weeks";
#: "two weeks ago" has "ago"). On LoCoMo dev 81% of the evidence turns of "when" questions hold one,
#: 17% of all turns
TIME_WORDS = ("yesterday", "today", "tonight", "tomorrow", "ago", "weekend", "week", "month", "year", "lately",
              "recently")
_TIME_WORD = re.compile(r"(?<![^\W_])(?:" + "|".join(TIME_WORDS) + r")(?![^\W_])", re.IGNORECASE)


def asks_when(text: str) -> bool:
    """Whether ``text`` asks for a time ("When did ...", "How long has ...", "In which year ...")."""
    return _ASKS_WHEN.search(text) is not None


def mentions_time(text: str) -> bool:
    """Whether ``text`` holds one of :data:`TIME_WORDS` as a whole word (as the full-text index splits
    words: runs of letters and digits), case-insensitive."""
    return _TIME_WORD.search(text) is not None
