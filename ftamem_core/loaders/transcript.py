"""Plain-text transcripts::

    # Case: maya            (optional; the file name otherwise)
    ## Session 2025-03-02 18:00
    Maya: I'm so tired lately.
    Counselor: What has been making you tired?
      an indented line continues the turn above
    Dr. Lee [assistant]: a role in brackets overrides the guess from the name

Speakers named like a helper (counselor, therapist, supporter, assistant ...) are the assistant;
everybody else is a user.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..models import Case, CaseDocument, Session, SessionDocument, Turn
from .common import Reader, parse_time, role_for

# Each pattern matches a bounded prefix and takes the rest whole (stripped in Python): a pattern
# with two adjacent \s* or a lazy group before \s*$ backtracks quadratically on a run of spaces.
_CASE = re.compile(r"#[ \t]*Case:(.*)", re.I)
_SESSION = re.compile(r"##[ \t]*Session\b(.*)", re.I)
_ROLE = re.compile(r"\[(user|assistant|other)\]\Z")
_MAX_SPEAKER = 81


def _turn(line: str) -> tuple[str, str | None, str] | None:
    """``Speaker [role]: text`` split in one pass, or None."""
    head, colon, body = line.partition(":")
    if not colon or not head or head[0].isspace() or len(head) > _MAX_SPEAKER + 20:
        return None
    head = head.rstrip()
    role = None
    if m := _ROLE.search(head):
        role, head = m.group(1), head[: m.start()].rstrip()
    if not head or len(head) > _MAX_SPEAKER:
        return None
    return head, role, body.strip()


def load(r: Reader, path: Path, text: str) -> list[CaseDocument]:
    case_id = path.stem
    sessions: list[SessionDocument] = []
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        place = f"line {n}"
        if not line.strip():
            continue
        if m := _CASE.match(line):
            if sessions:
                raise r.fail(place, "the '# Case:' header must come before the first session")
            case_id = m.group(1).strip()
            if not case_id:
                raise r.fail(place, "'# Case:' needs a case id")
            continue
        if m := _SESSION.match(line):
            if sessions and not sessions[-1].turns:
                raise r.fail(place, "the session before this one has no turns")
            label = m.group(1).strip().lstrip(":").strip()
            sessions.append(
                SessionDocument(
                    session=Session(source_id=str(len(sessions) + 1), time=parse_time(label), time_text=label), turns=[]
                )
            )
            continue
        if not sessions:
            raise r.fail(place, "text before the first '## Session <date/time>' header")
        current = sessions[-1]
        if raw[:1].isspace() and current.turns:
            last = current.turns[-1]
            current.turns[-1] = last.model_copy(update={"text": r.text(f"{last.text}\n{line.strip()}", place)})
            continue
        parsed = _turn(line)
        if parsed is None:
            raise r.fail(place, "expected 'Speaker: text'")
        speaker, role, body = parsed
        current.turns.append(
            Turn(
                role=role or role_for(speaker),
                speaker=speaker,
                timestamp=current.session.time,
                text=r.text(body, place),
                original_id=str(n),
            )
        )
    if not sessions:
        raise r.fail("", "no '## Session <date/time>' header")
    if not sessions[-1].turns:
        raise r.fail("end of file", "the last session has no turns")
    return [CaseDocument(case=Case(id=case_id, name=case_id, source_format="text"), sessions=sessions)]
