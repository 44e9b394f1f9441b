"""How a setting is declared: its default, what it does, whether it shapes a build, and for a
setting beyond the paper, the value that returns to the paper's method.

The flags live on the field (pydantic ``json_schema_extra``) so that what a build records, the
evaluation's build cache key, the ``paper`` profile and docs/configuration.md are all read off the
one settings model; no list of setting names is kept anywhere else. A setting is named by its path
through the nested models (``retrieval.tau``); ``fields`` walks them and ``resolve`` finds a path
from a dotted name or a bare one.
"""

from __future__ import annotations

from typing import Any, Iterator

from pydantic import BaseModel, Field
from pydantic.fields import FieldInfo

_NO_PAPER = object()

FieldPath = tuple[str, ...]


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


def submodel(info: FieldInfo) -> type[BaseModel] | None:
    """The settings model a field holds (a table of its own), else None."""
    kind = info.annotation
    return kind if isinstance(kind, type) and issubclass(kind, BaseModel) else None


def fields(model: type[BaseModel], prefix: FieldPath = ()) -> Iterator[tuple[FieldPath, FieldInfo]]:
    """Every field of a settings model by its path, a nested model's own fields after it. A dict of
    models (``app.backends``) is one field: its keys are the user's names, not settings."""
    for name, info in model.model_fields.items():
        path = (*prefix, name)
        yield path, info
        inner = submodel(info)
        if inner is not None:
            yield from fields(inner, path)


def leaves(model: type[BaseModel]) -> list[FieldPath]:
    """The paths of the settings that hold a value (not a table)."""
    return [path for path, info in fields(model) if submodel(info) is None]


def dotted(path: FieldPath) -> str:
    return ".".join(path)


class UnknownSetting(ValueError):
    """A setting named on the command line that no path or bare name finds, or a bare name that
    several phases hold."""


def resolve(name: str, model: type[BaseModel]) -> FieldPath:
    """The path of the value setting ``name``: its dotted path (``retrieval.tau``), or a bare name
    (``tau``) that one setting alone ends in."""
    paths = leaves(model)
    path = tuple(name.split("."))
    if path in paths:
        return path
    if len(path) == 1:
        found = [p for p in paths if p[-1] == name]
        if len(found) == 1:
            return found[0]
        if found:
            raise UnknownSetting(
                f"setting {name!r} is ambiguous: {', '.join(map(dotted, found))}; name it with its phase"
            )
    near = [dotted(p) for p in paths if p[-1] == path[-1]]
    raise UnknownSetting(f"no setting {name!r}" + (f" (did you mean {' or '.join(near)}?)" if near else ""))


def nested(path: FieldPath, value: Any) -> dict[str, Any]:
    """``("retrieval", "tau"), 0.4`` as ``{"retrieval": {"tau": 0.4}}``."""
    for key in reversed(path[1:]):
        value = {key: value}
    return {path[0]: value}


def merged(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` laid on ``base`` table by table; a None in ``over`` leaves ``base``'s value (an
    option not given, an empty environment variable)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict):
            out[key] = merged(out[key] if isinstance(out.get(key), dict) else {}, value)
        elif value is not None:
            out[key] = value
    return out


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


def value_at(obj: BaseModel, path: FieldPath) -> Any:
    """The value of the setting at ``path`` (``value_at(settings, ("retrieval", "tau"))``)."""
    for key in path:
        obj = getattr(obj, key)
    return obj
