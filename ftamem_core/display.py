"""How stored values read to a person: the one place for it (pages use these, stored values stay
as they are). Sessions and turns are counted from 1; enum values read as words; ISO dates as
"12 September 2025"; nothing, empty or ``unknown`` as a dash."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from datetime import datetime, timezone
from typing import Literal, get_origin

from pydantic import BaseModel

from ftamem_core.construction.extraction import clip
from ftamem_core.construction.temporal import spoken

NOTHING = "—"
# Stored values whose words are not just the value with spaces for underscores.
WORDS = {"followup_of": "follow-up of", "llm_calls": "model calls", "bws": "BWS"}
# Stored field names (the edit history's "field") as the card and the edit form name them.
FIELDS = {
    "fact.text": "fact",
    "fact.summary": "summary",
    "fact.content_type": "content type",
    "fact.participants": "who",
    "time.event_time": "event time",
    "time.event_time_expression": "time as said",
    "time.time_orientation": "time orientation",
    "time.completion": "completion",
    "affect.emotion_or_state": "feeling",
    "affect.intention_or_plan": "intention or plan",
    "affect.relation_cues": "relations",
    "lifecycle_status": "lifecycle",
    "construction_status": "status",
}


def number(idx: int | None) -> str:
    """A stored 0-based session or turn index as people count: 0 → "1"."""
    return NOTHING if idx is None else str(idx + 1)


def word(value: object) -> str:
    """An enum value as words: ``support_interaction`` → "support interaction"; ``unknown``,
    None and empty → "—"."""
    if value is None or str(value).strip() in ("", "unknown"):
        return NOTHING
    return WORDS.get(str(value), str(value).replace("_", " "))


def words(value: object) -> str:
    """A value made of enum values (an audit stratum "model · current_state · session 1") as words."""
    return (
        NOTHING if value is None or str(value).strip() == "" else re.sub(r"\w+", lambda m: word(m.group()), str(value))
    )


def field(name: object) -> str:
    """A stored field name as the card names it: ``fact.participants`` → "who"."""
    return FIELDS.get(str(name), text(name).replace("_", " ").split(".")[-1]) if name else NOTHING


def date(value: object) -> str:
    """An ISO date or timestamp as people write it ("12 September 2025"); None or empty → "—";
    anything that is not a date as written."""
    if value is None or str(value).strip() in ("", "unknown"):
        return NOTHING
    return spoken(str(value)) or NOTHING


def moment(value: object) -> str:
    """An ISO timestamp as people write it with its time of day: "6 December 2026, 05:27 UTC" (a
    timestamp with a zone is shown in UTC, and says so); a bare date as ``date`` does."""
    if value is None or str(value).strip() in ("", "unknown"):
        return NOTHING
    try:
        at = datetime.fromisoformat(str(value).strip())
    except ValueError:
        return date(value)
    if "T" not in str(value) and " " not in str(value).strip():
        return date(value)
    zone = ""
    if at.tzinfo is not None:
        at, zone = at.astimezone(timezone.utc), " UTC"
    return f"{at.day} {at:%B %Y}, {at:%H:%M}{zone}"


def span(first: int | None, last: int | None) -> str:
    """A stored 0-based turn span as people count it: (0, 5) → "1–6", (3, 3) → "4"."""
    if first is None or last is None or first == last:
        return number(first if first is not None else last)
    return f"{number(first)}–{number(last)}"


def turns(indices) -> str:
    """Stored 0-based turn indices as people count them: [2, 6] → "3, 7"."""
    return ", ".join(number(i) for i in indices) or NOTHING


def short(value: object, limit: int = 80) -> str:
    """A text cut to ``limit`` characters at a word, "…" where it was cut; nothing as "—"."""
    return clip(" ".join(text(value).split()), limit)


def link(
    source: int,
    relation: object,
    target: int,
    confidence: object = None,
    facts: Mapping[int, str | None] | None = None,
    limit: int = 80,
) -> str:
    """A typed link as read: "m12 follow-up of m7 (high confidence)"; a confidence not given is left out.
    With ``facts`` (unit id → its fact, None for a unit deleted since) those units' facts follow,
    shortened: "m12 follow-up of m7 (high confidence): m12 “Dan rang.” · m7 “Dad moved.”"."""
    sure = word(confidence)
    line = f"m{source} {word(relation)} m{target}" + ("" if sure == NOTHING else f" ({sure} confidence)")
    if not facts:
        return line
    said = [
        f"m{i} (deleted)" if facts[i] is None else f"m{i} \u201c{short(facts[i], limit)}\u201d"
        for i in (source, target)
        if i in facts
    ]
    return f"{line}: {' · '.join(said)}"


# How a unit was made (models.Origin), as the card, the filter and the table say it.
ORIGINS = {
    "model": "written by the model",
    "fused": "fused with an earlier partial unit",
    "split": "split from a longer fact",
    "copied": "copied from a turn",
    "corrected": "corrected by a person",
    "unknown": "not recorded (built before it was kept)",
}


def origin(value: object) -> str:
    """A unit's stored origin as people read it: ``copied`` → "copied from a turn"."""
    return ORIGINS.get(str(value), word(value))


def rows(
    records: list[dict], columns: dict[str, str], dates: tuple[str, ...] = ("at",), enums: tuple[str, ...] = ()
) -> list[dict]:
    """Log rows (consent, access, rounds) as people read them: only ``columns`` (stored name →
    heading), in that order; timestamps with their time of day, enum values as words, empty as "—"."""
    return [
        {
            label: moment(r.get(key)) if key in dates else word(r.get(key)) if key in enums else text(r.get(key))
            for key, label in columns.items()
        }
        for r in records
    ]


def text(value: object) -> str:
    """Any shown value: None or empty → "—"."""
    return NOTHING if value is None or str(value).strip() == "" else str(value)


ENUM_FIELDS = {
    "fact.content_type",
    "time.time_orientation",
    "time.completion",
    "lifecycle_status",
    "completeness",
    "construction_status",
    "relation",
    "confidence",
}
HISTORY_FIRST = {"who": "who", "at": "when", "action": "what", "reason": "why"}
HISTORY_REST = {"object": "of", "field": "field", "old": "was", "new": "became"}


def history_rows(records: list[dict]) -> list[dict]:
    """The history table as people read it: who, when, what, why first, then the field changed
    (as the card names it), what it was and became (dates as written, choices as words, the stored
    nothing as "—"); no case or row ids."""
    shown = rows(records, HISTORY_FIRST | HISTORY_REST, dates=("at", "old", "new"), enums=("action",))
    for out, r in zip(shown, records):
        out["field"] = field(r.get("field"))
        if r.get("field") in ENUM_FIELDS:  # the values of a choice as words
            out["was"], out["became"] = words(r.get("old")), words(r.get("new"))
        kind, number_ = r.get("object"), r.get("object_id")
        out["of"] = f"m{number_}" if kind == "unit" else NOTHING if kind is None else f"{word(kind)} {number_}"
    return shown


def value(v: object) -> str:
    """A setting's value as read: yes/no, lists comma-separated, nothing as "—"."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (list, tuple, set)):
        return ", ".join(map(str, v)) or NOTHING
    return text(v)


def cells(records: list[dict]) -> list[dict]:
    """A table's rows with every cell as read (``value``: yes/no, "—" for nothing; numbers stay
    numbers) and every heading in words (``not_applicable`` → "not applicable")."""
    return [
        {
            k.replace("_", " "): v if isinstance(v, (int, float)) and not isinstance(v, bool) else value(v)
            for k, v in r.items()
        }
        for r in records
    ]


# Settings whose choices need more than ``word`` to be read: what each choice means.
CHOICES = {
    "segmentation.segmentation": {
        "bws": "BWS (the paper's boundary segmentation)",
        "fixed": "fixed windows of W turns",
        "session": "one fragment per session",
        "pair": "pairs of turns",
    },
    "profile": {
        "paper": "paper (the method as the paper writes it)",
        "small-model": "small model (the paper's method with the repairs a small model needs)",
    },
    "llm.backend": {
        "embedded": "embedded (the model runs inside this app)",
        "openai": "a server (OpenAI-compatible)",
        "scripted": "scripted (a test stand-in, no model)",
    },
    "llm.dialect": {
        "auto": "auto (asks the server)",
        "json_schema": "JSON schema (vLLM)",
        "json_object": "JSON object (llama.cpp's server)",
    },
    "storage.index.kind": {
        "auto": "chosen by the case's size",
        "flat": "flat (exact)",
        "hnsw": "HNSW (approximate, for large cases)",
        "ivf": "IVF (approximate and compressed, for very large cases)",
    },
}


# Setting names that are abbreviations, in words (any other name reads as its words).
SETTING_NAMES = {
    "db_path": "database file",
    "lam": "lambda (λ)",
    "tau": "tau (τ)",
    "top_k": "top K",
    "top_k_locomo": "top K for LoCoMo",
    "max_upload_mb": "largest upload (MB)",
    "n_ctx": "context length",
    "n_threads": "threads",
    "base_url": "server URL",
    "llm": "language model",
}


def choice(setting: str, v: object) -> str:
    """A setting's choice as read: ``choice("segmentation.segmentation", "bws")`` → "BWS (the paper's boundary
    segmentation)"; a choice with no words of its own as ``word`` reads it."""
    return CHOICES.get(setting, {}).get(str(v)) or word(v)


def setting_value(setting: str, v: object, choices: bool = False) -> str:
    """A setting's value as read: switches on/off, ``choices`` (the setting is one of a fixed set)
    as ``choice``, whole numbers with their thousands separated, nothing as "—", any other text as
    written (a path or a model name is not a choice)."""
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.10g}"
    if choices or setting in CHOICES:
        return choice(setting, v)
    if isinstance(v, Mapping):
        return ", ".join(f"{k}: {setting_value(setting, x)}" for k, x in v.items()) or NOTHING
    return value(v)


def _phases() -> frozenset[str]:
    """The settings' tables by phase of the pipeline (config.py); llm, ablations and index keep
    their name in a row."""
    from .config import Settings, _Phase

    return frozenset(
        k
        for k, f in Settings.model_fields.items()
        if isinstance(f.annotation, type) and issubclass(f.annotation, _Phase)
    )


def settings_rows(settings: BaseModel, hide: Collection[str] = (), prefix: str = "") -> list[dict]:
    """Settings as people read them, one row each: the setting's name in words (a nested group's
    name first: "language model · max tokens"), its value (``setting_value``) and what it does (the
    description it was declared with). ``hide``: dotted names left out ("llm.api_key")."""
    rows = []
    for key, info in type(settings).model_fields.items():
        name = f"{prefix}{key}"
        v = getattr(settings, key)
        if name in hide:
            continue
        if isinstance(v, BaseModel):
            rows += settings_rows(v, hide, f"{name}.")
            continue
        # a phase's table is where a setting lives, not part of its name (names are unique)
        shown = [part for i, part in enumerate(name.split(".")) if not (i == 0 and part in _phases())]
        rows.append(
            {
                "setting": " · ".join(SETTING_NAMES.get(part) or word(part) for part in shown),
                "value": setting_value(name, v, choices=get_origin(info.annotation) is Literal),
                "what it does": text((info.description or "").replace("`", "")),
            }
        )
    return rows


def health_lines(result: dict) -> list[str]:
    """The backend health check (llm.health_check) as sentences."""
    reply = ", ".join(f"{word(k)} {value(v)}" for k, v in result.get("reply", {}).items()) or NOTHING
    return [
        f"Backend {result['backend']} · model {result['model']}: it answered.",
        f"Time: {result['seconds']} s in all, {result['call_seconds']} s in the model call.",
        f"Tokens: {result['prompt_tokens']} in, {result['completion_tokens']} out.",
        f"Its reply to the test question: {reply}.",
    ]
