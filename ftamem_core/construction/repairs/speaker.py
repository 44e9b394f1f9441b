"""Who said it: a model-written fact that names the wrong speaker, or both speakers for one's
words, is set right (the 1.5B swaps the two people of a peer dialogue); a fact no naming settles
is dropped by the builder."""

from __future__ import annotations

import re

from ...models import FTAUnit, Turn
from ..extraction import span_turns
from ...text.english_sentences import sentences
from .grounding import joint_subject, misattributed, sole_subject, swap_names


def correct_speaker(unit: FTAUnit, turns: list[Turn], speakers: list[str]) -> FTAUnit:
    """A fact that starts with one speaker's name but carries the other speaker's first-person
    words ("Melanie is researching adoption agencies" from Caroline's "I'm researching adoption
    agencies") gets the names exchanged, in the fact and its participants. A fact about both
    speakers that only one of them tells ("John and Maria shared a photo of their dinner" from
    John's turn and Maria's "Looks yummy!") is about the teller alone. When the fact as a whole
    passes, each sentence is judged alone, and changed alone (a swap only when it names one
    speaker): "Maria took a photo of a sunset ... John shared a photo of the beach" (Maria's)."""
    said = [t for t in span_turns(unit, turns) if t.role != "assistant"]
    fact = unit.fact
    joint = joint_subject(fact.text, said, speakers)
    wrong = misattributed(fact.text, said, speakers) if joint is None else None
    if joint is not None:
        teller, listener = joint
        fact = fact.model_copy(
            update={
                "text": sole_subject(fact.text, teller, listener),
                "summary": sole_subject(fact.summary, teller, listener),
            }
        )
    elif wrong is not None:
        a, b = wrong
        fact = fact.model_copy(
            update={
                "text": swap_names(fact.text, a, b),
                "summary": swap_names(fact.summary, a, b),
                "participants": list(dict.fromkeys(swap_names(p, a, b) for p in fact.participants)),
            }
        )
    else:
        parts = sentences(fact.text)
        fixed = [_correct_sentence(s, said, speakers) for s in parts]
        if fixed != parts:
            fact = fact.model_copy(
                update={
                    "text": " ".join(fixed),
                    "participants": list(dict.fromkeys(fact.participants + speakers_named(" ".join(fixed), speakers))),
                }
            )
    return unit if fact == unit.fact else unit.model_copy(update={"fact": fact})


def settled_speaker(unit: FTAUnit, turns: list[Turn], speakers: list[str], rounds: int = 4) -> FTAUnit | None:
    """``correct_speaker`` until the fact passes it unchanged; None when it never does. One pass
    can leave a fact its next pass changes again: "Joanna says the turtles might be small ... Nate
    recommends" becomes "Nate says ... Joanna recommends" (the whole fact swapped), and only the
    second pass sets the second sentence right. A fact that mixes both speakers' words clause by
    clause ("Audrey wants to get a dog; Andrew is considering getting a dog too", both Andrew's)
    cycles between its swaps: no naming of it is right, and the turns' own words are better."""
    seen = [unit.fact.text]
    for _ in range(rounds):
        fixed = correct_speaker(unit, turns, speakers)
        if fixed.fact.text == unit.fact.text:
            return fixed
        if fixed.fact.text in seen:
            return None
        seen.append(fixed.fact.text)
        unit = fixed
    return None


def _correct_sentence(sentence: str, said: list[Turn], speakers: list[str]) -> str:
    joint = joint_subject(sentence, said, speakers)
    if joint is not None:
        return sole_subject(sentence, *joint)
    named = speakers_named(sentence, speakers)
    if len(named) > 1 and ";" in sentence:
        # each clause alone: "Melanie is off to do some research; Caroline is off to go swimming"
        # (conv-26, each the other's words); separators kept, so an unchanged sentence stays equal
        parts = re.split(r"(;\s*)", sentence)
        return "".join(p if i % 2 else _correct_sentence(p, said, speakers) for i, p in enumerate(parts))
    wrong = misattributed(sentence, said, speakers)
    return swap_names(sentence, *wrong) if wrong is not None and len(named) == 1 else sentence


def speakers_named(text: str, speakers: list[str]) -> list[str]:
    return [n for n in speakers if re.search(rf"\b{re.escape(n)}\b", text)]
