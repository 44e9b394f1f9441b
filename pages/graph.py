"""Graph: the case's units and typed, directed links; filter; edit units and links."""

import streamlit as st
import streamlit.components.v1 as components

import appstate
import ui
from ftamem_core.display import date, link as link_line, number, word
from ftamem_core.governance.editing import add_link, delete_link, delete_unit, retype_link
from ftamem_core.graph import graph_html
from ftamem_core.models import ContentType, Link, Relation
from ftamem_core.storage.store import StoreError

case_id = ui.require_case()
st.title(ui.plain(f"Graph · {case_id}"))
ui.access(case_id, "view", "graph page")
store = ui.active_store()
ui.show_flash()
units = store.units(case_id)
links = store.links(case_id)
if not units:
    st.info("No memory yet: build it on the Build page.")
    st.stop()
sessions = {s.id: s.idx for s in store.sessions(case_id)}
c1, c2, c3 = st.columns(3)
f_session = c1.multiselect("Sessions", sorted(set(sessions.values())), format_func=number)
f_type = c2.multiselect("Content types", list(ContentType.__args__), format_func=word)
f_rel = c3.multiselect("Relations", [r for r in Relation.__args__ if r != "unknown"], format_func=word)
shown = [
    u
    for u in units
    if (not f_session or sessions.get(u.evidence.session_id) in f_session)
    and (not f_type or u.fact.content_type in f_type)
]
shown_links = [l for l in links if not f_rel or l.relation in f_rel]
components.html(graph_html(shown, shown_links), height=660)

ids = [u.id for u in units]
facts = {u.id: u.fact.text for u in units}


def named(unit_id: int) -> str:
    """A unit as people pick it: its id with the start of its fact."""
    return f"m{unit_id} {facts.get(unit_id, '(deleted)')[:60]}"


def link_named(link_id: int) -> str:
    return next(link_line(l.source, l.relation, l.target) for l in links if l.id == link_id)


left, right = st.columns(2)
with left:
    st.subheader("A unit")
    uid = st.selectbox("Unit", ids, format_func=named)
    unit = store.get_unit(case_id, uid)
    st.text(unit.fact.text)
    st.caption(
        ui.plain(
            f"{word(unit.fact.content_type)} · said {date(unit.time.dialogue_time)} · "
            f"{word(unit.lifecycle_status)} · session {number(sessions.get(unit.evidence.session_id))}"
        )
    )
    if st.button("Edit on the Memory page"):
        appstate.show_unit(uid)
        st.switch_page("pages/memory.py")
    if not ui.named():
        st.warning("Type your name in the sidebar first: every change is recorded with who made it.")
    st.button(
        "Delete this unit",
        disabled=not ui.named(),
        on_click=appstate.setter(appstate.CONFIRM_GRAPH_DELETE, uid),
    )

    def delete(reason: str) -> str:
        unit_id = appstate.get(appstate.CONFIRM_GRAPH_DELETE)  # the unit the button was pressed for
        delete_unit(store, case_id, unit_id, ui.who(), reason)
        ui.access(case_id, "change", f"deleted m{unit_id}")
        return f"m{unit_id} deleted."

    ui.confirm_dialog(
        appstate.CONFIRM_GRAPH_DELETE,
        f"Delete m{appstate.get(appstate.CONFIRM_GRAPH_DELETE)}?",
        "This deletes the unit for good: its text, its vector, its links, the text of its history "
        "and the semantic and support entries built from it. Only who deleted it, when and why are kept.",
        delete,
        label="Delete for good",
    )
with right:
    st.subheader("Links")
    st.dataframe(
        [
            {
                "link": link_line(l.source, l.relation, l.target),
                "confidence": word(l.confidence),
                "newer unit": facts.get(l.source, "(deleted)"),
                "older unit": facts.get(l.target, "(deleted)"),
            }
            for l in links
        ],
        hide_index=True,
    )
    with st.form("add-link"):
        a, b, r = st.columns(3)
        source = a.selectbox("Newer unit", ids, format_func=named)
        target = b.selectbox("Older unit", ids, format_func=named)
        relation = r.selectbox("Relation", [x for x in Relation.__args__ if x != "unknown"], format_func=word)
        why = st.text_input("Reason", key=appstate.ADD_LINK_REASON)
        if st.form_submit_button("Add link", disabled=not ui.named()):
            try:
                add_link(
                    store,
                    case_id,
                    Link(source=source, target=target, relation=relation, confidence="high"),
                    ui.who(),
                    why,
                )
                appstate.flash("success", f"{link_line(source, relation, target)} added")
                appstate.clear_later(appstate.ADD_LINK_REASON)  # the next link gives its own reason
            except StoreError as e:
                appstate.flash("error", str(e))
            st.rerun()
    if links:
        with st.form("change-link"):
            lid = st.selectbox("Link", [l.id for l in links], format_func=link_named)
            relation = st.selectbox(
                "New relation", [x for x in Relation.__args__ if x != "unknown"], key="retype", format_func=word
            )
            why = st.text_input("Reason", key=appstate.LINK_REASON)
            if st.form_submit_button("Retype link", disabled=not ui.named()):
                retype_link(store, case_id, lid, relation, ui.who(), why)
                old = next(l for l in links if l.id == lid)
                appstate.flash("success", f"{link_line(old.source, relation, old.target)} (was {word(old.relation)})")
                appstate.clear_later(appstate.LINK_REASON)
                st.rerun()
        chosen = st.selectbox("Link to delete", [l.id for l in links], key="graph-delete-link", format_func=link_named)
        st.button(
            "Delete link",
            disabled=not ui.named(),
            on_click=appstate.setter(appstate.CONFIRM_LINK_DELETE, chosen),
        )

        def delete_chosen(reason: str) -> str:
            link_id = appstate.get(appstate.CONFIRM_LINK_DELETE)  # the link the button was pressed for
            delete_link(store, case_id, link_id, ui.who(), reason)
            ui.access(case_id, "change", f"deleted link {link_id}")
            return f"{link_named(link_id)} deleted."

        pending = appstate.get(appstate.CONFIRM_LINK_DELETE)
        ui.confirm_dialog(
            appstate.CONFIRM_LINK_DELETE,
            f"Delete the link {link_named(pending)}?" if pending in {l.id for l in links} else "Delete the link?",
            "The link goes; both units stay. The history keeps who deleted it, when and why.",
            delete_chosen,
            label="Delete link",
        )
