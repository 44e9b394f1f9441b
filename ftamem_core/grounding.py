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


# Anchors and speakers -----------------------------------------------------------------------

def _stems(text: str, names: tuple[str, ...] | list[str] = ()) -> set[str]:
    """Crude stems (first five letters) of the words of three letters or more, names aside:
    "stressed" and "stress", "excited" and "excitement" meet; "sad" counts."""
    skip = {n.lower() for name in names for n in name.split()}
    words = {w.removesuffix("'s") for w in re.findall(r"[a-z']{3,}", text.lower())}
    return {w[:5] for w in words - STOPWORDS - skip - _FUNCTION_WORDS}


_FUNCTION_WORDS = frozenset("""the and for but not you are was his her its our out has had who how why can all any
she him they them their theirs our ours yes okay""".split())


def anchored(text: str, sources: list[str], names: tuple[str, ...] | list[str] = ()) -> bool:
    """Whether a free-text anchor (feeling, intention, relations, summary) shares a word stem with
    the evidence turns, names aside. "unknown" and empty anchors need no support."""
    if not text.strip() or text.strip().lower() in ("unknown", "none"):
        return True
    return bool(_stems(text, names) & _stems(" ".join(sources), names))


def support(text: str, sources: list[str], names: tuple[str, ...] | list[str] = ()) -> float:
    """The share of a fact's word stems (names aside) found in its sources."""
    mine = _stems(text, names)
    return len(mine & _stems(" ".join(sources), names)) / len(mine) if mine else 1.0


_FIRST_PERSON = re.compile(r"\b(I|I'm|I've|I'd|I'll|me|my|mine|myself)\b")


def first_person(text: str) -> bool:
    return bool(_FIRST_PERSON.search(text))


def best_turn(text: str, turns: list, names: tuple[str, ...] | list[str] = ()):
    """The turn whose words a fact carries: the most shared stems, the first on a tie."""
    mine = _stems(text, names)
    best, best_score = None, 0
    for turn in turns:
        score = len(mine & _stems(turn.text, names))
        if score > best_score:
            best, best_score = turn, score
    return best


def subject(text: str, speakers: list[str]) -> str | None:
    """The speaker a fact starts with ("Caroline's plan ..." -> Caroline), if any."""
    for name in speakers:
        if name and re.match(rf"\s*{re.escape(name)}\b", text):
            return name
    return None


def misattributed(text: str, turns: list, speakers: list[str]) -> tuple[str, str] | None:
    """(written subject, true speaker) when a fact starts with one speaker's name but carries
    another speaker's first-person words that do not name the subject; else None."""
    who = subject(text, speakers)
    if who is None:
        return None
    turn = best_turn(text, turns, speakers)
    if turn is None or not turn.speaker or turn.speaker == who or turn.speaker not in speakers:
        return None
    if not first_person(turn.text) or re.search(rf"\b{re.escape(who)}\b", turn.text):
        return None
    return who, turn.speaker


def swap_names(text: str, a: str, b: str) -> str:
    """``text`` with the names ``a`` and ``b`` exchanged."""
    return re.sub(rf"\b({re.escape(a)}|{re.escape(b)})\b", lambda m: b if m.group(1) == a else a, text)


# Longitudinal notes -------------------------------------------------------------------------

_CLAUSE_END = re.compile(r"(?<=[.!?;])\s+")


def grounded_clauses(text: str, turns: list, speakers: list[str], threshold: float) -> str:
    """The clauses of a note that its evidence turns support (setting ``ground_notes``).

    The 1.5B writes notes such as "Caroline is working on her dissertation" (said nowhere) and
    repeats each for both speakers ("Melanie is looking into adoption agencies; Caroline is ...").
    A clause naming a speaker first must have ``threshold`` of its word stems in that speaker's own
    turns, no fewer than in another speaker's, and not carry another speaker's first-person words;
    a clause naming nobody is checked against all the turns and stands or falls with the one
    before it (it continues it: "It was really rewarding"). Repeated clauses go."""
    kept, seen, previous = [], set(), True
    everyone = [t.text for t in turns]
    for clause in (c for c in _CLAUSE_END.split(text.strip()) if c.strip()):
        who = subject(clause, speakers)
        if who is None:
            ok = previous and support(clause, everyone, speakers) >= threshold
        else:
            own = support(clause, [t.text for t in turns if t.speaker == who], speakers)
            others = [support(clause, [t.text for t in turns if t.speaker == s], speakers) for s in speakers if s != who]
            ok = own >= threshold and own >= max(others, default=0.0) and misattributed(clause, turns, speakers) is None
        previous = ok
        if ok and normalised(clause) not in seen:
            seen.add(normalised(clause))
            kept.append(clause.strip())
    if kept and kept[-1].endswith(";"):
        kept[-1] = kept[-1][:-1] + "."
    return " ".join(kept)
