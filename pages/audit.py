"""Audit: draw a round of units and linked pairs, score each item blind beside its evidence, act
on what is wrong, and read the report (means like the paper's audit table, agreement,
disagreements). Opening the report ends one's own scoring of the round (the blind protocol)."""

import json

import plotly.express as px
import streamlit as st

import appstate
import ui
from ftamem_core.display import cells, date, link as link_line, number, rows, text, word, words
from ftamem_core.governance import audit
from ftamem_core.governance.audit.checks import CHECKS
from ftamem_core.storage.store import StoreError

SCALE_HELP = "2: fully correct and grounded · 1: partly correct but usable · 0: wrong or unsupported"
CRITERION_LABELS = {
    "fact": "Factual grounding",
    "time": "Temporal accuracy",
    "affect": "Affect / context accuracy",
    "relatedness": "Are the linked units meaningfully related?",
}

st.title("Audit")
store = ui.active_store()
if ui.active_case() is not None:
    ui.consent_banner(ui.active_case())
ui.show_flash()


def draw_round() -> None:
    case_id = ui.active_case()
    every = appstate.get(appstate.AUDIT_SCOPE) == "every case with memory"
    seed_text = appstate.get(appstate.AUDIT_SEED).strip()
    try:
        seed = int(seed_text) if seed_text else None
        if not every and case_id is None:
            raise StoreError("choose a case in the sidebar first")
        round_id = audit.new_round(
            store,
            None if every else [case_id],
            int(appstate.get(appstate.AUDIT_UNITS)),
            int(appstate.get(appstate.AUDIT_PAIRS)),
            seed,
            ui.who(),
        )
        appstate.put(appstate.AUDIT_ROUND, round_id)
        appstate.flash("success", f"Round {round_id} drawn (seed {audit.get_round(store, round_id)['seed']}).")
    except ValueError:
        appstate.flash("error", "The seed is a whole number, or empty for a random one.")
    except StoreError as e:
        appstate.flash("error", str(e))


rounds = audit.list_rounds(store)
with st.expander("New round", expanded=not rounds):
    st.radio("Sample from", ["the active case", "every case with memory"], key=appstate.AUDIT_SCOPE, horizontal=True)
    c1, c2, c3 = st.columns(3)
    c1.number_input("Units", 0, 1000, 20, key=appstate.AUDIT_UNITS)
    c2.number_input("Linked pairs", 0, 1000, 10, key=appstate.AUDIT_PAIRS)
    c3.text_input("Seed", key=appstate.AUDIT_SEED, placeholder="empty: a random seed, stored with the round")
    st.caption("Units are stratified by case, session and content type, pairs by relation; cases get equal shares.")
    st.button("Draw the round", on_click=draw_round)
if not rounds:
    st.info("No audit round yet: draw one above.")
    st.stop()

st.dataframe(
    rows(
        [{**r, "cases": ", ".join(r["cases"])} for r in rounds],
        {
            "id": "round",
            "scope": "scope",
            "cases": "cases",
            "items": "items",
            "seed": "seed",
            "created_by": "drawn by",
            "created_at": "when",
        },
        dates=("created_at",),
        enums=("scope",),
    ),
    hide_index=True,
)
ids = [r["id"] for r in rounds]
if appstate.get(appstate.AUDIT_ROUND) not in ids:
    appstate.put(appstate.AUDIT_ROUND, ids[-1])
round_id = st.selectbox("Round", ids, key=appstate.AUDIT_ROUND, format_func=lambda r: f"round {r}")

named = bool(appstate.user() or appstate.typed_name())
annotator = ui.who()
score_tab, report_tab = st.tabs(["Score", "Report"])

with score_tab:
    done = audit.progress(store, round_id)
    mine = done["annotators"].get(annotator, 0)
    st.progress(mine / max(1, done["items"]), text=f"You: {mine} of {done['items']} items scored")
    st.text("Everyone: " + (", ".join(f"{name} {n}" for name, n in done["annotators"].items()) or "nobody yet"))
    if not named:
        st.warning("Type your name in the sidebar first: scores are kept per annotator.")
    elif annotator in audit.revealed_to(store, round_id):
        st.info("You have opened this round's report, so your scoring of it is closed.")
    elif not (items := audit.items(store, round_id)):
        st.info("This round has no items left: the cases it sampled were erased.")
    else:
        positions = {i["id"]: i["position"] for i in items}
        resume = audit.next_item(store, round_id, annotator)
        key = appstate.audit_item(round_id)
        if appstate.pop(appstate.AUDIT_ADVANCE, False) or appstate.get(key) not in positions:
            appstate.put(key, resume if resume is not None else items[0]["id"])
        if resume is None:
            st.success("You have scored every item of this round; you can still revise your scores.")
        item_id = st.selectbox(
            "Item", list(positions), key=key, format_func=lambda i: f"item {positions[i] + 1} of {len(items)}"
        )
        view = audit.item_view(store, item_id, annotator)
        ui.access(view["item"]["case_id"], "view", "audit page")
        if view["item"]["case_id"] != ui.active_case():  # the active case's banner is shown above
            ui.consent_banner(view["item"]["case_id"])
        st.text(f"Case {view['item']['case_id']} · {word(view['item']['kind'])} · {words(view['item']['stratum'])}")
        for note in view["changed"]:
            st.warning(ui.plain(f"{note} since the round was drawn"))
        if view["link"]:
            link = view["link"]
            st.text(f"Link: {link_line(link['source'], link['relation'], link['target'], link['confidence'])}")
        columns = st.columns(len(view["units"]))
        for column, shown in zip(columns, view["units"]):
            with column:
                st.subheader(ui.plain(f"m{shown['id']}"))
                if shown["deleted"]:
                    st.text("Deleted since the draw.")
                    continue
                u = shown["unit"]
                st.text(f"Fact [{word(u['fact']['content_type'])}]: {u['fact']['text']}")
                st.text(
                    f"Time: {date(u['time']['event_time'])} (said as: {text(u['time']['event_time_expression'])}; "
                    f"{word(u['time']['time_orientation'])}, {word(u['time']['completion'])}); said on "
                    f"{date(u['time']['dialogue_time'])}"
                )
                st.text(
                    f"Feeling: {word(u['affect']['emotion_or_state'])} · intention: "
                    f"{word(u['affect']['intention_or_plan'])} · relations: {word(u['affect']['relation_cues'])}"
                )
                st.text("Evidence turns:")
                for t in shown["turns"]:
                    st.text(f"[{number(t['idx'])}] {t['speaker'] or t['role']}: {t['text']}")
                failed = [CHECKS[name] for name, ok in view["checks"].get(shown["id"], {}).items() if ok is False]
                for what in failed:
                    st.warning(ui.plain(f"Automatic check failed: {what}"))

        own = view["own_score"] or {}
        with st.form(f"audit-score-{item_id}"):
            st.caption(SCALE_HELP)
            values = {
                c: st.radio(
                    CRITERION_LABELS[c], [0, 1, 2], index=own.get(c), horizontal=True, key=f"audit-{item_id}-{c}"
                )
                for c in view["criteria"]
            }
            comment = st.text_area("Comment (optional)", own.get("comment", ""), key=f"audit-{item_id}-comment")
            if st.form_submit_button("Save score" if not own else "Revise my score"):
                try:
                    audit.score(store, item_id, annotator, values, comment)
                    appstate.flash("success", f"Item {positions[item_id] + 1} scored.")
                    # the next run resumes at the next unscored item (a widget's value is set before it is drawn)
                    appstate.put(appstate.AUDIT_ADVANCE, audit.next_item(store, round_id, annotator) is not None)
                except StoreError as e:
                    appstate.flash("error", str(e))
                st.rerun()

        alive = [s for s in view["units"] if not s["deleted"]]
        if alive:
            with st.expander("Act on this finding: correct, dispute or delete the unit"):
                target = st.selectbox(
                    "Unit", [s["id"] for s in alive], format_func=lambda i: f"m{i}", key=f"audit-act-unit-{item_id}"
                )
                unit = next(s["unit"] for s in alive if s["id"] == target)
                reason = st.text_input("What the audit found (kept in the unit's history)", key=f"audit-why-{item_id}")
                fact = st.text_area("Fact", unit["fact"]["text"], key=f"audit-fact-{item_id}-{target}")
                e1, e2 = st.columns(2)
                event_time = e1.text_input(
                    "Event time", unit["time"]["event_time"], key=f"audit-time-{item_id}-{target}"
                )
                feeling = e2.text_input(
                    "Emotion or state", unit["affect"]["emotion_or_state"], key=f"audit-feeling-{item_id}-{target}"
                )
                c1, c2, c3 = st.columns(3)
                confirm = c3.checkbox("Yes, delete it", key=f"audit-confirm-{item_id}-{target}")
                try:
                    if c1.button("Save correction", key=f"audit-correct-{item_id}", disabled=not reason.strip()):
                        audit.correct(
                            store,
                            ui.embedder(),
                            item_id,
                            target,
                            {"fact.text": fact, "time.event_time": event_time, "affect.emotion_or_state": feeling},
                            unit["version"],
                            ui.who(),
                            reason,
                        )
                        ui.access(view["item"]["case_id"], "change", f"audit correction of m{target}")
                        appstate.flash("success", f"m{target} corrected.")
                        appstate.clear_later(f"audit-why-{item_id}")
                        st.rerun()
                    if c2.button("Mark disputed", key=f"audit-dispute-{item_id}", disabled=not reason.strip()):
                        audit.dispute(store, ui.embedder(), item_id, target, ui.who(), reason)
                        ui.access(view["item"]["case_id"], "change", f"audit dispute of m{target}")
                        appstate.flash("success", f"m{target} marked disputed.")
                        appstate.clear_later(f"audit-why-{item_id}")
                        st.rerun()
                    if c3.button(
                        "Delete unit", key=f"audit-delete-{item_id}", disabled=not (reason.strip() and confirm)
                    ):
                        audit.delete(store, item_id, target, ui.who(), reason)
                        ui.access(view["item"]["case_id"], "change", f"audit deletion of m{target}")
                        appstate.flash("success", f"m{target} deleted.")
                        appstate.clear_later(f"audit-why-{item_id}")
                        st.rerun()
                except StoreError as e:
                    st.error(ui.plain(str(e).splitlines()[0]))

with report_tab:
    if not named:
        st.warning("Type your name in the sidebar first: opening the report closes your own scoring of the round.")
    elif annotator not in audit.revealed_to(store, round_id):
        left = done["items"] - done["annotators"].get(annotator, 0)
        st.warning(
            ui.plain(
                f"The report shows every annotator's scores. Once you open it you cannot score or revise "
                f"round {round_id} any more ({left} of its items are unscored by you)."
            )
        )
        if st.button("Open the report", key=f"audit-reveal-{round_id}"):
            audit.reveal(store, round_id, annotator)
            st.rerun()
    else:
        seen = [r for r in ids if annotator in audit.revealed_to(store, r)]
        chosen = st.multiselect(
            "Rounds in the report",
            seen,
            default=[round_id],
            format_func=lambda r: f"round {r}",
            help="rounds whose report you have opened; several give one table across them",
        )
        rep = audit.report(store, chosen or [round_id])
        for case_id in {c for r in rep["rounds"] for c in r["cases"]}:
            ui.access(case_id, "view", "audit report")
        st.subheader("Mean scores (0–2), as in the paper's audit table")
        st.dataframe(cells(rep["table"]), hide_index=True)
        st.subheader("Agreement")
        st.caption(
            "Cohen's kappa (linear weights) for two annotators; Krippendorff's alpha (ordinal); the share "
            "of items scored by all on which all agree."
        )
        st.dataframe(cells([{"criterion": label, **a} for label, a in rep["agreement"].items()]), hide_index=True)
        shares = [
            {"criterion": label, "score": score, "share": share}
            for label, d in rep["distribution"].items()
            for score, share in d.items()
            if share is not None
        ]
        if shares:
            st.plotly_chart(
                px.bar(
                    shares,
                    x="criterion",
                    y="share",
                    color="score",
                    barmode="stack",
                    title="Share of 0 / 1 / 2 per criterion",
                ),
                width="stretch",
            )
        st.subheader(f"Disagreements ({len(rep['disagreements'])})")
        st.dataframe(
            [
                {
                    **{k: d[k] for k in ("item", "case", "units", "criterion")},
                    "scores": ", ".join(f"{who} {v}" for who, v in d["scores"].items()),
                    "comments": "; ".join(f"{who}: {c}" for who, c in d["comments"].items()) or text(None),
                }
                for d in rep["disagreements"]
            ],
            hide_index=True,
        )
        st.subheader(f"Changed since the draw ({len(rep['changed_since_draw'])})")
        st.dataframe([{**c, "changes": "; ".join(c["changes"])} for c in rep["changed_since_draw"]], hide_index=True)
        st.subheader("Automatic checks (beside the human scores, never instead of them)")
        st.dataframe(cells([{"check": word(name), **c} for name, c in rep["checks"].items()]), hide_index=True)
        st.subheader("Items")
        st.dataframe(
            cells([{**i, "kind": word(i["kind"]), "stratum": words(i["stratum"])} for i in rep["items"]]),
            hide_index=True,
        )
        c1, c2 = st.columns(2)
        c1.download_button(
            "Scores as CSV", audit.scores_csv(store, chosen or [round_id]), f"audit-round-{round_id}.csv", "text/csv"
        )
        c2.download_button(
            "Report as JSON",
            json.dumps(rep, indent=1, ensure_ascii=False),
            f"audit-round-{round_id}.json",
            "application/json",
        )
