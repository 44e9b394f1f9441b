"""Ingest a dialogue file into the store: load and check it whole, then write it in one transaction."""

from __future__ import annotations

from pathlib import Path

from .loaders import Format, LoadError, load_file
from .store import OnExists, Store


def ingest_file(store: Store, path: str | Path, fmt: Format = "auto", on_exists: OnExists = "refuse",
                only: list[str] | None = None, max_turn_chars: int = 100_000) -> dict[str, str]:
    """Returns {case id: "added" | "replaced" | "skipped"}; raises LoadError or StoreError."""
    docs = load_file(path, fmt, max_turn_chars=max_turn_chars)
    if only:
        missing = set(only) - {d.case.id for d in docs}
        if missing:
            raise LoadError(path, "", f"no case {', '.join(sorted(missing))} in the file")
        docs = [d for d in docs if d.case.id in only]
    return store.ingest(docs, on_exists=on_exists)
