"""LoCoMo (Maharana et al., 2024): a list of conversations with ``session_N`` turn lists."""

from __future__ import annotations

import re
from typing import Any

from ..models import Case, CaseDocument, Question, Session, SessionDocument, Turn
from .common import Reader, parse_time

# LoCoMo category ids as the benchmark numbers them; papers name them differently.
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

_SESSION_KEY = re.compile(r"^session_(\d+)$")


def looks_like(data: Any) -> bool:
    return isinstance(data, list) and bool(data) and isinstance(data[0], dict) and "conversation" in data[0]


def photo_text(text: str, caption: str | None) -> str:
    """An image turn keeps its caption as text the memory can use."""
    if not caption:
        return text
    caption = re.sub(r"^(a )?(photo|picture|image) of ", "", caption.strip(), flags=re.I)
    return f"{text} [shares a photo of {caption}]".strip()


_CAPTION = "[shares a photo of "


def without_caption(text: str, keep_what: bool = False) -> str:
    """A turn's text without the caption ``photo_text`` gave it, or (``keep_what``) with only
    what the photo shows, without the words "shares a photo of" every caption has.

    Found with str.find: the regex it replaces, ``\\s*\\[shares a photo of ([^\\]]*)\\]``, took
    quadratic time on a turn of spaces (every space started a match that ran to the end)."""
    out, last = [], 0
    while (at := text.find(_CAPTION, last)) >= 0:
        close = text.find("]", at + len(_CAPTION))
        if close < 0:  # no caption ends here, nor after
            break
        out.append(text[last:at].rstrip())  # the spaces before the caption go with it
        if keep_what:
            out.append(f" [{text[at + len(_CAPTION) : close]}]")
        last = close + 1
    out.append(text[last:])
    return "".join(out).strip()


def load(r: Reader, data: Any) -> list[CaseDocument]:
    docs = []
    for n, conv in enumerate(r.items(data, "$")):
        place = f"$[{n}]"
        case_id = str(r.get(conv, "sample_id", place, (str, int)))
        body = r.get(conv, "conversation", place, dict)
        cplace = f"{place}.conversation"
        speakers = [r.get(body, k, cplace, str) for k in ("speaker_a", "speaker_b")]
        numbers = sorted(int(m.group(1)) for k in body if (m := _SESSION_KEY.match(k)))
        if not numbers:
            raise r.fail(cplace, "no session_N keys")
        sessions = []
        for number in numbers:
            key = f"session_{number}"
            splace = f"{cplace}.{key}"
            turns_raw = r.items(body[key], splace)
            r.nonempty(turns_raw, splace)
            when_text = r.get(body, f"{key}_date_time", cplace, str, required=False, default="")
            when = parse_time(when_text)
            turns = []
            for i, t in enumerate(turns_raw):
                tplace = f"{splace}[{i}]"
                speaker = r.get(t, "speaker", tplace, str)
                text = r.text(r.get(t, "text", tplace, (str, int, float)), f"{tplace}.text")
                caption = r.get(t, "blip_caption", tplace, str, required=False)
                turns.append(
                    Turn(
                        role="user",
                        speaker=speaker,
                        timestamp=when,
                        text=photo_text(text, caption),
                        original_id=str(r.get(t, "dia_id", tplace, str, required=False, default="")),
                    )
                )
            sessions.append(
                SessionDocument(
                    session=Session(source_id=key, time=when, time_text=when_text),
                    turns=turns,
                )
            )
        questions = []
        for i, q in enumerate(r.items(conv.get("qa", []), f"{place}.qa")):
            qplace = f"{place}.qa[{i}]"
            answer = r.get(q, "answer", qplace, (str, int, float), required=False)
            adversarial = r.get(q, "adversarial_answer", qplace, (str, int, float), required=False)
            category = r.get(q, "category", qplace, int)
            evidence = [str(e) for e in (q.get("evidence") or []) if isinstance(e, (str, int))]
            questions.append(
                Question(
                    qid=f"{case_id}:q{i}",
                    question=str(r.get(q, "question", qplace, str)),
                    answer=None if answer is None else str(answer),
                    category=str(category),
                    evidence=evidence,
                    meta={
                        "category_name": CATEGORIES.get(category, "unknown"),
                        **({"adversarial_answer": str(adversarial)} if adversarial is not None else {}),
                    },
                )
            )
        docs.append(
            CaseDocument(
                case=Case(
                    id=case_id, name=" & ".join(speakers), source_format="locomo", profile={"speakers": speakers}
                ),
                sessions=sessions,
                questions=questions,
            )
        )
    return docs
