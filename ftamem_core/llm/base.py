"""LLM backends behind one interface: structured calls (messages + JSON schema -> validated
pydantic object) and text calls, each recorded as a CallRecord.

Backends, one module each: ``embedded`` (llama-cpp in this process, the default), ``openai_compat``
(any OpenAI-compatible server: vLLM, llama.cpp's server), ``scripted`` (replies given in advance,
for tests and demos); ``factory.make_llm`` picks the one a configuration names.

Every structured call is constrained by the response model's JSON schema (enums included);
invalid or truncated output is retried ``max_retries`` times, then fails naming the stage.
"""

from __future__ import annotations

import contextvars
import threading
import time
from abc import ABC, abstractmethod
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
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
    def _complete(
        self,
        stage: str,
        messages: Messages,
        temperature: float,
        max_tokens: int,
        schema: dict | None,
        schema_name: str,
        seed: int = 0,
    ) -> Completion:
        """One raw completion; raises LLMUnavailable when the backend cannot be reached."""

    def structured(
        self,
        stage: str,
        messages: Messages,
        response_model: type[T],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        case_id: str | None = None,
    ) -> tuple[T, CallRecord]:
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
                out = _cancellable(
                    stage,
                    lambda: self._complete(
                        stage,
                        messages,
                        temperature if attempt == 0 else max(temperature, 0.3 * attempt),
                        max_tokens or self.config.max_tokens,
                        schema,
                        response_model.__name__,
                        seed=self.config.seed + attempt,
                    ),
                )
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

    def text(
        self,
        stage: str,
        messages: Messages,
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        case_id: str | None = None,
    ) -> tuple[str, CallRecord]:
        record = CallRecord(case_id=case_id, stage=stage, backend=self.backend, model=self.model_name)
        started = time.perf_counter()
        deadline = _DEADLINE.set(time.monotonic() + self.config.deadline)
        try:
            out = _cancellable(
                stage,
                lambda: self._complete(
                    stage, messages, temperature, max_tokens or self.config.max_tokens, None, "", seed=self.config.seed
                ),
            )
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


class _CheckReply(BaseModel):
    model_config = {"extra": "forbid"}
    feeling: Literal["tired", "happy", "angry", "unknown"]
    hours_of_sleep: int


def health_check(llm: LLM) -> dict:
    """One small structured call: is the backend there, and how fast does it answer?"""
    started = time.perf_counter()
    reply, call = llm.structured(
        "check",
        [
            {"role": "system", "content": "Reply with JSON only."},
            {
                "role": "user",
                "content": 'Maya said: "I only slept four hours, I am exhausted." '
                "How does she feel and how many hours did she sleep?",
            },
        ],
        _CheckReply,
        temperature=0.0,
        max_tokens=64,
    )
    return {
        "backend": call.backend,
        "model": call.model,
        "seconds": round(time.perf_counter() - started, 2),
        "call_seconds": round(call.seconds, 2),
        "prompt_tokens": call.prompt_tokens,
        "completion_tokens": call.completion_tokens,
        "reply": reply.model_dump(),
    }
