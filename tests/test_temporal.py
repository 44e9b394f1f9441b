from datetime import date

import pytest

from ftamem_core.construction.temporal import is_resolved, resolve

FRIDAY_12 = date(2025, 9, 12)


@pytest.mark.parametrize(
    "expression, orientation, expected",
    [
        ("last Friday", "past", "2025-09-05"),
        ("yesterday", "past", "2025-09-11"),
        ("last night", "past", "2025-09-11"),
        ("tomorrow", "future", "2025-09-13"),
        ("two weeks ago", "past", "2025-08-29"),
        ("3 days ago", "past", "2025-09-09"),
        ("a few months ago", "past", "2025-06"),
        ("last week", "past", "2025-09-01/2025-09-07"),
        ("next week", "future", "2025-09-15/2025-09-21"),
        ("last weekend", "past", "2025-09-06/2025-09-07"),
        ("this past weekend", "past", "2025-09-06/2025-09-07"),
        ("this weekend", "future", "2025-09-13/2025-09-14"),
        ("this weekend", "past", "2025-09-06/2025-09-07"),
        ("next weekend", "future", "2025-09-20/2025-09-21"),
        ("last month", "past", "2025-08"),
        ("last year", "past", "2024"),
        ("in July", "past", "2025-07"),
        ("in October", "past", "2024-10"),
        ("in October", "future", "2025-10"),
        ("October 3rd", "future", "2025-10-03"),
        ("on the 14th of November", "future", "2025-11-14"),
        ("on Sunday", "future", "2025-09-14"),
        ("on Sunday", "past", "2025-09-07"),
        ("next Monday", "past", "2025-09-15"),
        ("since March 2024", "past", "2024-03"),
        ("in 2019", "past", "2019"),
        ("2025-07", "past", "2025-07"),
        ("2025-09-12T19:00", "past", "2025-09-12"),
        ("I may come", "past", None),
        ("at some point", "past", None),
        ("unknown", "past", None),
    ],
)
def test_resolve(expression, orientation, expected):
    assert resolve(expression, FRIDAY_12, orientation) == expected


def test_no_anchor_no_guess():
    assert resolve("yesterday", None) is None
    assert is_resolved("2025-09-01/2025-09-07") and is_resolved("2025") and not is_resolved("last week")


@pytest.mark.parametrize(
    "expression, anchor, expected",
    [
        ("last spring", date(2025, 10, 20), "2025-03-01/2025-05-31"),
        ("last spring", date(2025, 4, 20), "2024-03-01/2024-05-31"),
        ("this summer", date(2025, 4, 20), "2025-06-01/2025-08-31"),
        ("last winter", date(2025, 10, 20), "2024-12-01/2025-02-28"),
        ("in the summer of 2024", date(2025, 10, 20), "2024-06-01/2024-08-31"),
        ("as of October 12, 2025", date(2025, 10, 20), "2025-10-12"),
    ],
)
def test_seasons_and_written_dates(expression, anchor, expected):
    assert resolve(expression, anchor) == expected


@pytest.mark.parametrize(
    "expression, anchor, orientation, expected",
    [
        ("last weekend", date(2025, 9, 14), "past", "2025-09-06/2025-09-07"),  # said on a Sunday
        ("this weekend", date(2025, 9, 13), "past", "2025-09-13/2025-09-14"),  # said on a Saturday
        ("this weekend", date(2025, 9, 14), "past", "2025-09-13/2025-09-14"),
        ("this weekend", date(2025, 9, 15), "past", "2025-09-13/2025-09-14"),  # said on a Monday
        ("this weekend", date(2025, 9, 15), "future", "2025-09-20/2025-09-21"),
    ],
)
def test_a_weekend_is_its_saturday_and_sunday_seen_from_any_day(expression, anchor, orientation, expected):
    assert resolve(expression, anchor, orientation) == expected


def test_time_range():
    from ftamem_core.construction.temporal import time_range

    assert time_range("2025-09") == (date(2025, 9, 1).toordinal(), date(2025, 9, 30).toordinal())
    assert time_range("2024") == (date(2024, 1, 1).toordinal(), date(2024, 12, 31).toordinal())
    assert time_range("2025-09-01/2025-09-07")[1] - time_range("2025-09-01/2025-09-07")[0] == 6
    assert time_range("unknown") is None and time_range("2025-02-30") is None


@pytest.mark.parametrize(
    "value, expected",
    [
        ("2023-05-07", "7 May 2023"),
        ("2023-05-08T13:56:00", "8 May 2023"),
        ("2023-05", "May 2023"),
        ("2023", "2023"),
        ("2023-05-01/2023-05-07", "1–7 May 2023"),
        ("2023-03-28/2023-04-02", "28 March – 2 April 2023"),
        ("2023-03/2023-05", "March–May 2023"),
        ("2022-12-30/2023-01-02", "30 December 2022 – 2 January 2023"),
        ("2022/2023", "2022 – 2023"),
        ("2025-13", "2025-13"),
        ("2025-02-30", "2025-02-30"),
        ("unknown", "unknown"),
        (None, ""),
    ],
)
def test_spoken_dates(value, expected):
    from ftamem_core.construction.temporal import spoken

    assert spoken(value) == expected
