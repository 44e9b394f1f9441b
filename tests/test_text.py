"""Language-specific rules live in ftamem_core/text; the repairs that read English words are off
for a case in another language, and the build and the audit's checks say so."""

from ftamem_core.governance import audit, consent
from ftamem_core.construction.build_events import LanguageNote
from ftamem_core.config import load_settings
from ftamem_core.construction.builder import Builder
from ftamem_core.models import Case, CaseDocument, Session, SessionDocument, Turn
from ftamem_core.text.english import REPAIRS_OFF, is_english

from scripted import HashEmbedder, Pipeline, turn_indices, section, unit

ENGLISH = [
    "I finally passed my welding certificate on Friday!",
    "Congrats! Was it hard?",
    "The practical part was brutal, I was so nervous. Next I want to apply at the shipyard.",
]
CHINESE = [
    "我上周五终于通过了焊接证书考试！",
    "恭喜！难吗？",
    "实操部分很难，我非常紧张。接下来我想去船厂应聘。",
    "我父亲去年去世了，我还是很想他。",
    "你现在怎么照顾自己？",
    "我每天早上去公园散步，这让我平静下来。",
]
GERMAN = [
    "Ich habe am Freitag endlich meine Schweißprüfung bestanden!",
    "Glückwunsch! War es schwer?",
    "Der praktische Teil war brutal, ich war so nervös. Als Nächstes will ich mich bei der Werft bewerben.",
]
SPANISH = [
    "¡Por fin aprobé mi certificado de soldadura el viernes!",
    "¡Felicidades! ¿Fue difícil?",
    "La parte práctica fue brutal, estaba muy nervioso. Después quiero postularme en el astillero.",
]


# Colloquial turns share short words with English ("no", "me", "a", "so", "also", "was").
COLLOQUIAL = {
    "es": [
        "no sé, me siento mal",
        "a veces pienso que no puedo más, la verdad",
        "sí, también lo creo",
        "vale, gracias por escucharme",
        "no, no es así, es que me cuesta mucho",
    ],
    "de": [
        "ich weiß nicht, mir geht es so schlecht",
        "ja, das war so, also wirklich",
        "na gut, also dann",
        "danke dir, das hilft mir",
        "was soll ich denn jetzt machen",
    ],
    "it": [
        "no, non ce la faccio più",
        "a me sembra che sia così, sai",
        "va bene, grazie mille",
        "anche io ci penso sempre",
        "mi manca tanto mio padre",
    ],
}


def test_english_is_told_from_chinese_german_and_spanish():
    assert is_english(ENGLISH * 2)
    assert not is_english(CHINESE) and not is_english(GERMAN) and not is_english(SPANISH)


def test_colloquial_spanish_german_and_italian_are_not_english():
    for language, turns in COLLOQUIAL.items():
        assert not is_english(turns), language


def test_a_mostly_chinese_case_with_some_english_words_is_not_english():
    assert not is_english([line + " OK, thanks" for line in CHINESE])


def test_too_little_text_to_tell_counts_as_english():
    assert is_english(["Thanks!", "Bye!", "Yes."]) and is_english([]) and is_english(["12 34 !!"])


def test_a_long_case_is_read_from_a_sample_of_its_turns():
    assert is_english(ENGLISH * 5000) and not is_english(SPANISH * 5000)


def _case(store, lines, case_id="zh"):
    store.ingest(
        [
            CaseDocument(
                case=Case(id=case_id),
                sessions=[
                    SessionDocument(
                        session=Session(source_id="s1", time="2025-03-07"),
                        turns=[
                            Turn(
                                role="user" if i % 2 == 0 else "assistant",
                                speaker="李明" if i % 2 == 0 else "咨询师",
                                text=t,
                            )
                            for i, t in enumerate(lines)
                        ],
                    )
                ],
            )
        ]
    )
    consent.record(store, case_id, "granted", "test", "scripted case")


def _build(store, case_id):
    pipeline = Pipeline(seg_size=6)

    def invented(messages):  # a fact no turn says, in the case's language
        idx = turn_indices([{"content": section(messages, "Fragment turns:")}])
        return {"memory_units": [unit("李明去了月球。", idx[0], idx[-1])]}

    pipeline.extraction = invented
    events = []
    report = Builder(store, pipeline.llm(), HashEmbedder(), load_settings(environ={}), progress=events.append).build(
        case_id
    )
    return report, events


def test_a_chinese_case_is_built_with_the_english_repairs_off_and_the_build_says_so(store):
    _case(store, CHINESE)
    report, events = _build(store, "zh")
    assert report.status == "done" and len(report.notes) == 1 and "not English" in report.notes[0]
    language = [e for e in events if isinstance(e, LanguageNote)]
    off = {f"{phase}.{name}": value for phase, values in REPAIRS_OFF.items() for name, value in values.items()}
    assert language and set(language[0].off) <= set(off)
    recorded = store.builds("zh")[-1].settings  # by phase
    assert all(recorded[name.split(".")[0]][name.split(".")[1]] == value for name, value in off.items())
    assert [u.fact.text for u in store.units("zh")] == ["李明去了月球。"]  # kept: no English check judged it

    # The audit's word checks do not apply: none passes an invented fact for want of a known word.
    round_id = audit.new_round(store, ["zh"], n_units=1, n_pairs=0, seed=1)
    item = audit.items(store, round_id)[0]
    checks = next(iter(audit.rounds.item_checks(store, item).values()))
    assert checks["fact_in_evidence"] is None and checks["subject_in_evidence"] is None
    assert checks["span_in_session"] is True


def test_an_english_case_keeps_its_repairs_and_no_note(store):
    _case(store, ENGLISH * 2, case_id="en")
    report, events = _build(store, "en")
    assert report.notes == [] and not [e for e in events if isinstance(e, LanguageNote)]
    assert store.builds("en")[-1].settings["extraction"]["ground_facts"] is True


def test_a_sentence_does_not_end_after_a_title_or_an_abbreviation():
    from ftamem_core.text.english_sentences import sentences

    assert sentences("Would you co-run it with Ms. Okafor? I said no. Dr. Lee came!") == [
        "Would you co-run it with Ms. Okafor?",
        "I said no.",
        "Dr. Lee came!",
    ]
    assert sentences("We walk, e.g. to the park. Then tea…  ok") == ["We walk, e.g. to the park.", "Then tea…", "ok"]
    assert sentences("I asked Mom. She said yes.") == ["I asked Mom.", "She said yes."]  # not a title
    # "MS." the illness, "St." a street and "Jr." end sentences
    assert sentences("My wife has MS. How do I cope?") == ["My wife has MS.", "How do I cope?"]
    assert sentences("We live on Elm St. Come over!") == ["We live on Elm St.", "Come over!"]


def test_a_copy_quotes_a_question_that_names_a_title_whole():
    from ftamem_core.construction.extraction import Fragment, verbatim_units

    turns = [
        Turn(idx=0, role="assistant", speaker="Counselor", text="Would you co-run it with Ms. Okafor for the fair?"),
        Turn(idx=1, role="user", speaker="Daniel", text="No. I told her I can't take on more this term."),
    ]
    (copy,) = verbatim_units(Fragment("c", 1, turns, "2025-03-05"), [], min_words=4)
    assert copy.fact.text.startswith('Counselor asked "Would you co-run it with Ms. Okafor for the fair?"')
