"""The person's rights over their case: see all of it (export), take it elsewhere (import),
and have it erased for good (erase, retention).

Erasure deletes every row of the case (each per-case table cascades from ``cases``) with
``secure_delete`` on (storage/store.py), removes the case's FAISS files, checkpoints the WAL with
TRUNCATE and vacuums, so the deleted text is in no page of ``memory.db`` and no ``-wal`` file;
then it runs the hooks a running app registers (``on_erase``) to drop its in-process copies.
What it cannot reach is listed in docs/privacy.md (a remote LLM server's logs, copies made by others).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

from ..models import MAX_RETENTION_DAYS, utcnow
from ..storage.case_rows import AUDIT_TABLES, CASE_TABLES
from ..storage.store import CaseExists, NotFound, Store, StoreError

EXPORT_FORMAT = "ftamem-case-export"
EXPORT_VERSION = 1
# Hooks a running app adds to drop what it holds of an erased case (build events, traces, caches).
on_erase: list[Callable[[str], None]] = []


def case_counts(store: Store, case_id: str) -> dict[str, int]:
    """How many rows of each kind the store holds for a case."""
    if not store.case_exists(case_id):
        raise NotFound(f"no case {case_id!r}")
    return store.case_row_counts(case_id)


# Export and import -----------------------------------------------------------------------


def export_case(store: Store, case_id: str) -> dict:
    """Everything stored about a case, as one JSON-ready document."""
    if not store.case_exists(case_id):
        raise NotFound(f"no case {case_id!r}")
    tables = {
        table: [{k: _encode(v) for k, v in r.items()} for r in rows]
        for table, rows in store.case_tables(case_id).items()
    }
    audit = store.case_tables(case_id, AUDIT_TABLES)
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "case_id": case_id,
        "exported_at": utcnow(),
        "tables": tables,
        "audit": audit,
    }


def write_export(store: Store, case_id: str, path: str | Path) -> Path:
    """The export as a file readable by its owner only."""
    path = Path(path)
    data = json.dumps(export_case(store, case_id), ensure_ascii=False, indent=1).encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(path, 0o600)
    return path


def import_case(store: Store, document: dict) -> str:
    """Restore an exported case, refused when the case exists. Every row gets a new id of this
    store and every reference is remapped (a file's ids are not trusted: one id of 2**63-1 would
    exhaust AUTOINCREMENT for every case); every field is checked against the store's models and a
    reference to a row not in the file is refused. One transaction: nothing is written on failure.
    Returns the case id."""
    if not isinstance(document, dict) or document.get("format") != EXPORT_FORMAT:
        raise StoreError("not an FTA-Mem case export (no 'format': 'ftamem-case-export')")
    if document.get("version") != EXPORT_VERSION:
        raise StoreError(f"export version {document.get('version')!r} is not {EXPORT_VERSION}")
    tables, case_id = document.get("tables"), document.get("case_id")
    if not isinstance(tables, dict) or not isinstance(case_id, str) or len(tables.get("cases") or []) != 1:
        raise StoreError("the export holds no case")
    if store.case_exists(case_id):
        raise CaseExists(f"case {case_id!r} is already stored; erase it first or import into another store")
    unknown = set(tables) - set(CASE_TABLES)
    if unknown:
        raise StoreError(f"the export has tables this store does not know: {', '.join(sorted(unknown))}")
    new_ids: dict[str, dict[int, int]] = {t: {} for t in CASE_TABLES}
    with store._lock:
        try:
            with store.transaction():
                for table in CASE_TABLES:
                    columns = store.table_columns(table)
                    rows = tables.get(table) or []
                    if not isinstance(rows, list):
                        raise StoreError(f"the export's {table} is not a list of rows")
                    for row in rows:
                        _import_row(store, table, columns, row, case_id, new_ids)
                store.move_build_settings_by_phase(case_id)  # an export written before phases
                store.new_vector_token(case_id)
        except sqlite3.IntegrityError as e:
            raise StoreError(f"the export does not fit this store ({e})") from None
        except sqlite3.OperationalError as e:
            raise StoreError(f"the export could not be stored ({e})") from None
        store.vectors.drop(case_id)
    return case_id


# Columns holding another imported row's id: (table, column) -> the table it points into.
_REFS = {
    ("turns", "session_id"): "sessions",
    ("segments", "session_id"): "sessions",
    ("units", "session_id"): "sessions",
    ("unit_vectors", "unit_id"): "units",
    ("links", "source"): "units",
    ("links", "target"): "units",
    ("semantic_memory", "session_id"): "sessions",
    ("support_memory", "session_id"): "sessions",
    ("build_sessions", "session_id"): "sessions",
    ("build_sessions", "build_id"): "builds",
    ("llm_calls", "build_id"): "builds",
}
_HISTORY_OBJECTS = {"unit": "units", "link": "links", "session": "sessions"}
_SQL_TYPES = {"INTEGER": (int,), "TEXT": (str,), "REAL": (int, float), "BLOB": (bytes,)}


def _import_row(store: Store, table: str, columns: dict, row, case_id: str, new_ids: dict) -> None:
    if not isinstance(row, dict) or not set(row) <= set(columns):
        raise StoreError(f"a {table} row has fields this store does not know")
    if (row.get("id") if table == "cases" else row.get("case_id")) != case_id:
        raise StoreError(f"a {table} row belongs to another case")
    row = {k: _decode(v) for k, v in row.items()}
    # A column added after the export was written (e.g. units.origin) takes its default.
    row.update(
        {
            name: _literal(col["dflt_value"])
            for name, col in columns.items()
            if name not in row and col["dflt_value"] is not None
        }
    )
    old_id = row.pop("id", None) if table != "cases" else None
    for name, col in columns.items():
        value = row.get(name)
        if value is None:
            if col["notnull"] and name != "id" and (table, name) != ("unit_vectors", "unit_id"):
                raise StoreError(f"a {table} row has no {name}")
        elif isinstance(value, bool) or not isinstance(value, _SQL_TYPES.get(col["type"], (object,))):
            raise StoreError(f"a {table} row's {name} is not of type {col['type']}")
    for (t, name), target in _REFS.items():
        if t == table and row.get(name) is not None:
            row[name] = _new_id(new_ids, target, row[name], table)
    if table in ("semantic_memory", "support_memory"):
        try:
            ids = json.loads(row.get("source_unit_ids") or "[]")
        except ValueError:
            raise StoreError(f"a {table} row's source_unit_ids is not a list of ids") from None
        if not isinstance(ids, list):
            raise StoreError(f"a {table} row's source_unit_ids is not a list of ids")
        row["source_unit_ids"] = json.dumps([_new_id(new_ids, "units", i, table) for i in ids])
    if table == "history" and row.get("object") in _HISTORY_OBJECTS:
        # A deleted unit's or link's history stays, pointing at no row: a negative id (never a
        # real one) keeps its entries together without claiming an id this store will hand out.
        gone = new_ids.setdefault("gone", {})
        key = (row["object"], row.get("object_id"))
        row["object_id"] = new_ids[_HISTORY_OBJECTS[row["object"]]].get(key[1]) or gone.setdefault(key, -1 - len(gone))
    _validate(store, table, {**row, "id": 1 if table != "cases" else row.get("id")})
    row_id = store.insert_case_row(table, row)
    if old_id is not None:
        new_ids[table][old_id] = row_id


def _literal(default: str):
    """A column's SQL default as a value: 'text', a number, or NULL."""
    if default.upper() == "NULL":
        return None
    if default[:1] == "'":
        return default[1:-1].replace("''", "'")
    return float(default) if "." in default else int(default)


def _new_id(new_ids: dict, target: str, old, table: str) -> int:
    if isinstance(old, bool) or not isinstance(old, int) or old not in new_ids[target]:
        raise StoreError(f"a {table} row refers to {target} row {old!r}, which is not part of this case's export")
    return new_ids[target][old]


def _validate(store: Store, table: str, row: dict) -> None:
    """The row read back as the store reads it, so a value of the wrong shape or range is refused
    here rather than breaking a command or page later."""
    from pydantic import ValidationError

    from ..models import Build, CallRecord, Case, Link, Question, Segment, SemanticEntry, Session, SupportEntry, Turn
    from ..storage.units import unit_from_row

    j = lambda f: json.loads(row[f])  # noqa: E731
    checks = {
        "cases": lambda: (
            Case(**{k: v for k, v in row.items() if k != "last_build_at"} | {"profile": j("profile")}),
            expires_at(row["created_at"], MAX_RETENTION_DAYS),
        ),
        "sessions": lambda: Session(**{**row, "meta": j("meta")}),
        "turns": lambda: Turn(**row),
        "questions": lambda: Question(**{**row, "evidence": j("evidence"), "meta": j("meta")}),
        "segments": lambda: Segment(**{**row, "provisional": bool(row["provisional"])}),
        "units": lambda: unit_from_row(row),
        "unit_vectors": lambda: len(row["vector"]) == store.vectors.dim * 4 or _bad("a vector has the wrong size"),
        "links": lambda: Link(**row),
        "semantic_memory": lambda: SemanticEntry(**{**row, "source_unit_ids": j("source_unit_ids")}),
        "support_memory": lambda: SupportEntry(**{**row, "source_unit_ids": j("source_unit_ids")}),
        "builds": lambda: Build(**{**row, "settings": j("settings")}),
        "llm_calls": lambda: CallRecord(**row),
        "consent_log": lambda: row["state"] in ("granted", "withdrawn") or _bad("a consent state is unknown"),
    }
    try:
        if table in checks:
            checks[table]()
    except (ValidationError, ValueError, TypeError, KeyError, OverflowError) as e:
        first = str(e).splitlines()[0] if str(e) else e.__class__.__name__
        raise StoreError(f"a {table} row is not valid ({first})") from None


def _bad(message: str):
    raise ValueError(message)


def read_import(store: Store, path: str | Path, max_mb: int = 50) -> str:
    """Import an export file of at most ``max_mb`` megabytes (setting input.max_upload_mb)."""
    from ..loaders.common import LoadError, read_capped

    try:
        document = json.loads(read_capped(path, max_mb).decode("utf-8"))
    except LoadError as e:
        raise StoreError(str(e)) from None
    except (OSError, ValueError, RecursionError) as e:
        raise StoreError(f"{path}: cannot read the export ({e.__class__.__name__})") from None
    return import_case(store, document)


def _encode(value):
    return {"base64": base64.b64encode(value).decode("ascii")} if isinstance(value, bytes) else value


def _decode(value):
    if isinstance(value, dict) and set(value) == {"base64"}:
        return base64.b64decode(value["base64"])
    if isinstance(value, (dict, list)):
        raise StoreError("a field of the export is not a plain value")
    return value


# Erasure ---------------------------------------------------------------------------------


def case_hash(case_id: str) -> str:
    return hashlib.sha256(case_id.encode("utf-8")).hexdigest()


def erase_case(store: Store, case_id: str, who: str, reason: str = "") -> dict[str, int]:
    """Erase a case for good (see the module's doc); returns the counts of what was erased."""
    counts = case_counts(store, case_id)
    with store._lock:
        store.delete_case_rows(case_id, case_hash(case_id), who, reason, counts)
        store.vectors.drop(case_id)
        scrub(store)
    for hook in list(on_erase):
        hook(case_id)
    return counts


def scrub(store: Store) -> None:
    """Leave no deleted page behind: the WAL copied back and truncated, the file rewritten."""
    if store.path == ":memory:":
        return
    if not store.vacuum():
        store.owe_scrub()
        raise StoreError(
            "another process is reading the database: its old pages stay in memory.db-wal until it "
            "stops; the next write or close of the store (any command) removes them then"
        )


def erasures(store: Store) -> list[dict]:
    return store.erasures()


# Retention -------------------------------------------------------------------------------


def check_retention(days: int | None) -> None:
    if days is not None and (
        isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_RETENTION_DAYS
    ):
        raise StoreError(f"retention is a number of days from 1 to {MAX_RETENTION_DAYS}, or none")


def set_retention(store: Store, case_id: str, days: int | None) -> None:
    check_retention(days)
    if not store.set_case_retention(case_id, days):
        raise NotFound(f"no case {case_id!r}")


def expires_at(created_at: str, days: int | None) -> datetime | None:
    if days is None:
        return None
    created = datetime.fromisoformat(created_at)
    if created.tzinfo is None:
        created = created.replace(tzinfo=timezone.utc)
    return created + timedelta(days=days)


def expired(
    store: Store, default_days: int | None = None, now: datetime | None = None, skipped: list[str] | None = None
) -> list[str]:
    """Cases past their retention (their own, else ``default_days``). A case whose end cannot be
    worked out (a date that is not one, a sum past year 9999) is left alone and its id added to
    ``skipped``: one bad row must not stop every command."""
    now = now or datetime.now(timezone.utc)
    gone = []
    for r in store.case_retentions():
        try:
            end = expires_at(r["created_at"], r["retention_days"] or default_days)
        except (TypeError, ValueError, OverflowError):
            if skipped is not None:
                skipped.append(r["id"])
            continue
        if end is not None and end <= now:
            gone.append(r["id"])
    return gone


def skipped_message(case_ids: list[str]) -> str:
    return (
        f"retention could not be evaluated for case(s) {', '.join(map(repr, case_ids))} (a creation date or "
        "retention that is not valid); they were not erased: set their retention on the Privacy page"
    )


def purge_expired(
    store: Store, default_days: int | None = None, now: datetime | None = None, skipped: list[str] | None = None
) -> list[str]:
    """Erase every expired case; returns their ids (see ``expired`` for ``skipped``)."""
    gone = expired(store, default_days, now, skipped)
    for case_id in gone:
        erase_case(store, case_id, who="retention", reason="retention period over")
    return gone
