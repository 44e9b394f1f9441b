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

import faiss
import numpy as np

DIM = 384  # all-MiniLM-L6-v2


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

    def __init__(self, dim: int = DIM):
        self.dim = dim
        self.index = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))

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

    def remove(self, ids: list[int]) -> None:
        if ids:
            self.index.remove_ids(np.asarray(ids, dtype=np.int64))

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Scores and ids of the k nearest units, best first (ids -1 past the end)."""
        k = max(1, min(k, self.index.ntotal or 1))
        scores, ids = self.index.search(normalise(query), k)
        return scores[0], ids[0]

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        faiss.write_index(self.index, str(tmp))
        os.replace(tmp, path)  # a killed process leaves the old file, never half a file

    @classmethod
    def load(cls, path: Path, dim: int = DIM) -> "CaseIndex | None":
        """The saved index, or None when it is missing or unreadable."""
        try:
            index = faiss.read_index(str(path))
        except Exception:
            return None
        if index.d != dim:
            return None
        loaded = cls(dim)
        loaded.index = index
        return loaded


class VectorStore:
    """The per-case indexes of one database, kept in memory once loaded."""

    def __init__(self, folder: Path | None, dim: int = DIM):
        self.folder = folder  # None: in-memory database, nothing saved
        self.dim = dim
        self._indexes: dict[str, CaseIndex] = {}
        self._lock = threading.RLock()

    def path(self, case_id: str) -> Path | None:
        return None if self.folder is None else self.folder / f"{case_file_key(case_id)}.faiss"

    def get(self, case_id: str, store_ids: set[int], fetch) -> CaseIndex:
        """The case's index; rebuilt from ``fetch()`` -> (ids, vectors) if it disagrees with
        ``store_ids``, the ids the store holds."""
        with self._lock:
            index = self._indexes.get(case_id)
            if index is None:
                path = self.path(case_id)
                index = CaseIndex.load(path, self.dim) if path and path.exists() else None
            if index is None or index.ids() != store_ids:
                index = CaseIndex(self.dim)
                ids, vectors = fetch()
                index.add(ids, vectors)
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
                index.remove(ids)
                self._save(case_id, index)
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
