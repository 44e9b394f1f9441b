"""The unit checks the evidence benchmark counts."""

from ftamem_core.models import Case, CaseDocument, Session, SessionDocument, Turn
from ftamem_core.quality import unit_checks

from conftest import make_unit
from scripted import HashEmbedder

EMB = HashEmbedder()


def test_unit_checks_count_each_fault(store):
    lines = [("Caroline", "I'm researching adoption agencies for my family."),
             ("Melanie", "That is a big step, good luck!"),
             ("Caroline", "I ran a charity race for mental health on Sunday.")]
    store.ingest([CaseDocument(case=Case(id="c1"), sessions=[SessionDocument(
        session=Session(source_id="s0", time="2023-05-08"), turns=[Turn(role="user", speaker=s, text=t) for s, t in lines])])])
    units = [make_unit("c1", "Melanie is researching adoption agencies.", 0, 1),  # wrong speaker
             make_unit("c1", "Caroline ran a charity race for mental health.", 2, 2),
             make_unit("c1", "Caroline ran a charity race for mental health!", 2, 2),  # a duplicate
             make_unit("c1", "Caroline ran a charity race for mental health on Sunday.", 2, 2),  # verbatim
             make_unit("c1", "Caroline and Melanie are researching adoption agencies.", 0, 1)]  # only Caroline tells it
    units[1].affect.intention_or_plan = "housewarming after the kitchen is done"  # ungrounded
    store.add_units("c1", units, EMB.encode([u.fact.text for u in units]))
    c = unit_checks(store, "c1", EMB)
    assert c["misattributed"] == [1, 5] and c["said_to_listener"] == []
    assert [(a, b) for a, b, _ in c["duplicates"]] == [(2, 3)]  # the "on Sunday" unit says more (cosine 0.88)
    assert [(uid, name) for uid, name, _ in c["ungrounded_anchors"]] == [(2, "intention")]
    assert c["verbatim"] == 1 and c["turns_covered"] == 3 and c["units"] == 5


def test_a_short_reply_with_the_turn_it_answers_counts_as_a_turns_own_words(store):
    lines = [("Gina", "Can't wait to see them rock the festival."), ("Jon", "Yeah! So glad to be part of it all.")]
    store.ingest([CaseDocument(case=Case(id="c1"), sessions=[SessionDocument(
        session=Session(source_id="s0", time="2023-01-20"), turns=[Turn(role="user", speaker=s, text=t) for s, t in lines])])])
    units = [make_unit("c1", "So glad to be part of it all.", 0, 1), make_unit("c1", "Jon is glad.", 0, 1)]
    store.add_units("c1", units, EMB.encode([u.fact.text for u in units]))
    assert unit_checks(store, "c1", EMB)["verbatim"] == 1


def test_a_fact_made_of_what_peers_say_to_each_other_is_counted_but_not_their_own_words(store):
    lines = [("Ilse", "The timetable helps riders. I'm really impressed with your patience and persistence!"),
             ("Oskar", "Thanks! I rewrote the bus timetable.")]
    store.ingest([CaseDocument(case=Case(id="c1"), sessions=[SessionDocument(
        session=Session(source_id="s0", time="2023-01-20"), turns=[Turn(role="user", speaker=s, text=t) for s, t in lines])])])
    units = [make_unit("c1", "Ilse is patient and persistent.", 0, 1),  # Oskar's patience, as Ilse's
             make_unit("c1", "The timetable helps riders. Ilse is really impressed with your patience and persistence!",
                       0, 0),  # the fallback's copy of the turn
             make_unit("c1", "Oskar rewrote the timetable of the buses.", 1, 1)]
    store.add_units("c1", units, EMB.encode([u.fact.text for u in units]))
    c = unit_checks(store, "c1", EMB)
    assert c["said_to_listener"] == [1] and c["verbatim"] == 1
    assert unit_checks(store, "c1", EMB, told_below=0.0)["said_to_listener"] == []  # the bar acts
