"""Cases: the stored cases with their counts; choose the active case; load a file or the sample."""

import tempfile
from pathlib import Path

import streamlit as st

import appstate
import ui
from ftamem_core.display import date, moment, number, rows, text, word
from ftamem_core.governance.editing import human_corrections
from ftamem_core.construction.estimate import describe as duration, seconds_per_turn
from ftamem_core.ingest import ingest_file, parse_pasted_session, session_from_rows, upload_name
from ftamem_core.loaders import LoadError, load_file
from ftamem_core.storage.store import StoreError

st.title("Cases")
ui.unknown_case_notice()
store = ui.active_store()
cases = store.list_cases()

if cases:
    st.dataframe(
        rows(
            cases,
            {
                "id": "case",
                "name": "name",
                "source_format": "format",
                "sessions": "sessions",
                "turns": "turns",
                "units": "units",
                "questions": "questions",
                "last_build_at": "last build",
                "created_at": "loaded",
            },
            dates=("last_build_at", "created_at"),
        ),
        hide_index=True,
    )
    st.caption("Choose the active case in the sidebar.")
    unbuilt = [c for c in cases if not c["units"]]
    if unbuilt:  # what to do next, with how long it takes here
        first = unbuilt[0]
        speed = seconds_per_turn(store, ui.llm_config().model)
        when = f" It takes {duration(speed[0] * first['turns'])} here ({speed[1]})." if speed else ""
        st.info(
            ui.plain(
                f"Next: build the memory of {first['id']} ({first['turns']} turns) on the Build page, "
                f"with {ui.llm_config().model}.{when} Then open Memory to check it, or Ask a question."
            )
        )
        st.page_link("pages/build.py", label="Go to Build")
else:
    st.info("No cases yet. Load a dialogue file or the bundled sample case.")


def ingest(path: str, on_exists: str, sample: bool = False) -> None:
    """Button callback: runs before the next script run, so the sidebar sees the new case. The
    fictional sample case is loaded with consent recorded; any other case asks for it on Build."""
    try:
        outcome = ingest_file(
            store,
            path,
            on_exists=on_exists,
            max_turn_chars=ui.settings().input.max_turn_chars,
            max_mb=ui.settings().input.max_upload_mb,
            who=ui.who(),
            consent_by=ui.who() if sample else None,
            consent_note="fictional sample case bundled with the app" if sample else "",
        )
    except (LoadError, StoreError) as e:
        appstate.flash("error", e)
        return
    except Exception as e:  # anything else: one line, nothing stored (ingest is one transaction)
        appstate.flash("error", f"could not load the file ({e.__class__.__name__})")
        return
    appstate.flash("success", ", ".join(f"{cid}: {what}" for cid, what in outcome.items()))
    if outcome:
        appstate.choose_case(next(iter(outcome)))


def ingest_upload() -> None:
    upload = appstate.get(appstate.UPLOAD)
    if upload is None:
        appstate.flash("warning", "Choose a file first.")
        return
    limit = ui.settings().input.max_upload_mb
    if upload.size > limit * 2**20:
        appstate.flash(
            "error", f"The file is {upload.size / 2**20:.1f} MB; the limit is {limit} MB (setting input.max_upload_mb)."
        )
        return
    on_exists = appstate.get(appstate.ON_EXISTS, "refuse")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / upload_name(upload.name)
        path.write_bytes(upload.getvalue())
        if on_exists == "replace":  # replacing destroys built memory and corrections: confirm first
            try:
                stored = [d.case.id for d in load_file(path, max_mb=limit) if store.case_exists(d.case.id)]
            except LoadError as e:
                appstate.flash("error", e)
                return
            if stored:
                appstate.put(appstate.CONFIRM_REPLACE, {"name": upload.name, "data": upload.getvalue(), "ids": stored})
                return
        ingest(str(path), on_exists)


def replace_confirmed(reason: str) -> str:
    pending = appstate.get(appstate.CONFIRM_REPLACE) or {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / upload_name(pending["name"])
        path.write_bytes(pending["data"])
        ingest(str(path), "replace")
    return f"Replaced {', '.join(pending['ids'])}."


def _edited_rows() -> list[dict]:
    """The data editor's rows: its starting row with the edits and added rows applied."""
    state = appstate.get(appstate.TYPED_EDITOR, {})
    rows = [{"role": "user", "speaker": "", "timestamp": "", "text": ""}]
    for i, change in state.get("edited_rows", {}).items():
        rows[int(i)].update(change)
    rows += [{"role": "user", **r} for r in state.get("added_rows", [])]
    deleted = set(state.get("deleted_rows", []))
    return [r for i, r in enumerate(rows) if i not in deleted]


ui.show_flash()
col1, col2 = st.columns(2)
with col1:
    st.subheader("Load a file")
    st.file_uploader(
        "LoCoMo, ES-MemEval, JSON/JSONL or text transcript", type=["json", "jsonl", "txt", "md"], key=appstate.UPLOAD
    )
    st.radio("If a case is already stored", ["refuse", "replace", "skip"], horizontal=True, key=appstate.ON_EXISTS)
    st.button("Load file", on_click=ingest_upload)
    pending = appstate.get(appstate.CONFIRM_REPLACE)
    if pending:
        lines = []
        for case_id in pending["ids"]:
            row = next((c for c in cases if c["id"] == case_id), {"units": 0})
            lines.append(
                f"- {case_id}: {row['units']} units, {len(human_corrections(store, case_id))} correction(s) by hand"
            )
        ui.confirm_dialog(
            appstate.CONFIRM_REPLACE,
            "Replace the stored cases?",
            "Loading with 'replace' deletes these stored cases with everything built and corrected for "
            "them (memory units, links, corrections and their edit history) and loads them again from the "
            "file; their consent log, access log and retention stay, and the replace is recorded:\n" + "\n".join(lines),
            replace_confirmed,
            reason=False,
            label="Replace them",
        )
with col2:
    st.subheader("Sample case")
    st.write("A three-session counseling dialogue written for this project.")
    st.button("Load the sample case", on_click=ingest, args=(ui.SAMPLE_CASE, "skip", True))


def append_session(case_id: str, mode: str) -> None:
    """Button callback: append the typed or pasted session to the active case."""
    when = appstate.get(appstate.NEW_SESSION_TIME, "")
    pasted = appstate.get(appstate.PASTED, "")
    if mode == "paste" and len(pasted) > ui.settings().input.max_upload_mb * 2**20:
        appstate.flash(
            "error", f"The pasted text is over {ui.settings().input.max_upload_mb} MB (setting input.max_upload_mb)."
        )
        return
    try:
        if mode == "paste":
            doc = parse_pasted_session(pasted, when, ui.settings().input.max_turn_chars)
        else:
            doc = session_from_rows(_edited_rows(), when, ui.settings().input.max_turn_chars)
        session = store.append_session(case_id, doc)
    except (LoadError, StoreError) as e:
        appstate.flash("error", e)
        return
    except Exception as e:  # anything else: one line, nothing stored
        appstate.flash("error", f"could not append the session ({e.__class__.__name__})")
        return
    appstate.flash("success", f"session {number(session.idx)} with {len(doc.turns)} turns appended to {case_id}")


case_id = ui.active_case()
if case_id:
    ui.access(case_id, "view", "cases page")
    with st.expander(ui.plain(f"Add a session to {case_id}")):
        st.text_input("Session date and time", key=appstate.NEW_SESSION_TIME, placeholder="2025-10-24 18:00")
        paste, typed = st.tabs(["Paste", "Turn by turn"])
        with paste:
            st.text_area(
                "One turn per line: Speaker: text (a role in brackets, e.g. Dr. Lee [assistant]: …)",
                key=appstate.PASTED,
                height=160,
            )
            st.button("Append pasted session", on_click=append_session, args=(case_id, "paste"))
        with typed:
            import pandas as pd

            st.data_editor(
                pd.DataFrame([{"role": "user", "speaker": "", "timestamp": "", "text": ""}]),
                num_rows="dynamic",
                key=appstate.TYPED_EDITOR,
                width="stretch",
                column_config={"role": st.column_config.SelectboxColumn(options=["user", "assistant", "other"])},
            )
            st.button("Append typed session", on_click=append_session, args=(case_id, "typed"))

    st.subheader(ui.plain(f"Sessions of {case_id}"))
    counts = store.session_turn_counts(case_id)
    sessions = store.sessions(case_id)
    st.dataframe(
        [
            {
                "#": number(s.idx),
                "id": s.source_id,
                "time": date(s.time) if s.time else text(s.time_text),
                "turns": counts.get(s.id, 0),
            }
            for s in sessions
        ],
        hide_index=True,
    )
    pick = st.selectbox("Show turns of session", [s.idx for s in sessions], format_func=number)
    session = next(s for s in sessions if s.idx == pick)
    shown = store.turns(case_id, session_id=session.id)
    timed = len({t.timestamp for t in shown}) > 1  # a time column only where turns have their own times
    st.dataframe(
        [
            {
                "turn": number(t.idx),
                "role": word(t.role),
                "speaker": text(t.speaker),
                **({"time": moment(t.timestamp)} if timed else {}),
                "text": t.text,
            }
            for t in shown
        ],
        hide_index=True,
    )
