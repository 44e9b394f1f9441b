"""What every loader shares: reading bytes safely, locating errors, checking values, times."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from ..models import Role


class LoadError(Exception):
    """A malformed input file: names the file, the place in it and the problem."""

    def __init__(self, path: str | Path, place: str, problem: str):
        self.path, self.place, self.problem = str(path), place, problem
        super().__init__(f"{Path(path).name}: {place}: {problem}" if place else f"{Path(path).name}: {problem}")


def read_capped(path: str | Path, max_mb: int) -> bytes:
    """A file's bytes, refused beyond ``max_mb`` megabytes (setting input.max_upload_mb) without reading
    more than that: a file may be /dev/zero or a pipe that never ends."""
    limit = max_mb * 1024 * 1024
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as e:
        raise LoadError(path, "", f"cannot read the file ({e.strerror or e})") from None
    if len(data) > limit:
        raise LoadError(path, "", f"the file is larger than {max_mb} MB (setting input.max_upload_mb)")
    return data


def read_text(path: Path, max_mb: int = 50) -> str:
    data = read_capped(path, max_mb)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise LoadError(path, f"byte {e.start} (line {line})", "the file is not valid UTF-8 text") from None


def parse_json(path: Path, text: str, place: str = "") -> Any:
    where = f"{place} " if place else ""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise LoadError(path, f"{where}line {e.lineno} column {e.colno}", f"invalid JSON ({e.msg})") from None
    except RecursionError:
        raise LoadError(path, place, "the JSON is nested too deeply") from None
    except ValueError as e:  # e.g. an integer of more than 4,300 digits
        raise LoadError(path, place, f"invalid JSON ({str(e).splitlines()[0][:120]})") from None
    check_text(path, data, place)
    return data


def check_text(path: Path, data: Any, place: str = "") -> None:
    """Every string of parsed JSON must be text that can be stored: a lone surrogate (``"\\ud800"``)
    is valid JSON but not Unicode text. Walked without recursion (the nesting is the file's)."""
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise LoadError(
                    path,
                    place,
                    f"a string holds {value.encode('utf-8', 'backslashreplace')[:60]!r}, "
                    "a lone surrogate, which is not text",
                ) from None
        elif isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)


class Reader:
    """Checks the shape of parsed JSON, naming the place of any problem (``$[0].turns[3]``)."""

    def __init__(self, path: Path, max_turn_chars: int):
        self.path = path
        self.max_turn_chars = max_turn_chars

    def fail(self, place: str, problem: str) -> LoadError:
        return LoadError(self.path, place, problem)

    def get(
        self, obj: Any, key: str, place: str, kind: type | tuple[type, ...], required: bool = True, default: Any = None
    ) -> Any:
        if not isinstance(obj, dict):
            raise self.fail(place, f"expected an object, found {_kind(obj)}")
        if key not in obj or obj[key] is None:
            if required:
                raise self.fail(place, f"missing key {key!r}")
            return default
        value = obj[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            names = " or ".join(_NAMES.get(k, k.__name__) for k in kinds)
            raise self.fail(f"{place}.{key}", f"expected {names}, found {_kind(value)}")
        return value

    def items(self, obj: Any, place: str) -> list:
        if not isinstance(obj, list):
            raise self.fail(place, f"expected a list, found {_kind(obj)}")
        return obj

    def text(self, value: Any, place: str) -> str:
        """A turn's text: a non-empty string no longer than the limit."""
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise self.fail(place, f"expected a string, found {_kind(value)}")
        if len(value) > self.max_turn_chars:
            raise self.fail(
                place,
                f"turn text is {len(value):,} characters; the limit is {self.max_turn_chars:,} (setting input.max_turn_chars)",
            )
        if not value.strip():
            raise self.fail(place, "turn text is empty")
        return value

    def nonempty(self, turns: list, place: str) -> None:
        if not turns:
            raise self.fail(place, "session has no turns")


_NAMES = {str: "a string", int: "an integer", float: "a number", list: "a list", dict: "an object", bool: "true/false"}


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return _NAMES.get(type(value), type(value).__name__)


_TIME_FORMATS = (
    "%I:%M %p on %d %B, %Y",  # LoCoMo: "1:56 pm on 8 May, 2023"
    "%I:%M %p on %d %b, %Y",
    "%d %B %Y",
    "%d %B, %Y",
    "%B %d, %Y",
    "%b %d, %Y",
    "%Y/%m/%d",
    "%Y/%m/%d %H:%M",
    "%d/%m/%Y",
)


def parse_time(text: str | None) -> str | None:
    """An ISO date, or datetime when the text gives a clock time; None when it cannot be read."""
    if not text or not str(text).strip():
        return None
    raw = " ".join(str(text).split())
    has_clock = ":" in raw
    try:
        parsed = datetime.fromisoformat(raw)
    except ValueError:
        parsed = None
        for fmt in _TIME_FORMATS:
            try:
                parsed = datetime.strptime(raw, fmt)
            except ValueError:
                continue
            has_clock = "%H" in fmt or "%I" in fmt
            break
    if parsed is None:
        return None
    return parsed.isoformat(timespec="minutes") if has_clock else parsed.date().isoformat()


ASSISTANT_NAMES = {"assistant", "supporter", "counselor", "counsellor", "therapist", "sys", "system", "bot", "helper"}


def role_for(speaker: str) -> Role:
    """Role for a speaker label: support-side names are the assistant, everybody else a user."""
    return "assistant" if speaker.strip().lower() in ASSISTANT_NAMES else "user"
