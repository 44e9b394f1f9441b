"""Content recall: does the text a method shows the answering model hold a gold turn's words?

The rule, once: a gold turn counts as shown when at least ``SHOWN_SHARE`` (60%) of its distinct
content words appear among the shown text's words. Words are read as LoCoMo's official scorer
reads answers (``metrics.normalize_answer``, Porter stems) without scikit-learn's English stop
words; a turn with no content word counts only when its whole normalised text is shown.

It is measured on text, not on pointers: a unit that spans a turn but says nothing of it
("A and B talked.") does not show it. It deliberately shares no code with construction (the
grounding helpers the repairs use), so a repair cannot pass its own check. English only: the
stop words and the stemmer are English.
"""

from __future__ import annotations

from functools import lru_cache

from .metrics import _stemmer, normalize_answer

SHOWN_SHARE = 0.6


@lru_cache(maxsize=1)
def _stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def content_stems(text: str) -> set[str]:
    """Distinct Porter stems of ``text``'s words that are not English stop words."""
    stop, stem = _stop_words(), _stemmer().stem
    return {stem(w) for w in normalize_answer(text.replace("'", " ")).split() if w not in stop}


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
