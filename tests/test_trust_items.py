"""Issue 40 (trust under attack and mistakes), items 3-12: one test per item, named after it."""

import os
import stat

import pytest

from ftamem_core.governance import editing
from ftamem_core.storage.store import Store

from conftest import make_doc, make_unit, random_vectors
from hostile_text import HOSTILE
from test_pages import app  # noqa: F401 (a fixture)

SECRET = "Zebulon-7741 told nobody about the river"


def files_hold(db_path, text: str) -> list[str]:
    """Which of the database's files (the database, its -wal) hold ``text`` right now."""
    found = []
    for suffix in ("", "-wal"):
        path = f"{db_path}{suffix}"
        if os.path.exists(path) and text.encode() in open(path, "rb").read():
            found.append(os.path.basename(path))
    return found


def test_item7_delete_scrubs_open_store(tmp_path):
    db = tmp_path / "memory.db"
    store = Store(db)
    store.ingest([make_doc("c1")])
    kept, gone = store.add_units("c1", [make_unit("c1", "A kept unit."), make_unit("c1", SECRET)], random_vectors(2))
    edited = store.add_units("c1", [make_unit("c1", "Mariposa-5521 was the old wording")], random_vectors(1))[0]
    assert files_hold(db, SECRET)  # written: the test can see it
    editing.delete_unit(store, "c1", gone, "tester", "said by mistake")
    assert files_hold(db, SECRET) == []  # the store is still open
    unit = store.get_unit("c1", edited)
    editing.edit_unit(store, None, "c1", edited, {"fact.text": "The new wording."}, unit.version, "tester", "typo")
    assert os.path.getsize(f"{db}-wal") == 0  # checkpointed at once after a text edit too
    assert store.get_unit("c1", kept).fact.text == "A kept unit."
    store.close()


@pytest.mark.parametrize("trigger", ["next write", "close", "restart"])
def test_item7_a_scrub_a_reader_held_up_completes_after_it(tmp_path, trigger):
    """Another connection reading during a delete keeps the old frames; the scrub is owed (in the
    database) and done at the next write, at close, or by the next store opened after a restart."""
    import sqlite3

    db = tmp_path / "memory.db"
    store = Store(db)
    store.ingest([make_doc("c1")])
    gone = store.add_units("c1", [make_unit("c1", SECRET)], random_vectors(1))[0]
    reader = sqlite3.connect(db, isolation_level=None)
    reader.execute("BEGIN")
    assert reader.execute("SELECT count(*) FROM units").fetchone() == (1,)  # a snapshot, held
    editing.delete_unit(store, "c1", gone, "tester", "said by mistake")
    assert files_hold(db, SECRET)  # the reader's snapshot still needs the old page
    assert store.conn.execute("SELECT count(*) FROM pending_scrub").fetchone() == (1,)
    if trigger == "restart":
        store.close()  # the reader still reads: the scrub stays owed, recorded in the file
        assert files_hold(db, SECRET)
    reader.execute("COMMIT")
    if trigger == "next write":
        store.add_units("c1", [make_unit("c1", "Another unit.")], random_vectors(1))
    elif trigger == "close":
        store.close()
    else:
        store = Store(db)  # a new process: it knows of the scrub only from the database
    assert files_hold(db, SECRET) == []
    assert reader.execute("SELECT count(*) FROM pending_scrub").fetchone() == (0,)
    reader.close()
    if trigger != "close":
        store.close()


def test_item10_never_chmods_a_folder_the_store_did_not_create(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)  # like /tmp
    Store(shared / "x.db").close()
    assert stat.S_IMODE(os.stat(shared).st_mode) == 0o1777
    Store(shared / "new" / "deeper" / "y.db").close()
    for made in (shared / "new", shared / "new" / "deeper"):
        assert stat.S_IMODE(os.stat(made).st_mode) == 0o700  # created by the store: owner only
    assert stat.S_IMODE(os.stat(shared).st_mode) == 0o1777


# Item 3: every regex applied to turn text is linear -----------------------------------------


def test_item3_every_regex_on_turn_text_is_linear():
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).with_name("hostile_text.py")
    try:
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired as stopped:
        # stopped, the output comes back as bytes whatever ``text`` asked; a check's name may hold spaces
        started = stopped.stderr.decode() if isinstance(stopped.stderr, bytes) else stopped.stderr or ""
        pytest.fail(f"a regex check ran over 10 minutes; the last one started: {started.splitlines()[-1:]}")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_item3_a_build_of_hostile_turns_takes_seconds():
    import time

    from ftamem_core.governance import consent
    from ftamem_core.config import load_settings
    from ftamem_core.construction.builder import Builder
    from ftamem_core.models import Case, CaseDocument, Session, SessionDocument, Turn

    from scripted import HashEmbedder, Pipeline

    said = "I went hiking with my dogs on the trail every weekend this spring"
    texts = [f"Caroline{gap}{said}, Caroline{gap}!" for gap in HOSTILE.values()]
    texts += [f"Thanks,{gap}Melanie{gap}[shares a photo of{gap}{said}" for gap in HOSTILE.values()]
    doc = CaseDocument(
        case=Case(id="c1"),
        sessions=[
            SessionDocument(
                session=Session(source_id="s0", time="2025-03-02"),
                turns=[Turn(role="user", speaker=("Melanie", "Caroline")[i % 2], text=t) for i, t in enumerate(texts)],
            )
        ],
    )
    store = Store(":memory:")
    store.ingest([doc])
    consent.record(store, "c1", "granted", "test", "hostile turns")
    pipeline = Pipeline(seg_size=3)
    pipeline.extraction = lambda messages: {"memory_units": []}  # every turn goes to the verbatim fallback
    pipeline.longitudinal = lambda messages: {"semantic": [], "support": []}
    started = time.perf_counter()
    report = Builder(
        store,
        pipeline.llm(),
        HashEmbedder(),
        load_settings(environ={}, segmentation={"min_fragment_turns": 1}, extraction={"turns_per_unit": 0}),
    ).build("c1")
    assert report.status == "done" and report.units >= 1
    assert time.perf_counter() - started < 30  # the old caption regex alone took minutes here


# Item 8: replace keeps the person's records ---------------------------------------------------


def test_item8_replace_keeps_consent_access_log_and_retention(tmp_path):
    import json

    from ftamem_core.governance import auth, consent
    from ftamem_core.cli import main
    from ftamem_core.governance.privacy import set_retention

    db = tmp_path / "m.db"
    store = Store(db)
    store.ingest([make_doc("c1")])
    consent.record(store, "c1", "granted", "Dana", "signed form")
    consent.record(store, "c1", "withdrawn", "Dana", "phoned to withdraw")
    auth.log_access(store, "c1", "Dana", "view", "Memory page")
    set_retention(store, "c1", 30)
    created = store.get_case("c1").created_at
    store.close()
    path = tmp_path / "c1.json"
    path.write_text(
        json.dumps(
            {
                "id": "c1",
                "sessions": [{"id": "s0", "turns": [{"role": "user", "speaker": "A", "text": "A new dialogue."}]}],
            }
        )
    )
    assert main(["--db", str(db), "ingest", str(path), "--replace", "--by", "Eli"]) == 0
    store = Store(db)
    assert [r["state"] for r in consent.log(store, "c1")] == ["granted", "withdrawn"]
    assert consent.state(store, "c1")["state"] == "withdrawn"  # a replace does not bring consent back
    log = auth.access_log(store, "c1")
    assert [(r["who"], r["action"]) for r in log] == [("Dana", "view"), ("Eli", "replace")]
    assert "c1.json" in log[-1]["detail"]
    case = store.get_case("c1")
    assert (case.retention_days, case.created_at) == (30, created)
    assert [t.text for t in store.turns("c1")] == ["A new dialogue."]


# Item 12: files of any size, broken pipes ------------------------------------------------------


def test_item12_ingest_and_import_refuse_files_over_the_cap(tmp_path, capsys):
    from ftamem_core.cli import main

    db = str(tmp_path / "m.db")
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (2 * 2**20 + 10))
    env = tmp_path / "ftamem.toml"
    env.write_text("[input]\nmax_upload_mb = 2\n")
    for command in (
        ["ingest", str(big)],
        ["import", str(big)],
        ["ingest", "/dev/zero", "--format", "json"],
        ["import", "/dev/zero"],
    ):
        assert main(["--db", db, "--config", str(env), *command]) == 1
        err = capsys.readouterr().err
        assert "larger than 2 MB (setting input.max_upload_mb)" in err and len(err.strip().splitlines()) == 1


def test_item12_a_broken_pipe_prints_one_line_and_no_traceback(tmp_path):
    import subprocess
    import sys

    from ftamem_core.models import Case, CaseDocument, Session, SessionDocument, Turn

    db = tmp_path / "m.db"
    store = Store(db)
    store.ingest(
        [
            CaseDocument(
                case=Case(id="c1"),
                sessions=[
                    SessionDocument(
                        session=Session(source_id="s0"),
                        turns=[Turn(role="user", speaker="A", text=f"turn {i} " + "words " * 30) for i in range(3000)],
                    )
                ],
            )
        ]
    )
    store.close()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    run = subprocess.run(
        f"'{sys.executable}' -m ftamem_core --db '{db}' turns c1 | head -1",
        shell=True,
        capture_output=True,
        text=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": root},
    )
    assert len(run.stdout.splitlines()) == 1
    assert run.stderr == ""


# Item 4: consent gates every path that sends a case to a model ----------------------------------


def _calls(db) -> int:
    store = Store(db)
    try:
        return store._rows("SELECT count(*) AS n FROM llm_calls")[0]["n"]
    finally:
        store.close()


@pytest.fixture
def hash_embedder(monkeypatch):
    """Commands embed with the bag-of-words test embedder (loading MiniLM takes a minute here)."""
    from ftamem_core.llm import embeddings

    from scripted import HashEmbedder

    monkeypatch.setattr(embeddings.Embedder, "from_settings", classmethod(lambda cls, s: HashEmbedder()))


def test_item4_ask_needs_consent_on_the_command_line(tmp_path, capsys, hash_embedder):
    import json

    from ftamem_core.governance import consent
    from ftamem_core.cli import main

    db = tmp_path / "m.db"
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "rewrite": {
                    "query": "what happened",
                    "people": [],
                    "time_expressions": [],
                    "content_types": [],
                    "affect_terms": [],
                },
                "answer": {"answer": "an answer", "cited_unit_ids": []},
            }
        )
    )
    store = Store(db)
    store.ingest([make_doc("c1")])
    store.close()
    ask = ["--db", str(db), "--llm", "scripted", "--model", str(script), "ask", "c1", "What happened?"]
    assert main(ask) == 1
    assert "no consent to answer questions" in capsys.readouterr().err and _calls(db) == 0
    store = Store(db)
    consent.record(store, "c1", "granted", "Dana", "form")
    store.close()
    assert main(ask) == 0 and "an answer" in capsys.readouterr().out
    store = Store(db)
    consent.record(store, "c1", "withdrawn", "Dana", "phoned")
    store.close()
    before = _calls(db)
    assert main(ask) == 1 and "consent is withdrawn" in capsys.readouterr().err and _calls(db) == before


def test_item4_a_build_stopped_by_a_withdrawal_exits_non_zero(tmp_path, capsys, monkeypatch, hash_embedder):
    from ftamem_core.governance import consent
    from ftamem_core.llm import factory as llm
    from ftamem_core.cli import main

    from scripted import Pipeline

    db = tmp_path / "m.db"
    store = Store(db)
    store.ingest([make_doc("c1", sessions=3, turns=4)])
    consent.record(store, "c1", "granted", "Dana", "form")
    store.close()
    pipeline = Pipeline(seg_size=2)
    extract = pipeline.extraction

    def withdraw_then_extract(messages):  # the person withdraws while the build runs (another process)
        other = Store(db)
        consent.record(other, "c1", "withdrawn", "Dana", "phoned")
        other.close()
        return extract(messages)

    pipeline.extraction = withdraw_then_extract
    monkeypatch.setattr(llm, "make_llm", lambda *a, **k: pipeline.llm())
    assert main(["--db", str(db), "build", "c1", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "stopped (consent withdrawn)" in err and len(err.strip().splitlines()) == 1


def test_item4_ask_page_needs_consent(app):
    from ftamem_core.ingest import ingest_file

    from conftest import SAMPLE
    from test_pages import open_page

    store = Store(app)
    ingest_file(store, SAMPLE)  # no consent recorded
    at = open_page("pages/ask.py")
    assert not at.exception
    assert any("needs the person's consent" in w.value for w in at.warning)
    assert next(b for b in at.button if b.label == "Ask").disabled


def test_item4_eval_and_density_respect_a_withdrawal(tmp_path, capsys, monkeypatch, hash_embedder):
    import json

    from ftamem_core.governance import consent
    from ftamem_core.cli import main
    from ftamem_core.ingest import ingest_file

    from conftest import LOCOMO

    script = tmp_path / "script.json"
    script.write_text(json.dumps({"answer": {"answer": "Not mentioned", "cited_unit_ids": []}}))
    monkeypatch.setenv("FTAMEM_LLM_BACKEND", "scripted")
    monkeypatch.setenv("FTAMEM_LLM_MODEL", str(script))
    monkeypatch.setenv("FTAMEM_EVALUATION_EVAL_DIR", str(tmp_path / "eval-runs"))
    db = tmp_path / "m.db"
    base = [
        "--db",
        str(db),
        "eval",
        "--dataset",
        "locomo",
        "--data",
        str(LOCOMO),
        "--cases",
        "conv-26",
        "--sessions",
        "1",
        "--questions",
        "1",
        "--method",
        "question-only",
        "--quiet",
    ]
    assert main(base + ["--out", str(tmp_path / "run1")]) == 0  # public research data: consented by the harness
    (cache,) = (tmp_path / "eval-runs" / "cache").glob("*.db")
    store = Store(cache)
    consent.record(store, "conv-26", "withdrawn", "Dana", "asked to leave the study")
    store.close()
    capsys.readouterr()
    assert main(base + ["--out", str(tmp_path / "run2")]) == 1  # the harness does not grant it again
    assert "consent withdrawn" in capsys.readouterr().err
    # the user's own store records a withdrawal for the case: eval and density refuse it
    store = Store(db)
    ingest_file(store, LOCOMO, only=["conv-26"])
    consent.record(store, "conv-26", "withdrawn", "Dana", "asked to leave the study")
    store.close()
    density = [
        "--db",
        str(db),
        "density",
        "--dataset",
        "locomo",
        "--data",
        str(LOCOMO),
        "--cases",
        "conv-26",
        "--sessions",
        "1",
        "--out",
        str(tmp_path / "d.jsonl"),
    ]
    assert main(density) == 1 and "consent withdrawn" in capsys.readouterr().err
    assert not (tmp_path / "d.jsonl").exists()


# Item 11: a whole-call deadline for a server that trickles ------------------------------------


class _Trickle:
    """An OpenAI-compatible server on loopback: /v1/chat/completions answers at once when
    ``whole``, else sends its headers and then one byte every 0.2 s, forever (with a length, or
    chunked as a stream is)."""

    def __init__(self, mode: str):
        import json
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        reply = json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": '{"ok": true}'}}
                ],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2},
            }
        ).encode()
        self.stop = threading.Event()
        stop = self.stop

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if mode == "whole":
                    self.send_header("Content-Length", str(len(reply)))
                    self.end_headers()
                    self.wfile.write(reply)
                    return
                if mode == "length":
                    self.send_header("Content-Length", "1000000")
                else:
                    self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    while not stop.wait(0.2):
                        self.wfile.write(b" " if mode == "length" else b"1\r\n \r\n")
                        self.wfile.flush()
                except OSError:  # the client hung up: what the deadline should make it do
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("mode", ["length", "chunked"])
def test_item11_a_trickling_server_meets_the_call_deadline(mode):
    import time

    from pydantic import BaseModel

    from ftamem_core.config import LLMConfig
    from ftamem_core.llm.base import LLMUnavailable
    from ftamem_core.llm.openai_compat import OpenAICompatLLM

    class Reply(BaseModel):
        ok: bool

    messages = [{"role": "user", "content": "hi"}]
    server = _Trickle("whole")
    try:  # the reply read piece by piece is still the reply
        config = LLMConfig(backend="openai", base_url=server.url, model="m", dialect="json_object", deadline=2.0)
        assert OpenAICompatLLM(config).structured("check", messages, Reply)[0].ok is True
    finally:
        server.close()
    server = _Trickle(mode)
    try:
        config = LLMConfig(
            backend="openai",
            base_url=server.url,
            model="m",
            dialect="json_object",
            timeout=600,
            connect_retries=3,
            max_retries=2,
            deadline=2.0,
        )
        started = time.monotonic()
        with pytest.raises(LLMUnavailable, match=r"within 2 s \(setting llm.deadline\)"):
            OpenAICompatLLM(config).structured("check", messages, Reply)
        assert time.monotonic() - started < 4  # one deadline for the call, its retries included
        started = time.monotonic()
        with pytest.raises(LLMUnavailable, match="llm.deadline"):
            OpenAICompatLLM(config).text("check", messages)
        assert time.monotonic() - started < 4
    finally:
        server.close()


# Item 6: a person's deletion or edit of a carried partial unit wins over a running build -----------


@pytest.mark.parametrize("change", ["delete", "edit"])
def test_item6_a_deleted_or_edited_partial_is_not_brought_back_by_a_running_build(tmp_path, change):
    from ftamem_core.construction.builder import Builder

    from scripted import HashEmbedder, Pipeline, section, turn_indices, unit
    from test_construction import SETTINGS, two_stores

    builder_store, person = two_stores(tmp_path)
    pipeline = Pipeline(seg_size=4)

    def extraction(messages):
        idx = turn_indices([{"content": section(messages, "Fragment turns:")}])
        if idx[0] == 4:  # the last fragment of session 0 leaves a partial unit
            return {"memory_units": [unit("Maya booked a sleep clinic visit.", 4, 5, status="partial")]}
        if idx[0] == 8:  # while the model completes it, the person changes it
            (partial,) = [u for u in person.units("c1", None) if u.construction_status == "partial"]
            if change == "delete":
                editing.delete_unit(person, "c1", partial.id, "Dana", "not what she said")
            else:
                editing.edit_unit(
                    person,
                    None,
                    "c1",
                    partial.id,
                    {"fact.text": "Maya booked a dentist visit."},
                    partial.version,
                    "Dana",
                    "misheard",
                )
            return {"memory_units": [unit("The visit is on March 12.", 8, 9, completes="p1")]}
        return {"memory_units": [unit(f"Turns {idx[0]}-{idx[-1]} are about sleep.", idx[0], idx[-1])]}

    pipeline.extraction = extraction
    report = Builder(
        builder_store, pipeline.llm(), HashEmbedder(), SETTINGS.with_overrides(extraction={"verbatim_fallback": False})
    ).build("c1")
    assert report.status == "done"
    texts = {u.fact.text: u for u in person.units("c1", None)}
    assert not any("sleep clinic" in t for t in texts)  # the build's old copy is not brought back
    assert "The visit is on March 12." in texts  # what the model wrote of this fragment is kept
    if change == "edit":
        assert texts["Maya booked a dentist visit."].construction_status == "partial"  # the edit stands
    builder_store.close()
    person.close()


# Item 5: the OIDC identity is the user everywhere --------------------------------------------------


class _OIDCUser(dict):
    """What st.user holds after st.login with a provider."""

    is_logged_in = True


@pytest.fixture
def oidc(app, tmp_path, monkeypatch):
    import streamlit as st

    config = tmp_path / "ftamem.toml"
    config.write_text("[governance.auth]\noidc = true\n")
    monkeypatch.setenv("FTAMEM_CONFIG", str(config))
    monkeypatch.setattr(st, "user", _OIDCUser(email="dana@clinic.example", name="Dana"))
    st.cache_resource.clear()
    return app


def test_item5_the_oidc_identity_is_the_user_everywhere(oidc):
    from ftamem_core.governance import auth, consent
    from ftamem_core.governance.privacy import erasures

    from test_pages import built, open_page

    store = built(oidc)
    at = open_page("pages/privacy.py")
    assert not at.exception
    assert "Signed in as dana@clinic.example" in [t.value for t in at.sidebar.text]
    assert not any("Type your name" in w.value for w in at.warning)  # nothing to type: the identity is known
    withdraw = next(b for b in at.button if b.label == "Record consent withdrawn")
    assert not withdraw.disabled
    withdraw.click().run()
    assert not at.exception
    assert consent.state(store, "sample-daniel")["who"] == "dana@clinic.example"
    log = auth.access_log(store, "sample-daniel")
    assert {r["who"] for r in log} == {"dana@clinic.example"}  # never "counselor"
    next(t for t in at.text_input if t.label == "Case id").set_value("sample-daniel").run()
    erase = next(b for b in at.button if b.label == "Erase for good")
    assert not erase.disabled
    erase.click().run()
    assert erasures(store)[-1]["who"] == "dana@clinic.example"


# Item 9: sign-in on any address, attempts limited, the Host checked ----------------------------------


def test_item9_attempts_are_limited_per_name_and_per_client():
    from ftamem_core.governance import auth

    now = [0.0]
    attempts = auth.Attempts(limit=5, minutes=5, clock=lambda: now[0])
    for _ in range(5):
        assert attempts.locked("ana", "10.0.0.1") == 0
        attempts.failed("ana", "10.0.0.1")
    assert attempts.locked("ana", "10.0.0.1") == 300
    assert attempts.locked("ana", "10.0.0.2") == 300  # the name, from any client
    assert attempts.locked("bob", "10.0.0.1") == 300  # the client, for any name
    assert attempts.locked("bob", "10.0.0.2") == 0
    now[0] = 301
    assert attempts.locked("ana", "10.0.0.1") == 0  # the window has passed


def test_item9_the_host_header_must_name_the_app():
    from ftamem_core.governance import auth

    assert auth.host_allowed("127.0.0.1:8501", "127.0.0.1", [])
    assert auth.host_allowed("localhost:8501", "127.0.0.1", [])
    assert auth.host_allowed("[::1]:8501", "::1", [])
    assert not auth.host_allowed("evil.example:8501", "127.0.0.1", [])  # DNS rebinding
    assert auth.host_allowed("memory.clinic.example", "127.0.0.1", ["memory.clinic.example"])  # behind a proxy
    assert not auth.host_allowed("other.example", "10.0.0.5", [])
    assert auth.host_allowed("10.0.0.5:8501", "10.0.0.5", [])
    assert auth.host_allowed("anything.example", "0.0.0.0", [])  # every interface, no names: sign-in guards it
    assert not auth.host_allowed("anything.example", "0.0.0.0", ["memory.clinic.example"])
    assert auth.sign_in_required("127.0.0.1", {"ana": "hash"}, False)  # users: on loopback too


def test_item9_the_sign_in_form_locks_after_five_failures_and_checks_the_host(app, tmp_path, monkeypatch):
    import streamlit as st

    import ui
    from ftamem_core.governance import auth

    from test_pages import open_page

    config = tmp_path / "ftamem.toml"
    config.write_text(
        f'[governance.auth]\nlockout_minutes = 5\n[governance.auth.users]\nana = "{auth.hash_password("pw-ana")}"\n'
    )
    monkeypatch.setenv("FTAMEM_CONFIG", str(config))
    st.cache_resource.clear()

    def sign_in(at, password):
        next(t for t in at.text_input if t.label == "Name").set_value("ana")
        next(t for t in at.text_input if t.label == "Password").set_value(password)
        next(b for b in at.button if b.label == "Sign in").click().run()

    at = open_page("pages/cases.py")
    for _ in range(5):
        sign_in(at, "wrong")
        assert at.error[0].value == "Wrong name or password."
    sign_in(at, "pw-ana")  # the right password, but locked
    assert at.error[0].value.startswith("Too many failed sign-ins") and not at.sidebar.selectbox
    monkeypatch.setattr(ui, "_request", lambda: ("evil.example:8501", "10.0.0.9"))
    at = open_page("pages/cases.py")
    assert "does not answer to" in at.error[0].value and not at.text_input  # not even the form
