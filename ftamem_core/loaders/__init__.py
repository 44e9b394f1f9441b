"""Loaders: a dialogue file in, validated CaseDocuments out; nothing is stored here."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from ..models import CaseDocument
from . import esmemeval, generic, locomo, transcript
from .common import LoadError, Reader, parse_json, read_text

Format = Literal["auto", "locomo", "esmemeval", "json", "jsonl", "text"]
FORMATS: tuple[str, ...] = ("auto", "locomo", "esmemeval", "json", "jsonl", "text")

__all__ = ["FORMATS", "Format", "LoadError", "load_file"]


def load_file(
    path: str | Path, fmt: Format = "auto", max_turn_chars: int = 100_000, max_mb: int = 50
) -> list[CaseDocument]:
    """Parse and check a whole file of at most ``max_mb`` megabytes; raises LoadError naming the
    file, place and problem."""
    path = Path(path)
    if fmt not in FORMATS:
        raise LoadError(path, "", f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    text = read_text(path, max_mb)
    try:
        docs = _load(path, fmt, text, Reader(path, max_turn_chars))
    except LoadError:
        raise
    except ValidationError as e:  # a value the models refuse (e.g. an empty case id)
        first = e.errors()[0]
        raise LoadError(path, ".".join(map(str, first["loc"])), first["msg"]) from None
    except (RecursionError, ValueError, TypeError, KeyError, AttributeError, IndexError) as e:
        raise LoadError(
            path, "", f"cannot read the file ({e.__class__.__name__}: {str(e).splitlines()[0][:120] if str(e) else ''})"
        ) from None
    for d in docs:
        d.case.source_file = path.name
    return docs


def _load(path: Path, fmt: str, text: str, r: Reader) -> list[CaseDocument]:
    if fmt == "auto":
        fmt = _detect(path)
    if fmt == "text":
        docs = transcript.load(r, path, text)
    elif fmt == "jsonl":
        docs = generic.load_jsonl(r, path, text)
    else:
        data = parse_json(path, text)
        if fmt == "auto":  # a .json file: tell the formats apart by their keys
            fmt = "locomo" if locomo.looks_like(data) else "esmemeval" if esmemeval.looks_like(data) else "json"
        loader = {"locomo": locomo.load, "esmemeval": esmemeval.load, "json": generic.load_json}[fmt]
        docs = loader(r, data)
    return docs


def _detect(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return "jsonl"
    if suffix in (".txt", ".md", ".text"):
        return "text"
    return "auto"
