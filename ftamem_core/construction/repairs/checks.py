"""The small-model repairs behind one interface: what a build does to a model-written unit beyond
the paper, each step behind its setting and reported as a build event. The builder calls
``Repairs``; the steps are in ``grounding`` (is the text about its evidence) and ``speaker`` (who
said it). For a language
the rules do not serve, the builder turns them off (text/: ``REPAIRS_OFF``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ...config import LONG_SPAN_TURNS, Settings
from ...models import FTAUnit, Turn
from .. import build_events as ev
from ..extraction import Fragment, span_turns, verbatim_units
from .grounding import support
from .speaker import settled_speaker


@dataclass
class Repairs:
    settings: Settings
    speakers: list[str]  # the case's people (not an assistant)
    peers: bool  # a dialogue between people, no assistant
    progress: Callable[[object], None]

    def checked(self, unit: FTAUnit, turns: list[Turn], completes: FTAUnit | None = None) -> FTAUnit | None:
        """The grounding checks beyond the paper, each behind its setting; None: dropped."""
        if self.settings.extraction.ground_facts:
            span = span_turns(unit, turns)
            sources = [t.text for t in span] + ([completes.fact.text] if completes else [])
            share = support(unit.fact.text, sources, self.speakers)
            if share < self.support_needed(len(span)):
                self.progress(ev.Unsupported(fact=unit.fact.text, support=round(share, 2)))
                return None
        if self.settings.extraction.speaker_check:
            settled = settled_speaker(unit, turns, self.speakers)
            if settled is None:
                self.progress(ev.SpeakerUnresolved(fact=unit.fact.text))
                return None
            unit = settled
        return unit

    def support_needed(self, turns: int) -> float:
        """``fact_support``, or ``long_span_support`` for a fact over more than ``LONG_SPAN_TURNS``."""
        s = self.settings
        if turns > LONG_SPAN_TURNS:
            return max(s.extraction.fact_support, s.extraction.long_span_support)
        return s.extraction.fact_support

    def settle_speakers(
        self,
        case_id: str,
        units: list[FTAUnit],
        verbatim: list[FTAUnit],
        turns: list[Turn],
        stored: Callable[[], list[FTAUnit]] = list,
    ) -> tuple[list[FTAUnit], list[FTAUnit]]:
        """``settled_speaker`` over the case's turns; a unit no naming settles is dropped, and
        its turns that no other unit's fact carries, ``stored`` final ones too (a fused span
        reaches into fragments stored before; a partial it fused is replaced), are kept in their
        own words (``verbatim_fallback``)."""
        kept, earlier = [], None
        for unit in units:
            settled = settled_speaker(unit, turns, self.speakers)
            if settled is not None:
                kept.append(settled)
                continue
            self.progress(ev.SpeakerUnresolved(fact=unit.fact.text))
            if self.settings.extraction.verbatim_fallback:
                span = Fragment(case_id, unit.evidence.session_id, span_turns(unit, turns), unit.evidence.dialogue_time)
                have = {u.evidence.end for u in verbatim}
                earlier = stored() if earlier is None else earlier  # read once, only if a unit is dropped
                verbatim += [
                    v
                    for v in verbatim_units(
                        span,
                        [u for u in units if u is not unit] + earlier,
                        self.settings.extraction.coverage_min_words,
                        self.peers,
                    )
                    if v.evidence.end not in have
                ]
        return kept, verbatim
