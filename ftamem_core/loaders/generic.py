"""The project's own formats (documented in docs/formats.md).

JSON: one case object, or a list of them::

    {"id": "case-1", "name": "...", "sessions": [
        {"id": "s1", "time": "2025-03-02 18:00",
         "turns": [{"role": "user", "speaker": "Dan", "text": "...", "time": null, "id": "t1"}]}],
     "questions": [{"question": "...", "answer": "...", "category": "...", "evidence": []}]}

JSONL: one turn per line, grouped into cases and sessions in order of first appearance::

    {"case": "case-1", "session": "s1", "session_time": "2025-03-02", "role": "user",
     "speaker": "Dan", "text": "..."}
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..models import Case, CaseDocument, Question, Session, SessionDocument, Turn
from .common import Reader, parse_json, parse_time, role_for

ROLES = ("user", "assistant", "other")


def _role(r: Reader, t: dict, place: str) -> str:
    role = r.get(t, "role", place, str, required=False)
    if role is None:
        return role_for(r.get(t, "speaker", place, str, required=False, default=""))
    if role not in ROLES:
        raise r.fail(f"{place}.role", f"expected one of {', '.join(ROLES)}, found {role!r}")
    return role


def _turn(r: Reader, t: Any, place: str, session_time: str | None) -> Turn:
    time_text = r.get(t, "time", place, str, required=False)
    return Turn(
        role=_role(r, t, place),
        speaker=r.get(t, "speaker", place, str, required=False, default=""),
        timestamp=parse_time(time_text) or session_time,
        text=r.text(r.get(t, "text", place, (str, int, float)), f"{place}.text"),
        original_id=str(r.get(t, "id", place, (str, int), required=False, default="")),
    )


def load_json(r: Reader, data: Any) -> list[CaseDocument]:
    cases = data if isinstance(data, list) else [data]
    docs = []
    for n, c in enumerate(cases):
        place = f"$[{n}]" if isinstance(data, list) else "$"
        case_id = str(r.get(c, "id", place, (str, int)))
        sessions = []
        raw_sessions = r.get(c, "sessions", place, list)
        if not raw_sessions:
            raise r.fail(f"{place}.sessions", "the case has no sessions")
        for i, s in enumerate(raw_sessions):
            splace = f"{place}.sessions[{i}]"
            time_text = str(r.get(s, "time", splace, (str, int), required=False, default=""))
            when = parse_time(time_text)
            turns_raw = r.get(s, "turns", splace, list)
            r.nonempty(turns_raw, f"{splace}.turns")
            sessions.append(
                SessionDocument(
                    session=Session(
                        source_id=str(r.get(s, "id", splace, (str, int), required=False, default=i + 1)),
                        time=when,
                        time_text=time_text,
                    ),
                    turns=[_turn(r, t, f"{splace}.turns[{j}]", when) for j, t in enumerate(turns_raw)],
                )
            )
        questions = []
        for i, q in enumerate(r.get(c, "questions", place, list, required=False, default=[])):
            qplace = f"{place}.questions[{i}]"
            answer = r.get(q, "answer", qplace, (str, int, float), required=False)
            questions.append(
                Question(
                    qid=str(r.get(q, "id", qplace, (str, int), required=False, default=i)),
                    question=r.get(q, "question", qplace, str),
                    answer=None if answer is None else str(answer),
                    category=str(r.get(q, "category", qplace, (str, int), required=False, default="")),
                    evidence=[str(e) for e in r.get(q, "evidence", qplace, list, required=False, default=[])],
                )
            )
        docs.append(
            CaseDocument(
                case=Case(
                    id=case_id,
                    name=str(r.get(c, "name", place, str, required=False, default=case_id)),
                    source_format="json",
                ),
                sessions=sessions,
                questions=questions,
            )
        )
    return docs


def load_jsonl(r: Reader, path: Path, text: str) -> list[CaseDocument]:
    cases: dict[str, dict[str, SessionDocument]] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        place = f"line {n}"
        t = parse_json(path, line, place)
        case_id = str(r.get(t, "case", place, (str, int)))
        session_id = str(r.get(t, "session", place, (str, int)))
        sessions = cases.setdefault(case_id, {})
        if session_id not in sessions:
            time_text = str(r.get(t, "session_time", place, (str, int), required=False, default=""))
            sessions[session_id] = SessionDocument(
                session=Session(source_id=session_id, time=parse_time(time_text), time_text=time_text), turns=[]
            )
        doc = sessions[session_id]
        doc.turns.append(_turn(r, t, place, doc.session.time))
    if not cases:
        raise r.fail("", "the file holds no turns")
    return [
        CaseDocument(case=Case(id=cid, name=cid, source_format="jsonl"), sessions=list(sessions.values()))
        for cid, sessions in cases.items()
    ]
