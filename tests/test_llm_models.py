"""Structured calls against the real 0.5B model: in process and through llama_cpp.server."""

import sys
import threading
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict

from ftamem_core.config import LLMConfig
from ftamem_core.llm.embedded import EmbeddedLLM
from ftamem_core.llm.openai_compat import OpenAICompatLLM
from ftamem_core.llm.modelfiles import ensure_model

from conftest import MODEL_DIR, free_port, serve

pytestmark = pytest.mark.model


class Feeling(BaseModel):
    model_config = ConfigDict(extra="forbid")
    emotion: Literal["exhausted", "joyful", "angry", "unknown"]
    hours_of_sleep: int
    person: str


MESSAGES = [
    {"role": "system", "content": "You extract facts from dialogue. Reply with JSON only."},
    {
        "role": "user",
        "content": 'Maya: "My coworker Omar says I look terrible. I slept four hours and I am '
        "completely exhausted.\" Give her emotion, her hours of sleep and the coworker's name.",
    },
]


@pytest.fixture(scope="module")
def model_path():
    return ensure_model("qwen2.5-0.5b", MODEL_DIR)


def test_in_process_structured_call(model_path):
    records = []
    llm = EmbeddedLLM(LLMConfig(model="qwen2.5-0.5b", n_ctx=2048), model_path, recorder=records.append)
    value, record = llm.structured("check", MESSAGES, Feeling, temperature=0.0, max_tokens=64)
    # Read from the text, not just schema-valid (the 0.5B calls the feeling "angry": not asserted).
    assert value.hours_of_sleep == 4 and "Omar" in value.person
    assert record.prompt_tokens > 20 and record.completion_tokens > 3 and record.seconds > 0
    assert records == [record] and record.backend == "embedded"


def test_in_process_model_is_shared_safely_between_threads(model_path):
    llm = EmbeddedLLM(LLMConfig(model="qwen2.5-0.5b", n_ctx=2048), model_path)
    results, errors = [], []

    def ask():
        try:
            results.append(llm.structured("check", MESSAGES, Feeling, temperature=0.0, max_tokens=64)[0])
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=ask) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(results) == 3
    assert len({r.model_dump_json() for r in results}) == 1  # same prompt, temperature 0, same answer


@pytest.fixture(scope="module")
def llama_server(model_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    yield from (
        url
        for _ in serve(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(model_path),
                "--model_alias",
                "qwen-0.5b",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "2048",
            ],
            f"{url}/models",
            120,
        )
    )


def test_openai_client_against_llama_cpp_server(llama_server):
    records = []
    llm = OpenAICompatLLM(
        LLMConfig(backend="openai", base_url=llama_server, model="qwen-0.5b"), recorder=records.append
    )
    assert llm.dialect == "json_object"  # detected: the server is not vLLM
    value, record = llm.structured("check", MESSAGES, Feeling, temperature=0.0, max_tokens=64)
    assert value.hours_of_sleep == 4
    assert record.backend == "openai" and record.prompt_tokens > 20 and records == [record]
    text, _ = llm.text("answer", [{"role": "user", "content": "Say the word hello."}], max_tokens=8)
    assert text.strip()


def test_truncation_through_the_server_is_retried_then_reported(llama_server):
    from ftamem_core.llm.base import LLMError

    llm = OpenAICompatLLM(LLMConfig(backend="openai", base_url=llama_server, model="qwen-0.5b", max_retries=1))
    with pytest.raises(LLMError, match="^check: no valid output after 2 attempt"):
        llm.structured("check", MESSAGES, Feeling, temperature=0.0, max_tokens=3)


def test_prompt_prefix_state_is_kept_on_disk_and_spares_a_new_process_the_instructions(model_path, tmp_path):
    import llama_cpp

    from ftamem_core.llm import embedded as llm_module, prefix_states
    from ftamem_core.llm.prompts import load_prompt
    from ftamem_core.retrieval.ranking import RewriteReply

    llm = EmbeddedLLM(LLMConfig(model="qwen2.5-0.5b", n_ctx=2048), model_path, state_dir=tmp_path)
    assert llm.warm(["rewrite"])["rewrite"].startswith("evaluated")
    (saved,) = tmp_path.glob("rewrite-*.npz")
    state = prefix_states.read_state(saved, 2048)
    model, _ = llm_module._llama(model_path, llm.config)
    text = model.detokenize(state.input_ids[: state.n_tokens].tolist()).decode()
    # instructions only: the data rule names the tag once, and nothing is filled in
    assert "You turn a question" in text and text.count("<data>") == 1 and "People in this case" in text

    # A new process: nothing in memory, the state read back from disk.
    prefix_states._LOADED.clear()
    llm_module.forget_prompts()
    assert llm.warm(["rewrite"]) == {"rewrite": "disk"}
    llama_cpp.llama_perf_context_reset(model._ctx.ctx)
    messages = load_prompt("rewrite").messages(
        people="Ines, Tomas", dates="2024-02-01", question="When did Ines start pottery classes?"
    )
    _, call = llm.structured("rewrite", messages, RewriteReply, max_tokens=200)
    evaluated = llama_cpp.llama_perf_context(model._ctx.ctx).n_p_eval
    # only what follows the saved instructions is read (a few more tokens where the prefix was cut:
    # the saved prompt's end-of-message marks and the token generated after it)
    assert 0 < evaluated <= call.prompt_tokens // call.attempts - state.n_tokens + 10

    saved.write_bytes(saved.read_bytes()[:-100])  # a file cut short is not loaded, but made again
    prefix_states._LOADED.clear()
    llm_module.forget_prompts()
    assert llm.warm(["rewrite"])["rewrite"].startswith("evaluated")
    assert prefix_states.read_state(saved, 2048) is not None


def test_a_warmed_stage_reads_the_prompt_cache_but_saves_nothing_to_it(model_path, tmp_path):
    from ftamem_core.llm import embedded as llm_module
    from ftamem_core.llm.prompts import load_prompt
    from ftamem_core.retrieval.ranking import RewriteReply

    llm = EmbeddedLLM(LLMConfig(model="qwen2.5-0.5b", n_ctx=2048), model_path, state_dir=tmp_path)
    llm_module.forget_prompts()
    llm.warm(["rewrite"])
    model, _ = llm_module._llama(model_path, llm.config)
    held = set(model.cache.cache_state)
    messages = load_prompt("rewrite").messages(
        people="Ines, Tomas", dates="2024-02-01", question="When did Ines start pottery classes?"
    )
    llm.structured("rewrite", messages, RewriteReply, max_tokens=200)
    assert set(model.cache.cache_state) == held  # read (the prefix), not written: 0.7 s saved a call
    llm.structured("rewrite-unwarmed", messages, RewriteReply, max_tokens=200)
    assert len(set(model.cache.cache_state) - held) == 1  # another stage's state is kept for its next call
    assert bool(model.cache)  # the switch is off again after the call


def test_warm_keeps_the_ask_prompts_instructions_on_disk_for_the_first_question(model_path, tmp_path, capsys):
    # `scripts/run` calls `ftamem warm`: the first ask of a new machine then reads the states from
    # disk (session 12: 37 s for that first ask without them, 24 s with them)
    import json

    from ftamem_core.llm import embedded as llm_module, prefix_states
    from ftamem_core.cli import main

    link = tmp_path / model_path.name  # the states are kept beside the model file
    link.symlink_to(model_path)
    args = ["--db", str(tmp_path / "m.db"), "--model", str(link), "--json", "warm"]
    assert main(args) == 0
    where = json.loads(capsys.readouterr().out)["prompts"]
    assert sorted(where) == ["answer", "rewrite"] and all(w.startswith("evaluated") for w in where.values())
    assert sorted(p.name.split("-")[0] for p in (tmp_path / "prompt-states").glob("*.npz")) == ["answer", "rewrite"]
    prefix_states._LOADED.clear()
    llm_module.forget_prompts()
    assert main(args) == 0  # a second start: the files are there, nothing is read again
    assert json.loads(capsys.readouterr().out)["prompts"] == {"rewrite": "disk", "answer": "disk"}
