"""Schema migrations, applied in order and recorded in the ``_migrations`` table.

Never edit a migration that has shipped: add a new one. Every per-case table references
``cases`` with ON DELETE CASCADE so that deleting a case removes all of its rows.
"""

from __future__ import annotations

import sqlite3
from typing import Callable

MIGRATIONS: list[tuple[str, str]] = []


def migration(name: str) -> Callable[[Callable[[], str]], Callable[[], str]]:
    def register(fn: Callable[[], str]) -> Callable[[], str]:
        MIGRATIONS.append((name, fn()))
        return fn

    return register


@migration("0001_initial")
def _initial() -> str:
    return """
    CREATE TABLE cases (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL DEFAULT '',
        source_format TEXT NOT NULL DEFAULT '',
        source_file TEXT NOT NULL DEFAULT '',
        profile TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        last_build_at TEXT
    );
    CREATE TABLE sessions (
        id INTEGER PRIMARY KEY,
        case_id TEXT NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        source_id TEXT NOT NULL DEFAULT '',
        time TEXT,
        time_text TEXT NOT NULL DEFAULT '',
        meta TEXT NOT NULL DEFAULT '{}',
        UNIQUE (case_id, idx)
    );
    CREATE TABLE turns (
        id INTEGER PRIMARY KEY,
        case_id TEXT NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        role TEXT NOT NULL,
        speaker TEXT NOT NULL DEFAULT '',
        timestamp TEXT,
        text TEXT NOT NULL,
        original_id TEXT NOT NULL DEFAULT '',
        UNIQUE (case_id, idx)
    );
    CREATE INDEX turns_session ON turns(session_id, idx);
    CREATE TABLE questions (
        id INTEGER PRIMARY KEY,
        case_id TEXT NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
        qid TEXT NOT NULL DEFAULT '',
        question TEXT NOT NULL,
        answer TEXT,
        category TEXT NOT NULL DEFAULT '',
        evidence TEXT NOT NULL DEFAULT '[]',
        meta TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX questions_case ON questions(case_id);
    CREATE TABLE segments (
        id INTEGER PRIMARY KEY,
        case_id TEXT NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        start INTEGER NOT NULL,
        "end" INTEGER NOT NULL,
        trigger TEXT NOT NULL,
        provisional INTEGER NOT NULL DEFAULT 0,
        method TEXT NOT NULL DEFAULT 'bws'
    );
    CREATE INDEX segments_session ON segments(session_id, start);
    CREATE TABLE units (
        id INTEGER PRIMARY KEY,
        case_id TEXT NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
        session_id INTEGER REFERENCES sessions(id) ON DELETE CASCADE,
        fact_text TEXT NOT NULL,
        summary TEXT NOT NULL DEFAULT '',
        content_type TEXT NOT NULL,
        participants TEXT NOT NULL DEFAULT '[]',
        dialogue_time TEXT,
        event_time TEXT NOT NULL DEFAULT 'unknown',
        event_time_expression TEXT NOT NULL DEFAULT '',
        time_orientation TEXT NOT NULL DEFAULT 'unknown',
        completion TEXT NOT NULL DEFAULT 'unknown',
        emotion_or_state TEXT NOT NULL DEFAULT 'unknown',
        intention_or_plan TEXT NOT NULL DEFAULT 'unknown',
        relation_cues TEXT NOT NULL DEFAULT 'unknown',
        evidence_start INTEGER NOT NULL,
        evidence_end INTEGER NOT NULL,
        evidence_time TEXT,
        construction_status TEXT NOT NULL DEFAULT 'final',
        lifecycle_status TEXT NOT NULL DEFAULT 'unknown',
        completeness TEXT NOT NULL DEFAULT 'unknown',
        disputed INTEGER NOT NULL DEFAULT 0,
        version INTEGER NOT NULL DEFAULT 1,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX units_case ON units(case_id, construction_status);
    -- The embedding of each retrievable unit: the FAISS index is rebuilt from here.
    CREATE TABLE unit_vectors (
        unit_id INTEGER PRIMARY KEY REFERENCES units(id) ON DELETE CASCADE,
        case_id TEXT NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
        vector BLOB NOT NULL
    );
    CREATE INDEX unit_vectors_case ON unit_vectors(case_id);
    CREATE TABLE links (
        id INTEGER PRIMARY KEY,
        case_id TEXT NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
        source INTEGER NOT NULL REFERENCES units(id) ON DELETE CASCADE,
        target INTEGER NOT NULL REFERENCES units(id) ON DELETE CASCADE,
        relation TEXT NOT NULL,
        confidence TEXT NOT NULL DEFAULT 'unknown',
        time TEXT,
        created_at TEXT NOT NULL,
        UNIQUE (source, target, relation)
    );
    CREATE INDEX links_case ON links(case_id);
    CREATE INDEX links_target ON links(target);
    CREATE TABLE semantic_memory (
        id INTEGER PRIMARY KEY,
        case_id TEXT NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        source_unit_ids TEXT NOT NULL DEFAULT '[]',
        updated_at TEXT NOT NULL
    );
    CREATE TABLE support_memory (
        id INTEGER PRIMARY KEY,
        case_id TEXT NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
        strategy TEXT NOT NULL,
        outcome TEXT NOT NULL DEFAULT 'unknown',
        text TEXT NOT NULL DEFAULT '',
        source_unit_ids TEXT NOT NULL DEFAULT '[]',
        updated_at TEXT NOT NULL
    );
    CREATE TABLE llm_calls (
        id INTEGER PRIMARY KEY,
        case_id TEXT REFERENCES cases(id) ON DELETE CASCADE,
        stage TEXT NOT NULL,
        backend TEXT NOT NULL,
        model TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        seconds REAL NOT NULL DEFAULT 0,
        attempts INTEGER NOT NULL DEFAULT 1,
        ok INTEGER NOT NULL DEFAULT 1,
        error TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL
    );
    CREATE INDEX llm_calls_case ON llm_calls(case_id, stage);
    """


@migration("0002_builds")
def _builds() -> str:
    return """
    CREATE TABLE builds (
        id INTEGER PRIMARY KEY,
        case_id TEXT NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
        segmentation TEXT NOT NULL,
        settings TEXT NOT NULL DEFAULT '{}',
        backend TEXT NOT NULL DEFAULT '',
        model TEXT NOT NULL DEFAULT '',
        status TEXT NOT NULL DEFAULT 'running',
        error TEXT NOT NULL DEFAULT '',
        started_at TEXT NOT NULL,
        finished_at TEXT
    );
    CREATE INDEX builds_case ON builds(case_id);
    -- A session is in this table once all of its memory is written (the resume point).
    CREATE TABLE build_sessions (
        session_id INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        case_id TEXT NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
        build_id INTEGER REFERENCES builds(id) ON DELETE SET NULL,
        segmentation TEXT NOT NULL,
        done_at TEXT NOT NULL
    );
    ALTER TABLE llm_calls ADD COLUMN build_id INTEGER REFERENCES builds(id) ON DELETE SET NULL;
    ALTER TABLE semantic_memory ADD COLUMN session_id INTEGER REFERENCES sessions(id) ON DELETE SET NULL;
    ALTER TABLE support_memory ADD COLUMN session_id INTEGER REFERENCES sessions(id) ON DELETE SET NULL;
    """


@migration("0003_history")
def _history() -> str:
    # Who changed what, when and why. A deletion is recorded by id and reason only: the deleted
    # text is not kept (erasure must be able to remove it everywhere).
    return """
    CREATE TABLE history (
        id INTEGER PRIMARY KEY,
        case_id TEXT NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
        object TEXT NOT NULL,
        object_id INTEGER NOT NULL,
        action TEXT NOT NULL,
        field TEXT NOT NULL DEFAULT '',
        old TEXT,
        new TEXT,
        who TEXT NOT NULL DEFAULT '',
        reason TEXT NOT NULL DEFAULT '',
        at TEXT NOT NULL
    );
    CREATE INDEX history_object ON history(case_id, object, object_id);
    """


@migration("0004_privacy")
def _privacy() -> str:
    # Unit and link ids are never reused (AUTOINCREMENT): a new unit must not inherit a deleted
    # one's history, citations or vector. SQLite cannot add AUTOINCREMENT in place, so both tables
    # are rebuilt (foreign keys are off while this migration runs; see REBUILDS).
    return """
    CREATE TABLE units_new (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        case_id TEXT NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
        session_id INTEGER REFERENCES sessions(id) ON DELETE CASCADE,
        fact_text TEXT NOT NULL,
        summary TEXT NOT NULL DEFAULT '',
        content_type TEXT NOT NULL,
        participants TEXT NOT NULL DEFAULT '[]',
        dialogue_time TEXT,
        event_time TEXT NOT NULL DEFAULT 'unknown',
        event_time_expression TEXT NOT NULL DEFAULT '',
        time_orientation TEXT NOT NULL DEFAULT 'unknown',
        completion TEXT NOT NULL DEFAULT 'unknown',
        emotion_or_state TEXT NOT NULL DEFAULT 'unknown',
        intention_or_plan TEXT NOT NULL DEFAULT 'unknown',
        relation_cues TEXT NOT NULL DEFAULT 'unknown',
        evidence_start INTEGER NOT NULL,
        evidence_end INTEGER NOT NULL,
        evidence_time TEXT,
        construction_status TEXT NOT NULL DEFAULT 'final',
        lifecycle_status TEXT NOT NULL DEFAULT 'unknown',
        completeness TEXT NOT NULL DEFAULT 'unknown',
        disputed INTEGER NOT NULL DEFAULT 0,
        version INTEGER NOT NULL DEFAULT 1,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    INSERT INTO units_new SELECT * FROM units;
    DROP TABLE units;
    ALTER TABLE units_new RENAME TO units;
    CREATE INDEX units_case ON units(case_id, construction_status);
    CREATE TABLE links_new (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        case_id TEXT NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
        source INTEGER NOT NULL REFERENCES units(id) ON DELETE CASCADE,
        target INTEGER NOT NULL REFERENCES units(id) ON DELETE CASCADE,
        relation TEXT NOT NULL,
        confidence TEXT NOT NULL DEFAULT 'unknown',
        time TEXT,
        created_at TEXT NOT NULL,
        UNIQUE (source, target, relation)
    );
    INSERT INTO links_new SELECT * FROM links;
    DROP TABLE links;
    ALTER TABLE links_new RENAME TO links;
    CREATE INDEX links_case ON links(case_id);
    CREATE INDEX links_target ON links(target);
    -- Which content the case's vectors have: a new random token with every change of unit_vectors,
    -- in the same transaction. The FAISS file carries the token in its name (vectors.py).
    CREATE TABLE vector_state (
        case_id TEXT PRIMARY KEY REFERENCES cases(id) ON DELETE CASCADE,
        token TEXT NOT NULL
    );
    -- Consent: the latest row is the case's state; no row means not_asked.
    CREATE TABLE consent_log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        case_id TEXT NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
        state TEXT NOT NULL,
        who TEXT NOT NULL DEFAULT '',
        note TEXT NOT NULL DEFAULT '',
        at TEXT NOT NULL
    );
    CREATE INDEX consent_case ON consent_log(case_id, id);
    ALTER TABLE cases ADD COLUMN retention_days INTEGER;
    -- Erased cases, outside any case so that it outlives them: the case id only as a hash.
    CREATE TABLE erasures (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        case_hash TEXT NOT NULL,
        who TEXT NOT NULL DEFAULT '',
        reason TEXT NOT NULL DEFAULT '',
        counts TEXT NOT NULL DEFAULT '{}',
        at TEXT NOT NULL
    );
    """


@migration("0005_build_owner")
def _build_owner() -> str:
    # A running build is the case's build lock; its process (host and pid) tells a live build from
    # one whose process died.
    return """
    ALTER TABLE builds ADD COLUMN host TEXT NOT NULL DEFAULT '';
    ALTER TABLE builds ADD COLUMN pid INTEGER;
    """


@migration("0006_access_log")
def _access_log() -> str:
    # Who viewed, changed, built, asked or exported which case (erasures are in `erasures`).
    return """
    CREATE TABLE access_log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        case_id TEXT NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
        who TEXT NOT NULL,
        action TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT '',
        at TEXT NOT NULL
    );
    CREATE INDEX access_case ON access_log(case_id, id);
    """


@migration("0007_audit")
def _audit() -> str:
    # Hand audits of memory quality (ftamem_core/governance/audit). A round holds no case id itself: its cases,
    # items and scores cascade from `cases`, so an erased case leaves only the round's settings.
    # Items name units by id (ids are never reused) and the version drawn, so later changes show.
    return """
    CREATE TABLE audit_rounds (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        scope TEXT NOT NULL,
        n_units INTEGER NOT NULL,
        n_pairs INTEGER NOT NULL,
        seed INTEGER NOT NULL,
        settings TEXT NOT NULL DEFAULT '{}',
        created_by TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL
    );
    CREATE TABLE audit_round_cases (
        round_id INTEGER NOT NULL REFERENCES audit_rounds(id) ON DELETE CASCADE,
        case_id TEXT NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
        PRIMARY KEY (round_id, case_id)
    );
    CREATE TABLE audit_items (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        round_id INTEGER NOT NULL REFERENCES audit_rounds(id) ON DELETE CASCADE,
        case_id TEXT NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        kind TEXT NOT NULL,
        unit_id INTEGER NOT NULL,
        unit_version INTEGER NOT NULL,
        other_id INTEGER,
        other_version INTEGER,
        link_id INTEGER,
        stratum TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX audit_items_round ON audit_items(round_id, position);
    CREATE TABLE audit_scores (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        item_id INTEGER NOT NULL REFERENCES audit_items(id) ON DELETE CASCADE,
        case_id TEXT NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
        annotator TEXT NOT NULL,
        fact INTEGER,
        time INTEGER,
        affect INTEGER,
        relatedness INTEGER,
        comment TEXT NOT NULL DEFAULT '',
        unit_version INTEGER,
        other_version INTEGER,
        at TEXT NOT NULL,
        UNIQUE (item_id, annotator)
    );
    """


@migration("0008_unit_origin")
def _unit_origin() -> str:
    # How each unit was made (models.Origin); units stored before are "unknown".
    return "ALTER TABLE units ADD COLUMN origin TEXT NOT NULL DEFAULT 'unknown'"


@migration("0009_pending_scrub")
def _pending_scrub() -> str:
    # One row while a deletion's checkpoint could not finish (another connection was reading):
    # the next write, close or open of any store finishes it, also after a restart (store.py).
    return "CREATE TABLE pending_scrub (id INTEGER PRIMARY KEY CHECK (id = 1), since TEXT NOT NULL)"


# The settings a build recorded at the top level before settings were grouped by phase (issue 41),
# by the phase that holds them now: the names as they stood then, since a migration never changes.
_FLAT_BUILD_SETTINGS = {
    "segmentation": ("window_size", "min_forward_step", "min_fragment_turns"),
    "construction": ("construction_temperature", "construction_max_tokens", "prompt_turn_chars"),
    "embedding": ("embedding_model",),
    "extraction": (
        "fact_max_chars",
        "min_unit_words",
        "turns_per_unit",
        "coverage_pass",
        "coverage_min_words",
        "speaker_check",
        "merge_duplicates",
        "duplicate_cosine",
        "ground_facts",
        "fact_support",
        "long_span_turns",
        "long_span_support",
        "told_share",
        "ground_anchors",
        "turn_anchors",
        "trim_spans",
        "split_facts",
        "verbatim_fallback",
        "verbatim_within_spans",
        "caption_carries_turn",
        "verbatim_reply_words",
    ),
    "linking": ("link_candidates", "link_threshold", "strict_links", "link_per_fragment", "lifecycle_by_relation"),
    "longitudinal": ("ground_notes",),
}


def build_settings_by_phase(where: str = "1") -> list[str]:
    """Statements that move a flat build record's settings into their phase's table (a record
    already by phase is left as it is; a key not listed stays where it is). ``where`` narrows the
    rows: an import moves its own case's."""
    # "segmentation" named the method and now names the phase that holds it: it moves in first
    out = [
        "UPDATE builds SET settings = json_set(settings, '$.segmentation', "
        "json_object('segmentation', settings ->> '$.segmentation')) "
        f"WHERE json_type(settings, '$.segmentation') = 'text' AND {where}"
    ]
    for phase, names in _FLAT_BUILD_SETTINGS.items():
        out += [
            f"UPDATE builds SET settings = json_remove(json_set(settings, '$.{phase}.{name}', "
            f"json(settings -> '$.{name}')), '$.{name}') WHERE json_type(settings, '$.{name}') IS NOT NULL AND {where}"
            for name in names
        ]
    return out


@migration("0010_build_settings_by_phase")
def _build_settings_by_phase() -> str:
    return ";\n".join(build_settings_by_phase())


# Migrations that rebuild tables run with foreign keys off (dropping a referenced table would
# otherwise cascade into the tables that reference it); the keys are checked before commit.
REBUILDS = {"0004_privacy"}


def apply_migrations(conn: sqlite3.Connection, now: str) -> list[str]:
    """Apply the migrations not yet recorded; return their names. Each runs in one transaction,
    and checks again inside it that no other process has applied it meanwhile."""
    conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    done = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
    applied = []
    for name, sql in MIGRATIONS:
        if name in done:
            continue
        rebuild = name in REBUILDS
        if rebuild:
            conn.execute("PRAGMA foreign_keys = OFF")  # has no effect inside a transaction
        # executescript would commit on its own; run statement by statement inside BEGIN.
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("SELECT 1 FROM _migrations WHERE name = ?", (name,)).fetchone():
                conn.execute("ROLLBACK")  # another process applied it first
                continue
            for statement in _statements(sql):
                conn.execute(statement)
            if rebuild and conn.execute("PRAGMA foreign_key_check").fetchone():
                raise sqlite3.IntegrityError(f"migration {name} would break a foreign key")
            conn.execute("INSERT INTO _migrations (name, applied_at) VALUES (?, ?)", (name, now))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        finally:
            if rebuild:
                conn.execute("PRAGMA foreign_keys = ON")
        applied.append(name)
    return applied


def _statements(sql: str) -> list[str]:
    lines = [line for line in sql.splitlines() if not line.strip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
