"""Evidence recall of FTA-Mem packets against turn-level RAG on one LoCoMo or ES-MemEval case.

    .venv/bin/python benchmarks/evidence.py --dataset locomo --case conv-26 --sessions 3
        [--model qwen2.5-1.5b] [--data PATH] [--db PATH] [--rebuild] [--set NAME=VALUE ...] [--json]
        [--ask N] [--ask-processes N] [--record FILE] [--replay FILE [--replay-stages STAGE ...]]

Builds the case's first N sessions with the embedded model (or reuses the build in ``--db``),
then, for the questions of categories 1-4 (LoCoMo) whose gold evidence lies inside them, prints:
recall per K and per packet token budget for FTA-Mem (pointer and text recall, see
``ftamem_core.evaluation.evidence``) beside turn-level RAG, the coverage ceiling, packet tokens,
the unit checks of ``ftamem_core.quality`` and the construction cost per turn. Retrieval uses the
``no_rewrite`` preset (cues read off the question), so no LLM is needed after the build.

``--record FILE`` keeps every model reply of the build; ``--replay FILE`` builds again serving the
recorded segmentation and extraction replies (``--replay-stages``) in their order, so a change to
the checks after them is measured on the same model output (``ftamem_core.replay``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ftamem_core import consent  # noqa: E402
from ftamem_core.bench import markdown_table  # noqa: E402
from ftamem_core.config import load_settings  # noqa: E402
from ftamem_core.construction import Builder  # noqa: E402
from ftamem_core.embeddings import Embedder  # noqa: E402
from ftamem_core.evaluation.evidence import TurnRAG, answerable, fta_packet  # noqa: E402
from ftamem_core.llm import make_llm  # noqa: E402
from ftamem_core.loaders import load_file  # noqa: E402
from ftamem_core.quality import unit_checks  # noqa: E402
from ftamem_core.replay import Replaying  # noqa: E402
from ftamem_core.store import Store  # noqa: E402

DATA = {"locomo": ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json",
        "esmemeval": ROOT.parent / "shared" / "data" / "es-memeval-format" / "sample_case.json"}
KS = (5, 10, 25)
BUDGETS = (250, 500, 1000)


def setting(text: str) -> tuple[str, object]:
    name, _, value = text.partition("=")
    return name, value


def prepare(args, settings) -> tuple[Store, str]:
    docs = load_file(args.data or DATA[args.dataset])
    doc = next((d for d in docs if d.case.id == args.case), None) if args.case else docs[0]
    if doc is None:
        sys.exit(f"no case {args.case!r} in the file")
    if args.sessions:
        doc = doc.model_copy(update={"sessions": doc.sessions[: args.sessions]})
    tag = "".join(f"-{name}={value}" for name, value in args.set)
    db = args.db or ROOT / "artifacts" / "evidence" / f"{doc.case.id}-s{args.sessions or 'all'}-{args.model}{tag}.db"
    store = Store(db, index_config=settings.index)
    store.ingest([doc], on_exists="skip")
    if not consent.granted(store, doc.case.id):
        consent.record(store, doc.case.id, "granted", "benchmark", "public research dataset")
    llm = make_llm(settings.llm, settings.model_dir, recorder=store.record_call)
    if args.record or args.replay:
        llm = Replaying(llm, record=args.record, replay=args.replay, stages=args.replay_stages)
    report = Builder(store, llm, Embedder.from_settings(settings), settings,
                     progress=lambda e: e.kind == "session_done" and print(f"# session {e.session} built", file=sys.stderr,
                                                                             flush=True)).build(
        doc.case.id, from_scratch=args.rebuild)
    replayed = f"; {llm.replayed} replies replayed" if isinstance(llm, Replaying) else ""
    print(f"# build {report.status}: {report.sessions_built} built, {report.sessions_skipped} reused ({db}){replayed}",
          file=sys.stderr)
    return store, doc.case.id


def measure(store: Store, case_id: str, settings, embedder) -> dict:
    categories = {"1", "2", "3", "4"} if store.get_case(case_id).source_format == "locomo" else None
    questions = answerable(store, case_id, categories)
    rag = TurnRAG(store, case_id, embedder)
    # open partial units are retrievable (retrieve_open_partials), so they hold evidence too
    status = None if settings.retrieve_open_partials else "final"
    covered = {i for u in store.units(case_id, status) for i in range(u.evidence.start, u.evidence.end + 1)}
    gold_all = [g for _, g in questions]
    rows = []

    vectors = embedder.encode([q.question for q, _ in questions]) if questions else []

    def row(label: str, k: int, budget: int):
        fta_p = fta_t = rag_r = fta_tok = rag_tok = 0.0
        for (q, gold), vector in zip(questions, vectors):
            shown = fta_packet(store, case_id, q.question, vector, embedder, settings, k, budget, rag=rag)
            p, t = shown.recall(gold)
            base = rag.packet(vector, None if budget else k, budget)
            fta_p, fta_t, fta_tok = fta_p + p, fta_t + t, fta_tok + shown.tokens
            rag_r, rag_tok = rag_r + base.recall(gold)[0], rag_tok + base.tokens
        n = max(1, len(questions))
        rows.append({"packet": label, "K": k, "FTA pointer recall": round(fta_p / n, 3),
                     "FTA text recall": round(fta_t / n, 3), "FTA tokens": round(fta_tok / n),
                     "turn-RAG recall": round(rag_r / n, 3), "turn-RAG tokens": round(rag_tok / n)})

    for k in KS:
        row("all retrieved", k, 0)
    k_case, _ = settings.k_for(store.get_case(case_id).source_format)
    for budget in BUDGETS:
        row(f"budget {budget}", k_case, budget)
    row(f"default budget {settings.packet_token_budget}", k_case, settings.packet_token_budget)
    checks = unit_checks(store, case_id, embedder)
    cost = store.cost(case_id, memory_only=True)
    return {
        "case": case_id, "questions": len(questions),
        "gold turns in some unit": f"{sum(len(g & covered) for g in gold_all)} of {sum(len(g) for g in gold_all)}",
        "coverage ceiling": round(sum(len(g & covered) for g in gold_all) / max(1, sum(len(g) for g in gold_all)), 3),
        "rows": rows, "checks": checks,
        "cost": {k: cost[k] for k in ("turns", "units", "partial_units", "calls", "calls_per_turn", "tokens_per_turn",
                                      "units_per_turn") if k in cost},
        "stages": cost["stages"],
    }


def time_asks(store: Store, case_id: str, settings, n: int) -> list[dict]:
    """Full asks as ``ftamem ask`` makes them (the case's K, the settings' budget), timed."""
    import time

    from ftamem_core.inference import ask

    llm, embedder = make_llm(settings.llm, settings.model_dir), Embedder.from_settings(settings)
    rows = []
    for q, _ in answerable(store, case_id)[:n]:
        started = time.perf_counter()
        trace = ask(store, case_id, q.question, llm, embedder, settings)
        rows.append({"question": q.question[:60], "seconds": round(time.perf_counter() - started, 1),
                     "packet tokens": trace.packet_tokens,
                     "prompt+completion tokens": sum(c["prompt_tokens"] + c["completion_tokens"] for c in trace.calls),
                     "answer": trace.answer[:50], "gold": (q.answer or "")[:40]})
        print(f"# {rows[-1]}", file=sys.stderr, flush=True)
    return rows


def time_processes(db: Path, case_id: str, model: str, n: int) -> list[dict]:
    """Each ask as one ``ftamem ask`` process (loading the encoder, the model and the prompts'
    saved instructions), timed from start to exit."""
    import subprocess
    import time

    from ftamem_core.config import load_settings
    from ftamem_core.store import Store

    rows = []
    store = Store(db, index_config=load_settings().index)
    for q, _ in answerable(store, case_id)[:n]:
        started = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "ftamem_core", "--db", str(db), "--model", model, "--json",
                              "ask", case_id, q.question], capture_output=True, text=True, check=True, cwd=ROOT)
        trace = json.loads(out.stdout)
        rows.append({"question": q.question[:60], "process seconds": round(time.perf_counter() - started, 1),
                     **{f"{k} s": round(v, 1) for k, v in trace["seconds"].items()},
                     "prompts from": ", ".join(sorted(set(trace["warmed"].values()))), "answer": trace["answer"][:40]})
        print(f"# {rows[-1]}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dataset", choices=sorted(DATA), default="locomo")
    p.add_argument("--data", type=Path, help="the dataset file (default: ../shared/data)")
    p.add_argument("--case", help="case id (default: the file's first)")
    p.add_argument("--sessions", type=int, help="only the first N sessions")
    p.add_argument("--model", default="qwen2.5-1.5b")
    p.add_argument("--db", type=Path, help="database to build in or reuse (default under artifacts/evidence/)")
    p.add_argument("--rebuild", action="store_true", help="build from scratch even if the database holds a build")
    p.add_argument("--set", action="append", default=[], type=setting, metavar="NAME=VALUE",
                   help="a setting for this run, e.g. verbatim_fallback=false")
    p.add_argument("--ask", type=int, default=0, metavar="N",
                   help="also time N full 'ask' calls (rewrite, retrieval, packet, answer) with the model")
    p.add_argument("--ask-processes", type=int, default=0, metavar="N",
                   help="also time N 'ftamem ask' commands, each a new process")
    p.add_argument("--record", type=Path, metavar="FILE", help="append every model reply of the build to FILE (JSON Lines)")
    p.add_argument("--replay", type=Path, metavar="FILE", help="serve the recorded replies of --replay-stages from FILE")
    p.add_argument("--replay-stages", nargs="+", default=["segmentation", "extraction"], metavar="STAGE")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    settings = load_settings(llm={"model": args.model}, **dict(args.set))
    store, case_id = prepare(args, settings)
    result = measure(store, case_id, settings, Embedder.from_settings(settings))
    if args.ask:
        result["ask"] = time_asks(store, case_id, settings, args.ask)
    if args.ask_processes:
        result["ask processes"] = time_processes(Path(store.path), case_id, args.model, args.ask_processes)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    c = result["checks"]
    print(f"evidence benchmark: {case_id}, {args.sessions or 'all'} sessions, {result['questions']} questions, "
          f"model {args.model}")
    print(markdown_table(result["rows"]))
    print(f"\ngold evidence turns inside some unit: {result['gold turns in some unit']} ({result['coverage ceiling']}); "
          f"turns covered {c['turns_covered']} of {c['turns']}; units {c['units']} (+{c['partial']} partial; "
          f"{c['verbatim']} of them a turn's own words), "
          f"mean span {c['mean_span']} turns; types {c['types']}")
    print(f"misattributed {len(c['misattributed'])}; said to the listener {len(c['said_to_listener'])}; "
          f"duplicate pairs {len(c['duplicates'])}; ungrounded anchors {len(c['ungrounded_anchors'])}")
    cost = result["cost"]
    print(f"construction: {cost.get('calls_per_turn')} calls and {cost.get('tokens_per_turn')} tokens per turn, "
          f"{cost.get('units_per_turn')} units per turn")
    print(markdown_table(result["stages"]))
    for key in ("ask", "ask processes"):
        if key in result:
            print(markdown_table(result[key]))


if __name__ == "__main__":
    main()
