"""Commands over the store: ingest a dialogue file, list cases, sessions, turns, units, links, memory and cost."""

from __future__ import annotations


from ..config import Settings
from ..storage.store import StoreError
from .common import open_store, require_case, who_runs
from .tables import table


def cmd_ingest(args, settings: Settings):
    from ..ingest import ingest_file

    on_exists = "replace" if args.replace else "skip" if args.skip_existing else "refuse"
    if args.consent and not args.by:
        raise StoreError("say who records the consent: --by NAME")
    store = open_store(settings)
    outcome = ingest_file(
        store,
        args.file,
        args.format,
        on_exists,
        args.cases,
        settings.input.max_turn_chars,
        consent_by=args.by if args.consent else None,
        consent_note=args.note,
        retention_days=args.retention_days,
        max_mb=settings.input.max_upload_mb,
        who=who_runs(args),
    )
    counts = {c["id"]: c for c in store.list_cases()}
    data = [
        {
            "id": cid,
            "result": what,
            "sessions": counts[cid]["sessions"],
            "turns": counts[cid]["turns"],
            "questions": counts[cid]["questions"],
        }
        for cid, what in outcome.items()
    ]
    return data, table(data, ["id", "result", "sessions", "turns", "questions"])


def cmd_cases(args, settings: Settings):
    rows = open_store(settings).list_cases()
    return rows, table(rows, ["id", "name", "source_format", "sessions", "turns", "units", "questions"])


def cmd_sessions(args, settings: Settings):
    store = open_store(settings)
    require_case(store, args.case)
    counts = store.session_turn_counts(args.case)
    rows = [
        {**s.model_dump(exclude={"meta", "case_id"}), "turns": counts.get(s.id, 0)} for s in store.sessions(args.case)
    ]
    return rows, table(rows, ["idx", "source_id", "time", "time_text", "turns"])


def cmd_turns(args, settings: Settings):
    store = open_store(settings)
    require_case(store, args.case)
    session_id = None
    if args.session is not None:
        sessions = store.sessions(args.case)
        match = [s for s in sessions if s.source_id == args.session] or [
            s for s in sessions if args.session.isdigit() and s.idx == int(args.session)
        ]
        if not match:
            raise StoreError(f"case {args.case!r} has no session {args.session!r}")
        session_id = match[0].id
    rows = [t.model_dump(exclude={"case_id"}) for t in store.turns(args.case, session_id=session_id)]
    return rows, table(rows, ["idx", "original_id", "role", "speaker", "timestamp", "text"])


def cmd_units(args, settings: Settings):
    store = open_store(settings)
    require_case(store, args.case)
    units = [
        u
        for u in store.units(args.case, construction_status=None if args.partial else "final")
        if not args.origin or u.origin in args.origin
    ]
    rows = [u.model_dump() for u in units]
    flat = [
        {
            "id": u.id,
            "span": f"{u.evidence.start}-{u.evidence.end}",
            "type": u.fact.content_type,
            "status": u.construction_status if u.construction_status == "partial" else u.time.completion,
            "lifecycle": u.lifecycle_status,
            "origin": u.origin,
            "event_time": u.time.event_time,
            "fact": u.fact.text,
        }
        for u in units
    ]
    return rows, table(flat, ["id", "span", "type", "status", "lifecycle", "origin", "event_time", "fact"])


def cmd_links(args, settings: Settings):
    store = open_store(settings)
    require_case(store, args.case)
    rows = [link.model_dump() for link in store.links(args.case)]
    return rows, table(rows, ["id", "source", "relation", "target", "confidence", "time"])


def cmd_memory(args, settings: Settings):
    store = open_store(settings)
    require_case(store, args.case)
    semantic = [e.model_dump() for e in store.semantic(args.case)]
    support = [e.model_dump() for e in store.support(args.case)]
    text = (
        "User semantic memory\n"
        + table(semantic, ["id", "kind", "text", "source_unit_ids"])
        + "\n\nSupport-experience memory\n"
        + table(support, ["id", "strategy", "outcome", "text", "source_unit_ids"])
    )
    return {"semantic": semantic, "support": support}, text


def cmd_cost(args, settings: Settings):
    store = open_store(settings)
    require_case(store, args.case)
    cost = store.cost(args.case)
    text = table(
        cost["stages"], ["stage", "calls", "attempts", "failed", "prompt_tokens", "completion_tokens", "seconds"]
    )
    totals = {k: v for k, v in cost.items() if k != "stages"}
    return cost, text + "\n" + "  ".join(f"{k} {v}" for k, v in totals.items())
