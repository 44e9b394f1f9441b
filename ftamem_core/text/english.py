"""Rules for English: whether a case's turns are English, and which repairs read English words.

``is_english`` asks lingua (a maintained, offline language identifier with its models in the
wheel) which language the turns are in. Counting English function words did not do: colloquial
Spanish, German and Italian share "no", "me", "a", "so", "also", "was" with it, and a mostly
Chinese case with a few English words passed. Too little text to tell (fewer than ``MIN_TOKENS``
words, each CJK character counted as one) is taken as English, the method's own language: a
case of "Thanks!" and "Bye!" keeps its repairs.
"""

from __future__ import annotations

import functools
import re

MIN_TOKENS = 20
SAMPLE_CHARS = 20_000

# The construction settings whose code reads English words (word lists, English pronouns, stems
# of [a-z] words, sentences split at English punctuation), and their value when switched off, by phase.
REPAIRS_OFF = {
    "extraction": {
        "ground_facts": False,  # a fact's share of its turns' [a-z] word stems
        "speaker_check": False,  # first-person and name checks of who a fact is about
        "verbatim_fallback": False,  # copies of turns: statements found by English pronouns and small talk
        "stated_anchors": False,  # English feeling words, "I want to" after "I", "my husband", English tenses
    },
}

# a run of letters, or one CJK character (Chinese, Japanese, Korean write no spaces)
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]|[^\W\d_\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")


@functools.cache
def _detector():
    from lingua import LanguageDetectorBuilder

    # low accuracy mode: the trigram models only, enough for a case's worth of text
    return LanguageDetectorBuilder.from_all_languages().with_low_accuracy_mode().build()


def is_english(texts: list[str]) -> bool:
    """Whether the texts read as English; fewer than ``MIN_TOKENS`` words cannot tell and count
    as English."""
    step = max(1, sum(map(len, texts)) // SAMPLE_CHARS)  # a long case: every step-th turn
    text = "\n".join(texts[::step])
    if len(_TOKEN.findall(text)) < MIN_TOKENS:
        return True
    from lingua import Language

    return _detector().detect_language_of(text) == Language.ENGLISH
