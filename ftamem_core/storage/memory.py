"""Longitudinal memory: user semantic entries and support-experience entries, and clearing what
a session or a case built.

A mixin of ``Store``: its methods use the store's connection, lock and transactions.
"""

from __future__ import annotations

import json

from ..errors import NotFound
from ..models import SemanticEntry, SupportEntry


class LongitudinalMemory:
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
                        (case_id, *values),
                    )
                    ids.append(cur.lastrowid)
                else:
                    cur = self.conn.execute(
                        f"UPDATE {table} SET {', '.join(f'{c} = ?' for c in columns)} WHERE id = ? AND case_id = ?",
                        (*values, e.id, case_id),
                    )
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
                ids = [
                    r[0]
                    for r in self.conn.execute(
                        "SELECT id FROM units WHERE case_id = ? AND session_id = ?", (case_id, session_id)
                    )
                ]
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
                self.conn.execute(
                    "UPDATE history SET old = NULL, new = NULL WHERE case_id = ? AND object = 'unit'", (case_id,)
                )
                for table in ("units", "segments", "semantic_memory", "support_memory", "build_sessions"):
                    self.conn.execute(f"DELETE FROM {table} WHERE case_id = ?", (case_id,))
                self.text_removed()
                self.new_vector_token(case_id)
            self.vectors.drop(case_id)
