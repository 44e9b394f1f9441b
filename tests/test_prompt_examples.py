"""The prompts' worked examples are about people and events in no data the project ships, tests or
benchmarks: a small model that echoes an example must not echo a right answer (issue #9)."""

import re
from pathlib import Path

import pytest

from conftest import ROOT, SHARED_DATA
from ftamem_core.llm.prompts import PROMPT_DIR

PROMPTS = sorted(p for p in PROMPT_DIR.iterdir() if p.name.endswith(".md"))
CALENDAR = {
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
}


def data_files() -> list[Path]:
    files = sorted((ROOT / "data").glob("*.json"))
    if SHARED_DATA.is_dir():
        files += sorted(p for p in SHARED_DATA.rglob("*") if p.suffix in (".json", ".jsonl"))
    return files


@pytest.fixture(scope="module")
def data_text() -> str:
    files = data_files()
    if not any(SHARED_DATA in p.parents for p in files):
        pytest.skip("../shared/data is not here")
    return "\n".join(p.read_text(encoding="utf-8", errors="ignore") for p in files)


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def test_no_prompt_names_a_person_of_the_data(data_text):
    # A name is a capitalised word that the data never writes in lower case on its own (ids such
    # as "sample-maya" do not count as lower-case uses).
    capitalised = set(re.findall(r"\b[A-Z][a-z]+\b", data_text))
    lower = set(re.findall(r"(?<![\w-])[a-z]+(?![\w-])", data_text))
    names = {w for w in capitalised if w.lower() not in lower} - CALENDAR
    assert {"Caroline", "Melanie", "Maya", "Daniel", "Priya"} <= names  # the test can see the data's people
    for prompt in PROMPTS:
        used = set(re.findall(r"\b[A-Z][a-z]+\b", prompt.read_text(encoding="utf-8")))
        assert not used & names, f"{prompt.name} names {sorted(used & names)} from the data"


def test_no_prompt_shares_a_six_word_phrase_with_the_data(data_text):
    tokens = words(data_text)
    seen = {" ".join(tokens[i : i + 6]) for i in range(len(tokens) - 5)}
    assert "i went to a lgbtq support" in seen  # a LoCoMo phrase: the data is read
    for prompt in PROMPTS:
        mine = words(prompt.read_text(encoding="utf-8"))
        shared = {" ".join(mine[i : i + 6]) for i in range(len(mine) - 5)} & seen
        assert not shared, f"{prompt.name} shares {sorted(shared)[:3]} with the data"


def test_partial_means_underspecified_as_in_the_paper():
    text = " ".join(PROMPT_DIR.joinpath("extraction.md").read_text(encoding="utf-8").split())
    assert "underspecified" in text and "continues beyond" not in text
