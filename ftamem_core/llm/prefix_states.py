"""Warm prompt prefixes for the embedded model, kept on disk.

Every call of a stage begins with the same fixed instructions (``Prompt.prefix_messages``). The
in-process prompt cache (``embedded._prefix_cache``) reuses them from the second call on; a new
process, such as one ``ftamem ask`` or the app's first question, would read them again (about
5-8 s each for the 1.5B on 2 cores). ``warm`` evaluates a prefix once, saves the model's state
after it to ``<model dir>/prompt-states/``, and later puts the saved state in the prompt cache.

A file holds the state of prompt text only: the prefix ends where the first placeholder begins,
so no dialogue, memory or question is ever written there (erasure has nothing to remove). A file
is named by a digest of everything its state depends on (model file, llama-cpp version, context
size, the prefix); a file that does not read back whole is ignored and written again.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

_LOADED: dict[Path, Any] = {}  # file -> its LlamaState, read once per process
_LOCK = threading.Lock()


def state_file(folder: Path, model_path: Path, n_ctx: int, name: str, messages: list[dict]) -> Path:
    import llama_cpp

    key = json.dumps(
        [Path(model_path).name, Path(model_path).stat().st_size, llama_cpp.__version__, n_ctx, messages], sort_keys=True
    )
    return Path(folder) / f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.npz"


def write_state(path: Path, state: Any) -> None:
    """The state (its last row of logits) to ``path``, whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    blob = np.frombuffer(state.llama_state, dtype=np.uint8)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        np.savez(
            f,
            input_ids=np.asarray(state.input_ids[: state.n_tokens], dtype=np.intc),
            scores=np.asarray(state.scores[-1:], dtype=np.single),
            llama_state=blob,
            n_tokens=np.int64(state.n_tokens),
            seed=np.int64(state.seed),
            digest=np.frombuffer(hashlib.sha256(blob.tobytes()).digest(), dtype=np.uint8),
        )
    os.replace(tmp, path)


def read_state(path: Path, n_ctx: int) -> Any | None:
    """The state saved in ``path``, or None when there is none or it does not read back whole.
    Its tokens fill the start of an ``n_ctx`` buffer, as a context's own state holds them."""
    from llama_cpp.llama import LlamaState

    try:
        with np.load(path, allow_pickle=False) as z:
            blob = z["llama_state"].tobytes()
            if hashlib.sha256(blob).digest() != z["digest"].tobytes():
                return None
            n_tokens = int(z["n_tokens"])
            if len(z["input_ids"]) != n_tokens or n_tokens >= n_ctx:
                return None
            ids = np.zeros(n_ctx, dtype=np.intc)
            ids[:n_tokens] = z["input_ids"]
            return LlamaState(
                input_ids=ids,
                scores=z["scores"].copy(),
                n_tokens=n_tokens,
                llama_state=blob,
                llama_state_size=len(blob),
                seed=int(z["seed"]),
            )
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None


def _held(model: Any, state: Any) -> bool:
    """Whether the prompt cache (or the context itself) already starts with the state's tokens."""
    from llama_cpp import Llama

    want = state.input_ids[: state.n_tokens - 1].tolist()  # the last one was generated after the prefix
    held = [list(k) for k in model.cache.cache_state.keys()] + [model._input_ids.tolist()]
    return any(Llama.longest_token_prefix(k, want) >= len(want) for k in held)


def cold(folder: Path, model_path: Path, n_ctx: int, prefixes: dict[str, list[dict]]) -> list[str]:
    """The prompts whose prefix state is not saved in ``folder`` yet (told without the model)."""
    return [
        name
        for name, messages in prefixes.items()
        if not state_file(folder, model_path, n_ctx, name, messages).is_file()
    ]


def warm(
    model: Any, lock: threading.Lock, folder: Path, model_path: Path, n_ctx: int, prefixes: dict[str, list[dict]]
) -> dict[str, str]:
    """Put each prompt's prefix state in ``model``'s prompt cache: from memory, from disk, or
    evaluated now and saved. Returns, per prompt, where its state came from."""
    if model.cache is None:
        return {name: "prompt cache off" for name in prefixes}
    out = {}
    for name, messages in prefixes.items():
        path = state_file(folder, model_path, n_ctx, name, messages)
        with _LOCK:
            state, source = _LOADED.get(path), "memory"
            if state is None:
                state, source = read_state(path, n_ctx), "disk"
        with lock:
            if state is None:
                model.create_chat_completion(messages=messages, max_tokens=1, temperature=0.0)
                state, source = model.save_state(), "evaluated"
                state.scores = state.scores[-1:].copy()  # one row per token would be ~0.6 MB a token
                write_state(path, state)
            if not _held(model, state):
                model.cache[state.input_ids[: state.n_tokens].tolist()] = state
            else:
                source += " (held)"
        with _LOCK:
            _LOADED[path] = state
        out[name] = source
    return out
