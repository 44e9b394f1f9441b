import pytest
from pydantic import ValidationError

from ftamem_core.config import load_settings
from ftamem_core.construction.builder import Builder
from ftamem_core.construction.linking import LinkingReply, apply_updates, candidates, reply_model
from ftamem_core.governance import consent
from ftamem_core.llm.base import json_schema
from ftamem_core.models import Case, CaseDocument, Session, SessionDocument, Turn

from conftest import make_doc, make_unit
from scripted import HashEmbedder, Pipeline, section, turn_indices, unit

EMB = HashEmbedder()


def stored(store, texts, case_id="c1"):
    store.ingest([make_doc(case_id)], on_exists="skip")
    units = [make_unit(case_id, t) for t in texts]
    ids = store.add_units(case_id, units, EMB.encode(texts))
    return [store.get_unit(case_id, i) for i in ids]


def test_candidates_are_earlier_similar_units_of_the_same_case(store):
    old = stored(
        store,
        [
            "Maya works night shifts at the hospital",
            "Maya likes running on Sundays",
            "Maya works night shifts and sleeps badly",
        ],
    )
    stored(store, ["Maya works night shifts at the hospital every week"], case_id="c2")
    new = old[2]
    found = candidates(store, new, EMB.encode([new.fact.text])[0], limit=5, threshold=0.5)
    assert [u.id for u, _ in found] == [old[0].id]  # not itself, not later, not c2, not dissimilar
    assert found[0][1] >= 0.5
    assert candidates(store, new, EMB.encode([new.fact.text])[0], limit=5, threshold=0.99) == []
    assert candidates(store, old[0], EMB.encode([old[0].fact.text])[0], limit=5, threshold=0.0) == []  # nothing earlier


def test_reply_may_only_name_the_new_units_and_their_candidates(store):
    a, b, c = stored(store, ["Maya plans to buy curtains", "Maya argued with Lena", "Maya bought the curtains"])
    model = reply_model({c.id: [a, b]})
    items = json_schema(model)["properties"]["memory_updates"]["items"]["properties"]
    assert items["new_id"].get("enum", [items["new_id"].get("const")]) == [f"m{c.id}"]
    assert items["memory_id"]["enum"] == [f"m{a.id}", f"m{b.id}"]
    with pytest.raises(ValidationError):
        model.model_validate(
            {
                "memory_updates": [
                    {
                        "new_id": f"m{c.id}",
                        "memory_id": "m999",
                        "relation": "updates",
                        "lifecycle_status": "completed",
                        "completeness": "complete",
                        "relation_confidence": "high",
                    }
                ]
            }
        )


def update(new, old, relation="updates", lifecycle="completed", completeness="complete", confidence="high"):
    return {
        "new_id": f"m{new.id}",
        "memory_id": f"m{old.id}",
        "relation": relation,
        "lifecycle_status": lifecycle,
        "completeness": completeness,
        "relation_confidence": confidence,
    }


def test_updates_store_directed_links_and_neighbour_status(store):
    a, b, c = stored(store, ["Maya plans to buy curtains", "Maya argued with Lena", "Maya bought the curtains"])
    c.time.event_time = "2025-03-10"
    reply = LinkingReply.model_validate(
        {
            "memory_updates": [
                update(c, a),
                update(c, b, "unknown", "archived", "partial", "low"),
                update(c, a, "supports", "pending", "partial", "low"),  # a second judgement of the same pair is ignored
            ]
        }
    )
    outcomes = apply_updates(store, [c], {c.id: [a, b]}, reply)
    assert len(outcomes) == 1
    (link,) = store.links("c1")
    assert (link.source, link.target, link.relation, link.confidence, link.time) == (
        c.id,
        a.id,
        "updates",
        "high",
        "2025-03-10",
    )
    assert store.links("c1", unit_id=a.id) == [link]  # readable from the older end too
    now_a, now_b = store.get_unit("c1", a.id), store.get_unit("c1", b.id)
    assert (now_a.lifecycle_status, now_a.completeness, now_a.updated_at) == ("completed", "complete", "2025-03-10")
    assert now_a.version == a.version + 1
    assert (now_b.lifecycle_status, now_b.version) == (b.lifecycle_status, b.version)  # unknown changes nothing


def test_an_unknown_suggestion_keeps_the_neighbours_known_state(store):
    a, c = stored(store, ["Maya plans to buy curtains", "Maya bought the curtains"])
    store.set_unit_status("c1", a.id, "pending", "partial", None)
    reply = LinkingReply.model_validate({"memory_updates": [update(c, a, "followup_of", "unknown", "unknown")]})
    (outcome,) = apply_updates(store, [c], {c.id: [a]}, reply)
    now = store.get_unit("c1", a.id)
    assert (now.lifecycle_status, now.completeness) == ("pending", "partial")
    assert outcome.link.relation == "followup_of"


def test_only_pairs_shown_are_stored(store):
    a, b, c, d = stored(
        store,
        ["Maya plans to buy curtains", "Maya argued with Lena", "Maya bought the curtains", "Maya made up with Lena"],
    )
    reply = LinkingReply.model_validate({"memory_updates": [update(c, b), update(d, b), update(d, a)]})
    outcomes = apply_updates(store, [c, d], {c.id: [a], d.id: [b]}, reply)
    assert [(o.link.source, o.link.target) for o in outcomes] == [(d.id, b.id)]  # c-b and d-a were not shown


def test_partial_units_are_no_link_candidates(store):
    store.ingest([make_doc("c1")])
    texts = ["Maya works night shifts at the hospital", "Maya works night shifts at the hospital again"]
    units = [make_unit("c1", texts[0], status="partial"), make_unit("c1", texts[1])]
    ids = store.add_units("c1", units, EMB.encode(texts))
    new = store.get_unit("c1", ids[1])
    assert candidates(store, new, EMB.encode([texts[1]])[0], limit=5, threshold=0.1) == []


def test_a_persons_correction_wins_over_the_model_and_the_models_change_is_in_the_history(store):
    from ftamem_core.governance.editing import edit_unit, history

    a, b, c = stored(store, ["Maya plans to buy curtains", "Maya plans to call Lena", "Maya bought the curtains"])
    edit_unit(store, None, "c1", a.id, {"lifecycle_status": "pending"}, a.version, "Dr. Lee", "she has not bought them")
    reply = LinkingReply.model_validate(
        {
            "memory_updates": [
                update(c, a, lifecycle="completed", completeness="partial"),
                update(c, b, lifecycle="archived"),
            ]
        }
    )
    apply_updates(store, [c], {c.id: [a, b]}, reply)
    kept = store.get_unit("c1", a.id)
    assert kept.lifecycle_status == "pending"  # the counselor's correction stands
    assert kept.completeness == "partial"  # a field nobody corrected follows the model
    assert store.get_unit("c1", b.id).lifecycle_status == "archived"
    model_rows = [
        h
        for h in history(store, "c1", "unit", a.id) + history(store, "c1", "unit", b.id)
        if h["action"] == "model_edit"
    ]
    assert {(h["object_id"], h["field"], h["new"], h["who"]) for h in model_rows} == {
        (a.id, "completeness", "partial", "linking"),
        (b.id, "lifecycle_status", "archived", "linking"),
        (b.id, "completeness", "complete", "linking"),
    }


def test_a_unit_deleted_while_the_build_links_is_skipped(store):
    a, b, c = stored(store, ["Maya plans to buy curtains", "Maya argued with Lena", "Maya bought the curtains"])
    store.delete_unit("c1", a.id)  # by hand, between the candidate search and the reply
    reply = LinkingReply.model_validate({"memory_updates": [update(c, a), update(c, b, "supports")]})
    outcomes = apply_updates(store, [c], {c.id: [a, b]}, reply)
    assert [(o.link.source, o.link.target) for o in outcomes] == [(c.id, b.id)]


def test_a_judged_pairs_lifecycle_suggestion_is_taken_as_the_paper_writes(store):
    """The setting lifecycle_by_relation (only a reporting relation changes a lifecycle) went: on
    dev it changed one unit's lifecycle in 244 and no packet (results/switches.jsonl)."""
    plan, again = stored(store, ["Maya plans to buy curtains", "Maya still wants curtains"])
    store.set_unit_status("c1", plan.id, "pending", "partial", None)
    reply = LinkingReply.model_validate({"memory_updates": [update(again, plan, "same_episode_as", "completed")]})
    apply_updates(store, [again], {again.id: [plan]}, reply)
    assert store.get_unit("c1", plan.id).lifecycle_status == "completed"


@pytest.mark.parametrize("relation", ["unknown", "updates"])
def test_a_pair_judged_unknown_stores_no_link(store, relation):
    """Every pair shown is judged; one judged "unknown" relates nothing, one judged related is stored."""
    turns = [
        Turn(idx=4, role="user", speaker="Omar", text="My grandmother died two days ago, I keep thinking of her."),
        Turn(idx=5, role="assistant", speaker="Coach", text="I am so sorry to hear that, Omar."),
        Turn(idx=6, role="user", speaker="Omar", text="Thanks. I will visit her grave on Sunday with my brother."),
    ]
    seen = []
    pipeline = Pipeline(seg_size=3)
    judged = pipeline.linking

    def linking(messages):
        seen.append(messages[-1]["content"])
        reply = judged(messages)
        return {"memory_updates": [{**u, "relation": relation} for u in reply["memory_updates"]]}

    pipeline.linking = linking
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
            SessionDocument(session=Session(source_id=f"s{i}", time=f"2025-03-0{i}"), turns=list(turns)) for i in (1, 2)
        ],
    )
    store.ingest([doc])
    consent.record(store, "l", "granted", "test", "scripted case")
    settings = load_settings(environ={}).with_overrides(
        linking={"link_threshold": 0.0}, extraction={"turns_per_unit": 0}
    )
    Builder(store, pipeline.llm(), HashEmbedder(), settings).build("l")
    assert seen and all("Give one entry per pair listed" in text for text in seen)
    assert (store.links("l") == []) is (relation == "unknown")
