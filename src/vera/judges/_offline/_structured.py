"""Structured contexts read as the facts they state: JSON records, key-value lists and tables.

Prose is split into sentences; a record is not prose. Read as text, `{"OutdoorSeating": false}`
is one long "sentence" whose words are "outdoorseating" and "false", so a claim that the place
"has no outdoor seating" shares nothing with it, and one that it "offers outdoor seating"
shares as much as one that it does not. Here every field becomes one fact: its span in the
context (what the judge quotes) and a reading of it in words, which is what the judge analyses:

| field                                 | reading                        |
|---------------------------------------|--------------------------------|
| `"OutdoorSeating": false`             | `attributes: not outdoor seating` |
| `"WiFi": "free"`                      | `attributes WiFi: free`        |
| `"Monday": "17:0-21:0"`               | `hours Monday: 17:00 (5 PM)-21:00 (9 PM)` |
| `"state": "CA"`                       | `state: CA (California)`       |
| `"review_text": "Great food. Slow."`  | each sentence of the text      |
| `Price: $20` (a key-value line)       | `Price: $20`                   |
| a table row under `| Plan | Price |`  | `Plan Pro Price $20`           |

A context of at most `index.LONG_TEXT` characters is structured when it parses as a JSON object
or array, when most of its (at least two) lines are `key: value`, or when it holds a Markdown
table (a header and a row at least); anything else is prose.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from vera._text._segment import split_units


@dataclass(frozen=True, slots=True)
class Fact:
    """One field of a structured context: where it is, and what it says in words."""

    start: int
    end: int
    reading: str


_JSON_TOKEN = re.compile(r'("(?:[^"\\]|\\.)*")|([{}\[\]:,])|([^\s{}\[\]:,"]+)')
_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|.)")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z][a-z]{2,})")
"""Where a camel-case name splits into words: "OutdoorSeating", but not "WiFi"."""
_CLOCK = re.compile(r"\b([01]?\d|2[0-4]):([0-5]?\d)\b(?!:)")
_KEY_VALUE = re.compile(r"[ \t]*[^\s:|][^:|\n]{0,40}:[ \t]+\S")
_TABLE_ROW = re.compile(r"[ \t]*\|(.*)\|[ \t]*$")
_TABLE_RULE = re.compile(r"[\s|:\-]+")
_PROSE_VALUE = 80
"""A string value longer than this is prose (a review, a description): read by sentence."""

_US_STATES = dict(
    pair.split("=")
    for pair in [
        "AL=Alabama",
        "AK=Alaska",
        "AZ=Arizona",
        "AR=Arkansas",
        "CA=California",
        "CO=Colorado",
        "CT=Connecticut",
        "DE=Delaware",
        "FL=Florida",
        "GA=Georgia",
        "HI=Hawaii",
        "ID=Idaho",
        "IL=Illinois",
        "IN=Indiana",
        "IA=Iowa",
        "KS=Kansas",
        "KY=Kentucky",
        "LA=Louisiana",
        "ME=Maine",
        "MD=Maryland",
        "MA=Massachusetts",
        "MI=Michigan",
        "MN=Minnesota",
        "MS=Mississippi",
        "MO=Missouri",
        "MT=Montana",
        "NE=Nebraska",
        "NV=Nevada",
        "NH=New_Hampshire",
        "NJ=New_Jersey",
        "NM=New_Mexico",
        "NY=New_York",
        "NC=North_Carolina",
        "ND=North_Dakota",
        "OH=Ohio",
        "OK=Oklahoma",
        "OR=Oregon",
        "PA=Pennsylvania",
        "RI=Rhode_Island",
        "SC=South_Carolina",
        "SD=South_Dakota",
        "TN=Tennessee",
        "TX=Texas",
        "UT=Utah",
        "VT=Vermont",
        "VA=Virginia",
        "WA=Washington",
        "WV=West_Virginia",
        "WI=Wisconsin",
        "WY=Wyoming",
        "DC=District_of_Columbia",
        "AB=Alberta",
        "BC=British_Columbia",
        "ON=Ontario",
        "QC=Quebec",
    ]
)


def structured_facts(text: str) -> list[Fact] | None:
    """The facts of `text` if it is structured (see the module docstring), else None."""
    head = text.lstrip()[:1]
    if head in ("{", "[") and _is_json(text):
        return _json_facts(text)
    lines = [line for line in text.splitlines() if line.strip()]
    if sum(1 for line in lines if _TABLE_ROW.match(line)) >= 2:  # a header and a row
        return _table_facts(text)
    if len(lines) >= 2 and sum(1 for line in lines if _KEY_VALUE.match(line)) * 2 > len(lines):
        return _line_facts(text)
    return None


def _is_json(text: str) -> bool:
    try:
        return isinstance(json.loads(text), (dict, list))
    except ValueError:
        return False


def _json_facts(text: str) -> list[Fact]:
    # A token walk rather than `json.loads`, because the judge quotes each field from the
    # context as it is written, and only the walk knows where a field starts and ends.
    facts: list[Fact] = []
    tokens = list(_JSON_TOKEN.finditer(text))
    parents: list[str | None] = []
    key: str | None = None
    key_start = 0
    for i, token in enumerate(tokens):
        raw = token.group()
        if raw in ("{", "["):
            parents.append(key)
            key = None
        elif raw in ("}", "]"):
            if parents:
                parents.pop()
            key = None
        elif raw == ",":
            key = None
        elif raw == ":":
            continue
        elif raw.startswith('"') and i + 1 < len(tokens) and tokens[i + 1].group() == ":":
            key, key_start = _decode(raw), token.start()
        else:
            path = [p for p in parents if p] + ([key] if key else [])
            start = key_start if key else token.start()
            facts.extend(_leaf(text, path, raw, start, token.start(), token.end()))
            key = None
    return facts


def _leaf(text: str, path: list[str], raw: str, start: int, at: int, end: int) -> list[Fact]:
    if raw in ("null", '"None"', '""'):
        return []
    value = _decode(raw) if raw.startswith('"') else raw
    if raw.startswith('"') and len(value) > _PROSE_VALUE:
        return _prose(text, at + 1, end - 1)
    name = _words(path[-1]) if path else ""
    parent = _words(path[-2]) if len(path) > 1 else ""
    if value == "false":
        return [Fact(start, end, f"{parent}: not {name}")]
    if value == "true":
        return [Fact(start, end, f"{parent} {name}: yes")]
    if path and path[-1].lower() == "state" and value in _US_STATES:
        value = f"{value} ({_US_STATES[value].replace('_', ' ')})"
    return [Fact(start, end, f"{parent} {name}: {_clock(value)}".strip())]


def _prose(text: str, start: int, end: int) -> list[Fact]:
    # Escapes become spaces of the same length, so every offset still points into `text`.
    inner = _ESCAPE.sub(lambda m: " " * len(m.group()), text[start:end])
    return [
        Fact(start + unit.start, start + unit.end, inner[unit.start : unit.end])
        for unit in split_units(inner)
    ]


def _decode(raw: str) -> str:
    try:
        value = json.loads(raw)
    except ValueError:
        return raw.strip('"')
    return value if isinstance(value, str) else raw.strip('"')


def _words(key: str) -> str:
    """A field name as words: "business_stars" and "BusinessStars" read "business stars"."""
    return _CAMEL.sub(" ", key).replace("_", " ").replace("-", " ")


def _clock(value: str) -> str:
    """Times of day with their 12-hour reading: "17:0" reads "17:00 (5 PM)"."""

    def spell(match: re.Match[str]) -> str:
        hour, minute = int(match.group(1)), int(match.group(2))
        twelve = hour % 12 or 12
        half = "AM" if hour < 12 or hour == 24 else "PM"
        spoken = f"{twelve}" if minute == 0 else f"{twelve}:{minute:02d}"
        return f"{hour}:{minute:02d} ({spoken} {half})"

    return _CLOCK.sub(spell, value)


def _line_facts(text: str) -> list[Fact]:
    facts: list[Fact] = []
    start = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        stripped = body.strip()
        if stripped:
            offset = start + len(body) - len(body.lstrip())
            facts.append(Fact(offset, offset + len(stripped), _clock(stripped)))
        start += len(line)
    return facts


def _table_facts(text: str) -> list[Fact]:
    """Each table row read with its column headers; the lines around the table as prose."""
    facts: list[Fact] = []
    header: list[str] | None = None
    start = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        row = _TABLE_ROW.match(body)
        if row is None:
            header = None
            if body.strip():
                facts.extend(
                    Fact(start + u.start, start + u.end, body[u.start : u.end])
                    for u in split_units(body)
                )
        elif not _TABLE_RULE.fullmatch(body):
            cells = [cell.strip() for cell in row.group(1).split("|")]
            if header is None:
                header = cells
            else:
                pairs = zip(header, cells, strict=False)
                reading = " ".join(f"{h} {_clock(c)}" if h else _clock(c) for h, c in pairs)
                facts.append(Fact(start, start + len(body), reading))
        start += len(line)
    return facts
