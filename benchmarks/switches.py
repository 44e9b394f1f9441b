"""Each setting beyond the paper flipped alone, measured on the same model output: the dev builds
rebuilt from their recorded replies, content recall against the unflipped rebuild.

    .venv/bin/python benchmarks/switches.py --replies /work/builds/dev-main/replies.jsonl \\
        --recorded-builds /work/builds/dev-main --out RUNS [--switch NAME[=VALUE][,NAME=VALUE] ...] [--dry-run]
        [--split dev | --data FILE --dataset esmemeval [--case ID] [--sessions N]] [--model M]

Steps (each a run of ``benchmarks/evidence.py`` into its own folder under ``--out``, FTA-Mem only):

1. ``baseline``: the builds again with today's settings, every construction stage served from
   ``--replies``, recorded anew with a digest of each request. A recording without digests (the
   dev builds') is served in its order; ``--recorded-builds`` checks that this reproduced the
   recorded builds' units (the code may have changed since).
2. one folder per switch, ``NAME=VALUE``: rebuilt with the switch flipped, served from the
   baseline's recording by request. A request the switch changed (an extraction prompt showing
   other carried partials, a linking prompt judging other units, another schema) is not in the
   recording and is asked of the model: the row says how many calls per stage went live.
3. one row per switch: the paired difference in content recall (switch minus baseline, 95%) at
   250 / 500 / 1,000 tokens (``benchmarks/compare.py``), units with a feeling and construction
   calls per turn (baseline -> switch), and the calls served live.

A switch is flipped to its paper value (``setting(..., paper=...)`` in config.py), or turned on
when it is off in both (the candidates). A run folder holding a finished run is reused.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import sqlite3
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import evidence  # noqa: E402
from compare import compare, per_question  # noqa: E402

from ftamem_core.retrieval.bench import markdown_table  # noqa: E402
from ftamem_core.config import Settings  # noqa: E402
from ftamem_core.setting import UnknownSetting, fields, paper_value, resolve, value_at  # noqa: E402

STAGES = ("segmentation", "extraction", "linking", "longitudinal")
BUDGETS = (250, 500, 1000)
# Beyond the paper but not measurable here: the benchmark sets the packet budget itself.
NOT_MEASURED = {
    "packet_token_budget": "the benchmark cuts every packet to 250 / 500 / 1,000 tokens itself",
}


def flipped() -> dict[str, str]:
    """Every switch beyond the paper, by its bare name (the run folders' names), with the value that
    flips it (as ``--set`` takes it)."""
    defaults = Settings()
    out = {}
    for path, info in fields(Settings):
        beyond, paper = paper_value(info)
        if not beyond or path[-1] in NOT_MEASURED:
            continue
        default = value_at(defaults, path)
        value = paper if paper != default else not default
        out[path[-1]] = json.dumps(value) if isinstance(value, bool) else str(value)
    return out


def chosen(named: list[str]) -> dict[str, str]:
    every = flipped()
    if not named:
        return every
    out = {}
    for item in named:
        parts = []
        for one in item.split(","):  # a group flipped together: NAME=VALUE,NAME=VALUE
            name, _, value = one.partition("=")
            try:
                name = resolve(name, Settings)[-1]  # a phase's name given (extraction.ground_facts): the bare one
            except UnknownSetting as e:
                sys.exit(f"--switch: {e}")
            value = value or every.get(name) or sys.exit(f"--switch {name}: give a value (NAME=VALUE)")
            parts.append(f"{name}={value}")
        if len(parts) == 1:
            name, _, value = parts[0].partition("=")
            out[name] = value
        else:
            out[",".join(parts)] = ""
    return out


def run(args, folder: Path, replies: Path, extra: list[str]) -> dict | None:
    """One evidence run into ``folder`` (reused when finished); its JSON, or None when it failed."""
    done = folder / "done.json"
    if done.exists():
        return json.loads(done.read_text())
    shutil.rmtree(folder, ignore_errors=True)  # an unfinished run: its recording would be half
    folder.mkdir(parents=True)
    where = (
        ["--split", args.split]
        if args.split
        else ["--dataset", args.dataset]
        + (["--data", str(args.data)] if args.data else [])
        + (["--case", args.case] if args.case else [])
        + (["--sessions", str(args.sessions)] if args.sessions else [])
    )
    argv = [
        *where,
        "--memory",
        "fta",
        "--model",
        args.model,
        "--builds",
        str(folder / "builds"),
        "--results",
        str(folder),
        "--rebuild",
        "--replay",
        str(replies),
        "--replay-stages",
        *STAGES,
        "--record",
        str(folder / "replies.jsonl"),
        "--json",
        *extra,
    ]
    print(f"# {folder.name}: evidence.py {' '.join(argv)}", file=sys.stderr, flush=True)
    # In this process: the embedder (and a model, if a call goes live) is loaded once for all runs.
    with (
        open(folder / "log.txt", "w") as log,
        contextlib.redirect_stderr(log),
        contextlib.redirect_stdout(io.StringIO()),
    ):
        try:
            result = evidence.main(argv)
        except (Exception, SystemExit) as e:  # one failed switch leaves the others to run
            print(f"{e.__class__.__name__}: {e}", file=log)
            result = None
    if result is None:
        print(f"# {folder.name} failed: see {folder / 'log.txt'}", file=sys.stderr)
        return None
    done.write_text(json.dumps(result, indent=1, default=str))
    return json.loads(done.read_text())


def served(result: dict) -> dict[str, dict[str, int]]:
    """Per stage, how the run's calls were served, summed over its cases."""
    out: dict[str, dict[str, int]] = {}
    for case in result["cases"].values():
        for stage, counts in case.get("served", {}).items():
            for how, n in counts.items():
                out.setdefault(stage, {}).setdefault(how, 0)
                out[stage][how] += n
    return out


def said(counts: dict[str, dict[str, int]], how: str) -> str:
    parts = [f"{stage} {c[how]}" for stage, c in counts.items() if c.get(how)]
    return ", ".join(parts) or "none"


def unit_figures(result: dict) -> tuple[int, float]:
    """Units with a feeling, and construction calls per turn, over the run's cases."""
    cases = [c for c in result["cases"].values() if "counts" in c]
    calls, turns = sum(c["cost"].get("calls", 0) for c in cases), sum(c["cost"].get("turns", 0) for c in cases)
    return sum(c["counts"]["with_feeling"] for c in cases), round(calls / turns, 3) if turns else 0.0


def facts(db: Path, case_id: str) -> list[str]:
    """A build's unit facts, read without writing to its file (a recorded build is not ours)."""
    wal = Path(f"{db}-wal")
    # immutable: no -shm is made beside a closed build; an open one's WAL is read (mode=ro)
    mode = "mode=ro" if wal.exists() and wal.stat().st_size else "immutable=1"
    conn = sqlite3.connect(f"file:{db}?{mode}", uri=True)
    try:
        return sorted(r[0] for r in conn.execute("SELECT fact_text FROM units WHERE case_id = ?", (case_id,)))
    finally:
        conn.close()


def build_file(folder: Path, case_id: str) -> Path | None:
    """The FTA-Mem build of a case in an evidence builds folder (``CASE-sN[-NAME=VALUE].db``)."""
    found = [p for p in sorted(folder.glob(f"{case_id}-s*.db")) if not p.stem.endswith(("-null", "-verbatim"))]
    return found[0] if found else None


def check_baseline(result: dict, folder: Path, recorded: Path) -> list[str]:
    """Whether replaying the recording reproduced each recorded build's units."""
    notes = []
    for case_id in result["cases"]:
        mine, theirs = build_file(folder / "builds", case_id), build_file(recorded, case_id)
        if mine is None or theirs is None:
            notes.append(f"{case_id}: no recorded build to check against")
            continue
        a, b = facts(mine, case_id), facts(theirs, case_id)
        same = (
            "reproduces"
            if a == b
            else f"differs from ({len(a)} units against {len(b)}, {len(set(a) ^ set(b))} facts in one only)"
        )
        notes.append(f"{case_id}: the baseline {same} the recorded build")
    return notes


def row(name: str, value: str, base: dict, result: dict | None, base_dir: Path, folder: Path) -> dict:
    if result is None:
        return {"switch": name, "value": value, **{f"content recall {b}": "failed" for b in BUDGETS}}
    diff = {
        r["budget"]: r
        for r in compare(per_question(base_dir, "fta"), per_question(folder, "fta"))
        if r["metric"] == "content_recall"
    }
    (feel_a, calls_a), (feel_b, calls_b) = unit_figures(base), unit_figures(result)
    counts = served(result)
    return {
        "switch": name,
        "value": value,
        **{
            f"content recall {b}": f"{diff[b]['difference']:+.3f} [{diff[b]['low']:+.3f}, {diff[b]['high']:+.3f}]"
            if b in diff
            else "-"
            for b in BUDGETS
        },
        "units with a feeling": f"{feel_a} -> {feel_b}",
        "calls per turn": f"{calls_a} -> {calls_b}",
        "replayed": sum(c.get("replayed", 0) for c in counts.values()),
        "live": said(counts, "live"),
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--replies", type=Path, required=True, help="the recorded replies of the builds (JSON Lines)")
    p.add_argument(
        "--recorded-builds",
        type=Path,
        help="the builds the replies were recorded with (to check the baseline reproduces them)",
    )
    p.add_argument("--out", type=Path, required=True, help="a folder of run folders (baseline, NAME=VALUE, ...)")
    p.add_argument(
        "--switch",
        nargs="+",
        default=[],
        metavar="NAME[=VALUE]",
        help="only these (default: every switch beyond the paper this benchmark can measure); "
        "NAME=VALUE,NAME=VALUE flips a group together",
    )
    p.add_argument("--split", default="dev")
    p.add_argument("--dataset", default="locomo")
    p.add_argument("--data", type=Path, help="a dataset file instead of --split")
    p.add_argument("--case")
    p.add_argument("--sessions", type=int)
    p.add_argument("--model", default="qwen2.5-1.5b")
    p.add_argument("--dry-run", action="store_true", help="list the switches and values only")
    p.add_argument("--results", type=Path, help="append the rows to RESULTS/switches.jsonl")
    p.add_argument("--note", help="a note kept with the rows (what the baseline is)")
    args = p.parse_args(argv)
    if args.data:
        args.split = None
    todo = chosen(args.switch)
    if args.dry_run:
        print(markdown_table([{"switch": k, "value": v} for k, v in todo.items()]))
        for name, why in NOT_MEASURED.items():
            print(f"not measured: {name}: {why}")
        return
    base_dir = args.out / "baseline"
    base = run(args, base_dir, args.replies, [])
    if base is None:
        sys.exit("the baseline failed")
    counts = served(base)
    print(
        f"baseline: replayed {said(counts, 'replayed')}; in recorded order (prompts unverified) "
        f"{said(counts, 'in order')}; live {said(counts, 'live')}"
    )
    for note in check_baseline(base, base_dir, args.recorded_builds) if args.recorded_builds else []:
        print(note)
    rows = []
    for name, value in todo.items():
        flips = name.split(",") if not value else [f"{name}={value}"]
        folder = args.out / ",".join(flips)
        result = run(args, folder, base_dir / "replies.jsonl", [x for f in flips for x in ("--set", f)])
        rows.append(row(name, value, base, result, base_dir, folder))
        print(markdown_table(rows[-1:]), file=sys.stderr, flush=True)  # progress: a run takes minutes
    print(markdown_table(rows))
    for name, why in NOT_MEASURED.items():
        print(f"not measured: {name}: {why}")
    if args.results:
        saved = keep(args, rows)
        print(f"{saved} rows added to {args.results / 'switches.jsonl'}")


def keep(args, rows: list[dict]) -> int:
    """Append the rows to ``RESULTS/switches.jsonl`` with what they were measured on."""
    import datetime
    import subprocess

    # the code of this checkout: a rerun over runs made by other code must say so in --note
    code = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    where = {
        "split": args.split or args.dataset,
        "code": code.stdout.strip() or "unknown",
        "recording": args.replies.name if args.replies.parent.name != "baseline" else str(args.replies.parent),
        "measured_at": datetime.date.today().isoformat(),
        "note": args.note or "",
    }
    args.results.mkdir(parents=True, exist_ok=True)
    with open(args.results / "switches.jsonl", "a", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps({**where, **r}, ensure_ascii=False) + "\n")
    return len(rows)


if __name__ == "__main__":
    main()
