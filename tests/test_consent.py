"""Consent: builds only with it, stopped when it is withdrawn, recorded at ingest and by command."""

import json

import pytest

from ftamem_core.governance import consent
from ftamem_core.cli import main
from ftamem_core.construction.builder import Builder
from ftamem_core.storage.store import Store, StoreError

from conftest import ESMEMEVAL, make_doc
from scripted import HashEmbedder, Pipeline
from test_construction import SETTINGS


def test_a_case_starts_not_asked_and_a_build_is_refused_before_anything_is_written(store):
    store.ingest([make_doc("c1")])
    assert consent.state(store, "c1")["state"] == "not_asked"
    pipeline = Pipeline()
    with pytest.raises(consent.ConsentRequired, match="ftamem consent c1 grant --by NAME"):
        Builder(store, pipeline.llm(), HashEmbedder(), SETTINGS).build("c1")
    assert store.builds("c1") == [] and pipeline.calls == [] and store.units("c1", None) == []


def test_every_change_is_logged_with_who_when_and_note(store):
    store.ingest([make_doc("c1")])
    consent.record(store, "c1", "granted", "Dr. Lee", "signed form")
    consent.record(store, "c1", "withdrawn", "Dr. Lee", "asked by phone")
    log = consent.log(store, "c1")
    assert [(r["state"], r["who"], r["note"]) for r in log] == [
        ("granted", "Dr. Lee", "signed form"),
        ("withdrawn", "Dr. Lee", "asked by phone"),
    ]
    assert all(r["at"] for r in log) and consent.state(store, "c1")["state"] == "withdrawn"
    with pytest.raises(StoreError, match="who"):
        consent.record(store, "c1", "granted", "  ")
    with pytest.raises(StoreError):
        consent.record(store, "c1", "not_asked", "Dr. Lee")
    with pytest.raises(StoreError):
        consent.record(store, ["c1", "nope"], "granted", "Dr. Lee")
    assert len(consent.log(store, "c1")) == 2  # the failed call for two cases wrote nothing


def test_withdrawal_from_another_connection_stops_a_running_build(tmp_path):
    store = Store(tmp_path / "m.db")
    store.ingest([make_doc("c1", sessions=3, turns=6)])
    consent.record(store, "c1", "granted", "test")
    other = Store(tmp_path / "m.db")  # e.g. the command line while the app builds
    pipeline = Pipeline(seg_size=2)
    extract = pipeline.extraction
    sessions = store.sessions("c1")

    def withdrawing(messages):
        if store.done_sessions("c1"):  # the first session is finished: withdraw during the second
            consent.record(other, "c1", "withdrawn", "client", "by phone")
        return extract(messages)

    pipeline.extraction = withdrawing
    report = Builder(store, pipeline.llm(), HashEmbedder(), SETTINGS).build("c1")
    assert (report.status, report.error) == ("stopped", "consent withdrawn")
    assert list(store.done_sessions("c1")) == [sessions[0].id]  # finished sessions kept until erased
    assert {u.evidence.session_id for u in store.units("c1", None)} == {sessions[0].id}
    assert store.builds("c1")[-1].status == "stopped" and store.builds("c1")[-1].error == "consent withdrawn"


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_ingest_with_consent_and_the_consent_command(tmp_path, capsys):
    db = str(tmp_path / "m.db")
    code, _, err = run(capsys, "--db", db, "ingest", str(ESMEMEVAL), "--consent", "granted")
    assert code == 1 and "--by NAME" in err and not Store(db).list_cases()  # refused before writing
    assert (
        run(
            capsys,
            "--db",
            db,
            "ingest",
            str(ESMEMEVAL),
            "--consent",
            "granted",
            "--by",
            "Ana",
            "--note",
            "public research dataset",
        )[0]
        == 0
    )
    code, out, _ = run(capsys, "--db", db, "--json", "consent", "sample-maya", "show")
    shown = json.loads(out)
    assert (shown["state"], shown["who"], shown["note"]) == ("granted", "Ana", "public research dataset")
    assert run(capsys, "--db", db, "consent", "sample-maya", "withdraw", "--by", "Ana", "--note", "by email")[0] == 0
    code, out, _ = run(capsys, "--db", db, "consent", "sample-maya", "show")
    assert out.startswith("consent withdrawn (by Ana") and "by email" in out
    code, _, err = run(capsys, "--db", db, "build", "sample-maya", "--quiet")
    assert code == 1 and err.count("\n") == 1 and "ftamem consent sample-maya grant" in err
    code, _, err = run(capsys, "--db", db, "consent", "nope", "grant", "--by", "Ana")
    assert code == 1 and "no case 'nope'" in err
