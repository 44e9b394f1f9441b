"""Results as data: the rows in ``results/*.jsonl`` and the documents made of them.

Each row carries the commit, the settings digest, the builds, the split, the method, the metric
and its interval. ``evidence.jsonl`` is written by ``benchmarks/evidence.py --results``;
``answers.jsonl`` by ``python -m ftamem_core.evaluation.results --add-run RUN`` from a finished
``ftamem eval`` run. ``python -m ftamem_core.evaluation.results`` writes ``docs/RESULTS.md`` (every
split's latest run per benchmark) and the README's one current table between its
``<!-- results:begin -->`` and ``<!-- results:end -->`` markers.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
from datetime import datetime
from pathlib import Path

from .splits import SESSIONS, SPLITS, split_of

ROOT = Path(__file__).resolve().parents[2]
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def commit(root: Path = ROOT) -> str:
    """The checkout's commit, with "+dirty" when files differ from it."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def settings_digest(settings) -> str:
    text = json.dumps(settings.model_dump(exclude={"storage": {"db_path"}}), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def read(folder: Path, name: str) -> list[dict]:
    path = folder / name
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def latest(rows: list[dict]) -> dict[str, list[dict]]:
    """Per split, the rows of its newest run (the last commit and settings measured)."""
    out: dict[str, list[dict]] = {}
    for split in dict.fromkeys(r["split"] for r in rows):
        mine = [r for r in rows if r["split"] == split]
        key = lambda r: (r["commit"], r["settings_digest"], r["measured"], r.get("run"))  # noqa: E731
        out[split] = [r for r in mine if key(r) == key(mine[-1])]
    return out


def _cell(row: dict | None) -> str:
    if row is None:
        return "–"
    if row.get("low") is None:
        return f"{row['value']}"
    return f"{row['value']:.2f} [{row['low']:.2f}, {row['high']:.2f}]"


def recall_table(rows: list[dict], metric: str = "content_recall") -> list[str]:
    """Methods by budget, each cell the mean and its 95% interval."""
    budgets = sorted({r["budget"] for r in rows if r["metric"] == metric})
    methods = list(dict.fromkeys(r["method"] for r in rows if r["metric"] == metric))
    find = {(r["method"], r["budget"]): r for r in rows if r["metric"] == metric}
    out = ["| method | " + " | ".join(f"{b} tokens" for b in budgets) + " |", "|---" * (len(budgets) + 1) + "|"]
    out += ["| " + m + " | " + " | ".join(_cell(find.get((m, b))) for b in budgets) + " |" for m in methods]
    return out


# Answers -------------------------------------------------------------------------------------

ANSWER_METRICS = ("f1", "content_recall", "answer_stage_tokens", "seconds", "packet_tokens")


def _run_split(config: dict) -> str:
    """The split an evaluation run's conversations, sessions and questions make up (else "other":
    a run over every case of a file, or capped at N questions per case, is no split)."""
    names = {split_of(c) for c in config.get("cases") or ()}
    whole = config.get("sessions") == SESSIONS and not config.get("questions")
    return names.pop() if len(names) == 1 and whole else "other"


def answer_rows(run: Path, answered_at: str | None = None, measured: str | None = None, note: str = "") -> list[dict]:
    """One finished ``ftamem eval`` run as rows: per method its main F1 (LoCoMo's official F1 over
    categories 1-4, ES-MemEval's F1) and content recall with 95% intervals (questions resampled
    within each conversation), answer-stage tokens, packet tokens and seconds per question; then
    the first method minus each other one, paired by question. Only questions every method
    answered count, so that the methods are compared on the same questions."""
    from datetime import date

    from .report import main_f1, paired_differences, read_rows
    from .stats import stratified_bootstrap

    config = json.loads((run / "config.json").read_text(encoding="utf-8"))
    dataset = config["dataset"]
    rows = read_rows(run / "questions.jsonl")
    methods = [m for m in config["methods"] if any(r["method"] == m for r in rows)]
    per = {
        m: {(r["case"], r["qid"]): r for r in rows if r["method"] == m and main_f1(dataset, r) is not None}
        for m in methods
    }
    shared = sorted(set.intersection(*(set(v) for v in per.values()))) if per else []
    if not shared:
        raise ValueError(f"{run}: no question answered by every method")
    base = {
        "commit": answered_at or config.get("commit") or "unknown",
        "settings_digest": config.get("settings_digest") or "unrecorded",
        "note": note,
        "split": _run_split(config),
        "cases": sorted({c for c, _ in shared}),
        "sessions": config.get("sessions"),
        "measured": measured or date.today().isoformat(),
        "model": config["llm"].get("model"),
        "benchmark": "answers",
        "run": run.name,
        "n": len(shared),
        "dataset": dataset,
        # a run written before settings were grouped by phase (issue 41) has it at the top level
        "temperature": (config.get("answer") or {}).get("answer_temperature", config.get("answer_temperature")),
        "cpus": config.get("cpus"),
        "profile": config.get("profile") or "unrecorded",
    }
    strata = [c for c, _ in shared]
    value = {
        "f1": lambda r: main_f1(dataset, r),
        "content_recall": lambda r: r.get("content_recall"),
        "answer_stage_tokens": lambda r: r.get("answer_stage_tokens"),
        "seconds": lambda r: r.get("seconds"),
        "packet_tokens": lambda r: r.get("packet_tokens"),
    }
    out = []
    for m in methods:
        for metric in ANSWER_METRICS:
            xs = [value[metric](per[m][q]) for q in shared]
            if any(x is None for x in xs):
                continue
            row = {**base, "method": m, "metric": metric}
            if metric in ("f1", "content_recall"):
                b = stratified_bootstrap(xs, strata)
                row.update(value=round(b["mean"], 4), low=round(b["low"], 4), high=round(b["high"], 4))
            else:
                row["value"] = round(sum(xs) / len(xs), 1)
            out.append(row)
    measures = {metric: value[metric] for metric in ("f1", "content_recall")}
    for (m, metric), d in paired_differences(methods, per, measures, shared).items():
        out.append(
            {
                **base,
                "method": f"{methods[0]} - {m}",
                "metric": metric,
                "value": round(d["mean"], 4),
                "low": round(d["low"], 4),
                "high": round(d["high"], 4),
                "excludes_zero": d["excludes_zero"],
            }
        )
    return out


def add_run(run: Path, folder: Path, answered_at: str | None = None, note: str = "") -> int:
    """Append a finished evaluation run's rows to ``folder/answers.jsonl``; the number written."""
    rows = answer_rows(run, answered_at, note=note)
    if any((r.get("run"), r["commit"]) == (rows[0]["run"], rows[0]["commit"]) for r in read(folder, "answers.jsonl")):
        raise ValueError(
            f"run {rows[0]['run']!r} at commit {rows[0]['commit']} is already in {folder / 'answers.jsonl'}"
        )
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "answers.jsonl", "a", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    return len(rows)


def answers_table(rows: list[dict]) -> list[str]:
    """Methods by measure: F1 and content recall with their intervals, tokens and seconds per question."""
    find = {(r["method"], r["metric"]): r for r in rows}
    methods = [m for m in dict.fromkeys(r["method"] for r in rows) if " - " not in m]
    out = [
        "| method | F1 (official, categories 1-4) | content recall | answer-stage tokens / question "
        "| packet tokens / question | seconds / question |",
        "|---" * 6 + "|",
    ]
    for m in methods:
        out.append(
            f"| {m} | "
            + " | ".join(_cell(find.get((m, k))) for k in ANSWER_METRICS[:2])
            + " | "
            + " | ".join(_cell(find.get((m, k))) for k in ("answer_stage_tokens", "packet_tokens", "seconds"))
            + " |"
        )
    diffs = [r for r in rows if " - " in r["method"]]
    if diffs:
        out += ["", "| paired difference | F1 | excludes 0 | content recall | excludes 0 |", "|---" * 5 + "|"]
        for m in dict.fromkeys(r["method"] for r in diffs):
            f1, cr = find.get((m, "f1")), find.get((m, "content_recall"))
            out.append(
                f"| {m} | {_cell(f1)} | {'yes' if f1 and f1.get('excludes_zero') else 'no'} | {_cell(cr)} | "
                f"{'yes' if cr and cr.get('excludes_zero') else 'no'} |"
            )
    return out


def _split_name(split: str, rows: list[dict]) -> str:
    """The split with the conversations its rows were measured on (``--only`` takes fewer)."""
    cases = rows[0].get("cases") or SPLITS.get(split, ())
    whole = "" if set(SPLITS.get(split, ())) <= set(cases) else f" of {len(SPLITS[split])}"
    return f"{split} ({', '.join(cases)}{whole}, sessions 1-{rows[0].get('sessions', 3)})"


CRITERIA = ("fact", "time", "affect", "relatedness")


def audit_scores(folder: Path) -> dict[str, dict[str, list[dict]]]:
    """One audit's ``folder/CASE-ANNOTATOR.csv`` (the rows ``ftamem audit score --from`` reads, one
    round per case): case -> annotator -> rows."""
    import csv

    out: dict[str, dict[str, list[dict]]] = {}
    for path in sorted(folder.glob("*-*.csv")):
        case, _, annotator = path.stem.rpartition("-")
        with open(path, newline="", encoding="utf-8") as f:
            out.setdefault(case, {})[annotator] = list(csv.DictReader(f))
    return out


def audits(folder: Path) -> list[dict]:
    """The hand audits under ``folder/audit``, newest first: one per ``audit/LABEL/`` folder (LABEL the
    builds' commit) holding its ``CASE-ANNOTATOR.csv`` and ``rounds.json`` (how each case's round was
    drawn, ``measured_at``, an ISO date or date and time, and an optional ``note`` for the reader).
    Dated audits come first, newest first, then undated
    ones by folder name, descending. The older flat layout, the files directly in ``audit/``, reads
    as one audit without a label. Each audit: ``label`` (None for the flat one), ``path``,
    ``measured_at``, ``note``, ``rounds`` (case -> how it was drawn) and ``scores`` (as ``audit_scores``);
    folders without scores are left out."""
    root = folder / "audit"
    if not root.is_dir():
        return []
    flat = sorted(root.glob("*-*.csv"))
    folders = sorted(p for p in root.iterdir() if p.is_dir())
    if flat and folders:
        raise ValueError(
            f"{root}: both score files ({flat[0].name}, ...) and audit folders ({folders[0].name}/, ...); "
            f"move the files into a folder named after their builds' commit, {root}/LABEL/"
        )
    out = []
    for path, label in [(root, None)] if flat else [(p, p.name) for p in folders]:
        scores = audit_scores(path)
        if not scores:
            continue
        rounds_file = path / "rounds.json"
        rounds = json.loads(rounds_file.read_text(encoding="utf-8")) if rounds_file.exists() else {}
        measured = rounds.get("measured_at")
        if measured is not None:
            try:
                datetime.fromisoformat(measured)
            except (TypeError, ValueError):
                raise ValueError(
                    f"{rounds_file}: measured_at {measured!r} is not a date (YYYY-MM-DD or YYYY-MM-DDTHH:MM)"
                ) from None
        out.append(
            {
                "label": label,
                "path": path,
                "measured_at": measured,
                "note": rounds.get("note", ""),
                "rounds": {c: r for c, r in rounds.items() if isinstance(r, dict)},
                "scores": scores,
            }
        )
    return sorted(
        out,
        key=lambda a: (
            a["measured_at"] is not None,
            datetime.fromisoformat(a["measured_at"] or "0001-01-01"),
            a["label"] or "",
        ),
        reverse=True,
    )


def audit_table(scores: dict[str, dict[str, list[dict]]]) -> list[str]:
    """Mean 0-2 score per criterion (an item's score is its annotators' mean, as the paper's audit
    table), per annotator, and Krippendorff's ordinal alpha over all items."""
    import krippendorff
    import numpy as np

    def value(row: dict, c: str) -> float | None:
        v = (row.get(c) or "").strip()
        return float(v) if v else None

    annotators = sorted({a for per in scores.values() for a in per})
    items = [(case, row["item"]) for case, per in scores.items() for row in next(iter(per.values()))]
    lookup = {(case, a, row["item"]): row for case, per in scores.items() for a, rows in per.items() for row in rows}
    out = [
        "| criterion | items | mean (items) | "
        + " | ".join(f"mean ({a})" for a in annotators)
        + " | Krippendorff's alpha (ordinal) |",
        "|---" * (4 + len(annotators)) + "|",
    ]
    for c in CRITERIA:
        per_item, per_annotator = [], {a: [] for a in annotators}
        matrix = []
        for case, item in items:
            got = {a: value(lookup[(case, a, item)], c) for a in annotators if (case, a, item) in lookup}
            got = {a: v for a, v in got.items() if v is not None}
            if not got:
                continue
            per_item.append(sum(got.values()) / len(got))
            for a, v in got.items():
                per_annotator[a].append(v)
            matrix.append([got.get(a, np.nan) for a in annotators])
        if not per_item:
            continue
        alpha = "–"
        if len(annotators) > 1:
            data = np.array(matrix, dtype=float).T
            if len(np.unique(data[~np.isnan(data)])) > 1:
                alpha = f"{krippendorff.alpha(reliability_data=data, level_of_measurement='ordinal'):.2f}"
        out.append(
            f"| {c} | {len(per_item)} | {sum(per_item) / len(per_item):.2f} | "
            + " | ".join(f"{sum(v) / len(v):.2f}" if v else "–" for v in per_annotator.values())
            + f" | {alpha} |"
        )
    return out


def audit_section(audit: dict) -> list[str]:
    """One hand audit (as ``audits`` gives it): its heading, how its rounds were drawn, its table."""
    label, rounds, scores = audit["label"], audit["rounds"], audit["scores"]
    drawn = "; ".join(
        f"{c}: {r['units']} units and {r['pairs']} pairs, seed {r['seed']}, sampler {r['sampler']}, "
        f"built at `{r['built_at']}`"
        for c, r in rounds.items()
    )
    return [
        "## Hand audit of the test builds" + (f", `{label}`" if label else ""),
        "",
        (
            f"Measured {datetime.fromisoformat(audit['measured_at']).date().isoformat()}. "
            if audit["measured_at"]
            else ""
        )
        + f"Seeded rounds (`ftamem audit new CASE --units N --pairs M --seed S`) over the test builds "
        f"({', '.join(scores)}), each item read against its turns and scored 0-2 with the paper's rubric "
        "by two annotators working blind (`ftamem audit sheet`); scores in "
        + (f"`results/audit/{label}/`." if label else "`results/audit/`.")
        + (f" Drawn: {drawn}." if drawn else "")
        + (f" Note: {audit['note']}" if audit.get("note") else ""),
        "",
    ] + audit_table(scores)


def results_markdown(folder: Path) -> str:
    rows = read(folder, "evidence.jsonl")
    out = [
        "# Results",
        "",
        "Generated by `python -m ftamem_core.evaluation.results` from the rows in `results/`; do not edit by hand.",
        "Defaults are chosen on `dev`; `test` is reported, never tuned on. Intervals: 95%, paired bootstrap over",
        "questions resampled within each conversation: they cover these conversations' questions, not the",
        "spread between conversations, and several budgets and methods are compared at once: read a single",
        "interval that just excludes 0 with care. Content recall: a gold evidence turn counts when the",
        "packet shows 60% of its content words (`ftamem_core/evaluation/content.py`); pointer recall counts the",
        "turns inside the spans of the units shown, which a memory of empty units maxes out (the `null` row).",
        "Unit content recall reads the unit lines of the same packet alone: what the units say, apart from",
        "the turns shown beside them (0 for turn-level RAG by construction; the `null` memory's empty units",
        "read 0 up to a turn whose few content words are the speakers' names).",
        "`null`: one information-free unit per 12-turn block (what its packets show comes from the source turns",
        "and the turn channel the packet adds to any unit); `verbatim`: the turns' copies alone, no model call;",
        "both retrieved exactly as `fta`; `full-context`: every turn of the sessions in the prompt. `fta - X`: the",
        "paired difference.",
        "",
    ]
    if not rows and not read(folder, "answers.jsonl") and not read(folder, "units.jsonl"):
        return "\n".join(out + ["No results recorded yet."]) + "\n"
    for split, mine in latest(rows).items():
        first = mine[0]
        out += (
            [
                f"## Evidence recall, {_split_name(split, mine)}",
                "",
                f"Commit `{first['commit']}`, settings `{first['settings_digest']}`, model {first['model']}, "
                f"measured {first['measured']}; {first['n']} questions; builds: "
                + (", ".join(f"`{b}`" for b in first["builds"].values()) or "none (no model-built memory measured)")
                + (f", built at commit `{first['built_at']}`" if first.get("built_at") else "")
                + ".",
                "",
                "Content recall (headline):",
                "",
            ]
            + recall_table(mine)
            + (
                ["", "Unit content recall (the same on the unit lines alone, without the turns shown beside them):", ""]
                + recall_table(mine, "unit_content_recall")
                if any(r["metric"] == "unit_content_recall" for r in mine)
                else []
            )
            + ["", "Pointer recall:", ""]
            + recall_table(mine, "pointer_recall")
            + ["", "Packet tokens (model tokenizer):", ""]
            + recall_table(mine, "tokens")
            + [""]
        )
    for split, mine in latest(read(folder, "units.jsonl")).items():
        first = mine[0]
        out += [
            f"## Units of the builds, {_split_name(split, mine)}",
            "",
            f"Builds made at commit `{first.get('built_at') or first['commit']}`"
            + (f" with {', '.join(f'{k}={v}' for k, v in first['set'].items())}" if first.get("set") else "")
            + ", counted apart from the construction's repairs (`evaluation/unit_counts.py`): copies of a turn "
            "are units whose fact quotes or retells one turn; pronoun-led facts start with a pronoun that nothing in the unit names.",
            "",
        ]
        out += units_table(mine) + [""]
    for split, mine in latest(read(folder, "answers.jsonl")).items():
        first = mine[0]
        out += (
            [
                f"## Answers, {_split_name(split, mine)}",
                "",
                f"Run `{first['run']}` answered at commit `{first['commit']}`, settings `{first['settings_digest']}`, "
                f"model {first['model']}{_temperature(first)}"
                + (f", profile `{first['profile']}`" if first.get("profile", "unrecorded") != "unrecorded" else "")
                + f", measured {first['measured']}; {first['n']} questions"
                + (
                    " (categories 1-4, evidence in these sessions). F1: LoCoMo's official scoring."
                    if first.get("dataset", "locomo") == "locomo"
                    else ". F1: ES-MemEval's (unique word sets)."
                )
                + (f" Seconds on {first['cpus']} CPU cores." if first.get("cpus") else "")
                + " Full-context shows every turn, so its content recall is 1 by construction."
                + (f" Note: {first['note']}" if first.get("note") else ""),
                "",
            ]
            + answers_table(mine)
            + [""]
        )
    for audit in audits(folder):
        out += audit_section(audit) + [""]
    return "\n".join(out)


UNIT_COLUMNS = (
    ("units", "units"),
    ("copies_of_a_turn", "copies of a turn"),
    ("with_feeling", "with a feeling"),
    ("with_intention", "with an intention"),
    ("pronoun_led", "pronoun-led"),
    ("second_person", "second person"),
    ("links", "links"),
)


def units_table(rows: list[dict]) -> list[str]:
    """Per build: its units read apart from the repairs, its links' relations, its cost per turn."""
    out = [
        "| case | "
        + " | ".join(label for _, label in UNIT_COLUMNS)
        + " | followup_of / updates / other links | high confidence | calls / turn | tokens / turn |",
        "|---" * (len(UNIT_COLUMNS) + 5) + "|",
    ]
    for r in rows:
        c, cost = r["counts"], r["cost"]
        relations = c.get("link_relations") or {}
        other = sum(v for k, v in relations.items() if k not in ("followup_of", "updates"))
        out.append(
            f"| {r['case']} | "
            + " | ".join(str(c.get(k, "–")) for k, _ in UNIT_COLUMNS)
            + f" | {relations.get('followup_of', 0)} / {relations.get('updates', 0)} / {other}"
            + f" | {(c.get('link_confidence') or {}).get('high', 0)} | {cost.get('calls_per_turn', '–')} "
            + f"| {cost.get('tokens_per_turn', '–')} |"
        )
    return out


def _temperature(row: dict) -> str:
    # runs added before the answer temperature was recorded ran at the default, 0
    return f" (temperature {row.get('temperature') or 0.0:g})"


def readme_table(folder: Path) -> str:
    """Content recall at each budget, FTA-Mem against turn-level RAG, per split."""
    rows = read(folder, "evidence.jsonl")
    lines = [
        "Content recall of the packet (gold evidence turns whose words it shows; LoCoMo, sessions 1-3, "
        "embedded 1.5B), 95% intervals:",
        "",
    ]
    for split, mine in latest(rows).items():
        keep = [r for r in mine if r["method"] in ("fta", "turn-rag", "verbatim", "null")]
        lines += [f"{_split_name(split, mine)}:", ""] + recall_table(keep) + [""]
    answers = read(folder, "answers.jsonl")
    for split, mine in latest(answers).items():
        keep = [r for r in mine if r["metric"] == "f1" and " - " not in r["method"]]
        lines += (
            [
                f"Answers, LoCoMo official F1 (categories 1-4), {_split_name(split, mine)}:",
                "",
                "| method | F1 |",
                "|---|---|",
            ]
            + [f"| {r['method']} | {_cell(r)} |" for r in keep]
            + [""]
        )
    lines.append(
        "All figures, with unit content recall, pointer recall, packet tokens, costs and the paired differences: "
        "[docs/RESULTS.md](docs/RESULTS.md)."
    )
    return "\n".join(lines) if rows or answers else "See [docs/RESULTS.md](docs/RESULTS.md)."


def write(folder: Path, docs: Path, readme: Path) -> None:
    docs.write_text(results_markdown(folder), encoding="utf-8")
    text = readme.read_text(encoding="utf-8")
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        readme.write_text(f"{head}{BEGIN}\n{readme_table(folder)}\n{END}{tail}", encoding="utf-8")


def main() -> None:
    p = argparse.ArgumentParser(description="Write docs/RESULTS.md and the README's table from results/.")
    p.add_argument("--results", type=Path, default=ROOT / "results")
    p.add_argument("--docs", type=Path, default=ROOT / "docs" / "RESULTS.md")
    p.add_argument("--readme", type=Path, default=ROOT / "README.md")
    p.add_argument(
        "--add-run",
        type=Path,
        metavar="RUN",
        help="first append a finished `ftamem eval` run's rows to RESULTS/answers.jsonl",
    )
    p.add_argument(
        "--answered-at",
        metavar="COMMIT",
        help="with --add-run: the commit the run answered at (runs record it in config.json since this option exists)",
    )
    p.add_argument("--note", default="", help="with --add-run: what a reader of the figures should know")
    args = p.parse_args()
    if args.add_run:
        print(
            f"{add_run(args.add_run, args.results, args.answered_at, args.note)} rows added to {args.results / 'answers.jsonl'}"
        )
    write(args.results, args.docs, args.readme)


if __name__ == "__main__":
    main()
