"""Recorded model replies, replayed: a construction change measured on the same model output.

A build of a LoCoMo case takes 15-35 minutes with the embedded model, and two builds of one case
with one seed differ by 3-5 units wherever a prompt or a check changes what the model is asked
next. ``Replaying`` wraps a backend: it writes every raw reply to a JSON Lines file
(``record``), and serves the replies of chosen stages from such a file in their order
(``replay``), asking the wrapped backend for everything else. Replaying segmentation and
extraction keeps the fragments and the model's units; the checks after them run again, and the
linking and longitudinal calls are made again. A replayed reply is the one recorded, whatever the
prompt is now; one that no longer fits the schema is retried by the backend, as any invalid reply
is. Costs of replayed calls are the recorded ones. For benchmarks (``benchmarks/evidence.py
--record / --replay``), not the app.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Iterable

from .base import LLM, Completion, Messages


class Replaying(LLM):
    def __init__(self, inner: LLM, record: Path | None = None, replay: Path | None = None,
                 stages: Iterable[str] = ("segmentation", "extraction")):
        super().__init__(inner.config, inner.recorder)
        self.inner, self.backend = inner, inner.backend
        self.record_path = Path(record) if record else None
        self.queues: dict[str, deque[dict]] = {stage: deque() for stage in stages}
        if replay is not None:
            for line in Path(replay).read_text(encoding="utf-8").splitlines():
                reply = json.loads(line)
                if reply["stage"] in self.queues:
                    self.queues[reply["stage"]].append(reply)
        self.replayed = 0  # replies served from the file

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def warm(self, prompts):
        return self.inner.warm(prompts)

    def cold(self, prompts):
        return self.inner.cold(prompts)

    def _complete(self, stage: str, messages: Messages, temperature: float, max_tokens: int,
                  schema: dict | None, schema_name: str, seed: int = 0) -> Completion:
        queue = self.queues.get(stage)
        if queue:
            reply = queue.popleft()
            self.replayed += 1
            out = Completion(reply["text"], reply["finish_reason"], reply["prompt_tokens"], reply["completion_tokens"])
        else:
            out = self.inner._complete(stage, messages, temperature, max_tokens, schema, schema_name, seed)
        if self.record_path is not None:
            with self.record_path.open("a", encoding="utf-8") as f:
                f.write(json.dumps({"stage": stage, "text": out.text, "finish_reason": out.finish_reason,
                                    "prompt_tokens": out.prompt_tokens, "completion_tokens": out.completion_tokens}) + "\n")
        return out
