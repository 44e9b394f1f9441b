"""Temporal-link maintenance: relate each newly stored unit to similar earlier units of its case.

Candidates come from the case's FAISS index (earlier final units only, top N above a similarity
threshold); when none passes there is no LLM call. As in the paper, one classification call
judges a new unit against its candidates. Non-unknown relations are stored directed new -> old;
each judged neighbour gets the lifecycle status and completeness the model gave, and its updated
time from the new unit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, create_model

from ..models import Completeness, Confidence, FTAUnit, LifecycleStatus, Link, Relation
from .representation import briefs_json
from ..storage.store import NotFound, Store


class UpdateOut(BaseModel):
    model_config = ConfigDict(extra="forbid")
    new_id: str
    memory_id: str
    relation: Relation
    lifecycle_status: LifecycleStatus
    completeness: Completeness
    relation_confidence: Confidence


class LinkingReply(BaseModel):
    model_config = ConfigDict(extra="forbid")
    memory_updates: list[UpdateOut]


def key(unit: FTAUnit) -> str:
    return f"m{unit.id}"


def reply_model(pairs: dict[int, list[FTAUnit]]) -> type[LinkingReply]:
    """``new_id`` may only name a new unit and ``memory_id`` one of the older units shown."""
    new = [f"m{i}" for i in pairs]
    old = list(dict.fromkeys(key(n) for found in pairs.values() for n in found))
    update = create_model(
        "UpdateOut",
        __base__=UpdateOut,
        new_id=(Literal[tuple(new)], ...),  # type: ignore[valid-type]
        memory_id=(Literal[tuple(old)], ...),
    )  # type: ignore[valid-type]
    total = sum(len(found) for found in pairs.values())
    return create_model(
        "LinkingReply", __base__=LinkingReply, memory_updates=(list[update], Field(..., max_length=total))
    )


def candidates(
    store: Store, unit: FTAUnit, vector: np.ndarray, limit: int, threshold: float
) -> list[tuple[FTAUnit, float]]:
    """Earlier final units of the same case most similar to ``unit``, best first, above ``threshold``
    (a partial unit is construction context, not a memory to relate to)."""
    if limit <= 0 or unit.id is None:
        return []
    index = store.index(unit.case_id)
    scores, ids = index.search(vector, limit + 1 + min(index.ntotal, 32))
    found = []
    for score, uid in zip(scores.tolist(), ids.tolist()):
        if uid < 0 or uid >= unit.id or score < threshold:
            continue
        try:
            neighbour = store.get_unit(unit.case_id, uid)
        except NotFound:  # deleted by hand since the search
            continue
        if neighbour.construction_status != "final":
            continue
        found.append((neighbour, score))
        if len(found) == limit:
            break
    return found


@dataclass
class LinkOutcome:
    link: Link
    neighbour: FTAUnit  # as updated


def apply_updates(
    store: Store,
    new: list[FTAUnit],
    pairs: dict[int, list[FTAUnit]],
    reply: LinkingReply,
) -> list[LinkOutcome]:
    """Store the judged relations and neighbour updates in one transaction. Only the pairs shown
    count, each once; a relation judged unknown changes nothing, and a suggested lifecycle or
    completeness of "unknown" keeps the neighbour's known one. A field a person has corrected is
    never changed by the model; a change the model makes is written to the history as its own.
    A unit deleted by hand while the build ran is skipped, not an error."""
    by_key = {key(u): u for u in new}
    shown = {(f"m{uid}", key(n)): n for uid, found in pairs.items() for n in found}
    outcomes = []
    seen: set[tuple[str, str]] = set()
    with store.transaction():
        for update in reply.memory_updates:
            pair = (update.new_id, update.memory_id)
            neighbour, unit = shown.get(pair), by_key.get(update.new_id)
            if neighbour is None or unit is None or pair in seen:
                continue
            seen.add(pair)
            if update.relation == "unknown":
                continue  # a relation that cannot be confirmed changes nothing
            when = unit.time.event_time if unit.time.event_time != "unknown" else unit.time.dialogue_time
            present = store.units_by_id(unit.case_id, [neighbour.id, unit.id])  # an earlier update counts
            if len(present) < 2:
                continue
            current = present[0]
            human = corrected_fields(store, unit.case_id, neighbour.id)
            lifecycle = (
                current.lifecycle_status
                if update.lifecycle_status == "unknown" or "lifecycle_status" in human
                else update.lifecycle_status
            )
            completeness = (
                current.completeness
                if update.completeness == "unknown" or "completeness" in human
                else update.completeness
            )
            updated = store.set_unit_status(unit.case_id, neighbour.id, lifecycle, completeness, when)
            for field, old, new_value in (
                ("lifecycle_status", current.lifecycle_status, lifecycle),
                ("completeness", current.completeness, completeness),
            ):
                if old != new_value:
                    store.add_history(
                        unit.case_id,
                        "unit",
                        neighbour.id,
                        "model_edit",
                        "linking",
                        f"m{unit.id} {update.relation} it",
                        field,
                        old,
                        new_value,
                    )
            link = Link(
                case_id=unit.case_id,
                source=unit.id,
                target=neighbour.id,
                relation=update.relation,
                confidence=update.relation_confidence,
                time=when,
            )
            (link_id,) = store.add_links(unit.case_id, [link])
            outcomes.append(LinkOutcome(link.model_copy(update={"id": link_id}), updated))
    return outcomes


def corrected_fields(store: Store, case_id: str, unit_id: int) -> set[str]:
    """The fields of a unit a person has edited (the history's edit rows)."""
    return store.edited_fields(case_id, unit_id)


def render(new: list[FTAUnit], pairs: dict[int, list[FTAUnit]]) -> dict[str, str]:
    older = list({n.id: n for found in pairs.values() for n in found}.values())
    return {
        "new_units": briefs_json(new, [key(u) for u in new]),
        "pairs": "\n".join(f"{key(u)}: {', '.join(key(n) for n in pairs[u.id])}" for u in new),
        "candidates": briefs_json(older, [key(n) for n in older]),
    }
