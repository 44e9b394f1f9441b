"""Ingest a dialogue file into the store: load and check it whole, then write it in one transaction."""

from __future__ import annotations

import re
from pathlib import Path

from .loaders import Format, LoadError, load_file
from .loaders import transcript
from .loaders.common import Reader, parse_time
from .models import Session, SessionDocument, Turn
from .governance.privacy import check_retention
from .governance import consent
from .storage.cases import OnExists
from .storage.store import Store


def ingest_file(
    store: Store,
    path: str | Path,
    fmt: Format = "auto",
    on_exists: OnExists = "refuse",
    only: list[str] | None = None,
    max_turn_chars: int = 100_000,
    consent_by: str | None = None,
    consent_note: str = "",
    retention_days: int | None = None,
    max_mb: int = 50,
    who: str = "",
) -> dict[str, str]:
    """Returns {case id: "added" | "replaced" | "skipped"}; raises LoadError or StoreError.

    With ``consent_by``, consent is recorded as granted by that person for every case written
    (public research data); with ``retention_days``, those cases are erased that many days on.
    ``who`` is recorded in the access log of a case this replaces (which keeps its logs)."""
    docs = load_file(path, fmt, max_turn_chars=max_turn_chars, max_mb=max_mb)
    if only:
        missing = set(only) - {d.case.id for d in docs}
        if missing:
            raise LoadError(path, "", f"no case {', '.join(sorted(missing))} in the file")
        docs = [d for d in docs if d.case.id in only]
    if retention_days is not None:
        check_retention(retention_days)
        docs = [
            d.model_copy(update={"case": d.case.model_copy(update={"retention_days": retention_days})}) for d in docs
        ]
    with store.transaction():  # the cases and their consent, or nothing
        outcome = store.ingest(docs, on_exists=on_exists, who=who, source=Path(path).name)
        written = [c for c, what in outcome.items() if what != "skipped"]
        if consent_by is not None and written:
            consent.record(store, written, "granted", consent_by, consent_note)
    return outcome


def upload_name(name: str) -> str:
    """A file name sent by a browser as one plain name inside a temporary folder ('..', '/x' and
    the like cannot leave it or name a folder); its stem still names a transcript's case."""
    cleaned = re.sub(r"[^\w.-]+", "_", Path(name).name).strip("._")[:100]
    return cleaned or "upload"


def parse_pasted_session(text: str, session_time: str = "", max_turn_chars: int = 100_000) -> SessionDocument:
    """A session typed or pasted as ``Speaker: text`` lines (the transcript format without headers)."""
    body = f"## Session {session_time}\n{text}"
    (doc,) = transcript.load(Reader(Path("pasted session"), max_turn_chars), Path("pasted"), body)
    return doc.sessions[0]


def session_from_rows(rows: list[dict], session_time: str = "", max_turn_chars: int = 100_000) -> SessionDocument:
    """A session typed turn by turn: rows of role, speaker, timestamp, text (empty rows ignored)."""
    turns = []
    for n, row in enumerate(rows, start=1):
        text = str(row.get("text") or "").strip()
        if not text:
            continue
        if len(text) > max_turn_chars:
            raise LoadError(
                "typed session", f"turn {n}", f"turn text is {len(text):,} characters; the limit is {max_turn_chars:,}"
            )
        role = row.get("role") or "user"
        if role not in ("user", "assistant", "other"):
            raise LoadError("typed session", f"turn {n}", f"role must be user, assistant or other, not {role!r}")
        turns.append(
            Turn(
                role=role,
                speaker=str(row.get("speaker") or ""),
                text=text,
                timestamp=parse_time(str(row.get("timestamp") or "")) or parse_time(session_time),
            )
        )
    if not turns:
        raise LoadError("typed session", "", "the session has no turns")
    return SessionDocument(
        session=Session(source_id="typed", time=parse_time(session_time), time_text=session_time), turns=turns
    )
