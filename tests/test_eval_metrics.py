"""Scorers on hand-computed examples: every LoCoMo category rule, both protocols, ES-MemEval."""

import json

import pytest

from ftamem_core.cli import main
from ftamem_core.evaluation import metrics as m


def test_normalisation_drops_commas_punctuation_articles_and_and():
    assert m.normalize_answer("The cat, and a Dog!  ran.") == "cat dog ran"


def test_official_f1_stems_and_counts_a_multiset():
    # "running dogs" -> run dog ; "the dog runs" -> dog run: all 2 tokens shared
    assert m.token_f1("running dogs", "the dog runs") == 1.0
    # pred: go go store (3), gold: go store today (3); overlap go, store = 2: P = R = 2/3
    assert m.token_f1("go go store", "go store today") == pytest.approx(2 / 3)
    assert m.token_f1("", "anything") == 0.0


def test_category_1_takes_the_best_prediction_part_for_each_gold_part():
    # gold parts: "pottery", "camping"; prediction parts: "camping", "painting"
    assert m.locomo_official("camping, painting", "pottery, camping", "1") == pytest.approx(0.5)


def test_category_3_cuts_the_gold_at_its_first_semicolon():
    assert m.locomo_official("Likely yes", "Likely yes; because she loves books", "3") == 1.0
    assert m.locomo_official("Likely yes", "Likely yes because she loves books", "3") < 1.0


def test_categories_2_and_4_are_plain_f1():
    assert m.locomo_official("7 May 2023", "7 May, 2023", "2") == 1.0
    assert m.locomo_official("in May", "7 May 2023", "4") == pytest.approx(2 * (1 / 2) * (1 / 3) / (1 / 2 + 1 / 3))


def test_category_5_checks_the_abstention_phrases():
    assert m.locomo_official("Not mentioned in the conversation", None, "5") == 1.0
    assert m.locomo_official("No information available.", "x", "5") == 1.0
    assert m.locomo_official("She went to Paris", None, "5") == 0.0


def test_memory_protocol_set_f1_and_bleu1():
    # sets {she, went, to, paris} and {she, visited, paris}: 2 shared, P = 2/4, R = 2/3
    assert m.set_f1("She went to Paris.", "she visited Paris") == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    # BLEU-1: clipped unigram precision 2/4 times brevity penalty 1 (prediction longer)
    assert m.bleu1("She went to Paris.", "she visited Paris") == pytest.approx(0.5)
    assert m.bleu1("Paris", "she visited Paris") == pytest.approx(1.0 * 2.718281828 ** (1 - 3), rel=1e-6)


def test_esmemeval_f1_uses_unique_words_without_stemming():
    # {night, shifts} vs {night, shift}: 1 shared -> P = R = 1/2
    assert m.esmemeval_f1("night shifts night", "Night-shift") == pytest.approx(0.5)


def test_bertscore_runs_offline_with_the_packaged_minilm():
    same, other = m.bertscore_f1(
        ["She moved to night shifts in March.", "I like turtles."],
        ["She moved to night shifts in March.", "She moved to night shifts in March."],
    )
    assert same == pytest.approx(1.0, abs=1e-4) and other < same


def test_summary_is_per_category_with_names_and_the_1_to_4_overall():
    items = [
        {"question": "q", "answer": "pottery, camping", "prediction": "camping", "category": 1},
        {"question": "q", "answer": None, "prediction": "not mentioned", "category": 5},
        {"question": "q", "answer": "May 2023", "prediction": "May 2023", "category": 2},
    ]
    summary = m.summarise("locomo", m.score_items("locomo", items))
    assert summary["category"]["1"]["f1_official"] == 0.5 and summary["category"]["5"]["f1_official"] == 1.0
    assert summary["overall"]["f1_official"] == pytest.approx((0.5 + 1 + 1) / 3, abs=1e-4)
    assert summary["overall"]["f1_official_categories_1_4"] == 0.75
    assert "f1_memory" not in summary["category"]["5"] or summary["category"]["5"]["f1_memory"] is None
    assert summary["names"] == {"1": "multi-hop", "2": "temporal", "5": "adversarial"}


def test_score_command_scores_a_file_per_item_and_per_category(tmp_path, capsys):
    path = tmp_path / "p.jsonl"
    rows = [
        {"question": "When?", "answer": "May 2023", "prediction": "in May 2023", "category": 2},
        {"question": "Who?", "answer": "Mel", "prediction": "Caroline", "category": 4},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert main(["score", "locomo", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"2", "4"} and out["4"]["f1_official"] == 0.0
    assert out["2"]["f1_official"] == pytest.approx(m.token_f1("in May 2023", "May 2023"), abs=1e-4)
    assert main(["score", "locomo", str(path)]) == 0
    text = capsys.readouterr().out
    assert "2 temporal" in text and "4 single-hop" in text and "LoCoMo official" in text
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "answer": "a"}\nnot json\n')
    assert main(["score", "locomo", str(bad)]) == 1
    assert "line 1" in capsys.readouterr().err  # the first line lacks "prediction"
    es = tmp_path / "es.jsonl"
    es.write_text(
        json.dumps(
            {
                "question": "q",
                "answer": "night shifts",
                "prediction": "night shifts",
                "capability": "information extraction",
            }
        )
        + "\n"
    )
    assert main(["score", "esmemeval", str(es), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["IE"]["f1"] == 1.0 and out["IE"]["bertscore_f1"] == pytest.approx(1.0, abs=1e-4)
