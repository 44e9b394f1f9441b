"""Segments, FTA units and their vectors: written with their vectors in one transaction, read
whole or by the columns a caller needs, edited under a version check.

A mixin of ``Store``: its methods use the store's connection, lock and transactions.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import numpy as np

from ..errors import NotFound, StoreError, VersionConflict
from ..models import AffectAnchor, Evidence, FactAnchor, FTAUnit, Segment, TimeAnchor, utcnow
from .vectors import CaseIndex, normalise


class Units:
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
                gone = sum(
                    self.conn.execute("DELETE FROM units WHERE case_id = ? AND id = ?", (case_id, i)).rowcount
                    for i in ids
                )
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
            self.conn.execute(
                f"UPDATE history SET old = NULL, new = NULL WHERE case_id = ? AND object = 'unit'"
                f" AND object_id IN ({', '.join('?' * len(chunk))})",
                (case_id, *chunk),
            )
        for table in ("semantic_memory", "support_memory"):
            rows = self.conn.execute(f"SELECT id, source_unit_ids FROM {table} WHERE case_id = ?", (case_id,))
            for entry_id in [r[0] for r in rows if wanted & set(json.loads(r[1]))]:
                self.conn.execute(f"DELETE FROM {table} WHERE id = ?", (entry_id,))

    def get_unit(self, case_id: str, unit_id: int) -> FTAUnit:
        rows = self._rows("SELECT * FROM units WHERE case_id = ? AND id = ?", (case_id, unit_id))
        if not rows:
            raise NotFound(f"no unit {unit_id} in case {case_id!r}")
        return unit_from_row(rows[0])

    def present_unit_ids(self, case_id: str, ids: list[int]) -> set[int]:
        """Those of ``ids`` still stored (a unit deleted since is not shown again)."""
        return {r["id"] for r in self._rows_by_id(case_id, "units", "id", ids)}

    def unit_facts(self, case_id: str, ids: list[int]) -> dict[int, str]:
        """{unit id: its fact} for those of ``ids`` still stored."""
        return {r["id"]: r["fact_text"] for r in self._rows_by_id(case_id, "units", "id, fact_text", ids)}

    def unit_review_states(self, case_id: str, ids: list[int]) -> list[dict]:
        """id, disputed and lifecycle_status of those of ``ids`` still stored."""
        return self._rows_by_id(case_id, "units", "id, disputed, lifecycle_status", ids)

    def unit_score_rows(self, case_id: str, ids: list[int]) -> list[dict]:
        """The columns of units that retrieval scores, read without building whole units (a hot path)."""
        return self._rows_by_id(case_id, "units", _SCORE_FIELDS, ids)

    def units_by_id(self, case_id: str, ids: list[int]) -> list[FTAUnit]:
        """Units in the order of ``ids`` (missing ones left out), fetched together."""
        by_id = {r["id"]: unit_from_row(r) for r in self._rows_by_id(case_id, "units", "*", list(ids))}
        return [by_id[i] for i in ids if i in by_id]

    def units(self, case_id: str, construction_status: str | None = "final") -> list[FTAUnit]:
        rows = self._case_rows("units", case_id, "id", {"construction_status = ?": construction_status})
        return [unit_from_row(r) for r in rows]

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
            self.vectors.apply(
                unit.case_id, *tokens, self._fetcher(unit.case_id), add=([unit.id], normalise(vector)), remove=[unit.id]
            )

    def set_unit_status(
        self, case_id: str, unit_id: int, lifecycle: str, completeness: str, updated_at: str | None
    ) -> FTAUnit:
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


_SCORE_FIELDS = (
    "id, content_type, participants, fact_text, event_time, dialogue_time, emotion_or_state, "
    "intention_or_plan, construction_status, disputed, lifecycle_status"
)

_UNIT_COLUMNS = (
    "case_id",
    "session_id",
    "fact_text",
    "summary",
    "content_type",
    "participants",
    "dialogue_time",
    "event_time",
    "event_time_expression",
    "time_orientation",
    "completion",
    "emotion_or_state",
    "intention_or_plan",
    "relation_cues",
    "evidence_start",
    "evidence_end",
    "evidence_time",
    "construction_status",
    "lifecycle_status",
    "completeness",
    "disputed",
    "version",
    "created_at",
    "updated_at",
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
        case_id,
        u.evidence.session_id,
        u.fact.text,
        u.fact.summary,
        u.fact.content_type,
        json.dumps(u.fact.participants),
        u.time.dialogue_time,
        u.time.event_time,
        u.time.event_time_expression,
        u.time.time_orientation,
        u.time.completion,
        u.affect.emotion_or_state,
        u.affect.intention_or_plan,
        u.affect.relation_cues,
        u.evidence.start,
        u.evidence.end,
        u.evidence.dialogue_time,
        u.construction_status,
        u.lifecycle_status,
        u.completeness,
        int(u.disputed),
        u.version,
        u.created_at,
        u.updated_at,
        u.origin,
    )


def unit_from_row(r: dict) -> FTAUnit:
    return FTAUnit(
        id=r["id"],
        case_id=r["case_id"],
        fact=FactAnchor(
            text=r["fact_text"],
            summary=r["summary"],
            content_type=r["content_type"],
            participants=json.loads(r["participants"]),
        ),
        time=TimeAnchor(
            dialogue_time=r["dialogue_time"],
            event_time=r["event_time"],
            event_time_expression=r["event_time_expression"],
            time_orientation=r["time_orientation"],
            completion=r["completion"],
        ),
        affect=AffectAnchor(
            emotion_or_state=r["emotion_or_state"],
            intention_or_plan=r["intention_or_plan"],
            relation_cues=r["relation_cues"],
        ),
        evidence=Evidence(
            session_id=r["session_id"],
            start=r["evidence_start"],
            end=r["evidence_end"],
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
