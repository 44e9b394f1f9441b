"""Named profiles: setting values laid over the defaults before the config file is read.

``small-model`` is the defaults as they stand, tuned for the embedded Qwen2.5 1.5B on a CPU.
``paper`` is the method as the paper writes it: its parameters pinned (so that a change of the
defaults does not move it) and every setting beyond the paper at the value its declaration names
(``setting(..., paper=...)`` in config.py; docs/method.md, "Beyond the paper", says why each exists).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from .setting import fields, merged, nested, paper_value

# The paper's parameters: BWS with W = 20, tau = 0.35, lambda = 0.8, B = 1, K by dataset, its temperatures.
PAPER_PARAMETERS: dict[str, Any] = {
    "segmentation": {"segmentation": "bws", "window_size": 20, "min_forward_step": 1},
    "retrieval": {"tau": 0.35, "lam": 0.8, "link_expansion": 1, "top_k": 10, "top_k_locomo": 25},
    "construction": {"construction_temperature": 0.7},
    "answer": {"answer_temperature": 0.0},
}


PROFILES = ("small-model", "paper")


def default_profile(backend: str) -> str:
    """The profile when none is named: a server (an OpenAI-compatible one, typically a larger model
    on a GPU) runs the paper's method; the embedded small model needs the repairs."""
    return "paper" if backend == "openai" else "small-model"


class UnknownProfile(ValueError):
    pass


def profile_values(name: str, model: type[BaseModel]) -> dict[str, Any]:
    """The values profile ``name`` sets over the defaults of ``model`` (the Settings class), a
    table per phase."""
    if name == "small-model":
        return {}
    if name == "paper":
        values = merged({}, PAPER_PARAMETERS)  # a copy: the caller may change it
        for path, info in fields(model):
            beyond, value = paper_value(info)
            if beyond:
                values = merged(values, nested(path, value))
        return values
    raise UnknownProfile(f"no profile {name!r}; profiles: {', '.join(PROFILES)}")
