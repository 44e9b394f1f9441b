"""Ask: a question in; the rewrite, the scored candidates, the packet and the grounded answer out."""

import streamlit as st

import ui
from ftamem_core.config import PRESETS
from ftamem_core.inference import ask

st.title("Ask")
case_id = ui.require_case()
ui.access(case_id, "view", "ask page")
store = ui.active_store()
settings = ui.settings()
question = st.text_input("Question", placeholder="When did … ?")
c1, c2, c3, c4, c5 = st.columns(5)
case_k, k_reason = settings.k_for(store.get_case(case_id).source_format)
k = c1.number_input("K", 1, 100, case_k, help=f"units kept after the threshold; default {case_k} ({k_reason})")
tau = c2.number_input("τ", 0.0, 1.0, settings.tau, step=0.05)
lam = c3.number_input("λ", 0.0, 1.0, settings.lam, step=0.05)
b = c4.number_input("B", 0, 10, settings.link_expansion)
preset = c5.selectbox("Method", sorted(PRESETS), index=sorted(PRESETS).index("full"))

if st.button("Ask", type="primary", disabled=not question.strip()):
    run_settings = settings.with_overrides(tau=tau, lam=lam, link_expansion=int(b))
    ui.access(case_id, "ask")
    with st.spinner("rewriting, retrieving, answering…"):
        try:
            st.session_state["trace"] = ask(store, case_id, question, ui.llm(), ui.embedder(), run_settings,
                                            k=int(k), ablations=PRESETS[preset])
        except Exception as e:  # a backend failure is shown, not raised
            st.error(ui.plain(str(e).splitlines()[0] if str(e) else e.__class__.__name__))

trace = st.session_state.get("trace")
if trace is not None and trace.case_id == case_id:
    shown = trace.packet.unit_ids()
    if len(store.rows_by_id(case_id, "units", "id", shown)) < len(shown):  # deleted since: not shown again
        del st.session_state["trace"]
        st.info("Memory this answer used has been deleted since; ask again.")
        st.stop()
    st.subheader("Answer")
    st.text(trace.answer)
    units = {u.id: u for u in trace.packet.primary + [n.unit for n in trace.packet.neighbours]}
    for uid in trace.cited_unit_ids:
        if uid in units:
            with st.expander(ui.plain(f"m{uid}: {units[uid].fact.text}")):
                for t in trace.packet.sources.get(uid, []):
                    st.text(f"[{t.idx}] {t.speaker or t.role}: {t.text}")
    st.caption(ui.plain(f"packet {trace.packet_tokens} tokens · " + " · ".join(
        f"{c['stage']} {c['prompt_tokens']}+{c['completion_tokens']} tokens" for c in trace.calls)
        + " · " + " · ".join(f"{k} {v:.2f} s" for k, v in trace.seconds.items())))
    st.subheader("Rewritten query and cues")
    st.text(trace.query)
    st.json(trace.cues.model_dump())
    st.subheader("Scored candidates")
    st.dataframe(trace.candidates, hide_index=True)
    st.subheader("Memory packet")
    if trace.channel_turn_ids:
        st.caption("Turn channel (beyond the paper, setting turn_channel): raw turns "
                   + ", ".join(str(i) for i in trace.channel_turn_ids) + " are shown word for word under Other turns.")
    st.text(trace.packet_text)
