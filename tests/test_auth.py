"""Sign-in, the access log and the backends a page may choose (issue #11)."""

import io
import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from ftamem_core.governance import auth
from ftamem_core.cli import main
from ftamem_core.config import LLMConfig
from ftamem_core.governance.editing import history
from ftamem_core.llm.base import LLMError
from ftamem_core.llm.openai_compat import OpenAICompatLLM

from conftest import ROOT, SAMPLE
from test_pages import app, built, open_page  # noqa: F401 (app is a fixture)


def test_a_password_hash_verifies_only_its_own_password():
    hashed = auth.hash_password("correct horse")
    assert hashed.startswith("scrypt$") and "correct horse" not in hashed
    assert auth.verify_password("correct horse", hashed)
    assert not auth.verify_password("correct hors", hashed)
    assert auth.hash_password("correct horse") != hashed  # salted
    for broken in ("", "plain", "scrypt$1$2$3$x$y", "md5$16384$8$1$AAAA$AAAA"):
        assert not auth.verify_password("correct horse", broken)
    with pytest.raises(ValueError):
        auth.hash_password("")


def test_check_user_needs_a_configured_name_and_its_password():
    users = {"ana": auth.hash_password("pw-ana")}
    assert auth.check_user(users, "ana", "pw-ana")
    assert not auth.check_user(users, "ana", "pw-bob")
    assert not auth.check_user(users, "bob", "pw-ana")
    assert not auth.check_user({}, "", "")


@pytest.mark.parametrize(
    "address, loopback",
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("127.0.0.2", True),
        ("0.0.0.0", False),
        ("", False),
        ("192.168.1.5", False),
        ("example.org", False),
        ("::", False),
    ],
)
def test_sign_in_is_required_beyond_loopback(address, loopback):
    assert auth.is_loopback(address) is loopback
    assert auth.sign_in_required(address, {}, False) is (not loopback)
    assert (auth.start_problem(address, {}, False) is None) is loopback
    assert auth.start_problem(address, {"ana": "h"}, False) is None  # users configured: it may start
    assert auth.start_problem(address, {}, True) is None  # OIDC configured
    assert auth.sign_in_required(address, {"ana": "h"}, False)  # configured users always sign in


def test_the_server_refuses_to_listen_beyond_loopback_without_sign_in(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "FTAMEM_STORAGE_DB_PATH": str(tmp_path / "m.db")}
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "app_server.py"), "--server.address=0.0.0.0", "--server.port", "1"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "refusing to start" in done.stderr and "no sign-in configured" in done.stderr


def test_cli_hashes_a_password_from_stdin_and_logs_access(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("s3cret\n"))
    assert main(["--json", "hash-password"]) == 0
    hashed = json.loads(capsys.readouterr().out)["hash"]
    assert auth.verify_password("s3cret", hashed)
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n"))
    assert main(["hash-password"]) != 0  # an empty password is refused

    db = str(tmp_path / "m.db")
    assert main(["--db", db, "ingest", str(SAMPLE), "--consent", "granted", "--by", "test"]) == 0
    assert main(["--db", db, "turns", "sample-daniel"]) == 0
    assert main(["--db", db, "export", "sample-daniel", "--out", str(tmp_path / "x.json")]) == 0
    capsys.readouterr()
    assert main(["--db", db, "--json", "access-log", "--case", "sample-daniel"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["action"], r["detail"]) for r in rows] == [
        ("view", "command line: turns"),
        ("export", "command line: export"),
    ]
    assert all(r["who"] and r["case_id"] == "sample-daniel" for r in rows)
    assert main(["--db", db, "access-log", "--case", "nobody"]) != 0


@pytest.fixture
def users(app, tmp_path, monkeypatch):
    """Settings with one configured user: the app asks everybody to sign in."""
    import streamlit as st

    config = tmp_path / "ftamem.toml"
    config.write_text(f'[governance.auth.users]\nana = "{auth.hash_password("pw-ana")}"\n')
    monkeypatch.setenv("FTAMEM_CONFIG", str(config))
    st.cache_resource.clear()
    return app


def sign_in(at, name, password):
    next(t for t in at.text_input if t.label == "Name").set_value(name)
    next(t for t in at.text_input if t.label == "Password").set_value(password)
    next(b for b in at.button if b.label == "Sign in").click().run()


def test_with_users_configured_the_app_shows_only_the_sign_in_form(users):
    built(users)
    at = open_page("pages/cases.py")
    assert not at.exception
    assert [t.label for t in at.text_input] == ["Name", "Password"]
    assert not at.sidebar.selectbox and not at.dataframe  # no case, no data before sign-in
    sign_in(at, "ana", "wrong")
    assert at.error[0].value == "Wrong name or password." and not at.sidebar.selectbox
    sign_in(at, "ana", "pw-ana")
    assert not at.exception
    assert at.sidebar.selectbox[0].value == "sample-daniel"
    assert "Signed in as ana" in [t.value for t in at.sidebar.text]
    assert "Your name (for the edit history)" not in [t.label for t in at.sidebar.text_input]


def test_the_signed_in_user_is_the_name_in_the_history_and_the_access_log(users):
    store = built(users)
    at = open_page("pages/cases.py")
    sign_in(at, "ana", "pw-ana")
    at.switch_page("pages/memory.py").run()
    unit = store.units("sample-daniel")[0]
    at.toggle(key=f"edit-open-{unit.id}").set_value(True).run()  # signed in: no name to type
    at.text_area[0].set_value("Daniel's father moved to a care home.")
    next(t for t in at.text_input if t.label == "Reason for the change").set_value("checked with him")
    next(b for b in at.button if b.label == "Save correction").click().run()
    assert not at.exception
    (change,) = [h for h in history(store, "sample-daniel", "unit", unit.id) if h["field"] == "fact.text"]
    assert change["who"] == "ana"
    log = auth.access_log(store, "sample-daniel")
    assert ("ana", "view", "memory page") in [(r["who"], r["action"], r["detail"]) for r in log]
    assert ("ana", "change", f"edited m{unit.id}") in [(r["who"], r["action"], r["detail"]) for r in log]
    at.run()  # a second view of the same page in the same session is not logged again
    assert len(auth.access_log(store, "sample-daniel")) == len(log)
    at.switch_page("pages/privacy.py").run()
    assert not at.exception
    shown = at.main.dataframe[-1].value
    assert "ana" in set(shown["who"]) and "privacy page" in set(shown["detail"])


def test_without_sign_in_the_typed_name_is_used(app):
    store = built(app)
    at = open_page("pages/cases.py")
    at.sidebar.text_input[0].set_value("Dr. Okafor").run()
    at.switch_page("pages/build.py").run()
    assert ("Dr. Okafor", "view", "build page") in [
        (r["who"], r["action"], r["detail"]) for r in auth.access_log(store, "sample-daniel")
    ]


def test_the_sidebar_offers_configured_backends_and_no_typed_url_unless_allowed(app, tmp_path, monkeypatch):
    import streamlit as st

    config = tmp_path / "ftamem.toml"
    config.write_text(
        '[app.backends."GPU server"]\nbackend = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'model = "Qwen/Qwen3-8B"\napi_key = "k-configured"\n'
    )
    monkeypatch.setenv("FTAMEM_CONFIG", str(config))
    st.cache_resource.clear()
    at = open_page("pages/cases.py")
    choice = next(s for s in at.sidebar.selectbox if s.label == "LLM backend")
    assert "GPU server" in choice.options and "a server I type in" not in choice.options
    assert not [t for t in at.sidebar.text_input if t.label == "Server URL"]
    choice.set_value("GPU server").run()
    next(b for b in at.sidebar.button if b.label == "Use this backend").click().run()
    assert not at.exception
    assert at.session_state["llm_config"].base_url == "http://127.0.0.1:9/v1"
    assert at.session_state["llm_config"].api_key == "k-configured"

    config.write_text(
        config.read_text().replace("[app.backends", "[app]\nallow_custom_backend = true\n[app.backends", 1)
    )
    st.cache_resource.clear()
    at = open_page("pages/cases.py")
    next(s for s in at.sidebar.selectbox if s.label == "LLM backend").set_value("a server I type in").run()
    next(t for t in at.sidebar.text_input if t.label == "Server URL").set_value("http://127.0.0.1:9/v1")
    next(b for b in at.sidebar.button if b.label == "Use this backend").click().run()
    typed = at.session_state["llm_config"]
    assert typed.base_url == "http://127.0.0.1:9/v1" and typed.api_key != "k-configured" and not typed.trusted


class _Refusing(BaseHTTPRequestHandler):
    """A server that refuses every request with a body an attacker might have written."""

    def _refuse(self):
        body = b'{"error": {"message": "SECRET-BODY <img src=//example.invalid/p.png>"}}'
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _refuse

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("trusted", [True, False])
def test_an_untrusted_server_error_body_is_not_shown(trusted):
    server = HTTPServer(("127.0.0.1", 0), _Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        llm = OpenAICompatLLM(
            LLMConfig(
                backend="openai",
                base_url=f"http://127.0.0.1:{server.server_port}/v1",
                model="m",
                dialect="json_object",
                trusted=trusted,
                max_retries=0,
            )
        )
        with pytest.raises(LLMError) as e:
            llm.text("answer", [{"role": "user", "content": "hi"}])
    finally:
        server.shutdown()
    assert "400" in str(e.value)
    assert ("SECRET-BODY" in str(e.value)) is trusted
