"""A memory build for one case: segmentation -> extraction (carry-over, fusion) -> store and
index -> temporal links, per session in order, then the longitudinal memory after each session.

Resumable: a session counts as built only when its last write (the longitudinal update) commits
together with its entry in ``build_sessions``; a session's memory is complete or absent. A build
that is stopped, fails or loses its backend removes what the unfinished session wrote (its units,
their links and vectors, its segments); a build killed outright leaves it, and the next build
removes it first. The next build skips finished sessions and builds the rest. ``from_scratch`` clears the case's memory first. A neighbour's lifecycle
status changed by an unfinished session's links stays changed (the rebuilt session judges it
again).
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import build_events as ev
from ..governance import consent
from ..config import Settings
from ..setting import dotted, merged, value_at
from ..llm.embeddings import Embedder
from .extraction import (
    between_peers,
    Fragment,
    foreign_script,
    incomplete_memory_json,
    integrate,
    merge_duplicates,
    min_units,
    parse_candidates,
    stated_anchors,
    turn_scripts,
    verbatim_units,
    with_stated_time,
    with_turn_anchors,
)
from .extraction import reply_model as extraction_reply
from .repairs.checks import Repairs
from .linking import apply_updates, candidates
from .linking import render as render_links
from .linking import reply_model as linking_reply
from ..llm.base import LLM, LLMCancelled, LLMUnavailable, call_context
from .longitudinal import apply as apply_longitudinal
from .longitudinal import render as render_longitudinal
from .longitudinal import reply_model as longitudinal_reply
from .longitudinal import unit_key
from ..models import Build, FTAUnit, Session, Turn
from ..llm.prompts import PROMPT_DIR, load_prompt
from .representation import retrieval_text
from .segmentation import SegmentationReply, Span, cut_turns, merge_short, render_turns, segment_session, to_segments
from ..governance.editing import human_corrections, record_discarded
from ..errors import CorrectionsAtRisk
from ..storage.store import Store, StoreError
from ..text import english
from ..text.english_sentences import sentences


# The code and prompts a build runs: a cached build (the evaluation's) is reused only when these
# are unchanged, since a fix to the verbatim fallback or a prompt changes what a build produces.
# Paths under ftamem_core/; only the file's name and text enter the digest.
_BUILD_SOURCES = (
    "construction/builder",
    "construction/segmentation",
    "construction/extraction",
    "construction/linking",
    "construction/longitudinal",
    "construction/repairs/checks",
    "construction/repairs/grounding",
    "construction/repairs/speaker",
    "construction/temporal",
    "construction/representation",
    "models",
    "loaders/locomo",  # the photo captions the copies set aside
    # the English rules the repairs and stated anchors read
    "text/english",
    "text/english_feelings",
    "text/english_sentences",
    "text/english_time",
)
_BUILD_PROMPTS = ("segmentation", "extraction", "linking", "longitudinal")


def build_digest(extra_prompts: tuple[str, ...] = ()) -> str:
    """A digest of the build's code and prompts (and of ``extra_prompts``, e.g. a baseline's)."""
    here = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    prompts = _BUILD_PROMPTS + tuple(extra_prompts)
    for path in [here / f"{m}.py" for m in _BUILD_SOURCES] + [PROMPT_DIR / f"{p}.md" for p in prompts]:
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:12]


class BuildError(StoreError):
    """A build that cannot start as asked (the message says why)."""


class BuildStopped(Exception):
    """The user asked the build to stop; finished sessions are kept."""


@dataclass
class BuildReport:
    build_id: int
    status: str
    sessions_built: int = 0
    sessions_skipped: int = 0
    units: int = 0
    partial_units: int = 0
    links: int = 0
    fusions: int = 0
    seconds: float = 0.0
    error: str = ""  # why a build stopped
    notes: list[str] = field(default_factory=list)  # what the build changed on its own, e.g. repairs off


class Builder:
    def __init__(
        self,
        store: Store,
        llm: LLM,
        embedder: Embedder,
        settings: Settings,
        progress: Callable[[ev.BuildEvent], None] | None = None,
        stop: threading.Event | None = None,
    ):
        self.store, self.llm, self.embedder, self.settings = store, llm, embedder, settings
        self._chosen = settings  # before a case's language switches repairs off
        self.progress = progress or (lambda event: None)
        self.stop = stop or threading.Event()
        if llm.recorder is None:
            llm.recorder = store.record_call  # cost accounting needs every call

    def build(
        self,
        case_id: str,
        segmentation: str | None = None,
        window: int | None = None,
        from_scratch: bool = False,
        discard_corrections: str | None = None,
    ) -> BuildReport:
        """``from_scratch`` clears the case's memory first. It is refused while people's corrections
        stand (CorrectionsAtRisk lists them), unless ``discard_corrections`` names who decided to
        throw them away (recorded in the history)."""
        segmentation = segmentation or self.settings.segmentation.segmentation
        window = window or self.settings.segmentation.window_size
        case = self.store.get_case(case_id)
        consent.require(self.store, case_id)
        notes = self._for_language(case_id)
        self._case_id = case_id
        self._cut_reported: set[int] = set()
        if not from_scratch:  # checked before taking the lock: a refused build leaves no record
            self._check_segmentation(case_id, segmentation)
        corrections = human_corrections(self.store, case_id) if from_scratch else []
        if corrections and not discard_corrections:
            raise CorrectionsAtRisk(corrections)
        # The running build is the case's lock: taken before anything is cleared or written.
        build = self.store.start_build(
            Build(
                case_id=case_id,
                segmentation=segmentation,
                backend=self.llm.backend,
                model=self.llm.model_name,
                settings=merged(
                    self.settings.build_settings(),
                    {
                        "segmentation": {"window_size": window, "segmentation": segmentation},
                        "profile": self.settings.profile,
                    },
                ),
            )
        )
        try:
            if from_scratch:
                with self.store.transaction():
                    self.store.clear_case_memory(case_id)
                    if corrections:
                        record_discarded(self.store, case_id, discard_corrections, len(corrections))
            self._check_segmentation(case_id, segmentation)  # another process may have built meanwhile
        except BaseException as e:
            self.store.finish_build(build.id, "failed", str(e))
            raise
        done = self.store.done_sessions(case_id)
        report = BuildReport(build.id, "running", notes=notes)
        started = time.perf_counter()
        self.progress(
            ev.BuildStarted(build_id=build.id, segmentation=segmentation, sessions=len(self.store.sessions(case_id)))
        )
        current: Session | None = None
        try:
            with call_context(case_id=case_id, build_id=build.id, cancel=lambda: self._stop_reason() is not None):
                for session in self.store.sessions(case_id):
                    if session.id in done:
                        report.sessions_skipped += 1
                        self.progress(ev.SessionSkipped(session=session.idx))
                        continue
                    current = session
                    self.store.clear_session_memory(case_id, session.id)  # leftovers of a killed build
                    self._session(case.id, session, segmentation, window, build.id, report)
                    report.sessions_built += 1
                    current = None
        except (BuildStopped, LLMCancelled) as e:
            report.status, report.error = "stopped", self._stop_reason() or str(e)
            if current is not None:
                self.store.clear_session_memory(case_id, current.id)
        except LLMUnavailable as e:
            self._abandon(case_id, current, build.id, "interrupted", str(e))
            raise
        except Exception as e:
            self._abandon(case_id, current, build.id, "failed", f"{e.__class__.__name__}: {e}")
            raise
        else:
            report.status = "done"
        report.seconds = time.perf_counter() - started
        self.store.finish_build(build.id, report.status, report.error)
        self.progress(
            ev.BuildDone(status=report.status, units=report.units, links=report.links, seconds=round(report.seconds, 1))
        )
        return report

    def _for_language(self, case_id: str) -> list[str]:
        """The repairs read English words: for a case in another language they are off (and the
        build says so) instead of passing every check for want of a word they know."""
        self.settings = self._chosen
        if english.is_english([t.text for t in self.store.turns(case_id)]):
            return []
        on = [
            dotted((phase, name))
            for phase, values in english.REPAIRS_OFF.items()
            for name, value in values.items()
            if value_at(self.settings, (phase, name)) != value
        ]
        if not on:
            return []
        self.settings = self.settings.with_overrides(**english.REPAIRS_OFF)
        note = (
            "the turns are not English: the repairs that read English words are off for this build "
            f"({', '.join(sorted(on))})"
        )
        self.progress(ev.LanguageNote(english=False, off=sorted(on), note=note))
        return [note]

    def _check_segmentation(self, case_id: str, segmentation: str) -> None:
        other = {m for m in self.store.done_sessions(case_id).values() if m != segmentation}
        if other:
            raise BuildError(
                f"case {case_id!r} was built with {', '.join(sorted(other))} segmentation; "
                f"rebuild it from scratch to use {segmentation}"
            )

    def _abandon(self, case_id: str, session: Session | None, build_id: int, status: str, error: str) -> None:
        """A session is complete or absent: drop what the unfinished one wrote."""
        if session is not None:
            self.store.clear_session_memory(case_id, session.id)
        self.store.finish_build(build_id, status, error)

    # One session ------------------------------------------------------------------------

    def _session(
        self, case_id: str, session: Session, segmentation: str, window: int, build_id: int, report: BuildReport
    ) -> None:
        turns = self.store.turns(case_id, session_id=session.id)
        self.progress(
            ev.SessionStarted(
                session=session.idx, turns=len(turns), first=turns[0].idx, last=turns[-1].idx, time=session.time
            )
        )
        detect = None
        if segmentation in ("bws", "fixed"):
            detect = lambda window_turns: self._detect(window_turns, session)  # noqa: E731
        # Eq. 4: every unit still partial is carried, also those left open by earlier sessions.
        carried: list[FTAUnit] = self.store.units(case_id, construction_status="partial")
        # Stored partial units fused in this session, as read (replaced when it is done), and by
        # their creation time the candidate each fused unit is stored as if a person changes them.
        self._superseded: dict[int, FTAUnit] = {}
        self._unfused: dict[str, FTAUnit] = {}
        # all of the case's turns: a unit fused with a carried partial spans turns of earlier fragments
        self._case_turns = self.store.turns(case_id)
        self._speakers = sorted({t.speaker for t in self._case_turns if t.speaker and t.role != "assistant"})
        self._peers = between_peers(self._case_turns)
        for win in segment_session(turns, segmentation, detect, window, self.settings.segmentation.min_forward_step):
            self._check_stop()
            self.progress(
                ev.WindowSegmented(
                    session=session.idx,
                    start=win.start,
                    end=win.end,
                    spans=win.spans,
                    final=win.final,
                    provisional=win.provisional,
                )
            )
            if segmentation == "bws":
                win.final = merge_short(win.final, self.settings.segmentation.min_fragment_turns)
            self.store.add_segments(case_id, to_segments(win, case_id, session.id, segmentation))
            for first, last, _trigger in win.final:
                self._check_stop()
                fragment = Fragment(case_id, session.id, [t for t in turns if first <= t.idx <= last], session.time)
                carried = self._extract(fragment, carried, turns, report)
        still_open = [u for u in carried if u.id is None]
        if still_open:  # stored as partial (nothing extracted is lost) and carried into the next session
            self._add_current(case_id, still_open, self.embedder.encode([retrieval_text(u) for u in still_open]))
            report.partial_units += len(still_open)
        self._longitudinal(case_id, session, turns, build_id, segmentation)
        self.progress(ev.SessionDone(session=session.idx, units=report.units, links=report.links))

    def _stop_reason(self) -> str | None:
        if self.stop.is_set():
            return "stopped by the user"
        if not consent.granted(self.store, self._case_id):  # withdrawn in any tab or process
            return "consent withdrawn"
        return None

    def _check_stop(self) -> None:
        reason = self._stop_reason()
        if reason is not None:
            raise BuildStopped(reason)

    def _render(self, turns: list[Turn], session: Session | None = None) -> str:
        """The turns for a prompt, cut to ``prompt_turn_chars``; a cut is reported once per turn."""
        limit = self.settings.construction.prompt_turn_chars
        cut = [i for i in cut_turns(turns, limit) if i not in self._cut_reported]
        if cut:
            self._cut_reported.update(cut)
            self.progress(ev.TurnsCut(session=session.idx if session else None, turns=cut, limit=limit))
        return render_turns(turns, limit)

    def _detect(self, window_turns: list[Turn], session: Session) -> list[Span]:
        messages = load_prompt("segmentation").messages(
            session_time=session.time or session.time_text or "unknown", turns=self._render(window_turns, session)
        )
        reply, _ = self.llm.structured(
            "segmentation",
            messages,
            SegmentationReply,
            temperature=self.settings.construction.construction_temperature,
            max_tokens=self.settings.construction.construction_max_tokens,
        )
        return [(s.turn_span[0], s.turn_span[1], s.boundary_trigger) for s in reply.segments]

    def _extract(
        self, fragment: Fragment, carried: list[FTAUnit], session_turns: list[Turn], report: BuildReport
    ) -> list[FTAUnit]:
        keys = [f"p{i + 1}" for i in range(len(carried))]
        s = self.settings
        prompt = load_prompt("extraction")
        messages = prompt.messages(
            people=people(session_turns),
            session_time=fragment.session_time or "unknown",
            incomplete_memory=incomplete_memory_json(carried, keys),
            turns=self._render(fragment.turns),
        )
        model = extraction_reply(
            keys,
            min_units(
                fragment.turns,
                self.settings.extraction.coverage_min_words,
                self.settings.extraction.turns_per_unit,
            ),
            self.settings.extraction.fact_max_chars,
        )
        reply, _ = self.llm.structured(
            "extraction",
            messages,
            model,
            temperature=self.settings.construction.construction_temperature,
            max_tokens=self.settings.construction.construction_max_tokens,
        )
        completes = dict(zip(keys, carried))
        repairs = self._repairs()
        found = [
            (key, repairs.checked(u, fragment.turns, completes.get(key)))
            for key, u in self._in_the_turns_script(parse_candidates(reply, fragment), fragment.turns)
        ]
        found = [(key, u) for key, u in found if u is not None]
        result = integrate(found, carried, keys)
        # Every unit this fragment writes takes the anchors its turns state, also a partial left open
        # and the candidate stored instead of a fusion a person undid; after the checks.
        anchors = stated_anchors(fragment.turns, self._speakers) if s.extraction.stated_anchors else {}

        def with_anchors(u):
            u = with_turn_anchors(u, anchors, fragment.turns)
            return with_stated_time(u, fragment.turns, self._speakers) if s.extraction.stated_anchors else u

        # A unit fused from an earlier session's partial belongs to this session (and goes with it).
        def here(u):
            return with_anchors(
                u.model_copy(update={"evidence": u.evidence.model_copy(update={"session_id": fragment.session_id})})
            )

        for partial, candidate, fused in result.fusions:
            report.fusions += 1
            if partial.id is not None:  # carried from an earlier session: replaced when this one is done
                self._superseded[partial.id] = partial
                self._unfused[fused.created_at] = here(candidate)  # fuse() keeps the partial's creation time
            self.progress(ev.Fused(carried=partial.fact.text, candidate=candidate.fact.text, fused=fused.fact.text))
        finalised = [here(u) for u in result.finalised]
        carried = [u if u.id is not None else here(u) for u in result.carried]
        extra = (
            verbatim_units(
                fragment,
                finalised + carried,
                self.settings.extraction.coverage_min_words,
                self._peers,
            )
            if self.settings.extraction.verbatim_fallback
            else []
        )
        extra = [with_anchors(u) for u in extra]
        if extra:
            self.progress(ev.VerbatimKept(turns=[u.evidence.end for u in extra]))  # an answer's own turn
        if finalised or extra:
            self._store_and_link(fragment.case_id, finalised, report, extra, self._case_turns)
        return carried

    def _in_the_turns_script(self, candidates: list[tuple[str, FTAUnit]], turns: list[Turn]):
        """The candidates with only the sentences of their facts that the model wrote in the turns'
        scripts: a sentence in another is malformed output, left out in every profile; a unit with
        no sentence left is dropped. ("... Audrey said Pepper was adjusting well. Audrey thanked
        Andrew's帮" keeps its first five sentences.)"""
        known = turn_scripts(turns)
        for key, u in candidates:
            script = foreign_script(u.fact.text, known)
            if not script:
                yield key, u
                continue
            self.progress(ev.ForeignScript(fact=u.fact.text, script=script))
            kept = " ".join(s for s in sentences(u.fact.text) if not foreign_script(s, known))
            if kept:
                yield key, u.model_copy(update={"fact": u.fact.model_copy(update={"text": kept})})

    def _repairs(self) -> Repairs:
        # made afresh: the settings (repairs off for a language they do not serve) and the
        # case's speakers are the build's own
        return Repairs(self.settings, self._speakers, self._peers, self.progress)

    def _store_and_link(
        self,
        case_id: str,
        units: list[FTAUnit],
        report: BuildReport,
        verbatim: list[FTAUnit] = (),
        turns: list[Turn] = (),
    ) -> None:
        """Store a fragment's units and link the model-written ones. ``verbatim`` units (the
        fallback's turns in their own words) are stored unlinked: they are the turns themselves,
        and linking them cost more calls and tokens than the rest of the build (LoCoMo, 1.5B).
        ``turns`` (the case's) are what the speaker check reads the stored spans against."""
        if self.settings.extraction.merge_duplicates:
            units, merged = merge_duplicates(units, self.embedder, self.settings.extraction.duplicate_cosine)
            for kept, dropped in merged:
                self.progress(ev.DuplicateMerged(kept=kept.fact.text, dropped=dropped.fact.text))
        if self.settings.extraction.speaker_check and turns:
            # again: merging and fusion widen spans (also into earlier fragments), and a wider span
            # can hold the other speaker's words (conv-26, seed 1); a unit the check left is settled
            units, verbatim = self._repairs().settle_speakers(
                case_id, units, list(verbatim), list(turns), lambda: self.store.units(case_id)
            )
        everything = [*units, *verbatim]
        vectors = self.embedder.encode([retrieval_text(u) for u in everything])
        everything, ids = self._add_current(case_id, everything, vectors)
        stored = [u.model_copy(update={"id": uid}) for u, uid in zip(everything, ids)]
        for unit in stored:
            report.units += 1
            self.progress(ev.UnitFinalised(unit=unit))
        for unit, vector in zip(stored[: len(units)], vectors[: len(units)]):  # the paper: one call per new unit
            self._link(unit, vector, report)

    def _link(self, unit: FTAUnit, vector, report: BuildReport) -> None:
        """One classification call for a new unit and the earlier units similar to it."""
        s = self.settings.linking
        found = [n for n, _ in candidates(self.store, unit, vector, s.link_candidates, s.link_threshold)]
        if not found:
            return  # no neighbour passes the threshold: no call
        pairs, new = {unit.id: found}, [unit]
        messages = load_prompt("linking").messages(**render_links(new, pairs))
        reply, _ = self.llm.structured(
            "linking",
            messages,
            linking_reply(pairs),
            temperature=self.settings.construction.construction_temperature,
            max_tokens=self.settings.construction.construction_max_tokens,
        )
        for outcome in apply_updates(self.store, new, pairs, reply):
            report.links += 1
            self.progress(ev.LinkAdded(link=outcome.link, neighbour_status=outcome.neighbour.lifecycle_status))

    def _longitudinal(
        self, case_id: str, session: Session, turns: list[Turn], build_id: int, segmentation: str
    ) -> None:
        units = [u for u in self.store.units(case_id) if u.evidence.session_id == session.id]
        semantic, support = self.store.semantic(case_id), self.store.support(case_id)
        new_semantic, new_support = [], []
        if units:
            messages = load_prompt("longitudinal").messages(
                **render_longitudinal(people(turns, role="user"), session.time, units, semantic, support)
            )
            model = longitudinal_reply(
                [unit_key(u) for u in units], [f"s{e.id}" for e in semantic], [f"h{e.id}" for e in support]
            )
            reply, _ = self.llm.structured(
                "longitudinal",
                messages,
                model,
                temperature=self.settings.construction.construction_temperature,
                max_tokens=self.settings.construction.construction_max_tokens,
            )
            new_semantic, new_support = apply_longitudinal(
                reply,
                case_id,
                semantic,
                support,
                units,
                [t.speaker for t in turns if t.speaker],
            )
        # One transaction: the session's memory is complete exactly when it is marked done.
        with self.store.transaction():
            self.store.save_semantic(case_id, [e.model_copy(update={"session_id": session.id}) for e in new_semantic])
            self.store.save_support(case_id, [e.model_copy(update={"session_id": session.id}) for e in new_support])
            self.store.delete_units(case_id, [i for i, p in self._superseded.items() if not self._changed(case_id, p)])
            self.store.mark_session_done(case_id, session.id, build_id, segmentation)

    # A person may delete or edit a stored partial unit while a build carries it ---------------

    def _add_current(self, case_id: str, units: list[FTAUnit], vectors) -> tuple[list[FTAUnit], list[int]]:
        """Store units in the transaction that re-reads the partials they fused: one deleted or
        edited since it was read gives way, its fused unit is stored as the candidate alone and the
        partial is not replaced (the person's change wins over the build's old copy)."""
        with self.store.transaction():
            current = [self._current(case_id, u) for u in units]
            if current != units:
                vectors = self.embedder.encode([retrieval_text(u) for u in current])
            return current, self.store.add_units(case_id, current, vectors)

    def _current(self, case_id: str, unit: FTAUnit) -> FTAUnit:
        partial = next((p for p in self._superseded.values() if p.created_at == unit.created_at), None)
        if unit.origin != "fused" or unit.created_at not in self._unfused or partial is None:
            return unit
        if not self._changed(case_id, partial):
            return unit
        self._superseded.pop(partial.id)
        self.progress(
            ev.FusionUndone(
                carried=partial.fact.text,
                kept=self._unfused[unit.created_at].fact.text,
                why="the partial unit was deleted or edited during the build",
            )
        )
        return self._unfused[unit.created_at]

    def _changed(self, case_id: str, partial: FTAUnit) -> bool:
        """Whether the stored partial is gone, or says or points at something else than when it
        was read (its version alone would also count this build's link maintenance of it)."""
        now = self.store.units_by_id(case_id, [partial.id])
        return not now or _content(now[0]) != _content(partial)


def _content(unit: FTAUnit) -> tuple:
    """What a person edits or disputes in a unit (not its lifecycle, which linking changes)."""
    return unit.fact, unit.time, unit.affect, unit.evidence, unit.disputed


def people(turns: list[Turn], role: str | None = None) -> str:
    """Who speaks in these turns, as the prompts name them: "Daniel (user), Counselor (assistant)"."""
    seen = dict.fromkeys((t.speaker or t.role, t.role) for t in turns if role is None or t.role == role)
    return ", ".join(f"{name} ({r})" for name, r in seen) or "unknown"
