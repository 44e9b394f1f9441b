"""Turn-level information density (the paper's Table 1 and its density-gain analysis, Table 4).

Each turn is annotated by the LLM (``prompt_files/density.md``: factual, entity, temporal and
support-process anchor counts, implicitness 1-3, a low-information flag), one call per turn,
cached in a JSONL file so an interrupted annotation resumes. Dialogue-level density is the mean
per turn. ``gain_correlations`` relates each dialogue's F1 gain of one method over another to
each density field (``stats.correlation``).
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..llm.base import LLM, call_context
from ..models import CaseDocument
from ..llm.prompts import load_prompt
from .stats import correlation

FIELDS = (
    "factual_anchors",
    "entity_anchors",
    "temporal_anchors",
    "support_process_anchors",
    "implicitness",
    "low_information",
)


class DensityReply(BaseModel):
    model_config = ConfigDict(extra="forbid")
    factual_anchors: int = Field(..., ge=0, le=100)
    entity_anchors: int = Field(..., ge=0, le=100)
    temporal_anchors: int = Field(..., ge=0, le=100)
    support_process_anchors: int = Field(..., ge=0, le=100)
    implicitness: int = Field(..., ge=1, le=3)
    low_information: int = Field(..., ge=0, le=1)


def annotate(docs: list[CaseDocument], llm: LLM, path: str | Path, progress=None) -> list[dict]:
    """Every turn of ``docs`` annotated (already annotated turns in ``path`` are kept)."""
    path = Path(path)
    done = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
                done[(row["case"], row["turn"])] = row
            except (ValueError, KeyError):
                continue
    prompt = load_prompt("density")
    with open(path, "a", encoding="utf-8") as f:
        for doc in docs:
            n = 0
            for session in doc.sessions:
                for turn in session.turns:
                    key = (doc.case.id, turn.original_id or f"{session.session.source_id}:{n}")
                    n += 1
                    if key in done:
                        continue
                    messages = prompt.messages(
                        session_time=session.session.time or session.session.time_text or "unknown",
                        speaker=turn.speaker or turn.role,
                        turn=turn.text,
                    )
                    with call_context(case_id=doc.case.id):
                        reply, _ = llm.structured("density", messages, DensityReply, temperature=0.0, max_tokens=120)
                    done[key] = {"case": key[0], "turn": key[1], **reply.model_dump()}
                    f.write(json.dumps(done[key]) + "\n")
                    f.flush()
                    if progress:
                        progress(key)
    wanted = {doc.case.id for doc in docs}
    return [r for r in done.values() if r["case"] in wanted]


def per_dialogue(rows: list[dict]) -> dict[str, dict]:
    """Mean of each field per turn, per dialogue (case), with the total of the four anchors."""
    out: dict[str, dict] = {}
    for case in sorted({r["case"] for r in rows}):
        mine = [r for r in rows if r["case"] == case]
        means = {f: sum(r[f] for r in mine) / len(mine) for f in FIELDS}
        means["total_anchors"] = sum(means[f] for f in FIELDS[:4])
        out[case] = {"turns": len(mine), **{k: round(v, 4) for k, v in means.items()}}
    return out


def dialogue_gain(questions: list[dict], a: str, b: str, metric: str, relative: bool = True) -> dict[str, float]:
    """Per dialogue: the mean ``metric`` of method ``a`` minus ``b``'s, divided by ``b``'s when
    ``relative`` (dialogues where ``b`` scores 0 are left out of a relative gain)."""
    out = {}
    for case in sorted({r["case"] for r in questions}):
        mean = {}
        for m in (a, b):
            values = [
                r[metric] for r in questions if r["case"] == case and r["method"] == m and r.get(metric) is not None
            ]
            mean[m] = sum(values) / len(values) if values else None
        if mean[a] is None or mean[b] is None or (relative and mean[b] == 0):
            continue
        out[case] = (mean[a] - mean[b]) / mean[b] if relative else mean[a] - mean[b]
    return out


def gain_correlations(density: dict[str, dict], gain: dict[str, float], **kwargs) -> dict:
    cases = sorted(set(density) & set(gain))
    fields = (*FIELDS, "total_anchors")
    return {
        "dialogues": cases,
        "correlations": {
            f: correlation([density[c][f] for c in cases], [gain[c] for c in cases], **kwargs) for f in fields
        }
        if len(cases) >= 3
        else {},
        "note": "" if len(cases) >= 3 else f"{len(cases)} dialogues: at least three are needed",
    }
