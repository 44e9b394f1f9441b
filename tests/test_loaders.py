import json

import pytest

from ftamem_core.ingest import ingest_file
from ftamem_core.loaders import LoadError, load_file
from ftamem_core.loaders.common import parse_time

from conftest import ESMEMEVAL, LOCOMO, SAMPLE


def test_locomo_whole_file():
    docs = load_file(LOCOMO)
    assert len(docs) == 10
    assert sum(len(d.sessions) for d in docs) == 272
    assert sum(d.turn_count for d in docs) == 5882
    assert sum(len(d.questions) for d in docs) == 1986
    conv26 = docs[0]
    assert conv26.case.id == "conv-26" and len(conv26.sessions) == 19  # 35 date keys, 19 sessions
    first = conv26.sessions[0]
    assert first.session.time == "2023-05-08T13:56" and first.session.time_text == "1:56 pm on 8 May, 2023"
    assert first.turns[0].original_id == "D1:1" and first.turns[0].speaker == "Caroline"
    photo = next(t for t in first.turns if t.original_id == "D1:5")
    assert "[shares a photo of a dog walking past a wall" in photo.text
    categories = {q.category for d in docs for q in d.questions}
    assert categories == {"1", "2", "3", "4", "5"}
    adversarial = [q for d in docs for q in d.questions if q.category == "5"]
    assert any(q.answer is None and "adversarial_answer" in q.meta for q in adversarial)


def test_esmemeval_sample():
    (doc,) = load_file(ESMEMEVAL)
    assert doc.case.id == "sample-maya" and doc.case.source_format == "esmemeval"
    assert [s.session.source_id for s in doc.sessions] == ["s1", "s2", "s3"]
    assert doc.sessions[0].session.time == "2025-03-02"
    t = doc.sessions[0].turns[2]
    assert (t.role, t.speaker, t.original_id) == ("user", "Maya", "s1:2")
    assert doc.sessions[0].turns[1].role == "assistant"
    assert {q.category for q in doc.questions} <= {"IE", "TR", "CD", "Abs", "UM"}
    assert all(":" in e for q in doc.questions for e in q.evidence)
    assert doc.case.profile["basic_info"]["job"] == "nurse"


def test_esmemeval_full_capability_names(tmp_path):
    data = json.loads(ESMEMEVAL.read_text())
    data[0]["questions"][0]["questions"][0]["capability"] = "Temporal Reasoning"
    path = tmp_path / "full.json"
    path.write_text(json.dumps(data))
    (doc,) = load_file(path)
    assert doc.questions[0].category == "TR"
    data[0]["questions"][0]["questions"][0]["capability"] = "mind reading"
    path.write_text(json.dumps(data))
    with pytest.raises(LoadError, match="unknown capability"):
        load_file(path)


def test_bundled_sample_is_generic_json():
    (doc,) = load_file(SAMPLE)
    assert doc.case.id == "sample-daniel" and len(doc.sessions) == 3 and doc.turn_count == 33
    assert doc.sessions[1].session.time == "2025-09-26T19:00"
    assert doc.questions[0].evidence == ["d1:2"]


def test_jsonl_turn_rows(tmp_path):
    rows = [
        {"case": "k", "session": "1", "session_time": "2025-01-02", "role": "user", "speaker": "Ana", "text": "hello"},
        {"case": "k", "session": "1", "speaker": "Counselor", "text": "hi Ana"},
        {"case": "k", "session": "2", "session_time": "2025-01-09", "speaker": "Ana", "text": "back again"},
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    (doc,) = load_file(path)
    assert [len(s.turns) for s in doc.sessions] == [2, 1]
    assert doc.sessions[0].turns[1].role == "assistant"  # guessed from the speaker's name
    assert doc.sessions[1].turns[0].timestamp == "2025-01-09"


def test_text_transcript(tmp_path):
    path = tmp_path / "maya.txt"
    path.write_text(
        "# Case: maya-notes\n\n## Session 2025-03-02 18:00\nMaya: I'm tired.\n"
        "Counselor: What is tiring you?\nMaya: Night shifts.\n  Three a week.\n"
        "## Session 16 March 2025\nDr. Lee [assistant]: Welcome back.\nMaya: Thanks: it's been a week.\n"
    )
    (doc,) = load_file(path)
    assert doc.case.id == "maya-notes"
    s1, s2 = doc.sessions
    assert s1.session.time == "2025-03-02T18:00" and s2.session.time == "2025-03-16"
    assert [t.role for t in s1.turns] == ["user", "assistant", "user"]
    assert s1.turns[2].text == "Night shifts.\nThree a week."
    assert (s2.turns[0].speaker, s2.turns[0].role) == ("Dr. Lee", "assistant")
    assert s2.turns[1].text == "Thanks: it's been a week."


def test_unreadable_time_is_kept_as_text():
    assert parse_time("sometime in spring") is None
    assert parse_time("8 May, 2023") == "2023-05-08"


@pytest.mark.parametrize(
    "content, place, problem",
    [
        ('{"id": "x", "sessions": [{"turns": [{"role": "user", "text": "hi"}', "line 1 column 67", "invalid JSON"),
        ('{"id": "x", "sessions": [{"turns": [{"role": "user"}]}]}', "$.sessions[0].turns[0]", "missing key 'text'"),
        (
            '{"id": "x", "sessions": [{"turns": [{"role": "user", "text": ["a"]}]}]}',
            "$.sessions[0].turns[0].text",
            "expected a string",
        ),
        ('{"id": "x", "sessions": [{"turns": []}]}', "$.sessions[0].turns", "session has no turns"),
        ('{"id": "x", "sessions": []}', "$.sessions", "no sessions"),
        (
            '{"id": "x", "sessions": [{"turns": [{"role": "boss", "text": "hi"}]}]}',
            "$.sessions[0].turns[0].role",
            "expected one of",
        ),
        ('{"id": "x", "sessions": "none"}', "$.sessions", "expected a list"),
        (
            '[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": [{"speaker": "A"}]}}]',
            "$[0].conversation.session_1[0]",
            "missing key 'text'",
        ),
        (
            '[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": []}}]',
            "$[0].conversation.session_1",
            "session has no turns",
        ),
        (
            '[{"id": "m", "dialog_history": [{"id": "s1", "dialogue": [{"idx": 0, "role": "seeker", "content": 5.5, "x": 1}, {"idx": 1, "role": "robot", "content": "hi"}]}]}]',
            "$[0].dialog_history[0].dialogue[1].role",
            "expected 'seeker' or 'supporter'",
        ),
    ],
)
def test_malformed_json_names_place_and_problem(tmp_path, content, place, problem):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(LoadError) as e:
        load_file(path)
    assert e.value.place.startswith(place) and problem in e.value.problem
    assert str(e.value).startswith("bad.json: ")


def test_non_utf8_bytes(tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes("## Session 2025-01-01\nJosé: olá\n".encode("latin-1"))
    with pytest.raises(LoadError, match="not valid UTF-8") as e:
        load_file(path)
    assert "line 2" in e.value.place


def test_huge_turn_is_refused(tmp_path):
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"id": "x", "sessions": [{"turns": [{"role": "user", "text": "a" * (5 << 20)}]}]}))
    with pytest.raises(LoadError, match="5,242,880 characters; the limit is 100,000"):
        load_file(path)
    assert load_file(path, max_turn_chars=6 << 20)[0].turn_count == 1


def test_text_transcript_errors(tmp_path):
    path = tmp_path / "t.txt"
    for content, where in [
        ("Maya: hi\n", "line 1"),
        ("## Session 2025-01-01\njust words without a speaker\n", "line 2"),
        ("## Session 2025-01-01\n## Session 2025-01-02\nA: b\n", "line 2"),
        ("## Session 2025-01-01\n", "end of file"),
    ]:
        path.write_text(content)
        with pytest.raises(LoadError) as e:
            load_file(path)
        assert e.value.place == where


def test_truncated_locomo_writes_nothing(tmp_path, store):
    text = LOCOMO.read_text()
    path = tmp_path / "locomo_cut.json"
    path.write_text(text[: len(text) // 2])
    with pytest.raises(LoadError, match="invalid JSON"):
        ingest_file(store, path)
    assert store.list_cases() == []


def test_ingest_one_case_of_many(store):
    assert ingest_file(store, LOCOMO, only=["conv-30"]) == {"conv-30": "added"}
    (row,) = store.list_cases()
    assert (row["sessions"], row["turns"], row["questions"]) == (19, 369, 105)
    with pytest.raises(LoadError, match="no case nope"):
        ingest_file(store, LOCOMO, only=["nope"])


@pytest.mark.parametrize(
    "body",
    [
        "## Session 2025-03-02\nMaya:" + " " * 1_000_000 + "x\n",  # a turn of spaces: read, then refused as too long
        "## Session 2025-03-02\nMaya" + " " * 1_000_000 + "x: hello\n",  # spaces where a speaker name goes
        "## Session 2025-03-02\n" + "y" + " " * 1_000_000 + "z\n",
        "# Case: a" + " " * 1_000_000 + "b\n## Session x\nMaya: hi\n",
        "## Session 2025" + " " * 1_000_000 + "-03-02 x\nMaya: hi\n",
        "## Session 2025-03-02\nMaya: " + "word " * 1_000_000 + "\n",  # a 5 MB single line
    ],
)
def test_transcript_lines_of_any_length_parse_in_one_pass(tmp_path, body):
    """The turn pattern once backtracked quadratically on runs of spaces (8,000 took 7 s; a
    million would take hours): each of these is now parsed or refused at once."""
    path = tmp_path / "long.txt"
    path.write_text(body)
    try:
        (doc,) = load_file(path)
    except LoadError as e:
        assert str(e).count("\n") == 0
    else:
        assert doc.sessions and all(len(t.text) <= 100_000 for s in doc.sessions for t in s.turns)


def test_a_speaker_with_spaces_and_a_role_still_parses(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("## Session 2025-03-02\nDr. Lee   [assistant]  :   Hello there.\nNot a speaker line\n")
    with pytest.raises(LoadError, match="line 3: expected 'Speaker: text'"):
        load_file(path)
    path.write_text("## Session 2025-03-02\nDr. Lee   [assistant]  :   Hello there.\n")
    (doc,) = load_file(path)
    turn = doc.sessions[0].turns[0]
    assert (turn.speaker, turn.role, turn.text) == ("Dr. Lee", "assistant", "Hello there.")


def _esmemeval(name):
    return [
        {
            "id": "s1",
            "basic_info": {"name": name},
            "dialog_history": [
                {"id": "d1", "timestamp": "2025-03-02", "dialogue": [{"role": "seeker", "content": "hi"}]}
            ],
        }
    ]


@pytest.mark.parametrize(
    "content, problem",
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"x": ' + "9" * 5000 + "}", "invalid JSON"),
        (json.dumps([{"case": "c", "session": "s", "speaker": "A", "text": "hi \ud800"}]), "lone surrogate"),
        (json.dumps(_esmemeval(["not", "a", "name"])), "basic_info.name: expected a string or an integer"),
        (
            json.dumps({"id": "", "sessions": [{"id": "s", "turns": [{"speaker": "A", "text": "hi"}]}]}),
            "id: String should have at least 1 character",
        ),  # a value the models refuse
    ],
)
def test_hostile_json_gets_one_readable_line_and_stores_nothing(tmp_path, store, content, problem):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(LoadError, match=problem) as info:
        ingest_file(store, path)
    assert "\n" not in str(info.value) and str(info.value).startswith("bad.json")
    assert store.list_cases() == []


def test_hostile_json_through_the_command_line(tmp_path, capsys):
    from ftamem_core.cli import main

    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    assert main(["--db", str(tmp_path / "m.db"), "ingest", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nested too deeply" in err


@pytest.mark.parametrize(
    "name, expected",
    [
        ("..", "upload"),
        ("../../etc/passwd", "passwd"),
        ("/", "upload"),
        ("maya notes.txt", "maya_notes.txt"),
        (".hidden.json", "hidden.json"),
    ],
)
def test_uploaded_file_names_stay_inside_the_temporary_folder(tmp_path, name, expected):
    from ftamem_core.ingest import upload_name

    assert upload_name(name) == expected
    assert (tmp_path / upload_name(name)).resolve().parent == tmp_path.resolve()
