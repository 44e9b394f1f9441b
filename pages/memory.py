"""Memory: the case's units (filter and search, click a row to open its card beside its evidence
turns and their context; edit, dispute, archive, delete behind a confirmation; history),
timelines, and the longitudinal memory with its source units."""

from collections import Counter

import pandas as pd
import plotly.express as px
import streamlit as st

import appstate
import ui
from ftamem_core.retrieval import search
from ftamem_core.display import NOTHING, ORIGINS, date, history_rows, number, origin, span, text, word
from ftamem_core.display import link as link_line
from ftamem_core.governance.editing import delete_unit, edit_unit, history
from ftamem_core.models import Completeness, ContentType, LifecycleStatus, TimeOrientation, Completion
from ftamem_core.storage.store import StoreError, VersionConflict

case_id = ui.require_case()
st.title(ui.plain(f"Memory · {case_id}"))
ui.access(case_id, "view", "memory page")
store = ui.active_store()
ui.show_flash()
units = store.units(case_id, construction_status=None)
if not units:
    st.info("No memory yet: build it on the Build page.")
    st.stop()
sessions = {s.id: s for s in store.sessions(case_id)}
turn_text = {t.idx: t.text for t in store.turns(case_id)}

with st.expander("Filters", expanded=True):
    c1, c2, c3, c4, c5 = st.columns(5)
    f_session = c1.multiselect("Session", [s.idx for s in sessions.values()], format_func=number)
    f_type = c2.multiselect("Content type", list(ContentType.__args__), format_func=word)
    f_status = c3.multiselect("Status", ["final", "partial"], format_func=word)
    f_life = c4.multiselect("Lifecycle", list(LifecycleStatus.__args__), format_func=word)
    f_orient = c5.multiselect("Time orientation", list(TimeOrientation.__args__), format_func=word)
    c1, c2 = st.columns(2)
    # Kept in the URL with the case and the unit: a link can open "what a person corrected".
    f_origin = c1.multiselect(
        "How it was made",
        [o for o in ORIGINS if any(u.origin == o for u in units)],
        format_func=origin,
        key="provenance",
        bind="query-params",
        help="; ".join(origin(o) for o in ORIGINS if o != "unknown"),
    )
    made_counts = c1.empty()  # filled once the other filters and the search have chosen
    f_text = c2.text_input(
        "Text contains",
        help="by words (the fact, the summary and its evidence turns) and by "
        'meaning ("father" finds a unit saying "Dad"), best first',
    )


def words(u) -> str:
    evidence = " ".join(turn_text.get(i, "") for i in range(u.evidence.start, u.evidence.end + 1))
    return f"{u.fact.text} {u.fact.summary} {evidence}".lower()


def keep(u) -> bool:
    s = sessions.get(u.evidence.session_id)
    return (
        (not f_session or (s and s.idx in f_session))
        and (not f_type or u.fact.content_type in f_type)
        and (not f_status or u.construction_status in f_status)
        and (not f_life or u.lifecycle_status in f_life)
        and (not f_orient or u.time.time_orientation in f_orient)
    )


def state(u) -> str:
    """Why a unit is out of retrieval (greyed in the table), if it is."""
    return "disputed" if u.disputed else "archived" if u.lifecycle_status == "archived" else ""


shown = [u for u in units if keep(u)]
found: dict[int, search.Hit] = {}
if f_text.strip():
    hits = search.search(store, ui.embedder(), case_id, f_text, {u.id: words(u) for u in shown})
    found = {h.unit_id: h for h in hits}
    shown = [u for h in hits for u in shown if u.id == h.unit_id]  # best first
    if not shown:
        st.info(
            ui.plain(
                f"Nothing in this case's memory matches \u201c{f_text}\u201d by its words or its meaning. "
                "Ask it as a question instead: the Ask page also reads the raw turns."
            )
        )
        if st.button("Ask it on the Ask page"):
            appstate.put(appstate.ASK_QUESTION, f_text)
            st.switch_page("pages/ask.py")
        st.stop()
made = Counter(u.origin for u in shown)
made_counts.caption(
    "Of the units the other filters and the search leave: "
    + (" · ".join(f"{origin(o)} {made[o]}" for o in ORIGINS if made[o]) or NOTHING)
)
shown = [u for u in shown if not f_origin or u.origin in f_origin]
ids = [u.id for u in shown]
if not ids:
    st.info("No unit matches the filters.")
    st.stop()


def matched(u) -> dict:
    """The search's columns: the words found as written, those close in meaning, the cosine."""
    if u.id not in found:
        return {}
    h = found[u.id]
    return {"matched": ", ".join(h.words + h.like) or f"meaning only ({h.meaning:.2f})"}


frame = pd.DataFrame(
    [
        {
            "id": u.id,
            "session": number(sessions[u.evidence.session_id].idx) if u.evidence.session_id in sessions else NOTHING,
            "turns": span(u.evidence.start, u.evidence.end),
            "type": word(u.fact.content_type),
            "fact": u.fact.text,
            **matched(u),
            "event time": date(u.time.event_time),
            "feeling": word(u.affect.emotion_or_state),
            "status": word(u.construction_status),
            "lifecycle": word(u.lifecycle_status),
            "made": origin(u.origin),
            "out of retrieval": state(u),
        }
        for u in shown
    ]
)
greyed = frame.style.apply(lambda row: ["color: #9aa0a6" if row["out of retrieval"] else ""] * len(row), axis=1)
st.caption("Click a row to open its unit. Disputed and archived units (grey) are left out of retrieval and packets.")
# A click on any cell opens its row's unit, not only the row's checkbox.
picked = st.dataframe(
    greyed, hide_index=True, on_select="rerun", selection_mode=["single-row", "single-cell"], key="memory_table"
)
selection = picked.selection if picked is not None else {}
rows = list(selection.get("rows", [])) or [cell[0] for cell in selection.get("cells", [])]
# A row clicked now wins; a new search opens its best hit (not the card open before, even when
# that one is among the hits); otherwise the unit asked for by the URL or another page, else the first.
if rows and rows != appstate.get(appstate.MEMORY_ROWS) and rows[0] < len(ids):
    appstate.show_unit(ids[rows[0]], scroll=True)
elif f_text.strip() and f_text != appstate.get(appstate.MEMORY_SEARCH):
    appstate.show_unit(ids[0])
appstate.put(appstate.MEMORY_ROWS, rows)
appstate.put(appstate.MEMORY_SEARCH, f_text)
chosen = appstate.chosen_unit()
asked = appstate.asked_unit()
if asked is not None and chosen not in {u.id for u in units}:  # deleted, or never in this case
    st.warning(
        ui.plain(
            f"Unit m{asked} is not in this case (deleted, or never there). Nothing was opened: "
            "click a unit in the table above."
        )
    )
    st.stop()
unit_id = chosen if chosen in ids else ids[0]
appstate.unit_to_url(unit_id)
unit = store.get_unit(case_id, unit_id)

st.subheader(f"m{unit.id}" + (f" · {state(unit)}" if state(unit) else ""), anchor="unit-card")
if appstate.take_scroll():
    ui.scroll_into_view("unit-card")
left, right = st.columns(2)
with left:
    st.text(f"Fact [{word(unit.fact.content_type)}]: {unit.fact.text}")
    if unit.fact.summary:
        st.text(f"Summary: {unit.fact.summary}")
    st.text(f"Who: {', '.join(unit.fact.participants) or NOTHING}")
    st.text(
        f"Time: {date(unit.time.event_time)} (said as: {text(unit.time.event_time_expression)}; "
        f"{word(unit.time.time_orientation)}, {word(unit.time.completion)}); said on {date(unit.time.dialogue_time)}"
    )
    st.text(f"Feeling: {word(unit.affect.emotion_or_state)} · intention or plan: {word(unit.affect.intention_or_plan)}")
    st.text(f"Relations: {word(unit.affect.relation_cues)}")
    st.text(
        f"Status: {word(unit.construction_status)} · lifecycle: {word(unit.lifecycle_status)} · completeness: "
        f"{word(unit.completeness)} · disputed: {'yes' if unit.disputed else 'no'} · version {unit.version}"
    )
    st.text(f"How it was made: {origin(unit.origin)}")
with right:
    st.text("Evidence turns (▶) with two turns around them (·):")
    for t in store.turns(case_id, start=max(0, unit.evidence.start - 2), end=unit.evidence.end + 2):
        mark = "▶" if unit.evidence.start <= t.idx <= unit.evidence.end else "·"
        st.text(f"{mark} [{number(t.idx)}] {t.speaker or t.role}: {t.text}")
    links = store.links(case_id, unit_id=unit.id)
    if links:
        facts = {u.id: u.fact.text for u in units}
        st.text("Links:")
        for link in links:
            other = link.target if link.source == unit.id else link.source
            # the other unit's fact: this one's is on the card already
            said = link_line(link.source, link.relation, link.target, link.confidence, {other: facts.get(other)}, 100)
            st.text(f"  {said}")

if not ui.named():
    st.warning("Type your name in the sidebar first: every change is recorded with who made it.")
c1, c2, c3, c4 = st.columns(4)
editing = c1.toggle("Edit", key=f"edit-open-{unit.id}", disabled=not ui.named())
c2.button(
    "Dispute",
    key=f"dispute-{unit.id}",
    disabled=not ui.named() or unit.disputed,
    on_click=appstate.setter(appstate.CONFIRM_DISPUTE, unit.id),
)
c3.button(
    "Archive",
    key=f"archive-{unit.id}",
    disabled=not ui.named() or unit.lifecycle_status == "archived",
    on_click=appstate.setter(appstate.CONFIRM_ARCHIVE, unit.id),
)
c4.button(
    "Delete",
    key=f"delete-{unit.id}",
    disabled=not ui.named(),
    on_click=appstate.setter(appstate.CONFIRM_DELETE, unit.id),
)


def set_flag(changes: dict, what: str):
    def act(reason: str) -> str:
        edit_unit(
            store, ui.embedder(), case_id, unit.id, changes, store.get_unit(case_id, unit.id).version, ui.who(), reason
        )
        ui.access(case_id, "change", f"{what} m{unit.id}")
        return f"m{unit.id} {what}: it leaves retrieval and packets."

    return act


def delete(reason: str) -> str:
    delete_unit(store, case_id, unit.id, ui.who(), reason)
    ui.access(case_id, "change", f"deleted m{unit.id}")
    appstate.show_unit(None)
    return f"m{unit.id} deleted."


ui.confirm_dialog(
    appstate.CONFIRM_DISPUTE,
    f"Dispute m{unit.id}?",
    "A disputed unit stays for review but is left out of retrieval and packets, so it no longer "
    "shapes answers. You can clear the mark by editing it.",
    set_flag({"disputed": True}, "disputed"),
    label="Dispute",
)
ui.confirm_dialog(
    appstate.CONFIRM_ARCHIVE,
    f"Archive m{unit.id}?",
    "An archived unit is left out of retrieval and packets (the Ask page can bring archived units "
    "back, marked). Its text, links and history are kept.",
    set_flag({"lifecycle_status": "archived"}, "archived"),
    label="Archive",
)
ui.confirm_dialog(
    appstate.CONFIRM_DELETE,
    f"Delete m{unit.id}?",
    f"This deletes m{unit.id} for good: its text, its vector, its {len(links)} link(s), the text of "
    "its history and the semantic and support entries built from it. Only who deleted it, when and "
    "why are kept. A rebuild does not bring it back.",
    delete,
    label="Delete for good",
)

# The version this tab's form shows is the one a save expects: read when the form's widgets are
# created (not again on the run that saves), so another tab's save in between is refused, visibly.
form = appstate.edit_form(unit.id)
if not appstate.form_drawn(form):
    appstate.set_seen_version(form, unit.version)


def reload_unit(unit_id: int) -> None:
    """A new form (fresh widgets from the stored unit) and the conflict dismissed."""
    appstate.renew_form(unit_id)
    appstate.forget(appstate.CONFLICT)


conflict = appstate.get(appstate.CONFLICT)
if conflict and conflict["unit"] == unit.id:
    st.error(ui.plain(conflict["message"]))
    st.button("Load the saved version (your unsaved change is dropped)", on_click=reload_unit, args=(unit.id,))


def conflict_message(unit_id: int) -> str:
    """Who changed the unit since this tab read it, and what they changed."""
    changes = [
        h for h in history(store, case_id, "unit", unit_id) if h["at"] and h["action"] in ("edit", "model_edit")
    ][-3:]
    said = (
        "; ".join(f"{h['who']} set {h['field']} to {h['new']!r} at {h['at']}" for h in changes) or "changed by a build"
    )
    return (
        f"Not saved: m{unit_id} was changed since you opened it ({said}). Load the saved version and redo your change."
    )


def known(value: str | None) -> str:
    """A stored value for an edit box: "unknown" (the model's nothing) as an empty box."""
    return "" if value in (None, "unknown") else value


def back(typed: str, stored: str | None) -> str:
    """What an edit box saves: an empty box over a stored nothing keeps that nothing as stored
    (no change in the history); an emptied value becomes "unknown"."""
    if typed.strip():
        return typed.strip()
    return stored if known(stored) == "" and stored is not None else "unknown"


def edit_form() -> None:
    with st.form(form):
        st.subheader("Correct this unit")
        text = st.text_area("Fact", unit.fact.text, key=f"{form}-fact")
        summary = st.text_input("Summary", unit.fact.summary)
        c1, c2, c3 = st.columns(3)
        # Choices read as words; "unknown" is an empty box here and goes back as "unknown".
        ctype = c1.selectbox(
            "Content type",
            ContentType.__args__,
            format_func=word,
            index=ContentType.__args__.index(unit.fact.content_type),
        )
        event_time = c2.text_input("Event time", known(unit.time.event_time), placeholder="e.g. 2025-10-03")
        orientation = c3.selectbox(
            "Time orientation",
            TimeOrientation.__args__,
            format_func=word,
            index=TimeOrientation.__args__.index(unit.time.time_orientation),
        )
        c1, c2, c3 = st.columns(3)
        emotion = c1.text_input("Emotion or state", known(unit.affect.emotion_or_state))
        intention = c2.text_input("Intention or plan", known(unit.affect.intention_or_plan))
        completion = c3.selectbox(
            "Completion", Completion.__args__, format_func=word, index=Completion.__args__.index(unit.time.completion)
        )
        c1, c2, c3 = st.columns(3)
        lifecycle = c1.selectbox(
            "Lifecycle",
            LifecycleStatus.__args__,
            format_func=word,
            index=LifecycleStatus.__args__.index(unit.lifecycle_status),
        )
        completeness = c2.selectbox(
            "Completeness",
            Completeness.__args__,
            format_func=word,
            index=Completeness.__args__.index(unit.completeness),
        )
        disputed = c3.checkbox("Disputed", unit.disputed)
        c1, c2, c3 = st.columns(3)
        people = c1.text_input("Who (names, comma-separated)", ", ".join(unit.fact.participants))
        expression = c2.text_input("Time as said", known(unit.time.event_time_expression))
        relations = c3.text_input("Relations", known(unit.affect.relation_cues))
        reason = st.text_input("Reason for the change", key=f"{form}-reason")
        if st.form_submit_button("Save correction"):
            changes = {
                "fact.text": text,
                "fact.summary": summary,
                "fact.content_type": ctype,
                "time.event_time": back(event_time, unit.time.event_time),
                "time.time_orientation": orientation,
                "affect.emotion_or_state": back(emotion, unit.affect.emotion_or_state),
                "affect.intention_or_plan": back(intention, unit.affect.intention_or_plan),
                "time.event_time_expression": back(expression, unit.time.event_time_expression),
                "affect.relation_cues": back(relations, unit.affect.relation_cues),
                "time.completion": completion,
                "lifecycle_status": lifecycle,
                "completeness": completeness,
                "disputed": disputed,
                "fact.participants": [p.strip() for p in people.split(",") if p.strip()],
            }
            appstate.forget(appstate.CONFLICT)
            seen = appstate.seen_version(form)
            try:
                saved = edit_unit(store, ui.embedder(), case_id, unit.id, changes, seen, ui.who(), reason)
                appstate.set_seen_version(form, saved.version)
                if saved.version == seen:
                    appstate.toast(f"Nothing changed in m{unit.id}.")
                else:
                    ui.access(case_id, "change", f"edited m{unit.id}")
                    appstate.toast(f"m{unit.id} saved.")
            except VersionConflict:
                appstate.put(appstate.CONFLICT, {"unit": unit.id, "message": conflict_message(unit.id)})
            except (StoreError, ValueError) as e:
                appstate.flash("error", str(e).splitlines()[0])
            else:
                appstate.clear_later(f"{form}-reason")  # the next change gives its own reason
            st.rerun()


if editing:
    edit_form()
with st.expander("History of this unit"):
    changes = history_rows(history(store, case_id, "unit", unit.id))
    if changes:
        st.dataframe(changes, hide_index=True)
    else:
        st.text("No change since it was built.")

st.subheader("Timeline")
# Words and dates as people read them in the axes, legends and hovers too (the x axis keeps the
# time itself, so the points stay in order; its hover shows the date as written).
frame = [
    {
        "id": f"m{u.id}",
        "said": pd.to_datetime(u.time.dialogue_time, errors="coerce"),
        "said on": date(u.time.dialogue_time),
        "type": word(u.fact.content_type),
        "fact": ui.chart_text(u.fact.text[:80]),
        "feeling": ui.chart_text(word(u.affect.emotion_or_state)),
        "session": number(sessions[u.evidence.session_id].idx),
    }
    for u in units
    if u.time.dialogue_time and u.evidence.session_id in sessions
]
frame = [f for f in frame if not pd.isna(f["said"])]
if frame:
    st.plotly_chart(
        px.strip(
            frame,
            x="said",
            y="type",
            color="type",
            hover_data={"said": False, "said on": True, "id": True, "fact": True},
        ),
        width="stretch",
    )
    affect = [f for f in frame if f["feeling"] != NOTHING]
    if affect:
        st.plotly_chart(
            px.scatter(
                affect,
                x="session",
                y="feeling",
                color="type",
                hover_data=["id", "fact"],
                title="Affect across sessions",
            ),
            width="stretch",
        )

st.subheader("User semantic memory")
semantic = [
    {"kind": word(e.kind), "text": text(e.text), "sources": ", ".join(f"m{i}" for i in e.source_unit_ids) or NOTHING}
    for e in store.semantic(case_id)
]
if semantic:
    st.dataframe(semantic, hide_index=True)
else:
    st.text("Nothing yet: a build writes it after the units.")
st.subheader("Support-experience memory")
support = [
    {
        "strategy": text(e.strategy),
        "outcome": text(e.outcome),
        "text": text(e.text),
        "sources": ", ".join(f"m{i}" for i in e.source_unit_ids) or NOTHING,
    }
    for e in store.support(case_id)
]
if support:
    st.dataframe(support, hide_index=True)
else:
    st.text("Nothing yet: a build writes it after the units.")
