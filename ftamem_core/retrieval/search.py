"""Memory search: a case's units found by their words and by their meaning (the cosine of the
query with the unit's vector in the case's index), ranked, each with the words that matched, as
written or close in meaning ("dad ≈ father")."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..construction.repairs.grounding import STOPWORDS
from ..storage.store import Store

# With all-MiniLM-L6-v2 on the sample case, "father" gives the four units about Daniel's dad
# 0.21-0.39 and the next unit 0.15; a word with nothing about it ("gardening") tops at 0.12.
MEANING_FLOOR = 0.2
# Two single words this close read as the same thing (MiniLM: dad/father 0.7, dad/sister below).
WORD_LIKE = 0.6
# Three-letter function words (grounding's stopwords start at four letters).
SHORT_STOPWORDS = frozenset(
    "the and for but are was his her she him you not has had can did who how why its our "
    "out all any one yes too get got let may".split()
)
# A word found as written counts this much more than any cosine, so word hits rank first.
WORD_WEIGHT = 0.5


@dataclass
class Hit:
    unit_id: int
    score: float  # the rank: meaning (cosine) plus the share of the query's words found
    meaning: float  # the cosine of the query with the unit's vector
    words: list[str] = field(default_factory=list)  # query words found as written
    like: list[str] = field(default_factory=list)  # "unit word ≈ query word" by meaning


def words(text: str) -> list[str]:
    """Lower-case words of three letters or more, stopwords left out, in order, once each."""
    return list(
        dict.fromkeys(
            w.removesuffix("'s")
            for w in re.findall(r"[a-z']{3,}", text.lower())
            if w.removesuffix("'s") not in STOPWORDS | SHORT_STOPWORDS
        )
    )


def search(store: Store, embedder, case_id: str, query: str, texts: dict[int, str]) -> list[Hit]:
    """The units of ``texts`` (unit id -> what is searched by words: fact, summary, evidence) that
    hold a word of the query or whose meaning is close to it (``MEANING_FLOOR``), best first."""
    asked = words(query)
    vector = embedder.encode([query])[0]
    index = store.index(case_id)
    meaning: dict[int, float] = {}
    if index.ntotal:
        sims, ids = index.search(vector, index.ntotal)
        meaning = {int(i): float(s) for s, i in zip(sims, ids) if i >= 0}
    hits = []
    for unit_id, text in texts.items():
        lower = text.lower()
        found = [w for w in asked if re.search(rf"\b{re.escape(w)}", lower)]
        cosine = meaning.get(unit_id, 0.0)
        if found or cosine >= MEANING_FLOOR:
            hits.append(Hit(unit_id, cosine + WORD_WEIGHT * len(found) / max(len(asked), 1), cosine, found))
    hits.sort(key=lambda h: -h.score)
    _close_words(embedder, asked, hits, texts)
    return hits


def _close_words(embedder, asked: list[str], hits: list[Hit], texts: dict[int, str]) -> None:
    """Fill each hit's ``like``: its words close in meaning to a query word not found as written."""
    missing = [w for w in asked if not all(w in h.words for h in hits)]
    own = {h.unit_id: [w for w in words(texts[h.unit_id]) if w not in asked] for h in hits}
    vocabulary = list(dict.fromkeys(w for ws in own.values() for w in ws))
    if not missing or not vocabulary:
        return
    vectors = embedder.encode(missing + vocabulary)
    close = np.asarray(vectors[len(missing) :] @ vectors[: len(missing)].T)  # vocabulary x missing
    position = {w: n for n, w in enumerate(vocabulary)}
    for h in hits:
        for w in own[h.unit_id]:
            for q, cosine in zip(missing, close[position[w]]):
                if q not in h.words and cosine >= WORD_LIKE:
                    h.like.append(f"{w} ≈ {q}")
