"""The evaluation harness with a scripted model: every method on the same questions, outputs,
built memory shared and cached, resume after a kill."""

import json
import re

import pytest

from ftamem_core.cli import main
from ftamem_core.config import load_settings
from ftamem_core.evaluation.methods import catalogue, method
from ftamem_core.evaluation.run import EvalConfig, questions_for, run, select_documents
from ftamem_core.storage.store import Store

from conftest import ROOT
from scripted import HashEmbedder, Pipeline

LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
ESMEMEVAL = ROOT.parent / "shared" / "data" / "es-memeval-format" / "sample_case.json"
SETTINGS = load_settings(
    environ={},
    extraction={"ground_facts": False, "turns_per_unit": 0, "verbatim_fallback": False},
)


class EvalPipeline(Pipeline):
    """Construction as the scripted pipeline; answers echo the first memory line they are shown,
    so what each method shows reaches its prediction."""

    def __init__(self, fail_after: int | None = None):
        super().__init__(seg_size=4)
        self.answers = 0
        self.fail_after = fail_after

    def rewrite(self, messages):
        q = messages[-1]["content"].rsplit("Question:", 1)[-1]
        return {"query": q.strip()[:200], "people": [], "time_expressions": [], "content_types": [], "affect_terms": []}

    def answer(self, messages):
        self.answers += 1
        if self.fail_after is not None and self.answers > self.fail_after:
            raise KeyboardInterrupt  # the process is killed mid-run
        memory = messages[-1]["content"].split("Memory:", 1)[1]
        words = re.findall(r"[A-Za-z]{4,}", memory)
        return {"answer": " ".join(words[:6]) or "Not mentioned", "cited_unit_ids": []}

    def summary(self, messages):
        turns = messages[-1]["content"].split("Session turns:", 1)[1]
        return {"summary": " ".join(re.findall(r"[A-Za-z]{4,}", turns)[:40])}

    def judge(self, messages):
        return (
            {"reason": "scripted", "label": "CORRECT"}
            if "Not mentioned" not in messages[-1]["content"]
            else {"reason": "scripted", "label": "WRONG"}
        )


def factory(pipeline, calls: list):
    def make(recorder):
        llm = pipeline.llm()
        inner = recorder

        def record(r):
            calls.append(r.stage)
            if inner:
                inner(r)

        llm.recorder = record
        return llm

    return make


METHODS = [
    "fta",
    "fta-no_links",
    "fta@3",
    "question-only",
    "full-context",
    "turn-rag",
    "session-summary",
    "null",
    "verbatim",
]


def test_the_catalogue_has_every_ask_preset_the_variants_and_the_baselines():
    names = set(catalogue())
    assert {
        "fta",
        "fta-session",
        "fta-pair",
        "fta-fixed",
        "question-only",
        "full-context",
        "turn-rag",
        "session-summary",
    } <= names
    from ftamem_core.config import PRESETS

    assert {f"fta-{p}" for p in PRESETS if p != "full"} <= names
    assert method("fta@10").k == 10 and method("turn-rag@5").kind == "turn_rag"
    with pytest.raises(ValueError):
        method("fta@zero")


def test_session_subsets_keep_only_questions_whose_evidence_lies_inside(tmp_path):
    cfg = EvalConfig("locomo", str(LOCOMO), ["fta"], str(tmp_path), cases=["conv-26"], sessions=2)
    (doc,) = select_documents(cfg, SETTINGS)
    kept = {t.original_id for s in doc.sessions for t in s.turns}
    qs = questions_for(doc, cfg)
    assert len(doc.sessions) == 2 and qs and all(set(q.evidence) <= kept and q.evidence for q in qs)
    cfg.questions = 3
    assert [q.qid for q in questions_for(doc, cfg)] == [q.qid for q in qs[:3]]


def test_a_run_answers_every_method_on_the_same_questions_and_writes_its_outputs(tmp_path):
    out = tmp_path / "run"
    pipeline, calls = EvalPipeline(), []
    cfg = EvalConfig("locomo", str(LOCOMO), METHODS, str(out), cases=["conv-26"], sessions=1, questions=4, judge=True)
    summary = run(cfg, SETTINGS, factory(pipeline, calls), HashEmbedder(), progress=False)
    rows = [json.loads(line) for line in (out / "questions.jsonl").read_text().splitlines()]
    assert len(rows) == len(METHODS) * 4
    by_method = {m: [r for r in rows if r["method"] == m] for m in METHODS}
    questions = {m: [r["qid"] for r in rs] for m, rs in by_method.items()}
    assert all(q == questions["fta"] for q in questions.values())  # the same questions for every method
    assert all(r["evidence_recall"] == 0.0 and r["packet_tokens"] <= 5 for r in by_method["question-only"])
    assert all(r["evidence_recall"] == 1.0 for r in by_method["full-context"])  # one session fits the window
    assert all(r["k"] == 3 for r in by_method["fta@3"]) and all(r["k"] == 25 for r in by_method["fta"])
    assert all(len(r["retrieved"]) <= 25 and r["retrieved"] for r in by_method["turn-rag"])
    assert all(
        r["packet_tokens"] <= SETTINGS.retrieval.packet_token_budget for r in by_method["turn-rag"]
    )  # one packing
    assert all(r["content_recall"] is not None for r in rows)
    # the sanity memories are built without a model call and answered by FTA-Mem's retrieval
    assert summary["methods"]["null"]["construction_cost"]["calls"] == 0
    assert summary["methods"]["verbatim"]["construction_cost"]["units"] > 0
    assert all("f1_official" in r and "judge" in r for r in rows)
    assert set(summary["methods"]) == set(METHODS)
    fta = summary["methods"]["fta"]
    assert fta["construction"] == "bws" and fta["construction_cost"]["units"] > 0
    assert summary["methods"]["session-summary"]["construction_cost"]["units"] == 1  # one session, one summary
    assert summary["methods"]["turn-rag"]["construction_cost"] == {}
    assert set(summary["bootstrap"]) == {f"fta - {m} ({x})" for m in METHODS[1:] for x in ("F1", "content recall")}
    tables = (out / "tables.md").read_text()
    assert "Like Table 3" in tables and "LoCoMo official" in tables and "Like Table 5" in tables
    assert "1 = multi-hop" in tables and "Like Table 6" in tables
    charts = (out / "charts.html").read_text()
    assert "Plotly.newPlot" in charts and "<script src=" not in charts and len(charts) > 1_000_000  # inlined, offline
    # fta and its presets share one build; the summary baseline and each sanity memory have their own store
    dbs = sorted(p.name for p in (out / "cache").glob("*.db"))
    assert len(dbs) == 5 and all(any(f"-{c}-" in d for d in dbs) for c in ("bws", "summary", "null", "verbatim"))
    bws = Store(next((out / "cache").glob("*-bws-*.db")))
    assert len(bws._rows("SELECT id FROM builds")) == 1


def test_a_rerun_reuses_the_builds_and_answers_nothing_again(tmp_path):
    out = tmp_path / "run"
    cfg = dict(
        dataset="locomo",
        data=str(LOCOMO),
        methods=["fta", "session-summary"],
        out=str(out),
        cases=["conv-26"],
        sessions=1,
        questions=2,
    )
    first_calls, again_calls = [], []
    run(EvalConfig(**cfg), SETTINGS, factory(EvalPipeline(), first_calls), HashEmbedder(), progress=False)
    assert {"segmentation", "extraction", "summary", "answer"} <= set(first_calls)
    summary = run(EvalConfig(**cfg), SETTINGS, factory(EvalPipeline(), again_calls), HashEmbedder(), progress=False)
    assert again_calls == []  # no construction, summary or answer call
    assert summary["methods"]["fta"]["construction_cost"]["units"] > 0  # still reported
    bws = Store(next((out / "cache").glob("*-bws-*.db")))
    assert len(bws._rows("SELECT id FROM builds")) == 1  # the complete build is reused, no empty build recorded
    other = tmp_path / "other"
    run(
        EvalConfig(**{**cfg, "out": str(other), "methods": ["fta-no_time_fields"]}),
        SETTINGS,
        factory(EvalPipeline(), third := []),
        HashEmbedder(),
        progress=False,
    )
    assert "segmentation" in third  # another run folder has its own cache unless --cache is shared


def test_a_recorded_run_answers_a_variants_unchanged_questions_without_the_model(tmp_path):
    cfg = dict(dataset="locomo", data=str(LOCOMO), methods=["fta"], cases=["conv-26"], sessions=1)
    cache, record = str(tmp_path / "cache"), tmp_path / "first.jsonl"

    def answered(name: str, settings=SETTINGS, **extra) -> EvalPipeline:
        pipeline = EvalPipeline()
        config = EvalConfig(**cfg, out=str(tmp_path / name), cache_dir=cache, **extra)
        run(config, settings, factory(pipeline, []), HashEmbedder(), progress=False)
        return pipeline

    assert answered("a", questions=2, record=str(record)).answers == 2
    assert {json.loads(line)["stage"] for line in record.read_text().splitlines()} >= {"rewrite", "answer"}
    again = answered("b", questions=3, replay=str(record))  # one more question: only it is asked
    assert again.answers == 1
    served = json.loads((tmp_path / "b" / "served.json").read_text())["served"]
    assert served["answer"] == {"live": 1, "replayed": 2} and served["rewrite"] == {"live": 1, "replayed": 2}
    rows = {
        name: {r["qid"]: r["prediction"] for r in map(json.loads, (tmp_path / name / "questions.jsonl").open())}
        for name in "ab"
    }
    assert rows["a"].items() <= rows["b"].items() and len(rows["b"]) == 3
    replayed = [r["replayed"] for r in map(json.loads, (tmp_path / "b" / "questions.jsonl").open())]
    assert sorted(replayed) == [False, True, True]  # and left out of the seconds per question
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert summary["methods"]["fta"]["seconds_per_question"] is not None
    # another answer temperature: the recorded answers are not the ones this run would get
    warmer = SETTINGS.with_overrides(answer={"answer_temperature": 0.5})
    assert answered("c", settings=warmer, questions=2, replay=str(record)).answers == 2
    # a line cut by a kill is skipped
    with open(record, "a") as f:
        f.write('{"stage": "answer", "requ')
    assert answered("d", questions=2, replay=str(record)).answers == 0


def test_a_killed_run_resumes_where_it_stopped(tmp_path):
    out = tmp_path / "run"
    cfg = dict(
        dataset="locomo",
        data=str(LOCOMO),
        methods=["turn-rag", "question-only"],
        out=str(out),
        cases=["conv-26"],
        sessions=1,
        questions=4,
    )
    with pytest.raises(KeyboardInterrupt):
        run(EvalConfig(**cfg), SETTINGS, factory(EvalPipeline(fail_after=3), []), HashEmbedder(), progress=False)
    lines = (out / "predictions.jsonl").read_text().splitlines()
    assert len(lines) == 3
    with open(out / "predictions.jsonl", "a") as f:
        f.write('{"method": "turn-rag", "case": "conv-26", "qid"')  # a line cut by the kill
    pipeline = EvalPipeline()
    run(EvalConfig(**cfg), SETTINGS, factory(pipeline, []), HashEmbedder(), progress=False)
    assert pipeline.answers == 8 - 3
    rows = [json.loads(line) for line in (out / "questions.jsonl").read_text().splitlines()]
    assert len(rows) == 8 and len({(r["method"], r["qid"]) for r in rows}) == 8


def test_esmemeval_runs_report_capabilities_and_bertscore(tmp_path):
    out = tmp_path / "run"
    summary = run(
        EvalConfig("esmemeval", str(ESMEMEVAL), ["turn-rag", "question-only"], str(out)),
        SETTINGS,
        factory(EvalPipeline(), []),
        HashEmbedder(),
        progress=False,
    )
    s = summary["methods"]["turn-rag"]
    assert set(s["capability"]) <= {"IE", "TR", "CD", "Abs", "UM"} and s["overall"]["bertscore_f1"] is not None
    assert s["questions"] == 8 and s["evidence_recall"] is not None
    assert summary["average_rank"]["turn-rag"] is not None
    assert "Like Table 2" in (out / "tables.md").read_text()


def test_eval_command_line_refuses_an_unknown_method_and_runs(tmp_path, capsys, monkeypatch):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"answer": {"answer": "Not mentioned", "cited_unit_ids": []}}))
    monkeypatch.setenv("FTAMEM_LLM_BACKEND", "scripted")
    monkeypatch.setenv("FTAMEM_LLM_MODEL", str(script))
    monkeypatch.setenv("FTAMEM_EVALUATION_EVAL_DIR", str(tmp_path / "eval-runs"))
    base = [
        "--db",
        str(tmp_path / "m.db"),
        "eval",
        "--dataset",
        "locomo",
        "--data",
        str(LOCOMO),
        "--cases",
        "conv-26",
        "--sessions",
        "1",
        "--questions",
        "2",
        "--out",
        str(tmp_path / "run"),
        "--quiet",
    ]
    assert main(base + ["--method", "magic"]) == 1
    assert "unknown method 'magic'" in capsys.readouterr().err
    assert main(base + ["--method", "question-only"]) == 0
    assert "Like Table 3" in capsys.readouterr().out
    assert main(["score", "locomo", str(tmp_path / "run" / "questions.jsonl"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)
    assert any((tmp_path / "eval-runs" / "cache").glob("*.db"))  # builds kept for every run, in eval_dir
    record = str(tmp_path / "replies.jsonl")
    first = [a if a != str(tmp_path / "run") else str(tmp_path / "rec") for a in base]
    assert main(first + ["--method", "question-only", "--record", record]) == 0
    assert "model calls (every invocation of this run): answer 2 live" in capsys.readouterr().out
    again = [a if a != str(tmp_path / "run") else str(tmp_path / "rep") for a in base]
    assert main(again + ["--method", "question-only", "--replay", record]) == 0
    assert "model calls (every invocation of this run): answer 2 replayed" in capsys.readouterr().out
    no_out = [a for a in base if a not in ("--out", str(tmp_path / "run"))]
    assert main(no_out + ["--method", "question-only"]) == 0
    (run_dir,) = [p for p in (tmp_path / "eval-runs").iterdir() if p.name != "cache"]
    assert run_dir.name.startswith("locomo-") and (run_dir / "summary.json").exists()


def test_evaluate_page_shows_a_run_and_compares_two_methods(tmp_path, monkeypatch):
    import streamlit as st
    import streamlit.testing.v1.app_test as app_test_module
    from streamlit.testing.v1 import AppTest

    from test_app import _NavigationPagesManager

    runs = tmp_path / "runs"
    run(
        EvalConfig(
            "locomo",
            str(LOCOMO),
            ["turn-rag", "question-only"],
            str(runs / "first"),
            cases=["conv-26"],
            sessions=1,
            questions=3,
        ),
        SETTINGS,
        factory(EvalPipeline(), []),
        HashEmbedder(),
        progress=False,
    )
    monkeypatch.setenv("FTAMEM_EVALUATION_EVAL_DIR", str(runs))
    monkeypatch.setenv("FTAMEM_STORAGE_DB_PATH", str(tmp_path / "app.db"))
    monkeypatch.setattr(app_test_module, "PagesManager", _NavigationPagesManager)
    monkeypatch.chdir(ROOT)
    st.cache_resource.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("pages/evaluate.py").run()
    assert not at.exception, at.exception
    assert at.main.dataframe[0].value.iloc[0]["run"] == "first"
    scores = at.main.dataframe[1].value
    assert list(scores["method"]) == ["turn-rag", "question-only"]
    at.selectbox(key="cmp_method_a").set_value("turn-rag").run()
    at.selectbox(key="cmp_method_b").set_value("question-only").run()
    at.checkbox[0].uncheck().run()
    compare = at.main.dataframe[-1].value
    assert len(compare) == 3 and set(compare["recall A"]) == {1.0} and set(compare["recall B"]) == {0.0}
    assert any("3 questions in both" in t.value for t in at.text)
    st.cache_resource.clear()


def test_density_and_correlate_commands(tmp_path, capsys, monkeypatch):
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "density": {
                    "factual_anchors": 1,
                    "entity_anchors": 2,
                    "temporal_anchors": 0,
                    "support_process_anchors": 0,
                    "implicitness": 1,
                    "low_information": 0,
                }
            }
        )
    )
    monkeypatch.setenv("FTAMEM_LLM_BACKEND", "scripted")
    monkeypatch.setenv("FTAMEM_LLM_MODEL", str(script))
    density = tmp_path / "density.jsonl"
    cases = ["conv-26", "conv-30", "conv-41"]
    assert (
        main(
            [
                "--db",
                str(tmp_path / "m.db"),
                "--json",
                "density",
                "--dataset",
                "locomo",
                "--data",
                str(LOCOMO),
                "--cases",
                *cases,
                "--sessions",
                "1",
                "--out",
                str(density),
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert sorted(out["dialogues"]) == cases and out["overall"]["entity_anchors"] == 2.0
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "summary.json").write_text(json.dumps({"dataset": "locomo"}))
    rows = [
        {"method": m, "case": c, "qid": f"{c}:q", "category": "4", "f1_official": f}
        for c, (a, b) in zip(cases, [(0.6, 0.5), (0.5, 0.5), (0.8, 0.4)])
        for m, f in (("fta", a), ("rag", b))
    ]
    (run_dir / "questions.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    assert (
        main(
            [
                "--db",
                str(tmp_path / "m.db"),
                "--json",
                "correlate",
                str(run_dir),
                "--density",
                str(density),
                "--methods",
                "fta",
                "rag",
            ]
        )
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert result["gain"] == pytest.approx({"conv-26": 0.2, "conv-30": 0.0, "conv-41": 1.0})
    assert result["dialogues"] == cases and result["correlations"]["implicitness"]["pearson"] is None  # constant


def test_an_openai_backend_answers_questions_concurrently_up_to_the_setting(tmp_path):
    import threading
    import time as _time

    active, peak, lock = [0], [0], threading.Lock()

    class Slow(EvalPipeline):
        def answer(self, messages):
            with lock:
                active[0] += 1
                peak[0] = max(peak[0], active[0])
            _time.sleep(0.2)
            with lock:
                active[0] -= 1
            return super().answer(messages)

    pipeline = Slow()
    served = SETTINGS.with_overrides(
        llm={"backend": "openai", "base_url": "http://127.0.0.1:9/v1"}, evaluation={"eval_workers": 3}
    )
    cfg = EvalConfig(
        "locomo",
        str(LOCOMO),
        ["turn-rag", "question-only"],
        str(tmp_path / "run"),
        cases=["conv-26"],
        sessions=1,
        questions=4,
        workers=served.evaluation.eval_workers,
    )
    run(cfg, served, factory(pipeline, []), HashEmbedder(), progress=False)
    assert peak[0] == 3
    active[0] = peak[0] = 0
    embedded = EvalConfig(**{**cfg.__dict__, "out": str(tmp_path / "run2"), "workers": 3})
    run(embedded, SETTINGS, factory(Slow(), []), HashEmbedder(), progress=False)
    assert peak[0] == 1  # one embedded model answers one call at a time


def test_benchmark_cases_are_recorded_as_consented_research_data(tmp_path):
    from ftamem_core.governance import consent

    run(
        EvalConfig(
            "locomo", str(LOCOMO), ["question-only"], str(tmp_path / "run"), cases=["conv-26"], sessions=1, questions=1
        ),
        SETTINGS,
        factory(EvalPipeline(), []),
        HashEmbedder(),
        progress=False,
    )
    (db,) = (tmp_path / "run" / "cache").glob("*.db")
    state = consent.state(Store(db), "conv-26")
    assert state["state"] == "granted" and state["who"] == "evaluation harness"


def test_a_cached_build_is_not_reused_after_its_code_or_prompts_change(tmp_path, monkeypatch):
    import shutil

    from ftamem_core.construction import builder as construction
    from ftamem_core.evaluation.run import _tag

    cfg = EvalConfig(dataset="locomo", data=str(LOCOMO), methods=["fta"], out=str(tmp_path / "run"))
    before = _tag(cfg, SETTINGS, "bws")
    assert _tag(cfg, SETTINGS, "bws") == before and _tag(cfg, SETTINGS, "pair") != before
    prompts = tmp_path / "prompts"
    shutil.copytree(construction.PROMPT_DIR, prompts)
    monkeypatch.setattr(construction, "PROMPT_DIR", prompts)
    assert _tag(cfg, SETTINGS, "bws") == before  # same text, same key
    (prompts / "extraction.md").write_text((prompts / "extraction.md").read_text() + "\nOne more rule.\n")
    assert _tag(cfg, SETTINGS, "bws") != before
    summary, bws = _tag(cfg, SETTINGS, "summary"), _tag(cfg, SETTINGS, "bws")
    (prompts / "session_summary.md").write_text((prompts / "session_summary.md").read_text() + "\nBe brief.\n")
    assert _tag(cfg, SETTINGS, "summary") != summary and _tag(cfg, SETTINGS, "bws") == bws  # only the summaries'
