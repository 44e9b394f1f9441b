"""Query rewriting and structured unit retrieval: R = lambda * s_emb + (1 - lambda) * c(q', m).

The cue score c is the mean of the cue components the rewritten query has (a component whose cue
is absent does not count; no cue at all gives c = 0):

- time: 1 if the unit's time (its resolved event time, else the day it was said) overlaps a
  time the question names, 0.5 if it lies within 31 days of one, else 0;
- situation type: 1 if the unit's content type is one the question wants;
- participants: 1 if a person the question names appears among the unit's participants or in its
  fact text;
- affect: 1 if an affect term of the question appears in the unit's emotion, intention or fact.

Everything after the rewrite is vectorised: a FAISS search for the best hits, one SQL query for
their fields, numpy for the scores; more hits only while an unscored unit could still be kept.
Units with R >= tau are kept, best K.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..config import Ablations
from ..text.english_sentences import sentences
from ..models import ContentType, Short, Statement
from ..storage.store import Store
from ..construction.temporal import resolve, session_date, time_range


class RewriteReply(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: Statement
    people: list[Short] = Field(max_length=8)
    time_expressions: list[Short] = Field(max_length=6)
    content_types: list[ContentType] = Field(max_length=8)
    affect_terms: list[Short] = Field(max_length=6)


class Cues(BaseModel):
    people: list[str] = Field(default_factory=list)
    time_expressions: list[str] = Field(default_factory=list)
    times: list[str] = Field(default_factory=list)  # resolved: dates, months, years, ranges
    content_types: list[str] = Field(default_factory=list)
    affect_terms: list[str] = Field(default_factory=list)


def cues_from(reply: RewriteReply, anchor_time: str | None) -> Cues:
    """The model's cues with time expressions resolved against the case's last session date."""
    anchor = session_date(anchor_time)
    times = [t for t in (resolve(e, anchor) for e in reply.time_expressions) if t]
    return Cues(
        people=[p for p in reply.people if p.strip()],
        time_expressions=reply.time_expressions,
        times=list(dict.fromkeys(times)),
        content_types=list(dict.fromkeys(reply.content_types)),
        affect_terms=[a for a in reply.affect_terms if a.strip()],
    )


_NAME = re.compile(r"\b[A-Z][a-z]{2,}\b")
_QUESTION_WORDS = {
    "What",
    "When",
    "Where",
    "Who",
    "Why",
    "How",
    "Which",
    "Did",
    "Does",
    "Do",
    "Is",
    "Are",
    "Was",
    "Were",
    "Has",
    "Have",
    "Can",
    "Could",
    "Would",
    "Should",
    "The",
}


def heuristic_cues(question: str, anchor_time: str | None) -> Cues:
    """Cues read off the question itself, for the no-rewrite ablation: capitalised names and the
    times the resolver finds."""
    people = [w for w in dict.fromkeys(_NAME.findall(question)) if w not in _QUESTION_WORDS]
    t = resolve(question, session_date(anchor_time))
    return Cues(people=people, times=[t] if t else [])


@dataclass
class Scored:
    """Every candidate the search returned, with its scores (arrays aligned by position)."""

    ids: np.ndarray
    s_emb: np.ndarray  # the retrieval text's cosine with the query (the paper's s_emb)
    cue: np.ndarray
    score: np.ndarray
    components: dict[str, np.ndarray] = field(default_factory=dict)
    kept: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    reasons: list[str] = field(default_factory=list)  # why each was kept or dropped

    def order(self) -> np.ndarray:
        """Best first: by R, then s_emb, then id (the same order however many hits were scored)."""
        return np.lexsort((self.ids, -self.s_emb, -self.score))

    def kept_ids(self) -> list[int]:
        return [int(self.ids[i]) for i in self.order() if self.kept[i]]

    def similarity(self) -> dict[int, float]:
        """s_emb of each kept candidate (the turn channel merges turns with units by it)."""
        return {int(self.ids[i]): float(self.s_emb[i]) for i in range(len(self.ids)) if self.kept[i]}

    def rows(self) -> list[dict]:
        out = []
        for i in self.order():
            row = {
                "id": int(self.ids[i]),
                "s_emb": round(float(self.s_emb[i]), 4),
                "cue": round(float(self.cue[i]), 4),
                "R": round(float(self.score[i]), 4),
                "kept": bool(self.kept[i]),
                "reason": self.reasons[i],
            }
            row.update({k: round(float(v[i]), 2) for k, v in self.components.items()})
            out.append(row)
        return out


# FAISS hits scored first; more are fetched only while one not yet scored could still be kept
FIRST_POOL = 100


def score_candidates(
    store: Store,
    case_id: str,
    query_vector: np.ndarray,
    cues: Cues,
    *,
    k: int,
    tau: float,
    lam: float,
    ablations: Ablations,
    pool: int = FIRST_POOL,
    open_partials: bool = True,
    archived: bool = False,
) -> Scored:
    """Eq. 8 and 9 over the case's units, kept as if every unit were scored (the paper ranks them
    all), without scoring them all: FAISS returns units by s_emb, and c is at most 1, so a unit
    not among the hits scored has R at most lambda * (their lowest s_emb), plus 1 - lambda when the
    query has a cue. Once that bound is under tau, or under the K-th kept R, no further unit can
    be kept; else four times as many hits are scored (first ``pool``, at least K). With the exact
    (flat) index the units kept are those of scoring all; an approximate one (HNSW, IVF in large
    cases) hands over approximately the best hits, and the bound is as good as it. A partial unit
    (still open at the end of the built case) is kept only with ``open_partials``, an archived one
    only with ``archived`` (a counselor archived it: it no longer shapes answers unless asked for)."""
    index = store.index(case_id)
    if index.ntotal == 0:
        empty = np.zeros(0)
        return Scored(empty.astype(np.int64), empty, empty, empty, kept=empty.astype(bool))
    lam = 1.0 if ablations.plain_embedding else lam
    take = min(index.ntotal, max(pool, k))
    while True:
        sims, ids = index.search(query_vector, take)
        scored = _scored(store, case_id, sims, ids, cues, k, tau, lam, ablations, open_partials, archived)
        # an IVF index may return fewer hits than asked: those it reaches are all it has
        if take >= index.ntotal or int((ids >= 0).sum()) < take or not len(scored.ids):
            return scored
        cue_max = 1.0 if scored.components else 0.0
        unseen = lam * float(scored.s_emb.min()) + (1.0 - lam) * cue_max
        kept = scored.score[scored.kept]
        if unseen < tau or k <= 0 or (len(kept) >= k and unseen < kept.min()):
            return scored
        take = min(index.ntotal, take * 4)


def _scored(store, case_id, sims, ids, cues: Cues, k, tau, lam, ablations, open_partials, archived) -> Scored:
    """R for the hits ``(sims, ids)`` and which of them are kept, best first up to K."""
    rows = store.unit_score_rows(case_id, ids[ids >= 0].tolist())
    by_id = {r["id"]: r for r in rows}
    mask = np.array([int(i) in by_id for i in ids], dtype=bool)  # not a unit deleted since the search
    sims, ids = sims[mask].astype(np.float64), ids[mask]
    rows = [by_id[int(i)] for i in ids]
    components: dict[str, np.ndarray] = {}
    use_time = cues.times and not (ablations.no_time_fields or ablations.fact_only)
    use_affect = cues.affect_terms and not (ablations.no_affect_fields or ablations.fact_only)
    if use_time:
        components["time"] = _time_component(rows, cues.times)
    if cues.content_types and not ablations.fact_only:
        types = np.array([r["content_type"] for r in rows])
        components["type"] = np.isin(types, cues.content_types).astype(np.float64)
    if cues.people and not ablations.fact_only:
        text = np.char.lower(np.array([f"{r['participants']} {r['fact_text']}" for r in rows], dtype=str))
        components["people"] = _any_term(text, cues.people)
    if use_affect:
        text = np.char.lower(
            np.array([f"{r['emotion_or_state']} {r['intention_or_plan']} {r['fact_text']}" for r in rows], dtype=str)
        )
        components["affect"] = _any_term(text, cues.affect_terms)
    cue = np.mean(np.vstack(list(components.values())), axis=0) if components else np.zeros(len(ids))
    scored = Scored(ids.astype(np.int64), sims, cue, np.zeros(0), components)
    score = lam * sims + (1.0 - lam) * cue
    order = np.lexsort((ids, -sims, -score))  # as Scored.order
    kept = np.zeros(len(ids), dtype=bool)
    reasons = [""] * len(ids)
    rank = 0
    for i in order:
        if rows[i]["disputed"]:  # kept for review, never used for an answer
            reasons[i] = "disputed"
        elif rows[i]["lifecycle_status"] == "archived" and not archived:
            reasons[i] = "archived"
        elif rows[i]["construction_status"] == "partial" and not open_partials:
            reasons[i] = "partial unit"
        elif score[i] < tau:
            reasons[i] = f"R {score[i]:.3f} < tau {tau}"
        elif rank >= k:
            reasons[i] = f"beyond top K={k}"
        else:
            kept[i], reasons[i] = True, "kept"
            rank += 1
    scored.score, scored.kept, scored.reasons = score, kept, reasons
    return scored


def turn_similarity(
    turns: list, vectors: np.ndarray, query_vector: np.ndarray, reply_vectors: np.ndarray | None = None
) -> np.ndarray:
    """Each turn's cosine with the query, at the turn's index (a gap left by an erased turn is 0),
    as turn-level RAG ranks them; with ``reply_vectors`` (aligned with ``turns``, see
    ``reply_texts``) the better of the two: "Researching adoption agencies" says nothing of the
    summer it answers "Any fun plans for the summer?" about."""
    out = np.zeros(max((t.idx for t in turns), default=-1) + 1)
    if turns:
        sims = vectors @ query_vector
        if reply_vectors is not None:
            sims = np.maximum(sims, reply_vectors @ query_vector)
        out[[t.idx for t in turns]] = np.asarray(sims, dtype=np.float64)
    return out


def reply_texts(turns: list, lines: list[str]) -> list[str]:
    """Each turn's line (``lines``, aligned with ``turns``), after the last question of the turn
    just before it when another speaker asked it in the same session; the plain line otherwise."""
    out = list(lines)
    for i in range(1, len(turns)):
        before, turn = turns[i - 1], turns[i]
        if before.session_id != turn.session_id or (before.speaker or before.role) == (turn.speaker or turn.role):
            continue
        asked = [s for s in sentences(before.text) if s.endswith("?")]
        if asked:
            out[i] = f"{asked[-1]} {lines[i]}"
    return out


def reply_vectors(embedder, turns: list, lines: list[str], vectors: np.ndarray) -> np.ndarray:
    """``vectors`` (the embedded ``lines``) with each reply's row embedded after its question."""
    texts = reply_texts(turns, lines)
    changed = [i for i, (text, line) in enumerate(zip(texts, lines)) if text != line]
    out = np.array(vectors, copy=True)
    if changed:
        out[changed] = embedder.encode([texts[i] for i in changed])
    return out


def _any_term(text: np.ndarray, terms: list[str]) -> np.ndarray:
    hits = np.zeros(len(text), dtype=bool)
    for term in terms:
        term = term.strip().lower()
        if term:
            hits |= np.char.find(text, term) >= 0
    return hits.astype(np.float64)


def _time_component(rows: list[dict], times: list[str]) -> np.ndarray:
    ranges = [time_range(r["event_time"]) or time_range((r["dialogue_time"] or "")[:10]) for r in rows]
    start = np.array([r[0] if r else np.nan for r in ranges], dtype=np.float64)
    end = np.array([r[1] if r else np.nan for r in ranges], dtype=np.float64)
    best = np.zeros(len(rows))
    for t in times:
        q = time_range(t)
        if q is None:
            continue
        gap = np.maximum(q[0] - end, start - q[1])  # <= 0 when the ranges overlap
        best = np.maximum(best, np.where(gap <= 0, 1.0, np.where(gap <= 31, 0.5, 0.0)))
    return np.nan_to_num(best)
