"""Temporal links between units.

A mixin of ``Store``: its methods use the store's connection, lock and transactions.
"""

from __future__ import annotations

from ..errors import NotFound, StoreError
from ..models import Link


class Links:
    def present_link_ids(self, case_id: str, ids: list[int]) -> set[int]:
        return {r["id"] for r in self._rows_by_id(case_id, "links", "id", ids)}

    def links_touching(self, case_id: str, ids: list[int]) -> list[Link]:
        if not ids:
            return []
        marks = ", ".join("?" * len(ids))
        rows = self._rows(
            f"SELECT * FROM links WHERE source IN ({marks}) AND +case_id = ?"
            f" UNION SELECT * FROM links WHERE target IN ({marks}) AND +case_id = ?",
            (*ids, case_id, *ids, case_id),
        )
        return [Link(**r) for r in rows]

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
            self.conn.execute(
                "UPDATE links SET relation = ? WHERE id = ? AND case_id = ?", (relation, link_id, case_id)
            )

    def delete_link(self, case_id: str, link_id: int) -> None:
        with self.transaction():
            if self.conn.execute("DELETE FROM links WHERE case_id = ? AND id = ?", (case_id, link_id)).rowcount == 0:
                raise NotFound(f"no link {link_id} in case {case_id!r}")
