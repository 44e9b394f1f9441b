import numpy as np

from ftamem_core.llm.embeddings import Embedder


def test_packaged_minilm_encodes_offline():
    e = Embedder()
    v = e.encode(
        [
            "Maya works night shifts at the hospital.",
            "Maya is a nurse on the night shift.",
            "The stock market fell sharply today.",
        ]
    )
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2
    assert e.encode([]).shape == (0, 384)
    assert e._model() is Embedder()._model()  # loaded once per process


def test_settings_choose_the_model_and_batch_size():
    from ftamem_core.config import load_settings

    e = Embedder.from_settings(
        load_settings(environ={}, embedding={"embedding_model": "/models/other", "embedding_batch_size": 8})
    )
    assert (e.model_path, e.batch_size) == ("/models/other", 8)
    assert Embedder.from_settings(load_settings(environ={})).model_path == Embedder().model_path
