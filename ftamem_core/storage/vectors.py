"""One FAISS index per case, inner product over L2-normalised vectors, ids = unit row ids.

SQLite is the source of truth (``unit_vectors``); the index file beside the database is a
cache of it, named by the content token of the vectors it holds (see VectorStore).
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

from ..setting import setting

DIM = 384  # all-MiniLM-L6-v2


class IndexConfig(BaseModel):
    """Which FAISS index a case gets. ``auto`` picks by size: exact inner product up to
    ``hnsw_from`` units, HNSW up to ``ivf_from``, then IVF with 8-bit scalar quantisation
    (exact float32 scanning cannot meet the latency targets past ~100k units; see
    benchmarks/retrieval.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["auto", "flat", "hnsw", "ivf"] = setting(
        "auto", description="`auto`, `flat`, `hnsw` or `ivf`; `auto` picks by case size"
    )
    hnsw_from: int = setting(20_000, description="units from which `auto` uses HNSW")
    ivf_from: int = setting(400_000, description="units from which `auto` uses IVF with 8-bit scalar quantisation")
    hnsw_m: int = setting(32, description="HNSW: neighbours per node (M)")
    ef_construction: int = setting(80, description="HNSW: candidates kept while the index is built")
    ef_search: int = setting(96, description="HNSW: candidates kept while searching")
    nprobe: int = setting(24, description="IVF: lists searched")

    def choose(self, n: int) -> str:
        if self.kind != "auto":
            return self.kind
        return "flat" if n < self.hnsw_from else "hnsw" if n < self.ivf_from else "ivf"


def case_file_key(case_id: str) -> str:
    """A file name for a case id that may hold any character; distinct ids never collide."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", case_id)[:40]
    digest = hashlib.sha256(case_id.encode("utf-8")).hexdigest()[:12]
    return f"{slug}-{digest}"


def private_folder(folder: Path) -> None:
    """Create ``folder`` and its missing parents readable by their owner only. A folder that
    already exists keeps its mode: it may be /tmp or a home folder, not the store's to lock."""
    missing = []
    at = Path(folder).absolute()
    while not at.exists():
        missing.append(at)
        at = at.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:  # made meanwhile by someone else: theirs
            continue
        os.chmod(path, 0o700)  # mkdir's mode passes through the umask


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
        inner = self._inner(kind, nlist)
        # IVF keeps ids itself. Wrapped in IndexIDMap2 its removals break the id map (IVF does
        # not renumber its rows after a removal, the map does), so it is never wrapped.
        self.index = inner if kind == "ivf" else faiss.IndexIDMap2(inner)
        self._lock = threading.Lock()  # a search never meets a half-done add or remove

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
            inner = faiss.IndexIVFScalarQuantizer(
                self._quantizer, self.dim, nlist, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
            )
            inner.nprobe = c.nprobe
            return inner
        raise ValueError(f"unknown index kind {kind!r}")

    @classmethod
    def build(
        cls, ids: list[int], vectors: np.ndarray, dim: int = DIM, config: IndexConfig | None = None
    ) -> "CaseIndex":
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
        with self._lock:
            if self.index.ntotal == 0:
                return set()
            if self.kind != "ivf":
                return set(faiss.vector_to_array(self.index.id_map).tolist())
            lists = self.index.invlists
            return {
                int(i)
                for n in range(self.index.nlist)
                if lists.list_size(n)
                for i in faiss.rev_swig_ptr(lists.get_ids(n), lists.list_size(n))
            }

    def vector(self, unit_id: int) -> np.ndarray:
        """The stored vector of one id (IndexIDMap2 keeps the id -> row map)."""
        with self._lock:
            if self.kind != "ivf":
                return self.index.reconstruct(int(unit_id))
            # An IVF index maps ids to rows only while asked to, and cannot remove ids meanwhile.
            self.index.set_direct_map_type(faiss.DirectMap.Hashtable)
            try:
                return self.index.reconstruct(int(unit_id))
            finally:
                self.index.set_direct_map_type(faiss.DirectMap.NoMap)

    def add(self, ids: list[int], vectors: np.ndarray) -> None:
        if not ids:
            return
        vectors = normalise(vectors)
        if vectors.shape != (len(ids), self.dim):
            raise ValueError(f"expected {len(ids)} vectors of {self.dim} dims, got {vectors.shape}")
        with self._lock:
            self.index.add_with_ids(vectors, np.asarray(ids, dtype=np.int64))

    def remove(self, ids: list[int]) -> bool:
        """Remove ids; False when the index kind cannot (HNSW): rebuild it instead."""
        if not ids:
            return True
        if self.kind == "hnsw":
            return False
        with self._lock:
            self.index.remove_ids(np.asarray(ids, dtype=np.int64))
        return True

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Scores and ids of the k nearest units, best first (ids -1 past the end)."""
        k = max(1, min(k, self.index.ntotal or 1))
        # One query gains nothing from OpenMP threads, and their spin-waiting costs a lot when
        # the cores are busy (a local model generating): search on this thread alone.
        with self._lock:
            threads = faiss.omp_get_max_threads()
            faiss.omp_set_num_threads(1)
            try:
                scores, ids = self.index.search(normalise(query), k)
            finally:
                faiss.omp_set_num_threads(threads)
        return scores[0], ids[0]

    def save(self, path: Path) -> None:
        private_folder(path.parent)
        tmp = path.with_suffix(".tmp")
        with self._lock:
            faiss.write_index(self.index, str(tmp))
        os.chmod(tmp, 0o600)
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
        wrapped = isinstance(index, faiss.IndexIDMap2)
        inner = faiss.downcast_index(index.index) if wrapped else index
        kind = "hnsw" if isinstance(inner, faiss.IndexHNSW) else "ivf" if isinstance(inner, faiss.IndexIVF) else "flat"
        if wrapped == (kind == "ivf"):  # an IVF saved inside an id map (before 0004) is rebuilt
            return None
        loaded = cls(dim, "flat", config)
        loaded.index, loaded.kind = index, kind
        if kind == "hnsw":
            inner.hnsw.efSearch = loaded.config.ef_search
        elif kind == "ivf":
            inner.nprobe = loaded.config.nprobe
        loaded._inner_ref = inner  # the downcast object must outlive searches
        return loaded


class VectorStore:
    """The per-case indexes of one database, kept in memory once loaded.

    Each index carries the content token of the vectors it holds (``vector_state`` in SQLite, a
    new random token with every change). Its file is ``<case key>.<token>.faiss``, so a file is
    used only for exactly the content it was saved with; files of other tokens are removed, which
    takes a deleted or corrected unit's old vector off the disk as well.

    Locks: callers hold the store's lock; this class's lock is taken inside it, and a CaseIndex's
    own lock inside that (one order everywhere, so no deadlock).
    """

    def __init__(self, folder: Path | None, dim: int = DIM, config: IndexConfig | None = None):
        self.folder = folder  # None: in-memory database, nothing saved
        self.dim = dim
        self.config = config or IndexConfig()
        self._indexes: dict[str, tuple[str, CaseIndex]] = {}  # case -> (token, index)
        self._lock = threading.RLock()

    def path(self, case_id: str, token: str) -> Path | None:
        return None if self.folder is None else self.folder / f"{case_file_key(case_id)}.{token}.faiss"

    def files(self, case_id: str) -> list[Path]:
        """Every file this store has written for the case (index files and unfinished saves)."""
        if self.folder is None or not self.folder.exists():
            return []
        # The key ends in a fixed-length digest, so "<key>." never prefixes another case's files.
        return sorted(self.folder.glob(f"{case_file_key(case_id)}.*"))

    def loaded(self, case_id: str, token: str) -> CaseIndex | None:
        entry = self._indexes.get(case_id)
        return entry[1] if entry and entry[0] == token else None

    def get(self, case_id: str, token: str, fetch) -> CaseIndex:
        """The case's index holding the vectors of ``token``: the loaded one, its file, or one
        built from ``fetch()`` -> (ids, vectors)."""
        with self._lock:
            index = self.loaded(case_id, token) or self._read(case_id, token)
            # Rebuilt when missing or unreadable, or when the case outgrew its index kind.
            if index is None or index.kind != self.config.choose(index.ntotal):
                ids, vectors = fetch()
                index = CaseIndex.build(ids, vectors, self.dim, self.config)
                self._save(case_id, token, index)
            self._indexes[case_id] = (token, index)
            return index

    def apply(
        self,
        case_id: str,
        old: str,
        new: str,
        fetch,
        add: tuple[list[int], np.ndarray] | None = None,
        remove: list[int] | None = None,
    ) -> None:
        """Follow a committed change of the case's vectors from token ``old`` to ``new``: remove
        ``remove`` ids, then add ``add``. Done in place on the index of ``old`` (loaded or on disk)
        when its kind can; otherwise rebuilt from ``fetch()``, which already reads the change."""
        with self._lock:
            index = self.loaded(case_id, old) or self._read(case_id, old)
            self._indexes.pop(case_id, None)
            if index is not None and index.remove(remove or []):
                if add is not None:
                    index.add(*add)
                self._save(case_id, new, index)
                self._indexes[case_id] = (new, index)
            else:
                self._prune(case_id, keep=None)
                self.get(case_id, new, fetch)

    def drop(self, case_id: str) -> None:
        with self._lock:
            self._indexes.pop(case_id, None)
            self._prune(case_id, keep=None)

    def forget(self) -> None:
        """Drop the in-memory copies; the next get() reads and checks the files again."""
        with self._lock:
            self._indexes.clear()

    def _read(self, case_id: str, token: str) -> CaseIndex | None:
        path = self.path(case_id, token)
        return CaseIndex.load(path, self.dim, self.config) if path and path.exists() else None

    def _save(self, case_id: str, token: str, index: CaseIndex) -> None:
        path = self.path(case_id, token)
        if path is not None:
            index.save(path)
        self._prune(case_id, keep=path)

    def _prune(self, case_id: str, keep: Path | None) -> None:
        for path in self.files(case_id):
            if path != keep:
                path.unlink(missing_ok=True)
