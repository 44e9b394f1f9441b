"""The ``ftamem`` command. Global options go before the command::

    ftamem --db memory.db ingest dialogue.json
    ftamem --json cases

Every listing command prints JSON with ``--json``. Errors: one line on stderr, exit code 1.
"""

from __future__ import annotations

import argparse
import json
import sys

from pydantic import ValidationError

from ..config import PRESETS, Settings, load_settings
from ..loaders import FORMATS, LoadError
from ..llm.modelfiles import ModelFileError
from ..profiles import PROFILES
from ..models import Origin
from ..storage.store import Store, StoreError
from .tables import table as _table


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ftamem", description="FTA-Mem: Fact-Time-Affect memory for long-term dialogue")
    p.add_argument("--db", help="SQLite database (default: setting db_path)")
    p.add_argument("--config", help="TOML settings file")
    p.add_argument("--profile", choices=PROFILES,
                   help="named settings under the config file: small-model (the defaults, for the embedded 1.5B) "
                        "or paper (the method as the paper writes it: every repair beyond it off)")
    p.add_argument("--llm", choices=["embedded", "openai", "scripted"],
                   help="LLM backend (scripted: a test double, no language model: every call of a stage gets "
                        "the reply the JSON file given as --model holds for it; for tests and smoke checks)")
    p.add_argument("--model", help="embedded model name or GGUF path, or the server's model name "
                                   "(scripted: the JSON file {stage: reply})")
    p.add_argument("--base-url", help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")
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
    c.add_argument("--by", help="who records the consent (with --consent) and the replace (with --replace; "
                                "default: your user name)")
    c.add_argument("--note", default="", help="the consent's note, e.g. 'public research dataset'")
    c.add_argument("--retention-days", type=int, help="erase these cases this many days after ingest")
    command("cases", "list the cases")
    c = command("sessions", "list a case's sessions")
    c.add_argument("case")
    c = command("turns", "list a case's turns")
    c.add_argument("case")
    c.add_argument("--session", help="session number (from 0) or the file's session id")
    command("check-llm", "make one structured call and report backend, model and seconds")
    command("warm", "read the ask prompts' fixed instructions once and keep the model's state on disk "
                    "(the embedded model), so that the first question of a new process does not")
    c = command("build", "build a case's memory (resumes an unfinished build)")
    c.add_argument("case")
    c.add_argument("--segmentation", choices=["bws", "fixed", "session", "pair"], help="default: setting segmentation (bws)")
    c.add_argument("--window", type=int, help="window size W (default: setting window_size, 20)")
    c.add_argument("--from-scratch", action="store_true", help="clear the case's memory and build it again "
                   "(refused while corrections made by hand stand, unless --discard-corrections)")
    c.add_argument("--discard-corrections", action="store_true",
                   help="with --from-scratch: throw away the corrections made by hand (recorded with --by)")
    c.add_argument("--by", help="who discards the corrections (default: your user name)")
    c.add_argument("--coverage-pass", action="store_true",
                   help="one more call per fragment for the person's turns no unit covers (setting coverage_pass)")
    c.add_argument("--quiet", action="store_true", help="no progress bar")
    c = command("units", "list a case's memory units")
    c.add_argument("case")
    c.add_argument("--partial", action="store_true", help="also the partial units left open at a session's end")
    c.add_argument("--origin", nargs="+", choices=Origin.__args__, metavar="ORIGIN",
                   help=f"only units made this way ({', '.join(Origin.__args__)})")
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
    c.add_argument("--k", type=int, help="units to keep (default: the case's dataset: top_k_locomo for LoCoMo, else top_k)")
    c.add_argument("--preset", choices=sorted(PRESETS),
                   help="one ablation, added to the settings' [ablations] (default: the settings alone)")
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
    for name, what in (("delete-unit", "a memory unit (its vector, links, history text, derived entries)"),
                       ("delete-link", "a temporal link")):
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
    command("hash-password", "read a password (twice, not echoed) and print its hash for [auth.users]")
    c = command("access-log", "who viewed, changed, built, asked or exported which case")
    c.add_argument("--case", help="one case")
    c = command("eval", "answer a benchmark's questions with several methods and score them (resumable)")
    c.add_argument("--dataset", choices=["locomo", "esmemeval"], required=True)
    c.add_argument("--data", required=True, help="the dataset file (e.g. ../shared/data/locomo/locomo10.json)")
    c.add_argument("--method", nargs="+", default=["fta", "turn-rag", "verbatim", "null"], dest="methods", metavar="M",
                   help="fta, fta-<preset>, fta-session|pair|fixed, question-only, full-context, turn-rag, "
                        "session-summary, null, verbatim (memories built without a model); NAME@K for another K "
                        "(a K sweep)")
    c.add_argument("--cases", nargs="+", help="only these cases")
    c.add_argument("--split", choices=["dev", "test"],
                   help="LoCoMo's dev or test conversations, sessions 1-3 (tune on dev; test is reported only)")
    c.add_argument("--sessions", type=int, help="the first N sessions of each case (questions whose evidence is in them)")
    c.add_argument("--questions", type=int, help="the first N of those questions per case")
    c.add_argument("--categories", nargs="+", help="LoCoMo category ids to ask (default: all)")
    c.add_argument("--k", type=int, help="K for every method (default: the case's dataset: 25 LoCoMo, 10 else)")
    c.add_argument("--out", help="the run folder; a rerun resumes it (default: a new folder in setting eval_dir)")
    c.add_argument("--cache", help="where built memory is kept for every run (default: EVAL_DIR/cache)")
    c.add_argument("--workers", type=int, help="questions at once with an OpenAI-compatible backend "
                                               "(default: setting eval_workers; the embedded model: 1)")
    c.add_argument("--judge", action="store_true", help="also an LLM judge (the answer model)")
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


def settings_from(args: argparse.Namespace) -> Settings:
    return load_settings(
        config_file=args.config,
        profile=args.profile,
        db_path=args.db,
        llm={"backend": args.llm, "model": args.model, "base_url": args.base_url},
    )


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = settings_from(args)
        if settings.llm.backend == "scripted" and args.command in _MODEL_COMMANDS:
            print(f"ftamem: backend scripted (a test double): replies are read from {settings.llm.model}, "
                  "no language model runs", file=sys.stderr)
        if args.command != "purge-expired":
            _purge_expired(settings)
        out = COMMANDS[args.command](args, settings)
        _log_access(args, settings)
    except BrokenPipeError:
        return _pipe_closed()
    except (LoadError, StoreError, ModelFileError, OSError) as e:
        return _fail(str(e))
    except ValidationError as e:
        return _fail(f"invalid settings: {e.errors()[0]['loc']}: {e.errors()[0]['msg']}")
    except Exception as e:  # LLM errors and anything unexpected: one readable line
        from ..llm.base import LLMError

        if isinstance(e, LLMError):
            return _fail(str(e))
        if isinstance(e, ModuleNotFoundError) and (e.name or "").split(".")[0] in _OPTIONAL:
            package, extra = _OPTIONAL[e.name.split(".")[0]]
            return _fail(f"{args.command} needs {package}, an optional dependency: "
                         f"pip install 'ftamem-studio[{extra}]'")
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
_OPTIONAL = {"sklearn": ("scikit-learn", "eval"), "scipy": ("scipy", "eval"), "krippendorff": ("krippendorff", "eval"),
             "nltk": ("nltk", "eval"), "bert_score": ("bert-score", "eval"), "plotly": ("plotly", "eval"),
             "pyvis": ("pyvis", "app"), "streamlit": ("streamlit", "app")}


def _fail(message: str) -> int:
    print(f"ftamem: error: {message.splitlines()[0] if message else 'failed'}", file=sys.stderr)
    return 1


def _open(settings: Settings) -> Store:
    return Store(settings.db_path, index_config=settings.index)


def _who(args) -> str:
    import getpass

    return getattr(args, "by", None) or getpass.getuser()


# Commands that read or change one case's data, logged as access (who: the user running them).
_ACCESS = {"sessions": "view", "turns": "view", "units": "view", "links": "view", "memory": "view", "cost": "view",
           "build": "build", "ask": "ask", "consent": "consent", "export": "export", "delete-unit": "change",
           "delete-link": "change"}


def _log_access(args, settings: Settings) -> None:
    from ..governance.auth import log_access

    action = _ACCESS.get(args.command)
    if action is not None:
        log_access(_open(settings), args.case, _who(args), action, f"command line: {args.command}")


def _purge_expired(settings: Settings) -> None:
    """Retention is enforced whenever a command starts (on an existing store)."""
    from pathlib import Path

    from ..governance.privacy import purge_expired, skipped_message

    if Path(settings.db_path).exists():
        skipped: list[str] = []
        for case_id in purge_expired(_open(settings), settings.retention_days, skipped=skipped):
            print(f"ftamem: erased case {case_id!r}: its retention period is over", file=sys.stderr)
        if skipped:
            print(f"ftamem: warning: {skipped_message(skipped)}", file=sys.stderr)


def cmd_ingest(args, settings: Settings):
    from ..ingest import ingest_file

    on_exists = "replace" if args.replace else "skip" if args.skip_existing else "refuse"
    if args.consent and not args.by:
        raise StoreError("say who records the consent: --by NAME")
    store = _open(settings)
    outcome = ingest_file(store, args.file, args.format, on_exists, args.cases, settings.max_turn_chars,
                          consent_by=args.by if args.consent else None, consent_note=args.note,
                          retention_days=args.retention_days, max_mb=settings.max_upload_mb, who=_who(args))
    counts = {c["id"]: c for c in store.list_cases()}
    data = [{"id": cid, "result": what, "sessions": counts[cid]["sessions"], "turns": counts[cid]["turns"],
             "questions": counts[cid]["questions"]} for cid, what in outcome.items()]
    return data, _table(data, ["id", "result", "sessions", "turns", "questions"])


def cmd_cases(args, settings: Settings):
    rows = _open(settings).list_cases()
    return rows, _table(rows, ["id", "name", "source_format", "sessions", "turns", "units", "questions"])


def _require_case(store: Store, case_id: str) -> None:
    if not store.case_exists(case_id):
        raise StoreError(f"no case {case_id!r} (see 'ftamem cases')")


def cmd_sessions(args, settings: Settings):
    store = _open(settings)
    _require_case(store, args.case)
    counts = store.session_turn_counts(args.case)
    rows = [{**s.model_dump(exclude={"meta", "case_id"}), "turns": counts.get(s.id, 0)} for s in store.sessions(args.case)]
    return rows, _table(rows, ["idx", "source_id", "time", "time_text", "turns"])


def cmd_turns(args, settings: Settings):
    store = _open(settings)
    _require_case(store, args.case)
    session_id = None
    if args.session is not None:
        sessions = store.sessions(args.case)
        match = [s for s in sessions if s.source_id == args.session] or [
            s for s in sessions if args.session.isdigit() and s.idx == int(args.session)]
        if not match:
            raise StoreError(f"case {args.case!r} has no session {args.session!r}")
        session_id = match[0].id
    rows = [t.model_dump(exclude={"case_id"}) for t in store.turns(args.case, session_id=session_id)]
    return rows, _table(rows, ["idx", "original_id", "role", "speaker", "timestamp", "text"])


def cmd_check_llm(args, settings: Settings):
    from ..llm.base import health_check
    from ..llm.factory import make_llm

    data = health_check(make_llm(settings.llm, settings.model_dir))
    text = (f"backend {data['backend']}  model {data['model']}  {data['seconds']} s "
            f"(call {data['call_seconds']} s, {data['prompt_tokens']}+{data['completion_tokens']} tokens)\n"
            f"reply: {json.dumps(data['reply'])}")
    return data, text


def cmd_warm(args, settings: Settings):
    from ..retrieval.inference import ASK_PROMPTS
    from ..llm.factory import make_llm

    llm = make_llm(settings.llm, settings.model_dir)
    if llm.backend != "embedded":
        data = {"backend": llm.backend, "model": llm.model_name, "prompts": {}}
        return data, "nothing to keep: a server caches prompt prefixes itself"
    cold = llm.cold(ASK_PROMPTS)  # told without loading the model: a second start costs nothing
    warmed = llm.warm(cold) if cold else {}
    data = {"backend": llm.backend, "model": llm.model_name,
            "prompts": {name: warmed.get(name, "disk") for name in ASK_PROMPTS}}
    return data, "  ".join(f"{name}: {where}" for name, where in data["prompts"].items())


def cmd_build(args, settings: Settings):
    from ..construction.builder import Builder
    from ..llm.embeddings import Embedder
    from ..llm.factory import make_llm
    from .progress import ProgressBar

    if args.coverage_pass:
        settings = settings.with_overrides(coverage_pass=True)
    store = _open(settings)
    _require_case(store, args.case)
    llm = make_llm(settings.llm, settings.model_dir, recorder=store.record_call)
    bar = None if args.quiet else ProgressBar(store, args.case)
    builder = Builder(store, llm, Embedder.from_settings(settings), settings,
                      progress=bar)
    try:
        report = builder.build(args.case, args.segmentation, args.window, args.from_scratch,
                               discard_corrections=_who(args) if args.discard_corrections else None)
    finally:
        if bar:
            bar.close()
    data = {**report.__dict__, "cost": store.cost(args.case)}
    text = (f"build {report.build_id} {report.status}" + (f" ({report.error})" if report.error else "") +
            f": {report.sessions_built} session(s) built, {report.sessions_skipped} already done; {report.units} "
            f"units, {report.partial_units} partial, {report.fusions} fusions, {report.links} links in "
            f"{report.seconds:.1f} s")
    if report.status != "done":  # stopped (consent withdrawn, Stop): a script must not take it for done
        _log_access(args, settings)  # it ran, and read the case, until it stopped
        raise StoreError(text)
    return data, "\n".join([text, *(f"note: {n}" for n in report.notes)])


def cmd_units(args, settings: Settings):
    store = _open(settings)
    _require_case(store, args.case)
    units = [u for u in store.units(args.case, construction_status=None if args.partial else "final")
             if not args.origin or u.origin in args.origin]
    rows = [u.model_dump() for u in units]
    flat = [{"id": u.id, "span": f"{u.evidence.start}-{u.evidence.end}", "type": u.fact.content_type,
             "status": u.construction_status if u.construction_status == "partial" else u.time.completion,
             "lifecycle": u.lifecycle_status, "origin": u.origin, "event_time": u.time.event_time, "fact": u.fact.text}
            for u in units]
    return rows, _table(flat, ["id", "span", "type", "status", "lifecycle", "origin", "event_time", "fact"])


def cmd_links(args, settings: Settings):
    store = _open(settings)
    _require_case(store, args.case)
    rows = [link.model_dump() for link in store.links(args.case)]
    return rows, _table(rows, ["id", "source", "relation", "target", "confidence", "time"])


def cmd_memory(args, settings: Settings):
    store = _open(settings)
    _require_case(store, args.case)
    semantic = [e.model_dump() for e in store.semantic(args.case)]
    support = [e.model_dump() for e in store.support(args.case)]
    text = ("User semantic memory\n" + _table(semantic, ["id", "kind", "text", "source_unit_ids"])
            + "\n\nSupport-experience memory\n" + _table(support, ["id", "strategy", "outcome", "text", "source_unit_ids"]))
    return {"semantic": semantic, "support": support}, text


def cmd_cost(args, settings: Settings):
    store = _open(settings)
    _require_case(store, args.case)
    cost = store.cost(args.case)
    text = _table(cost["stages"], ["stage", "calls", "attempts", "failed", "prompt_tokens", "completion_tokens", "seconds"])
    totals = {k: v for k, v in cost.items() if k != "stages"}
    return cost, text + "\n" + "  ".join(f"{k} {v}" for k, v in totals.items())


def cmd_ask(args, settings: Settings):
    from ..llm.embeddings import Embedder
    from ..retrieval.inference import ask
    from ..llm.factory import make_llm

    store = _open(settings)
    _require_case(store, args.case)
    llm = make_llm(settings.llm, settings.model_dir, recorder=store.record_call)
    trace = ask(store, args.case, args.question, llm, Embedder.from_settings(settings), settings, k=args.k,
                ablations=PRESETS[args.preset] if args.preset else None)
    data = trace.as_dict()
    cues = {k: v for k, v in data["cues"].items() if v}
    lines = [f"question: {trace.question}", f"query:    {trace.query}", f"cues:     {json.dumps(cues)}",
             f"settings: {json.dumps(data['settings'])}", "", "candidates (s_emb, cue, R):"]
    lines += [f"  m{c['id']:<5} {c['s_emb']:.3f} {c['cue']:.3f} {c['R']:.3f}  {c['reason']}" for c in trace.candidates[:30]]
    if len(trace.candidates) > 30:
        lines.append(f"  ... {len(trace.candidates) - 30} more")
    lines += ["", f"packet ({trace.packet_tokens} tokens):", trace.packet_text, "",
              f"answer: {trace.answer}", f"cited:  {', '.join(f'm{i}' for i in trace.cited_unit_ids) or '-'}",
              "calls:  " + "; ".join(f"{c['stage']} {c['prompt_tokens']}+{c['completion_tokens']} tokens {c['seconds']:.1f} s"
                                      for c in trace.calls)]
    return data, "\n".join(lines)


def cmd_consent(args, settings: Settings):
    from ..governance import consent

    store = _open(settings)
    _require_case(store, args.case)
    if args.action != "show":
        consent.record(store, args.case, consent.ACTIONS[args.action], _who(args), args.note)
    rows = consent.log(store, args.case)
    current = consent.state(store, args.case)
    return {"case": args.case, **current, "log": rows}, (
        f"consent {current['state']}" + (f" (by {current['who']}, {current['at']})" if current["at"] else "")
        + "\n" + _table(rows, ["at", "state", "who", "note"]))


def cmd_export(args, settings: Settings):
    from ..governance.privacy import export_case, write_export

    store = _open(settings)
    _require_case(store, args.case)
    if args.out is None:
        print(json.dumps(export_case(store, args.case), ensure_ascii=False, indent=1))
        return None
    path = write_export(store, args.case, args.out)
    return {"case": args.case, "file": str(path)}, f"wrote {path} (readable by you only)"


def cmd_import(args, settings: Settings):
    from ..governance.privacy import case_counts, read_import

    store = _open(settings)
    case_id = read_import(store, args.file, settings.max_upload_mb)
    counts = case_counts(store, case_id)
    return {"case": case_id, "counts": counts}, f"imported case {case_id!r}: " + ", ".join(
        f"{n} {t}" for t, n in counts.items() if n)


def cmd_delete_unit(args, settings: Settings):
    from ..governance.editing import delete_unit

    store = _open(settings)
    _require_case(store, args.case)
    delete_unit(store, args.case, args.id, _who(args), args.reason)
    return {"case": args.case, "deleted_unit": args.id}, f"deleted unit m{args.id}"


def cmd_delete_link(args, settings: Settings):
    from ..governance.editing import delete_link

    store = _open(settings)
    _require_case(store, args.case)
    delete_link(store, args.case, args.id, _who(args), args.reason)
    return {"case": args.case, "deleted_link": args.id}, f"deleted link {args.id}"


def cmd_erase(args, settings: Settings):
    from ..governance.privacy import erase_case

    store = _open(settings)
    _require_case(store, args.case)
    if not args.yes:
        if not sys.stdin.isatty():
            raise StoreError("erase asks for confirmation: pass --yes when not in a terminal")
        typed = input(f"Erase case {args.case!r} and everything derived from it, for good? Type its id to confirm: ")
        if typed != args.case:
            raise StoreError("not confirmed; nothing was erased")
    counts = erase_case(store, args.case, _who(args), args.reason)
    return {"case": args.case, "erased": counts}, f"erased case {args.case!r}: " + ", ".join(
        f"{n} {t}" for t, n in counts.items() if n)


def cmd_purge_expired(args, settings: Settings):
    from ..governance.privacy import purge_expired, skipped_message

    skipped: list[str] = []
    gone = purge_expired(_open(settings), settings.retention_days, skipped=skipped)
    text = "\n".join([f"erased {c}" for c in gone] + ([skipped_message(skipped)] if skipped else []))
    return {"erased": gone, "skipped": skipped}, text or "no case past its retention period"


def cmd_hash_password(args, settings: Settings):
    import getpass

    from ..governance.auth import hash_password

    if sys.stdin.isatty():
        first, second = getpass.getpass("Password: "), getpass.getpass("Again: ")
        if first != second:
            raise StoreError("the two passwords differ")
    else:
        first = sys.stdin.readline().rstrip("\n")
    if not first:
        raise StoreError("an empty password")
    hashed = hash_password(first)
    return {"hash": hashed}, hashed


def cmd_access_log(args, settings: Settings):
    from ..governance.auth import access_log

    store = _open(settings)
    if args.case:
        _require_case(store, args.case)
    rows = access_log(store, args.case)
    return rows, _table(rows, ["at", "case_id", "who", "action", "detail"])


def cmd_eval(args, settings: Settings):
    from datetime import datetime
    from pathlib import Path

    from ..llm.embeddings import Embedder
    from ..evaluation.run import EvalConfig, run
    from ..llm.factory import make_llm

    if args.split:
        from ..evaluation.splits import SESSIONS, SPLITS

        if args.dataset != "locomo" or args.cases or args.sessions:
            raise StoreError("--split is LoCoMo's and names the cases and sessions itself")
        args.cases, args.sessions = list(SPLITS[args.split]), SESSIONS
    out = args.out or str(Path(settings.eval_dir) / f"{args.dataset}-{datetime.now():%Y%m%d-%H%M%S}")
    cfg = EvalConfig(dataset=args.dataset, data=args.data, methods=args.methods, out=out, cases=args.cases,
                     sessions=args.sessions, questions=args.questions, k=args.k,
                     cache_dir=args.cache or str(Path(settings.eval_dir) / "cache"),
                     workers=args.workers or settings.eval_workers, judge=args.judge, categories=args.categories)
    from ..evaluation.run import select_documents

    _refuse_withdrawn([d.case.id for d in select_documents(cfg, settings)], settings)
    summary = run(cfg, settings, lambda recorder: make_llm(settings.llm, settings.model_dir, recorder=recorder),
                  Embedder.from_settings(settings), progress=not args.quiet)
    return summary, (Path(out) / "tables.md").read_text(encoding="utf-8") + f"\nwritten to {out}"


def cmd_density(args, settings: Settings):
    from ..evaluation.density import FIELDS, annotate, per_dialogue
    from ..evaluation.run import EvalConfig, select_documents
    from ..llm.factory import make_llm

    docs = select_documents(EvalConfig(args.dataset, args.data, [], "", cases=args.cases, sessions=args.sessions),
                            settings)
    _refuse_withdrawn([d.case.id for d in docs], settings)
    rows = annotate(docs, make_llm(settings.llm, settings.model_dir), args.out)
    dialogues = per_dialogue(rows)
    overall = {f: round(sum(r[f] for r in rows) / len(rows), 4) for f in FIELDS} if rows else {}
    table = [{"dialogue": c, **d} for c, d in dialogues.items()] + [{"dialogue": "all turns", "turns": len(rows), **overall}]
    return {"dialogues": dialogues, "overall": overall}, _table(table, ["dialogue", "turns", *FIELDS, "total_anchors"])


def _refuse_withdrawn(case_ids: list[str], settings: Settings) -> None:
    """A benchmark's dialogues are public research data, sent to the model without a store of
    their own; a case whose consent the store records as withdrawn is not (one line, nothing sent)."""
    from pathlib import Path

    from ..governance import consent

    if not Path(settings.db_path).exists():
        return
    store = _open(settings)
    for case_id in case_ids:
        if store.case_exists(case_id) and consent.state(store, case_id)["state"] == "withdrawn":
            consent.require(store, case_id, "be annotated")


def cmd_correlate(args, settings: Settings):
    from pathlib import Path

    from ..evaluation.density import dialogue_gain, gain_correlations, per_dialogue
    from ..evaluation.report import read_rows

    summary = json.loads((Path(args.run) / "summary.json").read_text(encoding="utf-8"))
    metric = "f1_official" if summary["dataset"] == "locomo" else "f1"
    questions = read_rows(Path(args.run) / "questions.jsonl")
    if summary["dataset"] == "locomo":  # as the paper's Table 10: no category 5
        questions = [q for q in questions if str(q.get("category")) in ("1", "2", "3", "4")]
    annotations = [json.loads(line) for line in Path(args.density).read_text(encoding="utf-8").splitlines() if line.strip()]
    gain = dialogue_gain(questions, *args.methods, metric, relative=not args.absolute)
    result = gain_correlations(per_dialogue(annotations), gain)
    rows = [{"field": f, **{k: v for k, v in c.items() if k != "leave_one_out"},
             "leave_one_out": c.get("leave_one_out")} for f, c in result["correlations"].items()]
    text = _table(rows, ["field", "n", "pearson", "spearman", "low", "high", "permutation_p", "leave_one_out"])
    return {**result, "gain": gain}, (result["note"] or text)


def cmd_score(args, settings: Settings):
    from ..evaluation.metrics import read_predictions, score_items, summarise

    scored = score_items(args.dataset, read_predictions(args.file), bertscore=not args.no_bertscore)
    summary = summarise(args.dataset, scored)
    if args.items:
        with open(args.items, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in scored)
    key = "category" if args.dataset == "locomo" else "capability"
    groups = summary[key]
    metrics = [m for m in next(iter(groups.values()), {}) if m != "n"]
    rows = [{key: f"{g} {summary['names'][g]}", "n": v["n"], **{m: v[m] for m in metrics}} for g, v in groups.items()]
    rows.append({key: "overall", **{m: summary["overall"].get(m) for m in ["n", *metrics]}})
    text = "\n".join([_table(rows, [key, "n", *metrics]), "", *summary["protocols"].values()])
    if args.dataset == "locomo":
        text += f"\noverall official F1 over categories 1-4: {summary['overall']['f1_official_categories_1_4']}"
    return {g: {m: v[m] for m in metrics} | {"n": v["n"]} for g, v in groups.items()}, text


def cmd_audit(args, settings: Settings):
    from ..governance.audit import get_round
    from .audit import run
    from ..governance.auth import log_access

    store = _open(settings)
    out = run(args, store, _who(args))
    if args.verb in ("score", "report"):  # both show the cases' turns and units
        for round_id in args.round if isinstance(args.round, list) else [args.round]:
            for case_id in get_round(store, round_id)["cases"]:
                log_access(store, case_id, getattr(args, "annotator", None) or _who(args), "view",
                           f"command line: audit {args.verb} {round_id}")
    return out


def cmd_bench(args, settings: Settings):
    from ..retrieval.bench import bench_retrieval

    row = bench_retrieval(args.units, args.queries, config=settings.index)
    return row, _table([row], list(row))


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
