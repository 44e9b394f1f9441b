"""Boundary-preserving Window Segmentation (BWS, the paper's Algorithm 1) and the granularity
variants it is compared with.

A detector sees the turns of one window and returns spans ``(first, last, trigger)`` in global
turn indices. Whatever it returns is repaired into an exact partition of the window
(``repair_spans``), so the final segments of a session always partition its turns.

Repair rules, applied in order:
1. a reversed span (first > last) is turned round;
2. a span is clipped to the window; a span wholly outside it is dropped;
3. spans are sorted by their first turn; a span overlapping the one before it starts after it
   (and is dropped if nothing is left);
4. a gap between two spans is given to the span before it; turns before the first span go to the
   first span, turns after the last span to the last span;
5. no span left: the whole window is one span with trigger ``unknown``.
Unknown trigger names become ``unknown`` (``SpanOut``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..models import BoundaryTrigger, Segment, Turn

_TRIGGERS = set(BoundaryTrigger.__args__)  # type: ignore[attr-defined]

Span = tuple[int, int, str]
Detector = Callable[[list[Turn]], list[Span]]
Granularity = Literal["bws", "fixed", "session", "pair"]


class SpanOut(BaseModel):
    model_config = ConfigDict(extra="forbid")
    turn_span: list[int] = Field(min_length=2, max_length=2)
    boundary_trigger: BoundaryTrigger

    @field_validator("boundary_trigger", mode="before")
    @classmethod
    def _known_trigger(cls, value: Any) -> Any:
        return value if value in _TRIGGERS else "unknown"


class SegmentationReply(BaseModel):
    model_config = ConfigDict(extra="forbid")
    segments: list[SpanOut] = Field(max_length=40)


def repair_spans(spans: list[Span], start: int, end: int) -> list[Span]:
    """An exact partition of turns ``start..end`` built from whatever the detector returned."""
    cleaned: list[list] = []
    for first, last, trigger in spans:
        first, last = (last, first) if first > last else (first, last)
        first, last = max(first, start), min(last, end)
        if first <= last:
            cleaned.append([first, last, trigger if trigger in _TRIGGERS else "unknown"])
    cleaned.sort(key=lambda s: (s[0], s[1]))
    result: list[list] = []
    for span in cleaned:
        if result and span[0] <= result[-1][1]:
            span[0] = result[-1][1] + 1
            if span[0] > span[1]:
                continue
        if result and span[0] > result[-1][1] + 1:
            result[-1][1] = span[0] - 1  # the gap joins the span before it
        result.append(span)
    if not result:
        return [(start, end, "unknown")]
    result[0][0] = start
    result[-1][1] = end
    return [tuple(s) for s in result]  # type: ignore[misc]


@dataclass
class Window:
    """One detector call: the window's turns and the spans it produced (after repair)."""

    start: int
    end: int
    spans: list[Span]
    final: list[Span]  # the spans finalised by this window
    provisional: Span | None  # the span carried into the next window


def bws(turns: list[Turn], detect: Detector, window: int = 20, min_step: int = 1) -> Iterator[Window]:
    """Algorithm 1 over one session's turns (ordered, global indices); yields each window.

    Every window's final spans are final segments. The last span of a window that does not
    reach the session's end stays provisional and the next window starts at its first turn, but
    at least ``min_step`` turns after the current start. Turns that the minimum step moves past
    stay at the head of the provisional span (they are never dropped), and the step never passes
    the last turn, so the final segments partition the session. ``s`` grows by at least one per
    window (a window not at the end has e < n - 1, so s < n - 1): the loop ends after at most
    ``len(turns)`` windows.
    """
    n = len(turns)
    if n == 0:
        return
    window, min_step = max(2, window), max(1, min_step)
    s = 0
    carried_from: int | None = None  # position where the provisional segment began
    while s < n:
        e = min(s + window - 1, n - 1)
        spans = repair_spans(detect(turns[s : e + 1]), turns[s].idx, turns[e].idx)
        spans = [(i - turns[0].idx, j - turns[0].idx, t) for i, j, t in spans]  # to positions
        if carried_from is not None and carried_from < s:
            # Turns passed by the minimum step belong to the first span of this window.
            first = spans[0]
            spans[0] = (carried_from, first[1], first[2])
        if e == n - 1:
            yield _window(turns, s, e, spans, spans, None)
            return
        final, last = spans[:-1], spans[-1]
        yield _window(turns, s, e, spans, final, last)
        carried_from = last[0]
        # Never step past the last turn: the final window finalises the provisional segment.
        s = min(max(last[0], s + min_step), n - 1)


def _window(turns: list[Turn], s: int, e: int, spans: list[Span], final: list[Span], last: Span | None) -> Window:
    def to_idx(span: Span) -> Span:
        return (turns[span[0]].idx, turns[span[1]].idx, span[2])

    return Window(
        turns[s].idx,
        turns[e].idx,
        [to_idx(x) for x in spans],
        [to_idx(x) for x in final],
        to_idx(last) if last else None,
    )


def fixed_windows(turns: list[Turn], detect: Detector | None, window: int) -> Iterator[Window]:
    """Fixed-window variant: stride W, every span final, nothing carried across windows.
    Without a detector each window is one fragment (turn pairs: W=2)."""
    for s in range(0, len(turns), window):
        e = min(s + window, len(turns)) - 1
        trigger = "session_start" if s == 0 else "unknown"
        raw = detect(turns[s : e + 1]) if detect else [(turns[s].idx, turns[e].idx, trigger)]
        spans = repair_spans(raw, turns[s].idx, turns[e].idx)
        yield Window(turns[s].idx, turns[e].idx, spans, spans, None)


def segment_session(
    turns: list[Turn], granularity: Granularity, detect: Detector | None, window: int = 20, min_step: int = 1
) -> Iterator[Window]:
    """The windows of one session under a granularity variant."""
    if granularity == "bws":
        assert detect is not None
        yield from bws(turns, detect, window, min_step)
    elif granularity == "fixed":
        yield from fixed_windows(turns, detect, window)
    elif granularity == "session":
        yield from fixed_windows(turns, None, max(len(turns), 1))
    elif granularity == "pair":
        yield from fixed_windows(turns, None, 2)
    else:
        raise ValueError(f"unknown segmentation {granularity!r}")


def to_segments(window: Window, case_id: str, session_id: int, method: str) -> list[Segment]:
    return [
        Segment(case_id=case_id, session_id=session_id, start=a, end=b, trigger=t, method=method)
        for a, b, t in window.final
    ]


def merge_short(spans: list[Span], min_turns: int) -> list[Span]:
    """Final spans of fewer than ``min_turns`` turns joined to the next span (the last one to the
    one before it), so that one extraction call sees a whole exchange. Beyond the paper (setting
    ``min_fragment_turns``; 1 keeps the detector's spans): the 1.5B cut LoCoMo sessions into
    2-3 turn fragments, one extraction and one linking call each."""
    out: list[list] = []
    pending: list | None = None
    for first, last, trigger in spans:
        span = [pending[0], last, pending[2]] if pending else [first, last, trigger]
        pending = None
        if span[1] - span[0] + 1 < min_turns:
            pending = span
        else:
            out.append(span)
    if pending:
        if out:
            out[-1][1] = pending[1]
        else:
            out.append(pending)
    return [tuple(s) for s in out]  # type: ignore[misc]


def render_turns(turns: list[Turn], max_chars: int = 0) -> str:
    """Turns as the prompts show them: ``[global index] speaker: text``, with the role for an
    assistant and the time where it changes from the turn before (the session time is shown
    once by the prompt), so the model reads the dialogue, not repeated metadata. With
    ``max_chars``, the turns' texts together take at most that many characters (see cut_texts)."""
    texts = cut_texts([t.text for t in turns], max_chars)
    lines = []
    previous = None
    for t, text in zip(turns, texts):
        when = f"({t.timestamp}) " if t.timestamp and t.timestamp != previous and previous is not None else ""
        previous = t.timestamp
        who = f"{t.speaker or t.role} (assistant)" if t.role == "assistant" else (t.speaker or t.role)
        lines.append(f"[{t.idx}] {when}{who}: {text}")
    return "\n".join(lines)


def cut_texts(texts: list[str], max_chars: int) -> list[str]:
    """Texts that fit ``max_chars`` together (0: no limit): the longest are cut first, each to the
    largest equal share the others leave, and say how much is not shown. A stored turn stays whole;
    only the prompt's copy is cut, so one huge turn cannot make a prompt outgrow the context."""
    if max_chars <= 0 or sum(len(t) for t in texts) <= max_chars:
        return list(texts)
    cap, rest = max_chars, sorted(len(t) for t in texts)
    for n, length in enumerate(rest):  # the cap at which the short texts stay whole
        share = (max_chars - sum(rest[:n])) // (len(rest) - n)
        if length > share:
            cap = max(share, 80)
            break
    return [t if len(t) <= cap else f"{t[:cap]} […{len(t) - cap:,} characters not shown]" for t in texts]


def cut_turns(turns: list[Turn], max_chars: int) -> list[int]:
    """The indices of the turns ``render_turns`` cuts for this limit."""
    texts = cut_texts([t.text for t in turns], max_chars)
    return [t.idx for t, text in zip(turns, texts) if text != t.text]
