"""Setting turn_anchors (candidate, issue 39): the extraction reply gives each of the person's
substantive turns a feeling and an intention, and units without their own take their turns'."""

import pytest
from pydantic import ValidationError

from ftamem_core.governance import consent
from ftamem_core.config import load_settings
from ftamem_core.construction.builder import Builder
from ftamem_core.construction.extraction import anchor_turns, reply_model, turn_anchors, with_turn_anchors
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
from ftamem_core.llm.prompts import load_prompt

from scripted import HashEmbedder, Pipeline, section, turn_indices, unit

TURNS = [
    Turn(idx=4, role="user", speaker="Omar", text="My grandmother died two days ago, I keep thinking of her."),
    Turn(idx=5, role="assistant", speaker="Coach", text="I am so sorry to hear that, Omar."),
    Turn(idx=6, role="user", speaker="Omar", text="Thanks. I will visit her grave on Sunday with my brother."),
]


def test_the_reply_asks_each_persons_turn_first_and_requires_every_one():
    model = reply_model([], 1, anchored_turns=anchor_turns(TURNS, 6))
    schema = model.model_json_schema()
    assert list(schema["properties"]) == ["turn_anchors", "memory_units"]
    per_turn = schema["$defs"]["TurnAnchors"]
    assert per_turn["required"] == ["turn_4", "turn_6"]  # the assistant's turn is not asked
    good = {
        "turn_anchors": {
            "turn_4": {"feeling": "grieving", "intention": "unknown"},
            "turn_6": {"feeling": "unknown", "intention": "visit the grave"},
        },
        "memory_units": [unit("Omar's grandmother died.", 4, 4)],
    }
    assert model.model_validate(good).turn_anchors.turn_4.feeling == "grieving"
    with pytest.raises(ValidationError):
        model.model_validate({**good, "turn_anchors": {"turn_4": good["turn_anchors"]["turn_4"]}})
    assert list(reply_model([], 1).model_json_schema()["properties"]) == ["memory_units"]  # off: the paper's


def test_an_example_anchor_the_turn_does_not_share_is_dropped_and_an_inferred_feeling_kept():
    model = reply_model([], 0, anchored_turns=anchor_turns(TURNS, 6))
    reply = model.model_validate(
        {
            "turn_anchors": {
                "turn_4": {"feeling": "grieving", "intention": "unknown"},
                "turn_6": {"feeling": "nervous", "intention": "apply at the shipyard"},
            },
            "memory_units": [],
        }
    )
    anchors = turn_anchors(reply, anchor_turns(TURNS, 6), ["Omar", "Coach"])
    assert anchors[4].emotion_or_state == "grieving"  # no word of the turn: clearly shown, kept
    assert anchors[6].emotion_or_state == "unknown" and anchors[6].intention_or_plan == "unknown"  # the example's


def _unit(start, end, who=("Omar",), feeling="unknown"):
    return FTAUnit(
        case_id="c",
        fact=FactAnchor(text="Omar said something.", participants=list(who)),
        affect=AffectAnchor(emotion_or_state=feeling),
        evidence=Evidence(session_id=1, start=start, end=end),
    )


def test_a_unit_without_a_feeling_takes_its_speakers_turn_and_keeps_its_own():
    anchors = {
        4: AffectAnchor(emotion_or_state="grieving"),
        5: AffectAnchor(emotion_or_state="sympathetic"),
        6: AffectAnchor(intention_or_plan="visit the grave on Sunday"),
    }
    copied = with_turn_anchors(_unit(4, 4), anchors, TURNS)
    assert copied.affect.emotion_or_state == "grieving" and copied.affect.intention_or_plan == "unknown"
    whole = with_turn_anchors(_unit(4, 6), anchors, TURNS)
    assert whole.affect.emotion_or_state == "grieving"
    assert whole.affect.intention_or_plan == "visit the grave on Sunday"
    assert with_turn_anchors(_unit(4, 6, feeling="sad"), anchors, TURNS).affect.emotion_or_state == "sad"
    coach = with_turn_anchors(_unit(4, 6, who=("Coach",)), anchors, TURNS)
    assert coach.affect.emotion_or_state == "sympathetic"  # the unit's own person's turn first


def test_the_prompt_adds_its_rule_and_example_only_with_the_setting():
    plain, anchored = load_prompt("extraction"), load_prompt("extraction", options=frozenset({"turn_anchors"}))
    assert "turn_anchors" not in plain.user and "=== " not in plain.user
    assert "11. turn_anchors:" in anchored.user and '{"turn_anchors": {"turn_7"' in anchored.user
    assert plain.system == anchored.system


def _build(store, on: bool):
    doc = CaseDocument(
        case=Case(id="g"),
        sessions=[
            SessionDocument(
                session=Session(source_id="s1", time="2025-03-07"),
                turns=[t.model_copy(update={"idx": 0}) for t in TURNS],
            )
        ],
    )
    store.ingest([doc])
    consent.record(store, "g", "granted", "test", "scripted case")
    pipeline, prompts = Pipeline(seg_size=3), []

    def extraction(messages):  # one unit of the death; the plan is left to the verbatim copy
        prompts.append(messages[-1]["content"])
        idx = turn_indices([{"content": section(messages, "Fragment turns:")}])
        reply = {
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
        if on:
            reply["turn_anchors"] = {
                "turn_%d" % idx[0]: {"feeling": "grieving", "intention": "unknown"},
                "turn_%d" % idx[2]: {"feeling": "unknown", "intention": "visit her grave"},
            }
        return reply

    pipeline.extraction = extraction
    settings = load_settings(environ={}).with_overrides(extraction={"turn_anchors": on})
    Builder(store, pipeline.llm(), HashEmbedder(), settings).build("g")
    return {u.fact.text: u.affect for u in store.units("g")}, prompts


def test_a_build_with_turn_anchors_gives_the_model_unit_and_the_copy_their_turns_anchors(store):
    units, prompts = _build(store, on=True)
    assert "11. turn_anchors:" in prompts[0]
    death = units["Omar's grandmother died two days ago."]
    assert death.emotion_or_state == "grieving"
    copy = next(a for text, a in units.items() if "grave" in text)
    assert copy.intention_or_plan == "visit her grave"


def test_without_the_setting_the_build_is_the_papers(store):
    units, prompts = _build(store, on=False)
    assert "turn_anchors" not in prompts[0]
    assert all(a.emotion_or_state == "unknown" for a in units.values())


def test_the_linking_prompt_asks_for_related_pairs_only_and_a_reply_without_entries_stores_no_link(store):
    """The paper: one update per related candidate neighbour; a pair that only looks alike gets none."""
    seen = []
    pipeline = Pipeline(seg_size=3)
    pipeline.linking = lambda messages: seen.append(messages[-1]["content"]) or {"memory_updates": []}
    pipeline.extraction = lambda messages: {
        "memory_units": [
            unit(
                "Omar's grandmother died two days ago.",
                *[turn_indices([{"content": section(messages, "Fragment turns:")}])[0]] * 2,
            )
        ]
    }
    doc = CaseDocument(
        case=Case(id="l"),
        sessions=[
            SessionDocument(session=Session(source_id=f"s{i}", time=f"2025-03-0{i}"), turns=list(TURNS)) for i in (1, 2)
        ],
    )
    store.ingest([doc])
    consent.record(store, "l", "granted", "test", "scripted case")
    settings = load_settings(environ={}).with_overrides(
        linking={"link_threshold": 0.0}, extraction={"turns_per_unit": 0}
    )
    Builder(store, pipeline.llm(), HashEmbedder(), settings).build("l")
    assert seen and all("Give an entry only for a pair that is related" in text for text in seen)
    assert all('{"memory_updates": []}' in text for text in seen)
    assert store.links("l") == []


@pytest.mark.parametrize("status", ["complete", "partial"])
def test_a_fusion_undone_stores_the_candidate_with_its_turns_anchors(tmp_path, status):
    """Issue 39: a person deletes the carried partial while the model completes it; the candidate
    stored instead of the fused unit has the anchors its turns give it, as any other unit."""
    from ftamem_core.governance import editing

    from test_construction import SETTINGS, two_stores

    builder_store, person = two_stores(tmp_path)
    pipeline = Pipeline(seg_size=4)

    def extraction(messages):
        idx = turn_indices([{"content": section(messages, "Fragment turns:")}])
        anchors = {
            f"turn_{i}": {"feeling": "worn out" if i == 8 else "unknown", "intention": "unknown"}
            for i in idx
            if i % 2 == 0
        }  # the person's turns (Maya speaks the even ones)

        def blank(text, first, last, **kw):
            return {
                **unit(text, first, last, **kw),
                "content": {**unit(text, first, last)["content"], "emotion_or_state": "unknown"},
            }

        if idx[0] == 4:  # the last fragment of session 0 leaves a partial unit
            return {
                "turn_anchors": anchors,
                "memory_units": [blank("Maya booked a sleep clinic visit.", 4, 5, status="partial")],
            }
        if idx[0] == 8:  # while the model completes it, the person deletes it
            (partial,) = [u for u in person.units("c1", None) if u.construction_status == "partial"]
            editing.delete_unit(person, "c1", partial.id, "Dana", "not what she said")
            return {
                "turn_anchors": anchors,
                "memory_units": [blank("The visit is on March 12.", 8, 9, completes="p1", status=status)],
            }
        return {
            "turn_anchors": anchors,
            "memory_units": [blank(f"Turns {idx[0]}-{idx[-1]} are about sleep.", idx[0], idx[-1])],
        }

    pipeline.extraction = extraction
    events = []
    report = Builder(
        builder_store,
        pipeline.llm(),
        HashEmbedder(),
        SETTINGS.with_overrides(extraction={"verbatim_fallback": False, "ground_anchors": False, "turn_anchors": True}),
        progress=events.append,
    ).build("c1")
    assert report.status == "done"
    assert any(type(e).__name__ == "FusionUndone" for e in events)
    kept = next(u for u in person.units("c1", None) if u.fact.text == "The visit is on March 12.")
    assert kept.affect.emotion_or_state == "worn out"  # turn 8's feeling, as an unfused unit would get
    builder_store.close()
    person.close()
