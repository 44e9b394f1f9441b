"""``ftamem ask``: a question of a case's memory, with its trace."""

from __future__ import annotations

import json

from ..config import PRESETS, Settings
from .common import open_store, require_case


def cmd_ask(args, settings: Settings):
    from ..llm.embeddings import Embedder
    from ..retrieval.inference import ask
    from ..llm.factory import make_llm

    store = open_store(settings)
    require_case(store, args.case)
    llm = make_llm(settings.llm, settings.storage.model_dir, recorder=store.record_call)
    trace = ask(
        store,
        args.case,
        args.question,
        llm,
        Embedder.from_settings(settings),
        settings,
        k=args.k,
        ablations=PRESETS[args.preset] if args.preset else None,
    )
    data = trace.as_dict()
    cues = {k: v for k, v in data["cues"].items() if v}
    lines = [
        f"question: {trace.question}",
        f"query:    {trace.query}",
        f"cues:     {json.dumps(cues)}",
        f"settings: {json.dumps(data['settings'])}",
        "",
        "candidates (s_emb, cue, R):",
    ]
    lines += [
        f"  m{c['id']:<5} {c['s_emb']:.3f} {c['cue']:.3f} {c['R']:.3f}  {c['reason']}" for c in trace.candidates[:30]
    ]
    if len(trace.candidates) > 30:
        lines.append(f"  ... {len(trace.candidates) - 30} more")
    lines += [
        "",
        f"packet ({trace.packet_tokens} tokens):",
        trace.packet_text,
        "",
        f"answer: {trace.answer}",
        f"cited:  {', '.join(f'm{i}' for i in trace.cited_unit_ids) or '-'}",
        "calls:  "
        + "; ".join(
            f"{c['stage']} {c['prompt_tokens']}+{c['completion_tokens']} tokens {c['seconds']:.1f} s"
            for c in trace.calls
        ),
    ]
    return data, "\n".join(lines)
