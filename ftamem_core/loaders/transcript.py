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

_CASE = re.compile(r"^#\s*Case:\s*(.+?)\s*$", re.I)
_SESSION = re.compile(r"^##\s*Session\b\s*(.*?)\s*$", re.I)
_TURN = re.compile(r"^([^\s:][^:]{0,80}?)\s*(?:\[(user|assistant|other)\])?\s*:\s*(.*)$")


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
            case_id = m.group(1)
            continue
        if m := _SESSION.match(line):
            if sessions and not sessions[-1].turns:
                raise r.fail(place, "the session before this one has no turns")
            label = m.group(1).lstrip(":").strip()
            sessions.append(SessionDocument(
                session=Session(source_id=str(len(sessions) + 1), time=parse_time(label), time_text=label), turns=[]))
            continue
        if not sessions:
            raise r.fail(place, "text before the first '## Session <date/time>' header")
        current = sessions[-1]
        if raw[:1].isspace() and current.turns:
            last = current.turns[-1]
            current.turns[-1] = last.model_copy(update={"text": r.text(f"{last.text}\n{line.strip()}", place)})
            continue
        m = _TURN.match(line)
        if not m:
            raise r.fail(place, "expected 'Speaker: text'")
        speaker, role, body = m.group(1).strip(), m.group(2), m.group(3)
        current.turns.append(Turn(
            role=role or role_for(speaker), speaker=speaker, timestamp=current.session.time,
            text=r.text(body, place), original_id=str(n),
        ))
    if not sessions:
        raise r.fail("", "no '## Session <date/time>' header")
    if not sessions[-1].turns:
        raise r.fail("end of file", "the last session has no turns")
    return [CaseDocument(case=Case(id=case_id, name=case_id, source_format="text"), sessions=sessions)]
