"""Privacy: the active case's consent and its log, retention, what is stored, export, erasure,
and its edit history. Everything from the case is shown as text."""

import json

import streamlit as st

import appstate
import ui
from ftamem_core.governance import auth, consent, privacy
from ftamem_core.display import date, history_rows, moment, number, rows, word
from ftamem_core.governance.editing import delete_session_memory, history
from ftamem_core.models import MAX_RETENTION_DAYS
from ftamem_core.storage.store import StoreError

case_id = ui.require_case()
st.title(ui.plain(f"Privacy · {case_id}"))
ui.access(case_id, "view", "privacy page")
store = ui.active_store()
ui.show_flash()
st.text(f"Case: {case_id}")

st.subheader("Consent")
current = consent.state(store, case_id)
st.text(
    f"State: {word(current['state'])}"
    + (f" · recorded by {current['who']} on {date(current['at'])}" if current["at"] else "")
)
if current["note"]:
    st.text(f"Note: {current['note']}")


def record_consent(state: str) -> None:
    try:
        consent.record(store, case_id, state, ui.recorder() or "", appstate.get(appstate.CONSENT_NOTE, ""))
        ui.access(case_id, "consent", state)
    except StoreError as e:
        appstate.flash("error", e)
        return
    # the next change gives its own note (set in the callback: the browser's box empties too)
    appstate.put(appstate.CONSENT_NOTE, "")
    if state == "withdrawn":
        job = ui.jobs().get(case_id)
        if job is not None and job.running:
            job.stop()  # the build also sees the withdrawal itself, from any process
        appstate.flash(
            "warning",
            "Consent withdrawn: no more memory is built for this case. Finished sessions are kept "
            "until you erase the case below.",
        )
    else:
        appstate.flash("success", "Consent recorded: memory may be built for this case.")


if not ui.named():
    st.warning("Type your name in the sidebar first: consent, retention and deletions are recorded with who did them.")
st.text_input("Note (how and where consent was given or withdrawn)", key=appstate.CONSENT_NOTE)
c1, c2 = st.columns(2)
c1.button(
    "Record consent granted",
    on_click=record_consent,
    args=("granted",),
    disabled=current["state"] == "granted"
    or ui.recorder() is None
    or not appstate.get(appstate.CONSENT_NOTE, "").strip(),
    help="needs your name and a note",
)
c2.button(
    "Record consent withdrawn",
    on_click=record_consent,
    args=("withdrawn",),
    disabled=current["state"] != "granted" or ui.recorder() is None,
)
with st.expander("Consent log"):
    st.dataframe(
        rows(
            consent.log(store, case_id),
            {"at": "when", "state": "state", "who": "who", "note": "note"},
            enums=("state",),
        ),
        hide_index=True,
    )

st.subheader("Retention")
case = store.get_case(case_id)
default_days = ui.settings().governance.retention_days
try:
    end = privacy.expires_at(case.created_at, case.retention_days or default_days)
    st.text(
        f"Loaded {moment(case.created_at)}; "
        + (
            f"erased automatically after {moment(end.isoformat(timespec='minutes'))}"
            if end
            else "kept until erased by hand"
        )
    )
except (ValueError, OverflowError):
    st.warning(ui.plain(privacy.skipped_message([case_id])))
days = st.number_input(
    "Retention in days (0: none)",
    min_value=0,
    max_value=MAX_RETENTION_DAYS,
    value=min(case.retention_days or 0, MAX_RETENTION_DAYS),
    step=30,
)


def save_retention() -> None:
    try:
        privacy.set_retention(store, case_id, int(days) or None)
    except StoreError as e:
        appstate.flash("error", e)
        return
    appstate.flash("success", "Retention saved.")


st.button("Save retention", on_click=save_retention, disabled=not ui.named())

st.subheader("What is stored")
counts = privacy.case_counts(store, case_id)
st.dataframe([{"what": word(k), "rows": v} for k, v in counts.items()], hide_index=True)

st.subheader("Export")
st.caption(
    "One JSON document with everything stored about this case (dialogue, memory, history, consent, "
    "builds and model-call records). It leaves this app's protection once downloaded."
)
if st.button("Prepare export"):
    ui.access(case_id, "export", "prepared in the app")
    document = json.dumps(privacy.export_case(store, case_id), ensure_ascii=False, indent=1).encode("utf-8")
    appstate.put(appstate.EXPORT, (case_id, document))
prepared = appstate.get(appstate.EXPORT)
if prepared and prepared[0] == case_id:
    st.download_button(
        "Download the export",
        prepared[1],
        file_name="case-export.json",
        mime="application/json",
        on_click=lambda: appstate.forget(appstate.EXPORT),
    )

st.subheader("Delete a session's memory")
sessions = store.sessions(case_id)
done = store.done_sessions(case_id)
built = [s for s in sessions if s.id in done]
if built:
    pick = st.selectbox("Session", [s.idx for s in built], key="privacy_session", format_func=number)
    session = next(s for s in built if s.idx == pick)
    st.button(
        "Delete this session's memory",
        disabled=not ui.named(),
        on_click=appstate.setter(appstate.CONFIRM_SESSION_DELETE, session.id),
    )
    in_session = [u for u in store.units(case_id, construction_status=None) if u.evidence.session_id == session.id]

    def delete_session(reason: str) -> str:
        n = delete_session_memory(store, case_id, appstate.get(appstate.CONFIRM_SESSION_DELETE), ui.who(), reason)
        return (
            f"Session {number(pick)}: {n} units and what was derived from them deleted (its turns stay; a later build "
            "builds it again)."
        )

    ui.confirm_dialog(
        appstate.CONFIRM_SESSION_DELETE,
        f"Delete the memory of session {number(pick)}?",
        f"This deletes the {len(in_session)} units built from session {number(pick)} with their vectors, links, "
        "history text and the semantic and support entries built from them, corrections made by hand "
        "included. The session's turns stay, and a later build builds it again.",
        delete_session,
        label="Delete its memory",
    )
else:
    st.caption("No session has memory yet.")

st.subheader("Erase this case")
st.caption(
    "Erases the dialogue, memory, vectors, history, consent log and records of this case for good, "
    "and what this app holds of it in memory. Type the case id to confirm."
)
typed = st.text_input("Case id", key=appstate.ERASE_CONFIRM)
reason = st.text_input("Reason (kept in the erasure log, which holds no case id)", key=appstate.ERASE_REASON)
if st.button("Erase for good", type="primary", disabled=typed != case_id or not ui.named()):
    try:
        erased = privacy.erase_case(store, case_id, ui.who(), reason)
    except StoreError as e:
        st.error(ui.plain(e))
        st.stop()
    appstate.forget(appstate.TRACE, appstate.EXPORT, appstate.ERASE_CONFIRM, appstate.ERASE_REASON, appstate.UPLOAD)
    appstate.flash("success", f"Erased: {sum(erased.values())} rows and the case's index files.")
    st.rerun()

with st.expander("Edit history of this case"):
    changes = history_rows(history(store, case_id))
    if changes:
        st.dataframe(changes, hide_index=True)
    else:
        st.text("No change by hand or by a rebuild yet.")
with st.expander("Access log of this case"):
    st.dataframe(
        rows(
            auth.access_log(store, case_id),
            {"at": "when", "who": "who", "action": "what", "detail": "detail"},
            enums=("action",),
        ),
        hide_index=True,
    )
