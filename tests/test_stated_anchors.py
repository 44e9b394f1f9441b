"""Setting stated_anchors (issue 39): a unit without a feeling, an intention or a time orientation
takes those its speaker states about themselves in their own words (English rules)."""

import pytest

from ftamem_core.config import load_settings
from ftamem_core.construction.builder import Builder
from ftamem_core.construction.extraction import stated_anchors, with_turn_anchors
from ftamem_core.governance import consent
from ftamem_core.models import (
    AffectAnchor,
    Case,
    CaseDocument,
    Evidence,
    FactAnchor,
    FTAUnit,
    Session,
    SessionDocument,
    Turn,
)
from ftamem_core.text.english_feelings import feelings, intentions, relations
from ftamem_core.text.english_time import orientation

from scripted import HashEmbedder, Pipeline, section, turn_indices, unit


@pytest.mark.parametrize(
    "said, felt",
    [
        ("I felt ashamed all weekend.", ["ashamed"]),
        ("I was so excited and nervous about the new job!", ["excited and nervous"]),
        ("I'm torn, honestly.", ["torn"]),
        ("I feel sad but good.", ["sad but good"]),
        ("Sitting by the lake calms me.", ["calm"]),
        ("It made me feel so grateful.", ["grateful"]),
        ("I'm really not that happy with my job.", ["not happy"]),
        ("I wasn\u2019t scared at all.", ["not scared"]),
        ("I have been feeling overwhelmed lately.", ["overwhelmed"]),
        ("Guilty at first, honestly. But relieved.", ["guilty", "relieved"]),  # answers to "how did it feel?"
        ("Sad but lighter. The night calls have stopped.", ["sad but lighter"]),
        ("Lighter. I still get anxious before my shifts.", ["anxious", "lighter"]),
        ("I'm so stoked about it.", ["stoked"]),
        ("After that I am totally shattered.", ["shattered"]),
        ("I'm over the moon because the wholesaler said yes.", ["over the moon"]),
        # what an experience of theirs was like, in their words
        ("I went to the support group yesterday and it was so powerful.", ["it was so powerful"]),
        ("It was an awesome feeling of accomplishment!", ["it was an awesome feeling"]),
        ("It's been bumpy, but I'm determined.", ["determined", "it's been bumpy"]),
        ("I painted that lake last year. It's special to me.", ["it's special"]),
        ("I love helping the community, it matters.", ["love helping the community"]),
        ("Walking by the sea inspires me.", ["inspired"]),
        # told without "I", with what it is about
        ("Super excited for what's next!", ["excited"]),
        ("Kinda jealous of all those fun outings with them.", ["jealous"]),
        ("I just signed with a new team - excited for the season!", ["excited"]),
        ("Not worried about it anymore.", ["not worried"]),
        ("I'm not sure why - excited about it though.", ["excited"]),  # the "not" before the dash is not its
        ("Super excited!", ["excited"]),
        ("I feel connected when I'm there.", ["connected"]),
        # what an experience or a person gives them, in their words
        ("Me and my team had a blast to the very end!", ["had a blast"]),
        ("I never liked parties. We had a blast at the zoo.", ["had a blast"]),  # the "never" is not its
        ("I've had them for 3 years now and they bring me tons of joy!", ["bring me tons of joy"]),
        ("They mean the world to me.", ["mean the world to me"]),
        ("Contemporary dance is so expressive - it really speaks to me.", ["speaks to me"]),
        ("I won my first video game tournament last week - so exciting!", ["so exciting"]),
        ("But I do love animals.", ["love animals"]),
        # dev LoCoMo turns the rules missed before
        ("The support group has made me feel accepted and given me courage.", ["accepted", "given me courage"]),
        (
            "My family are my rocks - they motivate me and give me the strength to push on.",
            ["motivated", "give me the strength"],
        ),
        ("Running or playing my violin, which refreshes me.", ["refreshed"]),
        ("I've always been awed by birds.", ["awed"]),
        ("Eagles have always mesmerized me; they're so strong!", ["mesmerized"]),
        ("I finished my screenplay, such a relief to have it done!", ["such a relief"]),
        ("It never calmed me.", ["not calm"]),
        ("They don't motivate me anymore.", ["not motivated"]),
        ("Nothing calms me anymore.", ["not calm"]),
        ("Oh no, that scares me.", ["scared"]),  # the "no" is not its
        ("Nothing else calms me like the ocean.", ["calm"]),
        ("I feel accepted at church.", ["accepted"]),
        # their own eagerness, in their words (dev LoCoMo closes plans so)
        ("Finishing up choreography for the festival next month. Can't wait!", ["can't wait"]),
        ("Hope I find one soon. Can't wait!", ["can't wait"]),
        ("Same! Looking forward to it.", ["looking forward"]),
        ("I can't wait for things to get back to normal.", ["can't wait"]),
        ("We love climbing, sliding, and playing games.", ["love climbing"]),
        ("Oh, I've been to Paris yesterday! It was sooo cool.", ["it was sooo cool"]),
        ("Sooo excited!", ["excited"]),
        # feelings as nouns: listed, named, given (dev LoCoMo turns)
        (
            "I'm feeling a rollercoaster of emotions - relief, excitement, some anxiety - over finishing it.",
            ["relief, excitement, anxiety"],
        ),
        ("I keep bouncing between crazy emotions like relief, excitement and worry!", ["relief, excitement, worry"]),
        ("I had a feeling of gratitude just sitting there with my family.", ["gratitude"]),
        ("Hearing the gratitude fills me with so much joy.", ["fills me with so much joy"]),
        ("It filled my heart with joy.", ["filled my heart with joy"]),
        ("They brought so much joy to my life.", ["brought so much joy to my life"]),
        ("I'm having so much fun!", ["having so much fun"]),
        ("We've been having a blast.", ["having a blast"]),
        ("I had an incredible time.", ["had an incredible time"]),
        # as seekers write them in chat (ESConv train): no apostrophe, an adverb in -ly, no "I'm"
        ("im feeling so bad", ["bad"]),
        ("Im really nervous about my finals", ["nervous"]),
        ("Ive been so stressed", ["stressed"]),
        ("I'm mainly worried that she'll throw me out.", ["worried"]),
        ("I definetely feel somewhat worthless now.", ["worthless"]),
        ("I'm so emotionally exhausted.", ["exhausted"]),
        ("I'm lonely and sad.", ["lonely and sad"]),
        ("Yeah, I feel a lot calmer now", ["calmer"]),
        ("Feeling pretty down.", ["down"]),
        ("Yeah, feeling a bit anxious", ["anxious"]),
        ("I feel much better after talking.", ["better"]),
        ("I actually feel a little better.", ["better"]),
        # denied before the verb (a fresh review's cases)
        ("It doesn't make me feel better.", ["not better"]),
        ("Nothing makes me feel good anymore.", ["not good"]),
        ("Nothing's calming me down.", ["not calm"]),
        ("Feeling really not happy lately.", ["not happy"]),
        ("I'm a lot more relaxed now.", ["relaxed"]),
        ("That does make me feel better.", ["better"]),
        ("I'm not feeling better.", ["not better"]),
        ("I just feel ugly and gross.", ["ugly and gross"]),  # not an adverb in -ly
        ("I do feel anxious every time.", ["anxious"]),
        ("I am feeling great right now.", ["great"]),
        ("You have certainly made me feel a bit more positive.", ["positive"]),
        ("And it's stressing me out how little I've done.", ["stressed"]),
        # states a person calls their own or says they have
        ("I'm here to talk about my anxiety over the pandemic.", ["anxiety"]),
        ("I definitely have depression.", ["depression"]),
        ("Talking to you now, I feel renewed hope.", ["hope"]),
        ("I've been feeling so much stress.", ["stress"]),
        ("I'm really struggling with depression lately.", ["depression"]),
        ("I'm sooo looking forward to it.", ["looking forward"]),
    ],
)
def test_a_feeling_the_speaker_states_is_found_in_their_words(said, felt):
    assert feelings(said) == felt


@pytest.mark.parametrize(
    "said",
    [
        "I'm so proud of you for finishing it!",  # the listener's news
        "I'm glad to hear that.",
        "I'm not sure.",
        "I'm good, thanks.",  # an answer to "how are you"
        "I'm down to help with the move.",  # another sense
        "I'm bad at maths.",
        "You seem sad.",  # the listener's reading, not a statement
        "She was angry.",  # about someone else
        "Lost my job last week.",  # a verb, not an answer
        "Happy birthday!",
        "Wow, that's great!",  # a present judgement without "I": the listener's news
        "That must've been amazing for the kids.",
        "It looks awesome!",
        "I love your idea.",
        "So happy for you!",  # the listener's news, told without "I"
        "Down to help with the move.",  # another sense
        "She was excited for the trip.",  # someone else's
        "My daughter - excited for her first day of school.",  # hers: no "I" before the dash
        "Lost to the Lakers again last night.",  # another sense
        "I hope they have fun at the party.",  # a wish, not told
        "I can picture you all having a blast.",  # the listener's
        "Your encouragement means a lot to me.",  # thanks
        "The game - amazing!",  # no "I" before the dash
        "My husband speaks to me like I'm a child.",
        "Nothing gives me joy anymore.",  # negated
        "I haven't had fun in ages.",
        "The kids had a blast at the zoo.",  # theirs
        "I was connected with a new therapist.",  # a passive
        "I'm supported by a grant.",
        "I was accepted into the program.",  # admission news
        "I got accepted!",
        "I need something to calm me down.",  # wished, tried or asked for, not felt
        "They tried to scare me.",
        "Please don't stress me out.",
        "Mom said it was such a relief to have Dad home.",  # Mom's
        "Dad is finally home - it must be such a relief for Mom.",
        "My husband can't wait to retire.",  # his
        "I can't wait any longer.",  # impatience
        "I can't wait around for him to change.",
        "Can't wait to see the pics!",  # the listener's news
        "I can't wait to hear more about it.",
        "I'm not looking forward to it.",  # a dread, not eagerness
        "Looking forward, I want to focus on my health.",  # from now on
        "We love you guys!",  # the listeners
        "I help people with anxiety.",  # a feeling noun, not theirs
        "Dance is my stress relief.",
        "It gave them a sense of pride.",  # theirs, no "I" in it
        "I felt no sense of pride.",  # negated
        "Nothing fills me with hope anymore.",
        "I don't have feelings like that anymore.",
        "I hope you're having fun!",  # the listener's
        "I hope they have fun.",
        "I'm better.",  # an answer to "how are you"
        "I'm better off alone.",
        "I would feel better if he called.",
        "That would make me feel better.",  # not felt yet
        "Seeing them will hopefully make me happy.",
        "I'm early for the meeting.",
        "Feeling happy for you!",  # the listener's news
        "I'm good.",
        "I feel good at math.",  # another sense
        "I'm positive that he lied.",  # sure
        "My hope is that he calls.",
        "I have a dog.",
        "I help people dealing with anxiety.",
        "I'm struggling with my workload.",  # a difficulty; read blind, "struggling" left out what it was about
        # a fresh review's cases: denied, someone else's, advice, compounds, wishes, other senses
        "I rarely feel happy these days.",
        "I'm hardly worried about it.",
        "Feeling nervous before a performance is totally normal.",
        "My daughter struggles with feelings of anxiety and sadness.",
        "My mom felt a sense of relief when I left.",
        "I'm dealing with a lot of anger from my dad.",
        "I have anger management class tomorrow.",
        "I have some comfort food in the fridge.",
        "Seeing them would fill me with joy.",
        "I felt great pain.",
    ],
)
def test_no_feeling_where_the_speaker_states_none_of_their_own(said):
    assert feelings(said) == []


@pytest.mark.parametrize(
    "said, plans",
    [
        ("I want to apply at the bank next month.", ["apply at the bank next month"]),
        ("I'm planning to start a support group and see how it goes.", ["start a support group"]),
        ("I'm going to the park tomorrow.", ["go to the park tomorrow"]),
        ("I'll definitely keep pursuing my writing.", ["keep pursuing my writing"]),
        ("I'll let you know.", []),
        ("I'll definitely check it out!", []),  # an answer to a tip, about "it"
        ("I will not be able to pay my bills.", []),  # a fear, not a plan
        ("I want to say thanks.", []),
        ("We're thinking about going camping next month.", ["going camping next month"]),
        ("We'll get through this!", []),  # encouragement, not a plan
        ("I will try to breathe before I answer her.", ["try to breathe before I answer her"]),
        ("I will try this.", []),
        ("Gonna continue my studies and look at careers.", ["continue my studies"]),
        ("I'm looking forward to trying out new flavors.", ["trying out new flavors"]),
        ("Can't wait to see them on stage!", []),  # about "them"
        ("My husband can't wait to get rid of me.", []),  # his wish, not the speaker's
        ("Can't wait to start my new job!", ["start my new job"]),
        ("I need to find a dog-friendly spot soon so I can hike.", ["find a dog-friendly spot soon"]),
        ("I think I should drop my minor.", ["drop my minor"]),
        ("We should plan a dance session soon!", ["plan a dance session soon"]),
        ("I'm off to go swimming with the kids.", ["go swimming with the kids"]),
        ("I'm considering getting a dog too.", ["getting a dog too"]),
        ("I think I'll write her a message this weekend.", ["write her a message this weekend"]),
        ("Lena thinks I should visit him every day.", []),  # Lena's plan for them
        ("Mom said I need to call the clinic.", []),
        ("I should have known.", []),  # a regret
        # a plan that refers back and says more (dev LoCoMo)
        ("Now I'm gonna submit it to some film festivals.", ["submit it to some film festivals"]),
        ("I'm going to make it for my family this weekend.", ["make it for my family this weekend"]),
        ("I'll definitely add it to my list.", []),  # an answer to a tip
        ("Gonna give it a go.", []),
        ("I'm gonna make it happen!", []),
        ("I'd love to take them there sometime.", []),
        ("I'll keep it in mind.", []),  # replies to a tip
        ("I'll give it some thought.", []),
        ("I'll take that into consideration.", []),
        ("I should of left sooner.", []),
        ("I have to go now, thanks for listening.", []),  # leaving the chat
        ("My parents think I should move back home.", []),
        ("I was told I need to rest for a week.", []),
        ("I really think I should talk to her.", ["talk to her"]),  # their own "I think"
        ("I should probably have called her.", []),  # a regret
        ("Thanks, Mel! My goal is to give kids a loving home.", ["give kids a loving home"]),
        ("That makes me want to hike with my dogs.", ["hike with my dogs"]),
        ("Nothing makes me want to go running anymore.", []),
        ("That movie made me want to cry all night.", []),  # a past urge
        # "those" with who they are refers to nothing said before
        ("I'd love to support those with similar issues.", ["support those with similar issues"]),
        ("I'd love to visit those again.", []),
        ("I need to fix those at home.", ["fix those at home"]),  # says where
    ],
)
def test_a_plan_the_speaker_states_is_found_and_small_talk_is_not(said, plans):
    assert intentions(said) == plans


@pytest.mark.parametrize(
    "said, told",
    [
        ("I went to a support group yesterday.", "past"),
        ("Just got back from a road trip, it was fun!", "past"),
        ("I used to compete in dance shows.", "past"),
        ("I'm going to apply at the bank next month.", "future"),
        ("We'll go camping soon.", "future"),
        ("I'm starting a dance studio.", "present"),
        ("I'm planning to explore the city and try the food.", "future"),
        ("Family is everything.", "present"),
        ("Lost my job yesterday, so I'm gonna start my own business.", "mixed"),
        ("I painted it last year and I'm hoping to sell it.", "mixed"),
        ("I went there and I'm so happy.", "past"),  # a feeling about the event is no second time
        ("Wow!", "unknown"),
        ("I would like to be your friend but I have nothing to give.", "future"),  # "have" is no perfect here
        ("I've tried the job sites.", "past"),
        ("Being surrounded by my teammates is like a family.", "present"),  # a gerund is no name
        # ordinary counseling English a reviewer tried
        ("My son won't talk to me.", "future"),  # "won't" is no "won"
        ("So stressed about my exams.", "unknown"),  # a feeling in a word is no past verb
        ("Exhausted.", "unknown"),
        ("I lost my job.", "past"),  # a feeling word, and a past verb after its subject
        ("Lost my job.", "past"),
        ("I'm still not used to living alone.", "present"),
        ("I have no will to live anymore.", "present"),
        ("I went to the party last night and I'm feeling great.", "past"),
        ("I haven't slept in days.", "past"),
        ("I've been painting a lot.", "present"),
    ],
)
def test_the_time_a_statement_tells_of_is_read_from_its_tense_and_time_words(said, told):
    assert orientation(said) == told


TURNS = [
    Turn(idx=0, role="user", speaker="Omar", text="My grandmother died two days ago and I feel numb and lost."),
    Turn(idx=1, role="assistant", speaker="Coach", text="I am so sad to hear that, Omar. You must be exhausted."),
    Turn(idx=2, role="user", speaker="Omar", text="Thanks. I want to visit her grave on Sunday with my brother."),
]


def test_anchors_come_from_the_persons_turns_only():
    anchors = stated_anchors(TURNS, ["Omar"])
    assert anchors[0] == AffectAnchor(emotion_or_state="numb and lost", relation_cues="Omar's grandmother")
    assert 1 not in anchors  # the assistant's words are not the person's feelings
    assert anchors[2].intention_or_plan == "visit her grave on Sunday with my brother"
    assert anchors[2].relation_cues == "Omar's brother"


@pytest.mark.parametrize(
    "said, people",
    [
        ("I'm lucky to have my husband and kids; they keep me motivated.", ["husband", "kids"]),
        ("My friends, family and mentors are my rocks.", ["friends", "family", "mentors"]),
        ("My sister Priya lives in Leeds.", ["sister"]),
        ("I miss my best friend and my late father.", ["best friend", "late father"]),
        ("Here's a photo of my family's dog.", ["family"]),  # the possessor
        ("Our furry friends make great cuddle buddies.", []),  # "furry" is no relation's word
        ("My ex-wife texted me and my mother-in-law called.", ["ex-wife", "mother-in-law"]),
        ("My ex is back.", ["ex"]),
        ("My mom & dad came.", ["mom", "dad"]),
        ("I told my husband\nand kids.", ["husband", "kids"]),
        ("I want to be brave for my family- they motivate me.", ["family"]),  # a dash, not a hyphen
        ("My son and daughter-in-law came.", ["son", "daughter-in-law"]),
        ("My best friend's mom died.", ["best friend"]),  # the possessor is the speaker's
        ("I love my own kids.", ["kids"]),
        ("I had a fight with my best friend.", ["best friend"]),
        ("Thanks, my friend!", []),  # the listener, addressed
        ("Stay safe my friend.", []),
        ("Your mom sounds lovely.", []),  # the listener's
        ("My mom, my dad, my sister and my brother came.", ["mom", "dad", "sister"]),  # at most three
    ],
)
def test_the_people_a_speaker_names_by_their_relation_are_found(said, people):
    assert relations(said) == people


def _unit(start, end, who=("Omar",), feeling="unknown"):
    return FTAUnit(
        case_id="c",
        fact=FactAnchor(text="Omar said something.", participants=list(who)),
        affect=AffectAnchor(emotion_or_state=feeling),
        evidence=Evidence(session_id=1, start=start, end=end),
    )


def test_a_unit_without_a_feeling_takes_its_speakers_turn_and_keeps_its_own():
    anchors = {
        0: AffectAnchor(emotion_or_state="grieving"),
        1: AffectAnchor(emotion_or_state="sympathetic"),
        2: AffectAnchor(intention_or_plan="visit the grave on Sunday"),
    }
    copied = with_turn_anchors(_unit(0, 0), anchors, TURNS)
    assert copied.affect.emotion_or_state == "grieving" and copied.affect.intention_or_plan == "unknown"
    whole = with_turn_anchors(_unit(0, 2), anchors, TURNS)
    assert whole.affect.emotion_or_state == "grieving"
    assert whole.affect.intention_or_plan == "visit the grave on Sunday"
    assert with_turn_anchors(_unit(0, 2, feeling="sad"), anchors, TURNS).affect.emotion_or_state == "sad"
    coach = with_turn_anchors(_unit(0, 2, who=("Coach",)), anchors, TURNS)
    assert coach.affect.emotion_or_state == "sympathetic"  # the unit's own person's turn first


def test_a_feeling_before_a_tag_question_is_read_as_stated():
    # "you know?" asks nothing; a sentence that opens as a question still is one
    turns = [
        Turn(idx=0, role="user", speaker="Omar", text="I lost my job. I feel so tired, you know?"),
        Turn(idx=1, role="user", speaker="Omar", text="Should I feel guilty, right?"),
    ]
    anchors = stated_anchors(turns, ["Omar"])
    assert anchors[0].emotion_or_state == "tired"
    assert 1 not in anchors


def test_a_turn_without_a_speaker_names_its_role_and_the_fact_check_is_not_fooled():
    turns = [Turn(idx=0, role="user", speaker="", text="My husband left me.")]
    assert stated_anchors(turns, [])[0].relation_cues == "user's husband"
    seeker = [Turn(idx=0, role="user", speaker="seeker", text="My husband left me.")]
    unit_ = _unit(0, 0, who=("seeker",)).model_copy(
        update={"fact": FactAnchor(text="Seeker's husband left.", participants=["seeker"])}
    )
    assert (
        with_turn_anchors(unit_, stated_anchors(seeker, ["seeker"]), seeker).affect.relation_cues == "seeker's husband"
    )
    nameless = _unit(0, 0, who=("",)).model_copy(update={"fact": FactAnchor(text="Someone left.", participants=[""])})
    anchors = {0: AffectAnchor(relation_cues="user's husband")}
    assert with_turn_anchors(nameless, anchors, turns).affect.relation_cues == "unknown"


def test_a_unit_takes_relations_only_from_a_speaker_its_fact_names():
    anchors = {0: AffectAnchor(relation_cues="Omar's grandmother"), 1: AffectAnchor(relation_cues="Coach's team")}
    both = ("Omar", "Coach")
    assert with_turn_anchors(_unit(0, 1, who=both), anchors, TURNS).affect.relation_cues == "Omar's grandmother"
    about_coach = _unit(1, 1, who=both).model_copy(
        update={"fact": FactAnchor(text="Coach listened to Omar.", participants=list(both))}
    )
    assert with_turn_anchors(about_coach, anchors, TURNS).affect.relation_cues == "Coach's team"
    nobody = _unit(0, 1, who=both).model_copy(update={"fact": FactAnchor(text="They talked.", participants=list(both))})
    assert with_turn_anchors(nobody, anchors, TURNS).affect.relation_cues == "unknown"


def _build(store, on: bool):
    doc = CaseDocument(case=Case(id="g"), sessions=[SessionDocument(session=Session(source_id="s1"), turns=TURNS)])
    store.ingest([doc])
    consent.record(store, "g", "granted", "test", "scripted case")
    pipeline = Pipeline(seg_size=3)

    def extraction(messages):  # one model unit of the death; the plan is left to the verbatim copy
        idx = turn_indices([{"content": section(messages, "Fragment turns:")}])
        return {
            "memory_units": [
                {
                    **unit("Omar's grandmother died two days ago.", idx[0], idx[0]),
                    "content": {
                        **unit("x", 0, 0)["content"],
                        "participants": ["Omar"],
                        "text": "Omar's grandmother died two days ago.",
                        "emotion_or_state": "unknown",
                    },
                }
            ]
        }

    pipeline.extraction = extraction
    settings = load_settings(environ={}).with_overrides(extraction={"stated_anchors": on})
    Builder(store, pipeline.llm(), HashEmbedder(), settings).build("g")
    return {u.fact.text: u for u in store.units("g")}


def test_a_build_with_the_setting_gives_the_model_unit_and_the_copy_the_stated_anchors(store):
    units = _build(store, on=True)
    assert units["Omar's grandmother died two days ago."].affect.emotion_or_state == "numb and lost"
    copy = next(u for text, u in units.items() if "grave" in text)
    assert copy.affect.intention_or_plan == "visit her grave on Sunday with my brother"
    assert copy.affect.relation_cues == "Omar's brother"
    assert copy.time.time_orientation == "future"  # "I want to visit", "on Sunday"


def test_without_the_setting_no_unit_takes_them(store):
    units = _build(store, on=False)
    assert all(
        u.affect.emotion_or_state == "unknown" and u.affect.intention_or_plan == "unknown" for u in units.values()
    )
    copy = next(u for text, u in units.items() if "grave" in text)
    assert copy.time.time_orientation == "unknown"


@pytest.mark.parametrize("status", ["complete", "partial"])
def test_a_fusion_undone_stores_the_candidate_with_its_turns_anchors(tmp_path, status):
    """Issue 39: a person deletes the carried partial while the model completes it; the candidate
    stored instead of the fused unit has the anchors its turns state, as any other unit."""
    from ftamem_core.governance import editing
    from ftamem_core.storage.store import Store

    from test_construction import SETTINGS, doc

    case = doc()
    first = case.sessions[1].turns[0]  # turn 8, Maya's
    case.sessions[1].turns[0] = first.model_copy(update={"text": "I feel worn out after the night shifts."})
    db = tmp_path / "m.db"
    builder_store, person = Store(db), Store(db)  # the build's store and a person's (two processes)
    builder_store.ingest([case])
    consent.record(builder_store, "c1", "granted", "test", "scripted case")
    pipeline = Pipeline(seg_size=4)

    def extraction(messages):
        idx = turn_indices([{"content": section(messages, "Fragment turns:")}])

        def blank(text, first, last, **kw):
            return {
                **unit(text, first, last, **kw),
                "content": {**unit(text, first, last)["content"], "emotion_or_state": "unknown"},
            }

        if idx[0] == 4:  # the last fragment of session 0 leaves a partial unit
            return {"memory_units": [blank("Maya booked a sleep clinic visit.", 4, 5, status="partial")]}
        if idx[0] == 8:  # while the model completes it, the person deletes it
            (partial,) = [u for u in person.units("c1", None) if u.construction_status == "partial"]
            editing.delete_unit(person, "c1", partial.id, "Dana", "not what she said")
            return {"memory_units": [blank("The visit is on March 12.", 8, 9, completes="p1", status=status)]}
        return {"memory_units": [blank(f"Turns {idx[0]}-{idx[-1]} are about sleep.", idx[0], idx[-1])]}

    pipeline.extraction = extraction
    events = []
    report = Builder(
        builder_store,
        pipeline.llm(),
        HashEmbedder(),
        SETTINGS.with_overrides(extraction={"verbatim_fallback": False, "stated_anchors": True}),
        progress=events.append,
    ).build("c1")
    assert report.status == "done"
    assert any(type(e).__name__ == "FusionUndone" for e in events)
    kept = next(u for u in person.units("c1", None) if u.fact.text == "The visit is on March 12.")
    assert kept.affect.emotion_or_state == "worn out"  # turn 8's feeling, as an unfused unit would get
    builder_store.close()
    person.close()


@pytest.mark.parametrize(
    "sentence, news",
    [
        ("I'm so proud of you for spreading awareness.", True),
        ("I'm glad to hear you've got other things to help you.", True),
        ("I'm so happy for you!", True),
        ("I'm so happy and I got the job.", False),  # a feeling of their own
        ("I'm excited for you, I start my new job tomorrow.", False),  # and news of their own
        ("I went to the park.", False),
    ],
)
def test_a_feeling_about_the_listeners_news_is_not_the_speakers_statement(sentence, news):
    from ftamem_core.construction.extraction import statements
    from ftamem_core.text.english_feelings import listeners_news

    assert listeners_news(sentence) is news
    assert (statements(sentence) == "") is news  # a copy of the turn leaves it out


@pytest.mark.parametrize(
    "turn, kept",
    [
        ("Let's keep going and chase our dreams! We got this!", ""),
        ("Wow, they look great! Keep it up!", ""),
        ("It must have been great to be involved.", ""),
        ("Stay motivated and keep going.", ""),
        (
            "It's a really fun experience. Let me know if you need any tips for visiting.",
            "It's a really fun experience.",
        ),
        ("Talk to you soon! Have a great night.", ""),
        ("I'm always here to support you! I start at the bank on Monday.", "I start at the bank on Monday."),
        ("Yeah, can't wait to see it done! I'll let you know.", ""),
        ("Let\u2019s keep going! I\u2019m always here for you!", ""),  # curly apostrophes
        # what the person tells of someone else is theirs to tell
        (
            "He looks so tired these days. She sounds angry whenever she calls.",
            "He looks so tired these days. She sounds angry whenever she calls.",
        ),
        (
            "Well, I can't wait to see how it goes at the new job.",
            "Well, I can't wait to see how it goes at the new job.",
        ),
        ("Let's keep going. I start my new job tomorrow.", "I start my new job tomorrow."),
        ("Looks like I'll be moving in May.", "Looks like I'll be moving in May."),  # their own news
        # thanks, wishes and hopes for the listener, promises to call on them
        ("Cool, gonna give it a try. Thanks for the suggestion!", "Cool, gonna give it a try."),
        ("Appreciate your kind words. I finished the painting last night.", "I finished the painting last night."),
        ("All the best! Have fun hiking!", ""),
        ("You got it! I hope you find a great spot soon!", ""),
        ("I'll keep you posted. Ttyl, Bye!", ""),
        ("Keep me posted on how your campaign is going.", ""),  # asking for the listener's news
        ("Count me in, John! I'm off to the gym now.", "I'm off to the gym now."),
        ("I couldn't agree more! I start on Monday.", "I start on Monday."),
        ("Count me in for my sister's fundraiser in May.", "Count me in for my sister's fundraiser in May."),
        ("I couldn't take it anymore.", "I couldn't take it anymore."),
        # news of the speaker's own beside thanks, hopes or wishes stays
        (
            "My surgery is on Monday, I'll give you a call after.",
            "My surgery is on Monday, I'll give you a call after.",
        ),
        (
            "I hope you can help me figure out how to talk to my dad about his drinking.",
            "I hope you can help me figure out how to talk to my dad about his drinking.",
        ),
        ("Thanks for coming to Mom's funeral.", "Thanks for coming to Mom's funeral."),
        (
            "All the best restaurants in town closed during the lockdown.",
            "All the best restaurants in town closed during the lockdown.",
        ),
        ("Thanks for all the great advice!", ""),
        (
            "Thanks for asking, I'm doing better since the surgery.",
            "Thanks for asking, I'm doing better since the surgery.",
        ),
        ("Thanks a bunch! Thank you so much.", ""),
        ("I hope to finish my screenplay by May.", "I hope to finish my screenplay by May."),  # their own hope
        ("Enjoying the new job a lot, my boss is great.", "Enjoying the new job a lot, my boss is great."),
        # praise of and sympathy with what the listener showed or told, without "I"
        ("Wow, that photo is great! Cool setup!", ""),
        ("That charity race sounds great, Mel! Congrats on the new job!", ""),
        ("Sorry to hear that. Allergies can be tough.", "Allergies can be tough."),
        ("Aww, so cute! It must be tough.", ""),
        ("Sounds like an awesome immersive experience.", ""),
        ("Wow, love that painting! Those are both great things.", ""),
        # the listener's experience imagined or heard back, at any length
        ("Nice, spotting pretty birds while hiking must be great.", ""),
        ("Must be tough living in the city without the opportunity to go outside.", ""),
        ("Having a second family through sport must be such a great feeling.", ""),
        ("Wow, sounds like they make life so awesome!", ""),
        ("I'll definitely let you know how it goes.", ""),
        # an "I" that only leads into what is said of the listener
        ("I hope you find the perfect dog-friendly spot soon so you can make new memories with them.", ""),
        ("I bet their happy faces mean a lot to you.", ""),
        ("I can't wait to see where you and your furry friend decide to hang out.", ""),
        ("That's awesome, I'm glad they bring so much joy into your life.", ""),
        ("Yeah, I know what you mean. The trail was muddy.", "The trail was muddy."),
        ("I know you're busy, but I need help with the move.", "I know you're busy, but I need help with the move."),
        ("I think you know I quit the bank.", "I think you know I quit the bank."),
        ("I think you're right, it's hard to say goodbye.", "I think you're right, it's hard to say goodbye."),
        ("I think you're right and it's hard to say goodbye.", "I think you're right and it's hard to say goodbye."),
        ("I hope we can visit you in May.", "I hope we can visit you in May."),
        ("I'm glad we got to see you at the wedding.", "I'm glad we got to see you at the wedding."),
        ("Ok, I guess you heard Mel got married.", "Ok, I guess you heard Mel got married."),
        ("After my surgery, I hope you can visit.", "After my surgery, I hope you can visit."),
        # the speaker's feelings, views and news stay
        ("Sad but good. Relieved, mostly.", "Sad but good. Relieved, mostly."),
        ("Hard work pays off eventually.", "Hard work pays off eventually."),
        (
            "That's great, Gina moved to Leeds with her kids last week after the divorce.",
            "That's great, Gina moved to Leeds with her kids last week after the divorce.",
        ),
        ("That was the day Grandpa died.", "That was the day Grandpa died."),
        # a reaction's opening followed by news, or the speaker's own experience, stays
        ("Sorry to hear that, Dad is back in hospital again.", "Sorry to hear that, Dad is back in hospital again."),
        (
            "Love this place, we come here every summer with the kids.",
            "Love this place, we come here every summer with the kids.",
        ),
        ("It must be hard on Mom, Dad is still in hospital.", "It must be hard on Mom, Dad is still in hospital."),
        ("Dad is still in hospital, it must be hard on Mom.", "Dad is still in hospital, it must be hard on Mom."),
        (
            "The exam must have been hard because everyone in class failed.",
            "The exam must have been hard because everyone in class failed.",
        ),
        ("Sounds like Dad will be discharged on Friday.", "Sounds like Dad will be discharged on Friday."),
        (
            "I'll definitely let you know when the baby arrives, due in May.",
            "I'll definitely let you know when the baby arrives, due in May.",
        ),
        ("That was an amazing concert.", "That was an amazing concert."),
        ("That session was really good.", "That session was really good."),
        ("Wow, this new job is great so far.", "Wow, this new job is great so far."),
        ("That's great, Gina moved to Leeds last week.", "That's great, Gina moved to Leeds last week."),
        ("Looks like the surgery is on Monday.", "Looks like the surgery is on Monday."),
        ("Thanks, Jon, it really helped to talk.", "Thanks, Jon, it really helped to talk."),
        # thanks opening news: the news stays; thanks opening a reaction go
        ("Thank you, it really helped to talk.", "Thank you, it really helped to talk."),
        ("Thanks, you're the best!", ""),
        ("Thank you so much, that's really kind.", ""),
        ("Thank you for everything, it means a lot.", ""),
    ],
)
def test_a_copy_leaves_out_encouragement_and_reactions_to_the_listener(turn, kept):
    from ftamem_core.construction.extraction import statements

    assert statements(turn, ["Jon"]) == kept


def test_a_copy_that_tells_of_a_plan_is_dated_ahead():
    from ftamem_core.construction.extraction import Fragment, verbatim_units, with_stated_time

    turn = Turn(idx=3, role="user", speaker="Omar", text="I am going to see the doctor on Friday about my sleep.")
    frag = Fragment("g", 1, [turn], "2025-03-05")  # a Wednesday
    (copy,) = verbatim_units(frag, [], min_words=4)
    assert copy.time.event_time == "2025-02-28"  # the resolver alone reads a past
    dated = with_stated_time(copy, [turn], ["Omar"])
    assert (dated.time.time_orientation, dated.time.event_time) == ("future", "2025-03-07")
    assert dated.time.completion == "pending"  # a plan not yet done


@pytest.mark.parametrize(
    "text, orientation, completion",
    [
        ("I went to the doctor about my sleep last week.", "past", "complete"),
        ("I will see the doctor about my sleep next week.", "future", "pending"),
        ("I am seeing the doctor about my sleep these days.", "present", "unknown"),  # ongoing: neither
        ("I didn't go to the doctor about my sleep last week.", "past", "unknown"),  # negated
        ("I started therapy for my sleep last week.", "past", "unknown"),  # only begun
        ("I won't be going to the sleep clinic next month.", "future", "unknown"),  # called off
    ],
)
def test_a_copy_takes_the_completion_its_stated_time_tells(text, orientation, completion):
    from ftamem_core.construction.extraction import Fragment, verbatim_units, with_stated_time

    turn = Turn(idx=3, role="user", speaker="Omar", text=text)
    (copy,) = verbatim_units(Fragment("g", 1, [turn], "2025-03-05"), [], min_words=4)
    assert copy.time.completion == "unknown"
    dated = with_stated_time(copy, [turn], ["Omar"])
    assert (dated.time.time_orientation, dated.time.completion) == (orientation, completion)
    kept = with_stated_time(
        copy.model_copy(update={"time": copy.time.model_copy(update={"completion": "partial"})}), [turn], ["Omar"]
    )
    assert kept.time.completion == "partial"  # a status already known stays


@pytest.mark.parametrize(
    "orientation, completion, corrected",
    [
        ("future", "complete", "pending"),  # a plan is not done
        ("present", "complete", "complete"),  # "Maya has joined a group" may be done
        ("past", "complete", "complete"),
        ("mixed", "complete", "complete"),  # part of it may be done
        ("future", "partial", "partial"),
    ],
)
def test_a_model_units_completion_its_orientation_rules_out_is_corrected(orientation, completion, corrected):
    from ftamem_core.construction.extraction import Fragment, UnitOut, to_unit, with_stated_time

    from scripted import unit as unit_json

    turn = Turn(idx=3, role="user", speaker="Jon", text="Let's go to a dance class, it'll be so much fun!")
    made = to_unit(
        UnitOut.model_validate(unit_json("Jon wants to go to a dance class.", 3, 3)),
        Fragment("g", 1, [turn], "2023-01-20"),
    )
    made = made.model_copy(
        update={"time": made.time.model_copy(update={"time_orientation": orientation, "completion": completion})}
    )
    assert with_stated_time(made, [turn], ["Jon", "Gina"]).time.completion == corrected
