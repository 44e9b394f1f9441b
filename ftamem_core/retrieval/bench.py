"""Retrieval at scale on synthetic cases: latency of retrieval + expansion + packet assembly, the
index's recall@K against exact float32 search, index build time and size.

Synthetic units are clustered (2,000 topic centres plus noise, normalised), which is closer to
sentence embeddings than uniform noise; their fields vary so every cue component does work.
"""

from __future__ import annotations

import resource
import tempfile
import time
from pathlib import Path

import numpy as np

from ..config import Ablations
from .packet import build_packet
from .ranking import Cues
from .ranking import score_candidates
from ..storage.store import Store
from ..storage.synthetic import fill, synthetic_vectors
from ..storage.vectors import DIM, IndexConfig, normalise


def exact_top(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    out = np.empty((len(queries), k), dtype=np.int64)
    for i, q in enumerate(queries):
        sims = vectors @ q
        top = np.argpartition(-sims, k)[:k]
        out[i] = top[np.argsort(-sims[top])] + 1  # unit ids start at 1
    return out


def bench_retrieval(
    units: int, queries: int = 200, k: int = 25, seed: int = 0, config: IndexConfig | None = None
) -> dict:
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
            scored = score_candidates(store, "bench", v, cues, k=k, tau=0.0, lam=0.8, ablations=Ablations())
            build_packet(store, "bench", scored.kept_ids(), 1, Ablations(), 6)
            total_ms.append((time.perf_counter() - t0) * 1000)
        store.close()
    return {
        "units": units,
        "index": index.kind,
        "fill_s": round(fill_seconds, 1),
        "build_s": round(build_seconds, 1),
        "index_mb": round(index_mb, 1),
        "max_rss_mb": round(max(rss_before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024),
        "search_p50_ms": round(float(np.percentile(search_ms, 50)), 2),
        "search_p95_ms": round(float(np.percentile(search_ms, 95)), 2),
        "p50_ms": round(float(np.percentile(total_ms, 50)), 2),
        "p95_ms": round(float(np.percentile(total_ms, 95)), 2),
        f"recall@{k}": round(recall, 4),
        "queries": queries,
    }


def markdown_table(rows: list[dict]) -> str:
    """Benchmark rows as a Markdown table (the column names are the first row's keys)."""
    cols = list(rows[0])
    lines = [" | ".join(cols), " | ".join("---" for _ in cols)]
    lines += [" | ".join(str(r[c]) for c in cols) for r in rows]
    return "\n".join(lines)
