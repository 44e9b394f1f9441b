import pytest
from pydantic import ValidationError

from ftamem_core.linking import LinkingReply, apply_updates, candidates, reply_model
from ftamem_core.llm import json_schema

from conftest import make_doc, make_unit
from scripted import HashEmbedder

EMB = HashEmbedder()


def stored(store, texts, case_id="c1"):
    store.ingest([make_doc(case_id)], on_exists="skip")
    units = [make_unit(case_id, t) for t in texts]
    ids = store.add_units(case_id, units, EMB.encode(texts))
    return [store.get_unit(case_id, i) for i in ids]


def test_candidates_are_earlier_similar_units_of_the_same_case(store):
    old = stored(store, ["Maya works night shifts at the hospital", "Maya likes running on Sundays",
                         "Maya works night shifts and sleeps badly"])
    stored(store, ["Maya works night shifts at the hospital every week"], case_id="c2")
    new = old[2]
    found = candidates(store, new, EMB.encode([new.fact.text])[0], limit=5, threshold=0.5)
    assert [u.id for u, _ in found] == [old[0].id]  # not itself, not later, not c2, not dissimilar
    assert found[0][1] >= 0.5
    assert candidates(store, new, EMB.encode([new.fact.text])[0], limit=5, threshold=0.99) == []
    assert candidates(store, old[0], EMB.encode([old[0].fact.text])[0], limit=5, threshold=0.0) == []  # nothing earlier


def test_reply_may_only_name_candidates():
    model = reply_model(["m1", "m4"])
    assert json_schema(model)["properties"]["memory_updates"]["items"]["properties"]["memory_id"]["enum"] == ["m1", "m4"]
    with pytest.raises(ValidationError):
        model.model_validate({"memory_updates": [{"memory_id": "m9", "relation": "updates", "lifecycle_status": "completed",
                                                  "completeness": "complete", "relation_confidence": "high"}]})


def test_updates_store_directed_links_and_neighbour_status(store):
    a, b, c = stored(store, ["Maya plans to buy curtains", "Maya argued with Lena", "Maya bought the curtains"])
    c.time.event_time = "2025-03-10"
    reply = LinkingReply.model_validate({"memory_updates": [
        {"memory_id": f"m{a.id}", "relation": "updates", "lifecycle_status": "completed", "completeness": "complete",
         "relation_confidence": "high"},
        {"memory_id": f"m{b.id}", "relation": "unknown", "lifecycle_status": "archived", "completeness": "partial",
         "relation_confidence": "low"},
        {"memory_id": f"m{a.id}", "relation": "supports", "lifecycle_status": "pending", "completeness": "partial",
         "relation_confidence": "low"},  # a second judgement of the same neighbour is ignored
    ]})
    outcomes = apply_updates(store, c, [a, b], reply)
    assert len(outcomes) == 1
    (link,) = store.links("c1")
    assert (link.source, link.target, link.relation, link.confidence, link.time) == (c.id, a.id, "updates", "high", "2025-03-10")
    assert store.links("c1", unit_id=a.id) == [link]  # readable from the older end too
    now_a, now_b = store.get_unit("c1", a.id), store.get_unit("c1", b.id)
    assert (now_a.lifecycle_status, now_a.completeness, now_a.updated_at) == ("completed", "complete", "2025-03-10")
    assert now_a.version == a.version + 1
    assert (now_b.lifecycle_status, now_b.version) == (b.lifecycle_status, b.version)  # unknown changes nothing
