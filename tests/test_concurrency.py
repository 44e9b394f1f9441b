"""A build thread against a counselor's edits, deletions and questions on the same store (the app
shares one Store between its build threads and its pages): nothing hangs, nothing is lost."""

import threading

import numpy as np

from ftamem_core.governance import consent
from ftamem_core.config import Ablations
from ftamem_core.construction.builder import Builder
from ftamem_core.governance.editing import delete_unit, edit_unit
from ftamem_core.retrieval.ranking import Cues, score_candidates
from ftamem_core.storage.store import NotFound, Store, VersionConflict

from conftest import make_doc
from scripted import HashEmbedder, Pipeline
from test_construction import SETTINGS


def test_a_build_thread_and_edits_deletes_and_searches_do_not_deadlock(tmp_path):
    store = Store(tmp_path / "m.db")
    store.ingest([make_doc("c1", sessions=6, turns=12)])
    consent.record(store, "c1", "granted", "test")
    embedder = HashEmbedder()
    build_error: list[BaseException] = []

    def run_build():
        try:
            report = Builder(store, Pipeline(seg_size=2).llm(), embedder, SETTINGS).build("c1")
            assert report.status == "done"
        except BaseException as e:  # noqa: BLE001 - reported below
            build_error.append(e)

    builder = threading.Thread(target=run_build)
    builder.start()
    edits = deletes = searches = 0
    query = embedder.encode(["session turn"])[0]
    while builder.is_alive():
        units = store.units("c1")
        for unit in units[-2:]:
            try:
                edit_unit(
                    store,
                    embedder,
                    "c1",
                    unit.id,
                    {"fact.text": f"{unit.fact.text} (checked)"},
                    unit.version,
                    "Dr. Lee",
                    "review",
                )
                edits += 1
            except (VersionConflict, NotFound):
                pass  # the build changed or removed it meanwhile: refused, not lost
        if len(units) > 3 and deletes < 3:
            try:
                delete_unit(store, "c1", units[0].id, "Dr. Lee", "wrong")
                deletes += 1
            except NotFound:
                pass
        score_candidates(store, "c1", query, Cues(), k=5, tau=0.0, lam=0.8, pool=20, ablations=Ablations())
        searches += 1
        builder.join(timeout=0.05)
        assert searches < 20_000, "the build did not finish"
    builder.join(timeout=120)
    assert not builder.is_alive() and build_error == []
    assert edits and deletes and searches
    ids, vectors = store.stored_vectors("c1")
    index = store.index("c1")
    assert index.ids() == set(ids) == {u.id for u in store.units("c1", None)}
    for uid, vector in zip(ids, vectors):  # the index holds each edited unit's current vector
        assert np.allclose(index.vector(uid), vector, atol=1e-5)
