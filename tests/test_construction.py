"""The construction pipeline end to end with a scripted model and a bag-of-words embedder."""

import threading

import pytest

from ftamem_core.construction import build_events as ev
from ftamem_core.governance import consent
from ftamem_core.config import load_settings
from ftamem_core.construction.builder import BuildError, Builder
from ftamem_core.llm.base import LLMError, LLMUnavailable
from ftamem_core.llm.scripted import ScriptedLLM
from ftamem_core.models import Case, CaseDocument, Session, SessionDocument, Turn
from ftamem_core.storage.store import Store

from scripted import HashEmbedder, Pipeline, section, turn_indices, unit

# The detector's spans; scripted facts ("Fact about turns 0-3") carry no words of their turns, so
# the verbatim fallback, which copies every turn no fact carries, is on only where a test says so.
SETTINGS = load_settings(
    environ={},
    segmentation={"min_fragment_turns": 1},
    extraction={"ground_facts": False, "turns_per_unit": 3, "verbatim_fallback": False},
)


def doc(sessions=2, turns=8):
    return CaseDocument(
        case=Case(id="c1"),
        sessions=[
            SessionDocument(
                session=Session(source_id=f"s{i}", time=f"2025-03-{2 + 7 * i:02d}"),
                turns=[
                    Turn(
                        role="user" if j % 2 == 0 else "assistant",
                        speaker="Maya" if j % 2 == 0 else "Counselor",
                        text=f"Maya talks about night shifts and sleep, part {i}-{j}.",
                    )
                    for j in range(turns)
                ],
            )
            for i in range(sessions)
        ],
    )


def two_stores(tmp_path):
    """The build's store and a person's (two processes) on one file holding the consented case."""
    db = tmp_path / "m.db"
    builder_store, person = Store(db), Store(db)
    builder_store.ingest([doc()])
    consent.record(builder_store, "c1", "granted", "test", "scripted case")
    return builder_store, person


@pytest.fixture
def case(store):
    store.ingest([doc()])
    consent.record(store, "c1", "granted", "test", "scripted case")
    return store


def build(store, pipeline=None, llm=None, **kwargs):
    if not consent.granted(store, "c1"):
        consent.record(store, "c1", "granted", "test", "scripted case")
    pipeline = pipeline or Pipeline()
    events = []
    builder = Builder(
        store,
        llm or pipeline.llm(),
        HashEmbedder(),
        kwargs.pop("settings", SETTINGS),
        progress=events.append,
        stop=kwargs.pop("stop", None),
    )
    return builder.build("c1", **kwargs), events, pipeline


def dead_pid() -> int:
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def process_died(store):
    """What a killed process leaves: its build still 'running', owned by a pid that is gone."""
    store.conn.execute("UPDATE builds SET pid = ? WHERE status = 'running'", (dead_pid(),))


def state(store):
    """What a build leaves, independent of row ids."""
    units = sorted(
        (u.evidence.start, u.evidence.end, u.fact.text, u.construction_status, u.lifecycle_status)
        for u in store.units("c1", None)
    )
    by_id = {u.id: (u.evidence.start, u.fact.text) for u in store.units("c1", None)}
    links = sorted((by_id[l.source], by_id[l.target], l.relation) for l in store.links("c1"))
    segments = [(s.start, s.end, s.trigger) for s in store.segments("c1")]
    semantic = sorted((e.kind, e.text) for e in store.semantic("c1"))
    return units, links, segments, semantic


def test_full_build(case):
    report, events, pipeline = build(case)
    assert report.status == "done" and report.sessions_built == 2
    sessions = case.sessions("c1")
    for s in sessions:
        turns = [t.idx for t in case.turns("c1", session_id=s.id)]
        segs = [(g.start, g.end) for g in case.segments("c1", session_id=s.id)]
        assert [i for a, b in segs for i in range(a, b + 1)] == turns  # final segments partition the session
        units = [u for u in case.units("c1") if u.evidence.session_id == s.id]
        assert units and all(turns[0] <= u.evidence.start <= u.evidence.end <= turns[-1] for u in units)
        assert all(u.time.dialogue_time == s.time for u in units)
    assert report.units == len(case.units("c1")) == 6  # one per 3-turn fragment: 3 + 3
    assert case.index("c1").ids() == {u.id for u in case.units("c1")}
    assert report.links > 0 and all(l.source > l.target for l in case.links("c1"))
    assert case.semantic("c1") and case.support("c1")
    kinds = [type(e) for e in events]
    assert kinds[0] is ev.BuildStarted and kinds[-1] is ev.BuildDone
    assert {ev.SessionStarted, ev.WindowSegmented, ev.UnitFinalised, ev.LinkAdded, ev.SessionDone} <= set(kinds)
    assert events[-1].status == "done" and events[-1].units == report.units
    cost = case.cost("c1")
    assert {s["stage"] for s in cost["stages"]} == {"segmentation", "extraction", "linking", "longitudinal"}
    assert cost["calls"] == len(pipeline.calls) and cost["turns"] == 16 and cost["units"] == 6
    assert case.list_cases()[0]["last_build_at"] is not None
    assert case.builds("c1")[-1].status == "done"


def test_second_build_skips_finished_sessions(case):
    first = state(case) if build(case) else None
    report, events, pipeline = build(case)
    assert (report.sessions_built, report.sessions_skipped) == (0, 2) and pipeline.calls == []
    assert state(case) == first


def test_carry_over_and_fusion(case):
    pipeline = Pipeline(seg_size=4)

    def extraction(messages):
        idx = turn_indices([{"content": section(messages, "Fragment turns:")}])
        carried = section(messages, "Open units:").split("Fragment turns:")[0]
        if idx[0] == 0:
            return {
                "memory_units": [
                    unit("Maya started night shifts.", 0, 2, status="partial"),
                    unit("Maya's coworker is Omar.", 3, 3),
                ]
            }
        if idx[0] == 4:
            assert "Maya started night shifts." in carried  # the partial is construction context
            return {"memory_units": [unit("The shifts run 7pm to 7am.", 4, 6, completes="p1")]}
        if idx[0] == 8:
            return {"memory_units": [unit("Maya may try curtains.", 8, 9, status="partial")]}
        return {"memory_units": [unit(f"Turns {idx[0]}-{idx[-1]} are about sleep.", idx[0], idx[-1])]}

    pipeline.extraction = extraction
    report, events, _ = build(case, pipeline)
    assert report.fusions == 1
    fusion = next(e for e in events if isinstance(e, ev.Fused))
    assert fusion.fused == "Maya started night shifts. The shifts run 7pm to 7am."
    texts = {u.fact.text: u for u in case.units("c1", None)}
    fused = texts["Maya started night shifts. The shifts run 7pm to 7am."]
    assert (fused.evidence.start, fused.evidence.end, fused.construction_status) == (0, 6, "final")
    assert fused.origin == "fused" and texts["Maya's coworker is Omar."].origin == "model"  # provenance
    assert "Maya started night shifts." not in texts and "The shifts run 7pm to 7am." not in texts  # no own id
    open_unit = texts["Maya may try curtains."]
    assert open_unit.construction_status == "partial" and report.partial_units == 1
    assert open_unit.id in case.index("c1").ids()  # open at the end of the case: retrievable, flagged
    cost = case.cost("c1")
    assert cost["partial_units"] == 1 and cost["units_per_turn"] == round((cost["units"] + 1) / cost["turns"], 3)


def test_a_partial_unit_is_carried_into_the_next_session_and_replaced_when_completed(case):
    """Eq. 4: every partial unit still open is carried, across the session boundary too."""
    pipeline = Pipeline(seg_size=4)
    seen = []

    def extraction(messages):
        idx = turn_indices([{"content": section(messages, "Fragment turns:")}])
        seen.append((idx[0], section(messages, "Open units:").split("Fragment turns:")[0]))
        if idx[0] == 4:  # the last fragment of session 0
            return {"memory_units": [unit("Maya booked a sleep clinic visit.", 4, 5, status="partial")]}
        if idx[0] == 8:  # the first of session 1
            return {"memory_units": [unit("The clinic visit is on March 12.", 8, 9, completes="p1")]}
        return {"memory_units": [unit(f"Turns {idx[0]}-{idx[-1]} are about sleep.", idx[0], idx[-1])]}

    pipeline.extraction = extraction
    first, _, _ = build(case, pipeline, settings=SETTINGS.with_overrides(extraction={"verbatim_fallback": False}))
    assert first.status == "done"
    assert "Maya booked a sleep clinic visit." in dict(seen)[8]  # carried from session 0 into session 1
    texts = {u.fact.text: u for u in case.units("c1", None)}
    fused = texts["Maya booked a sleep clinic visit. The clinic visit is on March 12."]
    assert (fused.evidence.start, fused.evidence.end, fused.construction_status) == (4, 9, "final")
    assert fused.evidence.session_id == case.sessions("c1")[1].id  # it goes with the session that completed it
    assert "Maya booked a sleep clinic visit." not in texts  # the stored partial was replaced


def test_a_failed_session_keeps_the_partial_it_would_have_replaced(case):
    pipeline = Pipeline(seg_size=4)

    def extraction(messages):
        idx = turn_indices([{"content": section(messages, "Fragment turns:")}])
        if idx[0] == 4:
            return {"memory_units": [unit("Maya booked a sleep clinic visit.", 4, 5, status="partial")]}
        if idx[0] == 8:
            return {"memory_units": [unit("The clinic visit is on March 12.", 8, 9, completes="p1")]}
        raise RuntimeError("model crashed")  # session 1's second fragment

    def crash_in_session_1(messages):
        idx = turn_indices([{"content": section(messages, "Fragment turns:")}])
        if idx[0] == 0:
            return {"memory_units": [unit("Maya works nights.", 0, 3)]}
        return extraction(messages)

    pipeline.extraction = crash_in_session_1
    with pytest.raises(Exception):
        build(case, pipeline, settings=SETTINGS.with_overrides(extraction={"verbatim_fallback": False}))
    texts = {u.fact.text: u for u in case.units("c1", None)}
    assert texts["Maya booked a sleep clinic visit."].construction_status == "partial"  # session 0 kept it
    assert not any("March 12" in t for t in texts)  # session 1 left nothing


class Killed(BaseException):
    """Stands for the process dying mid-call."""


@pytest.mark.parametrize(
    "stage, nth",
    [
        ("segmentation", 0),
        ("segmentation", 1),
        ("extraction", 0),
        ("extraction", 4),
        ("linking", 0),
        ("linking", 3),
        ("longitudinal", 0),
        ("longitudinal", 1),
    ],
)
def test_resume_after_a_kill_at_each_stage(store, stage, nth):
    store.ingest([doc()])
    build(store)
    expected = state(store)
    store.delete_case("c1")
    store.ingest([doc()])

    pipeline, seen = Pipeline(), []

    def dying(stage_name, messages):
        if stage_name == stage:
            seen.append(1)
            if len(seen) == nth + 1:
                raise Killed()
        return pipeline(stage_name, messages)

    with pytest.raises(Killed):
        build(store, llm=ScriptedLLM([dying] * 1000))
    process_died(store)
    report, _, _ = build(store)
    assert report.status == "done"
    assert state(store) == expected  # no duplicate, no missing unit, link or entry
    assert store.index("c1").ids() == {u.id for u in store.units("c1")}


def test_backend_gone_midway_interrupts_then_resumes(case):
    pipeline = Pipeline()
    calls = []

    def flaky(stage, messages):
        calls.append(stage)
        if len(calls) == 9:
            raise LLMUnavailable("extraction: cannot reach http://127.0.0.1:9/v1")
        return pipeline(stage, messages)

    with pytest.raises(LLMUnavailable):
        build(case, llm=ScriptedLLM([flaky] * 1000))
    assert case.builds("c1")[-1].status == "interrupted"
    done = case.done_sessions("c1")
    assert all(u.evidence.session_id in done for u in case.units("c1", None))  # the unfinished session is gone
    report, _, _ = build(case)
    assert report.status == "done" and report.sessions_skipped == len(done)


def test_malformed_output_fails_clearly_and_keeps_finished_sessions(case):
    pipeline = Pipeline()
    calls = []

    def broken(stage, messages):
        calls.append(stage)
        if stage == "extraction" and calls.count("extraction") > 3:
            return "{not json"
        return pipeline(stage, messages)

    with pytest.raises(LLMError, match="^extraction: no valid output after 3 attempt"):
        build(case, llm=ScriptedLLM([broken] * 1000))
    assert case.builds("c1")[-1].status == "failed"
    assert len(case.done_sessions("c1")) == 1 and len(case.units("c1")) == 3
    assert build(case)[0].status == "done"


def test_stop_keeps_finished_sessions(case):
    stop = threading.Event()
    pipeline = Pipeline()
    builder = Builder(
        case,
        pipeline.llm(),
        HashEmbedder(),
        SETTINGS,
        progress=lambda e: stop.set() if isinstance(e, ev.SessionDone) else None,
        stop=stop,
    )
    report = builder.build("c1")
    assert report.status == "stopped" and report.sessions_built == 1
    assert len(case.done_sessions("c1")) == 1
    assert {u.evidence.session_id for u in case.units("c1", None)} == set(case.done_sessions("c1"))
    assert build(case)[0].sessions_built == 1


def test_from_scratch_and_segmentation_mismatch(case):
    build(case)
    first = state(case)
    with pytest.raises(BuildError, match="built with bws segmentation"):
        build(case, segmentation="pair")
    report, _, pipeline = build(case, segmentation="pair", from_scratch=True)
    assert report.sessions_built == 2 and "segmentation" not in pipeline.calls
    assert len(case.units("c1")) == 8  # one unit per turn pair
    report, _, last = build(case, segmentation="bws", from_scratch=True)
    assert state(case) == first
    # the memory's cost is the last build's; the case's, all three
    assert case.cost("c1", memory_only=True)["calls"] == len(last.calls) < case.cost("c1")["calls"]


def test_no_linking_call_without_a_similar_neighbour(case):
    class Orthogonal(HashEmbedder):
        def __init__(self):
            self.n = 0

        def encode(self, texts):
            import numpy as np

            out = np.zeros((len(texts), self.dim), dtype=np.float32)
            for i in range(len(texts)):
                out[i, self.n] = 1.0
                self.n += 1
            return out

    pipeline = Pipeline()
    Builder(case, pipeline.llm(), Orthogonal(), SETTINGS).build("c1")
    assert "linking" not in pipeline.calls and case.links("c1") == []


@pytest.mark.parametrize(
    "segmentation, window, seg_calls, ext_calls",
    [("session", None, 0, 2), ("pair", None, 0, 8), ("fixed", 4, 4, 8), ("bws", 4, 6, 6)],
)
def test_granularity_variants_call_counts(case, segmentation, window, seg_calls, ext_calls):
    report, _, pipeline = build(case, segmentation=segmentation, window=window)
    assert pipeline.calls.count("segmentation") == seg_calls
    assert pipeline.calls.count("extraction") == ext_calls
    assert {s.method for s in case.segments("c1")} == {segmentation}


def first_turn_only(messages):
    idx = turn_indices([{"content": section(messages, "Fragment turns:")}])
    return {"memory_units": [unit(f"Maya opened with turn {idx[0]}.", idx[0], idx[0])]}


def test_without_the_fallback_uncovered_turns_stay_uncovered(case):
    pipeline = Pipeline(seg_size=4)
    pipeline.extraction = first_turn_only
    report, _, _ = build(case, pipeline, settings=SETTINGS.with_overrides(extraction={"verbatim_fallback": False}))
    assert report.units == 4
    covered = {i for u in case.units("c1") for i in range(u.evidence.start, u.evidence.end + 1)}
    assert 2 not in covered


def test_verbatim_fallback_puts_uncovered_turns_in_memory_in_their_own_words_without_a_call(case):
    pipeline = Pipeline(seg_size=4)
    pipeline.extraction = first_turn_only
    report, events, _ = build(case, pipeline, settings=SETTINGS.with_overrides(extraction={"verbatim_fallback": True}))
    # fragments [0-3] [4-7] per session: one extraction call each, none more for the copies; the
    # scripted facts ("Maya opened with turn 0.") carry no turn's words: each of her 8 turns is copied
    assert pipeline.calls.count("extraction") == 4 and report.units == 4 + 8
    said = {t.idx: t for t in case.turns("c1") if t.role == "user"}
    covered = {i for u in case.units("c1") for i in range(u.evidence.start, u.evidence.end + 1)}
    assert set(said) <= covered
    unit2 = next(u for u in case.units("c1") if (u.evidence.start, u.evidence.end) == (2, 2))
    assert unit2.fact.text == f'Maya told Counselor: "{said[2].text}"' and unit2.origin == "copied"  # nothing invented
    assert [e.turns for e in events if isinstance(e, ev.VerbatimKept)][0] == [0, 2]
    assert all(link.source != unit2.id for link in case.links("c1"))  # stored unlinked: no linking call for it
    assert case.builds("c1")[-1].settings["profile"] == "small-model"  # the build names the method that ran


def test_the_fallback_gives_the_turns_a_units_fact_does_not_carry_their_own_units(case):
    report, _, _ = build(case, settings=SETTINGS.with_overrides(extraction={"verbatim_fallback": True}))
    # the scripted facts ("Fact about turns 0-3") carry no turn's words: every person's turn gets its own
    own = [u for u in case.units("c1") if not u.fact.text.startswith("Fact about")]
    said = [t for t in case.turns("c1") if t.role == "user" and len(t.text.split()) >= 6]
    assert said and sorted(u.evidence.start for u in own) == [t.idx for t in said]
    off = Store(":memory:")
    off.ingest([doc()])
    without, _, _ = build(off, settings=SETTINGS)
    assert report.units == without.units + len(own) and not any(
        not u.fact.text.startswith("Fact about") for u in off.units("c1")
    )


def shifts_and_sleep():
    """One session whose turns tell two things: night shifts, and sleep."""
    case = doc(sessions=1)
    for j, turn in enumerate(case.sessions[0].turns):
        turn.text = (
            "Maya works night shifts at the hospital."
            if j % 4 == 0
            else "Maya sleeps badly and wakes at dawn."
            if j % 4 == 2
            else "The counselor listens."
        )
    return case


def test_a_fact_of_several_sentences_is_stored_whole_as_the_model_wrote_it(store):
    store.ingest([shifts_and_sleep()])
    told = "Maya works night shifts at the hospital. Maya sleeps badly and wakes at dawn."

    def two_sentences(messages):
        idx = turn_indices([{"content": section(messages, "Fragment turns:")}])
        status = "partial" if idx[0] == 0 else "complete"
        return {"memory_units": [unit(told, idx[0], idx[-1], status=status)]}

    pipeline = Pipeline(seg_size=4)
    pipeline.extraction = two_sentences
    build(store, pipeline)
    units = [u for u in store.units("c1", construction_status=None) if u.origin != "copied"]
    assert [u.fact.text for u in units] == [told, told] and {u.origin for u in units} == {"model"}


def test_fact_max_chars_is_the_longest_fact_the_model_may_write(store):
    store.ingest([doc(sessions=1)])
    told = "Maya talks about night shifts, sleep and part of the night " * 9  # 531 characters

    def long_fact(messages):
        idx = turn_indices([{"content": section(messages, "Fragment turns:")}])
        return {"memory_units": [unit(told.strip(), idx[0], idx[-1])]}

    pipeline = Pipeline(seg_size=4)
    pipeline.extraction = long_fact
    pipeline.longitudinal = lambda m: {"semantic": [], "support": []}  # notes keep their own 400-char bound
    build(store, pipeline, settings=SETTINGS.with_overrides(extraction={"fact_max_chars": 600}))
    assert [u.fact.text for u in store.units("c1")].count(told.strip()) == 2
    cut = Store(":memory:")
    cut.ingest([doc(sessions=1)])
    with pytest.raises(LLMError, match="does not match the schema"):
        build(cut, pipeline, settings=SETTINGS.with_overrides(extraction={"fact_max_chars": 400}))


def test_progress_bar_counts_the_builds_turns_calls_and_tokens(case):
    import io

    from ftamem_core.cli.progress import ProgressBar

    out = io.StringIO()
    bar = ProgressBar(case, "c1", stream=out)
    pipeline = Pipeline()
    report = Builder(case, pipeline.llm(), HashEmbedder(), SETTINGS, progress=bar).build("c1")
    bar.close()
    calls, tokens = case.build_usage(report.build_id)
    assert calls == len(pipeline.calls) == case.cost("c1")["calls"] and tokens == case.cost("c1")["tokens"]
    assert bar.bar.n == 16 and f"calls {calls} tokens {tokens}" in out.getvalue()
    assert case.build_usage(report.build_id + 1) == (0, 0)


def test_linking_is_one_call_per_new_unit_with_an_earlier_candidate(case):
    def two_units(messages):
        idx = turn_indices([{"content": section(messages, "Fragment turns:")}])
        return {
            "memory_units": [
                unit(f"Maya talks about night shifts and sleep {idx[0]}.", idx[0], idx[0] + 1),
                unit(f"Maya talks about sleep and night shifts again {idx[0]}.", idx[0] + 2, idx[-1]),
            ]
        }

    pipeline = Pipeline(seg_size=4)
    pipeline.extraction = two_units
    build(case, pipeline, settings=SETTINGS.with_overrides(extraction={"merge_duplicates": False}))
    # 8 units in 4 fragments: the first unit has no earlier unit to be judged against, so 7 calls
    assert pipeline.calls.count("linking") == 7
    assert len(case.links("c1")) == 7  # each new unit updates its nearest older unit


def peers_doc():
    lines = [
        ("Caroline", "I'm researching adoption agencies for my family this month."),
        ("Melanie", "Wow, that is a big step, I'm proud of you."),
        ("Caroline", "Thanks, I went to a support group meeting yesterday too."),
        ("Melanie", "How was the support group meeting?"),
    ]
    return CaseDocument(
        case=Case(id="c1"),
        sessions=[
            SessionDocument(
                session=Session(source_id="s0", time="2023-05-08"),
                turns=[Turn(role="user", speaker=s, text=t) for s, t in lines],
            )
        ],
    )


@pytest.mark.parametrize("listener", ["user", "assistant"])
def test_between_peers_a_remark_is_not_copied_and_beside_an_assistant_it_is(store, listener):
    lines = [
        ("Caroline", "user", "I'm researching adoption agencies for my family this month."),
        ("Melanie", listener, "That is a big step, and a brave one."),
        ("Caroline", "user", "Adoption is such a beautiful way to build a loving family."),
        ("Melanie", listener, "Thanks, I went to a support group meeting yesterday too."),
    ]
    doc = CaseDocument(
        case=Case(id="c1"),
        sessions=[
            SessionDocument(
                session=Session(source_id="s0", time="2023-05-08"),
                turns=[Turn(role=r, speaker=s, text=t) for s, r, t in lines],
            )
        ],
    )
    store.ingest([doc])
    pipeline = Pipeline(seg_size=4)
    pipeline.extraction = lambda m: {
        "memory_units": [unit("Caroline is researching adoption agencies for her family this month.", 0, 0)]
    }
    build(store, pipeline, settings=SETTINGS.with_overrides(extraction={"verbatim_fallback": True}))
    copied = sorted(u.evidence.end for u in store.units("c1") if u.origin == "copied")
    # peers: the remark (2) goes and Melanie's news (3) stays; a counselor's turns are never copied
    assert copied == ([3] if listener == "user" else [2])


def peers_units(store, units, doc=None, **extraction):
    """Build the peer dialogue (``doc``, one session; ``peers_doc`` by default) with one scripted
    extraction reply and these extraction settings (no verbatim units, so what the reply became is
    all there is); the final units."""
    doc = doc or peers_doc()
    store.ingest([doc])
    pipeline = Pipeline(seg_size=len(doc.sessions[0].turns))
    pipeline.extraction = lambda m: {"memory_units": units}
    build(store, pipeline, settings=SETTINGS.with_overrides(extraction={"verbatim_fallback": False, **extraction}))
    return store.units("c1")


@pytest.mark.parametrize("check", [True, False])
def test_speaker_check_acts_with_its_setting(store, check):
    (u,) = peers_units(
        store, [unit("Melanie is researching adoption agencies for her family.", 0, 1)], speaker_check=check
    )
    assert u.fact.text.startswith("Caroline" if check else "Melanie")


@pytest.mark.parametrize("check", [True, False])
def test_the_speaker_check_judges_a_merged_unit_again_over_its_wider_span(store, check):
    # The longer fact passes alone (turn 1 is Melanie's and shares none of its words); merged with
    # its near-twin over turns 0-1 it also spans Caroline's "I'm researching adoption agencies".
    units = peers_units(
        store,
        [
            unit("Melanie is researching adoption agencies for her family this month.", 1, 1),
            unit("Melanie is researching adoption agencies for her family this month", 0, 1),
        ],
        ground_facts=False,
        duplicate_cosine=0.5,
        speaker_check=check,
    )
    (u,) = units
    assert (u.evidence.start, u.evidence.end) == (0, 1)
    assert (
        u.fact.text
        == ("Caroline" if check else "Melanie") + " is researching adoption agencies for her family this month."
    )


def test_the_speaker_check_judges_a_fused_unit_over_turns_of_the_fragment_it_was_carried_from(store):
    # Fragments 0-1 and 2-3. The partial of turns 0-1 names nobody; the sentence that completes it
    # passes over turns 2-3 alone, but the fused span 0-3 holds Caroline's "I'm researching ...".
    # (conv-42, turn pairs: "Nate shared a photo" of Joanna's photo in the fragment before.)
    store.ingest([peers_doc()])
    pipeline = Pipeline(seg_size=2)

    def extraction(messages):
        if turn_indices([{"content": section(messages, "Fragment turns:")}])[0] == 0:
            return {"memory_units": [unit("They talked about a big step.", 0, 1, status="partial")]}
        return {
            "memory_units": [
                unit("Melanie is researching adoption agencies for her family this month.", 2, 3, completes="p1")
            ]
        }

    pipeline.extraction = extraction
    report, _, _ = build(
        store,
        pipeline,
        settings=SETTINGS.with_overrides(
            extraction={"verbatim_fallback": False, "ground_facts": False, "turns_per_unit": 0},
            segmentation={"min_fragment_turns": 1},
        ),
    )
    (u,) = store.units("c1")
    assert report.fusions == 1 and (u.evidence.start, u.evidence.end) == (0, 3)
    assert (
        u.fact.text
        == "They talked about a big step. Caroline is researching adoption agencies for her family this month."
    )


def _two_speaker_case(store, lines):
    store.ingest(
        [
            CaseDocument(
                case=Case(id="c1"),
                sessions=[
                    SessionDocument(
                        session=Session(source_id="s0", time="2023-05-08"),
                        turns=[Turn(role="user", speaker=s, text=t) for s, t in lines],
                    )
                ],
            )
        ]
    )


@pytest.mark.parametrize("fallback", [True, False])
def test_a_fact_no_naming_of_the_speakers_settles_is_dropped_for_the_turns_own_words(store, fallback):
    # Either way round this fact carries the other speaker's words, so each pass of the check
    # exchanges the names again (conv-42, turn pairs: "...; Nate shared a photo of a piece of cake").
    _two_speaker_case(
        store,
        [
            (
                "Ilse",
                "Who can say no to chocolate and berries? [shares a photo of a piece of cake with berries on a plate]",
            ),
            (
                "Oskar",
                "Well I also made a dairy-free chocolate cake with berries on it the other day, maybe you would like that!",
            ),
        ],
    )
    written = (
        "Ilse is allergic to chocolate and berries. Ilse asked what else brings her joy; "
        "Oskar shared a photo of a piece of cake with berries on a plate."
    )
    pipeline = Pipeline(seg_size=2)
    pipeline.extraction = lambda m: {"memory_units": [unit(written, 0, 1)]}
    _, events, _ = build(
        store,
        pipeline,
        settings=SETTINGS.with_overrides(
            extraction={
                "verbatim_fallback": fallback,
                "ground_facts": False,
                "turns_per_unit": 0,
            },
            segmentation={"min_fragment_turns": 1},
        ),
    )
    units = store.units("c1")
    assert not any("allergic" in u.fact.text for u in units)
    assert [e.fact for e in events if isinstance(e, ev.SpeakerUnresolved)] == [written]
    assert [u.fact.text for u in units] == (
        [
            'Ilse told Oskar: "[shares a photo of a piece of cake with berries on a plate]"',
            'Ilse asked "Who can say no to chocolate and berries?"; Oskar told Ilse: "Well I also made a '
            'dairy-free chocolate cake with berries on it the other day, maybe you would like that!"',
        ]
        if fallback
        else []
    )


def test_a_fused_fact_no_naming_settles_is_dropped_and_its_turns_kept_in_their_own_words(store):
    # The partial (turns 0-1) and its completion (turns 2-3) each pass the check alone; fused over
    # 0-3 the fact holds Andrew's "I'm considering getting a dog too" and cycles between its swaps.
    _two_speaker_case(
        store,
        [
            ("Audrey", "Pepper took a bit to get used to her, but now they're always together!"),
            (
                "Andrew",
                "That's great to hear! I'm considering getting a dog too, but it can be challenging finding a "
                "dog-friendly place in the city.",
            ),
            ("Audrey", "Anyway, the weather was lovely at the lake on Sunday."),
            ("Andrew", "Sounds lovely, enjoy the lake!"),
        ],
    )
    pipeline = Pipeline(seg_size=2)

    def extraction(messages):
        if turn_indices([{"content": section(messages, "Fragment turns:")}])[0] == 0:
            return {
                "memory_units": [
                    unit(
                        "Audrey says Pepper took a bit to get used to her, but now they are always together.",
                        0,
                        1,
                        status="partial",
                    )
                ]
            }
        return {
            "memory_units": [
                unit(
                    "Audrey wants to get a dog; Andrew is considering getting a dog too, but it can "
                    "be challenging finding a dog-friendly place in the city.",
                    2,
                    3,
                    completes="p1",
                )
            ]
        }

    pipeline.extraction = extraction
    report, _, _ = build(
        store,
        pipeline,
        settings=SETTINGS.with_overrides(
            extraction={"ground_facts": False, "turns_per_unit": 0, "verbatim_fallback": True},
            segmentation={"min_fragment_turns": 1},
        ),
    )
    units = store.units("c1")
    assert report.fusions == 1 and not any("wants to get a dog" in u.fact.text for u in units)
    by_turn = sorted(u.evidence.end for u in units)
    assert by_turn == [0, 1, 2]  # each substantive turn once, in its own words; turn 0 only from the drop
    (first,) = [u for u in units if u.evidence.end == 0]
    assert first.fact.text.startswith('Audrey told Andrew: "Pepper took a bit') and first.fact.participants == [
        "Audrey"
    ]


@pytest.mark.parametrize("check", [True, False])
def test_duplicate_merging_acts_with_its_setting(store, check):
    units = peers_units(
        store,
        [
            unit("Caroline went to a support group meeting yesterday.", 2, 3),
            unit("Caroline went to a support group meeting yesterday!", 2, 2),
        ],
        merge_duplicates=check,
    )
    assert len(units) == (1 if check else 2)


@pytest.mark.parametrize("check", [True, False])
def test_fact_grounding_acts_with_its_setting(store, check):
    units = peers_units(
        store,
        [
            unit("Caroline is researching adoption agencies for her family.", 0, 1),
            unit("Melanie would love to support counseling for those with similar issues.", 2, 3),
        ],
        ground_facts=check,
    )  # the second is nowhere said
    texts = [u.fact.text for u in units]
    assert texts[0].startswith("Caroline is researching") and len(texts) == (1 if check else 2)


def test_verbatim_fallback_does_not_repeat_what_an_open_partial_unit_holds(store):
    store.ingest([peers_doc()])
    pipeline = Pipeline(seg_size=4)
    pipeline.extraction = lambda m: {
        "memory_units": [
            unit("Caroline is researching adoption agencies for her family this month.", 0, 1, status="partial")
        ]
    }
    build(store, pipeline, settings=SETTINGS.with_overrides(extraction={"verbatim_fallback": True}))
    spans = [(u.evidence.start, u.construction_status) for u in store.units("c1", None)]
    assert (0, "partial") in spans and (0, "final") not in spans  # turn 0 is in the open partial unit
    assert (2, "final") in spans  # turn 2 is in no unit: its own words


def test_a_running_build_is_the_case_lock_and_a_dead_one_is_interrupted(tmp_path):
    from ftamem_core.storage.store import BuildRunning, Store

    store = Store(tmp_path / "m.db")
    store.ingest([doc()])
    killed = []

    def dying(stage_name, messages):
        killed.append(1)
        raise Killed()

    with pytest.raises(Killed):
        build(store, llm=ScriptedLLM([dying] * 10))
    (running,) = store.builds("c1")
    assert running.status == "running" and running.pid is not None  # this process lives: still locked
    other = Store(tmp_path / "m.db")  # e.g. the command line while the app builds
    with pytest.raises(BuildRunning, match="is being built"):
        build(other)
    with pytest.raises(BuildRunning, match="stop the build before replacing it"):
        other.ingest([doc()], on_exists="replace")
    process_died(store)
    reopened = Store(tmp_path / "m.db")  # the next process start marks it
    assert reopened.builds("c1")[0].status == "interrupted"
    report, _, _ = build(reopened)
    assert report.status == "done" and reopened.builds("c1")[-1].pid is not None


def test_stop_takes_effect_while_a_model_call_is_in_flight(case):
    release, stop = threading.Event(), threading.Event()
    pipeline = Pipeline()

    def slow(stage, messages):
        if stage == "extraction":
            stop.set()  # Stop pressed while the model is busy
            release.wait(60)
        return pipeline(stage, messages)

    try:
        report, _, _ = build(case, llm=ScriptedLLM([slow] * 1000), stop=stop)
        assert (report.status, report.error) == ("stopped", "stopped by the user")
        assert not release.is_set()  # the build did not wait for the call to end
        assert case.units("c1", None) == [] and case.builds("c1")[-1].status == "stopped"
    finally:
        release.set()


def test_an_over_long_turn_is_cut_for_the_prompt_stored_whole_and_logged(store):
    huge = "I keep thinking about the night shift. " * 20_000  # ~780k characters: no context holds it
    doc = CaseDocument(
        case=Case(id="c1"),
        sessions=[
            SessionDocument(
                session=Session(source_id="s0", time="2025-03-02"),
                turns=[
                    Turn(role="user", speaker="Maya", text="Hello."),
                    Turn(role="user", speaker="Maya", text=huge),
                    Turn(role="assistant", speaker="Counselor", text="Tell me more."),
                ],
            )
        ],
    )
    store.ingest([doc])
    pipeline = Pipeline()
    llm = pipeline.llm()
    report, events, _ = build(
        store, pipeline, llm=llm, settings=SETTINGS.with_overrides(construction={"prompt_turn_chars": 4_000})
    )
    assert report.status == "done"
    assert llm.prompts and all(len(m[-1]["content"]) < 12_000 for _, m in llm.prompts)  # each prompt fits
    (cut,) = [e for e in events if isinstance(e, ev.TurnsCut)]  # reported once, though every stage saw it
    assert (cut.turns, cut.limit) == ([1], 4_000)
    assert store.turns("c1")[1].text == huge  # the stored turn is whole


@pytest.mark.parametrize("long_support, kept", [(0.75, [(0, 1), (0, 3)]), (0.5, [(0, 1), (0, 3), (0, 5)])])
def test_a_fact_over_a_long_span_needs_long_span_support(store, long_support, kept):
    from ftamem_core.config import LONG_SPAN_TURNS
    from ftamem_core.construction.repairs.grounding import support

    doc = peers_doc()
    doc.sessions[0].turns += [
        Turn(role="user", speaker="Melanie", text="That sounds like a good week."),
        Turn(role="user", speaker="Caroline", text="It was, thanks for asking."),
    ]
    fact = "Caroline researched adoption agencies with Melanie at a café downtown."
    assert 0.5 <= support(fact, [t.text for t in doc.sessions[0].turns], ["Caroline", "Melanie"]) < 0.75
    assert LONG_SPAN_TURNS == 4  # (0, 3) is not a long span, (0, 5) is
    units = peers_units(
        store,
        [
            unit(fact, 0, 1),
            unit(fact.replace("researched", "is researching"), 0, 3),
            unit(fact.replace("researched", "was researching"), 0, 5),
        ],
        doc=doc,
        long_span_support=long_support,
        ground_facts=True,
        merge_duplicates=False,
    )
    assert [(u.evidence.start, u.evidence.end) for u in units] == kept


def test_a_sentence_in_a_script_its_turns_never_use_is_dropped_in_every_profile(store):
    # the 1.5B switched to Chinese mid-fact on English turns ("Audrey thanked Andrew's帮")
    store.ingest([doc(sessions=1)])
    switched, plain = "Maya talks about night shifts帮", "Maya talks about night shifts and sleep."
    partly = "Maya works nights. Maya thanked the counselor's帮"

    def switching(messages):
        idx = turn_indices([{"content": section(messages, "Fragment turns:")}])
        fact = {0: switched, 4: partly}.get(idx[0], plain)
        return {"memory_units": [unit(fact, idx[0], idx[-1])]}

    pipeline = Pipeline(seg_size=4)
    pipeline.extraction = switching
    _, events, _ = build(store, pipeline)
    facts = [u.fact.text for u in store.units("c1", construction_status=None)]
    # the sentence in another script goes, and the unit with it when it was its only one
    assert switched not in facts and partly not in facts and "Maya works nights." in facts
    assert [(e.fact, e.script) for e in events if isinstance(e, ev.ForeignScript)] == [
        (switched, "CJK"),
        (partly, "CJK"),
    ]


def test_a_fact_in_the_turns_own_script_is_kept():
    from ftamem_core.construction.extraction import foreign_script, turn_scripts

    chinese = [Turn(role="user", speaker="李明", text="我上周失业了，很难过。")]
    assert foreign_script("李明上周失业了。", turn_scripts(chinese)) == ""
    assert (
        foreign_script("Li Ming lost his job.", turn_scripts(chinese)) == ""
    )  # Latin letters in a Chinese case's fact
    assert foreign_script("Ли Мин потерял работу.", turn_scripts(chinese)) == "CYRILLIC"
    english = [Turn(role="user", speaker="Zoë", text="I moved to Zürich, café life!")]
    assert foreign_script("Zoë moved to Zürich.", turn_scripts(english)) == ""  # accents are Latin
    assert foreign_script("Zoë flew to Hawaiʻi.", turn_scripts(english)) == ""  # a modifier letter too
    japanese = [Turn(role="user", speaker="真也", text="先生に話した。")]
    assert foreign_script("真也は先生にストレスを話した。", turn_scripts(japanese)) == ""  # katakana the turns lack
    named = [Turn(role="user", speaker="李明", text="I lost my job.")]
    assert foreign_script("李明 lost his job.", turn_scripts(named)) == ""  # the speaker's name
