import numpy as np
import pytest

from ftamem_core.store import Store
from ftamem_core.vectors import CaseIndex, IndexConfig

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
    hits = sum(len(set(index.search(q, 10)[1].tolist()) & {ids[j] for j in np.argsort(-row)[:10]})
               for q, row in zip(queries, exact))
    assert hits / 500 >= 0.9  # recall@10 against exact search
    index.save(tmp_path / "i.faiss")
    loaded = CaseIndex.load(tmp_path / "i.faiss", config=config)
    assert loaded.kind == kind and loaded.ids() == set(ids)
    assert index.remove([ids[0]]) is (kind != "hnsw")  # HNSW cannot remove: the store rebuilds it


def test_auto_picks_the_kind_by_size():
    config = IndexConfig(hnsw_from=100, ivf_from=1000)
    assert [config.choose(n) for n in (99, 100, 999, 1000)] == ["flat", "hnsw", "hnsw", "ivf"]
    assert IndexConfig(kind="flat").choose(10**6) == "flat"
