import sqlite3

import pytest

from ftamem_core.storage.migrations import MIGRATIONS
from ftamem_core.models import CallRecord, Link, Segment, SemanticEntry, SupportEntry
from ftamem_core.storage.store import CaseExists, NotFound, Store, StoreError, VersionConflict

from conftest import make_doc, make_unit, random_vectors


def test_migrations_recorded_and_not_reapplied(tmp_path):
    path = tmp_path / "m.db"
    first = Store(path)
    assert first.applied_migrations == [name for name, _ in MIGRATIONS]
    assert first.migrations() == [name for name, _ in MIGRATIONS]
    first.close()
    again = Store(path)
    assert again.applied_migrations == []
    assert again.migrations() == [name for name, _ in MIGRATIONS]
    assert again.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert again.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_case_round_trip(store):
    doc = make_doc("c1", sessions=2, turns=3)
    doc.case.profile = {"speakers": ["A", "B"]}
    assert store.ingest([doc]) == {"c1": "added"}
    assert store.get_case("c1").profile == {"speakers": ["A", "B"]}
    sessions = store.sessions("c1")
    assert [s.idx for s in sessions] == [0, 1] and sessions[1].time == "2025-03-02"
    turns = store.turns("c1")
    assert [t.idx for t in turns] == list(range(6))  # global index runs across sessions
    assert turns[3].session_id == sessions[1].id and turns[3].original_id == "s1:0"
    assert turns[3].timestamp == "2025-03-02"  # a turn without its own time takes the session's
    assert [t.idx for t in store.turns("c1", session_id=sessions[1].id)] == [3, 4, 5]
    assert [t.idx for t in store.turns("c1", start=2, end=4)] == [2, 3, 4]
    (row,) = store.list_cases()
    assert (row["id"], row["sessions"], row["turns"], row["units"]) == ("c1", 2, 6, 0)


def test_append_session_continues_indices(store):
    store.ingest([make_doc("c1", sessions=1, turns=2)])
    extra = make_doc("x", sessions=1, turns=3).sessions[0]
    session = store.append_session("c1", extra)
    assert session.idx == 1
    assert [t.idx for t in store.turns("c1", session_id=session.id)] == [2, 3, 4]
    with pytest.raises(NotFound):
        store.append_session("nope", extra)


def test_ingest_refuse_replace_skip_never_duplicates(store):
    store.ingest([make_doc("c1", turns=3)])
    with pytest.raises(CaseExists):
        store.ingest([make_doc("c2"), make_doc("c1")])
    assert [c["id"] for c in store.list_cases()] == ["c1"]  # c2 rolled back with the refusal
    assert store.ingest([make_doc("c1", turns=5)], on_exists="skip") == {"c1": "skipped"}
    assert len(store.turns("c1")) == 6
    assert store.ingest([make_doc("c1", turns=5)], on_exists="replace") == {"c1": "replaced"}
    assert len(store.turns("c1")) == 10
    with pytest.raises(StoreError):
        store.ingest([make_doc("c3"), make_doc("c3")])


def test_failed_transaction_writes_nothing(store):
    store.ingest([make_doc("c1")])
    with pytest.raises(sqlite3.IntegrityError):
        with store.transaction() as conn:
            conn.execute("DELETE FROM turns WHERE case_id = 'c1'")
            conn.execute("INSERT INTO sessions (case_id, idx) VALUES ('c1', 0)")  # duplicate idx
    assert len(store.turns("c1")) == 6


def test_units_round_trip_update_and_version_check(store):
    store.ingest([make_doc("c1")])
    unit = make_unit("c1", "Maya moved to night shifts.", 0, 2)
    unit.time.event_time, unit.affect.emotion_or_state = "2025-02-16", "exhausted"
    (uid,) = store.add_units("c1", [unit], random_vectors(1))
    got = store.get_unit("c1", uid)
    assert got.fact.text == unit.fact.text and got.time.event_time == "2025-02-16"
    assert got.affect.emotion_or_state == "exhausted" and got.evidence.end == 2 and got.version == 1
    got.fact.text = "Maya was moved to night shifts two weeks before 2025-03-02."
    updated = store.update_unit(got, random_vectors(1, seed=5))
    assert updated.version == 2 and updated.fact.text.startswith("Maya was moved")
    got.fact.text = "a stale edit from another tab"
    with pytest.raises(VersionConflict):
        store.update_unit(got)  # still carries version 1
    assert store.get_unit("c1", uid).fact.text.startswith("Maya was moved")


def test_partial_units_are_stored_and_indexed_but_listed_apart(store):
    store.ingest([make_doc("c1")])
    ids = store.add_units(
        "c1", [make_unit("c1", "final"), make_unit("c1", "open", status="partial")], random_vectors(2)
    )
    assert store.index("c1").ids() == set(ids)
    assert [u.id for u in store.units("c1")] == [ids[0]]
    assert [u.id for u in store.units("c1", construction_status=None)] == ids
    with pytest.raises(StoreError):
        store.add_units("c1", [make_unit("c1", "a"), make_unit("c1", "b")], random_vectors(1))


def test_links_memory_segments_calls_round_trip(store):
    store.ingest([make_doc("c1"), make_doc("c2")])
    a, b = store.add_units("c1", [make_unit("c1", "old"), make_unit("c1", "new")], random_vectors(2))
    (other,) = store.add_units("c2", [make_unit("c2", "elsewhere")], random_vectors(1))
    store.add_links("c1", [Link(source=b, target=a, relation="updates", confidence="high", time="2025-03-16")])
    (link,) = store.links("c1", unit_id=a)  # readable from either end
    assert (link.source, link.target, link.relation) == (b, a, "updates")
    with pytest.raises(StoreError):  # links stay inside a case
        store.add_links("c1", [Link(source=b, target=other, relation="supports")])
    store.save_semantic("c1", [SemanticEntry(kind="person", text="Lena is Maya's sister", source_unit_ids=[a])])
    store.save_support("c1", [SupportEntry(strategy="sleep hygiene", outcome="helped", source_unit_ids=[a, b])])
    assert store.semantic("c1")[0].source_unit_ids == [a]
    assert store.support("c1")[0].source_unit_ids == [a, b] and store.support("c2") == []
    session = store.sessions("c1")[0]
    store.add_segments(
        "c1",
        [
            Segment(session_id=session.id, start=0, end=1, trigger="session_start"),
            Segment(session_id=session.id, start=2, end=2, trigger="topic_change", provisional=True),
        ],
    )
    assert [(s.start, s.end, s.provisional) for s in store.segments("c1")] == [(0, 1, False), (2, 2, True)]
    store.record_call(
        CallRecord(
            case_id="c1",
            stage="extraction",
            backend="scripted",
            model="m",
            prompt_tokens=10,
            completion_tokens=5,
            seconds=0.5,
        )
    )
    (call,) = store.calls("c1")
    assert (call.stage, call.prompt_tokens, call.ok) == ("extraction", 10, True)


def test_delete_unit_link_and_case_cascade(disk_store):
    store = disk_store
    store.ingest([make_doc("c1"), make_doc("c2")])
    a, b = store.add_units("c1", [make_unit("c1", "a"), make_unit("c1", "b")], random_vectors(2))
    store.add_units("c2", [make_unit("c2", "c")], random_vectors(1))
    (lid,) = store.add_links("c1", [Link(source=b, target=a, relation="supports")])
    store.delete_link("c1", lid)
    assert store.links("c1") == []
    store.add_links("c1", [Link(source=b, target=a, relation="supports")])
    store.delete_unit("c1", a)
    assert store.links("c1") == [] and store.index("c1").ids() == {b}
    with pytest.raises(NotFound):
        store.delete_unit("c2", b)  # another case's unit is not reachable from here
    store.delete_case("c1")
    for table in ("sessions", "turns", "units", "unit_vectors", "links"):
        assert store.conn.execute(f"SELECT count(*) FROM {table} WHERE case_id = 'c1'").fetchone()[0] == 0
    assert store.vectors.files("c1") == []
    assert len(store.turns("c2")) == 6 and store.index("c2").ntotal == 1


def test_two_stores_opening_a_new_database_at_once_apply_each_migration_once(tmp_path):
    import threading

    from ftamem_core.storage.migrations import MIGRATIONS

    path = tmp_path / "new.db"
    barrier, stores, errors = threading.Barrier(4), [], []

    def open_store():
        barrier.wait()
        try:
            stores.append(Store(path))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=open_store) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(n for s in stores for n in s.applied_migrations) == sorted(name for name, _ in MIGRATIONS)
    assert stores[0].migrations() == sorted(name for name, _ in MIGRATIONS)


def test_units_stored_before_provenance_read_as_unknown_origin(tmp_path):
    path = tmp_path / "old.db"
    store = Store(path)
    store.ingest([make_doc("old")])
    session = store.sessions("old")[0].id
    store.add_units("old", [make_unit("old", "Ana moved.", 0, 0, session_id=session)], random_vectors(1))
    store.close()
    conn = sqlite3.connect(path)  # the store as it was before migration 0008
    conn.execute("ALTER TABLE units DROP COLUMN origin")
    conn.execute("DELETE FROM _migrations WHERE name = '0008_unit_origin'")
    conn.commit()
    conn.close()
    assert [u.origin for u in Store(path).units("old")] == ["unknown"]


def test_a_unit_split_before_split_facts_was_removed_still_loads_and_reads_as_split(tmp_path):
    from ftamem_core.display import origin

    store = Store(tmp_path / "old.db")
    store.ingest([make_doc("old")])
    session = store.sessions("old")[0].id
    split = make_unit("old", "Ana moved.", 0, 0, session_id=session).model_copy(update={"origin": "split"})
    store.add_units("old", [split], random_vectors(1))
    store.close()
    (unit,) = Store(tmp_path / "old.db").units("old")
    assert unit.origin == "split" and origin(unit.origin) == "split from a longer fact"


# What a build recorded before settings were grouped by phase (issue 41): flat, the method's name in
# "segmentation", a key no phase holds now, and the model already in its own table.
FLAT_BUILD_SETTINGS = {
    "window_size": 12,
    "segmentation": "fixed",
    "ground_facts": False,
    "told_share": 0.0,
    "embedding_model": None,
    "strict_links": True,
    "ground_notes": True,
    "construction_temperature": 0.7,
    "retired_setting": 3,
    "llm": {"backend": "embedded", "model": "qwen2.5-1.5b", "seed": 0},
    "profile": "small-model",
}
BY_PHASE = {
    "segmentation": {"window_size": 12, "segmentation": "fixed"},
    "extraction": {"ground_facts": False, "told_share": 0.0},
    "embedding": {"embedding_model": None},
    "linking": {"strict_links": True},
    "longitudinal": {"ground_notes": True},
    "construction": {"construction_temperature": 0.7},
    "retired_setting": 3,
    "llm": {"backend": "embedded", "model": "qwen2.5-1.5b", "seed": 0},
    "profile": "small-model",
}


def test_build_records_written_before_phases_are_moved_into_them_once(tmp_path):
    from ftamem_core.models import Build

    path = tmp_path / "old.db"
    store = Store(path)
    store.ingest([make_doc("old"), make_doc("new")])
    store.start_build(Build(case_id="old", segmentation="fixed", settings=FLAT_BUILD_SETTINGS))
    store.start_build(Build(case_id="new", segmentation="fixed", settings=BY_PHASE))
    store.close()
    conn = sqlite3.connect(path)  # the store as it was before migration 0010
    conn.execute("DELETE FROM _migrations WHERE name = '0010_build_settings_by_phase'")
    conn.commit()
    conn.close()
    reopened = Store(path)
    assert reopened.applied_migrations == ["0010_build_settings_by_phase"]
    # every value kept, each in its phase's table; a record by phase already is left as it was
    assert reopened.builds("old")[-1].settings == BY_PHASE and reopened.builds("new")[-1].settings == BY_PHASE
