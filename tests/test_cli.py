import json
import subprocess
import sys

import pytest

from ftamem_core.cli import main

from conftest import ESMEMEVAL, LOCOMO, ROOT, SAMPLE


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_ingest_cases_sessions_turns(tmp_path, capsys):
    db = str(tmp_path / "m.db")
    code, out, _ = run(capsys, "--db", db, "ingest", str(ESMEMEVAL))
    assert code == 0 and "sample-maya  added" in out
    code, out, _ = run(capsys, "--db", db, "--json", "ingest", str(SAMPLE))
    assert json.loads(out) == [{"id": "sample-daniel", "result": "added", "sessions": 3, "turns": 33, "questions": 7}]
    code, out, _ = run(capsys, "--db", db, "--json", "cases")
    cases = {c["id"]: c for c in json.loads(out)}
    assert (cases["sample-maya"]["sessions"], cases["sample-maya"]["turns"]) == (3, 30)
    code, out, _ = run(capsys, "--db", db, "sessions", "sample-maya", "--json")  # --json after the command too
    assert [s["source_id"] for s in json.loads(out)] == ["s1", "s2", "s3"]
    code, out, _ = run(capsys, "--db", db, "--json", "turns", "sample-maya", "--session", "s2")
    turns = json.loads(out)
    assert turns[0]["idx"] == 10 and turns[0]["original_id"] == "s2:0"
    code, out, _ = run(capsys, "--db", db, "turns", "sample-maya", "--session", "2")
    assert "s3:0" in out and "s2:0" not in out


def test_reingest_is_refused_replaced_or_skipped(tmp_path, capsys):
    db = str(tmp_path / "m.db")
    run(capsys, "--db", db, "ingest", str(ESMEMEVAL))
    code, out, err = run(capsys, "--db", db, "ingest", str(ESMEMEVAL))
    assert code == 1 and out == "" and err.count("\n") == 1 and "already stored" in err
    assert run(capsys, "--db", db, "ingest", str(ESMEMEVAL), "--skip-existing")[0] == 0
    code, out, _ = run(capsys, "--db", db, "ingest", str(ESMEMEVAL), "--replace")
    assert code == 0 and "replaced" in out
    code, out, _ = run(capsys, "--db", db, "--json", "cases")
    assert [c["turns"] for c in json.loads(out)] == [30]


def test_errors_are_one_line_and_nonzero(tmp_path, capsys):
    db = str(tmp_path / "m.db")
    bad = tmp_path / "bad.json"
    bad.write_text('{"id": "x", "sessions": [{"turns": [{"role": "user"}]}]}')
    code, _, err = run(capsys, "--db", db, "ingest", str(bad))
    assert code == 1 and err == "ftamem: error: bad.json: $.sessions[0].turns[0]: missing key 'text'\n"
    code, _, err = run(capsys, "--db", db, "sessions", "nope")
    assert code == 1 and "no case 'nope'" in err
    code, _, err = run(capsys, "--db", db, "ingest", str(tmp_path / "missing.json"))
    assert code == 1 and "cannot read the file" in err
    code, _, err = run(capsys, "--db", db, "--llm", "openai", "check-llm")
    assert code == 1 and "needs a base_url" in err
    with pytest.raises(SystemExit) as e:
        main(["--db", db, "ingest", str(bad), "--format", "xml"])
    assert e.value.code == 2


def test_console_script_and_module_entry(tmp_path):
    db = str(tmp_path / "m.db")
    done = subprocess.run(
        [sys.executable, "-m", "ftamem_core", "--db", db, "ingest", str(LOCOMO), "--case", "conv-26"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "ftamem_core", "--db", db, "--json", "cases"], capture_output=True, text=True, cwd=ROOT
    )
    assert json.loads(done.stdout)[0] | {"id": "conv-26", "sessions": 19, "turns": 419} == json.loads(done.stdout)[0]
    done = subprocess.run(
        [sys.executable, "-m", "ftamem_core", "--db", db, "sessions", "conv-99"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 1 and done.stderr.startswith("ftamem: error:")


@pytest.mark.model
def test_check_llm_with_the_embedded_model(tmp_path, capsys):
    code, out, err = run(capsys, "--db", str(tmp_path / "m.db"), "--model", "qwen2.5-0.5b", "--json", "check-llm")
    assert code == 0, err
    data = json.loads(out)
    assert data["backend"] == "embedded" and data["model"] == "qwen2.5-0.5b" and data["seconds"] > 0
    assert data["reply"]["feeling"] in ("tired", "happy", "angry", "unknown")


def test_warm_tells_which_prompt_states_are_missing_without_the_model(tmp_path, capsys):
    from ftamem_core.config import LLMConfig
    from ftamem_core.llm.embedded import EmbeddedLLM
    from ftamem_core.llm.prefix_states import state_file
    from ftamem_core.llm.prompts import load_prompt

    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"not a model")  # never loaded: cold() reads no weights
    llm = EmbeddedLLM(LLMConfig(model=str(fake), n_ctx=2048), fake)
    assert llm.cold(["rewrite", "answer"]) == ["rewrite", "answer"]
    saved = state_file(tmp_path / "prompt-states", fake, 2048, "rewrite", load_prompt("rewrite").prefix_messages())
    saved.parent.mkdir()
    saved.write_bytes(b"")
    assert llm.cold(["rewrite", "answer"]) == ["answer"]
    # a server keeps its own prefixes: nothing to do, and no call made
    code, out, _ = run(
        capsys,
        "--db",
        str(tmp_path / "m.db"),
        "--llm",
        "openai",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--json",
        "warm",
    )
    assert code == 0 and json.loads(out)["prompts"] == {}


# The settings a build with tests/scripted_replies.json needs: it writes one unit per fragment (no
# more asked for, no turn units added) whose fact is in no turn (not dropped as ungrounded).
SCRIPTED_BUILD_ENV = {
    "FTAMEM_EXTRACTION_TURNS_PER_UNIT": "0",
    "FTAMEM_EXTRACTION_VERBATIM_FALLBACK": "false",
    "FTAMEM_EXTRACTION_GROUND_FACTS": "false",
}


def test_the_scripted_backend_builds_and_answers_and_says_it_is_a_test_double(tmp_path, capsys, monkeypatch):
    from ftamem_core.llm.embeddings import Embedder

    from scripted import HashEmbedder

    monkeypatch.setattr(Embedder, "from_settings", classmethod(lambda cls, settings: HashEmbedder()))
    for name, value in SCRIPTED_BUILD_ENV.items():
        monkeypatch.setenv(name, value)
    db, script = str(tmp_path / "m.db"), str(ROOT / "tests" / "scripted_replies.json")
    assert run(capsys, "--db", db, "ingest", str(SAMPLE), "--consent", "granted", "--by", "test")[0] == 0
    scripted = ["--db", db, "--llm", "scripted", "--model", script, "--json"]
    code, out, err = run(capsys, *scripted, "build", "sample-daniel", "--quiet")
    assert code == 0, err
    assert err.startswith("ftamem: backend scripted (a test double)") and "no language model runs" in err
    report = json.loads(out)
    assert report["status"] == "done" and report["units"] > 0 and report["sessions_built"] == 3
    code, out, _ = run(capsys, *scripted, "units", "sample-daniel")
    assert {u["fact"]["text"] for u in json.loads(out)} == {"Scripted reply: a fact no model wrote."}
    assert {u["origin"] for u in json.loads(out)} == {"model"}
    code, out, _ = run(capsys, *scripted, "units", "sample-daniel", "--origin", "copied", "corrected")
    assert code == 0 and json.loads(out) == []  # provenance filter
    code, everything, _ = run(capsys, *scripted, "units", "sample-daniel")
    code, out, _ = run(capsys, *scripted, "units", "sample-daniel", "--origin", "model")
    assert code == 0 and len(json.loads(out)) == len(json.loads(everything)) > 0
    code, out, err = run(capsys, *scripted, "ask", "sample-daniel", "When was the diagnosis?")
    assert code == 0 and json.loads(out)["answer"] == "Scripted answer (no model)." and "test double" in err
    code, out, err = run(capsys, "--db", db, "--json", "cases")  # no model: no notice
    assert code == 0 and err == ""


def test_a_missing_optional_dependency_names_its_extra(tmp_path, capsys, monkeypatch):
    import ftamem_core.evaluation.metrics as metrics

    def no_nltk(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'nltk'", name="nltk")

    monkeypatch.setattr(metrics, "score_items", no_nltk)
    rows = tmp_path / "p.jsonl"
    rows.write_text(json.dumps({"question": "q", "answer": "a", "prediction": "a", "category": 1}) + "\n")
    code, _, err = run(capsys, "score", "locomo", str(rows))
    assert code == 1 and err == (
        "ftamem: error: score needs nltk, an optional dependency: pip install 'ftamem-studio[eval]'\n"
    )
