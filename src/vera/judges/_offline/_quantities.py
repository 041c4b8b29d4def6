"""When two differently written quantities state the same thing: a rounding, or a unit change.

"8,849 metres" rounds "8,848.86 metres", and "2 hours" is "120 minutes": neither is a
different number. A wrong number stays one: "30 days" does not round "34 days" (a rounding
moves a value by at most 1 %), units of different kinds never agree, and a year or a date is
never rounded.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from vera.judges._offline._tokens import Number, stem

_ROUNDING = 0.01
"""The most a rounding may move a value, relative to it."""


def _scale(pairs: str) -> dict[str, tuple[str, float]]:
    table: dict[str, tuple[str, float]] = {}
    for entry in pairs.split():
        kind, names, factor = entry.split(":")
        for name in names.split(","):
            table[stem(name)] = (kind, float(factor))
    return table


_UNITS = _scale(
    "time:ms,millisecond,milliseconds:0.001 time:second,seconds,sec,secs:1 "
    "time:minute,minutes,min,mins:60 time:hour,hours,hr,hrs:3600 time:day,days:86400 "
    "time:week,weeks:604800 time:month,months:2592000 time:year,years:31536000 "
    "length:mm,millimetre,millimetres,millimeter,millimeters:0.001 "
    "length:cm,centimetre,centimetres,centimeter,centimeters:0.01 "
    "length:m,metre,metres,meter,meters:1 length:km,kilometre,kilometres,kilometer,kilometers:1000 "
    "mass:g,gram,grams:1 mass:kg,kilogram,kilograms:1000 mass:tonne,tonnes:1000000"
)


_CALENDAR = {"month": 1.0, "months": 1.0, "year": 12.0, "years": 12.0}


def _value(number: Number) -> float | None:
    try:
        return float(number.key)
    except ValueError:
        return None


def _in_base_unit(number: Number) -> tuple[str | None, float] | None:
    value = _value(number)
    if value is None:
        return None
    unit = number.unit
    if unit is not None and unit in _UNITS:
        kind, factor = _UNITS[unit]
        return kind, value * factor
    return unit, value


def _precision(number: Number) -> int:
    """The decimal place `number` is written to: 2 for "3.25", 0 for "8,849", -2 for "8,800"."""
    digits = number.surface.replace(",", "")
    if "." in digits:
        return len(digits.split(".")[1].rstrip("%$€£ abcdefghijklmnopqrstuvwxyz"))
    integer = digits.rstrip("%$€£ abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    integer = "".join(c for c in integer if c.isdigit())
    return -(len(integer) - len(integer.rstrip("0"))) if integer.strip("0") else 0


def agrees(claim: Number, context: Number) -> bool:
    """Whether `claim` states `context`'s quantity: the same value in the same or a convertible
    unit, or `context`'s value rounded to the places `claim` is written to."""
    if claim.key == context.key and claim.unit == context.unit:
        return True
    if (claim.unit or "").startswith("@") or (context.unit or "").startswith("@"):
        return False  # a year or a date is exact: 2020 does not round 2024
    if claim.unit in _CALENDAR and context.unit in _CALENDAR:
        # Months and years count in months: "12 months" is "1 year" (a month is 30 days only
        # beside days and weeks: "90 days" is "3 months").
        said_months = (_value(claim) or 0.0) * _CALENDAR[claim.unit or ""]
        return math.isclose(said_months, (_value(context) or 0.0) * _CALENDAR[context.unit or ""])
    said, stated = _in_base_unit(claim), _in_base_unit(context)
    if said is None or stated is None or said[0] != stated[0]:
        return False
    value, target = said[1], stated[1]
    if math.isclose(value, target, rel_tol=1e-9):
        return True
    if target == 0 or abs(value - target) > _ROUNDING * abs(target):
        return False
    # Only a rounding of the context's value, expressed in the claim's unit, agrees.
    written = _value(claim) or 0.0
    in_claim_unit = target * written / value
    return round(in_claim_unit, _precision(claim)) == written


def same_kind(a: Number, b: Number) -> bool:
    """Whether two quantities measure one thing: the same unit, or units of one kind ("2
    years" and "12 months" are both durations)."""
    if a.unit == b.unit:
        return True
    kinds = (_UNITS.get(a.unit or ""), _UNITS.get(b.unit or ""))
    return kinds[0] is not None and kinds[1] is not None and kinds[0][0] == kinds[1][0]


def agreeing_keys(claim: Iterable[Number], context: Iterable[Number]) -> frozenset[str]:
    """The keys of the claim's numbers that some context number states in other words."""
    stated = tuple(context)
    return frozenset(n.key for n in claim if any(agrees(n, c) for c in stated))
