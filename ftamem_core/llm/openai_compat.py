"""The OpenAI-compatible backend: any server that speaks the chat completions API (vLLM,
llama.cpp's server), each reply read whole by the call's deadline."""

from __future__ import annotations

import json
import time
from typing import Any

from ..config import LLMConfig
from .base import _DEADLINE, LLM, Completion, LLMError, LLMUnavailable, Recorder


class OpenAICompatLLM(LLM):
    backend = "openai"

    def __init__(self, config: LLMConfig, recorder: Recorder | None = None):
        super().__init__(config, recorder)
        if not config.base_url:
            raise LLMError("config: the openai backend needs a base_url (e.g. http://127.0.0.1:8000/v1)")
        from openai import OpenAI

        from openai import Timeout

        self.client = OpenAI(
            base_url=config.base_url,
            api_key=config.api_key,
            max_retries=0,
            timeout=Timeout(config.timeout, connect=config.connect_timeout),
        )
        self._dialect: str | None = None if config.dialect == "auto" else config.dialect

    @property
    def dialect(self) -> str:
        """json_schema for vLLM (and OpenAI), json_object + schema for llama.cpp's server."""
        if self._dialect is None:
            try:  # a quick question: the connect timeout bounds the whole of it
                owners = {
                    m.owned_by
                    for m in self.client.with_options(timeout=2 * self.config.connect_timeout).models.list().data
                }
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
                    "type": "json_schema",
                    "json_schema": {"name": schema_name or "reply", "schema": schema},
                }
            else:
                kwargs["response_format"] = {"type": "json_object", "schema": schema}
        if self.dialect == "json_schema" and self.config.disable_thinking:
            kwargs["extra_body"] = {"chat_template_kwargs": {"enable_thinking": False}}
        from openai import Timeout

        deadline = _DEADLINE.get() or time.monotonic() + self.config.deadline
        late = LLMUnavailable(
            f"{stage}: no whole reply from {self.config.base_url} within "
            f"{self.config.deadline:g} s (setting llm.deadline)"
        )
        delay = 1.0
        for attempt in range(max(1, self.config.connect_retries)):
            left = deadline - time.monotonic()
            if left <= 0:
                raise late
            # Each wait ends by the deadline, and the reply is read piece by piece against it.
            client = self.client.with_options(
                timeout=Timeout(min(self.config.timeout, left), connect=min(self.config.connect_timeout, left))
            )
            try:
                with client.chat.completions.with_streaming_response.create(
                    model=self.config.model,
                    messages=messages,
                    temperature=temperature,
                    max_tokens=max_tokens,
                    seed=seed,
                    **kwargs,
                ) as response:
                    body = _read_by(response, deadline)
                break
            except _Late:
                raise late from None
            except (openai.APIConnectionError, openai.APITimeoutError, openai.InternalServerError, _BrokeOff) as e:
                if time.monotonic() >= deadline:
                    raise late from None
                if attempt + 1 >= max(1, self.config.connect_retries):
                    raise LLMUnavailable(
                        f"{stage}: cannot reach {self.config.base_url} ({e.__class__.__name__}: {e})"
                    ) from None
                time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
                delay *= 2
            except openai.APIStatusError as e:
                said = f": {_brief(e)}" if self.config.trusted else ""
                raise LLMError(f"{stage}: the server refused the request ({e.status_code}{said})") from None
        try:
            out = json.loads(body)
            choice = out["choices"][0]
            usage = out.get("usage") or {}
            return Completion(
                choice["message"].get("content") or "",
                choice.get("finish_reason"),
                usage.get("prompt_tokens") or 0,
                usage.get("completion_tokens") or 0,
            )
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
