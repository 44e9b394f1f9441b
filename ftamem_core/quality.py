"""Automatic checks of built memory (issue #9's unit checks): what a reader finds by eye, counted.

- misattributed: a fact, or a later sentence of it, that starts with one speaker's name but
  carries another speaker's first-person words (``grounding.misattributed``), or starts with both
  speakers when only one tells it (``grounding.joint_subject``): what ``correct_speaker`` changes;
- said to the listener: between peers, a model-written fact made mostly of what the speakers say
  to each other (``grounding.told_share`` below ``told_below``, 0.5: praise of John's enthusiasm
  written as "Maria is enthusiastic"), which the extraction prompt asks the model not to write;
- duplicates: pairs of units with overlapping evidence whose facts' embeddings reach
  ``duplicate_cosine`` (0.92);
- ungrounded anchors: feeling, intention, relations or summary sharing no word stem with the
  evidence turns (names aside);
- coverage: the share of turns inside some unit's evidence span;
- verbatim: units that are one turn's own words (the ``verbatim_fallback``), told apart from the
  model's units.
"""

from __future__ import annotations

from collections import Counter

from .extraction import correct_speaker, own_words, span_turns, statements
from .grounding import anchored, told_share
from .store import Store


def unit_checks(store: Store, case_id: str, embedder, duplicate_cosine: float = 0.92, told_below: float = 0.5) -> dict:
    turn_list = store.turns(case_id)
    turns = {t.idx: t for t in turn_list}
    units = store.units(case_id, construction_status=None)
    speakers = sorted({t.speaker for t in turns.values() if t.speaker and t.role != "assistant"})
    said = {u.id: [t for t in span_turns(u, turn_list) if t.role != "assistant"] for u in units}
    # what the speaker check would change, whole fact or a later sentence
    wrong_speaker = [u.id for u in units if correct_speaker(u, turn_list, speakers).fact.text != u.fact.text]
    ungrounded = []
    for u in units:
        sources = [t.text for t in span_turns(u, turn_list)]
        for name, value in (("summary", u.fact.summary), ("feeling", u.affect.emotion_or_state),
                            ("intention", u.affect.intention_or_plan), ("relations", u.affect.relation_cues)):
            if not anchored(value, sources, speakers):
                ungrounded.append((u.id, name, value))
    duplicates = []
    if len(units) > 1:
        vectors = embedder.encode([u.fact.text for u in units])
        sims = vectors @ vectors.T
        for i in range(len(units)):
            for j in range(i + 1, len(units)):
                a, b = units[i].evidence, units[j].evidence
                if a.start <= b.end and b.start <= a.end and sims[i, j] >= duplicate_cosine:
                    duplicates.append((units[i].id, units[j].id, round(float(sims[i, j]), 3)))
    covered = {i for u in units if u.construction_status == "final" for i in range(u.evidence.start, u.evidence.end + 1)}

    def fallback_fact(turn) -> str:
        return own_words(turn, statements(turn.text, [s for s in speakers if s != turn.speaker]))

    # a short reply's span also holds the turn it answers (``verbatim_reply_words``)
    verbatim = [u.id for u in units if u.evidence.end - u.evidence.start <= 1 and u.evidence.end in turns
                and u.fact.text == fallback_fact(turns[u.evidence.end])]
    peers = not any(t.role == "assistant" for t in turn_list)
    to_listener = [u.id for u in units if peers and u.id not in verbatim
                   and told_share(u.fact.text, said[u.id], speakers) < told_below]
    return {
        "units": sum(u.construction_status == "final" for u in units),
        "verbatim": len(verbatim),  # units that are a turn's own words (the fallback)
        "partial": sum(u.construction_status == "partial" for u in units),
        "turns": len(turns), "turns_covered": len(covered & set(turns)),
        "mean_span": round(sum(u.evidence.end - u.evidence.start + 1 for u in units) / max(1, len(units)), 2),
        "types": dict(Counter(u.fact.content_type for u in units).most_common()),
        "misattributed": wrong_speaker, "said_to_listener": to_listener, "duplicates": duplicates, "ungrounded_anchors": ungrounded,
    }
