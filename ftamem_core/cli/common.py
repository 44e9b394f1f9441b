"""What the commands share: the store they open, who runs them, the access log, the checks on a case."""

from __future__ import annotations

from ..config import Settings
from ..storage.store import Store, StoreError


def open_store(settings: Settings) -> Store:
    return Store(settings.storage.db_path, index_config=settings.storage.index)


def who_runs(args) -> str:
    import getpass

    return getattr(args, "by", None) or getpass.getuser()


# Commands that read or change one case's data, logged as access (who: the user running them).
_ACCESS = {
    "sessions": "view",
    "turns": "view",
    "units": "view",
    "links": "view",
    "memory": "view",
    "cost": "view",
    "build": "build",
    "ask": "ask",
    "consent": "consent",
    "export": "export",
    "delete-unit": "change",
    "delete-link": "change",
}


def log_access(args, settings: Settings) -> None:
    from ..governance.auth import log_access as record

    action = _ACCESS.get(args.command)
    if action is not None:
        record(open_store(settings), args.case, who_runs(args), action, f"command line: {args.command}")


def require_case(store: Store, case_id: str) -> None:
    if not store.case_exists(case_id):
        raise StoreError(f"no case {case_id!r} (see 'ftamem cases')")


def refuse_withdrawn(case_ids: list[str], settings: Settings) -> None:
    """A benchmark's dialogues are public research data, sent to the model without a store of
    their own; a case whose consent the store records as withdrawn is not (one line, nothing sent)."""
    from pathlib import Path

    from ..governance import consent

    if not Path(settings.storage.db_path).exists():
        return
    store = open_store(settings)
    for case_id in case_ids:
        if store.case_exists(case_id) and consent.state(store, case_id)["state"] == "withdrawn":
            consent.require(store, case_id, "be annotated")
