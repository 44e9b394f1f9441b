import os
from pathlib import Path

import numpy as np
import pytest

from ftamem_core.models import Case, CaseDocument, Evidence, FactAnchor, FTAUnit, Session, SessionDocument, Turn
from ftamem_core.storage.store import Store

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("FTAMEM_SHARED_DATA", ROOT.parent / "shared" / "data"))
LOCOMO = SHARED_DATA / "locomo" / "locomo10.json"
ESMEMEVAL = SHARED_DATA / "es-memeval-format" / "sample_case.json"
SAMPLE = ROOT / "data" / "sample_case.json"
MODEL_DIR = ROOT / ".cache" / "models"


@pytest.fixture
def store():
    s = Store(":memory:")
    yield s
    s.close()


@pytest.fixture
def disk_store(tmp_path):
    s = Store(tmp_path / "memory.db")
    yield s
    s.close()


def make_doc(case_id: str = "c1", sessions: int = 2, turns: int = 3) -> CaseDocument:
    return CaseDocument(
        case=Case(id=case_id, name=f"Case {case_id}"),
        sessions=[
            SessionDocument(
                session=Session(source_id=f"s{i}", time=f"2025-03-0{i + 1}", time_text=f"March {i + 1}"),
                turns=[
                    Turn(
                        role="user" if j % 2 == 0 else "assistant",
                        speaker="A" if j % 2 == 0 else "B",
                        text=f"{case_id} session {i} turn {j}",
                        original_id=f"s{i}:{j}",
                    )
                    for j in range(turns)
                ],
            )
            for i in range(sessions)
        ],
    )


def make_unit(case_id: str, text: str, start: int = 0, end: int = 1, status: str = "final", session_id=None) -> FTAUnit:
    return FTAUnit(
        case_id=case_id,
        fact=FactAnchor(text=text, content_type="event", participants=["user"]),
        evidence=Evidence(session_id=session_id, start=start, end=end),
        construction_status=status,
    )


def consented(store: Store, *case_ids: str) -> None:
    """Record consent for the cases a test asks questions of (inference.ask refuses without it)."""
    from ftamem_core.governance import consent

    consent.record(store, list(case_ids), "granted", "test", "test case")


def random_vectors(n: int, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(command: list[str], health_url: str, timeout: float, **popen):
    """Start a server on loopback and wait until ``health_url`` answers; yields the process and
    stops it afterwards (a generator for module fixtures)."""
    import subprocess
    import time
    import urllib.request

    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **popen)
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"{command[1:3]} exited at start")
        try:
            urllib.request.urlopen(health_url, timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail(f"{command[1:3]} did not start within {timeout:.0f} s")
    yield proc
    proc.terminate()
    proc.wait(timeout=30)


def serve_app(port: int, env: dict, timeout: float = 60):
    """The app (scripts/app_server.py, headless) on 127.0.0.1:``port`` with ``env``, as ``serve``."""
    import sys

    command = [sys.executable, "scripts/app_server.py", "--server.address", "127.0.0.1"]
    command += ["--server.port", str(port), "--server.headless", "true"]
    yield from serve(command, f"http://127.0.0.1:{port}/_stcore/health", timeout, cwd=ROOT, env=env)
