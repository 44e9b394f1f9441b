"""The memory-quality audit: seeded stratified samples, blind scoring, agreement, report, the
correction path, the command line."""

import csv
import json
import math
from collections import Counter

import pytest

from ftamem_core.governance import audit, consent, privacy
from ftamem_core.governance.audit.agreement import agreement, alpha, percent_agreement, weighted_kappa
from ftamem_core.governance.audit.checks import unit_checks
from ftamem_core.governance.audit.sampling import equal_shares, proportional_shares
from ftamem_core.cli import main
from ftamem_core.governance.editing import edit_unit, history
from ftamem_core.models import Evidence, FactAnchor, FTAUnit, Link, TimeAnchor, Turn
from ftamem_core.storage.store import Store

from conftest import make_doc
from scripted import HashEmbedder

TYPES = ["event", "event", "event", "current_state", "homework_or_plan", "event"]


def seeded_case(store: Store, case_id: str = "c1", sessions: int = 3) -> dict[int, FTAUnit]:
    """A case with six units per session (four event, one emotion, one plan; the last a copy of its
    turn) and links between consecutive units: known strata without a model."""
    doc = make_doc(case_id, sessions=sessions, turns=6)
    for session in doc.sessions:  # English turns: the audit's word checks read English words
        for turn in session.turns:
            turn.text = f"A told B what happened in {turn.text}"
    store.ingest([doc])
    consent.record(store, case_id, "granted", "test", "scripted case")
    units = []
    for s in store.sessions(case_id):
        first = s.idx * 6
        for j, ctype in enumerate(TYPES):
            units.append(
                FTAUnit(
                    case_id=case_id,
                    fact=FactAnchor(
                        text=f"A said {case_id} session {s.idx} turn {j}", content_type=ctype, participants=["A"]
                    ),
                    evidence=Evidence(session_id=s.id, start=first + j, end=first + j),
                    origin="copied" if j == len(TYPES) - 1 else "model",
                )
            )
    ids = store.add_units(case_id, units, HashEmbedder().encode([u.fact.text for u in units]))
    store.add_links(
        case_id,
        [
            Link(source=b, target=a, relation="updates" if k % 2 else "supports")
            for k, (a, b) in enumerate(zip(ids, ids[1:]))
        ],
    )
    return {u.id: u for u in store.units(case_id)}


@pytest.fixture
def two_cases(store):
    seeded_case(store, "c1", sessions=3)
    seeded_case(store, "c2", sessions=1)
    return store


# Sampling ---------------------------------------------------------------------------------


def test_shares_are_proportional_cover_every_stratum_and_never_exceed_it():
    assert proportional_shares({"a": 12, "b": 6, "c": 2}, 10) == {"a": 6, "b": 3, "c": 1}
    assert proportional_shares({"a": 12, "b": 6, "c": 2}, 7) == {"a": 4, "b": 2, "c": 1}
    assert proportional_shares({"a": 12, "b": 6, "c": 2}, 3) == {"a": 1, "b": 1, "c": 1}  # one each first
    assert proportional_shares({"a": 12, "b": 6, "c": 2}, 2) == {"a": 1, "b": 1, "c": 0}
    assert proportional_shares({"a": 1, "b": 1}, 9) == {"a": 1, "b": 1}
    assert equal_shares({"big": 18, "small": 6}, 20) == {"big": 14, "small": 6}  # small gives what it has
    assert equal_shares({"x": 5, "y": 5}, 5) == {"x": 3, "y": 2}


def test_the_same_seed_draws_the_same_sample_and_strata_are_respected(two_cases):
    store = two_cases
    first = audit.new_round(store, None, n_units=12, n_pairs=6, seed=7)
    again = audit.new_round(store, None, n_units=12, n_pairs=6, seed=7)
    other = audit.new_round(store, None, n_units=12, n_pairs=6, seed=8)
    key = lambda r: [(i["case_id"], i["kind"], i["unit_id"], i["other_id"]) for i in audit.items(store, r)]  # noqa: E731
    assert key(first) == key(again) != key(other)
    assert audit.redraw(store, first) == [audit.rounds.as_drawn(i) for i in audit.items(store, first)]

    units = [i for i in audit.items(store, first) if i["kind"] == "unit"]
    by_case = Counter(i["case_id"] for i in units)
    assert by_case == {"c1": 6, "c2": 6}  # equal shares across cases, as the paper balanced benchmarks
    strata_c1 = Counter(i["stratum"].rsplit(" · ", 1)[0] for i in units if i["case_id"] == "c1")
    # c1: strata by origin and type of sizes 9 (model events), 3, 3 and 3 (copied events): one
    # each, then one by quota to the largest and one by the largest remainder (ties in sorted order)
    assert strata_c1 == {
        "model · event": 2,
        "model · current_state": 1,
        "model · homework_or_plan": 1,
        "copied · event": 2,
    }
    strata_c2 = Counter(i["stratum"] for i in units if i["case_id"] == "c2")
    assert strata_c2 == {
        "model · event · session 1": 3,
        "model · current_state · session 1": 1,
        "model · homework_or_plan · session 1": 1,
        "copied · event · session 1": 1,
    }
    assert len({i["unit_id"] for i in units}) == len(units)
    pairs = [i for i in audit.items(store, first) if i["kind"] == "pair"]
    assert len(pairs) == 6 and Counter(i["case_id"] for i in pairs) == {"c1": 3, "c2": 3}
    assert {i["stratum"] for i in pairs} == {"updates", "supports"}
    links = {link.id: link for c in ("c1", "c2") for link in store.links(c)}
    assert all((links[i["link_id"]].source, links[i["link_id"]].target) == (i["unit_id"], i["other_id"]) for i in pairs)


def test_a_stratum_s_draws_spread_over_its_sessions(store):
    """A store built before provenance has one origin: each stratum still reaches every session."""
    units = seeded_case(store, "c1", sessions=3)
    for u in units.values():
        store.conn.execute("UPDATE units SET origin = 'unknown' WHERE id = ?", (u.id,))
    for seed in range(5):
        round_id = audit.new_round(store, ["c1"], n_units=6, n_pairs=0, seed=seed)
        events = [i["stratum"] for i in audit.items(store, round_id) if i["stratum"].startswith("unknown · event")]
        assert len(events) >= 3 and {e.rsplit(" · ", 1)[1] for e in events} == {"session 1", "session 2", "session 3"}


def test_a_round_asks_for_something_to_sample(store):
    store.ingest([make_doc("empty")])
    with pytest.raises(audit.AuditError, match="nothing to sample"):
        audit.new_round(store, ["empty"], 5, 0, seed=1)
    with pytest.raises(audit.AuditError, match="not both 0"):
        audit.new_round(store, ["empty"], 0, 0, seed=1)


def test_units_changed_after_the_draw_are_flagged(two_cases):
    store = two_cases
    round_id = audit.new_round(store, ["c1"], n_units=4, n_pairs=2, seed=3)
    unit_items = [i for i in audit.items(store, round_id) if i["kind"] == "unit"]
    edited, deleted = unit_items[0]["unit_id"], unit_items[1]["unit_id"]
    u = store.get_unit("c1", edited)
    edit_unit(store, HashEmbedder(), "c1", edited, {"fact.text": "A said something else"}, u.version, "Dr. Lee", "fix")
    assert store.get_unit("c1", edited).origin == "corrected"  # provenance: a person's word now
    from ftamem_core.governance.editing import delete_unit

    delete_unit(store, "c1", deleted, "Dr. Lee", "filler")
    rep = audit.report(store, [round_id])
    notes = {c["item"]: c["changes"] for c in rep["changed_since_draw"]}
    assert notes[unit_items[0]["id"]] == [f"m{edited} changed (version 1 drawn, now 2)"]
    assert notes[unit_items[1]["id"]] == [f"m{deleted} deleted"]
    assert audit.item_view(store, unit_items[1]["id"], "ann")["units"] == [{"id": deleted, "deleted": True}]


# Blind scoring ------------------------------------------------------------------------------


def test_a_second_annotator_sees_no_scores_but_their_own(two_cases):
    store = two_cases
    round_id = audit.new_round(store, ["c1"], n_units=3, n_pairs=1, seed=5)
    item = audit.items(store, round_id)[0]
    criteria = audit.rounds.CRITERIA[item["kind"]]
    audit.score(store, item["id"], "Ana", {c: 0 for c in criteria}, "Zq-ana-secret-comment")
    view = audit.item_view(store, item["id"], "Ben")
    assert view["own_score"] is None
    text = json.dumps(view)
    assert "Ana" not in text and "Zq-ana-secret-comment" not in text
    assert audit.item_view(store, item["id"], "Ana")["own_score"]["comment"] == "Zq-ana-secret-comment"
    # the view shows the unit beside its evidence turns, with the automatic checks
    shown = view["units"][0]
    assert [t["idx"] for t in shown["turns"]] == list(
        range(shown["unit"]["evidence"]["start"], shown["unit"]["evidence"]["end"] + 1)
    )
    assert set(view["checks"][shown["id"]]) == {
        "span_in_session",
        "fact_in_evidence",
        "time_not_after_session",
        "subject_in_evidence",
    }


def test_progress_resume_and_revising_ones_own_score(two_cases):
    store = two_cases
    round_id = audit.new_round(store, ["c1"], n_units=3, n_pairs=2, seed=11)
    order = [i["id"] for i in audit.items(store, round_id)]
    for item_id in order[:2]:
        kind = audit.get_item(store, item_id)["kind"]
        audit.score(store, item_id, "Ana", {c: 2 for c in audit.rounds.CRITERIA[kind]})
    assert audit.next_item(store, round_id, "Ana") == order[2]  # resumes where Ana left off
    assert audit.next_item(store, round_id, "Ben") == order[0]
    kind = audit.get_item(store, order[0])["kind"]
    audit.score(store, order[0], "Ana", {c: 1 for c in audit.rounds.CRITERIA[kind]}, "second look")
    assert audit.progress(store, round_id) == {"items": 5, "annotators": {"Ana": 2}}
    assert audit.item_view(store, order[0], "Ana")["own_score"]["comment"] == "second look"


@pytest.mark.parametrize(
    "bad",
    [
        {"fact": 3, "time": 1, "affect": 1},
        {"fact": 1, "time": 1},
        {"fact": True, "time": 1, "affect": 1},
        {"fact": 1, "time": 1, "affect": 1, "relatedness": 2},
    ],
)
def test_scores_outside_0_to_2_or_of_the_wrong_criteria_are_refused(two_cases, bad):
    store = two_cases
    round_id = audit.new_round(store, ["c1"], n_units=2, n_pairs=0, seed=1)
    item = audit.items(store, round_id)[0]
    with pytest.raises(audit.AuditError):
        audit.score(store, item["id"], "Ana", bad)
    assert audit.progress(store, round_id)["annotators"] == {}


def test_who_has_seen_the_report_cannot_score_the_round_any_more(two_cases):
    store = two_cases
    round_id = audit.new_round(store, ["c1"], n_units=2, n_pairs=0, seed=1)
    first, second = audit.items(store, round_id)
    audit.score(store, first["id"], "Ana", {"fact": 2, "time": 2, "affect": 1})
    audit.reveal(store, round_id, "Ana")
    with pytest.raises(audit.AuditError, match="seen the round's report"):
        audit.score(store, second["id"], "Ana", {"fact": 2, "time": 2, "affect": 1})
    audit.score(store, second["id"], "Ben", {"fact": 2, "time": 2, "affect": 1})  # others still can


# Agreement ----------------------------------------------------------------------------------


def test_weighted_kappa_on_a_hand_computed_example():
    # a = 0 1 2 2 1, b = 0 2 2 1 1: observed disagreement weight 2 (two one-step misses); expected
    # from the margins (1, 2, 2 each) 20/5 = 4, so linear kappa 1 - 2/4 = 0.5; with squared weights
    # 1 - 2/5.6; unweighted (0.6 - 0.36) / 0.64.
    a, b = [0, 1, 2, 2, 1], [0, 2, 2, 1, 1]
    assert weighted_kappa(a, b) == pytest.approx(0.5)
    assert weighted_kappa(a, b, weights="quadratic") == pytest.approx(1 - 2 / 5.6)
    assert weighted_kappa(a, b, weights=None) == pytest.approx(0.375)
    assert weighted_kappa([2, 2, 2], [2, 2, 2]) is None  # one value used by both: undefined


def test_alpha_matches_krippendorffs_documented_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the example the library
    # documents: 4 coders, 12 units, values 1-5, missing entries: ordinal alpha 0.815.
    nan = float("nan")
    data = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
    ratings = {f"coder{c}": {i: v for i, v in enumerate(row) if not math.isnan(v)} for c, row in enumerate(data)}
    assert round(alpha(ratings, domain=(1, 2, 3, 4, 5)), 3) == 0.815
    assert round(alpha(ratings, domain=(1, 2, 3, 4, 5), level="nominal"), 3) == 0.743


def test_percent_agreement_and_the_combined_figures():
    ratings = {"Ana": {1: 2, 2: 1, 3: 0, 4: 2}, "Ben": {1: 2, 2: 2, 3: 0}, "Cy": {1: 2, 2: 1, 3: 0, 4: 1}}
    assert percent_agreement(ratings) == pytest.approx(2 / 3)  # items 1-3 scored by all; 1 and 3 agree
    three = agreement(ratings)
    assert three["kappa"] is None and three["alpha"] is not None and three["shared_items"] == 3
    two = agreement({"Ana": ratings["Ana"], "Ben": ratings["Ben"]})
    assert two["kappa"] == pytest.approx(weighted_kappa([2, 1, 0], [2, 2, 0]))
    assert agreement({"Ana": ratings["Ana"]}) == {
        "annotators": 1,
        "shared_items": 4,
        "kappa": None,
        "alpha": None,
        "percent": None,
    }


# Report -------------------------------------------------------------------------------------


def scored_round(store) -> int:
    round_id = audit.new_round(store, ["c1", "c2"], n_units=4, n_pairs=2, seed=2)
    for n, item in enumerate(audit.items(store, round_id)):
        if item["kind"] == "unit":
            audit.score(store, item["id"], "Ana", {"fact": 2, "time": 2, "affect": 1})
            audit.score(store, item["id"], "Ben", {"fact": 2, "time": 1 if n == 0 else 2, "affect": 1}, "hmm")
        else:
            audit.score(store, item["id"], "Ana", {"relatedness": 2})
            audit.score(store, item["id"], "Ben", {"relatedness": 0})
    return round_id


def test_report_lays_out_means_shares_agreement_and_disagreements(two_cases):
    store = two_cases
    round_id = scored_round(store)
    rep = audit.report(store, [round_id])
    overall = rep["table"][0]
    first = audit.items(store, round_id)[0]
    time_mean = (4 * 2 - (0.5 if first["kind"] == "unit" else 0)) / 4
    assert overall == {
        "group": "all",
        "units": 4,
        "pairs": 2,
        "Fact": 2.0,
        "Time": round(time_mean, 3),
        "Affect/Ctx.": 1.0,
        "Rel.": 1.0,
    }
    assert [r["group"] for r in rep["table"]] == ["all", "dataset other", "case c1", "case c2"]
    assert rep["distribution"]["Affect/Ctx."] == {"0": 0.0, "1": 1.0, "2": 0.0}
    assert rep["distribution"]["Rel."] == {"0": 0.5, "1": 0.0, "2": 0.5}
    assert rep["agreement"]["Fact"]["percent"] == 1.0
    assert rep["agreement"]["Rel."]["percent"] == 0.0 and rep["agreement"]["Rel."]["annotators"] == 2
    rel = [d for d in rep["disagreements"] if d["criterion"] == "Rel."]
    assert len(rel) == 2 and all(d["scores"] == {"Ana": 2, "Ben": 0} for d in rel)
    assert all(d["comments"] == {} for d in rel)
    table = audit.table_markdown(rep)
    assert table.splitlines()[0] == "| Group | Units | Pairs | Fact | Time | Affect/Ctx. | Rel. |"
    assert "| all | 4 | 2 | 2.00 |" in table
    rows = list(csv.DictReader(audit.scores_csv(store, [round_id]).splitlines()))
    assert len(rows) == 12 and {r["annotator"] for r in rows} == {"Ana", "Ben"}
    assert {r["fact_in_evidence"] for r in rows if r["kind"] == "unit"} == {"True"}
    across = audit.report(store, [round_id, scored_round(store)])
    assert [r["group"] for r in across["table"]][-2:] == [f"round {round_id}", f"round {round_id + 1}"]


def test_automatic_checks_flag_what_they_name():
    turns = {
        0: Turn(idx=0, session_id=1, speaker="Maya", text="I moved to night shifts last spring."),
        1: Turn(idx=1, session_id=1, speaker="Sam", text="That sounds hard."),
        2: Turn(idx=2, session_id=2, speaker="Maya", text="Back again."),
    }
    good = FTAUnit(
        fact=FactAnchor(text="Maya moved to night shifts", participants=["Maya"]),
        time=TimeAnchor(event_time="2025-04", time_orientation="past"),
        evidence=Evidence(session_id=1, start=0, end=1),
    )
    assert unit_checks(good, turns, "2025-06-01", ["Maya", "Sam"]) == {
        "span_in_session": True,
        "fact_in_evidence": True,
        "time_not_after_session": True,
        "subject_in_evidence": True,
    }
    bad = FTAUnit(
        fact=FactAnchor(text="Priya booked a holiday cottage", participants=["Priya"]),
        time=TimeAnchor(event_time="2025-09-10", time_orientation="past"),
        evidence=Evidence(session_id=1, start=1, end=2),
    )
    assert unit_checks(bad, turns, "2025-06-01", ["Maya", "Sam"]) == {
        "span_in_session": False,
        "fact_in_evidence": False,
        "time_not_after_session": False,
        "subject_in_evidence": False,
    }
    undated = good.model_copy(update={"time": TimeAnchor(event_time="unknown", time_orientation="past")})
    assert unit_checks(undated, turns, None, [])["time_not_after_session"] is None


# Acting on findings -------------------------------------------------------------------------


def test_correct_dispute_or_delete_from_an_item_records_an_audit_finding(two_cases):
    store = two_cases
    round_id = audit.new_round(store, ["c1"], n_units=3, n_pairs=1, seed=4)
    units = [i for i in audit.items(store, round_id) if i["kind"] == "unit"]
    a, b, c = (i["unit_id"] for i in units)
    version = store.get_unit("c1", a).version
    audit.correct(
        store, HashEmbedder(), units[0]["id"], a, {"fact.text": "B said it, not A"}, version, "Ana", "wrong speaker"
    )
    assert store.get_unit("c1", a).fact.text == "B said it, not A"
    (h,) = history(store, "c1", "unit", a)
    assert (
        h["reason"] == f"audit finding (round {round_id}, item {units[0]['id']}): wrong speaker" and h["who"] == "Ana"
    )
    audit.dispute(store, HashEmbedder(), units[1]["id"], b, "Ana", "not in the turns")
    assert store.get_unit("c1", b).disputed
    audit.delete(store, units[2]["id"], c, "Ana", "filler")
    assert c not in {u.id for u in store.units("c1")}
    assert history(store, "c1", "unit", c)[-1]["reason"].startswith("audit finding")
    with pytest.raises(audit.AuditError, match="not part of audit item"):
        audit.dispute(store, HashEmbedder(), units[0]["id"], b, "Ana", "x")
    with pytest.raises(audit.AuditError, match="say what the audit found"):
        audit.dispute(store, HashEmbedder(), units[0]["id"], a, "Ana", " ")


# Privacy ------------------------------------------------------------------------------------


def test_audit_rows_are_exported_and_erased_with_their_case(tmp_path):
    store = Store(tmp_path / "m.db")
    seeded_case(store, "c1")
    seeded_case(store, "c2", sessions=1)
    round_id = scored_round(store)
    exported = privacy.export_case(store, "c1")
    assert exported["audit"]["audit_scores"] and all(r["case_id"] == "c1" for r in exported["audit"]["audit_scores"])
    counts = privacy.erase_case(store, "c1", "Dr. Lee", "asked")
    assert counts["audit_items"] > 0 and counts["audit_scores"] > 0
    assert audit.get_round(store, round_id)["cases"] == ["c2"]
    assert {i["case_id"] for i in audit.items(store, round_id)} == {"c2"}
    assert store._rows("SELECT count(*) AS n FROM audit_scores WHERE case_id = 'c1'")[0]["n"] == 0


# Command line -------------------------------------------------------------------------------


def test_the_command_line_draws_scores_from_csv_and_reports(tmp_path, capsys):
    db = str(tmp_path / "m.db")
    store = Store(db)
    seeded_case(store, "c1")
    assert main(["--db", db, "--json", "audit", "new", "c1", "--units", "3", "--pairs", "1", "--seed", "9"]) == 0
    created = json.loads(capsys.readouterr().out)
    assert created["seed"] == 9 and created["items"] == 4
    items = audit.items(store, created["id"])
    sheet = tmp_path / "sheet.txt"
    audit.score(
        store,
        items[0]["id"],
        "zed",
        {"fact": 0, "time": 0, "affect": 0} if items[0]["kind"] == "unit" else {"relatedness": 0},
        "zed's private note",
    )
    assert main(["--db", db, "audit", "sheet", str(created["id"]), "--out", str(sheet)]) == 0
    text = sheet.read_text()
    assert all(f"#{i['id']}," in text for i in items) and "item,fact,time,affect,relatedness,comment" in text
    assert "zed's private note" not in text and "automatic checks" not in text  # blind: no scores, no checks
    capsys.readouterr()
    for name, value in (("ana.csv", 2), ("ben.csv", 1)):
        path = tmp_path / name
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["item", "fact", "time", "affect", "relatedness", "comment"])
            for i in items:
                w.writerow(
                    [i["id"], value, value, value, "", ""] if i["kind"] == "unit" else [i["id"], "", "", "", value, ""]
                )
        assert main(["--db", db, "audit", "score", str(created["id"]), "--as", name[:3], "--from", str(path)]) == 0
    assert "4 of 4 items" in capsys.readouterr().out
    bad = tmp_path / "bad.csv"
    first, second = [i["id"] for i in items if i["kind"] == "unit"][:2]
    bad.write_text(f"item,fact,time,affect\n{first},2,2,2\n{second},5,2,2\n")
    assert main(["--db", db, "audit", "score", str(created["id"]), "--as", "cy", "--from", str(bad)]) == 1
    assert "line 3" in capsys.readouterr().err
    assert audit.progress(store, created["id"])["annotators"] == {
        "ana": 4,
        "ben": 4,
        "zed": 1,
    }  # nothing of cy's written
    assert main(["--db", db, "audit", "score", str(created["id"]), "--as", "cy"]) == 1  # not a terminal
    assert "--from" in capsys.readouterr().err
    out_csv = tmp_path / "scores.csv"
    assert (
        main(["--db", db, "--json", "audit", "report", str(created["id"]), "--csv", str(out_csv), "--by", "ana"]) == 0
    )
    rep = json.loads(capsys.readouterr().out)
    assert rep["table"][0]["Fact"] == 1.5 and rep["agreement"]["Fact"]["percent"] == 0.0
    assert len(list(csv.DictReader(out_csv.read_text().splitlines()))) == 9  # zed scored one item
    assert (
        main(["--db", db, "audit", "score", str(created["id"]), "--as", "ana", "--from", str(tmp_path / "ana.csv")])
        == 1
    )
    assert "seen the round's report" in capsys.readouterr().err
    assert main(["--db", db, "audit", "list"]) == 0
    assert "ana 4/4" in capsys.readouterr().out
    from ftamem_core.governance.auth import access_log

    assert any(r["detail"] == f"command line: audit report {created['id']}" for r in access_log(store, "c1"))


# The Audit page -------------------------------------------------------------------------------


from test_pages import app, built, open_page  # noqa: E402,F401 (app is a fixture)


def _audit_page(db, name: str | None = "Ana"):
    at = open_page("pages/audit.py")
    if name is not None:
        at.sidebar.text_input[0].input(name).run()
    return at


def test_audit_page_draws_scores_blind_and_reports(app):
    store = built(app)
    at = _audit_page(app)
    assert any("No audit round yet" in i.value for i in at.info)
    at.number_input[0].set_value(3).run()
    at.number_input[1].set_value(1).run()
    at.text_input(key="audit_seed").input("5").run()
    next(b for b in at.button if b.label == "Draw the round").click().run()
    assert not at.exception, at.exception
    (r,) = audit.list_rounds(store)
    assert r["seed"] == 5 and r["cases"] == ["sample-daniel"]
    first = audit.next_item(store, r["id"], "Ana")
    kind = audit.get_item(store, first)["kind"]
    for radio in at.radio:
        if radio.key and radio.key.startswith(f"audit-{first}-"):
            radio.set_value(2)
    at.text_area(key=f"audit-{first}-comment").input("Zq-ana-note")
    next(b for b in at.button if b.label == "Save score").click().run()
    assert not at.exception, at.exception
    assert audit.progress(store, r["id"])["annotators"] == {"Ana": 1}
    assert audit.item_view(store, first, "Ana")["own_score"][audit.rounds.CRITERIA[kind][0]] == 2
    assert at.selectbox(key=f"audit_item_{r['id']}").value != first  # moved on to the next unscored item

    # Ben opens the same item: none of Ana's scores or words anywhere on his page
    ben = _audit_page(app, "Ben")
    ben.selectbox(key=f"audit_item_{r['id']}").set_value(first).run()
    page_text = json.dumps(
        [str(e.value) for e in ben.main if hasattr(e, "value")] + [str(getattr(e, "body", "")) for e in ben.main]
    )
    assert "Zq-ana-note" not in page_text and "Ana 1" in page_text  # progress names, scores do not
    assert all(radio.value is None for radio in ben.radio if radio.key and radio.key.startswith(f"audit-{first}-"))

    # Ana opens the report: the table, and her scoring is closed
    next(b for b in at.button if b.label == "Open the report").click().run()
    assert not at.exception, at.exception
    assert "Ana" in audit.revealed_to(store, r["id"])
    assert at.dataframe[1].value.iloc[0]["group"] == "all"
    assert any("scoring of it is closed" in i.value for i in at.info)
    assert [b.label for b in at.get("download_button")] == ["Scores as CSV", "Report as JSON"]


def test_audit_page_asks_for_a_name_before_scoring(app):
    store = built(app)
    round_id = audit.new_round(store, ["sample-daniel"], 2, 0, seed=1)
    at = _audit_page(app, name=None)
    assert any("Type your name" in w.value for w in at.warning)
    assert not [b for b in at.button if b.label == "Save score"]
    assert audit.progress(store, round_id)["annotators"] == {}


def test_audit_page_disputes_a_unit_with_the_finding_in_its_history(app):
    store = built(app)
    round_id = audit.new_round(store, ["sample-daniel"], 2, 0, seed=1)
    item_id = audit.next_item(store, round_id, "Ana")
    unit_id = audit.get_item(store, item_id)["unit_id"]
    at = _audit_page(app)
    at.text_input(key=f"audit-why-{item_id}").input("wrong speaker").run()
    next(b for b in at.button if b.label == "Mark disputed").click().run()
    assert not at.exception, at.exception
    assert store.get_unit("sample-daniel", unit_id).disputed
    assert (
        history(store, "sample-daniel", "unit", unit_id)[-1]["reason"]
        == f"audit finding (round {round_id}, item {item_id}): wrong speaker"
    )
    delete = next(b for b in at.button if b.label == "Delete unit")
    assert delete.disabled  # a reason and the confirmation box first


def test_the_command_line_scores_interactively_in_a_terminal_and_stops_on_q(tmp_path, capsys, monkeypatch):
    db = str(tmp_path / "m.db")
    store = Store(db)
    seeded_case(store, "c1")
    round_id = audit.new_round(store, ["c1"], n_units=2, n_pairs=1, seed=3)
    order = audit.items(store, round_id)
    answers = []
    for item in order[:2]:
        answers += ["2", "7", "1", "0"] if item["kind"] == "unit" else ["1"]  # 7 is asked again
        answers.append("first pass")
    answers.append("q")
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt="": answers.pop(0))
    assert main(["--db", db, "audit", "score", str(round_id), "--as", "Ana"]) == 0
    out = capsys.readouterr().out
    assert "=== item 1 of 3" in out and "type 0, 1 or 2" in out and "Ana: 2 of 3 items scored" in out
    assert answers == []
    view = audit.item_view(store, order[0]["id"], "Ana")["own_score"]
    assert view["comment"] == "first pass"
    assert (view["fact"], view["time"], view["affect"]) == ((2, 1, 0) if order[0]["kind"] == "unit" else (None,) * 3)
    assert audit.next_item(store, round_id, "Ana") == order[2]["id"]


def test_audit_page_survives_a_round_whose_case_was_erased(app):
    store = built(app)
    audit.new_round(store, ["sample-daniel"], 2, 0, seed=1)
    privacy.erase_case(store, "sample-daniel", "Dr. Lee", "asked")
    at = _audit_page(app)
    assert not at.exception, at.exception
    assert any("no items left" in i.value for i in at.info)
