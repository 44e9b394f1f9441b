"""The hand audit's records: ``audit_rounds`` (with their cases), ``audit_items`` and
``audit_scores``.

A mixin of ``Store``: its methods use the store's connection, lock and transactions. Drawing,
the blind view and what a score means are governance/audit's.
"""

from __future__ import annotations

import json

from ..models import utcnow

# The columns an item is stored with, in the order of its INSERT.
_ITEM_FIELDS = ("case_id", "kind", "unit_id", "unit_version", "other_id", "other_version", "link_id", "stratum")
_SCORE_COLUMNS = ("fact", "time", "affect", "relatedness")


class AuditRecords:
    def add_audit_round(
        self,
        scope: str,
        n_units: int,
        n_pairs: int,
        seed: int,
        settings: dict,
        who: str,
        cases: list[str],
        items: list[dict],
    ) -> int:
        """A round, its cases and its items (``items`` in their order, each with ``_ITEM_FIELDS``)."""
        with self.transaction():
            cur = self.conn.execute(
                "INSERT INTO audit_rounds (scope, n_units, n_pairs, seed, settings, created_by, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (scope, n_units, n_pairs, seed, json.dumps(settings), who, utcnow()),
            )
            round_id = cur.lastrowid
            self.conn.executemany(
                "INSERT INTO audit_round_cases (round_id, case_id) VALUES (?, ?)", [(round_id, c) for c in cases]
            )
            self.conn.executemany(
                "INSERT INTO audit_items (round_id, case_id, position, kind, unit_id, unit_version, other_id,"
                " other_version, link_id, stratum) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(round_id, i["case_id"], pos, *(i[f] for f in _ITEM_FIELDS[1:])) for pos, i in enumerate(items)],
            )
        return round_id

    def audit_round(self, round_id: int) -> dict | None:
        """The round with its settings read, its cases and its number of items."""
        rows = self._rows("SELECT * FROM audit_rounds WHERE id = ?", (round_id,))
        if not rows:
            return None
        row = rows[0]
        row["settings"] = json.loads(row["settings"])
        row["cases"] = [
            r["case_id"]
            for r in self._rows(
                "SELECT case_id FROM audit_round_cases WHERE round_id = ? ORDER BY case_id", (round_id,)
            )
        ]
        row["items"] = self._rows("SELECT count(*) AS n FROM audit_items WHERE round_id = ?", (round_id,))[0]["n"]
        return row

    def audit_round_ids(self) -> list[int]:
        return [r["id"] for r in self._rows("SELECT id FROM audit_rounds ORDER BY id")]

    def set_audit_round_settings(self, round_id: int, settings: dict) -> None:
        with self.transaction():
            self.conn.execute("UPDATE audit_rounds SET settings = ? WHERE id = ?", (json.dumps(settings), round_id))

    def audit_items(self, round_id: int) -> list[dict]:
        return self._rows("SELECT * FROM audit_items WHERE round_id = ? ORDER BY position", (round_id,))

    def audit_item(self, item_id: int) -> dict | None:
        rows = self._rows("SELECT * FROM audit_items WHERE id = ?", (item_id,))
        return rows[0] if rows else None

    def audit_score(self, item_id: int, annotator: str) -> dict | None:
        rows = self._rows("SELECT * FROM audit_scores WHERE item_id = ? AND annotator = ?", (item_id, annotator))
        return rows[0] if rows else None

    def save_audit_score(
        self,
        item_id: int,
        case_id: str,
        annotator: str,
        values: dict,
        comment: str,
        unit_version: int | None,
        other_version: int | None,
    ) -> None:
        """Record or revise one annotator's scores of an item (``values``: by criterion)."""
        with self.transaction():
            self.conn.execute(
                "INSERT INTO audit_scores (item_id, case_id, annotator, fact, time, affect, relatedness, comment,"
                " unit_version, other_version, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (item_id, annotator) DO UPDATE SET fact = excluded.fact, time = excluded.time,"
                " affect = excluded.affect, relatedness = excluded.relatedness, comment = excluded.comment,"
                " unit_version = excluded.unit_version, other_version = excluded.other_version, at = excluded.at",
                (
                    item_id,
                    case_id,
                    annotator,
                    *(values.get(c) for c in _SCORE_COLUMNS),
                    comment,
                    unit_version,
                    other_version,
                    utcnow(),
                ),
            )

    def audit_scores(self, round_ids: list[int]) -> list[dict]:
        """Every score of the rounds, with each item's round and kind."""
        marks = ", ".join("?" * len(round_ids))
        return self._rows(
            f"SELECT s.*, i.round_id, i.kind FROM audit_scores s JOIN audit_items i ON i.id = s.item_id"
            f" WHERE i.round_id IN ({marks}) ORDER BY i.round_id, i.position, s.annotator",
            tuple(round_ids),
        )

    def audit_scored_counts(self, round_id: int) -> dict[str, int]:
        """{annotator: items of the round they scored}."""
        rows = self._rows(
            "SELECT s.annotator, count(*) AS n FROM audit_scores s JOIN audit_items i ON i.id = s.item_id"
            " WHERE i.round_id = ? GROUP BY s.annotator ORDER BY s.annotator",
            (round_id,),
        )
        return {r["annotator"]: r["n"] for r in rows}

    def first_unscored_item(self, round_id: int, annotator: str) -> int | None:
        rows = self._rows(
            "SELECT id FROM audit_items WHERE round_id = ? AND id NOT IN"
            " (SELECT item_id FROM audit_scores WHERE annotator = ?) ORDER BY position LIMIT 1",
            (round_id, annotator),
        )
        return rows[0]["id"] if rows else None
