import json

import pytest
from pydantic import ValidationError

from ftamem_core.construction.extraction import (
    Fragment,
    fuse,
    integrate,
    parse_candidates,
    reply_model,
    third_person,
    to_unit,
    verbatim_units,
)
from ftamem_core.llm.base import json_schema
from ftamem_core.models import Turn

from conftest import make_unit
from scripted import unit


def fragment(start=10, end=14, time="2025-09-12T19:00"):
    return Fragment("c1", 7, [Turn(idx=i, text=f"t{i}") for i in range(start, end + 1)], time)


def parse(items, keys=(), frag=None):
    reply = reply_model(list(keys)).model_validate({"memory_units": items})
    return parse_candidates(reply, frag or fragment())


def test_schema_carries_enums_and_completes_names_only_carried_units():
    schema = json_schema(reply_model(["p1", "p2"], at_least_one=True))
    props = schema["properties"]["memory_units"]["items"]["properties"]
    assert props["completes"]["enum"] == ["none", "p1", "p2"]
    assert "belief_candidate" in props["content_type"]["enum"]
    assert props["status"]["enum"] == ["complete", "partial", "pending", "unknown"]
    assert schema["properties"]["memory_units"]["minItems"] == 1
    with pytest.raises(ValidationError):
        reply_model(["p1"]).model_validate({"memory_units": [unit("x y", 10, 11, completes="p7")]})
    with pytest.raises(ValidationError):
        reply_model([], at_least_one=True).model_validate({"memory_units": []})


def test_the_facts_length_bound_is_the_callers():
    long = "Maya talks about night shifts and sleep. " * 12  # 492 characters
    assert '"maxLength": 800' in json.dumps(json_schema(reply_model([], fact_chars=800)))
    with pytest.raises(ValidationError):
        reply_model([], fact_chars=400).model_validate({"memory_units": [unit(long, 10, 11)]})
    reply_model([], fact_chars=800).model_validate({"memory_units": [unit(long, 10, 11)]})


@pytest.mark.parametrize("text", ["...", "", "unknown", "  ", "…"])
def test_placeholder_facts_are_invalid(text):
    with pytest.raises(ValidationError):
        reply_model([]).model_validate({"memory_units": [unit(text, 10, 11)]})


@pytest.mark.parametrize(
    "span, expected",
    [
        ([11, 13], (11, 13)),
        ([13, 11], (11, 13)),
        ([8, 12], (10, 12)),
        ([12, 30], (12, 14)),
        ([40, 50], (10, 14)),
        ([0, 3], (10, 14)),
    ],
)
def test_evidence_stays_inside_the_fragment(span, expected):
    ((_, u),) = parse([unit("Maya slept four hours.", *span)])
    assert (u.evidence.start, u.evidence.end) == expected
    assert u.evidence.session_id == 7 and u.evidence.dialogue_time == "2025-09-12T19:00"


def test_time_anchor_resolution_and_status_mapping():
    (_, a), (_, b), (_, c), (_, d) = parse(
        [
            unit("Daniel snapped at a student.", 10, 11, expression="last Friday", event_time="2025-09-04"),
            unit("Daniel will call Priya.", 12, 12, status="pending", expression="on Sunday", orientation="future"),
            unit("Daniel's father was diagnosed.", 13, 13, event_time="2025-07", expression="unknown"),
            unit("Daniel is tired.", 14, 14, status="partial", orientation="present", expression="lately"),
        ]
    )
    assert (a.time.event_time, a.time.event_time_expression) == ("2025-09-05", "last Friday")  # resolver wins
    assert (b.time.event_time, b.lifecycle_status, b.construction_status) == ("2025-09-14", "pending", "final")
    assert (c.time.event_time, c.time.event_time_expression) == ("2025-07", "")
    assert (d.time.event_time, d.construction_status, d.completeness) == ("unknown", "partial", "partial")
    assert a.time.dialogue_time == "2025-09-12T19:00" and a.lifecycle_status == "completed"


def test_fusion_combines_anchors_and_merges_evidence():
    ((_, partial),) = parse(
        [unit("Maya argued with her sister Lena.", 10, 12, status="partial", expression="yesterday")]
    )
    frag2 = fragment(15, 18)
    ((_, candidate),) = parse(
        [unit("Maya and Lena agreed to share their father's care.", 15, 17, completes="p1")], keys=["p1"], frag=frag2
    )
    candidate.fact.participants = ["Maya", "Lena"]
    candidate.affect.emotion_or_state = "relieved"
    fused = fuse(partial, candidate)
    assert fused.fact.text == "Maya argued with her sister Lena. Maya and Lena agreed to share their father's care."
    assert (fused.evidence.start, fused.evidence.end) == (10, 17)
    assert fused.fact.participants == ["Maya", "Lena"]
    assert fused.affect.emotion_or_state == "tired; relieved"
    assert fused.time.event_time == "2025-09-11"  # the partial's resolved time is kept
    assert fused.construction_status == "final" and fused.created_at == partial.created_at


def test_integrate_fuses_finalises_and_keeps_carrying():
    (_, p1), (_, p2) = parse(
        [
            unit("Maya started a new job.", 10, 11, status="partial"),
            unit("Maya is worried about money.", 12, 13, status="partial"),
        ]
    )
    candidates = parse(
        [
            unit("The new job is at a bakery.", 15, 16, completes="p1"),
            unit("Maya will ask for a raise.", 17, 17, status="pending"),
            unit("The job has night hours.", 18, 18, completes="p1"),  # p1 already fused
            unit("Lena may visit.", 18, 18, status="partial"),
        ],
        keys=["p1", "p2"],
        frag=fragment(15, 18),
    )
    result = integrate(candidates, [p1, p2], ["p1", "p2"])
    assert [f[2].fact.text for f in result.fusions] == ["Maya started a new job. The new job is at a bakery."]
    assert [u.fact.text for u in result.finalised] == [
        "Maya started a new job. The new job is at a bakery.",
        "Maya will ask for a raise.",
        "The job has night hours.",
    ]
    assert [u.fact.text for u in result.carried] == ["Maya is worried about money.", "Lena may visit."]


def test_first_person_facts_name_the_speaker():
    frag = Fragment(
        "c1",
        7,
        [
            Turn(idx=10, role="user", speaker="Daniel", text="a"),
            Turn(idx=11, role="assistant", speaker="Counselor", text="b"),
        ],
        "2025-09-12",
    )
    ((_, u),) = parse([unit("I snapped at a student and I'm ashamed of my temper.", 10, 11)], frag=frag)
    assert u.fact.text == "Daniel snapped at a student and Daniel is ashamed of Daniel's temper."
    two = Fragment("c1", 7, [Turn(idx=10, speaker="Ana", text="a"), Turn(idx=11, speaker="Ben", text="b")], None)
    ((_, u),) = parse([unit("I moved to Denver.", 10, 11)], frag=two)
    assert u.fact.text == "I moved to Denver."  # two possible speakers: left as written
    # LoCoMo conv-26: "I'm carving out some me-time each day" (not "Melanie-time")
    assert (
        third_person("I'm carving out some me-time for me.", "Melanie")
        == "Melanie is carving out some me-time for Melanie."
    )


def said(idx, text, role="user"):
    return Turn(idx=idx, role=role, speaker="Maya" if role == "user" else "Counselor", text=text)


def test_copied_turns_are_the_persons_substantive_turns_no_units_fact_carries():
    frag = Fragment(
        "c1",
        7,
        [
            said(10, "I work nights now, seven to seven."),
            said(11, "How is your sleep lately?", "assistant"),
            said(12, "Badly, maybe four hours a day."),
            said(13, "Okay."),
            said(14, "My coworker Omar suggested blackout curtains."),
        ],
        "2025-03-02",
    )
    written = [unit_model(10, 10)]
    copied = lambda units: [u.evidence.end for u in verbatim_units(frag, units, 5)]  # noqa: E731
    assert copied(written) == [12, 14]  # 11 is the counselor's, 13 too short
    # inside a unit's span, a turn its fact does not tell is copied all the same
    assert copied(written + [unit_model(12, 14)]) == [12, 14]
    told = "Maya sleeps badly, four hours a day; her coworker Omar suggested blackout curtains."
    carried = parse([unit(told, 12, 14)], frag=fragment(10, 14))[0][1]
    assert copied(written + [carried]) == []
    partial = parse([unit(told, 12, 14, status="partial")], frag=fragment(10, 14))[0][1]
    assert copied(written + [partial]) == []  # it ends up in memory too


def test_a_unit_that_names_a_turns_topic_without_half_its_words_does_not_keep_it():
    frag = fragment(10, 14)
    frag.turns[0] = said(10, "I lost my job as a banker yesterday, so I'm taking a shot at my own dance studio.")
    gist = parse([unit("Maya lost her job and starts a business.", 10, 10)], frag=frag)[0][1]
    assert [u.evidence.end for u in verbatim_units(frag, [gist], 5)] == [10]
    kept = "Maya lost her job as a banker yesterday and is taking a shot at her own dance studio."
    told = parse([unit(kept, 10, 10)], frag=frag)[0][1]
    assert verbatim_units(frag, [told], 5) == []


def unit_model(first, last):
    return parse([unit("Maya works nights, seven to seven.", first, last)], frag=fragment(10, 14))[0][1]


def test_speaker_check_schema_labels_duplicates_and_verbatim_units():
    from ftamem_core.construction.extraction import Fragment, merge_duplicates, verbatim_units
    from ftamem_core.construction.repairs.speaker import correct_speaker
    from ftamem_core.models import Turn
    from scripted import HashEmbedder, unit as unit_json

    turns = [
        Turn(idx=10, role="user", speaker="Caroline", text="I'm researching adoption agencies this week."),
        Turn(idx=11, role="user", speaker="Melanie", text="That's a big step! Good luck."),
        Turn(
            idx=12,
            role="user",
            speaker="Caroline",
            text="Thanks! I also ran a charity race for mental health on Sunday.",
        ),
    ]
    frag = Fragment("c1", 1, turns, "2023-05-08")
    from ftamem_core.construction.extraction import UnitOut

    wrong = to_unit(UnitOut.model_validate(unit_json("Melanie is researching adoption agencies.", 10, 11)), frag)
    wrong = wrong.model_copy(update={"fact": wrong.fact.model_copy(update={"participants": ["Melanie"]})})
    fixed = correct_speaker(wrong, turns, ["Caroline", "Melanie"])
    assert fixed.fact.text == "Caroline is researching adoption agencies." and fixed.fact.participants == ["Caroline"]

    echoed = unit_json("Caroline is researching adoption agencies.", 10, 10)
    echoed["content"].update(intention_or_plan="Homework-or-plan.", emotion_or_state="mixed", relation_cues=" ")
    echoed = to_unit(UnitOut.model_validate(echoed), frag)  # a content type is the schema's word, not the turns'
    assert (echoed.affect.intention_or_plan, echoed.affect.emotion_or_state, echoed.affect.relation_cues) == (
        "unknown",
        "mixed",  # a feeling may be mixed
        "unknown",
    )

    race = [
        to_unit(UnitOut.model_validate(unit_json(t, 12, 12)), frag)
        for t in (
            "Caroline ran a charity race for mental health on Sunday.",
            "Caroline ran a charity race for mental health on Sunday!",
            "Caroline is researching adoption agencies.",
        )
    ]
    kept, merged = merge_duplicates(race, HashEmbedder(), 0.92)
    assert len(kept) == 2 and len(merged) == 1
    assert merge_duplicates(race, HashEmbedder(), 1.01)[0] == race  # the threshold decides

    extra = verbatim_units(frag, [fixed], min_words=6)
    assert [(u.evidence.start, u.fact.text) for u in extra] == [
        (12, 'Caroline told Melanie: "I also ran a charity race for mental health on Sunday."')
    ]  # "Thanks!" is small talk
    assert extra[0].time.event_time == "2023-05-07"  # "on Sunday", seen from Monday 2023-05-08

    asking = [
        Turn(
            idx=13,
            role="user",
            speaker="Melanie",
            text="Wow, Caroline! What kinda jobs are you thinking of? Anything that stands out?",
        ),
        Turn(
            idx=14,
            role="user",
            speaker="Melanie",
            text="Did it go well? I'm swamped with the kids and work this month.",
        ),
    ]
    extra = verbatim_units(Fragment("c1", 1, asking, "2023-05-08"), [], min_words=6)
    assert [(u.evidence.start, u.fact.text) for u in extra] == [
        (14, 'Melanie said: "I\'m swamped with the kids and work this month."')
    ]  # questions are no fact

    # greetings and praise of six words and more are no fact either (LoCoMo conv-26 and conv-41)
    hello = [
        Turn(idx=15, role="user", speaker="Caroline", text="Hey Mel! Good to see you! How have you been?"),
        Turn(idx=16, role="user", speaker="Maria", text="Hey John! Long time no see! What's up?"),
        Turn(idx=17, role="user", speaker="Maria", text="Wow, John! That's amazing news. So proud of you!"),
        Turn(idx=18, role="user", speaker="John", text="Wow, thanks! I finally got the promotion at the bank."),
        Turn(
            idx=19,
            role="user",
            speaker="Maria",
            text="You're doing an awesome job looking after yourself and your family!",
        ),
    ]
    extra = verbatim_units(Fragment("c1", 1, hello, "2023-05-08"), [], min_words=6)
    assert [(u.evidence.start, u.fact.text) for u in extra] == [
        (18, 'John said: "I finally got the promotion at the bank."')
    ]

    # a sentence addressing the listener by name without "I" is about the listener's story (conv-41)
    comments = [
        Turn(idx=20, role="user", speaker="John", text="We went to the playground with the kids, it was fun."),
        Turn(idx=21, role="user", speaker="Maria", text="Wow, John, that playground looks cool! What do you do there?"),
        Turn(
            idx=22,
            role="user",
            speaker="Maria",
            text="Yep John, a bit of support can make an amazing change. I volunteer at the shelter.",
        ),
    ]
    extra = verbatim_units(Fragment("c1", 1, comments, "2023-06-09"), [], min_words=5)
    assert [(u.evidence.start, u.fact.text) for u in extra] == [
        (20, 'John told Maria: "We went to the playground with the kids, it was fun."'),
        (22, 'Maria told John: "I volunteer at the shelter."'),
    ]


def test_a_turn_inside_a_span_whose_words_the_fact_does_not_carry_gets_its_own_unit():
    from ftamem_core.construction.extraction import Fragment, verbatim_units
    from ftamem_core.models import Turn

    turns = [
        Turn(idx=10, role="user", speaker="Caroline", text="I'm keen on counseling or working in mental health."),
        Turn(idx=11, role="user", speaker="Melanie", text="You would be a great counselor, Caroline! Look!"),
        Turn(idx=12, role="user", speaker="Caroline", text="Is this your own painting?"),
        Turn(
            idx=13,
            role="user",
            speaker="Melanie",
            text="Yeah, I painted that lake sunrise last year! It's special to me.",
        ),
    ]
    frag = Fragment("c1", 1, turns, "2023-05-08")
    unit = make_unit("c1", "Caroline is keen on counseling or working in mental health.", 10, 13)
    extra = verbatim_units(frag, [unit], min_words=6)  # its span covers turn 13, its fact does not tell it
    # the question it answers comes with it, in its fact and its span: "that lake" is the painting's
    assert [(u.evidence.start, u.fact.text) for u in extra] == [
        (
            12,
            'Caroline asked "Is this your own painting?"; '
            'Melanie told Caroline: "Yeah, I painted that lake sunrise last year! It\'s special to me."',
        )
    ]
    told = make_unit("c1", "Melanie painted a lake sunrise last year.", 13, 13)
    assert verbatim_units(frag, [unit, told], min_words=6) == []  # carried by a unit


def test_between_peers_a_remark_without_i_or_we_that_answers_nothing_is_not_copied():
    from ftamem_core.construction.extraction import Fragment, verbatim_units

    turns = [
        # no "I", but it may answer a question before the fragment
        Turn(idx=0, role="user", speaker="Gina", text="Signed up for a kickboxing class at the gym near work."),
        Turn(idx=1, role="user", speaker="Jon", text="Kickboxing is a perfect way to stay in shape and de-stress."),
        Turn(idx=2, role="user", speaker="Gina", text="Do you do any sport these days, besides the dancing?"),
        Turn(idx=3, role="user", speaker="Jon", text="Mostly running along the river, three mornings a week."),
        Turn(idx=4, role="user", speaker="Gina", text="Running is a great way to clear the head after a long day."),
        Turn(idx=5, role="user", speaker="Jon", text="We should go for a run together next weekend, by the river."),
        Turn(idx=6, role="user", speaker="Gina", text="Look at this! [shares a photo of a river path at dawn]"),
        Turn(idx=7, role="user", speaker="Jon", text="The river path was packed with runners last Sunday."),
    ]
    frag = Fragment("c1", 1, turns, "2023-01-20")
    copied = [u.evidence.end for u in verbatim_units(frag, [], min_words=6, peers=True)]
    # the remarks (1, 4) go; an answer without "I" (3), a plan with "we", a photo and a time told stay
    assert copied == [0, 3, 5, 6, 7]
    # not between peers (a counseling client speaks of others without "I"): every statement is kept
    assert [u.evidence.end for u in verbatim_units(frag, [], min_words=6)] == [0, 1, 3, 4, 5, 6, 7]


def test_a_copy_that_answers_a_question_quotes_it_and_takes_its_turn():
    from ftamem_core.construction.extraction import (
        Fragment,
        stated_anchors,
        verbatim_units,
        with_stated_time,
        with_turn_anchors,
    )
    from ftamem_core.evaluation.unit_counts import pronoun_led, quoted

    turns = [
        Turn(idx=4, role="assistant", speaker="Counselor", text='Thanks. When you say "fine", how did that feel?'),
        Turn(idx=5, role="user", speaker="Daniel", text="Guilty at first, honestly. But relieved to sleep again."),
        Turn(idx=6, role="user", speaker="Daniel", text="Did I tell you? My dad moved into a care home."),
        Turn(idx=7, role="user", speaker="Daniel", text="It was his own choice, which helped a lot."),
    ]
    answer, moved, choice = verbatim_units(Fragment("c1", 1, turns, "2025-10-10"), [], min_words=4)
    assert answer.fact.text == (
        "Counselor asked \"When you say 'fine', how did that feel?\"; "
        'Daniel told Counselor: "Guilty at first, honestly. But relieved to sleep again."'
    )
    assert (answer.evidence.start, answer.evidence.end) == (4, 5)
    assert quoted(answer.fact.text) == ("Guilty at first, honestly. But relieved to sleep again.", True)
    assert not pronoun_led(answer.fact.text)  # the counts read it as a quote of Daniel's words
    # the asker's words lend the copy no feeling, intention or time
    asked = [
        Turn(
            idx=24,
            role="user",
            speaker="Mel",
            text="I'm so excited to go camping next month! Any fun plans for the summer?",
        ),
        Turn(idx=25, role="user", speaker="Caro", text="Researching adoption agencies, a dream of mine."),
    ]
    *_, copy = verbatim_units(Fragment("c1", 1, asked, "2025-10-10"), [], min_words=4)
    assert (copy.evidence.start, copy.fact.participants) == (24, ["Caro"])
    anchors = stated_anchors(asked, ["Mel", "Caro"])
    assert 24 in anchors and 25 not in anchors
    assert with_turn_anchors(copy, anchors, asked).affect.intention_or_plan == "unknown"
    assert with_stated_time(copy, asked, ["Mel", "Caro"]).time.time_orientation == "unknown"
    # without speakers' names, the roles tell who asked
    nameless = [t.model_copy(update={"speaker": ""}) for t in turns[:2]]
    (copy,) = verbatim_units(Fragment("c1", 1, nameless, "2025-10-10"), [], min_words=4)
    assert copy.fact.text.startswith('assistant asked "When you say') and copy.evidence.start == 4
    # a question of the speaker's own, or none, is no question answered
    assert moved.fact.text.startswith("Daniel told Counselor:") and moved.evidence.start == 6
    assert choice.fact.text.startswith("Daniel told Counselor:") and choice.evidence.start == 7


def test_a_joint_subject_only_one_speaker_tells_becomes_that_speaker():
    from ftamem_core.construction.extraction import Fragment, UnitOut
    from ftamem_core.construction.repairs.speaker import correct_speaker
    from ftamem_core.models import Turn
    from scripted import unit as unit_json

    turns = [
        Turn(
            idx=3,
            role="user",
            speaker="John",
            text="We had a family dinner last night, we made pizza and laughed a lot.",
        ),
        Turn(idx=4, role="user", speaker="Maria", text="Looks delicious! Pizza nights are the best."),
    ]
    frag = Fragment("c1", 1, turns, "2023-05-08")
    joint = to_unit(
        UnitOut.model_validate(unit_json("John and Maria are laughing a lot while making pizza.", 3, 4)), frag
    )
    fixed = correct_speaker(joint, turns, ["John", "Maria"])
    assert fixed.fact.text == "John is laughing a lot while making pizza."
    flipped = joint.model_copy(update={"fact": joint.fact.model_copy(update={"text": "Maria and John made pizza."})})
    assert correct_speaker(flipped, turns, ["John", "Maria"]).fact.text == "John made pizza."
    # both tell it in the first person: both stay
    both = [turns[0], Turn(idx=4, role="user", speaker="Maria", text="We made pizza together, I laughed a lot too.")]
    assert correct_speaker(joint, both, ["John", "Maria"]).fact.text == joint.fact.text


def test_min_units_grows_with_the_persons_substantive_turns():
    from ftamem_core.construction.extraction import min_units
    from ftamem_core.models import Turn

    long = "I went to the clinic about my sleep and they changed my medication dose"
    turns = [Turn(idx=i, role="user" if i % 2 == 0 else "assistant", speaker="A", text=long) for i in range(12)]
    assert min_units(turns, 6, 3) == 2  # six of the person's turns
    assert min_units(turns[:1], 6, 3) == 1  # one is enough for a unit
    assert min_units(turns, 6, 0) == 0  # the paper: the model may return none
    assert min_units([t.model_copy(update={"role": "user"}) for t in turns], 6, 3) == 4
    # short turns that say something together: one unit
    short = [t if t.role == "assistant" else t.model_copy(update={"text": "My mom died."}) for t in turns]
    assert min_units(short, 6, 3) == 1
    # fewer words of the person in all, however long the listener's turns: the model may return none
    filler = [t if t.role == "assistant" else t.model_copy(update={"text": ""}) for t in turns]
    filler[0] = filler[0].model_copy(update={"text": "yes okay"})
    assert min_units(filler, 6, 3) == 0


def test_the_speaker_check_judges_a_later_sentence_alone():
    from ftamem_core.construction.extraction import UnitOut
    from ftamem_core.construction.repairs.speaker import correct_speaker
    from ftamem_core.models import Turn
    from scripted import unit as unit_json

    turns = [
        Turn(idx=0, role="user", speaker="Ilse", text="I'm here for you. [shares a photo of a harbour at dawn]"),
        Turn(idx=1, role="user", speaker="Oskar", text="Where did you take it?"),
        Turn(
            idx=2,
            role="user",
            speaker="Ilse",
            text="I took it at the harbour last month; I felt calm watching the dawn.",
        ),
    ]
    frag = Fragment("c1", 1, turns, "2023-05-08")
    peers = ["Ilse", "Oskar"]

    def fact(text):
        u = to_unit(UnitOut.model_validate(unit_json(text, 0, 2)), frag)
        return u.model_copy(update={"fact": u.fact.model_copy(update={"participants": ["Ilse"]})})

    fixed = correct_speaker(
        fact("Ilse took a photo of the harbour at dawn. Oskar shared a photo of the harbour."), turns, peers
    )
    assert fixed.fact.text == "Ilse took a photo of the harbour at dawn. Ilse shared a photo of the harbour."
    right = fact("Ilse took a photo of the harbour at dawn. Oskar asked where.")
    assert correct_speaker(right, turns, peers) == right
    both = fact("Ilse took a photo of the harbour. Oskar felt calm, and Ilse felt calm too.")  # two names: left
    assert correct_speaker(both, turns, peers) == both
    # two names in clauses of their own: each clause judged alone
    clauses = fact("Ilse took a photo of the harbour. Oskar took it last month; Ilse felt calm watching the dawn.")
    assert correct_speaker(clauses, turns, peers).fact.text == (
        "Ilse took a photo of the harbour. Ilse took it last month; Ilse felt calm watching the dawn."
    )
    kept = fact("Ilse took a photo of the harbour. Ilse took it last month;Oskar asked where.")
    assert correct_speaker(kept, turns, peers) == kept  # right as written: unchanged, spacing too
    # the first sentence alone, when the whole fact passes (most of its words are Oskar's)
    told = [
        Turn(idx=0, role="user", speaker="Ilse", text="I felt calm watching the dawn."),
        Turn(idx=1, role="user", speaker="Oskar", text="I rewrote the bus timetable for the depot staff."),
    ]
    first = fact("Oskar felt calm watching the dawn. Oskar rewrote the bus timetable for the depot staff.")
    assert correct_speaker(first, told, peers).fact.text == (
        "Ilse felt calm watching the dawn. Oskar rewrote the bus timetable for the depot staff."
    )


def test_the_speaker_check_is_repeated_until_the_fact_passes_it_and_gives_up_on_a_cycle():
    from ftamem_core.construction.extraction import UnitOut
    from ftamem_core.construction.repairs.speaker import correct_speaker, settled_speaker
    from ftamem_core.models import Turn
    from scripted import unit as unit_json

    turns = [
        Turn(idx=0, role="user", speaker="Ilse", text="They sure look like they do! Adorable!"),
        Turn(
            idx=1,
            role="user",
            speaker="Oskar",
            text="Thanks! The turtles might be small, but both sure have big "
            "personalities. I really recommend having something like these little guys for times of stress.",
        ),
    ]
    frag = Fragment("c1", 1, turns, "2023-05-08")
    peers = ["Ilse", "Oskar"]

    def fact(text):
        return to_unit(UnitOut.model_validate(unit_json(text, 0, 1)), frag)

    # one pass swaps the whole fact and so breaks its second sentence; the next sets that right
    wrong = fact(
        "Ilse says the turtles might be small, but both sure have big personalities. Oskar recommends "
        "having something like these little guys for times of stress."
    )
    once = correct_speaker(wrong, turns, peers)
    assert once.fact.text.startswith("Oskar says") and "Ilse recommends" in once.fact.text
    settled = settled_speaker(wrong, turns, peers)
    assert settled.fact.text == (
        "Oskar says the turtles might be small, but both sure have big personalities. "
        "Oskar recommends having something like these little guys for times of stress."
    )
    assert settled_speaker(settled, turns, peers) == settled  # a fact that passes is left as it is
    # both speakers' words, clause by clause: every naming is changed again by the next pass
    mixed = [
        Turn(
            idx=0,
            role="user",
            speaker="Ilse",
            text="Pepper took a bit to get used to her, but now they're always together!",
        ),
        Turn(
            idx=1,
            role="user",
            speaker="Oskar",
            text="That's great to hear! I'm considering getting a dog too, "
            "but it can be challenging finding a dog-friendly place in the city.",
        ),
    ]
    cycling = fact(
        "Ilse wants to get a dog; Oskar is considering getting a dog too, but it can be challenging finding "
        "a dog-friendly place in the city."
    )
    assert correct_speaker(correct_speaker(cycling, mixed, peers), mixed, peers).fact.text == cycling.fact.text
    assert settled_speaker(cycling, mixed, peers) is None


def test_a_photo_caption_does_not_carry_what_the_person_said_with_it():
    from ftamem_core.construction.extraction import UnitOut, verbatim_units

    turns = [
        Turn(idx=14, role="user", speaker="Ines", text="Look at this! [shares a photo of a dvd on a shelf]"),
        Turn(
            idx=15,
            role="user",
            speaker="Ines",
            text="I first watched that film around three years ago. [shares a photo of a dvd cover]",
        ),
    ]
    frag = Fragment("c1", 1, turns, "2023-05-08")
    described = to_unit(UnitOut.model_validate(unit("Ines shares a photo of a dvd on a shelf.", 14, 15)), frag)
    # "photo" and "dvd" are turn 15's caption, not the film it was watched three years ago
    blind = verbatim_units(frag, [described], 6)
    assert [u.evidence.end for u in blind] == [15] and "three years ago" in blind[0].fact.text
    # a turn that is its photo is carried by what the photo shows, not by "shares a photo of"
    poster = Turn(
        idx=13, role="user", speaker="Ines", text="It's a good one, you know. [shares a photo of a poster of a bench]"
    )
    frag = Fragment("c1", 1, [poster, *turns], "2023-05-08")
    described = described.model_copy(update={"evidence": described.evidence.model_copy(update={"start": 13})})
    blind = verbatim_units(frag, [described], 6)
    assert [u.evidence.end for u in blind] == [13, 15]
