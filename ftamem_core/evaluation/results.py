"""Results as data: the rows in ``results/*.jsonl`` and the documents made of them.

Each row carries the commit, the settings digest, the builds, the split, the method, the metric
and its interval. ``python -m ftamem_core.evaluation.results`` writes ``docs/RESULTS.md`` (every
split's latest run per benchmark) and the README's one current table between its
``<!-- results:begin -->`` and ``<!-- results:end -->`` markers.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
from pathlib import Path

from .splits import SPLITS

ROOT = Path(__file__).resolve().parents[2]
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def commit(root: Path = ROOT) -> str:
    """The checkout's commit, with "+dirty" when files differ from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def settings_digest(settings) -> str:
    text = json.dumps(settings.model_dump(exclude={"db_path"}), sort_keys=True, default=str)
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
        last = (mine[-1]["commit"], mine[-1]["settings_digest"], mine[-1]["measured"])
        out[split] = [r for r in mine if (r["commit"], r["settings_digest"], r["measured"]) == last]
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


def _split_name(split: str, rows: list[dict]) -> str:
    """The split with the conversations its rows were measured on (``--only`` takes fewer)."""
    cases = rows[0].get("cases") or SPLITS.get(split, ())
    whole = "" if set(SPLITS.get(split, ())) <= set(cases) else f" of {len(SPLITS[split])}"
    return f"{split} ({', '.join(cases)}{whole}, sessions 1-{rows[0].get('sessions', 3)})"


CRITERIA = ("fact", "time", "affect", "relatedness")


def audit_scores(folder: Path) -> dict[str, dict[str, list[dict]]]:
    """``folder/audit/CASE-ANNOTATOR.csv`` (the rows ``ftamem audit score --from`` reads, one
    round per case): case -> annotator -> rows."""
    import csv

    out: dict[str, dict[str, list[dict]]] = {}
    for path in sorted((folder / "audit").glob("*-*.csv")):
        case, _, annotator = path.stem.rpartition("-")
        with open(path, newline="", encoding="utf-8") as f:
            out.setdefault(case, {})[annotator] = list(csv.DictReader(f))
    return out


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
    out = ["| criterion | items | mean (items) | " + " | ".join(f"mean ({a})" for a in annotators)
           + " | Krippendorff's alpha (ordinal) |", "|---" * (4 + len(annotators)) + "|"]
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
        out.append(f"| {c} | {len(per_item)} | {sum(per_item) / len(per_item):.2f} | "
                   + " | ".join(f"{sum(v) / len(v):.2f}" if v else "–" for v in per_annotator.values())
                   + f" | {alpha} |")
    return out


def results_markdown(folder: Path) -> str:
    rows = read(folder, "evidence.jsonl")
    out = ["# Results", "",
           "Generated by `python -m ftamem_core.evaluation.results` from the rows in `results/`; do not edit by hand.",
           "Defaults are chosen on `dev`; `test` is reported, never tuned on. Intervals: 95%, paired bootstrap over",
           "questions resampled within each conversation: they cover these conversations' questions, not the",
           "spread between conversations, and several budgets and methods are compared at once: read a single",
           "interval that just excludes 0 with care. Content recall: a gold evidence turn counts when the",
           "packet shows 60% of its content words (`ftamem_core/evaluation/content.py`); pointer recall counts the",
           "turns inside the spans of the units shown, which a memory of empty units maxes out (the `null` row).",
           "`null`: one information-free unit per 12-turn block (what its packets show comes from the source turns",
           "and the turn channel the packet adds to any unit); `verbatim`: the turns' copies alone, no model call;",
           "both retrieved exactly as `fta`. `fta - X`: the paired difference.", ""]
    if not rows:
        return "\n".join(out + ["No results recorded yet."]) + "\n"
    for split, mine in latest(rows).items():
        first = mine[0]
        out += [f"## Evidence recall, {_split_name(split, mine)}", "",
                f"Commit `{first['commit']}`, settings `{first['settings_digest']}`, model {first['model']}, "
                f"measured {first['measured']}; {first['n']} questions; builds: "
                + (", ".join(f"`{b}`" for b in first["builds"].values()) or "none (no model-built memory measured)")
                + (f", built at commit `{first['built_at']}`" if first.get("built_at") else "") + ".", "",
                "Content recall (headline):", ""] + recall_table(mine) + ["", "Pointer recall:", ""] + \
            recall_table(mine, "pointer_recall") + ["", "Packet tokens (model tokenizer):", ""] + \
            recall_table(mine, "tokens") + [""]
    scores = audit_scores(folder)
    if scores:
        out += ["## Hand audit of the test builds", "",
                f"Seeded rounds (`ftamem audit new CASE --units N --pairs M --seed 38`) over the test builds "
                f"({', '.join(scores)}), each item read against its turns and scored 0-2 with the paper's rubric "
                "by two annotators working blind (`ftamem audit sheet`); scores in `results/audit/`.", ""] + \
            audit_table(scores) + [""]
    return "\n".join(out)


def readme_table(folder: Path) -> str:
    """Content recall at each budget, FTA-Mem against turn-level RAG, per split."""
    rows = read(folder, "evidence.jsonl")
    lines = ["Content recall of the packet (gold evidence turns whose words it shows; LoCoMo, sessions 1-3, "
             "embedded 1.5B), 95% intervals:", ""]
    for split, mine in latest(rows).items():
        keep = [r for r in mine if r["method"] in ("fta", "turn-rag", "verbatim", "null")]
        lines += [f"{_split_name(split, mine)}:", ""] + recall_table(keep) + [""]
    lines.append("All figures, with pointer recall and packet tokens: [docs/RESULTS.md](docs/RESULTS.md).")
    return "\n".join(lines) if rows else "See [docs/RESULTS.md](docs/RESULTS.md)."


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
    args = p.parse_args()
    write(args.results, args.docs, args.readme)


if __name__ == "__main__":
    main()
