"""How long a build takes on this machine: seconds per dialogue turn measured from this store's
finished builds with the same model, else a figure measured on the project's 2-core machine."""

from __future__ import annotations

from ..storage.store import Store

# Seconds of construction per turn on 2 cores: the 1.5B on the bundled sample (git history of the README, "Construction
# cost per variant", BWS, W=20); the 0.5B on the ES-MemEval sample with the coverage pass, a setting
# since removed (1,250 s for 30 turns, the construction model test's build then; an upper bound now).
MEASURED = {"qwen2.5-1.5b": (24.4, "the bundled sample"), "qwen2.5-0.5b": (41.7, "the ES-MemEval sample")}


def seconds_per_turn(store: Store, model: str) -> tuple[float, str] | None:
    """(seconds per turn, where the figure comes from), or None when nothing is known."""
    seconds, turns = store.built_seconds_and_turns(model)
    if turns and seconds:
        return seconds / turns, f"measured here on {turns} turns built with {model}"
    for name, (seconds, where) in MEASURED.items():
        if name in model:
            return seconds, f"measured with {name} on {where} on a 2-core machine"
    return None


def describe(seconds: float) -> str:
    minutes = seconds / 60
    return f"about {seconds:.0f} s" if minutes < 2 else f"about {minutes:.0f} minutes"


def ask_seconds(store: Store, model: str, recent: int = 20) -> dict[str, float]:
    """Mean seconds of an ask's model calls (rewrite, answer) with this model, over its ``recent``
    calls of each stage recorded in this store; a stage never timed here is left out."""
    out = {}
    for stage in ("rewrite", "answer"):
        seconds = store.recent_call_seconds(model, stage, recent)
        if seconds:
            out[stage] = sum(seconds) / len(seconds)
    return out
