import numpy as np

from ftamem_core.store import Store

from conftest import make_doc, make_unit, random_vectors


def _fill(store, case_id, n, seed=0):
    store.ingest([make_doc(case_id)], on_exists="skip")
    vectors = random_vectors(n, seed)
    ids = store.add_units(case_id, [make_unit(case_id, f"unit {i}") for i in range(n)], vectors)
    return ids, vectors


def test_index_matches_store_and_finds_nearest(disk_store):
    ids, vectors = _fill(disk_store, "c1", 20)
    index = disk_store.index("c1")
    assert index.ids() == set(ids)
    scores, found = index.search(vectors[7], 3)
    assert found[0] == ids[7] and abs(scores[0] - 1.0) < 1e-5
    assert disk_store.vectors.path("c1").exists()


def test_rebuilt_after_index_file_deleted(tmp_path):
    store = Store(tmp_path / "m.db")
    ids, vectors = _fill(store, "c1", 10)
    path = store.vectors.path("c1")
    store.close()
    path.unlink()
    reopened = Store(tmp_path / "m.db")
    index = reopened.index("c1")
    assert index.ids() == set(ids)
    assert reopened.vectors.path("c1").exists()
    assert index.search(vectors[3], 1)[1][0] == ids[3]


def test_rebuilt_when_stale(tmp_path):
    store = Store(tmp_path / "m.db")
    ids, _ = _fill(store, "c1", 5)
    stale = store.vectors.path("c1").read_bytes()
    more = store.add_units("c1", [make_unit("c1", "later")], random_vectors(1, seed=9))
    store.close()
    store.vectors.path("c1").write_bytes(stale)  # an index from before the last unit
    reopened = Store(tmp_path / "m.db")
    assert reopened.index("c1").ids() == set(ids) | set(more)
    # and a corrupt file is rebuilt as well
    reopened.close()
    reopened.vectors.path("c1").write_bytes(b"not a faiss index")
    again = Store(tmp_path / "m.db")
    assert again.index("c1").ids() == set(ids) | set(more)


def test_cases_are_isolated(disk_store):
    ids1, v1 = _fill(disk_store, "c1", 8, seed=1)
    ids2, v2 = _fill(disk_store, "c2", 8, seed=2)
    _, found = disk_store.index("c1").search(v2[0], 8)
    assert set(found.tolist()) <= set(ids1)
    _, found = disk_store.index("c2").search(v1[0], 8)
    assert set(found.tolist()) <= set(ids2)
    assert disk_store.vectors.path("c1") != disk_store.vectors.path("c2")


def test_case_ids_that_differ_only_in_odd_characters_get_different_files(disk_store):
    assert disk_store.vectors.path("a/b") != disk_store.vectors.path("a_b")
    assert "/" not in disk_store.vectors.path("../../etc").name


def test_in_memory_store_keeps_index_in_memory(store):
    ids, vectors = _fill(store, "c1", 4)
    assert store.vectors.path("c1") is None
    assert np.isin(store.index("c1").search(vectors[0], 4)[1], ids).all()


def test_another_connection_writing_triggers_a_fresh_check(tmp_path):
    a = Store(tmp_path / "m.db")
    ids, _ = _fill(a, "c1", 5)
    assert a.index("c1").ids() == set(ids)
    b = Store(tmp_path / "m.db")  # e.g. a command-line build while the app is open
    more = b.add_units("c1", [make_unit("c1", "from b")], random_vectors(1, seed=3))
    assert a.index("c1").ids() == set(ids) | set(more)
    b.delete_unit("c1", ids[0])
    assert a.index("c1").ids() == (set(ids) | set(more)) - {ids[0]}
