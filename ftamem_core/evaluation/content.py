"""Content recall: does the text a method shows the answering model hold a gold turn's words?

The rule, once: a gold turn counts as shown when at least ``SHOWN_SHARE`` (60%) of its distinct
content words appear among the shown text's words. Words are read as LoCoMo's official scorer
reads answers (``metrics.normalize_answer``, Porter stems) without scikit-learn's English stop
words, words of one or two letters, and the words the packet's own labels use (``PACKET_WORDS``:
"said", "feeling", "turns", ...), which would otherwise match a turn in any packet; a turn with
no content word counts only when its whole normalised text is shown.

It is measured on text, not on pointers: a unit that spans a turn but says nothing of it
("A and B talked.") does not show it. It deliberately shares no code with construction (the
grounding helpers the repairs use), so a repair cannot pass its own check. English only: the
stop words and the stemmer are English.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import get_args

from ..models import Completion, ContentType, LifecycleStatus, Relation, SemanticKind, TimeOrientation

from .metrics import _stemmer, normalize_answer

SHOWN_SHARE = 0.6
# The labels ``packet.render`` writes around units and turns (headings, date lines, anchor names,
# the enums it spells out): words every packet holds, whatever it shows of a turn.
_LABELS = (
    "primary linked source other turns units notes none found said happened feeling intention relations "
    "partial underspecified date unknown support tried now linked"
)
PACKET_WORDS = frozenset(_LABELS.split()) | frozenset(
    word
    for enum in (ContentType, TimeOrientation, Completion, LifecycleStatus, Relation, SemanticKind)
    for value in get_args(enum)
    for word in value.split("_")
)


@lru_cache(maxsize=1)
def _stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


_CLITIC = re.compile(r"n['’]t\b|['’](?:s|m|re|ve|ll|d)\b", re.I)


def content_stems(text: str) -> set[str]:
    """Distinct Porter stems of ``text``'s words that are not English stop words."""
    stop, stem = _stop_words(), _stemmer().stem
    text = _CLITIC.sub("", text)  # "that's", "I'm", "don't" are their stop words
    return {stem(w) for w in normalize_answer(text).split() if len(w) > 2 and w not in stop and w not in PACKET_WORDS}


class ShownText:
    """A shown text, read once, asked for many turns."""

    def __init__(self, text: str):
        self.stems = content_stems(text)
        self.normalised = f" {normalize_answer(text)} "

    def shows(self, turn_text: str, share: float = SHOWN_SHARE) -> bool:
        words = content_stems(turn_text)
        if not words:
            norm = normalize_answer(turn_text)
            return bool(norm) and f" {norm} " in self.normalised
        return len(words & self.stems) >= share * len(words)


def content_recall(shown_text: str, gold_texts: list[str], share: float = SHOWN_SHARE) -> float | None:
    """The share of ``gold_texts`` (a question's gold turns) that ``shown_text`` shows; None when
    there is no gold turn."""
    if not gold_texts:
        return None
    shown = ShownText(shown_text)
    return sum(shown.shows(t, share) for t in gold_texts) / len(gold_texts)
