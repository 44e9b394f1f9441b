"""Ask: a question in (Enter asks; a benchmark case offers its stored questions), a progress line
with the stages and the usual time while it is answered; then the counselor's view (the answer, the
units it cites with their turns, each one click from Memory, the time it took, which kept units the
model did not see and why) and, folded away, the research view (gold, rewrite and cues, scored
candidates, the formula, the packet, the trace)."""

import json
import time

import streamlit as st

import appstate
import ui
from ftamem_core.construction import estimate
from ftamem_core.governance import consent
from ftamem_core.display import NOTHING, date, number, span, turns, word
from ftamem_core.config import PRESETS
from ftamem_core.retrieval.inference import STAGES, ask
from ftamem_core.retrieval.packet import BUDGET, COVERED

case_id = ui.require_case()
st.title(ui.plain(f"Ask · {case_id}"))
ui.access(case_id, "view", "ask page")
if ui.withdrawn(case_id):
    st.stop()  # the banner above says why nothing is asked
store = ui.active_store()
settings = ui.settings()
stored = store.questions(case_id)


def use_starter() -> None:
    appstate.put(appstate.ASK_QUESTION, stored[appstate.get(appstate.ASK_STARTER)].question)


def research(trace) -> None:
    """What a researcher reads: gold, rewrite and cues, scored candidates and R's formula, the
    packet as the model saw it, calls and the trace."""
    gold = next((q for q in stored if q.question == trace.question), None)
    if gold is not None:  # a benchmark question: its gold answer and evidence beside the answer
        by_id = {t.original_id: t.idx for t in store.turns(case_id) if t.original_id}
        evidence = [by_id[e] for e in gold.evidence if e in by_id]
        pointed = {
            i
            for u in trace.packet.primary + [n.unit for n in trace.packet.neighbours]
            if u.id in trace.shown_unit_ids
            for i in range(u.evidence.start, u.evidence.end + 1)
        }
        pointed |= set(trace.shown_turn_ids)
        st.text(f"Gold answer: {gold.answer if gold.answer is not None else '(none: not answerable)'}")
        if evidence:
            st.text(
                f"Gold evidence turns: {turns(evidence)}; in the packet: "
                f"{turns([i for i in evidence if i in pointed]) if pointed & set(evidence) else 'none'}"
            )
    st.caption(
        ui.plain(
            f"packet {trace.packet_tokens} tokens · "
            + " · ".join(f"{c['stage']} {c['prompt_tokens']}+{c['completion_tokens']} tokens" for c in trace.calls)
            + " · "
            + " · ".join(f"{k} {v:.2f} s" for k, v in trace.seconds.items())
        )
    )
    st.download_button(
        "Trace as JSON",
        json.dumps(trace.as_dict(), ensure_ascii=False, indent=1, default=str),
        f"trace-{trace.case_id}.json".replace("/", "_"),
        "application/json",
    )
    st.subheader("Rewritten query and cues")
    st.text(trace.query)
    st.dataframe(
        [
            {"cue": word(name), "values": ", ".join(map(str, values)) or NOTHING}
            for name, values in trace.cues.model_dump().items()
        ],
        hide_index=True,
    )
    st.subheader("Scored candidates")
    lam = trace.settings.get("lam")
    st.caption(
        ui.plain(
            f"R = λ·s_emb + (1 − λ)·cue, λ = {lam}: s_emb is the unit's cosine with the query, cue the "
            f"mean of the cues the query has; a unit is kept with R ≥ τ = {trace.settings.get('tau')}, "
            f"the best K = {trace.settings.get('k')}."
        )
    )
    facts = store.unit_facts(case_id, [c["id"] for c in trace.candidates])
    st.dataframe(
        [
            {
                **c,
                "fact": facts.get(c["id"], "(deleted)"),
                "left out": WHY_LEFT_OUT.get(trace.left_out.get(c["id"]), ""),
            }
            for c in trace.candidates
        ],
        hide_index=True,
    )
    st.subheader("Memory packet")
    if trace.channel_turn_ids:
        st.caption(
            ui.plain(
                "Turn channel (beyond the paper, setting retrieval.turn_channel): raw turns "
                + turns(trace.channel_turn_ids)
                + " are shown word for word under Other turns."
            )
        )
    st.caption("As the model read it, its section marks included; the packet counts turns from 0 ([0] is turn 1).")
    st.text(trace.packet_text)


if stored:
    c1, c2 = st.columns([4, 1])
    c1.selectbox(
        "The case's stored questions",
        range(len(stored)),
        key=appstate.ASK_STARTER,
        format_func=lambda i: f"{word(stored[i].category)} · {stored[i].question[:120]}",
    )
    c2.button("Use this question", on_click=use_starter)

allowed = consent.granted(store, case_id)  # inference.ask refuses too; this says why before typing
if not allowed:
    st.warning(
        ui.plain(
            f"A question sends this case's memory and turns to the model, which needs the person's "
            f"consent; this case has none ({word(consent.state(store, case_id)['state'])}). Record it on "
            "the Privacy page."
        )
    )
case_k, k_reason = settings.k_for(store.get_case(case_id).source_format)
with st.form("ask"):
    question = st.text_input("Question", key=appstate.ASK_QUESTION, placeholder="When did … ? (Enter asks)")
    with st.expander("Advanced"):
        c1, c2, c3, c4, c5 = st.columns(5)
        k = c1.number_input("K", 1, 100, case_k, help=f"units kept after the threshold; default {case_k} ({k_reason})")
        tau = c2.number_input(
            "τ",
            0.0,
            1.0,
            settings.retrieval.tau,
            step=0.05,
            help="threshold: a unit whose score R is below it is not used",
        )
        lam = c3.number_input(
            "λ",
            0.0,
            1.0,
            settings.retrieval.lam,
            step=0.05,
            help="weight of embedding similarity in R; the rest is the cue score (people, time, type, affect)",
        )
        b = c4.number_input(
            "B", 0, 10, settings.retrieval.link_expansion, help="linked neighbours added per retrieved unit"
        )
        preset = c5.selectbox(
            "Method",
            sorted(PRESETS),
            index=sorted(PRESETS).index("full"),
            format_func=word,
            help="the full method, or one ablation (what it switches off is in its name)",
        )
        archived = st.checkbox(
            "Include archived units (marked in the packet)", value=settings.retrieval.retrieve_archived
        )
    submitted = st.form_submit_button("Ask", type="primary", disabled=not allowed)

built = bool(store.done_sessions(case_id))
if not built:  # said before asking, and again beside the answer
    st.info(
        "This case's memory is not built yet: an answer comes from the raw turns most like the question "
        + (
            "(the turn channel), not from memory units."
            if settings.retrieval.turn_channel
            else "— and the turn channel is off, so there is nothing to answer from. Build the memory first."
        )
    )

STAGE_WORDS = {"rewrite": "Reading the question", "retrieval": "Finding the memory", "answer": "Writing the answer"}


def expected_line() -> str:
    """The usual time of an ask with this model here, from its recorded calls."""
    seconds = estimate.ask_seconds(store, ui.llm_config().model)
    if len(seconds) < 2:
        return "no timing yet for this model here"
    return f"usually {estimate.describe(sum(seconds.values()) + 1)} with this model"


if submitted and question.strip():
    run_settings = settings.with_overrides(
        retrieval={"tau": tau, "lam": lam, "link_expansion": int(b), "retrieve_archived": archived}
    )
    ui.access(case_id, "ask")
    busy = [c for c in ui.jobs().running_cases()]
    expected = expected_line()
    label = f"Asking… ({expected})" if not busy else "The model is busy with a build; your question waits for it…"
    with st.status(label, expanded=bool(busy)) as status:
        if busy:
            st.text(f"Building now: {', '.join(busy)}. The answer comes once the model is free.")
        began = time.perf_counter()

        def on_stage(stage: str) -> None:
            n = STAGES.index(stage) + 1
            status.update(
                label=f"{STAGE_WORDS[stage]} · step {n} of {len(STAGES)} · "
                f"{time.perf_counter() - began:.0f} s so far · {expected}"
            )
            st.text(f"{n}. {STAGE_WORDS[stage]}")

        try:
            trace = ask(
                store,
                case_id,
                question,
                ui.llm(),
                ui.embedder(),
                run_settings,
                k=int(k),
                ablations=PRESETS[preset],
                on_stage=on_stage,
            )
            appstate.put(appstate.TRACE, trace)
            status.update(label=f"Answered in {sum(trace.seconds.values()):.1f} s", state="complete", expanded=False)
        except Exception as e:  # a backend failure is shown, not raised
            status.update(label="The question could not be answered", state="error", expanded=True)
            st.error(ui.plain(str(e).splitlines()[0] if str(e) else e.__class__.__name__))
elif submitted:
    st.warning("Type a question first.")

WHY_LEFT_OUT = {
    BUDGET: "the packet's token budget was full",
    COVERED: "its turns were shown to the model word for word instead",
}

trace = appstate.get(appstate.TRACE)
if trace is not None and trace.case_id == case_id:
    shown = trace.packet.unit_ids()
    if len(store.present_unit_ids(case_id, shown)) < len(shown):  # deleted since: not shown again
        appstate.forget(appstate.TRACE)
        st.info("Memory this answer used has been deleted since; ask again.")
        st.stop()
    # The counselor's view: the answer, its sources with their turns, the time it took.
    st.subheader("Answer")
    st.text(trace.answer)
    st.caption(ui.plain(f"Answered in {sum(trace.seconds.values()):.1f} s · question: {trace.question}"))
    units = {u.id: u for u in trace.packet.primary + [n.unit for n in trace.packet.neighbours]}
    cited = [uid for uid in trace.cited_unit_ids if uid in units]
    st.subheader("Sources")
    if not cited:
        st.text("The answer cites no memory unit." + (" The turns the model read:" if trace.channel_turn_ids else ""))
        read = {t.idx: t for t in store.turns(case_id)} if trace.channel_turn_ids else {}
        for i in trace.channel_turn_ids:
            if i in read:
                st.text(f"[{number(i)}] {read[i].speaker or read[i].role}: {read[i].text}")
    for uid in cited:
        with st.expander(ui.plain(f"m{uid}: {units[uid].fact.text}"), expanded=len(cited) == 1):
            st.text(
                f"Turns {span(units[uid].evidence.start, units[uid].evidence.end)}, "
                f"said {date(units[uid].time.dialogue_time)}:"
            )
            for t in trace.packet.sources.get(uid, []):
                st.text(f"[{number(t.idx)}] {t.speaker or t.role}: {t.text}")
            if st.button("Open in Memory", key=f"open-{uid}"):
                appstate.open_unit(uid)
    left_out = {uid: why for uid, why in trace.left_out.items() if uid in trace.kept_ids}
    if left_out:
        facts = store.unit_facts(case_id, list(left_out))
        st.caption(
            ui.plain(
                "Kept for this question but not shown to the model: "
                + "; ".join(f"m{uid} ({WHY_LEFT_OUT.get(why, word(why))})" for uid, why in left_out.items())
            )
        )
        for uid in left_out:  # which units, in their words
            st.text(f"m{uid}: {facts.get(uid, '(deleted)')}")
    with st.expander("Research view: cues, candidates, formula, packet, trace"):
        research(trace)
