"""The store: SQLite through sqlite-utils (source of truth) plus one FAISS index per case.

Every multi-row write happens in one explicit transaction (``Store.transaction``). Writes use
plain SQL on the connection because sqlite-utils' write helpers commit on their own, which would
end an enclosing transaction early; reads use sqlite-utils.

Cases are isolated: every read and write names its case.

One module per aggregate, each a mixin of ``Store``: ``cases`` (cases, sessions, turns,
questions), ``units`` (segments, units, vectors), ``links``, ``memory`` (longitudinal memory),
``builds`` (builds and LLM calls), ``logs`` (consent, access, history), ``audit`` (the hand
audit), ``case_rows`` (a case in every table: export, import, erasure, retention).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import sqlite_utils

from .audit import AuditRecords
from .builds import BuildRecords
from .case_rows import CaseRows
from .cases import Cases
from .links import Links
from .logs import Logs
from .memory import LongitudinalMemory
from .units import Units
from ..errors import BuildRunning, CaseExists, NotFound, StoreError, VersionConflict  # noqa: F401 (raised and re-exported)
from .migrations import apply_migrations
from ..models import utcnow
from .vectors import DIM, IndexConfig, VectorStore, private_folder


class Store(Cases, Units, Links, LongitudinalMemory, BuildRecords, Logs, AuditRecords, CaseRows):
    """The store: one module per aggregate, each a mixin of this class; here the connection, the
    lock and the transactions they share."""

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
        # Deleted rows are overwritten with zeros, not left in free pages (erasure, governance/privacy.py).
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
        try:
            self.settle_scrub()
        except sqlite3.Error:  # closed already, or the file is not writable: the scrub stays owed in it
            pass
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
                if not self.checkpoint():
                    self.owe_scrub()
            else:  # every write (the one at open too) finishes a scrub a reader held up before
                self.settle_scrub()

    def text_removed(self) -> None:
        """Inside a transaction that deletes or rewrites text: when it commits, the WAL is copied
        back and truncated (``checkpoint``), so the old text leaves the files at once, not at the
        next automatic checkpoint (the app keeps its store open for days)."""
        self._scrub_pending = True

    def checkpoint(self, wait_ms: int = 2000) -> bool:
        """Copy the WAL into the database and truncate it; with ``secure_delete`` the freed cells
        are zeros by then. False when another connection's reader kept some frames (the caller
        records the scrub as owed: ``settle_scrub``)."""
        if self.path == ":memory:":
            return True
        with self._lock:
            # A reader elsewhere is waited for 2 s, not the 10 s a write waits: a deletion in the
            # app must not hang on another process's long read (its frames go at the next one).
            self.conn.execute(f"PRAGMA busy_timeout = {int(wait_ms)}")
            try:
                busy, _, _ = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                self.conn.execute("PRAGMA busy_timeout = 10000")
        return not busy

    def owe_scrub(self) -> None:
        """Recorded in the database, not in this object: any store finishes it, after a restart too."""
        self.conn.execute("INSERT OR IGNORE INTO pending_scrub (id, since) VALUES (1, ?)", (utcnow(),))

    def settle_scrub(self) -> bool:
        """Finish a scrub a reader held up (this store's or another process's), if no reader holds
        it up still; False when one does. Tried without waiting: it runs after every write."""
        with self._lock:
            if self.conn.in_transaction or not self.conn.execute("SELECT 1 FROM pending_scrub").fetchone():
                return True
            if not self.checkpoint(wait_ms=0):
                return False
            self.conn.execute("DELETE FROM pending_scrub")
            self.checkpoint(wait_ms=0)  # the marker's own frame; it holds no deleted text
            return True

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

    def _rows_by_id(self, case_id: str, table: str, fields: str, ids: list[int]) -> list[dict]:
        """Some columns of many rows of one case in one query per 900 ids (SQLite's limit)."""
        rows: list[dict] = []
        for n in range(0, len(ids), 900):
            chunk = ids[n : n + 900]
            # "+case_id": look rows up by primary key; an index on case_id would scan the whole case.
            rows += self._rows(
                f"SELECT {fields} FROM {table} WHERE id IN ({', '.join('?' * len(chunk))}) AND +case_id = ?",
                (*chunk, case_id),
            )
        return rows


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
