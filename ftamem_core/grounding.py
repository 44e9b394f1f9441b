"""Lexical checks that a model's text is about the dialogue it cites.

Small models echo the worked examples of the prompts (the 0.5B wrote "Maya unpacked one room a
day", the longitudinal prompt's example with the name swapped) or copy one fact into every slot.
A text that shares no content word with its sources, once names are set aside, is not about them.
"""

from __future__ import annotations

import re

STOPWORDS = frozenset("""about after again also been before being could didn does doing done from have having into
just like maybe more much only really should some still than that them then there they this very want were what
when where which will with would your""".split())


def content_words(text: str, names: tuple[str, ...] | list[str] = ()) -> set[str]:
    """Lower-case words of four letters or more, possessives trimmed, without stopwords and names."""
    words = {w.removesuffix("'s") for w in re.findall(r"[a-z']{4,}", text.lower())} - STOPWORDS
    return words - {n.lower() for name in names for n in name.split()}


def normalised(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def shares_content(text: str, sources: list[str], names: tuple[str, ...] | list[str] = ()) -> bool:
    return bool(content_words(text, names) & content_words(" ".join(sources), names))


def repeats(text: str, seen: list[str]) -> bool:
    """Whether ``text`` equals, contains or is contained in one of the ``seen`` (normalised) texts."""
    norm = normalised(text)
    return any(norm in old or old in norm for old in seen if old)
