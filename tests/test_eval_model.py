"""An end-to-end evaluation of the shared ES-MemEval sample with the real 0.5B model: two methods
answered, scored (F1, offline BERTScore) and summarised. Methods that need no build keep it short;
the build itself is the construction model test's."""

import json

import pytest

from ftamem_core.cli import main

from conftest import MODEL_DIR, ROOT

pytestmark = pytest.mark.model
SAMPLE = ROOT.parent / "shared" / "data" / "es-memeval-format" / "sample_case.json"


def test_two_methods_on_the_es_memeval_sample_with_the_real_model(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FTAMEM_STORAGE_MODEL_DIR", str(MODEL_DIR))
    monkeypatch.setenv("FTAMEM_LLM_MODEL", "qwen2.5-0.5b")
    monkeypatch.setenv("FTAMEM_EVALUATION_EVAL_DIR", str(tmp_path / "runs"))
    out = tmp_path / "run"
    args = [
        "--db",
        str(tmp_path / "m.db"),
        "eval",
        "--dataset",
        "esmemeval",
        "--data",
        str(SAMPLE),
        "--method",
        "turn-rag",
        "question-only",
        "--out",
        str(out),
        "--quiet",
    ]
    assert main(args) == 0
    capsys.readouterr()
    rows = [json.loads(line) for line in (out / "questions.jsonl").read_text().splitlines()]
    assert len(rows) == 16 and all(r["prediction"].strip() for r in rows)
    assert all(0.0 <= r["f1"] <= 1.0 and r["bertscore_f1"] is not None for r in rows)
    summary = json.loads((out / "summary.json").read_text())
    rag, bare = summary["methods"]["turn-rag"], summary["methods"]["question-only"]
    assert bare["evidence_recall"] == 0.0 < rag["evidence_recall"]
    assert rag["packet_tokens"] > 100 > bare["packet_tokens"]
    assert "turn-rag - question-only (F1)" in summary["bootstrap"]
    print(
        json.dumps(
            {
                m: {"f1": s["overall"]["f1"], "bertscore": s["overall"]["bertscore_f1"], "recall": s["evidence_recall"]}
                for m, s in summary["methods"].items()
            }
        )
    )
    # a rerun answers nothing again
    assert main(args) == 0
    assert len((out / "predictions.jsonl").read_text().splitlines()) == 16


def test_the_harness_reply_models_make_grammars_the_embedded_model_accepts():
    # llama.cpp turns a schema into a grammar and aborts the process on one it finds too large (a
    # maxLength of 2000 did): one real call per reply model the harness adds.
    from ftamem_core.config import LLMConfig
    from ftamem_core.evaluation.density import DensityReply
    from ftamem_core.evaluation.methods import SummaryReply
    from ftamem_core.evaluation.report import EsVerdict, LocomoVerdict
    from ftamem_core.llm.embedded import EmbeddedLLM
    from ftamem_core.llm.modelfiles import ensure_model

    llm = EmbeddedLLM(LLMConfig(model="qwen2.5-0.5b", n_ctx=2048), ensure_model("qwen2.5-0.5b", MODEL_DIR))
    messages = [
        {"role": "system", "content": "Reply with JSON only."},
        {"role": "user", "content": "Maya said: I moved to night shifts in March and I sleep badly."},
    ]
    for model in (SummaryReply, DensityReply, LocomoVerdict, EsVerdict):
        reply, call = llm.structured("check", messages, model, temperature=0.0, max_tokens=120)
        assert isinstance(reply, model) and call.ok
