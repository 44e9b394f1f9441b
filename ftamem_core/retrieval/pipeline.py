"""Question -> retrieval -> packet, the one way: ``ftamem ask``, the Ask page (both through
``inference.ask``), ``ftamem eval`` and ``benchmarks/evidence.py`` call ``retrieve`` with the
same settings object and the same token count, and turn-level RAG is packed by ``turn_rag`` with
the packet's own rule (``packet.render``): the same budget filling (an item that does not fit is
passed over), the same date lines. The reply context (an answer embedded after its question) is
turn-level RAG's own; the turn channel reads the plain turn vectors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..config import Ablations, Settings
from ..models import Turn
from .packet import MemoryPacket, Rendered, approx_tokens, build_packet, channel_turns, render, turn_lines
from .ranking import Cues, Scored, reply_vectors, score_candidates, turn_similarity
from ..storage.store import Store

Count = Callable[[str], int]


@dataclass
class TurnIndex:
    """A case's turns as turn-level RAG and the turn channel embed them (``packet.turn_lines``),
    and, for turn-level RAG, as replies to the question before them (``ranking.reply_vectors``)."""

    turns: list[Turn] = field(default_factory=list)
    vectors: np.ndarray | None = None
    replies: np.ndarray | None = None

    @classmethod
    def build(cls, embedder, turns: list[Turn], replies: bool) -> "TurnIndex":
        if not turns:
            return cls()
        lines = turn_lines(turns)
        vectors = embedder.encode(lines)
        return cls(turns, vectors, reply_vectors(embedder, turns, lines, vectors) if replies else None)

    def similarity(self, query_vector: np.ndarray) -> np.ndarray:
        """Each turn's cosine with the query, by turn index (``ranking.turn_similarity``), with the
        reply vectors where the index was built with them."""
        return turn_similarity(self.turns, self.vectors, query_vector, self.replies)


def uses_turns(settings: Settings, ablations: Ablations) -> bool:
    """Whether the turn channel is on (it needs the case's turns)."""
    return bool(settings.retrieval.turn_channel) and not (ablations.fact_only or ablations.question_only)


@dataclass
class Retrieved:
    scored: Scored | None
    packet: MemoryPacket
    shown: Rendered


def retrieve(
    store: Store,
    case_id: str,
    query_vector: np.ndarray,
    question_vector: np.ndarray,
    cues: Cues,
    embedder,
    settings: Settings,
    *,
    k: int,
    ablations: Ablations,
    turns: TurnIndex,
    budget: int | None = None,
    count: Count = approx_tokens,
) -> Retrieved:
    """Score the case's units for the (rewritten) query (Eq. 8-9), expand and pack them with the
    turn channel's turns (the question's nearest turns), rendered within ``budget`` tokens
    (default: the settings' ``packet_token_budget``) counted by ``count``. ``ablations`` are the
    combined ones (``Settings.combined``)."""
    budget = settings.retrieval.packet_token_budget if budget is None else budget
    if ablations.question_only:
        return Retrieved(None, MemoryPacket(), render(MemoryPacket(), ablations, budget, count))
    channel_on = uses_turns(settings, ablations)
    scored = score_candidates(
        store,
        case_id,
        query_vector,
        cues,
        k=k,
        tau=settings.retrieval.tau,
        lam=settings.retrieval.lam,
        ablations=ablations,
        open_partials=settings.retrieval.retrieve_open_partials,
        archived=settings.retrieval.retrieve_archived,
    )
    scores, channel = {}, []
    if channel_on and turns.turns:
        scores = scored.similarity()
        channel = channel_turns(
            turns.turns, turns.vectors, question_vector, settings.retrieval.turn_channel, settings.retrieval.tau
        )
    packet = build_packet(
        store,
        case_id,
        scored.kept_ids(),
        settings.retrieval.link_expansion,
        ablations,
        settings.retrieval.auxiliary_limit,
        lambda texts: embedder.encode(texts) @ query_vector,
        settings.retrieval.tau,
        scores,
        channel,
        archived=settings.retrieval.retrieve_archived,
    )
    return Retrieved(scored, packet, render(packet, ablations, budget, count))


def turn_rag(
    turns: TurnIndex,
    question_vector: np.ndarray,
    settings: Settings,
    k: int | None,
    budget: int | None = None,
    count: Count = approx_tokens,
) -> Rendered:
    """Turn-level RAG: the ``k`` turns (all: None) most similar to the question, an answer also
    embedded after the question before it (``TurnIndex.build`` with replies), packed as the packet
    packs its turns."""
    budget = settings.retrieval.packet_token_budget if budget is None else budget
    if not turns.turns:
        return render(MemoryPacket(), Ablations(), budget, count)
    sims = turns.similarity(question_vector)
    order = sorted(turns.turns, key=lambda t: -sims[t.idx])[: k or len(turns.turns)]
    packet = MemoryPacket(channel=[(float(sims[t.idx]), t) for t in order])
    return render(packet, Ablations(), budget, count)
