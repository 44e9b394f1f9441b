"""A case's rows in every table at once: what export, import, erasure and retention
(governance/privacy.py) read and write, and the record of erasures.

A mixin of ``Store``: its methods use the store's connection, lock and transactions.
"""

from __future__ import annotations

import json

from ..models import utcnow

# Every table holding a case's rows, parents before children (the import order).
CASE_TABLES = (
    "cases",
    "sessions",
    "turns",
    "questions",
    "segments",
    "units",
    "unit_vectors",
    "links",
    "semantic_memory",
    "support_memory",
    "builds",
    "build_sessions",
    "llm_calls",
    "history",
    "consent_log",
    "access_log",
)
# Hand-audit rows about the case (ftamem_core/governance/audit): exported and erased with it, not imported
# (they belong to audit rounds of the store they were made in).
AUDIT_TABLES = ("audit_round_cases", "audit_items", "audit_scores")
ROW_KEY = {
    "unit_vectors": "unit_id",
    "build_sessions": "session_id",
    "audit_round_cases": "round_id",
}  # tables keyed by another column


class CaseRows:
    def case_row_counts(self, case_id: str) -> dict[str, int]:
        """How many rows of each table (but ``cases``) belong to the case."""
        return {
            t: self._rows(f"SELECT count(*) AS n FROM {t} WHERE case_id = ?", (case_id,))[0]["n"]
            for t in (*CASE_TABLES, *AUDIT_TABLES)
            if t != "cases"
        }

    def case_tables(self, case_id: str, tables: tuple[str, ...] = CASE_TABLES) -> dict[str, list[dict]]:
        """Every row of the case in each of ``tables``, in the order they were written."""
        out = {}
        for table in tables:
            key = "id" if table == "cases" else "case_id"
            out[table] = self._rows(
                f"SELECT * FROM {table} WHERE {key} = ? ORDER BY {ROW_KEY.get(table, 'id')}", (case_id,)
            )
        return out

    def table_columns(self, table: str) -> dict[str, dict]:
        """{column: its name, type, notnull and dflt_value} of one of ``CASE_TABLES``."""
        if table not in CASE_TABLES:
            raise ValueError(f"not a case table: {table}")
        return {r["name"]: r for r in self._rows(f"PRAGMA table_info({table})")}

    def insert_case_row(self, table: str, row: dict) -> int:
        """One row as it is (an import, inside its transaction); returns its id."""
        if table not in CASE_TABLES:
            raise ValueError(f"not a case table: {table}")
        columns = ", ".join(f'"{c}"' for c in row)
        return self.conn.execute(
            f"INSERT INTO {table} ({columns}) VALUES ({', '.join('?' * len(row))})", tuple(row.values())
        ).lastrowid

    def delete_case_rows(self, case_id: str, case_hash: str, who: str, reason: str, counts: dict) -> None:
        """Delete the case (every per-case row cascades) and record the erasure, which keeps only a hash
        of the case id."""
        with self.transaction():
            self.conn.execute("DELETE FROM cases WHERE id = ?", (case_id,))
            self.conn.execute(
                "INSERT INTO erasures (case_hash, who, reason, counts, at) VALUES (?, ?, ?, ?, ?)",
                (case_hash, who, reason, json.dumps(counts), utcnow()),
            )

    def erasures(self) -> list[dict]:
        return self._rows("SELECT * FROM erasures ORDER BY id")

    def vacuum(self) -> bool:
        """Copy the WAL back and truncate it, rewrite the file, truncate again: no deleted page stays
        behind. False when another process's reader kept frames of the WAL."""
        with self._lock:
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self.conn.execute("VACUUM")
            busy, _, _ = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return not busy

    def set_case_retention(self, case_id: str, days: int | None) -> bool:
        """False when there is no such case."""
        with self.transaction():
            return self.conn.execute("UPDATE cases SET retention_days = ? WHERE id = ?", (days, case_id)).rowcount > 0

    def case_retentions(self) -> list[dict]:
        """id, created_at and retention_days of every case."""
        return self._rows("SELECT id, created_at, retention_days FROM cases ORDER BY id")
