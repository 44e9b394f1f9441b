"""What a unit holds: anchors that share no word with the turns set unknown."""

from __future__ import annotations

from ...models import AffectAnchor, FTAUnit, Turn
from ..extraction import span_turns
from .grounding import anchored


def ground_anchors(unit: FTAUnit, turns: list[Turn], names: list[str]) -> FTAUnit:
    """Feeling, intention, relations and summary that share no word stem with the evidence turns
    (names aside) are not about them (small models copy the prompt's example): set unknown."""
    sources = [t.text for t in span_turns(unit, turns)]
    affect = {k: v if anchored(v, sources, names) else "unknown" for k, v in unit.affect.model_dump().items()}
    summary = unit.fact.summary if anchored(unit.fact.summary, sources, names) else ""
    return unit.model_copy(
        update={"affect": AffectAnchor(**affect), "fact": unit.fact.model_copy(update={"summary": summary})}
    )
