"""Consent: a case's turns and memory go to a language model only while the person it is about
has consented: to build its memory (construction/builder.py) and to answer a question of it (inference.ask,
the evaluation harness).

States: ``not_asked`` (nothing recorded: the default for anything ingested), ``granted`` and
``withdrawn``. Every change is a row of ``consent_log`` with who, when and a note; the latest row
is the state. Builds check it before they start and between fragments (construction/builder.py), so a
withdrawal stops a running build, from any process, within one LLM call.
"""

from __future__ import annotations

from typing import Literal

from ..storage.store import NotFound, Store, StoreError

State = Literal["not_asked", "granted", "withdrawn"]
ACTIONS: dict[str, State] = {"grant": "granted", "withdraw": "withdrawn"}


class ConsentRequired(StoreError):
    """A build of, or a question to, a case without granted consent."""


class ConsentWithdrawn(StoreError):
    """A question asked of a case whose consent is withdrawn."""


def refuse_withdrawn(store: Store, case_id: str) -> None:
    """Raise ConsentWithdrawn if the case's consent is withdrawn (its memory is not used)."""
    if state(store, case_id)["state"] == "withdrawn":
        raise ConsentWithdrawn(f"case {case_id!r}: consent is withdrawn, so its memory answers no question")


def log(store: Store, case_id: str) -> list[dict]:
    """Every recorded change, oldest first."""
    return store.consent_log(case_id)


def state(store: Store, case_id: str) -> dict:
    """The current state with who recorded it, when and the note."""
    return store.latest_consent(case_id) or {"state": "not_asked", "who": "", "note": "", "at": None}


def granted(store: Store, case_id: str) -> bool:
    return state(store, case_id)["state"] == "granted"


def record(store: Store, case_ids: list[str] | str, new_state: State, who: str, note: str = "") -> None:
    """Record a change for one or more cases in one transaction (``who`` is required)."""
    if new_state not in ("granted", "withdrawn"):
        raise StoreError(f"consent can be granted or withdrawn, not {new_state!r}")
    if not who.strip():
        raise StoreError("say who records the consent (--by NAME)")
    ids = [case_ids] if isinstance(case_ids, str) else list(case_ids)
    with store.transaction():
        for case_id in ids:
            if not store.case_exists(case_id):
                raise NotFound(f"no case {case_id!r}")
            store.add_consent(case_id, new_state, who.strip(), note)


def require(store: Store, case_id: str, purpose: str = "build memory") -> None:
    """Raise ConsentRequired (one line saying how to grant it) unless consent is granted."""
    current = state(store, case_id)["state"]
    if current != "granted":
        raise ConsentRequired(
            f"case {case_id!r} has no consent to {purpose} (consent {current}); record it with "
            f"'ftamem consent {case_id} grant --by NAME' or on the Privacy page"
        )


def public_dataset(store: Store, case_id: str, who: str) -> None:
    """A benchmark's case (public research data) is consented when nothing is recorded; a
    withdrawal recorded for it stands (ConsentRequired)."""
    current = state(store, case_id)["state"]
    if current == "not_asked":
        record(store, case_id, "granted", who, "public research dataset")
    elif current != "granted":
        require(store, case_id, "be evaluated")
