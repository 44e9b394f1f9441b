"""The backend a configuration names."""

from __future__ import annotations

from pathlib import Path

from ..config import LLMConfig
from .base import LLM, Recorder
from .embedded import EmbeddedLLM
from .openai_compat import OpenAICompatLLM
from .scripted import scripted_from_file


def make_llm(config: LLMConfig, model_dir: str | Path, recorder: Recorder | None = None) -> LLM:
    """The backend the config names; an embedded model is joined from its packages if needed."""
    if config.backend == "openai":
        return OpenAICompatLLM(config, recorder)
    if config.backend == "scripted":
        return scripted_from_file(config.model, config, recorder)
    from .modelfiles import resolve_model

    return EmbeddedLLM(config, resolve_model(config.model, model_dir), recorder)
