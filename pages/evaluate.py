"""Evaluate: the runs of `ftamem eval` in the setting evaluation.eval_dir, their tables and charts, and two
runs (or two methods) compared question by question. Runs are started from the command line."""

import json
from pathlib import Path

import streamlit as st

import ui
from ftamem_core.display import cells
from ftamem_core.evaluation.report import LOCOMO_TABLE, figures, metric_columns, read_rows

st.title("Evaluate")
root = Path(ui.settings().evaluation.eval_dir)
runs = (
    sorted((p for p in root.glob("*") if (p / "summary.json").is_file()), key=lambda p: p.stat().st_mtime, reverse=True)
    if root.is_dir()
    else []
)
if not runs:
    st.info("No evaluation runs yet. Start one from the command line, for example:")
    st.code(
        ".venv/bin/ftamem eval --dataset esmemeval --data ../shared/data/es-memeval-format/sample_case.json "
        "--method fta turn-rag verbatim null",
        language="bash",
    )
    st.stop()


def load(run: Path) -> dict:
    return json.loads((run / "summary.json").read_text(encoding="utf-8"))


st.dataframe(
    cells(
        [
            {
                "run": p.name,
                "dataset": (s := load(p))["dataset"],
                "cases": ", ".join(s["cases"]),
                "methods": ", ".join(s["methods"]),
                "questions": max((m["questions"] for m in s["methods"].values()), default=0),
                "model": f"{s['llm']['backend']} · {s['llm']['model']}",
            }
            for p in runs
        ]
    ),
    hide_index=True,
)
names = [p.name for p in runs]
chosen = st.selectbox("Run", names)
summary = load(root / chosen)
dataset = summary["dataset"]
st.caption(ui.plain(" · ".join(summary["protocols"].values())))
st.caption(ui.plain("; ".join(f"{k} = {v}" for k, v in summary["names"].items())))

if dataset == "esmemeval":
    heads = [f"F1 {c}" for c in ("IE", "TR", "CD", "Abs", "UM", "All")] + [
        f"BERTScore {c}" for c in ("IE", "TR", "CD", "Abs", "UM", "All")
    ]
else:
    heads = [f"{name} {metric}" for _, name in LOCOMO_TABLE for metric in ("F1", "BLEU-1")] + [
        "Average F1",
        "Average BLEU-1",
    ]
st.subheader("Scores (like the paper's " + ("Table 2)" if dataset == "esmemeval" else "Table 3)"))
st.dataframe(
    cells(
        [
            {
                "method": m,
                **{h: None if v is None else round(100 * v, 2) for h, v in zip(heads, metric_columns(dataset, s))},
                "judge": s["overall"].get("judge"),
                "Avg.R": summary["average_rank"].get(m),
            }
            for m, s in summary["methods"].items()
        ]
    ),
    hide_index=True,
)
if dataset == "locomo":
    st.subheader("LoCoMo official scoring (F1 per category id)")
    st.dataframe(
        cells(
            [
                {
                    "method": m,
                    **{f"{c} {n}": s["category"].get(c, {}).get("f1_official") for c, n in summary["names"].items()},
                    "1-4": s["overall"].get("f1_official_categories_1_4"),
                    "all": s["overall"]["f1_official"],
                }
                for m, s in summary["methods"].items()
            ]
        ),
        hide_index=True,
    )
st.subheader("Cost and evidence (like Tables 5 and 6)")
st.caption(
    "Content recall: the gold turns whose words the text shown to the model holds (the headline); "
    "pointer recall: the gold turns it shows or points to. null and verbatim are memories built without a "
    "model: a figure they reach measures little."
)
st.dataframe(
    cells(
        [
            {
                "method": m,
                "questions": s["questions"],
                "content recall": s.get("content_recall"),
                "pointer recall": s["evidence_recall"],
                "packet tokens": s["packet_tokens"],
                "answer-stage tokens / question": s["answer_stage_tokens"],
                "construction": s["construction"],
                **s["construction_cost"],
                "notes": "; ".join(s["notes"]),
            }
            for m, s in summary["methods"].items()
        ]
    ),
    hide_index=True,
)
if summary["bootstrap"]:
    st.subheader("Paired bootstrap over questions, resampled within each case (95%)")
    st.dataframe(cells([{"difference": k, **v} for k, v in summary["bootstrap"].items()]), hide_index=True)
for figure in figures(summary):
    st.plotly_chart(figure, width="stretch")

st.subheader("Compare question by question")
c1, c2 = st.columns(2)
run_a = c1.selectbox("Run A", names, index=names.index(chosen), key="cmp_run_a")
run_b = c2.selectbox("Run B", names, index=names.index(chosen), key="cmp_run_b")
rows_a, rows_b = read_rows(root / run_a / "questions.jsonl"), read_rows(root / run_b / "questions.jsonl")
methods_a = sorted({r["method"] for r in rows_a})
methods_b = sorted({r["method"] for r in rows_b})
method_a = c1.selectbox("Method A", methods_a, key="cmp_method_a")
method_b = c2.selectbox("Method B", methods_b, index=min(1, len(methods_b) - 1), key="cmp_method_b")
metric = "f1_official" if dataset == "locomo" else "f1"
b_by_q = {(r["case"], r["qid"]): r for r in rows_b if r["method"] == method_b}
pairs = [
    (a, b_by_q[(a["case"], a["qid"])]) for a in rows_a if a["method"] == method_a and (a["case"], a["qid"]) in b_by_q
]
only_diff = st.checkbox("Only questions where the scores differ", value=True)
table = [
    {
        "case": a["case"],
        "category": a.get("category"),
        "question": a["question"],
        "gold": a.get("answer"),
        "A": a["prediction"],
        "B": b["prediction"],
        f"{metric} A": a.get(metric),
        f"{metric} B": b.get(metric),
        "recall A": a.get("evidence_recall"),
        "recall B": b.get("evidence_recall"),
    }
    for a, b in pairs
    if not only_diff or a.get(metric) != b.get(metric)
]
st.text(
    f"{len(pairs)} questions in both; A better on {sum((a.get(metric) or 0) > (b.get(metric) or 0) for a, b in pairs)}, "
    f"B better on {sum((a.get(metric) or 0) < (b.get(metric) or 0) for a, b in pairs)}"
)
st.dataframe(cells(table), hide_index=True)
