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
