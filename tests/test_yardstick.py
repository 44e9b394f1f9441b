"""The yardstick (issue 38): content recall, the sanity memories, one packing for turn-level RAG
and the packet, one retrieval pipeline, splits and the stratified paired bootstrap."""

import ast
from pathlib import Path

import numpy as np
import pytest

from ftamem_core.config import PRESETS, load_settings
from ftamem_core.evaluation.content import content_recall, content_stems
from ftamem_core.evaluation.evidence import Shown, answerable, fta_packet, rag_packet
from ftamem_core.evaluation.sanity import NULL_BLOCK, fill
from ftamem_core.evaluation.splits import SPLITS, split_of
from ftamem_core.evaluation.stats import paired_bootstrap, stratified_bootstrap
from ftamem_core.evaluation.unit_counts import is_copy, pronoun_led, second_person, unit_counts
from ftamem_core.retrieval.inference import ask
from ftamem_core.llm.scripted import ScriptedLLM
from ftamem_core.models import Session, SessionDocument, Turn, CaseDocument, Case
from ftamem_core.retrieval.packet import approx_tokens
from ftamem_core.retrieval.pipeline import TurnIndex

from conftest import LOCOMO, consented, make_doc, make_unit
from scripted import HashEmbedder

EMB = HashEmbedder()
ROOT = Path(__file__).resolve().parents[1]


# content recall -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shown, expected",
    [
        ("Melanie: I ran a charity race for mental health last Saturday!", True),  # the turn itself
        ("[m3] Melanie ran a charity race for mental health on Saturday (event)", True),  # retold, 5 of 6 words
        ("Melanie ran a race.", False),  # 2 of 6 content words
        ("Melanie and Caroline talked.", False),  # a pointer without words
        ("", False),
    ],
)
def test_a_gold_turn_counts_when_the_packet_shows_60_percent_of_its_content_words(shown, expected):
    turn = "I ran a charity race for mental health last Saturday!"
    assert content_stems(turn) == {"ran", "chariti", "race", "mental", "health", "saturday"}
    assert content_recall(shown, [turn]) == float(expected)


def test_content_recall_averages_gold_turns_and_a_turn_without_content_words_needs_its_text():
    assert (
        content_recall(
            "charity race mental health saturday ran",
            ["I ran a charity race for mental health", "She went to the beach"],
        )
        == 0.5
    )
    assert content_recall("A: Me too!", ["Me too!"]) == 1.0 and content_recall("A: Yes.", ["Me too!"]) == 0.0
    assert content_recall("anything", []) is None


def test_shown_reports_content_and_pointer_recall_apart():
    shown = Shown(pointed={1, 2}, text="[m1] A and B talked.", tokens=6)
    assert shown.recall({1: "I adopted a puppy named Pixie", 2: "We adopted her from the shelter"}) == (0.0, 1.0)


def test_unit_content_recall_reads_the_unit_lines_alone():
    """A packet whose turn shows the gold turn while its unit says nothing: the packet shows it,
    the units do not."""
    gold = {1: "I adopted a puppy named Pixie"}
    shown = Shown(
        pointed={1},
        text="## Primary units\n[m1] A and B talked.\n## Source turns\n  [1] B: I adopted a puppy named Pixie",
        tokens=20,
        unit_text="[m1] A and B talked.",
    )
    assert shown.recall(gold) == (1.0, 1.0) and shown.unit_recall(gold) == 0.0
    told = Shown(pointed={1}, text="", tokens=0, unit_text="[m2] B adopted a puppy named Pixie (event; turns 1)")
    assert told.unit_recall(gold) == 1.0


# sanity memories ----------------------------------------------------------------------------


def test_the_null_memory_is_one_empty_unit_per_block_spanning_it(store):
    store.ingest([make_doc("c1", sessions=2, turns=30)])
    n = fill(store, "c1", "null", EMB, load_settings())
    units = store.units("c1")
    assert n == len(units) == 2 * 3  # 30 turns: blocks of 12, 12, 6 in each session
    assert all(u.fact.text == "A and B talked." for u in units)
    spans = sorted((u.evidence.start, u.evidence.end) for u in units)
    assert spans[:3] == [(0, NULL_BLOCK - 1), (NULL_BLOCK, 2 * NULL_BLOCK - 1), (2 * NULL_BLOCK, 29)]
    assert fill(store, "c1", "null", EMB, load_settings()) == n and len(store.units("c1")) == n  # replaces


def test_the_verbatim_memory_copies_substantive_turns_without_a_model(store):
    doc = CaseDocument(
        case=Case(id="c2", name="c2"),
        sessions=[
            SessionDocument(
                session=Session(source_id="s1", time="2025-03-01"),
                turns=[
                    Turn(role="user", speaker="Maya", text="I started a pottery class with my sister last week."),
                    Turn(role="user", speaker="Sam", text="Hi!"),
                    # between peers a remark that says no "I", "my" or "we" and answers nothing is not copied
                    Turn(role="user", speaker="Sam", text="Pottery is a lovely way to unwind after a long week."),
                    Turn(role="user", speaker="Sam", text="My dog Pixie loves the new park near our house."),
                ],
            )
        ],
    )
    store.ingest([doc])
    assert fill(store, "c2", "verbatim", EMB, load_settings()) == 2
    facts = sorted(u.fact.text for u in store.units("c2"))
    assert facts[0].startswith('Maya told Sam: "I started a pottery class') and facts[1].startswith(
        'Sam told Maya: "My dog Pixie'
    )
    with pytest.raises(ValueError):
        fill(store, "c2", "random", EMB, load_settings())


@pytest.mark.skipif(not LOCOMO.exists(), reason="needs ../shared/data")
def test_the_null_memory_shows_less_than_turn_rag_at_250_tokens_on_a_dev_conversation(store):
    """The rule the headline figure must pass: a memory that says nothing cannot match raw turns
    (pointer recall gives it 0.9 here); and on the unit lines alone it shows nothing."""
    from ftamem_core.llm.embeddings import Embedder
    from ftamem_core.loaders import load_file

    doc = next(d for d in load_file(LOCOMO) if d.case.id == "conv-26")
    store.ingest([doc.model_copy(update={"sessions": doc.sessions[:3]})])
    settings, embedder = load_settings(), Embedder()
    fill(store, "conv-26", "null", embedder, settings)
    turns = TurnIndex.build(embedder, store.turns("conv-26"), replies=True)
    text = {t.idx: t.text for t in turns.turns}
    questions = [
        (q, embedder.encode([q.question])[0], {i: text[i] for i in gold})
        for q, gold in answerable(store, "conv-26", {"1", "2", "3", "4"})
    ]
    null, rag, pointer, null_units, rag_units = [], [], [], [], []
    for q, v, gold_text in questions:
        shown = fta_packet(store, "conv-26", q.question, v, embedder, settings, 25, 250, turns)
        c, p = shown.recall(gold_text)
        null.append(c)
        pointer.append(p)
        null_units.append(shown.unit_recall(gold_text))
        rag_shown = rag_packet(turns, v, settings, None, 250)
        rag.append(rag_shown.recall(gold_text)[0])
        rag_units.append(rag_shown.unit_recall(gold_text))
    assert len(null) >= 15
    assert np.mean(null) < np.mean(rag) < np.mean(pointer)
    # What the units say: nothing for empty units or for turns alone; the turns' copies say their words.
    assert max(null_units) == 0 and max(rag_units) == 0
    fill(store, "conv-26", "verbatim", embedder, settings)
    copies = [
        fta_packet(store, "conv-26", q.question, v, embedder, settings, 25, 250, turns).unit_recall(gold_text)
        for q, v, gold_text in questions
    ]
    assert np.mean(copies) > 0.3, np.mean(copies)


# one packing, one pipeline ------------------------------------------------------------------


@pytest.fixture
def dialogue(store):
    store.ingest([make_doc("c1", sessions=2, turns=8)])
    consented(store, "c1")
    turns = store.turns("c1")
    return store, TurnIndex.build(EMB, turns, replies=True)


def test_turn_rag_fills_its_budget_by_the_packets_rule_with_date_lines(dialogue):
    store, turns = dialogue
    q = EMB.encode(["c1 session 1 turn 3"])[0]
    settings = load_settings()
    for budget in (40, 80, 0):
        shown = rag_packet(turns, q, settings, None, budget)
        assert not budget or approx_tokens(shown.text) <= budget
        assert "### said" in shown.text and "## Primary units" not in shown.text
    assert len(rag_packet(turns, q, settings, 3, 0).pointed) == 3  # K turns at most
    assert len(rag_packet(turns, q, settings, None, 40).pointed) < len(rag_packet(turns, q, settings, None, 0).pointed)


def test_unit_lines_hold_the_units_shown_and_none_of_the_turns_beside_them(dialogue):
    store, turns = dialogue
    units = [make_unit("c1", "A talked about turn 3 of c1", 11, 12, session_id=store.sessions("c1")[1].id)]
    store.add_units("c1", units, EMB.encode([u.fact.text for u in units]))
    (stored,) = store.units("c1")
    settings = load_settings()
    question = "What did A say in c1 session 1 turn 3?"
    shown = fta_packet(store, "c1", question, EMB.encode([question])[0], EMB, settings, 5, 0, turns)
    turn_lines = [line for line in shown.text.splitlines() if line.startswith("  [")]
    assert turn_lines, shown.text  # the packet shows turns beside the unit
    assert shown.unit_text.startswith(f"[m{stored.id}] A talked about turn 3 of c1")
    assert not any(line.strip() in shown.unit_text for line in turn_lines)
    gold = {11: "c1 session 1 turn 3"}  # the unit line holds one of its two content words
    assert shown.recall(gold)[0] == 1.0 and shown.unit_recall(gold) == 0.0


def test_ask_and_the_benchmark_build_the_same_packet(dialogue):
    store, turns = dialogue
    units = [make_unit("c1", "A talked about turn 3 of session 1", 11, 12, session_id=store.sessions("c1")[1].id)]
    store.add_units("c1", units, EMB.encode([u.fact.text for u in units]))
    settings = load_settings(retrieval={"packet_token_budget": 120})
    question = "What did A say in c1 session 1 turn 3?"
    trace = ask(
        store,
        "c1",
        question,
        ScriptedLLM([{"answer": "turn 3", "cited_unit_ids": []}]),
        EMB,
        settings,
        ablations=PRESETS["no_rewrite"],
    )
    v = EMB.encode([question])[0]
    bench = fta_packet(
        store,
        "c1",
        question,
        v,
        EMB,
        settings,
        settings.k_for("generic")[0],
        120,
        turns,
        count=ScriptedLLM().count_tokens,
    )
    assert bench.text == trace.packet_text and trace.packet_text.strip()


# statistics and splits ----------------------------------------------------------------------


def test_the_stratified_bootstrap_gives_an_interval_with_one_case():
    b = stratified_bootstrap([0.0, 1.0, 1.0, 0.0, 1.0], ["c"] * 5, n_resamples=2000)
    assert b["low"] < b["mean"] == 0.6 < b["high"] and b["strata"] == 1


def test_a_paired_difference_excludes_zero_only_when_it_holds_across_questions():
    strata = ["a"] * 10 + ["b"] * 10
    better = paired_bootstrap([1.0] * 18 + [0.0] * 2, [0.0] * 18 + [0.0] * 2, strata, n_resamples=2000)
    mixed = paired_bootstrap([1.0, 0.0] * 10, [0.0, 1.0] * 10, strata, n_resamples=2000)
    assert better["excludes_zero"] and not mixed["excludes_zero"]
    assert mixed["low"] < 0 < mixed["high"]


def test_the_splits_are_disjoint_and_named():
    assert not set(SPLITS["dev"]) & set(SPLITS["test"])
    assert split_of("conv-26") == "dev" and split_of("conv-43") == "test" and split_of("conv-48") == "other"


# unit counts apart from the repairs ---------------------------------------------------------


def test_unit_counts_call_none_of_the_construction_code():
    construction = {"grounding", "extraction", "segmentation", "construction", "linking", "longitudinal", "quality"}
    for name in ("unit_counts", "content"):
        tree = ast.parse((ROOT / "ftamem_core" / "evaluation" / f"{name}.py").read_text())
        imported = {
            part
            for n in ast.walk(tree)
            if isinstance(n, (ast.Import, ast.ImportFrom))
            for name in [getattr(n, "module", None) or "", *(a.name for a in n.names)]
            for part in name.split(".")
        }
        assert not imported & construction, name


def test_unit_counts_flag_what_a_reader_would(store):
    store.ingest([make_doc("c1", sessions=1, turns=4)])
    units = [
        make_unit("c1", "It has a blue roof on it.", 0, 0),
        make_unit("c1", "c1 session 0 turn 1", 1, 1),
        make_unit("c1", "Maya thinks you should rest.", 2, 3),
    ]
    units[2].affect.emotion_or_state = "worried"
    store.add_units("c1", units, EMB.encode([u.fact.text for u in units]))
    c = unit_counts(store, "c1")
    assert (c["pronoun_led"], c["copies_of_a_turn"], c["second_person"], c["with_feeling"]) == (1, 1, 1, 1)
    assert pronoun_led("Maya went home. She slept.") and not pronoun_led("Maya went home.")
    # a quote after who said it to whom names its "I" and "you"; its "it" stays unnamed
    assert not pronoun_led('Maya told Sam: "I went home. You know why."')
    assert pronoun_led('Maya told Sam: "I went home. It was late."') and pronoun_led('Maya said: "You know."')
    assert not second_person('Maya told Sam: "Did you see?"') and second_person('Maya said: "Did you see?"')
    assert is_copy('Maya told Sam: "I adopted a puppy named Pixie!"', "I adopted a puppy named Pixie!")
    assert is_copy("Maya adopted a puppy named Pixie", "I adopted a puppy named Pixie!") and not is_copy(
        "Maya adopted a puppy", "I adopted a puppy named Pixie from the shelter downtown"
    )


# results as data ----------------------------------------------------------------------------


def test_results_are_generated_from_rows_into_the_docs_and_the_readme(tmp_path):
    import json

    from ftamem_core.evaluation.results import BEGIN, END, write

    base = {
        "commit": "abc",
        "settings_digest": "d1",
        "split": "test",
        "cases": ["conv-43", "conv-47", "conv-50"],
        "sessions": 3,
        "builds": {"conv-43": "conv-43-s3.db"},
        "measured": "2026-12-05",
        "model": "qwen2.5-1.5b",
        "benchmark": "evidence",
        "n": 18,
    }
    old = {
        **base,
        "commit": "old",
        "budget": 250,
        "method": "fta",
        "metric": "content_recall",
        "value": 0.1,
        "low": 0.0,
        "high": 0.2,
    }
    rows = [old] + [
        {**base, "budget": b, "method": m, "metric": "content_recall", "value": v, "low": v - 0.1, "high": v + 0.1}
        for b in (250, 500)
        for m, v in (("fta", 0.62), ("turn-rag", 0.7))
    ]
    rows += [
        {**base, "budget": b, "method": m, "metric": "unit_content_recall", "value": v, "low": v, "high": v}
        for b in (250, 500)
        for m, v in (("fta", 0.41), ("turn-rag", 0.0))
    ]
    (tmp_path / "evidence.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    readme = tmp_path / "README.md"
    readme.write_text(f"# X\n\n{BEGIN}\nold table\n{END}\n\nrest\n")
    write(tmp_path, tmp_path / "RESULTS.md", readme)
    docs = (tmp_path / "RESULTS.md").read_text()
    assert "| fta | 0.62 [0.52, 0.72] | 0.62 [0.52, 0.72] |" in docs and "0.10" not in docs  # the newest run only
    assert "test (conv-43, conv-47, conv-50, sessions 1-3)" in docs
    units = docs.split("Unit content recall (the same on the unit lines alone", 1)[1].split("Pointer recall", 1)[0]
    assert "| fta | 0.41 [0.41, 0.41] |" in units and "| turn-rag | 0.00 [0.00, 0.00] |" in units
    text = readme.read_text()
    assert "old table" not in text and "| turn-rag | 0.70 [0.60, 0.80]" in text and text.endswith("rest\n")


def test_the_audit_table_pools_cases_and_annotators_with_their_agreement(tmp_path):
    from ftamem_core.evaluation.results import audit_scores, audit_table

    (tmp_path / "audit").mkdir()
    head = "item,fact,time,affect,relatedness,comment\n"
    (tmp_path / "audit" / "conv-1-ana.csv").write_text(head + "1,2,2,0,,\n2,,,,1,\n3,0,1,1,,\n")
    (tmp_path / "audit" / "conv-1-ben.csv").write_text(head + "1,2,1,0,,\n2,,,,0,\n3,0,1,1,,\n")
    (tmp_path / "audit" / "conv-2-ana.csv").write_text(head + "1,1,1,1,,\n")
    (tmp_path / "audit" / "conv-2-ben.csv").write_text(head + "1,1,1,1,,\n")
    scores = audit_scores(tmp_path / "audit")
    assert set(scores) == {"conv-1", "conv-2"} and set(scores["conv-1"]) == {"ana", "ben"}
    rows = {r.split(" | ")[0].strip("| "): r for r in audit_table(scores)}
    assert rows["fact"].startswith("| fact | 3 | 1.00 | 1.00 | 1.00 | 1.00 |")  # full agreement: alpha 1
    assert "| time | 3 | 1.17 | 1.33 | 1.00 |" in rows["time"] and rows["relatedness"].startswith(
        "| relatedness | 1 | 0.50"
    )


def _audit(folder, rounds, lead, second):
    """One audit's files: rounds.json and two annotators' scores of conv-43 (one unit)."""
    import json

    folder.mkdir(parents=True)
    head = "item,fact,time,affect,relatedness,comment\n"
    (folder / "conv-43-lead.csv").write_text(head + f"1,{lead},1,0,,\n")
    (folder / "conv-43-second.csv").write_text(head + f"1,{second},1,0,,\n")
    if rounds is not None:
        (folder / "rounds.json").write_text(json.dumps(rounds))


def _with_a_run(folder):
    """A results folder with a row, so that its document has sections."""
    import json

    (folder / "units.jsonl").write_text(
        json.dumps(
            {
                "commit": "abc",
                "settings_digest": "d",
                "split": "test",
                "cases": ["conv-43"],
                "measured": "2026-12-06",
                "benchmark": "units",
                "case": "conv-43",
                "counts": {"units": 3},
                "cost": {},
            }
        )
        + "\n"
    )


def test_each_audit_folder_has_its_section_newest_first(tmp_path):
    from ftamem_core.evaluation.results import audits, results_markdown

    _with_a_run(tmp_path)
    drawn = {"seed": 38, "units": 1, "pairs": 0, "sampler": "strata-v1"}
    # the older audit's folder name sorts after the newer one's: the date decides
    _audit(
        tmp_path / "audit" / "b8e966c",
        {"measured_at": "2026-12-05", "conv-43": {**drawn, "built_at": "b8e966c"}},
        lead=0,
        second=0,
    )
    _audit(
        tmp_path / "audit" / "1a2b3c4",
        {"measured_at": "2027-01-20", "conv-43": {**drawn, "built_at": "1a2b3c4"}},
        lead=2,
        second=2,
    )
    _audit(tmp_path / "audit" / "0000000", None, lead=1, second=1)  # undated: after the dated ones
    (tmp_path / "audit" / "ffffff0").mkdir()  # no scores yet: no section
    assert [a["label"] for a in audits(tmp_path)] == ["1a2b3c4", "b8e966c", "0000000"]
    docs = results_markdown(tmp_path)
    sections = docs.split("## Hand audit of the test builds, ")[1:]
    assert [s.split("`")[1] for s in sections] == ["1a2b3c4", "b8e966c", "0000000"]
    new, old, undated = sections
    assert "Measured 2027-01-20." in new and "scores in `results/audit/1a2b3c4/`" in new
    assert "Drawn: conv-43: 1 units and 0 pairs, seed 38, sampler strata-v1, built at `1a2b3c4`." in new
    assert "| fact | 1 | 2.00 | 2.00 | 2.00 |" in new and "measured_at" not in docs
    assert "Measured 2026-12-05." in old and "built at `b8e966c`" in old and "| fact | 1 | 0.00 |" in old
    assert "Measured" not in undated and "Drawn" not in undated and "| fact | 1 | 1.00 |" in undated


def test_two_audits_of_one_day_are_ordered_by_their_time_and_a_note_is_shown(tmp_path):
    from ftamem_core.evaluation.results import audits, results_markdown

    _with_a_run(tmp_path)
    drawn = {"seed": 38, "units": 1, "pairs": 0, "sampler": "strata-v3"}
    _audit(
        tmp_path / "audit" / "aa2038d",
        {"measured_at": "2026-12-06", "conv-43": {**drawn, "built_at": "aa2038d"}},
        lead=0,
        second=0,
    )
    _audit(
        tmp_path / "audit" / "5944695",
        {"measured_at": "2026-12-06T13:10", "note": "A new annotator.", "conv-43": {**drawn, "built_at": "5944695"}},
        lead=2,
        second=2,
    )
    assert [a["label"] for a in audits(tmp_path)] == ["5944695", "aa2038d"]
    docs = results_markdown(tmp_path)
    assert "Measured 2026-12-06. " in docs and "Note: A new annotator." in docs and "T13:10" not in docs
    _audit(tmp_path / "audit" / "bad", {"measured_at": "yesterday"}, lead=1, second=1)
    with pytest.raises(ValueError, match="is not a date"):
        audits(tmp_path)


def test_a_flat_audit_folder_reads_as_one_audit_and_a_mixed_one_is_refused(tmp_path):
    from ftamem_core.evaluation.results import audits, results_markdown

    _with_a_run(tmp_path)
    drawn = {"seed": 38, "units": 1, "pairs": 0, "sampler": "strata-v1", "built_at": "b8e966c"}
    _audit(tmp_path / "audit", {"conv-43": drawn}, lead=1, second=2)
    docs = results_markdown(tmp_path)
    assert "## Hand audit of the test builds\n" in docs and "scores in `results/audit/`." in docs
    assert "built at `b8e966c`." in docs and "| fact | 1 | 1.50 | 1.00 | 2.00 |" in docs
    _audit(tmp_path / "audit" / "1a2b3c4", None, lead=2, second=2)
    with pytest.raises(ValueError, match="both score files"):
        audits(tmp_path)


def _eval_run(folder, methods, f1s, cases=("conv-43", "conv-47")):
    """A finished evaluation run's files: ``f1s[m]`` the official F1 of each question, in order."""
    import json

    folder.mkdir()
    (folder / "config.json").write_text(
        json.dumps(
            {
                "dataset": "locomo",
                "methods": methods,
                "cases": list(cases),
                "sessions": 3,
                "llm": {"model": "qwen2.5-1.5b"},
                "commit": "abc123",
                "settings_digest": "d1",
            }
        )
    )
    rows = [
        {
            "method": m,
            "case": cases[i % len(cases)],
            "qid": f"q{i}",
            "category": "1",
            "f1_official": f,
            "content_recall": f,
            "answer_stage_tokens": 100 * (j + 1),
            "seconds": 2.0,
            "packet_tokens": 50,
        }
        for j, m in enumerate(methods)
        for i, f in enumerate(f1s[m])
    ]
    rows.append(
        {
            "method": methods[0],
            "case": cases[0],
            "qid": "only-one-method",
            "category": "1",
            "f1_official": 1.0,
            "content_recall": 1.0,
            "answer_stage_tokens": 1,
            "seconds": 1.0,
            "packet_tokens": 1,
        }
    )
    (folder / "questions.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    return folder


def test_answer_rows_give_f1_with_intervals_and_paired_differences_on_shared_questions(tmp_path):
    from ftamem_core.evaluation.results import answer_rows

    run = _eval_run(
        tmp_path / "run",
        ["fta", "turn-rag", "null"],
        {"fta": [1.0, 0.5, 1.0, 0.0, 1.0, 0.5], "turn-rag": [0.5, 0.5, 1.0, 0.0, 0.5, 0.5], "null": [0.0] * 6},
    )
    rows = answer_rows(run, measured="2026-12-05")
    find = {(r["method"], r["metric"]): r for r in rows}
    f1 = find[("fta", "f1")]
    assert f1["n"] == 6 and f1["value"] == pytest.approx(4 / 6, abs=1e-4)  # the one-method question left out
    assert f1["low"] < f1["value"] < f1["high"] and f1["commit"] == "abc123" and f1["split"] == "test"
    assert find[("turn-rag", "answer_stage_tokens")]["value"] == 200
    assert find[("fta - null", "f1")]["excludes_zero"] is True
    assert find[("fta - turn-rag", "f1")]["excludes_zero"] is False  # better on 2 of 6 questions only
    assert {r["method"] for r in rows} == {"fta", "turn-rag", "null", "fta - turn-rag", "fta - null"}


def test_an_evaluation_run_on_the_test_split_lands_in_the_results_and_the_readme(tmp_path):
    from ftamem_core.evaluation.results import BEGIN, END, add_run, write

    run = _eval_run(
        tmp_path / "run",
        ["fta", "turn-rag"],
        {"fta": [0.4, 0.6, 0.5], "turn-rag": [0.2, 0.3, 0.1]},
        cases=("conv-43", "conv-47", "conv-50"),
    )
    results = tmp_path / "results"
    assert add_run(run, results) == 10 + 2
    readme = tmp_path / "README.md"
    readme.write_text(f"# X\n\n{BEGIN}\n{END}\n")
    write(results, tmp_path / "RESULTS.md", readme)
    docs = (tmp_path / "RESULTS.md").read_text()
    assert "## Answers, test (conv-43, conv-47, conv-50, sessions 1-3)" in docs
    assert "| fta - turn-rag | 0.30 [" in docs
    assert "Answers, LoCoMo official F1" in readme.read_text() and "| fta | 0.50 [" in readme.read_text()
    with pytest.raises(ValueError, match="already in"):  # the same run twice would double its rows
        add_run(run, results)


def test_a_run_capped_in_questions_or_over_a_whole_file_is_no_split(tmp_path):
    import json

    from ftamem_core.evaluation.results import answer_rows

    run = _eval_run(tmp_path / "run", ["fta", "turn-rag"], {"fta": [0.4, 0.6], "turn-rag": [0.2, 0.3]})
    assert {r["split"] for r in answer_rows(run)} == {"test"}
    config = json.loads((run / "config.json").read_text())
    for change in ({"questions": 5}, {"cases": None}, {"sessions": 2}):
        (run / "config.json").write_text(json.dumps({**config, **change}))
        assert {r["split"] for r in answer_rows(run)} == {"other"}, change


def test_two_evidence_runs_compare_paired_by_question(tmp_path):
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location("compare", Path(__file__).parents[1] / "benchmarks" / "compare.py")
    compare = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compare)
    for name, values in (("base", [0.0, 0.5, 0.0, 1.0]), ("cand", [1.0, 1.0, 1.0, 1.0])):
        (tmp_path / name).mkdir()
        rows = [
            {
                "method": "fta",
                "budget": 250,
                "case": f"conv-{i % 2}",
                "qid": f"q{i}",
                "content_recall": v,
                "pointer_recall": 1.0,
            }
            for i, v in enumerate(values)
        ]
        rows.append(
            {
                "method": "turn-rag",
                "budget": 250,
                "case": "conv-0",
                "qid": "q0",
                "content_recall": 1.0,
                "pointer_recall": 1.0,
            }
        )
        (tmp_path / name / "evidence-questions.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    out = compare.compare(
        compare.per_question(tmp_path / "base", "fta"), compare.per_question(tmp_path / "cand", "fta")
    )
    content = next(r for r in out if r["metric"] == "content_recall")
    assert content["n"] == 4 and content["baseline"] == 0.375 and content["candidate"] == 1.0
    assert content["difference"] == 0.625 and content["excludes_zero"] is True
    pointer = next(r for r in out if r["metric"] == "pointer_recall")
    assert pointer["difference"] == 0 and pointer["excludes_zero"] is False
    assert not any(r["metric"] == "unit_content_recall" for r in out)  # runs made before it was measured


def test_the_builds_unit_counts_are_tabled_per_case(tmp_path):
    import json

    from ftamem_core.evaluation.results import results_markdown

    (tmp_path / "units.jsonl").write_text(
        json.dumps(
            {
                "commit": "abc",
                "settings_digest": "d",
                "split": "dev",
                "cases": ["conv-26"],
                "measured": "2026-12-06",
                "benchmark": "units",
                "case": "conv-26",
                "built_at": "abc",
                "set": {"split_facts": "false"},
                "counts": {
                    "units": 38,
                    "copies_of_a_turn": 14,
                    "with_feeling": 4,
                    "with_intention": 5,
                    "pronoun_led": 21,
                    "second_person": 4,
                    "links": 15,
                    "link_relations": {"updates": 12, "supports": 3},
                    "link_confidence": {"high": 15},
                },
                "cost": {"calls_per_turn": 0.31, "tokens_per_turn": 504.0},
            }
        )
        + "\n"
    )
    docs = results_markdown(tmp_path)
    assert "## Units of the builds, dev" in docs and "with split_facts=false" in docs
    assert "| conv-26 | 38 | 14 | 4 | 5 | 21 | 4 | 15 | 0 / 12 / 3 | 15 | 0.31 | 504.0 |" in docs
