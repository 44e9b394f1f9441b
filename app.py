"""FTA-Mem Studio: navigation and the shared sidebar. Pages live in pages/ and stay thin."""

import streamlit as st

import appstate
import ui
from ftamem_core.governance import privacy
from ftamem_core.config import LLMConfig
from ftamem_core.display import choice, health_lines, settings_rows
from ftamem_core.llm.base import health_check

st.set_page_config(page_title="FTA-Mem Studio", layout="wide")
if skipped := ui.purge_expired():
    st.warning(ui.plain(privacy.skipped_message(skipped)))
user = ui.sign_in()  # stops here with the sign-in form when it is required

page = st.navigation(
    {
        "Memory": [
            st.Page("pages/cases.py", title="Cases", default=True),
            st.Page("pages/build.py", title="Build"),
            st.Page("pages/memory.py", title="Memory"),
            st.Page("pages/graph.py", title="Graph"),
            st.Page("pages/ask.py", title="Ask"),
            st.Page("pages/privacy.py", title="Privacy"),
        ],
        "Research": [
            st.Page("pages/audit.py", title="Audit"),
            st.Page("pages/evaluate.py", title="Evaluate"),
        ],
    }
)


def use_backend() -> None:
    choice = appstate.get(appstate.BACKEND_CHOICE)
    if choice == CUSTOM:
        config = ui.typed_backend(appstate.get(appstate.BASE_URL), appstate.get(appstate.SERVER_MODEL))
    else:
        config = ui.backends()[choice]
    appstate.choose_llm(LLMConfig.model_validate(config.model_dump()))


CUSTOM = "a server I type in"

with st.sidebar:
    s = ui.settings()
    ui.case_selector()
    if user:
        st.text(f"Signed in as {user}")
        if s.governance.auth.oidc:
            st.button("Sign out", on_click=st.logout)
        elif st.button("Sign out"):
            appstate.sign_out()
            st.rerun()
    else:
        ui.remembered_name()  # kept for the browser session, across reloads (a session cookie)
        st.text_input("Your name (for the edit history)", key=appstate.WHO, placeholder="type your name")
        ui.remember_name()
    with st.expander("Backend", expanded=False):
        options = list(ui.backends()) + ([CUSTOM] if s.app.allow_custom_backend else [])
        st.selectbox("LLM backend", options, key=appstate.BACKEND_CHOICE)
        if appstate.get(appstate.BACKEND_CHOICE) == CUSTOM:
            st.text_input("Server URL", key=appstate.BASE_URL, value="http://127.0.0.1:8000/v1")
            st.text_input("Model name", key=appstate.SERVER_MODEL, value="Qwen/Qwen3-8B")
            st.caption("A typed server gets no configured API key, and its error messages are not shown.")
        st.button("Use this backend", on_click=use_backend)
        if st.button("Health check"):
            with st.spinner("one structured call…"):
                try:
                    for line in health_lines(health_check(ui.llm())):
                        st.text(line)
                except Exception as e:  # any backend failure is shown, not raised
                    st.error(ui.plain(str(e).splitlines()[0] if str(e) else e.__class__.__name__))
    cfg = ui.llm_config()
    st.caption(ui.plain(f"Backend: {cfg.backend} · {cfg.model}" + (f" · {cfg.base_url}" if cfg.base_url else "")))
    st.caption(ui.plain(f"Profile: {choice('profile', s.profile)}"))
    with st.expander("Settings in force"):
        # The backend in force is the one chosen here; keys and sign-in stay out of sight.
        in_force = s.model_copy(update={"llm": cfg})
        st.dataframe(
            settings_rows(in_force, hide={"app.backends", "governance.auth", "llm.api_key"}),
            hide_index=True,
            # The sidebar is narrow: the name stays in view while the row is scrolled to its value and meaning.
            column_config={
                "setting": st.column_config.TextColumn(width=135, pinned=True),
                "value": st.column_config.TextColumn(width=190),
                "what it does": st.column_config.TextColumn(width="large"),
            },
        )

appstate.clear_pending()  # before the page's widgets are drawn
page.run()
