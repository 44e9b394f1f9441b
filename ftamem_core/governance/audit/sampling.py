"""Seeded, stratified samples of units and linked pairs for a hand audit.

Units are stratified by case, origin (model, fused, split, copied, corrected: how the unit was
made) and content type, a stratum's draws spread over its sessions; linked pairs by case and
relation. Cases
get equal shares (the paper balanced its 100 units across the two benchmarks), a case's share
is spread over its strata in proportion to their sizes (largest remainder), and every stratum
gets one draw when the share allows. The draw depends only on the seed and on the stored memory
(rows are read in id order), so the same seed over the same memory gives the same sample.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ...storage.store import Store

# Recorded with each round, so that a changed sampler does not pass for the same draw.
# v1: units by session and content type; v2: by origin and content type; v3: v2 with each
# stratum's draws spread over its sessions (a store made before provenance has one origin).
SAMPLER = "strata-v3"


@dataclass(frozen=True)
class Draw:
    case_id: str
    kind: str  # "unit" or "pair"
    unit_id: int
    unit_version: int
    stratum: str
    other_id: int | None = None
    other_version: int | None = None
    link_id: int | None = None


def equal_shares(sizes: dict, n: int) -> dict:
    """``n`` split as evenly as the groups allow (none gets more than it holds; what a small group
    cannot take goes to the others), remainders to the groups first in sorted order."""
    share = {k: 0 for k in sizes}
    left = min(n, sum(sizes.values()))
    while left > 0:
        open_ = sorted(k for k in sizes if share[k] < sizes[k])
        each, extra = divmod(left, len(open_))
        for i, k in enumerate(open_):
            take = min(sizes[k] - share[k], each + (i < extra))
            share[k] += take
            left -= take
    return share


def proportional_shares(sizes: dict, n: int) -> dict:
    """``n`` spread over strata in proportion to their sizes (largest remainder, ties in sorted
    order); every non-empty stratum gets at least one when ``n`` reaches their number."""
    keys = sorted(k for k in sizes if sizes[k] > 0)
    total = sum(sizes[k] for k in keys)
    n = min(n, total)
    share = {k: 0 for k in sizes}
    if n == 0:
        return share
    floor_each = 1 if n >= len(keys) else 0
    for k in keys:
        share[k] = floor_each
    left = n - floor_each * len(keys)
    rest = {k: sizes[k] - share[k] for k in keys}
    rest_total = sum(rest.values())
    if left and rest_total:
        quotas = {k: left * rest[k] / rest_total for k in keys}
        for k in keys:
            share[k] += int(quotas[k])
        left -= sum(int(q) for q in quotas.values())
        by_remainder = sorted(keys, key=lambda k: (-(quotas[k] - int(quotas[k])), keys.index(k)))
        for k in by_remainder:
            if left == 0:
                break
            if share[k] < sizes[k]:
                share[k] += 1
                left -= 1
    return share


def draw(store: Store, case_ids: list[str], n_units: int, n_pairs: int, seed: int) -> list[Draw]:
    """The sample, in the order annotators will see it (shuffled, so strata do not come in runs)."""
    rng = random.Random(seed)
    cases = sorted(set(case_ids))
    unit_strata: dict[tuple, list] = {}
    pair_strata: dict[tuple, list] = {}
    for case_id in cases:
        sessions = {s.id: s.idx for s in store.sessions(case_id)}
        units = {u.id: u for u in store.units(case_id)}  # final units: what retrieval can show
        for uid in sorted(units):
            u = units[uid]
            key = (case_id, u.origin, u.fact.content_type)
            unit_strata.setdefault(key, []).append((sessions.get(u.evidence.session_id, -1), u))
        for link in sorted(store.links(case_id), key=lambda link: link.id):
            if link.source in units and link.target in units:
                pair_strata.setdefault((case_id, link.relation), []).append(
                    (link, units[link.source], units[link.target])
                )

    picked: list[Draw] = []
    for strata, n, make in ((unit_strata, n_units, _unit_draw), (pair_strata, n_pairs, _pair_draw)):
        per_case = equal_shares({c: sum(len(v) for k, v in strata.items() if k[0] == c) for c in cases}, n)
        for case_id in cases:
            mine = {k: len(v) for k, v in strata.items() if k[0] == case_id}
            for key, count in sorted(proportional_shares(mine, per_case[case_id]).items()):
                for member in (
                    _spread(rng, strata[key], count) if make is _unit_draw else rng.sample(strata[key], count)
                ):
                    picked.append(make(key, member))
    rng.shuffle(picked)
    return picked


def _spread(rng: random.Random, members: list[tuple], count: int) -> list[tuple]:
    """``count`` of a stratum's (session, unit) members, spread over their sessions in proportion."""
    by_session: dict[int, list] = {}
    for member in members:
        by_session.setdefault(member[0], []).append(member)
    shares = proportional_shares({s: len(m) for s, m in by_session.items()}, count)
    return [m for s in sorted(by_session) for m in rng.sample(by_session[s], shares[s])]


def _unit_draw(key: tuple, member) -> Draw:
    case_id, origin, content_type = key
    session, unit = member
    return Draw(case_id, "unit", unit.id, unit.version, f"{origin} · {content_type} · session {session + 1}")


def _pair_draw(key: tuple, member) -> Draw:
    link, source, target = member
    return Draw(
        key[0],
        "pair",
        source.id,
        source.version,
        key[1],
        other_id=target.id,
        other_version=target.version,
        link_id=link.id,
    )
