"""Build the shared ES-MemEval sample with the real 0.5B model through the command line."""

import json

import pytest

from ftamem_core.cli import main
from ftamem_core.store import Store

from conftest import ESMEMEVAL

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The sample built by the 0.5B with the coverage pass: without it the 0.5B writes one unit per
    fragment and leaves most gold evidence turns in no unit (1 of the 7 questions with evidence covered)."""
    db = str(tmp_path_factory.mktemp("build") / "m.db")
    assert main(["--db", db, "ingest", str(ESMEMEVAL)]) == 0
    assert main(["--db", db, "--model", "qwen2.5-0.5b", "build", "sample-maya", "--coverage-pass", "--quiet"]) == 0
    return db


def cli_json(capsys, *args):
    capsys.readouterr()
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


def test_every_session_has_units_inside_its_turns(built, capsys):
    store = Store(built)
    units = store.units("sample-maya")
    for session in store.sessions("sample-maya"):
        turns = [t.idx for t in store.turns("sample-maya", session_id=session.id)]
        mine = [u for u in units if u.evidence.session_id == session.id]
        assert mine, f"session {session.source_id} has no units"
        for u in mine:
            assert turns[0] <= u.evidence.start <= u.evidence.end <= turns[-1]
            assert u.time.dialogue_time == session.time
            assert u.fact.text.strip() and u.fact.text.strip() != "..."
    assert store.index("sample-maya").ids() == {u.id for u in units}
    covered = {i for u in units for i in range(u.evidence.start, u.evidence.end + 1)}
    said = [t for t in store.turns("sample-maya") if t.role != "assistant" and len(t.text.split()) >= 6]
    assert [t.original_id for t in said if t.idx not in covered] == []  # the coverage pass leaves none out
    listed = cli_json(capsys, "--db", built, "--json", "units", "sample-maya")
    assert [u["id"] for u in listed] == [u.id for u in units]


def test_links_stay_inside_the_case(built, capsys):
    ids = {u.id for u in Store(built).units("sample-maya", None)}
    for link in cli_json(capsys, "--db", built, "--json", "links", "sample-maya"):
        assert link["source"] in ids and link["target"] in ids and link["source"] != link["target"]
        assert link["relation"] != "unknown"


def test_memory_and_cost_are_reported(built, capsys):
    memory = cli_json(capsys, "--db", built, "--json", "memory", "sample-maya")
    ids = {u.id for u in Store(built).units("sample-maya")}
    for entry in memory["semantic"] + memory["support"]:
        assert set(entry["source_unit_ids"]) <= ids
    cost = cli_json(capsys, "--db", built, "--json", "cost", "sample-maya")
    stages = {s["stage"]: s for s in cost["stages"]}
    assert stages["segmentation"]["calls"] >= 3 and stages["extraction"]["calls"] >= 3
    assert cost["turns"] == 30 and cost["units"] >= 3 and cost["tokens"] > 1000
    assert main(["--db", built, "--model", "qwen2.5-0.5b", "build", "sample-maya", "--quiet"]) == 0  # nothing left
    again = cli_json(capsys, "--db", built, "--json", "cost", "sample-maya")
    assert again["calls"] == cost["calls"]


def test_asking_the_sample_questions_retrieves_the_gold_evidence(built, capsys):
    """Ask every question of the sample with the real model and measure how often the packet's
    source spans cover all the gold evidence turns of a question (the questions with evidence:
    the sample's abstention question has none)."""
    store = Store(built)
    questions = [q for q in store.questions("sample-maya") if q.evidence]
    covered = []
    for q in questions:
        trace = cli_json(capsys, "--db", built, "--model", "qwen2.5-0.5b", "--json", "ask", "sample-maya", q.question)
        assert trace["answer"].strip() and trace["packet"]["tokens"] > 0
        assert set(trace["cited_unit_ids"]) <= {u["id"] for u in trace["packet"]["primary"]} | {
            n["unit"]["id"] for n in trace["packet"]["neighbours"]}
        seen = {t["original_id"] for turns in trace["packet"]["sources"].values() for t in turns}
        covered.append(set(q.evidence) <= seen)
    with capsys.disabled():
        print(f"\nevidence recall over the {len(questions)} sample questions with evidence: "
              f"{sum(covered)}/{len(questions)} = {sum(covered) / len(questions):.2f}")
    assert sum(covered) / len(questions) > 0.5  # most of them
