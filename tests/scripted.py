"""A scripted stand-in for the model, answering each construction stage from the prompt it gets,
and a deterministic bag-of-words embedder. Both make unit tests of the pipeline fast and exact."""

import hashlib
import re

import numpy as np

from ftamem_core.llm.scripted import ScriptedLLM

TURN = re.compile(r"^\[(\d+)\]", re.M)


def turn_indices(messages) -> list[int]:
    return [int(m) for m in TURN.findall(messages[-1]["content"])]


def section(messages, title: str) -> str:
    """What follows ``title`` in the user message, without the <data> block markers."""
    text = messages[-1]["content"]
    return re.sub(r"</?data>", "", text.split(title, 1)[1]) if title in text else ""


class Pipeline:
    """Default answers per stage; override any of them per test."""

    def __init__(self, seg_size: int = 3):
        self.seg_size = seg_size
        self.calls: list[str] = []

    def segmentation(self, messages):
        idx = turn_indices([{"content": section(messages, "\nTurns:\n")}])
        spans = [[idx[i], idx[min(i + self.seg_size, len(idx)) - 1]] for i in range(0, len(idx), self.seg_size)]
        return {"segments": [{"turn_span": s, "boundary_trigger": "topic_change"} for s in spans]}

    def extraction(self, messages):
        idx = turn_indices([{"content": section(messages, "Fragment turns:")}])
        return {"memory_units": [unit(f"Fact about turns {idx[0]}-{idx[-1]}", idx[0], idx[-1])]}

    def linking(self, messages):
        """Each new unit updates its most similar older unit."""
        pairs = re.findall(r"^(m\d+): (m\d+)", section(messages, "Pairs to judge"), re.M)
        return {
            "memory_updates": [
                {
                    "new_id": new,
                    "memory_id": old,
                    "relation": "updates",
                    "lifecycle_status": "completed",
                    "completeness": "complete",
                    "relation_confidence": "high",
                }
                for new, old in pairs
            ]
        }

    def longitudinal(self, messages):
        units = section(messages, "units:")
        ids = re.findall(r'"memory_id": "(m\d+)"', units)
        fact = re.findall(r'"text": "([^"]+)"', units)[0]
        return {
            "semantic": [
                {"replaces": "none", "kind": "situation", "text": f"Situation: {fact}", "source_unit_ids": ids[:1]}
            ],
            "support": [
                {
                    "replaces": "none",
                    "strategy": "listening",
                    "outcome": "helped",
                    "text": f"Listening about: {fact}",
                    "source_unit_ids": ids[:1],
                }
            ],
        }

    def __call__(self, stage, messages):
        self.calls.append(stage)
        return getattr(self, stage)(messages)

    def llm(self, n: int = 10_000) -> ScriptedLLM:
        return ScriptedLLM([self] * n)


def unit(
    text,
    first,
    last,
    status="complete",
    completes="none",
    content_type="event",
    event_time="unknown",
    expression="unknown",
    orientation="past",
):
    return {
        "completes": completes,
        "summary": text[:20],
        "content_type": content_type,
        "time_orientation": orientation,
        "event_time_expression": expression,
        "event_time": event_time,
        "content": {
            "text": text,
            "participants": ["Maya"],
            "emotion_or_state": "tired",
            "intention_or_plan": "unknown",
            "relation_cues": "unknown",
        },
        "evidence_turn_span": [first, last],
        "status": status,
    }


class HashEmbedder:
    """Bag-of-words vectors: texts sharing words are similar; no model needed."""

    dim = 384

    def encode(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-9)
