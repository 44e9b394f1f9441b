"""Pydantic records for everything the store holds and the LLM stages exchange.

Enumerations are the paper's (prompt templates in the appendix); they are ``Literal`` types so
that every JSON schema handed to a model carries them.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Literal

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

Role = Literal["user", "assistant", "other"]

BoundaryTrigger = Literal[
    "session_start",
    "topic_change",
    "goal_change",
    "emotion_shift",
    "new_time_reference",
    "new_person_or_relationship",
    "problem_to_support_transition",
    "support_strategy_transition",
    "homework_or_plan_creation",
    "correction_or_contradiction",
    "risk_signal",
    "unknown",
]
ContentType = Literal[
    "event",
    "current_state",
    "relationship_event",
    "belief_candidate",
    "homework_or_plan",
    "support_interaction",
    "risk_signal",
    "general_fact",
]
TimeOrientation = Literal["past", "present", "future", "mixed", "unknown"]
# The situation's own state as the extractor reports it (the prompt's `status`).
Completion = Literal["complete", "partial", "pending", "unknown"]
# Whether the unit is a finalised, retrievable memory or a partial still carried as context.
ConstructionStatus = Literal["final", "partial"]
# How a unit was made: written by the model, fused with a carried partial, split from a model's
# fact (builds before `split_facts` was removed), copied from a turn without the model, or
# corrected by a person ("unknown": stored before units recorded it).
Origin = Literal["model", "fused", "split", "copied", "corrected", "unknown"]
LifecycleStatus = Literal["pending", "completed", "contradicted", "archived", "unknown"]
Completeness = Literal["complete", "partial", "unknown"]
Relation = Literal["same_episode_as", "updates", "contradicts", "followup_of", "supports", "unknown"]
Confidence = Literal["low", "medium", "high", "unknown"]
SemanticKind = Literal["person", "relationship", "situation", "preference"]


def _statement(value: str) -> str:
    """A model-written statement: not empty, not a copied placeholder such as "..."."""
    text = value.strip()
    words = [w for w in text.replace("...", " ").split() if any(c.isalnum() for c in w)]
    if not words or text.lower().strip(". ") in ("unknown", "none", "n/a", "text", "summary"):
        raise ValueError(f"{text!r} is not a statement")
    return text


STATEMENT_CHARS = 400  # the default bound of a model-written statement (setting extraction.fact_max_chars for facts)


def statement(max_chars: int = STATEMENT_CHARS) -> Any:
    """A model-written statement of at most ``max_chars`` characters. minLength goes into the JSON
    schema, so constrained decoding cannot produce "" or "..."; maxLength bounds a model that loops."""
    return Annotated[str, Field(min_length=5, max_length=max_chars), AfterValidator(_statement)]


Statement = statement()
# A short free-text field written by a model (anchors, summaries, names).
Short = Annotated[str, Field(max_length=200)]


def utcnow() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# A retention longer than a century is a typo, and one past year 9999 breaks every date sum.
MAX_RETENTION_DAYS = 36_500


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Case(Record):
    id: str = Field(min_length=1)
    name: str = ""
    source_format: str = ""
    source_file: str = ""
    # Benchmark profile (basic_info, social relationships, speakers) kept for evaluation.
    profile: dict = Field(default_factory=dict)
    created_at: str = Field(default_factory=utcnow)
    retention_days: int | None = Field(
        default=None, ge=1, le=MAX_RETENTION_DAYS
    )  # erased this many days after created_at


class Session(Record):
    id: int | None = None  # row id, set by the store
    case_id: str = ""
    idx: int = 0  # order within the case, from 0
    source_id: str = ""  # the file's own session id ("session_3", "s2")
    time: str | None = None  # ISO date or datetime; None when the file gives none
    time_text: str = ""  # the time as written in the file
    meta: dict = Field(default_factory=dict)


class Turn(Record):
    id: int | None = None
    case_id: str = ""
    session_id: int | None = None
    idx: int = 0  # global numeric turn index within the case, from 0
    role: Role = "user"
    speaker: str = ""
    timestamp: str | None = None
    text: str
    original_id: str = ""


class Question(Record):
    """A benchmark question kept for evaluation (never shown to construction)."""

    id: int | None = None
    case_id: str = ""
    qid: str = ""
    question: str
    answer: str | None = None
    category: str = ""  # LoCoMo category id or ES-MemEval capability code
    evidence: list[str] = Field(default_factory=list)
    meta: dict = Field(default_factory=dict)


class Segment(Record):
    id: int | None = None
    case_id: str = ""
    session_id: int | None = None
    start: int  # global turn indices, inclusive
    end: int
    trigger: BoundaryTrigger = "unknown"
    provisional: bool = False
    method: str = "bws"

    @model_validator(mode="after")
    def _ordered(self) -> "Segment":
        if self.end < self.start:
            raise ValueError(f"segment end {self.end} is before its start {self.start}")
        return self


class FactAnchor(Record):
    text: str
    summary: str = ""
    content_type: ContentType = "general_fact"
    participants: list[str] = Field(default_factory=list)


class TimeAnchor(Record):
    dialogue_time: str | None = None
    event_time: str = "unknown"  # resolved date or range where possible
    event_time_expression: str = ""  # as said ("last Friday")
    time_orientation: TimeOrientation = "unknown"
    completion: Completion = "unknown"


class AffectAnchor(Record):
    emotion_or_state: str = "unknown"
    intention_or_plan: str = "unknown"
    relation_cues: str = "unknown"


class Evidence(Record):
    session_id: int | None = None
    start: int  # global turn indices, inclusive
    end: int
    dialogue_time: str | None = None

    @model_validator(mode="after")
    def _ordered(self) -> "Evidence":
        if self.end < self.start:
            raise ValueError(f"evidence end {self.end} is before its start {self.start}")
        return self


class FTAUnit(Record):
    id: int | None = None  # persistent memory id, assigned when finalised
    case_id: str = ""
    fact: FactAnchor
    time: TimeAnchor = Field(default_factory=TimeAnchor)
    affect: AffectAnchor = Field(default_factory=AffectAnchor)
    evidence: Evidence
    construction_status: ConstructionStatus = "final"
    origin: Origin = "model"
    lifecycle_status: LifecycleStatus = "unknown"
    completeness: Completeness = "unknown"
    disputed: bool = False
    version: int = 1  # bumped on every write; edits check it (two tabs, one unit)
    created_at: str = Field(default_factory=utcnow)
    updated_at: str = Field(default_factory=utcnow)


class Link(Record):
    id: int | None = None
    case_id: str = ""
    source: int  # the newer unit
    target: int  # the older unit it relates to
    relation: Relation
    confidence: Confidence = "unknown"
    time: str | None = None  # when the relation was observed (the new unit's time)
    created_at: str = Field(default_factory=utcnow)


class SemanticEntry(Record):
    """User semantic memory: people, relationships, ongoing situations, preferences."""

    id: int | None = None
    case_id: str = ""
    kind: SemanticKind
    text: str
    source_unit_ids: list[int] = Field(default_factory=list)
    session_id: int | None = None  # the session that last changed it
    updated_at: str = Field(default_factory=utcnow)


class SupportEntry(Record):
    """Support-experience memory: a strategy tried and how it landed."""

    id: int | None = None
    case_id: str = ""
    strategy: str
    outcome: str = "unknown"
    text: str = ""
    source_unit_ids: list[int] = Field(default_factory=list)
    session_id: int | None = None  # the session that last changed it
    updated_at: str = Field(default_factory=utcnow)


class Build(Record):
    id: int | None = None
    case_id: str
    segmentation: str
    settings: dict = Field(default_factory=dict)
    backend: str = ""
    model: str = ""
    status: Literal["running", "done", "stopped", "failed", "interrupted"] = "running"
    error: str = ""
    started_at: str = Field(default_factory=utcnow)
    finished_at: str | None = None
    host: str = ""  # the building process: a running build is the case's build lock
    pid: int | None = None


class CallRecord(Record):
    """One LLM call, for cost accounting (the paper's Table 6 columns)."""

    id: int | None = None
    case_id: str | None = None
    build_id: int | None = None
    stage: str
    backend: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    attempts: int = 1
    ok: bool = True
    error: str = ""
    created_at: str = Field(default_factory=utcnow)


class SessionDocument(Record):
    session: Session
    turns: list[Turn]


class CaseDocument(Record):
    """What a loader returns: one case with its sessions, turns and questions, not yet stored."""

    case: Case
    sessions: list[SessionDocument]
    questions: list[Question] = Field(default_factory=list)

    @property
    def turn_count(self) -> int:
        return sum(len(s.turns) for s in self.sessions)
