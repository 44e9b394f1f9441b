"""One settings object with the paper's defaults.

Precedence, lowest first: the defaults below, a TOML file (``ftamem.toml`` in the working
directory or the path in ``FTAMEM_CONFIG``), environment variables (``FTAMEM_<NAME>`` for a
top-level field, ``FTAMEM_LLM_<NAME>`` for a field of ``llm``, ``FTAMEM_ABLATIONS_<NAME>`` for an
ablation switch), then explicit overrides (command-line options, the app's sidebar). A named
preset (``ask --preset``, the Ask page) adds its switch to the settings' ablations.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .models import MAX_RETENTION_DAYS, STATEMENT_CHARS
from .vectors import IndexConfig

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def default_model_dir() -> str:
    """Where the embedded models' GGUF files are joined (setting ``model_dir``): the checkout's
    ``.cache/models`` when ftamem_core runs from a checkout (scripts/install, run and test keep them
    there), else the user's cache, ``$XDG_CACHE_HOME/ftamem/models`` (``~/.cache/ftamem/models``),
    never a folder inside site-packages. ``FTAMEM_MODEL_DIR`` overrides it, as any setting."""
    if (PROJECT_ROOT / "pyproject.toml").is_file() and (PROJECT_ROOT / "scripts" / "install").is_file():
        return str(PROJECT_ROOT / ".cache" / "models")
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return str(Path(cache) / "ftamem" / "models")


# Named embedded models: the GGUF files shipped as byte chunks on PyPI (see modelfiles.py).
EMBEDDED_MODELS = ("qwen2.5-1.5b", "qwen2.5-0.5b")


class LLMConfig(BaseModel):
    """How to reach the language model; one object for every stage."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["embedded", "openai", "scripted"] = "embedded"
    # For `embedded`: a name from EMBEDDED_MODELS or a path to a GGUF file.
    # For `openai`: the model name the server knows (e.g. Qwen/Qwen3-8B).
    model: str = "qwen2.5-1.5b"
    base_url: str | None = None
    api_key: str = "EMPTY"
    # How structured output is asked for over the OpenAI API: vLLM takes
    # response_format json_schema; llama.cpp's server takes json_object + schema.
    # `auto` asks the server's /models who owns the model.
    dialect: Literal["auto", "json_schema", "json_object"] = "auto"
    # Qwen3 thinks by default; structured stages want the answer only.
    disable_thinking: bool = True
    max_retries: int = 2  # extra attempts after invalid or truncated output
    connect_retries: int = 3  # attempts when the server cannot be reached
    max_tokens: int = 1024
    # Seconds: to open a connection (a black-holed server fails in seconds, not minutes), and to
    # wait for a reply (a CPU server may take minutes to generate).
    connect_timeout: float = Field(5.0, gt=0)
    timeout: float = Field(600.0, gt=0)
    # Seconds: the most one call to a server may take as a whole (its retries, every byte of the
    # reply): the timeouts above bound each wait, and a server that sends a byte now and then
    # never meets them.
    deadline: float = Field(600.0, gt=0, description="seconds one call to a server may take in all, "
                                                    "retries and the whole reply included")
    seed: int = 0
    n_ctx: int = 8192
    n_threads: int | None = None  # embedded: threads that write (None: every core; prompts are read with every core)
    prompt_cache_bytes: int = 1 << 30  # embedded: RAM for cached prompt prefixes (0: off)
    # False for a server typed into the app: its error bodies are not shown (it may be anybody's).
    trusted: bool = True


class AuthConfig(BaseModel):
    """Sign-in (auth.py): required when the app listens beyond 127.0.0.1 or users are configured."""

    model_config = ConfigDict(extra="forbid")

    users: dict[str, str] = Field(default_factory=dict)  # name -> hash from `ftamem hash-password`
    oidc: bool = False  # Streamlit's st.login, the provider in .streamlit/secrets.toml [auth]
    max_failures: int = Field(5, ge=1, description="failed sign-ins in a row, per name and per client, "
                                                   "before sign-in is locked for them")
    lockout_minutes: float = Field(5.0, gt=0, description="how long a name or client stays locked")
    allowed_hosts: list[str] = Field(default_factory=list, description=(
        "host names the app answers to (a proxy's public name), besides the address it listens on and, "
        "on loopback, localhost; a request naming another host is refused"))


class Ablations(BaseModel):
    """The paper's ablation switches (inference side); all off is the full method."""

    model_config = ConfigDict(extra="forbid")

    no_rewrite: bool = False  # retrieve with the question as asked
    plain_embedding: bool = False  # lambda = 1: no cue score
    flat_context: bool = False  # one flat list instead of the structured packet
    no_auxiliary: bool = False  # no semantic / support-experience memory in the packet
    no_time_fields: bool = False  # no time anchors in cue score or packet
    no_affect_fields: bool = False  # no affect anchors in cue score or packet
    no_links: bool = False  # no linked-neighbour expansion
    fact_only: bool = False  # units reduced to their fact text
    question_only: bool = False  # no memory at all


# Named retrieval presets: the full method and one per ablation.
PRESETS = {"full": Ablations(), **{name: Ablations(**{name: True}) for name in Ablations.model_fields}}


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    db_path: str = "memory.db"
    # Boundary-preserving Window Segmentation (Algorithm 1)
    window_size: int = Field(20, ge=2)  # W
    min_forward_step: int = Field(1, ge=1)
    segmentation: Literal["bws", "fixed", "session", "pair"] = "bws"
    # Beyond the paper: a final BWS fragment shorter than this joins its neighbour (1: as detected).
    min_fragment_turns: int = Field(6, ge=1)
    # Retrieval: R = lambda * s_emb + (1 - lambda) * c, keep R >= tau, top K
    tau: float = 0.35
    lam: float = Field(0.8, ge=0.0, le=1.0)
    top_k: int = Field(10, ge=1)  # ES-MemEval and any other case (paper's later analyses)
    top_k_locomo: int = Field(25, ge=1)  # LoCoMo cases (source_format "locomo")
    link_expansion: int = Field(1, ge=0)  # B: linked neighbours per retrieved unit
    # Eq. 9 ranks every unit: a case of at most score_all_below units is scored whole; a larger
    # one scores the candidate_pool best FAISS hits (the retrieval benchmark reports its recall).
    score_all_below: int = Field(20_000, ge=0)
    candidate_pool: int = Field(100, ge=1)  # FAISS hits scored per question in a large case (at least K)
    auxiliary_limit: int = Field(6, ge=0)  # semantic / support entries in a packet, most relevant first
    # Beyond the paper: the packet is cut to this many tokens (units one line each first, then
    # source turns that add words); 0 renders everything retrieved.
    packet_token_budget: int = Field(1000, ge=0)
    # Beyond the paper: this many raw turns most similar to the question (cosine >= tau) compete
    # with the units for the packet, merged by embedding similarity (packet.py); 0: the paper's packet.
    turn_channel: int = Field(10, ge=0)
    # Beyond the paper: a unit's similarity mixes its text's cosine with its best evidence turn's
    # (this weight; retrieval.py); 0: the paper's s_emb.
    source_similarity: float = Field(0.5, ge=0.0, le=1.0)
    # Beyond the paper: for s_src, a turn answering the other speaker's question just before it is
    # also embedded after that question, the better cosine counts (retrieval.reply_texts).
    source_reply_context: bool = True
    # A unit still partial at the end of the built case is retrievable, flagged as partial.
    retrieve_open_partials: bool = True
    # A unit a counselor archived leaves retrieval and packets (disputed ones always do); on, it
    # comes back, marked "now archived" in the packet (the Ask page has a switch for one question).
    retrieve_archived: bool = False
    answer_max_tokens: int = 512
    # Beyond the paper (which has no citations): the most unit ids an answer cites.
    answer_max_citations: int = Field(5, ge=1, le=20)
    ablations: Ablations = Field(default_factory=Ablations)
    index: IndexConfig = Field(default_factory=IndexConfig)
    # Linking: candidate neighbours by embedding similarity before the classifier call
    link_candidates: int = Field(5, ge=0)
    link_threshold: float = 0.5
    # Temperatures (paper: construction 0.7, answers 0)
    construction_temperature: float = 0.7
    answer_temperature: float = 0.0
    construction_max_tokens: int = 2048
    # The longest fact (characters) the extraction schema lets the model write; the bound stops a
    # looping model. 800 let conv-44's long facts through but cost recall and tokens (docs/decisions.md).
    fact_max_chars: int = Field(STATEMENT_CHARS, ge=40)
    # A fragment with at least this many words must yield a unit (0: the model may return none).
    min_unit_words: int = Field(25, ge=0)
    # Beyond the paper: such a fragment yields at least one unit per turns_per_unit of the person's
    # turns of coverage_min_words or more (0: at least one in all).
    turns_per_unit: int = Field(3, ge=0)
    # Coverage pass (not in the paper, off by default): one more call per fragment asks for a unit
    # for each of the person's turns with at least coverage_min_words words that no unit covers.
    coverage_pass: bool = False
    coverage_min_words: int = Field(6, ge=1)
    # Checks beyond the paper (grounding.py), each on by default and off with its switch:
    # a fact whose subject is the other speaker of the turn it carries gets the speaker's name;
    speaker_check: bool = True
    # units of one fragment with overlapping evidence and facts this similar are merged;
    merge_duplicates: bool = True
    duplicate_cosine: float = Field(0.92, gt=0.0, le=1.0)
    # a model-written fact with less than fact_support of its word stems in its evidence is dropped;
    ground_facts: bool = True
    fact_support: float = Field(0.5, ge=0.0, le=1.0)
    # a fact over more than long_span_turns turns needs long_span_support: the more turns, the more
    # of a made-up fact's words they hold by chance ("Audrey and her dogs walked with Andrew on the
    # trail", 12 turns of hikes and dogs, 0.67) (0: one threshold for all);
    long_span_turns: int = Field(4, ge=0)
    long_span_support: float = Field(0.75, ge=0.0, le=1.0)
    # between peers (no assistant in the session), a model-written fact is dropped when less than
    # told_share of the stems its evidence supports come from what the speakers tell, not from what
    # they say to each other ("I'm impressed with your enthusiasm" made "Maria is enthusiastic")
    # (0: off);
    told_share: float = Field(0.5, ge=0.0, le=1.0)
    # feeling, intention, relations and summary sharing no content word with the evidence: unknown;
    ground_anchors: bool = True
    # (candidate, off) the extraction reply also gives, for each of the person's substantive turns,
    # the feeling it states or clearly shows and what its speaker intends; a unit whose own anchor
    # is unknown (a copy of a turn always is) takes those of its speaker's turns (issue 39);
    turn_anchors: bool = False
    # (candidate, off) the linking prompt adds that looking alike is no relation, followup_of and
    # updates need the new unit to report on the older one's event, and an unrelated pair's example
    # (the 1.5B made 17 of 19 links followup_of, high, most between unrelated units; issue 39);
    strict_links: bool = False
    # a longitudinal note keeps only the clauses with fact_support of their word stems in the own
    # turns of the speaker they name (in the cited units' evidence); none left: the note goes;
    ground_notes: bool = True
    # (off) a model-written unit's evidence span is cut to the turns that carry its fact (and a
    # question just before them): measured on LoCoMo conv-26 it lowered pointer recall;
    trim_spans: bool = False
    # a new, final model-written fact of several sentences that carry different turns becomes one
    # unit per sentence group, each checked alone, with the unit's span (cut with trim_spans);
    split_facts: bool = True
    # a substantive turn (coverage_min_words or more) no unit covers gets a unit of its own words;
    verbatim_fallback: bool = True
    # so does one inside a unit's span whose words the unit's fact does not carry;
    verbatim_within_spans: bool = True
    # in that test a photo's caption ("[shares a photo of ...]") counts as the turn's words (off:
    # a unit that describes the photo carried what the person said with it, which was in no unit);
    caption_carries_turn: bool = False
    # such a unit of at most this many words that points back ("Glad to be part of it.") quotes
    # the turn it answers in its summary and takes it into its span (0: off);
    verbatim_reply_words: int = Field(12, ge=0)
    # one linking call per fragment for all its new units (the paper: one per unit).
    link_per_fragment: bool = True
    # a linked older unit's lifecycle changes only when the relation reports on it (updates,
    # followup_of, contradicts); the paper takes the suggestion of every judged pair.
    lifecycle_by_relation: bool = True
    # Loaders
    max_turn_chars: int = Field(100_000, ge=1)
    # The largest file (MB) `ftamem ingest` and `ftamem import` read and the app accepts (and the
    # paste box, in text); a larger one is refused before it is read whole.
    max_upload_mb: int = Field(50, ge=1)
    # The turns of one prompt take at most this many characters (about a quarter as many tokens);
    # longer ones are cut in the prompt only, and the build log says which (0: never cut).
    prompt_turn_chars: int = Field(16_000, ge=0)
    # Privacy: a case with no retention of its own is erased this many days after it was
    # ingested (None: kept until erased by hand); checked when the app or a command starts.
    retention_days: int | None = Field(None, ge=1, le=MAX_RETENTION_DAYS)
    # Models
    model_dir: str = Field(default_factory=default_model_dir)
    embedding_model: str | None = None  # None: the packaged all-MiniLM-L6-v2
    embedding_batch_size: int = 64
    llm: LLMConfig = Field(default_factory=LLMConfig)
    # Backends the app's sidebar offers by name, beside `llm` (e.g. [backends."GPU server"]).
    backends: dict[str, LLMConfig] = Field(default_factory=dict)
    # Whether the sidebar lets a user type a server URL (off: only configured backends; a typed
    # URL never receives a configured API key, and its error bodies are not shown).
    allow_custom_backend: bool = False
    # Evaluation runs: `ftamem eval` writes here when given no --out; the Evaluate page lists them.
    eval_dir: str = "eval-runs"
    # Questions answered (and cases built) at once by `ftamem eval` against an OpenAI-compatible
    # server, so that one vLLM server, or several behind one URL, is kept busy (embedded: always 1).
    eval_workers: int = Field(4, ge=1)
    auth: AuthConfig = Field(default_factory=AuthConfig)

    def k_for(self, source_format: str) -> tuple[int, str]:
        """The paper's K for a case's dataset, and why."""
        if source_format == "locomo":
            return self.top_k_locomo, "LoCoMo case: setting top_k_locomo"
        return self.top_k, f"{source_format or 'other'} case: setting top_k"

    def combined(self, preset: "Ablations | None") -> "Ablations":
        """The settings' ablations with a preset's switched on as well (a preset only adds)."""
        if preset is None:
            return self.ablations
        return Ablations(**{k: getattr(self.ablations, k) or getattr(preset, k) for k in Ablations.model_fields})

    def with_overrides(self, **changes: Any) -> "Settings":
        """A copy with top-level changes; ``llm`` may be a dict of LLM field changes."""
        data = self.model_dump()
        llm_changes = changes.pop("llm", None) or {}
        ablation_changes = changes.pop("ablations", None) or {}
        data["ablations"].update(ablation_changes)
        data.update({k: v for k, v in changes.items() if v is not None})
        data["llm"].update({k: v for k, v in llm_changes.items() if v is not None})
        return Settings.model_validate(data)


def _env_value(raw: str) -> Any:
    # Pydantic coerces the string; "none" or "" leaves the field at its default.
    return None if raw.strip().lower() in ("", "none", "null") else raw


def _from_env(environ: dict[str, str]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    llm: dict[str, Any] = {}
    for name in Settings.model_fields:
        if name in ("llm", "ablations"):
            continue
        key = f"FTAMEM_{name.upper()}"
        if key in environ:
            data[name] = _env_value(environ[key])
    for name in LLMConfig.model_fields:
        key = f"FTAMEM_LLM_{name.upper()}"
        if key in environ:
            llm[name] = _env_value(environ[key])
    if llm:
        data["llm"] = llm
    ablations = {name: _env_value(environ[f"FTAMEM_ABLATIONS_{name.upper()}"]) for name in Ablations.model_fields
                 if f"FTAMEM_ABLATIONS_{name.upper()}" in environ}
    if ablations:
        data["ablations"] = ablations
    return data


def load_settings(
    config_file: str | os.PathLike | None = None,
    environ: dict[str, str] | None = None,
    **overrides: Any,
) -> Settings:
    """Defaults, then the TOML file, then the environment, then ``overrides``."""
    environ = dict(os.environ if environ is None else environ)
    data: dict[str, Any] = {}
    path = config_file or environ.get("FTAMEM_CONFIG")
    if path is None and Path("ftamem.toml").is_file():
        path = "ftamem.toml"
    if path is not None:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    env = _from_env(environ)
    llm = {**data.get("llm", {}), **env.pop("llm", {})}
    ablations = {**data.get("ablations", {}), **env.pop("ablations", {})}
    if ablations:
        data["ablations"] = {k: v for k, v in ablations.items() if v is not None}
    data.update({k: v for k, v in env.items() if v is not None})
    data["llm"] = {k: v for k, v in llm.items() if v is not None}
    return Settings.model_validate(data).with_overrides(**overrides)
