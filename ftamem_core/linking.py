"""Temporal-link maintenance: relate each newly stored unit to similar earlier units of its case.

Candidates come from the case's FAISS index (earlier units only, top N above a similarity
threshold); when none passes there is no LLM call. One classification call judges all
candidates. Non-unknown relations are stored directed new -> old; each judged neighbour gets the
lifecycle status and completeness the model gave, and its updated time from the new unit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, create_model

from .models import Completeness, Confidence, FTAUnit, LifecycleStatus, Link, Relation
from .representation import briefs_json, unit_brief
from .store import Store


class UpdateOut(BaseModel):
    model_config = ConfigDict(extra="forbid")
    memory_id: str
    relation: Relation
    lifecycle_status: LifecycleStatus
    completeness: Completeness
    relation_confidence: Confidence


class LinkingReply(BaseModel):
    model_config = ConfigDict(extra="forbid")
    memory_updates: list[UpdateOut]


def reply_model(keys: list[str]) -> type[LinkingReply]:
    """``memory_id`` may only name one of the candidates shown."""
    update = create_model("UpdateOut", __base__=UpdateOut, memory_id=(Literal[tuple(keys)], ...))  # type: ignore[valid-type]
    return create_model("LinkingReply", __base__=LinkingReply,
                        memory_updates=(list[update], Field(..., max_length=len(keys))))


def candidates(store: Store, unit: FTAUnit, vector: np.ndarray, limit: int, threshold: float) -> list[tuple[FTAUnit, float]]:
    """Earlier units of the same case most similar to ``unit``, best first, above ``threshold``."""
    if limit <= 0 or unit.id is None:
        return []
    index = store.index(unit.case_id)
    scores, ids = index.search(vector, limit + 1 + min(index.ntotal, 32))
    found = []
    for score, uid in zip(scores.tolist(), ids.tolist()):
        if uid < 0 or uid >= unit.id or score < threshold:
            continue
        found.append((store.get_unit(unit.case_id, uid), score))
        if len(found) == limit:
            break
    return found


@dataclass
class LinkOutcome:
    link: Link
    neighbour: FTAUnit  # as updated


def key(unit: FTAUnit) -> str:
    return f"m{unit.id}"


def apply_updates(store: Store, unit: FTAUnit, neighbours: list[FTAUnit], reply: LinkingReply) -> list[LinkOutcome]:
    """Store the judged relations and neighbour updates in one transaction; relations judged
    unknown change nothing."""
    by_key = {key(n): n for n in neighbours}
    when = unit.time.event_time if unit.time.event_time != "unknown" else unit.time.dialogue_time
    outcomes = []
    seen: set[str] = set()
    with store.transaction():
        for update in reply.memory_updates:
            neighbour = by_key.get(update.memory_id)
            if neighbour is None or update.memory_id in seen:
                continue
            seen.add(update.memory_id)
            if update.relation == "unknown":
                continue  # a relation that cannot be confirmed changes nothing
            updated = store.set_unit_status(unit.case_id, neighbour.id, update.lifecycle_status,
                                            update.completeness, when)
            link = Link(case_id=unit.case_id, source=unit.id, target=neighbour.id, relation=update.relation,
                        confidence=update.relation_confidence, time=when)
            (link_id,) = store.add_links(unit.case_id, [link])
            outcomes.append(LinkOutcome(link.model_copy(update={"id": link_id}), updated))
    return outcomes


def render(unit: FTAUnit, neighbours: list[FTAUnit]) -> dict[str, str]:
    return {"new_unit": json.dumps(unit_brief(unit, key(unit)), ensure_ascii=False),
            "candidates": briefs_json(neighbours, [key(n) for n in neighbours])}
