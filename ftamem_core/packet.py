"""The structured memory packet: primary units, linked neighbours, source spans and auxiliary
memory, kept apart (or flattened for the flat-context ablation).

Expansion adds up to B linked neighbours per primary unit: first the newer units that update,
contradict or follow up the primary one, then the rest; higher confidence and newer first. The
neighbours are de-duplicated by id, never repeat a primary unit, and every section is ordered by
time (the day it was said, then the turn).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .config import Ablations
from .models import FTAUnit, Link, SemanticEntry, SupportEntry, Turn
from .store import Store

# Lower sorts first: a newer unit that changes the primary's status is the most useful context.
_RELATION_RANK = {"updates": 0, "contradicts": 0, "followup_of": 0, "same_episode_as": 1, "supports": 2}
_CONFIDENCE_RANK = {"high": 0, "medium": 1, "low": 2, "unknown": 3}


@dataclass
class Neighbour:
    unit: FTAUnit
    via: int  # the primary unit it is linked to
    relation: str  # as read from the neighbour: "updates m12", "is updated by m15" ...


@dataclass
class MemoryPacket:
    primary: list[FTAUnit] = field(default_factory=list)
    neighbours: list[Neighbour] = field(default_factory=list)
    sources: dict[int, list[Turn]] = field(default_factory=dict)  # unit id -> its evidence turns
    semantic: list[SemanticEntry] = field(default_factory=list)
    support: list[SupportEntry] = field(default_factory=list)

    def unit_ids(self) -> list[int]:
        return [u.id for u in self.primary] + [n.unit.id for n in self.neighbours]


def _time_key(unit: FTAUnit) -> tuple:
    return (unit.time.dialogue_time or "", unit.evidence.start)


def expand(store: Store, case_id: str, primary_ids: list[int], per_unit: int) -> list[Neighbour]:
    """Up to ``per_unit`` linked neighbours of each primary unit (one query for all links)."""
    if per_unit <= 0 or not primary_ids:
        return []
    primary = set(primary_ids)
    options: dict[int, list[tuple[tuple, int, str]]] = {i: [] for i in primary_ids}
    for link in store.links_touching(case_id, primary_ids):
        for here, other, newer in ((link.target, link.source, True), (link.source, link.target, False)):
            if here in options and other not in primary:
                relation = f"{link.relation} m{here}" if newer else f"m{here} {link.relation} it"
                rank = (0 if newer else 1, _RELATION_RANK.get(link.relation, 3),
                        _CONFIDENCE_RANK.get(link.confidence, 3), -other)
                options[here].append((rank, other, relation))
    chosen: dict[int, tuple[int, str]] = {}
    for pid in primary_ids:
        taken = 0
        for _, other, relation in sorted(options[pid]):
            if taken == per_unit:
                break
            if other not in chosen:
                chosen[other] = (pid, relation)
                taken += 1
    units = store.units_by_id(case_id, list(chosen))
    neighbours = [Neighbour(u, chosen[u.id][0], chosen[u.id][1]) for u in units]
    return sorted(neighbours, key=lambda n: _time_key(n.unit))


def build_packet(store: Store, case_id: str, primary_ids: list[int], per_unit: int, ablations: Ablations,
                 auxiliary_limit: int) -> MemoryPacket:
    if ablations.question_only:
        return MemoryPacket()
    primary = sorted(store.units_by_id(case_id, primary_ids), key=_time_key)
    neighbours = [] if ablations.no_links else expand(store, case_id, primary_ids, per_unit)
    units = primary + [n.unit for n in neighbours]
    turns = store.turns_in_spans(case_id, [(u.evidence.start, u.evidence.end) for u in units])
    sources = {u.id: [t for t in turns if u.evidence.start <= t.idx <= u.evidence.end] for u in units}
    packet = MemoryPacket(primary, neighbours, sources)
    if not ablations.no_auxiliary and auxiliary_limit > 0:
        cited = set(packet.unit_ids())
        packet.semantic = [e for e in store.semantic(case_id) if cited & set(e.source_unit_ids)][:auxiliary_limit]
        packet.support = [e for e in store.support(case_id) if cited & set(e.source_unit_ids)][:auxiliary_limit]
    return packet


def render_unit(unit: FTAUnit, ablations: Ablations) -> str:
    if ablations.fact_only:
        return f"[m{unit.id}] {unit.fact.text}"
    parts = [f"type {unit.fact.content_type}"]
    if not ablations.no_time_fields:
        parts.append(f"said {unit.time.dialogue_time or 'unknown'}")
        if unit.time.event_time != "unknown":
            parts.append(f"happened {unit.time.event_time}"
                         + (f" ({unit.time.event_time_expression})" if unit.time.event_time_expression else ""))
        parts.append(f"{unit.time.time_orientation}, {unit.time.completion}, now {unit.lifecycle_status}")
    lines = [f"[m{unit.id}] {unit.fact.text}", f"    ({'; '.join(parts)})"]
    if unit.fact.participants:
        lines.append(f"    people: {', '.join(unit.fact.participants)}")
    if not ablations.no_affect_fields:
        affect = [f"{k}: {v}" for k, v in (("feeling", unit.affect.emotion_or_state),
                                            ("intention", unit.affect.intention_or_plan),
                                            ("relations", unit.affect.relation_cues)) if v != "unknown"]
        if affect:
            lines.append(f"    {'; '.join(affect)}")
    return "\n".join(lines)


def render_turn(turn: Turn) -> str:
    return f"  [{turn.idx}] {turn.timestamp or ''} {turn.speaker or turn.role}: {turn.text}"


def render(packet: MemoryPacket, ablations: Ablations) -> str:
    """The packet as the answer prompt shows it."""
    if ablations.question_only:
        return "(no memory)"
    if ablations.flat_context:
        units = sorted(packet.primary + [n.unit for n in packet.neighbours], key=_time_key)
        lines = []
        for u in units:
            lines.append(render_unit(u, ablations))
            lines += [render_turn(t) for t in packet.sources.get(u.id, [])]
        lines += [f"- {e.text}" for e in packet.semantic] + [f"- {e.strategy}: {e.outcome}. {e.text}" for e in packet.support]
        return "\n".join(lines) or "(nothing found)"
    out = ["## Primary units (evidence)"]
    out += [render_unit(u, ablations) for u in packet.primary] or ["(none found)"]
    if packet.neighbours:
        out.append("## Linked units (context)")
        out += [f"{render_unit(n.unit, ablations)}\n    (linked: {n.relation})" for n in packet.neighbours]
    spans = [(u, packet.sources.get(u.id, [])) for u in packet.primary + [n.unit for n in packet.neighbours]]
    if any(turns for _, turns in spans):
        out.append("## Source turns")
        for u, turns in spans:
            if turns:
                out.append(f"m{u.id}:")
                out += [render_turn(t) for t in turns]
    if packet.semantic or packet.support:
        out.append("## Notes about the person (background)")
        out += [f"- ({e.kind}) {e.text}" for e in packet.semantic]
        out += [f"- (support tried) {e.strategy}: {e.outcome}. {e.text}" for e in packet.support]
    return "\n".join(out)
