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
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "a few": 3,
}
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


def _weekend(d: date, weeks: int) -> str:
    """Saturday and Sunday of the week ``weeks`` from ``d``'s (Monday to Sunday): a weekend is
    two days, not the week around it."""
    saturday = d - timedelta(days=d.weekday()) + timedelta(days=5 + 7 * weeks)
    return f"{saturday.isoformat()}/{(saturday + timedelta(days=1)).isoformat()}"


def _add_months(d: date, months: int) -> date:
    m = d.month - 1 + months
    y, m = d.year + m // 12, m % 12 + 1
    return date(y, m, min(d.day, calendar.monthrange(y, m)[1]))


def _count(text: str) -> int | None:
    text = text.strip()
    if text.isdigit():
        return int(text)
    return _NUMBERS.get(text)


_AGO = re.compile(
    r"\b(\d+|a couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
    r"\s+(day|week|month|year)s?\s+ago\b"
)
_IN = re.compile(
    r"\bin\s+(\d+|a couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten)"
    r"\s+(day|week|month|year)s?\b"
)
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
        "today": anchor,
        "tonight": anchor,
        "this morning": anchor,
        "this afternoon": anchor,
        "this evening": anchor,
        "now": anchor,
        "yesterday": anchor - timedelta(days=1),
        "last night": anchor - timedelta(days=1),
        "tomorrow": anchor + timedelta(days=1),
        "the day before yesterday": anchor - timedelta(days=2),
    }
    for key, value in simple.items():
        if re.search(rf"\b{key}\b", text):
            return value.isoformat()
    if re.search(r"\b(?:last|(?:this )?past) weekend\b", text):
        return _weekend(anchor, -1)
    if re.search(r"\bthis weekend\b", text):
        # on a weekday, a plan's is the coming one and a past one's the one just gone
        return _weekend(anchor, 0 if orientation == "future" or anchor.weekday() >= 5 else -1)
    if re.search(r"\bnext weekend\b", text):
        return _weekend(anchor, 1)
    if re.search(r"\blast week\b", text):
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
    if m := _SEASON.search(text):
        return _season(m, anchor, orientation)
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


_SEASON = re.compile(r"\b(?:(last|this|next)\s+)?(spring|summer|autumn|fall|winter)\b(?:\s+(?:of\s+)?(\d{4}))?")
_SEASON_MONTHS = {"spring": (3, 5), "summer": (6, 8), "autumn": (9, 11), "fall": (9, 11), "winter": (12, 2)}


def _season(m: re.Match, anchor: date, orientation: str) -> str:
    """A season as a date range, relative to the anchor ("last spring", "this summer", "summer 2024")."""
    which, name, year_text = m.group(1), m.group(2), m.group(3)
    first, last = _SEASON_MONTHS[name]

    def span(year: int) -> tuple[date, date]:
        end_year = year + 1 if last < first else year
        return date(year, first, 1), date(end_year, last, calendar.monthrange(end_year, last)[1])

    if year_text:
        year = int(year_text)
    else:
        started = anchor.year if anchor.month >= first else anchor.year - 1  # latest start not after anchor
        ongoing = anchor <= span(started)[1]
        if which == "last":
            year = started - 1 if ongoing else started
        elif which == "next":
            year = started + 1
        elif which == "this":
            year = started if ongoing or last < first else anchor.year
        else:
            year = started if ongoing or orientation != "future" else started + 1
    a, b = span(year)
    return f"{a.isoformat()}/{b.isoformat()}"


def _nearest_year(anchor: date, month: int, orientation: str) -> int:
    """A month named without a year: the latest one not after the session for the past, the next
    one for the future."""
    if orientation == "future":
        return anchor.year if month >= anchor.month else anchor.year + 1
    return anchor.year if month <= anchor.month else anchor.year - 1


def time_range(value: str | None) -> tuple[int, int] | None:
    """Day ordinals (first, last) covered by a resolved time: date, month, year or range."""
    if not value or not is_resolved(value.strip()):
        return None
    parts = value.strip().split("/")

    def bounds(text: str) -> tuple[date, date]:
        pieces = [int(p) for p in text.split("-")]
        if len(pieces) == 3:
            d = date(*pieces)
            return d, d
        if len(pieces) == 2:
            y, mth = pieces
            return date(y, mth, 1), date(y, mth, calendar.monthrange(y, mth)[1])
        return date(pieces[0], 1, 1), date(pieces[0], 12, 31)

    try:
        first = bounds(parts[0])[0]
        last = bounds(parts[-1])[1]
    except ValueError:
        return None
    return first.toordinal(), last.toordinal()


def _spoken_one(value: str) -> str:
    parts = value.split("-")
    if len(parts) == 3:
        return f"{int(parts[2])} {calendar.month_name[int(parts[1])]} {parts[0]}"
    if len(parts) == 2:
        return f"{calendar.month_name[int(parts[1])]} {parts[0]}"
    return parts[0]


def spoken(value: str | None) -> str:
    """An ISO date, month, year or range as people write it: ``2023-05-07`` → "7 May 2023",
    ``2023-05`` → "May 2023", a range → "1–7 May 2023". Answers copy the packet's form, and
    dialogue, gold answers and counselors write dates this way; anything else is returned as is."""
    if not value:
        return ""
    text = value.strip()
    head = text[:10] if re.match(r"^\d{4}-\d{2}-\d{2}T", text) else text
    if not _ISO.match(head) or time_range(head) is None:  # not a real date: as written
        return text
    if "/" in head:
        return _spoken_range(*head.split("/"))
    return _spoken_one(head)


def _spoken_range(start: str, end: str) -> str:
    """A range written once where its ends share a month or year: "1–7 May 2023",
    "28 March – 2 April 2023", "March–May 2023"; a packet line holds it in a third of the words."""
    a, b = start.split("-"), end.split("-")
    if len(a) == len(b) >= 2 and a[0] == b[0]:
        if len(a) == 3 and a[1] == b[1]:
            return f"{int(a[2])}–{_spoken_one(end)}"
        head = _spoken_one(start).rsplit(" ", 1)[0]  # without the year
        return f"{head}–{_spoken_one(end)}" if len(a) == 2 else f"{head} – {_spoken_one(end)}"
    return f"{_spoken_one(start)} – {_spoken_one(end)}"
