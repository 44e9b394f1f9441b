"""Longitudinal memory, updated after each session: the user semantic memory U (people,
relationships, ongoing situations, preferences) and the support-experience memory H (strategies
tried and how they landed). Every entry cites the units it came from.

U_i = Update_U(U_{i-1}, M_i) and H_i = Update_H(H_{i-1}, M_i^sup) are made in one call: the model
sees the existing entries and the session's units and returns new entries or revisions
(``replaces`` an existing entry's key). An entry that shares no content word with the units it
cites is dropped (``grounding``: the 0.5B copied the prompt's worked example).
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from .repairs.grounding import shares_content
from ..models import FTAUnit, SemanticEntry, SemanticKind, Statement, SupportEntry, utcnow
from .representation import briefs_json

Outcome = Literal["helped", "did_not_help", "mixed", "not_tried_yet", "unknown"]


class SemanticOut(BaseModel):
    model_config = ConfigDict(extra="forbid")
    replaces: str
    kind: SemanticKind
    text: Statement
    source_unit_ids: list[str]


class SupportOut(BaseModel):
    model_config = ConfigDict(extra="forbid")
    replaces: str
    strategy: Statement
    outcome: Outcome
    text: str
    source_unit_ids: list[str]


class LongitudinalReply(BaseModel):
    model_config = ConfigDict(extra="forbid")
    semantic: list[SemanticOut]
    support: list[SupportOut]


def reply_model(unit_keys: list[str], semantic_keys: list[str], support_keys: list[str]) -> type[LongitudinalReply]:
    units = Literal[tuple(unit_keys)]  # type: ignore[valid-type]
    sources = (list[units], Field(..., max_length=12))
    sem = create_model(
        "SemanticOut",
        __base__=SemanticOut,
        replaces=(Literal[tuple(["none", *semantic_keys])], ...),
        source_unit_ids=sources,
    )
    sup = create_model(
        "SupportOut",
        __base__=SupportOut,
        replaces=(Literal[tuple(["none", *support_keys])], ...),
        source_unit_ids=sources,
    )
    # Bounded lists: a small model otherwise loops until it runs out of tokens (seen with 0.5B).
    return create_model(
        "LongitudinalReply",
        __base__=LongitudinalReply,
        semantic=(list[sem], Field(..., max_length=8)),
        support=(list[sup], Field(..., max_length=6)),
    )


def unit_key(unit: FTAUnit) -> str:
    return f"m{unit.id}"


def render(
    person: str,
    session_time: str | None,
    units: list[FTAUnit],
    semantic: list[SemanticEntry],
    support: list[SupportEntry],
) -> dict[str, str]:
    existing = [json.dumps({"id": f"s{e.id}", "kind": e.kind, "text": e.text}, ensure_ascii=False) for e in semantic]
    existing += [
        json.dumps({"id": f"h{e.id}", "strategy": e.strategy, "outcome": e.outcome, "text": e.text}, ensure_ascii=False)
        for e in support
    ]
    # Every unit of the session was said on session_time, which the prompt gives once.
    return {
        "person": person,
        "session_time": session_time or "unknown",
        "existing": "\n".join(existing) or "(none)",
        "units": briefs_json(units, [unit_key(u) for u in units], session_time),
    }


def _merge(items: list, existing: list, prefix: str, same, make) -> list:
    """Revisions keep the revised entry's id and merge its sources; an item equal to an existing
    entry (``same``) revises it; anything else is new (id None)."""
    by_key = {f"{prefix}{e.id}": e for e in existing}
    out: dict[str, object] = {}
    for item in items:
        # A repeat, of an existing entry or of one earlier in this reply, revises it.
        old = by_key.get(item.replaces) or next((e for e in [*existing, *out.values()] if same(e, item)), None)
        key = next((k for k, v in out.items() if v is old), None) or (f"{prefix}{old.id}" if old else f"new{len(out)}")
        base = out.get(key, old)
        sources = list(
            dict.fromkeys((base.source_unit_ids if base else []) + [int(k[1:]) for k in item.source_unit_ids])
        )
        out[key] = make(item, old.id if old else None, sources)
    return list(out.values())


def _same_text(a: str, b: str) -> bool:
    return a.strip().lower() == b.strip().lower()


def _grounded(text: str, keys: list[str], units: dict[str, FTAUnit], names: list[str]) -> bool:
    cited = [units[k] for k in keys if k in units]
    sources = [
        " ".join(
            (u.fact.text, u.fact.summary, u.affect.emotion_or_state, u.affect.intention_or_plan, u.affect.relation_cues)
        )
        for u in cited
    ]
    return shares_content(text, sources, [*names, *(p for u in cited for p in u.fact.participants)])


def apply(
    reply: LongitudinalReply,
    case_id: str,
    semantic: list[SemanticEntry],
    support: list[SupportEntry],
    units: list[FTAUnit],
    names: list[str] = (),
) -> tuple[list[SemanticEntry], list[SupportEntry]]:
    """The entries to write: revised ones keep their id, new ones have none. ``units`` are the
    session's units the reply may cite; an entry that shares no word with the units it cites,
    beyond ``names`` (the session's speakers) and the units' participants, is left out."""
    now = utcnow()
    by_key = {unit_key(u): u for u in units}
    semantic_items = [
        i for i in reply.semantic if i.text.strip() and _grounded(i.text, i.source_unit_ids, by_key, names)
    ]
    support_items = [
        i
        for i in reply.support
        if i.strategy.strip() and _grounded(f"{i.strategy} {i.text}", i.source_unit_ids, by_key, names)
    ]
    sem = _merge(
        semantic_items,
        semantic,
        "s",
        lambda e, i: _same_text(e.text, i.text),
        lambda i, id_, src: SemanticEntry(
            id=id_, case_id=case_id, kind=i.kind, text=i.text.strip(), source_unit_ids=src, updated_at=now
        ),
    )
    sup = _merge(
        support_items,
        support,
        "h",
        lambda e, i: _same_text(e.strategy, i.strategy),
        lambda i, id_, src: SupportEntry(
            id=id_,
            case_id=case_id,
            strategy=i.strategy.strip(),
            outcome=i.outcome,
            text=i.text.strip(),
            source_unit_ids=src,
            updated_at=now,
        ),
    )
    return sem, sup
