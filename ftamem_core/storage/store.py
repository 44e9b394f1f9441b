"""The store: SQLite through sqlite-utils (source of truth) plus one FAISS index per case.

Every multi-row write happens in one explicit transaction (``Store.transaction``). Writes use
plain SQL on the connection because sqlite-utils' write helpers commit on their own, which would
end an enclosing transaction early; reads use sqlite-utils.

Cases are isolated: every read and write names its case.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Literal

import numpy as np
import sqlite_utils

from .audit import AuditRecords
from .builds import BuildRecords
from .case_rows import CaseRows
from .logs import Logs
from ..errors import BuildRunning, CaseExists, NotFound, StoreError, VersionConflict  # noqa: F401 (raised and re-exported)
from .migrations import apply_migrations
from ..models import (AffectAnchor, Case, CaseDocument, Evidence, FactAnchor, FTAUnit, Link, Question, Segment,
                      SemanticEntry, Session, SessionDocument, SupportEntry, TimeAnchor, Turn, utcnow)
from .vectors import DIM, CaseIndex, IndexConfig, VectorStore, normalise, private_folder

OnExists = Literal["refuse", "replace", "skip"]


class Store(BuildRecords, Logs, AuditRecords, CaseRows):
    def __init__(self, path: str | Path = ":memory:", dim: int = DIM, index_config: IndexConfig | None = None):
        self.path = str(path)
        in_memory = self.path == ":memory:"
        if not in_memory:
            private_folder(Path(self.path).parent)
            # Owner-only from the start; SQLite gives its -wal and -shm files the database's mode.
            os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))
            os.chmod(self.path, 0o600)
        # isolation_level=None: we issue BEGIN/COMMIT ourselves.
        self.conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA foreign_keys = ON")
        self.conn.execute("PRAGMA busy_timeout = 10000")
        # Deleted rows are overwritten with zeros, not left in free pages (erasure, privacy.py).
        self.conn.execute("PRAGMA secure_delete = ON")
        if not in_memory:
            _use_wal(self.conn)
        self.db = sqlite_utils.Database(self.conn)
        self._lock = threading.RLock()
        self._scrub_pending = False
        self.applied_migrations = apply_migrations(self.conn, utcnow())
        with self.transaction():  # a build killed with its process shows as interrupted
            self._interrupt_dead_builds()
        folder = None if in_memory else Path(self.path).with_suffix(".faiss")
        self.vectors = VectorStore(folder, dim, index_config)

    def close(self) -> None:
        self.conn.close()

    # Locks: this store's lock first, then the vector store's, then an index's own: every path
    # that touches vectors holds self._lock around the SQLite write and the index change.

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic write; nested calls join the outer transaction."""
        with self._lock:
            if self.conn.in_transaction:
                yield self.conn
                return
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                self._scrub_pending = False
                raise
            self.conn.execute("COMMIT")
            if self._scrub_pending:
                self._scrub_pending = False
                self.checkpoint()

    def text_removed(self) -> None:
        """Inside a transaction that deletes or rewrites text: when it commits, the WAL is copied
        back and truncated (``checkpoint``), so the old text leaves the files at once, not at the
        next automatic checkpoint (the app keeps its store open for days)."""
        self._scrub_pending = True

    def checkpoint(self) -> bool:
        """Copy the WAL into the database and truncate it; with ``secure_delete`` the freed cells
        are zeros by then. False when another connection's reader kept some frames (they go at
        its next checkpoint; erasure says so, privacy.scrub)."""
        if self.path == ":memory:":
            return True
        with self._lock:
            # A reader elsewhere is waited for 2 s, not the 10 s a write waits: a deletion in the
            # app must not hang on another process's long read (its frames go at the next one).
            self.conn.execute("PRAGMA busy_timeout = 2000")
            try:
                busy, _, _ = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                self.conn.execute("PRAGMA busy_timeout = 10000")
        return not busy

    def migrations(self) -> list[str]:
        return [r["name"] for r in self.db["_migrations"].rows_where(order_by="name")]

    def _rows(self, sql: str, params: tuple | dict = ()) -> list[dict]:
        with self._lock:
            return list(self.db.query(sql, params))

    def _case_rows(self, table: str, case_id: str, order: str, where: dict[str, object]) -> list[dict]:
        """One case's rows of ``table``; each ``where`` clause (one "?") applies when its value is not None."""
        sql, params = f"SELECT * FROM {table} WHERE case_id = ?", [case_id]
        for clause, value in where.items():
            if value is not None:
                sql += f" AND {clause}"
                params.append(value)
        return self._rows(f"{sql} ORDER BY {order}", tuple(params))

    # Cases, sessions, turns -------------------------------------------------------------

    def case_exists(self, case_id: str) -> bool:
        return bool(self._rows("SELECT 1 FROM cases WHERE id = ?", (case_id,)))

    def get_case(self, case_id: str) -> Case:
        rows = self._rows("SELECT * FROM cases WHERE id = ?", (case_id,))
        if not rows:
            raise NotFound(f"no case {case_id!r}")
        row = rows[0]
        row.pop("last_build_at")
        row["profile"] = json.loads(row["profile"])
        return Case(**row)

    def list_cases(self) -> list[dict]:
        """Every case with its counts, in id order."""
        return self._rows(
            """
            SELECT c.id, c.name, c.source_format, c.created_at, c.last_build_at,
              (SELECT count(*) FROM sessions s WHERE s.case_id = c.id) AS sessions,
              (SELECT count(*) FROM turns t WHERE t.case_id = c.id) AS turns,
              (SELECT count(*) FROM units u WHERE u.case_id = c.id
                 AND u.construction_status = 'final') AS units,
              (SELECT count(*) FROM questions q WHERE q.case_id = c.id) AS questions
            FROM cases c ORDER BY c.id
            """
        )

    def ingest(self, docs: list[CaseDocument], on_exists: OnExists = "refuse", who: str = "",
               source: str = "") -> dict[str, str]:
        """Store whole cases in one transaction; returns {case id: "added"|"replaced"|"skipped"}.

        With ``refuse`` an existing case stops the whole ingest and nothing is written. A replaced
        case keeps what is about the person, not the dialogue: its consent and access logs, its
        retention and the date it counts from; the replace is recorded in its access log (``who``,
        from ``source``).
        """
        ids = [d.case.id for d in docs]
        dupes = {i for i in ids if ids.count(i) > 1}
        if dupes:
            raise StoreError(f"the file holds case id(s) {sorted(dupes)} more than once")
        outcome: dict[str, str] = {}
        with self._lock, self.transaction():
            for doc in docs:
                exists = self.case_exists(doc.case.id)
                if exists and on_exists == "refuse":
                    raise CaseExists(
                        f"case {doc.case.id!r} is already stored (replace it or skip it)"
                    )
                if exists and on_exists == "skip":
                    outcome[doc.case.id] = "skipped"
                    continue
                if exists and self.building(doc.case.id):
                    raise BuildRunning(f"case {doc.case.id!r} is being built; stop the build before replacing it")
                kept = self._person_records(doc.case.id) if exists else None
                if exists:
                    self.conn.execute("DELETE FROM cases WHERE id = ?", (doc.case.id,))
                    self.text_removed()
                self._insert_case(doc)
                if kept is not None:
                    self._restore_person_records(doc, kept, who, source)
                outcome[doc.case.id] = "replaced" if exists else "added"
            for case_id, what in outcome.items():
                if what == "replaced":
                    self.vectors.drop(case_id)
        return outcome

    def _person_records(self, case_id: str) -> dict:
        """Inside a replace: the case's consent and access logs and its retention."""
        (created_at, days), = self.conn.execute("SELECT created_at, retention_days FROM cases WHERE id = ?", (case_id,))
        return {"created_at": created_at, "retention_days": days,
                **{table: self._rows(f"SELECT * FROM {table} WHERE case_id = ? ORDER BY id", (case_id,))
                   for table in ("consent_log", "access_log")}}

    def _restore_person_records(self, doc: CaseDocument, kept: dict, who: str, source: str) -> None:
        case_id = doc.case.id
        days = doc.case.retention_days if doc.case.retention_days is not None else kept["retention_days"]
        self.conn.execute("UPDATE cases SET created_at = ?, retention_days = ? WHERE id = ?",
                          (kept["created_at"], days, case_id))
        for table in ("consent_log", "access_log"):
            for row in kept[table]:
                columns = list(row)
                self.conn.execute(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                                  tuple(row.values()))
        self.conn.execute("INSERT INTO access_log (case_id, who, action, detail, at) VALUES (?, ?, ?, ?, ?)",
                          (case_id, who or "unknown", "replace",
                           "dialogue replaced" + (f" from {source}" if source else "") +
                           "; memory, corrections and build records deleted", utcnow()))

    def _insert_case(self, doc: CaseDocument) -> None:
        c = doc.case
        self.conn.execute(
            "INSERT INTO cases (id, name, source_format, source_file, profile, created_at, retention_days)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (c.id, c.name, c.source_format, c.source_file, json.dumps(c.profile), c.created_at, c.retention_days),
        )
        for s in doc.sessions:
            self._insert_session(c.id, s)
        self.conn.executemany(
            "INSERT INTO questions (case_id, qid, question, answer, category, evidence, meta)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (c.id, q.qid, q.question, q.answer, q.category, json.dumps(q.evidence), json.dumps(q.meta))
                for q in doc.questions
            ],
        )

    def _insert_session(self, case_id: str, doc: SessionDocument) -> Session:
        """Append a session after the case's last one; its turns continue the global index."""
        (next_session, next_turn), = self.conn.execute(
            "SELECT (SELECT coalesce(max(idx) + 1, 0) FROM sessions WHERE case_id = ?),"
            " (SELECT coalesce(max(idx) + 1, 0) FROM turns WHERE case_id = ?)",
            (case_id, case_id),
        )
        s = doc.session
        cur = self.conn.execute(
            "INSERT INTO sessions (case_id, idx, source_id, time, time_text, meta) VALUES (?, ?, ?, ?, ?, ?)",
            (case_id, next_session, s.source_id, s.time, s.time_text, json.dumps(s.meta)),
        )
        session_id = cur.lastrowid
        self.conn.executemany(
            "INSERT INTO turns (case_id, session_id, idx, role, speaker, timestamp, text, original_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (case_id, session_id, next_turn + i, t.role, t.speaker, t.timestamp or s.time, t.text, t.original_id)
                for i, t in enumerate(doc.turns)
            ],
        )
        return s.model_copy(update={"id": session_id, "case_id": case_id, "idx": next_session})

    def set_session_meta(self, case_id: str, session_id: int, meta: dict) -> None:
        with self.transaction():
            self.conn.execute("UPDATE sessions SET meta = ? WHERE id = ? AND case_id = ?",
                              (json.dumps(meta, ensure_ascii=False), session_id, case_id))

    def append_session(self, case_id: str, doc: SessionDocument) -> Session:
        if not doc.turns:
            raise StoreError("a session needs at least one turn")
        with self.transaction():
            if not self.case_exists(case_id):
                raise NotFound(f"no case {case_id!r}")
            return self._insert_session(case_id, doc)

    def delete_case(self, case_id: str) -> None:
        with self._lock:
            with self.transaction():
                if not self.case_exists(case_id):
                    raise NotFound(f"no case {case_id!r}")
                self.conn.execute("DELETE FROM cases WHERE id = ?", (case_id,))
                self.text_removed()
            self.vectors.drop(case_id)

    def sessions(self, case_id: str) -> list[Session]:
        rows = self._rows("SELECT * FROM sessions WHERE case_id = ? ORDER BY idx", (case_id,))
        for r in rows:
            r["meta"] = json.loads(r["meta"])
        return [Session(**r) for r in rows]

    def session_turn_counts(self, case_id: str) -> dict[int, int]:
        rows = self._rows(
            "SELECT session_id, count(*) AS n FROM turns WHERE case_id = ? GROUP BY session_id", (case_id,)
        )
        return {r["session_id"]: r["n"] for r in rows}

    def turns(
        self,
        case_id: str,
        session_id: int | None = None,
        start: int | None = None,
        end: int | None = None,
    ) -> list[Turn]:
        """Turns of a case in order; optionally one session, optionally a global index range."""
        rows = self._case_rows("turns", case_id, "idx", {"session_id = ?": session_id, "idx >= ?": start,
                                                        "idx <= ?": end})
        return [Turn(**r) for r in rows]

    def questions(self, case_id: str) -> list[Question]:
        rows = self._rows("SELECT * FROM questions WHERE case_id = ? ORDER BY id", (case_id,))
        for r in rows:
            r["evidence"] = json.loads(r["evidence"])
            r["meta"] = json.loads(r["meta"])
        return [Question(**r) for r in rows]

    # Segments ---------------------------------------------------------------------------

    def add_segments(self, case_id: str, segments: list[Segment]) -> list[int]:
        with self.transaction():
            return [
                self.conn.execute(
                    'INSERT INTO segments (case_id, session_id, start, "end", trigger, provisional, method)'
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (case_id, s.session_id, s.start, s.end, s.trigger, int(s.provisional), s.method),
                ).lastrowid
                for s in segments
            ]

    def segments(self, case_id: str, session_id: int | None = None) -> list[Segment]:
        rows = self._case_rows("segments", case_id, "start, id", {"session_id = ?": session_id})
        return [Segment(**{**r, "provisional": bool(r["provisional"])}) for r in rows]

    # Units and their vectors --------------------------------------------------------------

    def add_units(self, case_id: str, units: list[FTAUnit], vectors: np.ndarray | None = None) -> list[int]:
        """Store units (one transaction) and index them.

        ``vectors`` holds one row per unit, in order. Partial units are indexed too: retrieval
        leaves them out unless they are still open when asked (``retrieve_open_partials``).
        """
        if vectors is not None:
            vectors = normalise(vectors)
            if len(vectors) != len(units):
                raise StoreError(f"{len(units)} units but {len(vectors)} vectors")
        with self._lock:
            with self.transaction():
                ids = [self.conn.execute(_UNIT_INSERT, _unit_params(case_id, u)).lastrowid for u in units]
                if vectors is not None and ids:
                    self.conn.executemany(
                        "INSERT INTO unit_vectors (unit_id, case_id, vector) VALUES (?, ?, ?)",
                        [(uid, case_id, vectors[n].tobytes()) for n, uid in enumerate(ids)],
                    )
                    tokens = self.new_vector_token(case_id)
            if vectors is not None and ids:
                self.vectors.apply(case_id, *tokens, self._fetcher(case_id), add=(ids, vectors))
        return ids

    def delete_units(self, case_id: str, ids: list[int]) -> int:
        """Remove units (their links go with them) in one transaction, and their vectors; returns
        how many were there."""
        if not ids:
            return 0
        with self._lock:
            with self.transaction():
                gone = sum(self.conn.execute("DELETE FROM units WHERE case_id = ? AND id = ?", (case_id, i)).rowcount
                           for i in ids)
                self._forget_units(case_id, ids)
                self.text_removed()
                tokens = self.new_vector_token(case_id)
            self.vectors.apply(case_id, *tokens, self._fetcher(case_id), remove=list(ids))
        return gone

    def _forget_units(self, case_id: str, ids: list[int]) -> None:
        """Inside a deletion's transaction: what else held the deleted units' text. Their edit
        history keeps who, when, which field and why, not the old and new values; semantic and
        support entries citing them go (they were written from those units)."""
        if not ids:
            return
        wanted = set(ids)
        for n in range(0, len(ids), 900):
            chunk = ids[n : n + 900]
            self.conn.execute(f"UPDATE history SET old = NULL, new = NULL WHERE case_id = ? AND object = 'unit'"
                              f" AND object_id IN ({', '.join('?' * len(chunk))})", (case_id, *chunk))
        for table in ("semantic_memory", "support_memory"):
            rows = self.conn.execute(f"SELECT id, source_unit_ids FROM {table} WHERE case_id = ?", (case_id,))
            for entry_id in [r[0] for r in rows if wanted & set(json.loads(r[1]))]:
                self.conn.execute(f"DELETE FROM {table} WHERE id = ?", (entry_id,))

    def get_unit(self, case_id: str, unit_id: int) -> FTAUnit:
        rows = self._rows("SELECT * FROM units WHERE case_id = ? AND id = ?", (case_id, unit_id))
        if not rows:
            raise NotFound(f"no unit {unit_id} in case {case_id!r}")
        return _unit_from_row(rows[0])

    def present_unit_ids(self, case_id: str, ids: list[int]) -> set[int]:
        """Those of ``ids`` still stored (a unit deleted since is not shown again)."""
        return {r["id"] for r in self._rows_by_id(case_id, "units", "id", ids)}

    def present_link_ids(self, case_id: str, ids: list[int]) -> set[int]:
        return {r["id"] for r in self._rows_by_id(case_id, "links", "id", ids)}

    def unit_facts(self, case_id: str, ids: list[int]) -> dict[int, str]:
        """{unit id: its fact} for those of ``ids`` still stored."""
        return {r["id"]: r["fact_text"] for r in self._rows_by_id(case_id, "units", "id, fact_text", ids)}

    def unit_review_states(self, case_id: str, ids: list[int]) -> list[dict]:
        """id, disputed and lifecycle_status of those of ``ids`` still stored."""
        return self._rows_by_id(case_id, "units", "id, disputed, lifecycle_status", ids)

    def unit_score_rows(self, case_id: str, ids: list[int]) -> list[dict]:
        """The columns of units that retrieval scores, read without building whole units (a hot path)."""
        return self._rows_by_id(case_id, "units", _SCORE_FIELDS, ids)

    def _rows_by_id(self, case_id: str, table: str, fields: str, ids: list[int]) -> list[dict]:
        """Some columns of many rows of one case in one query per 900 ids (SQLite's limit)."""
        rows: list[dict] = []
        for n in range(0, len(ids), 900):
            chunk = ids[n : n + 900]
            # "+case_id": look rows up by primary key; an index on case_id would scan the whole case.
            rows += self._rows(f"SELECT {fields} FROM {table} WHERE id IN ({', '.join('?' * len(chunk))}) AND +case_id = ?",
                               (*chunk, case_id))
        return rows

    def units_by_id(self, case_id: str, ids: list[int]) -> list[FTAUnit]:
        """Units in the order of ``ids`` (missing ones left out), fetched together."""
        by_id = {r["id"]: _unit_from_row(r) for r in self._rows_by_id(case_id, "units", "*", list(ids))}
        return [by_id[i] for i in ids if i in by_id]

    def links_touching(self, case_id: str, ids: list[int]) -> list[Link]:
        if not ids:
            return []
        marks = ", ".join("?" * len(ids))
        rows = self._rows(f"SELECT * FROM links WHERE source IN ({marks}) AND +case_id = ?"
                          f" UNION SELECT * FROM links WHERE target IN ({marks}) AND +case_id = ?",
                          (*ids, case_id, *ids, case_id))
        return [Link(**r) for r in rows]

    def turns_in_spans(self, case_id: str, spans: list[tuple[int, int]]) -> list[Turn]:
        """The turns inside any of the (first, last) global index spans, in one query."""
        if not spans:
            return []
        wanted = sorted({i for first, last in spans for i in range(first, last + 1)})
        rows: list[dict] = []
        for n in range(0, len(wanted), 900):  # (case_id, idx) is unique: one index probe per turn
            chunk = wanted[n : n + 900]
            rows += self._rows(f"SELECT * FROM turns WHERE case_id = ? AND idx IN ({', '.join('?' * len(chunk))})",
                               (case_id, *chunk))
        return [Turn(**r) for r in sorted(rows, key=lambda r: r["idx"])]

    def units(self, case_id: str, construction_status: str | None = "final") -> list[FTAUnit]:
        rows = self._case_rows("units", case_id, "id", {"construction_status = ?": construction_status})
        return [_unit_from_row(r) for r in rows]

    def update_unit(self, unit: FTAUnit, vector: np.ndarray | None = None) -> FTAUnit:
        """Write every field of ``unit`` if its ``version`` is still the stored one."""
        if unit.id is None:
            raise StoreError("a unit needs an id to be updated")
        now = utcnow()
        params = _unit_params(unit.case_id, unit.model_copy(update={"updated_at": now}))
        with self._lock:
            self._update_unit(unit, params, vector)
        return self.get_unit(unit.case_id, unit.id)

    def _update_unit(self, unit: FTAUnit, params: tuple, vector: np.ndarray | None) -> None:
        with self.transaction():
            values = dict(zip(_UNIT_COLUMNS, params))
            cur = self.conn.execute(
                _UNIT_UPDATE, (*(values[c] for c in _UNIT_SET), unit.id, unit.case_id, unit.version)
            )
            if cur.rowcount == 0:
                if not self._rows("SELECT 1 FROM units WHERE id = ? AND case_id = ?", (unit.id, unit.case_id)):
                    raise NotFound(f"no unit {unit.id} in case {unit.case_id!r}")
                raise VersionConflict(f"unit {unit.id} was changed by someone else; reload it")
            self.text_removed()  # the old values' cells are freed (history keeps what it must)
            if vector is not None:
                self.conn.execute(
                    "INSERT OR REPLACE INTO unit_vectors (unit_id, case_id, vector) VALUES (?, ?, ?)",
                    (unit.id, unit.case_id, normalise(vector)[0].tobytes()),
                )
                tokens = self.new_vector_token(unit.case_id)
        if vector is not None:  # the old vector leaves the loaded index and the file
            self.vectors.apply(unit.case_id, *tokens, self._fetcher(unit.case_id), add=([unit.id], normalise(vector)),
                               remove=[unit.id])

    def set_unit_status(self, case_id: str, unit_id: int, lifecycle: str, completeness: str,
                        updated_at: str | None) -> FTAUnit:
        """Link maintenance's change to a neighbour: lifecycle, completeness, updated time."""
        with self.transaction():
            cur = self.conn.execute(
                "UPDATE units SET lifecycle_status = ?, completeness = ?, updated_at = coalesce(?, updated_at),"
                " version = version + 1 WHERE case_id = ? AND id = ?",
                (lifecycle, completeness, updated_at, case_id, unit_id),
            )
            if cur.rowcount == 0:
                raise NotFound(f"no unit {unit_id} in case {case_id!r}")
        return self.get_unit(case_id, unit_id)

    def delete_unit(self, case_id: str, unit_id: int) -> None:
        if self.delete_units(case_id, [unit_id]) == 0:
            raise NotFound(f"no unit {unit_id} in case {case_id!r}")

    def vector_ids(self, case_id: str) -> set[int]:
        return {r["unit_id"] for r in self._rows("SELECT unit_id FROM unit_vectors WHERE case_id = ?", (case_id,))}

    def vector_token(self, case_id: str) -> str:
        """The content token of the case's vectors ("" before the first)."""
        rows = self._rows("SELECT token FROM vector_state WHERE case_id = ?", (case_id,))
        return rows[0]["token"] if rows else ""

    def new_vector_token(self, case_id: str) -> tuple[str, str]:
        """Inside the transaction that changes the case's vectors: (old token, new token)."""
        old = self.vector_token(case_id)
        new = uuid.uuid4().hex
        self.conn.execute("INSERT OR REPLACE INTO vector_state (case_id, token) VALUES (?, ?)", (case_id, new))
        return old, new

    def stored_vectors(self, case_id: str) -> tuple[list[int], np.ndarray]:
        rows = self._rows("SELECT unit_id, vector FROM unit_vectors WHERE case_id = ? ORDER BY unit_id", (case_id,))
        if not rows:
            return [], np.zeros((0, self.vectors.dim), dtype=np.float32)
        matrix = np.frombuffer(b"".join(r["vector"] for r in rows), dtype=np.float32)
        return [r["unit_id"] for r in rows], matrix.reshape(len(rows), self.vectors.dim)

    def index(self, case_id: str) -> CaseIndex:
        """The case's FAISS index, holding exactly the vectors SQLite holds now: the content token
        read here names the loaded index or file that may be used, else it is rebuilt from SQLite
        (a write by another process changes the token too)."""
        with self._lock:
            return self.vectors.get(case_id, self.vector_token(case_id), self._fetcher(case_id))

    def _fetcher(self, case_id: str):
        return lambda: self.stored_vectors(case_id)

    def index_path(self, case_id: str) -> Path | None:
        """The file of the case's current index (None for an in-memory store)."""
        return self.vectors.path(case_id, self.vector_token(case_id))

    # Links ------------------------------------------------------------------------------

    def add_links(self, case_id: str, links: list[Link]) -> list[int]:
        """Store links; a link must join two units of this case."""
        with self.transaction():
            ids = []
            for link in links:
                n = self.conn.execute(
                    "SELECT count(*) FROM units WHERE case_id = ? AND id IN (?, ?)",
                    (case_id, link.source, link.target),
                ).fetchone()[0]
                if link.source == link.target or n != 2:
                    raise StoreError(f"link {link.source} -> {link.target} does not join two units of case {case_id!r}")
                cur = self.conn.execute(
                    "INSERT OR REPLACE INTO links (case_id, source, target, relation, confidence, time, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (case_id, link.source, link.target, link.relation, link.confidence, link.time, link.created_at),
                )
                ids.append(cur.lastrowid)
            return ids

    def links(self, case_id: str, unit_id: int | None = None) -> list[Link]:
        """The case's links; with ``unit_id``, those touching it in either direction."""
        sql, params = "SELECT * FROM links WHERE case_id = ?", [case_id]
        if unit_id is not None:
            sql += " AND (source = ? OR target = ?)"
            params += [unit_id, unit_id]
        return [Link(**r) for r in self._rows(sql + " ORDER BY id", tuple(params))]

    def get_link(self, case_id: str, link_id: int) -> Link:
        rows = self._rows("SELECT * FROM links WHERE case_id = ? AND id = ?", (case_id, link_id))
        if not rows:
            raise NotFound(f"no link {link_id} in case {case_id!r}")
        return Link(**rows[0])

    def set_link_relation(self, case_id: str, link_id: int, relation: str) -> None:
        with self.transaction():
            self.conn.execute("UPDATE links SET relation = ? WHERE id = ? AND case_id = ?", (relation, link_id, case_id))

    def delete_link(self, case_id: str, link_id: int) -> None:
        with self.transaction():
            if self.conn.execute("DELETE FROM links WHERE case_id = ? AND id = ?", (case_id, link_id)).rowcount == 0:
                raise NotFound(f"no link {link_id} in case {case_id!r}")

    # Longitudinal memory ------------------------------------------------------------------

    def save_semantic(self, case_id: str, entries: list[SemanticEntry]) -> list[int]:
        """Insert new entries (no id) and rewrite revised ones (with id), in one transaction."""
        return self._save_entries(case_id, "semantic_memory", entries, ("kind", "text"))

    def save_support(self, case_id: str, entries: list[SupportEntry]) -> list[int]:
        return self._save_entries(case_id, "support_memory", entries, ("strategy", "outcome", "text"))

    def _save_entries(self, case_id: str, table: str, entries: list, fields: tuple[str, ...]) -> list[int]:
        columns = (*fields, "source_unit_ids", "session_id", "updated_at")
        ids = []
        with self.transaction():
            for e in entries:
                values = [getattr(e, f) for f in fields] + [json.dumps(e.source_unit_ids), e.session_id, e.updated_at]
                if e.id is None:
                    cur = self.conn.execute(
                        f"INSERT INTO {table} (case_id, {', '.join(columns)}) VALUES (?{', ?' * len(columns)})",
                        (case_id, *values))
                    ids.append(cur.lastrowid)
                else:
                    cur = self.conn.execute(
                        f"UPDATE {table} SET {', '.join(f'{c} = ?' for c in columns)} WHERE id = ? AND case_id = ?",
                        (*values, e.id, case_id))
                    if cur.rowcount == 0:
                        raise NotFound(f"no {table} entry {e.id} in case {case_id!r}")
                    self.text_removed()
                    ids.append(e.id)
        return ids

    def semantic(self, case_id: str) -> list[SemanticEntry]:
        rows = self._rows("SELECT * FROM semantic_memory WHERE case_id = ? ORDER BY id", (case_id,))
        return [SemanticEntry(**{**r, "source_unit_ids": json.loads(r["source_unit_ids"])}) for r in rows]

    def support(self, case_id: str) -> list[SupportEntry]:
        rows = self._rows("SELECT * FROM support_memory WHERE case_id = ? ORDER BY id", (case_id,))
        return [SupportEntry(**{**r, "source_unit_ids": json.loads(r["source_unit_ids"])}) for r in rows]

    def clear_session_memory(self, case_id: str, session_id: int) -> list[int]:
        """Remove what an unfinished build wrote for one session (its units, their links and
        vectors, its segments); returns the removed unit ids."""
        with self._lock:
            with self.transaction():
                ids = [r[0] for r in self.conn.execute(
                    "SELECT id FROM units WHERE case_id = ? AND session_id = ?", (case_id, session_id))]
                self.conn.execute("DELETE FROM units WHERE case_id = ? AND session_id = ?", (case_id, session_id))
                self._forget_units(case_id, ids)
                self.conn.execute("DELETE FROM segments WHERE case_id = ? AND session_id = ?", (case_id, session_id))
                self.conn.execute("DELETE FROM build_sessions WHERE session_id = ?", (session_id,))
                self.text_removed()
                tokens = self.new_vector_token(case_id)
            self.vectors.apply(case_id, *tokens, self._fetcher(case_id), remove=ids)
        return ids

    def clear_case_memory(self, case_id: str) -> None:
        """Everything built for a case (units, links, segments, longitudinal memory, build
        progress); its dialogue, questions and call records stay."""
        with self._lock:
            with self.transaction():
                self.conn.execute("UPDATE history SET old = NULL, new = NULL WHERE case_id = ? AND object = 'unit'",
                                  (case_id,))
                for table in ("units", "segments", "semantic_memory", "support_memory", "build_sessions"):
                    self.conn.execute(f"DELETE FROM {table} WHERE case_id = ?", (case_id,))
                self.text_removed()
                self.new_vector_token(case_id)
            self.vectors.drop(case_id)

_SCORE_FIELDS = ("id, content_type, participants, fact_text, event_time, dialogue_time, emotion_or_state, "
                 "intention_or_plan, construction_status, disputed, lifecycle_status, evidence_start, evidence_end")


def _use_wal(conn: sqlite3.Connection, seconds: float = 10.0) -> None:
    """Switch a database to WAL. The switch needs the database to itself and SQLite does not wait
    for it (no busy handler): two processes opening a new database at once got "database is
    locked" (reproduced in 1 of ~100 tries under load). Retry like busy_timeout would."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


_UNIT_COLUMNS = (
    "case_id", "session_id", "fact_text", "summary", "content_type", "participants", "dialogue_time",
    "event_time", "event_time_expression", "time_orientation", "completion", "emotion_or_state",
    "intention_or_plan", "relation_cues", "evidence_start", "evidence_end", "evidence_time",
    "construction_status", "lifecycle_status", "completeness", "disputed", "version", "created_at", "updated_at",
    "origin",
)
_UNIT_INSERT = f"INSERT INTO units ({', '.join(_UNIT_COLUMNS)}) VALUES ({', '.join('?' * len(_UNIT_COLUMNS))})"
# Every column but case_id, matched on id, case and the version read; the version goes up by one.
_UNIT_SET = [c for c in _UNIT_COLUMNS if c not in ("case_id", "version", "created_at")]
_UNIT_UPDATE = (
    "UPDATE units SET "
    + ", ".join(f"{c} = ?" for c in _UNIT_SET)
    + ", version = version + 1 WHERE id = ? AND case_id = ? AND version = ?"
)


def _unit_params(case_id: str, u: FTAUnit) -> tuple:
    return (
        case_id, u.evidence.session_id, u.fact.text, u.fact.summary, u.fact.content_type,
        json.dumps(u.fact.participants), u.time.dialogue_time, u.time.event_time,
        u.time.event_time_expression, u.time.time_orientation, u.time.completion,
        u.affect.emotion_or_state, u.affect.intention_or_plan, u.affect.relation_cues,
        u.evidence.start, u.evidence.end, u.evidence.dialogue_time, u.construction_status,
        u.lifecycle_status, u.completeness, int(u.disputed), u.version, u.created_at, u.updated_at, u.origin,
    )


def _unit_from_row(r: dict) -> FTAUnit:
    return FTAUnit(
        id=r["id"],
        case_id=r["case_id"],
        fact=FactAnchor(
            text=r["fact_text"], summary=r["summary"], content_type=r["content_type"],
            participants=json.loads(r["participants"]),
        ),
        time=TimeAnchor(
            dialogue_time=r["dialogue_time"], event_time=r["event_time"],
            event_time_expression=r["event_time_expression"], time_orientation=r["time_orientation"],
            completion=r["completion"],
        ),
        affect=AffectAnchor(
            emotion_or_state=r["emotion_or_state"], intention_or_plan=r["intention_or_plan"],
            relation_cues=r["relation_cues"],
        ),
        evidence=Evidence(
            session_id=r["session_id"], start=r["evidence_start"], end=r["evidence_end"],
            dialogue_time=r["evidence_time"],
        ),
        construction_status=r["construction_status"],
        origin=r["origin"],
        lifecycle_status=r["lifecycle_status"],
        completeness=r["completeness"],
        disputed=bool(r["disputed"]),
        version=r["version"],
        created_at=r["created_at"],
        updated_at=r["updated_at"],
    )
