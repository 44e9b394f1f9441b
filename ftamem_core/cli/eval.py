"""Commands of the evaluation: benchmark runs, density annotation, correlations, scoring, the
retrieval benchmark."""

from __future__ import annotations

import json

from ..config import Settings
from ..storage.store import StoreError
from .common import refuse_withdrawn
from .tables import table


def cmd_eval(args, settings: Settings):
    from datetime import datetime
    from pathlib import Path

    from ..llm.embeddings import Embedder
    from ..evaluation.run import EvalConfig, run
    from ..llm.factory import make_llm

    if args.split:
        from ..evaluation.splits import SESSIONS, SPLITS

        if args.dataset != "locomo" or args.cases or args.sessions:
            raise StoreError("--split is LoCoMo's and names the cases and sessions itself")
        args.cases, args.sessions = list(SPLITS[args.split]), SESSIONS
    out = args.out or str(Path(settings.evaluation.eval_dir) / f"{args.dataset}-{datetime.now():%Y%m%d-%H%M%S}")
    cfg = EvalConfig(
        dataset=args.dataset,
        data=args.data,
        methods=args.methods,
        out=out,
        cases=args.cases,
        sessions=args.sessions,
        questions=args.questions,
        k=args.k,
        cache_dir=args.cache or str(Path(settings.evaluation.eval_dir) / "cache"),
        workers=args.workers or settings.evaluation.eval_workers,
        judge=args.judge,
        categories=args.categories,
        record=args.record,
        replay=args.replay,
    )
    from ..evaluation.run import select_documents

    refuse_withdrawn([d.case.id for d in select_documents(cfg, settings)], settings)
    summary = run(
        cfg,
        settings,
        lambda recorder: make_llm(settings.llm, settings.storage.model_dir, recorder=recorder),
        Embedder.from_settings(settings),
        progress=not args.quiet,
    )
    text = (Path(out) / "tables.md").read_text(encoding="utf-8") + f"\nwritten to {out}"
    if (args.record or args.replay) and (Path(out) / "served.json").exists():
        served = json.loads((Path(out) / "served.json").read_text(encoding="utf-8"))["served"]
        text += "\nmodel calls (every invocation of this run): " + "; ".join(
            f"{stage} " + ", ".join(f"{n} {how}" for how, n in hows.items()) for stage, hows in served.items()
        )
    return summary, text


def cmd_density(args, settings: Settings):
    from ..evaluation.density import FIELDS, annotate, per_dialogue
    from ..evaluation.run import EvalConfig, select_documents
    from ..llm.factory import make_llm

    docs = select_documents(
        EvalConfig(args.dataset, args.data, [], "", cases=args.cases, sessions=args.sessions), settings
    )
    refuse_withdrawn([d.case.id for d in docs], settings)
    rows = annotate(docs, make_llm(settings.llm, settings.storage.model_dir), args.out)
    dialogues = per_dialogue(rows)
    overall = {f: round(sum(r[f] for r in rows) / len(rows), 4) for f in FIELDS} if rows else {}
    shown = [{"dialogue": c, **d} for c, d in dialogues.items()] + [
        {"dialogue": "all turns", "turns": len(rows), **overall}
    ]
    return {"dialogues": dialogues, "overall": overall}, table(shown, ["dialogue", "turns", *FIELDS, "total_anchors"])


def cmd_correlate(args, settings: Settings):
    from pathlib import Path

    from ..evaluation.density import dialogue_gain, gain_correlations, per_dialogue
    from ..evaluation.report import read_rows

    summary = json.loads((Path(args.run) / "summary.json").read_text(encoding="utf-8"))
    metric = "f1_official" if summary["dataset"] == "locomo" else "f1"
    questions = read_rows(Path(args.run) / "questions.jsonl")
    if summary["dataset"] == "locomo":  # as the paper's Table 10: no category 5
        questions = [q for q in questions if str(q.get("category")) in ("1", "2", "3", "4")]
    annotations = [
        json.loads(line) for line in Path(args.density).read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    gain = dialogue_gain(questions, *args.methods, metric, relative=not args.absolute)
    result = gain_correlations(per_dialogue(annotations), gain)
    rows = [
        {"field": f, **{k: v for k, v in c.items() if k != "leave_one_out"}, "leave_one_out": c.get("leave_one_out")}
        for f, c in result["correlations"].items()
    ]
    text = table(rows, ["field", "n", "pearson", "spearman", "low", "high", "permutation_p", "leave_one_out"])
    return {**result, "gain": gain}, (result["note"] or text)


def cmd_score(args, settings: Settings):
    from ..evaluation.metrics import read_predictions, score_items, summarise

    scored = score_items(args.dataset, read_predictions(args.file), bertscore=not args.no_bertscore)
    summary = summarise(args.dataset, scored)
    if args.items:
        with open(args.items, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in scored)
    key = "category" if args.dataset == "locomo" else "capability"
    groups = summary[key]
    metrics = [m for m in next(iter(groups.values()), {}) if m != "n"]
    rows = [{key: f"{g} {summary['names'][g]}", "n": v["n"], **{m: v[m] for m in metrics}} for g, v in groups.items()]
    rows.append({key: "overall", **{m: summary["overall"].get(m) for m in ["n", *metrics]}})
    text = "\n".join([table(rows, [key, "n", *metrics]), "", *summary["protocols"].values()])
    if args.dataset == "locomo":
        text += f"\noverall official F1 over categories 1-4: {summary['overall']['f1_official_categories_1_4']}"
    return {g: {m: v[m] for m in metrics} | {"n": v["n"]} for g, v in groups.items()}, text


def cmd_bench(args, settings: Settings):
    from ..retrieval.bench import bench_retrieval

    row = bench_retrieval(args.units, args.queries, config=settings.storage.index)
    return row, table([row], list(row))
