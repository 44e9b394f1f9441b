"""The LoCoMo splits every figure is reported on: defaults, thresholds and rules are chosen on
``dev``; ``test`` is reported once per change of defaults and never chosen from. Both use the
conversations' first three sessions (the size a 2-core machine builds in minutes)."""

from __future__ import annotations

SPLITS = {"dev": ("conv-26", "conv-30", "conv-41", "conv-42", "conv-44"), "test": ("conv-43", "conv-47", "conv-50")}
SESSIONS = 3


def split_of(case_id: str) -> str:
    return next((name for name, cases in SPLITS.items() if case_id in cases), "other")
