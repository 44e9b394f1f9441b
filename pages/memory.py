"""Memory: the case's units (filter, inspect beside their evidence, edit, dispute, delete, history),
timelines, and the longitudinal memory with its source units."""

import plotly.express as px
import streamlit as st

import ui
from ftamem_core.editing import delete_unit, edit_unit, history
from ftamem_core.models import Completeness, ContentType, LifecycleStatus, TimeOrientation, Completion
from ftamem_core.store import StoreError, VersionConflict

st.title("Memory")
case_id = ui.require_case()
ui.access(case_id, "view", "memory page")
store = ui.active_store()
ui.show_flash()
units = store.units(case_id, construction_status=None)
if not units:
    st.info("No memory yet: build it on the Build page.")
    st.stop()
sessions = {s.id: s for s in store.sessions(case_id)}

with st.expander("Filters", expanded=True):
    c1, c2, c3, c4, c5 = st.columns(5)
    f_session = c1.multiselect("Session", [s.idx for s in sessions.values()])
    f_type = c2.multiselect("Content type", list(ContentType.__args__))
    f_status = c3.multiselect("Status", ["final", "partial"])
    f_life = c4.multiselect("Lifecycle", list(LifecycleStatus.__args__))
    f_orient = c5.multiselect("Time orientation", list(TimeOrientation.__args__))
    f_text = st.text_input("Text contains")


def keep(u) -> bool:
    s = sessions.get(u.evidence.session_id)
    return ((not f_session or (s and s.idx in f_session)) and (not f_type or u.fact.content_type in f_type)
            and (not f_status or u.construction_status in f_status) and (not f_life or u.lifecycle_status in f_life)
            and (not f_orient or u.time.time_orientation in f_orient)
            and (not f_text or f_text.lower() in f"{u.fact.text} {u.fact.summary}".lower()))


shown = [u for u in units if keep(u)]
st.dataframe([{"id": u.id, "session": sessions[u.evidence.session_id].idx if u.evidence.session_id in sessions else None,
               "turns": f"{u.evidence.start}-{u.evidence.end}", "type": u.fact.content_type, "fact": u.fact.text,
               "event time": u.time.event_time, "feeling": u.affect.emotion_or_state, "status": u.construction_status,
               "lifecycle": u.lifecycle_status, "disputed": u.disputed} for u in shown], hide_index=True)

ids = [u.id for u in shown]
if not ids:
    st.stop()
default = st.session_state.get("unit_id") if st.session_state.get("unit_id") in ids else ids[0]
unit_id = st.selectbox("Unit", ids, index=ids.index(default), format_func=lambda i: f"m{i}", key="memory_unit")
unit = store.get_unit(case_id, unit_id)
left, right = st.columns(2)
with left:
    st.subheader(f"m{unit.id}")
    st.json({"fact": unit.fact.model_dump(), "time": unit.time.model_dump(), "affect": unit.affect.model_dump(),
             "evidence": unit.evidence.model_dump(), "construction_status": unit.construction_status,
             "lifecycle_status": unit.lifecycle_status, "completeness": unit.completeness,
             "disputed": unit.disputed, "version": unit.version})
with right:
    st.subheader("Evidence turns")
    for t in store.turns(case_id, start=unit.evidence.start, end=unit.evidence.end):
        st.markdown(f"**[{t.idx}] {ui.plain(t.speaker or t.role)}**")
        st.text(t.text)
    links = store.links(case_id, unit_id=unit.id)
    if links:
        st.caption("Links: " + "; ".join(f"m{l.source} {l.relation} m{l.target}" for l in links))

# The version this tab's form shows is the one a save expects: read when the form's widgets are
# created (not again on the run that saves), so another tab's save in between is refused, visibly.
form = f"edit-{unit.id}-{st.session_state.get(f'form-nonce-{unit.id}', 0)}"
if f"{form}-fact" not in st.session_state:
    st.session_state[f"seen-{form}"] = unit.version


def reload_unit(unit_id: int) -> None:
    """A new form (fresh widgets from the stored unit) and the conflict dismissed."""
    st.session_state[f"form-nonce-{unit_id}"] = st.session_state.get(f"form-nonce-{unit_id}", 0) + 1
    st.session_state.pop("conflict", None)


conflict = st.session_state.get("conflict")
if conflict and conflict["unit"] == unit.id:
    st.error(ui.plain(conflict["message"]))
    st.button("Load the saved version (your unsaved change is dropped)", on_click=reload_unit, args=(unit.id,))

def conflict_message(unit_id: int) -> str:
    """Who changed the unit since this tab read it, and what they changed."""
    changes = [h for h in history(store, case_id, "unit", unit_id)
               if h["at"] and h["action"] in ("edit", "model_edit")][-3:]
    said = "; ".join(f"{h['who']} set {h['field']} to {h['new']!r} at {h['at']}" for h in changes) or "changed by a build"
    return f"Not saved: m{unit_id} was changed since you opened it ({said}). Load the saved version and redo your change."


with st.form(form):
    st.subheader("Correct this unit")
    text = st.text_area("Fact", unit.fact.text, key=f"{form}-fact")
    summary = st.text_input("Summary", unit.fact.summary)
    c1, c2, c3 = st.columns(3)
    ctype = c1.selectbox("Content type", ContentType.__args__, index=ContentType.__args__.index(unit.fact.content_type))
    event_time = c2.text_input("Event time", unit.time.event_time)
    orientation = c3.selectbox("Time orientation", TimeOrientation.__args__,
                               index=TimeOrientation.__args__.index(unit.time.time_orientation))
    c1, c2, c3 = st.columns(3)
    emotion = c1.text_input("Emotion or state", unit.affect.emotion_or_state)
    intention = c2.text_input("Intention or plan", unit.affect.intention_or_plan)
    completion = c3.selectbox("Completion", Completion.__args__, index=Completion.__args__.index(unit.time.completion))
    c1, c2, c3 = st.columns(3)
    lifecycle = c1.selectbox("Lifecycle", LifecycleStatus.__args__, index=LifecycleStatus.__args__.index(unit.lifecycle_status))
    completeness = c2.selectbox("Completeness", Completeness.__args__, index=Completeness.__args__.index(unit.completeness))
    disputed = c3.checkbox("Disputed", unit.disputed)
    reason = st.text_input("Reason for the change")
    if st.form_submit_button("Save correction"):
        changes = {"fact.text": text, "fact.summary": summary, "fact.content_type": ctype, "time.event_time": event_time,
                   "time.time_orientation": orientation, "affect.emotion_or_state": emotion,
                   "affect.intention_or_plan": intention, "time.completion": completion, "lifecycle_status": lifecycle,
                   "completeness": completeness, "disputed": disputed}
        st.session_state.pop("conflict", None)
        try:
            saved = edit_unit(store, ui.embedder(), case_id, unit.id, changes, st.session_state[f"seen-{form}"],
                              ui.who(), reason)
            st.session_state[f"seen-{form}"] = saved.version
            ui.access(case_id, "change", f"edited m{unit.id}")
            ui.flash("success", f"m{unit.id} saved")
        except VersionConflict:
            st.session_state["conflict"] = {"unit": unit.id, "message": conflict_message(unit.id)}
        except (StoreError, ValueError) as e:
            ui.flash("error", str(e).splitlines()[0])
        st.rerun()

with st.expander("Delete this unit"):
    why = st.text_input("Reason for deleting", key=f"del-reason-{unit.id}")
    if st.button("Delete unit", key=f"del-{unit.id}", disabled=not why.strip(), help="a reason is required"):
        delete_unit(store, case_id, unit.id, ui.who(), why)
        ui.access(case_id, "change", f"deleted m{unit.id}")
        ui.flash("success", f"m{unit.id} deleted")
        st.rerun()

with st.expander("History of this unit"):
    st.dataframe(history(store, case_id, "unit", unit.id), hide_index=True)

st.subheader("Timeline")
frame = [{"id": f"m{u.id}", "said": u.time.dialogue_time, "type": u.fact.content_type,
          "fact": ui.chart_text(u.fact.text[:80]), "feeling": ui.chart_text(u.affect.emotion_or_state),
          "session": sessions[u.evidence.session_id].idx}
         for u in units if u.time.dialogue_time and u.evidence.session_id in sessions]
if frame:
    st.plotly_chart(px.strip(frame, x="said", y="type", color="type", hover_data=["id", "fact"]), width="stretch")
    affect = [f for f in frame if f["feeling"] != "unknown"]
    if affect:
        st.plotly_chart(px.scatter(affect, x="session", y="feeling", color="type", hover_data=["id", "fact"],
                                   title="Affect across sessions"), width="stretch")

st.subheader("User semantic memory")
st.dataframe([{"kind": e.kind, "text": e.text, "sources": ", ".join(f"m{i}" for i in e.source_unit_ids)}
              for e in store.semantic(case_id)], hide_index=True)
st.subheader("Support-experience memory")
st.dataframe([{"strategy": e.strategy, "outcome": e.outcome, "text": e.text,
               "sources": ", ".join(f"m{i}" for i in e.source_unit_ids)} for e in store.support(case_id)], hide_index=True)
