"""What a build reports while it runs, one small type per kind of event: the command line's
progress bar and the Build page tell them apart by type and read them by attribute."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..models import FTAUnit, Link

Span = tuple[int, int, str]  # first turn, last turn, boundary trigger


@dataclass(frozen=True, kw_only=True)
class BuildEvent:
    session: int | None = None  # the session's index in the case, for the session-level events
    at: float = field(default_factory=time.time)  # when it happened (elapsed time per session)


@dataclass(frozen=True, kw_only=True)
class BuildStarted(BuildEvent):
    build_id: int
    segmentation: str
    sessions: int


@dataclass(frozen=True, kw_only=True)
class LanguageNote(BuildEvent):
    """The turns are not English: the repairs in ``off`` are off for this build."""

    english: bool
    off: list[str]
    note: str


@dataclass(frozen=True, kw_only=True)
class SessionStarted(BuildEvent):
    turns: int
    first: int  # the session's first and last turn index
    last: int
    time: str | None


@dataclass(frozen=True, kw_only=True)
class SessionSkipped(BuildEvent):
    """Built before: kept as it is."""


@dataclass(frozen=True, kw_only=True)
class WindowSegmented(BuildEvent):
    start: int
    end: int
    spans: list
    final: list[Span]  # the window's final fragments
    provisional: Span | None  # carried to the next window


@dataclass(frozen=True, kw_only=True)
class TurnsCut(BuildEvent):
    """Turns cut to fit a prompt (stored whole), reported once per turn."""

    turns: list[int]
    limit: int


@dataclass(frozen=True, kw_only=True)
class VerbatimKept(BuildEvent):
    turns: list[int]  # turns in no unit, kept in their own words


@dataclass(frozen=True, kw_only=True)
class Fused(BuildEvent):
    carried: str  # the facts: the carried partial, the candidate completing it, the fused unit
    candidate: str
    fused: str


@dataclass(frozen=True, kw_only=True)
class FusionUndone(BuildEvent):
    carried: str  # the partial a person deleted or edited during the build, and the unit kept instead
    kept: str
    why: str


@dataclass(frozen=True, kw_only=True)
class DuplicateMerged(BuildEvent):
    kept: str
    dropped: str


@dataclass(frozen=True, kw_only=True)
class Dropped(BuildEvent):
    """A model-written fact a grounding check dropped."""

    fact: str


@dataclass(frozen=True, kw_only=True)
class Unsupported(Dropped):
    support: float  # the share of its word stems in its turns


@dataclass(frozen=True, kw_only=True)
class SpeakerUnresolved(Dropped):
    """No naming of the speakers fits its turns."""


@dataclass(frozen=True, kw_only=True)
class ForeignScript(BuildEvent):
    """A model-written fact partly in a script its turns never use (the model switched language
    mid-fact): its sentences in that script are left out, and the unit when none is left."""

    fact: str
    script: str


@dataclass(frozen=True, kw_only=True)
class UnitFinalised(BuildEvent):
    unit: FTAUnit


@dataclass(frozen=True, kw_only=True)
class LinkAdded(BuildEvent):
    link: Link
    neighbour_status: str


@dataclass(frozen=True, kw_only=True)
class SessionDone(BuildEvent):
    units: int  # the build's totals so far
    links: int


@dataclass(frozen=True, kw_only=True)
class BuildDone(BuildEvent):
    status: str
    units: int
    links: int
    seconds: float
