"""English: whether a speaker's statement tells of the past, the present or the future.

A copy of a turn has no time orientation (the model wrote none), and a counselor reading "Maya
told Sam: ..." must still see whether it happened, is going on or is planned. The tense and the
time words of the speaker's own statement say it (setting ``extraction.stated_anchors``): a past
verb after its subject ("I went", "we played") or "last week"; "I'm going to", "next month";
"I'm starting", "these days". Two of these at once is "mixed"; none, with a verb in the present
tense ("Family is everything"), is "present"; nothing to tell by is "unknown".

A feeling in the present ("I'm so happy") is how the person feels about the event, not when it
was, so it does not make a past event mixed.
"""

from __future__ import annotations

import re

from ..models import TimeOrientation
from .english_feelings import FEELINGS

_IRREGULAR = (
    "was|were|had|did|went|got|made|took|saw|came|found|gave|told|said|felt|thought|bought|left|met|"
    "began|won|lost|ran|wrote|brought|kept|spent|sold|heard|knew|became|chose|ate|drove|flew|fell|"
    "sat|stood|taught|caught|held|built|paid|sent|drew|sang|swam|rode|broke|forgot|threw|wore|"
    "woke|hung|led|lent|quit|shot|slept|spoke|stole|tore|understood|hit|cut"
)
# "-ed" words that are no past verb
_NOT_PAST = frozenset("need feed seed speed indeed bleed breed exceed succeed proceed weed bed red shed".split())
# a feeling told in a word opening a sentence ("Exhausted.", "Tired all the time.") is no past
# verb; one with an object is ("Lost my job."). Not after a space: a search would scan a long
# run of spaces once per start.
_OBJECT = re.compile(r"(?<!\s)\s+(?:my|the|a|an|his|her|their|our|your|it|him|them|me|us|this|that)\b", re.I)
# capitalised words that open a sentence and are no one's name
_NOT_NAMES = "So|Really|Just|Very|Totally|Still|Pretty|Super|If|When|Once|As|Being|Feeling|Getting|Honestly|Maybe"
# who did it: a pronoun, "my sister", "the curtains", or a name ("Dad moved", "Lena agreed"; not
# a gerund opening a sentence: "Being surrounded by ...")
_SUBJECT = (
    r"(?:\bi|\bwe|\bhe|\bshe|\bthey|\b(?:my|our|his|her|their|the) \w+"
    rf"|(?-i:\b(?![A-Z][a-z]+ing\b)(?!(?:{_NOT_NAMES})\b)[A-Z][a-z]+))"
)
_ADVERB = r"(?:\s+(?:just|finally|also|recently|really|even|actually|already|first|once|never|then|totally|all))*"
_PAST_VERB = re.compile(rf"{_SUBJECT}{_ADVERB}\s+(?P<v>{_IRREGULAR}|[a-z]+ed)\b(?!')", re.I)
# a past told without its subject: "Just got back from a trip", "Lost my job yesterday"
_BARE_PAST = re.compile(rf"(?:^|[.!?]\s+)(?:just\s+|finally\s+|recently\s+)?(?P<v>{_IRREGULAR}|[a-z]+ed)\b(?!')", re.I)
_PARTICIPLES = (
    "done|gone|seen|taken|given|known|written|eaten|driven|flown|fallen|grown|shown|thrown|broken|chosen|"
    "forgotten|gotten|begun|become|come|run|won|lost|made|had|told|said|found|left|met|sent|spent|sold|"
    "bought|brought|kept|heard|felt|thought|put|read|let|quit|slept|been"
)
# "I've finished", "I haven't slept", "I've never been this sad"; not "I'd run" (would)
_PERFECT = re.compile(
    rf"{_SUBJECT}(?:'ve| have|'ve not| have not| haven't|'d had| had| has| hasn't){_ADVERB}(?:\s+not)?"
    rf"\s+(?P<v>{_PARTICIPLES}|[a-z]+ed)\b",
    re.I,
)
_PAST_WORDS = re.compile(
    r"\b(?:yesterday|last (?:week|month|year|night|weekend|summer|winter|spring|fall|time|(?:mon|tues|wednes|thurs|fri|satur|sun)day)"
    # "used to" as a habit, not "I'm used to it"
    r"|ago|earlier today|the other day|(?<!\bam\s)(?<!'m\s)(?<!\bnot\s)(?<!\bget\s)(?<!\bgot\s)(?<!\bbe\s)used to"
    r"|back then|when i was|growing up)\b",
    re.I,
)
_FUTURE = re.compile(
    # the verb "will", not "the will to live"
    r"\b(?:(?<!\bthe\s)(?<!\bno\s)(?<!\bmy\s)(?<!\bfree\s)(?<!\bown\s)will|won't|gonna|going to|plan to|"
    r"planning to|planning on|hope to|hoping to|want to|wanna|intend to|"
    r"'d like to|'d love to|would like to|would love to|would try|can't wait|looking forward|tomorrow|tonight|soon|someday|"
    r"next (?:week|month|year|weekend|summer|winter|spring|fall|time|(?:mon|tues|wednes|thurs|fri|satur|sun)day))\b"
    r"|(?<=[a-z])'ll\b",
    re.I,
)
# going on now: "I'm starting", "we're looking", "these days", "I've been painting" ("I'm planning
# to" and "I'm going to" tell of the future)
_ONGOING = re.compile(
    rf"{_SUBJECT}(?:'m| am|'re| are|'ve been| have been|'s been| has been)(?:\s+(?:still|currently|now|really|just|also))*"
    r"\s+(?!(?:going|planning|hoping|thinking|looking forward|dreaming|aiming|feeling)\b)[a-z]+ing\b|\b(?:these days|currently|nowadays|now|at the moment|lately)\b",
    re.I,
)
_PRESENT = re.compile(
    r"\b(?:am|is|are|'m|'re|do|does|don't|can|can't|have|has|love|like|enjoy|feel|need|think|know|get|go|work|live"
    r"|take|keep|want)\b|\b(?:it|that|he|she|what|there|who)'s\b",
    re.I,
)


def _past(statement: str) -> bool:
    if _PAST_WORDS.search(statement):
        return True
    if any(m.group("v").lower() not in _NOT_PAST for m in _PAST_VERB.finditer(statement)):
        return True
    for m in _BARE_PAST.finditer(statement):
        verb = m.group("v").lower()
        if verb not in _NOT_PAST and (verb not in FEELINGS | {"tired"} or _OBJECT.match(statement, m.end())):
            return True
    # "I've finished", "I haven't slept": a perfect tells of something done; "I've been
    # painting" is going on (the verb after "been" is its own)
    return any(
        m.group("v").lower() not in _NOT_PAST
        and not (m.group("v").lower() == "been" and re.match(r"\s+\w+ing\b", statement[m.end() :]))
        for m in _PERFECT.finditer(statement)
    )


# What a statement's tense does not settle: a negated event ("I didn't go", "I never finished",
# "I haven't told them yet", "I won't be going") or one only begun ("I started therapy").
_UNSETTLED = re.compile(r"\b(?:not|never|yet|\w+n't|cannot|started|starting|began|begun|beginning)\b", re.I)


def settled(statement: str) -> bool:
    """Whether a statement's tense alone tells whether its event is done (see ``_UNSETTLED``)."""
    return not _UNSETTLED.search(statement.replace("\u2019", "'"))


def orientation(statement: str) -> TimeOrientation:
    """Past, present, future, mixed (two of them) or unknown for a speaker's statement."""
    statement = statement.replace("\u2019", "'")
    told = [
        name
        for name, found in (
            ("past", _past(statement)),
            ("future", bool(_FUTURE.search(statement))),
            ("present", bool(_ONGOING.search(statement))),
        )
        if found
    ]
    if len(told) > 1:
        return "mixed"
    if told:
        return told[0]  # type: ignore[return-value]
    return "present" if _PRESENT.search(statement) else "unknown"
