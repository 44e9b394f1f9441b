"""Commands that build memory: check the model, warm its prompts, build a case."""

from __future__ import annotations

import json

from ..config import Settings
from ..storage.store import StoreError
from .common import log_access, open_store, require_case, who_runs


def cmd_check_llm(args, settings: Settings):
    from ..llm.base import health_check
    from ..llm.factory import make_llm

    data = health_check(make_llm(settings.llm, settings.storage.model_dir))
    text = (
        f"backend {data['backend']}  model {data['model']}  {data['seconds']} s "
        f"(call {data['call_seconds']} s, {data['prompt_tokens']}+{data['completion_tokens']} tokens)\n"
        f"reply: {json.dumps(data['reply'])}"
    )
    return data, text


def cmd_warm(args, settings: Settings):
    from ..retrieval.inference import ASK_PROMPTS
    from ..llm.factory import make_llm

    llm = make_llm(settings.llm, settings.storage.model_dir)
    if llm.backend != "embedded":
        data = {"backend": llm.backend, "model": llm.model_name, "prompts": {}}
        return data, "nothing to keep: a server caches prompt prefixes itself"
    cold = llm.cold(ASK_PROMPTS)  # told without loading the model: a second start costs nothing
    warmed = llm.warm(cold) if cold else {}
    data = {
        "backend": llm.backend,
        "model": llm.model_name,
        "prompts": {name: warmed.get(name, "disk") for name in ASK_PROMPTS},
    }
    return data, "  ".join(f"{name}: {where}" for name, where in data["prompts"].items())


def cmd_build(args, settings: Settings):
    from ..construction.builder import Builder
    from ..llm.embeddings import Embedder
    from ..llm.factory import make_llm
    from .progress import ProgressBar

    store = open_store(settings)
    require_case(store, args.case)
    llm = make_llm(settings.llm, settings.storage.model_dir, recorder=store.record_call)
    bar = None if args.quiet else ProgressBar(store, args.case)
    builder = Builder(store, llm, Embedder.from_settings(settings), settings, progress=bar)
    try:
        report = builder.build(
            args.case,
            args.segmentation,
            args.window,
            args.from_scratch,
            discard_corrections=who_runs(args) if args.discard_corrections else None,
        )
    finally:
        if bar:
            bar.close()
    data = {**report.__dict__, "cost": store.cost(args.case)}
    text = (
        f"build {report.build_id} {report.status}"
        + (f" ({report.error})" if report.error else "")
        + f": {report.sessions_built} session(s) built, {report.sessions_skipped} already done; {report.units} "
        f"units, {report.partial_units} partial, {report.fusions} fusions, {report.links} links in "
        f"{report.seconds:.1f} s"
    )
    if report.status != "done":  # stopped (consent withdrawn, Stop): a script must not take it for done
        log_access(args, settings)  # it ran, and read the case, until it stopped
        raise StoreError(text)
    return data, "\n".join([text, *(f"note: {n}" for n in report.notes)])
