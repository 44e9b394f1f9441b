"""``ftamem eval``: methods side by side on the same questions, resumable, with built memory cached.

A run folder holds ``predictions.jsonl`` (one line per answered question, appended and flushed as
it is answered: a killed run resumes by skipping them), and after scoring ``questions.jsonl``
(every line with its scores), ``summary.json``, ``tables.md`` and ``charts.html``.

Built memory is cached per case and construction (segmentation variant or session summaries) in
``cache_dir``, keyed by the dataset file, the sessions kept, the model and the construction
settings: methods that share a construction (``fta`` and its presets) build once, and a second
run reuses the builds. Benchmark cases are recorded as consented public research data.

``record`` keeps every model reply of a run; ``replay`` serves a recorded run's rewrite and
answer replies to identical requests, so a variant's run asks the model only for the questions
whose prompts changed, to the same model with the same temperature and token limit
(``served.json`` counts both; a replayed answer is marked and left out of the seconds per
question).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..governance import consent
from ..config import Settings
from ..construction.builder import Builder, build_digest
from ..errors import StoreError
from ..llm.base import LLM
from ..llm.replay import Recording, Replaying, by_stage
from ..loaders import load_file
from ..models import CaseDocument, Question
from ..storage.store import Store
from .content import content_recall
from .methods import CaseContext, Method, method as find_method, run_method, summarise_sessions
from .results import commit, settings_digest
from .sanity import SANITY_MEMORIES, fill

LLMFactory = Callable[[Callable | None], LLM]  # recorder -> LLM


@dataclass
class EvalConfig:
    dataset: str  # locomo | esmemeval
    data: str
    methods: list[str]
    out: str
    cases: list[str] | None = None
    sessions: int | None = None  # first N sessions of each case
    questions: int | None = None  # first N answerable questions of each case
    k: int | None = None  # default: the case's dataset K
    cache_dir: str | None = None
    workers: int = 1  # questions answered at once (OpenAI-compatible backends only)
    judge: bool = False
    categories: list[str] | None = None  # LoCoMo: default all five
    record: str | None = None  # every model reply of the run, kept in this JSON Lines file
    replay: str | None = None  # a recorded run: its answer-time replies serve identical requests


# What a recording serves at answer time: a variant's run (another build, another packet setting)
# asks the model only where its rewrite or answer prompt differs from the recorded run's; the
# embedded model answers a prompt the same way each time (temperature 0), so the reply is the one
# it would give.
ANSWER_STAGES = ("rewrite", "answer")


def select_documents(cfg: EvalConfig, settings: Settings) -> list[CaseDocument]:
    docs = load_file(cfg.data, max_turn_chars=settings.input.max_turn_chars)
    if cfg.cases:
        found = {d.case.id for d in docs}
        missing = [c for c in cfg.cases if c not in found]
        if missing:
            raise StoreError(f"no case {', '.join(missing)} in {cfg.data}")
        docs = [d for d in docs if d.case.id in cfg.cases]
    if cfg.sessions:
        docs = [d.model_copy(update={"sessions": d.sessions[: cfg.sessions]}) for d in docs]
    return docs


def questions_for(doc: CaseDocument, cfg: EvalConfig) -> list[Question]:
    """Questions whose gold evidence lies inside the kept sessions (all of it), in file order;
    category-5 (adversarial) LoCoMo questions without evidence are kept only on whole cases."""
    kept = {t.original_id for s in doc.sessions for t in s.turns if t.original_id}
    out = []
    for q in doc.questions:
        if cfg.categories and str(q.category) not in cfg.categories:
            continue
        if q.evidence:
            if not set(q.evidence) <= kept:
                continue
        elif cfg.sessions:
            continue
        out.append(q)
    return out[: cfg.questions] if cfg.questions else out


def _tag(cfg: EvalConfig, settings: Settings, construction: str) -> str:
    """The cached build's key: what the build reads and the settings whose flag says they shape a
    build (the model among them); an answer-side setting reuses the build."""
    key = json.dumps(
        {
            "data": str(Path(cfg.data).resolve()),
            "sessions": cfg.sessions,
            "construction": construction,
            "code": build_digest(("session_summary",) if construction == "summary" else ()),
            "settings": settings.build_settings(),
        },
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(key.encode()).hexdigest()[:10]


class Progress:
    """One line on stderr: questions answered of all, LLM calls and tokens so far."""

    def __init__(self, total: int, enabled: bool = True):
        self.total, self.done, self.calls, self.tokens = total, 0, 0, 0
        self.enabled, self.lock, self.started = enabled, threading.Lock(), time.time()

    def call(self, record) -> None:
        with self.lock:
            self.calls += 1
            self.tokens += record.prompt_tokens + record.completion_tokens

    def step(self, label: str = "") -> None:
        with self.lock:
            self.done += 1
            if self.enabled:
                width = 30
                filled = int(width * self.done / max(1, self.total))
                print(
                    f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} questions, "
                    f"{self.calls} calls, {self.tokens} tokens, {time.time() - self.started:.0f} s {label[:40]:40}",
                    end="",
                    file=sys.stderr,
                    flush=True,
                )

    def close(self) -> None:
        if self.enabled:
            print(file=sys.stderr, flush=True)


def _answered(path: Path) -> set[tuple[str, str, str]]:
    done = set()
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
                done.add((row["method"], row["case"], row["qid"]))
            except (ValueError, KeyError):
                continue  # a line cut by a kill: answered again
    return done


def run(cfg: EvalConfig, settings: Settings, make_llm: LLMFactory, embedder, progress: bool = True) -> dict:
    """Build what the methods need, answer every question not yet answered, score, write outputs."""
    try:
        methods = [find_method(m) for m in cfg.methods]
    except ValueError as e:
        raise StoreError(str(e)) from None
    if cfg.workers > 1 and settings.llm.backend != "openai":
        cfg.workers = 1  # one embedded model answers one call at a time
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    wrappers: list[Replaying] = []
    if cfg.record or cfg.replay:
        make_llm = _replaying(make_llm, cfg, wrappers)
    cache = Path(cfg.cache_dir) if cfg.cache_dir else out / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    docs = select_documents(cfg, settings)
    plan = {d.case.id: questions_for(d, cfg) for d in docs}
    (out / "config.json").write_text(
        json.dumps(
            {
                **cfg.__dict__,
                "llm": settings.llm.model_dump(exclude={"api_key"}),
                "commit": commit(),
                "settings_digest": settings_digest(settings),
                "profile": settings.profile,
                "answer": settings.answer.model_dump(),
                "cpus": os.cpu_count(),
                "questions_per_case": {c: len(q) for c, q in plan.items()},
            },
            indent=1,
            default=str,
        ),
        encoding="utf-8",
    )
    predictions = out / "predictions.jsonl"
    done = _answered(predictions)
    if predictions.exists() and predictions.stat().st_size and not predictions.read_bytes().endswith(b"\n"):
        with open(predictions, "a", encoding="utf-8") as f:
            f.write("\n")  # a line cut by a kill stays alone (and is skipped), not glued to the next
    todo = [
        (m, d, q)
        for d in docs
        for m in methods
        for q in plan[d.case.id]
        if (m.name, d.case.id, q.qid or q.question) not in done
    ]
    bar = Progress(sum(len(q) for q in plan.values()) * len(methods), progress)
    bar.done = bar.total - len(todo)

    stores: dict[tuple[str, str], Store] = {}
    contexts: dict[tuple[str, str], CaseContext] = {}
    lock = threading.Lock()

    def recorder_for(store: Store):
        def record(r):
            store.record_call(r)
            bar.call(r)

        return record

    def prepared(doc: CaseDocument, construction: str | None) -> tuple[Store, CaseContext]:
        """The case's store for a construction, built (or reused) first."""
        key = (doc.case.id, construction or "turns")
        with lock:
            if key in stores:
                return stores[key], contexts[key]
        name = f"{doc.case.id}-s{cfg.sessions or 'all'}-{construction or 'turns'}-{_tag(cfg, settings, construction or 'turns')}.db"
        store = Store(cache / name, index_config=settings.storage.index)
        store.ingest([doc], on_exists="skip")
        consent.public_dataset(store, doc.case.id, "evaluation harness")
        llm = make_llm(recorder_for(store))
        ctx = CaseContext(store, doc.case.id, embedder)
        done = store.done_sessions(doc.case.id)
        if construction in ("bws", "session", "pair", "fixed") and any(
            done.get(s.id) != construction for s in store.sessions(doc.case.id)
        ):  # else reused as is
            Builder(store, llm, embedder, settings).build(doc.case.id, segmentation=construction)
        elif construction == "summary":
            ctx.summaries = summarise_sessions(store, doc.case.id, llm, settings)
        elif construction in SANITY_MEMORIES and not store.units(doc.case.id):
            fill(store, doc.case.id, construction, embedder, settings)  # no model call
        with lock:
            stores[key], contexts[key] = store, ctx
        return store, ctx

    write_lock = threading.Lock()

    def answer_one(task: tuple[Method, CaseDocument, Question]) -> None:
        method, doc, q = task
        store, ctx = prepared(doc, method.construction)
        consent.require(store, doc.case.id, "be evaluated")  # withdrawn while the run goes on
        llm = make_llm(recorder_for(store))
        k = method.k or cfg.k or settings.k_for(store.get_case(doc.case.id).source_format)[0]
        res = run_method(method, ctx, q, llm, settings, k, fta_store=store)
        gold = _gold_turns(ctx, q)
        row = {
            "method": method.name,
            "case": doc.case.id,
            "qid": q.qid or q.question,
            "question": q.question,
            "answer": q.answer,
            "prediction": res.prediction,
            "category": q.category,
            "capability": q.category if cfg.dataset == "esmemeval" else None,
            "evidence": q.evidence,
            "k": k,
            "retrieved": res.retrieved,
            "cited": res.cited,
            "packet_tokens": res.context_tokens,
            "answer_stage_tokens": res.answer_tokens,
            "seconds": round(res.seconds, 2),
            "note": res.note,
            "evidence_recall": round(len(gold & res.source_turns) / len(gold), 4) if gold else None,
            "content_recall": content_recall(res.text, [t.text for t in ctx.turns if t.idx in gold]),
        }
        if isinstance(llm, Replaying):  # a replayed answer took no model time: its seconds say nothing
            row["replayed"] = llm.served[("answer", "replayed")] > 0
        with write_lock:
            with open(predictions, "a", encoding="utf-8") as f:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
                f.flush()
                os.fsync(f.fileno())
        bar.step(f"{method.name} {doc.case.id}")

    try:
        # every construction the methods need, built or reused (a resumed run still reports their
        # cost); with workers, cases are built side by side (each case's sessions in order)
        docs_by_id = {d.case.id: d for d in docs}
        needed = list(dict.fromkeys((d.case.id, m.construction) for d in docs for m in methods if plan[d.case.id]))
        with ThreadPoolExecutor(cfg.workers) as pool:
            list(pool.map(lambda key: prepared(docs_by_id[key[0]], key[1]), needed))
            list(pool.map(answer_one, todo))
    finally:
        bar.close()
    from .report import write_outputs

    costs = {}
    for (case_id, construction), store in stores.items():
        costs.setdefault(construction, {})[case_id] = construction_cost(store, case_id, construction)
    summary = write_outputs(out, cfg, settings, costs, judge=make_llm(None) if cfg.judge else None)
    if wrappers:
        _count_served(out / "served.json", cfg.replay, sum((llm.served for llm in wrappers), Counter()))
    return summary


def _count_served(path: Path, replay: str | None, served: Counter) -> None:
    """Add this invocation's replayed and live calls per stage (the judge's too) to ``path``: a
    resumed run counts what every invocation asked."""
    before = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"served": {}}
    counts = Counter({(stage, how): n for stage, hows in before["served"].items() for how, n in hows.items()})
    path.write_text(
        json.dumps({"replay": replay, "served": by_stage(counts + served)}, indent=1) + "\n", encoding="utf-8"
    )


def _replaying(make_llm: LLMFactory, cfg: EvalConfig, made: list[Replaying]) -> LLMFactory:
    """``make_llm`` wrapped to record every reply (``cfg.record``) and serve the recorded
    answer-time replies of ``cfg.replay``, each once; the wrappers made are appended to ``made``."""
    # a reply kept without its request (an old recording) answers no question in particular
    recording = Recording(Path(cfg.replay), ANSWER_STAGES, in_order=False) if cfg.replay else None

    def make(recorder):
        llm = Replaying(make_llm(recorder), record=cfg.record, replay=recording, stages=ANSWER_STAGES)
        made.append(llm)
        return llm

    return make


def _gold_turns(ctx: CaseContext, q: Question) -> set[int]:
    by_id = {t.original_id: t.idx for t in ctx.turns if t.original_id}
    return {by_id[e] for e in q.evidence if e in by_id}


def construction_cost(store: Store, case_id: str, construction: str) -> dict:
    """Units, calls and tokens of building the case (the session summaries for that baseline)."""
    if construction == "summary":
        calls, tokens = store.stage_usage(case_id, "summary")
        turns = len(store.turns(case_id))
        units = len(store.sessions(case_id))
        return {
            "units": units,
            "calls": calls,
            "tokens": tokens,
            "turns": turns,
            "calls_per_turn": round(calls / turns, 3) if turns else 0.0,
            "tokens_per_turn": round(tokens / turns, 1) if turns else 0.0,
            "units_per_turn": round(units / turns, 3) if turns else 0.0,
        }
    cost = store.cost(case_id, memory_only=True)
    return {
        k: cost[k] for k in ("units", "calls", "tokens", "turns", "calls_per_turn", "tokens_per_turn", "units_per_turn")
    }
