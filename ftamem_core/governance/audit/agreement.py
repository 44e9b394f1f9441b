"""Agreement between annotators on one criterion, from maintained libraries: Cohen's weighted
kappa (scikit-learn) for two annotators, Krippendorff's alpha (krippendorff, ordinal) for two or
more, and percent agreement. Scores are ordinal 0-2, so kappa is weighted linearly (a 0 against
a 2 counts twice a 0 against a 1) and alpha uses ordinal distances.

``ratings`` maps each annotator to their scores by item; an item one annotator left unscored is
missing for them (alpha handles it; kappa and percent agreement use the items both or all
scored). A statistic that is undefined (one annotator, no shared items, a single value used by
everyone) is None.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

SCALE = (0, 1, 2)


def shared_items(ratings: dict[str, dict]) -> list:
    """Items scored by every annotator in ``ratings``."""
    sets = [set(r) for r in ratings.values()]
    return sorted(set.intersection(*sets), key=str) if sets else []


def weighted_kappa(a: list[int], b: list[int], weights: str = "linear", labels=SCALE) -> float | None:
    from sklearn.metrics import cohen_kappa_score

    if len(a) < 2:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant pair divides by zero: None below
        value = cohen_kappa_score(a, b, weights=weights, labels=list(labels))
    return None if math.isnan(value) else float(value)


def alpha(ratings: dict[str, dict], domain=SCALE, level: str = "ordinal") -> float | None:
    import krippendorff

    items = sorted({i for r in ratings.values() for i in r}, key=str)
    if len(ratings) < 2 or not items:
        return None
    data = np.array([[r.get(i, np.nan) for i in items] for r in ratings.values()], dtype=float)
    if not (np.sum(~np.isnan(data), axis=0) >= 2).any():
        return None  # no item has two scores: nothing to agree on
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = krippendorff.alpha(reliability_data=data, value_domain=list(domain), level_of_measurement=level)
    except (ValueError, ZeroDivisionError):
        return None
    return None if math.isnan(value) else float(value)


def percent_agreement(ratings: dict[str, dict]) -> float | None:
    """The share of items scored by all annotators on which they all gave the same score."""
    items = shared_items(ratings)
    if len(ratings) < 2 or not items:
        return None
    return sum(len({r[i] for r in ratings.values()}) == 1 for i in items) / len(items)


def agreement(ratings: dict[str, dict]) -> dict:
    """Kappa (exactly two annotators), alpha and percent agreement, with the counts they rest on."""
    ratings = {name: r for name, r in ratings.items() if r}
    items = shared_items(ratings)
    kappa = None
    if len(ratings) == 2:
        a, b = ratings.values()
        kappa = weighted_kappa([a[i] for i in items], [b[i] for i in items])
    return {
        "annotators": len(ratings),
        "shared_items": len(items),
        "kappa": kappa,
        "alpha": alpha(ratings),
        "percent": percent_agreement(ratings),
    }
