"""A run's outputs: scores per question, the summary, tables laid out like the paper's Tables 2,
3, 5 and 6, the paired bootstrap against the first method, and plotly charts.

The main F1 for comparisons: LoCoMo's official F1 over categories 1-4 (the paper's Table 10
leaves category 5 out), ES-MemEval's F1. Average rank (Avg.R) is over the automatic metrics per
category or capability and overall (ES-MemEval: F1 and BERTScore on IE/TR/CD/Abs/UM/All, as the
paper's Table 2; LoCoMo: F1 and BLEU-1 of the memory-paper protocol on categories 1-4 and their
average, as Table 3); 1 is best, ties share the mean rank.
"""

from __future__ import annotations

import json
from pathlib import Path

from typing import Literal

from pydantic import BaseModel, Field

from ..llm.prompts import load_prompt
from .metrics import ESMEMEVAL_CAPABILITIES, LOCOMO_CATEGORIES, PROTOCOLS, score_items, summarise
from .stats import paired_bootstrap

LOCOMO_TABLE = (("4", "Single Hop"), ("1", "Multi Hop"), ("2", "Temporal"), ("3", "Open Domain"))
ES_ORDER = ("IE", "TR", "CD", "Abs", "UM")


def read_rows(path: Path) -> list[dict]:
    rows: dict[tuple, dict] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
                rows[(row["method"], row["case"], row["qid"])] = row
            except (ValueError, KeyError):
                continue
    return list(rows.values())


class LocomoVerdict(BaseModel):
    reason: str = ""
    label: Literal["CORRECT", "WRONG"]


class EsVerdict(BaseModel):
    reason: str = ""
    score: int = Field(..., ge=0, le=2)


def judge_rows(out: Path, dataset: str, rows: list[dict], llm) -> None:
    """The LLM judge (LoCoMo CORRECT / WRONG as 1 / 0; ES-MemEval 0-2), cached in judgements.jsonl."""
    path = out / "judgements.jsonl"
    cached = {(r["method"], r["case"], r["qid"]): r["judge"] for r in read_rows(path)}
    name, model = ("judge_locomo", LocomoVerdict) if dataset == "locomo" else ("judge_esmemeval", EsVerdict)
    for row in rows:
        key = (row["method"], row["case"], row["qid"])
        if key not in cached:
            messages = load_prompt(name).messages(
                question=row["question"], gold=row.get("answer") or "(none)", prediction=row["prediction"]
            )
            verdict, _ = llm.structured("judge", messages, model, temperature=0.0, max_tokens=200)
            cached[key] = (1.0 if verdict.label == "CORRECT" else 0.0) if dataset == "locomo" else float(verdict.score)
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps({"method": key[0], "case": key[1], "qid": key[2], "judge": cached[key]}) + "\n")
        row["judge"] = cached[key]


def main_f1(dataset: str, row: dict) -> float | None:
    if dataset == "locomo":
        return row["f1_official"] if str(row["category"]) in ("1", "2", "3", "4") else None
    return row["f1"]


def average_ranks(values: dict[str, list[float | None]]) -> dict[str, float]:
    """Mean rank per method over metric columns (higher is better; ties share the mean rank)."""
    methods = list(values)
    columns = len(next(iter(values.values()), []))
    ranks = {m: [] for m in methods}
    for c in range(columns):
        present = [(m, values[m][c]) for m in methods if values[m][c] is not None]
        for m, v in present:
            better = sum(1 for _, o in present if o > v)
            ties = sum(1 for _, o in present if o == v)
            ranks[m].append(better + (ties + 1) / 2)
    return {m: round(sum(r) / len(r), 2) if r else None for m, r in ranks.items()}


def _pct(v) -> str:
    return "–" if v is None else f"{100 * v:.2f}"


def write_outputs(out: Path, cfg, settings, costs: dict, judge=None) -> dict:
    rows = read_rows(out / "predictions.jsonl")
    dataset = cfg.dataset
    if judge is not None:
        judge_rows(out, dataset, rows, judge)
    methods = [m for m in cfg.methods if any(r["method"] == m for r in rows)]
    scored_by_method = {m: score_items(dataset, [r for r in rows if r["method"] == m]) for m in methods}
    with open(out / "questions.jsonl", "w", encoding="utf-8") as f:
        for m in methods:
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in scored_by_method[m])
    from .methods import catalogue

    known = catalogue()
    summary = {
        "dataset": dataset,
        "methods": {},
        "protocols": {k: v for k, v in PROTOCOLS.items() if k.startswith(dataset[:6])},
        "names": LOCOMO_CATEGORIES if dataset == "locomo" else ESMEMEVAL_CAPABILITIES,
        "llm": settings.llm.model_dump(exclude={"api_key"}),
        "cases": sorted({r["case"] for r in rows}),
    }
    for m in methods:
        scored = scored_by_method[m]
        s = summarise(dataset, scored)
        recall = [r["evidence_recall"] for r in scored if r.get("evidence_recall") is not None]
        content = [r["content_recall"] for r in scored if r.get("content_recall") is not None]
        construction = known[m.split("@")[0]].construction if m.split("@")[0] in known else None
        case_costs = costs.get(construction or "turns", {}) if construction else {}
        total = (
            {k: sum(c[k] for c in case_costs.values()) for k in ("units", "calls", "tokens", "turns")}
            if case_costs
            else {}
        )
        s.update(
            {
                "questions": len(scored),
                "evidence_recall": round(sum(recall) / len(recall), 4) if recall else None,
                "content_recall": round(sum(content) / len(content), 4) if content else None,
                "seconds_per_question": round(sum(r.get("seconds") or 0 for r in timed) / len(timed), 1)
                if (timed := [r for r in scored if not r.get("replayed")])
                else None,
                "packet_tokens": round(sum(r["packet_tokens"] for r in scored) / len(scored), 1) if scored else None,
                "answer_stage_tokens": round(sum(r["answer_stage_tokens"] for r in scored) / len(scored), 1)
                if scored
                else None,
                "construction": construction,
                "construction_cost": {
                    **total,
                    **(
                        {
                            "calls_per_turn": round(total["calls"] / total["turns"], 3),
                            "tokens_per_turn": round(total["tokens"] / total["turns"], 1),
                            "units_per_turn": round(total["units"] / total["turns"], 3),
                        }
                        if total.get("turns")
                        else {}
                    ),
                },
                "notes": sorted({r["note"] for r in scored if r.get("note")}),
            }
        )
        summary["methods"][m] = s
    summary["bootstrap"] = _bootstrap(dataset, methods, scored_by_method)
    summary["average_rank"] = _ranks(dataset, summary)
    (out / "summary.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False), encoding="utf-8")
    (out / "tables.md").write_text(tables_markdown(summary), encoding="utf-8")
    (out / "charts.html").write_text(charts_html(summary), encoding="utf-8")
    return summary


def paired_differences(
    methods: list[str], per: dict[str, dict[tuple, dict]], measures: dict, questions: list[tuple] | None = None
) -> dict[tuple[str, str], dict]:
    """The first method minus each other one for each measure (name -> value of a row), paired by
    question ((case, qid) -> row in ``per[method]``) and resampled within each case (an interval
    with one case too); ``questions``: only these, else those both methods answered."""
    ref, out = methods[0], {}
    for label, value in measures.items():
        for m in methods[1:]:
            keys = questions if questions is not None else [q for q in per[m] if q in per[ref]]
            pairs = [(value(per[ref][q]), value(per[m][q]), q[0]) for q in keys if q in per[ref] and q in per[m]]
            pairs = [p for p in pairs if p[0] is not None and p[1] is not None]
            if pairs:
                a, b, strata = zip(*pairs)
                out[(m, label)] = paired_bootstrap(list(a), list(b), list(strata))
    return out


def _bootstrap(dataset: str, methods: list[str], scored: dict[str, list[dict]]) -> dict:
    """The first method minus each other one: main F1 and content recall."""
    if len(methods) < 2:
        return {}
    measures = {"F1": lambda r: main_f1(dataset, r), "content recall": lambda r: r.get("content_recall")}
    per = {m: {(r["case"], r["qid"]): r for r in scored[m]} for m in methods}
    return {f"{methods[0]} - {m} ({label})": d for (m, label), d in paired_differences(methods, per, measures).items()}


def metric_columns(dataset: str, s: dict) -> list[float | None]:
    if dataset == "esmemeval":
        per = s["capability"]
        return (
            [per.get(c, {}).get("f1") for c in ES_ORDER]
            + [s["overall"].get("f1")]
            + [per.get(c, {}).get("bertscore_f1") for c in ES_ORDER]
            + [s["overall"].get("bertscore_f1")]
        )
    per = s["category"]
    cols = []
    for cat, _ in LOCOMO_TABLE:
        cols += [per.get(cat, {}).get("f1_memory"), per.get(cat, {}).get("bleu1_memory")]
    f1s = [per[c]["f1_memory"] for c, _ in LOCOMO_TABLE if c in per and per[c].get("f1_memory") is not None]
    bleus = [per[c]["bleu1_memory"] for c, _ in LOCOMO_TABLE if c in per and per[c].get("bleu1_memory") is not None]
    cols += [sum(f1s) / len(f1s) if f1s else None, sum(bleus) / len(bleus) if bleus else None]
    return cols


def _ranks(dataset: str, summary: dict) -> dict:
    return average_ranks({m: metric_columns(dataset, s) for m, s in summary["methods"].items()})


def tables_markdown(summary: dict) -> str:
    dataset, methods = summary["dataset"], summary["methods"]
    lines = [
        f"# Evaluation on {dataset}: {', '.join(summary['cases'])}",
        "",
        f"Answer model: {summary['llm']['backend']} · {summary['llm']['model']}. Scores in percent.",
        "",
    ]
    lines += [f"- {text}" for text in summary["protocols"].values()]
    lines.append("- " + "; ".join(f"{k} = {v}" for k, v in summary["names"].items()))
    lines.append("")
    if dataset == "esmemeval":
        head = [
            "Method",
            *(f"F1 {c}" for c in ES_ORDER),
            "F1 All",
            *(f"BERTScore {c}" for c in ES_ORDER),
            "BERTScore All",
            "Judge",
            "Avg.R",
        ]
        lines += ["## Like Table 2 (ES-MemEval)", "", _row(head), _rule(len(head))]
        for m, s in methods.items():
            lines.append(
                _row(
                    [
                        m,
                        *(_pct(v) for v in metric_columns(dataset, s)),
                        "–" if s["overall"].get("judge") is None else f"{s['overall']['judge']:.3f}",
                        str(summary["average_rank"].get(m)),
                    ]
                )
            )
    else:
        head = [
            "Method",
            *(f"{name} {metric}" for _, name in LOCOMO_TABLE for metric in ("F1", "BLEU-1")),
            "Average F1",
            "Average BLEU-1",
            "Avg.R",
        ]
        lines += ["## Like Table 3 (LoCoMo, memory-paper protocol, categories 1-4)", "", _row(head), _rule(len(head))]
        for m, s in methods.items():
            lines.append(_row([m, *(_pct(v) for v in metric_columns(dataset, s)), str(summary["average_rank"].get(m))]))
        head = ["Method", *(f"{c} {n}" for c, n in LOCOMO_CATEGORIES.items()), "1-4", "all", "Judge"]
        lines += ["", "## LoCoMo official scoring (F1 per category id)", "", _row(head), _rule(len(head))]
        for m, s in methods.items():
            per = s["category"]
            lines.append(
                _row(
                    [
                        m,
                        *(_pct(per.get(c, {}).get("f1_official")) for c in LOCOMO_CATEGORIES),
                        _pct(s["overall"].get("f1_official_categories_1_4")),
                        _pct(s["overall"]["f1_official"]),
                        "–" if s["overall"].get("judge") is None else _pct(s["overall"]["judge"]),
                    ]
                )
            )
    head = [
        "Method",
        "Questions",
        "Units",
        "Token/Q (answer stage)",
        "Seconds/Q",
        "Packet tokens",
        "Content recall",
        "Pointer recall",
    ]
    lines += [
        "",
        "## Like Table 5 (answer-stage cost) with evidence recall",
        "",
        "Content recall: gold turns whose words (60% of their content words) the text shown to the model "
        "holds; pointer recall: gold turns it shows or points to.",
        "",
        _row(head),
        _rule(len(head)),
    ]
    for m, s in methods.items():
        lines.append(
            _row(
                [
                    m,
                    str(s["questions"]),
                    str(s["construction_cost"].get("units", "–")),
                    str(s["answer_stage_tokens"]),
                    str(s.get("seconds_per_question", "–")),
                    str(s["packet_tokens"]),
                    "–" if s.get("content_recall") is None else f"{s['content_recall']:.3f}",
                    "–" if s["evidence_recall"] is None else f"{s['evidence_recall']:.3f}",
                ]
            )
        )
    built = {m: s for m, s in methods.items() if s["construction_cost"]}
    if built:
        head = ["Method", "Construction", "F1", "Units", "Calls", "Tokens", "Calls/turn", "Tokens/turn", "Units/turn"]
        lines += ["", "## Like Table 6 (granularity and construction cost)", "", _row(head), _rule(len(head))]
        for m, s in built.items():
            c = s["construction_cost"]
            f1 = s["overall"].get("f1_official_categories_1_4") if dataset == "locomo" else s["overall"].get("f1")
            lines.append(
                _row(
                    [
                        m,
                        s["construction"],
                        _pct(f1),
                        *(
                            str(c.get(k, "–"))
                            for k in ("units", "calls", "tokens", "calls_per_turn", "tokens_per_turn", "units_per_turn")
                        ),
                    ]
                )
            )
    if summary["bootstrap"]:
        head = ["Difference", "Mean", "95% low", "95% high", "Excludes 0", "Cases", "Questions"]
        lines += [
            "",
            "## Paired bootstrap over questions (resampled within each case), percentage points",
            "",
            _row(head),
            _rule(len(head)),
        ]
        for name, b in summary["bootstrap"].items():
            lines.append(
                _row(
                    [
                        name,
                        _pct(b["mean"]),
                        _pct(b["low"]),
                        _pct(b["high"]),
                        "yes" if b["excludes_zero"] else "no",
                        str(b["strata"]),
                        str(b["questions"]),
                    ]
                )
            )
    notes = {m: s["notes"] for m, s in methods.items() if s["notes"]}
    if notes:
        lines += ["", "Notes:"] + [f"- {m}: {'; '.join(n)}" for m, n in notes.items()]
    return "\n".join(lines) + "\n"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _rule(n: int) -> str:
    return "|" + " --- |" * n


def figures(summary: dict) -> list:
    """Main F1 per category / capability per method, and F1 and evidence recall against K where
    the run swept K (methods named ``NAME@K``)."""
    import plotly.express as px

    dataset = summary["dataset"]
    key = "category" if dataset == "locomo" else "capability"
    metric = "f1_official" if dataset == "locomo" else "f1"
    bars = [
        {"method": m, key: f"{g} {summary['names'].get(g, g)}", "F1": v.get(metric)}
        for m, s in summary["methods"].items()
        for g, v in s[key].items()
        if v.get(metric) is not None
    ]
    out = [px.bar(bars, x=key, y="F1", color="method", barmode="group", title=f"F1 per {key}")] if bars else []
    sweep = [
        {
            "method": m.split("@")[0],
            "K": int(m.split("@")[1]),
            "F1": s["overall"].get(metric),
            "evidence recall": s["evidence_recall"],
        }
        for m, s in summary["methods"].items()
        if "@" in m and m.split("@")[1].isdigit()
    ]
    if sweep:
        sweep.sort(key=lambda r: (r["method"], r["K"]))
        out.append(
            px.line(sweep, x="K", y=["F1", "evidence recall"], markers=True, title="K sweep", facet_col="method")
        )
    return out


def charts_html(summary: dict) -> str:
    """The figures in one file, plotly inlined so that it opens offline."""
    import plotly.io as pio

    parts = [pio.to_html(f, full_html=False, include_plotlyjs=(i == 0)) for i, f in enumerate(figures(summary))]
    return "<!doctype html><meta charset='utf-8'><title>FTA-Mem evaluation</title>" + "".join(parts)
