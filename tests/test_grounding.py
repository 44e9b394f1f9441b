from ftamem_core.grounding import content_words, normalised, repeats, shares_content


def test_content_words_drop_short_words_stopwords_possessives_and_names():
    assert content_words("Maya's coworker Omar told her to try blackout curtains", ["Maya", "Omar Said"]) == {
        "coworker", "told", "blackout", "curtains"}


def test_shares_content_ignores_names():
    turn = "My coworker Omar told me to try blackout curtains."
    assert shares_content("Omar suggested curtains to Maya.", [turn], ["Maya"])
    assert not shares_content("Maya unpacked one room a day.", [turn], ["Maya"])


def test_repeats_is_equality_or_containment_after_normalising():
    seen = [normalised("Maya works nights, 7pm to 7am.")]
    assert repeats("maya works nights 7pm to 7am", seen) and repeats("Maya works nights", seen)
    assert not repeats("Maya sleeps four hours.", seen)


from ftamem_core.grounding import anchored, misattributed, swap_names  # noqa: E402
from ftamem_core.models import Turn  # noqa: E402

PEERS = ["Caroline", "Melanie"]


def turn(idx, speaker, text):
    return Turn(idx=idx, role="user", speaker=speaker, text=text)


def test_a_fact_giving_one_speakers_first_person_words_to_the_other_is_misattributed():
    turns = [turn(3, "Caroline", "I'm researching adoption agencies, it's a big step."),
             turn(4, "Melanie", "Wow, that's amazing! You're doing something amazing.")]
    assert misattributed("Melanie is researching adoption agencies.", turns, PEERS) == ("Melanie", "Caroline")
    assert misattributed("Caroline is researching adoption agencies.", turns, PEERS) is None
    # the other speaker's turn names the subject: praise about Caroline by Melanie is no misattribution
    named = [turn(5, "Melanie", "Caroline, I'm so proud of your adoption plans!")]
    assert misattributed("Caroline has adoption plans.", named, PEERS) is None
    assert misattributed("The adoption agencies are far away.", turns, PEERS) is None  # no speaker as subject


def test_swap_names_exchanges_both_ways():
    assert swap_names("Melanie told Caroline about Melanie's plans", "Melanie", "Caroline") == \
        "Caroline told Melanie about Caroline's plans"


def test_anchors_need_a_shared_stem_with_the_evidence():
    sources = ["I was so stressed about the exam, but I'm excited to start the new job."]
    assert anchored("stress", sources) and anchored("excitement", sources) and anchored("unknown", sources)
    assert not anchored("housewarming after the kitchen is done", sources)
    assert not anchored("Caroline", sources, ["Caroline"])  # a name alone is no support
