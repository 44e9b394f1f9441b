"""Build: start, stop and resume construction for the active case; watch it live."""

import time

import streamlit as st

import appstate
import ui
from ftamem_core.construction import build_events as ev
from ftamem_core.governance import consent
from ftamem_core.construction.builder import Builder
from ftamem_core.display import NOTHING, choice, date, link as link_line, number, span, turns, word
from ftamem_core.governance.editing import human_corrections
from ftamem_core.errors import describe
from ftamem_core.construction.estimate import describe as duration, seconds_per_turn
from ftamem_core.construction.jobs import BuildJob
from ftamem_core.models import FTAUnit

case_id = ui.require_case()
st.title(ui.plain(f"Build · {case_id}"))
ui.access(case_id, "view", "build page")
store = ui.active_store()
settings = ui.settings()
done = store.done_sessions(case_id)
sessions = store.sessions(case_id)
st.caption(
    ui.plain(
        f"{len(done)} of {len(sessions)} sessions built · backend {ui.llm_config().backend} · {ui.llm_config().model}"
    )
)

allowed = consent.granted(store, case_id)
if not allowed:
    state = consent.state(store, case_id)["state"]
    st.warning(
        ui.plain(f"Memory is built only with the person's consent, and this case has none recorded ({word(state)}).")
    )
    if ui.recorder() is None:  # the log says who recorded it, never a default name
        st.warning("Type your name in the sidebar first: consent is recorded with who recorded it.")
    note = st.text_input("How and when was consent given?", key=appstate.BUILD_CONSENT_NOTE)
    if st.button("Record consent granted", disabled=not note.strip() or ui.recorder() is None):
        consent.record(store, case_id, "granted", ui.recorder(), note)
        ui.access(case_id, "consent", "granted")
        appstate.clear_later(appstate.BUILD_CONSENT_NOTE)  # the next record gives its own note
        st.rerun()

col1, col2, col3 = st.columns(3)
segmentation = col1.selectbox(
    "Segmentation",
    ["bws", "fixed", "session", "pair"],
    format_func=lambda v: choice("segmentation.segmentation", v),  # as the sidebar's settings say it
    index=["bws", "fixed", "session", "pair"].index(settings.segmentation.segmentation),
)
window = col2.number_input("Window W", min_value=2, max_value=200, value=settings.segmentation.window_size)
from_scratch = col3.checkbox("Rebuild from scratch", help="clear this case's memory first")


counts = store.session_turn_counts(case_id)
left_turns = sum(n for sid, n in counts.items() if sid not in done)
speed = seconds_per_turn(store, ui.llm_config().model)
if left_turns and speed:
    st.caption(
        ui.plain(
            f"Estimate for the {left_turns} turns not built yet: {duration(speed[0] * left_turns)} "
            f"({speed[0]:.0f} s per turn, {speed[1]})."
        )
    )


def start(discard_by: str | None = None) -> None:
    if from_scratch and discard_by is None and human_corrections(store, case_id):
        appstate.put(appstate.CONFIRM_REBUILD, True)  # the dialog lists what would be discarded
        return
    try:
        builder = Builder(store, ui.llm(), ui.embedder(), settings)
    except Exception as e:  # e.g. the model file or the server is missing
        appstate.flash("error", str(e).splitlines()[0])
        return
    ui.jobs().start(BuildJob(case_id, builder, segmentation, int(window), from_scratch, discard_corrections=discard_by))
    ui.access(case_id, "build", f"{segmentation}, W={int(window)}" + (", from scratch" if from_scratch else ""))


corrections = human_corrections(store, case_id) if from_scratch else []


def discard_and_rebuild(reason: str) -> str:
    start(discard_by=ui.who())
    return "Rebuild from scratch started; the corrections listed were discarded."


ui.confirm_dialog(
    appstate.CONFIRM_REBUILD,
    "Rebuild from scratch?",
    f"A rebuild from scratch deletes this case's memory and builds it again, so these "
    f"{len(corrections)} correction(s) made by hand would be lost (deleted units come back, edits are "
    "undone):\n"
    + "\n".join(f"- {describe(c)}" for c in corrections[:20])
    + (f"\n- and {len(corrections) - 20} more" if len(corrections) > 20 else "")
    + "\n\nTo keep them, untick 'Rebuild from scratch': a build then resumes where it stopped.",
    discard_and_rebuild,
    reason=False,
    label="Discard them and rebuild",
)


def unit_card(u: FTAUnit) -> None:
    with st.container(border=True):
        st.markdown(
            f"**m{u.id}** · "
            + ui.plain(f"{word(u.fact.content_type)} · turns {span(u.evidence.start, u.evidence.end)}")
        )
        st.text(u.fact.text)
        st.caption(
            ui.plain(
                f"time: said {date(u.time.dialogue_time)}, happened {date(u.time.event_time)} "
                f"({word(u.time.time_orientation)}, {word(u.time.completion)}) · feeling: "
                f"{word(u.affect.emotion_or_state)}; intention: {word(u.affect.intention_or_plan)}"
            )
        )


job = ui.jobs().get(case_id)
running = job is not None and job.running


@st.fragment(run_every=1.0 if running else None)
def live() -> None:
    """The buttons and the build as it goes (progress, the window, units as they form), redrawn each
    second while a build runs. When the build starts or ends the whole page runs again, so the
    refresh is switched on or off and the buttons follow the build's state."""
    job = ui.jobs().get(case_id)
    if (job is not None and job.running) != running:
        st.rerun()
    b1, b2 = st.columns(2)
    if b1.button("Start / resume build", disabled=running or not allowed, type="primary"):
        start()
        st.rerun()  # the page follows the build from here on
    if b2.button("Stop", disabled=not running):
        job.stop()
        st.toast("Stopping after the current model call…")
    if job is None:
        st.info("No build started in this app session. Finished sessions are kept; a build resumes where it stopped.")
        return
    # The state before the events: a build that ends in between still has all its events read.
    job_running = job.running
    events = list(job.events)
    total = sum(store.session_turn_counts(case_id).values())
    covered = 0
    session_turns = {}
    for e in events:
        if isinstance(e, ev.SessionStarted):
            session_turns[e.session] = e.turns
        if isinstance(e, (ev.SessionDone, ev.SessionSkipped)):
            covered += session_turns.get(e.session, 0) or 0
    last_window = next((e for e in reversed(events) if isinstance(e, ev.WindowSegmented)), None)
    progress = covered / total if total else 0.0
    if last_window and job_running:
        first = next((e.first for e in reversed(events) if isinstance(e, ev.SessionStarted)), 0)
        progress = (covered + max(0, (last_window.final[-1][1] + 1 - first) if last_window.final else 0)) / total
    elapsed = (job.finished or time.time()) - job.started
    build_id = next((e.build_id for e in events if isinstance(e, ev.BuildStarted)), None)
    calls, tokens = store.build_usage(build_id) if build_id else (0, 0)
    state = "running" if job_running else word(job.report.status) if job.report else "ended"
    formed = sum(isinstance(e, ev.UnitFinalised) for e in events)
    where = f" · session {number(max(session_turns))} of {len(sessions)}" if session_turns and job_running else ""
    st.progress(
        min(progress, 1.0),
        text=f"{state}{where} · {round(min(progress, 1.0) * total)} of {total} turns · "
        f"{formed} unit{'' if formed == 1 else 's'} · {calls} calls · {tokens} tokens · {elapsed:.0f} s",
    )
    if job.error:
        st.error(ui.plain(job.error))
    began = {e.session: e.at for e in events if isinstance(e, ev.SessionStarted)}
    ended = {e.session: e.at for e in events if isinstance(e, ev.SessionDone)}
    if began:
        st.dataframe(
            [
                {
                    "session": number(i),
                    "turns": session_turns.get(i),
                    "elapsed s": round(ended.get(i, time.time()) - t),
                    "state": "done" if i in ended else "building" if job.running else "stopped",
                    "estimate s": round(speed[0] * (session_turns.get(i) or 0)) if speed else NOTHING,
                }
                for i, t in began.items()
            ],
            hide_index=True,
        )
    if last_window:
        st.subheader(f"Window turns {span(last_window.start, last_window.end)}")
        rows = [{"span": span(a, b), "trigger": word(t), "state": "final"} for a, b, t in last_window.final]
        if last_window.provisional:
            a, b, t = last_window.provisional
            rows.append({"span": span(a, b), "trigger": word(t), "state": "provisional (carried to the next window)"})
        st.dataframe(rows, hide_index=True)
    units = [e.unit for e in events if isinstance(e, ev.UnitFinalised)]
    present = store.present_unit_ids(case_id, [u.id for u in units])
    units = [u for u in units if u.id in present]  # a unit deleted since is not shown again
    left, right = st.columns([2, 1])
    with left:
        st.subheader(f"Units formed ({len(units)})")
        for unit in reversed(units[-8:]):
            unit_card(unit)
    with right:
        st.subheader("Fusions, checks, links")
        kinds = (
            ev.Fused,
            ev.TurnsCut,
            ev.VerbatimKept,
            ev.DuplicateMerged,
            ev.Dropped,
            ev.LinkAdded,
            ev.FusionUndone,
        )
        shown = [e for e in events if isinstance(e, kinds)][-12:]
        # A link event carries the units' ids only; their facts as stored now (an edit since shows).
        ends = [i for e in shown if isinstance(e, ev.LinkAdded) for i in (e.link.source, e.link.target)]
        facts = store.unit_facts(case_id, ends)
        for e in reversed(shown):
            # model text goes through st.text: shown as text, never as Markdown
            if isinstance(e, ev.Fused):
                st.text(f"fused: {e.fused}")
            elif isinstance(e, ev.FusionUndone):
                st.text(f"fusion undone ({e.why}): kept {e.kept}")
            elif isinstance(e, ev.TurnsCut):
                st.caption(
                    f"turns {turns(e.turns)} cut to fit the prompt "
                    f"({e.limit:,} characters for a prompt's turns); stored whole"
                )
            elif isinstance(e, ev.VerbatimKept):
                st.caption(f"turns in no unit kept in their own words: {turns(e.turns)}")
            elif isinstance(e, ev.DuplicateMerged):
                st.text(f"merged a near-duplicate: {e.dropped}")
            elif isinstance(e, ev.SpeakerUnresolved):
                st.text(f"dropped, no naming of the speakers fits its turns: {e.fact}")
            elif isinstance(e, ev.Unsupported):
                st.text(f"dropped, not in its turns ({e.support:.0%} of its words): {e.fact}")
            elif isinstance(e, ev.ForeignScript):
                st.text(f"sentences in {e.script} script left out (the turns use none): {e.fact}")
            elif isinstance(e, ev.LinkAdded):
                link = e.link
                both = {i: facts.get(i) for i in (link.source, link.target)}
                st.text(f"link added: {link_line(link.source, link.relation, link.target, link.confidence, both, 60)}")


ui.show_flash()
live()
