"""The audit report: per round, per case and dataset, and across rounds.

The main table is laid out like the paper's audit table (Table 11): one row per group, the mean
score of Fact, Time, Affect/Ctx. and Rel. (an item's score is the mean of its annotators', as the
paper reports "the mean of their scores"). Beside it: the share of 0 / 1 / 2 per criterion, the
agreement per criterion (``agreement``), the items annotators disagree on, the items changed
since the draw, and the automatic checks as their own columns.
"""

from __future__ import annotations

import csv
import io
from statistics import mean

from ...storage.store import Store
from .agreement import agreement
from .checks import CHECKS
from .rounds import ALL_CRITERIA, CRITERIA, changes_since_draw, get_round, items, scores, unit_item_checks

LABELS = {"fact": "Fact", "time": "Time", "affect": "Affect/Ctx.", "relatedness": "Rel."}


def _mean(values: list) -> float | None:
    return round(float(mean(values)), 3) if values else None


def report(store: Store, round_ids: list[int]) -> dict:
    rounds = [get_round(store, r) for r in round_ids]
    all_items = [i for r in round_ids for i in items(store, r)]
    all_scores = scores(store, round_ids) if round_ids else []
    by_item: dict[int, list[dict]] = {}
    for s in all_scores:
        by_item.setdefault(s["item_id"], []).append(s)
    formats = {c["id"]: c["source_format"] or "other" for c in store.list_cases()}

    def item_mean(item: dict, criterion: str) -> float | None:
        values = [s[criterion] for s in by_item.get(item["id"], []) if s[criterion] is not None]
        return mean(values) if values else None

    def row(group: str, members: list[dict]) -> dict:
        out = {
            "group": group,
            "units": sum(i["kind"] == "unit" and i["id"] in by_item for i in members),
            "pairs": sum(i["kind"] == "pair" and i["id"] in by_item for i in members),
        }
        for c in ALL_CRITERIA:
            values = [v for i in members if c in CRITERIA[i["kind"]] and (v := item_mean(i, c)) is not None]
            out[LABELS[c]] = _mean(values)
        return out

    groups = [row("all", all_items)]
    for fmt in sorted({formats.get(i["case_id"], "other") for i in all_items}):
        groups.append(row(f"dataset {fmt}", [i for i in all_items if formats.get(i["case_id"], "other") == fmt]))
    for case_id in sorted({i["case_id"] for i in all_items}):
        groups.append(row(f"case {case_id}", [i for i in all_items if i["case_id"] == case_id]))
    if len(round_ids) > 1:
        for r in round_ids:
            groups.append(row(f"round {r}", [i for i in all_items if i["round_id"] == r]))

    distribution, agreements, disagreements = {}, {}, []
    for c in ALL_CRITERIA:
        values = [s[c] for s in all_scores if s[c] is not None]
        distribution[LABELS[c]] = {
            str(v): round(values.count(v) / len(values), 3) if values else None for v in (0, 1, 2)
        }
        ratings: dict[str, dict] = {}
        for s in all_scores:
            if s[c] is not None:
                ratings.setdefault(s["annotator"], {})[s["item_id"]] = s[c]
        agreements[LABELS[c]] = agreement(ratings)
    position = {i["id"]: i for i in all_items}
    for item_id, given in by_item.items():
        item = position[item_id]
        for c in CRITERIA[item["kind"]]:
            marks = {s["annotator"]: s[c] for s in given if s[c] is not None}
            if len(set(marks.values())) > 1:
                disagreements.append(
                    {
                        "round": item["round_id"],
                        "item": item_id,
                        "case": item["case_id"],
                        "kind": item["kind"],
                        "units": _unit_names(item),
                        "criterion": LABELS[c],
                        "scores": marks,
                        "comments": {s["annotator"]: s["comment"] for s in given if s["comment"]},
                    }
                )
    disagreements.sort(key=lambda d: (d["round"], position[d["item"]]["position"], d["criterion"]))

    changed = []
    for item in all_items:
        notes = changes_since_draw(store, item)
        if notes:
            changed.append({"round": item["round_id"], "item": item["id"], "case": item["case_id"], "changes": notes})
    checks_by_item = unit_item_checks(store, all_items)
    present = [c for c in checks_by_item.values() if c]
    checks = {
        name: {
            "passed": sum(c[name] is True for c in present),
            "failed": sum(c[name] is False for c in present),
            "not_applicable": sum(c[name] is None for c in present),
            "meaning": CHECKS[name],
        }
        for name in CHECKS
    }
    annotators = sorted({s["annotator"] for s in all_scores})
    return {
        "rounds": [{k: r[k] for k in ("id", "scope", "cases", "n_units", "n_pairs", "seed", "items")} for r in rounds],
        "annotators": annotators,
        "table": groups,
        "distribution": distribution,
        "agreement": agreements,
        "disagreements": disagreements,
        "changed_since_draw": changed,
        "checks": checks,
        "items": [_item_row(i, by_item.get(i["id"], []), checks_by_item.get(i["id"]), annotators) for i in all_items],
    }


def _unit_names(item: dict) -> str:
    return f"m{item['unit_id']}" + (f" → m{item['other_id']}" if item["kind"] == "pair" else "")


def _item_row(item: dict, given: list[dict], checks: dict | None, annotators: list[str]) -> dict:
    out = {
        "round": item["round_id"],
        "item": item["id"],
        "position": item["position"],
        "case": item["case_id"],
        "kind": item["kind"],
        "units": _unit_names(item),
        "stratum": item["stratum"],
    }
    for s in given:
        for c in CRITERIA[item["kind"]]:
            out[f"{c} ({s['annotator']})"] = s[c]
    out.update({f"check: {name}": (checks or {}).get(name) for name in CHECKS} if item["kind"] == "unit" else {})
    return out


def scores_csv(store: Store, round_ids: list[int]) -> str:
    """One row per score: round, item, case, kind, units, annotator, the four criteria, comment,
    and the automatic checks of the item's (first) unit."""
    buffer = io.StringIO()
    columns = ["round", "item", "case", "kind", "units", "annotator", *ALL_CRITERIA, "comment", *CHECKS]
    writer = csv.DictWriter(buffer, columns)
    writer.writeheader()
    by_id = {i["id"]: i for r in round_ids for i in items(store, r)}
    checked = unit_item_checks(store, list(by_id.values()))
    for s in scores(store, round_ids):
        item = by_id[s["item_id"]]
        writer.writerow(
            {
                "round": item["round_id"],
                "item": item["id"],
                "case": item["case_id"],
                "kind": item["kind"],
                "units": _unit_names(item),
                "annotator": s["annotator"],
                **{c: s[c] for c in ALL_CRITERIA},
                "comment": s["comment"],
                **{
                    name: (checked.get(item["id"]) or {}).get(name) if item["kind"] == "unit" else "" for name in CHECKS
                },
            }
        )
    return buffer.getvalue()


def table_markdown(rep: dict) -> str:
    """The main table as Markdown, like the paper's Table 11 (for a file, not for the app)."""
    head = ["Group", "Units", "Pairs", *LABELS.values()]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rep["table"]:
        cells = [r["group"], r["units"], r["pairs"], *(r[label] for label in LABELS.values())]
        lines.append(
            "| "
            + " | ".join("–" if v is None else f"{v:.2f}" if isinstance(v, float) else str(v) for v in cells)
            + " |"
        )
    return "\n".join(lines)
