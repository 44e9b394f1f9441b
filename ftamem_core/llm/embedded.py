"""The embedded backend: llama-cpp in this process, one loaded model per GGUF file and settings,
guarded by a lock (llama.cpp is not reentrant), with an in-memory cache of prompt prefixes."""

from __future__ import annotations

import atexit
import os
import threading
from pathlib import Path
from typing import Any, Iterable

from ..config import LLMConfig
from .base import LLM, Completion, LLMError, Recorder

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
            model = Llama(
                model_path=str(path),
                n_ctx=config.n_ctx,
                n_threads=config.n_threads or os.cpu_count(),
                seed=config.seed,
                verbose=False,
            )
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

    def __init__(
        self, config: LLMConfig, model_path: Path, recorder: Recorder | None = None, state_dir: Path | None = None
    ):
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
        return Completion(
            choice["message"].get("content") or "",
            choice.get("finish_reason"),
            usage.get("prompt_tokens", 0),
            usage.get("completion_tokens", 0),
        )
