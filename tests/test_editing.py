import pytest

from ftamem_core.governance.editing import add_link, delete_link, history, retype_link
from ftamem_core.models import Link
from ftamem_core.storage.store import NotFound

from conftest import make_doc, make_unit, random_vectors


def two_units(store):
    store.ingest([make_doc("c1")])
    return store.add_units(
        "c1", [make_unit("c1", "Maya works nights."), make_unit("c1", "Maya sleeps badly.")], random_vectors(2)
    )


def test_links_are_added_retyped_and_deleted_with_history(store):
    older, newer = two_units(store)
    link_id = add_link(store, "c1", Link(source=newer, target=older, relation="supports"), "counselor", "seen in s1")
    retyped = retype_link(store, "c1", link_id, "followup_of", "counselor", "it follows from the shifts")
    assert retyped.relation == "followup_of" and [l.relation for l in store.links("c1")] == ["followup_of"]
    delete_link(store, "c1", link_id, "counselor", "wrong pair")
    assert store.links("c1") == []
    rows = history(store, "c1", "link", link_id)
    assert [(r["action"], r["old"], r["new"]) for r in rows] == [
        ("add", None, f"m{newer} supports m{older}"),
        ("edit", "supports", "followup_of"),
        ("delete", None, None),
    ]


def test_retyping_a_missing_link_or_to_an_unknown_relation_fails_and_records_nothing(store):
    older, newer = two_units(store)
    with pytest.raises(NotFound):
        retype_link(store, "c1", 99, "updates", "counselor", "")
    link_id = add_link(store, "c1", Link(source=newer, target=older, relation="supports"), "counselor", "")
    with pytest.raises(ValueError):
        retype_link(store, "c1", link_id, "rhymes_with", "counselor", "")
    assert [r["action"] for r in history(store, "c1", "link")] == ["add"]
    assert store.links("c1")[0].relation == "supports"
