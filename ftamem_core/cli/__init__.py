"""The ``ftamem`` command. Global options go before the command::

    ftamem --db memory.db ingest dialogue.json
    ftamem --json cases

Every listing command prints JSON with ``--json``. Errors: one line on stderr, exit code 1.

The parser is in ``parser``; the commands, grouped by area, in ``cases``, ``build``, ``ask``,
``privacy``, ``eval`` and ``audit``; what they share in ``common``.
"""

from __future__ import annotations

import argparse
import json
import sys

from pydantic import ValidationError

from ..config import Settings, SettingsError, changes_from, load_settings
from ..loaders import LoadError
from ..setting import merged
from ..llm.modelfiles import ModelFileError
from ..storage.store import StoreError
from .ask import cmd_ask
from .audit import cmd_audit
from .build import cmd_build, cmd_check_llm, cmd_warm
from .cases import cmd_cases, cmd_cost, cmd_ingest, cmd_links, cmd_memory, cmd_sessions, cmd_turns, cmd_units
from .common import log_access, open_store
from .eval import cmd_bench, cmd_correlate, cmd_density, cmd_eval, cmd_score
from .parser import build_parser
from .privacy import (
    cmd_access_log,
    cmd_consent,
    cmd_delete_link,
    cmd_delete_unit,
    cmd_erase,
    cmd_export,
    cmd_hash_password,
    cmd_import,
    cmd_purge_expired,
)


def settings_from(args: argparse.Namespace) -> Settings:
    # the named options over --set's (a None: the option was not given)
    given = {
        "storage": {"db_path": args.db},
        "llm": {"backend": args.llm, "model": args.model, "base_url": args.base_url},
    }
    return load_settings(config_file=args.config, profile=args.profile, **merged(changes_from(args.set), given))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = settings_from(args)
        if settings.llm.backend == "scripted" and args.command in _MODEL_COMMANDS:
            print(
                f"ftamem: backend scripted (a test double): replies are read from {settings.llm.model}, "
                "no language model runs",
                file=sys.stderr,
            )
        if args.command != "purge-expired":
            _purge_expired(settings)
        out = COMMANDS[args.command](args, settings)
        log_access(args, settings)
    except BrokenPipeError:
        return _pipe_closed()
    except (LoadError, StoreError, ModelFileError, OSError) as e:
        return _fail(str(e))
    except SettingsError as e:
        return _fail(f"invalid settings: {e}")
    except ValidationError as e:
        return _fail(f"invalid settings: {e.errors()[0]['loc']}: {e.errors()[0]['msg']}")
    except Exception as e:  # LLM errors and anything unexpected: one readable line
        from ..llm.base import LLMError

        if isinstance(e, LLMError):
            return _fail(str(e))
        if isinstance(e, ModuleNotFoundError) and (e.name or "").split(".")[0] in _OPTIONAL:
            package, extra = _OPTIONAL[e.name.split(".")[0]]
            return _fail(
                f"{args.command} needs {package}, an optional dependency: pip install 'ftamem-studio[{extra}]'"
            )
        return _fail(f"{e.__class__.__name__}: {e}")
    if out is not None:
        data, text = out
        try:
            print(json.dumps(data, indent=2, ensure_ascii=False) if args.json else text, flush=True)
        except BrokenPipeError:
            return _pipe_closed()
    return 0


def _pipe_closed() -> int:
    """The reader went away (``ftamem units | head -1``): nothing to add, and no traceback when
    Python flushes standard output at exit. The exit status a shell gives a SIGPIPE'd program."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 128 + 13


# Commands that call the language model (the scripted backend says so when they run).
_MODEL_COMMANDS = {"check-llm", "warm", "build", "ask", "eval", "density"}
# Modules of the optional dependencies (pyproject.toml's extras): module -> (package, extra).
_OPTIONAL = {
    "sklearn": ("scikit-learn", "eval"),
    "scipy": ("scipy", "eval"),
    "krippendorff": ("krippendorff", "eval"),
    "nltk": ("nltk", "eval"),
    "bert_score": ("bert-score", "eval"),
    "plotly": ("plotly", "eval"),
    "pyvis": ("pyvis", "app"),
    "streamlit": ("streamlit", "app"),
}


def _fail(message: str) -> int:
    print(f"ftamem: error: {message.splitlines()[0] if message else 'failed'}", file=sys.stderr)
    return 1


def _purge_expired(settings: Settings) -> None:
    """Retention is enforced whenever a command starts (on an existing store)."""
    from pathlib import Path

    from ..governance.privacy import purge_expired, skipped_message

    if Path(settings.storage.db_path).exists():
        skipped: list[str] = []
        for case_id in purge_expired(open_store(settings), settings.governance.retention_days, skipped=skipped):
            print(f"ftamem: erased case {case_id!r}: its retention period is over", file=sys.stderr)
        if skipped:
            print(f"ftamem: warning: {skipped_message(skipped)}", file=sys.stderr)


COMMANDS = {
    "ingest": cmd_ingest,
    "cases": cmd_cases,
    "sessions": cmd_sessions,
    "turns": cmd_turns,
    "check-llm": cmd_check_llm,
    "warm": cmd_warm,
    "build": cmd_build,
    "units": cmd_units,
    "links": cmd_links,
    "memory": cmd_memory,
    "cost": cmd_cost,
    "ask": cmd_ask,
    "bench": cmd_bench,
    "consent": cmd_consent,
    "export": cmd_export,
    "import": cmd_import,
    "delete-unit": cmd_delete_unit,
    "delete-link": cmd_delete_link,
    "erase": cmd_erase,
    "purge-expired": cmd_purge_expired,
    "hash-password": cmd_hash_password,
    "access-log": cmd_access_log,
    "audit": cmd_audit,
    "score": cmd_score,
    "eval": cmd_eval,
    "density": cmd_density,
    "correlate": cmd_correlate,
}
