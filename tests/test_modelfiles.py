import hashlib

import pytest

from ftamem_core.llm import modelfiles
from ftamem_core.llm.modelfiles import MODELS, ModelFileError, ensure_model, resolve_model

from conftest import MODEL_DIR


def test_real_small_model_is_joined_and_verified():
    path = ensure_model("qwen2.5-0.5b", MODEL_DIR)
    assert path.stat().st_size == MODELS["qwen2.5-0.5b"].size
    assert path.with_suffix(".verified").exists()
    assert resolve_model("qwen2.5-0.5b", MODEL_DIR) == path


def _fake_spec(tmp_path, content: bytes, sha: str):
    folder = tmp_path / "pkg"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "part01.bin").write_bytes(content)
    return modelfiles.ModelSpec("fake", "fakepart", 1, len(content), sha, "fake.gguf", "fake-part", "1"), folder


def test_wrong_hash_leaves_no_model(tmp_path, monkeypatch):
    spec, folder = _fake_spec(tmp_path, b"not the model", "0" * 64)
    monkeypatch.setitem(MODELS, "fake", spec)
    monkeypatch.setattr(modelfiles, "chunk_files", lambda s: sorted((folder / "data").iterdir()))
    with pytest.raises(ModelFileError, match="expected 13 bytes with sha256 0000"):
        ensure_model("fake", tmp_path / "models")
    assert list((tmp_path / "models").iterdir()) == []


def test_good_join_and_missing_packages(tmp_path, monkeypatch):
    content = b"GGUF fake weights"
    spec, folder = _fake_spec(tmp_path, content, hashlib.sha256(content).hexdigest())
    monkeypatch.setitem(MODELS, "fake", spec)
    with pytest.raises(ModelFileError, match="fake-part1==1 is not installed"):
        ensure_model("fake", tmp_path / "models")
    monkeypatch.setattr(modelfiles, "chunk_files", lambda s: sorted((folder / "data").iterdir()))
    assert ensure_model("fake", tmp_path / "models").read_bytes() == content
    with pytest.raises(ModelFileError, match="no embedded model 'gpt-9'"):
        resolve_model("gpt-9", tmp_path)
