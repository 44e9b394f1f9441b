"""Evidence recall of FTA-Mem packets against turn-level RAG and the sanity memories.

    .venv/bin/python benchmarks/evidence.py --split dev|test [--builds DIR] [--results DIR]
    .venv/bin/python benchmarks/evidence.py --dataset locomo --case conv-26 --sessions 3
        [--memory fta null verbatim] [--model qwen2.5-1.5b] [--data PATH] [--db PATH] [--rebuild]
        [--set NAME=VALUE ...] [--json] [--ask N] [--ask-processes N]
        [--record FILE] [--replay FILE [--replay-stages STAGE ...]]

Builds each case's first N sessions with the embedded model (or reuses the build in ``--db`` or
``--builds``), fills the sanity memories (``null``, ``verbatim``: no model call) beside it, then,
for the questions of categories 1-4 (LoCoMo) whose gold evidence lies inside them, reports per
packet token budget (counted with the model's tokenizer) and per memory: content recall (the
headline: the gold turns whose words the packet shows), unit content recall (the same on the
packet's unit lines alone: what the units say) and pointer recall, beside turn-level RAG
packed by the same rule; the paired bootstrap of FTA-Mem against each other method (questions
resampled within conversations, 95%); counts of the built units read apart from the repairs
(``evaluation.unit_counts``) and the construction cost per turn. ``--results DIR`` appends the
figures as rows to ``DIR/evidence.jsonl`` (``python -m ftamem_core.evaluation.results`` makes
``docs/RESULTS.md`` of them). Retrieval uses the ``no_rewrite`` preset (cues read off the
question), so no LLM call is made after the build.

``--record FILE`` keeps every model reply of the build; ``--replay FILE`` builds again serving the
recorded replies of ``--replay-stages`` (segmentation and extraction unless named) to the requests
they answered, so a change to the checks after them is measured on the same model output; a
request the recording does not hold is asked of the model. Each build says, per stage, how many
replies were replayed, served in recorded order (a file without request digests) or live
(``ftamem_core.llm.replay``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ftamem_core.governance import consent  # noqa: E402
from ftamem_core.retrieval.bench import markdown_table  # noqa: E402
from ftamem_core.construction.build_events import SessionDone  # noqa: E402
from ftamem_core.cli.parser import set_option  # noqa: E402
from ftamem_core.config import changes_from, load_settings  # noqa: E402
from ftamem_core.construction.builder import Builder  # noqa: E402
from ftamem_core.llm.embeddings import Embedder  # noqa: E402
from ftamem_core.evaluation.content import SHOWN_SHARE  # noqa: E402
from ftamem_core.evaluation.evidence import answerable, fta_packet, rag_packet  # noqa: E402
from ftamem_core.evaluation.results import commit, recall_table, settings_digest  # noqa: E402
from ftamem_core.evaluation.sanity import fill  # noqa: E402
from ftamem_core.evaluation.splits import SESSIONS, SPLITS  # noqa: E402
from ftamem_core.evaluation.stats import paired_bootstrap, stratified_bootstrap  # noqa: E402
from ftamem_core.evaluation.unit_counts import unit_counts  # noqa: E402
from ftamem_core.llm.factory import make_llm  # noqa: E402
from ftamem_core.loaders import load_file  # noqa: E402
from ftamem_core.models import utcnow  # noqa: E402
from ftamem_core.setting import merged  # noqa: E402
from ftamem_core.retrieval.packet import approx_tokens  # noqa: E402
from ftamem_core.retrieval.pipeline import TurnIndex  # noqa: E402
from ftamem_core.llm.replay import Recording, Replaying  # noqa: E402
from ftamem_core.storage.store import Store  # noqa: E402

DATA = {
    "locomo": ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json",
    "esmemeval": ROOT.parent / "shared" / "data" / "es-memeval-format" / "sample_case.json",
}
BUDGETS = (250, 500, 1000)
MEMORIES = ("fta", "null", "verbatim")


def set_names(args) -> dict[str, str]:
    """The --set settings by bare name, as the build files and result rows were named before
    settings were grouped by phase (every bare name is one setting's)."""
    return {path[-1]: value for path, value in args.set}


def document(args, case_id: str | None):
    docs = load_file(args.data or DATA[args.dataset])
    doc = next((d for d in docs if d.case.id == case_id), None) if case_id else docs[0]
    if doc is None:
        sys.exit(f"no case {case_id!r} in the file")
    if args.sessions:
        doc = doc.model_copy(update={"sessions": doc.sessions[: args.sessions]})
    return doc


def build_path(args, doc) -> Path:
    if args.db:
        return args.db
    tag = "".join(f"-{name}={value}" for name, value in set_names(args).items())
    folder = args.builds or ROOT / "artifacts" / "evidence"
    return Path(folder) / f"{doc.case.id}-s{args.sessions or 'all'}{'' if args.builds else '-' + args.model}{tag}.db"


def prepare(args, settings, doc) -> tuple[Store, dict]:
    """The case built with the model (or the build already in its database), and per stage how
    its replies were served (replayed, in order, live) when replaying or recording."""
    db = build_path(args, doc)
    store = Store(db, index_config=settings.storage.index)
    store.ingest([doc], on_exists="skip")
    if not consent.granted(store, doc.case.id):
        consent.record(store, doc.case.id, "granted", "benchmark", "public research dataset")
    llm = make_llm(settings.llm, settings.storage.model_dir, recorder=store.record_call)
    if args.record or args.replay:
        llm = Replaying(llm, record=args.record, replay=args.recording, stages=args.replay_stages)
    report = Builder(
        store,
        llm,
        Embedder.from_settings(settings),
        settings,
        progress=lambda e: (
            isinstance(e, SessionDone) and print(f"# session {e.session} built", file=sys.stderr, flush=True)
        ),
    ).build(doc.case.id, from_scratch=args.rebuild)
    served = llm.served_by_stage() if isinstance(llm, Replaying) else {}
    replayed = "".join(
        f"; {stage}: " + ", ".join(f"{n} {how}" for how, n in counts.items()) for stage, counts in served.items()
    )
    print(
        f"# build {report.status}: {report.sessions_built} built, {report.sessions_skipped} reused ({db}){replayed}",
        file=sys.stderr,
    )
    return store, served


def sanity_store(fta_db: Path, doc, memory: str, settings, embedder) -> Store:
    """A store beside the build holding the case with the ``memory`` sanity memory (no model)."""
    path = fta_db.with_name(f"{fta_db.stem}-{memory}.db")
    # a fresh store each run: refilled ids would grow and lengthen every unit's "[mN]" label
    for old in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        old.unlink(missing_ok=True)
    shutil.rmtree(path.with_suffix(".faiss"), ignore_errors=True)
    store = Store(path, index_config=settings.storage.index)
    store.ingest([doc], on_exists="skip")
    fill(store, doc.case.id, memory, embedder, settings)
    return store


def measure(stores: dict[str, Store], case_id: str, settings, embedder, count=approx_tokens) -> dict:
    """Per question and budget, content and pointer recall of each memory's packet and of
    turn-level RAG's; ``stores`` maps a memory name to the store holding it (same turns)."""
    first = next(iter(stores.values()))
    categories = {"1", "2", "3", "4"} if first.get_case(case_id).source_format == "locomo" else None
    questions = answerable(first, case_id, categories)
    turns = TurnIndex.build(
        embedder, first.turns(case_id), replies=True
    )  # turn-level RAG's; the channel reads plain vectors
    text = {t.idx: t.text for t in turns.turns}
    k, _ = settings.k_for(first.get_case(case_id).source_format)
    vectors = embedder.encode([q.question for q, _ in questions]) if questions else []
    per_question = []
    for (q, gold), vector in zip(questions, vectors):
        gold_text = {i: text[i] for i in gold}
        for budget in BUDGETS:
            shown = {"turn-rag": rag_packet(turns, vector, settings, None, budget, count)}
            for memory, store in stores.items():
                shown[memory] = fta_packet(
                    store, case_id, q.question, vector, embedder, settings, k, budget, turns, count=count
                )
            for method, packet in shown.items():
                content, pointer = packet.recall(gold_text)
                per_question.append(
                    {
                        "case": case_id,
                        "qid": q.qid or q.question,
                        "category": q.category,
                        "budget": budget,
                        "method": method,
                        "content_recall": content,
                        "pointer_recall": pointer,
                        "unit_content_recall": packet.unit_recall(gold_text),
                        "tokens": packet.tokens,
                    }
                )
    return {"case": case_id, "questions": len(questions), "k": k, "per_question": per_question}


def summarise(per_question: list[dict]) -> list[dict]:
    """Mean content and pointer recall per budget and method over the questions given (several
    conversations: resampled within each), and FTA-Mem minus each other method, paired."""
    rows = []
    for budget in BUDGETS:
        at = [r for r in per_question if r["budget"] == budget]
        by_method: dict[str, list[dict]] = {}
        for r in at:
            by_method.setdefault(r["method"], []).append(r)
        for method, items in by_method.items():
            strata = [r["case"] for r in items]
            for metric in ("content_recall", "unit_content_recall", "pointer_recall"):
                b = stratified_bootstrap([r[metric] for r in items], strata)
                rows.append(
                    {
                        "budget": budget,
                        "method": method,
                        "metric": metric,
                        "value": round(b["mean"], 3),
                        "low": round(b["low"], 3),
                        "high": round(b["high"], 3),
                        "n": len(items),
                    }
                )
            rows.append(
                {
                    "budget": budget,
                    "method": method,
                    "metric": "tokens",
                    "value": round(sum(r["tokens"] for r in items) / len(items)),
                    "n": len(items),
                }
            )
        if "fta" not in by_method:
            continue
        for other, items in by_method.items():
            if other == "fta":
                continue
            mine = {(r["case"], r["qid"]): r for r in by_method["fta"]}
            pairs = [(mine[(r["case"], r["qid"])], r) for r in items if (r["case"], r["qid"]) in mine]
            # turn-level RAG has no unit and the null memory's say nothing: 0 by construction
            metrics = (
                ("content_recall",) if other in ("turn-rag", "null") else ("content_recall", "unit_content_recall")
            )
            for metric in metrics:
                b = paired_bootstrap(
                    [x[metric] for x, _ in pairs], [y[metric] for _, y in pairs], [x["case"] for x, _ in pairs]
                )
                rows.append(
                    {
                        "budget": budget,
                        "method": f"fta - {other}",
                        "metric": metric,
                        "value": round(b["mean"], 3),
                        "low": round(b["low"], 3),
                        "high": round(b["high"], 3),
                        "n": len(pairs),
                    }
                )
    return rows


def time_asks(store: Store, case_id: str, settings, n: int) -> list[dict]:
    """Full asks as ``ftamem ask`` makes them (the case's K, the settings' budget), timed."""
    import time

    from ftamem_core.retrieval.inference import ask

    llm, embedder = make_llm(settings.llm, settings.storage.model_dir), Embedder.from_settings(settings)
    rows = []
    for q, _ in answerable(store, case_id)[:n]:
        started = time.perf_counter()
        trace = ask(store, case_id, q.question, llm, embedder, settings)
        rows.append(
            {
                "question": q.question[:60],
                "seconds": round(time.perf_counter() - started, 1),
                "packet tokens": trace.packet_tokens,
                "prompt+completion tokens": sum(c["prompt_tokens"] + c["completion_tokens"] for c in trace.calls),
                "answer": trace.answer[:50],
                "gold": (q.answer or "")[:40],
            }
        )
        print(f"# {rows[-1]}", file=sys.stderr, flush=True)
    return rows


def time_processes(db: Path, case_id: str, model: str, n: int) -> list[dict]:
    """Each ask as one ``ftamem ask`` process (loading the encoder, the model and the prompts'
    saved instructions), timed from start to exit."""
    import subprocess
    import time

    from ftamem_core.config import load_settings
    from ftamem_core.storage.store import Store

    rows = []
    store = Store(db, index_config=load_settings().storage.index)
    for q, _ in answerable(store, case_id)[:n]:
        started = time.perf_counter()
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "ftamem_core",
                "--db",
                str(db),
                "--model",
                model,
                "--json",
                "ask",
                case_id,
                q.question,
            ],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        trace = json.loads(out.stdout)
        rows.append(
            {
                "question": q.question[:60],
                "process seconds": round(time.perf_counter() - started, 1),
                **{f"{k} s": round(v, 1) for k, v in trace["seconds"].items()},
                "prompts from": ", ".join(sorted(set(trace["warmed"].values()))),
                "answer": trace["answer"][:40],
            }
        )
        print(f"# {rows[-1]}", file=sys.stderr, flush=True)
    return rows


def case_report(store: Store, case_id: str, embedder) -> dict:
    """The built memory's counts (apart from the repairs) and its construction cost."""
    cost = store.cost(case_id, memory_only=True)
    return {
        "counts": unit_counts(store, case_id, embedder),
        "cost": {
            k: cost[k]
            for k in ("turns", "units", "calls", "calls_per_turn", "tokens_per_turn", "units_per_turn")
            if k in cost
        },
    }


def result_rows(summary: list[dict], split: str, cases: list[str], settings, builds: dict[str, str]) -> list[dict]:
    """``summary`` as the rows of ``results/evidence.jsonl`` (``evaluation.results``)."""
    stamp = {
        "commit": commit(ROOT),
        "settings_digest": settings_digest(settings),
        "split": split,
        "cases": cases,
        "sessions": SESSIONS,
        "builds": builds,
        "measured": utcnow()[:10],
        "model": settings.llm.model,
        "benchmark": "evidence",
    }
    return [{**stamp, **row} for row in summary]


def unit_row(stamp: dict, case_id: str, report: dict) -> dict:
    """A build's unit counts and construction cost as one row of ``results/units.jsonl``."""
    base = {k: v for k, v in stamp.items() if k not in ("metric", "value", "low", "high", "n", "budget", "method")}
    return {**base, "benchmark": "units", "case": case_id, "counts": report["counts"], "cost": report["cost"]}


def main(argv: list[str] | None = None) -> dict:
    """The run's figures (as ``--json`` prints them); ``argv``: for a caller in this process."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dataset", choices=sorted(DATA), default="locomo")
    p.add_argument("--data", type=Path, help="the dataset file (default: ../shared/data)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--case", help="case id (default: the file's first)")
    where.add_argument(
        "--split", choices=sorted(SPLITS), help=f"LoCoMo's {', '.join(SPLITS)} split, sessions 1-{SESSIONS}"
    )
    p.add_argument(
        "--only", nargs="+", metavar="CASE", help="with --split: only these of its cases (say so when reporting)"
    )
    p.add_argument("--sessions", type=int, help="only the first N sessions")
    p.add_argument(
        "--memory",
        nargs="+",
        choices=MEMORIES,
        default=list(MEMORIES),
        help="the memories to measure (fta: built with the model; null, verbatim: without)",
    )
    p.add_argument("--model", default="qwen2.5-1.5b")
    p.add_argument("--db", type=Path, help="database to build in or reuse (one case)")
    p.add_argument("--builds", type=Path, help="folder of the builds, CASE-sN.db (default artifacts/evidence/)")
    p.add_argument("--results", type=Path, help="append the figures to RESULTS/evidence.jsonl")
    p.add_argument(
        "--built-at", metavar="COMMIT", help="the commit the reused builds were made at (recorded in the rows)"
    )
    p.add_argument("--rebuild", action="store_true", help="build from scratch even if the database holds a build")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        type=set_option,
        metavar="PHASE.NAME=VALUE",
        help="a setting for this run, e.g. extraction.verbatim_fallback=false (or verbatim_fallback=false: "
        "a bare name one phase alone has)",
    )
    p.add_argument(
        "--ask",
        type=int,
        default=0,
        metavar="N",
        help="also time N full 'ask' calls (rewrite, retrieval, packet, answer) with the model",
    )
    p.add_argument(
        "--ask-processes",
        type=int,
        default=0,
        metavar="N",
        help="also time N 'ftamem ask' commands, each a new process",
    )
    p.add_argument(
        "--record", type=Path, metavar="FILE", help="append every model reply of the build to FILE (JSON Lines)"
    )
    p.add_argument(
        "--replay", type=Path, metavar="FILE", help="serve the recorded replies of --replay-stages from FILE"
    )
    p.add_argument("--replay-stages", nargs="+", default=["segmentation", "extraction"], metavar="STAGE")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if args.split:
        args.dataset, args.sessions, case_ids = "locomo", SESSIONS, list(SPLITS[args.split])
        if args.only:
            if not set(args.only) <= set(case_ids):
                sys.exit(f"--only: not all of {', '.join(args.only)} are in the {args.split} split")
            case_ids = [c for c in case_ids if c in args.only]
    else:
        case_ids = [args.case]
    if args.db and len(case_ids) > 1:
        sys.exit("--db names one build: use --builds for a split")
    # loaded once: replies kept in recorded order go on from case to case
    args.recording = Recording(args.replay, args.replay_stages) if args.replay else None
    settings = load_settings(**merged(changes_from(args.set), {"llm": {"model": args.model}}))
    embedder = Embedder.from_settings(settings)
    count = make_llm(settings.llm, settings.storage.model_dir).count_tokens  # the app's own token count
    per_question, cases, builds = [], {}, {}
    for case_id in case_ids:
        doc = document(args, case_id)
        stores = {}
        if "fta" in args.memory:
            stores["fta"], served = prepare(args, settings, doc)
            cases[doc.case.id] = {"served": served}
        for memory in (m for m in args.memory if m != "fta"):
            stores[memory] = sanity_store(build_path(args, doc), doc, memory, settings, embedder)
        measured = measure(stores, doc.case.id, settings, embedder, count)
        per_question += measured["per_question"]
        cases.setdefault(doc.case.id, {}).update({"questions": measured["questions"], "k": measured["k"]})
        if "fta" in stores:
            cases[doc.case.id].update(case_report(stores["fta"], doc.case.id, embedder))
            builds[doc.case.id] = build_path(args, doc).name
    summary = summarise(per_question)
    result = {"split": args.split or "case", "cases": cases, "summary": summary}
    if args.results and summary:
        args.results.mkdir(parents=True, exist_ok=True)
        rows = [
            {**r, "built_at": args.built_at} if args.built_at else r
            for r in result_rows(summary, args.split or ",".join(cases), list(cases), settings, builds)
        ]
        rows = [{**r, "set": set_names(args)} if args.set else r for r in rows]
        with open(args.results / "evidence.jsonl", "a", encoding="utf-8") as f:
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        with open(args.results / "units.jsonl", "a", encoding="utf-8") as f:
            f.writelines(
                json.dumps(unit_row(rows[0], case_id, c), ensure_ascii=False) + "\n"
                for case_id, c in cases.items()
                if "counts" in c
            )
        with open(args.results / "evidence-questions.jsonl", "a", encoding="utf-8") as f:
            f.writelines(
                json.dumps(
                    {**rows[0], **{k: None for k in ("metric", "value", "low", "high", "n", "budget", "method")}, **r},
                    ensure_ascii=False,
                )
                + "\n"
                for r in per_question
            )
    if len(case_ids) == 1 and "fta" in args.memory:
        store = prepare_only(args, settings, document(args, case_ids[0]))
        if args.ask:
            result["ask"] = time_asks(store, case_ids[0], settings, args.ask)
        if args.ask_processes:
            result["ask processes"] = time_processes(Path(store.path), case_ids[0], args.model, args.ask_processes)
    if args.json:
        print(json.dumps(result, indent=2, default=str))
        return result
    print(
        f"evidence benchmark: {', '.join(cases)}, sessions 1-{args.sessions or 'all'}, "
        f"{sum(c['questions'] for c in cases.values())} questions, model {args.model}; "
        f"content recall: a gold turn counts when the packet shows {int(SHOWN_SHARE * 100)}% of its content words"
    )
    for metric in ("content_recall", "unit_content_recall", "pointer_recall", "tokens"):
        print(f"\n{metric.replace('_', ' ')}:\n" + "\n".join(recall_table(summary, metric)))
    for case_id, c in cases.items():
        if "counts" in c:
            print(f"\n{case_id}: {json.dumps(c['counts'])}\ncost {json.dumps(c['cost'])}")
    for key in ("ask", "ask processes"):
        if key in result:
            print(markdown_table(result[key]))
    return result


def prepare_only(args, settings, doc) -> Store:
    return Store(build_path(args, doc), index_config=settings.storage.index)


if __name__ == "__main__":
    main()
