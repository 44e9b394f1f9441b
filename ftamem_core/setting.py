"""How a setting is declared: its default, what it does, whether it shapes a build, and for a
setting beyond the paper, the value that returns to the paper's method.

The flags live on the field (pydantic ``json_schema_extra``) so that what a build records, the
evaluation's build cache key, the ``paper`` profile and docs/configuration.md are all read off the
one settings model; no list of setting names is kept anywhere else.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field
from pydantic.fields import FieldInfo

_NO_PAPER = object()


def setting(
    default: Any = ..., *, description: str, build: bool = False, paper: Any = _NO_PAPER, **field_args: Any
) -> Any:
    """A settings field. ``build``: changing it may change what a build writes (it is recorded
    with the build and keys the evaluation's build cache). ``paper``: the setting goes beyond the
    paper, and this value is the paper's method as written."""
    extra: dict[str, Any] = {"build": build}
    if paper is not _NO_PAPER:
        extra["paper"] = paper
    if "default_factory" in field_args:
        return Field(description=description, json_schema_extra=extra, **field_args)
    return Field(default, description=description, json_schema_extra=extra, **field_args)


def _extra(info: FieldInfo) -> dict[str, Any]:
    return info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}


def declared(info: FieldInfo) -> bool:
    """Whether the field was declared with ``setting`` (it has a description and a build flag)."""
    return bool(info.description) and "build" in _extra(info)


def shapes_build(info: FieldInfo) -> bool:
    return bool(_extra(info).get("build"))


def paper_value(info: FieldInfo) -> tuple[bool, Any]:
    """(True, the paper's value) for a setting beyond the paper, else (False, None)."""
    extra = _extra(info)
    return ("paper" in extra, extra.get("paper"))


def build_values(obj: BaseModel) -> dict[str, Any]:
    """The values of the settings that shape a build, nested models by their own flags."""
    out: dict[str, Any] = {}
    for name, info in type(obj).model_fields.items():
        value = getattr(obj, name)
        if isinstance(value, BaseModel):
            inner = build_values(value)
            if inner:
                out[name] = inner
        elif shapes_build(info):
            out[name] = obj.model_dump(mode="json", include={name})[name]
    return out
