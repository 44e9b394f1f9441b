"""English sentences: where a text's sentences end.

A stop, "!", "?" or "…" followed by a space ends a sentence, except after a title or an
abbreviation English writes with a stop ("Ms. Okafor", "Dr. Lee", "e.g. walks"). Split there, a
counselor's "Would you co-run it with Ms. Okafor for the fair?" was quoted as "Okafor for the
fair?". One splitter serves the construction repairs, the English feeling and time rules and the
ranking's question finder, so that they agree on what a sentence is.
"""

from __future__ import annotations

import re

# titles and abbreviations written with a stop that never ends a sentence, as written ("MS." is an
# illness; "Jr." and "St.", Street, often end one)
ABBREVIATIONS = ("Mr", "Mrs", "Ms", "Dr", "Prof", "vs", "e.g", "i.e", "E.g", "I.e", "approx")

_ABBREVIATED = re.compile(rf"(?:^|[^\w.])(?:{'|'.join(re.escape(a) for a in ABBREVIATIONS)})\.$")
_LONGEST = max(map(len, ABBREVIATIONS)) + 2  # the abbreviation, its stop and the character before
# a dash between spaces breaks a sentence into parts ("I won my first tournament - so exciting!");
# a hyphen inside a word does not
DASH_BREAK = r"\s[-\u2013\u2014]\s"
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")


def _split(text: str, end: re.Pattern) -> list[str]:
    # each end's last few characters are read for an abbreviation: linear in the text, where a
    # lookbehind per abbreviation at every space made a long run of spaces four times slower
    text = text.strip()
    out, start = [], 0
    for m in end.finditer(text):
        if not _ABBREVIATED.search(text[max(0, m.start() - _LONGEST) : m.start()]):
            out.append(text[start : m.start()])
            start = m.end()
    out.append(text[start:])
    return [s for s in out if s.strip()]


def sentences(text: str) -> list[str]:
    """A text's sentences ("Ms. Okafor called. I said no." -> two)."""
    return _split(text, _SENTENCE_END)


# a tag that asks nothing: "I feel so tired, you know?", "It's a lot, right?" (ESConv seekers'
# turns), after a sentence that does not open as a question does ("Should I feel guilty, right?")
_TAG = re.compile(r",\s*(?:you know|ya know|y'know|right)\s*\?+(?=\s|$)", re.IGNORECASE)
_ASKS = re.compile(
    r"^(?:do|does|did|is|are|was|were|am|should|would|could|can|will|have|has|what|why|how|when|where|who|which)\b",
    re.IGNORECASE,
)


def untagged(text: str) -> str:
    """``text`` with its tag questions made statements ("I'm tired, you know?" -> "I'm tired.")."""

    def statement(m: re.Match) -> str:
        start = max(text.rfind(c, 0, m.start()) for c in ".!?") + 1
        return m.group(0) if _ASKS.match(text[start : m.start()].lstrip()) else "."

    return _TAG.sub(statement, text)
