"""Ask a question of a case's memory: rewrite -> retrieval (s_emb + cue score, tau, K) ->
expansion (links, B) -> packet -> grounded answer, with a trace of every step."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..governance import consent
from .answering import answer
from ..config import Ablations, Settings
from ..construction.builder import people
from ..llm.embeddings import Embedder
from ..llm.base import LLM, call_context
from .packet import MemoryPacket
from .pipeline import TurnIndex, retrieve, uses_turns
from ..llm.prompts import load_prompt
from .ranking import Cues, RewriteReply, cues_from, heuristic_cues
from ..storage.store import Store

# The prompts one ask reads; their fixed instructions are kept on disk (``ftamem warm``).
ASK_PROMPTS = ("rewrite", "answer")


@dataclass
class AskTrace:
    case_id: str
    question: str
    query: str = ""
    cues: Cues = field(default_factory=Cues)
    candidates: list[dict] = field(default_factory=list)
    kept_ids: list[int] = field(default_factory=list)
    packet: MemoryPacket = field(default_factory=MemoryPacket)
    packet_text: str = ""
    packet_tokens: int = 0
    shown_unit_ids: list[int] = field(default_factory=list)  # units the packet shows (within its budget)
    shown_turn_ids: list[int] = field(default_factory=list)  # turns it shows word for word
    channel_turn_ids: list[int] = field(default_factory=list)  # of those, the turn channel's
    left_out: dict[int, str] = field(default_factory=dict)  # units of the packet not shown -> why (packet.BUDGET ...)
    answer: str = ""
    cited_unit_ids: list[int] = field(default_factory=list)
    calls: list[dict] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    warmed: dict[str, str] = field(default_factory=dict)  # prompt -> where its prefix state came from

    def as_dict(self) -> dict:
        p = self.packet
        return {
            "case_id": self.case_id,
            "question": self.question,
            "query": self.query,
            "cues": self.cues.model_dump(),
            "settings": self.settings,
            "candidates": self.candidates,
            "kept_ids": self.kept_ids,
            "dropped_by_threshold": [c["id"] for c in self.candidates if c["reason"].startswith("R ")],
            "packet": {
                "primary": [u.model_dump() for u in p.primary],
                "neighbours": [
                    {"unit": n.unit.model_dump(), "via": n.via, "relation": n.relation} for n in p.neighbours
                ],
                "sources": {str(k): [t.model_dump() for t in v] for k, v in p.sources.items()},
                "semantic": [e.model_dump() for e in p.semantic],
                "support": [e.model_dump() for e in p.support],
                "text": self.packet_text,
                "tokens": self.packet_tokens,
                "shown_unit_ids": self.shown_unit_ids,
                "shown_turn_ids": self.shown_turn_ids,
                "channel_turn_ids": self.channel_turn_ids,
                "left_out": {str(k): v for k, v in self.left_out.items()},
            },
            "answer": self.answer,
            "cited_unit_ids": self.cited_unit_ids,
            "calls": self.calls,
            "seconds": self.seconds,
            "warmed": self.warmed,
        }


def _embed_ahead(embedder: Embedder, question: str, turns: list) -> tuple[np.ndarray, TurnIndex]:
    """The question's vector and the case's turns embedded (``pipeline.TurnIndex``)."""
    return embedder.encode([question])[0], TurnIndex.build(embedder, turns, replies=False)


STAGES = ("rewrite", "retrieval", "answer")  # in the order ``on_stage`` hears them


def ask(
    store: Store,
    case_id: str,
    question: str,
    llm: LLM,
    embedder: Embedder,
    settings: Settings,
    k: int | None = None,
    ablations: Ablations | None = None,
    on_stage: Callable[[str], None] = lambda stage: None,
) -> AskTrace:
    """``ablations`` (a preset) adds to the settings' own; ``k`` overrides the case's dataset K. The
    question, the case's memory and turns go to the model only with the case's consent (a withdrawn
    case: consent.ConsentWithdrawn). ``on_stage`` hears each of ``STAGES`` as it begins (the Ask
    page's progress line)."""
    consent.refuse_withdrawn(store, case_id)
    consent.require(store, case_id, "answer questions from its memory")
    ab = settings.combined(ablations)
    if k is None:
        k, k_reason = settings.k_for(store.get_case(case_id).source_format)
    else:
        k_reason = "given for this question"
    channel_on = uses_turns(settings, ab)
    trace = AskTrace(
        case_id,
        question,
        settings={
            "profile": settings.profile,
            "k": k,
            "k_reason": k_reason,
            "tau": settings.retrieval.tau,
            "lam": 1.0 if ab.plain_embedding else settings.retrieval.lam,
            "B": settings.retrieval.link_expansion,
            "packet_token_budget": settings.retrieval.packet_token_budget,
            "turn_channel": settings.retrieval.turn_channel if channel_on else 0,
            "retrieve_archived": settings.retrieval.retrieve_archived,
            "ablations": {n: v for n, v in ab.model_dump().items() if v},
        },
    )
    sessions = store.sessions(case_id)
    last_time = next((s.time for s in reversed(sessions) if s.time), None)
    all_turns = store.turns(case_id) if channel_on else []
    with call_context(case_id=case_id), ThreadPoolExecutor(1) as background:
        started = time.perf_counter()
        # The question and the turns are embedded while the model rewrites (in a new process this
        # also loads the encoder meanwhile, about 5 s on 2 cores).
        ahead = None if ab.question_only else background.submit(_embed_ahead, embedder, question, all_turns)
        # The prompts' fixed instructions, read once and kept (a new process reads them from disk).
        trace.warmed = llm.warm(("answer",) if ab.question_only or ab.no_rewrite else ASK_PROMPTS)
        trace.seconds["warm"] = round(time.perf_counter() - started, 3)
        started = time.perf_counter()
        on_stage("rewrite")
        if ab.question_only:
            trace.query = question
        elif ab.no_rewrite:
            trace.query, trace.cues = question, heuristic_cues(question, last_time)
        else:
            turns = store.turns(case_id, session_id=sessions[0].id) if sessions else []
            dates = ", ".join(s.time or s.time_text for s in sessions if s.time or s.time_text) or "unknown"
            messages = load_prompt("rewrite").messages(people=people(turns), dates=dates, question=question)
            reply, call = llm.structured(
                "rewrite",
                messages,
                RewriteReply,
                temperature=settings.answer.answer_temperature,
                max_tokens=settings.answer.answer_max_tokens,
            )
            trace.calls.append(call.model_dump(include={"stage", "prompt_tokens", "completion_tokens", "seconds"}))
            trace.query, trace.cues = reply.query, cues_from(reply, last_time)
        trace.seconds["rewrite"] = round(time.perf_counter() - started, 3)

        started = time.perf_counter()
        on_stage("retrieval")
        if ab.question_only:
            question_vector, turns = np.zeros(0), TurnIndex()
        else:
            question_vector, turns = ahead.result()
        vector = question_vector if ab.question_only or trace.query == question else embedder.encode([trace.query])[0]
        found = retrieve(
            store,
            case_id,
            vector,
            question_vector,
            trace.cues,
            embedder,
            settings,
            k=k,
            ablations=ab,
            turns=turns,
            count=llm.count_tokens,
        )
        if found.scored is not None:
            trace.candidates, trace.kept_ids = found.scored.rows(), found.scored.kept_ids()
        trace.packet, shown = found.packet, found.shown
        trace.packet_text, trace.shown_unit_ids, trace.shown_turn_ids = shown.text, shown.unit_ids, shown.turn_ids
        trace.channel_turn_ids, trace.left_out = shown.channel_ids, shown.left_out
        trace.seconds["retrieval"] = round(time.perf_counter() - started, 3)
        trace.packet_tokens = llm.count_tokens(trace.packet_text)

        started = time.perf_counter()
        on_stage("answer")
        trace.answer, trace.cited_unit_ids, call = answer(
            llm,
            question,
            trace.packet_text,
            trace.shown_unit_ids,
            settings.answer.answer_temperature,
            settings.answer.answer_max_tokens,
            settings.answer.answer_max_citations,
        )
        trace.calls.append(call.model_dump(include={"stage", "prompt_tokens", "completion_tokens", "seconds"}))
        trace.seconds["answer"] = round(time.perf_counter() - started, 3)
    return trace
