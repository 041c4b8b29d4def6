"""Number reading in any script: locale separators, full-width digits and CJK numerals.

`read_numbers` finds each number a text states, with its exact span and value: `1,234.5`
(English), `1.234,5` (German), `1 234,5` (French), `１２３` (full-width), `三十` and `3万`
(Chinese and Japanese numerals), `5천` (Korean), and digits of any script (`٣`, `३`).
`canonical_numbers` rewrites them in one form (`1234.5`) so texts in different conventions
compare equal; the offline judge does that before it tokenises non-English text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class NumberMention:
    """A number stated in text: `text[start:end]` said it, `value` is what it means."""

    start: int
    end: int
    value: float


# Languages that write a decimal comma ("1,5") and group thousands with "." or a space.
def _codes(text: str) -> frozenset[str]:
    return frozenset(text.split())


DECIMAL_COMMA: frozenset[str] = _codes(
    "de fr es pt it nl ru pl cs sk sl hr sr bs bg uk be ro hu tr da sv nb nn no fi is "
    "id vi el lt lv et ca gl eu af az kk uz mk sq"
)
_SPACE_GROUPING = DECIMAL_COMMA - {"de", "es", "it", "nl", "pt", "tr", "id", "vi", "ro", "el"}
_CJK_DIGITS = {
    "〇": 0, "零": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5,
    "六": 6, "七": 7, "八": 8, "九": 9,
}  # fmt: skip
_SMALL_UNITS = {"十": 10, "百": 100, "千": 1000, "십": 10, "백": 100, "천": 1000}
_LARGE_UNITS = {"万": 10**4, "萬": 10**4, "億": 10**8, "亿": 10**8, "兆": 10**12, "만": 10**4,
                "억": 10**8, "조": 10**12}  # fmt: skip
_HAN_NUMERALS = "".join(_CJK_DIGITS) + "十百千万萬億亿兆"
_HANGUL_UNITS = "십백천만억조"
_DIGITS = r"\d+(?:[,.'\u00a0\u202f]\d{3})*(?:[.,]\d+)?"
_SPACED_DIGITS = r"\d+(?:[ ,.'\u00a0\u202f]\d{3})*(?:[.,]\d+)?"
# Digits (any script), optionally followed by numeral units (3万, 1.5億, 5천); or a run of Han
# numerals (三十, 二十五, 一百二十). Hangul units count only after digits: alone they are
# syllables of ordinary words.
_NUMBER = re.compile(
    rf"(?<![\d.,])(?:{_DIGITS})(?:[{_HAN_NUMERALS}{_HANGUL_UNITS}]+)?(?![\d])"
    rf"|[{_HAN_NUMERALS}]+"
)
_NUMBER_SPACED = re.compile(
    rf"(?<![\d.,])(?:{_SPACED_DIGITS})(?:[{_HAN_NUMERALS}{_HANGUL_UNITS}]+)?(?![\d])"
    rf"|[{_HAN_NUMERALS}]+"
)
_FULL_WIDTH = str.maketrans("０１２３４５６７８９，．", "0123456789,.")
_LEADING_DIGITS = re.compile(r"[\d,.'\u00a0\u202f ]+")


def read_numbers(text: str, language: str | None = None) -> list[NumberMention]:
    """Every number `text` states, in order, with exact spans into `text`.

    `language` (an ISO 639-1 code) settles a lone separator: "1.234" is 1234 in German and
    1.234 in English; without it the English convention applies where the text does not
    settle it ("1.234,5" is read as 1234.5 whatever the language). A lone 一 ("one", also part
    of many words) is not read as a number.
    """
    pattern = _NUMBER_SPACED if language in _SPACE_GROUPING else _NUMBER
    folded = text.translate(_FULL_WIDTH)  # one character for one: spans stay exact
    found: list[NumberMention] = []
    for match in pattern.finditer(folded):
        surface = match.group().rstrip(" ")
        if surface in ("一", "万", "萬", "千", "百", "十", "兆", "億", "亿"):
            continue
        value = parse_number(surface, language)
        if value is not None:
            found.append(NumberMention(match.start(), match.start() + len(surface), value))
    return found


def canonical_numbers(text: str, language: str | None = None) -> str:
    """`text` with each number rewritten as plain ASCII digits and a decimal point."""
    mentions = read_numbers(text, language)
    if not mentions:
        return text
    parts: list[str] = []
    last = 0
    for mention in mentions:
        parts.append(text[last : mention.start])
        parts.append(_format(mention.value))
        last = mention.end
    parts.append(text[last:])
    return "".join(parts)


def parse_number(surface: str, language: str | None = None) -> float | None:
    """The value of one number as written ("1.234,5", "３０", "三十", "3万"), or None."""
    surface = surface.translate(_FULL_WIDTH).strip()
    if not surface:
        return None
    digits = _LEADING_DIGITS.match(surface)
    if digits is None:
        return _read_numerals(surface, 0.0)
    head = digits.group().strip()
    value = _read_digits(head, language)
    rest = surface[digits.end() :]
    if value is None or not rest:
        return value
    return _read_numerals(rest, value)


def _read_digits(surface: str, language: str | None) -> float | None:
    decimal = "," if language in DECIMAL_COMMA else "."
    marks = [c for c in surface if c in ",."]
    if len(set(marks)) == 2:
        decimal = marks[-1]  # "1.234,5" and "1,234.5" say which is which
    elif len(marks) == 1 and marks[0] != decimal:
        # "1,234" in English, "1.234" in German: a group of exactly three digits.
        tail = surface.rsplit(marks[0], 1)[1]
        decimal = decimal if len(tail) == 3 else marks[0]
    whole, _, fraction = surface.rpartition(decimal) if decimal in surface else (surface, "", "")
    whole = "".join(c for c in whole if c.isdigit())
    fraction = "".join(c for c in fraction if c.isdigit())
    try:
        return float(f"{whole or '0'}.{fraction or '0'}")
    except ValueError:
        return None


def _read_numerals(numerals: str, leading: float) -> float | None:
    """Han or Hangul numerals, after `leading` digits if any: 三十 = 30, 3万 = 30000."""
    total = 0.0
    section = 0.0
    current = leading
    for char in numerals:
        if char in _CJK_DIGITS:
            current = current * 10 + _CJK_DIGITS[char] if current else _CJK_DIGITS[char]
        elif char in _SMALL_UNITS:
            section += (current or 1) * _SMALL_UNITS[char]
            current = 0
        elif char in _LARGE_UNITS:
            total += (section + current or 1) * _LARGE_UNITS[char]
            section = current = 0
        else:
            return None
    return total + section + current


def _format(value: float) -> str:
    return str(int(value)) if value.is_integer() else repr(value)
