"""Evidence recall: does the packet hold the turns a question's gold answer rests on?

A question's gold evidence turns are its benchmark evidence ids (LoCoMo ``D1:3``) mapped to the
stored turns. Two readings of "in the packet":

- content recall (the headline): the gold turns whose words the packet's text shows
  (``evaluation.content``: 60% of a turn's content words), whatever shows them, a unit or a turn;
- unit content recall: the same on the lines of the units the packet shows alone (primary and
  linked; notes and turns aside): what the units say. A memory of empty units reads 0 on it,
  turn-level RAG 0 by construction, a memory of the turns' copies what retrieval reaches; turns
  shown beside units count nothing in it, so a packet rule moves it only by which units it shows;
- pointer recall: the gold turns inside the evidence spans of the units the packet shows, or
  shown word for word. A unit that points at a turn without saying what it said counts here,
  so a memory of empty units over long spans maxes it out (``evaluation.sanity``): read it
  beside content recall, never alone.

Every method is packed by ``pipeline``: FTA-Mem (and the sanity memories, which are FTA-Mem's
retrieval over other units) by ``retrieve``, turn-level RAG by ``turn_rag``, with the same
budget, rule, date lines and token count.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..config import PRESETS, Settings
from ..models import Question
from ..retrieval.packet import Rendered, approx_tokens
from ..retrieval.pipeline import Count, TurnIndex, retrieve, turn_rag
from ..retrieval.ranking import heuristic_cues
from ..storage.store import Store
from .content import ShownText, content_recall


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
    pointed: set[int]  # turns the packet points to (unit spans) or shows word for word
    text: str  # the packet as the answering model reads it
    tokens: int
    unit_text: str = ""  # the lines of its units alone

    def recall(self, gold: dict[int, str]) -> tuple[float, float]:
        """(content recall, pointer recall) of the gold turns (index -> text)."""
        shown = ShownText(self.text)
        content = sum(shown.shows(t) for t in gold.values()) / len(gold)
        return content, len(gold.keys() & self.pointed) / len(gold)

    def unit_recall(self, gold: dict[int, str]) -> float:
        """Content recall of the gold turns on the unit lines alone."""
        return content_recall(self.unit_text, list(gold.values()))


def _shown(rendered: Rendered, pointed: set[int]) -> Shown:
    return Shown(pointed | set(rendered.turn_ids), rendered.text, rendered.tokens, "\n".join(rendered.unit_lines))


def rag_packet(
    turns: TurnIndex,
    question_vector: np.ndarray,
    settings: Settings,
    k: int | None,
    budget: int,
    count: Count = approx_tokens,
) -> Shown:
    """Turn-level RAG's packet (``pipeline.turn_rag``)."""
    return _shown(turn_rag(turns, question_vector, settings, k, budget, count), set())


def fta_packet(
    store: Store,
    case_id: str,
    question: str,
    query_vector: np.ndarray,
    embedder,
    settings: Settings,
    k: int,
    budget: int,
    turns: TurnIndex,
    preset: str = "no_rewrite",
    count: Count = approx_tokens,
) -> Shown:
    """The packet the method builds for ``question`` (embedded as ``query_vector``) without the
    rewrite call (cues read off the question), cut to ``budget`` tokens (0: all of it)."""
    last = next((s.time for s in reversed(store.sessions(case_id)) if s.time), None)
    found = retrieve(
        store,
        case_id,
        query_vector,
        query_vector,
        heuristic_cues(question, last),
        embedder,
        settings,
        k=k,
        ablations=settings.combined(PRESETS[preset]),
        turns=turns,
        budget=budget,
        count=count,
    )
    return _shown(found.shown, found.shown.pointed_turns(found.packet))
