import pytest
from pydantic import ValidationError

from ftamem_core.config import load_settings


def test_paper_defaults():
    s = load_settings(environ={})
    assert (s.window_size, s.tau, s.lam, s.top_k, s.top_k_locomo, s.link_expansion) == (20, 0.35, 0.8, 10, 25, 1)
    assert (s.construction_temperature, s.answer_temperature) == (0.7, 0.0)
    assert s.llm.backend == "embedded" and s.llm.model == "qwen2.5-1.5b"


def test_toml_then_environment_then_overrides(tmp_path):
    toml = tmp_path / "ftamem.toml"
    toml.write_text('window_size = 12\ntau = 0.5\n[llm]\nbackend = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n')
    s = load_settings(toml, environ={})
    assert (s.window_size, s.tau, s.llm.backend) == (12, 0.5, "openai")
    s = load_settings(toml, environ={"FTAMEM_TAU": "0.4", "FTAMEM_LLM_MODEL": "Qwen/Qwen3-8B"})
    assert (s.window_size, s.tau, s.llm.model) == (12, 0.4, "Qwen/Qwen3-8B")
    s = load_settings(toml, environ={"FTAMEM_TAU": "0.4"}, tau=0.2, llm={"model": "x", "base_url": None})
    assert s.tau == 0.2 and s.llm.model == "x" and s.llm.base_url == "http://127.0.0.1:9/v1"


def test_config_file_from_environment(tmp_path):
    toml = tmp_path / "other.toml"
    toml.write_text("top_k = 7\n")
    assert load_settings(environ={"FTAMEM_CONFIG": str(toml)}).top_k == 7


def test_bad_values_are_refused(tmp_path):
    with pytest.raises(ValidationError):
        load_settings(environ={"FTAMEM_LAM": "1.5"})
    with pytest.raises(ValidationError):
        load_settings(environ={"FTAMEM_WINDOW_SIZE": "many"})
    toml = tmp_path / "bad.toml"
    toml.write_text("no_such_setting = 1\n")
    with pytest.raises(ValidationError):
        load_settings(toml, environ={})


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
    s = load_settings(environ={}, top_k=7, top_k_locomo=30)
    assert s.k_for("locomo")[0] == 30 and "top_k_locomo" in s.k_for("locomo")[1]
    assert s.k_for("esmemeval")[0] == 7 and s.k_for("")[0] == 7


def test_model_dir_is_the_checkouts_cache_here_and_the_users_cache_when_installed(tmp_path, monkeypatch):
    from pathlib import Path

    from ftamem_core import config

    root = Path(__file__).resolve().parents[1]
    assert load_settings(environ={}).model_dir == str(root / ".cache" / "models")  # scripts/install's place
    monkeypatch.setattr(config, "PROJECT_ROOT", tmp_path / "site-packages")  # an installed wheel
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert load_settings(environ={}).model_dir == str(tmp_path / "cache" / "ftamem" / "models")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert load_settings(environ={}).model_dir == str(tmp_path / "home" / ".cache" / "ftamem" / "models")
    assert load_settings(environ={"FTAMEM_MODEL_DIR": "/models"}).model_dir == "/models"


def _fields(model, prefix=""):
    """Every settings field, nested models' fields by their dotted name."""
    from pydantic import BaseModel

    for name, info in model.model_fields.items():
        yield prefix + name, info
        kind = info.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            yield from _fields(kind, prefix + name + ".")


def test_every_setting_says_what_it_does_and_whether_it_shapes_a_build():
    from ftamem_core.config import Settings
    from ftamem_core.setting import declared

    undeclared = [name for name, info in _fields(Settings) if not declared(info)]
    assert undeclared == []


def test_the_build_key_is_read_off_the_settings_flags():
    from ftamem_core.config import Settings

    recorded = Settings().build_settings()
    # construction_max_tokens and the embedding model change a build: recorded
    assert {"construction_max_tokens", "embedding_model", "window_size", "ground_facts"} <= set(recorded)
    assert recorded["llm"] == {
        "backend": "embedded",
        "model": "qwen2.5-1.5b",
        "base_url": None,
        "seed": 0,
        "disable_thinking": True,
    }
    # answer-side, retrieval-side and place settings are not part of a build
    for name in (
        "answer_max_citations",
        "answer_max_tokens",
        "tau",
        "turn_channel",
        "db_path",
        "model_dir",
        "ablations",
        "index",
        "auth",
        "backends",
        "eval_workers",
    ):
        assert name not in recorded, name


def test_the_eval_cache_key_moves_with_build_settings_only(tmp_path):
    from ftamem_core.config import Settings
    from ftamem_core.evaluation.run import EvalConfig, _tag

    cfg = EvalConfig(dataset="locomo", data=str(tmp_path / "x.json"), methods=["fta"], out=str(tmp_path))
    base = Settings()
    key = _tag(cfg, base, "bws")
    assert _tag(cfg, base.with_overrides(answer_max_citations=9, tau=0.5, packet_token_budget=0), "bws") == key
    for change in (
        {"construction_max_tokens": 1000},
        {"embedding_model": "other"},
        {"fact_support": 0.6},
        {"llm": {"model": "qwen2.5-0.5b"}},
    ):
        assert _tag(cfg, base.with_overrides(**change), "bws") != key, change


# docs/method.md, "Beyond the paper": the settings whose default departs from the paper's method.
BEYOND_THE_PAPER = {
    "min_fragment_turns",
    "min_unit_words",
    "turns_per_unit",
    "split_facts",
    "speaker_check",
    "ground_facts",
    "long_span_turns",
    "told_share",
    "ground_anchors",
    "ground_notes",
    "merge_duplicates",
    "verbatim_fallback",
    "verbatim_within_spans",
    "verbatim_reply_words",
    "link_per_fragment",
    "lifecycle_by_relation",
    "source_similarity",
    "source_reply_context",
    "packet_token_budget",
    "turn_channel",
    "score_all_below",
}


def test_the_paper_profile_differs_from_the_defaults_exactly_in_the_settings_beyond_the_paper():
    defaults, paper = load_settings(environ={}), load_settings(environ={}, profile="paper")
    changed = {name for name in type(defaults).model_fields if getattr(defaults, name) != getattr(paper, name)}
    assert changed == BEYOND_THE_PAPER | {"profile"} and (defaults.profile, paper.profile) == ("small-model", "paper")
    assert (paper.window_size, paper.tau, paper.lam, paper.link_expansion, paper.segmentation) == (
        20,
        0.35,
        0.8,
        1,
        "bws",
    )
    assert not any(getattr(paper, name) for name in BEYOND_THE_PAPER - {"score_all_below", "min_fragment_turns"})
    assert paper.min_fragment_turns == 1 and paper.score_all_below >= 10**9  # fragments as detected, every unit scored
    # each is explained where the method is written down
    from pathlib import Path

    beyond = (
        Path(__file__).resolve().parents[1].joinpath("docs", "method.md").read_text().split("## Beyond the paper")[1]
    )
    assert [name for name in sorted(BEYOND_THE_PAPER) if f"`{name}`" not in beyond] == []


def test_every_profile_validates_and_small_model_is_the_defaults():
    from ftamem_core.config import Settings
    from ftamem_core.profiles import PROFILES, profile_values

    for name in PROFILES:
        Settings.model_validate(profile_values(name, Settings))
    assert load_settings(environ={}, profile="small-model") == load_settings(environ={})


def test_a_profile_from_the_file_the_environment_or_the_command_line_and_the_file_over_it(tmp_path):
    toml = tmp_path / "ftamem.toml"
    toml.write_text('profile = "paper"\nturn_channel = 4\n')
    s = load_settings(toml, environ={})
    assert s.speaker_check is False and s.turn_channel == 4  # the file's own values over its profile
    assert load_settings(toml, environ={}, profile="small-model").speaker_check is True
    assert load_settings(environ={"FTAMEM_PROFILE": "paper"}).link_per_fragment is False
    from ftamem_core.profiles import UnknownProfile

    with pytest.raises(UnknownProfile):
        load_settings(environ={}, profile="big-model")


def test_the_profile_follows_the_backend_unless_one_is_named(tmp_path):
    # an OpenAI-compatible server runs the paper's method, the embedded small model the repairs
    server = load_settings(environ={"FTAMEM_LLM_BACKEND": "openai"})
    assert server.profile == "paper" and server.ground_facts is False and server.turn_channel == 0
    assert load_settings(environ={}).profile == "small-model" and load_settings(environ={}).ground_facts is True
    assert load_settings(environ={}, llm={"backend": "openai"}).profile == "paper"  # as `ftamem --llm openai`
    assert load_settings(environ={}, llm={"backend": "scripted"}).profile == "small-model"
    toml = tmp_path / "ftamem.toml"
    toml.write_text('[llm]\nbackend = "openai"\n')
    assert load_settings(toml, environ={}).profile == "paper"
    named = load_settings(environ={"FTAMEM_LLM_BACKEND": "openai"}, profile="small-model")
    assert named.profile == "small-model" and named.ground_facts is True
    assert load_settings(environ={"FTAMEM_LLM_BACKEND": "openai", "FTAMEM_PROFILE": "small-model"}).ground_facts


def test_cli_profile_option(tmp_path, capsys):
    from ftamem_core.cli import settings_from
    from ftamem_core.cli.parser import build_parser

    args = build_parser().parse_args(["--db", str(tmp_path / "m.db"), "--profile", "paper", "cases"])
    assert settings_from(args).ground_facts is False
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--profile", "nope", "cases"])


def test_configuration_doc_is_generated_from_the_settings_model():
    from ftamem_core.config_docs import DOC, render

    text = render()
    assert "| `construction_max_tokens` | 2048 | yes |" in text and "| `answer_max_citations` | 5 |  |" in text
    assert "| `speaker_check` | true | yes | false |" in text  # the paper profile's value beside the default
    assert DOC.read_text(encoding="utf-8") == text, "stale: run python -m ftamem_core.config_docs --write"


def test_the_readme_lists_what_the_profiles_change():
    from ftamem_core.config_docs import README, profile_table, readme_with_table

    table = profile_table()
    assert "| `verbatim_fallback` | true | false |" in table and "| `turn_channel` | 10 | 0 |" in table
    assert "`tau`" not in table and "`profile`" not in table  # only what differs
    readme = README.read_text(encoding="utf-8")
    assert readme_with_table(readme) == readme, "stale: run python -m ftamem_core.config_docs --write"
