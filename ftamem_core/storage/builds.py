"""Build records and LLM-call records: the ``builds``, ``build_sessions`` and ``llm_calls`` tables.

A mixin of ``Store`` (kept apart from the memory it builds): its methods use the store's
connection, lock and transactions.
"""

from __future__ import annotations

import json
import os
import socket

from ..errors import BuildRunning
from ..models import Build, CallRecord, utcnow
from .migrations import build_settings_by_phase


class BuildRecords:
    # Builds -------------------------------------------------------------------------------

    def start_build(self, build: Build) -> Build:
        """Record a running build: the case's build lock. Refused while another live process (or
        this one) builds the case; a running build whose process died is marked interrupted."""
        with self.transaction():
            self._interrupt_dead_builds(build.case_id)
            running = self._rows(
                "SELECT id, host, pid, started_at FROM builds WHERE case_id = ? AND status = 'running'",
                (build.case_id,),
            )
            if running:
                r = running[0]
                raise BuildRunning(
                    f"case {build.case_id!r} is being built (build {r['id']}, process {r['pid']} on "
                    f"{r['host'] or 'this machine'}, since {r['started_at']}); stop it or wait"
                )
            cur = self.conn.execute(
                "INSERT INTO builds (case_id, segmentation, settings, backend, model, status, started_at, host, pid)"
                " VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?)",
                (
                    build.case_id,
                    build.segmentation,
                    json.dumps(build.settings),
                    build.backend,
                    build.model,
                    build.started_at,
                    socket.gethostname(),
                    os.getpid(),
                ),
            )
        return build.model_copy(update={"id": cur.lastrowid, "status": "running"})

    def move_build_settings_by_phase(self, case_id: str) -> None:
        """A case's build records written before settings were grouped by phase (an older export
        imported), moved as migration 0010 moved the store's own."""
        for statement in build_settings_by_phase("case_id = ?"):
            self.conn.execute(statement, (case_id,))

    def building(self, case_id: str) -> bool:
        """Whether a live process is building the case."""
        with self.transaction():
            self._interrupt_dead_builds(case_id)
            return bool(
                self.conn.execute(
                    "SELECT 1 FROM builds WHERE case_id = ? AND status = 'running'", (case_id,)
                ).fetchone()
            )

    def _interrupt_dead_builds(self, case_id: str | None = None) -> int:
        """Mark interrupted the running builds of this host whose process is gone (killed)."""
        rows = self._rows(
            "SELECT id, pid FROM builds WHERE status = 'running' AND host = ?"
            + (" AND case_id = ?" if case_id else ""),
            (socket.gethostname(), case_id) if case_id else (socket.gethostname(),),
        )
        dead = [r["id"] for r in rows if r["pid"] is None or not _alive(r["pid"])]
        for build_id in dead:
            self.conn.execute(
                "UPDATE builds SET status = 'interrupted', error = 'its process ended', finished_at = ? WHERE id = ?",
                (utcnow(), build_id),
            )
        return len(dead)

    def finish_build(self, build_id: int, status: str, error: str = "") -> None:
        now = utcnow()
        with self.transaction():
            self.conn.execute(
                "UPDATE builds SET status = ?, error = ?, finished_at = ? WHERE id = ?", (status, error, now, build_id)
            )
            if status == "done":
                self.conn.execute(
                    "UPDATE cases SET last_build_at = ? WHERE id = (SELECT case_id FROM builds WHERE id = ?)",
                    (now, build_id),
                )

    def builds(self, case_id: str) -> list[Build]:
        rows = self._rows("SELECT * FROM builds WHERE case_id = ? ORDER BY id", (case_id,))
        return [Build(**{**r, "settings": json.loads(r["settings"])}) for r in rows]

    def done_sessions(self, case_id: str) -> dict[int, str]:
        """{session row id: segmentation} for the sessions whose memory is complete."""
        rows = self._rows("SELECT session_id, segmentation FROM build_sessions WHERE case_id = ?", (case_id,))
        return {r["session_id"]: r["segmentation"] for r in rows}

    def mark_session_done(self, case_id: str, session_id: int, build_id: int, segmentation: str) -> None:
        with self.transaction():
            self.conn.execute(
                "INSERT OR REPLACE INTO build_sessions (session_id, case_id, build_id, segmentation, done_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (session_id, case_id, build_id, segmentation, utcnow()),
            )

    # LLM call records ---------------------------------------------------------------------

    def cost(self, case_id: str, memory_only: bool = False) -> dict:
        """The paper's Table 6 columns for a case: per stage calls, tokens and seconds; totals per
        turn; units (final, partial; per turn both). Counts every construction call recorded for the case (all builds), or with
        ``memory_only`` the calls of the builds that made a session of the memory now stored (a
        build killed and begun again from scratch does not count twice)."""
        builds = " AND build_id IN (SELECT build_id FROM build_sessions WHERE case_id = ?)" if memory_only else ""
        stages = self._rows(
            "SELECT stage, count(*) AS calls, sum(attempts) AS attempts, sum(1 - ok) AS failed,"
            " sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens,"
            " round(sum(seconds), 2) AS seconds FROM llm_calls WHERE case_id = ? AND build_id IS NOT NULL"
            f"{builds} GROUP BY stage ORDER BY min(id)",
            (case_id, case_id) if memory_only else (case_id,),
        )
        turns, units, partial = self.conn.execute(
            "SELECT (SELECT count(*) FROM turns WHERE case_id = ?),"
            " (SELECT count(*) FROM units WHERE case_id = ? AND construction_status = 'final'),"
            " (SELECT count(*) FROM units WHERE case_id = ? AND construction_status = 'partial')",
            (case_id, case_id, case_id),
        ).fetchone()
        calls = sum(s["calls"] for s in stages)
        tokens = sum(s["prompt_tokens"] + s["completion_tokens"] for s in stages)
        return {
            "stages": stages,
            "turns": turns,
            "units": units,
            "partial_units": partial,
            "calls": calls,
            "tokens": tokens,
            "seconds": round(sum(s["seconds"] for s in stages), 2),
            "calls_per_turn": round(calls / turns, 3) if turns else 0.0,
            "tokens_per_turn": round(tokens / turns, 1) if turns else 0.0,
            # a unit still partial holds memory too (retrievable with its flag at the case's end)
            "units_per_turn": round((units + partial) / turns, 3) if turns else 0.0,
        }

    def record_call(self, record: CallRecord) -> int:
        data = record.model_dump(exclude={"id"})
        data["ok"] = int(data["ok"])
        cols = ", ".join(data)
        with self.transaction():
            return self.conn.execute(
                f"INSERT INTO llm_calls ({cols}) VALUES ({', '.join('?' * len(data))})", tuple(data.values())
            ).lastrowid

    def build_usage(self, build_id: int) -> tuple[int, int]:
        """Calls and tokens (prompt + completion) one build has spent so far."""
        row = self._rows(
            "SELECT count(*) AS calls, coalesce(sum(prompt_tokens + completion_tokens), 0) AS tokens"
            " FROM llm_calls WHERE build_id = ?",
            (build_id,),
        )[0]
        return row["calls"], row["tokens"]

    def stage_usage(self, case_id: str, stage: str) -> tuple[int, int]:
        """Calls and tokens (prompt + completion) the case's calls of one stage have spent."""
        row = self._rows(
            "SELECT count(*) AS calls, coalesce(sum(prompt_tokens + completion_tokens), 0) AS tokens"
            " FROM llm_calls WHERE case_id = ? AND stage = ?",
            (case_id, stage),
        )[0]
        return row["calls"], row["tokens"]

    def built_seconds_and_turns(self, model: str) -> tuple[float, int]:
        """Seconds of the calls of the builds with ``model`` that finished a session, and the turns of
        the sessions they finished."""
        row = self._rows(
            "SELECT coalesce(sum(c.seconds), 0) AS seconds,"
            " (SELECT count(*) FROM turns t JOIN build_sessions s ON s.session_id = t.session_id"
            "   JOIN builds b2 ON b2.id = s.build_id WHERE b2.model = ?) AS turns"
            " FROM llm_calls c JOIN builds b ON b.id = c.build_id"
            " WHERE b.model = ? AND b.id IN (SELECT build_id FROM build_sessions WHERE build_id IS NOT NULL)",
            (model, model),
        )[0]
        return row["seconds"], row["turns"]

    def recent_call_seconds(self, model: str, stage: str, recent: int) -> list[float]:
        """Seconds of the ``recent`` last successful calls of a stage with ``model``, newest first."""
        rows = self._rows(
            "SELECT seconds FROM llm_calls WHERE model = ? AND stage = ? AND ok = 1 ORDER BY id DESC LIMIT ?",
            (model, stage, recent),
        )
        return [r["seconds"] for r in rows]

    def calls(self, case_id: str | None = None) -> list[CallRecord]:
        if case_id is None:
            rows = self._rows("SELECT * FROM llm_calls ORDER BY id")
        else:
            rows = self._rows("SELECT * FROM llm_calls WHERE case_id = ? ORDER BY id", (case_id,))
        return [CallRecord(**{**r, "ok": bool(r["ok"])}) for r in rows]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True
