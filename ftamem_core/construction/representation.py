"""How a unit is written out: its structured retrieval text rho(m), embedded when the unit is
stored or edited, and the compact JSON the linking and longitudinal prompts see."""

from __future__ import annotations

import json

from ..models import FTAUnit


def _known(value: str | None) -> bool:
    return bool(value) and value.strip().lower() not in ("unknown", "none", "")


def retrieval_text(unit: FTAUnit) -> str:
    """rho(m): fact, time and affect anchors plus evidence metadata, one labelled line each."""
    f, t, a = unit.fact, unit.time, unit.affect
    lines = [f"fact: {f.text}"]
    if _known(f.summary):
        lines.append(f"summary: {f.summary}")
    lines.append(f"type: {f.content_type.replace('_', ' ')}")
    if f.participants:
        lines.append(f"participants: {', '.join(f.participants)}")
    when = [x for x in (t.event_time, t.event_time_expression) if _known(x)]
    if when:
        lines.append(f"event time: {' / '.join(dict.fromkeys(when))}")
    if t.time_orientation != "unknown":
        lines.append(f"orientation: {t.time_orientation}")
    if t.dialogue_time:
        lines.append(f"said on: {t.dialogue_time}")
    for label, value in (
        ("feeling", a.emotion_or_state),
        ("intention", a.intention_or_plan),
        ("relations", a.relation_cues),
    ):
        if _known(value):
            lines.append(f"{label}: {value}")
    return "\n".join(lines)


def unit_brief(unit: FTAUnit, key: str, said_on: str | None = None) -> dict:
    """A unit as a prompt shows it, under the id ``key`` the model must answer with; its
    ``said_on`` is left out when it is ``said_on``, the date the prompt already gives once."""
    data = {
        "memory_id": key,
        "text": unit.fact.text,
        "summary": unit.fact.summary,
        "content_type": unit.fact.content_type,
        "participants": unit.fact.participants,
        "event_time": unit.time.event_time,
        "said_on": unit.time.dialogue_time,
        "time_orientation": unit.time.time_orientation,
        "status": unit.time.completion,
        "emotion_or_state": unit.affect.emotion_or_state,
        "intention_or_plan": unit.affect.intention_or_plan,
    }
    if said_on and data["said_on"] == said_on:
        del data["said_on"]
    return {k: v for k, v in data.items() if v not in ("", [], None, "unknown")}


def briefs_json(units: list[FTAUnit], keys: list[str], said_on: str | None = None) -> str:
    if not units:
        return "(none)"
    return "\n".join(json.dumps(unit_brief(u, k, said_on), ensure_ascii=False) for u, k in zip(units, keys))
