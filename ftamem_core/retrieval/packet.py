"""The structured memory packet: primary units, linked neighbours, source turns and auxiliary
memory, kept apart (or flattened for the flat-context ablation).

Expansion adds up to B linked neighbours per primary unit: first the newer units that update,
contradict or follow up the primary one, then the rest; higher confidence and newer first. The
neighbours are de-duplicated by id and never repeat a primary unit. Auxiliary memory (semantic
and support-experience entries) is chosen by its relevance to the query.

Rendering (beyond the paper: ``packet_token_budget``): each unit is one line with its evidence
pointer, time and feeling; a source turn is shown once, and only where it adds words the unit's
line does not have. Under a budget the packet is filled by priority: primary units by rank (a unit
whose line no longer fits is passed over for the shorter ones below it), each with its linked
units, then source turns of the units shown and notes while they fit, each counted on the whole
text it would make (headings and date lines included); what is shown is laid out by section and
time, the lines of one day under one date line ("### said 16 April 2023") rather than each line
repeating it. The rendering records which units and turns it showed.

Turn channel (beyond the paper: ``turn_channel``): the raw turns most similar to the question
compete with the primary units for the budget, merged by the one score both have, embedding
similarity (a unit's s_emb with the query, a turn's cosine with the question; units keep their R
order), and a turn is taken only when no unit shown so far points to it. A turn inside a kept
unit's span brings that unit in its place (the turn shown as its source where it adds words), so the
unit the evidence belongs to can be cited; a unit left out says why (``Rendered.left_out``). Small models leave evidence in
no unit or rank its unit low; the channel lets the packet hold that evidence word for word.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..config import Ablations
from ..construction.repairs.grounding import content_words
from ..models import FTAUnit, SemanticEntry, SupportEntry, Turn
from ..storage.store import Store
from ..construction.temporal import spoken

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
    primary: list[FTAUnit] = field(default_factory=list)  # by rank, best first
    neighbours: list[Neighbour] = field(default_factory=list)
    sources: dict[int, list[Turn]] = field(default_factory=dict)  # unit id -> its evidence turns
    semantic: list[SemanticEntry] = field(default_factory=list)  # most relevant first
    support: list[SupportEntry] = field(default_factory=list)
    scores: dict[int, float] = field(default_factory=dict)  # primary unit id -> s_emb (merging with the channel)
    channel: list[tuple[float, Turn]] = field(default_factory=list)  # turn channel: raw turns, best first

    def unit_ids(self) -> list[int]:
        return [u.id for u in self.primary] + [n.unit.id for n in self.neighbours]


@dataclass
class Rendered:
    """The packet as the answer prompt shows it, and what of it was shown."""

    text: str
    unit_ids: list[int] = field(default_factory=list)  # units shown (their evidence pointers)
    turn_ids: list[int] = field(default_factory=list)  # turns shown word for word (sources and channel)
    channel_ids: list[int] = field(default_factory=list)  # of those, the turn channel's
    tokens: int = 0  # as counted while filling the budget
    left_out: dict[int, str] = field(default_factory=dict)  # unit id -> why it is not shown (BUDGET, COVERED)
    unit_lines: list[str] = field(default_factory=list)  # the lines of the units shown, without any turn

    def pointed_turns(self, packet: MemoryPacket) -> set[int]:
        """Turn indices inside the evidence spans of the units shown."""
        units = {u.id: u for u in packet.primary + [n.unit for n in packet.neighbours]}
        return {i for uid in self.unit_ids for i in range(units[uid].evidence.start, units[uid].evidence.end + 1)}


def _time_key(unit: FTAUnit) -> tuple:
    return (unit.time.dialogue_time or "", unit.evidence.start)


def expand(
    store: Store, case_id: str, primary_ids: list[int], per_unit: int, archived: bool = False
) -> list[Neighbour]:
    """Up to ``per_unit`` linked neighbours of each primary unit (one query for all links); an
    archived neighbour only with ``archived``."""
    if per_unit <= 0 or not primary_ids:
        return []
    primary = set(primary_ids)
    options: dict[int, list[tuple[tuple, int, str]]] = {i: [] for i in primary_ids}
    links = store.links_touching(case_id, primary_ids)
    # A unit a counselor disputes stays for review but never reaches a packet.
    disputed = {
        r["id"]
        for r in store.unit_review_states(case_id, list({i for l in links for i in (l.source, l.target)}))
        if r["disputed"] or (r["lifecycle_status"] == "archived" and not archived)
    }
    for link in links:
        for here, other, newer in ((link.target, link.source, True), (link.source, link.target, False)):
            if here in options and other not in primary and other not in disputed:
                relation = f"{link.relation} m{here}" if newer else f"m{here} {link.relation} it"
                rank = (
                    0 if newer else 1,
                    _RELATION_RANK.get(link.relation, 3),
                    _CONFIDENCE_RANK.get(link.confidence, 3),
                    -other,
                )
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


def build_packet(
    store: Store,
    case_id: str,
    primary_ids: list[int],
    per_unit: int,
    ablations: Ablations,
    auxiliary_limit: int,
    relevance: Callable[[list[str]], np.ndarray] | None = None,
    floor: float = 0.0,
    scores: dict[int, float] | None = None,
    channel: list[tuple[float, Turn]] | None = None,
    archived: bool = False,
) -> MemoryPacket:
    """``primary_ids`` best first. ``relevance`` scores texts against the query (cosine); the
    auxiliary entries scoring at least ``floor`` are kept, most relevant first. Without it the
    entries citing packet units are kept in the order their cited units rank. ``scores`` (s_emb
    of the primary units) and ``channel`` (``channel_turns``) turn the turn channel on."""
    if ablations.question_only:
        return MemoryPacket()
    primary = store.units_by_id(case_id, primary_ids)
    fact_only = ablations.fact_only
    neighbours = [] if ablations.no_links or fact_only else expand(store, case_id, primary_ids, per_unit, archived)
    units = primary + [n.unit for n in neighbours]
    sources: dict[int, list[Turn]] = {}
    if not fact_only:
        turns = store.turns_in_spans(case_id, [(u.evidence.start, u.evidence.end) for u in units])
        sources = {u.id: [t for t in turns if u.evidence.start <= t.idx <= u.evidence.end] for u in units}
    packet = MemoryPacket(primary, neighbours, sources)
    if channel and not fact_only:
        packet.scores, packet.channel = dict(scores or {}), list(channel)
    if not (ablations.no_auxiliary or fact_only) and auxiliary_limit > 0 and units:
        semantic = store.semantic(case_id)
        packet.semantic = _relevant(
            semantic, [e.text for e in semantic], packet.unit_ids(), relevance, floor, auxiliary_limit
        )
        support = store.support(case_id)
        packet.support = _relevant(
            support,
            [f"{e.strategy}: {e.outcome}. {e.text}" for e in support],
            packet.unit_ids(),
            relevance,
            floor,
            auxiliary_limit,
        )
    return packet


def turn_lines(turns: list[Turn]) -> list[str]:
    """Turns as they are embedded for the turn channel and for turn-level RAG."""
    return [render_turn(t, Ablations()).strip() for t in turns]


def channel_turns(
    turns: list[Turn], vectors: np.ndarray, query_vector: np.ndarray, limit: int, floor: float
) -> list[tuple[float, Turn]]:
    """The turn channel's candidates: the ``limit`` turns most similar to the query (cosine of
    ``turn_lines`` vectors), at least ``floor``, best first."""
    if limit <= 0 or not turns:
        return []
    sims = np.asarray(vectors @ query_vector, dtype=np.float64)
    order = np.argsort(-sims, kind="stable")[:limit]
    return [(float(sims[i]), turns[i]) for i in order if sims[i] >= floor]


def _merged(packet: MemoryPacket) -> list[tuple[str, object]]:
    """Primary units in rank order with the channel's turns placed where their cosine beats the
    next unit's s_emb (a unit without a score, or a tie, goes first)."""
    out: list[tuple[str, object]] = []
    turns = iter(packet.channel)
    turn = next(turns, None)
    for u in packet.primary:
        r = packet.scores.get(u.id, float("inf"))
        while turn is not None and turn[0] > r:
            out.append(("turn", turn[1]))
            turn = next(turns, None)
        out.append(("unit", u))
    while turn is not None:
        out.append(("turn", turn[1]))
        turn = next(turns, None)
    return out


def _relevant(entries: list, texts: list[str], ranked_ids: list[int], relevance, floor: float, limit: int) -> list:
    if not entries:
        return []
    if relevance is not None:
        scores = np.asarray(relevance(texts), dtype=np.float64)
        order = np.argsort(-scores, kind="stable")
        return [entries[i] for i in order if scores[i] >= floor][:limit]
    rank = {uid: n for n, uid in enumerate(ranked_ids)}
    cited = [
        (min(rank[i] for i in e.source_unit_ids if i in rank), n)
        for n, e in enumerate(entries)
        if rank.keys() & set(e.source_unit_ids)
    ]
    return [entries[n] for _, n in sorted(cited)][:limit]


def render_unit(unit: FTAUnit, ablations: Ablations, said: bool = True) -> str:
    """One line: fact, time, state, feeling, evidence pointer (each only where the ablations allow);
    without ``said``, the day it was said is left to the packet's date line."""
    flag = " (partial: underspecified)" if unit.construction_status == "partial" else ""
    if ablations.fact_only:
        return f"[m{unit.id}] {unit.fact.text}{flag}"
    parts = [unit.fact.content_type.replace("_", " ")]
    t = unit.time
    if not ablations.no_time_fields:
        if t.dialogue_time and said:
            parts.append(f"said {spoken(t.dialogue_time)}")
        if t.event_time != "unknown":
            parts.append(
                f"happened {spoken(t.event_time)}"
                + (f" ({t.event_time_expression})" if t.event_time_expression else "")
            )
        state = ", ".join(x for x in (t.time_orientation, t.completion) if x != "unknown")
        if unit.lifecycle_status != "unknown":
            state = ", ".join(x for x in (state, f"now {unit.lifecycle_status}") if x)
        if state:
            parts.append(state)
    if not ablations.no_affect_fields:
        parts += [
            f"{k}: {v}"
            for k, v in (
                ("feeling", unit.affect.emotion_or_state),
                ("intention", unit.affect.intention_or_plan),
                ("relations", unit.affect.relation_cues),
            )
            if v != "unknown"
        ]
    span = (
        f"{unit.evidence.start}"
        if unit.evidence.start == unit.evidence.end
        else f"{unit.evidence.start}-{unit.evidence.end}"
    )
    parts.append(f"turns {span}")
    return f"[m{unit.id}] {unit.fact.text}{flag} ({'; '.join(parts)})"


def render_turn(turn: Turn, ablations: Ablations, dated: bool = True) -> str:
    when = "" if ablations.no_time_fields or not turn.timestamp or not dated else f"({spoken(turn.timestamp)}) "
    return f"  [{turn.idx}] {when}{turn.speaker or turn.role}: {turn.text}"


def _adds_words(turn: Turn, line: str) -> bool:
    return bool(content_words(turn.text) - content_words(line))


def _adds_words_to(fact: str, turns: list[Turn]) -> bool:
    return bool(content_words(fact) - content_words(" ".join(f"{t.speaker or ''} {t.text}" for t in turns)))


# Why a unit of the packet is not shown (``Rendered.left_out``).
BUDGET = "budget"  # the packet's token budget was full
COVERED = "covered"  # its turns are shown word for word and its line adds no word to them

# What each section is, the answer prompt says once.
HEADINGS = {
    "primary": "## Primary units",
    "linked": "## Linked units",
    "turns": "## Source turns",
    "channel": "## Other turns",
    "notes": "## Notes",
}


def approx_tokens(text: str) -> int:
    return (len(text) + 3) // 4


def render(
    packet: MemoryPacket, ablations: Ablations, budget: int = 0, count: Callable[[str], int] = approx_tokens
) -> Rendered:
    """The packet as the answer prompt shows it, within ``budget`` tokens (0: no limit)."""
    if ablations.question_only:
        return Rendered("(no memory)")
    # Within a section, the lines said on one day sit under one date line instead of each
    # carrying it (not in the flat ablation, nor where time or all but the fact is ablated).
    dated = not (ablations.flat_context or ablations.no_time_fields or ablations.fact_only)
    shown_primary: list[FTAUnit] = []
    shown_neighbours: list[Neighbour] = []
    lines: dict[int, str] = {}
    turns: dict[int, Turn] = {}
    channel: dict[int, Turn] = {}
    notes: list[str] = []

    def layout() -> str:
        return _layout(shown_primary, shown_neighbours, lines, packet.sources, turns, channel, notes, ablations, dated)

    def fits(add: Callable[[], None], undo: Callable[[], None]) -> bool:
        """Whether the packet with ``add`` done still fits the budget, counted on its whole text
        (headings and date lines included); if not, ``undo``."""
        add()
        if budget and count(layout()) > budget:
            undo()
            return False
        return True

    pointed: set[int] = set()
    linked: dict[int, list[Neighbour]] = {}
    for n in packet.neighbours:
        linked.setdefault(n.via, []).append(n)
    owner: dict[int, FTAUnit] = {}  # a turn -> the best-ranked primary unit whose span holds it
    for u in packet.primary:
        for i in range(u.evidence.start, u.evidence.end + 1):
            owner.setdefault(i, u)
    left_out: dict[int, str] = {}

    def show(unit: FTAUnit) -> bool:
        """The unit's line and its linked neighbours, if they fit; else why not, in ``left_out``."""
        span = set(range(unit.evidence.start, unit.evidence.end + 1))
        if span <= channel.keys() and not _adds_words_to(unit.fact.text, [channel[i] for i in span]):
            left_out[unit.id] = COVERED  # its turns are shown word for word already and its line adds nothing
            return False
        lines[unit.id] = render_unit(unit, ablations, said=not dated)
        if not fits(lambda: shown_primary.append(unit), shown_primary.pop):
            del lines[unit.id]
            left_out[unit.id] = BUDGET
            return False
        left_out.pop(unit.id, None)
        pointed.update(span)
        # A unit's linked neighbours (its later updates, contradictions, follow-ups) come with
        # it, before lower-ranked units: else a full budget leaves the top units without them.
        for n in linked.get(unit.id, []):
            if n.unit.id in lines:
                continue
            lines[n.unit.id] = f"{render_unit(n.unit, ablations, said=not dated)} (linked: {n.relation})"
            if fits(lambda: shown_neighbours.append(n), shown_neighbours.pop):
                pointed.update(range(n.unit.evidence.start, n.unit.evidence.end + 1))
                left_out.pop(n.unit.id, None)
            else:
                del lines[n.unit.id]
                left_out.setdefault(n.unit.id, BUDGET)
        return True

    # By rank; an item that does not fit is passed over, so a long model-written unit does not
    # keep the shorter units and turns below it out of the budget left.
    for kind, item in _merged(packet):
        if kind == "unit":
            if item.id not in lines:
                show(item)
        elif item.idx not in pointed:
            # A channel turn inside a kept unit's span brings the unit, with the turn as its
            # anchor: shown alone, the turn would keep out the unit the answer should cite.
            unit = owner.get(item.idx)
            if unit is not None and unit.id not in left_out and show(unit):
                if _adds_words(item, lines[unit.id]):
                    fits(lambda: turns.__setitem__(item.idx, item), lambda: turns.pop(item.idx))
            else:
                fits(lambda: channel.__setitem__(item.idx, item), lambda: channel.pop(item.idx))
    for u in shown_primary + [n.unit for n in shown_neighbours]:
        for t in packet.sources.get(u.id, []):
            if t.idx not in turns and t.idx not in channel and _adds_words(t, lines[u.id]):
                fits(lambda: turns.__setitem__(t.idx, t), lambda: turns.pop(t.idx))
    for note in [f"- ({e.kind}) {e.text}" for e in packet.semantic] + [
        f"- (support tried) {e.strategy}: {e.outcome}. {e.text}" for e in packet.support
    ]:
        fits(lambda: notes.append(note), notes.pop)
    text = layout()
    shown_units = shown_primary + [n.unit for n in shown_neighbours]
    return Rendered(
        text,
        [u.id for u in shown_units],
        sorted(turns.keys() | channel.keys()),
        sorted(channel),
        count(text),
        left_out,
        [lines[u.id] for u in shown_units],
    )


def _by_date(items: list[tuple[str | None, str]]) -> list[str]:
    """Lines in time order with a date line ("### said 16 April 2023") wherever the day changes."""
    out, last = [], ""
    for when, line in items:
        day = spoken(when)
        if day != last:
            out.append(f"### said {day}" if day else "### date unknown")
            last = day
        out.append(line)
    return out


def _layout(
    primary: list[FTAUnit],
    neighbours: list[Neighbour],
    lines: dict[int, str],
    sources: dict[int, list[Turn]],
    turns: dict[int, Turn],
    channel: dict[int, Turn],
    notes: list[str],
    ablations: Ablations,
    dated: bool,
) -> str:
    def turn_block(shown: dict[int, Turn]) -> list[str]:
        ordered = [shown[i] for i in sorted(shown)]
        if not dated:
            return [render_turn(t, ablations) for t in ordered]
        return _by_date([(t.timestamp, render_turn(t, ablations, dated=False)) for t in ordered])

    def unit_block(units: list[FTAUnit]) -> list[str]:
        ordered = sorted(units, key=_time_key)
        if not dated:
            return [lines[u.id] for u in ordered]
        return _by_date([(u.time.dialogue_time, lines[u.id]) for u in ordered])

    if ablations.flat_context:
        out = []
        for u in sorted(primary + [n.unit for n in neighbours], key=_time_key):
            out.append(lines[u.id])
            out += [render_turn(t, ablations) for t in sources.get(u.id, []) if t.idx in turns]
        out += [render_turn(channel[i], ablations) for i in sorted(channel)]
        return "\n".join(out + notes) or "(nothing found)"
    out = []
    for heading, block in (
        ("primary", unit_block(primary)),
        ("linked", unit_block([n.unit for n in neighbours])),
        ("turns", turn_block(turns)),
        ("channel", turn_block(channel)),
        ("notes", notes),
    ):
        if block:
            out += [HEADINGS[heading]] + block
    # turn-level RAG packs turns alone: an empty unit section is said only when nothing was found
    return "\n".join(out or [HEADINGS["primary"], "(none found)"])
