"""``ftamem audit``: new rounds, scoring (interactive in a terminal, or from a CSV file), reports.

ftamem audit new CASE|--all --units N --pairs M [--seed S]
ftamem audit list
ftamem audit score ROUND --as NAME [--from FILE.csv]
ftamem audit sheet ROUND [--out FILE]
ftamem audit report ROUND [ROUND ...] [--json] [--csv FILE]
"""

from __future__ import annotations

import json
import sys

from ..storage.store import StoreError
from ..config import Settings
from .common import open_store, who_runs
from .tables import table
from ..governance.audit import rounds as audit
from ..governance.audit.checks import CHECKS
from ..governance.audit.report import report, scores_csv, table_markdown


def add_parser(sub, command) -> None:
    c = command("audit", "hand audit of memory quality: sample, score 0-2 blind, agreement, report")
    verbs = c.add_subparsers(dest="verb", required=True, metavar="VERB")
    n = verbs.add_parser("new", help="draw a seeded, stratified sample of units and linked pairs")
    n.add_argument("case", nargs="?", help="one case (or --all)")
    n.add_argument("--all", action="store_true", help="every case with memory (equal shares per case)")
    n.add_argument("--units", type=int, default=20)
    n.add_argument("--pairs", type=int, default=10)
    n.add_argument("--seed", type=int, help="default: a random seed, stored with the round")
    n.add_argument("--by", help="who draws it (default: your user name)")
    verbs.add_parser("list", help="the audit rounds with their progress")
    s = verbs.add_parser("score", help="score a round's items (resumes where you left off)")
    s.add_argument("round", type=int)
    s.add_argument("--as", dest="annotator", required=True, metavar="NAME", help="the annotator's name")
    s.add_argument(
        "--from",
        dest="source",
        metavar="FILE.csv",
        help="columns item, fact, time, affect (units) or relatedness (pairs), comment",
    )
    h = verbs.add_parser(
        "sheet",
        help="the round's items as text for an annotator working offline (blind: no "
        "scores, no automatic checks), with a CSV header for 'score --from'",
    )
    h.add_argument("round", type=int)
    h.add_argument("--out", metavar="FILE", help="write the sheet to FILE (default: print it)")
    r = verbs.add_parser("report", help="means like the paper's audit table, agreement, disagreements")
    r.add_argument("round", type=int, nargs="+")
    r.add_argument("--csv", metavar="FILE", help="also write every score as CSV")
    r.add_argument("--by", help="who reads it (default: your user name); they cannot score these rounds after")


def run(args, store, who: str):
    return {"new": _new, "list": _list, "score": _score, "sheet": _sheet, "report": _report}[args.verb](
        args, store, who
    )


def _new(args, store, who):
    if bool(args.case) == bool(args.all):
        raise StoreError("name one case or pass --all")
    round_id = audit.new_round(store, None if args.all else [args.case], args.units, args.pairs, args.seed, who)
    r = audit.get_round(store, round_id)
    kinds = [i["kind"] for i in audit.items(store, round_id)]
    text = (
        f"audit round {round_id}: {kinds.count('unit')} units and {kinds.count('pair')} linked pairs from "
        f"{', '.join(r['cases'])} (seed {r['seed']})"
    )
    return {k: r[k] for k in ("id", "cases", "seed", "n_units", "n_pairs", "items")}, text


def _list(args, store, who):
    rows = [
        {
            "id": r["id"],
            "scope": r["scope"],
            "cases": ", ".join(r["cases"]),
            "items": r["items"],
            "seed": r["seed"],
            "scored": ", ".join(
                f"{name} {n}/{r['items']}" for name, n in audit.progress(store, r["id"])["annotators"].items()
            ),
            "created": r["created_at"],
        }
        for r in audit.list_rounds(store)
    ]
    return rows, table(rows, ["id", "scope", "cases", "items", "seed", "scored", "created"])


def _score(args, store, who):
    if args.source:
        n = audit.import_scores(store, args.round, args.annotator, args.source)
        done = audit.progress(store, args.round)
        return (
            done,
            f"recorded {n} scores for {args.annotator}: {done['annotators'].get(args.annotator, 0)} of {done['items']} items",
        )
    if not sys.stdin.isatty():
        raise StoreError("scoring asks in a terminal; elsewhere pass --from FILE.csv")
    total = audit.get_round(store, args.round)["items"]
    while (item_id := audit.next_item(store, args.round, args.annotator)) is not None:
        view = audit.item_view(store, item_id, args.annotator)
        print(render_item(view, total))
        values = {}
        for criterion in view["criteria"]:
            answer = _ask(f"{criterion} 0/1/2 (q to stop): ")
            if answer is None:
                break
            values[criterion] = answer
        else:
            audit.score(store, item_id, args.annotator, values, input("comment (optional): ").strip())
            continue
        break
    done = audit.progress(store, args.round)
    return done, f"{args.annotator}: {done['annotators'].get(args.annotator, 0)} of {done['items']} items scored"


RUBRIC = (
    "Score each criterion 0, 1 or 2 by reading the unit against its turns: 2 fully correct and grounded, "
    "1 partly correct but usable, 0 wrong or unsupported. Units: fact (the fact is what the turns say, of the "
    "right person), time (the time fields: when it happened, said, orientation, completion), affect (the "
    "feeling, intention and relations where the turns state or clearly imply them; 'unknown' where they "
    "do is wrong). Pairs: relatedness (the relation holds between the two units as labelled)."
)


def _sheet(args, store, who):
    """Every item of the round as an annotator reads it, without anyone's scores or the checks."""
    listed = audit.items(store, args.round)
    parts = [
        f"audit round {args.round}: {len(listed)} items",
        RUBRIC,
        "Answer as CSV with the header: item,fact,time,affect,relatedness,comment "
        "(item = the # number; leave the criteria an item does not have empty).",
    ]
    for item in listed:
        view = audit.item_view(store, item["id"], who)
        parts.append(render_item({**view, "checks": {}}, len(listed)))
    text = "\n".join(parts) + "\n"
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
        return {"items": len(listed), "out": args.out}, f"wrote {len(listed)} items to {args.out}"
    return {"items": len(listed), "sheet": text}, text


def _ask(prompt: str) -> int | None:
    while True:
        answer = input(prompt).strip().lower()
        if answer in ("q", "quit"):
            return None
        if answer in ("0", "1", "2"):
            return int(answer)
        print("type 0, 1 or 2 (2: fully correct and grounded, 1: partly correct but usable, 0: wrong or unsupported)")


def render_item(view: dict, total: int) -> str:
    item = view["item"]
    lines = [
        "",
        f"=== item {item['position'] + 1} of {total} (#{item['id']}, case {item['case_id']}, "
        f"{item['kind']}, {item['stratum']})",
    ]
    for note in view["changed"]:
        lines.append(f"  ! {note} since the draw")
    if view["link"]:
        link = view["link"]
        lines.append(f"  link: m{link['source']} {link['relation']} m{link['target']} ({link['confidence']})")
    for shown in view["units"]:
        if shown["deleted"]:
            lines.append(f"  m{shown['id']}: deleted")
            continue
        u = shown["unit"]
        lines += [
            f"  m{shown['id']} [{u['fact']['content_type']}] {u['fact']['text']}",
            f"    time: {u['time']['event_time']} ({u['time']['event_time_expression'] or '-'}, "
            f"{u['time']['time_orientation']}, {u['time']['completion']}); said {u['time']['dialogue_time'] or '-'}",
            f"    affect: {u['affect']['emotion_or_state']}; intention: {u['affect']['intention_or_plan']}; "
            f"relations: {u['affect']['relation_cues']}",
        ]
        lines += [f"    [{t['idx']}] {t['speaker'] or t['role']}: {t['text']}" for t in shown["turns"]]
        checks = view["checks"].get(shown["id"], {})
        failed = [name for name in CHECKS if checks.get(name) is False]
        if failed:
            lines.append("    automatic checks failed: " + ", ".join(failed))
    return "\n".join(lines)


def _report(args, store, who):
    for r in args.round:
        audit.reveal(store, r, who)
    rep = report(store, args.round)
    if args.csv:
        with open(args.csv, "w", encoding="utf-8", newline="") as f:
            f.write(scores_csv(store, args.round))
    parts = [
        table_markdown(rep),
        "",
        "agreement (weighted kappa for two annotators, Krippendorff's alpha, % agreement):",
    ]
    for label, a in rep["agreement"].items():
        fmt = lambda v: "–" if v is None else f"{v:.3f}"  # noqa: E731
        parts.append(
            f"  {label:12} kappa {fmt(a['kappa'])}  alpha {fmt(a['alpha'])}  agreement {fmt(a['percent'])}"
            f"  ({a['annotators']} annotators, {a['shared_items']} items scored by all)"
        )
    parts.append(f"disagreements: {len(rep['disagreements'])}")
    parts += [
        f"  item #{d['item']} {d['units']} {d['criterion']}: " + json.dumps(d["scores"], ensure_ascii=False)
        for d in rep["disagreements"]
    ]
    parts.append(f"changed since the draw: {len(rep['changed_since_draw'])}")
    parts.append(
        "automatic checks: "
        + "; ".join(f"{name} {c['passed']} passed, {c['failed']} failed" for name, c in rep["checks"].items())
    )
    return rep, "\n".join(parts)


def cmd_audit(args, settings: Settings):
    from ..governance.audit import get_round
    from ..governance.auth import log_access

    store = open_store(settings)
    out = run(args, store, who_runs(args))
    if args.verb in ("score", "report"):  # both show the cases' turns and units
        for round_id in args.round if isinstance(args.round, list) else [args.round]:
            for case_id in get_round(store, round_id)["cases"]:
                log_access(
                    store,
                    case_id,
                    getattr(args, "annotator", None) or who_runs(args),
                    "view",
                    f"command line: audit {args.verb} {round_id}",
                )
    return out
