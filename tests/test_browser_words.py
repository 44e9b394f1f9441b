"""In headless Chromium at 1280x800 and 390x844: the sidebar's settings in words; the
Build page's live link line with both units' facts (as stored now) and the relation in words; the
Memory page's filter by how a unit was made, kept in the URL, with its counts and on the card."""

import json
import os
import re
import time

import pytest

from ftamem_core.config import load_settings
from ftamem_core.construction.builder import Builder
from ftamem_core.governance import consent
from ftamem_core.governance.editing import edit_unit
from ftamem_core.llm.embeddings import Embedder
from ftamem_core.loaders import load_file
from ftamem_core.storage.store import Store

from conftest import SAMPLE, free_port, serve_app
from scripted import Pipeline
from test_browser import SHOTS, _text, _wait, browser  # noqa: F401 - browser is a fixture
from test_browser_counselor import SIZES, _box, _button, _fold_sidebar, _main, _open_sidebar
from test_pages import SCRIPT

pytestmark = pytest.mark.browser
MADE = "daniel-made"  # built: units written by the model, copied from turns, one corrected by a person
LINK = "daniel-link"  # two sessions, built in the browser: the second session's unit is linked to the first's
NAME = "Your name (for the edit history)"
CORRECTED = "Daniel's father moved into Oakwood care home on October 3rd."


@pytest.fixture(scope="module", params=list(SIZES))
def words_server(request, tmp_path_factory):
    """One app per window size, each on a database of its own, so that the unit ids the link
    case's build gives are known before it runs (the scripted model's linking reply names them)."""
    size = request.param
    tmp = tmp_path_factory.mktemp(f"words-{size}")
    db = tmp / "app.db"
    store = Store(db)
    embedder = Embedder()
    (doc,) = load_file(SAMPLE)
    doc.case.id = MADE
    store.ingest([doc])
    consent.record(store, MADE, "granted", "test", "browser test")
    Builder(
        store,
        Pipeline().llm(),
        embedder,
        load_settings(environ={}, extraction={"ground_facts": False, "turns_per_unit": 0}),
    ).build(MADE)
    made = store.units(MADE)
    model = [u for u in made if u.origin == "model"]
    assert model and any(u.origin == "copied" for u in made)
    edit_unit(store, embedder, MADE, model[0].id, {"fact.text": CORRECTED}, model[0].version, "Dr. Lee", "heard again")
    (doc,) = load_file(SAMPLE)
    doc.case.id = LINK
    doc.sessions = doc.sessions[:2]
    store.ingest([doc])
    consent.record(store, LINK, "granted", "test", "browser test")
    after = max(u.id for u in store.units(MADE, construction_status=None))
    store.close()
    first, second = after + 1, after + 2  # one unit per session (the script's one fragment, one unit)
    linking = {
        "memory_updates": [
            {
                "new_id": f"m{second}",
                "memory_id": f"m{first}",
                "relation": "followup_of",
                "lifecycle_status": "completed",
                "completeness": "complete",
                "relation_confidence": "high",
            }
        ]
    }
    script = tmp / "script.json"
    script.write_text(json.dumps({**SCRIPT, "linking": linking}))
    port = free_port()
    env = {
        **os.environ,
        "FTAMEM_STORAGE_DB_PATH": str(db),
        "FTAMEM_LLM_BACKEND": "scripted",
        "FTAMEM_LLM_MODEL": str(script),
        "FTAMEM_EXTRACTION_TURNS_PER_UNIT": "0",
        "FTAMEM_EXTRACTION_VERBATIM_FALLBACK": "false",
        "FTAMEM_EXTRACTION_GROUND_FACTS": "false",
    }
    url = f"http://127.0.0.1:{port}"
    yield from (
        {"size": size, "url": url, "db": db, "link": (first, second), "corrected": model[0].id}
        for _ in serve_app(port, env)
    )


def _cells(driver, where: str) -> list[list[str]]:
    """The rows a dataframe shows now, read from the grid's accessible table (the grid itself is a
    canvas): only the rows and columns in view."""
    return driver.execute_script(
        "const t = document.querySelector(arguments[0] + ' [data-testid=stDataFrame] table');"
        "return t ? [...t.querySelectorAll('tbody tr')].map(r => [...r.cells].map(c => c.textContent)) : [];",
        where,
    )


def test_the_sidebars_settings_read_as_words(words_server, browser):
    size = words_server["size"]
    browser.set_window_size(*SIZES[size])
    browser.get(f"{words_server['url']}/?case={MADE}")
    assert _wait(lambda: _box(browser, NAME), 60), "no sidebar"  # folded on a phone: its text is hidden
    _open_sidebar(browser)
    summary = next(
        e
        for e in browser.find_elements("css selector", "[data-testid=stSidebar] summary")
        if "Settings in force" in e.text
    )
    browser.execute_script("arguments[0].scrollIntoView({block: 'start'}); arguments[0].click()", summary)
    rows = _wait(
        lambda: len(_cells(browser, "[data-testid=stSidebar]")) > 4 and _cells(browser, "[data-testid=stSidebar]"), 30
    )
    browser.execute_script(
        "document.querySelector('[data-testid=stSidebar] [data-testid=stDataFrame]').scrollIntoView({block: 'center'})"
    )
    time.sleep(0.5)
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / f"settings-words-{size}.png"))
    assert rows, "the settings table shows no rows"
    value = {r[0]: r[1] for r in rows if len(r) > 1}
    # the grid draws the rows in view only (storage's come first): the AppTest reads every row
    assert value.get("index · kind") == "chosen by the case's size", rows
    assert value.get("profile", "").startswith("small model (the paper's method"), rows
    assert value.get("index · hnsw from") == "20,000" and "database file" in value, rows
    raw = re.compile(r"^(true|false|True|False|None|bws|small-model)$")
    assert [r for r in rows if any(raw.match(c) for c in r)] == []
    assert [r[0] for r in rows if "_" in r[0]] == []  # names in words
    assert "Profile: small model (the paper's method" in _text(browser)
    _fold_sidebar(browser)


def test_the_build_pages_link_line_says_both_facts_and_the_relation(words_server, browser):
    size = words_server["size"]
    first, second = words_server["link"]
    browser.set_window_size(*SIZES[size])
    browser.get(f"{words_server['url']}/build?case={LINK}")
    start = _wait(
        lambda: _button(browser, "Start / resume build").is_enabled() and _button(browser, "Start / resume build"), 60
    )
    assert start, "no Start button"
    _fold_sidebar(browser)
    start.click()
    fact = "Daniel talked about his father."
    line = f"link added: m{second} follow-up of m{first} (high confidence): m{second} \u201c{fact}\u201d · m{first} \u201c{fact}\u201d"
    assert _wait(lambda: "done · " in _text(browser), 300), _text(browser)[-800:]
    assert _wait(lambda: line in _main(browser), 30), _main(browser)[-1200:]
    browser.execute_script(
        "const el = [...document.querySelectorAll('[data-testid=stText]')]"
        ".find(e => e.textContent.startsWith('link added: ')); el.scrollIntoView({block: 'center'});"
    )
    time.sleep(0.5)
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / f"build-link-line-{size}.png"))

    # The facts are the units' as stored now: an edit after the build shows on the next draw.
    store = Store(words_server["db"])
    try:
        unit = store.get_unit(LINK, first)
        edit_unit(
            store, None, LINK, first, {"fact.text": "Daniel's dad moved to a care home."}, unit.version, "Dr. Lee", "x"
        )
    finally:
        store.close()
    browser.refresh()
    edited = f"m{second} \u201c{fact}\u201d · m{first} \u201cDaniel's dad moved to a care home.\u201d"
    assert _wait(lambda: edited in _main(browser), 60), _main(browser)[-1200:]
    assert "followup_of" not in _main(browser)


def _choose(driver, label: str, option: str) -> None:
    """Pick an option of a multiselect by typing it, as a person does."""
    from selenium.webdriver.common.keys import Keys

    def typed():
        box = next(
            b
            for b in driver.find_elements("css selector", "[data-testid=stMultiSelect]")
            if b.text.splitlines()[:1] == [label]
        )
        field = box.find_element("css selector", "input")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", field)
        field.click()
        field.send_keys(option)
        time.sleep(0.5)
        field.send_keys(Keys.ENTER, Keys.ESCAPE)
        return True

    assert _wait(typed, 30), f"could not choose {option!r} in {label!r}"


def _row_count(driver) -> int:
    return driver.execute_script(
        "const t = document.querySelector('[data-testid=stMain] [data-testid=stDataFrame] table');"
        "return t ? Number(t.getAttribute('aria-rowcount')) - 1 : -1;"
    )


def test_memory_filters_by_how_units_were_made_and_keeps_it_in_the_url(words_server, browser):
    size = words_server["size"]
    browser.set_window_size(*SIZES[size])
    url = f"{words_server['url']}/memory?case={MADE}"
    browser.get(url)
    assert _wait(lambda: "How it was made" in _main(browser) and _row_count(browser) > 3, 60), _main(browser)[:800]
    _fold_sidebar(browser)
    counts = re.search(r"Of the units the other filters and the search leave: (.*)", _main(browser))
    assert counts and "copied from a turn" in counts.group(1) and "corrected by a person 1" in counts.group(1), counts
    every = _row_count(browser)
    _choose(browser, "How it was made", "corrected by a person")
    assert _wait(lambda: _row_count(browser) == 1, 30), _row_count(browser)
    assert _wait(lambda: "provenance=corrected+by+a+person" in browser.current_url, 30), browser.current_url
    corrected = words_server["corrected"]
    card = lambda: browser.find_element("id", "unit-card").text  # noqa: E731
    assert _wait(lambda: card().startswith(f"m{corrected}"), 30), card()
    assert "How it was made: corrected by a person" in _main(browser)
    assert CORRECTED in _main(browser)
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / f"memory-made-{size}.png"))

    # a shared link opens with the filter as it was
    browser.get(browser.current_url)
    assert _wait(lambda: "How it was made: corrected by a person" in _main(browser) and _row_count(browser) == 1, 60)
    # and it combines with another choice: copied ones as well
    _choose(browser, "How it was made", "copied from a turn")
    assert _wait(lambda: 1 < _row_count(browser) < every, 30), (_row_count(browser), every)
    assert _wait(lambda: "provenance=copied+from+a+turn" in browser.current_url, 30), browser.current_url
