"""Streamlit glue shared by the pages: the store and settings, loaded once per process."""

from __future__ import annotations

import streamlit as st

from ftamem_core.config import Settings, load_settings
from ftamem_core.store import Store

SAMPLE_CASE = "data/sample_case.json"


@st.cache_resource
def settings() -> Settings:
    return load_settings()


@st.cache_resource
def store(db_path: str) -> Store:
    return Store(db_path)


def active_store() -> Store:
    return store(settings().db_path)


def active_case() -> str | None:
    """The chosen case, if it still exists."""
    case_id = st.session_state.get("case_id")
    if case_id and active_store().case_exists(case_id):
        return case_id
    return None
