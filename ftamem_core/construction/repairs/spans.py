"""What a unit holds: a fact told in several sentences split into one unit each, and anchors
that share no word with the turns set unknown."""

from __future__ import annotations

import re

from ...models import AffectAnchor, FTAUnit, Turn
from ..extraction import span_turns
from ...text.english_sentences import sentences
from .grounding import anchored, carrying_turns, normalised
from .speaker import speakers_named


_FINISHED = re.compile(r"[.!?…\"')\]]$")
# English: a sentence opening with a pronoun tells of someone or something named before it
# ("Daniel's sister Priya lives in Leeds. She offered to take the weekend calls ...").
_POINTS_BACK = re.compile(r"(?:he|she|they|it)\b", re.IGNORECASE)


def split_fact(unit: FTAUnit, turns: list[Turn], names: list[str]) -> list[FTAUnit]:
    """A model-written fact told in several sentences that carry different turns, as one unit per
    sentence (setting ``split_facts``; the paper's rule: one event, state or plan per unit). The
    1.5B tells a LoCoMo fragment's ten turns in one fact of six sentences ("Audrey adopted Pixie
    ... Audrey said Pepper was adjusting well ..."); each sentence alone is found by its own
    question and checked against its own turns. A sentence that carries no turn, only turns the
    group of sentences before it carries, names no speaker or opens with a subject pronoun
    continues that group ("It was so powerful.", "She offered to take the calls"); a repeated
    sentence, and an unfinished last one (the model stopped mid-clause), go. Each piece keeps the
    unit's span; the time stays on the pieces that say it, or on all when none does."""
    parts = sentences(unit.fact.text)
    if len(parts) > 1 and not _FINISHED.search(parts[-1]):
        parts = parts[:-1]
    span = span_turns(unit, turns)
    groups: list[list[str]] = []
    carried: set[int] = set()  # the turns the current group carries
    seen: set[str] = set()
    for part in parts:
        key = normalised(part)
        if key in seen:
            continue
        seen.add(key)
        mine = {t.idx for t in carrying_turns(part, span, names)}
        if groups and (not mine or mine <= carried or not speakers_named(part, names) or _POINTS_BACK.match(part)):
            groups[-1].append(part)
            carried |= mine
        else:
            groups.append([part])
            carried = mine
    texts = [" ".join(g) for g in groups]
    if len(texts) < 2:  # nothing to split; repeated or unfinished sentences still go
        if not texts or texts[0] == unit.fact.text:
            return [unit]
        return [unit.model_copy(update={"fact": unit.fact.model_copy(update={"text": texts[0]})})]
    said = unit.time.event_time_expression.strip().lower()
    timed = [t for t in texts if said and said in t.lower()] or texts
    pieces = []
    for text in texts:
        fact = unit.fact.model_copy(
            update={"text": text, "participants": speakers_named(text, names) or unit.fact.participants}
        )
        time = (
            unit.time
            if text in timed
            else unit.time.model_copy(update={"event_time": "unknown", "event_time_expression": ""})
        )
        piece = unit.model_copy(update={"fact": fact, "time": time, "origin": "split"})
        pieces.append(piece)
    return pieces


def ground_anchors(unit: FTAUnit, turns: list[Turn], names: list[str]) -> FTAUnit:
    """Feeling, intention, relations and summary that share no word stem with the evidence turns
    (names aside) are not about them (small models copy the prompt's example): set unknown."""
    sources = [t.text for t in span_turns(unit, turns)]
    affect = {k: v if anchored(v, sources, names) else "unknown" for k, v in unit.affect.model_dump().items()}
    summary = unit.fact.summary if anchored(unit.fact.summary, sources, names) else ""
    return unit.model_copy(
        update={"affect": AffectAnchor(**affect), "fact": unit.fact.model_copy(update={"summary": summary})}
    )
