"""Cases, their sessions, turns and questions: ingest (one transaction, a replace keeps what is
about the person), append, delete, read.

A mixin of ``Store``: its methods use the store's connection, lock and transactions.
"""

from __future__ import annotations

import json
from typing import Literal

from ..errors import BuildRunning, CaseExists, NotFound, StoreError
from ..models import Case, CaseDocument, Question, Session, SessionDocument, Turn, utcnow

OnExists = Literal["refuse", "replace", "skip"]


class Cases:
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

    def ingest(
        self, docs: list[CaseDocument], on_exists: OnExists = "refuse", who: str = "", source: str = ""
    ) -> dict[str, str]:
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
                    raise CaseExists(f"case {doc.case.id!r} is already stored (replace it or skip it)")
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
        ((created_at, days),) = self.conn.execute(
            "SELECT created_at, retention_days FROM cases WHERE id = ?", (case_id,)
        )
        return {
            "created_at": created_at,
            "retention_days": days,
            **{
                table: self._rows(f"SELECT * FROM {table} WHERE case_id = ? ORDER BY id", (case_id,))
                for table in ("consent_log", "access_log")
            },
        }

    def _restore_person_records(self, doc: CaseDocument, kept: dict, who: str, source: str) -> None:
        case_id = doc.case.id
        days = doc.case.retention_days if doc.case.retention_days is not None else kept["retention_days"]
        self.conn.execute(
            "UPDATE cases SET created_at = ?, retention_days = ? WHERE id = ?", (kept["created_at"], days, case_id)
        )
        for table in ("consent_log", "access_log"):
            for row in kept[table]:
                columns = list(row)
                self.conn.execute(
                    f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                    tuple(row.values()),
                )
        self.conn.execute(
            "INSERT INTO access_log (case_id, who, action, detail, at) VALUES (?, ?, ?, ?, ?)",
            (
                case_id,
                who or "unknown",
                "replace",
                "dialogue replaced"
                + (f" from {source}" if source else "")
                + "; memory, corrections and build records deleted",
                utcnow(),
            ),
        )

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
        ((next_session, next_turn),) = self.conn.execute(
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
            self.conn.execute(
                "UPDATE sessions SET meta = ? WHERE id = ? AND case_id = ?",
                (json.dumps(meta, ensure_ascii=False), session_id, case_id),
            )

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
        rows = self._case_rows(
            "turns", case_id, "idx", {"session_id = ?": session_id, "idx >= ?": start, "idx <= ?": end}
        )
        return [Turn(**r) for r in rows]

    def questions(self, case_id: str) -> list[Question]:
        rows = self._rows("SELECT * FROM questions WHERE case_id = ? ORDER BY id", (case_id,))
        for r in rows:
            r["evidence"] = json.loads(r["evidence"])
            r["meta"] = json.loads(r["meta"])
        return [Question(**r) for r in rows]

    def turns_in_spans(self, case_id: str, spans: list[tuple[int, int]]) -> list[Turn]:
        """The turns inside any of the (first, last) global index spans, in one query."""
        if not spans:
            return []
        wanted = sorted({i for first, last in spans for i in range(first, last + 1)})
        rows: list[dict] = []
        for n in range(0, len(wanted), 900):  # (case_id, idx) is unique: one index probe per turn
            chunk = wanted[n : n + 900]
            rows += self._rows(
                f"SELECT * FROM turns WHERE case_id = ? AND idx IN ({', '.join('?' * len(chunk))})", (case_id, *chunk)
            )
        return [Turn(**r) for r in sorted(rows, key=lambda r: r["idx"])]
