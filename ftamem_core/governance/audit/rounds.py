"""Audit rounds: draw a sample, show each item blind, record scores, act on what was found.

Blind protocol: an item's view holds the units, their evidence turns, the automatic checks and
the viewer's own score, never anyone else's. The report shows everyone's scores, so opening it
ends one's annotation of the round: a name that has seen the report cannot score or revise in
that round any more (``reveal``).
"""

from __future__ import annotations

import csv
import dataclasses
import random
from pathlib import Path

from ..editing import delete_unit, edit_unit
from ...storage.store import NotFound, Store, StoreError
from ...text.english import is_english
from .checks import unit_checks
from .sampling import SAMPLER, Draw, draw

CRITERIA = {"unit": ("fact", "time", "affect"), "pair": ("relatedness",)}
ALL_CRITERIA = ("fact", "time", "affect", "relatedness")


class AuditError(StoreError):
    pass


# Rounds ----------------------------------------------------------------------------------


def new_round(
    store: Store, case_ids: list[str] | None, n_units: int, n_pairs: int, seed: int | None = None, who: str = ""
) -> int:
    """Draw and store a round over ``case_ids`` (None: every case with memory); returns its id."""
    if n_units < 0 or n_pairs < 0 or n_units + n_pairs == 0:
        raise AuditError("ask for some units or pairs (numbers from 0 up, not both 0)")
    if case_ids is None:
        cases = [c["id"] for c in store.list_cases() if c["units"]]
    else:
        cases = sorted(set(case_ids))
        for case_id in cases:
            if not store.case_exists(case_id):
                raise NotFound(f"no case {case_id!r}")
    if seed is None:
        seed = random.SystemRandom().randrange(2**31)
    draws = draw(store, cases, n_units, n_pairs, seed)
    if not draws:
        raise AuditError("nothing to sample: no built units or links in " + (", ".join(cases) or "any case"))
    settings = {"sampler": SAMPLER, "revealed_to": []}
    return store.add_audit_round(
        "all" if case_ids is None else "cases",
        n_units,
        n_pairs,
        seed,
        settings,
        who,
        cases,
        [dataclasses.asdict(d) for d in draws],
    )


def get_round(store: Store, round_id: int) -> dict:
    row = store.audit_round(round_id)
    if row is None:
        raise NotFound(f"no audit round {round_id}")
    return row


def list_rounds(store: Store) -> list[dict]:
    return [get_round(store, round_id) for round_id in store.audit_round_ids()]


def items(store: Store, round_id: int) -> list[dict]:
    get_round(store, round_id)
    return store.audit_items(round_id)


def get_item(store: Store, item_id: int) -> dict:
    item = store.audit_item(item_id)
    if item is None:
        raise NotFound(f"no audit item {item_id}")
    return item


def redraw(store: Store, round_id: int) -> list[Draw]:
    """The round's sample drawn again from its seed and settings over the memory as it is now."""
    r = get_round(store, round_id)
    if r["settings"].get("sampler") != SAMPLER:
        raise AuditError(f"round {round_id} was drawn by sampler {r['settings'].get('sampler')!r}, not {SAMPLER!r}")
    return draw(store, r["cases"], r["n_units"], r["n_pairs"], r["seed"])


def as_drawn(item: dict) -> Draw:
    return Draw(
        item["case_id"],
        item["kind"],
        item["unit_id"],
        item["unit_version"],
        item["stratum"],
        item["other_id"],
        item["other_version"],
        item["link_id"],
    )


def item_units(item: dict) -> list[tuple[int, int]]:
    """(unit id, version drawn) of the item's units."""
    pairs = [(item["unit_id"], item["unit_version"])]
    if item["kind"] == "pair":
        pairs.append((item["other_id"], item["other_version"]))
    return pairs


def changes_since_draw(store: Store, item: dict) -> list[str]:
    """What changed in the item's units (or link) since the round was drawn."""
    found = {u.id: u for u in store.units_by_id(item["case_id"], [uid for uid, _ in item_units(item)])}
    notes = []
    for uid, version in item_units(item):
        unit = found.get(uid)
        if unit is None:
            notes.append(f"m{uid} deleted")
        elif unit.version != version:
            notes.append(f"m{uid} changed (version {version} drawn, now {unit.version})")
    if item["kind"] == "pair" and not store.present_link_ids(item["case_id"], [item["link_id"]]):
        notes.append(f"link {item['link_id']} deleted")
    return notes


# Showing an item -------------------------------------------------------------------------


def _context(store: Store, case_id: str):
    turns = {t.idx: t for t in store.turns(case_id)}
    sessions = {s.id: s.time for s in store.sessions(case_id)}
    speakers = sorted({t.speaker for t in turns.values() if t.speaker})
    return turns, sessions, speakers, is_english([t.text for t in turns.values()])


def item_checks(store: Store, item: dict, context=None) -> dict[int, dict]:
    turns, sessions, speakers, english = context or _context(store, item["case_id"])
    units = store.units_by_id(item["case_id"], [uid for uid, _ in item_units(item)])
    return {u.id: unit_checks(u, turns, sessions.get(u.evidence.session_id), speakers, english) for u in units}


def unit_item_checks(store: Store, items_: list[dict]) -> dict[int, dict | None]:
    """The automatic checks of each unit item's unit, by item id (each case's turns read once)."""
    contexts: dict[str, tuple] = {}
    out = {}
    for item in items_:
        if item["kind"] == "unit":
            if item["case_id"] not in contexts:
                contexts[item["case_id"]] = _context(store, item["case_id"])
            out[item["id"]] = item_checks(store, item, contexts[item["case_id"]]).get(item["unit_id"])
    return out


def item_view(store: Store, item_id: int, annotator: str) -> dict:
    """What an annotator sees of an item: its units beside their evidence turns, the automatic
    checks, what changed since the draw, and their own score only."""
    item = get_item(store, item_id)
    context = _context(store, item["case_id"])
    turns = context[0]
    units = {u.id: u for u in store.units_by_id(item["case_id"], [uid for uid, _ in item_units(item)])}
    shown = []
    for uid, _ in item_units(item):
        unit = units.get(uid)
        if unit is None:
            shown.append({"id": uid, "deleted": True})
            continue
        evidence = [turns[i] for i in range(unit.evidence.start, unit.evidence.end + 1) if i in turns]
        shown.append(
            {
                "id": uid,
                "deleted": False,
                "unit": unit.model_dump(),
                "turns": [
                    t.model_dump(include={"idx", "original_id", "role", "speaker", "timestamp", "text"})
                    for t in evidence
                ],
            }
        )
    link = None
    if item["kind"] == "pair":
        try:
            found = store.get_link(item["case_id"], item["link_id"])
            link = found.model_dump(include={"id", "source", "target", "relation", "confidence"})
        except NotFound:
            link = None
    own = store.audit_score(item_id, annotator)
    return {
        "item": {k: item[k] for k in ("id", "round_id", "position", "kind", "case_id", "stratum")},
        "criteria": list(CRITERIA[item["kind"]]),
        "units": shown,
        "link": link,
        "checks": item_checks(store, item, context),
        "changed": changes_since_draw(store, item),
        "own_score": _score_fields(own) if own else None,
    }


def _score_fields(row: dict) -> dict:
    return {k: row[k] for k in (*ALL_CRITERIA, "comment", "at")}


# Scoring ---------------------------------------------------------------------------------


def revealed_to(store: Store, round_id: int) -> list[str]:
    return get_round(store, round_id)["settings"].get("revealed_to", [])


def reveal(store: Store, round_id: int, who: str) -> None:
    """Record that ``who`` has seen everyone's scores of the round (they cannot score it now)."""
    with store.transaction():
        r = get_round(store, round_id)
        if who not in r["settings"]["revealed_to"]:
            r["settings"]["revealed_to"].append(who)
            store.set_audit_round_settings(round_id, r["settings"])


def _valid(kind: str, scores: dict) -> dict:
    out = {}
    for name in CRITERIA[kind]:
        value = scores.get(name)
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value)
        if isinstance(value, bool) or value not in (0, 1, 2):
            raise AuditError(f"{name} must be scored 0, 1 or 2 (got {value!r})")
        out[name] = value
    extra = {k for k, v in scores.items() if v not in (None, "") and k not in CRITERIA[kind]}
    if extra:
        raise AuditError(f"a {kind} item is not scored on {', '.join(sorted(extra))}")
    return out


def score(store: Store, item_id: int, annotator: str, scores: dict, comment: str = "") -> None:
    """Record (or revise) one annotator's scores of an item."""
    annotator = annotator.strip()
    if not annotator:
        raise AuditError("say who is scoring (a name)")
    item = get_item(store, item_id)
    if annotator in revealed_to(store, item["round_id"]):
        raise AuditError(
            f"{annotator} has seen the round's report: their scores of round {item['round_id']} are closed"
        )
    values = _valid(item["kind"], scores)
    found = {u.id: u.version for u in store.units_by_id(item["case_id"], [uid for uid, _ in item_units(item)])}
    row = {c: values.get(c) for c in ALL_CRITERIA}
    store.save_audit_score(
        item_id,
        item["case_id"],
        annotator,
        row,
        comment,
        found.get(item["unit_id"]),
        found.get(item["other_id"]) if item["kind"] == "pair" else None,
    )


def import_scores(store: Store, round_id: int, annotator: str, path: str | Path) -> int:
    """Scores from a CSV file (columns: item, then fact, time, affect or relatedness, optional
    comment), all or nothing: a bad row names its line and nothing is written."""
    ids = {i["id"] for i in items(store, round_id)}
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise AuditError(f"{path}: cannot read the scores ({e.__class__.__name__})") from None
    checked = []
    for line, row in enumerate(rows, start=2):
        try:
            item_id = int(str(row.get("item", "")).strip().lstrip("#"))
        except ValueError:
            raise AuditError(f"{path} line {line}: no item id in column 'item'") from None
        if item_id not in ids:
            raise AuditError(f"{path} line {line}: item {item_id} is not in round {round_id}")
        try:
            _valid(get_item(store, item_id)["kind"], {k: row.get(k) for k in ALL_CRITERIA})
        except AuditError as e:
            raise AuditError(f"{path} line {line}: {e}") from None
        checked.append((item_id, {k: row.get(k) for k in ALL_CRITERIA}, row.get("comment") or ""))
    with store.transaction():  # nested transactions join this one: all rows or none
        for item_id, values, comment in checked:
            score(store, item_id, annotator, values, comment)
    return len(checked)


def scores(store: Store, round_ids: list[int]) -> list[dict]:
    """Every score of the rounds (for the report: this is what the blind view never shows)."""
    return store.audit_scores(round_ids)


def progress(store: Store, round_id: int) -> dict:
    total = get_round(store, round_id)["items"]
    return {"items": total, "annotators": store.audit_scored_counts(round_id)}


def next_item(store: Store, round_id: int, annotator: str) -> int | None:
    """The first item (in the round's order) that ``annotator`` has not scored: where to resume."""
    return store.first_unscored_item(round_id, annotator)


# Acting on a finding ---------------------------------------------------------------------


def _finding(store: Store, item_id: int, unit_id: int, reason: str) -> tuple[dict, str]:
    item = get_item(store, item_id)
    if unit_id not in [uid for uid, _ in item_units(item)]:
        raise AuditError(f"m{unit_id} is not part of audit item {item_id}")
    if not reason.strip():
        raise AuditError("say what the audit found (the reason goes into the unit's history)")
    return item, f"audit finding (round {item['round_id']}, item {item_id}): {reason.strip()}"


def correct(
    store: Store, embedder, item_id: int, unit_id: int, changes: dict, expected_version: int, who: str, reason: str
):
    item, why = _finding(store, item_id, unit_id, reason)
    return edit_unit(store, embedder, item["case_id"], unit_id, changes, expected_version, who, why)


def dispute(store: Store, embedder, item_id: int, unit_id: int, who: str, reason: str):
    item, why = _finding(store, item_id, unit_id, reason)
    unit = store.get_unit(item["case_id"], unit_id)
    return edit_unit(store, embedder, item["case_id"], unit_id, {"disputed": True}, unit.version, who, why)


def delete(store: Store, item_id: int, unit_id: int, who: str, reason: str) -> None:
    item, why = _finding(store, item_id, unit_id, reason)
    delete_unit(store, item["case_id"], unit_id, who, why)
