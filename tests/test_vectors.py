import numpy as np
import pytest

from ftamem_core.storage.store import Store
from ftamem_core.storage.vectors import CaseIndex, IndexConfig

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
    assert disk_store.index_path("c1").exists()


def test_rebuilt_after_index_file_deleted(tmp_path):
    store = Store(tmp_path / "m.db")
    ids, vectors = _fill(store, "c1", 10)
    path = store.index_path("c1")
    store.close()
    path.unlink()
    reopened = Store(tmp_path / "m.db")
    index = reopened.index("c1")
    assert index.ids() == set(ids)
    assert reopened.index_path("c1").exists()
    assert index.search(vectors[3], 1)[1][0] == ids[3]


def test_a_change_replaces_the_file_and_a_corrupt_file_is_rebuilt(tmp_path):
    store = Store(tmp_path / "m.db")
    ids, _ = _fill(store, "c1", 5)
    before = store.index_path("c1")
    more = store.add_units("c1", [make_unit("c1", "later")], random_vectors(1, seed=9))
    # The file is named by the content it holds: the old one is gone, never read again.
    assert not before.exists() and store.vectors.files("c1") == [store.index_path("c1")]
    store.close()
    reopened = Store(tmp_path / "m.db")
    assert reopened.index("c1").ids() == set(ids) | set(more)
    path = reopened.index_path("c1")
    reopened.close()
    path.write_bytes(b"not a faiss index")
    again = Store(tmp_path / "m.db")
    assert again.index("c1").ids() == set(ids) | set(more)


@pytest.mark.parametrize("kind", ["flat", "hnsw", "ivf"])
def test_an_edit_from_a_fresh_process_replaces_the_vector_in_the_index_and_its_file(tmp_path, kind):
    config = IndexConfig(kind=kind)
    first = Store(tmp_path / "m.db", index_config=config)
    ids, vectors = _fill(first, "c1", 60)
    assert first.index("c1").ntotal == 60
    first.close()
    fresh = Store(tmp_path / "m.db", index_config=config)  # its index is not loaded
    unit = fresh.get_unit("c1", ids[3])
    new_vector = random_vectors(1, seed=42)[0]
    fresh.update_unit(unit.model_copy(update={"fact": unit.fact.model_copy(update={"text": "corrected"})}), new_vector)
    fresh.delete_unit("c1", ids[5])
    old_vector = vectors[3] / np.linalg.norm(vectors[3])
    for store in (fresh, Store(tmp_path / "m.db", index_config=config)):  # in memory, then from the file
        index = store.index("c1")
        stored = index.vector(ids[3])
        if kind == "ivf":  # 8-bit quantised: nearer the new vector than the old one by far
            assert stored @ new_vector > 0.8 > 0.2 > stored @ old_vector
        else:
            assert np.abs(stored - new_vector).max() < 1e-5
        assert ids[5] not in index.ids() and len(index.ids()) == 59
    assert len(fresh.vectors.files("c1")) == 1
    if kind == "flat":  # raw float32 rows: the deleted and the replaced vector are in no file
        data = fresh.index_path("c1").read_bytes()
        assert (
            vectors[5].tobytes() not in data
            and (vectors[3] / np.linalg.norm(vectors[3])).astype(np.float32).tobytes() not in data
        )


def test_cases_are_isolated(disk_store):
    ids1, v1 = _fill(disk_store, "c1", 8, seed=1)
    ids2, v2 = _fill(disk_store, "c2", 8, seed=2)
    _, found = disk_store.index("c1").search(v2[0], 8)
    assert set(found.tolist()) <= set(ids1)
    _, found = disk_store.index("c2").search(v1[0], 8)
    assert set(found.tolist()) <= set(ids2)
    assert disk_store.index_path("c1") != disk_store.index_path("c2")


def test_case_ids_that_differ_only_in_odd_characters_get_different_files(disk_store):
    assert disk_store.vectors.path("a/b", "t") != disk_store.vectors.path("a_b", "t")
    assert "/" not in disk_store.vectors.path("../../etc", "t").name


def test_in_memory_store_keeps_index_in_memory(store):
    ids, vectors = _fill(store, "c1", 4)
    assert store.index_path("c1") is None
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


@pytest.mark.parametrize("kind", ["flat", "hnsw", "ivf"])
def test_each_index_kind_finds_nearest_and_survives_a_save(tmp_path, kind):
    centres = random_vectors(30, seed=1)  # clustered, as real units are (IVF probes a share of its lists)
    vectors = centres[np.arange(3000) % 30] + 0.3 * random_vectors(3000, seed=3)
    ids = list(range(100, 3100))
    config = IndexConfig(kind=kind)
    index = CaseIndex.build(ids, vectors, config=config)
    assert index.kind == kind and index.ids() == set(ids)
    queries = vectors[:50] + 0.05 * random_vectors(50, seed=2)
    unit = lambda v: v / np.linalg.norm(v, axis=1, keepdims=True)  # noqa: E731 - the index normalises too
    exact = unit(queries) @ unit(vectors).T
    hits = sum(
        len(set(index.search(q, 10)[1].tolist()) & {ids[j] for j in np.argsort(-row)[:10]})
        for q, row in zip(queries, exact)
    )
    assert hits / 500 >= 0.9  # recall@10 against exact search
    index.save(tmp_path / "i.faiss")
    loaded = CaseIndex.load(tmp_path / "i.faiss", config=config)
    assert loaded.kind == kind and loaded.ids() == set(ids)
    assert index.remove([ids[0]]) is (kind != "hnsw")  # HNSW cannot remove: the store rebuilds it


def test_auto_picks_the_kind_by_size():
    config = IndexConfig(hnsw_from=100, ivf_from=1000)
    assert [config.choose(n) for n in (99, 100, 999, 1000)] == ["flat", "hnsw", "hnsw", "ivf"]
    assert IndexConfig(kind="flat").choose(10**6) == "flat"
