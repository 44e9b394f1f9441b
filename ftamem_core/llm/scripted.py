"""The scripted backend: replies given in advance, for tests and demos (a test double: no model runs)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable, Iterable

from ..config import LLMConfig
from .base import LLM, Completion, LLMError, Messages, Recorder


class ScriptedLLM(LLM):
    """Replies from a script: strings, dicts (sent as JSON) or callables(stage, messages) -> either.

    A reply of ``("length", text)`` is reported as truncated. Every prompt it received is kept in
    ``self.prompts`` as (stage, messages).
    """

    backend = "scripted"

    def __init__(self, replies: Iterable[Any] = (), config: LLMConfig | None = None, recorder: Recorder | None = None):
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


def scripted_from_file(
    path: str | Path, config: LLMConfig | None = None, recorder: Recorder | None = None
) -> ScriptedLLM:
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
