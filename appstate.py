"""The app's session and URL state in one place: every st.session_state key the app reads or writes
is named here, and only this module touches st.session_state (tests/test_imports.py checks app.py,
ui.py and the pages). A widget's key is the name of its value in the session, so widget keys are
here too. Cached resources and widgets live in ui.py; this module imports neither it nor the core."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

# The active case and the unit the Memory page opens; the URL carries them as ?case= and ?unit=.
CASE = "case_id"  # the sidebar's Active case selector
NEXT_CASE = "_next_case"  # a case a page chose, taken by the selector on the next run
UNKNOWN_CASE = "_unknown_case"  # a case a link asked for that is not here
UNIT = "unit_id"
SCROLL_TO_CARD = "_scroll_to_card"
SCROLLS = "_scrolls"  # a counter: each scroll's frame differs, so it runs again

# Messages for the run that follows, and text boxes to empty on it.
FLASH = "_flash"
TOAST = "_toast"
CLEAR = "_clear"

# Who is at the keyboard: the name typed in the sidebar, the signed-in user, the views logged.
WHO = "who"
NAME_KEPT = "_name_kept"  # the name last written to the session cookie
USER = "user"
VIEWED = "_viewed"

# The backend: the one in use, and the sidebar's widgets that choose it.
LLM_CONFIG = "llm_config"
BACKEND_CHOICE = "backend_choice"
BASE_URL = "base_url"
SERVER_MODEL = "server_model"

# Ask
TRACE = "trace"  # the last answer, with everything it was made from
ASK_QUESTION = "ask_question"
ASK_STARTER = "ask_starter"

# Audit
AUDIT_SCOPE = "audit_scope"
AUDIT_SEED = "audit_seed"
AUDIT_UNITS = "audit_units"
AUDIT_PAIRS = "audit_pairs"
AUDIT_ROUND = "audit_round"
AUDIT_ADVANCE = "_audit_advance"  # after a score, the next unscored item opens

# Memory
MEMORY_ROWS = "_memory_rows"  # the table's selection on the last run
MEMORY_SEARCH = "_memory_search"  # the search text on the last run
CONFLICT = "conflict"  # a save refused because the unit changed since this tab read it

# Cases
UPLOAD = "upload"
ON_EXISTS = "on_exists"
TYPED_EDITOR = "typed_editor"
NEW_SESSION_TIME = "new_session_time"
PASTED = "pasted"

# Build and Graph: a note and reasons emptied after a save (clear_later)
BUILD_CONSENT_NOTE = "build_consent_note"
ADD_LINK_REASON = "add-link-reason"
LINK_REASON = "link-reason"

# Privacy
CONSENT_NOTE = "consent_note"
EXPORT = "export"
ERASE_CONFIRM = "erase_confirm"
ERASE_REASON = "erase_reason"

# Confirmation dialogs (ui.confirm_dialog): open while the key is set, to what the button was pressed for.
CONFIRM_REPLACE = "confirm-replace"
CONFIRM_REBUILD = "confirm-rebuild"
CONFIRM_GRAPH_DELETE = "confirm-graph-delete"
CONFIRM_LINK_DELETE = "confirm-link-delete"
CONFIRM_DISPUTE = "confirm-dispute"
CONFIRM_ARCHIVE = "confirm-archive"
CONFIRM_DELETE = "confirm-delete"
CONFIRM_SESSION_DELETE = "confirm-session-delete"


def audit_item(round_id: int) -> str:
    """The Audit page's item selector for a round."""
    return f"audit_item_{round_id}"


def dialog_reason(key: str) -> str:
    """The reason box of the confirmation dialog opened by ``key``."""
    return f"{key}-reason"


# Plain access, for the keys above.


def get(key: str, default: Any = None) -> Any:
    return st.session_state.get(key, default)


def put(key: str, value: Any) -> None:
    st.session_state[key] = value


def pop(key: str, default: Any = None) -> Any:
    return st.session_state.pop(key, default)


def has(key: str) -> bool:
    return key in st.session_state


def setter(key: str, value: Any) -> Callable[[], None]:
    """A callback for a button: sets ``key`` to ``value`` (opens a confirmation dialog)."""
    return lambda: put(key, value)


def forget(*keys: str) -> None:
    for key in keys:
        st.session_state.pop(key, None)


# The active case.


def choose_case(case_id: str) -> None:
    """Make a case active from a page; the sidebar's selector picks it up on the next run."""
    st.session_state[NEXT_CASE] = case_id


def case_id() -> str | None:
    """The case chosen in the selector (it may have been erased since: ui.active_case checks)."""
    return st.session_state.get(CASE)


def unknown_case() -> str | None:
    """The case a link asked for that is not here, until a case is chosen."""
    return st.session_state.get(UNKNOWN_CASE)


def settle_case(ids: list[str]) -> None:
    """Before the selector is drawn: the case a page chose, else the one the URL asks for (a reload
    or a shared link), else the one chosen before, else the first. An erased case's answer goes."""
    trace = st.session_state.get(TRACE)
    if trace is not None and trace.case_id not in ids:  # erased in another tab or process
        del st.session_state[TRACE]
    asked = st.query_params.get("case")
    if NEXT_CASE in st.session_state:
        st.session_state[CASE] = st.session_state.pop(NEXT_CASE)
    elif CASE not in st.session_state and asked is not None:
        # A reload or a shared link. A case that is not here (unknown, erased) opens nothing: the
        # page says so and offers the list, rather than opening another case under that link.
        st.session_state[CASE] = asked if asked in ids else None
        if asked not in ids:
            st.session_state[UNKNOWN_CASE] = asked
    if st.session_state.get(CASE) is not None:
        st.session_state.pop(UNKNOWN_CASE, None)  # a case was chosen since
    if st.session_state.get(CASE) not in ids and UNKNOWN_CASE not in st.session_state:
        st.session_state[CASE] = ids[0] if ids else None


def case_to_url() -> None:
    """After the selector is drawn: the URL names the chosen case (a link asked for stays as it was
    asked for until a case is chosen)."""
    if UNKNOWN_CASE in st.session_state:
        return
    if st.session_state[CASE] is None:
        st.query_params.pop("case", None)
    elif st.query_params.get("case") != st.session_state[CASE]:
        if st.query_params.get("case") is not None:
            st.query_params.pop("unit", None)  # another client: the unit was theirs
        st.query_params["case"] = st.session_state[CASE]


# The unit the Memory page opens.


def open_unit(unit_id: int) -> None:
    """Open a unit of the active case on the Memory page (its id goes in the URL too)."""
    st.session_state[UNIT] = unit_id
    st.session_state[SCROLL_TO_CARD] = True  # it lands in view, not below the fold
    case = st.session_state.get(CASE)
    st.switch_page("pages/memory.py", query_params={"case": case, "unit": str(unit_id)} if case else None)


def asked_unit() -> object:
    """The unit the URL or another page asked for, as asked (None if none)."""
    return st.session_state.get(UNIT) or st.query_params.get("unit")


def chosen_unit() -> int | None:
    """The unit the URL or another page asked the Memory page to open."""
    value = asked_unit()
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def show_unit(unit_id: int | None, scroll: bool = False) -> None:
    """The unit the Memory page shows (None: none chosen); ``scroll`` brings its card into view."""
    if unit_id is None:
        st.session_state.pop(UNIT, None)
        st.query_params.pop("unit", None)
        return
    st.session_state[UNIT] = unit_id
    if scroll:
        st.session_state[SCROLL_TO_CARD] = True


def unit_to_url(unit_id: int) -> None:
    st.session_state[UNIT] = unit_id
    st.query_params["unit"] = str(unit_id)


def take_scroll() -> bool:
    """Whether the card should be scrolled into view on this run (asked once)."""
    return st.session_state.pop(SCROLL_TO_CARD, False)


def next_scroll() -> int:
    n = st.session_state[SCROLLS] = st.session_state.get(SCROLLS, 0) + 1
    return n


def edit_form(unit_id: int) -> str:
    """The Memory page's edit form for a unit: a new name after "Load the saved version"."""
    return f"edit-{unit_id}-{st.session_state.get(f'form-nonce-{unit_id}', 0)}"


def renew_form(unit_id: int) -> None:
    st.session_state[f"form-nonce-{unit_id}"] = st.session_state.get(f"form-nonce-{unit_id}", 0) + 1


def form_drawn(form: str) -> bool:
    """Whether the form's widgets exist (its fact box has a value in the session)."""
    return f"{form}-fact" in st.session_state


def seen_version(form: str) -> int:
    """The unit's version when the form's widgets were created: the one a save expects."""
    return st.session_state[f"seen-{form}"]


def set_seen_version(form: str, version: int) -> None:
    st.session_state[f"seen-{form}"] = version


# Messages for the next run and boxes to empty.


def flash(kind: str, message: object) -> None:
    """A message from a callback, shown by the page on the run that follows (ui.show_flash; as
    text: it may carry a case id, a file name or an error quoting the data)."""
    st.session_state.setdefault(FLASH, []).append((kind, str(message)))


def toast(message: object) -> None:
    """A confirmation shown where the user is looking, on the run that follows (as text)."""
    st.session_state.setdefault(TOAST, []).append(str(message))


def take_flashes() -> list[tuple[str, str]]:
    return st.session_state.pop(FLASH, [])


def take_toasts() -> list[str]:
    return st.session_state.pop(TOAST, [])


def clear_later(*keys: str) -> None:
    """Empty these text boxes on the next run (the reason just saved must not stay for the next
    change). Removing a box's key is not enough: the browser keeps what was typed and sends it back;
    a value set before the box is drawn reaches the browser, but a box drawn in this run cannot be set."""
    st.session_state.setdefault(CLEAR, set()).update(keys)


def clear_pending() -> None:
    """Run before the page draws its widgets (app.py): the boxes ``clear_later`` named are emptied."""
    for key in st.session_state.pop(CLEAR, set()):
        st.session_state[key] = ""


# Who is at the keyboard.


def typed_name() -> str:
    """The name typed in the sidebar, stripped ("" if none)."""
    return (st.session_state.get(WHO) or "").strip()


def raw_name() -> str | None:
    """The name as typed (the edit history's fallback keeps it as it is)."""
    return st.session_state.get(WHO)


def remember_typed_name(name: str) -> None:
    """A name read from the session cookie (ui.remembered_name asks only when none was typed)."""
    if name:
        st.session_state[WHO] = name[:200]


def name_written(name: str) -> bool:
    """Whether this name was the last written to the cookie; else it is noted as written."""
    if name == st.session_state.get(NAME_KEPT):
        return True
    st.session_state[NAME_KEPT] = name
    return False


def user() -> str | None:
    """The configured user signed in by the form (ui.signed_in checks it is still configured)."""
    return st.session_state.get(USER)


def sign_in_as(name: str) -> None:
    st.session_state[USER] = name


def sign_out() -> None:
    del st.session_state[USER]


def first_view(case_id: str, detail: str) -> bool:
    """Whether this session views this page of this case for the first time (noted if so)."""
    seen = st.session_state.setdefault(VIEWED, set())
    if (case_id, detail) in seen:
        return False
    seen.add((case_id, detail))
    return True


# The backend.


def chosen_llm() -> Any:
    """The backend chosen in the sidebar (an LLMConfig), None until one is."""
    return st.session_state.get(LLM_CONFIG)


def choose_llm(config: Any) -> None:
    st.session_state[LLM_CONFIG] = config
