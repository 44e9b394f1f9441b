"""Two evidence runs of the same split, paired by question: a candidate's builds against the
baseline's (each run made by ``benchmarks/evidence.py --results DIR``).

    .venv/bin/python benchmarks/compare.py BASELINE_DIR CANDIDATE_DIR [--method fta] [--json]

For each budget, the mean content, unit content and pointer recall of ``--method`` in both runs and the paired
difference (candidate minus baseline, questions resampled within each conversation, 95%). A
change is an improvement only when the interval on dev excludes 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ftamem_core.retrieval.bench import markdown_table  # noqa: E402
from ftamem_core.evaluation.results import read  # noqa: E402
from ftamem_core.evaluation.stats import paired_bootstrap  # noqa: E402


def per_question(folder: Path, method: str) -> dict[tuple, dict]:
    rows = [r for r in read(folder, "evidence-questions.jsonl") if r["method"] == method]
    return {(r["budget"], r["case"], r["qid"]): r for r in rows}  # the last run of a question wins


def compare(base: dict[tuple, dict], cand: dict[tuple, dict]) -> list[dict]:
    out = []
    for budget in sorted({k[0] for k in base}):
        keys = sorted(k for k in base if k[0] == budget and k in cand)
        if not keys:
            continue
        for metric in ("content_recall", "unit_content_recall", "pointer_recall"):
            if any(metric not in cand[k] or metric not in base[k] for k in keys):
                continue  # a run made before the metric was measured
            a = [cand[k][metric] for k in keys]
            b = [base[k][metric] for k in keys]
            d = paired_bootstrap(a, b, [k[1] for k in keys])
            out.append(
                {
                    "budget": budget,
                    "metric": metric,
                    "n": len(keys),
                    "baseline": round(sum(b) / len(b), 3),
                    "candidate": round(sum(a) / len(a), 3),
                    "difference": round(d["mean"], 3),
                    "low": round(d["low"], 3),
                    "high": round(d["high"], 3),
                    "excludes_zero": d["excludes_zero"],
                }
            )
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("baseline", type=Path)
    p.add_argument("candidate", type=Path)
    p.add_argument("--method", default="fta")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    rows = compare(per_question(args.baseline, args.method), per_question(args.candidate, args.method))
    if not rows:
        sys.exit("no question measured in both runs")
    print(json.dumps(rows, indent=1) if args.json else markdown_table(rows))


if __name__ == "__main__":
    main()
