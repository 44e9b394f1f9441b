"""Build the shared ES-MemEval sample with the real 0.5B model through the command line."""

import json

import pytest

from ftamem_core.cli import main
from ftamem_core.store import Store

from conftest import ESMEMEVAL

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("build") / "m.db")
    assert main(["--db", db, "ingest", str(ESMEMEVAL)]) == 0
    assert main(["--db", db, "--model", "qwen2.5-0.5b", "build", "sample-maya", "--quiet"]) == 0
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
    source spans cover the gold evidence turns: end to end, and for the questions whose evidence
    the built memory holds at all (with the 0.5B, construction coverage is the bottleneck:
    end-to-end recall was 0.25 in the clean-clone runs, 2 of the 3 questions the memory can answer)."""
    store = Store(built)
    questions = store.questions("sample-maya")
    in_memory = {t.original_id for u in store.units("sample-maya")
                 for t in store.turns("sample-maya", start=u.evidence.start, end=u.evidence.end)}
    covered, answerable, answerable_covered = 0, 0, 0
    for q in questions:
        trace = cli_json(capsys, "--db", built, "--model", "qwen2.5-0.5b", "--json", "ask", "sample-maya", q.question)
        assert trace["answer"].strip() and trace["packet"]["tokens"] > 0
        assert set(trace["cited_unit_ids"]) <= {u["id"] for u in trace["packet"]["primary"]} | {
            n["unit"]["id"] for n in trace["packet"]["neighbours"]}
        seen = {t["original_id"] for turns in trace["packet"]["sources"].values() for t in turns}
        hit = set(q.evidence) <= seen
        covered += hit
        if set(q.evidence) <= in_memory:
            answerable += 1
            answerable_covered += hit
    print(f"\nevidence recall over {len(questions)} sample questions: {covered / len(questions):.2f} end to end; "
          f"{answerable_covered}/{answerable} of those whose evidence the memory holds")
    assert answerable >= 1 and answerable_covered / answerable > 0.5  # most of them
