"""Evidence recall: does the packet hold the turns a question's gold answer rests on?

A question's gold evidence turns are its benchmark evidence ids (LoCoMo ``D1:3``) mapped to the
stored turns. Two readings of "in the packet":

- pointer recall: the gold turns inside the evidence spans of the units the packet shows (each
  unit line carries its pointer, as the paper's packet keeps source pointers with unit content);
- text recall: the gold turns whose own words the packet shows.

Turn-level RAG, the baseline, retrieves raw turns (speaker, date, text) by MiniLM cosine with the
question and shows them word for word, so both readings agree for it. Token counts are characters
/ 4 for both, so packets are compared at the same budget.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..config import PRESETS, Settings
from ..models import Question, Turn
from ..packet import Ablations, approx_tokens, build_packet, channel_turns, render, turn_lines
from ..retrieval import heuristic_cues, reply_vectors, score_candidates, turn_similarity
from ..store import Store


def gold_turns(turns_by_id: dict[str, int], question: Question) -> set[int]:
    return {turns_by_id[e] for e in question.evidence if e in turns_by_id}


def answerable(store: Store, case_id: str, categories: set[str] | None = None) -> list[tuple[Question, set[int]]]:
    """Questions (of ``categories``) all of whose evidence ids are stored turns of the case."""
    by_id = {t.original_id: t.idx for t in store.turns(case_id) if t.original_id}
    out = []
    for q in store.questions(case_id):
        gold = gold_turns(by_id, q)
        if gold and len(gold) == len(set(q.evidence)) and (categories is None or q.category in categories):
            out.append((q, gold))
    return out


@dataclass
class Shown:
    pointed: set[int]  # turns the packet points to (unit spans) or shows
    text: set[int]  # turns shown word for word
    tokens: int

    def recall(self, gold: set[int]) -> tuple[float, float]:
        return len(gold & self.pointed) / len(gold), len(gold & self.text) / len(gold)


class TurnRAG:
    """Raw turns ranked by embedding cosine with the question."""

    def __init__(self, store: Store, case_id: str, embedder):
        self.turns: list[Turn] = store.turns(case_id)
        self.lines = turn_lines(self.turns)
        self.vectors = embedder.encode(self.lines)
        self._embedder, self._replies = embedder, None

    def replies(self) -> np.ndarray:
        """The turns embedded as replies (``retrieval.reply_vectors``), for source similarity only:
        turn-level RAG itself ranks the plain turns."""
        if self._replies is None:
            self._replies = reply_vectors(self._embedder, self.turns, self.lines, self.vectors)
        return self._replies

    def packet(self, query_vector: np.ndarray, k: int | None = None, budget: int = 0) -> Shown:
        order = np.argsort(-(self.vectors @ query_vector), kind="stable")
        chosen, used = [], 0
        for i in order[: k or len(order)]:
            cost = approx_tokens(self.lines[i]) + 1
            if budget and used + cost > budget:
                break
            chosen.append(self.turns[i].idx)
            used += cost
        return Shown(set(chosen), set(chosen), used)


def fta_packet(store: Store, case_id: str, question: str, query_vector: np.ndarray, embedder, settings: Settings,
               k: int, budget: int, preset: str = "no_rewrite", rag: TurnRAG | None = None) -> Shown:
    """The packet the method builds for ``question`` (embedded as ``query_vector``) without the
    rewrite call (cues read off the question), cut to ``budget`` tokens (0: all of it). With
    ``rag`` (the case's embedded turns), the turn channel (``settings.turn_channel``) and source
    similarity (``settings.source_similarity``) are on."""
    ab: Ablations = settings.combined(PRESETS[preset])
    last = next((s.time for s in reversed(store.sessions(case_id)) if s.time), None)
    cues = heuristic_cues(question, last)
    scored = score_candidates(store, case_id, query_vector, cues, k=k, tau=settings.tau, lam=settings.lam,
                              pool=settings.candidate_pool, ablations=ab, score_all_below=settings.score_all_below,
                              open_partials=settings.retrieve_open_partials, archived=settings.retrieve_archived,
                              turn_similarity=None if rag is None else turn_similarity(
                                  rag.turns, rag.vectors, query_vector,
                                  rag.replies() if settings.source_reply_context and settings.source_similarity else None),
                              source_weight=settings.source_similarity)
    channel = [] if rag is None or ab.fact_only else channel_turns(rag.turns, rag.vectors, query_vector,
                                                                    settings.turn_channel, settings.tau)
    packet = build_packet(store, case_id, scored.kept_ids(), settings.link_expansion, ab, settings.auxiliary_limit,
                          lambda texts: embedder.encode(texts) @ query_vector, settings.tau, scored.similarity(), channel,
                          archived=settings.retrieve_archived)
    shown = render(packet, ab, budget)
    return Shown(shown.pointed_turns(packet) | set(shown.turn_ids), set(shown.turn_ids), approx_tokens(shown.text))
