from ftamem_core.construction.repairs.grounding import content_words, shares_content


def test_content_words_drop_short_words_stopwords_possessives_and_names():
    assert content_words("Maya's coworker Omar told her to try blackout curtains", ["Maya", "Omar Said"]) == {
        "coworker",
        "told",
        "blackout",
        "curtains",
    }


def test_shares_content_ignores_names():
    turn = "My coworker Omar told me to try blackout curtains."
    assert shares_content("Omar suggested curtains to Maya.", [turn], ["Maya"])
    assert not shares_content("Maya unpacked one room a day.", [turn], ["Maya"])


from ftamem_core.construction.repairs.grounding import misattributed, swap_names  # noqa: E402
from ftamem_core.models import Turn  # noqa: E402

PEERS = ["Caroline", "Melanie"]


def turn(idx, speaker, text):
    return Turn(idx=idx, role="user", speaker=speaker, text=text)


def test_a_fact_giving_one_speakers_first_person_words_to_the_other_is_misattributed():
    turns = [
        turn(3, "Caroline", "I'm researching adoption agencies, it's a big step."),
        turn(4, "Melanie", "Wow, that's amazing! You're doing something amazing."),
    ]
    assert misattributed("Melanie is researching adoption agencies.", turns, PEERS) == ("Melanie", "Caroline")
    assert misattributed("Caroline is researching adoption agencies.", turns, PEERS) is None
    # the other speaker's turn names the subject: praise about Caroline by Melanie is no misattribution
    named = [turn(5, "Melanie", "Caroline, I'm so proud of your adoption plans!")]
    assert misattributed("Caroline has adoption plans.", named, PEERS) is None
    assert misattributed("The adoption agencies are far away.", turns, PEERS) is None  # no speaker as subject
    # no first person, no one addressed: still the speaker's own news (LoCoMo conv-26 turn 25)
    terse = [turn(25, "Caroline", "Researching adoption agencies — it's been a dream to have a family.")]
    assert misattributed("Melanie is researching adoption agencies.", terse, PEERS) == ("Melanie", "Caroline")
    # addressed to the listener, it may be about the listener
    praise = [turn(26, "Melanie", "Taking in kids in need - you're so kind to do the adoption.")]
    assert misattributed("Caroline is kind to do the adoption.", praise, PEERS) is None
    # a name that only addresses the listener does not make the turn about them (conv-26 turn 15)
    thanks = [
        turn(14, "Caroline", "Wow, Melanie! The colors really blend nicely."),
        turn(
            15, "Melanie", "Thanks, Caroline! Painting's a fun way to express my feelings and relax after a long day."
        ),
    ]
    assert misattributed("Caroline loves painting to relax after a long day.", thanks, PEERS) == ("Caroline", "Melanie")
    assert misattributed("Melanie loves painting to relax after a long day.", thanks, PEERS) is None
    # a joint subject is joint_subject's to judge: exchanging the names would change nothing
    assert misattributed("Caroline and Melanie love painting to relax after a long day.", thanks, PEERS) is None
    told = [turn(16, "Melanie", "I painted Caroline a sunrise to relax after a long day.")]
    assert misattributed("Caroline got a painted sunrise to relax after a long day.", told, PEERS) is None
    # a question back to the listener, or a goodbye, says nothing of them (conv-44 turn 1, conv-26 turn 17)
    news = [turn(1, "Melanie", "Hey Caroline! So, I started a new job as an analyst last week. How about you?")]
    assert misattributed("Caroline started a new job as an analyst last week.", news, PEERS) == ("Caroline", "Melanie")
    bye = [turn(17, "Melanie", "Yep, Caroline. I'm off to go swimming with the kids. Talk to you soon!")]
    assert misattributed("Caroline is off to go swimming with the kids.", bye, PEERS) == ("Caroline", "Melanie")
    # words from one turn's question and another's statement: the teller is not settled (conv-44 turns 24-25)
    mixed = [
        turn(24, "Caroline", "I got a surprise for you! We adopted another puppy called Pixie."),
        turn(25, "Melanie", "Pixie is so cute! Did you check out that spot we talked about last time?"),
    ]
    assert misattributed("Caroline adopted Pixie last time.", mixed, PEERS) is None
    # ... but a fact about asking is the asker's (conv-44 turns 27-28)
    asked = [
        turn(
            27, "Melanie", "A puppy takes some work. Has she settled in okay? Is she getting along with the other dogs?"
        ),
        turn(28, "Caroline", "Pixie's fitting in great! It took her a few days to get used to the other dogs."),
    ]
    fact = "Caroline asked Melanie if Pixie had settled in well and was getting along with the other dogs."
    assert misattributed(fact, asked, PEERS) == ("Caroline", "Melanie")
    assert misattributed(fact.replace("asked", "told"), asked, PEERS) is None


def test_a_question_that_ties_with_a_statement_does_not_make_the_fact_the_askers():
    # LoCoMo conv-26 turns 3-4: both share "inspiring stories"; Caroline told them
    turns = [
        turn(3, "Melanie", "Wow, that's cool, Caroline! Did you hear any inspiring stories?"),
        turn(4, "Caroline", "The transgender stories were so inspiring! I was so happy."),
    ]
    assert misattributed("Melanie was inspired by the stories.", turns, PEERS) == ("Melanie", "Caroline")
    # with more shared words the question is still the turn the fact carries
    asked = [
        turn(3, "Melanie", "Did you hear any inspiring stories at the group?"),
        turn(4, "Caroline", "The stories were great! I was so happy."),
    ]
    assert misattributed("Melanie asked about inspiring stories at the group.", asked, PEERS) is None


def test_a_name_addresses_the_listener_after_a_stop_or_an_interjection_before_a_stop():
    from ftamem_core.construction.repairs.grounding import addressed, unaddressed

    for said in ("Thanks, Caroline! Great.", "Caroline, look at this.", "Hey Caroline!", "Yes, Caroline."):
        assert addressed(said, "Caroline"), said
        assert "Caroline" not in unaddressed(said, "Caroline"), said
    for said in ("I met Caroline at the park.", "I met Caroline.", "That's what Caroline said."):
        assert not addressed(said, "Caroline"), said
        assert unaddressed(said, "Caroline") == said


def test_swap_names_exchanges_both_ways():
    assert (
        swap_names("Melanie told Caroline about Melanie's plans", "Melanie", "Caroline")
        == "Caroline told Melanie about Caroline's plans"
    )


def test_small_talk_is_greeting_thanks_praise_or_agreement_only():
    from ftamem_core.construction.repairs.grounding import small_talk

    for said in (
        "Hey Mel!",
        "Good to see you!",
        "Wow, John!",
        "That's amazing news.",
        "Thanks so much!",
        "Long time no see!",
        "I'm so proud of you!",
        "Totally agree.",
    ):
        assert small_talk(said), said
    for said in (
        "I got the promotion.",
        "Good to see you at the race!",
        "Thanks, the dinner was lovely.",
        "Yes, in July.",
    ):
        assert not small_talk(said), said


def test_joint_subject_needs_each_speakers_own_first_person_telling():
    from ftamem_core.construction.repairs.grounding import joint_subject, sole_subject

    turns = [
        turn(3, "John", "We had a family dinner, we made pizza and laughed a lot."),
        turn(4, "Maria", "Looks delicious! Pizza is the best."),
    ]
    assert joint_subject("John and Maria made pizza at a family dinner.", turns, ["John", "Maria"]) == ("John", "Maria")
    assert joint_subject("John made pizza at a family dinner.", turns, ["John", "Maria"]) is None
    assert sole_subject("Maria and John were making pizza.", "John", "Maria") == "John was making pizza."
    assert sole_subject("John and Maria have a dog.", "John", "Maria") == "John has a dog."


def test_a_sentence_about_the_listener_is_second_person_without_i():
    from ftamem_core.construction.repairs.grounding import to_listener

    assert to_listener("You're doing an awesome job looking after yourself and your family!")
    assert not to_listener("I told you about my new job at the bank.")
    assert not to_listener("The bank hired three people.")
    assert to_listener("Wow, John, that playground looks cool!", ["John"])
    assert not to_listener("Wow, John, that playground looks cool!")  # John may be anyone
    assert not to_listener("Thanks, John! I went to the playground.", ["John"])
    assert not to_listener("I met John at the playground.", ["John"])


def test_item3_addressing_is_linear_on_long_whitespace():
    import time

    from ftamem_core.construction.repairs.grounding import addressed, unaddressed

    for text in ("\n" * 100_000, " " * 100_000, "," + " " * 100_000):
        start = time.perf_counter()
        assert not addressed(text, "Caroline") and unaddressed(text, "Caroline") == text
        assert time.perf_counter() - start < 2
