"""Hostile turn text and every regex applied to turn text, checked for linear time (trust item 3).

Run as a script (``python tests/hostile_text.py``) it prints each check's name as it starts and
the slow ones at the end, so that the test can run it in a process it can stop: CPython's regex
engine does not stop for a signal, and a check that hangs would hold up the suite (it once held
CI past its limit).
"""

import gc
import sys
import time
from pathlib import Path

HOSTILE = {"newlines": "\n" * 100_000, "spaces": " " * 100_000, "comma and spaces": "," + " " * 100_000}


def _patterns():
    """Every compiled regex at module level in ftamem_core and ui (a new one is tested too)."""
    import importlib
    import pkgutil
    import re

    import ftamem_core

    names = [
        m.name for m in pkgutil.walk_packages(ftamem_core.__path__, "ftamem_core.") if not m.name.endswith("__main__")
    ] + ["ui"]
    for name in names:
        module = importlib.import_module(name)
        for attr, value in sorted(vars(module).items()):
            if isinstance(value, re.Pattern):
                yield f"{name}.{attr}", value


def _text_functions():
    """The functions that build regexes around turn text (a speaker's name) or apply them to it."""
    from ftamem_core.construction.repairs import grounding as g
    from ftamem_core.construction import temporal
    from ftamem_core.evaluation import content, unit_counts
    from ftamem_core.construction.extraction import statements, third_person
    from ftamem_core.loaders.locomo import photo_text, without_caption
    from ftamem_core.models import Turn
    from ftamem_core.text import english, english_feelings, english_sentences, english_time

    names = ["Caroline", "Melanie"]

    def turns(text):
        return [
            Turn(idx=0, role="user", speaker="Melanie", text=text),
            Turn(idx=1, role="user", speaker="Caroline", text=text),
        ]

    return {
        "addressed": lambda t: g.addressed(t + "Caroline" + t + "!", "Caroline"),
        "unaddressed": lambda t: g.unaddressed("thanks" + t + "," + t + "Caroline" + t, "Caroline"),
        "misattributed": lambda t: g.misattributed(
            "Caroline went" + t + "hiking", turns(t + "I went hiking" + t), names
        ),
        "joint_subject": lambda t: g.joint_subject("Caroline" + t + "and" + t + "Melanie hiked", turns(t), names),
        "subject": lambda t: g.subject(t + "Caroline", names),
        "sentences, stated": lambda t: (
            g.sentences("Hi." + t + "Yes!" + t),
            g.stated(t + "?" + t),
        ),
        "swap_names": lambda t: g.swap_names("Caroline" + t + "Melanie", "Caroline", "Melanie"),
        "small_talk, to_listener": lambda t: (g.small_talk(t + "thanks" + t), g.to_listener(t + "you", names)),
        "content words": lambda t: (
            g.content_words(t),
            g.first_person(t),
            g.support(t + "hike", [t + "hike"], names),
        ),
        "statements": lambda t: statements("I hiked." + t + "Did you?" + t, names),
        "third_person": lambda t: third_person("I'm" + t + "my" + t + "me-time", "Melanie"),
        "captions": lambda t: (
            without_caption("a" + t + "[shares a photo of" + t),
            photo_text(t, "a photo of" + t),
            without_caption(t + "[shares a photo of a dog]" + t, keep_what=True),
        ),
        "english": lambda t: english.is_english(["the" + t + "and"]),
        "temporal": lambda t: (
            temporal.resolve("3" + t + "days" + t + "ago", None),
            temporal.resolve("march" + t + "12," + t + "2023", temporal.session_date("2023-05-01")),
        ),
        "evaluation": lambda t: (
            content.content_stems("don't" + t + "I'm"),
            unit_counts.pronoun_led(t + ". " + t),
            unit_counts.pronoun_led('Maya told Sam: "' + t + '"'),
        ),
        "english_feelings": lambda t: (
            english_feelings.feelings("I'm so" + t + "happy and" + t + "sad." + t + "Guilty" + t + "at first."),
            english_feelings.intentions("I will" + t + "go and" + t + "see"),
            english_feelings.listeners_news("I'm proud" + t + "of you" + t),
            english_feelings.feelings(
                "It was" + t + "so" + t + "an" + t + "awesome" + t + "feeling." + t + "I love" + t
            ),
            english_feelings.intentions("Can't wait to" + t + "we're planning to" + t + "go"),
        ),
        # runs of words between "I'm" and a feeling: no word may match two ways
        "english_feelings, runs": lambda t: (
            english_feelings.feelings("I'm " + "really " * (len(t) // 7) + "x"),
            english_feelings.feelings("I " + "mainly " * (len(t) // 7) + "feel x"),
            english_feelings.feelings("Feeling " + "a lot more " * (len(t) // 11) + "x"),
        ),
        # many matches in one sentence: each reads a bounded window, not the text before it
        "english_feelings, many matches": lambda t: (
            english_feelings.feelings("I had a feeling of hope, " * (len(t) // 25)),
            english_feelings.feelings("I keep emotions like joy " * (len(t) // 25)),
            english_feelings.feelings("I feel it brings me joy, " * (len(t) // 25)),
        ),
        "english_time": lambda t: (
            english_time.orientation("I" + t + "just" + t + "went" + t + "Dad" + t + "moved" + t),
            english_time.orientation("I've" + t + "been" + t + "painting." + t + "Being" + t + "surrounded"),
        ),
        "cheer": lambda t: (
            g.cheer("Wow," + t + "they look" + t),
            g.cheer("Yeah," + t + "can't wait to" + t + "see it"),
            g.cheer("I'm" + t + "here for you" + t),
            g.cheer("Thanks for" + t + ",x"),
            g.cheer("Thanks" + t + "so much" + t),
            g.cheer("I hope you" + t + "find" + t),
            g.cheer("Enjoy" + t + "it" + t),
            g.cheer("Wow," + t + "that" + t + "photo" + t + "is" + t + "so" + t + "great" + t),
            g.cheer("so" + t + "such" + t + "great" + t + "idea" + t),
            g.cheer("so " * (len(t) // 3) + "x"),  # a run of intensifiers
            g.cheer("wow, " * (len(t) // 5) + "that is great"),
            g.cheer("Sorry" + t + "to hear" + t + "it must be" + t),
            g.to_listener("Thanks for" + t + "the" + t + "help" + t + "," + t),
        ),
        "sentences": lambda t: english_sentences.sentences("Ms." + t + "Okafor." + t + "e.g." + t),
        "stated feelings and time": lambda t: (
            english_feelings.feelings("I" + t + "-" + t + "excited" + t + "for" + t),
            english_time.settled("I" + t + "didn't" + t),
        ),
    }


def slow_on(call, text: str) -> bool:
    """Whether ``call`` is slow on ``text``: linear is milliseconds, quadratic minutes. A tenth of
    the text first, so that a quadratic pattern fails in seconds. CPU time of this thread, not the
    wall clock a busy machine stretches, with the collector off; at least 0.25 s at the small size,
    so that a pause of the machine's own does not read as slow."""
    for size in (len(text) // 10, len(text)):
        gc.disable()
        try:
            started = time.thread_time()
            call(text[:size])
            took = time.thread_time() - started
        finally:
            gc.enable()
        if took > max(0.25, 1.0 * size / len(text)):
            return True
    return False


def slow_regexes() -> list[tuple[str, str]]:
    """(name, kind of text) of every module-level regex and text function that is slow."""
    slow = []
    for name, pattern in _patterns():
        print(name, file=sys.stderr, flush=True)
        for kind, text in HOSTILE.items():
            if slow_on(lambda t: (pattern.search(t), pattern.findall(t), pattern.sub("", t), pattern.split(t)), text):
                slow.append((name, kind))
    for name, call in _text_functions().items():
        print(name, file=sys.stderr, flush=True)
        call(" ")  # imports and caches (a stemmer, stop words) are not the regex's time
        for kind, text in HOSTILE.items():
            if slow_on(call, text):
                slow.append((name, kind))
    return slow


if __name__ == "__main__":
    sys.path[:0] = [str(Path(__file__).resolve().parents[1])]
    print(slow_regexes())
