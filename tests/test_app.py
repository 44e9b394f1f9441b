import pytest
import streamlit as st
import streamlit.testing.v1.app_test as app_test_module
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest

from ftamem_core.ingest import ingest_file
from ftamem_core.storage.store import Store
from ui import plain

from conftest import ESMEMEVAL, ROOT


class _NavigationPagesManager(PagesManager):
    """AppTest re-detects the legacy pages/ folder before every run, so from the second run on it
    executes the page file alone and skips app.py. The real server stops that at the first
    st.navigation call; do the same here."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        PagesManager.uses_pages_directory = False


@pytest.fixture
def app(tmp_path, monkeypatch):
    monkeypatch.setattr(app_test_module, "PagesManager", _NavigationPagesManager)
    db = tmp_path / "app.db"
    monkeypatch.setenv("FTAMEM_STORAGE_DB_PATH", str(db))
    monkeypatch.chdir(ROOT)
    st.cache_resource.clear()
    yield AppTest.from_file(str(ROOT / "app.py"), default_timeout=60), db
    st.cache_resource.clear()


def test_cases_page_on_an_empty_store(app):
    at, _ = app
    at.run()
    assert not at.exception
    assert at.title[0].value == "Cases"
    assert any("No cases yet" in i.value for i in at.info)


def test_load_sample_case_in_one_click(app):
    at, db = app
    at.run()
    next(b for b in at.button if b.label == "Load the sample case").click().run()
    assert not at.exception
    assert [c["id"] for c in Store(db).list_cases()] == ["sample-daniel"]
    assert at.sidebar.selectbox[0].value == "sample-daniel"
    assert at.subheader[-1].value == plain("Sessions of sample-daniel")


def test_existing_cases_are_listed_and_chosen(app):
    at, db = app
    s = Store(db)
    ingest_file(s, ESMEMEVAL)
    s.close()
    at.run()
    assert not at.exception
    assert at.sidebar.selectbox[0].options == ["sample-maya"]
    assert at.sidebar.selectbox[0].value == "sample-maya"
    assert at.subheader[-1].value == plain("Sessions of sample-maya")


def test_uploaded_bad_file_shows_a_clear_error_and_writes_nothing(app):
    at, db = app
    at.run()
    bad = b'{"id": "x", "sessions": [{"turns": [{"role": "user"}]}]}'
    at.file_uploader[0].set_value(("broken.json", bad, "application/json")).run()
    next(b for b in at.button if b.label == "Load file").click().run()
    assert not at.exception
    assert at.error[0].value == plain("broken.json: $.sessions[0].turns[0]: missing key 'text'")  # shown as text
    assert Store(db).list_cases() == []


def test_uploaded_transcript_is_loaded(app):
    at, db = app
    at.run()
    text = b"# Case: typed\n## Session 2025-05-01\nAna: I started a new job.\nCounselor: How is it going?\n"
    at.file_uploader[0].set_value(("typed.txt", text, "text/plain")).run()
    next(b for b in at.button if b.label == "Load file").click().run()
    assert not at.exception and at.success[0].value == plain("typed: added")
    assert at.sidebar.selectbox[0].value == "typed"
    assert Store(db).list_cases()[0]["turns"] == 2


def test_a_pasted_session_is_appended_to_the_active_case(app):
    at, db = app
    s = Store(db)
    ingest_file(s, ESMEMEVAL)
    at.run()
    next(t for t in at.text_input if t.label == "Session date and time").set_value("2025-04-20 18:00")
    at.text_area[0].set_value("Maya: I ran with the group again.\nCounselor: How did it feel?\nMaya: Good, tired.")
    next(b for b in at.button if b.label == "Append pasted session").click().run()
    assert not at.exception
    assert at.success[0].value == plain(
        "session 4 with 3 turns appended to sample-maya"
    )  # the fourth session, counted from 1
    last = s.sessions("sample-maya")[-1]
    turns = s.turns("sample-maya", session_id=last.id)
    assert last.time == "2025-04-20T18:00" and [t.idx for t in turns] == [30, 31, 32]
    assert turns[1].role == "assistant"
    at.text_area[0].set_value("no speaker here").run()
    next(b for b in at.button if b.label == "Append pasted session").click().run()
    assert plain("expected 'Speaker: text'") in at.error[0].value
    assert len(s.sessions("sample-maya")) == 4


def test_a_typed_session_from_rows():
    from ftamem_core.ingest import session_from_rows
    from ftamem_core.loaders import LoadError

    doc = session_from_rows(
        [
            {"role": "user", "speaker": "Ana", "text": "New job started."},
            {"role": "assistant", "speaker": "Counselor", "text": "How is it?"},
            {"role": "user", "text": ""},
        ],
        "2025-05-01",
    )
    assert [t.role for t in doc.turns] == ["user", "assistant"] and doc.turns[0].timestamp == "2025-05-01"
    with pytest.raises(LoadError, match="no turns"):
        session_from_rows([{"text": " "}])
    with pytest.raises(LoadError, match="role must be"):
        session_from_rows([{"role": "boss", "text": "hi"}])


@pytest.mark.parametrize("name", ["../../x.json", "..json", "a/../../b.json"])
def test_an_upload_named_to_leave_the_temporary_folder_is_read_inside_it(app, name):
    at, db = app
    at.run()
    text = b'{"id": "odd", "sessions": [{"id": "s1", "turns": [{"speaker": "Ana", "text": "hello"}]}]}'
    at.file_uploader[0].set_value((name, text, "application/json")).run()
    next(b for b in at.button if b.label == "Load file").click().run()
    assert not at.exception and at.success[0].value == plain("odd: added")


def test_an_upload_over_the_size_limit_is_refused(app, monkeypatch):
    monkeypatch.setenv("FTAMEM_INPUT_MAX_UPLOAD_MB", "1")
    st.cache_resource.clear()
    at, db = app
    at.run()
    at.file_uploader[0].set_value(("big.json", b" " * (2**20 + 1), "application/json")).run()
    next(b for b in at.button if b.label == "Load file").click().run()
    assert not at.exception and "the limit is 1 MB" in at.error[0].value.replace("\\", "")
    assert Store(db).list_cases() == []
