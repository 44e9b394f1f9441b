"""Time anchors: resolve what a turn says ("last Friday", "two weeks ago", "October 3rd") to a
calendar date, month, year or range, relative to the session's date.

The extractor is asked to resolve times itself; this module checks its answer and resolves the
common expressions deterministically when the model could not (small models often cannot).
Results are ISO strings: ``2025-09-05``, ``2025-09``, ``2025``, or ranges ``2025-09-01/2025-09-07``.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, datetime, timedelta

_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3}
_ISO = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?(/\d{4}(-\d{2}(-\d{2})?)?)?$")


def session_date(time: str | None) -> date | None:
    if not time:
        return None
    try:
        return datetime.fromisoformat(time).date()
    except ValueError:
        return None


def is_resolved(value: str | None) -> bool:
    return bool(value) and bool(_ISO.match(value.strip()))


def _week(d: date) -> str:
    monday = d - timedelta(days=d.weekday())
    return f"{monday.isoformat()}/{(monday + timedelta(days=6)).isoformat()}"


def _add_months(d: date, months: int) -> date:
    m = d.month - 1 + months
    y, m = d.year + m // 12, m % 12 + 1
    return date(y, m, min(d.day, calendar.monthrange(y, m)[1]))


def _count(text: str) -> int | None:
    text = text.strip()
    if text.isdigit():
        return int(text)
    return _NUMBERS.get(text)


_AGO = re.compile(r"\b(\d+|a couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
                  r"\s+(day|week|month|year)s?\s+ago\b")
_IN = re.compile(r"\bin\s+(\d+|a couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten)"
                 r"\s+(day|week|month|year)s?\b")
_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?([a-z]+)\b(?:,?\s+(\d{4}))?")
_MONTH_DAY = re.compile(r"\b([a-z]+)\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4}))?")
_MONTH_YEAR = re.compile(r"\b(?:(?:in|last|this|since|early|late|mid|until)\s+)?([a-z]+)(?:\s+(\d{4}))?\b")


def resolve(expression: str | None, anchor: date | None, orientation: str = "past") -> str | None:
    """The calendar time an expression refers to, seen from ``anchor``; None when unsure."""
    if not expression or anchor is None:
        return None
    text = " ".join(expression.lower().replace("’", "'").split())
    if is_resolved(text):
        return text
    try:  # a full timestamp (small models repeat the session time) is its date
        return datetime.fromisoformat(text.upper()).date().isoformat()
    except ValueError:
        pass
    simple = {
        "today": anchor, "tonight": anchor, "this morning": anchor, "this afternoon": anchor,
        "this evening": anchor, "now": anchor, "yesterday": anchor - timedelta(days=1),
        "last night": anchor - timedelta(days=1), "tomorrow": anchor + timedelta(days=1),
        "the day before yesterday": anchor - timedelta(days=2),
    }
    for key, value in simple.items():
        if re.search(rf"\b{key}\b", text):
            return value.isoformat()
    if re.search(r"\blast week(end)?\b", text):
        return _week(anchor - timedelta(days=7))
    if re.search(r"\bthis week\b", text):
        return _week(anchor)
    if re.search(r"\bnext week\b", text):
        return _week(anchor + timedelta(days=7))
    if re.search(r"\blast month\b", text):
        return _add_months(anchor, -1).strftime("%Y-%m")
    if re.search(r"\bthis month\b", text):
        return anchor.strftime("%Y-%m")
    if re.search(r"\bnext month\b", text):
        return _add_months(anchor, 1).strftime("%Y-%m")
    if re.search(r"\blast year\b", text):
        return str(anchor.year - 1)
    if re.search(r"\bthis year\b", text):
        return str(anchor.year)
    if re.search(r"\bnext year\b", text):
        return str(anchor.year + 1)
    if m := _AGO.search(text):
        n, unit = _count(m.group(1)), m.group(2)
        if n is not None:
            if unit == "day":
                return (anchor - timedelta(days=n)).isoformat()
            if unit == "week":
                return (anchor - timedelta(weeks=n)).isoformat()
            if unit == "month":
                return _add_months(anchor, -n).strftime("%Y-%m")
            return str(anchor.year - n)
    if m := _IN.search(text):
        n, unit = _count(m.group(1)), m.group(2)
        if n is not None:
            if unit == "day":
                return (anchor + timedelta(days=n)).isoformat()
            if unit == "week":
                return (anchor + timedelta(weeks=n)).isoformat()
            if unit == "month":
                return _add_months(anchor, n).strftime("%Y-%m")
            return str(anchor.year + n)
    for name, wd in _WEEKDAYS.items():
        if re.search(rf"\b{name}s?\b", text):
            if re.search(rf"\b(next|coming|this coming)\s+{name}\b", text) or (
                orientation == "future" and not re.search(rf"\blast\s+{name}\b", text)
            ):
                ahead = (wd - anchor.weekday()) % 7 or 7
                return (anchor + timedelta(days=ahead)).isoformat()
            back = (anchor.weekday() - wd) % 7 or 7
            return (anchor - timedelta(days=back)).isoformat()
    for pattern, day_group, month_group in ((_DAY_MONTH, 1, 2), (_MONTH_DAY, 2, 1)):
        for m in pattern.finditer(text):
            month = _MONTHS.get(m.group(month_group))
            if month:
                year = int(m.group(3)) if m.group(3) else _nearest_year(anchor, month, orientation)
                try:
                    return date(year, month, int(m.group(day_group))).isoformat()
                except ValueError:
                    return None
    for m in _MONTH_YEAR.finditer(text):
        word, year_text = m.group(1), m.group(2)
        month = _MONTHS.get(word) if len(word) >= 3 else None
        # "may" and "march" are also verbs: count them only with a year or a preposition.
        if month and (word not in ("may", "march") or year_text or m.group(0) != word):
            year = int(year_text) if year_text else _nearest_year(anchor, month, orientation)
            return f"{year:04d}-{month:02d}"
    if m := re.search(r"\b(19|20)\d{2}\b", text):
        return m.group(0)
    return None


def _nearest_year(anchor: date, month: int, orientation: str) -> int:
    """A month named without a year: the latest one not after the session for the past, the next
    one for the future."""
    if orientation == "future":
        return anchor.year if month >= anchor.month else anchor.year + 1
    return anchor.year if month <= anchor.month else anchor.year - 1
