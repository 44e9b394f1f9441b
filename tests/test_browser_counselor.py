"""Issue 42, second pass, in headless Chromium at 1280x800 and 390x844: a build watched from Start
to its end without leaving the page; citations that hold and kept units left out said so; links
to an unknown case or a deleted unit say so; a click on a Memory row brings its card into view;
consent needs a name and a withdrawn case shows a banner on every page; search by meaning; every
field of the card edited with history; each save's own reason; no raw value where people read."""

import json
import os
import re
import time

import pytest

from ftamem_core.governance import consent
from ftamem_core.config import load_settings
from ftamem_core.construction.builder import Builder
from ftamem_core.llm.embeddings import Embedder
from ftamem_core.loaders import load_file
from ftamem_core.storage.store import Store

from conftest import SAMPLE, free_port, serve_app
from test_browser import SHOTS, _text, _wait, browser  # noqa: F401 - browser is a fixture
from scripted import Pipeline
from test_pages import SCRIPT
from test_counselor_day import RawPipeline, SaidUnits, raw_values

pytestmark = pytest.mark.browser
SIZES = {"wide": (1280, 800), "phone": (390, 844)}
BUILT = "daniel-built"
WITHDRAWN = "daniel-withdrawn"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("counselor")
    db = tmp / "app.db"
    store = Store(db)
    for size in SIZES:  # one unbuilt case per window size, each with consent
        (doc,) = load_file(SAMPLE)
        doc.case.id = f"daniel-{size}"
        store.ingest([doc])
        consent.record(store, doc.case.id, "granted", "test", "browser test")
    (doc,) = load_file(SAMPLE)  # and one built, for the Memory page
    doc.case.id = BUILT
    store.ingest([doc])
    consent.record(store, BUILT, "granted", "test", "browser test")
    Builder(
        store,
        Pipeline().llm(),
        Embedder(),
        load_settings(environ={}, extraction={"ground_facts": False, "turns_per_unit": 0, "verbatim_fallback": False}),
    ).build(BUILT)
    (doc,) = load_file(SAMPLE)  # and one whose consent was withdrawn after its build
    doc.case.id = WITHDRAWN
    store.ingest([doc])
    consent.record(store, WITHDRAWN, "granted", "test", "browser test")
    Builder(
        store,
        Pipeline().llm(),
        Embedder(),
        load_settings(environ={}, extraction={"ground_facts": False, "turns_per_unit": 0, "verbatim_fallback": False}),
    ).build(WITHDRAWN)
    consent.record(store, WITHDRAWN, "withdrawn", "Dr. Lee", "phoned")
    store.close()
    script = tmp / "script.json"
    script.write_text(json.dumps({**SCRIPT, "_delay": 0.5}))  # a scripted build of several seconds
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
    yield from (url for _ in serve_app(port, env))


def _button(driver, label):
    return next(b for b in driver.find_elements("css selector", "button") if b.text.strip() == label)


def _units_formed(text: str) -> int:
    found = re.search(r"Units formed \((\d+)\)", text)
    return int(found.group(1)) if found else -1


@pytest.mark.parametrize("size", SIZES)
def test_item1_a_build_is_watched_from_start_to_end_without_leaving_the_page(server, browser, size):
    browser.set_window_size(*SIZES[size])
    browser.get(f"{server}/build?case=daniel-{size}")
    # Waited for, not read at once: under load the page can be caught mid-draw with Stop not yet disabled.
    start = _wait(
        lambda: (
            _button(browser, "Start / resume build").is_enabled()
            and not _button(browser, "Stop").is_enabled()
            and _button(browser, "Start / resume build")
        ),
        60,
    )
    assert start is not None, "before Start: Start is not enabled, or Stop is"
    assert "No build started" in _text(browser)
    browser.execute_script("window.__same_page = 1")  # gone if the page were loaded again
    start.click()
    # From the click on, the page shows the build as it goes: running, the window, units forming.
    assert _wait(lambda: "running ·" in _text(browser), 90), "the page did not show the build running"
    assert _wait(
        lambda: not _button(browser, "Start / resume build").is_enabled() and _button(browser, "Stop").is_enabled(), 90
    ), "the buttons did not follow the running build"
    seen = set()
    deadline = time.time() + 600  # generous: the 2 cores may be shared with a model run
    while time.time() < deadline:
        text = _text(browser)
        if "running ·" in text:
            seen.add(("window", "Window turns" in text))
            seen.add(("units", _units_formed(text)))
        if re.search(r"\ndone · ", "\n" + text) or "done · 33 of 33 turns" in text:
            break
        time.sleep(0.3)
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / f"build-live-{size}.png"))
    assert "done · 33 of 33 turns" in _text(browser), _text(browser)[-800:]
    assert ("window", True) in seen, "no window was shown while the build ran"
    assert any(kind == "units" and n in (1, 2) for kind, n in seen), f"no unit shown before the end: {seen}"
    assert _wait(
        lambda: _button(browser, "Start / resume build").is_enabled() and not _button(browser, "Stop").is_enabled(), 90
    ), "the buttons did not follow the ended build"
    assert _units_formed(_text(browser)) == 3
    assert browser.execute_script("return window.__same_page") == 1  # never left the page
    assert "No build started" not in _text(browser)


def _in_view(driver, element_id: str) -> bool:
    return driver.execute_script(
        "const el = document.getElementById(arguments[0]); if (!el) return false;"
        "const r = el.getBoundingClientRect(); return r.top >= -2 && r.top < window.innerHeight - 40;",
        element_id,
    )


@pytest.mark.parametrize("size", SIZES)
def test_item4_a_click_on_a_row_opens_its_unit_and_the_card_comes_into_view(server, browser, size):
    from selenium.webdriver.common.action_chains import ActionChains

    browser.set_window_size(*SIZES[size])
    browser.get(f"{server}/memory?case={BUILT}")
    grid = _wait(lambda: browser.find_element("css selector", "[data-testid=stDataFrame] canvas"), 60)
    assert grid is not None, "no units table"
    first = _wait(lambda: re.search(r"\bm(\d+)\b", browser.find_element("id", "unit-card").text), 30)
    assert first is not None
    browser.execute_script("arguments[0].scrollIntoView({block: 'start'})", grid)
    time.sleep(1)
    # The fourth row's second column (no checkbox there): row height ~35 px under a ~35 px header.
    ActionChains(browser).move_to_element_with_offset(grid, 0, 0).perform()
    box = grid.rect
    ActionChains(browser).move_by_offset(
        -box["width"] / 2 + 90, -box["height"] / 2 + 35 + 35 * 3 + 17
    ).click().perform()
    opened = _wait(
        lambda: (
            (m := re.search(r"\bm(\d+)\b", browser.find_element("id", "unit-card").text))
            and m.group(1) != first.group(1)
            and m.group(1)
        ),
        30,
    )
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / f"memory-row-click-{size}.png"))
    assert opened, "a click on a row's cell opened no other unit"
    assert _wait(lambda: _in_view(browser, "unit-card"), 10), "the card did not come into view"


@pytest.mark.parametrize("size", SIZES)
def test_item5_a_withdrawn_case_shows_its_banner_on_every_page_and_ask_refuses(server, browser, size):
    browser.set_window_size(*SIZES[size])
    for page in ("memory", "graph", "ask", "audit", "build", "privacy"):
        browser.get(f"{server}/{page}?case={WITHDRAWN}")
        banner = _wait(
            lambda: next(
                e
                for e in browser.find_elements("css selector", "[data-testid=stAlert]")
                if "Consent withdrawn for daniel-withdrawn" in e.text
            ),
            60,
        )
        assert banner is not None, f"{page}: no consent banner"
        assert browser.execute_script("return arguments[0].getBoundingClientRect().top < window.innerHeight", banner), (
            f"{page}: the banner is not on the first screen"
        )
        if page == "ask":
            assert not [
                e
                for e in browser.find_elements("css selector", "input[type=text]")
                if e.get_attribute("aria-label") == "Question"
            ], "ask: a question box for a withdrawn case"
        if page == "build":
            grant = _wait(lambda: _button(browser, "Record consent granted"), 120)
            assert grant is not None and not grant.is_enabled()  # no name typed: no one-click re-grant
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / f"consent-withdrawn-{size}.png"))


def _box(driver, label):
    return next(
        e for e in driver.find_elements("css selector", "input[type=text]") if e.get_attribute("aria-label") == label
    )


def _open_sidebar(driver):
    """On a phone the sidebar starts folded: unfold it."""
    if not _box(driver, "Your name (for the edit history)").is_displayed():
        for selector in ("[data-testid=stExpandSidebarButton]", "[data-testid=stSidebarCollapsedControl] button"):
            found = driver.find_elements("css selector", selector)
            if found:
                found[0].click()
                break
        _wait(lambda: _box(driver, "Your name (for the edit history)").is_displayed(), 10)


def _fold_sidebar(driver):
    """On a phone an unfolded sidebar covers the page, and the browser remembers it from an earlier test: fold it."""
    if driver.get_window_size()["width"] >= 640:
        return
    for button in driver.find_elements("css selector", "[data-testid=stSidebarCollapseButton] button"):
        if button.get_attribute("aria-expanded") == "true":
            driver.execute_script("arguments[0].click()", button)  # the button shows on hover only
            _wait(lambda: not _box(driver, "Your name (for the edit history)").is_displayed(), 10)


@pytest.mark.parametrize("size", SIZES)
def test_item10_the_typed_name_is_kept_across_a_reload(server, browser, size):
    from selenium.webdriver.common.keys import Keys

    browser.set_window_size(*SIZES[size])
    browser.delete_all_cookies()
    browser.get(f"{server}/?case={BUILT}")
    assert _wait(lambda: _box(browser, "Your name (for the edit history)"), 60)
    _open_sidebar(browser)
    box = _box(browser, "Your name (for the edit history)")
    box.send_keys(f"Dr. Lee {size}", Keys.ENTER)
    assert _wait(lambda: "ftamem_who" in {c["name"] for c in browser.get_cookies()}, 20), "no cookie written"
    (cookie,) = [c for c in browser.get_cookies() if c["name"] == "ftamem_who"]
    assert "expiry" not in cookie  # a session cookie: gone when the browser closes
    assert size not in browser.current_url  # never in the URL
    browser.refresh()
    assert _wait(
        lambda: _box(browser, "Your name (for the edit history)").get_attribute("value") == f"Dr. Lee {size}", 60
    ), "the name was lost on reload"


@pytest.mark.parametrize("size", SIZES)
def test_item9_ask_shows_the_counselors_view_with_the_research_view_folded(server, browser, size):
    browser.set_window_size(*SIZES[size])
    browser.get(f"{server}/ask?case={BUILT}")
    assert _wait(lambda: _box(browser, "Question"), 60)
    _wait(lambda: not browser.find_elements("css selector", "[data-testid=stStatusWidget]"), 60)
    _fold_sidebar(browser)
    _submit_question(browser, "When did Daniel's father move into a care home?")
    assert _wait(lambda: "Answered in" in _text(browser), 120), "no answer"
    # The page may still be drawing the sources below the answer.
    assert _wait(lambda: "Answer\n" in _text(browser) and "Sources" in _text(browser), 30), _text(browser)[-800:]
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / f"ask-counselor-{size}.png"))
    text = _text(browser)
    assert "Research view" in text and "Scored candidates" not in text  # folded away
    assert "##" not in text and "s_emb" not in text
    next(e for e in browser.find_elements("css selector", "summary") if "Research view" in e.text).click()
    assert _wait(lambda: "Scored candidates" in _text(browser), 20)


SAID = "daniel-said"  # units in Daniel's words ("Dad", "care home on October 3rd")
RAW = "daniel-raw"  # stored values of the raw kind: support_interaction, unknown, followup_of, ISO dates
QUESTION = "When did Daniel's father move into a care home?"


@pytest.fixture(scope="module")
def said_server(tmp_path_factory):
    """A second app whose scripted model cites the unit that says "care home", as a model reading the
    packet would (the answer stage only accepts units the packet shows, so the citation holds only if
    that unit reached the packet), with a packet budget small enough that kept units are left out."""
    tmp = tmp_path_factory.mktemp("said")
    db = tmp / "app.db"
    store = Store(db)
    settings = load_settings(
        environ={},
        extraction={"ground_facts": False, "turns_per_unit": 0, "verbatim_fallback": False},
    )
    for case_id, pipeline in ((SAID, SaidUnits()), (RAW, RawPipeline())):
        (doc,) = load_file(SAMPLE)
        doc.case.id = case_id
        store.ingest([doc])
        consent.record(store, case_id, "granted", "test", "browser test")
        Builder(store, pipeline.llm(), Embedder(), settings).build(case_id)
    (care,) = [u for u in store.units(SAID) if "care home" in u.fact.text]
    units = {"care": care.id, "units": [u.id for u in store.units(SAID)]}
    store.close()
    script = tmp / "script.json"
    script.write_text(
        json.dumps({**SCRIPT, "answer": {"answer": "On October 3rd.", "cited_unit_ids": [f"m{care.id}"]}})
    )
    port = free_port()
    env = {
        **os.environ,
        "FTAMEM_STORAGE_DB_PATH": str(db),
        "FTAMEM_LLM_BACKEND": "scripted",
        "FTAMEM_LLM_MODEL": str(script),
        "FTAMEM_EXTRACTION_TURNS_PER_UNIT": "0",
        "FTAMEM_EXTRACTION_VERBATIM_FALLBACK": "false",
        "FTAMEM_EXTRACTION_GROUND_FACTS": "false",
        "FTAMEM_RETRIEVAL_PACKET_TOKEN_BUDGET": "400",
    }
    url = f"http://127.0.0.1:{port}"
    yield from ({"url": url, "db": db, **units} for _ in serve_app(port, env))


def _main(driver) -> str:
    """The main area's text as a person reads it (not the sidebar)."""
    return driver.find_element("css selector", "[data-testid=stMain]").text.replace("\u2060", "")


def _alerts(driver) -> list[str]:
    return [e.text for e in driver.find_elements("css selector", "[data-testid=stAlert]")]


# What the Ask page shows once a question is under way (its status line, each stage, or the end).
STARTED = ("Asking…", " · step ", "your question waits for it", "Answered in", "could not be answered")


def _submit_question(driver, question):
    """Type the question and press Ask; again if the page was redrawn under the keys and nothing started
    (seen once in CI: the box took the text, the form never submitted, no answer after four minutes)."""
    for _ in range(3):
        _set(driver, "Question", question)
        clicked = _wait(lambda: _button(driver, "Ask").click() or True, 30)
        assert clicked, "no Ask button"
        if _wait(lambda: any(mark in _text(driver) for mark in STARTED), 30):
            return
    raise AssertionError("the question was never submitted: " + _text(driver)[-800:])


def _ask(driver, url, case_id):
    """Open Ask for this case and ask the care-home question; True once the answer and its sources are shown."""
    driver.get(f"{url}/ask?case={case_id}")
    assert _wait(lambda: _box(driver, "Question"), 60)
    _wait(lambda: not driver.find_elements("css selector", "[data-testid=stStatusWidget]"), 60)
    _fold_sidebar(driver)
    _submit_question(driver, QUESTION)
    return bool(
        _wait(lambda: "Answered in" in _main(driver), 240)
        and _wait(lambda: "Sources" in _main(driver) and "Research view" in _main(driver), 60)
    )


@pytest.mark.parametrize("size", SIZES)
def test_item2_the_care_home_question_cites_the_care_home_unit_and_says_which_kept_units_were_left_out(
    said_server, browser, size
):
    browser.set_window_size(*SIZES[size])
    assert _ask(browser, said_server["url"], SAID), _main(browser)[-800:]
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / f"ask-citation-{size}.png"))
    text = _main(browser)
    care = said_server["care"]
    sources = text.split("Sources", 1)[1]
    # The cited unit is the care-home unit, opened under Sources with its turn, numbered from 1.
    assert re.search(rf"m{care}: .*care home", sources), sources[:600]
    assert "Dad moved into Oakwood care home on October 3rd" in sources
    assert re.search(r"\[29\] Daniel: I guess\. Also, Dad moved into Oakwood care home", sources)
    # Kept units the model did not see are named, with why.
    said = re.search(r"Kept for this question but not shown to the model: (.*)", sources)
    assert said and re.search(r"m\d+ \(the packet's token budget was full\)", said.group(1)), sources[:1200]
    assert f"m{care} (" not in said.group(1)  # the cited unit is not among them


@pytest.mark.parametrize("size", SIZES)
def test_item3_a_link_to_an_unknown_case_or_a_deleted_unit_says_so_and_offers_the_list(said_server, browser, size):
    from ftamem_core.governance.editing import delete_unit

    browser.set_window_size(*SIZES[size])
    url = said_server["url"]
    browser.get(f"{url}/memory?case=no-such-case")
    said = _wait(lambda: next(a for a in _alerts(browser) if "no-such-case" in a), 60)
    assert said and "which is not here" in said, _alerts(browser)
    assert _wait(lambda: browser.find_elements("css selector", "[data-testid=stMain] [data-testid=stDataFrame]"), 20), (
        "no list of the cases offered"
    )
    assert not browser.find_elements("id", "unit-card")  # no case's unit opened in its place
    assert "case=no-such-case" in browser.current_url  # the link is left as it was asked
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / f"unknown-case-{size}.png"))

    gone = said_server["units"][-1]  # a unit deleted since the link was made
    store = Store(said_server["db"])
    try:
        if any(u.id == gone for u in store.units(SAID)):
            delete_unit(store, SAID, gone, "Dr. Lee", "not said")
    finally:
        store.close()
    browser.get(f"{url}/memory?case={SAID}&unit={gone}")
    said = _wait(lambda: next(a for a in _alerts(browser) if f"m{gone} " in a), 60)
    assert said and "not in this case" in said, _alerts(browser)
    # Waited for: the grid can mount after the alert drawn below it (seen under load, on main's code too).
    assert _wait(lambda: browser.find_elements("css selector", "[data-testid=stMain] [data-testid=stDataFrame]"), 20), (
        "no units table"
    )
    time.sleep(1)
    assert not browser.find_elements("id", "unit-card")  # no other unit opened in its place
    assert f"unit={gone}" in browser.current_url
    browser.save_screenshot(str(SHOTS / f"deleted-unit-{size}.png"))


@pytest.mark.parametrize("size", SIZES)
def test_item6_search_for_father_finds_the_units_saying_dad(said_server, browser, size):
    from selenium.webdriver.common.keys import Keys

    browser.set_window_size(*SIZES[size])
    browser.get(f"{said_server['url']}/memory?case={SAID}")
    box = _wait(lambda: _box(browser, "Text contains"), 60)
    assert box and _wait(lambda: browser.find_element("id", "unit-card"), 30)
    _fold_sidebar(browser)
    first = re.search(r"Fact \[[^\]]*\]: (.*)", _main(browser))
    assert first and not re.search(r"\bdad\b", first.group(1), re.I)  # the card opened first is not about him
    box.click()
    box.send_keys("father", Keys.ENTER)

    def card_says_dad():
        fact = re.search(r"Fact \[[^\]]*\]: (.*)", _main(browser))
        return fact and re.search(r"\bdad\b", fact.group(1), re.I) and fact.group(0)

    card = _wait(card_says_dad, 60)
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / f"search-father-{size}.png"))
    assert card, f"the card after searching 'father' says no 'dad': {_main(browser)[:800]}"
    fact = re.search(r"Fact \[[^\]]*\]: (.*)", card).group(1)
    assert re.search(r"\bdad\b", fact, re.I) and "father" not in fact.lower(), fact
    assert "by its words or its meaning" not in _main(browser)  # not "nothing matches"


def _type_name(driver, name):
    from selenium.webdriver.common.keys import Keys

    label = "Your name (for the edit history)"
    assert _wait(lambda: _box(driver, label), 60), "no name box in the sidebar"
    if _box(driver, label).get_attribute("value") != name:  # a name kept from an earlier test is used as it is
        _wait(lambda: _open_sidebar(driver) or True, 30)
        box = _box(driver, label)
        box.send_keys(Keys.CONTROL, "a")
        box.send_keys(name, Keys.ENTER)
        assert _wait(lambda: _box(driver, label).get_attribute("value") == name, 20)
        time.sleep(1)
    _fold_sidebar(driver)


def _open_editor(driver, url, case_id, unit_id):
    driver.get(f"{url}/memory?case={case_id}&unit={unit_id}")
    assert _wait(lambda: f"m{unit_id}" in driver.find_element("id", "unit-card").text, 60)
    _type_name(driver, "Dr. Lee")

    def toggle():
        found = next(
            e
            for e in driver.find_elements("css selector", "[data-testid=stCheckbox] label")
            if e.text.strip() == "Edit"
        )
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", found)
        found.click()
        return True

    for _ in range(3):  # the toggle may be redrawn under the click (the name just typed reruns the page)
        if _wait(lambda: _box(driver, "Reason for the change"), 20):
            break
        assert _wait(toggle, 30), "no Edit toggle"
    assert _wait(lambda: _box(driver, "Reason for the change"), 30), "the edit form did not open"


def _set(driver, label, value):
    """Type a value into a text box, again if the page redrew the box meanwhile."""
    from selenium.webdriver.common.keys import Keys

    def typed():
        box = _box(driver, label)
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", box)
        box.click()
        box.send_keys(Keys.CONTROL, "a", Keys.DELETE)
        box.send_keys(value)
        return _box(driver, label).get_attribute("value") == value

    assert _wait(typed, 30), f"could not type into {label}"


def _save(driver):
    def clicked():
        button = _button(driver, "Save correction")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
        button.click()
        return True

    assert _wait(clicked, 30), "no Save correction button"


def _history(db, unit_id) -> list[dict]:
    from ftamem_core.governance.editing import history

    store = Store(db)
    try:
        return history(store, SAID, "unit", unit_id)
    finally:
        store.close()


@pytest.mark.parametrize("size", SIZES)
def test_item7_who_the_time_as_said_and_relations_are_edited_with_history(said_server, browser, size):
    browser.set_window_size(*SIZES[size])
    unit_id = said_server["units"][2 if size == "wide" else 3]
    _open_editor(browser, said_server["url"], SAID, unit_id)
    _set(browser, "Who (names, comma-separated)", f"Daniel, his father ({size})")
    _set(browser, "Time as said", "last July")
    _set(browser, "Relations", "son of the man with dementia")
    _set(browser, "Reason for the change", "heard again in session 2")
    _save(browser)
    card = lambda: _main(browser)  # noqa: E731 - the one card on the page
    assert _wait(lambda: f"Who: Daniel, his father ({size})" in card(), 60), card()
    assert "said as: last July" in card() and "Relations: son of the man with dementia" in card()
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / f"edit-who-time-relations-{size}.png"))
    fields = {h["field"]: h for h in _history(said_server["db"], unit_id)}
    for field, new in (
        ("fact.participants", f"his father ({size})"),
        ("time.event_time_expression", "last July"),
        ("affect.relation_cues", "son of the man with dementia"),
    ):
        assert field in fields and new in fields[field]["new"], (field, fields.get(field))
        assert fields[field]["who"] == "Dr. Lee" and fields[field]["reason"] == "heard again in session 2"


@pytest.mark.parametrize("size", SIZES)
def test_item8_saving_twice_with_different_reasons_stores_each_reason(said_server, browser, size):
    browser.set_window_size(*SIZES[size])
    unit_id = said_server["units"][4 if size == "wide" else 5]
    _open_editor(browser, said_server["url"], SAID, unit_id)
    for n, why in enumerate([f"first reason {size}", f"second reason {size}"]):
        _set(browser, "Summary", f"corrected summary {n} ({size})")
        _set(browser, "Reason for the change", why)
        _save(browser)
        saved = lambda: [h["reason"] for h in _history(said_server["db"], unit_id) if h["field"] == "fact.summary"]  # noqa: E731
        assert _wait(lambda: len(saved()) == n + 1, 60), saved()
        # The form comes back without the reason just used: the next change gives its own.
        assert _wait(lambda: _box(browser, "Reason for the change").get_attribute("value") == "", 30), _box(
            browser, "Reason for the change"
        ).get_attribute("value")
    assert saved() == [f"first reason {size}", f"second reason {size}"]
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / f"two-reasons-{size}.png"))


def _network_labels(driver) -> list[str]:
    """The Graph network's node and edge labels and tooltips, read inside its frame."""
    frame = _wait(
        lambda: next(
            f
            for f in driver.find_elements("css selector", "iframe")
            if "vis.Network" in (f.get_attribute("srcdoc") or "")
        ),
        60,
    )
    assert frame is not None, "no graph frame"
    driver.switch_to.frame(frame)
    try:
        _wait(lambda: driver.execute_script("return document.body.dataset.rendered") == "yes", 60)
        return driver.execute_script(
            "return nodes.concat(edges).flatMap(i => [String(i.label || ''),"
            " i.title ? (i.title.textContent || String(i.title)) : ''])"
        )
    finally:
        driver.switch_to.default_content()


@pytest.mark.parametrize("size", SIZES)
def test_item10_no_raw_enum_iso_date_none_or_session_0_on_memory_graph_and_ask(said_server, browser, size):
    browser.set_window_size(*SIZES[size])
    url = said_server["url"]
    browser.get(f"{url}/memory?case={RAW}")
    assert _wait(lambda: "Fact [support interaction]" in _main(browser), 60), _main(browser)[:800]
    _fold_sidebar(browser)
    text = _main(browser)
    assert re.search(r"m\d+ follow-up of m\d+ \(high confidence\)", text), text
    assert "Time: 3 October 2025" in text and "said on 12 September 2025" in text
    assert raw_values(text.splitlines()) == [], raw_values(text.splitlines())
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / f"raw-memory-{size}.png"))

    browser.get(f"{url}/graph?case={RAW}")
    assert _wait(lambda: "A unit" in _main(browser), 60)
    labels = _network_labels(browser)
    assert any("follow-up of" in s for s in labels) and any("support interaction" in s for s in labels), labels[:6]
    assert raw_values(labels) == [], raw_values(labels)
    text = _main(browser)
    assert raw_values(text.splitlines()) == [], raw_values(text.splitlines())
    browser.save_screenshot(str(SHOTS / f"raw-graph-{size}.png"))

    assert _ask(browser, url, SAID), _main(browser)[-800:]
    counselor = _main(browser).split("Research view", 1)[0]
    assert "Turns 29, said 10 October 2025" in counselor or re.search(r"Turns \d+(–\d+)?, said \d+ \w+ 2025", counselor)
    assert raw_values(counselor.splitlines()) == [], raw_values(counselor.splitlines())
    browser.save_screenshot(str(SHOTS / f"raw-ask-{size}.png"))
