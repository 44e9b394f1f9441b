"""Retrieval at scale on synthetic cases: latency of retrieval + expansion + packet assembly, the
index's recall@K against exact float32 search, index build time and size.

Synthetic units are clustered (2,000 topic centres plus noise, normalised), which is closer to
sentence embeddings than uniform noise; their fields vary so every cue component does work.
"""

from __future__ import annotations

import json
import resource
import tempfile
import time
from pathlib import Path

import numpy as np

from ..config import Ablations
from ..models import utcnow
from .packet import build_packet
from .ranking import Cues
from .ranking import score_candidates
from ..storage.store import Store
from ..storage.vectors import DIM, IndexConfig, normalise

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
            sid = conn.execute("INSERT INTO sessions (case_id, idx, time) VALUES (?, ?, ?)",
                               (case_id, s, f"20{20 + s % 6}-{1 + s % 12:02d}-{1 + s % 28:02d}")).lastrowid
            sessions.append(sid)
            conn.executemany(
                "INSERT INTO turns (case_id, session_id, idx, role, speaker, text) VALUES (?, ?, ?, 'user', 'Maya', ?)",
                [(case_id, sid, s * turns_per_session + t, f"turn {t} of session {s}") for t in range(turns_per_session)])
        vectors = synthetic_vectors(n, rng, centres)
        batch = 50_000
        for start in range(0, n, batch):
            rows = []
            for i in range(start, min(n, start + batch)):
                s = int(rng.integers(0, len(sessions)))
                first = s * turns_per_session + int(rng.integers(0, turns_per_session - 3))
                rows.append((i + 1, case_id, sessions[s], f"{NAMES[i % 8]} did thing {i} with {NAMES[(i * 7) % 8]}",
                             TYPES[i % len(TYPES)], json.dumps([NAMES[i % 8]]),
                             f"20{20 + s % 6}-{1 + s % 12:02d}-{1 + s % 28:02d}", "unknown",
                             ["tired", "hopeful", "angry", "relieved"][i % 4], first, first + 2, now, now))
            conn.executemany(
                "INSERT INTO units (id, case_id, session_id, fact_text, content_type, participants, dialogue_time,"
                " event_time, emotion_or_state, evidence_start, evidence_end, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            conn.executemany("INSERT INTO unit_vectors (unit_id, case_id, vector) VALUES (?, ?, ?)",
                             [(i + 1, case_id, vectors[i].tobytes()) for i in range(start, min(n, start + batch))])
        store.new_vector_token(case_id)
        src = rng.integers(2, n + 1, n // 2)
        dst = np.maximum(1, src - rng.integers(1, 1000, len(src)))
        conn.executemany("INSERT OR IGNORE INTO links (case_id, source, target, relation, confidence, created_at)"
                         " VALUES (?, ?, ?, ?, 'high', ?)",
                         [(case_id, int(a), int(b), ["updates", "supports", "followup_of"][int(a) % 3], now)
                          for a, b in zip(src, dst) if a != b])
    return vectors


def exact_top(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    out = np.empty((len(queries), k), dtype=np.int64)
    for i, q in enumerate(queries):
        sims = vectors @ q
        top = np.argpartition(-sims, k)[:k]
        out[i] = top[np.argsort(-sims[top])] + 1  # unit ids start at 1
    return out


def bench_retrieval(units: int, queries: int = 200, k: int = 25, seed: int = 0,
                    config: IndexConfig | None = None) -> dict:
    rng = np.random.default_rng(seed)
    centres = normalise(rng.normal(size=(2000, DIM)).astype(np.float32))
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.db", index_config=config or IndexConfig())
        started = time.perf_counter()
        vectors = fill(store, "bench", units, rng, centres)
        fill_seconds = time.perf_counter() - started
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        started = time.perf_counter()
        index = store.index("bench")
        build_seconds = time.perf_counter() - started
        index_mb = store.index_path("bench").stat().st_size / 2**20
        q = synthetic_vectors(queries, rng, centres)
        truth = exact_top(vectors, q, k)
        found = np.stack([index.search(v, k)[1] for v in q])
        recall = float(np.mean([len(set(f) & set(t)) / k for f, t in zip(found, truth)]))
        search_ms, total_ms = [], []
        cues = Cues(people=["Lena"], times=["2023-05"], content_types=["event"], affect_terms=["tired"])
        for v in q:
            t0 = time.perf_counter()
            index.search(v, k)
            search_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            scored = score_candidates(store, "bench", v, cues, k=k, tau=0.0, lam=0.8, pool=max(100, k),
                                      ablations=Ablations())
            build_packet(store, "bench", scored.kept_ids(), 1, Ablations(), 6)
            total_ms.append((time.perf_counter() - t0) * 1000)
        store.close()
    return {
        "units": units, "index": index.kind, "fill_s": round(fill_seconds, 1), "build_s": round(build_seconds, 1),
        "index_mb": round(index_mb, 1), "max_rss_mb": round(max(rss_before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024),
        "search_p50_ms": round(float(np.percentile(search_ms, 50)), 2),
        "search_p95_ms": round(float(np.percentile(search_ms, 95)), 2),
        "p50_ms": round(float(np.percentile(total_ms, 50)), 2), "p95_ms": round(float(np.percentile(total_ms, 95)), 2),
        f"recall@{k}": round(recall, 4), "queries": queries,
    }


def markdown_table(rows: list[dict]) -> str:
    """Benchmark rows as a Markdown table (the column names are the first row's keys)."""
    cols = list(rows[0])
    lines = [" | ".join(cols), " | ".join("---" for _ in cols)]
    lines += [" | ".join(str(r[c]) for c in cols) for r in rows]
    return "\n".join(lines)
