"""Streamlit glue shared by the pages: settings, store, models and build jobs, loaded once per
process (st.cache_resource), and the widgets more than one page draws. The session's state (the
active case, the chosen unit and backend, messages, who is typing) is appstate.py's."""

from __future__ import annotations

import html
import json
import re

import streamlit as st

import appstate
from ftamem_core.config import EMBEDDED_MODELS, LLMConfig, Settings, load_settings
from ftamem_core.llm.embeddings import Embedder
from ftamem_core.construction.jobs import JobRegistry
from ftamem_core.governance import auth, consent, privacy
from ftamem_core.display import date
from ftamem_core.llm.base import LLM
from ftamem_core.llm.embedded import forget_prompts
from ftamem_core.llm.factory import make_llm
from ftamem_core.storage.store import Store

SAMPLE_CASE = "data/sample_case.json"

_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")
# GFM turns bare URLs, www. names and e-mail addresses into links after escapes are resolved, so
# escaping cannot stop it: an invisible word joiner breaks the pattern and leaves the text as it reads.
_AUTOLINK = re.compile(r"(?<=:)(?=//)|(?<=\bwww)(?=\.)|(?<=@)(?=[-\w])", re.I)


def plain(text: object) -> str:
    """Text for a place Streamlit renders as Markdown (labels, captions): every Markdown and
    HTML character escaped and autolinks broken, so dialogue or model text cannot become a link,
    image or format."""
    return _MARKDOWN.sub(r"\\\1", _AUTOLINK.sub("\u2060", str(text)))


def chart_text(text: object) -> str:
    """Text for a plotly label or hover: plotly reads <a>, <b>, <br> and the like as markup."""
    return html.escape(str(text), quote=True)


@st.cache_resource
def settings() -> Settings:
    return load_settings()


@st.cache_resource
def store(db_path: str) -> Store:
    return Store(db_path, index_config=settings().storage.index)


def active_store() -> Store:
    return store(settings().storage.db_path)


@st.cache_resource
def purge_expired() -> list[str]:
    """Retention is enforced when the app starts (once per process); returns the cases it could
    not evaluate (privacy.expired)."""
    skipped: list[str] = []
    privacy.purge_expired(active_store(), settings().governance.retention_days, skipped=skipped)
    return skipped


@st.cache_resource
def embedder() -> Embedder:
    return Embedder.from_settings(settings())


@st.cache_resource
def _llm(config_json: str) -> LLM:
    return make_llm(
        LLMConfig.model_validate_json(config_json), settings().storage.model_dir, recorder=active_store().record_call
    )


def llm_config() -> LLMConfig:
    """The backend chosen in the sidebar (the settings' one until changed)."""
    return appstate.chosen_llm() or settings().llm


def llm() -> LLM:
    return _llm(llm_config().model_dump_json())


@st.cache_resource
def jobs() -> JobRegistry:
    registry = JobRegistry()
    # An erased case leaves nothing in this process: its build's events, cached prompt states.
    privacy.on_erase.append(registry.forget)
    privacy.on_erase.append(lambda case_id: forget_prompts())
    return registry


def case_selector() -> None:
    """The sidebar's active-case selector (rendered before the page, so pages never set it directly)."""
    ids = [c["id"] for c in active_store().list_cases()]
    jobs()  # registers the erase hooks before any page can erase
    appstate.settle_case(ids)
    st.selectbox("Active case", ids, key=appstate.CASE, placeholder="choose a case" if ids else "no cases yet")
    appstate.case_to_url()


def active_case() -> str | None:
    """The chosen case, if it still exists."""
    case_id = appstate.case_id()
    if case_id and active_store().case_exists(case_id):
        return case_id
    return None


def unknown_case_notice() -> None:
    """Says that the case the link asked for is not here, and lists the cases that are."""
    asked = appstate.unknown_case()
    if asked is None:
        return
    ids = [c["id"] for c in active_store().list_cases()]
    st.warning(
        plain(
            f"The link asks for case \u201c{asked}\u201d, which is not here (unknown, or erased). "
            "Nothing was opened: choose a case in the sidebar's Active case list."
        )
    )
    if ids:
        st.dataframe([{"case": i} for i in ids], hide_index=True)


def require_case() -> str:
    case_id = active_case()
    if case_id is None:
        if appstate.unknown_case() is not None:
            unknown_case_notice()
            st.stop()
        st.info("Load or choose a case on the Cases page first.")
        st.stop()
    consent_banner(case_id)
    return case_id


def withdrawn(case_id: str) -> dict | None:
    """The withdrawal (who, when, note) if the case's consent is withdrawn now."""
    current = consent.state(active_store(), case_id)
    return current if current["state"] == "withdrawn" else None


def consent_banner(case_id: str) -> None:
    """Every page of a case whose consent is withdrawn says so at the top."""
    current = withdrawn(case_id)
    if current is not None:
        st.error(
            plain(
                f"Consent withdrawn for {case_id} on {date(current['at'])} (recorded by {current['who']}). "
                "No memory is built and no question is answered for this case; what is stored stays until "
                "it is erased on the Privacy page."
            ),
            icon="⛔",
        )


def recorder() -> str | None:
    """The name a consent record carries: the signed-in user or the name typed in the sidebar,
    never a default (consent recorded by nobody in particular is not a record)."""
    name = signed_in() or appstate.typed_name()
    return name or None


def scroll_into_view(anchor: str) -> None:
    """Bring the element with this id into view (a card opened below the table, off-screen on a
    phone). A one-pixel frame runs the few lines (our own script, no data in it); a counter makes each call run again."""
    n = appstate.next_scroll()
    target = json.dumps(anchor)
    st.iframe(
        f"<script>// {n}\nlet tries = 0;\nconst go = () => {{\n"
        f"  const el = window.parent.document.getElementById({target});\n"
        "  if (el) el.scrollIntoView({block: 'start'}); else if (tries++ < 30) setTimeout(go, 100);\n"
        "};\ngo();</script>",
        height=1,
    )


def show_flash() -> None:
    """The messages ``appstate.flash`` and ``appstate.toast`` kept for this run, as text."""
    for kind, message in appstate.take_flashes():
        getattr(st, kind)(plain(message))
    for message in appstate.take_toasts():
        st.toast(plain(message))


def named() -> bool:
    """Whether changes can be attributed: a signed-in user, or a name typed in the sidebar."""
    return bool(signed_in() or appstate.typed_name())


def confirm_dialog(key: str, title: str, lost: str, action, reason: bool = True, label: str = "Confirm") -> None:
    """A confirmation dialog for a destructive action, open while ``appstate.get(key)`` is set
    (a button sets it). It says what will be lost; ``action(reason)`` does it and returns the
    message for the toast. Cancel or the dialog's close button change nothing."""

    def close() -> None:
        appstate.forget(key, appstate.dialog_reason(key))  # the next dialog starts without this one's reason

    @st.dialog(title, on_dismiss=close)
    def dialog() -> None:
        st.text(lost)
        why = st.text_input("Reason (kept in the history)", key=appstate.dialog_reason(key)) if reason else ""
        c1, c2 = st.columns(2)
        if c1.button(label, type="primary", disabled=reason and not why.strip(), key=f"{key}-yes"):
            try:
                message = action(why)
            except Exception as e:  # refused (a conflict, a missing unit): said in the dialog
                st.error(plain(str(e).splitlines()[0] if str(e) else e.__class__.__name__))
                return
            close()
            appstate.toast(message)
            st.rerun()
        if c2.button("Cancel", key=f"{key}-no"):
            close()
            st.rerun()

    if appstate.get(key):
        dialog()


NAME_COOKIE = "ftamem_who"


def remembered_name() -> None:
    """A name typed earlier in this browser session comes back after a reload (read from the
    session cookie ``remember_name`` wrote; the URL never carries it: links get shared)."""
    if not appstate.has(appstate.WHO):
        appstate.remember_typed_name(_cookie_name())


def _cookie_name() -> str:
    from urllib.parse import unquote

    try:
        value = st.context.cookies.get(NAME_COOKIE)
    except Exception:  # no browser behind this run (bare mode): nothing remembered
        return ""
    return unquote(value).strip() if isinstance(value, str) else ""  # AppTest's context is a mock


def remember_name() -> None:
    """Keep the typed name in a session cookie (gone when the browser closes), written by a
    one-pixel frame when it changes. The name is data: JSON-encoded, every "<" escaped."""
    name = appstate.typed_name()
    if name == _cookie_name() or appstate.name_written(name):
        return
    quoted = json.dumps(name).replace("<", "\\u003c")  # no "</script>" or "<!--" inside the script
    expiry = "" if name else "; max-age=0"
    st.iframe(
        f"<script>window.parent.document.cookie = {json.dumps(NAME_COOKIE)} + '=' + "
        f"encodeURIComponent({quoted}) + '; path=/; SameSite=Strict{expiry}';</script>",
        height=1,
    )


def who() -> str:
    """The name for the edit history and the access log: the signed-in user where there is one."""
    return signed_in() or appstate.raw_name() or "counselor"


def signed_in() -> str | None:
    """Who is signed in: with OIDC the provider's identity (st.user's e-mail, else name), else a
    configured user's name; None when nobody is."""
    s = settings()
    if s.governance.auth.oidc:
        if not st.user.is_logged_in:
            return None
        return str(st.user.get("email") or st.user.get("name") or "signed-in user")
    user = appstate.user()
    return user if user in s.governance.auth.users else None


@st.cache_resource
def attempts() -> auth.Attempts:
    """Failed sign-ins in this process (every session's), for the lockout."""
    s = settings()
    return auth.Attempts(s.governance.auth.max_failures, s.governance.auth.lockout_minutes)


def _request() -> tuple[str | None, str]:
    """The Host header of this session's request and the client's address ("unknown" if not told)."""
    headers = st.context.headers or {}
    return headers.get("Host"), str(getattr(st.context, "ip_address", None) or "unknown")


def sign_in() -> str | None:
    """The signed-in user; when sign-in is required and nobody is signed in, the sign-in form
    and nothing else (the script stops here)."""
    s = settings()
    address = st.get_option("server.address") or ""
    host, client = _request()
    if not auth.host_allowed(host, address, s.governance.auth.allowed_hosts):
        st.error(
            plain(
                f"This app does not answer to {host!r}: open it at the address it was started on, or add the "
                "name to the setting governance.auth.allowed_hosts."
            )
        )
        st.stop()
    if not auth.sign_in_required(address, s.governance.auth.users, s.governance.auth.oidc):
        return None
    problem = auth.start_problem(address, s.governance.auth.users, s.governance.auth.oidc)
    if problem:  # scripts/app_server.py refuses to start like this; say so if started otherwise
        st.error(plain(f"Refusing to serve: {problem}."))
        st.stop()
    user = signed_in()
    if user is not None:
        return user
    if s.governance.auth.oidc:
        st.button("Sign in", on_click=st.login)
        st.stop()
    st.title("FTA-Mem Studio")
    with st.form("sign-in"):
        name = st.text_input("Name")
        password = st.text_input("Password", type="password")
        if st.form_submit_button("Sign in"):
            wait = attempts().locked(name, client)
            if wait:  # the password is not even checked
                st.error(f"Too many failed sign-ins: try again in {max(1, round(wait / 60))} minute(s).")
            elif auth.check_user(s.governance.auth.users, name, password):
                attempts().succeeded(name, client)
                appstate.sign_in_as(name)
                st.rerun()
            else:
                attempts().failed(name, client)
                st.error("Wrong name or password.")
    st.stop()


def access(case_id: str, action: str, detail: str = "") -> None:
    """Record who did what to a case; a page view is recorded once per session and page."""
    if action == "view" and not appstate.first_view(case_id, detail):
        return
    auth.log_access(active_store(), case_id, who(), action, detail)


def backends() -> dict[str, LLMConfig]:
    """The backends the sidebar offers: the settings' own first, then the named ones, then the
    embedded models."""
    s = settings()
    offered = {f"settings: {s.llm.backend} · {s.llm.model}": s.llm, **s.app.backends}
    for name in EMBEDDED_MODELS:
        offered.setdefault(
            f"embedded · {name}", s.llm.model_copy(update={"backend": "embedded", "model": name, "base_url": None})
        )
    return offered


def typed_backend(base_url: str, model: str) -> LLMConfig:
    """A server typed into the page: never given a configured key, its error bodies not shown."""
    return LLMConfig(backend="openai", base_url=base_url, model=model, api_key="EMPTY", trusted=False)
