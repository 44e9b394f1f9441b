"""FTA-Mem Studio: navigation and the shared sidebar. Pages live in pages/."""

import streamlit as st

import ui

st.set_page_config(page_title="FTA-Mem Studio", layout="wide")

page = st.navigation([
    st.Page("pages/cases.py", title="Cases", icon=":material/folder_open:", default=True),
])

with st.sidebar:
    s = ui.settings()
    ui.case_selector()
    st.caption("Backend")
    st.write(f"{s.llm.backend} · {s.llm.model}" + (f" · {s.llm.base_url}" if s.llm.base_url else ""))
    with st.expander("Settings in force"):
        st.json(s.model_dump(exclude={"llm"}) | {"llm": s.llm.model_dump(exclude={"api_key"})}, expanded=False)

page.run()
