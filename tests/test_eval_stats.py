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
    monotone = correlation(x, [v**3 for v in x], n_resamples=999)
    assert monotone["spearman"] == pytest.approx(1.0) and monotone["pearson"] < 1.0
    rng = np.random.default_rng(5)
    noise = correlation(list(rng.normal(size=40)), list(rng.normal(size=40)), n_resamples=999, seed=2)
    assert noise["permutation_p"] > 0.05 and noise["low"] < 0 < noise["high"]
    flat = correlation(x, [1.0] * 6)
    assert flat["pearson"] is None
    with pytest.raises(ValueError):
        correlation([1.0, 2.0], [1.0, 2.0])


# Density ------------------------------------------------------------------------------------


def test_density_annotation_resumes_and_aggregates_per_dialogue(tmp_path):
    from ftamem_core.evaluation.density import annotate, per_dialogue
    from ftamem_core.llm.scripted import ScriptedLLM

    from conftest import make_doc

    docs = [make_doc("c1", sessions=1, turns=4), make_doc("c2", sessions=1, turns=2)]
    reply = {
        "factual_anchors": 2,
        "entity_anchors": 1,
        "temporal_anchors": 0,
        "support_process_anchors": 1,
        "implicitness": 2,
        "low_information": 0,
    }
    path = tmp_path / "density.jsonl"
    llm = ScriptedLLM([reply] * 3 + [RuntimeError("killed")])
    with pytest.raises(Exception):
        annotate(docs, llm, path)
    assert len(path.read_text().splitlines()) == 3
    second = ScriptedLLM([{**reply, "factual_anchors": 0, "low_information": 1}] * 3)
    rows = annotate(docs, second, path)
    assert len(rows) == 6 and len(second.replies) == 0  # only the three missing turns were asked
    dialogues = per_dialogue(rows)
    assert dialogues["c1"]["turns"] == 4 and dialogues["c1"]["factual_anchors"] == pytest.approx((2 * 3 + 0) / 4)
    assert dialogues["c2"]["low_information"] == 1.0 and dialogues["c2"]["total_anchors"] == pytest.approx(2.0)


def test_gain_correlation_with_density_on_known_data():
    from ftamem_core.evaluation.density import dialogue_gain, gain_correlations

    # five dialogues: fta's relative gain over rag is 0.1 x the dialogue's implicitness
    questions, density = [], {}
    for i in range(5):
        case = f"d{i}"
        questions += [
            {"case": case, "method": "rag", "f1": 0.5},
            {"case": case, "method": "fta", "f1": 0.5 * (1 + 0.1 * i)},
        ]
        density[case] = {
            f: float(i if f == "implicitness" else (7 * i) % 5)
            for f in (
                "factual_anchors",
                "entity_anchors",
                "temporal_anchors",
                "support_process_anchors",
                "implicitness",
                "low_information",
                "total_anchors",
            )
        }
    gain = dialogue_gain(questions, "fta", "rag", "f1")
    assert gain["d3"] == pytest.approx(0.3)
    result = gain_correlations(density, gain, n_resamples=499)
    assert result["correlations"]["implicitness"]["pearson"] == pytest.approx(1.0)
    assert gain_correlations(density, {"d0": 1.0, "d1": 2.0})["note"].startswith("2 dialogues")
    assert (
        dialogue_gain(
            [{"case": "x", "method": "rag", "f1": 0.0}, {"case": "x", "method": "fta", "f1": 0.4}], "fta", "rag", "f1"
        )
        == {}
    )  # a relative gain over 0 is left out
