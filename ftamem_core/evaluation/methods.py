"""The methods an evaluation compares. All are answered by the same model with the same answer
prompt (``prompt_files/answer.md``); only the memory shown differs:

- ``fta``: FTA-Mem as ``ftamem ask`` runs it (rewrite, retrieval, packet, answer), K from the
  case's dataset unless given; ``fta-<preset>``: each ablation preset of ``ftamem ask``;
  ``fta-session``, ``fta-pair``, ``fta-fixed``: the granularity variants (their own builds);
- ``question-only``: no memory;
- ``full-context``: the case's turns (speaker, date, text), the latest that fit the model's window
  once the prompt and the answer's room are counted (how many were kept is recorded);
- ``turn-rag``: the K raw turns (speaker, date, text) most similar to the question by
  all-MiniLM-L6-v2 cosine (an answer turn also embedded after the question before it, the better
  cosine counting, in every profile), packed into the same token budget by the packet's own rule
  (``pipeline.turn_rag``);
- ``null`` and ``verbatim``: FTA-Mem's retrieval and packet over a memory built without a model
  (``evaluation.sanity``): information-free units over 12-turn blocks, and the turns' copies;
- ``session-summary``: one LLM summary per session (``prompt_files/session_summary.md``, as MemoryBank
  keeps), the K most similar to the question by embedding.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from pydantic import BaseModel, Field

from ..retrieval.answering import answer
from ..config import PRESETS, Settings
from ..retrieval.inference import ask
from ..llm.base import LLM, call_context
from ..models import Question
from ..retrieval.packet import turn_lines
from ..retrieval.pipeline import TurnIndex, turn_rag
from ..llm.prompts import load_prompt
from ..storage.store import Store
from ..construction.temporal import spoken
from .sanity import SANITY_MEMORIES


@dataclass(frozen=True)
class Method:
    name: str
    kind: str  # fta | question_only | full_context | turn_rag | session_summary
    construction: str | None  # what is built before it answers (a segmentation or "summary"), or nothing
    preset: str | None = None
    k: int | None = None  # a method named NAME@K answers with that K (a K sweep)


def catalogue() -> dict[str, Method]:
    out = {"fta": Method("fta", "fta", "bws")}
    out.update({f"fta-{p}": Method(f"fta-{p}", "fta", "bws", p) for p in PRESETS if p != "full"})
    out.update({f"fta-{v}": Method(f"fta-{v}", "fta", v) for v in ("session", "pair", "fixed")})
    out.update({m: Method(m, "fta", m) for m in SANITY_MEMORIES})
    out["question-only"] = Method("question-only", "question_only", None)
    out["full-context"] = Method("full-context", "full_context", None)
    out["turn-rag"] = Method("turn-rag", "turn_rag", None)
    out["session-summary"] = Method("session-summary", "session_summary", "summary")
    return out


def method(name: str) -> Method:
    """A method of the catalogue by name, or ``NAME@K`` for one with its own K."""
    from dataclasses import replace

    base, _, k = name.partition("@")
    known = catalogue()
    if base not in known or (k and not (k.isdigit() and int(k) > 0)):
        raise ValueError(f"unknown method {name!r} (one of {', '.join(known)}, each optionally @K, e.g. fta@10)")
    return replace(known[base], name=name, k=int(k)) if k else known[base]


class SummaryReply(BaseModel):
    # No length bound: llama.cpp turns maxLength into a grammar repetition it refuses beyond a few
    # hundred (the prompt asks for about 120 words).
    summary: str = Field(..., min_length=1)


def summarise_sessions(store: Store, case_id: str, llm: LLM, settings: Settings) -> dict[int, str]:
    """One summary per session, kept in the store's session meta (a rerun reuses them)."""
    out = {}
    for s in store.sessions(case_id):
        if "summary_baseline" in s.meta:
            out[s.idx] = s.meta["summary_baseline"]
            continue
        turns = store.turns(case_id, session_id=s.id)
        messages = load_prompt("session_summary").messages(
            date=s.time or s.time_text or "unknown", turns="\n".join(turn_lines(turns))
        )
        with call_context(case_id=case_id):
            reply, _ = llm.structured(
                "summary", messages, SummaryReply, temperature=0.0, max_tokens=settings.answer.answer_max_tokens
            )
        out[s.idx] = reply.summary.strip()
        store.set_session_meta(case_id, s.id, {**s.meta, "summary_baseline": out[s.idx]})
    return out


@dataclass
class Answered:
    prediction: str
    cited: list[int]
    context_tokens: int
    answer_tokens: int  # prompt + completion of every call made to answer (rewrite included)
    source_turns: set[int]  # turns the context shows or points to
    retrieved: list[dict] = field(default_factory=list)
    note: str = ""
    seconds: float = 0.0
    text: str = ""  # what the answering model was shown (content recall reads it)


class CaseContext:
    """What the baselines need of one case, computed once: turns, their vectors, summaries."""

    def __init__(self, store: Store, case_id: str, embedder):
        self.store, self.case_id, self.embedder = store, case_id, embedder
        self.turns = store.turns(case_id)
        self.lines = turn_lines(self.turns)
        self._vectors = None
        self._index: TurnIndex | None = None
        self.summaries: dict[int, str] = {}
        self._summary_vectors = None

    @property
    def vectors(self) -> np.ndarray:
        if self._vectors is None:
            self._vectors = self.embedder.encode(self.lines)
        return self._vectors

    def index(self) -> TurnIndex:
        """The turns as ``pipeline.turn_rag`` ranks them (built once)."""
        if self._index is None:
            self._index = TurnIndex.build(self.embedder, self.turns, replies=True)
        return self._index


def run_method(
    method: Method,
    ctx: CaseContext,
    question: Question,
    llm: LLM,
    settings: Settings,
    k: int,
    fta_store: Store | None = None,
) -> Answered:
    """Answer one question with one method."""
    if method.kind == "fta":
        trace = ask(
            fta_store,
            ctx.case_id,
            question.question,
            llm,
            ctx.embedder,
            settings,
            k=k,
            ablations=PRESETS[method.preset] if method.preset else None,
        )
        units = {u.id: u for u in fta_store.units_by_id(ctx.case_id, trace.shown_unit_ids)}
        pointed = {i for u in units.values() for i in range(u.evidence.start, u.evidence.end + 1)}
        return Answered(
            trace.answer,
            trace.cited_unit_ids,
            trace.packet_tokens,
            sum(c["prompt_tokens"] + c["completion_tokens"] for c in trace.calls),
            pointed | set(trace.shown_turn_ids),
            [
                {"id": c["id"], "s_emb": c["s_emb"], "cue": c["cue"], "R": c["R"]}
                for c in trace.candidates
                if c["id"] in trace.kept_ids
            ],
            seconds=sum(trace.seconds.values()),
            text=trace.packet_text,
        )
    note, shown, retrieved = "", set(), []
    if method.kind == "question_only":
        text = "(no memory)"
    elif method.kind == "turn_rag":
        index = ctx.index()
        q = ctx.embedder.encode([question.question])[0]
        shown_turns = turn_rag(index, q, settings, k, count=llm.count_tokens)
        text, shown = shown_turns.text, set(shown_turns.turn_ids)
        sims = index.similarity(q)
        retrieved = [{"turn": i, "cosine": round(float(sims[i]), 4)} for i in shown_turns.turn_ids]
    elif method.kind == "full_context":
        overhead = sum(
            llm.count_tokens(m["content"])
            for m in load_prompt("answer").messages(packet="", question=question.question)
        )
        room = settings.llm.n_ctx - settings.answer.answer_max_tokens - overhead - 64
        kept, used = [], 0
        for i in range(len(ctx.lines) - 1, -1, -1):  # the latest turns that fit
            cost = llm.count_tokens(ctx.lines[i]) + 1
            if used + cost > room:
                break
            kept.append(i)
            used += cost
        kept.reverse()
        text = "\n".join(ctx.lines[i] for i in kept)
        shown = {ctx.turns[i].idx for i in kept}
        if len(kept) < len(ctx.lines):
            note = f"truncated to the model's window: the latest {len(kept)} of {len(ctx.lines)} turns"
    elif method.kind == "session_summary":
        sessions = {s.idx: s for s in ctx.store.sessions(ctx.case_id)}
        order_ids = sorted(ctx.summaries)
        if ctx._summary_vectors is None:
            ctx._summary_vectors = ctx.embedder.encode([ctx.summaries[i] for i in order_ids])
        q = ctx.embedder.encode([question.question])[0]
        sims = ctx._summary_vectors @ q
        best = [order_ids[j] for j in np.argsort(-sims, kind="stable")[:k]]
        text = "\n".join(
            f"[session {i}, {spoken(sessions[i].time) or sessions[i].time_text or 'undated'}] {ctx.summaries[i]}"
            for i in sorted(best)
        )
        by_session = {s.id: s.idx for s in sessions.values()}
        shown = {t.idx for t in ctx.turns if by_session.get(t.session_id) in best}
        retrieved = [{"session": i, "cosine": round(float(sims[order_ids.index(i)]), 4)} for i in best]
    else:
        raise ValueError(f"unknown method kind {method.kind!r}")
    with call_context(case_id=ctx.case_id):
        prediction, cited, call = answer(
            llm, question.question, text, [], settings.answer.answer_temperature, settings.answer.answer_max_tokens
        )
    return Answered(
        prediction,
        cited,
        llm.count_tokens(text),
        call.prompt_tokens + call.completion_tokens,
        shown,
        retrieved,
        note,
        call.seconds,
        text,
    )
