"""A claim about a business record's opening days, hours and yes/no attributes, checked
against the record itself.

Read as words, a record confirms or denies little of what people write about it: "open Monday
through Friday" names two days of the seven it lists, so the nearest sentence's "Tuesday" looks
like another value; "offers takeout" shares no word with `"RestaurantsTakeOut": true`; and "a
romantic spot" shares one with `"romantic": false`. Here a JSON record is read as what it is:
which days have hours and what they are, and which attributes are true or false. A claim's
days (ranges, "weekends", "seven days a week" and "except" expanded), its times and the
attributes it names are compared with them:

| claim                                   | record                           | result        |
|-----------------------------------------|----------------------------------|---------------|
| open Monday through Friday, 10 AM-9 PM  | Monday-Friday "10:0-21:0"        | days confirmed |
| open seven days a week                  | no Sunday hours                  | CONTRADICTED  |
| closed on Sundays                       | `"Sunday": "9:0-14:0"`           | CONTRADICTED  |
| open 9 AM to 5 PM on Saturday           | `"Saturday": "10:0-17:0"`        | CONTRADICTED  |
| offers takeout                          | `"RestaurantsTakeOut": true`     | confirmed     |
| has outdoor seating                     | `"OutdoorSeating": false`        | CONTRADICTED  |
| does not accept reservations            | `"RestaurantsReservations": true`| CONTRADICTED  |

An attribute the record leaves null is neither: the claim's words decide as before.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

from vera.judges._offline._tokens import analyse

DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY_WORDS = {
    **{day: i for i, day in enumerate(DAYS)},
    **{day + "s": i for i, day in enumerate(DAYS)},
    **dict(mon=0, tue=1, tues=1, wed=2, thu=3, thur=3, thurs=3, fri=4, sat=5, sun=6),
}
_DAY = r"(?:mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)(?:day)?s?\b\.?|wednesdays?\b|saturdays?\b"
_DAY_TOKEN = re.compile(rf"\b(?:{_DAY})", re.I)
_RANGE = re.compile(
    rf"\b(?P<a>{_DAY})\s*(?:-|\u2013|\u2014|to|through|thru|until|till)\s*(?P<b>{_DAY})", re.I
)
_EVERY_DAY = re.compile(
    r"\b(?:every\s*day|daily|(?:seven|7)\s+days(?:\s+a|\s+per)?\s+week|all\s+week(?:\s+long)?)\b",
    re.I,
)
_DAY_HINTS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun", "daily", "every", "week")
"""What every match of `_DAY_TOKEN` or `_EVERY_DAY` holds, lowercased: most contexts name no
day, and these regular expressions cost a fifth of a millisecond on a passage."""
_WEEKDAYS = re.compile(r"\bweekdays\b", re.I)
_WEEKENDS = re.compile(r"\bweekends?\b", re.I)
_OPEN_CUE = re.compile(r"\b(?:open|opens|opening|operat\w*|hours|serv\w*|business)\b", re.I)
_CLOSED = re.compile(r"\bclosed\b", re.I)
_EXCEPT = re.compile(r"\b(?:except|but\s+not|other\s+than|excluding)\b", re.I)
_CLAUSE = re.compile(r";|\.\s|,\s*(?:and|but|while)\b|\bwhile\b|\bbut\b(?!\s+not\b)", re.I)
_TIME = re.compile(
    r"\b(?P<h>[012]?\d)(?::(?P<m>[0-5]\d?))?\s*(?P<half>[ap]\.?\s?m\.?)?(?![\d.])"
    r"|\b(?P<word>noon|midnight)\b",
    re.I,
)
_NEGATION = re.compile(
    r"\b(?:no|not|never|without|lacks?|lacking|neither|nor|none)\b|n't\b|\bnon-", re.I
)
_DENIED_AFTER = re.compile(
    r"\b(?:is|are|was|were)(?:\s+not\b|n't\b)|\bnot\s+(?:available|offered|provided|allowed|"
    r"accepted|included|an\s+option)|\bunavailable\b",
    re.I,
)
_OFFERING = re.compile(
    r"\b(?:offers?|offering|provides?|providing|has|have|having|features?|featuring|"
    r"available|availability|accepts?|accepting|allows?|allowing|options?|services?|suitable|"
    r"good|great|perfect|ideal|welcomes?|friendly)\b",
    re.I,
)
_PREDICATE = re.compile(r"\b(?:is|are|was|were|available|offered|provided)\b", re.I)
_CONTRAST = re.compile(
    r"[;.]\s|\b(?:but|however|although|though|while|whereas|yet)\b"
    r"|\band\s+(?:it\s+|they\s+|the\s+\w+\s+)?(?:accepts?|offers?|has|have|provides?|is|are|"
    r"does|do|allows?|features?|serves?|welcomes?)\b",
    re.I,
)


@dataclass(frozen=True, slots=True)
class _Flag:
    """One yes/no attribute: how a claim names it, and what the record says."""

    name: str
    pattern: re.Pattern[str]
    value: bool
    label: str
    parent: str


@dataclass(frozen=True, slots=True)
class Record:
    """What a business record states: opening minutes per weekday (None without an hours
    field) and its yes/no attributes."""

    hours: dict[int, tuple[int, int] | None] | None
    flags: tuple[_Flag, ...]
    reviews: bool
    """Whether the record holds reviews (a field named for them)."""
    closed: frozenset[int] = frozenset()
    """Days the text says are closed."""
    complete: bool = True
    """Whether a day without hours is closed (a record's table), or unknown (prose)."""


@dataclass(frozen=True, slots=True)
class RecordCheck:
    """A claim against a record: why it conflicts (None if it does not), and the claim's words
    the record confirms (its days, its opening words, the attributes it names rightly)."""

    conflict: str | None
    confirmed: tuple[str, ...]
    days_checked: bool

    def confirmed_keys(self) -> frozenset[str]:
        """The content keys of the confirmed words, as the judge counts coverage."""
        return analyse(" ".join(self.confirmed)).content if self.confirmed else frozenset()


# How people name an attribute, by its key; other keys are named by their own words.
_ALIASES = {
    "restaurantstakeout": r"take[\s-]?out|take[\s-]?away|to[\s-]go\b",
    "restaurantsdelivery": r"deliver(?:y|ies|s)?\b",
    "restaurantsreservations": (
        r"reservations?\b|reserv(?:e|ing)\s+a\s+table|book(?:ing)?\s+a\s+table"
    ),
    "restaurantsgoodforgroups": r"groups?\b|large\s+parties",
    "goodforkids": r"kids?\b|children|family[\s-]friendly",
    "outdoorseating": r"outdoor\s+(?:seating|dining|tables?|area|patio)|patio|seating\s+outside",
    "wifi": r"wi[\s-]?fi\b|wireless\s+internet|internet\s+access",
    "hastv": r"\btvs?\b|televisions?",
    "wheelchairaccessible": r"wheelchair",
    "dogsallowed": r"dogs?\b|pets?\b|dog[\s-]friendly|pet[\s-]friendly",
    "bikeparking": r"bike\s+(?:parking|racks?)|bicycle\s+parking",
    "businessacceptscreditcards": r"credit\s+cards?",
    "restaurantstableservice": r"table\s+service",
    "drivethru": r"drive[\s-]?(?:thru|through)",
    "garage": r"garage",
    "street": r"street\s+parking|parking\s+on\s+the\s+street",
    "lot": r"parking\s+lot|\blot\s+parking|\bprivate\s+lot",
    "valet": r"valet",
    "validated": r"validat(?:ed|ion)",
    "live": r"live\s+music|live\s+(?:bands?|performances?)",
    "dj": r"\bdjs?\b",
    "divey": r"divey|dive\s+bar",
    "businessparking": r"parking",
    "music": r"music",
}
_SKIPPED = frozenset({"goodformeal", "bestnights", "hairspecializesin", "dietaryrestrictions"})
"""Keys whose fields are no yes/no about the place: a meal it is "not good for" may well be
served."""


@lru_cache(maxsize=256)
def record_of(text: str) -> Record | None:
    """The record `text` holds, if it is a JSON object with hours or attributes."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    hours = _hours(data)
    flags = tuple(_flags(data, ""))
    reviews = any("review" in key.lower() for key in data)
    if hours is None and not flags and not reviews:
        return None
    return Record(hours, flags, reviews)


def _hours(data: dict[str, object]) -> dict[int, tuple[int, int] | None] | None:
    for value in data.values():
        if isinstance(value, dict) and sum(1 for k in value if k.lower() in DAYS) >= 3:
            table: dict[int, tuple[int, int] | None] = {}
            for day, span in value.items():
                if day.lower() in DAYS and isinstance(span, str):
                    table[DAYS.index(day.lower())] = _span(span)
            return table
    return None


def _span(text: str) -> tuple[int, int] | None:
    """Opening and closing minutes of "10:0-21:30"; None for "0:0-0:0" (often "open all
    day", sometimes "closed": either way no times to compare)."""
    match = re.fullmatch(r"\s*(\d{1,2}):(\d{1,2})\s*-\s*(\d{1,2}):(\d{1,2})\s*", text)
    if match is None:
        return None
    h1, m1, h2, m2 = (int(g) for g in match.groups())
    start, end = h1 * 60 + m1, h2 * 60 + m2
    return None if start == end == 0 else (start, end)


_DEPTH = 4
"""Levels of a record read for attributes: a business record's are two deep ("attributes",
then "BusinessParking"); deeper nesting is data of another kind, and left to the words."""


def _flags(data: dict[str, object], parent: str, depth: int = 0) -> list[_Flag]:
    flags: list[_Flag] = []
    if depth >= _DEPTH:
        return flags
    for key, value in data.items():
        name = key.lower()
        if name in _SKIPPED:
            continue
        if isinstance(value, dict):
            flags.extend(_flags(value, name, depth + 1))
            known = [v for v in value.values() if isinstance(v, bool)]
            if known and name in _ALIASES:
                flags.append(_flag(name, any(known), key, parent))
            continue
        truth = _truth(name, value)
        if truth is not None and (parent or name in _ALIASES):
            flags.append(_flag(name, truth, f"{key}: {json.dumps(value)}", parent))
    return flags


def _truth(name: str, value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if name == "wifi" and isinstance(value, str):
        return {"free": True, "paid": True, "no": False}.get(value.strip("u'\"").lower())
    return None


def _flag(name: str, value: bool, label: str, parent: str) -> _Flag:
    words = _ALIASES.get(name) or re.escape(name)
    return _Flag(name, re.compile(rf"\b(?:{words})", re.I), value, label, parent)


def check_record(claim: str, record: Record) -> RecordCheck:
    """`claim` against `record`: the first conflict found, else the words it confirms."""
    confirmed: list[str] = []
    for flag, negated, surface in _mentions(claim, record.flags):
        if negated == flag.value:
            said = f"not {surface}" if negated else surface
            return RecordCheck(f'claim says "{said}"; the record says {flag.label}', (), False)
        confirmed.append(surface)
    if confirmed:
        # A yes/no attribute is what the place offers, has or allows: the verbs saying so
        # are the record's too.
        confirmed.extend(m.group() for m in _OFFERING.finditer(claim))
    days = _check_days(claim, record) if record.hours is not None else None
    if days is not None and days[0] is not None:
        return RecordCheck(days[0], (), True)
    if days is not None:
        confirmed.extend(days[1])
    return RecordCheck(None, tuple(confirmed), days is not None)


def _mentions(claim: str, flags: tuple[_Flag, ...]) -> list[tuple[_Flag, bool, str]]:
    """The attributes `claim` names, each with whether the claim denies it. A general flag
    ("parking") gives way where the claim names one of its kinds ("valet parking")."""
    found: list[tuple[_Flag, bool, str]] = []
    for flag in flags:
        match = flag.pattern.search(claim)
        if match is not None:
            found.append((flag, _denied(claim, match.start(), match.end()), match.group()))
    kinds = {flag.parent for flag, _, _ in found}
    return [item for item in found if item[0].name not in kinds]


def _denied(claim: str, start: int, end: int) -> bool:
    """Whether a negation governs the words at `start:end`: a few words earlier in the same
    part of the claim ("no outdoor seating or delivery"), not across a contrast ("no patio,
    but accepts reservations"), or later in it ("WiFi is not available", "garage and valet
    parking are not")."""
    before = claim[:start]
    cut = max((m.end() for m in _CONTRAST.finditer(before)), default=0)
    after = claim[end:]
    stop = _CONTRAST.search(after)
    rest = after[: stop.start() if stop else len(after)]
    if _PREDICATE.search(rest):
        # "…, street parking is available": a comma opening a clause of its own.
        cut = max(cut, before.rfind(",") + 1)
    near = " ".join(before[cut:].split()[-_NEGATION_REACH:])
    return bool(_NEGATION.search(near) or _DENIED_AFTER.search(rest))


_NEGATION_REACH = 6
"""Words before an attribute within which a negation governs it."""


@dataclass(slots=True)
class _Days:
    """What one clause of a claim says about days: open on some, closed on others, at times."""

    open: set[int]
    closed: set[int]
    times: list[int]
    words: list[str]


def _check_days(claim: str, record: Record) -> tuple[str | None, list[str]] | None:
    """The first conflict between the days and hours `claim` states and the record's, with
    the words the record confirms; None where the claim states no day."""
    hours = record.hours or {}
    clauses = [_clause_days(part) for part in _CLAUSE.split(claim)]
    said = [c for c in clauses if c is not None]
    if not said:
        return None
    for days in said:
        for day in sorted(days.open):
            if day in record.closed:
                return f"claim says open on {DAYS[day].title()}; the context says closed", []
            if record.complete and day not in hours:
                return f"claim says open on {DAYS[day].title()}; the record lists no hours then", []
            conflict = _hours_conflict(day, days.times, hours.get(day))
            if conflict is not None:
                return conflict, []
        for day in sorted(days.closed):
            if day in hours and (hours[day] is not None or not record.complete):
                return f"claim says closed on {DAYS[day].title()}; the context gives its hours", []
    known = [days for days in said if _affirmed(days, record)]
    return None, [word for days in known for word in days.words]


def _affirmed(days: _Days, record: Record) -> bool:
    """Whether the record states what the clause says of every day it names: a day prose
    does not name is unknown, and its name is the claim's own."""
    hours = record.hours or {}
    closed = record.closed | ({d for d in range(7) if d not in hours} if record.complete else set())
    return days.open <= hours.keys() and days.closed <= closed


def names_days(text: str) -> bool:
    """Whether `text` names a weekday, a range of them, weekdays, weekends or every day: what
    a record's days can confirm or contradict (`_check_days` finds nothing in any other)."""
    if not _day_hinted(text):
        return False
    return any(p.search(text) for p in (_DAY_TOKEN, _EVERY_DAY, _WEEKDAYS, _WEEKENDS))


def _day_hinted(text: str) -> bool:
    """Whether `text` holds one of `_DAY_HINTS`, which every day pattern's match holds."""
    low = text.lower()
    return any(hint in low for hint in _DAY_HINTS)


@lru_cache(maxsize=256)
def prose_days(text: str) -> Record | None:
    """The opening days and hours a prose context states ("open Monday to Saturday, 9 AM to
    6 PM. Closed on Sundays."), or None if it names no day. A day it does not name is
    unknown, not closed."""
    if not _day_hinted(text):
        return None
    if _DAY_TOKEN.search(text) is None and _EVERY_DAY.search(text) is None:
        return None
    hours: dict[int, tuple[int, int] | None] = {}
    closed: set[int] = set()
    for part in _CLAUSE.split(text):
        days = _clause_days(part)
        if days is None:
            continue
        span = (days.times[0] % _BARE, days.times[1] % _BARE) if len(days.times) == 2 else None
        exact = len(days.times) == 2 and all(t < _BARE for t in days.times)
        for day in days.open:
            hours[day] = span if exact else None
        closed |= days.closed
    if not hours and not closed:
        return None
    return Record(hours, (), False, frozenset(closed), complete=False)


def _clause_days(clause: str) -> _Days | None:
    named, words = _named_days(clause)
    if not named:
        return None
    times = _times(clause)
    excepted: set[int] = set()
    cue = _EXCEPT.search(clause)
    if cue is not None:
        excepted, _ = _named_days(clause[cue.end() :])
        named -= excepted
    closed = _CLOSED.search(clause)
    if closed and not times:
        return _Days(set(), named | excepted, [], [*words, closed.group()])
    # Without "open" or "closed" the days are still when something happens ("support
    # answers from Monday to Friday"): a day outside them is not one of them.
    cues = [m.group() for m in _OPEN_CUE.finditer(clause)]
    return _Days(named, excepted, times, words + cues)


def _named_days(text: str) -> tuple[set[int], list[str]]:
    """The weekdays `text` names, ranges and "every day" expanded, and the words naming them."""
    days: set[int] = set()
    words: list[str] = []
    for match in _EVERY_DAY.finditer(text):
        days.update(range(7))
        words.append(match.group())
    for pattern, span in ((_WEEKDAYS, range(5)), (_WEEKENDS, range(5, 7))):
        for match in pattern.finditer(text):
            days.update(span)
            words.append(match.group())
    taken: list[tuple[int, int]] = []
    for match in _RANGE.finditer(text):
        first, last = _day(match.group("a")), _day(match.group("b"))
        days.update((first + i) % 7 for i in range((last - first) % 7 + 1))
        words.extend((match.group("a").rstrip("."), match.group("b").rstrip(".")))
        taken.append(match.span())
    for match in _DAY_TOKEN.finditer(text):
        if not any(start <= match.start() < end for start, end in taken):
            days.add(_day(match.group()))
            words.append(match.group().rstrip("."))
    return days, words


def _day(word: str) -> int:
    word = word.lower().rstrip(".")
    return _DAY_WORDS.get(word, _DAY_WORDS.get(word.rstrip("s"), 0))


def _times(clause: str) -> list[int]:
    """The times of day in `clause`, in minutes: "9 PM", "21:00", "noon". A bare number is
    no time ("2 hours"); a time without AM/PM is kept as written (matched either way)."""
    found: list[int] = []
    for match in _TIME.finditer(clause):
        if match.group("word"):
            found.append(720 if match.group("word").lower() == "noon" else 0)
            continue
        if match.group("m") is None and match.group("half") is None:
            continue
        hour, minute = int(match.group("h")), int(match.group("m") or 0)
        half = (match.group("half") or "").lower().replace(".", "").replace(" ", "")
        if half == "pm" and hour < 12:
            hour += 12
        elif half == "am" and hour == 12:
            hour = 0
        found.append(hour * 60 + minute + (_BARE if not half else 0))
    return found


_BARE = 100_000
"""Marks a time written without AM/PM: "9:00" may be 9 AM or 9 PM."""


def _hours_conflict(day: int, times: list[int], record: tuple[int, int] | None) -> str | None:
    if len(times) != 2 or record is None:
        return None
    if all(_same_time(said, held) for said, held in zip(times, record, strict=True)):
        return None
    said = "-".join(_clock(t % _BARE) for t in times)
    held = "-".join(_clock(t) for t in record)
    return f"claim says {DAYS[day].title()} {said}; the record says {held}"


def _same_time(said: int, held: int) -> bool:
    if said >= _BARE:
        said -= _BARE
        return held % 720 == said % 720
    return held % 1440 == said % 1440


def _clock(minutes: int) -> str:
    return f"{minutes // 60 % 24}:{minutes % 60:02d}"
