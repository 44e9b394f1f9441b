"""Every page under AppTest: empty store, built case, and the edits a counselor makes."""

import json
import time

import pytest
import streamlit as st
import streamlit.testing.v1.app_test as app_test_module
from streamlit.testing.v1 import AppTest

from ftamem_core.governance import consent
from ftamem_core.config import load_settings
from ftamem_core.construction.builder import Builder
from ftamem_core.governance.editing import history
from ftamem_core.ingest import ingest_file
from ftamem_core.storage.store import Store

from conftest import ROOT, SAMPLE
from scripted import HashEmbedder, Pipeline
from test_app import _NavigationPagesManager

PAGES = [
    "pages/cases.py",
    "pages/build.py",
    "pages/memory.py",
    "pages/graph.py",
    "pages/ask.py",
    "pages/privacy.py",
    "pages/audit.py",
    "pages/evaluate.py",
]
SCRIPT = {
    "segmentation": {"segments": [{"turn_span": [0, 100000], "boundary_trigger": "topic_change"}]},
    "extraction": {
        "memory_units": [
            {
                "completes": "none",
                "summary": "a fact",
                "content_type": "event",
                "time_orientation": "past",
                "event_time_expression": "unknown",
                "event_time": "unknown",
                "content": {
                    "text": "Daniel talked about his father.",
                    "participants": ["Daniel"],
                    "emotion_or_state": "worried",
                    "intention_or_plan": "unknown",
                    "relation_cues": "unknown",
                },
                "evidence_turn_span": [0, 100000],
                "status": "complete",
            }
        ]
    },
    "linking": {"memory_updates": []},
    "longitudinal": {"semantic": [], "support": []},
    "rewrite": {
        "query": "Daniel father care home",
        "people": ["Daniel"],
        "time_expressions": [],
        "content_types": ["event"],
        "affect_terms": [],
    },
    "answer": {"answer": "October 3, 2025 ![x](//example.invalid/p.png)", "cited_unit_ids": []},
}


@pytest.fixture
def app(tmp_path, monkeypatch):
    db = tmp_path / "app.db"
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    monkeypatch.setenv("FTAMEM_STORAGE_DB_PATH", str(db))
    monkeypatch.setenv("FTAMEM_LLM_BACKEND", "scripted")
    monkeypatch.setenv("FTAMEM_LLM_MODEL", str(script))
    # The script answers every extraction with one unit: ask for no more, and add no turn units.
    monkeypatch.setenv("FTAMEM_EXTRACTION_TURNS_PER_UNIT", "0")
    monkeypatch.setenv("FTAMEM_EXTRACTION_VERBATIM_FALLBACK", "false")
    monkeypatch.setenv("FTAMEM_EXTRACTION_GROUND_FACTS", "false")  # its fact is not in the turns
    monkeypatch.setattr(app_test_module, "PagesManager", _NavigationPagesManager)
    monkeypatch.chdir(ROOT)
    st.cache_resource.clear()
    yield db
    st.cache_resource.clear()


def open_page(page: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    if page != "pages/cases.py":
        at.switch_page(page).run()
    return at


def built(db) -> Store:
    store = Store(db)
    ingest_file(store, SAMPLE, consent_by="test")
    Builder(
        store,
        Pipeline().llm(),
        HashEmbedder(),
        load_settings(environ={}, extraction={"ground_facts": False, "turns_per_unit": 0, "verbatim_fallback": False}),
    ).build("sample-daniel")
    return store


@pytest.mark.parametrize("page", PAGES)
def test_every_page_loads_on_an_empty_store(app, page):
    at = open_page(page)
    assert not at.exception, at.exception


@pytest.mark.parametrize("page", PAGES)
def test_every_page_loads_on_a_built_case(app, page):
    built(app)
    at = open_page(page)
    assert not at.exception, at.exception
    assert at.sidebar.selectbox[0].value == "sample-daniel"
    if page not in ("pages/cases.py", "pages/audit.py", "pages/evaluate.py"):  # one client's pages name it
        assert at.title[0].value.replace("\\", "").endswith(" · sample-daniel")


def wait_until_built(store, sessions=3):
    """The page's build runs in a thread."""
    deadline = time.time() + 60
    while time.time() < deadline and len(store.done_sessions("sample-daniel")) < sessions:
        time.sleep(0.2)
    assert len(store.done_sessions("sample-daniel")) == sessions


def test_build_page_builds_with_the_chosen_backend(app):
    store = Store(app)
    ingest_file(store, SAMPLE, consent_by="test")
    at = open_page("pages/build.py")
    next(b for b in at.button if b.label == "Start / resume build").click().run()
    assert not at.exception
    wait_until_built(store)
    assert [u.fact.text for u in store.units("sample-daniel")] == ["Daniel talked about his father."] * 3
    at.run()
    assert not at.exception and any("Units formed (3)" in h.value for h in at.subheader)


def test_build_page_shows_each_kind_of_build_event(app):
    import ui
    from ftamem_core.construction import build_events as ev
    from ftamem_core.models import Link

    store = Store(app)
    ingest_file(store, SAMPLE, consent_by="test")
    at = open_page("pages/build.py")
    next(b for b in at.button if b.label == "Start / resume build").click().run()
    wait_until_built(store)
    a, b = [u.id for u in store.units("sample-daniel")][:2]
    ui.jobs().get("sample-daniel").events.extend(
        [
            ev.Fused(carried="p", candidate="c", fused="Daniel's father moved."),
            ev.TurnsCut(turns=[3], limit=4000),
            ev.VerbatimKept(turns=[7]),
            ev.DuplicateMerged(kept="k", dropped="Same again."),
            ev.Unsupported(fact="Made up.", support=0.25),
            ev.SpeakerUnresolved(fact="Who said it."),
            ev.LinkAdded(
                link=Link(source=b, target=a, relation="supports", confidence="high"), neighbour_status="ongoing"
            ),
        ]
    )
    at.run()
    assert not at.exception
    shown = [t.value for t in at.text] + [c.value for c in at.caption]
    for expected in [
        "fused: Daniel's father moved.",
        "turns 4 cut to fit the prompt (4,000 characters",  # from 1
        "turns in no unit kept in their own words: 8",
        "merged a near-duplicate: Same again.",
        "dropped, not in its turns (25% of its words): Made up.",
        "dropped, no naming of the speakers fits its turns: Who said it.",
        f"link added: m{b} supports m{a} (high confidence): m{b} \u201cDaniel talked about his father.\u201d",
    ]:
        assert any(expected in text for text in shown), expected


def test_build_page_link_line_says_both_units_facts_as_stored_and_the_relation_in_words(app):
    import ui
    from ftamem_core.construction import build_events as ev
    from ftamem_core.governance.editing import delete_unit, edit_unit
    from ftamem_core.models import Link

    store = Store(app)
    ingest_file(store, SAMPLE, consent_by="test")
    at = open_page("pages/build.py")
    next(b for b in at.button if b.label == "Start / resume build").click().run()
    wait_until_built(store)
    a, b, c = store.units("sample-daniel")[:3]
    # The events name units by id; a fact edited after its link was made shows as it reads now.
    long = "Daniel said his father moved into Oakwood care home on October 3rd and that he visits him every Sunday."
    edit_unit(store, None, "sample-daniel", a.id, {"fact.text": long}, a.version, "Dr. Lee", "heard again")
    delete_unit(store, "sample-daniel", c.id, "Dr. Lee", "not said")
    ui.jobs().get("sample-daniel").events.extend(
        [
            ev.LinkAdded(
                link=Link(source=b.id, target=a.id, relation="followup_of", confidence="medium"),
                neighbour_status="ongoing",
            ),
            ev.LinkAdded(link=Link(source=c.id, target=b.id, relation="same_episode_as"), neighbour_status="ongoing"),
        ]
    )
    at.run()
    assert not at.exception, at.exception
    lines = [t.value for t in at.text if t.value.startswith("link added: ")]
    assert (
        f"link added: m{b.id} follow-up of m{a.id} (medium confidence): m{b.id} \u201cDaniel talked about his "
        f"father.\u201d · m{a.id} \u201cDaniel said his father moved into Oakwood care home on\u2026\u201d"
    ) in lines, lines
    assert (
        f"link added: m{c.id} same episode as m{b.id}: m{c.id} (deleted) · m{b.id} \u201cDaniel talked about his father.\u201d"
        in lines
    )
    assert not any("_" in line.split(":")[0] for line in lines)  # the relation in words, not followup_of


def memory_page(name: str | None = "Dr. Lee") -> AppTest:
    at = open_page("pages/memory.py")
    if name:
        at.sidebar.text_input[0].input(name).run()
    return at


def open_editor(at: AppTest, unit_id: int) -> AppTest:
    return at.toggle(key=f"edit-open-{unit_id}").set_value(True).run()


def save_correction(at, fact: str, reason: str):
    """Type a corrected fact and its reason into the open unit's edit form and save it."""
    at.text_area[0].set_value(fact)
    next(t for t in at.text_input if t.label == "Reason for the change").set_value(reason)
    next(b for b in at.button if b.label == "Save correction").click().run()


def test_memory_page_edits_and_deletes_a_unit(app):
    store = built(app)
    first = store.units("sample-daniel")[0]
    at = open_editor(memory_page(), first.id)
    save_correction(at, "Daniel's father was diagnosed with early dementia in July 2025.", "wrong subject")
    assert not at.exception
    edited = store.get_unit("sample-daniel", first.id)
    assert edited.fact.text.startswith("Daniel's father") and edited.version == first.version + 1
    (change,) = [h for h in history(store, "sample-daniel", "unit", first.id) if h["field"] == "fact.text"]
    assert change["old"] == first.fact.text and change["reason"] == "wrong subject" and change["who"] == "Dr. Lee"
    assert [t.value.replace("\\", "") for t in at.toast] == [f"m{first.id} saved."]  # where the user looks
    next(b for b in at.button if b.label == "Save correction").click().run()  # again, unchanged
    assert [t.value.replace("\\", "") for t in at.toast] == [f"Nothing changed in m{first.id}."]
    assert store.get_unit("sample-daniel", first.id).version == edited.version

    at = memory_page()
    next(b for b in at.button if b.label == "Delete").click().run()
    yes = next(b for b in at.button if b.label == "Delete for good")
    assert yes.disabled  # a deletion needs a reason
    assert any("for good" in t.value and "link" in t.value for t in at.text)  # says what will be lost
    at.text_input(key="confirm-delete-reason").input("not what he said").run()
    next(b for b in at.button if b.label == "Delete for good").click().run()
    assert not at.exception
    assert first.id not in {u.id for u in store.units("sample-daniel")}
    assert [t.value.replace("\\", "") for t in at.toast] == [f"m{first.id} deleted."]
    rows = history(store, "sample-daniel", "unit", first.id)
    (deleted,) = [h for h in rows if h["action"] == "delete"]
    assert deleted["reason"] == "not what he said" and deleted["who"] == "Dr. Lee"
    assert all(h["old"] is None and h["new"] is None for h in rows)  # the edit's old and new text went too


def test_memory_dialogs_cancel_and_confirm(app):
    store = built(app)
    first = store.units("sample-daniel")[0]
    at = memory_page()
    for action, label in (("Dispute", "Dispute"), ("Archive", "Archive"), ("Delete", "Delete for good")):
        next(b for b in at.button if b.label == action).click().run()
        assert any(b.label == label for b in at.button if b.key and b.key.endswith("-yes"))
        next(b for b in at.button if b.label == "Cancel").click().run()
        assert not any(b.label == "Cancel" for b in at.button)  # closed
    unchanged = store.get_unit("sample-daniel", first.id)
    assert not unchanged.disputed and unchanged.lifecycle_status == first.lifecycle_status
    assert unchanged.version == first.version
    next(b for b in at.button if b.label == "Archive").click().run()
    at.text_input(key="confirm-archive-reason").input("no longer current").run()
    next(b for b in at.button if b.label == "Archive" and b.key == "confirm-archive-yes").click().run()
    assert store.get_unit("sample-daniel", first.id).lifecycle_status == "archived"
    table = at.dataframe[0].value.data if hasattr(at.dataframe[0].value, "data") else at.dataframe[0].value
    assert table.loc[table["id"] == first.id, "out of retrieval"].item() == "archived"


def test_a_disputed_unit_leaves_the_packet(app):
    store = built(app)
    at = open_page("pages/ask.py")
    at.text_input(key="ask_question").set_value("When did Daniel's father move into a care home?")
    next(n for n in at.number_input if n.label == "τ").set_value(0.0)
    next(b for b in at.button if b.label == "Ask").click().run()
    used = at.session_state["trace"].packet.primary[0].id
    at.switch_page("pages/memory.py").run()
    at.sidebar.text_input[0].input("Dr. Lee").run()
    at.session_state["unit_id"] = used
    at.run()
    next(b for b in at.button if b.label == "Dispute").click().run()
    at.text_input(key="confirm-dispute-reason").input("not what he said").run()
    next(b for b in at.button if b.key == "confirm-dispute-yes").click().run()
    assert store.get_unit("sample-daniel", used).disputed
    at.switch_page("pages/ask.py").run()
    at.text_input(key="ask_question").set_value("When did Daniel's father move into a care home?")
    next(n for n in at.number_input if n.label == "τ").set_value(0.0)
    next(b for b in at.button if b.label == "Ask").click().run()
    assert used not in at.session_state["trace"].packet.unit_ids()


def test_clicking_a_row_opens_its_card_with_context_turns(app):
    store = built(app)
    units = store.units("sample-daniel")
    at = memory_page()
    assert at.subheader[0].value == f"m{units[0].id}"
    target = units[2]
    at.session_state["memory_table"] = {"selection": {"rows": [2], "columns": [], "cells": []}}
    at.run()
    assert at.subheader[0].value == f"m{target.id}"
    assert at.query_params["unit"] in (str(target.id), [str(target.id)])
    texts = [t.value for t in at.text]
    assert any(t.startswith("Fact [") and target.fact.text in t for t in texts)
    marked = [t for t in texts if t.startswith(("▶ [", "· ["))]
    evidence = [t for t in marked if t.startswith("▶")]
    assert len(evidence) == target.evidence.end - target.evidence.start + 1
    assert len(marked) > len(evidence)  # turns around the evidence too


def test_the_url_restores_case_and_unit_and_search_covers_the_evidence(app):
    store = built(app)
    target = store.units("sample-daniel")[-1]
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["case"] = "sample-daniel"
    at.query_params["unit"] = str(target.id)
    at.run()
    at.switch_page("pages/memory.py")
    at.query_params["unit"] = str(target.id)
    at.run()
    assert at.title[0].value == "Memory · sample\\-daniel" and at.subheader[0].value == f"m{target.id}"
    words = store.turns("sample-daniel", start=target.evidence.start, end=target.evidence.start)[0].text.split()
    needle = max(words, key=len).strip(".,!?")
    next(t for t in at.text_input if t.label == "Text contains").input(needle).run()
    table = at.dataframe[0].value.data if hasattr(at.dataframe[0].value, "data") else at.dataframe[0].value
    assert target.id in set(table["id"])


def test_changes_need_a_name_when_sign_in_is_off(app):
    built(app)
    at = memory_page(name=None)
    assert any("Type your name" in w.value for w in at.warning)
    assert all(b.disabled for b in at.button if b.label in ("Dispute", "Archive", "Delete"))
    assert at.toggle[0].disabled


def test_graph_page_deletes_a_link(app):
    store = built(app)
    before = store.links("sample-daniel")
    assert before
    at = open_page("pages/graph.py")
    assert next(b for b in at.button if b.label == "Delete link").disabled  # a name first
    at.sidebar.text_input[0].input("Dr. Lee").run()
    chosen = at.selectbox(key="graph-delete-link").value
    next(b for b in at.button if b.label == "Delete link").click().run()
    assert len(store.links("sample-daniel")) == len(before)  # the dialog first
    at.text_input(key="confirm-link-delete-reason").input("not related").run()
    next(b for b in at.button if b.key == "confirm-link-delete-yes").click().run()
    assert not at.exception
    assert len(store.links("sample-daniel")) == len(before) - 1 and chosen not in {
        l.id for l in store.links("sample-daniel")
    }
    (row,) = [h for h in history(store, "sample-daniel", "link", chosen) if h["action"] == "delete"]
    assert row["who"] == "Dr. Lee" and row["reason"] == "not related"


def test_ask_page_shows_answer_and_trace(app):
    built(app)
    at = open_page("pages/ask.py")
    at.text_input(key="ask_question").set_value("When did Daniel's father move into a care home?")  # sent on Ask
    next(b for b in at.button if b.label == "Ask").click().run()
    assert not at.exception
    assert any("October 3, 2025 ![x](//example.invalid/p.png)" in t.value for t in at.text)  # shown as text
    rendered = [m.value for m in at.markdown] + [c.value for c in at.caption] + [e.label for e in at.expander]
    assert not any("](//example.invalid" in v for v in rendered)  # never as a Markdown image
    assert any(h.value == "Scored candidates" for h in at.subheader)
    trace = at.session_state["trace"]  # R's formula with the values this answer used
    formula = f"R = λ·s_emb + (1 − λ)·cue, λ = {trace.settings['lam']}:"
    assert any(c.value.replace("\\", "").startswith(formula) for c in at.caption)
    # the turn channel is named when it showed turns
    assert bool(trace.channel_turn_ids) == any("Turn channel" in c.value for c in at.caption)


def test_plain_escapes_markdown_and_html():
    import ui

    assert ui.plain("![x](//h/p.png) <b>*b*</b>") == r"\!\[x\]\(//h/p\.png\) \<b\>\*b\*\</b\>"
    # Bare URLs, www. names and addresses, which GFM links after escaping, get an invisible break.
    assert ui.plain("http://h.org www.h.org a@h.org") == "http\\:\u2060//h\\.org www\u2060\\.h\\.org a@\u2060h\\.org"


def test_build_page_asks_for_consent_before_building(app):
    store = Store(app)
    ingest_file(store, SAMPLE)  # a case ingested without consent
    at = open_page("pages/build.py")
    assert not at.exception and at.warning
    assert next(b for b in at.button if b.label == "Start / resume build").disabled
    next(t for t in at.text_input if t.key == "build_consent_note").set_value("signed form, first session").run()
    at.sidebar.text_input(key="who").input("Dr. Lee").run()  # consent is recorded with who recorded it
    next(b for b in at.button if b.label == "Record consent granted").click().run()
    assert not at.exception
    assert not next(b for b in at.button if b.label == "Start / resume build").disabled
    (row,) = consent.log(store, "sample-daniel")
    assert (row["state"], row["note"], row["who"]) == ("granted", "signed form, first session", "Dr. Lee")


def test_privacy_page_withdraws_consent_and_erases_the_case(app):
    store = built(app)
    at = open_page("pages/privacy.py")
    assert not at.exception
    assert any(t.value.startswith("State: granted") for t in at.text)
    assert next(b for b in at.button if b.label == "Record consent withdrawn").disabled  # a name first
    at.sidebar.text_input[0].input("Dr. Lee").run()
    next(b for b in at.button if b.label == "Record consent withdrawn").click().run()
    assert consent.state(store, "sample-daniel")["state"] == "withdrawn"
    next(b for b in at.button if b.label == "Prepare export").click().run()
    assert next(d for d in at.get("download_button")).proto.label == "Download the export"
    erase = lambda: next(b for b in at.button if b.label == "Erase for good")  # noqa: E731
    assert erase().disabled
    next(t for t in at.text_input if t.key == "erase_confirm").set_value("sample-danie").run()
    assert erase().disabled  # the id typed exactly, nothing less
    next(t for t in at.text_input if t.key == "erase_confirm").set_value("sample-daniel").run()
    erase().click().run()
    assert not at.exception
    assert not store.case_exists("sample-daniel") and store.vectors.files("sample-daniel") == []
    assert "export" not in at.session_state and "trace" not in at.session_state


def test_privacy_page_deletes_a_session_memory_after_the_dialog(app):
    store = built(app)
    at = open_page("pages/privacy.py")
    at.sidebar.text_input[0].input("Dr. Lee").run()
    before = len(store.units("sample-daniel"))
    next(b for b in at.button if b.label == "Delete this session's memory").click().run()
    assert any("corrections made by hand included" in t.value for t in at.text)
    next(b for b in at.button if b.label == "Cancel").click().run()
    assert len(store.units("sample-daniel")) == before
    next(b for b in at.button if b.label == "Delete this session's memory").click().run()
    at.text_input(key="confirm-session-delete-reason").input("client asked").run()
    next(b for b in at.button if b.label == "Delete its memory").click().run()
    assert not at.exception, at.exception
    first_session = store.sessions("sample-daniel")[0].id
    assert [u for u in store.units("sample-daniel") if u.evidence.session_id == first_session] == []
    assert len(store.units("sample-daniel")) < before


def test_ask_page_drops_an_answer_whose_memory_was_deleted(app):
    from ftamem_core.governance.editing import delete_unit

    store = built(app)
    at = open_page("pages/ask.py")
    at.text_input(key="ask_question").set_value("When did Daniel's father move into a care home?")  # sent on Ask
    next(n for n in at.number_input if n.label == "τ").set_value(0.0)  # stored vectors are hashed words
    next(b for b in at.button if b.label == "Ask").click().run()
    used = at.session_state["trace"].packet.unit_ids()
    assert used and any(h.value == "Memory packet" for h in at.subheader)
    delete_unit(store, "sample-daniel", used[0], "Dr. Lee", "wrong")
    at.run()
    assert not at.exception and "trace" not in at.session_state
    assert not any(h.value == "Memory packet" for h in at.subheader) and at.info


def test_two_tabs_editing_one_unit_the_second_save_is_refused_visibly(app):
    store = built(app)
    first = store.units("sample-daniel")[0]
    tab1, tab2 = open_editor(memory_page(), first.id), open_editor(memory_page(), first.id)  # both read version 1
    tab1.text_area[0].set_value("Daniel's father has early dementia.")
    next(b for b in tab1.button if b.label == "Save correction").click().run()
    assert store.get_unit("sample-daniel", first.id).fact.text == "Daniel's father has early dementia."
    tab2.text_area[0].set_value("Daniel visits his father on Sundays.")
    next(b for b in tab2.button if b.label == "Save correction").click().run()
    assert not tab2.exception
    assert store.get_unit("sample-daniel", first.id).fact.text == "Daniel's father has early dementia."  # kept
    message = tab2.error[0].value.replace("\\", "")
    assert message.startswith(f"Not saved: m{first.id} was changed") and "early dementia" in message
    next(b for b in tab2.button if b.label.startswith("Load the saved version")).click().run()
    assert tab2.text_area[0].value == "Daniel's father has early dementia."  # the other tab's edit, shown
    tab2.text_area[0].set_value("Daniel's father has early dementia; Daniel visits on Sundays.")
    next(b for b in tab2.button if b.label == "Save correction").click().run()
    assert store.get_unit("sample-daniel", first.id).fact.text.endswith("visits on Sundays.")


def test_ask_page_offers_stored_questions_asks_on_submit_and_shows_gold_and_facts(app):
    store = built(app)
    at = open_page("pages/ask.py")
    assert at.title[0].value == "Ask · sample\\-daniel"  # the title names the case
    first = store.questions("sample-daniel")[0]
    next(b for b in at.button if b.label == "Use this question").click().run()
    assert at.text_input(key="ask_question").value == first.question  # the starter fills the box
    next(b for b in at.button if b.label == "Ask").click().run()  # a form: Enter in the box does the same
    assert not at.exception, at.exception
    texts = [t.value for t in at.text]
    assert any(t.startswith("Gold answer: ") and first.answer in t for t in texts)
    assert any(t.startswith("Gold evidence turns: ") for t in texts)
    candidates = next(d.value for d in at.dataframe if "fact" in d.value.columns)
    facts = {u.id: u.fact.text for u in store.units("sample-daniel")}
    assert all(row["fact"] == facts[row["id"]] for _, row in candidates.iterrows())
    assert [b.label for b in at.get("download_button")] == ["Trace as JSON"]
    statuses = [e for e in at.main if type(e).__name__ == "Status"]  # st.status with the stages
    assert len(statuses) == 1 and statuses[0].label.startswith("Answered in")


def test_ask_page_with_an_empty_question_asks_nothing(app):
    built(app)
    at = open_page("pages/ask.py")
    next(b for b in at.button if b.label == "Ask").click().run()
    assert "trace" not in at.session_state and any("Type a question" in w.value for w in at.warning)


def test_cited_unit_opens_in_memory_and_the_url_names_case_and_unit(app):
    store = built(app)
    at = open_page("pages/ask.py")
    assert at.query_params["case"] in ("sample-daniel", ["sample-daniel"])
    at.text_input(key="ask_question").set_value("When did Daniel's father move into a care home?")
    next(n for n in at.number_input if n.label == "τ").set_value(0.0)
    next(b for b in at.button if b.label == "Ask").click().run()
    trace = at.session_state["trace"]
    unit = store.units("sample-daniel")[0].id
    trace.cited_unit_ids = [trace.packet.primary[0].id]
    at.run()
    next(b for b in at.button if b.label == "Open in Memory").click().run()
    assert not at.exception, at.exception
    assert at.query_params["unit"] in (str(trace.packet.primary[0].id), [str(trace.packet.primary[0].id)]) and unit


def test_a_rebuild_from_scratch_is_refused_while_corrections_stand_and_says_which(app, capsys):
    from ftamem_core.cli import main
    from ftamem_core.governance.editing import delete_unit, edit_unit, human_corrections
    from ftamem_core.errors import CorrectionsAtRisk

    store = built(app)
    first, second = store.units("sample-daniel")[:2]
    edit_unit(
        store,
        None,
        "sample-daniel",
        first.id,
        {"fact.text": "Daniel's father moved."},
        first.version,
        "Dr. Lee",
        "wrong subject",
    )
    delete_unit(store, "sample-daniel", second.id, "Dr. Lee", "not what he said")
    builder = Builder(
        store,
        Pipeline().llm(),
        HashEmbedder(),
        load_settings(environ={}, extraction={"ground_facts": False, "turns_per_unit": 0, "verbatim_fallback": False}),
    )
    with pytest.raises(CorrectionsAtRisk) as refused:
        builder.build("sample-daniel", from_scratch=True)
    message = str(refused.value)
    assert f"m{first.id} fact.text edited by Dr. Lee" in message and f"m{second.id} deleted by Dr. Lee" in message
    assert store.get_unit("sample-daniel", first.id).fact.text == "Daniel's father moved."  # nothing cleared
    assert main(["--db", str(app), "build", "sample-daniel", "--from-scratch", "--quiet"]) == 1
    assert "would discard 2 correction(s)" in capsys.readouterr().err

    # the Build page: the dialog lists them; Cancel changes nothing, confirming discards and rebuilds
    at = open_page("pages/build.py")
    next(c for c in at.checkbox if c.label == "Rebuild from scratch").check().run()
    next(b for b in at.button if b.label == "Start / resume build").click().run()
    listed = " ".join(t.value for t in at.text)
    assert f"m{first.id} fact.text edited by Dr. Lee" in listed and "would be lost" in listed
    next(b for b in at.button if b.label == "Cancel").click().run()
    assert ui_job(app) is None and store.get_unit("sample-daniel", first.id).fact.text == "Daniel's father moved."
    next(b for b in at.button if b.label == "Start / resume build").click().run()
    next(b for b in at.button if b.label == "Discard them and rebuild").click().run()
    assert not at.exception, at.exception
    wait_until_built(store)
    assert human_corrections(store, "sample-daniel") == []  # discarded on purpose, recorded
    (mark,) = [h for h in history(store, "sample-daniel") if h["action"] == "rebuild_discarded"]
    assert mark["reason"] == "2 correction(s) discarded by a rebuild"


def ui_job(db):
    import ui

    job = ui.jobs().get("sample-daniel")
    return job if job is not None and job.running else None


def test_loading_with_replace_asks_first_and_cancel_keeps_the_case(app):
    store = built(app)
    unit = store.units("sample-daniel")[0]
    from ftamem_core.governance.editing import edit_unit

    edit_unit(store, None, "sample-daniel", unit.id, {"fact.text": "Corrected by hand."}, unit.version, "Dr. Lee", "x")
    at = open_page("pages/cases.py")
    at.radio(key="on_exists").set_value("replace").run()
    # what "Load file" leaves for the dialog when the file holds a stored case
    pending = {"name": "sample_case.json", "data": SAMPLE.read_bytes(), "ids": ["sample-daniel"]}
    at.session_state["confirm-replace"] = pending
    at.run()
    text = " ".join(t.value for t in at.text)
    assert "sample-daniel: 4 units, 1 correction(s) by hand" in text and "deletes these stored cases" in text
    next(b for b in at.button if b.label == "Cancel").click().run()
    assert store.get_unit("sample-daniel", unit.id).fact.text == "Corrected by hand."
    at.session_state["confirm-replace"] = pending
    at.run()
    next(b for b in at.button if b.label == "Replace them").click().run()
    assert not at.exception, at.exception
    assert store.units("sample-daniel") == []  # replaced: loaded again from the file, not built yet
    from ftamem_core.governance import auth, consent

    assert "replace" in [r["action"] for r in auth.access_log(store, "sample-daniel")]  # issue 40 item 8
    assert consent.granted(store, "sample-daniel")  # its consent log stays


def test_first_start_says_what_to_do_next_with_the_time_it_takes(app, monkeypatch):
    from ftamem_core.construction import estimate

    monkeypatch.setitem(estimate.MEASURED, "script.json", (24.4, "a test figure"))  # the scripted model's name
    at = open_page("pages/cases.py")
    next(b for b in at.button if b.label == "Load the sample case").click().run()
    hint = next(i.value for i in at.info if i.value.startswith("Next"))
    assert "build the memory of sample-daniel (33 turns)" in hint.replace("\\", "")
    assert "It takes about 13 minutes here (measured with script.json on a test figure" in hint.replace("\\", "")
    at.switch_page("pages/build.py").run()
    assert any(c.value.startswith("Estimate for the") for c in at.caption)


def test_an_ask_while_a_build_holds_the_model_says_so(app):
    import threading

    import ui
    from ftamem_core.construction.jobs import BuildJob

    built(app)
    at = open_page("pages/ask.py")
    release = threading.Event()
    job = BuildJob("other-case", builder=None, segmentation="bws")  # a build running elsewhere
    job.thread = threading.Thread(target=release.wait, daemon=True)
    job.thread.start()
    ui.jobs()._jobs["other-case"] = job
    try:
        at.text_input(key="ask_question").set_value("When did Daniel's father move into a care home?")
        next(b for b in at.button if b.label == "Ask").click().run()
        assert any(t.value == "Building now: other-case. The answer comes once the model is free." for t in at.text)
        (status,) = [e for e in at.main if type(e).__name__ == "Status"]
        assert status.label.startswith("Answered in")
    finally:
        release.set()


@pytest.mark.parametrize("page", ["pages/cases.py", "pages/privacy.py"])
def test_item2_a_case_with_a_broken_retention_breaks_no_page(app, page):
    store = Store(app)
    ingest_file(store, SAMPLE)
    store.conn.execute("UPDATE cases SET created_at = 'not a date', retention_days = 30")
    at = open_page(page)
    assert not at.exception, at.exception
    assert any("could not be evaluated" in w.value for w in at.warning)


def test_reasons_clear_after_saving_so_a_second_save_gives_its_own(app):
    store = built(app)
    first = store.units("sample-daniel")[0]
    at = open_editor(memory_page(), first.id)
    save_correction(at, "Daniel's father was diagnosed in July 2025.", "wrong subject")
    assert next(t for t in at.text_input if t.label == "Reason for the change").value == ""
    at.text_area[0].set_value("Daniel's father was diagnosed in August 2025.")
    next(t for t in at.text_input if t.label == "Reason for the change").set_value("month misheard")
    next(b for b in at.button if b.label == "Save correction").click().run()
    assert not at.exception
    reasons = [h["reason"] for h in history(store, "sample-daniel", "unit", first.id) if h["field"] == "fact.text"]
    assert reasons == ["wrong subject", "month misheard"]

    at = open_page("pages/graph.py")
    at.sidebar.text_input[0].input("Dr. Lee").run()
    ids = [u.id for u in store.units("sample-daniel")]
    before = {l.id for l in store.links("sample-daniel")}
    for (source, target), why in zip([(ids[1], ids[0]), (ids[2], ids[0])], ["same topic", "he said so later"]):
        form = [s for s in at.selectbox if s.label in ("Newer unit", "Older unit")]
        form[0].set_value(source)
        form[1].set_value(target)
        next(t for t in at.text_input if t.key == "add-link-reason").input(why)
        next(b for b in at.button if b.label == "Add link").click().run()
        assert not at.exception
        assert next(t for t in at.text_input if t.key == "add-link-reason").value == ""
    added = [l.id for l in store.links("sample-daniel") if l.id not in before]
    got = sorted(h["reason"] for i in added for h in history(store, "sample-daniel", "link", i) if h["action"] == "add")
    assert got == ["he said so later", "same topic"]


def test_a_link_to_an_unknown_case_or_a_deleted_unit_says_so_and_opens_nothing(app):
    store = built(app)
    for page in ("pages/memory.py", "pages/cases.py"):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
        at.query_params["case"] = "no-such-case"
        at.run()
        if page != "pages/cases.py":
            at.switch_page(page)
            at.query_params["case"] = "no-such-case"
            at.run()
        assert not at.exception
        assert any("no-such-case" in w.value.replace("\\", "") and "not here" in w.value for w in at.warning)
        assert at.sidebar.selectbox[0].value is None  # no other case was opened in its place
        assert page == "pages/cases.py" or not at.subheader  # no unit card
        at.sidebar.selectbox[0].set_value("sample-daniel").run()  # the list is offered: choosing works
        assert not any("no-such-case" in w.value.replace("\\", "") for w in at.warning)

    gone = store.units("sample-daniel")[0]
    from ftamem_core.governance.editing import delete_unit

    delete_unit(store, "sample-daniel", gone.id, "Dr. Lee", "not said")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["case"] = "sample-daniel"
    at.run()
    at.switch_page("pages/memory.py")
    at.query_params["unit"] = str(gone.id)
    at.run()
    assert not at.exception
    assert any(f"m{gone.id}" in w.value and "not in this case" in w.value for w in at.warning)
    assert not at.subheader  # no other unit opened in its place
    assert at.query_params["unit"] == [str(gone.id)] or at.query_params["unit"] == str(gone.id)


def test_people_read_sessions_from_1_words_dates_and_dashes(app):
    store = built(app)
    first = store.units("sample-daniel")[0]
    at = memory_page()
    card = [t.value for t in at.text]
    assert any(t.startswith("Fact [event]") for t in card)
    assert not any(
        "unknown" in t or "_" in t.split(":")[0] for t in card if t.startswith(("Time", "Feeling", "Relations"))
    )
    assert any(t.startswith("Relations: —") for t in card)
    table = at.dataframe[0].value
    assert "0" not in {str(v) for v in table["session"]}  # sessions counted from 1
    open_editor(at, first.id)
    next(t for t in at.text_input if t.label == "Reason for the change").set_value("wrong subject")
    at.text_area[0].set_value("Daniel's father was diagnosed in July 2025.")
    next(b for b in at.button if b.label == "Save correction").click().run()
    hist = next(d.value for d in at.dataframe if "who" in list(d.value.columns))
    assert list(hist.columns)[:4] == ["who", "when", "what", "why"]
    assert not any(str(v)[:4].isdigit() and "T" in str(v) for v in hist["when"])  # a date, not ISO

    at = open_page("pages/privacy.py")
    at.sidebar.text_input[0].input("Dr. Lee").run()
    first_session = min(s.idx for s in store.sessions("sample-daniel"))
    at.selectbox(key="privacy_session").set_value(first_session).run()
    next(b for b in at.button if b.label == "Delete this session's memory").click().run()
    assert any(f"units built from session {first_session + 1} with" in t.value for t in at.text)  # not "session 0"


def test_display_helpers():
    from ftamem_core.display import date, history_rows, number, word

    assert word("support_interaction") == "support interaction" and word("unknown") == "—" and word(None) == "—"
    assert date("2025-09-12T10:00:00+00:00") == "12 September 2025" and date("") == "—"
    assert number(0) == "1" and number(None) == "—"
    assert list(history_rows([{"id": 1, "at": None, "who": "a", "action": "model_edit", "reason": ""}])[0]) == [
        "who",
        "when",
        "what",
        "why",
        "of",
        "field",
        "was",
        "became",
    ]  # no row or case ids


def test_the_edit_form_corrects_who_relations_and_the_time_as_said_with_history(app):
    store = built(app)
    first = store.units("sample-daniel")[0]
    at = open_editor(memory_page(), first.id)
    next(t for t in at.text_input if t.label.startswith("Who")).set_value("Daniel, his father")
    next(t for t in at.text_input if t.label == "Time as said").set_value("last July")
    next(t for t in at.text_input if t.label == "Relations").set_value("father of Daniel")
    next(t for t in at.text_input if t.label == "Reason for the change").set_value("heard again")
    next(b for b in at.button if b.label == "Save correction").click().run()
    assert not at.exception
    saved = store.get_unit("sample-daniel", first.id)
    assert saved.fact.participants == ["Daniel", "his father"]
    assert saved.time.event_time_expression == "last July" and saved.affect.relation_cues == "father of Daniel"
    fields = {h["field"]: h for h in history(store, "sample-daniel", "unit", first.id)}
    assert {"fact.participants", "time.event_time_expression", "affect.relation_cues"} <= set(fields)
    assert (
        fields["affect.relation_cues"]["reason"] == "heard again" and fields["affect.relation_cues"]["who"] == "Dr. Lee"
    )


def test_memory_filters_by_how_units_were_made_with_counts_the_url_and_the_card(app):
    from ftamem_core.governance.editing import edit_unit

    store = built(app)
    first, second, third, _ = store.units("sample-daniel")
    edit_unit(
        store, None, "sample-daniel", first.id, {"fact.text": "Daniel's father moved."}, first.version, "Dr. Lee", "x"
    )
    store.conn.execute("UPDATE units SET origin = 'copied' WHERE id IN (?, ?)", (second.id, third.id))
    store.conn.commit()
    origins = {u.id: u.origin for u in store.units("sample-daniel")}

    def table(at):
        frame = at.main.dataframe[0].value
        return frame.data if hasattr(frame, "data") else frame

    def counts(at) -> list[str]:
        return [c.value for c in at.caption if c.value.startswith("Of the units")]

    def counted(ids) -> list[str]:
        """The caption the page should show for these units."""
        said = {"model": "written by the model", "copied": "copied from a turn", "corrected": "corrected by a person"}
        n = {o: sum(origins[i] == o for i in ids) for o in said}
        return [
            "Of the units the other filters and the search leave: "
            + " · ".join(f"{w} {n[o]}" for o, w in said.items() if n[o])
        ]

    at = memory_page()
    made = at.multiselect(key="provenance")
    assert made.label == "How it was made"
    assert made.options == ["written by the model", "copied from a turn", "corrected by a person"]  # in words
    assert counts(at) == [
        "Of the units the other filters and the search leave: "
        "written by the model 1 · copied from a turn 2 · corrected by a person 1"
    ]
    assert set(table(at)["made"]) == {"written by the model", "copied from a turn", "corrected by a person"}
    assert "How it was made: corrected by a person" in [t.value for t in at.text]  # the card of the first unit

    made.set_value(["copied"]).run()
    assert not at.exception, at.exception
    assert list(table(at)["id"]) == [second.id, third.id]
    assert at.subheader[0].value == f"m{second.id}"  # the card follows the filter
    assert "How it was made: copied from a turn" in [t.value for t in at.text]

    # with another filter: both apply, and the counts are of what the other filters leave
    session = next(x for x in store.sessions("sample-daniel") if x.id == third.evidence.session_id)
    assert session.id != second.evidence.session_id
    at.multiselect[0].set_value([session.idx]).run()
    assert list(table(at)["id"]) == [third.id]
    assert counts(at) == counted([u.id for u in store.units("sample-daniel") if u.evidence.session_id == session.id])
    at.multiselect[0].set_value([]).run()

    # with the search: the hits made that way only, the counts of all the hits
    needle = store.turns("sample-daniel", start=third.evidence.start, end=third.evidence.end)
    word_ = max((w.strip(".,!?") for t in needle for w in t.text.split()), key=len)
    next(t for t in at.text_input if t.label == "Text contains").input(word_).run()
    assert not at.exception, at.exception
    copied = list(table(at)["id"])
    assert third.id in copied and set(copied) <= {second.id, third.id}
    at.multiselect(key="provenance").set_value([]).run()
    hits = list(table(at)["id"])
    assert set(copied) <= set(hits) and counts(at) == counted(hits)

    # a shared link opens with the filter set (the browser writes the URL: tests/test_browser_words.py)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["case"] = "sample-daniel"
    at.run()
    at.switch_page("pages/memory.py")
    at.query_params["provenance"] = "corrected by a person"
    at.run()
    assert not at.exception, at.exception
    assert at.multiselect(key="provenance").value == ["corrected"]
    assert list(table(at)["id"]) == [first.id]
