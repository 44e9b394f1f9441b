"""Corrections by hand: edit a unit's fields (re-embedded, version-checked), mark it disputed,
delete units, add, retype and delete links. Every change is written to ``history`` with who,
when, old and new value and a reason, in the same transaction as the change. A deletion is
recorded without the deleted text.
"""

from __future__ import annotations

from typing import Any

from ..llm.embeddings import Embedder
from ..models import FTAUnit, Link
from ..construction.representation import retrieval_text
from ..storage.store import Store, StoreError, VersionConflict

# Editable fields as "anchor.field" paths of FTAUnit.
EDITABLE = (
    "fact.text",
    "fact.summary",
    "fact.content_type",
    "fact.participants",
    "time.event_time",
    "time.event_time_expression",
    "time.time_orientation",
    "time.completion",
    "affect.emotion_or_state",
    "affect.intention_or_plan",
    "affect.relation_cues",
    "lifecycle_status",
    "completeness",
    "disputed",
)


def _get(unit: FTAUnit, path: str) -> Any:
    value: Any = unit
    for part in path.split("."):
        value = getattr(value, part)
    return value


def _record(
    store: Store,
    case_id: str,
    obj: str,
    obj_id: int,
    action: str,
    who: str,
    reason: str,
    field: str = "",
    old: Any = None,
    new: Any = None,
) -> None:
    store.add_history(case_id, obj, obj_id, action, who, reason, field, old, new)


def edit_unit(
    store: Store,
    embedder: Embedder | None,
    case_id: str,
    unit_id: int,
    changes: dict[str, Any],
    expected_version: int,
    who: str,
    reason: str,
) -> FTAUnit:
    """Apply field changes to a unit read at ``expected_version``; raises VersionConflict if it
    changed since. A final unit is re-embedded so retrieval sees the correction."""
    unknown = set(changes) - set(EDITABLE)
    if unknown:
        raise StoreError(f"not editable: {', '.join(sorted(unknown))}")
    current = store.get_unit(case_id, unit_id)
    if current.version != expected_version:
        raise VersionConflict(
            f"unit {unit_id} was changed by someone else (version {current.version}, "
            f"you read {expected_version}); reload it"
        )
    data = current.model_dump()
    for path, value in changes.items():
        anchor, _, name = path.rpartition(".")
        (data[anchor] if anchor else data)[name] = value
    edited = FTAUnit.model_validate(data)  # the enums and types still hold
    diffs = [(p, _get(current, p), _get(edited, p)) for p in changes if _get(current, p) != _get(edited, p)]
    if not diffs:
        return current
    edited = edited.model_copy(update={"origin": "corrected"})  # provenance: a person's word now
    vector = None
    if embedder is not None and edited.construction_status == "final":
        vector = embedder.encode([retrieval_text(edited)])[0]
    with store.transaction():
        updated = store.update_unit(edited, vector)
        for path, old, new in diffs:
            _record(store, case_id, "unit", unit_id, "edit", who, reason, path, old, new)
    return updated


def _require_reason(reason: str) -> None:
    if not reason.strip():
        raise StoreError("say why it is deleted (the reason is kept; the deleted text is not)")


def delete_unit(store: Store, case_id: str, unit_id: int, who: str, reason: str) -> None:
    """Delete a unit with its vector, links, history text and the entries derived from it
    (Store.delete_units); the history keeps who, when and why."""
    _require_reason(reason)
    with store.transaction():
        store.delete_unit(case_id, unit_id)
        _record(store, case_id, "unit", unit_id, "delete", who, reason)


def add_link(store: Store, case_id: str, link: Link, who: str, reason: str) -> int:
    with store.transaction():
        (link_id,) = store.add_links(case_id, [link])
        _record(
            store,
            case_id,
            "link",
            link_id,
            "add",
            who,
            reason,
            "relation",
            None,
            f"m{link.source} {link.relation} m{link.target}",
        )
    return link_id


def retype_link(store: Store, case_id: str, link_id: int, relation: str, who: str, reason: str) -> Link:
    old = store.get_link(case_id, link_id)
    new = Link.model_validate({**old.model_dump(), "relation": relation})
    with store.transaction():
        store.set_link_relation(case_id, link_id, new.relation)
        _record(store, case_id, "link", link_id, "edit", who, reason, "relation", old.relation, new.relation)
    return new


def delete_session_memory(store: Store, case_id: str, session_id: int, who: str, reason: str) -> int:
    """Delete what was built from one session (its units and everything derived from them, its
    segments); the turns stay, so a later build builds it again. Returns how many units went."""
    _require_reason(reason)
    with store.transaction():
        gone = store.clear_session_memory(case_id, session_id)
        _record(store, case_id, "session", session_id, "delete_memory", who, reason, new=len(gone))
    return len(gone)


def delete_link(store: Store, case_id: str, link_id: int, who: str, reason: str) -> None:
    _require_reason(reason)
    with store.transaction():
        store.delete_link(case_id, link_id)
        _record(store, case_id, "link", link_id, "delete", who, reason)


# What a person did by hand (the model's own changes are 'model_edit'); a rebuild from scratch
# would undo these, so it is refused while they stand (see human_corrections).
HUMAN_ACTIONS = ("edit", "delete", "add", "delete_memory")


def human_corrections(store: Store, case_id: str) -> list[dict]:
    """The corrections, deletions and added links people made since the last rebuild that
    discarded them: what a rebuild from scratch would throw away."""
    return store.history_since(case_id, "rebuild_discarded", HUMAN_ACTIONS)


def record_discarded(store: Store, case_id: str, who: str, count: int) -> None:
    """A rebuild from scratch discarded ``count`` corrections on purpose: later rebuilds start from here."""
    _record(store, case_id, "case", 0, "rebuild_discarded", who, f"{count} correction(s) discarded by a rebuild")


def history(store: Store, case_id: str, obj: str | None = None, obj_id: int | None = None) -> list[dict]:
    return store.history(case_id, obj, obj_id)
