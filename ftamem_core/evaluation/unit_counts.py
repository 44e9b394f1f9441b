"""Counts of a built memory read off the stored units, apart from the construction's repairs.

Nothing here calls segmentation, extraction, grounding or the speaker check: a count that used
the function that repairs a unit would read 0 by construction. The counts flag what a reader
checks by eye; the audit (``ftamem audit``) scores it. The word lists are English.
"""

from __future__ import annotations

import re
from collections import Counter

from ..storage.store import Store
from .content import content_stems

# English: a fact that opens a sentence with one of these has no named subject of its own.
PRONOUNS = {
    "it",
    "its",
    "we",
    "our",
    "she",
    "her",
    "he",
    "his",
    "they",
    "their",
    "this",
    "that",
    "these",
    "those",
    "i",
    "my",
    "you",
    "your",
}
SECOND_PERSON = re.compile(r"\b(you|your|yours|yourself)\b", re.I)
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+)([A-Za-z']+)")


# A quote after who said it to whom ('Maya told Sam: "I ..."'), perhaps after the question it
# answers ('Sam asked "How was it?"; Maya told Sam: "I ..."'): its "I" and "you" name them.
_QUOTED = re.compile(
    r'^(?:[^"]* asked "[^"]*"; )?(?P<who>[A-Z][\w\'-]*(?: [A-Z][\w\'-]*)?) (?:told (?P<to>[A-Z][\w\'-]*)|said): "(?P<words>.*)"$',
    re.S,
)
NAMED_BY_QUOTE = {"i", "my", "me", "mine", "myself", "you", "your", "yours", "yourself"}


def quoted(text: str) -> tuple[str, bool] | None:
    """A quoted fact's words and whether it names its listener, else None."""
    m = _QUOTED.match(text.strip())
    return (m.group("words"), m.group("to") is not None) if m else None


def pronoun_led(text: str) -> bool:
    """A sentence of ``text`` opens with a pronoun (English) that nothing in the unit names; in
    a quote after who said it to whom, "I" and "you" are named."""
    q = quoted(text)
    named = NAMED_BY_QUOTE if q and q[1] else {"i", "my", "me", "mine", "myself"} if q else set()
    words = _SENTENCE_START.findall(q[0] if q else text)
    return any(w.lower().split("'")[0] in PRONOUNS - named for w in words)


def second_person(text: str) -> bool:
    """ "you" with no listener named in the unit."""
    q = quoted(text)
    return not (q and q[1]) and bool(SECOND_PERSON.search(q[0] if q else text))


def is_copy(fact: str, turn_text: str, share: float = 0.8) -> bool:
    """``fact`` is ``turn_text`` retold (or quoted): each holds ``share`` of the other's content words."""
    q = quoted(fact)
    a, b = content_stems(q[0] if q else fact), content_stems(turn_text)
    return bool(a and b) and len(a & b) >= share * len(a) and len(a & b) >= share * len(b)


def unit_counts(store: Store, case_id: str, embedder=None, duplicate_cosine: float = 0.92) -> dict:
    turns = {t.idx: t for t in store.turns(case_id)}
    units = store.units(case_id, construction_status=None)
    final = [u for u in units if u.construction_status == "final"]
    partial = len(units) - len(final)
    units = final  # what a reader browses; open partial units are counted apart
    known = lambda v: v not in ("", "unknown")  # noqa: E731
    copies = [
        u.id
        for u in units
        if u.evidence.end - u.evidence.start <= 1
        and u.evidence.end in turns
        and is_copy(u.fact.text, turns[u.evidence.end].text)
    ]
    duplicates = []
    if embedder is not None and len(units) > 1:
        vectors = embedder.encode([u.fact.text for u in units])
        sims = vectors @ vectors.T
        for i in range(len(units)):
            for j in range(i + 1, len(units)):
                a, b = units[i].evidence, units[j].evidence
                if a.start <= b.end and b.start <= a.end and sims[i, j] >= duplicate_cosine:
                    duplicates.append((units[i].id, units[j].id))
    links = store.links(case_id)
    covered = {i for u in final for i in range(u.evidence.start, u.evidence.end + 1)} & turns.keys()
    n = max(1, len(units))
    return {
        "units": len(final),
        "partial": partial,
        "turns": len(turns),
        "units_per_turn": round(len(final) / max(1, len(turns)), 3),
        "turns_covered": round(len(covered) / max(1, len(turns)), 3),
        "mean_span": round(sum(u.evidence.end - u.evidence.start + 1 for u in units) / n, 2),
        "copies_of_a_turn": len(copies),
        "with_feeling": sum(known(u.affect.emotion_or_state) for u in units),
        "with_intention": sum(known(u.affect.intention_or_plan) for u in units),
        "with_relation_cues": sum(known(u.affect.relation_cues) for u in units),
        "with_event_time": sum(known(u.time.event_time) for u in units),
        "with_orientation": sum(known(u.time.time_orientation) for u in units),
        "pronoun_led": sum(pronoun_led(u.fact.text) for u in units),
        "second_person": sum(second_person(u.fact.text) for u in units),
        "under_3_content_words": sum(len(content_stems(u.fact.text)) < 3 for u in units),
        "duplicate_pairs": len(duplicates),
        "types": dict(Counter(u.fact.content_type for u in units).most_common()),
        "links": len(links),
        "link_relations": dict(Counter(link.relation for link in links).most_common()),
        "link_confidence": dict(Counter(link.confidence for link in links).most_common()),
    }
