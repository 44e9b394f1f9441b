"""The ``ftamem`` command line: global options, then one subcommand (``ftamem --help`` lists them)."""

from __future__ import annotations

import argparse

from ..config import PRESETS, SettingsError, assignment
from ..loaders import FORMATS
from ..models import Origin
from ..profiles import PROFILES


def set_option(text: str):
    """``--set``'s type: argparse says what is wrong (a name no setting has, or several do)."""
    try:
        return assignment(text)
    except SettingsError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def positive(text: str) -> int:
    """A whole number of at least 1 (K: no unit can be kept with 0)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is less than 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ftamem", description="FTA-Mem: Fact-Time-Affect memory for long-term dialogue")
    p.add_argument("--db", help="SQLite database (default: setting storage.db_path)")
    p.add_argument("--config", help="TOML settings file")
    p.add_argument(
        "--profile",
        choices=PROFILES,
        help="named settings under the config file: small-model (the defaults, for the embedded 1.5B) "
        "or paper (the method as the paper writes it: every repair beyond it off)",
    )
    p.add_argument(
        "--llm",
        choices=["embedded", "openai", "scripted"],
        help="LLM backend (scripted: a test double, no language model: every call of a stage gets "
        "the reply the JSON file given as --model holds for it; for tests and smoke checks)",
    )
    p.add_argument(
        "--model",
        help="embedded model name or GGUF path, or the server's model name (scripted: the JSON file {stage: reply})",
    )
    p.add_argument("--base-url", help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        type=set_option,
        metavar="PHASE.NAME=VALUE",
        help="a setting for this command, e.g. retrieval.tau=0.4 (repeatable; a bare name such as "
        "tau=0.4 when one phase alone has it)",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help: str) -> argparse.ArgumentParser:
        c = sub.add_parser(name, help=help, description=help)
        c.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
        return c

    c = command("ingest", "load a dialogue file into the store")
    c.add_argument("file")
    c.add_argument("--format", choices=FORMATS, default="auto")
    exists = c.add_mutually_exclusive_group()
    exists.add_argument("--replace", action="store_true", help="replace cases already stored")
    exists.add_argument("--skip-existing", action="store_true", help="leave cases already stored as they are")
    c.add_argument("--case", action="append", dest="cases", metavar="ID", help="only this case (repeatable)")
    c.add_argument("--consent", choices=["granted"], help="record consent for every case in the file")
    c.add_argument(
        "--by",
        help="who records the consent (with --consent) and the replace (with --replace; default: your user name)",
    )
    c.add_argument("--note", default="", help="the consent's note, e.g. 'public research dataset'")
    c.add_argument("--retention-days", type=int, help="erase these cases this many days after ingest")
    command("cases", "list the cases")
    c = command("sessions", "list a case's sessions")
    c.add_argument("case")
    c = command("turns", "list a case's turns")
    c.add_argument("case")
    c.add_argument("--session", help="session number (from 0) or the file's session id")
    command("check-llm", "make one structured call and report backend, model and seconds")
    command(
        "warm",
        "read the ask prompts' fixed instructions once and keep the model's state on disk "
        "(the embedded model), so that the first question of a new process does not",
    )
    c = command("build", "build a case's memory (resumes an unfinished build)")
    c.add_argument("case")
    c.add_argument(
        "--segmentation", choices=["bws", "fixed", "session", "pair"], help="default: setting segmentation (bws)"
    )
    c.add_argument("--window", type=int, help="window size W (default: setting segmentation.window_size, 20)")
    c.add_argument(
        "--from-scratch",
        action="store_true",
        help="clear the case's memory and build it again "
        "(refused while corrections made by hand stand, unless --discard-corrections)",
    )
    c.add_argument(
        "--discard-corrections",
        action="store_true",
        help="with --from-scratch: throw away the corrections made by hand (recorded with --by)",
    )
    c.add_argument("--by", help="who discards the corrections (default: your user name)")
    c.add_argument("--quiet", action="store_true", help="no progress bar")
    c = command("units", "list a case's memory units")
    c.add_argument("case")
    c.add_argument("--partial", action="store_true", help="also the partial units left open at a session's end")
    c.add_argument(
        "--origin",
        nargs="+",
        choices=Origin.__args__,
        metavar="ORIGIN",
        help=f"only units made this way ({', '.join(Origin.__args__)})",
    )
    c = command("links", "list a case's temporal links")
    c.add_argument("case")
    c = command("memory", "show a case's user semantic and support-experience memory")
    c.add_argument("case")
    c = command("cost", "construction cost per stage (calls, tokens, seconds) and units per turn")
    c.add_argument("case")
    c = command("bench", "benchmarks: 'retrieval' (latency and recall on synthetic cases)")
    c.add_argument("what", choices=["retrieval"])
    c.add_argument("--units", type=int, default=10_000)
    c.add_argument("--queries", type=int, default=200)
    c = command("ask", "ask a question of a case's memory and print the trace")
    c.add_argument("case")
    c.add_argument("question")
    c.add_argument(
        "--k", type=positive, help="units to keep (default: the case's dataset: top_k_locomo for LoCoMo, else top_k)"
    )
    c.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        help="one ablation, added to the settings' [ablations] (default: the settings alone)",
    )
    c = command("consent", "show or record a case's consent to keep memory")
    c.add_argument("case")
    c.add_argument("action", choices=["grant", "withdraw", "show"])
    c.add_argument("--by", help="who records it (default: your user name)")
    c.add_argument("--note", default="")
    c = command("export", "write everything stored about a case as one JSON document")
    c.add_argument("case")
    c.add_argument("--out", help="file to write (owner-only); default: standard output")
    c = command("import", "restore a case from an export into a store that does not hold it")
    c.add_argument("file")
    for name, what in (
        ("delete-unit", "a memory unit (its vector, links, history text, derived entries)"),
        ("delete-link", "a temporal link"),
    ):
        c = command(name, f"delete {what}")
        c.add_argument("case")
        c.add_argument("id", type=int)
        c.add_argument("--reason", required=True, help="why (kept in the history, unlike the deleted text)")
        c.add_argument("--by", help="who (default: your user name)")
    c = command("erase", "erase a case and everything derived from it, for good")
    c.add_argument("case")
    c.add_argument("--yes", action="store_true", help="do not ask (required when not in a terminal)")
    c.add_argument("--by", help="who (default: your user name)")
    c.add_argument("--reason", default="")
    command("purge-expired", "erase the cases past their retention period and print them")
    command("hash-password", "read a password (twice, not echoed) and print its hash for [governance.auth.users]")
    c = command("access-log", "who viewed, changed, built, asked or exported which case")
    c.add_argument("--case", help="one case")
    c = command("eval", "answer a benchmark's questions with several methods and score them (resumable)")
    c.add_argument("--dataset", choices=["locomo", "esmemeval"], required=True)
    c.add_argument("--data", required=True, help="the dataset file (e.g. ../shared/data/locomo/locomo10.json)")
    c.add_argument(
        "--method",
        nargs="+",
        default=["fta", "turn-rag", "verbatim", "null"],
        dest="methods",
        metavar="M",
        help="fta, fta-<preset>, fta-session|pair|fixed, question-only, full-context, turn-rag, "
        "session-summary, null, verbatim (memories built without a model); NAME@K for another K "
        "(a K sweep)",
    )
    c.add_argument("--cases", nargs="+", help="only these cases")
    c.add_argument(
        "--split",
        choices=["dev", "test"],
        help="LoCoMo's dev or test conversations, sessions 1-3 (tune on dev; test is reported only)",
    )
    c.add_argument(
        "--sessions", type=int, help="the first N sessions of each case (questions whose evidence is in them)"
    )
    c.add_argument("--questions", type=int, help="the first N of those questions per case")
    c.add_argument("--categories", nargs="+", help="LoCoMo category ids to ask (default: all)")
    c.add_argument("--k", type=positive, help="K for every method (default: the case's dataset: 25 LoCoMo, 10 else)")
    c.add_argument(
        "--out", help="the run folder; a rerun resumes it (default: a new folder in setting evaluation.eval_dir)"
    )
    c.add_argument("--cache", help="where built memory is kept for every run (default: EVAL_DIR/cache)")
    c.add_argument(
        "--workers",
        type=int,
        help="questions at once with an OpenAI-compatible backend "
        "(default: setting evaluation.eval_workers; the embedded model: 1)",
    )
    c.add_argument("--judge", action="store_true", help="also an LLM judge (the answer model)")
    c.add_argument("--record", help="keep every model reply of the run in this JSON Lines file")
    c.add_argument(
        "--replay",
        help="a --record file of another run: its rewrite and answer replies serve identical "
        "requests, the rest is asked of the model (a variant's run answers only what changed)",
    )
    c.add_argument("--quiet", action="store_true", help="no progress line")
    c = command("density", "annotate every turn's information density with the LLM (resumable), per dialogue")
    c.add_argument("--dataset", choices=["locomo", "esmemeval"], required=True)
    c.add_argument("--data", required=True)
    c.add_argument("--cases", nargs="+")
    c.add_argument("--sessions", type=int)
    c.add_argument("--out", required=True, metavar="FILE.jsonl", help="the annotations (a rerun resumes them)")
    c = command("correlate", "correlate per-dialogue F1 gain of one method over another with density fields")
    c.add_argument("run", help="an eval run folder")
    c.add_argument("--density", required=True, metavar="FILE.jsonl")
    c.add_argument("--methods", nargs=2, required=True, metavar=("A", "B"), help="gain of A over B")
    c.add_argument("--absolute", action="store_true", help="A - B instead of (A - B) / B")
    c = command("score", "score a predictions file (JSONL: question, answer, prediction, category or capability)")
    c.add_argument("dataset", choices=["locomo", "esmemeval"])
    c.add_argument("file")
    c.add_argument("--items", metavar="OUT.jsonl", help="also write every item with its scores")
    c.add_argument("--no-bertscore", action="store_true", help="ES-MemEval: skip BERTScore (it loads MiniLM)")
    from .audit import add_parser as add_audit

    add_audit(sub, command)
    return p
