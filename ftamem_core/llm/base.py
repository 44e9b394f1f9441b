"""LLM backends behind one interface: structured calls (messages + JSON schema -> validated
pydantic object) and text calls, each recorded as a CallRecord.

Backends:
- ``embedded``: llama-cpp in this process (the default), guarded by a lock per model;
- ``openai``: any OpenAI-compatible server (vLLM, llama.cpp's server);
- ``scripted``: replies given in advance, for tests and demos.

Every structured call is constrained by the response model's JSON schema (enums included);
invalid or truncated output is retried ``max_retries`` times, then fails naming the stage.
"""

from __future__ import annotations

import atexit
import contextvars
import json
import os
import threading
import time
from abc import ABC, abstractmethod
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from ..config import LLMConfig
from ..models import CallRecord

T = TypeVar("T", bound=BaseModel)
Messages = list[dict[str, str]]
Recorder = Callable[[CallRecord], Any]


class LLMError(Exception):
    """A call that failed for good; the message starts with the stage."""

    record: CallRecord | None = None


class LLMUnavailable(LLMError):
    """The backend could not be reached (after retries); the work can resume later."""


class LLMCancelled(LLMError):
    """The caller stopped waiting (a build's Stop, or its consent withdrawn)."""


_CONTEXT: ContextVar[dict] = ContextVar("ftamem_llm_context", default={})


_CANCEL: ContextVar[Callable[[], bool] | None] = ContextVar("ftamem_llm_cancel", default=None)
# When the call in progress must be over (time.monotonic()), set by structured() and text().
_DEADLINE: ContextVar[float | None] = ContextVar("ftamem_llm_deadline", default=None)


@contextmanager
def call_context(cancel: Callable[[], bool] | None = None, **fields: Any):
    """Fields (case_id, build_id) stamped on every call record made inside the block. With
    ``cancel``, each call waits in slices and gives up (LLMCancelled) as soon as it returns True:
    a call in flight cannot be interrupted, but nobody has to wait for it."""
    token = _CONTEXT.set({**_CONTEXT.get(), **fields})
    cancel_token = _CANCEL.set(cancel) if cancel is not None else None
    try:
        yield
    finally:
        _CONTEXT.reset(token)
        if cancel_token is not None:
            _CANCEL.reset(cancel_token)


def _cancellable(stage: str, call: Callable[[], "Completion"]) -> "Completion":
    """Run ``call`` here, or, when the context can cancel, in a worker thread watched every
    half second (the worker finishes on its own; an embedded model stays busy until it does)."""
    cancel = _CANCEL.get()
    if cancel is None:
        return call()
    result: dict[str, Any] = {}

    def work() -> None:
        try:
            result["value"] = call()
        except BaseException as e:  # noqa: BLE001 - handed to the waiting thread
            result["error"] = e

    context = contextvars.copy_context()  # the call's deadline goes with it
    worker = threading.Thread(target=lambda: context.run(work), name=f"llm-{stage}", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.5)
        if worker.is_alive() and cancel():
            raise LLMCancelled(f"{stage}: stopped while the model was answering")
    if "error" in result:
        raise result["error"]
    return result["value"]


@dataclass
class Completion:
    text: str
    finish_reason: str | None
    prompt_tokens: int = 0
    completion_tokens: int = 0


def json_schema(model: type[BaseModel]) -> dict:
    """The model's JSON schema with every $ref inlined (grammar builders handle that best)."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return inline(defs[node["$ref"].split("/")[-1]])
            return {k: inline(v) for k, v in node.items()}
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    return inline(schema)


class LLM(ABC):
    backend = "abstract"

    def __init__(self, config: LLMConfig, recorder: Recorder | None = None):
        self.config = config
        self.recorder = recorder

    @property
    def model_name(self) -> str:
        return self.config.model

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text`` (an estimate of 4 characters a token where no tokenizer is at hand)."""
        return max(1, len(text) // 4) if text else 0

    def warm(self, prompts: Iterable[str]) -> dict[str, str]:
        """Make the fixed beginning of these prompts ready before their first call (the embedded
        model keeps it on disk, ``prefix_states``); servers cache prefixes themselves."""
        return {}

    def cold(self, prompts: Iterable[str]) -> list[str]:
        """The prompts whose fixed beginning ``warm`` would still have to read (none for servers)."""
        return []

    @abstractmethod
    def _complete(self, stage: str, messages: Messages, temperature: float, max_tokens: int,
                  schema: dict | None, schema_name: str, seed: int = 0) -> Completion:
        """One raw completion; raises LLMUnavailable when the backend cannot be reached."""

    def structured(self, stage: str, messages: Messages, response_model: type[T], *,
                   temperature: float = 0.0, max_tokens: int | None = None,
                   case_id: str | None = None) -> tuple[T, CallRecord]:
        schema = json_schema(response_model)
        record = CallRecord(case_id=case_id, stage=stage, backend=self.backend, model=self.model_name, attempts=0)
        started = time.perf_counter()
        problem = ""
        deadline = _DEADLINE.set(time.monotonic() + self.config.deadline)
        try:
            for attempt in range(1 + max(0, self.config.max_retries)):
                record.attempts += 1
                # A retry is not the same request again: another seed, and some sampling where
                # the first try was greedy (greedy decoding would repeat the invalid output).
                out = _cancellable(stage, lambda: self._complete(
                    stage, messages, temperature if attempt == 0 else max(temperature, 0.3 * attempt),
                    max_tokens or self.config.max_tokens, schema, response_model.__name__,
                    seed=self.config.seed + attempt))
                record.prompt_tokens += out.prompt_tokens
                record.completion_tokens += out.completion_tokens
                if out.finish_reason == "length":
                    problem = f"output truncated at {max_tokens or self.config.max_tokens} tokens"
                    continue
                try:
                    value = response_model.model_validate_json(out.text)
                except ValidationError as e:
                    problem = f"output does not match the schema: {_first_error(e)}"
                    continue
                record.seconds = time.perf_counter() - started
                self._record(record)
                return value, record
            raise LLMError(f"{stage}: no valid output after {record.attempts} attempt(s); last: {problem}")
        except LLMError as e:
            record.ok, record.error = False, str(e)
            record.seconds = time.perf_counter() - started
            self._record(record)
            e.record = record
            raise
        finally:
            _DEADLINE.reset(deadline)

    def text(self, stage: str, messages: Messages, *, temperature: float = 0.0,
             max_tokens: int | None = None, case_id: str | None = None) -> tuple[str, CallRecord]:
        record = CallRecord(case_id=case_id, stage=stage, backend=self.backend, model=self.model_name)
        started = time.perf_counter()
        deadline = _DEADLINE.set(time.monotonic() + self.config.deadline)
        try:
            out = _cancellable(stage, lambda: self._complete(stage, messages, temperature,
                                                             max_tokens or self.config.max_tokens, None, "",
                                                             seed=self.config.seed))
        except LLMError as e:
            record.ok, record.error, record.seconds = False, str(e), time.perf_counter() - started
            self._record(record)
            e.record = record
            raise
        finally:
            _DEADLINE.reset(deadline)
        record.prompt_tokens, record.completion_tokens = out.prompt_tokens, out.completion_tokens
        record.seconds = time.perf_counter() - started
        if out.finish_reason == "length":
            record.error = "truncated"
        self._record(record)
        return out.text, record

    def _record(self, record: CallRecord) -> None:
        for name, value in _CONTEXT.get().items():
            if getattr(record, name, None) is None:
                setattr(record, name, value)
        if self.recorder is not None:
            self.recorder(record)


def _first_error(e: ValidationError) -> str:
    err = e.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ())) or "output"
    return f"{where}: {err.get('msg', '')}"


# Embedded (llama-cpp in process) ---------------------------------------------------------

_LOADED: dict[tuple, tuple[Any, threading.Lock]] = {}
_LOADING = threading.Lock()


def _llama(path: Path, config: LLMConfig) -> tuple[Any, threading.Lock]:
    """Load a GGUF model once per process; its lock serialises calls (llama.cpp is not reentrant)."""
    key = (str(path), config.n_ctx, config.n_threads, config.prompt_cache_bytes)
    with _LOADING:
        if key not in _LOADED:
            from llama_cpp import Llama

            # Every core writes too: llama-cpp-python's own default is half of them (measured on the
            # 1.5B with 2 cores: 64 tokens written in 3.8 s instead of 4.3 s).
            model = Llama(model_path=str(path), n_ctx=config.n_ctx, n_threads=config.n_threads or os.cpu_count(),
                          seed=config.seed, verbose=False)
            if config.prompt_cache_bytes > 0:
                # Reuse the KV state of the longest cached prefix: every prompt starts with its
                # stage's fixed instructions (measured on the 1.5B: a 1,455-token extraction
                # prompt drops from 21 s to 2 s once its prefix is cached).
                model.set_cache(_prefix_cache(config.prompt_cache_bytes))
            _LOADED[key] = (model, threading.Lock())
        return _LOADED[key]


def forget_prompts() -> int:
    """Drop every cached prompt state and the current context of the loaded embedded models
    (erasure: a cached prompt holds dialogue text). Returns how many models were cleared."""
    with _LOADING:
        loaded = list(_LOADED.values())
    for model, lock in loaded:
        with lock:
            if model.cache is not None:
                model.cache.cache_state.clear()
            model.reset()
    return len(loaded)


def close_models(timeout: float = 1.0) -> int:
    """Free every loaded embedded model now and forget it (the next call loads it again); run at
    exit. Left to ``Llama.__del__`` at interpreter shutdown, llama.cpp's memory is freed after the
    modules it calls are torn down, and each model prints a traceback. A model still answering in
    a daemon thread after ``timeout`` seconds is left alone (freeing it under the call could crash
    the process). Returns how many were closed."""
    with _LOADING:
        loaded = list(_LOADED.values())
        _LOADED.clear()
    closed = 0
    for model, lock in loaded:
        if not lock.acquire(timeout=timeout):
            continue
        # The lock stays held: a caller that fetched this model before it was forgotten waits
        # instead of calling into freed memory.
        try:
            model.close()
            closed += 1
        except Exception:  # noqa: BLE001 - nothing to report to at exit
            pass
    return closed


atexit.register(close_models)


def _prefix_cache(capacity_bytes: int):
    """llama-cpp's RAM cache of prompt states, keeping one row of logits per state instead of
    n_batch rows (151,936 floats a row for Qwen2.5: 311 MB per state, not counted against the
    capacity; seen as a 10 GB process). A cached prefix is always followed by new prompt tokens,
    which are evaluated afresh, so the dropped rows are never read."""
    from llama_cpp import LlamaRAMCache

    class PrefixCache(LlamaRAMCache):
        # For one call whose prompt does not come again after its warmed prefix (a question's
        # rewrite or answer): the cache is read when the call starts, but the state after it is
        # not saved (llama-cpp copies ~430 MB for that: 0.7 s a call on 2 cores). llama-cpp
        # checks the cache's truth before reading it and again before saving.
        read_only = False
        _read = False

        def __bool__(self):
            return not (self.read_only and self._read)

        def __getitem__(self, key):
            self._read = True
            return super().__getitem__(key)

        def __setitem__(self, key, value):
            if value.scores is not None and len(value.scores) > 1:
                value.scores = value.scores[-1:].copy()
            super().__setitem__(key, value)

    return PrefixCache(capacity_bytes=capacity_bytes)


def _prefixes(prompts: Iterable[str]) -> dict[str, list[dict]]:
    """Each prompt's fixed instructions, as ``prefix_states`` keeps them."""
    from .prompts import load_prompt

    return {name: load_prompt(name).prefix_messages() for name in prompts}


class EmbeddedLLM(LLM):
    backend = "embedded"

    def __init__(self, config: LLMConfig, model_path: Path, recorder: Recorder | None = None,
                 state_dir: Path | None = None):
        super().__init__(config, recorder)
        self.model_path = Path(model_path)
        self.state_dir = Path(state_dir) if state_dir else self.model_path.parent / "prompt-states"
        self._warmed: set[str] = set()  # stages whose prefix state is in the cache: nothing more to save

    def warm(self, prompts: Iterable[str]) -> dict[str, str]:
        from .prefix_states import warm

        model, lock = _llama(self.model_path, self.config)
        prompts = list(prompts)
        out = warm(model, lock, self.state_dir, self.model_path, self.config.n_ctx, _prefixes(prompts))
        self._warmed.update(name for name in prompts if model.cache is not None)
        return out

    def cold(self, prompts: Iterable[str]) -> list[str]:
        from .prefix_states import cold

        return cold(self.state_dir, self.model_path, self.config.n_ctx, _prefixes(prompts))

    def count_tokens(self, text: str) -> int:
        model, _ = _llama(self.model_path, self.config)
        return len(model.tokenize(text.encode("utf-8"), add_bos=False)) if text else 0

    def _complete(self, stage, messages, temperature, max_tokens, schema, schema_name, seed=0) -> Completion:
        model, lock = _llama(self.model_path, self.config)
        kwargs: dict[str, Any] = {}
        if schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": schema}
        with lock:
            cache = model.cache
            if cache is not None:
                cache.read_only, cache._read = stage in self._warmed, False
            try:
                out = model.create_chat_completion(
                    messages=messages, temperature=temperature, max_tokens=max_tokens, seed=seed, **kwargs
                )
            except ValueError as e:  # e.g. the prompt does not fit the context window
                raise LLMError(f"{stage}: {e}") from None
            finally:
                if cache is not None:
                    cache.read_only = False
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return Completion(choice["message"].get("content") or "", choice.get("finish_reason"),
                          usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0))


# OpenAI-compatible servers -----------------------------------------------------------------


class OpenAICompatLLM(LLM):
    backend = "openai"

    def __init__(self, config: LLMConfig, recorder: Recorder | None = None):
        super().__init__(config, recorder)
        if not config.base_url:
            raise LLMError("config: the openai backend needs a base_url (e.g. http://127.0.0.1:8000/v1)")
        from openai import OpenAI

        from openai import Timeout

        self.client = OpenAI(base_url=config.base_url, api_key=config.api_key, max_retries=0,
                             timeout=Timeout(config.timeout, connect=config.connect_timeout))
        self._dialect: str | None = None if config.dialect == "auto" else config.dialect

    @property
    def dialect(self) -> str:
        """json_schema for vLLM (and OpenAI), json_object + schema for llama.cpp's server."""
        if self._dialect is None:
            try:  # a quick question: the connect timeout bounds the whole of it
                owners = {m.owned_by for m in self.client.with_options(timeout=2 * self.config.connect_timeout)
                          .models.list().data}
            except Exception:
                owners = set()
            self._dialect = "json_schema" if "vllm" in owners or not owners else "json_object"
        return self._dialect

    def _complete(self, stage, messages, temperature, max_tokens, schema, schema_name, seed=0) -> Completion:
        import openai

        kwargs: dict[str, Any] = {}
        if schema is not None:
            if self.dialect == "json_schema":
                kwargs["response_format"] = {
                    "type": "json_schema", "json_schema": {"name": schema_name or "reply", "schema": schema},
                }
            else:
                kwargs["response_format"] = {"type": "json_object", "schema": schema}
        if self.dialect == "json_schema" and self.config.disable_thinking:
            kwargs["extra_body"] = {"chat_template_kwargs": {"enable_thinking": False}}
        from openai import Timeout

        deadline = _DEADLINE.get() or time.monotonic() + self.config.deadline
        late = LLMUnavailable(f"{stage}: no whole reply from {self.config.base_url} within "
                              f"{self.config.deadline:g} s (setting llm.deadline)")
        delay = 1.0
        for attempt in range(max(1, self.config.connect_retries)):
            left = deadline - time.monotonic()
            if left <= 0:
                raise late
            # Each wait ends by the deadline, and the reply is read piece by piece against it.
            client = self.client.with_options(timeout=Timeout(min(self.config.timeout, left),
                                                              connect=min(self.config.connect_timeout, left)))
            try:
                with client.chat.completions.with_streaming_response.create(
                        model=self.config.model, messages=messages, temperature=temperature,
                        max_tokens=max_tokens, seed=seed, **kwargs) as response:
                    body = _read_by(response, deadline)
                break
            except _Late:
                raise late from None
            except (openai.APIConnectionError, openai.APITimeoutError, openai.InternalServerError, _BrokeOff) as e:
                if time.monotonic() >= deadline:
                    raise late from None
                if attempt + 1 >= max(1, self.config.connect_retries):
                    raise LLMUnavailable(f"{stage}: cannot reach {self.config.base_url} ({e.__class__.__name__}: {e})") from None
                time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
                delay *= 2
            except openai.APIStatusError as e:
                said = f": {_brief(e)}" if self.config.trusted else ""
                raise LLMError(f"{stage}: the server refused the request ({e.status_code}{said})") from None
        try:
            out = json.loads(body)
            choice = out["choices"][0]
            usage = out.get("usage") or {}
            return Completion(choice["message"].get("content") or "", choice.get("finish_reason"),
                              usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise LLMError(f"{stage}: the server's reply is not a chat completion") from None


class _Late(Exception):
    """The deadline passed while the reply was arriving."""


class _BrokeOff(Exception):
    """The reply stopped arriving (a read timeout, a closed connection): retried like a refused connection."""


def _read_by(response, deadline: float) -> bytes:
    """The whole body, given up at ``deadline`` however slowly it comes (the response is closed
    on leaving its block)."""
    chunks = []
    try:
        for chunk in response.iter_bytes():
            chunks.append(chunk)
            if time.monotonic() > deadline:
                raise _Late
    except _Late:
        raise
    except Exception as e:  # the HTTP library's own errors (ReadTimeout, RemoteProtocolError)
        if time.monotonic() > deadline:
            raise _Late from None
        raise _BrokeOff(f"{e.__class__.__name__}: {e}") from None
    return b"".join(chunks)


def _brief(e: Exception) -> str:
    text = str(getattr(e, "message", "") or e)
    return text if len(text) < 300 else text[:300] + "…"


# Scripted (tests, demos) -------------------------------------------------------------------


class ScriptedLLM(LLM):
    """Replies from a script: strings, dicts (sent as JSON) or callables(stage, messages) -> either.

    A reply of ``("length", text)`` is reported as truncated. Every prompt it received is kept in
    ``self.prompts`` as (stage, messages).
    """

    backend = "scripted"

    def __init__(self, replies: Iterable[Any] = (), config: LLMConfig | None = None,
                 recorder: Recorder | None = None):
        super().__init__(config or LLMConfig(backend="scripted", model="scripted"), recorder)
        self.replies = list(replies)
        self.prompts: list[tuple[str, Messages]] = []
        self.requests: list[dict] = []  # what each call asked for (sampling), for tests

    def _complete(self, stage, messages, temperature, max_tokens, schema, schema_name, seed=0) -> Completion:
        self.prompts.append((stage, messages))
        self.requests.append({"stage": stage, "temperature": temperature, "seed": seed})
        if not self.replies:
            raise LLMError(f"{stage}: the script has no reply left")
        reply = self.replies.pop(0)
        if callable(reply):
            reply = reply(stage, messages)
        finish = "stop"
        if isinstance(reply, tuple):
            finish, reply = reply
        if isinstance(reply, Exception):
            raise reply
        text = reply if isinstance(reply, str) else json.dumps(reply)
        prompt_tokens = sum(len(m["content"].split()) for m in messages)
        return Completion(text, finish, prompt_tokens, len(text.split()))


class _CheckReply(BaseModel):
    model_config = {"extra": "forbid"}
    feeling: Literal["tired", "happy", "angry", "unknown"]
    hours_of_sleep: int


def health_check(llm: LLM) -> dict:
    """One small structured call: is the backend there, and how fast does it answer?"""
    started = time.perf_counter()
    reply, call = llm.structured(
        "check",
        [{"role": "system", "content": "Reply with JSON only."},
         {"role": "user", "content": 'Maya said: "I only slept four hours, I am exhausted." '
                                     "How does she feel and how many hours did she sleep?"}],
        _CheckReply, temperature=0.0, max_tokens=64)
    return {"backend": call.backend, "model": call.model, "seconds": round(time.perf_counter() - started, 2),
            "call_seconds": round(call.seconds, 2), "prompt_tokens": call.prompt_tokens,
            "completion_tokens": call.completion_tokens, "reply": reply.model_dump()}


def make_llm(config: LLMConfig, model_dir: str | Path, recorder: Recorder | None = None) -> LLM:
    """The backend the config names; an embedded model is joined from its packages if needed."""
    if config.backend == "openai":
        return OpenAICompatLLM(config, recorder)
    if config.backend == "scripted":
        return scripted_from_file(config.model, config, recorder)
    from .modelfiles import resolve_model

    return EmbeddedLLM(config, resolve_model(config.model, model_dir), recorder)


def scripted_from_file(path: str | Path, config: LLMConfig | None = None, recorder: Recorder | None = None) -> ScriptedLLM:
    """A scripted backend from a JSON file {stage: reply}: every call of a stage gets its reply.
    For demos and app tests (``llm.backend = "scripted"``, ``llm.model = <file>``). An optional
    ``"_delay"`` (seconds) is waited before each reply, so a scripted build lasts long enough to watch."""
    replies = json.loads(Path(path).read_text(encoding="utf-8"))
    delay = float(replies.pop("_delay", 0) or 0)

    def reply(stage: str, messages: Messages) -> Any:
        time.sleep(delay)
        if stage not in replies:
            raise LLMError(f"{stage}: the script file has no reply for this stage")
        return replies[stage]

    llm = ScriptedLLM([], config=config, recorder=recorder)
    llm.replies = _Forever(reply)  # type: ignore[assignment]
    return llm


class _Forever(list):
    """A reply list that never runs out."""

    def __init__(self, reply: Callable):
        super().__init__([reply])

    def pop(self, index: int = -1):  # noqa: D401 - list protocol
        return self[0]
