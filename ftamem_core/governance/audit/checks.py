"""What the machine can check about a sampled unit without a model, shown beside the human
scores as their own columns (they flag items for the annotator; they never replace a score).
They read words with the evaluation's own rule (``evaluation.content``), not with the grounding
helpers construction repairs units with, so a repaired unit does not pass by construction.

Each check is True (passes), False (fails) or None (does not apply, e.g. no session date). The
checks that read words read English ones: for a case in another language they do not apply.
"""

from __future__ import annotations

import re

from ...evaluation.content import content_stems
from ...models import FTAUnit, Turn
from ...construction.temporal import session_date, time_range

CHECKS = {
    "span_in_session": "every evidence turn exists and belongs to the unit's session",
    "fact_in_evidence": "the fact shares a content word with its evidence turns (names aside)",
    "time_not_after_session": "a past event's time is on or before the session's date",
    "subject_in_evidence": "the fact names a speaker of its evidence turns (or lists one as participant)",
}


def unit_checks(
    unit: FTAUnit, turns: dict[int, Turn], session_time: str | None, speakers: list[str], english: bool = True
) -> dict:
    span = [turns.get(i) for i in range(unit.evidence.start, unit.evidence.end + 1)]
    present = [t for t in span if t is not None]
    in_session = (
        bool(span)
        and len(present) == len(span)
        and all(unit.evidence.session_id is None or t.session_id == unit.evidence.session_id for t in present)
    )
    names = content_stems(" ".join(speakers))
    fact_ok = (
        bool((content_stems(unit.fact.text) - names) & content_stems(" ".join(t.text for t in present)))
        if present
        else False
    )

    time_ok = None
    when, said = time_range(unit.time.event_time), session_date(session_time)
    if unit.time.time_orientation == "past" and when is not None and said is not None:
        time_ok = when[0] <= said.toordinal()

    evidence_speakers = {t.speaker for t in present if t.speaker}
    subject_ok = None
    if evidence_speakers:
        named = {
            s
            for s in evidence_speakers
            if any(re.search(rf"\b{re.escape(part)}\b", unit.fact.text, re.I) for part in s.split())
        }
        subject_ok = bool(named or evidence_speakers & set(unit.fact.participants))
    if not english:
        fact_ok = subject_ok = None
    return {
        "span_in_session": in_session,
        "fact_in_evidence": fact_ok,
        "time_not_after_session": time_ok,
        "subject_in_evidence": subject_ok,
    }
