"""Rules for English: whether a case's turns are English, and which repairs read English words.

``is_english`` counts the share of the running words that are among English's most frequent
function words: about 40-50% in English conversation, close to 0 in Chinese (no word is
matched), in German or Spanish well under the threshold.
"""

from __future__ import annotations

import re

# The most frequent English function words (closed classes: articles, pronouns, auxiliaries,
# prepositions, conjunctions), which no other language uses as its own words this often.
FUNCTION_WORDS = frozenset("""the a an and or but if so of to in on at for with from by about as into than then
i me my mine you your yours he him his she her hers it its we us our they them their this that these those
is are was were be been being am do does did have has had will would can could should shall may might must
not no yes what who when where why how which there here just very really too also all some any""".split())
MIN_SHARE = 0.2

# The construction settings whose code reads English words (word lists, English pronouns, stems
# of [a-z] words, sentences split at English punctuation), and their value when switched off.
REPAIRS_OFF = {
    "ground_facts": False,      # a fact's share of its turns' [a-z] word stems
    "told_share": 0.0,          # second-person statements rewritten as "told" (English pronouns)
    "speaker_check": False,     # first-person and name checks of who a fact is about
    "ground_anchors": False,    # a feeling or intention must share an [a-z] stem with its turns
    "ground_notes": False,      # notes must share [a-z] words with their units
    "split_facts": False,       # sentences split and regrouped by English names and pronouns
    "trim_spans": False,        # spans trimmed to the turns sharing a fact's [a-z] stems
    "verbatim_fallback": False, # copies of turns rewritten into the third person ("I" -> the name)
    "coverage_pass": False,     # its fact is checked against the turn's [a-z] words
}

_WORD = re.compile(r"[^\W\d_]+")


def function_word_share(texts: list[str]) -> float:
    words = _WORD.findall(" ".join(texts).lower())
    return sum(w in FUNCTION_WORDS for w in words) / len(words) if words else 0.0


def is_english(texts: list[str]) -> bool:
    """Whether the texts read as English (``MIN_SHARE`` of their words are English function words)."""
    return function_word_share(texts) >= MIN_SHARE
