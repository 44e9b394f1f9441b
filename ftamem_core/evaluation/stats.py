"""Statistics for comparing methods: a paired bootstrap over questions stratified by
conversation (the project's rule for calling a change an improvement), a paired cluster bootstrap
of a score difference, and the correlation of per-dialogue gains with density (scipy for the
coefficients and the bootstrap).

The stratified bootstrap resamples each conversation's questions with replacement, keeping every
conversation's question count, so it gives an interval with one conversation too; the cluster
bootstrap resamples whole conversations (a point with one).
"""

from __future__ import annotations

import numpy as np


def stratified_bootstrap(
    values: list[float], strata: list, n_resamples: int = 10_000, seed: int = 0, confidence: float = 0.95
) -> dict:
    """Mean of ``values`` (one per question; a paired difference for a comparison) and its
    bootstrap interval, resampling questions within each stratum (conversation)."""
    if len(values) != len(strata) or not values:
        raise ValueError("values and strata must be equally long and not empty")
    x = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    totals = np.zeros(n_resamples)
    for name in sorted(set(strata), key=str):
        members = x[[i for i, s in enumerate(strata) if s == name]]
        totals += members[rng.integers(0, len(members), size=(n_resamples, len(members)))].sum(axis=1)
    means = totals / len(x)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return {
        "mean": float(x.mean()),
        "low": float(low),
        "high": float(high),
        "strata": len(set(strata)),
        "questions": len(x),
        "resamples": n_resamples,
        "confidence": confidence,
    }


def paired_bootstrap(a: list[float], b: list[float], strata: list, **kwargs) -> dict:
    """``a - b`` per question (the same questions, in the same order), stratified by conversation:
    an improvement is claimed only when the interval excludes 0 (``excludes_zero``)."""
    if len(a) != len(b):
        raise ValueError("a and b must be equally long")
    out = stratified_bootstrap([x - y for x, y in zip(a, b)], strata, **kwargs)
    out["excludes_zero"] = out["low"] > 0 or out["high"] < 0
    return out


def paired_cluster_bootstrap(
    a: list[float], b: list[float], clusters: list, n_resamples: int = 10_000, seed: int = 0, confidence: float = 0.95
) -> dict:
    """Mean of ``a - b`` per question and its bootstrap interval over clusters."""
    if not (len(a) == len(b) == len(clusters)) or not a:
        raise ValueError("a, b and clusters must be equally long and not empty")
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    names = sorted(set(clusters), key=str)
    index = {c: i for i, c in enumerate(names)}
    ids = np.array([index[c] for c in clusters])
    sums = np.bincount(ids, weights=diff, minlength=len(names))
    counts = np.bincount(ids, minlength=len(names)).astype(float)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(names), size=(n_resamples, len(names)))
    means = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return {
        "mean": float(diff.mean()),
        "low": float(low),
        "high": float(high),
        "clusters": len(names),
        "questions": len(diff),
        "resamples": n_resamples,
        "confidence": confidence,
    }


def correlation(
    x: list[float], y: list[float], n_resamples: int = 10_000, seed: int = 0, confidence: float = 0.95
) -> dict:
    """Pearson and Spearman coefficients of ``y`` (e.g. per-dialogue F1 gain) on ``x`` (a density
    field), a bootstrap interval for Pearson's r, a two-sided permutation p value, and the range of
    r when each dialogue is left out in turn."""
    from scipy import stats

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) != len(y) or len(x) < 3:
        raise ValueError("at least three paired values are needed")
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return {
            "n": len(x),
            "pearson": None,
            "spearman": None,
            "low": None,
            "high": None,
            "permutation_p": None,
            "leave_one_out": None,
        }
    pearson = float(stats.pearsonr(x, y).statistic)
    spearman = float(stats.spearmanr(x, y).statistic)
    rng = np.random.default_rng(seed)
    boot = stats.bootstrap(
        (x, y),
        lambda a, b: stats.pearsonr(a, b).statistic,
        paired=True,
        vectorized=False,
        n_resamples=n_resamples,
        confidence_level=confidence,
        method="percentile",
        random_state=rng,
    )
    perm = stats.permutation_test(
        (x, y),
        lambda a, b: stats.pearsonr(a, b).statistic,
        permutation_type="pairings",
        n_resamples=n_resamples,
        alternative="two-sided",
        random_state=rng,
    )
    loo = (
        [float(stats.pearsonr(np.delete(x, i), np.delete(y, i)).statistic) for i in range(len(x))] if len(x) > 3 else []
    )
    low, high = boot.confidence_interval
    return {
        "n": len(x),
        "pearson": pearson,
        "spearman": spearman,
        "low": None if np.isnan(low) else float(low),
        "high": None if np.isnan(high) else float(high),
        "permutation_p": float(perm.pvalue),
        "leave_one_out": [min(loo), max(loo)] if loo else None,
    }
