"""How stored values read to a person: the one place for it (pages use these, stored values stay
as they are). Sessions and turns are counted from 1; enum values read as words; ISO dates as
"12 September 2025"; nothing, empty or ``unknown`` as a dash."""

from __future__ import annotations

from ftamem_core.construction.temporal import spoken

NOTHING = "—"


def number(idx: int | None) -> str:
    """A stored 0-based session or turn index as people count: 0 → "1"."""
    return NOTHING if idx is None else str(idx + 1)


def word(value: object) -> str:
    """An enum value as words: ``support_interaction`` → "support interaction"; ``unknown``,
    None and empty → "—"."""
    if value is None or str(value).strip() in ("", "unknown"):
        return NOTHING
    return str(value).replace("_", " ")


def date(value: object) -> str:
    """An ISO date or timestamp as people write it ("12 September 2025"); None or empty → "—";
    anything that is not a date as written."""
    if value is None or str(value).strip() in ("", "unknown"):
        return NOTHING
    return spoken(str(value)) or NOTHING


def text(value: object) -> str:
    """Any shown value: None or empty → "—"."""
    return NOTHING if value is None or str(value).strip() == "" else str(value)


HISTORY_FIRST = {"who": "who", "at": "when", "action": "what", "reason": "why"}


def history_rows(rows: list[dict]) -> list[dict]:
    """The history table as people read it: who, when, what, why first, then the rest."""
    out = []
    for row in rows:
        shown = {label: (date(row.get(key)) if key == "at" else word(row.get(key)) if key == "action"
                         else text(row.get(key))) for key, label in HISTORY_FIRST.items()}
        shown.update({k: text(v) for k, v in row.items() if k not in HISTORY_FIRST})
        out.append(shown)
    return out


def value(v: object) -> str:
    """A setting's value as read: yes/no, lists comma-separated, nothing as "—"."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (list, tuple, set)):
        return ", ".join(map(str, v)) or NOTHING
    return text(v)


def settings_rows(settings: dict, prefix: str = "") -> list[dict]:
    """Settings as a two-column table, nested groups as dotted names ("llm.model")."""
    rows = []
    for key, v in settings.items():
        name = f"{prefix}{key}"
        if isinstance(v, dict) and v:
            rows += settings_rows(v, f"{name}.")
        else:
            rows.append({"setting": name, "value": value(v if not isinstance(v, dict) else None)})
    return rows


def health_lines(result: dict) -> list[str]:
    """The backend health check (llm.health_check) as sentences."""
    reply = ", ".join(f"{word(k)} {value(v)}" for k, v in result.get("reply", {}).items()) or NOTHING
    return [f"Backend {result['backend']} · model {result['model']}: it answered.",
            f"Time: {result['seconds']} s in all, {result['call_seconds']} s in the model call.",
            f"Tokens: {result['prompt_tokens']} in, {result['completion_tokens']} out.",
            f"Its reply to the test question: {reply}."]
