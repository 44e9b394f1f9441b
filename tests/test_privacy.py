"""Deletion, export and import, verified erasure, retention, and files readable by their owner only."""

import json
import os
import sqlite3
import stat
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from ftamem_core.governance import consent, privacy
from ftamem_core.storage.case_rows import ROW_KEY
from ftamem_core.cli import main
from ftamem_core.config import PRESETS
from ftamem_core.construction.builder import Builder
from ftamem_core.governance.editing import delete_unit, edit_unit, history
from ftamem_core.storage.migrations import MIGRATIONS, apply_migrations
from ftamem_core.models import Link, SemanticEntry, utcnow
from ftamem_core.retrieval.ranking import Cues, score_candidates
from ftamem_core.storage.store import Store, StoreError

from conftest import ROOT, consented, make_doc, make_unit, random_vectors
from scripted import HashEmbedder, Pipeline
from test_construction import SETTINGS


def built(store, case_id="c1", marker=""):
    doc = make_doc(case_id, sessions=2, turns=6)
    if marker:
        turns = doc.sessions[1].turns
        turns[2] = turns[2].model_copy(update={"text": f"My sister's name is {marker} and she calls on Sundays."})
    store.ingest([doc])
    consent.record(store, case_id, "granted", "test", "scripted case")
    pipeline = Pipeline(seg_size=2)
    pipeline.extraction = lambda m: {"memory_units": [_echo(m)]}
    Builder(store, pipeline.llm(), HashEmbedder(), SETTINGS).build(case_id)
    return store


def _echo(messages):
    """A unit that repeats its fragment's first line (so a turn's words reach the memory)."""
    from scripted import section, turn_indices, unit

    body = section(messages, "Fragment turns:")
    idx = turn_indices([{"content": body}])
    return unit(" ".join(body.split()[:40]), idx[0], idx[-1])


# Deleting ---------------------------------------------------------------------------------


def test_deleting_a_unit_removes_its_history_text_and_the_entries_derived_from_it(store):
    store.ingest([make_doc("c1")])
    a, b = store.add_units(
        "c1", [make_unit("c1", "Maya sleeps four hours"), make_unit("c1", "Maya runs")], random_vectors(2)
    )
    edit_unit(store, None, "c1", a, {"fact.text": "Maya sleeps five hours"}, 1, "Dr. Lee", "typo")
    store.save_semantic(
        "c1",
        [
            SemanticEntry(kind="situation", text="Maya sleeps badly", source_unit_ids=[a, b], updated_at=utcnow()),
            SemanticEntry(kind="situation", text="Maya runs", source_unit_ids=[b], updated_at=utcnow()),
        ],
    )
    with pytest.raises(StoreError, match="why"):
        delete_unit(store, "c1", a, "Dr. Lee", " ")
    delete_unit(store, "c1", a, "Dr. Lee", "asked by the client")
    rows = history(store, "c1", "unit", a)
    assert [r["action"] for r in rows] == ["edit", "delete"]
    assert all(r["old"] is None and r["new"] is None for r in rows)  # what it said is gone
    assert rows[0]["field"] == "fact.text" and rows[1]["reason"] == "asked by the client"
    assert [e.text for e in store.semantic("c1")] == ["Maya runs"]  # the entry citing the unit went
    assert store.index("c1").ids() == {b}


def test_unit_and_link_ids_are_never_reused(store):
    store.ingest([make_doc("c1")])
    a, b = store.add_units("c1", [make_unit("c1", "a"), make_unit("c1", "b")], random_vectors(2))
    (link,) = store.add_links("c1", [Link(source=b, target=a, relation="supports")])
    store.delete_link("c1", link)
    store.delete_unit("c1", b)  # the newest
    (c,) = store.add_units("c1", [make_unit("c1", "c")], random_vectors(1, seed=1))
    assert c > b
    (again,) = store.add_links("c1", [Link(source=c, target=a, relation="supports")])
    assert again > link
    store.clear_case_memory("c1")  # what --from-scratch does
    (d,) = store.add_units("c1", [make_unit("c1", "d")], random_vectors(1, seed=2))
    assert d > c


def test_an_old_store_is_migrated_to_ids_that_are_never_reused(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    old = [m for m in MIGRATIONS if m[0] < "0004"]
    import ftamem_core.storage.migrations as migrations

    saved = list(migrations.MIGRATIONS)
    migrations.MIGRATIONS[:] = old
    try:
        apply_migrations(conn, utcnow())
    finally:
        migrations.MIGRATIONS[:] = saved
    conn.execute("INSERT INTO cases (id, created_at) VALUES ('c1', 'x')")
    for i in (1, 2):
        conn.execute(
            "INSERT INTO units (id, case_id, fact_text, content_type, evidence_start, evidence_end,"
            " created_at, updated_at) VALUES (?, 'c1', ?, 'event', 0, 0, 'x', 'x')",
            (i, f"unit {i}"),
        )
    conn.execute(
        "INSERT INTO links (case_id, source, target, relation, created_at) VALUES ('c1', 2, 1, 'supports', 'x')"
    )
    conn.close()
    store = Store(path)
    assert "0004_privacy" in store.applied_migrations
    assert [u.fact.text for u in store.units("c1")] == ["unit 1", "unit 2"] and len(store.links("c1")) == 1
    store.delete_unit("c1", 2)
    assert store.links("c1") == []  # the foreign keys still cascade after the rebuild
    (new,) = store.add_units("c1", [make_unit("c1", "new")])
    assert new == 3


def test_a_disputed_unit_never_reaches_retrieval_or_a_packet(store):
    from ftamem_core.config import Ablations
    from ftamem_core.retrieval.packet import expand

    store.ingest([make_doc("c1")])
    vectors = random_vectors(3)
    a, b, c = store.add_units("c1", [make_unit("c1", t) for t in "abc"], vectors)
    store.add_links("c1", [Link(source=c, target=a, relation="updates")])
    edit_unit(store, None, "c1", b, {"disputed": True}, 1, "Dr. Lee", "not what she said")
    edit_unit(store, None, "c1", c, {"disputed": True}, 1, "Dr. Lee", "not what she said")
    scored = score_candidates(store, "c1", vectors[1], Cues(), k=10, tau=-1.0, lam=0.8, pool=10, ablations=Ablations())
    kept = {int(i) for i, k in zip(scored.ids, scored.kept) if k}
    assert kept == {a} and scored.reasons[list(scored.ids).index(b)] == "disputed"
    assert expand(store, "c1", [a], 1) == []  # its disputed neighbour is not added either


def test_an_archived_unit_leaves_retrieval_and_packets_unless_asked_for(store):
    from ftamem_core.config import Ablations, load_settings
    from ftamem_core.retrieval.inference import ask
    from ftamem_core.llm.scripted import ScriptedLLM
    from ftamem_core.retrieval.packet import expand

    store.ingest([make_doc("c1")])
    consented(store, "c1")
    vectors = random_vectors(3)
    a, b, c = store.add_units("c1", [make_unit("c1", t) for t in "abc"], vectors)
    store.add_links("c1", [Link(source=c, target=a, relation="updates")])
    for uid in (b, c):
        edit_unit(store, None, "c1", uid, {"lifecycle_status": "archived"}, 1, "Dr. Lee", "no longer current")
    args = dict(k=10, tau=-1.0, lam=0.8, pool=10, ablations=Ablations())
    scored = score_candidates(store, "c1", vectors[1], Cues(), **args)
    assert {int(i) for i, k in zip(scored.ids, scored.kept) if k} == {a}
    assert scored.reasons[list(scored.ids).index(b)] == "archived"
    assert expand(store, "c1", [a], 1) == []
    back = score_candidates(store, "c1", vectors[1], Cues(), **args, archived=True)
    assert {int(i) for i, k in zip(back.ids, back.kept) if k} == {a, b, c}
    assert [n.unit.id for n in expand(store, "c1", [a], 1, archived=True)] == [c]

    class Vectors:  # the question's vector is unit b's
        def encode(self, texts):
            return np.repeat(vectors[1:2], len(texts), axis=0)

    reply = {"answer": "x", "cited_unit_ids": []}
    base = load_settings(environ={}, retrieval={"tau": -1.0, "turn_channel": 0})
    trace = ask(store, "c1", "q", ScriptedLLM([reply]), Vectors(), base, ablations=PRESETS["no_rewrite"])
    assert b not in trace.shown_unit_ids and trace.settings["retrieve_archived"] is False
    trace = ask(
        store,
        "c1",
        "q",
        ScriptedLLM([reply]),
        Vectors(),
        base.with_overrides(retrieval={"retrieve_archived": True}),
        ablations=PRESETS["no_rewrite"],
    )
    assert b in trace.shown_unit_ids and "now archived" in trace.packet_text


# Export and import ------------------------------------------------------------------------


def _tables(store, case_id):
    doc = privacy.export_case(store, case_id)
    return doc["tables"]


def test_export_and_import_round_trip_every_table(tmp_path, capsys):
    source = built(Store(tmp_path / "a.db"))
    unit = source.units("c1")[0]
    edit_unit(source, HashEmbedder(), "c1", unit.id, {"fact.text": "Corrected by hand"}, unit.version, "Dr. Lee", "fix")
    exported = _tables(source, "c1")
    assert all(
        exported[t]
        for t in (
            "cases",
            "turns",
            "units",
            "unit_vectors",
            "segments",
            "builds",
            "llm_calls",
            "history",
            "consent_log",
            "build_sessions",
        )
    )
    out = tmp_path / "export.json"
    assert main(["--db", str(tmp_path / "a.db"), "export", "c1", "--out", str(out)]) == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert main(["--db", str(tmp_path / "b.db"), "import", str(out)]) == 0
    target = Store(tmp_path / "b.db")
    assert _tables(target, "c1") == exported
    vector = target.index("c1").vector(unit.id)  # the index is rebuilt from the imported vectors
    assert np.allclose(vector, source.index("c1").vector(unit.id))
    capsys.readouterr()
    assert main(["--db", str(tmp_path / "b.db"), "import", str(out)]) == 1
    assert "already stored" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "ftamem-case-export", "version": 1, "case_id": "c1", "tables": {}}))
    assert main(["--db", str(tmp_path / "c.db"), "import", str(bad)]) == 1
    assert "holds no case" in capsys.readouterr().err
    doc = json.loads(out.read_text())
    doc["tables"]["units"][0]["case_id"] = "another"
    bad.write_text(json.dumps(doc))
    assert main(["--db", str(tmp_path / "c.db"), "import", str(bad)]) == 1
    assert "belongs to another case" in capsys.readouterr().err
    assert Store(tmp_path / "c.db").list_cases() == []  # nothing half-imported


# Erasure ----------------------------------------------------------------------------------


def _files_since(folder: Path, since: float):
    for path in folder.rglob("*"):
        try:
            if path.is_file() and not path.is_symlink() and path.stat().st_mtime >= since:
                yield path
        except OSError:
            continue


def _holding(marker: bytes, folders, since: float) -> list[Path]:
    found = []
    for folder in folders:
        for path in _files_since(folder, since):
            if ".venv" in path.parts or ".git" in path.parts:
                continue
            try:
                if marker in path.read_bytes():
                    found.append(path)
            except OSError:
                continue
    return found


def test_erasure_leaves_the_marker_in_no_file_and_the_other_case_unchanged(tmp_path, capsys):
    began = time.time() - 1
    marker = f"Zq{uuid.uuid4().hex}"
    folder = tmp_path / "store"
    db = folder / "memory.db"
    store = built(Store(db), "c1", marker)
    built(store, "c2")
    assert any(marker in u.fact.text for u in store.units("c1"))
    unit = next(u for u in store.units("c1") if marker in u.fact.text)
    edit_unit(
        store,
        HashEmbedder(),
        "c1",
        unit.id,
        {"affect.emotion_or_state": f"worried about {marker}"},
        unit.version,
        "Dr. Lee",
        "feeling",
    )
    other = (store.units("c2"), store.links("c2"), store.semantic("c2"), store.stored_vectors("c2")[1].copy())
    capsys.readouterr()
    assert main(["--db", str(db), "export", "c1"]) == 0  # to standard output: the person takes it away
    assert marker in capsys.readouterr().out
    folders = [folder, ROOT, Path(tempfile.gettempdir())]
    assert _holding(marker.encode(), folders, began)  # the test can see it before the erasure
    code = main(["--db", str(db), "erase", "c1", "--yes", "--by", "Dr. Lee", "--reason", "client asked"])
    assert code == 0
    assert _holding(marker.encode(), folders, began) == []
    assert _holding(marker.encode("utf-16-le"), folders, began) == []
    assert (store.units("c2"), store.links("c2"), store.semantic("c2")) == other[:3]
    assert np.array_equal(store.stored_vectors("c2")[1], other[3])
    assert store.index("c2").ids() == {u.id for u in other[0]}
    (row,) = privacy.erasures(store)
    assert row["case_hash"] == privacy.case_hash("c1") and "c1" not in json.dumps(row).replace(row["case_hash"], "")
    assert store.vectors.files("c1") == [] and not store.case_exists("c1")


def test_erase_asks_for_confirmation(tmp_path, capsys, monkeypatch):
    db = str(tmp_path / "m.db")
    built(Store(db))
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert main(["--db", db, "erase", "c1"]) == 1
    assert "--yes" in capsys.readouterr().err and Store(db).case_exists("c1")
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: "c")
    assert main(["--db", db, "erase", "c1"]) == 1 and Store(db).case_exists("c1")
    monkeypatch.setattr("builtins.input", lambda prompt: "c1")
    assert main(["--db", db, "erase", "c1"]) == 0 and not Store(db).case_exists("c1")


def test_erase_hooks_drop_what_a_running_app_holds(store):
    from ftamem_core.construction.jobs import BuildJob, JobRegistry

    built(store)
    registry = JobRegistry()
    job = BuildJob("c1", Builder(store, Pipeline().llm(), HashEmbedder(), SETTINGS), "bws")
    job.events.append("an event with text")
    registry._jobs["c1"] = job
    privacy.on_erase.append(registry.forget)
    try:
        privacy.erase_case(store, "c1", "test")
    finally:
        privacy.on_erase.remove(registry.forget)
    assert registry.get("c1") is None and job.events == [] and job.builder.stop.is_set()


# Retention --------------------------------------------------------------------------------


def test_retention_erases_expired_cases_at_any_command_and_by_purge(tmp_path, capsys):
    db = str(tmp_path / "m.db")
    store = Store(db)
    store.ingest([make_doc("old"), make_doc("kept"), make_doc("default")])
    privacy.set_retention(store, "old", 30)
    privacy.set_retention(store, "kept", 365)
    past = (datetime.now(timezone.utc) - timedelta(days=31)).isoformat(timespec="seconds")
    store.conn.execute("UPDATE cases SET created_at = ?", (past,))
    later = datetime.now(timezone.utc) + timedelta(days=400)
    assert privacy.expired(store) == ["old"]
    assert privacy.expired(store, default_days=10) == ["default", "old"]
    assert privacy.expired(store, now=later) == ["kept", "old"]
    code, _, err = main(["--db", db, "cases"]), *capsys.readouterr()
    assert code == 0 and "erased case 'old'" in err and not store.case_exists("old")
    with pytest.raises(StoreError):
        privacy.set_retention(store, "kept", 0)
    assert main(["--db", db, "purge-expired"]) == 0
    assert "no case past its retention period" in capsys.readouterr().out
    assert main(["--db", db, "ingest", str(ROOT / "data" / "sample_case.json"), "--retention-days", "7"]) == 0
    assert store.get_case("sample-daniel").retention_days == 7


# Files ------------------------------------------------------------------------------------


def test_store_files_are_readable_by_their_owner_only(tmp_path):
    old = os.umask(0o022)
    try:
        store = built(Store(tmp_path / "private" / "memory.db"))
        store.index("c1")
    finally:
        os.umask(old)
    folder = tmp_path / "private"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    files = list(folder.rglob("*"))
    assert any(p.suffix == ".faiss" for p in files) and any(p.name.endswith("-wal") for p in files)
    for path in files:
        expected = 0o700 if path.is_dir() else 0o600
        assert stat.S_IMODE(path.stat().st_mode) == expected, path


# Issue 40 item 1: a crafted import ---------------------------------------------------------

BIG = 2**63 - 1


def _crafted(tmp_path, change):
    """The export of a built case 'x', changed by ``change(tables)``."""
    doc = privacy.export_case(built(Store(tmp_path / "src.db"), "x"), "x")
    change(doc["tables"])
    return doc


def _other_case_still_works(store):
    """Rebuild (scripted), add a unit, withdraw consent and log an access in case c1; then erase it."""
    from ftamem_core.governance.auth import access_log, log_access

    pipeline = Pipeline(seg_size=2)
    pipeline.extraction = lambda m: {"memory_units": [_echo(m)]}
    Builder(store, pipeline.llm(), HashEmbedder(), SETTINGS).build("c1", from_scratch=True)
    assert store.units("c1")
    assert store.add_units("c1", [make_unit("c1", "one more")], random_vectors(1))
    consent.record(store, "c1", "withdrawn", "test")
    assert consent.state(store, "c1")["state"] == "withdrawn"
    log_access(store, "c1", "Dr. Lee", "view")
    assert access_log(store, "c1")[-1]["action"] == "view"
    privacy.erase_case(store, "c1", "Dr. Lee")
    assert not store.case_exists("c1")


def test_an_export_written_before_a_column_was_added_imports_with_its_default(tmp_path):
    """Exports made before units recorded their origin (migration 0008) still import."""
    built(Store(tmp_path / "a.db"))
    out = tmp_path / "export.json"
    assert main(["--db", str(tmp_path / "a.db"), "export", "c1", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    for row in doc["tables"]["units"]:
        del row["origin"], row["completeness"]
    out.write_text(json.dumps(doc))
    assert main(["--db", str(tmp_path / "b.db"), "import", str(out)]) == 0
    units = Store(tmp_path / "b.db").units("c1")
    assert units and {u.origin for u in units} == {"unknown"} and {u.completeness for u in units} == {"unknown"}


@pytest.mark.parametrize("table", ["units", "consent_log", "access_log"])
def test_item1_import_gives_new_ids_so_a_huge_id_breaks_no_other_case(tmp_path, table):
    def huge(tables):  # one more row, with the largest id SQLite has
        if table == "access_log":
            tables["access_log"] = [
                {"id": 1, "case_id": "x", "who": "a", "action": "view", "detail": "", "at": utcnow()}
            ]
        tables[table].append({**tables[table][-1], "id": BIG})

    doc = _crafted(tmp_path, huge)
    store = built(Store(tmp_path / "m.db"), "c1")  # a store that already holds another case
    assert privacy.import_case(store, doc) == "x"
    assert max(r["id"] for r in store._rows(f"SELECT {ROW_KEY.get(table, 'id')} AS id FROM {table}")) < 1000
    assert len(store.units("x")) == len(doc["tables"]["units"])
    privacy.erase_case(store, "x", "Dr. Lee")
    _other_case_still_works(store)


def test_an_export_written_before_phases_is_imported_with_its_build_settings_by_phase(tmp_path):
    from test_store import BY_PHASE, FLAT_BUILD_SETTINGS

    source = built(Store(tmp_path / "src.db"), "x")
    doc = privacy.export_case(source, "x")
    assert doc["tables"]["builds"]
    for row in doc["tables"]["builds"]:
        row["settings"] = json.dumps(FLAT_BUILD_SETTINGS)  # as an older version recorded it
    store = Store(tmp_path / "m.db")
    privacy.import_case(store, doc)
    assert [b.settings for b in store.builds("x")] == [BY_PHASE] * len(doc["tables"]["builds"])


def test_item1_import_remaps_every_reference(tmp_path):
    source = built(Store(tmp_path / "src.db"), "x")
    a, b = [u.id for u in source.units("x")[:2]]
    source.add_links("x", [Link(source=b, target=a, relation="supports")])
    source.save_semantic("x", [SemanticEntry(kind="situation", text="s", source_unit_ids=[a, b], updated_at=utcnow())])
    doc = privacy.export_case(source, "x")
    store = built(Store(tmp_path / "m.db"), "c1")
    privacy.import_case(store, doc)
    units = store.units("x")
    ids = {u.id for u in units}
    sessions = {s.id for s in store.sessions("x")}
    assert not ids & {u.id for u in store.units("c1")} and len(units) == len(source.units("x"))
    assert {u.evidence.session_id for u in units} <= sessions
    assert {s.session_id for s in store.segments("x")} <= sessions
    assert all({link.source, link.target} <= ids for link in store.links("x")) and store.links("x")
    assert set(store.semantic("x")[0].source_unit_ids) <= ids
    assert store.index("x").ids() == ids
    assert [u.fact.text for u in units] == [u.fact.text for u in source.units("x")]


def _session_of_c1(tables, store):
    tables["units"][0]["session_id"] = store.sessions("c1")[0].id


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda t: t["units"][0].update(session_id=999), "not part of this case"),
        (
            lambda t: t["links"].append(
                {
                    "id": 5,
                    "case_id": "x",
                    "source": 1,
                    "target": 10**6,
                    "relation": "supports",
                    "confidence": "high",
                    "time": None,
                    "created_at": utcnow(),
                }
            ),
            "not part of",
        ),
        (
            lambda t: t["semantic_memory"].append(
                {
                    "id": 9,
                    "case_id": "x",
                    "kind": "situation",
                    "text": "t",
                    "source_unit_ids": "[123456]",
                    "updated_at": utcnow(),
                    "session_id": None,
                }
            ),
            "not part of",
        ),
        (lambda t: t["units"][0].update(evidence_start="three"), "not of type INTEGER"),
        (lambda t: t["units"][0].update(participants="not json"), "not valid"),
        (lambda t: t["units"][0].update(content_type="anything"), "not valid"),
        (lambda t: t["sessions"][0].update(meta="[1]"), "not valid"),
        (lambda t: t["consent_log"][0].update(state="maybe"), "not valid"),
        (lambda t: t["cases"][0].update(created_at="not a date"), "not valid"),
        (lambda t: t["cases"][0].update(retention_days=999999999), "not valid"),
        (lambda t: t["unit_vectors"][0].update(vector={"base64": "AAAA"}), "not valid"),
        (lambda t: t["turns"][0].update(text=None), "has no text"),
    ],
)
def test_item1_a_crafted_import_is_refused_and_writes_nothing(tmp_path, change, message):
    doc = _crafted(tmp_path, change)
    store = built(Store(tmp_path / "m.db"), "c1")
    before = privacy.case_counts(store, "c1")
    with pytest.raises(StoreError, match=message):
        privacy.import_case(store, doc)
    assert not store.case_exists("x") and store._rows("SELECT count(*) AS n FROM units")[0]["n"] == before["units"]
    _other_case_still_works(store)


def test_item1_units_pointing_at_another_cases_session_are_refused(tmp_path):
    store = Store(tmp_path / "m.db")
    store.ingest([make_doc("d")])  # c1's session ids are then not the file's own
    built(store, "c1")
    doc = _crafted(tmp_path, lambda t: _session_of_c1(t, store))
    assert doc["tables"]["units"][0]["session_id"] not in {s["id"] for s in doc["tables"]["sessions"]}
    with pytest.raises(StoreError, match="not part of this case"):
        privacy.import_case(store, doc)
    _other_case_still_works(store)


# Issue 40 item 2: one retention value must not brick the CLI or the app ---------------------


def test_item2_retention_is_bounded_everywhere(tmp_path, capsys):
    from pydantic import ValidationError

    from ftamem_core.config import load_settings

    db = str(tmp_path / "m.db")
    sample = str(ROOT / "data" / "sample_case.json")
    assert main(["--db", db, "ingest", sample, "--retention-days", "999999999"]) == 1
    assert "from 1 to 36500" in capsys.readouterr().err
    assert main(["--db", db, "ingest", sample, "--retention-days", "36500"]) == 0
    assert main(["--db", db, "cases"]) == 0
    store = Store(db)
    with pytest.raises(StoreError, match="from 1 to 36500"):
        privacy.set_retention(store, "sample-daniel", 3_000_000)
    with pytest.raises(ValidationError):
        load_settings(storage={"db_path": db}, governance={"retention_days": 999999999})


@pytest.mark.parametrize(
    "column, value", [("created_at", "not a date"), ("created_at", "9999-12-30"), ("retention_days", 999999999)]
)
def test_item2_a_case_whose_retention_cannot_be_evaluated_is_skipped_and_said(tmp_path, capsys, column, value):
    db = str(tmp_path / "m.db")
    store = Store(db)
    store.ingest([make_doc("bad"), make_doc("old")])
    privacy.set_retention(store, "bad", 30)
    privacy.set_retention(store, "old", 30)
    store.conn.execute("UPDATE cases SET created_at = '2000-01-01T00:00:00+00:00' WHERE id = 'old'")
    store.conn.execute(f"UPDATE cases SET {column} = ? WHERE id = 'bad'", (value,))  # as an older version stored it
    assert main(["--db", db, "cases"]) == 0
    err = capsys.readouterr().err
    assert "erased case 'old'" in err and "could not be evaluated for case(s) 'bad'" in err
    assert main(["--db", db, "purge-expired"]) == 0
    assert "'bad'" in capsys.readouterr().out
    assert main(["--db", db, "erase", "bad", "--yes", "--by", "Dr. Lee"]) == 0
    assert main(["--db", db, "purge-expired"]) == 0
    assert "no case past its retention period" in capsys.readouterr().out


def test_item2_the_app_shows_no_traceback():
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["client"]["showErrorDetails"] in ("type", "none")
