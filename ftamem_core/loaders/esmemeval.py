"""ES-MemEval: a list of seekers, each with ``dialog_history`` sessions and ``questions``."""

from __future__ import annotations

from typing import Any

from ..models import Case, CaseDocument, Question, Session, SessionDocument, Turn
from .common import Reader, parse_time

# Capability codes; real files may spell the names out in full.
CAPABILITIES = {
    "ie": "IE",
    "information extraction": "IE",
    "tr": "TR",
    "temporal reasoning": "TR",
    "cd": "CD",
    "conflict detection": "CD",
    "abs": "Abs",
    "abstention": "Abs",
    "um": "UM",
    "user modeling": "UM",
    "user modelling": "UM",
}


def looks_like(data: Any) -> bool:
    return isinstance(data, list) and bool(data) and isinstance(data[0], dict) and "dialog_history" in data[0]


def capability_code(r: Reader, value: str, place: str) -> str:
    code = CAPABILITIES.get(" ".join(value.replace("_", " ").split()).lower())
    if code is None:
        raise r.fail(place, f"unknown capability {value!r} (expected one of IE, TR, CD, Abs, UM)")
    return code


def load(r: Reader, data: Any) -> list[CaseDocument]:
    docs = []
    for n, seeker in enumerate(r.items(data, "$")):
        place = f"$[{n}]"
        case_id = str(r.get(seeker, "id", place, (str, int)))
        info = r.get(seeker, "basic_info", place, dict, required=False, default={})
        name = str(r.get(info, "name", f"{place}.basic_info", (str, int), required=False, default=""))
        sessions = []
        for i, s in enumerate(r.items(r.get(seeker, "dialog_history", place, list), f"{place}.dialog_history")):
            splace = f"{place}.dialog_history[{i}]"
            sid = str(r.get(s, "id", splace, (str, int)))
            when_text = str(r.get(s, "timestamp", splace, (str, int), required=False, default=""))
            when = parse_time(when_text)
            dialogue = r.get(s, "dialogue", splace, list)
            r.nonempty(dialogue, f"{splace}.dialogue")
            turns = []
            for j, t in enumerate(dialogue):
                tplace = f"{splace}.dialogue[{j}]"
                role = r.get(t, "role", tplace, str)
                if role not in ("seeker", "supporter"):
                    raise r.fail(f"{tplace}.role", f"expected 'seeker' or 'supporter', found {role!r}")
                idx = r.get(t, "idx", tplace, int, required=False, default=j)
                turns.append(
                    Turn(
                        role="user" if role == "seeker" else "assistant",
                        speaker=(name or "seeker") if role == "seeker" else "supporter",
                        timestamp=when,
                        text=r.text(r.get(t, "content", tplace, (str, int, float)), f"{tplace}.content"),
                        original_id=f"{sid}:{idx}",
                    )
                )
            meta = {k: s[k] for k in ("emotion", "topic", "summary", "observation") if k in s}
            sessions.append(
                SessionDocument(session=Session(source_id=sid, time=when, time_text=when_text, meta=meta), turns=turns)
            )
        if not sessions:
            raise r.fail(f"{place}.dialog_history", "the case has no sessions")
        questions = []
        for i, group in enumerate(r.items(seeker.get("questions", []), f"{place}.questions")):
            gplace = f"{place}.questions[{i}]"
            for j, q in enumerate(r.get(group, "questions", gplace, list)):
                qplace = f"{gplace}.questions[{j}]"
                answer = r.get(q, "answer", qplace, (str, int, float), required=False)
                questions.append(
                    Question(
                        qid=f"{group.get('id', i)}:{q.get('idx', j)}",
                        question=r.get(q, "question", qplace, str),
                        answer=None if answer is None else str(answer),
                        category=capability_code(r, r.get(q, "capability", qplace, str), f"{qplace}.capability"),
                        evidence=[str(e) for e in r.get(q, "evidence", qplace, list, required=False, default=[])],
                    )
                )
        profile = {k: seeker[k] for k in ("basic_info", "social_relationship", "event_experience") if k in seeker}
        docs.append(
            CaseDocument(
                case=Case(id=case_id, name=name or case_id, source_format="esmemeval", profile=profile),
                sessions=sessions,
                questions=questions,
            )
        )
    return docs
