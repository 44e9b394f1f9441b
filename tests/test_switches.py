"""benchmarks/switches.py on the sample case with a scripted backend: its plumbing (a recording
without digests replayed into a baseline, each switch rebuilt from the baseline's recording, the
calls a switch changes asked live), not its figures."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _unit(text):
    return {
        "completes": "none",
        "summary": text[:20],
        "content_type": "event",
        "time_orientation": "past",
        "event_time_expression": "unknown",
        "event_time": "unknown",
        "content": {
            "text": text,
            "participants": ["Daniel"],
            "emotion_or_state": "unknown",
            "intention_or_plan": "unknown",
            "relation_cues": "unknown",
        },
        "evidence_turn_span": [0, 100000],
        "status": "complete",
    }


@pytest.fixture
def benchmarks(tmp_path, monkeypatch):
    # Facts of the first session only: ground_facts drops them elsewhere, so flipping it changes units.
    script = {
        "segmentation": {"segments": [{"turn_span": [0, 100000], "boundary_trigger": "topic_change"}]},
        "extraction": {
            "memory_units": [
                _unit("Daniel teaches chemistry at Riverside High."),
                _unit("Daniel's father was diagnosed with early dementia in July."),
                _unit("Daniel sleeps five hours because his dad calls at night."),
                _unit("Scripted reply: a fact no model wrote."),
            ]
        },
        "linking": {"memory_updates": []},
        "longitudinal": {"semantic": [], "support": []},
    }
    (tmp_path / "script.json").write_text(json.dumps(script))
    monkeypatch.setenv("FTAMEM_LLM_BACKEND", "scripted")
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import evidence
    import switches

    return evidence, switches


def test_switches_replays_a_recording_and_says_which_calls_went_live(tmp_path, benchmarks, capsys):
    evidence, switches = benchmarks
    where = [
        "--dataset",
        "esmemeval",
        "--data",
        str(ROOT / "data" / "sample_case.json"),
        "--model",
        str(tmp_path / "script.json"),
    ]
    # the recorded build, its replies kept without digests (as the dev builds' were)
    evidence.main(
        [
            *where,
            "--memory",
            "fta",
            "--builds",
            str(tmp_path / "recorded"),
            "--json",
            "--record",
            str(tmp_path / "keyed.jsonl"),
        ]
    )
    lines = [json.loads(line) for line in (tmp_path / "keyed.jsonl").read_text().splitlines()]
    (tmp_path / "replies.jsonl").write_text(
        "".join(json.dumps({k: v for k, v in line.items() if k != "request"}) + "\n" for line in lines)
    )
    capsys.readouterr()
    switches.main(
        [
            *where,
            "--replies",
            str(tmp_path / "replies.jsonl"),
            "--recorded-builds",
            str(tmp_path / "recorded"),
            "--out",
            str(tmp_path / "runs"),
            "--switch",
            "ground_facts",
            "turn_channel",
        ]
    )
    out = capsys.readouterr().out
    assert "live none" in out.splitlines()[0] and "in recorded order" in out.splitlines()[0]
    assert "sample-daniel: the baseline reproduces the recorded build" in out
    rows = {line.split(" | ")[0]: line.split(" | ") for line in out.splitlines() if " | " in line}
    header = rows["switch"]
    ground, similarity = (dict(zip(header, rows[name])) for name in ("ground_facts", "turn_channel"))
    assert ground["value"] == "false" and similarity["value"] == "0"  # the paper's values
    # a retrieval setting builds the same units: every call served from the baseline's recording
    assert similarity["live"] == "none" and int(similarity["replayed"]) == len(lines)
    assert similarity["calls per turn"].split(" -> ")[0] == similarity["calls per turn"].split(" -> ")[1]
    # more units: the longitudinal prompts differ from the recorded ones and are asked live
    assert "longitudinal" in ground["live"]
    for name in ("baseline", "ground_facts=false", "turn_channel=0"):
        assert (tmp_path / "runs" / name / "evidence-questions.jsonl").exists()
    assert all(cell.startswith(("+", "-")) for cell in (similarity[f"content recall {b}"] for b in (250, 500, 1000)))
    # again with --results: the finished runs are reused and their rows kept as data
    args = ["--replies", str(tmp_path / "replies.jsonl"), "--out", str(tmp_path / "runs"), "--switch"]
    switches.main([*where, *args, "turn_channel", "--results", str(tmp_path / "results"), "--note", "n"])
    (kept,) = [json.loads(line) for line in (tmp_path / "results" / "switches.jsonl").read_text().splitlines()]
    assert kept["switch"] == "turn_channel" and kept["note"] == "n" and kept["split"] == "esmemeval"
    assert kept["content recall 250"] == similarity["content recall 250"]


def test_every_switch_beyond_the_paper_is_flipped_unless_not_measurable(benchmarks):
    _, switches = benchmarks
    todo = switches.flipped()
    assert todo["verbatim_fallback"] == "false"  # to the paper
    assert todo["min_fragment_turns"] == "1" and "packet_token_budget" not in todo
    assert len(todo) == 8  # 9 beyond the paper, 1 not measurable here


def test_a_group_of_switches_is_flipped_together_and_a_wrong_name_is_refused(benchmarks):
    _, switches = benchmarks
    todo = switches.chosen(["turn_channel=0,stated_anchors", "ground_facts"])
    assert todo == {"turn_channel=0,stated_anchors=false": "", "ground_facts": "false"}
    with pytest.raises(SystemExit):
        switches.chosen(["turn_channel=0,no_such_setting=1"])


def test_set_and_switch_take_a_phase_or_a_bare_name_and_name_runs_bare(benchmarks):
    from argparse import Namespace

    from ftamem_core.cli.parser import set_option

    evidence, switches = benchmarks
    given = Namespace(set=[set_option("extraction.ground_facts=false"), set_option("speaker_check=false")])
    # a build file and a result row name each setting bare, as they did before phases
    assert evidence.set_names(given) == {"ground_facts": "false", "speaker_check": "false"}
    assert switches.chosen(["extraction.ground_facts", "speaker_check=false"]) == {
        "ground_facts": "false",
        "speaker_check": "false",
    }
    with pytest.raises(SystemExit, match="no setting 'bogus'"):
        switches.chosen(["bogus"])
