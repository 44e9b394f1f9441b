"""The case's append-only logs: ``consent_log``, ``access_log`` and ``history`` (every change by
hand or by the model, with who, when, old and new value and a reason).

A mixin of ``Store``: its methods use the store's connection, lock and transactions. What a row
means is decided by the callers (governance/consent.py, governance/auth.py, governance/editing.py).
"""

from __future__ import annotations

import json
from typing import Any

from ..models import utcnow


class Logs:
    # Consent ------------------------------------------------------------------------------

    def consent_log(self, case_id: str) -> list[dict]:
        return self._case_rows("consent_log", case_id, "id", {})

    def latest_consent(self, case_id: str) -> dict | None:
        rows = self._rows(
            "SELECT state, who, note, at FROM consent_log WHERE case_id = ? ORDER BY id DESC LIMIT 1", (case_id,)
        )
        return rows[0] if rows else None

    def add_consent(self, case_id: str, state: str, who: str, note: str) -> None:
        with self.transaction():
            self.conn.execute(
                "INSERT INTO consent_log (case_id, state, who, note, at) VALUES (?, ?, ?, ?, ?)",
                (case_id, state, who, note, utcnow()),
            )

    # Access -------------------------------------------------------------------------------

    def add_access(self, case_id: str, who: str, action: str, detail: str = "") -> None:
        """Recorded only while the case exists (an erased case leaves no row behind)."""
        with self.transaction():
            if self.case_exists(case_id):
                self.conn.execute(
                    "INSERT INTO access_log (case_id, who, action, detail, at) VALUES (?, ?, ?, ?, ?)",
                    (case_id, who, action, detail, utcnow()),
                )

    def access_entries(self, case_id: str | None = None) -> list[dict]:
        if case_id is None:
            return self._rows("SELECT * FROM access_log ORDER BY id")
        return self._case_rows("access_log", case_id, "id", {})

    # History ------------------------------------------------------------------------------

    def add_history(
        self,
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
        """One change; a value that is not text is stored as JSON."""
        enc = lambda v: None if v is None else v if isinstance(v, str) else json.dumps(v)  # noqa: E731
        with self.transaction():
            self.conn.execute(
                "INSERT INTO history (case_id, object, object_id, action, field, old, new, who, reason, at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (case_id, obj, obj_id, action, field, enc(old), enc(new), who, reason, utcnow()),
            )

    def history(self, case_id: str, obj: str | None = None, obj_id: int | None = None) -> list[dict]:
        return self._case_rows("history", case_id, "id", {"object = ?": obj, "object_id = ?": obj_id})

    def history_since(self, case_id: str, mark: str, actions: tuple[str, ...]) -> list[dict]:
        """The case's ``actions`` recorded after its last ``mark`` action (all of them without one)."""
        last = (
            self._rows("SELECT max(id) AS id FROM history WHERE case_id = ? AND action = ?", (case_id, mark))[0]["id"]
            or 0
        )
        marks = ", ".join("?" * len(actions))
        return self._rows(
            f"SELECT * FROM history WHERE case_id = ? AND id > ? AND action IN ({marks}) ORDER BY id",
            (case_id, last, *actions),
        )

    def edited_fields(self, case_id: str, unit_id: int) -> set[str]:
        """The fields of a unit with an ``edit`` row in the history."""
        rows = self._rows(
            "SELECT DISTINCT field FROM history WHERE case_id = ? AND object = 'unit' AND object_id = ?"
            " AND action = 'edit'",
            (case_id, unit_id),
        )
        return {r["field"] for r in rows}
