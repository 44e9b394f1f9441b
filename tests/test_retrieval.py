"""Cue score, thresholding, expansion, packet sections and every ablation switch."""

import re

import numpy as np
import pytest

from ftamem_core.config import PRESETS, Ablations, load_settings
from ftamem_core.retrieval.inference import ask
from ftamem_core.llm.scripted import ScriptedLLM
from ftamem_core.models import Link, Turn
from ftamem_core.retrieval.packet import (
    HEADINGS,
    MemoryPacket,
    approx_tokens,
    build_packet,
    expand,
    render,
    render_unit,
)
from ftamem_core.retrieval.ranking import Cues, heuristic_cues, score_candidates

from conftest import consented, make_doc, make_unit
from scripted import HashEmbedder

SAID = re.compile(r"said \d{1,2} [A-Z][a-z]+ \d{4}")  # a unit's day as the packet writes it

EMB = HashEmbedder()
FULL = Ablations()


@pytest.fixture
def memory(store):
    """Six units in a two-session case, with links around unit 'shifts'."""
    store.ingest([make_doc("c1", sessions=2, turns=6)])
    consented(store, "c1")
    s1, s2 = store.sessions("c1")
    specs = [
        ("Maya was moved to night shifts by her manager", 0, 1, s1, "event", "2025-02-16", ["Maya"], "exhausted"),
        ("Maya sleeps four hours a day", 2, 3, s1, "current_state", "unknown", ["Maya"], "tired"),
        (
            "Omar suggested blackout curtains to Maya",
            4,
            5,
            s1,
            "support_interaction",
            "unknown",
            ["Maya", "Omar"],
            "hopeful",
        ),
        ("Maya bought blackout curtains and sleeps six hours", 6, 7, s2, "event", "2025-03-10", ["Maya"], "relieved"),
        (
            "Maya argued with her sister Lena about their father",
            8,
            9,
            s2,
            "relationship_event",
            "2025-03-14",
            ["Maya", "Lena"],
            "angry",
        ),
        (
            "Maya plans to ask Lena for help with the night shifts",
            10,
            11,
            s2,
            "homework_or_plan",
            "unknown",
            ["Maya", "Lena"],
            "unknown",
        ),
    ]
    units = []
    for text, a, b, sess, ctype, when, who, feel in specs:
        u = make_unit("c1", text, a, b, session_id=sess.id)
        u.fact.content_type, u.time.event_time, u.fact.participants = ctype, when, who
        u.affect.emotion_or_state, u.time.dialogue_time = feel, sess.time
        if ctype == "homework_or_plan":
            u.affect.intention_or_plan, u.affect.relation_cues = "ask Lena for help", "sister may help"
        units.append(u)
    ids = store.add_units("c1", units, EMB.encode([u.fact.text for u in units]))
    shifts, sleep, omar, curtains, lena, plan = ids
    store.add_links(
        "c1",
        [
            Link(source=curtains, target=omar, relation="followup_of", confidence="high"),
            Link(source=curtains, target=sleep, relation="updates", confidence="high"),
            Link(source=plan, target=shifts, relation="followup_of", confidence="medium"),
            Link(source=lena, target=shifts, relation="supports", confidence="high"),
        ],
    )
    return store, dict(zip(["shifts", "sleep", "omar", "curtains", "lena", "plan"], ids))


def scored(store, query, cues, ablations=FULL, k=10, tau=0.0, lam=0.8):
    return score_candidates(
        store, "c1", EMB.encode([query])[0], cues, k=k, tau=tau, lam=lam, pool=50, ablations=ablations
    )


def row(result, uid):
    return next(r for r in result.rows() if r["id"] == uid)


def test_cue_components(memory):
    store, ids = memory
    cues = Cues(people=["Lena"], times=["2025-03"], content_types=["relationship_event"], affect_terms=["angry"])
    r = scored(store, "Maya and Lena", cues)
    lena = row(r, ids["lena"])
    assert (lena["time"], lena["type"], lena["people"], lena["affect"], lena["cue"]) == (1.0, 1.0, 1.0, 1.0, 1.0)
    shifts = row(r, ids["shifts"])
    assert (shifts["time"], shifts["type"], shifts["people"], shifts["affect"]) == (
        0.5,
        0.0,
        0.0,
        0.0,
    )  # Feb 16 is near March
    plan = row(r, ids["plan"])
    assert plan["time"] == 1.0  # unknown event time: the day it was said (session 2, March) counts
    assert abs(lena["R"] - (0.8 * lena["s_emb"] + 0.2 * 1.0)) < 1e-3


def test_no_cues_means_embedding_only_and_components_are_absent(memory):
    store, ids = memory
    r = scored(store, "night shifts", Cues())
    assert all(x["cue"] == 0 for x in r.rows()) and "time" not in r.rows()[0]
    assert r.kept_ids()[0] == ids["shifts"]


def test_threshold_and_top_k(memory):
    store, ids = memory
    r = scored(store, "Maya night shifts", Cues(), tau=0.0, k=2)
    rows = r.rows()
    assert len(r.kept_ids()) == 2 and r.kept_ids() == [x["id"] for x in rows[:2]]
    assert [x["reason"] for x in rows[2:]] == ["beyond top K=2"] * (len(rows) - 2)
    r = scored(store, "Maya night shifts", Cues(), tau=0.3, k=10)
    rows = r.rows()
    assert all(x["R"] >= 0.3 for x in rows if x["kept"]) and any(x["kept"] for x in rows)
    assert all(x["reason"].startswith("R ") for x in rows if not x["kept"]) and not all(x["kept"] for x in rows)
    assert scored(store, "Maya", Cues(), tau=0.99).kept_ids() == []


def test_expansion_order_dedup_and_budget(memory):
    store, ids = memory
    # shifts is updated/followed by 'plan' (followup_of, medium) and supported by 'lena' (high):
    # follow-ups of the primary come first, whatever their confidence.
    (n,) = expand(store, "c1", [ids["shifts"]], per_unit=1)
    assert n.unit.id == ids["plan"] and n.relation == f"followup_of m{ids['shifts']}"
    both = expand(store, "c1", [ids["shifts"]], per_unit=2)
    assert [x.unit.id for x in both] == [ids["lena"], ids["plan"]]  # then ordered by time
    # omar and sleep both lead to 'curtains': it appears once; a primary is never a neighbour
    shared = expand(store, "c1", [ids["omar"], ids["sleep"]], per_unit=1)
    assert [x.unit.id for x in shared] == [ids["curtains"]]
    assert [x.unit.id for x in expand(store, "c1", [ids["omar"], ids["curtains"]], per_unit=3)] == [ids["sleep"]]
    assert expand(store, "c1", [ids["shifts"]], per_unit=0) == []


def test_packet_sections(memory):
    store, ids = memory
    from ftamem_core.models import SemanticEntry

    store.save_semantic(
        "c1",
        [
            SemanticEntry(kind="person", text="Lena is Maya's sister.", source_unit_ids=[ids["lena"]]),
            SemanticEntry(kind="preference", text="Maya likes running.", source_unit_ids=[ids["omar"]]),
        ],
    )
    packet = build_packet(store, "c1", [ids["shifts"]], 2, FULL, 6)
    assert [u.id for u in packet.primary] == [ids["shifts"]]
    assert {n.unit.id for n in packet.neighbours} == {ids["lena"], ids["plan"]}
    assert [t.idx for t in packet.sources[ids["shifts"]]] == [0, 1]
    assert [t.idx for t in packet.sources[ids["plan"]]] == [10, 11]
    assert [e.text for e in packet.semantic] == ["Lena is Maya's sister."]  # only entries citing packet units
    text = render(packet, FULL).text
    for heading in ("## Primary units", "## Linked units", "## Source turns", "## Notes"):
        assert heading in text
    assert text.index(f"[m{ids['shifts']}]") < text.index("## Linked units") < text.index(f"[m{ids['plan']}]")


def answer_llm(rewrite=None):
    rewrite = rewrite or {
        "query": "Maya night shifts",
        "people": ["Maya"],
        "time_expressions": ["in February 2025"],
        "content_types": ["event"],
        "affect_terms": ["exhausted"],
    }

    def reply(stage, messages):
        return rewrite if stage == "rewrite" else {"answer": "February 2025", "cited_unit_ids": []}

    return ScriptedLLM([reply] * 4)


def run(memory, preset, **retrieval):
    store, ids = memory
    llm = answer_llm()
    trace = ask(
        store,
        "c1",
        "When did Maya start night shifts?",
        llm,
        EMB,
        load_settings(environ={}, retrieval={"tau": 0.0, "top_k": 2, **retrieval}),
        ablations=PRESETS[preset],
    )
    return trace, llm


def test_full_pipeline_trace(memory):
    trace, llm = run(memory, "full")
    d = trace.as_dict()
    assert [s for s, _ in llm.prompts] == ["rewrite", "answer"]
    assert d["query"] == "Maya night shifts" and d["cues"]["times"] == ["2025-02"]
    assert d["kept_ids"] and d["packet"]["tokens"] > 0 and d["answer"] == "February 2025"
    assert "## Primary units" in llm.prompts[1][1][1]["content"]
    assert {"rewrite", "retrieval", "answer"} <= set(d["seconds"])


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_each_ablation_changes_what_it_should_and_nothing_else(memory, preset):
    full, _ = run(memory, "full")
    trace, llm = run(memory, preset)
    stages = [s for s, _ in llm.prompts]
    text = trace.packet_text
    same_retrieval = trace.kept_ids == full.kept_ids
    if preset == "full":
        assert trace.as_dict()["packet"] == full.as_dict()["packet"]
    elif preset == "no_rewrite":
        assert stages == ["answer"] and trace.query == "When did Maya start night shifts?"
        assert trace.cues.people == ["Maya"]  # read off the question
    elif preset == "plain_embedding":
        assert trace.settings["lam"] == 1.0 and all(abs(c["R"] - c["s_emb"]) < 1e-4 for c in trace.candidates)
        assert text.count("## ") == full.packet_text.count("## ")
    elif preset == "flat_context":
        assert same_retrieval and "## " not in text and "[m" in text
    elif preset == "no_auxiliary":
        assert same_retrieval and trace.packet.semantic == [] and trace.packet.support == []
    elif preset == "no_time_fields":
        assert "time" not in trace.candidates[0] and not SAID.search(text) and "happened" not in text
        assert "feeling:" in text
    elif preset == "no_affect_fields":
        assert "affect" not in trace.candidates[0] and "feeling:" not in text and SAID.search(text)
    elif preset == "no_links":
        assert same_retrieval and trace.packet.neighbours == [] and full.packet.neighbours
    elif preset == "fact_only":
        assert "feeling:" not in text and not SAID.search(text) and "(type" not in text
    elif preset == "question_only":
        assert stages == ["answer"] and text == "(no memory)" and trace.kept_ids == []
    if preset in ("flat_context", "no_auxiliary", "no_links"):
        assert [c["R"] for c in trace.candidates] == [c["R"] for c in full.candidates]


def test_citations_are_limited_to_packet_units(memory):
    store, ids = memory
    bad = ScriptedLLM(
        [{"query": "Maya shifts", "people": [], "time_expressions": [], "content_types": [], "affect_terms": []}]
        + [{"answer": "x", "cited_unit_ids": ["m999"]}] * 3
    )
    from ftamem_core.llm.base import LLMError

    with pytest.raises(LLMError, match="^answer:"):
        ask(store, "c1", "q?", bad, EMB, load_settings(environ={}, retrieval={"tau": 0.0}))


def test_answer_max_citations_bounds_the_cited_list(memory):
    store, ids = memory
    rewrite = {"query": "Maya shifts", "people": [], "time_expressions": [], "content_types": [], "affect_terms": []}
    settings = load_settings(environ={}, retrieval={"tau": 0.0, "top_k": 3}, answer={"answer_max_citations": 2})
    shown = ask(store, "c1", "q?", answer_llm(rewrite), EMB, settings).shown_unit_ids
    assert len(shown) >= 3
    three = {"answer": "x", "cited_unit_ids": [f"m{i}" for i in shown[:3]]}
    from ftamem_core.llm.base import LLMError

    with pytest.raises(LLMError, match="^answer:"):
        ask(store, "c1", "q?", ScriptedLLM([rewrite] + [three] * 3), EMB, settings)
    trace = ask(
        store,
        "c1",
        "q?",
        ScriptedLLM([rewrite, three]),
        EMB,
        settings.with_overrides(answer={"answer_max_citations": 3}),
    )
    assert trace.cited_unit_ids == shown[:3]


def test_heuristic_cues():
    cues = heuristic_cues("When did Maya argue with Lena last spring?", "2025-10-20")
    assert cues.people == ["Maya", "Lena"] and cues.times == ["2025-03-01/2025-05-31"]


def test_empty_case_answers_from_nothing(store):
    store.ingest([make_doc("c1")])
    consented(store, "c1")
    trace = ask(store, "c1", "Anything?", answer_llm(), EMB, load_settings(environ={}))
    assert trace.kept_ids == [] and "(none found)" in trace.packet_text


def test_k_follows_the_dataset_and_the_trace_says_why(memory):
    store, _ = memory
    settings = load_settings(environ={}, retrieval={"tau": 0.0, "top_k": 2, "top_k_locomo": 4})
    trace = ask(store, "c1", "When did Maya start night shifts?", answer_llm(), EMB, settings)
    assert trace.settings["k"] == 2 and "top_k" in trace.settings["k_reason"] and len(trace.kept_ids) == 2
    assert trace.settings["profile"] == "small-model"  # the trace names the method that ran
    store.conn.execute("UPDATE cases SET source_format = 'locomo' WHERE id = 'c1'")
    trace = ask(store, "c1", "When did Maya start night shifts?", answer_llm(), EMB, settings)
    assert trace.settings["k"] == 4 and "LoCoMo" in trace.settings["k_reason"] and len(trace.kept_ids) == 4
    trace = ask(store, "c1", "When did Maya start night shifts?", answer_llm(), EMB, settings, k=3)
    assert trace.settings["k"] == 3 and len(trace.kept_ids) == 3


def test_ablations_in_the_settings_act_without_a_preset(memory):
    store, _ = memory
    settings = load_settings(
        environ={}, ablations={"no_links": True, "no_rewrite": True}, retrieval={"tau": 0.0, "top_k": 2}
    )
    llm = answer_llm()
    trace = ask(store, "c1", "When did Maya start night shifts?", llm, EMB, settings)
    assert [s for s, _ in llm.prompts] == ["answer"] and trace.packet.neighbours == []
    assert trace.settings["ablations"] == {"no_rewrite": True, "no_links": True}


def test_a_unit_beyond_the_first_hits_is_scored_while_its_cues_could_still_win(memory):
    store, ids = memory
    cues = Cues(people=["Lena"], content_types=["relationship_event"])
    query = EMB.encode(["blackout curtains"])[0]
    scored = score_candidates(store, "c1", query, cues, k=1, tau=0.0, lam=0.3, pool=1, ablations=FULL)
    # the embedding's top hit is another unit; Eq. 9 over the whole memory: the cues win
    assert scored.kept_ids() == [ids["lena"]] and len(scored.ids) > 1


def test_ranking_is_what_scoring_every_unit_gives_and_scores_fewer_in_a_large_case(store):
    """The bound that stops scoring (c is at most 1) never changes which units are kept or their
    order: random cases, cues, K, tau, lambda and units left out (disputed, archived, open)
    against scoring all units at once."""
    from ftamem_core.storage.synthetic import NAMES, fill, synthetic_vectors
    from ftamem_core.storage.vectors import DIM, normalise

    rng = np.random.default_rng(7)
    centres = normalise(rng.normal(size=(40, DIM)).astype(np.float32))
    fill(store, "big", 3000, rng, centres)
    with store.transaction() as conn:  # some units a person disputed or archived, some left open
        conn.execute("UPDATE units SET disputed = 1 WHERE id % 3 = 0")
        conn.execute("UPDATE units SET lifecycle_status = 'archived' WHERE id % 5 = 0")
        conn.execute("UPDATE units SET construction_status = 'partial' WHERE id % 7 = 0")
    pruned = []
    for trial in range(80):
        query = synthetic_vectors(1, rng, centres)[0]
        cues = Cues(
            people=list(rng.choice(NAMES, size=int(rng.integers(0, 3)), replace=False)),
            content_types=["event"] if trial % 2 else [],
            times=["2023-05"] if trial % 3 == 0 else [],
            affect_terms=["tired"] if trial % 4 == 0 else [],
        )
        kw = dict(
            k=int(rng.choice([1, 5, 25])),
            tau=float(rng.choice([-1.0, 0.0, 0.35, 0.6])),
            lam=float(rng.choice([0.8, 0.5, 1.0, 0.0])),
            ablations=Ablations(plain_embedding=bool(trial % 5 == 0)),
            open_partials=bool(trial % 2),
            archived=bool(trial % 3 == 1),
        )
        bounded = score_candidates(store, "big", query, cues, pool=10, **kw)
        every = score_candidates(store, "big", query, cues, pool=3000, **kw)
        assert len(every.ids) == 3000
        assert bounded.kept_ids() == every.kept_ids()
        by_id = dict(zip(every.ids.tolist(), every.score.tolist()))
        assert all(abs(by_id[int(i)] - r) < 1e-9 for i, r in zip(bounded.ids, bounded.score))
        pruned.append(len(bounded.ids) < 3000)
    assert sum(pruned) >= 30  # mostly far fewer than all are scored
    # K of 0 keeps nothing (and does not fail on the empty kept set)
    assert score_candidates(store, "big", query, cues, pool=10, **{**kw, "k": 0}).kept_ids() == []


def test_units_tied_on_r_and_s_emb_are_kept_by_id_however_many_hits_were_scored(store):
    """Identical vectors come back from FAISS in no fixed order; the kept ones do not depend on it."""
    store.ingest([make_doc("c1")])
    vector = EMB.encode(["the same words"])[0]
    ids = store.add_units("c1", [make_unit("c1", f"the same words {i}") for i in range(30)], np.stack([vector] * 30))
    kw = dict(k=5, tau=0.0, lam=0.8, ablations=FULL)
    for pool in (1, 7, 30):
        assert score_candidates(store, "c1", vector, Cues(), pool=pool, **kw).kept_ids() == sorted(ids)[:5]


def test_open_partial_units_are_retrieved_flagged_only_with_their_setting(memory):
    store, ids = memory
    s1 = store.sessions("c1")[0]
    (pid,) = store.add_units(
        "c1",
        [make_unit("c1", "Maya may see a sleep doctor", 2, 3, status="partial", session_id=s1.id)],
        EMB.encode(["Maya may see a sleep doctor"]),
    )
    query = EMB.encode(["sleep doctor"])[0]
    kw = dict(k=10, tau=0.0, lam=0.8, pool=50, ablations=FULL)
    assert pid in score_candidates(store, "c1", query, Cues(), open_partials=True, **kw).kept_ids()
    closed = score_candidates(store, "c1", query, Cues(), open_partials=False, **kw)
    assert pid not in closed.kept_ids() and row(closed, pid)["reason"] == "partial unit"
    text = render(build_packet(store, "c1", [pid], 0, FULL, 0), FULL).text
    assert "(partial: underspecified)" in text


def test_packet_budget_keeps_the_best_units_and_only_turns_that_add_words(memory):
    store, ids = memory
    ranked = [ids["curtains"], ids["shifts"], ids["lena"], ids["plan"], ids["sleep"], ids["omar"]]
    packet = build_packet(store, "c1", ranked, 0, FULL, 6)
    full = render(packet, FULL)
    assert full.unit_ids == ranked
    for budget in (40, 80, 160):
        cut = render(packet, FULL, budget)
        assert cut.tokens <= budget and len(cut.text) // 4 <= budget + 5
        assert cut.unit_ids == [i for i in ranked if i in cut.unit_ids]  # in rank order
        # a unit is passed over only when its line does not fit in what is left
        left = budget - cut.tokens
        lines = {u.id: render_unit(u, FULL) for u in packet.primary}
        assert all(approx_tokens(lines[i]) + 1 > left for i in ranked if i not in cut.unit_ids)
    assert len(render(packet, FULL, 40).unit_ids) < len(render(packet, FULL, 160).unit_ids)
    # a turn whose words the unit line already has is not repeated
    from ftamem_core.retrieval.packet import MemoryPacket

    u = store.get_unit("c1", ids["shifts"])
    echo = Turn(idx=0, speaker="A", text="Maya was moved to night shifts by her manager")
    more = Turn(idx=1, speaker="B", text="Since February, twelve-hour rotations")
    shown = render(MemoryPacket([u], [], {u.id: [echo, more]}), FULL)
    assert shown.turn_ids == [1] and "twelve-hour" in shown.text


def test_packet_budget_passes_over_a_unit_that_does_not_fit_for_shorter_ones_below(memory):
    store, ids = memory
    top = store.get_unit("c1", ids["curtains"])
    long = top.model_copy(update={"fact": top.fact.model_copy(update={"text": "Maya said a lot. " * 40})})
    short = store.get_unit("c1", ids["shifts"])
    packet = MemoryPacket([long, short], [], {})
    budget = approx_tokens(HEADINGS["primary"]) + 1 + approx_tokens(render_unit(short, FULL)) + 1
    shown = render(packet, FULL, budget)
    assert shown.unit_ids == [short.id] and "Maya said a lot" not in shown.text
    assert render(packet, FULL, 2000).unit_ids == [long.id, short.id]


def test_a_packet_within_a_budget_holds_its_headings_in_it(memory):
    from ftamem_core.models import SemanticEntry
    from ftamem_core.retrieval.packet import Neighbour

    store, ids = memory
    units = store.units("c1")
    turns = {u.id: store.turns("c1")[u.evidence.start : u.evidence.end + 1] for u in units}
    note = SemanticEntry(case_id="c1", kind="person", text="Lena is Maya's sister.", source_unit_ids=[units[0].id])
    packet = MemoryPacket(units[:2], [Neighbour(units[2], units[0].id, "updates m1")], turns, semantic=[note])
    full = render(packet, FULL)
    assert "## Linked units" in full.text and "## Notes" in full.text
    for budget in range(10, approx_tokens(full.text) + 20, 3):
        shown = render(packet, FULL, budget)
        assert approx_tokens(shown.text) <= max(budget, approx_tokens(HEADINGS["primary"]))
    # a budget that holds one unit line and only the primary heading shows that unit
    one = approx_tokens(HEADINGS["primary"]) + 1 + approx_tokens(render_unit(units[0], FULL)) + 1
    assert render(packet, FULL, one).unit_ids == [units[0].id]


def test_lines_said_on_one_day_sit_under_one_date_line_per_section():
    from ftamem_core.models import TimeAnchor

    a, b, c = (make_unit("c1", f"Noor {w} the shed.", i, i) for i, w in ((2, "painted"), (3, "cleaned"), (9, "sold")))
    for u, uid, day in ((a, 1, "2023-04-16"), (b, 2, "2023-04-16"), (c, 3, "2023-05-02")):
        u.id, u.time = uid, TimeAnchor(dialogue_time=day)
    said = {2: "2023-04-16T10:00:00", 3: "2023-04-16T10:00:00", 9: "2023-05-02T09:00:00"}
    sources = {
        u.id: [
            Turn(
                idx=u.evidence.start,
                speaker="Noor",
                text=f"Busy day {u.id}, lots of dust",
                timestamp=said[u.evidence.start],
            )
        ]
        for u in (a, b, c)
    }
    text = render(MemoryPacket([c, a, b], [], sources), FULL).text
    primary, turns = text.split("## Source turns")
    assert primary.count("### said 16 April 2023") == 1 and primary.count("### said 2 May 2023") == 1
    assert (
        primary.index("### said 16 April 2023")
        < primary.index("[m1]")
        < primary.index("[m2]")
        < primary.index("### said 2 May 2023")
        < primary.index("[m3]")
    )
    assert "; said " not in text and "(16 April 2023)" not in text  # no line repeats its day
    assert turns.count("### said 16 April 2023") == 1 and "  [9] Noor: Busy day 3" in turns
    # the flat ablation and no_time_fields keep no date lines; flat keeps each line's own date
    assert "###" not in render(MemoryPacket([a], [], sources), Ablations(flat_context=True)).text
    assert "said 16 April 2023" in render(MemoryPacket([a], [], sources), Ablations(flat_context=True)).text
    assert "said" not in render(MemoryPacket([a], [], sources), Ablations(no_time_fields=True)).text


ABSENT = {  # what each ablation's packet must not contain
    "no_time_fields": ["said ", "happened", "March 2025"],
    "no_affect_fields": ["feeling:", "intention:", "relations:"],
    "fact_only": [
        "## Source turns",
        "## Other turns",
        "## Linked units",
        "(event",
        "turns ",
        "feeling:",
        "said ",
        "linked:",
        "Lena is Maya's sister",
    ],
    "no_links": ["## Linked units", "linked:"],
    "no_auxiliary": ["## Notes", "Lena is Maya's sister"],
    "question_only": ["[m", "## Other turns"],
}


@pytest.mark.parametrize("preset", sorted(ABSENT))
def test_each_ablations_packet_lacks_what_it_removes(memory, preset):
    store, ids = memory
    from ftamem_core.models import SemanticEntry

    store.save_semantic(
        "c1", [SemanticEntry(kind="person", text="Lena is Maya's sister.", source_unit_ids=[ids["lena"]])]
    )
    full, _ = run(memory, "full")
    trace, _ = run(memory, preset)
    for needle in ABSENT[preset]:
        assert needle in full.packet_text, needle  # the full packet has it, so its absence means something
        assert needle not in trace.packet_text, needle


def test_auxiliary_memory_is_chosen_by_relevance_to_the_query(memory):
    store, ids = memory
    from ftamem_core.models import SemanticEntry

    store.save_semantic(
        "c1",
        [
            SemanticEntry(kind="preference", text="Maya likes running on Sundays.", source_unit_ids=[ids["shifts"]]),
            SemanticEntry(
                kind="person",
                text="Omar is a coworker who knows about blackout curtains.",
                source_unit_ids=[ids["omar"]],
            ),
        ],
    )
    query = EMB.encode(["blackout curtains"])[0]
    packet = build_packet(store, "c1", [ids["shifts"]], 0, FULL, 1, lambda texts: EMB.encode(texts) @ query)
    assert [e.text for e in packet.semantic] == ["Omar is a coworker who knows about blackout curtains."]


def test_r_is_the_papers_mix_of_s_emb_and_the_cue_score(memory):
    store, ids = memory
    query = EMB.encode(["night shifts"])[0]
    kw = dict(k=10, tau=0.0, lam=0.8, pool=50, ablations=FULL)
    scored = score_candidates(store, "c1", query, Cues(people=["Lena"]), **kw)
    rows = scored.rows()
    assert {"id", "s_emb", "cue", "R", "kept", "reason"} <= rows[0].keys() and "s_src" not in rows[0]
    assert all(abs(r["R"] - (0.8 * r["s_emb"] + 0.2 * r["cue"])) < 1e-3 for r in rows)
    assert scored.similarity() == {r["id"]: pytest.approx(r["s_emb"], abs=1e-4) for r in rows if r["kept"]}


def test_turn_similarity_sits_at_each_turns_index_and_an_erased_turns_gap_is_zero():
    from ftamem_core.retrieval.ranking import turn_similarity

    kept = [Turn(idx=0, text="a"), Turn(idx=2, text="b")]
    vectors = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert turn_similarity(kept, vectors, np.array([0.2, 0.9])).tolist() == [0.2, 0.0, 0.9]
    assert turn_similarity([], np.zeros((0, 2)), np.array([1.0, 0.0])).tolist() == []


def test_a_reply_is_also_embedded_after_the_question_the_other_speaker_asked_just_before_it():
    from ftamem_core.retrieval.ranking import reply_texts

    turns = [
        Turn(idx=0, session_id=1, speaker="Mel", text="Camping next month. Any fun plans for the summer? Tell me."),
        Turn(idx=1, session_id=1, speaker="Cat", text="Researching adoption agencies."),
        Turn(idx=2, session_id=1, speaker="Cat", text="Is that odd?"),  # the same speaker's question
        Turn(idx=3, session_id=1, speaker="Cat", text="It is a dream."),
        Turn(idx=4, session_id=2, speaker="Mel", text="What a day!"),  # a new session: no reply
        Turn(idx=5, session_id=2, speaker="Cat", text="Indeed."),
        Turn(idx=6, session_id=2, speaker="Mel", text="Are you well?"),
        Turn(idx=7, session_id=2, speaker="Cat", text="Yes."),
    ]
    lines = [f"L{t.idx}" for t in turns]
    assert reply_texts(turns, lines) == [
        "L0",
        "Any fun plans for the summer? L1",
        "L2",
        "L3",
        "L4",
        "L5",
        "L6",
        "Are you well? L7",
    ]


def test_reply_vectors_take_the_better_cosine_for_turn_level_rag(store):
    from ftamem_core.models import Case, CaseDocument, Session, SessionDocument, Turn
    from ftamem_core.retrieval.pipeline import TurnIndex, turn_rag
    from ftamem_core.retrieval.ranking import reply_vectors, turn_similarity

    said = [
        ("Mel", "My kids are excited. Any fun plans for the summer?"),
        ("Cat", "Researching adoption agencies."),
        ("Mel", "Wow, that is kind."),
        ("Cat", "Thanks, it is a dream."),
    ]
    store.ingest(
        [
            CaseDocument(
                case=Case(id="c1", name="c1"),
                sessions=[
                    SessionDocument(
                        session=Session(source_id="s0", time="2023-05-08"),
                        turns=[Turn(speaker=who, text=text, original_id=f"d{i}") for i, (who, text) in enumerate(said)],
                    )
                ],
            )
        ]
    )
    turns = store.turns("c1")
    lines = [t.text for t in turns]
    plain = EMB.encode(lines)
    replies = reply_vectors(EMB, turns, lines, plain)
    assert np.allclose(replies[[0, 2, 3]], plain[[0, 2, 3]]) and not np.allclose(replies[1], plain[1])
    query = EMB.encode(["What are Cat's plans for the summer?"])[0]
    both = turn_similarity(turns, plain, query, replies)
    assert both[1] > turn_similarity(turns, plain, query)[1] and np.allclose(
        both[[0, 2, 3]], (plain @ query)[[0, 2, 3]]
    )
    # turn-level RAG ranks turns with the replies; the turn channel reads the plain vectors
    with_replies, plain_index = TurnIndex.build(EMB, turns, replies=True), TurnIndex.build(EMB, turns, replies=False)
    assert plain_index.replies is None and with_replies.replies is not None
    assert with_replies.similarity(query)[1] > plain_index.similarity(query)[1]
    shown = turn_rag(with_replies, query, load_settings(environ={}), k=1)
    assert shown.turn_ids == [1]
