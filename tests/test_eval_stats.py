"""Statistics on data with known answers."""

import numpy as np
import pytest

from ftamem_core.evaluation.stats import correlation, paired_cluster_bootstrap


def test_a_constant_difference_has_a_zero_width_interval():
    a = [0.5, 0.7, 0.9, 0.4]
    b = [v - 0.1 for v in a]
    out = paired_cluster_bootstrap(a, b, ["c1", "c1", "c2", "c3"], n_resamples=500)
    assert out["mean"] == pytest.approx(0.1) and out["low"] == pytest.approx(0.1) and out["high"] == pytest.approx(0.1)
    assert out["clusters"] == 3 and out["questions"] == 4


def test_the_bootstrap_resamples_clusters_not_questions():
    # one cluster gains 1.0 on every question, the other loses 1.0: cluster means are +1 and -1, so
    # every resample's mean lies in [-1, 1] and the interval spans zero; a question-level bootstrap
    # of 100 questions would be much narrower.
    a = [1.0] * 50 + [0.0] * 50
    b = [0.0] * 50 + [1.0] * 50
    clusters = ["x"] * 50 + ["y"] * 50
    out = paired_cluster_bootstrap(a, b, clusters, n_resamples=2000, seed=1)
    assert out["mean"] == 0.0 and out["low"] == -1.0 and out["high"] == 1.0


def test_the_interval_covers_a_known_mean_and_is_seeded():
    rng = np.random.default_rng(0)
    clusters = [f"c{i // 10}" for i in range(200)]
    a = list(rng.normal(0.3, 0.2, 200))
    b = list(np.asarray(a) - 0.05 + rng.normal(0, 0.05, 200))
    out = paired_cluster_bootstrap(a, b, clusters, n_resamples=2000, seed=3)
    assert out["low"] < 0.05 < out["high"] and out["high"] - out["low"] < 0.05
    assert out == paired_cluster_bootstrap(a, b, clusters, n_resamples=2000, seed=3)


def test_correlation_of_a_perfect_and_of_an_unrelated_relation():
    x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    perfect = correlation(x, [2 * v + 1 for v in x], n_resamples=999)
    assert perfect["pearson"] == pytest.approx(1.0) and perfect["spearman"] == pytest.approx(1.0)
    assert perfect["permutation_p"] < 0.01 and perfect["leave_one_out"] == pytest.approx([1.0, 1.0])
    monotone = correlation(x, [v ** 3 for v in x], n_resamples=999)
    assert monotone["spearman"] == pytest.approx(1.0) and monotone["pearson"] < 1.0
    rng = np.random.default_rng(5)
    noise = correlation(list(rng.normal(size=40)), list(rng.normal(size=40)), n_resamples=999, seed=2)
    assert noise["permutation_p"] > 0.05 and noise["low"] < 0 < noise["high"]
    flat = correlation(x, [1.0] * 6)
    assert flat["pearson"] is None
    with pytest.raises(ValueError):
        correlation([1.0, 2.0], [1.0, 2.0])
