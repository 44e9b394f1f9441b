"""Memories built without a model, to read every retrieval figure against.

- ``null``: one information-free unit per block of ``NULL_BLOCK`` turns of a session ("A and B
  talked."), spanning the block. A figure it scores well on measures pointers, not content.
- ``verbatim``: the verbatim fallback's copies of the turns alone (``extraction.verbatim_units``
  over whole sessions, no model call): what retrieval over the turns themselves, in the units'
  shape, achieves. A model-built memory should beat it.

Both replace the case's memory in the given store; retrieval then runs as for FTA-Mem.
"""

from __future__ import annotations

from ..config import Settings
from ..construction.extraction import Fragment, between_peers, verbatim_units
from ..models import Evidence, FactAnchor, FTAUnit, TimeAnchor
from ..construction.representation import retrieval_text
from ..storage.store import Store

SANITY_MEMORIES = ("null", "verbatim")
NULL_BLOCK = 12


def _null_units(case_id: str, session, turns: list) -> list[FTAUnit]:
    out = []
    for i in range(0, len(turns), NULL_BLOCK):
        block = turns[i : i + NULL_BLOCK]
        people = sorted({t.speaker or t.role for t in block})
        who = " and ".join(people) if len(people) < 3 else ", ".join(people[:-1]) + f" and {people[-1]}"
        out.append(
            FTAUnit(
                case_id=case_id,
                fact=FactAnchor(text=f"{who} talked.", participants=people),
                origin="unknown",
                time=TimeAnchor(dialogue_time=session.time),
                evidence=Evidence(
                    session_id=session.id, start=block[0].idx, end=block[-1].idx, dialogue_time=session.time
                ),
            )
        )
    return out


def fill(store: Store, case_id: str, memory: str, embedder, settings: Settings) -> int:
    """Replace the case's memory by the ``memory`` sanity memory; the number of units stored."""
    if memory not in SANITY_MEMORIES:
        raise ValueError(f"unknown sanity memory {memory!r} (one of {', '.join(SANITY_MEMORIES)})")
    store.clear_case_memory(case_id)
    units: list[FTAUnit] = []
    peers = between_peers(store.turns(case_id))
    for session in store.sessions(case_id):
        turns = store.turns(case_id, session_id=session.id)
        if not turns:
            continue
        if memory == "null":
            units += _null_units(case_id, session, turns)
        else:
            fragment = Fragment(case_id, session.id, turns, session.time)
            units += verbatim_units(fragment, [], settings.extraction.coverage_min_words, peers=peers)
    if units:
        store.add_units(case_id, units, embedder.encode([retrieval_text(u) for u in units]))
    return len(units)
