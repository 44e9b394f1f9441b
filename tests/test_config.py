import pytest
from pydantic import BaseModel, ValidationError

from ftamem_core.config import Settings, SettingsError, assignment, load_settings
from ftamem_core.setting import fields, leaves


def test_paper_defaults():
    s = load_settings(environ={})
    assert (
        s.segmentation.window_size,
        s.retrieval.tau,
        s.retrieval.lam,
        s.retrieval.top_k,
        s.retrieval.top_k_locomo,
        s.retrieval.link_expansion,
    ) == (20, 0.35, 0.8, 10, 25, 1)
    assert (s.construction.construction_temperature, s.answer.answer_temperature) == (0.7, 0.0)
    assert s.llm.backend == "embedded" and s.llm.model == "qwen2.5-1.5b"


def test_toml_then_environment_then_overrides(tmp_path):
    toml = tmp_path / "ftamem.toml"
    toml.write_text(
        '[segmentation]\nwindow_size = 12\n[retrieval]\ntau = 0.5\n[llm]\nbackend = "openai"\n'
        'base_url = "http://127.0.0.1:9/v1"\n'
    )
    s = load_settings(toml, environ={})
    assert (s.segmentation.window_size, s.retrieval.tau, s.llm.backend) == (12, 0.5, "openai")
    s = load_settings(toml, environ={"FTAMEM_RETRIEVAL_TAU": "0.4", "FTAMEM_LLM_MODEL": "Qwen/Qwen3-8B"})
    assert (s.segmentation.window_size, s.retrieval.tau, s.llm.model) == (12, 0.4, "Qwen/Qwen3-8B")
    s = load_settings(
        toml, environ={"FTAMEM_RETRIEVAL_TAU": "0.4"}, llm={"model": "x", "base_url": None}, retrieval={"tau": 0.2}
    )
    assert s.retrieval.tau == 0.2 and s.llm.model == "x" and s.llm.base_url == "http://127.0.0.1:9/v1"


def test_a_table_per_phase_in_the_toml_file(tmp_path):
    toml = tmp_path / "ftamem.toml"
    toml.write_text(
        "[input]\nmax_upload_mb = 5\n"
        "[extraction]\nground_facts = false\nfact_support = 0.6\n"
        "[linking]\nlink_threshold = 0.6\n"
        "[storage]\ndb_path = 'x.db'\n[storage.index]\nkind = 'flat'\n"
        "[governance]\nretention_days = 30\n[governance.auth]\nmax_failures = 3\n[governance.auth.users]\nana = 'h'\n"
        '[app.backends."GPU server"]\nbackend = "openai"\nbase_url = "http://gpu:8000/v1"\n'
    )
    s = load_settings(toml, environ={})
    assert s.input.max_upload_mb == 5 and s.extraction.ground_facts is False and s.extraction.fact_support == 0.6
    assert s.linking.link_threshold == 0.6 and s.storage.db_path == "x.db" and s.storage.index.kind == "flat"
    assert s.governance.retention_days == 30 and s.governance.auth.max_failures == 3
    assert s.governance.auth.users == {"ana": "h"} and s.app.backends["GPU server"].base_url == "http://gpu:8000/v1"
    # the other settings of a phase the file names keep their defaults
    assert s.extraction.speaker_check is True and s.linking.link_candidates == 5


def test_config_file_from_environment(tmp_path):
    toml = tmp_path / "other.toml"
    toml.write_text("[retrieval]\ntop_k = 7\n")
    assert load_settings(environ={"FTAMEM_CONFIG": str(toml)}).retrieval.top_k == 7


def test_bad_values_are_refused(tmp_path):
    with pytest.raises(ValidationError):
        load_settings(environ={"FTAMEM_RETRIEVAL_LAM": "1.5"})
    with pytest.raises(ValidationError):
        load_settings(environ={"FTAMEM_SEGMENTATION_WINDOW_SIZE": "many"})
    toml = tmp_path / "bad.toml"
    for text in ("no_such_setting = 1\n", "[retrieval]\nno_such_setting = 1\n", "[no_such_phase]\ntau = 1\n"):
        toml.write_text(text)
        with pytest.raises(ValidationError):
            load_settings(toml, environ={})


def test_every_phase_is_a_small_model_that_refuses_keys_it_does_not_hold():
    phases = [info.annotation for info in Settings.model_fields.values() if isinstance(info.annotation, type)]
    assert len(phases) >= 10
    for phase in phases:
        assert issubclass(phase, BaseModel) and phase.model_config.get("extra") == "forbid", phase
        assert len(phase.model_fields) <= 25, phase  # small: none holds what several phases read
    with pytest.raises(ValidationError):
        Settings.model_validate({"extraction": {"tau": 0.3, "bogus": 1}})


def test_environment_variables_name_the_phase(tmp_path):
    s = load_settings(
        environ={
            "FTAMEM_RETRIEVAL_TURN_CHANNEL": "4",
            "FTAMEM_EXTRACTION_SPEAKER_CHECK": "false",
            "FTAMEM_STORAGE_DB_PATH": str(tmp_path / "m.db"),
            "FTAMEM_STORAGE_INDEX_KIND": "hnsw",
            "FTAMEM_GOVERNANCE_AUTH_MAX_FAILURES": "2",
            "FTAMEM_GOVERNANCE_RETENTION_DAYS": "none",  # leaves the default
            "FTAMEM_ANSWER_ANSWER_MAX_TOKENS": "",
        }
    )
    assert s.retrieval.turn_channel == 4 and s.extraction.speaker_check is False
    assert s.storage.db_path == str(tmp_path / "m.db") and s.storage.index.kind == "hnsw"
    assert s.governance.auth.max_failures == 2 and s.governance.retention_days is None
    assert s.answer.answer_max_tokens == 512


def test_every_setting_has_one_environment_variable_and_one_bare_name():
    from ftamem_core.config import env_name

    paths = leaves(Settings)
    names = [env_name(p) for p in paths]
    assert len(set(names)) == len(names)
    # a phase's setting under its old top-level name is told apart from every new name
    assert not {env_name(p[1:]) for p in paths if len(p) == 2} & set(names)
    # every bare name is one setting's, so `--set NAME=VALUE` takes each (ambiguity: below)
    bare = [p[-1] for p in paths]
    assert len(set(bare)) == len(bare), sorted(n for n in bare if bare.count(n) > 1)


def test_set_takes_a_phase_and_name_or_a_bare_name(tmp_path):
    from ftamem_core.cli import settings_from
    from ftamem_core.cli.parser import build_parser

    args = build_parser().parse_args(
        [
            "--db",
            str(tmp_path / "m.db"),
            "--set",
            "retrieval.tau=0.3",
            "--set",
            "turn_channel=4",  # bare: only retrieval has it
            "--set",
            "extraction.ground_facts=false",
            "--set",
            "no_links=true",
            "--set",
            "storage.index.kind=flat",
            "--set",
            "storage.db_path=ignored.db",  # --db is the named option: it wins
            "cases",
        ]
    )
    s = settings_from(args)
    assert (s.retrieval.tau, s.retrieval.turn_channel, s.extraction.ground_facts) == (0.3, 4, False)
    assert s.ablations.no_links and s.storage.index.kind == "flat" and s.storage.db_path == str(tmp_path / "m.db")
    from ftamem_core.config import assignment

    assert assignment("segmentation=fixed") == (("segmentation", "segmentation"), "fixed")  # the phase's own
    assert assignment("llm.seed=3") == (("llm", "seed"), "3")


@pytest.mark.parametrize(
    "given, said",
    [
        ("bogus=1", "no setting 'bogus'"),
        ("extraction.tau=1", "did you mean retrieval.tau"),
        ("retrieval=1", "no setting 'retrieval'"),  # a phase is a table, not a value
        ("tau", "give NAME=VALUE"),
    ],
)
def test_set_refuses_a_name_no_setting_has(given, said, capsys):
    from ftamem_core.cli.parser import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["--set", given, "cases"])
    assert said in capsys.readouterr().err


def test_a_bare_name_several_phases_hold_is_ambiguous():
    from ftamem_core.setting import UnknownSetting, resolve

    class One(BaseModel):
        limit: int = 1

    class Two(BaseModel):
        limit: int = 2

    class Both(BaseModel):
        one: One = One()
        two: Two = Two()

    assert resolve("two.limit", Both) == ("two", "limit")
    with pytest.raises(UnknownSetting, match=r"'limit' is ambiguous: one\.limit, two\.limit; name it with its phase"):
        resolve("limit", Both)


def test_a_renamed_setting_is_refused_naming_its_new_name_not_left_at_the_default(tmp_path):
    toml = tmp_path / "old.toml"
    toml.write_text("[extraction]\nstated_feelings = false\n")
    with pytest.raises(SettingsError, match=r"`extraction.stated_feelings` is now `extraction.stated_anchors`"):
        load_settings(toml, environ={})
    with pytest.raises(
        SettingsError, match="FTAMEM_EXTRACTION_STATED_FEELINGS is now FTAMEM_EXTRACTION_STATED_ANCHORS"
    ):
        load_settings(environ={"FTAMEM_EXTRACTION_STATED_FEELINGS": "false"})
    assert load_settings(environ={"FTAMEM_EXTRACTION_STATED_ANCHORS": "false"}).extraction.stated_anchors is False


def test_a_removed_setting_is_refused_saying_it_was_removed(tmp_path):
    toml = tmp_path / "old.toml"
    toml.write_text("[extraction]\nsplit_facts = true\n")
    with pytest.raises(SettingsError, match=r"`extraction.split_facts` is removed: switched off alone on dev"):
        load_settings(toml, environ={})
    with pytest.raises(SettingsError, match="FTAMEM_EXTRACTION_SPLIT_FACTS is removed"):
        load_settings(environ={"FTAMEM_EXTRACTION_SPLIT_FACTS": "false"})
    # and under the names they had before settings were grouped by phase
    with pytest.raises(SettingsError, match="FTAMEM_SOURCE_SIMILARITY is removed"):
        load_settings(environ={"FTAMEM_SOURCE_SIMILARITY": "0"})
    toml.write_text("source_similarity = 0.5\n")
    with pytest.raises(SettingsError, match="`retrieval.source_similarity` is removed"):
        load_settings(toml, environ={})
    for given in ("split_facts=false", "extraction.split_facts=false"):
        with pytest.raises(SettingsError, match="`extraction.split_facts` is removed"):
            assignment(given)
    with pytest.raises(SettingsError, match="no setting"):
        assignment("never_a_setting=1")


def test_every_setting_an_old_build_record_names_is_current_renamed_or_removed():
    from ftamem_core.config import REMOVED, RENAMED
    from ftamem_core.storage.migrations import _FLAT_BUILD_SETTINGS

    named = {(phase, name) for phase, names in _FLAT_BUILD_SETTINGS.items() for name in names}
    current = set(leaves(Settings))
    assert named - current - REMOVED.keys() - RENAMED.keys() == set()
    assert REMOVED.keys() & current == set()


def test_a_toml_file_with_the_old_flat_names_is_refused_naming_each_new_place(tmp_path, capsys):
    toml = tmp_path / "old.toml"
    toml.write_text(
        'profile = "paper"\ntau = 0.5\nwindow_size = 12\nsegmentation = "fixed"\n'
        "[auth.users]\nana = 'h'\n[index]\nkind = 'flat'\n"
        '[backends."GPU server"]\nbackend = "openai"\n[extraction]\nturn_channel = 3\n'
    )
    with pytest.raises(SettingsError) as e:
        load_settings(toml, environ={})
    said = str(e.value)
    assert said.startswith(f"{toml}: settings are grouped by phase now")
    for place in (
        "`tau` is retrieval.tau (TOML `[retrieval] tau = ...`, environment FTAMEM_RETRIEVAL_TAU",
        "`window_size` is segmentation.window_size",
        "`segmentation` is segmentation.segmentation (TOML `[segmentation] segmentation = ...`",
        "`auth` is governance.auth (TOML `[governance.auth]`)",
        "`index` is storage.index",
        "`backends` is app.backends (TOML `[app.backends]`)",
        "`extraction.turn_channel` is retrieval.turn_channel",
    ):
        assert place in said, place
    # the command line says it in one line and reads nothing from the file
    from ftamem_core.cli import main

    assert main(["--config", str(toml), "--db", str(tmp_path / "m.db"), "cases"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ftamem: error: invalid settings: ") and err.count("\n") == 1
    assert not (tmp_path / "m.db").exists()


def test_an_old_environment_variable_or_override_is_refused_naming_the_new_one():
    with pytest.raises(SettingsError, match="FTAMEM_TAU is now FTAMEM_RETRIEVAL_TAU"):
        load_settings(environ={"FTAMEM_TAU": "0.4"})
    with pytest.raises(SettingsError, match="FTAMEM_DB_PATH is now FTAMEM_STORAGE_DB_PATH"):
        load_settings(environ={"FTAMEM_DB_PATH": "x.db"})
    with pytest.raises(SettingsError, match="`ground_facts` is extraction.ground_facts"):
        load_settings(environ={}, ground_facts=False)
    with pytest.raises(SettingsError, match="`tau` is retrieval.tau"):
        Settings().with_overrides(tau=0.2)


def test_ablations_from_toml_and_environment_reach_ask_and_presets_add_to_them(tmp_path):
    from ftamem_core.config import PRESETS

    toml = tmp_path / "ftamem.toml"
    toml.write_text("[ablations]\nno_links = true\n")
    s = load_settings(toml, environ={"FTAMEM_ABLATIONS_NO_AUXILIARY": "true"})
    assert s.ablations.no_links and s.ablations.no_auxiliary
    assert s.combined(None) == s.ablations  # no preset: the settings alone
    both = s.combined(PRESETS["plain_embedding"])
    assert both.no_links and both.no_auxiliary and both.plain_embedding
    assert s.combined(PRESETS["full"]) == s.ablations  # "full" adds nothing


def test_k_follows_the_cases_dataset():
    s = load_settings(environ={}, retrieval={"top_k": 7, "top_k_locomo": 30})
    assert s.k_for("locomo")[0] == 30 and "retrieval.top_k_locomo" in s.k_for("locomo")[1]
    assert s.k_for("esmemeval")[0] == 7 and s.k_for("")[0] == 7


def test_model_dir_is_the_checkouts_cache_here_and_the_users_cache_when_installed(tmp_path, monkeypatch):
    from pathlib import Path

    from ftamem_core import config

    root = Path(__file__).resolve().parents[1]
    assert load_settings(environ={}).storage.model_dir == str(root / ".cache" / "models")  # scripts/install's place
    monkeypatch.setattr(config, "PROJECT_ROOT", tmp_path / "site-packages")  # an installed wheel
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert load_settings(environ={}).storage.model_dir == str(tmp_path / "cache" / "ftamem" / "models")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert load_settings(environ={}).storage.model_dir == str(tmp_path / "home" / ".cache" / "ftamem" / "models")
    assert load_settings(environ={"FTAMEM_STORAGE_MODEL_DIR": "/models"}).storage.model_dir == "/models"


def test_every_setting_says_what_it_does_and_whether_it_shapes_a_build():
    from ftamem_core.setting import declared

    undeclared = [path for path, info in fields(Settings) if not declared(info)]
    assert undeclared == []


def test_the_build_key_is_read_off_the_settings_flags():
    recorded = Settings().build_settings()
    # construction_max_tokens and the embedding model change a build: recorded, by phase
    assert recorded["construction"]["construction_max_tokens"] == 2048
    assert recorded["embedding"] == {"embedding_model": None}
    assert recorded["segmentation"]["window_size"] == 20 and recorded["extraction"]["ground_facts"] is True
    assert recorded["llm"] == {
        "backend": "embedded",
        "model": "qwen2.5-1.5b",
        "base_url": None,
        "seed": 0,
        "disable_thinking": True,
    }
    # answer-side, retrieval-side and place settings are not part of a build
    assert set(recorded) == {
        "segmentation",
        "construction",
        "embedding",
        "extraction",
        "linking",
        "llm",
    }  # the notes' phase has no setting beyond the paper's method
    assert "embedding_batch_size" not in recorded["embedding"]


def test_the_eval_cache_key_moves_with_build_settings_only(tmp_path):
    from ftamem_core.evaluation.run import EvalConfig, _tag

    cfg = EvalConfig(dataset="locomo", data=str(tmp_path / "x.json"), methods=["fta"], out=str(tmp_path))
    base = Settings()
    key = _tag(cfg, base, "bws")
    same = base.with_overrides(
        answer={"answer_max_citations": 9}, retrieval={"tau": 0.5, "packet_token_budget": 0}, storage={"db_path": "x"}
    )
    assert _tag(cfg, same, "bws") == key
    for change in (
        {"construction": {"construction_max_tokens": 1000}},
        {"embedding": {"embedding_model": "other"}},
        {"extraction": {"fact_support": 0.6}},
        {"linking": {"link_candidates": 3}},
        {"llm": {"model": "qwen2.5-0.5b"}},
    ):
        assert _tag(cfg, base.with_overrides(**change), "bws") != key, change


# docs/method.md, "Beyond the paper": the settings whose default departs from the paper's method.
BEYOND_THE_PAPER = {
    "segmentation.min_fragment_turns",
    "extraction.turns_per_unit",
    "extraction.speaker_check",
    "extraction.ground_facts",
    "extraction.stated_anchors",
    "extraction.merge_duplicates",
    "extraction.verbatim_fallback",
    "retrieval.packet_token_budget",
    "retrieval.turn_channel",
}


def test_the_paper_profile_differs_from_the_defaults_exactly_in_the_settings_beyond_the_paper():
    from ftamem_core.setting import dotted, value_at

    defaults, paper = load_settings(environ={}), load_settings(environ={}, profile="paper")
    changed = {dotted(p) for p in leaves(Settings) if value_at(defaults, p) != value_at(paper, p)}
    assert changed == BEYOND_THE_PAPER | {"profile"} and (defaults.profile, paper.profile) == ("small-model", "paper")
    assert (
        paper.segmentation.window_size,
        paper.retrieval.tau,
        paper.retrieval.lam,
        paper.retrieval.link_expansion,
        paper.segmentation.segmentation,
    ) == (20, 0.35, 0.8, 1, "bws")
    on = BEYOND_THE_PAPER - {"segmentation.min_fragment_turns"}
    assert not any(value_at(paper, tuple(name.split("."))) for name in on)
    # fragments as detected
    assert paper.segmentation.min_fragment_turns == 1
    # each is explained where the method is written down (by its bare name)
    from pathlib import Path

    beyond = (
        Path(__file__).resolve().parents[1].joinpath("docs", "method.md").read_text().split("## Beyond the paper")[1]
    )
    assert [name for name in sorted(BEYOND_THE_PAPER) if f"`{name.split('.')[-1]}`" not in beyond] == []


def test_every_profile_validates_and_small_model_is_the_defaults():
    from ftamem_core.profiles import PROFILES, profile_values

    for name in PROFILES:
        Settings.model_validate(profile_values(name, Settings))
    assert load_settings(environ={}, profile="small-model") == load_settings(environ={})


def test_a_profile_from_the_file_the_environment_or_the_command_line_and_the_file_over_it(tmp_path):
    toml = tmp_path / "ftamem.toml"
    toml.write_text('profile = "paper"\n[retrieval]\nturn_channel = 4\n')
    s = load_settings(toml, environ={})
    # the file's own values over its profile, the profile's over the defaults in the same phase
    assert (
        s.extraction.speaker_check is False and s.retrieval.turn_channel == 4 and s.retrieval.packet_token_budget == 0
    )
    assert load_settings(toml, environ={}, profile="small-model").extraction.speaker_check is True
    assert load_settings(environ={"FTAMEM_PROFILE": "paper"}).retrieval.turn_channel == 0
    from ftamem_core.profiles import UnknownProfile

    with pytest.raises(UnknownProfile):
        load_settings(environ={}, profile="big-model")


def test_the_profile_follows_the_backend_unless_one_is_named(tmp_path):
    # an OpenAI-compatible server runs the paper's method, the embedded small model the repairs
    server = load_settings(environ={"FTAMEM_LLM_BACKEND": "openai"})
    assert server.profile == "paper" and server.extraction.ground_facts is False and server.retrieval.turn_channel == 0
    assert load_settings(environ={}).profile == "small-model"
    assert load_settings(environ={}).extraction.ground_facts is True
    assert load_settings(environ={}, llm={"backend": "openai"}).profile == "paper"  # as `ftamem --llm openai`
    assert load_settings(environ={}, llm={"backend": "scripted"}).profile == "small-model"
    toml = tmp_path / "ftamem.toml"
    toml.write_text('[llm]\nbackend = "openai"\n')
    assert load_settings(toml, environ={}).profile == "paper"
    named = load_settings(environ={"FTAMEM_LLM_BACKEND": "openai"}, profile="small-model")
    assert named.profile == "small-model" and named.extraction.ground_facts is True
    both = {"FTAMEM_LLM_BACKEND": "openai", "FTAMEM_PROFILE": "small-model"}
    assert load_settings(environ=both).extraction.ground_facts


def test_cli_profile_option(tmp_path, capsys):
    from ftamem_core.cli import settings_from
    from ftamem_core.cli.parser import build_parser

    args = build_parser().parse_args(["--db", str(tmp_path / "m.db"), "--profile", "paper", "cases"])
    assert settings_from(args).extraction.ground_facts is False
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--profile", "nope", "cases"])


def test_configuration_doc_is_generated_from_the_settings_model():
    from ftamem_core.config_docs import DOC, render

    text = render()
    assert "| `construction_max_tokens` | 2048 | yes |" in text and "| `answer_max_citations` | 5 |  |" in text
    assert "| `speaker_check` | true | yes | false |" in text  # the paper profile's value beside the default
    # a section per phase, in the pipeline's order, each a table of the TOML file
    titles = [line for line in text.splitlines() if line.startswith("## `[")]
    order = ["storage", "input", "segmentation", "construction", "extraction", "retrieval", "answer", "governance"]
    assert [t for t in (f"## `[{name}]`" for name in order) if t not in titles] == []
    at = [titles.index(f"## `[{name}]`") for name in order]
    assert at == sorted(at)
    assert '## `[llm]`, and each `[app.backends."NAME"]`' in titles and "## `[governance.auth]`" in titles
    assert DOC.read_text(encoding="utf-8") == text, "stale: run python -m ftamem_core.config_docs --write"


def test_the_readme_lists_what_the_profiles_change():
    from ftamem_core.config_docs import README, profile_table, readme_with_table

    table = profile_table()
    assert "| `extraction.verbatim_fallback` | true | false |" in table
    assert "| `retrieval.turn_channel` | 10 | 0 |" in table
    assert "tau`" not in table and "`profile`" not in table  # only what differs
    readme = README.read_text(encoding="utf-8")
    assert readme_with_table(readme) == readme, "stale: run python -m ftamem_core.config_docs --write"
