"""FTA-Mem Studio: navigation and the shared sidebar. Pages live in pages/ and stay thin."""

import streamlit as st

import ui
from ftamem_core.config import EMBEDDED_MODELS, LLMConfig
from ftamem_core.llm import health_check

st.set_page_config(page_title="FTA-Mem Studio", layout="wide")

page = st.navigation({
    "Memory": [
        st.Page("pages/cases.py", title="Cases", default=True),
        st.Page("pages/build.py", title="Build"),
        st.Page("pages/memory.py", title="Memory"),
        st.Page("pages/graph.py", title="Graph"),
        st.Page("pages/ask.py", title="Ask"),
        st.Page("pages/privacy.py", title="Privacy"),
    ],
    # Audit and Evaluate pages come with their issues.
})
ui.purge_expired()


def use_backend() -> None:
    current = ui.llm_config()
    if st.session_state["backend"] == "embedded":
        config = current.model_copy(update={"backend": "embedded", "model": st.session_state["embedded_model"],
                                            "base_url": None})
    else:
        config = current.model_copy(update={"backend": "openai", "base_url": st.session_state["base_url"],
                                            "model": st.session_state["server_model"]})
    st.session_state["llm_config"] = LLMConfig.model_validate(config.model_dump())


with st.sidebar:
    s = ui.settings()
    ui.case_selector()
    st.text_input("Your name (for the edit history)", key="who", placeholder="counselor")
    with st.expander("Backend", expanded=False):
        cfg = ui.llm_config()
        st.radio("LLM", ["embedded", "openai"], key="backend", horizontal=True,
                 index=1 if cfg.backend == "openai" else 0)
        if st.session_state["backend"] == "embedded":
            st.selectbox("Model", EMBEDDED_MODELS, key="embedded_model",
                         index=EMBEDDED_MODELS.index(cfg.model) if cfg.model in EMBEDDED_MODELS else 0)
        else:
            st.text_input("Server URL", key="base_url", value=cfg.base_url or "http://127.0.0.1:8000/v1")
            st.text_input("Model name", key="server_model", value=cfg.model if cfg.backend == "openai" else "Qwen/Qwen3-8B")
        st.button("Use this backend", on_click=use_backend)
        if st.button("Health check"):
            with st.spinner("one structured call…"):
                try:
                    st.json(health_check(ui.llm()))
                except Exception as e:  # any backend failure is shown, not raised
                    st.error(ui.plain(str(e).splitlines()[0] if str(e) else e.__class__.__name__))
    cfg = ui.llm_config()
    st.caption(ui.plain(f"Backend: {cfg.backend} · {cfg.model}" + (f" · {cfg.base_url}" if cfg.base_url else "")))
    with st.expander("Settings in force"):
        st.json(s.model_dump(exclude={"llm"}) | {"llm": cfg.model_dump(exclude={"api_key"})}, expanded=False)

page.run()
