"""Recorded model replies, replayed: a construction change measured on the same model output.

A build of a LoCoMo case takes 15-35 minutes with the embedded model, and two builds of one case
with one seed differ by 3-5 units wherever a prompt or a check changes what the model is asked
next. ``Replaying`` wraps a backend: it writes every raw reply to a JSON Lines file
(``record``), with a digest of what was asked (stage, messages, schema, seed), and serves the
replies of chosen stages from such a file (``replay``), asking the wrapped backend for
everything else. Costs of replayed calls are the recorded ones. For benchmarks
(``benchmarks/evidence.py --record / --replay``, ``benchmarks/switches.py``, ``ftamem eval
--record / --replay``), not the app.

A recorded reply is served only to the request it answered: one whose prompt, schema or attempt
differs (a changed check changes the carried partials an extraction prompt shows, the units a
linking prompt judges) is asked of the backend, and counted as live. A recording made before
digests were kept is served in its order, whatever the prompt is now (counted as ``in order``:
unverified); replaying all its stages with the settings it was recorded with reproduces the
recorded build, and recording that replay gives a file with digests.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter, deque
from pathlib import Path
from typing import Iterable

from .base import LLM, Completion, Messages

_WRITING = threading.Lock()  # one line at a time into a recording, from any thread


def request_key(stage: str, messages: Messages, schema: dict | None, seed: int) -> str:
    """What a reply answers: a retry (another seed) or a changed schema is another request."""
    text = json.dumps([stage, messages, schema, seed], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def by_stage(served: Counter[tuple[str, str]]) -> dict[str, dict[str, int]]:
    """(stage, how) counts as {stage: {how: n}}, in order."""
    out: dict[str, dict[str, int]] = {}
    for (stage, how), n in sorted(served.items()):
        out.setdefault(stage, {})[how] = n
    return out


class Recording:
    """A file's replies, each served once: by request where the file names it, else in order
    (``in_order``). Load it once for several builds (cases) replayed from one file, so that replies
    kept in order go on where the last build stopped. A line cut by a kill is skipped."""

    def __init__(self, path: Path, stages: Iterable[str] = ("segmentation", "extraction"), in_order: bool = True):
        self.stages = set(stages)
        self.by_request: dict[str, deque[dict]] = {}
        self.in_order: dict[str, deque[dict]] = {stage: deque() for stage in self.stages}
        self._lock = threading.Lock()  # questions answered side by side share one recording
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            try:
                reply = json.loads(line)
            except ValueError:
                continue
            if reply.get("stage") not in self.stages:
                continue
            if "request" in reply:
                self.by_request.setdefault(reply["request"], deque()).append(reply)
            elif in_order:
                self.in_order[reply["stage"]].append(reply)

    def take(self, stage: str, key: str, made: dict | None = None) -> tuple[dict | None, str]:
        """The reply for this request and how it was found ("replayed", "in order"), or (None,
        "live"); a reply recorded with another model, temperature or token limit than ``made``
        is not served."""
        with self._lock:
            if stage in self.stages:
                found = self.by_request.get(key)
                if found and (made is None or found[0].get("made", made) == made):
                    return found.popleft(), "replayed"
                if self.in_order[stage]:
                    return self.in_order[stage].popleft(), "in order"
            return None, "live"


class Replaying(LLM):
    def __init__(
        self,
        inner: LLM,
        record: Path | None = None,
        replay: Path | Recording | None = None,
        stages: Iterable[str] = ("segmentation", "extraction"),
    ):
        super().__init__(inner.config, inner.recorder)
        self.inner, self.backend = inner, inner.backend
        self.record_path = Path(record) if record else None
        if replay is not None and not isinstance(replay, Recording):
            replay = Recording(replay, stages)
        self.recording = replay
        self.served: Counter[tuple[str, str]] = Counter()  # (stage, "replayed" | "in order" | "live")

    @property
    def replayed(self) -> int:
        """Replies served from the file."""
        return sum(n for (_, how), n in self.served.items() if how != "live")

    def served_by_stage(self) -> dict[str, dict[str, int]]:
        return by_stage(self.served)

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def warm(self, prompts):
        return self.inner.warm(prompts)

    def cold(self, prompts):
        return self.inner.cold(prompts)

    def _complete(
        self,
        stage: str,
        messages: Messages,
        temperature: float,
        max_tokens: int,
        schema: dict | None,
        schema_name: str,
        seed: int = 0,
    ) -> Completion:
        key = request_key(stage, messages, schema, seed)
        made = {"model": self.inner.model_name, "temperature": temperature, "max_tokens": max_tokens}
        reply, how = self.recording.take(stage, key, made) if self.recording else (None, "live")
        self.served[(stage, how)] += 1
        if reply is not None:
            out = Completion(reply["text"], reply["finish_reason"], reply["prompt_tokens"], reply["completion_tokens"])
        else:
            out = self.inner._complete(stage, messages, temperature, max_tokens, schema, schema_name, seed)
        if self.record_path is not None:
            line = {
                "stage": stage,
                "request": key,
                "made": made,
                "text": out.text,
                "finish_reason": out.finish_reason,
                "prompt_tokens": out.prompt_tokens,
                "completion_tokens": out.completion_tokens,
            }
            with _WRITING, self.record_path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(line) + "\n")
        return out
