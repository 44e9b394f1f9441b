"""Nothing leaves the machine (issue #11): the app's pages, a build and an ask run with every
outbound connection and name lookup refused and recorded (tests/netguard/guard.py); the served
app is checked the same way by the browser test."""

import socket
import urllib.request

import pytest

from ftamem_core.config import load_settings
from ftamem_core.construction.builder import Builder
from ftamem_core.llm.embeddings import Embedder
from ftamem_core.ingest import ingest_file
from ftamem_core.storage.store import Store

from conftest import ROOT, SAMPLE
from scripted import Pipeline
from test_pages import PAGES, app, open_page  # noqa: F401 (app is a fixture)

import sys

sys.path.insert(0, str(ROOT / "tests" / "netguard"))
from guard import install  # noqa: E402


@pytest.fixture
def attempts():
    seen: list[str] = []
    undo = install(seen.append)
    yield seen
    undo()


def test_the_guard_sees_an_outbound_request(attempts):
    with pytest.raises(OSError):
        urllib.request.urlopen("http://example.invalid/p.png", timeout=2)
    with pytest.raises(OSError), socket.socket() as s:
        s.connect(("203.0.113.9", 80))
    with socket.socket() as s:  # loopback is let through (nothing listens on port 9)
        assert s.connect_ex(("127.0.0.1", 9)) != 0
    assert [a.split()[0] for a in attempts] == ["getaddrinfo", "connect"]


def test_a_build_every_page_and_an_ask_make_no_outbound_connection(app, attempts):
    store = Store(app)
    ingest_file(store, SAMPLE, consent_by="test")
    # The real embedder (the packaged MiniLM), as the app uses it; a scripted model.
    Builder(
        store,
        Pipeline().llm(),
        Embedder(),
        load_settings(environ={}, extraction={"ground_facts": False, "turns_per_unit": 0, "verbatim_fallback": False}),
    ).build("sample-daniel")
    assert store.units("sample-daniel")
    for page in PAGES:
        at = open_page(page)
        assert not at.exception, (page, at.exception)
    at = open_page("pages/ask.py")
    at.text_input(key="ask_question").set_value("When did Daniel's father move?")  # in the form: sent on Ask
    next(b for b in at.button if b.label == "Ask").click().run()
    assert not at.exception and at.session_state["trace"].answer
    assert attempts == []
