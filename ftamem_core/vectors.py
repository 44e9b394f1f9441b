"""One FAISS index per case, inner product over L2-normalised vectors, ids = unit row ids.

SQLite is the source of truth (``unit_vectors``); the index file beside the database is a
cache of it. On load, an index whose id set differs from the store's is rebuilt.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from pathlib import Path
from typing import Literal

import faiss
import numpy as np
from pydantic import BaseModel, ConfigDict

DIM = 384  # all-MiniLM-L6-v2


class IndexConfig(BaseModel):
    """Which FAISS index a case gets. ``auto`` picks by size: exact inner product up to
    ``hnsw_from`` units, HNSW up to ``ivf_from``, then IVF with 8-bit scalar quantisation
    (exact float32 scanning cannot meet the latency targets past ~100k units; see
    benchmarks/retrieval.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["auto", "flat", "hnsw", "ivf"] = "auto"
    hnsw_from: int = 20_000
    ivf_from: int = 400_000
    hnsw_m: int = 32
    ef_construction: int = 80
    ef_search: int = 96
    nprobe: int = 24

    def choose(self, n: int) -> str:
        if self.kind != "auto":
            return self.kind
        return "flat" if n < self.hnsw_from else "hnsw" if n < self.ivf_from else "ivf"


def case_file_key(case_id: str) -> str:
    """A file name for a case id that may hold any character; distinct ids never collide."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", case_id)[:40]
    digest = hashlib.sha256(case_id.encode("utf-8")).hexdigest()[:12]
    return f"{slug}-{digest}"


def normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


class CaseIndex:
    """The vectors of one case's retrievable units."""

    def __init__(self, dim: int = DIM, kind: str = "flat", config: IndexConfig | None = None, nlist: int = 1):
        """``nlist``: the IVF index's number of lists (``build`` picks it from the case's size)."""
        self.dim, self.kind = dim, kind
        self.config = config or IndexConfig()
        self.index = faiss.IndexIDMap2(self._inner(kind, nlist))

    def _inner(self, kind: str, nlist: int):
        c = self.config
        if kind == "flat":
            return faiss.IndexFlatIP(self.dim)
        if kind == "hnsw":
            inner = faiss.IndexHNSWFlat(self.dim, c.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            inner.hnsw.efConstruction = c.ef_construction
            inner.hnsw.efSearch = c.ef_search
            return inner
        if kind == "ivf":
            self._quantizer = faiss.IndexFlatIP(self.dim)  # kept alive: the IVF index points to it
            inner = faiss.IndexIVFScalarQuantizer(self._quantizer, self.dim, nlist, faiss.ScalarQuantizer.QT_8bit,
                                                  faiss.METRIC_INNER_PRODUCT)
            inner.nprobe = c.nprobe
            return inner
        raise ValueError(f"unknown index kind {kind!r}")

    @classmethod
    def build(cls, ids: list[int], vectors: np.ndarray, dim: int = DIM, config: IndexConfig | None = None) -> "CaseIndex":
        """An index of the kind the config picks for this many vectors, filled with them."""
        config = config or IndexConfig()
        kind = config.choose(len(ids))
        nlist = max(1, min(4 * int(np.sqrt(len(ids))), len(ids) // 39 or 1)) if kind == "ivf" else 1
        index = cls(dim, kind, config, nlist)
        if kind == "ivf":
            vectors = normalise(vectors)
            index.index.train(vectors[np.random.default_rng(0).permutation(len(vectors))[: max(nlist * 39, 50_000)]])
        index.add(ids, vectors)
        return index

    @property
    def ntotal(self) -> int:
        return self.index.ntotal

    def ids(self) -> set[int]:
        if self.index.ntotal == 0:
            return set()
        return set(faiss.vector_to_array(self.index.id_map).tolist())

    def add(self, ids: list[int], vectors: np.ndarray) -> None:
        if not ids:
            return
        vectors = normalise(vectors)
        if vectors.shape != (len(ids), self.dim):
            raise ValueError(f"expected {len(ids)} vectors of {self.dim} dims, got {vectors.shape}")
        self.index.add_with_ids(vectors, np.asarray(ids, dtype=np.int64))

    def remove(self, ids: list[int]) -> bool:
        """Remove ids; False when the index kind cannot (HNSW): rebuild it instead."""
        if not ids:
            return True
        if self.kind == "hnsw":
            return False
        self.index.remove_ids(np.asarray(ids, dtype=np.int64))
        return True

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Scores and ids of the k nearest units, best first (ids -1 past the end)."""
        k = max(1, min(k, self.index.ntotal or 1))
        # One query gains nothing from OpenMP threads, and their spin-waiting costs a lot when
        # the cores are busy (a local model generating): search on this thread alone.
        threads = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(1)
        try:
            scores, ids = self.index.search(normalise(query), k)
        finally:
            faiss.omp_set_num_threads(threads)
        return scores[0], ids[0]

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        faiss.write_index(self.index, str(tmp))
        os.replace(tmp, path)  # a killed process leaves the old file, never half a file

    @classmethod
    def load(cls, path: Path, dim: int = DIM, config: IndexConfig | None = None) -> "CaseIndex | None":
        """The saved index, or None when it is missing or unreadable."""
        try:
            index = faiss.read_index(str(path))
        except Exception:
            return None
        if index.d != dim:
            return None
        inner = faiss.downcast_index(index.index) if hasattr(index, "index") else index
        kind = "hnsw" if isinstance(inner, faiss.IndexHNSW) else "ivf" if isinstance(inner, faiss.IndexIVF) else "flat"
        loaded = cls(dim, "flat", config)
        loaded.index, loaded.kind = index, kind
        if kind == "hnsw":
            inner.hnsw.efSearch = loaded.config.ef_search
        elif kind == "ivf":
            inner.nprobe = loaded.config.nprobe
        loaded._inner_ref = inner  # the downcast object must outlive searches
        return loaded


class VectorStore:
    """The per-case indexes of one database, kept in memory once loaded."""

    def __init__(self, folder: Path | None, dim: int = DIM, config: IndexConfig | None = None):
        self.folder = folder  # None: in-memory database, nothing saved
        self.dim = dim
        self.config = config or IndexConfig()
        self._indexes: dict[str, CaseIndex] = {}
        self._lock = threading.RLock()

    def path(self, case_id: str) -> Path | None:
        return None if self.folder is None else self.folder / f"{case_file_key(case_id)}.faiss"

    def loaded(self, case_id: str) -> CaseIndex | None:
        return self._indexes.get(case_id)

    def get(self, case_id: str, store_ids: set[int], fetch) -> CaseIndex:
        """The case's index; rebuilt from ``fetch()`` -> (ids, vectors) if it disagrees with
        ``store_ids``, the ids the store holds."""
        with self._lock:
            index = self._indexes.get(case_id)
            if index is None:
                path = self.path(case_id)
                index = CaseIndex.load(path, self.dim, self.config) if path and path.exists() else None
            # Rebuilt when its ids differ from the store's, or the case outgrew its index kind.
            if index is None or index.kind != self.config.choose(len(store_ids)) or index.ids() != store_ids:
                ids, vectors = fetch()
                index = CaseIndex.build(ids, vectors, self.dim, self.config)
                self._save(case_id, index)
            self._indexes[case_id] = index
            return index

    def add(self, case_id: str, ids: list[int], vectors: np.ndarray, store_ids: set[int], fetch) -> None:
        """Add vectors the store has just committed; ``store_ids`` already includes ``ids``."""
        with self._lock:
            index = self._indexes.get(case_id)
            if index is not None and index.ids() == store_ids - set(ids):
                index.add(ids, vectors)
                self._save(case_id, index)
            else:
                self.get(case_id, store_ids, fetch)

    def remove(self, case_id: str, ids: list[int]) -> None:
        with self._lock:
            index = self._indexes.get(case_id)
            if index is not None:
                if index.remove(ids):
                    self._save(case_id, index)
                else:  # rebuilt from the store when next used
                    self._indexes.pop(case_id)
            # An index not loaded yet is checked against the store when it is next opened.

    def drop(self, case_id: str) -> None:
        with self._lock:
            self._indexes.pop(case_id, None)
            path = self.path(case_id)
            if path is not None:
                path.unlink(missing_ok=True)
                path.with_suffix(".tmp").unlink(missing_ok=True)

    def forget(self) -> None:
        """Drop the in-memory copies; the next get() reads and checks the files again."""
        with self._lock:
            self._indexes.clear()

    def _save(self, case_id: str, index: CaseIndex) -> None:
        path = self.path(case_id)
        if path is not None:
            index.save(path)
