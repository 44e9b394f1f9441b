"""Synthetic cases for the retrieval benchmark (retrieval/bench.py), written straight to the
tables: a million units through the store's own writes would take hours.

Units are clustered (topic centres plus noise, normalised), which is closer to sentence embeddings
than uniform noise; their fields vary so every cue component does work.
"""

from __future__ import annotations

import json

import numpy as np

from ..models import utcnow
from .store import Store
from .vectors import DIM, normalise

TYPES = ["event", "current_state", "relationship_event", "homework_or_plan", "support_interaction", "general_fact"]
NAMES = ["Maya", "Lena", "Omar", "Priya", "Daniel", "Leo", "Sam", "Ana"]


def synthetic_vectors(n: int, rng: np.random.Generator, centres: np.ndarray) -> np.ndarray:
    picks = rng.integers(0, len(centres), n)
    return normalise(centres[picks] + rng.normal(scale=0.045, size=(n, DIM)).astype(np.float32))


def fill(store: Store, case_id: str, n: int, rng: np.random.Generator, centres: np.ndarray) -> np.ndarray:
    """A case of ``n`` units (written straight to the tables) with turns and links; returns the vectors."""
    turns_per_session, n_turns = 50, max(1000, n // 10)
    now = utcnow()
    with store.transaction() as conn:
        conn.execute("INSERT INTO cases (id, name, created_at) VALUES (?, ?, ?)", (case_id, "synthetic", now))
        sessions = []
        for s in range(n_turns // turns_per_session):
            sid = conn.execute(
                "INSERT INTO sessions (case_id, idx, time) VALUES (?, ?, ?)",
                (case_id, s, f"20{20 + s % 6}-{1 + s % 12:02d}-{1 + s % 28:02d}"),
            ).lastrowid
            sessions.append(sid)
            conn.executemany(
                "INSERT INTO turns (case_id, session_id, idx, role, speaker, text) VALUES (?, ?, ?, 'user', 'Maya', ?)",
                [
                    (case_id, sid, s * turns_per_session + t, f"turn {t} of session {s}")
                    for t in range(turns_per_session)
                ],
            )
        vectors = synthetic_vectors(n, rng, centres)
        batch = 50_000
        for start in range(0, n, batch):
            rows = []
            for i in range(start, min(n, start + batch)):
                s = int(rng.integers(0, len(sessions)))
                first = s * turns_per_session + int(rng.integers(0, turns_per_session - 3))
                rows.append(
                    (
                        i + 1,
                        case_id,
                        sessions[s],
                        f"{NAMES[i % 8]} did thing {i} with {NAMES[(i * 7) % 8]}",
                        TYPES[i % len(TYPES)],
                        json.dumps([NAMES[i % 8]]),
                        f"20{20 + s % 6}-{1 + s % 12:02d}-{1 + s % 28:02d}",
                        "unknown",
                        ["tired", "hopeful", "angry", "relieved"][i % 4],
                        first,
                        first + 2,
                        now,
                        now,
                    )
                )
            conn.executemany(
                "INSERT INTO units (id, case_id, session_id, fact_text, content_type, participants, dialogue_time,"
                " event_time, emotion_or_state, evidence_start, evidence_end, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            conn.executemany(
                "INSERT INTO unit_vectors (unit_id, case_id, vector) VALUES (?, ?, ?)",
                [(i + 1, case_id, vectors[i].tobytes()) for i in range(start, min(n, start + batch))],
            )
        store.new_vector_token(case_id)
        src = rng.integers(2, n + 1, n // 2)
        dst = np.maximum(1, src - rng.integers(1, 1000, len(src)))
        conn.executemany(
            "INSERT OR IGNORE INTO links (case_id, source, target, relation, confidence, created_at)"
            " VALUES (?, ?, ?, ?, 'high', ?)",
            [
                (case_id, int(a), int(b), ["updates", "supports", "followup_of"][int(a) % 3], now)
                for a, b in zip(src, dst)
                if a != b
            ],
        )
    return vectors
